//! fork() under load, seeded (tests/c/fork_stress.c; design.md invariant
//! 9): the parent's goroutines and plain threads contend on channels, a
//! mutex, wait groups, timers, the collector and the poller while the
//! program forks, from a goroutine, from one inside a system call, and
//! through a plain thread; each child does contended work of its own
//! (goroutines and a plain thread on a fresh channel and mutex, timers, a
//! collection, a pipe read through the poller) and checks its counts and
//! sums. A child that hangs, crashes or miscounts fails the run, and so
//! does a parent whose own counts are off or whose I/O goroutines never
//! hear of their peers' end.
//!
//! The seed is printed; `DEFERGC_FORK_STRESS_SEED=N` repeats a test run
//! (its runs use N, N+1, ...). Run one program by hand with
//! `GOMAXPROCS=2 DEFERGC_FORK_STRESS_SEED=N fork_stress FORKS`
//! (target/tmp/c-programs/fork_stress; the program's header comment
//! lists its other knobs).

mod cprog;
mod seeded;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs of the program, and forks in each: about 5 s a run when every
/// child is well (2 cores). Without a collector (`nogc`) the heap only
/// grows, and each fork copies more of it: fewer, shorter runs.
const RUNS: u64 = if cfg!(feature = "nogc") { 2 } else { 3 };
const FORKS: usize = if cfg!(feature = "nogc") { 100 } else { 400 };

/// Each run's options (`DEFERGC_FORK_STRESS_OPTS`, the program's bits: 1
/// the block, mutex and heap profiles, 2 the CPU profile, 4 the trace, 8
/// forks through a plain thread), so that every CI step covers each.
const OPTIONS: [u32; 3] = [1 | 8, 2 | 4, 15];
/// One run's limit: a hung child costs the program its own 10 s limit.
const LIMIT: Duration = Duration::from_secs(50);

#[test]
fn forked_children_of_a_loaded_program_work_and_the_parent_keeps_working() {
    let exe = cprog::compile(
        "fork_stress",
        &["tests/c/fork_stress.c"],
        &["-D_GNU_SOURCE"],
    );
    let seed = seeded::seed("DEFERGC_FORK_STRESS_SEED");
    println!("seed {seed} (DEFERGC_FORK_STRESS_SEED={seed} repeats it)");
    for i in 0..RUNS {
        let run = seed.wrapping_add(i).max(1);
        let started = Instant::now();
        let mut cmd = Command::new(&exe);
        cmd.arg(FORKS.to_string())
            .env("GOMAXPROCS", "2")
            .env("DEFERGC_FORK_STRESS_SEED", run.to_string())
            .env(
                "DEFERGC_FORK_STRESS_OPTS",
                OPTIONS[i as usize % OPTIONS.len()].to_string(),
            );
        let out = match cprog::run_with_deadline(&mut cmd, LIMIT) {
            Ok(out) => out,
            Err(text) => panic!("seed {run}: still running after {LIMIT:?} (a hang):\n{text}"),
        };
        let text = cprog::text(&out);
        assert!(
            !text.contains("fatal runtime error") && !text.contains("thread '"),
            "seed {run}: Rust's own abort text escaped ({}):\n{text}",
            out.status
        );
        if let Some(sig) = out.status.signal() {
            panic!("seed {run}: killed by signal {sig}:\n{text}");
        }
        assert!(
            out.status.success()
                && text.contains(&format!("fork_stress: 0 of {FORKS} children failed"))
                && String::from_utf8_lossy(&out.stdout)
                    .trim_end()
                    .ends_with("ok"),
            "seed {run}: expected every child to pass and \"ok\", got {}:\n{text}",
            out.status
        );
        println!(
            "seed {run}: {FORKS} forks, {:.1} s\n{}",
            started.elapsed().as_secs_f64(),
            text.lines()
                .filter(|l| l.starts_with("options") || l.starts_with("fork_stress:"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
