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
//! Each execution context (a thread's own, or a goroutine's) has one chain
//! (`state.rs`): its frames, a LIFO stack of deferred-call records in root
//! memory (a `roots::RootStack`), and a stack of panic records whose
//! values are in root memory too. A GC
//! pointer captured by a deferred closure, or carried by a panic value,
//! stays alive until the call has run or the panic is over. Records come
//! from per-thread chunks kept for reuse, so deferring costs no allocation
//! and no lock, and never triggers a collection.
//!
//! # Layers
//!
//! Bottom up, each file using only those below it: `render.rs` and
//! `traceback.rs` (how values and frames print), `value.rs` (panic
//! values), `state.rs` (a context's chain and the records in it),
//! `exit.rs` (Go's exit), `panic.rs` (the panic state machine: raising,
//! delivering, recovering, reporting), `lowlevel.rs` and `record.rs`
//! (records), `frame.rs` (Rust frames), `cframe.rs` (frames of compiled
//! code), `fault.rs` (what a fault becomes, registered with
//! `crate::signal`), and on top `program.rs` (a program's `main`) and
//! `c.rs` (the C protocol's surface).
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
mod exit;
mod fault;
mod frame;
pub mod lowlevel;
mod panic;
mod program;
mod record;
pub mod render;
mod state;
pub mod traceback;
mod value;

pub(crate) use crate::signal::catch_on_this_thread;
pub(crate) use exit::exit_go;
pub(crate) use fault::catch_faults_by_default;
pub use fault::{catch_faults, catching_faults};
pub use frame::{
    call, call_try, goexit, goroutine, named, named_try, panic, panic_nil, raise, Deferred, Frame,
    Named, Panicking,
};
pub(crate) use frame::{outermost_body, Ended};
pub(crate) use panic::{not_dying, wait_for_panics};
pub use program::main;
pub use value::{CValue, Goexit, PanicNilError, PanicValue, PlainError, RuntimeError};
