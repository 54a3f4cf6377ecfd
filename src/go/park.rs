//! How an idle worker blocks and is woken: one primitive, "block until
//! woken, a poll's events or a due timer" ([`Parker::block`]), and its wake
//! ([`Parker::wake`]). `idle.rs` decides when a worker
//! has nothing to do and parks it here; whoever hands it a processor wakes
//! it. A wake that comes before the block is kept (a flag the block
//! consumes), so none is lost between deciding to park and parking.
//!
//! While goroutines wait on descriptors, one blocked worker waits in the
//! network poller instead of `std::thread::park` (Go's `findRunnable`
//! blocking in `netpoll`): what the poller readies is queued as any ready
//! is, and a wake of that worker goes through the poller's own eventfd.
//! The poller registers itself here ([`set_poller`]) when its first
//! descriptor is registered, so this file names no poller. A worker
//! blocks in the poller only while a processor is idle (the scheduler
//! says so through [`set_processor_idle`]): with every processor busy,
//! busy workers poll when they run out of work and sysmon when no one
//! has polled for [`UNPOLLED`] ([`poll_if_unpolled`]).

use super::prim::{fence, thread, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// One worker's blocking point: owned by the worker, woken by any thread.
pub(crate) struct Parker {
    thread: thread::Thread,
    /// Set by [`Parker::wake`], consumed by [`Parker::block`].
    woken: AtomicBool,
}

impl Parker {
    /// The parker of the calling thread (the only one that may block on
    /// it).
    pub(crate) fn for_current() -> Parker {
        Parker {
            thread: thread::current(),
            woken: AtomicBool::new(false),
        }
    }

    /// Blocks the calling thread (the parker's own) until [`Parker::wake`]
    /// was called, its poll of the network readied goroutines, or a timer
    /// is due. A wake is consumed by the
    /// block that sees it.
    ///
    /// While goroutines wait on descriptors or timers are pending, one
    /// blocked parker is the *watcher*: it blocks in the network poll (or,
    /// with no descriptor waited on, sleeps) until the earliest timer, and
    /// returns to have the timers run; the others sleep until woken. A
    /// parker woken (it watched, or the kick meant to make one watch
    /// reached it as it was handed a processor) passes the watch on
    /// ([`pass_watch`]).
    pub(crate) fn block(&self) -> Wake {
        let r = room();
        loop {
            // Only this thread clears the flag, so a load and a store
            // consume it as a swap would (wakes in between are the same
            // wake); loom 0.7 reports a false deadlock for a swap here.
            if self.woken.load(Ordering::Acquire) {
                self.woken.store(false, Ordering::Relaxed);
                // This worker leaves the idle ones: if it watched, or took
                // a kick meant to make one watch, the watch passes on.
                #[cfg(loom)]
                if super::prim::unpassed_watch() {
                    return Wake::Woken;
                }
                pass_watch();
                return Wake::Woken;
            }
            // The network only while a processor is idle: what a poll
            // readies then has a processor to run on. With every processor
            // busy, a blocked poll would wake this thread for each event to
            // queue goroutines that wait for a processor anyway; the busy
            // workers poll when they run out of work, sysmon when none has
            // for a while ([`poll_if_unpolled`]), and the worker whose
            // processor goes idle next blocks here and polls (or nudges
            // the watcher, asleep on a timer, into polling).
            let io = poller().filter(|p| (p.waiting)() > 0 && processor_idle());
            if (io.is_some() || earliest_ns() != NO_TIMER)
                && r.watcher
                    .compare_exchange(
                        ptr::null_mut(),
                        (self as *const Parker).cast_mut(),
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    )
                    .is_ok()
            {
                // A wake stores `woken`, a new earliest timer its heap's
                // `next_timer`, then each loads `watcher`; this claimed `watcher` and
                // loads them, with a SeqCst fence between each store and
                // load: either the other side sees this watcher (and
                // breaks its poll or sleep), or these loads see its store
                // (fences, not SeqCst accesses alone: loom checks this
                // through the fences).
                fence(Ordering::SeqCst);
                #[cfg(loom)]
                let looked = !super::prim::unchecked_poll() && self.woken.load(Ordering::SeqCst);
                #[cfg(not(loom))]
                let looked = self.woken.load(Ordering::SeqCst);
                let timer = next_timer();
                let due = timer.is_some_and(|t| t <= Instant::now());
                let readied = match io {
                    _ if looked || due => 0,
                    Some(p) => {
                        r.polled.store(true, Ordering::Relaxed);
                        r.watcher_polls.store(true, Ordering::SeqCst);
                        let n = (p.poll)(timeout_ns(timer));
                        r.watcher_polls.store(false, Ordering::SeqCst);
                        n
                    }
                    None => {
                        sleep(timer);
                        0
                    }
                };
                r.watcher.store(ptr::null_mut(), Ordering::SeqCst);
                if self.woken.load(Ordering::Acquire) {
                    continue;
                }
                if readied > 0 {
                    return Wake::Polled;
                }
                if timer.is_some_and(|t| t <= Instant::now()) {
                    return Wake::Timers;
                }
                continue;
            }
            if io.is_some() && !r.watcher_polls.load(Ordering::SeqCst) {
                // The watcher sleeps on a timer, claimed before goroutines
                // waited on descriptors: it is made to look again, and
                // polls.
                let w = r.watcher.load(Ordering::SeqCst);
                // SAFETY: as in `timers_changed`.
                if let Some(w) = unsafe { w.as_ref() } {
                    w.nudge();
                }
            }
            sleep(None);
        }
    }

    /// Wakes the parker's thread (or makes its next block return at once).
    pub(crate) fn wake(&self) {
        self.woken.store(true, Ordering::SeqCst);
        self.thread.unpark();
        fence(Ordering::SeqCst);
        if ptr::eq(room().watcher.load(Ordering::SeqCst), self) {
            if let Some(p) = poller() {
                (p.wake)();
            }
        }
    }

    /// Whether a wake is pending (for [`super::sched_state`]).
    pub(crate) fn is_woken(&self) -> bool {
        self.woken.load(Ordering::SeqCst)
    }

    /// Makes the parker's thread look again at what it waits for, without
    /// a wake (a timer to watch appeared and no one watches).
    pub(crate) fn nudge(&self) {
        self.thread.unpark();
    }
}

/// Sleeps until unparked or `until`.
fn sleep(until: Option<Instant>) {
    #[cfg(not(loom))]
    match until {
        None => thread::park(),
        Some(t) => thread::park_timeout(t.saturating_duration_since(Instant::now())),
    }
    // (A loom model has no time: a model's timer is due at once or never.)
    #[cfg(loom)]
    {
        let _ = until;
        thread::park();
    }
}

/// Why [`Parker::block`] returned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wake {
    /// [`Parker::wake`] was called.
    Woken,
    /// Its poll of the network readied goroutines (the poller's count;
    /// some may only have been notified).
    Polled,
    /// The earliest timer is due: the caller runs the timers
    /// ([`run_timers`]).
    Timers,
}

