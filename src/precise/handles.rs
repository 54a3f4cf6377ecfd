//! The handle table: what a [`Handle`] is and how it resolves to an object.
//!
//! # Format
//!
//! A handle is a non-zero `u64`; 0 is null. The low [`INDEX_BITS`] (40)
//! bits hold the table index plus one, the high 24 bits a generation. A
//! table [`Entry`] holds the handle value that is currently live at its
//! index (or, while free, the next generation with index bits 0) and the
//! object's header address. Validating a handle is: index in range, chunk
//! allocated, `entry.word == handle` (one compare), which is cheap enough
//! to do on every access in release builds. A handle that fails only the
//! compare is stale ([`Error::StaleHandle`]); a generation wraps after 2^24
//! reuses of one index (skipping 0), so a stale handle kept that long could
//! alias a new object. That is the only way a stale handle escapes detection.
//!
//! # Storage
//!
//! Entries live in a [`Segmented`] array: 2^14 chunks of 2^16 entries
//! (1 MiB each), allocated on demand and never moved or freed, so a reader
//! on any thread can never see freed table memory. Capacity: 2^30 handles.
//!
//! # Allocation and reuse
//!
//! Each thread takes handles from its own cache ([`LocalHandles`]: a
//! `Vec` pop, no atomics), refilled in batches of [`BATCH`] from a global
//! pool or, when the pool is empty, from never-used indices. A handle freed
//! by a sweep goes to that cycle's pending list ([`Freed`]) and reaches the
//! pool only through [`release`], which the collector calls when the cycle
//! that freed it has completed; then its entry holds a new generation.
//!
//! Entry publication: an allocating thread writes `obj` then `word`
//! (release); readers load `word` (acquire) then `obj`.

use super::error::{Error, Result};
use super::heap::Header;
use super::segmented::{Segmented, Zeroed};
use std::fmt;
use std::num::NonZeroU64;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bits of a handle that hold the table index plus one.
pub(crate) const INDEX_BITS: u32 = 40;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
/// Generations are 24 bits; 0 is only ever the first.
const GEN_LIMIT: u64 = 1 << (64 - INDEX_BITS);

/// Handles moved between a thread cache and the pool at once.
pub(crate) const BATCH: usize = 256;

type Table = Segmented<Entry, 16, { 1 << 14 }>;
static TABLE: Table = Table::new();

/// One table slot. 16-byte aligned so that an entry never straddles a
/// cache line.
#[repr(C, align(16))]
pub(crate) struct Entry {
    /// The live handle at this index, or `next_generation << 40` while free
    /// (0 if never used).
    word: AtomicU64,
    /// The object's header while live, null while free.
    obj: AtomicPtr<Header>,
}

// SAFETY: an all-zero Entry is a never-used entry (two zeroed atomics).
unsafe impl Zeroed for Entry {}

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

    /// The handle's generation: how many times its index was reused before.
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
fn entry(raw: u64) -> Option<&'static Entry> {
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
    let word = e.word.load(Ordering::Acquire);
    if word == raw {
        Ok(e.obj.load(Ordering::Relaxed))
    } else {
        Err(mismatch(word))
    }
}

#[cold]
fn mismatch(word: u64) -> Error {
    if word == 0 {
        Error::InvalidHandle
    } else {
        Error::StaleHandle
    }
}

/// Resolves an arbitrary word that may or may not be a live handle (root
/// memory, fields written through raw pointers): any value is safe.
#[inline(always)]
pub(crate) fn resolve_candidate(raw: u64) -> Option<*mut Header> {
    let e = entry(raw)?;
    if e.word.load(Ordering::Acquire) == raw && raw != 0 {
        Some(e.obj.load(Ordering::Relaxed))
    } else {
        None
    }
}

/// Makes the entry at `index` (taken from a [`LocalHandles`]) name `obj`
/// and returns the new handle.
///
/// # Safety
/// `index` came from [`LocalHandles::pop`] on this thread and has not been
/// published since; `obj` is an initialised header.
#[inline(always)]
pub(crate) unsafe fn publish(index: u32, obj: *mut Header) -> Handle {
    // SAFETY: indices in a cache were ensured by refill (through the pool
    // mutex or this thread's own refill, so happens-before holds).
    let e = unsafe { TABLE.get_unchecked(index as usize) };
    let generation = e.word.load(Ordering::Relaxed) & !INDEX_MASK;
    let raw = generation | (index as u64 + 1);
    e.obj.store(obj, Ordering::Relaxed);
    e.word.store(raw, Ordering::Release);
    // SAFETY: the index bits are index + 1 >= 1.
    Handle(unsafe { NonZeroU64::new_unchecked(raw) })
}

/// Whether the live entry at `index` names the object at `hdr` (a
/// consistency check for debug builds).
pub(crate) fn names(index: u32, hdr: *mut Header) -> bool {
    TABLE.get(index as usize).is_some_and(|e| {
        e.word.load(Ordering::Relaxed) & INDEX_MASK == index as u64 + 1
            && e.obj.load(Ordering::Relaxed) == hdr
    })
}

