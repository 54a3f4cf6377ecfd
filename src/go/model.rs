//! The parts of the channel code that `tests/chan_loom.rs` runs under
//! loom (`--cfg loom` only): real channels ([`RawChan`]: its lock, queues
//! of waiters, send, receive and close) of `u64` elements, and the real
//! `select`, used from loom threads. Under loom a waiting thread blocks
//! in `loom::thread::park` and its waker unparks it (`prim.rs`), so loom
//! sees every wait, and reports a thread that is never woken as a
//! deadlock.
//!
//! [`set_bug1`] brings back bug 1 for the test that checks loom finds it:
//! a select that cleans up took its waiter out of both queues of a
//! channel, and a queue took a waiter for its own when it had a
//! predecessor (in whatever queue) or headed it.
//!
//! [`Poll`] is a poller descriptor record with no descriptor behind it
//! (`tests/netpoll_loom.rs`), with its pins, its close's claim and its
//! open's two steps; [`set_unclaimed_close`] brings back a close that
//! retires the record after letting its lock go; [`set_unchecked_phase`]
//! a record that is free or being opened answering to its next handle;
//! [`set_lost_wakeup`] a readiness that overwrites the parked waiter
//! instead of readying it.
//!
//! [`World`] is the scheduler's stop-the-world handshake
//! (`tests/stw_loom.rs`); [`set_two_stoppers`] brings back a stopper
//! that does not wait for another to finish. With [`SyscallP`]'s
//! `stop_began` and `claim_for_stop` it is also the handshake between a
//! stop and a worker entering a system call; [`set_no_gcwait`] brings
//! back an entry that does not look for a stop.
//!
//! [`Parker`] is an idle worker's real parker (`park.rs`), blocking in a
//! poller with no descriptors behind it ([`install_poller`],
//! [`poll_event`]) for `tests/park_loom.rs`; [`set_unchecked_poll`] brings
//! back a parker that claims the poll without looking at its wake flag
//! again; [`time_passes`] makes a published deadline due as time would,
//! and [`set_unpassed_watch`] brings back a watcher that leaves the watch,
//! woken, without passing it on. [`poll_now`] is a worker out of work
//! polling without blocking; [`set_nonblocking_takes_wake`] brings back a
//! poll that takes the watcher's wake although it does not block.
//!
//! [`TraceProducer`] is a thread's buffer of the execution trace
//! (`prof/trace.rs`) with its one appender; the writer empties it holding
//! [`trace_drainer`]'s right, for `tests/trace_loom.rs`;
//! [`set_early_give_back`] brings back a writer that gives the buffer's
//! slots back before it reads them.
//!
//! [`SyscallP`] is a processor's status and system-call handshake with
//! the real transitions of `syscall.rs` (a [`SyscallWorker`]'s enter and
//! leave, sysmon's retake, a stopper's take), and [`Sleeper`] sysmon's
//! real wait (`sysmon.rs`), for `tests/syscall_loom.rs`;
//! [`set_blind_leave`] brings back a worker that leaves its call without
//! looking for a taker, [`set_late_announce`] a sysmon that looks before
//! it announces its wait.
//!
//! [`PreemptRequest`] is a worker's real preemption request
//! (`async_preempt.rs`) for `tests/preempt_loom.rs`.
//!
//! [`Parked`] is a goroutine as a goroutine dump reads it (`dump.rs`'s
//! sequence-lock read, with the worker's and the goroutine's halves), for
//! `tests/dump_loom.rs`; `Parked::new(false)` brings back a switch out
//! that does not count.
//!
//! [`Sleep`] is a goroutine's sleep in the real timer heap, which
//! [`fire_timers`] fires as a parked worker does, and [`timers_pending`]
//! is what the deadlock check asks of the timers, for
//! `tests/timer_loom.rs`; [`set_uncounted_firing`] brings back a firing
//! that the check does not see.
//!
//! [`RunQueue`] is a processor's local run queue (`runq.rs`), four slots
//! of tokens, for `tests/runq_loom.rs`; [`set_late_copy`] brings back a
//! thief that takes its half before it reads the slots.
//!
//! [`CpuRing`] is the CPU profile's sample ring (`prof/ring.rs`), which
//! signal handlers write and one reader drains, for `tests/ring_loom.rs`;
//! [`set_ring_early_publish`] brings back a writer that publishes its
//! record before filling it.
//!
//! [`Lock`] is a channel's real lock (`chanlock.rs`), sleeping on a loom
//! model of a futex, for `tests/lock_loom.rs` (`Lock::new(true)`: every
//! unlock with a sleeper hands the lock over); [`set_lost_handoff`]
//! brings back an unlock that frees the lock without waking its sleeper,
//! [`set_stranded_handoff`] a fair unlock that leaves the lock handed over
//! when it woke no one.

