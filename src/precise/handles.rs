//! Handles: what a [`Handle`] is and how it resolves to an object.
//!
//! # Format
//!
//! A handle is a non-zero `u64`; 0 is null. The low [`INDEX_BITS`] (40)
//! bits hold an index plus one, the high 24 bits a generation, which
//! starts at 1 and skips 0 when it wraps: every handle is at least 2^40,
//! so the small integers that fill root memory (flags, counts, lengths),
//! read there as candidate handles, never name an object. The index of a
//! small object is its block's id times 2^13 plus its cell's number in the
//! block; a large object's index lies above all of those and numbers an
//! entry of the large-object table.
//!
//! Resolving a handle finds a header: for a small object, from its block's
//! *layout* (one word per block: the block's address and cell size, kept
//! in [`LAYOUTS`]), the cell its number names; for a large one, the
//! address its table entry holds. A header holds its object's generation:
//! the index is where the header was found, so the generation is all that
//! tells one object in a cell or entry from the next. Validating a handle
//! is: a header found (the block laid out and the cell number inside it,
//! or the table entry set), then `header.generation == handle.generation`
//! (one compare) and a live mark, cheap enough
//! for every access in release builds. A handle that finds no header is
//! invalid ([`Error::InvalidHandle`]); one that fails the compare is stale
//! ([`Error::StaleHandle`]): its object was freed, and its cell may hold
//! another object by now. A generation wraps after 2^24 reuses of one
//! cell, so a stale handle kept that long could alias a new object. That
//! is the only way a stale handle escapes detection.
//!
//! # Small objects: handles bound to cells
//!
//! A cell keeps its index for as long as its block keeps its layout, and a
//! free cell's header holds the generation its next object takes (see
//! `heap/object.rs`). An allocation takes it, with the index its allocator
//! counts along the cells it hands out; the sweep that frees
//! the cell writes the next generation there, in the word it reads anyway.
//! So neither allocating nor freeing a small object touches any table or
//! list of handles, and a freed handle's index is reused only by the next
//! object in the same cell, after the cycle that freed it (cells are swept
//! only then). Between the end of the marking that found an object dead
//! and the (lazy) sweep of its cell, its header still holds its generation;
//! validation also requires the object's mark to be the last completed
//! cycle's or the running one's ([`marking::is_live_mark`]), which a dead
//! object's is not, so its handle is stale from the end of marking on.
//! Blocks stay mapped for the life of the process, so a layout can always
//! be read through. A free block laid out for another size class, or given
//! back to the system, loses its layout first ([`clear_layout`]); its next
//! layout binds its cells to generations above any the old one reached
//! (`heap/blocks.rs`).
//!
//! # Large objects
//!
//! A large object takes a handle value from its thread's cache
//! ([`LocalHandles`]: a `Vec` pop, no atomics), refilled in batches of
//! [`BATCH`] from the global pool or, when the pool is empty, from
//! never-used table indices. Its handle, freed by a collection, goes with
//! its generation advanced to that cycle's pending list ([`Freed`]) and
//! reaches the pool only through [`release`], which the collector calls
//! when the cycle that freed it has completed. Its memory is returned to
//! the allocator, so its entry is pointed at a static tombstone header
//! first. Table entries live in a [`Segmented`] array (2^13 chunks of 2^17
//! entries, 1 MiB each, allocated on demand and never moved or freed, so a
//! reader on any thread can never see freed table memory); block layouts
//! in one mapping reserved once ([`LAYOUTS`]).
//!
//! Publication: an allocating thread writes the header (the generation last,
//! release); a large object's entry is written after it (release), a
//! block's layout after its cells' free headers (release). Readers load the
//! layout or entry, then the header's generation (both acquire), then for a
//! small object the layout again: if it changed, the block was laid out
//! anew in between and the word read may lie inside a new cell, so the
//! lookup fails (a layout that changes and comes back binds its cells to
//! higher generations, so the word cannot match then).

