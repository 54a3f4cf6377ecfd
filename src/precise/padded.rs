//! [`CachePadded`]: a value alone on its cache lines.
//!
//! The flags every mutator reads on every operation (the safepoint flag,
//! the barrier flag, the birth mark, the live marks, the first type slots)
//! must not share a cache line with data that other threads write (mutex
//! words, counters): each such write would cost every mutator a cache miss
//! on its next operation. 128 bytes covers adjacent-line prefetching.

use std::ops::Deref;

/// `T` aligned (and so padded) to 128 bytes.
#[repr(align(128))]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> Deref for CachePadded<T> {
    type Target = T;

    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}
