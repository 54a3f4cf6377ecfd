//! The execution trace: events of the scheduler and the collectors, kept
//! in per-thread buffers, moved by a writer thread as raw fixed-size
//! records into an unlinked scratch file, and formatted at [`stop`] as a
//! Chrome / Perfetto trace-event JSON file (`ui.perfetto.dev` and
//! `chrome://tracing` open it; README says why this format). Nothing is
//! formatted while the program runs: the writer only copies, so it keeps
//! up on the program's own cores.
//!
//! # Recording
//!
//! [`session`] is the one relaxed load each site pays while no trace is
//! taken: 0 when off, else the number of the trace being taken. An event
//! carries the session it was recorded for and goes into the recording
//! thread's own [`Buffer`] (a worker's, a sysmon's, a plain thread's),
//! registered once per thread: no lock shared by the threads on the
//! path that records. A buffer is a ring of [`BUFFER_CAP`] slots with
//! one producer (its thread) and one consumer (the writer), which take
//! no lock and make no read-modify-write: the thread writes a slot and
//! advances its end, the writer reads slots and advances the other
//! (`tests/trace_loom.rs` model-checks that no event is lost or seen
//! twice). When the writer has not emptied a buffer in time (it shares
//! the program's cores), the ring is full and events go to the buffer's
//! overflow, a vector the writer takes whole, as Go's tracer keeps every
//! event and lets its queue of full buffers grow. Only beyond a bound
//! ([`OVERFLOW_CAP`] events a thread) is an event counted as lost; the
//! count is written into the file's `otherData` as `lost_events`.
//!
//! Timestamps are one read of a cheap counter per event ([`ticks`]: the
//! time-stamp counter on x86-64, read with `rdtscp` so that it is ordered
//! after the loads before it, which keeps a wake-up after the slice that
//! blocked; the monotonic clock elsewhere), converted to nanoseconds at
//! [`stop`] by a calibration against `CLOCK_MONOTONIC` taken at the
//! trace's start and stop. An event recorded by a thread that loaded the session
//! just before the trace stopped lands in its buffer after the last
//! flush and is dropped by the next trace's writer (its session is not
//! that trace's).
//!
//! Collections are not recorded into a buffer: bdwgc reports a
//! collection's start and end with its allocation lock held, where an
//! allocation (a growing vector) could wait on that lock. They go into a
//! fixed ring of atomics ([`gc_started`], [`gc_ended`]) that the writer
//! reads: only completed collections, so their begin and end always
//! match.
//!
//! # The file
//!
//! `{"traceEvents":[...],"otherData":{"lost_events":N}}` with timestamps
//! in microseconds from the trace's start. A goroutine's run on a processor (a *slice*) is one
//! complete event (`"ph":"X"`, a start and a duration), named `G<id>`,
//! on the processor's track, with why it ended (`block` with the wait
//! reason, `yield`, `preempt`, `syscall`, `exit`): a slice always has
//! its begin and its end. Creation, unblocking, processors starting and
//! stopping and sysmon's preemption requests are instant events; each
//! collection a complete event on the GC track. Track (thread) names are
//! metadata events.
//!
//! `prof` knows none of the layers that record: `go` and `gc` call
//! [`emit`], [`gc_started`] and [`gc_ended`].

#[cfg(loom)]
use loom::sync::atomic::AtomicUsize;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::mem::MaybeUninit;
#[cfg(not(loom))]
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// What an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Goroutine `g` ran from `ts` for `dur`; `arg` is why it stopped (an
    /// [`End`] as a number), `reason` its wait reason when it blocked.
    Slice,
    /// Goroutine `g` was created by goroutine `arg` (0: by a thread).
    Create,
    /// Goroutine `g` was made runnable by goroutine `arg` (0: a thread).
    Unblock,
    /// Processor `g` left the idle list (started).
    ProcStart,
    /// Processor `g` went to the idle list (stopped).
    ProcStop,
    /// sysmon asked goroutine `g` to yield.
    Preempt,
}

/// Why a slice ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The goroutine finished.
    Exit = 0,
    /// `Gosched`.
    Yield = 1,
    /// A preemption request was honoured.
    Preempt = 2,
    /// It parked (blocked).
    Block = 3,
    /// It came back from a system call without its processor.
    Syscall = 4,
}

impl End {
    fn name(code: u64) -> &'static str {
        ["exit", "yield", "preempt", "block", "syscall"]
            .get(code as usize)
            .copied()
            .unwrap_or("?")
    }
}

/// One event (see [`Kind`] for what its fields mean).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The trace it was recorded for.
    pub session: u32,
    /// What it records.
    pub kind: Kind,
    /// The track it is drawn on ([`track_of_p`], [`OTHER`], [`SYSMON`]).
    pub track: u32,
    /// When ([`ticks`]).
    pub ts: u64,
    /// How long (slices, in [`ticks`]).
    pub dur: u64,
    /// The goroutine (or processor) it is about.
    pub g: u64,
    /// Kind-specific.
    pub arg: u64,
    /// A wait reason, or "".
    pub reason: &'static str,
}

/// The track of processor `id`.
pub const fn track_of_p(id: usize) -> u32 {
    id as u32 + 1
}
/// The track of threads outside the scheduler (and workers without a
/// processor).
pub const OTHER: u32 = 5000;
/// sysmon's track.
pub const SYSMON: u32 = 5001;
/// The collections' track.
const GC_TRACK: u32 = 5002;

// ---- a thread's buffer --------------------------------------------------

#[cfg(not(loom))]
struct Slot<T>(std::cell::UnsafeCell<T>);
#[cfg(not(loom))]
impl<T> Slot<T> {
    fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }
    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
#[cfg(loom)]
#[allow(clippy::unsafe_removed_from_name)]
use loom::cell::UnsafeCell as Slot;

