//! The block manager: 128 KiB blocks of one size class each, carved from
//! 8 MiB anonymous mappings, the lists they are filed in, the heap size
//! and limit, and giving idle memory back to the system.
//!
//! Blocks are [`BLOCK`]-aligned and start with a 16-byte block header, a
//! counter the marker (one thread) increments for every object it marks
//! there: a block whose cells are all live is not swept. A block is free
//! (any class), owned by one thread's bump buffer (`alloc.rs`), partly
//! free, unswept (it may hold dead objects of the last cycle, see
//! `sweep.rs`) or full; [`Inner`] keeps the lists, under one lock
//! ([`heap`]). Large objects are listed here too, for the sweep.
//!
//! A block that is not given back has a *layout*: the cell size that
//! handle lookups use to find cell `i` of block `id` (the handle index
//! `id << 13 | i`, see `handles.rs`). A free cell holds the generation its
//! next object takes. Laying a free block out for another class, or giving it
//! back, takes its layout away first; its next layout starts its cells at
//! a generation above any the old one reached.
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

use super::object::{Header, CELL, CLASSES, MAX_SMALL_CELL};
use crate::precise::error::{Error, Result};
use crate::precise::handles;
use crate::precise::marking;
use std::collections::VecDeque;
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bytes of a small-object block.
pub(crate) const BLOCK: usize = 128 << 10;
/// Bytes mapped at a time and carved into blocks.
const ARENA: usize = 64 * BLOCK;
/// Bytes at the start of each block (which is `BLOCK`-aligned) before its
/// first cell: the count of objects the running marking found live in it.
pub(crate) const BLOCK_HEADER: usize = 16;

/// The first cell of the block at `base`.
#[inline(always)]
pub(super) fn first_cell(base: usize) -> usize {
    base + BLOCK_HEADER
}

/// How many cells of `cell` bytes a block holds.
#[inline(always)]
pub(super) fn cells_per_block(cell: usize) -> usize {
    (BLOCK - BLOCK_HEADER) / cell
}

/// The cells of the block at `base` laid out for `class`.
fn cells(base: usize, class: u8) -> impl ExactSizeIterator<Item = *mut Header> {
    let cell = CELL[class as usize] as usize;
    (0..cells_per_block(cell)).map(move |i| (first_cell(base) + i * cell) as *mut Header)
}

/// Lays out block `id` (at `base`) for `class`: each cell becomes a free
/// cell bound to its handle (block id and cell number) with the generation
/// after `floor`, and handles lead into the block from then on.
///
/// # Safety
/// The block is the caller's, has no layout, and reads as zeros.
unsafe fn lay_out(id: u32, base: usize, class: u8, floor: u32) -> Result<()> {
    let next = handles::generation_after(floor);
    for hdr in cells(base, class) {
        // SAFETY: a free cell of the caller's block.
        unsafe { Header::bind_free(hdr, next) };
    }
    if handles::set_layout(id, base, CELL[class as usize] as usize) {
        Ok(())
    } else {
        Err(Error::OutOfMemory)
    }
}

/// Takes the layout of the free block `id` away: no handle leads into it
/// any more. Its generation floor rises to the highest generation its
/// cells were bound to: a later layout starts above it, so that no handle
/// of this one names an object of the next.
///
/// # Safety
/// The block is the caller's, and every cell in it is free.
unsafe fn take_layout(id: u32, block: &mut Block) {
    handles::clear_layout(id);
    let top = cells(block.base, block.class).map(|hdr| {
        // SAFETY: a free cell of the caller's block.
        unsafe { Header::next_generation(hdr) }
    });
    block.generation = top.fold(block.generation, u32::max);
}

/// The live-object counter of the block holding the small object at `hdr`.
#[inline(always)]
pub(crate) fn block_live_counter(hdr: *mut Header) -> *const AtomicU32 {
    (hdr as usize & !(BLOCK - 1)) as *const AtomicU32
}

const _: () = assert!(MAX_SMALL_CELL <= BLOCK - BLOCK_HEADER);

