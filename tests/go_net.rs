//! Goroutines on sockets (`defergc::go::net`), loopback only: echo with
//! every byte checked, deadlines, close waking a blocked reader, the
//! deadlock check and the poller, and plain threads.

mod child;

use defergc::go::net::{TcpListener, TcpStream};
use defergc::go::{self, Chan, WaitGroup};
use serial_test::serial;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn run(f: impl FnOnce() + Send + 'static) {
    assert_eq!(go::run(f), 0);
}

/// A seeded byte pattern: connection `c`'s message `i`.
fn message(c: u64, i: u64, len: usize) -> Vec<u8> {
    let mut x = c.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// An echo server goroutine per connection and a client goroutine per
/// connection, ping-ponging checked messages: every byte comes back, in
/// order, to the connection that sent it.
#[test]
#[serial]
fn echo_many_connections() {
    const CONNS: u64 = 200;
    const ROUNDS: u64 = 20;
    let echoed = Arc::new(AtomicU64::new(0));
    let total = echoed.clone();
    run(move || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        go::go(move || loop {
            let (c, _) = match l.accept() {
                Ok(x) => x,
                Err(e) => panic!("accept: {e}"),
            };
            go::go(move || {
                let mut buf = [0u8; 4096];
                loop {
                    let n = (&c).read(&mut buf).unwrap();
                    if n == 0 {
                        return;
                    }
                    (&c).write_all(&buf[..n]).unwrap();
                }
            });
        });
        let wg = Arc::new(WaitGroup::new());
        for conn in 0..CONNS {
            wg.add(1).unwrap();
            let (wg, echoed) = (wg.clone(), echoed.clone());
            go::go(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                for i in 0..ROUNDS {
                    let m = message(conn, i, 1 + ((conn * 31 + i * 97) % 3000) as usize);
                    s.write_all(&m).unwrap();
                    let mut back = vec![0u8; m.len()];
                    s.read_exact(&mut back).unwrap();
                    assert!(back == m, "connection {conn} message {i}: echo differs");
                    echoed.fetch_add(m.len() as u64, Ordering::Relaxed);
                }
                wg.done().unwrap();
            });
        }
        wg.wait();
    });
    let expected: u64 = (0..CONNS)
        .flat_map(|c| (0..ROUNDS).map(move |i| 1 + (c * 31 + i * 97) % 3000))
        .sum();
    assert_eq!(total.load(Ordering::Relaxed), expected);
}

/// A read deadline ends a blocked read with Go's "i/o timeout"
/// (`TimedOut`); clearing it lets the next read wait for data again.
#[test]
#[serial]
fn read_deadline_fires_and_clears() {
    run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let accepted = Chan::<u8>::new(0);
        let a2 = accepted.clone();
        go::go(move || {
            let (mut c, _) = l.accept().unwrap();
            a2.recv();
            c.write_all(b"late").unwrap();
            a2.recv();
        });
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_deadline(Some(Instant::now() + Duration::from_millis(20)))
            .unwrap();
        let mut buf = [0u8; 8];
        let e = s.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert_eq!(e.to_string(), "i/o timeout");
        // Still expired until changed.
        assert_eq!(s.read(&mut buf).unwrap_err().kind(), ErrorKind::TimedOut);
        s.set_read_deadline(None).unwrap();
        accepted.send(1);
        s.read_exact(&mut buf[..4]).unwrap();
        assert_eq!(&buf[..4], b"late");
        accepted.send(2);
    });
}

/// A deadline already passed fails a read at once, without waiting.
#[test]
#[serial]
fn past_deadline_fails_at_once() {
    run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        go::go(move || {
            let _c = l.accept().unwrap();
            go::sleep(Duration::from_millis(200));
        });
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_deadline(Some(Instant::now() - Duration::from_secs(1)))
            .unwrap();
        let mut buf = [0u8; 1];
        assert_eq!(s.read(&mut buf).unwrap_err().kind(), ErrorKind::TimedOut);
        assert_eq!(s.write(b"x").unwrap_err().kind(), ErrorKind::TimedOut);
    });
}

