//! A model of the concurrent collector's handshake and barrier protocol
//! (`src/precise/collector.rs`, `threads.rs`, `access.rs`), checked
//! exhaustively by loom on a reduced heap: one global object with two
//! handle slots, one object it names, two mutators and the collector.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test precise_loom
//! ```
//!
//! Without `--cfg loom` the same model runs on std threads many times (a
//! stress test, part of `cargo test`). The model mirrors the protocol, not
//! the code: the collector sets the barrier flag, runs a Prepare round, a
//! Snapshot round (each mutator copies its roots at a safepoint), traces
//! from the snapshots and the global, then Flush rounds (each mutator hands
//! over its barrier log) until one marks nothing new. Mutators store
//! through the barrier of `access.rs` (log the old value; also the new one
//! between Prepare and Snapshot) and poll at safepoints.
//!
//! The mutators move the object the way the issue's lost-object example
//! does: the first copies it from slot 0 of the global into slot 1 and
//! clears slot 0; the second takes it from slot 1 into its root (above
//! its snapshot) and clears slot 1. At the end, every object reachable
//! from the global or a root must be marked. With the barrier disabled
//! the model finds an interleaving that loses it, and
//! `the_model_catches_a_disabled_barrier` checks that it does.

mod primitive {
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    #[cfg(loom)]
    pub use loom::sync::{Arc, Mutex};
    #[cfg(loom)]
    pub use loom::thread;

    #[cfg(not(loom))]
    pub use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    #[cfg(not(loom))]
    pub use std::sync::{Arc, Mutex};
    #[cfg(not(loom))]
    pub use std::thread;

    /// Runs `f` under loom's exhaustive scheduler (bounded preemptions), or
    /// many times on std threads.
    pub fn model(f: impl Fn() + Sync + Send + 'static) {
        #[cfg(loom)]
        {
            let mut b = loom::model::Builder::new();
            b.preemption_bound = Some(3);
            b.max_branches = 100_000;
            b.check(f);
        }
        #[cfg(not(loom))]
        for _ in 0..2000 {
            f();
        }
    }
}

use primitive::{thread, Arc, AtomicBool, AtomicUsize, Mutex, Ordering};

/// Object ids: 0 is null; 1 the global object (two slots); 2 the object
/// the mutators move.
const GLOBAL: usize = 1;
const MOVED: usize = 2;
const OBJECTS: usize = 3;

struct World {
    /// The global object's two handle slots (the moved object has none).
    slots: [AtomicUsize; 2],
    marks: [AtomicBool; OBJECTS],
    barrier: AtomicBool,
    /// The barrier the mutators apply (false: the broken variant).
    barrier_enabled: bool,
    /// The latest round: 1 Prepare, 2 Snapshot, 3.. Flush.
    round: AtomicUsize,
    mutators: [Mutator; 2],
    /// Snapshots and handed-over logs, for the marker.
    grey: Mutex<Vec<usize>>,
}

const RUNNING: usize = 0;
const NATIVE: usize = 1;
const SCANNING: usize = 2;

/// One mutator's collector state. Its root and log are only touched by
/// the mutator while it runs, or by the collector while it is SCANNING
/// (as in `threads.rs`); atomics and a mutex here only to share them.
struct Mutator {
    status: AtomicUsize,
    acked: AtomicUsize,
    root: AtomicUsize,
    log: Mutex<Vec<usize>>,
    before_snapshot: AtomicBool,
}

impl Mutator {
    fn new() -> Mutator {
        Mutator {
            status: AtomicUsize::new(RUNNING),
            acked: AtomicUsize::new(0),
            root: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
            before_snapshot: AtomicBool::new(false),
        }
    }
}

/// Performs `round` for `m` (by the mutator at a safepoint, or by the
/// collector on its behalf), as `collector::act` does.
fn act(w: &World, m: &Mutator, round: usize) {
    match round {
        1 => {
            m.log.lock().unwrap().clear();
            m.before_snapshot.store(true, Ordering::Relaxed);
        }
        2 => {
            m.before_snapshot.store(false, Ordering::Relaxed);
            let root = m.root.load(Ordering::Relaxed);
            if root != 0 {
                w.grey.lock().unwrap().push(root);
            }
        }
        _ => {
            let mut log = m.log.lock().unwrap();
            w.grey.lock().unwrap().append(&mut log);
        }
    }
    m.acked.store(round, Ordering::Release);
}

/// A running mutator's view.
struct Running<'w> {
    world: &'w World,
    me: &'w Mutator,
}

