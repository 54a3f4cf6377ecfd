//! Timers: `sleep`, and timers that deliver on a channel (Go's
//! `time.After`, `time.NewTimer` with `Stop` and `Reset`).
//!
//! Heaps of pending timers ordered by deadline, each under its own lock:
//! one per processor (its id modulo [`TIMER_HEAPS`]), as Go keeps a timer
//! heap per P, so that goroutines sleeping on different processors do not
//! contend for one lock. A sleep and a call go to the heap of the
//! processor that sets them (heap 0 from a thread without one); a channel
//! timer always to heap 0, so that its `Stop` and `Reset` find it under
//! one lock. Each heap is 4-ary (Go's: half the depth of a binary heap,
//! whose levels are cache misses with 100,000 timers), and keeps beside
//! it, in a ring, the sleeps that came in deadline order ([`Run`]).
//!
//! No thread of its own: each heap publishes its earliest deadline to the
//! idle workers' parker (`park.rs`); a worker looking for work runs what
//! is due on its processor's heap, and on every heap every 61 scheduling
//! points, when it finds no goroutine to run, or when sysmon asks (it made
//! a goroutine yield for a due timer); the idle worker that watches the
//! poller blocks until the earliest
//! deadline of all heaps and then runs every heap's (Go's timers in
//! `findRunnable`, `stealWork` and `netpoll(delay)`). A timer that
//! becomes its heap's earliest wakes that watcher, or makes an idle worker
//! watch; a watcher handed a processor, or a worker whose thread ends,
//! makes another watch (`park::pass_watch`). What is due fires: a sleeping goroutine is woken (after the
//! heap's lock is released: no one can stop a sleep), a channel timer
//! sends the time on its channel (capacity one; a send that would block is
//! dropped, as Go's timer channels did before Go 1.23), a call runs.
//! Pending timers count for the deadlock check: goroutines waiting on a
//! timer are not asleep for good. A timer set while every worker runs a
//! goroutine that makes no runtime call fires when one of them next
//! schedules (scheduling is cooperative: see `sched.rs`).
//!
//! The heaps are kept in root memory, so a pending channel timer (and its
//! channel, in the collected heap) stays alive while only a heap holds
//! it, as Go's timers do.

use super::chan::RawChan;
use super::park::{now_ns, NO_TIMER, TIMER_HEAPS};
use super::prim::{AtomicUsize, Mutex, MutexGuard};
use super::wait::Waiter;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What a timer does when it fires.
#[derive(Clone, Copy)]
enum Action {
    /// Finish a sleeper's waiter.
    Wake(*const Waiter),
    /// Send the time on a timer's channel.
    Send(*const Timer),
    /// Make the call the heap keeps under the entry's id (see
    /// [`Heap::calls`]), after the heap's lock is released (the callee may
    /// take locks that are held around [`cancel_call`]: the network
    /// poller's deadlines). Kept aside so that an entry is 32 bytes: the
    /// heap's levels are cache misses.
    Call,
}

/// A call's function and arguments: `f(a, b, id)`.
type Call = (fn(u64, u64, u64), u64, u64);

#[derive(Clone, Copy)]
struct Entry {
    /// The deadline, in `park.rs`'s clock (nanoseconds after its base).
    at: u64,
    /// The entry's id (see [`Heap::next_id`]): ties broken by arrival.
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
    /// Which heap this is (its index in [`HEAPS`]).
    index: usize,
    /// A 4-ary min-heap of entries, in root memory (see the module docs).
    items: *mut Entry,
    len: usize,
    cap: usize,
    /// Sleeps in deadline order beside the heap (see [`Run`]).
    run: Run,
    /// Entries added so far (ids are made from it, see [`Heap::next_id`]).
    seq: u64,
    /// The calls of the [`Action::Call`] entries in the heap, by id, and
    /// the ids of those cancelled: a cancelled call's entry stays in the
    /// heap until it comes up (skipped then) or the cancelled outnumber a
    /// quarter of the heap (all removed at once), so a cancel costs a set
    /// insert, not a search of the heap (a server moves a deadline per
    /// request).
    calls: BTreeMap<u64, Call>,
    cancelled: BTreeSet<u64>,
}

// SAFETY: a heap is touched only under its lock.
unsafe impl Send for Heap {}

/// One heap and its lock, alone in its cache lines (each processor's
/// worker takes its own).
#[repr(align(128))]
struct Shard(Mutex<Heap>);

