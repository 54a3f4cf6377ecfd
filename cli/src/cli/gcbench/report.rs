//! What `gcbench` prints: the announcement of a workload, a backend's
//! runs summarised for people and as a JSON line, and the units they use.

use super::args::{bench_name, mutators, Args, Workload};
use super::heap::Counters;
use super::workload::{
    Run, ARRAY_SIZE, LONG_LIVED_TREE_DEPTH, MAX_TREE_DEPTH, MIN_TREE_DEPTH, STRETCH_TREE_DEPTH,
};
use crate::cli::report::Json;
use crate::cli::stats::median;
use std::time::Duration;

/// Prints what is about to run (human output only).
pub(super) fn announce(args: &Args, backend: &str) {
    if args.json {
        return;
    }
    match args.workload {
        Workload::LiveHeap => println!(
            "live heap of {} MB on {backend}: trees of depth 14 replaced one at a time",
            args.live_mb
        ),
        Workload::Gcbench | Workload::GcbenchMt2 | Workload::GcbenchMt4 => println!(
            "GCBench (Ellis, Kovac, Boehm) on {backend}, {} mutator(s): stretch tree \
             depth {STRETCH_TREE_DEPTH}, long-lived tree depth {LONG_LIVED_TREE_DEPTH}, \
             array of {ARRAY_SIZE} doubles, trees of depth \
             {MIN_TREE_DEPTH}..={MAX_TREE_DEPTH}",
            mutators(args.workload)
        ),
        Workload::BinaryTrees => println!(
            "binary-trees on {backend}: depth {}, trees of depth {MIN_TREE_DEPTH}..={} \
             built bottom-up and counted",
            args.depth, args.depth
        ),
    }
}

/// One backend's runs, summarised.
pub(super) struct Summary {
    pub(super) median_ms: f64,
    pub(super) min_ms: f64,
    pub(super) max_ms: f64,
    pub(super) cpu_ms: f64,
    pub(super) collections: f64,
    pub(super) peak_heap_bytes: usize,
    pub(super) counters: Counters,
}

impl Summary {
    pub(super) fn new(runs: &[Run], counters: Counters) -> Summary {
        let mut times: Vec<f64> = runs.iter().map(|r| ms(r.elapsed)).collect();
        let mut collections: Vec<f64> = runs.iter().map(|r| r.collections as f64).collect();
        let median_ms = median(&mut times);
        let mut cpu: Vec<f64> = runs.iter().map(|r| ms(r.cpu)).collect();
        Summary {
            median_ms,
            min_ms: times[0],
            max_ms: times[times.len() - 1],
            cpu_ms: median(&mut cpu),
            collections: median(&mut collections),
            peak_heap_bytes: runs.iter().map(|r| r.peak_heap_bytes).max().unwrap_or(0),
            counters,
        }
    }

    pub(super) fn print(&self, backend: &str) {
        println!(
            "{backend}: median {:.1} ms (min {:.1}, max {:.1}), processor {:.1} ms, \
             {} collections per run, peak heap {:.1} MiB",
            self.median_ms,
            self.min_ms,
            self.max_ms,
            self.cpu_ms,
            self.collections,
            mib(self.peak_heap_bytes)
        );
        print!(
            "{backend} pauses: max {:.1} us",
            us(self.counters.pause_max)
        );
        if let (Some(p99), Some(n)) = (self.counters.pause_p99, self.counters.pause_count) {
            print!(", p99 {:.1} us, {n} pauses", us(p99));
        }
        if let Some(wait) = self.counters.alloc_wait {
            print!("; allocations waited {:.1} ms in all", ms(wait));
        }
        if let Some((n, objects)) = self.counters.assists {
            print!(", {n} mark assists marked {objects} objects");
        }
        println!();
    }

    /// Adds this summary's fields to `json`, each key prefixed with
    /// `prefix`.
    pub(super) fn json(&self, json: Json, prefix: &str) -> Json {
        let key = |k: &str| format!("{prefix}{k}");
        let mut json = json
            .num(&key("median_ms"), self.median_ms)
            .num(&key("min_ms"), self.min_ms)
            .num(&key("max_ms"), self.max_ms)
            .num(&key("cpu_ms"), self.cpu_ms)
            .num(&key("collections"), self.collections)
            .num(&key("peak_heap_bytes"), self.peak_heap_bytes as f64)
            .num(&key("pause_max_us"), us(self.counters.pause_max));
        if let (Some(p99), Some(n)) = (self.counters.pause_p99, self.counters.pause_count) {
            json = json
                .num(&key("pause_p99_us"), us(p99))
                .num(&key("pause_count"), n as f64);
        }
        if let Some(wait) = self.counters.alloc_wait {
            json = json.num(&key("alloc_wait_ms"), ms(wait));
        }
        if let Some((n, objects)) = self.counters.assists {
            json = json
                .num(&key("assists"), n as f64)
                .num(&key("assist_objects"), objects as f64);
        }
        json
    }
}

/// The JSON line's first fields: the workload, the backend, the runs, and
/// the precise heap's settings the command gave.
pub(super) fn json_head(args: &Args, backend: &str) -> Json {
    let mut json = Json::new()
        .str("bench", bench_name(args))
        .str("backend", backend)
        .num("runs", f64::from(args.runs));
    if let Some(percent) = args.gc_percent {
        json = json.num("gc_percent", f64::from(percent));
    }
    if let Some(mb) = args.memory_limit_mb {
        json = json.num("memory_limit_mb", mb as f64);
    }
    json
}

pub(super) fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub(super) fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
