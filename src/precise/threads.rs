//! The thread registry, safepoints, and native-code declarations.
//!
//! Every thread that uses the precise heap has a [`ThreadState`] (shadow
//! stack, bump buffers, handle cache) and is in the registry. Registration
//! is automatic on first use ([`current`]) and undone at thread exit by the
//! destructor of a [`crate::tls`] slot; [`register_thread`] and
//! [`unregister_thread`] do it explicitly.
//!
//! # Status and who may touch a thread's state
//!
//! A thread is `RUNNING` (mutating; only it touches its state), `NATIVE`
//! (declared it will not touch the heap until [`leave_native`]; the
//! collector may read and reset its state), or `PARKED` (stopped at a
//! safepoint; likewise). Only the thread itself changes its status.
//!
//! # Stop-the-world protocol
//!
//! [`stop_the_world`] takes the registry lock, sets `collecting`, stores
//! [`SAFEPOINT`] and waits on a condition variable until no registered
//! thread but the caller is `RUNNING`. It never gives up and never proceeds
//! while one is (after 10 s it prints which threads it waits for, once, and
//! keeps waiting). The returned [`World`] keeps the lock for the whole
//! collection; dropping it resumes everyone.
//!
//! - The safepoint poll ([`poll`]) is one relaxed load of [`SAFEPOINT`];
//!   allocation, frame push/pop and [`safepoint`] poll. The slow path parks
//!   under the lock and wakes the collector.
//! - [`enter_native`] stores `NATIVE` then loads [`SAFEPOINT`];
//!   the collector stores [`SAFEPOINT`] then loads statuses (all `SeqCst`),
//!   so either the collector sees `NATIVE` or the thread sees the request
//!   and wakes the collector under the lock (no lost wake-up).
//! - [`leave_native`] stores `RUNNING` then loads [`SAFEPOINT`]; if a
//!   collection was requested it parks until that collection is over, so a
//!   collector that counted the thread as native never sees it run.
//! - Registration waits while a collection runs; unregistration declares
//!   the thread native first, then removes it under the lock.
//!
//! Lock order: registry, then heap, then handle pool. Nothing polls a
//! safepoint while holding the heap lock or the handle pool lock.

use super::error::{Error, Result};
use super::handles::LocalHandles;
use super::heap::{self, LocalHeap};
use super::shadow::ShadowStack;
use crate::tls;
use std::cell::{Cell, UnsafeCell};
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Mutating: only the thread itself touches its state.
pub(crate) const RUNNING: u32 = 0;
/// In native code: the collector does not wait for it, and scans it.
pub(crate) const NATIVE: u32 = 1;
/// Stopped at a safepoint for a collection.
pub(crate) const PARKED: u32 = 2;

/// Set while a collection wants (or has) the world stopped. The safepoint
/// poll is one relaxed load of this.
pub(crate) static SAFEPOINT: AtomicBool = AtomicBool::new(false);

/// One registered thread's collector state.
pub(crate) struct ThreadState {
    pub(crate) status: AtomicU32,
    /// Registration serial number, for diagnostics.
    id: u64,
    name: Option<String>,
    objects_allocated: AtomicU64,
    local: UnsafeCell<Local>,
}

/// The parts of a thread's state that only one party touches at a time
/// (see the module docs).
pub(crate) struct Local {
    pub(crate) heap: LocalHeap,
    pub(crate) handles: LocalHandles,
    pub(crate) shadow: ShadowStack,
}

impl ThreadState {
    /// The thread-local collector state.
    ///
    /// # Safety
    /// Either the caller is this state's thread, it is `RUNNING`, and no
    /// other reference from `local` is live; or the caller is the collector
    /// holding a [`World`] and the thread is not `RUNNING`.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn local(&self) -> &mut Local {
        // SAFETY: exclusivity is the caller's obligation (see above).
        unsafe { &mut *self.local.get() }
    }

    /// Counts an allocation (owner thread only).
    #[inline(always)]
    pub(crate) fn count_allocation(&self) {
        // Only the owner writes: a load and a store, no read-modify-write.
        let n = self.objects_allocated.load(Ordering::Relaxed);
        self.objects_allocated.store(n + 1, Ordering::Relaxed);
    }

    fn describe(&self) -> String {
        match &self.name {
            Some(name) => format!("#{} ({name})", self.id),
            None => format!("#{}", self.id),
        }
    }
}

