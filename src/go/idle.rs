//! Idle workers: finding work for a worker (its queues, the network,
//! stealing), spinning, and parking and waking workers (Go's
//! `findRunnable`, `wakep`, `startm`, `stopm`). A worker blocks in
//! `park.rs`'s one primitive; the queues it searches are `procs.rs`'s.
//!
//! Two kinds of worker are not idle workers: one whose locked goroutine
//! (`LockOSThread`) switched out gives its processor away and waits for
//! that goroutine alone ([`stoplockedm`]); a worker that finds a
//! goroutine locked to another worker hands that worker its processor
//! and parks ([`startlockedm`]). While the world is being stopped
//! (`stw.rs`), a processor given away goes to the stopper
//! ([`release_p`]) and a worker about to look for work stops its
//! processor first.

use super::g::{self, G};
use super::park::{Parker, Wake};
use super::procs::{
    any_work, local_or_global, pidleget, pidleput, sched, set_current_m, steal, Idle, Sched,
    GLOBAL_TICK, M, P, P_GCSTOP, P_RUNNING,
};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Steal attempts a spinning worker makes before it parks.
pub(super) const SPIN_ROUNDS: usize = 32;

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

/// Stack size of a worker thread's own stack (the scheduler loop's).
const WORKER_STACK: usize = 256 << 10;

pub(super) fn spawn_worker(id: usize, p: &'static P, spinning: bool) {
    let p = p as *const P as usize;
    // Worker names stay unique when workers end (locked goroutines).
    static NAMES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let id = id.max(NAMES.fetch_add(1, Ordering::Relaxed) + 1);
    let spawned = std::thread::Builder::new()
        .name(format!("defergc-go-{id}"))
        .stack_size(WORKER_STACK)
        .spawn(move || {
            crate::gc::thread::ensure_registered();
            crate::context::mark_runtime_thread();
            let (alt_lo, alt_hi) = crate::signal::alt_stack();
            crate::signal::cpu::register();
            let m: &'static M = Box::leak(Box::new(M {
                id,
                trace_tick: Cell::new(0),
                next_p: AtomicPtr::new(ptr::null_mut()),
                next_spinning: AtomicBool::new(false),
                parker: Parker::for_current(),
                scan: super::scan::register_worker(alt_lo, alt_hi),
                p: Cell::new(ptr::null()),
                oldp: Cell::new(ptr::null()),
                caller: super::syscall::Caller::new(),
                spinning: Cell::new(spinning),
                locked_g: Cell::new(ptr::null()),
                locked_wait: AtomicBool::new(false),
                polled: Cell::new(None),
                current: Cell::new(ptr::null()),
                preempt: super::async_preempt::WorkerPreempt::for_current_thread(),
            }));
            set_current_m(m);
            super::async_preempt::register_worker(m);
            m.p.set(p as *const P);
            m.scan.set_g0_sp(g::approximate_sp().saturating_sub(4096));
            (sched().worker_loop)(m);
            // The loop returned: a goroutine locked to this thread exited
            // (Go terminates such a thread). What the thread kept for
            // itself goes back; the worker's records stay (never freed).
            m.scan.retire();
            super::stack::release_local();
            crate::signal::free_alt_stack((alt_lo, alt_hi));
        });
    if let Err(e) = spawned {
        crate::abort(&format!(
            "defergc: cannot start a goroutine worker thread: {e}"
        ));
    }
}

