//! Allocation: per-thread bump buffers over blocks, large objects, and the
//! slow path that finds memory (and asks for collections).
//!
//! Each thread owns at most one block per size class and bump-allocates
//! through runs of consecutive free cells in it ([`LocalHeap`]): the fast
//! path is a compare and an add, with no lock and no atomic
//! read-modify-write. When the block has no free run left, the thread
//! takes (under the heap lock) a partly free block, a wholly free one, an
//! unswept one (which it sweeps), or a new one. A small object takes the
//! handle its cell is bound to (see `object.rs`), so neither the fast path
//! nor the slow one touches a handle table or list. Large objects are
//! `calloc`'d one by one, take a handle from the thread's cache and are
//! listed for the sweep.
//!
//! Allocation writes the collector's birth mark into the header
//! ([`marking::birth_mode`]), in one place (`born`): the last
//! completed cycle's (white) outside a marking, the same but logged for
//! tracing (grey) while roots are being snapshotted, the running cycle's
//! (black) after that (see `collector/`).
//!
//! The heap grows on demand. A new block or large object that would take
//! the heap past the configured limit makes the allocation first sweep
//! what is unswept, then wait for a full collection; if that does not make
//! room it fails with [`Error::HeapLimit`]. A collection is also requested
//! (without waiting) when the pacer's trigger is passed (`pacer.rs`). Both
//! are [`Retry`], written once for small and large objects.
//!
//! The heap names no collector: what an allocation asks of it goes
//! through one hook, [`POLL`], that the collector registers when it
//! starts ([`set_poll`]), and is called in one place ([`poll`]).

use super::blocks::{
    cells_per_block, first_cell, heap, BlockState, Large, BLOCK, LIMIT, NO_BLOCK, PEAK,
};
use super::object::{
    check_and_clear_poison, is_free, zero_body, Header, CELL, CLASSES, GRANULE, HEADER, LARGE,
};
use super::pacer;
use super::sweep::{sweep_all_unswept, sweep_cells};
use crate::precise::error::{Error, Result};
use crate::precise::handles::{self, Handle};
use crate::precise::marking;
use crate::precise::mutator::Mutator;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

/// A thread's allocation state for one size class.
#[derive(Clone, Copy)]
struct Bump {
    /// Next free cell of the current run.
    cursor: usize,
    /// Where the current run began: the pacer counts what was handed out
    /// of it (up to `cursor`) when the run ends or the block is retired,
    /// not the run when it is taken (a thread holds a block per class it
    /// allocates in: counting whole runs made a thousand goroutines that
    /// allocate one object each look like a thousand blocks allocated).
    run: usize,
    /// End of the current run of free cells.
    limit: usize,
    /// Where to look for the next run in the owned block.
    scan: usize,
    /// End of the owned block's cells.
    end: usize,
    /// The owned block's id, or [`NO_BLOCK`].
    block: u32,
    /// The index bits (index + 1) of the handle of the cell at `cursor`:
    /// counted along with it, so that no allocation divides by the cell
    /// size to find its cell's number.
    index: u64,
}

impl Bump {
    const EMPTY: Bump = Bump {
        cursor: 0,
        run: 0,
        limit: 0,
        scan: 0,
        end: 0,
        block: NO_BLOCK,
        index: 0,
    };

