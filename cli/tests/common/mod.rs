//! What the command's tests share: running it, and reading its JSON line.

use std::process::{Command, Output};

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
