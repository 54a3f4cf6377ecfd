//! `defergc stress`: the million-defer workload, verified.
//!
//! Each thread runs one frame that defers its share of the calls in a
//! loop; every call checks that it runs in exact LIFO order and that what
//! it captured is intact, and folds it into a checksum compared with one
//! computed independently. Ends with a human summary and one JSON line.

use super::limits;
use super::report::{self, Json};
use clap::ValueEnum;
use defergc::{defer, gc};
use std::cell::Cell;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Most threads a run may start.
const MAX_THREADS: u64 = 1024;
/// Most defers a run may ask for (the machine's memory bounds it sooner:
/// see [`bytes_needed`]).
const MAX_DEFERS: u64 = 100_000_000_000;

#[derive(clap::Args, Clone)]
pub struct Args {
    /// Total number of defers, split among the threads (the first ones
    /// take one more when they do not divide evenly), 1 to 10^11 and as
    /// many as the machine's memory holds.
    #[arg(long, default_value_t = 1_000_000, allow_negative_numbers = true,
          value_parser = limits::count(1, MAX_DEFERS))]
    defers: u64,
    /// Force a full collection every K defers (per thread); 0 lets the
    /// collector decide when to run.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true,
          value_parser = limits::count(0, MAX_DEFERS))]
    gc_every: u64,
    /// Threads deferring at once, 1 to 1024 (and at most --defers).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true,
          value_parser = limits::count(1, MAX_THREADS))]
    threads: u64,
    /// What each deferred call captures.
    #[arg(long, value_enum, default_value_t = Capture::Object)]
    capture: Capture,
    /// Runs in this process, 1 to 1000; the report gives the median.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true,
          value_parser = limits::count(1, 1000))]
    runs: u64,
    /// Print only the JSON line.
    #[arg(long)]
    json: bool,
}

impl Args {
    /// Whether only the JSON line is printed.
    pub fn json(&self) -> bool {
        self.json
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Capture {
    /// A freshly GC-allocated object holding the call's index.
    Object,
    /// Only the integer index.
    Int,
}

impl Capture {
    fn name(self) -> &'static str {
        match self {
            Capture::Object => "object",
            Capture::Int => "int",
        }
    }
}

const MAGIC: u64 = 0xDEF0_6C00_0000_0001;
/// Progress and heap samples are taken every this many defers.
const TICK: usize = 1 << 16;

/// The checksum term of call `i`.
fn term(i: u64) -> u64 {
    (i ^ MAGIC)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17)
}

/// What one thread's deferred calls observed.
struct Verify {
    next: Cell<usize>,
    checksum: Cell<u64>,
    bad: Cell<usize>,
    /// Calls that ran.
    calls: Cell<u64>,
}

impl Verify {
    #[inline(always)]
    fn call(&self, i: usize, seen: u64) {
        if self.next.get() != i + 1 || seen != i as u64 {
            self.bad.set(self.bad.get() + 1);
        }
        self.next.set(i);
        self.calls.set(self.calls.get() + 1);
        self.checksum
            .set(self.checksum.get().wrapping_add(term(seen)));
    }
}

/// Shared between the workers and the reporter.
struct Shared {
    progress: Option<indicatif::ProgressBar>,
    peak_heap: AtomicUsize,
}

impl Shared {
    fn tick(&self, steps: usize) {
        if let Some(p) = &self.progress {
            p.inc(steps as u64);
        }
        self.peak_heap
            .fetch_max(gc::stats().heap_size, Ordering::Relaxed);
    }
}

struct Outcome {
    checksum: u64,
    bad: usize,
    calls: u64,
}

/// What a deferred call needs besides its own capture: one reference, so
/// a record is the capture, this pointer and the shim word (24 bytes).
struct Ctx<'a> {
    verify: Verify,
    shared: &'a Shared,
}

impl Ctx<'_> {
    #[inline(always)]
    fn call(&self, i: usize, seen: u64) {
        self.verify.call(i, seen);
        if i.is_multiple_of(TICK) {
            self.shared.tick(TICK);
        }
    }
}

thread_local! {
    /// The running worker's Ctx, for calls that capture only an integer.
    static CTX: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
}

