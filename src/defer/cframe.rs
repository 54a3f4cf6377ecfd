//! C-protocol frames: the frames of compiled code, linked into the same
//! per-thread chain as Rust frames, so the two nest in any order.
//!
//! A `defergc_frame` lives in the compiled function's own stack frame: a
//! private part (this module's [`CFrame`]) followed by a `sigjmp_buf` that
//! the function arms with `sigsetjmp` itself. The protocol:
//!
//! 1. [`enter`] links the frame; the function arms its jump buffer.
//! 2. [`defer`] copies the argument bytes into a record (Go evaluates them
//!    at the defer statement).
//! 3. On return, [`leave`] runs the records newest first.
//! 4. A panic in the function's body *lands* in the frame: `siglongjmp` to
//!    its jump buffer, after which the function calls [`unwind`] to run
//!    the records with the panic in flight.
//!
//! Either way a record's call runs under the same drain loop as Rust
//! records: a panic raised by a deferred call (compiled or Rust) comes back
//! to the loop as unwinding, the remaining records still run, and the
//! frame returns iff the function should return normally (no panic, or a
//! recovery); otherwise the panic goes on to the next frame out.
//!
//! The unwinding rule, which keeps `siglongjmp` away from Rust frames that
//! own destructors: a panic is delivered to the innermost frame. A C frame
//! still in its body is jumped to, which skips only compiled code and the
//! runtime's own frames (they own nothing). A Rust frame, or a frame that
//! is running its deferred calls, is *unwound* to: the runtime raises Rust
//! unwinding from an `extern "C-unwind"` function, and it passes through
//! the compiled code in between (which needs unwind tables, the default on
//! x86-64 Linux, and no cleanups). Rust code called *from* compiled code
//! must enter through [`crate::ffi::guard`], which delivers whatever
//! escapes it by the same rule.

use super::panic;
use super::record::{self, CFn};
use super::state::CallToken;
use super::state::{DeferState, FrameKind, FrameLink};
use super::value::PanicValue;
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;

extern "C" {
    /// glibc's `siglongjmp` (the `libc` crate does not declare it).
    fn siglongjmp(env: *mut c_void, val: c_int) -> !;
}

/// Bytes of a `defergc_frame` in front of its `sigjmp_buf` (the header's
/// `priv` array).
pub const PRIV_BYTES: usize = 128;

/// The private part of a `defergc_frame`.
#[repr(C)]
pub struct CFrame {
    link: FrameLink,
    magic: Cell<u64>,
    landed: Cell<bool>,
}

const _: () = assert!(std::mem::size_of::<CFrame>() <= PRIV_BYTES);

/// The largest argument block of one deferred call (the header's
/// `DEFERGC_DEFER_MAX_ARGS`).
pub const MAX_ARGS: usize = 65536;

/// `magic` of a linked frame ("DFGFRAME"); anything else is not one.
const ENTERED: u64 = 0x4446_4746_5241_4d45;
/// `magic` of a frame that was left ("DFGLEFT!").
const LEFT: u64 = 0x4446_474c_4546_5421;

/// Links `fr` as the thread's innermost frame.
///
/// # Safety
/// `fr` points to writable storage for a `CFrame` that stays put (in the
/// caller's stack frame) until the frame is left.
pub(crate) unsafe fn enter(fr: *mut CFrame, what: &str, pc: usize) {
    if fr.is_null() {
        misuse(what, "null frame pointer");
    }
    let th = DeferState::current();
    let inner = th.frame.get();
    if ptr::eq(inner, fr.cast::<FrameLink>()) {
        misuse(
            what,
            "the frame is already entered (entered twice, or its function returned without leaving it)",
        );
    }
    // SAFETY: the caller guarantees fr is writable storage for a CFrame.
    unsafe {
        fr.write(CFrame {
            link: FrameLink {
                prev: inner,
                base: th.stack.mark(),
                draining: Cell::new(false),
                kind: FrameKind::C,
                origin: super::traceback::Origin::Return(pc),
            },
            magic: Cell::new(ENTERED),
            landed: Cell::new(false),
        });
        th.frame.set(&(*fr).link);
    }
}

#[cold]
fn misuse(what: &str, why: &str) -> ! {
    crate::abort(&format!("defergc: {what}: {why}"))
}

