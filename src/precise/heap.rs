//! The heap: object headers, size classes, blocks, per-thread bump
//! buffers, large objects, and sweeping. Objects never move.
//!
//! # Objects
//!
//! Every object starts with a 16-byte [`Header`] (payload size, type id,
//! mark word, handle index); the payload follows, 16-byte aligned. The mark
//! word holds a cycle id: an object is marked in cycle `c` when its mark
//! word equals `c`. Allocation writes [`collector::birth_mark`] there, in
//! one place ([`init_object`]), so that allocating black is a change to
//! that one function.
//!
//! # Small objects
//!
//! Objects whose cell (header + payload, rounded up to the size class) is
//! at most 8 KiB live in 128 KiB blocks of one size class each, carved from
//! 8 MiB anonymous mappings. Each thread owns at most one block per class
//! and bump-allocates through runs of consecutive free cells in it
//! ([`LocalHeap`]): the fast path is a compare and an add, with no lock and
//! no atomic read-modify-write. When the block has no free run left, the
//! thread takes a partly free block, a wholly free one, or a new one, under
//! the heap lock.
//!
//! Invariant: a free cell is all zeros (fresh mappings are; the sweep
//! zeroes what it frees), so allocation only writes the header and a free
//! cell is recognised by its type id 0.
//!
//! # Large objects
//!
//! Larger objects are `calloc`'d one by one and listed for the sweep.
//!
//! # Sweeping, limits, pacing
//!
//! [`sweep`] runs with the world stopped after marking: it frees every
//! object whose mark word is not the cycle id (its handle goes to the
//! cycle's pending list, its cell is zeroed), and rebuilds the lists of
//! partly free and free blocks. Large objects freed by a cycle are released
//! at [`end_cycle`], once the cycle is over. At the start of a cycle every
//! thread's buffers are retired ([`retire`]), so no block is owned while the
//! sweep runs.
//!
//! Free blocks beyond the next cycle's allocation budget are given back to
//! the system at the end of a cycle (`MADV_DONTNEED`: the address range
//! stays ours and reads as zeros), and all of them before a large object
//! would fail the heap limit; the heap size counts only blocks that are
//! not given back.
//!
//! The heap grows on demand. A new block or large object that would take
//! the heap past the configured limit triggers a full collection; if that
//! does not make room the allocation fails with [`Error::HeapLimit`]. A
//! collection is also triggered when the bytes handed to allocation
//! buffers since the last one exceed the pacer's trigger
//! (`max(min_trigger, live_bytes * gc_percent / 100)`).

use super::collector;
use super::error::{Error, Result};
use super::handles::{self, Freed, Handle};
use super::threads::{self, ThreadState};
use super::types::{self, Kind, TypeId};
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Bytes of an object header.
pub(crate) const HEADER: usize = 16;
const GRANULE: usize = 16;
/// Bytes of a small-object block.
pub(crate) const BLOCK: usize = 128 << 10;
/// Bytes mapped at a time and carved into blocks.
const ARENA: usize = 64 * BLOCK;
/// The largest small-object cell.
const MAX_SMALL_CELL: usize = 8192;
/// The size class of large objects.
pub(crate) const LARGE: u8 = u8::MAX;

/// The header in front of every object's payload.
#[repr(C)]
pub(crate) struct Header {
    /// Payload bytes.
    pub(crate) size: u32,
    /// Registered type id; 0 marks a free cell.
    pub(crate) type_id: u32,
    /// The id of the last cycle that marked the object (or its birth mark).
    pub(crate) mark: AtomicU32,
    /// The object's index in the handle table.
    pub(crate) index: u32,
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER);

impl Header {
    /// The payload of the object whose header is at `hdr`.
    #[inline(always)]
    pub(crate) fn payload(hdr: *mut Header) -> *mut u8 {
        hdr.cast::<u8>().wrapping_add(HEADER)
    }
}

/// Number of small size classes.
pub(crate) const CLASSES: usize = 36;

