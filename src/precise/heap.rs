//! The heap: object headers, size classes, blocks, per-thread bump
//! buffers, large objects, and sweeping. Objects never move.
//!
//! # Objects
//!
//! Every object starts with a 16-byte [`Header`] (its handle, payload size,
//! type id, mark byte); the payload follows, aligned to 16 bytes when its
//! size is a multiple of 16 and to 8 otherwise (see [`GRANULE`]). The mark
//! byte holds the low byte of a cycle id: an object is marked in cycle `c`
//! when its mark byte equals `c`. Allocation writes the collector's birth
//! mark there ([`collector::birth_mode`]), in one place ([`init_object`]):
//! the last completed cycle's (white) outside a marking, the same but
//! logged for tracing (grey) while roots are being snapshotted, the
//! running cycle's (black) after that (see `collector.rs`).
//!
//! # Small objects
//!
//! Objects whose cell (header + payload, rounded up to the size class) is
//! at most 8 KiB live in 128 KiB blocks of one size class each, carved from
//! 8 MiB anonymous mappings. Blocks are 128 KiB-aligned and start with a
//! 16-byte block header, a counter the marker (one thread) increments for
//! every object it marks there: a block whose cells are all live is not
//! swept. Each thread owns at most one block per class and bump-allocates
//! through runs of consecutive free cells in it ([`LocalHeap`]): the fast
//! path is a compare and an add, with no lock and no atomic
//! read-modify-write. When the block has no free run left, the thread
//! takes (under the heap lock) a partly free block, a wholly free one, an
//! unswept one (which it sweeps), or a new one.
//!
//! Invariant: a free cell is recognised by its handle word 0. The sweep
//! frees a dead cell by clearing only that word; allocation zeroes the
//! payload it hands out (a wholly free block that changes size class is
//! zeroed first, so that no old payload looks like a header). Debug builds
//! also poison a freed cell's payload and stamp its size word, and check
//! both when the cell is reused: a write through a dangling pointer aborts
//! with a `defergc:` message.
//!
//! # Large objects
//!
//! Larger objects are `calloc`'d one by one and listed for the sweep.
//!
//! # Sweeping, limits, pacing
//!
//! No cell is freed while a marking runs ([`set_lazy_sweep`]). At the end
//! of marking ([`after_mark`], mutators running) large objects the cycle
//! did not mark are unlinked (their memory is released by
//! [`free_pending_large`] once every thread has passed a safepoint), and
//! every unowned block that holds objects is filed as full (every cell
//! marked) or *unswept*. Then the collector thread sweeps the unswept
//! blocks, concurrently with the mutators; a thread that finds no swept
//! block to allocate in may take an unswept one and sweep it itself. A
//! sweep frees the cells of objects whose mark is not the last completed
//! cycle's (clears their handle word) and their handles (next generation).
//! The mutator's share stays small: it prefers blocks the collector has
//! swept already. Until its cell is
//! swept, a dead object's handle is rejected by validation through its
//! stale mark (see `handles.rs`).
//!
//! A block a thread owns when a cycle ends cannot be swept then; each
//! block remembers the cycle it was last swept for ([`Block::swept`]), and
//! one given up later (by its owner, at the latest at the next snapshot,
//! which retires every thread's buffers) with an older one is filed
//! unswept. So every block is swept at least every other cycle, and mark
//! bytes never wrap around onto a dead object.
//!
//! Free blocks that no allocation needed for [`IDLE_RELEASE`], beyond the
//! next cycle's allocation budget, are given back to the system at the end
//! of a cycle (`MADV_DONTNEED`: the address range stays ours and reads as
//! zeros; the free list's low-water mark at each cycle end tells which
//! blocks sat unused), and all free blocks before a large object would fail
//! the heap limit; the heap size counts only blocks that are not given
//! back. Giving back a block the program needs again a few cycles later
//! costs a page fault per page: GCBench, whose heap peaks once per run,
//! took 57,000 faults in 5 runs when every free block beyond the budget
//! was given back at each cycle end, 15,000 with the idle rule.
//!
//! The heap grows on demand. A new block or large object that would take
//! the heap past the configured limit makes the allocation wait for a full
//! collection; if that does not make room it fails with
//! [`Error::HeapLimit`]. A collection is also requested (without waiting)
//! when the bytes handed to allocation buffers since the last one started
//! exceed the pacer's trigger (`max(min_trigger, live_bytes * gc_percent /
//! 100)`); allocation during the cycle counts towards the next trigger.

use super::collector;
use super::error::{Error, Result};
use super::handles::{self, Freed, Handle};
use super::threads::{self, ThreadState};
use super::types::{self, TypeId};
use std::collections::VecDeque;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bytes of an object header.
pub(crate) const HEADER: usize = 16;
/// Cells are multiples of this. A cell that is not a multiple of 16 holds
/// payloads whose size is not one either, and a type whose size is not a
/// multiple of 16 needs at most 8-byte alignment; so every payload is
/// aligned as its size allows (16 bytes at most), like `malloc`'s but
/// without rounding a 24-byte object up to 48 bytes.
const GRANULE: usize = 8;
/// Bytes of a small-object block.
pub(crate) const BLOCK: usize = 128 << 10;
/// Bytes mapped at a time and carved into blocks.
const ARENA: usize = 64 * BLOCK;
/// Bytes at the start of each block (which is `BLOCK`-aligned) before its
/// first cell: the count of objects the running marking found live in it.
const BLOCK_HEADER: usize = 16;

/// The first cell of the block at `base`.
#[inline(always)]
fn first_cell(base: usize) -> usize {
    base + BLOCK_HEADER
}

/// How many cells of `cell` bytes a block holds.
#[inline(always)]
fn cells_per_block(cell: usize) -> usize {
    (BLOCK - BLOCK_HEADER) / cell
}