use super::chan::{ChanError, RawChan, Received};
use super::prim::{AtomicBool, AtomicUsize};
use super::select::{self, Case as RawCase, Chosen, Dir};
pub use crate::prof::ring::{set_early_publish as set_ring_early_publish, Ring as CpuRing};
pub use crate::prof::trace::{
    drainer as trace_drainer, set_early_give_back, set_overflow_first, Event as TraceEvent,
    Kind as TraceKind, Producer as TraceProducer,
};
use std::sync::atomic::Ordering;

pub use super::prim::{
    set_blind_leave, set_bug1, set_late_announce, set_late_copy, set_lost_handoff, set_lost_wakeup,
    set_no_gcwait, set_nonblocking_takes_wake, set_stranded_handoff, set_two_stoppers,
    set_unchecked_phase, set_unchecked_poll, set_unclaimed_close, set_uncounted_firing,
    set_unpassed_watch,
};

/// A channel's real lock (`chanlock.rs`).
pub struct Lock(super::chanlock::ChanLock);

impl Lock {
    /// `fair`: every unlock with a sleeper hands the lock over (else none
    /// does).
    pub fn new(fair: bool) -> Lock {
        Lock(super::chanlock::ChanLock::with_fair_unparks(fair, false))
    }

    /// As [`new`](Self::new), in the state a forked child finds a lock
    /// whose fair unlock was under way in the parent: handed over, with
    /// no holder and no thread asleep.
    pub fn forked(fair: bool) -> Lock {
        Lock(super::chanlock::ChanLock::with_fair_unparks(fair, true))
    }

    pub fn lock(&self) {
        self.0.lock();
    }

    /// # Safety
    /// The caller holds the lock.
    pub unsafe fn unlock(&self) {
        // SAFETY: forwarded.
        unsafe { self.0.unlock() };
    }

    pub fn is_locked(&self) -> bool {
        self.0.is_locked()
    }

    pub fn has_holder(&self) -> bool {
        self.0.has_holder()
    }
}

/// A processor's real local run queue (`runq.rs`) of four slots, holding
/// tokens (non-zero numbers, never dereferenced) in place of goroutines.
/// Its holder is the one thread that calls [`push`](Self::push),
/// [`pop`](Self::pop) and [`pop_and_peek`](Self::pop_and_peek), and
/// that steals into it; any thread steals from it.
pub struct RunQueue(super::runq::RunQueue<u8, 4>);

impl RunQueue {
    /// An empty ring.
    #[allow(clippy::new_without_default)]
    pub fn new() -> RunQueue {
        RunQueue(super::runq::RunQueue::new())
    }

    /// The holder queues `token`; a full ring's older half and `token` go
    /// to `spilled`.
    pub fn push(&self, token: usize, spilled: &mut Vec<usize>) {
        // SAFETY: tokens are never dereferenced; the model's holder is the
        // caller (a broken contract loses or repeats tokens, which the
        // model checks, and nothing else).
        unsafe { self.0.push(token as *mut u8, |t| spilled.push(t as usize)) };
    }

    /// The holder queues `tokens` together, oldest first; where the ring
    /// fills, its older half goes to `spilled`.
    pub fn push_batch(&self, tokens: &[usize], spilled: &mut Vec<usize>) {
        let tokens: Vec<*mut u8> = tokens.iter().map(|&t| t as *mut u8).collect();
        // SAFETY: as for push.
        unsafe { self.0.push_batch(&tokens, |t| spilled.push(t as usize)) };
    }

    /// The holder takes the oldest token.
    pub fn pop(&self) -> Option<usize> {
        // SAFETY: as above.
        unsafe { self.0.pop() }.map(|t| t as usize)
    }

    /// The holder takes the oldest token and sees the two after it (0:
    /// none).
    pub fn pop_and_peek(&self) -> Option<(usize, [usize; 2])> {
        // SAFETY: as above.
        unsafe { self.0.pop_and_peek() }
            .map(|(t, [next, after])| (t as usize, [next as usize, after as usize]))
    }

