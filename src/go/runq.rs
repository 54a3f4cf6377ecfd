//! A processor's local run queue (Go's `p.runq`): a ring of a fixed
//! number of goroutines that only the processor's holder adds to, and
//! that the holder (one at a time) and idle workers (half at a time, for
//! their own rings) take from.
//!
//! `tail` is written by the holder alone; `head` moves by compare-and-swap,
//! whoever takes. A taker reads the slots it takes before its swap of
//! `head` (release), and the holder loads `head` (acquire) before it
//! writes a slot, so the holder never overwrites a slot that a taker that
//! will win still reads; a taker that loses its swap drops what it read.
//! The holder fills a slot before it publishes it with `tail` (release);
//! takers load `tail` (acquire) before they read slots. A full ring hands
//! its older half and the new goroutine to the caller (the global queue),
//! as Go's `runqputslow`: a burst of wakeups (a close waking a million
//! receivers) goes where every worker can take it.
//!
//! The holder sees the two goroutines after the one it takes
//! ([`pop_and_peek`]), without taking them: while it runs the one it
//! took, the scheduler asks for the second one's header and, that header
//! asked for a round before, the next one's saved stack (each goroutine's
//! header and stack top are on a page of their own).
//!
//! [`pop_and_peek`]: RunQueue::pop_and_peek

use super::prim::{AtomicPtr, AtomicU32};
use std::ptr;
use std::sync::atomic::Ordering;

/// The most a full ring hands over at once (half the largest ring).
const MAX_HALF: usize = 128;

/// The ring: `N` slots, a power of two of at most `2 * MAX_HALF`.
pub(crate) struct RunQueue<T, const N: usize> {
    /// The next slot to take: moved by compare-and-swap by every taker.
    head: AtomicU32,
    /// The next slot to fill: written by the holder only.
    tail: AtomicU32,
    slots: [AtomicPtr<T>; N],
}

impl<T, const N: usize> RunQueue<T, N> {
    const SHAPE: () = assert!(N.is_power_of_two() && N >= 2 && N <= 2 * MAX_HALF);

    pub(crate) fn new() -> Self {
        let () = Self::SHAPE;
        RunQueue {
            head: AtomicU32::new(0),
            tail: AtomicU32::new(0),
            slots: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
        }
    }

    #[inline]
    fn slot(&self, i: u32) -> &AtomicPtr<T> {
        &self.slots[i as usize & (N - 1)]
    }

    /// How many are queued: exact for the holder, a hint for anyone else.
    pub(crate) fn len(&self) -> usize {
        loop {
            let h = self.head.load(Ordering::Acquire);
            let t = self.tail.load(Ordering::Acquire);
            // A tail that did not move while head was read makes the two
            // one moment's (else the difference may be older than both).
            if t == self.tail.load(Ordering::Acquire) {
                return t.wrapping_sub(h) as usize;
            }
        }
    }

    /// Whether nothing is queued (see [`len`](Self::len)).
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `x` at the tail. In a full ring, the older half and then `x`
    /// go to `spill` instead, oldest first.
    ///
    /// # Safety
    /// The caller holds the processor (or, stopped, is its only user).
    pub(crate) unsafe fn push(&self, x: *mut T, mut spill: impl FnMut(*mut T)) {
        loop {
            let h = self.head.load(Ordering::Acquire);
            let t = self.tail.load(Ordering::Relaxed);
            if t.wrapping_sub(h) < N as u32 {
                self.slot(t).store(x, Ordering::Relaxed);
                self.tail.store(t.wrapping_add(1), Ordering::Release);
                return;
            }
            if self.spill_half(h, &mut spill) {
                spill(x);
                return;
            }
            // A taker took some meanwhile: there is room now.
        }
    }

