//! The execution trace: the file parses as JSON; every goroutine created
//! while tracing is created before it first runs, runs in slices that
//! never overlap, and ends with an `exit` slice; an unblock comes after
//! the slice that blocked and before the next one; collections are
//! complete begin/end pairs. A seeded randomized program (channels,
//! select, timers, a mutex, forced collections) checks its own checksums
//! under tracing and the trace's conservation.

mod seeded;
mod skip;

use defergc::go::{self, Chan, Mutex, Select, WaitGroup};
use seeded::Rng;
use serde_json::Value;
use serial_test::serial;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn trace_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("defergc-trace-{name}-{}.json", std::process::id()))
}

/// Nanoseconds from the file's microseconds (three decimals).
fn ns(v: &Value) -> i64 {
    (v.as_f64().expect("a number") * 1000.0).round() as i64
}

/// What a trace says, checked for conservation (see the module docs).
#[derive(Default, Debug)]
struct Checked {
    created: usize,
    slices: usize,
    exited: usize,
    unblocks: usize,
    gcs: usize,
    proc_events: usize,
    blocked_on: BTreeMap<String, usize>,
}

/// Parses the trace at `path` and checks it; the goroutines with an
/// `exit` slice must include every one created while tracing.
fn check(path: &std::path::Path) -> Checked {
    let text = std::fs::read_to_string(path).expect("the trace was written");
    let doc: Value = serde_json::from_str(&text).expect("the trace is JSON");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    // The writer keeps up with these programs: a lost event would break
    // the conservation checked below, and the count says so first.
    assert_eq!(
        doc["otherData"]["lost_events"].as_u64(),
        Some(0),
        "events lost"
    );
    let mut c = Checked::default();
    // Per goroutine: slices (start, end, why), creation, unblocks.
    let mut slices: BTreeMap<u64, Vec<(i64, i64, String)>> = BTreeMap::new();
    let mut created: BTreeMap<u64, i64> = BTreeMap::new();
    let mut unblocked: BTreeMap<u64, Vec<i64>> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().expect("ph");
        let name = e["name"].as_str().expect("name");
        if ph == "M" {
            continue;
        }
        let ts = ns(&e["ts"]);
        match (ph, name) {
            ("X", "GC") => {
                assert!(ns(&e["dur"]) >= 0, "{e}");
                c.gcs += 1;
            }
            ("X", _) => {
                assert_eq!(e["cat"], "goroutine", "{e}");
                let g = e["args"]["g"].as_u64().expect("g");
                assert_eq!(name, format!("G{g}"));
                let dur = ns(&e["dur"]);
                assert!(dur >= 0, "{e}");
                let why = e["args"]["end"].as_str().expect("end").to_string();
                if why == "block" {
                    let reason = e["args"]["reason"].as_str().unwrap_or("");
                    assert!(!reason.is_empty(), "a block without a reason: {e}");
                    *c.blocked_on.entry(reason.to_string()).or_default() += 1;
                }
                slices.entry(g).or_default().push((ts, ts + dur, why));
                c.slices += 1;
            }
            ("i", "GoCreate") => {
                let g = e["args"]["g"].as_u64().expect("g");
                assert!(created.insert(g, ts).is_none(), "created twice: {e}");
            }
            ("i", "GoUnblock") => {
                let g = e["args"]["g"].as_u64().expect("g");
                unblocked.entry(g).or_default().push(ts);
                c.unblocks += 1;
            }
            ("i", "ProcStart" | "ProcStop") => c.proc_events += 1,
            ("i", "Preempt") => {}
            _ => panic!("an event of no known kind: {e}"),
        }
    }
    for (g, s) in &mut slices {
        s.sort();
        for w in s.windows(2) {
            assert!(w[0].1 <= w[1].0, "goroutine {g} ran twice at once: {w:?}");
            assert_ne!(w[0].2, "exit", "goroutine {g} ran after it exited: {w:?}");
        }
        if let Some(&at) = created.get(g) {
            assert!(at <= s[0].0, "goroutine {g} ran before it was created");
        }
        if s.last().expect("a slice").2 == "exit" {
            c.exited += 1;
        }
    }
    for (g, at) in &created {
        let s = slices
            .get(g)
            .unwrap_or_else(|| panic!("goroutine {g} created, never ran"));
        assert_eq!(s.last().unwrap().2, "exit", "goroutine {g} never ended");
        // It ran only after it was created (a slice whose start a worker
        // carried over from its previous slice included).
        assert!(
            s[0].0 >= *at,
            "goroutine {g} ran before its creation at {at}: {:?}",
            s[0]
        );
    }
    for (g, times) in &unblocked {
        let Some(s) = slices.get(g) else { continue };
        for &t in times {
            // The slice that blocked ended before; the next one starts
            // after (if it was traced).
            if let Some(i) = s.iter().rposition(|x| x.1 <= t) {
                assert_eq!(
                    s[i].2, "block",
                    "goroutine {g} unblocked at {t} after {:?}",
                    s[i]
                );
            }
            if let Some(next) = s.iter().find(|x| x.1 > t) {
                assert!(
                    next.0 >= t,
                    "goroutine {g} ran before its unblock at {t}: {next:?}"
                );
            }
        }
    }
    c.created = created.len();
    c
}

