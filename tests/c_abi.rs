//! The C ABI, exercised by C programs (tests/c/*.c) compiled against
//! include/defergc.h and linked with the static library this very build
//! produced (cargo builds `libdefergc.a` next to the test binaries), with
//! the helpers of tests/cprog.

mod cprog;

use cprog::{cc, check_compiled, link_args, root, static_lib, text};
use defergc::{defer, ffi};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Compiles tests/c/<name>.c against the library, once per process.
fn compile(name: &str) -> PathBuf {
    cprog::compile(
        &format!("c-abi-{name}"),
        &[&format!("tests/c/{name}.c")],
        &[],
    )
}

fn out_dir() -> PathBuf {
    cprog::out_dir("c-abi")
}

fn run(exe: &Path, args: &[&str]) -> Output {
    cprog::run(exe, args, &[])
}

fn assert_ok(out: &Output, expect: &str) {
    assert!(
        out.status.success(),
        "failed ({}):\n{}",
        out.status,
        text(out)
    );
    assert!(text(out).contains(expect), "{}", text(out));
}

#[test]
fn header_compiles_as_c99_and_c11_with_warnings_as_errors() {
    let src = out_dir().join("header_only.c");
    std::fs::write(
        &src,
        "#include \"defergc.h\"\nint main(void) { defergc_frame f; (void)f; return 0; }\n",
    )
    .unwrap();
    for std in ["-std=c99", "-std=c11", "-std=gnu11"] {
        let out = cc()
            .args([
                std,
                "-pedantic",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-fsyntax-only",
            ])
            .arg(format!("-I{}", root().join("include").display()))
            .arg(&src)
            .output()
            .unwrap();
        check_compiled(out, &format!("the header with {std}"));
    }
}

/// Every `defergc_*` function the header declares is exported by the Rust
/// code, and the other way round.
#[test]
fn header_declares_exactly_the_exported_functions() {
    fn names(text: &str, marker: &str) -> std::collections::BTreeSet<String> {
        let mut out = std::collections::BTreeSet::new();
        for (i, _) in text.match_indices(marker) {
            let rest = &text[i + marker.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if rest[name.len()..].trim_start().starts_with('(') {
                out.insert(format!("defergc_{name}"));
            }
        }
        out
    }
    let header = std::fs::read_to_string(root().join("include/defergc.h")).unwrap();
    // Declarations, not macro uses inside comments: lines that end in ';'.
    let declared: String = header
        .lines()
        .filter(|l| !l.trim_start().starts_with('*') && !l.trim_start().starts_with("/*"))
        .collect::<Vec<_>>()
        .join("\n");
    let declared = names(&declared, " defergc_")
        .into_iter()
        .chain(names(&declared, "*defergc_"))
        .collect::<std::collections::BTreeSet<_>>();
    let mut exported = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(root().join("src/ffi")).unwrap() {
        let src = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        exported.extend(names(&src, "fn defergc_"));
    }
    assert!(!exported.is_empty());
    assert_eq!(declared, exported, "header vs #[no_mangle] exports");
}

/// The header's precise error codes are exactly `-(100 + code)` of every
/// `precise::Error`, each named after its variant.
#[cfg(feature = "precise")]
#[test]
fn header_precise_error_codes_match_the_error_type() {
    let header = std::fs::read_to_string(root().join("include/defergc.h")).unwrap();
    let mut defined = std::collections::BTreeMap::new();
    for line in header.lines() {
        let Some(rest) = line.strip_prefix("#define DEFERGC_PRECISE_E") else {
            continue;
        };
        let (name, value) = rest.split_once(' ').unwrap();
        let value: i32 = value
            .trim()
            .trim_matches(|c| c == '(' || c == ')')
            .parse()
            .unwrap();
        defined.insert(name.to_string(), value);
    }
    assert_eq!(defined.remove("NOTBUILT"), Some(-100));
    let expected: std::collections::BTreeMap<String, i32> = defergc::precise::Error::ALL
        .iter()
        .map(|e| (format!("{e:?}").to_uppercase(), -(100 + e.code())))
        .collect();
    assert_eq!(defined, expected);
}

#[test]
fn go_semantics_through_the_c_protocol() {
    assert_ok(&run(&compile("semantics"), &[]), "semantics: ok");
}

#[test]
fn a_million_c_defers_with_gc_pointers_and_collections() {
    assert_ok(&run(&compile("stress"), &["check"]), "stress check: ok");
}

/// `defergc_thread_create`'s argument, a collected object the creator
/// forgets at once, survives a collection made before the new thread runs.
#[test]
fn a_c_threads_argument_survives_a_collection_before_it_runs() {
    assert_ok(
        &run(&compile("stress"), &["thread-args"]),
        "stress thread-args: ok",
    );
}

#[test]
fn eight_c_threads_defer_while_main_collects() {
    assert_ok(&run(&compile("stress"), &["threads"]), "stress threads: ok");
}

/// Each misuse in its own process: aborts name it exactly.
#[test]
fn misuse_gets_its_exact_error() {
    let exe = compile("misuse");
    let aborts = [
        ("null-frame", "defergc: defergc_defer: null frame pointer"),
        (
            "never-entered",
            "defergc: defergc_defer: not an entered frame (never entered, or overwritten)",
        ),
        (
            "left-out-of-order",
            "defergc: defergc_frame_leave: the frame is not this thread's innermost frame",
        ),
        (
            "defer-not-innermost",
            "defergc: defergc_defer: the frame is not this thread's innermost frame",
        ),
        (
            "left-twice",
            "defergc: defergc_frame_leave: the frame was already left",
        ),
        (
            "frame-of-another-thread",
            "defergc: defergc_defer: the frame is not this thread's innermost frame",
        ),
        (
            "unwind-without-landing",
            "defergc: defergc_frame_unwind: no panic landed in this frame",
        ),
        (
            "tls-unknown-key",
            "defergc: defergc_tls_get: unknown tls key 123456789",
        ),
    ];
    for (case, message) in aborts {
        let out = run(&exe, &[case]);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGABRT),
            "{case}: {}",
            text(&out)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with(message), "{case}: {stderr}");
    }
    assert_ok(&run(&exe, &["error-codes"]), "error codes: ok");
    assert_ok(
        &run(&exe, &["unregistered-thread"]),
        "unregistered thread: ok",
    );
    let out = run(&exe, &["unrecovered-panic"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // Go's report: the value, then the panicking goroutine and where the
    // panic was called (misuse.c's main, from its return address).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(
            "panic: panic called with nil argument\n\ngoroutine 1 [running]:\nmain(...)\n\t"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("tests/c/misuse.c:"), "{stderr}");
}

