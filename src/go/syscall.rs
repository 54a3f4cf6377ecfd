//! System calls and native code: a goroutine about to block outside the
//! runtime gives its worker's processor away (to another worker, started
//! if needed) when there is work for it, so nothing starves while the call
//! blocks; back from the call, it takes an idle processor, or is queued
//! globally while its worker parks (see `sched.rs`).

use super::g::{self, Switch, G};
use super::{idle, procs, sched};
use std::ptr;
use std::sync::atomic::Ordering;

/// The running goroutine enters a system call or native code: its worker
/// gives its processor to another worker if there is work for it.
pub(crate) fn enter_syscall(g: &G) {
    let s = procs::sched();
    let Some(m) = procs::current_m() else { return };
    if m.p.get().is_null() {
        // In a system call already.
        return;
    }
    // Blocked in the call, it cannot answer a collector.
    crate::context::block_enter();
    // SAFETY: processors are never freed.
    let Some(p) = (unsafe { m.p.get().as_ref() }) else {
        return;
    };
    // A pending notification stays: a park after the call still sees it.
    sched::set_state(g, g::SYSCALL);
    m.p.set(ptr::null());
    // While the world is being stopped the processor goes to the stopper
    // (Go's `entersyscall_gcwait`), under the lock that orders it with
    // the stop's start.
    let handoff = {
        let mut idle = s.lock();
        idle.in_syscall += 1;
        let handoff = !s.world.waiting() && (p.has_work() || !s.global().is_empty());
        if !handoff {
            idle::release_p(s, &mut idle, p);
        }
        handoff
    };
    if handoff {
        idle::startm(Some(p), false);
    }
}

/// The running goroutine is back from a system call: it takes a processor
/// if one is idle; otherwise it is queued and its worker parks.
pub(crate) fn exit_syscall(g: &G) {
    let s = procs::sched();
    let Some(m) = procs::current_m() else { return };
    if !m.p.get().is_null() {
        // Not in a system call (an exit without an enter): nothing to do.
        return;
    }
    crate::context::block_exit();
    let got = {
        let mut idle = s.lock();
        idle.in_syscall -= 1;
        procs::pidleget(s, &mut idle)
    };
    sched::set_state(g, g::RUNNING);
    match got {
        Some(p) => {
            p.status.store(procs::P_RUNNING, Ordering::Release);
            m.p.set(p);
        }
        None => g.switch_out(Switch::SyscallExit),
    }
}
