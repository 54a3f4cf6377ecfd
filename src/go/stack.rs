//! Goroutine stacks: carved from large regions, pooled, guarded where the
//! kernel allows, checked at every switch, cleared for reuse.
//!
//! A million live goroutines must fit a stock kernel: `vm.max_map_count`
//! is 65,530 by default, and a stack of its own mapping plus a guard
//! mapping takes two. So stacks are *slots* carved from regions of
//! [`REGION_SLOTS`] each (one mapping per region, reserved with
//! `MAP_NORESERVE`: only touched pages cost memory). A slot is
//!
//! ```text
//!   slot start             lo                               hi       end
//!   | guard zone (64 KiB) | usable stack, grows down  <---  | header |
//! ```
//!
//! with the goroutine's own struct (its header, see `g.rs`) at the top, so
//! a parked goroutine whose frames fit costs one touched page.
//!
//! The guard zone is [`GUARD`] bytes, not one page: code compiled without
//! stack probes (C without `-fstack-clash-protection`, Debian gcc's
//! default) moves its stack pointer by a whole frame and may touch the
//! frame's lowest bytes first, so a frame larger than the guard jumps it
//! and writes into the slot below (the neighbouring goroutine's header and
//! locals). Any access less than `GUARD` bytes below the usable stack
//! faults: every frame smaller than that is caught. Address space is
//! cheap (a million slots of 256 KiB take 320 GiB of the 128 TiB), and
//! guard pages are never touched, so they cost no memory. Frames of
//! `GUARD` bytes or more need the compiler's help: stack probes every page
//! (`-fstack-clash-protection`), or a check against the stack's low end in
//! the prologue, as Go's compiler emits.
//!
//! Guards: `MADV_GUARD_INSTALL` (Linux 6.13+) marks the guard zone without
//! splitting the mapping, so every slot gets one. On older kernels a guard
//! is a `PROT_NONE` range that splits the region's mapping in three (its
//! size does not matter: one mapping either way); [`GUARD_BUDGET`] of them
//! are made, and later slots go unguarded. Every slot has a canary at its
//! low end, checked (with the goroutine's stack pointer) each time its
//! goroutine switches out, so an overflow is caught at the latest at the
//! next switch, and with a guard at once (the fault handler names the
//! goroutine): never silent corruption that runs on. An unguarded slot
//! keeps its guard zone as unused memory of its own: a frame that jumps
//! its canary lands there, not in the neighbour's slot.
//!
//! Reuse: a slot freed by a finished goroutine is zeroed from the lowest
//! stack pointer its goroutine was seen at to its top, and below that as
//! far as it finds it written, so the next goroutine's conservative scan
//! cannot find the old one's pointers. Worker threads keep a few free
//! slots of their own ([`CACHE`] of them: no lock on the common path); the
//! rest are in the pool, which hands out the slots freed last first, then
//! the others in address order ([`FreeSlots`]). A region whose slots have
//! all been free in the pool, without a break, for [`IDLE_RELEASE`] is
//! given back to the kernel (`MADV_DONTNEED`), once more than
//! [`KEEP_FREE`] slots are free, one region at a time and at most one
//! every [`RELEASE_EVERY`]: bursts reuse warm memory, and a program that
//! had a million goroutines once does not keep their pages (it gives
//! them back over a minute or two, as Go's scavenger would).
//!
//! Growth: a slot never used costs its `go` statement a guard to install
//! and a page fault (its top page: zeroed by the kernel, charged, mapped),
//! most of what starting a goroutine costs in a program that starts a
//! million. While the pool grows (it has no free slot), workers with
//! nothing to run do that work ahead ([`prepare`]: a slot for every
//! [`READY_SHARE`] the pool has handed out fresh, up to [`READY`],
//! [`READY_BATCH`] at a time), on the core the `go` statements leave idle;
//! the readied slots are handed out after the free ones.
//!
//! Where regions go: one after the other from [`ARENA`] (32 TiB), far
//! from where the kernel puts other mappings (top-down from near 128 TiB)
//! and the program's break, and so far from bdwgc's heap. bdwgc takes
//! every word it scans that lies between its lowest and highest heap
//! address (plus a slop for growth) for a possible pointer, and a value
//! there that is not an object's address is *blacklisted*: a hash table
//! of heap block addresses that it will not allocate in. Stacks mapped
//! next to or between heap sections put every goroutine's pointers to its
//! own stack and header in that range (the first region always was; after
//! a heap section too large for the gaps near the others, placed below
//! the regions mapped so far, all of them were): a few hundred thousand
//! goroutines fill the table until every new heap block looks blacklisted
//! and allocation gives up ("Too many retries in GC_allocobj", issue 34;
//! `tests/c/stacks.c many`). Where the hint cannot be honoured (another
//! mapping there, a smaller address space) the kernel places the region
//! anywhere, as before.
//!
//! Each region has a bitmap of its live slots ([`set_live`]), which the
//! collector walks with the world stopped ([`for_each_live`]): the region
//! table is append-only and read without a lock.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Page size (x86-64 and aarch64 Linux with 4 KiB pages).
pub(crate) const PAGE: usize = 4096;
/// Bytes of guard zone below every stack: frames smaller than this cannot
/// jump it (see the module docs).
pub(crate) const GUARD: usize = 64 << 10;
/// Slots per region: one mapping per this many goroutines.
const REGION_SLOTS: usize = 1024;
/// Guard zones made with `mprotect` when the kernel lacks guard markers:
/// each costs two mappings of `vm.max_map_count`, whatever its size.
const GUARD_BUDGET: usize = 16_384;
/// Free slots kept ready before empty regions go back to the kernel.
const KEEP_FREE: usize = 4096;
/// How long a region stays wholly free before its memory is given back.
const IDLE_RELEASE: std::time::Duration = std::time::Duration::from_secs(1);
/// Regions are given back one at a time, at most one this often. A
/// region's release takes a fraction of a millisecond of the releasing
/// worker's time, with the pool locked: all of a million goroutines'
/// regions at once stopped every `go` statement for a third of a second
/// (`examples/release_stall.rs`). Paced, it stays under 1% of a CPU, as
/// Go's background scavenger paces itself, and the memory of a burst goes
/// back over a minute or two.
const RELEASE_EVERY: std::time::Duration = std::time::Duration::from_millis(100);
/// Free slots a worker thread keeps; it moves half to the pool when full.
const CACHE: usize = 64;
/// Below the lowest stack pointer seen, frames of calls that returned
/// between two observations may remain: the slot is read downwards from
/// there and cleared as far as it is dirty, until this many bytes in a
/// row are zero (what was never written, or was cleared for an earlier
/// occupant, is zero).
const CLEAN_RUN: usize = 256;
/// The canary at the low end of every slot's usable stack.
const CANARY: u64 = 0xDEF6_C5AC_0FF1_CE00;
/// Words of canary.
const CANARY_WORDS: usize = 4;
/// Stack space a switch needs below the recorded stack pointer (the
/// switch's own frames, a signal frame of the collector's stop signal).
pub(crate) const RED_ZONE: usize = 8192;

