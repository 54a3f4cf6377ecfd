//! Waiting on a runtime object: the waiter record (Go's `sudog`) and the
//! doubly linked queues of them that channels, select and `sync` keep.
//!
//! A [`Waiter`] lives on the waiting goroutine's (or thread's) own stack
//! for as long as it waits, so whatever it points to (the element to send,
//! where to receive) is scanned with that stack. Queues are changed only
//! under the lock of the object they belong to. A waker fills in the
//! outcome, marks the waiter done (release) and then wakes it; the waiter
//! waits until it sees done (acquire), so an early or spurious wakeup
//! (park returns at once after a ready that came first) never makes it
//! act on a half-filled record.
//!
//! A waiter of a `select` stands in several queues at once (one waiter
//! record per case); they share one selection word, and the first waker to
//! claim it ([`Waiter::claim`]) owns the waiter: the others skip it.
//!
//! A waiter knows which queue holds it (design.md: "a waiter knows its
//! queue"): [`Queue::push`] records the queue, [`Queue::remove`] unlinks
//! the waiter only from that queue and forgets it. Neighbour links alone
//! cannot say so: a waiter with a predecessor in the receive queue looks
//! just as queued to the send queue of the same channel.
//!
//! Under `cfg(loom)` (`tests/chan_loom.rs`) the atomics and the way a
//! thread blocks are loom's (`prim.rs`), and every change of a queue
//! checks that the queue is consistent (`Queue::check`).

use super::goroutine::Goroutine;
use super::prim::{thread, AtomicBool, AtomicUsize};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::Ordering;

/// Who waits: a goroutine (parked) or a plain thread (blocked; under
/// `cfg(loom)`, a loom thread, parked by loom).
#[derive(Clone)]
pub(crate) enum Sleeper {
    Goroutine(Goroutine),
    Thread(thread::Thread),
}

impl Sleeper {
    /// The caller, as a sleeper.
    pub(crate) fn current() -> Sleeper {
        match Goroutine::current() {
            Some(g) => Sleeper::Goroutine(g),
            None => Sleeper::Thread(thread::current()),
        }
    }

    fn wake(&self) {
        match self {
            Sleeper::Goroutine(g) => {
                g.ready();
            }
            Sleeper::Thread(t) => t.unpark(),
        }
    }

    fn wake_into(&self, batch: &mut super::sched::ReadyBatch) {
        match self {
            Sleeper::Goroutine(g) => {
                g.ready_into(batch);
            }
            Sleeper::Thread(t) => t.unpark(),
        }
    }
}

/// "Not selected yet" in a select's selection word.
pub(crate) const UNCLAIMED: usize = usize::MAX;

/// One waiting goroutine in one queue (see the module docs).
pub(crate) struct Waiter {
    who: Sleeper,
    /// The element: to send from, or to receive into (null: discard).
    pub(crate) elem: *mut u8,
    /// Set by the waker: a value passed (true), or the channel closed.
    pub(crate) success: Cell<bool>,
    done: AtomicBool,
    /// For a select: the shared selection word, and this waiter's case.
    select: *const AtomicUsize,
    pub(crate) case: usize,
    /// The queue holding it, or null.
    queue: Cell<*const Queue>,
    next: Cell<*const Waiter>,
    prev: Cell<*const Waiter>,
    /// A waiter queued some way after this one ([`Queue`]'s look-ahead),
    /// or null: only ever prefetched, never read through, as it may have
    /// left the queue (and its stack may hold anything) since.
    ahead: Cell<*const Waiter>,
    /// When a waiter on a mutex's semaphore started to wait, for the
    /// mutex profile (`contention.rs`), or 0.
    pub(crate) since: Cell<i64>,
}

impl Waiter {
    /// A waiter for the caller, on `elem`.
    pub(crate) fn new(elem: *mut u8) -> Waiter {
        Waiter {
            who: Sleeper::current(),
            elem,
            success: Cell::new(false),
            done: AtomicBool::new(false),
            select: ptr::null(),
            case: 0,
            queue: Cell::new(ptr::null()),
            next: Cell::new(ptr::null()),
            prev: Cell::new(ptr::null()),
            ahead: Cell::new(ptr::null()),
            since: Cell::new(0),
        }
    }

    /// A waiter for case `case` of a select whose selection word is
    /// `selected`, with the given sleeper (shared by the select's waiters).
    pub(crate) fn for_select(
        who: Sleeper,
        elem: *mut u8,
        selected: &AtomicUsize,
        case: usize,
    ) -> Waiter {
        Waiter {
            who,
            elem,
            success: Cell::new(false),
            done: AtomicBool::new(false),
            select: selected,
            case,
            queue: Cell::new(ptr::null()),
            next: Cell::new(ptr::null()),
            prev: Cell::new(ptr::null()),
            ahead: Cell::new(ptr::null()),
            since: Cell::new(0),
        }
    }

