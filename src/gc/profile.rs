//! Heap profiles as Go makes them, the collector's side: allocations
//! sampled at `MemProfileRate` (one sample per 512 KiB allocated on
//! average, by default), and which of them are still in use. The profile
//! is written by `prof::heap` (pprof's protobuf format, which `go tool
//! pprof` reads), from the samples this module hands it.
//!
//! Sampling: each thread counts down the bytes to its next sample (in its
//! allocation-count block, `memory.rs`: one subtraction and compare on
//! the allocation path); the distance is drawn from an exponential
//! distribution of mean `rate`, as Go's `nextSample` does, so that every
//! byte has the same chance of being sampled. A sample records the
//! allocating stack (return addresses only: `unwind::walk`) into a
//! table of sites, and the object's address in a table of entries that
//! every collection looks at when its marking ends (with the world
//! stopped, `marking_ended`): a sampled object left unmarked is dead, and
//! its entry is emptied for reuse; one freed explicitly is dead at once
//! (`forget`). The profile so needs nothing from the heap: weak pointers
//! did (each a cell of its own kind and a disappearing link in bdwgc's
//! heap), and those allocations made bdwgc grow the heap in GCBench (a
//! third more heap, 40% fewer collections). An object reachable only
//! from a finalizable one counts as dead from the collection that finds
//! it so (Go would count it in use until its finalizer has run).
//! Symbols
//! are resolved only when a profile is written.
//!
//! Values are scaled back to estimates of the whole heap as Go does
//! (`scaleHeapSample`: an object of size `s` sampled at rate `r` stands
//! for `1 / (1 - exp(-s/r))` objects), with the rate in force when each
//! sample was taken.
//!
//! Under `nogc` objects are never freed: everything sampled stays in use.

use std::collections::HashMap;
use std::io::Write;
use std::ptr::NonNull;
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use std::sync::Mutex;

/// Go's default `runtime.MemProfileRate`.
pub const DEFAULT_RATE: i64 = 512 * 1024;

static RATE: AtomicI64 = AtomicI64::new(DEFAULT_RATE);

/// Sets Go's `MemProfileRate` (bytes between samples on average; 0: no
/// sampling; 1: every allocation) and returns the previous one.
pub fn set_mem_profile_rate(bytes: i64) -> i64 {
    RATE.swap(bytes.max(0), Ordering::AcqRel)
}

/// The sampling rate in force.
pub fn mem_profile_rate() -> i64 {
    RATE.load(Ordering::Acquire)
}

/// One sampled allocation site: its stack and what it allocated.
#[derive(Default)]
struct Site {
    /// Objects and bytes allocated here, estimated from the samples.
    objects: f64,
    bytes: f64,
}

/// The sites (in the order first seen, `by_stack` naming each one's
/// index), and the sampled objects' entries by address (for [`forget`];
/// an entry found dead may still be listed: its address no longer
/// matches).
#[derive(Default)]
struct Samples {
    sites: Vec<Site>,
    by_stack: HashMap<Vec<usize>, u32>,
    by_addr: HashMap<usize, usize>,
    /// Entries below `LIVE_LEN` known to be empty, for reuse.
    free: Vec<usize>,
    /// `LIVE_LEN` at which empty entries are next looked for.
    next_scan: usize,
}

// ---- the sampled objects still alive ----------------------------------
//
// A collection looks at every sampled object when its marking ends, with
// the world stopped: one not marked is dead and its entry is emptied.
// That is why the entries live in chunks that never move, published with
// atomics: the collector may not take a lock a stopped thread holds.

/// One sampled object: its address (0: the entry is empty), its site, its
/// size and the objects it stands for (as `f64` bits). The address is
/// written last, with release ordering, after the rest.
#[derive(Default)]
struct Entry {
    addr: AtomicUsize,
    site: AtomicU32,
    size: AtomicUsize,
    n: AtomicU64,
}

const CHUNK: usize = 1024;
const CHUNKS: usize = 4096;

/// The chunks of entries (allocated as needed, never freed).
static CHUNK_TABLE: [AtomicPtr<Entry>; CHUNKS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS];
/// How many entries are in use or were (entries at and above it are
/// untouched).
static LIVE_LEN: AtomicUsize = AtomicUsize::new(0);

