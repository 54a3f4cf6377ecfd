//! A seeded randomized stress of the timer heaps (one per processor, see
//! `src/go/timer.rs`): goroutines sleep random times and arm, stop, reset
//! and receive channel timers, while the number of processors changes
//! (heaps of processors that went away are run by the others) and some
//! goroutines compute without a runtime call. Checked, per timer: it
//! fires exactly once unless a `Stop` that returned true took it back
//! (then never), never before its deadline, and none is lost: a lost one
//! leaves its goroutine asleep (Go's deadlock report, or a hang the
//! parent reports). The tallies conserve: armed = fired + stopped.
//!
//! Each configuration runs in a child process (this test binary again),
//! under GOMAXPROCS 1, 3 and 20 (more processors than heaps: two share
//! one). The seed is `DEFERGC_TIMER_SEED`, else random, and always
//! printed; rerun a failure with
//! `DEFERGC_TIMER_SEED=<n> cargo test --release --test go_timer_stress`.

mod child;

use defergc::go::{self, TryRecv, WaitGroup};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHILD: &str = "DEFERGC_TIMER_STRESS_CHILD";
const SEED: &str = "DEFERGC_TIMER_SEED";

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn seed() -> u64 {
    match std::env::var(SEED) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{SEED}={s:?} is not a u64")),
        Err(_) => mix(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            ^ (u64::from(std::process::id()) << 32)),
    }
}

/// What the goroutines counted (see the module docs).
#[derive(Default)]
struct Tallies {
    sleeps: AtomicU64,
    armed: AtomicU64,
    fired: AtomicU64,
    stopped: AtomicU64,
    /// A sleep or a timer that ended before its deadline.
    early: AtomicU64,
    /// A timer that delivered twice, or after a Stop that returned true.
    extra: AtomicU64,
}

const GOROUTINES: u64 = 300;
const ROUNDS: u64 = 30;

/// A random duration for a round: mostly short, some zero or negative
/// (no wait), a few tens of milliseconds.
fn duration(x: u64) -> i64 {
    match x % 16 {
        0 => 0,
        1 => -1,
        2 => (5_000_000 + (x >> 8) % 20_000_000) as i64,
        _ => ((x >> 8) % 2_000_000) as i64,
    }
}

fn nanos(ns: i64) -> Duration {
    Duration::from_nanos(ns.max(0) as u64)
}

/// One goroutine's rounds.
fn rounds(mut x: u64, t: &Tallies) {
    let mut next = || {
        x = mix(x);
        x
    };
    for _ in 0..ROUNDS {
        let op = next();
        let ns = duration(next());
        match op % 6 {
            // A sleep.
            0 | 1 => {
                let at = Instant::now();
                go::sleep(nanos(ns));
                if at.elapsed() < nanos(ns) {
                    t.early.fetch_add(1, Ordering::Relaxed);
                }
                t.sleeps.fetch_add(1, Ordering::Relaxed);
            }
            // A timer received.
            2 => {
                let at = Instant::now();
                let timer = go::Timer::new(nanos(ns));
                t.armed.fetch_add(1, Ordering::Relaxed);
                timer.chan().recv().expect("a timer channel closed");
                if at.elapsed() < nanos(ns) {
                    t.early.fetch_add(1, Ordering::Relaxed);
                }
                t.fired.fetch_add(1, Ordering::Relaxed);
                expect_nothing_more(&timer, t);
            }
            // A timer stopped, maybe after it fired.
            3 | 4 => {
                let timer = go::Timer::new(nanos(ns));
                t.armed.fetch_add(1, Ordering::Relaxed);
                if next() % 2 == 0 {
                    go::sleep(nanos(duration(next())));
                }
                if timer.stop() {
                    t.stopped.fetch_add(1, Ordering::Relaxed);
                    // Taken back: nothing was, nor will be, delivered.
                    go::sleep(nanos(ns) + Duration::from_millis(1));
                    if !matches!(timer.chan().try_recv(), TryRecv::Empty) {
                        t.extra.fetch_add(1, Ordering::Relaxed);
                    }
                } else {
                    // It had fired: its one value is there.
                    timer.chan().recv().expect("a timer channel closed");
                    t.fired.fetch_add(1, Ordering::Relaxed);
                    expect_nothing_more(&timer, t);
                }
            }
            // A timer reset before it fired: it fires once, for the reset.
            _ => {
                let timer = go::Timer::new(Duration::from_secs(3600));
                t.armed.fetch_add(1, Ordering::Relaxed);
                let at = Instant::now();
                if !timer.reset(nanos(ns)) {
                    t.extra.fetch_add(1, Ordering::Relaxed);
                }
                timer.chan().recv().expect("a timer channel closed");
                if at.elapsed() < nanos(ns) {
                    t.early.fetch_add(1, Ordering::Relaxed);
                }
                t.fired.fetch_add(1, Ordering::Relaxed);
                expect_nothing_more(&timer, t);
            }
        }
    }
}