    /// Claims the waiter for a waker: always for a plain waiter; for a
    /// select's, only the first claim of any of its waiters wins.
    pub(crate) fn claim(&self) -> bool {
        // SAFETY: a select's word lives on its stack while it waits.
        match unsafe { self.select.as_ref() } {
            None => true,
            Some(word) => word
                .compare_exchange(UNCLAIMED, self.case, Ordering::AcqRel, Ordering::Acquire)
                .is_ok(),
        }
    }

    /// Asks the processor for the line of the goroutine this waiter wakes
    /// (its status word), ahead of [`finish`](Self::finish).
    pub(crate) fn prefetch_sleeper(&self) {
        if let Sleeper::Goroutine(g) = &self.who {
            g.prefetch();
        }
    }

    /// The waker's last act: the outcome is published, the waiter woken.
    /// The record may be gone once this returns.
    pub(crate) fn finish(&self, success: bool) {
        self.success.set(success);
        let who = self.who.clone();
        self.done.store(true, Ordering::Release);
        who.wake();
    }

    /// [`finish`](Self::finish) for a waker of many: a goroutine is queued
    /// through `batch`.
    pub(crate) fn finish_into(&self, success: bool, batch: &mut super::sched::ReadyBatch) {
        self.success.set(success);
        let who = self.who.clone();
        self.done.store(true, Ordering::Release);
        who.wake_into(batch);
    }

    /// Under loom: the waiter is in no queue and linked to nothing.
    #[cfg(loom)]
    pub(crate) fn assert_unlinked(&self) {
        assert!(
            self.queue.get().is_null() && self.next.get().is_null() && self.prev.get().is_null(),
            "a waiter still linked after its operation ended"
        );
    }

    /// Whether a waker finished with this waiter.
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Blocks the caller (the waiter's own goroutine or thread) until a
    /// waker finished with it; `reason` is what a deadlock report says.
    pub(crate) fn wait(&self, reason: &'static str) {
        while !self.is_done() {
            block(reason);
        }
    }
}

/// Blocks the calling goroutine (park) or thread (park) once; callers loop
/// on their own condition.
pub(crate) fn block(reason: &'static str) {
    match super::procs::current_g() {
        Some(g) => super::sched::park(g, reason, None),
        None => park_thread(),
    }
}

/// A plain thread waits as a block outside the runtime, so that
/// collections do not wait for it.
fn park_thread() {
    #[cfg(not(loom))]
    crate::context::block_enter();
    thread::park();
    #[cfg(not(loom))]
    crate::context::block_exit();
}

/// A queue of waiters, oldest first.
pub(crate) struct Queue {
    first: Cell<*const Waiter>,
    last: Cell<*const Waiter>,
    /// The look-ahead (a waiter and a count, see [`Queue::lag`]). Each
    /// push points the trailing waiter's `ahead` at the new waiter, so a
    /// waiter's `ahead` names the one pushed about [`AHEAD`] places after
    /// it, and a walk of the queue (a close waking a million waiters, each
    /// on a stack page of its own long out of the cache and the TLB) asks
    /// for that many waiters at once instead of one miss after another.
    /// One word, the count in the waiter pointer's low bits: a C
    /// `defergc_cond` holds a queue in three words.
    lag: Cell<usize>,
}

/// How far ahead of a waiter its `ahead` points, in waiters: the most the
/// low bits of a waiter's address hold.
const AHEAD: usize = std::mem::align_of::<Waiter>() - 1;
const _: () = assert!(AHEAD >= 7);

impl Queue {
    pub(crate) const fn new() -> Queue {
        Queue {
            first: Cell::new(ptr::null()),
            last: Cell::new(ptr::null()),
            lag: Cell::new(0),
        }
    }

    /// Forgets every waiter (a forked child's queue, whose waiters all
    /// belonged to threads and goroutines that did not come along).
    ///
    /// # Safety
    /// As [`push`](Self::push): no other thread uses the queue.
    pub(crate) unsafe fn forget_all(&self) {
        self.first.set(ptr::null());
        self.last.set(ptr::null());
        self.lag.set(0);
    }

    /// The look-ahead's trailing waiter, a queued waiter up to [`AHEAD`]
    /// places before `last` (null when the queue is empty), and how many
    /// waiters follow it, at most (a removal between it and `last` leaves
    /// the count one too high: the distance is only a hint).
    fn lag(&self) -> (*const Waiter, usize) {
        let word = self.lag.get();
        ((word & !AHEAD) as *const Waiter, word & AHEAD)
    }