use super::error::{Error, Result};
use super::heap::{Header, BLOCK, BLOCK_HEADER, MAX_SMALL_CELL};
use super::marking;
use crate::cache::CachePadded;
use crate::segmented::Segmented;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{fence, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bits of a handle that hold the index plus one.
pub(crate) const INDEX_BITS: u32 = 40;
pub(crate) const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

/// Whether `w` may be a handle (a cheap filter for root memory words).
#[inline(always)]
pub(crate) fn could_be_handle(w: u64) -> bool {
    w >> INDEX_BITS != 0 && w & ((1 << INDEX_BITS) - 1) != 0
}
/// The largest generation (they have 24 bits).
pub(crate) const MAX_GENERATION: u32 = (1 << (64 - INDEX_BITS)) - 1;

/// Handles moved between a thread cache and the pool at once.
pub(crate) const BATCH: usize = 4096;

type Table = Segmented<AtomicPtr<Header>, 17, { 1 << 13 }>;

/// Bits of a small object's index that number its cell in its block.
const CELL_BITS: u32 = 13;
/// Indices below this name small objects: block id and cell number.
/// Large objects' indices follow, their table index added.
const SMALL_SPACE: u64 = (MAX_BLOCKS as u64) << CELL_BITS;
/// The most blocks there can be (2 TiB of them).
pub(crate) const MAX_BLOCKS: usize = 1 << 24;
/// The largest index plus one.
const MAX_INDEX: usize = SMALL_SPACE as usize + Table::CAPACITY;
// Every index plus one fits in the index bits.
const _: () = assert!((MAX_INDEX as u64) < INDEX_MASK);

/// The layout of each block: its base address and cell size (base + cell),
/// 0 while it has none (never laid out, or given back). One word per
/// possible block id in one mapping, reserved when the first block is
/// laid out ([`MAX_BLOCKS`] words: 128 MiB of address space, of which only
/// the pages holding laid-out blocks' words are touched, one per 512
/// blocks), so that finding a block's layout is one load after the block
/// id. Every handle access and every marked object does it; a chunked
/// array's chunk pointer was one more load in that chain.
static LAYOUTS: CachePadded<AtomicPtr<AtomicUsize>> =
    CachePadded(AtomicPtr::new(std::ptr::null_mut()));

/// The layout word of block `block` (below [`MAX_BLOCKS`]), if the layout
/// table is reserved yet.
#[inline(always)]
fn layout_slot(block: usize) -> Option<&'static AtomicUsize> {
    debug_assert!(block < MAX_BLOCKS);
    let table = LAYOUTS.load(Ordering::Acquire);
    // SAFETY: a reserved table has MAX_BLOCKS words, mapped for the life
    // of the process, zero until written, and only accessed atomically.
    (!table.is_null()).then(|| unsafe { &*table.add(block) })
}

/// Reserves the layout table if it is not yet. Called under the heap lock,
/// as every layout change is. False if the address space is not there.
fn reserve_layouts() -> bool {
    if !LAYOUTS.load(Ordering::Relaxed).is_null() {
        return true;
    }
    // SAFETY: an anonymous private mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            MAX_BLOCKS * std::mem::size_of::<AtomicUsize>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return false;
    }
    LAYOUTS.store(p.cast(), Ordering::Release);
    true
}

const _: () = assert!(MAX_SMALL_CELL < BLOCK && (BLOCK - BLOCK_HEADER) / 16 < 1 << CELL_BITS);
static TABLE: CachePadded<Table> = CachePadded(Table::new());

/// Where the entry of a freed large object points: a header that matches
/// no handle.
static TOMBSTONE: Header = Header::free();

/// A reference to an object of the precise heap: a non-zero 64-bit value
/// (an index naming a small object's block and cell, or a large object's
/// table entry, and a generation), valid until the object is collected.
///
/// A handle says nothing about liveness by itself: keep it rooted (on the
/// shadow stack with [`root`](crate::precise::root), in a
/// [`GlobalRoot`](crate::precise::GlobalRoot)) or stored in a reachable
/// object across every safepoint, or it may become stale.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Handle(NonZeroU64);

impl Handle {
    /// The handle with this raw value; [`Error::NullHandle`] for 0. Whether
    /// it names a live object is checked when it is used.
    #[inline]
    pub const fn from_raw(raw: u64) -> Result<Handle> {
        match NonZeroU64::new(raw) {
            Some(raw) => Ok(Handle(raw)),
            None => Err(Error::NullHandle),
        }
    }

    /// The handle with this raw value, known to be non-zero.
    ///
    /// # Safety
    /// `raw` is not 0.
    #[inline(always)]
    pub(crate) const unsafe fn from_raw_unchecked(raw: u64) -> Handle {
        // SAFETY: per the caller.
        Handle(unsafe { NonZeroU64::new_unchecked(raw) })
    }

    /// The raw value (what the C ABI passes around).
    #[inline]
    pub const fn to_raw(self) -> u64 {
        self.0.get()
    }

