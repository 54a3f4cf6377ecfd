//! A processor's system-call handshake and sysmon's wait, on the real code
//! (`src/go/syscall.rs`, `src/go/sysmon.rs`), checked exhaustively by loom.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test syscall_loom
//! ```
//!
//! The handshake: a worker enters a system call (its processor becomes
//! `P_SYSCALL`) and, back from it, takes the processor back with a CAS;
//! sysmon, having seen the same call, takes it with a CAS. Exactly one of
//! them owns the processor afterwards, and the owner sees what the worker
//! wrote to the processor's queue before the call: the queue is a loom
//! cell, so two owners, or an owner without the happens-before edge, are
//! a data race loom reports. `loom_catches_a_retake_by_store` brings back
//! a retake by a plain store and checks that loom finds the double owner.
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

use defergc::go::model::{self, Sleeper, SyscallP};
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;
use loom_check::check;
use std::sync::atomic::Ordering;

/// A processor and its local queue (the holder's only).
struct Proc {
    p: SyscallP,
    queue: UnsafeCell<u64>,
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
    pr.queue.with_mut(|q| {
        // SAFETY: loom checks that this thread alone owns the queue now.
        unsafe { *q += 10 }
    });
    true
}

/// One system call: exactly one of the worker and sysmon owns the
/// processor afterwards, and the owner sees the worker's write.
fn one_call() {
    let pr = Arc::new(Proc {
        p: SyscallP::new_running(),
        queue: UnsafeCell::new(0),
    });
    let owners = Arc::new(AtomicUsize::new(0));
    let (pr2, owners2) = (pr.clone(), owners.clone());
    let sysmon = thread::spawn(move || {
        if sysmon_rounds(&pr2) {
            owners2.fetch_add(1, Ordering::SeqCst);
        }
    });
    // The worker: a goroutine queued before the call.
    // SAFETY: the worker holds the processor.
    pr.queue.with_mut(|q| unsafe { *q = 1 });
    pr.p.enter();
    if pr.p.reacquire() {
        owners.fetch_add(1, Ordering::SeqCst);
        // SAFETY: it took the processor back: it alone owns the queue.
        pr.queue.with_mut(|q| unsafe { *q += 100 });
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
        let pr = Arc::new(Proc {
            p: SyscallP::new_running(),
            queue: UnsafeCell::new(0),
        });
        let pr2 = pr.clone();
        let sysmon = thread::spawn(move || sysmon_rounds(&pr2));
        let mut held = true;
        for _ in 0..2 {
            pr.p.enter();
            if !pr.p.reacquire() {
                held = false;
                break;
            }
            // SAFETY: it took the processor back: it alone owns the queue.
            pr.queue.with_mut(|q| unsafe { *q += 1 });
        }
        let retook = sysmon.join().unwrap();
        assert_eq!(held, !retook, "the worker holds it unless sysmon took it");
    });
}

/// A processor that stays in its call is retaken once sysmon saw the call
/// twice; the worker's CAS then fails (its slow path).
#[test]
fn a_long_call_is_retaken() {
    check(|| {
        let pr = Arc::new(Proc {
            p: SyscallP::new_running(),
            queue: UnsafeCell::new(0),
        });
        pr.p.enter();
        let pr2 = pr.clone();
        let sysmon = thread::spawn(move || assert!(sysmon_rounds(&pr2)));
        sysmon.join().unwrap();
        assert!(
            !pr.p.reacquire(),
            "the worker took back a retaken processor"
        );
    });
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

/// A retake by a plain store after a load of the status: the worker's CAS
/// between the two wins too, and loom finds the two owners.
#[test]
fn loom_catches_a_retake_by_store() {
    let test = "loom_catches_a_retake_by_store";
    loom_catches(test, "a retake by store", "panicked", || {
        model::set_retake_store(true);
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
