//! `defergc bench NAME`: the goroutine, channel and panic benchmarks, each
//! the same work as the Go program of the same name in benches/go/gobench
//! (which `--go` runs in the same invocation, for a same-run baseline).
//!
//! One benchmark per process (the scheduler is configured once per
//! process: `yield-pingpong` wants one processor); `all` runs each in a
//! process of its own. Every run's figure is printed, then the median; with
//! `--json`, one line per implementation:
//! `{"bench":..,"impl":"defergc","unit":..,"runs":[..],"median":..}`.

use super::netbench;
use super::report::{self, Json};
use super::stats::median;
use clap::ValueEnum;
use defergc::go::{self, Chan, Select, WaitGroup};
use defergc::{defer, gc};
use std::hint::black_box;
use std::io::IsTerminal;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

extern "C" {
    /// Starts `n` goroutines of compiled code (cli/c/go_bench.c) that each
    /// defer wg.Done and a recover, panic with a fresh object and recover;
    /// waits for them; returns how many recovered the wrong value.
    fn defergc_bench_spawn_panic(n: u64) -> u64;
    /// `n` selects of compiled code over four ready channels; `counts[k]`
    /// gets how often case k won; returns how many received nothing.
    fn defergc_bench_select4(n: u64, counts: *mut u64) -> u64;
    /// `n` panics of compiled code, each recovered by a deferred call into
    /// a named result; returns how many came back wrong.
    fn defergc_bench_panic_recover(n: u64) -> u64;
    /// Loads `*flag` until it is set, with no call in the loop; returns
    /// how many loads it made.
    fn bench_spin_until(flag: *const u32) -> u64;
    /// `n` getpid system calls, each inside enter_syscall / exit_syscall
    /// when `through` is 1; returns the sum of the pids.
    fn bench_getpid_calls(n: u64, through: i32) -> u64;
}

/// The benchmarks (their command-line names are Go's: `id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Name {
    /// 100,000 goroutines of compiled code: defer wg.Done, defer recover,
    /// panic with a fresh heap object, recover (ms).
    SpawnPanic,
    /// The same through the Rust API, panicking without unwinding
    /// (`call_try`, `raise`) (ms).
    SpawnPanicRust,
    /// 1,000,000 goroutines parked at once, then released (s, peak RSS).
    Million,
    /// Cold (a process a run, no warm-up): 1,000,000 goroutines that each
    /// allocate a 16-byte GC object and park on one channel, a forced
    /// collection with all of them parked, then released; each checks its
    /// object (s in all; spawn+park s, collection ms, peak RSS).
    MillionHeap,
    /// Two goroutines alternating with gosched on one processor (ns per
    /// switch).
    YieldPingpong,
    /// 1,000,000 defers capturing a fresh GC object, inside one goroutine
    /// and on a plain thread (ms each).
    DeferStressGoroutine,
    /// An unbuffered channel round trip between two goroutines (ns).
    ChanPingpong,
    /// A buffered (128) channel, 1 producer and 1 consumer (ns a message).
    #[value(name = "chan-buffered-1x1")]
    ChanBuffered1x1,
    /// A buffered (128) channel, 4 producers and 4 consumers (ns a message).
    #[value(name = "chan-buffered-4x4")]
    ChanBuffered4x4,
    /// The prime sieve of Go's test/chan/sieve1.go, first 10,000 primes,
    /// its chain ended after each run (ms).
    Sieve,
    /// Compiled code's select over 4 ready channels, through the C ABI
    /// (ns a select).
    #[value(name = "select4")]
    Select4,
    /// The same through the Rust API (ns a select).
    #[value(name = "select4-rust")]
    Select4Rust,
    /// 100,000 goroutines on one Mutex, 10 lock/unlock each (ms).
    #[value(name = "mutex-100k")]
    Mutex100k,
    /// One panic and deferred recover, compiled code through the C ABI (ns
    /// a cycle).
    #[value(name = "panic-recover")]
    PanicRecover,
    /// The same through the Rust API (ns a cycle).
    #[value(name = "panic-recover-rust")]
    PanicRecoverRust,
    /// The same through the Rust API's panic without unwinding
    /// (`named_try`, `raise`) (ns a cycle).
    #[value(name = "panic-recover-rust-try")]
    PanicRecoverRustTry,
    /// 1,000,000 objects with finalizers, dropped; collections until
    /// their finalizers ran (ms).
    #[value(name = "finalizers-1m")]
    Finalizers1m,
    /// 100,000 goroutines each sleeping 1 ms, ten times (ms).
    Timers,
    /// A goroutine sleeps 100 µs, 2,000 times, while another is blocked
    /// reading a loopback connection (every idle worker then waits in the
    /// network poll): how long a sleep takes (µs: the median, the 90th
    /// percentile beside it).
    #[value(name = "sleep-beside-io")]
    SleepBesideIo,
    /// A tree of 1,000,000 goroutines, ten children each, every leaf
    /// sending its number up a fresh channel of its parent's (ms).
    Skynet,
    /// 1,000,000 goroutines in rounds of 10,000, each round one WaitGroup
    /// that every goroutine of it marks done (ms).
    #[value(name = "wg-fanout")]
    WgFanout,
    /// A million getpid calls of compiled code, each inside
    /// enter_syscall / exit_syscall (ns a call; the bare call and the
    /// ratio beside it).
    Syscall,
    /// One processor: a goroutine blocks 2 ms in a system call while
    /// another is ready to run; how long that one waits for the processor
    /// (µs: the median of 50, the largest beside it).
    Retake,
    /// One processor: a goroutine spins in compiled code without calls
    /// while another sleeps 1 ms at a time for 1 s; how late its wake-ups
    /// are (ms: the largest, and the 99th percentile beside it).
    Preempt,
    /// A TCP echo server, `--conns` connections ping-ponging 64 bytes
    /// from a client process of ours (req/s, latency, RSS per idle
    /// connection; not in `--all`).
    Echo,
    /// A minimal keep-alive HTTP/1.1 server under `wrk` (req/s, latency,
    /// RSS per idle connection; not in `--all`).
    Http,
}