/// Checks that `fr` is this thread's innermost frame.
///
/// # Safety
/// `fr` is null or points to readable memory of a `CFrame`'s size.
unsafe fn current(fr: *mut CFrame, what: &str) -> (&'static DeferState, &'static CFrame) {
    if fr.is_null() {
        misuse(what, "null frame pointer");
    }
    // SAFETY: the caller guarantees fr is readable.
    let frame = unsafe { &*fr };
    match frame.magic.get() {
        ENTERED => {}
        LEFT => misuse(what, "the frame was already left"),
        _ => misuse(what, "not an entered frame (never entered, or overwritten)"),
    }
    let th = DeferState::current();
    if !ptr::eq(th.frame.get(), &frame.link) {
        misuse(
            what,
            "the frame is not this thread's innermost frame (frames left out of order, or a frame of another thread)",
        );
    }
    (th, frame)
}

/// Defers `f(args copy, token)` on `fr`.
///
/// # Safety
/// `fr` as for [`current`]; `args` points to `len` readable bytes (or `len`
/// is 0).
pub(crate) unsafe fn defer(fr: *mut CFrame, f: Option<CFn>, args: *const u8, len: usize) {
    const WHAT: &str = "defergc_defer";
    // SAFETY: forwarded from the caller.
    let (th, frame) = unsafe { current(fr, WHAT) };
    if frame.link.draining.get() || frame.landed.get() {
        misuse(WHAT, "the frame is already running its deferred calls");
    }
    if len > 0 && args.is_null() {
        misuse(WHAT, "null argument pointer with a non-zero length");
    }
    if len > MAX_ARGS {
        misuse(
            WHAT,
            &format!("{len} argument bytes, more than DEFERGC_DEFER_MAX_ARGS ({MAX_ARGS})"),
        );
    }
    let size = record::c_record_size(len);
    let space = th.stack.push(size);
    // SAFETY: push returned size bytes; args has len readable bytes.
    unsafe { record::write_c(space, f, args, len) };
}

/// The normal return: runs the records; returns iff the function returns
/// normally (a panic raised on the way and recovered included).
///
/// # Safety
/// As for [`current`].
pub(crate) unsafe fn leave(fr: *mut CFrame) {
    const WHAT: &str = "defergc_frame_leave";
    // SAFETY: forwarded from the caller.
    let (th, frame) = unsafe { current(fr, WHAT) };
    not_draining(frame, WHAT);
    if frame.landed.get() {
        misuse(
            WHAT,
            "a panic landed in this frame: call defergc_frame_unwind",
        );
    }
    finish(th, frame, false);
}

/// After a panic landed: runs the records with it in flight; returns iff
/// one of them recovered it.
///
/// # Safety
/// As for [`current`].
pub(crate) unsafe fn unwind(fr: *mut CFrame) {
    const WHAT: &str = "defergc_frame_unwind";
    // SAFETY: forwarded from the caller.
    let (th, frame) = unsafe { current(fr, WHAT) };
    not_draining(frame, WHAT);
    if !frame.landed.get() {
        misuse(
            WHAT,
            "no panic landed in this frame: call defergc_frame_leave",
        );
    }
    finish(th, frame, true);
}

/// A frame's own deferred call must not leave or unwind it: the frame is
/// already doing that, and would run the running call again.
fn not_draining(frame: &CFrame, what: &str) {
    if frame.link.draining.get() {
        misuse(
            what,
            "the frame is running its deferred calls (called from one of them)",
        );
    }
}

fn finish(th: &DeferState, frame: &CFrame, mut unwinding: bool) {
    frame.link.draining.set(true);
    while th.stack.mark() != frame.link.base {
        unwinding = super::frame::drain_one(th, unwinding);
    }
    th.frame.set(frame.link.prev);
    frame.magic.set(LEFT);
    if unwinding {
        deliver_from_c(th, approx_sp())
    }
}

