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
//! tries, `BASE` pauses the first time), and only then sleeps in the
//! kernel on the word itself (a futex).
//!
//! The word: `LOCKED`; `PARKED` while a thread may sleep on it; and
//! `HANDED`, with `LOCKED`, while a fair unlock hands the lock to a
//! sleeper. A sleeper sets `PARKED` and sleeps only if the word still
//! holds `LOCKED | PARKED` when the kernel looks, so an unlocker that
//! clears the word and then wakes one either wakes it or it sees the
//! change and does not sleep. A thread that has slept takes the lock with
//! `PARKED` set, for the sleepers it cannot see.
//!
//! Now and then (at most once every [`FAIR_EVERY`] on a thread) an unlock
//! is fair, so that a sleeper cannot lose to the spinners for ever: the
//! unlocker leaves `LOCKED` set, adds `HANDED`, and wakes one sleeper;
//! only a thread past its spinning takes a handed lock, by clearing
//! `HANDED`. If the kernel woke no one (no thread slept), the unlocker
//! takes the hand-over back and frees the lock, unless a waiter took it
//! meanwhile. Any waiter done spinning may take a handed lock, the woken
//! one or another. The lock keeps no list of its waiters (a table of
//! parked threads, as parking_lot's, would still list the parent's in a
//! forked child and give their memory to the child's new threads). In a
//! child a free lock is free and a held one stays held (its holder is
//! gone); a lock caught in a fair unlock, handed over with no one to take
//! it, has no holder ([`ChanLock::has_holder`]) and is taken by the
//! child's first waiter done spinning, whose unlock then costs one wake
//! that wakes no one.
//!
//! Under `cfg(loom)` the futex is a loom mutex and condition variable with
//! the kernel's semantics where the lock relies on them (the comparison
//! under its lock, the wake's count of woken sleepers; it never wakes a
//! sleeper spuriously, as the kernel may, which the lock's loop allows),
//! the pause nothing, one try before sleeping,
//! and every unlock fair or none: `tests/lock_loom.rs` runs this code.
//! The channel models (`tests/chan_loom.rs`) run on a loom mutex in its
//! place (`prim.rs`): with each of this lock's tries a point where loom
//! may switch threads, their interleavings are too many to explore.

use super::prim::AtomicU32;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

const LOCKED: u32 = 1;
const PARKED: u32 = 2;
const HANDED: u32 = 4;

/// Tries before sleeping, the pause doubling each time.
#[cfg(not(loom))]
const ROUNDS: u32 = 5;
#[cfg(loom)]
const ROUNDS: u32 = 1;

/// Pause instructions before the second try.
#[cfg(not(loom))]
const BASE: u32 = 8;

/// The shortest time between two fair unlocks on one thread.
#[cfg(not(loom))]
pub(crate) const FAIR_EVERY: std::time::Duration = std::time::Duration::from_micros(500);

pub(crate) struct ChanLock {
    state: AtomicU32,
    #[cfg(loom)]
    futex: loom_futex::Futex,
    /// Under loom: every unlock with a sleeper is fair, or none.
    #[cfg(loom)]
    fair: bool,
}

impl ChanLock {
    #[cfg(not(loom))]
    pub(crate) fn new() -> ChanLock {
        ChanLock {
            state: AtomicU32::new(0),
        }
    }