/// A registered thread, as the registry keeps it.
struct ThreadPtr(*const ThreadState);

// SAFETY: the registry only hands these to the collector, which touches a
// thread's state under the protocol in the module docs.
unsafe impl Send for ThreadPtr {}

struct Registry {
    threads: Vec<ThreadPtr>,
    collecting: bool,
    next_id: u64,
    /// Allocation count of threads that have unregistered.
    exited_objects: u64,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    threads: Vec::new(),
    collecting: false,
    next_id: 1,
    exited_objects: 0,
});
/// The collector waits here for threads to stop.
static STOPPED: Condvar = Condvar::new();
/// Parked threads (and would-be registrants) wait here for the end of a
/// collection.
static RESUMED: Condvar = Condvar::new();

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// This thread's state, or null while unregistered. `const` and
    /// without a destructor: readable at any point of thread teardown.
    static CURRENT: Cell<*const ThreadState> = const { Cell::new(ptr::null()) };
}

/// Unregisters the thread when it exits (after its `thread_local!`
/// destructors, from the `tls` teardown).
static EXIT: tls::StaticSlot<()> = tls::StaticSlot::new(Some(on_thread_exit));

/// This thread's state if it is registered (in any status), else null.
#[inline(always)]
pub(crate) fn current_ptr() -> *const ThreadState {
    CURRENT.with(Cell::get)
}

/// This thread's state, registering the thread on first use;
/// [`Error::InNative`] if it declared itself in native code.
///
/// The reference is valid until the thread unregisters, which its caller
/// (this thread, inside one API call) cannot do meanwhile.
#[inline(always)]
pub(crate) fn current() -> Result<&'static ThreadState> {
    let ts = current_ptr();
    if ts.is_null() {
        return register_current();
    }
    // SAFETY: CURRENT points to this thread's live state; only this thread
    // frees it, and not during this call.
    let ts = unsafe { &*ts };
    if ts.status.load(Ordering::Relaxed) != RUNNING {
        return Err(Error::InNative);
    }
    Ok(ts)
}

#[cold]
#[inline(never)]
fn register_current() -> Result<&'static ThreadState> {
    super::ensure_started();
    let name = std::thread::current().name().map(str::to_owned);
    let ts: *const ThreadState = {
        let mut reg = registry();
        // A thread that appears mid-collection starts after it.
        while reg.collecting {
            reg = RESUMED.wait(reg).unwrap_or_else(|e| e.into_inner());
        }
        let id = reg.next_id;
        reg.next_id += 1;
        let ts = Box::into_raw(Box::new(ThreadState {
            status: AtomicU32::new(RUNNING),
            id,
            name,
            objects_allocated: AtomicU64::new(0),
            local: UnsafeCell::new(Local {
                heap: LocalHeap::new(),
                handles: LocalHandles::new(),
                shadow: ShadowStack::new(),
            }),
        }));
        reg.threads.push(ThreadPtr(ts));
        ts
    };
    CURRENT.with(|c| c.set(ts));
    // Arms the exit destructor (again, if a previous one already ran).
    EXIT.set(());
    // SAFETY: just registered; freed only by this thread's unregistration.
    Ok(unsafe { &*ts })
}

fn on_thread_exit(_: ()) {
    let ts = current_ptr();
    if !ts.is_null() {
        // SAFETY: this thread's own live state.
        let _ = unregister_state(unsafe { &*ts }, true);
    }
}

/// Removes `ts` (this thread's state) from the registry and frees it. With
/// `forced` (thread exit), open frames are discarded; otherwise they are
/// [`Error::FramesOpen`].
fn unregister_state(ts: &ThreadState, forced: bool) -> Result<()> {
    // SAFETY: our own state; not yet declared native, so ours alone.
    let depth = unsafe { ts.local() }.shadow.depth();
    if depth > 0 && !forced {
        return Err(Error::FramesOpen);
    }
    declare_native(ts);
    let mut reg = registry();
    // No collection is past its handshake while we hold the lock, and the
    // collector only touches thread state after it: ours again.
    // SAFETY: see above.
    let local = unsafe { ts.local() };
    heap::retire(&mut local.heap);
    local.handles.give_back();
    let me = ts as *const ThreadState;
    reg.threads.retain(|t| t.0 != me);
    reg.exited_objects += ts.objects_allocated.load(Ordering::Relaxed);
    // A collector waiting for threads re-checks the (shorter) list.
    STOPPED.notify_all();
    drop(reg);
    CURRENT.with(|c| c.set(ptr::null()));
    // SAFETY: allocated by register_current, no longer reachable from the
    // registry or CURRENT; Frame guards compare against CURRENT before use.
    drop(unsafe { Box::from_raw(me.cast_mut()) });
    Ok(())
}

