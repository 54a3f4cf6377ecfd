//! Weak pointers: Go's `weak.Make(p)` and `Pointer.Value()`.
//!
//! A weak pointer is a small collectable cell, never scanned, that holds
//! the object's address hidden (bit-inverted, so that nothing mistakes it
//! for a reference) and is registered with bdwgc as a *disappearing link*:
//! the collection that finds the object unreachable clears it. Reading it
//! happens under the collector's lock (`GC_call_with_reader_lock`), so a
//! collection cannot clear it between the read and the moment the address
//! is back in a register, where it keeps the object alive.
//!
//! As in Go, two weak pointers made from the same object are the same
//! pointer (they can key a map, and stay equal after the object is gone):
//! a table interns the cell of each object that has one, keeping the cell
//! alive through scanned root memory; an entry whose object has died is
//! dropped from the table at the next growth, after which the cell lives
//! only as long as the program holds it.
//!
//! Under `nogc` nothing is collected: a weak pointer's value is its object
//! for ever. Objects of the precise collector have weak handles of their
//! own concern; these are for the bdwgc heap.

use super::Kind;
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Mutex;

/// Go's `weak.Pointer`: a reference that does not keep its object alive.
/// Equal weak pointers were made from the same object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Weak(NonNull<usize>);

// SAFETY: the cell is a GC object any registered thread may read (under
// the collector's lock); it is never written after it is made, except by
// the collector clearing it.
unsafe impl Send for Weak {}
// SAFETY: as above.
unsafe impl Sync for Weak {}

/// The interning table: the object's address to its cell, and the scanned
/// array that keeps the cells alive.
struct Table {
    cells: HashMap<usize, NonNull<usize>>,
    /// Root memory holding every cell of `cells` (unordered).
    roots: NonNull<usize>,
    capacity: usize,
}

// SAFETY: only used under the mutex.
unsafe impl Send for Table {}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// Before a fork (see `gc::TABLES_FORK`).
pub(super) fn lock_for_fork() {
    super::fork::held::keep(TABLE.lock().unwrap_or_else(|e| e.into_inner()));
}

impl Weak {
    /// Go's `weak.Make(p)`: the weak pointer of the collectable object
    /// that `obj` points to the start of; `None` for null.
    pub fn make(obj: NonNull<u8>) -> Weak {
        super::thread::ensure_registered();
        ANY.store(true, std::sync::atomic::Ordering::Release);
        let mut guard = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        let table = guard.get_or_insert_with(|| Table {
            cells: HashMap::new(),
            roots: alloc_roots(64),
            capacity: 64,
        });
        let addr = obj.as_ptr() as usize;
        if let Some(&cell) = table.cells.get(&addr) {
            // The same object, or a new one at a dead object's address:
            // the dead one's cell was cleared.
            if read(cell) == Some(obj) {
                return Weak(cell);
            }
            table.cells.remove(&addr);
            // The roots follow the table's order: lay them out again.
            rewrite_roots(table);
        }
        if table.cells.len() == table.capacity {
            // Drop the entries whose objects died, and grow if still full.
            table.cells.retain(|_, cell| read(*cell).is_some());
            if table.cells.len() * 2 > table.capacity {
                let capacity = table.capacity * 2;
                let roots = alloc_roots(capacity);
                // SAFETY: the old array is root memory of ours, replaced now.
                unsafe { super::free_internal(table.roots.as_ptr().cast()) };
                table.roots = roots;
                table.capacity = capacity;
            }
            rewrite_roots(table);
        }
        let cell =
            super::alloc_internal(Kind::Atomic, std::mem::size_of::<usize>()).cast::<usize>();
        // SAFETY: a fresh cell of ours; the link is registered before the
        // cell is published.
        unsafe {
            cell.as_ptr().write(!addr);
            super::backend::register_weak(cell.as_ptr().cast(), obj.as_ptr());
        }
        let slot = table.cells.len();
        table.cells.insert(addr, cell);
        // SAFETY: slot < capacity (the table was not full, or was made room in).
        unsafe { table.roots.as_ptr().add(slot).write(cell.as_ptr() as usize) };
        Weak(cell)
    }

    /// Go's `Pointer.Value()`: the object, or `None` once a collection has
    /// found it unreachable.
    pub fn value(self) -> Option<NonNull<u8>> {
        read(self.0)
    }

    /// The weak pointer as C sees it (`defergc_weak_make`).
    pub fn into_raw(self) -> *mut c_void {
        self.0.as_ptr().cast()
    }

    /// # Safety
    /// `raw` came from [`Weak::into_raw`] and its cell is alive (the
    /// program kept it where the collector sees it).
    pub unsafe fn from_raw(raw: *mut c_void) -> Option<Weak> {
        NonNull::new(raw.cast::<usize>()).map(Weak)
    }
}

/// Runs `f` under the collector's lock, with a reader of weak pointers
/// that takes no lock: while `f` runs, no collection clears a link or
/// frees an object that a weak pointer still names, so `f` may read such
/// objects. `f` must not allocate (the global allocator may be the
/// collector's), block, or unwind.
#[cfg(feature = "precise")]
pub(crate) fn while_collections_wait<R>(
    f: impl FnOnce(&dyn Fn(Weak) -> Option<NonNull<u8>>) -> R,
) -> R {
    super::backend::with_reader_lock(|| {
        f(&|w: Weak| NonNull::new(super::backend::read_weak_locked(w.0.as_ptr())))
    })
}

/// Go's `runtime.KeepAlive(p)`: `p`'s object is reachable at least until
/// this call (the optimiser cannot drop the value before).
#[inline(never)]
pub fn keep_alive<T: ?Sized>(p: *const T) {
    std::hint::black_box(p);
}

fn alloc_roots(capacity: usize) -> NonNull<usize> {
    super::alloc_internal(Kind::Uncollectable, capacity * std::mem::size_of::<usize>()).cast()
}

/// Writes every cell of the table into its root array, zeroes the rest.
fn rewrite_roots(table: &mut Table) {
    let roots = table.roots.as_ptr();
    for (i, cell) in table.cells.values().enumerate() {
        // SAFETY: i < cells.len() <= capacity.
        unsafe { roots.add(i).write(cell.as_ptr() as usize) };
    }
    for i in table.cells.len()..table.capacity {
        // SAFETY: i < capacity.
        unsafe { roots.add(i).write(0) };
    }
}

/// The object a cell names, read under the collector's lock.
fn read(cell: NonNull<usize>) -> Option<NonNull<u8>> {
    NonNull::new(super::backend::read_weak(cell.as_ptr()))
}

/// Whether any weak pointer was ever made (frees skip the table before).
static ANY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The object at `obj` is about to be freed explicitly: its weak pointer,
/// if it has one, stops naming it (its link is unregistered first: the
/// collector must never follow a link to freed memory).
pub(crate) fn forget(obj: *mut u8) {
    if !ANY.load(std::sync::atomic::Ordering::Acquire) {
        return;
    }
    let mut guard = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(table) = guard.as_mut() else { return };
    if let Some(cell) = table.cells.remove(&(obj as usize)) {
        // SAFETY: a cell of ours, rooted until now; its link goes first.
        unsafe { super::backend::unregister_weak(cell.as_ptr().cast()) };
        // SAFETY: as above: the cell now names nothing.
        unsafe { cell.as_ptr().write(0) };
        rewrite_roots(table);
    }
}
