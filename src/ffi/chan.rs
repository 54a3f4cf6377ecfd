//! C ABI: channels, select, sleep and timers (Go's `chan`, `select`,
//! `time.Sleep`, `time.NewTimer`, `time.After`).
//!
//! A channel of compiled code is one object of the collected heap (header
//! and, for elements that hold pointers, the buffer; a pointer-free buffer
//! is a second, unscanned object), collected when unreachable, as Go's are.
//! Entry points that may panic (a send on a closed channel...) or park run
//! their body through `guard`, so a Go panic they raise is delivered to
//! compiled code by the C protocol's rule.

use super::guard;
use crate::go::{self, ChanError, Chosen, Dir, RawChan, RawTimer, Received, SelectCase};
use std::ffi::{c_int, c_void};

/// A channel, as compiled code sees it (`defergc_chan`): opaque.
pub enum CChan {}

/// A timer, as compiled code sees it (`defergc_timer`): opaque.
pub enum CTimer {}

/// The channel behind a C handle (`None` for NULL, Go's nil channel).
/// Aborts, naming `what`, for a pointer that is not a channel: misaligned,
/// or without a channel's magic word (forged, or memory reused).
///
/// # Safety
/// `c` is NULL or points to at least a word of readable memory.
unsafe fn chan<'a>(c: *mut CChan, what: &str) -> Option<&'a RawChan> {
    let c = c.cast::<RawChan>();
    if c.is_null() {
        return None;
    }
    // SAFETY: aligned (checked first) and readable, as the caller promised.
    if !(c as usize).is_multiple_of(8) || !unsafe { RawChan::is_chan(c) } {
        crate::abort(&format!("defergc: {what}: {c:p} is not a channel"));
    }
    // SAFETY: a channel header of this library.
    Some(unsafe { &*c })
}

/// The timer behind a C handle; aborts for NULL and for a pointer that is
/// not a timer (as [`chan`]).
///
/// # Safety
/// `t` is NULL or points to at least a word of readable memory.
unsafe fn timer<'a>(t: *mut CTimer, what: &str) -> &'a RawTimer {
    let t = t.cast::<RawTimer>();
    if t.is_null() {
        crate::abort(&format!("defergc: {what}: NULL timer"));
    }
    // SAFETY: aligned (checked first) and readable, as the caller promised.
    if !(t as usize).is_multiple_of(8) || !unsafe { RawTimer::is_timer(t) } {
        crate::abort(&format!("defergc: {what}: {t:p} is not a timer"));
    }
    // SAFETY: a timer of this library.
    unsafe { &*t }
}

/// `make(chan T, cap)`: `elem_size` is `sizeof(T)` (at most 65,535, Go's
/// limit), `pointers` whether `T` holds pointers the collector must follow.
/// Panics with Go's messages (`go::RawChan::make`): `makechan: invalid
/// channel element type` for a larger element, `makechan: size out of
/// range` for a capacity above `PTRDIFF_MAX` or a buffer that cannot be
/// allocated.
#[no_mangle]
pub extern "C-unwind" fn defergc_chan_make(
    elem_size: usize,
    pointers: c_int,
    cap: usize,
) -> *mut CChan {
    guard(|| {
        let header = std::mem::size_of::<RawChan>();
        // With pointers: one scanned object, the header, then the buffer.
        let mut whole = None;
        // Compiled code's elements are copied byte by byte: any alignment.
        let raw = RawChan::make(elem_size, 1, pointers != 0, cap, |bytes| {
            if pointers != 0 {
                let obj = crate::gc::try_alloc(crate::gc::Kind::Scanned, header + bytes)?;
                // SAFETY: the object has room for the header and buffer.
                let buf = unsafe { obj.as_ptr().add(header) };
                whole = Some((obj, buf, bytes));
                return Some(buf);
            }
            if bytes == 0 {
                return Some(std::ptr::NonNull::<u64>::dangling().as_ptr().cast());
            }
            let b = crate::gc::try_alloc(crate::gc::Kind::Atomic, bytes)?;
            // SAFETY: atomic memory is not zeroed; the buffer must be.
            unsafe { std::ptr::write_bytes(b.as_ptr(), 0, bytes) };
            Some(b.as_ptr())
        })
        .unwrap_or_else(|e| e.raise());
        let c = match whole {
            Some((obj, _, _)) => obj.as_ptr(),
            None => crate::gc::alloc(header).as_ptr(),
        }
        .cast::<RawChan>();
        // SAFETY: a fresh object with room for the header, first in it.
        unsafe { c.write(raw) };
        if let Some((obj, buf, bytes)) = whole.filter(|&(_, _, bytes)| bytes > 0) {
            // The buffer's references, for the collectors that do not
            // scan this heap (the precise one).
            crate::roots::share_heap_range(obj, buf, bytes);
        }
        c.cast::<CChan>()
    })
}

