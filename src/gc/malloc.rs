//! The `nogc` backend: malloc and free, nothing is collected or registered.
//!
//! Memory from every kind is plain malloc memory and lives until [`free`];
//! `collect`, finalizers and thread registration do nothing.

use super::{Config, Kind, Stats};
use std::ffi::c_void;

pub(super) const NAME: &str = "malloc";

pub(super) fn init(_config: &Config) {}

pub(super) fn register_current_thread() {}

pub(super) fn unregister_current_thread() {}

#[inline(always)]
pub(super) fn alloc(kind: Kind, size: usize) -> *mut u8 {
    // Like bdwgc, a zero-sized request still returns a distinct object.
    let size = size.max(1);
    // SAFETY: plain libc allocation.
    unsafe {
        match kind {
            Kind::Scanned | Kind::Uncollectable => libc::calloc(1, size),
            Kind::Atomic => libc::malloc(size),
        }
        .cast()
    }
}

/// # Safety
/// `ptr` came from [`alloc`] or [`realloc`] and is live.
pub(super) unsafe fn free(ptr: *mut u8) {
    // SAFETY: the caller guarantees ptr is a live malloc allocation.
    unsafe { libc::free(ptr.cast()) }
}

/// # Safety
/// `ptr` is a live malloc allocation.
pub(super) unsafe fn allocation_size(ptr: *mut u8) -> usize {
    // SAFETY: the caller guarantees ptr is a live malloc allocation.
    unsafe { libc::malloc_usable_size(ptr.cast()) }
}

/// # Safety
/// `ptr` is null or a live malloc allocation.
pub(super) unsafe fn realloc(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        return alloc(Kind::Scanned, size);
    }
    // SAFETY: the caller guarantees ptr is a live malloc allocation.
    unsafe { libc::realloc(ptr.cast(), size.max(1)).cast() }
}

pub(super) fn collect() {}

pub(super) fn stats() -> Stats {
    Stats::default()
}

/// # Safety
/// None: nothing is ever collected, so no finalizer is recorded.
pub(super) unsafe fn register_finalizer(
    _obj: *mut u8,
    _f: Option<super::Finalizer>,
    _data: *mut c_void,
) {
}

pub(super) fn run_finalizers() -> usize {
    0
}

pub(super) fn is_heap_ptr(_ptr: *const u8) -> bool {
    false
}

pub(super) fn version() -> String {
    "none".to_string()
}
