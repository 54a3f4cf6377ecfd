//! Faults (SIGSEGV, SIGBUS, SIGFPE): which are ours, and the redirect
//! that takes an ours out of signal context.
//!
//! The entry ([`on_fault`]) decides, doing nothing that is not
//! async-signal-safe:
//!
//! 1. the check the go layer registered ([`set_overflow_check`]) runs
//!    first: it may claim the fault (a goroutine stack's guard zone) and
//!    end the process;
//! 2. the fault is ours if catching is on ([`catch`]), the kernel raised
//!    it for an instruction (not `kill`), it is not a SIGSEGV just below
//!    the stack pointer (a stack overflow, which the previous handler
//!    reports), and the thread runs compiled code the runtime answers for:
//!    a goroutine, a thread the defer layer says has a defer chain, or a
//!    thread that asked ([`catch_on_this_thread`]). Then the thread is
//!    redirected to the defer layer's [`Policy::raise`], which turns the
//!    fault into Go's panic or fatal error out of signal context;
//! 3. anything else is passed on to the handler installed before ours, or
//!    to the default action.

use super::context::{Interrupted, Target};
use super::handler::{self, Action};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

/// The signals a fault arrives with.
const SIGNALS: [libc::c_int; 3] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE];

/// What the kernel said about a fault, kept with its panic for the
/// report's `[signal ...]` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fault {
    pub(crate) sig: i32,
    pub(crate) code: i32,
    pub(crate) addr: usize,
    pub(crate) pc: usize,
}

impl Fault {
    /// Go's line: `[signal SIGSEGV: segmentation violation code=0x1
    /// addr=0x0 pc=0x4a2b3c]`.
    pub(crate) fn line(&self) -> String {
        let name = match self.sig {
            libc::SIGSEGV => "SIGSEGV: segmentation violation".to_string(),
            libc::SIGBUS => "SIGBUS: bus error".to_string(),
            libc::SIGFPE => "SIGFPE: floating-point exception".to_string(),
            other => format!("{other:#x}"),
        };
        format!(
            "[signal {name} code={:#x} addr={:#x} pc={:#x}]",
            self.code, self.addr, self.pc
        )
    }
}

/// What a caught fault becomes, registered by the defer layer.
pub(crate) struct Policy {
    /// Whether the calling thread has a defer chain (read in the handler:
    /// thread-locals only, no allocation).
    pub(crate) has_chain: fn() -> bool,
    /// Called on the faulting stack, out of signal context, with
    /// `sig, code, addr, pc` and the faulting stack pointer.
    pub(crate) raise: Target,
}

static POLICY: OnceLock<Policy> = OnceLock::new();

/// Registers what a caught fault becomes (the first registration stays).
pub(crate) fn set_policy(policy: Policy) {
    let _ = POLICY.set(policy);
}

const UNSET: u8 = 0;
const ON: u8 = 1;
const OFF: u8 = 2;

/// Whether faults are caught: unset until the program or its main says.
static MODE: AtomicU8 = AtomicU8::new(UNSET);

/// Catches faults in compiled code from now on (`true`), or stops (`false`:
/// the handlers stay, and pass every fault on). On, it also marks the
/// calling thread as one whose faults are ours, unless a goroutine runs
/// here (covered anyway, and it moves between threads).
pub(crate) fn catch(on: bool) {
    MODE.store(if on { ON } else { OFF }, Ordering::Release);
    if on {
        install();
        if !crate::context::existing().is_some_and(|c| c.is_boundary()) {
            catch_on_this_thread();
        }
    }
}

/// [`catch`]`(true)` unless the program already chose.
pub(crate) fn catch_by_default() {
    if MODE
        .compare_exchange(UNSET, ON, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        install();
    }
}

/// Whether faults are being caught.
pub(crate) fn catching() -> bool {
    MODE.load(Ordering::Acquire) == ON
}

thread_local! {
    /// Set on a plain thread whose faults are ours while catching is on:
    /// one that asked, or one that runs compiled code from its start
    /// (`defergc_thread_create`). `const`, no destructor: a plain TLS word
    /// the handler may read.
    static ASKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling (plain) thread as running compiled code whose faults
/// are ours while catching is on.
pub(crate) fn catch_on_this_thread() {
    crate::fresh::with(&ASKED, |a| a.set(true));
}

/// A check that may claim a fault at `addr` before anything else, and end
/// the process (it does not return if it claims it). `sp` is the
/// interrupted stack pointer (0 where unknown), `segv` whether the signal
/// is SIGSEGV or SIGBUS (a memory fault). Runs in the signal handler with
/// the collector's stop signal blocked: async-signal-safe code only.
pub(crate) type OverflowCheck = fn(addr: usize, sp: usize, segv: bool);

static OVERFLOW: AtomicUsize = AtomicUsize::new(0);

/// Installs the handlers with `check` run first on every fault (the go
/// layer's guard pages).
pub(crate) fn set_overflow_check(check: OverflowCheck) {
    OVERFLOW.store(check as usize, Ordering::Release);
    install();
}

/// Installs the fault entry for the three signals (once).
fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for sig in SIGNALS {
            handler::install(sig, on_fault, false);
        }
    });
}

/// Whether a fault on this thread, now, is in code the runtime answers
/// for: a goroutine runs here, or the thread has a defer chain, or it
/// asked. Reads thread-locals only.
fn ours_here(policy: &Policy) -> bool {
    if crate::context::existing().is_some_and(|c| c.is_boundary()) {
        return true;
    }
    (policy.has_chain)() || crate::fresh::fresh_get!(ASKED: bool)
}

/// Bytes below the stack pointer within which a SIGSEGV is taken for a
/// stack overflow (not ours: the previous handler reports those).
const NEAR_STACK: usize = 64 << 10;

/// The entry of the three fault signals.
fn on_fault(i: &mut Interrupted) -> Action {
    let (sig, addr, sp) = (i.sig(), i.addr(), i.sp());
    let check = OVERFLOW.load(Ordering::Acquire);
    if check != 0 {
        // SAFETY: only set_overflow_check stores here, and it stores
        // OverflowCheck functions.
        let check = unsafe { std::mem::transmute::<usize, OverflowCheck>(check) };
        check(addr, sp, sig != libc::SIGFPE);
    }
    let Some(policy) = POLICY.get() else {
        return Action::PassOn;
    };
    let near_stack = sig == libc::SIGSEGV && addr < sp && sp - addr <= NEAR_STACK;
    if i.raised_by_kernel() && catching() && !near_stack && ours_here(policy) {
        let args = [sig as usize, i.code() as usize, addr, i.pc()];
        if i.redirect(policy.raise, args) {
            return Action::Done;
        }
    }
    Action::PassOn
}
