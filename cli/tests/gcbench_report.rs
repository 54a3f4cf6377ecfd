//! `gcbench --json` reports what it measured: each backend's wall time and
//! the processor time its runs took (`cpu_ms`: every thread of the process,
//! the collector's own included), and with `--backend both` their ratios.
//! (Under `nogc` the command has no collector to run GCBench on.)
#![cfg(not(feature = "nogc"))]

mod common;

use common::{defergc, field};

/// Runs `defergc gcbench ARGS --json` and returns its JSON line.
fn gcbench_json(args: &[&str]) -> String {
    let out = defergc(&[&["gcbench"], args, &["--json"]].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?}: {}{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .rfind(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("{args:?} printed no JSON: {stdout}"))
        .to_string()
}

/// The JSON line's number at `key`.
fn number(json: &str, key: &str) -> f64 {
    field(json, key)
        .parse()
        .unwrap_or_else(|e| panic!("{key} in {json}: {e}"))
}

/// A backend's processor time is some, and no more than its slowest run's
/// wall time on every core this process may use (with room for the
/// accounting's granularity and a precise collector's settling).
fn check_cpu(json: &str, prefix: &str) {
    let cpu = number(json, &format!("{prefix}cpu_ms"));
    let max = number(json, &format!("{prefix}max_ms"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    assert!(cpu > 0.0, "{prefix}: no processor time in {json}");
    assert!(
        cpu <= max * cores * 1.5 + 50.0,
        "{prefix}: {cpu} ms of processor time in runs of at most {max} ms on {cores} cores: {json}"
    );
}

#[test]
fn a_run_reports_its_processor_time() {
    let json = gcbench_json(&["--workload", "live-heap", "--live-mb", "8", "--runs", "3"]);
    check_cpu(&json, "");
}

#[cfg(feature = "precise")]
#[test]
fn taking_turns_reports_both_processor_times_and_their_ratio() {
    let json = gcbench_json(&[
        "--backend",
        "both",
        "--workload",
        "live-heap",
        "--live-mb",
        "8",
        "--runs",
        "3",
    ]);
    check_cpu(&json, "bdwgc_");
    check_cpu(&json, "precise_");
    let ratio = number(&json, "cpu_ratio");
    let expected = number(&json, "precise_cpu_ms") / number(&json, "bdwgc_cpu_ms");
    // The line's numbers carry three decimals.
    assert!(
        (ratio - expected).abs() <= 0.002 * expected.max(1.0),
        "cpu_ratio {ratio}, the medians make {expected}: {json}"
    );
}

/// Every workload checks its live data after each run (node counts, the
/// long-lived array), so a collector that frees a live object, or a
/// workload that holds an unrooted reference across a safepoint, fails
/// the command. At these sizes each backend collects many times.
#[cfg(feature = "precise")]
#[test]
fn every_workload_keeps_its_live_data_on_both_backends() {
    for args in [
        &["--workload", "gcbench"][..],
        &["--workload", "binary-trees", "--depth", "16"],
        &["--workload", "live-heap", "--live-mb", "8"],
        &["--workload", "gcbench-mt2"],
    ] {
        let json = gcbench_json(&[&["--backend", "both", "--runs", "2"], args].concat());
        for backend in ["bdwgc", "precise"] {
            let collections = number(&json, &format!("{backend}_collections"));
            assert!(
                collections >= 2.0,
                "{args:?}: {backend} collected {collections} times: {json}"
            );
        }
    }
}

/// `--memory-limit-mb` is the precise heap's soft limit (Go's
/// GOMEMLIMIT): the live-heap workload (16 MiB live, twice that at
/// GOGC=100 alone) stays at a 24 MiB limit, its live data checked after
/// each run; the JSON line says what limit was set. bdwgc has no such
/// setting, and the command says so.
#[cfg(feature = "precise")]
#[test]
fn the_memory_limit_holds_the_live_heap_workload() {
    let json = gcbench_json(&[
        "--backend",
        "precise",
        "--workload",
        "live-heap",
        "--live-mb",
        "16",
        "--memory-limit-mb",
        "24",
        "--runs",
        "2",
    ]);
    assert_eq!(number(&json, "memory_limit_mb"), 24.0, "{json}");
    // The limit is soft (an allocation waits for a few cycles, then the
    // heap grows); it holds at 24.0 MiB here, against 26.5-30.3 MiB with
    // the goal it sets alone and 34-35 with no limit (this test's build).
    let peak = number(&json, "peak_heap_bytes");
    assert!(
        peak <= 25.0 * 1048576.0,
        "peak heap {:.1} MiB under a 24 MiB limit: {json}",
        peak / 1048576.0
    );
    common::refused(
        &["gcbench", "--memory-limit-mb", "24"],
        "defergc: gcbench: --memory-limit-mb applies to the precise backend only",
    );
}
