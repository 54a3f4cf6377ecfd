//! The thread registry, handshakes, safepoints, and native-code
//! declarations.
//!
//! Every execution context that uses the precise heap (a thread's own, or
//! a goroutine's: `crate::context`) has a [`Mutator`] (shadow stack,
//! bump buffers, handle cache, write-barrier log) and is in the registry;
//! "thread" below means such a mutator. Registration is automatic on first
//! use ([`current`]) and undone when the context ends (its key's
//! destructor: at thread exit, or when the goroutine finishes);
//! [`register_thread`] and [`unregister_thread`] do it explicitly.
//!
//! A goroutine moves between worker threads with its state, which lives
//! in its execution context's slot ([`KEY`]): the scheduler's switch of
//! contexts is the switch of states. When it switches out (parks, yields,
//! blocks in a system call), the execution context's hooks ([`HOOKS`],
//! registered with the first mutator) declare it in native code on its
//! behalf ([`switch_out`]), so a
//! collection never waits for a goroutine that is not running: the
//! collector acts for it, scanning its shadow stack and root memory from
//! wherever it is parked. When it switches in again ([`switch_in`]), it
//! leaves native code (waiting, as any thread does, while the collector
//! works on its behalf) and polls.
//!
//! # Status and who may touch a thread's state
//!
//! A thread is `RUNNING` (mutating; only it touches its state), `NATIVE`
//! (declared it will not touch the heap until [`leave_native`]), or
//! `SCANNING` (native, and the collector thread is acting on its behalf:
//! only the collector touches its state). Only the thread moves itself
//! between `RUNNING` and `NATIVE`; only the collector moves it from `NATIVE`
//! to `SCANNING` and back (compare-and-swap, under the registry lock), so a
//! thread that leaves native code while the collector works for it waits
//! (on the registry lock) until it is done.
//!
//! # Handshakes (rounds)
//!
//! The collector never stops the world. It talks to the mutators in
//! *rounds* ([`round`]): it publishes a round number and a [`Round`] kind
//! under the registry lock and sets [`SAFEPOINT`]; every registered thread
//! performs the round's action at its next safepoint poll (one relaxed load
//! of [`SAFEPOINT`] on the fast path) and acknowledges it by storing the
//! round number in its `acked` word; the collector performs the action
//! itself, under the registry lock, for threads in native code. The round
//! is over when every registered thread has acknowledged it. A thread never
//! waits for the others: its only stop is its own action (its *pause*,
//! recorded in the statistics).
//!
//! - A thread that registers during a round is born acknowledged (it has no
//!   roots yet; if it has root memory from an earlier registration, it
//!   gives it to the collector, see [`register_current`]).
//! - A thread that unregisters performs any round it has not acknowledged
//!   (under the registry lock, so it cannot miss one) and hands its
//!   write-barrier log to the collector before it leaves the registry:
//!   nothing it knew is lost with it.
//! - The collector waits for acknowledgements on a condition variable with
//!   a counter ([`ACKS`]), so no wake-up is lost; it never proceeds without
//!   an acknowledgement (after 10 s it says which threads it waits for, and
//!   keeps waiting).
//!
//! When rounds run is the collector's business (`collector/`); what each
//! round asks of a thread is [`Round`], and [`act`] does it.
//!
//! Lock order: registry, then heap, then handle pool; the root-memory
//! registry and the collector's queues are leaves. Nothing polls a
//! safepoint while holding the heap lock or the handle pool lock.

use super::error::{Error, Result};
use super::handles::{self, Handle, LocalHandles};
use super::heap::{self, LocalHeap};
use super::marking;
use super::shadow::ShadowStack;
use super::stats;
use super::sync::{
    fence, global, AtomicBool, AtomicU32, AtomicU64, AtomicU8, Condvar, Mutex, MutexGuard, Ordering,
};
use crate::cache::CachePadded;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ptr;
use std::time::{Duration, Instant};

/// Mutating: only the thread itself touches its state.
pub(crate) const RUNNING: u32 = 0;
/// In native code: the collector does not wait for it, and acts for it.
pub(crate) const NATIVE: u32 = 1;
/// In native code, and the collector is acting on its behalf right now.
pub(crate) const SCANNING: u32 = 2;

