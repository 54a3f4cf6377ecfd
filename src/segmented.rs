//! An append-only array in chunks that never move: the storage of the
//! precise collector's handle table and type registry, and of the C tls
//! keys. It uses nothing of the crate, so every layer may use it.
//!
//! A fixed top-level array of chunk pointers (in the `static` itself, so it
//! never moves either) is filled lazily; a chunk, once published, stays
//! where it is until the process exits. A reader therefore never sees freed
//! memory, whatever the writers do (the Coex design reallocs its table under
//! its readers). Lookup is a bounds check, one acquire load of the chunk
//! pointer and an offset.
//!
//! Elements must be valid when all-zero ([`Zeroed`]): chunks come zeroed
//! from the allocator and are never initialised element by element.

use std::alloc::{alloc_zeroed, Layout};
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Types for which the all-zero bit pattern is a valid value.
///
/// # Safety
/// An all-zero `Self` must be a valid, initialised value.
pub(crate) unsafe trait Zeroed {}

// SAFETY: a null pointer is a valid AtomicPtr.
unsafe impl<T> Zeroed for AtomicPtr<T> {}
// SAFETY: 0 is a valid AtomicU64.
unsafe impl Zeroed for AtomicU64 {}
// SAFETY: 0 is a valid AtomicUsize.
unsafe impl Zeroed for AtomicUsize {}

/// `CHUNKS` chunks of `1 << BITS` elements each.
pub(crate) struct Segmented<T: Zeroed, const BITS: u32, const CHUNKS: usize> {
    chunks: [AtomicPtr<T>; CHUNKS],
    grow: Mutex<()>,
    _owns: PhantomData<T>,
}

// SAFETY: elements are only handed out as shared references, and T is
// required to be Sync; the chunk pointers are atomics.
unsafe impl<T: Zeroed + Sync, const B: u32, const C: usize> Sync for Segmented<T, B, C> {}

impl<T: Zeroed, const BITS: u32, const CHUNKS: usize> Segmented<T, BITS, CHUNKS> {
    /// Elements per chunk.
    pub(crate) const CHUNK_LEN: usize = 1 << BITS;
    /// The capacity: no index at or above it is ever valid.
    pub(crate) const CAPACITY: usize = CHUNKS << BITS;

    /// An empty array (no chunk allocated).
    pub(crate) const fn new() -> Self {
        Segmented {
            chunks: [const { AtomicPtr::new(ptr::null_mut()) }; CHUNKS],
            grow: Mutex::new(()),
            _owns: PhantomData,
        }
    }

    /// Holds off growth while the guard lives (before a fork).
    #[cfg_attr(not(feature = "precise"), allow(dead_code))] // its fork hooks
    pub(crate) fn lock_growth(&'static self) -> std::sync::MutexGuard<'static, ()> {
        self.grow.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The element at `index`, if its chunk exists.
    #[inline(always)]
    pub(crate) fn get(&self, index: usize) -> Option<&T> {
        let chunk = self.chunks.get(index >> BITS)?.load(Ordering::Acquire);
        if chunk.is_null() {
            return None;
        }
        // SAFETY: a published chunk has CHUNK_LEN initialised (zeroed)
        // elements and is never freed; the offset is masked into it.
        Some(unsafe { &*chunk.add(index & (Self::CHUNK_LEN - 1)) })
    }

    /// The element at `index`, whose chunk the caller knows exists.
    ///
    /// # Safety
    /// [`Segmented::ensure`] returned true for `index` (on any thread, with
    /// a happens-before edge to this call).
    #[inline(always)]
    pub(crate) unsafe fn get_unchecked(&self, index: usize) -> &T {
        // SAFETY: the caller guarantees the chunk was published; index is in
        // range because ensure checked it.
        unsafe {
            let chunk = self
                .chunks
                .get_unchecked(index >> BITS)
                .load(Ordering::Relaxed);
            &*chunk.add(index & (Self::CHUNK_LEN - 1))
        }
    }

    /// Makes sure the chunk holding `index` exists; false if `index` is
    /// beyond the capacity or the allocator refused the chunk.
    pub(crate) fn ensure(&self, index: usize) -> bool {
        let Some(slot) = self.chunks.get(index >> BITS) else {
            return false;
        };
        if !slot.load(Ordering::Acquire).is_null() {
            return true;
        }
        let _one_grower = self.grow.lock().unwrap_or_else(|e| e.into_inner());
        if !slot.load(Ordering::Acquire).is_null() {
            return true;
        }
        const { assert!(std::mem::size_of::<T>() > 0, "no zero-sized elements") };
        let Ok(layout) = Layout::array::<T>(Self::CHUNK_LEN) else {
            return false;
        };
        // SAFETY: the layout has a non-zero size (T is not zero-sized).
        let chunk = unsafe { alloc_zeroed(layout) }.cast::<T>();
        if chunk.is_null() {
            return false;
        }
        slot.store(chunk, Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_keep_their_address_while_the_array_grows() {
        static ARRAY: Segmented<AtomicU64, 4, 8> = Segmented::new();
        assert!(ARRAY.get(0).is_none());
        assert!(ARRAY.ensure(3));
        let first = ARRAY.get(3).unwrap() as *const AtomicU64;
        ARRAY.get(3).unwrap().store(7, Ordering::Relaxed);
        for i in 0..Segmented::<AtomicU64, 4, 8>::CAPACITY {
            assert!(ARRAY.ensure(i));
        }
        assert!(!ARRAY.ensure(Segmented::<AtomicU64, 4, 8>::CAPACITY));
        assert!(ARRAY.get(128).is_none());
        assert_eq!(ARRAY.get(3).unwrap() as *const AtomicU64, first);
        assert_eq!(ARRAY.get(3).unwrap().load(Ordering::Relaxed), 7);
    }
}
