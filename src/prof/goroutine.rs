//! The goroutine profile, written: the stacks the scheduler hands over
//! (`go::dump`, with the world stopped), each with how many goroutines
//! have it, as a pprof profile with Go's sample type `goroutine`
//! (count), one goroutine a sample's unit, as Go's
//! `pprof.Lookup("goroutine")` writes it.

use super::builder::Builder;
use super::heap::user_start;
use std::io::Write;

/// Writes `stacks` (return addresses, innermost first, and how many
/// goroutines have that stack). The runtime's frames inlined at the top
/// of a stack (a channel receive inlined into its caller) are left out,
/// as the heap profile leaves out the allocator's, so that a sample
/// names the function that waits.
pub(crate) fn write(stacks: Vec<(Vec<usize>, i64)>, out: impl Write) -> std::io::Result<()> {
    let mut b = Builder::new(&[("goroutine", "count")], ("goroutine", "count"), 1);
    for (stack, count) in stacks {
        let (start, skip) = user_start(&stack);
        b.sample(&stack[start..], skip, vec![count], &[]);
    }
    b.write(out)
}
