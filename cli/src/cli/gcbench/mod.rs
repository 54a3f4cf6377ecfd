//! `defergc gcbench`: the GCBench of Ellis, Kovac and Boehm on a collector
//! backend, timed over several runs, with a human summary and one JSON line.
//!
//! The workload (a stretch tree of depth 18, a long-lived tree of depth 16
//! and an array of 500,000 doubles that stay live throughout, then trees of
//! depth 4..=16 built top-down and bottom-up) is written once against the
//! [`Heap`] trait; each backend is one small implementation of it, chosen
//! with `--backend`: `bdwgc` (conservative, finds references on the native
//! stack) or `precise` (handles, with the workload's references rooted in
//! shadow-stack frames through the trait's scope hooks, and safepoint
//! polls where compiled code would put them: in loops and recursive
//! functions that neither allocate nor open a scope, such as counting a
//! tree's nodes). The long-lived data is checked after every run, so a
//! collector that frees live objects fails the benchmark instead of timing
//! it.
//!
//! `benches/c/gcbench.c` is the same program in C against `gc.h`, and
//! `benches/gcbench.rs` compares it with `defergc gcbench --runs 1 --json`.
//!
//! `--workload live-heap` runs a second program on the same trait: a large
//! live heap (`--live-mb`, 100 MB by default: trees hung off a spine) whose
//! trees are replaced one at a time, so that every collection marks the
//! whole live heap while the mutator keeps allocating: the case where a
//! stop-the-world collector pauses longest.
//!
//! `--workload binary-trees` is the Benchmarks Game's binary-trees
//! (`--depth`, 21 by default): a stretch tree one deeper, a long-lived
//! tree, then `2^(depth - d + 4)` trees of each depth `d` in `4..=depth`
//! step 2, built bottom-up and counted; every count is checked.
//! `--workload gcbench-mt2` and `gcbench-mt4` run GCBench on 2 and 4
//! mutator threads at once (each with its own long-lived data), timed
//! until the last one finishes. Their JSON lines carry the same `bench`
//! names as the Go versions in `benches/go/`.
//!
//! `--go` then runs the same workload in Go (`benches/go/gcbench/main.go`,
//! the same sizes and checks) for as many runs and prints its JSON line
//! (`"impl":"go"`, `median_ms`, `collections`, `pause_max_us`,
//! `peak_rss_bytes`).
//!
//! Each backend reports its runs' median wall time (`median_ms`) and the
//! median processor time of the whole process over a run (`cpu_ms`: user
//! and kernel time of every thread, a concurrent collector's included,
//! counted until its last cycle of the run has ended); `--backend both`
//! adds the ratios `ratio` (wall) and `cpu_ratio`.
//!
//! Both report the collector's pauses: the longest (`pause_max_us`), and
//! for the precise backend also the 99th percentile and the count of
//! mutator stops (`pause_p99_us`, `pause_count`). bdwgc's pause is a whole
//! stopped collection; the precise collector's are its handshakes. The
//! precise backend also reports the time its allocations waited for a
//! collection to keep the heap near its goal (`alloc_wait_ms`), and the
//! mark assists that marked instead (`assists`, `assist_objects`), in all
//! since the process started (see `src/precise/heap/pacer.rs`).
//!
//! This file runs the command: it checks the settings, runs the workload
//! on each backend `--backend` names, run by run, and then Go's program.
//! `args.rs` is the command line, `heap.rs` and `precise_heap.rs` the
//! backends, `workload.rs` the programs (on the [`Heap`] trait only), and
//! `report.rs` what is printed; none of them uses this file.

mod args;
mod heap;
#[cfg(feature = "precise")]
mod precise_heap;
mod report;
mod workload;

pub use args::Args;

use args::{bench_name, mutators, Backend, Workload};
use defergc::gc;
use heap::{Bdwgc, Heap};
use report::{announce, json_head, mib, ms, Summary};
use workload::{
    binary_trees_body, gcbench_body, gcbench_mt_body, live_heap_once, process_cpu, timed, Run,
};

pub fn run(args: &Args) -> i32 {
    if args.backend == Backend::Bdwgc {
        for (set, flag) in [
            (args.gc_percent.is_some(), "--gc-percent"),
            (args.memory_limit_mb.is_some(), "--memory-limit-mb"),
        ] {
            if set {
                eprintln!("defergc: gcbench: {flag} applies to the precise backend only");
                return 2;
            }
        }
    }
    if args.workload == Workload::LiveHeap {
        let need = (args.live_mb << 20).saturating_mul(3);
        if let Err(e) =
            super::limits::check_memory(&format!("gcbench --live-mb {}", args.live_mb), need)
        {
            eprintln!("{e}");
            return 2;
        }
    }
    if args.backend != Backend::Precise && gc::BACKEND != "bdwgc" {
        eprintln!(
            "defergc: gcbench: the bdwgc backend is not built into this binary \
             (it was built with the `nogc` feature, backend \"{}\"); \
             rebuild without `--features nogc`",
            gc::BACKEND
        );
        return 2;
    }
    let status = run_backends(args);
    if status != 0 || !args.go {
        return status;
    }
    run_go(args)
}