/// Handles freed by one cycle, waiting for it to complete.
pub(crate) struct Freed {
    indices: Vec<u32>,
}

impl Freed {
    pub(crate) fn new() -> Freed {
        Freed {
            indices: Vec::new(),
        }
    }

    /// How many handles this cycle freed.
    pub(crate) fn len(&self) -> usize {
        self.indices.len()
    }
}

/// Frees the live entry at `index`: its handle becomes stale at once, and
/// the index waits in `freed` until [`release`].
///
/// # Safety
/// `index` is a live entry whose object is being freed by the collector.
pub(crate) unsafe fn free(index: u32, freed: &mut Freed) {
    // SAFETY: the caller guarantees the entry is live, so its chunk exists.
    let e = unsafe { TABLE.get_unchecked(index as usize) };
    let word = e.word.load(Ordering::Relaxed);
    debug_assert_eq!(word & INDEX_MASK, index as u64 + 1, "freeing a free handle");
    let mut generation = (word >> INDEX_BITS) + 1;
    if generation == GEN_LIMIT {
        generation = 1;
    }
    e.word.store(generation << INDEX_BITS, Ordering::Release);
    e.obj.store(ptr::null_mut(), Ordering::Relaxed);
    freed.indices.push(index);
}

struct Pool {
    batches: Vec<Vec<u32>>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    batches: Vec::new(),
});
/// Indices below this have been handed out at least once.
static FRESH: AtomicUsize = AtomicUsize::new(0);

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes the handles of a completed cycle available for reuse.
pub(crate) fn release(freed: Freed) {
    let mut indices = freed.indices;
    if indices.is_empty() {
        return;
    }
    let mut pool = pool();
    while indices.len() > BATCH {
        let rest = indices.split_off(indices.len() - BATCH);
        pool.batches.push(rest);
    }
    pool.batches.push(indices);
}

/// How many table indices have ever been handed out (the table's high-water
/// mark: reuse keeps it flat).
pub(crate) fn capacity_used() -> usize {
    FRESH.load(Ordering::Relaxed)
}

/// A thread's cache of free handle indices.
pub(crate) struct LocalHandles {
    free: Vec<u32>,
}

impl LocalHandles {
    pub(crate) const fn new() -> LocalHandles {
        LocalHandles { free: Vec::new() }
    }

    /// A free index, if the cache has one.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        self.free.pop()
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
            drop(pool);
            self.free = batch;
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
        // Popped from the back: hand out ascending indices.
        self.free.extend((start as u32..end as u32).rev());
        Ok(())
    }

    /// Returns the cached indices to the pool (thread exit). They were never
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

    #[test]
    #[serial_test::serial(precise)]
    fn freed_handles_are_reused_only_after_release_and_with_a_new_generation() {
        let dummy = 0x1000 as *mut Header;
        let mut cache = LocalHandles::new();
        let take = |cache: &mut LocalHandles| loop {
            if let Some(i) = cache.pop() {
                break i;
            }
            cache.refill().unwrap();
        };
        let first: Vec<Handle> = (0..3 * BATCH)
            // SAFETY: fresh indices from our cache; dummy is never read.
            .map(|_| unsafe { publish(take(&mut cache), dummy) })
            .collect();
        let mut freed = Freed::new();
        for h in &first {
            // SAFETY: each entry is live and only this test knows it.
            unsafe { free(h.index() as u32, &mut freed) };
            assert_eq!(resolve(*h), Err(Error::StaleHandle));
        }
        // Before release, a new cache never sees a pending index.
        cache.give_back();
        let mut other = LocalHandles::new();
        let mut during: Vec<u32> = (0..4 * BATCH).map(|_| take(&mut other)).collect();
        for i in &during {
            assert!(
                first.iter().all(|h| h.index() != *i as u64),
                "index {i} reused before its cycle ended"
            );
        }
        release(freed);
        let after: Vec<u32> = (0..4 * BATCH).map(|_| take(&mut other)).collect();
        let (reused, unused): (Vec<u32>, Vec<u32>) = after
            .iter()
            .partition(|i| first.iter().any(|h| h.index() == **i as u64));
        assert!(!reused.is_empty(), "released indices were not reused");
        for i in reused {
            // SAFETY: i came from our cache.
            let h = unsafe { publish(i, dummy) };
            let old = first.iter().find(|o| o.index() == i as u64).unwrap();
            assert_ne!(h, *old, "same value handed out twice");
            assert_eq!(h.generation(), old.generation() + 1);
            assert_eq!(resolve(*old), Err(Error::StaleHandle));
            let mut f = Freed::new();
            // SAFETY: just published by us.
            unsafe { free(i, &mut f) };
            release(f);
        }
        // Indices never published go back as they are.
        during.extend(unused);
        other.free.extend(during);
        other.give_back();
    }
}
