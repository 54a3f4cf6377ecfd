//! Cache-line tools: [`CachePadded`], a value alone on its cache lines,
//! and [`prefetch`], the one place that asks the processor for a line
//! ahead of time (the precise collector's handles and marking, the
//! scheduler's wake-ups of many goroutines at once).
//!
//! The flags every mutator reads on every operation (the safepoint flag,
//! the barrier flag, the birth mark, the live marks, the first type slots)
//! must not share a cache line with data that other threads write (mutex
//! words, counters): each such write would cost every mutator a cache miss
//! on its next operation. 128 bytes covers adjacent-line prefetching.

use std::ops::Deref;

/// `T` aligned (and so padded) to 128 bytes.
#[cfg_attr(not(feature = "precise"), allow(dead_code))]
#[repr(align(128))]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> Deref for CachePadded<T> {
    type Target = T;

    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Starts loading the cache line at `p` into every cache level (a hint:
/// never faults, valid for any address). A no-op off x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint with no effect on memory, valid for any
    // address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
