//! The handle table: what a [`Handle`] is and how it resolves to an object.
//!
//! # Format
//!
//! A handle is a non-zero `u64`; 0 is null. The low [`INDEX_BITS`] (40)
//! bits hold the table index plus one, the high 24 bits a generation,
//! which starts at 1 and skips 0 when it wraps: every handle is at least
//! 2^40, so the small integers that fill root memory (flags, counts,
//! lengths), read there as candidate handles, never name an object. The
//! table entry at an index holds the address of the object's header (null
//! if the index was never used), and the header holds the object's full
//! handle value. Validating a handle is: index in range, chunk allocated,
//! entry non-null, `header.handle == handle` (one compare), cheap enough for
//! every access in release builds. A handle that fails only the compare is
//! stale ([`Error::StaleHandle`]): its object was freed, and its cell may
//! hold another object by now. A generation wraps after 2^24 reuses of one
//! index, so a stale handle kept that long could alias a new object. That
//! is the only way a stale handle escapes detection.
//!
//! Freeing an object therefore does not touch the table: the sweep
//! rewrites the header's handle word (which it reads anyway) as a free
//! cell's, and the entry goes on pointing at the cell, whose header no
//! longer matches. Between the end
//! of the marking that found an object dead and the (lazy) sweep of its
//! cell, its header still holds its handle; validation also requires the
//! object's mark to be the last completed cycle's or the running one's
//! ([`marking::is_live_mark`]), which a dead object's is not, so its
//! handle is stale from the end of marking on. Small-object cells stay
//! mapped for the life of the process, so the entry can always be read
//! through. A large object's memory is returned to the allocator, so its
//! entry is pointed at a static tombstone header first.
//!
//! # Storage
//!
//! Entries live in a [`Segmented`] array: 2^13 chunks of 2^17 entries
//! (1 MiB each), allocated on demand and never moved or freed, so a reader
//! on any thread can never see freed table memory. Capacity: 2^30 handles.
//!
//! # Handles bound to cells
//!
//! Every cell of a small-object block is *bound* to an index of its own
//! ([`bind`], when the block is laid out for its size class): the entry
//! points at the cell for as long as the layout lasts, and a free cell's
//! header holds the handle value its next object takes (see
//! `heap/object.rs`). An allocation takes the value its cell holds; the
//! sweep that frees the cell leaves the next generation there. So neither
//! allocating nor freeing a small object touches the table or any list of
//! handles, and a freed handle is reused only by the next object in the
//! same cell, after the cycle that freed it (cells are swept only then).
//! A free block laid out for another class, or given back to the system,
//! is unbound first ([`unbind`]): its entries point at the tombstone, and
//! the values (never handed out) go to the pool.
//!
//! # Large objects
//!
//! A large object takes a handle value from its thread's cache
//! ([`LocalHandles`]: a `Vec` pop, no atomics), refilled in batches of
//! [`BATCH`] from the global pool or, when the pool is empty, from
//! never-used indices. Its handle, freed by a collection, goes with its
//! generation advanced to that cycle's pending list ([`Freed`]) and reaches
//! the pool only through [`release`], which the collector calls when the
//! cycle that freed it has completed.
//!
//! Publication: an allocating thread writes the header (the handle last,
//! release); a large object's entry is written after it (release), a
//! cell's was written when the cell was bound, before its header named any
//! handle. Readers load the entry, then the header's handle (both acquire).

use super::error::{Error, Result};
use super::heap::Header;
use super::marking;
use crate::cache::{prefetch, CachePadded};
use crate::segmented::Segmented;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bits of a handle that hold the table index plus one.
pub(crate) const INDEX_BITS: u32 = 40;
pub(crate) const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
/// Added to a handle to advance its generation (wrapping, index intact).
const NEXT_GENERATION: u64 = 1 << INDEX_BITS;

/// Handles moved between a thread cache and the pool at once.
pub(crate) const BATCH: usize = 4096;

type Table = Segmented<AtomicPtr<Header>, 17, { 1 << 13 }>;
/// The number of table indices there can be.
pub(crate) const MAX_INDEX: usize = Table::CAPACITY;
static TABLE: CachePadded<Table> = CachePadded(Table::new());

/// Where the entry of a freed large object points: a header that matches
/// no handle.
static TOMBSTONE: Header = Header::free();

