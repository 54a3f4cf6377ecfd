//! C ABI: defer frames, panic, recover, Goexit and the low-level chain.
//!
//! The frame protocol compiled code emits (see `include/defergc.h`):
//!
//! ```c
//! defergc_frame fr;
//! defergc_frame_enter(&fr);
//! if (DEFERGC_FRAME_ARM(&fr)) {      /* a panic landed here */
//!     defergc_frame_unwind(&fr);     /* returns only if recovered */
//!     return result;                 /* named results live in memory */
//! }
//! ... defergc_defer(&fr, fn, &args, sizeof args); ...
//! defergc_frame_leave(&fr);
//! return result;
//! ```

use super::{entry, errors};
use crate::defer::c::{self, CFn, CFrame, CallToken};
use crate::defer::lowlevel::{self, RecordError};
use crate::defer::render::{CIface, GoString, RType};
use crate::defer::traceback;
use crate::defer::{CValue, PanicNilError, PanicValue};
use std::ffi::{c_char, c_int, c_void};

/// Entry points that know their caller: Go's report says where a frame
/// was entered and where `panic` was called, and a C function's caller is
/// its return address; a panic must not land in a frame whose function
/// has returned, which lies below the caller's stack pointer. At entry the
/// return address is at the top of the stack (x86-64) or in the link
/// register (AArch64): a naked function passes it and the caller's stack
/// pointer as two more arguments and jumps to the implementation, whose
/// return goes straight back to compiled code. Elsewhere the caller is
/// unknown (null) and the stack pointer approximate (the
/// implementation's).
macro_rules! with_caller {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? => $imp:ident,
     x86_64: $pc86:literal, $sp86:literal, aarch64: $pcarm:literal, $sparm:literal) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[no_mangle]
        #[unsafe(naked)]
        pub unsafe extern "C-unwind" fn $name($($arg: $ty),*) $(-> $ret)? {
            core::arch::naked_asm!(
                concat!("mov ", $pc86, ", [rsp]"),
                concat!("lea ", $sp86, ", [rsp + 8]"),
                "jmp {imp}",
                imp = sym $imp,
            )
        }

        $(#[$doc])*
        #[cfg(target_arch = "aarch64")]
        #[no_mangle]
        #[unsafe(naked)]
        pub unsafe extern "C-unwind" fn $name($($arg: $ty),*) $(-> $ret)? {
            core::arch::naked_asm!(
                concat!("mov ", $pcarm, ", x30"),
                concat!("mov ", $sparm, ", sp"),
                "b {imp}",
                imp = sym $imp,
            )
        }

        $(#[$doc])*
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        #[no_mangle]
        pub unsafe extern "C-unwind" fn $name($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: forwarded from the caller.
            unsafe { $imp($($arg,)* std::ptr::null_mut(), c::approx_sp()) }
        }
    };
}

with_caller! {
    /// Links `fr` (storage in the caller's stack frame) as the thread's
    /// innermost frame. Aborts with a `defergc:` message if `fr` is NULL.
    ///
    /// # Safety
    /// `fr` is NULL or a writable `defergc_frame` that stays put until left.
    fn defergc_frame_enter(fr: *mut CFrame) => frame_enter_at,
        x86_64: "rsi", "rdx", aarch64: "x1", "x2"
}

/// `defergc_frame_enter`, called from `pc`.
///
/// # Safety
/// As `defergc_frame_enter`.
unsafe extern "C-unwind" fn frame_enter_at(fr: *mut CFrame, pc: *mut c_void, _sp: usize) {
    // SAFETY: forwarded from the caller.
    entry("defergc_frame_enter", || unsafe {
        c::enter(fr, "defergc_frame_enter", pc as usize)
    })
}

/// Defers `fn(copy of the size bytes at args, token)` on `fr`. A NULL `fn`
/// panics when the call would run, as in Go. Aborts with a `defergc:`
/// message if `fr` is NULL, not entered, already left, not this thread's
/// innermost frame, or already running its deferred calls.
///
/// # Safety
/// `fr` is NULL or points to a `defergc_frame`; `args` points to `size`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn defergc_defer(
    fr: *mut CFrame,
    f: Option<CFn>,
    args: *const c_void,
    size: usize,
) {
    // SAFETY: forwarded from the caller.
    entry("defergc_defer", || unsafe {
        c::defer(fr, f, args.cast(), size)
    })
}

