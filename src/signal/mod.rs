//! Every signal handler of the runtime: the mechanism, below the layers
//! that decide what a signal means.
//!
//! - `handler.rs`: installing our handler for a signal (`SA_SIGINFO |
//!   SA_ONSTACK`, `SA_RESTART` where asked), the one handler entry that
//!   runs the entry registered for the signal, and chaining to the action
//!   installed before ours for a signal that is not ours;
//! - `context.rs`: the interrupted context (signal, code, fault address,
//!   pc, sp) and the redirect that makes the interrupted thread call a
//!   function once the handler returns;
//! - `fault.rs`: the entry of SIGSEGV, SIGBUS and SIGFPE: whether a fault
//!   is ours, and the redirect to what the defer layer registered;
//! - `preempt.rs`: asynchronous preemption's mechanism: the SIGURG
//!   entry (shared with a handler the program installed before ours),
//!   the table of compiled code, and the entry a preempted thread is made
//!   to call, which saves every register and the vector state;
//! - `quit.rs`: SIGQUIT, which wakes a thread that runs what the go
//!   layer registered (the goroutine dump), out of signal context;
//! - `cpu.rs`: the profiling signal: a CPU-time timer per thread and the
//!   `SIGPROF` entry that samples the interrupted stack into the CPU
//!   profile's ring;
//! - `altstack.rs`: alternate signal stacks;
//! - `text.rs`: messages written from a handler (fixed buffers, write(2)).
//!
//! # Layering
//!
//! This module uses std, libc and the crate's bottom modules only
//! (`fresh`, `context`, `gc` for the collector's stop signal). The layers
//! above register their policy: `defer` what a caught fault becomes
//! ([`set_policy`]), `go` the stack-overflow check that runs first
//! ([`set_overflow_check`]), `go` the preemption policy
//! (`preempt::install`). A further signal (profiling) is one more entry
//! given to `handler::install`.
//!
//! # Invariants of a handler (docs/design.md)
//!
//! Code that runs in a handler is async-signal-safe: no allocation, lock
//! or formatting; it reads and writes only memory it owns (its frame, the
//! interrupted context) or atomics and `const` thread-locals. Anything
//! more happens after the thread has been redirected out of signal
//! context. Messages are written with `write(2)` from fixed buffers. A
//! signal that is not ours reaches the handler installed before ours.

mod altstack;
mod context;
pub(crate) mod cpu;
mod fault;
mod handler;
pub(crate) mod preempt;
mod quit;
mod text;

pub(crate) use altstack::{alt_stack, free_alt_stack, live as live_alt_stacks};
pub(crate) use context::{REGISTERS, REGISTER_NAMES};
pub(crate) use fault::{
    catch, catch_by_default, catch_on_this_thread, catching, set_overflow_check, set_policy, Fault,
    Policy,
};
pub(crate) use quit::{on_quit, Quit};
pub(crate) use text::SignalText;