/// The live-object counter of the block holding the small object at `hdr`.
#[inline(always)]
pub(crate) fn block_live_counter(hdr: *mut Header) -> *const AtomicU32 {
    (hdr as usize & !(BLOCK - 1)) as *const AtomicU32
}
/// The largest small-object cell.
pub(crate) const MAX_SMALL_CELL: usize = 8192;
/// The size class of large objects.
pub(crate) const LARGE: u8 = u8::MAX;

/// The header in front of every object's payload. All zero in a free cell.
#[repr(C)]
pub(crate) struct Header {
    /// The object's handle (index and generation); 0 in a free cell. The
    /// handle table validates handles against this.
    pub(crate) handle: AtomicU64,
    /// Payload bytes.
    pub(crate) size: u32,
    /// Registered type id, low 16 bits.
    type_lo: u16,
    /// Registered type id, bits 16..24.
    type_hi: u8,
    /// The low byte of the id of the last cycle that marked the object (or
    /// of its birth mark). A byte is enough: after a sweep every object
    /// carries the sweeping cycle's id.
    pub(crate) mark: AtomicU8,
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER);

impl Header {
    /// A free cell's header.
    pub(crate) const fn free() -> Header {
        Header {
            handle: AtomicU64::new(0),
            size: 0,
            type_lo: 0,
            type_hi: 0,
            mark: AtomicU8::new(0),
        }
    }

    /// The payload of the object whose header is at `hdr`.
    #[inline(always)]
    pub(crate) fn payload(hdr: *mut Header) -> *mut u8 {
        hdr.cast::<u8>().wrapping_add(HEADER)
    }

    /// The registered type id.
    #[inline(always)]
    pub(crate) fn type_id(&self) -> u32 {
        u32::from(self.type_lo) | u32::from(self.type_hi) << 16
    }
}

/// Type ids fit in the header's 24 bits.
pub(crate) const MAX_TYPE_ID: u32 = (1 << 24) - 1;

/// Number of small size classes.
pub(crate) const CLASSES: usize = 43;

/// Cell bytes of each class: 16..=128 by 8, 144..=256 by 16, then four
/// steps per doubling up to 8 KiB (at most 25% internal waste above 256
/// bytes). The 8-byte steps serve the commonest objects (a header and a
/// few words) without padding.
static CELL: [u32; CLASSES] = {
    let mut cells = [0u32; CLASSES];
    let mut i = 0;
    while i < 15 {
        cells[i] = 16 + i as u32 * 8;
        i += 1;
    }
    while i < 23 {
        cells[i] = 144 + (i as u32 - 15) * 16;
        i += 1;
    }
    let mut base = 256u32;
    while i < CLASSES {
        let mut step = 5;
        while step <= 8 {
            cells[i] = base * step / 4;
            i += 1;
            step += 1;
        }
        base *= 2;
    }
    cells
};

/// The class of a cell of `g` granules, for `g` up to 8 KiB / 8.
static CLASS_BY_GRANULES: [u8; MAX_SMALL_CELL / GRANULE + 1] = {
    let mut table = [0u8; MAX_SMALL_CELL / GRANULE + 1];
    let mut g = 0;
    let mut class = 0;
    while g < table.len() {
        while (CELL[class] as usize) < g * GRANULE {
            class += 1;
        }
        table[g] = class as u8;
        g += 1;
    }
    table
};

/// The size class for a payload of `size` bytes, or [`LARGE`].
#[inline]
pub(crate) fn class_of(size: usize) -> u8 {
    let cell = size.saturating_add(HEADER);
    if cell > MAX_SMALL_CELL {
        LARGE
    } else {
        CLASS_BY_GRANULES[cell.div_ceil(GRANULE)]
    }
}

// ---- per-thread bump buffers -------------------------------------------

const NO_BLOCK: u32 = u32::MAX;

/// A thread's allocation state for one size class.
#[derive(Clone, Copy)]
struct Bump {
    /// Next free cell of the current run.
    cursor: usize,
    /// End of the current run of free cells.
    limit: usize,
    /// Where to look for the next run in the owned block.
    scan: usize,
    /// End of the owned block's cells.
    end: usize,
    /// The owned block's id, or [`NO_BLOCK`].
    block: u32,
}

impl Bump {
    const EMPTY: Bump = Bump {
        cursor: 0,
        limit: 0,
        scan: 0,
        end: 0,
        block: NO_BLOCK,
    };
}

/// A thread's bump buffers, one per size class.
pub(crate) struct LocalHeap {
    bufs: [Bump; CLASSES],
}

impl LocalHeap {
    pub(crate) const fn new() -> LocalHeap {
        LocalHeap {
            bufs: [Bump::EMPTY; CLASSES],
        }
    }
}

// ---- the shared heap -----------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BlockState {
    /// Every cell free; in `Inner::free`, usable by any class.
    Free,
    /// Every cell free and its memory given back to the system (so all
    /// zero again when touched); in `Inner::released`, not counted in the
    /// heap size.
    Released,
    /// A thread allocates in it.
    Owned,
    /// Some cells free; in `Inner::partial[class]`.
    Partial,
    /// Marked by the last cycle but not swept since: may hold dead objects,
    /// which must be freed before its cells are allocated; in
    /// `Inner::unswept[class]`.
    Unswept,
    /// No free cell known; in no list until the next sweep.
    Full,
}

struct Block {
    base: usize,
    class: u8,
    state: BlockState,
    /// The id of the completed cycle whose dead objects the last sweep of
    /// this block freed (or that found every cell live). A block retired
    /// or exhausted with an older one may hold dead objects: unswept.
    swept: u32,
}

struct Large {
    hdr: *mut Header,
    bytes: usize,
}

/// How long a free block must go unused before its memory is given back.
/// Programs that need a burst of memory now and then (a phase, a request)
/// keep it mapped; at high allocation rates cycles come every few
/// milliseconds, so a count of cycles would be far too eager.
pub(crate) const IDLE_RELEASE: Duration = Duration::from_secs(1);

