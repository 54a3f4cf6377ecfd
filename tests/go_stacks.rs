//! Goroutine stacks where they meet the collector, the signal stack, the
//! guard zone and fork (tests/c/stacks.c; design.md invariants 6 and 9).

mod cprog;

use std::process::Output;

fn stacks_c(args: &[&str], env: &[(&str, &str)]) -> Output {
    let exe = cprog::compile("stacks", &["tests/c/stacks.c"], &["-D_GNU_SOURCE"]);
    cprog::run(&exe, args, env)
}

fn succeeded(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        out.status,
        cprog::text(out)
    );
}

/// Goroutines fault and recover while another collects: a worker stopped
/// inside the fault handler (on its signal stack) is scanned where its
/// frames are, and objects kept only on the faulting goroutines' stacks
/// survive. Before the signal stack was known, the marker scanned from the
/// signal stack to the worker's stack base and died in GC_mark_from.
#[test]
fn collections_during_a_fault_storm_scan_the_right_stacks() {
    for run in 0..3 {
        let out = stacks_c(&["storm", "2"], &[("GOMAXPROCS", "2")]);
        succeeded(&format!("storm run {run}"), &out);
    }
}
