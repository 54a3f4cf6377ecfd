//! Readies no park asked for, against every blocking operation of the C
//! ABI (tests/c/spurious_ready.c): each operation must complete as it
//! would without them. Each worker count in its own process; the program
//! checks itself and speaks only to say it is done, or what failed.
//!
//! The regression it guards: a runtime wait that did not loop on its own
//! condition, or a thread-local address kept across the park of a wait's
//! loop (src/fresh.rs), turned such readies into wrong results, early
//! returns or crashes.

mod cprog;

fn spurious(procs: &str) {
    let exe = cprog::compile(
        "spurious_ready",
        &["tests/c/spurious_ready.c"],
        &["-D_GNU_SOURCE"],
    );
    let out = cprog::run(&exe, &["2000"], &[("GOMAXPROCS", procs)]);
    let text = cprog::text(&out);
    assert!(
        out.status.success() && text.contains("spurious_ready ok: 2000 iterations"),
        "GOMAXPROCS={procs}: {}\n{text}",
        out.status
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
