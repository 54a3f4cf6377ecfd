//! `select` over any number of channel cases, with or without `default`
//! (Go's `selectgo`).
//!
//! 1. The cases are polled in a random order (Go's fairness: each ready
//!    case is equally likely), with the lock of every channel involved
//!    held (taken in address order, so two selects cannot deadlock on each
//!    other). The first case that can complete does, and select returns.
//! 2. With none ready: `default` returns at once; otherwise the goroutine
//!    joins the queue of every case's channel with one waiter per case, all
//!    sharing one selection word, and parks, the locks released once it has
//!    switched out. The first operation to claim the word completes its
//!    case and wakes it (wakers skip claimed waiters).
//! 3. Woken, it locks the channels again and leaves every other queue.
//!
//! No wake-up is lost: a waker takes the channel's lock, which the
//! selecting goroutine holds from its poll until it is parked.

use super::chan::{ChanError, RawChan, Received};
use super::wait::{Sleeper, Waiter, UNCLAIMED};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which way a case goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Send,
    Recv,
}

/// One case: a channel (null: a nil channel, never ready), a direction,
/// and the element to send from or receive into (null: discard).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Case {
    pub(crate) chan: *const RawChan,
    pub(crate) dir: Dir,
    pub(crate) elem: *mut u8,
}

/// What a select did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chosen {
    /// Case `index` completed; for a receive, whether a value came (false:
    /// the channel was closed).
    Case { index: usize, ok: bool },
    /// No case was ready (a non-blocking select: `default`).
    Default,
}

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

