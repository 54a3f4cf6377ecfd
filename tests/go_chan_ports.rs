//! Go's channel tests (test/chan in the Go repository), translated to C
//! against the header (tests/c/chan), each run in its own process: its
//! output must be what Go prints for the original (tests/go/chan), and its
//! status 0.
//!
//! The programs check what they rely on and speak only on failure (as
//! Go's do), so any message, or any status but 0, fails the test with the
//! program's own words.

mod cprog;

use std::path::Path;

/// Compiles tests/c/chan/<name>.c, runs it with `args` and `env`, and
/// compares standard output then standard error with Go's expected output.
fn port(name: &str, args: &[&str], env: &[(&str, &str)]) {
    let src = format!("tests/c/chan/{name}.c");
    let exe = cprog::compile(&format!("chan-{name}"), &[&src], &["-D_GNU_SOURCE"]);
    let out = cprog::run(&exe, args, env);
    let expected_path = cprog::root().join(Path::new("tests/go/chan").join(format!("{name}.out")));
    let expected = std::fs::read(&expected_path)
        .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
    let mut got = out.stdout.clone();
    got.extend_from_slice(&out.stderr);
    assert!(
        out.status.success() && got == expected,
        "{name} {args:?} {env:?}: {} and\n{}\nwhere Go printed\n{}",
        out.status,
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&expected)
    );
}

/// Each program under the default worker count and on one worker.
fn both(name: &str, args: &[&str]) {
    port(name, args, &[]);
    port(name, args, &[("GOMAXPROCS", "1")]);
}

#[test]
fn fifo() {
    both("fifo", &[]);
}

#[test]
fn nonblock() {
    both("nonblock", &[]);
}

#[test]
fn select() {
    both("select", &[]);
}

/// Go issue 2075's queue order, forced: fails (a false deadlock) when a
/// select leaves the wrong queue of a channel it waited on.
#[test]
fn select6() {
    both("select6", &[]);
}

#[test]
fn select3() {
    both("select3", &[]);
}

/// GOMAXPROCS 2 is set by the program itself, as Go's sets it.
#[test]
fn doubleselect() {
    port("doubleselect", &[], &[]);
}

#[test]
fn sieve1() {
    both("sieve1", &[]);
}

#[test]
fn goroutines() {
    both("goroutines", &[]);
    // Ten times Go's default: the chain still builds and tears down.
    port("goroutines", &["100000"], &[]);
}
