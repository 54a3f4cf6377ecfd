//! Hardware faults in compiled code become Go's run-time panics.
//!
//! A nil dereference is `runtime error: invalid memory address or nil
//! pointer dereference`, an integer division by zero `runtime error:
//! integer divide by zero`: panics like any other, that a deferred
//! recover stops, and whose report carries Go's extra line
//! `[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x...]`.
//!
//! # How a fault becomes a panic
//!
//! One `sigaction` handler for SIGSEGV, SIGBUS and SIGFPE (on the thread's
//! signal stack when it has one: goroutine workers do) decides, doing
//! nothing that is not async-signal-safe:
//!
//! 1. a hook of the layers above may claim the fault and end the process
//!    (the go layer's stack guard pages: [`set_overflow_check`]);
//! 2. the fault is ours if catching is on ([`catch_faults`]), the kernel
//!    raised it (not `kill`), and the thread runs compiled code the
//!    runtime answers for: a goroutine (deferred or not), a thread with a
//!    defer chain, or a thread that asked ([`catch_faults`] on it,
//!    `defergc_thread_create`). Nothing is allocated here: the goroutine's
//!    defer state, created lazily, is created by [`raise`]. Then, as Go
//!    does, the handler makes the faulting
//!    instruction look as if it had called [`fault_entry`] (return address
//!    just past the faulting pc, stack pointer just below the faulting
//!    one) and returns: the kernel restores the signal mask and resumes
//!    there, on the faulting stack, out of signal context;
//! 3. anything else goes to the handler installed before ours, or to the
//!    default action.
//!
//! `fault_entry` (x86-64 only; elsewhere faults are never ours) carries
//! unwind information, so the frames below it unwind and symbolise as
//! usual. It calls [`raise`], which classifies the fault as Go's
//! `sigpanic` does: a fault at an address below 4096 (nil plus a field
//! offset) or an integer division error is a panic, delivered to the
//! innermost frame the way compiled code's `defergc_panic` is (a C frame
//! in its body is jumped to); a fault elsewhere is Go's `fatal error:
//! fault`; a fault whose instruction is the runtime's own (defergc's or
//! bdwgc's code, by its symbol) is `fatal error: unexpected signal during
//! runtime execution`. Fatal errors print Go's lines and the goroutine
//! section and end the process with status 2.
//!
//! A fault in Rust code cannot be turned into a panic there (Rust code
//! has no landing pad at an arbitrary instruction); compiled C code has no
//! such limit, and safe Rust does not fault.

use super::panic::{self, RuntimeError};
use super::thread::ThreadState;
use super::traceback::Origin;
use super::PanicValue;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, Once, OnceLock};

/// The signals a fault arrives with.
const SIGNALS: [libc::c_int; 3] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE];

/// What the kernel said about a fault, kept with its panic for the
/// report's `[signal ...]` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Signal {
    pub(crate) sig: i32,
    pub(crate) code: i32,
    pub(crate) addr: usize,
    pub(crate) pc: usize,
}

