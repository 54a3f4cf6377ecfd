//! The profiling signal: a CPU-time timer per thread that runs Go code
//! (Go's `setThreadCPUProfiler`), and the `SIGPROF` entry that samples
//! the interrupted stack into the CPU profile's ring (`prof::ring`).
//!
//! # Threads
//!
//! A thread that runs goroutines (each worker) or that profiles itself
//! (the thread that starts a profile, the program's thread) is
//! [`register`]ed once: its own stack and its signal stack are noted for
//! the handler, and while a profile is on it gets a timer of its own,
//! `timer_create` on its CPU-time clock with `SIGEV_THREAD_ID` (the
//! signal goes to that thread, after each `period` of CPU time it used).
//! [`start`] gives every registered thread its timer, a thread
//! registered meanwhile gets one at once, [`stop`] deletes them all, and
//! a thread that exits deletes its own (the registry's lock orders these:
//! a timer is made for a thread only while it is known to be alive).
//!
//! # The handler
//!
//! The entry runs in the interrupted thread, async-signal-safe: it reads
//! the interrupted pc, frame pointer and stack pointer, picks the stack
//! the stack pointer lies in (the goroutine's stack as the go layer's
//! hook names it, the thread's own stack, or its signal stack; none:
//! only the pc is kept), walks the frame-pointer chain inside that range
//! only (`unwind::walk_from`), and pushes the stack and the current label
//! set (a word the go layer's hook hands over: the label set stays alive
//! until the profile is written) into the ring. A full ring counts the
//! sample as lost. [`stop`] waits until no handler is inside the entry,
//! so the reader's last drain sees every sample taken.
//!
//! # Threads that are not registered
//!
//! The threads the runtime does not start or know (bdwgc's marker
//! threads, a C library's) get no timer of their own. While a profile is
//! on, a process-wide timer also runs (`setitimer(ITIMER_PROF)`, as Go's
//! `setProcessCPUProfiler`): the kernel sends its `SIGPROF` (`si_code`
//! `SI_KERNEL`) to the thread that was running when the process's CPU
//! time crossed the next period, so each thread receives its share. A
//! registered thread drops those (its own timer samples it); another
//! thread keeps the interrupted pc alone (its stack's bounds are not
//! known, so no walk), unless the signal woke it from a blocking system
//! call: the kernel also sends it to a sleeping thread when the running
//! ones block `SIGPROF` (a registered thread handling its own timer's
//! signal), and a sleeping thread used none of the time. bdwgc's markers
//! block every signal but `SIGPROF` (`gc/boehm.rs` starts them so).
//!
//! A `SIGPROF` that is not one of our timers' (another `si_code` or
//! value), or that arrives while no profile is on, goes to the handler
//! installed before ours, if there is one; else it is dropped (the
//! default action of `SIGPROF` would end the process). While a profile
//! is on, the process-wide timer is ours (a program's own
//! `ITIMER_PROF` is replaced, as Go's profiler does).

use super::context::Interrupted;
use super::handler::{self, Action};
use crate::prof::ring::{Ring, DEPTH};
use crate::unwind::{walk_from, Regs, StackRange};
use std::cell::Cell;
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};

/// What the go layer tells the handler about the interrupted thread, for
/// a stack pointer: the bounds of the goroutine stack running there
/// (`(0, 0)` for none) and the current label set (0 for none).
/// Async-signal-safe.
pub(crate) type WhereHook = fn(sp: usize) -> (usize, usize, usize);

static WHERE: AtomicUsize = AtomicUsize::new(0);

/// Registers the go layer's hook (see [`WhereHook`]).
pub(crate) fn set_where_hook(hook: WhereHook) {
    WHERE.store(hook as usize, Ordering::Release);
}

/// The value our timers' signals carry (`sigev_value`), to tell them
/// from any other `SIGPROF`.
const COOKIE: usize = 0x7072_6f66; // "prof"

/// Records the ring holds: at 1 kHz on a few threads, a second's worth
/// and more between two drains of the reader.
const RING_RECORDS: usize = 2048;

/// One registered thread.
struct Thread {
    tid: libc::pid_t,
    pthread: libc::pthread_t,
    stack: StackRange,
    alt: StackRange,
    /// Its timer while a profile is on (under [`REGISTRY`]'s lock).
    timer: Option<libc::timer_t>,
}