    /// `into`'s holder steals half of this ring into `into`, and gets one.
    pub fn steal_into(&self, into: &RunQueue) -> Option<usize> {
        // SAFETY: as above.
        unsafe { self.0.steal_into(&into.0) }.map(|t| t as usize)
    }

    /// Tokens queued (a hint to anyone but the holder).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none are queued.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The scheduler's real stop-the-world handshake (`stw.rs`) for
/// `tests/stw_loom.rs`: the model plays the scheduler lock and the
/// processors around it.
pub struct World(super::stw::World);

impl World {
    /// A world that runs.
    #[allow(clippy::new_without_default)]
    pub fn new() -> World {
        World(super::stw::World::new())
    }

    /// Whether a stop is asked (a scheduling point's check).
    pub fn waiting(&self) -> bool {
        self.0.waiting()
    }

    /// Becomes the one stopper, waiting for another to finish.
    pub fn acquire(&self) {
        self.0.acquire()
    }

    /// The stopper is done.
    pub fn release(&self) {
        self.0.release()
    }

    /// A stop begins: `running` processors to wait for.
    pub fn begin(&self, running: usize) {
        self.0.begin(running)
    }

    /// A processor stopped for the stopper.
    pub fn stopped_one(&self) {
        self.0.stopped_one()
    }

    /// The stopper waits for every processor.
    pub fn wait(&self) {
        self.0.wait()
    }

    /// The world runs again.
    pub fn end(&self) {
        self.0.end()
    }
}

/// A send found the channel closed (Go's `send on closed channel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendOnClosed;

/// A channel of `u64`s, unbuffered or with a buffer of `cap`.
pub struct Chan {
    raw: RawChan,
    /// The buffer's memory (`raw` points into it; it never moves).
    _buf: Box<[u64]>,
}

impl Chan {
    /// `make(chan uint64, cap)`.
    pub fn new(cap: usize) -> Chan {
        let mut buf = vec![0u64; cap].into_boxed_slice();
        let p = if cap == 0 {
            std::ptr::NonNull::<u64>::dangling().as_ptr()
        } else {
            buf.as_mut_ptr()
        };
        let raw = RawChan::make(8, 8, false, cap, |_| Some(p.cast()))
            .unwrap_or_else(|e| panic!("make(chan uint64, {cap}): {}", e.message()));
        Chan { raw, _buf: buf }
    }

    /// `c <- v`, blocking.
    pub fn send(&self, v: u64) -> Result<(), SendOnClosed> {
        // SAFETY: v is 8 readable bytes, live until send returns.
        match unsafe { self.raw.send((&v as *const u64).cast(), true) } {
            Ok(true) => Ok(()),
            Ok(false) => unreachable!("a blocking send completes"),
            Err(ChanError::SendOnClosed) => Err(SendOnClosed),
            Err(e) => unreachable!("send: {e:?}"),
        }
    }

    /// `v, ok := <-c`, blocking: `None` once closed and drained (the zero
    /// value was stored, which this checks).
    pub fn recv(&self) -> Option<u64> {
        let mut v = u64::MAX;
        // SAFETY: v is 8 writable bytes, live until recv returns.
        match unsafe { self.raw.recv((&mut v as *mut u64).cast(), true) } {
            Received::Value => Some(v),
            Received::Closed => {
                assert_eq!(v, 0, "a receive on a closed channel stores the zero value");
                None
            }
            Received::WouldBlock => unreachable!("a blocking receive completes"),
        }
    }

    /// `close(c)`. Panics on a closed channel.
    pub fn close(&self) {
        self.raw.close().expect("close of closed channel");
    }

