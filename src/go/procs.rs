//! Processors and workers: the scheduler's state (Go's `P`s, `M`s and
//! `sched`): each processor's run queues, the global queue, the idle
//! lists under one lock, and the thread's current worker. Lookups into
//! the queues (`local_or_global`, `steal`) are here; what the workers do
//! with them is `idle.rs` (finding work, spinning, parking, waking) and
//! `sched.rs` (running goroutines). The scheduler's policy is in
//! `sched.rs`'s docs.
//!
//! A processor's status says who may use it: `P_IDLE` (on the idle list,
//! or being handed over under the scheduler lock), `P_RUNNING` (its worker
//! runs goroutines on it), `P_SYSCALL` (its worker's goroutine is in a
//! system call: the worker keeps it, and takes it back with plain loads and
//! stores, unless sysmon took it first; see `syscall.rs`). Its ticks
//! (`schedtick`, the system-call handshake's `tick`) are what sysmon
//! compares across its rounds.
//!
//! # The processor array
//!
//! Processors are made on demand up to [`MAX_PROCS`] and never freed
//! (workers, idle lists and stealers hold them by raw pointer): `allp`
//! is a fixed array of pointers, filled in order, and `nprocs` (Go's
//! `gomaxprocs`) says how many of them are in use. `GOMAXPROCS` changes
//! only while the world is stopped (`stw.rs`): the processors beyond the
//! new count are emptied into the global queue and retired
//! ([`P_DEAD`]), new ones are made or retired ones taken back. A reader
//! that holds a processor sees a count that cannot change under it (a
//! change waits for every processor); one that holds none (the deadlock
//! check, a worker that gave its processor back) may see either count,
//! and every processor it can reach through either is valid: a retired
//! one is empty.

use super::g::{self, G};
use super::park::Parker;
use super::prim;
use super::runq::RunQueue;
use super::scan::WorkerScan;
use super::stack;
use crate::cache::CachePadded;
use crossbeam_deque::{Injector, Steal};
use std::cell::{Cell, UnsafeCell};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A worker checks the global queue first once every this many schedules.
pub(crate) const GLOBAL_TICK: u32 = 61;

/// A goroutine in a queue.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct GRef(pub(crate) *const G);

// SAFETY: a queued goroutine is touched by one worker at a time: the one
// that takes it from a queue.
unsafe impl Send for GRef {}

/// Processor status: in the idle list, or being handed to a worker.
pub(crate) const P_IDLE: u32 = 0;
/// Held by a worker that runs goroutines on it.
pub(crate) const P_RUNNING: u32 = 1;
/// Its worker's goroutine is in a system call: the worker keeps it and
/// takes it back without a fence (`syscall.rs`), unless sysmon retook it
/// (to [`P_IDLE`]) or a stop of the world claimed it (to [`P_GCSTOP`],
/// `stw.rs`) first.
pub(crate) const P_SYSCALL: u32 = 2;
/// Stopped for a stop of the world: held by the stopper (Go's `_Pgcstop`).
pub(crate) const P_GCSTOP: u32 = 3;
/// Beyond `GOMAXPROCS`: empty and unused until the count grows again.
pub(crate) const P_DEAD: u32 = 4;

/// The most processors (`GOMAXPROCS`) the scheduler can have.
pub(crate) const MAX_PROCS: usize = 1024;

/// A processor (Go's `P`): the right to run goroutines, and a run queue.
pub(crate) struct P {
    pub(super) id: usize,
    /// The local queue: only the worker holding the processor pushes and
    /// pops it (the processor moves between workers only through the
    /// scheduler lock, which orders the handover); idle workers steal
    /// half of it.
    pub(super) runq: RunQueue<G, RUNQ>,
    pub(super) runnext: AtomicPtr<G>,
    /// `P_IDLE`, `P_RUNNING`, `P_SYSCALL`, `P_GCSTOP` or `P_DEAD` (see
    /// the constants); a loom atomic under `cfg(loom)` (`syscall.rs`'s
    /// handshake).
    pub(super) status: prim::AtomicU32,
    /// Schedules on this processor: written by the holder only, read by
    /// sysmon (a goroutine that runs while it stays the same runs one
    /// time slice).
    pub(super) schedtick: AtomicU32,
    /// Goroutines started on it less those that finished on it (either
    /// may be negative: a goroutine often ends on another processor).
    /// Written by the holder only, with a plain load and store: a start
    /// and an end cost no locked instruction on a line every processor
    /// writes. See [`Sched::goroutine_count`].
    pub(super) goroutines: AtomicIsize,
    /// Its system calls: the tick sysmon compares across rounds, and the
    /// handshake between a worker back from a call and a taker
    /// (`syscall.rs`).
    pub(super) call: super::syscall::Handshake,
    /// The worker that started the current time slice (`sched::execute`),
    /// for sysmon's preemption request.
    pub(super) m: AtomicPtr<M>,
    /// Whether it is in the idle list (changed under the scheduler lock):
    /// the status cannot say, as `P_IDLE` also means "retaken by sysmon
    /// and being handed over".
    pub(super) listed: AtomicBool,
}

