//! The program's main goroutine: starting it and waiting for its end
//! ([`run_main`]), and how it ended (returned, called Goexit, or left a
//! panic report for `go::run`'s caller). The scheduler says when it
//! finished ([`main_finished`]); the deadlock check asks whether it did.
//!
//! Uses nothing of the goroutine layer: whoever starts the main goroutine
//! (`spawn.rs`) passes `run_main` the start.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

/// Whether the main goroutine finished (returned or panicked).
static MAIN: Mutex<bool> = Mutex::new(false);
static MAIN_DONE: Condvar = Condvar::new();
static MAIN_GOEXIT: AtomicBool = AtomicBool::new(false);
static MAIN_RUNNING: AtomicBool = AtomicBool::new(false);

/// The report of the main goroutine's unrecovered panic, for `go::run`.
static MAIN_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// How long a returning main waits for another goroutine's panic that is
/// running its deferred calls (Go yields 1000 times; deferred calls of
/// compiled code may take longer than that, so a second).
const PANIC_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// Starts the main goroutine with `start` and waits until it has
/// finished; returns the report of its unrecovered panic, if it left one.
pub(crate) fn run_main(start: impl FnOnce()) -> Option<String> {
    if MAIN_RUNNING.swap(true, Ordering::AcqRel) {
        crate::abort("defergc: a second main goroutine while one runs (go::run or defergc_main)");
    }
    *MAIN.lock().unwrap_or_else(|e| e.into_inner()) = false;
    start();
    let mut done = MAIN.lock().unwrap_or_else(|e| e.into_inner());
    while !*done {
        done = MAIN_DONE.wait(done).unwrap_or_else(|e| e.into_inner());
    }
    drop(done);
    // As Go's runtime.main: a panic in another goroutine that is running
    // its deferred calls is waited for (a while), and one whose report is
    // being made, forever: that goroutine ends the process with status 2.
    crate::defer::wait_for_panics(PANIC_PATIENCE);
    MAIN_RUNNING.store(false, Ordering::Release);
    MAIN_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// The main goroutine called Goexit: the others run on, and the deadlock
/// check ends the program when none is left.
pub(crate) fn main_called_goexit() {
    MAIN_GOEXIT.store(true, Ordering::SeqCst);
}

/// The main goroutine panicked and `report` goes to [`run_main`]'s caller.
pub(crate) fn main_panicked(report: String) {
    *MAIN_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
}

/// The main goroutine finished (its worker says so).
pub(crate) fn main_finished() {
    if main_goexited() {
        // Go runs the other goroutines on; the deadlock check ends the
        // program when none is left.
        return;
    }
    *MAIN.lock().unwrap_or_else(|e| e.into_inner()) = true;
    MAIN_DONE.notify_all();
}

/// Whether the main goroutine finished (the program is over).
pub(crate) fn main_done() -> bool {
    *MAIN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether the main goroutine called Goexit.
pub(crate) fn main_goexited() -> bool {
    MAIN_GOEXIT.load(Ordering::SeqCst)
}

/// Prints Go's report of an unrecovered panic and ends the process with
/// status 2.
pub(crate) fn panicked(report: &str) -> ! {
    crate::defer::exit_go(report)
}