/// Dropping a stream (closing it) while a goroutine reads it wakes the
/// reader with Go's "use of closed network connection".
#[test]
#[serial]
fn close_wakes_blocked_reader() {
    run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        go::go(move || {
            let _c = l.accept().unwrap();
            go::sleep(Duration::from_millis(500));
        });
        let s = Arc::new(TcpStream::connect(addr).unwrap());
        let result = Chan::<String>::new(1);
        {
            let (s, result) = (s.clone(), result.clone());
            go::go(move || {
                let mut buf = [0u8; 1];
                let r = (&*s).read(&mut buf);
                result.send(format!("{:?}", r.map_err(|e| e.to_string())));
            });
        }
        go::sleep(Duration::from_millis(10));
        // The reader holds one reference: close through a shutdown of the
        // registration, as Go's Close does, from here.
        close_now(&s);
        assert_eq!(
            result.recv().unwrap(),
            "Err(\"use of closed network connection\")"
        );
    });
}

fn close_now(s: &TcpStream) {
    s.close().unwrap();
}

/// A goroutine blocked on a socket is not asleep for good: no deadlock is
/// reported while it waits, and the program ends when its data comes.
#[test]
#[serial]
fn waiting_on_a_socket_is_not_a_deadlock() {
    run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        // A plain thread (not a goroutine) writes after a while; every
        // goroutine is blocked meanwhile, main in the read.
        std::thread::spawn(move || {
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            c.write_all(b"hello").unwrap();
            std::thread::sleep(Duration::from_millis(100));
        });
        let (mut c, _) = l.accept().unwrap();
        let mut buf = [0u8; 5];
        c.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"hello");
    });
}

/// The same calls from a plain thread block that thread and work.
#[test]
#[serial]
fn plain_threads() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut buf = [0u8; 3];
        c.read_exact(&mut buf).unwrap();
        c.write_all(&buf).unwrap();
    });
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"abc").unwrap();
    let mut buf = [0u8; 3];
    s.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"abc");
    t.join().unwrap();
}

/// Raises the open-file limit to at least `need` (soft up to hard);
/// whether it could.
fn raise_nofile(need: u64) -> bool {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid rlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 || r.rlim_max < need {
        return false;
    }
    r.rlim_cur = r.rlim_max;
    // SAFETY: as above.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) == 0 }
}

const MANY: u64 = 10_000;
const MANY_CHILD: &str = "DEFERGC_NET_MANY_CHILD";

/// 10,000 connections at once on one server process: a goroutine per
/// connection on each side (the clients in a child process, each side
/// needs 10,000 descriptors), all connected before any finishes; every
/// byte of two checked messages per connection comes back.
#[test]
#[serial]
fn ten_thousand_connections() {
    if let Some(addr) = std::env::var_os(MANY_CHILD) {
        return many_clients(addr.to_str().unwrap().parse().unwrap());
    }
    if !raise_nofile(MANY + 200) {
        eprintln!(
            "SKIPPED ten_thousand_connections: the open-file hard limit is below {}",
            MANY + 200
        );
        return;
    }
    let served = Arc::new(AtomicU64::new(0));
    let served2 = served.clone();
    run(move || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let child = std::thread::spawn(move || {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "ten_thousand_connections", "--nocapture"])
                .env(MANY_CHILD, addr.to_string())
                .output()
                .unwrap()
        });
        let wg = Arc::new(WaitGroup::new());
        for _ in 0..MANY {
            let (c, _) = l.accept().unwrap();
            wg.add(1).unwrap();
            let (wg, served) = (wg.clone(), served2.clone());
            go::go(move || {
                let mut buf = [0u8; 512];
                loop {
                    let n = (&c).read(&mut buf).unwrap();
                    if n == 0 {
                        break;
                    }
                    (&c).write_all(&buf[..n]).unwrap();
                    served.fetch_add(n as u64, Ordering::Relaxed);
                }
                wg.done().unwrap();
            });
        }
        wg.wait();
        // Joining blocks this worker; every goroutine has finished.
        let out = child.join().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "client process failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(&format!("clients ok {MANY}")), "{stdout}");
    });
    assert_eq!(served.load(Ordering::Relaxed), MANY * (100 + 200));
}

