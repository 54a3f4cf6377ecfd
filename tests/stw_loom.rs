//! The scheduler's stop-the-world handshake on the real code
//! (`src/go/stw.rs`'s `World`), checked exhaustively by loom:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test stw_loom
//! ```
//!
//! The model plays the scheduler around the handshake as `idle.rs` and
//! `stw.rs` do: a lock for the idle processor list; workers that hold a
//! processor, check `waiting` at each scheduling point, run a busy
//! section between them (no scheduling point inside), and give their
//! processor up under the lock (to the stopper if a stop is asked, else
//! to the idle list); a stopper that, under the lock, begins the stop and
//! claims the idle processors, then waits. Checked: the stopper's wait
//! never returns while a worker is inside a busy section, every stop
//! completes (loom reports a stopper never woken as a deadlock), and
//! stoppers take turns. `loom_catches_two_stoppers_at_once` brings back
//! a stopper that does not wait for another to finish, and checks (in a
//! child process) that loom finds it. (A stop that raised its flag
//! before setting its count would be harmless: every processor is given
//! up under the scheduler lock, which the stopper holds while it begins.)
//!
//! A stop and a worker entering a system call (`syscall.rs`'s
//! `publish_enter`, `stop_began`, `claim_for_stop`, and the take that
//! `stw.rs` makes of processors in calls, after its heavy barrier, and
//! the worker's `leave`): the call lasts until the stop is over, so the
//! stop completes only if the stopper claims the processor or the worker
//! gives it over at its entry, whichever saw the other. Loom reports a
//! stop that waits for the call as a deadlock;
//! `loom_catches_an_entry_that_ignores_a_stop` brings back an entry that
//! does not look for a stop (the bug Go's `entersyscall_gcwait` avoids).
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, SyscallP, SyscallWorker, World};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use loom_check::check;

/// The scheduler around the handshake.
struct Sched {
    world: World,
    /// The idle processors (the scheduler lock).
    idle: Mutex<Vec<usize>>,
    /// Processors in use.
    procs: usize,
    /// Workers inside a busy section.
    busy: AtomicUsize,
}

impl Sched {
    /// `procs` processors, the first `held` held by workers, the rest idle.
    fn new(procs: usize, held: usize) -> Arc<Sched> {
        Arc::new(Sched {
            world: World::new(),
            idle: Mutex::new((held..procs).collect()),
            procs,
            busy: AtomicUsize::new(0),
        })
    }

    /// `idle::release_p`: a worker gives its processor up.
    fn release_p(&self, p: usize) {
        let mut idle = self.idle.lock().unwrap();
        if self.world.waiting() {
            self.world.stopped_one();
        } else {
            idle.push(p);
        }
    }

    /// A worker holding `p`: `steps` scheduling points with a busy
    /// section after each, unless a stop is asked (it stops its
    /// processor, as `gcstopm`, and is done).
    fn worker(&self, p: usize, steps: usize) {
        for _ in 0..steps {
            if self.world.waiting() {
                self.release_p(p);
                return;
            }
            self.busy.fetch_add(1, Ordering::SeqCst);
            thread::yield_now();
            self.busy.fetch_sub(1, Ordering::SeqCst);
        }
        // Out of work: the processor goes back.
        self.release_p(p);
    }

    /// `stw::stop_the_world` from a plain thread (no processor of its
    /// own): everything stops, then the world starts again.
    fn stop_the_world(&self) {
        self.world.acquire();
        {
            let mut idle = self.idle.lock().unwrap();
            self.world.begin(self.procs);
            while idle.pop().is_some() {
                self.world.stopped_one();
            }
        }
        self.world.wait();
        assert_eq!(
            self.busy.load(Ordering::SeqCst),
            0,
            "the world stopped while a worker was running"
        );
        {
            let mut idle = self.idle.lock().unwrap();
            self.world.end();
            idle.clear();
            idle.extend(0..self.procs);
        }
        self.world.release();
    }
}

/// Two running workers and one idle processor: the stop waits for both
/// workers' next scheduling points, however they interleave with it.
#[test]
fn a_stop_waits_for_every_running_processor() {
    check(|| {
        let s = Sched::new(3, 2);
        let workers: Vec<_> = (0..2)
            .map(|p| {
                let s = s.clone();
                thread::spawn(move || s.worker(p, 2))
            })
            .collect();
        s.stop_the_world();
        for w in workers {
            w.join().unwrap();
        }
    });
}

/// Two stoppers and a running worker: the stops take turns, each sees
/// the world stopped.
#[test]
fn two_stoppers_take_turns() {
    check(two_stoppers);
}

