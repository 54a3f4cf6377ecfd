//! sysmon: the scheduler's monitor thread (Go's `sysmon` in
//! `runtime/proc.go`). It holds no processor and runs no goroutine; it
//! looks at every processor each round and does four things:
//!
//! - **Retakes processors from system calls** (Go's `retake`): a
//!   processor `P_SYSCALL` with the same `syscalltick` as in the round
//!   before is in a call that has lasted at least a round. Sysmon takes
//!   it (the CAS of `syscall.rs`, under the scheduler lock, counting its
//!   worker in `in_syscall`) when the processor has goroutines queued, or
//!   no processor is idle and no worker spins (nobody else would run new
//!   work), or the call has lasted 10 ms; then hands it over as Go's
//!   `handoffp` does: to a worker if there is work for it (or to a
//!   spinning one if no one else looks for work), else to the idle list.
//!   So `enter_syscall` is a state change with no lock, and a short call
//!   never loses its processor.
//! - **Asks goroutines that run too long to yield**: a processor
//!   `P_RUNNING` or `P_SYSCALL` with the same `schedtick` for
//!   [`FORCE_PREEMPT`] (10 ms, Go's `forcePreemptNS`) runs one goroutine
//!   all that time (computing, or looping on system calls short enough to
//!   keep the processor); sysmon calls `preempt::request` for the
//!   goroutine its worker runs, every round until the time slice ends
//!   (see `preempt.rs`; `exit_syscall` honours it too).
//! - **Lets due timers run** (unlike Go): while a timer is due and every
//!   processor runs a goroutine (none idle, no worker spinning), the
//!   goroutine that has run longest is asked to yield once it has run
//!   1 ms ([`timer_round`]), and sysmon sleeps no later than the earliest
//!   timer meanwhile. Go leaves such a timer to the end of a 10 ms time
//!   slice.
//! - **Polls the network no one polls** (Go's sysmon `netpoll`): a worker
//!   blocks in the poller only while a processor is idle, and busy ones
//!   poll only when they run out of work; when goroutines wait on
//!   descriptors and no poll happened for `park::UNPOLLED`, sysmon polls
//!   without blocking and queues what it readies on the global queue.
//!
//! Rounds: sysmon sleeps 20 µs between rounds, and once 50 rounds in a
//! row found nothing to retake, twice as long after each further round,
//! up to 10 ms (Go's delays). Unlike Go, a round that finds a new system
//! call while goroutines wait to run (in the processor's queue or the
//! global one) counts as busy too: at 10 ms rounds a call of a
//! millisecond is never seen twice, and a goroutine that loops on such
//! calls would keep its processor for its whole time slice while the
//! waiting goroutines wait (`examples/syscall_bench.rs`'s blocking half
//! computed half as much that way). When every processor is idle (none runs a
//! goroutine or is in a system call: `npidle == GOMAXPROCS`) there is
//! nothing to watch: sysmon blocks (Go's `sysmonwait`) until a processor
//! leaves the idle list (`procs::pidleget` calls [`wake`] when the count
//! drops from `GOMAXPROCS`), and the round it was woken for looks at the
//! processors at once: a goroutine that runs again and soon blocks in a
//! call is seen a sleep sooner. An idle program, every goroutine parked or
//! asleep on a timer, wakes sysmon only when a goroutine runs again. The
//! wait is [`Sleeper`]: sysmon announces it waits, then looks at the
//! count once more; a waker changes the count, then looks at the
//! announcement (a SeqCst fence between each store and load), so either
//! sysmon sees the busy processor or the waker sees it waiting and wakes
//! it (`tests/syscall_loom.rs`).
//!
//! What this trades: a short call no longer pays for a handover, and a
//! call that lasts gives its processor away a round or two late. A
//! goroutine whose call was retaken comes back to the global queue, behind
//! goroutines that may each run a 10 ms time slice (as in Go); one that
//! computes with no preemption point keeps its processor for good, so
//! until the asynchronous half exists, goroutines back from retaken calls
//! can wait for ever behind such loops when they hold every processor
//! (the old handover at every enter happened to give them a chance).
//!
//! sysmon starts with the scheduler (`sched::start`) and again in a forked
//! child ([`restart_after_fork`]: design.md invariant 9). It allocates no
//! collected memory and is not registered with a collector (a collection
//! never waits for it); it names no collector. It takes the scheduler
//! lock only to retake a processor.

