//! Saying that a test skipped part of its work, where `cargo test` shows
//! it without `--nocapture`: the line goes straight to the process's
//! standard error (the test harness captures only `print!` and
//! `eprint!`), so a run without an optional tool says what it did not
//! check instead of passing quietly.

use std::io::Write;

/// Prints `SKIPPED <what>: <why>` on the real standard error.
pub fn skipped(what: &str, why: &str) {
    let line = format!("SKIPPED {what}: {why}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
