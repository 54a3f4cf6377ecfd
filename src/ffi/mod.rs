//! The C ABI: everything the rest of the crate offers, callable from
//! compiler-generated code, mirrored by `include/defergc.h`.
//!
//! Every entry point runs its Rust body through `entry` (or, when it
//! runs deferred calls or raises panics, hands unwinding on by the rule
//! below), so no Rust panic crosses an `extern "C"` boundary (docs/design.md
//! invariant 5). Misuse that cannot be reported as an error code aborts
//! with a message that starts with `defergc:` and names the misuse.
//!
//! # The unwinding rule
//!
//! Rust frames ([`crate::defer::call`]) and C-protocol frames
//! (`defergc_frame_enter`) share one chain per thread. A panic is
//! delivered to the innermost frame:
//!
//! - a C frame still in its body is jumped to (`siglongjmp` to the buffer
//!   its function armed with `DEFERGC_FRAME_ARM`); only compiled code and
//!   the runtime's own frames, which own nothing, are skipped;
//! - a Rust frame, or any frame running its deferred calls, is unwound to:
//!   the runtime raises Rust unwinding from an `extern "C-unwind"`
//!   function, through the compiled code in between (which must have unwind
//!   tables, the default for C on x86-64 Linux, and no cleanups).
//!
//! So Rust code that compiled code calls must enter through [`guard`]: a
//! Rust or Go panic escaping it is delivered by the same rule, never
//! unwound into compiled frames that cannot run their deferred calls.
//! With no frame left and no Rust boundary around (`defer::goroutine`, or
//! a thread from `defergc_thread_create`), an unrecovered panic prints
//! Go's report and exits with status 2, and Goexit ends the thread.

mod chan;
mod defer;
mod dump;
mod gc;
mod go;
mod memory;
mod net;
mod pprof;
mod precise;
mod prof;
mod sync;
mod tls;

pub use self::chan::*;
pub use self::defer::*;
pub use self::dump::*;
pub use self::gc::*;
pub use self::go::*;
pub use self::memory::*;
pub use self::precise::*;
pub use self::prof::*;
pub use self::sync::*;
pub use self::tls::*;
pub use crate::defer::c::{CFrame as Frame, CallToken as Call};

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs Rust code called from compiled code. A panic escaping `f` (an
/// ordinary Rust panic, or a Go panic from a Rust frame) is delivered to
/// the innermost frame by the unwinding rule above, so use `guard` inside
/// an `extern "C-unwind"` function.
///
/// ```
/// #[no_mangle]
/// pub extern "C-unwind" fn my_runtime_callback(x: i64) -> i64 {
///     defergc::ffi::guard(|| x * 2)
/// }
/// ```
// Inlined into each entry point: a call of its own (and of the closure)
// was a measurable share of a channel operation from C.
#[inline(always)]
pub fn guard<R>(f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(payload) => crate::defer::c::rethrow(payload),
    }
}

/// Runs the body of an entry point that runs no user code: a panic here is
/// a bug in defergc, reported and turned into an abort.
fn entry<R>(name: &str, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            crate::abort(&format!("defergc: {name}: internal panic: {why}"))
        }
    }
}

/// What a C program linking the static library (`libdefergc.a`) links
/// after it: the system libraries the Rust standard library needs. (The
/// shared library and `pkg-config --libs defergc` need none of this.)
pub const STATIC_LINK_LIBS: &[&str] = &["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl"];

/// Error codes returned by C entry points (0 is success).
pub mod errors {
    /// An argument was invalid (null where a value is needed, an unknown
    /// key, ...).
    pub const EINVAL: i32 = -1;
    /// Out of memory.
    pub const ENOMEM: i32 = -2;
    /// A defer record was freed twice.
    pub const EDOUBLEFREE: i32 = -3;
    /// The pointer is not a defer record.
    pub const ENOTRECORD: i32 = -4;
    /// The collector had already started (`defergc_init_with`).
    pub const EALREADY: i32 = -5;
    /// A file could not be written.
    pub const EIO: i32 = -6;
    /// No CPU profile is on (`defergc_stop_cpu_profile`).
    pub const ENOTPROFILING: i32 = -7;
    /// Called outside a goroutine where one is needed.
    pub const ENOTGOROUTINE: i32 = -20;
    /// An argument block larger than the limit (`DEFERGC_GO_MAX_ARGS`).
    pub const EARGSIZE: i32 = -21;
    /// The descriptor is closed or being closed (Go's `net.ErrClosed`:
    /// "use of closed network connection").
    pub const ECLOSED: i32 = -30;
    /// The deadline passed (Go's `os.ErrDeadlineExceeded`: "i/o timeout").
    pub const ETIMEOUT: i32 = -31;
    /// Not a live poller handle: never handed out, or closed.
    pub const EBADHANDLE: i32 = -32;
    /// A system error: the code is `EOS - errno`.
    pub const EOS: i32 = -1000;
}