/// Registers the calling thread with the precise collector if it is not
/// already (in which case this does nothing). Registration is automatic on
/// first use; this makes it explicit.
pub fn register_thread() -> Result<()> {
    if current_ptr().is_null() {
        register_current()?;
    }
    Ok(())
}

/// Unregisters the calling thread: its shadow stack stops being a root and
/// its caches return to the collector. Using the heap afterwards registers
/// it again. [`Error::FramesOpen`] while it has open frames,
/// [`Error::NotRegistered`] if it is not registered.
pub fn unregister_thread() -> Result<()> {
    let ts = current_ptr();
    if ts.is_null() {
        return Err(Error::NotRegistered);
    }
    // SAFETY: this thread's own live state.
    unregister_state(unsafe { &*ts }, false)
}

/// Whether the calling thread is registered with the precise collector.
pub fn is_thread_registered() -> bool {
    !current_ptr().is_null()
}

/// The safepoint poll: one relaxed load on the fast path.
#[inline(always)]
pub(crate) fn poll(ts: &ThreadState) {
    if SAFEPOINT.load(Ordering::Relaxed) {
        park(ts);
    }
}

#[cold]
#[inline(never)]
fn park(ts: &ThreadState) {
    drop(park_locked(ts, registry()));
}

/// Parks `ts` (this thread) until no collection runs.
fn park_locked(
    ts: &ThreadState,
    mut reg: MutexGuard<'static, Registry>,
) -> MutexGuard<'static, Registry> {
    if !reg.collecting {
        return reg;
    }
    ts.status.store(PARKED, Ordering::SeqCst);
    STOPPED.notify_all();
    while reg.collecting {
        reg = RESUMED.wait(reg).unwrap_or_else(|e| e.into_inner());
    }
    ts.status.store(RUNNING, Ordering::SeqCst);
    reg
}

/// An explicit safepoint: if a collection is waiting, stop here until it
/// is over. Compiled code calls this in loops that neither allocate nor
/// push frames, so that collections are never held up for long.
/// [`Error::InNative`] in native code.
#[inline]
pub fn safepoint() -> Result<()> {
    poll(current()?);
    Ok(())
}

fn declare_native(ts: &ThreadState) {
    ts.status.store(NATIVE, Ordering::SeqCst);
    if SAFEPOINT.load(Ordering::SeqCst) {
        // The collector may be waiting for this thread: wake it under the
        // lock so that the wake-up cannot fall between its check and wait.
        let _reg = registry();
        STOPPED.notify_all();
    }
}

/// Declares that the calling thread is about to run code that does not
/// touch the precise heap (a blocking call, a long computation): until
/// [`leave_native`], collections do not wait for it and scan its shadow
/// stack on its behalf. Heap operations in between fail with
/// [`Error::InNative`], as does a second `enter_native`.
pub fn enter_native() -> Result<()> {
    declare_native(current()?);
    Ok(())
}

/// Ends [`enter_native`]. If a collection is running, waits until it is
/// over. [`Error::NotInNative`] if the thread is not in native code.
pub fn leave_native() -> Result<()> {
    let ts = current_ptr();
    if ts.is_null() {
        return Err(Error::NotInNative);
    }
    // SAFETY: this thread's own live state.
    let ts = unsafe { &*ts };
    if ts.status.load(Ordering::Relaxed) != NATIVE {
        return Err(Error::NotInNative);
    }
    ts.status.store(RUNNING, Ordering::SeqCst);
    if SAFEPOINT.load(Ordering::SeqCst) {
        park(ts);
    }
    Ok(())
}

/// Keeps the calling thread in native code (see [`enter_native`]) until
/// dropped.
#[must_use = "the thread leaves native code when the guard is dropped"]
pub struct NativeGuard {
    _not_send: PhantomData<*mut ()>,
}

