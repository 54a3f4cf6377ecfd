//! Root memory: memory outside the collected heap that every enabled
//! collector scans for references (design.md invariants 2 and 3). This is
//! the one module that knows which collectors are compiled in.
//!
//! Two shapes:
//!
//! - **Blocks** ([`alloc_block`], [`free_block`]): small, long-lived, zeroed
//!   memory such as TLS slot pages and panic values. On bdwgc they are
//!   `GC_malloc_uncollectable` objects, which the collector scans but never
//!   frees (no root set, so no 2048 cap and no linear removal). Under `nogc`
//!   they are `calloc` memory.
//! - **Stacks** ([`RootStack`]): large, fast-growing LIFO regions, such as
//!   a thread's defer records. They live in plain memory, in chunks kept for
//!   reuse; pushing and popping take no lock and trigger no collection. The
//!   collector finds them through a registry of stacks that it walks from a
//!   `GC_set_push_other_roots` callback while the world is stopped.
//!
//! The callback runs with the world stopped and bdwgc's allocation lock
//! held, so it never takes a lock a stopped mutator may hold: the registry
//! changes only under bdwgc's allocation lock, and a stack's (chunk, top)
//! pair is published with ordered stores that keep every intermediate state
//! scannable (see [`RootStack::for_each_range`]).

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Allocates `size` zeroed bytes of root memory: scanned by the collector,
/// never collected, released only by [`free_block`]. Under `precise` the
/// block belongs to the calling thread, whose root scan covers it.
pub(crate) fn alloc_block(size: usize) -> NonNull<u8> {
    #[cfg(not(feature = "precise"))]
    if size <= small::SIZE {
        if let Some(block) = small::take() {
            return block;
        }
        return crate::gc::alloc_uncollectable(small::SIZE);
    }
    let block = crate::gc::alloc_uncollectable(size);
    #[cfg(feature = "precise")]
    by_thread::add_block(block.as_ptr(), size);
    block
}

/// Small blocks (panic values, goroutine arguments: one or two per
/// panic or go statement) are recycled per thread, zeroed, instead of
/// taking the collector's allocation lock each time. (Not under `precise`,
/// whose root blocks belong to one context each.)
#[cfg(not(feature = "precise"))]
mod small {
    use std::cell::RefCell;
    use std::ptr::NonNull;

    /// Bytes of every small block.
    pub(super) const SIZE: usize = 64;
    /// Blocks a thread keeps.
    const KEEP: usize = 128;

    struct Cache(Vec<NonNull<u8>>);

    impl Drop for Cache {
        fn drop(&mut self) {
            for block in self.0.drain(..) {
                // SAFETY: cached blocks are live, unused root blocks.
                unsafe { crate::gc::free(block.as_ptr()) };
            }
        }
    }

    thread_local! {
        static FREE: RefCell<Cache> = const { RefCell::new(Cache(Vec::new())) };
    }

    /// The usable size of small blocks (learnt from the first one freed).
    static USABLE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    pub(super) fn take() -> Option<NonNull<u8>> {
        FREE.try_with(|f| f.borrow_mut().0.pop()).ok().flatten()
    }

    /// Keeps `block` (zeroed here) if it is a small block and there is
    /// room; gives it back otherwise.
    ///
    /// # Safety
    /// `block` is a live root block that nobody uses any more.
    pub(super) unsafe fn keep(block: NonNull<u8>) -> Result<(), NonNull<u8>> {
        // SAFETY: a live block of ours.
        let usable = unsafe { crate::gc::allocation_size(block.as_ptr()) };
        let small = USABLE.load(std::sync::atomic::Ordering::Relaxed);
        if small == 0 {
            // The usable size of a SIZE-byte request, learnt once.
            let probe = crate::gc::alloc_uncollectable(SIZE);
            // SAFETY: just allocated, freed at once.
            unsafe {
                let size = crate::gc::allocation_size(probe.as_ptr());
                crate::gc::free(probe.as_ptr());
                USABLE.store(size, std::sync::atomic::Ordering::Relaxed);
            }
            // SAFETY: forwarded.
            return unsafe { keep(block) };
        }
        if usable != small {
            return Err(block);
        }
        FREE.try_with(|f| {
            let mut f = f.borrow_mut();
            if f.0.len() >= KEEP {
                return Err(block);
            }
            // Root memory is scanned: a cached block keeps nothing alive.
            // SAFETY: the whole block is ours.
            unsafe { std::ptr::write_bytes(block.as_ptr(), 0, usable) };
            f.0.push(block);
            Ok(())
        })
        .unwrap_or(Err(block))
    }
}

