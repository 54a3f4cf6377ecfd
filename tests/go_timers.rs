//! Timers without a thread of their own: the workers fire them, and the
//! idle worker that watches the poller sleeps until the earliest one.
//! Checked: a timer set by a plain thread before any goroutine exists
//! fires (the scheduler starts a worker to watch it), no timer thread
//! exists, and many sleepers each wake, none early.

mod child;

use defergc::go::{self, WaitGroup};
use serial_test::serial;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHILD: &str = "DEFERGC_TEST_TIMERS_CHILD";

/// The names of this process's threads.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("comm")).ok())
        .map(|s| s.trim().to_string())
        .collect()
}

/// In a fresh process: a plain thread's `after` fires with no goroutine
/// ever started, and so does a `Timer` reset; no thread is a timer
/// thread (only `defergc-go-N` workers were started for them).
#[test]
fn a_plain_threads_timer_fires_before_any_goroutine() {
    if std::env::var_os(CHILD).is_some() {
        let start = Instant::now();
        let c = go::after(Duration::from_millis(20));
        let v = c.recv().expect("the timer channel closed");
        assert!(v > 0, "the time sent is {v}");
        assert!(start.elapsed() >= Duration::from_millis(20), "fired early");
        let t = go::Timer::new(Duration::from_secs(3600));
        assert!(t.reset(Duration::from_millis(5)));
        assert!(t.chan().recv().is_some());
        let names = thread_names();
        assert!(
            names.iter().all(|n| !n.starts_with("defergc-tim")),
            "a timer thread: {names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("defergc-go-")),
            "no worker watched the timers: {names:?}"
        );
        println!("plain timers ok");
        return;
    }
    // A timer nobody watches never fires: the child would hang.
    let out = child::run_test(
        "a_plain_threads_timer_fires_before_any_goroutine",
        &[(CHILD, "1")],
        Duration::from_secs(60),
    )
    .expect("the plain thread's timer never fired");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("plain timers ok"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Thousands of goroutines sleep random short times, several rounds:
/// every sleep ends, none before its time, and the sum of what they slept
/// is what they asked.
#[test]
#[serial]
fn many_sleepers_each_wake_none_early() {
    const G: u64 = 2000;
    const ROUNDS: u64 = 5;
    let asked = Arc::new(AtomicU64::new(0));
    let slept = Arc::new(AtomicU64::new(0));
    let early = Arc::new(AtomicU64::new(0));
    let (a, s, e) = (asked.clone(), slept.clone(), early.clone());
    let status = go::run(move || {
        let wg = Arc::new(WaitGroup::new());
        wg.add(G as i32).unwrap();
        for g in 0..G {
            let (wg, a, s, e) = (wg.clone(), a.clone(), s.clone(), e.clone());
            go::go(move || {
                let mut x = g.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for _ in 0..ROUNDS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let us = x % 2000;
                    let t = Instant::now();
                    go::sleep(Duration::from_micros(us));
                    if t.elapsed() < Duration::from_micros(us) {
                        e.fetch_add(1, Ordering::Relaxed);
                    }
                    a.fetch_add(1, Ordering::Relaxed);
                    s.fetch_add(1, Ordering::Relaxed);
                }
                wg.done().unwrap();
            });
        }
        wg.wait();
    });
    assert_eq!(status, 0);
    assert_eq!(asked.load(Ordering::Relaxed), G * ROUNDS);
    assert_eq!(slept.load(Ordering::Relaxed), G * ROUNDS);
    assert_eq!(
        early.load(Ordering::Relaxed),
        0,
        "sleeps that returned early"
    );
}

/// More sleepers due together than a scheduling worker fires at one look
/// (64), on one processor whose goroutine never parks: each look fires
/// its share and leaves the rest due, and every sleeper wakes, once,
/// none early, while the busy goroutine's scheduling points are all
/// that runs the heap (or an idle worker's watch).
#[test]
#[serial]
fn a_crowd_due_together_wakes_beside_a_busy_goroutine() {
    const G: u64 = 3000;
    let woke = Arc::new(AtomicU64::new(0));
    let early = Arc::new(AtomicU64::new(0));
    let (w, e) = (woke.clone(), early.clone());
    let status = go::run(move || {
        let before = go::set_gomaxprocs(1);
        let at = Instant::now() + Duration::from_millis(20);
        for _ in 0..G {
            let (w, e) = (w.clone(), e.clone());
            go::go(move || {
                let left = at.saturating_duration_since(Instant::now());
                go::sleep(left);
                if Instant::now() < at {
                    e.fetch_add(1, Ordering::Relaxed);
                }
                w.fetch_add(1, Ordering::Relaxed);
            });
        }
        // Busy until all woke: gosched is this goroutine's only
        // scheduling point, and the limit only ends a hang.
        let limit = Instant::now() + Duration::from_secs(60);
        while w.load(Ordering::Relaxed) < G && Instant::now() < limit {
            go::gosched();
        }
        go::set_gomaxprocs(before);
    });
    assert_eq!(status, 0);
    assert_eq!(woke.load(Ordering::Relaxed), G, "sleepers that never woke");
    assert_eq!(early.load(Ordering::Relaxed), 0, "sleeps that ended early");
}