/// What the scheduler needs of the network poller.
pub(crate) struct Poller {
    /// How many goroutines wait on descriptors.
    pub(crate) waiting: fn() -> usize,
    /// Readies what is ready, blocking up to the timeout (nanoseconds; -1:
    /// no limit, 0: not at all); how many it may have readied. Only a
    /// blocking poll takes a wake: one that does not block (a worker out
    /// of work, [`poll_now`]) leaves it for the watcher's poll, which may
    /// be blocked already or about to block (the check of
    /// `watcher_polls` before it is a hint, not a handshake).
    pub(crate) poll: fn(i64) -> usize,
    /// Makes a blocked `poll` return, or the next blocking one.
    pub(crate) wake: fn(),
}

/// Where the poller is registered and which parker blocks in it: one
/// per process; under loom one per model execution (`tests/park_loom.rs`).
struct Room {
    poller: AtomicPtr<Poller>,
    /// The parker that watches the poller and the timers, if any (at most
    /// one).
    watcher: AtomicPtr<Parker>,
    /// Each timer heap's earliest pending timer: nanoseconds after
    /// [`base`], or [`NO_TIMER`] (one cache line each: each heap's owner
    /// writes its own).
    next_timer: [Slot; TIMER_HEAPS],
    /// How many of `next_timer` a heap has written (the rest hold
    /// [`NO_TIMER`]): looking for due timers reads only those.
    heaps_used: AtomicUsize,
    /// Whether the watcher is in the network poll (not sleeping on a
    /// timer).
    watcher_polls: AtomicBool,
    /// Set by every poll, cleared by sysmon's look ([`poll_if_unpolled`]).
    polled: AtomicBool,
}

