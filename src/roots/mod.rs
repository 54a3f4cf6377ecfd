//! Root memory: memory outside the collected heap that every enabled
//! collector scans for references (design.md invariants 2 and 3).
//!
//! Two shapes:
//!
//! - **Blocks** ([`alloc_block`], [`free_block`]): small, long-lived, zeroed
//!   memory such as TLS slot pages, panic values, channel buffers. They
//!   come from the collector's uncollectable allocation
//!   (`gc::alloc_uncollectable`: `GC_malloc_uncollectable` on bdwgc, which
//!   scans it but never frees it, with no root set, so no 2048 cap and no
//!   linear removal; `calloc` under `nogc`). Small ones are recycled per
//!   thread (`small.rs`).
//! - **Stacks** ([`RootStack`], `stack.rs`): large, fast-growing LIFO
//!   regions, such as a context's defer records, in plain memory; pushing
//!   and popping take no lock and trigger no collection.
//!
//! # Collectors
//!
//! Each collector that scans root memory is one file implementing
//! [`Collector`]: what it keeps per stack and in front of each block, and
//! its hooks (stack created / dropped, before a chunk is freed, block
//! allocated / freed, and stack or block released to a pool and adopted
//! from it by a later context). How it scans is its own: `bdwgc.rs` pushes every
//! stack from a root pusher while the world is stopped; `precise.rs`
//! offers one owner's words at a time to the precise collector;
//! `malloc.rs` (`nogc`) scans nothing. [`Collectors`], below, is the one
//! place that says which are compiled in; the stack and the blocks only
//! call its hooks, and never ask which collectors they serve.
//!
//! To add a collector: write its file (a type implementing [`Collector`]:
//! override the hooks it needs, and give it its scan entry point), declare
//! it below with its `cfg`, and add it to [`Collectors`] (a base collector
//! replaces `Base`'s line; one that scans beside the base, as the precise
//! collector does, nests in the tuple: `(Base, (Extra, Third))`).

mod small;
mod stack;

// The collectors, each under its own cfg: the only lines that name them.
#[cfg(defergc_boehm)]
mod bdwgc;
#[cfg(not(defergc_boehm))]
mod malloc;
#[cfg(feature = "precise")]
pub(crate) mod precise;

#[cfg(defergc_boehm)]
type Base = bdwgc::Bdwgc;
#[cfg(not(defergc_boehm))]
type Base = malloc::Malloc;
#[cfg(feature = "precise")]
type Extra = precise::Precise;
#[cfg(not(feature = "precise"))]
type Extra = ();

/// Every collector compiled in, as one [`Collector`]: the base collector
/// (whose heap the blocks come from) and the one that scans beside it.
type Collectors = (Base, Extra);

pub(crate) use stack::{Mark, RootStack, StackHead};

use std::ptr::NonNull;

/// A collector's view of root memory: what it keeps, and what it is told.
/// Every hook has a default that does nothing.
///
/// The hooks run on the thread that changes the memory, with no lock of
/// `roots` held; a collector that needs one takes its own.
pub(crate) trait Collector {
    /// What the collector keeps for each stack, in the stack's head
    /// (stable while the stack lives).
    type Stack: Default;
    /// What the collector keeps in front of each block while it is
    /// allocated (at most 16-byte aligned).
    type Block;

    /// A stack was created: `head` is live and stays where it is until
    /// [`Collector::stack_dropped`]; `state` is its part of the head.
    ///
    /// # Safety
    /// `head` is a new stack's head and `state` points into it.
    unsafe fn stack_created(_head: NonNull<StackHead>, _state: *mut Self::Stack) {}

    /// A stack is being dropped: after this, nothing may read it.
    ///
    /// # Safety
    /// As for [`Collector::stack_created`], with the stack's owner calling
    /// once, last.
    unsafe fn stack_dropped(_head: NonNull<StackHead>, _state: *mut Self::Stack) {}

