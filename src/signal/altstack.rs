//! Alternate signal stacks: a thread whose own stack may be exhausted
//! when a fault arrives (a goroutine worker) handles signals on one.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of each signal stack.
const ALT_STACK: usize = 64 << 10;

/// Signal stacks given and not yet freed.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Gives the calling thread a signal stack, used by every handler
/// installed with `SA_ONSTACK`; returns its bounds (the collector scans
/// its used part when it stops the thread on it). A thread that ends
/// before the process does gives it back with [`free_alt_stack`].
pub(crate) fn alt_stack() -> (usize, usize) {
    // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
    let mem = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            ALT_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if mem == libc::MAP_FAILED {
        crate::abort("defergc: cannot map a signal stack for a worker thread");
    }
    let ss = libc::stack_t {
        ss_sp: mem,
        ss_flags: 0,
        ss_size: ALT_STACK,
    };
    // SAFETY: ss describes the mapping, which stays until free_alt_stack
    // takes it from this thread first.
    unsafe { libc::sigaltstack(&ss, std::ptr::null_mut()) };
    LIVE.fetch_add(1, Ordering::Relaxed);
    let lo = mem as usize;
    (lo, lo + ALT_STACK)
}

/// The calling thread, about to end, gives back the signal stack
/// [`alt_stack`] gave it (`bounds`): signals no longer use it (they run on
/// the thread's own stack until it ends), then it is unmapped. Nothing
/// happens if the thread's signal stack is another one by now, or the
/// thread is on it.
pub(crate) fn free_alt_stack(bounds: (usize, usize)) {
    // SAFETY: reads the calling thread's signal-stack setting.
    let mut now: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: a null new setting only reads.
    if unsafe { libc::sigaltstack(std::ptr::null(), &mut now) } != 0
        || now.ss_sp as usize != bounds.0
        || now.ss_flags & libc::SS_ONSTACK != 0
    {
        return;
    }
    let off = libc::stack_t {
        ss_sp: std::ptr::null_mut(),
        ss_flags: libc::SS_DISABLE,
        ss_size: 0,
    };
    // SAFETY: disables the calling thread's signal stack (not in use: the
    // thread is not on it).
    if unsafe { libc::sigaltstack(&off, std::ptr::null_mut()) } != 0 {
        return;
    }
    // SAFETY: the mapping alt_stack made, which no thread uses any more
    // (the collector no longer scans it: the worker retired first).
    unsafe { libc::munmap(bounds.0 as *mut libc::c_void, bounds.1 - bounds.0) };
    LIVE.fetch_sub(1, Ordering::Relaxed);
}

/// Signal stacks given to threads and not yet freed.
pub(crate) fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}
