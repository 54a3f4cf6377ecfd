//! The bdwgc backend: thin wrappers over `sys`, nothing else.
//!
//! Callers in `gc/mod.rs` have already registered the calling thread, so
//! every function here may assume `GC_init` has run and the thread is known.

use super::sys;
use super::{Config, Kind, Stats};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

pub(super) const NAME: &str = "bdwgc";

/// `Config::finalizer_thread` was false: finalizers run only in
/// `run_finalizers`.
static NO_FINALIZER_THREAD: AtomicBool = AtomicBool::new(false);
/// Set once `GC_init` has run.
static INITIALIZED: AtomicBool = AtomicBool::new(false);

pub(super) fn init(config: &Config) {
    NO_FINALIZER_THREAD.store(!config.finalizer_thread, Ordering::Release);
    // SAFETY: called once, under the init lock, before any other GC call.
    unsafe {
        sys::GC_set_warn_proc(Some(super::warn::warn_proc));
        if let Some(m) = config.markers {
            sys::GC_set_markers_count(m);
        }
        sys::GC_set_free_space_divisor(config.free_space_divisor.max(1) as sys::GC_word);
        // Finalizers run on a dedicated thread, never inside whatever
        // allocation happens to trigger a collection (which may hold locks
        // its finalizers need).
        sys::GC_set_finalize_on_demand(1);
        sys::GC_set_finalizer_notifier(Some(finalizers_ready));
        // bdwgc's fork handlers are run by `gc::fork`'s, in a fixed place
        // among the layers' hooks (see `atfork_prepare`), not registered
        // by bdwgc itself, whose place would depend on which was
        // registered first.
        sys::GC_set_handle_fork(0);
        with_marker_mask(|| {
            sys::GC_init();
            // Required before any other thread may register itself; starts
            // the markers.
            sys::GC_allow_register_threads();
        });
        INITIALIZED.store(true, Ordering::Release);
        sys::GC_set_on_collection_event(Some(on_collection_event));
        let heap = sys::GC_get_heap_size();
        if config.initial_heap_bytes > heap {
            sys::GC_expand_hp(config.initial_heap_bytes - heap);
        }
    }
    static FORK: super::fork::ForkHooks = super::fork::ForkHooks {
        prepare: fork_prepare,
        child: fork_child,
        resume: fork_resume,
        ..super::fork::ForkHooks::NONE
    };
    super::fork::on_fork(&FORK);
}

/// Before a fork: the finalizer thread's lock (bdwgc's own handlers take
/// the allocation lock and stop its markers).
fn fork_prepare() {
    super::fork::held::keep(FINALIZERS_READY.lock().unwrap_or_else(|e| e.into_inner()));
}

/// In a forked child: the parallel markers and the finalizer thread are
/// gone. The finalizer thread starts again with the next registration or
/// the next collection that makes finalizers ready.
fn fork_child() {
    FINALIZER_THREAD.store(false, Ordering::Release);
}

/// Whether the fork under way took bdwgc's locks (`atfork_prepare`):
/// written and read only by the forking thread (and its child).
static FORK_PREPARED: AtomicBool = AtomicBool::new(false);

/// bdwgc's part of a fork, which `gc::fork`'s handler runs after every
/// layer's `prepare` (a hook may still allocate; bdwgc's prepare takes
/// the allocation lock and waits for its markers). Nothing if bdwgc has
/// not started (its prepare would start it).
pub(super) fn atfork_prepare() {
    let started = INITIALIZED.load(Ordering::Acquire);
    FORK_PREPARED.store(started, Ordering::Relaxed);
    if started {
        // SAFETY: bdwgc is initialised with `GC_set_handle_fork(0)`: the
        // client calls its fork handlers, on the forking thread, once a
        // fork.
        unsafe { sys::GC_atfork_prepare() };
    }
}