impl Name {
    pub fn id(self) -> &'static str {
        match self {
            Name::SpawnPanic => "spawn-panic",
            Name::SpawnPanicRust => "spawn-panic-rust",
            Name::Million => "million",
            Name::MillionHeap => "million-heap",
            Name::YieldPingpong => "yield-pingpong",
            Name::DeferStressGoroutine => "defer-stress-goroutine",
            Name::ChanPingpong => "chan-pingpong",
            Name::ChanBuffered1x1 => "chan-buffered-1x1",
            Name::ChanBuffered4x4 => "chan-buffered-4x4",
            Name::Sieve => "sieve",
            Name::Select4 => "select4",
            Name::Select4Rust => "select4-rust",
            Name::Mutex100k => "mutex-100k",
            Name::PanicRecover => "panic-recover",
            Name::PanicRecoverRust => "panic-recover-rust",
            Name::PanicRecoverRustTry => "panic-recover-rust-try",
            Name::Finalizers1m => "finalizers-1m",
            Name::Timers => "timers",
            Name::SleepBesideIo => "sleep-beside-io",
            Name::Skynet => "skynet",
            Name::WgFanout => "wg-fanout",
            Name::Syscall => "syscall",
            Name::Retake => "retake",
            Name::Preempt => "preempt",
            Name::Echo => "echo",
            Name::Http => "http",
        }
    }

    /// The name of Go's program for this benchmark (the Rust-API variants
    /// compare with the same Go program as the compiled-code ones).
    pub fn go_id(self) -> &'static str {
        self.id().trim_end_matches("-try").trim_end_matches("-rust")
    }

    fn unit(self) -> &'static str {
        match self {
            Name::SpawnPanic
            | Name::SpawnPanicRust
            | Name::DeferStressGoroutine
            | Name::Sieve
            | Name::Mutex100k
            | Name::Finalizers1m
            | Name::Timers
            | Name::Skynet
            | Name::WgFanout
            | Name::Preempt => "ms",
            Name::Million | Name::MillionHeap => "s",
            Name::Retake | Name::SleepBesideIo => "us",
            Name::Echo | Name::Http => "req/s",
            _ => "ns/op",
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// The benchmark (or `all`).
    pub name: Option<Name>,
    /// Run every benchmark, each in its own process.
    #[arg(long, conflicts_with = "name")]
    pub all: bool,
    /// Timed runs (after one warm-up run), 1 to 1000.
    #[arg(long, default_value_t = 9, allow_negative_numbers = true,
          value_parser = super::limits::count32(1, 1000))]
    pub runs: u32,
    /// Print one JSON line per implementation instead of the human report.
    #[arg(long)]
    pub json: bool,
    /// Also run the Go program of the same name (`go run
    /// benches/go/gobench/main.go`, from the repository root; needs Go).
    #[arg(long)]
    pub go: bool,
    /// Connections of `echo` and `http` (each needs an open file here and
    /// one in the server; the soft limit is raised to the hard one).
    #[arg(long, default_value_t = 100,
          value_parser = super::limits::count(1, 1_000_000))]
    pub conns: u64,
    /// Seconds of load a run of `echo` and `http`.
    #[arg(long, default_value_t = 5,
          value_parser = super::limits::count32(1, 3600))]
    pub secs: u32,
    /// Be the `echo` or `http` server of ours on this address (what the
    /// benchmark starts in a child process).
    #[arg(long, hide = true, value_name = "ADDR")]
    pub serve: Option<String>,
    /// Be one run of a cold benchmark (what the benchmark starts in a
    /// child process a run): print its JSON line.
    #[arg(long, hide = true)]
    pub cold_run: bool,
    /// Take a CPU profile of this process's runs (100 Hz), written to
    /// FILE (with --all: FILE.<benchmark>): `go test -cpuprofile`.
    #[arg(long, value_name = "FILE")]
    pub cpu: Option<std::path::PathBuf>,
}

pub fn run(args: &Args) -> i32 {
    if args.all {
        return run_all(args);
    }
    let Some(cpu) = &args.cpu else {
        return run_one(args);
    };
    if let Err(e) = defergc::go::pprof::start_cpu_profile_to(cpu) {
        eprintln!("{e}");
        return 2;
    }
    let status = run_one(args);
    if let Err(e) = defergc::go::pprof::stop_cpu_profile() {
        eprintln!("{e}");
        return 2;
    }
    status
}

