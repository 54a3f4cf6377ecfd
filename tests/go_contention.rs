//! The block and mutex profiles: goroutines blocked on a channel are
//! named by their receiving function, a contended mutex by the function
//! that held it (at its unlock), nothing is recorded while off; read back
//! by our decoder always, and by `go tool pprof -top` where Go is
//! installed.

mod gotool;
mod skip;

use defergc::gc::profile::decode_for_tests;
use defergc::go::{self, Chan, Mutex, WaitGroup};
use serial_test::serial;
use std::sync::Arc;
use std::time::Duration;

const RECEIVERS: u64 = 4;

/// The samples (function names innermost first, [count, delay]) whose
/// stack names `function`.
fn samples_naming(bytes: &[u8], function: &str) -> Vec<(Vec<String>, Vec<i64>)> {
    decode_for_tests(bytes)
        .expect("a valid profile")
        .into_iter()
        .filter(|(names, _)| names.iter().any(|n| n.contains(function)))
        .collect()
}

fn block_profile() -> Vec<u8> {
    let mut bytes = Vec::new();
    go::write_block_profile(&mut bytes).unwrap();
    bytes
}

fn mutex_profile() -> Vec<u8> {
    let mut bytes = Vec::new();
    go::write_mutex_profile(&mut bytes).unwrap();
    bytes
}

#[inline(never)]
fn receive_in_profiled_goroutine(c: &Chan<u64>) -> u64 {
    c.recv().expect("open")
}

#[inline(never)]
fn receive_while_profile_is_off(c: &Chan<u64>) -> u64 {
    c.recv().expect("open")
}

/// RECEIVERS goroutines wait in `receive` on one channel until the main
/// goroutine, a moment later, sends them each a number; returns the sum
/// they received.
fn receivers_wait(receive: fn(&Chan<u64>) -> u64) -> u64 {
    let sum = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let s = sum.clone();
    assert_eq!(
        go::run(move || {
            let c = Chan::<u64>::new(0);
            let wg = Arc::new(WaitGroup::default());
            for _ in 0..RECEIVERS {
                let (c, wg, s) = (c.clone(), wg.clone(), s.clone());
                wg.add(1).unwrap();
                go::go(move || {
                    s.fetch_add(receive(&c), std::sync::atomic::Ordering::Relaxed);
                    wg.done().unwrap();
                });
            }
            // Long enough for every receiver to park (the test asks only
            // that one did).
            go::sleep(Duration::from_millis(20));
            for i in 1..=RECEIVERS {
                c.send(i);
            }
            wg.wait();
        }),
        0
    );
    sum.load(std::sync::atomic::Ordering::Relaxed)
}

#[test]
#[serial]
fn a_block_profile_names_the_receiving_function() {
    go::set_block_profile_rate(1);
    let sum = receivers_wait(receive_in_profiled_goroutine);
    go::set_block_profile_rate(0);
    assert_eq!(sum, RECEIVERS * (RECEIVERS + 1) / 2);
    let bytes = block_profile();
    let samples = samples_naming(&bytes, "receive_in_profiled_goroutine");
    assert!(!samples.is_empty(), "{:?}", decode_for_tests(&bytes));
    let count: i64 = samples.iter().map(|(_, v)| v[0]).sum();
    // Rate 1: every event is kept unscaled, one per park.
    assert!(count >= 1, "{samples:?}");
    for (names, values) in &samples {
        assert_eq!(values.len(), 2);
        assert!(values[1] > 0, "a blocked receive took no time: {names:?}");
        // The blocking machinery is left out: the stack starts at the
        // channel's receive, and the receiving function follows it.
        assert!(names[0].contains("recv"), "{names:?}");
        assert!(!names[0].contains("sched::park"), "{names:?}");
    }
    pprof_top_names(&bytes, "block", "receive_in_profiled_goroutine");
}

#[test]
#[serial]
fn rate_zero_records_no_block_event() {
    assert_eq!(go::set_block_profile_rate(0), 0);
    let sum = receivers_wait(receive_while_profile_is_off);
    assert_eq!(sum, RECEIVERS * (RECEIVERS + 1) / 2);
    assert!(samples_naming(&block_profile(), "receive_while_profile_is_off").is_empty());
}

#[inline(never)]
fn hold_the_contended_lock(m: &Mutex) {
    m.lock();
    // Others run, find the lock held, and give up spinning before it is
    // released: the holder is parked, not queued where an idle worker
    // could steal it and release the lock while a waiter still spins.
    go::sleep(HOLD);
    m.unlock();
    // Not a tail call: the unlock's caller keeps its frame.
    std::hint::black_box(m);
}

#[inline(never)]
fn hold_while_mutex_profile_is_off(m: &Mutex) {
    m.lock();
    go::sleep(HOLD);
    m.unlock();
}

/// How long a holder keeps the lock: longer than a waiter spins.
const HOLD: Duration = Duration::from_micros(50);

/// 8 goroutines take `m` 50 times each through `hold`.
fn contend(hold: fn(&Mutex)) {
    assert_eq!(
        go::run(move || {
            let m = Arc::new(Mutex::new());
            let wg = Arc::new(WaitGroup::default());
            for _ in 0..8 {
                let (m, wg) = (m.clone(), wg.clone());
                wg.add(1).unwrap();
                go::go(move || {
                    for _ in 0..50 {
                        hold(&m);
                    }
                    wg.done().unwrap();
                });
            }
            wg.wait();
        }),
        0
    );
}

#[test]
#[serial]
fn a_mutex_profile_names_the_holder_at_its_unlock() {
    assert_eq!(go::set_mutex_profile_fraction(1), 0);
    assert_eq!(
        go::set_mutex_profile_fraction(-1),
        1,
        "a negative fraction only reads"
    );
    contend(hold_the_contended_lock);
    go::set_mutex_profile_fraction(0);
    let bytes = mutex_profile();
    let samples = samples_naming(&bytes, "hold_the_contended_lock");
    assert!(!samples.is_empty(), "{:?}", decode_for_tests(&bytes));
    for (names, values) in &samples {
        // Fraction 1: counts unscaled.
        assert!(values[0] >= 1 && values[1] >= 0, "{values:?}");
        assert!(names[0].contains("unlock"), "not at the unlock: {names:?}");
    }
    pprof_top_names(&bytes, "mutex", "hold_the_contended_lock");
}

#[test]
#[serial]
fn fraction_zero_records_no_mutex_event() {
    go::set_mutex_profile_fraction(0);
    contend(hold_while_mutex_profile_is_off);
    assert!(samples_naming(&mutex_profile(), "hold_while_mutex_profile_is_off").is_empty());
}

/// `go tool pprof -top` reads the profile and names `function`.
fn pprof_top_names(bytes: &[u8], what: &str, function: &str) {
    if !gotool::have_go() {
        skip::skipped(
            &format!("reading the {what} profile with go tool pprof"),
            "Go is not installed (apt-get install golang-go)",
        );
        return;
    }
    let path = std::env::temp_dir().join(format!("defergc-{what}-{}.pprof", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let out = gotool::pprof_top(&path, &[]);
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains(function) && text.contains("Type: delay"),
        "go tool pprof: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