global! {
    /// Set while a round waits for acknowledgements. The safepoint poll is one
    /// relaxed load of this.
    static SAFEPOINT: CachePadded<AtomicBool> = CachePadded(AtomicBool::new(false));
}

global! {
    /// The number of the latest round (0: none yet).
    static ROUND: AtomicU64 = AtomicU64::new(0);
}
global! {
    /// The kind of the latest round ([`Round`] as a byte).
    static ROUND_KIND: AtomicU8 = AtomicU8::new(0);
}

/// What a round asks of each thread (see `collector/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Round {
    /// The barrier and grey allocation are on: acknowledge having seen it.
    Prepare = 0,
    /// Snapshot your roots (shadow stack, root memory), retire your blocks.
    Snapshot = 1,
    /// Hand over your write-barrier log.
    Flush = 2,
    /// Marking is over: acknowledge having seen it.
    End = 3,
}

impl Round {
    fn from_u8(b: u8) -> Round {
        match b {
            0 => Round::Prepare,
            1 => Round::Snapshot,
            2 => Round::Flush,
            _ => Round::End,
        }
    }
}

/// Copies the root memory words of `owner` that may be handles into `out`.
fn snapshot_root_memory(owner: crate::roots::precise::Owner, out: &mut Vec<u64>) {
    // SAFETY: the owner is the caller, or is in native code held by the
    // collector (SCANNING), so its root stacks do not change meanwhile.
    unsafe {
        crate::roots::precise::for_each_word(owner, &mut |w| {
            if handles::could_be_handle(w as u64) {
                out.push(w as u64)
            }
        })
    };
}

/// Performs round `kind` for `ts`: called by the thread itself at a
/// safepoint (or while unregistering), or by the collector while the
/// thread is `SCANNING`.
fn act(ts: &Mutator, kind: Round) {
    // SAFETY: the callers own the thread's state (see the docs above).
    let local = unsafe { ts.local() };
    match kind {
        Round::Prepare => {
            local.log.clear();
            ts.set_before_snapshot(true);
        }
        Round::Snapshot => {
            ts.set_before_snapshot(false);
            heap::retire(&mut local.heap);
            let roots = local.shadow.roots();
            let mut snapshot = Vec::with_capacity(roots.len() + 16);
            snapshot.extend(roots.iter().copied().filter(|&r| r != 0));
            snapshot_root_memory(ts.owner, &mut snapshot);
            if !snapshot.is_empty() {
                marking::grey_queue().push(snapshot);
            }
        }
        Round::Flush => marking::hand_over_log(&mut local.log),
        Round::End => {}
    }
}

/// A thread registered (under the registry lock): if the running cycle's
/// snapshot is under way or done, its root memory (from an earlier
/// registration, if any) joins it.
fn on_register(ts: &Mutator) {
    let (barrier, marking) = marking::registration_view();
    if barrier && !marking {
        // Between Prepare and Snapshot: like every other thread now.
        ts.set_before_snapshot(true);
    }
    if marking {
        let mut snapshot = Vec::new();
        snapshot_root_memory(ts.owner, &mut snapshot);
        if !snapshot.is_empty() {
            marking::grey_queue().push(snapshot);
        }
    }
}

/// One registered thread's collector state.
pub(crate) struct Mutator {
    pub(crate) status: AtomicU32,
    /// The last round this thread has acknowledged.
    acked: AtomicU64,
    /// Between its Prepare and Snapshot acknowledgements: its stores log
    /// the stored value too (the barrier's insertion half, see access.rs).
    before_snapshot: AtomicBool,
    /// Registration serial number, for diagnostics.
    id: u64,
    /// The root-memory owner of the thread: its execution context's.
    pub(crate) owner: crate::roots::precise::Owner,
    name: Option<String>,
    objects_allocated: AtomicU64,
    /// The handles of the two objects this thread allocated last, if it
    /// has not passed a handshake or gone native since (0 otherwise): those
    /// objects are live, since a cycle that could free them must have had
    /// this thread snapshot its roots after the allocation. Storing them
    /// needs no lookup (the common `n.next = &T{}`, and `&T{a, b}` whose
    /// `b` was allocated just before). Written and read by the thread only.
    fresh: [AtomicU64; 2],
    /// Set when the scheduler (not the mutator itself) declared it in
    /// native code as it switched out, so that switching in undoes exactly
    /// that (a goroutine already in native code on its own stays there).
    switched_native: AtomicBool,
    local: UnsafeCell<Local>,
}

