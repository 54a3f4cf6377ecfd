//! The scanned LIFO stack of root memory ([`RootStack`]): chunks that
//! never move, a top that only the owner moves, and marks to pop back to.
//!
//! Pushing and popping take no lock and allocate only when a chunk
//! boundary is crossed. The collectors read a stack through its
//! [`StackHead`] (the current chunk and top, published with ordered
//! stores so that every intermediate state is scannable, see
//! [`StackHead::for_each_range`]); they learn of it through the hooks of
//! `roots` ([`Collector`]): created, dropped, and before a chunk that a
//! scan may have loaded is freed. This file knows no collector.

use super::{Collector, Collectors};
use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Bytes in the first chunk of a stack (small: every goroutine that defers
/// has a stack); later chunks double up to [`MAX_CHUNK`], so a million
/// records take a few dozen chunks.
const FIRST_CHUNK: usize = 1 << 10;
const MAX_CHUNK: usize = 1 << 20;
/// Chunks this large (with their header) are mappings of their own,
/// populated when made: a deep stack fills every page of them, and one
/// call that maps and fills 256 pages costs less than 256 page faults
/// (what faulting them in one by one as records are pushed costs, in a
/// process that has not run that deep before).
const MAPPED_CHUNK: usize = 256 << 10;
/// Emptied chunks of [`MAX_CHUNK`] bytes kept for the next deep stack
/// (any thread's), at most this many: a program that runs deep again and
/// again reuses pages already in memory instead of mapping and filling
/// them again.
const KEPT_CHUNKS: usize = 32;
/// The kept chunks (null: an empty place). Atomics only, so that a fork
/// in the middle of a take or a put leaves the child a usable list.
static KEPT: [AtomicPtr<Chunk>; KEPT_CHUNKS] =
    [const { AtomicPtr::new(ptr::null_mut()) }; KEPT_CHUNKS];

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
        let kept = if size == MAX_CHUNK {
            // A swap takes a kept chunk whole: no other thread reads it
            // once it is out of its place.
            KEPT.iter()
                .find_map(|k| {
                    (!k.load(Ordering::Relaxed).is_null())
                        .then(|| k.swap(ptr::null_mut(), Ordering::Acquire))
                        .filter(|c| !c.is_null())
                })
                .unwrap_or(ptr::null_mut())
        } else {
            ptr::null_mut()
        };
        let raw = if !kept.is_null() {
            kept
        } else if total >= MAPPED_CHUNK {
            // SAFETY: a new private anonymous mapping; nothing else is
            // touched.
            let p = unsafe {
                libc::mmap(
                    ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                ptr::null_mut()
            } else {
                p.cast::<Chunk>()
            }
        } else {
            // SAFETY: plain allocation; the header is written before use.
            unsafe { libc::malloc(total) }.cast::<Chunk>()
        };
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
    /// `this` is a live chunk that nothing references any more (and no
    /// scan still reads: see [`RootStack::free_chunk`]).
    unsafe fn free(this: *mut Chunk) {
        // SAFETY: the caller guarantees that the chunk is live and its own.
        let total = std::mem::size_of::<Chunk>() + unsafe { (*this).size };
        if total >= MAPPED_CHUNK {
            if total == std::mem::size_of::<Chunk>() + MAX_CHUNK
                && KEPT.iter().any(|k| {
                    k.compare_exchange(ptr::null_mut(), this, Ordering::Release, Ordering::Relaxed)
                        .is_ok()
                })
            {
                return;
            }
            // SAFETY: the chunk is the whole mapping `new` made.
            unsafe { libc::munmap(this.cast(), total) };
        } else {
            // SAFETY: the caller guarantees exclusive ownership.
            unsafe { libc::free(this.cast()) }
        }
    }
}

/// The part of a stack the collectors read. Heap-allocated so its address
/// is stable while they know of it.
pub(crate) struct StackHead {
    /// The current chunk.
    chunk: AtomicPtr<Chunk>,
    /// The first free byte of the current chunk.
    top: AtomicPtr<u8>,
    /// What the collectors keep for the stack (their lists' links, its
    /// owner), changed only by their hooks.
    collectors: <Collectors as Collector>::Stack,
}

/// A segmented LIFO region of root memory owned by one thread.
///
/// Pushing returns uninitialised, 8-byte-aligned space below the new top;
/// whatever is written there is scanned until it is popped. A push never
/// moves earlier data, so pointers into the stack stay valid until popped.
pub(crate) struct RootStack {
    head: NonNull<StackHead>,
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
            collectors: Default::default(),
        }));
        // SAFETY: Box::into_raw never returns null.
        let head = unsafe { NonNull::new_unchecked(head) };
        // SAFETY: a new, live head at a stable address, known to no
        // collector yet; its state is the collectors' own.
        unsafe { Collectors::stack_created(head, &raw mut (*head.as_ptr()).collectors) };
        RootStack {
            head,
            // SAFETY: chunk is live.
            limit: Cell::new(unsafe { Chunk::end(chunk) }),
            spare: Cell::new(ptr::null_mut()),
            _not_send: PhantomData,
        }
    }

    /// Gives the (empty) stack up to a pool of the calling thread's; a
    /// later context takes it over with [`RootStack::adopt`].
    ///
    /// # Safety
    /// The stack is not used until it is adopted.
    pub(crate) unsafe fn release(&self) {
        debug_assert!(self.is_empty(), "a released root stack holds records");
        // SAFETY: the head is live; its state is the collectors' own.
        unsafe { Collectors::stack_released(self.head, &raw mut (*self.head.as_ptr()).collectors) };
    }

    /// The calling context takes over the stack.
    ///
    /// # Safety
    /// The stack was released, and not adopted since.
    pub(crate) unsafe fn adopt(&self) {
        // SAFETY: as in release.
        unsafe { Collectors::stack_adopted(self.head, &raw mut (*self.head.as_ptr()).collectors) };
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
                unsafe { self.free_chunk(spare) };
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
                self.free_chunk(spare);
                self.spare.set(chunk);
            } else {
                self.free_chunk(chunk);
            }
        }
    }

    /// Frees a chunk of this stack that is no longer linked from its head.
    /// A scan that loaded it before it was unlinked may still be reading
    /// it (the precise collector scans a thread in native code on its
    /// behalf while the thread goes on pushing and popping): the
    /// collectors wait for such scans first.
    ///
    /// # Safety
    /// `chunk` is a chunk of this stack that it no longer links.
    unsafe fn free_chunk(&self, chunk: *mut Chunk) {
        let head = self.head.as_ptr();
        // SAFETY: the head is live and known to the collectors until Drop.
        unsafe {
            Collectors::before_chunk_freed(self.head, &raw mut (*head).collectors);
            Chunk::free(chunk);
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
    #[allow(dead_code)] // no collector reads a stack under nogc
    pub(crate) unsafe fn for_each_range(&self, mut f: impl FnMut(*mut u8, *mut u8)) {
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
        // SAFETY: the head is live; its state is the collectors' own.
        unsafe { Collectors::stack_dropped(self.head, &raw mut (*self.head.as_ptr()).collectors) };
        // SAFETY: no collector knows of the head any more, so nothing else
        // reads it or its chunks; we own them all.
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