/// A timer that delivered once delivers nothing more.
fn expect_nothing_more(timer: &go::Timer, t: &Tallies) {
    if timer.stop() {
        t.extra.fetch_add(1, Ordering::Relaxed);
    }
    go::sleep(Duration::from_micros(200));
    if !matches!(timer.chan().try_recv(), TryRecv::Empty) {
        t.extra.fetch_add(1, Ordering::Relaxed);
    }
}

/// The child: the workload of `seed`, GOMAXPROCS from the environment.
fn child(seed: u64) {
    let t = Arc::new(Tallies::default());
    let t2 = t.clone();
    let status = go::run(move || {
        let wg = Arc::new(WaitGroup::new());
        wg.add(GOROUTINES as i32 + 1).unwrap();
        for g in 0..GOROUTINES {
            let (wg, t) = (wg.clone(), t2.clone());
            go::go(move || {
                rounds(mix(seed ^ g), &t);
                wg.done().unwrap();
            });
        }
        // Processors come and go while the timers run: heaps whose
        // processor went away are run by the others.
        let procs = go::gomaxprocs();
        let w = wg.clone();
        go::go(move || {
            let mut x = mix(seed);
            for _ in 0..6 {
                x = mix(x);
                go::sleep(Duration::from_millis(3 + x % 10));
                go::set_gomaxprocs(1 + (x >> 8) as usize % (procs + 2));
                // A goroutine computes without a runtime call a while:
                // the timers of its processor's heap run elsewhere.
                let until = Instant::now() + Duration::from_millis(2);
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            }
            go::set_gomaxprocs(procs);
            w.done().unwrap();
        });
        wg.wait();
    });
    assert_eq!(status, 0, "seed={seed}");
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "tallies: sleeps={} armed={} fired={} stopped={} early={} extra={}",
        get(&t.sleeps),
        get(&t.armed),
        get(&t.fired),
        get(&t.stopped),
        get(&t.early),
        get(&t.extra)
    );
}

fn stress(procs: usize) {
    let seed = seed();
    eprintln!("seed={seed} GOMAXPROCS={procs}");
    let rerun = format!("{SEED}={seed} cargo test --release --test go_timer_stress");
    let procs_s = procs.to_string();
    let seed_s = seed.to_string();
    let out = child::run_test(
        "child_process",
        &[(CHILD, "1"), (SEED, &seed_s), ("GOMAXPROCS", &procs_s)],
        Duration::from_secs(300),
    )
    .unwrap_or_else(|| panic!("seed={seed} GOMAXPROCS={procs}: hung; rerun with {rerun}"));
    let text = child::text(&out);
    assert!(
        out.status.success(),
        "seed={seed} GOMAXPROCS={procs}: the child failed; rerun with {rerun}\n{text}"
    );
    let line = text
        .lines()
        .find_map(|l| l.find("tallies:").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("seed={seed}: no tallies; rerun with {rerun}\n{text}"));
    let field = |name: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("seed={seed}: no {name} in {line:?}"))
    };
    let why = format!("seed={seed} GOMAXPROCS={procs}: {line}; rerun with {rerun}");
    assert_eq!(field("early"), 0, "{why}");
    assert_eq!(field("extra"), 0, "{why}");
    assert_eq!(field("armed"), field("fired") + field("stopped"), "{why}");
    assert!(field("fired") > 0 && field("sleeps") > 0, "{why}");
    assert_eq!(
        field("sleeps") + field("armed"),
        GOROUTINES * ROUNDS,
        "{why}"
    );
    eprintln!("seed={seed} GOMAXPROCS={procs}: {line}");
}

/// Runs the workload when started as a child (see [`stress`]).
#[test]
fn child_process() {
    if std::env::var_os(CHILD).is_some() {
        child(seed());
    }
}

#[test]
fn timers_under_1_processor() {
    stress(1);
}

#[test]
fn timers_under_3_processors() {
    stress(3);
}

