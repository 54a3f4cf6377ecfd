//! The M:N scheduler: workers (Go's `M`), processors (`P`), run queues,
//! work stealing, idle workers, system calls.
//!
//! # Policy
//!
//! - `GOMAXPROCS` processors. A worker thread runs goroutines only while
//!   it holds a processor; a processor has a local run queue (a
//!   crossbeam-deque FIFO, stolen from by idle processors) and a
//!   `runnext` slot for the goroutine readied or started last, which runs
//!   next (a goroutine that wakes another, as a channel send does, hands
//!   over at once). A global queue takes goroutines started or readied
//!   from outside a worker; a worker checks it first every [`GLOBAL_TICK`]
//!   schedules, so it never starves.
//! - Finding work: the local queue, then the global queue, then stealing
//!   half of another processor's queue. A worker that finds none *spins*
//!   for a few microseconds ([`SPIN_ROUNDS`] steal attempts; at most half
//!   the busy processors' worth of workers spin at once), then gives its
//!   processor back and parks. Making
//!   work available wakes a parked worker if a processor is idle and none
//!   spins ([`wakep`]); a spinning worker that gives up looks everywhere
//!   once more after announcing it, so no wakeup is lost (either it sees
//!   the new work or the submitter sees no spinner and wakes one).
//! - System calls and native code (`syscall.rs`): `enter_syscall` hands the worker's
//!   processor to another worker (started if needed) when there is work
//!   for it, so nothing starves while the call blocks; `exit_syscall`
//!   takes a processor back if one is idle, else queues the goroutine
//!   globally and parks the worker.
//! - Scheduling is cooperative: a goroutine switches out only in runtime
//!   calls (gosched, park, channel and lock operations, sleeps, system
//!   call exits). Nothing preempts a goroutine that loops without them.
//!
//! Deadlock: when the last worker goes idle while goroutines exist, none
//! in a system call and nothing else can wake one (see `deadlock.rs`),
//! every goroutine is asleep: the program ends with Go's report.

use super::g::{self, Switch, G};
use super::idle::{Parker, Wake};
use super::scan::WorkerScan;
use super::stack;
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use std::cell::{Cell, UnsafeCell};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A worker checks the global queue first once every this many schedules.
pub(crate) const GLOBAL_TICK: u32 = 61;
/// Steal attempts a spinning worker makes before it parks.
const SPIN_ROUNDS: usize = 32;

/// A goroutine in a queue.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct GRef(pub(crate) *const G);

// SAFETY: a queued goroutine is touched by one worker at a time: the one
// that takes it from a queue.
unsafe impl Send for GRef {}

/// Processor status.
pub(super) const P_IDLE: u32 = 0;
pub(super) const P_RUNNING: u32 = 1;

/// A processor (Go's `P`): the right to run goroutines, and a run queue.
pub(crate) struct P {
    pub(super) id: usize,
    /// The local queue: only the worker holding the processor pushes and
    /// pops it (the processor moves between workers only through the
    /// scheduler lock, which orders the handover).
    pub(super) local: UnsafeCell<Worker<GRef>>,
    pub(super) stealer: Stealer<GRef>,
    pub(super) runnext: AtomicPtr<G>,
    pub(super) status: AtomicU32,
    schedtick: Cell<u32>,
}

// SAFETY: see the field docs: `local`, `schedtick` belong to the holder.
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
    next_p: AtomicPtr<P>,
    /// Whether the worker was woken to spin.
    next_spinning: AtomicBool,
    /// Where it blocks while it has no processor; woken when handed one.
    parker: Parker,
    /// What the collector reads of this worker (scan.rs).
    pub(crate) scan: &'static WorkerScan,
    pub(super) p: Cell<*const P>,
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
    /// Workers in a system call (without a processor).
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
    deadlock_check: DeadlockCheck,
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
/// worker parks for lack of work.
pub(crate) fn start(
    settings: impl FnOnce() -> Settings,
    fork_hooks: fn(),
    deadlock_check: DeadlockCheck,
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
                    status: AtomicU32::new(P_IDLE),
                    schedtick: Cell::new(0),
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

/// The processor this worker holds, if it is a worker holding one.
fn current_p() -> Option<&'static P> {
    // SAFETY: processors are never freed.
    current_m().and_then(|m| unsafe { m.p.get().as_ref() })
}

