//! C ABI of the precise collector when the `precise` feature is off: every
//! function exists (the header is the same for every build) and reports
//! `DEFERGC_PRECISE_ENOTBUILT`, or returns 0/NULL with that code in `*err`.

use std::ffi::{c_int, c_void};

/// The code for "built without the `precise` feature".
const NOT_BUILT: c_int = -100;

/// Stores the code in `*err` if `err` is not NULL.
///
/// # Safety
/// `err` is NULL or writable.
unsafe fn report(err: *mut c_int) {
    if !err.is_null() {
        // SAFETY: the caller guarantees err is writable.
        unsafe { err.write(NOT_BUILT) };
    }
}

/// Statistics, as `defergc_precise_stats` in the header (never filled).
#[repr(C)]
pub struct PreciseStats {
    fields: [u64; 14],
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_init() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_register_type(
    _size: usize,
    _offsets: *const usize,
    _n: usize,
    _out: *mut u32,
) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_register_handle_array_type(_out: *mut u32) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_register_bytes_type(_out: *mut u32) -> c_int {
    NOT_BUILT
}

/// Not built: returns 0 and reports `DEFERGC_PRECISE_ENOTBUILT`.
///
/// # Safety
/// `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_precise_alloc(_ty: u32, err: *mut c_int) -> u64 {
    // SAFETY: forwarded from the caller.
    unsafe { report(err) };
    0
}

/// Not built: returns 0 and reports `DEFERGC_PRECISE_ENOTBUILT`.
///
/// # Safety
/// `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_precise_alloc_array(
    _ty: u32,
    _len: usize,
    err: *mut c_int,
) -> u64 {
    // SAFETY: forwarded from the caller.
    unsafe { report(err) };
    0
}

/// Not built: returns NULL and reports `DEFERGC_PRECISE_ENOTBUILT`.
///
/// # Safety
/// `err` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_precise_deref(_obj: u64, err: *mut c_int) -> *mut c_void {
    // SAFETY: forwarded from the caller.
    unsafe { report(err) };
    std::ptr::null_mut()
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_load(_obj: u64, _offset: usize, _out: *mut u64) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_store(_obj: u64, _offset: usize, _value: u64) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_read(
    _obj: u64,
    _offset: usize,
    _buf: *mut c_void,
    _len: usize,
) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_write(
    _obj: u64,
    _offset: usize,
    _data: *const c_void,
    _len: usize,
) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_push_frame(_frame: *mut u64) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_root(_h: u64) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_set_root(_slot: usize, _h: u64) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_pop_frame(_frame: u64) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_safepoint() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_enter_native() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_leave_native() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_collect() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_register_thread() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_unregister_thread() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_set_heap_limit(_bytes: usize) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_get_stats(_out: *mut PreciseStats) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_gc_async() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_gc_wait() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_shutdown() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_set_gc_percent(_percent: c_int) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_reset_pause_stats() -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_add_global_root(_slot: *const u64) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_remove_global_root(_slot: *const u64) -> c_int {
    NOT_BUILT
}

/// Not built: reports `DEFERGC_PRECISE_ENOTBUILT`.
#[no_mangle]
pub extern "C" fn defergc_precise_store_global(_slot: *mut u64, _value: u64) -> c_int {
    NOT_BUILT
}
