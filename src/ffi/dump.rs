//! C ABI: the goroutine profile (`pprof.Lookup("goroutine")`), over
//! `go::dump` (`runtime.Stack` is `defergc_stack`, in defer.rs).

use super::{entry, errors};
use crate::go;
use std::ffi::{c_char, c_int};

/// Go's goroutine profile into the file `path`: 0, `DEFERGC_EINVAL` for
/// NULL or a path that is not UTF-8, `DEFERGC_EIO` when the file cannot
/// be written.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn defergc_write_goroutine_profile(path: *const c_char) -> c_int {
    entry("defergc_write_goroutine_profile", || {
        if path.is_null() {
            return errors::EINVAL;
        }
        // SAFETY: NUL-terminated, per the caller.
        let Ok(path) = unsafe { std::ffi::CStr::from_ptr(path) }.to_str() else {
            return errors::EINVAL;
        };
        match go::write_goroutine_profile_to(std::path::Path::new(path)) {
            Ok(()) => 0,
            Err(_) => errors::EIO,
        }
    })
}

/// Go's goroutine profile written to the open descriptor `fd` (not
/// closed): 0, `DEFERGC_EINVAL` for a negative `fd`, `DEFERGC_EIO` when
/// it cannot be written.
#[no_mangle]
pub extern "C" fn defergc_write_goroutine_profile_fd(fd: c_int) -> c_int {
    entry("defergc_write_goroutine_profile_fd", || {
        if fd < 0 {
            return errors::EINVAL;
        }
        let mut out = FdWriter(fd);
        match go::write_goroutine_profile(&mut out) {
            Ok(()) => 0,
            Err(_) => errors::EIO,
        }
    })
}

/// Writes to a descriptor the caller keeps open.
struct FdWriter(c_int);

impl std::io::Write for FdWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        loop {
            // SAFETY: buf's bytes are readable; the caller owns the fd.
            let n = unsafe { libc::write(self.0, buf.as_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