/// The parts of a thread's state that only one party touches at a time
/// (see the module docs).
pub(crate) struct Local {
    pub(crate) heap: LocalHeap,
    pub(crate) handles: LocalHandles,
    pub(crate) shadow: ShadowStack,
    /// Old handle values recorded by the deletion barrier.
    pub(crate) log: Vec<u64>,
}

impl Mutator {
    /// Records `handle` as the object this thread allocated last (see
    /// `fresh`). Call right after the allocation, before any safepoint.
    #[inline(always)]
    pub(crate) fn set_fresh(&self, handle: Handle) {
        let last = self.fresh[0].load(Ordering::Relaxed);
        self.fresh[1].store(last, Ordering::Relaxed);
        self.fresh[0].store(handle.to_raw(), Ordering::Relaxed);
    }

    /// Whether `handle` is one of the two objects this thread allocated
    /// last, with no handshake since: live without a lookup.
    #[inline(always)]
    pub(crate) fn is_fresh(&self, handle: Handle) -> bool {
        let raw = handle.to_raw();
        self.fresh[0].load(Ordering::Relaxed) == raw || self.fresh[1].load(Ordering::Relaxed) == raw
    }

    /// Forgets the last allocations: a round may follow.
    #[inline(always)]
    fn forget_fresh(&self) {
        self.fresh[0].store(0, Ordering::Relaxed);
        self.fresh[1].store(0, Ordering::Relaxed);
    }

    /// The thread-local collector state.
    ///
    /// # Safety
    /// Either the caller is this state's thread, it is `RUNNING`, and no
    /// other reference from `local` is live; or the caller is the collector
    /// and has moved the thread to `SCANNING`; or the caller is this thread
    /// unregistering under the registry lock.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn local(&self) -> &mut Local {
        // SAFETY: exclusivity is the caller's obligation (see above).
        unsafe { &mut *self.local.get() }
    }

    /// Records `old` (a value a barriered store overwrote, or a grey-born
    /// object) in this thread's log.
    #[inline(always)]
    pub(crate) fn log(&self, old: u64) {
        // SAFETY: the running thread's own state, no other borrow live (the
        // callers hold none across this call).
        let log = &mut unsafe { self.local() }.log;
        log.push(old);
        if log.len() >= marking::LOG_BATCH {
            marking::hand_over_log(log);
        }
    }

    /// Whether this thread's roots are not yet snapshotted by the running
    /// marking (it has acknowledged Prepare, not Snapshot).
    #[inline(always)]
    pub(crate) fn before_snapshot(&self) -> bool {
        self.before_snapshot.load(Ordering::Relaxed)
    }

    /// Sets [`Mutator::before_snapshot`] (by whoever performs its
    /// rounds, see `local`).
    pub(crate) fn set_before_snapshot(&self, on: bool) {
        self.before_snapshot.store(on, Ordering::Relaxed);
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
struct ThreadPtr(*const Mutator);

// SAFETY: the registry only hands these to the collector, which touches a
// thread's state under the protocol in the module docs.
unsafe impl Send for ThreadPtr {}

struct Registry {
    threads: Vec<ThreadPtr>,
    next_id: u64,
    /// Allocation count of threads that have unregistered.
    exited_objects: u64,
}

global! {
    static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
        threads: Vec::new(),
        next_id: 1,
        exited_objects: 0,
    });
}

global! {
    /// Counts acknowledgements (and other changes a waiting collector must
    /// look at: a thread going native or leaving the registry).
    static ACKS: Mutex<u64> = Mutex::new(0);
}
global! {
    static ACKED: Condvar = Condvar::new();
}

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Wakes a collector waiting for acknowledgements.
fn notify_collector() {
    let mut n = ACKS.lock().unwrap_or_else(|e| e.into_inner());
    *n += 1;
    ACKED.notify_all();
}

