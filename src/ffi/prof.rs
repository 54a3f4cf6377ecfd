//! The block and mutex profiles and the execution trace, for C (see
//! `include/defergc.h`): Go's `SetBlockProfileRate`,
//! `SetMutexProfileFraction`, `pprof.Lookup("block"/"mutex").WriteTo`,
//! and `trace.Start` / `trace.Stop` (to a Chrome / Perfetto JSON file).

use super::{entry, errors};
use crate::go;
use std::ffi::{c_char, c_int, CStr};
use std::path::Path;

/// The path a C caller passed: `None` for NULL or a path that is not
/// UTF-8.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string that outlives `'a`.
unsafe fn path_arg<'a>(path: *const c_char) -> Option<&'a Path> {
    if path.is_null() {
        return None;
    }
    // SAFETY: NUL-terminated, per the caller.
    let s = unsafe { CStr::from_ptr(path) }.to_str().ok()?;
    Some(Path::new(s))
}

/// Go's `runtime.SetBlockProfileRate(rate)` (nanoseconds blocked per
/// sampled event; 1: every event; 0 or less: off); returns the previous
/// rate.
#[no_mangle]
pub extern "C" fn defergc_set_block_profile_rate(rate: i64) -> i64 {
    entry("defergc_set_block_profile_rate", || {
        go::set_block_profile_rate(rate)
    })
}

/// Go's `runtime.SetMutexProfileFraction(fraction)` (one contention event
/// in `fraction` recorded; 0: off; negative: only read); returns the
/// previous fraction.
#[no_mangle]
pub extern "C" fn defergc_set_mutex_profile_fraction(fraction: i64) -> i64 {
    entry("defergc_set_mutex_profile_fraction", || {
        go::set_mutex_profile_fraction(fraction)
    })
}

/// The block profile into the file `path`: 0, `DEFERGC_EINVAL` for NULL
/// or a path that is not UTF-8, `DEFERGC_EIO` when the file cannot be
/// written.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn defergc_write_block_profile(path: *const c_char) -> c_int {
    entry("defergc_write_block_profile", || {
        // SAFETY: per the caller.
        match unsafe { path_arg(path) } {
            None => errors::EINVAL,
            Some(p) => go::write_block_profile_to(p).map_or(errors::EIO, |()| 0),
        }
    })
}

/// The mutex profile into the file `path`: as
/// [`defergc_write_block_profile`].
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn defergc_write_mutex_profile(path: *const c_char) -> c_int {
    entry("defergc_write_mutex_profile", || {
        // SAFETY: per the caller.
        match unsafe { path_arg(path) } {
            None => errors::EINVAL,
            Some(p) => go::write_mutex_profile_to(p).map_or(errors::EIO, |()| 0),
        }
    })
}

/// Starts the execution trace into the file `path`: 0, `DEFERGC_EINVAL`
/// for NULL or a path that is not UTF-8, `DEFERGC_EALREADY` if a trace is
/// being taken, `DEFERGC_EIO` when the file cannot be created.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn defergc_start_trace(path: *const c_char) -> c_int {
    entry("defergc_start_trace", || {
        // SAFETY: per the caller.
        match unsafe { path_arg(path) } {
            None => errors::EINVAL,
            Some(p) => match go::start_trace(p) {
                Ok(()) => 0,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => errors::EALREADY,
                Err(_) => errors::EIO,
            },
        }
    })
}

/// Stops the execution trace and finishes its file: 0, `DEFERGC_EINVAL`
/// if no trace is being taken, `DEFERGC_EIO` if the file could not be
/// written.
#[no_mangle]
pub extern "C" fn defergc_stop_trace() -> c_int {
    entry("defergc_stop_trace", || match go::stop_trace() {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => errors::EINVAL,
        Err(_) => errors::EIO,
    })
}
