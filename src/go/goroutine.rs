//! From inside a goroutine, and about goroutines: [`gosched`], [`goid`],
//! the park / ready primitive ([`park`], [`Goroutine::ready`], and
//! [`park_unlock`] under the runtime's own waits), system calls
//! ([`enter_syscall`], [`exit_syscall`]), goroutine-local words, and the
//! counts (`runtime.NumGoroutine`, stack usage).

use super::g::{self, G};
use super::{procs, sched, stack};
use std::sync::atomic::Ordering;

/// Go's `runtime.Gosched()`: lets other goroutines run. Outside a
/// goroutine, yields the thread.
pub fn gosched() {
    match procs::current_g() {
        Some(g) => sched::gosched(g),
        None => std::thread::yield_now(),
    }
}

/// The running goroutine's id (Go's goid; the main goroutine of a program
/// whose first call was [`run`](super::run) is 1), or 0 outside a goroutine.
pub fn goid() -> u64 {
    procs::current_g().map_or(0, G::id)
}

/// A goroutine, for [`park`] / [`Goroutine::ready`]: the primitive a
/// language's own channels and locks build on. Holds the goroutine's
/// identity, so a handle kept past the goroutine's end wakes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Goroutine {
    g: *const G,
    tag: u64,
}

// SAFETY: a handle is an address and a tag; ready checks the tag against
// the goroutine's status word (atomic) before anything else.
unsafe impl Send for Goroutine {}
// SAFETY: as above.
unsafe impl Sync for Goroutine {}

impl Goroutine {
    /// The goroutine a C handle names, if `g` is the address of a
    /// goroutine's struct (anything else is refused, never read).
    pub(crate) fn from_raw(g: *const u8, id: u64) -> Option<Goroutine> {
        stack::slot_of_header(g as usize)?;
        Some(Goroutine {
            g: g.cast(),
            tag: g::tag_of(id),
        })
    }

    /// The address of the goroutine's struct (the C handle's `g`).
    pub(crate) fn as_raw(self) -> *const u8 {
        self.g.cast()
    }

    /// The running goroutine, or `None` outside one.
    pub fn current() -> Option<Goroutine> {
        procs::current_g().map(|g| Goroutine { g, tag: g.tag() })
    }

    /// Its id.
    pub fn id(self) -> u64 {
        self.tag >> 32
    }

    /// Asks the processor for the goroutine's status line (a hint).
    pub(crate) fn prefetch(&self) {
        // SAFETY: only the field's address is computed (nothing is read);
        // headers stay mapped for the life of the process.
        crate::cache::prefetch(unsafe { std::ptr::addr_of!((*self.g).status) });
    }

    /// Makes it runnable: if it is parked, it runs again; if not yet, its
    /// next [`park`] returns at once. Returns false (and does nothing) if
    /// the goroutine has ended. Callable from any thread.
    pub fn ready(self) -> bool {
        // SAFETY: goroutine headers live in stack slots, which stay mapped
        // for the life of the process; the tag check makes a stale handle
        // harmless.
        sched::ready(unsafe { &*self.g }, self.tag)
    }

    /// [`ready`](Self::ready), queueing through `batch` (a waker of many).
    pub(crate) fn ready_into(self, batch: &mut sched::ReadyBatch) -> bool {
        // SAFETY: as in `ready`.
        sched::ready_into(unsafe { &*self.g }, self.tag, batch)
    }
}

/// Parks the running goroutine as [`park`] does, and runs `unlock(arg)`
/// once it has switched out (Go's `gopark` with an unlock function): a
/// waiter that joined a wait queue under a lock releases the lock there,
/// so its waker (which takes the lock) finds it parked. Returns false
/// outside a goroutine (after running `unlock`).
///
/// # Safety
/// `unlock` may be called with `arg` on the worker thread, after the
/// goroutine switched out.
pub(crate) unsafe fn park_unlock(
    reason: &'static str,
    unlock: unsafe fn(*mut u8),
    arg: *mut u8,
) -> bool {
    match procs::current_g() {
        Some(g) => {
            sched::park(g, reason, Some(g::Unlock { f: unlock, arg }));
            true
        }
        None => {
            // SAFETY: the caller's unlock, run as promised.
            unsafe { unlock(arg) };
            false
        }
    }
}

/// Parks the running goroutine until another readies it
/// ([`Goroutine::ready`]). As with a futex, a ready that came first makes
/// this return at once, so callers wait in a loop on their own condition.
/// `reason` is what a deadlock report says it waits for ("chan receive").
///
/// # Panics
/// Outside a goroutine: there is nothing to switch to (a `defergc:`
/// message).
pub fn park(reason: &'static str) {
    match procs::current_g() {
        Some(g) => sched::park(g, reason, None),
        None => panic!("defergc: go::park outside a goroutine"),
    }
}