fn run_one(args: &Args) -> i32 {
    let Some(name) = args.name else {
        eprintln!("defergc: bench: name a benchmark or give --all (see defergc bench --help)");
        return 2;
    };
    if let Some(kind) = net_kind(name) {
        if let Some(addr) = &args.serve {
            return netbench::serve(kind, addr);
        }
        let params = netbench::Params {
            conns: args.conns as usize,
            secs: args.secs,
            runs: args.runs,
            json: args.json,
            go: args.go,
        };
        return netbench::run(kind, &params);
    }
    if name == Name::MillionHeap {
        return if args.cold_run {
            million_heap_run()
        } else {
            run_cold(name, args)
        };
    }
    if name == Name::Preempt && !go::async_preemption() {
        eprintln!(
            "defergc: bench preempt: asynchronous preemption is off here (GODEBUG=asyncpreemptoff=1, or not x86-64 Linux): the spinner would keep the only processor for good"
        );
        return 2;
    }
    if matches!(name, Name::YieldPingpong | Name::Preempt | Name::Retake) {
        // Go's figure is for GOMAXPROCS=1: the two goroutines share a
        // processor (every gosched is a switch; the spinner holds the
        // only processor until it is preempted; the processor of a
        // goroutine in a system call must be taken back for the other).
        let _ = go::init_with(go::Config {
            max_procs: Some(1),
            stack_size: None,
        });
    }
    // Go's program, built once, runs after each of ours (a process a run,
    // with its own warm-up), so that both columns see the same machine.
    let go_exe = match go_program(args) {
        Ok(exe) => exe,
        Err(status) => return status,
    };
    let mut go_lines = Vec::new();
    let load_before = report::load_average();
    let base_rss = report::rss_bytes();
    let mut runs = Vec::new();
    let mut extra = Vec::new();
    // A bar on a terminal: the long ones (a million goroutines, the sieve,
    // Go's side) take seconds a run.
    let bar = (!args.json && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(u64::from(args.runs) + 1);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {msg} [{bar:30}] {pos}/{len} {elapsed}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_message(format!("{} (the first run warms up)", name.id()));
        bar
    });
    for i in 0..=args.runs {
        let (value, more) = once(name);
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        if i > 0 {
            runs.push(value);
            extra.push(more);
            if !args.json {
                let line = format!(
                    "{} run {i}/{}: {value:.3} {}",
                    name.id(),
                    args.runs,
                    name.unit()
                );
                match &bar {
                    Some(bar) => bar.suspend(|| println!("{line}")),
                    None => println!("{line}"),
                }
            }
            if let Some(exe) = &go_exe {
                let go_args = [
                    "-bench".to_string(),
                    name.go_id().to_string(),
                    "-runs".to_string(),
                    "1".to_string(),
                    "-json".to_string(),
                ];
                match report::run_go_binary("bench", exe, &go_args) {
                    Ok(lines) if !lines.is_empty() => go_lines.push(lines[0].clone()),
                    Ok(_) => {
                        eprintln!("defergc: bench --go: the Go program printed no result");
                        return 2;
                    }
                    Err(why) => {
                        eprintln!("{why}");
                        return 2;
                    }
                }
            }
        }
    }
    let load_after = report::load_average();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let median = median(&mut runs.clone());
    let line = Json::new()
        .str("bench", name.id())
        .str("impl", "defergc")
        .str("unit", name.unit())
        .nums("runs", &runs)
        .num("median", median)
        .num("peak_rss_bytes", report::peak_rss_bytes() as f64)
        .num("gomaxprocs", go::gomaxprocs() as f64)
        .str("load_before", &load_before)
        .str("load_after", &load_after);
    // What a parked goroutine costs: the peak over what the process had
    // before the first (warm-up) run, per goroutine.
    let per_goroutine = report::peak_rss_bytes().saturating_sub(base_rss) as f64 / MILLION as f64;
    let line = match name {
        Name::Million => line.num("bytes_per_goroutine", per_goroutine),
        Name::DeferStressGoroutine => line.num("thread_ms_median", median_of(&extra)),
        Name::Syscall => line
            .num("bare_ns", median_of(&extra))
            .num("ratio", median / median_of(&extra)),
        Name::Preempt => line.num("p99_ms", median_of(&extra)),
        Name::Retake => line.num("max_us", median_of(&extra)),
        Name::SleepBesideIo => line.num("p90_us", median_of(&extra)),
        _ => line,
    };
    if args.json {
        println!("{line}");
    } else {
        println!(
            "{}: median {median:.3} {} of {} runs",
            name.id(),
            name.unit(),
            args.runs
        );
        if name == Name::DeferStressGoroutine {
            println!(
                "  the same on a plain thread: median {:.3} ms",
                median_of(&extra)
            );
        }
        if name == Name::Syscall {
            println!(
                "  the bare call: median {:.3} ns; through enter/exit: {:.2}x",
                median_of(&extra),
                median / median_of(&extra)
            );
        }
        if name == Name::Retake {
            println!("  the longest wait: median {:.3} us", median_of(&extra));
        }
        if name == Name::SleepBesideIo {
            println!("  90th percentile: median {:.3} us", median_of(&extra));
        }
        if name == Name::Preempt {
            println!(
                "  99th percentile: median {:.3} ms (the figure is the largest delay)",
                median_of(&extra)
            );
        }
        if name == Name::Million {
            println!(
                "  peak RSS {} MiB, {per_goroutine:.0} bytes per parked goroutine",
                report::peak_rss_bytes() >> 20
            );
        }
    }
    if args.go {
        let go = merge_go_runs(name, &go_lines, &load_before, &load_after);
        if args.json {
            println!("{go}");
        } else {
            let go = go.to_string();
            let go_median = report::json_number(&go, "median").unwrap_or(f64::NAN);
            let go_rss = report::json_number(&go, "peak_rss_bytes").unwrap_or(0.0) as u64;
            print!(
                "{}",
                report::comparison_table(
                    name.id(),
                    name.unit(),
                    args.runs,
                    (median, report::peak_rss_bytes() as u64),
                    (go_median, go_rss)
                )
            );
            println!("  runs alternated; load average {load_before} before, {load_after} after");
        }
    }
    0
}

/// Go's program of the benchmarks.
const GO_PROGRAM: &str = "benches/go/gobench/main.go";

/// With `--go`, Go's program built (once: it runs after each run of ours);
/// the exit status if it cannot be.
fn go_program(args: &Args) -> Result<Option<report::GoBinary>, i32> {
    if !args.go {
        return Ok(None);
    }
    report::build_go_program("bench", GO_PROGRAM)
        .map(Some)
        .map_err(|why| {
            eprintln!("{why}");
            2
        })
}

/// One JSON line for Go's side from its single-run lines: every run, the
/// median, the highest peak RSS, and the median of each extra figure.
fn merge_go_runs(name: Name, lines: &[String], load_before: &str, load_after: &str) -> Json {
    merge_runs(
        name.go_id(),
        "go",
        name.unit(),
        lines,
        load_before,
        load_after,
    )
}

/// One JSON line from single-run lines of one implementation (see
/// [`merge_go_runs`]).
fn merge_runs(
    bench: &str,
    which: &str,
    unit: &str,
    lines: &[String],
    load_before: &str,
    load_after: &str,
) -> Json {
    let all = |key: &str| -> Vec<f64> {
        lines
            .iter()
            .filter_map(|l| report::json_number(l, key))
            .collect()
    };
    let values = all("median");
    let peak = all("peak_rss_bytes").into_iter().fold(0.0, f64::max);
    let first = lines.first().map(String::as_str).unwrap_or("");
    let mut line = Json::new().str("bench", bench).str("impl", which);
    if let Some(version) = report::json_string(first, "go_version") {
        line = line.str("go_version", &version);
    }
    let mut line = line
        .str("unit", unit)
        .nums("runs", &values)
        .num(
            "median",
            if values.is_empty() {
                f64::NAN
            } else {
                median_of(&values)
            },
        )
        .num("peak_rss_bytes", peak)
        .num(
            "gomaxprocs",
            report::json_number(first, "gomaxprocs").unwrap_or(0.0),
        );
    for key in [
        "bytes_per_goroutine",
        "spawn_park_s",
        "gc_ms",
        "bare_ns",
        "ratio",
        "p99_ms",
        "max_us",
    ] {
        let v = all(key);
        if !v.is_empty() {
            line = line.num(key, median_of(&v));
        }
    }
    line.str("load_before", load_before)
        .str("load_after", load_after)
}

