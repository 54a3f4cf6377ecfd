//! The Go programs the benchmarks compare with (`benches/go/`) run the
//! same workloads under the same names: checked where Go is installed
//! (`apt-get install golang-go`), skipped with a note elsewhere.

mod common;

use std::path::Path;
use std::process::Command;

fn have_go() -> bool {
    Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `defergc ARGS` from the repository root (where `--go` finds the Go
/// programs); its JSON lines.
fn json_lines(args: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_defergc"))
        .args(args)
        .current_dir(root)
        .output()
        .expect("the command runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(str::to_string)
        .collect()
}

#[test]
fn gcbench_workloads_run_in_go_under_the_same_names() {
    if !have_go() {
        common::skipped(
            "the Go baselines",
            "Go is not installed (apt-get install golang-go)",
        );
        return;
    }
    if defergc::gc::BACKEND != "bdwgc" {
        return; // gcbench needs bdwgc (this build has no collector).
    }
    for (workload, extra) in [
        ("binary-trees", vec!["--depth", "8"]),
        ("live-heap", vec!["--live-mb", "4"]),
    ] {
        let mut args = vec![
            "gcbench",
            "--workload",
            workload,
            "--runs",
            "1",
            "--go",
            "--json",
        ];
        args.extend(extra);
        let lines = json_lines(&args);
        assert_eq!(lines.len(), 2, "{workload}: {lines:?}");
        let name = format!("\"bench\":\"{workload}\"");
        assert!(lines.iter().all(|l| l.contains(&name)), "{lines:?}");
        assert!(lines[1].contains("\"impl\":\"go\""), "{lines:?}");
    }
}

/// `bench NAME --go` prints one table of both rows with the ratio of the
/// medians (the JSON lines only with `--json`).
#[test]
fn bench_with_go_prints_one_table_with_the_ratio() {
    if !have_go() {
        common::skipped(
            "the Go baseline table",
            "Go is not installed (apt-get install golang-go)",
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_defergc"))
        .args(["bench", "chan-pingpong", "--runs", "2", "--go"])
        .current_dir(root)
        .output()
        .expect("the command runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("go: {"), "a raw JSON line: {text}");
    let row = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row: {text}"))
            .to_string()
    };
    assert!(
        row("defergc ").contains("MiB") && row("go ").contains("MiB"),
        "{text}"
    );
    assert!(
        text.contains("defergc / go: ") && text.contains("x\n"),
        "{text}"
    );
}
