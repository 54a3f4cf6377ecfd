//! The million-defer stress through the C protocol (tests/c/stress.c,
//! linked with the static library of this bench build) against the Rust
//! API's `defergc stress`, on the same workload: each deferred call
//! captures a fresh 8-byte GC object holding its index, and the collector
//! runs when it decides to. Every run is a fresh process, C and Rust
//! alternating. `C_STRESS_RUNS` sets the runs of each (default 9).

mod common;
#[path = "../../tests/cprog/mod.rs"]
mod cprog;

use common::{field, median, run};
use std::process::Command;

fn main() {
    let Some(defergc) = option_env!("CARGO_BIN_EXE_defergc") else {
        println!("c_stress: skipped, the defergc binary is not built (feature `cli`)");
        return;
    };
    let runs = common::runs_from_env("C_STRESS_RUNS", 9);
    let mut c_cmd = Command::new(cprog::compile("c-stress", &["tests/c/stress.c"], &[]));
    c_cmd.arg("timing");
    let mut rust_cmd = Command::new(defergc);
    rust_cmd.args(["stress", "--json"]);
    let (mut c, mut rust) = (Vec::new(), Vec::new());
    for n in 1..=runs {
        c.push(field(&run(&mut c_cmd), "elapsed_ms"));
        rust.push(field(&run(&mut rust_cmd), "elapsed_ms"));
        println!(
            "run {n}/{runs}: C {:7.2} ms   Rust {:7.2} ms",
            c[n - 1],
            rust[n - 1]
        );
    }
    let (c_ms, rust_ms) = (median(&mut c), median(&mut rust));
    println!("C    median {c_ms:7.2} ms (1,000,000 defers)");
    println!("Rust median {rust_ms:7.2} ms (1,000,000 defers)");
    println!("C/Rust {:.3}", c_ms / rust_ms);
}