    /// `len(c)`.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether `len(c) == 0`.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Asserts that both queues are consistent (first to last along the
    /// links, each waiter recording the queue) and empty.
    pub fn assert_idle(&self) {
        self.raw.assert_idle();
    }
}

/// A case of [`select`].
#[derive(Clone, Copy)]
pub enum Case<'c> {
    /// `case c <- v`.
    Send(&'c Chan, u64),
    /// `case v, ok := <-c`.
    Recv(&'c Chan),
}

/// A blocking select over `cases` (polled in their order): the index of
/// the case that completed and, for a receive, the value (`None`: the
/// channel was closed). A send case that found its channel closed is the
/// error.
pub fn select(cases: &[Case<'_>]) -> Result<(usize, Option<u64>), SendOnClosed> {
    let mut slots: Vec<u64> = cases
        .iter()
        .map(|c| match *c {
            Case::Send(_, v) => v,
            Case::Recv(_) => u64::MAX,
        })
        .collect();
    let raw: Vec<RawCase> = cases
        .iter()
        .zip(slots.iter_mut())
        .map(|(c, slot)| {
            let (chan, dir) = match *c {
                Case::Send(c, _) => (c, Dir::Send),
                Case::Recv(c) => (c, Dir::Recv),
            };
            RawCase {
                chan: &chan.raw,
                dir,
                elem: (slot as *mut u64).cast(),
            }
        })
        .collect();
    // SAFETY: the channels are borrowed and the slots live until select
    // returns; each slot has 8 bytes, the channels' element size.
    let chosen = unsafe { select::select(&raw, true) };
    match chosen {
        Ok(Chosen::Case { index, ok }) => match cases[index] {
            Case::Send(..) => Ok((index, None)),
            Case::Recv(_) if ok => Ok((index, Some(slots[index]))),
            Case::Recv(_) => {
                assert_eq!(slots[index], 0, "a closed case stores the zero value");
                Ok((index, None))
            }
        },
        Ok(Chosen::Default) => unreachable!("a blocking select completes a case"),
        Err(ChanError::SendOnClosed) => Err(SendOnClosed),
        Err(e) => unreachable!("select: {e:?}"),
    }
}

// ---- the poller's waits ------------------------------------------------------

/// Why a poller wait ended without readiness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollEnd {
    /// Closed (unblocked).
    Closing,
    /// The deadline fired.
    Timeout,
}

/// What a close of a [`Poll`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// It retired the record.
    Retired,
    /// An operation pinned the record: its `unpin` retires it.
    LeftToOperation,
    /// Refused: the record was closed already.
    Refused,
}

/// A poller descriptor record (`netpoll::PollDesc`) with no descriptor
/// behind it: readiness, deadline expiry and close are called directly,
/// as the poller, the timer and a closing goroutine call them.
pub struct Poll(super::netpoll::PollDesc);

fn mode(read: bool) -> super::netpoll::Mode {
    if read {
        super::netpoll::Mode::Read
    } else {
        super::netpoll::Mode::Write
    }
}

impl Poll {
    /// A registered record, both directions empty.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Poll {
        Poll(super::netpoll::PollDesc::for_model())
    }

    /// Waits for readiness in one direction (`read` or write).
    pub fn wait(&self, read: bool) -> Result<(), PollEnd> {
        self.0.wait(0, mode(read)).map_err(|e| match e {
            super::netpoll::PollError::Closing => PollEnd::Closing,
            super::netpoll::PollError::Timeout => PollEnd::Timeout,
            super::netpoll::PollError::BadHandle => {
                panic!("the model's record has no other generation")
            }
        })
    }

    /// The poller saw readiness.
    pub fn ready(&self, read: bool) {
        self.0.ready(mode(read));
    }

    /// A close: every waiter is readied with `Closing`.
    pub fn close(&self) {
        self.0.unblock_all(0).unwrap();
    }

    /// A deadline armed as timer `id` (0: cleared).
    pub fn arm(&self, read: bool, id: u64) {
        self.0.arm_for_model(mode(read), id);
    }

    /// Timer `id` fired.
    pub fn expire(&self, read: bool, id: u64) {
        self.0.expire(0, mode(read), id);
    }

    /// No waiter is left in a slot.
    pub fn assert_no_waiter(&self) {
        self.0.assert_no_waiter();
    }

    /// An operation starts on the descriptor (`netpoll::pin`): false once
    /// the record is closing.
    pub fn pin(&self) -> bool {
        self.0.pin(0).is_ok()
    }

    /// The operation ends: true if it ended the close it held up (the
    /// record retired by this call).
    pub fn unpin(&self) -> bool {
        self.0.unpin().is_some()
    }

    /// A close (`netpoll::close`): its waiters unblocked, then the close
    /// claimed.
    pub fn claim_close(&self) -> Claim {
        self.claim_close_of(0)
    }