/// The precise collector's slot in every execution context (rank 4: its
/// depth in design.md's list of layers, below defer's): the context's
/// [`Mutator`], unregistered when the context ends.
static KEY: crate::context::Key = crate::context::Key::new(4, unregister_at_end);

/// A context ended (its thread exited, or its goroutine finished): its
/// registration ends with it, open frames discarded.
///
/// # Safety
/// Called by the context's destruction with a state [`register_current`]
/// stored; nothing runs in the context any more.
unsafe fn unregister_at_end(_ctx: &crate::context::Context, ts: *mut u8) {
    // SAFETY: a live registered state (see above), used by nobody else.
    let _ = unregister_state(unsafe { &*ts.cast::<Mutator>() }, true);
}

/// This thread's state if it is registered (in any status), else null:
/// the [`KEY`] slot of the context it runs, so that a switch of contexts
/// switches the state with it.
#[inline(always)]
pub(crate) fn current_ptr() -> *const Mutator {
    match crate::context::existing() {
        Some(ctx) => ctx.get(&KEY).cast_const().cast(),
        None => ptr::null(),
    }
}

/// This thread's state, registering the thread on first use;
/// [`Error::InNative`] if it declared itself in native code.
///
/// The reference is valid until the thread unregisters, which its caller
/// (this thread, inside one API call) cannot do meanwhile.
#[inline(always)]
pub(crate) fn current() -> Result<&'static Mutator> {
    let ts = current_ptr();
    if ts.is_null() {
        return register_current();
    }
    // SAFETY: the slot holds this thread's live state; only this thread
    // frees it, and not during this call.
    let ts = unsafe { &*ts };
    if ts.status.load(Ordering::Relaxed) != RUNNING {
        return Err(Error::InNative);
    }
    Ok(ts)
}

#[cold]
#[inline(never)]
fn register_current() -> Result<&'static Mutator> {
    super::ensure_started();
    let name = std::thread::current().name().map(str::to_owned);
    let ts = enlist(crate::roots::precise::owner(), name);
    crate::context::current().set(&KEY, ts.cast_mut().cast());
    // The context's end (thread exit, in its runtime-state phase, after
    // the tls teardown whose slot destructors may still use the heap; or
    // the goroutine's end) unregisters it.
    crate::gc::thread::arm_exit_sequence();
    // SAFETY: just registered; freed only by this context's unregistration.
    Ok(unsafe { &*ts })
}

/// What the precise collector does as contexts switch and block
/// (`crate::context`'s hooks): a context that stops running, or blocks
/// its thread, is declared in native code on its behalf, so collections
/// do not wait for it; running again, it leaves native code (waiting
/// while the collector acts for it) and performs a pending round.
static HOOKS: crate::context::Hooks = crate::context::Hooks {
    switch_in,
    switch_out,
    block_enter,
    block_exit,
};

/// The registered state of `ctx`, if any.
fn state_of(ctx: &crate::context::Context) -> Option<&Mutator> {
    // SAFETY: a registered context's state lives until the context ends
    // or unregisters, neither of which happens while it is switched.
    unsafe { ctx.get(&KEY).cast_const().cast::<Mutator>().as_ref() }
}

/// `ctx` runs on this thread again: leaves the native code that
/// [`switch_out`] declared.
fn switch_in(ctx: &crate::context::Context) {
    if let Some(ts) = state_of(ctx) {
        resume_after_switch(ts);
    }
}

/// `ctx` stopped running on this thread: declared in native code if it
/// was running.
fn switch_out(ctx: &crate::context::Context) {
    if let Some(ts) = state_of(ctx) {
        declare_native_for_switch(ts);
    }
}

/// The running context is about to block its thread (a system call, a
/// plain thread's park): native code on its behalf, as at a switch.
fn block_enter() {
    // SAFETY: this thread's own live state.
    if let Some(ts) = unsafe { current_ptr().as_ref() } {
        declare_native_for_switch(ts);
    }
}

/// Back from the block (see [`block_enter`]).
fn block_exit() {
    // SAFETY: this thread's own live state.
    if let Some(ts) = unsafe { current_ptr().as_ref() } {
        resume_after_switch(ts);
    }
}