/// Declares that the running goroutine is about to block its thread (a
/// system call, native code): its worker's processor goes to another
/// thread meanwhile. Pair with [`exit_syscall`]. Does nothing outside a
/// goroutine.
#[inline(never)]
pub fn enter_syscall() {
    enter_syscall_from(crate::unwind::caller_frame());
}

/// [`enter_syscall`] for the function whose frame record is `at`
/// (`unwind::caller_frame`): the C ABI's entry names its caller.
pub(crate) fn enter_syscall_from(at: crate::unwind::FrameRecord) {
    if let Some((m, _)) = procs::current_m_g() {
        super::syscall::enter_syscall(m, at);
    }
}

/// Ends [`enter_syscall`]: the goroutine takes a processor again (and may
/// wait for one).
pub fn exit_syscall() {
    if let Some((m, g)) = procs::current_m_g() {
        super::syscall::exit_syscall(m, g);
    }
}

/// Runs `f` between [`enter_syscall`] and [`exit_syscall`].
pub fn syscall<R>(f: impl FnOnce() -> R) -> R {
    enter_syscall();
    let r = f();
    exit_syscall();
    r
}

/// Go's `runtime.LockOSThread()`: the running goroutine keeps its worker
/// thread, and that thread runs no other goroutine, until as many
/// [`unlock_os_thread`] calls as lock calls (calls nest, as Go's do
/// since 1.10). While the goroutine is parked its thread waits for it
/// (the thread's processor runs other goroutines on other threads). A
/// goroutine that exits locked ends its thread, as in Go: code that
/// changed the thread's state (a namespace, a signal mask, a C
/// library's thread-local) leaves it with the thread. The main goroutine
/// runs on a worker thread like any other (the thread that called
/// [`run`](super::run) only waits), so locking it keeps a worker, not
/// the process's first thread. Does nothing outside a goroutine.
pub fn lock_os_thread() {
    let (Some(g), Some(m)) = (procs::current_g(), procs::current_m()) else {
        return;
    };
    let Some(n) = g.lock_count.get().checked_add(1) else {
        fatal_plain("LockOSThread nesting overflow")
    };
    g.lock_count.set(n);
    g.locked_m
        .store((m as *const procs::M).cast_mut().cast(), Ordering::Release);
    m.locked_g.set(g);
}

/// Go's `runtime.UnlockOSThread()`: undoes one [`lock_os_thread`]; the
/// last one lets the goroutine move between threads again. With no lock
/// to undo it does nothing (as in Go), and outside a goroutine too.
pub fn unlock_os_thread() {
    let (Some(g), Some(m)) = (procs::current_g(), procs::current_m()) else {
        return;
    };
    let n = g.lock_count.get();
    if n == 0 {
        return;
    }
    g.lock_count.set(n - 1);
    if n == 1 {
        g.locked_m.store(std::ptr::null_mut(), Ordering::Release);
        m.locked_g.set(std::ptr::null());
    }
}

/// Goroutine-local words: each goroutine has [`LOCAL_WORDS`] of them,
/// zero at start, scanned by the collectors (a pointer stored there keeps
/// its object alive while the goroutine lives).
pub const LOCAL_WORDS: usize = g::LOCALS;

/// The running goroutine's local word `i`, or `None` outside a goroutine
/// or for `i >= LOCAL_WORDS`.
pub fn local(i: usize) -> Option<usize> {
    procs::current_g()
        .and_then(|g| g.locals.get(i))
        .map(|c| c.get())
}

/// Sets the running goroutine's local word `i`; false outside a goroutine
/// or for `i >= LOCAL_WORDS`.
pub fn set_local(i: usize, value: usize) -> bool {
    match procs::current_g().and_then(|g| g.locals.get(i)) {
        Some(c) => {
            c.set(value);
            true
        }
        None => false,
    }
}

/// The running goroutine's local words (for the C ABI), or null.
pub(crate) fn locals_ptr() -> *mut usize {
    procs::current_g().map_or(std::ptr::null_mut(), |g| g.locals.as_ptr() as *mut usize)
}

/// Goroutine stacks in use, and the bytes of address space mapped for
/// them (only touched pages cost memory). A goroutine holds one stack
/// from its `go` statement until it finishes: the count is the live
/// goroutines' (a stack count of its own cost every start and every end
/// a read-modify-write on one shared line).
pub fn stack_usage() -> (usize, usize) {
    (num_goroutine(), stack::mapped())
}

/// Goroutines alive now (Go's `runtime.NumGoroutine`).
pub fn num_goroutine() -> usize {
    procs::get().map_or(0, |s| s.goroutine_count())
}

/// Go's fatal error raised by a goroutine's own misuse (`sync: unlock of
/// unlocked mutex`): the message and the running goroutine, status 2.
pub(crate) fn fatal_plain(message: &str) -> ! {
    let id = procs::current_g().map_or(0, G::id);
    if id != 0 {
        crate::defer::exit_go(&format!(
            "fatal error: {message}\n\ngoroutine {id} [running]:"
        ))
    } else {
        crate::defer::exit_go(&format!("fatal error: {message}"))
    }
}
