//! Goroutine stack overflows end the process with a message naming the
//! goroutine, never silent corruption.
//!
//! Two ways an overflow is caught (see `stack.rs`): a guard zone below the
//! stack (64 KiB: frames of code without stack probes cannot jump it)
//! faults at once, and the canary at the stack's low end, checked at
//! every switch, catches what ran past a missing guard. A fault needs a
//! signal stack to be handled on (the goroutine's own is exhausted): every
//! worker thread gets one (`crate::signal::alt_stack`). The fault handler
//! (`crate::signal`) asks this layer first whether a fault hit a guard
//! zone ([`install`] registers the check); any other fault is the defer
//! layer's business.

use crate::signal::SignalText;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The configured goroutine stack size, for the overflow message.
static STACK_SIZE: AtomicUsize = AtomicUsize::new(0);

/// Ends the process: goroutine `id` overflowed its stack. Called in the
/// fault handler (the overflow may have hit inside `malloc`, with its
/// arena lock held), so everything here is async-signal-safe: the message
/// is built in a fixed buffer on the signal stack (integers formatted by
/// hand, no allocation, no lock), written with `write(2)`, and the process
/// leaves with `_exit(2)` (Go's status for a fatal error): nothing that
/// may touch the damaged memory runs.
pub(crate) fn stack_overflow(id: u64) -> ! {
    let size = STACK_SIZE.load(Ordering::Relaxed) >> 10;
    let mut msg = SignalText::new();
    msg.push(b"defergc: goroutine ");
    msg.push_u64(id);
    msg.push(b" stack overflow (");
    msg.push_u64(size as u64);
    msg.push(
        b" KiB stack; raise it with DEFERGC_STACK_SIZE or the scheduler's stack size \
          setting)\nfatal error: stack overflow\n",
    );
    msg.write_stderr();
    // SAFETY: _exit is async-signal-safe and ends the process.
    unsafe { libc::_exit(2) }
}

/// Makes the fault handler check the guard zones first; `stack_size` is
/// the goroutine stack size the overflow message names.
pub(crate) fn install(stack_size: usize) {
    STACK_SIZE.store(stack_size, Ordering::Relaxed);
    crate::signal::set_overflow_check(check_guard);
}

/// Called first in the fault handler (stop signal blocked), with the
/// faulting address and the interrupted stack pointer: records where the
/// interrupted code's stack is, for a collection that stops this worker
/// in the handler; then a fault in a goroutine stack's guard zone is that
/// goroutine's stack overflow. Reads and atomic stores only.
fn check_guard(addr: usize, sp: usize, segv: bool) {
    super::scan::fault_entered(sp);
    if !segv {
        return;
    }
    if let Some(slot) = super::stack::guard_hit(addr) {
        let geometry = super::stack::geometry();
        // SAFETY: a slot that faulted holds a goroutine (only live slots
        // run code).
        let g = unsafe { super::g::G::of(slot, &geometry) };
        stack_overflow(g.id());
    }
}
