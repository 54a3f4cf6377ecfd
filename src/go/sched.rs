//! The M:N scheduler's loop: running goroutines and making them runnable
//! (Go's `schedule`, `execute`, `ready`, `runqput`, `gopark`). The
//! workers (Go's `M`), processors (`P`) and run queues are `procs.rs`'s;
//! finding work, spinning and parking idle workers are `idle.rs`'s; the
//! blocking primitive is `park.rs`'s; system calls are `syscall.rs`'s.
//! The policy of all of them is here.
//!
//! # Policy
//!
//! - `GOMAXPROCS` processors. A worker thread runs goroutines only while
//!   it holds a processor; a processor has a local run queue (a ring of
//!   256, `runq.rs`, half of it stolen at a time by idle processors; a
//!   full one sends half to the global queue) and a
//!   `runnext` slot for the goroutine readied or started last, which runs
//!   next (a goroutine that wakes another, as a channel send does, hands
//!   over at once). A global queue takes goroutines started or readied
//!   from outside a worker; a worker checks it first every [`GLOBAL_TICK`](super::procs::GLOBAL_TICK)
//!   schedules, so it never starves.
//! - Finding work: the local queue, then the global queue, then stealing
//!   half of another processor's queue. A worker that finds none *spins*
//!   for a few microseconds ([`SPIN_ROUNDS`](super::idle::SPIN_ROUNDS) steal attempts; at most half
//!   the busy processors' worth of workers spin at once), then gives its
//!   processor back and parks. Making
//!   work available wakes a parked worker if a processor is idle and none
//!   spins ([`wakep`](super::idle::wakep)); a spinning worker that gives up looks everywhere
//!   once more after announcing it, so no wakeup is lost (either it sees
//!   the new work or the submitter sees no spinner and wakes one).
//! - System calls and native code (`syscall.rs`): `enter_syscall` only
//!   marks the worker's processor `P_SYSCALL`; `exit_syscall` takes it
//!   back with one CAS. A call that lasts is noticed by sysmon
//!   (`sysmon.rs`), which takes the processor and hands it to another
//!   worker (started if needed) when there is work for it, so nothing
//!   starves while the call blocks; an `exit_syscall` that finds its
//!   processor taken takes an idle one, else queues the goroutine
//!   globally and parks the worker.
//! - `LockOSThread`: a goroutine locked to its worker thread runs only
//!   there, and that worker runs nothing else. When the goroutine switches
//!   out, its worker gives its processor away and waits for it; the
//!   worker that later takes it from a run queue hands that worker its
//!   processor and parks (`idle.rs`: Go's `stoplockedm`,
//!   `startlockedm`). A goroutine that exits locked ends its thread.
//! - `GOMAXPROCS` changes while goroutines run, with the world stopped
//!   (`stw.rs`): every worker stops its processor at its next scheduling
//!   point (looking for work, giving its processor away).
//! - Preemption (`preempt.rs`): a goroutine that has run one time slice
//!   for 10 ms is asked by sysmon to yield, and does at its next
//!   preemption point (the API's blocking channel and select entries,
//!   sync locks and waits, `defergc_alloc`, `exit_syscall`, and compiled
//!   code's poll point), to the back of the global queue. On x86-64
//!   Linux sysmon also sends a signal (`async_preempt.rs`): the goroutine
//!   yields at an instruction of compiled code, to the global queue too.
//!
//! Deadlock: when the last worker goes idle while goroutines exist, none
//! in a system call and nothing else can wake one (see `deadlock.rs`),
//! every goroutine is asleep: the program ends with Go's report.

use super::g::{self, Switch, G};
use super::idle::{exit_locked_m, find_runnable, startlockedm, stoplockedm, stopm, wakep};
use super::procs::{current_g, current_m, sched, DeadlockCheck, GRef, Sched, Settings, M, P};
use super::stack;
use std::ptr;
use std::sync::atomic::Ordering;

// ---- making goroutines runnable ----------------------------------------

/// Queues `g` (runnable): on this worker's processor, next if `next`, or
/// globally from other threads; then wakes a worker if one can help.
pub(crate) fn runqput(g: &G, next: bool) {
    match queue_here() {
        Here::Polling(m) => {
            sched().global().push(GRef(g));
            m.polled.set(m.polled.get().map(|n| n + 1));
        }
        Here::Local(p) => runqput_on(p, g, next),
    }
}