/// Where the first region is asked for (see the module docs): 32 TiB, in
/// the user address space of x86-64 and aarch64 with 48-bit addresses,
/// far below the mmap area and far above the program and its break.
#[cfg(target_pointer_width = "64")]
const ARENA: usize = 0x2000_0000_0000;
#[cfg(not(target_pointer_width = "64"))]
const ARENA: usize = 0;

/// `MADV_GUARD_INSTALL` (Linux 6.13).
const MADV_GUARD_INSTALL: libc::c_int = 102;

/// Stack geometry, fixed when the scheduler starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    /// Bytes per slot: guard zone, usable stack and header.
    pub(crate) slot: usize,
    /// Bytes at the top of the slot for the goroutine's header.
    pub(crate) header: usize,
}

impl Geometry {
    /// A slot with at least `usable` bytes of stack below a `header`.
    pub(crate) fn new(usable: usize, header: usize) -> Geometry {
        let header = header.next_multiple_of(64);
        let slot = (GUARD + usable + header).next_multiple_of(PAGE);
        Geometry { slot, header }
    }
}

/// One slot: where its stack and header are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Slot {
    /// The slot's first byte (its guard zone).
    pub(crate) start: usize,
    /// The index of its region in the pool.
    region: u32,
    /// Whether its first [`GUARD`] bytes are a guard zone. Unguarded slots
    /// carry a canary instead (a guarded slot's guard stays untouched).
    guarded: bool,
}

impl Slot {
    /// Lowest usable stack address (above the guard zone).
    pub(crate) fn lo(self, _g: &Geometry) -> usize {
        self.start + GUARD
    }

    /// The stack's base (highest address), where the header begins.
    pub(crate) fn hi(self, g: &Geometry) -> usize {
        self.start + g.slot - g.header
    }

    /// The end of the slot (the header's end).
    pub(crate) fn end(self, g: &Geometry) -> usize {
        self.start + g.slot
    }

    /// Whether the canary (of an unguarded slot) is intact and `sp` leaves
    /// room above the low end.
    #[inline]
    pub(crate) fn intact(self, g: &Geometry, sp: usize) -> bool {
        let lo = self.lo(g);
        if self.guarded {
            return sp >= lo;
        }
        let canary = lo as *const u64;
        // SAFETY: the canary words are the slot's lowest usable bytes,
        // mapped and owned by this slot.
        let ok = (0..CANARY_WORDS).all(|i| unsafe { canary.add(i).read_volatile() } == CANARY);
        ok && sp >= lo + CANARY_WORDS * 8
    }

    /// Asks for the lines of the header and the stack's first line below
    /// it (a hint: the slot need not be in use).
    fn prefetch_header(self, g: &Geometry) {
        let mut line = self.hi(g) - 64;
        while line < self.end(g) {
            crate::cache::prefetch(line as *const u8);
            line += 64;
        }
    }

    fn write_canary(self, g: &Geometry) {
        if self.guarded {
            return;
        }
        let canary = self.lo(g) as *mut u64;
        for i in 0..CANARY_WORDS {
            // SAFETY: as in intact; the slot is ours (being handed out).
            unsafe { canary.add(i).write_volatile(CANARY) };
        }
    }
}

/// Most regions: 16,777,216 goroutine stacks.
const MAX_REGIONS: usize = 16_384;

/// What the collector reads of a region, without a lock.
struct Region {
    start: usize,
    /// Bit `i` set while slot `i` holds a goroutine.
    live: [AtomicU64; REGION_SLOTS / 64],
}

/// The regions, in the order they were mapped; append-only.
static REGIONS: [AtomicPtr<Region>; MAX_REGIONS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_REGIONS];
static REGION_COUNT: AtomicUsize = AtomicUsize::new(0);
/// The geometry of every slot, fixed when the scheduler starts.
static GEOMETRY: OnceLock<Geometry> = OnceLock::new();

/// The pool's free slots. The [`HOT_SLOTS`] freed last are reused first,
/// newest first: a program that keeps a few hundred goroutines coming and
/// going reuses slots still in the cache. The rest are handed out lowest
/// address first (region by region in the order they were mapped, which
/// is address order where the arena's hint is honoured): after a burst,
/// goroutines started together get neighbouring slots (sharing
/// page-table pages and walks), however scattered the order the burst's
/// goroutines ended in.
struct FreeSlots {
    hot: std::collections::VecDeque<Slot>,
    cold: ColdSlots,
}

/// Free slots reused newest first (see [`FreeSlots`]).
const HOT_SLOTS: usize = 8192;