// SAFETY: see the field docs: the local queue's adding end belongs to
// the holder.
unsafe impl Sync for P {}

/// Goroutines a processor's local queue holds (Go's 256); more go to the
/// global queue, half a queue at a time.
pub(crate) const RUNQ: usize = 256;

impl P {
    /// Queues `g` on the local queue; a full one sends its older half and
    /// `g` to the global queue.
    ///
    /// # Safety
    /// The caller is the worker holding this processor (or the stopper
    /// of the world).
    pub(super) unsafe fn runq_put(&self, s: &Sched, g: *const G) {
        // SAFETY: forwarded.
        unsafe { self.runq.push(g.cast_mut(), |g| s.global().push(GRef(g))) };
    }

    /// Queues `gs` on its local run queue together, oldest first (see
    /// `RunQueue::push_batch`); what does not fit goes to the global queue.
    ///
    /// # Safety
    /// As for [`runq_put`](Self::runq_put).
    pub(super) unsafe fn runq_put_batch(&self, s: &Sched, gs: &[*mut G]) {
        // SAFETY: forwarded.
        unsafe { self.runq.push_batch(gs, |g| s.global().push(GRef(g))) };
    }

    /// Whether it has goroutines queued (racy: a hint).
    pub(super) fn has_work(&self) -> bool {
        !self.runq.is_empty() || !self.runnext.load(Ordering::Acquire).is_null()
    }
}

/// A worker thread (Go's `M`).
pub(crate) struct M {
    /// Its number (Go's `m.id`), as in its thread's name.
    pub(crate) id: usize,
    /// When its last goroutine's slice ended, while a trace records them
    /// (0: none, or not to be reused); see `sched::schedule`.
    pub(super) trace_tick: Cell<u64>,
    /// The processor handed to this worker while it was parked.
    pub(super) next_p: AtomicPtr<P>,
    /// Whether the worker was woken to spin.
    pub(super) next_spinning: AtomicBool,
    /// Where it blocks while it has no processor; woken when handed one.
    pub(super) parker: Parker,
    /// What the collector reads of this worker (scan.rs).
    pub(crate) scan: &'static WorkerScan,
    pub(super) p: Cell<*const P>,
    /// The processor it keeps while its goroutine is in a system call
    /// (`p` is null meanwhile), or null (Go's `oldp`).
    pub(super) oldp: Cell<*const P>,
    /// Its side of the system-call handshake (`syscall.rs`).
    pub(super) caller: super::syscall::Caller,
    pub(super) spinning: Cell<bool>,
    /// The goroutine locked to this worker (Go's `lockedg`): while set,
    /// the worker runs no other goroutine. Written by the worker's own
    /// thread (the goroutine, while it runs here).
    pub(super) locked_g: Cell<*const G>,
    /// Whether the worker waits for its locked goroutine to be handed to
    /// it (`idle.rs`'s `stoplockedm`); changed under the scheduler lock.
    pub(super) locked_wait: AtomicBool,
    /// While the worker, idle, polls the network: how many goroutines the
    /// poll queued. They go to the global queue without waking a worker
    /// each; the poller takes a processor itself and wakes one other
    /// worker (Go's `findRunnable` running the first of what `netpoll`
    /// returns, and `injectglist` starting one for the rest).
    pub(super) polled: Cell<Option<usize>>,
    /// The goroutine running on this worker, or null.
    pub(crate) current: Cell<*const G>,
    /// Asynchronous preemption: the pending request, the no-preemption
    /// count, the thread's id (async_preempt.rs).
    pub(crate) preempt: super::async_preempt::WorkerPreempt,
}

