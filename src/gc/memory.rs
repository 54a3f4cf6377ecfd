//! Go's memory controls over the collector: `GOGC` and `SetGCPercent`,
//! `GOMEMLIMIT` and `SetMemoryLimit` (soft), a hard heap limit,
//! `FreeOSMemory`, `GODEBUG=gctrace=1`, and `runtime.MemStats`.
//!
//! # How Go's knobs map onto bdwgc
//!
//! bdwgc triggers a collection when the bytes allocated since the last
//! one exceed about `heap / divisor` (its free-space divisor). Go's GC
//! percent `p` lets the heap grow by `p`% of what the last collection
//! found live; with the heap close to the live data that is a divisor of
//! `100 / p` (rounded, at least 1). A percent above 100 cannot be had with
//! a divisor (1 is the smallest), so it keeps the divisor 1 (collect after
//! about a heap's worth of allocation: GC percent 100, more with headroom
//! in the heap). `off` (-1) disables collection (`GC_disable`) unless a
//! memory limit is set, in which case collections happen only near it.
//! Until a percent is set, the divisor is [`super::Config`]'s.
//!
//! What bdwgc counts as "what a collection scans" includes the stacks
//! (twice, as costly to scan) and the static roots besides the heap; the
//! goroutine stacks the scheduler's pusher scans are added to its stack
//! count (`gc::scan::scanned_sizes`), so a program with many parked
//! goroutines collects less often, as Go's pacer does since 1.18 when it
//! counts stacks and globals. `gctrace` prints both, and its goal is
//! Go's: live heap plus the percent of live heap, stacks and globals.
//!
//! The soft memory limit is Go's: after each collection, when the live
//! data plus the growth the percent allows would pass the limit, the
//! divisor is raised so that the next collection comes before the limit
//! (collecting harder as the heap nears it, never refusing memory). The
//! hard limit is bdwgc's `GC_set_max_heap_size`: allocation fails (and
//! [`super::alloc`] aborts) past it. They are different things and have
//! different names.
//!
//! # MemStats
//!
//! Counts Go keeps per thread are kept per thread here too: every thread
//! that allocates has a counter block that only it writes (plain relaxed
//! stores, no atomic read-modify-write on the allocation path) and that
//! [`read_memstats`] sums; a block of an exited thread is folded into the
//! totals and reused. Byte figures come from bdwgc's profile statistics;
//! pauses are the stop-the-world times bdwgc's collection events measure.
//! bdwgc does not count the objects a collection frees: `frees` and
//! `heap_objects` are estimates from the bytes it reclaims at the mean
//! object size (explicit frees are exact). Under `nogc` nothing is
//! collected: the controls are no-ops that report the previous settings,
//! and only the allocation counts move.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

// ---- per-thread allocation counts --------------------------------------

/// A thread's counts: written by the thread that holds it only. Blocks
/// are never freed: a block whose thread exited is free for the next new
/// thread, counts and all (sums stay right), so thread churn reuses a few.
/// They come from `calloc`, not the global allocator, which may be this
/// collector's (`GcAlloc`) and count itself.
struct Counter {
    mallocs: AtomicU64,
    frees: AtomicU64,
    /// Bytes left before the next heap-profile sample (`profile.rs`).
    until_sample: AtomicI64,
    /// The sampler's random state.
    rng: AtomicU64,
    in_use: AtomicBool,
    next: *const Counter,
}

/// Every block ever made, newest first (pushed, never removed).
static BLOCKS: AtomicPtr<Counter> = AtomicPtr::new(std::ptr::null_mut());

thread_local! {
    static MINE: Cell<*const Counter> = const { Cell::new(std::ptr::null()) };
}

/// Every block, for reading.
fn blocks() -> impl Iterator<Item = &'static Counter> {
    let mut cur = BLOCKS.load(Ordering::Acquire).cast_const();
    std::iter::from_fn(move || {
        // SAFETY: blocks are published with release and never freed.
        let c = unsafe { cur.as_ref() }?;
        cur = c.next;
        Some(c)
    })
}

#[inline(always)]
fn mine() -> &'static Counter {
    let mut c = crate::fresh::fresh_get!(MINE: *const Counter);
    if c.is_null() {
        c = adopt_counter();
    }
    // SAFETY: a block of ours (never freed).
    unsafe { &*c }
}