#[test]
fn timers_under_20_processors() {
    stress(20);
}

const WATCH_CHILD: &str = "DEFERGC_TIMER_WATCH_CHILD";
const WATCH_ROUNDS: u64 = 150;

/// The child of [`sleepers_wake_across_resizes_and_locked_exits`]: rounds
/// of sleepers (locked to their threads or not) pending on every
/// processor while GOMAXPROCS drops to 1 or 2, beside locked goroutines
/// that sleep briefly and then end locked (their threads end with them).
/// Every sleeper must wake: the round waits for all of them.
fn watch_child(seed: u64) {
    let woken = Arc::new(AtomicU64::new(0));
    let ended = Arc::new(AtomicU64::new(0));
    let (w2, e2) = (woken.clone(), ended.clone());
    let mut expect_woken = 0;
    let mut expect_ended = 0;
    let mut x = seed;
    let mut plan = Vec::new();
    for _ in 0..WATCH_ROUNDS {
        x = mix(x);
        let sleepers = 1 + x % 8;
        let exiters = 1 + (x >> 8) % 4;
        let down = 1 + (x >> 16) as usize % 2;
        expect_woken += sleepers;
        expect_ended += exiters;
        plan.push((sleepers, exiters, down, x));
    }
    let status = go::run(move || {
        let procs = go::gomaxprocs();
        for &(sleepers, exiters, down, x) in &plan {
            go::set_gomaxprocs(8);
            let wg = Arc::new(WaitGroup::new());
            wg.add((sleepers + exiters) as i32).unwrap();
            for k in 0..sleepers {
                let (wg, woken) = (wg.clone(), w2.clone());
                let locked = (x >> (24 + k)) & 1 == 1;
                go::go(move || {
                    if locked {
                        go::lock_os_thread();
                    }
                    go::sleep(Duration::from_millis(5));
                    woken.fetch_add(1, Ordering::SeqCst);
                    if locked {
                        go::unlock_os_thread();
                    }
                    wg.done().unwrap();
                });
            }
            for k in 0..exiters {
                let (wg, ended) = (wg.clone(), e2.clone());
                let naps = 1 + (x >> (40 + k)) % 4;
                go::go(move || {
                    go::lock_os_thread();
                    for _ in 0..naps {
                        go::sleep(Duration::from_micros(10));
                    }
                    ended.fetch_add(1, Ordering::SeqCst);
                    wg.done().unwrap();
                    // Ends locked: its thread ends too.
                });
            }
            go::gosched();
            go::set_gomaxprocs(down);
            wg.wait();
        }
        go::set_gomaxprocs(procs);
    });
    assert_eq!(status, 0, "seed={seed}");
    println!(
        "watch: woken={} of {expect_woken}, ended={} of {expect_ended}",
        woken.load(Ordering::SeqCst),
        ended.load(Ordering::SeqCst)
    );
    assert_eq!(woken.load(Ordering::SeqCst), expect_woken, "seed={seed}");
    assert_eq!(ended.load(Ordering::SeqCst), expect_ended, "seed={seed}");
}

/// Runs [`watch_child`] when started as its child.
#[test]
fn watch_child_process() {
    if std::env::var_os(WATCH_CHILD).is_some() {
        watch_child(seed());
    }
}

/// Sleepers pending on processors that a resize takes away, and on
/// processors whose locked goroutines end their threads: every one wakes
/// (a lost wakeup hangs the child, which the parent's limit, a hang
/// detector and no timing check, reports with the seed).
#[test]
fn sleepers_wake_across_resizes_and_locked_exits() {
    let seed = seed();
    eprintln!("seed={seed}");
    let seed_s = seed.to_string();
    let out = child::run_test(
        "watch_child_process",
        &[(WATCH_CHILD, "1"), (SEED, &seed_s)],
        Duration::from_secs(60),
    )
    .unwrap_or_else(|| {
        panic!("seed={seed}: a sleeper never woke (hung); rerun with {SEED}={seed}")
    });
    let text = child::text(&out);
    assert!(
        out.status.success(),
        "seed={seed}: the child failed\n{text}"
    );
    assert!(text.contains("watch: woken="), "seed={seed}: {text}");
}

const FIRE_CHILD: &str = "DEFERGC_TIMER_FIRE_CHILD";
const FIRE_ROUNDS: u64 = 20_000;

