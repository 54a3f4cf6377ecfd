//! C ABI: goroutines (`defergc_main`, `defergc_go`, scheduling, park and
//! ready, system calls, goroutine-local words).

use super::{entry, errors};
use crate::go::{self, Goroutine};
use std::ffi::{c_char, c_int, c_void, CStr};

/// A goroutine entry point: called with a pointer to the copy of its
/// argument bytes.
type GoFn = unsafe extern "C-unwind" fn(args: *mut c_void);

/// A goroutine handle for `defergc_ready`, as `defergc_goroutine` in the
/// header: the goroutine's address and id.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CGoroutine {
    g: *mut c_void,
    id: u64,
}

/// Runs `main(arg)` as the program's main goroutine (goroutine 1 when it is
/// the program's first call into the runtime) and returns its exit status,
/// 0, when it returns. As in Go: an unrecovered panic in any goroutine
/// prints Go's report and ends the process with status 2; if main calls
/// Goexit, the other goroutines run on and the process ends with Go's
/// deadlock message when none is left. Faults in compiled code become Go
/// panics (see `defergc_catch_faults`) unless the program turned that off
/// before. Aborts with a `defergc:` message
/// for a NULL `main` or while another main goroutine runs.
///
/// # Safety
/// `main` may be called with `arg` on a worker thread.
#[no_mangle]
pub unsafe extern "C" fn defergc_main(
    main: Option<unsafe extern "C-unwind" fn(*mut c_void)>,
    arg: *mut c_void,
) -> c_int {
    entry("defergc_main", || {
        let Some(main) = main else {
            crate::abort("defergc: defergc_main: NULL main function")
        };
        // A Go program's faults are panics, unless this one said otherwise
        // (defergc_catch_faults(0)) before.
        crate::defer::catch_faults_by_default();
        // The main goroutine's argument block: the function and its arg.
        let block: [usize; 2] = [main as usize, arg as usize];
        // SAFETY: the block is copied before go_c returns; main_trampoline
        // reads it back with the same layout.
        let report = go::run_main(|| unsafe {
            go::go_c(
                main_trampoline,
                block.as_ptr().cast(),
                std::mem::size_of_val(&block),
                true,
                0,
            )
        });
        // A C main goroutine reports its own panics, Go's way.
        debug_assert!(report.is_none());
        0
    })
}

/// The body of `defergc_main`'s goroutine: calls main(arg) from its block.
///
/// # Safety
/// `args` is the block `defergc_main` wrote.
unsafe extern "C-unwind" fn main_trampoline(args: *mut u8) {
    // SAFETY: the block holds [main, arg], written by defergc_main.
    let (f, arg) = unsafe {
        let words = args.cast::<usize>();
        (words.read(), words.add(1).read())
    };
    // SAFETY: the word is the main function defergc_main was given.
    let main: unsafe extern "C-unwind" fn(*mut c_void) = unsafe { std::mem::transmute(f) };
    // SAFETY: the caller of defergc_main vouched for main and arg.
    unsafe { main(arg as *mut c_void) }
}

/// Go's `go fn(args)`: starts a goroutine that runs `fn` with a copy of the
/// `size` bytes at `args` (Go evaluates a go statement's arguments before
/// the goroutine starts); the copy is scanned by the collectors while the
/// goroutine lives. Returns 0; `DEFERGC_EINVAL` for a NULL `fn`, or NULL
/// `args` with a non-zero size; `DEFERGC_EARGSIZE` for more than
/// `DEFERGC_GO_MAX_ARGS` bytes (nothing is read then).
///
/// # Safety
/// `args` points to `size` readable bytes; `fn` may be called on any
/// worker thread.
#[no_mangle]
pub unsafe extern "C" fn defergc_go(f: Option<GoFn>, args: *const c_void, size: usize) -> c_int {
    // The return into the go statement (a dump's `created by`).
    let created = crate::unwind::return_address();
    entry("defergc_go", || {
        let Some(f) = f else {
            return errors::EINVAL;
        };
        if size > go::MAX_C_ARGS {
            return errors::EARGSIZE;
        }
        if size > 0 && args.is_null() {
            return errors::EINVAL;
        }
        // SAFETY: the caller guarantees args has size readable bytes; the
        // function types differ only in the pointer's pointee.
        unsafe {
            let f: go::CGoFn = std::mem::transmute::<GoFn, go::CGoFn>(f);
            go::go_c(f, args.cast(), size, false, created);
        }
        0
    })
}

/// Go's `runtime.Gosched()`: lets other goroutines run (outside a
/// goroutine: yields the thread).
#[no_mangle]
pub extern "C" fn defergc_gosched() {
    entry("defergc_gosched", go::gosched)
}

/// The out-of-line half of `DEFERGC_PREEMPT_POINT()`: yields (to the back
/// of the global queue) if sysmon asked the running goroutine to, after it
/// ran one time slice for 10 ms. Does nothing otherwise, outside a
/// goroutine, or inside `defergc_enter_syscall`/`defergc_exit_syscall`.
#[no_mangle]
pub extern "C" fn defergc_preempt_check() {
    entry("defergc_preempt_check", go::preempt_check)
}

