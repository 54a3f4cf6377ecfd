//! A channel's lock. Taken and released by plain calls, not a guard: a
//! select holds the locks of all its channels at once and gives them back
//! as its cases settle.
//!
//! A channel's lock is held for a few dozen nanoseconds: a copy and a
//! queue update, and, for a goroutine that parks, until it has switched
//! out (the worker releases the lock after the switch, so that no waker
//! readies a goroutine still running). What costs under contention is
//! the lock's cache line: every look at the word fetches the line shared,
//! and the compare-and-swap that follows fetches it again exclusive, in
//! the holder's way. So a waiter never reads the word to see whether the
//! lock is free: it tries the compare-and-swap (whose failure says what
//! the word held), pauses for a time that doubles each try (`ROUNDS`
//! tries, `BASE` pauses the first time), and only then parks in
//! `parking_lot_core`'s queue for the word's address, as parking_lot's
//! own mutex does (whose wait reads the word between its tries, and
//! yields to the operating system after three).
//!
//! The word: `LOCKED`, and `PARKED` while a thread may wait in the queue.
//! A parker sets `PARKED` and parks only if the word still holds both
//! when the queue is locked, so an unlocker that clears `LOCKED` (with the
//! queue lock) either sees `PARKED` and wakes one, or the parker sees the
//! lock free and does not sleep. The queue's timer asks now and then for
//! a fair unlock: the lock is then handed to the woken thread with
//! `LOCKED` left set, so that a waiter cannot lose to the spinners for
//! ever.
//!
//! Under `cfg(loom)` the queue is a loom mutex and condition variable
//! (the queue's semantics: validation and the unlocker's update under
//! its lock, first in first out; every unpark fair, or none), the pause
//! nothing, and one try before parking: `tests/lock_loom.rs` runs this
//! code. The channel models (`tests/chan_loom.rs`) run on a loom mutex
//! in its place (`prim.rs`): with each of this lock's tries a point where
//! loom may switch threads, their interleavings are too many to explore.

use super::prim::AtomicU32;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

const LOCKED: u32 = 1;
const PARKED: u32 = 2;

/// Tries before parking, the pause doubling each time.
#[cfg(not(loom))]
const ROUNDS: u32 = 5;
#[cfg(loom)]
const ROUNDS: u32 = 1;

/// Pause instructions before the second try.
#[cfg(not(loom))]
const BASE: u32 = 8;

/// The unpark token of a fair unlock: the lock is the woken thread's.
const HANDED_OFF: usize = 1;
const NOT_HANDED_OFF: usize = 0;

pub(crate) struct ChanLock {
    state: AtomicU32,
    #[cfg(loom)]
    queue: loom_queue::Queue,
}

impl ChanLock {
    #[cfg(not(loom))]
    pub(crate) fn new() -> ChanLock {
        ChanLock {
            state: AtomicU32::new(0),
        }
    }

    /// A lock whose every unpark is fair (hands the lock over), or none.
    #[cfg(loom)]
    pub(crate) fn with_fair_unparks(fair: bool) -> ChanLock {
        ChanLock {
            state: AtomicU32::new(0),
            queue: loom_queue::Queue::new(fair),
        }
    }

    #[inline]
    pub(crate) fn lock(&self) {
        if let Err(seen) = self.state.compare_exchange(0, LOCKED, Acquire, Relaxed) {
            self.lock_contended(seen);
        }
    }

    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub(crate) unsafe fn unlock(&self) {
        if self
            .state
            .compare_exchange(LOCKED, 0, Release, Relaxed)
            .is_err()
        {
            self.unlock_parked();
        }
    }

    /// Whether the lock is held (assertions; and in a forked child's
    /// repair, where a held lock's holder is a thread that did not come
    /// along).
    pub(crate) fn is_locked(&self) -> bool {
        self.state.load(Relaxed) & LOCKED != 0
    }

