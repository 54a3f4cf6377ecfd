//! Go's memory controls: GC percent (and GOGC), the soft memory limit
//! (and GOMEMLIMIT), GODEBUG=gctrace=1, MemStats and AllocsPerRun. Cases
//! that set the environment or turn collection off run in a child process
//! (this test binary again, with the case in the environment); every test
//! is serial, as they read process-wide counts.

use defergc::gc;
use defergc::go::{self, Chan, WaitGroup};
use serial_test::serial;
use std::hint::black_box;
use std::process::{Command, Output};

const CASE: &str = "DEFERGC_TEST_MEMORY_CASE";

fn child(case: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child_cases",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env(CASE, case);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Garbage: `mib` MiB in 4 KiB objects, nothing kept.
fn churn(mib: usize) {
    for _ in 0..mib * 256 {
        black_box(gc::alloc(4096));
    }
}

/// Parked goroutines' stacks count in the pacing and in gctrace: the same
/// garbage takes far fewer collections while 20,000 goroutines each hold
/// 2 KiB of used stack (some 65 MB scanned, counted twice by bdwgc) than
/// before they were started (2 against 16 here; 16 when the stacks were
/// not counted, 5 when they were but the heap grew by bdwgc's thirds).
fn stacks_pace() {
    const N: usize = 20_000;
    let before = gc::read_memstats().num_gc;
    churn(64);
    let alone = gc::read_memstats().num_gc - before;
    let gate = Chan::<()>::new(0);
    let parked = std::sync::Arc::new(WaitGroup::new());
    parked.add(N as i32).unwrap();
    for _ in 0..N {
        let (gate, parked) = (gate.clone(), parked.clone());
        go::go(move || {
            let pad = black_box([7u8; 2048]);
            parked.done().unwrap();
            let _ = gate.recv();
            assert_eq!(black_box(&pad)[2047], 7);
        });
    }
    parked.wait();
    gc::collect();
    let before = gc::read_memstats().num_gc;
    churn(64);
    let with_stacks = gc::read_memstats().num_gc - before;
    eprintln!("collections: {alone} alone, {with_stacks} with {N} parked goroutines");
    assert!(alone >= 8, "too few collections to compare: {alone}");
    assert!(with_stacks * 4 <= alone, "{with_stacks} vs {alone}");
    gate.close();
}

/// Pending defer records count in the pacing as stacks do (Go keeps them
/// on the goroutine's stack): the same garbage takes far fewer
/// collections while 1,000,000 defers wait to run, each holding a GC
/// object (some 32 MB of records, scanned at every collection), than
/// before they were deferred (3 or 4 against 16 here; 5 when the records
/// were not counted, and gctrace showed no stack bytes). Every deferred
/// call then runs and finds its object.
fn defers_pace() {
    const N: u64 = 1_000_000;
    let before = gc::read_memstats().num_gc;
    churn(64);
    let alone = gc::read_memstats().num_gc - before;
    let ran = std::cell::Cell::new(0u64);
    let ran = &ran;
    let mut with_defers = 0;
    defergc::defer::call(|f| {
        for i in 0..N {
            let obj = gc::alloc(8).as_ptr().cast::<u64>();
            // SAFETY: a fresh 8-byte object.
            unsafe { obj.write(i) };
            f.defer(move || {
                // SAFETY: the record keeps obj alive until this runs.
                assert_eq!(unsafe { obj.read() }, i, "a deferred call's object changed");
                ran.set(ran.get() + 1);
            });
        }
        gc::collect();
        let before = gc::read_memstats().num_gc;
        churn(64);
        with_defers = gc::read_memstats().num_gc - before;
    });
    assert_eq!(ran.get(), N);
    eprintln!("collections: {alone} alone, {with_defers} with {N} pending defers");
    assert!(alone >= 8, "too few collections to compare: {alone}");
    assert!(with_defers * 4 <= alone, "{with_defers} vs {alone}");
}

/// The cases that run in a child: each prints `ok` or panics.
#[test]
fn child_cases() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    match case.as_str() {
        // GOGC=off: no collection however much is allocated.
        "gogc-off" => {
            assert_eq!(gc::gc_percent(), -1);
            let before = gc::read_memstats().num_gc;
            churn(128);
            assert_eq!(gc::read_memstats().num_gc, before, "collections while off");
        }
        // GOGC=off with a soft limit: collections come near the limit, and
        // the heap stays within a few times it.
        "off-with-limit" => {
            assert_eq!(gc::memory_limit(), 32 << 20);
            let before = gc::read_memstats().num_gc;
            churn(256);
            let m = gc::read_memstats();
            assert!(m.num_gc > before, "no collection near the limit");
            assert!(m.heap_sys < 4 * (32 << 20), "heap {} MiB", m.heap_sys >> 20);
        }
        // gctrace: one line per collection.
        "gctrace" => {
            for _ in 0..3 {
                gc::collect();
            }
        }
        // Parked goroutines' stacks count in the pacing and in gctrace:
        // the same garbage takes far fewer collections while 20,000
        // goroutines each hold 2 KiB of used stack (80 MB counted, as
        // bdwgc counts stacks twice) than before they were started.
        "stacks-pace" => assert_eq!(go::run(stacks_pace), 0),
        "defers-pace" => defers_pace(),
        "bad-gogc" | "bad-gomemlimit" => {
            gc::init();
        }
        other => panic!("unknown case {other}"),
    }
    println!("ok");
}