    /// The next cell of the current run and its handle's index bits, if
    /// the run has one left.
    #[inline(always)]
    fn take(&mut self, cell: usize) -> Option<(*mut Header, u64)> {
        if self.limit - self.cursor < cell {
            return None;
        }
        let p = self.cursor;
        self.cursor = p + cell;
        let index = self.index;
        self.index = index + 1;
        Some((p as *mut Header, index))
    }
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

// ---- allocation ----------------------------------------------------------

/// Allocates an object of `body` bytes after the header and type
/// `type_id`, whose size class is `class` (from
/// [`class_of`](super::object::class_of)): a struct (`length` `None`), or
/// an array whose length word says `length`. `ts` is the calling thread,
/// which has just passed a safepoint poll. The entry points that find the
/// type's size and the thread are `access.rs`'s.
#[inline(always)]
pub(crate) fn alloc_object(
    ts: &Mutator,
    type_id: u32,
    body: u32,
    length: Option<u64>,
    class: u8,
) -> Result<(Handle, *mut Header)> {
    if class != LARGE {
        // SAFETY: the calling thread is running and owns its state; the
        // borrow ends before anything else can touch it.
        let local = unsafe { ts.local() };
        let cell = CELL[class as usize] as usize;
        if let Some((hdr, index)) = local.heap.bufs[class as usize].take(cell) {
            // SAFETY: a free cell of this thread's run, and its index.
            let obj = unsafe { init_small(ts, hdr, index, type_id, body, length) };
            ts.set_fresh(obj);
            return Ok((obj, hdr));
        }
    }
    let (obj, hdr) = alloc_slow(ts, type_id, body, length, class)?;
    ts.set_fresh(obj);
    Ok((obj, hdr))
}

/// Writes the header of a new small object in the free cell at `hdr`,
/// which gives it its handle: `index` (the cell's place) with the
/// generation the cell is bound to (see `object.rs`).
///
/// # Safety
/// `hdr` is a free cell of at least `HEADER + body` bytes owned by this
/// thread, and `index` the index bits of its handles.
#[inline(always)]
unsafe fn init_small(
    ts: &Mutator,
    hdr: *mut Header,
    index: u64,
    type_id: u32,
    body: u32,
    length: Option<u64>,
) -> Handle {
    // SAFETY: the cell is ours.
    let generation = unsafe { Header::next_generation(hdr) };
    let handle = handles::with_generation(index, generation);
    if cfg!(debug_assertions) {
        // SAFETY: as below.
        unsafe { check_and_clear_poison(hdr, handle, body as usize) };
    } else {
        // SAFETY: a free cell of ours with room for the body rounded up
        // to 8 (cells are multiples of 8).
        unsafe { zero_body(hdr, body as usize) };
    }
    // SAFETY: the cell is ours, its body zeroed; `generation` is the one
    // it is bound to.
    let grey = unsafe { born(ts, hdr, type_id, length, generation) };
    if grey {
        // Born while roots are being snapshotted: traced by this cycle.
        ts.log(handle);
    }
    // SAFETY: the index bits of a bound handle are index + 1 >= 1.
    unsafe { Handle::from_raw_unchecked(handle) }
}

/// Writes a new object's header, birth mark included (the only place that
/// writes one), and an array's length word (`length`), and counts it;
/// whether it is born grey (to be logged by the caller once its handle
/// resolves: see `collector/`).
///
/// # Safety
/// `hdr` is the caller's, with room for the header and, for an array, its
/// length word, and nobody else has a handle with `generation` to it yet.
#[inline(always)]
unsafe fn born(
    ts: &Mutator,
    hdr: *mut Header,
    type_id: u32,
    length: Option<u64>,
    generation: u32,
) -> bool {
    let (mark, grey) = marking::birth_mode();
    if let Some(n) = length {
        // SAFETY: an array's length word, in the caller's body; written
        // before the header publishes the object.
        unsafe { Header::body(hdr).cast::<u64>().write(n) };
    }
    // SAFETY: the caller guarantees hdr is ours and large enough.
    unsafe { Header::init(hdr, type_id, length.is_some(), mark, generation) };
    ts.count_allocation();
    grey
}

#[cold]
#[inline(never)]
fn alloc_slow(
    ts: &Mutator,
    type_id: u32,
    body: u32,
    length: Option<u64>,
    class: u8,
) -> Result<(Handle, *mut Header)> {
    if class != LARGE {
        let (hdr, index) = small_cell(ts, class)?;
        // SAFETY: hdr is a free cell of ours, index its handles' index.
        return Ok((
            unsafe { init_small(ts, hdr, index, type_id, body, length) },
            hdr,
        ));
    }
    ensure_handles(ts)?;
    // SAFETY: the calling thread is running and owns its state.
    let Some(handle) = unsafe { ts.local() }.handles.peek() else {
        unreachable!("defergc: precise: handle cache empty after a refill")
    };
    let hdr = large_cell(ts, body, handle)?;
    // SAFETY: as above. Collections (possibly run by large_cell) leave
    // handle caches alone: this pops the value peeked.
    let popped = unsafe { ts.local() }.handles.pop();
    debug_assert_eq!(popped, Some(handle));
    let generation = handles::generation_of(handle);
    // SAFETY: hdr is a zeroed large allocation of ours, handle a fresh
    // handle from our cache.
    let grey = unsafe { born(ts, hdr, type_id, length, generation) };
    // SAFETY: as above; the header holds the handle's generation already.
    let h = unsafe { handles::publish(handle, hdr) };
    if grey {
        // Logged once published, so that the marker can resolve it.
        ts.log(handle);
    }
    Ok((h, hdr))
}

/// Makes sure this thread's handle cache is not empty.
fn ensure_handles(ts: &Mutator) -> Result<()> {
    // SAFETY: the calling thread is running and owns its state.
    let local = unsafe { ts.local() };
    if !local.handles.is_empty() {
        return Ok(());
    }
    match local.handles.refill() {
        Err(Error::OutOfHandles) => {
            // Handles freed by a collection come back at its end.
            poll(ts, AllocPoll::Exhausted);
            // SAFETY: as above; the collection is over.
            unsafe { ts.local() }.handles.refill()
        }
        other => other,
    }
}

/// Why an allocation polls the collector (see [`poll`]).
pub(crate) enum AllocPoll {
    /// The allocation takes memory (a block or a large object): the
    /// pacer's allowance decides whether it marks a share first or waits
    /// for the cycle, and, with `may_request`, whether it asks for a cycle
    /// (its trigger is passed).
    Memory { may_request: bool },
    /// Growing the heap would pass the soft memory limit: rather than grow
    /// it, mark while there is marking to take and wait for the running
    /// cycle's marking (with none pending, ask for one and wait for it).
    /// This holds the heap where a cycle started late or marks for longer
    /// than the room the limit left lasts.
    SoftLimit,
    /// The heap limit stopped the allocation after sweeping, or its thread
    /// has no handles left: a full new cycle, waited for.
    Exhausted,
}

/// The allocation path's one hook into the collector: called on the
/// running thread at a safepoint with no heap lock held (a collection
/// takes it); returns whether it asked for a cycle on the pacer's behalf.
pub(crate) type PollHook = fn(&Mutator, AllocPoll) -> bool;

/// The hook, registered by the collector when it starts (before any thread
/// registers, so before any allocation).
static POLL: OnceLock<PollHook> = OnceLock::new();

/// Registers the collector's hook; the first registration stays.
pub(crate) fn set_poll(hook: PollHook) {
    let _ = POLL.set(hook);
}

/// Polls the collector for the allocation on `ts`: the one call of
/// [`POLL`]. The callers are the four points where an allocation may
/// wait: [`Retry`]'s three (before taking memory, at the soft limit, at
/// the heap limit) and a thread out of handles ([`ensure_handles`]).
fn poll(ts: &Mutator, why: AllocPoll) -> bool {
    let Some(hook) = POLL.get() else {
        crate::abort("defergc: precise: an allocation polled before the collector started")
    };
    hook(ts, why)
}

/// How many times one allocation may wait for a cycle at the soft memory
/// limit (see [`Retry::on_soft_limit`]) before the heap grows (besides
/// what it may wait in the pacer's allowance). What a cycle's sweep
/// frees, other threads may take first, so one wait is not enough to hold
/// several mutators at the limit; eight keep them within a few percent
/// of it (`tests/precise_soft_limit.rs`; the README's "The precise
/// collector's pacer" has the figures).
const SOFT_LIMIT_WAITS: u8 = 8;

/// The collections one allocation may ask for while it looks for memory,
/// the same for small and large objects: at most one pacer request (not
/// waited for), and on the heap limit first whatever sweeping can free,
/// then one full collection waited for, then sweeping once more; after
/// that the allocation fails with [`Error::HeapLimit`]. At the soft memory
/// limit, past which the heap may grow, it waits for running cycles at
/// most [`SOFT_LIMIT_WAITS`] times ([`Retry::on_soft_limit`]). Call with no
/// heap lock held: a collection takes it.
struct Retry<'a> {
    ts: &'a Mutator,
    paced: bool,
    made_room: bool,
    waited: bool,
    soft_limit_waits: u8,
}