/// The running goroutine's id (Go's goid), or 0 outside a goroutine.
#[no_mangle]
pub extern "C" fn defergc_goid() -> u64 {
    entry("defergc_goid", go::goid)
}

/// A handle of the running goroutine, for `defergc_ready`; `{NULL, 0}`
/// outside a goroutine.
#[no_mangle]
pub extern "C" fn defergc_self() -> CGoroutine {
    entry("defergc_self", || match Goroutine::current() {
        Some(g) => CGoroutine {
            g: g.as_raw().cast_mut().cast(),
            id: g.id(),
        },
        None => CGoroutine {
            g: std::ptr::null_mut(),
            id: 0,
        },
    })
}

/// Parks the running goroutine until `defergc_ready`. A ready that came
/// first makes it return at once (as a futex wait does): wait in a loop on
/// your own condition. `reason` (may be NULL) is what a deadlock report
/// says the goroutine waits for ("chan receive"). Returns 0, or
/// `DEFERGC_ENOTGOROUTINE` outside a goroutine.
///
/// # Safety
/// `reason` is NULL or a NUL-terminated string that lives as long as the
/// program (a string literal).
#[no_mangle]
pub unsafe extern "C" fn defergc_park(reason: *const c_char) -> c_int {
    // SAFETY: forwarded from the caller.
    let reason = unsafe { reason_of(reason) };
    entry("defergc_park", || {
        refuse_in_unlock("defergc_park");
        if go::goid() == 0 {
            return errors::ENOTGOROUTINE;
        }
        go::park(reason);
        0
    })
}

/// Parks like `defergc_park`, and calls `unlock(arg)` on the worker thread
/// once the goroutine has switched out (Go's gopark with an unlock
/// function): a waiter that joined a wait queue under a lock releases it
/// there, so that its waker, who takes the lock, always finds it parked.
/// Returns 0, or `DEFERGC_ENOTGOROUTINE` outside a goroutine (after calling
/// `unlock`); `DEFERGC_EINVAL` for a NULL `unlock` (nothing parks).
///
/// # Safety
/// As for `defergc_park`; `unlock` may be called with `arg` on any worker
/// thread, and must not park or unwind.
#[no_mangle]
pub unsafe extern "C" fn defergc_park_unlock(
    reason: *const c_char,
    unlock: Option<unsafe extern "C" fn(*mut c_void)>,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: forwarded from the caller.
    let reason = unsafe { reason_of(reason) };
    entry("defergc_park_unlock", || {
        refuse_in_unlock("defergc_park_unlock");
        let Some(unlock) = unlock else {
            return errors::EINVAL;
        };
        crate::fresh::with(&UNLOCK_FN, |u| u.set(Some(unlock)));
        // SAFETY: call_unlock calls the caller's unlock with its arg, as
        // the caller allows.
        if unsafe { go::park_unlock(reason, call_unlock, arg.cast()) } {
            0
        } else {
            errors::ENOTGOROUTINE
        }
    })
}

