//! The collectors see every goroutine: objects reachable only from the
//! stacks of parked goroutines survive collections (while the memory of
//! garbage is reused), objects whose last reference was on a finished
//! goroutine's stack are collected (the stack pool clears what it reuses),
//! and a running goroutine's stack is scanned where it runs.

#![cfg(defergc_boehm)]

mod child;

use defergc::{gc, go};
use serial_test::serial;
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Fills `words` words at `p` with a pattern of `seed`.
fn fill(p: *mut u64, words: usize, seed: u64) {
    for i in 0..words {
        // SAFETY: p has `words` writable words.
        unsafe {
            p.add(i)
                .write(seed.wrapping_mul(0x9E37_79B9).wrapping_add(i as u64))
        };
    }
}

fn intact(p: *const u64, words: usize, seed: u64) -> bool {
    // SAFETY: p has `words` readable words.
    (0..words).all(
        |i| unsafe { p.add(i).read() } == seed.wrapping_mul(0x9E37_79B9).wrapping_add(i as u64),
    )
}

/// Garbage of the same size class, so freed objects are reused at once.
fn churn(objects: usize) {
    for i in 0..objects {
        let p = gc::alloc(64).cast::<u64>().as_ptr();
        fill(p, 8, !(i as u64));
        black_box(p);
    }
}

/// A wait that the test releases: goroutines park until `open`.
struct Gate {
    open: AtomicBool,
    waiters: Mutex<Vec<go::Goroutine>>,
}

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate {
            open: AtomicBool::new(false),
            waiters: Mutex::new(Vec::new()),
        })
    }

    fn wait(&self) {
        self.waiters
            .lock()
            .unwrap()
            .push(go::Goroutine::current().unwrap());
        while !self.open.load(Ordering::SeqCst) {
            go::park("gate");
        }
    }

    fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
        for g in self.waiters.lock().unwrap().drain(..) {
            g.ready();
        }
    }
}

/// Finalizations of objects that must stay alive.
static LOST: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_lost(_obj: *mut c_void, _data: *mut c_void) {
    LOST.fetch_add(1, Ordering::SeqCst);
}

#[test]
#[serial]
fn objects_only_on_parked_goroutines_stacks_survive_collections() {
    const N: usize = 100_000;
    let status = go::run(|| {
        let gate = Gate::new();
        let parked = Arc::new(AtomicUsize::new(0));
        let intact_count = Arc::new(AtomicUsize::new(0));
        let finished = Arc::new(AtomicUsize::new(0));
        let main = go::Goroutine::current().unwrap();
        for i in 0..N {
            let (gate, parked, intact_count, finished) = (
                gate.clone(),
                parked.clone(),
                intact_count.clone(),
                finished.clone(),
            );
            go::go(move || {
                // The only reference: a local of this goroutine.
                let obj = gc::alloc(64).cast::<u64>().as_ptr();
                // SAFETY: obj is a live collectable object.
                unsafe {
                    gc::register_finalizer(obj.cast(), Some(count_lost), std::ptr::null_mut())
                };
                fill(obj, 8, i as u64);
                let obj = black_box(obj);
                parked.fetch_add(1, Ordering::SeqCst);
                gate.wait();
                if intact(obj, 8, i as u64) {
                    intact_count.fetch_add(1, Ordering::SeqCst);
                }
                if finished.fetch_add(1, Ordering::SeqCst) + 1 == N {
                    main.ready();
                }
            });
        }
        while parked.load(Ordering::SeqCst) < N {
            go::gosched();
        }
        // Every goroutine is parked holding its object only on its stack.
        LOST.store(0, Ordering::SeqCst);
        for _ in 0..3 {
            gc::collect();
            churn(200_000);
        }
        gc::run_finalizers();
        go::syscall(|| std::thread::sleep(std::time::Duration::from_millis(50)));
        assert_eq!(
            LOST.load(Ordering::SeqCst),
            0,
            "objects held only by parked goroutines were finalized"
        );
        gate.open();
        while finished.load(Ordering::SeqCst) < N {
            go::park("test");
        }
        assert_eq!(
            intact_count.load(Ordering::SeqCst),
            N,
            "objects held only by parked goroutines were collected"
        );
    });
    assert_eq!(status, 0);
}

static FINALIZED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count(_obj: *mut c_void, _data: *mut c_void) {
    FINALIZED.fetch_add(1, Ordering::SeqCst);
}

/// Allocates an object with a finalizer and leaves its address all over a
/// frame of this (deep: 8 KiB) call, as a compiled function's spilled
/// locals would. The goroutine never switches inside it, so the scheduler
/// never sees a stack pointer this deep.
#[inline(never)]
fn leave_references_on_stack() {
    let obj = gc::alloc(48).as_ptr();
    // SAFETY: obj is a live collectable object.
    unsafe { gc::register_finalizer(obj, Some(count), std::ptr::null_mut()) };
    let mut frame = [0usize; 1024];
    for w in frame.iter_mut() {
        *w = obj as usize;
    }
    black_box(&frame);
}