    /// The raw value of a nullable handle: 0 for `None`.
    #[inline]
    pub fn raw_or_null(handle: Option<Handle>) -> u64 {
        handle.map_or(0, Handle::to_raw)
    }

    /// The index this handle names (see the module docs).
    pub const fn index(self) -> u64 {
        (self.0.get() & INDEX_MASK).wrapping_sub(1)
    }

    /// The handle's generation: how many times its index was reused before
    /// (modulo 2^24).
    pub const fn generation(self) -> u32 {
        (self.0.get() >> INDEX_BITS) as u32
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({}#{})", self.index(), self.generation())
    }
}

/// The table entry of a raw handle value of a large object, if the value
/// can name one.
#[inline(always)]
fn entry(raw: u64) -> Option<&'static AtomicPtr<Header>> {
    // A value with index bits 0 wraps to an index far above the capacity.
    let index = (raw & INDEX_MASK)
        .wrapping_sub(1)
        .checked_sub(SMALL_SPACE)?;
    TABLE.get(index as usize)
}

/// Where a raw handle value leads, unchecked: a header, and for a small
/// object the layout it was found through.
#[derive(Clone, Copy)]
pub(crate) struct Found {
    pub(crate) hdr: *mut Header,
    /// The block's layout word and where it is (`None`: a large object).
    layout: Option<(&'static AtomicUsize, usize)>,
}

impl Found {
    /// A placeholder (fills the marker's queue).
    pub(crate) const NONE: Found = Found {
        hdr: std::ptr::null_mut(),
        layout: None,
    };

    /// The last byte of the object's first cache line's worth (its cell's
    /// first 64 bytes): with the header's, the lines its first fields lie
    /// on, for the marker to prefetch (a small cell may straddle two lines;
    /// a large object's header starts a line).
    #[inline(always)]
    pub(crate) fn first_line_end(&self) -> *const u8 {
        let span = match self.layout {
            Some((_, word)) => (word & (BLOCK - 1)).min(64),
            None => 64,
        };
        self.hdr.cast::<u8>().wrapping_add(span - 1)
    }

