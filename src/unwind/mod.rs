//! Stack walks: by unwind tables with symbols (`tables.rs`: tracebacks,
//! `Callers`, heap-profile samples), and by frame pointers without a lock
//! or an allocation (`fp.rs`: what a signal handler may call, for CPU
//! profiles).
//!
//! Uses nothing of the crate: the collector (heap-profile sampling, fork
//! hooks), `defer`'s tracebacks and `prof`'s profiles all call it.

mod fp;
mod tables;

pub use fp::{
    caller_frame, frame_pointer, return_address, walk_chain, walk_chain_records, walk_from,
    walk_here, FrameRecord, Regs, StackRange,
};
pub(crate) use tables::{lock_for_fork, resolve, walk, walk_frames};