    /// A chunk that the stack no longer links is about to be freed: a
    /// collector whose scans run while the owner goes on (the precise
    /// collector's, on behalf of a thread in native code) waits for those
    /// that may still read it.
    ///
    /// # Safety
    /// As for [`Collector::stack_dropped`], before it.
    unsafe fn before_chunk_freed(_head: NonNull<StackHead>, _state: *mut Self::Stack) {}

    /// The stack's owner gives it up, empty, to a pool: no context owns
    /// it until [`Collector::stack_adopted`].
    ///
    /// # Safety
    /// As for [`Collector::stack_dropped`]; the stack holds nothing.
    unsafe fn stack_released(_head: NonNull<StackHead>, _state: *mut Self::Stack) {}

    /// The calling context takes over a released stack.
    ///
    /// # Safety
    /// As for [`Collector::stack_dropped`]; the stack was released.
    unsafe fn stack_adopted(_head: NonNull<StackHead>, _state: *mut Self::Stack) {}

    /// A block `[data, data + len)` was allocated; `header` is the
    /// collector's part of the memory in front of it, to write.
    ///
    /// # Safety
    /// `header` is writable and stays where it is until
    /// [`Collector::block_freed`]; `data` is the block's `len` bytes.
    unsafe fn block_allocated(_header: *mut Self::Block, _data: *mut u8, _len: usize) {}

    /// As [`Collector::block_allocated`], for a block that belongs to no
    /// context (shared between them, such as a channel's buffer).
    ///
    /// # Safety
    /// As for [`Collector::block_allocated`].
    unsafe fn shared_block_allocated(header: *mut Self::Block, data: *mut u8, len: usize) {
        // SAFETY: forwarded.
        unsafe { Self::block_allocated(header, data, len) }
    }

    /// The `len` bytes at `data`, which may hold references, were just
    /// copied from one context's memory to another's, through shared
    /// memory (see [`words_moved`]). A collector that marks while the
    /// mutators run treats it as a barriered store of each word.
    fn words_moved(_data: *const u8, _len: usize) {}

    /// `[data, data + len)`, inside the object `obj` of the base
    /// collector's heap, holds references that every collector must see
    /// for as long as the object lives (the base collector sees its own
    /// heap and does nothing).
    fn heap_range_shared(_obj: NonNull<u8>, _data: *const u8, _len: usize) {}

    /// A block is being freed (on any thread): after this, nothing may
    /// read it.
    ///
    /// # Safety
    /// `header` was passed to [`Collector::block_allocated`], once, and
    /// the block is not used any more.
    unsafe fn block_freed(_header: *mut Self::Block) {}

    /// The block's owner gives it up to a pool, holding no reference: no
    /// context owns it until [`Collector::block_adopted`].
    ///
    /// # Safety
    /// As for [`Collector::block_freed`], but the block stays allocated.
    unsafe fn block_released(_header: *mut Self::Block) {}

    /// The calling context takes over a released block.
    ///
    /// # Safety
    /// `header` is a released block's.
    unsafe fn block_adopted(_header: *mut Self::Block) {}
}

/// No collector: nothing kept, nothing to do.
impl Collector for () {
    type Stack = ();
    type Block = ();
}

/// Two collectors side by side: each keeps its part, each hook runs the
/// first one's, then the second one's (freeing in the opposite order).
impl<A: Collector, B: Collector> Collector for (A, B) {
    type Stack = (A::Stack, B::Stack);
    type Block = (A::Block, B::Block);

    unsafe fn stack_created(head: NonNull<StackHead>, state: *mut Self::Stack) {
        // SAFETY: forwarded, each with its own part of the state.
        unsafe {
            A::stack_created(head, &raw mut (*state).0);
            B::stack_created(head, &raw mut (*state).1);
        }
    }