// ---- Rust -> C -> Rust ---------------------------------------------------

#[repr(C)]
struct Api {
    frame_enter: *const c_void,
    defer: *const c_void,
    frame_leave: *const c_void,
    frame_unwind: *const c_void,
    panic: *const c_void,
    recover: *const c_void,
}

#[repr(C)]
struct Outcome {
    log: [c_char; 16],
    recovered_kind: c_int,
    message: [c_char; 64],
}

impl Outcome {
    fn new() -> Outcome {
        Outcome {
            log: [0; 16],
            recovered_kind: -1,
            message: [0; 64],
        }
    }
    fn log(&self) -> String {
        // SAFETY: the C side keeps the log NUL-terminated.
        unsafe { CStr::from_ptr(self.log.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }
    fn message(&self) -> String {
        // SAFETY: zero-initialised and filled with strncpy of a shorter size.
        unsafe { CStr::from_ptr(self.message.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }
}

type Callback = extern "C-unwind" fn(c_int) -> c_int;
type CMiddle = unsafe extern "C-unwind" fn(Callback, c_int, *mut Outcome) -> c_int;

const RECOVER_IN_C: c_int = 1;
const PANIC_IN_RUST: c_int = 2;
const PANIC_IN_C: c_int = 4;
const RUST_IN_DEFERRED: c_int = 8;

thread_local! {
    static RUST_LOG: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The Rust function the C code calls: a Rust frame that panics on demand.
extern "C-unwind" fn rust_callback(panic_in_rust: c_int) -> c_int {
    ffi::guard(|| {
        defer::call(|f| {
            f.defer(|| RUST_LOG.with(|l| l.borrow_mut().push('r')));
            if panic_in_rust != 0 {
                panic!("rust boom");
            }
            0
        })
    })
}

struct Interleave {
    c_middle: CMiddle,
    c_panic_value: *mut c_void,
}

/// Builds tests/c/interleave.c as a shared object and loads it.
fn interleave() -> Interleave {
    let so = out_dir().join("libinterleave.so");
    let out = cc()
        .args([
            "-std=c11", "-O2", "-g", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror",
        ])
        .arg(format!("-I{}", root().join("include").display()))
        .arg(format!("-I{}", root().join("tests/c").display()))
        .arg(root().join("tests/c/interleave.c"))
        .arg("-o")
        .arg(&so)
        .output()
        .unwrap();
    check_compiled(out, "interleave.c");
    let path = CString::new(so.to_str().unwrap()).unwrap();
    // SAFETY: loading our own test library; the symbols are looked up with
    // the types interleave.c defines them with.
    unsafe {
        let lib = libc::dlopen(path.as_ptr(), libc::RTLD_NOW);
        assert!(!lib.is_null(), "dlopen failed");
        let sym = |name: &str| {
            let name = CString::new(name).unwrap();
            let p = libc::dlsym(lib, name.as_ptr());
            assert!(!p.is_null(), "{name:?} missing");
            p
        };
        let api: &'static Api = Box::leak(Box::new(Api {
            frame_enter: ffi::defergc_frame_enter as *const c_void,
            defer: ffi::defergc_defer as *const c_void,
            frame_leave: ffi::defergc_frame_leave as *const c_void,
            frame_unwind: ffi::defergc_frame_unwind as *const c_void,
            panic: ffi::defergc_panic as *const c_void,
            recover: ffi::defergc_recover as *const c_void,
        }));
        let init: extern "C" fn(*const Api) = std::mem::transmute(sym("interleave_init"));
        init(api);
        let value: extern "C" fn() -> *mut c_void =
            std::mem::transmute(sym("c_panic_value_address"));
        Interleave {
            c_middle: std::mem::transmute::<*mut c_void, CMiddle>(sym("c_middle")),
            c_panic_value: value(),
        }
    }
}

fn take_rust_log() -> String {
    RUST_LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

#[test]
fn rust_panic_crosses_into_c_and_c_recovers_it() {
    let il = interleave();
    take_rust_log();
    let mut o = Outcome::new();
    // SAFETY: c_middle is the C function with this signature.
    let r = defer::call(|_| unsafe {
        (il.c_middle)(rust_callback, RECOVER_IN_C | PANIC_IN_RUST, &mut o)
    });
    assert_eq!(
        r, 0,
        "a recovered C function returns its named result (not yet set)"
    );
    assert_eq!(
        take_rust_log(),
        "r",
        "the inner Rust frame ran its deferred call"
    );
    assert_eq!(o.log(), "bLcR", "body, landing, deferred calls LIFO");
    assert_eq!(o.recovered_kind, 3);
    assert_eq!(o.message(), "rust boom");
}

#[test]
fn c_panic_crosses_into_rust_and_rust_recovers_it() {
    let il = interleave();
    take_rust_log();
    let mut o = Outcome::new();
    let recovered = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        // SAFETY: as above.
        unsafe { (il.c_middle)(rust_callback, PANIC_IN_C, &mut o) };
        None
    });
    let v = recovered.expect("the C panic did not reach the Rust frame");
    assert_eq!(
        v.downcast_ref::<defer::CValue>(),
        Some(&defer::CValue(il.c_panic_value))
    );
    assert_eq!(o.log(), "bLc");
    assert_eq!(take_rust_log(), "r");
}

#[test]
fn rust_panic_passes_through_c_frames_to_an_outer_rust_frame() {
    let il = interleave();
    take_rust_log();
    let mut o = Outcome::new();
    let recovered = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        // SAFETY: as above.
        unsafe { (il.c_middle)(rust_callback, PANIC_IN_RUST, &mut o) };
        None
    });
    let v = recovered.expect("the Rust panic did not come back out");
    assert!(v.is_rust_panic());
    assert_eq!(v.to_string(), "rust boom");
    assert_eq!(
        o.log(),
        "bLc",
        "the C frame ran its deferred call on the way"
    );
    assert_eq!(take_rust_log(), "r");
}