    #[cold]
    fn lock_contended(&self, mut seen: u32) {
        let mut round = 0;
        loop {
            if seen & LOCKED == 0 {
                match self
                    .state
                    .compare_exchange(seen, seen | LOCKED, Acquire, Relaxed)
                {
                    Ok(_) => return,
                    Err(now) => {
                        seen = now;
                        continue;
                    }
                }
            }
            if round < ROUNDS {
                pause(round);
                round += 1;
                // No read first: the word as last seen, unlocked.
                let free = seen & !LOCKED;
                match self
                    .state
                    .compare_exchange(free, free | LOCKED, Acquire, Relaxed)
                {
                    Ok(_) => return,
                    Err(now) => seen = now,
                }
                continue;
            }
            if seen & PARKED == 0 {
                if let Err(now) = self
                    .state
                    .compare_exchange(seen, seen | PARKED, Relaxed, Relaxed)
                {
                    seen = now;
                    continue;
                }
            }
            if self.park() == HANDED_OFF {
                return;
            }
            round = 0;
            seen = self.state.load(Relaxed);
        }
    }

    /// Parks while the word is `LOCKED | PARKED`; the token the unlocker
    /// gave (`NOT_HANDED_OFF` if the thread did not sleep).
    #[cfg(not(loom))]
    fn park(&self) -> usize {
        // SAFETY: the key is this lock's address, which only this lock
        // parks on; the validation only loads an atomic (it neither
        // panics nor calls into parking_lot), and the other callbacks do
        // nothing.
        let parked = unsafe {
            parking_lot_core::park(
                self.key(),
                || self.state.load(Relaxed) == LOCKED | PARKED,
                || {},
                |_, _| {},
                parking_lot_core::DEFAULT_PARK_TOKEN,
                None,
            )
        };
        match parked {
            parking_lot_core::ParkResult::Unparked(token) => {
                #[cfg(test)]
                tests::count_wake(token.0);
                token.0
            }
            _ => NOT_HANDED_OFF,
        }
    }

    #[cfg(loom)]
    fn park(&self) -> usize {
        self.queue
            .park(|| self.state.load(Relaxed) == LOCKED | PARKED)
            .unwrap_or(NOT_HANDED_OFF)
    }

    /// The unlock of a lock whose word had `PARKED`: wakes one parked
    /// thread, or hands it the lock when the queue asks for fairness.
    #[cold]
    fn unlock_parked(&self) {
        #[cfg(loom)]
        if crate::go::prim::lost_handoff() {
            // The bug brought back: the lock freed, no one woken.
            self.state.store(0, Release);
            return;
        }
        let settle = |woke: bool, more: bool, fair: bool| {
            if woke && fair {
                if !more {
                    self.state.store(LOCKED, Relaxed);
                }
                return HANDED_OFF;
            }
            self.state.store(if more { PARKED } else { 0 }, Release);
            NOT_HANDED_OFF
        };
        #[cfg(not(loom))]
        // SAFETY: the key is this lock's address (see `park`); the callback
        // only stores to an atomic.
        unsafe {
            parking_lot_core::unpark_one(self.key(), |r| {
                parking_lot_core::UnparkToken(settle(
                    r.unparked_threads != 0,
                    r.have_more_threads,
                    r.be_fair,
                ))
            });
        }
        #[cfg(loom)]
        self.queue.unpark_one(settle);
    }

    #[cfg(not(loom))]
    fn key(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }
}

