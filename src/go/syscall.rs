//! System calls and native code as a change of state (Go's `entersyscall`,
//! `exitsyscall` and, in `sysmon.rs`, `retake`).
//!
//! A goroutine about to block its thread says so ([`enter_syscall`]): its
//! worker keeps its processor and only publishes that the processor is in
//! a system call (status `P_SYSCALL`, one more call on its [`Handshake`]),
//! with no lock and no handover. Meanwhile sysmon (`sysmon.rs`) looks at
//! every processor each round: one whose call it saw in the round before,
//! still `P_SYSCALL`, is in a call that has lasted a round (at least
//! 20 µs); sysmon takes it (`P_IDLE`, under the scheduler lock) and hands
//! it to another worker or the idle list, so nothing starves while the
//! call blocks. A stop of the world takes such processors the same way
//! (`P_GCSTOP`, `stw.rs`).
//!
//! # Leaving a call without a read-modify-write
//!
//! Back from the call ([`exit_syscall`]), the worker must know whether it
//! still holds its processor. A compare-and-swap on the status word would
//! decide it, but any locked instruction or full fence just after a
//! system call costs about a third of a short call here, and a short call
//! is the common case. So the two sides are asymmetric, and the fast path
//! uses plain loads and stores and a compiler barrier only:
//!
//! - The worker ([`leave`]): it marks its [`Caller`] out of the call (one
//!   more on its call count, which is odd inside a call), then, after a
//!   light barrier, reads its processor's `taking` flag. Clear: no taker
//!   is at work, and if the status is still its own `P_SYSCALL` the
//!   processor is still its own; it stores `P_RUNNING`. Set: a taker is
//!   deciding, and the worker waits for the verdict under the scheduler
//!   lock ([`settle`]).
//! - A taker (sysmon or a stopper, always under the scheduler lock, so
//!   one at a time) raises `taking` ([`begin_taking`]), then makes a heavy
//!   barrier ([`heavy_barrier`](super::membar::heavy_barrier)), then takes the processor only if its
//!   worker is still in a call on it ([`take_if_in_call`]), and lowers
//!   `taking` ([`end_taking`]).
//!
//! The barriers are `membar.rs`'s: a compiler barrier for the worker,
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` for the taker. As with a
//! fence on both sides, the two cannot both miss each other: either the
//! worker's mark is visible to the taker (the worker left: the taker
//! takes nothing) or the taker's flag is visible to the worker (it waits
//! for the verdict).
//!
//! Whether a taker took the processor depends on the worker's call only:
//! the `Caller` records the processor it entered on, and a worker whose
//! processor was taken and handed on (perhaps to a worker now in a call
//! of its own on it) finds another `Caller` recorded there and takes the
//! slow path: an idle processor if there is one, else its goroutine is
//! queued globally and the worker parks (see `sched.rs`).
//!
//! While in the call the worker holds no processor (`M::p` is null; the
//! processor is its `oldp`): what the goroutine readies meanwhile (a C
//! callback's `defergc_ready`) goes to the global queue, never to a local
//! queue sysmon may have handed to another worker. The transitions
//! ([`publish_enter`], [`leave`], [`settle`], [`take_if_in_call`] and the
//! rest) work on the words only and build under `cfg(loom)`, where both
//! barriers are fences: `tests/syscall_loom.rs` and `tests/stw_loom.rs`
//! check them on this code, with `model.rs`'s processor.

use super::g::{Switch, G};
use super::prim::{AtomicPtr, AtomicU32, AtomicU64};
use super::procs::{self, M, P_GCSTOP, P_RUNNING, P_SYSCALL};
use std::ptr;
use std::sync::atomic::Ordering;

/// Exits from a system call that found their processor taken (slow path).
static SLOW_EXITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Exits from a system call that waited for a taker's verdict.
static UNDECIDED_EXITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many system-call exits waited for a taker's verdict.
pub(crate) fn undecided_exits() -> u64 {
    UNDECIDED_EXITS.load(Ordering::Relaxed)
}

/// How many system-call exits took the slow path (their processor was
/// retaken, or they came from a forked child's call), since the start.
pub(crate) fn slow_exits() -> u64 {
    SLOW_EXITS.load(Ordering::Relaxed)
}

/// A worker's side of its system calls (in `procs::M`).
pub(crate) struct Caller {
    /// Calls entered plus calls left: odd while in one. Written by the
    /// worker only.
    calls: AtomicU64,
    /// The processor the current (or last) call was entered on: its
    /// handshake's address.
    on: AtomicPtr<Handshake>,
}

impl Caller {
    pub(crate) fn new() -> Caller {
        Caller {
            calls: AtomicU64::new(0),
            on: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Out of the call, if in one, without a processor to look at.
    fn end_call(&self) {
        let calls = self.calls.load(Ordering::Relaxed);
        self.calls.store(calls + calls % 2, Ordering::Relaxed);
    }
}

/// A processor's side (in `procs::P`, beside its status word).
pub(crate) struct Handshake {
    /// System calls entered on this processor: written by the holder
    /// only, read by sysmon (a call that lasts while it stays the same).
    pub(crate) tick: AtomicU32,
    /// A taker is deciding (1) or not (0); written by takers only, under
    /// the scheduler lock.
    taking: AtomicU32,
    /// The worker in (or last in) a call on this processor.
    caller: AtomicPtr<Caller>,
}

impl Handshake {
    pub(crate) fn new() -> Handshake {
        Handshake {
            tick: AtomicU32::new(0),
            taking: AtomicU32::new(0),
            caller: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

/// The holder of a processor enters a system call: the processor's
/// caller is this worker, one more call on its `tick`, its `status` says
/// `P_SYSCALL`, and last this worker's count says it is in a call
/// (released: a taker that sees the count sees the rest, so that its own
/// store to the status comes after the worker's).
pub(crate) fn publish_enter(status: &AtomicU32, hs: &Handshake, me: &Caller) {
    me.on.store(ptr::from_ref(hs).cast_mut(), Ordering::Relaxed);
    hs.caller
        .store(ptr::from_ref(me).cast_mut(), Ordering::Relaxed);
    // Only the holder writes the tick.
    hs.tick.store(
        hs.tick.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
    status.store(P_SYSCALL, Ordering::Relaxed);
    // Only the worker writes its count.
    let calls = me.calls.load(Ordering::Relaxed);
    debug_assert!(
        calls.is_multiple_of(2),
        "defergc: a system call entered twice"
    );
    me.calls.store(calls + 1, Ordering::Release);
}

/// After [`publish_enter`]: whether a stop of the world has begun, which
/// may have counted this processor as running before it was published in
/// the call. Then the worker gives it to the stopper itself
/// ([`claim_for_stop`], under the scheduler lock: Go's
/// `entersyscall_gcwait`), or the stop would wait for the call to return.
/// The light barrier pairs with the stopper's heavy one (`stw.rs`):
/// either this sees the stop, or the stopper's claims see `P_SYSCALL`.
pub(crate) fn stop_began(world: &super::stw::World) -> bool {
    #[cfg(loom)]
    if super::prim::no_gcwait() {
        // The bug loom must find: the stop waits for the call.
        return false;
    }
    super::membar::light_barrier();
    world.waiting()
}

/// The worker `me`, which saw a stop begin as it entered its call, gives
/// its processor to the stopper (`P_SYSCALL` to `P_GCSTOP`), under the
/// scheduler lock; whether it did. Not if the stop took it first: then
/// the processor has been taken (it forgot its caller), and may even be
/// another worker's by now, in a call of its own, or in no stop at all
/// (the stop that took it ended before this worker had the lock). Like
/// every take, it forgets the processor's caller.
pub(crate) fn claim_for_stop(status: &AtomicU32, hs: &Handshake, me: &Caller) -> bool {
    let claimed = status.load(Ordering::Relaxed) == P_SYSCALL
        && ptr::eq(hs.caller.load(Ordering::Relaxed), me);
    if claimed {
        hs.caller.store(ptr::null_mut(), Ordering::Relaxed);
        status.store(P_GCSTOP, Ordering::Release);
    }
    claimed
}

/// What the worker found back from its call ([`leave`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Left {
    /// It holds its processor again (`P_RUNNING`).
    Kept,
    /// A taker took it.
    Lost,
    /// A taker is deciding: [`settle`] under the scheduler lock.
    Undecided,
}

/// The worker is back from its call on the processor of `status` and
/// `hs` (see the module docs): no read-modify-write, no fence.
#[inline]
pub(crate) fn leave(status: &AtomicU32, hs: &Handshake, me: &Caller) -> Left {
    let calls = me.calls.load(Ordering::Relaxed);
    me.calls.store(calls + 1, Ordering::Relaxed);
    super::membar::light_barrier();
    #[cfg(loom)]
    if super::prim::blind_leave() {
        // The bug loom must find: a worker that does not look for a taker.
        return kept(status, hs, me);
    }
    if hs.taking.load(Ordering::Acquire) != 0 {
        return Left::Undecided;
    }
    kept(status, hs, me)
}

/// No taker at work: the processor is the worker's if it is still in its
/// call, and is then marked running.
fn kept(status: &AtomicU32, hs: &Handshake, me: &Caller) -> Left {
    if status.load(Ordering::Acquire) == P_SYSCALL && ptr::eq(hs.caller.load(Ordering::Relaxed), me)
    {
        status.store(P_RUNNING, Ordering::Relaxed);
        Left::Kept
    } else {
        Left::Lost
    }
}

/// After [`Left::Undecided`], holding the scheduler lock (so no taker is
/// at work): whether the worker kept its processor.
pub(crate) fn settle(status: &AtomicU32, hs: &Handshake, me: &Caller) -> bool {
    kept(status, hs, me) == Left::Kept
}

/// A taker (under the scheduler lock) begins: the workers' exits on this
/// processor will wait for its verdict. Then [`heavy_barrier`](super::membar::heavy_barrier), once for
/// any number of processors.
pub(crate) fn begin_taking(hs: &Handshake) {
    hs.taking.store(1, Ordering::Relaxed);
}

/// After [`begin_taking`] and [`heavy_barrier`](super::membar::heavy_barrier): takes the processor
/// (status `to`: `P_IDLE` for sysmon, `P_GCSTOP` for a stop) if its
/// worker is in a call on it, and, with `seen`, if that is the call of
/// tick `seen`; whether it did. A worker that left its call before the
/// barrier is seen out of it; one that leaves after waits for
/// [`end_taking`] and then finds the processor taken.
///
/// The caller it reads is the one of the latest call entered since the
/// last take (every take forgets it, under the lock this taker holds), and
/// reading that worker's count in a call shows everything the worker
/// wrote as it entered: this taker's store to the status comes after the
/// worker's, never before it to be overwritten.
pub(crate) fn take_if_in_call(
    status: &AtomicU32,
    hs: &Handshake,
    to: u32,
    seen: Option<u32>,
) -> bool {
    // SAFETY: callers are workers' fields, and workers are never freed.
    let Some(caller) = (unsafe { hs.caller.load(Ordering::Relaxed).as_ref() }) else {
        return false;
    };
    if caller.calls.load(Ordering::Acquire) % 2 == 0
        || !ptr::eq(caller.on.load(Ordering::Relaxed), hs)
        || status.load(Ordering::Relaxed) != P_SYSCALL
        || seen.is_some_and(|t| hs.tick.load(Ordering::Relaxed) != t)
    {
        return false;
    }
    hs.caller.store(ptr::null_mut(), Ordering::Relaxed);
    status.store(to, Ordering::Relaxed);
    true
}

/// In a forked child, whose processors are all made idle (or kept by the
/// forking worker): no call on them goes on, and a later taker must not
/// act on a worker of the parent that was in one.
pub(crate) fn forget_caller(hs: &Handshake) {
    hs.caller.store(ptr::null_mut(), Ordering::Relaxed);
    hs.taking.store(0, Ordering::Relaxed);
}

/// One processor taken on its own (sysmon's retake): [`begin_taking`],
/// [`heavy_barrier`](super::membar::heavy_barrier), [`take_if_in_call`], [`end_taking`]; whether it was.
/// Under the scheduler lock. A stop takes every processor with one
/// barrier instead (`stw.rs`).
pub(crate) fn take(status: &AtomicU32, hs: &Handshake, to: u32, seen: Option<u32>) -> bool {
    begin_taking(hs);
    super::membar::heavy_barrier();
    let took = take_if_in_call(status, hs, to, seen);
    end_taking(hs);
    took
}

/// The taker is done with this processor: a waiting worker may look.
pub(crate) fn end_taking(hs: &Handshake) {
    hs.taking.store(0, Ordering::Release);
}

/// The running goroutine enters a system call or native code: its
/// processor is marked `P_SYSCALL` and kept (see the module docs). `m`:
/// the calling thread's worker, which runs a goroutine (whose status word
/// is left alone); `at`: the frame record of the function that enters the
/// call (`unwind::caller_frame`), whose frames a dump shows meanwhile.
pub(crate) fn enter_syscall(m: &'static M, at: crate::unwind::FrameRecord) {
    // SAFETY: processors are never freed.
    let Some(p) = (unsafe { m.p.get().as_ref() }) else {
        // In a system call already.
        return;
    };
    if p.status.load(Ordering::Relaxed) != P_RUNNING {
        // The stopper's own processor while the world is stopped
        // (`stw.rs`): no one else runs, no one needs it.
        return;
    }
    // Blocked in the call, it cannot answer a collector.
    crate::context::block_enter();
    // The goroutine stays `RUNNING` (its worker without a processor says
    // it is in the call): no read-modify-write of its status word here or
    // on the fast exit, which is most of what a short call costs us.
    // SAFETY: the caller's worker runs a goroutine, which lives while it
    // runs.
    if let Some(g) = unsafe { m.current.get().as_ref() } {
        g.syscall_sp
            .store(at.at + 2 * size_of::<usize>(), Ordering::Relaxed);
        g.syscall_fp.store(at.fp, Ordering::Relaxed);
        g.syscall_pc.store(at.pc, Ordering::Relaxed);
        g.syscall_m.store(m as *const M as usize, Ordering::Relaxed);
        g.in_syscall.store(true, Ordering::Relaxed);
    }
    m.p.set(ptr::null());
    m.oldp.set(p);
    publish_enter(&p.status, &p.call, &m.caller);
    let s = procs::sched();
    if stop_began(&s.world) {
        let mut idle = s.lock();
        if claim_for_stop(&p.status, &p.call, &m.caller) {
            // Its exit takes the slow path, which counts it out.
            idle.in_syscall += 1;
            s.world.stopped_one();
        }
    }
}

/// The running goroutine is back from a system call: it takes its
/// processor back, or an idle one; otherwise it is queued and its worker
/// parks.
/// `m`: the calling thread's worker; `g`: the goroutine it runs.
pub(crate) fn exit_syscall(m: &'static M, g: &G) {
    if !m.p.get().is_null() {
        // Not in a system call (an exit without an enter): nothing to do.
        return;
    }
    crate::context::block_exit();
    g.in_syscall.store(false, Ordering::Relaxed);
    // SAFETY: processors are never freed.
    let oldp = unsafe { m.oldp.replace(ptr::null()).as_ref() };
    let s = procs::sched();
    if let Some(p) = oldp {
        let kept = match leave(&p.status, &p.call, &m.caller) {
            Left::Kept => true,
            Left::Lost => false,
            Left::Undecided => {
                UNDECIDED_EXITS.fetch_add(1, Ordering::Relaxed);
                // The taker holds the scheduler lock while it decides.
                let _idle = s.lock();
                settle(&p.status, &p.call, &m.caller)
            }
        };
        if kept {
            m.p.set(p);
            // A goroutine that loops on system calls keeps its time slice:
            // sysmon may have asked it to yield meanwhile.
            super::preempt::honour(g);
            return;
        }
    } else {
        // No processor to look at (none was kept for the call).
        m.caller.end_call();
    }
    SLOW_EXITS.fetch_add(1, Ordering::Relaxed);
    let got = {
        // The taker counted this worker in `in_syscall` under this lock, in
        // the same critical section as its take (or the fork child did).
        let mut idle = s.lock();
        idle.in_syscall -= 1;
        procs::pidleget(s, &mut idle)
    };
    match got {
        Some(p) => {
            p.status.store(P_RUNNING, Ordering::Release);
            m.p.set(p);
        }
        None => g.switch_out(Switch::SyscallExit),
    }
}