/// `c <- *elem`: copies the channel's element size from `elem`, waiting
/// while it cannot complete (a NULL channel waits forever). Panics (Go's
/// `send on closed channel`) on a closed channel.
///
/// # Safety
/// `c` is NULL or a channel of this library; `elem` points to its element
/// size of readable bytes.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_chan_send(c: *mut CChan, elem: *const c_void) {
    guard(|| {
        // SAFETY: the caller's channel.
        let Some(c) = (unsafe { chan(c, "defergc_chan_send") }) else {
            go::block_forever("chan send (nil chan)")
        };
        // SAFETY: elem as the caller promised.
        if let Err(e) = unsafe { c.send(elem.cast(), true) } {
            e.raise()
        }
    })
}

/// `v, ok := <-c` into `elem` (NULL: discard the value), waiting while the
/// channel is empty (a NULL channel waits forever). Returns `ok`: 1 for a
/// value, 0 when the channel is closed and drained (`*elem` is zeroed).
///
/// # Safety
/// `c` is NULL or a channel of this library; `elem` is NULL or has its
/// element size of writable bytes.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_chan_recv(c: *mut CChan, elem: *mut c_void) -> c_int {
    guard(|| {
        // SAFETY: the caller's channel.
        let Some(c) = (unsafe { chan(c, "defergc_chan_recv") }) else {
            go::block_forever("chan receive (nil chan)")
        };
        // SAFETY: elem as the caller promised.
        c_int::from(unsafe { c.recv(elem.cast(), true) } == Received::Value)
    })
}

/// `select { case c <- *elem: return 1; default: return 0 }`. Panics on a
/// closed channel, as a send does.
///
/// # Safety
/// As for `defergc_chan_send`.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_chan_try_send(c: *mut CChan, elem: *const c_void) -> c_int {
    guard(|| {
        // SAFETY: the caller's channel.
        let Some(c) = (unsafe { chan(c, "defergc_chan_try_send") }) else {
            return 0;
        };
        // SAFETY: elem as the caller promised.
        match unsafe { c.send(elem.cast(), false) } {
            Ok(sent) => c_int::from(sent),
            Err(e) => e.raise(),
        }
    })
}

/// `select { case v, ok := <-c: *ok = ok; return 1; default: return 0 }`.
///
/// # Safety
/// As for `defergc_chan_recv`; `ok` is NULL or writable.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_chan_try_recv(
    c: *mut CChan,
    elem: *mut c_void,
    ok: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's channel.
        let Some(c) = (unsafe { chan(c, "defergc_chan_try_recv") }) else {
            return 0;
        };
        // SAFETY: elem as the caller promised.
        let got = unsafe { c.recv(elem.cast(), false) };
        if got == Received::WouldBlock {
            return 0;
        }
        if !ok.is_null() {
            // SAFETY: writable, the caller promised.
            unsafe { ok.write(c_int::from(got == Received::Value)) };
        }
        1
    })
}