/// Undoes [`declare_native_for_switch`], if it declared `ts` native.
fn resume_after_switch(ts: &Mutator) {
    if ts.switched_native.swap(false, Ordering::Relaxed) {
        leave_native_state(ts);
        poll(ts);
    }
}

fn declare_native_for_switch(ts: &Mutator) {
    if ts.status.load(Ordering::Relaxed) == RUNNING {
        ts.switched_native.store(true, Ordering::Relaxed);
        declare_native(ts);
    }
}

/// Creates the state of a thread whose root memory belongs to `owner`
/// and puts it in the registry. A round in progress was published under
/// the registry lock taken here and has nothing to ask of a new thread,
/// so it is born acknowledged. The state is freed by [`unregister_state`].
pub(crate) fn enlist(owner: crate::roots::precise::Owner, name: Option<String>) -> *const Mutator {
    crate::context::set_hooks(&HOOKS);
    let mut reg = registry();
    let id = reg.next_id;
    reg.next_id += 1;
    let ts = Box::into_raw(Box::new(Mutator {
        status: AtomicU32::new(RUNNING),
        acked: AtomicU64::new(ROUND.load(Ordering::Acquire)),
        before_snapshot: AtomicBool::new(false),
        id,
        owner,
        name,
        objects_allocated: AtomicU64::new(0),
        fresh: [AtomicU64::new(0), AtomicU64::new(0)],
        switched_native: AtomicBool::new(false),
        local: UnsafeCell::new(Local {
            heap: LocalHeap::new(),
            handles: LocalHandles::new(),
            shadow: ShadowStack::new(),
            log: Vec::new(),
        }),
    }));
    reg.threads.push(ThreadPtr(ts));
    // A thread that registers again (after unregistering, with tls slots
    // still set) may have root memory already: a cycle whose snapshot is
    // under way gets it now.
    // SAFETY: just created, ours alone.
    on_register(unsafe { &*ts });
    ts
}

/// Removes `ts` (this thread's state) from the registry and frees it. With
/// `forced` (thread exit), open frames are discarded; otherwise they are
/// [`Error::FramesOpen`].
pub(crate) fn unregister_state(ts: &Mutator, forced: bool) -> Result<()> {
    // A thread in native code at exit is ours again first.
    leave_native_state(ts);
    // SAFETY: our own running state, no other borrow.
    let depth = unsafe { ts.local() }.shadow.depth();
    if depth > 0 && !forced {
        return Err(Error::FramesOpen);
    }
    let mut reg = registry();
    // The collector acts for threads only under this lock, and publishes
    // rounds under it: we see every round, and nobody else touches us.
    let round = ROUND.load(Ordering::Acquire);
    if ts.acked.load(Ordering::Relaxed) < round {
        act(ts, Round::from_u8(ROUND_KIND.load(Ordering::Acquire)));
        ts.acked.store(round, Ordering::Release);
    }
    // SAFETY: see above.
    let local = unsafe { ts.local() };
    marking::hand_over_log(&mut local.log);
    heap::retire(&mut local.heap);
    local.handles.give_back();
    if forced {
        // Its root memory outlives it as orphans, scanned with everyone's;
        // orphaned while it is still registered, so it is always someone's.
        crate::roots::precise::orphan(ts.owner);
    }
    let me = ts as *const Mutator;
    reg.threads.retain(|t| t.0 != me);
    reg.exited_objects += ts.objects_allocated.load(Ordering::Relaxed);
    drop(reg);
    // A collector waiting for us re-checks the (shorter) list.
    notify_collector();
    // SAFETY: allocated by register_current, no longer reachable from the
    // registry; its context's slot is cleared by the caller (or by the
    // context's destruction, before it came here), and Frame guards
    // compare against the slot before use.
    drop(unsafe { Box::from_raw(me.cast_mut()) });
    Ok(())
}

/// Before a fork (after the collector went quiet): the registry lock and
/// the acknowledgement counter's, kept until after the fork.
pub(super) fn lock_for_fork() {
    crate::gc::fork::held::keep(registry());
    crate::gc::fork::held::keep(ACKS.lock().unwrap_or_else(|e| e.into_inner()));
}

