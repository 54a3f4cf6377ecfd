//! C ABI: the collector, thread registration and thread creation.

use super::{entry, errors};
use crate::defer::Ended;
use crate::gc::{self, Kind};
use std::ffi::{c_int, c_void};
use std::sync::{Condvar, Mutex};

/// Collector statistics, as `defergc_stats` in the header.
#[repr(C)]
pub struct CStats {
    heap_size: u64,
    free_bytes: u64,
    unmapped_bytes: u64,
    bytes_allocated_since_gc: u64,
    bytes_allocated_total: u64,
    collections: u64,
    markers: u64,
    gc_time_ns: u64,
    stopped_time_ns: u64,
    max_pause_ns: u64,
    warnings: u64,
}

/// Starts the collector (idempotent; every other function does it too).
#[no_mangle]
pub extern "C" fn defergc_init() {
    entry("defergc_init", gc::init)
}

fn alloc(name: &str, kind: Kind, size: usize) -> *mut c_void {
    entry(name, || {
        // A preemption point (one load while no request is pending), as
        // Go's mallocgc is.
        crate::go::preempt_point();
        gc::try_alloc(kind, size).map_or(std::ptr::null_mut(), |p| p.as_ptr().cast())
    })
}

/// Collectable, scanned, zeroed memory; NULL when out of memory.
#[no_mangle]
pub extern "C" fn defergc_alloc(size: usize) -> *mut c_void {
    alloc("defergc_alloc", Kind::Scanned, size)
}

/// Collectable memory that is never scanned (no pointers), not zeroed;
/// NULL when out of memory.
#[no_mangle]
pub extern "C" fn defergc_alloc_atomic(size: usize) -> *mut c_void {
    alloc("defergc_alloc_atomic", Kind::Atomic, size)
}

/// Scanned memory that is never collected (root memory), zeroed; released
/// only by `defergc_free`. NULL when out of memory.
#[no_mangle]
pub extern "C" fn defergc_alloc_uncollectable(size: usize) -> *mut c_void {
    alloc("defergc_alloc_uncollectable", Kind::Uncollectable, size)
}

/// Frees memory from the allocation functions now (NULL is ignored).
/// Aborts with a `defergc:` message for a pointer that is not the start of
/// one of them, or one freed already (see `gc::check`).
///
/// # Safety
/// Nobody uses the memory afterwards.
#[no_mangle]
pub unsafe extern "C" fn defergc_free(p: *mut c_void) {
    entry("defergc_free", || {
        if p.is_null() {
            return;
        }
        // SAFETY: checked before it is freed; the caller's promise.
        if let Err(e) = unsafe { gc::check::free(p.cast()) } {
            crate::abort(&format!("defergc: defergc_free({p:p}): {}", e.message()));
        }
    })
}

/// Resizes an allocation (like C `realloc`); NULL when out of memory.
/// Aborts like `defergc_free` for a pointer that is not a live allocation.
///
/// # Safety
/// After a non-NULL return, `p` is not used again.
#[no_mangle]
pub unsafe extern "C" fn defergc_realloc(p: *mut c_void, size: usize) -> *mut c_void {
    entry("defergc_realloc", || {
        // SAFETY: checked first; the caller's promise.
        match unsafe { gc::check::realloc(p.cast(), size) } {
            Ok(q) => q.cast(),
            Err(e) => crate::abort(&format!(
                "defergc: defergc_realloc({p:p}, {size}): {}",
                e.message()
            )),
        }
    })
}

/// Runs a full collection (nothing under `nogc`).
#[no_mangle]
pub extern "C" fn defergc_collect() {
    entry("defergc_collect", gc::collect)
}

/// A full collection after zeroing the dead part of the caller's stack,
/// for tests that must see their garbage collected (nothing under `nogc`).
#[no_mangle]
pub extern "C" fn defergc_collect_with_clean_stack() {
    entry(
        "defergc_collect_with_clean_stack",
        gc::collect_with_clean_stack,
    )
}

/// Fills `*out` with the collector's statistics. Returns 0, or
/// `DEFERGC_EINVAL` if `out` is NULL.
///
/// # Safety
/// `out` is NULL or points to a writable `defergc_stats`.
#[no_mangle]
pub unsafe extern "C" fn defergc_get_stats(out: *mut CStats) -> c_int {
    entry("defergc_get_stats", || {
        if out.is_null() {
            return errors::EINVAL;
        }
        let s = gc::stats();
        let stats = CStats {
            heap_size: s.heap_size as u64,
            free_bytes: s.free_bytes as u64,
            unmapped_bytes: s.unmapped_bytes as u64,
            bytes_allocated_since_gc: s.bytes_allocated_since_gc as u64,
            bytes_allocated_total: s.bytes_allocated_total as u64,
            collections: s.collections,
            markers: s.markers as u64,
            gc_time_ns: s.gc_time.as_nanos() as u64,
            stopped_time_ns: s.stopped_time.as_nanos() as u64,
            max_pause_ns: s.max_pause.as_nanos() as u64,
            warnings: s.warnings,
        };
        // SAFETY: out is non-null and writable per the caller.
        unsafe { out.write(stats) };
        0
    })
}

