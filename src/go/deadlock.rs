//! Go's deadlock report: when every goroutine is blocked and nothing can
//! wake one, the program ends.
//!
//! The check runs each time a worker parks for lack of work, and again
//! when a parked worker fired timers that readied no one (under the
//! scheduler lock): if every worker is parked, none is in a system call,
//! no goroutine is queued, no timer is pending (in a heap, or being
//! fired by a parked worker: `timer::pending`), no goroutine waits on a
//! descriptor (the poller may wake it) and no foreign thread holds
//! a wake-up reference ([`hold_external`]), then every live goroutine is
//! waiting and will wait forever. Go prints
//! `fatal error: all goroutines are asleep - deadlock!` and the goroutine
//! list, and exits with status 2; so do we. If the main goroutine called
//! Goexit, the message is the one Go prints then.
//!
//! The scheduler runs [`check`] through the hook it is started with
//! (`config.rs`), so that it names nothing above it; this file asks it,
//! the timers, the poller and the main goroutine what could still wake
//! one.

use super::{park, procs, program, timer};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Foreign threads that may still make a goroutine runnable.
static EXTERNAL: AtomicUsize = AtomicUsize::new(0);

/// Says that code outside the goroutines (a foreign thread, a callback of
/// a C library) may ready a goroutine: until [`release_external`], parked
/// goroutines are not a deadlock.
pub(crate) fn hold_external() {
    EXTERNAL.fetch_add(1, Ordering::SeqCst);
}

/// Ends a [`hold_external`]. Aborts (`defergc:`) when there is none: the
/// count would wrap and turn the deadlock check off for good.
pub(crate) fn release_external() {
    if EXTERNAL
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_err()
    {
        crate::abort(
            "defergc: defergc_external_release: no external hold to release (more releases than holds)",
        );
    }
}

/// The check (see the module docs); `workers` created, `parked` of them,
/// `in_syscall` of them in a system call; `s` the scheduler (its count
/// of live goroutines), `launching` started and not queued yet.
pub(crate) fn check(
    workers: usize,
    parked: usize,
    in_syscall: usize,
    s: &procs::Sched,
    launching: &AtomicUsize,
) {
    if parked < workers || in_syscall > 0 || EXTERNAL.load(Ordering::SeqCst) > 0 {
        return;
    }
    // The count first, then the launches, then the queues: a goroutine
    // counted here was either still being launched when `launching` was
    // read, or is queued by the time the queues are (a launch queues the
    // goroutine before it stops counting as one).
    let goroutines = s.goroutine_count();
    if launching.load(Ordering::SeqCst) > 0 {
        return;
    }
    if timer::pending() || procs::any_queued() || park::io_waiters() > 0 {
        return;
    }
    if goroutines == 0 {
        if program::main_goexited() {
            fatal("no goroutines (main called runtime.Goexit) - deadlock!");
        }
        return;
    }
    if program::main_done() {
        // main returned: the program is over, whatever still waits.
        return;
    }
    fatal("all goroutines are asleep - deadlock!");
}

/// Go's fatal error: the message, every goroutine's section (its
/// frames from `dump.rs`'s walk), status 2.
pub(crate) fn fatal(message: &str) -> ! {
    let mut text = format!("fatal error: {message}\n");
    // (No other goroutine runs meanwhile: every worker is parked.)
    text.push_str(&super::dump::sections(None));
    crate::defer::exit_go(&text)
}

/// While it lives, code outside the goroutines (a foreign thread, a C
/// library's callback) may ready a goroutine, so parked goroutines are not
/// a deadlock.
#[must_use = "the hold ends when dropped"]
pub struct ExternalWaker(());

impl ExternalWaker {
    /// Starts a hold.
    pub fn hold() -> ExternalWaker {
        hold_external();
        ExternalWaker(())
    }
}

impl Drop for ExternalWaker {
    fn drop(&mut self) {
        release_external();
    }
}
