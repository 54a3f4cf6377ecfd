//! Alternate signal stacks: a thread whose own stack may be exhausted
//! when a fault arrives (a goroutine worker) handles signals on one.

/// Bytes of each signal stack.
const ALT_STACK: usize = 64 << 10;

/// Gives the calling thread a signal stack, used by every handler
/// installed with `SA_ONSTACK`; returns its bounds (the collector scans
/// its used part when it stops the thread on it).
pub(crate) fn alt_stack() -> (usize, usize) {
    let mem = vec![0u8; ALT_STACK].leak();
    let lo = mem.as_ptr() as usize;
    let ss = libc::stack_t {
        ss_sp: mem.as_mut_ptr().cast(),
        ss_flags: 0,
        ss_size: ALT_STACK,
    };
    // SAFETY: ss describes leaked memory that stays valid for the thread's
    // life (and beyond).
    unsafe { libc::sigaltstack(&ss, std::ptr::null_mut()) };
    (lo, lo + ALT_STACK)
}
