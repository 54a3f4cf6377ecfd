//! `select` over any number of channel cases, with or without `default`
//! (Go's `selectgo`).
//!
//! 1. The cases are polled in a random order (Go's fairness: each ready
//!    case is equally likely), each under its channel's lock alone. The
//!    first case that can complete does, and select returns.
//! 2. With none ready, they are polled again with the lock of every
//!    channel involved held (taken in address order, so two selects cannot
//!    deadlock on each other): what follows answers one instant of all the
//!    channels. A case ready now completes. Otherwise `default` returns at
//!    once (from the first pass alone, a select could take `default` while
//!    at every instant some case was ready); or the goroutine
//!    joins the queue of every case's channel with one waiter per case, all
//!    sharing one selection word, and parks, the locks released once it has
//!    switched out. The first operation to claim the word completes its
//!    case and wakes it (wakers skip claimed waiters).
//! 3. Woken, it locks the channels again and leaves every other queue.
//!
//! No wake-up is lost: a waker takes the channel's lock, which the
//! selecting goroutine holds from its poll until it is parked.

use super::chan::{ChanError, RawChan, Received};
use super::prim::AtomicUsize;
use super::wait::{Sleeper, Waiter, UNCLAIMED};
use smallvec::SmallVec;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

/// Which way a case goes: the C ABI's `DEFERGC_SELECT_SEND` and
/// `DEFERGC_SELECT_RECV` (a C case array is read as cases in place, see
/// [`Case`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum Dir {
    Send = 1,
    Recv = 2,
}

/// One case: a channel (null: a nil channel, never ready), a direction,
/// and the element to send from or receive into (null: discard). Laid
/// out as the C ABI's `defergc_select_case` (a channel pointer, an `int`
/// direction, an element pointer), so that a C select's validated cases
/// are used where they are, not copied.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
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

#[cfg(not(loom))]
use super::rand::Choices;

/// Room for this many cases (and their channels and waiters) on the
/// selecting goroutine's stack; larger selects spill to the heap.
const INLINE: usize = 8;

type Chans = SmallVec<[*const RawChan; INLINE]>;

/// The distinct channels of `cases`, in address order.
fn lock_order(cases: &[Case]) -> Chans {
    if cases.len() > INLINE {
        let mut chans: Vec<*const RawChan> = cases
            .iter()
            .map(|c| c.chan)
            .filter(|c| !c.is_null())
            .collect();
        chans.sort_unstable();
        chans.dedup();
        return Chans::from_vec(chans);
    }
    // An insertion sort in a plain array: selects are small.
    let mut buf = [std::ptr::null::<RawChan>(); INLINE];
    let mut n = 0;
    for c in cases {
        let p = c.chan;
        if p.is_null() {
            continue;
        }
        let mut i = n;
        while i > 0 && buf[i - 1] > p {
            i -= 1;
        }
        if i > 0 && buf[i - 1] == p {
            continue;
        }
        buf.copy_within(i..n, i + 1);
        buf[i] = p;
        n += 1;
    }
    Chans::from_buf_and_len(buf, n)
}

fn lock_all(chans: &[*const RawChan]) {
    for &c in chans {
        // SAFETY: the caller's channels live through the select.
        unsafe { (*c).lock() };
    }
}

/// Releases every lock of `chans` but `except`'s (which the channel
/// operation that completed released itself).
///
/// # Safety
/// The caller holds every lock of `chans` (but `except`'s).
unsafe fn unlock_all_but(chans: &[*const RawChan], except: *const RawChan) {
    for &c in chans.iter().rev() {
        if !std::ptr::eq(c, except) {
            // SAFETY: forwarded.
            unsafe { (*c).unlock() };
        }
    }
}

/// # Safety
/// The caller holds every lock of `chans`.
unsafe fn unlock_all(chans: &[*const RawChan]) {
    // SAFETY: forwarded; no channel is null.
    unsafe { unlock_all_but(chans, std::ptr::null()) }
}

