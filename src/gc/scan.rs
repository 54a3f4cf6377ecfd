//! Roots the collector finds through us: memory pushed during marking, and
//! the stack pointers of threads that run on stacks of our own.
//!
//! bdwgc scans every registered thread's stack from its stopped stack
//! pointer up to the stack's base, and calls one "push other roots" hook
//! while the world is stopped. The layers above add to that hook
//! ([`add_root_pusher`]): root memory's scanned stacks, the stacks of
//! parked goroutines. A thread running on a coroutine stack would make
//! bdwgc scan from a pointer on that stack up to the thread's own base, a
//! range spanning unrelated memory; the go layer corrects the stopped
//! stack pointer ([`set_stack_corrector`]) and pushes the coroutine stack
//! itself.
//!
//! Pushers and the corrector run with the world stopped and the collector's
//! allocation lock held: they take no lock a stopped mutator may hold, and
//! read what mutators publish with ordered atomics, or what changes only
//! under [`with_collector_lock`]. Under `nogc` nothing is collected: the
//! hooks are never called and the lock is a process-wide mutex.

#[cfg(defergc_boehm)]
use super::sys;
#[cfg(defergc_boehm)]
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A function that pushes roots while the world is stopped.
pub(crate) type RootPusher = fn();

/// Adjusts the stopped stack pointer `*sp` of the thread `thread` (a
/// `pthread_t`) before bdwgc scans from it to the thread's stack base.
pub(crate) type StackCorrector = fn(thread: usize, sp: &mut usize);

