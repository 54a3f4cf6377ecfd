//! Sockets for goroutines (Go's `net`: TCP, UDP and Unix-domain streams):
//! a read, write, accept or connect
//! that would block parks the goroutine on the poller instead of its
//! worker thread. Sockets are made with `socket2` (addresses, options) and
//! registered with the poller; errors are `std::io::Error`s, with Go's
//! messages for a passed deadline (`TimedOut`, "i/o timeout") and a closed
//! socket ("use of closed network connection").
//!
//! From a plain thread the same calls work and block that thread.

use super::netpoll::{self, CloseFd, Handle, PollError, Which};
use super::pollfd::{self, IoError};
use socket2::{Domain, SockAddr, Socket, Type};
use std::io::{self, Read, Write};
use std::mem::MaybeUninit;
use std::net::{Shutdown, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsRawFd, BorrowedFd, IntoRawFd};
use std::time::Instant;

/// A registered socket: its poller handle owns the descriptor.
struct Fd {
    handle: Handle,
}

impl Fd {
    fn register(socket: Socket) -> io::Result<Fd> {
        let fd = socket.into_raw_fd();
        match netpoll::open(fd) {
            Ok(handle) => Ok(Fd { handle }),
            Err(e) => {
                // SAFETY: the descriptor is ours and registered nowhere.
                unsafe { libc::close(fd) };
                Err(e)
            }
        }
    }

    /// Runs `f` with the socket, pinned (not closed under it).
    fn with<R>(&self, f: impl FnOnce(socket2::SockRef<'_>) -> io::Result<R>) -> io::Result<R> {
        let pin = netpoll::pin(self.handle).map_err(|e| closed(e).into_io())?;
        // SAFETY: the pin keeps the descriptor open for this borrow.
        let fd = unsafe { BorrowedFd::borrow_raw(pin.fd()) };
        f(socket2::SockRef::from(&fd))
    }

    fn set_deadline(&self, which: Which, at: Option<Instant>) -> io::Result<()> {
        let ns = at.map(|at| {
            let now = Instant::now();
            if at <= now {
                0
            } else {
                i64::try_from((at - now).as_nanos()).unwrap_or(i64::MAX)
            }
        });
        // Deadlines are timers, which the scheduler's workers fire.
        super::config::scheduler();
        netpoll::set_deadline(self.handle, which, ns).map_err(|e| closed(e).into_io())
    }
}

/// The poller's reasons as this API reports them: a handle of ours that
/// the poller no longer knows was closed.
fn closed(e: PollError) -> IoError {
    match e {
        PollError::BadHandle => IoError::Poll(PollError::Closing),
        e => IoError::Poll(e),
    }
}

fn io_err(e: IoError) -> io::Error {
    match e {
        IoError::Poll(p) => closed(p).into_io(),
        e => e.into_io(),
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        let _ = netpoll::close(self.handle, CloseFd::Yes);
    }
}

/// Go's `SetDeadline`, `SetReadDeadline`, `SetWriteDeadline` and `Close`
/// for a socket type with an `fd: Fd`.
macro_rules! deadlines_and_close {
    ($t:ty) => {
        impl $t {
            /// Go's `SetDeadline`: reads and writes after `at` fail with
            /// `TimedOut` ("i/o timeout"), blocked ones included; `None`
            /// clears.
            pub fn set_deadline(&self, at: Option<Instant>) -> io::Result<()> {
                self.fd.set_deadline(Which::Both, at)
            }

            /// Go's `SetReadDeadline`: as [`set_deadline`](Self::set_deadline),
            /// for reads only.
            pub fn set_read_deadline(&self, at: Option<Instant>) -> io::Result<()> {
                self.fd.set_deadline(Which::Read, at)
            }

            /// Go's `SetWriteDeadline`: as [`set_deadline`](Self::set_deadline),
            /// for writes only.
            pub fn set_write_deadline(&self, at: Option<Instant>) -> io::Result<()> {
                self.fd.set_deadline(Which::Write, at)
            }

            /// Closes it now (Go's `Close`): a goroutine blocked on it
            /// returns "use of closed network connection", and so does
            /// every later call; dropping it closes it too.
            pub fn close(&self) -> io::Result<()> {
                self.fd.close()
            }
        }
    };
}

/// A stream connection: deadlines and close, `Read` and `Write` (on the
/// value and on a shared reference, so one goroutine may read while
/// another writes), and reads into memory not yet initialised.
macro_rules! connection {
    ($t:ty) => {
        deadlines_and_close!($t);

        impl $t {
            /// Reads into `buf`, which need not be initialised (a buffer
            /// from `Box::new_uninit_slice` costs no memory until the
            /// kernel writes it, as Go's fresh `make([]byte, n)` does not);
            /// the first `n` bytes returned are initialised.
            pub fn read_uninit(&self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
                self.fd.read_uninit(buf)
            }
        }

        impl Read for &$t {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.fd.read(buf)
            }
        }

        impl Write for &$t {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.fd.write(buf)
            }

            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }

