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
//! system call: the worker keeps it, and takes it back with one CAS, unless
//! sysmon took it first; see `syscall.rs`). Its ticks (`schedtick`,
//! `syscalltick`) are what sysmon compares across its rounds.

use super::g::{self, G};
use super::park::Parker;
use super::prim;
use super::scan::WorkerScan;
use super::stack;
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use std::cell::{Cell, UnsafeCell};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A worker checks the global queue first once every this many schedules.
pub(crate) const GLOBAL_TICK: u32 = 61;

/// A goroutine in a queue.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct GRef(pub(crate) *const G);

// SAFETY: a queued goroutine is touched by one worker at a time: the one
// that takes it from a queue.
unsafe impl Send for GRef {}

/// Processor status: idle, or being handed to a worker.
pub(crate) const P_IDLE: u32 = 0;
/// Processor status: its worker runs goroutines on it.
pub(crate) const P_RUNNING: u32 = 1;
/// Processor status: its worker's goroutine is in a system call.
pub(crate) const P_SYSCALL: u32 = 2;

/// A processor (Go's `P`): the right to run goroutines, and a run queue.
pub(crate) struct P {
    pub(super) id: usize,
    /// The local queue: only the worker holding the processor pushes and
    /// pops it (the processor moves between workers only through the
    /// scheduler lock, which orders the handover).
    pub(super) local: UnsafeCell<Worker<GRef>>,
    pub(super) stealer: Stealer<GRef>,
    pub(super) runnext: AtomicPtr<G>,
    /// `P_IDLE`, `P_RUNNING` or `P_SYSCALL` (see the module docs); a
    /// loom atomic under `cfg(loom)` (`syscall.rs`'s handshake).
    pub(super) status: prim::AtomicU32,
    /// Schedules on this processor: written by the holder only, read by
    /// sysmon (a goroutine that runs while it stays the same runs one
    /// time slice).
    pub(super) schedtick: AtomicU32,
    /// System calls entered on this processor: written by the holder
    /// only, read by sysmon (a call that lasts while it stays the same).
    pub(super) syscalltick: prim::AtomicU32,
    /// The worker that started the current time slice (`sched::execute`),
    /// for sysmon's preemption request.
    pub(super) m: AtomicPtr<M>,
}

// SAFETY: see the field docs: `local` belongs to the holder.
unsafe impl Sync for P {}

impl P {
    /// The local queue.
    ///
    /// # Safety
    /// The caller is the worker holding this processor.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn local(&self) -> &mut Worker<GRef> {
        // SAFETY: the caller holds the processor.
        unsafe { &mut *self.local.get() }
    }

    /// Whether it has goroutines queued (racy: a hint).
    pub(super) fn has_work(&self) -> bool {
        !self.stealer.is_empty() || !self.runnext.load(Ordering::Acquire).is_null()
    }
}

/// A worker thread (Go's `M`).
pub(crate) struct M {
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
    pub(super) spinning: Cell<bool>,
    /// While the worker, idle, polls the network: how many goroutines the
    /// poll queued. They go to the global queue without waking a worker
    /// each; the poller takes a processor itself and wakes one other
    /// worker (Go's `findRunnable` running the first of what `netpoll`
    /// returns, and `injectglist` starting one for the rest).
    pub(super) polled: Cell<Option<usize>>,
    /// The goroutine running on this worker, or null.
    pub(crate) current: Cell<*const G>,
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
}

// SAFETY: the pointers are to never-freed processors and workers.
unsafe impl Send for Idle {}