/// In the parent after a fork, before the layers' locks are released.
pub(super) fn atfork_parent() {
    if FORK_PREPARED.load(Ordering::Relaxed) {
        // SAFETY: pairs with the `GC_atfork_prepare` of this fork.
        unsafe { sys::GC_atfork_parent() };
    }
}

/// In the child, before any layer's repair: bdwgc's locks released and
/// its thread table reduced to this thread.
pub(super) fn atfork_child() {
    if FORK_PREPARED.load(Ordering::Relaxed) {
        // SAFETY: pairs with the `GC_atfork_prepare` of this fork; this
        // thread is the child's only one.
        unsafe { sys::GC_atfork_child() };
    }
}

/// In a forked child, once every layer is repaired: bdwgc restarts its
/// markers when asked.
fn fork_resume() {
    // SAFETY: bdwgc's child handler has run (`atfork_child`, before any
    // layer's hook); restarting the markers in a child that has not
    // exec'd is what this call is for.
    with_marker_mask(|| unsafe { sys::GC_start_mark_threads() });
}

/// Runs `f` (which may start bdwgc's marker threads) with every signal
/// blocked but `SIGPROF`, and restores the mask: the markers take the
/// mask of the thread that starts them (the vendored build's
/// `NO_MARKER_SPECIAL_SIGMASK`). They take no signal meant for the
/// program's threads, as bdwgc's own mask (every signal blocked) has
/// them do, and a CPU profile's process-wide timer samples them
/// (`signal/cpu.rs`).
fn with_marker_mask<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: sigset operations on locals, and this thread's own mask.
    let old = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::sigdelset(&mut set, libc::SIGPROF);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        old
    };
    let r = f();
    // SAFETY: restores the mask read above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    r
}

/// Registers the calling thread if bdwgc does not know it yet.
pub(super) fn register_current_thread() {
    // SAFETY: GC_init has run; registering needs only this thread's stack base.
    unsafe {
        if sys::GC_thread_is_registered() != 0 {
            return;
        }
        let mut sb = sys::GC_stack_base {
            mem_base: std::ptr::null_mut(),
        };
        if sys::GC_get_stack_base(&mut sb) != sys::GC_SUCCESS as i32 {
            crate::abort("defergc: cannot find this thread's stack base to register it");
        }
        sys::GC_register_my_thread(&sb);
    }
}

/// Unregisters the calling thread; its stack is no longer scanned.
pub(super) fn unregister_current_thread() {
    // SAFETY: GC_unregister_my_thread is defined for a registered thread and
    // returns GC_NOT_FOUND otherwise; we only call it after registration.
    unsafe {
        if sys::GC_thread_is_registered() != 0 {
            sys::GC_unregister_my_thread();
        }
    }
}

#[inline(always)]
pub(super) fn alloc(kind: Kind, size: usize) -> *mut u8 {
    // SAFETY: the thread is registered and the collector initialised.
    unsafe {
        match kind {
            Kind::Scanned => sys::GC_malloc(size),
            Kind::Atomic => sys::GC_malloc_atomic(size),
            Kind::Uncollectable => sys::GC_malloc_uncollectable(size),
        }
        .cast()
    }
}

/// # Safety
/// `ptr` is a live bdwgc object.
pub(super) unsafe fn free(ptr: *mut u8) {
    // SAFETY: the caller guarantees ptr is a live bdwgc object.
    unsafe { sys::GC_free(ptr.cast()) }
}

/// # Safety
/// `ptr` is a live bdwgc object.
pub(super) unsafe fn allocation_size(ptr: *mut u8) -> usize {
    // SAFETY: the caller guarantees ptr is a live bdwgc object.
    unsafe { sys::GC_size(ptr.cast()) }
}

/// # Safety
/// `ptr` is null or a live bdwgc object.
pub(super) unsafe fn realloc(ptr: *mut u8, size: usize) -> *mut u8 {
    // SAFETY: the caller guarantees ptr is null or a live bdwgc object.
    unsafe { sys::GC_realloc(ptr.cast(), size).cast() }
}

