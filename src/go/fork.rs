//! The goroutine layer's fork hooks (design.md invariant 9), registered
//! once the scheduler starts ([`install`]). [`fork_prepare`] takes the
//! timer heaps', the stack pool's and the scheduler's locks, so none of
//! them is caught half-changed. The run queues are lock-free: a local queue's operations
//! never wait on another thread, but the global queue (crossbeam's
//! Injector) may be caught with a slot a parent thread had reserved and
//! not yet written, which its readers wait for forever; the child gets a
//! new, empty one. In the child only the forking thread exists: every
//! other worker is gone, and with it the goroutines it was running. So the
//! child keeps one goroutine, the forking one (if it forks from a
//! goroutine): [`fork_child`] forgets the other workers, makes every
//! processor but the forking worker's idle, empties the run queues, and
//! marks every other goroutine dead without running it (a goroutine's
//! work is not done twice, once in each process; a wakeup for one is
//! ignored). The forking
//! goroutine may start goroutines in the child and wait for them, on
//! channels and locks it made there; anything another goroutine may have
//! held at the fork (a channel shared with it, a mutex) may stay held. As
//! in Go, whose child of `syscall.ForkExec` only execs, the safe use is
//! exec or `_exit` soon after the fork. A goroutine that forks inside a
//! system call keeps no processor in the child (each is idle there, and
//! its worker counts in `in_syscall`): its exit takes the slow path.
//! sysmon did not come along: a new one starts in the child.
//! A stop of the world in progress
//! in the parent is forgotten in the child (its stopper is gone), and
//! the handshake's lock is taken before the fork with the scheduler's.

use super::g::{self, G};
use super::{procs, stack};
use crossbeam_deque::Injector;
use std::ptr;
use std::sync::atomic::Ordering;

/// Registers the hooks; called once, as the scheduler starts (`sched::start`).
pub(crate) fn install() {
    static FORK: crate::gc::fork::ForkHooks = crate::gc::fork::ForkHooks {
        prepare: fork_prepare,
        child: fork_child,
        resume: fork_resume,
        ..crate::gc::fork::ForkHooks::NONE
    };
    crate::gc::fork::on_fork(&FORK);
}

/// Before a fork (see the module docs): the locks of the timer heaps, the
/// stack pool and the scheduler, in that order. (The poller has fork
/// hooks of its own, installed with it: plain threads use it too.)
fn fork_prepare() {
    let Some(s) = procs::get() else { return };
    super::timer::lock_for_fork();
    stack::lock_for_fork();
    crate::gc::fork::held::keep(s.lock());
    s.world.lock_for_fork();
}

/// In the child (see the module docs): only the forking thread exists.
fn fork_child() {
    // The trace's writer did not come along: the child traces nothing.
    // SAFETY: a forked child's hook, before any thread starts: this thread
    // is the only one, and holds none of the trace's locks (no trace code
    // forks, and no guard of them leaves the crate).
    unsafe { crate::prof::trace::forget_in_child() };
    let Some(s) = procs::get() else { return };
    // The child's only thread is this one: the barriers may change kind
    // (the registration is normally inherited).
    super::membar::use_membarrier();
    let m = procs::current_m();
    // SAFETY: processors are never freed.
    let mine = m.and_then(|m| unsafe { m.p.get().as_ref() });
    let forking = procs::current_g();
    {
        let mut idle = s.lock();
        idle.ms.clear();
        idle.ps.clear();
        idle.workers = usize::from(m.is_some());
        // A goroutine that forked between entering and leaving a system
        // call (as Go's ForkExec does) holds no processor.
        idle.in_syscall = usize::from(m.is_some() && mine.is_none() && forking.is_some());
        idle.locked_parked = 0;
        let ps: Vec<&procs::P> = s.ps().collect();
        for p in ps.into_iter().rev() {
            p.runnext.store(ptr::null_mut(), Ordering::Release);
            // SAFETY: the child has one thread: no other holder, no
            // stealer is left.
            unsafe { p.runq.clear() };
            p.listed.store(false, Ordering::Relaxed);
            super::syscall::forget_caller(&p.call);
            if mine.is_some_and(|q| q.id == p.id) {
                continue;
            }
            p.status.store(procs::P_IDLE, Ordering::Release);
            p.listed.store(true, Ordering::Relaxed);
            idle.ps.push(p);
        }
        s.npidle.store(idle.ps.len(), Ordering::SeqCst);
    }
    // A stop of the world the parent had begun waited for threads that
    // are gone; the child's processors are idle or the forking worker's.
    s.world.reset_after_fork();
    s.nmspinning.store(0, Ordering::SeqCst);
    if let Some(m) = m {
        m.spinning.set(false);
    }
    // The global queue may hold a slot a parent thread had reserved and
    // not yet written, which its readers would wait for forever: the
    // child gets an empty one (the old one is left as it is, unread).
    // SAFETY: the forking thread is the only thread of the child.
    unsafe { std::mem::forget(std::ptr::replace(s.global.get(), Injector::new())) };
    // Every goroutine but the forking one is dead: it never runs here, a
    // wakeup leaves it alone. Its stack stays (scanned, never reused).
    let geometry = stack::geometry();
    stack::for_each_live(|slot| {
        // SAFETY: a live slot holds an initialised goroutine header.
        let g = unsafe { G::of(slot, &geometry) };
        if forking.is_some_and(|f| ptr::eq(f, g)) {
            return;
        }
        g.status.store(g.tag() | g::DEAD, Ordering::Release);
    });
    s.reset_goroutine_count(usize::from(forking.is_some()));
    s.launching.store(0, Ordering::SeqCst);
    super::park::forget_watcher_after_fork();
    super::timer::forget_wedged_after_fork();
}

/// In the child, once every layer is repaired (the poller among them: a
/// worker started earlier would wait on the parent's epoll instance and
/// take the parent's readiness): a worker watches the timers the heaps
/// still hold, and a new sysmon starts.
fn fork_resume() {
    if procs::get().is_none() {
        return;
    }
    super::timer::restart_after_fork();
    super::sysmon::restart_after_fork();
}