    unsafe fn stack_dropped(head: NonNull<StackHead>, state: *mut Self::Stack) {
        // SAFETY: forwarded, each with its own part of the state.
        unsafe {
            B::stack_dropped(head, &raw mut (*state).1);
            A::stack_dropped(head, &raw mut (*state).0);
        }
    }

    unsafe fn before_chunk_freed(head: NonNull<StackHead>, state: *mut Self::Stack) {
        // SAFETY: forwarded, each with its own part of the state.
        unsafe {
            A::before_chunk_freed(head, &raw mut (*state).0);
            B::before_chunk_freed(head, &raw mut (*state).1);
        }
    }

    unsafe fn stack_released(head: NonNull<StackHead>, state: *mut Self::Stack) {
        // SAFETY: forwarded, each with its own part of the state.
        unsafe {
            B::stack_released(head, &raw mut (*state).1);
            A::stack_released(head, &raw mut (*state).0);
        }
    }

    unsafe fn stack_adopted(head: NonNull<StackHead>, state: *mut Self::Stack) {
        // SAFETY: forwarded, each with its own part of the state.
        unsafe {
            A::stack_adopted(head, &raw mut (*state).0);
            B::stack_adopted(head, &raw mut (*state).1);
        }
    }

    unsafe fn block_allocated(header: *mut Self::Block, data: *mut u8, len: usize) {
        // SAFETY: forwarded, each with its own part of the header.
        unsafe {
            A::block_allocated(&raw mut (*header).0, data, len);
            B::block_allocated(&raw mut (*header).1, data, len);
        }
    }

    unsafe fn shared_block_allocated(header: *mut Self::Block, data: *mut u8, len: usize) {
        // SAFETY: forwarded, each with its own part of the header.
        unsafe {
            A::shared_block_allocated(&raw mut (*header).0, data, len);
            B::shared_block_allocated(&raw mut (*header).1, data, len);
        }
    }

    #[inline(always)]
    fn words_moved(data: *const u8, len: usize) {
        A::words_moved(data, len);
        B::words_moved(data, len);
    }

    fn heap_range_shared(obj: NonNull<u8>, data: *const u8, len: usize) {
        A::heap_range_shared(obj, data, len);
        B::heap_range_shared(obj, data, len);
    }

    unsafe fn block_freed(header: *mut Self::Block) {
        // SAFETY: forwarded, each with its own part of the header.
        unsafe {
            B::block_freed(&raw mut (*header).1);
            A::block_freed(&raw mut (*header).0);
        }
    }

    unsafe fn block_released(header: *mut Self::Block) {
        // SAFETY: forwarded, each with its own part of the header.
        unsafe {
            B::block_released(&raw mut (*header).1);
            A::block_released(&raw mut (*header).0);
        }
    }

    unsafe fn block_adopted(header: *mut Self::Block) {
        // SAFETY: forwarded, each with its own part of the header.
        unsafe {
            A::block_adopted(&raw mut (*header).0);
            B::block_adopted(&raw mut (*header).1);
        }
    }
}

/// The memory in front of every block: the collectors' parts.
type Header = <Collectors as Collector>::Block;

/// Bytes in front of every block: the header, rounded up so that the
/// block keeps the allocation's 16-byte alignment (0 when no collector
/// keeps anything).
const HEADER: usize = {
    assert!(std::mem::align_of::<Header>() <= 16);
    std::mem::size_of::<Header>().next_multiple_of(16)
};

/// Allocates `size` zeroed bytes of root memory: scanned by every
/// collector, never collected, released only by [`free_block`]. (Under
/// `precise` the block belongs to the calling context, whose root scan
/// covers it.)
pub(crate) fn alloc_block(size: usize) -> NonNull<u8> {
    let (raw, data) = raw_block(size);
    // SAFETY: the header is ours to write and stays until free_block;
    // data is the block's size bytes.
    unsafe { Collectors::block_allocated(raw.as_ptr().cast(), data.as_ptr(), size) };
    data
}