/// Runs a select (see the module docs). `Err` for a send case that found
/// its channel closed (Go panics).
///
/// # Safety
/// Every non-null channel and element pointer is valid until this
/// returns; each element has the size of its channel's elements.
pub(crate) unsafe fn select(cases: &[Case], block: bool) -> Result<Chosen, ChanError> {
    if block {
        // A preemption point (preempt.rs): a blocking select may switch.
        super::preempt::check();
    }
    // The live cases, in a random order (Go's fairness): an inside-out
    // Fisher-Yates shuffle as they are collected.
    let mut order: SmallVec<[usize; INLINE]> = SmallVec::new();
    #[cfg(not(loom))]
    let mut choices = Choices::new();
    for (i, c) in cases.iter().enumerate() {
        if c.chan.is_null() {
            continue;
        }
        // Under loom, the cases' own order: an execution must take the
        // same branches each time loom replays it (the models list cases
        // in the orders they want checked).
        #[cfg(loom)]
        let j = order.len();
        #[cfg(not(loom))]
        let j = choices.below(order.len() + 1);
        if j == order.len() {
            order.push(i);
        } else {
            let moved = order[j];
            order.push(moved);
            order[j] = i;
        }
    }
    if order.is_empty() {
        if !block {
            return Ok(Chosen::Default);
        }
        super::chan::block_forever(if cases.is_empty() {
            "select (no cases)"
        } else {
            "select"
        });
    }
    // The common case first: a ready case, found with one lock at a time.
    for &i in &order {
        let c = cases[i].chan;
        // SAFETY: the channel is live (the caller's).
        unsafe { (*c).lock() };
        // SAFETY: c is locked; the element is the caller's.
        if let Some(done) = unsafe { poll(cases, i, &[c]) } {
            return done;
        }
        // SAFETY: still locked (poll found nothing to do).
        unsafe { (*c).unlock() };
    }
    // None was ready a moment ago: poll again with every lock held, so
    // that `default`, or waiting, answers one instant of all the channels.
    let chans = lock_order(cases);
    lock_all(&chans);
    for &i in &order {
        // SAFETY: every channel is locked.
        if let Some(done) = unsafe { poll(cases, i, &chans) } {
            return done;
        }
    }
    if !block {
        // SAFETY: every lock is held.
        unsafe { unlock_all(&chans) };
        return Ok(Chosen::Default);
    }
    // Wait on every case at once (the waiters stay where they are built
    // until each has left its queue).
    let selected = AtomicUsize::new(UNCLAIMED);
    let me = Sleeper::current();
    let waiters: SmallVec<[Waiter; INLINE]> = order
        .iter()
        .map(|&i| Waiter::for_select(me.clone(), cases[i].elem, &selected, i))
        .collect();
    for w in &waiters {
        let case = &cases[w.case];
        // SAFETY: locked; the waiters live until they are dequeued below.
        unsafe {
            match case.dir {
                Dir::Send => (*case.chan).enqueue_send(w),
                Dir::Recv => (*case.chan).enqueue_recv(w),
            }
        }
    }
    park_unlocking(&chans);
    // Woken: some case completed (its waker claimed the word first).
    let (index, success) = loop {
        let index = selected.load(Ordering::Acquire);
        if index != UNCLAIMED {
            let w = waiters
                .iter()
                .find(|w| w.case == index)
                .expect("a case of ours");
            w.wait("select");
            break (index, w.success.get());
        }
        super::wait::block("select");
    };
    // Leave every other queue.
    lock_all(&chans);
    for w in &waiters {
        if w.case != index {
            // SAFETY: locked; w was queued in this channel or dequeued.
            unsafe { (*cases[w.case].chan).dequeue_waiter(w, cases[w.case].dir == Dir::Send) };
        }
    }
    // SAFETY: locked above.
    unsafe { unlock_all(&chans) };
    #[cfg(loom)]
    for w in &waiters {
        w.assert_unlinked();
    }
    match cases[index].dir {
        Dir::Send if !success => Err(ChanError::SendOnClosed),
        Dir::Send => Ok(Chosen::Case { index, ok: true }),
        Dir::Recv => Ok(Chosen::Case { index, ok: success }),
    }
}

/// Completes case `i` if it can proceed now, releasing every lock of
/// `held` (`Some`, with what select returns); else `None`, the locks
/// still held.
///
/// # Safety
/// The caller holds every lock of `held`, among them case `i`'s channel;
/// the case is as [`select`] requires.
unsafe fn poll(
    cases: &[Case],
    i: usize,
    held: &[*const RawChan],
) -> Option<Result<Chosen, ChanError>> {
    let case = cases[i];
    // SAFETY: live and locked, as the caller promised.
    let c = unsafe { &*case.chan };
    // A completed operation releases c's lock; release the others.
    match case.dir {
        Dir::Send => {
            // SAFETY: c is locked; the element is the caller's.
            match unsafe { c.send_locked(case.elem) } {
                Ok(false) => None,
                done => {
                    // SAFETY: the others are still locked.
                    unsafe { unlock_all_but(held, c) };
                    Some(done.map(|_| Chosen::Case { index: i, ok: true }))
                }
            }
        }
        Dir::Recv => {
            // SAFETY: as above.
            let got = unsafe { c.recv_locked(case.elem) }?;
            // SAFETY: as above.
            unsafe { unlock_all_but(held, c) };
            Some(Ok(Chosen::Case {
                index: i,
                ok: got == Received::Value,
            }))
        }
    }
}

