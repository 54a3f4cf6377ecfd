//! Thread registration and the thread-exit sequence.
//!
//! Every thread that touches collector memory through this crate is
//! registered with the collector on first use ([`ensure_registered`]) and
//! unregistered when it exits; this holds for threads Rust did not create.
//!
//! The fast path is one read of a `const` thread-local byte. The slow path
//! starts the collector, registers the thread and arms a pthread key whose
//! destructor is the thread-exit sequence:
//!
//! 1. the exit hooks the layers above registered ([`on_thread_exit`]), by
//!    phase: first those that run user code (destructors that may still use
//!    GC memory and every other layer), then those that tear down the
//!    thread's runtime state (its execution context, its registration with
//!    the precise collector); within a phase, in the order they were added;
//! 2. unregistration from bdwgc.
//!
//! glibc runs pthread-key destructors after all `thread_local!` (and C++
//! `thread_local`) destructors, so those may still use GC memory and slots.
//! If something touches GC memory after step 2 (another library's key
//! destructor, say), the thread is registered again and the key re-armed;
//! glibc then runs the sequence again, up to PTHREAD_DESTRUCTOR_ITERATIONS.
//!
//! The main thread never runs pthread-key destructors: it stays registered
//! until the process exits, and its exit hooks do not run.

use super::backend;
use std::cell::Cell;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

const UNREGISTERED: u8 = 0;
const REGISTERED: u8 = 1;

thread_local! {
    static STATE: Cell<u8> = const { Cell::new(UNREGISTERED) };
}

/// Registers the calling thread with every enabled collector unless it
/// already is. Cheap enough for every allocation.
#[inline(always)]
pub(crate) fn ensure_registered() {
    if crate::fresh::fresh_get!(STATE: u8) != REGISTERED {
        register_slow();
    }
}

#[cold]
#[inline(never)]
fn register_slow() {
    super::init();
    backend::register_current_thread();
    arm_exit_sequence();
    crate::fresh::with(&STATE, |s| s.set(REGISTERED));
}

/// Whether the calling thread is currently registered with the collector
/// (under `nogc`: whether its exit sequence is armed).
pub fn is_thread_registered() -> bool {
    crate::fresh::fresh_get!(STATE: u8) == REGISTERED
}

/// When a thread-exit hook runs: the phases run in this order, before the
/// thread leaves bdwgc.
#[derive(Clone, Copy)]
pub(crate) enum ExitPhase {
    /// Hooks that run user code (destructors), which may still use GC
    /// memory and the runtime's per-thread state.
    UserCode = 0,
    /// Hooks that tear the thread's runtime state down.
    RuntimeState = 1,
}

const PHASES: usize = 2;
const MAX_HOOKS: usize = 4;
static HOOKS: [[AtomicUsize; MAX_HOOKS]; PHASES] =
    [const { [const { AtomicUsize::new(0) }; MAX_HOOKS] }; PHASES];

/// Adds `hook` to the thread-exit sequence, in `phase`, after the hooks
/// already added to it. Each layer adds its hook once.
pub(crate) fn on_thread_exit(phase: ExitPhase, hook: fn()) {
    for slot in &HOOKS[phase as usize] {
        if slot
            .compare_exchange(0, hook as usize, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return;
        }
    }
    crate::abort("defergc: too many thread-exit hooks");
}

fn exit_key() -> libc::pthread_key_t {
    static KEY: OnceLock<libc::pthread_key_t> = OnceLock::new();
    *KEY.get_or_init(|| {
        let mut key = 0;
        // SAFETY: key is a valid out-pointer; the destructor is a plain C fn.
        if unsafe { libc::pthread_key_create(&mut key, Some(run_exit_sequence)) } != 0 {
            crate::abort("defergc: pthread_key_create failed for the thread-exit key");
        }
        key
    })
}

/// Makes sure the exit sequence runs when this thread exits (again, if it
/// already ran: glibc re-runs key destructors whose value was set anew).
pub(crate) fn arm_exit_sequence() {
    // Any non-null value makes glibc call the destructor at thread exit.
    // SAFETY: the key was created by exit_key.
    if unsafe { libc::pthread_setspecific(exit_key(), std::ptr::dangling::<c_void>()) } != 0 {
        crate::abort("defergc: pthread_setspecific failed for the thread-exit key");
    }
}

extern "C" fn run_exit_sequence(_value: *mut c_void) {
    let run = std::panic::catch_unwind(|| {
        for phase in &HOOKS {
            for slot in phase {
                let hook = slot.load(Ordering::Acquire);
                if hook == 0 {
                    break;
                }
                // SAFETY: only on_thread_exit stores here, and it stores fns.
                let hook: fn() = unsafe { std::mem::transmute::<usize, fn()>(hook) };
                hook();
            }
        }
        unregister_now();
    });
    if run.is_err() {
        crate::abort("defergc: a panic escaped a thread-exit hook");
    }
}

/// Unregisters the calling thread from the collector now.
pub(crate) fn unregister_now() {
    if crate::fresh::fresh_get!(STATE: u8) == REGISTERED {
        backend::unregister_current_thread();
        crate::fresh::with(&STATE, |s| s.set(UNREGISTERED));
    }
}

/// Keeps the calling thread registered for its lifetime, for code that
/// wants registration to be explicit. Registration is automatic anyway; a
/// guard that registered the thread unregisters it when dropped (its stack
/// is no longer scanned from then on), and a guard created on an
/// already-registered thread does nothing when dropped.
///
/// ```
/// let guard = defergc::gc::ThreadGuard::new();
/// assert!(defergc::gc::is_thread_registered());
/// drop(guard);
/// ```
#[must_use = "the thread is unregistered when the guard is dropped"]
pub struct ThreadGuard {
    registered_here: bool,
    _not_send: PhantomData<*mut ()>,
}

impl ThreadGuard {
    /// Registers the calling thread if it is not registered yet.
    pub fn new() -> ThreadGuard {
        let registered_here = !is_thread_registered();
        ensure_registered();
        ThreadGuard {
            registered_here,
            _not_send: PhantomData,
        }
    }
}

impl Default for ThreadGuard {
    fn default() -> ThreadGuard {
        ThreadGuard::new()
    }
}

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        if self.registered_here {
            unregister_now();
        }
    }
}

/// Spawns a thread that is registered before `f` runs (it would be on first
/// use anyway) and unregistered when it exits.
pub fn spawn<F, T>(f: F) -> std::thread::JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::thread::spawn(move || {
        ensure_registered();
        f()
    })
}