fn many_clients(addr: std::net::SocketAddr) {
    assert!(
        raise_nofile(MANY + 200),
        "client: cannot raise the open-file limit"
    );
    let ok = Arc::new(AtomicU64::new(0));
    let ok2 = ok.clone();
    run(move || {
        let connected = Arc::new(WaitGroup::new());
        connected.add(MANY as i32).unwrap();
        let finished = Arc::new(WaitGroup::new());
        for conn in 0..MANY {
            finished.add(1).unwrap();
            let (connected, finished, ok) = (connected.clone(), finished.clone(), ok2.clone());
            go::go(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                for (i, len) in [(0, 100), (1, 200)] {
                    let m = message(conn, i, len);
                    s.write_all(&m).unwrap();
                    let mut back = vec![0u8; len];
                    s.read_exact(&mut back).unwrap();
                    assert!(back == m, "connection {conn} message {i}: echo differs");
                    if i == 0 {
                        // All 10,000 are open before any goes on.
                        connected.done().unwrap();
                        connected.wait();
                    }
                }
                ok.fetch_add(1, Ordering::Relaxed);
                finished.done().unwrap();
            });
        }
        finished.wait();
    });
    println!("clients ok {}", ok.load(Ordering::Relaxed));
}

/// A child forked by a goroutine that holds a listener serves a
/// connection on it: the child has a poller of its own, and its one
/// goroutine parks in accept and read and is woken there. What the child
/// unregisters stays registered in the parent (an inherited epoll
/// instance would be the parent's own: the child closing its copy of a
/// socket would take the parent's registration with it).
#[test]
#[serial]
fn a_forked_child_serves_a_connection() {
    run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        // The parent's poller is busy with a waiter of its own when the
        // fork comes (a goroutine blocked in a read).
        let (a, b) = {
            let c = TcpStream::connect(addr).unwrap();
            let (s, _) = l.accept().unwrap();
            (c, s)
        };
        let a = Arc::new(a);
        let blocked = {
            let a = a.clone();
            let done = Chan::<u8>::new(1);
            let d = done.clone();
            go::go(move || {
                let mut buf = [0u8; 1];
                let _ = (&*a).read(&mut buf);
                d.send(1);
            });
            done
        };
        go::sleep(Duration::from_millis(10));
        // SAFETY: the child runs only the runtime and _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            drop(b);
            let served = (|| -> std::io::Result<()> {
                let (mut c, _) = l.accept()?;
                let mut buf = [0u8; 5];
                c.read_exact(&mut buf)?;
                c.write_all(&buf)?;
                Ok(())
            })();
            // SAFETY: ending the child without running the parent's exit.
            unsafe { libc::_exit(i32::from(served.is_err())) };
        }
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(b"fork!").unwrap();
        let mut buf = [0u8; 5];
        s.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"fork!");
        let mut status = 0;
        // SAFETY: waiting for our child.
        let waited = go::syscall(|| unsafe { libc::waitpid(pid, &mut status, 0) });
        assert_eq!(waited, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child status {status:#x}"
        );
        // The parent's registrations survived the child's close of `b`: a
        // reader parked on `b` is woken by data that comes after it parked.
        b.set_read_deadline(Some(Instant::now() + Duration::from_secs(10)))
            .unwrap();
        let got = Chan::<String>::new(1);
        {
            let got = got.clone();
            go::go(move || {
                let mut four = [0u8; 4];
                let r = (&b).read_exact(&mut four);
                got.send(match r {
                    Ok(()) => String::from_utf8_lossy(&four).into_owned(),
                    Err(e) => e.to_string(),
                });
            });
        }
        go::sleep(Duration::from_millis(20));
        (&*a).write_all(b"ping").unwrap();
        assert_eq!(
            got.recv().unwrap(),
            "ping",
            "the parent's socket lost its registration to the child"
        );
        // The parent's own waiter is still served by its poller.
        a.close().unwrap();
        assert_eq!(blocked.recv(), Some(1));
    });
}