#[cfg(loom)]
use loom::sync::Mutex as OverflowLock;
#[cfg(not(loom))]
use std::sync::Mutex as OverflowLock;

/// One thread's events: a ring of a fixed number of slots that its
/// thread appends to (through the buffer's one [`Producer`]) and the
/// writer empties (holding [`Drainer`]), a single producer and a single
/// consumer, both by construction. No read-modify-write on either side:
/// the producer writes the slot at `head`, then publishes it by advancing
/// `head` (release); the writer reads the slots from `tail` to the `head`
/// it loaded (acquire), then gives them back by advancing `tail`
/// (release), which the producer loads (acquire) before it writes into a
/// slot again.
///
/// When the ring is full (the writer has not kept up: its thread shares
/// the program's cores), the producer appends to the buffer's overflow, a
/// vector under a lock, and keeps appending there (not to the ring)
/// until the writer has taken it: the writer drains the ring, then, under
/// the overflow's lock, reads the ring's end (the producer cannot add to
/// the ring while the overflow holds events) and takes the overflow, and
/// after the lock drains the ring to that end and hands over what it
/// took. So no event is lost (as Go's tracer keeps every event) and each
/// buffer's events are taken in the order appended; only an overflow of
/// [`OVERFLOW_CAP`] events (or one the allocator refuses) refuses more.
pub struct Buffer {
    /// Events appended so far: written only by the producer.
    head: crate::cache::CachePadded<AtomicUsize>,
    /// Events taken so far: written only by the drainer.
    tail: crate::cache::CachePadded<AtomicUsize>,
    /// `head & (len - 1)` is the next slot written (the length is a power
    /// of two). A slot between `tail` and `head` is the drainer's to read;
    /// every other one the producer's.
    slots: Box<[Slot<MaybeUninit<Event>>]>,
    /// Events appended after the ring filled (see the type's docs).
    overflow: OverflowLock<Vec<Event>>,
}

// SAFETY: a slot is touched by one side at a time, as the type's docs
// say: the one producer only outside `tail..head`, the one drainer only
// inside, and each side moves its own end with release after it is done
// with a slot, which the other side loads with acquire before it touches
// that slot.
unsafe impl Sync for Buffer {}
// SAFETY: as above; events are plain data.
unsafe impl Send for Buffer {}

/// The one appender of a [`Buffer`]: not `Clone` and not `Sync`, so only
/// one thread appends at a time.
pub struct Producer {
    ring: Arc<Buffer>,
    /// `tail` as last loaded: the ring has at least `len - (head -
    /// seen_tail)` free slots, so the producer loads `tail` (a line the
    /// drainer writes) only when that runs out.
    seen_tail: std::cell::Cell<usize>,
    /// Whether the last event went to the overflow: appends go there
    /// until the writer has emptied it.
    overflowing: std::cell::Cell<bool>,
}

