//! Small root blocks (panic values, goroutine arguments: one or two per
//! panic or go statement) recycled per thread, zeroed, instead of taking
//! the collector's allocation lock each time.
//!
//! The cache holds whole allocations, headers included, that no collector
//! knows of any more: `roots` tells the collectors when a block leaves
//! the cache and before it comes back. Cached blocks are zeroed, so a
//! collector that scans them anyway (bdwgc scans every uncollectable
//! object) finds nothing in them.

use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of every cached allocation: 64 bytes of data and the header.
const SIZE: usize = super::HEADER + 64;
/// Blocks a thread keeps.
const KEEP: usize = 128;

struct Cache(Vec<NonNull<u8>>);

impl Drop for Cache {
    fn drop(&mut self) {
        for block in self.0.drain(..) {
            // SAFETY: cached blocks are live, unused allocations.
            unsafe { crate::gc::free(block.as_ptr()) };
        }
    }
}

thread_local! {
    static FREE: RefCell<Cache> = const { RefCell::new(Cache(Vec::new())) };
}

/// The usable size of a [`SIZE`]-byte allocation (learnt once).
static USABLE: AtomicUsize = AtomicUsize::new(0);

/// The bytes to allocate for `total`: small requests get the cached size,
/// so that their allocations can be cached when they are freed.
pub(super) fn rounded(total: usize) -> usize {
    if total <= SIZE {
        SIZE
    } else {
        total
    }
}

/// A cached allocation of at least `total` bytes, if `total` is small
/// and the thread has one.
pub(super) fn take(total: usize) -> Option<NonNull<u8>> {
    if total > SIZE {
        return None;
    }
    crate::fresh::try_with(&FREE, |f| f.borrow_mut().0.pop())
        .ok()
        .flatten()
}

/// Keeps `block` (zeroed here) if it is a small allocation and there is
/// room; gives it back otherwise.
///
/// # Safety
/// `block` is a live allocation from `gc::alloc_uncollectable` that
/// nobody uses any more.
pub(super) unsafe fn keep(block: NonNull<u8>) -> Result<(), NonNull<u8>> {
    // SAFETY: a live allocation of ours.
    let usable = unsafe { crate::gc::allocation_size(block.as_ptr()) };
    if usable != small_usable() {
        return Err(block);
    }
    crate::fresh::try_with(&FREE, |f| {
        let mut f = f.borrow_mut();
        if f.0.len() >= KEEP {
            return Err(block);
        }
        // Root memory is scanned: a cached block keeps nothing alive.
        // SAFETY: the whole allocation is ours.
        unsafe { std::ptr::write_bytes(block.as_ptr(), 0, usable) };
        f.0.push(block);
        Ok(())
    })
    .unwrap_or(Err(block))
}

/// The usable size of a [`SIZE`]-byte request.
fn small_usable() -> usize {
    let known = USABLE.load(Ordering::Relaxed);
    if known != 0 {
        return known;
    }
    let probe = crate::gc::alloc_uncollectable(SIZE);
    // SAFETY: just allocated, freed at once.
    let size = unsafe {
        let size = crate::gc::allocation_size(probe.as_ptr());
        crate::gc::free(probe.as_ptr());
        size
    };
    USABLE.store(size, Ordering::Relaxed);
    size
}