        impl Read for $t {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.fd.read(buf)
            }
        }

        impl Write for $t {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.fd.write(buf)
            }

            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
    };
}

fn each_addr<A: ToSocketAddrs, T>(
    addr: A,
    mut f: impl FnMut(SocketAddr) -> io::Result<T>,
) -> io::Result<T> {
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        match f(a) {
            Ok(t) => return Ok(t),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to use")))
}

fn stream_socket(addr: &SocketAddr) -> io::Result<Socket> {
    Socket::new(
        Domain::for_address(*addr),
        Type::STREAM.nonblocking().cloexec(),
        None,
    )
}

fn to_sockaddr(storage: libc::sockaddr_storage, len: libc::socklen_t) -> SockAddr {
    // SAFETY: the kernel filled `len` bytes of the address.
    unsafe { SockAddr::new(storage, len) }
}

/// A TCP listener (Go's `net.Listen("tcp", ...)`).
pub struct TcpListener {
    fd: Fd,
}

impl TcpListener {
    /// Binds and listens (backlog as Go's: the system's `somaxconn`).
    pub fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        each_addr(addr, |a| {
            let s = stream_socket(&a)?;
            s.set_reuse_address(true)?;
            s.bind(&SockAddr::from(a))?;
            s.listen(4096)?;
            Ok(TcpListener {
                fd: Fd::register(s)?,
            })
        })
    }

    /// Waits for a connection.
    pub fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (fd, storage, len) = pollfd::accept(self.fd.handle).map_err(io_err)?;
        let addr = to_sockaddr(storage, len);
        // SAFETY: accept4 returned a new descriptor that we own.
        let socket = unsafe { <Socket as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let peer = addr
            .as_socket()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not an IP address"))?;
        socket.set_nodelay(true)?;
        Ok((
            TcpStream {
                fd: Fd::register(socket)?,
            },
            peer,
        ))
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.fd.with(|s| s.local_addr()).and_then(ip_addr)
    }

    /// A deadline for [`accept`](Self::accept) (`None`: none).
    pub fn set_deadline(&self, at: Option<Instant>) -> io::Result<()> {
        self.fd.set_deadline(Which::Both, at)
    }
}

fn ip_addr(a: SockAddr) -> io::Result<SocketAddr> {
    a.as_socket()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not an IP address"))
}

/// A TCP connection (Go's `net.TCPConn`). Reads and writes from several
/// goroutines at once are allowed one reader and one writer at a time.
pub struct TcpStream {
    fd: Fd,
}

impl TcpStream {
    /// Connects (parking until the connection is made).
    pub fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        each_addr(addr, |a| {
            let s = stream_socket(&a)?;
            s.set_nodelay(true)?;
            let fd = Fd::register(s)?;
            let sa = SockAddr::from(a);
            // SAFETY: sa holds a socket address of its length.
            unsafe { pollfd::connect(fd.handle, sa.as_ptr(), sa.len()) }.map_err(io_err)?;
            Ok(TcpStream { fd })
        })
    }

    /// This end's address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.fd.with(|s| s.local_addr()).and_then(ip_addr)
    }

    /// The other end's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.fd.with(|s| s.peer_addr()).and_then(ip_addr)
    }

    /// Shuts down reading, writing or both (Go's `CloseRead`/`CloseWrite`).
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.fd.with(|s| s.shutdown(how))
    }

    /// `TCP_NODELAY` (Go sets it on every connection; so does this type:
    /// see [`connect`](Self::connect) and [`TcpListener::accept`]).
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        self.fd.with(|s| s.set_nodelay(on))
    }

    /// The raw descriptor (valid while the stream lives).
    pub fn as_raw_fd(&self) -> i32 {
        self.fd.with(|s| Ok(s.as_raw_fd())).unwrap_or(-1)
    }
}

connection!(TcpStream);