/// Parks the selecting goroutine, every lock released once it switched
/// out (a thread releases them and returns: its caller then blocks).
fn park_unlocking(chans: &Chans) {
    unsafe fn unlock(arg: *mut u8) {
        // SAFETY: park_unlocking passes its (locked) channel list, which
        // lives on the selecting goroutine's stack until it returns.
        unsafe { unlock_all(&*arg.cast::<Chans>()) };
    }
    // SAFETY: as above.
    unsafe {
        super::goroutine::park_unlock("select", unlock, (chans as *const Chans).cast_mut().cast());
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
    cases: SmallVec<[Case; INLINE]>,
    /// Each case's element (in `arena`), how to drop a value left in it,
    /// and whether it holds one.
    slots: SmallVec<[Slot; INLINE]>,
    arena: Arena,
    _chans: std::marker::PhantomData<&'c ()>,
}

struct Slot {
    elem: *mut u8,
    drop: unsafe fn(*mut u8),
    full: bool,
    type_id: std::any::TypeId,
}

/// Where a select's elements live: root memory (scanned while the
/// goroutine waits, wherever the `Select` itself was moved), carved from
/// blocks of [`Arena::BLOCK`] bytes, so a select of a few small cases
/// takes one block from the thread's cache.
struct Arena {
    blocks: SmallVec<[NonNull<u8>; 1]>,
    /// The free part of the newest block.
    next: *mut u8,
    left: usize,
}

impl Arena {
    const BLOCK: usize = 64;

    fn new() -> Arena {
        Arena {
            blocks: SmallVec::new(),
            next: std::ptr::null_mut(),
            left: 0,
        }
    }

    /// Room for a `T`.
    fn place<T>(&mut self) -> *mut T {
        let layout = std::alloc::Layout::new::<T>();
        if layout.size() == 0 {
            return NonNull::<T>::dangling().as_ptr();
        }
        let pad = self.next.align_offset(layout.align());
        if self.next.is_null() || pad.saturating_add(layout.size()) > self.left {
            // A new block (its own, for an element too big to share one),
            // with room to align the element.
            let size = (layout.size() + layout.align()).max(Self::BLOCK);
            let block = crate::roots::alloc_block(size);
            self.blocks.push(block);
            self.next = block.as_ptr();
            self.left = size;
            return self.place::<T>();
        }
        // SAFETY: pad + size fit in the rest of the block.
        let p = unsafe { self.next.add(pad) };
        // SAFETY: as above.
        self.next = unsafe { p.add(layout.size()) };
        self.left -= pad + layout.size();
        p.cast()
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for &b in &self.blocks {
            // SAFETY: each block came from alloc_block, freed once; the
            // slots' values were dropped first (Select's field order).
            unsafe { crate::roots::free_block(b) };
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.full {
            // SAFETY: a full slot holds one value of its type, dropped once.
            unsafe { (self.drop)(self.elem) };
        }
    }
}

/// The entry past the end of `v`, with room reserved for it: the caller
/// writes it, then counts it with `set_len`.
fn end_of<A: smallvec::Array>(v: &mut SmallVec<A>) -> *mut A::Item {
    v.reserve(1);
    // SAFETY: within the capacity just reserved.
    unsafe { v.as_mut_ptr().add(v.len()) }
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
            cases: SmallVec::new(),
            slots: SmallVec::new(),
            arena: Arena::new(),
            _chans: std::marker::PhantomData,
        }
    }

    fn slot<T: 'static>(&mut self) -> *mut u8 {
        let elem = self.arena.place::<T>().cast::<u8>();
        let slot = end_of(&mut self.slots);
        // SAFETY: `end_of` reserved the entry; each field is written
        // where it lies (a slot built aside and copied in whole stalled
        // on the copy's wide read of its narrow writes), then it is
        // counted.
        unsafe {
            std::ptr::addr_of_mut!((*slot).elem).write(elem);
            std::ptr::addr_of_mut!((*slot).drop).write(drop_as::<T>);
            std::ptr::addr_of_mut!((*slot).full).write(false);
            std::ptr::addr_of_mut!((*slot).type_id).write(std::any::TypeId::of::<T>());
            self.slots.set_len(self.slots.len() + 1);
        }
        elem
    }

    /// Appends a case, its fields written where it lies (see `slot`).
    fn push_case(&mut self, chan: *const RawChan, dir: Dir, elem: *mut u8) -> usize {
        let case = end_of(&mut self.cases);
        // SAFETY: as in `slot`.
        unsafe {
            std::ptr::addr_of_mut!((*case).chan).write(chan);
            std::ptr::addr_of_mut!((*case).dir).write(dir);
            std::ptr::addr_of_mut!((*case).elem).write(elem);
            let n = self.cases.len();
            self.cases.set_len(n + 1);
            n
        }
    }

    /// Adds `case v := <-c`; returns the case's index.
    pub fn recv<T: Send + 'static>(&mut self, c: &'c super::chan::Chan<T>) -> usize {
        let elem = self.slot::<T>();
        let chan = c.raw().map_or(std::ptr::null(), |r| r as *const RawChan);
        self.push_case(chan, Dir::Recv, elem)
    }

    /// Adds `case c <- v`; returns the case's index. If another case is
    /// chosen, `v` is dropped with the select.
    pub fn send<T: Send + 'static>(&mut self, c: &'c super::chan::Chan<T>, v: T) -> usize {
        let elem = self.slot::<T>();
        // SAFETY: the slot has room for a T.
        unsafe { elem.cast::<T>().write(v) };
        self.slots.last_mut().expect("just pushed").full = true;
        let chan = c.raw().map_or(std::ptr::null(), |r| r as *const RawChan);
        self.push_case(chan, Dir::Send, elem)
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
            Err(e) => e.raise(),
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
        // SAFETY: a full receive slot holds the T the channel delivered.
        Some(unsafe { slot.elem.cast::<T>().read() })
    }
}