/// Releases a block from [`alloc_block`].
///
/// # Safety
/// `block` came from [`alloc_block`], is live, and is not used afterwards.
pub(crate) unsafe fn free_block(block: NonNull<u8>) {
    #[cfg(not(feature = "precise"))]
    // SAFETY: forwarded from the caller.
    let Err(block) = (unsafe { small::keep(block) }) else {
        return;
    };
    #[cfg(feature = "precise")]
    by_thread::remove_block(block.as_ptr());
    // SAFETY: forwarded from the caller.
    unsafe { crate::gc::free(block.as_ptr()) }
}

/// Bytes in the first chunk of a stack (small: every goroutine that defers
/// has a stack); later chunks double up to [`MAX_CHUNK`], so a million
/// records take a few dozen chunks.
const FIRST_CHUNK: usize = 1 << 10;
const MAX_CHUNK: usize = 1 << 20;

/// One segment of a [`RootStack`]. The data follows the header.
#[repr(C)]
struct Chunk {
    /// The chunk below this one, or null.
    prev: *mut Chunk,
    /// Data bytes after the header.
    size: usize,
    /// Top of this chunk while it is not the current one.
    saved_top: AtomicPtr<u8>,
}

impl Chunk {
    fn data(this: *mut Chunk) -> *mut u8 {
        this.cast::<u8>().wrapping_add(std::mem::size_of::<Chunk>())
    }

    /// # Safety
    /// `this` is a live chunk.
    unsafe fn end(this: *mut Chunk) -> *mut u8 {
        // SAFETY: the caller guarantees this is live.
        Chunk::data(this).wrapping_add(unsafe { (*this).size })
    }

    fn new(size: usize, prev: *mut Chunk) -> *mut Chunk {
        let total = std::mem::size_of::<Chunk>() + size;
        // SAFETY: plain allocation; the header is written before use.
        let raw = unsafe { libc::malloc(total) }.cast::<Chunk>();
        if raw.is_null() {
            crate::abort(&format!(
                "defergc: out of memory growing a root stack by {size} bytes"
            ));
        }
        // SAFETY: raw points to at least a Chunk header's worth of bytes.
        unsafe {
            raw.write(Chunk {
                prev,
                size,
                saved_top: AtomicPtr::new(Chunk::data(raw)),
            })
        };
        raw
    }

    /// # Safety
    /// `this` is a live chunk that nothing references any more.
    unsafe fn free(this: *mut Chunk) {
        // The precise collector scans a thread in native code on its behalf
        // while the thread may go on pushing and popping; a scan that
        // loaded this chunk before it was unlinked may still be reading
        // it. Scans hold the registry lock throughout: wait for them.
        #[cfg(feature = "precise")]
        let _no_scan = by_thread::exclude_scans();
        // SAFETY: the caller guarantees exclusive ownership.
        unsafe { libc::free(this.cast()) }
    }
}

/// The part of a stack the collector reads. Heap-allocated so its address
/// is stable while it sits in the registry.
#[repr(C)]
struct StackHead {
    /// The current chunk.
    chunk: AtomicPtr<Chunk>,
    /// The first free byte of the current chunk.
    top: AtomicPtr<u8>,
    /// Registry links, changed only under the registry lock.
    next: *mut StackHead,
    prev: *mut StackHead,
}

