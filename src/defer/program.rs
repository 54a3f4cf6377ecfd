//! A Go program's `main` on a plain thread: faults caught by default,
//! Go's report and exit status for an unrecovered panic. The top of the
//! defer layer: it uses the frames (`frame.rs`) and the fault policy
//! (`fault.rs`).

/// Runs `body` as a Go program's `main` function, on this thread, with
/// Go's process behaviour: returns 0 when it returns; an unrecovered panic
/// (a Go panic, a Rust panic, or a fault: faults are caught unless the
/// program said otherwise, see [`super::catch_faults`]) prints Go's
/// report, with no `thread 'main' panicked at` line, and ends the process
/// with status 2; Goexit ends it with Go's "no goroutines" deadlock
/// message, status 2. For a program with goroutines, `go::main` is the
/// same on the scheduler.
///
/// ```no_run
/// use defergc::defer;
///
/// fn main() {
///     std::process::exit(defer::main(|| {
///         defer::call(|f| {
///             f.defer(|| println!("deferred"));
///             defer::panic("boom") // "panic: boom", goroutine 1, status 2
///         })
///     }))
/// }
/// ```
pub fn main(body: impl FnOnce()) -> i32 {
    super::fault::catch_faults_by_default();
    quiet_panics_in_main();
    crate::fresh::with(&IN_MAIN, |m| m.set(true));
    let ended = super::frame::outermost_body(body);
    crate::fresh::with(&IN_MAIN, |m| m.set(false));
    match ended {
        super::frame::Ended::Returned(()) => 0,
        super::frame::Ended::Goexit => super::exit::exit_go(
            "fatal error: no goroutines (main called runtime.Goexit) - deadlock!",
        ),
        super::frame::Ended::Panicked(report) => super::exit::exit_go(&report),
    }
}

thread_local! {
    /// Whether this thread runs [`main`]'s body.
    static IN_MAIN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Go prints nothing when a panic starts: Rust's hook stays quiet on a
/// thread running [`main`] (its report comes at the end, if unrecovered).
fn quiet_panics_in_main() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !crate::fresh::with(&IN_MAIN, |m| m.get()) {
                previous(info);
            }
        }));
    });
}
