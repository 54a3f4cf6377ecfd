//! C ABI: descriptors that goroutines wait on (`defergc_poll_*`, Go's
//! `runtime_poll*`) and the I/O a compiler emits for Go's `net` and `os`
//! packages (`defergc_net_*`: read, write, accept, connect, close).
//!
//! A handle (`uint64_t`, never 0) names a registration and its
//! generation: a handle used after its close, or one never handed out,
//! gets `DEFERGC_EBADHANDLE`, never a crash. Results are 0 (or a count)
//! or a negative code: the poller's own (`DEFERGC_ECLOSED`,
//! `DEFERGC_ETIMEOUT`, ...) or a system error as `DEFERGC_EOS - errno`.

use super::errors;
use crate::go::netpoll::{self, CloseFd, Handle, Mode, PollError, Which};
use crate::go::pollfd::{self, IoError};
use std::ffi::{c_char, c_int, c_void};

/// A code for a poller error.
fn poll_code(e: PollError) -> i64 {
    i64::from(match e {
        PollError::Closing => errors::ECLOSED,
        PollError::Timeout => errors::ETIMEOUT,
        PollError::BadHandle => errors::EBADHANDLE,
    })
}

/// A code for an I/O error.
fn io_code(e: IoError) -> i64 {
    match e {
        IoError::Poll(p) => poll_code(p),
        IoError::Os(errno) => i64::from(errors::EOS) - i64::from(errno),
    }
}

fn mode(m: c_int) -> Option<Mode> {
    match m {
        DEFERGC_POLL_READ => Some(Mode::Read),
        DEFERGC_POLL_WRITE => Some(Mode::Write),
        _ => None,
    }
}

const DEFERGC_POLL_READ: c_int = 1;
const DEFERGC_POLL_WRITE: c_int = 2;

/// Makes `fd` non-blocking and registers it, filling `*out`.
fn open(fd: c_int, out: *mut u64) -> c_int {
    if out.is_null() || fd < 0 {
        return errors::EINVAL;
    }
    // SAFETY: plain fcntl calls on a number the caller gives; a bad one is
    // the kernel's to refuse.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } != 0 {
        return os_code32(crate::fresh::errno());
    }
    match netpoll::open(fd) {
        Ok(h) => {
            // SAFETY: out is non-null and the caller's to fill.
            unsafe { out.write(h.raw()) };
            0
        }
        Err(e) => {
            if flags & libc::O_NONBLOCK == 0 {
                // Refused: the descriptor is left as it was (a terminal
                // or a pipe shared with other processes must not stay
                // non-blocking).
                // SAFETY: as above.
                unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
            }
            os_code32(e.raw_os_error().unwrap_or(libc::EINVAL))
        }
    }
}

fn os_code32(errno: i32) -> c_int {
    errors::EOS - errno
}

fn code32(r: Result<(), PollError>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => poll_code(e) as c_int,
    }
}

/// Go's `runtime_pollOpen`: registers `fd` (made non-blocking) and fills
/// `*handle`. The descriptor stays the caller's to close.
///
/// # Safety
/// `handle` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_poll_open(fd: c_int, handle: *mut u64) -> c_int {
    super::entry("defergc_poll_open", || open(fd, handle))
}

/// Go's `runtime_pollWait`: parks until readable (`DEFERGC_POLL_READ`) or
/// writable (`DEFERGC_POLL_WRITE`), the deadline passes or the handle is
/// closed.
#[no_mangle]
pub extern "C" fn defergc_poll_wait(handle: u64, m: c_int) -> c_int {
    super::entry("defergc_poll_wait", || match mode(m) {
        Some(m) => code32(netpoll::wait(Handle::from_raw(handle), m)),
        None => errors::EINVAL,
    })
}

/// Go's `runtime_pollReset`: forgets a pending readiness before an
/// operation that will retry on `EAGAIN`.
#[no_mangle]
pub extern "C" fn defergc_poll_reset(handle: u64, m: c_int) -> c_int {
    super::entry("defergc_poll_reset", || match mode(m) {
        Some(m) => code32(netpoll::reset(Handle::from_raw(handle), m)),
        None => errors::EINVAL,
    })
}

