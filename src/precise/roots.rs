//! Roots other than shadow stacks: global roots and root memory.
//!
//! - **Global roots** are 8-byte slots outside the heap that hold a handle
//!   (or null): registered addresses ([`add_global_root`], for compiled
//!   code's global variables) and [`GlobalRoot`] cells for Rust code.
//! - **Root memory** is memory such as tls slots and defer records
//!   (DESIGN.md invariant 3): scanners registered with
//!   [`add_root_memory_scanner`] offer each of its words to the marker as a
//!   *candidate*, which the marker keeps only if it is a live handle
//!   (`handles::resolve_candidate`). Any word is safe to offer.
//!
//! The marker reads all of them while the world is stopped. A scanner runs
//! then, so it must not call into the precise collector or take a lock
//! that a stopped thread may hold.

use super::access;
use super::error::{Error, Result};
use super::handles::{self, Handle};
use super::threads;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Registered global root addresses, each with its registration count.
static GLOBALS: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

/// Functions that offer root memory words to the marker.
pub(crate) type RootMemoryScanner = fn(&mut dyn FnMut(u64));
static SCANNERS: Mutex<Vec<RootMemoryScanner>> = Mutex::new(Vec::new());

fn globals() -> MutexGuard<'static, BTreeMap<usize, usize>> {
    GLOBALS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers the 8-byte slot at `slot` as a global root: while registered,
/// the handle it holds (or 0) keeps its object alive. Registering an
/// address twice needs two removals. [`Error::BadRootAddress`] for a null
/// or unaligned address.
///
/// # Safety
/// `slot` stays valid for reads until [`remove_global_root`], and is only
/// written by registered threads that are not in native code (so that a
/// collection never sees a half-done store).
pub unsafe fn add_global_root(slot: *const u64) -> Result<()> {
    if slot.is_null() || slot as usize % 8 != 0 {
        return Err(Error::BadRootAddress);
    }
    *globals().entry(slot as usize).or_insert(0) += 1;
    Ok(())
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
        threads::current()?;
        if let Some(h) = handle {
            handles::resolve(h)?;
        }
        access::write_handle_slot(&self.cell, Handle::raw_or_null(handle));
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
        // SAFETY: registered slots are valid, aligned and only written by
        // threads that are stopped now (add_global_root's contract).
        visit(unsafe { &*(addr as *const AtomicU64) }.load(Ordering::Acquire));
    }
}

/// Adds a source of root memory: at every collection, `scanner` is called
/// with a visitor to offer each word of its memory as a candidate handle.
/// Each source adds its scanner once. Called with the world stopped: it
/// must not call into the precise collector.
#[allow(dead_code)] // Wired to tls slots and defer records by their layers.
pub(crate) fn add_root_memory_scanner(scanner: RootMemoryScanner) {
    SCANNERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(scanner);
}

/// Offers every word of root memory to `visit`: the crate's root memory
/// (tls slot pages, defer records, panic values, of every thread), then
/// whatever the added scanners offer.
pub(crate) fn scan_root_memory(visit: &mut dyn FnMut(u64)) {
    // SAFETY: the world is stopped: every registered thread is at a
    // safepoint or in native code, where it does not touch root memory.
    unsafe { crate::roots::by_thread::for_each_word(None, &mut |w| visit(w as u64)) };
    let scanners = SCANNERS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for scanner in scanners {
        scanner(visit);
    }
}
