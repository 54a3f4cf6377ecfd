//! Per-thread slots whose contents the collector sees.
//!
//! bdwgc does not scan thread-local storage: a pointer kept only in a
//! `thread_local!`, in glibc TLS or in pthread-specific data is invisible
//! to it. A [`Slot`] is per-thread storage that lives in root memory
//! (`crate::roots`), so whatever it holds keeps its referents alive.
//!
//! ```
//! use defergc::{gc, tls};
//!
//! let slot = tls::alloc::<usize>(None);
//! let obj = gc::alloc(64);
//! slot.set(obj.as_ptr() as usize);        // the object is now a GC root
//! assert_eq!(slot.get(), Some(obj.as_ptr() as usize));
//! std::thread::spawn(move || assert_eq!(slot.get(), None)).join().unwrap();
//! ```
//!
//! # Layout
//!
//! Each slot is a cell `{state, value}` at a fixed (page, offset) in every
//! thread's slot area. A thread's area is a directory of pages, each a block
//! of root memory allocated the first time the thread stores into a slot on
//! that page. Reading is two thread-local loads and two memory loads, with
//! no lock and no allocation; slots are limited only by memory.
//!
//! # Thread exit
//!
//! When a thread exits, after every `thread_local!` destructor, each slot
//! that holds a value is emptied and its destructor called with the value
//! (or, without one, the value is dropped). Destructors may use any slot,
//! including refilling one, in which case another pass runs; after
//! [`TEARDOWN_PASSES`] passes whatever is left is leaked, as pthread does.
//! Then the pages are freed and stop being roots. This holds for foreign
//! pthreads too. The main thread's slots are never torn down: their values
//! stay alive (and reachable for the collector) until the process exits,
//! and their destructors do not run.
//!
//! # Borrowing
//!
//! [`Slot::with`] lends the value out; replacing or clearing a slot while it
//! is lent panics with a `defergc:` message (a `RefCell`-style check).

use crate::gc::thread as gc_thread;
use crate::roots;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

/// How many times thread teardown goes over the slots before it leaks what
/// destructors keep refilling (pthread's PTHREAD_DESTRUCTOR_ITERATIONS).
pub const TEARDOWN_PASSES: usize = 4;

/// Bytes in an ordinary slot page.
const PAGE: usize = 4096;
/// Alignment of root blocks (bdwgc's granule; malloc's on 64-bit glibc).
const BLOCK_ALIGN: usize = 16;

const EMPTY: usize = 0;
const FULL: usize = 1;
const LENT_MUT: usize = 2;
const LENT_ONE: usize = 4;

/// A slot's storage in one thread's area.
#[repr(C)]
struct SlotCell<T> {
    /// FULL bit, LENT_MUT bit, and the count of shared loans × LENT_ONE.
    state: usize,
    value: MaybeUninit<T>,
}

/// A per-thread slot holding a `T`. Cheap to copy and usable from any
/// thread; each thread sees its own value, initially empty.
pub struct Slot<T: 'static> {
    page: u32,
    offset: u32,
    _value: PhantomData<fn() -> T>,
}

impl<T> Clone for Slot<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Slot<T> {}

impl<T> std::fmt::Debug for Slot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Slot(page {}, offset {})", self.page, self.offset)
    }
}

/// Type-erased knowledge of one slot, for thread teardown.
#[derive(Clone, Copy)]
struct SlotInfo {
    offset: u32,
    /// Empties the cell at the given address and disposes of its value;
    /// returns whether there was one.
    dispose: unsafe fn(*mut u8, usize) -> bool,
    /// The destructor as `fn(T)`, or 0 to drop the value.
    destructor: usize,
}

struct PageInfo {
    size: usize,
    slots: Vec<SlotInfo>,
}