    fn set_lag(&self, w: *const Waiter, gap: usize) {
        debug_assert!(w as usize & AHEAD == 0 && gap <= AHEAD);
        self.lag.set(w as usize | gap);
    }

    /// Appends `w`.
    ///
    /// # Safety
    /// The caller holds the owner's lock, and `w` stays valid (and in no
    /// queue) until it is removed.
    pub(crate) unsafe fn push(&self, w: &Waiter) {
        debug_assert!(w.queue.get().is_null(), "a waiter in two queues");
        w.queue.set(self);
        w.next.set(ptr::null());
        w.ahead.set(ptr::null());
        w.prev.set(self.last.get());
        // SAFETY: the last waiter, if any, is valid (the caller's promise
        // for every queued waiter).
        match unsafe { self.last.get().as_ref() } {
            Some(last) => last.next.set(w),
            None => self.first.set(w),
        }
        self.last.set(w);
        let (lag, gap) = self.lag();
        // SAFETY: the trailing waiter is null or queued (see `remove`), so
        // valid.
        match unsafe { lag.as_ref() } {
            None => self.set_lag(w, 0),
            Some(lag) => {
                lag.ahead.set(w);
                if gap < AHEAD {
                    self.set_lag(lag, gap + 1);
                } else {
                    // Not null: `w` was queued after it.
                    self.set_lag(lag.next.get(), gap);
                }
            }
        }
        #[cfg(loom)]
        // SAFETY: the caller holds the lock.
        unsafe {
            self.check()
        };
    }

    /// Whether this queue holds `w`: the queue it recorded.
    #[inline]
    fn holds(&self, w: &Waiter) -> bool {
        #[cfg(loom)]
        if super::prim::bug1() {
            // Bug 1 (tests/chan_loom.rs shows loom finds it): the old
            // test, which takes a waiter with a predecessor in *any*
            // queue for one of this queue's.
            return !w.prev.get().is_null() || ptr::eq(self.first.get(), w);
        }
        ptr::eq(w.queue.get(), self)
    }

    /// Removes `w` if this queue holds it (a select cleaning up); a waiter
    /// of another queue, or of none, is left alone.
    ///
    /// # Safety
    /// The caller holds the owner's lock.
    pub(crate) unsafe fn remove(&self, w: &Waiter) {
        if !self.holds(w) {
            return;
        }
        let (prev, next) = (w.prev.get(), w.next.get());
        // SAFETY: neighbours of a queued waiter are queued, so valid.
        unsafe {
            match prev.as_ref() {
                Some(p) => p.next.set(next),
                None => self.first.set(next),
            }
            match next.as_ref() {
                Some(n) => n.prev.set(prev),
                None => self.last.set(prev),
            }
        }
        let (lag, gap) = self.lag();
        if ptr::eq(lag, w) {
            // The trailing waiter leaves: the one before it is as far from
            // `last` now; at the front, the one after it is one nearer;
            // alone, nothing (the count goes too).
            if prev.is_null() && next.is_null() {
                self.set_lag(ptr::null(), 0);
            } else if prev.is_null() {
                self.set_lag(next, gap.saturating_sub(1));
            } else {
                self.set_lag(prev, gap);
            }
        }
        w.next.set(ptr::null());
        w.prev.set(ptr::null());
        w.queue.set(ptr::null());
        #[cfg(loom)]
        // SAFETY: the caller holds the lock.
        unsafe {
            self.check()
        };
    }

