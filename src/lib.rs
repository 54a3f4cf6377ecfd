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
//! - [`unwind`]: stack walks, among them one by frame pointers that a
//!   signal handler may call.
//!
//! ```
//! use defergc::{defer, gc};
//!
//! // func first(xs []*int) (v int, err string): a nil element panics, the
//! // deferred recover turns the panic into an error result.
//! fn first(xs: &[*const u64]) -> (u64, Option<String>) {
//!     defer::named((0, None), |f, out| {
//!         f.defer_with(move |d| {
//!             if let Some(v) = d.recover() {
//!                 out.update(|r| r.1 = Some(v.to_string()));
//!             }
//!         });
//!         match xs.first() {
//!             // SAFETY: the caller passes live GC objects or null.
//!             Some(&p) if !p.is_null() => (unsafe { p.read() }, None),
//!             _ => defer::panic("no first element"),
//!         }
//!     })
//! }
//!
//! let obj = gc::alloc(8).cast::<u64>();
//! // SAFETY: alloc returned 8 writable, aligned bytes.
//! unsafe { obj.as_ptr().write(42) };
//! gc::collect(); // obj is on our stack: kept
//! assert_eq!(first(&[obj.as_ptr()]), (42, None));
//! assert_eq!(first(&[]), (0, Some("no first element".into())));
//! ```
//!
//! See `README.md` for the features, the C ABI and the performance
//! figures, and `docs/design.md` for the layers and their invariants.

#![warn(unsafe_op_in_unsafe_fn, missing_docs)]

pub(crate) mod cache;
pub(crate) mod context;
pub mod defer;
pub mod ffi;
pub(crate) mod fresh;
pub mod gc;
pub mod go;
pub(crate) mod godebug;
#[cfg(feature = "precise")]
pub mod precise;
pub(crate) mod prof;
pub(crate) mod roots;
pub(crate) mod segmented;
pub(crate) mod signal;
pub mod tls;
pub mod unwind;

/// The seed and generator of the seeded stress tests, shared with the
/// integration tests.
#[cfg(test)]
#[path = "../tests/seeded/mod.rs"]
pub(crate) mod seeded;

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