impl FreeSlots {
    const fn new() -> FreeSlots {
        FreeSlots {
            hot: std::collections::VecDeque::new(),
            cold: ColdSlots::new(),
        }
    }

    /// Region `r` (the next index) starts at `start`; its slots are
    /// `stride` bytes apart.
    fn add_region(&mut self, start: usize, stride: usize) {
        self.cold.add_region(start, stride);
    }

    fn push(&mut self, slot: Slot) {
        self.hot.push_back(slot);
        if self.hot.len() > HOT_SLOTS {
            let oldest = self.hot.pop_front().expect("more than HOT_SLOTS");
            self.cold.insert(oldest);
        }
    }

    fn pop(&mut self) -> Option<Slot> {
        self.hot.pop_back().or_else(|| self.cold.pop_lowest())
    }

    fn len(&self) -> usize {
        self.hot.len() + self.cold.len
    }
}

/// Words of a bitmap with a bit per slot of a region.
const REGION_WORDS: usize = REGION_SLOTS / 64;

/// The free slots not reused newest first, as a bitmap per region and one
/// over the regions: the lowest is found by two scans for a set bit,
/// touching a few words whatever the number of free slots (a binary heap
/// of a million slots missed the cache at most of its twenty levels on
/// every pop and push).
struct ColdSlots {
    /// Per region (by index): where it starts, its free slots, and which
    /// of those are guarded.
    regions: Vec<ColdRegion>,
    /// Bit `r` set while region `r` has a slot here.
    nonempty: Vec<u64>,
    /// No word of `nonempty` below this one has a bit set.
    first: usize,
    stride: usize,
    len: usize,
}

struct ColdRegion {
    start: usize,
    free: [u64; REGION_WORDS],
    guarded: [u64; REGION_WORDS],
}

impl ColdSlots {
    const fn new() -> ColdSlots {
        ColdSlots {
            regions: Vec::new(),
            nonempty: Vec::new(),
            first: 0,
            stride: 0,
            len: 0,
        }
    }

    fn add_region(&mut self, start: usize, stride: usize) {
        self.stride = stride;
        self.regions.push(ColdRegion {
            start,
            free: [0; REGION_WORDS],
            guarded: [0; REGION_WORDS],
        });
        if self.regions.len() > self.nonempty.len() * 64 {
            self.nonempty.push(0);
        }
    }

    fn insert(&mut self, slot: Slot) {
        let r = slot.region as usize;
        let region = &mut self.regions[r];
        let i = (slot.start - region.start) / self.stride;
        let bit = 1u64 << (i % 64);
        debug_assert!(region.free[i / 64] & bit == 0, "slot freed twice");
        region.free[i / 64] |= bit;
        if slot.guarded {
            region.guarded[i / 64] |= bit;
        } else {
            region.guarded[i / 64] &= !bit;
        }
        self.nonempty[r / 64] |= 1 << (r % 64);
        self.first = self.first.min(r / 64);
        self.len += 1;
    }

    /// The free slot of the lowest region, lowest in it.
    fn pop_lowest(&mut self) -> Option<Slot> {
        let w = (self.first..self.nonempty.len()).find(|&w| self.nonempty[w] != 0)?;
        self.first = w;
        let r = w * 64 + self.nonempty[w].trailing_zeros() as usize;
        let region = &mut self.regions[r];
        let word = region
            .free
            .iter()
            .position(|&b| b != 0)
            .expect("a region marked nonempty has a free slot");
        let bit = region.free[word].trailing_zeros() as usize;
        region.free[word] &= !(1 << bit);
        let i = word * 64 + bit;
        if region.free.iter().all(|&b| b == 0) {
            self.nonempty[w] &= !(1 << (r % 64));
        }
        self.len -= 1;
        Some(Slot {
            start: region.start + i * self.stride,
            region: r as u32,
            guarded: region.guarded[word] >> bit & 1 != 0,
        })
    }
}

struct Pool {
    /// Free slots of each region in the pool.
    region_free: Vec<usize>,
    /// How many times each region went from wholly free back into use:
    /// an idle entry of an earlier spell is stale.
    region_reuse: Vec<u32>,
    /// Regions that became wholly free in the pool, with their reuse count
    /// then, and when (oldest first). A region is released only if it
    /// stayed free since (same count), so memory a program keeps
    /// recycling (a burst of goroutines after another) stays warm.
    idle: std::collections::VecDeque<(usize, u32, std::time::Instant)>,
    /// Free slots (see [`FreeSlots`]).
    free: FreeSlots,
    /// Fresh slots readied by idle workers (see [`prepare`]), lowest
    /// first: handed out after the free slots, before the other fresh ones.
    ready: std::collections::VecDeque<Slot>,
    /// Fresh slots handed out so far (readied or not).
    grown: usize,
    /// Slots of the newest region not handed out yet.
    fresh: usize,
    fresh_next: usize,
    /// Where the next region is asked for (0: at [`ARENA`]).
    next_region: usize,
    /// When the last region was given back (see [`RELEASE_EVERY`]).
    released: Option<std::time::Instant>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    region_free: Vec::new(),
    region_reuse: Vec::new(),
    idle: std::collections::VecDeque::new(),
    free: FreeSlots::new(),
    ready: std::collections::VecDeque::new(),
    grown: 0,
    fresh: 0,
    fresh_next: 0,
    next_region: 0,
    released: None,
});
/// Whether the kernel has guard markers (`MADV_GUARD_INSTALL`); cleared
/// the first time it refuses one.
static GUARD_MARKERS: AtomicBool = AtomicBool::new(true);
/// Guard pages made with mprotect so far (see [`GUARD_BUDGET`]).
static MPROTECT_GUARDS: AtomicUsize = AtomicUsize::new(0);

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes the pool's lock until the fork is over (`gc::fork`): a fork
/// never catches the pool half-changed. Slots that other threads kept in
/// their caches are lost in the child.
pub(crate) fn lock_for_fork() {
    crate::gc::fork::held::keep(pool());
}