/// The normal return path: runs the frame's deferred calls newest first.
/// Returns iff the function should return normally. A panic raised by a
/// deferred call is handled here (the remaining calls still run); if none
/// recovers it, it goes on to the next frame out and this does not return.
/// Aborts with a `defergc:` message for a NULL, unentered, already left or
/// not-innermost frame, or one a panic landed in.
///
/// # Safety
/// `fr` is NULL or points to a `defergc_frame`.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_frame_leave(fr: *mut CFrame) {
    // SAFETY: forwarded from the caller.
    unsafe { c::leave(fr) }
}

/// The landing path, after `DEFERGC_FRAME_ARM` returned non-zero: runs the
/// deferred calls with the panic in flight. Returns iff one recovered it
/// (the function then returns normally); otherwise the panic goes on to the
/// next frame out. Aborts like `defergc_frame_leave`, and if no panic
/// landed in `fr`.
///
/// # Safety
/// `fr` is NULL or points to a `defergc_frame`.
#[no_mangle]
pub unsafe extern "C-unwind" fn defergc_frame_unwind(fr: *mut CFrame) {
    // SAFETY: forwarded from the caller.
    unsafe { c::unwind(fr) }
}

with_caller! {
    /// Go's `panic(value)`. `value` is kept in root memory while the panic
    /// is in flight; NULL panics with Go's "panic called with nil argument".
    ///
    /// # Safety
    /// Any value may be passed; it is only kept and handed to `recover`.
    fn defergc_panic(value: *mut c_void) -> ! => panic_at,
        x86_64: "rsi", "rdx", aarch64: "x1", "x2"
}

/// `defergc_panic`, called from `pc`.
extern "C-unwind" fn panic_at(value: *mut c_void, pc: *mut c_void, sp: usize) -> ! {
    super::go::refuse_in_unlock("defergc_panic");
    c::panic_at(pc as usize, sp, || {
        if value.is_null() {
            PanicValue::new(PanicNilError)
        } else {
            PanicValue::new(CValue(value))
        }
    })
}

/// Go's `runtime.Goexit()`: runs every deferred call of the thread, then
/// ends the goroutine (the thread, unless Rust code around catches it).
#[no_mangle]
pub extern "C-unwind" fn defergc_goexit() -> ! {
    super::go::refuse_in_unlock("defergc_goexit");
    c::goexit()
}

/// Turns faults in compiled code into Go panics (`on` != 0) or leaves
/// them to the handlers installed before (0). See the header.
#[no_mangle]
pub extern "C" fn defergc_catch_faults(on: c_int) {
    entry("defergc_catch_faults", || {
        crate::defer::catch_faults(on != 0)
    })
}

with_caller! {
    /// Go's `panic(v)` for an interface value of compiled code (see the
    /// header): `ty` a static descriptor, `data` the value's data word (kept
    /// alive in root memory while the panic is in flight).
    ///
    /// # Safety
    /// `ty` is NULL or a descriptor that describes `data` truthfully and
    /// lives for the program's life.
    fn defergc_panic_iface(ty: *const RType, data: *mut c_void) -> ! => panic_iface_at,
        x86_64: "rdx", "rcx", aarch64: "x2", "x3"
}

/// `defergc_panic_iface`, called from `pc`.
///
/// # Safety
/// As `defergc_panic_iface`.
unsafe extern "C-unwind" fn panic_iface_at(
    ty: *const RType,
    data: *mut c_void,
    pc: *mut c_void,
    sp: usize,
) -> ! {
    super::go::refuse_in_unlock("defergc_panic_iface");
    // SAFETY: the caller's descriptor (or null).
    c::panic_at(pc as usize, sp, || match unsafe { ty.as_ref() } {
        None => PanicValue::new(PanicNilError),
        Some(t) if t.size != std::mem::size_of::<RType>() => crate::abort(&format!(
            "defergc: defergc_panic_iface: a defergc_rtype of {} bytes, this library's has {}",
            t.size,
            std::mem::size_of::<RType>()
        )),
        Some(_) => PanicValue::new(CIface { ty, data }),
    })
}

/// `recover` returned nothing.
const NOTHING: c_int = 0;
/// A value given to `defergc_panic`, stored in `*value`.
const VALUE: c_int = 1;
/// `defergc_panic(NULL)`; `*value` is NULL.
const NIL: c_int = 2;
/// A run-time error or a Rust panic; `*value` is its message (GC memory).
const ERROR: c_int = 3;
/// A value of `defergc_panic_iface`; `*value` is its data word.
const IFACE: c_int = 4;

