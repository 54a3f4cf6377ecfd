//! Helpers shared by the benches that time whole programs in fresh
//! processes (each bench includes this module with `mod common;`).
#![allow(dead_code)] // not every bench uses every helper

use std::process::Command;

/// Runs `cmd` to completion and returns its last line of output; panics
/// unless it exits with status 0.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .last()
        .unwrap_or_else(|| panic!("{cmd:?} printed nothing"))
        .to_string()
}

/// The number after `"key":` in a flat one-line JSON object.
pub fn field(line: &str, key: &str) -> f64 {
    let tag = format!("\"{key}\":");
    let start = line
        .find(&tag)
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        + tag.len();
    let rest = &line[start..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end]
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{key} in {line}: {e}"))
}

#[path = "../../src/cli/stats.rs"]
mod stats;
pub use stats::median;

/// The number of runs from the environment variable `var`, or `default`.
pub fn runs_from_env(var: &str, default: usize) -> usize {
    match std::env::var(var) {
        Ok(v) => v
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("{var}={v:?} is not a positive number")),
        Err(_) => default,
    }
}