struct Inner {
    blocks: Vec<Block>,
    partial: [Vec<u32>; CLASSES],
    unswept: [Vec<u32>; CLASSES],
    /// Wholly free blocks, most recently freed last (taken from the end).
    free: Vec<u32>,
    /// The shortest `free` has been since the last cycle ended: its first
    /// `free_low` blocks went unused for that whole cycle.
    free_low: usize,
    /// `free_low` at the end of each recent cycle, oldest first, reaching
    /// back just past [`IDLE_RELEASE`] ago: blocks below the smallest went
    /// unused for that long, and only those are given back to the system.
    past_lows: VecDeque<(Instant, usize)>,
    released: Vec<u32>,
    /// Unused rest of the current mapping.
    arena_next: usize,
    arena_end: usize,
    large: Vec<Large>,
    /// Large objects freed by the running cycle, released at its end.
    pending_large: Vec<Large>,
    block_bytes: usize,
    large_bytes: usize,
    /// Whether blocks may be swept now: not while a marking runs.
    lazy_sweep: bool,
}

// SAFETY: the raw pointers are to heap memory owned by this module and only
// touched under the heap lock or by the protocol in the module docs.
unsafe impl Send for Inner {}

static HEAP: Mutex<Inner> = Mutex::new(Inner {
    blocks: Vec::new(),
    partial: [const { Vec::new() }; CLASSES],
    unswept: [const { Vec::new() }; CLASSES],
    free: Vec::new(),
    free_low: 0,
    past_lows: VecDeque::new(),
    released: Vec::new(),
    arena_next: 0,
    arena_end: 0,
    large: Vec::new(),
    pending_large: Vec::new(),
    block_bytes: 0,
    large_bytes: 0,
    lazy_sweep: true,
});

/// Before a fork, after the thread registry (the lock order).
pub(super) fn lock_for_fork() {
    crate::gc::fork::held::keep(heap());
}

fn heap() -> MutexGuard<'static, Inner> {
    HEAP.lock().unwrap_or_else(|e| e.into_inner())
}

/// Heap limit in bytes (`usize::MAX`: none).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Pacer: percent growth over the last live size (`u32::MAX`: off).
static GC_PERCENT: AtomicU32 = AtomicU32::new(100);
static MIN_TRIGGER: AtomicUsize = AtomicUsize::new(4 << 20);
/// Bytes of allocation after which the next collection starts.
static TRIGGER: AtomicUsize = AtomicUsize::new(4 << 20);
/// Bytes handed to allocation buffers and large objects since the last
/// collection.
static ALLOCATED_SINCE_GC: AtomicUsize = AtomicUsize::new(0);

/// Applies the heap-related settings.
pub(crate) fn configure(heap_limit: Option<usize>, gc_percent: Option<u32>, min_trigger: usize) {
    set_limit(heap_limit);
    GC_PERCENT.store(gc_percent.unwrap_or(u32::MAX), Ordering::Relaxed);
    MIN_TRIGGER.store(min_trigger, Ordering::Relaxed);
    TRIGGER.store(min_trigger, Ordering::Relaxed);
}

/// Sets or lifts the heap limit.
pub(crate) fn set_limit(heap_limit: Option<usize>) {
    LIMIT.store(heap_limit.unwrap_or(usize::MAX), Ordering::Relaxed);
}

fn over_trigger() -> bool {
    GC_PERCENT.load(Ordering::Relaxed) != u32::MAX
        && ALLOCATED_SINCE_GC.load(Ordering::Relaxed) >= TRIGGER.load(Ordering::Relaxed)
}