/// Fixes the geometry of every slot (once, when the scheduler starts).
pub(crate) fn configure(g: Geometry) {
    let _ = GEOMETRY.set(g);
}

/// The geometry in use (lock-free: the collector's hooks call this).
/// The stacks' geometry, if the scheduler has been configured (a lock-free
/// load: the profiling signal's handler asks).
pub(crate) fn geometry_if_set() -> Option<Geometry> {
    GEOMETRY.get().copied()
}

pub(crate) fn geometry() -> Geometry {
    *GEOMETRY
        .get()
        .unwrap_or_else(|| crate::abort("defergc: goroutine stacks used before configuration"))
}

thread_local! {
    /// A worker thread's own free slots.
    static LOCAL: std::cell::RefCell<Vec<Slot>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A slot for a new goroutine: its canary written, everything above it
/// zero. Aborts with a `defergc:` message when no memory can be mapped.
/// `cached`: the caller is a worker thread, which keeps free slots of its
/// own.
pub(crate) fn take(cached: bool) -> Slot {
    let g = geometry();
    let slot = if cached {
        crate::fresh::with(&LOCAL, |l| {
            let mut l = l.borrow_mut();
            if l.is_empty() {
                let mut p = pool();
                l.extend((0..CACHE / 2).map(|_| take_from_pool(&mut p, &g)));
                // Popped in the order the pool handed them out.
                l.reverse();
            }
            let slot = l.pop().expect("refilled");
            // The next goroutine started here gets the slot now on top:
            // its header's lines, long out of the cache (and its page out
            // of the TLB), are asked for while this one starts and runs.
            if let Some(next) = l.last() {
                next.prefetch_header(&g);
            }
            slot
        })
    } else {
        take_from_pool(&mut pool(), &g)
    };
    slot.write_canary(&g);
    slot
}

fn take_from_pool(p: &mut Pool, g: &Geometry) -> Slot {
    if let Some(slot) = p.free.pop() {
        let r = slot.region as usize;
        if p.region_free[r] == REGION_SLOTS {
            p.region_reuse[r] = p.region_reuse[r].wrapping_add(1);
        }
        p.region_free[r] -= 1;
        return slot;
    }
    // Growing: idle workers keep slots ready ahead of this.
    p.grown += 1;
    let ready = p.ready.pop_front();
    if p.ready.len() * 2 < p.ready_target() && !WANT_READY.load(Ordering::Relaxed) {
        WANT_READY.store(true, Ordering::Relaxed);
    }
    ready.unwrap_or_else(|| {
        let start = fresh_slot(p, g);
        Slot {
            start,
            region: (p.region_free.len() - 1) as u32,
            guarded: guard(start),
        }
    })
}

/// The address of the next fresh slot, mapping a region if none is left.
fn fresh_slot(p: &mut Pool, g: &Geometry) -> usize {
    if p.fresh == 0 {
        new_region(p, g);
    }
    let start = p.fresh_next;
    p.fresh_next += g.slot;
    p.fresh -= 1;
    start
}

/// Most fresh slots kept ready ahead of the `go` statements that take
/// them (their top pages, 4 KiB each, are memory the program holds early).
const READY: usize = 64;
/// At most one slot ready for every this many the pool has handed out
/// fresh: a server of a hundred connections holds three pages ahead, a
/// program starting a million holds [`READY`].
const READY_SHARE: usize = 32;
/// Slots readied at a time: a worker readying them looks for goroutines
/// again after each batch (a few tens of microseconds).
const READY_BATCH: usize = 16;
/// Set when a fresh slot is taken with fewer than half of the target
/// ready (see [`Pool::ready_target`]); cleared when a worker finds enough
/// ready or free.
static WANT_READY: AtomicBool = AtomicBool::new(false);
/// Slots readied so far (the tests look).
static READIED: AtomicUsize = AtomicUsize::new(0);

/// Readies fresh slots for the `go` statements to come while the pool
/// grows: installs their guards and faults in their top page (header and
/// stack top), work a `go` statement would otherwise do itself, here on a
/// worker that found nothing to run. Returns whether it readied any; one
/// relaxed load when the pool is not growing.
pub(crate) fn prepare() -> bool {
    if !WANT_READY.load(Ordering::Relaxed) {
        return false;
    }
    let g = geometry();
    let mut batch = [0usize; READY_BATCH];
    let (n, region) = {
        let mut p = pool();
        let target = p.ready_target();
        if p.free.len() > 0 || p.ready.len() >= target {
            WANT_READY.store(false, Ordering::Relaxed);
            return false;
        }
        // Within the newest region: a batch never straddles two.
        if p.fresh == 0 {
            new_region(&mut p, &g);
        }
        let n = READY_BATCH.min(target - p.ready.len()).min(p.fresh);
        for start in &mut batch[..n] {
            *start = fresh_slot(&mut p, &g);
        }
        (n, (p.region_free.len() - 1) as u32)
    };
    let mut guarded = [false; READY_BATCH];
    for (i, &start) in batch[..n].iter().enumerate() {
        guarded[i] = guard(start);
        // SAFETY: the slot is fresh and ours until queued below; its last
        // word is header, zero (a fresh mapping), and stays zero.
        unsafe { ((start + g.slot - 8) as *mut u64).write_volatile(0) };
    }
    pool().ready.extend((0..n).map(|i| Slot {
        start: batch[i],
        region,
        guarded: guarded[i],
    }));
    READIED.fetch_add(n, Ordering::Relaxed);
    true
}

/// Gives a slot back. `low` is the lowest stack pointer its goroutine was
/// seen at: the slot is zeroed from there to its top, and below it as far
/// as it was written (see [`CLEAN_RUN`]), but for the byte at `keep`, if
/// given (a header's field that another thread may still set atomically:
/// see `G::init`). `cached` as for [`take`].
pub(crate) fn give_back(slot: Slot, low: usize, cached: bool, keep: Option<usize>) {
    let g = geometry();
    let lo = slot.lo(&g);
    // SAFETY: the slot's usable stack, from lo up, is ours.
    let from = unsafe { dirty_below(lo, low.max(lo)) };
    let end = slot.end(&g);
    match keep {
        Some(k) if (from..end).contains(&k) => {
            // SAFETY: [from, k) and (k, end) lie in the slot, which is ours
            // until it is free again; the byte at k is left alone.
            unsafe {
                std::ptr::write_bytes(from as *mut u8, 0, k - from);
                std::ptr::write_bytes((k + 1) as *mut u8, 0, end - k - 1);
            }
        }
        // SAFETY: [from, end) lies in the slot, which is ours until it is
        // free again.
        _ => unsafe { std::ptr::write_bytes(from as *mut u8, 0, end - from) },
    }
    if cached {
        crate::fresh::with(&LOCAL, |l| {
            let mut l = l.borrow_mut();
            l.push(slot);
            if l.len() >= CACHE {
                let spill: Vec<Slot> = l.drain(..CACHE / 2).collect();
                drop(l);
                to_pool(&spill, &g);
            }
        });
    } else {
        to_pool(&[slot], &g);
    }
}

/// A worker thread that ends (its locked goroutine exited) gives its own
/// free slots back to the pool; they would be lost with the thread.
pub(crate) fn release_local() {
    let slots: Vec<Slot> = crate::fresh::with(&LOCAL, |l| std::mem::take(&mut *l.borrow_mut()));
    if !slots.is_empty() {
        to_pool(&slots, &geometry());
    }
}

/// The lowest address of the dirty part of the slot that adjoins `low`:
/// read downwards a cache line at a time until [`CLEAN_RUN`] bytes in a
/// row are zero. Reading a clean stretch costs less than clearing it, and
/// frames deeper than any fixed margin are still found.
///
/// # Safety
/// The slot from `lo` to past `low` is mapped, readable memory nobody
/// else writes.
unsafe fn dirty_below(lo: usize, low: usize) -> usize {
    const LINE: usize = 64;
    // From the line that holds `low` (what a switch pushed just below the
    // recorded stack pointer is in it or under it).
    let mut at = low.next_multiple_of(LINE);
    let mut dirty = at;
    while at >= lo + LINE && dirty - at < CLEAN_RUN {
        at -= LINE;
        // SAFETY: [at, at + LINE) lies in the slot above `lo` (the line
        // holding `low` may reach past it, still inside the slot).
        let line = unsafe { std::ptr::read(at as *const [u64; LINE / 8]) };
        if line.iter().any(|&w| w != 0) {
            dirty = at;
        }
    }
    dirty.min(low)
}

fn to_pool(slots: &[Slot], g: &Geometry) {
    let mut p = pool();
    let now = std::time::Instant::now();
    for &slot in slots {
        p.put(slot, now);
    }
    while let Some(r) = p.next_release(now) {
        release_region(r, g);
    }
}

impl Pool {
    /// How many readied slots to keep (see [`READY_SHARE`]).
    fn ready_target(&self) -> usize {
        (self.grown / READY_SHARE).min(READY)
    }

    /// `slot` is free again (at `now`).
    fn put(&mut self, slot: Slot, now: std::time::Instant) {
        let r = slot.region as usize;
        self.region_free[r] += 1;
        self.free.push(slot);
        if self.region_free[r] == REGION_SLOTS {
            self.idle.push_back((r, self.region_reuse[r], now));
        }
    }

    /// A region to give back to the kernel: one wholly free for
    /// [`IDLE_RELEASE`] without a break, while more than [`KEEP_FREE`]
    /// slots are free. Stale entries (the region was used since) go.
    fn next_release(&mut self, now: std::time::Instant) -> Option<usize> {
        if self
            .released
            .is_some_and(|last| now.saturating_duration_since(last) < RELEASE_EVERY)
        {
            return None;
        }
        while self.free.len() > KEEP_FREE {
            let &(r, reuse, since) = self.idle.front()?;
            let stale = self.region_reuse[r] != reuse;
            if !stale && now.duration_since(since) < IDLE_RELEASE {
                return None;
            }
            self.idle.pop_front();
            if !stale && self.region_free[r] == REGION_SLOTS {
                self.released = Some(now);
                return Some(r);
            }
        }
        None
    }
}

/// The bytes of address space mapped for stacks.
pub(crate) fn mapped() -> usize {
    let p = pool();
    GEOMETRY
        .get()
        .map_or(0, |g| p.region_free.len() * REGION_SLOTS * g.slot)
}

fn new_region(p: &mut Pool, g: &Geometry) {
    let len = REGION_SLOTS * g.slot;
    let hint = if p.next_region == 0 {
        ARENA
    } else {
        p.next_region
    };
    // SAFETY: a fresh private anonymous mapping; the address is a hint
    // (no MAP_FIXED): no existing memory is replaced.
    let at = unsafe {
        libc::mmap(
            hint as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if at == libc::MAP_FAILED {
        crate::abort(&format!(
            "defergc: cannot map {} MiB for goroutine stacks: {}",
            len >> 20,
            std::io::Error::last_os_error()
        ));
    }
    // The next region right above this one (where the hint was honoured,
    // the arena grows upwards; where not, wherever this one went).
    p.next_region = at as usize + len;
    let index = p.region_free.len();
    if index >= MAX_REGIONS {
        crate::abort(&format!(
            "defergc: too many goroutines: at most {} stacks",
            MAX_REGIONS * REGION_SLOTS
        ));
    }
    let region = Box::into_raw(Box::new(Region {
        start: at as usize,
        live: [const { AtomicU64::new(0) }; REGION_SLOTS / 64],
    }));
    REGIONS[index].store(region, Ordering::Release);
    REGION_COUNT.store(index + 1, Ordering::Release);
    p.region_free.push(0);
    p.region_reuse.push(0);
    p.free.add_region(at as usize, g.slot);
    p.fresh = REGION_SLOTS;
    p.fresh_next = at as usize;
}

/// Makes the first [`GUARD`] bytes of the slot at `start` a guard zone, if
/// the kernel or the budget allows; returns whether it did.
fn guard(start: usize) -> bool {
    let page = start as *mut libc::c_void;
    if GUARD_MARKERS.load(Ordering::Relaxed) {
        // SAFETY: the zone belongs to this (new) slot.
        if unsafe { libc::madvise(page, GUARD, MADV_GUARD_INSTALL) } == 0 {
            return true;
        }
        GUARD_MARKERS.store(false, Ordering::Relaxed);
    }
    if MPROTECT_GUARDS.fetch_add(1, Ordering::Relaxed) < GUARD_BUDGET {
        // SAFETY: as above.
        return unsafe { libc::mprotect(page, GUARD, libc::PROT_NONE) } == 0;
    }
    false
}

/// Gives region `r`'s memory back to the kernel (its slots stay free and
/// usable; guard markers survive `MADV_DONTNEED`).
fn release_region(r: usize, g: &Geometry) {
    let start = region(r).start;
    // SAFETY: every slot of the region is free: nothing lives there. Pages
    // of mprotect guards are skipped by the kernel (no access needed).
    unsafe {
        libc::madvise(
            start as *mut libc::c_void,
            REGION_SLOTS * g.slot,
            libc::MADV_DONTNEED,
        )
    };
}

/// Region `r` (mapped, so published).
fn region(r: usize) -> &'static Region {
    // SAFETY: regions are published before any slot of theirs is handed
    // out, and never freed.
    unsafe { &*REGIONS[r].load(Ordering::Acquire) }
}

/// Marks `slot` as holding a live goroutine (or not): the collector scans
/// the stacks of live slots.
pub(crate) fn set_live(slot: Slot, live: bool) {
    let g = geometry().slot;
    let r = region(slot.region as usize);
    let i = (slot.start - r.start) / g;
    let bit = 1u64 << (i % 64);
    if live {
        r.live[i / 64].fetch_or(bit, Ordering::Release);
    } else {
        r.live[i / 64].fetch_and(!bit, Ordering::Release);
    }
}

/// Calls `f` with every live slot. With the world stopped (the collector)
/// the set is exact; otherwise a snapshot.
pub(crate) fn for_each_live(mut f: impl FnMut(Slot)) {
    let Some(g) = GEOMETRY.get().map(|g| g.slot) else {
        return;
    };
    for index in 0..REGION_COUNT.load(Ordering::Acquire) {
        let r = region(index);
        for (w, word) in r.live.iter().enumerate() {
            let mut bits = word.load(Ordering::Acquire);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                f(Slot {
                    start: r.start + i * g,
                    region: index as u32,
                    guarded: false,
                });
            }
        }
    }
}

/// Up to 64 slots of one region (a word of its live bitmap): the unit the
/// collector's marker threads share the goroutine stacks in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    region: u32,
    word: u32,
}