pub(super) fn collect() {
    // SAFETY: the thread is registered.
    unsafe { sys::GC_gcollect() }
}

// ---- memory controls (see memory.rs) --------------------------------------

/// Whether this module disabled collection (`GC_disable` is a count).
static DISABLED: AtomicBool = AtomicBool::new(false);

pub(super) fn set_collection_enabled(on: bool) {
    if DISABLED.swap(!on, Ordering::AcqRel) == on {
        // SAFETY: balanced: each direction is taken once per change.
        unsafe {
            if on {
                sys::GC_enable()
            } else {
                sys::GC_disable()
            }
        }
    }
}

pub(super) fn set_free_space_divisor(divisor: u64) {
    // SAFETY: a plain setter (a racy word store in bdwgc; read by the
    // collector at its next trigger check).
    unsafe { sys::GC_set_free_space_divisor(divisor as sys::GC_word) };
}

/// The heap in use and the heap's size, without the collector's lock.
pub(super) fn heap_usage() -> (u64, u64) {
    let (mut heap, mut free) = (0, 0);
    // SAFETY: out-pointers to locals; the others may be null.
    unsafe {
        sys::GC_get_heap_usage_safe(
            &mut heap,
            &mut free,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    (word(heap).saturating_sub(word(free)), word(heap))
}

pub(super) fn set_max_heap(bytes: u64) {
    // SAFETY: the setter, under the allocation lock as bdwgc asks.
    super::scan::with_collector_lock(|| unsafe {
        sys::GC_set_max_heap_size(bytes as sys::GC_word)
    });
}

pub(super) fn collect_and_unmap() {
    // SAFETY: the thread is registered.
    unsafe { sys::GC_gcollect_and_unmap() }
}

/// Byte figures for MemStats without the collector's lock: bdwgc's
/// unsynchronised getters (word reads it offers for this), and the bytes
/// reclaimed as of the last collection's end (kept then, under the lock).
/// A reader so never waits behind an allocating thread that holds the
/// lock, or one the kernel preempted while holding it.
pub(super) fn heap_figures() -> super::memory::HeapFigures {
    // SAFETY: plain getters of bdwgc's counters, callable at any time.
    let (heap, free, unmapped, from_os, total) = unsafe {
        (
            sys::GC_get_heap_size(),
            sys::GC_get_free_bytes(),
            sys::GC_get_unmapped_bytes(),
            sys::GC_get_obtained_from_os_bytes(),
            sys::GC_get_total_bytes(),
        )
    };
    let unmapped = unmapped as u64;
    super::memory::HeapFigures {
        heap: heap as u64 + unmapped,
        free: free as u64 + unmapped,
        released: unmapped,
        sys: from_os as u64,
        total_alloc: total as u64,
        reclaimed: RECLAIMED.load(Ordering::Relaxed),
    }
}

/// Bytes bdwgc had reclaimed when the last collection ended.
static RECLAIMED: AtomicU64 = AtomicU64::new(0);

/// The heap in use and its size, markers; with the collector's lock held
/// (from its collection events). Keeps the bytes reclaimed so far for
/// [`heap_figures`].
fn usage_locked() -> (u64, u64, u64) {
    let mut p = std::mem::MaybeUninit::<sys::GC_prof_stats_s>::zeroed();
    // SAFETY: the unsynchronised variant, called with the lock held.
    let p = unsafe {
        sys::GC_get_prof_stats_unsafe(p.as_mut_ptr(), std::mem::size_of::<sys::GC_prof_stats_s>());
        p.assume_init()
    };
    RECLAIMED.store(
        word(p.reclaimed_bytes_before_gc) + word(p.bytes_reclaimed_since_gc),
        Ordering::Relaxed,
    );
    let heap = word(p.heapsize_full).saturating_sub(word(p.unmapped_bytes));
    (
        heap.saturating_sub(word(p.free_bytes_full).saturating_sub(word(p.unmapped_bytes))),
        heap,
        word(p.markers_m1) + 1,
    )
}

pub(super) fn stats() -> Stats {
    let mut p = std::mem::MaybeUninit::<sys::GC_prof_stats_s>::zeroed();
    // SAFETY: GC_get_prof_stats fills at most the given size and takes the
    // allocation lock itself.
    let p = unsafe {
        sys::GC_get_prof_stats(p.as_mut_ptr(), std::mem::size_of::<sys::GC_prof_stats_s>());
        p.assume_init()
    };
    let ns = |a: &AtomicU64| Duration::from_nanos(a.load(Ordering::Relaxed));
    Stats {
        heap_size: p.heapsize_full as usize,
        free_bytes: p.free_bytes_full as usize,
        unmapped_bytes: p.unmapped_bytes as usize,
        bytes_allocated_since_gc: p.bytes_allocd_since_gc as usize,
        bytes_allocated_total: (p.allocd_bytes_before_gc + p.bytes_allocd_since_gc) as usize,
        collections: word(p.gc_no),
        markers: p.markers_m1 as usize + 1,
        gc_time: ns(&TIMES.in_collections),
        stopped_time: ns(&TIMES.stopped),
        max_pause: ns(&TIMES.max_stop),
        warnings: 0,
    }
}

/// Collection times, measured from bdwgc's collection events (which every
/// bdwgc since 8.0 reports, unlike its own timers).
struct Times {
    collection_start: AtomicU64,
    stop_start: AtomicU64,
    in_collections: AtomicU64,
    stopped: AtomicU64,
    max_stop: AtomicU64,
    /// The stop-the-world time of the collection under way.
    last_stop: AtomicU64,
}

static TIMES: Times = Times {
    collection_start: AtomicU64::new(0),
    stop_start: AtomicU64::new(0),
    in_collections: AtomicU64::new(0),
    stopped: AtomicU64::new(0),
    max_stop: AtomicU64::new(0),
    last_stop: AtomicU64::new(0),
};

fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Called by bdwgc, with its allocation lock held, at each phase of a
/// collection: only atomics and the clock here (and, at the end of
/// marking, the heap profile's look at its sampled objects, lock-free).
unsafe extern "C" fn on_collection_event(event: sys::GC_EventType) {
    let t = &TIMES;
    match event {
        sys::GC_EventType_GC_EVENT_START => {
            t.collection_start.store(now_ns(), Ordering::Relaxed);
            t.last_stop.store(0, Ordering::Relaxed);
            super::scan::collection_starting();
            super::memory::collection_started(usage_locked().0);
            crate::prof::trace::gc_started(crate::prof::trace::BDWGC);
        }
        sys::GC_EventType_GC_EVENT_END => {
            let d = now_ns().saturating_sub(t.collection_start.load(Ordering::Relaxed));
            t.in_collections.fetch_add(d, Ordering::Relaxed);
            let (in_use, heap, markers) = usage_locked();
            super::memory::collection_ended(
                t.last_stop.load(Ordering::Relaxed),
                in_use,
                heap,
                markers,
            );
            // SAFETY: bdwgc holds its lock, at the collection's end.
            unsafe { sys::internals::grow_for_pacing() };
            crate::prof::trace::gc_ended(crate::prof::trace::BDWGC);
        }
        sys::GC_EventType_GC_EVENT_MARK_END => {
            super::scan::marking_ended();
            // The world is stopped and the marks complete: every sampled
            // object not marked is dead.
            super::profile::marking_ended(|addr| {
                // SAFETY: `addr` is the start of an object of the heap
                // that was alive at the last marking's end (or was
                // sampled since) and was not freed explicitly: its block
                // is still the object's.
                unsafe { sys::GC_is_marked(addr as *const std::ffi::c_void) != 0 }
            })
        }
        sys::GC_EventType_GC_EVENT_PRE_STOP_WORLD => {
            t.stop_start.store(now_ns(), Ordering::Relaxed)
        }
        sys::GC_EventType_GC_EVENT_POST_START_WORLD => {
            let d = now_ns().saturating_sub(t.stop_start.load(Ordering::Relaxed));
            t.stopped.fetch_add(d, Ordering::Relaxed);
            t.max_stop.fetch_max(d, Ordering::Relaxed);
            t.last_stop.fetch_add(d, Ordering::Relaxed);
        }
        _ => {}
    }
}

/// Widens a C `unsigned long` (32 bits on some targets, 64 here).
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn word(v: std::ffi::c_ulong) -> u64 {
    v as u64
}

/// # Safety
/// `obj` is the base of a live collectable object; `f` may run on any thread.
/// Returns the finalizer (and its data) that `f` replaced.
pub(super) unsafe fn register_finalizer(
    obj: *mut u8,
    f: Option<super::Finalizer>,
    data: *mut c_void,
) -> (Option<super::Finalizer>, *mut c_void) {
    if f.is_some() {
        start_finalizer_thread();
    }
    let mut old: sys::GC_finalization_proc = None;
    let mut old_data: *mut c_void = std::ptr::null_mut();
    // SAFETY: forwarded from the caller; the outputs are locals.
    unsafe { sys::GC_register_finalizer(obj.cast(), f, data, &mut old, &mut old_data) };
    (old, old_data)
}

static FINALIZERS_READY: Mutex<bool> = Mutex::new(false);
static FINALIZERS_WAKE: Condvar = Condvar::new();

/// Whether the finalizer thread runs (in this process: a forked child
/// starts without it).
static FINALIZER_THREAD: AtomicBool = AtomicBool::new(false);

/// bdwgc's finalizer notifier: called outside the allocation lock, at most
/// once per collection, when finalizers are ready to run.
unsafe extern "C" fn finalizers_ready() {
    // In a forked child, the first collection with finalizers ready
    // starts the thread again.
    start_finalizer_thread();
    let mut ready = FINALIZERS_READY.lock().unwrap_or_else(|e| e.into_inner());
    *ready = true;
    FINALIZERS_WAKE.notify_one();
}

/// Starts the thread that runs finalizers unless it runs already.
fn start_finalizer_thread() {
    if NO_FINALIZER_THREAD.load(Ordering::Acquire) {
        return;
    }
    if FINALIZER_THREAD.load(Ordering::Acquire) || FINALIZER_THREAD.swap(true, Ordering::AcqRel) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("defergc-finalizer".into())
        .spawn(|| loop {
            {
                // Finalizers are the program's code: one that used the
                // precise heap made this thread a mutator, which must not
                // hold up a collection while it sleeps here.
                crate::context::block_enter();
                let mut ready = FINALIZERS_READY.lock().unwrap_or_else(|e| e.into_inner());
                while !*ready {
                    ready = FINALIZERS_WAKE
                        .wait(ready)
                        .unwrap_or_else(|e| e.into_inner());
                }
                *ready = false;
                drop(ready);
                crate::context::block_exit();
            }
            super::thread::ensure_registered();
            run_finalizers();
        });
    if spawned.is_err() {
        crate::abort("defergc: cannot start the finalizer thread");
    }
}

/// Finalizers taken off bdwgc's queue under one hold of its lock.
const FINALIZER_BATCH: u32 = 256;

pub(super) fn run_finalizers() -> usize {
    // SAFETY: the thread is registered and holds no bdwgc lock; finalizers
    // run on it.
    unsafe { sys::internals::invoke_finalizers_batched(FINALIZER_BATCH) }
}

/// Whether `ptr` starts an object of bdwgc's heap.
pub(super) fn starts_allocation(ptr: *const u8) -> Result<(), super::check::PtrError> {
    // SAFETY: GC_base accepts any address.
    let base = unsafe { sys::GC_base(ptr.cast_mut().cast()) };
    if base.is_null() {
        Err(super::check::PtrError::NotAllocated)
    } else if base.cast_const().cast::<u8>() != ptr {
        Err(super::check::PtrError::Interior)
    } else {
        Ok(())
    }
}

pub(super) fn is_heap_ptr(ptr: *const u8) -> bool {
    // SAFETY: GC_is_heap_ptr accepts any address.
    unsafe { sys::GC_is_heap_ptr(ptr.cast()) != 0 }
}

pub(super) fn version() -> String {
    // SAFETY: a plain getter.
    let v = unsafe { sys::GC_get_version() };
    format!("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff)
}

// ---- weak pointers (weak.rs) ----------------------------------------------

/// Registers `cell` (which holds `obj`'s hidden address) to be cleared
/// when `obj` becomes unreachable.
///
/// # Safety
/// `cell` is a live collectable object of a word, `obj` the start of a
/// live collectable object.
pub(super) unsafe fn register_weak(cell: *mut c_void, obj: *const u8) {
    // SAFETY: per the caller; bdwgc clears the word at `cell`.
    let rc = unsafe { sys::GC_general_register_disappearing_link(cell.cast(), obj.cast()) };
    if rc == sys::GC_NO_MEMORY as i32 {
        crate::abort("defergc: out of memory registering a weak pointer");
    }
}

/// Unregisters `cell`'s link (before its object is freed explicitly).
///
/// # Safety
/// `cell` was registered with [`register_weak`].
pub(super) unsafe fn unregister_weak(cell: *mut c_void) {
    // SAFETY: per the caller.
    unsafe { sys::GC_unregister_disappearing_link(cell.cast()) };
}

/// Runs `f` under the collector's lock (shared with other readers): no
/// collection runs meanwhile. `f` must not allocate from the collector,
/// block, or unwind.
#[cfg(feature = "precise")]
pub(super) fn with_reader_lock<F: FnOnce() -> R, R>(f: F) -> R {
    struct Call<F, R> {
        f: Option<F>,
        out: Option<R>,
    }
    unsafe extern "C" fn run<F: FnOnce() -> R, R>(data: *mut c_void) -> *mut c_void {
        // SAFETY: the Call below, borrowed for this call only.
        let call = unsafe { &mut *data.cast::<Call<F, R>>() };
        call.out = call.f.take().map(|f| f());
        std::ptr::null_mut()
    }
    let mut call = Call {
        f: Some(f),
        out: None,
    };
    // SAFETY: `run` gets the Call it expects, which outlives the call.
    unsafe { sys::GC_call_with_reader_lock(Some(run::<F, R>), (&raw mut call).cast(), 0) };
    call.out.expect("the collector ran the callback")
}

/// [`read_weak`] for a caller that holds the collector's lock.
#[cfg(feature = "precise")]
pub(super) fn read_weak_locked(cell: *mut usize) -> *mut u8 {
    // SAFETY: a live cell (the caller's); the lock keeps collections out.
    let hidden = unsafe { cell.read_volatile() };
    if hidden == 0 {
        std::ptr::null_mut()
    } else {
        (!hidden) as *mut u8
    }
}

/// The object `cell` names (revealing its hidden address), or null once
/// it was cleared; read under the collector's lock.
pub(super) fn read_weak(cell: *mut usize) -> *mut u8 {
    unsafe extern "C" fn read(cell: *mut c_void) -> *mut c_void {
        // SAFETY: the cell given below, alive (its caller holds it).
        let hidden = unsafe { cell.cast::<usize>().read_volatile() };
        if hidden == 0 {
            std::ptr::null_mut()
        } else {
            (!hidden) as *mut c_void
        }
    }
    // SAFETY: the callback reads one word of a live cell.
    unsafe { sys::GC_call_with_reader_lock(Some(read), cell.cast(), 0) }.cast()
}