/// UDP: datagrams keep their boundaries and their senders; a read
/// deadline ends a receive that nothing answers.
#[test]
#[serial]
fn udp_datagrams_and_deadline() {
    run(|| {
        use defergc::go::net::UdpSocket;
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let aa = a.local_addr().unwrap();
        let a = Arc::new(a);
        {
            let a = a.clone();
            go::go(move || {
                let mut buf = [0u8; 2048];
                for _ in 0..3 {
                    let (n, from) = a.recv_from(&mut buf).unwrap();
                    a.send_to(&buf[..n], from).unwrap();
                }
            });
        }
        for len in [1usize, 100, 1400] {
            let m = message(9, len as u64, len);
            b.send_to(&m, aa).unwrap();
            let mut back = [0u8; 2048];
            let (n, from) = b.recv_from(&mut back).unwrap();
            assert_eq!((n, from), (len, aa));
            assert!(back[..n] == m[..]);
        }
        b.set_read_deadline(Some(Instant::now() + Duration::from_millis(20)))
            .unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(
            b.recv_from(&mut buf).unwrap_err().kind(),
            ErrorKind::TimedOut
        );
    });
}

/// Unix-domain streams: a listener on a path, and a socket pair.
#[test]
#[serial]
fn unix_streams() {
    run(|| {
        use defergc::go::net::{UnixListener, UnixStream};
        let dir = std::env::temp_dir().join(format!("defergc-unix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sock");
        let _ = std::fs::remove_file(&path);
        let l = UnixListener::bind(&path).unwrap();
        go::go(move || {
            let mut c = l.accept().unwrap();
            let mut buf = [0u8; 5];
            c.read_exact(&mut buf).unwrap();
            c.write_all(&buf).unwrap();
        });
        let mut s = UnixStream::connect(&path).unwrap();
        s.write_all(b"unix!").unwrap();
        let mut buf = [0u8; 5];
        s.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"unix!");
        std::fs::remove_dir_all(&dir).unwrap();

        let (a, mut b) = UnixStream::pair().unwrap();
        let a = Arc::new(a);
        {
            let a = a.clone();
            go::go(move || {
                let mut buf = [0u8; 3];
                (&*a).read_exact(&mut buf).unwrap();
                (&*a).write_all(&buf).unwrap();
            });
        }
        b.write_all(b"abc").unwrap();
        let mut back = [0u8; 3];
        b.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"abc");
    });
}

/// Reads into an uninitialised buffer: every message arrives whole and in
/// order, and a read on a closed peer reports the end of the stream.
#[test]
#[serial]
fn read_uninit_gets_every_byte() {
    run(|| {
        use defergc::go::net::UnixStream;
        let (a, b) = UnixStream::pair().unwrap();
        go::go(move || {
            for i in 0..64 {
                (&a).write_all(&message(7, i, 1000 + i as usize)).unwrap();
            }
            a.close().unwrap();
        });
        let mut want = Vec::new();
        for i in 0..64 {
            want.extend(message(7, i, 1000 + i as usize));
        }
        let mut got = Vec::new();
        let mut buf = Box::new_uninit_slice(777);
        loop {
            let n = b.read_uninit(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            // SAFETY: the read initialised its first n bytes.
            got.extend_from_slice(unsafe {
                std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n)
            });
        }
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the bytes read differ from those written");
    });
}

const BUSY_CHILD: &str = "DEFERGC_TEST_BUSY_POLL_CHILD";

/// With two processors: the worker that polled takes a processor to run
/// what it readied, and the network is still watched while that goroutine
/// keeps its worker busy. Reader R, readied first, spins until reader Q
/// has run; Q is readied only if another worker polls. Run in a child
/// process with GOMAXPROCS=2; a child that hangs is killed after 60 s and
/// fails the test.
#[test]
#[serial]
fn a_busy_worker_leaves_the_poll_to_another() {
    busy_poll_case("a_busy_worker_leaves_the_poll_to_another", "socket");
}

