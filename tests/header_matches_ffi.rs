//! include/defergc.h is written by hand (its comments are the C
//! documentation) and src/ffi implements it: this test reads both and
//! fails when they disagree on a function's existence, its parameters or
//! its result, type by type (Rust types mapped to the C types they are
//! ABI-equivalent to, typedefs resolved), and on the size of the sync
//! types C code embeds.

use std::collections::BTreeMap;
use std::path::Path;

/// One function: its parameter types and result, canonical C spelling.
#[derive(Debug, PartialEq, Eq)]
struct Sig {
    params: Vec<String>,
    ret: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Removes /* */ and // comments and preprocessor lines (with their
/// backslash-continued lines: a macro's body).
fn strip_c(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        rest = &rest[at + 2..];
        let end = rest.find("*/").expect("unterminated comment");
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    let mut continued = false;
    out.lines()
        .filter(|l| {
            let directive = continued || l.trim_start().starts_with('#');
            continued = directive && l.trim_end().ends_with('\\');
            !directive
        })
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The canonical spelling both sides are compared in: "const void *".
fn spelled(is_const: bool, base: &str, stars: usize) -> String {
    let constness = if is_const { "const " } else { "" };
    format!("{constness}{base}{}", " *".repeat(stars))
}

/// A C type in canonical form: typedefs to scalars resolved, `const` kept
/// only on pointees, spaces normalised ("const void *").
fn canon_c(ty: &str) -> String {
    let ty = ty
        .replace("DEFERGC_NORETURN", "")
        .replace("struct ", "")
        .replace('*', " * ");
    let words: Vec<&str> = ty.split_whitespace().collect();
    let stars = words.iter().filter(|w| **w == "*").count();
    let is_const = words.first() == Some(&"const") && stars > 0;
    let base = words
        .iter()
        .find(|w| **w != "*" && **w != "const")
        .copied()
        .unwrap_or("");
    let base = match base {
        "defergc_handle" | "defergc_tls_key" => "uint64_t",
        "defergc_type" => "uint32_t",
        // The same width and ABI on every Linux target.
        "uintptr_t" => "size_t",
        // Function pointer typedefs: any function pointer (their own
        // parameter lists are not compared).
        "defergc_fn" | "defergc_go_fn" => "fnptr",
        other => other,
    };
    spelled(is_const, base, stars)
}

/// The header's functions: `ret name(params);`.
fn header() -> BTreeMap<String, Sig> {
    let text = strip_c(&std::fs::read_to_string(root().join("include/defergc.h")).unwrap())
        .replace("extern \"C\" {", "");
    let mut out = BTreeMap::new();
    for decl in text.split(';') {
        let decl = decl.trim();
        let Some(open) = decl.find("(") else { continue };
        if decl.starts_with("typedef") || !decl.ends_with(')') {
            continue;
        }
        let head = decl[..open].trim();
        let Some(name_at) = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')) else {
            continue;
        };
        let name = &head[name_at + 1..];
        if !name.starts_with("defergc_") {
            continue;
        }
        let ret = canon_c(&head[..=name_at]);
        let inner = &decl[open + 1..decl.len() - 1];
        let params = if inner.trim() == "void" {
            Vec::new()
        } else {
            split_params(inner)
                .iter()
                .map(|p| {
                    // A function pointer parameter: `ret (*name)(args)`.
                    if p.contains("(*") {
                        return "fnptr".to_string();
                    }
                    // Drop the parameter's name.
                    let p = p.trim();
                    let cut = p
                        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .map_or(0, |i| i + 1);
                    canon_c(&p[..cut])
                })
                .collect()
        };
        out.insert(name.to_string(), Sig { params, ret });
    }
    out
}

/// Splits at commas outside parentheses.
fn split_params(s: &str) -> Vec<String> {
    let (mut depth, mut cur, mut out) = (0, String::new(), Vec::new());
    let mut prev = ' ';
    for c in s.chars() {
        let arrow = prev == '-' && c == '>';
        prev = c;
        match c {
            '(' | '<' => depth += 1,
            ')' | '>' if !arrow => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

/// The C type a Rust FFI type is ABI-equivalent to.
fn canon_rust(ty: &str) -> String {
    let ty = ty.trim().replace("std::ffi::", "").replace("libc::", "");
    if ty.starts_with("Option<") || ty.starts_with("unsafe extern") || ty.starts_with("extern") {
        return "fnptr".to_string();
    }
    let mut stars = 0;
    let mut is_const = false;
    let mut t = ty.as_str();
    loop {
        // The innermost pointer says whether the pointee is const (C's
        // `const char **` is Rust's `*mut *const c_char`).
        if let Some(rest) = t.strip_prefix("*mut ") {
            is_const = false;
            stars += 1;
            t = rest.trim();
        } else if let Some(rest) = t.strip_prefix("*const ") {
            is_const = true;
            stars += 1;
            t = rest.trim();
        } else {
            break;
        }
    }
    let base = match t {
        "c_int" | "i32" => "int",
        "c_char" => "char",
        "usize" => "size_t",
        "CFn" => "fnptr",
        "GoFn" => "fnptr",
        "isize" => "ptrdiff_t",
        "u64" => "uint64_t",
        "i64" => "int64_t",
        "u32" => "uint32_t",
        "u8" => "uint8_t",
        "c_void" => "void",
        "()" | "!" => "void",
        "CFrame" | "Frame" => "defergc_frame",
        "CallToken" | "Call" => "defergc_call",
        "CChan" => "defergc_chan",
        "CTimer" => "defergc_timer",
        "CSelectCase" => "defergc_select_case",
        "RType" => "defergc_rtype",
        "CIface" => "defergc_iface",
        "FuncInfo" => "defergc_funcinfo",
        "MemStats" => "defergc_memstats",
        "CConfig" => "defergc_config",
        "CFinalizer" => "fnptr",
        "CleanupFn" => "fnptr",
        "Cleanup" => "defergc_cleanup",
        "CGoroutine" => "defergc_goroutine",
        "Mutex" => "defergc_mutex",
        "RwMutex" => "defergc_rwmutex",
        "WaitGroup" => "defergc_wg",
        "Once" => "defergc_once",
        "Cond" => "defergc_cond",
        "Stats" | "CStats" => "defergc_stats",
        "PreciseStats" => "defergc_precise_stats",
        "pthread_t" => "pthread_t",
        "pthread_attr_t" => "pthread_attr_t",
        other => other,
    };
    // (A `*const *mut`, C's `T *const *`, would need more: none today.)
    spelled(is_const, base, stars)
}

/// The Rust side: every `fn defergc_*(...)` in src/ffi (plain functions
/// and the precise surface's macro list alike).
fn ffi() -> BTreeMap<String, Sig> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("src/ffi")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("fn defergc_") {
            let decl = &rest[at + 3..];
            let open = decl.find('(').unwrap();
            let name = decl[..open].trim().to_string();
            // The parameter list ends at the matching parenthesis.
            let mut depth = 0;
            let mut close = open;
            for (i, c) in decl[open..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = open + i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let params = split_params(&decl[open + 1..close])
                .iter()
                .filter(|p| !p.trim().is_empty())
                .map(|p| canon_rust(p.split_once(':').map_or("", |(_, t)| t)))
                .collect();
            let after = decl[close + 1..].trim_start();
            // (The precise surface's macro list writes `-> T, err {`, the
            // entry points that name their caller `-> ! => implementation`.)
            let ret = match after.strip_prefix("->") {
                Some(r) => canon_rust(r.split(['{', '\n', ',', '=']).next().unwrap()),
                None => "void".to_string(),
            };
            out.insert(name, Sig { params, ret });
            rest = &decl[close..];
        }
    }
    out
}

#[test]
fn every_header_function_is_implemented_with_its_signature() {
    let (h, r) = (header(), ffi());
    assert!(
        h.len() >= 90,
        "the header parse found only {} functions",
        h.len()
    );
    let mut problems = Vec::new();
    for (name, sig) in &h {
        match r.get(name) {
            None => problems.push(format!("{name}: in the header, not in src/ffi")),
            Some(rs) if rs != sig => problems.push(format!(
                "{name}: header {:?} -> {}, src/ffi {:?} -> {}",
                sig.params, sig.ret, rs.params, rs.ret
            )),
            Some(_) => {}
        }
    }
    for name in r.keys() {
        if !h.contains_key(name) {
            problems.push(format!("{name}: in src/ffi, not in the header"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_notices_a_difference() {
    // The negative control: the parsers see what they must.
    assert_eq!(canon_c("const void *"), canon_rust("*const c_void"));
    assert_ne!(canon_c("void *"), canon_rust("*const c_void"));
    assert_ne!(canon_c("size_t"), canon_rust("u32"));
    let h = header();
    assert_eq!(
        h["defergc_defer"],
        Sig {
            params: vec![
                "defergc_frame *".into(),
                "fnptr".into(),
                "const void *".into(),
                "size_t".into()
            ],
            ret: "void".into()
        }
    );
}

/// The header's size and alignment of each sync type (`uintN_t
/// opaque_[K]`), which C code embeds by value.
fn opaque(name: &str) -> (usize, usize) {
    let text = std::fs::read_to_string(root().join("include/defergc.h")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("typedef struct {name} {{")))
        .unwrap_or_else(|| panic!("{name} is not declared"));
    let word = line.split("uint").nth(1).unwrap();
    let bits: usize = word[..word.find('_').unwrap()].parse().unwrap();
    let count = &line[line.find('[').unwrap() + 1..line.find(']').unwrap()];
    let count: usize = count.parse().unwrap();
    (bits / 8 * count, bits / 8)
}

/// C code allocates the sync types by the header's size: the runtime's
/// own must be that size (no larger, or it writes past the C object) and
/// need no stricter alignment.
#[test]
fn the_sync_types_are_the_size_the_header_says() {
    use defergc::go::{Cond, Mutex, Once, RwMutex, WaitGroup};
    use std::mem::{align_of, size_of};
    let rust = [
        ("defergc_mutex", size_of::<Mutex>(), align_of::<Mutex>()),
        (
            "defergc_rwmutex",
            size_of::<RwMutex>(),
            align_of::<RwMutex>(),
        ),
        (
            "defergc_wg",
            size_of::<WaitGroup>(),
            align_of::<WaitGroup>(),
        ),
        ("defergc_once", size_of::<Once>(), align_of::<Once>()),
        ("defergc_cond", size_of::<Cond>(), align_of::<Cond>()),
    ];
    for (name, size, align) in rust {
        let (c_size, c_align) = opaque(name);
        assert_eq!(
            size, c_size,
            "{name}: the runtime's is {size} bytes, the header's {c_size}"
        );
        assert!(
            align <= c_align,
            "{name}: aligned to {align}, the header to {c_align}"
        );
    }
}
