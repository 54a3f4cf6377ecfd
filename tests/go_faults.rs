//! Hardware faults in compiled code (tests/c/faults.c) become Go's
//! run-time panics: recovered as Go recovers them, and, unrecovered,
//! reported as Go reports them (tests/go/faults), up to the goroutine
//! header, with the faulting function first in the goroutine's frames.

mod cprog;

fn faults_c(case: &str) -> std::process::Output {
    // -O1 keeps the test's small functions apart (-g: files and lines).
    let exe = cprog::compile("faults", &["tests/c/faults.c"], &["-D_GNU_SOURCE"]);
    cprog::run(&exe, &[case], &[])
}

fn expected(file: &str) -> String {
    std::fs::read_to_string(cprog::root().join("tests/go/faults").join(file)).unwrap()
}

/// The report up to and including the first goroutine header, and the
/// first frame's function after it.
fn head_and_first_frame(stderr: &str) -> (String, Option<String>) {
    let mut out = String::new();
    let mut lines = stderr.lines();
    for line in lines.by_ref() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("goroutine ") && line.ends_with("[running]:") {
            break;
        }
    }
    let first = lines
        .next()
        .map(|l| l.trim_end_matches("(...)").to_string());
    (out, first)
}

#[test]
fn unrecovered_faults_are_reported_as_go_reports_them() {
    // (case, the function that faulted)
    let cases = [
        ("nil", "nil_deref"),
        ("div", "divide"),
        ("addr", "go_main"),
        ("repanic", "repanic"),
    ];
    reported_as_go_reports(&cases);
}

#[test]
fn the_signal_line_names_the_faulting_instruction() {
    let out = faults_c("nil");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().nth(1).unwrap();
    // addr=0x8: the field b of a nil *T, as in Go.
    assert!(
        line.starts_with("[signal SIGSEGV: segmentation violation code=0x1 addr=0x8 pc=0x"),
        "{stderr}"
    );
    // The frame line of the faulting function gives no offset when the
    // fault is its first instruction, as Go's does; either way it names
    // faults.c.
    assert!(stderr.contains("tests/c/faults.c:"), "{stderr}");
}

#[test]
fn recovered_faults_come_back_as_go_s_runtime_errors() {
    for case in ["recover", "unwind", "goroutine"] {
        let out = faults_c(case);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            expected(&format!("{case}.stdout")),
            "{case}"
        );
    }
}

#[test]
fn ten_thousand_recovered_faults_leave_nothing_behind() {
    let out = faults_c("loop");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "recovered 20000 faults\n"
    );
}

#[test]
fn a_fault_in_the_runtime_is_a_fatal_error() {
    let out = faults_c("runtime");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "fatal error: unexpected signal during runtime execution\n\
             [signal SIGSEGV: segmentation violation code=0x1 addr=0x10 pc=0x"
        ),
        "{stderr}"
    );
}

#[test]
fn with_catching_off_a_fault_is_the_default_action() {
    let out = faults_c("off");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGSEGV),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_fault_that_is_not_ours_reaches_the_handler_installed_before_ours() {
    // (case, what the program's own handler says)
    let cases = [
        // Catching off: the runtime's handler stays and passes it on.
        ("chain-off", "own handler: fault\n"),
        // A plain thread that never asked; a one-argument handler.
        ("chain-thread", "own plain handler\n"),
        // Sent with pthread_kill, not raised by an instruction.
        ("chain-kill", "own handler: sent\n"),
    ];
    for (case, said) in cases {
        let out = faults_c(case);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(42), "{case}: {stderr}");
        assert_eq!(stderr, said, "{case}");
    }
}

#[test]
fn a_fault_that_is_ours_is_a_go_panic_despite_an_earlier_handler() {
    let out = faults_c("chain-ours");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "panic: runtime error: invalid memory address or nil pointer dereference\n\
             [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("own handler"), "{stderr}");
}

/// Runs the faults program's `case` with a deadline: a process still
/// running after it is killed, and the run reported as hung (`None`).
fn faults_c_within(case: &str, deadline: std::time::Duration) -> Option<std::process::Output> {
    let exe = cprog::compile("faults", &["tests/c/faults.c"], &["-D_GNU_SOURCE"]);
    cprog::run_with_deadline(std::process::Command::new(exe).arg(case), deadline).ok()
}

