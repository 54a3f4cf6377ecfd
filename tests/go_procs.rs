//! `GOMAXPROCS` at run time (Go's `runtime.GOMAXPROCS`, with the
//! scheduler's stop of the world, `src/go/stw.rs`): the value read back,
//! channel traffic that conserves every message while the count goes up
//! and down, never more goroutines running at once than the count in
//! force, and a seeded randomized stress that mixes resizes, goroutines
//! locked to their threads and channel traffic (its seed printed:
//! `DEFERGC_PROCS_SEED=<n>` reruns its workload).

mod gorun;
mod seeded;

use defergc::go::{self, Chan, WaitGroup};
use gorun::{gettid, run};
use seeded::Rng;
use serial_test::serial;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Goroutines inside a section without runtime calls, and the most seen
/// at once since the last reset.
struct Busy {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl Busy {
    fn new() -> Busy {
        Busy {
            now: AtomicUsize::new(0),
            max: AtomicUsize::new(0),
        }
    }

    /// A section that makes no runtime call (so it cannot switch): a
    /// goroutine in it holds a processor throughout.
    fn section(&self) {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(n, Ordering::SeqCst);
        let mut x = 0u64;
        for i in 0..2000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
#[serial]
fn gomaxprocs_returns_the_previous_value_and_zero_only_reads() {
    run(|| {
        let start = go::set_gomaxprocs(0);
        assert_eq!(start, go::gomaxprocs());
        assert_eq!(go::set_gomaxprocs(3), start);
        assert_eq!(go::set_gomaxprocs(0), 3);
        assert_eq!(go::gomaxprocs(), 3);
        assert_eq!(go::set_gomaxprocs(3), 3);
        assert_eq!(go::set_gomaxprocs(1), 3);
        assert_eq!(go::set_gomaxprocs(5000), 1, "capped, as the C ABI says");
        assert_eq!(go::gomaxprocs(), 1024);
        assert_eq!(go::set_gomaxprocs(start), 1024);
    });
}

#[test]
#[serial]
fn the_c_abi_reads_and_sets_from_any_thread() {
    use defergc::ffi::{defergc_gomaxprocs, defergc_lock_os_thread, defergc_unlock_os_thread};
    const ENOTGOROUTINE: i32 = -20;
    // Outside a goroutine: GOMAXPROCS works, locking is refused.
    let start = defergc_gomaxprocs(-1);
    assert!(start >= 1);
    assert_eq!(defergc_gomaxprocs(2), start);
    assert_eq!(defergc_gomaxprocs(0), 2);
    assert_eq!(defergc_lock_os_thread(), ENOTGOROUTINE);
    assert_eq!(defergc_unlock_os_thread(), ENOTGOROUTINE);
    run(move || {
        assert_eq!(defergc_lock_os_thread(), 0);
        assert_eq!(defergc_gomaxprocs(4), 2);
        assert_eq!(defergc_unlock_os_thread(), 0);
        assert_eq!(
            defergc_unlock_os_thread(),
            0,
            "more unlocks than locks: nothing"
        );
        assert_eq!(defergc_gomaxprocs(start), 4);
    });
}

/// Producers and consumers on buffered and unbuffered channels while the
/// count goes 4, 1, 8, 2, 6, 1, 3 (by the main goroutine, and by a plain
/// thread midway): every message arrives once (count and checksum), and
/// after each change has returned, no more goroutines are inside a busy
/// section at once than the new count.
#[test]
#[serial]
fn resizing_while_channels_carry_traffic_loses_nothing_and_limits_parallelism() {
    run(|| {
        let start = go::set_gomaxprocs(4);
        const PRODUCERS: u64 = 8;
        const PER: u64 = 3000;
        let busy = Arc::new(Busy::new());
        let chans: Vec<Chan<u64>> = (0..4)
            .map(|i| Chan::new(if i % 2 == 0 { 0 } else { 16 }))
            .collect();
        let received = Arc::new(AtomicUsize::new(0));
        let sum = Arc::new(AtomicUsize::new(0));
        let consumers = Arc::new(WaitGroup::default());
        for c in &chans {
            for _ in 0..2 {
                let (c, busy, received, sum, wg) = (
                    c.clone(),
                    busy.clone(),
                    received.clone(),
                    sum.clone(),
                    consumers.clone(),
                );
                wg.add(1).unwrap();
                go::go(move || {
                    while let Some(v) = c.recv() {
                        busy.section();
                        received.fetch_add(1, Ordering::SeqCst);
                        sum.fetch_add(v as usize, Ordering::SeqCst);
                    }
                    wg.done().unwrap();
                });
            }
        }
        let producers = Arc::new(WaitGroup::default());
        for p in 0..PRODUCERS {
            let (chans, busy, wg) = (chans.clone(), busy.clone(), producers.clone());
            wg.add(1).unwrap();
            go::go(move || {
                for i in 0..PER {
                    busy.section();
                    chans[((p + i) % 4) as usize].send(p * PER + i + 1);
                }
                wg.done().unwrap();
            });
        }
        let mut checked = 0;
        let plan = [1usize, 8, 2, 6, 1, 3];
        for (k, &n) in plan.iter().enumerate() {
            let prev = if k == 3 {
                // From a plain thread: the stopper holds no processor. This
                // goroutine blocks its thread meanwhile, so it says so (a
                // stop waits for every processor, its own too).
                let t = std::thread::spawn(move || go::set_gomaxprocs(n));
                go::syscall(|| t.join().unwrap())
            } else {
                go::set_gomaxprocs(n)
            };
            assert_eq!(prev, if k == 0 { 4 } else { plan[k - 1] });
            assert_eq!(go::gomaxprocs(), n);
            busy.max.store(0, Ordering::SeqCst);
            // Let traffic run under the new count: wait for some messages.
            let target = received.load(Ordering::SeqCst) + 1000;
            while received.load(Ordering::SeqCst) < target
                && received.load(Ordering::SeqCst) < (PRODUCERS * PER) as usize
            {
                go::gosched();
            }
            let max = busy.max.load(Ordering::SeqCst);
            assert!(
                max <= n,
                "{max} goroutines busy at once with GOMAXPROCS {n}"
            );
            if max > 0 {
                checked += 1;
            }
        }
        producers.wait();
        for c in &chans {
            c.close();
        }
        consumers.wait();
        let total = PRODUCERS * PER;
        assert_eq!(received.load(Ordering::SeqCst), total as usize);
        assert_eq!(sum.load(Ordering::SeqCst) as u64, total * (total + 1) / 2);
        assert!(
            checked >= 3,
            "the busy counter saw too few changes: {checked}"
        );
        go::set_gomaxprocs(start);
    });
}

/// 10,000 goroutines ping-ponging while the count goes 4 -> 1 -> 8 (the
/// issue's case): all finish.
#[test]
#[serial]
fn ten_thousand_goroutines_run_through_4_then_1_then_8() {
    run(|| {
        let start = go::set_gomaxprocs(4);
        let done = Arc::new(AtomicUsize::new(0));
        let wg = Arc::new(WaitGroup::default());
        for i in 0..10_000 {
            let (done2, wg2) = (done.clone(), wg.clone());
            wg.add(1).unwrap();
            go::go(move || {
                let c = Chan::<u64>::new(0);
                let d = c.clone();
                go::go(move || d.send(7));
                assert_eq!(c.recv(), Some(7));
                go::gosched();
                done2.fetch_add(1, Ordering::SeqCst);
                wg2.done().unwrap();
            });
            if i == 5000 {
                assert_eq!(go::set_gomaxprocs(1), 4);
            }
        }
        assert_eq!(go::set_gomaxprocs(8), 1);
        wg.wait();
        assert_eq!(done.load(Ordering::SeqCst), 10_000);
        go::set_gomaxprocs(start);
    });
}

/// Goroutines entering and leaving system calls while the count
/// changes: a processor given up at a system call's entry goes to the
/// stopper (else the stop would wait for it forever), and every call
/// completes.
#[test]
#[serial]
fn resizes_while_goroutines_enter_and_leave_system_calls() {
    run(|| {
        let start = go::set_gomaxprocs(4);
        let calls = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let wg = Arc::new(WaitGroup::default());
        // Fewer goroutines than processors: each has its processor to
        // itself, so a system call gives it up to no one.
        for _ in 0..2 {
            let (calls, stop, wg) = (calls.clone(), stop.clone(), wg.clone());
            wg.add(1).unwrap();
            go::go(move || {
                // Until every resize is done: a stop that missed a
                // processor given up here would wait for good.
                while !stop.load(Ordering::SeqCst) {
                    go::syscall(|| std::hint::black_box(0));
                    calls.fetch_add(1, Ordering::SeqCst);
                }
                wg.done().unwrap();
            });
        }
        while calls.load(Ordering::SeqCst) < 100 {
            go::gosched();
        }
        for i in 0..200 {
            go::set_gomaxprocs(3 + i % 4);
        }
        stop.store(true, Ordering::SeqCst);
        wg.wait();
        go::set_gomaxprocs(start);
    });
}

// ---- the seeded stress ------------------------------------------------------

/// Rounds of: a random GOMAXPROCS (1 to 8), locked goroutines that check
/// their thread across yields, parks and channel operations and then
/// unlock or exit locked, and channel traffic; with a checksum of every
/// message, the locked goroutines' thread checks, and the busy limit.
#[test]
#[serial]
fn seeded_stress_of_resizes_locked_goroutines_and_channels() {
    let seed = seeded::seed("DEFERGC_PROCS_SEED");
    println!("go_procs stress seed: {seed} (rerun: DEFERGC_PROCS_SEED={seed})");
    run(move || {
        let start = go::gomaxprocs();
        let mut rng = Rng(seed);
        let busy = Arc::new(Busy::new());
        let sent = Arc::new(AtomicUsize::new(0));
        let got = Arc::new(AtomicUsize::new(0));
        let sum_sent = Arc::new(AtomicUsize::new(0));
        let sum_got = Arc::new(AtomicUsize::new(0));
        let locked_ok = Arc::new(AtomicUsize::new(0));
        let mut locked_started = 0;
        for round in 0..40u64 {
            let n = 1 + rng.below(8) as usize;
            go::set_gomaxprocs(n);
            busy.max.store(0, Ordering::SeqCst);
            let wg = Arc::new(WaitGroup::default());
            let c = Chan::<u64>::new(rng.below(3) as usize * 4);
            let pairs = 1 + rng.below(6);
            for k in 0..pairs {
                let msgs = 1 + rng.below(200);
                let (tx, rx) = (c.clone(), c.clone());
                let (busy1, sent, sum_sent, wg1) =
                    (busy.clone(), sent.clone(), sum_sent.clone(), wg.clone());
                let (busy2, got, sum_got, wg2) =
                    (busy.clone(), got.clone(), sum_got.clone(), wg.clone());
                wg.add(2).unwrap();
                go::go(move || {
                    for i in 0..msgs {
                        busy1.section();
                        if i % 7 == 0 {
                            go::syscall(|| std::hint::black_box(i));
                        }
                        let v = round * 1_000_000 + k * 1000 + i + 1;
                        tx.send(v);
                        sent.fetch_add(1, Ordering::SeqCst);
                        sum_sent.fetch_add(v as usize, Ordering::SeqCst);
                    }
                    wg1.done().unwrap();
                });
                go::go(move || {
                    for _ in 0..msgs {
                        let v = rx.recv().unwrap();
                        busy2.section();
                        got.fetch_add(1, Ordering::SeqCst);
                        sum_got.fetch_add(v as usize, Ordering::SeqCst);
                    }
                    wg2.done().unwrap();
                });
            }
            for _ in 0..rng.below(3) {
                let ops = 1 + rng.below(50);
                let exit_locked = rng.below(2) == 0;
                let (locked_ok, wg) = (locked_ok.clone(), wg.clone());
                wg.add(1).unwrap();
                locked_started += 1;
                go::go(move || {
                    go::lock_os_thread();
                    let tid = gettid();
                    let c = Chan::<u64>::new(0);
                    for i in 0..ops {
                        match i % 3 {
                            0 => go::gosched(),
                            1 => {
                                let d = c.clone();
                                go::go(move || d.send(i));
                                assert_eq!(c.recv(), Some(i));
                            }
                            _ => go::sleep(std::time::Duration::from_micros(10)),
                        }
                        assert_eq!(gettid(), tid, "a locked goroutine changed threads");
                    }
                    locked_ok.fetch_add(1, Ordering::SeqCst);
                    if !exit_locked {
                        go::unlock_os_thread();
                    }
                    wg.done().unwrap();
                });
            }
            if rng.below(2) == 0 {
                // A resize while the round runs.
                go::set_gomaxprocs(1 + rng.below(8) as usize);
            }
            wg.wait();
            let now = go::gomaxprocs();
            let max = busy.max.load(Ordering::SeqCst);
            // The limit in force since the last change is `now`; before it,
            // `n`: the larger bounds both.
            assert!(
                max <= now.max(n),
                "round {round}: {max} busy with GOMAXPROCS {n} then {now}"
            );
        }
        assert_eq!(got.load(Ordering::SeqCst), sent.load(Ordering::SeqCst));
        assert_eq!(
            sum_got.load(Ordering::SeqCst),
            sum_sent.load(Ordering::SeqCst)
        );
        assert_eq!(locked_ok.load(Ordering::SeqCst), locked_started);
        println!(
            "go_procs stress: {} messages, {locked_started} locked goroutines",
            got.load(Ordering::SeqCst)
        );
        go::set_gomaxprocs(start);
    });
}