/// The `round`th pause: `BASE << round` pause instructions.
#[cfg(not(loom))]
#[inline]
fn pause(round: u32) {
    for _ in 0..BASE << round {
        std::hint::spin_loop();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{ChanLock, HANDED_OFF};
    use std::cell::{Cell, UnsafeCell};
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::mpsc;
    use std::time::Duration;

    thread_local! {
        /// This thread's wakes from the queue, and those of them that
        /// handed it the lock (per thread: the other tests' channels park
        /// too).
        static WAKES: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    }

    pub(super) fn count_wake(token: usize) {
        WAKES.with(|w| {
            let (woken, handed) = w.get();
            w.set((woken + 1, handed + usize::from(token == HANDED_OFF)));
        });
    }

    fn wakes() -> (usize, usize) {
        WAKES.with(Cell::get)
    }

    /// A lock and what it guards: two words that its holder changes one
    /// after the other, so that two holders at once leave them unequal.
    struct Guarded {
        lock: ChanLock,
        words: UnsafeCell<[u64; 2]>,
    }

    // SAFETY: `words` is touched only under `lock`.
    unsafe impl Sync for Guarded {}

    impl Guarded {
        fn new() -> Guarded {
            Guarded {
                lock: ChanLock::new(),
                words: UnsafeCell::new([0; 2]),
            }
        }

        /// Takes the lock, checks and bumps the words (`hold` pauses
        /// between the two), gives the lock back; false if the words
        /// disagreed.
        fn bump(&self, hold: impl FnOnce()) -> bool {
            self.lock.lock();
            let w = self.words.get().cast::<u64>();
            // SAFETY: under the lock; volatile so that the two words are
            // read and written apart, in order.
            let agreed = unsafe {
                let (a, b) = (w.read_volatile(), w.add(1).read_volatile());
                w.write_volatile(a + 1);
                hold();
                w.add(1).write_volatile(b + 1);
                a == b
            };
            // SAFETY: taken above.
            unsafe { self.lock.unlock() };
            agreed
        }

        fn count(&self) -> u64 {
            self.lock.lock();
            // SAFETY: under the lock.
            let [a, b] = unsafe { *self.words.get() };
            // SAFETY: taken above.
            unsafe { self.lock.unlock() };
            assert_eq!(a, b);
            a
        }
    }

    /// Runs `threads` closures, each given its index; panics if they have
    /// not all ended after a minute (a thread never woken hangs).
    fn run_bounded(threads: usize, f: impl Fn(usize) + Sync, what: &str) {
        let (done, ended) = mpsc::channel();
        std::thread::scope(|sc| {
            for t in 0..threads {
                let (f, done) = (&f, done.clone());
                sc.spawn(move || {
                    f(t);
                    let _ = done.send(());
                });
            }
            drop(done);
            for _ in 0..threads {
                match ended.recv_timeout(Duration::from_secs(60)) {
                    Ok(()) => {}
                    // A thread panicked: the scope passes the panic on.
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        eprintln!("{what}: a thread has not ended after a minute");
                        std::process::abort();
                    }
                }
            }
        });
    }

    /// A holder that keeps the lock until the waiter has parked, then
    /// 2 ms more: the waiter is woken from the queue and takes the lock.
    /// Some of these unlocks hand the lock over (the queue's fairness
    /// timer is due after at most 1 ms, unless another lock of its
    /// bucket has just had its fair unlock).
    #[test]
    fn a_parked_waiter_is_woken_or_handed_the_lock() {
        let handed = AtomicUsize::new(0);
        for _ in 0..20 {
            let g = Guarded::new();
            g.lock.lock();
            run_bounded(
                2,
                |t| {
                    if t == 0 {
                        let (woken, was_handed) = wakes();
                        assert!(g.bump(|| {}));
                        let now = wakes();
                        assert!(now.0 > woken, "the waiter was not woken from the queue");
                        handed.fetch_add(now.1 - was_handed, Relaxed);
                    } else {
                        while g.lock.state.load(Relaxed) != super::LOCKED | super::PARKED {
                            std::thread::yield_now();
                        }
                        std::thread::sleep(Duration::from_millis(2));
                        // SAFETY: taken before the threads started.
                        unsafe { g.lock.unlock() };
                    }
                },
                "parked waiter",
            );
            assert_eq!(g.count(), 1);
        }
        assert!(handed.load(Relaxed) > 0, "no unlock handed the lock over");
    }

    /// Threads take random locks of a few at random, some holding them
    /// long enough for waiters to park: no two holders at once (the
    /// guarded words always agree), no take lost (each lock's count is
    /// the takes of it), and every thread ends.
    #[test]
    fn random_takes_of_shared_locks_keep_them_exclusive() {
        let seed = crate::seeded::seed("DEFERGC_CHANLOCK_SEED");
        println!("seed {seed} (DEFERGC_CHANLOCK_SEED={seed} repeats it)");
        const THREADS: usize = 6;
        const LOCKS: usize = 3;
        let locks: Vec<Guarded> = (0..LOCKS).map(|_| Guarded::new()).collect();
        let takes: Vec<[AtomicUsize; LOCKS]> = (0..THREADS)
            .map(|_| std::array::from_fn(|_| AtomicUsize::new(0)))
            .collect();
        let woken = AtomicUsize::new(0);
        run_bounded(
            THREADS,
            |t| {
                let before = wakes().0;
                let mut rng = crate::seeded::Rng(seed.wrapping_add(t as u64) | 1);
                for _ in 0..40_000 {
                    let l = rng.below(LOCKS as u64) as usize;
                    let hold = rng.below(1000);
                    let agreed = locks[l].bump(|| match hold {
                        0 => std::thread::sleep(Duration::from_micros(50)),
                        1..=9 => std::thread::yield_now(),
                        _ => (0..hold % 64).for_each(|_| std::hint::spin_loop()),
                    });
                    assert!(agreed, "seed {seed}: two holders of lock {l} at once");
                    takes[t][l].fetch_add(1, Relaxed);
                }
                woken.fetch_add(wakes().0 - before, Relaxed);
            },
            "random takes",
        );
        for (l, g) in locks.iter().enumerate() {
            let took: usize = takes.iter().map(|t| t[l].load(Relaxed)).sum();
            assert_eq!(g.count(), took as u64, "seed {seed}: lock {l} lost a take");
            assert_eq!(
                g.lock.state.load(Relaxed),
                0,
                "seed {seed}: lock {l} ended held"
            );
        }
        println!("threads woken from the queue: {}", woken.load(Relaxed));
    }
}

