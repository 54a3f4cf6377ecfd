//! A processor's system-call handshake and sysmon's wait, on the real code
//! (`src/go/syscall.rs`, `src/go/sysmon.rs`), checked exhaustively by loom.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test syscall_loom
//! ```
//!
//! The handshake: a worker enters a system call (its processor becomes
//! `P_SYSCALL`) and, back from it, marks itself out of the call and looks
//! for a taker with plain loads and stores; sysmon, having seen the same
//! call, raises the processor's `taking` flag, makes the heavy barrier
//! (a fence under loom, which is what `membarrier` makes every running
//! thread do) and takes the processor if the worker is still in its call.
//! Exactly one of them owns the processor afterwards, and the owner sees
//! what the worker wrote to the processor's queue before the call: the
//! queue is a loom cell, so two owners, or an owner without the
//! happens-before edge, are a data race loom reports. A processor taken
//! and handed to a second worker, itself in a call on it, is not the
//! first worker's when it comes back. `loom_catches_a_blind_leave` brings
//! back a worker that does not look for a taker and checks that loom
//! finds the double owner.
//!
//! sysmon's wait: it waits while every processor is idle, and a worker
//! that takes a processor from the idle list wakes it. Loom reports a
//! sysmon nobody wakes as a deadlock; `loom_catches_a_late_announcement`
//! brings back a sysmon that looks at the count before it announces its
//! wait, and checks that loom finds the lost wake. Each bug runs in a
//! child process: loom aborts after such a report.
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, Sleeper, SyscallP, SyscallWorker};
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;
use loom_check::check;
use std::sync::atomic::Ordering;

/// A processor and its local queue (the holder's only), and the worker
/// that holds it first.
struct Proc {
    p: SyscallP,
    queue: UnsafeCell<u64>,
    w: SyscallWorker,
}

impl Proc {
    /// The owner of the processor adds `n` to its queue: loom reports a
    /// data race if another thread may own it at the same time, or if
    /// this one took it over without seeing the previous owner's writes.
    fn own(&self, n: u64) {
        self.queue.with_mut(|q| {
            // SAFETY: loom checks that this thread alone owns the queue now.
            unsafe { *q += n }
        });
    }

    fn new() -> Arc<Proc> {
        Arc::new(Proc {
            p: SyscallP::new_running(),
            queue: UnsafeCell::new(0),
            w: SyscallWorker::new(),
        })
    }
}

/// sysmon's side: looks at the processor twice (two rounds); if it saw
/// the same call both times, retakes it and then uses its queue as the
/// new owner. Whether it retook.
fn sysmon_rounds(pr: &Proc) -> bool {
    let Some(seen) = pr.p.in_syscall() else {
        return false;
    };
    if pr.p.in_syscall() != Some(seen) || !pr.p.retake(seen) {
        return false;
    }
    // The new owner (the worker it hands the processor to).
    pr.own(10);
    true
}

/// One system call: exactly one of the worker and sysmon owns the
/// processor afterwards, and the owner sees the worker's write.
fn one_call() {
    let pr = Proc::new();
    let owners = Arc::new(AtomicUsize::new(0));
    let (pr2, owners2) = (pr.clone(), owners.clone());
    let sysmon = thread::spawn(move || {
        if sysmon_rounds(&pr2) {
            owners2.fetch_add(1, Ordering::SeqCst);
        }
    });
    // The worker: a goroutine queued before the call.
    // The worker holds the processor.
    pr.own(1);
    pr.p.enter(&pr.w);
    if pr.p.leave(&pr.w) {
        owners.fetch_add(1, Ordering::SeqCst);
        // It took the processor back: it alone owns the queue.
        pr.own(100);
    }
    sysmon.join().unwrap();
    assert_eq!(owners.load(Ordering::SeqCst), 1, "one owner after the call");
    // SAFETY: every thread has been joined.
    let q = pr.queue.with(|q| unsafe { *q });
    assert!(q == 101 || q == 11, "the queue is {q}");
}

