//! A `GlobalAlloc` whose memory the collector scans.
//!
//! With [`GcAlloc`] as the global allocator, a GC pointer kept in a `Vec`,
//! `Box` or `HashMap` keeps its object alive: every Rust heap block is
//! uncollectable, scanned root memory (freed by `dealloc`, never by the
//! collector). Under `nogc` it is the C allocator.
//!
//! Alignment: bdwgc aligns to its granule (16 bytes on 64-bit). Larger
//! alignments over-allocate by `align` bytes, round up, and keep the start
//! of the underlying block in the word just below the returned pointer.
//! Zeroing: uncollectable memory comes back cleared, so `alloc_zeroed` is
//! `alloc` on bdwgc.
//!
//! ```no_run
//! #[global_allocator]
//! static ALLOC: defergc::gc::GcAlloc = defergc::gc::GcAlloc;
//! ```

use super::{backend, thread, Kind};
use std::alloc::{GlobalAlloc, Layout};

/// The global allocator backed by the collector's root memory.
pub struct GcAlloc;

/// Alignment every allocation gets for free (bdwgc's granule, malloc's
/// guarantee on 64-bit glibc).
const NATURAL_ALIGN: usize = 16;

// SAFETY: every block comes from the backend's uncollectable kind, which is
// never moved or reclaimed until dealloc; over-aligned blocks record their
// base, so dealloc and realloc always free what was allocated.
unsafe impl GlobalAlloc for GcAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        thread::ensure_registered();
        if layout.align() <= NATURAL_ALIGN {
            return zeroing_alloc(layout.size());
        }
        let Some(total) = layout.size().checked_add(layout.align()) else {
            return std::ptr::null_mut();
        };
        let base = zeroing_alloc(total);
        if base.is_null() {
            return base;
        }
        // At least NATURAL_ALIGN bytes lie between base and the aligned
        // pointer, room for the back-pointer word.
        let aligned = (base as usize + layout.align()) & !(layout.align() - 1);
        let aligned = base.wrapping_add(aligned - base as usize);
        // SAFETY: aligned - 8 >= base and lies inside the block.
        unsafe { aligned.cast::<*mut u8>().sub(1).write(base) };
        aligned
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: alloc returns zeroed memory (see zeroing_alloc).
        unsafe { self.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        thread::ensure_registered();
        // SAFETY: ptr came from alloc with this layout, so its base is ptr
        // itself or the word stored below it.
        unsafe { backend::free(block_base(ptr, layout)) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        thread::ensure_registered();
        if layout.align() <= NATURAL_ALIGN {
            // SAFETY: ptr is a live uncollectable block of ours; the backend
            // keeps the kind and zeroes nothing new that matters (callers of
            // realloc do not rely on fresh bytes being zero).
            return unsafe { backend::realloc(ptr, new_size) };
        }
        // SAFETY: new_size with the old alignment is a valid layout per the
        // GlobalAlloc contract.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a fresh allocation with a valid layout.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live and at least min(size) long.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

fn zeroing_alloc(size: usize) -> *mut u8 {
    backend::alloc(Kind::Uncollectable, size)
}

/// # Safety
/// `ptr` came from [`GcAlloc::alloc`] with `layout`.
unsafe fn block_base(ptr: *mut u8, layout: Layout) -> *mut u8 {
    if layout.align() <= NATURAL_ALIGN {
        ptr
    } else {
        // SAFETY: alloc stored the base in the word below ptr.
        unsafe { ptr.cast::<*mut u8>().sub(1).read() }
    }
}