#[test]
fn rust_panic_from_a_deferred_c_call_lands_back_in_the_same_frame() {
    let il = interleave();
    take_rust_log();
    let mut o = Outcome::new();
    // SAFETY: as above.
    let r = defer::call(|_| unsafe {
        (il.c_middle)(rust_callback, RECOVER_IN_C | RUST_IN_DEFERRED, &mut o)
    });
    assert_eq!(
        r, 42,
        "recovered in the same frame during its normal return"
    );
    assert_eq!(o.log(), "bdcR");
    assert_eq!(o.recovered_kind, 3);
    assert_eq!(o.message(), "rust boom");
    assert_eq!(take_rust_log(), "rr");
}

/// The C example in examples/c builds as the README says and runs.
#[test]
fn the_c_example_builds_and_runs() {
    let exe = out_dir().join("generated");
    let out = cc()
        .args(["-O2", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", root().join("include").display()))
        .arg(root().join("examples/c/generated.c"))
        .arg(static_lib())
        .args(link_args())
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    check_compiled(out, "examples/c/generated.c");
    assert_ok(&run(&exe, &[]), "recovered the node holding -500");
}

/// The precise collector from C (or, without the feature, that every call
/// reports it is not built).
#[test]
fn precise_collector_from_c() {
    let out = run(&compile("precise"), &[]);
    let expect = if cfg!(feature = "precise") {
        "precise: ok"
    } else {
        "precise: not built"
    };
    assert_ok(&out, expect);
}

/// The same example linked against the shared library with -ldefergc only.
#[test]
fn the_c_example_links_against_the_shared_library() {
    let deps = static_lib().parent().unwrap().to_path_buf();
    assert!(
        deps.join("libdefergc.so").exists(),
        "no libdefergc.so next to the tests"
    );
    let exe = out_dir().join("generated_shared");
    let out = cc()
        .args(["-O2", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", root().join("include").display()))
        .arg(root().join("examples/c/generated.c"))
        .arg(format!("-L{}", deps.display()))
        .arg(format!("-Wl,-rpath,{}", deps.display()))
        .arg("-ldefergc")
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    check_compiled(out, "examples/c/generated.c against libdefergc.so");
    assert_ok(&run(&exe, &[]), "recovered the node holding -500");
}