/// Each benchmark in a process of its own.
fn run_all(args: &Args) -> i32 {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("defergc: bench --all: cannot find this program: {e}");
            return 2;
        }
    };
    let mut status = 0;
    for name in Name::value_variants() {
        if net_kind(*name).is_some() {
            continue;
        }
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["bench", name.id(), "--runs", &args.runs.to_string()]);
        if args.json {
            cmd.arg("--json");
        }
        if args.go {
            cmd.arg("--go");
        }
        if let Some(cpu) = &args.cpu {
            let mut each = cpu.clone().into_os_string();
            each.push(format!(".{}", name.id()));
            cmd.arg("--cpu").arg(each);
        }
        match cmd.status() {
            Ok(s) if s.success() => {}
            Ok(s) => {
                eprintln!("defergc: bench {}: {s}", name.id());
                status = 2;
            }
            Err(e) => {
                eprintln!("defergc: bench {}: {e}", name.id());
                status = 2;
            }
        }
    }
    status
}

/// The network benchmarks, which run servers in processes of their own.
fn net_kind(name: Name) -> Option<netbench::Kind> {
    match name {
        Name::Echo => Some(netbench::Kind::Echo),
        Name::Http => Some(netbench::Kind::Http),
        _ => None,
    }
}

fn median_of(v: &[f64]) -> f64 {
    median(&mut v.to_vec())
}

/// Runs one measurement in a main goroutine; returns its figure and an
/// extra figure some benchmarks report.
fn once(name: Name) -> (f64, f64) {
    let result = Arc::new(std::sync::Mutex::new((0.0, 0.0)));
    let out = result.clone();
    go::run(move || {
        let r = measure(name);
        *out.lock().unwrap() = r;
    });
    let r = *result.lock().unwrap();
    r
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn ns_per(t: Instant, n: u64) -> f64 {
    t.elapsed().as_nanos() as f64 / n as f64
}

fn measure(name: Name) -> (f64, f64) {
    match name {
        Name::SpawnPanic => {
            let t = Instant::now();
            // SAFETY: a function of cli/c/go_bench.c, run in a goroutine.
            let bad = unsafe { defergc_bench_spawn_panic(100_000) };
            assert_eq!(bad, 0, "goroutines recovered the wrong value");
            (ms(t), 0.0)
        }
        Name::SpawnPanicRust => (spawn_panic_rust(), 0.0),
        Name::Million => million(),
        Name::YieldPingpong => (yield_pingpong(), 0.0),
        Name::DeferStressGoroutine => defer_stress(),
        Name::ChanPingpong => (chan_pingpong(), 0.0),
        Name::ChanBuffered1x1 => (chan_buffered(1), 0.0),
        Name::ChanBuffered4x4 => (chan_buffered(4), 0.0),
        Name::Sieve => (sieve(), 0.0),
        Name::Select4 => {
            const N: u64 = 1_000_000;
            let mut counts = [0u64; 4];
            let t = Instant::now();
            // SAFETY: a function of cli/c/go_bench.c; counts has 4 entries.
            let bad = unsafe { defergc_bench_select4(N, counts.as_mut_ptr()) };
            let elapsed = ns_per(t, N);
            assert_eq!(bad, 0, "selects that received nothing");
            check_fair(&counts, N);
            (elapsed, 0.0)
        }
        Name::Select4Rust => (select4_rust(), 0.0),
        Name::Mutex100k => (mutex_100k(), 0.0),
        Name::Timers => (timers(), 0.0),
        Name::SleepBesideIo => sleep_beside_io(),
        Name::Skynet => (skynet(), 0.0),
        Name::WgFanout => (wg_fanout(), 0.0),
        Name::Syscall => syscall_calls(),
        Name::Retake => retake_waits(),
        Name::Preempt => preempt_delays(),
        Name::PanicRecover => {
            const N: u64 = 200_000;
            let t = Instant::now();
            // SAFETY: a function of cli/c/go_bench.c.
            let bad = unsafe { defergc_bench_panic_recover(N) };
            let elapsed = ns_per(t, N);
            assert_eq!(bad, 0, "panics recovered with the wrong value");
            (elapsed, 0.0)
        }
        Name::PanicRecoverRust => (panic_recover_rust(), 0.0),
        Name::PanicRecoverRustTry => (panic_recover_rust_try(), 0.0),
        Name::Finalizers1m => (finalizers_1m(), 0.0),
        Name::Echo | Name::Http => unreachable!("run by netbench, in processes of their own"),
        Name::MillionHeap => unreachable!("cold: run by run_cold, a process a run"),
    }
}

/// `syscall`: ns a getpid through enter/exit, and bare.
fn syscall_calls() -> (f64, f64) {
    // A million calls each way, in rounds that alternate the two (and
    // which of them goes first), so that both see the same machine.
    const ROUNDS: u64 = 20;
    const N: u64 = 50_000;
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u64;
    let (mut through, mut bare) = (Duration::ZERO, Duration::ZERO);
    let calls = |via: i32| {
        let t = Instant::now();
        // SAFETY: a function of cli/c/go_bench.c, run in a goroutine.
        let sum = unsafe { bench_getpid_calls(N, via) };
        assert_eq!(sum, N * pid, "getpid (through enter/exit: {via})");
        t.elapsed()
    };
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            through += calls(1);
            bare += calls(0);
        } else {
            bare += calls(0);
            through += calls(1);
        }
    }
    let per = |d: Duration| d.as_secs_f64() * 1e9 / (ROUNDS * N) as f64;
    (per(through), per(bare))
}

