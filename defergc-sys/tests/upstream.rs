//! bdwgc's own test programs, compiled with exactly the defines we ship and
//! linked against the collector archive this build produced.
//!
//! The C compiler is `$CC`, or `cc`. Only for the vendored build: these
//! are the vendored version's own tests.
#![cfg(defergc_vendored)]

use defergc_sys::build;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn compile(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("vendor/bdwgc/tests").join(format!("{name}.c"));
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bdwgc-upstream");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    cmd.arg("-O2").arg("-w").args(build::c_flags());
    cmd.arg(&src).arg("-o").arg(&exe).args(build::LINK_ARGS);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "compiling {name}.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Runs `exe` to completion (or kills it after `limit`) and returns its
/// output; panics unless it exits with status 0.
fn run(exe: &Path, limit: Duration) -> String {
    let mut child = Command::new(exe)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > limit {
            let stacks = threads_of(child.id());
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{} ran longer than {limit:?}; its threads then:\n{stacks}\nits output:\n{}{}",
                exe.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{} failed ({}):\n{text}",
        exe.display(),
        out.status
    );
    text
}

/// Every thread's stack of process `pid`, by gdb where it is installed:
/// what a hung test program was doing.
fn threads_of(pid: u32) -> String {
    let pid = pid.to_string();
    match Command::new("gdb")
        .args(["-q", "-batch", "-p", &pid, "-ex", "thread apply all bt 30"])
        .output()
    {
        Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
        Err(e) => format!("(no stacks: gdb: {e})"),
    }
}

/// Runs `exe` and returns (succeeded, output), without judging.
fn try_run(exe: &Path, limit: Duration) -> (bool, String) {
    match std::panic::catch_unwind(|| run(exe, limit)) {
        Ok(out) => (true, out),
        Err(e) => (
            false,
            e.downcast_ref::<String>().cloned().unwrap_or_default(),
        ),
    }
}

#[test]
fn gctest_torture_test_passes() {
    let exe = compile("gctest");
    let (ok, out) = try_run(&exe, Duration::from_secs(300));
    if ok {
        assert!(out.contains("Collector appears to work"), "{out}");
        return;
    }
    // Two failures of gctest's own have each shown once here, on a loaded
    // machine, and not again in many runs: its heap-growth bound, after its
    // heap grew while it had the collector disabled between its own test
    // phases; and its finalization-tree check (`client_data == t->level`,
    // gctest.c) in incremental mode with the userfaultfd write-protect
    // dirty bits. And once (the CI run of 2026-11-27 23:32, the precise
    // build's tests, the same C program that took 10 s in the two builds
    // before) it ran for the whole 600 s then allowed; its threads are now
    // printed when it does. Each gets one more run (and is shown); any
    // other failure, or one of them twice, fails the test.
    let known = (out.contains("while GC was disabled") && out.contains("Unexpected heap growth"))
        || (out.contains("Using userfaultfd in write-protect mode")
            && out.contains("client_data == t->level"))
        || out.contains("ran longer than");
    assert!(known, "{out}");
    eprintln!("gctest failed once (a known way); running it again:\n{out}");
    let out = run(&exe, Duration::from_secs(300));
    assert!(out.contains("Collector appears to work"), "{out}");
}

#[test]
fn threadkey_test_passes() {
    let out = run(&compile("threadkey"), Duration::from_secs(120));
    assert!(out.contains("SUCCEEDED"), "{out}");
}

#[test]
fn subthreadcreate_test_passes() {
    let out = run(&compile("subthreadcreate"), Duration::from_secs(120));
    assert!(out.contains("threads"), "{out}");
}

#[test]
fn initfromthread_test_passes() {
    let out = run(&compile("initfromthread"), Duration::from_secs(120));
    assert!(out.contains("SUCCEEDED"), "{out}");
}
