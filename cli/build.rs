//! Build script: compiles the benchmarks whose goroutine bodies are C, as
//! compiled code would be, against the library's header (which the library
//! publishes to dependents as DEP_DEFERGC_INCLUDE).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=c/go_bench.c");
    let include = std::env::var("DEP_DEFERGC_INCLUDE")
        .expect("the defergc library publishes its include directory");
    cc::Build::new()
        .file("c/go_bench.c")
        .include(&include)
        .opt_level(2)
        .compile("defergc_cli_bench");
}