/// Where the calling thread queues what it makes runnable.
enum Here {
    /// On its processor's local queue (`Some`), or the global queue.
    Local(Option<&'static P>),
    /// The global queue, counted: a worker without a processor polling
    /// the network, which takes a processor for what it readied (`m.polled`).
    Polling(&'static M),
}

fn queue_here() -> Here {
    match current_m() {
        // SAFETY: processors are never freed.
        Some(m) => match unsafe { m.p.get().as_ref() } {
            None if m.polled.get().is_some() => Here::Polling(m),
            p => Here::Local(p),
        },
        None => Here::Local(None),
    }
}

/// [`runqput`] on `p`, the processor the caller holds (or `None`: the
/// global queue). The scheduler's own loop knows its processor.
fn runqput_on(p: Option<&P>, g: &G, next: bool) {
    let s = sched();
    match p {
        Some(p) => {
            if next {
                // `g` runs next on this processor, after what is left of
                // the running goroutine's slice: the lines its resumption
                // reads first (its saved registers and the frames of its
                // park) are asked for now, and arrive meanwhile. Parked long
                // enough ago, they are out of the cache (a chain of
                // goroutines handing values along, as `sieve`'s, resumes
                // each one once per value); its status line is in the
                // cache already (a ready just wrote it), and so is its
                // saved stack pointer beside it.
                G::prefetch_stack(g);
                let old = p.runnext.swap((g as *const G).cast_mut(), Ordering::AcqRel);
                if !old.is_null() {
                    // SAFETY: this worker holds p.
                    unsafe { p.runq_put(s, old) };
                }
            } else {
                // SAFETY: as above.
                unsafe { p.runq_put(s, g) };
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
    ready_then(g, tag, |g| runqput(g, true))
}

/// [`ready`], queueing through `batch` (see [`ReadyBatch`]).
pub(crate) fn ready_into(g: &G, tag: u64, batch: &mut ReadyBatch) -> bool {
    ready_then(g, tag, |g| batch.push(g))
}

/// [`ready`] with `queue` doing the queueing of a parked `g`.
#[inline(always)]
fn ready_then(g: &G, tag: u64, queue: impl FnOnce(&G)) -> bool {
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
                    super::trace::unblocked(g, tag >> 32);
                    queue(g);
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

/// Goroutines made runnable together (a close waking every receiver),
/// queued [`READY_BATCH`] at a time: the local run queue publishes each
/// batch at once, and one idle worker is woken a batch. Readied one by
/// one, a worker taking them as they came stole one or two at a time, and
/// each steal took the closer's queue line away from it: a close of a
/// million waiters with the other worker taking part ran twice as long as
/// with it asleep. What is in a batch is runnable but queued nowhere until
/// the batch is flushed (when full, and when dropped), so a batch lives
/// on its waker's stack for one loop of wakeups.
pub(crate) struct ReadyBatch {
    gs: [*mut G; READY_BATCH],
    n: usize,
}

/// Goroutines a [`ReadyBatch`] holds before it queues them.
const READY_BATCH: usize = 32;

impl ReadyBatch {
    pub(crate) fn new() -> ReadyBatch {
        ReadyBatch {
            gs: [std::ptr::null_mut(); READY_BATCH],
            n: 0,
        }
    }

    fn push(&mut self, g: &G) {
        self.gs[self.n] = (g as *const G).cast_mut();
        self.n += 1;
        if self.n == READY_BATCH {
            self.flush();
        }
    }

    /// Queues what it holds, oldest first, and wakes a worker.
    fn flush(&mut self) {
        let gs = &self.gs[..self.n];
        if gs.is_empty() {
            return;
        }
        self.n = 0;
        let s = sched();
        match queue_here() {
            // SAFETY: this worker holds p.
            Here::Local(Some(p)) => unsafe { p.runq_put_batch(s, gs) },
            Here::Local(None) => gs.iter().for_each(|&g| s.global().push(GRef(g))),
            Here::Polling(m) => {
                gs.iter().for_each(|&g| s.global().push(GRef(g)));
                m.polled.set(m.polled.get().map(|n| n + gs.len()));
                return;
            }
        }
        wakep();
    }
}

impl Drop for ReadyBatch {
    fn drop(&mut self) {
        self.flush();
    }
}

// ---- workers ---------------------------------------------------------

/// Starts the scheduler (see `procs::start`) with [`schedule`] as every
/// worker's loop.
pub(crate) fn start(
    settings: impl FnOnce() -> Settings,
    fork_hooks: fn(),
    deadlock_check: DeadlockCheck,
) -> &'static Sched {
    let s = super::procs::start(settings, fork_hooks, deadlock_check, schedule);
    super::park::set_kick_idle(super::idle::kick_idle);
    super::park::set_processor_idle(|| super::procs::sched().npidle.load(Ordering::SeqCst) > 0);
    super::stw::real::set_preempt_all(super::preempt::request_all);
    super::sysmon::start();
    s
}

/// The worker loop: find a goroutine, run it, repeat. Returns only when
/// a goroutine locked to this worker exited: the thread ends.
fn schedule(m: &'static M) {
    loop {
        // The end of the slice that ran last, if the trace records them:
        // the next slice starts there when its goroutine was at hand (one
        // clock read a switch instead of two).
        let ended = m.trace_tick.take();
        // SAFETY: a locked goroutine lives until it exits, which unlocks
        // it (below).
        let (g, at_once) = match unsafe { m.locked_g.get().as_ref() } {
            Some(g) => {
                stoplockedm(m);
                (g, false)
            }
            None => {
                let (g, at_once) = find_runnable(m);
                let l = g.locked_m.load(Ordering::Acquire).cast::<M>().cast_const();
                // SAFETY: workers are never freed.
                if let Some(l) = unsafe { l.as_ref() } {
                    if !ptr::eq(l, m) {
                        startlockedm(m, l);
                        continue;
                    }
                }
                (g, at_once)
            }
        };
        if at_once {
            m.trace_tick.set(ended);
        }
        if !execute(m, g) {
            exit_locked_m(m);
            return;
        }
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
/// Returns false when `g` exited locked to this worker.
fn execute(m: &'static M, g: &'static G) -> bool {
    let geometry = stack::geometry();
    set_state(g, g::RUNNING);
    // Before the goroutine writes its stack again (the sequence-lock
    // read of `dump.rs`).
    super::dump::seq::before_resume();
    // A new time slice: no request made for an earlier one holds, and
    // sysmon asks this worker about it.
    super::preempt::clear(g);
    // SAFETY: processors are never freed.
    if let Some(p) = unsafe { m.p.get().as_ref() } {
        p.m.store((m as *const M).cast_mut(), Ordering::Relaxed);
    }
    m.current.set(g);
    // SAFETY: processors are never freed.
    let traced = super::trace::slice_start(unsafe { m.p.get().as_ref() }, g, m.trace_tick.take());
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
    // Then the request's flag, which must not pass the store: see
    // `preempt::request` (the other side's fence is the heavy one).
    m.scan.running.store(ptr::null_mut(), Ordering::Release);
    super::membar::light_barrier();
    super::preempt::clear(g);
    // A signal request for the slice that ended holds no more.
    m.preempt.forget();
    m.current.set(ptr::null());
    if let Some(start) = traced {
        m.trace_tick
            .set(super::trace::slice_end(start, g, switched));
    }
    match switched {
        None => {
            let locked = ptr::eq(m.locked_g.get(), g);
            finish(m, g, &geometry);
            return !locked;
        }
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
                Switch::Preempt => {
                    set_state(g, g::RUNNABLE);
                    sched().global().push(GRef(g));
                    wakep();
                }
                Switch::Park => park_finish(g),
                Switch::SyscallExit => {
                    set_state(g, g::RUNNABLE);
                    sched().global().push(GRef(g));
                    wakep();
                    // This worker has no processor: it parks until given
                    // one (a locked worker waits for its goroutine).
                    if m.locked_g.get().is_null() {
                        // (The next slice starts after this wait.)
                        m.trace_tick.set(0);
                        stopm(m);
                    }
                }
            }
        }
    }
    true
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
fn finish(m: &M, g: &'static G, geometry: &stack::Geometry) {
    let s = sched();
    g.status.store(g.tag() | g::DEAD, Ordering::Release);
    // SAFETY: the goroutine ended; nothing runs in its context.
    unsafe { g.ctx.destroy_states() };
    stack::set_live(g.slot, false);
    let (slot, low) = (g.slot, g.low.get());
    let main = g.is_main.get();
    // The preemption flag is kept: a request may still set it (see
    // `G::init`).
    let keep = g.preempt.as_ptr() as usize;
    stack::give_back(slot, low.min(slot.hi(geometry)), true, Some(keep));
    s.count_goroutine(Some(m), -1);
    if main {
        super::program::main_finished();
    }
}

// ---- switches from a goroutine -----------------------------------------

/// `gosched`: lets other goroutines run; this one stays runnable.
pub(crate) fn gosched(g: &G) {
    g.switch_out(Switch::Yield);
}

/// The running goroutine `g` was preempted (async_preempt.rs): it goes
/// to the global queue and its worker runs another.
pub(crate) fn preempted(g: &G) {
    g.switch_out(Switch::Preempt);
}

/// Goroutines a spawning goroutine may leave queued on its processor
/// before it yields to them (Go's local run queue holds 256).
pub(crate) const SPAWN_LEAD: usize = 256;

/// Goroutines a goroutine starts before its `go` statements count as a
/// loop's (see [`yield_if_far_ahead`]): more than a tree's node starts
/// (skynet's start ten each).
pub(crate) const SPAWN_LOOP: u32 = 16;

/// After the running goroutine queued a new one: if its processor's queue
/// holds [`SPAWN_LEAD`] goroutines, either the spawner goes behind them
/// or half of them go to the global queue.
///
/// A goroutine that has started [`SPAWN_LOOP`] goroutines or more (a loop
/// of `go` statements) yields: otherwise it outruns the workers that run
/// what it starts and what the queue holds besides (sleepers its
/// goroutines' timers readied, for one), every goroutine waiting holds a
/// stack slot and a header page, and by the time it runs they are cold
/// (mutex-100k reached 68,000 waiting, 230 MB, each run colder than the
/// last). Counted over its life, not its time slice: a loop counted per
/// slice sent up to 128 queued goroutines to the global queue at each of
/// a slice's first go statements, and `timers` (a loop starting 100,000
/// sleepers) took 1.5 times as long.
///
/// Otherwise (a tree of goroutines that each start a few, as `skynet`'s)
/// the oldest half of the queue moves to the global queue, as Go's
/// `runqput` does when the local queue is full: the processor goes on
/// with the newest goroutines, which finish the subtrees already begun
/// (their parents wait for them) instead of starting the old ones' (the
/// global queue is still served every `GLOBAL_TICK` schedules, and when
/// the local one is empty). Sending the spawner behind the queue there
/// turned the tree breadth first: twice the goroutines alive at once.
pub(crate) fn yield_if_far_ahead() {
    let Some(m) = current_m() else { return };
    let g = current_g();
    let spawned = g.map_or(0, |g| {
        let n = g.spawned.get().saturating_add(1);
        g.spawned.set(n);
        n
    });
    // SAFETY: processors are never freed.
    let Some(p) = (unsafe { m.p.get().as_ref() }) else {
        return;
    };
    if p.runq.len() < SPAWN_LEAD {
        return;
    }
    if spawned >= SPAWN_LOOP {
        if let Some(g) = g {
            gosched(g);
        }
        return;
    }
    let global = sched().global();
    for _ in 0..SPAWN_LEAD / 2 {
        // SAFETY: this worker holds p.
        match unsafe { p.runq.pop() } {
            Some(g) => global.push(GRef(g)),
            None => break,
        }
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
    let since = super::contention::block_start(reason);
    g.wait_reason.set(reason);
    g.waitsince
        .store(super::dump::coarse_now(), Ordering::Relaxed);
    g.unlock.set(unlock);
    g.switch_out(Switch::Park);
    if since != 0 {
        super::contention::blocked(since, super::contention::stack_of(g));
    }
}
