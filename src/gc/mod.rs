//! The collector: initialisation, allocation kinds, collection, statistics,
//! finalizers, warnings, thread registration and a `GlobalAlloc`.
//!
//! Two backends export the same names and are chosen at build time:
//! `boehm.rs` (the vendored bdwgc, or a system one) and `malloc.rs` (under
//! `nogc`: malloc/free, nothing is collected). The rest of the crate never
//! asks which one it has; where a backend has nothing to do, the function
//! does nothing and says so in its docs.
//!
//! Invariant kept here (design.md invariant 1): every function that touches collector
//! memory first registers the calling thread (`thread.rs`), so bdwgc's
//! "Collecting from unknown thread" abort cannot be reached through this API.
//!
//! ```
//! let p = defergc::gc::alloc(32).cast::<u64>();
//! // SAFETY: alloc returned 32 zeroed, writable bytes.
//! unsafe { p.as_ptr().write(7) };
//! defergc::gc::collect();
//! assert_eq!(unsafe { p.as_ptr().read() }, 7); // still on our stack: kept
//! ```

/// The raw bdwgc bindings (the `defergc-sys` crate): only `gc` uses them.
#[cfg(defergc_boehm)]
pub(crate) use defergc_sys as sys;

#[cfg(defergc_boehm)]
#[path = "boehm.rs"]
mod backend;
#[cfg(not(defergc_boehm))]
#[path = "malloc.rs"]
mod backend;

pub mod check;
pub mod finalize;
pub(crate) mod fork;
mod global_alloc;
pub mod memory;
pub mod profile;
pub(crate) mod scan;
pub(crate) mod thread;
mod warn;
pub mod weak;

pub use finalize::{add_cleanup, Cleanup, CleanupFn};
pub use global_alloc::GcAlloc;
pub use memory::{
    allocs_per_run, free_os_memory, gc_percent, memory_limit, read_memstats, set_gc_percent,
    set_max_heap, set_memory_limit, MemStats,
};
pub use thread::{is_thread_registered, spawn, ThreadGuard};
pub use warn::{set_warning_handler, WarningHandler};
pub use weak::{keep_alive, Weak};

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How the collector was built: vendored or system, which version, which
/// defines (the `defergc-sys` crate's build); under `nogc`, source "none"
/// and nothing else.
#[cfg(defergc_boehm)]
pub use defergc_sys::build;

/// How the collector was built: under `nogc`, nothing is.
#[cfg(not(defergc_boehm))]
pub mod build {
    /// Where the collector came from: "none" (built with `nogc`).
    pub const SOURCE: &str = "none";
    /// The bdwgc version built against: none.
    pub const VERSION: &str = "";
    /// The defines of the collector build: none.
    pub const DEFINES: &[(&str, &str)] = &[];
    /// Directory holding the collector archive: none.
    pub const LIB_DIR: &str = "";
    /// Include directories for C code built against the collector: none.
    pub const INCLUDE_DIRS: &[&str] = &[];
    /// Linker arguments for C programs linking the collector: none.
    pub const LINK_ARGS: &[&str] = &[];

    /// The compiler flags for C code built against the collector: none.
    pub fn c_flags() -> Vec<String> {
        Vec::new()
    }
}

/// Name of the collector backend compiled in: `"bdwgc"` or `"malloc"`.
pub const BACKEND: &str = backend::NAME;

/// What kind of memory an allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Collectable, scanned for pointers, zeroed.
    Scanned,
    /// Collectable, never scanned (holds no pointers), not zeroed.
    Atomic,
    /// Never collected (only [`free`] releases it), scanned: root memory.
    /// Zeroed.
    Uncollectable,
}