fn two_stoppers() {
    let s = Sched::new(2, 1);
    let w = {
        let s = s.clone();
        thread::spawn(move || s.worker(0, 1))
    };
    let other = {
        let s = s.clone();
        thread::spawn(move || s.stop_the_world())
    };
    s.stop_the_world();
    other.join().unwrap();
    w.join().unwrap();
}

/// A stop of the world, and a worker holding the one processor that
/// enters a system call lasting until the stop is over.
struct CallRace {
    world: World,
    /// The processor, and the scheduler lock.
    p: SyscallP,
    w: SyscallWorker,
    /// The call may return (the stop is over).
    over: Mutex<bool>,
    over_cv: Condvar,
    /// The worker runs goroutine code.
    busy: AtomicUsize,
}

impl CallRace {
    /// The worker: a scheduling point, then the call (`enter_syscall`),
    /// then, back with its processor, goroutine code and a scheduling
    /// point again.
    fn worker(&self) {
        if self.world.waiting() {
            let _l = self.p.lock();
            self.world.stopped_one();
            return;
        }
        self.p.enter(&self.w);
        if self.p.stop_began(&self.world) {
            let _l = self.p.lock();
            if self.p.claim_for_stop(&self.w) {
                self.world.stopped_one();
            }
        }
        // In the call: it returns once the stop is over.
        let mut over = self.over.lock().unwrap();
        while !*over {
            over = self.over_cv.wait(over).unwrap();
        }
        drop(over);
        if !self.p.leave(&self.w) {
            // Taken for the stop: the slow exit queues the goroutine.
            return;
        }
        self.busy.fetch_add(1, Ordering::SeqCst);
        thread::yield_now();
        self.busy.fetch_sub(1, Ordering::SeqCst);
    }

    /// The stopper (a plain thread): begins the stop counting the
    /// processor as running, claims it if it is in a call, waits.
    fn stop(&self) {
        self.world.acquire();
        {
            let _l = self.p.lock();
            self.world.begin(1);
            if self.p.take_for_stop() {
                self.world.stopped_one();
            }
        }
        self.world.wait();
        assert_eq!(
            self.busy.load(Ordering::SeqCst),
            0,
            "the world stopped while the worker ran goroutine code"
        );
        *self.over.lock().unwrap() = true;
        self.over_cv.notify_all();
        let _l = self.p.lock();
        self.world.end();
        drop(_l);
        self.world.release();
    }
}

fn call_race() {
    let r = Arc::new(CallRace {
        world: World::new(),
        p: SyscallP::new_running(),
        w: SyscallWorker::new(),
        over: Mutex::new(false),
        over_cv: Condvar::new(),
        busy: AtomicUsize::new(0),
    });
    let w = {
        let r = r.clone();
        thread::spawn(move || r.worker())
    };
    r.stop();
    w.join().unwrap();
}

/// A stop races with the worker's entry into a long system call: the
/// stop completes (claimed by the stopper, or given over at the entry),
/// never while the worker runs goroutine code.
#[test]
fn a_stop_gets_the_processor_of_a_worker_entering_a_system_call() {
    check(call_race);
}

const BUG_CHILD: &str = "DEFERGC_STW_LOOM_BUG_CHILD";
const GCWAIT_CHILD: &str = "DEFERGC_STW_LOOM_GCWAIT_CHILD";

/// An entry that does not look for a stop: a stop that counted the
/// processor as running just before the entry was published waits for
/// the call, which waits for the stop. Loom must find it.
#[test]
fn loom_catches_an_entry_that_ignores_a_stop() {
    let bug = "an entry that ignores a stop";
    let test = "loom_catches_an_entry_that_ignores_a_stop";
    if let Some(report) = child::loom_catches(test, GCWAIT_CHILD, bug, || {
        model::set_no_gcwait(true);
        check(call_race);
    }) {
        child::loom_line(bug, &report, |l| {
            l.contains("panicked") || l.starts_with("deadlock")
        });
    }
}

/// Two stoppers at once: the second's count overwrites the first's, and
/// the first starts the world under the second. Loom must find it.
#[test]
fn loom_catches_two_stoppers_at_once() {
    let bug = "two stoppers at once";
    let test = "loom_catches_two_stoppers_at_once";
    if let Some(report) = child::loom_catches(test, BUG_CHILD, bug, || {
        model::set_two_stoppers(true);
        check(two_stoppers);
    }) {
        child::loom_line(bug, &report, |l| {
            l.contains("panicked") || l.starts_with("deadlock")
        });
    }
}
