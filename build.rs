//! Build script: tells the crate which collector backend it has.
//!
//! `cfg(defergc_boehm)` when the `bdwgc` feature is on and `nogc` is not:
//! `nogc` takes precedence, so that `--features nogc` works without
//! `--no-default-features` (see the feature table in `Cargo.toml`). The
//! collector itself is built by the `defergc-sys` crate.

use std::env;

fn feature(name: &str) -> bool {
    let var = format!("CARGO_FEATURE_{}", name.to_uppercase().replace('-', "_"));
    env::var_os(var).is_some()
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Dependents that compile C against the library find the header here.
    let include = std::path::Path::new(&env::var("CARGO_MANIFEST_DIR").expect("set by cargo"))
        .join("include");
    println!("cargo:include={}", include.display());
    println!("cargo:rustc-check-cfg=cfg(defergc_boehm)");
    if feature("bdwgc") && !feature("nogc") {
        println!("cargo:rustc-cfg=defergc_boehm");
    } else if feature("nogc") && feature("system-bdwgc") {
        println!(
            "cargo:warning=defergc: `nogc` takes precedence: the system bdwgc that \
             `system-bdwgc` links is not used"
        );
    }
}