impl Heap {
    /// Heap `index`, empty.
    const fn empty(index: usize) -> Heap {
        Heap {
            index,
            items: std::ptr::null_mut(),
            len: 0,
            cap: 0,
            seq: 0,
            run: Run::empty(),
            calls: BTreeMap::new(),
            cancelled: BTreeSet::new(),
        }
    }
}

/// Sleeps whose deadlines came in order, kept beside a heap as a ring in
/// that order: a sleep not earlier than the last one in the ring is
/// appended (one write), and the earliest leaves from the front (one
/// read), where the heap would move an entry through each of its levels
/// (cache misses, with 100,000 sleepers) both times. Sleeps of one length
/// set one after another, the common case (a ticker's goroutines, a
/// crowd sleeping the same time), all come here; one earlier than the
/// ring's last goes to the heap. Only sleeps: nothing takes them out
/// before they are due (a channel timer's `Stop` and a call's cancel look
/// in the heap). In root memory as the heap is.
struct Run {
    items: *mut Entry,
    /// Index of the first entry.
    head: usize,
    len: usize,
    /// A power of two (or 0).
    cap: usize,
}

impl Run {
    const fn empty() -> Run {
        Run {
            items: std::ptr::null_mut(),
            head: 0,
            len: 0,
            cap: 0,
        }
    }

    /// The place of entry `i` (from the front). Only with a block
    /// (`cap > 0`).
    fn slot(&self, i: usize) -> *mut Entry {
        debug_assert!(self.cap > 0, "a ring without a block");
        // SAFETY: the index is taken modulo cap, within the block.
        unsafe { self.items.add((self.head + i) & (self.cap - 1)) }
    }

    fn first(&self) -> Option<Entry> {
        // SAFETY: entry 0 of a non-empty ring is initialised.
        (self.len > 0).then(|| unsafe { self.slot(0).read() })
    }

    /// Whether `at` may be appended: not before the last entry's
    /// deadline (ids only grow, so the order by (deadline, id) holds).
    fn takes(&self, at: u64) -> bool {
        // SAFETY: the last entry of a non-empty ring is initialised.
        self.len == 0 || unsafe { self.slot(self.len - 1).read() }.at <= at
    }

    fn push(&mut self, e: Entry) {
        if self.len == self.cap {
            let cap = (self.cap * 2).max(64);
            let block = alloc_items(cap * std::mem::size_of::<Entry>());
            for i in 0..self.len {
                // SAFETY: entry i is initialised; the new block has room.
                unsafe { block.add(i).write(self.slot(i).read()) };
            }
            if !self.items.is_null() {
                // SAFETY: the old block, its entries copied out.
                unsafe { free_items(self.items, self.cap * std::mem::size_of::<Entry>()) };
            }
            (self.items, self.head, self.cap) = (block, 0, cap);
        }
        // SAFETY: len < cap: a free slot.
        unsafe { self.slot(self.len).write(e) };
        self.len += 1;
    }

    fn pop(&mut self) -> Entry {
        debug_assert!(self.len > 0);
        let p = self.slot(0);
        // SAFETY: the first entry is initialised; cleared after (root
        // memory keeps nothing alive).
        let e = unsafe { p.read() };
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(p, 0, 1) };
        self.head = (self.head + 1) & (self.cap - 1);
        self.len -= 1;
        e
    }
}

#[cfg(not(loom))]
static HEAPS: [Shard; TIMER_HEAPS] = {
    use std::mem::MaybeUninit;
    let mut heaps = [const { MaybeUninit::<Shard>::uninit() }; TIMER_HEAPS];
    let mut i = 0;
    while i < TIMER_HEAPS {
        heaps[i] = MaybeUninit::new(Shard(Mutex::new(Heap::empty(i))));
        i += 1;
    }
    // SAFETY: every element was written above; `MaybeUninit<T>` has the
    // layout of `T`.
    unsafe { std::mem::transmute::<[MaybeUninit<Shard>; TIMER_HEAPS], [Shard; TIMER_HEAPS]>(heaps) }
};

// Under loom (`tests/timer_loom.rs`), the heaps and the firing count are
// a model's: loom's lock and atomics exist only inside one.
#[cfg(loom)]
loom::lazy_static! {
    static ref HEAPS: [Shard; TIMER_HEAPS] =
        std::array::from_fn(|i| Shard(Mutex::new(Heap::empty(i))));
    static ref FIRING: AtomicUsize = AtomicUsize::new(0);
}

/// Heap `i`, locked.
fn heap(i: usize) -> MutexGuard<'static, Heap> {
    HEAPS[i].0.lock().unwrap_or_else(|e| e.into_inner())
}

