//! Goroutine stack overflows end the process with a message naming the
//! goroutine, never silent corruption.
//!
//! Two ways an overflow is caught (see `stack.rs`): a guard zone below the
//! stack (64 KiB: frames of code without stack probes cannot jump it)
//! faults at once, and the canary at the stack's low end, checked at
//! every switch, catches what ran past a missing guard. A fault needs a
//! signal stack to be handled on (the goroutine's own is exhausted): every
//! worker thread gets one ([`alt_stack`]). The defer layer's fault handler
//! (`crate::defer::fault`) asks this layer first whether a fault hit a
//! guard zone; any other fault is its business.

/// Ends the process: goroutine `id` overflowed its stack. Called in the
/// fault handler (the overflow may have hit inside `malloc`, with its
/// arena lock held), so everything here is async-signal-safe: the message
/// is built in a fixed buffer on the signal stack (integers formatted by
/// hand, no allocation, no lock), written with `write(2)`, and the process
/// leaves with `_exit(2)` (Go's status for a fatal error): nothing that
/// may touch the damaged memory runs.
pub(crate) fn stack_overflow(id: u64) -> ! {
    let size = super::sched::get().map_or(0, |s| s.stack_size >> 10);
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

/// Text built without allocating, for a signal handler: a fixed buffer
/// (what does not fit is cut off).
struct SignalText {
    buf: [u8; 256],
    len: usize,
}

impl SignalText {
    const fn new() -> SignalText {
        SignalText {
            buf: [0; 256],
            len: 0,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    /// `n` in decimal.
    fn push_u64(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }

    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Writes the text to fd 2 (`write(2)`, retried when interrupted or
    /// short).
    fn write_stderr(&self) {
        let mut rest = self.as_bytes();
        while !rest.is_empty() {
            // SAFETY: writes initialised bytes of our buffer to fd 2.
            let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
            if n < 0 {
                // SAFETY: errno is a thread-local the handler may read.
                if unsafe { *libc::__errno_location() } == libc::EINTR {
                    continue;
                }
                return;
            }
            if n == 0 {
                return;
            }
            rest = &rest[n as usize..];
        }
    }
}

/// Bytes of each worker's signal stack.
const ALT_STACK: usize = 64 << 10;

/// Gives the calling (worker) thread a signal stack, so that a fault on an
/// exhausted goroutine stack can be handled; returns its bounds (the
/// collector scans its used part when it stops the worker on it, see
/// `scan.rs`).
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

/// Makes the defer layer's fault handler check the guard zones first.
pub(crate) fn install() {
    crate::defer::set_overflow_check(check_guard);
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

#[cfg(test)]
mod tests {
    use super::SignalText;

    #[test]
    fn signal_text_formats_integers_as_format_does() {
        for n in [0u64, 7, 10, 256, 65536, u64::MAX] {
            let mut t = SignalText::new();
            t.push(b"x");
            t.push_u64(n);
            assert_eq!(t.as_bytes(), format!("x{n}").as_bytes());
        }
    }

    #[test]
    fn signal_text_cuts_what_does_not_fit() {
        let mut t = SignalText::new();
        for _ in 0..100 {
            t.push(b"abcdef");
        }
        assert_eq!(t.as_bytes().len(), 256);
    }
}