// ---- making goroutines runnable ----------------------------------------

/// Queues `g` (runnable): on this worker's processor, next if `next`, or
/// globally from other threads; then wakes a worker if one can help.
pub(crate) fn runqput(g: &G, next: bool) {
    match current_m() {
        // SAFETY: processors are never freed.
        Some(m) => match unsafe { m.p.get().as_ref() } {
            None if m.polled.get().is_some() => {
                sched().global().push(GRef(g));
                m.polled.set(m.polled.get().map(|n| n + 1));
            }
            p => runqput_on(p, g, next),
        },
        None => runqput_on(None, g, next),
    }
}

/// [`runqput`] on `p`, the processor the caller holds (or `None`: the
/// global queue). The scheduler's own loop knows its processor.
fn runqput_on(p: Option<&P>, g: &G, next: bool) {
    let s = sched();
    match p {
        Some(p) => {
            // SAFETY: this worker holds p.
            let local = unsafe { p.local() };
            if next {
                let old = p.runnext.swap((g as *const G).cast_mut(), Ordering::AcqRel);
                if !old.is_null() {
                    local.push(GRef(old));
                }
            } else {
                local.push(GRef(g));
            }
        }
        None => s.global().push(GRef(g)),
    }
    wakep();
}

/// Makes `g` runnable if it is still the goroutine of `tag`: queued if it
/// is parked, else notified (its next park returns at once). A finished
/// goroutine, or one that reuses the slot of the goroutine named, is left
/// alone. Returns whether the goroutine named was still live.
pub(crate) fn ready(g: &G, tag: u64) -> bool {
    loop {
        let s = g.status.load(Ordering::Acquire);
        if s & !g::LOW_MASK != tag {
            return false;
        }
        match s & g::STATE_MASK {
            g::WAITING => {
                if g.status
                    .compare_exchange(s, tag | g::RUNNABLE, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    g.wait_reason.set("");
                    runqput(g, true);
                    return true;
                }
            }
            g::DEAD => return false,
            _ => {
                if s & g::NOTIFIED != 0
                    || g.status
                        .compare_exchange(s, s | g::NOTIFIED, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    return true;
                }
            }
        }
    }
}

/// Starts a worker with a processor if one is idle and none spins.
pub(crate) fn wakep() {
    let s = sched();
    if s.npidle.load(Ordering::SeqCst) == 0 {
        return;
    }
    if s.nmspinning.load(Ordering::SeqCst) != 0
        || s.nmspinning
            .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
    {
        return;
    }
    startm(None, true);
}

/// Gives `p` (or an idle processor) to a parked or new worker; `spinning`
/// tells it to look for work (it was counted in `nmspinning`).
pub(super) fn startm(p: Option<&'static P>, spinning: bool) {
    let s = sched();
    let mut idle = s.lock();
    let p = match p {
        Some(p) => p,
        None => match pidleget(s, &mut idle) {
            Some(p) => p,
            None => {
                drop(idle);
                if spinning {
                    s.nmspinning.fetch_sub(1, Ordering::SeqCst);
                }
                return;
            }
        },
    };
    p.status.store(P_RUNNING, Ordering::Release);
    if let Some(m) = idle.ms.pop() {
        drop(idle);
        // SAFETY: workers are never freed.
        let m = unsafe { &*m };
        m.next_p
            .store((p as *const P).cast_mut(), Ordering::Release);
        m.next_spinning.store(spinning, Ordering::Release);
        m.parker.wake();
    } else {
        idle.workers += 1;
        let id = idle.workers;
        drop(idle);
        spawn_worker(id, p, spinning);
    }
}

pub(super) fn pidleget(s: &Sched, idle: &mut Idle) -> Option<&'static P> {
    let p = idle.ps.pop()?;
    s.npidle.fetch_sub(1, Ordering::SeqCst);
    // SAFETY: processors are never freed (the scheduler is static).
    Some(unsafe { &*p })
}