const MAX_PUSHERS: usize = 4;
static PUSHERS: [AtomicUsize; MAX_PUSHERS] = [const { AtomicUsize::new(0) }; MAX_PUSHERS];
static CORRECTOR: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` holding the collector's allocation lock: no collection starts
/// (and no pusher runs) meanwhile. `f` must not allocate GC memory.
#[cfg_attr(not(defergc_boehm), allow(dead_code))] // nothing needs it under nogc
pub(crate) fn with_collector_lock<R>(f: impl FnOnce() -> R) -> R {
    super::init();
    #[cfg(defergc_boehm)]
    {
        // SAFETY: the lock is released below on every path (f does not
        // unwind: a panic here would be a bug, and aborts in the callers).
        unsafe { sys::GC_alloc_lock() };
        let r = f();
        // SAFETY: taken above.
        unsafe { sys::GC_alloc_unlock() };
        r
    }
    #[cfg(not(defergc_boehm))]
    {
        static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        f()
    }
}

/// Adds `pusher` to the roots pushed at every collection (after the
/// thread stacks), once however often it is called.
pub(crate) fn add_root_pusher(pusher: RootPusher) {
    install();
    for slot in &PUSHERS {
        match slot.compare_exchange(0, pusher as usize, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            // Added already (by another thread at the same time).
            Err(p) if p == pusher as usize => return,
            Err(_) => {}
        }
    }
    crate::abort("defergc: too many root pushers");
}

/// Sets the stack-pointer corrector (one, the go layer's).
pub(crate) fn set_stack_corrector(corrector: StackCorrector) {
    install();
    CORRECTOR.store(corrector as usize, Ordering::Release);
}

/// Pushes `[lo, hi)` as root memory, for marking (from a pusher only):
/// a range of a defer-record stack, whose records (and the values they
/// captured) Go keeps on the goroutine's stack. Its bytes count as stack
/// in the collector's pacing, as [`push_stack_range`]'s do: a program
/// deep in defers scans them at every collection, and a trigger blind to
/// them collects at every third of a small heap, each time scanning all
/// of them.
#[inline]
#[cfg_attr(not(defergc_boehm), allow(dead_code))] // no pusher runs under nogc
pub(crate) fn push_range(lo: *const u8, hi: *const u8) {
    if lo < hi {
        // Only the collecting thread pushes, under the allocation lock.
        let counted = PUSHED_STACK_BYTES.load(Ordering::Relaxed);
        PUSHED_STACK_BYTES.store(counted + (hi as usize - lo as usize), Ordering::Relaxed);
        // SAFETY: called from a pusher, during marking; the range is live
        // memory the pusher's layer owns.
        #[cfg(defergc_boehm)]
        unsafe {
            sys::GC_push_all(lo as *mut c_void, hi as *mut c_void)
        };
    }
}

/// Scans `[lo, hi)` (a stack) at once, marking what its words point to
/// (from a pusher only). Unlike [`push_range`], takes no mark-stack entry
/// per range, so a million small stacks cannot overflow the mark stack.
///
/// The bytes count as stack in the collector's pacing (see
/// [`scanned_sizes`]).
#[inline]
pub(crate) fn push_stack_range(lo: *const u8, hi: *const u8) {
    if lo < hi {
        // Only the collecting thread pushes, under the allocation lock: a
        // load and a store, no read-modify-write.
        let counted = PUSHED_STACK_BYTES.load(Ordering::Relaxed);
        PUSHED_STACK_BYTES.store(counted + (hi as usize - lo as usize), Ordering::Relaxed);
        // SAFETY: as in push_range.
        #[cfg(defergc_boehm)]
        unsafe {
            sys::GC_push_all_eager(lo as *mut c_void, hi as *mut c_void)
        };
    }
}

/// Scans one part of the roots that a pusher handed to the collector's
/// marker threads ([`push_part`]): `part` is the word it pushed. Runs on
/// a marker thread, several at once, with the world stopped.
pub(crate) type PartScanner = fn(part: usize, marker: &mut Marker);

static PART_SCANNER: AtomicUsize = AtomicUsize::new(0);
/// The mark procedure's index in bdwgc, plus one (0: not registered).
static PART_PROC: AtomicUsize = AtomicUsize::new(0);
/// Stack bytes the parts' scans covered (summed by the marker threads).
#[cfg(defergc_boehm)]
static PART_STACK_BYTES: AtomicUsize = AtomicUsize::new(0);

/// What a [`PartScanner`] marks with: the marker thread's mark stack.
pub(crate) struct Marker {
    #[cfg(defergc_boehm)]
    top: *mut sys::GC_ms_entry,
    #[cfg(defergc_boehm)]
    limit: *mut sys::GC_ms_entry,
    scanned: usize,
}

impl Marker {
    /// Scans `[lo, hi)` of a stack: every word that may point into the
    /// heap marks its object (as bdwgc's own stack scan, without its
    /// stack-specific blacklisting).
    ///
    /// A scan pushes at most one mark-stack entry a word. When the marker's
    /// stack has not that much room left, the range goes on it as one
    /// entry instead (bdwgc marks it later, splitting it as it goes): a
    /// marker thread's stack is a fixed local one, and its overflow
    /// neither grows it nor keeps what was pushed, so a part that
    /// overflowed it would overflow it again on every rescan, and the
    /// collection would never end.
    pub(crate) fn scan_stack(&mut self, lo: usize, hi: usize) {
        let lo = lo.next_multiple_of(8);
        if lo >= hi {
            return;
        }
        self.scanned += hi - lo;
        #[cfg(defergc_boehm)]
        if self.room() <= (hi - lo) / 8 + 1 && self.push_entry(lo, hi) {
            return;
        }
        #[cfg(defergc_boehm)]
        {
            // SAFETY: bdwgc's bounds, read during marking (with the world
            // stopped, nothing moves them).
            let (least, greatest) = unsafe {
                (
                    std::ptr::addr_of!(sys::GC_least_plausible_heap_addr).read() as usize,
                    std::ptr::addr_of!(sys::GC_greatest_plausible_heap_addr).read() as usize,
                )
            };
            let mut at = lo;
            while at + 8 <= hi {
                // SAFETY: the caller's range is mapped stack memory that
                // no one writes while the world is stopped.
                let word = unsafe { (at as *const usize).read() };
                if word >= least && word < greatest {
                    // SAFETY: bdwgc's mark-and-push, on this marker's own
                    // mark stack, from a mark procedure.
                    self.top = unsafe {
                        sys::GC_mark_and_push(
                            word as *mut c_void,
                            self.top,
                            self.limit,
                            at as *mut *mut c_void,
                        )
                    };
                }
                at += 8;
            }
        }
    }
}

/// A mark-stack entry as bdwgc lays it out (`struct GC_ms_entry`, opaque
/// in the bindings): where the object or range starts, and its
/// descriptor (for a plain range, its length in bytes: tag
/// `GC_DS_LENGTH`, 0).
#[cfg(defergc_boehm)]
#[repr(C)]
struct Entry {
    start: *mut c_void,
    descr: usize,
}

#[cfg(defergc_boehm)]
const _: () = assert!(sys::GC_DS_LENGTH == 0);

#[cfg(defergc_boehm)]
impl Marker {
    /// Free entries above the top (the top is the last entry in use).
    fn room(&self) -> usize {
        (self.limit as usize).saturating_sub(self.top as usize) / std::mem::size_of::<Entry>()
    }

    /// Pushes `[lo, hi)` as one range entry, if there is room for it.
    fn push_entry(&mut self, lo: usize, hi: usize) -> bool {
        if self.room() < 2 {
            return false;
        }
        // SAFETY: the entry above the top is within the limit (room
        // checked), on this marker's own mark stack; entries are two words
        // (bdwgc's layout, which Entry repeats).
        unsafe {
            let e = self.top.cast::<Entry>().add(1);
            e.write(Entry {
                start: lo as *mut c_void,
                descr: hi - lo,
            });
            self.top = e.cast();
        }
        true
    }
}

/// How many parts the next root push will hand out, at most (called at a
/// collection's start, with the allocation lock held).
pub(crate) type PartCount = fn() -> usize;

static PART_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Registers the scanner of the parts pushers hand to the marker threads
/// (one, the go layer's goroutine stacks), and how many there will be.
pub(crate) fn set_part_scanner(scanner: PartScanner, count: PartCount) {
    install();
    PART_COUNT.store(count as usize, Ordering::Release);
    PART_SCANNER.store(scanner as usize, Ordering::Release);
    #[cfg(defergc_boehm)]
    if PART_PROC.load(Ordering::Acquire) == 0 {
        // SAFETY: registers a mark procedure (bdwgc takes its lock); a
        // race registering it twice wastes one of its 64 indices.
        let index = unsafe { sys::GC_new_proc(Some(part_proc)) };
        PART_PROC.store(index as usize + 1, Ordering::Release);
    }
}

/// bdwgc's mark procedure for a pushed part (see [`push_part`]).
#[cfg(defergc_boehm)]
unsafe extern "C" fn part_proc(
    _addr: *mut sys::GC_word,
    top: *mut sys::GC_ms_entry,
    limit: *mut sys::GC_ms_entry,
    env: sys::GC_word,
) -> *mut sys::GC_ms_entry {
    let s = PART_SCANNER.load(Ordering::Acquire);
    if s == 0 {
        return top;
    }
    // SAFETY: only set_part_scanner stores here, and it stores
    // PartScanner functions.
    let scanner: PartScanner = unsafe { std::mem::transmute::<usize, PartScanner>(s) };
    let mut marker = Marker {
        top,
        limit,
        scanned: 0,
    };
    scanner(env as usize, &mut marker);
    PART_STACK_BYTES.fetch_add(marker.scanned, Ordering::Relaxed);
    marker.top
}

/// Free mark-stack entries a part leaves at least, for the entries other
/// roots and the first marking push.
#[cfg(defergc_boehm)]
const PART_ROOM: usize = 4096;

/// From a pusher: hands `part` (a word below 2^56) to the marker threads,
/// which scan it with the registered [`PartScanner`], in parallel, after
/// the pushers ran. False when that cannot be done (a system libgc, no
/// scanner, or the mark stack nearly full: more parts than the
/// collection's start reserved for): the pusher scans it itself then.
pub(crate) fn push_part(part: usize) -> bool {
    let index = PART_PROC.load(Ordering::Acquire);
    if index == 0 || part >> 56 != 0 {
        return false;
    }
    #[cfg(defergc_boehm)]
    {
        // SAFETY: from a pusher: lock held, in the root push.
        if unsafe { sys::internals::mark_stack_room() } < PART_ROOM {
            return false;
        }
        // GC_MAKE_PROC(index, env): a procedure descriptor.
        let descr = ((((part as sys::GC_word) << 6) | (index - 1) as sys::GC_word) << 2) | 2;
        // SAFETY: from a pusher (lock held, in the root push); the
        // descriptor names the procedure registered above. The address is
        // never read: the procedure gets the part from the descriptor.
        if unsafe { sys::internals::push_entry(std::ptr::null_mut(), descr) } {
            return true;
        }
    }
    false
}

/// At a collection's start (lock held, mark stack empty): room on the mark
/// stack for every part the push will hand out, and as much again for
/// the rest, so that they do not overflow it (an overflow drops entries,
/// rescans the heap and pushes the roots again, each time).
#[cfg(defergc_boehm)]
pub(crate) fn collection_starting() {
    let c = PART_COUNT.load(Ordering::Acquire);
    if c == 0 || PART_PROC.load(Ordering::Acquire) == 0 {
        return;
    }
    // SAFETY: only set_part_scanner stores here, and it stores PartCount
    // functions.
    let count: PartCount = unsafe { std::mem::transmute::<usize, PartCount>(c) };
    let parts = count();
    if parts > 0 {
        // SAFETY: the caller holds the lock, at a collection's start.
        unsafe { sys::internals::reserve_mark_stack(2 * parts + 2 * PART_ROOM) };
    }
}

/// At marking's end (lock held): the stack bytes the parts' scans covered
/// count as stacks, as the pushers' own do.
#[cfg(defergc_boehm)]
pub(crate) fn marking_ended() {
    let bytes = PART_STACK_BYTES.swap(0, Ordering::Relaxed);
    if bytes > 0 {
        // SAFETY: the caller holds the lock; the root push is over.
        let stacks = unsafe { sys::internals::add_stack_bytes(bytes) };
        let stacks = stacks.unwrap_or(SCANNED_STACKS.load(Ordering::Relaxed) + bytes);
        SCANNED_STACKS.store(stacks, Ordering::Relaxed);
    }
}

/// Stack bytes the pushers scanned in the collection under way.
static PUSHED_STACK_BYTES: AtomicUsize = AtomicUsize::new(0);
/// What the latest collection scanned as stacks (bdwgc's thread stacks and
/// ours) and as static roots, in bytes.
static SCANNED_STACKS: AtomicUsize = AtomicUsize::new(0);
static SCANNED_GLOBALS: AtomicUsize = AtomicUsize::new(0);

/// What the latest collection scanned: stack bytes (every thread's and
/// every goroutine's) and static-root bytes (Go's gctrace "MB stacks" and
/// "MB globals"). bdwgc's trigger counts its own thread stacks; the
/// goroutine stacks our pushers scan are added to that count (vendored
/// collector only: a system libgc hides it, and there the pacing does not
/// see goroutine stacks), so a million parked goroutines move the next
/// collection out as Go's pacer (1.18 on) does for stacks.
pub(crate) fn scanned_sizes() -> (usize, usize) {
    (
        SCANNED_STACKS.load(Ordering::Relaxed),
        SCANNED_GLOBALS.load(Ordering::Relaxed),
    )
}

/// The signal bdwgc stops threads with, if it stops threads with one: a
/// signal handler that must not be stopped in before it has published
/// where the interrupted stack is blocks it (see `signal::handler`).
pub(crate) fn stop_signal() -> Option<libc::c_int> {
    #[cfg(defergc_boehm)]
    {
        // SAFETY: reads a setting (its default before GC_init).
        Some(unsafe { sys::GC_get_suspend_signal() })
    }
    #[cfg(not(defergc_boehm))]
    {
        None
    }
}

/// Installs our hooks in bdwgc, once.
fn install() {
    #[cfg(defergc_boehm)]
    {
        static INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        static mut PREVIOUS: sys::GC_push_other_roots_proc = None;

        /// bdwgc's push-other-roots hook: the previous one (which scans
        /// the thread stacks, correcting stack pointers), then ours.
        unsafe extern "C" fn push_other_roots() {
            // SAFETY: PREVIOUS is written once, under the allocation lock
            // that the collector holds while it calls us.
            if let Some(previous) = unsafe { PREVIOUS } {
                // SAFETY: bdwgc's own hook, called as bdwgc would.
                unsafe { previous() };
            }
            // A push may run more than once a collection (after a
            // mark-stack overflow); bdwgc's own stack count restarts with
            // each, and so does ours. A rescan's push also asks for a
            // larger mark stack: without it, a root set larger than the
            // stack overflowed it at every rescan, for ever.
            // SAFETY: in the root push, the allocation lock held.
            unsafe { sys::internals::note_root_push() };
            PUSHED_STACK_BYTES.store(0, Ordering::Relaxed);
            PART_STACK_BYTES.store(0, Ordering::Relaxed);
            for slot in &PUSHERS {
                let p = slot.load(Ordering::Acquire);
                if p == 0 {
                    break;
                }
                // SAFETY: only add_root_pusher stores here, and it stores
                // RootPusher functions.
                let pusher: RootPusher = unsafe { std::mem::transmute::<usize, RootPusher>(p) };
                pusher();
            }
            let ours = PUSHED_STACK_BYTES.load(Ordering::Relaxed);
            // SAFETY: the collector holds its lock, in the root push,
            // after its own thread-stack push.
            let stacks = unsafe { sys::internals::add_stack_bytes(ours) }.unwrap_or(ours);
            SCANNED_STACKS.store(stacks, Ordering::Relaxed);
            // SAFETY: the collector holds its lock.
            let globals = unsafe { sys::internals::static_root_bytes() }.unwrap_or(0);
            SCANNED_GLOBALS.store(globals, Ordering::Relaxed);
        }

        /// bdwgc's stack-pointer corrector: ours, if set.
        unsafe extern "C" fn correct(sp: *mut *mut c_void, thread: *mut c_void) {
            let c = CORRECTOR.load(Ordering::Acquire);
            if c != 0 {
                // SAFETY: only set_stack_corrector stores here, and it
                // stores StackCorrector functions.
                let corrector: StackCorrector =
                    unsafe { std::mem::transmute::<usize, StackCorrector>(c) };
                // SAFETY: bdwgc passes a valid pointer to the stopped sp.
                let sp = unsafe { &mut *sp.cast::<usize>() };
                corrector(thread as usize, sp);
            }
        }

        // No `Once`: a fork while another thread runs a `Once` leaves it
        // running for good in the child (whose first stack then waits on
        // it forever). Each step is atomic under the allocation lock,
        // which the fork's handlers take.
        if INSTALLED.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: takes the allocation lock itself, so not under it;
        // setting the same corrector again is harmless.
        unsafe { sys::GC_set_sp_corrector(Some(correct)) };
        with_collector_lock(|| {
            if INSTALLED.load(Ordering::Relaxed) {
                return;
            }
            // SAFETY: under the allocation lock, which the collector holds
            // while it calls the hook: PREVIOUS is set before the hook can
            // run, and once.
            unsafe {
                PREVIOUS = sys::GC_get_push_other_roots();
                sys::GC_set_push_other_roots(Some(push_other_roots));
            }
            INSTALLED.store(true, Ordering::Release);
        });
    }
}