/// The largest [`size`] so far.
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Bytes of heap: small-object blocks (free ones included, given-back ones
/// not) and large objects; and the largest that has been.
pub(crate) fn size() -> (usize, usize) {
    let heap = heap();
    (heap.size(), PEAK.load(Ordering::Relaxed))
}

/// Sets the pacer's growth percentage (`None`: no automatic collections).
pub(crate) fn set_gc_percent(percent: Option<u32>) {
    GC_PERCENT.store(percent.unwrap_or(u32::MAX), Ordering::Relaxed);
}

impl Inner {
    fn size(&self) -> usize {
        self.block_bytes + self.large_bytes
    }

    /// A wholly free block for `class` from the free list, if any.
    fn take_swept_free_block(&mut self, class: u8) -> Option<u32> {
        if self.free.is_empty() {
            return None;
        }
        self.take_free_block(class).ok()
    }

    /// A wholly free block for `class`: from the free list, or carved anew
    /// within the heap limit. Every cell is free (handle word 0), laid out
    /// for `class`.
    fn take_free_block(&mut self, class: u8) -> Result<u32> {
        if let Some(id) = self.free.pop() {
            self.free_low = self.free_low.min(self.free.len());
            let block = &mut self.blocks[id as usize];
            if block.class != class {
                // Its free cells are laid out for another size class, and
                // only their handle words are cleared: the new class's
                // cell headers would fall on old payloads. Start from zero
                // (atomically: a thread validating a stale handle may read
                // an old handle word meanwhile).
                let words = (block.base + BLOCK_HEADER) as *const AtomicU64;
                for i in 0..(BLOCK - BLOCK_HEADER) / 8 {
                    // SAFETY: an aligned word of a free block: no object, no
                    // owner but us.
                    unsafe { &*words.add(i) }.store(0, Ordering::Relaxed);
                }
            }
            block.class = class;
            return Ok(id);
        }
        if self.size().saturating_add(BLOCK) > LIMIT.load(Ordering::Relaxed) {
            return Err(Error::HeapLimit);
        }
        if let Some(id) = self.released.pop() {
            self.block_bytes += BLOCK;
            PEAK.fetch_max(self.size(), Ordering::Relaxed);
            self.blocks[id as usize].class = class;
            return Ok(id);
        }
        if self.arena_next == self.arena_end {
            // SAFETY: an anonymous private mapping; no existing memory is
            // touched.
            let p = unsafe {
                libc::mmap(
                    ptr::null_mut(),
                    ARENA + BLOCK,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(Error::OutOfMemory);
            }
            // Blocks are BLOCK-aligned, so an object finds its block's
            // header by masking its address; the unused rest stays reserved.
            self.arena_next = (p as usize).next_multiple_of(BLOCK);
            self.arena_end = self.arena_next + ARENA;
        }
        if self.blocks.len() >= NO_BLOCK as usize {
            return Err(Error::OutOfMemory);
        }
        let base = self.arena_next;
        self.arena_next += BLOCK;
        self.block_bytes += BLOCK;
        PEAK.fetch_max(self.size(), Ordering::Relaxed);
        self.blocks.push(Block {
            base,
            class,
            state: BlockState::Free,
            swept: 0,
        });
        Ok(self.blocks.len() as u32 - 1)
    }

    /// The end of a cycle: gives back free blocks that no allocation needed
    /// for [`IDLE_RELEASE`] (below the free list's low-water marks of every
    /// cycle since), keeping `keep` bytes of free blocks. A block given back
    /// costs a page fault per page at its next use.
    fn release_idle_blocks(&mut self, keep: usize) {
        let now = Instant::now();
        self.past_lows.push_back((now, self.free_low));
        self.free_low = self.free.len();
        let Some(horizon) = now.checked_sub(IDLE_RELEASE) else {
            return;
        };
        // The oldest entry is needed only while the next one is younger
        // than the horizon.
        while self.past_lows.len() > 1 && self.past_lows[1].0 <= horizon {
            self.past_lows.pop_front();
        }
        if self.past_lows[0].0 > horizon {
            return; // not watched for long enough yet
        }
        let idle = self
            .past_lows
            .iter()
            .map(|&(_, low)| low)
            .min()
            .unwrap_or(0);
        let excess = (self.free.len() * BLOCK).saturating_sub(keep) / BLOCK;
        self.release_oldest_free(excess.min(idle));
    }

    /// Gives the `n` longest-free blocks (at most all) back to the system.
    fn release_oldest_free(&mut self, n: usize) {
        let n = n.min(self.free.len());
        for i in 0..n {
            let id = self.free[i];
            let block = &mut self.blocks[id as usize];
            // SAFETY: the block is free (no object, no owner) and inside one
            // of our mappings; the range stays mapped and reads as zeros.
            unsafe { libc::madvise(block.base as *mut libc::c_void, BLOCK, libc::MADV_DONTNEED) };
            block.state = BlockState::Released;
            self.block_bytes -= BLOCK;
            self.released.push(id);
        }
        self.free.drain(..n);
        // Positions in the free list moved down by n.
        self.free_low = self.free_low.saturating_sub(n);
        for (_, low) in &mut self.past_lows {
            *low = low.saturating_sub(n);
        }
    }
}

// ---- allocation ----------------------------------------------------------

/// Allocates a zeroed object of the fixed-size type `ty` (a safepoint).
///
/// [`Error::WrongTypeKind`] for a variable-length type,
/// [`Error::HeapLimit`] when the heap is full even after a collection.
#[inline(always)]
pub fn alloc(ty: TypeId) -> Result<Handle> {
    let Some((size, class)) = types::info(ty).struct_size_class() else {
        return Err(Error::WrongTypeKind);
    };
    let ts = threads::current()?;
    threads::poll(ts);
    alloc_object(ts, ty.to_raw(), size, class)
}

/// Allocates a zeroed object of the variable-length type `ty` (a
/// safepoint): `len` handles for a handle-array type, `len` bytes for a
/// pointer-free one.
///
/// [`Error::WrongTypeKind`] for a fixed-size type, [`Error::TooLarge`]
/// above [`MAX_OBJECT_SIZE`](crate::precise::MAX_OBJECT_SIZE),
/// [`Error::HeapLimit`] when the heap is full even after a collection.
#[inline]
pub fn alloc_array(ty: TypeId, len: usize) -> Result<Handle> {
    let size = types::array_size(types::info(ty), len)?;
    let ts = threads::current()?;
    threads::poll(ts);
    alloc_object(ts, ty.to_raw(), size as u32, class_of(size))
}

/// Allocates an object of `size` payload bytes and type `type_id`, whose
/// size class is `class` (from [`class_of`]). `ts` is the calling thread,
/// which has just passed a safepoint poll.
#[inline(always)]
fn alloc_object(ts: &ThreadState, type_id: u32, size: u32, class: u8) -> Result<Handle> {
    if class != LARGE {
        // SAFETY: the calling thread is running and owns its state; the
        // borrow ends before anything else can touch it.
        let local = unsafe { ts.local() };
        let cell = CELL[class as usize] as usize;
        let buf = &mut local.heap.bufs[class as usize];
        if buf.limit - buf.cursor >= cell {
            if let Some(handle) = local.handles.pop() {
                let p = buf.cursor;
                buf.cursor = p + cell;
                // SAFETY: p is a free cell of this thread's run.
                return Ok(unsafe {
                    init_object(ts, p as *mut Header, type_id, size, handle, true)
                });
            }
        }
    }
    alloc_slow(ts, type_id, size, class)
}

/// Writes the header of a new object and gives it a handle. The only place
/// that writes a birth mark.
///
/// # Safety
/// `hdr` is a free cell (or zeroed large allocation) of at least
/// `HEADER + size` bytes owned by this thread; `handle` was just popped
/// from this thread's handle cache.
#[inline(always)]
unsafe fn init_object(
    ts: &ThreadState,
    hdr: *mut Header,
    type_id: u32,
    size: u32,
    handle: u64,
    small: bool,
) -> Handle {
    if cfg!(debug_assertions) {
        // SAFETY: as below.
        unsafe { check_and_clear_poison(hdr, size as usize) };
    } else if small {
        // SAFETY: a free cell of ours with room for the payload rounded up
        // to 8 (cells are multiples of 8); large objects come zeroed.
        unsafe { zero_payload(hdr, size as usize) };
    }
    let (mark, grey) = collector::birth_mode();
    // SAFETY: the caller guarantees hdr is ours and large enough. Nobody
    // reads these fields before the handle matches; a validator holding a
    // stale handle reads only the (atomic) handle word.
    unsafe {
        std::ptr::addr_of_mut!((*hdr).size).write(size);
        std::ptr::addr_of_mut!((*hdr).type_lo).write(type_id as u16);
        std::ptr::addr_of_mut!((*hdr).type_hi).write((type_id >> 16) as u8);
        (*hdr).mark.store(mark, Ordering::Relaxed);
        (*hdr).handle.store(handle, Ordering::Release);
    }
    ts.count_allocation();
    // SAFETY: handle is fresh from our cache; the header is initialised.
    let h = unsafe { handles::publish(handle, hdr) };
    if grey {
        // Born while roots are being snapshotted: traced by this cycle
        // (logged once published, so that the marker can resolve it).
        collector::log(ts, handle);
    }
    h
}

/// Written over the payload of freed cells in debug builds.
const POISON: u8 = 0xDB;
/// Written in the size word of freed cells in debug builds.
const FREED_STAMP: u32 = 0xF4EE_D0DE;

/// Debug builds: before a cell is reused, checks that nobody wrote to it
/// since it was freed (its payload still all poison, its stamp intact, or
/// all zero if never used), then zeroes it. A write through a dangling
/// pointer is reported here instead of corrupting the new object.
///
/// # Safety
/// `hdr` is a free cell (or fresh large allocation) of at least
/// `HEADER + size` bytes owned by the caller.
unsafe fn check_and_clear_poison(hdr: *mut Header, size: usize) {
    // SAFETY: forwarded from the caller.
    unsafe {
        let stamp = (*hdr).size;
        let payload = std::slice::from_raw_parts_mut(Header::payload(hdr), size);
        let fill = if stamp == FREED_STAMP { POISON } else { 0 };
        if stamp != 0 && stamp != FREED_STAMP {
            crate::abort(&format!(
                "defergc: precise: heap corruption: free cell {hdr:p} has size word {stamp:#x}"
            ));
        }
        if let Some(i) = payload.iter().position(|&b| b != fill) {
            crate::abort(&format!(
                "defergc: precise: use after free: byte {i} of freed cell {hdr:p} was                  written ({:#x})",
                payload[i]
            ));
        }
        if fill != 0 {
            payload.fill(0);
        }
    }
}

#[cold]
#[inline(never)]
fn alloc_slow(ts: &ThreadState, type_id: u32, size: u32, class: u8) -> Result<Handle> {
    ensure_handles(ts)?;
    let hdr = if class == LARGE {
        large_cell(ts, size)?
    } else {
        small_cell(ts, class)?
    };
    // SAFETY: the calling thread is running and owns its state.
    let local = unsafe { ts.local() };
    // Collections (possibly run by small_cell) leave handle caches alone.
    let Some(handle) = local.handles.pop() else {
        unreachable!("defergc: precise: handle cache emptied by a collection")
    };
    // SAFETY: hdr is a free cell of ours (a zeroed one if large), handle
    // a fresh handle.
    Ok(unsafe { init_object(ts, hdr, type_id, size, handle, class != LARGE) })
}

/// Makes sure this thread's handle cache is not empty.
fn ensure_handles(ts: &ThreadState) -> Result<()> {
    // SAFETY: the calling thread is running and owns its state.
    let local = unsafe { ts.local() };
    if !local.handles.is_empty() {
        return Ok(());
    }
    match local.handles.refill() {
        Err(Error::OutOfHandles) => {
            // Handles freed by a collection come back at its end.
            collector::collect_for_alloc(ts, true);
            // SAFETY: as above; the collection is over.
            unsafe { ts.local() }.handles.refill()
        }
        other => other,
    }
}

/// A free cell of `class` for this thread, taking a new block if needed:
/// a partly free one, else an unswept one (swept here, its dead objects'
/// handles going to this thread's cache), else a wholly free or new one.
fn small_cell(ts: &ThreadState, class: u8) -> Result<*mut Header> {
    let c = class as usize;
    let cell = CELL[c] as usize;
    let mut collected = false;
    let mut collected_for_limit = false;
    let mut swept_all = false;
    loop {
        {
            // SAFETY: the calling thread is running and owns its state; the
            // borrow ends before any collection below.
            let buf = &mut unsafe { ts.local() }.heap.bufs[c];
            if buf.limit - buf.cursor >= cell {
                let p = buf.cursor;
                buf.cursor = p + cell;
                return Ok(p as *mut Header);
            }
            if buf.block != NO_BLOCK && next_run(buf, cell) {
                continue;
            }
        }
        let mut heap = heap();
        {
            // SAFETY: as above.
            let buf = &mut unsafe { ts.local() }.heap.bufs[c];
            if buf.block != NO_BLOCK {
                heap.file_exhausted(buf.block);
                *buf = Bump::EMPTY;
            }
        }
        if !collected && over_trigger() {
            drop(heap);
            collected = true;
            collector::collect_for_alloc(ts, false);
            continue;
        }
        let lazy_sweep = heap.lazy_sweep;
        // A wholly free block already swept (by the collector thread,
        // which sweeps concurrently) before sweeping one ourselves.
        let (id, fresh) = if let Some(id) = heap.partial[c].pop() {
            (id, Fresh::No)
        } else if let Some(id) = heap.take_swept_free_block(class) {
            (id, Fresh::Whole)
        } else if let Some(id) = lazy_sweep.then(|| heap.unswept[c].pop()).flatten() {
            (id, Fresh::Unswept)
        } else {
            match heap.take_free_block(class) {
                Ok(id) => (id, Fresh::Whole),
                Err(Error::HeapLimit) if !swept_all => {
                    // Unswept blocks of other classes may be wholly free.
                    drop(heap);
                    swept_all = true;
                    sweep_all_unswept(collector::completed_id(), &mut |h| {
                        // SAFETY: as above; no other borrow is live.
                        unsafe { ts.local() }.handles.push(h)
                    });
                    continue;
                }
                Err(Error::HeapLimit) if !collected_for_limit => {
                    drop(heap);
                    collected = true;
                    collected_for_limit = true;
                    swept_all = false;
                    collector::collect_for_alloc(ts, true);
                    continue;
                }
                Err(e) => return Err(e),
            }
        };
        let block = &mut heap.blocks[id as usize];
        block.state = BlockState::Owned;
        if fresh != Fresh::No {
            // Wholly free, or swept below: no dead object of the last cycle
            // (which cannot complete while this thread sweeps: it has not
            // acknowledged that cycle's snapshot yet).
            block.swept = collector::completed_id();
        }
        let base = block.base;
        drop(heap);
        let start = first_cell(base);
        let end = start + cells_per_block(cell) * cell;
        let mut whole = fresh == Fresh::Whole;
        if fresh == Fresh::Unswept {
            // SAFETY: the block is ours now; the world is not stopped, but
            // its dead objects are unreachable and fail validation.
            let local = unsafe { ts.local() };
            // SAFETY: as above.
            let free = unsafe {
                sweep_cells(base, cell, collector::live_mark(), |h| {
                    local.handles.push(h)
                })
            };
            whole = free.free == cells_per_block(cell);
        }
        // SAFETY: as above.
        let buf = &mut unsafe { ts.local() }.heap.bufs[c];
        *buf = Bump {
            cursor: start,
            limit: start,
            scan: start,
            end,
            block: id,
        };
        if whole {
            // A wholly free block is one run: no need to look at its cells.
            buf.limit = end;
            buf.scan = end;
            ALLOCATED_SINCE_GC.fetch_add(end - start, Ordering::Relaxed);
        }
    }
}

/// Where a block taken for allocation comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fresh {
    /// Partly free, swept: look for runs of free cells.
    No,
    /// Unswept: sweep it first.
    Unswept,
    /// Wholly free: one run.
    Whole,
}

/// Moves `buf` to the next run of free cells in its block; false when the
/// block has none left.
fn next_run(buf: &mut Bump, cell: usize) -> bool {
    let is_free = |p: usize| {
        // SAFETY: a cell of an owned block: free (zero) or an object.
        unsafe { (*(p as *const Header)).handle.load(Ordering::Relaxed) == 0 }
    };
    let mut p = buf.scan;
    while p < buf.end && !is_free(p) {
        p += cell;
    }
    if p >= buf.end {
        buf.scan = buf.end;
        return false;
    }
    let start = p;
    while p < buf.end && is_free(p) {
        p += cell;
    }
    buf.cursor = start;
    buf.limit = p;
    buf.scan = p;
    ALLOCATED_SINCE_GC.fetch_add(p - start, Ordering::Relaxed);
    true
}

/// Zeroed memory for a large object of `size` payload bytes.
fn large_cell(ts: &ThreadState, size: u32) -> Result<*mut Header> {
    let bytes = HEADER + size as usize;
    let mut collected = false;
    let mut collected_for_limit = false;
    loop {
        let mut heap = heap();
        if !collected && over_trigger() {
            drop(heap);
            collected = true;
            collector::collect_for_alloc(ts, false);
            continue;
        }
        if heap.size().saturating_add(bytes) > LIMIT.load(Ordering::Relaxed) {
            // Wholly free blocks, found by sweeping, can be given back.
            drop(heap);
            sweep_all_unswept(collector::completed_id(), &mut |h| {
                // SAFETY: the calling thread's own state, no other borrow.
                unsafe { ts.local() }.handles.push(h)
            });
            heap = self::heap();
            heap.release_oldest_free(usize::MAX);
        }
        if heap.size().saturating_add(bytes) > LIMIT.load(Ordering::Relaxed) {
            drop(heap);
            if collected_for_limit {
                return Err(Error::HeapLimit);
            }
            collected = true;
            collected_for_limit = true;
            collector::collect_for_alloc(ts, true);
            continue;
        }
        // Reserve the bytes, then zero-allocate without the lock.
        heap.large_bytes += bytes;
        PEAK.fetch_max(heap.size(), Ordering::Relaxed);
        drop(heap);
        ALLOCATED_SINCE_GC.fetch_add(bytes, Ordering::Relaxed);
        // SAFETY: plain allocation; 16-byte alignment is glibc's on 64-bit.
        let p = unsafe { libc::calloc(1, bytes) }.cast::<Header>();
        let mut heap = self::heap();
        if p.is_null() {
            heap.large_bytes -= bytes;
            return Err(Error::OutOfMemory);
        }
        debug_assert_eq!(p as usize % GRANULE, 0, "calloc returned unaligned memory");
        heap.large.push(Large { hdr: p, bytes });
        return Ok(p);
    }
}

// ---- collection support --------------------------------------------------

/// Gives up a thread's blocks (at the start of a cycle, or when the thread
/// unregisters): the sweep then sees every block unowned.
pub(crate) fn retire(local: &mut LocalHeap) {
    let mut heap = heap();
    for buf in &mut local.bufs {
        if buf.block != NO_BLOCK {
            let id = buf.block;
            if heap.blocks[id as usize].swept == collector::completed_id() {
                let block = &mut heap.blocks[id as usize];
                block.state = BlockState::Partial;
                let class = block.class as usize;
                heap.partial[class].push(id);
            } else {
                heap.file_unswept(id);
            }
        }
        *buf = Bump::EMPTY;
    }
}

/// What sweeping one block found.
#[derive(Clone, Copy, Debug, Default)]
struct Cells {
    free: usize,
}

/// Frees every object in the block at `base` (cells of `cell` bytes) whose
/// mark is not `live_mark`, giving each one's handle (next generation) to
/// `freed`; returns how many cells are free afterwards.
///
/// # Safety
/// The caller owns the block (no thread allocates in it, and no collection
/// marks meanwhile), every object in it was marked by the cycle whose mark
/// is `live_mark` if reachable, and that cycle has completed marking.
unsafe fn sweep_cells(
    base: usize,
    cell: usize,
    live_mark: u8,
    mut freed: impl FnMut(u64),
) -> Cells {
    let cells = cells_per_block(cell);
    let mut out = Cells::default();
    for i in 0..cells {
        let hdr = (first_cell(base) + i * cell) as *mut Header;
        prefetch(hdr.cast::<u8>().wrapping_add(1024));
        // SAFETY: a cell of an owned block.
        let (handle, mark) = unsafe {
            (
                (*hdr).handle.load(Ordering::Relaxed),
                (*hdr).mark.load(Ordering::Relaxed),
            )
        };
        if handle == 0 {
            out.free += 1;
        } else if mark != live_mark {
            debug_assert!(
                handles::names(handle, hdr),
                "defergc: precise: heap corruption: header {hdr:p} and handle {handle:#x} disagree"
            );
            freed(handles::next_generation(handle));
            // SAFETY: a dead object's cell; once its handle word is 0 the
            // handle is stale. Debug builds poison the whole cell.
            unsafe { free_cell(hdr, cell) };
            out.free += 1;
        }
    }
    out
}

/// Prefetches the cache line at `p` for writing soon (a hint).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint, valid for any address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Frees a dead cell: its handle word becomes 0, which makes it free and
/// its handle stale. The rest is left as it is (allocation zeroes the
/// payload it uses, see [`init_object`]); debug builds poison the first
/// `used` bytes after the header and stamp the size word instead.
///
/// # Safety
/// `hdr` is a dead object's cell of at least `used` bytes, owned by the
/// caller. Other threads may only read its handle word and, if that still
/// matched, its mark (validating a stale handle): both are atomics; nothing
/// else of a dead object is read by anyone.
#[inline(always)]
unsafe fn free_cell(hdr: *mut Header, used: usize) {
    // SAFETY: forwarded from the caller.
    unsafe {
        (*hdr).handle.store(0, Ordering::Relaxed);
        if cfg!(debug_assertions) {
            // Poisoned and stamped, checked when the cell is reused.
            (*hdr).mark.store(0, Ordering::Relaxed);
            ptr::addr_of_mut!((*hdr).type_lo).write(0);
            ptr::addr_of_mut!((*hdr).type_hi).write(0);
            ptr::addr_of_mut!((*hdr).size).write(FREED_STAMP);
            ptr::write_bytes(Header::payload(hdr), POISON, used - HEADER);
        }
    }
}

/// Zeroes the first `bytes` (rounded up to 8) of a new object's payload.
///
/// # Safety
/// The payload at `hdr` has room for `bytes` rounded up to 8, and is the
/// caller's (a cell it is allocating).
#[inline(always)]
unsafe fn zero_payload(hdr: *mut Header, bytes: usize) {
    let payload = Header::payload(hdr);
    // SAFETY: forwarded from the caller; the payload is 8-byte aligned.
    // Most objects are small: explicit word stores (a loop would become a
    // memset call per object).
    unsafe {
        match bytes.next_multiple_of(8) {
            0 => {}
            8 => payload.cast::<[u64; 1]>().write([0; 1]),
            16 => payload.cast::<[u64; 2]>().write([0; 2]),
            24 => payload.cast::<[u64; 3]>().write([0; 3]),
            32 => payload.cast::<[u64; 4]>().write([0; 4]),
            40 => payload.cast::<[u64; 5]>().write([0; 5]),
            48 => payload.cast::<[u64; 6]>().write([0; 6]),
            n => ptr::write_bytes(payload, 0, n),
        }
    }
}

/// Sweeps every unswept block, one at a time (each owned while it is
/// swept), freeing the objects that cycle `cycle` (completed) did not mark,
/// and files it as free, partly free or full. Stops (leaving the rest
/// unswept) if a marking starts meanwhile.
pub(crate) fn sweep_all_unswept(cycle: u32, freed: &mut impl FnMut(u64)) {
    let mut class = 0;
    while class < CLASSES {
        let mut heap = heap();
        if !heap.lazy_sweep {
            return;
        }
        let Some(id) = heap.unswept[class].pop() else {
            class += 1;
            continue;
        };
        let block = &mut heap.blocks[id as usize];
        block.state = BlockState::Owned;
        let base = block.base;
        drop(heap);
        let cell = CELL[class] as usize;
        // SAFETY: the block is ours until we file it below; no marking runs
        // (lazy_sweep was on when we took it, and a marking only starts
        // tracing once every thread, the collector included, is done
        // sweeping what it took), and `cycle`'s marking is complete.
        let cells = unsafe { sweep_cells(base, cell, cycle as u8, &mut *freed) };
        let mut heap = self::heap();
        heap.blocks[id as usize].swept = cycle;
        heap.file(id, cells.free == cells_per_block(cell), cells.free > 0);
    }
}

impl Inner {
    /// Puts a swept block (owned by the caller) in the list its free cells
    /// call for.
    fn file(&mut self, id: u32, all_free: bool, some_free: bool) {
        let block = &mut self.blocks[id as usize];
        block.state = if all_free {
            self.free.push(id);
            BlockState::Free
        } else if some_free {
            self.partial[block.class as usize].push(id);
            BlockState::Partial
        } else {
            BlockState::Full
        };
    }

    /// Files a block that may hold dead objects of the last cycle.
    fn file_unswept(&mut self, id: u32) {
        let block = &mut self.blocks[id as usize];
        block.state = BlockState::Unswept;
        self.unswept[block.class as usize].push(id);
    }

    /// Files a block whose owner found no free run left in it: full, or
    /// unswept if a cycle completed since it was last swept.
    fn file_exhausted(&mut self, id: u32) {
        if self.blocks[id as usize].swept == collector::completed_id() {
            self.blocks[id as usize].state = BlockState::Full;
        } else {
            self.file_unswept(id);
        }
    }
}

/// Switches lazy sweeping on or off (off while a marking runs).
pub(crate) fn set_lazy_sweep(on: bool) {
    heap().lazy_sweep = on;
}

/// A cycle starts: the pacer counts allocation from here.
pub(crate) fn cycle_started() {
    ALLOCATED_SINCE_GC.store(0, Ordering::Relaxed);
}

/// What the end of marking found.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AfterMark {
    /// Large objects freed.
    pub(crate) large_freed: u64,
    /// Bytes of the cells holding live small objects.
    pub(crate) small_live_bytes: usize,
}

