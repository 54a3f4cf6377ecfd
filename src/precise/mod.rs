//! The precise collector: a handle-based heap with per-thread shadow
//! stacks and exact tracing (feature `precise`).
//!
//! Objects are reached only through [`Handle`]s: a cell of a block, or an
//! entry of the large-object table, and a generation. Every thread keeps the handles it needs on its shadow stack, in
//! frames; the collector traces from those, from global roots and from
//! root memory, through the handle fields that each object's registered
//! type declares. Collection is concurrent: a dedicated collector thread
//! marks and sweeps while the mutators run. It never stops the world: each
//! thread stops only for its own handshakes, at safepoints (allocation,
//! frame push, [`safepoint`]), for microseconds (snapshotting its
//! roots, handing over its write-barrier log); threads in native code are
//! handled on their behalf. See `collector/` for the protocol and why it
//! loses no live object. [`collect`] runs a full cycle and waits for it;
//! [`gc_async`] and [`gc_wait`] split the two; [`shutdown`] joins the
//! collector thread; the pacer requests cycles by allocation volume
//! ([`Config::gc_percent`]), and makes an allocation that would take the
//! heap well past its goal while marking runs wait for the cycle
//! (`heap/pacer.rs`).
//!
//! ```
//! use defergc::precise::{self, Frame};
//!
//! // struct Node { next: Handle, value: u64 }
//! let node = precise::register_type(16, &[0]).unwrap();
//! let frame = Frame::new().unwrap();
//! let head = precise::alloc(node).unwrap();
//! frame.root(head).unwrap();
//! let second = precise::alloc(node).unwrap(); // head is rooted: safe
//! precise::store(head, 0, second).unwrap();
//! precise::write_u64(second, 8, 42).unwrap();
//! precise::collect().unwrap();                 // both reachable: kept
//! let next = precise::load(head, 0).unwrap().unwrap();
//! assert_eq!(precise::read_u64(next, 8).unwrap(), 42);
//! ```
//!
//! # Rules for mutators
//!
//! - A handle held across a safepoint must be rooted, or stored in an
//!   object that is; otherwise it may be collected and become stale.
//! - A thread that blocks or runs for long without a safepoint must do so
//!   in native code ([`native`], [`enter_native`]), or every collection
//!   waits for its handshake (the other threads keep running meanwhile).
//!   In native code it touches no handle: not the heap, and not its root
//!   memory either (tls slots, defer captures holding handles), which the
//!   collector may be reading on its behalf. Root memory without handles
//!   (ordinary defers, tls values) is safe to use there.
//! - Handles move between threads only through the heap or roots (a
//!   global root, a shared object), never as bare values a new thread
//!   picks up later: a handle is alive only while something the collector
//!   traces holds it.
//! - The calling thread is registered on first use and unregistered at
//!   exit; [`init`] registers the thread that calls it (normally `main`,
//!   which never unregisters).
//!
//! # Checks
//!
//! Always on, release builds included (each is a compare or two):
//! null, invalid and stale handles (a stale one names an object that a
//! collection found dead, swept or not yet) in [`deref()`], [`load`],
//! [`load_many`], [`store`] (object and value), the byte accessors,
//! [`size_of`] and [`type_of`];
//! unknown type ids ([`TypeId::from_raw`]); field offsets and byte ranges
//! against the object size and its type's handle-field map; for a
//! [`Field`] (checked once when made, for the code a compiler generates
//! when it knows the field statically), the object's type, one compare, in
//! [`load_field`], [`load_fields`] and [`store_field`]; frame order in
//! [`pop_frame`], [`Frame::root`] and [`Frame::pop`]; heap use from native
//! code; type layouts at registration; the heap limit and size overflow.
//! The marker validates every value it traces, so garbage in a root or a
//! field is ignored rather than followed.
//!
//! Debug builds (`debug_assertions`) only: the handles given to [`root`],
//! [`set_root`], [`Frame::root`] and [`Frame::set`] (a stale or invalid one
//! is an error there; in release it is stored, ignored by the marker, and
//! reported when used), heap consistency checks in the sweep (each freed
//! header must be the one its handle leads to), and freed cells
//! poisoned and stamped, checked when reused (a write after free aborts).
//!
//! # Layout
//!
//! From the top down:
//!
//! - `collector/` (the collector thread, the cycle, the marker, mark
//!   assists, and `on_alloc`, what the allocation path's one hook into
//!   it does);
//! - `root_scan.rs` (global roots, added root scanners);
//! - `frame.rs` (the frame and root functions, [`Frame`]);
//! - `access.rs` (the allocation entry points, loads, stores, the write
//!   barrier);
//! - `mutator.rs` (a registered thread's state, the registry, handshake
//!   rounds and what each asks of a thread, safepoints, native code, the
//!   barrier log);
//! - `shadow.rs` (the shadow stack itself); `stats.rs` (including mutator
//!   pauses; [`stats()`] adds the registry's counts);
//! - `types.rs`, `heap/` (object layout and size classes, blocks,
//!   allocation, sweeping, the pacer), `handles.rs` (handle format,
//!   lookup, the large-object table);
//! - `marking.rs` (what mutators read of the collector's state: marks,
//!   birth mode, barrier flag, the grey queue);
//! - `error.rs`, `sync.rs`.
//!
//! A file imports only files below it, except within the heap's line:
//! `heap/` and `handles.rs` share the object layout, and the allocation
//! path (`heap/alloc.rs`) works on a thread's buffers (`mutator.rs`). The
//! heap names no collector: it polls it through one hook that it declares
//! (`heap::AllocPoll`) and the collector registers when it starts
//! (`collector::install`, from `start`). The crate's `cache.rs` keeps the
//! hot flags off other data's cache lines and prefetches.

