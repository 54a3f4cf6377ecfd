//! The C ABI under attack (tests/c/adversarial.c): every function of the
//! header with NULL, forged, stale, huge and out-of-order inputs, each case
//! in its own process. Each must end with the library's own answer: an
//! abort whose message starts with `defergc:` and names the misuse, Go's
//! panic or fatal error (status 2), or the documented error codes (the
//! case checks them and prints "ok"). Never a segfault, a hang, a silent
//! success or someone else's abort text.

mod cprog;

use std::os::unix::process::ExitStatusExt;
use std::process::Output;

/// How a case must end.
enum Expect {
    /// SIGABRT, stderr starting with the message (which names the misuse).
    Abort(&'static str),
    /// SIGABRT, stderr starting with the first part and containing one of
    /// the others (the backends word a few refusals differently).
    AbortEither(&'static str, &'static [&'static str]),
    /// Status 2, stderr starting with Go's words.
    Go(&'static str),
    /// Status 0, "ok" on stdout: the case checked its error codes.
    Ok,
}

use Expect::*;

const NOT_OURS: &str = "the pointer is not memory from defergc's allocation functions";

fn expectations() -> Vec<(&'static str, Expect)> {
    vec![
        ("free-malloc", AbortEither("defergc: defergc_free(", &[NOT_OURS])),
        ("free-stack", AbortEither("defergc: defergc_free(", &[NOT_OURS])),
        (
            "free-interior",
            // bdwgc knows the object around the pointer; malloc does not.
            AbortEither(
                "defergc: defergc_free(",
                &["the pointer points inside an allocation", NOT_OURS],
            ),
        ),
        (
            "free-twice",
            AbortEither("defergc: defergc_free(", &["the memory was already freed"]),
        ),
        (
            "free-twice-collectable",
            AbortEither("defergc: defergc_free(", &["the memory was already freed"]),
        ),
        ("free-forged", Abort("defergc: defergc_free(0x10): the pointer is not memory")),
        ("realloc-malloc", AbortEither("defergc: defergc_realloc(", &[NOT_OURS])),
        (
            "realloc-freed",
            AbortEither("defergc: defergc_realloc(", &["the memory was already freed"]),
        ),
        ("alloc-codes", Ok),
        ("thread-codes", Ok),
        ("pprof-codes", Ok),
        (
            "tls-get-forged",
            Abort("defergc: defergc_tls_get: unknown tls key 2147483647"),
        ),
        ("tls-codes", Ok),
        (
            "leave-in-own-defer",
            Abort("defergc: defergc_frame_leave: the frame is running its deferred calls"),
        ),
        (
            "unwind-in-own-defer",
            Abort("defergc: defergc_frame_unwind: the frame is running its deferred calls"),
        ),
        (
            "defer-size-max",
            Abort("defergc: defergc_defer: 18446744073709551615 argument bytes, more than DEFERGC_DEFER_MAX_ARGS (65536)"),
        ),
        (
            "defer-size-max7",
            Abort("defergc: defergc_defer: 18446744073709551608 argument bytes"),
        ),
        ("defer-size-4g", Abort("defergc: defergc_defer: 4294967296 argument bytes")),
        ("defer-size-limit", Abort("defergc: defergc_defer: 65537 argument bytes")),
        (
            "defer-null-args",
            Abort("defergc: defergc_defer: null argument pointer with a non-zero length"),
        ),
        ("enter-null", Abort("defergc: defergc_frame_enter: null frame pointer")),
        ("leave-null", Abort("defergc: defergc_frame_leave: null frame pointer")),
        ("unwind-null", Abort("defergc: defergc_frame_unwind: null frame pointer")),
        (
            "enter-twice",
            Abort("defergc: defergc_frame_enter: the frame is already entered"),
        ),
        (
            "no-leave-then-panic",
            Abort("defergc: panic: the innermost frame's function returned without leaving it"),
        ),
        (
            "no-leave-then-again",
            Abort("defergc: defergc_frame_enter: the frame is already entered (entered twice, or its function returned without leaving it)"),
        ),
        (
            "leave-after-landing",
            Abort("defergc: defergc_frame_leave: a panic landed in this frame"),
        ),
        (
            "defer-after-landing",
            Abort("defergc: defergc_defer: the frame is already running its deferred calls"),
        ),
        (
            "defer-forged-frame",
            Abort("defergc: defergc_defer: not an entered frame"),
        ),
        ("recover-codes", Ok),
        (
            "goexit-main-thread",
            Go("fatal error: no goroutines (main called runtime.Goexit) - deadlock!\n"),
        ),
        ("panic-no-frame", Go("panic: panic called with nil argument\n")),
        (
            "record-alloc-max",
            Abort("defergc: defergc_record_alloc: 18446744073709551615 bytes, more than the largest record"),
        ),
        (
            "record-alloc-huge",
            Abort("defergc: defergc_record_alloc: 1099511627776 bytes"),
        ),
        ("record-codes", Ok),
        ("main-null", Abort("defergc: defergc_main: NULL main function")),
        ("main-nested", Abort("defergc: a second main goroutine while one runs")),
        ("go-codes", Ok),
        (
            "park-unlock-panics",
            Abort("defergc: defergc_panic called from the unlock function of defergc_park_unlock"),
        ),
        (
            "park-unlock-parks",
            Abort("defergc: defergc_park called from the unlock function of defergc_park_unlock"),
        ),
        ("outside-goroutine-codes", Ok),
        (
            "external-release-unheld",
            Abort("defergc: defergc_external_release: no external hold to release"),
        ),
        ("send-closed", Go("panic: send on closed channel\n")),
        ("close-closed", Go("panic: close of closed channel\n")),
        ("close-nil", Go("panic: close of nil channel\n")),
        ("chan-make-huge", Go("panic: makechan: size out of range\n")),
        (
            "chan-make-elem-too-big",
            Go("fatal error: makechan: invalid channel element type\n"),
        ),
        (
            "chan-make-elem-64k",
            Go("fatal error: makechan: invalid channel element type\n"),
        ),
        ("chan-make-negative", Go("panic: makechan: size out of range\n")),
        ("chan-make-over-max-alloc", Go("panic: makechan: size out of range\n")),
        ("chan-make-limits", Ok),
        (
            "chan-forged",
            AbortEither("defergc: defergc_chan_try_send: 0x", &["is not a channel"]),
        ),
        (
            "select-null-cases",
            Abort("defergc: defergc_select: NULL cases with a non-zero count"),
        ),
        (
            "select-bad-dir",
            Abort("defergc: defergc_select: case direction 7 is neither"),
        ),
        ("chan-codes", Ok),
        ("timer-null", Abort("defergc: defergc_timer_stop: NULL timer")),
        ("dump-codes", Ok),
        ("mutex-null", Abort("defergc: defergc_mutex_lock: NULL object")),
        (
            "mutex-unlock-unlocked",
            Go("fatal error: sync: unlock of unlocked mutex"),
        ),
        (
            "rwmutex-runlock-unlocked",
            Go("fatal error: sync: RUnlock of unlocked RWMutex"),
        ),
        (
            "rwmutex-unlock-unlocked",
            Go("fatal error: sync: Unlock of unlocked RWMutex"),
        ),
        ("wg-negative", Go("panic: sync: negative WaitGroup counter\n")),
        ("once-null-fn", Abort("defergc: defergc_once_do: NULL function")),
        ("cond-null-mutex", Abort("defergc: defergc_cond_wait: NULL object")),
        ("precise-codes", Ok),
        ("net-codes", Ok),
        (
            "net-two-readers",
            Abort("defergc: two goroutines wait to read one descriptor at once"),
        ),
        ("prof-codes", Ok),
    ]
}

fn exe() -> std::path::PathBuf {
    cprog::compile(
        "adversarial",
        &["tests/c/adversarial.c"],
        &["-D_GNU_SOURCE"],
    )
}

fn check(case: &str, expect: &Expect, out: &Output) -> Result<(), String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let why = |what: &str| {
        Err(format!(
            "{case}: {what}; got {} with\n{stdout}{stderr}",
            out.status
        ))
    };
    match expect {
        Abort(message) => {
            if out.status.signal() != Some(libc::SIGABRT) || !stderr.starts_with(message) {
                return why(&format!("expected an abort saying {message:?}"));
            }
        }
        AbortEither(prefix, any) => {
            if out.status.signal() != Some(libc::SIGABRT)
                || !stderr.starts_with(prefix)
                || !any
                    .iter()
                    .any(|m| stderr.lines().next().unwrap_or("").contains(m))
            {
                return why(&format!("expected an abort {prefix:?} with one of {any:?}"));
            }
        }
        Go(words) => {
            if out.status.code() != Some(2) || !stderr.starts_with(words) {
                return why(&format!("expected status 2 and {words:?}"));
            }
        }
        Ok => {
            if !out.status.success() || stdout.trim_end() != "ok" {
                return why("expected \"ok\" and status 0");
            }
        }
    }
    // Whatever else it printed is the library's own.
    for line in stderr.lines() {
        if line.contains("fatal runtime error") || line.contains("thread '") {
            return why("Rust's own abort text escaped");
        }
    }
    Result::Ok(())
}

/// Every case of the program has an expectation here, and the other way
/// round: a case cannot be added (or dropped) without saying how it ends.
#[test]
fn every_case_has_an_expectation() {
    let listed = cprog::cases(&exe());
    let expected: Vec<&str> = expectations().iter().map(|(c, _)| *c).collect();
    assert_eq!(listed, expected);
}

#[test]
fn every_misuse_gets_its_answer() {
    let exe = exe();
    let cases = expectations();
    // Two at a time: each is a short process.
    let failures: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<_> = cases.chunks(cases.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let exe = &exe;
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(case, expect)| {
                            let out = cprog::run(exe, &[case], &[]);
                            check(case, expect, &out).err()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
