//! Build script: builds or finds bdwgc.
//!
//! Order of decisions:
//! 1. A system bdwgc through pkg-config (`bdw-gc`), only when asked for with
//!    the `system` feature or `DEFERGC_SYSTEM_BDWGC=1`. A library that is
//!    too old or lacks thread support is refused with the reason.
//! 2. Otherwise the vendored source, `vendor/bdwgc/extra/gc.c`, compiled as
//!    one unit with the defines in [`VENDORED_DEFINES`].
//!
//! Everything a user of the crate and its tests need to know about the
//! result (vendored or system, which version, which defines, where the
//! archive and headers are) is written to `$OUT_DIR/build_info.rs`, which
//! `src/lib.rs` includes as `defergc_sys::build`; the include directory is
//! also published to dependents' build scripts as `DEP_GC_INCLUDE`.
//!
//! With the `bindgen` feature the bindings are regenerated into `$OUT_DIR`;
//! `scripts/bindings.sh` updates or checks the committed `src/bindings.rs`.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every `-D` given to the vendored build, each with the reason it is there.
/// This list is also what `defergc info` prints and what the bdwgc test
/// programs are compiled with, so they test exactly what we ship.
const VENDORED_DEFINES: &[(&str, &str)] = &[
    (
        "GC_THREADS",
        "thread support: Rust and foreign pthreads register and are stopped for marking",
    ),
    (
        "PARALLEL_MARK",
        "marker threads share the mark phase (one per extra core)",
    ),
    (
        "THREAD_LOCAL_ALLOC",
        "per-thread free lists: small allocations take no lock",
    ),
    (
        "GC_BUILTIN_ATOMIC",
        "use the compiler's __atomic builtins instead of libatomic_ops",
    ),
    (
        "ALL_INTERIOR_POINTERS",
        "a pointer into the middle of an object keeps it alive (Rust takes &field)",
    ),
    (
        "NO_EXECUTE_PERMISSION",
        "heap pages are mapped without PROT_EXEC",
    ),
    (
        "USE_MMAP",
        "grow the heap with mmap rather than sbrk, which the Rust allocator may also use",
    ),
    (
        "USE_MUNMAP",
        "return long-empty heap blocks to the OS so RSS follows the live heap",
    ),
    (
        "HANDLE_FORK",
        "keep the collector usable in the child after fork()",
    ),
    (
        "GC_ATOMIC_UNCOLLECTABLE",
        "provide GC_malloc_atomic_uncollectable for pointer-free root blocks",
    ),
    (
        "HAVE_PTHREAD_SETNAME_NP_WITH_TID",
        "marker threads are named GC-marker-N (glibc's pthread_setname_np), so that a \
         debugger, top -H and the tests can tell them from the program's threads",
    ),
    (
        "NO_MARKER_SPECIAL_SIGMASK",
        "marker threads take the mask of the thread that starts them: defergc starts them \
         with every signal blocked but SIGPROF, so that CPU profiles sample them",
    ),
];

/// The oldest system bdwgc that has every function the bindings use.
const SYSTEM_MIN_VERSION: &str = "8.2.0";
/// Releases before this one silently disable thread-local allocation.
const SYSTEM_GOOD_VERSION: &str = "8.2.8";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(defergc_vendored)");
    let info = if system_requested() {
        system_bdwgc().unwrap_or_else(|why| {
            panic!("defergc-sys: the system bdwgc was asked for and refused: {why}")
        })
    } else {
        println!("cargo:rustc-cfg=defergc_vendored");
        vendored_bdwgc()
    };
    check_bindings();
    info.write(&out_dir().join("build_info.rs"));
}

/// Reads an environment variable and tells cargo to rerun when it changes.
fn env_var(name: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={name}");
    env::var(name).ok()
}

fn env_flag(name: &str) -> bool {
    matches!(env_var(name).as_deref(), Some("1" | "true" | "yes"))
}

fn feature(name: &str) -> bool {
    let var = format!("CARGO_FEATURE_{}", name.to_uppercase().replace('-', "_"));
    env::var_os(var).is_some()
}