/// Go's `runtime_pollSetDeadline`: `deadline` in nanoseconds of
/// `defergc_nanotime()`'s clock; 0 clears it, a time not after now expires
/// the direction(s) at once. `m`: `DEFERGC_POLL_READ`, `_WRITE` or both
/// or'ed.
#[no_mangle]
pub extern "C" fn defergc_poll_set_deadline(handle: u64, m: c_int, deadline: i64) -> c_int {
    super::entry("defergc_poll_set_deadline", || {
        let which = match m {
            DEFERGC_POLL_READ => Which::Read,
            DEFERGC_POLL_WRITE => Which::Write,
            3 => Which::Both,
            _ => return errors::EINVAL,
        };
        let after = (deadline != 0).then(|| deadline.saturating_sub(nanotime()).max(0));
        // Deadlines are timers, which the scheduler's workers fire.
        crate::go::start_scheduler();
        code32(netpoll::set_deadline(
            Handle::from_raw(handle),
            which,
            after,
        ))
    })
}

/// Go's `runtime_pollUnblock`: marks the handle closing and wakes every
/// goroutine waiting on it with `DEFERGC_ECLOSED`.
#[no_mangle]
pub extern "C" fn defergc_poll_unblock(handle: u64) -> c_int {
    super::entry("defergc_poll_unblock", || {
        code32(netpoll::unblock(Handle::from_raw(handle)))
    })
}

/// Go's `runtime_pollClose`: ends the registration (the descriptor stays
/// open, the caller's).
#[no_mangle]
pub extern "C" fn defergc_poll_close(handle: u64) -> c_int {
    super::entry("defergc_poll_close", || {
        code32(netpoll::close(Handle::from_raw(handle), CloseFd::No))
    })
}

/// The monotonic clock deadlines are in (Go's `nanotime`).
#[no_mangle]
pub extern "C" fn defergc_nanotime() -> i64 {
    nanotime()
}

fn nanotime() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Registers `fd` (made non-blocking) as a network descriptor the handle
/// owns: `defergc_net_close` closes it.
///
/// # Safety
/// `handle` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_net_open(fd: c_int, handle: *mut u64) -> c_int {
    super::entry("defergc_net_open", || open(fd, handle))
}

/// Makes a socket (non-blocking, close-on-exec) and registers it.
///
/// # Safety
/// `handle` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_net_socket(
    domain: c_int,
    ty: c_int,
    protocol: c_int,
    handle: *mut u64,
) -> c_int {
    super::entry("defergc_net_socket", || {
        if handle.is_null() {
            return errors::EINVAL;
        }
        // SAFETY: a plain system call.
        let fd = unsafe {
            libc::socket(
                domain,
                ty | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                protocol,
            )
        };
        if fd < 0 {
            return os_code32(crate::fresh::errno());
        }
        let r = open(fd, handle);
        if r != 0 {
            // SAFETY: ours, registered nowhere.
            unsafe { libc::close(fd) };
        }
        r
    })
}

/// The descriptor behind a live handle (for `bind`, `listen`,
/// `setsockopt`...), or `DEFERGC_EBADHANDLE` / `DEFERGC_ECLOSED`.
#[no_mangle]
pub extern "C" fn defergc_net_fd(handle: u64) -> c_int {
    super::entry("defergc_net_fd", || {
        match netpoll::pin(Handle::from_raw(handle)) {
            Ok(pin) => pin.fd(),
            Err(e) => poll_code(e) as c_int,
        }
    })
}

/// Go's `FD.Read`: reads up to `len` bytes, parking while none are there.
/// The count (0 at end of stream), or a negative code.
///
/// # Safety
/// `buf` is writable for `len` bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn defergc_net_read(handle: u64, buf: *mut c_void, len: usize) -> i64 {
    super::entry("defergc_net_read", || {
        if (buf.is_null() && len > 0) || len > isize::MAX as usize {
            return i64::from(errors::EINVAL);
        }
        let slice = if len == 0 {
            &mut [][..]
        } else {
            // SAFETY: the caller's buffer of len bytes.
            unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) }
        };
        match pollfd::read(Handle::from_raw(handle), slice) {
            Ok(n) => n as i64,
            Err(e) => io_code(e),
        }
    })
}

/// Go's `FD.Write`: writes all `len` bytes, parking while the descriptor
/// is full. `len`, or a negative code.
///
/// # Safety
/// `buf` is readable for `len` bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn defergc_net_write(handle: u64, buf: *const c_void, len: usize) -> i64 {
    super::entry("defergc_net_write", || {
        if (buf.is_null() && len > 0) || len > isize::MAX as usize {
            return i64::from(errors::EINVAL);
        }
        let slice = if len == 0 {
            &[][..]
        } else {
            // SAFETY: the caller's buffer of len bytes.
            unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) }
        };
        match pollfd::write(Handle::from_raw(handle), slice) {
            Ok(n) => n as i64,
            Err((_, e)) => io_code(e),
        }
    })
}