#[test]
#[serial]
fn a_trace_has_every_goroutine_created_run_and_ended() {
    let path = trace_path("basic");
    go::start_trace(&path).unwrap();
    let sum = Arc::new(AtomicU64::new(0));
    let s = sum.clone();
    assert_eq!(
        go::run(move || {
            let c = Chan::<u64>::new(0);
            let wg = Arc::new(WaitGroup::default());
            for i in 0..10 {
                let (c, wg) = (c.clone(), wg.clone());
                wg.add(1).unwrap();
                go::go(move || {
                    c.send(i);
                    wg.done().unwrap();
                });
            }
            for _ in 0..10 {
                s.fetch_add(c.recv().unwrap(), Ordering::Relaxed);
            }
            defergc::gc::collect();
            wg.wait();
        }),
        0
    );
    go::stop_trace().unwrap();
    assert_eq!(sum.load(Ordering::Relaxed), 45);
    let c = check(&path);
    // The main goroutine and its ten.
    assert_eq!(c.created, 11, "{c:?}");
    assert!(c.exited >= 11, "{c:?}");
    assert!(c.slices >= 11, "{c:?}");
    assert!(c.proc_events >= 1, "{c:?}");
    if defergc::gc::BACKEND != "bdwgc" {
        skip::skipped("collections in the trace", "nothing is collected (nogc)");
    } else {
        assert!(
            c.gcs >= 1,
            "the forced collection is not in the trace: {c:?}"
        );
    }
    let _ = std::fs::remove_file(path);
}

#[test]
#[serial]
fn starting_twice_and_stopping_without_a_trace_are_errors() {
    assert_eq!(
        go::stop_trace().unwrap_err().kind(),
        std::io::ErrorKind::NotFound
    );
    assert!(go::start_trace(std::path::Path::new("/nonexistent-dir/t.json")).is_err());
    let path = trace_path("twice");
    go::start_trace(&path).unwrap();
    assert_eq!(
        go::start_trace(&path).unwrap_err().kind(),
        std::io::ErrorKind::AlreadyExists
    );
    go::stop_trace().unwrap();
    // Empty, but whole.
    let c = check(&path);
    assert_eq!(c.created, 0);
    let _ = std::fs::remove_file(path);
}

#[test]
#[serial]
fn a_seeded_program_under_tracing_keeps_its_checksums_and_the_trace_is_conserved() {
    let seed = seeded::seed("DEFERGC_SEED");
    eprintln!("trace stress seed {seed} (DEFERGC_SEED={seed} repeats it)");
    let mut rng = Rng(seed);
    const WORKERS: u64 = 24;
    // Each worker's plan, drawn here: what it sends and how.
    let plans: Vec<Vec<(u64, u64)>> = (0..WORKERS)
        .map(|_| {
            (0..20 + rng.below(40))
                .map(|_| (rng.below(4), 1 + rng.below(1000)))
                .collect()
        })
        .collect();
    let expected: u64 = plans.iter().flatten().map(|&(_, v)| v).sum();
    let ops: u64 = plans.iter().map(|p| p.len() as u64).sum();
    let path = trace_path("stress");
    go::start_trace(&path).unwrap();
    let got = Arc::new(AtomicU64::new(0));
    let locked = Arc::new(AtomicU64::new(0));
    let (g2, l2) = (got.clone(), locked.clone());
    let gc_every = 1 + rng.below(3);
    assert_eq!(
        go::run(move || {
            let unbuffered = Chan::<u64>::new(0);
            let buffered = Chan::<u64>::new(8);
            let m = Arc::new(Mutex::new());
            let wg = Arc::new(WaitGroup::default());
            for plan in plans {
                let (a, b, m, wg, l2) = (
                    unbuffered.clone(),
                    buffered.clone(),
                    m.clone(),
                    wg.clone(),
                    l2.clone(),
                );
                wg.add(1).unwrap();
                go::go(move || {
                    for (how, v) in plan {
                        match how {
                            0 => a.send(v),
                            1 => b.send(v),
                            2 => {
                                go::sleep(Duration::from_micros(v));
                                a.send(v);
                            }
                            _ => {
                                m.lock();
                                l2.fetch_add(1, Ordering::Relaxed);
                                go::gosched();
                                m.unlock();
                                b.send(v);
                            }
                        }
                    }
                    wg.done().unwrap();
                });
            }
            let mut sum = 0;
            for i in 0..ops {
                let timeout = go::after(Duration::from_secs(30));
                let mut s = Select::new();
                let ca = s.recv(&unbuffered);
                let cb = s.recv(&buffered);
                s.recv(&timeout);
                let chosen = s.wait();
                assert!(chosen == ca || chosen == cb, "a select timed out");
                sum += s.received::<u64>(chosen).expect("open");
                if i % (200 * gc_every) == 0 {
                    defergc::gc::collect();
                }
            }
            wg.wait();
            g2.store(sum, Ordering::Relaxed);
        }),
        0
    );
    go::stop_trace().unwrap();
    assert_eq!(got.load(Ordering::Relaxed), expected, "seed {seed}");
    let c = check(&path);
    assert_eq!(c.created, WORKERS as usize + 1, "seed {seed}: {c:?}");
    assert!(c.exited > WORKERS as usize, "seed {seed}: {c:?}");
    assert!(c.unblocks >= 1, "seed {seed}: {c:?}");
    assert!(
        c.blocked_on
            .keys()
            .any(|r| r.starts_with("chan") || r == "select"),
        "seed {seed}: {c:?}"
    );
    let _ = locked;
    let _ = std::fs::remove_file(path);
}
