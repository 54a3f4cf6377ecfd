//! I/O on descriptors registered with the poller (Go's `internal/poll`):
//! read, write, accept and connect, each trying the non-blocking system
//! call and parking on the poller while it says `EAGAIN`.
//!
//! Every operation pins its descriptor ([`netpoll::Pin`]) for as long as
//! it runs, so a concurrent close makes it fail with `Closing` instead of
//! reaching a number that was closed and reused. `EINTR` is retried.

use super::netpoll::{self, Handle, Mode, PollError};
use std::io;
use std::mem::MaybeUninit;

/// Why an operation failed: the poller's reason, or the system's errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IoError {
    Poll(PollError),
    Os(i32),
}

impl From<PollError> for IoError {
    fn from(e: PollError) -> IoError {
        IoError::Poll(e)
    }
}

impl IoError {
    /// As a `std::io::Error`: Go's messages for the poller's reasons.
    pub(crate) fn into_io(self) -> io::Error {
        match self {
            IoError::Os(errno) => io::Error::from_raw_os_error(errno),
            IoError::Poll(PollError::Timeout) => {
                io::Error::new(io::ErrorKind::TimedOut, "i/o timeout")
            }
            IoError::Poll(PollError::Closing) => io::Error::new(
                io::ErrorKind::NotConnected,
                "use of closed network connection",
            ),
            IoError::Poll(PollError::BadHandle) => {
                io::Error::new(io::ErrorKind::InvalidInput, "not a registered descriptor")
            }
        }
    }
}

/// Runs `op` on `h`'s descriptor until it does not say `EAGAIN`, parking
/// for `mode` between tries.
fn retry(h: Handle, mode: Mode, op: impl FnMut(i32) -> isize) -> Result<usize, IoError> {
    retry_pinned(&netpoll::pin(h)?, h, mode, op)
}

/// [`retry`] with the descriptor pinned by the caller.
fn retry_pinned(
    pin: &netpoll::Pin,
    h: Handle,
    mode: Mode,
    mut op: impl FnMut(i32) -> isize,
) -> Result<usize, IoError> {
    netpoll::reset(h, mode)?;
    loop {
        let r = op(pin.fd());
        if r >= 0 {
            return Ok(r as usize);
        }
        match crate::fresh::errno() {
            libc::EINTR => continue,
            libc::EAGAIN => netpoll::wait(h, mode)?,
            e => return Err(IoError::Os(e)),
        }
    }
}

/// Reads into `buf` (0: end of stream, or an empty `buf`).
pub(crate) fn read(h: Handle, buf: &mut [u8]) -> Result<usize, IoError> {
    // SAFETY: the read only writes initialised bytes into buf (it never
    // stores uninitialised memory through the view).
    read_uninit(h, unsafe {
        &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>])
    })
}

/// [`read`] into memory that need not be initialised: the bytes it reports
/// are.
pub(crate) fn read_uninit(h: Handle, buf: &mut [MaybeUninit<u8>]) -> Result<usize, IoError> {
    retry(h, Mode::Read, |fd| {
        // SAFETY: buf is valid for writes of its length.
        unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }
    })
}

/// Writes all of `buf` (Go's `FD.Write` loops until everything is
/// written or an error); returns how much was written before an error.
pub(crate) fn write(h: Handle, buf: &[u8]) -> Result<usize, (usize, IoError)> {
    // Even an empty write looks at the handle first (Go's takes its fd
    // lock: "use of closed network connection" after a close).
    let pin = netpoll::pin(h).map_err(|e| (0, e.into()))?;
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        let n = retry_pinned(&pin, h, Mode::Write, |fd| {
            // SAFETY: rest is valid for its length. MSG_NOSIGNAL: a closed
            // peer is an EPIPE error, not a SIGPIPE (Go ignores SIGPIPE on
            // descriptors other than 1 and 2).
            unsafe { libc::send(fd, rest.as_ptr().cast(), rest.len(), libc::MSG_NOSIGNAL) }
        })
        .or_else(|e| match e {
            // Not a socket: a plain write.
            IoError::Os(libc::ENOTSOCK) => {
                retry_pinned(&pin, h, Mode::Write, |fd| write_no_sigpipe(fd, rest))
            }
            e => Err(e),
        })
        .map_err(|e| (done, e))?;
        done += n;
    }
    Ok(done)
}

/// `write(2)` to a descriptor that is not a socket (a pipe), with
/// `SIGPIPE` held off on the calling thread: a reader that is gone is an
/// `EPIPE` error, as `MSG_NOSIGNAL` makes it for a socket, not a signal
/// that kills the process. The signal the failed write raised is taken
/// off the thread before it is let through again; a thread that blocks
/// `SIGPIPE` itself keeps what it gets.
fn write_no_sigpipe(fd: i32, buf: &[u8]) -> isize {
    // SAFETY: sigset and mask calls on local sets; write on the caller's
    // buffer of its length; sigtimedwait with a zero timeout only takes a
    // SIGPIPE pending on this thread, which the write raised.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old);
        let ours = libc::sigismember(&old, libc::SIGPIPE) == 0;
        let r = libc::write(fd, buf.as_ptr().cast(), buf.len());
        let errno = crate::fresh::errno();
        if ours {
            if r < 0 && errno == libc::EPIPE {
                let zero = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero);
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
        *libc::__errno_location() = errno;
        r
    }
}

