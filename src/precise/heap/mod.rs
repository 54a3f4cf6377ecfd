//! The heap: objects never move; small ones live in blocks of one size
//! class, large ones are allocated one by one.
//!
//! - `object.rs`: the object header, size classes, the free-cell invariant;
//! - `blocks.rs`: the block manager (blocks, the lists they are filed in,
//!   the heap size and limit, memory given back to the system);
//! - `alloc.rs`: per-thread bump buffers, large objects, the slow path
//!   and what it asks of the collector, through the one hook that the
//!   collector registers ([`set_poll`], [`AllocPoll`]);
//! - `sweep.rs`: freeing what the last cycle did not mark, and the
//!   end-of-marking bookkeeping;
//! - `pacer.rs`: when allocation triggers the next collection.
//!
//! The collector (`collector/`) talks to the heap only through what this
//! module exports; the heap names no collector, and reaches it only
//! through that hook.

mod alloc;
mod blocks;
mod object;
mod pacer;
mod sweep;

pub(crate) use alloc::{
    alloc_object, finish_interrupted, finish_interrupted_large, retire, set_poll, AllocPoll,
    LocalHeap,
};
pub(crate) use blocks::{block_live_counter, lock_for_fork, set_limit, size, BLOCK, BLOCK_HEADER};
#[cfg(test)]
pub(crate) use object::FREE;
pub(crate) use object::{
    class_of, Header, HEADER, LARGE, LENGTH_WORD, MAX_SMALL_CELL, MAX_TYPE_ID,
};
pub(crate) use pacer::{
    assist_marked, assist_zone, collector_marked, configure, cycle_started, end_marking, end_sweep,
    memory_limit, over_trigger, set_gc_percent, set_memory_limit, snapshot_taken, Zone,
    ASSIST_BUDGET, DEFAULT_MIN_TRIGGER,
};
pub(crate) use sweep::{after_mark, free_pending_large, set_lazy_sweep, sweep_all_unswept};