thread_local! {
    /// The C unlock function of the goroutine parking on this worker (read
    /// by the worker right after the switch, on the same thread).
    static UNLOCK_FN: std::cell::Cell<Option<unsafe extern "C" fn(*mut c_void)>> =
        const { std::cell::Cell::new(None) };
    /// Set while this thread runs such an unlock function.
    static IN_UNLOCK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Calls the C unlock function stored for this thread.
///
/// # Safety
/// `arg` is the argument its caller gave with it.
unsafe fn call_unlock(arg: *mut u8) {
    if let Some(f) = crate::fresh::with(&UNLOCK_FN, |u| u.take()) {
        crate::fresh::with(&IN_UNLOCK, |i| i.set(true));
        // SAFETY: the function and argument of defergc_park_unlock.
        unsafe { f(arg.cast()) };
        crate::fresh::with(&IN_UNLOCK, |i| i.set(false));
    }
}

/// Aborts, naming the misuse, when `entry` (a panic, Goexit or park) is
/// called from the unlock function of `defergc_park_unlock`: that runs on
/// the worker's own stack after the goroutine switched out, where there
/// is no goroutine to panic, end or park.
pub(crate) fn refuse_in_unlock(entry: &str) {
    if crate::fresh::fresh_get!(IN_UNLOCK: bool) {
        crate::abort(&format!(
            "defergc: {entry} called from the unlock function of defergc_park_unlock \
             (it runs after the goroutine switched out, and must not panic, park or unwind)"
        ));
    }
}

/// Makes the goroutine `g` runnable: if it is parked it runs again, if not
/// yet its next park returns at once. Callable from any thread. Returns 1,
/// 0 if the goroutine has ended (a handle kept past its goroutine wakes
/// nothing, even if another goroutine reuses its memory), or
/// `DEFERGC_EINVAL` for a handle that names no goroutine (NULL, forged).
#[no_mangle]
pub extern "C" fn defergc_ready(g: CGoroutine) -> c_int {
    entry("defergc_ready", || {
        match Goroutine::from_raw(g.g.cast_const().cast(), g.id) {
            Some(handle) if g.id != 0 => c_int::from(handle.ready()),
            _ => errors::EINVAL,
        }
    })
}

/// Declares that the running goroutine is about to block its thread (a
/// system call, native code): its worker's processor goes to another
/// thread meanwhile, so other goroutines keep running. Pair with
/// `defergc_exit_syscall`. Does nothing outside a goroutine.
#[no_mangle]
pub extern "C" fn defergc_enter_syscall() {
    // Its own frame record names the compiled code that entered the call.
    let at = crate::unwind::caller_frame();
    entry("defergc_enter_syscall", || go::enter_syscall_from(at))
}

/// Ends `defergc_enter_syscall`: the goroutine takes a processor again
/// (waiting for one if none is idle).
#[no_mangle]
pub extern "C" fn defergc_exit_syscall() {
    entry("defergc_exit_syscall", go::exit_syscall)
}

/// Go's `runtime.GOMAXPROCS(n)`: sets the number of processors to `n`
/// (at most 1024) and returns the previous number; `n < 1` only reads
/// it. From any thread; starts the scheduler if needed.
#[no_mangle]
pub extern "C" fn defergc_gomaxprocs(n: c_int) -> c_int {
    entry("defergc_gomaxprocs", || {
        let n = usize::try_from(n).unwrap_or(0);
        c_int::try_from(go::set_gomaxprocs(n)).unwrap_or(c_int::MAX)
    })
}

/// Go's `runtime.LockOSThread()`: 0, or `DEFERGC_ENOTGOROUTINE` outside
/// a goroutine (nothing is done).
#[no_mangle]
pub extern "C" fn defergc_lock_os_thread() -> c_int {
    entry("defergc_lock_os_thread", || {
        if go::goid() == 0 {
            return errors::ENOTGOROUTINE;
        }
        go::lock_os_thread();
        0
    })
}

/// Go's `runtime.UnlockOSThread()`: 0 (also with no lock to undo), or
/// `DEFERGC_ENOTGOROUTINE` outside a goroutine (nothing is done).
#[no_mangle]
pub extern "C" fn defergc_unlock_os_thread() -> c_int {
    entry("defergc_unlock_os_thread", || {
        if go::goid() == 0 {
            return errors::ENOTGOROUTINE;
        }
        go::unlock_os_thread();
        0
    })
}

/// The running goroutine's `DEFERGC_GO_LOCALS` local words (zero when it
/// starts, scanned by the collectors), or NULL outside a goroutine. Valid
/// while the goroutine lives.
#[no_mangle]
pub extern "C" fn defergc_goroutine_locals() -> *mut usize {
    entry("defergc_goroutine_locals", go::locals_ptr)
}

/// Declares `[start, start + len)` compiled code that a goroutine may be
/// preempted in asynchronously (beside the executable's own functions,
/// which are classified without it): 0; `EINVAL` for a NULL start, a zero
/// length or a range that wraps; `ENOMEM` when 64 ranges are registered
/// already.
#[no_mangle]
pub extern "C" fn defergc_preempt_text(start: *const c_void, len: usize) -> c_int {
    entry("defergc_preempt_text", || {
        if start.is_null() || len == 0 || (start as usize).checked_add(len).is_none() {
            errors::EINVAL
        } else if go::preempt_text(start as usize, len) {
            0
        } else {
            errors::ENOMEM
        }
    })
}

/// Goroutines alive now (Go's `runtime.NumGoroutine()`).
#[no_mangle]
pub extern "C" fn defergc_num_goroutine() -> u64 {
    entry("defergc_num_goroutine", || go::num_goroutine() as u64)
}

/// Code outside the goroutines (a foreign thread, a C library's callback)
/// may ready a goroutine until the matching `defergc_external_release`:
/// meanwhile parked goroutines are not a deadlock.
#[no_mangle]
pub extern "C" fn defergc_external_hold() {
    entry("defergc_external_hold", || {
        std::mem::forget(go::ExternalWaker::hold())
    })
}

/// Ends one `defergc_external_hold`.
#[no_mangle]
pub extern "C" fn defergc_external_release() {
    entry("defergc_external_release", go::release_external_hold)
}

/// The reason text of a park.
///
/// # Safety
/// `reason` is NULL or a NUL-terminated string living as long as the
/// program.
unsafe fn reason_of(reason: *const c_char) -> &'static str {
    if reason.is_null() {
        return "";
    }
    // SAFETY: the caller guarantees a static NUL-terminated string.
    let text: &'static CStr = unsafe { CStr::from_ptr(reason) };
    text.to_str().unwrap_or("")
}