pub(crate) struct Sched {
    pub(super) ps: Box<[P]>,
    /// The global queue: replaced by an empty one in a forked child (see
    /// the module docs), never otherwise.
    pub(super) global: UnsafeCell<Injector<GRef>>,
    idle: Mutex<Idle>,
    pub(super) npidle: AtomicUsize,
    pub(super) nmspinning: AtomicUsize,
    /// Live goroutines (not yet finished).
    pub(crate) goroutines: AtomicUsize,
    /// Goroutines that plain threads are starting: counted in
    /// `goroutines`, not queued yet (see `deadlock::check`).
    pub(crate) launching: AtomicUsize,
    pub(super) deadlock_check: DeadlockCheck,
    /// What a new worker thread runs (`sched.rs`'s loop).
    pub(super) worker_loop: fn(&'static M) -> !,
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
pub(crate) type DeadlockCheck = fn(usize, usize, usize, &AtomicUsize, &AtomicUsize);

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
    worker_loop: fn(&'static M) -> !,
) -> &'static Sched {
    SCHED.get_or_init(|| {
        let s = settings();
        stack::configure(stack::Geometry::new(s.stack_size, g::HEADER));
        super::scan::install();
        fork_hooks();
        let ps: Box<[P]> = (0..s.procs.max(1))
            .map(|id| {
                let local = Worker::new_fifo();
                let stealer = local.stealer();
                P {
                    id,
                    local: UnsafeCell::new(local),
                    stealer,
                    runnext: AtomicPtr::new(ptr::null_mut()),
                    status: prim::AtomicU32::new(P_IDLE),
                    schedtick: AtomicU32::new(0),
                    syscalltick: prim::AtomicU32::new(0),
                    m: AtomicPtr::new(ptr::null_mut()),
                }
            })
            .collect();
        let n = ps.len();
        // Every processor starts idle (the boxed slice never moves).
        let idle_ps = ps.iter().rev().map(|p| p as *const P).collect();
        Sched {
            ps,
            global: UnsafeCell::new(Injector::new()),
            idle: Mutex::new(Idle {
                ps: idle_ps,
                ms: Vec::new(),
                workers: 0,
                in_syscall: 0,
            }),
            npidle: AtomicUsize::new(n),
            nmspinning: AtomicUsize::new(0),
            goroutines: AtomicUsize::new(0),
            launching: AtomicUsize::new(0),
            deadlock_check,
            worker_loop,
        }
    })
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

    /// The number of processors (GOMAXPROCS).
    pub(crate) fn procs(&self) -> usize {
        self.ps.len()
    }
}

/// This thread's worker, if it is one.
#[inline(never)]
pub(crate) fn current_m() -> Option<&'static M> {
    // SAFETY: workers are never freed.
    unsafe { crate::fresh::fresh_get!(CURRENT_M: *const M).as_ref() }
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
    if s.npidle.fetch_sub(1, Ordering::SeqCst) == s.procs() {
        // The first busy processor: sysmon may be waiting for one.
        super::sysmon::wake();
    }
    // SAFETY: processors are never freed (the scheduler is static).
    Some(unsafe { &*p })
}

pub(super) fn pidleput(s: &Sched, idle: &mut Idle, p: &P) {
    p.status.store(P_IDLE, Ordering::Release);
    idle.ps.push(p);
    s.npidle.fetch_add(1, Ordering::SeqCst);
}

/// The next goroutine from `p`'s queues or the global queue.
pub(super) fn local_or_global(s: &Sched, p: &P) -> Option<&'static G> {
    let tick = p.schedtick.load(Ordering::Relaxed).wrapping_add(1);
    p.schedtick.store(tick, Ordering::Relaxed);
    if tick.is_multiple_of(GLOBAL_TICK) {
        if let Some(g) = from_global(s, p) {
            return Some(g);
        }
    }
    let next = p.runnext.swap(ptr::null_mut(), Ordering::AcqRel);
    if !next.is_null() {
        // SAFETY: queued goroutines are live.
        return Some(unsafe { &*next });
    }
    // SAFETY: this worker holds p.
    if let Some(GRef(g)) = unsafe { p.local() }.pop() {
        // SAFETY: as above.
        return Some(unsafe { &*g });
    }
    from_global(s, p)
}

pub(super) fn from_global(s: &Sched, p: &P) -> Option<&'static G> {
    loop {
        // SAFETY: this worker holds p.
        match s.global().steal_batch_and_pop(unsafe { p.local() }) {
            // SAFETY: queued goroutines are live.
            Steal::Success(GRef(g)) => return Some(unsafe { &*g }),
            Steal::Empty => return None,
            Steal::Retry => continue,
        }
    }
}

/// Steals half of another processor's queue (or its runnext).
pub(super) fn steal(s: &Sched, p: &P) -> Option<&'static G> {
    let n = s.ps.len();
    for _ in 0..4 {
        let start = super::rand::below(n);
        for i in 0..n {
            let victim = &s.ps[(start + i) % n];
            if victim.id == p.id {
                continue;
            }
            loop {
                // SAFETY: this worker holds p.
                match victim.stealer.steal_batch_and_pop(unsafe { p.local() }) {
                    // SAFETY: queued goroutines are live.
                    Steal::Success(GRef(g)) => return Some(unsafe { &*g }),
                    Steal::Empty => break,
                    Steal::Retry => continue,
                }
            }
        }
        if let Some(g) = from_global(s, p) {
            return Some(g);
        }
    }
    // Last, the runnext of a victim that does not run (idle, or its
    // owner is in a system call).
    for victim in s.ps.iter() {
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
        || s.ps.iter().any(|p| {
            !p.stealer.is_empty()
                || (p.status.load(Ordering::Acquire) != P_RUNNING
                    && !p.runnext.load(Ordering::Acquire).is_null())
        })
}