/// No block (a bump buffer that owns none).
pub(super) const NO_BLOCK: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum BlockState {
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

pub(super) struct Block {
    pub(super) base: usize,
    pub(super) class: u8,
    pub(super) state: BlockState,
    /// The id of the completed cycle whose dead objects the last sweep of
    /// this block freed (or that found every cell live). A block retired
    /// or exhausted with an older one may hold dead objects: unswept.
    pub(super) swept: u32,
    /// The highest generation a cell of an earlier layout of this block was
    /// bound to: its next layout's cells start above it.
    pub(super) generation: u32,
    /// The birth mark of every object in the block, if a thread took it
    /// wholly free while allocation was black (see [`Block::born_with`]);
    /// forgotten when the end of a marking files it, and when a thread
    /// takes it otherwise.
    pub(super) born: Option<u8>,
}

impl Block {
    /// Whether every object in the block carries `mark`: it was taken
    /// wholly free while objects were born black with `mark`. Its owner
    /// gives it up at the latest at the next Snapshot round, before birth
    /// marks change again (the Prepare round in between keeps the mark and
    /// only logs new objects), so every cell it allocated holds an object
    /// born with that mark, and the others are free. A sweep for the cycle
    /// of that mark would find nothing dead: the objects born black during
    /// a marking (a whole cycle's allocation, when marking is slow) are not
    /// looked at again before the next cycle's sweep.
    pub(super) fn born_with(&self, mark: u8) -> bool {
        self.born == Some(mark)
    }

    /// For a block its owner gives up: counts it swept for the last
    /// completed cycle if every object in it carries that cycle's mark.
    pub(super) fn settle_born(&mut self) {
        if self.born_with(marking::live_mark()) {
            self.swept = marking::completed_id();
        }
    }
}

pub(super) struct Large {
    pub(super) hdr: *mut Header,
    pub(super) bytes: usize,
    /// The object's handle (its header holds only the generation).
    pub(super) handle: u64,
}

/// How long a free block must go unused before its memory is given back.
/// Programs that need a burst of memory now and then (a phase, a request)
/// keep it mapped; at high allocation rates cycles come every few
/// milliseconds, so a count of cycles would be far too eager.
pub(crate) const IDLE_RELEASE: Duration = Duration::from_secs(1);

pub(super) struct Inner {
    pub(super) blocks: Vec<Block>,
    pub(super) partial: [Vec<u32>; CLASSES],
    pub(super) unswept: [Vec<u32>; CLASSES],
    /// Wholly free blocks, most recently freed last (taken from the end).
    pub(super) free: Vec<u32>,
    /// The shortest `free` has been since the last cycle ended: its first
    /// `free_low` blocks went unused for that whole cycle.
    pub(super) free_low: usize,
    /// `free_low` at the end of each recent cycle, oldest first, reaching
    /// back just past [`IDLE_RELEASE`] ago: blocks below the smallest went
    /// unused for that long, and only those are given back to the system.
    pub(super) past_lows: VecDeque<(Instant, usize)>,
    pub(super) released: Vec<u32>,
    /// Unused rest of the current mapping.
    pub(super) arena_next: usize,
    pub(super) arena_end: usize,
    pub(super) large: Vec<Large>,
    /// Large objects freed by the running cycle, released at its end.
    pub(super) pending_large: Vec<Large>,
    pub(super) block_bytes: usize,
    pub(super) large_bytes: usize,
    /// Whether blocks may be swept now: not while a marking runs.
    pub(super) lazy_sweep: bool,
}

// SAFETY: the raw pointers are to heap memory owned by this module and only
// touched under the heap lock or by the protocol in the module docs.
unsafe impl Send for Inner {}

impl Inner {
    const fn new() -> Inner {
        Inner {
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
        }
    }
}

static HEAP: Mutex<Inner> = Mutex::new(Inner::new());

pub(super) fn heap() -> MutexGuard<'static, Inner> {
    HEAP.lock().unwrap_or_else(|e| e.into_inner())
}

/// Before a fork, after the thread registry (the lock order).
pub(crate) fn lock_for_fork() {
    crate::gc::fork::held::keep(heap());
}

/// Heap limit in bytes (`usize::MAX`: none).
pub(super) static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Sets or lifts the heap limit.
pub(crate) fn set_limit(heap_limit: Option<usize>) {
    LIMIT.store(heap_limit.unwrap_or(usize::MAX), Ordering::Relaxed);
}