impl Chunk {
    /// The chunk as one word (for a mark-stack entry).
    pub(crate) fn to_bits(self) -> usize {
        (self.region as usize) << 8 | self.word as usize
    }

    /// The chunk `to_bits` gave `bits` for, if it names one.
    pub(crate) fn from_bits(bits: usize) -> Option<Chunk> {
        let (region, word) = (bits >> 8, bits & 0xff);
        (region < REGION_COUNT.load(Ordering::Acquire) && word < REGION_SLOTS / 64).then_some(
            Chunk {
                region: region as u32,
                word: word as u32,
            },
        )
    }
}

/// Calls `f` with every chunk that has a live slot (a snapshot, exact with
/// the world stopped).
pub(crate) fn for_each_live_chunk(mut f: impl FnMut(Chunk)) {
    for index in 0..REGION_COUNT.load(Ordering::Acquire) {
        for (w, word) in region(index).live.iter().enumerate() {
            if word.load(Ordering::Acquire) != 0 {
                f(Chunk {
                    region: index as u32,
                    word: w as u32,
                });
            }
        }
    }
}

/// How many chunks have a live slot (with the world stopped, exact).
pub(crate) fn live_chunks() -> usize {
    let mut n = 0;
    for_each_live_chunk(|_| n += 1);
    n
}

