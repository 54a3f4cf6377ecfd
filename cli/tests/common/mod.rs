//! What the command's tests share: running it, reading its JSON line,
//! and checking a refusal.
#![allow(dead_code)] // not every test uses every helper

use std::process::{Command, Output};

mod skip;
#[allow(unused_imports)] // not every test skips
pub use skip::skipped;

/// Runs `defergc ARGS` and returns what it did.
pub fn defergc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_defergc"))
        .args(args)
        .output()
        .expect("the command runs")
}

/// The JSON line's value of `key` (a number or a literal).
pub fn field(json: &str, key: &str) -> String {
    let at = json
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("{key} missing from {json}"));
    json[at + key.len() + 3..]
        .split([',', '}'])
        .next()
        .unwrap()
        .to_string()
}

/// Refused with status 2 and a `defergc:` message containing `says`.
pub fn refused(args: &[&str], says: &str) {
    let out = defergc(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.starts_with("defergc: "), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed a report");
}