struct Registry {
    pages: Vec<PageInfo>,
    /// The page new small slots go to, and the first free byte in it.
    open_page: Option<(usize, usize)>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    pages: Vec::new(),
    open_page: None,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates a new slot. `destructor`, if given, is called with a thread's
/// value when that thread exits; otherwise the value is dropped.
pub fn alloc<T: 'static>(destructor: Option<fn(T)>) -> Slot<T> {
    let size = std::mem::size_of::<SlotCell<T>>();
    let align = std::mem::align_of::<SlotCell<T>>();
    if align > BLOCK_ALIGN {
        crate::abort(&format!(
            "defergc: tls slot values aligned to more than {BLOCK_ALIGN} bytes are not supported \
             (got {align}); box the value"
        ));
    }
    let info = |offset: usize| SlotInfo {
        offset: offset as u32,
        dispose: dispose::<T>,
        destructor: destructor.map_or(0, |d| d as usize),
    };
    let mut reg = registry();
    let (page, offset) = if size > PAGE / 2 {
        // A large value gets a page of its own; the open page stays open.
        reg.pages.push(PageInfo {
            size: size.next_multiple_of(BLOCK_ALIGN),
            slots: Vec::new(),
        });
        (reg.pages.len() - 1, 0)
    } else {
        let (page, offset) = match reg.open_page {
            Some((page, used)) if used.next_multiple_of(align) + size <= PAGE => {
                (page, used.next_multiple_of(align))
            }
            _ => {
                reg.pages.push(PageInfo {
                    size: PAGE,
                    slots: Vec::new(),
                });
                (reg.pages.len() - 1, 0)
            }
        };
        reg.open_page = Some((page, offset + size));
        (page, offset)
    };
    if page > u32::MAX as usize {
        crate::abort("defergc: too many tls slots");
    }
    reg.pages[page].slots.push(info(offset));
    drop(reg);
    add_teardown_hook();
    Slot {
        page: page as u32,
        offset: offset as u32,
        _value: PhantomData,
    }
}

/// Empties the `SlotCell<T>` at `cell` and gives its value to the
/// destructor (`fn(T)` as a usize, or 0 to drop it).
///
/// # Safety
/// `cell` is a `SlotCell<T>` of the calling thread that nothing borrows.
unsafe fn dispose<T>(cell: *mut u8, destructor: usize) -> bool {
    let cell = cell.cast::<SlotCell<T>>();
    // SAFETY: the caller guarantees cell is our thread's, unborrowed cell.
    let value = unsafe {
        if (*cell).state & FULL == 0 {
            return false;
        }
        (*cell).state = EMPTY;
        take_value(cell)
    };
    if destructor == 0 {
        drop(value);
    } else {
        // SAFETY: alloc stored a `fn(T)` for this slot's T.
        let destructor: fn(T) = unsafe { std::mem::transmute_copy(&destructor) };
        destructor(value);
    }
    true
}

/// Moves the value out of a full cell and zeroes its bytes: root memory is
/// scanned whole, and a stale copy of a pointer would keep its object alive.
///
/// # Safety
/// `cell` is a live cell of this thread whose value is initialised.
unsafe fn take_value<T>(cell: *mut SlotCell<T>) -> T {
    // SAFETY: forwarded from the caller; zeroing leaves the MaybeUninit
    // uninitialised as far as Rust is concerned.
    unsafe {
        let value = (*cell).value.assume_init_read();
        ptr::write_bytes((*cell).value.as_mut_ptr(), 0, 1);
        value
    }
}

/// One thread's slot area: a directory of page addresses (null for pages
/// this thread never stored into). A `const` thread-local without a
/// destructor, so reading it is a plain TLS access at any time.
struct Area {
    dir: Cell<*mut *mut u8>,
    len: Cell<usize>,
}

thread_local! {
    static AREA: Area = const {
        Area { dir: Cell::new(ptr::null_mut()), len: Cell::new(0) }
    };
}