/// "No timer" in a heap's published deadline.
pub(crate) const NO_TIMER: u64 = u64::MAX;

/// How many timer heaps there are (a processor uses the one its id picks
/// modulo this; see `timer.rs`). Under loom two: enough for a model of
/// two heaps publishing at once, few enough to check exhaustively.
#[cfg(not(loom))]
pub(crate) const TIMER_HEAPS: usize = 16;
#[cfg(loom)]
pub(crate) const TIMER_HEAPS: usize = 2;

/// One heap's published deadline, alone in its cache line.
#[repr(align(64))]
struct Slot(AtomicU64);

#[cfg(not(loom))]
static ROOM: Room = Room {
    poller: AtomicPtr::new(ptr::null_mut()),
    watcher: AtomicPtr::new(ptr::null_mut()),
    next_timer: [const { Slot(AtomicU64::new(NO_TIMER)) }; TIMER_HEAPS],
    heaps_used: AtomicUsize::new(0),
    watcher_polls: AtomicBool::new(false),
    polled: AtomicBool::new(false),
};

#[cfg(not(loom))]
fn room() -> &'static Room {
    &ROOM
}

#[cfg(loom)]
loom::lazy_static! {
    static ref ROOM: Room = Room {
        poller: AtomicPtr::new(ptr::null_mut()),
        watcher: AtomicPtr::new(ptr::null_mut()),
        next_timer: std::array::from_fn(|_| Slot(AtomicU64::new(NO_TIMER))),
        heaps_used: AtomicUsize::new(0),
        watcher_polls: AtomicBool::new(false),
        polled: AtomicBool::new(false),
    };
}

#[cfg(loom)]
fn room() -> &'static Room {
    &ROOM
}

/// Makes idle workers wait in `p` while goroutines wait on descriptors.
pub(crate) fn set_poller(p: &'static Poller) {
    room()
        .poller
        .store((p as *const Poller).cast_mut(), Ordering::Release);
}

fn poller() -> Option<&'static Poller> {
    // SAFETY: only set_poller stores here, a &'static.
    unsafe { room().poller.load(Ordering::Acquire).as_ref() }
}

/// How many goroutines wait on descriptors (the deadlock check: the
/// poller may still wake them).
pub(crate) fn io_waiters() -> usize {
    poller().map_or(0, |p| (p.waiting)())
}

/// For a worker that ran out of work: readies the goroutines whose
/// descriptors are ready, without blocking, unless the watcher is blocked
/// in the poller (it readies them itself); whether any were.
pub(crate) fn poll_now() -> bool {
    let r = room();
    match poller() {
        Some(p) if (p.waiting)() > 0 && !r.watcher_polls.load(Ordering::Relaxed) => {
            r.polled.store(true, Ordering::Relaxed);
            (p.poll)(0) > 0
        }
        _ => false,
    }
}

/// How long the network may go unpolled while goroutines wait on it
/// before sysmon polls: Go's 10 ms. Shorter, sysmon polls beside busy
/// workers about to poll themselves: what it readies goes to the global
/// queue rather than to the worker that would run it at once, and its
/// rounds stay 20 µs apart while it finds something, a third thread
/// taking the cores again.
pub(crate) const UNPOLLED: Duration = Duration::from_millis(10);

/// Sysmon's look at the network, each round: when no worker has polled
/// since `*last` (the last time a look saw a poll, or polled) and that was
/// [`UNPOLLED`] ago, polls without blocking; what it readies goes to the
/// global queue. With every processor busy and none running out of work
/// (goroutines that compute, each preempted in turn), no worker polls and
/// none blocks in the poller: without this, goroutines whose descriptors
/// became ready would wait until one did. Whether it readied any.
pub(crate) fn poll_if_unpolled(last: &mut Instant, now: Instant) -> bool {
    let r = room();
    if r.polled.swap(false, Ordering::Relaxed) || r.watcher_polls.load(Ordering::Relaxed) {
        *last = now;
        return false;
    }
    if now.saturating_duration_since(*last) < UNPOLLED {
        return false;
    }
    *last = now;
    match poller() {
        Some(p) if (p.waiting)() > 0 => (p.poll)(0) > 0,
        _ => false,
    }
}

/// Whether a processor is idle, as the scheduler says
/// ([`set_processor_idle`]; until it does, yes).
fn processor_idle() -> bool {
    PROCESSOR_IDLE.get().is_none_or(|f| f())
}