// SAFETY: the Cells are touched by the worker's own thread only; other
// threads use the atomics.
unsafe impl Sync for M {}

pub(super) struct Idle {
    pub(super) ps: Vec<*const P>,
    pub(super) ms: Vec<*const M>,
    /// Workers created.
    pub(super) workers: usize,
    /// Workers in a system call whose processor sysmon took back (the
    /// others keep theirs, `P_SYSCALL`, and are not parked either).
    pub(super) in_syscall: usize,
    /// Workers that wait for their locked goroutine (`stoplockedm`): they
    /// count as parked for the deadlock check.
    pub(super) locked_parked: usize,
}

// SAFETY: the pointers are to never-freed processors and workers.
unsafe impl Send for Idle {}

pub(crate) struct Sched {
    /// Every processor made so far, in id order (see the module docs);
    /// null past the last one made.
    allp: Box<[AtomicPtr<P>]>,
    /// `GOMAXPROCS`: the processors in use, `allp[..nprocs]`. Changed
    /// only while the world is stopped.
    nprocs: AtomicUsize,
    /// The stop-the-world handshake (`stw.rs`).
    pub(super) world: super::stw::World,
    /// The global queue: replaced by an empty one in a forked child (see
    /// the module docs), never otherwise.
    pub(super) global: UnsafeCell<Injector<GRef>>,
    idle: Mutex<Idle>,
    pub(super) npidle: AtomicUsize,
    pub(super) nmspinning: AtomicUsize,
    /// Goroutines started less those finished by threads without a
    /// processor (plain threads, a worker in a system call); the rest
    /// count on the processors ([`P::goroutines`]). Alone on its cache
    /// line, so that its writes do not cost `wakep`'s reads of `npidle`
    /// and `nmspinning` (on every `runqput`) a miss each.
    pub(crate) goroutines: CachePadded<AtomicIsize>,
    /// Goroutines that plain threads are starting: counted in
    /// `goroutines`, not queued yet (see `deadlock::check`).
    pub(crate) launching: AtomicUsize,
    pub(super) deadlock_check: DeadlockCheck,
    /// What a new worker thread runs (`sched.rs`'s loop); it returns when
    /// the thread is to end (a locked goroutine exited).
    pub(super) worker_loop: fn(&'static M),
}

static SCHED: OnceLock<Sched> = OnceLock::new();

thread_local! {
    /// This thread's worker, or null on other threads.
    static CURRENT_M: Cell<*const M> = const { Cell::new(ptr::null()) };
}

/// The scheduler's settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub(crate) procs: usize,
    pub(crate) stack_size: usize,
}

/// Go's deadlock check (`deadlock.rs`), run each time a worker parks for
/// lack of work, under the scheduler lock: workers created, parked of
/// them, in a system call of them; goroutines live, launching (started by
/// a plain thread, not queued yet). Given to [`start`], so that the
/// scheduler names nothing of the layers above it.
pub(crate) type DeadlockCheck = fn(usize, usize, usize, &Sched, &AtomicUsize);

/// Starts the scheduler with `settings` unless it runs already; returns it.
/// `fork_hooks` registers the layer's fork hooks: after everything the
/// settings and the stack scanning set up registered theirs, so that a
/// forked child repairs those first. `deadlock_check` runs whenever a
/// worker parks for lack of work; `worker_loop` is what every worker
/// thread runs.
pub(super) fn start(
    settings: impl FnOnce() -> Settings,
    fork_hooks: fn(),
    deadlock_check: DeadlockCheck,
    worker_loop: fn(&'static M),
) -> &'static Sched {
    SCHED.get_or_init(|| {
        let s = settings();
        stack::configure(stack::Geometry::new(s.stack_size, g::HEADER));
        super::scan::install();
        fork_hooks();
        // Before any worker exists (see `membar::use_membarrier`).
        super::membar::use_membarrier();
        let n = s.procs.clamp(1, MAX_PROCS);
        let allp: Box<[AtomicPtr<P>]> = (0..MAX_PROCS)
            .map(|id| {
                AtomicPtr::new(if id < n {
                    new_p(id, P_IDLE).cast_mut()
                } else {
                    ptr::null_mut()
                })
            })
            .collect();
        // Every processor starts idle.
        let idle_ps = (0..n)
            .rev()
            .map(|id| {
                let p = allp[id].load(Ordering::Relaxed).cast_const();
                // SAFETY: just made, never freed.
                unsafe { &*p }.listed.store(true, Ordering::Relaxed);
                p
            })
            .collect();
        Sched {
            allp,
            nprocs: AtomicUsize::new(n),
            world: super::stw::World::new(),
            global: UnsafeCell::new(Injector::new()),
            idle: Mutex::new(Idle {
                ps: idle_ps,
                ms: Vec::new(),
                workers: 0,
                in_syscall: 0,
                locked_parked: 0,
            }),
            npidle: AtomicUsize::new(n),
            nmspinning: AtomicUsize::new(0),
            goroutines: CachePadded(AtomicIsize::new(0)),
            launching: AtomicUsize::new(0),
            deadlock_check,
            worker_loop,
        }
    })
}