/// Cell bytes of each class: 16..256 by 16, then four steps per doubling
/// up to 8 KiB (at most 25% internal waste above 256 bytes).
static CELL: [u32; CLASSES] = {
    let mut cells = [0u32; CLASSES];
    let mut i = 0;
    while i < 16 {
        cells[i] = (i as u32 + 1) * 16;
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

/// The class of a cell of `g` granules, for `g` up to 8 KiB / 16.
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
    /// No free cell known; in no list until the next sweep.
    Full,
}

struct Block {
    base: usize,
    class: u8,
    state: BlockState,
}

struct Large {
    hdr: *mut Header,
    bytes: usize,
}

struct Inner {
    blocks: Vec<Block>,
    partial: [Vec<u32>; CLASSES],
    free: Vec<u32>,
    released: Vec<u32>,
    /// Unused rest of the current mapping.
    arena_next: usize,
    arena_end: usize,
    large: Vec<Large>,
    /// Large objects freed by the running cycle, released at its end.
    pending_large: Vec<Large>,
    block_bytes: usize,
    large_bytes: usize,
}

// SAFETY: the raw pointers are to heap memory owned by this module and only
// touched under the heap lock or by the protocol in the module docs.
unsafe impl Send for Inner {}

static HEAP: Mutex<Inner> = Mutex::new(Inner {
    blocks: Vec::new(),
    partial: [const { Vec::new() }; CLASSES],
    free: Vec::new(),
    released: Vec::new(),
    arena_next: 0,
    arena_end: 0,
    large: Vec::new(),
    pending_large: Vec::new(),
    block_bytes: 0,
    large_bytes: 0,
});

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

    /// A wholly free block for `class`: from the free list, or carved anew
    /// within the heap limit. Its cells are all zero.
    fn take_free_block(&mut self, class: u8) -> Result<u32> {
        if let Some(id) = self.free.pop() {
            self.blocks[id as usize].class = class;
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
                    ARENA,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(Error::OutOfMemory);
            }
            self.arena_next = p as usize;
            self.arena_end = p as usize + ARENA;
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
        });
        Ok(self.blocks.len() as u32 - 1)
    }

    /// Gives the memory of free blocks back to the system until at most
    /// `keep` bytes of free blocks are left.
    fn release_free_blocks(&mut self, keep: usize) {
        while self.free.len() * BLOCK > keep {
            let Some(id) = self.free.pop() else { break };
            let block = &mut self.blocks[id as usize];
            // SAFETY: the block is free (no object, no owner) and inside one
            // of our mappings; the range stays mapped and reads as zeros.
            unsafe { libc::madvise(block.base as *mut libc::c_void, BLOCK, libc::MADV_DONTNEED) };
            block.state = BlockState::Released;
            self.block_bytes -= BLOCK;
            self.released.push(id);
        }
    }
}

// ---- allocation ----------------------------------------------------------

/// Allocates a zeroed object of the fixed-size type `ty` (a safepoint).
///
/// [`Error::WrongTypeKind`] for a variable-length type,
/// [`Error::HeapLimit`] when the heap is full even after a collection.
#[inline]
pub fn alloc(ty: TypeId) -> Result<Handle> {
    let info = types::info(ty);
    if info.kind != Kind::Struct {
        return Err(Error::WrongTypeKind);
    }
    let ts = threads::current()?;
    threads::poll(ts);
    alloc_object(ts, ty.to_raw(), info.size, info.class)
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
            if let Some(index) = local.handles.pop() {
                let p = buf.cursor;
                buf.cursor = p + cell;
                // SAFETY: p is a free, zeroed cell of this thread's run.
                return Ok(unsafe { init_object(ts, p as *mut Header, type_id, size, index) });
            }
        }
    }
    alloc_slow(ts, type_id, size, class)
}