impl<T: 'static> Slot<T> {
    /// The slot as one word (never 0), for keeping it in an atomic.
    pub(crate) fn to_bits(self) -> u64 {
        ((self.page as u64) << 32 | self.offset as u64) + 1
    }

    /// The slot that [`Slot::to_bits`] made `bits` of.
    ///
    /// # Safety
    /// `bits` came from `to_bits` of a `Slot<T>`.
    pub(crate) unsafe fn from_bits(bits: u64) -> Slot<T> {
        let bits = bits - 1;
        Slot {
            page: (bits >> 32) as u32,
            offset: bits as u32,
            _value: PhantomData,
        }
    }

    /// This thread's cell for the slot, if its page exists.
    #[inline(always)]
    fn cell(self) -> Option<NonNull<SlotCell<T>>> {
        crate::fresh::with(&AREA, |area| {
            let page = self.page as usize;
            if page < area.len.get() {
                // SAFETY: dir has len entries.
                let base = unsafe { *area.dir.get().add(page) };
                NonNull::new(base.wrapping_add(self.offset as usize).cast())
                    .filter(|_| !base.is_null())
            } else {
                None
            }
        })
    }

    /// This thread's cell, creating its page (and registering the thread
    /// with the collector) if needed.
    #[inline]
    fn cell_or_create(self) -> NonNull<SlotCell<T>> {
        match self.cell() {
            Some(cell) => cell,
            None => {
                create_page(self.page as usize);
                self.cell()
                    .unwrap_or_else(|| crate::abort("defergc: tls page creation failed"))
            }
        }
    }

    /// A copy of this thread's value, or `None` if the slot is empty here.
    ///
    /// # Panics
    /// If the value is mutably lent out by [`Slot::with_mut`].
    #[inline]
    pub fn get(self) -> Option<T>
    where
        T: Copy,
    {
        let cell = self.cell()?.as_ptr();
        // SAFETY: the cell is this thread's; FULL means value is initialised.
        unsafe {
            match (*cell).state {
                FULL => Some((*cell).value.assume_init()),
                EMPTY => None,
                state => {
                    if state & LENT_MUT != 0 {
                        lent_panic("read")
                    }
                    (state & FULL != 0).then(|| (*cell).value.assume_init())
                }
            }
        }
    }

    /// Stores `value` for this thread and returns the previous one.
    ///
    /// # Panics
    /// If the value is lent out by [`Slot::with`] or [`Slot::with_mut`].
    #[inline]
    pub fn set(self, value: T) -> Option<T> {
        let cell = self.cell_or_create().as_ptr();
        // SAFETY: the cell is this thread's; nothing borrows it (checked).
        unsafe {
            let state = (*cell).state;
            if state & !FULL != 0 {
                lent_panic("set")
            }
            let old = (state == FULL).then(|| (*cell).value.assume_init_read());
            (*cell).value.write(value);
            (*cell).state = FULL;
            old
        }
    }

    /// Empties this thread's slot and returns the value it held.
    ///
    /// # Panics
    /// If the value is lent out.
    pub fn take(self) -> Option<T> {
        let cell = self.cell()?.as_ptr();
        // SAFETY: the cell is this thread's; nothing borrows it (checked).
        unsafe {
            match (*cell).state {
                EMPTY => None,
                FULL => {
                    (*cell).state = EMPTY;
                    Some(take_value(cell))
                }
                _ => lent_panic("cleared"),
            }
        }
    }

    /// Empties this thread's slot, dropping its value (the destructor is for
    /// thread exit only and does not run).
    pub fn clear(self) {
        drop(self.take());
    }

    /// Whether this thread's slot holds a value.
    pub fn is_set(self) -> bool {
        self.cell()
            // SAFETY: the cell is this thread's.
            .is_some_and(|cell| unsafe { (*cell.as_ptr()).state } & FULL != 0)
    }

    /// Calls `f` with a reference to this thread's value.
    ///
    /// # Panics
    /// If the value is mutably lent out.
    pub fn with<R>(self, f: impl FnOnce(Option<&T>) -> R) -> R {
        let Some(cell) = self.cell() else {
            return f(None);
        };
        let cell = cell.as_ptr();
        // SAFETY: the cell is this thread's; the loan is recorded in state
        // until the guard drops, so nothing replaces the value meanwhile.
        unsafe {
            if (*cell).state & LENT_MUT != 0 {
                lent_panic("borrowed")
            }
            (*cell).state += LENT_ONE;
            let _loan = Loan(&mut (*cell).state, LENT_ONE);
            let value = ((*cell).state & FULL != 0).then(|| (*cell).value.assume_init_ref());
            f(value)
        }
    }

    /// Calls `f` with a mutable reference to this thread's value.
    ///
    /// # Panics
    /// If the value is already lent out.
    pub fn with_mut<R>(self, f: impl FnOnce(Option<&mut T>) -> R) -> R {
        let Some(cell) = self.cell() else {
            return f(None);
        };
        let cell = cell.as_ptr();
        // SAFETY: as in with; LENT_MUT excludes every other access.
        unsafe {
            if (*cell).state & !FULL != 0 {
                lent_panic("borrowed mutably")
            }
            (*cell).state |= LENT_MUT;
            let _loan = Loan(&mut (*cell).state, LENT_MUT);
            let value = ((*cell).state & FULL != 0).then(|| (*cell).value.assume_init_mut());
            f(value)
        }
    }
}

