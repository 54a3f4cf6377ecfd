//! Walking the running stack by its unwind tables, and symbolising
//! addresses (for tracebacks, `Callers` and heap profiles), safe across
//! `fork()`. Both take locks or allocate: not for a signal handler (the
//! frame-pointer walk in `fp.rs` is).
//!
//! The `backtrace` crate serialises both walks and symbol lookups under a
//! lock of its own. A walk needs none on the unwinders this crate runs on
//! (libgcc's or LLVM's `_Unwind_Backtrace`, which concurrent Rust panics
//! already use), and a lock held by another thread when the program forks
//! would hang the child at its first panic or sampled allocation: so walks
//! go unsynchronised. Symbol lookups share a cache and keep a lock: ours,
//! taken around the crate's, so that a fork waits until no thread of ours
//! is inside one.

use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

/// Calls `f` with each return address of the calling thread's stack,
/// innermost first, while it returns true.
#[inline(never)]
pub(crate) fn walk(mut f: impl FnMut(usize) -> bool) {
    walk_frames(|frame| f(frame.ip() as usize));
}

/// [`walk`], with each frame as the `backtrace` crate describes it.
#[inline(never)]
pub(crate) fn walk_frames(f: impl FnMut(&backtrace::Frame) -> bool) {
    // SAFETY: the unwinders this crate is built for walk concurrently
    // (see the module docs).
    unsafe { backtrace::trace_unsynchronized(f) };
}

static SYMBOLS: Mutex<()> = Mutex::new(());

fn symbols() -> MutexGuard<'static, ()> {
    SYMBOLS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Calls `f` with each symbol (innermost inlined frame first) of the code
/// at `addr`, which is looked up as a return address is: the byte before
/// it.
pub(crate) fn resolve(addr: usize, f: impl FnMut(&backtrace::Symbol)) {
    let _one = symbols();
    backtrace::resolve(addr as *mut c_void, f);
}

/// Before a fork: the symbol lookups' lock, which the collector's fork
/// hooks hold until the fork is done, so that no thread of ours is inside
/// a lookup (see the module docs).
pub(crate) fn lock_for_fork() -> MutexGuard<'static, ()> {
    symbols()
}