use super::prim::{fence, thread, AtomicBool};
use super::procs::{self, Sched, P, P_IDLE, P_RUNNING, P_SYSCALL};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a goroutine runs before sysmon asks it to yield (Go's
/// `forcePreemptNS`).
pub(crate) const FORCE_PREEMPT: Duration = Duration::from_millis(10);
/// A system call that lasted this long loses its processor even when
/// other processors are idle (Go's 10 ms in `retake`).
const LONG_SYSCALL: Duration = Duration::from_millis(10);
/// The shortest and longest sleep between rounds, in microseconds.
const MIN_DELAY_US: u64 = 20;
const MAX_DELAY_US: u64 = 10_000;
/// Rounds that found nothing to retake before the sleep starts doubling.
const IDLE_ROUNDS: u32 = 50;
/// How long a goroutine runs before a due timer that no processor is free
/// to run preempts it (see [`timer_round`]).
const TIMER_SLICE: Duration = Duration::from_millis(1);
/// The shortest sleep while a timer is due that no processor is free to
/// run.
const TIMER_DELAY: Duration = Duration::from_micros(100);

/// sysmon's wait for a busy processor (see the module docs): the thread
/// that waits and its announcement. Under `cfg(loom)` its primitives are
/// loom's (`model.rs` exposes it to `tests/syscall_loom.rs`).
pub(crate) struct Sleeper {
    thread: thread::Thread,
    /// Set by the waiting thread, cleared by the waker that wakes it.
    waiting: AtomicBool,
}

impl Sleeper {
    /// The sleeper of the calling thread (the only one that may wait on it).
    pub(crate) fn for_current() -> Sleeper {
        Sleeper {
            thread: thread::current(),
            waiting: AtomicBool::new(false),
        }
    }

    /// Blocks the calling thread (the sleeper's own) while `idle()` holds,
    /// until [`Sleeper::wake`] is called after it stopped holding; whether
    /// it blocked.
    pub(crate) fn wait_while(&self, idle: impl Fn() -> bool) -> bool {
        #[cfg(loom)]
        if super::prim::late_announce() {
            // The bug loom must find: a wake between the look and the
            // announcement sees no waiter.
            if !idle() {
                return false;
            }
            self.waiting.store(true, Ordering::SeqCst);
            while self.waiting.load(Ordering::SeqCst) {
                thread::park();
            }
            return true;
        }
        self.waiting.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !idle() {
            // A waker may clear it too, and unpark: the next wait's park
            // then returns at once and looks at `waiting` again.
            self.waiting.store(false, Ordering::SeqCst);
            return false;
        }
        while self.waiting.load(Ordering::SeqCst) {
            thread::park();
        }
        true
    }

    /// Wakes the thread if it waits; call after making its `idle()` false.
    pub(crate) fn wake(&self) {
        fence(Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) && self.waiting.swap(false, Ordering::SeqCst) {
            self.thread.unpark();
        }
    }
}

/// The running sysmon's sleeper (a new one in a forked child), or null.
static SLEEPER: AtomicPtr<Sleeper> = AtomicPtr::new(ptr::null_mut());
/// Rounds sysmon has woken for (from its sleep or its wait).
static WAKEUPS: AtomicU64 = AtomicU64::new(0);
/// Processors retaken from system calls.
static RETAKES: AtomicU64 = AtomicU64::new(0);
/// Rounds that asked a goroutine to yield for a due timer ([`timer_round`]).
static TIMER_PREEMPTS: AtomicU64 = AtomicU64::new(0);
/// Whether sysmon was started in this process.
static STARTED: std::sync::Once = std::sync::Once::new();

/// sysmon's counts since the process started: rounds it woke for, and
/// processors it retook from system calls.
pub(crate) fn counts() -> (u64, u64) {
    (
        WAKEUPS.load(Ordering::Relaxed),
        RETAKES.load(Ordering::Relaxed),
    )
}

/// Starts sysmon for the scheduler (once per process).
pub(crate) fn start() {
    STARTED.call_once(spawn);
}

/// In a forked child (its fork hook, after the scheduler's state was
/// repaired): the parent's sysmon did not come along; a new one starts.
pub(crate) fn restart_after_fork() {
    if STARTED.is_completed() {
        SLEEPER.store(ptr::null_mut(), Ordering::SeqCst);
        spawn();
    }
}

/// A processor left the idle list: sysmon, if it waits, watches again.
pub(crate) fn wake() {
    // SAFETY: sleepers are leaked: a published one stays valid.
    if let Some(s) = unsafe { SLEEPER.load(Ordering::SeqCst).as_ref() } {
        s.wake();
    }
}

fn spawn() {
    let spawned = std::thread::Builder::new()
        .name("defergc-sysmon".into())
        .stack_size(64 << 10)
        .spawn(|| {
            // Its rounds sleep 20 µs while something may need it; the
            // kernel's default slack of 50 µs would more than triple that.
            // SAFETY: PR_SET_TIMERSLACK takes a number; a failure (an old
            // kernel) leaves the default.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
            let me: &'static Sleeper = Box::leak(Box::new(Sleeper::for_current()));
            SLEEPER.store((me as *const Sleeper).cast_mut(), Ordering::SeqCst);
            run(procs::sched(), me)
        });
    if let Err(e) = spawned {
        crate::abort(&format!("defergc: cannot start the sysmon thread: {e}"));
    }
}

/// What sysmon saw of one processor (Go's `sysmontick`).
#[derive(Clone, Copy)]
struct Seen {
    schedtick: u32,
    schedwhen: Instant,
    syscalltick: u32,
    syscallwhen: Instant,
}

fn run(s: &'static Sched, me: &'static Sleeper) -> ! {
    let start = Instant::now();
    let mut seen: Vec<Seen> = Vec::new();
    let mut pace = Pace::new();
    let mut polled = start;
    loop {
        std::thread::sleep(round_sleep(s, pace.next_delay()));
        WAKEUPS.fetch_add(1, Ordering::Relaxed);
        let all_idle = || s.npidle.load(Ordering::SeqCst) == s.procs();
        if all_idle() && me.wait_while(all_idle) {
            // Woken because a processor left the idle list: this round
            // looks at once (as Go's sysmon goes on after its wait), so a
            // system call made just after is seen a round sooner.
            WAKEUPS.fetch_add(1, Ordering::Relaxed);
            pace.woken();
        }
        let now = Instant::now();
        seen.resize(
            s.procs(),
            Seen {
                schedtick: 0,
                schedwhen: start,
                syscalltick: 0,
                syscallwhen: start,
            },
        );
        let mut busy = false;
        for (p, seen) in s.ps().zip(seen.iter_mut()) {
            match p.status.load(Ordering::Acquire) {
                P_SYSCALL => {
                    // A goroutine that loops on system calls keeps its
                    // time slice through them (Go checks both states).
                    running_round(p, seen, now);
                    busy |= syscall_round(s, p, seen, now);
                }
                P_RUNNING => running_round(p, seen, now),
                _ => {}
            }
        }
        timer_round(s, &seen, now);
        busy |= super::park::poll_if_unpolled(&mut polled, now);
        pace.round(busy);
    }
}

/// How long sysmon sleeps between rounds (see the module docs): the
/// shortest delay while rounds find work, doubling after [`IDLE_ROUNDS`]
/// rounds in a row found none, up to the longest.
#[derive(Debug)]
struct Pace {
    idle_rounds: u32,
    delay: u64,
}

impl Pace {
    fn new() -> Pace {
        Pace {
            idle_rounds: 0,
            delay: MIN_DELAY_US,
        }
    }

    /// The sleep before the next round, in microseconds.
    fn next_delay(&mut self) -> u64 {
        self.delay = if self.idle_rounds == 0 {
            MIN_DELAY_US
        } else if self.idle_rounds > IDLE_ROUNDS {
            (self.delay * 2).min(MAX_DELAY_US)
        } else {
            self.delay
        };
        self.delay
    }

    /// Sysmon was woken from its idle wait: the rounds start short again,
    /// whatever the round it was woken for finds (the delay before the
    /// wait may have grown to the longest).
    fn woken(&mut self) {
        self.idle_rounds = 0;
        self.delay = MIN_DELAY_US;
    }

    /// A round ended; `busy`: it found something to do or watch.
    fn round(&mut self, busy: bool) {
        if busy {
            self.idle_rounds = 0;
        } else {
            self.idle_rounds = self.idle_rounds.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds that find nothing: the delay stays short for
    /// `IDLE_ROUNDS`, then doubles up to the longest.
    #[test]
    fn idle_rounds_lengthen_the_delay_up_to_the_longest() {
        let mut pace = Pace::new();
        let delays: Vec<u64> = (0..IDLE_ROUNDS + 20)
            .map(|_| {
                let d = pace.next_delay();
                pace.round(false);
                d
            })
            .collect();
        assert!(delays[..=IDLE_ROUNDS as usize]
            .iter()
            .all(|&d| d == MIN_DELAY_US));
        assert_eq!(delays[IDLE_ROUNDS as usize + 1], 2 * MIN_DELAY_US);
        assert_eq!(*delays.last().unwrap(), MAX_DELAY_US);
        assert!(delays.windows(2).all(|w| w[0] <= w[1]));
    }

    /// Woken from the idle wait after a long quiet spell, the round it
    /// was woken for finds nothing yet (the goroutine that woke it has
    /// not reached its system call): the next round still comes after
    /// the shortest delay, not the longest the quiet spell reached.
    #[test]
    fn a_wake_after_a_quiet_spell_makes_the_next_rounds_short() {
        let mut pace = Pace::new();
        for _ in 0..IDLE_ROUNDS + 40 {
            pace.next_delay();
            pace.round(false);
        }
        assert_eq!(pace.next_delay(), MAX_DELAY_US);
        pace.round(false);
        pace.woken();
        pace.round(false);
        assert_eq!(pace.next_delay(), MIN_DELAY_US);
        pace.round(false);
        assert_eq!(pace.next_delay(), MIN_DELAY_US);
    }
}

/// A processor in a system call: retaken (and handed over) if its call is
/// the one of the round before and it should be (see the module docs).
/// Whether sysmon should look again soon: it retook the processor, or the
/// call is new while goroutines wait to run (retaken if it lasts a round).
fn syscall_round(s: &Sched, p: &'static P, seen: &mut Seen, now: Instant) -> bool {
    let tick = p.call.tick.load(Ordering::Relaxed);
    if tick != seen.syscalltick {
        seen.syscalltick = tick;
        seen.syscallwhen = now;
        return p.has_work() || !s.global().is_empty();
    }
    let others_look = s.nmspinning.load(Ordering::SeqCst) + s.npidle.load(Ordering::SeqCst) > 0;
    if !p.has_work() && others_look && now.duration_since(seen.syscallwhen) < LONG_SYSCALL {
        return false;
    }
    let mut idle = s.lock();
    if s.world.waiting() {
        // A stop of the world claims processors in calls itself.
        return false;
    }
    if !retake(p, tick) {
        return false;
    }
    idle.in_syscall += 1;
    RETAKES.fetch_add(1, Ordering::Relaxed);
    // Go's handoffp.
    if p.has_work() || !s.global().is_empty() {
        drop(idle);
        super::idle::startm(Some(p), false);
    } else if s.nmspinning.load(Ordering::SeqCst) + s.npidle.load(Ordering::SeqCst) == 0
        && s.nmspinning
            .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    {
        // No one else looks for work: a spinning worker does.
        drop(idle);
        super::idle::startm(Some(p), true);
    } else {
        procs::pidleput(s, &mut idle, p);
    }
    true
}

/// Takes a processor whose call is the one of tick `seen`, if its worker
/// has not left it (`syscall.rs`'s handshake; under the scheduler lock).
fn retake(p: &P, seen: u32) -> bool {
    super::syscall::take(&p.status, &p.call, P_IDLE, Some(seen))
}

/// A processor running goroutines: if its time slice is the one of
/// [`FORCE_PREEMPT`] ago, its goroutine is asked to yield.
fn running_round(p: &P, seen: &mut Seen, now: Instant) {
    let tick = p.schedtick.load(Ordering::Relaxed);
    if tick != seen.schedtick {
        seen.schedtick = tick;
        seen.schedwhen = now;
        return;
    }
    if now.duration_since(seen.schedwhen) < FORCE_PREEMPT {
        return;
    }
    // SAFETY: workers are never freed.
    if let Some(m) = unsafe { p.m.load(Ordering::Acquire).as_ref() } {
        super::preempt::request(m);
    }
}

/// Whether no processor is free to run a due timer: none is idle and no
/// worker spins looking for work (the timers run at a worker's next
/// scheduling point).
fn no_free_processor(s: &Sched) -> bool {
    s.npidle.load(Ordering::SeqCst) == 0 && s.nmspinning.load(Ordering::SeqCst) == 0
}

/// The sleep before the next round: `delay_us`, but no later than the
/// earliest timer while no processor is free to run it (and at least
/// [`TIMER_DELAY`] once it is due), so that [`timer_round`] sees it in
/// time.
fn round_sleep(s: &Sched, delay_us: u64) -> Duration {
    let delay = Duration::from_micros(delay_us);
    match super::park::next_timer() {
        Some(at) if no_free_processor(s) => delay.min(
            at.saturating_duration_since(Instant::now())
                .max(TIMER_DELAY),
        ),
        _ => delay,
    }
}

/// A timer is due and every processor runs a goroutine (none idle, no
/// worker spinning): the goroutine that has run longest, once it has run
/// [`TIMER_SLICE`], is asked to yield, so that its worker runs the timers
/// at its next scheduling point. Go waits for a time slice to end
/// (10 ms) or for a processor to come free; a sleeper here wakes about
/// a millisecond late, not a time slice (`defergc bench preempt`).
fn timer_round(s: &Sched, seen: &[Seen], now: Instant) {
    match super::park::next_timer() {
        Some(at) if at <= now && no_free_processor(s) => {}
        _ => return,
    }
    let longest = s
        .ps()
        .zip(seen.iter())
        .filter(|(p, _)| p.status.load(Ordering::Acquire) == P_RUNNING)
        .filter(|(_, seen)| now.duration_since(seen.schedwhen) >= TIMER_SLICE)
        .min_by_key(|(_, seen)| seen.schedwhen);
    if let Some((p, _)) = longest {
        // SAFETY: workers are never freed.
        if let Some(m) = unsafe { p.m.load(Ordering::Acquire).as_ref() } {
            TIMER_PREEMPTS.fetch_add(1, Ordering::Relaxed);
            // The due timer may be on another processor's heap: this
            // worker runs every heap's at its next scheduling point.
            super::park::want_all_timers();
            super::preempt::request(m);
        }
    }
}

/// Counts of the monitor's work since the process started ([`sched_stats`]),
/// for tests and diagnostics: each only grows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedStats {
    /// Rounds sysmon woke for (from its sleep between rounds or its wait
    /// for a busy processor).
    pub sysmon_wakeups: u64,
    /// Processors sysmon took back from goroutines in system calls.
    pub syscall_retakes: u64,
    /// `exit_syscall`s that found their processor taken (the slow path);
    /// every other exit took it back, most with plain loads and stores.
    pub syscall_slow_exits: u64,
    /// `exit_syscall`s that found a taker (sysmon or a stopper) deciding
    /// whether to take their processor, and waited for its verdict.
    pub syscall_undecided_exits: u64,
    /// Preemption requests sysmon made (a goroutine ran 10 ms, or 1 ms
    /// while a timer was due that no processor was free to run).
    pub preempt_requests: u64,
    /// Rounds in which sysmon asked a goroutine to yield for a due timer
    /// (that no processor was free to run).
    pub timer_preempt_requests: u64,
    /// Requests honoured: the goroutine yielded at a preemption point.
    pub preempts_honoured: u64,
    /// Signal stacks the runtime's threads hold now: one per live worker
    /// (a worker that ends with its locked goroutine gives its back).
    pub signal_stacks: u64,
}

/// The monitor's counts (see [`SchedStats`]).
pub fn sched_stats() -> SchedStats {
    let (sysmon_wakeups, syscall_retakes) = counts();
    let (preempt_requests, preempts_honoured) = super::preempt::counts();
    SchedStats {
        sysmon_wakeups,
        syscall_retakes,
        syscall_slow_exits: super::syscall::slow_exits(),
        syscall_undecided_exits: super::syscall::undecided_exits(),
        preempt_requests,
        timer_preempt_requests: TIMER_PREEMPTS.load(Ordering::Relaxed),
        preempts_honoured,
        signal_stacks: crate::signal::live_alt_stacks() as u64,
    }
}