    /// A close of the handle with `generation` (a guess, perhaps).
    pub fn claim_close_of(&self, generation: u32) -> Claim {
        if self.0.unblock_all(generation).is_err() {
            return Claim::Refused;
        }
        match self.0.claim_close(generation, super::netpoll::CloseFd::No) {
            Ok(Some(_)) => Claim::Retired,
            Ok(None) => Claim::LeftToOperation,
            Err(_) => Claim::Refused,
        }
    }

    /// A free record, as `netpoll::open` finds one on the free list (its
    /// next registration's generation is 0).
    pub fn free() -> Poll {
        Poll(super::netpoll::PollDesc::free_for_model())
    }

    /// `netpoll::open`'s two steps on the record: taken (the handle
    /// chosen, the number registered under it), then handed out; the
    /// generation handed out.
    pub fn open(&self) -> u32 {
        let generation = self.begin_open();
        self.finish_open();
        generation
    }

    /// `netpoll::open`'s first step: the record taken, the handle (its
    /// generation returned) chosen; the number is registered under it
    /// after this, so readiness may come from here on.
    pub fn begin_open(&self) -> u32 {
        super::netpoll::PollDesc::generation_of(self.0.begin_open(-1))
    }

    /// `netpoll::open`'s last step: the handle handed out.
    pub fn finish_open(&self) {
        self.0.finish_open();
    }

    /// The generation of the registration handed out, if one is live.
    pub fn live_generation(&self) -> Option<u32> {
        self.0.live_generation()
    }

    /// Whether the record still has its registration (no close retired
    /// it).
    pub fn registered(&self) -> bool {
        self.0.is_generation(0)
    }
}

/// An idle worker's parker (`park.rs`), made on the thread that blocks
/// on it.
pub struct Parker(super::park::Parker);

/// Why [`Parker::block`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// [`Parker::wake`] was called.
    Woken,
    /// Its poll returned events ([`poll_event`]).
    Polled,
    /// A timer is due ([`set_timer`]).
    Timers,
}

impl Parker {
    /// The calling thread's parker (the model's scheduler nudges it while
    /// it blocks, when a timer needs a watcher, see [`set_timer`]).
    pub fn for_current() -> Parker {
        super::park::set_kick_idle(|| {
            for t in FAKE.idle.lock().unwrap().iter() {
                t.unpark();
            }
        });
        super::park::set_processor_idle(|| FAKE.processor_idle.load(Ordering::SeqCst));
        Parker(super::park::Parker::for_current())
    }

    /// Blocks until woken, or until its poll of the model's poller (if it
    /// is the one polling) returned events. Meanwhile the model's
    /// scheduler counts it among its parked workers (the ones a kick
    /// nudges).
    pub fn block(&self) -> Blocked {
        let me = loom::thread::current();
        let id = me.id();
        FAKE.idle.lock().unwrap().push(me);
        let wake = self.0.block();
        FAKE.idle.lock().unwrap().retain(|t| t.id() != id);
        match wake {
            super::park::Wake::Woken => Blocked::Woken,
            super::park::Wake::Polled => Blocked::Polled,
            super::park::Wake::Timers => Blocked::Timers,
        }
    }

    /// Wakes it (or makes its next block return).
    pub fn wake(&self) {
        self.0.wake();
    }
}

/// The model's poller: how many goroutines "wait" on descriptors, events
/// not yet polled, a break (the poller's eventfd), and the thread in the
/// poll. One per execution.
struct FakePoll {
    waiting: AtomicUsize,
    events: AtomicUsize,
    broken: AtomicBool,
    polling: loom::sync::Mutex<Option<loom::thread::Thread>>,
    /// The model's parked workers (in [`Parker::block`]), which the
    /// scheduler's kick nudges (all of them: the real kick nudges one,
    /// whichever).
    idle: loom::sync::Mutex<Vec<loom::thread::Thread>>,
    /// Whether the model's scheduler has an idle processor (see
    /// [`set_processor_idle`]).
    processor_idle: AtomicBool,
}

loom::lazy_static! {
    static ref FAKE: FakePoll = FakePoll {
        waiting: AtomicUsize::new(0),
        events: AtomicUsize::new(0),
        broken: AtomicBool::new(false),
        polling: loom::sync::Mutex::new(None),
        idle: loom::sync::Mutex::new(Vec::new()),
        processor_idle: AtomicBool::new(true),
    };
}