/// The heap of the calling worker's processor (heap 0 without one).
fn own_heap() -> usize {
    super::procs::current_p().map_or(0, |p| p.id % TIMER_HEAPS)
}

/// The heap holding the entry with id `id`.
fn heap_of(id: u64) -> usize {
    (id % TIMER_HEAPS as u64) as usize
}

// An entry's size: what a level of the heap costs in cache lines.
const _: () = assert!(std::mem::size_of::<Entry>() == 32);

/// Children per node of the heaps.
const ARITY: usize = 4;

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

    /// The id the next entry gets: unique across heaps, never 0, and
    /// naming its heap ([`heap_of`]).
    fn next_id(&self) -> u64 {
        (self.seq + 1) * TIMER_HEAPS as u64 + self.index as u64
    }

    /// Adds an entry (a sleep in order to the run, the rest to the heap);
    /// returns its id.
    fn push(&mut self, at: u64, action: Action) -> u64 {
        if matches!(action, Action::Wake(_)) && self.run.takes(at) {
            let id = self.next_id();
            self.seq += 1;
            self.run.push(Entry {
                at,
                seq: id,
                action,
            });
            if self.first().is_some_and(|f| f.seq == id) {
                self.publish();
            }
            return id;
        }
        self.push_heap(at, action)
    }

    /// The earliest entry, of the heap's and the run's.
    fn first(&self) -> Option<Entry> {
        let heap = (self.len > 0).then(|| self.item(0));
        match (heap, self.run.first()) {
            (Some(h), Some(r)) => Some(if Heap::less(&r, &h) { r } else { h }),
            (h, r) => h.or(r),
        }
    }

    /// Removes the earliest entry (there is one) without publishing the
    /// next deadline: the caller, taking a batch of due entries, publishes
    /// once before it releases the lock (until then the published
    /// deadline is an earlier one, which costs a worker at most a look
    /// that finds nothing due).
    fn pop_first(&mut self) -> Entry {
        let from_run = match (self.len > 0, self.run.first()) {
            (true, Some(r)) => Heap::less(&r, &self.item(0)),
            (false, _) => true,
            (true, None) => false,
        };
        if from_run {
            self.run.pop()
        } else {
            self.take_at(0)
        }
    }

    /// Entries pending in the heap and the run.
    fn total(&self) -> usize {
        self.len + self.run.len
    }

    fn push_heap(&mut self, at: u64, action: Action) -> u64 {
        if self.len == self.cap {
            let cap = (self.cap * 2).max(64);
            let bytes = cap * std::mem::size_of::<Entry>();
            let block = alloc_items(bytes);
            if !self.items.is_null() {
                // SAFETY: the old block holds len entries; the new has room.
                unsafe {
                    std::ptr::copy_nonoverlapping(self.items, block, self.len);
                    free_items(self.items, self.cap * std::mem::size_of::<Entry>());
                }
            }
            self.items = block;
            self.cap = cap;
        }
        let id = self.next_id();
        self.seq += 1;
        let e = Entry {
            at,
            seq: id,
            action,
        };
        let i = self.len;
        self.len += 1;
        self.sift_up(i, e);
        if self.first().is_some_and(|f| f.seq == id) {
            self.publish();
        }
        id
    }

    /// Tells the idle workers the earliest deadline (after every change
    /// of it).
    fn publish(&self) {
        // A deadline is never NO_TIMER ("none"): the last one before it
        // stands for it.
        let at = self.first().map_or(NO_TIMER, |e| e.at.min(NO_TIMER - 1));
        super::park::set_next_timer(self.index, at);
    }

    /// Puts `e` at `i` or above it (a hole at `i`), moving parents down.
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let p = self.item(parent);
            if !Heap::less(&e, &p) {
                break;
            }
            self.set(i, p);
            i = parent;
        }
        self.set(i, e);
    }

    /// Puts `e` at `i` or below it (a hole at `i`), moving the least child
    /// up.
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        loop {
            let first = ARITY * i + 1;
            if first >= self.len {
                break;
            }
            let mut m = first;
            let mut least = self.item(first);
            for c in first + 1..(first + ARITY).min(self.len) {
                let x = self.item(c);
                if Heap::less(&x, &least) {
                    (m, least) = (c, x);
                }
            }
            if !Heap::less(&least, &e) {
                break;
            }
            self.set(i, least);
            i = m;
        }
        self.set(i, e);
    }

    fn remove_at(&mut self, i: usize) -> Entry {
        let e = self.take_at(i);
        // Only the root may have been the earliest (the last entry
        // cannot come before the root it was below).
        if i == 0 {
            self.publish();
        }
        e
    }

    /// Removes the entry at `i` of the heap, publishing nothing.
    fn take_at(&mut self, i: usize) -> Entry {
        let e = self.item(i);
        self.len -= 1;
        if i < self.len {
            let last = self.item(self.len);
            if i > 0 && Heap::less(&last, &self.item((i - 1) / ARITY)) {
                self.sift_up(i, last);
            } else {
                self.sift_down(i, last);
            }
        }
        // Clear the freed entry: root memory keeps nothing alive.
        // SAFETY: self.len < cap.
        unsafe { std::ptr::write_bytes(self.items.add(self.len), 0, 1) };
        e
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
        for i in (0..self.len.div_ceil(ARITY)).rev() {
            let e = self.item(i);
            self.sift_down(i, e);
        }
        self.publish();
    }
}

