//! Execution contexts: what a thread runs.
//!
//! A [`Context`] is one flow of control with Go semantics of its own: a
//! thread's own (its original stack), or a goroutine's (a coroutine stack
//! that the scheduler moves between threads). What moves with it lives in
//! it: its id, and one state per layer that keeps per-context state (the
//! defer chain, the precise collector's shadow stack and handshake state,
//! the goroutine itself), each created by its layer on first use and
//! destroyed with the context. A thread runs one context at a time, its
//! [`current`] one; switching to another is one pointer store
//! ([`switch_to`]).
//!
//! What belongs to the OS thread instead (bdwgc registration, tls pages,
//! allocation caches) stays with the thread, in the modules that own it.
//!
//! # Hooks
//!
//! A collector that must know when a context starts or stops running on
//! a thread, or blocks its thread outside the runtime (a system call, a
//! plain thread's park), registers [`Hooks`] once ([`set_hooks`]); the
//! scheduler switches and blocks through this module ([`run`], [`stop`],
//! [`block_enter`], [`block_exit`]) and names no collector. A switch
//! costs one load of the hooks' pointer and a direct call through it.
//!
//! # Keys
//!
//! A layer reserves a slot in every context with a static [`Key`]: its
//! rank (the layer's depth in design.md's list: contexts are torn down
//! from the deepest layer up, so a goroutine's defer chain is gone before
//! its collector registration is) and its destructor. This module knows
//! nothing of the layers beyond their keys.
//!
//! # Ids
//!
//! Every context gets an id from one counter, starting at 1: the thread
//! contexts and the goroutines share it, so an id names one context for
//! the life of the process. Contexts are created lazily (a thread that
//! never defers, roots nothing and runs no goroutine has none), so a
//! program whose first call is `defergc_main` gets goroutine 1 for its
//! main goroutine, as Go does.
//!
//! # Thread exit
//!
//! A thread's own context is destroyed in the runtime-state phase of the
//! thread-exit sequence (`gc::thread`), after tls destructors (user code)
//! ran and before the thread leaves bdwgc.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::Once;

/// Most keys a program's layers can reserve.
const MAX_KEYS: usize = 8;

/// A layer's slot in every context (see the module docs).
pub(crate) struct Key {
    /// 1 + the slot index, or 0 before the first use.
    index: AtomicUsize,
    /// The layer's depth: higher ranks are destroyed first.
    rank: u8,
    /// Destroys a non-null slot value when its context (given) is
    /// destroyed.
    destroy: unsafe fn(&Context, *mut u8),
}

impl Key {
    /// A key for a layer of depth `rank`, whose slot values `destroy`
    /// frees.
    pub(crate) const fn new(rank: u8, destroy: unsafe fn(&Context, *mut u8)) -> Key {
        Key {
            index: AtomicUsize::new(0),
            rank,
            destroy,
        }
    }

    /// The slot index of this key, reserving one on first use.
    #[inline(always)]
    fn index(&'static self) -> usize {
        match self.index.load(Ordering::Acquire) {
            0 => self.reserve(),
            i => i - 1,
        }
    }

    #[cold]
    #[inline(never)]
    fn reserve(&'static self) -> usize {
        static KEYS_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = KEYS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let i = self.index.load(Ordering::Acquire);
        if i != 0 {
            return i - 1;
        }
        let slot = KEY_COUNT.load(Ordering::Acquire);
        if slot >= MAX_KEYS {
            crate::abort("defergc: too many context keys");
        }
        KEYS[slot].store((self as *const Key).cast_mut(), Ordering::Release);
        KEY_COUNT.store(slot + 1, Ordering::Release);
        self.index.store(slot + 1, Ordering::Release);
        slot
    }
}

static KEYS: [AtomicPtr<Key>; MAX_KEYS] = [const { AtomicPtr::new(ptr::null_mut()) }; MAX_KEYS];
static KEY_COUNT: AtomicUsize = AtomicUsize::new(0);

/// The next context id: one source for threads and goroutines.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One execution context (see the module docs).
pub(crate) struct Context {
    id: Cell<u64>,
    /// Whether the runtime catches whatever unwinds out of the context's
    /// outermost frames (a goroutine's start): a panic or Goexit then ends
    /// the context, never the thread it runs on.
    boundary: Cell<bool>,
    slots: [Cell<*mut u8>; MAX_KEYS],
    /// Contexts are used by one thread at a time, handed over by the
    /// scheduler with the synchronisation of its queues.
    _not_sync: PhantomData<Cell<()>>,
}

impl Context {
    /// A new context with a fresh id and empty slots.
    pub(crate) fn new() -> Context {
        Context {
            id: Cell::new(NEXT_ID.fetch_add(1, Ordering::Relaxed)),
            boundary: Cell::new(false),
            slots: [const { Cell::new(ptr::null_mut()) }; MAX_KEYS],
            _not_sync: PhantomData,
        }
    }

