//! Go's tools, where a test reads a profile with them (optional: Go is
//! not on every machine, and the tests say what they skipped without
//! it). Test crates include it with `mod gotool;`.
#![allow(dead_code)] // not every test uses every helper

use std::path::Path;
use std::process::{Command, Output};

/// Whether `go` runs here.
pub fn have_go() -> bool {
    Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `go tool pprof -top`, with `extra` flags, of the profile at `path`.
pub fn pprof_top(path: &Path, extra: &[&str]) -> Output {
    Command::new("go")
        .args(["tool", "pprof", "-top"])
        .args(extra)
        .arg(path)
        .output()
        .unwrap()
}

/// The first row after `pprof -top`'s header: the function with the most
/// flat samples.
pub fn first_row(text: &str) -> &str {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .nth(1)
        .unwrap_or("")
}