    /// Under loom, after every change: the queue is consistent. The chain
    /// from `first` along `next` ends at `last`, each link's `prev` is the
    /// waiter before it, and each linked waiter records this queue. Only
    /// waiters reached from `first` are read (a corrupt `last` is only
    /// compared), so a broken queue is reported before anything dangles.
    ///
    /// # Safety
    /// The caller holds the owner's lock.
    #[cfg(any(loom, test))]
    pub(crate) unsafe fn check(&self) {
        let mut prev: *const Waiter = ptr::null();
        let mut cur = self.first.get();
        let mut n = 0;
        // SAFETY: waiters reached from first are queued, so valid (in a
        // consistent queue; the checks below stop at the first break).
        while let Some(w) = unsafe { cur.as_ref() } {
            assert!(
                ptr::eq(w.prev.get(), prev),
                "corrupt wait queue: a waiter's prev is not the waiter before it"
            );
            assert!(
                ptr::eq(w.queue.get(), self),
                "corrupt wait queue: a linked waiter records another queue"
            );
            n += 1;
            assert!(n <= 1 << 20, "corrupt wait queue: a cycle");
            prev = cur;
            cur = w.next.get();
        }
        assert!(
            ptr::eq(self.last.get(), prev),
            "corrupt wait queue: last ({:?}) is not the end of the chain from first ({:?})",
            self.last.get(),
            prev
        );
        // The look-ahead's trailing waiter is queued (push writes through
        // it), and no farther than `gap` from the end.
        let (lag, gap) = self.lag();
        if lag.is_null() {
            assert!(
                n == 0,
                "corrupt wait queue: no look-ahead in a queue of {n}"
            );
        } else {
            let mut cur = lag;
            let mut after = 0;
            // SAFETY: as above; a lag outside the chain fails at `first`.
            while let Some(w) = unsafe { cur.as_ref() } {
                assert!(
                    ptr::eq(w.queue.get(), self),
                    "corrupt wait queue: the look-ahead names a waiter of no queue"
                );
                cur = w.next.get();
                after += 1;
            }
            assert!(
                after <= gap + 1,
                "corrupt wait queue: the look-ahead is {} from the end, counted {gap}",
                after - 1,
            );
            let mut cur = self.first.get();
            while !ptr::eq(cur, lag) {
                // SAFETY: as above.
                let w = unsafe { cur.as_ref() };
                cur = w
                    .expect("corrupt wait queue: the look-ahead's waiter is not in the chain")
                    .next
                    .get();
            }
        }
    }

    /// Under loom: the queue is consistent and empty.
    ///
    /// # Safety
    /// The caller holds the owner's lock.
    #[cfg(loom)]
    pub(crate) unsafe fn assert_empty(&self, what: &str) {
        // SAFETY: forwarded.
        unsafe { self.check() };
        assert!(
            self.first.get().is_null() && self.last.get().is_null(),
            "{what} is not empty at the end"
        );
    }

    /// Takes the oldest waiter that can be claimed (select waiters already
    /// claimed elsewhere are dropped from the queue on the way).
    ///
    /// # Safety
    /// The caller holds the owner's lock.
    pub(crate) unsafe fn dequeue(&self) -> Option<&Waiter> {
        loop {
            // SAFETY: queued waiters are valid.
            let w = unsafe { self.first.get().as_ref() }?;
            // SAFETY: the caller holds the lock.
            unsafe { self.remove(w) };
            if w.claim() {
                return Some(w);
            }
        }
    }

    /// Takes the oldest claimable waiter for which `pred` holds (a
    /// semaphore bucket holds the waiters of many semaphores).
    ///
    /// # Safety
    /// The caller holds the owner's lock.
    pub(crate) unsafe fn dequeue_where(&self, pred: impl Fn(&Waiter) -> bool) -> Option<&Waiter> {
        let mut cur = self.first.get();
        // SAFETY: queued waiters are valid while the lock is held.
        while let Some(w) = unsafe { cur.as_ref() } {
            let next = w.next.get();
            if pred(w) {
                // SAFETY: the caller holds the lock.
                unsafe { self.remove(w) };
                if w.claim() {
                    return Some(w);
                }
            }
            cur = next;
        }
        None
    }

    /// Whether a waiter for which `pred` holds is queued.
    ///
    /// # Safety
    /// The caller holds the owner's lock.
    pub(crate) unsafe fn any(&self, pred: impl Fn(&Waiter) -> bool) -> bool {
        let mut cur = self.first.get();
        // SAFETY: as above.
        while let Some(w) = unsafe { cur.as_ref() } {
            if pred(w) {
                return true;
            }
            cur = w.next.get();
        }
        false
    }

