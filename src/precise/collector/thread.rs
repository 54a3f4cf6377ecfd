//! The collector thread and the requests it serves: asking for cycles,
//! waiting for them, shutting the thread down, and forks.

use super::cycle::run_cycle;
use crate::precise::mutator::{self, Mutator};
use crate::precise::stats;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

struct Control {
    /// Cycles asked for (counting from 1), started, completed.
    requested: u64,
    started: u64,
    completed: u64,
    /// Cycles whose marking has ended and whose pacer goal is set (the
    /// running one's sweep may still be going on): what an allocation
    /// past its allowance waits for.
    marked: u64,
    running: bool,
    shutdown: bool,
    /// While shutting down: the last cycle to run before the thread exits
    /// (the ones requested before [`shutdown`] was called).
    last: u64,
    thread: Option<std::thread::JoinHandle<()>>,
}

static CONTROL: Mutex<Control> = Mutex::new(Control {
    requested: 0,
    started: 0,
    completed: 0,
    marked: 0,
    running: false,
    shutdown: false,
    last: 0,
    thread: None,
});
/// The collector thread waits here for requests.
static WORK: Condvar = Condvar::new();
/// Waiters for cycles wait here.
static DONE: Condvar = Condvar::new();
/// Mirrors `Control::requested > Control::started`: a cycle is pending, so
/// the pacer need not take the lock.
static PENDING: AtomicBool = AtomicBool::new(false);

fn control() -> MutexGuard<'static, Control> {
    CONTROL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Asks for a cycle that starts after this call; returns its number.
fn request_new(c: &mut Control) -> u64 {
    let target = c.started + 1;
    if c.requested < target {
        c.requested = target;
        PENDING.store(true, Ordering::Relaxed);
        WORK.notify_all();
    }
    ensure_thread(c);
    target
}

fn ensure_thread(c: &mut Control) {
    if c.thread.is_none() && !c.shutdown {
        let spawned = std::thread::Builder::new()
            .name("defergc-precise-gc".into())
            .spawn(|| {
                // A panic here is a collector bug: waiters would hang and
                // mutators run on without collections. Fail loudly.
                if std::panic::catch_unwind(collector_main).is_err() {
                    crate::abort("defergc: precise: the collector thread panicked");
                }
            });
        match spawned {
            Ok(handle) => c.thread = Some(handle),
            Err(e) => crate::abort(&format!(
                "defergc: precise: cannot start the collector thread: {e}"
            )),
        }
    }
}

fn collector_main() {
    loop {
        let mut c = control();
        while c.requested <= c.started && !c.shutdown {
            c = WORK.wait(c).unwrap_or_else(|e| e.into_inner());
        }
        if c.shutdown && c.started >= c.last.min(c.requested) {
            // Shut down: what was asked for before is done. Later requests
            // are served by a new thread once shutdown has joined this one.
            return;
        }
        c.started += 1;
        c.running = true;
        PENDING.store(c.requested > c.started, Ordering::Relaxed);
        drop(c);
        run_cycle(|| {
            let mut c = control();
            c.marked = c.started;
            DONE.notify_all();
        });
        let mut c = control();
        c.completed += 1;
        c.marked = c.completed;
        c.running = false;
        DONE.notify_all();
    }
}

/// Requests a collection cycle and returns at once: the collector thread
/// runs it concurrently with the mutators. A cycle that is already running
/// does not count (its snapshot may predate the caller's garbage), so this
/// asks for one that starts after the call. Does not register the calling
/// thread.
pub fn gc_async() {
    crate::precise::ensure_started();
    request_new(&mut control());
}

/// Waits until every requested cycle has completed (immediately if none is
/// pending). A registered thread waits as if in native code, so the
/// collector does not wait for it. [`Error::InNative`] never: a thread in
/// native code may wait too.
///
/// [`Error::InNative`]: crate::precise::Error::InNative
pub fn gc_wait() {
    let target = control().requested;
    wait_for(target);
}

/// Waits until cycle `target` has completed, as native code if the caller
/// is a running registered thread.
fn wait_for(target: u64) {
    let wait = || {
        let mut c = control();
        while c.completed < target {
            c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
        }
    };
    let ts = mutator::current_ptr();
    // SAFETY: current_ptr is this thread's live state when non-null.
    match unsafe { ts.as_ref() } {
        Some(ts) if ts.status.load(Ordering::Relaxed) == mutator::RUNNING => {
            mutator::wait_native(ts, wait)
        }
        _ => wait(),
    }
}

/// Runs a full collection: [`gc_async`] then [`gc_wait`] for the cycle it
/// asked for. Every object unreachable when this is called is freed by the
/// time it returns. The caller does not stop anyone: it waits as if in
/// native code.
///
/// [`Error::InNative`](crate::precise::Error::InNative) from native code.
pub fn collect() -> crate::precise::Result<()> {
    mutator::current()?;
    let target = request_new(&mut control());
    wait_for(target);
    Ok(())
}