/// In a forked child: unregisters, on their behalf, every thread but the
/// calling one (they do not exist here): their barrier logs, heap blocks
/// and handle caches go back to the collector, and their states leave the
/// registry. Returns the calling thread's root-memory owner.
pub(super) fn adopt_after_fork() -> crate::roots::precise::Owner {
    let me = current_ptr();
    let mut reg = registry();
    let gone: Vec<*const Mutator> = reg
        .threads
        .iter()
        .map(|t| t.0)
        .filter(|&t| t != me)
        .collect();
    for &t in &gone {
        // SAFETY: listed states are live; their threads do not exist in
        // this process, so nobody else touches them (no cycle runs: the
        // fork waited for it).
        let ts = unsafe { &*t };
        // SAFETY: as above: ours alone now.
        let local = unsafe { ts.local() };
        marking::hand_over_log(&mut local.log);
        heap::finish_interrupted(&local.heap);
        heap::retire(&mut local.heap);
        local.handles.give_back();
        reg.exited_objects += ts.objects_allocated.load(Ordering::Relaxed);
    }
    reg.threads.retain(|t| t.0 == me);
    drop(reg);
    heap::finish_interrupted_large();
    crate::roots::precise::owner()
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
    unregister_state(unsafe { &*ts }, false)?;
    // The context keeps running, unregistered: its slot forgets the state.
    crate::context::current().set(&KEY, ptr::null_mut());
    Ok(())
}

/// Whether the calling thread is registered with the precise collector.
pub fn is_thread_registered() -> bool {
    !current_ptr().is_null()
}

/// The safepoint poll: one relaxed load on the fast path.
#[inline(always)]
pub(crate) fn poll(ts: &Mutator) {
    if SAFEPOINT.load(Ordering::Relaxed) {
        handshake(ts);
    }
}

/// Performs the current round's action for this (running) thread if it has
/// not acknowledged it yet, and acknowledges it.
#[cold]
#[inline(never)]
fn handshake(ts: &Mutator) {
    ts.forget_fresh();
    let round = ROUND.load(Ordering::Acquire);
    if ts.acked.load(Ordering::Relaxed) >= round {
        return;
    }
    let start = Instant::now();
    act(ts, Round::from_u8(ROUND_KIND.load(Ordering::Acquire)));
    ts.acked.store(round, Ordering::Release);
    let pause = start.elapsed();
    notify_collector();
    stats::record_pause(pause);
}

/// An explicit safepoint: if the collector asked for a handshake, do it
/// here. Compiled code calls this in loops that neither allocate nor push
/// frames, so that collections are never held up for long.
/// [`Error::InNative`] in native code.
#[inline]
pub fn safepoint() -> Result<()> {
    poll(current()?);
    Ok(())
}

pub(crate) fn declare_native(ts: &Mutator) {
    // Rounds may now pass without this thread's handshakes.
    ts.forget_fresh();
    ts.status.store(NATIVE, Ordering::SeqCst);
    // Either the collector's status scan (after its fence in `round`) sees
    // NATIVE, or this load sees its SAFEPOINT store. The fence says so in
    // a form loom checks (it models SeqCst loads and stores as AcqRel).
    fence(Ordering::SeqCst);
    if SAFEPOINT.load(Ordering::SeqCst) {
        // The collector may be waiting for this thread: it can act for it
        // now.
        notify_collector();
    }
}

/// Moves this thread from native code back to running (a no-op if it is
/// running), waiting while the collector acts on its behalf.
fn leave_native_state(ts: &Mutator) {
    loop {
        match ts
            .status
            .compare_exchange(NATIVE, RUNNING, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) | Err(RUNNING) => return,
            // The collector holds the registry lock while it scans us.
            Err(_) => drop(registry()),
        }
    }
}

/// Declares that the calling thread is about to run code that does not
/// touch the precise heap (a blocking call, a long computation): until
/// [`leave_native`], collections do not wait for it and act on its behalf
/// (scan its shadow stack and root memory). Heap operations in between fail
/// with [`Error::InNative`], as does a second `enter_native`.
pub fn enter_native() -> Result<()> {
    let ts = current()?;
    // Acknowledge a pending round ourselves: it is cheap, and it spares
    // the collector a scan on our behalf.
    poll(ts);
    declare_native(ts);
    Ok(())
}