/// A random number below `n` (xorshift, seeded per thread).
fn below(n: usize) -> usize {
    RNG.with(|r| {
        let mut x = r.get();
        if x == 0 {
            x = (std::time::Instant::now().elapsed().as_nanos() as u64
                ^ (r as *const Cell<u64> as u64))
                | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r.set(x);
        (x % n as u64) as usize
    })
}

/// The distinct channels of `cases`, in address order.
fn lock_order(cases: &[Case]) -> Vec<*const RawChan> {
    let mut chans: Vec<*const RawChan> = cases
        .iter()
        .map(|c| c.chan)
        .filter(|c| !c.is_null())
        .collect();
    chans.sort_unstable();
    chans.dedup();
    chans
}

fn lock_all(chans: &[*const RawChan]) {
    for &c in chans {
        // SAFETY: the caller's channels live through the select.
        unsafe { (*c).lock() };
    }
}

/// # Safety
/// The caller holds every lock of `chans`.
unsafe fn unlock_all(chans: &[*const RawChan]) {
    for &c in chans.iter().rev() {
        // SAFETY: forwarded.
        unsafe { (*c).unlock() };
    }
}

/// Runs a select (see the module docs). `Err` for a send case that found
/// its channel closed (Go panics).
///
/// # Safety
/// Every non-null channel and element pointer is valid until this
/// returns; each element has the size of its channel's elements.
pub(crate) unsafe fn select(cases: &[Case], block: bool) -> Result<Chosen, ChanError> {
    let live: Vec<usize> = (0..cases.len())
        .filter(|&i| !cases[i].chan.is_null())
        .collect();
    if live.is_empty() {
        if !block {
            return Ok(Chosen::Default);
        }
        super::chan::block_forever(if cases.is_empty() {
            "select (no cases)"
        } else {
            "select"
        });
    }
    // The poll order: a random permutation of the live cases.
    let mut order = live.clone();
    for i in (1..order.len()).rev() {
        order.swap(i, below(i + 1));
    }
    let chans = lock_order(cases);
    lock_all(&chans);
    for &i in &order {
        let case = cases[i];
        // SAFETY: the channel is live and locked (all are).
        let c = unsafe { &*case.chan };
        match case.dir {
            Dir::Send => {
                // SAFETY: locked; the element is the caller's.
                if let Some(done) = unsafe { try_send(c, case.elem, &chans) } {
                    return done.map(|()| Chosen::Case { index: i, ok: true });
                }
            }
            Dir::Recv => {
                // SAFETY: as above.
                if let Some(got) = unsafe { try_recv(c, case.elem, &chans) } {
                    return Ok(Chosen::Case {
                        index: i,
                        ok: got == Received::Value,
                    });
                }
            }
        }
    }
    if !block {
        // SAFETY: every lock is held.
        unsafe { unlock_all(&chans) };
        return Ok(Chosen::Default);
    }
    // Wait on every case at once.
    let selected = AtomicUsize::new(UNCLAIMED);
    let me = Sleeper::current();
    let waiters: Vec<Waiter> = live
        .iter()
        .map(|&i| Waiter::for_select(me.clone(), cases[i].elem, &selected, i))
        .collect();
    for (w, &i) in waiters.iter().zip(&live) {
        // SAFETY: locked; the waiters live until they are dequeued below.
        unsafe {
            match cases[i].dir {
                Dir::Send => (*cases[i].chan).enqueue_send(w),
                Dir::Recv => (*cases[i].chan).enqueue_recv(w),
            }
        }
    }
    park_unlocking(&chans);
    // Woken: some case completed (its waker claimed the word first).
    let chosen = loop {
        let index = selected.load(Ordering::Acquire);
        if index != UNCLAIMED {
            let w = &waiters[live
                .iter()
                .position(|&i| i == index)
                .expect("a case of ours")];
            w.wait("select");
            break (index, w.success.get());
        }
        super::wait::block("select");
    };
    // Leave every other queue.
    lock_all(&chans);
    for (w, &i) in waiters.iter().zip(&live) {
        if i != chosen.0 {
            // SAFETY: locked; w was queued in this channel or dequeued.
            unsafe { (*cases[i].chan).dequeue_waiter(w) };
        }
    }
    // SAFETY: locked above.
    unsafe { unlock_all(&chans) };
    let (index, success) = chosen;
    match cases[index].dir {
        Dir::Send if !success => Err(ChanError::SendOnClosed),
        Dir::Send => Ok(Chosen::Case { index, ok: true }),
        Dir::Recv => Ok(Chosen::Case { index, ok: success }),
    }
}

/// A send case that can complete now: completes it and releases every
/// lock (`Some`); else `None`, the locks still held.
///
/// # Safety
/// Every lock of `chans` is held, `c` among them.
unsafe fn try_send(
    c: &RawChan,
    elem: *mut u8,
    chans: &[*const RawChan],
) -> Option<Result<(), ChanError>> {
    // send_locked releases c's lock when it completes or fails; release
    // the others around it.
    let others: Vec<*const RawChan> = chans
        .iter()
        .copied()
        .filter(|&x| !std::ptr::eq(x, c))
        .collect();
    // SAFETY: c is locked; elem is the caller's.
    match unsafe { c.send_locked(elem) } {
        Ok(false) => None,
        Ok(true) => {
            // SAFETY: the others are still locked.
            unsafe { unlock_all(&others) };
            Some(Ok(()))
        }
        Err(e) => {
            // SAFETY: as above.
            unsafe { unlock_all(&others) };
            Some(Err(e))
        }
    }
}

/// A receive case that can complete now (see [`try_send`]).
///
/// # Safety
/// As for [`try_send`].
unsafe fn try_recv(c: &RawChan, elem: *mut u8, chans: &[*const RawChan]) -> Option<Received> {
    let others: Vec<*const RawChan> = chans
        .iter()
        .copied()
        .filter(|&x| !std::ptr::eq(x, c))
        .collect();
    // SAFETY: c is locked; elem is the caller's.
    let got = unsafe { c.recv_locked(elem) }?;
    // SAFETY: the others are still locked.
    unsafe { unlock_all(&others) };
    Some(got)
}

/// Parks the selecting goroutine, every lock released once it switched
/// out (a thread releases them and returns: its caller then blocks).
fn park_unlocking(chans: &Vec<*const RawChan>) {
    unsafe fn unlock(arg: *mut u8) {
        // SAFETY: park_unlocking passes its (locked) channel list, which
        // lives on the selecting goroutine's stack until it returns.
        unsafe { unlock_all(&*arg.cast::<Vec<*const RawChan>>()) };
    }
    // SAFETY: as above.
    unsafe {
        super::park_unlock(
            "select",
            unlock,
            (chans as *const Vec<*const RawChan>).cast_mut().cast(),
        );
    }
}

// ---- the Rust API ----------------------------------------------------------

/// A `select` statement for Rust code: add cases, then [`Select::wait`]
/// (or [`Select::try_wait`] for one with `default`).
///
/// ```
/// use defergc::go::{self, Chan, Select};
///
/// go::run(|| {
///     let (a, b) = (Chan::<u32>::new(1), Chan::<&str>::new(1));
///     b.send("ready");
///     let mut sel = Select::new();
///     let ra = sel.recv(&a);
///     let rb = sel.recv(&b);
///     let chosen = sel.wait();
///     assert_eq!(chosen, rb);
///     assert_eq!(sel.received::<&str>(rb), Some("ready"));
///     let _ = ra;
/// });
/// ```
pub struct Select<'c> {
    cases: Vec<Case>,
    /// Each case's element, in root memory (scanned while it waits), with
    /// how to drop a value left in it, and whether it holds one.
    slots: Vec<Slot>,
    _chans: std::marker::PhantomData<&'c ()>,
}

