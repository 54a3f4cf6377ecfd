//! Root memory: memory outside the collected heap that every enabled
//! collector scans for references (DESIGN.md invariants 2 and 3). This is
//! the one module that knows which collectors are compiled in.
//!
//! Two shapes:
//!
//! - **Blocks** ([`alloc_block`], [`free_block`]): small, long-lived, zeroed
//!   memory such as TLS slot pages and panic values. On bdwgc they are
//!   `GC_malloc_uncollectable` objects, which the collector scans but never
//!   frees (no root set, so no 2048 cap and no linear removal). Under `nogc`
//!   they are `calloc` memory.
//! - **Stacks** ([`RootStack`]): large, fast-growing LIFO regions, such as
//!   a thread's defer records. They live in plain memory, in chunks kept for
//!   reuse; pushing and popping take no lock and trigger no collection. The
//!   collector finds them through a registry of stacks that it walks from a
//!   `GC_set_push_other_roots` callback while the world is stopped.
//!
//! The callback runs with the world stopped and bdwgc's allocation lock
//! held, so it never takes a lock a stopped mutator may hold: the registry
//! changes only under bdwgc's allocation lock, and a stack's (chunk, top)
//! pair is published with ordered stores that keep every intermediate state
//! scannable (see [`RootStack::for_each_range`]).

use std::ptr::NonNull;

/// Allocates `size` zeroed bytes of root memory: scanned by the collector,
/// never collected, released only by [`free_block`].
pub(crate) fn alloc_block(size: usize) -> NonNull<u8> {
    crate::gc::alloc_uncollectable(size)
}

/// Releases a block from [`alloc_block`].
///
/// # Safety
/// `block` came from [`alloc_block`], is live, and is not used afterwards.
pub(crate) unsafe fn free_block(block: NonNull<u8>) {
    // SAFETY: forwarded from the caller.
    unsafe { crate::gc::free(block.as_ptr()) }
}