    /// This context's id (never 0, never shared with another context).
    #[inline(always)]
    pub(crate) fn id(&self) -> u64 {
        self.id.get()
    }

    /// Marks the context as one whose start catches every unwinding (see
    /// the field); the go layer marks each goroutine's.
    pub(crate) fn set_boundary(&self) {
        self.boundary.set(true);
    }

    /// Whether unwinding out of the context ends only the context.
    #[inline]
    pub(crate) fn is_boundary(&self) -> bool {
        self.boundary.get()
    }

    /// The value in `key`'s slot (null until set).
    #[inline(always)]
    pub(crate) fn get(&self, key: &'static Key) -> *mut u8 {
        self.slots[key.index()].get()
    }

    /// The value in `key`'s slot, null if the key was never used:
    /// reserves nothing, so a signal handler may call it.
    #[inline(always)]
    pub(crate) fn peek(&self, key: &'static Key) -> *mut u8 {
        match key.index.load(Ordering::Acquire) {
            0 => ptr::null_mut(),
            i => self.slots[i - 1].get(),
        }
    }

    /// Stores `value` in `key`'s slot; the context's destruction passes it
    /// to the key's destructor.
    #[inline(always)]
    pub(crate) fn set(&self, key: &'static Key, value: *mut u8) {
        self.slots[key.index()].set(value);
    }

    /// Destroys the layers' states: every non-null slot goes to its key's
    /// destructor, deepest layer first, and is left empty.
    ///
    /// # Safety
    /// The context is no thread's current context, and nothing uses its
    /// states afterwards.
    pub(crate) unsafe fn destroy_states(&self) {
        let this = self;
        let n = KEY_COUNT.load(Ordering::Acquire);
        // Every goroutine's end comes here: most have no state left, and
        // the order is made on the stack, without allocating.
        if this.slots[..n].iter().all(|s| s.get().is_null()) {
            return;
        }
        let mut keys: [Option<(usize, &Key)>; MAX_KEYS] = [None; MAX_KEYS];
        for (i, k) in keys.iter_mut().enumerate().take(n) {
            // SAFETY: reserve only stores &'static keys.
            *k = unsafe { KEYS[i].load(Ordering::Acquire).as_ref() }.map(|key| (i, key));
        }
        keys[..n].sort_by_key(|k| std::cmp::Reverse(k.map(|(_, key)| key.rank)));
        for (i, key) in keys.into_iter().flatten() {
            let value = this.slots[i].replace(ptr::null_mut());
            if !value.is_null() {
                // SAFETY: the slot holds a value its key's layer stored,
                // destroyed once (the slot is cleared first).
                unsafe { (key.destroy)(this, value) };
            }
        }
    }
}

thread_local! {
    /// The context this thread runs now, or null before its first use.
    /// `const` and without a destructor: readable during thread teardown.
    static CURRENT: Cell<*const Context> = const { Cell::new(ptr::null()) };
    /// The thread's own context, or null.
    static OWN: Cell<*const Context> = const { Cell::new(ptr::null()) };
    /// Whether this is one of the runtime's own threads (a scheduler
    /// worker): see [`on_runtime_thread`].
    static RUNTIME: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as one of the runtime's own: between the
/// goroutines it runs, it holds nothing of any heap and never stops at a
/// collector's safepoint. Creates no context (a context takes an id from
/// the goroutines' sequence).
pub(crate) fn mark_runtime_thread() {
    crate::fresh::with(&RUNTIME, |r| r.set(true));
}

/// Whether the caller runs on a runtime thread outside any goroutine (its
/// own context, or none yet): what it copies must not make it a precise
/// mutator, which the collector's rounds would wait for for ever (an idle
/// worker sleeps).
#[cfg_attr(not(feature = "precise"), allow(dead_code))] // read by the precise collector
pub(crate) fn on_runtime_thread() -> bool {
    if !crate::fresh::fresh_get!(RUNTIME: bool) {
        return false;
    }
    let current = crate::fresh::fresh_get!(CURRENT: *const Context);
    current.is_null() || current == crate::fresh::fresh_get!(OWN: *const Context)
}

/// The context this thread runs now: a goroutine's while one runs here,
/// else the thread's own (created on first use).
#[inline(always)]
pub(crate) fn current() -> &'static Context {
    let c = crate::fresh::fresh_get!(CURRENT: *const Context);
    if c.is_null() {
        return create_own();
    }
    // SAFETY: CURRENT points to a live context: the thread's own (freed only
    // at thread exit, after which CURRENT is null) or a goroutine's, which
    // the scheduler keeps alive while it runs here.
    unsafe { &*c }
}