impl Running<'_> {
    /// A safepoint poll: performs a round not yet acknowledged.
    fn poll(&self) {
        let round = self.world.round.load(Ordering::Acquire);
        if round > self.me.acked.load(Ordering::Relaxed) {
            act(self.world, self.me, round);
        }
    }

    fn load(&self, slot: usize) -> usize {
        self.world.slots[slot].load(Ordering::Acquire)
    }

    /// A handle store through the barrier of `access.rs`.
    fn store(&self, slot: usize, value: usize) {
        let w = self.world;
        if w.barrier_enabled && w.barrier.load(Ordering::Relaxed) {
            let old = w.slots[slot].load(Ordering::Relaxed);
            let mut log = self.me.log.lock().unwrap();
            if old != 0 {
                log.push(old);
            }
            if value != 0 && self.me.before_snapshot.load(Ordering::Relaxed) {
                log.push(value);
            }
        }
        w.slots[slot].store(value, Ordering::Release);
    }

    /// The mutator is done: it stays in native code from here on, and the
    /// collector acts for it.
    fn enter_native(&self) {
        self.poll();
        self.me.status.store(NATIVE, Ordering::SeqCst);
    }
}

/// Runs one collection: returns when marking is complete.
fn collector(w: &World) {
    w.barrier.store(true, Ordering::SeqCst);
    let mut round = 0;
    let run_round = |round: &mut usize| {
        *round += 1;
        w.round.store(*round, Ordering::Release);
        for m in &w.mutators {
            while m.acked.load(Ordering::Acquire) < *round {
                if m.status
                    .compare_exchange(NATIVE, SCANNING, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    act(w, m, *round);
                    m.status.store(NATIVE, Ordering::SeqCst);
                } else {
                    thread::yield_now();
                }
            }
        }
    };
    run_round(&mut round); // Prepare
    run_round(&mut round); // Snapshot
    let mut marked = 0;
    let mut grey = vec![GLOBAL];
    let mut drain = |grey: &mut Vec<usize>| {
        grey.append(&mut w.grey.lock().unwrap());
        while let Some(obj) = grey.pop() {
            if obj == 0 || w.marks[obj].load(Ordering::Relaxed) {
                continue;
            }
            w.marks[obj].store(true, Ordering::Relaxed);
            marked += 1;
            if obj == GLOBAL {
                for s in &w.slots {
                    grey.push(s.load(Ordering::Acquire));
                }
            }
        }
        marked
    };
    drain(&mut grey);
    loop {
        // A Flush round that marks nothing new ends the marking.
        let before = drain(&mut grey);
        run_round(&mut round);
        if drain(&mut grey) == before {
            break;
        }
    }
    w.barrier.store(false, Ordering::SeqCst);
}

fn run(barrier_enabled: bool) {
    primitive::model(move || {
        let world = Arc::new(World {
            slots: [AtomicUsize::new(MOVED), AtomicUsize::new(0)],
            marks: [
                AtomicBool::new(false),
                AtomicBool::new(false),
                AtomicBool::new(false),
            ],
            barrier: AtomicBool::new(false),
            barrier_enabled,
            round: AtomicUsize::new(0),
            mutators: [Mutator::new(), Mutator::new()],
            grey: Mutex::new(Vec::new()),
        });
        let w1 = world.clone();
        let first = thread::spawn(move || {
            let m = Running {
                world: &w1,
                me: &w1.mutators[0],
            };
            // Two safepoints: enough to acknowledge Prepare and Snapshot
            // separately before the move.
            m.poll();
            m.poll();
            // Slot 0 -> slot 1, slot 0 cleared (no safepoint in between:
            // the handle is only in a register).
            let h = m.load(0);
            m.store(1, h);
            m.store(0, 0);
            m.enter_native();
        });
        let w2 = world.clone();
        let second = thread::spawn(move || {
            let m = Running {
                world: &w2,
                me: &w2.mutators[1],
            };
            m.poll();
            m.poll();
            // Slot 1 -> our root (above our snapshot if we took it
            // already), slot 1 cleared.
            let h = m.load(1);
            if h != 0 {
                m.me.root.store(h, Ordering::Relaxed);
                m.store(1, 0);
            }
            m.enter_native();
        });
        collector(&world);
        first.join().unwrap();
        second.join().unwrap();
        // Every object reachable now must have been marked.
        let mut reachable = vec![GLOBAL, world.mutators[1].root.load(Ordering::Relaxed)];
        for s in &world.slots {
            reachable.push(s.load(Ordering::Acquire));
        }
        for obj in reachable {
            assert!(
                obj == 0 || world.marks[obj].load(Ordering::Relaxed),
                "object {obj} is reachable but was not marked: lost"
            );
        }
    });
}

#[test]
fn the_handshake_and_barrier_protocol_never_loses_the_moved_object() {
    run(true);
}

#[cfg(loom)]
#[test]
fn the_model_catches_a_disabled_barrier() {
    let caught = std::panic::catch_unwind(|| run(false));
    assert!(
        caught.is_err(),
        "the model found no lost object with the barrier disabled: it checks nothing"
    );
}