#[test]
fn a_call_ends_with_one_owner() {
    check(one_call);
}

/// Two calls in a row while sysmon looks: sysmon may take either (a new
/// call entered between its look and its CAS is taken early, as in Go),
/// never one the worker took back, and never two owners.
#[test]
fn back_to_back_calls_never_have_two_owners() {
    check(|| {
        let pr = Proc::new();
        let pr2 = pr.clone();
        let sysmon = thread::spawn(move || sysmon_rounds(&pr2));
        let mut held = true;
        for _ in 0..2 {
            pr.p.enter(&pr.w);
            if !pr.p.leave(&pr.w) {
                held = false;
                break;
            }
            // It took the processor back: it alone owns the queue.
            pr.own(1);
        }
        let retook = sysmon.join().unwrap();
        assert_eq!(held, !retook, "the worker holds it unless sysmon took it");
    });
}

/// A processor that stays in its call is retaken once sysmon saw the call
/// twice; the worker then finds it taken (its slow path).
#[test]
fn a_long_call_is_retaken() {
    check(|| {
        let pr = Proc::new();
        pr.p.enter(&pr.w);
        let pr2 = pr.clone();
        let sysmon = thread::spawn(move || assert!(sysmon_rounds(&pr2)));
        sysmon.join().unwrap();
        assert!(
            !pr.p.leave(&pr.w),
            "the worker took back a retaken processor"
        );
    });
}

/// sysmon retakes the processor of a worker in a call and a second worker
/// takes it from the idle list and enters a call of its own on it, while
/// the first comes back: the first must not find the processor its own
/// (the second's call has the same status), and the second, back from
/// its call, owns it.
fn handed_on() {
    let pr = Proc::new();
    // The first worker holds the processor.
    pr.own(1);
    pr.p.enter(&pr.w);
    let pr2 = pr.clone();
    let second = thread::spawn(move || {
        let Some(seen) = pr2.p.in_syscall() else {
            return false;
        };
        if !pr2.p.retake(seen) {
            return false;
        }
        assert!(pr2.p.take_idle(), "a retaken processor is idle");
        let w2 = SyscallWorker::new();
        pr2.p.enter(&w2);
        assert!(pr2.p.leave(&w2), "no one took it from the second worker");
        pr2.own(10);
        true
    });
    let first = pr.p.leave(&pr.w);
    if first {
        pr.own(100);
    }
    let second = second.join().unwrap();
    assert!(first != second, "one owner: first {first}, second {second}");
}

#[test]
fn a_processor_handed_on_is_not_the_first_workers() {
    check(handed_on);
}

/// As [`handed_on`], with a stopper taking whatever call the processor is
/// in meanwhile (the first worker's, or the second's): every take forgets
/// the processor's caller, so the stopper never takes the second worker's
/// call on the word of the first, and exactly one of the three ends up
/// owning the processor.
fn handed_on_while_a_stop_takes() {
    let pr = Proc::new();
    pr.p.enter(&pr.w);
    let (pr2, pr3) = (pr.clone(), pr.clone());
    let second = thread::spawn(move || {
        let Some(seen) = pr2.p.in_syscall() else {
            return false;
        };
        if !pr2.p.retake(seen) || !pr2.p.take_idle() {
            return false;
        }
        let w2 = SyscallWorker::new();
        pr2.p.enter(&w2);
        let kept = pr2.p.leave(&w2);
        if kept {
            pr2.own(10);
        }
        kept
    });
    let stopper = thread::spawn(move || {
        let took = {
            let _sched = pr3.p.lock();
            pr3.p.take_for_stop()
        };
        if took {
            pr3.own(1000);
        }
        took
    });
    let first = pr.p.leave(&pr.w);
    if first {
        pr.own(100);
    }
    let owners = [first, second.join().unwrap(), stopper.join().unwrap()];
    assert_eq!(
        owners.iter().filter(|&&o| o).count(),
        1,
        "one owner of first, second, stopper: {owners:?}"
    );
}