    /// Whether the header, read after [`locate`], is `raw`'s object: its
    /// generation is `raw`'s, and the block was not laid out anew meanwhile
    /// (then the word may have been read in the middle of a new cell).
    /// Call after loading the generation with acquire, which orders the
    /// layout's load after it.
    #[inline(always)]
    fn same_layout(&self) -> bool {
        self.layout
            .is_none_or(|(slot, word)| slot.load(Ordering::Relaxed) == word)
    }
}

/// The header a raw handle value leads to, unchecked: for a small object,
/// the cell its number names in its block's layout; for a large one, what
/// its table entry points to. `None` if no cell or entry has that index.
#[inline(always)]
pub(crate) fn locate(raw: u64) -> Option<Found> {
    let index = (raw & INDEX_MASK).wrapping_sub(1);
    if index < SMALL_SPACE {
        let slot = layout_slot((index >> CELL_BITS) as usize)?;
        let layout = slot.load(Ordering::Acquire);
        let cell = layout & (BLOCK - 1);
        let offset = (index as usize & ((1 << CELL_BITS) - 1)) * cell;
        if layout == 0 || offset + cell > BLOCK - BLOCK_HEADER {
            return None;
        }
        Some(Found {
            hdr: ((layout - cell) + BLOCK_HEADER + offset) as *mut Header,
            layout: Some((slot, layout)),
        })
    } else {
        let hdr = entry(raw)?.load(Ordering::Acquire);
        (!hdr.is_null()).then_some(Found { hdr, layout: None })
    }
}

/// The handle value of cell `cell` of block `block`, with generation
/// `generation` (1 to 2^24 - 1 for a handle; 0 only as the floor that
/// [`next_generation`] starts a fresh cell above).
#[inline]
pub(crate) fn small_handle(block: u32, cell: usize, generation: u32) -> u64 {
    let index = (u64::from(block) << CELL_BITS | cell as u64) + 1;
    index | u64::from(generation) << INDEX_BITS
}

/// The handle with index bits `index` (index + 1, from [`small_handle`]
/// with generation 0) and generation `generation`.
#[inline(always)]
pub(crate) fn with_generation(index: u64, generation: u32) -> u64 {
    index | u64::from(generation) << INDEX_BITS
}

/// The generation of a handle value.
#[inline(always)]
pub(crate) fn generation_of(raw: u64) -> u32 {
    (raw >> INDEX_BITS) as u32
}

/// The generation after `generation`, skipping 0 when it wraps.
#[inline(always)]
pub(crate) fn generation_after(generation: u32) -> u32 {
    match generation.wrapping_add(1) & MAX_GENERATION {
        0 => 1,
        next => next,
    }
}

/// Lays out block `block` at `base` in cells of `cell` bytes for handle
/// lookups (after its cells' headers are written). False if the layout
/// table could not be reserved.
pub(crate) fn set_layout(block: u32, base: usize, cell: usize) -> bool {
    debug_assert!(base.is_multiple_of(BLOCK) && cell < BLOCK);
    if (block as usize) >= MAX_BLOCKS || !reserve_layouts() {
        return false;
    }
    let Some(slot) = layout_slot(block as usize) else {
        return false;
    };
    let old = slot.swap(base + cell, Ordering::AcqRel);
    count_cells(old, base + cell);
    true
}

/// Block `block` has no layout any more: no handle leads into it (until
/// [`set_layout`] again).
pub(crate) fn clear_layout(block: u32) {
    if let Some(layout) = layout_slot(block as usize) {
        count_cells(layout.swap(0, Ordering::AcqRel), 0);
    }
}

/// Cells of all block layouts, and the most there have been.
static CELLS: AtomicUsize = AtomicUsize::new(0);
static CELLS_PEAK: AtomicUsize = AtomicUsize::new(0);

/// Counts a block's change from layout `old` to `new` (0: none).
fn count_cells(old: usize, new: usize) {
    let cells = |layout: usize| match layout & (BLOCK - 1) {
        0 => 0,
        cell => (BLOCK - BLOCK_HEADER) / cell,
    };
    // Layouts change under the heap lock: no two at once.
    let n = CELLS.load(Ordering::Relaxed) + cells(new) - cells(old);
    CELLS.store(n, Ordering::Relaxed);
    CELLS_PEAK.fetch_max(n, Ordering::Relaxed);
}

/// Resolves a handle to its object's header, or says exactly why not.
#[inline(always)]
pub(crate) fn resolve(handle: Handle) -> Result<*mut Header> {
    let raw = handle.to_raw();
    let Some(found) = locate(raw) else {
        return Err(Error::InvalidHandle);
    };
    // SAFETY: a located header is a small-object cell (blocks are never
    // unmapped), a live large object, or the tombstone.
    let matched = unsafe { (*found.hdr).generation.load(Ordering::Acquire) } == generation_of(raw);
    if matched && still_live(raw, found) {
        Ok(found.hdr)
    } else {
        Err(Error::StaleHandle)
    }
}

/// The rest of [`resolve`] once the generation at `found` matched `raw`'s
/// (loaded with acquire): the block was not laid out anew meanwhile, the
/// object's mark is live, and the generation still matches. The mark is
/// read only once the generation matched (which a free cell's word, with
/// its free bit, never does) in the layout it was found through, but it is
/// this object's only if the cell was not freed and reused since the word
/// was read. Freeing a cell changes its word before any new mark is written
/// there (see `Header::init`), so a word read again after the mark tells.
#[inline(always)]
pub(crate) fn still_live(raw: u64, found: Found) -> bool {
    // SAFETY: as in resolve.
    unsafe {
        found.same_layout() && marking::is_live_mark((*found.hdr).mark.load(Ordering::Relaxed)) && {
            fence(Ordering::Acquire);
            (*found.hdr).generation.load(Ordering::Relaxed) == generation_of(raw)
        }
    }
}

/// Resolves an arbitrary word that may or may not be a live handle (root
/// memory, fields written through raw pointers): any value is safe. The
/// marker does the same in two steps ([`locate`], then, once it has
/// prefetched the header, [`names_object`]).
#[cfg(test)]
pub(crate) fn resolve_candidate(raw: u64) -> Option<*mut Header> {
    let found = locate(raw)?;
    names_object(raw, found).then_some(found.hdr)
}

/// Whether the header `found` (from [`locate`]) is the object of `raw`.
#[inline(always)]
pub(crate) fn names_object(raw: u64, found: Found) -> bool {
    // SAFETY: as in resolve; a value that locates a header has neither the
    // free bit nor is 0, so a free cell or a tombstone never matches.
    unsafe {
        (*found.hdr).generation.load(Ordering::Acquire) == generation_of(raw) && found.same_layout()
    }
}

/// Points the entry of `handle` (taken from a [`LocalHandles`]) at `hdr`,
/// whose header already holds `handle`'s generation.
///
/// # Safety
/// `handle` came from [`LocalHandles::pop`] on this thread and has not been
/// published since; `hdr` is an initialised header.
#[inline(always)]
pub(crate) unsafe fn publish(handle: u64, hdr: *mut Header) -> Handle {
    let index = ((handle & INDEX_MASK) - 1 - SMALL_SPACE) as usize;
    // SAFETY: indices in a cache were ensured by refill (through the pool
    // mutex or this thread's own refill, so happens-before holds).
    unsafe { TABLE.get_unchecked(index) }.store(hdr, Ordering::Release);
    // SAFETY: the index bits of a cached handle are index + 1 >= 1.
    Handle(unsafe { NonZeroU64::new_unchecked(handle) })
}

/// Tests: clears the entry of the large object `handle`, as a fork that
/// caught its allocation between the header and the entry leaves it.
#[cfg(test)]
pub(crate) fn unpublish_for_tests(handle: u64) {
    if let Some(e) = entry(handle) {
        e.store(std::ptr::null_mut(), Ordering::Release);
    }
}

/// Whether the entry of `handle` points at `hdr` (a consistency check for
/// debug builds).
pub(crate) fn names(handle: u64, hdr: *mut Header) -> bool {
    locate(handle).is_some_and(|found| found.hdr == hdr)
}

/// Handles freed by one cycle, waiting for it to complete.
pub(crate) struct Freed {
    handles: Vec<u64>,
}

impl Freed {
    pub(crate) fn new() -> Freed {
        Freed {
            handles: Vec::new(),
        }
    }