/// A block for a heap's entries, `bytes` long: root memory (a channel
/// timer's entry holds references), or under loom plain memory (a model
/// has no collector; its entries point at its own waiters).
fn alloc_items(bytes: usize) -> *mut Entry {
    #[cfg(not(loom))]
    {
        crate::roots::alloc_block(bytes).cast::<Entry>().as_ptr()
    }
    #[cfg(loom)]
    {
        let layout = std::alloc::Layout::from_size_align(bytes, 8).expect("a heap's size");
        // SAFETY: a layout of non-zero size (a heap grows to 64 entries).
        unsafe { std::alloc::alloc(layout).cast::<Entry>() }
    }
}

/// Frees a block of [`alloc_items`], `bytes` long.
///
/// # Safety
/// `p` came from `alloc_items(bytes)` and is not used again.
unsafe fn free_items(p: *mut Entry, bytes: usize) {
    #[cfg(not(loom))]
    {
        let _ = bytes;
        // SAFETY: a block of alloc_block's (the caller's contract).
        unsafe { crate::roots::free_block(std::ptr::NonNull::new_unchecked(p.cast())) }
    }
    #[cfg(loom)]
    {
        let layout = std::alloc::Layout::from_size_align(bytes, 8).expect("a heap's size");
        // SAFETY: allocated with this layout (the caller's contract).
        unsafe { std::alloc::dealloc(p.cast(), layout) }
    }
}

/// Whether the workers know to run the heaps (see [`add`]).
static HOOKED: AtomicBool = AtomicBool::new(false);

/// Adds an entry to `h`: the workers are told of the heaps once, and of a
/// new earliest deadline each time. Returns the entry's id.
fn add(h: MutexGuard<'static, Heap>, at: u64, action: Action) -> u64 {
    let mut h = h;
    if !HOOKED.load(Ordering::Relaxed) {
        HOOKED.store(true, Ordering::Relaxed);
        super::park::set_run_timers(run_due);
    }
    let seq = h.push(at, action);
    let earliest = h.first().is_some_and(|f| f.seq == seq);
    drop(h);
    if earliest {
        super::park::timers_changed();
    }
    seq
}

/// Takes the heaps' locks (in order) until the fork is over (`gc::fork`):
/// no heap is caught half-changed. A worker may be caught waking sleepers
/// it took out of a heap: in the child only the forking goroutine lives.
pub(crate) fn lock_for_fork() {
    for i in 0..TIMER_HEAPS {
        crate::gc::fork::held::keep(heap(i));
    }
}

/// Set in a forked child: a channel timer whose channel is locked when it
/// fires is tried again later ([`CHILD_RETRY_NS`]) rather than waited
/// for under the heap's lock (see [`forget_wedged_after_fork`]).
static FORKED: AtomicBool = AtomicBool::new(false);

/// How much later a forked child tries a timer's send again.
const CHILD_RETRY_NS: u64 = 10_000_000;