#[inline(always)]
fn bump(field: impl Fn(&Counter) -> &AtomicU64) {
    let f = field(mine());
    // Single writer: a plain store is enough for readers that may see the
    // count a moment late.
    f.store(f.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// Counts one allocation of `size` bytes by the calling thread; true when
/// it is to be sampled for the heap profile.
#[inline(always)]
pub(crate) fn count_malloc(size: usize) -> bool {
    let c = mine();
    c.mallocs
        .store(c.mallocs.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    let left = c.until_sample.load(Ordering::Relaxed) - size as i64;
    c.until_sample.store(left, Ordering::Relaxed);
    left < 0
}

/// Draws the calling thread's next sampling distance (`profile.rs`):
/// `f(random 64 bits)` bytes from now.
pub(crate) fn next_sample(f: impl FnOnce(u64) -> i64) {
    let c = mine();
    // xorshift64*: the state is the thread's alone.
    let mut x = c.rng.load(Ordering::Relaxed);
    if x == 0 {
        x = (c as *const Counter as u64) ^ 0x9E37_79B9_7F4A_7C15;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    c.rng.store(x, Ordering::Relaxed);
    c.until_sample
        .store(f(x.wrapping_mul(0x2545_F491_4F6C_DD1D)), Ordering::Relaxed);
}

/// Counts one explicit free of the calling thread.
#[inline]
pub(crate) fn count_free() {
    bump(|c| &c.frees);
}

#[cold]
#[inline(never)]
fn adopt_counter() -> *const Counter {
    let reused = blocks().find(|c| {
        c.in_use
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    });
    let c: *const Counter = match reused {
        Some(c) => c,
        None => {
            // SAFETY: zeroed memory is a valid Counter (zero counts, not in
            // use, no next); checked for null below.
            let c = unsafe { libc::calloc(1, std::mem::size_of::<Counter>()) }.cast::<Counter>();
            if c.is_null() {
                crate::abort("defergc: out of memory for an allocation counter");
            }
            // SAFETY: a fresh block only this thread sees yet.
            unsafe { (*c).in_use.store(true, Ordering::Relaxed) };
            let mut head = BLOCKS.load(Ordering::Acquire);
            loop {
                // SAFETY: as above.
                unsafe { (*c).next = head };
                match BLOCKS.compare_exchange(head, c, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(h) => head = h,
                }
            }
            c
        }
    };
    crate::fresh::with(&MINE, |m| m.set(c));
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        super::thread::on_thread_exit(super::thread::ExitPhase::RuntimeState, release_counter)
    });
    c
}

/// Thread exit: the block is free for the next thread.
fn release_counter() {
    let c = crate::fresh::with(&MINE, |m| m.replace(std::ptr::null()));
    // SAFETY: a block of ours (never freed).
    if let Some(c) = unsafe { c.as_ref() } {
        c.in_use.store(false, Ordering::Release);
    }
}

/// Allocations and explicit frees of every thread so far.
fn counts() -> (u64, u64) {
    blocks().fold((0, 0), |(m, f), c| {
        (
            m + c.mallocs.load(Ordering::Relaxed),
            f + c.frees.load(Ordering::Relaxed),
        )
    })
}

// ---- settings ------------------------------------------------------------

/// Go's GC percent; -1 is off; `UNSET` until the program or `GOGC` sets it.
static GC_PERCENT: AtomicI32 = AtomicI32::new(UNSET);
const UNSET: i32 = i32::MIN;
/// The soft limit in bytes (`u64::MAX`: none).
static SOFT_LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);
/// The hard limit in bytes (0: none).
static HARD_LIMIT: AtomicU64 = AtomicU64::new(0);
static GCTRACE: AtomicBool = AtomicBool::new(false);

/// Go's `debug.SetGCPercent(p)`: sets the GC percent (negative: off) and
/// returns the previous one (100 if none was set). See the module docs for
/// how it maps onto bdwgc.
pub fn set_gc_percent(percent: i32) -> i32 {
    super::init();
    let _held = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
    let previous = GC_PERCENT.swap(percent.max(-1), Ordering::AcqRel);
    apply(None);
    previous_or_default(previous)
}

/// Serialises the setters (bdwgc's disable count must stay balanced).
static SETTINGS: Mutex<()> = Mutex::new(());

/// Puts the settings in force: collection on or off, and the free-space
/// divisor for the percent, raised near the soft limit. `usage` is the
/// heap in use and the heap's size when the caller knows them (at the end
/// of a collection, under the collector's lock: then only the divisor
/// changes); otherwise they are read.
fn apply(usage: Option<(u64, u64)>) {
    let raw = GC_PERCENT.load(Ordering::Acquire);
    let limit = SOFT_LIMIT.load(Ordering::Acquire);
    if raw == UNSET && limit == u64::MAX {
        return;
    }
    let p = previous_or_default(raw);
    if usage.is_none() {
        // Off means off only without a limit; with one, collections come
        // near it.
        super::backend::set_collection_enabled(p >= 0 || limit != u64::MAX);
    }
    let base = match p {
        p if p < 0 => 1,
        0 => 64,
        p => ((100 + p as u64 / 2) / p as u64).clamp(1, 64),
    };
    let divisor = if limit == u64::MAX {
        base
    } else {
        let (in_use, heap) = usage.unwrap_or_else(super::backend::heap_usage);
        let headroom = limit.saturating_sub(in_use).max(1 << 20);
        let growth = if p < 0 {
            u64::MAX
        } else {
            in_use * p as u64 / 100
        };
        if growth > headroom {
            // The next collection comes after about `headroom` bytes.
            base.max(heap.div_ceil(headroom)).min(64)
        } else {
            base
        }
    };
    super::backend::set_free_space_divisor(divisor);
}

fn previous_or_default(p: i32) -> i32 {
    if p == UNSET {
        100
    } else {
        p
    }
}

/// The GC percent in force (100 by default).
pub fn gc_percent() -> i32 {
    super::init();
    previous_or_default(GC_PERCENT.load(Ordering::Acquire))
}

/// Go's `debug.SetMemoryLimit(bytes)`: a soft limit on the heap (see the
/// module docs); `u64::MAX` (Go's `math.MaxInt64`, or `GOMEMLIMIT=off`)
/// means none. Returns the previous one.
pub fn set_memory_limit(bytes: u64) -> u64 {
    super::init();
    let _held = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
    let previous = SOFT_LIMIT.swap(bytes, Ordering::AcqRel);
    apply(None);
    previous
}

/// The soft memory limit in force (`u64::MAX`: none).
pub fn memory_limit() -> u64 {
    super::init();
    SOFT_LIMIT.load(Ordering::Acquire)
}

/// A hard limit on the heap (bdwgc's maximum heap size), 0 for none:
/// allocations that would pass it fail. Returns the previous one.
pub fn set_max_heap(bytes: u64) -> u64 {
    super::init();
    let previous = HARD_LIMIT.swap(bytes, Ordering::AcqRel);
    super::backend::set_max_heap(bytes);
    previous
}

/// Go's `debug.FreeOSMemory()`: a full collection, then as much of the
/// heap as is free goes back to the operating system.
pub fn free_os_memory() {
    super::init();
    super::thread::ensure_registered();
    super::backend::collect_and_unmap();
}

/// What the environment asks of the collectors: `GOGC` (a percent, -1
/// for `off`), `GOMEMLIMIT` (bytes, `u64::MAX` for `off`), and whether
/// `GODEBUG` has `gctrace=1`.
pub(crate) struct Environment {
    pub(crate) gc_percent: Option<i32>,
    pub(crate) memory_limit: Option<u64>,
    pub(crate) gctrace: bool,
}

/// Parses `GOGC`, `GOMEMLIMIT` and `GODEBUG`. A malformed value is an
/// error naming the variable, as Go's is fatal.
pub(crate) fn environment() -> Result<Environment, String> {
    let gc_percent = match std::env::var("GOGC") {
        Ok(v) if v == "off" => Some(-1),
        Ok(v) => Some(
            v.parse::<i32>()
                .map_err(|_| format!("defergc: GOGC={v}: not a percent or \"off\""))?,
        ),
        Err(_) => None,
    };
    let memory_limit = match std::env::var("GOMEMLIMIT") {
        Ok(v) if v == "off" => Some(u64::MAX),
        Ok(v) => Some(parse_byte_size(&v).ok_or_else(|| {
            format!("defergc: GOMEMLIMIT={v}: not a byte count (e.g. 512MiB) or \"off\"")
        })?),
        Err(_) => None,
    };
    let gctrace = crate::godebug::is_one("gctrace");
    Ok(Environment {
        gc_percent,
        memory_limit,
        gctrace,
    })
}

/// Applies the environment (at start).
pub(crate) fn read_environment() -> Result<(), String> {
    let env = environment()?;
    if let Some(p) = env.gc_percent {
        set_gc_percent(p);
    }
    if let Some(bytes) = env.memory_limit {
        set_memory_limit(bytes);
    }
    if env.gctrace {
        GCTRACE.store(true, Ordering::Release);
    }
    Ok(())
}

/// Go's `GOMEMLIMIT` syntax: a number with an optional unit (`B`, `KiB`,
/// `MiB`, `GiB`, `TiB`).
pub fn parse_byte_size(text: &str) -> Option<u64> {
    let units: [(&str, u64); 5] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
        ("B", 1),
    ];
    let (digits, scale) = units
        .iter()
        .find_map(|(u, s)| text.strip_suffix(u).map(|d| (d, *s)))
        .unwrap_or((text, 1));
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

// ---- collections ---------------------------------------------------------

/// Pauses of the last 256 collections and their end times (Go's ring).
struct Ring {
    pause_ns: [AtomicU64; 256],
    pause_end: [AtomicU64; 256],
    num_gc: AtomicU64,
    pause_total_ns: AtomicU64,
    last_gc: AtomicU64,
    #[cfg_attr(not(defergc_boehm), allow(dead_code))]
    heap_before: AtomicU64,
}

static RING: Ring = Ring {
    pause_ns: [const { AtomicU64::new(0) }; 256],
    pause_end: [const { AtomicU64::new(0) }; 256],
    num_gc: AtomicU64::new(0),
    pause_total_ns: AtomicU64::new(0),
    last_gc: AtomicU64::new(0),
    heap_before: AtomicU64::new(0),
};

fn start_instant() -> Instant {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *START.get_or_init(Instant::now)
}

// (Collection events come from bdwgc only.)
#[cfg_attr(not(defergc_boehm), allow(dead_code))]
fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A collection starts (the backend, with its lock held): `in_use` is the
/// heap in use before it.
#[cfg_attr(not(defergc_boehm), allow(dead_code))]
pub(crate) fn collection_started(in_use: u64) {
    let _ = start_instant();
    RING.heap_before.store(in_use, Ordering::Relaxed);
}

/// A collection ended (the backend, with its lock held): its pause, the
/// heap in use after it and the heap's size.
#[cfg_attr(not(defergc_boehm), allow(dead_code))]
pub(crate) fn collection_ended(pause_ns: u64, in_use: u64, heap: u64, markers: u64) {
    let n = RING.num_gc.fetch_add(1, Ordering::Relaxed);
    let now = unix_ns();
    RING.pause_ns[(n % 256) as usize].store(pause_ns, Ordering::Relaxed);
    RING.pause_end[(n % 256) as usize].store(now, Ordering::Relaxed);
    RING.pause_total_ns.fetch_add(pause_ns, Ordering::Relaxed);
    RING.last_gc.store(now, Ordering::Relaxed);
    let p = gc_percent();
    apply(Some((in_use, heap)));
    if GCTRACE.load(Ordering::Relaxed) {
        // Go's goal (1.18 on): what is live plus GOGC percent of what a
        // collection scans, the live heap, stacks and globals.
        let (stacks, globals) = super::scan::scanned_sizes();
        let (stacks, globals) = (stacks as u64, globals as u64);
        let goal = if p < 0 {
            in_use
        } else {
            in_use + (in_use + stacks + globals) * p as u64 / 100
        };
        let elapsed = start_instant().elapsed().as_secs_f64();
        let share = if elapsed > 0.0 {
            RING.pause_total_ns.load(Ordering::Relaxed) as f64 / 1e9 / elapsed * 100.0
        } else {
            0.0
        };
        let mb = |b: u64| b >> 20;
        let pause_ms = pause_ns as f64 / 1e6;
        // Go's shape (runtime/mgc.go): the stop-the-world phases are one
        // pause here, so the clock and cpu triples carry it in the middle.
        let line = format!(
            "gc {} @{elapsed:.3}s {share:.0}%: 0+{pause_ms:.3}+0 ms clock, 0+{pause_ms:.3}/0/0+0 ms cpu, \
             {}->{}->{} MB, {} MB goal, {} MB stacks, {} MB globals, {} P\n",
            n + 1,
            mb(RING.heap_before.load(Ordering::Relaxed)),
            mb(heap),
            mb(in_use),
            mb(goal),
            mb(stacks),
            mb(globals),
            markers
        );
        // SAFETY: writes initialised bytes to fd 2 (no lock: the collector
        // holds its own, and stderr's would be a lock order).
        unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    }
}

// ---- MemStats --------------------------------------------------------------

/// Go's `runtime.MemStats`, the fields that make sense here (see the module
/// docs), laid out for C as `defergc_memstats`. `size` is the struct's own
/// size, set by [`read_memstats`].
#[repr(C)]
#[derive(Clone, Debug)]
pub struct MemStats {
    /// `sizeof(defergc_memstats)`.
    pub size: u64,
    /// Bytes of allocated heap objects (HeapAlloc).
    pub alloc: u64,
    /// Bytes allocated over the program's life.
    pub total_alloc: u64,
    /// Bytes obtained from the operating system.
    pub sys: u64,
    /// Heap objects allocated (exact).
    pub mallocs: u64,
    /// Heap objects freed (explicit frees exact, collected ones estimated).
    pub frees: u64,
    /// Bytes of allocated heap objects.
    pub heap_alloc: u64,
    /// Bytes of heap memory obtained from the operating system.
    pub heap_sys: u64,
    /// Bytes of free heap memory.
    pub heap_idle: u64,
    /// Bytes of heap memory given back to the operating system.
    pub heap_released: u64,
    /// Allocated heap objects (`mallocs - frees`).
    pub heap_objects: u64,
    /// The heap size the next collection aims at.
    pub next_gc: u64,
    /// When the last collection ended, in nanoseconds since 1970.
    pub last_gc: u64,
    /// Stop-the-world time of every collection, in nanoseconds.
    pub pause_total_ns: u64,
    /// Pauses of the last 256 collections; the latest at
    /// `(num_gc + 255) % 256`.
    pub pause_ns: [u64; 256],
    /// When those pauses ended, in nanoseconds since 1970.
    pub pause_end: [u64; 256],
    /// Completed collections.
    pub num_gc: u64,
    /// The share of the program's time spent stopped for collections.
    pub gc_cpu_fraction: f64,
}

/// Go's `runtime.ReadMemStats`: takes the collector's lock briefly for
/// the byte figures, never stops the world.
pub fn read_memstats() -> MemStats {
    super::init();
    let (mallocs, explicit_frees) = counts();
    let h = super::backend::heap_figures();
    let heap_alloc = h.heap.saturating_sub(h.free);
    let mean = h.total_alloc.checked_div(mallocs).map_or(16, |m| m.max(16));
    let frees = (explicit_frees + h.reclaimed / mean).min(mallocs);
    let num_gc = RING.num_gc.load(Ordering::Relaxed);
    let p = gc_percent();
    let next_gc = if p < 0 {
        0
    } else {
        heap_alloc + heap_alloc * p as u64 / 100
    };
    let elapsed = start_instant().elapsed().as_nanos() as f64;
    let pause_total_ns = RING.pause_total_ns.load(Ordering::Relaxed);
    MemStats {
        size: std::mem::size_of::<MemStats>() as u64,
        alloc: heap_alloc,
        total_alloc: h.total_alloc,
        sys: h.sys,
        mallocs,
        frees,
        heap_alloc,
        heap_sys: h.heap,
        heap_idle: h.free,
        heap_released: h.released,
        heap_objects: mallocs - frees,
        next_gc: next_gc.min(memory_limit()),
        last_gc: RING.last_gc.load(Ordering::Relaxed),
        pause_total_ns,
        pause_ns: std::array::from_fn(|i| RING.pause_ns[i].load(Ordering::Relaxed)),
        pause_end: std::array::from_fn(|i| RING.pause_end[i].load(Ordering::Relaxed)),
        num_gc,
        gc_cpu_fraction: if elapsed > 0.0 {
            pause_total_ns as f64 / elapsed
        } else {
            0.0
        },
    }
}

/// Go's `testing.AllocsPerRun`: the mean number of heap allocations of
/// `f` over `runs` runs (after one warm-up run), counted on this thread.
pub fn allocs_per_run(runs: u32, mut f: impl FnMut()) -> f64 {
    f();
    let mine = || {
        // SAFETY: a block of ours, if any (never freed).
        let c = unsafe { crate::fresh::fresh_get!(MINE: *const Counter).as_ref() };
        c.map_or(0, |c| c.mallocs.load(Ordering::Relaxed))
    };
    let before = mine();
    for _ in 0..runs {
        f();
    }
    (mine() - before) as f64 / f64::from(runs.max(1))
}

/// Byte figures of the heap, from the backend.
pub(crate) struct HeapFigures {
    pub(crate) heap: u64,
    pub(crate) free: u64,
    pub(crate) released: u64,
    pub(crate) sys: u64,
    pub(crate) total_alloc: u64,
    pub(crate) reclaimed: u64,
}