/// The registered threads (boxed: the handler reads its own thread's
/// record through [`THIS`]).
struct Registry {
    // Boxed: THIS points at each record, which must not move as the
    // vector grows.
    #[allow(clippy::vec_box)]
    threads: Vec<Box<Thread>>,
    /// Nanoseconds of CPU time between samples while a profile is on.
    period: Option<i64>,
}

// SAFETY: the timer ids and pthread handles are plain values used under
// the lock.
unsafe impl Send for Registry {}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    threads: Vec::new(),
    period: None,
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// The calling thread's record, or null: a `const` cell without a
    /// destructor, so the handler reads it without allocating.
    static THIS: Cell<*const Thread> = const { Cell::new(std::ptr::null()) };
}

/// Whether a profile is on: the handler samples only then.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Handlers inside the sampling entry now.
static INFLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Samples the handler took since start (lost ones included).
static TAKEN: AtomicI64 = AtomicI64::new(0);

static RING: OnceLock<Ring> = OnceLock::new();

/// The ring the handler writes and the profile's reader drains.
pub(crate) fn ring() -> &'static Ring {
    RING.get_or_init(|| Ring::new(RING_RECORDS))
}

/// Why a profile could not start or stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Start while a profile is on.
    Already,
    /// Stop while none is.
    NotRunning,
}

/// The calling thread's own stack, as pthreads knows it.
fn own_stack() -> StackRange {
    StackRange::of_thread().unwrap_or(StackRange { lo: 0, hi: 0 })
}

/// The calling thread's signal stack, if it has one.
fn own_alt_stack() -> StackRange {
    // SAFETY: sigaltstack with a null new stack only reads the current
    // one into a local.
    let ss = unsafe {
        let mut ss: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut ss) != 0 {
            return StackRange { lo: 0, hi: 0 };
        }
        ss
    };
    if ss.ss_flags & libc::SS_DISABLE != 0 || ss.ss_sp.is_null() {
        return StackRange { lo: 0, hi: 0 };
    }
    let lo = ss.ss_sp as usize;
    StackRange {
        lo,
        hi: lo + ss.ss_size,
    }
}

/// Registers the calling thread as one a CPU profile samples (once per
/// thread; again after its signal stack changed). While a profile is on
/// it gets its timer at once.
pub(crate) fn register() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        crate::gc::thread::on_thread_exit(crate::gc::thread::ExitPhase::RuntimeState, unregister)
    });
    let mut r = registry();
    let this = crate::fresh::with(&THIS, Cell::get);
    // SAFETY: a registered thread's record lives until it unregisters,
    // on this thread.
    if let Some(t) = unsafe { this.as_ref() } {
        if t.alt == own_alt_stack() {
            return;
        }
    }
    unregister_locked(&mut r);
    let mut t = Box::new(Thread {
        // SAFETY: gettid and pthread_self have no preconditions.
        tid: unsafe { libc::gettid() },
        // SAFETY: as above.
        pthread: unsafe { libc::pthread_self() },
        stack: own_stack(),
        alt: own_alt_stack(),
        timer: None,
    });
    if let Some(period) = r.period {
        t.timer = make_timer(&t, period);
    }
    crate::fresh::with(&THIS, |c| c.set(&*t));
    compiler_fence(Ordering::SeqCst);
    r.threads.push(t);
    drop(r);
    crate::gc::thread::arm_exit_sequence();
}

/// The calling thread is no longer sampled (its exit, or before a new
/// registration): its timer deleted, its record freed.
fn unregister() {
    let mut r = registry();
    unregister_locked(&mut r);
}

fn unregister_locked(r: &mut Registry) {
    let this = crate::fresh::with(&THIS, |c| c.replace(std::ptr::null()));
    // The handler on this thread no longer reads the record.
    compiler_fence(Ordering::SeqCst);
    if this.is_null() {
        return;
    }
    if let Some(at) = r.threads.iter().position(|t| std::ptr::eq(&**t, this)) {
        let t = r.threads.swap_remove(at);
        if let Some(timer) = t.timer {
            // SAFETY: a timer this module created and did not delete.
            unsafe { libc::timer_delete(timer) };
        }
    }
}