/// In a forked child (the go layer's repair, when only the forking thread
/// runs): a channel timer whose channel's lock a thread of the parent held
/// at the fork (it was inside an operation on the channel) would wedge
/// the worker that fires it, and every timer of its heap with it (firing
/// sends under the heap's lock). Its channel is of no use here: every
/// operation on it waits for that lock for ever. The timer is taken out
/// of the heap and stays stopped; its reference (`release`) is kept, so
/// nothing runs for it. A timer of such a channel armed again in the
/// child finds the lock held when it fires and is tried again later,
/// without waiting (`FORKED`).
pub(crate) fn forget_wedged_after_fork() {
    FORKED.store(true, Ordering::Relaxed);
    let mut h = heap(CHAN_HEAP);
    // Removing an entry moves others (up or down): find them all first.
    let wedged: Vec<(u64, *const Timer)> = (0..h.len)
        .filter_map(|i| match h.item(i).action {
            Action::Send(t) if channel_locked(t) => Some((h.item(i).seq, t)),
            _ => None,
        })
        .collect();
    for (seq, t) in wedged {
        if let Some(i) = h.position(seq) {
            h.remove_at(i);
            // SAFETY: the timer was pending until now: the heap kept it
            // alive, and its reference is kept (never released here).
            unsafe { (*t).pending.store(0, Ordering::Release) };
        }
    }
}

/// In a forked child, once every layer is repaired: no worker watches
/// the timers the heaps still hold (channels of timers the forking
/// goroutine may wait on); one is made to.
pub(crate) fn restart_after_fork() {
    let pending = (0..TIMER_HEAPS).any(|i| heap(i).total() > 0);
    if pending {
        super::park::timers_changed();
    }
}

/// Under loom (`model.rs`'s `Sleep`): arms `w` as a sleep does, on heap
/// 0, due at once.
#[cfg(loom)]
pub(crate) fn arm_due_sleep(w: &Waiter) {
    add(heap(0), 0, Action::Wake(w));
}

/// Under loom: fires what is due on every heap, as a parked worker does
/// (`park::run_timers`); whether any fired.
#[cfg(loom)]
pub(crate) fn fire_as_parked() -> bool {
    run_due(None, true, NO_TIMER - 1)
}

/// Under loom: one look at the timers by a worker between two goroutines
/// on processor 0 (its budget, [`SCHED_FIRE_BUDGET`], is one entry);
/// whether any fired.
#[cfg(loom)]
pub(crate) fn fire_as_scheduling() -> bool {
    run_due(Some(0), false, NO_TIMER - 1)
}

/// Whether [`run_heap`] counts its firing in [`FIRING`] (always, but in
/// the loom model that brings the uncounted firing back).
fn count_firing() -> bool {
    #[cfg(loom)]
    {
        !super::prim::uncounted_firing()
    }
    #[cfg(not(loom))]
    {
        true
    }
}

/// Sleepers a worker takes out of a heap before it releases the lock and
/// wakes them.
const WAKE_BATCH: usize = 32;

/// Entries a worker with a processor fires at one look at the timers
/// (see [`run_due`]).
#[cfg(not(loom))]
const SCHED_FIRE_BUDGET: usize = 2 * WAKE_BATCH;
/// Under loom: one, so that a model of two due sleeps sees a look leave
/// one due (`tests/timer_loom.rs`).
#[cfg(loom)]
const SCHED_FIRE_BUDGET: usize = 1;

/// Fires what is due at `now` (called by workers, see `park.rs`): the heap
/// of processor `p`, and with `all` (always without `p`) the other heaps
/// whose published deadline has passed. Whether any fired.
///
/// A worker with a processor (`p`: between two goroutines) fires at most
/// [`SCHED_FIRE_BUDGET`] entries and leaves the rest due in their heaps,
/// their deadlines published as passed, for its next look one schedule
/// later (or an idle worker's): a crowd of sleepers due together is
/// readied a few dozen at a time, between the runs of those readied
/// before, instead of all at once. An idle worker (no `p`) fires all.
fn run_due(p: Option<usize>, all: bool, now: u64) -> bool {
    let own = p.map(|p| p % TIMER_HEAPS);
    let mut budget = if p.is_some() {
        SCHED_FIRE_BUDGET
    } else {
        usize::MAX
    };
    let mut fired = false;
    if let Some(own) = own {
        fired |= run_heap(heap(own), now, &mut budget);
    }
    if all || own.is_none() {
        for i in (0..TIMER_HEAPS).filter(|&i| Some(i) != own) {
            if budget > 0 && super::park::heap_deadline(i) <= now {
                fired |= run_heap(heap(i), now, &mut budget);
            }
        }
    }
    fired
}