/// A segmented LIFO region of root memory owned by one thread.
///
/// Pushing returns uninitialised, 8-byte-aligned space below the new top;
/// whatever is written there is scanned until it is popped. A push never
/// moves earlier data, so pointers into the stack stay valid until popped.
pub(crate) struct RootStack {
    head: NonNull<StackHead>,
    /// The execution context whose root memory the stack is.
    #[cfg(feature = "precise")]
    owner: u64,
    /// End of the current chunk (only the owner needs it).
    limit: Cell<*mut u8>,
    /// One emptied chunk kept for reuse, so that pushing and popping across
    /// a chunk boundary does not allocate every time.
    spare: Cell<*mut Chunk>,
    _not_send: PhantomData<*mut ()>,
}

/// A saved position of a [`RootStack`], to pop back to.
pub(crate) type Mark = *mut u8;

impl RootStack {
    /// Creates an empty stack and registers it with every enabled collector.
    pub(crate) fn new() -> RootStack {
        let chunk = Chunk::new(FIRST_CHUNK, ptr::null_mut());
        let head = Box::into_raw(Box::new(StackHead {
            chunk: AtomicPtr::new(chunk),
            top: AtomicPtr::new(Chunk::data(chunk)),
            next: ptr::null_mut(),
            prev: ptr::null_mut(),
        }));
        // SAFETY: Box::into_raw never returns null.
        let head = unsafe { NonNull::new_unchecked(head) };
        registry::insert(head.as_ptr());
        RootStack {
            #[cfg(feature = "precise")]
            owner: by_thread::add_stack(head.as_ptr()),
            head,
            // SAFETY: chunk is live.
            limit: Cell::new(unsafe { Chunk::end(chunk) }),
            spare: Cell::new(ptr::null_mut()),
            _not_send: PhantomData,
        }
    }

    fn head(&self) -> &StackHead {
        // SAFETY: the head lives until Drop.
        unsafe { self.head.as_ref() }
    }

    /// Whether nothing is pushed.
    pub(crate) fn is_empty(&self) -> bool {
        let head = self.head();
        let chunk = head.chunk.load(Ordering::Relaxed);
        // SAFETY: the current chunk is live.
        let bottom = unsafe { (*chunk).prev.is_null() };
        bottom && head.top.load(Ordering::Relaxed) == Chunk::data(chunk)
    }

    /// The current top, to pop back to later.
    #[inline(always)]
    pub(crate) fn mark(&self) -> Mark {
        self.head().top.load(Ordering::Relaxed)
    }

    /// Reserves `size` bytes (a multiple of 8) and returns their start.
    #[inline(always)]
    pub(crate) fn push(&self, size: usize) -> *mut u8 {
        debug_assert!(size.is_multiple_of(8));
        let top = self.head().top.load(Ordering::Relaxed);
        if (self.limit.get() as usize) - (top as usize) >= size {
            self.head()
                .top
                .store(top.wrapping_add(size), Ordering::Release);
            top
        } else {
            self.push_slow(size)
        }
    }

    #[cold]
    #[inline(never)]
    fn push_slow(&self, size: usize) -> *mut u8 {
        let head = self.head();
        let old = head.chunk.load(Ordering::Relaxed);
        // SAFETY: old is the live current chunk.
        let old_size = unsafe { (*old).size };
        let want = (old_size * 2).clamp(FIRST_CHUNK, MAX_CHUNK).max(size);
        let spare = self.spare.replace(ptr::null_mut());
        // SAFETY: spare, when non-null, is an unused chunk we own.
        let new = if !spare.is_null() && unsafe { (*spare).size } >= size {
            // SAFETY: as above; nothing else references the spare.
            unsafe {
                (*spare).prev = old;
                (*spare)
                    .saved_top
                    .store(Chunk::data(spare), Ordering::Relaxed);
            }
            spare
        } else {
            if !spare.is_null() {
                // SAFETY: the spare is unreferenced and too small to keep.
                unsafe { Chunk::free(spare) };
            }
            Chunk::new(want, old)
        };
        // Publish in an order that is scannable at every step: the old
        // chunk's top first, then the new chunk, then the top inside it.
        // SAFETY: old is live.
        unsafe {
            (*old)
                .saved_top
                .store(head.top.load(Ordering::Relaxed), Ordering::Release)
        };
        head.chunk.store(new, Ordering::Release);
        let start = Chunk::data(new);
        head.top.store(start.wrapping_add(size), Ordering::Release);
        // SAFETY: new is live.
        self.limit.set(unsafe { Chunk::end(new) });
        start
    }

