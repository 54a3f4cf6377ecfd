//! SIGQUIT: the handler only records where the signal landed and wakes a
//! thread of ours; that thread, out of signal context, runs what the
//! layer above registered ([`on_quit`]: the goroutine dump, which stops
//! the world, prints every goroutine and ends the process as Go does).
//!
//! The wake is one byte written to a pipe (`write(2)` is
//! async-signal-safe); the thread blocks in `read(2)` on the other end.
//! Only the first SIGQUIT is acted on: later ones, while the dump runs,
//! are dropped. In a forked child the thread is gone: the child's
//! SIGQUIT takes the action installed before ours (by default, the
//! process ends with a core dump).

use super::context::{Interrupted, REGISTERS};
use super::handler::{self, Action};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// What the signal layer knows of a SIGQUIT: the interrupted instruction,
/// the signal's `si_code` (0, `SI_USER`, for `kill`) and the interrupted
/// registers, named (none where the platform's are not read).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Quit {
    pub(crate) pc: usize,
    pub(crate) code: i32,
    pub(crate) registers: Option<[u64; REGISTERS]>,
}

/// The pipe's write end (-1: not set up, or a forked child).
static WAKE: AtomicI32 = AtomicI32::new(-1);
/// The first SIGQUIT has been taken.
static TAKEN: AtomicBool = AtomicBool::new(false);
static PC: AtomicUsize = AtomicUsize::new(0);
static CODE: AtomicI32 = AtomicI32::new(0);
/// The interrupted registers (`Interrupted::registers`), if read.
static HAVE_REGISTERS: AtomicBool = AtomicBool::new(false);
static REGISTER_VALUES: [AtomicU64; REGISTERS] = [const { AtomicU64::new(0) }; REGISTERS];
static ACTION: OnceLock<fn(Quit)> = OnceLock::new();

/// Makes `action` what a SIGQUIT does, run on a thread of its own (once:
/// a later call does nothing). Installs the handler.
pub(crate) fn on_quit(action: fn(Quit)) {
    if ACTION.set(action).is_err() {
        return;
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [read_end, write_end] = fds;
    let started = std::thread::Builder::new()
        .name("defergc-sigquit".into())
        .spawn(move || wait(read_end));
    if started.is_err() {
        // SAFETY: our own descriptors, closed once.
        unsafe {
            libc::close(read_end);
            libc::close(write_end);
        }
        return;
    }
    WAKE.store(write_end, Ordering::Release);
    // SAFETY: registers a plain function without captures.
    unsafe { libc::pthread_atfork(None, None, Some(forget_in_child)) };
    handler::install(libc::SIGQUIT, entry, true);
}

/// In a forked child: no thread reads the pipe.
extern "C" fn forget_in_child() {
    WAKE.store(-1, Ordering::Release);
}

/// The thread that runs the action: blocks until the handler writes.
fn wait(fd: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: one byte into a local.
        let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        // The write end never closes while the process lives.
        return;
    }
    if let Some(action) = ACTION.get() {
        let registers = HAVE_REGISTERS
            .load(Ordering::Acquire)
            .then(|| std::array::from_fn(|k| REGISTER_VALUES[k].load(Ordering::Relaxed)));
        action(Quit {
            pc: PC.load(Ordering::Acquire),
            code: CODE.load(Ordering::Acquire),
            registers,
        });
    }
}

/// The handler's entry: async-signal-safe (atomics and one `write(2)`).
fn entry(i: &mut Interrupted) -> Action {
    let fd = WAKE.load(Ordering::Acquire);
    if fd < 0 {
        return Action::PassOn;
    }
    if TAKEN.swap(true, Ordering::AcqRel) {
        return Action::Done;
    }
    if let Some(values) = i.registers() {
        for (slot, value) in REGISTER_VALUES.iter().zip(values) {
            slot.store(value, Ordering::Relaxed);
        }
        HAVE_REGISTERS.store(true, Ordering::Release);
    }
    PC.store(i.pc(), Ordering::Release);
    CODE.store(i.code(), Ordering::Release);
    let byte = 1u8;
    // SAFETY: one byte from a local to our pipe; write(2) is
    // async-signal-safe, and errno is saved around it.
    unsafe {
        let errno = *libc::__errno_location();
        libc::write(fd, (&byte as *const u8).cast(), 1);
        *libc::__errno_location() = errno;
    }
    Action::Done
}