/// Ends a loan when dropped, unwinding included.
struct Loan(*mut usize, usize);

impl Drop for Loan {
    fn drop(&mut self) {
        // SAFETY: the state word outlives the loan (the page is only freed at
        // thread teardown, which waits for no loan but runs after the
        // thread's code, and so after every loan ended).
        unsafe { *self.0 -= self.1 }
    }
}

#[cold]
#[inline(never)]
fn lent_panic(what: &str) -> ! {
    panic!("defergc: tls slot {what} while its value is lent out by with/with_mut")
}

/// Makes `page` exist in this thread's area.
#[cold]
#[inline(never)]
fn create_page(page: usize) {
    // Registration (and the exit sequence) before the first root memory.
    gc_thread::ensure_registered();
    crate::fresh::with(&AREA, |area| {
        if page >= area.len.get() {
            grow_directory(area, page + 1);
        }
        let size = registry().pages[page].size;
        let block = roots::alloc_block(size);
        // SAFETY: the directory now has more than page entries.
        unsafe { *area.dir.get().add(page) = block.as_ptr() };
    });
    // A thread whose slots were torn down may use them again from a later
    // exit destructor: make sure teardown runs again.
    gc_thread::arm_exit_sequence();
}

fn grow_directory(area: &Area, min_len: usize) {
    let new_len = min_len.max(area.len.get() * 2).max(16);
    let bytes = new_len * std::mem::size_of::<*mut u8>();
    // SAFETY: realloc of our own malloc'd directory (or null); the new tail
    // is zeroed before use.
    let dir = unsafe { libc::realloc(area.dir.get().cast(), bytes) }.cast::<*mut u8>();
    if dir.is_null() {
        crate::abort("defergc: out of memory growing a tls directory");
    }
    // SAFETY: dir has new_len entries; the first len are initialised.
    unsafe { ptr::write_bytes(dir.add(area.len.get()), 0, new_len - area.len.get()) };
    area.dir.set(dir);
    area.len.set(new_len);
}

fn add_teardown_hook() {
    static ADDED: Once = Once::new();
    ADDED.call_once(|| {
        gc_thread::on_thread_exit(gc_thread::ExitPhase::UserCode, teardown);
        // A fork never finds the registry locked in the child.
        static FORK: crate::gc::fork::ForkHooks = crate::gc::fork::ForkHooks {
            prepare: || crate::gc::fork::held::keep(registry()),
            ..crate::gc::fork::ForkHooks::NONE
        };
        crate::gc::fork::on_fork(&FORK);
    });
}