/// `retake`: how long (µs) a ready goroutine waits for the only processor
/// while another blocks 2 ms in a system call, from just before the call
/// (sysmon takes the processor back from the call and hands it over): the
/// median of 50, and the largest.
fn retake_waits() -> (f64, f64) {
    let base = Instant::now();
    let mut waits = Vec::new();
    for _ in 0..50 {
        let entered = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let done = Chan::<()>::new(1);
        let (e, d) = (entered.clone(), done.clone());
        go::go(move || {
            e.store(base.elapsed().as_nanos() as u64 + 1, Ordering::SeqCst);
            go::syscall(|| std::thread::sleep(Duration::from_millis(2)));
            d.send(());
        });
        while entered.load(Ordering::SeqCst) == 0 {
            go::gosched();
        }
        let now = base.elapsed().as_nanos() as u64 + 1;
        waits.push((now - entered.load(Ordering::SeqCst)) as f64 / 1e3);
        assert!(done.recv().is_some(), "the sleeper never came back");
    }
    waits.sort_by(f64::total_cmp);
    (waits[waits.len() / 2], waits[waits.len() - 1])
}

/// `sleep-beside-io`: how long a 100 µs sleep takes (µs: the median of
/// 2,000, and the 90th percentile) while a goroutine is blocked reading a
/// loopback connection, so that an idle worker waits in the network poll
/// until the sleep's deadline.
fn sleep_beside_io() -> (f64, f64) {
    use std::io::{Read, Write};
    let l = go::net::TcpListener::bind("127.0.0.1:0").expect("a loopback listener");
    let mut c = go::net::TcpStream::connect(l.local_addr().expect("its address"))
        .expect("a loopback connection");
    let (mut s, _) = l.accept().expect("the accepted connection");
    let read = Chan::<u8>::new(1);
    let r = read.clone();
    go::go(move || {
        let mut b = [0u8; 1];
        s.read_exact(&mut b).expect("the byte written at the end");
        r.send(b[0]);
    });
    const SLEEP: Duration = Duration::from_micros(100);
    let mut took: Vec<f64> = (0..2_000)
        .map(|_| {
            let t = Instant::now();
            go::sleep(SLEEP);
            let d = t.elapsed();
            assert!(d >= SLEEP, "a sleep ended early");
            d.as_nanos() as f64 / 1e3
        })
        .collect();
    c.write_all(&[7]).expect("a write to the reader");
    assert_eq!(read.recv(), Some(7), "the reader read what was written");
    took.sort_by(f64::total_cmp);
    (took[took.len() / 2], took[took.len() * 9 / 10])
}

/// `preempt`: the largest wake-up delay (ms) of a goroutine sleeping 1 ms
/// at a time for 1 s beside a spinner of compiled code on the only
/// processor, and the 99th percentile.
fn preempt_delays() -> (f64, f64) {
    let flag = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let spinning = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = Chan::<u64>::new(1);
    let (f, s, d) = (flag.clone(), spinning.clone(), done.clone());
    go::go(move || {
        s.store(true, Ordering::SeqCst);
        // SAFETY: a function of cli/c/go_bench.c; the flag outlives the
        // spin (this closure holds it).
        d.send(unsafe { bench_spin_until(f.as_ptr()) });
    });
    // From here this goroutine runs only when the spinner is preempted.
    while !spinning.load(Ordering::SeqCst) {
        go::gosched();
    }
    let mut delays = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        let t = Instant::now();
        go::sleep(Duration::from_millis(1));
        let late = t.elapsed().saturating_sub(Duration::from_millis(1));
        delays.push(late.as_secs_f64() * 1e3);
    }
    flag.store(1, Ordering::SeqCst);
    assert!(done.recv().unwrap_or(0) > 0, "the spinner never spun");
    delays.sort_by(f64::total_cmp);
    (delays[delays.len() - 1], delays[delays.len() * 99 / 100])
}

/// `spawn-panic` through the Rust API: the panic is raised without
/// unwinding (`defer::raise`, in a `call_try` frame), the way compiled code
/// panics through the C ABI; the value is the fresh GC object itself, as
/// Go's is a fresh `*node`.
fn spawn_panic_rust() -> f64 {
    const N: usize = 100_000;
    let t = Instant::now();
    let wg = Arc::new(WaitGroup::new());
    wg.add(N as i32).unwrap();
    let bad = Arc::new(AtomicUsize::new(0));
    for i in 0..N {
        let (wg, bad) = (wg.clone(), bad.clone());
        go::go(move || {
            let ended: Result<(), _> = defer::call_try(|f| {
                f.defer(move || wg.done().unwrap());
                let obj = gc::alloc(16);
                // SAFETY: a fresh 16-byte object.
                unsafe { obj.cast::<usize>().as_ptr().write(i) };
                f.defer_with(move |d| {
                    let got = d.recover().and_then(|v| v.downcast::<NonNull<u8>>().ok());
                    // SAFETY: the recovered value is a live 16-byte GC
                    // object (the panic value kept it reachable).
                    let ok =
                        got.is_some_and(|p| p == obj && unsafe { p.cast::<usize>().read() } == i);
                    if !ok {
                        bad.fetch_add(1, Ordering::Relaxed);
                    }
                });
                Err(defer::raise(obj))
            });
            if let Err(panicking) = ended {
                panicking.resume()
            }
        });
    }
    wg.wait();
    assert_eq!(
        bad.load(Ordering::Relaxed),
        0,
        "goroutines recovered the wrong value"
    );
    ms(t)
}

/// Goroutines of the `million` benchmark.
const MILLION: usize = 1_000_000;