    /// Frees `handle`, the handle of an object the collector is freeing: it
    /// becomes reusable, with the next generation, at [`release`].
    #[inline(always)]
    pub(crate) fn push(&mut self, handle: u64) {
        self.handles.push(next_generation(handle));
    }
}

/// The value a freed `handle` is reused with: same index, next generation,
/// skipping generation 0 when it wraps.
#[inline(always)]
pub(crate) fn next_generation(handle: u64) -> u64 {
    with_generation(handle & INDEX_MASK, generation_after(generation_of(handle)))
}

/// Frees the handle of a large object whose memory is about to be released:
/// its entry must stop pointing there.
pub(crate) fn free_large(handle: u64, freed: &mut Freed) {
    if let Some(e) = entry(handle) {
        e.store(std::ptr::addr_of!(TOMBSTONE).cast_mut(), Ordering::Release);
    }
    freed.push(handle);
}

struct Pool {
    batches: Vec<Vec<u64>>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    batches: Vec::new(),
});
/// Indices below this have been handed out at least once.
static FRESH: AtomicUsize = AtomicUsize::new(0);

/// Before a fork, after the heap (the lock order): the pool and the
/// table's growth lock, kept until after the fork.
pub(super) fn lock_for_fork() {
    crate::gc::fork::held::keep(pool());
    crate::gc::fork::held::keep(TABLE.lock_growth());
}

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes the handles of a completed cycle available for reuse.
pub(crate) fn release(freed: Freed) {
    let mut handles = freed.handles;
    if handles.is_empty() {
        return;
    }
    let mut pool = pool();
    while handles.len() > BATCH {
        let rest = handles.split_off(handles.len() - BATCH);
        pool.batches.push(rest);
    }
    pool.batches.push(handles);
}

/// How many handles there have been at most at once: cells of block
/// layouts at their peak, and table indices ever handed out to large
/// objects (reuse keeps both flat).
pub(crate) fn capacity_used() -> usize {
    CELLS_PEAK.load(Ordering::Relaxed) + FRESH.load(Ordering::Relaxed)
}

/// A thread's cache of free handle values (next generation included).
pub(crate) struct LocalHandles {
    free: Vec<u64>,
}

impl LocalHandles {
    pub(crate) const fn new() -> LocalHandles {
        LocalHandles { free: Vec::new() }
    }

