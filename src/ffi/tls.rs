//! C ABI: per-thread slots the collector scans.
//!
//! A C key is an index into an append-only table of slots (keys are never
//! reused), so a key is validated with one bounds check: an unknown key is
//! reported, never used. A slot holds a `void *` and the destructor given
//! at creation, which runs at thread exit on a non-NULL value, as with
//! pthread keys.

use super::{entry, errors};
use crate::tls::{self, Slot};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
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

const CHUNK: usize = 1024;
const CHUNKS: usize = 1 << 16;

/// A key's slot and the destructor its values get.
#[derive(Clone, Copy)]
struct Entry {
    slot: Slot<Value>,
    destructor: Option<Destructor>,
}

/// Entries by key: chunks that never move, each published before the count
/// that makes its keys valid.
static TABLE: [AtomicPtr<Entry>; CHUNKS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS];
static COUNT: AtomicUsize = AtomicUsize::new(0);
static CREATE: Mutex<()> = Mutex::new(());

fn entry_of(key: u64) -> Option<Entry> {
    let key = usize::try_from(key).ok()?;
    if key >= COUNT.load(Ordering::Acquire) {
        return None;
    }
    let chunk = TABLE[key / CHUNK].load(Ordering::Acquire);
    // SAFETY: every key below COUNT lies in a published, initialised chunk.
    Some(unsafe { *chunk.add(key % CHUNK) })
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
        if n >= CHUNK * CHUNKS {
            return errors::ENOMEM;
        }
        let new = Entry {
            slot: tls::alloc(Some(run_destructor)),
            destructor,
        };
        let mut chunk = TABLE[n / CHUNK].load(Ordering::Acquire);
        if chunk.is_null() {
            chunk = Box::into_raw(vec![new; CHUNK].into_boxed_slice()).cast();
            TABLE[n / CHUNK].store(chunk, Ordering::Release);
        }
        // SAFETY: n % CHUNK is inside the chunk, and no reader looks at it
        // before COUNT says so.
        unsafe { chunk.add(n % CHUNK).write(new) };
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
        Some(e) => e.slot.get().map_or(std::ptr::null_mut(), |v| v.value),
        None => crate::abort(&format!("defergc: defergc_tls_get: unknown tls key {key}")),
    })
}

/// Sets this thread's value of the slot `key`. Returns 0, or
/// `DEFERGC_EINVAL` for a key that no `defergc_tls_create` returned.
#[no_mangle]
pub extern "C" fn defergc_tls_set(key: u64, value: *mut c_void) -> c_int {
    entry("defergc_tls_set", || {
        let Some(e) = entry_of(key) else {
            return errors::EINVAL;
        };
        e.slot.set(Value {
            value,
            destructor: e.destructor,
        });
        0
    })
}
