//! What an address is called in a profile: the functions, files and
//! lines of the code at a return address (inlined frames too, from the
//! program's debug information or its symbol table alone), and a Rust
//! function's name as `go tool pprof` shows it.

/// A frame of a stack: function, file and line.
pub(crate) type Frame = (String, String, i64);

/// The frames of the call before the return address `pc`, innermost
/// first: the function the address is in, after the functions inlined
/// into it at that call (from the program's debug information, or its
/// symbol table alone).
pub(crate) fn symbols(pc: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    // (resolve looks up the byte before a return address itself.)
    crate::unwind::resolve(pc, |sym| {
        frames.push((
            sym.name()
                .map(|n| format!("{n:#}"))
                .unwrap_or_else(|| "?".into()),
            sym.filename()
                .map(|f| f.display().to_string())
                .unwrap_or_default(),
            i64::from(sym.lineno().unwrap_or(0)),
        ));
    });
    frames
}

/// A Rust function's demangled name as a profile shows it: the type for
/// a trait method (`<Vec<T> as FromIterator<T>>::from_iter` is
/// `alloc::vec::Vec::from_iter`), without generic arguments. pprof cuts
/// what is between angle brackets as C++ template arguments, which left
/// `::from_iter` of the full name; the full name stays the function's
/// system name.
pub(crate) fn display_name(full: &str) -> String {
    /// The index of the `>` that closes the `<` at `open`.
    fn closing(s: &[u8], open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (i, &c) in s.iter().enumerate().skip(open) {
            match c {
                b'<' => depth += 1,
                b'>' if i > 0 && s[i - 1] == b'-' => {}
                b'>' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }
    let b = full.as_bytes();
    let mut out = String::with_capacity(full.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'<' {
            let Some(end) = closing(b, i) else {
                out.push_str(&full[i..]);
                break;
            };
            let inner = &full[i + 1..end];
            let after_ident = out
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !after_ident {
                // A qualified path `<T as Trait>`: keep the type.
                let mut depth = 0i32;
                let mut cut = inner.len();
                for (k, c) in inner.char_indices() {
                    match c {
                        '<' => depth += 1,
                        '>' => depth -= 1,
                        ' ' if depth == 0 && inner[k..].starts_with(" as ") => {
                            cut = k;
                            break;
                        }
                        _ => {}
                    }
                }
                out.push_str(&display_name(&inner[..cut]));
            }
            // Generic arguments after a name are dropped.
            i = end + 1;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trait_methods_are_named_by_their_type_without_generic_arguments() {
        for (full, shown) in [
            (
                "<alloc::vec::Vec<T> as core::iter::traits::collect::FromIterator<T>>::from_iter",
                "alloc::vec::Vec::from_iter",
            ),
            (
                "<core::panic::unwind_safe::AssertUnwindSafe<F> as core::ops::function::FnOnce<()>>::call_once",
                "core::panic::unwind_safe::AssertUnwindSafe::call_once",
            ),
            (
                "<core::result::Result<V,E> as core::iter::traits::collect::FromIterator<core::result::Result<A,E>>>::from_iter::{{closure}}",
                "core::result::Result::from_iter::{{closure}}",
            ),
            (
                "defergc::cli::stress::run::{{closure}}",
                "defergc::cli::stress::run::{{closure}}",
            ),
            (
                "<&dyn core::ops::function::Fn<(), Output = i32> as core::ops::function::FnOnce<()>>::call_once",
                "&dyn core::ops::function::Fn::call_once",
            ),
            (
                "core::ptr::drop_in_place<alloc::string::String>",
                "core::ptr::drop_in_place",
            ),
        ] {
            assert_eq!(display_name(full), shown, "{full}");
        }
    }
}
