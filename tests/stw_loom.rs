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
#![cfg(loom)]

use defergc::go::model::{self, World};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

fn check(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

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

const BUG_CHILD: &str = "DEFERGC_STW_LOOM_BUG_CHILD";

/// Two stoppers at once: the second's count overwrites the first's, and
/// the first starts the world under the second. Loom must find it.
#[test]
fn loom_catches_two_stoppers_at_once() {
    if std::env::var_os(BUG_CHILD).is_some() {
        model::set_two_stoppers(true);
        check(two_stoppers);
        println!("loom found nothing");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "loom_catches_two_stoppers_at_once",
            "--nocapture",
        ])
        .env(BUG_CHILD, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        !out.status.success() && !stdout.contains("loom found nothing"),
        "loom found nothing wrong with two stoppers at once: the model checks nothing"
    );
    let line = stderr
        .lines()
        .find(|l| l.contains("panicked") || l.starts_with("deadlock"))
        .unwrap_or("(no message)");
    eprintln!("with two stoppers at once, loom failed with: {line}");
}
