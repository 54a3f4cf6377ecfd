//! defergc: Go's defer/panic/recover on a garbage-collected heap, for the
//! runtimes of compiled Go-like languages and for Rust programs.
//!
//! - [`gc`]: the Boehm collector (vendored bdwgc) behind a safe API, with
//!   automatic thread registration; malloc/free under the `nogc` feature.
//! - [`tls`]: per-thread slots that the collector scans, with destructors
//!   at thread exit.
//! - [`defer`]: Go's defer / panic / recover / Goexit, with deferred-call
//!   records and panic values in memory the collector scans.
//! - [`ffi`]: the C ABI for compiler-generated code (`include/defergc.h`).
//! - `precise` (feature `precise`): a second allocator, a precise
//!   handle-based collector with per-thread shadow stacks.
//!
//! See `README.md` for the features, the C ABI and the performance figures.

#![warn(unsafe_op_in_unsafe_fn, missing_docs)]

pub mod defer;
pub mod ffi;
pub mod gc;
#[cfg(feature = "precise")]
pub mod precise;
pub(crate) mod roots;
pub mod tls;

/// Writes `msg` to stderr and aborts the process. Used for misuse that
/// cannot be reported as an error (see docs/design.md invariant 8).
#[cold]
pub(crate) fn abort(msg: &str) -> ! {
    let line = format!("{msg}\n");
    // SAFETY: writes initialised bytes to fd 2; no allocation can fail here
    // that would matter, and no lock is taken.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    std::process::abort()
}