#[test]
fn a_stop_never_takes_a_call_on_a_stale_caller() {
    check(handed_on_while_a_stop_takes);
}

/// A worker that saw a stop begin as it entered its call waits for the
/// scheduler lock to give its processor to the stopper; meanwhile the
/// stop took the processor, the world started again, and a second worker
/// took it and entered a call of its own. The first worker's claim must
/// not take the second worker's call (the stop that counted it is over:
/// it would count a processor for no stop, or twice for the next).
fn a_claim_after_the_take() {
    let pr = Proc::new();
    pr.p.enter(&pr.w);
    let pr2 = pr.clone();
    let stop = thread::spawn(move || {
        let took = {
            let _sched = pr2.p.lock();
            pr2.p.take_for_stop()
        };
        if took {
            pr2.p.restart();
            assert!(pr2.p.take_idle(), "a restarted processor is idle");
            pr2.p.enter(&SyscallWorker::new());
        }
        took
    });
    let claimed = {
        let _sched = pr.p.lock();
        pr.p.claim_for_stop(&pr.w)
    };
    let took = stop.join().unwrap();
    assert!(
        !(claimed && took),
        "the stop took the processor and the worker claimed it too"
    );
}

#[test]
fn a_late_claim_never_takes_another_workers_call() {
    check(a_claim_after_the_take);
}

/// sysmon waits while every processor is idle; a worker takes one (the
/// idle count drops) and wakes it.
fn sysmon_waits_until_a_processor_is_busy() {
    const PROCS: usize = 2;
    let npidle = Arc::new(AtomicUsize::new(PROCS));
    let me = Arc::new(Sleeper::for_current());
    let (n2, me2) = (npidle.clone(), me.clone());
    let worker = thread::spawn(move || {
        // procs::pidleget: the count, then the wake.
        if n2.fetch_sub(1, Ordering::SeqCst) == PROCS {
            me2.wake();
        }
    });
    me.wait_while(|| npidle.load(Ordering::SeqCst) == PROCS);
    assert!(npidle.load(Ordering::SeqCst) < PROCS, "woken while idle");
    worker.join().unwrap();
}

#[test]
fn a_busy_processor_wakes_a_waiting_sysmon() {
    check(sysmon_waits_until_a_processor_is_busy);
}

const BUG_CHILD: &str = "DEFERGC_SYSCALL_LOOM_BUG";

/// Runs `test` (the caller) in a child with `BUG_CHILD` set, where
/// `model` runs the model with `bug` on: it must fail with loom's report
/// containing `what`.
fn loom_catches(test: &str, bug: &str, what: &str, model: impl FnOnce()) {
    if let Some(report) = child::loom_catches(test, BUG_CHILD, bug, model) {
        let line = child::loom_line(bug, &report, |l| l.to_lowercase().contains(what));
        assert!(line.is_some(), "{test} failed without {what:?}: {report}");
    }
}

/// A worker that leaves its call without looking for a taker keeps its
/// processor while sysmon, past its barrier, takes it: loom finds the two
/// owners.
#[test]
fn loom_catches_a_blind_leave() {
    let test = "loom_catches_a_blind_leave";
    loom_catches(test, "a blind leave", "panicked", || {
        model::set_blind_leave(true);
        check(one_call);
    });
}

/// A sysmon that looks at the idle count before it announces its wait:
/// a wake in between finds no waiter, and loom finds the deadlock.
#[test]
fn loom_catches_a_late_announcement() {
    let test = "loom_catches_a_late_announcement";
    loom_catches(test, "a late announcement", "deadlock", || {
        model::set_late_announce(true);
        check(sysmon_waits_until_a_processor_is_busy);
    });
}