/// Settings applied when the collector starts. Users get these defaults too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Heap reserved at start, in bytes. A warm heap avoids a burst of tiny
    /// collections while a program builds up its first live data.
    pub initial_heap_bytes: usize,
    /// bdwgc's free-space divisor: a collection is triggered after about
    /// `heap / divisor` bytes of allocation. Larger means more frequent
    /// collections and a smaller heap.
    pub free_space_divisor: u32,
    /// Number of marker threads including the caller; `None` lets bdwgc
    /// choose (one per core, or the `GC_MARKERS` environment variable).
    pub markers: Option<u32>,
    /// Go's GC percent ([`set_gc_percent`]); `None`: `GOGC`, or the
    /// free-space divisor above.
    pub gc_percent: Option<i32>,
    /// A soft memory limit ([`set_memory_limit`]); `None`: `GOMEMLIMIT`, or
    /// none.
    pub memory_limit: Option<u64>,
    /// A hard heap limit ([`set_max_heap`]); `None`: none.
    pub max_heap: Option<u64>,
    /// Whether finalizers run on their own thread (`true`) or only when
    /// the program calls [`run_finalizers`].
    pub finalizer_thread: bool,
}

impl Config {
    /// The defaults: what [`init`] and implicit initialisation use.
    pub const DEFAULT: Config = Config {
        initial_heap_bytes: 8 << 20,
        free_space_divisor: 3,
        markers: None,
        gc_percent: None,
        memory_limit: None,
        max_heap: None,
        finalizer_thread: true,
    };
}

impl Default for Config {
    fn default() -> Config {
        Config::DEFAULT
    }
}

/// [`init_with`] was called after the collector had already started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlreadyInitialized;

impl std::fmt::Display for AlreadyInitialized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("defergc: the collector was already initialised; init_with must come first")
    }
}

impl std::error::Error for AlreadyInitialized {}

const UNINIT: u8 = 0;
const RUNNING: u8 = 1;
const READY: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(UNINIT);
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Starts the collector with [`Config::DEFAULT`]. Idempotent; every other
/// function calls it implicitly, so calling it is never required.
pub fn init() {
    if STATE.load(Ordering::Acquire) != READY {
        let _ = start(Config::DEFAULT);
    }
}

/// Starts the collector with `config`, before any other use.
///
/// Returns [`AlreadyInitialized`] (and changes nothing) if it has started.
pub fn init_with(config: Config) -> Result<(), AlreadyInitialized> {
    start(config)
}

/// Before a fork: the locks of the runtime's own tables (finalizers and
/// cleanups, heap-profile sites, weak pointers, symbol lookups), in the
/// order they nest, so that a child never starts with one held by a
/// thread that did not come along.
static TABLES_FORK: fork::ForkHooks = fork::ForkHooks {
    prepare: || {
        finalize::lock_for_fork();
        profile::lock_for_fork();
        weak::lock_for_fork();
        fork::held::keep(crate::unwind::lock_for_fork());
    },
    ..fork::ForkHooks::NONE
};

fn start(config: Config) -> Result<(), AlreadyInitialized> {
    {
        let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        if STATE.load(Ordering::Acquire) != UNINIT {
            return Err(AlreadyInitialized);
        }
        STATE.store(RUNNING, Ordering::Relaxed);
        backend::init(&config);
        fork::on_fork(&check::FORK);
        fork::on_fork(&TABLES_FORK);
        STATE.store(READY, Ordering::Release);
    }
    if let Err(e) = memory::read_environment() {
        crate::abort(&e);
    }
    // The program's own settings win over the environment's, as Go's
    // debug.SetGCPercent wins over GOGC.
    if let Some(p) = config.gc_percent {
        set_gc_percent(p);
    }
    if let Some(limit) = config.memory_limit {
        set_memory_limit(limit);
    }
    if let Some(max) = config.max_heap {
        set_max_heap(max);
    }
    // bdwgc registers the thread that starts it. That registration must
    // end when the thread does, like any other: a thread that exits still
    // registered leaves a record whose signals are never answered, and the
    // next collection waits for it until bdwgc aborts ("Signals delivery
    // fails constantly").
    thread::ensure_registered();
    Ok(())
}

/// The largest allocation asked of the backend (2^46 bytes, 64 TiB: more
/// than any machine this runs on maps); larger requests fail at once.
pub const MAX_ALLOC: usize = 1 << 46;