/// Accepts a connection: its descriptor (non-blocking, close-on-exec, not
/// registered yet) and the peer's address.
pub(crate) fn accept(h: Handle) -> Result<(i32, libc::sockaddr_storage, libc::socklen_t), IoError> {
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let fd = retry(h, Mode::Read, |fd| {
        len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: addr and len describe a buffer of len bytes.
        unsafe {
            libc::accept4(
                fd,
                (&mut addr as *mut libc::sockaddr_storage).cast(),
                &mut len,
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            ) as isize
        }
    })?;
    Ok((fd as i32, addr, len))
}

/// Connects `h`'s socket to `addr`, parking until the connection is made
/// or refused (the socket's `SO_ERROR`).
///
/// # Safety
/// `addr` points to `len` readable bytes of a socket address.
pub(crate) unsafe fn connect(
    h: Handle,
    addr: *const libc::sockaddr,
    len: libc::socklen_t,
) -> Result<(), IoError> {
    let pin = netpoll::pin(h)?;
    netpoll::reset(h, Mode::Write)?;
    let mut interrupted = false;
    loop {
        // SAFETY: the caller's address.
        if unsafe { libc::connect(pin.fd(), addr, len) } == 0 {
            return Ok(());
        }
        match crate::fresh::errno() {
            libc::EINTR => interrupted = true,
            libc::EINPROGRESS | libc::EALREADY => break,
            // Connected by the call a signal interrupted; otherwise the
            // socket was connected before (or listens): the caller's error.
            libc::EISCONN if interrupted => return Ok(()),
            e => return Err(IoError::Os(e)),
        }
    }
    loop {
        netpoll::wait(h, Mode::Write)?;
        let mut err: libc::c_int = 0;
        let mut err_len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: err and err_len describe an int.
        let r = unsafe {
            libc::getsockopt(
                pin.fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut err as *mut libc::c_int).cast(),
                &mut err_len,
            )
        };
        if r < 0 {
            return Err(IoError::Os(crate::fresh::errno()));
        }
        match err {
            // A readiness from before the connection was made (the
            // socket's registration) says no error too: connected only
            // if it has a peer (as Go's netFD.connect checks).
            0 => {
                // SAFETY: an all-zero sockaddr_storage is valid; peer
                // and len describe it.
                let mut peer: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
                let mut peer_len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
                // SAFETY: as above.
                let r = unsafe {
                    libc::getpeername(
                        pin.fd(),
                        (&mut peer as *mut libc::sockaddr_storage).cast(),
                        &mut peer_len,
                    )
                };
                match (r, crate::fresh::errno()) {
                    (0, _) => {
                        // Until connect is called again after an
                        // asynchronous connect completed, the kernel
                        // answers a connect to any address with 0: called
                        // once more (it answers 0 and marks the socket
                        // connected), a later one is EISCONN, as on a
                        // socket that connected at once.
                        // SAFETY: the caller's address, as above.
                        if unsafe { libc::connect(pin.fd(), addr, len) } == 0 {
                            return Ok(());
                        }
                        // Reset since getpeername: the kernel reports
                        // (and clears) the socket's error here.
                        match crate::fresh::errno() {
                            libc::EISCONN => return Ok(()),
                            e => return Err(IoError::Os(e)),
                        }
                    }
                    (_, libc::ENOTCONN) => continue,
                    (_, e) => return Err(IoError::Os(e)),
                }
            }
            // Not finished yet (a spurious readiness): wait again.
            libc::EINPROGRESS | libc::EALREADY | libc::EINTR => continue,
            e => return Err(IoError::Os(e)),
        }
    }
}

/// Receives one datagram into `buf` (Go's `FD.ReadFrom`): its length
/// and the sender's address.
pub(crate) fn recv_from(
    h: Handle,
    buf: &mut [u8],
) -> Result<(usize, libc::sockaddr_storage, libc::socklen_t), IoError> {
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let n = retry(h, Mode::Read, |fd| {
        len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: buf, addr and len describe valid buffers.
        unsafe {
            libc::recvfrom(
                fd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                0,
                (&mut addr as *mut libc::sockaddr_storage).cast(),
                &mut len,
            )
        }
    })?;
    Ok((n, addr, len))
}

/// Sends one datagram to `addr` (Go's `FD.WriteTo`); null `addr`: to the
/// connected peer.
///
/// # Safety
/// `addr` is null or points to `len` readable bytes of a socket address.
pub(crate) unsafe fn send_to(
    h: Handle,
    buf: &[u8],
    addr: *const libc::sockaddr,
    len: libc::socklen_t,
) -> Result<usize, IoError> {
    retry(h, Mode::Write, |fd| {
        // SAFETY: buf is valid; the caller's address.
        unsafe {
            libc::sendto(
                fd,
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_NOSIGNAL,
                addr,
                len,
            )
        }
    })
}