impl NativeGuard {
    /// Enters native code; errors as [`enter_native`].
    pub fn enter() -> Result<NativeGuard> {
        enter_native()?;
        Ok(NativeGuard {
            _not_send: PhantomData,
        })
    }
}

impl Drop for NativeGuard {
    fn drop(&mut self) {
        // The guard entered native, so the thread is in native code.
        let _ = leave_native();
    }
}

/// Runs `f` in native code: collections do not wait for this thread while
/// `f` runs (`f` must not touch the precise heap). Wrap blocking calls
/// (joins, locks, channel receives) in this, or a collection started by
/// another thread waits for this one until they return.
pub fn native<R>(f: impl FnOnce() -> R) -> Result<R> {
    let guard = NativeGuard::enter()?;
    let r = f();
    drop(guard);
    Ok(r)
}

/// The stopped world: every registered thread is parked or in native code
/// and the registry is locked. Dropping it resumes the threads.
pub(crate) struct World {
    reg: MutexGuard<'static, Registry>,
    me: *const ThreadState,
    /// When the collector asked the world to stop.
    pub(crate) requested: Instant,
}

impl World {
    /// Objects allocated by all threads, past and present, so far.
    pub(crate) fn allocated_objects(&self) -> u64 {
        let mut n = self.reg.exited_objects;
        for t in self.threads() {
            n += t.objects_allocated.load(Ordering::Relaxed);
        }
        n
    }

    /// Every registered thread, the collector's own included.
    pub(crate) fn threads(&self) -> impl Iterator<Item = &ThreadState> + '_ {
        // SAFETY: registered states stay allocated while listed, and the
        // list cannot change while we hold the lock.
        self.reg.threads.iter().map(|t| unsafe { &*t.0 })
    }
}

impl Drop for World {
    fn drop(&mut self) {
        SAFEPOINT.store(false, Ordering::SeqCst);
        self.reg.collecting = false;
        // SAFETY: the collector's own state, live for the whole collection.
        unsafe { &*self.me }.status.store(RUNNING, Ordering::SeqCst);
        RESUMED.notify_all();
    }
}

/// How long the handshake waits before saying which threads it waits for.
const HANDSHAKE_WARNING: Duration = Duration::from_secs(10);

/// Stops every registered thread at a safepoint; `me` (this thread, which
/// must be `RUNNING` and at a safepoint) counts as stopped.
///
/// If another thread is collecting, parks until it is done; then returns
/// `None` unless `force`, in which case it goes on to collect itself.
pub(crate) fn stop_the_world(me: &ThreadState, force: bool) -> Option<World> {
    let mut reg = registry();
    if reg.collecting {
        reg = park_locked(me, reg);
        if !force {
            return None;
        }
        while reg.collecting {
            reg = park_locked(me, reg);
        }
    }
    reg.collecting = true;
    let requested = Instant::now();
    SAFEPOINT.store(true, Ordering::SeqCst);
    me.status.store(PARKED, Ordering::SeqCst);
    let mut warned = false;
    loop {
        let running = |t: &ThreadPtr| {
            // SAFETY: listed states are live while we hold the lock.
            unsafe { &*t.0 }.status.load(Ordering::SeqCst) == RUNNING
        };
        if !reg.threads.iter().any(running) {
            break;
        }
        if !warned && requested.elapsed() >= HANDSHAKE_WARNING {
            warned = true;
            let names: Vec<String> = reg
                .threads
                .iter()
                .filter(|t| running(t))
                // SAFETY: as above.
                .map(|t| unsafe { &*t.0 }.describe())
                .collect();
            eprintln!(
                "defergc: precise: a collection has waited {}s for thread(s) {} to reach a \
                 safepoint; wrap blocking calls in precise::native (still waiting)",
                requested.elapsed().as_secs(),
                names.join(", ")
            );
        }
        reg = STOPPED
            .wait_timeout(reg, Duration::from_secs(1))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    Some(World { reg, me, requested })
}

/// Objects allocated by all threads, past and present, and the number of
/// registered threads.
pub(crate) fn allocation_totals() -> (u64, usize) {
    let reg = registry();
    let mut objects = reg.exited_objects;
    for t in &reg.threads {
        // SAFETY: listed states are live while we hold the lock; the
        // counter is an atomic.
        objects += unsafe { &*t.0 }.objects_allocated.load(Ordering::Relaxed);
    }
    (objects, reg.threads.len())
}