    /// A lock whose every unlock with a sleeper is fair (hands the lock
    /// over), or none; `stale`: as a forked child finds a lock whose fair
    /// unlock was under way in the parent (handed over, no holder, no
    /// sleeper).
    #[cfg(loom)]
    pub(crate) fn with_fair_unparks(fair: bool, stale: bool) -> ChanLock {
        ChanLock {
            state: AtomicU32::new(if stale { LOCKED | PARKED | HANDED } else { 0 }),
            futex: loom_futex::Futex::new(),
            fair,
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

    /// Whether the word says `LOCKED`, held or handed over (assertions:
    /// a lock left handed over with no one to take it is a bug).
    #[cfg_attr(not(loom), allow(dead_code))] // the loom models' check
    pub(crate) fn is_locked(&self) -> bool {
        self.state.load(Relaxed) & LOCKED != 0
    }

    /// Whether a thread holds the lock: `LOCKED` without `HANDED` (a
    /// handed lock is no thread's until a waiter claims it, and any
    /// waiter done spinning may). A forked child's repair reads it: a
    /// held lock's holder is a thread that did not come along, while a
    /// lock caught mid-hand-over is the child's first waiter's.
    pub(crate) fn has_holder(&self) -> bool {
        self.state.load(Relaxed) & (LOCKED | HANDED) == LOCKED
    }

    /// Puts a free lock in the state a fork during a fair unlock leaves
    /// in the child: handed over, with no holder and no sleeper. Waits
    /// while another thread holds it.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn hand_over_to_no_one(&self) {
        while self
            .state
            .compare_exchange(0, LOCKED | PARKED | HANDED, Acquire, Relaxed)
            .is_err()
        {
            std::thread::yield_now();
        }
    }

    #[cold]
    fn lock_contended(&self, mut seen: u32) {
        let mut round = 0;
        // Set once this thread has slept: its takes keep `PARKED` set.
        let mut slept = 0;
        loop {
            if seen & LOCKED == 0 {
                match self
                    .state
                    .compare_exchange(seen, seen | LOCKED | slept, Acquire, Relaxed)
                {
                    Ok(_) => return,
                    Err(now) => {
                        seen = now;
                        continue;
                    }
                }
            }
            if seen & HANDED != 0 && (slept != 0 || round >= ROUNDS) {
                // A fair unlock's hand-over: the lock is the thread's
                // that clears the mark (one that has slept, or is done
                // spinning, so that a woken sleeper need not spin first).
                match self
                    .state
                    .compare_exchange(seen, seen & !HANDED, Acquire, Relaxed)
                {
                    Ok(_) => {
                        #[cfg(all(test, not(loom)))]
                        tests::count_handed();
                        return;
                    }
                    Err(now) => {
                        seen = now;
                        continue;
                    }
                }
            }
            if round < ROUNDS {
                pause(round);
                round += 1;
                // No read first: the word as last seen, unlocked (a
                // handed lock is never taken here: it keeps `LOCKED`).
                let free = seen & !LOCKED;
                match self
                    .state
                    .compare_exchange(free, free | LOCKED | slept, Acquire, Relaxed)
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
            self.sleep(LOCKED | PARKED);
            slept = PARKED;
            round = 0;
            seen = self.state.load(Relaxed);
        }
    }

    /// Sleeps while the word is `expected`, until woken (or at once if it
    /// is not).
    #[cfg(not(loom))]
    fn sleep(&self, expected: u32) {
        // SAFETY: a futex wait on the lock's own word, which lives as long
        // as the lock the caller borrows; the kernel only reads it. An
        // early return (a changed word, a signal) is a spurious wake,
        // which the caller's loop allows.
        let r = unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.state.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                expected,
                std::ptr::null::<libc::timespec>(),
            )
        };
        #[cfg(test)]
        if r == 0 {
            tests::count_wake();
        }
        let _ = r;
    }

    #[cfg(loom)]
    fn sleep(&self, expected: u32) {
        self.futex.wait(|| self.state.load(Relaxed) == expected);
    }