/// Registers the calling thread with the collector (idempotent; every
/// function does it on first use anyway). Returns 0.
#[no_mangle]
pub extern "C" fn defergc_register_thread() -> c_int {
    entry("defergc_register_thread", || {
        gc::thread::ensure_registered();
        0
    })
}

/// Unregisters the calling thread now: its stack is no longer scanned. Any
/// later use registers it again. Returns 0.
#[no_mangle]
pub extern "C" fn defergc_unregister_thread() -> c_int {
    entry("defergc_unregister_thread", || {
        gc::thread::unregister_now();
        0
    })
}

/// What the trampoline of `defergc_thread_create` starts. It lives on the
/// creator's stack until the new thread has registered with the collector
/// and holds `arg` on its own stack: until then `arg` (often a collected
/// object only this call refers to) is reachable from the creator's stack
/// and nowhere else the collector scans.
struct Start {
    f: unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
    /// Set, under its lock, once the new thread no longer needs `Start`.
    registered: Mutex<bool>,
    told: Condvar,
}

/// Like `pthread_create`, for threads that run compiled code: the thread
/// is registered before `start` runs, is a goroutine boundary (Goexit ends
/// it with a NULL result; an unrecovered panic prints Go's report and exits
/// the process with status 2), and is unregistered when it ends. Returns
/// once the new thread is registered and holds `arg` (see `Start`), with
/// `pthread_create`'s result (0 or an error number).
///
/// # Safety
/// As for `pthread_create`: `thread` is writable, `attr` is NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn defergc_thread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: Option<unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void>,
    arg: *mut c_void,
) -> c_int {
    entry("defergc_thread_create", || {
        let (Some(f), false) = (start, thread.is_null()) else {
            return libc::EINVAL;
        };
        // This stack holds `arg` until the new thread does: it must be
        // scanned.
        gc::thread::ensure_registered();
        let start = Start {
            f,
            arg,
            registered: Mutex::new(false),
            told: Condvar::new(),
        };
        let at = std::ptr::addr_of!(start).cast_mut().cast();
        // SAFETY: `start` outlives the trampoline's use of it (below).
        let rc = unsafe { libc::pthread_create(thread, attr, trampoline, at) };
        if rc == 0 {
            // The new thread reads `start` until it sets `registered`. The
            // wait is a block outside the runtime: a goroutine's processor
            // goes to another thread meanwhile, and collections do not
            // wait for this thread.
            let wait = || {
                let mut done = start.registered.lock().unwrap_or_else(|e| e.into_inner());
                while !*done {
                    done = start.told.wait(done).unwrap_or_else(|e| e.into_inner());
                }
            };
            if crate::go::goid() != 0 {
                crate::go::syscall(wait);
            } else {
                crate::context::block_enter();
                wait();
                crate::context::block_exit();
            }
        }
        // `arg` stays on this stack (and in the collector's view) until here.
        std::hint::black_box(&start.arg);
        rc
    })
}

extern "C" fn trampoline(start: *mut c_void) -> *mut c_void {
    // SAFETY: defergc_thread_create's Start, valid until `registered`.
    let (f, arg) = unsafe {
        let s = &*start.cast::<Start>();
        (s.f, std::hint::black_box(s.arg))
    };
    entry("defergc_thread_create", gc::thread::ensure_registered);
    // `arg` is on this registered thread's stack from here (it is passed
    // to `f` below).
    {
        // SAFETY: as above; the creator returns (and `start` goes) once
        // the lock is released with `registered` set.
        let s = unsafe { &*start.cast::<Start>() };
        let mut done = s.registered.lock().unwrap_or_else(|e| e.into_inner());
        *done = true;
        s.told.notify_one();
    }
    // The thread runs compiled code from its start: its faults are Go
    // panics while catching is on, deferred or not.
    crate::defer::catch_on_this_thread();
    // SAFETY: the caller of defergc_thread_create vouched for the function.
    match crate::defer::outermost_body(|| unsafe { f(arg) }) {
        Ended::Returned(result) => result,
        Ended::Goexit => std::ptr::null_mut(),
        Ended::Panicked(report) => crate::defer::c::exit_go(&report),
    }
}