/// [`alloc_block`] for memory that no context owns: shared between
/// contexts, such as a channel's buffer. Whoever copies references into or
/// out of it says so with [`words_moved`]. Freed with [`free_block`].
pub(crate) fn alloc_shared_block(size: usize) -> NonNull<u8> {
    let (raw, data) = raw_block(size);
    // SAFETY: as in alloc_block.
    unsafe { Collectors::shared_block_allocated(raw.as_ptr().cast(), data.as_ptr(), size) };
    data
}

/// A block's allocation and its data, after the header.
fn raw_block(size: usize) -> (NonNull<u8>, NonNull<u8>) {
    let total = HEADER + size;
    let raw =
        small::take(total).unwrap_or_else(|| crate::gc::alloc_uncollectable(small::rounded(total)));
    // SAFETY: total bytes, of which the header comes first.
    (raw, unsafe { raw.add(HEADER) })
}

/// The `len` bytes at `data`, which may hold references, were just copied
/// into or out of shared memory (an [`alloc_shared_block`] block, a
/// [`share_heap_range`] range), or from one context's memory straight into
/// another's: the copy a channel makes. Every such copy must say so, so
/// that a collector that marks while the mutators run loses nothing that
/// moves between contexts it scans at different times. Costs nothing
/// (bdwgc, `nogc`) or one relaxed load while no marking runs (`precise`).
#[inline(always)]
pub(crate) fn words_moved(data: *const u8, len: usize) {
    Collectors::words_moved(data, len)
}

/// `[data, data + len)` (8-byte aligned), inside the object `obj` of the
/// collected heap, holds references that every collector must see for as
/// long as the object lives: a compiled program's channel buffer, which
/// lives in the collected heap so that the channel is collected as Go's
/// are. Copies into and out of it say so with [`words_moved`].
pub(crate) fn share_heap_range(obj: NonNull<u8>, data: *const u8, len: usize) {
    Collectors::heap_range_shared(obj, data, len)
}

/// Whether `block` may be a block from [`alloc_block`]: it follows the
/// header at the start of a live allocation (as far as `gc::check` can
/// tell). Accepts any address.
pub(crate) fn is_block(block: *const u8) -> bool {
    crate::gc::check::check(block.wrapping_sub(HEADER)).is_ok()
}

/// Gives `block` up to a pool of the calling thread's (it holds no
/// reference any more); [`adopt_block`] hands it to the context that takes
/// it from the pool. (Collectors that scan by owner stop scanning it.)
///
/// # Safety
/// `block` came from [`alloc_block`] and is live; it is not used until
/// [`adopt_block`].
pub(crate) unsafe fn release_block(block: NonNull<u8>) {
    // SAFETY: the header alloc_block wrote, in front of the block.
    unsafe { Collectors::block_released(block.as_ptr().sub(HEADER).cast()) }
}

/// The calling context takes over `block`, given up by [`release_block`].
///
/// # Safety
/// `block` was released and not adopted since.
pub(crate) unsafe fn adopt_block(block: NonNull<u8>) {
    // SAFETY: as in release_block.
    unsafe { Collectors::block_adopted(block.as_ptr().sub(HEADER).cast()) }
}

/// Releases a block from [`alloc_block`].
///
/// # Safety
/// `block` came from [`alloc_block`], is live, and is not used afterwards.
pub(crate) unsafe fn free_block(block: NonNull<u8>) {
    // SAFETY: alloc_block returned the allocation's start plus HEADER.
    let raw = unsafe { block.sub(HEADER) };
    // SAFETY: the header alloc_block wrote; the caller gives the block up.
    unsafe { Collectors::block_freed(raw.as_ptr().cast()) };
    // SAFETY: a live allocation of ours that nobody uses any more.
    if let Err(raw) = unsafe { small::keep(raw) } {
        // SAFETY: as above.
        unsafe { crate::gc::free(raw.as_ptr()) }
    }
}