/// A new processor `id` with empty queues and `status` (never freed).
pub(super) fn new_p(id: usize, status: u32) -> *const P {
    Box::leak(Box::new(P {
        id,
        runq: RunQueue::new(),
        runnext: AtomicPtr::new(ptr::null_mut()),
        status: prim::AtomicU32::new(status),
        schedtick: AtomicU32::new(0),
        goroutines: AtomicIsize::new(0),
        call: super::syscall::Handshake::new(),
        m: AtomicPtr::new(ptr::null_mut()),
        listed: AtomicBool::new(false),
    }))
}

/// The scheduler, if started.
pub(crate) fn get() -> Option<&'static Sched> {
    SCHED.get()
}

/// The processors if the scheduler runs, else 1 (no other processor to
/// spin for).
pub(crate) fn gomaxprocs_started() -> usize {
    get().map_or(1, Sched::procs)
}

pub(super) fn sched() -> &'static Sched {
    SCHED
        .get()
        .unwrap_or_else(|| crate::abort("defergc: the goroutine scheduler is not started"))
}

// SAFETY: `global` is written only in a forked child's fork hook, where
// the forking thread is the only thread; everything else is Sync.
unsafe impl Sync for Sched {}

impl Sched {
    /// The global run queue.
    pub(super) fn global(&self) -> &Injector<GRef> {
        // SAFETY: replaced only while no other thread exists (fork_child).
        unsafe { &*self.global.get() }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lock, if it is free (diagnostics that must not wait).
    pub(super) fn try_lock(&self) -> Option<MutexGuard<'_, Idle>> {
        self.idle.try_lock().ok()
    }

    /// The number of processors (GOMAXPROCS).
    pub(crate) fn procs(&self) -> usize {
        self.nprocs.load(Ordering::Acquire)
    }

    /// Live goroutines (Go's `runtime.NumGoroutine`): the count of
    /// threads without a processor and every processor's, retired ones
    /// included. Exact when no processor is held (the deadlock check:
    /// every holder released its processor under the scheduler lock,
    /// which the check holds); a snapshot otherwise.
    pub(crate) fn goroutine_count(&self) -> usize {
        let on_ps: isize = self
            .allp
            .iter()
            // SAFETY: processors are never freed; a non-null entry was
            // published (Release) after it was written. They are made in
            // order of id.
            .map_while(|a| unsafe { a.load(Ordering::Acquire).as_ref() })
            .map(|p| p.goroutines.load(Ordering::Acquire))
            .fold(0isize, isize::wrapping_add);
        let n = on_ps.wrapping_add(self.goroutines.load(Ordering::SeqCst));
        usize::try_from(n).unwrap_or(0)
    }

    /// A goroutine started (`delta` 1) or finished (-1) by worker `m`
    /// (`None`: a plain thread): counted on the processor it holds, else
    /// in the shared count.
    pub(crate) fn count_goroutine(&self, m: Option<&M>, delta: isize) {
        // SAFETY: processors are never freed.
        match m.and_then(|m| unsafe { m.p.get().as_ref() }) {
            // Only the holder writes it: no read-modify-write needed.
            Some(p) => p.goroutines.store(
                p.goroutines.load(Ordering::Relaxed).wrapping_add(delta),
                Ordering::Release,
            ),
            None => {
                self.goroutines.fetch_add(delta, Ordering::SeqCst);
            }
        }
    }

    /// After a fork: `n` goroutines live, counted in the shared count.
    pub(crate) fn reset_goroutine_count(&self, n: usize) {
        for a in self.allp.iter() {
            // SAFETY: as in `goroutine_count`.
            if let Some(p) = unsafe { a.load(Ordering::Acquire).as_ref() } {
                p.goroutines.store(0, Ordering::Relaxed);
            }
        }
        self.goroutines.store(n as isize, Ordering::SeqCst);
    }