/// The largest [`size`] so far.
pub(super) static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Bytes of heap: small-object blocks (free ones included, given-back ones
/// not) and large objects; and the largest that has been.
pub(crate) fn size() -> (usize, usize) {
    let heap = heap();
    (heap.size(), PEAK.load(Ordering::Relaxed))
}

impl Inner {
    pub(super) fn size(&self) -> usize {
        self.block_bytes + self.large_bytes
    }

    /// A wholly free block for `class` from the free list, if any.
    pub(super) fn take_swept_free_block(&mut self, class: u8) -> Option<u32> {
        if self.free.is_empty() {
            return None;
        }
        self.take_free_block(class).ok()
    }

    /// A wholly free block for `class`: from the free list, or carved anew
    /// within the heap limit. Every cell is free, laid out for `class` and
    /// bound to a handle index (see `object.rs`).
    pub(super) fn take_free_block(&mut self, class: u8) -> Result<u32> {
        if let Some(id) = self.free.pop() {
            self.free_low = self.free_low.min(self.free.len());
            let block = &self.blocks[id as usize];
            let (base, old) = (block.base, block.class);
            if old != class {
                // Its free cells are laid out for another size class: the
                // new class's cell headers would fall on old payloads.
                // Take the old layout away, start from zero (atomically: a
                // thread validating a stale handle may read an old handle
                // word meanwhile), and lay the block out anew.
                // SAFETY: a free block: every cell free, no owner but us.
                unsafe { take_layout(id, &mut self.blocks[id as usize]) };
                let floor = self.blocks[id as usize].generation;
                let words = (base + BLOCK_HEADER) as *const AtomicU64;
                for i in 0..(BLOCK - BLOCK_HEADER) / 8 {
                    // SAFETY: an aligned word of a free block: no object, no
                    // owner but us.
                    unsafe { &*words.add(i) }.store(0, Ordering::Relaxed);
                }
                // SAFETY: a zeroed block of ours, without a layout.
                if let Err(e) = unsafe { lay_out(id, base, class, floor) } {
                    self.give_back_unlaid(id);
                    return Err(e);
                }
                self.blocks[id as usize].class = class;
            }
            return Ok(id);
        }
        if self.size().saturating_add(BLOCK) > LIMIT.load(Ordering::Relaxed) {
            return Err(Error::HeapLimit);
        }
        if let Some(&id) = self.released.last() {
            let block = &self.blocks[id as usize];
            // SAFETY: a released block reads as zeros, has no layout and is
            // ours.
            unsafe { lay_out(id, block.base, class, block.generation) }?;
            self.released.pop();
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
        if self.blocks.len() >= handles::MAX_BLOCKS {
            return Err(Error::OutOfMemory);
        }
        let base = self.arena_next;
        let id = self.blocks.len() as u32;
        // SAFETY: fresh zeroed memory of ours (taken below), never laid out.
        unsafe { lay_out(id, base, class, 0) }?;
        self.arena_next += BLOCK;
        self.block_bytes += BLOCK;
        PEAK.fetch_max(self.size(), Ordering::Relaxed);
        self.blocks.push(Block {
            base,
            class,
            state: BlockState::Free,
            swept: 0,
            generation: 0,
            born: None,
        });
        Ok(id)
    }

    /// Gives a free block without a layout back to the system.
    fn give_back_unlaid(&mut self, id: u32) {
        let block = &mut self.blocks[id as usize];
        // SAFETY: the block is free and has no layout (no object, no owner,
        // no handle leads into it) and is inside one of our mappings; the
        // range stays mapped and reads as zeros.
        unsafe { libc::madvise(block.base as *mut libc::c_void, BLOCK, libc::MADV_DONTNEED) };
        block.state = BlockState::Released;
        self.block_bytes -= BLOCK;
        self.released.push(id);
    }

    /// The end of a cycle: gives back free blocks that no allocation needed
    /// for [`IDLE_RELEASE`] (below the free list's low-water marks of every
    /// cycle since), keeping `keep` bytes of free blocks. A block given back
    /// costs a page fault per page at its next use.
    pub(super) fn release_idle_blocks(&mut self, keep: usize) {
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
    pub(super) fn release_oldest_free(&mut self, n: usize) {
        let n = n.min(self.free.len());
        for i in 0..n {
            let id = self.free[i];
            let block = &mut self.blocks[id as usize];
            // SAFETY: a free block: every cell free, no owner but us. Its
            // memory reads as zeros once given back, so its layout (and the
            // generations its cells reached) goes first.
            unsafe { take_layout(id, block) };
            self.give_back_unlaid(id);
        }
        self.free.drain(..n);
        // Positions in the free list moved down by n.
        self.free_low = self.free_low.saturating_sub(n);
        for (_, low) in &mut self.past_lows {
            *low = low.saturating_sub(n);
        }
    }
}

impl Inner {
    /// Puts a swept block (owned by the caller) in the list its free cells
    /// call for.
    pub(super) fn file(&mut self, id: u32, all_free: bool, some_free: bool) {
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
    pub(super) fn file_unswept(&mut self, id: u32) {
        let block = &mut self.blocks[id as usize];
        block.state = BlockState::Unswept;
        self.unswept[block.class as usize].push(id);
    }

    /// Files a block whose owner found no free run left in it: full, or
    /// unswept if a cycle completed since it was last swept and it may hold
    /// that cycle's dead objects.
    pub(super) fn file_exhausted(&mut self, id: u32) {
        let block = &mut self.blocks[id as usize];
        block.settle_born();
        if block.swept == marking::completed_id() {
            block.state = BlockState::Full;
        } else {
            self.file_unswept(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::object::{class_of, HEADER as HEADER_BYTES};
    use super::*;
    use crate::precise::handles::{resolve, Handle};

    /// The handle each cell of block `id` hands out next (its index is the
    /// cell's place, its generation the one the cell is bound to); checks
    /// that each one leads to its cell.
    fn bound(heap: &Inner, id: u32) -> Vec<u64> {
        let block = &heap.blocks[id as usize];
        cells(block.base, block.class)
            .enumerate()
            .map(|(i, hdr)| {
                // SAFETY: a free cell of a block only this test uses.
                let generation = unsafe { Header::next_generation(hdr) };
                let next = handles::small_handle(id, i, generation);
                assert!(handles::names(next, hdr), "{hdr:p} not bound to {next:#x}");
                next
            })
            .collect()
    }

    /// Whether any of `values` names an object (`wanted`: which error).
    fn refused(values: &[u64], wanted: Error) {
        for &v in values {
            let h = Handle::from_raw(v).unwrap();
            assert_eq!(resolve(h), Err(wanted), "{h:?}");
        }
    }

    #[test]
    #[serial_test::serial(precise)]
    fn a_new_layout_or_giving_back_leaves_no_old_handle_valid() {
        // The heap's own lock, held throughout: the block is ours alone.
        let mut heap = heap();
        let (small, big) = (class_of(24), class_of(200));
        let id = heap.take_free_block(small).unwrap();
        heap.blocks[id as usize].state = BlockState::Owned;
        let first = bound(&heap, id);
        assert_eq!(first.len(), cells_per_block(CELL[small as usize] as usize));
        let indices: std::collections::HashSet<u64> =
            first.iter().map(|v| v & handles::INDEX_MASK).collect();
        assert_eq!(indices.len(), first.len(), "two cells share an index");
        refused(&first, Error::StaleHandle); // free cells name no object
        let top = first
            .iter()
            .map(|&v| handles::generation_of(v))
            .max()
            .unwrap();

        // Laid out for another class: the same indices lead to other
        // cells now, bound to generations none of the old ones had.
        // A lookup that read the old layout just before it changed.
        let found = handles::locate(first[1]).unwrap();
        heap.file(id, true, false);
        let free_at = heap.free.iter().position(|&b| b == id).unwrap();
        let last = heap.free.len() - 1;
        heap.free.swap(free_at, last);
        assert_eq!(heap.take_free_block(big).unwrap(), id);
        {
            // The old cell's place is now inside a new cell's payload,
            // which may hold anything: here, the old generation and a live
            // mark. The lookup must notice the layout changed under it.
            let word = found.hdr.cast::<u32>();
            let first_new = first_cell(heap.blocks[id as usize].base);
            let payload = first_new + HEADER_BYTES..first_new + CELL[big as usize] as usize;
            assert!(payload.contains(&(word as usize)) && payload.contains(&(word as usize + 15)));
            // SAFETY: inside the free payload of a cell of our block.
            unsafe {
                word.write(handles::generation_of(first[1]));
                found
                    .hdr
                    .cast::<u8>()
                    .add(HEADER_BYTES - 1)
                    .write(crate::precise::marking::live_mark());
            }
            assert!(
                !handles::names_object(first[1], found),
                "a lookup across a new layout matched bytes of a new cell"
            );
            // SAFETY: as above; the payload of a cell never used is zero.
            unsafe { word.cast::<[u8; 16]>().write([0; 16]) };
        }
        heap.blocks[id as usize].state = BlockState::Owned;
        let second = bound(&heap, id);
        assert!(second.iter().all(|&v| handles::generation_of(v) > top));
        // Cell numbers past the new layout's last cell name nothing.
        let past = handles::small_handle(id, second.len(), 1);
        refused(&[past], Error::InvalidHandle);
        for &v in &first {
            let h = Handle::from_raw(v).unwrap();
            assert!(resolve(h).is_err(), "{h:?} survived a new layout");
        }

        // Given back to the system: no handle leads into it; laid out
        // again, its cells start above every generation they had.
        heap.file(id, true, false);
        let free_at = heap.free.iter().position(|&b| b == id).unwrap();
        let moved = heap.free.remove(free_at);
        heap.free.insert(0, moved);
        heap.release_oldest_free(1);
        assert_eq!(heap.blocks[id as usize].state, BlockState::Released);
        refused(&second, Error::InvalidHandle);
        let top = second
            .iter()
            .map(|&v| handles::generation_of(v))
            .max()
            .unwrap();
        let released = heap.released.iter().position(|&b| b == id).unwrap();
        let last = heap.released.len() - 1;
        heap.released.swap(released, last);
        let free = std::mem::take(&mut heap.free);
        let again = heap.take_free_block(small);
        heap.free = free;
        assert_eq!(again.unwrap(), id);
        let third = bound(&heap, id);
        assert!(third.iter().all(|&v| handles::generation_of(v) > top));
        refused(&first, Error::StaleHandle);
        heap.file(id, true, false);
    }
}