/// How a parker learns whether a processor is idle (the scheduler's:
/// it keeps the count).
pub(crate) fn set_processor_idle(f: fn() -> bool) {
    let _ = PROCESSOR_IDLE.set(f);
}

/// In a forked child: no worker watches the poller and the timers.
pub(crate) fn forget_watcher_after_fork() {
    room().watcher.store(ptr::null_mut(), Ordering::SeqCst);
    room().watcher_polls.store(false, Ordering::SeqCst);
}

/// The watcher's poll timeout until `until` (nanoseconds; -1: none). At
/// least 1: the watcher's poll blocks, and so takes the wake meant for it.
fn timeout_ns(until: Option<Instant>) -> i64 {
    match until {
        None => -1,
        Some(t) => i64::try_from(t.saturating_duration_since(Instant::now()).as_nanos())
            .unwrap_or(i64::MAX)
            .max(1),
    }
}

// ---- timers ------------------------------------------------------------

/// The instant timer deadlines are counted from.
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// Nanoseconds from [`base`] to now: the clock timer deadlines are kept
/// in. The calling thread keeps what it read ([`LAST_NOW`]).
pub(crate) fn now_ns() -> u64 {
    let ns = u64::try_from(Instant::now().saturating_duration_since(base()).as_nanos())
        .unwrap_or(NO_TIMER - 1);
    LAST_NOW.set(ns);
    ns
}