    /// Processor `id`, if it was ever made (it may be retired).
    pub(super) fn p(&self, id: usize) -> Option<&'static P> {
        // SAFETY: processors are never freed; a non-null entry was
        // published (Release) after it was written.
        self.allp
            .get(id)
            .and_then(|a| unsafe { a.load(Ordering::Acquire).as_ref() })
    }

    /// The processors in use (`GOMAXPROCS` of them; see the module docs
    /// for a reader that holds no processor).
    pub(super) fn ps(&self) -> impl Iterator<Item = &'static P> + '_ {
        (0..self.procs()).filter_map(|id| self.p(id))
    }

    /// Makes processor `id` if it does not exist yet (world stopped),
    /// with status `status`; returns it.
    pub(super) fn make_p(&self, id: usize, status: u32) -> &'static P {
        if let Some(p) = self.p(id) {
            p.status.store(status, Ordering::Release);
            return p;
        }
        let p = new_p(id, status);
        self.allp[id].store(p.cast_mut(), Ordering::Release);
        // SAFETY: just made, never freed.
        unsafe { &*p }
    }

    /// Sets `GOMAXPROCS` (world stopped, `stw.rs`).
    pub(super) fn set_procs(&self, n: usize) {
        self.nprocs.store(n, Ordering::Release);
    }
}

/// This thread's worker, if it is one.
#[inline(never)]
pub(crate) fn current_m() -> Option<&'static M> {
    // SAFETY: workers are never freed.
    unsafe { crate::fresh::fresh_get!(CURRENT_M: *const M).as_ref() }
}

/// This thread's worker and the goroutine it runs, if any (one read of
/// the thread-local).
pub(crate) fn current_m_g() -> Option<(&'static M, &'static G)> {
    let m = current_m()?;
    // SAFETY: a worker's current goroutine lives while it runs.
    unsafe { m.current.get().as_ref() }.map(|g| (m, g))
}

/// The goroutine running on this thread, if any.
pub(crate) fn current_g() -> Option<&'static G> {
    // SAFETY: a worker's current goroutine lives while it runs.
    current_m().and_then(|m| unsafe { m.current.get().as_ref() })
}

/// Makes `m` this thread's worker (a new worker thread, once).
pub(super) fn set_current_m(m: &'static M) {
    crate::fresh::with(&CURRENT_M, |c| c.set(m));
}

/// The processor this worker holds, if it is a worker holding one.
pub(super) fn current_p() -> Option<&'static P> {
    // SAFETY: processors are never freed.
    current_m().and_then(|m| unsafe { m.p.get().as_ref() })
}

pub(super) fn pidleget(s: &Sched, idle: &mut Idle) -> Option<&'static P> {
    let p = idle.ps.pop()?;
    // SAFETY: processors are never freed (the scheduler is static).
    unsafe { &*p }.listed.store(false, Ordering::Relaxed);
    // SAFETY: as above.
    super::trace::proc_changed(unsafe { &*p }.id, true);
    if s.npidle.fetch_sub(1, Ordering::SeqCst) == s.procs() {
        // The first busy processor: sysmon may be waiting for one.
        super::sysmon::wake();
    }
    // SAFETY: processors are never freed (the scheduler is static).
    Some(unsafe { &*p })
}

pub(super) fn pidleput(s: &Sched, idle: &mut Idle, p: &P) {
    // A processor in the list twice would run on two workers at once.
    if p.listed.swap(true, Ordering::Relaxed) {
        crate::abort("defergc: a processor was put in the idle list twice");
    }
    p.status.store(P_IDLE, Ordering::Release);
    super::trace::proc_changed(p.id, false);
    idle.ps.push(p);
    s.npidle.fetch_add(1, Ordering::SeqCst);
}

