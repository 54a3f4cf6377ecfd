//! The network poller under attack (tests/c/net_adversary.c for the C
//! ABI, and `defergc::go::net` below): forged and stale handles,
//! descriptors that are not sockets or were closed behind the runtime's
//! back, closes racing each other and blocked operations, lengths no
//! buffer has. Each C case runs in its own process with a time limit and
//! must print "ok" (it checks the documented codes itself); a hang, a
//! signal, a failed check or Rust's own abort text fails it.
//!
//! Cases that document a bug (each says what it expects) fail until it is
//! fixed: write-zero, write-pipe-epipe, double-close-race,
//! stale-fd-reused, stale-fd-net-close, poll-close-wakes,
//! net-close-wakes-poll-wait, huge-len, connect-eisconn, strerror-huge,
//! and the Rust API's write_empty_after_close and concurrent_close.

mod child;
mod cprog;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

fn exe() -> std::path::PathBuf {
    cprog::compile(
        "net_adversary",
        &["tests/c/net_adversary.c"],
        &["-D_GNU_SOURCE"],
    )
}

/// Runs `case`: it must end with status 0 and "ok" within `limit`.
fn case(case: &str, limit: Duration) {
    let mut cmd = Command::new(exe());
    cmd.arg(case).env("GOMAXPROCS", "2");
    let out = match cprog::run_with_deadline(&mut cmd, limit) {
        Ok(out) => out,
        Err(text) => panic!("{case}: still running after {limit:?} (a hang):\n{text}"),
    };
    let text = cprog::text(&out);
    assert!(
        !text.contains("fatal runtime error") && !text.contains("thread '"),
        "{case}: Rust's own abort text escaped ({}):\n{text}",
        out.status
    );
    if let Some(sig) = out.status.signal() {
        panic!("{case}: killed by signal {sig}:\n{text}");
    }
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim_end() == "ok",
        "{case}: expected \"ok\" and status 0, got {}:\n{text}",
        out.status
    );
}

const LIMIT: Duration = Duration::from_secs(60);

/// Every case of the program has a test here.
#[test]
fn every_case_has_a_test() {
    let out = cprog::run(&exe(), &["list"], &[]);
    assert!(out.status.success());
    let listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let tested = [
        "write-zero",
        "write-pipe-epipe",
        "double-close-race",
        "stale-fd-reused",
        "stale-fd-net-close",
        "poll-close-wakes",
        "net-close-wakes-poll-wait",
        "huge-len",
        "connect-eisconn",
        "strerror-huge",
        "connect-spurious",
        "close-blocked",
        "odd-codes",
        "deadline-parked",
        "plain-thread",
    ];
    assert_eq!(listed, tested);
}

/// BUG: a write of 0 bytes on a forged or closed handle returns 0;
/// expected DEFERGC_EBADHANDLE (pollfd::write never looks at the handle
/// when there is nothing to write).
#[test]
fn write_zero() {
    case("write-zero", LIMIT);
}

/// BUG: defergc_net_write to a pipe whose reader is gone raises SIGPIPE
/// (the fallback to write(2) for non-sockets); expected DEFERGC_EOS -
/// EPIPE, as the header promises ("no SIGPIPE").
#[test]
fn write_pipe_epipe() {
    case("write-pipe-epipe", LIMIT);
}

/// BUG: two threads closing one handle at once can both succeed, and the
/// record is recycled twice (two later opens get one handle); expected
/// one 0 and one DEFERGC_EBADHANDLE.
#[test]
fn double_close_race() {
    case("double-close-race", LIMIT);
}

/// BUG: the late defergc_poll_close of a handle whose descriptor was
/// closed behind the runtime's back removes the registration of the new
/// descriptor with the same number; a wait on it sleeps through its data.
/// Expected: the new handle's wait returns 0 when data arrives.
#[test]
fn stale_fd_reused() {
    case("stale-fd-reused", LIMIT);
}

/// BUG: as above with defergc_net_close, which also closes the number,
/// now another handle's descriptor. Expected: the new handle reads its byte.
#[test]
fn stale_fd_net_close() {
    case("stale-fd-net-close", LIMIT);
}