/// Entry `i` (below `LIVE_LEN`, whose chunk is published).
fn entry(i: usize) -> &'static Entry {
    let chunk = CHUNK_TABLE[i / CHUNK].load(Ordering::Acquire);
    // SAFETY: chunks below LIVE_LEN were published before it grew and are
    // never freed; `i % CHUNK` is inside the chunk.
    unsafe { &*chunk.add(i % CHUNK) }
}

impl Samples {
    /// An empty entry: a known free one, one found empty by a scan (once
    /// the table holds twice the entries the last scan found live), or a
    /// new one; `None` when the table is full of live samples.
    fn slot(&mut self) -> Option<usize> {
        if let Some(i) = self.free.pop() {
            return Some(i);
        }
        let len = LIVE_LEN.load(Ordering::Relaxed);
        if len >= self.next_scan {
            self.free = (0..len)
                .filter(|&i| entry(i).addr.load(Ordering::Acquire) == 0)
                .collect();
            // The table stays within twice the live entries: a scan that
            // found at least half of them empty is paid for by the reuses
            // it allows, one that found fewer by the entries added until
            // the next.
            self.next_scan = (2 * (len - self.free.len())).max(CHUNK);
            self.by_addr
                .retain(|&addr, &mut i| entry(i).addr.load(Ordering::Relaxed) == addr);
            if let Some(i) = self.free.pop() {
                return Some(i);
            }
        }
        if len == CHUNK * CHUNKS {
            return None;
        }
        if len.is_multiple_of(CHUNK) && CHUNK_TABLE[len / CHUNK].load(Ordering::Relaxed).is_null() {
            let size = CHUNK * std::mem::size_of::<Entry>();
            // SAFETY: plain C allocation; zeroed memory is CHUNK empty
            // entries (all fields atomics of zero).
            let chunk = unsafe { libc::calloc(1, size) }.cast::<Entry>();
            if chunk.is_null() {
                return None;
            }
            CHUNK_TABLE[len / CHUNK].store(chunk, Ordering::Release);
        }
        LIVE_LEN.store(len + 1, Ordering::Release);
        Some(len)
    }
}

/// At the end of a collection's marking, with the world stopped (called
/// by bdwgc's event hook): empties the entry of every sampled object
/// `is_marked` says is dead. No lock, no allocation.
#[cfg_attr(feature = "nogc", allow(dead_code))]
pub(super) fn marking_ended(is_marked: impl Fn(usize) -> bool) {
    let len = LIVE_LEN.load(Ordering::Acquire);
    for i in 0..len {
        let e = entry(i);
        let addr = e.addr.load(Ordering::Acquire);
        if addr != 0 && !is_marked(addr) {
            e.addr.store(0, Ordering::Release);
        }
    }
}

/// How many objects of `size` bytes one sample at `rate` stands for (Go's
/// `scaleHeapSample`).
fn scale(size: usize, rate: i64) -> f64 {
    if rate <= 1 {
        return 1.0;
    }
    1.0 / (1.0 - (-(size as f64) / rate as f64).exp())
}

static SITES: Mutex<Option<Samples>> = Mutex::new(None);

/// Whether anything was ever sampled (frees skip the table before).
static ANY: AtomicBool = AtomicBool::new(false);

/// Before a fork (see `gc::TABLES_FORK`).
pub(super) fn lock_for_fork() {
    super::fork::held::keep(SITES.lock().unwrap_or_else(|e| e.into_inner()));
}