    /// Adds `xs` at the tail, oldest first, each run that fits published
    /// by one store of `tail`: takers see them together, and the holder's
    /// line is handed to a taker once a batch, not once a goroutine (a
    /// close waking a million receivers while another worker takes them).
    /// A full ring hands its older half to `spill` and takes the rest.
    ///
    /// # Safety
    /// As for [`push`](Self::push).
    pub(crate) unsafe fn push_batch(&self, xs: &[*mut T], mut spill: impl FnMut(*mut T)) {
        let mut rest = xs;
        while !rest.is_empty() {
            let h = self.head.load(Ordering::Acquire);
            let t = self.tail.load(Ordering::Relaxed);
            let room = (N as u32).wrapping_sub(t.wrapping_sub(h)) as usize;
            if room == 0 {
                // Whether or not the swap won, there is room now.
                self.spill_half(h, &mut spill);
                continue;
            }
            let n = room.min(rest.len());
            for (i, &x) in rest[..n].iter().enumerate() {
                self.slot(t.wrapping_add(i as u32))
                    .store(x, Ordering::Relaxed);
            }
            self.tail.store(t.wrapping_add(n as u32), Ordering::Release);
            rest = &rest[n..];
        }
    }

    /// The holder of a full ring whose head it saw at `h` hands the older
    /// half to `spill`, oldest first; false if a taker moved the head
    /// first (nothing spilled: there is room).
    fn spill_half(&self, h: u32, spill: &mut impl FnMut(*mut T)) -> bool {
        let half = N / 2;
        let mut batch = [ptr::null_mut(); MAX_HALF];
        for (i, b) in batch.iter_mut().enumerate().take(half) {
            *b = self.slot(h.wrapping_add(i as u32)).load(Ordering::Relaxed);
        }
        if self
            .head
            .compare_exchange(
                h,
                h.wrapping_add(half as u32),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return false;
        }
        for &b in &batch[..half] {
            spill(b);
        }
        true
    }

    /// Takes the oldest.
    ///
    /// # Safety
    /// As for [`push`](Self::push).
    pub(crate) unsafe fn pop(&self) -> Option<*mut T> {
        // SAFETY: forwarded.
        unsafe { self.pop_and_peek() }.map(|(x, _)| x)
    }

    /// Takes the oldest, and shows the two after it (each null if there is
    /// none) left queued: a taker may have them by the time the caller
    /// looks, so they are only hints (for prefetches), never to be run or
    /// freed.
    ///
    /// # Safety
    /// As for [`push`](Self::push).
    #[inline]
    pub(crate) unsafe fn pop_and_peek(&self) -> Option<(*mut T, [*mut T; 2])> {
        loop {
            let h = self.head.load(Ordering::Acquire);
            let t = self.tail.load(Ordering::Relaxed);
            if h == t {
                return None;
            }
            let x = self.slot(h).load(Ordering::Relaxed);
            if self
                .head
                .compare_exchange(h, h.wrapping_add(1), Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                let queued = t.wrapping_sub(h);
                let peek = |i: u32| {
                    if i < queued {
                        self.slot(h.wrapping_add(i)).load(Ordering::Relaxed)
                    } else {
                        ptr::null_mut()
                    }
                };
                return Some((x, [peek(1), peek(2)]));
            }
        }
    }