/// Calls `f` with every live slot of `chunk` (as [`for_each_live`]).
pub(crate) fn for_each_live_in(chunk: Chunk, mut f: impl FnMut(Slot)) {
    let Some(g) = GEOMETRY.get().map(|g| g.slot) else {
        return;
    };
    let r = region(chunk.region as usize);
    let w = chunk.word as usize;
    let mut bits = r.live[w].load(Ordering::Acquire);
    while bits != 0 {
        let i = w * 64 + bits.trailing_zeros() as usize;
        bits &= bits - 1;
        f(Slot {
            start: r.start + i * g,
            region: chunk.region,
            guarded: false,
        });
    }
}

/// The slot whose header starts at `addr`, if any (lock-free).
pub(crate) fn slot_of_header(addr: usize) -> Option<Slot> {
    let g = *GEOMETRY.get()?;
    let span = REGION_SLOTS * g.slot;
    (0..REGION_COUNT.load(Ordering::Acquire)).find_map(|index| {
        let r = region(index);
        if addr < r.start || addr >= r.start + span {
            return None;
        }
        let start = r.start + (addr - r.start) / g.slot * g.slot;
        (start + g.slot - g.header == addr).then_some(Slot {
            start,
            region: index as u32,
            guarded: false,
        })
    })
}