/// One thread's frame: `n` loop defers, then they all run at its exit.
fn worker(n: usize, args: &Args, shared: &Shared) -> Outcome {
    let ctx = Ctx {
        verify: Verify {
            next: Cell::new(n),
            checksum: Cell::new(0),
            bad: Cell::new(0),
            calls: Cell::new(0),
        },
        shared,
    };
    let cx = &ctx;
    CTX.with(|c| c.set((cx as *const Ctx<'_>).cast()));
    defer::call(|f| {
        for i in 0..n {
            match args.capture {
                Capture::Object => {
                    // The object is the index itself: a call that finds
                    // anything else saw a reclaimed or reused object.
                    let obj = gc::alloc(8).as_ptr().cast::<u64>();
                    // SAFETY: a fresh 8-byte object.
                    unsafe { obj.write(i as u64) };
                    f.defer(move || {
                        // SAFETY: the record keeps obj alive until this runs.
                        let seen = unsafe { obj.read() };
                        cx.call(seen as usize, seen);
                    });
                }
                // Only the integer: the record is 16 bytes, and the call
                // finds its checker through a thread-local.
                Capture::Int => f.defer(move || {
                    CTX.with(|c| {
                        // SAFETY: the worker set CTX to its live Ctx for as
                        // long as its frame runs.
                        let cx = unsafe { &*c.get().cast::<Ctx<'_>>() };
                        cx.call(i, i as u64)
                    })
                }),
            }
            if args.gc_every != 0 && (i as u64 + 1).is_multiple_of(args.gc_every) {
                gc::collect();
            }
            if i % TICK == 0 {
                shared.tick(TICK);
            }
        }
    });
    Outcome {
        checksum: ctx.verify.checksum.get(),
        bad: ctx.verify.bad.get() + usize::from(ctx.verify.next.get() != 0),
        calls: ctx.verify.calls.get(),
    }
}

struct Run {
    elapsed: Duration,
    /// Deferred calls that ran, all threads together.
    calls: u64,
    collections: u64,
    checksum: u64,
    verified: bool,
}

/// Each thread's share of the defers: they add up to `defers` exactly.
fn shares(defers: u64, threads: u64) -> Vec<usize> {
    (0..threads)
        .map(|t| (defers / threads + u64::from(t < defers % threads)) as usize)
        .collect()
}

/// What a run's records and captured objects take, with a margin (peak
/// RSS measured at 42 bytes a defer capturing an object, 16.4 capturing
/// an integer, 10 million defers, 2026-11-24), plus the process's own.
fn bytes_needed(args: &Args) -> u64 {
    let per_defer: u64 = match args.capture {
        Capture::Object => 48,
        Capture::Int => 20,
    };
    args.defers.saturating_mul(per_defer) + (64 << 20)
}

fn run_once(args: &Args, shared: &Shared) -> Result<Run, String> {
    let shares = shares(args.defers, args.threads);
    let expected: u64 = shares
        .iter()
        .map(|&n| (0..n as u64).fold(0u64, |s, i| s.wrapping_add(term(i))))
        .fold(0u64, u64::wrapping_add);
    let before = gc::stats().collections;
    let start = Instant::now();
    let outcomes: Vec<Outcome> = if shares.len() == 1 {
        vec![worker(shares[0], args, shared)]
    } else {
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(shares.len());
            for (t, &n) in shares.iter().enumerate() {
                let started = std::thread::Builder::new()
                    .name(format!("stress-{t}"))
                    .spawn_scoped(s, move || {
                        // Sampled by a CPU profile (`profile --cpu`).
                        defergc::go::pprof::profile_this_thread();
                        worker(n, args, shared)
                    });
                match started {
                    Ok(h) => handles.push(h),
                    // The ones started finish (the scope joins them).
                    Err(e) => {
                        return Err(format!(
                            "defergc: stress: cannot start thread {} of {}: {e}",
                            t + 1,
                            shares.len()
                        ))
                    }
                }
            }
            Ok(handles
                .into_iter()
                .map(|h| h.join().expect("a stress thread failed"))
                .collect())
        })?
    };
    let elapsed = start.elapsed();
    let checksum = outcomes
        .iter()
        .fold(0u64, |s, o| s.wrapping_add(o.checksum));
    let bad: usize = outcomes.iter().map(|o| o.bad).sum();
    let calls: u64 = outcomes.iter().map(|o| o.calls).sum();
    Ok(Run {
        elapsed,
        calls,
        collections: gc::stats().collections - before,
        checksum,
        verified: bad == 0 && checksum == expected && calls == args.defers,
    })
}

pub fn run(args: &Args) -> i32 {
    if args.defers < args.threads {
        eprintln!(
            "defergc: stress: --defers ({}) must be at least --threads ({}): every thread defers",
            args.defers, args.threads
        );
        return 2;
    }
    if let Err(e) = limits::check_memory(
        &format!("stress --defers {}", args.defers),
        bytes_needed(args),
    ) {
        eprintln!("{e}");
        return 2;
    }
    gc::init();
    let shared = Shared {
        progress: (!args.json && std::io::stderr().is_terminal()).then(|| {
            let total = args.defers.saturating_mul(2).saturating_mul(args.runs);
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {msg} [{bar:40}] {percent:>3}% {elapsed}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_message("deferring and running");
            bar
        }),
        peak_heap: AtomicUsize::new(0),
    };
    let runs: Vec<Run> = match (0..args.runs).map(|_| run_once(args, &shared)).collect() {
        Ok(runs) => runs,
        Err(e) => {
            if let Some(p) = &shared.progress {
                p.finish_and_clear();
            }
            eprintln!("{e}");
            return 2;
        }
    };
    if let Some(p) = &shared.progress {
        p.finish_and_clear();
    }
    shared.tick(0);

    let mut times: Vec<f64> = runs.iter().map(|r| r.elapsed.as_secs_f64() * 1e3).collect();
    times.sort_by(f64::total_cmp);
    let median_ms = times[times.len() / 2];
    let mut collections: Vec<u64> = runs.iter().map(|r| r.collections).collect();
    collections.sort();
    let verified = runs.iter().all(|r| r.verified);
    let checksum = runs[0].checksum;
    let peak_heap = shared.peak_heap.load(Ordering::Relaxed);
    let peak_rss = report::peak_rss_bytes();

    if !args.json {
        println!(
            "defergc stress: {} defers on {} thread(s), capturing {}, {}",
            args.defers,
            args.threads,
            args.capture.name(),
            if args.gc_every == 0 {
                "collector runs when it decides".to_string()
            } else {
                format!("full collection every {} defers", args.gc_every)
            }
        );
        println!(
            "  time:        {median_ms:.2} ms median of {} run(s) ({:.2} ns per defer)",
            args.runs,
            median_ms * 1e6 / args.defers as f64
        );
        println!(
            "  collections: {} per run (median)",
            collections[collections.len() / 2]
        );
        println!(
            "  peak heap:   {:.1} MiB",
            peak_heap as f64 / (1 << 20) as f64
        );
        println!(
            "  peak RSS:    {:.1} MiB",
            peak_rss as f64 / (1 << 20) as f64
        );
        println!(
            "  checksum:    {checksum:#018x} ({})",
            if verified {
                "verified: every call ran once, in LIFO order, with intact captures"
            } else {
                "FAILED"
            }
        );
    }
    let json = Json::new()
        .str("bench", "stress")
        .str("backend", gc::BACKEND)
        .num("defers", args.defers as f64)
        .num("threads", args.threads as f64)
        .num("calls", runs[0].calls as f64)
        .str("capture", args.capture.name())
        .num("gc_every", args.gc_every as f64)
        .num("runs", args.runs as f64)
        .num("elapsed_ms", median_ms)
        .nums("elapsed_ms_runs", &times)
        .num("ns_per_defer", median_ms * 1e6 / args.defers as f64)
        .num("collections", collections[collections.len() / 2] as f64)
        .num("peak_heap_bytes", peak_heap as f64)
        .num("peak_rss_bytes", peak_rss as f64)
        .str("checksum", &format!("{checksum:#018x}"))
        .bool("verified", verified);
    println!("{json}");
    if verified {
        0
    } else {
        1
    }
}