/// The same when R is readied by a channel send from a plain thread, and
/// the worker handed a processor for it may be the one that was polling:
/// the worker woken spinning for R wakes another when it finds R, and that
/// one, finding nothing, polls.
#[test]
#[serial]
fn a_goroutine_readied_by_a_thread_leaves_the_poller_polling() {
    busy_poll_case(
        "a_goroutine_readied_by_a_thread_leaves_the_poller_polling",
        "chan",
    );
}

fn busy_poll_case(test: &str, how: &str) {
    if let Some(how) = std::env::var_os(BUSY_CHILD) {
        return busy_poll_child(how == "chan");
    }
    two_processor_child(
        test,
        (BUSY_CHILD, how),
        "the second reader never ran while the first kept its worker busy",
        "busy poll ok",
    );
}

/// Runs `test` in a child process with `env` and GOMAXPROCS=2: it must
/// succeed within 60 s (else `hang` is the failure) and print `ok`.
fn two_processor_child(test: &str, env: (&str, &str), hang: &str, ok: &str) {
    let out =
        child::run_test(test, &[env, ("GOMAXPROCS", "2")], Duration::from_secs(60)).expect(hang);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(ok), "{stdout}");
}

fn busy_poll_child(by_chan: bool) {
    use defergc::go::net::UnixStream;
    use std::sync::atomic::AtomicBool;
    run(move || {
        let kick: Chan<u8> = Chan::new(0);
        let (ra, wa) = UnixStream::pair().unwrap();
        let (rq, wq) = UnixStream::pair().unwrap();
        let running = Arc::new(AtomicBool::new(false));
        let q_ran = Arc::new(AtomicBool::new(false));
        let wg = Arc::new(WaitGroup::new());
        wg.add(2).unwrap();
        {
            let (running, q_ran, wg) = (running.clone(), q_ran.clone(), wg.clone());
            let kick = kick.clone();
            go::go(move || {
                if by_chan {
                    kick.recv().unwrap();
                } else {
                    let mut b = [0u8; 1];
                    (&ra).read_exact(&mut b).unwrap();
                }
                running.store(true, Ordering::SeqCst);
                // No runtime call: this worker is busy until Q has run.
                while !q_ran.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                wg.done().unwrap();
            });
        }
        let read_q = {
            let (q_ran, wg) = (q_ran.clone(), wg.clone());
            move || {
                let mut b = [0u8; 1];
                (&rq).read_exact(&mut b).unwrap();
                q_ran.store(true, Ordering::SeqCst);
                wg.done().unwrap();
            }
        };
        let client = std::thread::spawn(move || {
            // Both readers park first (if one has not yet, the test
            // passes without testing the case).
            std::thread::sleep(Duration::from_millis(100));
            if by_chan {
                kick.send(1);
            } else {
                (&wa).write_all(b"a").unwrap();
            }
            while !running.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            (&wq).write_all(b"q").unwrap();
        });
        if by_chan {
            // Q is this goroutine: its worker parks last, after the other
            // (idle, with no descriptor waited on yet, it sleeps without
            // polling), so it is the one polling and the last parked.
            read_q();
        } else {
            go::go(read_q);
        }
        wg.wait();
        client.join().unwrap();
        println!("busy poll ok");
    });
}

const COMPUTE_CHILD: &str = "DEFERGC_TEST_COMPUTE_POLL_CHILD";

/// With every processor busy and none ever out of work (two goroutines
/// that yield in a loop, on two processors), no worker polls the network
/// and none blocks in the poller (only a worker with an idle processor
/// does): sysmon polls when no one has for a while, and the reader whose
/// socket became ready runs while the two still compute. Without that it
/// would wait until they stop, and they stop only once it has run: the
/// child hangs and is killed after 60 s.
#[test]
#[serial]
fn the_network_is_polled_while_every_processor_computes() {
    if std::env::var_os(COMPUTE_CHILD).is_some() {
        return compute_poll_child();
    }
    two_processor_child(
        "the_network_is_polled_while_every_processor_computes",
        (COMPUTE_CHILD, "1"),
        "the reader never ran while every processor computed",
        "compute poll ok",
    );
}