/// Fires the entries of `h` due at `now`, at most `budget` of them (which
/// it lowers by what it fired); whether any were. Sleepers are woken
/// outside the lock, a batch at a time (their waiters stay on their
/// stacks until finished, and no one else removes a sleep's entry).
fn run_heap(h: MutexGuard<'static, Heap>, now: u64, budget: &mut usize) -> bool {
    let index = h.index;
    let mut h = h;
    let mut fired = false;
    let mut wakes = [std::ptr::null::<Waiter>(); WAKE_BATCH];
    let mut n = 0;
    // Entries taken since the deadline was last published (see
    // `Heap::pop_first`): published before the lock is released.
    let mut taken = false;
    loop {
        let due = *budget > 0 && h.first().is_some_and(|e| e.at <= now);
        if !due || n == WAKE_BATCH {
            if std::mem::take(&mut taken) {
                h.publish();
            }
            drop(h);
            wake_all(&wakes[..n]);
            n = 0;
            if !due {
                if fired && count_firing() {
                    // After every wake: what they readied is queued.
                    FIRING.fetch_sub(1, Ordering::SeqCst);
                }
                return fired;
            }
            h = heap(index);
            continue;
        }
        if !fired && count_firing() {
            // Under the heap's lock, before the first entry leaves it.
            FIRING.fetch_add(1, Ordering::SeqCst);
        }
        let e = h.pop_first();
        taken = true;
        *budget -= 1;
        fired = true;
        match e.action {
            Action::Wake(w) => {
                crate::cache::prefetch(w);
                wakes[n] = w;
                n += 1;
            }
            Action::Call => {
                if h.cancelled.remove(&e.seq) {
                    continue;
                }
                let Some((f, a, b)) = h.calls.remove(&e.seq) else {
                    continue;
                };
                if std::mem::take(&mut taken) {
                    h.publish();
                }
                drop(h);
                f(a, b, e.seq);
                h = heap(index);
            }
            // In a forked child, a channel a parent thread held locked
            // (see `forget_wedged_after_fork`): tried again later.
            Action::Send(t) if FORKED.load(Ordering::Relaxed) && channel_locked(t) => {
                let seq = h.push(now.saturating_add(CHILD_RETRY_NS), e.action);
                // SAFETY: a pending timer is kept alive by the heap (root
                // memory).
                unsafe { (*t).pending.store(seq, Ordering::Release) };
            }
            // The entry's pointers stay valid while it is in the heap; fire
            // under the lock, so a Stop that took the lock first wins.
            Action::Send(_) => fire(&e),
        }
    }
}

/// Whether the channel of `t`, a timer in a heap, is locked now.
fn channel_locked(t: *const Timer) -> bool {
    // SAFETY: a pending timer is kept alive by the heap (root memory) and
    // its channel by the timer.
    unsafe { (*(*t).chan).lock_held() }
}

/// Wakes the sleepers whose entries [`run_heap`] took out.
/// Their goroutines' lines are asked for first: each is a cache miss (and
/// often a TLB miss) with many goroutines.
fn wake_all(wakes: &[*const Waiter]) {
    for &w in wakes {
        // SAFETY: as below.
        unsafe { (*w).prefetch_sleeper() };
    }
    for &w in wakes {
        // SAFETY: a sleeper's waiter stays on its stack until finished.
        unsafe { (*w).finish(true) };
    }
}

fn fire(e: &Entry) {
    match e.action {
        // SAFETY: a sleeper's waiter stays on its stack until finished.
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
        Action::Wake(_) | Action::Call => {
            unreachable!("run outside the lock by `run_heap`")
        }
    }
}

/// The wall-clock time in nanoseconds since 1970 (what a timer channel
/// delivers, as Go's `time.Now()`).
pub(crate) fn now_unix_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The deadline `ns` from now, in `park.rs`'s clock.
fn deadline(ns: i64) -> u64 {
    now_ns().saturating_add(ns.max(0) as u64).min(NO_TIMER - 1)
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
    add(heap(own_heap()), deadline(ns), Action::Wake(&w));
    w.wait("sleep");
}

/// Calls `f(a, b, id)` from a worker `ns` from now, where `id`
/// (never 0) is what this returns; [`cancel_call`] takes it back. The call
/// may still come after a cancel that raced with it: callees compare the
/// id with the one they armed.
pub(crate) fn call_after(ns: i64, f: fn(u64, u64, u64), a: u64, b: u64) -> u64 {
    let mut h = heap(own_heap());
    // The id is the one `add` assigns next.
    let id = h.next_id();
    h.calls.insert(id, (f, a, b));
    let seq = add(h, deadline(ns), Action::Call);
    debug_assert_eq!(seq, id);
    id
}