    /// Calls `f` with every waiter, oldest first, removing them all.
    ///
    /// # Safety
    /// The caller holds the owner's lock.
    pub(crate) unsafe fn drain(&self, mut f: impl FnMut(&Waiter)) {
        loop {
            // SAFETY: queued waiters are valid while the lock is held.
            if let Some(w) = unsafe { self.first.get().as_ref() } {
                crate::cache::prefetch(w.ahead.get());
            }
            // SAFETY: forwarded.
            let Some(w) = (unsafe { self.dequeue() }) else {
                break;
            };
            f(w);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The waiters reached from `first`, as indices into `all`.
    fn order(q: &Queue, all: &[Waiter]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cur = q.first.get();
        // SAFETY: the test owns every waiter; the queue was checked.
        while let Some(w) = unsafe { cur.as_ref() } {
            out.push(all.iter().position(|a| ptr::eq(a, w)).unwrap());
            cur = w.next.get();
        }
        out
    }

    /// Waiters that stay where they are (the vector is never grown).
    fn waiters(n: usize) -> Vec<Waiter> {
        (0..n).map(|_| Waiter::new(ptr::null_mut())).collect()
    }

    /// Pushed in a row, each waiter's look-ahead names the one `AHEAD + 1`
    /// places after it; a drain takes them all, oldest first, and leaves
    /// the queue with no look-ahead.
    #[test]
    fn a_waiters_look_ahead_names_the_one_queued_a_few_places_later() {
        let all = waiters(100);
        let q = Queue::new();
        for w in &all {
            // SAFETY: the test is the lock; the waiters outlive the queue's use.
            unsafe { q.push(w) };
        }
        for (i, w) in all.iter().enumerate().take(all.len() - AHEAD - 1) {
            assert!(
                ptr::eq(w.ahead.get(), &all[i + AHEAD + 1]),
                "waiter {i}'s look-ahead is not waiter {}",
                i + AHEAD + 1
            );
        }
        let mut drained = Vec::new();
        // SAFETY: as above.
        unsafe { q.drain(|w| drained.push(w as *const Waiter)) };
        assert!(drained.iter().zip(&all).all(|(&d, w)| ptr::eq(d, w)));
        assert_eq!(drained.len(), all.len());
        assert_eq!(q.lag.get(), 0, "an empty queue keeps a look-ahead");
        // A lone waiter that leaves takes the whole look-ahead with it,
        // count and all, though the count was too high.
        for w in &all[..4] {
            // SAFETY: as above.
            unsafe { q.push(w) };
        }
        // SAFETY: as above.
        unsafe { (q.remove(&all[1]), q.remove(&all[2])) };
        // SAFETY: as above.
        let taken = unsafe { (q.dequeue().is_some(), q.dequeue().is_some()) };
        assert_eq!(taken, (true, true));
        assert_eq!(q.lag.get(), 0, "a look-ahead count with no waiter");
    }

    /// Random pushes, removals from anywhere, dequeues and drains, against
    /// a model: after each, the queue is consistent (its look-ahead names a
    /// queued waiter within its count of the end) and holds the model's
    /// waiters in the model's order.
    #[test]
    fn a_seeded_stress_keeps_queue_and_look_ahead_consistent() {
        let seed = crate::seeded::seed("DEFERGC_QUEUE_SEED");
        println!("seed {seed} (DEFERGC_QUEUE_SEED={seed} repeats it)");
        let mut rng = crate::seeded::Rng(seed);
        let mut below = |n: usize| rng.below(n as u64) as usize;
        let all = waiters(64);
        let q = Queue::new();
        let mut model: std::collections::VecDeque<usize> = Default::default();
        let (mut pushes, mut removals) = (0, 0);
        for step in 0..200_000 {
            let queued = |i: usize, m: &std::collections::VecDeque<usize>| m.contains(&i);
            // SAFETY (every call below): the test is the lock, and the
            // waiters outlive the queue's use of them.
            match below(16) {
                0..=7 => {
                    let i = below(all.len());
                    if !queued(i, &model) {
                        // SAFETY: see above.
                        unsafe { q.push(&all[i]) };
                        model.push_back(i);
                        pushes += 1;
                    }
                }
                8..=11 => {
                    let i = below(all.len());
                    // SAFETY: see above.
                    unsafe { q.remove(&all[i]) };
                    if let Some(at) = model.iter().position(|&m| m == i) {
                        model.remove(at);
                        removals += 1;
                    }
                }
                12..=14 => {
                    // SAFETY: see above.
                    let got = unsafe { q.dequeue() }.map(|w| w as *const Waiter);
                    let want = model.pop_front().map(|i| &all[i] as *const Waiter);
                    assert_eq!(got, want, "step {step}: dequeue took the wrong waiter");
                }
                _ => {
                    if below(8) == 0 {
                        let mut got = Vec::new();
                        // SAFETY: see above.
                        unsafe { q.drain(|w| got.push(w as *const Waiter)) };
                        let want: Vec<_> =
                            model.drain(..).map(|i| &all[i] as *const Waiter).collect();
                        assert_eq!(got, want, "step {step}: a drain in the wrong order");
                    }
                }
            }
            // SAFETY: see above.
            unsafe { q.check() };
            assert_eq!(
                order(&q, &all),
                model.iter().copied().collect::<Vec<_>>(),
                "step {step}: the queue is not the model"
            );
        }
        assert!(
            pushes > 10_000 && removals > 10_000,
            "the stress did not stress"
        );
    }
}