fn out_dir() -> PathBuf {
    PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

fn system_requested() -> bool {
    feature("system") || env_flag("DEFERGC_SYSTEM_BDWGC")
}

/// What the build found, as told to the crate through `build_info.rs`.
struct Found {
    source: &'static str,
    version: String,
    defines: Vec<(String, String)>,
    lib_dir: String,
    include_dirs: Vec<PathBuf>,
    link_args: Vec<String>,
}

impl Found {
    fn write(&self, path: &Path) {
        let mut s = String::new();
        // One documented constant: `decl` is `NAME: TYPE = VALUE`.
        let mut item = |doc: &str, decl: String| {
            let _ = writeln!(s, "/// {doc}\npub const {decl};");
        };
        // A slice literal of the items' Debug forms.
        fn slice<T: std::fmt::Debug>(items: impl IntoIterator<Item = T>) -> String {
            let items: Vec<String> = items.into_iter().map(|i| format!("    {i:?},\n")).collect();
            format!("&[\n{}]", items.concat())
        }
        item(
            "Where the collector came from: \"vendored\" or \"system\".",
            format!("SOURCE: &str = {:?}", self.source),
        );
        item(
            "bdwgc version the crate was built against.",
            format!("VERSION: &str = {:?}", self.version),
        );
        item(
            "The `-D` defines of the collector build, with why each is there.",
            format!("DEFINES: &[(&str, &str)] = {}", slice(&self.defines)),
        );
        item(
            "Directory holding the collector archive (vendored builds).",
            format!("LIB_DIR: &str = {:?}", self.lib_dir),
        );
        item(
            "Include directories for C code built against the same collector.",
            format!(
                "INCLUDE_DIRS: &[&str] = {}",
                slice(self.include_dirs.iter().map(|d| d.display().to_string()))
            ),
        );
        item(
            "Linker arguments for C programs linking the same collector.",
            format!("LINK_ARGS: &[&str] = {}", slice(&self.link_args)),
        );
        fs::write(path, s).expect("write build_info.rs");
    }
}

/// Compiles `vendor/bdwgc/extra/gc.c` as a single translation unit
/// (through `src/unit.c`, which adds two accessors to its internals).
fn vendored_bdwgc() -> Found {
    let root = manifest_dir().join("vendor/bdwgc");
    let include = root.join("include");
    println!("cargo:rerun-if-changed={}", root.display());
    println!("cargo:rerun-if-changed=src/unit.c");
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os != "linux" {
        println!(
            "cargo:warning=defergc: the vendored bdwgc configuration is tested on Linux only \
             (target_os = {target_os})"
        );
    }

    let mut build = cc::Build::new();
    build
        .file(manifest_dir().join("src/unit.c"))
        .include(&include)
        // The collector is the hot path of every test, debug builds included.
        .opt_level(2)
        // Third-party code: its warnings are upstream's, not ours.
        .warnings(false)
        .flag_if_supported("-fno-strict-aliasing")
        // A frame-pointer chain through the collector's frames, for the
        // runtime's signal-safe stack walk (a sample taken inside an
        // allocation walks through bdwgc).
        .flag_if_supported("-fno-omit-frame-pointer");
    for (name, _) in VENDORED_DEFINES {
        build.define(name, None);
    }
    build.compile("bdwgc");

    // cc prints the static link directive; the collector also needs pthreads.
    println!("cargo:rustc-link-lib=pthread");
    // Published to dependents' build scripts as DEP_GC_INCLUDE.
    println!("cargo:include={}", include.display());

    Found {
        source: "vendored",
        version: vendored_version(&include),
        defines: VENDORED_DEFINES
            .iter()
            .map(|(n, w)| (n.to_string(), w.to_string()))
            .collect(),
        lib_dir: out_dir().display().to_string(),
        include_dirs: vec![include],
        link_args: vec![
            format!("{}/libbdwgc.a", out_dir().display()),
            "-lpthread".into(),
        ],
    }
}

/// Reads `GC_TMP_VERSION_*` from the vendored `gc_version.h`.
fn vendored_version(include: &Path) -> String {
    let text = fs::read_to_string(include.join("gc/gc_version.h")).expect("read gc_version.h");
    let part = |key: &str| {
        text.lines()
            .find_map(|l| {
                let l = l.trim_start_matches('#').trim();
                let rest = l.strip_prefix("define")?.trim();
                let value = rest.strip_prefix(key)?.trim();
                value.split_whitespace().next()?.parse::<u32>().ok()
            })
            .unwrap_or_else(|| panic!("{key} not found in gc_version.h"))
    };
    format!(
        "{}.{}.{}",
        part("GC_TMP_VERSION_MAJOR"),
        part("GC_TMP_VERSION_MINOR"),
        part("GC_TMP_VERSION_MICRO")
    )
}

/// Finds a system bdwgc with pkg-config and checks that it is usable.
fn system_bdwgc() -> Result<Found, String> {
    let lib = pkg_config::Config::new()
        .atleast_version(SYSTEM_MIN_VERSION)
        .probe("bdw-gc")
        .map_err(|e| {
            format!("pkg-config found no bdw-gc >= {SYSTEM_MIN_VERSION} (install libgc-dev?): {e}")
        })?;
    if version_less(&lib.version, SYSTEM_GOOD_VERSION) {
        println!(
            "cargo:warning=defergc: system bdwgc {} is older than {SYSTEM_GOOD_VERSION}; \
             releases before it silently disable thread-local allocation, so small \
             allocations will be slower than with the vendored build",
            lib.version
        );
    }
    check_system_threads(&lib)?;
    let mut link_args: Vec<String> = lib
        .link_paths
        .iter()
        .map(|p| format!("-L{}", p.display()))
        .collect();
    link_args.extend(lib.libs.iter().map(|l| format!("-l{l}")));
    link_args.push("-lpthread".into());
    Ok(Found {
        source: "system",
        version: lib.version.clone(),
        defines: vec![(
            "GC_THREADS".into(),
            "the system library was checked to have thread support".into(),
        )],
        lib_dir: String::new(),
        include_dirs: lib.include_paths.clone(),
        link_args,
    })
}

/// Links (and, when not cross-compiling, runs) a probe that registers a
/// thread: a bdwgc built without threads has no GC_allow_register_threads.
fn check_system_threads(lib: &pkg_config::Library) -> Result<(), String> {
    let dir = out_dir().join("system-probe");
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let src = dir.join("probe.c");
    fs::write(
        &src,
        "#define GC_THREADS 1\n#include <gc.h>\n\
         int main(void) {\n  GC_INIT();\n  GC_allow_register_threads();\n\
         return GC_thread_is_registered() ? 0 : 1;\n}\n",
    )
    .map_err(|e| e.to_string())?;
    let exe = dir.join("probe");
    let compiler = cc::Build::new().get_compiler();
    let mut cmd = compiler.to_command();
    for inc in &lib.include_paths {
        cmd.arg(format!("-I{}", inc.display()));
    }
    cmd.arg(&src).arg("-o").arg(&exe);
    for p in &lib.link_paths {
        cmd.arg(format!("-L{}", p.display()));
    }
    for l in &lib.libs {
        cmd.arg(format!("-l{l}"));
    }
    cmd.arg("-lpthread");
    let out = cmd
        .output()
        .map_err(|e| format!("could not run the C compiler: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "it has no thread support: a probe using GC_allow_register_threads did not link:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if env::var("HOST") == env::var("TARGET") {
        let status = Command::new(&exe)
            .status()
            .map_err(|e| format!("could not run the probe: {e}"))?;
        if !status.success() {
            return Err(
                "its main thread is not registered after GC_INIT (no thread support)".into(),
            );
        }
    }
    Ok(())
}

fn version_less(a: &str, b: &str) -> bool {
    let parse = |v: &str| -> Vec<u32> {
        v.split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap_or(0))
            .collect()
    };
    parse(a) < parse(b)
}

/// With the `bindgen` feature: regenerate the bindings into `$OUT_DIR/sys.rs`.
/// `scripts/bindings.sh` copies them over `src/bindings.rs` (update) or fails
/// when the two differ (check); the build itself only warns.
#[cfg(feature = "bindgen")]
fn check_bindings() {
    let root = manifest_dir();
    let include = root.join("vendor/bdwgc/include");
    let committed_path = root.join("src/bindings.rs");
    println!("cargo:rerun-if-changed={}", committed_path.display());
    let generated = bindgen::Builder::default()
        .header(include.join("gc.h").display().to_string())
        .header(include.join("gc/gc_mark.h").display().to_string())
        .clang_arg(format!("-I{}", include.display()))
        .clang_arg("-DGC_THREADS")
        .clang_arg("-DGC_ATOMIC_UNCOLLECTABLE")
        .clang_arg("-DGC_NO_THREAD_REDIRECTS")
        .allowlist_function("GC_.*")
        .allowlist_type("GC_.*")
        .allowlist_var("GC_.*")
        // Thread creation wrappers are for C code; Rust registers threads itself.
        .blocklist_function("GC_pthread_.*|GC_dlopen")
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .expect("bindgen failed: is libclang installed (apt-get install libclang-dev)?")
        .to_string();
    let text = format!("{BINDINGS_PREAMBLE}{generated}");
    let out = out_dir().join("sys.rs");
    fs::write(&out, &text).expect("write generated bindings");
    let committed = fs::read_to_string(&committed_path).unwrap_or_default();
    if committed != text {
        println!(
            "cargo:warning=defergc-sys: src/bindings.rs differs from the bindings generated \
             from vendor/bdwgc/include; run `scripts/bindings.sh update`"
        );
    }
}

#[cfg(feature = "bindgen")]
const BINDINGS_PREAMBLE: &str = "\
//! Raw bdwgc bindings: generated by bindgen from vendor/bdwgc/include/gc.h and
//! gc/gc_mark.h with GC_THREADS defined. Do not edit; regenerate with
//! `scripts/bindings.sh update`. In defergc, only the `gc` module uses them.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]
#![allow(missing_docs, dead_code, unsafe_op_in_unsafe_fn, clippy::all)]

";

#[cfg(not(feature = "bindgen"))]
fn check_bindings() {}
