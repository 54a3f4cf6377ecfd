//! Installing our handler for a signal, the one handler entry
//! ([`on_signal`]) and chaining to the handler installed before ours.
//!
//! Every signal the runtime handles goes through `on_signal`, which looks
//! up the [`Entry`] registered for the signal and runs it; an entry that
//! answers [`Action::PassOn`] hands the signal to the action that was
//! installed before ours ([`pass_on`]): the program's own handler, an
//! ignore, or the default action. The previous action is remembered once,
//! when ours is first installed for that signal.
//!
//! While an entry runs, the collector's stop signal is blocked (the
//! kernel restores the mask when the handler returns): a collection does
//! not stop the thread in the middle of an entry that has not yet told
//! where the interrupted stack is.

use super::context::Interrupted;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// What an entry decided about a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// The signal was ours and is dealt with (the context may have been
    /// redirected): return from the handler.
    Done,
    /// Not ours: the previously installed action gets it.
    PassOn,
    /// Ours and dealt with, and the handler installed before ours (if it is
    /// a handler, not an ignore or the default action) is called too: for
    /// a signal the runtime shares with the program (preemption's SIGURG),
    /// so the program's handler keeps being called.
    Shared,
}

/// What the runtime does with one signal, run in the handler:
/// async-signal-safe code only (see the module doc of `signal`).
pub(crate) type Entry = fn(&mut Interrupted) -> Action;

/// Signal numbers the tables cover (Linux's `_NSIG`).
const NSIG: usize = 65;

/// The entry of each signal whose handler is ours (0: none).
static ENTRIES: [AtomicUsize; NSIG] = [const { AtomicUsize::new(0) }; NSIG];

/// The action installed before ours, for a signal.
struct Previous(libc::sigaction);

// SAFETY: plain data, written once before it is shared.
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

/// The actions ours replaced, by signal; read in the handler (a lock-free
/// load once set).
static PREVIOUS: [OnceLock<Previous>; NSIG] = [const { OnceLock::new() }; NSIG];

/// Makes `entry` what the runtime does with `sig`, installing our handler
/// for it (once per signal; a later call only replaces the entry), with
/// `SA_SIGINFO | SA_ONSTACK` (the thread's signal stack when it has one)
/// and `SA_RESTART` if `restart` (for signals that interrupt code that may
/// be in a system call, not for faults). The action it replaces is kept
/// for [`pass_on`].
pub(crate) fn install(sig: libc::c_int, entry: Entry, restart: bool) {
    let index = sig as usize;
    assert!(index > 0 && index < NSIG, "signal {sig} out of range");
    static LOCK: Mutex<()> = Mutex::new(());
    let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let first = ENTRIES[index].swap(entry as usize, Ordering::AcqRel) == 0;
    if !first {
        return;
    }
    // SAFETY: a zeroed sigaction with our handler; the previous action is
    // written into zeroed storage by the kernel.
    let previous = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        if restart {
            sa.sa_flags |= libc::SA_RESTART;
        }
        libc::sigemptyset(&mut sa.sa_mask);
        if let Some(stop) = crate::gc::scan::stop_signal() {
            libc::sigaddset(&mut sa.sa_mask, stop);
        }
        let mut previous: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, &sa, &mut previous);
        previous
    };
    let _ = PREVIOUS[index].set(Previous(previous));
}

/// The handler of every signal the runtime handles.
extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    let entry = usize::try_from(sig)
        .ok()
        .and_then(|i| ENTRIES.get(i))
        .map_or(0, |e| e.load(Ordering::Acquire));
    if entry != 0 {
        // SAFETY: only install stores here, and it stores Entry functions.
        let entry = unsafe { std::mem::transmute::<usize, Entry>(entry) };
        // SAFETY: the kernel passes a valid siginfo and ucontext to an
        // SA_SIGINFO handler, for the time of the handler.
        let mut interrupted = unsafe { Interrupted::new(sig, info, ctx) };
        match entry(&mut interrupted) {
            Action::Done => return,
            Action::Shared => {
                pass_on_to_handler(sig, info, ctx);
                return;
            }
            Action::PassOn => {}
        }
    }
    pass_on(sig, info, ctx);
}

