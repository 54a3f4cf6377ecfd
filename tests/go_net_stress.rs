//! Seeded randomized stress of the network poller: readiness, deadlines
//! and close race on many connected pairs at once. Each pair has a
//! reader goroutine that reads until the socket is closed; a driver
//! writes a seeded byte stream in random chunks, moves the read deadline
//! at random (passed, microseconds ahead, far, none), yields or sleeps at
//! random, and closes the reader's socket at a random point. Beside them
//! the seed starts zero to two goroutines that compute (yielding in a
//! loop) for the whole run: with as many as there are processors, no
//! worker runs out of work and none blocks in the poller, so readiness
//! comes from the workers' polls between goroutines and sysmon's.
//!
//! Checked for every pair: the reader ends exactly once, with "use of
//! closed network connection"; what it read is exactly a prefix of what
//! was written (content compared byte by byte); the bytes it counted
//! equal the bytes in that prefix; timeouts only while a deadline was
//! set. A lost wakeup shows as a hang, which the watchdog reports with
//! the seed.
//!
//! The seed is `DEFERGC_STRESS_SEED` (else random, printed), the length
//! `DEFERGC_STRESS_SECS` (default 2):
//! `DEFERGC_STRESS_SEED=<n> cargo test --release --test go_net_stress`

use defergc::go::net::{TcpListener, TcpStream};
use defergc::go::{self, Chan, WaitGroup};
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn seed() -> u64 {
    match std::env::var("DEFERGC_STRESS_SEED") {
        Ok(s) => s.trim().parse().expect("DEFERGC_STRESS_SEED is not a u64"),
        Err(_) => {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                ^ u64::from(std::process::id()) << 32
        }
    }
}