impl Signal {
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

const UNSET: u8 = 0;
const ON: u8 = 1;
const OFF: u8 = 2;

/// Whether faults are caught: unset until the program or `defergc_main`
/// says.
static MODE: AtomicU8 = AtomicU8::new(UNSET);

/// Turns faults in compiled code into Go panics from now on (`true`), or
/// stops doing so (`false`: the handlers stay, and pass every fault on to
/// the handler installed before them or to the default action).
///
/// Off unless asked for: a program that wants its own SIGSEGV, SIGBUS and
/// SIGFPE handling keeps it. `defergc_main` (and [`crate::go::main`]) turn
/// it on unless the program said otherwise first.
///
/// Faults are caught in every goroutine, and on a plain thread that
/// called `catch_faults(true)` itself (or a thread of
/// `defergc_thread_create`), whether or not it ever deferred.
pub fn catch_faults(on: bool) {
    MODE.store(if on { ON } else { OFF }, Ordering::Release);
    if on {
        install();
        // A goroutine is covered anyway (and moves between threads).
        if !crate::context::existing().is_some_and(|c| c.is_boundary()) {
            catch_on_this_thread();
        }
    }
}

thread_local! {
    /// Set on a plain thread whose faults are ours while catching is on:
    /// one that asked (`catch_faults(true)`), or one that runs compiled
    /// code from its start (`defergc_thread_create`). `const`, no
    /// destructor: a plain TLS word the signal handler may read.
    static ASKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling (plain) thread as running compiled code whose faults
/// are ours while catching is on.
pub(crate) fn catch_on_this_thread() {
    crate::fresh::with(&ASKED, |a| a.set(true));
}

/// Whether a fault on this thread, now, is in code the runtime answers
/// for (called in the signal handler: reads thread-locals only, allocates
/// nothing): a goroutine runs here, or the thread has a defer chain, or
/// it asked for faults to be caught. What the fault then needs (the
/// context's defer state) is created by [`raise`], out of signal context.
fn ours_here() -> bool {
    if let Some(ctx) = crate::context::existing() {
        if ctx.is_boundary() {
            return true;
        }
    }
    ThreadState::existing().is_some() || crate::fresh::fresh_get!(ASKED: bool)
}

/// [`catch_faults`]`(true)` unless the program already chose.
pub(crate) fn catch_faults_by_default() {
    if MODE
        .compare_exchange(UNSET, ON, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        install();
    }
}

/// Whether faults are being caught.
pub fn catching_faults() -> bool {
    MODE.load(Ordering::Acquire) == ON
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

/// The actions installed before ours, by signal.
struct Previous([libc::sigaction; 3]);

// SAFETY: plain data, written once before it is shared.
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

static PREVIOUS: OnceLock<Previous> = OnceLock::new();

/// Installs the handler for the three signals (once), keeping the actions
/// it replaces to pass foreign faults on to.
fn install() {
    static ONCE: Once = Once::new();
    static LOCK: Mutex<()> = Mutex::new(());
    ONCE.call_once(|| {
        let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: a zeroed sigaction with our handler; the previous actions
        // are written into zeroed storage by the kernel.
        let previous = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            // The collector does not stop the thread in the handler before
            // the hook told where the interrupted stack is (a worker runs
            // the handler on its signal stack); the kernel restores the
            // mask when the handler returns.
            if let Some(stop) = crate::gc::scan::stop_signal() {
                libc::sigaddset(&mut sa.sa_mask, stop);
            }
            let mut previous: [libc::sigaction; 3] = std::mem::zeroed();
            for (sig, prev) in SIGNALS.iter().zip(previous.iter_mut()) {
                libc::sigaction(*sig, &sa, prev);
            }
            previous
        };
        let _ = PREVIOUS.set(Previous(previous));
    });
}

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    let check = OVERFLOW.load(Ordering::Acquire);
    if check != 0 {
        // SAFETY: only set_overflow_check stores here, and it stores
        // OverflowCheck functions; ctx is the interrupted context.
        let (check, sp) = unsafe {
            (
                std::mem::transmute::<usize, OverflowCheck>(check),
                interrupted_sp(ctx),
            )
        };
        check(addr, sp, sig != libc::SIGFPE);
    }
    // code > 0: raised by the kernel for an instruction (SI_USER and
    // SI_TKILL, from kill and tgkill, are <= 0).
    if code > 0 && catching_faults() && ours_here() {
        // SAFETY: ctx is the interrupted context the kernel passes.
        if unsafe { redirect(sig, code, addr, ctx) } {
            return;
        }
    }
    pass_on(sig, info, ctx);
}

/// The stack pointer of the interrupted context (0 where unknown).
///
/// # Safety
/// `ctx` is the `ucontext_t` the kernel passed to the handler.
unsafe fn interrupted_sp(ctx: *mut c_void) -> usize {
    let uc = ctx.cast::<libc::ucontext_t>();
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        // SAFETY: per the caller.
        unsafe { (*uc).uc_mcontext.gregs[libc::REG_RSP as usize] as usize }
    }
    #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
    {
        // SAFETY: per the caller.
        unsafe { (*uc).uc_mcontext.sp as usize }
    }
    #[cfg(not(all(
        any(target_arch = "x86_64", target_arch = "aarch64"),
        target_os = "linux"
    )))]
    {
        let _ = uc;
        0
    }
}

