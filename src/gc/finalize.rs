//! Go's finalizers and cleanups (`runtime.SetFinalizer`,
//! `runtime.AddCleanup`) on bdwgc, which has one finalizer slot per
//! object.
//!
//! An object with only a finalizer uses the slot directly (the common case
//! costs one `GC_register_finalizer`). An object with cleanups gets the
//! slot for a dispatcher instead, and an entry in a side table keyed by
//! its hidden address: its finalizer, if any (taken over from the slot),
//! and its cleanups, each with its argument kept alive in root memory.
//! When the object becomes unreachable the dispatcher runs, on the
//! finalizer thread: if there is a finalizer, it runs it (the object lives
//! on for it, as in Go) and takes the slot again, so that the cleanups run
//! when the object is unreachable once more; otherwise it runs every
//! cleanup with its argument (never with the object, which is gone) and
//! drops the entry. `Cleanup::stop` removes one cleanup before it runs.
//! Under `nogc` nothing is collected and nothing ever runs.

use super::{Finalizer, Kind};
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A cleanup function: called with its argument.
pub type CleanupFn = unsafe extern "C" fn(arg: *mut c_void);

/// Go's `runtime.Cleanup`: stops a cleanup that has not run yet.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cleanup {
    /// The object's address, hidden (inverted: it keeps nothing alive).
    hidden: usize,
    id: u64,
}

struct Registered {
    id: u64,
    f: CleanupFn,
    /// One word of root memory holding the argument.
    arg: NonNull<usize>,
}

#[derive(Default)]
struct Entry {
    finalizer: Option<(Finalizer, usize)>,
    cleanups: Vec<Registered>,
}

// SAFETY: used under the mutex only; the pointers are root memory of ours.
unsafe impl Send for Entry {}

static ENTRIES: Mutex<Option<HashMap<usize, Entry>>> = Mutex::new(None);
/// Whether any cleanup was ever added (finalizers skip the table before).
static ANY: AtomicBool = AtomicBool::new(false);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn entries() -> std::sync::MutexGuard<'static, Option<HashMap<usize, Entry>>> {
    ENTRIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Before a fork (see `gc::TABLES_FORK`).
pub(super) fn lock_for_fork() {
    super::fork::held::keep(entries());
}

/// Sets `obj`'s finalizer (see [`super::register_finalizer`]), through
/// the dispatcher's entry when the object has one.
///
/// # Safety
/// As [`super::register_finalizer`].
pub(super) unsafe fn set_finalizer(obj: *mut u8, f: Option<Finalizer>, data: *mut c_void) {
    if ANY.load(Ordering::Acquire) {
        let mut table = entries();
        if let Some(entry) = table.as_mut().and_then(|t| t.get_mut(&!(obj as usize))) {
            entry.finalizer = f.map(|f| (f, data as usize));
            return;
        }
    }
    // SAFETY: forwarded from the caller.
    unsafe { super::backend::register_finalizer(obj, f, data) };
}

/// Go's `runtime.AddCleanup(obj, f, arg)`: `f(arg)` runs once after `obj`
/// becomes unreachable (after its finalizer, if it has one, and its next
/// unreachability). An object may have many. `arg` is kept alive until
/// then; it must not be `obj` (Go's panic says why).
///
/// # Safety
/// `obj` is the start of a live collectable object from this module, `f`
/// is safe to call with `arg` on any thread.
pub unsafe fn add_cleanup(obj: NonNull<u8>, f: CleanupFn, arg: *mut c_void) -> Cleanup {
    if arg.cast::<u8>() == obj.as_ptr() {
        // Go's message; a frame (or the C ABI's guard) makes it Go's panic.
        panic!("runtime.AddCleanup: ptr is equal to arg, cleanup will never run");
    }
    super::thread::ensure_registered();
    let cell =
        super::alloc_internal(Kind::Uncollectable, std::mem::size_of::<usize>()).cast::<usize>();
    // SAFETY: a fresh word of root memory.
    unsafe { cell.as_ptr().write(arg as usize) };
    let hidden = !(obj.as_ptr() as usize);
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut table = entries();
    ANY.store(true, Ordering::Release);
    let table = table.get_or_insert_with(HashMap::new);
    let entry = table.entry(hidden).or_insert_with(|| {
        // The slot goes to the dispatcher; a finalizer in it moves here.
        // SAFETY: obj is a live object's start, per the caller.
        let (old, data) = unsafe {
            super::backend::register_finalizer(obj.as_ptr(), Some(dispatch), std::ptr::null_mut())
        };
        Entry {
            finalizer: old.map(|f| (f, data as usize)),
            cleanups: Vec::new(),
        }
    });
    entry.cleanups.push(Registered { id, f, arg: cell });
    Cleanup { hidden, id }
}

impl Cleanup {
    /// Go's `Cleanup.Stop()`: the cleanup will not run (nothing happens if
    /// it ran already).
    pub fn stop(self) {
        let mut table = entries();
        let Some(entry) = table.as_mut().and_then(|t| t.get_mut(&self.hidden)) else {
            return;
        };
        if let Some(at) = entry.cleanups.iter().position(|c| c.id == self.id) {
            let c = entry.cleanups.swap_remove(at);
            // SAFETY: the argument's root word, ours alone.
            unsafe { super::free_internal(c.arg.as_ptr().cast()) };
        }
    }
}

/// The dispatcher in an object's finalizer slot (see the module docs).
unsafe extern "C" fn dispatch(obj: *mut c_void, _data: *mut c_void) {
    let hidden = !(obj as usize);
    let mut table = entries();
    let Some(map) = table.as_mut() else { return };
    let Some(entry) = map.get_mut(&hidden) else {
        return;
    };
    if let Some((f, data)) = entry.finalizer.take() {
        if entry.cleanups.is_empty() {
            map.remove(&hidden);
        } else {
            // The cleanups wait for the next time the object is found
            // unreachable.
            // SAFETY: obj is the object being finalized: alive again.
            unsafe {
                super::backend::register_finalizer(obj.cast(), Some(dispatch), std::ptr::null_mut())
            };
        }
        drop(table);
        // SAFETY: the finalizer the program registered for obj.
        unsafe { f(obj, data as *mut c_void) };
        return;
    }
    let entry = map.remove(&hidden).unwrap_or_default();
    drop(table);
    for c in entry.cleanups {
        // SAFETY: the argument's root word, read once, then freed.
        let arg = unsafe { c.arg.as_ptr().read() } as *mut c_void;
        // SAFETY: as above.
        unsafe { super::free_internal(c.arg.as_ptr().cast()) };
        // SAFETY: the cleanup the program registered, with its argument.
        unsafe { (c.f)(arg) };
    }
}