/// Finds a goroutine to run, parking the worker while there is none.
/// Returns with the worker holding a processor, and whether the goroutine
/// was found at the first look, in its queues (no wait, no steal).
pub(super) fn find_runnable(m: &'static M) -> (&'static G, bool) {
    let s = sched();
    let mut first = true;
    let mut looked = false;
    loop {
        // A second pass (after a stop, a poll, or a park): not at once.
        first &= !looked;
        looked = true;
        let p = m.p.get();
        // SAFETY: processors are never freed.
        let Some(p) = (unsafe { p.as_ref() }) else {
            stopm(m);
            continue;
        };
        if s.world.waiting() {
            // A scheduling point: the processor stops for the stopper.
            gcstopm(m, p);
            continue;
        }
        // Timers that are due first, those of this processor's heap (and
        // every GLOBAL_TICK schedules every heap's, as the global queue is
        // looked at): what they ready is queued here.
        let tick = p.schedtick.load(Ordering::Relaxed).wrapping_add(1);
        super::park::check_timers(p.id, tick.is_multiple_of(GLOBAL_TICK));
        if let Some(g) = local_or_global(s, p) {
            stop_spinning(m);
            return (g, first);
        }
        // Nothing queued here: the other heaps' due timers (Go's
        // `stealWork` runs other processors' timers).
        if super::park::check_timers(p.id, true) {
            if let Some(g) = local_or_global(s, p) {
                stop_spinning(m);
                return (g, false);
            }
        }
        // Descriptors that became ready (readied goroutines are queued).
        if super::park::poll_now() {
            continue;
        }
        // Nothing to run: stacks for the goroutines a growing program is
        // starting, made ready on this otherwise idle core.
        if super::stack::prepare() {
            continue;
        }
        if !m.spinning.get()
            && 2 * s.nmspinning.load(Ordering::SeqCst)
                < s.procs().saturating_sub(s.npidle.load(Ordering::SeqCst))
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
                    return (g, false);
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
            release_p(s, &mut idle, p);
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

/// A spinning worker found work: it stops spinning, and if it was the
/// last spinner, wakes another so that more work is found in parallel.
pub(super) fn stop_spinning(m: &M) {
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
pub(super) fn stopm(m: &'static M) {
    let s = sched();
    {
        let mut idle = s.lock();
        idle.ms.push(m);
        deadlock_check(s, &idle);
    }
    loop {
        // No deadline: only a processor handed over, a poll that readied
        // goroutines, or a timer due ends an idle worker's wait. Due
        // timers run here, without a processor: what they ready is counted
        // as what a poll readies.
        m.polled.set(Some(0));
        let wake = m.parker.block();
        let fired = wake != Wake::Woken && super::park::run_timers();
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
            if fired {
                recheck_parked(s, m);
            }
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
                // polling while this one runs. If it watched, the watch
                // passes on.
                wakep();
                super::park::pass_watch();
                return;
            }
            // Every processor is busy (they find the global queue) or
            // this worker is being handed one.
            None => wakep(),
        }
    }
}

/// The deadlock check as a worker parks (under the scheduler lock); not
/// while the world is stopped, when every worker may be parked.
pub(super) fn deadlock_check(s: &Sched, idle: &Idle) {
    if s.world.waiting() {
        return;
    }
    (s.deadlock_check)(
        idle.workers,
        idle.ms.len() + idle.locked_parked,
        idle.in_syscall,
        s,
        &s.launching,
    );
}

/// The deadlock check again, after a parked worker fired timers that
/// readied nothing: a check that ran meanwhile saw the firing and let it
/// pass (see `timer::pending`), and nothing else may run it again.
fn recheck_parked(s: &Sched, m: &M) {
    let idle = s.lock();
    if m.locked_wait.load(Ordering::Relaxed) || idle.ms.iter().any(|&x| ptr::eq(x, m)) {
        deadlock_check(s, &idle);
    }
}

/// A processor its worker gives up (under the scheduler lock): to the
/// stopper while the world is being stopped, else to the idle list.
pub(super) fn release_p(s: &Sched, idle: &mut Idle, p: &P) {
    if s.world.waiting() {
        p.status.store(P_GCSTOP, Ordering::Release);
        s.world.stopped_one();
    } else {
        pidleput(s, idle, p);
    }
}

/// Go's `gcstopm`: at a scheduling point while the world is being
/// stopped, the worker stops its processor and parks.
fn gcstopm(m: &'static M, p: &'static P) {
    let s = sched();
    if m.spinning.replace(false) {
        s.nmspinning.fetch_sub(1, Ordering::SeqCst);
    }
    m.p.set(ptr::null());
    release_p(s, &mut s.lock(), p);
    stopm(m);
}

/// Go's `handoffp`: a worker that stops running goroutines gives `p` to
/// another worker if there is work for it, else back (idle, or to the
/// stopper).
pub(super) fn handoffp(p: &'static P) {
    let s = sched();
    let mut idle = s.lock();
    if !s.world.waiting() && (p.has_work() || !s.global().is_empty()) {
        drop(idle);
        startm(Some(p), false);
    } else {
        release_p(s, &mut idle, p);
    }
}

/// Go's `stoplockedm`: the goroutine locked to this worker switched out
/// (parked, yielded, back from a system call without a processor). The
/// worker gives its processor away and waits until the goroutine is
/// handed to it with a processor ([`startlockedm`]); it runs nothing
/// else meanwhile. Returns holding the processor it was handed.
pub(super) fn stoplockedm(m: &'static M) {
    let s = sched();
    // SAFETY: processors are never freed.
    if let Some(p) = unsafe { m.p.replace(ptr::null()).as_ref() } {
        handoffp(p);
    }
    if m.spinning.replace(false) {
        s.nmspinning.fetch_sub(1, Ordering::SeqCst);
    }
    {
        let mut idle = s.lock();
        // Handed over already (the goroutine was readied and found before
        // this worker got here).
        let p = m.next_p.swap(ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            m.p.set(p);
            return;
        }
        m.locked_wait.store(true, Ordering::Relaxed);
        idle.locked_parked += 1;
        deadlock_check(s, &idle);
    }
    loop {
        // Timers due and what a poll readied run elsewhere: readied
        // goroutines go to the global queue, each with a wakep.
        match m.parker.block() {
            Wake::Woken => {
                let p = m.next_p.swap(ptr::null_mut(), Ordering::AcqRel);
                if !p.is_null() {
                    m.p.set(p);
                    return;
                }
            }
            Wake::Timers => {
                if super::park::run_timers() {
                    recheck_parked(s, m);
                }
            }
            Wake::Polled => {}
        }
    }
}

/// Go's `startlockedm`: the goroutine this worker found is locked to
/// worker `l`: this worker's processor goes to `l`, which runs it, and
/// this worker parks as an idle one.
pub(super) fn startlockedm(m: &'static M, l: &'static M) {
    let s = sched();
    stop_spinning(m);
    let p = m.p.replace(ptr::null());
    let wake = {
        let mut idle = s.lock();
        l.next_p.store(p.cast_mut(), Ordering::Release);
        let waiting = l.locked_wait.swap(false, Ordering::Relaxed);
        if waiting {
            idle.locked_parked -= 1;
        }
        waiting
    };
    if wake {
        l.parker.wake();
    }
    stopm(m);
}

/// The worker ends: its locked goroutine exited (Go: "the thread will be
/// terminated"). Its processor goes to another worker or back, and it no
/// longer counts as a worker.
pub(super) fn exit_locked_m(m: &'static M) {
    let s = sched();
    m.locked_g.set(ptr::null());
    if m.spinning.replace(false) {
        s.nmspinning.fetch_sub(1, Ordering::SeqCst);
    }
    // SAFETY: processors are never freed.
    if let Some(p) = unsafe { m.p.replace(ptr::null()).as_ref() } {
        handoffp(p);
    }
    {
        let mut idle = s.lock();
        idle.workers -= 1;
        deadlock_check(s, &idle);
    }
    // The thread ends: if no one watches the timers (this worker, busy,
    // was what a kick or a leaving watcher counted on), a worker that
    // stays is made to.
    super::park::pass_watch();
}

/// A timer needs watching and no idle worker watches: a parked worker is
/// made to look again (it becomes the watcher), or, with none parked, one
/// is started if a processor is idle (registered with `park.rs`).
pub(super) fn kick_idle() {
    let s = sched();
    let parked = s.lock().ms.last().copied();
    match parked {
        // SAFETY: workers are never freed.
        Some(m) => unsafe { &*m }.parker.nudge(),
        None => wakep(),
    }
}

/// The scheduler's idle state in one line, for diagnosing a hang: the
/// processors idle, the workers spinning and parked (each parked one's
/// parker and pending wake), the timer heaps and the watch. Reads the
/// scheduler lock only if it is free.
pub fn sched_state() -> String {
    let s = sched();
    let idle = match s.try_lock() {
        Some(idle) => {
            let ms: Vec<String> = idle
                .ms
                .iter()
                .map(|&m| {
                    // SAFETY: workers are never freed.
                    let m = unsafe { &*m };
                    format!(
                        "m{}@{:p}{}",
                        m.id,
                        &m.parker,
                        if m.parker.is_woken() { "+woken" } else { "" }
                    )
                })
                .collect();
            format!(
                "workers={} idle_ms=[{}] locked_parked={} in_syscall={} idle_ps={}",
                idle.workers,
                ms.join(" "),
                idle.locked_parked,
                idle.in_syscall,
                idle.ps.len()
            )
        }
        None => "(scheduler lock held)".to_string(),
    };
    format!(
        "gomaxprocs={} npidle={} nmspinning={} global_empty={} {idle} {} {} poll_wake_pending={}",
        s.procs(),
        s.npidle.load(Ordering::SeqCst),
        s.nmspinning.load(Ordering::SeqCst),
        s.global().is_empty(),
        super::park::watch_state(),
        super::timer::heaps_state(),
        super::netpoll::wake_pending(),
    )
}