/// A million goroutines parked on one gate (a channel, closed to release
/// them), then released.
fn million() -> (f64, f64) {
    const N: usize = MILLION;
    let t = Instant::now();
    let gate = Chan::<()>::new(0);
    let started = Arc::new(WaitGroup::new());
    let finished = Arc::new(WaitGroup::new());
    started.add(N as i32).unwrap();
    finished.add(N as i32).unwrap();
    for _ in 0..N {
        let (gate, started, finished) = (gate.clone(), started.clone(), finished.clone());
        go::go(move || {
            started.done().unwrap();
            let _ = gate.recv();
            finished.done().unwrap();
        });
    }
    started.wait();
    gate.close();
    finished.wait();
    (t.elapsed().as_secs_f64(), 0.0)
}

/// One cold run of `million-heap` in this process: prints its JSON line.
fn million_heap_run() -> i32 {
    let out = Arc::new(std::sync::Mutex::new(None));
    let result = out.clone();
    go::run(move || *result.lock().unwrap() = Some(million_heap()));
    let Some((total, spawn_park, gc_ms)) = *out.lock().unwrap() else {
        return 2;
    };
    let line = Json::new()
        .str("bench", Name::MillionHeap.id())
        .str("impl", "defergc")
        .str("unit", "s")
        .nums("runs", &[total])
        .num("median", total)
        .num("spawn_park_s", spawn_park)
        .num("gc_ms", gc_ms)
        .num("peak_rss_bytes", report::peak_rss_bytes() as f64)
        .num("gomaxprocs", go::gomaxprocs() as f64);
    println!("{line}");
    0
}

/// The `million-heap` work (the same as Go's `millionHeap`): the total
/// and spawn+park in seconds, the forced collection in milliseconds.
fn million_heap() -> (f64, f64, f64) {
    const N: usize = MILLION;
    const MAGIC: u64 = 0x9e37_79b9_7f4a_7c15;
    let gate = Chan::<()>::new(0);
    let parked = Arc::new(WaitGroup::new());
    let finished = Arc::new(WaitGroup::new());
    let bad = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    parked.add(N as i32).unwrap();
    finished.add(N as i32).unwrap();
    for i in 0..N as u64 {
        let (gate, parked, finished, bad) =
            (gate.clone(), parked.clone(), finished.clone(), bad.clone());
        go::go(move || {
            // The only reference is on this goroutine's stack.
            let o = black_box(gc::alloc(16).cast::<u64>().as_ptr());
            // SAFETY: a fresh 16-byte GC object, 8-aligned, kept alive by
            // the conservative scan of this stack while it is parked.
            unsafe {
                o.write(i ^ MAGIC);
                o.add(1).write(!i);
            }
            parked.done().unwrap();
            let _ = gate.recv();
            // SAFETY: as above: still live, nobody else writes it.
            let (a, b) = unsafe { (black_box(o).read(), o.add(1).read()) };
            if a != i ^ MAGIC || b != !i {
                bad.fetch_add(1, Ordering::Relaxed);
            }
            finished.done().unwrap();
        });
    }
    parked.wait();
    let spawn_park = t.elapsed().as_secs_f64();
    let g = Instant::now();
    gc::collect();
    let gc_ms = ms(g);
    gate.close();
    finished.wait();
    let total = t.elapsed().as_secs_f64();
    assert_eq!(
        bad.load(Ordering::Relaxed),
        0,
        "goroutines found their object changed"
    );
    (total, spawn_park, gc_ms)
}

/// A cold benchmark: each run in a fresh process, no warm-up, ours and
/// Go's alternating run by run so both see the same machine; the median
/// of each figure, with the load average before and after.
fn run_cold(name: Name, args: &Args) -> i32 {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!(
                "defergc: bench {}: cannot find this program: {e}",
                name.id()
            );
            return 2;
        }
    };
    let go_args = [
        "-bench".to_string(),
        name.go_id().to_string(),
        "-json".to_string(),
    ];
    let fields = ["median", "spawn_park_s", "gc_ms", "peak_rss_bytes"];
    let mut ours: Vec<[f64; 4]> = Vec::new();
    let mut theirs: Vec<[f64; 4]> = Vec::new();
    let (mut our_lines, mut go_lines) = (Vec::new(), Vec::new());
    let go_exe = match go_program(args) {
        Ok(exe) => exe,
        Err(status) => return status,
    };
    let parse = |line: &str| fields.map(|f| report::json_number(line, f).unwrap_or(f64::NAN));
    let load_before = report::load_average();
    for i in 1..=args.runs {
        let out = std::process::Command::new(&exe)
            .args(["bench", name.id(), "--cold-run"])
            .output();
        let line = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            Ok(o) => {
                eprintln!(
                    "defergc: bench {} run {i}: {}\n{}",
                    name.id(),
                    o.status,
                    String::from_utf8_lossy(&o.stderr)
                );
                return 2;
            }
            Err(e) => {
                eprintln!("defergc: bench {} run {i}: {e}", name.id());
                return 2;
            }
        };
        if !args.json {
            println!("{} run {i}/{} (defergc): {line}", name.id(), args.runs);
        }
        ours.push(parse(&line));
        our_lines.push(line);
        if let Some(exe) = &go_exe {
            let lines = match report::run_go_binary("bench", exe, &go_args) {
                Ok(lines) => lines,
                Err(why) => {
                    eprintln!("{why}");
                    return 2;
                }
            };
            let Some(line) = lines.first() else {
                eprintln!("defergc: bench --go: the Go program printed no result");
                return 2;
            };
            if !args.json {
                println!("{} run {i}/{} (go): {line}", name.id(), args.runs);
            }
            theirs.push(parse(line));
            go_lines.push(line.clone());
        }
    }
    let load_after = report::load_average();
    if args.json {
        let ours = merge_runs(
            name.id(),
            "defergc",
            name.unit(),
            &our_lines,
            &load_before,
            &load_after,
        );
        println!("{}", ours.bool("cold", true));
        if args.go {
            let go = merge_go_runs(name, &go_lines, &load_before, &load_after);
            println!("{}", go.bool("cold", true));
        }
    }
    let medians = |rows: &[[f64; 4]]| -> [f64; 4] {
        std::array::from_fn(|k| median(&mut rows.iter().map(|r| r[k]).collect::<Vec<_>>()))
    };
    let show = |who: &str, m: [f64; 4]| {
        println!(
            "  {who:<8} total {:.2} s, spawn+park {:.2} s, collection {:.0} ms, peak RSS {:.0} MiB",
            m[0],
            m[1],
            m[2],
            m[3] / (1u64 << 20) as f64
        );
    };
    if !args.json {
        println!(
            "{} (cold, a process a run, alternating), medians of {} runs; load average {load_before} before, {load_after} after:",
            name.id(),
            args.runs
        );
        show("defergc", medians(&ours));
        if args.go {
            show("go", medians(&theirs));
        }
    }
    0
}

