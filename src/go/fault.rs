//! Goroutine stack overflows end the process with a message naming the
//! goroutine, never silent corruption.
//!
//! Two ways an overflow is caught (see `stack.rs`): a guard page below the
//! stack faults at once, and the canary at the stack's low end, checked at
//! every switch, catches what ran past a missing guard. A fault needs a
//! signal stack to be handled on (the goroutine's own is exhausted): every
//! worker thread gets one ([`alt_stack`]). The SIGSEGV/SIGBUS handler
//! knows only guard pages; any other fault goes to the handler that was
//! installed before ours, or to the default action.

use std::sync::{Once, OnceLock};

/// Ends the process: goroutine `id` overflowed its stack. Writes with
/// `write(2)` and leaves with `_exit(2)` (Go's status for a fatal error):
/// nothing that may touch the damaged memory runs.
pub(crate) fn stack_overflow(id: u64) -> ! {
    let size = super::sched::get().map_or(0, |s| s.stack_size >> 10);
    let msg = format!(
        "defergc: goroutine {id} stack overflow ({size} KiB stack; raise it with \
         DEFERGC_STACK_SIZE or the scheduler's stack size setting)\n\
         fatal error: stack overflow\n"
    );
    // SAFETY: writes initialised bytes to fd 2, then ends the process.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(2)
    }
}

/// Bytes of each worker's signal stack.
const ALT_STACK: usize = 64 << 10;

/// Gives the calling (worker) thread a signal stack, so that a fault on an
/// exhausted goroutine stack can be handled.
pub(crate) fn alt_stack() {
    let mem = vec![0u8; ALT_STACK].leak();
    let ss = libc::stack_t {
        ss_sp: mem.as_mut_ptr().cast(),
        ss_flags: 0,
        ss_size: ALT_STACK,
    };
    // SAFETY: ss describes leaked memory that stays valid for the thread's
    // life (and beyond).
    unsafe { libc::sigaltstack(&ss, std::ptr::null_mut()) };
}

/// The actions installed before ours, for SIGSEGV and SIGBUS.
struct Previous {
    segv: libc::sigaction,
    bus: libc::sigaction,
}

// SAFETY: plain data, written once before it is shared.
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

static PREVIOUS: OnceLock<Previous> = OnceLock::new();

/// Installs the handler for SIGSEGV and SIGBUS (once), keeping the
/// previous ones to chain to.
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a zeroed sigaction with our handler; the previous actions
        // are written into zeroed storage by the kernel.
        let previous = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fault as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut previous = Previous {
                segv: std::mem::zeroed(),
                bus: std::mem::zeroed(),
            };
            libc::sigaction(libc::SIGSEGV, &sa, &mut previous.segv);
            libc::sigaction(libc::SIGBUS, &sa, &mut previous.bus);
            previous
        };
        let _ = PREVIOUS.set(previous);
    });
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    if let Some(slot) = super::stack::guard_hit(addr) {
        let geometry = super::stack::geometry();
        // SAFETY: a slot that faulted holds a goroutine (only live slots
        // run code).
        let g = unsafe { super::g::G::of(slot, &geometry) };
        stack_overflow(g.id());
    }
    // Not ours: the previous handler, or the default action (also while
    // the previous actions are not stored yet).
    let handler = PREVIOUS.get().map_or(libc::SIG_DFL, |p| {
        if sig == libc::SIGBUS {
            p.bus.sa_sigaction
        } else {
            p.segv.sa_sigaction
        }
    });
    let flags = PREVIOUS.get().map_or(0, |p| {
        if sig == libc::SIGBUS {
            p.bus.sa_flags
        } else {
            p.segv.sa_flags
        }
    });
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: restoring the default action; returning re-runs the
        // faulting instruction, which now gets it.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    } else if flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler, called as the kernel would.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, ctx);
    } else {
        // SAFETY: as above, a one-argument handler.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}