/// Takes back a [`call_after`] that has not fired yet; returns whether it
/// was still pending.
pub(crate) fn cancel_call(id: u64) -> bool {
    let mut h = heap(heap_of(id));
    if h.calls.remove(&id).is_none() {
        return false;
    }
    h.cancelled.insert(id);
    if h.cancelled.len() > 64 + h.len / 4 {
        h.sweep_cancelled();
    }
    true
}

/// The heap of channel timers (see the module docs).
const CHAN_HEAP: usize = 0;

/// Arms `t` to fire `ns` from now (replacing a pending firing); returns
/// whether it was pending (Go's `Reset`).
///
/// # Safety
/// `t` stays valid while it is pending (it is in root or collected memory
/// that the heap's reference keeps alive).
pub(crate) unsafe fn reset(t: *const Timer, ns: i64) -> bool {
    let mut h = heap(CHAN_HEAP);
    // SAFETY: the caller's timer.
    let timer = unsafe { &*t };
    let was = stop_locked(&mut h, timer);
    // Pending before it is in the heap (the heap's lock is held until it
    // is): a Stop finds the entry the id names.
    timer
        .pending
        .store(h.next_id(), std::sync::atomic::Ordering::Release);
    add(h, deadline(ns), Action::Send(t));
    was
}

/// Stops `t`; returns whether it was pending (Go's `Stop`).
///
/// # Safety
/// As for [`reset`].
pub(crate) unsafe fn stop(t: *const Timer) -> bool {
    let mut h = heap(CHAN_HEAP);
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

/// Workers in [`run_heap`] that took entries out of a heap and have not
/// finished waking or calling what they took.
#[cfg(not(loom))]
static FIRING: AtomicUsize = AtomicUsize::new(0);

/// Whether any timer is pending (the deadlock check): in a heap (a heap
/// whose lock is taken counts as holding one), or being fired. A firing
/// takes its entries out of the heap before it readies their goroutines;
/// the count goes up under the heap's lock before the first leaves and
/// down after the last is readied, so reading the heaps and then the
/// count sees the entry, the firing, or (read by the caller after this)
/// the goroutine it queued.
pub(crate) fn pending() -> bool {
    HEAPS.iter().any(|s| {
        s.0.try_lock()
            .map_or(true, |h| h.total() > h.cancelled.len())
    }) || FIRING.load(Ordering::SeqCst) > 0
}

/// Each heap's length (`-` when its lock is taken) and the firing count,
/// for [`super::sched_state`].
pub(crate) fn heaps_state() -> String {
    let lens: Vec<String> = HEAPS
        .iter()
        .map(|s| {
            s.0.try_lock()
                .map_or("-".to_string(), |h| h.total().to_string())
        })
        .collect();
    format!(
        "heap_lens=[{}] firing={}",
        lens.join(" "),
        FIRING.load(Ordering::SeqCst)
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A heap emptied publishes "no timer", not a deadline centuries away
    /// (with one, idle workers watch a timer that is not there and every
    /// scheduling point reads the clock). Heap 15: no test here runs 16
    /// processors, whose last would share it.
    #[test]
    fn an_emptied_heap_publishes_no_timer() {
        let mut h = Heap::empty(TIMER_HEAPS - 1);
        h.push(now_ns() + 1_000_000_000, Action::Call);
        assert_ne!(super::super::park::heap_deadline(TIMER_HEAPS - 1), NO_TIMER);
        h.remove_at(0);
        assert_eq!(super::super::park::heap_deadline(TIMER_HEAPS - 1), NO_TIMER);
        // SAFETY: the heap's block, not used again.
        unsafe { free_items(h.items, h.cap * std::mem::size_of::<Entry>()) };
    }

    /// Seeded: sleeps (in order, so to the run, or out of it, so to the
    /// heap) and calls at random deadlines, taken out earliest first at
    /// random moments, some cancelled calls swept: every entry leaves
    /// once, in (deadline, id) order (a model's), and the deadline
    /// published is the earliest's after each change but a batch's
    /// takes. Heap 14: no test here runs 15 processors.
    #[test]
    fn a_heap_and_its_run_give_entries_back_earliest_first() {
        use std::collections::BTreeSet;
        let seed = crate::seeded::seed("DEFERGC_TIMER_SEED");
        println!("seed {seed} (DEFERGC_TIMER_SEED={seed} repeats it)");
        let mut rng = crate::seeded::Rng(seed | 1);
        let index = TIMER_HEAPS - 2;
        let mut h = Heap::empty(index);
        let mut model: BTreeSet<(u64, u64)> = BTreeSet::new();
        let (mut now, mut to_run, mut added, mut taken) = (1_000u64, 0, 0, 0);
        for step in 0..200_000 {
            now += rng.below(3);
            match rng.below(10) {
                0..=5 => {
                    let in_order = rng.below(4) != 0;
                    let at = if in_order {
                        now + 1_000
                    } else {
                        now + rng.below(2_000)
                    };
                    let (run_before, action) = (
                        h.run.len,
                        if rng.below(8) == 0 {
                            Action::Call
                        } else {
                            Action::Wake(std::ptr::null())
                        },
                    );
                    let id = h.push(at, action);
                    to_run += h.run.len - run_before;
                    model.insert((at, id));
                    added += 1;
                }
                6 if h.len > 0 && rng.below(50) == 0 => {
                    // A cancel of every call now in the heap, swept.
                    for i in 0..h.len {
                        let e = h.item(i);
                        if matches!(e.action, Action::Call) {
                            h.cancelled.insert(e.seq);
                            assert!(model.remove(&(e.at, e.seq)));
                            taken += 1;
                        }
                    }
                    h.sweep_cancelled();
                }
                _ => {
                    let batch = rng.below(40);
                    for _ in 0..batch {
                        let Some(first) = h.first() else { break };
                        let want = *model.iter().next().expect("the model has it");
                        assert_eq!((first.at, first.seq), want, "seed {seed} step {step}");
                        let e = h.pop_first();
                        assert_eq!((e.at, e.seq), want, "seed {seed} step {step}");
                        model.remove(&want);
                        taken += 1;
                    }
                    h.publish();
                }
            }
            assert_eq!(h.total(), model.len(), "seed {seed} step {step}");
            if step % 1_000 == 0 || h.total() == 0 {
                let published = super::super::park::heap_deadline(index);
                let want = model.iter().next().map_or(NO_TIMER, |&(at, _)| at);
                assert_eq!(published, want, "seed {seed} step {step}: published");
            }
        }
        while let Some(first) = h.first() {
            let want = *model.iter().next().expect("the model has it");
            assert_eq!((first.at, first.seq), want);
            h.pop_first();
            model.remove(&want);
            taken += 1;
        }
        h.publish();
        assert!(model.is_empty());
        assert_eq!(taken, added, "an entry was lost or given twice");
        assert!(to_run > added / 2, "the run took {to_run} of {added}");
        assert_eq!(super::super::park::heap_deadline(index), NO_TIMER);
        // SAFETY: the heap's and the run's blocks, not used again.
        unsafe {
            free_items(h.items, h.cap * std::mem::size_of::<Entry>());
            free_items(h.run.items, h.run.cap * std::mem::size_of::<Entry>());
        }
    }

    /// A fork while a parent thread was handing a timer's channel lock
    /// over (a fair unlock) leaves the child that lock handed to no one:
    /// free to its first taker, not wedged. The child's repair keeps the
    /// timer and it fires; before `has_holder`, the repair took the lock
    /// for held, dropped the timer, and the child's receive waited for
    /// ever (a deadlock report, status 2).
    #[test]
    fn a_forked_child_fires_a_timer_whose_channel_lock_was_being_handed_over() {
        use crate::go;
        use std::time::Duration;
        let _one = go::ONE_RUN_IN_TESTS
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        go::run(|| {
            // A timer that fired before the fork would leave the child its
            // value, and the test would pass without the child's timer:
            // another is made then.
            let t = (0..50)
                .map(|_| go::Timer::new(Duration::from_millis(30)))
                .find(|t| t.chan().is_empty())
                .expect("a timer that has not fired yet");
            let lock = t.chan().raw().expect("not nil").lock_for_tests();
            lock.hand_over_to_no_one();
            // SAFETY: fork from a goroutine; the child only receives on
            // the timer and ends with `_exit`.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                // SAFETY: in the child: a hang is ended by the alarm.
                unsafe { libc::alarm(20) };
                let fired = t.chan().recv().is_some_and(|when| when > 0);
                // SAFETY: ends the child without the parent's exit handlers.
                unsafe { libc::_exit(if fired { 0 } else { 1 }) };
            }
            let status = go::syscall(|| crate::gc::fork::wait_child(pid, Duration::from_secs(60)));
            assert!(
                status.is_some_and(|s| libc::WIFEXITED(s) && libc::WEXITSTATUS(s) == 0),
                "the child's timer did not fire (status {status:#x?}; None: killed after a minute)"
            );
            // The parent's own receive claims the handed lock as well.
            assert!(t.chan().recv().is_some());
        });
    }
}
