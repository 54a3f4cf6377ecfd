//! C ABI: Go's `runtime/pprof` for compiled code: the CPU profile (start
//! to a path or a descriptor, stop, the rate) and goroutine labels
//! (`pprof.SetGoroutineLabels`, `pprof.Do`). Errors are codes: a second
//! start is `DEFERGC_EALREADY` (Go's "cpu profiling already in use"), a
//! stop with no profile on `DEFERGC_ENOTPROFILING`.

use super::{entry, errors, guard};
use crate::go::pprof::{self, ProfileError};
use std::ffi::{c_char, c_int, c_void, CStr};

fn code(e: ProfileError) -> c_int {
    match e {
        ProfileError::AlreadyProfiling => errors::EALREADY,
        ProfileError::NotProfiling => errors::ENOTPROFILING,
        ProfileError::BadRate => errors::EINVAL,
        ProfileError::Io(_) => errors::EIO,
    }
}

/// Go's `pprof.StartCPUProfile` into the file `path` (created now): 0,
/// `DEFERGC_EINVAL` for NULL or a path that is not UTF-8,
/// `DEFERGC_EALREADY` while a profile is on, `DEFERGC_EIO` when the file
/// cannot be created.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn defergc_start_cpu_profile(path: *const c_char) -> c_int {
    entry("defergc_start_cpu_profile", || {
        if path.is_null() {
            return errors::EINVAL;
        }
        // SAFETY: NUL-terminated, per the caller.
        let Ok(path) = unsafe { CStr::from_ptr(path) }.to_str() else {
            return errors::EINVAL;
        };
        if pprof::cpu_profiling() {
            return errors::EALREADY;
        }
        match pprof::start_cpu_profile_to(std::path::Path::new(path)) {
            Ok(()) => 0,
            Err(e) => code(e),
        }
    })
}

/// Go's `pprof.StartCPUProfile` into the descriptor `fd` (written at
/// stop, not closed): 0, `DEFERGC_EINVAL` for a negative or closed
/// descriptor, `DEFERGC_EALREADY` while a profile is on.
#[no_mangle]
pub extern "C" fn defergc_start_cpu_profile_fd(fd: c_int) -> c_int {
    entry("defergc_start_cpu_profile_fd", || {
        if fd < 0 {
            return errors::EINVAL;
        }
        if pprof::cpu_profiling() {
            return errors::EALREADY;
        }
        // A descriptor of our own, so that the caller's stays theirs.
        // SAFETY: dup of a caller's descriptor number; fails cleanly
        // (EBADF) when it is not open.
        let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if own < 0 {
            return errors::EINVAL;
        }
        // SAFETY: `own` is a descriptor this call just made.
        let file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(own) };
        match pprof::start_cpu_profile(std::io::BufWriter::new(file)) {
            Ok(()) => 0,
            Err(e) => code(e),
        }
    })
}

/// Go's `pprof.StopCPUProfile`: stops sampling and writes the profile: 0,
/// `DEFERGC_ENOTPROFILING` when none is on, `DEFERGC_EIO` when it could
/// not be written.
#[no_mangle]
pub extern "C" fn defergc_stop_cpu_profile() -> c_int {
    entry(
        "defergc_stop_cpu_profile",
        || match pprof::stop_cpu_profile() {
            Ok(()) => 0,
            Err(e) => code(e),
        },
    )
}

/// Go's `runtime.SetCPUProfileRate`: samples a second of CPU time of the
/// next profile (1 to 1,000,000; default 100). Returns the previous rate,
/// `DEFERGC_EINVAL` out of range, `DEFERGC_EALREADY` while a profile is
/// on.
#[no_mangle]
pub extern "C" fn defergc_set_cpu_profile_rate(hz: c_int) -> c_int {
    entry("defergc_set_cpu_profile_rate", || {
        let Ok(hz) = u32::try_from(hz) else {
            return errors::EINVAL;
        };
        match pprof::set_cpu_profile_rate(hz) {
            Ok(previous) => previous as c_int,
            Err(e) => code(e),
        }
    })
}

/// Makes the calling thread one that CPU profiles sample until it exits
/// (worker threads and the thread that starts a profile are without
/// asking).
#[no_mangle]
pub extern "C" fn defergc_profile_this_thread() {
    entry("defergc_profile_this_thread", pprof::profile_this_thread)
}

/// The `n` (key, value) pairs at `kv` (`kv[2i]`, `kv[2i + 1]`), or
/// `None` for a NULL array with pairs, a NULL string or one that is not
/// UTF-8.
///
/// # Safety
/// `kv` is NULL or points to `2 * n` pointers, each NULL or a
/// NUL-terminated string that lives for the call.
unsafe fn pairs<'a>(kv: *const *const c_char, n: usize) -> Option<Vec<(&'a str, &'a str)>> {
    if n == 0 {
        return Some(Vec::new());
    }
    if kv.is_null() || n > (isize::MAX as usize) / 16 {
        return None;
    }
    // SAFETY: 2 * n pointers, per the caller.
    let words = unsafe { std::slice::from_raw_parts(kv, 2 * n) };
    let text = |p: *const c_char| {
        // SAFETY: NULL or NUL-terminated, per the caller.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().ok())?
    };
    words
        .chunks(2)
        .map(|kv| Some((text(kv[0])?, text(kv[1])?)))
        .collect()
}

/// Go's `pprof.SetGoroutineLabels`: the calling goroutine's (or
/// thread's) labels become the `n` pairs at `kv` (`kv[2i]` a key,
/// `kv[2i + 1]` its value; copied). Goroutines it starts from now on
/// inherit them. 0, or `DEFERGC_EINVAL` for a NULL array with pairs, a
/// NULL string or one that is not UTF-8 (the labels unchanged).
///
/// # Safety
/// `kv` is NULL or points to `2 * n` pointers, each NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn defergc_set_goroutine_labels(kv: *const *const c_char, n: usize) -> c_int {
    entry("defergc_set_goroutine_labels", || {
        // SAFETY: forwarded from the caller.
        let Some(pairs) = (unsafe { pairs(kv, n) }) else {
            return errors::EINVAL;
        };
        pprof::set_goroutine_labels(&pairs);
        0
    })
}

/// Go's `pprof.Do`: calls `f(arg)` with the calling goroutine's labels
/// plus the `n` pairs at `kv` (a key already set takes its new value),
/// then puts its labels back, also when `f` panics (the panic goes on).
/// 0, or `DEFERGC_EINVAL` (f not called) for a NULL `f`, a NULL array
/// with pairs, a NULL string or one that is not UTF-8.
///
/// # Safety
/// As [`defergc_set_goroutine_labels`]; `f` may be called with `arg`.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_do_with_labels(
    kv: *const *const c_char,
    n: usize,
    f: Option<unsafe extern "C-unwind" fn(*mut c_void)>,
    arg: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded from the caller.
        let (Some(f), Some(pairs)) = (f, unsafe { pairs(kv, n) }) else {
            return errors::EINVAL;
        };
        pprof::do_with_labels(&pairs, || {
            // A Rust frame around the call: a panic in f unwinds to it,
            // never jumps past it.
            // SAFETY: the caller vouched for f and arg.
            crate::defer::call(|_| unsafe { f(arg) })
        });
        0
    })
}