/// `close(c)`. Panics as Go does on a closed channel (`close of closed
/// channel`) or a NULL one (`close of nil channel`).
///
/// # Safety
/// `c` is NULL or a channel of this library.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_chan_close(c: *mut CChan) {
    guard(|| {
        // SAFETY: the caller's channel.
        let result = match unsafe { chan(c, "defergc_chan_close") } {
            Some(c) => c.close(),
            None => Err(ChanError::CloseOfNil),
        };
        if let Err(e) = result {
            e.raise()
        }
    })
}

/// `len(c)` (0 for NULL).
///
/// # Safety
/// `c` is NULL or a channel of this library.
#[no_mangle]
pub unsafe extern "C" fn defergc_chan_len(c: *mut CChan) -> usize {
    super::entry("defergc_chan_len", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { chan(c, "defergc_chan_len") }.map_or(0, RawChan::len)
    })
}

/// `cap(c)` (0 for NULL).
///
/// # Safety
/// `c` is NULL or a channel of this library.
#[no_mangle]
pub unsafe extern "C" fn defergc_chan_cap(c: *mut CChan) -> usize {
    super::entry("defergc_chan_cap", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { chan(c, "defergc_chan_cap") }.map_or(0, RawChan::cap)
    })
}

/// A case of `defergc_select`, as `defergc_select_case` in the header.
#[repr(C)]
pub struct CSelectCase {
    chan: *mut CChan,
    dir: c_int,
    elem: *mut c_void,
}

const SELECT_SEND: c_int = Dir::Send as c_int;
const SELECT_RECV: c_int = Dir::Recv as c_int;

// A C case is read as a select case where it lies (`defergc_select`).
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<CSelectCase>() == size_of::<SelectCase>());
    assert!(align_of::<CSelectCase>() == align_of::<SelectCase>());
    assert!(offset_of!(CSelectCase, chan) == offset_of!(SelectCase, chan));
    assert!(offset_of!(CSelectCase, dir) == offset_of!(SelectCase, dir));
    assert!(offset_of!(CSelectCase, elem) == offset_of!(SelectCase, elem));
    assert!(size_of::<Dir>() == size_of::<c_int>());
    assert!(SELECT_SEND == 1 && SELECT_RECV == 2);
};

/// Go's `select` over `n` cases: completes one ready case, chosen
/// uniformly at random among the ready ones, and returns its index (and,
/// for a receive, `*recv_ok`: 1 for a value, 0 for a closed channel). With
/// `block` 0 and no case ready, returns -1 (`default`). A blocking select
/// with no case (or only NULL channels) waits forever. Panics for a send
/// on a closed channel; aborts ("defergc:") for a NULL `cases` with a
/// non-zero `n` or a case whose direction is neither send nor receive.
///
/// # Safety
/// `cases` has `n` entries, each with NULL or a channel of this library
/// and an element as `defergc_chan_send` / `_recv` need; `recv_ok` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_select(
    cases: *mut CSelectCase,
    n: usize,
    block: c_int,
    recv_ok: *mut c_int,
) -> isize {
    guard(|| {
        if n > 0 && cases.is_null() {
            crate::abort("defergc: defergc_select: NULL cases with a non-zero count");
        }
        let given: &[CSelectCase] = if n == 0 {
            &[]
        } else {
            // SAFETY: n entries, the caller promised.
            unsafe { std::slice::from_raw_parts(cases, n) }
        };
        for c in given {
            // SAFETY: each case's channel is NULL or readable.
            unsafe { chan(c.chan, "defergc_select") };
            if c.dir != SELECT_SEND && c.dir != SELECT_RECV {
                crate::abort(&format!(
                    "defergc: defergc_select: case direction {} is neither DEFERGC_SELECT_SEND nor DEFERGC_SELECT_RECV",
                    c.dir
                ));
            }
        }
        // SAFETY: a C case has a select case's layout (asserted beside
        // SELECT_SEND);
        // every channel is NULL or a channel header and every direction
        // one of Dir's values (both checked above). Read in place: a copy
        // built field by field and read back whole stalled on every case.
        let cases: &[SelectCase] =
            unsafe { std::slice::from_raw_parts(given.as_ptr().cast::<SelectCase>(), n) };
        // SAFETY: the cases as the caller promised.
        match unsafe { go::select_raw(cases, block != 0) } {
            Ok(Chosen::Case { index, ok }) => {
                if !recv_ok.is_null() {
                    // SAFETY: writable, the caller promised.
                    unsafe { recv_ok.write(c_int::from(ok)) };
                }
                index as isize
            }
            Ok(Chosen::Default) => -1,
            Err(e) => e.raise(),
        }
    })
}

