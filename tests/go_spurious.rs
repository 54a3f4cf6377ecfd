//! Readies no park asked for, against every blocking operation of the C
//! ABI (tests/c/spurious_ready.c): each operation must complete as it
//! would without them. Each worker count in its own process; the program
//! checks itself and speaks only to say it is done, or what failed.
//!
//! The regression it guards: a runtime wait that did not loop on its own
//! condition, or a thread-local address kept across the park of a wait's
//! loop (src/fresh.rs), turned such readies into wrong results, early
//! returns, false stack overflows or goroutines never woken (a hang: the
//! readier keeps the process from looking deadlocked, so the runner
//! kills it after a minute).

mod cprog;

use std::process::Command;
use std::time::Duration;

fn spurious(procs: &str) {
    let exe = cprog::compile(
        "spurious_ready",
        &["tests/c/spurious_ready.c"],
        &["-D_GNU_SOURCE"],
    );
    let ran = cprog::run_with_deadline(
        Command::new(&exe).arg("5000").env("GOMAXPROCS", procs),
        Duration::from_secs(60),
    );
    let (status, text) = match ran {
        Ok(out) => (Some(out.status), cprog::text(&out)),
        Err(text) => (None, text),
    };
    let Some(status) = status else {
        panic!("GOMAXPROCS={procs}: not done after 60 s (killed): a goroutine never woken\n{text}");
    };
    assert!(
        status.success() && text.contains("spurious_ready ok: 5000 iterations"),
        "GOMAXPROCS={procs}: {status}\n{text}"
    );
}

#[test]
fn every_blocking_operation_tolerates_readies_on_1_worker() {
    spurious("1");
}

#[test]
fn every_blocking_operation_tolerates_readies_on_2_workers() {
    spurious("2");
}

#[test]
fn every_blocking_operation_tolerates_readies_on_8_workers() {
    spurious("8");
}
