//! GCBench in Rust (`defergc gcbench`) against the same program in C
//! (`benches/c/gcbench.c`), both on the bdwgc build this crate ships.
//!
//! The C program is compiled like the upstream bdwgc tests in
//! `tests/bdwgc_upstream.rs`: `$CC` (or `cc`), `-O2`,
//! `gc::build::c_flags()`, then `gc::build::LINK_ARGS`. Every run is a
//! fresh process, C and Rust alternating, so that neither inherits a warm
//! heap and drift on a shared machine hits both.
//!
//! With the `precise` feature, `defergc gcbench --backend precise` joins
//! the alternation and its ratio to the Rust bdwgc run is printed, with
//! its mutator pauses (the longest, the largest 99th percentile and the
//! median count over the runs) next to bdwgc's longest stop.
//!
//! `GCBENCH_RUNS` sets the number of runs of each (default 7). Skipped (exit
//! 0) under `nogc` and when the `defergc` binary is not built.

mod common;

use common::{field, median, run};
use defergc::gc;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_RUNS: usize = 7;

fn main() {
    if gc::BACKEND != "bdwgc" {
        println!(
            "gcbench: skipped, bdwgc is not built (backend \"{}\")",
            gc::BACKEND
        );
        return;
    }
    let Some(defergc) = option_env!("CARGO_BIN_EXE_defergc") else {
        println!("gcbench: skipped, the defergc binary is not built (feature `cli`)");
        return;
    };
    let runs = common::runs_from_env("GCBENCH_RUNS", DEFAULT_RUNS);

    let c_exe = compile_c();
    let config = gc::Config::DEFAULT;
    let mut c_cmd = Command::new(&c_exe);
    c_cmd
        .arg(config.initial_heap_bytes.to_string())
        .arg(config.free_space_divisor.to_string());
    let mut rust_cmd = Command::new(defergc);
    rust_cmd.args(["gcbench", "--backend", "bdwgc", "--runs", "1", "--json"]);

    // With the precise feature, the precise backend runs in the same
    // alternation, so that its ratio to bdwgc is measured in one session.
    let mut precise_cmd = cfg!(feature = "precise").then(|| {
        let mut cmd = Command::new(defergc);
        cmd.args(["gcbench", "--backend", "precise", "--runs", "1", "--json"]);
        cmd
    });

    let (mut c, mut rust, mut precise) =
        (Samples::default(), Samples::default(), Samples::default());
    for n in 1..=runs {
        let c_line = run(&mut c_cmd);
        c.push(&c_line, "elapsed_ms");
        let rust_line = run(&mut rust_cmd);
        rust.push(&rust_line, "median_ms");
        print!(
            "run {n}/{runs}: C {:8.1} ms ({} collections)   Rust {:8.1} ms ({} collections)",
            c.ms[n - 1],
            c.collections[n - 1],
            rust.ms[n - 1],
            rust.collections[n - 1]
        );
        if let Some(cmd) = precise_cmd.as_mut() {
            let line = run(cmd);
            precise.push(&line, "median_ms");
            precise.pauses(&line);
            print!(
                "   precise {:8.1} ms ({} collections)",
                precise.ms[n - 1],
                precise.collections[n - 1]
            );
        }
        println!();
    }

    let (c_ms, rust_ms) = (median(&mut c.ms), median(&mut rust.ms));
    let (c_gcs, rust_gcs) = (median(&mut c.collections), median(&mut rust.collections));
    println!(
        "C    median {c_ms:8.1} ms, {c_gcs} collections, peak heap {} bytes",
        c.peak
    );
    println!(
        "Rust median {rust_ms:8.1} ms, {rust_gcs} collections, peak heap {} bytes",
        rust.peak
    );
    println!("Rust/C {:.3}", rust_ms / c_ms);
    if !precise.ms.is_empty() {
        let (precise_ms, precise_gcs) = (median(&mut precise.ms), median(&mut precise.collections));
        println!(
            "precise median {precise_ms:8.1} ms, {precise_gcs} collections, peak heap {} bytes",
            precise.peak
        );
        println!("precise/Rust-bdwgc {:.3}", precise_ms / rust_ms);
        println!(
            "pauses: precise max {:.1} us, p99 {:.1} us, {} per run; bdwgc (Rust) max {:.1} us",
            precise.pause_max_us,
            precise.pause_p99_us,
            median(&mut precise.pause_counts),
            rust.pause_max_us
        );
    }
}

/// Times, collection counts and the largest heap seen over the runs of one
/// program.
#[derive(Default)]
struct Samples {
    ms: Vec<f64>,
    collections: Vec<f64>,
    peak: u64,
    /// Longest pause and largest 99th percentile over the runs, and each
    /// run's pause count (where the program reports them).
    pause_max_us: f64,
    pause_p99_us: f64,
    pause_counts: Vec<f64>,
}

impl Samples {
    fn pauses(&mut self, line: &str) {
        self.pause_p99_us = self.pause_p99_us.max(field(line, "pause_p99_us"));
        self.pause_counts.push(field(line, "pause_count"));
    }

    fn push(&mut self, line: &str, ms_key: &str) {
        if line.contains("\"pause_max_us\"") {
            self.pause_max_us = self.pause_max_us.max(field(line, "pause_max_us"));
        }
        self.ms.push(field(line, ms_key));
        self.collections.push(field(line, "collections"));
        self.peak = self.peak.max(field(line, "peak_heap_bytes") as u64);
    }
}

fn compile_c() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("benches/c/gcbench.c");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gcbench");
    std::fs::create_dir_all(&out_dir).unwrap();
    let exe = out_dir.join("gcbench");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut cmd = Command::new(&cc);
    cmd.arg("-O2").arg("-w").args(gc::build::c_flags());
    cmd.arg(&src).arg("-o").arg(&exe).args(gc::build::LINK_ARGS);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "compiling gcbench.c failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}