/// Writes the header of a new object and gives it a handle. The only place
/// that writes a birth mark.
///
/// # Safety
/// `hdr` is a free, zeroed cell (or large allocation) of at least
/// `HEADER + size` bytes owned by this thread; `index` was just popped from
/// this thread's handle cache.
#[inline(always)]
unsafe fn init_object(
    ts: &ThreadState,
    hdr: *mut Header,
    type_id: u32,
    size: u32,
    index: u32,
) -> Handle {
    // SAFETY: the caller guarantees hdr is ours and large enough.
    unsafe {
        hdr.write(Header {
            size,
            type_id,
            mark: AtomicU32::new(collector::birth_mark()),
            index,
        })
    };
    ts.count_allocation(size);
    // SAFETY: index is fresh from our cache; the header is initialised.
    unsafe { handles::publish(index, hdr) }
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
    let Some(index) = local.handles.pop() else {
        unreachable!("defergc: precise: handle cache emptied by a collection")
    };
    // SAFETY: hdr is a fresh zeroed cell of ours, index a fresh handle.
    Ok(unsafe { init_object(ts, hdr, type_id, size, index) })
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

/// A free cell of `class` for this thread, taking a new block if needed.
fn small_cell(ts: &ThreadState, class: u8) -> Result<*mut Header> {
    let c = class as usize;
    let cell = CELL[c] as usize;
    let mut collected = false;
    let mut collected_for_limit = false;
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
                heap.blocks[buf.block as usize].state = BlockState::Full;
                *buf = Bump::EMPTY;
            }
        }
        if !collected && over_trigger() {
            drop(heap);
            collected = true;
            collector::collect_for_alloc(ts, false);
            continue;
        }
        let (id, whole) = match heap.partial[c].pop() {
            Some(id) => (id, false),
            None => match heap.take_free_block(class) {
                Ok(id) => (id, true),
                Err(Error::HeapLimit) if !collected_for_limit => {
                    drop(heap);
                    collected = true;
                    collected_for_limit = true;
                    collector::collect_for_alloc(ts, true);
                    continue;
                }
                Err(e) => return Err(e),
            },
        };
        let block = &mut heap.blocks[id as usize];
        block.state = BlockState::Owned;
        let base = block.base;
        drop(heap);
        let end = base + (BLOCK / cell) * cell;
        // SAFETY: as above.
        let buf = &mut unsafe { ts.local() }.heap.bufs[c];
        *buf = Bump {
            cursor: base,
            limit: base,
            scan: base,
            end,
            block: id,
        };
        if whole {
            // A wholly free block is one run: no need to look at its cells.
            buf.limit = end;
            buf.scan = end;
            ALLOCATED_SINCE_GC.fetch_add(end - base, Ordering::Relaxed);
        }
    }
}

/// Moves `buf` to the next run of free cells in its block; false when the
/// block has none left.
fn next_run(buf: &mut Bump, cell: usize) -> bool {
    let is_free = |p: usize| {
        // SAFETY: cells of an owned block are either free (zero) or objects
        // whose headers nobody writes outside a stopped world.
        unsafe { (*(p as *const Header)).type_id == 0 }
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
            heap.release_free_blocks(0);
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
            let block = &mut heap.blocks[buf.block as usize];
            block.state = BlockState::Partial;
            let class = block.class as usize;
            heap.partial[class].push(buf.block);
        }
        *buf = Bump::EMPTY;
    }
}

/// What a sweep found.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Swept {
    pub(crate) live_objects: u64,
    /// Payload bytes of the live objects.
    pub(crate) live_bytes: u64,
    /// Heap bytes the live objects occupy (cells, large allocations).
    pub(crate) live_heap_bytes: usize,
    pub(crate) freed_objects: u64,
}