    /// Takes the older half of this ring (rounded up) into `into`, the
    /// caller's own ring, and returns one of them to run; `None` if this
    /// ring is empty (or `into` is full).
    ///
    /// # Safety
    /// The caller holds `into`'s processor; `into` is not `self`.
    pub(crate) unsafe fn steal_into(&self, into: &Self) -> Option<*mut T> {
        let t = into.tail.load(Ordering::Relaxed);
        let room = (N as u32).wrapping_sub(t.wrapping_sub(into.head.load(Ordering::Acquire)));
        let n = loop {
            let h = self.head.load(Ordering::Acquire);
            let vt = self.tail.load(Ordering::Acquire);
            let queued = vt.wrapping_sub(h);
            let n = queued - queued / 2;
            if n > (N / 2) as u32 {
                // Head and tail of different moments: look again.
                continue;
            }
            let n = n.min(room);
            if n == 0 {
                return None;
            }
            #[cfg(loom)]
            if super::prim::late_copy() {
                // The bug `tests/runq_loom.rs` checks loom finds: the slots
                // are read after they were given up.
                if self
                    .head
                    .compare_exchange(h, h.wrapping_add(n), Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    for i in 0..n {
                        let x = self.slot(h.wrapping_add(i)).load(Ordering::Relaxed);
                        into.slot(t.wrapping_add(i)).store(x, Ordering::Relaxed);
                    }
                    break n;
                }
                continue;
            }
            for i in 0..n {
                let x = self.slot(h.wrapping_add(i)).load(Ordering::Relaxed);
                into.slot(t.wrapping_add(i)).store(x, Ordering::Relaxed);
            }
            if self
                .head
                .compare_exchange(h, h.wrapping_add(n), Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                break n;
            }
        };
        let last = t.wrapping_add(n - 1);
        let x = into.slot(last).load(Ordering::Relaxed);
        if n > 1 {
            into.tail.store(last, Ordering::Release);
        }
        Some(x)
    }