/// The action ours replaced for `sig`, once ours is installed.
/// Async-signal-safe (a lock-free load).
fn previous(sig: libc::c_int) -> Option<&'static libc::sigaction> {
    usize::try_from(sig)
        .ok()
        .and_then(|i| PREVIOUS.get(i))
        .and_then(OnceLock::get)
        .map(|p| &p.0)
}

/// The handler installed before ours for `sig`, with its flags, if one
/// was (not an ignore or the default action).
fn previous_handler(sig: libc::c_int) -> Option<(usize, libc::c_int)> {
    let previous = previous(sig).map(|p| (p.sa_sigaction, p.sa_flags))?;
    (previous.0 != libc::SIG_DFL && previous.0 != libc::SIG_IGN).then_some(previous)
}

/// Whether a handler function (not the default action, not an ignore)
/// was installed for `sig` before ours. Async-signal-safe.
pub(crate) fn has_previous(sig: libc::c_int) -> bool {
    previous_handler(sig).is_some()
}

/// Unblocks the collector's stop signal: what runs from here is not ours.
/// It may block, or jump away without restoring the mask, and the
/// collector may stop the thread again (the entry published where the
/// interrupted stack is).
fn unblock_stop_signal() {
    if let Some(stop) = crate::gc::scan::stop_signal() {
        // SAFETY: a local signal set; pthread_sigmask is async-signal-safe.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, stop);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// Calls the handler `handler` with `flags` as the kernel would.
fn call_handler(
    handler: usize,
    flags: libc::c_int,
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut c_void,
) {
    if flags & libc::SA_SIGINFO != 0 {
        // SAFETY: a previous three-argument handler, called as the kernel
        // would.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, ctx);
    } else {
        // SAFETY: as above, a one-argument handler.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}

/// For a shared signal: the handler installed before ours, if there is
/// one; an ignore or the default action is left alone (ours stays).
fn pass_on_to_handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    if let Some((handler, flags)) = previous_handler(sig) {
        unblock_stop_signal();
        call_handler(handler, flags, sig, info, ctx);
    }
}

/// Whether returning from the handler raises `sig` again: a fault the
/// kernel raised on an instruction, which runs again.
fn refaults(sig: libc::c_int, info: *const libc::siginfo_t) -> bool {
    // SAFETY: the kernel's siginfo, valid for the time of the handler.
    let sent = info.is_null() || unsafe { (*info).si_code } <= 0;
    !sent
        && matches!(
            sig,
            libc::SIGSEGV | libc::SIGBUS | libc::SIGFPE | libc::SIGILL
        )
}

/// Hands a signal that is not ours to the action installed before ours:
/// its handler, called as the kernel would; else, for a fault that runs
/// again, the default action (an ignored fault cannot be ignored: its
/// instruction would fault for ever); else the default action or the
/// ignore, by raising the signal again under it (it is blocked while this
/// handler runs, and taken when the handler returns): a signal sent by
/// `kill` (a SIGQUIT in a forked child, where no thread of ours dumps)
/// does not come again by itself.
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    unblock_stop_signal();
    if let Some((handler, flags)) = previous_handler(sig) {
        call_handler(handler, flags, sig, info, ctx);
        return;
    }
    if refaults(sig, info) {
        // SAFETY: restoring the default action; returning re-runs the
        // faulting instruction, which now gets it.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
        return;
    }
    let ignored = previous(sig).is_some_and(|p| p.sa_sigaction == libc::SIG_IGN);
    if !ignored {
        // SAFETY: signal(2) and raise(3) are async-signal-safe; the
        // default action ends the process (or stops it, or ignores it,
        // as the kernel's table says for `sig`).
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}