fn assert_ok(out: &Output, case: &str) {
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("ok\n"),
        "{case}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[serial]
fn gogc_off_stops_collections_and_a_limit_brings_them_back() {
    if gc::BACKEND != "bdwgc" {
        return; // Nothing is ever collected: off and limits are no-ops.
    }
    assert_ok(&child("gogc-off", &[("GOGC", "off")]), "gogc-off");
    assert_ok(
        &child(
            "off-with-limit",
            &[("GOGC", "off"), ("GOMEMLIMIT", "32MiB")],
        ),
        "off-with-limit",
    );
}

#[test]
#[serial]
fn gctrace_prints_one_line_per_collection_in_go_s_shape() {
    if gc::BACKEND != "bdwgc" {
        return; // No collections, no lines.
    }
    let out = child("gctrace", &[("GODEBUG", "gctrace=1")]);
    assert_ok(&out, "gctrace");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("gc ")).collect();
    assert!(lines.len() >= 3, "{stderr}");
    for line in &lines {
        // gc 1 @0.012s 2%: 0+0.43+0 ms clock, 0+0.43/0/0+0 ms cpu,
        // 4->4->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P
        let ok = line.contains("s ")
            && line.contains("%: ")
            && line.contains(" ms clock, ")
            && line.contains(" ms cpu, ")
            && line.contains(" MB goal, ")
            && line.contains(" MB stacks, ")
            && line.contains(" MB globals, ")
            && line.ends_with(" P");
        assert!(ok, "{line}");
    }
    let numbers: Vec<u64> = lines
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{numbers:?}");
}

#[test]
#[serial]
fn parked_goroutine_stacks_count_in_pacing_and_gctrace() {
    if gc::BACKEND != "bdwgc" {
        return; // No collections, no pacing.
    }
    // The forced collection with every goroutine parked: at least their
    // 2 KiB pads (about 39 MiB), in whole MB.
    assert_stacks_at_least("stacks-pace", 39);
}

/// Runs `case` with gctrace on: it passes, and its largest "MB stacks"
/// figure is at least `mb`.
fn assert_stacks_at_least(case: &str, mb: u64) {
    let out = child(case, &[("GODEBUG", "gctrace=1")]);
    assert_ok(&out, case);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stacks: Vec<u64> = stderr
        .lines()
        .filter(|l| l.starts_with("gc "))
        .filter_map(|l| {
            let at = l.find(" MB stacks")?;
            l[..at].rsplit(' ').next()?.parse().ok()
        })
        .collect();
    let most = stacks.iter().copied().max().unwrap_or(0);
    assert!(
        most >= mb,
        "{case}: stacks in gctrace: {stacks:?}\n{stderr}"
    );
}