fn secs() -> f64 {
    std::env::var("DEFERGC_STRESS_SECS")
        .map(|s| {
            s.trim()
                .parse()
                .expect("DEFERGC_STRESS_SECS is not a number")
        })
        .unwrap_or(2.0)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Byte `i` of pair `pair`'s stream.
fn byte_at(pair: u64, i: u64) -> u8 {
    let x = (pair << 32 ^ i).wrapping_mul(0x2545_F491_4F6C_DD1D);
    (x >> 56) as u8
}

/// What a reader saw.
struct Outcome {
    read: u64,
    timeouts: u64,
    end: String,
}

fn reader(pair: u64, s: Arc<TcpStream>, had_deadline: Arc<AtomicBool>) -> Outcome {
    let mut buf = [0u8; 700];
    let mut read = 0u64;
    let mut timeouts = 0;
    loop {
        match (&*s).read(&mut buf) {
            Ok(0) => {
                return Outcome {
                    read,
                    timeouts,
                    end: "EOF".into(),
                }
            }
            Ok(n) => {
                for (k, &b) in buf[..n].iter().enumerate() {
                    let want = byte_at(pair, read + k as u64);
                    assert_eq!(b, want, "pair {pair}: byte {} differs", read + k as u64);
                }
                read += n as u64;
            }
            Err(e) if e.kind() == ErrorKind::TimedOut => {
                assert!(
                    had_deadline.load(Ordering::SeqCst),
                    "pair {pair}: a timeout with no deadline ever set"
                );
                timeouts += 1;
                // An expired direction stays expired until the deadline
                // moves: let the driver move it.
                go::gosched();
            }
            Err(e) => {
                return Outcome {
                    read,
                    timeouts,
                    end: e.to_string(),
                }
            }
        }
    }
}

#[test]
fn readiness_deadlines_and_close_race() {
    let seed = seed();
    let secs = secs();
    eprintln!("go_net_stress: seed={seed} secs={secs} (DEFERGC_STRESS_SEED={seed} to rerun)");
    let done = Arc::new(AtomicBool::new(false));
    {
        let done = done.clone();
        let grace = Duration::from_secs_f64(secs * 4.0 + 30.0);
        std::thread::spawn(move || {
            let t = Instant::now();
            while t.elapsed() < grace {
                std::thread::sleep(Duration::from_millis(50));
                if done.load(Ordering::SeqCst) {
                    return;
                }
            }
            // The scheduler's idle state before the dump's stop of the
            // world disturbs it.
            let state = go::sched_state();
            // Every goroutine's stack, unless taking it hangs too (it
            // stops the world): ten seconds at most.
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(go::stack(true));
            });
            let goroutines = rx
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| "(the dump did not finish)".into());
            // Straight to the process's standard error: the harness
            // captures what eprintln! writes, and the exit below loses it.
            let report = format!(
                "HANG: go_net_stress seed={seed}: not done after {:?}\nscheduler: {state}\nevery goroutine:\n{goroutines}",
                t.elapsed(),
            );
            let _ = std::io::stderr().write_all(report.as_bytes());
            std::process::exit(101);
        });
    }
    let pairs = Arc::new(AtomicU64::new(0));
    let bytes = Arc::new(AtomicU64::new(0));
    let (pairs2, bytes2) = (pairs.clone(), bytes.clone());
    let status = go::run(move || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let until = Instant::now() + Duration::from_secs_f64(secs);
        let mut rng = Rng(seed);
        let computing = rng.below(3);
        eprintln!("go_net_stress: {computing} goroutines compute beside the pairs");
        let stop = Arc::new(AtomicBool::new(false));
        let computed = Arc::new(WaitGroup::new());
        for _ in 0..computing {
            computed.add(1).unwrap();
            let (stop, computed) = (stop.clone(), computed.clone());
            go::go(move || {
                let mut x = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..1000 {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    }
                    std::hint::black_box(x);
                    go::gosched();
                }
                computed.done().unwrap();
            });
        }
        let mut pair = 0u64;
        while Instant::now() < until {
            // A batch of pairs at once.
            let wg = Arc::new(WaitGroup::new());
            for _ in 0..32 {
                pair += 1;
                let c = TcpStream::connect(addr).unwrap();
                let (s, _) = l.accept().unwrap();
                let s = Arc::new(s);
                let had_deadline = Arc::new(AtomicBool::new(false));
                let outcome = Chan::<(u64, u64, String)>::new(1);
                {
                    let (s, had, outcome) = (s.clone(), had_deadline.clone(), outcome.clone());
                    go::go(move || {
                        let o = reader(pair, s, had);
                        outcome.send((o.read, o.timeouts, o.end));
                    });
                }
                wg.add(1).unwrap();
                let mut r = Rng(rng.next());
                let (wg, pairs, bytes) = (wg.clone(), pairs2.clone(), bytes2.clone());
                go::go(move || {
                    let mut c = c;
                    // Writes stop where the reader's socket is closed.
                    let close_at = r.below(20_000);
                    let mut sent = 0u64;
                    loop {
                        if sent >= close_at {
                            s.close().unwrap();
                            break;
                        }
                        match r.below(10) {
                            0 => {
                                had_deadline.store(true, Ordering::SeqCst);
                                let at = match r.below(4) {
                                    0 => Instant::now() - Duration::from_millis(1),
                                    1 => Instant::now() + Duration::from_micros(r.below(200)),
                                    2 => Instant::now() + Duration::from_secs(60),
                                    _ => {
                                        let _ = s.set_read_deadline(None);
                                        continue;
                                    }
                                };
                                // Fails only once closed.
                                let _ = s.set_read_deadline(Some(at));
                            }
                            1 => go::gosched(),
                            2 => go::sleep(Duration::from_micros(r.below(100))),
                            _ => {
                                let n = (1 + r.below(1500)).min(close_at - sent);
                                let chunk: Vec<u8> =
                                    (sent..sent + n).map(|i| byte_at(pair, i)).collect();
                                c.write_all(&chunk).unwrap();
                                sent += n;
                            }
                        }
                    }
                    let (read, _timeouts, end) = outcome.recv().unwrap();
                    assert_eq!(
                        end, "use of closed network connection",
                        "pair {pair}: reader ended with {end:?}"
                    );
                    assert!(read <= sent, "pair {pair}: read {read} of {sent} sent");
                    // The reader never ends twice.
                    assert!(
                        matches!(outcome.try_recv(), defergc::go::TryRecv::Empty),
                        "pair {pair}: a second outcome"
                    );
                    pairs.fetch_add(1, Ordering::Relaxed);
                    bytes.fetch_add(read, Ordering::Relaxed);
                    drop(c);
                    wg.done().unwrap();
                });
            }
            wg.wait();
        }
        stop.store(true, Ordering::Relaxed);
        computed.wait();
        assert_eq!(
            pairs2.load(Ordering::Relaxed),
            pair,
            "a pair did not finish"
        );
    });
    done.store(true, Ordering::SeqCst);
    assert_eq!(status, 0, "seed={seed}");
    eprintln!(
        "go_net_stress: seed={seed}: {} pairs, {} bytes read and checked",
        pairs.load(Ordering::Relaxed),
        bytes.load(Ordering::Relaxed)
    );
    assert!(pairs.load(Ordering::Relaxed) >= 32);
}