    /// Pops everything above `mark`.
    ///
    /// # Safety
    /// `mark` came from [`RootStack::mark`] on this stack and nothing between
    /// it and the top is still in use.
    #[inline(always)]
    pub(crate) unsafe fn pop_to(&self, mark: Mark) {
        let head = self.head();
        let chunk = head.chunk.load(Ordering::Relaxed);
        // The start of a chunk is never the top while an older chunk holds
        // records: popping to it steps back (slow path).
        if mark > Chunk::data(chunk) && mark <= self.limit.get() {
            head.top.store(mark, Ordering::Release);
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { self.pop_chunks_to(mark) }
        }
    }

    /// # Safety
    /// As for [`RootStack::pop_to`]; `mark` lies in an older chunk, or is
    /// the start of the current one.
    #[cold]
    #[inline(never)]
    unsafe fn pop_chunks_to(&self, mark: Mark) {
        let head = self.head();
        loop {
            let chunk = head.chunk.load(Ordering::Relaxed);
            // SAFETY: chunk is the live current chunk.
            let (prev, end) = unsafe { ((*chunk).prev, Chunk::end(chunk)) };
            if mark >= Chunk::data(chunk) && mark <= end {
                if mark == Chunk::data(chunk) && !prev.is_null() {
                    // Empty: the top is the older chunk's.
                    self.step_back(chunk, prev);
                } else {
                    head.top.store(mark, Ordering::Release);
                    self.limit.set(end);
                }
                return;
            }
            if prev.is_null() {
                crate::abort("defergc: root stack popped to a mark it does not hold");
            }
            self.step_back(chunk, prev);
        }
    }

    /// Makes `prev` the current chunk again, with its saved top, and keeps
    /// `chunk` as the spare.
    fn step_back(&self, chunk: *mut Chunk, prev: *mut Chunk) {
        let head = self.head();
        // The top first (a top outside the current chunk makes the scanner
        // treat that chunk as empty), then the chunk pointer.
        // SAFETY: prev is live.
        let (saved, end) = unsafe { ((*prev).saved_top.load(Ordering::Relaxed), Chunk::end(prev)) };
        head.top.store(saved, Ordering::Release);
        head.chunk.store(prev, Ordering::Release);
        self.limit.set(end);
        self.keep_spare(chunk);
    }

    /// Keeps `chunk` as the spare (the larger of it and the current spare,
    /// up to [`MAX_CHUNK`]) and frees the other.
    fn keep_spare(&self, chunk: *mut Chunk) {
        let spare = self.spare.get();
        // SAFETY: both are unreferenced chunks owned by this stack.
        unsafe {
            if spare.is_null() {
                self.spare.set(chunk);
            } else if (*chunk).size > (*spare).size && (*chunk).size <= MAX_CHUNK {
                Chunk::free(spare);
                self.spare.set(chunk);
            } else {
                Chunk::free(chunk);
            }
        }
    }
}

impl StackHead {
    /// Calls `f(lo, hi)` for every live range of the stack, newest first.
    ///
    /// Safe against the owner being stopped at any instruction of a push or
    /// pop: a top outside the current chunk means a chunk switch is under
    /// way and the current chunk holds nothing yet (or any more).
    ///
    /// # Safety
    /// The owner is stopped (or is the caller), so no chunk is freed while
    /// this runs.
    unsafe fn for_each_range(&self, mut f: impl FnMut(*mut u8, *mut u8)) {
        let mut chunk = self.chunk.load(Ordering::Acquire);
        let top = self.top.load(Ordering::Acquire);
        // SAFETY: chunks reachable from the head are live while the owner
        // is stopped.
        unsafe {
            if top >= Chunk::data(chunk) && top <= Chunk::end(chunk) {
                f(Chunk::data(chunk), top);
            }
            chunk = (*chunk).prev;
            while !chunk.is_null() {
                f(
                    Chunk::data(chunk),
                    (*chunk).saved_top.load(Ordering::Acquire),
                );
                chunk = (*chunk).prev;
            }
        }
    }
}

