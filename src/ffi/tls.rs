//! C ABI: per-thread slots the collector scans.
//!
//! A C key is an index into an append-only table of slots (keys are never
//! reused; `crate::segmented`, chunks that never move), so a key is validated with one bounds check: an unknown key is
//! reported, never used. A slot holds a `void *` and the destructor given
//! at creation, which runs at thread exit on a non-NULL value, as with
//! pthread keys.

use super::{entry, errors};
use crate::segmented::{Segmented, Zeroed};
use crate::tls::{self, Slot};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The destructor of a C slot.
type Destructor = unsafe extern "C" fn(*mut c_void);

/// What a C slot holds on each thread.
#[derive(Clone, Copy)]
struct Value {
    value: *mut c_void,
    destructor: Option<Destructor>,
}

fn run_destructor(v: Value) {
    if let (Some(d), false) = (v.destructor, v.value.is_null()) {
        // SAFETY: the destructor was given for values of this slot.
        unsafe { d(v.value) }
    }
}

/// A key's slot and the destructor its values get, written once before
/// the count that makes the key valid is published.
struct Entry {
    /// [`Slot::to_bits`] of the key's slot.
    slot: AtomicU64,
    /// The destructor as a function address, or 0.
    destructor: AtomicUsize,
}

// SAFETY: zero is a valid AtomicU64 and AtomicUsize.
unsafe impl Zeroed for Entry {}

/// Entries by key, in chunks of 1,024 that never move.
type Table = Segmented<Entry, 10, { 1 << 16 }>;
static TABLE: Table = Table::new();
const _: () = assert!(Table::CAPACITY == 67_108_864, "as documented below");
/// Keys below it are valid: their entries are written.
static COUNT: AtomicUsize = AtomicUsize::new(0);
static CREATE: Mutex<()> = Mutex::new(());

/// The slot and destructor of `key`, if a `defergc_tls_create` made it.
fn entry_of(key: u64) -> Option<(Slot<Value>, Option<Destructor>)> {
    let key = usize::try_from(key).ok()?;
    if key >= COUNT.load(Ordering::Acquire) {
        return None;
    }
    // Every key below COUNT had its chunk made before COUNT was published.
    let e = TABLE.get(key)?;
    // SAFETY: create stored the bits of a Slot<Value>.
    let slot = unsafe { Slot::from_bits(e.slot.load(Ordering::Relaxed)) };
    let destructor = match e.destructor.load(Ordering::Relaxed) {
        0 => None,
        // SAFETY: create stored a Destructor's address.
        d => Some(unsafe { std::mem::transmute::<usize, Destructor>(d) }),
    };
    Some((slot, destructor))
}

/// Creates a slot and stores its key in `*key`. `destructor` (may be NULL)
/// runs at thread exit on the thread's value if it is not NULL. Returns 0,
/// `DEFERGC_EINVAL` if `key` is NULL, or `DEFERGC_ENOMEM` when the table
/// (67,108,864 keys) is full.
///
/// # Safety
/// `key` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_tls_create(
    key: *mut u64,
    destructor: Option<Destructor>,
) -> c_int {
    entry("defergc_tls_create", || {
        if key.is_null() {
            return errors::EINVAL;
        }
        let _one_at_a_time = CREATE.lock().unwrap_or_else(|e| e.into_inner());
        let n = COUNT.load(Ordering::Relaxed);
        if !TABLE.ensure(n) {
            return errors::ENOMEM;
        }
        let slot = tls::alloc(Some(run_destructor));
        // SAFETY: ensure made the chunk; no reader looks at entry n before
        // COUNT says so.
        let e = unsafe { TABLE.get_unchecked(n) };
        e.slot.store(slot.to_bits(), Ordering::Relaxed);
        e.destructor
            .store(destructor.map_or(0, |d| d as usize), Ordering::Relaxed);
        COUNT.store(n + 1, Ordering::Release);
        // SAFETY: key is non-null and writable per the caller.
        unsafe { key.write(n as u64) };
        0
    })
}

/// This thread's value of the slot `key` (NULL if never set). Aborts with a
/// `defergc:` message for a key that no `defergc_tls_create` returned.
#[no_mangle]
pub extern "C" fn defergc_tls_get(key: u64) -> *mut c_void {
    entry("defergc_tls_get", || match entry_of(key) {
        Some((slot, _)) => slot.get().map_or(std::ptr::null_mut(), |v| v.value),
        None => crate::abort(&format!("defergc: defergc_tls_get: unknown tls key {key}")),
    })
}

/// Sets this thread's value of the slot `key`. Returns 0, or
/// `DEFERGC_EINVAL` for a key that no `defergc_tls_create` returned.
#[no_mangle]
pub extern "C" fn defergc_tls_set(key: u64, value: *mut c_void) -> c_int {
    entry("defergc_tls_set", || {
        let Some((slot, destructor)) = entry_of(key) else {
            return errors::EINVAL;
        };
        slot.set(Value { value, destructor });
        0
    })
}
