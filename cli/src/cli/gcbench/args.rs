//! `defergc gcbench`'s command line: the backend, the workload and their
//! settings, and the names the workload goes by.

/// The collector the workload runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The Boehm collector (vendored bdwgc), through `defergc::gc`.
    Bdwgc,
    /// The precise handle-based collector, through `defergc::precise`
    /// (needs the `precise` feature).
    Precise,
    /// Both, taking turns run by run in one process, and their ratio
    /// (needs the `precise` feature).
    Both,
}

impl Backend {
    pub(super) fn name(self) -> &'static str {
        match self {
            Backend::Bdwgc => "bdwgc",
            Backend::Precise => "precise",
            Backend::Both => "both",
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// Collector to run the workload on.
    #[arg(long, value_enum, default_value_t = Backend::Bdwgc)]
    pub(super) backend: Backend,
    /// Timed runs, one after another in this process, 1 to 1000.
    #[arg(long, default_value_t = 5, allow_negative_numbers = true,
          value_parser = crate::cli::limits::count32(1, 1000))]
    pub(super) runs: u32,
    /// Print only the JSON line.
    #[arg(long)]
    pub(super) json: bool,
    /// precise backend: collect when the heap has grown by this percentage
    /// of what the last collection found live (Go's GOGC; default 100, or
    /// GOGC from the environment). With `--go`, Go's program runs with it
    /// too. 1 to 1000000.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::limits::count32(1, 1_000_000))]
    pub(super) gc_percent: Option<u32>,
    /// precise backend: a soft memory limit in MiB (Go's GOMEMLIMIT): the
    /// heap's goal stays under it whatever `--gc-percent` allows, and an
    /// allocation that would grow the heap past it waits for cycles to free
    /// memory first. With `--go`, Go's program runs with it too. 1 to
    /// 16777216.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::limits::count(1, 1 << 24))]
    pub(super) memory_limit_mb: Option<u64>,
    /// The program to run.
    #[arg(long, value_enum, default_value_t = Workload::Gcbench)]
    pub(super) workload: Workload,
    /// live-heap workload: megabytes of live data (approximately), 1 to
    /// 65536 and what the machine's memory holds (about three times as
    /// much at the peak).
    #[arg(long, default_value_t = 100, allow_negative_numbers = true,
          value_parser = crate::cli::limits::count(1, 65536))]
    pub(super) live_mb: u64,
    /// binary-trees workload: depth of the long-lived tree, 4 to 26.
    #[arg(long, default_value_t = 21, allow_negative_numbers = true,
          value_parser = crate::cli::limits::count32(4, 26))]
    pub(super) depth: u32,
    /// Then run the same workload in Go (`benches/go/gcbench`, with `go
    /// run` from the repository root) for as many runs, and print its line
    /// and the ratio of the medians to Go's.
    #[arg(long)]
    pub(super) go: bool,
}

/// The program `gcbench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// GCBench (Ellis, Kovac, Boehm).
    Gcbench,
    /// A large live heap whose parts are replaced one at a time.
    LiveHeap,
    /// binary-trees (the Benchmarks Game).
    BinaryTrees,
    /// GCBench on 2 mutator threads at once.
    #[value(name = "gcbench-mt2")]
    GcbenchMt2,
    /// GCBench on 4 mutator threads at once.
    #[value(name = "gcbench-mt4")]
    GcbenchMt4,
}

/// The JSON `bench` name: the same as the Go versions' in `benches/go/`.
pub(super) fn bench_name(args: &Args) -> &'static str {
    match args.workload {
        Workload::Gcbench => "gcbench",
        Workload::GcbenchMt2 => "gcbench-mt2",
        Workload::GcbenchMt4 => "gcbench-mt4",
        Workload::BinaryTrees => "binary-trees",
        Workload::LiveHeap => "live-heap",
    }
}

/// Mutator threads of a workload.
pub(super) fn mutators(workload: Workload) -> usize {
    match workload {
        Workload::GcbenchMt2 => 2,
        Workload::GcbenchMt4 => 4,
        _ => 1,
    }
}