impl Drop for RootStack {
    fn drop(&mut self) {
        registry::remove(self.head.as_ptr());
        #[cfg(feature = "precise")]
        by_thread::remove_stack(self.head.as_ptr(), self.owner);
        // SAFETY: the head is out of the registry, so nothing else reads it
        // or its chunks; we own them all.
        unsafe {
            let head = Box::from_raw(self.head.as_ptr());
            let mut chunk = head.chunk.load(Ordering::Relaxed);
            while !chunk.is_null() {
                let prev = (*chunk).prev;
                Chunk::free(chunk);
                chunk = prev;
            }
            let spare = self.spare.get();
            if !spare.is_null() {
                Chunk::free(spare);
            }
        }
    }
}

/// The registry of live stacks, pushed as roots at every bdwgc collection
/// (with the world stopped; under `nogc` nothing reads it).
mod registry {
    use super::StackHead;
    use crate::gc::scan;
    use std::ptr;

    /// First stack in the list; read and written only under the
    /// collector's lock (which bdwgc holds while it calls the pusher).
    static mut FIRST: *mut StackHead = ptr::null_mut();

    pub(super) fn insert(head: *mut StackHead) {
        static PUSHER: std::sync::Once = std::sync::Once::new();
        PUSHER.call_once(|| scan::add_root_pusher(push_stacks));
        scan::with_collector_lock(|| {
            // SAFETY: the collector's lock serialises every access to the
            // list and its links.
            unsafe {
                (*head).next = FIRST;
                (*head).prev = ptr::null_mut();
                if !FIRST.is_null() {
                    (*FIRST).prev = head;
                }
                FIRST = head;
            }
        })
    }

    pub(super) fn remove(head: *mut StackHead) {
        scan::with_collector_lock(|| {
            // SAFETY: as in insert.
            unsafe {
                let (next, prev) = ((*head).next, (*head).prev);
                if prev.is_null() {
                    FIRST = next;
                } else {
                    (*prev).next = next;
                }
                if !next.is_null() {
                    (*next).prev = prev;
                }
            }
        })
    }

    /// Pushes every live range of every registered stack. Called with the
    /// world stopped and the collector's lock held; may run more than once
    /// per collection after a mark-stack overflow.
    fn push_stacks() {
        // SAFETY: the collector holds its lock, which guards the list, and
        // every mutator is stopped, so no stack changes.
        unsafe {
            let mut head = FIRST;
            while !head.is_null() {
                (*head).for_each_range(|lo, hi| scan::push_range(lo, hi));
                head = (*head).next;
            }
        }
    }
}

