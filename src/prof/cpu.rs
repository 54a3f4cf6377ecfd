//! The CPU profile, written: the stacks the profiling signal's handler
//! sampled (drained from the ring, `ring.rs`, and counted by stack and
//! label set off the signal path), as a pprof profile with Go's sample
//! types `samples` (count) and `cpu` (nanoseconds), the sampling period
//! and the profile's duration, each sample with its goroutine's labels.
//! Samples the ring had no room for appear as one sample of the function
//! [`lost_profile_event`], as Go's profile shows its own.

use super::builder::{Builder, Label};
use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

/// Counts of samples by stack (innermost first: the interrupted pc,
/// then return addresses) and label set (an opaque word the caller
/// resolves when writing).
#[derive(Default)]
pub struct Counts {
    by_stack: HashMap<(Vec<usize>, usize), i64>,
    /// Samples lost for want of room in the ring.
    pub lost: u64,
}

impl Counts {
    /// One more sample of `stack` with the label set `labels`.
    pub fn add(&mut self, stack: &[usize], labels: usize) {
        *self.by_stack.entry((stack.to_vec(), labels)).or_insert(0) += 1;
    }

    /// The label sets the samples name (each once).
    pub fn label_sets(&self) -> Vec<usize> {
        let mut sets: Vec<usize> = self.by_stack.keys().map(|&(_, l)| l).collect();
        sets.sort_unstable();
        sets.dedup();
        sets
    }
}

/// Where the samples the ring lost are counted (never called: its
/// address names them).
#[inline(never)]
pub fn lost_profile_event() {
    std::hint::black_box(());
}

/// Go's CPU profile of `counts`, taken every `period` nanoseconds of CPU
/// time over `duration`; `labels_of` gives a label set's pairs.
pub(crate) fn write(
    counts: &Counts,
    period: i64,
    duration: Duration,
    labels_of: impl Fn(usize) -> Vec<(String, String)>,
    out: impl Write,
) -> std::io::Result<()> {
    let mut b = Builder::new(
        &[("samples", "count"), ("cpu", "nanoseconds")],
        ("cpu", "nanoseconds"),
        period,
    );
    b.duration(duration);
    let labels: HashMap<usize, Vec<(String, String)>> = counts
        .label_sets()
        .into_iter()
        .map(|set| (set, labels_of(set)))
        .collect();
    let mut samples: Vec<(&(Vec<usize>, usize), &i64)> = counts.by_stack.iter().collect();
    // Written in a fixed order: the most frequent first.
    samples.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut stack = Vec::new();
    for ((pcs, set), &n) in samples {
        // The first address is the interrupted instruction, the others
        // return addresses: the builder looks up the byte before each, so
        // the first goes in one past itself.
        stack.clear();
        stack.extend(pcs.iter().enumerate().map(|(i, &pc)| match i {
            0 if pc != 0 => pc + 1,
            _ => pc,
        }));
        let pairs = &labels[set];
        let label: Vec<Label<'_>> = pairs
            .iter()
            .map(|(k, v)| Label::Str(k.as_str(), v.as_str()))
            .collect();
        b.sample(&stack, 0, vec![n, n.saturating_mul(period)], &label);
    }
    if counts.lost > 0 {
        let n = counts.lost as i64;
        let pc = lost_profile_event as *const () as usize + 1;
        b.sample(&[pc], 0, vec![n, n.saturating_mul(period)], &[]);
    }
    b.write(out)
}
