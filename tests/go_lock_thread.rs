//! `LockOSThread` / `UnlockOSThread` (Go 1.10's semantics), translated
//! from Go's `runtime/proc_test.go` and `testprog/lockosthread.go`:
//! calls nest; a locked goroutine keeps its thread (gettid) across
//! yields, parks and channel operations while other goroutines run, and
//! that thread runs no other goroutine meanwhile; more unlocks than locks
//! do nothing; a goroutine that exits locked ends its thread, and the
//! process's thread count does not grow over many such exits.

mod gorun;

use defergc::go::{self, Chan, WaitGroup};
use gorun::{gettid, run};
use serial_test::serial;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

fn thread_alive(tid: i64) -> bool {
    std::path::Path::new(&format!("/proc/self/task/{tid}")).exists()
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// A thousand yields, parks and channel operations on one thread while 8
/// other goroutines pass messages; none of them runs on the locked
/// thread while it is locked.
#[test]
#[serial]
fn a_locked_goroutine_keeps_its_thread_and_the_thread_runs_nothing_else() {
    run(|| {
        let start = go::set_gomaxprocs(4);
        let locked_tid = Arc::new(AtomicI64::new(-1));
        let locked = Arc::new(AtomicBool::new(false));
        let intruders = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let wg = Arc::new(WaitGroup::default());
        let ring: Vec<Chan<u64>> = (0..8).map(|_| Chan::new(1)).collect();
        ring[0].send(0);
        for i in 0..8 {
            let (rx, tx) = (ring[i].clone(), ring[(i + 1) % 8].clone());
            let (locked_tid, locked, intruders, stop, wg) = (
                locked_tid.clone(),
                locked.clone(),
                intruders.clone(),
                stop.clone(),
                wg.clone(),
            );
            wg.add(1).unwrap();
            go::go(move || {
                while !stop.load(Ordering::SeqCst) {
                    let v = rx.recv().unwrap();
                    if locked.load(Ordering::SeqCst)
                        && gettid() == locked_tid.load(Ordering::SeqCst)
                    {
                        intruders.fetch_add(1, Ordering::SeqCst);
                    }
                    tx.send(v + 1);
                }
                wg.done().unwrap();
            });
        }
        let c = Chan::<u64>::new(0);
        go::lock_os_thread();
        let tid = gettid();
        locked_tid.store(tid, Ordering::SeqCst);
        locked.store(true, Ordering::SeqCst);
        for i in 0..1000u64 {
            match i % 4 {
                0 => go::gosched(),
                1 => {
                    let d = c.clone();
                    go::go(move || d.send(i));
                    assert_eq!(c.recv(), Some(i));
                }
                2 => go::sleep(std::time::Duration::from_micros(1)),
                _ => {
                    // Parked on a wait group readied by another goroutine.
                    let w = Arc::new(WaitGroup::default());
                    w.add(1).unwrap();
                    let w2 = w.clone();
                    go::go(move || w2.done().unwrap());
                    w.wait();
                }
            }
            assert_eq!(gettid(), tid, "moved off its thread at step {i}");
        }
        locked.store(false, Ordering::SeqCst);
        go::unlock_os_thread();
        stop.store(true, Ordering::SeqCst);
        wg.wait();
        assert_eq!(
            intruders.load(Ordering::SeqCst),
            0,
            "goroutines ran on the locked thread"
        );
        go::set_gomaxprocs(start);
    });
}

/// Locks nest: after two locks and one unlock the goroutine is still
/// locked; unlocks beyond the locks do nothing (Go: no panic, no effect).
#[test]
#[serial]
fn locks_nest_and_extra_unlocks_do_nothing() {
    run(|| {
        let start = go::set_gomaxprocs(4);
        go::unlock_os_thread();
        go::unlock_os_thread();
        go::lock_os_thread();
        go::lock_os_thread();
        go::unlock_os_thread();
        let tid = gettid();
        for i in 0..500 {
            if i % 2 == 0 {
                // Readied by the worker that runs the timers.
                go::sleep(std::time::Duration::from_micros(1));
            } else {
                let c = Chan::<u8>::new(0);
                let d = c.clone();
                go::go(move || d.send(1));
                c.recv();
            }
            assert_eq!(gettid(), tid, "still locked once");
        }
        go::unlock_os_thread();
        go::unlock_os_thread();
        go::unlock_os_thread();
        // Locked once again after the extra unlocks: one unlock frees it.
        go::lock_os_thread();
        let tid = gettid();
        for _ in 0..200 {
            go::sleep(std::time::Duration::from_micros(1));
            assert_eq!(gettid(), tid);
        }
        go::unlock_os_thread();
        go::set_gomaxprocs(start);
    });
}

/// Go's TestLockOSThreadExit / LockOSThreadAlt: a goroutine that exits
/// locked ends its thread; the next goroutine that locks gets another
/// one; over 200 such exits the thread count stays bounded.
#[test]
#[serial]
fn exit_while_locked_ends_the_thread_and_threads_do_not_pile_up() {
    run(|| {
        let start = go::set_gomaxprocs(2);
        let before = threads();
        let stacks_before = go::sched_stats().signal_stacks;
        let mut last = -1;
        for i in 0..200 {
            let c = Chan::<i64>::new(1);
            let d = c.clone();
            go::go(move || {
                go::lock_os_thread();
                go::lock_os_thread();
                d.send(gettid());
                // Exits locked (twice).
            });
            let tid = c.recv().unwrap();
            assert_ne!(tid, last, "exit {i}: a new goroutine got the ended thread");
            // The thread ends after the goroutine: wait for it (counted
            // in yields, not time).
            let mut spins = 0u64;
            while thread_alive(tid) {
                go::gosched();
                spins += 1;
                assert!(spins < 5_000_000, "thread {tid} never ended");
            }
            last = tid;
        }
        let after = threads();
        assert!(
            after <= before + 4,
            "threads grew from {before} to {after} over 200 locked exits"
        );
        // Each ended thread gave its signal stack back.
        let stacks_after = go::sched_stats().signal_stacks;
        assert!(
            stacks_after <= stacks_before + 4,
            "signal stacks grew from {stacks_before} to {stacks_after} over 200 locked exits"
        );
        // The scheduler still has its workers: goroutines run.
        let wg = Arc::new(WaitGroup::default());
        let n = Arc::new(AtomicUsize::new(0));
        for _ in 0..1000 {
            let (wg, n) = (wg.clone(), n.clone());
            wg.add(1).unwrap();
            go::go(move || {
                go::gosched();
                n.fetch_add(1, Ordering::SeqCst);
                wg.done().unwrap();
            });
        }
        wg.wait();
        assert_eq!(n.load(Ordering::SeqCst), 1000);
        go::set_gomaxprocs(start);
    });
}

/// The main goroutine may lock (it runs on a worker thread) and return
/// locked: the next program runs.
#[test]
#[serial]
fn the_main_goroutine_locks_and_returns_locked() {
    for _ in 0..3 {
        run(|| {
            go::lock_os_thread();
            let tid = gettid();
            for _ in 0..100 {
                go::gosched();
                assert_eq!(gettid(), tid);
            }
        });
    }
}

/// Outside a goroutine both calls do nothing.
#[test]
#[serial]
fn outside_a_goroutine_locking_does_nothing() {
    go::lock_os_thread();
    go::unlock_os_thread();
    go::unlock_os_thread();
}

const DEADLOCK_CHILD: &str = "DEFERGC_LOCK_DEADLOCK_CHILD";

/// Every goroutine asleep, one of them locked (its thread waits for it):
/// still Go's deadlock report, status 2 (a locked worker that waits
/// counts as parked).
#[test]
fn a_locked_goroutine_asleep_for_good_is_a_deadlock() {
    if std::env::var_os(DEADLOCK_CHILD).is_some() {
        go::run(|| {
            go::set_gomaxprocs(2);
            let c = Chan::<u8>::new(0);
            let d = c.clone();
            go::go(move || {
                go::lock_os_thread();
                d.recv();
            });
            c.recv();
        });
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_locked_goroutine_asleep_for_good_is_a_deadlock",
            "--nocapture",
        ])
        .env(DEADLOCK_CHILD, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("fatal error: all goroutines are asleep - deadlock!"),
        "{stderr}"
    );
}