    /// Empties the ring without reading it (a forked child's processors).
    ///
    /// # Safety
    /// No one else uses the ring.
    pub(crate) unsafe fn clear(&self) {
        self.head
            .store(self.tail.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn token(i: usize) -> *mut u8 {
        i as *mut u8
    }

    /// The test's rings hold tokens, never dereferenced, and each has
    /// one holder: these wrap the holder-only calls.
    type Ring = RunQueue<u8, 8>;

    fn push(q: &Ring, t: usize, spilled: &mut Vec<usize>) {
        // SAFETY: the caller is the ring's holder; tokens are not read.
        unsafe { q.push(token(t), |x| spilled.push(x as usize)) };
    }

    fn pop_and_peek(q: &Ring) -> Option<(*mut u8, [*mut u8; 2])> {
        // SAFETY: as above.
        unsafe { q.pop_and_peek() }
    }

    fn pop(q: &Ring) -> Option<*mut u8> {
        // SAFETY: as above.
        unsafe { q.pop() }
    }

    fn steal(from: &Ring, into: &Ring) -> Option<*mut u8> {
        // SAFETY: the caller holds `into`.
        unsafe { from.steal_into(into) }
    }

    /// One thread: FIFO order, a full ring spilling its older half and
    /// the new one, a steal of half rounded up, a peek at the next two.
    #[test]
    fn a_ring_keeps_order_spills_half_and_is_stolen_by_half() {
        let q = Ring::new();
        let mut spilled = Vec::new();
        for i in 1..=8 {
            push(&q, i, &mut spilled);
        }
        assert!(spilled.is_empty());
        assert_eq!(q.len(), 8);
        push(&q, 9, &mut spilled);
        assert_eq!(spilled, [1, 2, 3, 4, 9], "the older half, then the new one");
        assert_eq!(q.len(), 4);
        assert_eq!(
            pop_and_peek(&q),
            Some((token(5), [token(6), token(7)])),
            "the oldest, and a look at the two after it"
        );
        let thief = Ring::new();
        // 6, 7, 8 queued: the thief takes two and runs the later one.
        assert_eq!(steal(&q, &thief), Some(token(7)));
        assert_eq!(pop(&thief), Some(token(6)));
        assert_eq!(pop(&thief), None);
        assert_eq!(
            pop_and_peek(&q),
            Some((token(8), [ptr::null_mut(), ptr::null_mut()]))
        );
        assert_eq!(steal(&q, &thief), None);
        assert!(q.is_empty() && thief.is_empty());
    }

    /// A holder pushing (one at a time and in batches, spilling) and popping
    /// while two thieves steal into rings of their own and run what they
    /// took: every token is taken exactly once, and the holder's own pops
    /// and each thief's batch come in the order pushed.
    #[test]
    fn a_seeded_stress_of_push_pop_and_steal_conserves_every_goroutine() {
        let seed = crate::seeded::seed("DEFERGC_RUNQ_SEED");
        println!("seed {seed} (DEFERGC_RUNQ_SEED={seed} repeats it)");
        let mut rng = crate::seeded::Rng(seed);
        const TOKENS: usize = 1_000_000;
        let victim = Arc::new(RunQueue::<u8, 16>::new());
        let done = Arc::new(AtomicBool::new(false));
        let start = Arc::new(std::sync::Barrier::new(3));
        let thieves: Vec<_> = (0..2u64)
            .map(|k| {
                let (victim, done, start) = (victim.clone(), done.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let own = RunQueue::<u8, 16>::new();
                    let mut got = Vec::new();
                    let mut steals = 0;
                    loop {
                        let finished = done.load(Ordering::Acquire);
                        // SAFETY: this thread holds `own`.
                        let Some(first) = (unsafe { victim.steal_into(&own) }) else {
                            if finished {
                                break;
                            }
                            std::hint::spin_loop();
                            continue;
                        };
                        steals += 1;
                        let mut batch = Vec::new();
                        // SAFETY: as above.
                        while let Some(x) = unsafe { own.pop() } {
                            batch.push(x as usize);
                        }
                        batch.push(first as usize);
                        assert!(
                            batch.windows(2).all(|w| w[0] < w[1]),
                            "thief {k}: a stolen batch out of order: {batch:?}"
                        );
                        got.extend(batch);
                    }
                    (got, steals)
                })
            })
            .collect();
        let (mut popped, mut spilled) = (Vec::new(), Vec::new());
        let mut next = 1;
        start.wait();
        while next <= TOKENS || !victim.is_empty() {
            let r = rng.below(6);
            if next <= TOKENS && r == 0 {
                // A batch of up to 40 (more than the ring holds).
                let n = (1 + rng.below(40) as usize).min(TOKENS + 1 - next);
                let batch: Vec<*mut u8> = (next..next + n).map(token).collect();
                // SAFETY: this thread holds `victim`.
                unsafe { victim.push_batch(&batch, |x| spilled.push(x as usize)) };
                next += n;
            } else if next <= TOKENS && r < 4 {
                // SAFETY: as above.
                unsafe { victim.push(token(next), |x| spilled.push(x as usize)) };
                next += 1;
            } else if let Some((x, [next, after])) = {
                // SAFETY: as above.
                unsafe { victim.pop_and_peek() }
            } {
                // Pushed after it, in order (a peek at a slot a thief took
                // meanwhile may show an older or newer token: not here, with
                // the holder alone pushing and thieves taking the oldest).
                assert!(next.is_null() || next as usize > x as usize);
                assert!(after.is_null() || (!next.is_null() && after as usize > next as usize));
                popped.push(x as usize);
            }
        }
        done.store(true, Ordering::Release);
        let mut all = Vec::new();
        let mut steals = 0;
        for t in thieves {
            let (got, n) = t.join().unwrap();
            steals += n;
            all.extend(got);
        }
        assert!(
            popped.windows(2).all(|w| w[0] < w[1]),
            "the holder's pops out of order"
        );
        assert!(
            steals > 0 && !spilled.is_empty(),
            "the stress did not stress"
        );
        println!(
            "{} popped, {} stolen in {steals} steals, {} spilled",
            popped.len(),
            all.len(),
            spilled.len()
        );
        all.extend(&popped);
        all.extend(&spilled);
        all.sort_unstable();
        assert_eq!(all.len(), TOKENS, "tokens lost or taken twice");
        assert!(
            all.iter().enumerate().all(|(i, &x)| x == i + 1),
            "a token taken twice"
        );
    }
}
