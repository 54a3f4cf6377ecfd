//! The heap profile, written: the sampled sites the collector hands over
//! (`gc::profile`, whose public entry points call [`write`]) as a pprof
//! profile with Go's sample types `alloc_objects`, `alloc_space`,
//! `inuse_objects`, `inuse_space` (count, bytes), `inuse_space` shown by
//! default, and the sampling rate as its period. The runtime's own frames at the top of each stack (the
//! collector, the sampler, the layers an allocation passes through) are
//! left out, so that a sample names the code that allocated.

use super::builder::Builder;
use super::symbols::symbols;
use std::io::Write;

/// Whether `f` is the runtime's own (left out at the top of a sampled
/// stack, so that a sample names the code that allocated, as Go's name
/// the user's function): the collector, the sampler, the other layers an
/// allocation passes through (a C entry point, its panic guard), and the
/// C ABI's entry symbols.
fn is_allocator_function(f: &str) -> bool {
    const RUNTIME: [&str; 13] = [
        "defergc::gc::",
        "defergc::unwind::",
        "defergc::ffi::",
        "defergc::defer::",
        "defergc::go::",
        "defergc::precise::",
        "defergc::roots::",
        "defergc::tls::",
        "defergc::fresh::",
        "defergc::context::",
        "backtrace::",
        "std::panicking::",
        "std::panic::catch_unwind",
    ];
    let f = f.strip_prefix('<').unwrap_or(f);
    RUNTIME.iter().any(|p| f.starts_with(p))
        || f.starts_with("core::panic::unwind_safe::AssertUnwindSafe")
        || f.starts_with("defergc_")
}

/// Where a sample's stack starts once the collector's own frames are
/// left out: the first return address with a frame that is not the
/// collector's, and how many (inlined) frames of it to leave out. In an
/// optimised build the allocation is inlined into its caller, so one
/// return address holds both the collector's frames and the caller's.
pub(super) fn user_start(stack: &[usize]) -> (usize, usize) {
    for (i, &pc) in stack.iter().enumerate() {
        let frames = symbols(pc);
        if frames.is_empty() {
            return (i, 0);
        }
        if let Some(skip) = frames
            .iter()
            .position(|(f, _, _)| !is_allocator_function(f))
        {
            return (i, skip);
        }
    }
    (stack.len(), 0)
}

/// Go's `pprof.WriteHeapProfile`: `sites` (each a stack of return
/// addresses, innermost first, and its objects and bytes allocated and in
/// use), sampled at `rate`, in pprof's protobuf format.
pub(crate) fn write(
    sites: Vec<(Vec<usize>, [f64; 4])>,
    rate: i64,
    out: impl Write,
) -> std::io::Result<()> {
    let mut b = Builder::new(
        &[
            ("alloc_objects", "count"),
            ("alloc_space", "bytes"),
            ("inuse_objects", "count"),
            ("inuse_space", "bytes"),
        ],
        ("space", "bytes"),
        rate.max(1),
    );
    b.default_sample_type("inuse_space");
    for (stack, values) in sites {
        let (start, skip) = user_start(&stack);
        // (The unwinder ends some stacks with a zero address: the builder
        // leaves zeros out.)
        let values = values.iter().map(|v| v.round() as i64).collect();
        b.sample(&stack[start..], skip, values, &[]);
    }
    b.write(out)
}
