//! Stopping the scheduler's world: every processor stopped, a function
//! run, the world started again (Go's `stopTheWorldWithSema` and
//! `startTheWorldWithSema`). [`set_gomaxprocs`] uses it to change the
//! processor count (Go's `procresize`); goroutine dumps will too.
//!
//! # The handshake
//!
//! One stopper at a time ([`World::acquire`]; a goroutine that has to
//! wait for another stopper waits as in a system call, without its
//! processor, so the other stop is not kept waiting for it). Under the
//! scheduler lock the stopper counts every processor in use but its own
//! as one to wait for, raises [`World::waiting`], and claims at once the
//! idle processors and those whose worker is in a system call (status
//! `P_SYSCALL`, by a compare-and-swap to `P_GCSTOP`, the one the
//! worker's return would make to `P_RUNNING`: one of the two wins, and
//! a processor the worker took back counts as running). A worker that
//! publishes a call after the claims gives its processor to the stopper
//! itself when it sees the stop (`syscall.rs`, Go's
//! `entersyscall_gcwait`); sysmon retakes nothing while a stop is asked.
//!
//! Every other processor is held by a running worker. Each stops it at
//! its next scheduling point: where it would look for work
//! (`idle::find_runnable`), give its processor away
//! (`idle::release_p`: a goroutine that enters a system call, a worker
//! that runs out of work or whose locked goroutine parked), and the
//! worker then parks as an idle one. Each stop counts down under the
//! handshake's own lock ([`World::stopped_one`]); the last one wakes the
//! stopper ([`World::wait`]). Nothing preempts a goroutine yet, so a
//! goroutine that loops without runtime calls delays the stop until it
//! makes one; [`set_preempt_all`] registers the preemption requests made
//! then (Go's `preemptall`, `preempt.rs`), so that such a goroutine stops
//! at its next preemption point.
//!
//! While the world is stopped, the stopper holds every processor in use:
//! no worker takes one (the idle list is empty), none runs a goroutine,
//! and the deadlock check is not made (every worker may be parked, and
//! that is no deadlock). Starting the world (under the scheduler lock)
//! lowers `waiting`, gives the processors with queued goroutines to
//! workers and puts the others back idle, wakes a worker for the global
//! queue, and makes the deadlock check if nothing runs.
//!
//! Lock order: the scheduler lock, then the handshake's lock. The stopper
//! waits on the handshake's condition variable holding neither.
//! `tests/stw_loom.rs` runs [`World`] under loom with model workers
//! that hold processors, reach scheduling points and give their
//! processors back; `tests/go_procs.rs` runs the real scheduler.

use super::prim::{AtomicBool, Condvar, Mutex, MutexGuard};
use std::sync::atomic::Ordering;

/// The stop-the-world handshake (one per scheduler; see the module docs).
pub(crate) struct World {
    /// A stop is asked or in force: read at every scheduling point.
    waiting: AtomicBool,
    state: Mutex<State>,
    /// The stopper waits here for the last processor to stop.
    all_stopped: Condvar,
    /// A second stopper waits here for the first to finish.
    free: Condvar,
}

struct State {
    /// A stopper holds the world (from `acquire` to `release`).
    busy: bool,
    /// Processors still to stop for the current stop.
    stopwait: usize,
}

