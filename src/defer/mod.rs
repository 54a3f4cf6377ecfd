//! Go's defer, panic, recover and Goexit, with records the collector sees.
//!
//! A function body runs inside a [`Frame`] ([`call`], or [`named`] for a
//! named result). The body defers closures; they run newest first when the
//! body returns or unwinds, each right before its record is released.
//! Deferred closures that want to recover take a [`Deferred`] token.
//!
//! ```
//! use defergc::defer;
//!
//! // func safeDiv(a, b int) (q int, err error): recover turns the panic
//! // into an error result.
//! fn safe_div(a: i64, b: i64) -> (i64, Option<String>) {
//!     defer::named((0, None), |f, out| {
//!         f.defer_with(move |d| {
//!             if let Some(v) = d.recover() {
//!                 out.update(|r| r.1 = Some(v.to_string()));
//!             }
//!         });
//!         if b == 0 {
//!             defer::panic("division by zero");
//!         }
//!         (a / b, None)
//!     })
//! }
//! assert_eq!(safe_div(7, 2), (3, None));
//! assert_eq!(safe_div(1, 0), (0, Some("division by zero".into())));
//! ```
//!
//! # Where things live
//!
//! Each thread has one chain (`thread.rs`): its frames, a LIFO stack of
//! deferred-call records in root memory (a `roots::RootStack`), and
//! a stack of panic records whose values are in root memory too. A GC
//! pointer captured by a deferred closure, or carried by a panic value,
//! stays alive until the call has run or the panic is over. Records come
//! from per-thread chunks kept for reuse, so deferring costs no allocation
//! and no lock, and never triggers a collection.
//!
//! # Go semantics
//!
//! - Deferred calls run LIFO at frame exit, on return and on panic; defers
//!   made in a loop all run at exit; captured values are evaluated when the
//!   defer is made (closures capture by move).
//! - [`Deferred::recover`] returns the panic value only in a call that the
//!   panic's unwinding runs, only while that panic is the newest, and only
//!   once. A helper called by the deferred call cannot recover (it has no
//!   token), nor can a call that a deferred call's own frame runs on its
//!   normal return.
//! - After a recovery the frame's remaining calls run and it returns its
//!   named result's current value ([`named`]) or `R::default()` ([`call`]).
//! - A panic escaping a deferred call aborts the panic that ran the call:
//!   it can no longer be recovered, and is reported as Go reports it.
//! - [`Frame::defer_opt`] with `None` (a nil function) panics when run.
//! - [`panic_nil`] panics with [`PanicNilError`], "panic called with nil
//!   argument".
//! - [`goexit`] runs every deferred call, cannot be recovered, and still
//!   ends the goroutine (the thread's outermost frames, or a [`goroutine`])
//!   when a panic raised on the way is recovered.
//! - An unrecovered panic leaves the outermost frame as an ordinary Rust
//!   panic whose message is Go's report (`panic: v [recovered]`, and a tab
//!   before each later panic). An ordinary Rust panic (`panic!`, an index
//!   out of bounds) unwinding into a frame is a Go panic too: deferred
//!   calls run and may recover it; unrecovered, it leaves unchanged.

pub(crate) mod c;
mod cframe;
mod fault;
mod frame;
pub mod lowlevel;
mod panic;
mod record;
pub mod render;
mod thread;
pub mod traceback;

pub use cframe::CValue;
pub use fault::{catch_faults, catching_faults};
pub(crate) use fault::{catch_faults_by_default, catch_on_this_thread, set_overflow_check};
pub use frame::{
    call, call_try, goexit, goroutine, main, named, named_try, panic, panic_nil, raise, Deferred,
    Frame, Named, Panicking,
};
pub(crate) use frame::{outermost_body, Ended};
pub(crate) use panic::{not_dying, wait_for_panics};
pub use panic::{Goexit, PanicNilError, PanicValue, PlainError, RuntimeError};

/// The one way the runtime ends the process after an unrecovered panic or
/// a fatal error (every such path comes here; the one exception is a
/// goroutine's stack overflow, reported inside the fault handler, where
/// only `write(2)` and `_exit(2)` are safe):
///
/// 1. C's stdio buffers are flushed (`fflush(NULL)`): what a compiled
///    program printed before the panic appears before the report, as a Go
///    program's does (Go's os.Stdout is unbuffered);
/// 2. `text` (with a final newline) is written to standard error;
/// 3. the process ends with `_exit(2)`, Go's status: no `atexit` handlers
///    and no destructors run (Go's runtime runs none either, and other
///    threads may still be running the program's code). With
///    `GOTRACEBACK=crash` it ends with SIGABRT instead, as Go's does.
pub(crate) fn exit_go(text: &str) -> ! {
    let mut text = text.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let crash = traceback::level() == traceback::Level::Crash;
    // SAFETY: flushes C's buffers, writes initialised bytes to fd 2, then
    // ends the process (SIGABRT with its default action, or _exit).
    unsafe {
        libc::fflush(std::ptr::null_mut());
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let n = libc::write(2, rest.as_ptr().cast(), rest.len());
            if n <= 0 {
                if n < 0 && *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            rest = &rest[n as usize..];
        }
        if crash {
            libc::signal(libc::SIGABRT, libc::SIG_DFL);
            libc::raise(libc::SIGABRT);
        }
        libc::_exit(2)
    }
}
