//! Timers: `sleep`, and timers that deliver on a channel (Go's
//! `time.After`, `time.NewTimer` with `Stop` and `Reset`).
//!
//! One heap of pending timers, ordered by deadline, under one lock. No
//! thread of its own: the heap publishes its earliest deadline to the idle
//! workers' parker (`park.rs`), a worker looking for work runs what is
//! due, and the idle worker that watches the poller blocks until the
//! earliest deadline (Go's timers in `findRunnable` and `netpoll(delay)`).
//! A timer that becomes the earliest wakes that watcher, or makes an idle
//! worker watch. What is due fires: a sleeping goroutine is woken, a
//! channel timer sends the time on its channel (capacity one; a send that
//! would block is dropped, as Go's timer channels did before Go 1.23), a
//! call runs. Pending timers count for the deadlock check: goroutines
//! waiting on a timer are not asleep for good. A timer set while every
//! worker runs a goroutine that makes no runtime call fires when one of
//! them next schedules (scheduling is cooperative: see `sched.rs`).
//!
//! The heap is kept in root memory, so a pending channel timer (and its
//! channel, in the collected heap) stays alive while only the heap holds
//! it, as Go's timers do.

use super::chan::RawChan;
use super::wait::Waiter;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What a timer does when it fires.
#[derive(Clone, Copy)]
enum Action {
    /// Finish a sleeper's waiter.
    Wake(*const Waiter),
    /// Send the time on a timer's channel.
    Send(*const Timer),
    /// Call `f(a, b, id)` with the entry's id, after the heap's lock is
    /// released (the callee may take locks that are held around
    /// [`cancel_call`]: the network poller's deadlines).
    Call(fn(u64, u64, u64), u64, u64),
}

#[derive(Clone, Copy)]
struct Entry {
    at: Instant,
    /// Ties broken by arrival.
    seq: u64,
    action: Action,
}

/// A channel timer: its channel, and the heap entry it has (by sequence
/// number; 0 when stopped or fired).
#[repr(C)]
pub(crate) struct Timer {
    /// [`Timer::MAGIC`]: lets the C ABI refuse a pointer that is not a
    /// timer.
    magic: u64,
    pub(crate) chan: *const RawChan,
    pending: std::sync::atomic::AtomicU64,
    /// Called when the timer's entry leaves the heap (fired or stopped):
    /// the Rust API drops the reference the heap held.
    release: Option<unsafe fn(*const Timer)>,
}

struct Heap {
    /// A binary min-heap of entries, in root memory (see the module docs).
    items: *mut Entry,
    len: usize,
    cap: usize,
    seq: u64,
    /// The ids of the [`Action::Call`] entries in the heap, and those of
    /// them cancelled: a cancelled call stays in the heap until it comes
    /// up (skipped then) or the cancelled outnumber a quarter of the heap
    /// (all removed at once), so a cancel costs a set insert, not a
    /// search of the heap (a server moves a deadline per request).
    calls: BTreeSet<u64>,
    cancelled: BTreeSet<u64>,
}

// SAFETY: the heap is touched only under its lock.
unsafe impl Send for Heap {}

static HEAP: Mutex<Heap> = Mutex::new(Heap {
    items: std::ptr::null_mut(),
    len: 0,
    cap: 0,
    seq: 0,
    calls: BTreeSet::new(),
    cancelled: BTreeSet::new(),
});
fn heap() -> MutexGuard<'static, Heap> {
    HEAP.lock().unwrap_or_else(|e| e.into_inner())
}

impl Heap {
    fn item(&self, i: usize) -> Entry {
        // SAFETY: i < len <= cap entries, initialised.
        unsafe { self.items.add(i).read() }
    }

    fn set(&mut self, i: usize, e: Entry) {
        // SAFETY: i < cap.
        unsafe { self.items.add(i).write(e) };
    }

    fn less(a: &Entry, b: &Entry) -> bool {
        (a.at, a.seq) < (b.at, b.seq)
    }

    fn push(&mut self, at: Instant, action: Action) -> u64 {
        if self.len == self.cap {
            let cap = (self.cap * 2).max(64);
            let bytes = cap * std::mem::size_of::<Entry>();
            let block = crate::roots::alloc_block(bytes).cast::<Entry>().as_ptr();
            if !self.items.is_null() {
                // SAFETY: the old block holds len entries; the new has room.
                unsafe {
                    std::ptr::copy_nonoverlapping(self.items, block, self.len);
                    crate::roots::free_block(std::ptr::NonNull::new_unchecked(self.items.cast()));
                }
            }
            self.items = block;
            self.cap = cap;
        }
        self.seq += 1;
        let e = Entry {
            at,
            seq: self.seq,
            action,
        };
        let i = self.len;
        self.len += 1;
        self.set(i, e);
        self.sift_up(i);
        self.publish();
        self.seq
    }