mod access;
mod collector;
mod error;
mod fork;
mod frame;
mod handles;
mod heap;
mod marking;
#[cfg(loom)]
#[doc(hidden)]
pub mod model;
mod mutator;
mod root_scan;
mod shadow;
mod stats;
mod sync;
#[cfg(test)]
mod tests;
mod types;
mod weak;

pub use access::{
    alloc, alloc_array, alloc_with, deref, load, load_field, load_fields, load_many, read_bytes,
    read_u64, size_of, store, store_field, type_of, write_bytes, write_u64, Field,
};
pub use collector::{collect, gc_async, gc_wait, shutdown};
pub use error::{Error, Result};
pub use frame::{get_root, pop_frame, push_frame, root, set_root, Frame};
pub use handles::Handle;
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use marking::break_protocol_for_tests;
pub use mutator::{
    enter_native, is_thread_registered, leave_native, native, register_thread, safepoint,
    unregister_thread, NativeGuard,
};
pub use root_scan::{add_global_root, remove_global_root, store_global, GlobalRoot};
pub use shadow::FrameId;
pub use stats::{reset_pause_stats, Stats};
pub use types::{
    register_bytes_type, register_handle_array_type, register_type, TypeId, MAX_OBJECT_SIZE,
};
pub use weak::Weak;

#[cfg(test)]
pub(crate) use marking::snapshot_phase;
#[cfg(test)]
pub(crate) use root_scan::add_root_memory_scanner;

/// For the crate's tests: whether the calling thread has acknowledged the
/// running cycle's Prepare round and not yet its Snapshot round.
#[cfg(test)]
pub(crate) fn snapshot_pending() -> bool {
    mutator::current().is_ok_and(|ts| ts.before_snapshot())
}

/// For the crate's tests: whether the running cycle has snapshotted the
/// calling thread's roots (and its marking is not complete).
#[cfg(test)]
pub(crate) fn snapshot_taken() -> bool {
    marking::snapshot_phase() && mutator::current().is_ok_and(|ts| !ts.before_snapshot())
}

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Reads the statistics. Does not register the calling thread; may wait
/// for a running collection to finish.
pub fn stats() -> Stats {
    let (objects_allocated, threads) = mutator::allocation_totals();
    stats::read(objects_allocated, threads)
}

/// Settings of the precise collector, applied by [`init_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Most bytes the heap may occupy (blocks and large objects); `None`
    /// for no limit. An allocation that would go past it after a full
    /// collection fails with [`Error::HeapLimit`].
    pub heap_limit: Option<usize>,
    /// Start a collection once allocation since the last one exceeds this
    /// percentage of the heap found live by it (Go's GOGC); `None` turns
    /// automatic collections off (the heap limit still collects).
    pub gc_percent: Option<u32>,
    /// Go's soft memory limit on the heap (`None`: none): collections come
    /// sooner as the heap nears it, an allocation that would grow the heap
    /// past it first waits for them to free memory (while the live heap is
    /// at most three quarters of it), and with `gc_percent` off it alone
    /// starts them. Allocation never fails for it (that is `heap_limit`).
    pub memory_limit: Option<usize>,
    /// Never start an automatic collection before this many bytes were
    /// allocated since the last one.
    pub min_trigger: usize,
}

