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

use super::panic;
use super::state::{Call, CallToken};
use super::value::NIL_DEREF;
use std::mem::{align_of, size_of};

/// A record's shim: reports the record start into `call.start`, then runs
/// (and consumes) the closure stored below `top`.
pub(crate) type Shim = unsafe fn(top: *mut u8, call: &Call);

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
pub(crate) fn closure_at<F>(top: *mut u8) -> *mut F {
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

/// The shim of a nil deferred function: Go panics when the call runs, not
/// when it is deferred.
///
/// # Safety
/// The record ending at `top` is an empty closure record.
pub(crate) unsafe fn run_nil(top: *mut u8, call: &Call) {
    call.start.set(top.wrapping_sub(record_size::<()>()));
    panic::panic_runtime_error(NIL_DEREF)
}

/// A deferred function of compiled code: called with its argument bytes
/// (in the record, so in root memory for the whole call) and its token.
pub(crate) type CFn = unsafe extern "C-unwind" fn(args: *mut u8, call: *const CallToken);

/// Argument blocks up to this many words get a record whose shim knows
/// their length: `[args][fn][shim]`. Longer ones also store the length.
const C_FIXED_WORDS: usize = 8;

/// Bytes a C record with `len` argument bytes occupies: the arguments
/// rounded up to words, the function and the shim, and the length when it
/// is more than [`C_FIXED_WORDS`] words.
pub(crate) const fn c_record_size(len: usize) -> usize {
    let words = len.div_ceil(8);
    words * 8 + if words <= C_FIXED_WORDS { 16 } else { 24 }
}

/// Writes a C record into `space` (from a push of `c_record_size(len)`).
///
/// # Safety
/// `space` holds `c_record_size(len)` writable bytes and `args` `len`
/// readable ones.
#[inline(always)]
pub(crate) unsafe fn write_c(space: *mut u8, f: Option<CFn>, args: *const u8, len: usize) {
    let words = len.div_ceil(8);
    let top = space.wrapping_add(c_record_size(len));
    // SAFETY: every write lies inside the space; args do not overlap it
    // (the space is fresh stack memory).
    unsafe {
        if len == words * 8 && words <= C_FIXED_WORDS {
            // Whole words: a few moves instead of a memcpy call.
            for w in 0..words {
                let word = args.cast::<u64>().add(w).read_unaligned();
                space.cast::<u64>().add(w).write(word);
            }
        } else {
            std::ptr::copy_nonoverlapping(args, space, len);
        }
        top.sub(16).cast::<Option<CFn>>().write(f);
        let shim: Shim = match words {
            0 => run_c_fixed::<0>,
            1 => run_c_fixed::<1>,
            2 => run_c_fixed::<2>,
            3 => run_c_fixed::<3>,
            4 => run_c_fixed::<4>,
            5 => run_c_fixed::<5>,
            6 => run_c_fixed::<6>,
            7 => run_c_fixed::<7>,
            8 => run_c_fixed::<8>,
            _ => {
                top.sub(24).cast::<usize>().write(words);
                run_c_long
            }
        };
        top.sub(8).cast::<Shim>().write(shim);
    }
}

/// Calls a C record's function with its argument bytes, which start at
/// `start`; a nil function panics as Go's does.
///
/// # Safety
/// A C record starting at `start` ends at `top`.
#[inline(always)]
unsafe fn call_c(top: *mut u8, start: *mut u8, call: &Call) {
    call.start.set(start);
    // SAFETY: write_c put the function right below the shim.
    match unsafe { top.sub(16).cast::<Option<CFn>>().read() } {
        // SAFETY: compiled code handed us this function for these bytes.
        Some(f) => unsafe { f(start, call.c_token()) },
        None => panic::panic_runtime_error(NIL_DEREF),
    }
}

/// The shim of a C record with `WORDS` words of arguments.
///
/// # Safety
/// The record ending at `top` is such a record.
unsafe fn run_c_fixed<const WORDS: usize>(top: *mut u8, call: &Call) {
    let start = top.wrapping_sub(WORDS * 8 + 16);
    // SAFETY: forwarded from the caller.
    unsafe { call_c(top, start, call) }
}

/// The shim of a C record with more than [`C_FIXED_WORDS`] words of
/// arguments; their count is stored below the function.
///
/// # Safety
/// The record ending at `top` is such a record.
unsafe fn run_c_long(top: *mut u8, call: &Call) {
    // SAFETY: write_c stored the word count there for long records.
    let words = unsafe { top.sub(24).cast::<usize>().read() };
    let start = top.wrapping_sub(words * 8 + 24);
    // SAFETY: forwarded from the caller.
    unsafe { call_c(top, start, call) }
}