impl Fd {
    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        pollfd::read(self.handle, buf).map_err(io_err)
    }

    fn read_uninit(&self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        pollfd::read_uninit(self.handle, buf).map_err(io_err)
    }

    fn write(&self, buf: &[u8]) -> io::Result<usize> {
        match pollfd::write(self.handle, buf) {
            Ok(n) => Ok(n),
            Err((n, _)) if n > 0 => Ok(n),
            Err((_, e)) => Err(io_err(e)),
        }
    }

    fn close(&self) -> io::Result<()> {
        netpoll::close(self.handle, CloseFd::Yes).map_err(|e| closed(e).into_io())
    }
}

/// A UDP socket (Go's `net.UDPConn`).
pub struct UdpSocket {
    fd: Fd,
}

impl UdpSocket {
    /// Binds a socket to `addr` (port 0: any free port).
    pub fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        each_addr(addr, |a| {
            let s = Socket::new(
                Domain::for_address(a),
                Type::DGRAM.nonblocking().cloexec(),
                None,
            )?;
            s.bind(&SockAddr::from(a))?;
            Ok(UdpSocket {
                fd: Fd::register(s)?,
            })
        })
    }

    /// Sets the default peer: `send` and `recv` use it, and datagrams
    /// from others are dropped.
    pub fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        each_addr(addr, |a| self.fd.with(|s| s.connect(&SockAddr::from(a))))
    }

    /// Waits for a datagram: its length (the rest is cut off if `buf` is
    /// short) and its sender.
    pub fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (n, storage, len) = pollfd::recv_from(self.fd.handle, buf).map_err(io_err)?;
        Ok((n, ip_addr(to_sockaddr(storage, len))?))
    }

    /// Sends one datagram to `addr`.
    pub fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], addr: A) -> io::Result<usize> {
        each_addr(addr, |a| {
            let sa = SockAddr::from(a);
            // SAFETY: sa holds an address of its length.
            unsafe { pollfd::send_to(self.fd.handle, buf, sa.as_ptr(), sa.len()) }.map_err(io_err)
        })
    }

    /// Receives from the connected peer.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.fd.read(buf)
    }

    /// Sends to the connected peer.
    pub fn send(&self, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: no address: the connected peer's.
        unsafe { pollfd::send_to(self.fd.handle, buf, std::ptr::null(), 0) }.map_err(io_err)
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.fd.with(|s| s.local_addr()).and_then(ip_addr)
    }
}

deadlines_and_close!(UdpSocket);

/// A Unix-domain stream listener (Go's `net.Listen("unix", path)`).
pub struct UnixListener {
    fd: Fd,
}

impl UnixListener {
    /// Binds to `path` (which must not exist) and listens.
    pub fn bind<P: AsRef<std::path::Path>>(path: P) -> io::Result<UnixListener> {
        let s = Socket::new(Domain::UNIX, Type::STREAM.nonblocking().cloexec(), None)?;
        s.bind(&SockAddr::unix(path)?)?;
        s.listen(4096)?;
        Ok(UnixListener {
            fd: Fd::register(s)?,
        })
    }

    /// Waits for a connection.
    pub fn accept(&self) -> io::Result<UnixStream> {
        let (fd, _, _) = pollfd::accept(self.fd.handle).map_err(io_err)?;
        // SAFETY: accept4 returned a new descriptor that we own.
        let socket = unsafe { <Socket as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        Ok(UnixStream {
            fd: Fd::register(socket)?,
        })
    }

    /// A deadline for [`accept`](Self::accept).
    pub fn set_deadline(&self, at: Option<Instant>) -> io::Result<()> {
        self.fd.set_deadline(Which::Both, at)
    }
}

/// A Unix-domain stream connection (Go's `net.UnixConn`).
pub struct UnixStream {
    fd: Fd,
}

impl UnixStream {
    /// Connects to the listener at `path`.
    pub fn connect<P: AsRef<std::path::Path>>(path: P) -> io::Result<UnixStream> {
        let s = Socket::new(Domain::UNIX, Type::STREAM.nonblocking().cloexec(), None)?;
        let fd = Fd::register(s)?;
        let sa = SockAddr::unix(path)?;
        // SAFETY: sa holds an address of its length.
        unsafe { pollfd::connect(fd.handle, sa.as_ptr(), sa.len()) }.map_err(io_err)?;
        Ok(UnixStream { fd })
    }

    /// A connected pair (`socketpair`).
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = Socket::pair(Domain::UNIX, Type::STREAM.nonblocking().cloexec(), None)?;
        Ok((
            UnixStream {
                fd: Fd::register(a)?,
            },
            UnixStream {
                fd: Fd::register(b)?,
            },
        ))
    }

    /// Shuts down reading, writing or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.fd.with(|s| s.shutdown(how))
    }
}

connection!(UnixStream);
