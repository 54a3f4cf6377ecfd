//! The block and mutex profiles, written: the samples the scheduler hands
//! over (`go::contention`, each a stack of return addresses, innermost
//! first, its event count and its delay in nanoseconds) as a pprof
//! profile with Go's sample types `contentions/count` and
//! `delay/nanoseconds`, period type `contentions/count`, period 1, as Go's
//! `runtime/pprof` writes both (the mutex profile's values are already
//! scaled up by its fraction when recorded, as Go's are).
//!
//! The frames of the blocking primitive at the top of each stack (the
//! park, the wait loop, the semaphore) are left out, so that a sample
//! starts at the runtime call the program made (a channel receive, a
//! `Mutex::unlock`), as Go's starts at `runtime.chanrecv1` or
//! `sync.(*Mutex).Unlock`.

use super::builder::Builder;
use super::symbols::symbols;
use std::io::Write;

/// Whether `f` is a frame of the blocking machinery, left out at the top
/// of a stack.
fn is_machinery(f: &str) -> bool {
    const MACHINERY: [&str; 5] = [
        "defergc::go::sched::",
        "defergc::go::wait::",
        "defergc::go::sema::",
        "defergc::go::contention::",
        "defergc::unwind::",
    ];
    let f = f.strip_prefix('<').unwrap_or(f);
    MACHINERY.iter().any(|p| f.starts_with(p))
        || f.starts_with("defergc::go::goroutine::park")
        || f.ends_with("::park_unlocking")
}

/// Where a stack starts once the machinery's frames are left out: the
/// first return address with a frame that is not the machinery's, and
/// how many inlined frames of it to leave out.
fn caller_start(stack: &[usize]) -> (usize, usize) {
    for (i, &pc) in stack.iter().enumerate() {
        let frames = symbols(pc);
        if frames.is_empty() {
            return (i, 0);
        }
        if let Some(skip) = frames.iter().position(|(f, _, _)| !is_machinery(f)) {
            return (i, skip);
        }
    }
    (0, 0)
}

/// One stack's events: how many (Go's scaled count) and their delay.
pub(crate) struct Contention {
    /// Return addresses, innermost first.
    pub(crate) stack: Vec<usize>,
    /// Events, scaled for the sampling.
    pub(crate) count: f64,
    /// Nanoseconds, scaled for the sampling.
    pub(crate) delay: i64,
}

/// Go's block or mutex profile (`pprof.Lookup("block")` / `("mutex")`
/// `.WriteTo(w, 0)`) of `samples`, in pprof's protobuf format.
pub(crate) fn write(samples: Vec<Contention>, out: impl Write) -> std::io::Result<()> {
    let mut b = Builder::new(
        &[("contentions", "count"), ("delay", "nanoseconds")],
        ("contentions", "count"),
        1,
    );
    for s in samples {
        let (start, skip) = caller_start(&s.stack);
        b.sample(&s.stack[start..], skip, vec![s.count as i64, s.delay], &[]);
    }
    b.write(out)
}