/// The next goroutine from `p`'s queues or the global queue.
pub(super) fn local_or_global(s: &Sched, p: &P) -> Option<&'static G> {
    let tick = p.schedtick.load(Ordering::Relaxed).wrapping_add(1);
    p.schedtick.store(tick, Ordering::Relaxed);
    if tick.is_multiple_of(GLOBAL_TICK) {
        if let Some(g) = from_global(s, p, false) {
            return Some(g);
        }
    }
    // Only the processor's owner fills its runnext (others only take it):
    // a load that finds it empty spares the locked exchange, which every
    // switch would pay otherwise.
    let next = if p.runnext.load(Ordering::Relaxed).is_null() {
        ptr::null_mut()
    } else {
        p.runnext.swap(ptr::null_mut(), Ordering::AcqRel)
    };
    if !next.is_null() {
        // SAFETY: queued goroutines are live.
        return Some(unsafe { &*next });
    }
    // SAFETY: this worker holds p.
    if let Some((g, [next, after])) = unsafe { p.runq.pop_and_peek() } {
        // The goroutines after it: each one's header and stack top are on
        // a page of their own, most likely out of the cache and the TLB
        // by now (a million parked goroutines touch a million pages).
        // Asked for while this one runs: the second one's header, and the
        // next one's saved stack, which a resumed goroutine reads first
        // (at its stack pointer, in its header, asked for a round ago).
        // The stack only behind a queue of three: two goroutines taking
        // turns (a ping-pong) find each other's stack in the cache, and a
        // dozen prefetches of lines already there cost them 2 ns a switch;
        // with one behind, its header as before.
        if !after.is_null() {
            G::prefetch_header(after);
            G::prefetch_stack(next);
        } else if !next.is_null() {
            G::prefetch_header(next);
        }
        // SAFETY: queued goroutines are live.
        return Some(unsafe { &*g });
    }
    from_global(s, p, true)
}

/// One goroutine from the global queue, and with `share` (Go's
/// `globrunqget`, for a processor whose local queue ran dry) a fair share
/// more onto `p`'s local queue: the global queue's length over the
/// processors, at most half a local queue. The look every
/// [`GLOBAL_TICK`] schedules takes one: its local queue is not empty, and
/// a share would only spill back.
pub(super) fn from_global(s: &Sched, p: &P, share: bool) -> Option<&'static G> {
    let global = s.global();
    let take = || loop {
        match global.steal() {
            Steal::Success(GRef(g)) => return Some(g),
            Steal::Empty => return None,
            Steal::Retry => continue,
        }
    };
    let first = take()?;
    let share = if share {
        (global.len() / s.procs() + 1).min(RUNQ / 2)
    } else {
        1
    };
    // SAFETY: this worker holds p.
    let room = RUNQ - p.runq.len();
    for _ in 1..share.min(room) {
        let Some(g) = take() else { break };
        // SAFETY: as above.
        unsafe { p.runq_put(s, g) };
    }
    // SAFETY: queued goroutines are live.
    Some(unsafe { &*first })
}

/// Steals half of another processor's queue (or its runnext).
pub(super) fn steal(s: &Sched, p: &P) -> Option<&'static G> {
    let n = s.procs();
    for _ in 0..4 {
        let start = super::rand::below(n);
        for i in 0..n {
            let Some(victim) = s.p((start + i) % n) else {
                continue;
            };
            if victim.id == p.id {
                continue;
            }
            // SAFETY: this worker holds p, not the victim.
            if let Some(g) = unsafe { victim.runq.steal_into(&p.runq) } {
                // SAFETY: queued goroutines are live.
                return Some(unsafe { &*g });
            }
        }
        if let Some(g) = from_global(s, p, true) {
            return Some(g);
        }
    }
    // Last, the runnext of a victim that does not run (idle, or its
    // owner is in a system call).
    for victim in s.ps() {
        if victim.id != p.id && victim.status.load(Ordering::Acquire) != P_RUNNING {
            let g = victim.runnext.swap(ptr::null_mut(), Ordering::AcqRel);
            if !g.is_null() {
                // SAFETY: as above.
                return Some(unsafe { &*g });
            }
        }
    }
    None
}

/// Whether a goroutine waits in any run queue (the deadlock check).
pub(crate) fn any_queued() -> bool {
    get().is_some_and(any_work)
}

/// Whether any queue holds a goroutine that a worker without one could
/// take (racy: a hint): the global queue, a local queue, or the runnext of
/// a processor that does not run (a running one's runnext is its owner's
/// to run).
pub(super) fn any_work(s: &Sched) -> bool {
    !s.global().is_empty()
        || s.ps().any(|p| {
            !p.runq.is_empty()
                || (p.status.load(Ordering::Acquire) != P_RUNNING
                    && !p.runnext.load(Ordering::Acquire).is_null())
        })
}
