//! What a hardware fault in compiled code becomes: Go's run-time panic,
//! or Go's fatal error.
//!
//! A nil dereference is `runtime error: invalid memory address or nil
//! pointer dereference`, an integer division by zero `runtime error:
//! integer divide by zero`: panics like any other, that a deferred
//! recover stops, and whose report carries Go's extra line
//! `[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x...]`.
//!
//! The signal layer (`crate::signal`) owns the handler and decides which
//! faults are ours; this file registers with it what an ours becomes
//! ([`register`]): the signal layer redirects the faulting thread to
//! [`raise`], which runs on the faulting stack, out of signal context, as
//! if the faulting instruction had called it (x86-64 Linux; elsewhere
//! faults are never ours). `raise` classifies the fault as Go's
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

use super::panic;
use super::state::DeferState;
use super::traceback::Origin;
use super::value::PanicValue;
use super::value::RuntimeError;
use crate::signal::{self, Fault};

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
    register();
    signal::catch(on);
}

/// [`catch_faults`]`(true)` unless the program already chose.
pub(crate) fn catch_faults_by_default() {
    register();
    signal::catch_by_default();
}

/// Whether faults are being caught.
pub fn catching_faults() -> bool {
    signal::catching()
}

/// Makes [`raise`] what a caught fault becomes.
fn register() {
    signal::set_policy(signal::Policy {
        has_chain: || DeferState::existing().is_some(),
        raise,
    });
}

/// `FPE_INTDIV` and `FPE_INTOVF` (Linux's values).
const FPE_INTDIV: i32 = 1;
const FPE_INTOVF: i32 = 2;

/// Turns the fault into Go's panic (or fatal error), out of signal context
/// on the faulting stack (the thread's defer state, created lazily, is
/// created here). `sp` is the faulting stack pointer.
extern "C-unwind" fn raise(sig: usize, code: usize, addr: usize, pc: usize, sp: usize) -> ! {
    let (sig, code) = (sig as i32, code as i32);
    let signal = Fault {
        sig,
        code,
        addr,
        pc,
    };
    let th = DeferState::current();
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
fn fatal(th: &DeferState, before: &str, what: &str, signal: Fault) -> ! {
    let trace = super::traceback::Trace::capture(Origin::Exact(signal.pc), th.frame_origins());
    let mut text = format!("{before}fatal error: {what}\n{}\n", signal.line());
    text.push_str(&super::traceback::section(
        Some(&trace),
        DeferState::context_id(),
        true,
    ));
    super::exit::exit_go(&text)
}
