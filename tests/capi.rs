//! The C library as a C user installs it: `cargo cinstall` (through
//! `scripts/capi.sh`) into a temporary prefix, then the README's example
//! program built with `pkg-config --cflags --libs defergc` against the
//! installed shared library, and run.
//!
//! Needs cargo-c and pkg-config (`apt-get install cargo-c pkg-config`, as
//! CI does); without them the test says so and passes. Runs in the default
//! build only: the installed library is the default configuration.
#![cfg(all(defergc_boehm, not(feature = "precise")))]

mod skip;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn check(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_c_program_builds_with_pkg_config_against_the_installed_library() {
    if !have("cargo-cinstall") || !have("pkg-config") {
        skip::skipped(
            "the C library install test",
            "cargo-c or pkg-config is not installed (apt-get install cargo-c pkg-config)",
        );
        return;
    }
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi");
    let prefix = tmp.join("prefix");
    let _ = std::fs::remove_dir_all(&prefix);
    check(
        Command::new(root().join("scripts/capi.sh"))
            .arg("install")
            .arg(&prefix)
            .env("CAPI_DIR", tmp.join("build")),
    );
    let libdir = prefix.join("lib");
    // The shared library carries a versioned SONAME.
    let dynamic = check(
        Command::new("readelf")
            .arg("-d")
            .arg(libdir.join("libdefergc.so")),
    );
    assert!(
        dynamic.contains("Library soname: [libdefergc.so.0]"),
        "{dynamic}"
    );
    let flags = check(
        Command::new("pkg-config")
            .args(["--cflags", "--libs", "defergc"])
            .env("PKG_CONFIG_PATH", libdir.join("pkgconfig")),
    );
    let exe = tmp.join("generated");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    check(
        Command::new(&cc)
            .arg("-O2")
            .arg(root().join("examples/c/generated.c"))
            .args(flags.split_whitespace())
            .arg(format!("-Wl,-rpath,{}", libdir.display()))
            .arg("-o")
            .arg(&exe),
    );
    let out = check(&mut Command::new(&exe));
    assert!(
        out.contains("sum of 1..100000 = 5000050000, visits 100000"),
        "{out}"
    );
    assert!(out.contains("recovered the node"), "{out}");
}