    /// Tells the idle workers the earliest deadline (after every change).
    fn publish(&self) {
        super::park::set_next_timer((self.len > 0).then(|| self.item(0).at));
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !Heap::less(&self.item(i), &self.item(parent)) {
                break;
            }
            let (a, b) = (self.item(i), self.item(parent));
            self.set(i, b);
            self.set(parent, a);
            i = parent;
        }
    }

    fn remove_at(&mut self, i: usize) -> Entry {
        let e = self.item(i);
        self.len -= 1;
        if i < self.len {
            let last = self.item(self.len);
            self.set(i, last);
            self.sift_down(i);
            // It may also need to go up.
            self.sift_up(i);
        }
        // Clear the freed entry: root memory keeps nothing alive.
        // SAFETY: self.len < cap.
        unsafe { std::ptr::write_bytes(self.items.add(self.len), 0, 1) };
        self.publish();
        e
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < self.len && Heap::less(&self.item(l), &self.item(m)) {
                m = l;
            }
            if r < self.len && Heap::less(&self.item(r), &self.item(m)) {
                m = r;
            }
            if m == i {
                return;
            }
            let (a, b) = (self.item(i), self.item(m));
            self.set(i, b);
            self.set(m, a);
            i = m;
        }
    }

    fn position(&self, seq: u64) -> Option<usize> {
        (0..self.len).find(|&i| self.item(i).seq == seq)
    }

    /// Removes every cancelled call and restores the heap order.
    fn sweep_cancelled(&mut self) {
        let mut kept = 0;
        for i in 0..self.len {
            let e = self.item(i);
            if !self.cancelled.contains(&e.seq) {
                self.set(kept, e);
                kept += 1;
            }
        }
        // SAFETY: the entries from kept to len are stale copies; cleared so
        // that root memory keeps nothing alive.
        unsafe { std::ptr::write_bytes(self.items.add(kept), 0, self.len - kept) };
        self.len = kept;
        self.cancelled.clear();
        for i in (0..self.len / 2).rev() {
            self.sift_down(i);
        }
        self.publish();
    }
}

/// Whether the workers know to run this heap (see [`add`]).
static HOOKED: AtomicBool = AtomicBool::new(false);

/// Adds an entry: the workers are told of the heap once, and of a new
/// earliest deadline each time. Returns the entry's sequence number.
fn add(h: MutexGuard<'static, Heap>, at: Instant, action: Action) -> u64 {
    let mut h = h;
    if !HOOKED.load(Ordering::Relaxed) {
        HOOKED.store(true, Ordering::Relaxed);
        super::park::set_run_timers(run_due);
    }
    let seq = h.push(at, action);
    let earliest = h.item(0).seq == seq;
    drop(h);
    if earliest {
        super::park::timers_changed();
    }
    seq
}

/// Takes the heap's lock until the fork is over (`gc::fork`): no worker is
/// caught firing, nor the heap half-changed.
pub(crate) fn lock_for_fork() {
    crate::gc::fork::held::keep(heap());
}

/// In a forked child, last of the go layer's repairs: no worker watches
/// the timers the heap still holds (channels of timers the forking
/// goroutine may wait on); one is made to.
pub(crate) fn restart_after_fork() {
    let pending = heap().len > 0;
    if pending {
        super::park::timers_changed();
    }
}

/// Fires every entry that is due (called by workers, see `park.rs`);
/// whether any was.
fn run_due() -> bool {
    let mut fired = false;
    let mut h = heap();
    loop {
        if h.len == 0 || h.item(0).at > Instant::now() {
            return fired;
        }
        let e = h.remove_at(0);
        if let Action::Call(f, a, b) = e.action {
            h.calls.remove(&e.seq);
            if h.cancelled.remove(&e.seq) {
                continue;
            }
            fired = true;
            drop(h);
            f(a, b, e.seq);
            h = heap();
            continue;
        }
        fired = true;
        // The entry's pointers stay valid while it is in the heap; fire
        // under the lock, so a Stop that took the lock first wins.
        fire(&e);
    }
}

fn fire(e: &Entry) {
    match e.action {
        // SAFETY: a sleeper's waiter stays on its stack until finished.
        Action::Wake(w) => unsafe { (*w).finish(true) },
        Action::Send(t) => {
            // SAFETY: a pending timer is kept alive by the heap (root
            // memory) and its channel by the timer.
            let timer = unsafe { &*t };
            timer.pending.store(0, std::sync::atomic::Ordering::Release);
            let now = now_unix_nanos();
            // SAFETY: a timer channel has 8-byte elements.
            let _ = unsafe { (*timer.chan).send((&now as *const i64).cast(), false) };
            if let Some(release) = timer.release {
                // SAFETY: the entry has left the heap.
                unsafe { release(t) };
            }
        }
        Action::Call(..) => unreachable!("called outside the lock by `run_due`"),
    }
}

