//! The concurrent collector's own handshake, barrier and mark-cycle code,
//! checked exhaustively by loom on a model heap: one global object with
//! two handle slots, one object it names, two mutators and the collector.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --features precise --test precise_loom
//! ```
//!
//! Under `--cfg loom` the collector's synchronisation (`src/precise/
//! sync.rs`: the handshake rounds, the marking state, the grey queue, the
//! per-thread words) runs on loom's primitives, and
//! `defergc::precise::model` hands the test the real pieces: registered
//! threads with their real state, their safepoint polls
//! (`mutator::poll`, which performs the real `mutator::act` for each
//! round), their stores through the real write barrier, their native-code
//! declarations (after which the collector acts for them), and the
//! collector's `mark_cycle` (Prepare, Snapshot, Flush rounds until one
//! marks nothing new). Only the heap is a model: its [`Tracer`] marks the
//! two objects and reads the global's two slots.
//!
//! The mutators move the object the way the lost-object example of
//! `collector/` does: the first copies it from slot 0 of the global
//! into slot 1 and clears slot 0; the second takes it from slot 1 into
//! its root (above its snapshot if it took it already) and clears slot 1.
//! At the end, every object reachable from the global or a root must be
//! marked. With the barrier disabled (the `test-hooks` feature, which the
//! crate's own tests have) loom finds an interleaving that loses it, and
//! `loom_catches_a_disabled_barrier` checks that it does.
//!
//! Without `--cfg loom` this file is empty: the real collector's stress
//! test on std threads is `precise_torture.rs`.
#![cfg(all(loom, feature = "precise"))]

use defergc::precise::{
    self,
    model::{self, Mutator, Tracer},
};
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use std::sync::Mutex;

/// Object ids, as raw handle values: 0 is null; 1 the global object (two
/// slots); 2 the object the mutators move.
const GLOBAL: u64 = 1;
const MOVED: u64 = 2;
const OBJECTS: usize = 3;

/// The global object's two handle slots (the moved object has none).
struct World {
    slots: [AtomicU64; 2],
    /// What the second mutator rooted (for the final check).
    rooted: AtomicU64,
}

/// The model heap as the collector's marker sees it.
struct ModelHeap<'w> {
    world: &'w World,
    marks: [bool; OBJECTS],
    grey: Vec<u64>,
    marked: u64,
}

impl Tracer for ModelHeap<'_> {
    fn visit(&mut self, raw: u64) {
        if raw != 0 {
            self.grey.push(raw);
        }
    }

    fn drain(&mut self) {
        while let Some(obj) = self.grey.pop() {
            let i = obj as usize;
            if i >= OBJECTS || self.marks[i] {
                continue;
            }
            self.marks[i] = true;
            self.marked += 1;
            if obj == GLOBAL {
                for s in &self.world.slots {
                    self.grey.push(s.load(Ordering::Acquire));
                }
            }
        }
    }

    fn marked(&self) -> u64 {
        self.marked
    }

    /// The global object is a global root.
    fn snapshot_taken(&mut self) {
        self.visit(GLOBAL);
    }

    fn globals(&mut self) {
        self.visit(GLOBAL);
    }
}

/// Runs the model under loom: every interleaving with at most two
/// preemptions (about 5 s; `LOOM_MAX_PREEMPTIONS=3` checks more, in about
/// two minutes).
fn check(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.max_branches = 100_000;
    b.check(f);
}

fn run() {
    check(|| {
        let world = Arc::new(World {
            slots: [AtomicU64::new(MOVED), AtomicU64::new(0)],
            rooted: AtomicU64::new(0),
        });
        let (first, second) = (Mutator::register(), Mutator::register());
        let w1 = world.clone();
        let first = thread::spawn(move || {
            // Two safepoints: enough to acknowledge Prepare and Snapshot
            // separately before the move.
            first.poll();
            first.poll();
            // Slot 0 -> slot 1, slot 0 cleared (no safepoint in between:
            // the handle is only in a register).
            let h = w1.slots[0].load(Ordering::Acquire);
            first.store(&w1.slots[1], h);
            first.store(&w1.slots[0], 0);
            first.enter_native();
            first
        });
        let w2 = world.clone();
        let second = thread::spawn(move || {
            second.poll();
            second.poll();
            // Slot 1 -> our root (above our snapshot if we took it
            // already), slot 1 cleared.
            let h = w2.slots[1].load(Ordering::Acquire);
            if h != 0 {
                second.root(h);
                w2.rooted.store(h, Ordering::Relaxed);
                second.store(&w2.slots[1], 0);
            }
            second.enter_native();
            second
        });
        let mut heap = ModelHeap {
            world: &world,
            marks: [false; OBJECTS],
            grey: Vec::new(),
            marked: 0,
        };
        model::mark_cycle(1, &mut heap);
        let (first, second) = (first.join().unwrap(), second.join().unwrap());
        // Every object reachable now must have been marked.
        let mut reachable = vec![GLOBAL, world.rooted.load(Ordering::Relaxed)];
        for s in &world.slots {
            reachable.push(s.load(Ordering::Acquire));
        }
        for obj in reachable {
            assert!(
                obj == 0 || heap.marks[obj as usize],
                "object {obj} is reachable but was not marked: lost"
            );
        }
        drop((first, second));
    });
}

/// The protocol hooks are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn loom_finds_no_interleaving_that_loses_the_moved_object() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    run();
}

#[test]
fn loom_catches_a_disabled_barrier() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    precise::break_protocol_for_tests(true, false);
    let caught = std::panic::catch_unwind(run);
    precise::break_protocol_for_tests(false, false);
    assert!(
        caught.is_err(),
        "loom found no lost object with the barrier disabled: the check checks nothing"
    );
}
