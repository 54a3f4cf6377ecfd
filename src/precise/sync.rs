//! The synchronisation primitives of the collector's protocol: the
//! handshake rounds (`mutator.rs`), the marking state and barrier log
//! (`marking.rs`), and the per-thread words they touch.
//!
//! They are std's, or loom's under `cfg(loom)` (crossbeam's `primitive`
//! pattern), so that `tests/precise_loom.rs` runs the collector's own
//! handshake, barrier and mark-cycle code under loom's exhaustive
//! scheduler. Statics declared with [`global!`] are ordinary `static`s,
//! or loom's per-execution lazy statics under loom. Nothing else in the
//! crate uses loom's types, and under `cfg(loom)` only that test may run:
//! loom's types work only inside `loom::model`.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicU8};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
pub(crate) use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicU8};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};

/// Declares a (private) static of the protocol: `static NAME: Type =
/// init;` as it is, or, under `cfg(loom)`, a lazy static that each loom execution
/// starts afresh (the initialiser is the same expression: the primitives
/// of this module have `new` under both).
macro_rules! global {
    ($(#[$m:meta])* static $name:ident: $t:ty = $init:expr;) => {
        #[cfg(not(loom))]
        $(#[$m])*
        static $name: $t = $init;
        #[cfg(loom)]
        loom::lazy_static! {
            $(#[$m])*
            static ref $name: $t = $init;
        }
    };
}
pub(crate) use global;