fn compute_poll_child() {
    use defergc::go::net::UnixStream;
    use std::sync::atomic::AtomicBool;
    run(move || {
        let (r, w) = UnixStream::pair().unwrap();
        let read = Arc::new(AtomicBool::new(false));
        let spins = Arc::new(AtomicU64::new(0));
        let wg = Arc::new(WaitGroup::new());
        wg.add(3).unwrap();
        for _ in 0..2 {
            let (read, spins, wg) = (read.clone(), spins.clone(), wg.clone());
            go::go(move || {
                while !read.load(Ordering::SeqCst) {
                    spins.fetch_add(1, Ordering::Relaxed);
                    go::gosched();
                }
                wg.done().unwrap();
            });
        }
        {
            let (read, wg) = (read.clone(), wg.clone());
            go::go(move || {
                let mut b = [0u8; 1];
                (&r).read_exact(&mut b).unwrap();
                assert_eq!(&b, b"x");
                read.store(true, Ordering::SeqCst);
                wg.done().unwrap();
            });
        }
        let writer = {
            let spins = spins.clone();
            std::thread::spawn(move || {
                // The two compute and the reader has parked: write once
                // both have yielded many times.
                while spins.load(Ordering::Relaxed) < 200_000 {
                    std::thread::yield_now();
                }
                std::thread::sleep(Duration::from_millis(50));
                (&w).write_all(b"x").unwrap();
            })
        };
        wg.wait();
        writer.join().unwrap();
        println!("compute poll ok");
    });
}

/// Deadlines moved many times on many sockets (as a server moves one per
/// request): every cancelled timer stays cancelled, and the last deadline
/// of each socket is the one that fires.
#[test]
#[serial]
fn deadlines_moved_many_times() {
    run(|| {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        const N: usize = 300;
        let mut pairs = Vec::new();
        for _ in 0..N {
            let c = TcpStream::connect(addr).unwrap();
            let (s, _) = l.accept().unwrap();
            pairs.push((c, s));
        }
        let far = Instant::now() + Duration::from_secs(3600);
        for round in 0..50 {
            for (i, (c, _)) in pairs.iter().enumerate() {
                // Odd sockets end with no deadline, even ones with a near one.
                let at = if round == 49 {
                    (i % 2 == 0).then(|| Instant::now() + Duration::from_millis(30))
                } else {
                    Some(far)
                };
                c.set_read_deadline(at).unwrap();
            }
        }
        let results = Chan::<(usize, String)>::new(N);
        let pairs = Arc::new(pairs);
        for i in 0..N {
            let (pairs, results) = (pairs.clone(), results.clone());
            go::go(move || {
                let mut buf = [0u8; 1];
                let r = (&pairs[i].0).read(&mut buf);
                results.send((i, format!("{:?}", r.map_err(|e| e.kind()))));
            });
        }
        // The even ones time out; then the odd ones get a byte each.
        let mut got = vec![String::new(); N];
        for _ in 0..N / 2 {
            let (i, r) = results.recv().unwrap();
            assert_eq!(i % 2, 0, "socket {i} (no deadline) ended first: {r}");
            got[i] = r;
        }
        for (i, (_, s)) in pairs.iter().enumerate() {
            if i % 2 == 1 {
                (&*s).write_all(b"x").unwrap();
            }
        }
        for _ in 0..N / 2 {
            let (i, r) = results.recv().unwrap();
            got[i] = r;
        }
        for (i, r) in got.iter().enumerate() {
            let want = if i % 2 == 0 { "Err(TimedOut)" } else { "Ok(1)" };
            assert_eq!(r, want, "socket {i}");
        }
    });
}