    /// Wakes one thread sleeping on the word: whether there was one.
    #[cfg(not(loom))]
    fn wake_one(&self) -> bool {
        // SAFETY: a futex wake on the lock's own word; it reads no memory.
        let woken = unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.state.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1,
            )
        };
        woken > 0
    }

    #[cfg(loom)]
    fn wake_one(&self) -> bool {
        self.futex.wake_one()
    }

    /// The unlock of a lock whose word had `PARKED`: frees it and wakes
    /// one sleeper, or hands it over (a fair unlock).
    #[cold]
    fn unlock_parked(&self) {
        #[cfg(loom)]
        if crate::go::prim::lost_handoff() {
            // The bug brought back: the lock freed, no one woken.
            self.state.store(0, Release);
            return;
        }
        if !self.fair_due() {
            // `PARKED` goes with the lock: the one woken takes the lock
            // with it set again, or sets it again before it sleeps; a
            // waiter not yet asleep sees the word changed and tries again.
            self.state.store(0, Release);
            self.wake_one();
            return;
        }
        // The word holds `LOCKED | PARKED` (a holder never sees `HANDED`:
        // whoever clears it holds the lock).
        self.state.fetch_or(HANDED, Release);
        if self.wake_one() {
            // The woken thread takes it, unless a waiter not yet asleep
            // (which cannot sleep on this word now) took it first.
            return;
        }
        // No one slept, and no one can fall asleep while `HANDED` is set:
        // free the lock, unless a waiter took it.
        #[cfg(loom)]
        if crate::go::prim::stranded_handoff() {
            return;
        }
        let mut seen = self.state.load(Relaxed);
        while seen & HANDED != 0 {
            match self.state.compare_exchange(seen, 0, Release, Relaxed) {
                Ok(_) => return,
                Err(now) => seen = now,
            }
        }
    }

    /// Whether this unlock is to be fair: at most once every
    /// [`FAIR_EVERY`] on a thread. Never inlined: an unlock may be
    /// inlined into code that switches goroutines, and the thread-local's
    /// address must be computed on the thread that reads it (design.md
    /// invariant 10).
    #[cfg(not(loom))]
    #[inline(never)]
    fn fair_due(&self) -> bool {
        use std::cell::Cell;
        use std::time::Instant;
        thread_local! {
            static NEXT_FAIR: Cell<Option<Instant>> = const { Cell::new(None) };
        }
        let now = Instant::now();
        NEXT_FAIR
            .try_with(|next| {
                let due = next.get().is_none_or(|at| now >= at);
                if due {
                    next.set(Some(now + FAIR_EVERY));
                }
                due
            })
            .unwrap_or(false)
    }

    #[cfg(loom)]
    fn fair_due(&self) -> bool {
        self.fair
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
    use super::ChanLock;
    use std::cell::{Cell, UnsafeCell};
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::mpsc;
    use std::time::Duration;

    thread_local! {
        /// This thread's wakes from a sleep on a lock's word, and its
        /// takes of a handed lock (per thread: the other tests' channels
        /// sleep too).
        static WAKES: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    }

    #[inline(never)]
    pub(super) fn count_wake() {
        WAKES.with(|w| w.set((w.get().0 + 1, w.get().1)));
    }

    #[inline(never)]
    pub(super) fn count_handed() {
        WAKES.with(|w| w.set((w.get().0, w.get().1 + 1)));
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
    /// 2 ms more: the waiter is woken from its sleep and takes the lock.
    /// The holders' unlocks hand the lock over (each holder is a new
    /// thread, whose first unlock with a sleeper is fair).
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
                        assert!(now.0 > woken, "the waiter was not woken from its sleep");
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
        println!("threads woken from a sleep: {}", woken.load(Relaxed));
    }

    /// Threads of the parent wait on a lock when the process forks; in
    /// the child, new threads (which may get the parent's waiters' stacks
    /// back) contend on locks of their own: every thread must end and
    /// every take must count.
    #[test]
    fn a_forked_child_contends_on_its_own_locks() {
        let seed = crate::seeded::seed("DEFERGC_CHANLOCK_SEED");
        println!("seed {seed} (DEFERGC_CHANLOCK_SEED={seed} repeats it)");
        for round in 0..8u64 {
            let held = Guarded::new();
            held.lock.lock();
            std::thread::scope(|sc| {
                for _ in 0..6 {
                    sc.spawn(|| assert!(held.bump(|| {})));
                }
                while held.lock.state.load(Relaxed) != super::LOCKED | super::PARKED {
                    std::thread::yield_now();
                }
                std::thread::sleep(Duration::from_millis(5));
                // SAFETY: fork; the child only uses what it makes and ends
                // with `_exit`.
                let pid = unsafe { libc::fork() };
                assert!(pid >= 0);
                if pid == 0 {
                    // SAFETY: in the child: a hang is ended by the alarm.
                    unsafe { libc::alarm(20) };
                    let run = || {
                        let locks: Vec<Guarded> = (0..16).map(|_| Guarded::new()).collect();
                        let ok = std::thread::scope(|cs| {
                            let hs: Vec<_> = (0..8u64)
                                .map(|t| {
                                    let locks = &locks;
                                    cs.spawn(move || {
                                        let mut rng = crate::seeded::Rng(
                                            (seed ^ round << 8).wrapping_add(t) | 1,
                                        );
                                        (0..5_000).all(|_| {
                                            let l = rng.below(16) as usize;
                                            let hold = rng.below(100);
                                            locks[l].bump(|| {
                                                if hold == 0 {
                                                    std::thread::sleep(Duration::from_micros(50))
                                                }
                                            })
                                        })
                                    })
                                })
                                .collect();
                            hs.into_iter().all(|h| h.join().unwrap_or(false))
                        });
                        let total: u64 = locks.iter().map(Guarded::count).sum();
                        ok && total == 8 * 5_000
                    };
                    // A panic must not unwind into the parent's scope,
                    // which would wait for threads the child does not have.
                    let code = match std::panic::catch_unwind(run) {
                        Ok(true) => 0,
                        Ok(false) => 1,
                        Err(_) => 2,
                    };
                    // SAFETY: ends the child without running the parent's exit handlers.
                    unsafe { libc::_exit(code) };
                }
                // SAFETY: taken before the threads started.
                unsafe { held.lock.unlock() };
                let status = crate::gc::fork::wait_child(pid, Duration::from_secs(60));
                assert!(
                    status.is_some_and(|s| libc::WIFEXITED(s) && libc::WEXITSTATUS(s) == 0),
                    "seed {seed} round {round}: the child failed (status {status:#x?}; None: killed after a minute)"
                );
            });
            assert_eq!(held.count(), 6);
        }
    }
}

