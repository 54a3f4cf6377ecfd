//! Goroutine stacks where they meet the collector, the signal stack, the
//! guard zone and fork (tests/c/stacks.c; design.md invariants 6 and 9).

mod cprog;

use std::process::Output;

fn stacks_exe() -> std::path::PathBuf {
    cprog::compile("stacks", &["tests/c/stacks.c"], &["-D_GNU_SOURCE"])
}

fn stacks_c(args: &[&str], env: &[(&str, &str)]) -> Output {
    cprog::run(&stacks_exe(), args, env)
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

/// A goroutine recursing through 12 KiB frames that touch only their
/// lowest bytes (C without stack probes) is stopped by the guard zone:
/// reported as its stack overflow, status 2, at every depth the frames
/// start at, and the neighbouring goroutine's stack is never written. With
/// a one-page guard, 8 of these 12 runs ended with the neighbour's locals
/// overwritten and nothing reported.
#[test]
fn a_large_frame_cannot_jump_the_guard_into_the_neighbouring_stack() {
    let exe = cprog::compile(
        "stacks-noprobe",
        &["tests/c/stacks.c"],
        &["-D_GNU_SOURCE", "-fno-stack-clash-protection"],
    );
    for pad in (0..12).map(|k| k * 1024) {
        let out = cprog::run(
            &exe,
            &["bigframe", &pad.to_string()],
            &[("GOMAXPROCS", "1"), ("DEFERGC_STACK_SIZE", "65536")],
        );
        let text = cprog::text(&out);
        assert_eq!(out.status.code(), Some(2), "pad {pad}: {text}");
        assert!(
            text.starts_with("defergc: goroutine 3 stack overflow (64 KiB stack;"),
            "pad {pad}: {text}"
        );
        assert!(text.contains("fatal error: stack overflow\n"), "{text}");
        assert!(!text.contains("neighbour"), "pad {pad}: {text}");
    }
}

/// A goroutine forks 50 times while others churn channels and sleep; each
/// child allocates, starts a goroutine and hears from it, then exits or
/// execs. Half the forks are made inside a system call (as Go's ForkExec
/// makes them): there the child's exit from the call found no processor
/// (the other workers' processors never came back) and parked for good;
/// a child could also spin for ever on a global-queue slot a parent
/// thread was writing at the fork. The parent waits for each child with a
/// timeout.
#[test]
fn children_of_forks_among_busy_goroutines_start_goroutines_and_exit() {
    for run in 0..2 {
        let out = stacks_c(&["fork", "50"], &[("GOMAXPROCS", "2")]);
        succeeded(&format!("fork run {run}"), &out);
        assert!(
            cprog::text(&out).contains("fork: 0 of 50 children failed"),
            "{}",
            cprog::text(&out)
        );
    }
}

/// A goroutine forks 100 times while goroutines and plain threads contend
/// on a few mutexes; each child makes every bucket of the semaphore table
/// wait and release (256 fresh mutexes, each waited for by a goroutine).
/// A child that hangs (10 s) fails the run.
#[test]
fn children_of_forks_among_contended_mutexes_wait_on_every_semaphore_bucket() {
    let mut cmd = std::process::Command::new(stacks_exe());
    cmd.args(["forksema", "100"]).env("GOMAXPROCS", "2");
    let out = cprog::run_with_deadline(&mut cmd, std::time::Duration::from_secs(120))
        .unwrap_or_else(|text| panic!("forksema: still running after 120 s:\n{text}"));
    succeeded("forksema", &out);
    assert!(
        cprog::text(&out).contains("forksema: 0 of 100 children failed"),
        "{}",
        cprog::text(&out)
    );
}

/// Goroutines that each allocate a small object and park holding it,
/// with a large heap section made after a quarter of them started: every
/// object survives, and no goroutine stack lies in bdwgc's plausible heap
/// range. Stack regions the kernel placed among the heap sections used to
/// be in that range (the first one always was here; after a section too
/// large for the gaps, which went below the regions mapped so far, all of
/// them were), and bdwgc blacklisted the heap blocks of every goroutine's
/// pointers into its own stack until no new block was usable: "Too many
/// retries in GC_allocobj" (issue 34: 3 runs of 7 of a million goroutines
/// on the reporter's machine; here, with a 128 MiB section, 5 of 5 runs
/// of 300,000 and 3 of 3 of a million).
fn many_goroutines(n: usize, big_mib: usize, big_at: usize) {
    let out = stacks_c(
        &[
            "many",
            &n.to_string(),
            &big_mib.to_string(),
            &big_at.to_string(),
        ],
        &[],
    );
    let text = cprog::text(&out);
    succeeded(&format!("{n} goroutines"), &out);
    assert!(
        text.contains(&format!("many: {n} goroutines started")),
        "{text}"
    );
    let probed = n.div_ceil(1000);
    assert!(
        text.contains(&format!(
            "many: 0 of {probed} stacks probed in the plausible heap range"
        )),
        "{text}"
    );
}

#[test]
fn a_hundred_thousand_goroutines_each_holding_an_object() {
    many_goroutines(100_000, 128, 25_000);
}

/// Opt-in (`cargo test --test go_stacks -- --ignored`): the runs that
/// aborted, 300,000 goroutines (1.1 GB) and a million (4 GB, ten seconds).
#[test]
#[ignore = "soak (minutes, 4 GB): cargo test --release -- --ignored soak_"]
fn soak_a_million_goroutines_each_holding_an_object() {
    many_goroutines(300_000, 128, 250_000);
    for _ in 0..3 {
        many_goroutines(1_000_000, 128, 250_000);
    }
}