/// End of marking for `cycle`, mutators running: unlinks the large objects
/// the cycle did not mark (their entries point to the tombstone now, their
/// handles go to `freed`, their memory is released by
/// [`free_pending_large`] once every thread has passed a safepoint), and
/// files every unowned small-object block that holds objects: full if
/// every cell was marked, else unswept. Blocks owned by a thread stay
/// owned: they were last swept before this cycle completed, so their owner
/// files them unswept when it gives them up (at the latest at the next
/// snapshot). Every block's live counter restarts at zero.
///
/// # Safety
/// Marking for `cycle` is complete and no sweep runs.
#[inline(never)]
pub(crate) unsafe fn after_mark(cycle: u32, freed: &mut Freed) -> AfterMark {
    let mut guard = heap();
    let heap = &mut *guard;
    let mut out = AfterMark::default();
    for list in &mut heap.partial {
        list.clear();
    }
    for list in &mut heap.unswept {
        list.clear();
    }
    for (id, block) in heap.blocks.iter_mut().enumerate() {
        if matches!(block.state, BlockState::Free | BlockState::Released) {
            continue;
        }
        // SAFETY: the block's header word, which only the marker (finished)
        // and this function touch.
        let live = unsafe { &*(block.base as *const AtomicU32) }.swap(0, Ordering::Relaxed);
        let cell = CELL[block.class as usize] as usize;
        out.small_live_bytes += live as usize * cell;
        match block.state {
            BlockState::Owned => {}
            _ if live as usize == cells_per_block(cell) => {
                // Every cell holds a live object: nothing to sweep.
                block.state = BlockState::Full;
                block.swept = cycle;
            }
            _ => {
                block.state = BlockState::Unswept;
                heap.unswept[block.class as usize].push(id as u32);
            }
        }
    }
    let mark = cycle as u8;
    let mut i = 0;
    while i < heap.large.len() {
        let hdr = heap.large[i].hdr;
        // SAFETY: a listed large object: zeroed memory, whose header its
        // allocating thread may be initialising right now (the handle word
        // last, with release).
        let (handle, m) = unsafe {
            let handle = (*hdr).handle.load(Ordering::Acquire);
            (handle, (*hdr).mark.load(Ordering::Relaxed))
        };
        // Handle 0: still being allocated, by a thread that has seen this
        // cycle's black allocation (it acknowledged every round): live.
        if handle == 0 || m == mark {
            i += 1;
        } else {
            let large = heap.large.swap_remove(i);
            debug_assert!(
                handles::names(handle, hdr),
                "defergc: precise: heap corruption"
            );
            // Its entry stops pointing there now; its memory is released
            // once every thread has passed a safepoint.
            handles::free_large(handle, freed);
            out.large_freed += 1;
            heap.pending_large.push(large);
        }
    }
    out
}