/// A reference to an object of the precise heap: a non-zero 64-bit value
/// (table index and generation), valid until the object is collected.
///
/// A handle says nothing about liveness by itself: keep it rooted (on the
/// shadow stack with [`root`](crate::precise::root), in a
/// [`GlobalRoot`](crate::precise::GlobalRoot)) or stored in a reachable
/// object across every safepoint, or it may become stale.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Handle(NonZeroU64);

impl Handle {
    /// The handle with this raw value; [`Error::NullHandle`] for 0. Whether
    /// it names a live object is checked when it is used.
    #[inline]
    pub const fn from_raw(raw: u64) -> Result<Handle> {
        match NonZeroU64::new(raw) {
            Some(raw) => Ok(Handle(raw)),
            None => Err(Error::NullHandle),
        }
    }

    /// The handle with this raw value, known to be non-zero.
    ///
    /// # Safety
    /// `raw` is not 0.
    #[inline(always)]
    pub(crate) const unsafe fn from_raw_unchecked(raw: u64) -> Handle {
        // SAFETY: per the caller.
        Handle(unsafe { NonZeroU64::new_unchecked(raw) })
    }

    /// The raw value (what the C ABI passes around).
    #[inline]
    pub const fn to_raw(self) -> u64 {
        self.0.get()
    }

    /// The raw value of a nullable handle: 0 for `None`.
    #[inline]
    pub fn raw_or_null(handle: Option<Handle>) -> u64 {
        handle.map_or(0, Handle::to_raw)
    }

    /// The table index this handle names.
    pub const fn index(self) -> u64 {
        (self.0.get() & INDEX_MASK).wrapping_sub(1)
    }

    /// The handle's generation: how many times its index was reused before
    /// (modulo 2^24).
    pub const fn generation(self) -> u32 {
        (self.0.get() >> INDEX_BITS) as u32
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({}#{})", self.index(), self.generation())
    }
}

/// The entry for a raw handle value, if the value can name one.
#[inline(always)]
fn entry(raw: u64) -> Option<&'static AtomicPtr<Header>> {
    // A value with index bits 0 wraps to an index far above the capacity.
    TABLE.get((raw & INDEX_MASK).wrapping_sub(1) as usize)
}

/// Resolves a handle to its object's header, or says exactly why not.
#[inline(always)]
pub(crate) fn resolve(handle: Handle) -> Result<*mut Header> {
    let raw = handle.to_raw();
    let Some(e) = entry(raw) else {
        return Err(Error::InvalidHandle);
    };
    let hdr = e.load(Ordering::Acquire);
    if hdr.is_null() {
        return Err(Error::InvalidHandle);
    }
    // SAFETY: a non-null entry points to a small-object cell (never
    // unmapped), a live large object, or the tombstone. The mark is read
    // only once the handle matches (which a free cell's word, with its
    // free bit, never does), so it is this object's.
    let live = unsafe {
        (*hdr).handle.load(Ordering::Acquire) == raw
            && marking::is_live_mark((*hdr).mark.load(Ordering::Relaxed))
    };
    if live {
        Ok(hdr)
    } else {
        Err(Error::StaleHandle)
    }
}

/// Resolves an arbitrary word that may or may not be a live handle (root
/// memory, fields written through raw pointers): any value is safe. The
/// marker does the same in two steps ([`entry_target`], [`names_object`]).
#[cfg(test)]
pub(crate) fn resolve_candidate(raw: u64) -> Option<*mut Header> {
    let hdr = entry(raw)?.load(Ordering::Acquire);
    // SAFETY: as in resolve; a value that has an entry has neither the
    // free bit nor is 0, so a free cell or a tombstone never matches.
    (!hdr.is_null() && unsafe { (*hdr).handle.load(Ordering::Acquire) } == raw).then_some(hdr)
}

/// The header the entry of `raw` points to, unchecked: the first half of
/// [`resolve_candidate`], for callers that prefetch the header before
/// finishing with [`names_object`].
#[inline(always)]
pub(crate) fn entry_target(raw: u64) -> Option<*mut Header> {
    let hdr = entry(raw)?.load(Ordering::Acquire);
    (!hdr.is_null()).then_some(hdr)
}

/// Whether `hdr` (from [`entry_target`]) is the live object of `raw`.
#[inline(always)]
pub(crate) fn names_object(raw: u64, hdr: *mut Header) -> bool {
    // SAFETY: as in resolve; a value that has an entry has neither the
    // free bit nor is 0, so a free cell or a tombstone never matches.
    unsafe { (*hdr).handle.load(Ordering::Acquire) == raw }
}

