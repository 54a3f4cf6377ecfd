//! Sweeping: freeing the cells of objects the last completed cycle did not
//! mark, and the end-of-marking bookkeeping that decides which blocks need
//! it.
//!
//! No cell is freed while a marking runs ([`set_lazy_sweep`]). At the end
//! of marking ([`after_mark`], mutators running) large objects the cycle
//! did not mark are unlinked (their memory is released by
//! [`free_pending_large`] once every thread has passed a safepoint), and
//! every unowned block that holds objects is filed as full (every cell
//! marked, or every object born black in this cycle: a block a thread took
//! wholly free after the snapshot, see `Block::born_with`) or *unswept*.
//! Then the collector thread sweeps the unswept blocks
//! ([`sweep_all_unswept`]), concurrently with the mutators; a thread
//! that finds no swept block to allocate in may take an unswept one and
//! sweep it itself (`alloc.rs`). A sweep frees the cells of objects whose
//! mark is not the last completed cycle's: it writes one word per dead
//! object, which makes the cell free and keeps its handle's index, with
//! the next generation, for the next object allocated in it; neither the
//! sweep nor allocation touches a handle table or list. The mutator's
//! share stays small: it prefers blocks the collector has swept already.
//! Until its cell is swept, a dead object's handle is rejected by
//! validation through its stale mark (see `handles.rs`).
//!
//! A block a thread owns when a cycle ends cannot be swept then; each
//! block remembers the cycle it was last swept for ([`Block::swept`]), and
//! one given up later (by its owner, at the latest at the next snapshot,
//! which retires every thread's buffers) with an older one is filed
//! unswept. So every block is swept at least every other cycle, and mark
//! bytes never wrap around onto a dead object.
//!
//! [`Block::swept`]: super::blocks::Block::swept

use super::blocks::{cells_per_block, first_cell, heap, BlockState};
use super::object::{free_cell, is_free, Header, CELL, CLASSES};
use crate::cache::prefetch;
use crate::precise::handles::{self, Freed};
use std::sync::atomic::{AtomicU32, Ordering};

/// What sweeping one block found.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cells {
    pub(super) free: usize,
}

/// Frees every object in the block at `base` (cells of `cell` bytes) whose
/// mark is not `live_mark`; each freed cell keeps its handle's index, with
/// the next generation, for the next object in it. Returns how many cells
/// are free afterwards.
///
/// # Safety
/// The caller owns the block (no thread allocates in it, and no collection
/// marks meanwhile), every object in it was marked by the cycle whose mark
/// is `live_mark` if reachable, and that cycle has completed marking.
pub(super) unsafe fn sweep_cells(base: usize, cell: usize, live_mark: u8) -> Cells {
    let cells = cells_per_block(cell);
    let mut out = Cells::default();
    for i in 0..cells {
        let hdr = (first_cell(base) + i * cell) as *mut Header;
        prefetch(hdr.cast::<u8>().wrapping_add(1024));
        // SAFETY: a cell of an owned block.
        let (generation, mark) = unsafe {
            (
                (*hdr).generation.load(Ordering::Relaxed),
                (*hdr).mark.load(Ordering::Relaxed),
            )
        };
        if is_free(generation) {
            out.free += 1;
        } else if mark != live_mark {
            // SAFETY: a dead object's cell; once its generation word is a
            // free cell's the handle is stale. Debug builds poison the
            // whole cell.
            unsafe { free_cell(hdr, generation, cell) };
            out.free += 1;
        }
    }
    out
}

/// Sweeps every unswept block, one at a time (each owned while it is
/// swept), freeing the objects that cycle `cycle` (completed) did not mark,
/// and files it as free, partly free or full. Stops (leaving the rest
/// unswept) if a marking starts meanwhile.
pub(crate) fn sweep_all_unswept(cycle: u32) {
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
        let cells = unsafe { sweep_cells(base, cell, cycle as u8) };
        let mut heap = self::heap();
        heap.blocks[id as usize].swept = cycle;
        heap.file(id, cells.free == cells_per_block(cell), cells.free > 0);
    }
}

/// Switches lazy sweeping on or off (off while a marking runs).
pub(crate) fn set_lazy_sweep(on: bool) {
    heap().lazy_sweep = on;
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
/// every cell was marked or it was filled with objects born black in this
/// cycle, else unswept. Blocks owned by a thread stay owned: they were last
/// swept before this cycle completed, so their owner files them unswept
/// when it gives them up (at the latest at the next snapshot), or full if
/// every object in them was born with this cycle's mark. Every block's live
/// counter restarts at zero.
///
/// # Safety
/// Marking for `cycle` is complete and no sweep runs.
#[inline(never)]
pub(crate) unsafe fn after_mark(cycle: u32, freed: &mut Freed) -> AfterMark {
    let mut guard = heap();
    let heap = &mut *guard;
    let mut out = AfterMark::default();
    let mark = cycle as u8;
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
        if block.state == BlockState::Owned {
            continue;
        }
        // Nothing to sweep if every cell holds a live object, or if the
        // block was filled with objects born black in this cycle (which
        // the live counter does not count).
        let nothing_dead = live as usize == cells_per_block(cell)
            || (block.state == BlockState::Full && block.born_with(mark));
        block.born = None;
        if nothing_dead {
            block.state = BlockState::Full;
            block.swept = cycle;
        } else {
            block.state = BlockState::Unswept;
            heap.unswept[block.class as usize].push(id as u32);
        }
    }
    let mut i = 0;
    while i < heap.large.len() {
        let (hdr, handle) = (heap.large[i].hdr, heap.large[i].handle);
        // SAFETY: a listed large object: zeroed memory, whose header its
        // allocating thread may be initialising right now (the generation
        // last, with release).
        let (generation, m) = unsafe {
            let generation = (*hdr).generation.load(Ordering::Acquire);
            (generation, (*hdr).mark.load(Ordering::Relaxed))
        };
        // Generation 0: still being allocated, by a thread that has seen
        // this cycle's black allocation (it acknowledged every round): live.
        if generation == 0 || m == mark {
            i += 1;
        } else {
            let large = heap.large.swap_remove(i);
            debug_assert!(
                handles::names(handle, hdr) && handles::generation_of(handle) == generation,
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