/// If `addr` lies in a slot's guard zone or canary, that slot. Takes no
/// lock: a fault handler may call it.
pub(crate) fn guard_hit(addr: usize) -> Option<Slot> {
    let g = GEOMETRY.get()?.slot;
    let span = REGION_SLOTS * g;
    (0..REGION_COUNT.load(Ordering::Acquire)).find_map(|index| {
        let r = region(index);
        if addr < r.start || addr >= r.start + span {
            return None;
        }
        let start = r.start + (addr - r.start) / g * g;
        (addr < start + GUARD + CANARY_WORDS * 8).then_some(Slot {
            start,
            region: index as u32,
            guarded: false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A pool of `regions` wholly free regions (no memory behind them:
    /// only the bookkeeping is exercised), freed at `at`.
    fn free_pool(regions: usize, at: Instant) -> Pool {
        let mut p = Pool {
            region_free: vec![0; regions],
            region_reuse: vec![0; regions],
            idle: Default::default(),
            free: FreeSlots::new(),
            ready: Default::default(),
            grown: 0,
            fresh: 0,
            fresh_next: 0,
            next_region: 0,
            released: None,
        };
        for r in 0..regions {
            p.free.add_region(r * REGION_SLOTS * PAGE, PAGE);
        }
        for r in 0..regions {
            for i in 0..REGION_SLOTS {
                let start = (r * REGION_SLOTS + i) * PAGE;
                let region = r as u32;
                p.put(
                    Slot {
                        start,
                        region,
                        guarded: false,
                    },
                    at,
                );
            }
        }
        p
    }

    /// Every region due at `now`, pacing aside (see the pacing's own
    /// test).
    fn releases(p: &mut Pool, now: Instant) -> Vec<usize> {
        std::iter::from_fn(|| {
            p.released = None;
            p.next_release(now)
        })
        .collect()
    }

    #[test]
    fn regions_go_back_one_at_a_time_at_most_once_every_interval() {
        let t0 = Instant::now();
        let regions = KEEP_FREE / REGION_SLOTS + 3;
        let mut p = free_pool(regions, t0);
        let due = t0 + IDLE_RELEASE;
        assert_eq!(p.next_release(due), Some(0));
        assert_eq!(p.next_release(due), None, "two releases at once");
        let almost = due + RELEASE_EVERY - Duration::from_millis(1);
        assert_eq!(p.next_release(almost), None, "a release before its time");
        assert_eq!(p.next_release(due + RELEASE_EVERY), Some(1));
        assert_eq!(p.next_release(due + 2 * RELEASE_EVERY), Some(2));
    }

    #[test]
    fn idle_regions_go_back_once_past_the_delay() {
        let t0 = Instant::now();
        let regions = KEEP_FREE / REGION_SLOTS + 3;
        let mut p = free_pool(regions, t0);
        assert_eq!(releases(&mut p, t0 + IDLE_RELEASE / 2), Vec::<usize>::new());
        // Past the delay: every idle region goes, oldest first.
        let released = releases(&mut p, t0 + IDLE_RELEASE);
        assert_eq!(released, (0..regions).collect::<Vec<_>>());
    }

    #[test]
    fn a_region_reused_since_it_went_idle_is_not_released() {
        let t0 = Instant::now();
        let hot_regions = HOT_SLOTS / REGION_SLOTS;
        let regions = hot_regions + 3;
        let mut p = free_pool(regions, t0);
        let g = Geometry {
            slot: PAGE,
            header: 64,
        };
        // A burst takes the slots freed last (newest first: the last
        // regions, downwards), then one region's worth lowest address
        // first (the first region, upwards), and frees them all just
        // before the idle entries are due.
        let taken: Vec<Slot> = (0..HOT_SLOTS + REGION_SLOTS)
            .map(|_| take_from_pool(&mut p, &g))
            .collect();
        let (hot, cold) = taken.split_at(HOT_SLOTS);
        assert!(hot
            .iter()
            .all(|s| s.region as usize >= regions - hot_regions));
        assert!(hot.windows(2).all(|w| w[0].start > w[1].start));
        assert!(cold.iter().all(|s| s.region == 0));
        assert!(cold.windows(2).all(|w| w[0].start < w[1].start));
        let t1 = t0 + IDLE_RELEASE - Duration::from_millis(1);
        for &s in &taken {
            p.put(s, t1);
        }
        // Their first idle spells are stale: only the two untouched
        // regions go at t0 + delay; the others' second spells come due a
        // delay after t1, in the order they became free again.
        let released = releases(&mut p, t0 + IDLE_RELEASE);
        assert_eq!(released, vec![1, 2]);
        let mut again: Vec<usize> = (regions - hot_regions..regions).rev().collect();
        again.push(0);
        assert_eq!(releases(&mut p, t1 + IDLE_RELEASE), again);
    }

    /// Threads taking, giving back and readying slots of the real pool at
    /// random while it grows: no slot is handed out twice, each comes
    /// zeroed, and slots are readied.
    #[test]
    fn slots_readied_while_the_pool_grows_are_each_handed_out_once() {
        let seed = crate::seeded::seed("DEFERGC_READY_SEED");
        println!("seed {seed} (DEFERGC_READY_SEED={seed} repeats it)");
        if geometry_if_set().is_none() {
            configure(Geometry::new(
                super::super::DEFAULT_STACK_SIZE,
                super::super::g::HEADER,
            ));
        }
        let g = geometry();
        let held = std::sync::Mutex::new(std::collections::HashSet::new());
        let readied = AtomicUsize::new(0);
        std::thread::scope(|sc| {
            for t in 0..3u64 {
                let (held, readied) = (&held, &readied);
                sc.spawn(move || {
                    let mut rng = crate::seeded::Rng(seed.wrapping_add(t) | 1);
                    let mut mine: Vec<Slot> = Vec::new();
                    for step in 0..20_000u64 {
                        match rng.below(10) {
                            0..=5 => {
                                let slot = take(false);
                                assert!(
                                    held.lock().unwrap().insert(slot.start),
                                    "seed {seed}: slot {:#x} handed out twice",
                                    slot.start
                                );
                                let top = (slot.end(&g) - 8) as *mut u64;
                                // SAFETY: the slot is ours: its top word
                                // is header, mapped and zero.
                                unsafe {
                                    assert_eq!(top.read_volatile(), 0, "seed {seed}: a dirty slot");
                                    top.write_volatile(step << 8 | t);
                                }
                                mine.push(slot);
                            }
                            6..=8 if !mine.is_empty() => {
                                let i = rng.below(mine.len() as u64) as usize;
                                let slot = mine.swap_remove(i);
                                let top = (slot.end(&g) - 8) as *mut u64;
                                // SAFETY: as above; nobody else holds it.
                                let word = unsafe { top.read_volatile() };
                                assert_eq!(
                                    word & 0xff,
                                    t,
                                    "seed {seed}: a slot written by another"
                                );
                                assert!(held.lock().unwrap().remove(&slot.start));
                                give_back(slot, slot.hi(&g), false, None);
                            }
                            _ => {
                                if prepare() {
                                    readied.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                    }
                    for slot in mine {
                        held.lock().unwrap().remove(&slot.start);
                        give_back(slot, slot.hi(&g), false, None);
                    }
                });
            }
        });
        assert!(
            readied.load(Ordering::Relaxed) > 0,
            "seed {seed}: the pool grew and no slot was readied"
        );
    }

    /// The scheduler's side: a worker left with nothing to run while
    /// goroutines are being started readies slots.
    #[test]
    fn idle_workers_ready_slots_while_goroutines_are_started() {
        use crate::go::{self, Chan};
        let _one = go::ONE_RUN_IN_TESTS
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        go::run(|| {
            let before = READIED.load(Ordering::Relaxed);
            let gate = Chan::<()>::new(0);
            // Other tests share the pool: a slot they give back stops the
            // readying until it is taken again, so a few rounds at most.
            for _ in 0..50 {
                for _ in 0..1000 {
                    let gate = gate.clone();
                    go::go(move || assert_eq!(gate.recv(), None));
                }
                // Every worker idle for a while.
                go::sleep(std::time::Duration::from_millis(5));
                if READIED.load(Ordering::Relaxed) > before {
                    break;
                }
            }
            gate.close();
            assert!(
                READIED.load(Ordering::Relaxed) > before,
                "no worker readied a slot while 50,000 goroutines started"
            );
        });
    }

    #[test]
    fn cold_free_slots_come_back_lowest_first_with_their_guards() {
        let seed = crate::seeded::seed("DEFERGC_STACK_SEED");
        println!("seed {seed} (DEFERGC_STACK_SEED={seed} repeats it)");
        let mut rng = crate::seeded::Rng(seed);
        let (regions, stride) = (70, 3 * PAGE);
        let mut cold = ColdSlots::new();
        // Regions mapped out of address order (the kernel need not honour
        // the hint): the order is the regions', then the slots' in each.
        let base = |r: usize| (regions - r) * REGION_SLOTS * stride * 2;
        for r in 0..regions {
            cold.add_region(base(r), stride);
        }
        let mut model = std::collections::BTreeMap::new();
        for _ in 0..200_000 {
            if rng.below(3) < 2 {
                let (r, i) = (
                    rng.below(regions as u64) as usize,
                    rng.below(REGION_SLOTS as u64) as usize,
                );
                if let std::collections::btree_map::Entry::Vacant(e) = model.entry((r, i)) {
                    let guarded = rng.below(2) == 0;
                    e.insert(guarded);
                    cold.insert(Slot {
                        start: base(r) + i * stride,
                        region: r as u32,
                        guarded,
                    });
                }
            } else {
                let want = model.pop_first();
                let got = cold.pop_lowest();
                assert_eq!(
                    got,
                    want.map(|((r, i), guarded)| Slot {
                        start: base(r) + i * stride,
                        region: r as u32,
                        guarded,
                    }),
                    "seed {seed}"
                );
            }
            assert_eq!(cold.len, model.len(), "seed {seed}");
        }
        while let Some(((r, i), guarded)) = model.pop_first() {
            let slot = cold.pop_lowest().expect("as many slots as the model");
            assert_eq!(
                (slot.start, slot.region, slot.guarded),
                (base(r) + i * stride, r as u32, guarded)
            );
        }
        assert_eq!(cold.pop_lowest(), None);
    }

    #[test]
    fn clearing_finds_dirt_below_the_lowest_stack_pointer_seen() {
        let mut slot = vec![0u64; 4096];
        let lo = slot.as_ptr() as usize;
        let low = lo + 3000 * 8;
        // A returned call's frame 6 KiB deep, written all through.
        for w in &mut slot[2200..3000] {
            *w = 0xDEAD;
        }
        // Cleared from the start of the line holding the deepest dirt.
        let frame = (lo + 2200 * 8) & !63;
        // SAFETY: [lo, low + a line) lies in the vector.
        assert_eq!(unsafe { dirty_below(lo, low) }, frame);
        // A clean run of CLEAN_RUN bytes ends the search: below it is
        // taken as never written.
        let gap = 2200 - CLEAN_RUN / 8 - 8;
        slot[gap] = 1;
        // SAFETY: as above.
        assert_eq!(unsafe { dirty_below(lo, low) }, frame);
        // Nothing below: from `low` itself.
        slot[..3000].fill(0);
        // SAFETY: as above.
        assert_eq!(unsafe { dirty_below(lo, low) }, low);
    }
}