static FAKE_POLLER: super::park::Poller = super::park::Poller {
    waiting: || FAKE.waiting.load(Ordering::SeqCst),
    poll: fake_poll,
    wake: || {
        FAKE.broken.store(true, Ordering::SeqCst);
        if let Some(t) = FAKE.polling.lock().unwrap().clone() {
            t.unpark();
        }
    },
};

/// The model's `epoll_wait`: returns at a break (0) or with the events
/// that arrived (their number), else blocks (or returns 0 at once for a
/// zero timeout). A poll that does not block leaves the break for the
/// one that does (`park::Poller::poll`), and is not the thread a break
/// unparks.
fn fake_poll(timeout_ns: i64) -> usize {
    let blocking = timeout_ns != 0;
    if blocking {
        *FAKE.polling.lock().unwrap() = Some(loom::thread::current());
    }
    let takes_break = blocking || super::prim::nonblocking_takes_wake();
    let n = loop {
        // (Loads, then stores: loom 0.7 reports false deadlocks for a
        // swap before a park. Only a polling thread clears these.)
        if takes_break && FAKE.broken.load(Ordering::SeqCst) {
            FAKE.broken.store(false, Ordering::SeqCst);
            break 0;
        }
        let n = FAKE.events.load(Ordering::SeqCst);
        if n > 0 {
            FAKE.events.fetch_sub(n, Ordering::SeqCst);
            break n;
        }
        if !blocking {
            break 0;
        }
        loom::thread::park();
    };
    if blocking {
        *FAKE.polling.lock().unwrap() = None;
    }
    n
}

/// A worker out of work polls the network without blocking
/// (`park::poll_now`, as `find_runnable` does); whether it readied any.
pub fn poll_now() -> bool {
    super::park::poll_now()
}

/// Makes idle parkers block in the model's poller, as if `waiting`
/// goroutines waited on descriptors.
pub fn install_poller(waiting: usize) {
    FAKE.waiting.store(waiting, Ordering::SeqCst);
    super::park::set_poller(&FAKE_POLLER);
}

/// Whether the model's scheduler has an idle processor (at the start of
/// each execution it has): without one, a parker does not block in the
/// poller. A processor that becomes idle is, in the real scheduler,
/// followed by its worker's block; a model does the same.
pub fn set_processor_idle(idle: bool) {
    FAKE.processor_idle.store(idle, Ordering::SeqCst);
}

/// A descriptor becomes ready: the poll in progress, or the next one,
/// returns it.
pub fn poll_event() {
    FAKE.events.fetch_add(1, Ordering::SeqCst);
    if let Some(t) = FAKE.polling.lock().unwrap().clone() {
        t.unpark();
    }
}

/// A timer becomes the earliest of timer heap 0, due at once (`due`) or
/// in an hour (a model has no time), as the heap publishes it.
pub fn set_timer(due: bool) {
    set_timer_on(0, due);
}

/// As [`set_timer`], on timer heap `heap` (0 or 1: a model has two).
pub fn set_timer_on(heap: usize, due: bool) {
    let now = super::park::now_ns();
    let at = if due { now } else { now + 3_600_000_000_000 };
    super::park::set_next_timer(heap, at);
    super::park::timers_changed();
}

/// The time of heap `heap`'s earliest timer comes (a model has no clock):
/// its published deadline becomes due, with no notification (time passing
/// tells no one), and the watcher's sleep until that deadline ends, as
/// the kernel ends a sleep with a timeout. A parker asleep without a
/// deadline is not woken.
pub fn time_passes(heap: usize) {
    super::park::set_next_timer(heap, super::park::now_ns());
    super::park::end_timed_sleep();
}

/// A goroutine's sleep (`timer.rs`'s `sleep`) for `tests/timer_loom.rs`:
/// its waiter, armed on timer heap 0 and due at once, in the real heap.
/// The thread that arms it is the one its firing wakes.
pub struct Sleep(Box<super::wait::Waiter>);

impl Sleep {
    /// Arms a sleep that is due at once.
    #[allow(clippy::new_without_default)]
    pub fn arm() -> Sleep {
        let w = Box::new(super::wait::Waiter::new(std::ptr::null_mut()));
        super::timer::arm_due_sleep(&w);
        Sleep(w)
    }

    /// Whether its firing readied it: what the deadlock check sees as a
    /// queued goroutine.
    pub fn readied(&self) -> bool {
        self.0.is_done()
    }

