//! The CPU profile's sample buffer: a fixed ring of records that signal
//! handlers write and one reader drains (Go's `profBuf`, a different
//! shape: bounded multi-producer, single-consumer, every field an
//! atomic).
//!
//! Each record carries a sequence word. A writer claims the record at
//! the tail by a compare-and-swap of the tail, when that record's
//! sequence says it is free for this lap (`seq == position`), fills it
//! and publishes it (`seq = position + 1`, release). The reader takes
//! the record at the head when it is published, reads it and frees it
//! for the next lap (`seq = position + capacity`, release). A writer
//! that finds the ring full drops its sample and counts it as lost, as
//! Go counts samples its buffer had no room for: it never waits, so a
//! signal handler may write. A writer stopped between its claim and its
//! publication (descheduled; a handler is never interrupted by another
//! of its own signal) holds up the reader at that record only until it
//! publishes; records claimed after it are read after it.
//!
//! No lock, no allocation on either side after [`Ring::new`]; the
//! record's words are atomics (relaxed: the sequence word's
//! release/acquire orders them). The tests below check the handshake
//! with real threads (every record read once and whole, or counted as
//! lost), and `tests/ring_loom.rs` checks it exhaustively on this code
//! (its atomics are loom's under `cfg(loom)`); [`set_early_publish`]
//! brings back a writer that publishes before it fills the record.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The bug `tests/ring_loom.rs` checks loom finds: a writer publishes its
/// record before it writes the record's words.
#[cfg(loom)]
static EARLY_PUBLISH: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns the early-publication bug on or off (loom models only).
#[cfg(loom)]
pub fn set_early_publish(on: bool) {
    EARLY_PUBLISH.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Most return addresses a record keeps (deeper stacks are cut, as Go
/// cuts at 64).
pub const DEPTH: usize = 64;

/// One sample: its stack, its label set (an opaque word), how many
/// return addresses it holds.
struct Record {
    seq: AtomicUsize,
    len: AtomicUsize,
    tag: AtomicUsize,
    pcs: [AtomicUsize; DEPTH],
}

/// The ring (see the module docs).
pub struct Ring {
    records: Box<[Record]>,
    /// Next position a writer claims.
    tail: AtomicUsize,
    /// Next position the reader reads (the reader's alone).
    head: AtomicUsize,
    /// Samples dropped because the ring was full.
    lost: AtomicU64,
}

impl Ring {
    /// A ring of `capacity` records (at least 2).
    pub fn new(capacity: usize) -> Ring {
        let capacity = capacity.max(2);
        let records = (0..capacity)
            .map(|i| Record {
                seq: AtomicUsize::new(i),
                len: AtomicUsize::new(0),
                tag: AtomicUsize::new(0),
                pcs: std::array::from_fn(|_| AtomicUsize::new(0)),
            })
            .collect();
        Ring {
            records,
            tail: AtomicUsize::new(0),
            head: AtomicUsize::new(0),
            lost: AtomicU64::new(0),
        }
    }

    /// Writes a sample (`pcs` cut to [`DEPTH`], and `tag`); false, with
    /// the sample counted as lost, when the ring is full.
    /// Async-signal-safe: atomics only, no wait.
    pub fn push(&self, pcs: &[usize], tag: usize) -> bool {
        let cap = self.records.len();
        let mut pos = self.tail.load(Ordering::Relaxed);
        let record = loop {
            let record = &self.records[pos % cap];
            let seq = record.seq.load(Ordering::Acquire);
            if seq == pos {
                match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break record,
                    Err(now) => pos = now,
                }
            } else if seq < pos {
                // Not yet read on the previous lap: full.
                self.lost.fetch_add(1, Ordering::Relaxed);
                return false;
            } else {
                // Another writer claimed it since: look again.
                pos = self.tail.load(Ordering::Relaxed);
            }
        };
        #[cfg(loom)]
        if EARLY_PUBLISH.load(std::sync::atomic::Ordering::Relaxed) {
            record.seq.store(pos.wrapping_add(1), Ordering::Release);
        }
        let n = pcs.len().min(DEPTH);
        for (slot, &pc) in record.pcs.iter().zip(&pcs[..n]) {
            slot.store(pc, Ordering::Relaxed);
        }
        record.len.store(n, Ordering::Relaxed);
        record.tag.store(tag, Ordering::Relaxed);
        record.seq.store(pos.wrapping_add(1), Ordering::Release);
        true
    }

    /// Reads the next published sample into `out` (its stack) and
    /// returns its tag, or `None` when the next record is not published
    /// yet. One reader at a time.
    pub fn pop(&self, out: &mut Vec<usize>) -> Option<usize> {
        let cap = self.records.len();
        let pos = self.head.load(Ordering::Relaxed);
        let record = &self.records[pos % cap];
        if record.seq.load(Ordering::Acquire) != pos.wrapping_add(1) {
            return None;
        }
        let n = record.len.load(Ordering::Relaxed).min(DEPTH);
        out.clear();
        out.extend(record.pcs[..n].iter().map(|pc| pc.load(Ordering::Relaxed)));
        let tag = record.tag.load(Ordering::Relaxed);
        record.seq.store(pos.wrapping_add(cap), Ordering::Release);
        self.head.store(pos.wrapping_add(1), Ordering::Relaxed);
        Some(tag)
    }

    /// Samples dropped so far for want of room; resets the count.
    pub fn take_lost(&self) -> u64 {
        self.lost.swap(0, Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn samples_come_out_in_order_and_a_full_ring_counts_losses() {
        let ring = Ring::new(4);
        for i in 0..6 {
            let stack: Vec<usize> = (0..=i).collect();
            assert_eq!(ring.push(&stack, 100 + i), i < 4);
        }
        assert_eq!(ring.take_lost(), 2);
        let mut out = Vec::new();
        for i in 0..4 {
            assert_eq!(ring.pop(&mut out), Some(100 + i));
            assert_eq!(out, (0..=i).collect::<Vec<_>>());
        }
        assert_eq!(ring.pop(&mut out), None);
        // The next laps reuse the records.
        for lap in 0..3 {
            assert!(ring.push(&[lap; 70], lap));
            assert_eq!(ring.pop(&mut out), Some(lap));
            assert_eq!(out, vec![lap; DEPTH]);
        }
    }

    #[test]
    fn concurrent_writers_lose_nothing_they_were_not_told_of() {
        let ring = std::sync::Arc::new(Ring::new(64));
        const PER: usize = 20_000;
        let writers: Vec<_> = (0..3)
            .map(|w| {
                let ring = ring.clone();
                std::thread::spawn(move || {
                    let mut kept = 0;
                    for i in 0..PER {
                        kept += usize::from(ring.push(&[w, i, w ^ i], w));
                    }
                    kept
                })
            })
            .collect();
        let mut read = 0;
        let mut out = Vec::new();
        let mut done = false;
        while !done {
            done = writers.iter().all(|w| w.is_finished());
            while let Some(w) = ring.pop(&mut out) {
                assert_eq!(out.len(), 3);
                assert_eq!((out[0], out[2]), (w, w ^ out[1]), "a torn record");
                read += 1;
            }
        }
        let kept: usize = writers.into_iter().map(|w| w.join().unwrap()).sum();
        assert_eq!(read, kept);
        assert_eq!(ring.take_lost() as usize, 3 * PER - kept);
    }
}
