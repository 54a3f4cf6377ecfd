//! C ABI: Go's memory controls and `runtime.MemStats` (see
//! `crate::gc::memory` for how they map onto the collector).

use super::{entry, errors};
use crate::gc::{self, Cleanup, CleanupFn, MemStats, Weak};
use std::ffi::{c_int, c_uint, c_void};
use std::ptr::NonNull;

/// Go's `runtime.ReadMemStats`: fills `*out` when `out->size` is
/// `sizeof(defergc_memstats)`; `DEFERGC_EINVAL` for NULL or another size.
///
/// # Safety
/// `out` is NULL or points to a writable `defergc_memstats`.
#[no_mangle]
pub unsafe extern "C" fn defergc_read_memstats(out: *mut MemStats) -> c_int {
    entry("defergc_read_memstats", || {
        // SAFETY: out is NULL or readable, per the caller.
        let size = unsafe { out.as_ref() }.map(|m| m.size);
        if size != Some(std::mem::size_of::<MemStats>() as u64) {
            return errors::EINVAL;
        }
        // SAFETY: out is writable, per the caller.
        unsafe { out.write(gc::read_memstats()) };
        0
    })
}

/// Go's `debug.SetGCPercent`: returns the previous percent.
#[no_mangle]
pub extern "C" fn defergc_set_gc_percent(percent: c_int) -> c_int {
    entry("defergc_set_gc_percent", || gc::set_gc_percent(percent))
}

/// Go's `debug.SetMemoryLimit`: a soft limit; a negative value changes
/// nothing and returns the limit in force; `INT64_MAX` is no limit.
#[no_mangle]
pub extern "C" fn defergc_set_memory_limit(bytes: i64) -> i64 {
    entry("defergc_set_memory_limit", || {
        let to_c = |b: u64| i64::try_from(b).unwrap_or(i64::MAX);
        if bytes < 0 {
            return to_c(gc::memory_limit());
        }
        let limit = if bytes == i64::MAX {
            u64::MAX
        } else {
            bytes as u64
        };
        to_c(gc::set_memory_limit(limit))
    })
}

/// A hard heap limit (0: none); returns the previous one.
#[no_mangle]
pub extern "C" fn defergc_set_max_heap(bytes: u64) -> u64 {
    entry("defergc_set_max_heap", || gc::set_max_heap(bytes))
}

/// Go's `debug.FreeOSMemory`.
#[no_mangle]
pub extern "C" fn defergc_free_os_memory() {
    entry("defergc_free_os_memory", gc::free_os_memory)
}

/// `defergc_config` (see the header).
#[repr(C)]
pub struct CConfig {
    size: usize,
    markers: c_uint,
    initial_heap: usize,
    gc_percent: c_int,
    memory_limit: i64,
    max_heap: u64,
    finalizer_thread: c_int,
    catch_faults: c_int,
}

/// Starts the collector with `*config` (see the header).
///
/// # Safety
/// `config` is NULL or points to a readable `defergc_config`.
#[no_mangle]
pub unsafe extern "C" fn defergc_init_with(config: *const CConfig) -> c_int {
    entry("defergc_init_with", || {
        // SAFETY: NULL or readable, per the caller; the size is checked
        // before any other field is read.
        let Some(c) = (unsafe { config.as_ref() }) else {
            return errors::EINVAL;
        };
        if c.size != std::mem::size_of::<CConfig>() {
            return errors::EINVAL;
        }
        let mut rust = gc::Config::DEFAULT;
        if c.markers > 0 {
            rust.markers = Some(c.markers);
        }
        if c.initial_heap > 0 {
            rust.initial_heap_bytes = c.initial_heap;
        }
        if c.gc_percent != c_int::MIN {
            rust.gc_percent = Some(c.gc_percent);
        }
        if c.memory_limit >= 0 {
            rust.memory_limit = Some(if c.memory_limit == i64::MAX {
                u64::MAX
            } else {
                c.memory_limit as u64
            });
        }
        if c.max_heap > 0 {
            rust.max_heap = Some(c.max_heap);
        }
        rust.finalizer_thread = c.finalizer_thread != 0;
        if c.catch_faults >= 0 {
            crate::defer::catch_faults(c.catch_faults != 0);
        }
        match gc::init_with(rust) {
            Ok(()) => 0,
            Err(gc::AlreadyInitialized) => errors::EALREADY,
        }
    })
}

/// A C finalizer: `fn(obj, arg)`.
pub type CFinalizer = unsafe extern "C" fn(obj: *mut c_void, arg: *mut c_void);