/// Starts loading the table entry `raw` would resolve through (a hint).
#[inline(always)]
pub(crate) fn prefetch_entry(raw: u64) {
    let index = (raw & INDEX_MASK).wrapping_sub(1) as usize;
    if let Some(e) = TABLE.get(index) {
        prefetch(e);
    }
}

/// Points the entry of `handle` (taken from a [`LocalHandles`]) at `hdr`,
/// whose header already holds `handle`.
///
/// # Safety
/// `handle` came from [`LocalHandles::pop`] on this thread and has not been
/// published since; `hdr` is an initialised header.
#[inline(always)]
pub(crate) unsafe fn publish(handle: u64, hdr: *mut Header) -> Handle {
    let index = ((handle & INDEX_MASK) - 1) as usize;
    // SAFETY: indices in a cache were ensured by refill (through the pool
    // mutex or this thread's own refill, so happens-before holds).
    unsafe { TABLE.get_unchecked(index) }.store(hdr, Ordering::Release);
    // SAFETY: the index bits of a cached handle are index + 1 >= 1.
    Handle(unsafe { NonZeroU64::new_unchecked(handle) })
}

/// Whether the entry of `handle` points at `hdr` (a consistency check for
/// debug builds).
pub(crate) fn names(handle: u64, hdr: *mut Header) -> bool {
    entry(handle).is_some_and(|e| e.load(Ordering::Relaxed) == hdr)
}

/// Binds `cells.len()` handle values (next generation, never handed out)
/// to the free cells `cells` (whose headers do not name them yet), one each,
/// from the pool or never-used indices: `init(cell, value)` writes the
/// cell's free header, then the entry of the value is pointed at the cell.
/// On an error no cell is bound.
///
/// # Safety
/// Every cell is a free cell owned by the caller.
pub(crate) unsafe fn bind(
    cells: impl ExactSizeIterator<Item = *mut Header>,
    mut init: impl FnMut(*mut Header, u64),
) -> Result<()> {
    let n = cells.len();
    let mut values = take(n)?;
    for (cell, value) in cells.zip(values.drain(..)) {
        init(cell, value);
        let index = ((value & INDEX_MASK) - 1) as usize;
        // SAFETY: `take` ensured the index's chunk.
        unsafe { TABLE.get_unchecked(index) }.store(cell, Ordering::Release);
    }
    give_back_spare(values);
    Ok(())
}

/// Unbinds the free cells of a block about to be laid out anew or given
/// back to the system: the entry of each value (what the cell would have
/// handed out next) points at the tombstone, and the values go back to the
/// pool. Nobody holds them: they were never handed out.
pub(crate) fn unbind(values: impl Iterator<Item = u64>) {
    let mut batch = Vec::new();
    for value in values {
        if let Some(e) = entry(value) {
            e.store(std::ptr::addr_of!(TOMBSTONE).cast_mut(), Ordering::Release);
        }
        batch.push(value);
    }
    release(Freed { handles: batch });
}

/// `n` handle values that nobody holds (next generation), from the pool's
/// batches or never-used indices (their table chunks ensured).
fn take(n: usize) -> Result<Vec<u64>> {
    let mut pool = pool();
    let mut out = pool.spare.pop().unwrap_or_default();
    while out.len() < n {
        let Some(mut batch) = pool.batches.pop() else {
            break;
        };
        let want = n - out.len();
        if batch.len() > want {
            out.extend(batch.drain(batch.len() - want..));
            pool.batches.push(batch);
        } else {
            out.append(&mut batch);
            if pool.spare.len() < MAX_SPARE {
                pool.spare.push(batch);
            }
        }
    }
    if out.len() < n {
        let start = FRESH.load(Ordering::Relaxed);
        let end = start + (n - out.len());
        let failed = if end > Table::CAPACITY {
            Some(Error::OutOfHandles)
        } else if !TABLE.ensure(start) || !TABLE.ensure(end - 1) {
            Some(Error::OutOfMemory)
        } else {
            None
        };
        if let Some(e) = failed {
            if !out.is_empty() {
                pool.batches.push(out);
            }
            return Err(e);
        }
        FRESH.store(end, Ordering::Relaxed);
        out.extend((start as u64 + 1..end as u64 + 1).map(|i| i + NEXT_GENERATION));
    }
    Ok(out)
}

/// Keeps an emptied vector for the next [`take`].
fn give_back_spare(values: Vec<u64>) {
    if values.capacity() >= BATCH {
        let mut pool = pool();
        if pool.spare.len() < MAX_SPARE {
            pool.spare.push(values);
        }
    }
}

