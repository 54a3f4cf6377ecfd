//! The block and mutex profiles' events, recorded where they happen (Go's
//! `blockevent` and `mutexevent`): the scheduler's side of
//! `prof::contention`, which writes them.
//!
//! - **Block profile** ([`set_block_profile_rate`], Go's
//!   `runtime.SetBlockProfileRate`): each park of a goroutine on a channel
//!   send or receive, a select, a `sync` wait (mutexes, read-write
//!   mutexes, wait groups, condition variables, the semaphores under
//!   them) or the poller is timed from the park to its return; an event
//!   that lasted the rate or more is recorded, a shorter one with
//!   probability duration / rate and then scaled up (count rate /
//!   duration, delay rate) as Go's are since Go 1.17. The stack is walked
//!   by frame pointers in the goroutine itself when it runs again
//!   (`unwind::walk_here` on its own stack): no signal, no lock, no
//!   allocation until the sample is kept. Parks that wait forever (a nil
//!   channel, a select with no cases), sleeps and parks of the public
//!   `park` with reasons of the program's own are not block events, as in
//!   Go. A wait that parks more than once (a wake it did not ask for makes
//!   it look again) counts once per park.
//! - **Mutex profile** ([`set_mutex_profile_fraction`], Go's
//!   `runtime.SetMutexProfileFraction`): a goroutine or thread that waits
//!   on a `Mutex` or `RwMutex` notes when it started to wait; the unlock
//!   that hands it the lock (`sema::release`) measures the wait and, one
//!   time in `fraction`, records it at the *unlocking* stack, scaled up by
//!   the fraction (count `fraction`, delay `fraction` × wait), as Go does:
//!   the profile names the critical section that held the others up.
//!
//! Off (rate or fraction 0, the default), each site costs one relaxed
//! load. The samples are kept by stack in a table under one lock, taken
//! only when an event is kept (as Go's `profBlockLock`).

use crate::prof::contention::{self, Contention};
use crate::unwind::{walk_here, StackRange};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

/// Frames kept per sample (Go keeps 32 at most; more helps deep stacks).
const DEPTH: usize = 64;

static BLOCK_RATE: AtomicI64 = AtomicI64::new(0);
static MUTEX_FRACTION: AtomicI64 = AtomicI64::new(0);

/// Samples by stack: (count, delay in nanoseconds).
type Samples = Option<HashMap<Vec<usize>, (f64, i64)>>;
type Table = Mutex<Samples>;
static BLOCK: Table = Mutex::new(None);
static MUTEX: Table = Mutex::new(None);

/// Go's `runtime.SetBlockProfileRate`: on average one blocking event
/// sampled per `rate` nanoseconds spent blocked; 1 records every event,
/// 0 or less turns the profile off. Returns the previous rate.
pub fn set_block_profile_rate(rate: i64) -> i64 {
    BLOCK_RATE.swap(rate.max(0), Ordering::Relaxed)
}

/// Go's `runtime.SetMutexProfileFraction`: one contention event in
/// `fraction` is recorded; 0 turns the profile off; a negative value only
/// reads the fraction. Returns the previous fraction.
pub fn set_mutex_profile_fraction(fraction: i64) -> i64 {
    if fraction < 0 {
        return MUTEX_FRACTION.load(Ordering::Relaxed);
    }
    MUTEX_FRACTION.swap(fraction, Ordering::Relaxed)
}

/// The monotonic clock in nanoseconds (never 0: 0 means "not timed").
fn nanotime() -> i64 {
    (crate::prof::trace::now() as i64).max(1)
}

/// Whether a park for `reason` is a block event (Go's list: channels,
/// select, sync, the poller; not a wait that never ends nor a sleep).
fn is_block_event(reason: &str) -> bool {
    match reason {
        "chan send" | "chan receive" | "select" | "IO wait" => true,
        _ => reason.starts_with("sync.") || reason.starts_with("semacquire"),
    }
}

/// Where a park for `reason` starts to be timed: the clock, or 0 when the
/// block profile is off (one relaxed load) or the park is no block event.
#[inline]
pub(crate) fn block_start(reason: &'static str) -> i64 {
    if BLOCK_RATE.load(Ordering::Relaxed) <= 0 {
        return 0;
    }
    block_start_slow(reason)
}

#[cold]
fn block_start_slow(reason: &'static str) -> i64 {
    if is_block_event(reason) {
        nanotime()
    } else {
        0
    }
}

