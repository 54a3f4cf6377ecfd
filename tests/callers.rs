//! Go's runtime.Callers, Caller, CallersFrames and Stack from compiled code
//! (tests/c/callers.c) and from Rust (`defer::traceback`).

use defergc::defer::traceback;

mod cprog;

fn callers_c(case: &str) -> String {
    let exe = cprog::compile("callers", &["tests/c/callers.c"], &["-D_GNU_SOURCE"]);
    let out = cprog::run(&exe, &[case], &[]);
    assert_eq!(out.status.code(), Some(0), "{case}: {}", cprog::text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn callers_lists_the_frames_innermost_first_with_files_and_lines() {
    assert_eq!(
        callers_c("callers"),
        "defergc_callers ? 0\nleaf callers.c 1\nmiddle callers.c 1\ngo_main callers.c 1\n"
    );
}

#[test]
fn caller_names_the_calling_line() {
    assert_eq!(callers_c("caller"), "caller ok\n");
}

#[test]
fn stack_prints_the_goroutine_as_a_report_does() {
    let text = callers_c("stack");
    let functions: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_suffix("(...)"))
        .collect();
    assert!(text.starts_with("goroutine 1 [running]:\n"), "{text}");
    assert_eq!(&functions[..3], ["leaf", "middle", "go_main"], "{text}");
}

#[inline(never)]
fn rust_leaf() -> Vec<usize> {
    traceback::callers(0, 8)
}

#[test]
fn rust_callers_start_at_the_caller() {
    let pcs = rust_leaf();
    let first = traceback::frame_info(pcs[0]).expect("symbolised");
    assert!(
        first.function.ends_with("rust_callers_start_at_the_caller"),
        "{first:?}"
    );
    assert!(first.file.unwrap().ends_with("tests/callers.rs"));
    assert!(first.entry.unwrap() < pcs[0]);
}
