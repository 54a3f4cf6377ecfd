//! Goroutines from C (tests/c/go.c): each case in its own process, its
//! output and exit status checked, Go's messages byte for byte where the
//! process ends the Go way.

mod cprog;

use std::process::Output;

fn go_c(case: &str, env: &[(&str, &str)]) -> Output {
    let exe = cprog::compile("go", &["tests/c/go.c"], &["-D_GNU_SOURCE"]);
    cprog::run(&exe, &[case], env)
}

fn assert_ok(out: &Output, expect: &str) {
    let text = cprog::text(out);
    assert!(out.status.success(), "failed ({}):\n{text}", out.status);
    assert!(text.contains(expect), "{text}");
}

#[test]
fn go_statements_park_ready_and_a_channel_built_on_them() {
    assert_ok(&go_c("basic", &[]), "basic ok");
}

#[test]
fn defer_panic_recover_inside_ten_thousand_goroutines_that_switch() {
    assert_ok(&go_c("defer", &[]), "defer ok: 10000 recovered");
}

#[test]
fn a_handle_kept_past_its_goroutine_wakes_nothing() {
    assert_ok(&go_c("stale", &[]), "stale ok");
}

#[test]
fn a_goroutine_in_a_system_call_does_not_stop_the_others() {
    assert_ok(
        &go_c("syscall", &[("GOMAXPROCS", "1")]),
        "syscall ok: 1000 ticks",
    );
}

/// With one processor, a C goroutine looping on `DEFERGC_PREEMPT_POINT()`
/// yields once sysmon asks it to (after 10 ms), and the goroutine queued
/// behind it ends the loop. Without the request or the poll point the
/// loop keeps the processor for ever: the program is killed.
#[test]
fn a_c_loop_on_the_poll_point_lets_another_goroutine_end_it() {
    let exe = cprog::compile("go", &["tests/c/go.c"], &["-D_GNU_SOURCE"]);
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("preempt").env("GOMAXPROCS", "1");
    let out = cprog::run_with_deadline(&mut cmd, std::time::Duration::from_secs(60))
        .unwrap_or_else(|text| panic!("the loop was never preempted: {text}"));
    assert_ok(&out, "preempt ok");
}

/// Stderr of a process that must end with status 2.
fn ends_with_status_2(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", cprog::text(out));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_unrecovered_panic_in_a_goroutine_ends_the_process_as_go_does() {
    let out = go_c("panic", &[]);
    let err = ends_with_status_2(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("before the panic"),
        "C output was lost"
    );
    assert!(
        err.starts_with("panic: panic called with nil argument\n\ngoroutine 2 [running]:\n"),
        "{err}"
    );
}

#[test]
fn every_goroutine_blocked_is_go_s_deadlock() {
    let err = ends_with_status_2(&go_c("deadlock", &[]));
    assert!(
        err.starts_with(
            "fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [chan receive]:\n"
        ),
        "{err}"
    );
    assert!(err.contains("\ngoroutine 2 [chan receive]:\n"), "{err}");
    // The goroutine C's main started says where (tests/go_dumps.rs has
    // the dumps' own tests).
    assert!(
        err.contains("\ncreated by main_deadlock in goroutine 1\n\t"),
        "{err}"
    );
    assert!(err.contains("tests/c/go.c:"), "{err}");
}

#[test]
fn main_calling_goexit_lets_the_others_finish_then_reports() {
    let out = go_c("goexit", &[]);
    let err = ends_with_status_2(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("the other goroutine finished"),
        "{}",
        cprog::text(&out)
    );
    assert_eq!(
        err,
        "fatal error: no goroutines (main called runtime.Goexit) - deadlock!\n"
    );
}

#[test]
fn a_stack_overflow_names_its_goroutine() {
    let err = ends_with_status_2(&go_c("overflow", &[]));
    assert!(
        err.starts_with("defergc: goroutine 2 stack overflow"),
        "{err}"
    );
    assert!(err.contains("fatal error: stack overflow\n"), "{err}");
}

#[test]
fn the_compiler_style_example_starts_a_hundred_thousand_goroutines() {
    let exe = cprog::compile("goroutines-example", &["examples/c/goroutines.c"], &[]);
    let out = cprog::run(&exe, &[], &[]);
    assert_ok(
        &out,
        "100000 results from 100000 goroutines (half delivered by panic and recover)",
    );
}
