//! C ABI: the precise collector.
//!
//! Every function returns 0 or a negative code, `-(100 + precise::Error
//! code)`; those returning a handle or a pointer return 0/NULL and store
//! the code in `*err` (when `err` is not NULL). Handles are `uint64_t`, 0
//! is null.
//!
//! The functions exist in every build (the header is the same for all):
//! `c_surface!` writes each one from the single list below, as the real
//! function with the `precise` feature and, without it, as one that
//! reports `DEFERGC_PRECISE_ENOTBUILT` (`not_built`), or returns 0/NULL
//! with that code in `*err` for the functions that take one.

#[cfg(feature = "precise")]
use super::entry;
#[cfg(feature = "precise")]
use crate::precise::{self, Error, FrameId, Handle, TypeId};
use std::ffi::{c_int, c_void};

/// Writes the C functions of this file from one list: each item is a
/// doc comment, `fn` or `unsafe fn`, the C signature, optionally `, err`
/// (the name of its `*mut c_int` error out-parameter, which a build
/// without the collector fills in), and the body, compiled only with the
/// `precise` feature. Without it the function answers `NotBuilt`.
macro_rules! c_surface {
    () => {};
    (
        $(#[$m:meta])*
        unsafe fn $name:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty $(, $err:ident)? $body:block
        $($rest:tt)*
    ) => {
        c_surface!(@one [unsafe] $(#[$m])* $name($($a: $t),*) -> $r [$($err)?] $body);
        c_surface!($($rest)*);
    };
    (
        $(#[$m:meta])*
        fn $name:ident($($a:ident: $t:ty),* $(,)?) -> $r:ty $(, $err:ident)? $body:block
        $($rest:tt)*
    ) => {
        c_surface!(@one [] $(#[$m])* $name($($a: $t),*) -> $r [$($err)?] $body);
        c_surface!($($rest)*);
    };
    (
        @one [$($q:tt)*] $(#[$m:meta])*
        $name:ident($($a:ident: $t:ty),*) -> $r:ty [$($err:ident)?] $body:block
    ) => {
        $(#[$m])*
        #[cfg(feature = "precise")]
        #[no_mangle]
        pub $($q)* extern "C" fn $name($($a: $t),*) -> $r $body

        $(#[$m])*
        #[cfg(not(feature = "precise"))]
        #[no_mangle]
        pub $($q)* extern "C" fn $name($($a: $t),*) -> $r {
            let _ = ($($a,)*);
            $(
                // SAFETY: `err` is NULL or writable, as the function's
                // contract says.
                unsafe { not_built::report($err) };
            )?
            <$r as not_built::NotBuilt>::NOT_BUILT
        }
    };
}

/// What the functions answer in a build without the `precise` feature.
#[cfg(not(feature = "precise"))]
mod not_built {
    use std::ffi::{c_int, c_void};

    /// The code for "built without the `precise` feature"
    /// (`DEFERGC_PRECISE_ENOTBUILT`).
    const CODE: c_int = -100;

    /// The value a function returning `Self` answers when not built.
    pub(super) trait NotBuilt {
        const NOT_BUILT: Self;
    }

    impl NotBuilt for c_int {
        const NOT_BUILT: c_int = CODE;
    }

    impl NotBuilt for u64 {
        const NOT_BUILT: u64 = 0;
    }

    impl NotBuilt for i64 {
        const NOT_BUILT: i64 = CODE as i64;
    }

    impl NotBuilt for *mut c_void {
        const NOT_BUILT: *mut c_void = std::ptr::null_mut();
    }

    /// Stores the code in `*err` if `err` is not NULL.
    ///
    /// # Safety
    /// `err` is NULL or writable.
    pub(super) unsafe fn report(err: *mut c_int) {
        if !err.is_null() {
            // SAFETY: the caller guarantees err is writable.
            unsafe { err.write(CODE) };
        }
    }
}

/// The C code of a precise error.
#[cfg(feature = "precise")]
fn code(e: Error) -> c_int {
    -(100 + e.code())
}

#[cfg(feature = "precise")]
fn status(r: precise::Result<()>) -> c_int {
    r.map_or_else(code, |()| 0)
}

/// Stores the code of `r` (0 for success) in `*err` if `err` is not NULL,
/// and passes `r` on.
///
/// # Safety
/// `err` is NULL or writable.
#[cfg(feature = "precise")]
unsafe fn reported<T>(err: *mut c_int, r: precise::Result<T>) -> precise::Result<T> {
    if !err.is_null() {
        // SAFETY: the caller guarantees err is writable.
        unsafe { err.write(r.as_ref().map_or_else(|e| code(*e), |_| 0)) };
    }
    r
}

/// Writes `value` to `out`, or returns the EINVAL-like null-pointer code.
///
/// # Safety
/// `out` is NULL or writable.
#[cfg(feature = "precise")]
unsafe fn put<T>(out: *mut T, value: T) -> c_int {
    if out.is_null() {
        return super::errors::EINVAL;
    }
    // SAFETY: out is non-null and writable per the caller.
    unsafe { out.write(value) };
    0
}

/// Writes the value of `r` to `out` (see [`put`]), or returns its code.
///
/// # Safety
/// `out` is NULL or writable.
#[cfg(feature = "precise")]
unsafe fn put_ok<T>(out: *mut T, r: precise::Result<T>) -> c_int {
    match r {
        // SAFETY: forwarded from the caller.
        Ok(value) => unsafe { put(out, value) },
        Err(e) => code(e),
    }
}

#[cfg(feature = "precise")]
fn handle(raw: u64) -> precise::Result<Handle> {
    Handle::from_raw(raw)
}

/// A handle from compiled code that is to be rooted: 0 (null) or a live
/// handle. Rooting skips that check on its fast path; compiled code gets
/// the error for a stale or forged handle instead of a root that keeps
/// nothing (or something else) alive.
#[cfg(feature = "precise")]
fn live_handle(raw: u64) -> precise::Result<Option<Handle>> {
    let h = maybe_handle(raw)?;
    if let Some(h) = h {
        precise::deref(h)?;
    }
    Ok(h)
}

#[cfg(feature = "precise")]
fn maybe_handle(raw: u64) -> precise::Result<Option<Handle>> {
    if raw == 0 {
        Ok(None)
    } else {
        Handle::from_raw(raw).map(Some)
    }
}

/// Precise statistics, as `defergc_precise_stats` in the header (never
/// filled in a build without the collector).
#[repr(C)]
pub struct PreciseStats {
    live_objects: u64,
    live_bytes: u64,
    heap_size: u64,
    peak_heap_size: u64,
    handles_in_use: u64,
    objects_allocated: u64,
    objects_freed: u64,
    collections: u64,
    threads: u64,
    pause_total_ns: u64,
    pause_max_ns: u64,
    pause_last_ns: u64,
    pause_p99_ns: u64,
    pause_count: u64,
}

c_surface! {
    /// Starts the precise collector and registers the calling thread.
    fn defergc_precise_init() -> c_int {
        entry("defergc_precise_init", || status(precise::init()))
    }

    /// Registers a struct type of `size` bytes whose handle fields are at the
    /// `n` offsets in `offsets`; stores its id in `*out`.
    ///
    /// # Safety
    /// `offsets` points to `n` readable offsets (or `n` is 0); `out` is NULL
    /// or writable.
    unsafe fn defergc_precise_register_type(
        size: usize,
        offsets: *const usize,
        n: usize,
        out: *mut u32,
    ) -> c_int {
        entry("defergc_precise_register_type", || {
            if out.is_null() {
                // Refused before registering a type nobody could name.
                return super::errors::EINVAL;
            }
            if n > 0 && offsets.is_null() {
                return super::errors::EINVAL;
            }
            let offsets = if n == 0 {
                &[][..]
            } else {
                // SAFETY: offsets points to n readable offsets per the caller.
                unsafe { std::slice::from_raw_parts(offsets, n) }
            };
            let r = precise::register_type(size, offsets).map(TypeId::to_raw);
            // SAFETY: forwarded from the caller.
            unsafe { put_ok(out, r) }
        })
    }

    /// Registers the variable-length type "array of handles".
    ///
    /// # Safety
    /// `out` is NULL or writable.
    unsafe fn defergc_precise_register_handle_array_type(out: *mut u32) -> c_int {
        entry("defergc_precise_register_handle_array_type", || {
            if out.is_null() {
                // Refused before registering a type nobody could name.
                return super::errors::EINVAL;
            }
            let r = precise::register_handle_array_type().map(TypeId::to_raw);
            // SAFETY: forwarded from the caller.
            unsafe { put_ok(out, r) }
        })
    }

    /// Registers the variable-length type "pointer-free bytes".
    ///
    /// # Safety
    /// `out` is NULL or writable.
    unsafe fn defergc_precise_register_bytes_type(out: *mut u32) -> c_int {
        entry("defergc_precise_register_bytes_type", || {
            if out.is_null() {
                // Refused before registering a type nobody could name.
                return super::errors::EINVAL;
            }
            let r = precise::register_bytes_type().map(TypeId::to_raw);
            // SAFETY: forwarded from the caller.
            unsafe { put_ok(out, r) }
        })
    }

    /// Allocates an object of a struct type; 0 (and `*err`) on failure.
    ///
    /// # Safety
    /// `err` is NULL or writable.
    unsafe fn defergc_precise_alloc(ty: u32, err: *mut c_int) -> u64, err {
        entry("defergc_precise_alloc", || {
            let r = TypeId::from_raw(ty).and_then(precise::alloc);
            // SAFETY: forwarded from the caller.
            unsafe { reported(err, r) }.map_or(0, Handle::to_raw)
        })
    }

    /// Allocates an object of a struct type with its first `n` handle
    /// fields (in ascending offset order) set to `fields` (0 for null); 0
    /// (and `*err`) on failure.
    ///
    /// # Safety
    /// `fields` points to `n` readable handles (or `n` is 0); `err` is
    /// NULL or writable.
    unsafe fn defergc_precise_alloc_with(
        ty: u32,
        fields: *const u64,
        n: usize,
        err: *mut c_int,
    ) -> u64, err {
        entry("defergc_precise_alloc_with", || {
            if n > 0 && (fields.is_null() || n > isize::MAX as usize / 8) {
                if !err.is_null() {
                    // SAFETY: err is writable per the caller.
                    unsafe { err.write(super::errors::EINVAL) };
                }
                return 0;
            }
            let values: &[Option<Handle>] = if n == 0 {
                &[]
            } else {
                // SAFETY: `fields` has n readable handles per the caller;
                // Option<Handle> has u64's layout (Handle is a transparent
                // NonZeroU64) and every u64 is one: 0 is None.
                unsafe { std::slice::from_raw_parts(fields.cast::<Option<Handle>>(), n) }
            };
            let r = TypeId::from_raw(ty).and_then(|ty| precise::alloc_with(ty, values));
            // SAFETY: forwarded from the caller.
            unsafe { reported(err, r) }.map_or(0, Handle::to_raw)
        })
    }

    /// Allocates a variable-length object with `len` elements (handles or
    /// bytes); 0 (and `*err`) on failure.
    ///
    /// # Safety
    /// `err` is NULL or writable.
    unsafe fn defergc_precise_alloc_array(ty: u32, len: usize, err: *mut c_int) -> u64, err {
        entry("defergc_precise_alloc_array", || {
            let r = TypeId::from_raw(ty).and_then(|ty| precise::alloc_array(ty, len));
            // SAFETY: forwarded from the caller.
            unsafe { reported(err, r) }.map_or(0, Handle::to_raw)
        })
    }

    /// The address of an object's payload, valid while the handle is rooted;
    /// NULL (and `*err`) for a bad handle.
    ///
    /// # Safety
    /// `err` is NULL or writable.
    unsafe fn defergc_precise_deref(obj: u64, err: *mut c_int) -> *mut c_void, err {
        entry("defergc_precise_deref", || {
            let r = handle(obj).and_then(precise::deref);
            // SAFETY: forwarded from the caller.
            unsafe { reported(err, r) }.map_or(std::ptr::null_mut(), |p| p.as_ptr().cast())
        })
    }

    /// Loads the handle field at `offset` of `obj` into `*out` (0 for null).
    ///
    /// # Safety
    /// `out` is NULL or writable.
    unsafe fn defergc_precise_load(obj: u64, offset: usize, out: *mut u64) -> c_int {
        entry("defergc_precise_load", || {
            let r = handle(obj).and_then(|h| precise::load(h, offset));
            // SAFETY: forwarded from the caller.
            unsafe { put_ok(out, r.map(Handle::raw_or_null)) }
        })
    }

    /// Loads the handle fields at the `n` byte `offsets` of `obj` into
    /// `out[0..n]` (0 for null), finding the object once; on error nothing
    /// is written.
    ///
    /// # Safety
    /// `offsets` points to `n` readable offsets and `out` to `n` writable
    /// handles (or `n` is 0).
    unsafe fn defergc_precise_load_many(
        obj: u64,
        offsets: *const usize,
        n: usize,
        out: *mut u64,
    ) -> c_int {
        entry("defergc_precise_load_many", || {
            if n > 0 && (offsets.is_null() || out.is_null() || n > isize::MAX as usize / 8) {
                return super::errors::EINVAL;
            }
            let (offsets, out): (&[usize], &mut [Option<Handle>]) = if n == 0 {
                (&[], &mut [])
            } else {
                // SAFETY: per the caller, n readable offsets and n writable
                // handles; Option<Handle> has u64's layout (Handle is a
                // transparent NonZeroU64) and every u64 is one: 0 is None.
                unsafe {
                    (
                        std::slice::from_raw_parts(offsets, n),
                        std::slice::from_raw_parts_mut(out.cast::<Option<Handle>>(), n),
                    )
                }
            };
            status(handle(obj).and_then(|h| precise::load_many(h, offsets, out)))
        })
    }

    /// Stores `value` (0 for null) into the handle field at `offset` of `obj`.
    fn defergc_precise_store(obj: u64, offset: usize, value: u64) -> c_int {
        entry("defergc_precise_store", || {
            status(handle(obj).and_then(|h| precise::store(h, offset, maybe_handle(value)?)))
        })
    }

    /// Copies `len` pointer-free bytes at `offset` of `obj` into `buf`.
    ///
    /// # Safety
    /// `buf` points to `len` writable bytes.
    unsafe fn defergc_precise_read(obj: u64, offset: usize, buf: *mut c_void, len: usize) -> c_int {
        entry("defergc_precise_read", || {
            if (len > 0 && buf.is_null()) || len > isize::MAX as usize {
                return super::errors::EINVAL;
            }
            // SAFETY: buf has len writable bytes per the caller.
            let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
            status(handle(obj).and_then(|h| precise::read_bytes(h, offset, buf)))
        })
    }

    /// Copies `len` bytes from `data` into the pointer-free bytes at `offset`
    /// of `obj` (a handle field may not be overwritten this way).
    ///
    /// # Safety
    /// `data` points to `len` readable bytes.
    unsafe fn defergc_precise_write(
        obj: u64,
        offset: usize,
        data: *const c_void,
        len: usize,
    ) -> c_int {
        entry("defergc_precise_write", || {
            if (len > 0 && data.is_null()) || len > isize::MAX as usize {
                return super::errors::EINVAL;
            }
            // SAFETY: data has len readable bytes per the caller.
            let data = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
            status(handle(obj).and_then(|h| precise::write_bytes(h, offset, data)))
        })
    }

    /// Opens a frame on the thread's shadow stack; stores its id in `*frame`.
    ///
    /// # Safety
    /// `frame` is NULL or writable.
    unsafe fn defergc_precise_push_frame(frame: *mut u64) -> c_int {
        entry("defergc_precise_push_frame", || {
            if frame.is_null() {
                // Refused before the push: the frame could never be popped.
                return super::errors::EINVAL;
            }
            match precise::push_frame() {
                // SAFETY: forwarded from the caller.
                Ok(id) => unsafe { put(frame, id.depth() as u64) },
                Err(e) => code(e),
            }
        })
    }

    /// Roots `h` (0 for an empty slot) in the innermost frame; returns the
    /// slot's index (>= 0) for `defergc_precise_set_root`, or an error code.
    fn defergc_precise_root(h: u64) -> c_int {
        entry("defergc_precise_root", || {
            match live_handle(h).and_then(precise::root) {
                Ok(slot) => c_int::try_from(slot).unwrap_or(super::errors::ENOMEM),
                Err(e) => code(e),
            }
        })
    }

    /// Replaces the handle in root slot `slot` of the thread's shadow stack
    /// (one slot per variable, updated as the variable changes).
    fn defergc_precise_set_root(slot: usize, h: u64) -> c_int {
        entry("defergc_precise_set_root", || {
            status(live_handle(h).and_then(|h| precise::set_root(slot, h)))
        })
    }

    /// Closes the innermost frame, which must be `frame`.
    fn defergc_precise_pop_frame(frame: u64) -> c_int {
        entry("defergc_precise_pop_frame", || {
            status(precise::pop_frame(FrameId::from_depth(frame as usize)))
        })
    }

    /// A safepoint: where a collection may stop the thread.
    fn defergc_precise_safepoint() -> c_int {
        entry("defergc_precise_safepoint", || status(precise::safepoint()))
    }

    /// The thread enters native code: collections do not wait for it, and it
    /// must not touch the precise heap until `defergc_precise_leave_native`.
    fn defergc_precise_enter_native() -> c_int {
        entry("defergc_precise_enter_native", || {
            status(precise::enter_native())
        })
    }

    /// The thread leaves native code (waiting while a collection runs).
    fn defergc_precise_leave_native() -> c_int {
        entry("defergc_precise_leave_native", || {
            status(precise::leave_native())
        })
    }

    /// Runs a full collection and waits for it.
    fn defergc_precise_collect() -> c_int {
        entry("defergc_precise_collect", || status(precise::collect()))
    }

    /// Requests a collection cycle and returns at once.
    fn defergc_precise_gc_async() -> c_int {
        entry("defergc_precise_gc_async", || {
            precise::gc_async();
            0
        })
    }

    /// Waits until every requested cycle has completed.
    fn defergc_precise_gc_wait() -> c_int {
        entry("defergc_precise_gc_wait", || {
            precise::gc_wait();
            0
        })
    }

    /// Stops the collector thread after the cycles requested so far and joins
    /// it.
    fn defergc_precise_shutdown() -> c_int {
        entry("defergc_precise_shutdown", || {
            precise::shutdown();
            0
        })
    }

    /// Sets the pacer's growth percentage (Go's GOGC); negative turns
    /// automatic collections off. Returns the previous one (-1: off).
    fn defergc_precise_set_gc_percent(percent: c_int) -> c_int {
        entry("defergc_precise_set_gc_percent", || {
            let old = precise::set_gc_percent(u32::try_from(percent).ok());
            old.map_or(-1, |p| c_int::try_from(p).unwrap_or(c_int::MAX))
        })
    }

    /// Go's `debug.SetMemoryLimit` for the precise heap: a negative limit
    /// changes nothing, `INT64_MAX` lifts it. Returns the previous limit
    /// (`INT64_MAX`: none).
    fn defergc_precise_set_memory_limit(bytes: i64) -> i64 {
        entry("defergc_precise_set_memory_limit", || {
            let to_c = |l: Option<usize>| l.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
            if bytes < 0 {
                return to_c(precise::memory_limit());
            }
            let limit = (bytes != i64::MAX).then(|| usize::try_from(bytes).unwrap_or(usize::MAX));
            to_c(precise::set_memory_limit(limit))
        })
    }

    /// `weak.Make` for the precise heap: the weak handle of a live
    /// object; 0 (and `*err`) for a bad handle.
    ///
    /// # Safety
    /// `err` is NULL or writable.
    unsafe fn defergc_precise_weak_make(obj: u64, err: *mut c_int) -> u64, err {
        entry("defergc_precise_weak_make", || {
            let r = handle(obj).and_then(precise::Weak::make);
            // SAFETY: forwarded from the caller.
            unsafe { reported(err, r) }.map_or(0, precise::Weak::to_raw)
        })
    }

    /// `Pointer.Value` for the precise heap: the object's handle into
    /// `*out` while it lives, 0 once a collection found it unreachable
    /// (waiting while a cycle's marking runs).
    ///
    /// # Safety
    /// `out` is NULL or writable.
    unsafe fn defergc_precise_weak_value(weak: u64, out: *mut u64) -> c_int {
        entry("defergc_precise_weak_value", || {
            let r = precise::Weak::from_raw(weak).value().map(Handle::raw_or_null);
            // SAFETY: forwarded from the caller.
            unsafe { put_ok(out, r) }
        })
    }

    /// Forgets the pauses recorded so far.
    fn defergc_precise_reset_pause_stats() -> c_int {
        entry("defergc_precise_reset_pause_stats", || {
            precise::reset_pause_stats();
            0
        })
    }

    /// Registers the 8-byte slot at `slot` as a global root.
    ///
    /// # Safety
    /// As `precise::add_global_root`: `slot` stays readable until it is
    /// removed and is written only with aligned 8-byte stores (preferably
    /// through `defergc_precise_store_global`).
    unsafe fn defergc_precise_add_global_root(slot: *const u64) -> c_int {
        entry("defergc_precise_add_global_root", || {
            // SAFETY: forwarded from the caller.
            status(unsafe { precise::add_global_root(slot) })
        })
    }

    /// Unregisters a global root.
    fn defergc_precise_remove_global_root(slot: *const u64) -> c_int {
        entry("defergc_precise_remove_global_root", || {
            status(precise::remove_global_root(slot))
        })
    }

    /// Stores `value` (0 for null) into the global root slot at `slot`
    /// through the collector's write barrier.
    ///
    /// # Safety
    /// As `precise::store_global`: `slot` is valid for reads and writes.
    unsafe fn defergc_precise_store_global(slot: *mut u64, value: u64) -> c_int {
        entry("defergc_precise_store_global", || {
            // SAFETY: forwarded from the caller.
            status(maybe_handle(value).and_then(|v| unsafe { precise::store_global(slot, v) }))
        })
    }

    /// Registers the calling thread (automatic on first use anyway).
    fn defergc_precise_register_thread() -> c_int {
        entry("defergc_precise_register_thread", || {
            status(precise::register_thread())
        })
    }

    /// Unregisters the calling thread (automatic at thread exit anyway).
    fn defergc_precise_unregister_thread() -> c_int {
        entry("defergc_precise_unregister_thread", || {
            status(precise::unregister_thread())
        })
    }

    /// Sets the heap limit in bytes (0 for none).
    fn defergc_precise_set_heap_limit(bytes: usize) -> c_int {
        entry("defergc_precise_set_heap_limit", || {
            precise::set_heap_limit((bytes > 0).then_some(bytes));
            0
        })
    }

    /// Fills `*out` with the precise collector's statistics.
    ///
    /// # Safety
    /// `out` is NULL or writable.
    unsafe fn defergc_precise_get_stats(out: *mut PreciseStats) -> c_int {
        entry("defergc_precise_get_stats", || {
            let s = precise::stats();
            let stats = PreciseStats {
                live_objects: s.live_objects,
                live_bytes: s.live_bytes,
                heap_size: s.heap_size as u64,
                peak_heap_size: s.peak_heap_size as u64,
                handles_in_use: s.handles_in_use,
                objects_allocated: s.objects_allocated,
                objects_freed: s.objects_freed,
                collections: s.collections,
                threads: s.threads as u64,
                pause_total_ns: s.pause_total.as_nanos() as u64,
                pause_max_ns: s.pause_max.as_nanos() as u64,
                pause_last_ns: s.pause_last.as_nanos() as u64,
                pause_p99_ns: s.pause_p99.as_nanos() as u64,
                pause_count: s.pause_count,
            };
            // SAFETY: forwarded from the caller.
            unsafe { put(out, stats) }
        })
    }
}