/// Go's `time.Sleep(ns)`: a goroutine parks (its worker runs others);
/// a plain thread sleeps. Non-positive: returns at once.
#[no_mangle]
pub extern "C" fn defergc_sleep_ns(ns: i64) {
    super::entry("defergc_sleep_ns", || go::sleep_ns(ns))
}

/// Go's `time.NewTimer(ns)`: a timer (an object of the collected heap)
/// whose channel (`defergc_timer_chan`, 8-byte elements) receives the time
/// in nanoseconds since 1970 once `ns` has passed.
#[no_mangle]
pub extern "C-unwind" fn defergc_timer_new(ns: i64) -> *mut CTimer {
    guard(|| {
        let chan = defergc_chan_make(8, 0, 1).cast::<RawChan>();
        let t = crate::gc::alloc(std::mem::size_of::<RawTimer>())
            .as_ptr()
            .cast::<RawTimer>();
        // SAFETY: a fresh object of the timer's size; the channel lives in
        // the collected heap, referenced from the timer.
        unsafe {
            t.write(RawTimer::new(chan, None));
            go::timer_reset(t, ns);
        }
        t.cast::<CTimer>()
    })
}

/// The timer's channel.
///
/// # Safety
/// `t` is a timer of `defergc_timer_new`.
#[no_mangle]
pub unsafe extern "C" fn defergc_timer_chan(t: *mut CTimer) -> *mut CChan {
    super::entry("defergc_timer_chan", || {
        // SAFETY: the caller guarantees the pointer (see # Safety).
        unsafe { timer(t, "defergc_timer_chan") }
            .chan
            .cast_mut()
            .cast::<CChan>()
    })
}

/// Go's `Timer.Stop`: 1 if the timer was pending (it will not fire), 0 if
/// it had fired or was stopped.
///
/// # Safety
/// `t` is a timer of `defergc_timer_new`.
#[no_mangle]
pub unsafe extern "C" fn defergc_timer_stop(t: *mut CTimer) -> c_int {
    super::entry("defergc_timer_stop", || {
        // SAFETY: the caller's timer (checked).
        let t = unsafe { timer(t, "defergc_timer_stop") };
        // SAFETY: a timer of this library.
        c_int::from(unsafe { go::timer_stop(t) })
    })
}

/// Go's `Timer.Reset(ns)`: fires `ns` from now; 1 if it was pending.
///
/// # Safety
/// `t` is a timer of `defergc_timer_new`.
#[no_mangle]
pub unsafe extern "C" fn defergc_timer_reset(t: *mut CTimer, ns: i64) -> c_int {
    super::entry("defergc_timer_reset", || {
        // SAFETY: the caller's timer (checked).
        let t = unsafe { timer(t, "defergc_timer_reset") };
        // SAFETY: a timer of this library.
        c_int::from(unsafe { go::timer_reset(t, ns) })
    })
}

/// Go's `time.After(ns)`: the channel of a new timer.
#[no_mangle]
pub extern "C-unwind" fn defergc_after(ns: i64) -> *mut CChan {
    let t = defergc_timer_new(ns);
    // SAFETY: a fresh timer.
    unsafe { defergc_timer_chan(t) }
}