/// The handler installed before ours, or the default action.
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // What runs from here is not ours: it may block, or jump away without
    // restoring the mask. The collector may stop the thread again (the
    // hook published where the interrupted stack is).
    if let Some(stop) = crate::gc::scan::stop_signal() {
        // SAFETY: a local signal set; pthread_sigmask is async-signal-safe.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, stop);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
    let previous = PREVIOUS.get().and_then(|p| {
        SIGNALS
            .iter()
            .position(|&s| s == sig)
            .map(|i| (p.0[i].sa_sigaction, p.0[i].sa_flags))
    });
    let (handler, flags) = previous.unwrap_or((libc::SIG_DFL, 0));
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: restoring the default action; returning re-runs the
        // faulting instruction, which now gets it.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    } else if flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler, called as the kernel would.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, ctx);
    } else {
        // SAFETY: as above, a one-argument handler.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}

/// Bytes below the stack pointer within which a SIGSEGV is taken for a
/// stack overflow (not ours: the previous handler reports those).
const NEAR_STACK: usize = 64 << 10;

/// Makes the interrupted context call [`fault_entry`] from the faulting
/// instruction; false if it cannot (then the fault is passed on).
///
/// # Safety
/// `ctx` is the `ucontext_t` of the interrupted thread.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
unsafe fn redirect(sig: libc::c_int, code: libc::c_int, addr: usize, ctx: *mut c_void) -> bool {
    // SAFETY: per the caller.
    let gregs = unsafe { &mut (*ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
    let pc = gregs[libc::REG_RIP as usize] as usize;
    let sp = gregs[libc::REG_RSP as usize] as usize;
    if sig == libc::SIGSEGV && addr < sp && sp - addr <= NEAR_STACK {
        return false;
    }
    let ret = sp - 8;
    // SAFETY: the word below the faulting stack pointer (in its red zone,
    // which the faulting function never gets back to: a panic leaves it).
    unsafe { (ret as *mut usize).write(pc + 1) };
    gregs[libc::REG_RSP as usize] = ret as i64;
    gregs[libc::REG_RIP as usize] = fault_entry as *const () as usize as i64;
    gregs[libc::REG_RDI as usize] = sig as i64;
    gregs[libc::REG_RSI as usize] = code as i64;
    gregs[libc::REG_RDX as usize] = addr as i64;
    gregs[libc::REG_RCX as usize] = pc as i64;
    true
}

/// # Safety
/// As above; nothing to do where faults are never ours.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
unsafe fn redirect(_sig: libc::c_int, _code: libc::c_int, _addr: usize, _ctx: *mut c_void) -> bool {
    false
}

/// Where a caught fault resumes: called, as it were, by the faulting
/// instruction (return address `pc + 1`, so that unwinders look `pc` up),
/// with `sig, code, addr, pc` in the first four argument registers. It
/// keeps the faulting frame pointer as a normal frame does, aligns the
/// stack and calls [`raise`] with the faulting stack pointer as the fifth
/// argument.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[unsafe(naked)]
unsafe extern "C-unwind" fn fault_entry() -> ! {
    core::arch::naked_asm!(
        ".cfi_startproc",
        "push rbp",
        ".cfi_def_cfa_offset 16",
        ".cfi_offset rbp, -16",
        "mov rbp, rsp",
        ".cfi_def_cfa_register rbp",
        "lea r8, [rbp + 16]",
        "and rsp, -16",
        "call {raise}",
        "ud2",
        ".cfi_endproc",
        raise = sym raise,
    )
}

/// `FPE_INTDIV` and `FPE_INTOVF` (Linux's values).
const FPE_INTDIV: i32 = 1;
const FPE_INTOVF: i32 = 2;

/// Turns the fault into Go's panic (or fatal error), out of signal context
/// on the faulting stack. `sp` is the faulting stack pointer.
extern "C-unwind" fn raise(sig: i32, code: i32, addr: usize, pc: usize, sp: usize) -> ! {
    let signal = Signal {
        sig,
        code,
        addr,
        pc,
    };
    let th = ThreadState::current();
    if super::traceback::is_runtime_code(pc) {
        fatal(th, "", "unexpected signal during runtime execution", signal);
    }
    let message = match sig {
        libc::SIGFPE => match code {
            FPE_INTDIV => "integer divide by zero",
            FPE_INTOVF => "integer overflow",
            _ => "floating point error",
        },
        _ if addr < 0x1000 => "invalid memory address or nil pointer dereference",
        _ => fatal(
            th,
            &format!("unexpected fault address {addr:#x}\n"),
            "fault",
            signal,
        ),
    };
    super::cframe::check_caller(th, sp);
    let value = PanicValue::new(RuntimeError(message));
    if sig == libc::SIGFPE && code == FPE_INTDIV {
        // Go on amd64 checks division in compiled code: its report has no
        // signal line.
        panic::push_value(th, value, Origin::Exact(pc));
    } else {
        panic::push_fault(th, value, Origin::Exact(pc), signal);
    }
    super::cframe::deliver_from_c(th, sp)
}

/// Go's fatal error for a fault: `before`, `fatal error: what`, the signal
/// line, the goroutine section; status 2.
fn fatal(th: &ThreadState, before: &str, what: &str, signal: Signal) -> ! {
    let trace = super::traceback::Trace::capture(Origin::Exact(signal.pc), th.frame.get());
    let mut text = format!("{before}fatal error: {what}\n{}\n", signal.line());
    text.push_str(&super::traceback::section(
        Some(&trace),
        ThreadState::context_id(),
        true,
    ));
    super::exit_go(&text)
}