#[test]
#[serial]
fn pending_defer_records_count_in_pacing_and_gctrace() {
    if gc::BACKEND != "bdwgc" {
        return; // No collections, no pacing.
    }
    // The forced collection with every defer pending: at least 16 bytes
    // of record a defer (about 15 MiB), in whole MB.
    assert_stacks_at_least("defers-pace", 15);
}

#[test]
#[serial]
fn malformed_environment_values_are_named() {
    let out = child("bad-gogc", &[("GOGC", "lots")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("defergc: GOGC=lots"));
    let out = child("bad-gomemlimit", &[("GOMEMLIMIT", "10 megs")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("defergc: GOMEMLIMIT=10 megs"));
}

#[test]
fn gomemlimit_syntax_is_go_s() {
    use gc::memory::parse_byte_size;
    assert_eq!(parse_byte_size("512MiB"), Some(512 << 20));
    assert_eq!(parse_byte_size("2GiB"), Some(2 << 30));
    assert_eq!(parse_byte_size("1TiB"), Some(1 << 40));
    assert_eq!(parse_byte_size("4096"), Some(4096));
    assert_eq!(parse_byte_size("7B"), Some(7));
    assert_eq!(parse_byte_size("10KB"), None);
    assert_eq!(parse_byte_size("-5"), None);
    assert_eq!(parse_byte_size("MiB"), None);
    assert_eq!(parse_byte_size("99999999999TiB"), None);
}

#[test]
#[serial]
fn set_gc_percent_returns_the_previous_one() {
    let first = gc::set_gc_percent(50);
    assert_eq!(gc::set_gc_percent(200), 50);
    assert_eq!(gc::set_gc_percent(first), 200);
    assert_eq!(gc::gc_percent(), first);
    let limit = gc::set_memory_limit(1 << 30);
    assert_eq!(gc::set_memory_limit(limit), 1 << 30);
}

#[test]
#[serial]
fn allocs_per_run_counts_exactly() {
    let n = gc::allocs_per_run(100, || {
        black_box(gc::alloc(16));
        black_box(gc::alloc(64));
        black_box(gc::alloc_atomic(256));
    });
    assert_eq!(n, 3.0);
    assert_eq!(gc::allocs_per_run(10, || {}), 0.0);
}

#[test]
#[serial]
fn memstats_follow_allocations_and_collections() {
    let before = gc::read_memstats();
    assert_eq!(before.size as usize, std::mem::size_of::<gc::MemStats>());
    for _ in 0..1000 {
        black_box(gc::alloc(32));
    }
    gc::collect();
    let after = gc::read_memstats();
    assert!(after.mallocs >= before.mallocs + 1000);
    if gc::BACKEND == "bdwgc" {
        assert!(after.num_gc > before.num_gc);
        assert!(after.total_alloc >= before.total_alloc + 32_000);
        assert!(after.heap_sys >= after.heap_alloc);
        assert!(after.last_gc > 0 && after.pause_total_ns > 0);
        let latest = ((after.num_gc + 255) % 256) as usize;
        assert!(after.pause_ns[latest] > 0 && after.pause_end[latest] == after.last_gc);
        assert!(after.heap_objects <= after.mallocs);
    } else {
        // Nothing is collected: only the counts move.
        assert_eq!(after.num_gc, 0);
    }
}

mod cprog;

/// defergc_init_with, MemStats, SetFinalizer, KeepAlive and weak pointers
/// from compiled code (tests/c/memory.c), in a process of its own (the
/// configuration must come first).
#[test]
fn memory_controls_from_c() {
    if gc::BACKEND != "bdwgc" {
        return; // Finalizers never run and nothing is collected.
    }
    let exe = cprog::compile("memory", &["tests/c/memory.c"], &[]);
    let out = cprog::run(&exe, &[], &[]);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "ok\n"),
        "{}",
        cprog::text(&out)
    );
}