impl<'a> Retry<'a> {
    fn new(ts: &'a Mutator) -> Retry<'a> {
        Retry {
            ts,
            paced: false,
            made_room: false,
            waited: false,
            soft_limit_waits: 0,
        }
    }

    /// Whether growing the heap by `bytes` would pass the soft memory limit
    /// (while the limit can be kept) and this allocation may still wait.
    fn at_soft_limit(&self, heap_size: usize, bytes: usize) -> bool {
        self.soft_limit_waits < SOFT_LIMIT_WAITS && pacer::past_soft_limit(heap_size, bytes) > 0
    }

    /// Growing the heap would pass the soft memory limit: the collector
    /// holds the allocation (see [`AllocPoll::SoftLimit`]), then it sweeps
    /// what is unswept (wholly free blocks serve any class) and looks
    /// again. The goal the limit sets (`pacer.rs`) starts cycles before the
    /// heap reaches the limit; this is for when they come too late.
    fn on_soft_limit(&mut self) {
        self.soft_limit_waits += 1;
        self.paced = true;
        poll(self.ts, AllocPoll::SoftLimit);
        sweep_all_for_limit();
    }

    /// Tells the collector that this allocation takes memory: it may mark
    /// a share first, or wait for the running cycle, as the pacer's
    /// allowance says, and asks for a cycle if the pacer's trigger is
    /// passed and this allocation has not asked before (see
    /// [`AllocPoll::Memory`]).
    fn pace(&mut self) {
        let may_request = !self.paced;
        if poll(self.ts, AllocPoll::Memory { may_request }) {
            self.paced = true;
        }
    }

    /// The heap limit stopped the allocation: `make_room` (sweeping what is
    /// unswept; the large path also gives free blocks back) unless it ran
    /// since the last collection, else a full collection, waited for.
    /// `Err` once both were tried.
    fn on_limit(&mut self, make_room: impl FnOnce()) -> Result<()> {
        if !self.made_room {
            self.made_room = true;
            make_room();
        } else if !self.waited {
            self.waited = true;
            self.paced = true;
            self.made_room = false;
            poll(self.ts, AllocPoll::Exhausted);
        } else {
            return Err(Error::HeapLimit);
        }
        Ok(())
    }
}

/// Sweeps every unswept block on behalf of an allocation that hit the heap
/// limit: wholly free blocks it finds can serve any class (or be given
/// back).
fn sweep_all_for_limit() {
    sweep_all_unswept(marking::completed_id());
}

/// A free cell of `class` for this thread, taking a new block if needed:
/// a partly free one, else an unswept one (swept here), else a wholly free
/// or new one.
fn small_cell(ts: &Mutator, class: u8) -> Result<(*mut Header, u64)> {
    let c = class as usize;
    let cell = CELL[c] as usize;
    let mut retry = Retry::new(ts);
    loop {
        {
            // SAFETY: the calling thread is running and owns its state; the
            // borrow ends before any collection below.
            let buf = &mut unsafe { ts.local() }.heap.bufs[c];
            if let Some(taken) = buf.take(cell) {
                return Ok(taken);
            }
            if buf.block != NO_BLOCK && next_run(buf, cell) {
                continue;
            }
        }
        retry.pace();
        let mut heap = heap();
        {
            // SAFETY: as above.
            let buf = &mut unsafe { ts.local() }.heap.bufs[c];
            if buf.block != NO_BLOCK {
                heap.file_exhausted(buf.block);
                *buf = Bump::EMPTY;
            }
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
        } else if retry.at_soft_limit(heap.size(), BLOCK) {
            drop(heap);
            retry.on_soft_limit();
            continue;
        } else {
            match heap.take_free_block(class) {
                Ok(id) => (id, Fresh::Whole),
                Err(Error::HeapLimit) => {
                    drop(heap);
                    // Unswept blocks of other classes may be wholly free.
                    retry.on_limit(sweep_all_for_limit)?;
                    continue;
                }
                Err(e) => return Err(e),
            }
        };
        let block = &mut heap.blocks[id as usize];
        block.state = BlockState::Owned;
        block.born = match (fresh, marking::birth_mode()) {
            (Fresh::Whole, (mark, false)) => Some(mark),
            _ => None,
        };
        if fresh != Fresh::No {
            // Wholly free, or swept below: no dead object of the last cycle
            // (which cannot complete while this thread sweeps: it has not
            // acknowledged that cycle's snapshot yet).
            block.swept = marking::completed_id();
        }
        let base = block.base;
        drop(heap);
        let start = first_cell(base);
        let end = start + cells_per_block(cell) * cell;
        let mut whole = fresh == Fresh::Whole;
        if fresh == Fresh::Unswept {
            // SAFETY: the block is ours now; the world is not stopped, but
            // its dead objects are unreachable and fail validation.
            let free = unsafe { sweep_cells(base, cell, marking::live_mark()) };
            whole = free.free == cells_per_block(cell);
        }
        // SAFETY: as above.
        let buf = &mut unsafe { ts.local() }.heap.bufs[c];
        *buf = Bump {
            cursor: start,
            run: start,
            limit: start,
            scan: start,
            end,
            block: id,
            index: handles::small_handle(id, 0, 0),
        };
        if whole {
            // A wholly free block is one run: no need to look at its cells.
            buf.limit = end;
            buf.scan = end;
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
/// block has none left. The cells' handle indices are counted along the
/// scan (the run just used ended at `scan`), so no run start is divided
/// by the cell size: in a fragmented block a run may be one cell.
fn next_run(buf: &mut Bump, cell: usize) -> bool {
    let is_free = |p: usize| {
        // SAFETY: a cell of an owned block: free or an object.
        is_free(unsafe { (*(p as *const Header)).generation.load(Ordering::Relaxed) })
    };
    debug_assert_eq!(buf.cursor, buf.scan, "a run left unused");
    pacer::allocated(buf.cursor - buf.run);
    buf.run = buf.cursor;
    let mut p = buf.scan;
    let mut index = buf.index;
    while p < buf.end && !is_free(p) {
        p += cell;
        index += 1;
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
    buf.run = start;
    buf.index = index;
    buf.limit = p;
    buf.scan = p;
    true
}

/// Zeroed memory for a large object of `body` bytes after its header,
/// listed with its handle `handle`.
fn large_cell(ts: &Mutator, body: u32, handle: u64) -> Result<*mut Header> {
    let bytes = HEADER + body as usize;
    let mut retry = Retry::new(ts);
    loop {
        retry.pace();
        let mut heap = heap();
        let excess = pacer::past_soft_limit(heap.size(), bytes);
        if excess > 0 {
            // Wholly free blocks count in the heap until they are given
            // back: give back enough of them first (small objects take
            // them before the heap grows, a large object cannot).
            heap.release_oldest_free(excess.div_ceil(BLOCK));
            if retry.at_soft_limit(heap.size(), bytes) {
                drop(heap);
                retry.on_soft_limit();
                continue;
            }
        }
        if heap.size().saturating_add(bytes) > LIMIT.load(Ordering::Relaxed) {
            drop(heap);
            // Wholly free blocks, found by sweeping, can be given back.
            retry.on_limit(|| {
                sweep_all_for_limit();
                self::heap().release_oldest_free(usize::MAX);
            })?;
            continue;
        }
        // Reserve the bytes, then zero-allocate without the lock.
        heap.large_bytes += bytes;
        PEAK.fetch_max(heap.size(), Ordering::Relaxed);
        drop(heap);
        pacer::allocated(bytes);
        // SAFETY: plain allocation; 16-byte alignment is glibc's on 64-bit.
        let p = unsafe { libc::calloc(1, bytes) }.cast::<Header>();
        let mut heap = self::heap();
        if p.is_null() {
            heap.large_bytes -= bytes;
            return Err(Error::OutOfMemory);
        }
        debug_assert_eq!(p as usize % GRANULE, 0, "calloc returned unaligned memory");
        heap.large.push(Large {
            hdr: p,
            bytes,
            handle,
        });
        return Ok(p);
    }
}

/// In a forked child, for a thread that did not come along: the fork may
/// have caught it allocating. The cell just below each of its bump cursors
/// is where that object would be. If the cell is not free, the object is
/// whole (its generation is written last) and its handle leads to it: an
/// ordinary object, unreachable. If it is free, the generation word
/// still binds it, but the rest may be half written: it is cleared, as a
/// cell never used (debug builds check that when it is reused).
pub(crate) fn finish_interrupted(local: &LocalHeap) {
    for (class, buf) in local.bufs.iter().enumerate() {
        let cell = CELL[class] as usize;
        // A cursor past a block's last cell may be the next block's base.
        if buf.block == NO_BLOCK || buf.cursor < first_cell((buf.cursor - 1) & !(BLOCK - 1)) + cell
        {
            continue;
        }
        let hdr = (buf.cursor - cell) as *mut Header;
        // SAFETY: a cell of the block the thread owned, below its cursor
        // (allocated, or being allocated when the process forked); no other
        // thread touches it, and no cycle runs in the child yet. Only the
        // bytes after the generation word are written.
        unsafe {
            if is_free((*hdr).generation.load(Ordering::Acquire)) {
                let rest = hdr.cast::<u8>().add(4);
                std::ptr::write_bytes(rest, 0, cell - 4);
            }
        }
    }
}

/// [`finish_interrupted`] for large objects (all of them, once per fork).
pub(crate) fn finish_interrupted_large() {
    let heap = heap();
    for large in &heap.large {
        // SAFETY: a listed large object (zeroed memory at least); as above.
        unsafe { publish_interrupted(large.hdr, large.handle) };
    }
}

/// # Safety
/// `hdr` is an object's header that only the caller touches, listed with
/// `handle`.
unsafe fn publish_interrupted(hdr: *mut Header, handle: u64) {
    // SAFETY: per the caller.
    let generation = unsafe { (*hdr).generation.load(Ordering::Acquire) };
    if generation != 0 && !handles::names(handle, hdr) {
        // SAFETY: the handle was popped from the thread's cache for this
        // object and nothing else has it.
        unsafe { handles::publish(handle, hdr) };
    }
}

/// Gives up a thread's blocks (at the start of a cycle, or when the thread
/// unregisters): the sweep then sees every block unowned.
pub(crate) fn retire(local: &mut LocalHeap) {
    let mut heap = heap();
    for buf in &mut local.bufs {
        if buf.block != NO_BLOCK {
            pacer::allocated(buf.cursor - buf.run);
            let id = buf.block;
            heap.blocks[id as usize].settle_born();
            if heap.blocks[id as usize].swept == marking::completed_id() {
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