/// Allocates `size` bytes of `kind` memory, or `None` when the heap cannot
/// grow (or `size` is above [`MAX_ALLOC`]). A `size` of 0 returns a valid, distinct, minimal object.
#[inline]
pub fn try_alloc(kind: Kind, size: usize) -> Option<NonNull<u8>> {
    if size > MAX_ALLOC {
        return None;
    }
    thread::ensure_registered();
    // Root memory is the runtime's and the program's bookkeeping, freed
    // explicitly: counted, never sampled.
    if memory::count_malloc(size) && kind != Kind::Uncollectable {
        return alloc_sampled(kind, size);
    }
    NonNull::new(backend::alloc(kind, size))
}

/// [`try_alloc`] of an allocation the heap profile samples. Out of line,
/// so that the common path keeps nothing across a call (the new object
/// need not be saved around the sampler in the caller's frame).
#[cold]
#[inline(never)]
fn alloc_sampled(kind: Kind, size: usize) -> Option<NonNull<u8>> {
    let p = NonNull::new(backend::alloc(kind, size));
    profile::sampled(p, size);
    p
}

/// An allocation of the runtime's own bookkeeping (weak pointers' cells,
/// cleanup arguments, profile tables): not counted in MemStats' mallocs
/// nor sampled, as the program did not ask for it. Aborts when out of
/// memory.
pub(crate) fn alloc_internal(kind: Kind, size: usize) -> NonNull<u8> {
    thread::ensure_registered();
    NonNull::new(backend::alloc(kind, size)).unwrap_or_else(|| out_of_memory(size))
}

/// Frees an allocation of [`alloc_internal`] (not counted either).
///
/// # Safety
/// `ptr` came from [`alloc_internal`] and is not used afterwards.
pub(crate) unsafe fn free_internal(ptr: *mut u8) {
    // SAFETY: per the caller.
    unsafe { backend::free(ptr) }
}

/// Allocates `size` zeroed bytes that are scanned and collectable.
/// Aborts with a `defergc:` message when out of memory.
#[inline]
pub fn alloc(size: usize) -> NonNull<u8> {
    try_alloc(Kind::Scanned, size).unwrap_or_else(|| out_of_memory(size))
}

/// Allocates `size` bytes that hold no pointers (never scanned, not zeroed).
/// Aborts with a `defergc:` message when out of memory.
#[inline]
pub fn alloc_atomic(size: usize) -> NonNull<u8> {
    try_alloc(Kind::Atomic, size).unwrap_or_else(|| out_of_memory(size))
}

/// Allocates `size` zeroed bytes that are scanned but never collected: root
/// memory, released only by [`free`]. Aborts when out of memory.
#[inline]
pub fn alloc_uncollectable(size: usize) -> NonNull<u8> {
    try_alloc(Kind::Uncollectable, size).unwrap_or_else(|| out_of_memory(size))
}

#[cold]
fn out_of_memory(size: usize) -> ! {
    crate::abort(&format!("defergc: out of memory allocating {size} bytes"))
}

/// Frees an object now instead of waiting for the collector. Null is ignored.
///
/// # Safety
/// `ptr` is null or came from this module's allocation functions (or
/// [`realloc`]), has not been freed, and is not used afterwards.
pub unsafe fn free(ptr: *mut u8) {
    if !ptr.is_null() {
        thread::ensure_registered();
        memory::count_free();
        weak::forget(ptr);
        profile::forget(ptr);
        // SAFETY: the caller guarantees ptr is a live allocation of ours.
        unsafe { backend::free(ptr) }
    }
}

/// The usable size of a live allocation (at least what was asked for).
///
/// # Safety
/// `ptr` is a live allocation from this module.
pub unsafe fn allocation_size(ptr: *mut u8) -> usize {
    // SAFETY: forwarded from the caller.
    unsafe { backend::allocation_size(ptr) }
}

/// Resizes an object, keeping its kind and contents; like C `realloc`, a
/// null `ptr` allocates (scanned) and the result is null when out of memory.
///
/// # Safety
/// `ptr` is null or a live allocation from this module; after a non-null
/// return it must not be used again.
pub unsafe fn realloc(ptr: *mut u8, size: usize) -> *mut u8 {
    if size > MAX_ALLOC {
        return std::ptr::null_mut();
    }
    thread::ensure_registered();
    // SAFETY: the caller guarantees ptr is null or a live allocation of ours.
    unsafe { backend::realloc(ptr, size) }
}