struct Slot {
    block: Option<std::ptr::NonNull<u8>>,
    drop: unsafe fn(*mut u8),
    full: bool,
    type_id: std::any::TypeId,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(b) = self.block {
            // SAFETY: a full slot holds one value of its type, dropped once;
            // the block came from alloc_block.
            unsafe {
                if self.full {
                    (self.drop)(b.as_ptr());
                }
                crate::roots::free_block(b);
            }
        }
    }
}

/// Drops the `T` at `p`.
///
/// # Safety
/// `p` holds a `T`.
unsafe fn drop_as<T>(p: *mut u8) {
    // SAFETY: forwarded.
    unsafe { std::ptr::drop_in_place(p.cast::<T>()) };
}

impl Default for Select<'_> {
    fn default() -> Self {
        Select::new()
    }
}

impl<'c> Select<'c> {
    /// A select with no case yet.
    pub fn new() -> Select<'c> {
        Select {
            cases: Vec::new(),
            slots: Vec::new(),
            _chans: std::marker::PhantomData,
        }
    }

    fn slot<T: 'static>(&mut self) -> *mut u8 {
        let size = std::mem::size_of::<T>();
        let block = (size > 0).then(|| crate::roots::alloc_block(size));
        let p = block.map_or(std::ptr::NonNull::<T>::dangling().as_ptr().cast(), |b| {
            b.as_ptr()
        });
        self.slots.push(Slot {
            block,
            drop: drop_as::<T>,
            full: false,
            type_id: std::any::TypeId::of::<T>(),
        });
        p
    }

    /// Adds `case v := <-c`; returns the case's index.
    pub fn recv<T: Send + 'static>(&mut self, c: &'c super::Chan<T>) -> usize {
        let elem = self.slot::<T>();
        self.cases.push(Case {
            chan: c.raw().map_or(std::ptr::null(), |r| r as *const RawChan),
            dir: Dir::Recv,
            elem,
        });
        self.cases.len() - 1
    }

    /// Adds `case c <- v`; returns the case's index. If another case is
    /// chosen, `v` is dropped with the select.
    pub fn send<T: Send + 'static>(&mut self, c: &'c super::Chan<T>, v: T) -> usize {
        let elem = self.slot::<T>();
        // SAFETY: the slot has room for a T.
        unsafe { elem.cast::<T>().write(v) };
        self.slots.last_mut().expect("just pushed").full = true;
        self.cases.push(Case {
            chan: c.raw().map_or(std::ptr::null(), |r| r as *const RawChan),
            dir: Dir::Send,
            elem,
        });
        self.cases.len() - 1
    }

    fn finish(&mut self, chosen: Result<Chosen, ChanError>) -> Option<usize> {
        match chosen {
            Ok(Chosen::Case { index, ok }) => {
                let slot = &mut self.slots[index];
                match self.cases[index].dir {
                    // The value moved into the channel.
                    Dir::Send => slot.full = false,
                    Dir::Recv => slot.full = ok,
                }
                Some(index)
            }
            Ok(Chosen::Default) => None,
            Err(e) => crate::defer::panic(crate::defer::PlainError(e.message())),
        }
    }

    /// Waits until a case can complete, completes it, returns its index.
    /// A send on a closed channel panics, as in Go; a select with no case
    /// (or only nil channels) blocks forever.
    pub fn wait(&mut self) -> usize {
        // SAFETY: the channels outlive 'c, the slots live in self.
        let chosen = unsafe { select(&self.cases, true) };
        self.finish(chosen)
            .expect("a blocking select completes a case")
    }

    /// Completes a case that is ready now, or returns `None` (`default`).
    pub fn try_wait(&mut self) -> Option<usize> {
        // SAFETY: as in wait.
        let chosen = unsafe { select(&self.cases, false) };
        self.finish(chosen)
    }

    /// The value received by receive case `index` (once): `None` if the
    /// channel was closed, or the case was not chosen.
    ///
    /// # Panics
    /// If `T` is not the case's element type.
    pub fn received<T: 'static>(&mut self, index: usize) -> Option<T> {
        let slot = &mut self.slots[index];
        assert!(
            slot.type_id == std::any::TypeId::of::<T>(),
            "defergc: Select::received with the wrong element type"
        );
        if !slot.full {
            return None;
        }
        slot.full = false;
        let p = slot
            .block
            .map_or(std::ptr::NonNull::<T>::dangling().as_ptr(), |b| {
                b.as_ptr().cast()
            });
        // SAFETY: a full receive slot holds the T the channel delivered.
        Some(unsafe { p.read() })
    }
}