/// A timer on `t`'s CPU-time clock that sends it `SIGPROF` every
/// `period` nanoseconds of its CPU time; `None` if the system refused.
/// `t` is alive (the caller holds the registry's lock).
fn make_timer(t: &Thread, period: i64) -> Option<libc::timer_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: t.pthread is a live thread (registered, under the lock);
    // clock is a local out-parameter.
    if unsafe { libc::pthread_getcpuclockid(t.pthread, &mut clock) } != 0 {
        return None;
    }
    // SAFETY: a zeroed sigevent filled in for SIGEV_THREAD_ID; timer is
    // a local out-parameter.
    unsafe {
        let mut sev: libc::sigevent = std::mem::zeroed();
        sev.sigev_notify = libc::SIGEV_THREAD_ID;
        sev.sigev_signo = libc::SIGPROF;
        sev.sigev_value = libc::sigval {
            sival_ptr: COOKIE as *mut libc::c_void,
        };
        sev.sigev_notify_thread_id = t.tid;
        let mut timer: libc::timer_t = std::mem::zeroed();
        if libc::timer_create(clock, &mut sev, &mut timer) != 0 {
            return None;
        }
        // The first expiry somewhere in the first period (spread by
        // thread), so that threads started together do not tick in step
        // with code that runs at a period of its own.
        let first = 1
            + (t.tid as i64)
                .wrapping_mul(2_654_435_761)
                .rem_euclid(period);
        let spec = libc::itimerspec {
            it_interval: timespec(period),
            it_value: timespec(first),
        };
        if libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) != 0 {
            libc::timer_delete(timer);
            return None;
        }
        Some(timer)
    }
}

fn timespec(ns: i64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Starts sampling every registered thread every `period` nanoseconds of
/// its CPU time (the calling thread registered first).
pub(crate) fn start(period: i64) -> Result<(), Refused> {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| handler::install(libc::SIGPROF, on_prof, true));
    ring();
    register();
    let mut r = registry();
    if r.period.is_some() {
        return Err(Refused::Already);
    }
    let period = period.max(1);
    r.period = Some(period);
    TAKEN.store(0, Ordering::Relaxed);
    ACTIVE.store(true, Ordering::SeqCst);
    for t in r.threads.iter_mut() {
        t.timer = make_timer(t, period);
    }
    set_process_timer(period);
    Ok(())
}

/// Sets the process-wide profiling timer to `period` nanoseconds of the
/// process's CPU time (0: off).
fn set_process_timer(period: i64) {
    let us = (period / 1000).max(i64::from(period > 0));
    let tv = libc::timeval {
        tv_sec: (us / 1_000_000) as libc::time_t,
        tv_usec: (us % 1_000_000) as libc::suseconds_t,
    };
    let it = libc::itimerval {
        it_interval: tv,
        it_value: tv,
    };
    // SAFETY: setitimer reads the local value; the old one is not asked for.
    unsafe { libc::setitimer(libc::ITIMER_PROF, &it, std::ptr::null_mut()) };
}

/// Stops sampling: every timer deleted, and no handler left inside the
/// sampling entry when it returns (the ring then holds every sample).
pub(crate) fn stop() -> Result<(), Refused> {
    let mut r = registry();
    if r.period.take().is_none() {
        return Err(Refused::NotRunning);
    }
    ACTIVE.store(false, Ordering::SeqCst);
    set_process_timer(0);
    for t in r.threads.iter_mut() {
        if let Some(timer) = t.timer.take() {
            // SAFETY: a timer this module created and did not delete.
            unsafe { libc::timer_delete(timer) };
        }
    }
    drop(r);
    while INFLIGHT.load(Ordering::SeqCst) != 0 {
        std::thread::yield_now();
    }
    Ok(())
}

/// Samples the handler took since the profile started.
pub(crate) fn taken() -> i64 {
    TAKEN.load(Ordering::Relaxed)
}

/// Before a fork: the registry's lock is held across it, so the child
/// finds it consistent.
pub(crate) fn fork_prepare() {
    crate::gc::fork::held::keep(registry());
}

