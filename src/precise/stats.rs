//! Statistics of the precise collector.
//!
//! Cycle results (live objects and bytes, frees, cycle times) are recorded
//! at the end of each collection under one lock. Allocation counts are
//! per-thread counters that only their owner writes (no shared cache line
//! on the allocation path), summed by [`stats()`](super::stats()).
//!
//! A *pause* is any time a mutator is stopped by the collector: its own
//! handshake actions (snapshotting its roots, handing over its barrier
//! log), and waiting in [`leave_native`](crate::precise::leave_native)
//! while the collector scans it on its behalf. The collector never stops
//! the world, so pauses are per thread. Each is recorded when it ends, in
//! a log-linear histogram ([`PauseHistogram`], 4 buckets per power of two,
//! so within 25%), from which percentiles are read.
//!
//! An *allocation wait* is not a pause: an allocation past the pacer's
//! allowance marks (a mark assist, [`Stats::assists`]) or, when there is
//! no marking work to take, waits for the running collection to complete
//! (see `heap/pacer.rs`), in native code, so the collector does not wait
//! for it. Those are counted apart ([`Stats::alloc_waits`]).

use super::handles;
use super::heap;
use std::sync::Mutex;
use std::time::Duration;

/// A snapshot of the precise collector's statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Objects found live by the last collection.
    pub live_objects: u64,
    /// Payload bytes of the objects found live by the last collection.
    pub live_bytes: u64,
    /// Bytes of heap: small-object blocks (including free ones) and large
    /// objects.
    pub heap_size: usize,
    /// The largest `heap_size` so far.
    pub peak_heap_size: usize,
    /// Handles naming an object now: allocated and not yet freed.
    pub handles_in_use: u64,
    /// The most handles there have been at once: cells of laid-out blocks
    /// at their peak, plus large-object table indices ever handed out
    /// (reuse keeps this flat).
    pub handle_capacity: usize,
    /// Objects allocated since the process started.
    pub objects_allocated: u64,
    /// Objects found dead by collections (the memory of small ones is
    /// reclaimed lazily, by the next allocations in their blocks).
    pub objects_freed: u64,
    /// Completed collections.
    pub collections: u64,
    /// Registered threads.
    pub threads: usize,
    /// Total time mutators were stopped by the collector (see the module
    /// docs: handshakes, not whole collections).
    pub pause_total: Duration,
    /// Longest stop of one mutator.
    pub pause_max: Duration,
    /// The latest stop of a mutator.
    pub pause_last: Duration,
    /// The 99th percentile of mutator stops (an upper bound within 25%).
    pub pause_p99: Duration,
    /// Number of mutator stops recorded.
    pub pause_count: u64,
    /// Wall time of the last collection, start to end of its sweep (the
    /// mutators run meanwhile).
    pub cycle_last: Duration,
    /// Wall time of the last collection's marking (handshakes included).
    pub mark_last: Duration,
    /// Total wall time the collector thread spent in collections.
    pub cycle_total: Duration,
    /// Allocations that waited for a collection because the heap would
    /// have passed its goal while marking ran (see the module docs).
    pub alloc_waits: u64,
    /// Total time those allocations waited.
    pub alloc_wait_total: Duration,
    /// Mark assists: allocations past the allowance that marked instead
    /// of waiting (see the module docs), and the objects they marked.
    pub assists: u64,
    /// Objects marked by mark assists.
    pub assist_objects: u64,
}

/// Counts of durations in log-linear buckets: exact below 4 ns, then four
/// buckets per power of two.
#[derive(Clone)]
pub(crate) struct PauseHistogram {
    buckets: [u64; 256],
    count: u64,
}

impl PauseHistogram {
    pub(crate) const fn new() -> PauseHistogram {
        PauseHistogram {
            buckets: [0; 256],
            count: 0,
        }
    }

    fn bucket(ns: u64) -> usize {
        if ns < 4 {
            return ns as usize;
        }
        let exp = 63 - ns.leading_zeros() as usize; // >= 2
        let sub = (ns >> (exp - 2)) as usize & 3;
        4 * (exp - 1) + sub
    }

    /// The largest value that falls in bucket `b`.
    fn upper(b: usize) -> u64 {
        if b < 4 {
            return b as u64;
        }
        let exp = b / 4 + 1;
        let sub = (b % 4) as u64;
        (((5 + sub) as u128) << (exp - 2))
            .saturating_sub(1)
            .min(u64::MAX as u128) as u64
    }

    pub(crate) fn record(&mut self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.buckets[Self::bucket(ns)] += 1;
        self.count += 1;
    }

    /// How many durations were recorded.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// An upper bound (within 25%) of the `q` quantile, `0.0 < q <= 1.0`;
    /// zero when empty.
    pub(crate) fn quantile(&self, q: f64) -> Duration {
        if self.count == 0 {
            return Duration::ZERO;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Duration::from_nanos(Self::upper(b));
            }
        }
        Duration::from_nanos(u64::MAX)
    }
}

struct Totals {
    live_objects: u64,
    live_bytes: u64,
    objects_freed: u64,
    collections: u64,
    cycle_last: Duration,
    mark_last: Duration,
    cycle_total: Duration,
    pause_total: Duration,
    pause_max: Duration,
    pause_last: Duration,
    pauses: PauseHistogram,
    alloc_waits: u64,
    alloc_wait_total: Duration,
    assists: u64,
    assist_objects: u64,
}