/// Go's `runtime.SetFinalizer` (see the header).
///
/// # Safety
/// `obj` is NULL or the start of a live object of `defergc_alloc`; `f` is
/// safe to call with `obj` and `arg` on the finalizer thread.
#[no_mangle]
pub unsafe extern "C" fn defergc_set_finalizer(
    obj: *mut c_void,
    f: Option<CFinalizer>,
    arg: *mut c_void,
) {
    entry("defergc_set_finalizer", || {
        if obj.is_null() {
            crate::abort("defergc: defergc_set_finalizer: NULL object");
        }
        if let Err(e) = gc::check::check(obj.cast()) {
            crate::abort(&format!("defergc: defergc_set_finalizer: {}", e.message()));
        }
        // SAFETY: per the caller, checked above where the collector can.
        unsafe { gc::register_finalizer(obj.cast(), f, arg) }
    })
}

/// Runs the finalizers that are ready, on this thread.
#[no_mangle]
pub extern "C" fn defergc_run_finalizers() -> c_int {
    entry("defergc_run_finalizers", || {
        gc::run_finalizers().min(c_int::MAX as usize) as c_int
    })
}

/// Go's `runtime.KeepAlive`.
#[no_mangle]
pub extern "C" fn defergc_keep_alive(p: *const c_void) {
    gc::keep_alive(p)
}

/// Go's `weak.Make` (see the header).
///
/// # Safety
/// `obj` is NULL or the start of a live object of `defergc_alloc`.
#[no_mangle]
pub unsafe extern "C" fn defergc_weak_make(obj: *mut c_void) -> *mut c_void {
    entry("defergc_weak_make", || {
        match NonNull::new(obj.cast::<u8>()) {
            None => std::ptr::null_mut(),
            Some(p) => Weak::make(p).into_raw(),
        }
    })
}

/// Go's `weak.Pointer.Value` (see the header).
///
/// # Safety
/// `weak` is NULL or came from `defergc_weak_make` and was kept alive.
#[no_mangle]
pub unsafe extern "C" fn defergc_weak_value(weak: *mut c_void) -> *mut c_void {
    entry("defergc_weak_value", || {
        // SAFETY: per the caller.
        match unsafe { Weak::from_raw(weak) } {
            None => std::ptr::null_mut(),
            Some(w) => w
                .value()
                .map_or(std::ptr::null_mut(), |p| p.as_ptr().cast()),
        }
    })
}

/// Go's `runtime.AddCleanup` (see the header).
///
/// # Safety
/// `obj` is the start of a live object of `defergc_alloc`; `f` is safe to
/// call with `arg` on the finalizer thread.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_add_cleanup(
    obj: *mut c_void,
    f: Option<CleanupFn>,
    arg: *mut c_void,
) -> Cleanup {
    let (Some(p), Some(f)) = (NonNull::new(obj.cast::<u8>()), f) else {
        crate::abort("defergc: defergc_add_cleanup: NULL object or function");
    };
    if let Err(e) = gc::check::check(p.as_ptr()) {
        crate::abort(&format!("defergc: defergc_add_cleanup: {}", e.message()));
    }
    // (A Go panic for arg == obj reaches compiled code by the C protocol.)
    super::guard(|| {
        // SAFETY: per the caller, checked above where the collector can.
        unsafe { gc::add_cleanup(p, f, arg) }
    })
}

/// Go's `Cleanup.Stop` (see the header).
#[no_mangle]
pub extern "C" fn defergc_cleanup_stop(cleanup: Cleanup) {
    entry("defergc_cleanup_stop", || cleanup.stop())
}

/// Go's `runtime.MemProfileRate = bytes` (0: off; 1: every allocation);
/// returns the previous rate. A negative value only reads it.
#[no_mangle]
pub extern "C" fn defergc_set_mem_profile_rate(bytes: i64) -> i64 {
    entry("defergc_set_mem_profile_rate", || {
        if bytes < 0 {
            gc::profile::mem_profile_rate()
        } else {
            gc::profile::set_mem_profile_rate(bytes)
        }
    })
}

/// Go's `pprof.WriteHeapProfile` into the file `path`: 0,
/// `DEFERGC_EINVAL` for NULL or a path that is not UTF-8, `DEFERGC_EIO`
/// when the file cannot be written.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn defergc_write_heap_profile(path: *const std::ffi::c_char) -> c_int {
    entry("defergc_write_heap_profile", || {
        if path.is_null() {
            return errors::EINVAL;
        }
        // SAFETY: NUL-terminated, per the caller.
        let Ok(path) = unsafe { std::ffi::CStr::from_ptr(path) }.to_str() else {
            return errors::EINVAL;
        };
        match gc::profile::write_heap_profile_to(std::path::Path::new(path)) {
            Ok(()) => 0,
            Err(_) => errors::EIO,
        }
    })
}