/// Nothing under loom: loom runs a thread that yields only once the
/// others cannot run, so its next try would always find the lock free and
/// the park path would go unexplored.
#[cfg(loom)]
fn pause(_: u32) {}

/// A futex under loom, with the kernel's semantics for what the lock
/// relies on: the sleeper's comparison runs under the futex's lock, which
/// the waker takes after its store, and a wake says whether it woke one.
#[cfg(loom)]
mod loom_futex {
    use loom::sync::{Condvar, Mutex};
    use std::collections::VecDeque;

    #[derive(Default)]
    struct Sleepers {
        next_id: usize,
        asleep: VecDeque<usize>,
        woken: Vec<usize>,
    }

    pub(crate) struct Futex {
        sleepers: Mutex<Sleepers>,
        wake: Condvar,
    }

    impl Futex {
        pub(crate) fn new() -> Futex {
            Futex {
                sleepers: Mutex::new(Sleepers::default()),
                wake: Condvar::new(),
            }
        }

        /// Sleeps until woken if `unchanged` holds under the futex's lock.
        pub(crate) fn wait(&self, unchanged: impl FnOnce() -> bool) {
            let mut s = self.sleepers.lock().unwrap();
            if !unchanged() {
                return;
            }
            let id = s.next_id;
            s.next_id += 1;
            s.asleep.push_back(id);
            loop {
                if let Some(i) = s.woken.iter().position(|&who| who == id) {
                    s.woken.swap_remove(i);
                    return;
                }
                s = self.wake.wait(s).unwrap();
            }
        }

        /// Wakes the first sleeper, if any: whether there was one.
        pub(crate) fn wake_one(&self) -> bool {
            let mut s = self.sleepers.lock().unwrap();
            match s.asleep.pop_front() {
                Some(id) => {
                    s.woken.push(id);
                    self.wake.notify_all();
                    true
                }
                None => false,
            }
        }
    }
}