/// The wall-clock time in nanoseconds since 1970 (what a timer channel
/// delivers, as Go's `time.Now()`).
pub(crate) fn now_unix_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

fn deadline(ns: i64) -> Instant {
    let now = Instant::now();
    now.checked_add(Duration::from_nanos(ns.max(0) as u64))
        .unwrap_or(now + Duration::from_secs(100 * 365 * 86400))
}

/// Go's `time.Sleep(ns)`: a goroutine parks ("sleep") until its timer
/// fires; a plain thread sleeps. Non-positive: returns at once.
pub(crate) fn sleep(ns: i64) {
    if ns <= 0 {
        return;
    }
    if super::procs::current_g().is_none() {
        std::thread::sleep(Duration::from_nanos(ns as u64));
        return;
    }
    let w = Waiter::new(std::ptr::null_mut());
    add(heap(), deadline(ns), Action::Wake(&w));
    w.wait("sleep");
}

/// Calls `f(a, b, id)` from a worker `ns` from now, where `id`
/// (never 0) is what this returns; [`cancel_call`] takes it back. The call
/// may still come after a cancel that raced with it: callees compare the
/// id with the one they armed.
pub(crate) fn call_after(ns: i64, f: fn(u64, u64, u64), a: u64, b: u64) -> u64 {
    let mut h = heap();
    // The id is the entry's sequence number, which `add` assigns next.
    let id = h.seq + 1;
    h.calls.insert(id);
    let seq = add(h, deadline(ns), Action::Call(f, a, b));
    debug_assert_eq!(seq, id);
    id
}

/// Takes back a [`call_after`] that has not fired yet; returns whether it
/// was still pending.
pub(crate) fn cancel_call(id: u64) -> bool {
    let mut h = heap();
    if !h.calls.remove(&id) {
        return false;
    }
    h.cancelled.insert(id);
    if h.cancelled.len() > 64 + h.len / 4 {
        h.sweep_cancelled();
    }
    true
}

/// Arms `t` to fire `ns` from now (replacing a pending firing); returns
/// whether it was pending (Go's `Reset`).
///
/// # Safety
/// `t` stays valid while it is pending (it is in root or collected memory
/// that the heap's reference keeps alive).
pub(crate) unsafe fn reset(t: *const Timer, ns: i64) -> bool {
    let mut h = heap();
    // SAFETY: the caller's timer.
    let timer = unsafe { &*t };
    let was = stop_locked(&mut h, timer);
    // Pending before it is in the heap (the heap's lock is held until it
    // is): a Stop finds the entry the sequence number names.
    timer
        .pending
        .store(h.seq + 1, std::sync::atomic::Ordering::Release);
    add(h, deadline(ns), Action::Send(t));
    was
}

/// Stops `t`; returns whether it was pending (Go's `Stop`).
///
/// # Safety
/// As for [`reset`].
pub(crate) unsafe fn stop(t: *const Timer) -> bool {
    let mut h = heap();
    // SAFETY: the caller's timer.
    stop_locked(&mut h, unsafe { &*t })
}

fn stop_locked(h: &mut Heap, t: &Timer) -> bool {
    let seq = t.pending.swap(0, std::sync::atomic::Ordering::AcqRel);
    if seq == 0 {
        return false;
    }
    match h.position(seq) {
        Some(i) => {
            h.remove_at(i);
            if let Some(release) = t.release {
                // SAFETY: the entry has left the heap.
                unsafe { release(t) };
            }
            true
        }
        None => false,
    }
}

impl Timer {
    const MAGIC: u64 = 0x6466_6774_696d_6572; // "dfgtimer"

    /// Whether `p` (aligned, a readable word) holds a timer.
    ///
    /// # Safety
    /// `p` is aligned and points to at least a word of readable memory.
    pub(crate) unsafe fn is_timer(p: *const Timer) -> bool {
        // SAFETY: the magic is the first field (repr(C)).
        unsafe { p.cast::<u64>().read() == Self::MAGIC }
    }

    /// A stopped timer delivering on `chan`; `release` (if any) runs when a
    /// firing it was armed for leaves the heap.
    pub(crate) fn new(chan: *const RawChan, release: Option<unsafe fn(*const Timer)>) -> Timer {
        Timer {
            magic: Self::MAGIC,
            chan,
            pending: std::sync::atomic::AtomicU64::new(0),
            release,
        }
    }
}

/// Whether any timer is pending (the deadlock check).
pub(crate) fn pending() -> bool {
    HEAP.try_lock().map_or(true, |h| h.len > h.cancelled.len())
}