/// Delivers the thread's newest panic record from compiled code (or from
/// a guard at its boundary, once the Rust frames below have unwound): a C
/// frame still in its body is jumped to; any other frame is unwound to.
/// With no frame left and no Rust code around to catch it, the thread
/// (Goexit) or the process (a panic, status 2) ends, as in Go.
/// `caller_sp` is the stack pointer of the compiled code that raised it
/// (or an address below it): frames below it are dead.
pub(crate) fn deliver_from_c(th: &DeferState, caller_sp: usize) -> ! {
    check_caller(th, caller_sp);
    let frame = th.frame.get();
    // SAFETY: frames in the chain are live until they unlink themselves
    // (and the innermost is not below the caller).
    if let Some(link) = unsafe { frame.as_ref() } {
        if link.kind == FrameKind::C && !link.draining.get() {
            check_live(frame);
            // SAFETY: a linked C frame in its body has armed its jump
            // buffer, and only compiled code and runtime frames without
            // destructors lie between here and it (check_live returned).
            unsafe { land(frame) }
        }
    }
    if frame.is_null() && th.boundaries.get() == 0 {
        if panic::newest_is_goexit(th) {
            panic::clear(th);
            // SAFETY: gettid and getpid have no preconditions.
            if unsafe { libc::gettid() == libc::getpid() } {
                // Goexit on the process's main thread: Go's main goroutine
                // with nothing left to run. (Ending the thread would leave
                // the process waiting, forever, for the collector's.)
                super::exit::exit_go(
                    "fatal error: no goroutines (main called runtime.Goexit) - deadlock!",
                );
            }
            // SAFETY: ends this thread; only runtime frames (no destructors)
            // and compiled code lie above the thread's start.
            unsafe { libc::pthread_exit(ptr::null_mut()) }
        }
        panic::dying();
        super::exit::exit_go(&format!(
            "{}\n{}",
            panic::report(th),
            panic::goroutine_section(th, true)
        ))
    }
    panic::deliver(th)
}

/// An address at (or just above) the calling function's stack pointer.
#[inline(never)]
pub(crate) fn approx_sp() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}

/// Before a panic is raised by compiled code whose stack pointer is
/// `caller_sp` (or an address below it): the innermost frame must not lie
/// below it, where it would belong to a function that has returned (and
/// the memory may hold anything by now).
pub(crate) fn check_caller(th: &DeferState, caller_sp: usize) {
    let frame = th.frame.get();
    if !frame.is_null() && (frame as usize) < caller_sp {
        returned_without_leaving();
    }
}

/// Before a panic lands in the C frame `link` (not below the caller): the
/// frame must still be there. Its function may have returned without
/// leaving it and another call may have reused its memory; jumping there
/// would resume a dead function.
fn check_live(link: *const FrameLink) {
    // SAFETY: the frame is at or above the caller's stack pointer, in a
    // live part of this stack.
    if unsafe { (*link.cast::<CFrame>()).magic.get() } != ENTERED {
        returned_without_leaving();
    }
}

#[cold]
fn returned_without_leaving() -> ! {
    crate::abort(
        "defergc: panic: the innermost frame's function returned without leaving it (no defergc_frame_leave)",
    )
}

/// Jumps to the C frame `link`, which is in its body: the panic landed.
///
/// # Safety
/// `link` is the link of a live, entered `CFrame` whose function has armed
/// its jump buffer, and only frames without destructors lie between the
/// caller and that function.
pub(crate) unsafe fn land(link: *const FrameLink) -> ! {
    let frame = link.cast::<CFrame>();
    // SAFETY: the link is the first field of a CFrame, and the jump buffer
    // follows the private part of the defergc_frame.
    unsafe {
        (*frame).landed.set(true);
        siglongjmp(frame.cast::<u8>().cast_mut().add(PRIV_BYTES).cast(), 1)
    }
}

/// `recover` for compiled code: `token` is the one its deferred function
/// was given (or null). A token of a call that is no longer running, or
/// that never was, recovers nothing: tokens are never reused, so a stale
/// one cannot name a later call at the same address.
pub(crate) fn recover(token: *const CallToken) -> Option<PanicValue> {
    let th = DeferState::existing()?;
    let token = token as usize as u64;
    if token == 0 {
        return None;
    }
    let mut running = th.running.get();
    // SAFETY: the running chain holds live calls only.
    while let Some(call) = unsafe { running.as_ref() } {
        if call.token == token {
            return panic::recover(th, call.panic);
        }
        running = call.outer;
    }
    None
}
