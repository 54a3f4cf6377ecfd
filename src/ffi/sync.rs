//! C ABI: Go's `sync` types (`defergc_mutex`, `defergc_rwmutex`,
//! `defergc_wg`, `defergc_once`, `defergc_cond`).
//!
//! Each is plain data that compiled code embeds where it likes; all-zero
//! is the ready state, as Go's zero values are. A goroutine that waits
//! parks; a plain thread blocks. A NULL object aborts with a `defergc:`
//! message naming the function; Go's own misuse (unlocking an unlocked
//! mutex, a negative wait-group counter) is Go's fatal error or panic.

use super::guard;
use crate::defer::PlainError;
use crate::go::{Cond, Mutex, Once, RwMutex, WaitGroup};
use std::ffi::{c_int, c_void};

/// The object behind `p`, or an abort naming `what`.
///
/// # Safety
/// `p` is NULL or points to a live object of type `T`.
unsafe fn object<'a, T>(p: *mut T, what: &str) -> &'a T {
    // SAFETY: forwarded from the caller.
    match unsafe { p.as_ref() } {
        Some(o) => o,
        None => crate::abort(&format!("defergc: {what}: NULL object")),
    }
}

/// Go's `m.Lock()`.
///
/// # Safety
/// `m` is NULL or a `defergc_mutex` (zero-initialised before first use).
#[no_mangle]
pub unsafe extern "C" fn defergc_mutex_lock(m: *mut Mutex) {
    super::entry("defergc_mutex_lock", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(m, "defergc_mutex_lock") }.lock()
    })
}

/// Go's `m.TryLock()`: 1 if it locked it.
///
/// # Safety
/// As for `defergc_mutex_lock`.
#[no_mangle]
pub unsafe extern "C" fn defergc_mutex_trylock(m: *mut Mutex) -> c_int {
    super::entry("defergc_mutex_trylock", || {
        // SAFETY: forwarded.
        c_int::from(unsafe { object(m, "defergc_mutex_trylock") }.try_lock())
    })
}

/// Go's `m.Unlock()`: unlocking an unlocked mutex is Go's fatal error
/// (`fatal error: sync: unlock of unlocked mutex`, status 2).
///
/// # Safety
/// As for `defergc_mutex_lock`.
#[no_mangle]
pub unsafe extern "C" fn defergc_mutex_unlock(m: *mut Mutex) {
    super::entry("defergc_mutex_unlock", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(m, "defergc_mutex_unlock") }.unlock()
    })
}

/// Go's `rw.RLock()`.
///
/// # Safety
/// `rw` is NULL or a `defergc_rwmutex` (zero-initialised before first use).
#[no_mangle]
pub unsafe extern "C" fn defergc_rwmutex_rlock(rw: *mut RwMutex) {
    super::entry("defergc_rwmutex_rlock", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(rw, "defergc_rwmutex_rlock") }.rlock()
    })
}

/// Go's `rw.RUnlock()` (of an unlocked one: Go's fatal error).
///
/// # Safety
/// As for `defergc_rwmutex_rlock`.
#[no_mangle]
pub unsafe extern "C" fn defergc_rwmutex_runlock(rw: *mut RwMutex) {
    super::entry("defergc_rwmutex_runlock", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(rw, "defergc_rwmutex_runlock") }.runlock()
    })
}

/// Go's `rw.Lock()`.
///
/// # Safety
/// As for `defergc_rwmutex_rlock`.
#[no_mangle]
pub unsafe extern "C" fn defergc_rwmutex_lock(rw: *mut RwMutex) {
    super::entry("defergc_rwmutex_lock", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(rw, "defergc_rwmutex_lock") }.lock()
    })
}

/// Go's `rw.Unlock()` (of an unlocked one: Go's fatal error).
///
/// # Safety
/// As for `defergc_rwmutex_rlock`.
#[no_mangle]
pub unsafe extern "C" fn defergc_rwmutex_unlock(rw: *mut RwMutex) {
    super::entry("defergc_rwmutex_unlock", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(rw, "defergc_rwmutex_unlock") }.unlock()
    })
}

/// Go's `wg.Add(delta)`: a counter below zero panics (Go's `sync: negative
/// WaitGroup counter`).
///
/// # Safety
/// `wg` is NULL or a `defergc_wg` (zero-initialised before first use).
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_wg_add(wg: *mut WaitGroup, delta: c_int) {
    guard(|| {
        // SAFETY: forwarded.
        if let Err(message) = unsafe { object(wg, "defergc_wg_add") }.add(delta) {
            crate::defer::panic(PlainError(message));
        }
    })
}

/// Go's `wg.Done()`.
///
/// # Safety
/// As for `defergc_wg_add`.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_wg_done(wg: *mut WaitGroup) {
    // SAFETY: forwarded.
    unsafe { defergc_wg_add(wg, -1) }
}

/// Go's `wg.Wait()`.
///
/// # Safety
/// As for `defergc_wg_add`.
#[no_mangle]
pub unsafe extern "C" fn defergc_wg_wait(wg: *mut WaitGroup) {
    super::entry("defergc_wg_wait", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(wg, "defergc_wg_wait") }.wait()
    })
}

/// Go's `once.Do(f)` with `f(arg)`: runs it if no call has; every call
/// returns after the one that runs it ends. If `f` panics, the once counts
/// as done and the panic goes on, as in Go.
///
/// # Safety
/// `o` is NULL or a `defergc_once` (zero-initialised); `f` may be called
/// with `arg`.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_once_do(
    o: *mut Once,
    f: Option<unsafe extern "C-unwind" fn(*mut c_void)>,
    arg: *mut c_void,
) {
    guard(|| {
        // SAFETY: forwarded.
        let once = unsafe { object(o, "defergc_once_do") };
        let Some(f) = f else {
            crate::abort("defergc: defergc_once_do: NULL function");
        };
        once.call(|| {
            // A Rust frame around the call: a panic in f unwinds to it
            // (and through the once's bookkeeping), never jumps past it.
            // SAFETY: the caller vouched for f and arg.
            crate::defer::call(|_| unsafe { f(arg) })
        });
    })
}

/// Go's `c.Wait()` with its locker `m`: unlocks `m`, waits for a signal or
/// broadcast, locks `m` again. Wake-ups may come without the condition
/// holding: wait in a loop.
///
/// # Safety
/// `c` is NULL or a `defergc_cond` (zero-initialised); `m` a locked
/// `defergc_mutex`.
#[no_mangle]
pub unsafe extern "C" fn defergc_cond_wait(c: *mut Cond, m: *mut Mutex) {
    super::entry("defergc_cond_wait", || {
        // SAFETY: forwarded.
        let (c, m) = unsafe {
            (
                object(c, "defergc_cond_wait"),
                object(m, "defergc_cond_wait"),
            )
        };
        c.wait(m)
    })
}

/// Go's `c.Signal()`.
///
/// # Safety
/// `c` is NULL or a `defergc_cond`.
#[no_mangle]
pub unsafe extern "C" fn defergc_cond_signal(c: *mut Cond) {
    super::entry("defergc_cond_signal", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(c, "defergc_cond_signal") }.signal()
    })
}

/// Go's `c.Broadcast()`.
///
/// # Safety
/// `c` is NULL or a `defergc_cond`.
#[no_mangle]
pub unsafe extern "C" fn defergc_cond_broadcast(c: *mut Cond) {
    super::entry("defergc_cond_broadcast", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { object(c, "defergc_cond_broadcast") }.broadcast()
    })
}
