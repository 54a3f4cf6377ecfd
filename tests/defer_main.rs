//! `defer::main`: a Rust program with Go's process behaviour. Each case
//! runs in a child process (this test binary again, with the case in the
//! environment): status 0 when main returns; Go's report and status 2 for
//! an unrecovered Go panic, Rust panic or Goexit, with deferred calls run
//! first and no `thread 'main' panicked at` line.

use defergc::defer;
use std::process::{Command, Output};

const CASE: &str = "DEFERGC_TEST_MAIN_CASE";

/// In the child: runs `case` under defer::main and exits with its status.
fn child(case: &str) -> ! {
    let status = defer::main(|| match case {
        "returns" => println!("main returned"),
        "go-panic" => defer::call(|f| {
            f.defer(|| println!("deferred"));
            defer::panic("boom")
        }),
        "raised" => {
            // Dropped at the end of the statement: it goes on unwinding.
            let _ = defer::call_try(|f| -> Result<(), _> {
                f.defer(|| println!("deferred"));
                Err(defer::raise("boom"))
            });
            println!("not reached");
        }
        "rust-panic" => defer::call(|f| {
            f.defer(|| println!("deferred"));
            panic!("boom")
        }),
        "recovered" => {
            let got = defer::named(None, |f, out| {
                f.defer_with(move |d| out.set(d.recover().map(|v| v.to_string())));
                panic!("recover me")
            });
            println!("recovered {got:?}");
        }
        "goexit" => defer::call(|f| {
            f.defer(|| println!("deferred"));
            defer::goexit()
        }),
        other => unreachable!("{other}"),
    });
    std::process::exit(status)
}

fn run(case: &str) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "cases", "--nocapture", "--test-threads", "1"])
        .env(CASE, case)
        .output()
        .unwrap()
}

#[test]
fn cases() {
    if let Ok(case) = std::env::var(CASE) {
        child(&case);
    }
    let out = run("returns");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("main returned\n"));

    let out = run("recovered");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("recovered Some(\"recover me\")\n"));

    for (case, report) in [
        ("go-panic", "panic: boom\n"),
        ("raised", "panic: boom\n"),
        ("rust-panic", "panic: boom\n"),
    ] {
        let out = run(case);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("deferred\n"),
            "{case}"
        );
        assert!(stderr.starts_with(report), "{case}: {stderr}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("not reached"),
            "{case}"
        );
        assert!(stderr.contains("\n\ngoroutine "), "{case}: {stderr}");
        assert!(!stderr.contains("panicked at"), "{case}: {stderr}");
    }

    let out = run("goexit");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("deferred\n"));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "fatal error: no goroutines (main called runtime.Goexit) - deadlock!\n"
    );
}