impl World {
    pub(crate) fn new() -> World {
        World {
            waiting: AtomicBool::new(false),
            state: Mutex::new(State {
                busy: false,
                stopwait: 0,
            }),
            all_stopped: Condvar::new(),
            free: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a stop is asked: a worker at a scheduling point stops its
    /// processor (under the scheduler lock it is exact: the stop began
    /// under it).
    #[inline]
    pub(crate) fn waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Becomes the stopper if no one is; whether it did.
    pub(crate) fn try_acquire(&self) -> bool {
        let mut st = self.lock();
        !std::mem::replace(&mut st.busy, true)
    }

    /// Becomes the stopper, waiting for the current one to finish.
    pub(crate) fn acquire(&self) {
        let mut st = self.lock();
        #[cfg(loom)]
        if super::prim::two_stoppers() {
            st.busy = true;
            return;
        }
        while st.busy {
            st = self.free.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.busy = true;
    }

    /// The stopper is done: the next one may stop the world.
    pub(crate) fn release(&self) {
        self.lock().busy = false;
        self.free.notify_one();
    }

    /// A stop begins (under the scheduler lock): `running` processors are
    /// to stop; then the stopper claims the idle ones, each with
    /// [`World::stopped_one`].
    pub(crate) fn begin(&self, running: usize) {
        self.lock().stopwait = running;
        // The stopper's heavy barrier follows, before its claims
        // (`syscall.rs`).
        self.waiting.store(true, Ordering::SeqCst);
    }

    /// One processor stopped for the stopper (by its worker, under the
    /// scheduler lock, or claimed by the stopper).
    pub(crate) fn stopped_one(&self) {
        let mut st = self.lock();
        st.stopwait = match st.stopwait.checked_sub(1) {
            Some(n) => n,
            #[cfg(loom)]
            None => panic!("defergc: a processor stopped twice for one stop of the world"),
            #[cfg(not(loom))]
            None => crate::abort("defergc: a processor stopped twice for one stop of the world"),
        };
        if st.stopwait == 0 {
            self.all_stopped.notify_one();
        }
    }

    /// Blocks the stopper until every processor counted by
    /// [`World::begin`] stopped.
    pub(crate) fn wait(&self) {
        let mut st = self.lock();
        while st.stopwait > 0 {
            st = self.all_stopped.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The world runs again (under the scheduler lock).
    pub(crate) fn end(&self) {
        self.waiting.store(false, Ordering::SeqCst);
    }

    /// Before a fork: the handshake's lock, so that the child does not
    /// inherit it held (it is never held across a wait).
    pub(crate) fn lock_for_fork(&'static self) {
        crate::gc::fork::held::keep(self.lock());
    }

    /// In a forked child: a stop the parent had begun is gone with the
    /// threads it waited for (see `fork.rs`: every processor but the
    /// forking worker's is idle there).
    pub(crate) fn reset_after_fork(&self) {
        let mut st = self.lock();
        st.busy = false;
        st.stopwait = 0;
        self.waiting.store(false, Ordering::SeqCst);
    }
}

pub use self::real::set_gomaxprocs;

pub(crate) mod real {
    use super::super::idle::{startm, wakep};
    use super::super::procs::{
        self, current_m, current_m_g, pidleget, pidleput, Sched, MAX_PROCS, P, P_DEAD, P_GCSTOP,
        P_RUNNING,
    };
    use super::super::syscall;
    use std::ptr;
    use std::sync::atomic::Ordering;
    use std::sync::OnceLock;

    static PREEMPT_ALL: OnceLock<fn()> = OnceLock::new();

    /// Registers how to ask every running goroutine to stop at its next
    /// safe point (Go's `preemptall`): called once each time the world
    /// is being stopped (the preemption layer's to register).
    pub(crate) fn set_preempt_all(f: fn()) {
        let _ = PREEMPT_ALL.set(f);
    }

    /// What the stopper knows while the world is stopped.
    pub(crate) struct Stopped<'a> {
        s: &'a Sched,
        /// The stopper's own processor (it is a worker running a
        /// goroutine), if any.
        own: Option<&'static P>,
    }

    /// Stops the world, runs `f`, starts the world; one caller at a time
    /// (others wait). From a goroutine or from any other thread.
    pub(crate) fn stop_the_world<R>(s: &Sched, f: impl FnOnce(&mut Stopped<'_>) -> R) -> R {
        acquire(s);
        // After acquire: a goroutine that waited may run on another
        // worker now.
        let own = procs::current_p();
        {
            let idle = &mut *s.lock();
            let n = s.procs();
            s.world.begin(n - usize::from(own.is_some()));
            if let Some(p) = own {
                p.status.store(P_GCSTOP, Ordering::Release);
            }
            // Claimed without waiting: processors whose worker is in a
            // system call (its exit then takes the slow path, which
            // counts it out of `in_syscall`, as after sysmon's retake)...
            // The heavy barrier also orders `waiting` before the claims'
            // look at each status (an entry's light barrier pairs with it).
            for p in s.ps() {
                syscall::begin_taking(&p.call);
            }
            super::super::membar::heavy_barrier();
            for p in s.ps() {
                if syscall::take_if_in_call(&p.status, &p.call, P_GCSTOP, None) {
                    idle.in_syscall += 1;
                    s.world.stopped_one();
                }
                syscall::end_taking(&p.call);
            }
            // ...and the idle ones.
            while let Some(p) = pidleget(s, idle) {
                p.status.store(P_GCSTOP, Ordering::Release);
                s.world.stopped_one();
            }
        }
        // PREEMPTION REQUEST: the running goroutines are asked to stop at
        // their next safe point (Go's preemptall), once preemption exists.
        if let Some(preempt_all) = PREEMPT_ALL.get() {
            preempt_all();
        }
        // The stopper's wait blocks its thread: it answers no collector
        // meanwhile.
        crate::context::block_enter();
        s.world.wait();
        crate::context::block_exit();
        let mut stopped = Stopped { s, own };
        let r = f(&mut stopped);
        let own = stopped.own;
        start_the_world(s, own);
        s.world.release();
        r
    }

    /// Becomes the stopper. A goroutine that has to wait for another
    /// stopper waits as in a system call: its processor is stopped for
    /// (or given to) others meanwhile.
    fn acquire(s: &Sched) {
        if s.world.try_acquire() {
            return;
        }
        match current_m_g() {
            Some((m, g)) => {
                super::super::syscall::enter_syscall(m, crate::unwind::caller_frame());
                s.world.acquire();
                super::super::syscall::exit_syscall(m, g);
            }
            None => s.world.acquire(),
        }
    }

    /// Starts the world that [`stop_the_world`] stopped; `own` is the
    /// stopper's processor.
    fn start_the_world(s: &Sched, own: Option<&'static P>) {
        let mut start = Vec::new();
        {
            let idle = &mut *s.lock();
            s.world.end();
            for p in s.ps() {
                if own.is_some_and(|o| ptr::eq(o, p)) {
                    p.status.store(P_RUNNING, Ordering::Release);
                } else if p.has_work() {
                    p.status.store(P_RUNNING, Ordering::Release);
                    start.push(p);
                } else {
                    pidleput(s, idle, p);
                }
            }
            if start.is_empty() && own.is_none() && s.global().is_empty() {
                // Every worker may have parked while the world was
                // stopped, without the deadlock check (the stop has
                // ended above, so the check runs).
                super::super::idle::deadlock_check(s, idle);
            }
        }
        for p in start {
            startm(Some(p), false);
        }
        wakep();
    }

    impl Stopped<'_> {
        /// Go's `procresize`: `n` processors from now on. Those beyond
        /// `n` are emptied into the global queue and retired; new ones are
        /// made (or retired ones taken back), stopped. If the stopper's
        /// own processor is retired, it takes processor 0.
        pub(crate) fn resize(&mut self, n: usize) {
            let s = self.s;
            let n = n.clamp(1, MAX_PROCS);
            let old = s.procs();
            for id in old..n {
                s.make_p(id, P_GCSTOP);
            }
            for id in n..old {
                let Some(p) = s.p(id) else { continue };
                let next = p.runnext.swap(ptr::null_mut(), Ordering::AcqRel);
                if !next.is_null() {
                    s.global().push(procs::GRef(next));
                }
                // SAFETY: the stopper holds every stopped processor.
                while let Some(g) = unsafe { p.runq.pop() } {
                    s.global().push(procs::GRef(g));
                }
                p.status.store(P_DEAD, Ordering::Release);
            }
            s.set_procs(n);
            if let Some(own) = self.own.filter(|p| p.id >= n) {
                let p0 = s.p(0).expect("processor 0 exists");
                let m = current_m().expect("a stopper with a processor is a worker");
                debug_assert!(ptr::eq(m.p.get(), own));
                m.p.set(p0);
                self.own = Some(p0);
            }
        }
    }

    /// Go's `runtime.GOMAXPROCS(n)`: sets the number of processors to `n`
    /// (at most 1024) and returns the previous number; `n == 0`
    /// only reads it. A change stops the world (see the module docs).
    pub fn set_gomaxprocs(n: usize) -> usize {
        let s = super::super::config::scheduler();
        let ret = s.procs();
        if n == 0 || n == ret {
            return ret;
        }
        stop_the_world(s, |w| {
            let prev = w.s.procs();
            w.resize(n);
            prev
        })
    }
}
