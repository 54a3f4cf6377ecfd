//! The README's C build commands, run as the README writes them, so that
//! they cannot drift from what works: each block marked
//! `<!-- readme-test: NAME -->` runs in bash from the repository root,
//! with this build's library directory in place of `target/release` (and
//! without the `cargo build` line: cargo built it already), a temporary
//! `$HOME`, and the C example's output checked.
//!
//! The installed-library block needs cargo-c and pkg-config (`apt-get
//! install cargo-c pkg-config`, as CI does); without them it is skipped
//! with a note. It builds the library again (cargo-c's own build, a minute
//! or two), so it is one of the slow tests: `cargo test -- --ignored`
//! runs it, and CI does. Runs in the default build only: the example and the
//! installed library are the default configuration.
#![cfg(all(defergc_boehm, not(feature = "precise")))]

mod skip;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The commands of the README block marked `name`, continuation lines
/// joined.
fn block(name: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let marker = format!("<!-- readme-test: {name} -->");
    let after = readme
        .split_once(&marker)
        .unwrap_or_else(|| panic!("README.md has no block {marker}"))
        .1;
    let mut commands: Vec<String> = Vec::new();
    let mut continued = false;
    for line in after.lines().skip(1) {
        let Some(code) = line.strip_prefix("    ") else {
            break;
        };
        let code = code.trim();
        let (text, more) = match code.strip_suffix('\\') {
            Some(t) => (t.trim_end(), true),
            None => (code, false),
        };
        if continued {
            let last = commands.last_mut().unwrap();
            last.push(' ');
            last.push_str(text);
        } else {
            commands.push(text.to_string());
        }
        continued = more;
    }
    assert!(!commands.is_empty(), "block {name} is empty");
    commands
}

/// The directory of the library this build produced (next to the test).
fn lib_dir() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs block `name` and returns what it printed.
fn run_block(name: &str) -> String {
    let script: Vec<String> = block(name)
        .into_iter()
        .filter(|c| !c.starts_with("cargo build"))
        .map(|c| c.replace("target/release", &lib_dir().display().to_string()))
        .collect();
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("readme-{name}"));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("set -euo pipefail\n{}", script.join("\n")))
        .current_dir(root())
        .env("HOME", &home)
        .env(
            "CAPI_DIR",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi-build"),
        )
        .output()
        .expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "README block {name} failed ({}):\n{}\n---\n{text}",
        out.status,
        script.join("\n")
    );
    text
}

/// What examples/c/generated.c prints when it worked.
fn worked(text: &str) {
    assert!(
        text.contains("sum of 1..100000 = 5000050000, visits 100000")
            && text.contains("recovered the node"),
        "{text}"
    );
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_static_library_build_of_the_readme_works() {
    worked(&run_block("c-static"));
}

#[test]
fn the_shared_library_build_of_the_readme_works() {
    worked(&run_block("c-shared"));
}

#[test]
#[ignore = "slow (cargo-c builds the library again): cargo test -- --ignored"]
fn the_installed_library_build_of_the_readme_works() {
    if !have("cargo-cinstall") || !have("pkg-config") {
        skip::skipped(
            "the README's installed-library build",
            "cargo-c or pkg-config is not installed (apt-get install cargo-c pkg-config)",
        );
        return;
    }
    worked(&run_block("c-installed"));
    // The installed shared library carries a versioned SONAME.
    let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme-c-installed");
    let out = Command::new("readelf")
        .arg("-d")
        .arg(home.join(".local/lib/libdefergc.so"))
        .output()
        .expect("readelf runs");
    let dynamic = String::from_utf8_lossy(&out.stdout);
    assert!(
        dynamic.contains("Library soname: [libdefergc.so.0]"),
        "{dynamic}"
    );
}
