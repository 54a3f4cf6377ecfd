//! Roots other than shadow stacks: global roots and root memory.
//!
//! - **Global roots** are 8-byte slots outside the heap that hold a handle
//!   (or null): registered addresses ([`add_global_root`], for compiled
//!   code's global variables) and [`GlobalRoot`] cells for Rust code.
//! - **Root memory** is memory such as tls slots and defer records
//!   (design.md invariant 3), kept per owning thread by
//!   `crate::roots::precise`: each of its words is offered to the marker
//!   as a *candidate*, which the marker keeps only if it is a live handle.
//!   Any word is safe to offer.
//!
//! Who reads what, and when (see `collector/` for why it is enough):
//!
//! - each thread's root memory is snapshotted at its handshake, by itself
//!   or by the collector on its behalf while it is in native code
//!   (`mutator::act`); root memory needs no barrier, since only its owner
//!   writes it;
//! - global roots, root memory that no context owns (*orphans*: blocks
//!   whose thread has exited, and shared blocks such as channel buffers)
//!   and shared ranges (compiled code's channel buffers, in the base
//!   collector's heap) are read by the collector thread after every
//!   thread has snapshotted ([`scan_shared_roots`]), and global roots
//!   again at every Flush round. What a channel copies into or out of
//!   shared memory while a marking runs is logged by the copier
//!   (`access::log_moved_words`, which `marking` hands to root memory
//!   for the time of each marking). Stores into global roots through [`GlobalRoot`]
//!   and [`store_global`] go through the deletion barrier; plain stores
//!   into a registered address are read by those scans, which is enough
//!   unless the slot is overwritten while a marking runs (see
//!   [`add_global_root`]).

use super::access;
use super::error::{Error, Result};
use super::handles::{self, Handle};
use super::mutator;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Registered global root addresses, each with its registration count.
static GLOBALS: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

/// Test hooks that offer extra root words to the marker (and can hold a
/// collection open while they run).
#[cfg(test)]
pub(crate) type RootMemoryScanner = fn(&mut dyn FnMut(u64));
#[cfg(test)]
static SCANNERS: Mutex<Vec<RootMemoryScanner>> = Mutex::new(Vec::new());

/// Before a fork (a leaf lock).
pub(super) fn lock_for_fork() {
    crate::gc::fork::held::keep(globals());
}

fn globals() -> MutexGuard<'static, BTreeMap<usize, usize>> {
    GLOBALS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers the 8-byte slot at `slot` as a global root: while registered,
/// the handle it holds (or 0) keeps its object alive. Registering an
/// address twice needs two removals. [`Error::BadRootAddress`] for a null
/// or unaligned address.
///
/// Stores into the slot should go through [`store_global`], which applies
/// the collector's write barrier. A plain 8-byte store is read by the
/// collector's next scan of the globals; it is enough for a slot that
/// only ever changes from null to a handle, or between cycles, but a
/// handle that is overwritten by a plain store while a marking runs, and
/// that another thread loaded from the slot before, may be freed under
/// that thread.
///
/// # Safety
/// `slot` stays valid for reads until [`remove_global_root`], and is only
/// written by registered threads that are not in native code, with
/// aligned 8-byte stores (so that the collector never sees a half-done
/// store).
pub unsafe fn add_global_root(slot: *const u64) -> Result<()> {
    if slot.is_null() || !(slot as usize).is_multiple_of(8) {
        return Err(Error::BadRootAddress);
    }
    *globals().entry(slot as usize).or_insert(0) += 1;
    Ok(())
}

/// Stores `value` (a live handle, or null) into the 8-byte slot at `slot`
/// through the collector's deletion barrier: the way for compiled code to
/// write a registered global root while collections run concurrently.
/// Errors: [`Error::BadRootAddress`] for a null or unaligned `slot`,
/// [`Error::UnknownRoot`] for one that is not registered (its handle
/// would not be kept alive), [`Error::StaleHandle`] /
/// [`Error::InvalidHandle`] for a `value` that is not live,
/// [`Error::InNative`] from native code.
///
/// # Safety
/// `slot` is valid for reads and writes, and only written through this
/// function or by the thread calling it.
pub unsafe fn store_global(slot: *mut u64, value: impl Into<Option<Handle>>) -> Result<()> {
    if slot.is_null() || !(slot as usize).is_multiple_of(8) {
        return Err(Error::BadRootAddress);
    }
    if !globals().contains_key(&(slot as usize)) {
        return Err(Error::UnknownRoot);
    }
    let ts = mutator::current()?;
    // SAFETY: an aligned, valid slot (the caller's obligation) accessed
    // atomically by everyone who writes it.
    let cell = unsafe { &*slot.cast_const().cast::<AtomicU64>() };
    access::store_live(ts, cell, value.into())
}