/// BUG: a goroutine parked in defergc_poll_wait gets DEFERGC_EBADHANDLE
/// when the handle is closed under it; expected DEFERGC_ECLOSED.
#[test]
fn poll_close_wakes() {
    case("poll-close-wakes", LIMIT);
}

/// BUG: as above, with defergc_net_close ("every goroutine parked on the
/// handle returns DEFERGC_ECLOSED at once").
#[test]
fn net_close_wakes_poll_wait() {
    case("net-close-wakes-poll-wait", LIMIT);
}

/// BUG: lengths above PTRDIFF_MAX become a Rust slice (UB; a debug build
/// aborts with Rust's "unsafe precondition(s) violated"); expected
/// DEFERGC_EINVAL.
#[test]
fn huge_len() {
    case("huge-len", LIMIT);
}

/// BUG: connect of a connected socket (elsewhere) or of a listener
/// returns 0; expected DEFERGC_EOS - EISCONN.
#[test]
fn connect_eisconn() {
    case("connect-eisconn", LIMIT);
}

/// BUG: a code whose errno does not fit an int is truncated to another
/// errno's text; expected "unknown error".
#[test]
fn strerror_huge() {
    case("strerror-huge", LIMIT);
}

/// A connect whose SYN is dropped (full accept queue) must time out at
/// its write deadline, never report a connection that does not exist.
#[test]
fn connect_spurious() {
    case("connect-spurious", LIMIT);
}

/// Reads, writes, accepts and connects blocked in goroutines return
/// DEFERGC_ECLOSED when their handle is closed.
#[test]
fn close_blocked() {
    case("close-blocked", LIMIT);
}

/// Odd descriptors (negative, huge, /dev/null, a directory, an epoll
/// instance, an eventfd), odd arguments, deadlines at the extremes, the
/// codes after an unblock and a close.
#[test]
fn odd_codes() {
    case("odd-codes", LIMIT);
}

/// Deadlines moved into the past, shortened and cleared under a parked
/// reader; a parked reader and writer woken by one close.
#[test]
fn deadline_parked() {
    case("deadline-parked", LIMIT);
}

/// The calls from a plain thread, with no runtime started.
#[test]
fn plain_thread() {
    case("plain-thread", LIMIT);
}

// ---- the Rust API ---------------------------------------------------------

use defergc::go::net::{TcpListener, TcpStream, UnixStream};
use std::io::Write;

/// BUG: Go's conn.Write(nil) after Close is "use of closed network
/// connection"; here an empty write after close is Ok(0).
#[test]
fn write_empty_after_close() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    s.close().unwrap();
    let r = (&s).write(&[]);
    assert!(
        r.is_err(),
        "an empty write after close: {r:?}, expected \"use of closed network connection\""
    );
    assert!((&s).write(b"x").is_err());
}

/// BUG: close(&self) from two threads at once: both may return Ok, and
/// the descriptor's number is closed twice (the second close may close a
/// descriptor someone else opened meanwhile) and its record recycled
/// twice. Expected: one Ok, one "use of closed network connection".
/// Run in a child process (the bug closes numbers it does not own).
#[test]
fn concurrent_close() {
    const CHILD: &str = "NET_ADVERSARY_CONCURRENT_CLOSE";
    if std::env::var_os(CHILD).is_some() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Arc, Barrier};
        let mut both = 0;
        for _ in 0..3000 {
            let (a, _b) = UnixStream::pair().unwrap();
            let a = Arc::new(a);
            let barrier = Arc::new(Barrier::new(2));
            let oks = Arc::new(AtomicUsize::new(0));
            let t = {
                let (a, barrier, oks) = (a.clone(), barrier.clone(), oks.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    if a.close().is_ok() {
                        oks.fetch_add(1, Ordering::SeqCst);
                    }
                })
            };
            barrier.wait();
            if a.close().is_ok() {
                oks.fetch_add(1, Ordering::SeqCst);
            }
            t.join().unwrap();
            if oks.load(Ordering::SeqCst) == 2 {
                both += 1;
            }
        }
        println!("closed twice with success: {both}");
        assert_eq!(both, 0, "{both} of 3000 streams were closed twice with success");
        return;
    }
    let out = child::run_test("concurrent_close", &[(CHILD, "1")], LIMIT)
        .expect("concurrent_close: a hang");
    assert!(out.status.success(), "{}", child::text(&out));
}