/// Frees every object not marked with `cycle`; freed handles go to `freed`.
///
/// # Safety
/// The world is stopped, marking for `cycle` is complete, and every
/// thread's buffers were retired since the world stopped.
#[inline(never)]
pub(crate) unsafe fn sweep(cycle: u32, freed: &mut Freed) -> Swept {
    let mut guard = heap();
    let heap = &mut *guard;
    let mut swept = Swept::default();
    for list in &mut heap.partial {
        list.clear();
    }
    for (id, block) in heap.blocks.iter_mut().enumerate() {
        match block.state {
            BlockState::Free | BlockState::Released => continue,
            BlockState::Owned => {
                debug_assert!(false, "defergc: precise: block {id} still owned at sweep")
            }
            BlockState::Partial | BlockState::Full => {}
        }
        let cell = CELL[block.class as usize] as usize;
        let cells = BLOCK / cell;
        let mut free = 0;
        for i in 0..cells {
            let hdr = (block.base + i * cell) as *mut Header;
            // SAFETY: a cell of a carved block, and nothing else runs.
            let (type_id, size, mark) = unsafe {
                (
                    (*hdr).type_id,
                    (*hdr).size,
                    (*hdr).mark.load(Ordering::Relaxed),
                )
            };
            if type_id == 0 {
                free += 1;
            } else if mark == cycle {
                swept.live_objects += 1;
                swept.live_bytes += u64::from(size);
            } else {
                let used = (HEADER + size as usize).next_multiple_of(16).min(cell);
                // SAFETY: a dead object in a stopped world; its handle entry
                // is live and points here.
                unsafe { free_object(hdr, used, freed) };
                swept.freed_objects += 1;
                free += 1;
            }
        }
        swept.live_heap_bytes += (cells - free) * cell;
        block.state = if free == cells {
            heap.free.push(id as u32);
            BlockState::Free
        } else if free > 0 {
            heap.partial[block.class as usize].push(id as u32);
            BlockState::Partial
        } else {
            BlockState::Full
        };
    }
    let mut i = 0;
    while i < heap.large.len() {
        let hdr = heap.large[i].hdr;
        // SAFETY: a listed large object, initialised by its allocation.
        let (size, mark) = unsafe { ((*hdr).size, (*hdr).mark.load(Ordering::Relaxed)) };
        if mark == cycle {
            swept.live_objects += 1;
            swept.live_bytes += u64::from(size);
            swept.live_heap_bytes += heap.large[i].bytes;
            i += 1;
        } else {
            let large = heap.large.swap_remove(i);
            // SAFETY: dead and in a stopped world; memory released later.
            unsafe { free_handle(hdr, freed) };
            swept.freed_objects += 1;
            heap.pending_large.push(large);
        }
    }
    swept
}

/// Frees the handle of the dead object at `hdr`.
///
/// # Safety
/// As for [`free_object`].
unsafe fn free_handle(hdr: *mut Header, freed: &mut Freed) {
    // SAFETY: the caller guarantees hdr is a dead object with a live entry.
    let index = unsafe { (*hdr).index };
    debug_assert!(
        handles::names(index, hdr),
        "defergc: precise: heap corruption: header {hdr:p} and handle entry {index} disagree"
    );
    // SAFETY: see above.
    unsafe { handles::free(index, freed) };
}

/// Frees the dead small object at `hdr` whose first `used` bytes may be
/// non-zero: handle to `freed`, cell back to zeros.
///
/// # Safety
/// The world is stopped and `hdr` is a dead object whose handle entry is
/// live.
#[inline(always)]
unsafe fn free_object(hdr: *mut Header, used: usize, freed: &mut Freed) {
    // SAFETY: forwarded from the caller; the cell has `used` bytes.
    unsafe {
        free_handle(hdr, freed);
        if used <= 64 {
            // Most dead objects are small: 16-byte stores, no memset call.
            let words = hdr.cast::<[u64; 2]>();
            for i in 0..used.div_ceil(16) {
                words.add(i).write([0; 2]);
            }
        } else {
            ptr::write_bytes(hdr.cast::<u8>(), 0, used);
        }
    }
}

/// Ends a cycle for the heap: releases the large objects it freed, sets
/// the pacer's next trigger from the heap bytes found live, and gives back
/// the memory of free blocks beyond what the next cycle's allocation needs.
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
    ALLOCATED_SINCE_GC.store(0, Ordering::Relaxed);
    let pending = {
        let mut heap = heap();
        let pending = std::mem::take(&mut heap.pending_large);
        heap.large_bytes -= pending.iter().map(|l| l.bytes).sum::<usize>();
        heap.release_free_blocks(trigger);
        pending
    };
    for large in pending {
        // SAFETY: allocated by calloc in large_cell, dead and unlisted.
        unsafe { libc::free(large.hdr.cast()) };
    }
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