/// Root memory by owner thread, for the precise collector: it scans each
/// thread's root memory when that thread reaches its handshake (or on its
/// behalf while it is parked in native code), so it needs one thread's
/// blocks and stacks at a time.
///
/// Every root block and stack is written only by the thread that allocated
/// it (tls pages, panic values, the defer state and records), which is what
/// makes a per-thread snapshot complete. Blocks still alive when their
/// thread exits become *orphans*, scanned with every thread's.
///
/// The registry's lock is never taken by bdwgc's world-stopped callback,
/// and never held across a call into a collector.
#[cfg(feature = "precise")]
pub(crate) mod by_thread {
    use super::StackHead;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, MutexGuard};

    /// The owner of blocks whose thread has exited.
    pub(crate) const ORPHANS: u64 = 0;

    #[derive(Default)]
    struct Owned {
        /// Block address to its length.
        blocks: HashMap<usize, usize>,
        stacks: Vec<usize>,
    }

    #[derive(Default)]
    struct Registry {
        owners: HashMap<u64, Owned>,
        /// Block address to its owner.
        owner_of: HashMap<usize, u64>,
    }

    static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

    fn registry() -> MutexGuard<'static, Option<Registry>> {
        REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
        f(registry().get_or_insert_with(Registry::default))
    }

    /// The owner id of the calling thread's current execution context
    /// (never [`ORPHANS`]), marking the context as an owner of root memory
    /// so that what it leaves is orphaned when it is destroyed.
    pub(crate) fn owner() -> u64 {
        let ctx = crate::context::current();
        if ctx.get(&OWNER).is_null() {
            ctx.set(&OWNER, OWNS.as_ptr());
        }
        ctx.id()
    }

    /// Root memory's slot in every execution context (rank 1: its depth in
    /// design.md's list of layers, so destroyed after every layer above
    /// freed what it owned). Non-null once the context owns root memory.
    static OWNER: crate::context::Key = crate::context::Key::new(1, orphan_at_end);
    /// The value of [`OWNER`]'s slot: only its non-nullness matters.
    static OWNS: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

    /// An owner's context was destroyed: what it still owns becomes orphans
    /// (if the precise collector had registered it, its unregistration did
    /// that already, see [`orphan`]).
    ///
    /// # Safety
    /// Called by the context's destruction with the slot value [`owner`]
    /// set.
    unsafe fn orphan_at_end(ctx: &crate::context::Context, _owns: *mut u8) {
        orphan(ctx.id());
    }

    /// The end of `owner` (its context is destroyed; the precise collector
    /// calls this as it unregisters it, so that no moment exists in which
    /// the memory is nobody's to scan): whatever it still owns becomes an
    /// orphan, scanned with everyone's.
    pub(crate) fn orphan(owner: u64) {
        with(|r| {
            let stacks = r.orphan(owner);
            debug_assert_eq!(stacks, 0, "a root stack outlived its owner");
        });
    }

    impl Registry {
        /// Makes `owner`'s blocks orphans; returns how many stacks it
        /// still had (they are dropped from the registry).
        fn orphan(&mut self, owner: u64) -> usize {
            let Some(owned) = self.owners.remove(&owner) else {
                return 0;
            };
            for &block in owned.blocks.keys() {
                self.owner_of.insert(block, ORPHANS);
            }
            self.owners
                .entry(ORPHANS)
                .or_default()
                .blocks
                .extend(owned.blocks);
            owned.stacks.len()
        }
    }

    /// Before a fork (a leaf lock): kept until after the fork.
    pub(crate) fn lock_for_fork() {
        crate::gc::fork::held::keep(registry());
    }

    /// In a forked child: the root memory of every owner but `me` (threads
    /// that did not come along) becomes orphans, still scanned.
    pub(crate) fn orphan_all_but(me: u64) {
        with(|r| {
            let gone: Vec<u64> = r
                .owners
                .keys()
                .copied()
                .filter(|&o| o != me && o != ORPHANS)
                .collect();
            // Their stacks are no longer scanned: no thread will run or
            // pop their records here.
            for owner in gone {
                r.orphan(owner);
            }
        });
    }

    /// Holds off every scan ([`for_each_word`] holds the same lock
    /// throughout) while the guard lives.
    pub(super) fn exclude_scans() -> impl Drop {
        registry()
    }

    pub(super) fn add_block(block: *mut u8, len: usize) {
        let me = owner();
        with(|r| {
            r.owners
                .entry(me)
                .or_default()
                .blocks
                .insert(block as usize, len);
            r.owner_of.insert(block as usize, me);
        });
    }

    pub(super) fn remove_block(block: *mut u8) {
        with(|r| {
            if let Some(owner) = r.owner_of.remove(&(block as usize)) {
                if let Some(owned) = r.owners.get_mut(&owner) {
                    owned.blocks.remove(&(block as usize));
                }
            }
        });
    }

    /// Registers a stack of the current context; returns its owner id.
    pub(super) fn add_stack(head: *mut StackHead) -> u64 {
        let me = owner();
        with(|r| r.owners.entry(me).or_default().stacks.push(head as usize));
        me
    }

    pub(super) fn remove_stack(head: *mut StackHead, owner: u64) {
        with(|r| {
            if let Some(owned) = r.owners.get_mut(&owner) {
                owned.stacks.retain(|&h| h != head as usize);
            }
        });
    }

    /// Offers every word of `owner`'s root memory (its blocks and the live
    /// part of its stacks) to `f`, as a candidate reference.
    ///
    /// # Safety
    /// Each owner whose stacks are scanned is the caller, or is stopped (at
    /// a safepoint, or parked in native code) so that its stacks do not
    /// change meanwhile. Block words may change concurrently: they are read
    /// with relaxed atomic loads.
    pub(crate) unsafe fn for_each_word(owner: u64, f: &mut dyn FnMut(usize)) {
        let guard = registry();
        let Some(r) = guard.as_ref() else {
            return;
        };
        let mut scan = |lo: *mut u8, hi: *mut u8| {
            let mut p = (lo as usize).next_multiple_of(8);
            while p + 8 <= hi as usize {
                // SAFETY: p is an aligned word inside live root memory; an
                // atomic load tolerates a concurrent owner write.
                f(unsafe { (*(p as *const AtomicUsize)).load(Ordering::Relaxed) });
                p += 8;
            }
        };
        let Some(owned) = r.owners.get(&owner) else {
            return;
        };
        for (&block, &len) in &owned.blocks {
            scan(block as *mut u8, (block + len) as *mut u8);
        }
        for &head in &owned.stacks {
            // SAFETY: the stack is registered, so live; its owner does not
            // change it meanwhile (the caller's obligation).
            unsafe { (*(head as *const StackHead)).for_each_range(&mut scan) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sum of the bytes the collector would scan.
    fn scanned(stack: &RootStack) -> usize {
        let mut total = 0;
        // SAFETY: the owner (this thread) is the caller.
        unsafe {
            stack.head().for_each_range(|lo, hi| {
                assert!(lo <= hi, "inverted range");
                total += hi as usize - lo as usize;
            })
        };
        total
    }

    /// Whether `len` bytes at `at` all equal `fill`.
    fn filled(at: *const u8, len: usize, fill: u8) -> bool {
        // SAFETY: callers pass the bytes of a live push.
        (0..len).all(|i| unsafe { *at.add(i) } == fill)
    }

    /// A tiny deterministic generator (xorshift), for reproducible shapes.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn pushes_and_pops_across_chunk_boundaries_keep_every_byte() {
        let stack = RootStack::new();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        // (start, len, fill byte) of every live push, oldest first.
        let mut live: Vec<(*mut u8, usize, u8)> = Vec::new();
        let mut live_bytes = 0;
        for round in 0..200_000u32 {
            let grow = live.is_empty() || !next(&mut rng).is_multiple_of(3);
            if grow {
                let len = 8 * (1 + (next(&mut rng) % 600) as usize);
                let at = stack.push(len);
                let fill = round as u8;
                // SAFETY: push returned len writable bytes.
                unsafe { std::ptr::write_bytes(at, fill, len) };
                live.push((at, len, fill));
                live_bytes += len;
            } else {
                let (at, len, fill) = live.pop().unwrap();
                assert!(filled(at, len, fill), "bytes changed");
                // SAFETY: at is the start of the newest push.
                unsafe { stack.pop_to(at) };
                live_bytes -= len;
            }
            assert_eq!(
                scanned(&stack),
                live_bytes,
                "scanned bytes after round {round}"
            );
            // What the defer layer relies on: the top is the end of the
            // newest live push (a record ends at the top).
            if let Some(&(at, len, _)) = live.last() {
                assert_eq!(
                    stack.mark(),
                    at.wrapping_add(len),
                    "top after round {round}"
                );
            }
        }
        while let Some((at, len, fill)) = live.pop() {
            assert!(filled(at, len, fill));
            // SAFETY: as above.
            unsafe { stack.pop_to(at) };
        }
        assert_eq!(scanned(&stack), 0);
    }

    #[test]
    fn popping_to_an_old_mark_releases_whole_chunks() {
        let stack = RootStack::new();
        let base = stack.mark();
        let first = stack.push(8);
        // SAFETY: 8 writable bytes.
        unsafe { first.cast::<u64>().write(7) };
        let mark = stack.mark();
        for _ in 0..100_000 {
            stack.push(64);
        }
        assert_eq!(scanned(&stack), 8 + 64 * 100_000);
        // SAFETY: mark came from this stack and nothing above it is used.
        unsafe { stack.pop_to(mark) };
        assert_eq!(scanned(&stack), 8);
        // SAFETY: the first push is still live.
        assert_eq!(unsafe { first.cast::<u64>().read() }, 7);
        // Growing again reuses the spare chunk and still scans right.
        for _ in 0..1000 {
            stack.push(64);
        }
        assert_eq!(scanned(&stack), 8 + 64 * 1000);
        // SAFETY: base came from this stack.
        unsafe { stack.pop_to(base) };
        assert_eq!(scanned(&stack), 0);
        assert_eq!(stack.mark(), base);
    }

    #[test]
    fn a_push_larger_than_any_chunk_gets_a_chunk_of_its_own() {
        let stack = RootStack::new();
        let big = stack.push(3 * MAX_CHUNK);
        // SAFETY: the whole push is writable.
        unsafe { std::ptr::write_bytes(big, 1, 3 * MAX_CHUNK) };
        let small = stack.push(16);
        assert_eq!(scanned(&stack), 3 * MAX_CHUNK + 16);
        // SAFETY: LIFO pops of our own pushes.
        unsafe {
            stack.pop_to(small);
            stack.pop_to(big);
        }
        assert_eq!(scanned(&stack), 0);
    }
}

#[cfg(all(test, feature = "precise"))]
mod by_thread_tests {
    use super::*;

    /// The words `owner`'s root memory offers. (Only this thread's and the
    /// orphans' are scanned here: other tests' threads change their stacks
    /// concurrently.)
    fn words_of(owner: u64) -> Vec<usize> {
        let mut words = Vec::new();
        // SAFETY: the owner is this thread, or an exited thread (its stacks
        // are gone), or the orphans (which have no stacks).
        unsafe { by_thread::for_each_word(owner, &mut |w| words.push(w)) };
        words
    }

    const MARK: usize = 0x00DE_F6C0_0000_0001;

    #[test]
    fn a_threads_blocks_and_stacks_are_scanned_as_its_own() {
        let me = by_thread::owner();
        let block = alloc_block(64);
        // SAFETY: 64 fresh bytes.
        unsafe { block.cast::<usize>().as_ptr().add(3).write(MARK + 1) };
        let stack = RootStack::new();
        let at = stack.push(16);
        // SAFETY: 16 fresh bytes.
        unsafe { at.cast::<usize>().write(MARK + 2) };
        let mine = words_of(me);
        assert!(mine.contains(&(MARK + 1)), "block word missing");
        assert!(mine.contains(&(MARK + 2)), "stack word missing");
        // Another thread's scan does not see them.
        let other = std::thread::spawn(|| {
            let _b = alloc_block(8);
            words_of(by_thread::owner())
        })
        .join()
        .unwrap();
        assert!(!other.contains(&(MARK + 1)) && !other.contains(&(MARK + 2)));
        // Popped stack words and freed blocks are no longer offered.
        // SAFETY: LIFO pop of our own push; the block is freed once.
        unsafe {
            stack.pop_to(at);
            free_block(block);
        }
        let mine = words_of(me);
        assert!(!mine.contains(&(MARK + 1)) && !mine.contains(&(MARK + 2)));
    }

    #[test]
    fn blocks_left_at_thread_exit_become_orphans() {
        let word = MARK + 3;
        let (owner, block) = std::thread::spawn(move || {
            let block = alloc_block(8);
            // SAFETY: 8 fresh bytes.
            unsafe { block.cast::<usize>().as_ptr().write(word) };
            (by_thread::owner(), block.as_ptr() as usize)
        })
        .join()
        .unwrap();
        assert!(!words_of(owner).contains(&word));
        assert!(words_of(by_thread::ORPHANS).contains(&word));
        // Freed from another thread, an orphan is gone.
        // SAFETY: the block is live and freed once.
        unsafe { free_block(NonNull::new(block as *mut u8).unwrap()) };
        assert!(!words_of(by_thread::ORPHANS).contains(&word));
    }
}