/// A collection on behalf of an allocation on `ts` (at a safepoint). With
/// `wait` (the heap limit, no handles left) the allocation waits for a
/// full new cycle; without it (the pacer) a cycle is requested unless one
/// is pending, and the allocation goes on.
pub(super) fn collect_for_alloc(ts: &Mutator, wait: bool) {
    if wait {
        let target = request_new(&mut control());
        mutator::wait_native(ts, || {
            let mut c = control();
            while c.completed < target {
                c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
            }
        });
    } else if !PENDING.load(Ordering::Relaxed) {
        let mut c = control();
        if c.requested <= c.started {
            request_new(&mut c);
        }
    }
}

/// The cycle whose marking an allocation that must not go on before a
/// cycle has marked waits for (past the pacer's allowance, see
/// `heap/pacer.rs`, or at the soft memory limit): the running one if it
/// has not finished marking, or if none runs the requested one. With
/// `request`, a new cycle is asked for if there is none (one that is
/// sweeping found its dead already); without, `None` then. (Past the
/// allowance, waiting also for a cycle requested while the last one
/// sweeps makes mutators wait much longer for no smaller heap.)
pub(super) fn marking_target(request: bool) -> Option<u64> {
    let mut c = control();
    let target = if c.running { c.started } else { c.requested };
    if target > c.marked {
        Some(target)
    } else if request {
        Some(request_new(&mut c))
    } else {
        None
    }
}

/// Waits, as native code, until cycle `target` has finished marking and
/// set the pacer's next goal. Its sweep may still run; the allocation
/// sweeps the blocks it takes itself if the collector has not reached
/// them.
pub(super) fn wait_marked(ts: &Mutator, target: u64) {
    let start = Instant::now();
    mutator::wait_native(ts, || {
        let mut c = control();
        while c.marked < target {
            c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
        }
    });
    stats::record_alloc_wait(start.elapsed());
}

/// Waits, as native code, until the cycle that is running (if any) has
/// completed: a weak handle's read while that cycle's marking decides its
/// object (see `weak.rs`). Returns at once if none runs.
pub(crate) fn wait_for_marking(ts: &Mutator) {
    let target = {
        let c = control();
        if !c.running || c.started <= c.completed {
            drop(c);
            // Between the flag and the control block (a cycle starting or
            // ending): look again soon.
            std::thread::yield_now();
            return;
        }
        c.started
    };
    mutator::wait_native(ts, || {
        let mut c = control();
        while c.completed < target {
            c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
        }
    });
}

/// Stops the collector thread and joins it, after the cycles already
/// requested have completed. Mutators may still be registered and running:
/// they are not waited for beyond the handshakes of those cycles. A later
/// request ([`collect`], [`gc_async`], the pacer) starts a new collector
/// thread.
pub fn shutdown() {
    let handle = {
        let mut c = control();
        c.shutdown = true;
        c.last = c.requested;
        WORK.notify_all();
        c.thread.take()
    };
    if let Some(handle) = handle {
        // The thread can only die of a bug; say so rather than hide it.
        if handle.join().is_err() {
            crate::abort("defergc: precise: the collector thread panicked");
        }
    }
    let mut c = control();
    c.shutdown = false;
    if c.requested > c.started {
        // Asked for while we were shutting down: serve it.
        ensure_thread(&mut c);
    }
}

/// Before a fork: waits until no cycle runs (as native code if the caller
/// is a running registered thread, so that the cycle does not wait for
/// it) and returns the control lock, which keeps the next one from
/// starting (kept until after the fork).
pub(crate) fn quiet_for_fork() {
    let wait = || {
        let mut c = control();
        while c.running {
            c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
        }
        c
    };
    let ts = mutator::current_ptr();
    // SAFETY: current_ptr is this thread's live state when non-null.
    let quiet = match unsafe { ts.as_ref() } {
        Some(ts) if ts.status.load(Ordering::Relaxed) == mutator::RUNNING => {
            mutator::wait_native(ts, wait)
        }
        _ => wait(),
    };
    crate::gc::fork::held::keep(quiet);
}

/// In a forked child: the collector thread did not come along. Forget it;
/// the next request starts a new one ([`restart_after_fork`], if one is
/// pending).
pub(crate) fn forget_after_fork() {
    // The handle names a thread of the parent: never join or detach it.
    std::mem::forget(control().thread.take());
}

/// In a forked child, after every layer's repair (the `resume` fork
/// hook): a cycle requested and not started gets a collector thread.
pub(crate) fn restart_after_fork() {
    let mut c = control();
    if c.requested > c.started {
        ensure_thread(&mut c);
    }
}
