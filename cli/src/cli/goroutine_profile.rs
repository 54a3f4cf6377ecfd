//! `defergc profile --goroutine FILE`: 100,000 goroutines parked the way
//! a server's are (half in a channel receive, half in a WaitGroup wait),
//! then their goroutine profile written to FILE in pprof's format (`go
//! tool pprof -top FILE` names the two functions), and the cost of a
//! dump of all of them: `runtime.Stack(buf, true)` and the profile, each
//! run alternated five times (medians), beside the time it took to start
//! and park them, with the load average.

use super::report::{load_average, Json};
use defergc::go::{self, Chan, WaitGroup};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Goroutines parked for the profile.
const GOROUTINES: usize = 100_000;
/// Runs of each measurement.
const RUNS: usize = 5;

/// Where half of the goroutines wait: a profile names it.
#[inline(never)]
fn wait_for_request(requests: Chan<u64>, parked: Arc<AtomicUsize>) {
    parked.fetch_add(1, Ordering::SeqCst);
    std::hint::black_box(requests.recv());
}

/// Where the other half wait.
#[inline(never)]
fn wait_for_shutdown(shutdown: Arc<WaitGroup>, parked: Arc<AtomicUsize>) {
    parked.fetch_add(1, Ordering::SeqCst);
    shutdown.wait();
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What the run measured.
struct Figures {
    start_ms: f64,
    dump_ms: Vec<f64>,
    profile_ms: Vec<f64>,
    sections: usize,
    dump_bytes: usize,
    written: std::io::Result<()>,
}

fn measure(path: &Path) -> Figures {
    let path = path.to_path_buf();
    let out = Arc::new(std::sync::Mutex::new(None));
    let o = out.clone();
    go::run(move || {
        let requests = Chan::<u64>::new(0);
        let shutdown = Arc::new(WaitGroup::new());
        let _ = shutdown.add(1);
        let parked = Arc::new(AtomicUsize::new(0));
        let t = Instant::now();
        for i in 0..GOROUTINES {
            let parked = parked.clone();
            if i % 2 == 0 {
                let r = requests.clone();
                go::go(move || wait_for_request(r, parked));
            } else {
                let s = shutdown.clone();
                go::go(move || wait_for_shutdown(s, parked));
            }
        }
        while parked.load(Ordering::SeqCst) < GOROUTINES {
            go::sleep(Duration::from_millis(1));
        }
        // (Counted just before each blocks: let the last ones park.)
        go::sleep(Duration::from_millis(50));
        let start_ms = t.elapsed().as_secs_f64() * 1e3;
        let (mut dump_ms, mut profile_ms) = (Vec::new(), Vec::new());
        let (mut sections, mut dump_bytes) = (0, 0);
        for _ in 0..RUNS {
            let t = Instant::now();
            let text = go::stack(true);
            dump_ms.push(t.elapsed().as_secs_f64() * 1e3);
            sections = text.matches("\ngoroutine ").count() + 1;
            dump_bytes = text.len();
            let t = Instant::now();
            let mut bytes = Vec::new();
            let _ = go::write_goroutine_profile(&mut bytes);
            profile_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let written = go::write_goroutine_profile_to(&path);
        requests.close();
        let _ = shutdown.done();
        *o.lock().unwrap() = Some(Figures {
            start_ms,
            dump_ms,
            profile_ms,
            sections,
            dump_bytes,
            written,
        });
    });
    let figures = out.lock().unwrap().take().expect("the run reported");
    figures
}

pub fn run(path: &Path, json: bool) -> i32 {
    let load_before = load_average();
    let f = measure(path);
    let load_after = load_average();
    if let Err(e) = &f.written {
        eprintln!("defergc: profile: cannot write {}: {e}", path.display());
        return 2;
    }
    let (dump, profile) = (median(f.dump_ms.clone()), median(f.profile_ms.clone()));
    if !json {
        println!(
            "goroutine profile: {} ({GOROUTINES} goroutines parked); read it with `go tool pprof -top {}`",
            path.display(),
            path.display()
        );
        println!(
            "  start and park {GOROUTINES}: {:.0} ms; dump of all (runtime.Stack, {} sections, {} bytes): median {dump:.0} ms; goroutine profile: median {profile:.0} ms ({RUNS} runs each, alternated; load {load_before} -> {load_after})",
            f.start_ms, f.sections, f.dump_bytes
        );
    }
    let json = Json::new()
        .str("bench", "goroutine-profile")
        .str("out", &path.display().to_string())
        .num("goroutines", GOROUTINES as f64)
        .num("start_ms", f.start_ms)
        .num("dump_ms", dump)
        .nums("dump_runs_ms", &f.dump_ms)
        .num("profile_ms", profile)
        .nums("profile_runs_ms", &f.profile_ms)
        .num("sections", f.sections as f64)
        .str("load_before", &load_before)
        .str("load_after", &load_after);
    println!("{json}");
    0
}