pub(super) fn pidleput(s: &Sched, idle: &mut Idle, p: &P) {
    p.status.store(P_IDLE, Ordering::Release);
    idle.ps.push(p);
    s.npidle.fetch_add(1, Ordering::SeqCst);
}

// ---- workers ---------------------------------------------------------

/// Stack size of a worker thread's own stack (the scheduler loop's).
const WORKER_STACK: usize = 256 << 10;

fn spawn_worker(id: usize, p: &'static P, spinning: bool) {
    let p = p as *const P as usize;
    let spawned = std::thread::Builder::new()
        .name(format!("defergc-go-{id}"))
        .stack_size(WORKER_STACK)
        .spawn(move || {
            crate::gc::thread::ensure_registered();
            let (alt_lo, alt_hi) = crate::signal::alt_stack();
            let m: &'static M = Box::leak(Box::new(M {
                next_p: AtomicPtr::new(ptr::null_mut()),
                next_spinning: AtomicBool::new(false),
                parker: Parker::for_current(),
                scan: super::scan::register_worker(alt_lo, alt_hi),
                p: Cell::new(ptr::null()),
                spinning: Cell::new(spinning),
                polled: Cell::new(None),
                current: Cell::new(ptr::null()),
            }));
            crate::fresh::with(&CURRENT_M, |c| c.set(m));
            m.p.set(p as *const P);
            m.scan.set_g0_sp(g::approximate_sp().saturating_sub(4096));
            schedule(m)
        });
    if let Err(e) = spawned {
        crate::abort(&format!(
            "defergc: cannot start a goroutine worker thread: {e}"
        ));
    }
}

/// The worker loop: find a goroutine, run it, repeat. Never returns.
fn schedule(m: &'static M) -> ! {
    loop {
        let g = find_runnable(m);
        execute(m, g);
    }
}

/// Moves `g` to `state`, keeping its tag and a pending notification.
pub(super) fn set_state(g: &G, state: u64) {
    let _ = g
        .status
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
            Some((s & !g::STATE_MASK) | state)
        });
}

/// Runs `g` until it switches out, then does what its switch asks.
fn execute(m: &'static M, g: &'static G) {
    let geometry = stack::geometry();
    set_state(g, g::RUNNING);
    m.current.set(g);
    m.scan
        .running
        .store((g as *const G).cast_mut(), Ordering::Release);
    // SAFETY: g's context lives in its header until the goroutine ends,
    // and only this thread runs it now.
    let previous = unsafe { crate::context::run(&g.ctx) };
    let switched = g.resume();
    // SAFETY: back on the worker's own stack; `previous` is what ran here.
    // A goroutine that is not running never holds up a collection.
    unsafe { crate::context::stop(&g.ctx, previous) };
    m.scan.running.store(ptr::null_mut(), Ordering::Release);
    m.current.set(ptr::null());
    match switched {
        None => finish(g, &geometry),
        Some(why) => {
            if !g.stack_intact(&geometry) {
                super::fault::stack_overflow(g.id());
            }
            match why {
                Switch::Yield => {
                    set_state(g, g::RUNNABLE);
                    // SAFETY: processors are never freed.
                    runqput_on(unsafe { m.p.get().as_ref() }, g, false);
                }
                Switch::Park => park_finish(g),
                Switch::SyscallExit => {
                    set_state(g, g::RUNNABLE);
                    sched().global().push(GRef(g));
                    wakep();
                    // This worker has no processor: it parks until given one.
                    stopm(m);
                }
            }
        }
    }
}

