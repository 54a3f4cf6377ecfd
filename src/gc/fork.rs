//! `fork()` from a program that uses the runtime.
//!
//! A forked child has only the thread that called `fork`. Whatever the
//! other threads held (a lock, a collection in progress) must not be held
//! in the child, and threads the runtime started (the finalizer thread,
//! the precise collector's thread) must start again there when needed.
//!
//! Each layer that has such state registers [`ForkHooks`] once, with
//! [`on_fork`]. In the parent before the fork, every layer's `quiesce`
//! first waits for background work that needs other threads' cooperation
//! to reach a quiet point (the precise collector's cycle: a thread
//! blocked on a lock another layer's `prepare` took could not answer its
//! handshake), then every layer's `prepare` takes the layer's locks; both
//! hand their guards to [`held::keep`]. After the fork the
//! guards are released, in the parent and in the child; then, in the child
//! only, `child` repairs what the missing threads held (forgets them,
//! takes over their state), and once every layer is repaired `resume`
//! starts the threads the layer runs (a worker, sysmon, a collector's
//! thread). No thread starts before every layer's `child` hook has run:
//! a thread started early would use a layer not yet repaired (a worker
//! polling the parent's epoll instance). As with `pthread_atfork`,
//! `quiesce` and `prepare` hooks run newest first (upper layers before the
//! ones they use, which they may still use); `child` and `resume` hooks
//! run oldest first. The promise covers defergc's own hooks: a program's
//! or a library's `pthread_atfork` child handler registered after
//! defergc's runs after the threads have started. bdwgc's fork handlers
//! (`GC_atfork_*`) are called from these, not registered by bdwgc (whose
//! place among the handlers would depend on whether a layer or `GC_init`
//! registered first): bdwgc takes its allocation lock and stops its
//! markers after every `prepare` hook (which may still allocate), and
//! releases them first thing after the fork, before any other release or
//! `child` hook.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

/// What a layer does around a `fork()` (see the module docs).
pub(crate) struct ForkHooks {
    /// In the parent, before any layer's `prepare`: wait for the layer's
    /// background work to reach a quiet point that needs the cooperation
    /// of other threads (the precise collector's cycle, whose handshake
    /// every mutator answers), and keep it so ([`held::keep`]). Takes
    /// no lock another layer's `prepare` takes: a thread waiting for one
    /// of those could not answer.
    pub(crate) quiesce: fn(),
    /// In the parent, before the fork, after every layer's `quiesce`: take
    /// the layer's locks ([`held::keep`]).
    pub(crate) prepare: fn(),
    /// In the child, once the locks are released: repair what the threads
    /// that do not exist there held. Starts no thread.
    pub(crate) child: fn(),
    /// In the child, after every layer's `child` hook: start the threads
    /// the layer runs.
    pub(crate) resume: fn(),
}

impl ForkHooks {
    /// Hooks that do nothing: a layer names the ones it has and takes the
    /// rest from here (`..ForkHooks::NONE`).
    pub(crate) const NONE: ForkHooks = ForkHooks {
        quiesce: || {},
        prepare: || {},
        child: || {},
        resume: || {},
    };
}

const MAX_HOOKS: usize = 16;
static HOOKS: [AtomicPtr<ForkHooks>; MAX_HOOKS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_HOOKS];
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// Adds a layer's hooks. Call once per layer (from a `Once`).
pub(crate) fn on_fork(hooks: &'static ForkHooks) {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // SAFETY: three plain C functions without arguments.
        let r = unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
        if r != 0 {
            crate::abort("defergc: pthread_atfork failed");
        }
    });
    let at = COUNT.fetch_add(1, Ordering::AcqRel);
    if at >= MAX_HOOKS {
        crate::abort("defergc: too many fork hooks");
    }
    HOOKS[at].store((hooks as *const ForkHooks).cast_mut(), Ordering::Release);
}

/// The registered hooks, oldest first.
fn hooks() -> impl DoubleEndedIterator<Item = &'static ForkHooks> {
    let n = COUNT.load(Ordering::Acquire).min(MAX_HOOKS);
    HOOKS[..n].iter().filter_map(|h| {
        // SAFETY: only on_fork stores here, and it stores &'static hooks.
        unsafe { h.load(Ordering::Acquire).as_ref() }
    })
}

/// Runs `f` for each hook; a panic is a bug in defergc and cannot cross
/// into the C caller of `fork`.
fn run(what: &str, f: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        crate::abort(&format!("defergc: a fork {what} hook panicked"));
    }
}

extern "C" fn prepare() {
    run("prepare", || {
        hooks().rev().for_each(|h| (h.quiesce)());
        hooks().rev().for_each(|h| (h.prepare)());
        super::backend::atfork_prepare();
    });
}

extern "C" fn parent() {
    run("parent", || {
        super::backend::atfork_parent();
        held::release();
    });
}

extern "C" fn child() {
    run("child", || {
        super::backend::atfork_child();
        held::release();
        hooks().for_each(|h| (h.child)());
        hooks().for_each(|h| (h.resume)());
    });
}

/// Mutex guards that `prepare` hooks hold across the fork (the handlers
/// all run on the thread that forks).
pub(crate) mod held {
    use std::any::Any;
    use std::cell::RefCell;

    thread_local! {
        static HELD: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
    }

    /// Keeps `guard` (a lock taken by a `prepare` hook) until [`release`].
    pub(crate) fn keep<G: 'static>(guard: G) {
        HELD.with(|h| h.borrow_mut().push(Box::new(guard)));
    }

    /// Releases every kept guard, newest first.
    pub(crate) fn release() {
        HELD.with(|h| {
            let mut h = h.borrow_mut();
            while let Some(guard) = h.pop() {
                drop(guard);
            }
        });
    }
}

/// For the unit tests that fork: waits for child `pid` at most `limit`,
/// then kills it; its wait status, or `None` if it had to be killed (a
/// child that blocks every signal outlives its own alarm).
#[cfg(all(test, not(loom)))]
pub(crate) fn wait_child(pid: libc::pid_t, limit: std::time::Duration) -> Option<i32> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let mut status = 0;
        // SAFETY: a non-blocking wait for the caller's own child.
        match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
            0 if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            0 => {
                // SAFETY: kills and reaps the caller's own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                return None;
            }
            r => {
                assert_eq!(r, pid, "waitpid failed");
                return Some(status);
            }
        }
    }
}