/// Go's `FD.Accept`: waits for a connection and registers it; fills
/// `*conn` with its handle and, if `addr` is not NULL, the peer's address
/// (`*addrlen` in: the room at `addr`; out: the address's length).
///
/// # Safety
/// `conn` is NULL or writable; `addr` is NULL or writable for `*addrlen`
/// bytes, and `addrlen` is then writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_net_accept(
    handle: u64,
    conn: *mut u64,
    addr: *mut libc::sockaddr,
    addrlen: *mut u32,
) -> c_int {
    super::entry("defergc_net_accept", || {
        if conn.is_null() || (!addr.is_null() && addrlen.is_null()) {
            return errors::EINVAL;
        }
        let (fd, storage, len) = match pollfd::accept(Handle::from_raw(handle)) {
            Ok(x) => x,
            Err(e) => return io_code(e) as c_int,
        };
        if !addr.is_null() {
            // SAFETY: the caller's room of *addrlen bytes at addr.
            unsafe {
                let room = (*addrlen as usize).min(len as usize);
                std::ptr::copy_nonoverlapping(
                    (&storage as *const libc::sockaddr_storage).cast::<u8>(),
                    addr.cast::<u8>(),
                    room,
                );
                addrlen.write(len);
            }
        }
        match netpoll::open(fd) {
            Ok(h) => {
                // SAFETY: checked non-null above.
                unsafe { conn.write(h.raw()) };
                0
            }
            Err(e) => {
                // SAFETY: ours, registered nowhere.
                unsafe { libc::close(fd) };
                os_code32(e.raw_os_error().unwrap_or(libc::EINVAL))
            }
        }
    })
}

/// Go's connect: starts a non-blocking connect and parks until it is
/// made or refused (`DEFERGC_EOS - ECONNREFUSED`, ...).
///
/// # Safety
/// `addr` is readable for `addrlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn defergc_net_connect(
    handle: u64,
    addr: *const libc::sockaddr,
    addrlen: u32,
) -> c_int {
    super::entry("defergc_net_connect", || {
        if addr.is_null() {
            return errors::EINVAL;
        }
        // SAFETY: the caller's address.
        match unsafe { pollfd::connect(Handle::from_raw(handle), addr, addrlen) } {
            Ok(()) => 0,
            Err(e) => io_code(e) as c_int,
        }
    })
}

/// Go's `FD.Close`: wakes every goroutine waiting on the handle with
/// `DEFERGC_ECLOSED`; the descriptor is closed once no operation uses it.
#[no_mangle]
pub extern "C" fn defergc_net_close(handle: u64) -> c_int {
    super::entry("defergc_net_close", || {
        code32(netpoll::close(Handle::from_raw(handle), CloseFd::Yes))
    })
}

/// Go's message for a code of these functions ("use of closed network
/// connection", "i/o timeout", the system's text for `DEFERGC_EOS -
/// errno`), a static string.
#[no_mangle]
pub extern "C" fn defergc_net_strerror(code: i64) -> *const c_char {
    let s: &'static [u8] = match code {
        c if c == i64::from(errors::ECLOSED) => b"use of closed network connection\0",
        c if c == i64::from(errors::ETIMEOUT) => b"i/o timeout\0",
        c if c == i64::from(errors::EBADHANDLE) => b"not a registered descriptor\0",
        c if c == i64::from(errors::EINVAL) => b"invalid argument\0",
        c if c < i64::from(errors::EOS) => {
            let Ok(errno) = c_int::try_from(i64::from(errors::EOS) - c) else {
                return c"unknown error".as_ptr();
            };
            let mut probe = [0 as c_char; 128];
            // SAFETY: a buffer of its length. The XSI strerror_r says
            // EINVAL for a number that is no errno of the system's.
            if unsafe { libc::strerror_r(errno, probe.as_mut_ptr(), probe.len()) } != 0 {
                return c"unknown error".as_ptr();
            }
            // SAFETY: for an errno the system defines, strerror returns a
            // string of the C library's static table (an unknown one is
            // formatted into a per-thread buffer: refused above).
            return unsafe { libc::strerror(errno) };
        }
        _ => b"unknown error\0",
    };
    s.as_ptr().cast()
}