/// Releases the memory of the large objects the last [`after_mark`]
/// unlinked. Call only once every thread has passed a safepoint since (a
/// thread resolving a stale handle may have loaded the old entry before the
/// tombstone, but has finished with it by its next safepoint).
pub(crate) fn free_pending_large() {
    let pending = {
        let mut heap = heap();
        let pending = std::mem::take(&mut heap.pending_large);
        heap.large_bytes -= pending.iter().map(|l| l.bytes).sum::<usize>();
        pending
    };
    for large in pending {
        // SAFETY: allocated by calloc in large_cell, dead, unlisted, and no
        // thread can still be reading it (the caller's obligation).
        unsafe { libc::free(large.hdr.cast()) };
    }
}

/// Ends a cycle for the heap: sets the pacer's next trigger from the heap
/// bytes found live, and gives back the memory of free blocks beyond what
/// the next cycle's allocation needs. Allocation since the cycle started
/// counts towards the next trigger (those objects were born black: live for
/// this cycle), so the heap peaks near `live * (1 + gc_percent / 100)` when
/// marking keeps up with allocation. When it does not, what the mutators
/// allocate during a long marking comes on top (there are no mark assists):
/// `gcbench --workload live-heap` peaks at about 340 MB for 100 MB live.
/// Starting cycles earlier by that amount (as Go's trigger ratio does) was
/// tried: 322 MB there, and GCBench ran 25% more cycles and 3% slower.
pub(crate) fn end_cycle(live_heap_bytes: usize) {
    let percent = GC_PERCENT.load(Ordering::Relaxed);
    let min = MIN_TRIGGER.load(Ordering::Relaxed);
    let trigger = if percent == u32::MAX {
        min
    } else {
        let trigger = (live_heap_bytes.saturating_mul(percent as usize) / 100).max(min);
        TRIGGER.store(trigger, Ordering::Relaxed);
        trigger
    };
    heap().release_idle_blocks(trigger);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_ascend_and_cover_every_small_size() {
        assert_eq!(CELL[0], 16);
        assert_eq!(CELL[CLASSES - 1] as usize, MAX_SMALL_CELL);
        assert!(CELL.windows(2).all(|w| w[0] < w[1]));
        assert!(CELL.iter().all(|c| *c as usize % GRANULE == 0));
        for size in 0..=MAX_SMALL_CELL - HEADER {
            let class = class_of(size) as usize;
            let cell = CELL[class] as usize;
            assert!(cell >= size + HEADER, "size {size} in class {class}");
            assert!(class == 0 || (CELL[class - 1] as usize) < size + HEADER);
        }
        assert_eq!(class_of(MAX_SMALL_CELL - HEADER + 1), LARGE);
        assert_eq!(class_of(usize::MAX), LARGE);
    }
}