/// Spins about `ns` nanoseconds without a runtime call.
fn spin_ns(ns: u64) {
    let until = Instant::now() + Duration::from_nanos(ns);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// The child of [`a_sleeper_being_woken_is_not_a_deadlock`]: round after
/// round, a goroutine sleeps a random few microseconds and then sends;
/// main computes about as long and then receives. Main's worker parks
/// (and runs the deadlock check) while the idle worker that watches the
/// timers fires the sleeper's: the sleeper is out of its heap and not
/// yet queued. Every round must end with the value sent.
fn fire_child(seed: u64) {
    let status = go::run(move || {
        let mut x = seed;
        let mut sum = 0u64;
        let mut expect = 0u64;
        for round in 0..FIRE_ROUNDS {
            x = mix(x);
            let sleep_ns = 2_000 + x % 30_000;
            let spin = 2_000 + (x >> 20) % 30_000;
            let c = go::Chan::<u64>::new(0);
            let tx = c.clone();
            go::go(move || {
                go::sleep(Duration::from_nanos(sleep_ns));
                tx.send(round);
            });
            spin_ns(spin);
            sum += c.recv().unwrap();
            expect += round;
        }
        assert_eq!(sum, expect, "seed={seed}");
        println!("fire: {FIRE_ROUNDS} rounds, sum={sum}");
    });
    assert_eq!(status, 0, "seed={seed}");
}

/// Runs [`fire_child`] when started as its child.
#[test]
fn fire_child_process() {
    if std::env::var_os(FIRE_CHILD).is_some() {
        fire_child(seed());
    }
}

/// A sleeper whose timer an idle worker is firing is neither in a heap
/// nor queued for a moment; a worker that parks then must not take the
/// program for deadlocked (a false "all goroutines are asleep").
#[test]
fn a_sleeper_being_woken_is_not_a_deadlock() {
    let seed = seed();
    eprintln!("seed={seed}");
    let seed_s = seed.to_string();
    for procs in ["2", "3"] {
        let out = child::run_test(
            "fire_child_process",
            &[(FIRE_CHILD, "1"), (SEED, &seed_s), ("GOMAXPROCS", procs)],
            Duration::from_secs(120),
        )
        .unwrap_or_else(|| panic!("seed={seed}: the child hung; rerun with {SEED}={seed}"));
        let text = child::text(&out);
        assert!(
            out.status.success() && text.contains("fire: "),
            "seed={seed} GOMAXPROCS={procs}: the child failed\n{text}"
        );
    }
}

const LAST_TIMER_CHILD: &str = "DEFERGC_TIMER_LAST_CHILD";

/// Runs, as the child of
/// [`a_deadlock_behind_a_timer_that_readies_no_one_is_reported`], a main
/// goroutine that arms a timer nobody receives from and then waits
/// forever.
#[test]
fn last_timer_child_process() {
    if std::env::var_os(LAST_TIMER_CHILD).is_some() {
        go::run(|| {
            let _t = go::Timer::new(Duration::from_millis(20));
            let c = go::Chan::<u64>::new(0);
            let _ = c.recv();
        });
        unreachable!("the deadlock was not reported");
    }
}

/// While the timer is pending the program is not deadlocked; once it has
/// fired (into its buffer, readying no one) it is, as Go reports. The
/// worker that fired it is the one left to say so: the check that ran
/// while it fired let the firing pass.
#[test]
fn a_deadlock_behind_a_timer_that_readies_no_one_is_reported() {
    for procs in ["1", "2"] {
        let out = child::run_test(
            "last_timer_child_process",
            &[(LAST_TIMER_CHILD, "1"), ("GOMAXPROCS", procs)],
            Duration::from_secs(20),
        )
        .unwrap_or_else(|| panic!("GOMAXPROCS={procs}: the deadlock was never reported (hung)"));
        let text = child::text(&out);
        assert_eq!(out.status.code(), Some(2), "GOMAXPROCS={procs}:\n{text}");
        assert!(
            text.contains("fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [chan receive]:\n"),
            "GOMAXPROCS={procs}:\n{text}"
        );
    }
}

const POLL_CHILD: &str = "DEFERGC_TIMER_POLL_CHILD";
const POLL_ROUNDS: u64 = 100_000;

/// The child of [`sleepers_wake_beside_a_blocked_poll`]: a goroutine
/// blocks reading a socket that gets no data until the end (the worker
/// that watches the timers then blocks in the network poll), while round
/// after round a few goroutines sleep a few microseconds and main waits
/// for them. Between rounds no timer is pending, so the watcher blocks in
/// the poll without a deadline; the next round's first sleep must break
/// it out, while the other worker, out of work, polls without blocking.
/// Every sleeper must wake: a lost one hangs the round, which the child's
/// watchdog reports with the scheduler's state.
fn poll_child(seed: u64) {
    let watchdog_done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let done = watchdog_done.clone();
        std::thread::spawn(move || {
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(50));
                if done.load(Ordering::SeqCst) {
                    return;
                }
            }
            println!("HANG: seed={seed}: scheduler: {}", go::sched_state());
            std::process::exit(3);
        });
    }
    // Threads outside the runtime that compute and sleep in turns take
    // the cores from the workers at random points, as a loaded machine
    // does: the windows between a worker's steps widen.
    for k in 0..2u64 {
        let done = watchdog_done.clone();
        std::thread::spawn(move || {
            let mut x = mix(seed ^ k);
            while !done.load(Ordering::Relaxed) {
                x = mix(x);
                spin_ns(x % 100_000);
                std::thread::sleep(Duration::from_nanos((x >> 20) % 100_000));
            }
        });
    }
    let woken = Arc::new(AtomicU64::new(0));
    let w2 = woken.clone();
    let mut expect = 0u64;
    let mut plan = Vec::with_capacity(POLL_ROUNDS as usize);
    let mut x = seed;
    for _ in 0..POLL_ROUNDS {
        x = mix(x);
        expect += 1 + x % 4;
        plan.push(x);
    }
    let status = go::run(move || {
        let l = go::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = go::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        let got = go::Chan::<u64>::new(1);
        let tx = got.clone();
        go::go(move || {
            use std::io::Read;
            let mut s = s;
            let mut buf = [0u8; 8];
            // Blocks until main writes, after the last round.
            s.read_exact(&mut buf).unwrap();
            tx.send(u64::from_le_bytes(buf));
        });
        for &x in &plan {
            let sleepers = 1 + x % 4;
            let wg = Arc::new(WaitGroup::new());
            wg.add(sleepers as i32).unwrap();
            for k in 0..sleepers {
                let (wg, woken) = (wg.clone(), w2.clone());
                let ns = 500 + (x >> (8 + 8 * k)) % 5_000;
                go::go(move || {
                    let t = Instant::now();
                    go::sleep(Duration::from_nanos(ns));
                    // Never early (Go's Sleep: at least the duration).
                    assert!(
                        t.elapsed() >= Duration::from_nanos(ns),
                        "seed={seed}: woke early"
                    );
                    woken.fetch_add(1, Ordering::SeqCst);
                    wg.done().unwrap();
                });
            }
            wg.wait();
        }
        {
            use std::io::Write;
            c.write_all(&seed.to_le_bytes()).unwrap();
        }
        assert_eq!(got.recv(), Some(seed), "the reader read what was written");
    });
    watchdog_done.store(true, Ordering::SeqCst);
    assert_eq!(status, 0, "seed={seed}");
    let woken = woken.load(Ordering::SeqCst);
    println!("poll: {POLL_ROUNDS} rounds, {woken} of {expect} sleepers woke");
    assert_eq!(woken, expect, "seed={seed}");
}

/// Runs [`poll_child`] when started as its child.
#[test]
fn poll_child_process() {
    if std::env::var_os(POLL_CHILD).is_some() {
        poll_child(seed());
    }
}

/// Sleepers whose timers must break the watcher out of a network poll
/// with no deadline, while another worker polls without blocking: every
/// one wakes (the poll that does not block leaves the watcher's wake).
/// With that poll taking the wake again, 6 of 6 children hung (each
/// configuration runs about 3 s in a debug build).
#[test]
fn sleepers_wake_beside_a_blocked_poll() {
    let seed = seed();
    eprintln!("seed={seed}");
    let seed_s = seed.to_string();
    for procs in ["2", "4"] {
        let out = child::run_test(
            "poll_child_process",
            &[(POLL_CHILD, "1"), (SEED, &seed_s), ("GOMAXPROCS", procs)],
            Duration::from_secs(60),
        )
        .unwrap_or_else(|| panic!("seed={seed}: the child hung; rerun with {SEED}={seed}"));
        let text = child::text(&out);
        assert!(
            out.status.success() && text.contains("poll: "),
            "seed={seed} GOMAXPROCS={procs}: the child failed; rerun with {SEED}={seed}\n{text}"
        );
    }
}