/// After a goroutine switched out to park: `WAITING`, unless a wakeup came
/// first (then it is runnable again at once), then its unlock action.
fn park_finish(g: &'static G) {
    let unlock = g.unlock.take();
    let tag = g.tag();
    let parked = g
        .status
        .compare_exchange(
            tag | g::RUNNING,
            tag | g::WAITING,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .is_ok();
    if !parked {
        // Notified while parking: run it again.
        g.status.store(tag | g::RUNNABLE, Ordering::Release);
        runqput(g, true);
    }
    if let Some(u) = unlock {
        // SAFETY: the goroutine asked for this to run after it switched
        // out; its argument is valid until it runs (its contract).
        unsafe { (u.f)(u.arg) };
    }
}

/// A goroutine finished: its states go, its slot goes back to the pool.
fn finish(g: &'static G, geometry: &stack::Geometry) {
    let s = sched();
    g.status.store(g.tag() | g::DEAD, Ordering::Release);
    // SAFETY: the goroutine ended; nothing runs in its context.
    unsafe { g.ctx.destroy_states() };
    stack::set_live(g.slot, false);
    let (slot, low) = (g.slot, g.low.get());
    let main = g.is_main.get();
    stack::give_back(slot, low.min(slot.hi(geometry)), true);
    s.goroutines.fetch_sub(1, Ordering::AcqRel);
    if main {
        super::program::main_finished();
    }
}

/// Finds a goroutine to run, parking the worker while there is none.
/// Returns with the worker holding a processor.
fn find_runnable(m: &'static M) -> &'static G {
    let s = sched();
    loop {
        let p = m.p.get();
        // SAFETY: processors are never freed.
        let Some(p) = (unsafe { p.as_ref() }) else {
            stopm(m);
            continue;
        };
        if let Some(g) = local_or_global(s, p) {
            stop_spinning(m);
            return g;
        }
        // Descriptors that became ready (readied goroutines are queued).
        if super::idle::poll_now() {
            continue;
        }
        if !m.spinning.get()
            && 2 * s.nmspinning.load(Ordering::SeqCst) < s.procs() - s.npidle.load(Ordering::SeqCst)
        {
            m.spinning.set(true);
            s.nmspinning.fetch_add(1, Ordering::SeqCst);
        }
        if m.spinning.get() {
            // Spin a little before parking: work often comes within
            // microseconds (a goroutine starting others), and parking and
            // waking a thread costs more than that.
            for round in 0..SPIN_ROUNDS {
                if let Some(g) = steal(s, p) {
                    stop_spinning(m);
                    return g;
                }
                if round % 8 == 7 {
                    std::thread::yield_now();
                } else {
                    for _ in 0..64 {
                        std::hint::spin_loop();
                    }
                }
            }
        }
        // Nothing: give the processor back, then look once more if we were
        // the spinner (the submitter may have seen us spinning).
        let was_spinning = m.spinning.replace(false);
        {
            let mut idle = s.lock();
            pidleput(s, &mut idle, p);
        }
        m.p.set(ptr::null());
        if was_spinning {
            s.nmspinning.fetch_sub(1, Ordering::SeqCst);
            std::sync::atomic::fence(Ordering::SeqCst);
            if any_work(s) {
                let got = {
                    let mut idle = s.lock();
                    pidleget(s, &mut idle)
                };
                if let Some(p) = got {
                    p.status.store(P_RUNNING, Ordering::Release);
                    m.p.set(p);
                    m.spinning.set(true);
                    s.nmspinning.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
            }
        }
        stopm(m);
    }
}

/// The next goroutine from `p`'s queues or the global queue.
fn local_or_global(s: &Sched, p: &P) -> Option<&'static G> {
    let tick = p.schedtick.get().wrapping_add(1);
    p.schedtick.set(tick);
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

fn from_global(s: &Sched, p: &P) -> Option<&'static G> {
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
fn steal(s: &Sched, p: &P) -> Option<&'static G> {
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
    // Last, a sleeping victim's runnext (its owner may be in a syscall).
    for victim in s.ps.iter() {
        if victim.id != p.id && victim.status.load(Ordering::Acquire) == P_IDLE {
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
/// an idle processor (a running one's runnext is its owner's to run).
fn any_work(s: &Sched) -> bool {
    !s.global().is_empty()
        || s.ps.iter().any(|p| {
            !p.stealer.is_empty()
                || (p.status.load(Ordering::Acquire) == P_IDLE
                    && !p.runnext.load(Ordering::Acquire).is_null())
        })
}

/// A spinning worker found work: it stops spinning, and if it was the
/// last spinner, wakes another so that more work is found in parallel.
fn stop_spinning(m: &M) {
    if m.spinning.replace(false) {
        let left = sched().nmspinning.fetch_sub(1, Ordering::SeqCst) - 1;
        if left == 0 {
            wakep();
        }
    }
}

/// Parks the worker (without a processor) until it is handed one, or
/// until its poll of the network (see [`M::polled`]) queued goroutines and
/// it could take an idle processor itself.
fn stopm(m: &'static M) {
    let s = sched();
    {
        let mut idle = s.lock();
        idle.ms.push(m);
        (s.deadlock_check)(
            idle.workers,
            idle.ms.len(),
            idle.in_syscall,
            &s.goroutines,
            &s.launching,
        );
    }
    loop {
        // No deadline: only a processor handed over, or a poll that
        // readied goroutines, ends an idle worker's wait.
        m.polled.set(Some(0));
        let wake = m.parker.block(None);
        let queued = m.polled.replace(None).unwrap_or(0);
        if wake == Wake::Woken {
            let p = m.next_p.swap(ptr::null_mut(), Ordering::AcqRel);
            m.p.set(p);
            m.spinning.set(m.next_spinning.load(Ordering::Acquire));
            if queued > 0 {
                wakep();
            }
            return;
        }
        if queued == 0 {
            continue;
        }
        let got = {
            let mut idle = s.lock();
            // Still listed as idle: no one is handing it a processor, so
            // it may take one. Otherwise one is on its way (a wake).
            match idle.ms.iter().position(|&x| ptr::eq(x, m)) {
                Some(i) => {
                    let p = pidleget(s, &mut idle);
                    if p.is_some() {
                        idle.ms.swap_remove(i);
                    }
                    p
                }
                None => None,
            }
        };
        match got {
            Some(p) => {
                p.status.store(P_RUNNING, Ordering::Release);
                m.p.set(p);
                m.spinning.set(false);
                // Another worker for the rest, and to take over the poll if
                // it finds nothing: the workers still parked sleep without
                // polling while this one runs.
                wakep();
                return;
            }
            // Every processor is busy (they find the global queue) or
            // this worker is being handed one.
            None => wakep(),
        }
    }
}

// ---- switches from a goroutine -----------------------------------------

/// `gosched`: lets other goroutines run; this one stays runnable.
pub(crate) fn gosched(g: &G) {
    g.switch_out(Switch::Yield);
}

/// Goroutines a spawning goroutine may leave queued on its processor
/// before it yields to them (Go's local run queue holds 256).
pub(crate) const SPAWN_LEAD: usize = 256;

/// After the running goroutine queued a new one: if its processor's queue
/// holds [`SPAWN_LEAD`] goroutines, it goes behind them. A loop of `go`
/// statements otherwise outruns the workers that run what it starts:
/// every goroutine waiting holds a stack slot and a header page, and by
/// the time it runs they are cold (mutex-100k reached 68,000 waiting, 230
/// MB, each run colder than the last).
pub(crate) fn yield_if_far_ahead() {
    let Some(p) = current_p() else { return };
    // SAFETY: this worker holds p.
    if unsafe { p.local() }.len() < SPAWN_LEAD {
        return;
    }
    if let Some(g) = current_g() {
        gosched(g);
    }
}

/// Parks the running goroutine `g` until [`ready`]; `unlock` runs on the
/// worker after it switched out. Returns at once (running `unlock` here)
/// if a wakeup came before.
pub(crate) fn park(g: &G, reason: &'static str, unlock: Option<g::Unlock>) {
    let tag = g.tag();
    if g.status
        .compare_exchange(
            tag | g::RUNNING | g::NOTIFIED,
            tag | g::RUNNING,
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .is_ok()
    {
        if let Some(u) = unlock {
            // SAFETY: the caller's unlock action, run as promised.
            unsafe { (u.f)(u.arg) };
        }
        return;
    }
    g.wait_reason.set(reason);
    g.unlock.set(unlock);
    g.switch_out(Switch::Park);
}