    /// Waits until its firing readies it.
    pub fn wait(&self) {
        self.0.wait("sleep");
    }
}

/// A parked worker fires the due timers (`park::run_timers`); whether
/// any fired.
pub fn fire_timers() -> bool {
    super::timer::fire_as_parked()
}

/// A worker between two goroutines looks at the timers once: it fires
/// at most its budget (one under loom) and leaves the rest due; whether
/// any fired.
pub fn fire_timers_one_look() -> bool {
    super::timer::fire_as_scheduling()
}

/// What the deadlock check asks the timers: whether one is pending, in a
/// heap or being fired (`timer::pending`).
pub fn timers_pending() -> bool {
    super::timer::pending()
}

/// A worker's preemption request (`async_preempt.rs`'s `Request`).
pub struct PreemptRequest(super::async_preempt::Request);

impl PreemptRequest {
    /// No request pending.
    #[allow(clippy::new_without_default)]
    pub fn new() -> PreemptRequest {
        PreemptRequest(super::async_preempt::Request::new())
    }

    /// Asks for a preemption (sysmon's side).
    pub fn make(&self) {
        self.0.make()
    }

    /// Takes a pending request (the worker's side): true once per request
    /// answered.
    pub fn take(&self) -> bool {
        self.0.take()
    }

    /// Whether one is pending.
    pub fn pending(&self) -> bool {
        self.0.pending()
    }
}

/// A worker's side of the system-call handshake (`syscall::Caller`).
pub struct SyscallWorker(super::syscall::Caller);

impl SyscallWorker {
    /// A worker in no call.
    pub fn new() -> SyscallWorker {
        SyscallWorker(super::syscall::Caller::new())
    }
}

impl Default for SyscallWorker {
    fn default() -> SyscallWorker {
        SyscallWorker::new()
    }
}

/// A processor's status word and system-call handshake (`procs::P`'s),
/// with `syscall.rs`'s transitions on them, and the scheduler lock that
/// takers hold. It starts `P_RUNNING`, held by the thread that made it.
pub struct SyscallP {
    status: super::prim::AtomicU32,
    call: super::syscall::Handshake,
    sched: super::prim::Mutex<()>,
}

impl SyscallP {
    /// A running processor.
    pub fn new_running() -> SyscallP {
        SyscallP {
            status: super::prim::AtomicU32::new(super::procs::P_RUNNING),
            call: super::syscall::Handshake::new(),
            sched: super::prim::Mutex::new(()),
        }
    }

    /// The scheduler lock.
    pub fn lock(&self) -> super::prim::MutexGuard<'_, ()> {
        self.sched.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The holder `w` enters a system call (`syscall::publish_enter`).
    pub fn enter(&self, w: &SyscallWorker) {
        super::syscall::publish_enter(&self.status, &self.call, &w.0);
    }

    /// `w` is back from its call: whether it holds the processor again
    /// (`syscall::leave`, and `settle` under the lock if a taker was
    /// deciding, as `exit_syscall` does).
    pub fn leave(&self, w: &SyscallWorker) -> bool {
        use super::syscall::{leave, settle, Left};
        match leave(&self.status, &self.call, &w.0) {
            Left::Kept => true,
            Left::Lost => false,
            Left::Undecided => {
                let _sched = self.lock();
                settle(&self.status, &self.call, &w.0)
            }
        }
    }

    /// sysmon's look: the tick of the call the processor is in, if it is
    /// in one.
    pub fn in_syscall(&self) -> Option<u32> {
        (self.status.load(Ordering::Acquire) == super::procs::P_SYSCALL)
            .then(|| self.call.tick.load(Ordering::Relaxed))
    }

    /// sysmon takes it (`P_IDLE`) if it is still in the call of tick
    /// `seen`, as `sysmon::retake` does under the scheduler lock.
    pub fn retake(&self, seen: u32) -> bool {
        let _sched = self.lock();
        self.take(super::procs::P_IDLE, Some(seen))
    }

    /// A worker takes the retaken processor from the idle list (under the
    /// lock, as `pidleget` then `P_RUNNING`); whether it was idle.
    pub fn take_idle(&self) -> bool {
        let _sched = self.lock();
        let idle = self.status.load(Ordering::Acquire) == super::procs::P_IDLE;
        if idle {
            self.status
                .store(super::procs::P_RUNNING, Ordering::Release);
        }
        idle
    }