fn yield_pingpong() -> f64 {
    const N: u64 = 1_000_000;
    let stop = Arc::new(AtomicUsize::new(0));
    let other = stop.clone();
    let done = Chan::<()>::new(1);
    let d = done.clone();
    go::go(move || {
        while other.load(Ordering::Relaxed) == 0 {
            go::gosched();
        }
        d.send(());
    });
    go::gosched();
    let t = Instant::now();
    for _ in 0..N {
        go::gosched();
    }
    // Each gosched switches to the other goroutine and back: two switches.
    let per_switch = ns_per(t, 2 * N);
    stop.store(1, Ordering::Relaxed);
    let _ = done.recv();
    per_switch
}

/// A million defers capturing a fresh GC object, checked, in a goroutine;
/// and the same on a plain thread.
fn defer_stress() -> (f64, f64) {
    fn stress() -> f64 {
        const N: usize = 1_000_000;
        let sum = std::cell::Cell::new(0u64);
        let t = Instant::now();
        defer::call(|f| {
            for i in 0..N as u64 {
                let obj = gc::alloc(8).cast::<u64>();
                // SAFETY: 8 fresh bytes.
                unsafe { obj.as_ptr().write(i) };
                let sum = &sum;
                // SAFETY: the record keeps obj alive until it runs.
                f.defer(move || sum.set(sum.get() + unsafe { obj.as_ptr().read() }));
            }
        });
        assert_eq!(
            sum.get(),
            (N as u64 - 1) * N as u64 / 2,
            "a deferred call saw a wrong value"
        );
        ms(t)
    }
    let in_goroutine = stress();
    let on_thread = go::syscall(|| std::thread::spawn(stress).join().unwrap());
    (in_goroutine, on_thread)
}

fn chan_pingpong() -> f64 {
    const N: u64 = 500_000;
    let (ping, pong) = (Chan::<u64>::new(0), Chan::<u64>::new(0));
    let (p, q) = (ping.clone(), pong.clone());
    go::go(move || {
        while let Some(v) = p.recv() {
            q.send(v + 1);
        }
    });
    let t = Instant::now();
    for i in 0..N {
        ping.send(i);
        assert_eq!(pong.recv(), Some(i + 1));
    }
    let per = ns_per(t, N);
    ping.close();
    per
}

fn chan_buffered(pairs: u64) -> f64 {
    const N: u64 = 2_000_000;
    let c = Chan::<u64>::new(128);
    let wg = Arc::new(WaitGroup::new());
    wg.add(pairs as i32).unwrap();
    let total = Arc::new(AtomicU64::new(0));
    let t = Instant::now();
    for p in 0..pairs {
        let (c, wg) = (c.clone(), wg.clone());
        go::go(move || {
            for i in 0..N / pairs {
                c.send(p * N + i);
            }
            wg.done().unwrap();
        });
    }
    let consumers = Arc::new(WaitGroup::new());
    consumers.add(pairs as i32).unwrap();
    for _ in 0..pairs {
        let (c, consumers, total) = (c.clone(), consumers.clone(), total.clone());
        go::go(move || {
            let mut n = 0;
            for v in c.iter() {
                black_box(v);
                n += 1;
            }
            total.fetch_add(n, Ordering::Relaxed);
            consumers.done().unwrap();
        });
    }
    wg.wait();
    c.close();
    consumers.wait();
    assert_eq!(total.load(Ordering::Relaxed), N / pairs * pairs);
    ns_per(t, N)
}

/// Go's sieve1.go: a chain of filter goroutines, first 10,000 primes;
/// the chain ends with the run.
fn sieve() -> f64 {
    const PRIMES: usize = 10_000;
    /// The 10,000th prime. The generator stops there and closes its
    /// channel, and each filter closes its own when its input closes, so
    /// a run leaves no pipeline behind (`sieve1.go`'s endless generator
    /// would keep its filters sifting beside the next run).
    const LAST: u64 = 104_729;
    let t = Instant::now();
    let ch = Chan::<u64>::new(0);
    let gen = ch.clone();
    go::go(move || {
        for i in 2..=LAST {
            gen.send(i);
        }
        gen.close();
    });
    let mut src = ch;
    let mut last = 0;
    for _ in 0..PRIMES {
        let prime = src.recv().unwrap();
        last = prime;
        let out = Chan::<u64>::new(0);
        let (inp, o) = (src.clone(), out.clone());
        go::go(move || {
            while let Some(i) = inp.recv() {
                if i % prime != 0 {
                    o.send(i);
                }
            }
            o.close();
        });
        src = out;
    }
    assert_eq!(last, LAST, "the 10,000th prime");
    // The close has gone down the whole chain: every filter has ended.
    assert!(src.recv().is_none(), "a number after the 10,000th prime");
    ms(t)
}

/// Go's fairness: each of the ready cases won about as often.
fn check_fair(counts: &[u64; 4], n: u64) {
    assert_eq!(counts.iter().sum::<u64>(), n);
    assert!(
        counts.iter().all(|&k| k > n / 5),
        "select chose unevenly: {counts:?}"
    );
}

fn select4_rust() -> f64 {
    const N: u64 = 1_000_000;
    let chans: Vec<Chan<u64>> = (0..4).map(|_| Chan::new(1)).collect();
    let mut chosen_count = [0u64; 4];
    let t = Instant::now();
    for i in 0..N {
        // Keep all four ready: refill the one drained last time.
        for c in &chans {
            let _ = c.try_send(i);
        }
        let mut sel = Select::new();
        for c in &chans {
            sel.recv(c);
        }
        let chosen = sel.wait();
        if sel.received::<u64>(chosen).is_some() {
            chosen_count[chosen] += 1;
        }
    }
    let elapsed = ns_per(t, N);
    check_fair(&chosen_count, N);
    elapsed
}