/// Nothing under loom: loom runs a thread that yields only once the
/// others cannot run, so its next try would always find the lock free and
/// the park path would go unexplored.
#[cfg(loom)]
fn pause(_: u32) {}

/// The parking queue of one lock under loom, with `parking_lot_core`'s
/// semantics for what the lock relies on: the parker's validation and the
/// unlocker's callback each run under the queue's lock, threads are woken
/// first in first out, and the woken thread gets the callback's token.
/// Whether an unpark is fair is the queue's setting: always or never.
#[cfg(loom)]
mod loom_queue {
    use loom::sync::{Condvar, Mutex};
    use std::collections::VecDeque;

    #[derive(Default)]
    struct Waiting {
        next_id: usize,
        parked: VecDeque<usize>,
        woken: Vec<(usize, usize)>,
    }

    pub(crate) struct Queue {
        waiting: Mutex<Waiting>,
        wake: Condvar,
        fair: bool,
    }

    impl Queue {
        pub(crate) fn new(fair: bool) -> Queue {
            Queue {
                waiting: Mutex::new(Waiting::default()),
                wake: Condvar::new(),
                fair,
            }
        }

        /// Sleeps until unparked if `validate` holds under the queue's
        /// lock: the unparker's token, or `None` if it did not hold.
        pub(crate) fn park(&self, validate: impl FnOnce() -> bool) -> Option<usize> {
            let mut w = self.waiting.lock().unwrap();
            if !validate() {
                return None;
            }
            let id = w.next_id;
            w.next_id += 1;
            w.parked.push_back(id);
            loop {
                if let Some(i) = w.woken.iter().position(|&(who, _)| who == id) {
                    return Some(w.woken.swap_remove(i).1);
                }
                w = self.wake.wait(w).unwrap();
            }
        }

        /// Wakes the first parked thread, if any, with the token
        /// `settle(woke, more_parked, fair)` returns, run under the
        /// queue's lock.
        pub(crate) fn unpark_one(&self, settle: impl FnOnce(bool, bool, bool) -> usize) {
            let mut w = self.waiting.lock().unwrap();
            let first = w.parked.pop_front();
            let more = !w.parked.is_empty();
            let token = settle(first.is_some(), more, first.is_some() && self.fair);
            if let Some(id) = first {
                w.woken.push((id, token));
                self.wake.notify_all();
            }
        }
    }
}
