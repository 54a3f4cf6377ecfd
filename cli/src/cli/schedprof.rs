//! `defergc profile --block FILE --mutex FILE --trace FILE`: a goroutine
//! workload (producers and consumers on channels, selects with timers,
//! goroutines contending for one mutex, forced collections) with the
//! block profile, the mutex profile and the execution trace on, each
//! written where asked. Also `DEFERGC_TRACE=FILE`: any command traced
//! (what the tracing benchmark runs `defergc bench` with).

use defergc::go::{self, Chan, Mutex, Select, WaitGroup};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The options `profile` takes for these profiles.
#[derive(clap::Args, Default)]
#[group(id = "schedprof")]
pub struct Args {
    /// Write the block profile (goroutines blocked on channels, select,
    /// sync, the poller) here, after a goroutine workload.
    #[arg(long, value_name = "FILE")]
    pub block: Option<PathBuf>,
    /// Write the mutex profile (contention on go::Mutex) here.
    #[arg(long, value_name = "FILE")]
    pub mutex: Option<PathBuf>,
    /// Write the execution trace (Chrome / Perfetto JSON) here.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Nanoseconds blocked per sampled block event (Go's
    /// SetBlockProfileRate; 1: every event).
    #[arg(long, default_value_t = 1, value_parser = super::limits::count(1, 1 << 40))]
    pub block_rate: u64,
    /// One mutex contention event in this many is recorded (Go's
    /// SetMutexProfileFraction).
    #[arg(long, default_value_t = 1, value_parser = super::limits::count(1, 1 << 30))]
    pub mutex_fraction: u64,
}

impl Args {
    /// Whether any of these profiles was asked for.
    pub fn any(&self) -> bool {
        self.block.is_some() || self.mutex.is_some() || self.trace.is_some()
    }
}

/// Producers hand numbers to one consumer over an unbuffered channel: the
/// consumer's receive is where it blocks.
#[inline(never)]
fn receive_all(c: &Chan<u64>, n: u64) -> u64 {
    let mut sum = 0;
    for _ in 0..n {
        sum += c.recv().expect("open");
    }
    sum
}

/// Holds the shared lock for a moment: the critical section the mutex
/// profile names (at its unlock).
#[inline(never)]
fn hold_lock(m: &Mutex, counter: &AtomicU64) {
    m.lock();
    for _ in 0..200 {
        std::hint::black_box(counter.fetch_add(1, Ordering::Relaxed));
    }
    go::gosched();
    m.unlock();
}

/// The workload; returns whether its checksums held.
fn workload() -> bool {
    const PRODUCERS: u64 = 8;
    const EACH: u64 = 2_000;
    let c = Chan::<u64>::new(0);
    for p in 0..PRODUCERS {
        let c = c.clone();
        go::go(move || {
            for i in 0..EACH {
                c.send(p * EACH + i);
            }
        });
    }
    let mutex = Arc::new(Mutex::new());
    let counter = Arc::new(AtomicU64::new(0));
    let wg = Arc::new(WaitGroup::default());
    for _ in 0..16 {
        let (mutex, counter, wg) = (mutex.clone(), counter.clone(), wg.clone());
        wg.add(1).expect("positive");
        go::go(move || {
            for _ in 0..100 {
                hold_lock(&mutex, &counter);
            }
            wg.done().expect("added");
        });
    }
    let ticks = Chan::<u64>::new(0);
    {
        let ticks = ticks.clone();
        go::go(move || {
            for i in 0..20 {
                go::sleep(Duration::from_millis(1));
                ticks.send(i);
                if i % 5 == 0 {
                    defergc::gc::collect();
                }
            }
        });
    }
    let mut ticked = 0;
    for _ in 0..20 {
        let timeout = go::after(Duration::from_secs(5));
        let mut s = Select::new();
        let t = s.recv(&ticks);
        s.recv(&timeout);
        if s.wait() == t {
            ticked += 1;
        }
    }
    let n = PRODUCERS * EACH;
    let sum = receive_all(&c, n);
    wg.wait();
    sum == n * (n - 1) / 2 && counter.load(Ordering::Relaxed) == 16 * 100 * 200 && ticked == 20
}

/// Runs the workload with the profiles asked for on, writes them; the
/// exit status.
pub fn run(args: &Args, json: bool) -> i32 {
    for path in [&args.block, &args.mutex].into_iter().flatten() {
        if let Err(e) = std::fs::File::create(path) {
            eprintln!("defergc: profile: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    if args.block.is_some() {
        go::set_block_profile_rate(args.block_rate as i64);
    }
    if args.mutex.is_some() {
        go::set_mutex_profile_fraction(args.mutex_fraction as i64);
    }
    if let Some(path) = &args.trace {
        if let Err(e) = go::start_trace(path) {
            eprintln!("defergc: profile: cannot trace to {}: {e}", path.display());
            return 2;
        }
    }
    let ok = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ok2 = ok.clone();
    let status = go::run(move || ok2.store(workload(), Ordering::Relaxed));
    let ok = ok.load(Ordering::Relaxed);
    go::set_block_profile_rate(0);
    go::set_mutex_profile_fraction(0);
    if let Some(path) = &args.trace {
        if let Err(e) = go::stop_trace() {
            eprintln!("defergc: profile: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    if status != 0 || !ok {
        eprintln!("defergc: profile: the goroutine workload's checksums failed");
        return 1;
    }
    for (path, what) in [(&args.block, "block"), (&args.mutex, "mutex")] {
        let Some(path) = path else { continue };
        let written = if what == "block" {
            go::write_block_profile_to(path)
        } else {
            go::write_mutex_profile_to(path)
        };
        if let Err(e) = written {
            eprintln!("defergc: profile: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    for (path, what, how) in [
        (&args.block, "block profile", "go tool pprof -top"),
        (&args.mutex, "mutex profile", "go tool pprof -top"),
        (
            &args.trace,
            "execution trace",
            "ui.perfetto.dev or chrome://tracing:",
        ),
    ] {
        let Some(path) = path else { continue };
        let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
        if json {
            println!(
                "{}",
                super::report::Json::new()
                    .str("bench", "profile")
                    .str("kind", what)
                    .str("out", &path.display().to_string())
                    .num("bytes", bytes as f64)
            );
        } else {
            println!(
                "{what}: {} ({bytes} bytes); open it with {how} {}",
                path.display(),
                path.display()
            );
        }
    }
    0
}

/// `DEFERGC_TRACE=FILE`: the whole command traced. The variable is taken
/// out of the environment, so that processes the command starts do not
/// write the same file. The trace stops when the guard is dropped.
pub struct EnvTrace(bool);

impl EnvTrace {
    pub fn from_env() -> EnvTrace {
        let Some(path) = std::env::var_os("DEFERGC_TRACE") else {
            return EnvTrace(false);
        };
        std::env::remove_var("DEFERGC_TRACE");
        match go::start_trace(std::path::Path::new(&path)) {
            Ok(()) => EnvTrace(true),
            Err(e) => {
                eprintln!("defergc: DEFERGC_TRACE: {e}");
                EnvTrace(false)
            }
        }
    }
}

impl Drop for EnvTrace {
    fn drop(&mut self) {
        if self.0 {
            if let Err(e) = go::stop_trace() {
                eprintln!("defergc: DEFERGC_TRACE: {e}");
            }
        }
    }
}
