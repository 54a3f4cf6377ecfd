//! System calls and native code as a change of state (Go's `entersyscall`,
//! `exitsyscall` and, in `sysmon.rs`, `retake`).
//!
//! A goroutine about to block its thread says so ([`enter_syscall`]): its
//! worker keeps its processor and only publishes that the processor is in
//! a system call (status `P_SYSCALL`, one more `syscalltick`), with no
//! lock and no handover. Back from the call ([`exit_syscall`]), the worker
//! takes the processor back with one CAS, `P_SYSCALL` to `P_RUNNING` (the
//! fast path: a short call costs two stores and a CAS). Meanwhile sysmon
//! (`sysmon.rs`) looks at every processor each round: one whose
//! `syscalltick` it saw the same in the round before, still `P_SYSCALL`,
//! is in a call that has lasted a round (at least 20 µs); sysmon takes it
//! with a CAS `P_SYSCALL` to `P_IDLE` (under the scheduler lock) and hands
//! it to another worker or the idle list, so nothing starves while the
//! call blocks. The two CASes on one word decide who owns the processor:
//! exactly one of them succeeds. A worker whose CAS failed takes the slow
//! path: an idle processor if there is one, else its goroutine is queued
//! globally and the worker parks (see `sched.rs`).
//!
//! While in the call the worker holds no processor (`M::p` is null; the
//! processor is its `oldp`): what the goroutine readies meanwhile (a C
//! callback's `defergc_ready`) goes to the global queue, never to a local
//! queue sysmon may have handed to another worker. The transitions
//! themselves ([`publish_enter`], [`reacquire`], [`retake`]) work on the
//! two words only and build under `cfg(loom)`: `tests/syscall_loom.rs`
//! checks them on this code, with `model.rs`'s processor.

use super::g::{Switch, G};
use super::prim::{fence, AtomicU32};
use super::procs::{self, M, P_GCSTOP, P_IDLE, P_RUNNING, P_SYSCALL};
use super::stw::World;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Exits from a system call that found their processor taken (slow path).
static SLOW_EXITS: AtomicU64 = AtomicU64::new(0);

/// How many system-call exits took the slow path (their processor was
/// retaken, or they came from a forked child's call), since the start.
pub(crate) fn slow_exits() -> u64 {
    SLOW_EXITS.load(Ordering::Relaxed)
}

/// The holder of a processor enters a system call: one more call on its
/// `tick`, then its `status` says `P_SYSCALL` (released: whoever sees the
/// status sees the tick).
pub(crate) fn publish_enter(status: &AtomicU32, tick: &AtomicU32) {
    // Only the holder writes the tick.
    tick.store(
        tick.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
    status.store(P_SYSCALL, Ordering::Release);
}

/// After [`publish_enter`]: whether a stop of the world has begun, which
/// may have counted this processor as running before it was published in
/// the call. Then the worker gives it to the stopper itself
/// ([`claim_for_stop`], under the scheduler lock: Go's
/// `entersyscall_gcwait`), or the stop would wait for the call to return.
/// The fence pairs with the one in [`World::begin`]: either this sees the
/// stop, or the stopper's claim sees `P_SYSCALL`.
pub(crate) fn stop_began(world: &World) -> bool {
    #[cfg(loom)]
    if super::prim::no_gcwait() {
        // The bug loom must find: the stop waits for the call.
        return false;
    }
    fence(Ordering::SeqCst);
    world.waiting()
}

/// A stop of the world takes a processor in a system call (`P_SYSCALL` to
/// `P_GCSTOP`); whether it did. The stopper tries every processor when
/// it begins, and a worker whose call entry raced with that tries its own
/// ([`stop_began`]); at most one of them wins, under the scheduler lock.
/// The worker's exit then finds the processor taken (the slow path).
pub(crate) fn claim_for_stop(status: &AtomicU32) -> bool {
    status
        .compare_exchange(P_SYSCALL, P_GCSTOP, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// The worker is back from the call: whether it took its processor back
/// (`P_SYSCALL` to `P_RUNNING`). False: sysmon took it first.
pub(crate) fn reacquire(status: &AtomicU32) -> bool {
    status
        .compare_exchange(P_SYSCALL, P_RUNNING, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
}

/// Sysmon takes a processor whose call is the one it saw (`tick` still
/// `seen`), if the worker has not taken it back (`P_SYSCALL` to `P_IDLE`);
/// whether it did. The new owner (sysmon, then who it hands the processor
/// to) sees everything its worker did before the call. A worker that
/// returned and entered a new call between the tick's load and the CAS
/// loses its processor to this one early: rare, and harmless (as in Go).
pub(crate) fn retake(status: &AtomicU32, tick: &AtomicU32, seen: u32) -> bool {
    #[cfg(loom)]
    if super::prim::retake_store() {
        // The bug loom must find: the worker's CAS may already have won.
        if tick.load(Ordering::Relaxed) == seen && status.load(Ordering::Acquire) == P_SYSCALL {
            status.store(P_IDLE, Ordering::Release);
            return true;
        }
        return false;
    }
    tick.load(Ordering::Relaxed) == seen
        && status
            .compare_exchange(P_SYSCALL, P_IDLE, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
}

/// The running goroutine enters a system call or native code: its
/// processor is marked `P_SYSCALL` and kept (see the module docs). `m`:
/// the calling thread's worker, which runs a goroutine (whose status word
/// is left alone).
pub(crate) fn enter_syscall(m: &'static M) {
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
        g.in_syscall.store(true, Ordering::Relaxed);
    }
    m.p.set(ptr::null());
    m.oldp.set(p);
    publish_enter(&p.status, &p.syscalltick);
    let s = procs::sched();
    if stop_began(&s.world) {
        let mut idle = s.lock();
        if claim_for_stop(&p.status) {
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
    if let Some(p) = oldp {
        if reacquire(&p.status) {
            m.p.set(p);
            // A goroutine that loops on system calls keeps its time slice:
            // sysmon may have asked it to yield meanwhile.
            super::preempt::honour(g);
            return;
        }
    }
    SLOW_EXITS.fetch_add(1, Ordering::Relaxed);
    let s = procs::sched();
    let got = {
        // Sysmon counted this worker in `in_syscall` under this lock, in
        // the same critical section as its CAS (or the fork child did).
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