static TOTALS: Mutex<Totals> = Mutex::new(Totals {
    live_objects: 0,
    live_bytes: 0,
    objects_freed: 0,
    collections: 0,
    cycle_last: Duration::ZERO,
    mark_last: Duration::ZERO,
    cycle_total: Duration::ZERO,
    pause_total: Duration::ZERO,
    pause_max: Duration::ZERO,
    pause_last: Duration::ZERO,
    pauses: PauseHistogram::new(),
    alloc_waits: 0,
    alloc_wait_total: Duration::ZERO,
    assists: 0,
    assist_objects: 0,
});

/// Before a fork (a leaf lock).
pub(super) fn lock_for_fork() {
    crate::gc::fork::held::keep(totals());
}

fn totals() -> std::sync::MutexGuard<'static, Totals> {
    TOTALS.lock().unwrap_or_else(|e| e.into_inner())
}

/// What one completed collection found.
pub(crate) struct Cycle {
    /// Objects (and their payload bytes) marked.
    pub(crate) live_objects: u64,
    pub(crate) live_bytes: u64,
    /// Objects allocated in all when the snapshot was complete: every one
    /// of them that was not marked is freed by this cycle (the memory of
    /// small ones lazily).
    pub(crate) allocated: u64,
    pub(crate) mark_time: Duration,
    pub(crate) total_time: Duration,
}

/// Records a completed collection.
pub(crate) fn record_cycle(c: Cycle) {
    let mut t = totals();
    t.live_objects = c.live_objects;
    t.live_bytes = c.live_bytes;
    t.objects_freed = c
        .allocated
        .saturating_sub(c.live_objects)
        .max(t.objects_freed);
    t.collections += 1;
    t.cycle_last = c.total_time;
    t.mark_last = c.mark_time;
    t.cycle_total += c.total_time;
}

/// Records one mutator stop.
pub(crate) fn record_pause(pause: Duration) {
    let mut t = totals();
    t.pause_total += pause;
    t.pause_max = t.pause_max.max(pause);
    t.pause_last = pause;
    t.pauses.record(pause);
}

/// Records one allocation that waited for a collection.
pub(crate) fn record_alloc_wait(wait: Duration) {
    let mut t = totals();
    t.alloc_waits += 1;
    t.alloc_wait_total += wait;
}

/// Records one mark assist that marked `objects`.
pub(crate) fn record_assist(objects: u64) {
    let mut t = totals();
    t.assists += 1;
    t.assist_objects += objects;
}

/// Forgets the pauses recorded so far (their total, maximum, percentiles
/// and count), so that a benchmark can report the pauses of one run.
pub fn reset_pause_stats() {
    let mut t = totals();
    t.pause_total = Duration::ZERO;
    t.pause_max = Duration::ZERO;
    t.pause_last = Duration::ZERO;
    t.pauses = PauseHistogram::new();
}

/// The statistics, given what the thread registry counts: objects
/// allocated in all and threads registered (see [`stats()`](super::stats())).
pub(crate) fn read(objects_allocated: u64, threads: usize) -> Stats {
    let (heap_size, peak_heap_size) = heap::size();
    let t = totals();
    Stats {
        live_objects: t.live_objects,
        live_bytes: t.live_bytes,
        heap_size,
        peak_heap_size,
        handles_in_use: objects_allocated.saturating_sub(t.objects_freed),
        handle_capacity: handles::capacity_used(),
        objects_allocated,
        objects_freed: t.objects_freed,
        collections: t.collections,
        threads,
        pause_total: t.pause_total,
        pause_max: t.pause_max,
        pause_last: t.pause_last,
        // The bucket bound can exceed the exact maximum.
        pause_p99: t.pauses.quantile(0.99).min(t.pause_max),
        pause_count: t.pauses.count(),
        cycle_last: t.cycle_last,
        mark_last: t.mark_last,
        cycle_total: t.cycle_total,
        alloc_waits: t.alloc_waits,
        alloc_wait_total: t.alloc_wait_total,
        assists: t.assists,
        assist_objects: t.assist_objects,
    }
}

#[cfg(test)]
mod tests {
    use super::PauseHistogram;
    use std::time::Duration;

    #[test]
    fn histogram_buckets_bound_their_values_within_a_quarter() {
        for ns in (0..10_000u64).chain([u64::MAX / 3, u64::MAX]) {
            let b = PauseHistogram::bucket(ns);
            assert!(PauseHistogram::upper(b) >= ns, "{ns} above bucket {b}");
            assert!(
                b == 0 || PauseHistogram::upper(b - 1) < ns,
                "{ns} not in the first fitting bucket"
            );
            assert!(PauseHistogram::upper(b) as f64 <= ns as f64 * 1.25 + 1.0);
        }
    }

    #[test]
    fn histogram_quantiles_follow_the_recorded_pauses() {
        let mut h = PauseHistogram::new();
        assert_eq!(h.quantile(0.99), Duration::ZERO);
        for us in 1..=100u64 {
            h.record(Duration::from_micros(us));
        }
        assert_eq!(h.count(), 100);
        let p99 = h.quantile(0.99);
        assert!(p99 >= Duration::from_micros(99) && p99 <= Duration::from_micros(124));
        let p50 = h.quantile(0.5);
        assert!(p50 >= Duration::from_micros(50) && p50 <= Duration::from_micros(63));
        assert!(h.quantile(1.0) >= Duration::from_micros(100));
    }
}