    /// A free handle value, if the cache has one.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<u64> {
        self.free.pop()
    }

    /// The value [`pop`](Self::pop) would return next.
    pub(crate) fn peek(&self) -> Option<u64> {
        self.free.last().copied()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.free.is_empty()
    }

    /// Fills an empty cache from the pool, or with never-used indices.
    #[cold]
    pub(crate) fn refill(&mut self) -> Result<()> {
        debug_assert!(self.free.is_empty());
        let mut pool = pool();
        if let Some(batch) = pool.batches.pop() {
            self.free = batch;
            return Ok(());
        }
        let start = FRESH.load(Ordering::Relaxed);
        let end = (start + BATCH).min(Table::CAPACITY);
        if start == end {
            return Err(Error::OutOfHandles);
        }
        if !TABLE.ensure(start) || !TABLE.ensure(end - 1) {
            return Err(Error::OutOfMemory);
        }
        FRESH.store(end, Ordering::Relaxed);
        drop(pool);
        // Popped from the back: hand out ascending indices, generation 1.
        let first = SMALL_SPACE + start as u64 + 1;
        self.free.extend(
            (first..first + (end - start) as u64)
                .rev()
                .map(|i| with_generation(i, 1)),
        );
        Ok(())
    }

    /// Returns the cached handles to the pool (thread exit). They were never
    /// published since they were last released, so no cycle is involved.
    pub(crate) fn give_back(&mut self) {
        let batch = std::mem::take(&mut self.free);
        if !batch.is_empty() {
            pool().batches.push(batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, AtomicU8};

    #[test]
    fn null_and_garbage_values_never_resolve() {
        assert_eq!(Handle::from_raw(0), Err(Error::NullHandle));
        for raw in [1u64 << 40, u64::MAX, INDEX_MASK, 0xdead_beef_0000_0000] {
            let h = Handle::from_raw(raw).unwrap();
            assert_eq!(resolve(h), Err(Error::InvalidHandle), "{raw:#x}");
            assert_eq!(resolve_candidate(raw), None);
        }
        assert_eq!(resolve_candidate(0), None);
    }

    /// A leaked header of `handle`'s object, as the heap would write it.
    fn header(handle: u64) -> *mut Header {
        let h = Box::leak(Box::new(Header::free()));
        h.generation = AtomicU32::new(generation_of(handle));
        h.mark = AtomicU8::new(marking::live_mark());
        h
    }

    #[test]
    #[serial_test::serial(precise)]
    fn freed_handles_are_reused_only_after_release_and_with_a_new_generation() {
        let mut cache = LocalHandles::new();
        let take = |cache: &mut LocalHandles| loop {
            if let Some(h) = cache.pop() {
                break h;
            }
            cache.refill().unwrap();
        };
        let first: Vec<(Handle, *mut Header)> = (0..3 * BATCH)
            .map(|_| {
                let raw = take(&mut cache);
                let hdr = header(raw);
                // SAFETY: a fresh handle from our cache, its header ready.
                (unsafe { publish(raw, hdr) }, hdr)
            })
            .collect();
        let mut freed = Freed::new();
        for (h, hdr) in &first {
            assert_eq!(resolve(*h), Ok(*hdr));
            // What the sweep does: clear the header, pend the handle.
            // SAFETY: our own leaked header.
            unsafe { (**hdr).generation.store(0, Ordering::Relaxed) };
            freed.push(h.to_raw());
            assert_eq!(resolve(*h), Err(Error::StaleHandle));
        }
        // Before release, a new cache never sees a pending index.
        cache.give_back();
        let mut other = LocalHandles::new();
        let mut during: Vec<u64> = (0..4 * BATCH).map(|_| take(&mut other)).collect();
        for raw in &during {
            let i = Handle::from_raw(*raw).unwrap().index();
            assert!(
                first.iter().all(|(h, _)| h.index() != i),
                "index {i} reused before its cycle ended"
            );
        }
        release(freed);
        let after: Vec<u64> = (0..4 * BATCH).map(|_| take(&mut other)).collect();
        let (reused, unused): (Vec<u64>, Vec<u64>) = after.iter().partition(|raw| {
            let i = Handle::from_raw(**raw).unwrap().index();
            first.iter().any(|(h, _)| h.index() == i)
        });
        assert!(!reused.is_empty(), "released indices were not reused");
        for raw in reused {
            let hdr = header(raw);
            // SAFETY: raw came from our cache.
            let h = unsafe { publish(raw, hdr) };
            let (old, _) = first.iter().find(|(o, _)| o.index() == h.index()).unwrap();
            assert_ne!(h, *old, "same value handed out twice");
            assert_eq!(h.generation(), old.generation() + 1);
            assert_eq!(resolve(*old), Err(Error::StaleHandle));
            assert_eq!(resolve(h), Ok(hdr));
            let mut f = Freed::new();
            // SAFETY: our own leaked header.
            unsafe { (*hdr).generation.store(0, Ordering::Relaxed) };
            f.push(raw);
            release(f);
        }
        // Handles never published go back as they are.
        during.extend(unused);
        other.free.extend(during);
        other.give_back();
    }
}
