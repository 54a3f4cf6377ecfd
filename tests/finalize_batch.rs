//! Finalizers taken off bdwgc's queue a batch at a time: under load from
//! two drains at once (the finalizer thread and `gc::run_finalizers`, some
//! of it called from inside finalizers), every finalizer runs once, on an
//! object still intact, and what waits in a detached batch is not
//! collected before its finalizer ran.

#![cfg(defergc_boehm)]

mod seeded;

use defergc::gc;
use serial_test::serial;
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

/// Objects made in all: several rounds, each more than one batch.
const MAX: usize = 40_000;
const CHECK: usize = 0x5a5a_5a5a;

static RAN: [AtomicU8; MAX] = [const { AtomicU8::new(0) }; MAX];
static TWICE: AtomicUsize = AtomicUsize::new(0);
static BROKEN: AtomicUsize = AtomicUsize::new(0);
static NESTED: AtomicUsize = AtomicUsize::new(0);

/// Checks the object's two words and counts its finalization; every
/// `nest`-th (client data) drains the queue itself from inside.
unsafe extern "C" fn finalized(obj: *mut c_void, data: *mut c_void) {
    // SAFETY: the objects made below: two words, still live for this call.
    let (i, check) = unsafe {
        (
            obj.cast::<usize>().read(),
            obj.cast::<usize>().add(1).read(),
        )
    };
    if i >= MAX || check != i ^ CHECK {
        BROKEN.fetch_add(1, Ordering::SeqCst);
        return;
    }
    if RAN[i].fetch_add(1, Ordering::SeqCst) != 0 {
        TWICE.fetch_add(1, Ordering::SeqCst);
    }
    let nest = data as usize;
    if nest != 0 && i % nest == 0 {
        NESTED.fetch_add(1, Ordering::SeqCst);
        gc::run_finalizers();
    }
}

/// `n` finalizable objects numbered from `first`, dropped (in a frame of
/// their own, so that no stale local keeps them).
#[inline(never)]
fn garbage(first: usize, n: usize, nest: usize) {
    for i in first..first + n {
        let p = gc::alloc(16).cast::<usize>().as_ptr();
        // SAFETY: a fresh two-word object; the finalizer only reads it.
        unsafe {
            p.write(i);
            p.add(1).write(i ^ CHECK);
            gc::register_finalizer(p.cast(), Some(finalized), nest as *mut c_void);
        }
        black_box(p);
    }
}

#[test]
#[serial]
fn every_finalizer_runs_once_on_an_intact_object_whichever_thread_drains() {
    let seed = seeded::seed("DEFERGC_FINALIZE_BATCH_SEED");
    println!("seed {seed} (DEFERGC_FINALIZE_BATCH_SEED={seed} repeats this run)");
    let mut rng = seeded::Rng(seed);
    // A second drain beside the finalizer thread, until the end.
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let drainer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut ran = 0;
            while !stop.load(Ordering::SeqCst) {
                ran += gc::run_finalizers();
                std::thread::yield_now();
            }
            ran
        })
    };
    let mut made = 0;
    while made < MAX {
        // More than a batch (256) a round, mostly several.
        let n = (300 + rng.below(3_000) as usize).min(MAX - made);
        // (The first round always has nested drains.)
        let nest = if made == 0 {
            5
        } else {
            [0, 0, 5, 97][rng.below(4) as usize]
        };
        garbage(made, n, nest);
        made += n;
        if rng.below(2) == 0 {
            gc::collect_with_clean_stack();
        }
    }
    // A stale word may keep a few (conservative scanning), far fewer than
    // the batches (at least MAX / 256): a batch that lost one would show.
    let want = MAX - MAX / 4000;
    let mut rounds = 0;
    let ran = || RAN.iter().filter(|r| r.load(Ordering::SeqCst) > 0).count();
    while ran() < want && rounds < 2_000 {
        gc::collect_with_clean_stack();
        gc::run_finalizers();
        std::thread::sleep(std::time::Duration::from_millis(1));
        rounds += 1;
    }
    stop.store(true, Ordering::SeqCst);
    drainer.join().unwrap();
    println!("{} of {MAX} finalized after {rounds} collections", ran());
    assert_eq!(
        BROKEN.load(Ordering::SeqCst),
        0,
        "a finalizer saw a broken object (seed {seed})"
    );
    assert_eq!(
        TWICE.load(Ordering::SeqCst),
        0,
        "a finalizer ran twice (seed {seed})"
    );
    assert!(
        NESTED.load(Ordering::SeqCst) > 0,
        "no finalizer drained the queue itself"
    );
    let ran = ran();
    assert!(
        ran >= want,
        "only {ran} of {MAX} finalizers ran after {rounds} collections (seed {seed})"
    );
}
