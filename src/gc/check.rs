//! What the collector can tell about a pointer it is handed back: whether
//! it starts one of its live allocations. The C ABI asks before it frees,
//! resizes or trusts a pointer from compiled code, so that a stack or
//! malloc address, a pointer into the middle of an object, or a second
//! free is refused with its name instead of corrupting the heap.
//!
//! The backend answers whether an address starts an allocation (bdwgc
//! through `GC_base`, which accepts any address; the malloc backend from
//! the header it writes in front of each allocation, read only once the
//! address is known to be mapped). A freed allocation is told apart for
//! certain while it waits in a quarantine of the last [`QUARANTINE`]
//! explicit frees, cleared so that it keeps nothing alive; after that, its
//! memory may hold a new allocation, and no address-based check can tell
//! the two apart.

use super::backend;
use std::sync::Mutex;

/// Why a pointer was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtrError {
    /// Not memory from the collector's allocation functions.
    NotAllocated,
    /// Inside an allocation, not at its start.
    Interior,
    /// Freed already.
    Freed,
}

impl PtrError {
    /// What was wrong, for a `defergc:` message.
    pub fn message(self) -> &'static str {
        match self {
            PtrError::NotAllocated => {
                "the pointer is not memory from defergc's allocation functions (stack, malloc or foreign memory)"
            }
            PtrError::Interior => "the pointer points inside an allocation, not at its start",
            PtrError::Freed => "the memory was already freed",
        }
    }
}

/// Explicit frees that have not yet gone back to the allocator.
pub const QUARANTINE: usize = 64;

/// The quarantine: a ring of addresses inside a static (so in a data
/// segment the collector scans: a quarantined object is not collected
/// before it is freed).
struct Ring {
    slots: [usize; QUARANTINE],
    next: usize,
}

impl Ring {
    fn contains(&self, p: usize) -> bool {
        self.slots.contains(&p)
    }

    /// Puts `p` in, returning the address it displaced (0: none).
    fn push(&mut self, p: usize) -> usize {
        let old = std::mem::replace(&mut self.slots[self.next], p);
        self.next = (self.next + 1) % QUARANTINE;
        old
    }
}

static FREED: Mutex<Ring> = Mutex::new(Ring {
    slots: [0; QUARANTINE],
    next: 0,
});

fn freed() -> std::sync::MutexGuard<'static, Ring> {
    FREED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `ptr` starts a live allocation (as far as can be told: see the
/// module docs). Accepts any address.
pub fn check(ptr: *const u8) -> Result<(), PtrError> {
    super::init();
    backend::starts_allocation(ptr)?;
    if freed().contains(ptr as usize) {
        return Err(PtrError::Freed);
    }
    Ok(())
}

/// Frees `ptr` after [`check`]: its bytes are cleared now, and it goes
/// back to the allocator once [`QUARANTINE`] later checked frees passed.
///
/// # Safety
/// Nobody uses the allocation after a successful free.
pub unsafe fn free(ptr: *mut u8) -> Result<(), PtrError> {
    super::thread::ensure_registered();
    backend::starts_allocation(ptr)?;
    let mut q = freed();
    if q.contains(ptr as usize) {
        return Err(PtrError::Freed);
    }
    // SAFETY: a live allocation of ours (checked), of this usable size.
    unsafe { std::ptr::write_bytes(ptr, 0, backend::allocation_size(ptr)) };
    let old = q.push(ptr as usize);
    drop(q);
    if old != 0 {
        // SAFETY: a checked allocation that waited out its quarantine;
        // nobody uses it (the caller's promise when it was freed).
        unsafe { backend::free(old as *mut u8) };
    }
    Ok(())
}

/// Resizes `ptr` after [`check`] (see [`super::realloc`]).
///
/// # Safety
/// As for [`super::realloc`], but `ptr` may be any address.
pub unsafe fn realloc(ptr: *mut u8, size: usize) -> Result<*mut u8, PtrError> {
    if !ptr.is_null() {
        check(ptr)?;
    }
    // SAFETY: null or a live allocation of ours (checked).
    Ok(unsafe { super::realloc(ptr, size) })
}

/// Before a fork: the quarantine's lock (released after it), so that the
/// child does not start with it held by a thread that did not come along.
pub(super) static FORK: super::fork::ForkHooks = super::fork::ForkHooks {
    prepare: || super::fork::held::keep(freed()),
    ..super::fork::ForkHooks::NONE
};
