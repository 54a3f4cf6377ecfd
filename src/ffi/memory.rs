//! C ABI: Go's memory controls and `runtime.MemStats` (see
//! `crate::gc::memory` for how they map onto the collector).

use super::{entry, errors};
use crate::gc::{self, MemStats};
use std::ffi::c_int;

/// Go's `runtime.ReadMemStats`: fills `*out` when `out->size` is
/// `sizeof(defergc_memstats)`; `DEFERGC_EINVAL` for NULL or another size.
///
/// # Safety
/// `out` is NULL or points to a writable `defergc_memstats`.
#[no_mangle]
pub unsafe extern "C" fn defergc_read_memstats(out: *mut MemStats) -> c_int {
    entry("defergc_read_memstats", || {
        // SAFETY: out is NULL or readable, per the caller.
        let size = unsafe { out.as_ref() }.map(|m| m.size);
        if size != Some(std::mem::size_of::<MemStats>() as u64) {
            return errors::EINVAL;
        }
        // SAFETY: out is writable, per the caller.
        unsafe { out.write(gc::read_memstats()) };
        0
    })
}

/// Go's `debug.SetGCPercent`: returns the previous percent.
#[no_mangle]
pub extern "C" fn defergc_set_gc_percent(percent: c_int) -> c_int {
    entry("defergc_set_gc_percent", || gc::set_gc_percent(percent))
}

/// Go's `debug.SetMemoryLimit`: a soft limit; a negative value changes
/// nothing and returns the limit in force; `INT64_MAX` is no limit.
#[no_mangle]
pub extern "C" fn defergc_set_memory_limit(bytes: i64) -> i64 {
    entry("defergc_set_memory_limit", || {
        let to_c = |b: u64| i64::try_from(b).unwrap_or(i64::MAX);
        if bytes < 0 {
            return to_c(gc::memory_limit());
        }
        let limit = if bytes == i64::MAX {
            u64::MAX
        } else {
            bytes as u64
        };
        to_c(gc::set_memory_limit(limit))
    })
}

/// A hard heap limit (0: none); returns the previous one.
#[no_mangle]
pub extern "C" fn defergc_set_max_heap(bytes: u64) -> u64 {
    entry("defergc_set_max_heap", || gc::set_max_heap(bytes))
}

/// Go's `debug.FreeOSMemory`.
#[no_mangle]
pub extern "C" fn defergc_free_os_memory() {
    entry("defergc_free_os_memory", gc::free_os_memory)
}