fn mutex_100k() -> f64 {
    const G: usize = 100_000;
    let m = Arc::new(go::Mutex::new());
    let count = Arc::new(AtomicU64::new(0));
    let wg = Arc::new(WaitGroup::new());
    wg.add(G as i32).unwrap();
    let t = Instant::now();
    for _ in 0..G {
        let (m, count, wg) = (m.clone(), count.clone(), wg.clone());
        go::go(move || {
            for _ in 0..10 {
                m.lock();
                let v = count.load(Ordering::Relaxed);
                count.store(v + 1, Ordering::Relaxed);
                m.unlock();
            }
            wg.done().unwrap();
        });
    }
    wg.wait();
    assert_eq!(count.load(Ordering::Relaxed), G as u64 * 10);
    ms(t)
}

/// 100,000 goroutines each sleep 1 ms ten times; every sleep is checked
/// not to end early.
/// One node of the skynet tree: `size` leaves numbered from `num`.
fn skynet_node(c: Chan<u64>, num: u64, size: u64) {
    if size == 1 {
        c.send(num);
        return;
    }
    let rc = Chan::<u64>::new(0);
    for i in 0..10 {
        let rc = rc.clone();
        go::go(move || skynet_node(rc, num + i * (size / 10), size / 10));
    }
    let sum = (0..10).map(|_| rc.recv().expect("open")).sum();
    c.send(sum);
}

fn skynet() -> f64 {
    const N: u64 = MILLION as u64;
    let t = Instant::now();
    let c = Chan::<u64>::new(0);
    let root = c.clone();
    go::go(move || skynet_node(root, 0, N));
    let sum = c.recv().expect("open");
    assert_eq!(sum, N * (N - 1) / 2, "skynet's sum");
    ms(t)
}

fn wg_fanout() -> f64 {
    const ROUND: usize = 10_000;
    // Go's closures capture the counter and the WaitGroup by pointer, as
    // compiled code's would: no reference count to raise in the spawner
    // and drop in every goroutine (an `Arc` costs two contended atomic
    // operations a capture). A run keeps them for the process's life; a
    // WaitGroup is reused once its Wait has returned, as Go allows.
    let done: &'static AtomicUsize = Box::leak(Box::new(AtomicUsize::new(0)));
    let wg: &'static WaitGroup = Box::leak(Box::new(WaitGroup::new()));
    let t = Instant::now();
    for _ in 0..MILLION / ROUND {
        wg.add(ROUND as i32).unwrap();
        for _ in 0..ROUND {
            go::go(move || {
                done.fetch_add(1, Ordering::Relaxed);
                wg.done().unwrap();
            });
        }
        wg.wait();
    }
    assert_eq!(done.load(Ordering::Relaxed), MILLION, "lost goroutines");
    ms(t)
}

fn timers() -> f64 {
    const G: usize = 100_000;
    const ROUNDS: u64 = 10;
    let slept = Arc::new(AtomicU64::new(0));
    let wg = Arc::new(WaitGroup::new());
    wg.add(G as i32).unwrap();
    let t = Instant::now();
    for _ in 0..G {
        let (slept, wg) = (slept.clone(), wg.clone());
        go::go(move || {
            for _ in 0..ROUNDS {
                let at = Instant::now();
                go::sleep(Duration::from_millis(1));
                assert!(
                    at.elapsed() >= Duration::from_millis(1),
                    "a sleep ended early"
                );
                slept.fetch_add(1, Ordering::Relaxed);
            }
            wg.done().unwrap();
        });
    }
    wg.wait();
    assert_eq!(slept.load(Ordering::Relaxed), G as u64 * ROUNDS);
    ms(t)
}

/// Not inlined into `measure`: the unwinder's personality routine scans
/// the catching frame's whole call-site table, and the dispatcher's is
/// long; a program's own function that recovers is not that one.
#[inline(never)]
fn panic_recover_rust() -> f64 {
    const N: u64 = 200_000;
    let t = Instant::now();
    for i in 0..N {
        let got: u64 = defer::named(0, |f, out| {
            f.defer_with(move |d| {
                if let Some(v) = d.recover() {
                    out.set(*v.downcast_ref::<u64>().unwrap());
                }
            });
            defer::panic(i)
        });
        assert_eq!(got, i);
    }
    ns_per(t, N)
}

fn panic_recover_rust_try() -> f64 {
    const N: u64 = 200_000;
    let t = Instant::now();
    for i in 0..N {
        let got = defer::named_try(0, |f, out| {
            f.defer_with(move |d| {
                if let Some(v) = d.recover() {
                    out.set(*v.downcast_ref::<u64>().unwrap());
                }
            });
            Err(defer::raise(i))
        });
        assert_eq!(got.ok(), Some(i));
    }
    ns_per(t, N)
}

/// Finalizers that ran (finalizers-1m).
static FINALIZED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_finalized(_obj: *mut std::ffi::c_void, _data: *mut std::ffi::c_void) {
    FINALIZED.fetch_add(1, Ordering::Relaxed);
}

/// `n` objects with finalizers, none kept.
#[inline(never)]
fn finalizable_garbage(n: usize) {
    for i in 0..n {
        let p = defergc::gc::alloc(16);
        // SAFETY: a fresh 16-byte object; the finalizer only counts.
        unsafe {
            p.cast::<u64>().as_ptr().write(i as u64);
            defergc::gc::register_finalizer(
                p.as_ptr(),
                Some(count_finalized),
                std::ptr::null_mut(),
            );
        }
    }
}

fn finalizers_1m() -> f64 {
    const N: usize = 1_000_000;
    FINALIZED.store(0, Ordering::Relaxed);
    let t = Instant::now();
    finalizable_garbage(N);
    // The same allowance as Go's side: a stale word may keep a few.
    while FINALIZED.load(Ordering::Relaxed) < N - 999 {
        defergc::gc::collect();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    t.elapsed().as_secs_f64() * 1e3
}