/// Unregisters a global root. [`Error::UnknownRoot`] if `slot` is not
/// registered.
pub fn remove_global_root(slot: *const u64) -> Result<()> {
    let mut globals = globals();
    match globals.get_mut(&(slot as usize)) {
        Some(1) => {
            globals.remove(&(slot as usize));
            Ok(())
        }
        Some(n) => {
            *n -= 1;
            Ok(())
        }
        None => Err(Error::UnknownRoot),
    }
}

/// A global root cell for Rust code: holds one handle (or null) and keeps
/// its object alive until it is dropped or changed. `Send` and `Sync`.
///
/// ```
/// use defergc::precise::{self, GlobalRoot};
/// let ty = precise::register_bytes_type().unwrap();
/// let root = GlobalRoot::new(precise::alloc_array(ty, 8).unwrap()).unwrap();
/// precise::collect().unwrap();
/// assert!(precise::deref(root.get().unwrap()).is_ok());
/// ```
pub struct GlobalRoot {
    cell: Box<AtomicU64>,
}

impl GlobalRoot {
    /// A registered root holding `handle`, which must be live (or null).
    pub fn new(handle: impl Into<Option<Handle>>) -> Result<GlobalRoot> {
        let root = GlobalRoot {
            cell: Box::new(AtomicU64::new(0)),
        };
        // SAFETY: the cell lives until drop, which unregisters it first,
        // and is written only through set (from running threads).
        unsafe { add_global_root(root.cell.as_ptr())? };
        root.set(handle)?;
        Ok(root)
    }

    /// The handle held (or `None`).
    pub fn get(&self) -> Option<Handle> {
        Handle::from_raw(self.cell.load(Ordering::Acquire)).ok()
    }

    /// Replaces the handle held; the new one must be live (or null).
    pub fn set(&self, handle: impl Into<Option<Handle>>) -> Result<()> {
        let handle = handle.into();
        let ts = mutator::current()?;
        if let Some(h) = handle {
            handles::resolve(h)?;
        }
        access::write_handle_slot(ts, &self.cell, Handle::raw_or_null(handle));
        Ok(())
    }
}

impl Drop for GlobalRoot {
    fn drop(&mut self) {
        let _ = remove_global_root(self.cell.as_ptr());
    }
}

impl std::fmt::Debug for GlobalRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GlobalRoot({:?})", self.get())
    }
}

/// Offers the value of every global root to `visit`.
pub(crate) fn for_each_global(visit: &mut dyn FnMut(u64)) {
    for &addr in globals().keys() {
        // SAFETY: registered slots are valid and aligned, and written with
        // whole 8-byte stores (add_global_root's contract).
        visit(unsafe { &*(addr as *const AtomicU64) }.load(Ordering::Acquire));
    }
}

/// Adds a test scanner: at every collection, `scanner` is called on the
/// collector thread, after the global roots and orphans, with a visitor
/// to offer candidate handles. It runs concurrently with the mutators.
#[cfg(test)]
pub(crate) fn add_root_memory_scanner(scanner: RootMemoryScanner) {
    SCANNERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(scanner);
}

/// The roots no thread snapshots for itself, read by the collector thread
/// once every thread has snapshotted its own: global roots, shared
/// ranges, and root memory that no context owns (blocks whose context has
/// exited, shared blocks such as channel buffers), and in the crate's
/// tests what the test scanners offer.
pub(crate) fn scan_shared_roots(visit: &mut dyn FnMut(u64)) {
    for_each_global(visit);
    crate::roots::precise::for_each_shared_range_word(visit);
    // SAFETY: orphaned root memory has no owner left to change its stacks
    // (an exiting thread's stacks are gone before its blocks are orphaned);
    // block words are read atomically.
    unsafe {
        crate::roots::precise::for_each_word(crate::roots::precise::orphans(), &mut |w| {
            visit(w as u64)
        })
    };
    #[cfg(test)]
    for scanner in SCANNERS.lock().unwrap_or_else(|e| e.into_inner()).clone() {
        scanner(visit);
    }
}