/// Go's `recover()`, for the deferred function that got `call`: returns
/// what was recovered (`DEFERGC_RECOVERED_*`, 0 for nothing) and stores it
/// in `*value` (if `value` is not NULL). A NULL, stale or foreign `call`
/// recovers nothing.
///
/// # Safety
/// `value` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_recover(call: *const CallToken, value: *mut *mut c_void) -> c_int {
    entry("defergc_recover", || {
        let Some(v) = c::recover(call) else {
            return NOTHING;
        };
        let (kind, out) = if let Some(c) = v.downcast_ref::<CValue>() {
            (VALUE, c.0)
        } else if let Some(i) = v.downcast_ref::<CIface>() {
            (IFACE, i.data)
        } else if v.is::<PanicNilError>() {
            (NIL, std::ptr::null_mut())
        } else {
            (ERROR, message(&v.to_string()))
        };
        if !value.is_null() {
            // SAFETY: value is writable per the caller.
            unsafe { value.write(out) };
        }
        kind
    })
}

/// `recover` for typed values: as `defergc_recover`, with the value as an
/// interface (see the header for what each kind of value becomes).
///
/// # Safety
/// `value` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_recover_iface(
    call: *const CallToken,
    value: *mut CIface,
) -> c_int {
    entry("defergc_recover_iface", || {
        let nil = CIface {
            ty: std::ptr::null(),
            data: std::ptr::null_mut(),
        };
        let (kind, out) = match c::recover(call) {
            None => (NOTHING, nil),
            Some(v) => {
                if let Some(i) = v.downcast_ref::<CIface>() {
                    (IFACE, *i)
                } else if let Some(c) = v.downcast_ref::<CValue>() {
                    let ty: *const RType = &defergc_rtype_unsafe_pointer.0;
                    (VALUE, CIface { ty, data: c.0 })
                } else if v.is::<PanicNilError>() {
                    (NIL, nil)
                } else {
                    let ty: *const RType = &defergc_rtype_runtime_error.0;
                    let data = go_string(&v.to_string());
                    c::recovered_as_iface(ty, data);
                    (ERROR, CIface { ty, data })
                }
            }
        };
        if !value.is_null() {
            // SAFETY: value is writable per the caller.
            unsafe { value.write(out) };
        }
        kind
    })
}

/// A descriptor the runtime exports (`Sync`: it is immutable data).
#[repr(transparent)]
pub struct StaticRType(RType);

// SAFETY: never written; its pointers are to static data and functions.
unsafe impl Sync for StaticRType {}

/// Go's `unsafe.Pointer` (a `defergc_panic` value).
#[no_mangle]
pub static defergc_rtype_unsafe_pointer: StaticRType = StaticRType(RType {
    size: std::mem::size_of::<RType>(),
    name: c"unsafe.Pointer".as_ptr(),
    kind: 0,
    error: None,
    string: None,
});

/// A run-time error or a Rust panic: its message, as an error.
#[no_mangle]
pub static defergc_rtype_runtime_error: StaticRType = StaticRType(RType {
    size: std::mem::size_of::<RType>(),
    name: c"runtime.Error".as_ptr(),
    kind: crate::defer::render::kind::STRING,
    error: Some(go_string_text),
    string: None,
});

/// `Error()` of a runtime error value: the message its data word holds.
///
/// # Safety
/// `data` points to a `GoString`; `buf` has `cap` writable bytes.
unsafe extern "C" fn go_string_text(data: *const c_void, buf: *mut c_char, cap: usize) -> usize {
    // SAFETY: the caller's promise.
    let s = unsafe { data.cast::<GoString>().read() };
    let n = s.len.min(cap);
    // SAFETY: s has len bytes; buf has cap.
    unsafe { std::ptr::copy_nonoverlapping(s.ptr, buf.cast::<u8>(), n) };
    s.len
}

/// A Go string of `text` in collectable memory (the header scanned, the
/// bytes not).
fn go_string(text: &str) -> *mut c_void {
    let bytes = message(text);
    let s = crate::gc::alloc(std::mem::size_of::<GoString>())
        .cast::<GoString>()
        .as_ptr();
    // SAFETY: a fresh object of a GoString's size.
    unsafe {
        s.write(GoString {
            ptr: bytes.cast(),
            len: text.len(),
        })
    };
    s.cast()
}