/// Handles freed by one cycle, waiting for it to complete.
pub(crate) struct Freed {
    handles: Vec<u64>,
}

impl Freed {
    pub(crate) fn new() -> Freed {
        Freed {
            handles: Vec::new(),
        }
    }

    /// Frees `handle`, the handle of an object the collector is freeing: it
    /// becomes reusable, with the next generation, at [`release`].
    #[inline(always)]
    pub(crate) fn push(&mut self, handle: u64) {
        self.handles.push(next_generation(handle));
    }
}

/// The value a freed `handle` is reused with: same index, next generation,
/// skipping generation 0 when it wraps.
#[inline(always)]
pub(crate) fn next_generation(handle: u64) -> u64 {
    let next = handle.wrapping_add(NEXT_GENERATION);
    if next < NEXT_GENERATION {
        next + NEXT_GENERATION
    } else {
        next
    }
}

/// Frees the handle of a large object whose memory is about to be released:
/// its entry must stop pointing there.
pub(crate) fn free_large(handle: u64, freed: &mut Freed) {
    if let Some(e) = entry(handle) {
        e.store(std::ptr::addr_of!(TOMBSTONE).cast_mut(), Ordering::Release);
    }
    freed.push(handle);
}

struct Pool {
    batches: Vec<Vec<u64>>,
    /// Emptied batch vectors, kept for [`take`] to fill again: a batch is
    /// filled on one thread and emptied on another, and freeing it there
    /// would make the allocator trim and refault the first one's arena.
    spare: Vec<Vec<u64>>,
}

/// Emptied batch vectors kept at most.
const MAX_SPARE: usize = 256;

static POOL: Mutex<Pool> = Mutex::new(Pool {
    batches: Vec::new(),
    spare: Vec::new(),
});
/// Indices below this have been handed out at least once.
static FRESH: AtomicUsize = AtomicUsize::new(0);

/// Before a fork, after the heap (the lock order): the pool and the
/// table's growth lock, kept until after the fork.
pub(super) fn lock_for_fork() {
    crate::gc::fork::held::keep(pool());
    crate::gc::fork::held::keep(TABLE.lock_growth());
}

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes the handles of a completed cycle available for reuse.
pub(crate) fn release(freed: Freed) {
    let mut handles = freed.handles;
    if handles.is_empty() {
        return;
    }
    let mut pool = pool();
    while handles.len() > BATCH {
        let rest = handles.split_off(handles.len() - BATCH);
        pool.batches.push(rest);
    }
    pool.batches.push(handles);
}

/// How many table indices have ever been handed out (the table's high-water
/// mark: reuse keeps it flat).
pub(crate) fn capacity_used() -> usize {
    FRESH.load(Ordering::Relaxed)
}

/// How many allocations ahead [`LocalHandles::pop`] prefetches.
const PREFETCH_AHEAD: usize = 8;

/// A thread's cache of free handle values (next generation included).
pub(crate) struct LocalHandles {
    free: Vec<u64>,
}

impl LocalHandles {
    pub(crate) const fn new() -> LocalHandles {
        LocalHandles { free: Vec::new() }
    }