/// The context this thread runs now, if it has one (never creates one).
#[inline(always)]
pub(crate) fn existing() -> Option<&'static Context> {
    // SAFETY: as in current.
    unsafe { crate::fresh::fresh_get!(CURRENT: *const Context).as_ref() }
}

#[cold]
#[inline(never)]
fn create_own() -> &'static Context {
    let own = Box::into_raw(Box::new(Context::new()));
    crate::fresh::with(&OWN, |o| o.set(own));
    crate::fresh::with(&CURRENT, |c| c.set(own));
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        crate::gc::thread::on_thread_exit(crate::gc::thread::ExitPhase::RuntimeState, destroy_own)
    });
    crate::gc::thread::arm_exit_sequence();
    // SAFETY: just created; freed only by destroy_own at thread exit.
    unsafe { &*own }
}

/// Makes `next` this thread's current context and returns the previous
/// one (null if the thread had none yet). The go layer's scheduler calls
/// this when it switches a thread to a goroutine's stack and back, on the
/// worker's own stack, which never moves to another thread: the one
/// caller that may read the thread-local directly (invariant 10).
///
/// # Safety
/// `next` is a live context that no other thread runs, and stays live
/// until it is switched away from; the caller runs on a thread's own
/// stack, not a goroutine's.
#[inline(always)]
pub(crate) unsafe fn switch_to(next: *const Context) -> *const Context {
    CURRENT.with(|c| c.replace(next))
}

/// What a collector does as contexts switch and block (see the module
/// docs). Each runs on the thread concerned, on its own stack.
pub(crate) struct Hooks {
    /// `ctx` has just become this thread's current context.
    pub(crate) switch_in: fn(&Context),
    /// `ctx` has just stopped running on this thread (it parked, yielded,
    /// or entered a system call).
    pub(crate) switch_out: fn(&Context),
    /// The current context is about to block its thread outside the
    /// runtime.
    pub(crate) block_enter: fn(),
    /// The current context is back from [`Hooks::block_enter`]'s block.
    pub(crate) block_exit: fn(),
}

/// The registered hooks, or null: one collector registers them, before
/// any context has state of its own that they act on.
static HOOKS: AtomicPtr<Hooks> = AtomicPtr::new(ptr::null_mut());

/// Registers the collector's hooks (idempotent for the same hooks).
/// Builds whose collectors need none (bdwgc, nogc) never call it.
#[cfg_attr(not(feature = "precise"), allow(dead_code))]
pub(crate) fn set_hooks(hooks: &'static Hooks) {
    HOOKS.store((hooks as *const Hooks).cast_mut(), Ordering::Release);
}

#[inline(always)]
fn hooks() -> Option<&'static Hooks> {
    // SAFETY: set_hooks only stores &'static hooks.
    unsafe { HOOKS.load(Ordering::Acquire).as_ref() }
}

/// Makes `next` this thread's current context (see [`switch_to`]), then
/// runs the switch-in hook; returns the previous context for [`stop`].
///
/// # Safety
/// As [`switch_to`].
#[inline(always)]
pub(crate) unsafe fn run(next: &Context) -> *const Context {
    // SAFETY: the caller's obligations are switch_to's.
    let previous = unsafe { switch_to(next) };
    if let Some(h) = hooks() {
        (h.switch_in)(next);
    }
    previous
}

/// `ctx` stopped running: `previous` (what [`run`] returned) is current
/// again, then the switch-out hook runs for `ctx`.
///
/// # Safety
/// As [`switch_to`], for `previous`; `ctx` is the context [`run`] made
/// current, now suspended.
#[inline(always)]
pub(crate) unsafe fn stop(ctx: &Context, previous: *const Context) {
    // SAFETY: the caller's obligations are switch_to's.
    unsafe { switch_to(previous) };
    if let Some(h) = hooks() {
        (h.switch_out)(ctx);
    }
}

/// The current context is about to block its thread outside the runtime
/// (a system call, a plain thread's park): a collector stops waiting for
/// it until [`block_exit`].
#[inline(always)]
pub(crate) fn block_enter() {
    if let Some(h) = hooks() {
        (h.block_enter)();
    }
}

/// Back from the block [`block_enter`] announced.
#[inline(always)]
pub(crate) fn block_exit() {
    if let Some(h) = hooks() {
        (h.block_exit)();
    }
}

/// Thread exit: the thread's own context is destroyed.
fn destroy_own() {
    let own = crate::fresh::with(&OWN, |o| o.replace(ptr::null()));
    if own.is_null() {
        return;
    }
    // Whatever ran here last, the thread's own context is the one left.
    crate::fresh::with(&CURRENT, |c| c.set(ptr::null()));
    // SAFETY: created by create_own with Box::into_raw; no longer current.
    unsafe {
        let own = Box::from_raw(own.cast_mut());
        own.destroy_states();
    }
}
