//! The `nogc` backend: malloc and free, nothing is collected or registered.
//!
//! Memory from every kind is plain malloc memory, behind a 16-byte header
//! (a live mark and the size: a pointer handed back can be checked), and
//! lives until [`free`]; `collect`, finalizers and thread registration do
//! nothing.

use super::{Config, Kind, Stats};
use std::ffi::c_void;

pub(super) const NAME: &str = "malloc";

pub(super) fn init(_config: &Config) {}

pub(super) fn register_current_thread() {}

/// Nothing to do around a fork without a collector.
pub(super) fn atfork_prepare() {}
pub(super) fn atfork_parent() {}
pub(super) fn atfork_child() {}

pub(super) fn unregister_current_thread() {}

/// Bytes in front of every allocation: a word saying it is a live one of
/// ours, and its size (so that a pointer handed back can be checked).
const HEADER: usize = 16;
const LIVE: u64 = 0x6466_6767_6361_6c6c; // "dfggcall"

/// The header of the allocation at `ptr`.
fn header(ptr: *mut u8) -> *mut u64 {
    ptr.wrapping_sub(HEADER).cast()
}

#[inline(always)]
pub(super) fn alloc(kind: Kind, size: usize) -> *mut u8 {
    let Some(total) = size.checked_add(HEADER) else {
        return std::ptr::null_mut();
    };
    // SAFETY: plain libc allocation.
    let raw: *mut u64 = unsafe {
        match kind {
            Kind::Scanned | Kind::Uncollectable => libc::calloc(1, total),
            Kind::Atomic => libc::malloc(total),
        }
        .cast()
    };
    if raw.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: raw has HEADER + size bytes, 16-aligned.
    unsafe {
        raw.write(LIVE);
        raw.add(1).write(size as u64);
        raw.cast::<u8>().add(HEADER)
    }
}

/// # Safety
/// `ptr` came from [`alloc`] or [`realloc`] and is live.
pub(super) unsafe fn free(ptr: *mut u8) {
    let h = header(ptr);
    // SAFETY: the caller guarantees ptr is a live allocation of ours: its
    // header is in front of it.
    unsafe {
        h.write(0);
        libc::free(h.cast());
    }
}

/// # Safety
/// `ptr` is a live allocation of ours.
pub(super) unsafe fn allocation_size(ptr: *mut u8) -> usize {
    // SAFETY: the caller guarantees ptr is a live allocation of ours.
    unsafe { header(ptr).add(1).read() as usize }
}

/// # Safety
/// `ptr` is null or a live allocation of ours.
pub(super) unsafe fn realloc(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        return alloc(Kind::Scanned, size);
    }
    let Some(total) = size.checked_add(HEADER) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the caller guarantees ptr is a live allocation of ours.
    let raw: *mut u64 = unsafe { libc::realloc(header(ptr).cast(), total).cast() };
    if raw.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: raw has HEADER + size bytes; its header came along.
    unsafe {
        raw.add(1).write(size as u64);
        raw.cast::<u8>().add(HEADER)
    }
}

/// Whether `ptr` starts a live allocation of ours: its header is readable
/// (asked of the kernel first: `ptr` may be any address) and says so.
pub(super) fn starts_allocation(ptr: *const u8) -> Result<(), super::check::PtrError> {
    use super::check::PtrError;
    if ptr.is_null() || !(ptr as usize).is_multiple_of(HEADER) {
        return Err(PtrError::NotAllocated);
    }
    let mut word = [0u64; 2];
    let local = libc::iovec {
        iov_base: word.as_mut_ptr().cast(),
        iov_len: HEADER,
    };
    let remote = libc::iovec {
        iov_base: header(ptr.cast_mut()).cast(),
        iov_len: HEADER,
    };
    // SAFETY: reads our own address space into a local buffer; the kernel
    // reports an unmapped source instead of faulting.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == HEADER as isize && word[0] == LIVE {
        Ok(())
    } else {
        Err(PtrError::NotAllocated)
    }
}

pub(super) fn collect() {}

// Memory controls (memory.rs): nothing is collected, nothing to tune.
pub(super) fn set_collection_enabled(_on: bool) {}
pub(super) fn set_free_space_divisor(_divisor: u64) {}
pub(super) fn heap_usage() -> (u64, u64) {
    (0, 0)
}
pub(super) fn set_max_heap(_bytes: u64) {}
pub(super) fn collect_and_unmap() {}
pub(super) fn heap_figures() -> super::memory::HeapFigures {
    super::memory::HeapFigures {
        heap: 0,
        free: 0,
        released: 0,
        sys: 0,
        total_alloc: 0,
        reclaimed: 0,
    }
}

pub(super) fn stats() -> Stats {
    Stats::default()
}

/// # Safety
/// None: nothing is ever collected, so no finalizer is recorded.
pub(super) unsafe fn register_finalizer(
    _obj: *mut u8,
    _f: Option<super::Finalizer>,
    _data: *mut c_void,
) -> (Option<super::Finalizer>, *mut c_void) {
    (None, std::ptr::null_mut())
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

// Weak pointers: nothing is collected, a cell names its object for ever.
pub(super) unsafe fn register_weak(_cell: *mut std::ffi::c_void, _obj: *const u8) {}
pub(super) unsafe fn unregister_weak(_cell: *mut std::ffi::c_void) {}
/// Runs `f`: nothing is ever collected, so there is no lock to hold.
#[cfg(feature = "precise")]
pub(super) fn with_reader_lock<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(feature = "precise")]
pub(super) fn read_weak_locked(cell: *mut usize) -> *mut u8 {
    read_weak(cell)
}

pub(super) fn read_weak(cell: *mut usize) -> *mut u8 {
    // SAFETY: a live cell of weak.rs, written once before it was shared.
    let hidden = unsafe { cell.read() };
    (!hidden) as *mut u8
}