#[test]
#[serial]
fn objects_last_referenced_by_finished_goroutines_are_collected() {
    const N: usize = 2000;
    let status = go::run(|| {
        FINALIZED.store(0, Ordering::SeqCst);
        let finished = Arc::new(AtomicUsize::new(0));
        for _ in 0..N {
            let finished = finished.clone();
            go::go(move || {
                leave_references_on_stack();
                finished.fetch_add(1, Ordering::SeqCst);
            });
        }
        while finished.load(Ordering::SeqCst) < N {
            go::gosched();
        }
        // New goroutines reuse those stacks and park with shallow frames:
        // whatever the old ones left in their slots would be scanned now.
        let gate = Gate::new();
        let parked = Arc::new(AtomicUsize::new(0));
        for _ in 0..N {
            let (gate, parked) = (gate.clone(), parked.clone());
            go::go(move || {
                parked.fetch_add(1, Ordering::SeqCst);
                gate.wait();
            });
        }
        while parked.load(Ordering::SeqCst) < N {
            go::gosched();
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        while FINALIZED.load(Ordering::SeqCst) < N * 9 / 10 {
            assert!(
                std::time::Instant::now() < deadline,
                "only {} of {N} objects last referenced by finished goroutines were collected",
                FINALIZED.load(Ordering::SeqCst)
            );
            gc::collect();
            churn(10_000);
            go::syscall(|| std::thread::sleep(std::time::Duration::from_millis(5)));
        }
        gate.open();
    });
    assert_eq!(status, 0);
}

#[test]
#[serial]
fn a_running_goroutines_stack_is_scanned_where_it_runs() {
    // Goroutines allocate while others collect: each keeps a chain of
    // objects referenced only from its own stack and checks it after every
    // collection it may have been stopped in.
    let status = go::run(|| {
        let workers = 8;
        let done = Arc::new(AtomicUsize::new(0));
        let bad = Arc::new(AtomicUsize::new(0));
        let main = go::Goroutine::current().unwrap();
        for w in 0..workers {
            let (done, bad) = (done.clone(), bad.clone());
            go::go(move || {
                let mut held: Vec<*mut u64> = Vec::new();
                let held_on_gc = gc::alloc(8 * 256).cast::<*mut u64>().as_ptr();
                for round in 0..200u64 {
                    let p = gc::alloc(64).cast::<u64>().as_ptr();
                    fill(p, 8, w * 1000 + round);
                    // The only reference is in a GC object on our stack.
                    // SAFETY: held_on_gc has 256 slots.
                    unsafe { held_on_gc.add(round as usize).write(p) };
                    held.push(p);
                    churn(2000);
                    if round % 50 == 0 {
                        gc::collect();
                    }
                    go::gosched();
                }
                for (round, &p) in held.iter().enumerate() {
                    if !intact(p, 8, w * 1000 + round as u64) {
                        bad.fetch_add(1, Ordering::SeqCst);
                    }
                }
                black_box(held_on_gc);
                if done.fetch_add(1, Ordering::SeqCst) + 1 == workers as usize {
                    main.ready();
                }
            });
        }
        while done.load(Ordering::SeqCst) < workers as usize {
            go::park("test");
        }
        assert_eq!(
            bad.load(Ordering::SeqCst),
            0,
            "objects held by running goroutines were lost"
        );
    });
    assert_eq!(status, 0);
}

/// Pointers a [`hold_many`] frame keeps: more than a marker thread's
/// local mark stack holds (bdwgc's is 4,096 entries), one push each.
const HELD: usize = 12_000;

/// Allocates `HELD` scanned objects, each filled with its pattern, keeps
/// their addresses only in this frame's array, parks at `gate`, then
/// counts the objects still intact.
#[inline(never)]
fn hold_many(gate: &Gate, parked: &AtomicUsize, seed: u64) -> usize {
    let mut held = [0usize; HELD];
    for (i, slot) in held.iter_mut().enumerate() {
        let p = gc::alloc(32).cast::<u64>().as_ptr();
        fill(p, 4, seed + i as u64);
        *slot = p as usize;
    }
    black_box(&mut held);
    parked.fetch_add(1, Ordering::SeqCst);
    gate.wait();
    held.iter()
        .enumerate()
        .filter(|&(i, &p)| intact(p as *const u64, 4, seed + i as u64))
        .count()
}

/// A parked goroutine whose stack holds more heap pointers than a marker
/// thread's local mark stack has entries: the marker pushes the range as
/// one entry instead of a push per pointer (`Marker::scan_stack`), and
/// every object it reaches stays (with that entry covering a quarter of
/// the range, 11,960 of 48,000 objects were left intact). Runs in a child
/// process under a time limit, so that a collection that never ends fails
/// the test instead of hanging it.
#[test]
#[serial]
fn a_stack_with_more_pointers_than_a_markers_stack_is_marked() {
    const TEST: &str = "a_stack_with_more_pointers_than_a_markers_stack_is_marked";
    const GOROUTINES: usize = 4;
    if std::env::var_os("DEFERGC_GO_GC_CHILD").is_none() {
        let out = child::run_test(
            TEST,
            &[("DEFERGC_GO_GC_CHILD", "1")],
            std::time::Duration::from_secs(120),
        )
        .expect("the collections had not ended after 120 s");
        assert!(out.status.success(), "{}", child::text(&out));
        return;
    }
    let status = go::run(|| {
        let gate = Gate::new();
        let parked = Arc::new(AtomicUsize::new(0));
        let intact_count = Arc::new(AtomicUsize::new(0));
        let finished = Arc::new(AtomicUsize::new(0));
        for g in 0..GOROUTINES {
            let (gate, parked, intact_count, finished) = (
                gate.clone(),
                parked.clone(),
                intact_count.clone(),
                finished.clone(),
            );
            go::go(move || {
                let n = hold_many(&gate, &parked, (g * HELD) as u64 * 7);
                intact_count.fetch_add(n, Ordering::SeqCst);
                finished.fetch_add(1, Ordering::SeqCst);
            });
        }
        while parked.load(Ordering::SeqCst) < GOROUTINES {
            go::gosched();
        }
        for _ in 0..3 {
            gc::collect();
            churn(50_000);
        }
        gate.open();
        while finished.load(Ordering::SeqCst) < GOROUTINES {
            go::gosched();
        }
        assert_eq!(intact_count.load(Ordering::SeqCst), GOROUTINES * HELD);
    });
    assert_eq!(status, 0);
}