/// The goroutine that parked at `since` ([`block_start`]) runs again, on
/// `stack`: records the event if it is sampled. Never inlined, so that
/// the walk's first frame is its caller's.
#[inline(never)]
pub(crate) fn blocked(since: i64, stack: StackRange) {
    let rate = BLOCK_RATE.load(Ordering::Relaxed);
    if rate <= 0 {
        return;
    }
    let d = (nanotime() - since).max(1);
    if d < rate && (super::rand::next() % rate as u64) as i64 >= d {
        return;
    }
    let mut pcs = [0usize; DEPTH];
    let n = walk_here(stack, &mut pcs);
    let (count, delay) = if d < rate {
        (rate as f64 / d as f64, rate)
    } else {
        (1.0, d)
    };
    save(&BLOCK, &pcs[..n], count, delay);
}

/// A waiter on a `Mutex` or `RwMutex` starts to wait: the clock, or 0
/// when the mutex profile is off (one relaxed load).
#[inline]
pub(crate) fn mutex_wait_start() -> i64 {
    if MUTEX_FRACTION.load(Ordering::Relaxed) <= 0 {
        return 0;
    }
    nanotime()
}

/// The unlock that hands the lock to a waiter that started to wait at
/// `since` ([`mutex_wait_start`]): samples one event in the fraction, at
/// the unlocking stack. Never inlined (see [`blocked`]).
#[inline(never)]
pub(crate) fn mutex_event(since: i64) {
    let fraction = MUTEX_FRACTION.load(Ordering::Relaxed);
    if fraction <= 0 || !super::rand::next().is_multiple_of(fraction as u64) {
        return;
    }
    let d = (nanotime() - since).max(0);
    let mut pcs = [0usize; DEPTH];
    let n = match current_stack() {
        Some(stack) => walk_here(stack, &mut pcs),
        None => {
            // A thread without a known stack range: the unwind tables.
            let mut n = 0;
            crate::unwind::walk(|pc| {
                pcs[n] = pc;
                n += 1;
                n < DEPTH
            });
            n
        }
    };
    save(
        &MUTEX,
        &pcs[..n],
        fraction as f64,
        d.saturating_mul(fraction),
    );
}

/// The stack the caller runs on: its goroutine's, or `None` on a plain
/// thread.
pub(crate) fn current_stack() -> Option<StackRange> {
    super::procs::current_g().map(stack_of)
}

/// The stack goroutine `g` runs on.
pub(crate) fn stack_of(g: &super::g::G) -> StackRange {
    let geometry = super::stack::geometry();
    StackRange {
        lo: g.slot.lo(&geometry),
        hi: g.slot.hi(&geometry),
    }
}

/// A table's lock. The first use registers fork hooks that take both
/// tables' locks around a fork (design.md invariant 9): a child must not
/// start with one held by a thread that did not come along, or its first
/// goroutine that blocks waits for it for ever.
fn lock(table: &Table) -> std::sync::MutexGuard<'_, Samples> {
    static FORK: crate::gc::fork::ForkHooks = crate::gc::fork::ForkHooks {
        prepare: || {
            crate::gc::fork::held::keep(lock(&BLOCK));
            crate::gc::fork::held::keep(lock(&MUTEX));
        },
        ..crate::gc::fork::ForkHooks::NONE
    };
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| crate::gc::fork::on_fork(&FORK));
    table.lock().unwrap_or_else(|e| e.into_inner())
}

fn save(table: &Table, stack: &[usize], count: f64, delay: i64) {
    let mut t = lock(table);
    let e = t
        .get_or_insert_with(HashMap::new)
        .entry(stack.to_vec())
        .or_insert((0.0, 0));
    e.0 += count;
    e.1 = e.1.saturating_add(delay);
}

fn samples(table: &Table) -> Vec<Contention> {
    let t = lock(table);
    t.iter()
        .flatten()
        .map(|(stack, &(count, delay))| Contention {
            stack: stack.clone(),
            count,
            delay,
        })
        .collect()
}

/// Go's `pprof.Lookup("block").WriteTo(out, 0)`: the block profile
/// recorded so far, in pprof's protobuf format (`go tool pprof` reads
/// it).
pub fn write_block_profile(out: impl Write) -> std::io::Result<()> {
    contention::write(samples(&BLOCK), out)
}

/// Go's `pprof.Lookup("mutex").WriteTo(out, 0)`: the mutex profile
/// recorded so far, in pprof's protobuf format.
pub fn write_mutex_profile(out: impl Write) -> std::io::Result<()> {
    contention::write(samples(&MUTEX), out)
}

/// [`write_block_profile`] to a file at `path`.
pub fn write_block_profile_to(path: &std::path::Path) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    write_block_profile(&mut bytes)?;
    std::fs::write(path, bytes)
}

/// [`write_mutex_profile`] to a file at `path`.
pub fn write_mutex_profile_to(path: &std::path::Path) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    write_mutex_profile(&mut bytes)?;
    std::fs::write(path, bytes)
}
