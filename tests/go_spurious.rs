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

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn spurious(procs: &str) {
    let exe = cprog::compile(
        "spurious_ready",
        &["tests/c/spurious_ready.c"],
        &["-D_GNU_SOURCE"],
    );
    let mut child = Command::new(&exe)
        .arg("5000")
        .env("GOMAXPROCS", procs)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let limit = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = format!("{}{}", out.join().unwrap(), err.join().unwrap());
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