    /// A free handle value, if the cache has one.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<u64> {
        let h = self.free.pop();
        // An allocation writes its handle's table entry. Freed handles come
        // back in no particular index order, so that is often a miss: start
        // fetching the line of the handle PREFETCH_AHEAD allocations ahead
        // (one ahead is too close to hide a miss behind ~10 ns allocations).
        if let Some(&next) = self.free.get(self.free.len().wrapping_sub(PREFETCH_AHEAD)) {
            let index = ((next & INDEX_MASK) - 1) as usize;
            // SAFETY: every index in a cache was ensured by refill (through
            // the pool mutex or this thread's own refill), as in publish.
            prefetch(unsafe { TABLE.get_unchecked(index) });
        }
        h
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.free.is_empty()
    }

    /// Fills an empty cache from the pool, or with never-used indices.
    #[cold]
    pub(crate) fn refill(&mut self) -> Result<()> {
        debug_assert!(self.free.is_empty());
        let mut pool = pool();
        if let Some(batch) = pool.batches.pop() {
            let empty = std::mem::replace(&mut self.free, batch);
            if pool.spare.len() < MAX_SPARE && empty.capacity() >= BATCH {
                pool.spare.push(empty);
            }
            return Ok(());
        }
        let start = FRESH.load(Ordering::Relaxed);
        let end = (start + BATCH).min(Table::CAPACITY);
        if start == end {
            return Err(Error::OutOfHandles);
        }
        if !TABLE.ensure(start) || !TABLE.ensure(end - 1) {
            return Err(Error::OutOfMemory);
        }
        FRESH.store(end, Ordering::Relaxed);
        drop(pool);
        // Popped from the back: hand out ascending indices, generation 1.
        self.free.extend(
            (start as u64 + 1..end as u64 + 1)
                .rev()
                .map(|i| i + NEXT_GENERATION),
        );
        Ok(())
    }

    /// Returns the cached handles to the pool (thread exit). They were never
    /// published since they were last released, so no cycle is involved.
    pub(crate) fn give_back(&mut self) {
        let batch = std::mem::take(&mut self.free);
        if !batch.is_empty() {
            pool().batches.push(batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, AtomicU8};

    #[test]
    fn null_and_garbage_values_never_resolve() {
        assert_eq!(Handle::from_raw(0), Err(Error::NullHandle));
        for raw in [1u64 << 40, u64::MAX, INDEX_MASK, 0xdead_beef_0000_0000] {
            let h = Handle::from_raw(raw).unwrap();
            assert_eq!(resolve(h), Err(Error::InvalidHandle), "{raw:#x}");
            assert_eq!(resolve_candidate(raw), None);
        }
        assert_eq!(resolve_candidate(0), None);
    }

    /// A leaked header holding `handle`, as the heap would write it.
    fn header(handle: u64) -> *mut Header {
        let h = Box::leak(Box::new(Header::free()));
        h.handle = AtomicU64::new(handle);
        h.mark = AtomicU8::new(marking::live_mark());
        h
    }

    #[test]
    #[serial_test::serial(precise)]
    fn freed_handles_are_reused_only_after_release_and_with_a_new_generation() {
        let mut cache = LocalHandles::new();
        let take = |cache: &mut LocalHandles| loop {
            if let Some(h) = cache.pop() {
                break h;
            }
            cache.refill().unwrap();
        };
        let first: Vec<(Handle, *mut Header)> = (0..3 * BATCH)
            .map(|_| {
                let raw = take(&mut cache);
                let hdr = header(raw);
                // SAFETY: a fresh handle from our cache, its header ready.
                (unsafe { publish(raw, hdr) }, hdr)
            })
            .collect();
        let mut freed = Freed::new();
        for (h, hdr) in &first {
            assert_eq!(resolve(*h), Ok(*hdr));
            // What the sweep does: clear the header, pend the handle.
            // SAFETY: our own leaked header.
            unsafe { (**hdr).handle.store(0, Ordering::Relaxed) };
            freed.push(h.to_raw());
            assert_eq!(resolve(*h), Err(Error::StaleHandle));
        }
        // Before release, a new cache never sees a pending index.
        cache.give_back();
        let mut other = LocalHandles::new();
        let mut during: Vec<u64> = (0..4 * BATCH).map(|_| take(&mut other)).collect();
        for raw in &during {
            let i = Handle::from_raw(*raw).unwrap().index();
            assert!(
                first.iter().all(|(h, _)| h.index() != i),
                "index {i} reused before its cycle ended"
            );
        }
        release(freed);
        let after: Vec<u64> = (0..4 * BATCH).map(|_| take(&mut other)).collect();
        let (reused, unused): (Vec<u64>, Vec<u64>) = after.iter().partition(|raw| {
            let i = Handle::from_raw(**raw).unwrap().index();
            first.iter().any(|(h, _)| h.index() == i)
        });
        assert!(!reused.is_empty(), "released indices were not reused");
        for raw in reused {
            let hdr = header(raw);
            // SAFETY: raw came from our cache.
            let h = unsafe { publish(raw, hdr) };
            let (old, _) = first.iter().find(|(o, _)| o.index() == h.index()).unwrap();
            assert_ne!(h, *old, "same value handed out twice");
            assert_eq!(h.generation(), old.generation() + 1);
            assert_eq!(resolve(*old), Err(Error::StaleHandle));
            assert_eq!(resolve(h), Ok(hdr));
            let mut f = Freed::new();
            // SAFETY: our own leaked header.
            unsafe { (*hdr).handle.store(0, Ordering::Relaxed) };
            f.push(raw);
            release(f);
        }
        // Handles never published go back as they are.
        during.extend(unused);
        other.free.extend(during);
        other.give_back();
    }
}