/// A NUL-terminated copy of `text` in collectable, pointer-free memory.
fn message(text: &str) -> *mut c_void {
    let p = crate::gc::alloc_atomic(text.len() + 1).as_ptr();
    // SAFETY: p has text.len() + 1 bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len());
        p.add(text.len()).write(0);
    }
    p.cast()
}

/// The thread's low-level defer head (a GC root).
#[no_mangle]
pub extern "C" fn defergc_defer_head_get() -> *mut c_void {
    entry("defergc_defer_head_get", lowlevel::head)
}

/// Sets the thread's low-level defer head.
#[no_mangle]
pub extern "C" fn defergc_defer_head_set(head: *mut c_void) {
    entry("defergc_defer_head_set", || lowlevel::set_head(head))
}

/// Clears the thread's low-level defer head.
#[no_mangle]
pub extern "C" fn defergc_defer_head_clear() {
    entry("defergc_defer_head_clear", lowlevel::clear_head)
}

/// A zeroed record of `size` bytes in root memory, for runtimes that keep
/// their own chain. Never NULL (aborts when out of memory).
#[no_mangle]
pub extern "C" fn defergc_record_alloc(size: usize) -> *mut c_void {
    entry("defergc_record_alloc", || {
        lowlevel::record_alloc(size).as_ptr().cast()
    })
}

/// Frees a record right after its call ran. Returns 0, `DEFERGC_EINVAL`
/// for NULL, `DEFERGC_EDOUBLEFREE` for a record already freed, or
/// `DEFERGC_ENOTRECORD` for a pointer that is not a record (see
/// `defer::lowlevel::record_free` for how far this detection goes).
///
/// # Safety
/// `record` is NULL or points 16 bytes into readable memory.
#[no_mangle]
pub unsafe extern "C" fn defergc_record_free(record: *mut c_void) -> c_int {
    entry("defergc_record_free", || {
        // SAFETY: forwarded from the caller.
        match unsafe { lowlevel::record_free(record.cast()) } {
            Ok(()) => 0,
            Err(RecordError::Null) => errors::EINVAL,
            Err(RecordError::DoubleFree) => errors::EDOUBLEFREE,
            Err(RecordError::NotARecord) => errors::ENOTRECORD,
        }
    })
}

// ---- runtime.Callers, runtime.Caller, runtime.Stack -----------------------

/// What `defergc_funcinfo_of` fills in (`defergc_funcinfo` in the header).
#[repr(C)]
pub struct FuncInfo {
    function: *const c_char,
    file: *const c_char,
    line: c_int,
    entry: usize,
}

/// `text` as a C string that lives for the program (each distinct text is
/// kept once: function and file names are few).
fn interned(text: &str) -> *const c_char {
    use std::collections::HashMap;
    use std::ffi::CString;
    use std::sync::Mutex;
    static TABLE: Mutex<Option<HashMap<String, &'static std::ffi::CStr>>> = Mutex::new(None);
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(s) = table.get(text) {
        return s.as_ptr();
    }
    let c: &'static std::ffi::CStr = Box::leak(
        CString::new(text.replace('\0', ""))
            .unwrap_or_default()
            .into_boxed_c_str(),
    );
    table.insert(text.to_string(), c);
    c.as_ptr()
}

/// Copies `pcs` into the caller's `out[0..n]`; returns how many.
///
/// # Safety
/// `out` has room for `n` words (or `n` is 0).
unsafe fn copy_pcs(pcs: &[usize], out: *mut usize, n: usize) -> c_int {
    let k = pcs.len().min(n);
    if k > 0 {
        // SAFETY: per the caller, out has n >= k words.
        unsafe { std::ptr::copy_nonoverlapping(pcs.as_ptr(), out, k) };
    }
    k as c_int
}

with_caller! {
    /// Go's `runtime.Callers(skip, pcs)`: up to `n` return addresses of
    /// the calling thread's frames, innermost first; `skip` 0 is
    /// `defergc_callers` itself, 1 its caller. Returns how many were
    /// written (0 for a negative `skip` or `n`, or a NULL `pcs`).
    ///
    /// # Safety
    /// `pcs` has room for `n` words.
    fn defergc_callers(skip: c_int, pcs: *mut usize, n: c_int) -> c_int => callers_at,
        x86_64: "rcx", "r8", aarch64: "x3", "x4"
}