/// `--go`: the same workload in Go, its JSON line, and the ratio of the
/// medians (ours / Go's) printed by the human report.
fn run_go(args: &Args) -> i32 {
    let mut go_args = vec![
        "-workload".to_string(),
        bench_name(args).to_string(),
        "-runs".to_string(),
        args.runs.to_string(),
        "-json".to_string(),
    ];
    match args.workload {
        Workload::BinaryTrees => go_args.extend(["-depth".to_string(), args.depth.to_string()]),
        Workload::LiveHeap => go_args.extend(["-live-mb".to_string(), args.live_mb.to_string()]),
        _ => {}
    }
    // Go's collector runs with the settings the precise heap had.
    if let Some(percent) = args.gc_percent {
        go_args.extend(["-gc-percent".to_string(), percent.to_string()]);
    }
    if let Some(mb) = args.memory_limit_mb {
        go_args.extend(["-memory-limit-mb".to_string(), mb.to_string()]);
    }
    let go = || {
        super::report::print_go_program(
            "gcbench",
            "benches/go/gcbench/main.go",
            &go_args,
            args.json,
        )
    };
    // This thread waits for Go in native code: a precise cycle still under
    // way (or started by the pacer) does not wait for it.
    #[cfg(feature = "precise")]
    if defergc::precise::is_thread_registered() {
        return defergc::precise::native(go).unwrap_or(2);
    }
    go()
}

/// The workload on the backends `--backend` names.
fn run_backends(args: &Args) -> i32 {
    match args.backend {
        Backend::Bdwgc => bench(args, &mut Bdwgc::new()),
        #[cfg(feature = "precise")]
        Backend::Precise => bench(
            args,
            &mut precise_heap::Precise::new(args.gc_percent, args.memory_limit_mb),
        ),
        #[cfg(feature = "precise")]
        Backend::Both => compare(
            args,
            &mut Bdwgc::new(),
            &mut precise_heap::Precise::new(args.gc_percent, args.memory_limit_mb),
        ),
        #[cfg(not(feature = "precise"))]
        Backend::Precise | Backend::Both => {
            eprintln!(
                "defergc: gcbench: the precise backend is not built into this binary; \
                 rebuild with `--features precise`"
            );
            2
        }
    }
}

/// Runs the workload once on `heap` (run `n`), printing a line unless
/// `--json`; the message says why the run failed.
fn one_run<H: Heap>(args: &Args, heap: &mut H, backend: &str, n: u32) -> Result<Run, String> {
    let run = match args.workload {
        Workload::Gcbench => timed(heap, gcbench_body),
        Workload::GcbenchMt2 | Workload::GcbenchMt4 => {
            timed(heap, |h| gcbench_mt_body(h, mutators(args.workload)))
        }
        Workload::BinaryTrees => timed(heap, |h| binary_trees_body(h, args.depth)),
        Workload::LiveHeap => live_heap_once(heap, args.live_mb as usize, 3),
    }
    .map_err(|why| format!("{backend} run {n} failed: {why}"))?;
    let cpu = process_cpu();
    heap.settle();
    let run = Run {
        cpu: run.cpu + process_cpu().saturating_sub(cpu),
        ..run
    };
    if !args.json {
        println!(
            "{backend} run {n}/{}: {:9.1} ms (processor {:.1} ms), {:3} collections, heap {:.1} MiB",
            args.runs,
            ms(run.elapsed),
            ms(run.cpu),
            run.collections,
            mib(run.peak_heap_bytes)
        );
    }
    Ok(run)
}

fn bench<H: Heap>(args: &Args, heap: &mut H) -> i32 {
    let backend = args.backend.name();
    announce(args, backend);
    heap.reset_pauses();
    let mut runs = Vec::new();
    for n in 1..=args.runs {
        match one_run(args, heap, backend, n) {
            Ok(run) => runs.push(run),
            Err(why) => {
                eprintln!("defergc: gcbench: {why}");
                return 1;
            }
        }
    }
    let summary = Summary::new(&runs, heap.counters());
    if !args.json {
        summary.print(backend);
    }
    let json = json_head(args, backend);
    println!("{}", summary.json(json, ""));
    0
}

/// `--backend both`: the two collectors take turns, one run each, in this
/// process, so that both see the same machine conditions; reports both and
/// the ratio of the medians (precise / bdwgc).
#[cfg(feature = "precise")]
fn compare(args: &Args, bdwgc: &mut Bdwgc, precise: &mut precise_heap::Precise) -> i32 {
    announce(args, "bdwgc and precise, alternating");
    bdwgc.reset_pauses();
    precise.reset_pauses();
    let (mut b_runs, mut p_runs) = (Vec::new(), Vec::new());
    for n in 1..=args.runs {
        // The precise turn's last cycle ended before the bdwgc turn starts
        // (`one_run` settles it): it would take a core from bdwgc's timed
        // run. The bdwgc turn runs in the precise collector's native code
        // all the same, so that no precise cycle could ever wait for this
        // thread (a binary-trees turn lasts seconds).
        let pair = <precise_heap::Precise as Heap>::blocking(|| one_run(args, bdwgc, "bdwgc", n))
            .and_then(|b| Ok((b, one_run(args, precise, "precise", n)?)));
        match pair {
            Ok((b, p)) => {
                b_runs.push(b);
                p_runs.push(p);
            }
            Err(why) => {
                eprintln!("defergc: gcbench: {why}");
                return 1;
            }
        }
    }
    let b = Summary::new(&b_runs, bdwgc.counters());
    let p = Summary::new(&p_runs, precise.counters());
    let ratio = p.median_ms / b.median_ms;
    let cpu_ratio = p.cpu_ms / b.cpu_ms;
    if !args.json {
        b.print("bdwgc");
        p.print("precise");
        println!("precise / bdwgc (medians): {ratio:.3}, processor time {cpu_ratio:.3}");
    }
    let json = json_head(args, "both");
    let json = p
        .json(b.json(json, "bdwgc_"), "precise_")
        .num("ratio", ratio)
        .num("cpu_ratio", cpu_ratio);
    println!("{json}");
    0
}