/// Runs a full, stop-the-world collection. Finalizers it makes ready run on
/// the finalizer thread (or here, through [`run_finalizers`]). Does nothing
/// under `nogc`.
pub fn collect() {
    thread::ensure_registered();
    backend::collect();
}

/// [`collect`] for tests that must see garbage collected: first zeroes
/// the dead part of the calling thread's stack (the 64 KiB below the
/// caller's frame, where calls that returned left their locals), so that
/// the collector's own frames, which then occupy that memory, hold no
/// stale pointer to an object the program has dropped. bdwgc scans stacks
/// conservatively: without this, a finalizer test may find its object kept
/// alive by such a leftover, now and then. What the caller's own live
/// frame (or a callee-saved register) still holds is not cleared: make the
/// garbage in a function that has returned. Does nothing under `nogc`.
#[inline(never)]
pub fn collect_with_clean_stack() {
    clear_dead_stack();
    collect();
}

/// Zeroes 64 KiB of the stack below the caller's frame (see
/// [`collect_with_clean_stack`]).
#[inline(never)]
fn clear_dead_stack() {
    let mut dead = [0usize; 8192];
    // The zeroes must reach memory: the optimiser would drop a write that
    // nothing reads.
    std::hint::black_box(&mut dead);
}

/// Collector statistics. Under `nogc` every field is zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes in the heap, free blocks included.
    pub heap_size: usize,
    /// Free bytes in the heap (mapped or not).
    pub free_bytes: usize,
    /// Heap bytes returned to the OS.
    pub unmapped_bytes: usize,
    /// Bytes allocated since the last collection.
    pub bytes_allocated_since_gc: usize,
    /// Bytes allocated over the life of the process.
    pub bytes_allocated_total: usize,
    /// Collections completed.
    pub collections: u64,
    /// Marker threads, the calling one included.
    pub markers: usize,
    /// Total time spent in full collections.
    pub gc_time: Duration,
    /// Total time the world was stopped.
    pub stopped_time: Duration,
    /// The longest single stop of the world.
    pub max_pause: Duration,
    /// Warnings the collector reported (see [`set_warning_handler`]).
    pub warnings: u64,
}

/// Reads the collector's statistics.
pub fn stats() -> Stats {
    init();
    let mut s = backend::stats();
    s.warnings = warn::count();
    s
}

/// A finalizer: called with the object and the `data` given at registration.
pub type Finalizer = unsafe extern "C" fn(obj: *mut c_void, data: *mut c_void);

/// Arranges for `finalizer(obj, data)` to run after `obj` becomes
/// unreachable, replacing any earlier one (`None` removes it). Finalizers run
/// in an order that respects reachability between finalizable objects, on a
/// dedicated `defergc-finalizer` thread started by the first registration
/// (or on the caller of [`run_finalizers`]), never inside an allocation.
/// They must not unwind. Does nothing under `nogc`, where nothing is
/// collected.
///
/// # Safety
/// `obj` is the start of a live collectable object from this module, and
/// `finalizer` is safe to call with `obj` and `data` on any thread.
pub unsafe fn register_finalizer(obj: *mut u8, finalizer: Option<Finalizer>, data: *mut c_void) {
    thread::ensure_registered();
    // SAFETY: forwarded from the caller.
    unsafe { finalize::set_finalizer(obj, finalizer, data) }
}

/// Runs finalizers that are ready now, on this thread; returns how many ran
/// (always 0 under `nogc`).
pub fn run_finalizers() -> usize {
    thread::ensure_registered();
    backend::run_finalizers()
}

/// Whether `ptr` points into the collected heap (always false under `nogc`).
pub fn is_heap_ptr(ptr: *const u8) -> bool {
    init();
    backend::is_heap_ptr(ptr)
}

/// The version of the collector in use at run time (`"none"` under `nogc`).
pub fn version() -> String {
    init();
    backend::version()
}