    /// The world starts again: a stopped processor goes idle (under the
    /// lock, as `start_the_world` does).
    pub fn restart(&self) {
        let _sched = self.lock();
        if self.status.load(Ordering::Acquire) == super::procs::P_GCSTOP {
            self.status.store(super::procs::P_IDLE, Ordering::Release);
        }
    }

    /// After [`SyscallP::enter`]: whether a stop of `world` began
    /// (`syscall::stop_began`).
    pub fn stop_began(&self, world: &World) -> bool {
        super::syscall::stop_began(&world.0)
    }

    /// The entering worker `w` gives the processor to a stop
    /// (`syscall::claim_for_stop`); the caller holds [`SyscallP::lock`].
    pub fn claim_for_stop(&self, w: &SyscallWorker) -> bool {
        super::syscall::claim_for_stop(&self.status, &self.call, &w.0)
    }

    /// The stopper takes the processor if its worker is in a call, as
    /// `stw.rs` does after `World::begin`; the caller holds
    /// [`SyscallP::lock`].
    pub fn take_for_stop(&self) -> bool {
        self.take(super::procs::P_GCSTOP, None)
    }

    fn take(&self, to: u32, seen: Option<u32>) -> bool {
        super::syscall::take(&self.status, &self.call, to, seen)
    }
}

/// sysmon's wait for a busy processor (`sysmon::Sleeper`).
pub struct Sleeper(super::sysmon::Sleeper);

impl Sleeper {
    /// The calling thread's.
    pub fn for_current() -> Sleeper {
        Sleeper(super::sysmon::Sleeper::for_current())
    }

    /// Blocks while `idle()` holds until woken; whether it blocked.
    pub fn wait_while(&self, idle: impl Fn() -> bool) -> bool {
        self.0.wait_while(idle)
    }

    /// Wakes it if it waits (after making its `idle()` false).
    pub fn wake(&self) {
        self.0.wake();
    }
}

/// A goroutine as a dump sees it (`dump.rs`'s sequence-lock read), for
/// `tests/dump_loom.rs`: its status word, its count of switches and two
/// words of its stack (plain memory in the real goroutine, relaxed atomics
/// here, so that loom sees every read), with the real halves of the
/// protocol: the worker's resume, the goroutine's switch out, the dump's
/// read. It starts parked, its stack written with 0.
pub struct Parked {
    status: super::prim::AtomicU64,
    switches: super::prim::AtomicU64,
    stack: [AtomicUsize; 2],
    /// Whether the switch out counts (false brings back the dump that
    /// checked only the status word, which a goroutine parked twice in a
    /// row fools).
    counts: bool,
}

impl Parked {
    /// A parked goroutine; `counts`: see the field.
    pub fn new(counts: bool) -> Parked {
        Parked {
            status: super::prim::AtomicU64::new(super::g::WAITING),
            switches: super::prim::AtomicU64::new(0),
            stack: [AtomicUsize::new(0), AtomicUsize::new(0)],
            counts,
        }
    }

    /// Its worker resumes it (`sched::execute`): RUNNING, then the fence.
    pub fn resume(&self) {
        self.status.store(super::g::RUNNING, Ordering::Release);
        super::dump::seq::before_resume();
    }

    /// It runs: its stack's words become `v`.
    pub fn run(&self, v: usize) {
        for w in &self.stack {
            w.store(v, Ordering::Relaxed);
        }
    }

    /// It switches out (`G::switch_out`) and its worker parks it
    /// (`sched::park_finish`).
    pub fn park(&self) {
        if self.counts {
            super::dump::seq::count_switch(&self.switches);
        }
        self.status.store(super::g::WAITING, Ordering::Release);
    }

    /// A dump's read (`Snapshot::take`): the stack's words if it found the
    /// goroutine parked and it stayed so throughout.
    pub fn dump(&self) -> Option<[usize; 2]> {
        let first = self.status.load(Ordering::Acquire);
        if first != super::g::WAITING {
            return None;
        }
        super::dump::seq::read(
            first,
            || self.status.load(Ordering::Acquire),
            &self.switches,
            || {
                [
                    self.stack[0].load(Ordering::Relaxed),
                    self.stack[1].load(Ordering::Relaxed),
                ]
            },
        )
    }
}