/// `defergc_callers`, called from `pc`.
///
/// # Safety
/// As `defergc_callers`.
unsafe extern "C-unwind" fn callers_at(
    skip: c_int,
    pcs: *mut usize,
    n: c_int,
    pc: *mut c_void,
    _sp: usize,
) -> c_int {
    entry("defergc_callers", || {
        if skip < 0 || n <= 0 || pcs.is_null() {
            return 0;
        }
        let (skip, n) = (skip as usize, n as usize);
        let mut list = Vec::with_capacity(n);
        if skip == 0 {
            // Inside defergc_callers, as a return address would be (the
            // lookup reads the byte before it).
            list.push(defergc_callers as *const () as usize + 1);
        }
        let above = traceback::stack_from(0, Some(pc as usize), skip.saturating_sub(1), n);
        list.extend(above);
        // SAFETY: pcs has room for n words, per the caller.
        unsafe { copy_pcs(&list, pcs, n) }
    })
}

/// Go's `runtime.CallersFrames`/`runtime.FuncForPC` for one address that
/// `defergc_callers` returned: fills `*out` (names that live for the
/// program; NULL file and 0 line without debug information) and returns
/// 1, or 0 if no function covers it (or `out` is NULL).
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn defergc_funcinfo_of(pc: usize, out: *mut FuncInfo) -> c_int {
    entry("defergc_funcinfo_of", || {
        if out.is_null() {
            return 0;
        }
        let Some(f) = traceback::frame_info(pc) else {
            return 0;
        };
        let info = FuncInfo {
            function: interned(&f.function),
            file: f.file.as_deref().map_or(std::ptr::null(), interned),
            line: f.line.map_or(0, |l| l as c_int),
            entry: f.entry.unwrap_or(0),
        };
        // SAFETY: out is writable, per the caller.
        unsafe { out.write(info) };
        1
    })
}

with_caller! {
    /// Go's `runtime.Caller(skip)`: the return address, file and line of
    /// the caller's frame (`skip` 0) or of one further up; returns 1 (ok)
    /// or 0. Any out-pointer may be NULL.
    ///
    /// # Safety
    /// The out-pointers are NULL or writable.
    fn defergc_caller(skip: c_int, pc: *mut usize, file: *mut *const c_char, line: *mut c_int) -> c_int => caller_at,
        x86_64: "r8", "r9", aarch64: "x4", "x5"
}

/// `defergc_caller`, called from `at`.
///
/// # Safety
/// As `defergc_caller`.
unsafe extern "C-unwind" fn caller_at(
    skip: c_int,
    pc: *mut usize,
    file: *mut *const c_char,
    line: *mut c_int,
    at: *mut c_void,
    _sp: usize,
) -> c_int {
    entry("defergc_caller", || {
        if skip < 0 {
            return 0;
        }
        let found = if skip == 0 && !at.is_null() {
            Some(at as usize)
        } else {
            traceback::stack_from(0, Some(at as usize), skip as usize, 1)
                .first()
                .copied()
        };
        let Some(ret) = found else { return 0 };
        let info = traceback::frame_info(ret);
        // SAFETY: each out-pointer is NULL or writable, per the caller.
        unsafe {
            if !pc.is_null() {
                pc.write(ret);
            }
            if !file.is_null() {
                file.write(
                    info.as_ref()
                        .and_then(|i| i.file.as_deref())
                        .map_or(std::ptr::null(), interned),
                );
            }
            if !line.is_null() {
                line.write(info.as_ref().and_then(|i| i.line).map_or(0, |l| l as c_int));
            }
        }
        1
    })
}

/// Go's `runtime.Stack(buf, all)`: writes the calling goroutine's (or
/// thread's) stack as a report shows it, and with `all` != 0 every other
/// goroutine's section (`go::dump`), into `buf` (at most `len` bytes, not
/// NUL-terminated, cut where it does not fit); returns the bytes written.
///
/// # Safety
/// `buf` has room for `len` bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn defergc_stack(buf: *mut c_char, len: usize, all: c_int) -> usize {
    entry("defergc_stack", || {
        if buf.is_null() || len == 0 {
            return 0;
        }
        let text = traceback::stack(all != 0);
        let k = text.len().min(len);
        // SAFETY: buf has len >= k bytes, per the caller.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), k) };
        k
    })
}