/// The lines of a report before its goroutine header, and the header.
fn before_header(stderr: &str) -> (String, Option<String>) {
    let mut out = String::new();
    for line in stderr.lines() {
        if line.starts_with("goroutine ") && line.ends_with("[running]:") {
            return (out, Some(line.to_string()));
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, None)
}

#[test]
fn faults_in_code_that_never_deferred_are_go_panics() {
    // (case, Go's report, the goroutine, the function that faulted)
    let cases = [
        ("nil-main", "nil-nodefer.out", Some(1), "store_nil"),
        ("div-main", "div-nodefer.out", Some(1), "divide"),
        ("nil-go", "nil-nodefer.out", None, "store_nil"),
        ("div-go", "div-nodefer.out", None, "divide"),
        ("nil-thread", "nil-nodefer.out", None, "store_nil"),
    ];
    let mut failures = Vec::new();
    for (case, file, goroutine, function) in cases {
        let out = faults_c(case);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let (want_head, want_header) = before_header(&expected(file));
        let (head, header) = before_header(&stderr);
        let (_, first) = head_and_first_frame(&stderr);
        let id = header.as_deref().and_then(|h| {
            h.strip_prefix("goroutine ")?
                .strip_suffix(" [running]:")?
                .parse::<u64>()
                .ok()
        });
        let header_ok = match goroutine {
            // The main goroutine is 1, as in Go.
            Some(1) => header == want_header,
            // Another goroutine's (or thread's) id is ours, not Go's.
            _ => id.is_some(),
        };
        if out.status.code() != Some(2)
            || cprog::addresses_elided(&head) != cprog::addresses_elided(&want_head)
            || !header_ok
            || first.as_deref() != Some(function)
        {
            failures.push(format!(
                "{case}: status {}, got\n{stderr}\nwhere Go prints\n{}(then {function})",
                out.status,
                expected(file)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_stack_overflow_inside_malloc_is_reported_and_never_hangs() {
    // The report of an overflow is made in the signal handler, possibly
    // while the faulting malloc holds its arena's lock: it must not
    // allocate. Before it was made without allocating, every run hung.
    for run in 0..20 {
        let Some(out) = faults_c_within("overflow-malloc", std::time::Duration::from_secs(20))
        else {
            panic!("run {run}: hung (killed after 20 s)");
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "run {run}: {stderr}");
        assert!(
            stderr.starts_with("defergc: goroutine ")
                && stderr.contains(
                    " stack overflow (256 KiB stack; raise it with DEFERGC_STACK_SIZE or \
                     the scheduler's stack size setting)\nfatal error: stack overflow\n"
                ),
            "run {run}: {stderr}"
        );
    }
}

#[test]
fn main_returning_waits_for_another_goroutine_s_panic() {
    // main returns while the other goroutine's panic runs its deferred
    // call: as in Go, the report is printed and the status is 2.
    for run in 0..20 {
        let Some(out) =
            faults_c_within("return-while-panicking", std::time::Duration::from_secs(20))
        else {
            panic!("run {run}: hung (killed after 20 s)");
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "run {run}: {stderr}");
        let (head, header) = before_header(&stderr);
        assert_eq!(
            head, "panic: panic called with nil argument\n\n",
            "run {run}: {stderr}"
        );
        assert!(
            header.is_some_and(|h| h != "goroutine 1 [running]:"),
            "run {run}: {stderr}"
        );
    }
}

#[test]
fn an_unrecovered_panic_flushes_stdio_and_runs_no_exit_handlers() {
    // Every way an unrecovered panic ends the process: C's buffered
    // output appears (before the report), atexit handlers do not run,
    // the status is 2 (include/defergc.h, "How the process ends").
    for case in ["exit-main", "exit-plain", "exit-thread"] {
        let out = faults_c(case);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "buffered before the panic\n",
            "{case}: {stderr}"
        );
        assert!(
            stderr.starts_with("panic: panic called with nil argument\n\ngoroutine "),
            "{case}: {stderr}"
        );
        assert!(!stderr.contains("atexit handler ran"), "{case}: {stderr}");
    }
}

#[test]
fn gotraceback_crash_ends_with_sigabrt_after_the_report() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let exe = cprog::compile("faults", &["tests/c/faults.c"], &["-D_GNU_SOURCE"]);
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("exit-main").env("GOTRACEBACK", "crash");
    // SAFETY: setrlimit is async-signal-safe; no core file is left behind.
    unsafe {
        cmd.pre_exec(|| {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{stderr}");
    assert!(
        stderr.starts_with("panic: panic called with nil argument\n"),
        "{stderr}"
    );
}

#[test]
fn a_panic_the_runtime_raises_names_its_compiled_caller() {
    // (case, the compiled function that called the runtime)
    let cases = [("close-nil", "close_nil"), ("wg-negative", "wg_negative")];
    reported_as_go_reports(&cases);
}

/// Each `(case, function)` of the faults program ends with status 2, Go's
/// report up to the goroutine header (addresses aside), and `function` as
/// the first frame listed.
fn reported_as_go_reports(cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for &(case, function) in cases {
        let out = faults_c(case);
        let want = expected(&format!("{case}.out"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let (head, first) = head_and_first_frame(&stderr);
        if out.status.code() != Some(2)
            || cprog::addresses_elided(&head) != cprog::addresses_elided(&want)
            || first.as_deref() != Some(function)
        {
            failures.push(format!(
                "{case}: status {}, got\n{stderr}\nwhere Go prints\n{want}(then {function})",
                out.status
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