thread_local! {
    /// What [`now_ns`] last read on this thread: a time that has passed,
    /// so a deadline before it is due without reading the clock again
    /// (a worker behind on its timers reads it once per batch, not once
    /// per scheduling point).
    static LAST_NOW: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The instant `ns` after [`base`].
fn instant_of(ns: u64) -> Instant {
    base() + std::time::Duration::from_nanos(ns)
}

/// The earliest deadline any heap published, or [`NO_TIMER`].
fn earliest_ns() -> u64 {
    let r = room();
    #[cfg(not(loom))]
    let used = r.heaps_used.load(Ordering::SeqCst).min(TIMER_HEAPS);
    // (A model's heaps are few: each is read, so that loom checks every
    // order of the loads.)
    #[cfg(loom)]
    let used = TIMER_HEAPS;
    r.next_timer[..used]
        .iter()
        .map(|s| s.0.load(Ordering::SeqCst))
        .min()
        .unwrap_or(NO_TIMER)
}

/// The earliest pending timer, as the timer heaps last published it.
pub(crate) fn next_timer() -> Option<Instant> {
    match earliest_ns() {
        NO_TIMER => None,
        ns => Some(instant_of(ns)),
    }
}

/// Timer heap `heap` publishes its earliest deadline (nanoseconds after
/// [`base`], or [`NO_TIMER`]), under its lock, at every change.
pub(crate) fn set_next_timer(heap: usize, ns: u64) {
    let r = room();
    if r.heaps_used.load(Ordering::Relaxed) <= heap {
        r.heaps_used.fetch_max(heap + 1, Ordering::SeqCst);
    }
    r.next_timer[heap].0.store(ns, Ordering::SeqCst);
}

/// The deadline heap `heap` last published, or [`NO_TIMER`].
pub(crate) fn heap_deadline(heap: usize) -> u64 {
    room().next_timer[heap].0.load(Ordering::SeqCst)
}

/// Asks the next worker at a scheduling point to run every heap's due
/// timers, not only its processor's (sysmon, which made a goroutine yield
/// for a timer that may be on another processor's heap).
pub(crate) fn want_all_timers() {
    ALL_WANTED.store(true, Ordering::Relaxed);
}

// (A hint outside the handshake: std's atomic under loom too.)
static ALL_WANTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// At a worker's scheduling point, holding processor `p`: fires what is
/// due on `p`'s heap, and with `all` (or when sysmon asked,
/// [`want_all_timers`]) on every heap. Whether any fired. Reads the heaps'
/// published deadlines first: without a due one it takes no lock and, with
/// no timer pending, does not read the clock.
pub(crate) fn check_timers(p: usize, all: bool) -> bool {
    let all = all || ALL_WANTED.load(Ordering::Relaxed);
    let at = if all {
        ALL_WANTED.store(false, Ordering::Relaxed);
        earliest_ns()
    } else {
        heap_deadline(p % TIMER_HEAPS)
    };
    if at == NO_TIMER {
        return false;
    }
    let last = LAST_NOW.get();
    let now = if at <= last { last } else { now_ns() };
    at <= now && RUN_TIMERS.get().is_some_and(|f| f(Some(p), all, now))
}

/// What [`set_run_timers`] registered.
type RunTimers = fn(Option<usize>, bool, u64) -> bool;

static RUN_TIMERS: OnceLock<RunTimers> = OnceLock::new();
static KICK_IDLE: OnceLock<fn()> = OnceLock::new();
static PROCESSOR_IDLE: OnceLock<fn() -> bool> = OnceLock::new();

/// The timer heaps' "fire what is due at `now`" (whether anything was),
/// called by workers: registered by the heaps, which this file does not
/// name. Its arguments: the caller's processor (its heap first), whether
/// every heap's timers are wanted (without a processor, every heap's are).
pub(crate) fn set_run_timers(f: RunTimers) {
    let _ = RUN_TIMERS.set(f);
}

/// Under loom: the time of the watcher's deadline came (`model.rs`'s
/// `time_passes`): its timed sleep ends, as the kernel would end it.
#[cfg(loom)]
pub(crate) fn end_timed_sleep() {
    fence(Ordering::SeqCst);
    let w = room().watcher.load(Ordering::SeqCst);
    // SAFETY: as in `timers_changed`.
    if let Some(w) = unsafe { w.as_ref() } {
        w.nudge();
    }
}

/// Fires the timers that are due on every heap (an idle worker); whether
/// any were.
pub(crate) fn run_timers() -> bool {
    RUN_TIMERS.get().is_some_and(|f| f(None, true, now_ns()))
}

/// How to make an idle worker look at the timers when none watches them
/// (the scheduler's: it knows its parked workers).
pub(crate) fn set_kick_idle(f: fn()) {
    let _ = KICK_IDLE.set(f);
}

/// A worker leaves the idle workers: woken with a processor (every
/// [`Parker::block`] that returns [`Wake::Woken`]), taking one to run what
/// its timers or poll readied, or ending (its locked goroutine exited).
/// The parkers that saw it watching sleep without a deadline, and a kick
/// ([`timers_changed`]) it took while being handed a processor reached no
/// one else: if timers are pending or goroutines wait on descriptors and
/// no one watches, an idle worker is made to look (or started). A worker
/// that claims the watch stores `watcher` and then reads the deadlines;
/// this one stored its leaving (`watcher` cleared, or its processor
/// taken) and reads `watcher` after a SeqCst fence: either it sees the
/// new watcher or that one's reads see what this one saw.
pub(crate) fn pass_watch() {
    fence(Ordering::SeqCst);
    let r = room();
    if r.watcher.load(Ordering::SeqCst).is_null()
        && (earliest_ns() != NO_TIMER || poller().is_some_and(|p| (p.waiting)() > 0))
    {
        if let Some(kick) = KICK_IDLE.get() {
            kick();
        }
    }
}

/// A timer became the earliest (after [`set_next_timer`]): the watcher
/// looks again at when to return; with no watcher, an idle worker is
/// made to look (or started).
pub(crate) fn timers_changed() {
    fence(Ordering::SeqCst);
    let w = room().watcher.load(Ordering::SeqCst);
    // SAFETY: parkers live as long as their workers, which are never
    // freed (a model's are kept alive by its threads).
    if let Some(w) = unsafe { w.as_ref() } {
        w.nudge();
        if let Some(p) = poller() {
            (p.wake)();
        }
        return;
    }
    if let Some(kick) = KICK_IDLE.get() {
        kick();
    }
}

/// The watch's state, for [`super::sched_state`]: which parker watches
/// (its address), whether it polls, and each used heap's published
/// deadline relative to now (ns; negative: past).
pub(crate) fn watch_state() -> String {
    let r = room();
    let now = now_ns() as i128;
    let used = r.heaps_used.load(Ordering::SeqCst).min(TIMER_HEAPS);
    let deadlines: Vec<String> = r.next_timer[..used]
        .iter()
        .map(|s| match s.0.load(Ordering::SeqCst) {
            NO_TIMER => "-".to_string(),
            ns => (ns as i128 - now).to_string(),
        })
        .collect();
    format!(
        "watcher={:p} watcher_polls={} io_waiters={} heap_deadlines=[{}]",
        r.watcher.load(Ordering::SeqCst),
        r.watcher_polls.load(Ordering::SeqCst),
        io_waiters(),
        deadlines.join(" "),
    )
}
