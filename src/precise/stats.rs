//! Statistics of the precise collector.
//!
//! Cycle results (live objects and bytes, frees, pauses) are recorded at
//! the end of each collection under one lock. Allocation counts are
//! per-thread counters that only their owner writes (no shared cache line
//! on the allocation path), summed by [`stats`]. Pauses also go into a
//! log-linear histogram ([`PauseHistogram`], 4 buckets per power of two,
//! so within 25%), from which percentiles can be read.

use super::handles;
use super::heap;
use super::threads;
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
    /// Handle-table indices ever handed out (reuse keeps this flat).
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
    /// Total time mutators were stopped for collections.
    pub pause_total: Duration,
    /// Longest stop.
    pub pause_max: Duration,
    /// The last collection's stop.
    pub pause_last: Duration,
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
    #[allow(dead_code)] // Reported by the concurrent collector's stats.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// An upper bound (within 25%) of the `q` quantile, `0.0 < q <= 1.0`;
    /// zero when empty.
    #[allow(dead_code)] // Reported by the concurrent collector's stats.
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
    pause_total: Duration,
    pause_max: Duration,
    pause_last: Duration,
    pauses: PauseHistogram,
}

static TOTALS: Mutex<Totals> = Mutex::new(Totals {
    live_objects: 0,
    live_bytes: 0,
    objects_freed: 0,
    collections: 0,
    pause_total: Duration::ZERO,
    pause_max: Duration::ZERO,
    pause_last: Duration::ZERO,
    pauses: PauseHistogram::new(),
});

/// Records a completed collection that found `live_objects` objects of
/// `live_bytes` payload bytes live when `allocated` objects had been
/// allocated in all: every other object is freed by it (the memory of
/// small ones lazily).
pub(crate) fn record_cycle(live_objects: u64, live_bytes: u64, allocated: u64, pause: Duration) {
    let mut t = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
    t.live_objects = live_objects;
    t.live_bytes = live_bytes;
    t.objects_freed = allocated.saturating_sub(live_objects).max(t.objects_freed);
    t.collections += 1;
    t.pause_total += pause;
    t.pause_max = t.pause_max.max(pause);
    t.pause_last = pause;
    t.pauses.record(pause);
}

/// Reads the statistics. Does not register the calling thread; may wait
/// for a running collection to finish.
pub fn stats() -> Stats {
    let (objects_allocated, threads) = threads::allocation_totals();
    let (heap_size, peak_heap_size) = heap::size();
    let t = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
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