/// Ends [`enter_native`]. If the collector is scanning this thread's roots
/// on its behalf at that moment, waits until it is done (microseconds);
/// it never waits for a whole collection. [`Error::NotInNative`] if the
/// thread is not in native code.
pub fn leave_native() -> Result<()> {
    let ts = current_ptr();
    if ts.is_null() {
        return Err(Error::NotInNative);
    }
    // SAFETY: this thread's own live state.
    let ts = unsafe { &*ts };
    if ts.status.load(Ordering::Relaxed) == RUNNING {
        return Err(Error::NotInNative);
    }
    let start = Instant::now();
    leave_native_state(ts);
    let waited = start.elapsed();
    if waited > Duration::from_micros(1) {
        stats::record_pause(waited);
    }
    poll(ts);
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
/// (joins, locks, channel receives) in this, or a collection's handshake
/// waits for this thread until they return.
pub fn native<R>(f: impl FnOnce() -> R) -> Result<R> {
    let guard = NativeGuard::enter()?;
    let r = f();
    drop(guard);
    Ok(r)
}

/// How long a round waits before saying which threads it waits for.
const HANDSHAKE_WARNING: Duration = Duration::from_secs(10);

/// Runs one round (collector thread only): publishes it, acts for threads
/// in native code, and returns once every registered thread has
/// acknowledged it. Never gives up and never proceeds without every
/// acknowledgement.
pub(crate) fn round(kind: Round) {
    let requested = Instant::now();
    let round = {
        let _reg = registry();
        let round = ROUND.load(Ordering::Relaxed) + 1;
        ROUND_KIND.store(kind as u8, Ordering::Release);
        ROUND.store(round, Ordering::Release);
        SAFEPOINT.store(true, Ordering::SeqCst);
        // Pairs with the fence in `declare_native`.
        fence(Ordering::SeqCst);
        round
    };
    let mut warned = false;
    loop {
        let seen = *ACKS.lock().unwrap_or_else(|e| e.into_inner());
        let reg = registry();
        let mut waiting = Vec::new();
        for t in &reg.threads {
            // SAFETY: listed states are live while we hold the lock.
            let ts = unsafe { &*t.0 };
            if ts.acked.load(Ordering::Acquire) >= round {
                continue;
            }
            if ts
                .status
                .compare_exchange(NATIVE, SCANNING, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                // The thread is in native code and cannot leave it until we
                // store NATIVE again: its state is ours.
                act(ts, kind);
                ts.acked.store(round, Ordering::Release);
                ts.status.store(NATIVE, Ordering::SeqCst);
            } else {
                waiting.push(t.0);
            }
        }
        if waiting.is_empty() {
            SAFEPOINT.store(false, Ordering::SeqCst);
            return;
        }
        if !warned && requested.elapsed() >= HANDSHAKE_WARNING {
            warned = true;
            let names: Vec<String> = waiting
                .iter()
                // SAFETY: as above, still under the lock.
                .map(|&t| unsafe { &*t }.describe())
                .collect();
            eprintln!(
                "defergc: precise: a collection has waited {}s for thread(s) {} to reach a \
                 safepoint; wrap blocking calls in precise::native (still waiting)",
                requested.elapsed().as_secs(),
                names.join(", ")
            );
        }
        drop(reg);
        let acks = ACKS.lock().unwrap_or_else(|e| e.into_inner());
        if *acks == seen {
            // Woken by any acknowledgement, native declaration or exit; the
            // timeout only bounds how long a missed notification can cost.
            drop(
                ACKED
                    .wait_timeout(acks, Duration::from_millis(50))
                    .unwrap_or_else(|e| e.into_inner()),
            );
        }
    }
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

/// Runs `f` while this (running) thread waits in native code, so that the
/// collector acts for it instead of waiting for it; returns `f`'s result.
/// Used by [`super::collect`] and allocations that wait for a cycle.
pub(crate) fn wait_native<R>(ts: &Mutator, f: impl FnOnce() -> R) -> R {
    poll(ts);
    declare_native(ts);
    let r = f();
    leave_native_state(ts);
    poll(ts);
    r
}