/// In a forked child: the parent's profile is not the child's (its
/// timers did not come along, nor did the threads registered). The child
/// starts with no profile and only its own thread registered again when
/// it profiles.
pub(crate) fn forget_in_child() {
    let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    r.period = None;
    ACTIVE.store(false, Ordering::SeqCst);
    INFLIGHT.store(0, Ordering::SeqCst);
    let this = crate::fresh::with(&THIS, Cell::get);
    // Records of threads that do not exist here are leaked (their
    // handles mean nothing); the forking thread's is kept.
    for t in std::mem::take(&mut r.threads) {
        if std::ptr::eq(&*t, this) {
            let mut t = t;
            t.timer = None;
            // The same thread, under the child's thread id.
            // SAFETY: gettid has no preconditions.
            t.tid = unsafe { libc::gettid() };
            r.threads.push(t);
        } else {
            std::mem::forget(t);
        }
    }
    while ring().pop(&mut Vec::new()).is_some() {}
    ring().take_lost();
}

/// The value a timer's signal carries, for `SI_TIMER` signals (the
/// kernel's siginfo layout of a POSIX timer's signal on 64-bit Linux).
fn timer_value(intr: &Interrupted) -> Option<usize> {
    #[repr(C)]
    struct TimerInfo {
        signo: libc::c_int,
        errno: libc::c_int,
        code: libc::c_int,
        _pad: libc::c_int,
        tid: libc::c_int,
        overrun: libc::c_int,
        value: usize,
    }
    if intr.code() != libc::SI_TIMER || !cfg!(target_pointer_width = "64") {
        return None;
    }
    // SAFETY: a SI_TIMER siginfo has this layout, and the kernel's
    // siginfo (128 bytes) holds it.
    Some(unsafe { (*intr.info().cast::<TimerInfo>()).value })
}

/// The `SIGPROF` entry (see the module docs).
fn on_prof(intr: &mut Interrupted) -> Action {
    let ours = timer_value(intr) == Some(COOKIE);
    // The process-wide timer's, while a profile is on.
    let process = !ours && intr.code() == libc::SI_KERNEL && ACTIVE.load(Ordering::SeqCst);
    if !ours && !process {
        return if handler::has_previous(libc::SIGPROF) {
            Action::PassOn
        } else {
            Action::Done
        };
    }
    INFLIGHT.fetch_add(1, Ordering::SeqCst);
    // A registered thread's own timer samples it: the process-wide
    // timer's signal is for the others, and only for one that was
    // running. The kernel hands a process-wide signal to any thread that
    // does not block it, a sleeping one too (while the running thread
    // handles its own timer's signal with SIGPROF blocked): that thread
    // used none of the time.
    let registered = !crate::fresh::try_with(&THIS, Cell::get)
        .unwrap_or(std::ptr::null())
        .is_null();
    let keep = ours || (!registered && !intr.in_system_call());
    if ACTIVE.load(Ordering::SeqCst) && keep {
        sample(intr);
    }
    INFLIGHT.fetch_sub(1, Ordering::SeqCst);
    Action::Done
}

/// Walks the interrupted stack into the ring.
fn sample(intr: &Interrupted) {
    let regs = Regs {
        pc: intr.pc(),
        fp: intr.fp(),
        sp: intr.sp(),
    };
    let hook = WHERE.load(Ordering::Acquire);
    let (g_lo, g_hi, labels) = if hook == 0 {
        (0, 0, 0)
    } else {
        // SAFETY: only set_where_hook stores here, and it stores WhereHooks.
        let hook = unsafe { std::mem::transmute::<usize, WhereHook>(hook) };
        hook(regs.sp)
    };
    let this = crate::fresh::try_with(&THIS, Cell::get).unwrap_or(std::ptr::null());
    // SAFETY: the record lives while it is this thread's (unregistering
    // clears THIS before freeing it, on this thread).
    let this = unsafe { this.as_ref() };
    let inside = |r: StackRange| r.lo <= regs.sp && regs.sp < r.hi;
    let goroutine = StackRange { lo: g_lo, hi: g_hi };
    let range = if inside(goroutine) {
        goroutine
    } else {
        match this {
            Some(t) if inside(t.stack) => t.stack,
            Some(t) if inside(t.alt) => t.alt,
            // Unknown: the pc only.
            _ => StackRange { lo: 0, hi: 0 },
        }
    };
    let mut pcs = [0usize; DEPTH];
    let n = walk_from(regs, range, &mut pcs);
    TAKEN.fetch_add(1, Ordering::Relaxed);
    ring().push(&pcs[..n], labels);
}
