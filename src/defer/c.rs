//! The C protocol: everything a compiled frame needs of `defer`, and all
//! that the C ABI (`ffi`) uses of its insides.
//!
//! A compiled function enters a frame ([`enter`]), defers calls into it
//! ([`defer`]), and leaves it ([`leave`]) or, when a panic landed in it,
//! runs its deferred calls ([`unwind`]). A deferred call may [`recover`]
//! with the token it was given. Compiled code raises panics
//! ([`panic_at`]) and Goexit ([`goexit`]); Rust code it calls hands a Rust
//! panic back to it ([`rethrow`]). Frames, records and the panic list stay
//! private to `defer`.

use super::cframe;
use super::panic;
use super::state::DeferState;
use super::traceback::Origin;
use super::value::PanicValue;
use std::any::Any;

pub use super::cframe::CFrame;
pub(crate) use super::cframe::{approx_sp, defer, enter, leave, recover, unwind};
pub(crate) use super::exit::exit_go;
pub(crate) use super::panic::recovered_as_iface;
pub(crate) use super::record::CFn;
pub use super::state::CallToken;

/// Go's `panic`, raised by compiled code at return address `pc` with stack
/// pointer `sp` (or an address below it): checks that the innermost frame
/// still belongs to a live function, makes the value (`value` may abort on
/// a malformed one), and delivers the panic to the innermost frame.
pub(crate) fn panic_at(pc: usize, sp: usize, value: impl FnOnce() -> PanicValue) -> ! {
    let th = DeferState::current();
    cframe::check_caller(th, sp);
    panic::push_value(th, value(), Origin::Return(pc));
    cframe::deliver_from_c(th, sp)
}

/// Go's `runtime.Goexit()`, called by compiled code.
pub(crate) fn goexit() -> ! {
    let th = DeferState::current();
    panic::push_goexit(th);
    cframe::deliver_from_c(th, approx_sp())
}

/// A Rust panic (`payload`) caught where Rust code called by compiled code
/// returns to it: it goes on as a Go panic in the compiled frames.
pub(crate) fn rethrow(payload: Box<dyn Any + Send>) -> ! {
    let th = DeferState::current();
    panic::adopt(th, payload);
    cframe::deliver_from_c(th, approx_sp())
}
