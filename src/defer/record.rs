//! Deferred-call records on the thread's record stack.
//!
//! A record is the closure's bytes followed by one word, the address of a
//! type-specific *shim*, which ends exactly at the stack top:
//!
//! ```text
//!   start                          top - 8      top
//!   | padding | closure (F) ...   | shim fn ptr |
//! ```
//!
//! The record size is a constant of the closure type, so only the shim
//! knows it: when called it reports the record's start through
//! [`Call::start`] before running anything, so the drain loop can pop the
//! record whether the call returns or panics. The closure is copied out to
//! be called, but the record stays pushed until the call has finished:
//! whatever it captured is in root memory for the whole call.

use super::panic::{self, PanicRec};
use std::cell::Cell;
use std::mem::{align_of, size_of};

/// A record's shim: reports the record start into `call.start`, then runs
/// (and consumes) the closure stored below `top`.
pub(crate) type Shim = unsafe fn(top: *mut u8, call: &Call);

/// What a running deferred call knows about itself.
pub(crate) struct Call {
    /// Where the record begins; written by the shim before the call runs.
    pub(crate) start: Cell<*mut u8>,
    /// The panic (or Goexit) whose unwinding runs this call, or null when
    /// the frame is returning normally. `recover` compares against it.
    pub(crate) panic: *mut PanicRec,
}

/// Bytes a record of closure type `F` occupies: the closure rounded up to
/// whole words, room to align it, and the shim word.
pub(crate) const fn record_size<F>() -> usize {
    let words = size_of::<F>().div_ceil(8) * 8;
    let pad = if align_of::<F>() > 8 {
        align_of::<F>() - 8
    } else {
        0
    };
    words + pad + 8
}

/// Where the closure of a record ending at `top` lives.
#[inline(always)]
fn closure_at<F>(top: *mut u8) -> *mut F {
    let end = top as usize - 8;
    let at = (end - size_of::<F>()) & !(align_of::<F>() - 1);
    top.wrapping_sub(top as usize - at).cast()
}

/// Writes a record for `f` into `space` (from a push of
/// `record_size::<F>()` bytes).
///
/// # Safety
/// `space` is the start of exactly `record_size::<F>()` writable bytes.
#[inline(always)]
pub(crate) unsafe fn write<F>(space: *mut u8, f: F, shim: Shim) {
    let top = space.wrapping_add(record_size::<F>());
    // SAFETY: the closure slot and the shim word lie inside the space, and
    // closure_at aligns the closure for F.
    unsafe {
        closure_at::<F>(top).write(f);
        top.sub(8).cast::<Shim>().write(shim);
    }
}

/// Reads the shim of the record ending at `top`.
///
/// # Safety
/// A record ends at `top`.
#[inline(always)]
pub(crate) unsafe fn shim_at(top: *mut u8) -> Shim {
    // SAFETY: the last word of every record is its shim.
    unsafe { top.sub(8).cast::<Shim>().read() }
}

/// The shim of a plain closure.
///
/// # Safety
/// The record ending at `top` holds an `F` that has not been taken.
pub(crate) unsafe fn run_plain<F: FnOnce()>(top: *mut u8, call: &Call) {
    call.start.set(top.wrapping_sub(record_size::<F>()));
    // SAFETY: the record holds an F; reading it moves it out, and the
    // record is popped (never read again) after this call.
    let f = unsafe { closure_at::<F>(top).read() };
    f()
}

/// The shim of a closure that takes the call's [`super::Deferred`] token.
///
/// # Safety
/// As for [`run_plain`].
pub(crate) unsafe fn run_with<F: FnOnce(&super::Deferred<'_>)>(top: *mut u8, call: &Call) {
    call.start.set(top.wrapping_sub(record_size::<F>()));
    // SAFETY: as in run_plain.
    let f = unsafe { closure_at::<F>(top).read() };
    f(&super::Deferred::new(call))
}

/// The shim of a nil deferred function: Go panics when the call runs, not
/// when it is deferred.
///
/// # Safety
/// The record ending at `top` is an empty closure record.
pub(crate) unsafe fn run_nil(top: *mut u8, call: &Call) {
    call.start.set(top.wrapping_sub(record_size::<()>()));
    panic::panic_runtime_error(panic::NIL_DEREF)
}