impl Config {
    /// The defaults: no limit, GOGC=100, 4 MiB minimum trigger. (A
    /// collector started without a config takes `GOGC` and `GOMEMLIMIT`
    /// from the environment over these, as Go does.)
    pub const DEFAULT: Config = Config {
        heap_limit: None,
        gc_percent: Some(100),
        memory_limit: None,
        min_trigger: heap::DEFAULT_MIN_TRIGGER,
    };
}

impl Default for Config {
    fn default() -> Config {
        Config::DEFAULT
    }
}

static STARTED: AtomicBool = AtomicBool::new(false);
static START: Mutex<()> = Mutex::new(());

fn start(config: Option<Config>) -> Result<()> {
    let _one = START.lock().unwrap_or_else(|e| e.into_inner());
    if STARTED.load(Ordering::Acquire) {
        return match config {
            Some(_) => Err(Error::AlreadyInitialized),
            None => Ok(()),
        };
    }
    let c = config.unwrap_or_else(from_environment);
    heap::configure(c.heap_limit, c.gc_percent, c.memory_limit, c.min_trigger);
    collector::install();
    fork::install();
    STARTED.store(true, Ordering::Release);
    Ok(())
}

/// [`Config::DEFAULT`] with `GOGC` and `GOMEMLIMIT` applied (a malformed
/// value ends the process naming it, as Go's does).
fn from_environment() -> Config {
    let env = crate::gc::memory::environment().unwrap_or_else(|e| crate::abort(&e));
    let mut c = Config::DEFAULT;
    if let Some(p) = env.gc_percent {
        c.gc_percent = u32::try_from(p).ok();
    }
    if let Some(limit) = env.memory_limit {
        c.memory_limit = (limit != u64::MAX).then(|| usize::try_from(limit).unwrap_or(usize::MAX));
    }
    c
}

/// Starts the collector with the defaults unless it has started.
pub(crate) fn ensure_started() {
    if !STARTED.load(Ordering::Acquire) {
        let _ = start(None);
    }
}

/// Starts the collector with [`Config::DEFAULT`] (if it has not started)
/// and registers the calling thread. Idempotent; never required, since
/// every function starts the collector and registers its thread on first
/// use.
pub fn init() -> Result<()> {
    start(None)?;
    register_thread()
}

/// Starts the collector with `config` and registers the calling thread.
/// [`Error::AlreadyInitialized`] (changing nothing) once the collector has
/// started, which the first registration of any thread does.
pub fn init_with(config: Config) -> Result<()> {
    start(Some(config))?;
    register_thread()
}

/// Go's `debug.SetGCPercent` for this heap: sets the pacer's growth
/// percentage (see [`Config::gc_percent`]; `None` turns automatic
/// collections off) and returns the previous one. Takes effect from the
/// next collection's trigger on.
pub fn set_gc_percent(percent: Option<u32>) -> Option<u32> {
    ensure_started();
    heap::set_gc_percent(percent)
}

/// Go's `debug.SetMemoryLimit` for this heap: sets the soft limit (see
/// [`Config::memory_limit`]; `None` lifts it) and returns the previous
/// one. A limit below the heap in use starts a collection now.
pub fn set_memory_limit(limit: Option<usize>) -> Option<usize> {
    ensure_started();
    let old = heap::set_memory_limit(limit);
    if limit.is_some_and(|l| l < stats().heap_size) {
        gc_async();
    }
    old
}

/// The soft memory limit in force, if any.
pub fn memory_limit() -> Option<usize> {
    heap::memory_limit()
}

/// Sets or lifts the heap limit at run time (see [`Config::heap_limit`]).
/// Lowering it below the current heap size makes allocations that need new
/// memory fail until collections bring the heap back under it.
pub fn set_heap_limit(limit: Option<usize>) {
    ensure_started();
    heap::set_limit(limit);
}