/// The thread-exit hook: empties every slot of the exiting thread, calling
/// destructors, then frees its pages.
fn teardown() {
    for _ in 0..TEARDOWN_PASSES {
        if !dispose_pass() {
            break;
        }
    }
    crate::fresh::with(&AREA, |area| {
        let (dir, len) = (area.dir.replace(ptr::null_mut()), area.len.replace(0));
        for page in 0..len {
            // SAFETY: dir has len entries; each non-null one is a live block
            // from roots::alloc_block that nothing uses any more.
            unsafe {
                if let Some(block) = NonNull::new(*dir.add(page)) {
                    roots::free_block(block);
                }
            }
        }
        // SAFETY: our own malloc'd directory (or null).
        unsafe { libc::free(dir.cast()) };
    });
}

/// One pass over the exiting thread's slots; returns whether any held a
/// value (so that destructors may have refilled some).
fn dispose_pass() -> bool {
    let mut any = false;
    let len = crate::fresh::with(&AREA, |area| area.len.get());
    let mut slots = Vec::new();
    for page in 0..len {
        let base = crate::fresh::with(&AREA, |area| {
            // A destructor may have grown the directory; re-read it.
            // SAFETY: page < len <= current len (directories only grow).
            unsafe { *area.dir.get().add(page) }
        });
        if base.is_null() {
            continue;
        }
        slots.clear();
        slots.extend_from_slice(&registry().pages[page].slots);
        for info in &slots {
            let cell = base.wrapping_add(info.offset as usize);
            // SAFETY: the cell belongs to this thread and no code of the
            // thread is running that could hold a loan (teardown runs after
            // the thread's own code).
            any |= unsafe { (info.dispose)(cell, info.destructor) };
        }
    }
    any
}

/// A slot declared as a `static`, created on first use. Dereferences to
/// nothing; use its methods, which forward to [`Slot`].
///
/// ```
/// use defergc::tls::StaticSlot;
/// static COUNTER: StaticSlot<u64> = StaticSlot::new(None);
/// COUNTER.set(1);
/// assert_eq!(COUNTER.get(), Some(1));
/// ```
pub struct StaticSlot<T: 'static> {
    /// [`Slot::to_bits`] of the slot, or 0 before first use.
    packed: AtomicU64,
    destructor: Option<fn(T)>,
}

impl<T: 'static> StaticSlot<T> {
    /// Declares a slot; `destructor` is as for [`alloc`].
    pub const fn new(destructor: Option<fn(T)>) -> StaticSlot<T> {
        StaticSlot {
            packed: AtomicU64::new(0),
            destructor,
        }
    }

    /// The underlying slot, created on first call.
    #[inline]
    pub fn slot(&self) -> Slot<T> {
        let packed = self.packed.load(Ordering::Acquire);
        if packed != 0 {
            // SAFETY: only create stores here, the bits of a Slot<T>.
            return unsafe { Slot::from_bits(packed) };
        }
        self.create()
    }

    #[cold]
    fn create(&self) -> Slot<T> {
        static CREATE: Mutex<()> = Mutex::new(());
        let _one_at_a_time = CREATE.lock().unwrap_or_else(|e| e.into_inner());
        if self.packed.load(Ordering::Acquire) == 0 {
            let slot = alloc::<T>(self.destructor);
            self.packed.store(slot.to_bits(), Ordering::Release);
        }
        drop(_one_at_a_time);
        self.slot()
    }

    /// See [`Slot::get`].
    #[inline]
    pub fn get(&self) -> Option<T>
    where
        T: Copy,
    {
        self.slot().get()
    }

    /// See [`Slot::set`].
    #[inline]
    pub fn set(&self, value: T) -> Option<T> {
        self.slot().set(value)
    }

    /// See [`Slot::take`].
    pub fn take(&self) -> Option<T> {
        self.slot().take()
    }

    /// See [`Slot::clear`].
    pub fn clear(&self) {
        self.slot().clear()
    }

    /// See [`Slot::is_set`].
    pub fn is_set(&self) -> bool {
        self.slot().is_set()
    }

    /// See [`Slot::with`].
    pub fn with<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        self.slot().with(f)
    }

    /// See [`Slot::with_mut`].
    pub fn with_mut<R>(&self, f: impl FnOnce(Option<&mut T>) -> R) -> R {
        self.slot().with_mut(f)
    }
}