/// The allocation path's slow branch: the countdown crossed zero.
#[cold]
#[inline(never)]
pub(crate) fn sampled(p: Option<NonNull<u8>>, size: usize) {
    thread_local! {
        /// Set while this thread records a sample: its own allocations
        /// (through a global allocator of ours) are not sampled.
        static RECORDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    let rate = mem_profile_rate();
    super::memory::next_sample(|random| draw(rate, random));
    let Some(p) = p else { return };
    if rate == 0 || crate::fresh::with(&RECORDING, |r| r.replace(true)) {
        return;
    }
    record(p, size);
    crate::fresh::with(&RECORDING, |r| r.set(false));
}

fn record(p: NonNull<u8>, size: usize) {
    let mut stack = Vec::with_capacity(32);
    crate::unwind::walk(|pc| {
        stack.push(pc);
        stack.len() < 64
    });
    let n = scale(size, mem_profile_rate());
    let mut guard = SITES.lock().unwrap_or_else(|e| e.into_inner());
    let samples = guard.get_or_insert_with(Samples::default);
    let next = samples.sites.len() as u32;
    let site = *samples.by_stack.entry(stack).or_insert(next);
    if site == next {
        samples.sites.push(Site::default());
    }
    let totals = &mut samples.sites[site as usize];
    totals.objects += n;
    totals.bytes += n * size as f64;
    // With every entry holding a live sample, this one counts in the
    // totals only.
    let Some(i) = samples.slot() else { return };
    let e = entry(i);
    e.site.store(site, Ordering::Relaxed);
    e.size.store(size, Ordering::Relaxed);
    e.n.store(n.to_bits(), Ordering::Relaxed);
    let addr = p.as_ptr() as usize;
    e.addr.store(addr, Ordering::Release);
    samples.by_addr.insert(addr, i);
    ANY.store(true, Ordering::Release);
}

/// The object at `obj` is about to be freed explicitly: its sample, if it
/// has one, is dead now (no collection may look at its address again).
pub(crate) fn forget(obj: *mut u8) {
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    let mut guard = SITES.lock().unwrap_or_else(|e| e.into_inner());
    let Some(samples) = guard.as_mut() else {
        return;
    };
    let addr = obj as usize;
    if let Some(i) = samples.by_addr.remove(&addr) {
        // Only if the entry still names this object: a dead sample's
        // entry may hold a newer one by now.
        let _ = entry(i)
            .addr
            .compare_exchange(addr, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// The next sampling distance for `rate`: exponential with that mean.
fn draw(rate: i64, random: u64) -> i64 {
    match rate {
        0 => i64::MAX,
        1 => 0,
        r => {
            // A uniform (0, 1] from 53 random bits.
            let u = ((random >> 11) + 1) as f64 / (1u64 << 53) as f64;
            (-u.ln() * r as f64).min(i64::MAX as f64 / 2.0) as i64
        }
    }
}

/// Every sampled site's stack (return addresses, innermost first) and
/// values: objects and bytes allocated, objects and bytes of them still
/// in use (estimates of the whole heap), the most bytes allocated first.
fn sites() -> Vec<(Vec<usize>, [f64; 4])> {
    let guard = SITES.lock().unwrap_or_else(|e| e.into_inner());
    let mut values: Vec<[f64; 4]> = guard
        .iter()
        .flat_map(|s| s.sites.iter())
        .map(|site| [site.objects, site.bytes, 0.0, 0.0])
        .collect();
    for i in 0..LIVE_LEN.load(Ordering::Acquire) {
        let e = entry(i);
        if e.addr.load(Ordering::Acquire) == 0 {
            continue;
        }
        let n = f64::from_bits(e.n.load(Ordering::Relaxed));
        let v = &mut values[e.site.load(Ordering::Relaxed) as usize];
        v[2] += n;
        v[3] += n * e.size.load(Ordering::Relaxed) as f64;
    }
    let mut stacks: Vec<(Vec<usize>, [f64; 4])> = guard
        .iter()
        .flat_map(|s| s.by_stack.iter())
        .map(|(stack, &i)| (stack.clone(), values[i as usize]))
        .collect();
    stacks.sort_by_key(|(_, v)| std::cmp::Reverse(v[1] as u64));
    stacks
}

/// Go's `pprof.WriteHeapProfile`: the samples so far, in pprof's protobuf
/// format (uncompressed, which pprof reads as well as gzip).
pub fn write_heap_profile(out: impl Write) -> std::io::Result<()> {
    crate::prof::heap::write(sites(), mem_profile_rate(), out)
}

/// Writes the heap profile to `path` (C: `defergc_write_heap_profile`).
pub fn write_heap_profile_to(path: &std::path::Path) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut out = std::io::BufWriter::new(file);
    write_heap_profile(&mut out)?;
    out.flush()
}

/// How many sample entries the table has used (live, or empty and
/// waiting for reuse), for tests: it follows the sampled objects in use,
/// not all ever sampled.
#[doc(hidden)]
pub fn entries_for_tests() -> usize {
    LIVE_LEN.load(Ordering::Acquire)
}

/// Decodes a profile written by [`write_heap_profile`] into its sites:
/// each site's function names (innermost first) and values, for tests.
pub fn decode_for_tests(bytes: &[u8]) -> Option<Vec<(Vec<String>, Vec<i64>)>> {
    crate::prof::builder::decode(bytes)
}