/// The right to drain buffers: one holder at a time ([`drainer`]).
pub struct Drainer(#[allow(dead_code)] std::sync::MutexGuard<'static, ()>);

static DRAINING: ChildFresh<()> = ChildFresh::new(());

/// A process-wide lock of the trace that a forked child replaces with a
/// fresh one: a thread of the parent may hold it at the fork (the writer
/// draining, a thread adding its buffer), and the child's own trace must
/// not wait for a thread the child does not have.
struct ChildFresh<T>(std::cell::UnsafeCell<Mutex<T>>);

// SAFETY: as std's Mutex<T>; the cell itself is written only by
// `replace_in_child`, when no other thread exists.
unsafe impl<T: Send> Sync for ChildFresh<T> {}

impl<T> ChildFresh<T> {
    const fn new(t: T) -> ChildFresh<T> {
        ChildFresh(std::cell::UnsafeCell::new(Mutex::new(t)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        // SAFETY: the cell is replaced only when no thread but the caller
        // of `replace_in_child` exists, and it holds no guard then.
        let m = unsafe { &*self.0.get() };
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// In a forked child: an unlocked lock holding `t` takes the place of
    /// the parent's, which is left as it was (never dropped: a thread
    /// that did not come along may have held it).
    ///
    /// # Safety
    /// Only the calling thread exists, and it holds no guard of this lock
    /// nor a reference into it.
    unsafe fn replace_in_child(&self, t: T) {
        // SAFETY: the caller's promise; `write` does not drop the old
        // mutex.
        unsafe { std::ptr::write(self.0.get(), Mutex::new(t)) };
    }
}

/// Waits for the right to drain buffers: the writer's (a trace's writer
/// that is ending may still flush while the next trace's starts).
pub fn drainer() -> Drainer {
    Drainer(DRAINING.lock())
}

impl Producer {
    /// A new empty buffer of [`BUFFER_CAP`] events, and its producer.
    pub fn new() -> Producer {
        Producer::with_capacity(BUFFER_CAP)
    }

    /// A new empty buffer of `cap` events, rounded up to a power of two,
    /// and its producer. Its memory is reserved, not touched: a thread
    /// that records little costs little.
    pub fn with_capacity(cap: usize) -> Producer {
        let cap = cap.max(1).next_power_of_two();
        #[cfg(not(loom))]
        // SAFETY: a slot is an `UnsafeCell` of a `MaybeUninit`, valid
        // whatever its bytes; none is read before the producer writes it.
        let slots =
            unsafe { Box::<[Slot<MaybeUninit<Event>>]>::new_uninit_slice(cap).assume_init() };
        #[cfg(loom)]
        let slots = (0..cap).map(|_| Slot::new(MaybeUninit::uninit())).collect();
        Producer {
            ring: Arc::new(Buffer {
                head: crate::cache::CachePadded(AtomicUsize::new(0)),
                tail: crate::cache::CachePadded(AtomicUsize::new(0)),
                slots,
                overflow: OverflowLock::new(Vec::new()),
            }),
            seen_tail: std::cell::Cell::new(0),
            overflowing: std::cell::Cell::new(false),
        }
    }

    /// The buffer, for its drainer.
    pub fn buffer(&self) -> &Arc<Buffer> {
        &self.ring
    }

    /// Appends `e`: to the ring, or when it is full to the overflow; false
    /// only if the overflow is full too (the event is dropped).
    #[inline]
    pub fn push(&self, e: Event) -> bool {
        if self.overflowing.get() || !self.push_ring(e) {
            return self.push_overflow(e);
        }
        true
    }

    /// Appends `e` to the ring; false if it is full.
    #[inline]
    fn push_ring(&self, e: Event) -> bool {
        let b = &*self.ring;
        let head = b.head.load(Ordering::Relaxed);
        let len = b.slots.len();
        if head.wrapping_sub(self.seen_tail.get()) >= len {
            let tail = b.tail.load(Ordering::Acquire);
            self.seen_tail.set(tail);
            if head.wrapping_sub(tail) >= len {
                return false;
            }
        }
        // SAFETY: this is the buffer's one producer, and the slot lies
        // outside `tail..head`: the drainer is done with it (its advance
        // of `tail` past it was loaded with acquire, now or at an earlier
        // append) and reads it again only after the release below.
        b.slots[head & (len - 1)].with_mut(|s| unsafe { (*s).write(e) });
        #[cfg(all(target_arch = "x86_64", not(loom)))]
        // SAFETY: a prefetch has no effect on memory, and the address is a
        // slot of the ring.
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let ahead = b.slots[head.wrapping_add(PREFETCH_AHEAD) & (len - 1)]
                .0
                .get();
            _mm_prefetch::<_MM_HINT_T0>(ahead as *const i8);
        }
        b.head.store(head.wrapping_add(1), Ordering::Release);
        true
    }

    /// Appends `e` after the ring's events (see [`Buffer`]'s docs).
    #[cold]
    fn push_overflow(&self, e: Event) -> bool {
        let mut over = self.ring.overflow.lock().unwrap_or_else(|e| e.into_inner());
        if self.overflowing.get() && over.is_empty() {
            // The writer took the overflow, after the ring's events: the
            // ring again, if it has room.
            self.overflowing.set(false);
            if self.push_ring(e) {
                return true;
            }
        }
        // Out of memory is a loss, not an abort inside the scheduler.
        if over.len() >= OVERFLOW_CAP || over.try_reserve(1).is_err() {
            return false;
        }
        over.push(e);
        self.overflowing.set(true);
        true
    }
}

impl Default for Producer {
    fn default() -> Self {
        Producer::new()
    }
}

impl Buffer {
    /// Hands every event appended so far to `each`, in the order
    /// appended, then gives their slots back. `one` makes the caller the
    /// only drainer.
    pub fn drain(&self, one: &Drainer, mut each: impl FnMut(&Event)) {
        let head = self.head.load(Ordering::Acquire);
        self.drain_ring(one, head, &mut each);
        let mut over = self.overflow.lock().unwrap_or_else(|e| e.into_inner());
        if over.is_empty() {
            return;
        }
        // The producer appends to the overflow, not the ring, until it
        // sees the overflow empty under this lock: every event in the ring
        // now came before the overflow's, and every one it appends to the
        // ring after the lock is released comes after. The lock is held
        // only to read the ring's end and take the overflow (the producer
        // may be waiting for it inside the scheduler).
        let head = self.head.load(Ordering::Acquire);
        let taken = std::mem::take(&mut *over);
        drop(over);
        #[cfg(loom)]
        let unordered = OVERFLOW_FIRST.load(std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(loom))]
        let unordered = false;
        // (Under loom, `set_overflow_first` leaves the ring's last events
        // for the next drain, on purpose, for the model to catch.)
        if !unordered {
            self.drain_ring(one, head, &mut each);
        }
        taken.iter().for_each(each);
    }

    /// Hands the ring's events up to `head` (loaded with acquire) to
    /// `each` and gives their slots back.
    fn drain_ring(&self, _one: &Drainer, head: usize, each: &mut impl FnMut(&Event)) {
        let tail = self.tail.load(Ordering::Relaxed);
        #[cfg(loom)]
        let early = EARLY_GIVE_BACK.load(std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(loom))]
        let early = false;
        if early {
            self.tail.store(head, Ordering::Release);
        }
        let mask = self.slots.len() - 1;
        let mut at = tail;
        while at != head {
            // SAFETY: the caller is the one drainer, and the slot lies
            // inside `tail..head`: the producer wrote it before its
            // release of `head` (loaded above with acquire) and writes it
            // again only after `tail` passes it below. (Under loom,
            // `set_early_give_back` gives the slots back first, on
            // purpose, for the model to catch.)
            self.slots[at & mask].with(|s| each(unsafe { (*s).assume_init_ref() }));
            at = at.wrapping_add(1);
            if !early && at.is_multiple_of(GIVE_BACK_EVERY) {
                // The producer may write again into what was read: a
                // drain that writes to the file for milliseconds does
                // not leave it a ring only part free.
                self.tail.store(at, Ordering::Release);
            }
        }
        if !early {
            self.tail.store(head, Ordering::Release);
        }
    }

    /// Takes every event appended so far, leaving the buffer empty (the
    /// loom model's writer and the tests).
    #[cfg_attr(not(any(test, loom)), allow(dead_code))]
    pub fn take(&self, one: &Drainer) -> Vec<Event> {
        let mut out = Vec::new();
        self.drain(one, |e| out.push(*e));
        out
    }
}

/// Under loom: a writer that gives its slots back before it has read
/// them (a broken handoff `tests/trace_loom.rs` must catch).
#[cfg(loom)]
static EARLY_GIVE_BACK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Under loom: a writer that takes the overflow without first taking the
/// ring's last events (a broken order `tests/trace_loom.rs` must catch).
#[cfg(loom)]
static OVERFLOW_FIRST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Brings back a writer that takes a buffer's overflow before the ring's
/// events appended before it (loom only).
#[cfg(loom)]
pub fn set_overflow_first(on: bool) {
    OVERFLOW_FIRST.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Brings back a writer that advances the buffer's `tail` before it reads
/// the slots it gives back (loom only).
#[cfg(loom)]
pub fn set_early_give_back(on: bool) {
    EARLY_GIVE_BACK.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// A drain gives back the slots it has read every this many (under loom every slot, so that the model meets the thread
/// writing into a slot given back in the middle of a drain).
#[cfg(not(loom))]
const GIVE_BACK_EVERY: usize = 1024;
#[cfg(loom)]
const GIVE_BACK_EVERY: usize = 1;

/// How many slots ahead of the one it writes an append brings a slot's
/// line into the cache (`prefetcht0`): the ring is far larger than the
/// caches, so each slot's line is cold when its turn comes, and an
/// append that waits for it costs a goroutine switch several
/// nanoseconds. (`prefetchw`, which fetches the line for writing, was
/// measured no better.)
#[cfg(all(target_arch = "x86_64", not(loom)))]
const PREFETCH_AHEAD: usize = 8;

/// The events a thread's ring holds between two visits of the writer;
/// more go to its overflow.
pub const BUFFER_CAP: usize = 1 << 17;

/// The most events a thread's overflow holds (about 128 MiB); more are
/// counted as lost. Under loom one, so that the model meets the refusal.
#[cfg(not(loom))]
const OVERFLOW_CAP: usize = 1 << 21;
#[cfg(loom)]
const OVERFLOW_CAP: usize = 1;

/// Events dropped because their thread's ring and overflow were full.
static LOST: AtomicU64 = AtomicU64::new(0);

// ---- sessions, recording ------------------------------------------------

static SESSION: AtomicU32 = AtomicU32::new(0);
static LAST_SESSION: AtomicU32 = AtomicU32::new(0);

/// The trace being taken, or 0: the one relaxed load of a site while off.
#[inline(always)]
pub fn session() -> u32 {
    SESSION.load(Ordering::Relaxed)
}

/// The monotonic clock in nanoseconds.
pub(crate) fn now() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The trace's clock: one cheap read per event. On x86-64 the
/// time-stamp counter (invariant on the processors this runs on: it is
/// what Linux's `tsc` clock source reads), by `rdtscp`, which waits for
/// the loads and instructions before it; elsewhere the monotonic clock.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut aux = 0u32;
        // SAFETY: `rdtscp` has no memory effects besides writing `aux`, a
        // valid local; every x86-64 processor this runtime supports has it.
        unsafe { core::arch::x86_64::__rdtscp(&mut aux) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        now()
    }
}

/// A pair of readings of [`ticks`] and [`now`] taken together.
#[derive(Clone, Copy)]
struct Calibration {
    ticks: u64,
    ns: u64,
}

impl Calibration {
    fn take() -> Calibration {
        let (t0, ns, t1) = (ticks(), now(), ticks());
        Calibration {
            ticks: t0 / 2 + t1 / 2 + (t0 & t1 & 1),
            ns,
        }
    }
}

/// Ticks to nanoseconds from the trace's start, by the two calibrations.
#[derive(Clone, Copy)]
struct Scale {
    base: u64,
    num: u128,
    den: u128,
}

impl Scale {
    fn new(start: Calibration, stop: Calibration) -> Scale {
        let (dt, dn) = (
            stop.ticks.saturating_sub(start.ticks),
            stop.ns.saturating_sub(start.ns),
        );
        if dt == 0 || dn == 0 {
            // Too short a trace to measure the rate: one tick a nanosecond.
            return Scale {
                base: start.ticks,
                num: 1,
                den: 1,
            };
        }
        Scale {
            base: start.ticks,
            num: dn as u128,
            den: dt as u128,
        }
    }

    fn span(&self, t: u64) -> u64 {
        (t as u128 * self.num / self.den) as u64
    }

    fn at(&self, t: u64) -> u64 {
        self.span(t.saturating_sub(self.base))
    }
}

mod local {
    use super::{Buffer, ChildFresh, Producer};
    use std::cell::RefCell;
    use std::sync::Arc;

    /// Every thread's buffer, for the writer.
    pub(super) static BUFFERS: ChildFresh<Vec<Arc<Buffer>>> = ChildFresh::new(Vec::new());

    thread_local! {
        static LOCAL: RefCell<Option<Producer>> = const { RefCell::new(None) };
    }

    fn register() -> Producer {
        let p = Producer::new();
        BUFFERS.lock().push(p.buffer().clone());
        p
    }

    /// Appends `e` to the calling thread's buffer (dropped while the
    /// thread is being torn down).
    pub(super) fn push(e: super::Event) {
        let _ = crate::fresh::try_with(&LOCAL, |c| {
            let kept = c
                .try_borrow_mut()
                .is_ok_and(|mut p| p.get_or_insert_with(register).push(e));
            if !kept {
                super::LOST.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }

    /// In a forked child: the process's buffers are the parent's (their
    /// locks perhaps held by its threads); the list starts empty and the
    /// calling thread, the child's only one, gets a new buffer at its
    /// next event.
    ///
    /// # Safety
    /// As the outer `forget_in_child`'s: no other thread uses the trace.
    pub(super) unsafe fn forget_in_child() {
        // SAFETY: the caller's promise.
        unsafe { BUFFERS.replace_in_child(Vec::new()) };
        let _ = crate::fresh::try_with(&LOCAL, |c| {
            if let Ok(mut p) = c.try_borrow_mut() {
                drop(p.take());
            }
        });
    }
}

/// Records `e` (its `session` is set here) if trace `session` is still
/// being taken: callers load [`session`] first and pass what they saw.
pub(crate) fn emit(session: u32, mut e: Event) {
    e.session = session;
    local::push(e);
}

// ---- collections ----------------------------------------------------------

const GC_RING: usize = 256;

struct GcSlot {
    /// The collection's number + 1 once written.
    seq: AtomicU64,
    start: AtomicU64,
    end: AtomicU64,
    collector: AtomicU32,
    session: AtomicU32,
}

static GC_SLOTS: [GcSlot; GC_RING] = [const {
    GcSlot {
        seq: AtomicU64::new(0),
        start: AtomicU64::new(0),
        end: AtomicU64::new(0),
        collector: AtomicU32::new(0),
        session: AtomicU32::new(0),
    }
}; GC_RING];
static GC_RESERVED: AtomicU64 = AtomicU64::new(0);
/// When the collection under way started, per collector (0: untraced).
#[cfg_attr(not(any(defergc_boehm, feature = "precise")), allow(dead_code))] // no collector under nogc
static GC_START: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// The collectors, as [`gc_started`] names them.
#[cfg_attr(not(any(defergc_boehm, feature = "precise")), allow(dead_code))] // no collector under nogc
pub(crate) const BDWGC: usize = 0;
/// The precise collector.
#[allow(dead_code)] // recorded only with the precise collector built
pub(crate) const PRECISE: usize = 1;
const COLLECTOR_NAMES: [&str; 2] = ["bdwgc", "precise"];

/// A collection by `collector` starts. Atomics and the clock only.
#[cfg_attr(not(any(defergc_boehm, feature = "precise")), allow(dead_code))] // no collector under nogc
pub(crate) fn gc_started(collector: usize) {
    let t = if session() != 0 { ticks().max(1) } else { 0 };
    GC_START[collector].store(t, Ordering::Relaxed);
}

/// The collection by `collector` ends: recorded if the trace that saw it
/// start is still being taken. Atomics and the clock only.
#[cfg_attr(not(any(defergc_boehm, feature = "precise")), allow(dead_code))] // no collector under nogc
pub(crate) fn gc_ended(collector: usize) {
    let start = GC_START[collector].swap(0, Ordering::Relaxed);
    let s = session();
    if start == 0 || s == 0 {
        return;
    }
    let n = GC_RESERVED.fetch_add(1, Ordering::Relaxed);
    let slot = &GC_SLOTS[(n % GC_RING as u64) as usize];
    slot.start.store(start, Ordering::Relaxed);
    slot.end.store(ticks(), Ordering::Relaxed);
    slot.collector.store(collector as u32, Ordering::Relaxed);
    slot.session.store(s, Ordering::Relaxed);
    slot.seq.store(n + 1, Ordering::Release);
}

// ---- the writer -------------------------------------------------------------

/// How often the writer empties the buffers.
const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

struct Running {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

static RUNNING: ChildFresh<Option<Running>> = ChildFresh::new(None);

/// A record of the scratch file: `ts`, `dur`, `g`, `arg`, and the kind
/// (low byte), the wait reason's number (next 24 bits) and the track
/// (high 32 bits), each a native-endian `u64`.
const RECORD: usize = 5 * 8;
/// The kind of a collection's record (after [`Kind`]'s).
const GC_KIND: u64 = 6;

fn kind_code(k: Kind) -> u64 {
    match k {
        Kind::Slice => 0,
        Kind::Create => 1,
        Kind::Unblock => 2,
        Kind::ProcStart => 3,
        Kind::ProcStop => 4,
        Kind::Preempt => 5,
    }
}

/// What the writer keeps while the trace is taken: it only copies.
struct Writer {
    /// The trace's file, written at the end.
    out: std::fs::File,
    /// The raw records (unlinked as soon as created: nothing is left
    /// behind if the process dies).
    raw: std::io::BufWriter<std::fs::File>,
    session: u32,
    start: Calibration,
    lost_before: u64,
    gc_next: u64,
    /// Wait reasons by number (0: none), and their numbers by address.
    reasons: Vec<&'static str>,
    reason_ids: HashMap<(usize, usize), u64>,
    /// The events of the buffer being written (reused).
    batch: Vec<Event>,
}

/// `"` and `\` escaped, control characters dropped: a wait reason as a
/// JSON string's contents.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

/// Nanoseconds as the file's microseconds.
fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

impl Writer {
    fn reason_id(&mut self, r: &'static str) -> u64 {
        if r.is_empty() {
            return 0;
        }
        let key = (r.as_ptr() as usize, r.len());
        if let Some(&id) = self.reason_ids.get(&key) {
            return id;
        }
        if self.reasons.len() > 0xff_ffff {
            // No room in a record's 24 bits (never with wait reasons).
            return 0;
        }
        self.reasons.push(r);
        let id = self.reasons.len() as u64 - 1;
        self.reason_ids.insert(key, id);
        id
    }

    fn record(&mut self, words: [u64; 5]) -> std::io::Result<()> {
        let mut bytes = [0u8; RECORD];
        for (chunk, w) in bytes.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        self.raw.write_all(&bytes)
    }

    /// Moves what the buffers and the collections' ring hold for this
    /// trace into the scratch file, oldest first per buffer; returns the
    /// most events one buffer held.
    fn flush(&mut self) -> std::io::Result<usize> {
        let one = drainer();
        let buffers: Vec<Arc<Buffer>> = {
            let mut all = local::BUFFERS.lock();
            // A buffer only the registry holds belongs to a thread that
            // ended: drained below for the last time.
            let snapshot = all.clone();
            all.retain(|b| Arc::strong_count(b) > 2);
            snapshot
        };
        let mut batch = std::mem::take(&mut self.batch);
        let mut most = 0;
        for b in buffers {
            // Copied out first, which gives the ring back to its thread at
            // the speed of a copy; then written, which is slower.
            batch.clear();
            b.drain(&one, |e| batch.push(*e));
            most = most.max(batch.len());
            for e in &batch {
                if e.session == self.session {
                    let meta =
                        kind_code(e.kind) | self.reason_id(e.reason) << 8 | (e.track as u64) << 32;
                    self.record([e.ts, e.dur, e.g, e.arg, meta])?;
                }
            }
        }
        self.batch = batch;
        let reserved = GC_RESERVED.load(Ordering::Relaxed);
        if reserved.saturating_sub(self.gc_next) > GC_RING as u64 {
            self.gc_next = reserved - GC_RING as u64;
        }
        while self.gc_next < reserved {
            let slot = &GC_SLOTS[(self.gc_next % GC_RING as u64) as usize];
            if slot.seq.load(Ordering::Acquire) != self.gc_next + 1 {
                break;
            }
            let (start, end) = (
                slot.start.load(Ordering::Relaxed),
                slot.end.load(Ordering::Relaxed),
            );
            let collector = slot.collector.load(Ordering::Relaxed) as u64;
            if slot.session.load(Ordering::Relaxed) == self.session {
                let meta = GC_KIND | (GC_TRACK as u64) << 32;
                self.record([start, end.saturating_sub(start), 0, collector, meta])?;
            }
            self.gc_next += 1;
        }
        Ok(most)
    }

    /// Empties the buffers a last time, then formats the whole trace
    /// from the scratch file.
    fn finish(mut self) -> std::io::Result<()> {
        self.flush()?;
        let scale = Scale::new(self.start, Calibration::take());
        let lost = LOST
            .load(Ordering::Relaxed)
            .saturating_sub(self.lost_before);
        let mut raw = self.raw.into_inner().map_err(|e| e.into_error())?;
        use std::io::{Read, Seek};
        raw.seek(std::io::SeekFrom::Start(0))?;
        let mut input = std::io::BufReader::with_capacity(1 << 16, raw);
        let mut out = Json {
            out: std::io::BufWriter::with_capacity(1 << 16, self.out),
            first: true,
            tracks: BTreeSet::new(),
            text: String::new(),
        };
        out.out.write_all(b"{\"traceEvents\":[\n")?;
        let mut bytes = [0u8; RECORD];
        loop {
            match input.read_exact(&mut bytes) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(e),
            }
            let mut w = [0u64; 5];
            for (word, chunk) in w.iter_mut().zip(bytes.chunks_exact(8)) {
                *word = u64::from_ne_bytes(chunk.try_into().expect("8 bytes"));
            }
            let [ts, dur, g, arg, meta] = w;
            let reason = self.reasons[((meta >> 8) & 0xff_ffff) as usize];
            out.event(
                meta & 0xff,
                (meta >> 32) as u32,
                scale.at(ts),
                scale.span(dur),
                g,
                arg,
                reason,
            )?;
        }
        out.finish(lost)
    }
}

/// The JSON file being formatted at the trace's end.
struct Json<W: Write> {
    out: W,
    first: bool,
    tracks: BTreeSet<u32>,
    /// The text of the event being written (reused).
    text: String,
}

impl<W: Write> Json<W> {
    fn line(&mut self, text: &str) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.out.write_all(text.as_bytes())
    }

    /// Writes one event (`kind` a record's kind, times in nanoseconds
    /// from the trace's start).
    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        kind: u64,
        tid: u32,
        at: u64,
        dur: u64,
        g: u64,
        arg: u64,
        reason: &str,
    ) -> std::io::Result<()> {
        use std::fmt::Write as _;
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        self.tracks.insert(tid);
        if kind == GC_KIND {
            let _ = write!(
                text,
                r#"{{"name":"GC","cat":"gc","ph":"X","pid":1,"tid":{tid},"ts":{},"dur":{},"args":{{"collector":"{}"}}}}"#,
                micros(at),
                micros(dur),
                COLLECTOR_NAMES.get(arg as usize).copied().unwrap_or("?")
            );
        } else {
            let _ = write!(text, r#"{{"name":""#);
            let _ = match kind {
                0 => write!(text, r#"G{g}","cat":"goroutine","ph":"X""#),
                1 => write!(text, r#"GoCreate","cat":"goroutine","ph":"i","s":"t""#),
                2 => write!(text, r#"GoUnblock","cat":"goroutine","ph":"i","s":"t""#),
                3 => write!(text, r#"ProcStart","cat":"proc","ph":"i","s":"t""#),
                4 => write!(text, r#"ProcStop","cat":"proc","ph":"i","s":"t""#),
                _ => write!(text, r#"Preempt","cat":"sysmon","ph":"i","s":"t""#),
            };
            let _ = write!(
                text,
                r#","pid":1,"tid":{tid},"ts":{}.{:03}"#,
                at / 1000,
                at % 1000
            );
            let _ = match kind {
                0 => {
                    let _ = write!(
                        text,
                        r#","dur":{}.{:03},"args":{{"g":{g},"end":"{}","reason":""#,
                        dur / 1000,
                        dur % 1000,
                        End::name(arg)
                    );
                    if reason.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
                        text.push_str(&json_str(reason));
                    } else {
                        text.push_str(reason);
                    }
                    write!(text, r#""}}}}"#)
                }
                1 => write!(text, r#","args":{{"g":{g},"parent":{arg}}}}}"#),
                2 => write!(text, r#","args":{{"g":{g},"by":{arg}}}}}"#),
                3 | 4 => write!(text, r#","args":{{"p":{g}}}}}"#),
                _ => write!(text, r#","args":{{"g":{g}}}}}"#),
            };
        }
        let written = self.line(&text);
        self.text = text;
        written
    }

    /// The tracks' names, the lost events, the end of the document.
    fn finish(mut self, lost: u64) -> std::io::Result<()> {
        let line = r#"{"name":"process_name","ph":"M","pid":1,"args":{"name":"defergc"}}"#;
        self.line(line)?;
        for t in std::mem::take(&mut self.tracks) {
            let name = match t {
                OTHER => "threads".to_string(),
                SYSMON => "sysmon".to_string(),
                GC_TRACK => "GC".to_string(),
                p => format!("P{}", p - 1),
            };
            let text = format!(
                r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{t},"args":{{"name":"{name}"}}}}"#
            );
            self.line(&text)?;
            let text = format!(
                r#"{{"name":"thread_sort_index","ph":"M","pid":1,"tid":{t},"args":{{"sort_index":{t}}}}}"#
            );
            self.line(&text)?;
        }
        write!(
            self.out,
            "\n],\"otherData\":{{\"lost_events\":{lost}}},\"displayTimeUnit\":\"ns\"}}\n"
        )?;
        self.out.flush()
    }
}

/// Starts a trace written to `path` (created or truncated). An error if
/// a trace is already being taken or the file cannot be created.
pub(crate) fn start(path: &std::path::Path) -> std::io::Result<()> {
    let mut running = RUNNING.lock();
    if running.is_some() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "defergc: a trace is already being taken",
        ));
    }
    let out = std::fs::File::create(path)?;
    let mut scratch = path.as_os_str().to_owned();
    scratch.push(".raw");
    let raw = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&scratch)?;
    // Unlinked at once: the open file is all that is needed.
    std::fs::remove_file(&scratch)?;
    let mut session = LAST_SESSION.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
    if session == 0 {
        session = LAST_SESSION.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
    }
    let mut writer = Writer {
        out,
        raw: std::io::BufWriter::with_capacity(1 << 20, raw),
        session,
        start: Calibration::take(),
        lost_before: LOST.load(Ordering::Relaxed),
        gc_next: GC_RESERVED.load(Ordering::Relaxed),
        reasons: vec![""],
        reason_ids: HashMap::new(),
        batch: Vec::new(),
    };
    let stop = Arc::new((Mutex::new(false), Condvar::new()));
    let stop2 = stop.clone();
    let thread = std::thread::Builder::new()
        .name("defergc-trace".into())
        .spawn(move || {
            let (lock, cv) = &*stop2;
            let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
            let mut busy = false;
            while !*stopped {
                if !busy {
                    stopped = cv
                        .wait_timeout(stopped, FLUSH_EVERY)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                if !*stopped {
                    drop(stopped);
                    // A buffer that filled an eighth of its ring since the
                    // last visit is emptied again at once: its thread
                    // records faster than one flush per wait keeps up with.
                    busy = writer.flush()? > BUFFER_CAP / 8;
                    stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
                }
            }
            drop(stopped);
            writer.finish()
        })?;
    SESSION.store(session, Ordering::Release);
    *running = Some(Running { stop, thread });
    Ok(())
}

/// In a forked child, where the writer thread does not exist: no trace
/// is being taken (the parent's goes on, and what its buffers hold is
/// the parent's to write). The child starts from an empty list of
/// buffers and new locks, so a trace it starts waits for none of the
/// parent's threads, which may have held them at the fork (the writer
/// draining a buffer or holding the list, a thread adding its buffer);
/// the parent's writer's handle is forgotten, never joined.
///
/// # Safety
/// No other thread uses the trace while this runs, and the caller holds
/// none of its locks: a forked child's hook, before any thread starts,
/// or a child in which no trace is being taken.
pub(crate) unsafe fn forget_in_child() {
    SESSION.store(0, Ordering::Relaxed);
    // SAFETY: the caller's promise. The writer's handle (a thread of the
    // parent) goes with the old lock, never dropped.
    unsafe {
        RUNNING.replace_in_child(None);
        DRAINING.replace_in_child(());
        local::forget_in_child();
    }
}

/// Stops the trace being taken: the writer empties every buffer, ends
/// the file and returns how that went. An error if no trace is taken.
pub(crate) fn stop() -> std::io::Result<()> {
    let running = RUNNING.lock().take();
    let Some(running) = running else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "defergc: no trace is being taken",
        ));
    };
    SESSION.store(0, Ordering::Release);
    let (lock, cv) = &*running.stop;
    *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
    cv.notify_all();
    running
        .thread
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("defergc: the trace writer panicked")))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n"), "a\\\"b\\\\c");
        assert_eq!(micros(1_234_567), "1234.567");
    }

    /// A goroutine's creation, for the buffer's tests.
    fn created(g: u64) -> Event {
        Event {
            session: 1,
            kind: Kind::Create,
            track: OTHER,
            ts: 1,
            dur: 0,
            g,
            arg: 0,
            reason: "",
        }
    }

    /// A thread of the parent holds the trace's locks when the process
    /// forks (as the writer does while it drains, or a thread adding its
    /// buffer): the child, after its repair, takes a trace of its own,
    /// and its event is in the file.
    #[test]
    fn a_forked_child_traces_though_parent_threads_held_the_locks() {
        use std::sync::mpsc;
        // The calling thread's buffer is the parent's too (added to the
        // list before the holder takes it).
        emit(1, created(1));
        let (release, held) = mpsc::channel::<()>();
        let (ready, taken) = mpsc::channel();
        let holder = std::thread::spawn(move || {
            let _draining = drainer();
            let _buffers = local::BUFFERS.lock();
            let _running = RUNNING.lock();
            ready.send(()).unwrap();
            let _ = held.recv();
        });
        taken.recv().unwrap();
        let path =
            std::env::temp_dir().join(format!("defergc-fork-trace-{}.json", std::process::id()));
        // SAFETY: fork; the child only uses the trace and ends with
        // `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: a hang ends at the alarm (or the parent's kill); no
            // trace is taken in the child (the runtime's fork hook, if the
            // scheduler runs in this process, stopped it), so no other
            // thread uses the trace, and this one holds none of its locks.
            unsafe {
                libc::alarm(20);
                forget_in_child();
            }
            let traced = (|| {
                start(&path).ok()?;
                emit(
                    session(),
                    Event {
                        ts: ticks(),
                        ..created(777_001)
                    },
                );
                stop().ok()?;
                std::fs::read_to_string(&path).ok()
            })();
            let ok = traced.is_some_and(|t| t.contains(r#""g":777001"#));
            // SAFETY: ends the child without the parent's exit handlers.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        drop(release);
        holder.join().unwrap();
        let status = crate::gc::fork::wait_child(pid, std::time::Duration::from_secs(60));
        let _ = std::fs::remove_file(&path);
        assert!(
            status.is_some_and(|s| libc::WIFEXITED(s) && libc::WEXITSTATUS(s) == 0),
            "the child's trace failed (status {status:#x?}; None: killed after a minute)"
        );
    }

    #[test]
    fn a_buffer_gives_its_events_once() {
        let p = Producer::new();
        let one = drainer();
        let e = created(7);
        p.push(e);
        p.push(Event { g: 8, ..e });
        let b = p.buffer();
        assert_eq!(b.take(&one).iter().map(|e| e.g).collect::<Vec<_>>(), [7, 8]);
        assert!(b.take(&one).is_empty());
    }

    #[test]
    fn a_full_ring_overflows_and_the_order_is_kept() {
        let p = Producer::with_capacity(2);
        let (b, one) = (p.buffer().clone(), drainer());
        let e = created(1);
        let gs = |v: Vec<Event>| v.iter().map(|e| e.g).collect::<Vec<_>>();
        for g in 1..=5 {
            assert!(p.push(Event { g, ..e }));
        }
        assert_eq!(b.overflow.lock().unwrap().len(), 3);
        assert_eq!(gs(b.take(&one)), [1, 2, 3, 4, 5]);
        // Back to the ring once the overflow was taken.
        assert!(p.push(Event { g: 6, ..e }));
        assert!(b.overflow.lock().unwrap().is_empty());
        assert!(p.push(Event { g: 7, ..e }));
        assert!(p.push(Event { g: 8, ..e }));
        assert_eq!(gs(b.take(&one)), [6, 7, 8]);
        assert!(b.take(&one).is_empty());
    }

    /// Threads append to their own small buffers (rings of 64, which
    /// overflow often) while a writer empties them at random moments:
    /// every event is taken exactly once, in its thread's order, and none
    /// is dropped.
    #[test]
    fn a_seeded_stress_of_bounded_handoffs_conserves_events() {
        let seed = crate::seeded::seed("DEFERGC_TRACE_SEED");
        println!("seed {seed} (DEFERGC_TRACE_SEED={seed} repeats it)");
        let mut rng = crate::seeded::Rng(seed);
        const THREADS: u64 = 3;
        const EACH: u64 = 20_000;
        let mut ends: Vec<Producer> = (0..THREADS).map(|_| Producer::with_capacity(64)).collect();
        let buffers: Vec<Arc<Buffer>> = ends.iter().map(|p| p.buffer().clone()).collect();
        let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let producers: Vec<_> = ends
            .drain(..)
            .enumerate()
            .map(|(t, b)| {
                let done = done.clone();
                std::thread::spawn(move || {
                    let mut dropped = 0u64;
                    for i in 0..EACH {
                        let e = Event {
                            session: 1,
                            kind: Kind::Unblock,
                            track: t as u32,
                            ts: i,
                            dur: 0,
                            g: t as u64,
                            arg: i,
                            reason: "",
                        };
                        if !b.push(e) {
                            dropped += 1;
                        }
                    }
                    done.fetch_add(1, Ordering::Release);
                    dropped
                })
            })
            .collect();
        let mut seen: Vec<Vec<u64>> = vec![Vec::new(); THREADS as usize];
        let one = drainer();
        loop {
            let finished = done.load(Ordering::Acquire) == THREADS as usize;
            for b in &buffers {
                b.drain(&one, |e| seen[e.g as usize].push(e.arg));
            }
            if finished {
                break;
            }
            for _ in 0..rng.next() % 200 {
                std::hint::spin_loop();
            }
            if rng.below(4) == 0 {
                std::thread::yield_now();
            }
        }
        for (t, p) in producers.into_iter().enumerate() {
            let dropped = p.join().unwrap();
            let got = &seen[t];
            assert_eq!(dropped, 0, "thread {t}, seed {seed}");
            assert!(
                got.iter().copied().eq(0..EACH),
                "thread {t}: lost, out of order or twice, seed {seed}"
            );
        }
    }

    #[test]
    fn ticks_become_nanoseconds_by_the_calibrations() {
        let start = Calibration {
            ticks: 1000,
            ns: 50,
        };
        let stop = Calibration {
            ticks: 1000 + 3_000_000,
            ns: 50 + 1_000_000,
        };
        let s = Scale::new(start, stop);
        assert_eq!(s.at(1000), 0);
        assert_eq!(s.at(1000 + 3_000), 1_000);
        assert_eq!(s.at(10), 0);
        assert_eq!(s.span(300), 100);
        let same = Scale::new(start, start);
        assert_eq!(same.at(1500), 500);
    }
}
