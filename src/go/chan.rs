//! Channels with Go's semantics (Go's `hchan`): unbuffered and buffered,
//! close, receive with the ok flag, len and cap, nil channels.
//!
//! A channel is a [`RawChan`]: a lock, a ring buffer of `cap` elements of
//! `elem_size` bytes, and queues of waiting senders and receivers
//! (`wait.rs`). A send hands its value straight to a waiting receiver
//! (copying into the receiver's own variable) or puts it in the buffer, or
//! else waits; a receive takes from a waiting sender (from the buffer's
//! head, refilling its tail, when there is a buffer) or the buffer, or
//! else waits. The waiting goroutine joins the queue under the channel's
//! lock and parks with the lock released only after it switched out, so
//! its waker always finds it parked or about to return at once.
//!
//! Where elements live, so that every collector sees the references they
//! hold: a channel made by compiled code (`defergc_chan_make`) is one
//! object of the collected heap, collected when unreachable as Go's are;
//! one of the Rust API (`go::Chan`) keeps its buffer in root memory that
//! no context owns (`roots::alloc_shared_block`) and is freed with its
//! last handle. Values in transit sit on the waiting goroutine's stack,
//! which is scanned. A received slot is zeroed, so the buffer never keeps
//! a dead value alive. A collector that marks while goroutines run (the
//! precise one) scans each context, and the shared buffers, at different
//! moments, so a value that moves between them could hide from it: every
//! copy of an element that may hold references is reported
//! (`roots::words_moved`), as a barriered store is.
//!
//! Errors are Go's run-time panics: `send on closed channel`, `close of
//! closed channel`, `close of nil channel`; the caller raises them in its
//! own way (Rust unwinding, or the C protocol).

use super::prim::{AtomicBool, AtomicUsize, ChanLock};
use super::wait::{Queue, Waiter};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::Ordering;

/// The largest element Go allows in a channel: Go's compiler refuses a
/// larger one, and its `makechan` one of `1 << 16` bytes or more.
pub const MAX_ELEM_SIZE: usize = (1 << 16) - 1;

/// The largest alignment of an element: the buffers (root blocks, objects
/// of the collected heap) are 16-byte aligned.
const MAX_ELEM_ALIGN: usize = 16;

/// The largest buffer with its header, Go's `maxAlloc`: the largest
/// allocation the collectors are asked for.
const MAX_ALLOC: usize = crate::gc::MAX_ALLOC;

/// A channel (see the module docs).
#[repr(C)]
pub(crate) struct RawChan {
    /// [`RawChan::MAGIC`]: lets the C ABI refuse a pointer that is not a
    /// channel before it touches anything else.
    magic: u64,
    lock: ChanLock,
    closed: AtomicBool,
    /// Elements in the buffer (read without the lock by len and the
    /// non-blocking fast paths).
    count: AtomicUsize,
    elem_size: usize,
    /// Whether elements may hold references (every copy of one is then
    /// reported to the collectors: `roots::words_moved`).
    pointers: bool,
    cap: usize,
    /// Next slot to send into, next to receive from.
    sendx: Cell<usize>,
    recvx: Cell<usize>,
    buf: *mut u8,
    recvq: Queue,
    sendq: Queue,
}

// SAFETY: every field is read and written under the lock, except the
// atomics; the buffer is the channel's own memory.
unsafe impl Sync for RawChan {}
// SAFETY: as above.
unsafe impl Send for RawChan {}

/// A run-time error of a channel operation (Go's panic message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChanError {
    SendOnClosed,
    CloseOfClosed,
    CloseOfNil,
    /// `make`: an element of more than [`MAX_ELEM_SIZE`] bytes.
    InvalidElemType,
    /// `make`: an element aligned beyond what a buffer is.
    BadAlignment,
    /// `make`: a capacity that is negative (above `isize::MAX`), or a
    /// buffer too large to allocate.
    SizeOutOfRange,
}

impl ChanError {
    pub(crate) fn message(self) -> &'static str {
        match self {
            ChanError::SendOnClosed => "send on closed channel",
            ChanError::CloseOfClosed => "close of closed channel",
            ChanError::CloseOfNil => "close of nil channel",
            ChanError::InvalidElemType => "makechan: invalid channel element type",
            ChanError::BadAlignment => "makechan: bad alignment",
            ChanError::SizeOutOfRange => "makechan: size out of range",
        }
    }

    /// Raises the error as Go does: a run-time panic (a Rust unwind, which
    /// the C ABI's `guard` delivers to compiled code by the C protocol),
    /// except for an element type no channel can have, which Go's
    /// `makechan` throws (a fatal error, status 2: Go's compiler refuses
    /// such types, so reaching the runtime is a compiler's bug).
    pub(crate) fn raise(self) -> ! {
        match self {
            ChanError::InvalidElemType | ChanError::BadAlignment => {
                super::goroutine::fatal_plain(self.message())
            }
            _ => crate::defer::panic(crate::defer::PlainError(self.message())),
        }
    }
}

/// How a receive ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Received {
    /// A value was received.
    Value,
    /// The channel is closed and drained: the zero value was stored.
    Closed,
    /// Nothing (a non-blocking receive that would have blocked).
    WouldBlock,
}

impl RawChan {
    /// Whether the channel's lock is held now. In a forked child's repair
    /// (only the forking thread runs, and it is in no channel operation) a
    /// held lock is a thread's that did not come along, and every
    /// operation on the channel would wait for it for ever. A lock a fair
    /// unlock was handing over at the fork has no holder: the child's
    /// first operation on the channel takes it.
    pub(crate) fn lock_held(&self) -> bool {
        self.lock.has_holder()
    }

    /// The channel's lock, for tests that put it in a given state.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn lock_for_tests(&self) -> &ChanLock {
        &self.lock
    }

    const MAGIC: u64 = 0x6466_6763_6861_6e21; // "dfgchan!"

    /// Go's `makechan`, for every maker of channels: checks the element
    /// and the capacity as Go does (an element above [`MAX_ELEM_SIZE`]
    /// bytes, a capacity above `isize::MAX` (Go's negative size), a
    /// buffer above Go's `maxAlloc` with the header), and the element's
    /// alignment (at most 16), then has `buffer` allocate the buffer's
    /// bytes (maybe 0) and returns the header over it. `buffer` returns
    /// the buffer zeroed and aligned for the element (any such address
    /// for 0 bytes), or `None` when there is no memory for it, which is
    /// `makechan: size out of range` as well. Elements hold references if
    /// `pointers`.
    pub(crate) fn make(
        elem_size: usize,
        elem_align: usize,
        pointers: bool,
        cap: usize,
        buffer: impl FnOnce(usize) -> Option<*mut u8>,
    ) -> Result<RawChan, ChanError> {
        if elem_size > MAX_ELEM_SIZE {
            return Err(ChanError::InvalidElemType);
        }
        if !elem_align.is_power_of_two() || elem_align > MAX_ELEM_ALIGN {
            return Err(ChanError::BadAlignment);
        }
        let bytes = match elem_size.checked_mul(cap) {
            Some(b)
                if isize::try_from(cap).is_ok()
                    && b <= MAX_ALLOC - std::mem::size_of::<RawChan>() =>
            {
                b
            }
            _ => return Err(ChanError::SizeOutOfRange),
        };
        let buf = buffer(bytes).ok_or(ChanError::SizeOutOfRange)?;
        Ok(RawChan::new(elem_size, pointers, cap, buf))
    }

    /// A channel header over `buf` (room for `cap` elements, zeroed), of
    /// elements that hold references if `pointers`.
    fn new(elem_size: usize, pointers: bool, cap: usize, buf: *mut u8) -> RawChan {
        RawChan {
            magic: Self::MAGIC,
            lock: ChanLock::new(),
            closed: AtomicBool::new(false),
            count: AtomicUsize::new(0),
            elem_size,
            pointers,
            cap,
            sendx: Cell::new(0),
            recvx: Cell::new(0),
            buf,
            recvq: Queue::new(),
            sendq: Queue::new(),
        }
    }

    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Whether `p` (any readable, aligned address) holds a channel header.
    ///
    /// # Safety
    /// `p` is aligned and points to at least a word of readable memory.
    pub(crate) unsafe fn is_chan(p: *const RawChan) -> bool {
        // SAFETY: the magic is the header's first field (repr(C)); reading
        // a word of readable memory.
        unsafe { p.cast::<u64>().read() == Self::MAGIC }
    }

    /// Go's `len(c)`.
    pub(crate) fn len(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    pub(crate) fn lock(&self) {
        self.lock.lock();
    }

    /// # Safety
    /// The caller holds the lock.
    pub(crate) unsafe fn unlock(&self) {
        // SAFETY: forwarded.
        unsafe { self.lock.unlock() };
    }

    fn slot(&self, i: usize) -> *mut u8 {
        self.buf.wrapping_add(i * self.elem_size)
    }

    /// Copies one element; `src` null means the zero value, `dst` null
    /// discards. A value that may hold references moves between contexts
    /// (sender, buffer, receiver), so every copy of one is reported.
    fn copy(&self, dst: *mut u8, src: *const u8) {
        if dst.is_null() {
            return;
        }
        // SAFETY: both point to elem_size bytes (a buffer slot, or the
        // variable a sender or receiver gave), which do not overlap.
        unsafe {
            if src.is_null() {
                ptr::write_bytes(dst, 0, self.elem_size);
            } else {
                ptr::copy_nonoverlapping(src, dst, self.elem_size);
                if self.pointers {
                    crate::roots::words_moved(dst, self.elem_size);
                }
            }
        }
    }

    // ---- the operations, with the lock held -------------------------------

    /// With the lock held: completes a send of `*elem` if it can (to a
    /// waiting receiver, or into the buffer). `Ok(true)`: done, the lock
    /// released (a waiter may have been woken). `Ok(false)`: it would
    /// block, the lock still held. A closed channel: the error, unlocked.
    ///
    /// # Safety
    /// The caller holds the lock; `elem` points to `elem_size` bytes.
    pub(crate) unsafe fn send_locked(&self, elem: *const u8) -> Result<bool, ChanError> {
        if self.closed.load(Ordering::Relaxed) {
            // SAFETY: the caller holds it.
            unsafe { self.unlock() };
            return Err(ChanError::SendOnClosed);
        }
        // SAFETY: the lock is held.
        if let Some(r) = unsafe { self.recvq.dequeue() } {
            self.copy(r.elem, elem);
            // SAFETY: held; released before the wakeup.
            unsafe { self.unlock() };
            r.finish(true);
            return Ok(true);
        }
        let count = self.count.load(Ordering::Relaxed);
        if count < self.cap {
            let i = self.sendx.get();
            self.copy(self.slot(i), elem);
            self.sendx.set(if i + 1 == self.cap { 0 } else { i + 1 });
            self.count.store(count + 1, Ordering::Relaxed);
            // SAFETY: held.
            unsafe { self.unlock() };
            return Ok(true);
        }
        Ok(false)
    }

    /// With the lock held: completes a receive into `elem` if it can.
    /// `Some(outcome)`: done, the lock released. `None`: it would block,
    /// the lock still held.
    ///
    /// # Safety
    /// The caller holds the lock; `elem` is null or has `elem_size` bytes.
    pub(crate) unsafe fn recv_locked(&self, elem: *mut u8) -> Option<Received> {
        let count = self.count.load(Ordering::Relaxed);
        // SAFETY: the lock is held.
        if let Some(s) = unsafe { self.sendq.dequeue() } {
            if self.cap == 0 {
                self.copy(elem, s.elem);
            } else {
                // The buffer is full: take its head, put the sender's value
                // at its tail (the same slot, as the ring turns).
                let i = self.recvx.get();
                self.copy(elem, self.slot(i));
                self.copy(self.slot(i), s.elem);
                let next = if i + 1 == self.cap { 0 } else { i + 1 };
                self.recvx.set(next);
                self.sendx.set(next);
            }
            // SAFETY: held; released before the wakeup.
            unsafe { self.unlock() };
            s.finish(true);
            return Some(Received::Value);
        }
        if count > 0 {
            let i = self.recvx.get();
            self.copy(elem, self.slot(i));
            // Zero the slot: the buffer keeps nothing alive.
            self.copy(self.slot(i), ptr::null());
            self.recvx.set(if i + 1 == self.cap { 0 } else { i + 1 });
            self.count.store(count - 1, Ordering::Relaxed);
            // SAFETY: held.
            unsafe { self.unlock() };
            return Some(Received::Value);
        }
        if self.closed.load(Ordering::Relaxed) {
            // SAFETY: held.
            unsafe { self.unlock() };
            self.copy(elem, ptr::null());
            return Some(Received::Closed);
        }
        None
    }

    /// Joins the send queue with `w` (lock held).
    ///
    /// # Safety
    /// The lock is held; `w` stays valid until dequeued or removed.
    pub(crate) unsafe fn enqueue_send(&self, w: &Waiter) {
        // SAFETY: forwarded.
        unsafe { self.sendq.push(w) };
    }

    /// Joins the receive queue with `w` (lock held).
    ///
    /// # Safety
    /// As for [`RawChan::enqueue_send`].
    pub(crate) unsafe fn enqueue_recv(&self, w: &Waiter) {
        // SAFETY: forwarded.
        unsafe { self.recvq.push(w) };
    }

    /// Takes `w` out of this channel's send queue (`send`) or receive
    /// queue, if it is still there (lock held; a select cleaning up).
    ///
    /// # Safety
    /// The lock is held.
    pub(crate) unsafe fn dequeue_waiter(&self, w: &Waiter, send: bool) {
        #[cfg(loom)]
        if super::prim::bug1() {
            // Bug 1, for tests/chan_loom.rs: the old cleanup, from both
            // queues whatever the case's direction.
            // SAFETY: forwarded.
            unsafe {
                self.sendq.remove(w);
                self.recvq.remove(w);
            }
            return;
        }
        let q = if send { &self.sendq } else { &self.recvq };
        // SAFETY: forwarded; remove touches only a waiter q holds.
        unsafe { q.remove(w) };
    }

    /// Under loom: both queues are consistent and empty.
    #[cfg(loom)]
    pub(crate) fn assert_idle(&self) {
        self.lock();
        // SAFETY: locked, then released.
        unsafe {
            self.recvq.assert_empty("the receive queue");
            self.sendq.assert_empty("the send queue");
            self.unlock();
        }
    }

    // ---- whole operations -------------------------------------------------

    /// `c <- *elem`, blocking while it cannot complete (or `Ok(false)` at
    /// once if `!block`).
    ///
    /// # Safety
    /// `elem` points to `elem_size` readable bytes, valid until this
    /// returns.
    pub(crate) unsafe fn send(&self, elem: *const u8, block: bool) -> Result<bool, ChanError> {
        if block {
            // A preemption point (preempt.rs): a blocking send may switch.
            super::preempt::check();
        }
        // A full buffer has no waiting receiver (they wait only while it
        // is empty): without blocking, nothing to do.
        if !block
            && self.cap > 0
            && !self.closed.load(Ordering::Relaxed)
            && self.count.load(Ordering::Relaxed) == self.cap
        {
            return Ok(false);
        }
        self.lock();
        // SAFETY: locked; elem as the caller promised.
        match unsafe { self.send_locked(elem) }? {
            true => Ok(true),
            false if !block => {
                // SAFETY: still locked.
                unsafe { self.unlock() };
                Ok(false)
            }
            false => {
                let w = Waiter::new(elem.cast_mut());
                // SAFETY: locked; w lives on this stack until it is done.
                unsafe { self.enqueue_send(&w) };
                self.park_unlocking("chan send");
                w.wait("chan send");
                if w.success.get() {
                    Ok(true)
                } else {
                    Err(ChanError::SendOnClosed)
                }
            }
        }
    }

    /// `v, ok := <-c` into `elem` (null: discard), blocking while empty
    /// (or [`Received::WouldBlock`] at once if `!block`).
    ///
    /// # Safety
    /// `elem` is null or has `elem_size` writable bytes, valid until this
    /// returns.
    pub(crate) unsafe fn recv(&self, elem: *mut u8, block: bool) -> Received {
        if block {
            // A preemption point (preempt.rs): a blocking receive may switch.
            super::preempt::check();
        }
        // An empty buffer has no waiting sender (they wait only while it
        // is full): without blocking, nothing to do unless it is closed.
        if !block
            && self.cap > 0
            && self.count.load(Ordering::Relaxed) == 0
            && !self.closed.load(Ordering::Acquire)
        {
            return Received::WouldBlock;
        }
        self.lock();
        // SAFETY: locked; elem as the caller promised.
        if let Some(outcome) = unsafe { self.recv_locked(elem) } {
            return outcome;
        }
        if !block {
            // SAFETY: still locked.
            unsafe { self.unlock() };
            return Received::WouldBlock;
        }
        let w = Waiter::new(elem);
        // SAFETY: locked; w lives on this stack until it is done.
        unsafe { self.enqueue_recv(&w) };
        self.park_unlocking("chan receive");
        w.wait("chan receive");
        if w.success.get() {
            Received::Value
        } else {
            Received::Closed
        }
    }

    /// `close(c)`: every waiting receiver gets the zero value (not ok),
    /// every waiting sender the closed error.
    pub(crate) fn close(&self) -> Result<(), ChanError> {
        /// Waiters between the one being woken and the one whose
        /// goroutine is prefetched (and half the distance to the one whose
        /// own line is).
        const WAKE_AHEAD: usize = 8;
        self.lock();
        if self.closed.load(Ordering::Relaxed) {
            // SAFETY: locked.
            unsafe { self.unlock() };
            return Err(ChanError::CloseOfClosed);
        }
        self.closed.store(true, Ordering::Release);
        // Collect the waiters, then wake them without the lock.
        let mut woken: Vec<*const Waiter> = Vec::new();
        // SAFETY: locked.
        unsafe {
            self.recvq.drain(|r| {
                self.copy(r.elem, ptr::null());
                woken.push(r);
            });
            self.sendq.drain(|s| woken.push(s));
            self.unlock();
        }
        // A close may wake a million goroutines, each waiter on a stack
        // page of its own that is long out of the cache: ask for waiters,
        // then their goroutines' headers, some way ahead.
        let mut batch = super::sched::ReadyBatch::new();
        for (i, &w) in woken.iter().enumerate() {
            if let Some(&ahead) = woken.get(i + 2 * WAKE_AHEAD) {
                crate::cache::prefetch(ahead);
            }
            if let Some(&ahead) = woken.get(i + WAKE_AHEAD) {
                // SAFETY: as below; the waiter's line was asked for a
                // round ago.
                unsafe { (*ahead).prefetch_sleeper() };
            }
            // SAFETY: a claimed waiter stays valid until it is finished.
            unsafe { (*w).finish_into(false, &mut batch) };
        }
        drop(batch);
        Ok(())
    }

    /// Parks the calling goroutine with the channel's lock released once it
    /// switched out; a thread releases the lock and returns (its caller
    /// blocks in `Waiter::wait`).
    fn park_unlocking(&self, reason: &'static str) {
        unsafe fn unlock(chan: *mut u8) {
            // SAFETY: park_unlocking passes a locked channel.
            unsafe { (*chan.cast::<RawChan>()).unlock() };
        }
        // SAFETY: the channel outlives the wait (its waiter is queued in
        // it), and the unlock releases the lock this goroutine holds.
        unsafe {
            super::goroutine::park_unlock(
                reason,
                unlock,
                (self as *const RawChan).cast_mut().cast(),
            );
        }
    }
}

/// A nil channel: the operation blocks forever (Go parks the goroutine
/// with "chan send (nil chan)" / "chan receive (nil chan)").
pub(crate) fn block_forever(reason: &'static str) -> ! {
    loop {
        super::wait::block(reason);
    }
}

// ---- the Rust API ----------------------------------------------------------

/// A channel of `T` (Go's `chan T`) for Rust code: cloneable, freed with its
/// last handle. Its buffer is root memory, so `T` may hold references the
/// collectors must see. Operations from a goroutine park it; from a plain
/// thread, block the thread.
///
/// ```
/// use defergc::go::{self, Chan};
///
/// go::run(|| {
///     let c = Chan::<u64>::new(0);
///     let tx = c.clone();
///     go::go(move || {
///         for i in 0..10 {
///             tx.send(i);
///         }
///         tx.close();
///     });
///     let total: u64 = c.iter().sum();
///     assert_eq!(total, 45);
/// });
/// ```
pub struct Chan<T> {
    owned: Option<std::sync::Arc<Owned>>,
    _t: std::marker::PhantomData<fn(T) -> T>,
}

/// The channel of a [`Chan`] and the root block holding its buffer.
pub(crate) struct Owned {
    pub(crate) raw: RawChan,
    block: Option<std::ptr::NonNull<u8>>,
    /// Drops the values still buffered, as `T`s.
    drop_buffered: unsafe fn(&RawChan),
}

// SAFETY: the channel is Sync/Send; the block is its buffer.
unsafe impl Send for Owned {}
// SAFETY: as above.
unsafe impl Sync for Owned {}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the last handle is gone: nobody waits or sends any more;
        // buffered values are dropped once, then the buffer is freed.
        unsafe {
            (self.drop_buffered)(&self.raw);
            if let Some(block) = self.block {
                crate::roots::free_block(block);
            }
        }
    }
}

/// Drops the `T`s left in `raw`'s buffer.
///
/// # Safety
/// `raw` is a channel of `T` that nobody uses any more.
unsafe fn drop_buffered<T>(raw: &RawChan) {
    let mut i = raw.recvx.get();
    for _ in 0..raw.len() {
        // SAFETY: the slot holds a T that was sent and not received.
        unsafe { std::ptr::drop_in_place(raw.slot(i).cast::<T>()) };
        i = if i + 1 == raw.cap { 0 } else { i + 1 };
    }
}

impl<T> Clone for Chan<T> {
    fn clone(&self) -> Self {
        Chan {
            owned: self.owned.clone(),
            _t: std::marker::PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Chan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.owned {
            Some(o) => write!(f, "Chan(len {}, cap {})", o.raw.len(), o.raw.cap()),
            None => f.write_str("Chan(nil)"),
        }
    }
}

/// What [`Chan::try_recv`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum TryRecv<T> {
    /// A value.
    Value(T),
    /// Nothing yet.
    Empty,
    /// Closed and drained.
    Closed,
}

impl<T: Send> Chan<T> {
    /// `make(chan T, cap)`. Panics with Go's messages: `makechan: invalid
    /// channel element type` for a `T` above [`MAX_ELEM_SIZE`] bytes,
    /// `makechan: size out of range` for a capacity above `isize::MAX` or
    /// a buffer larger than the collectors allocate; and `makechan: bad
    /// alignment` for a `T` aligned beyond 16 bytes.
    pub fn new(cap: usize) -> Chan<T> {
        let mut block = None;
        let raw = RawChan::make(
            std::mem::size_of::<T>(),
            std::mem::align_of::<T>(),
            true,
            cap,
            |bytes| {
                // Shared root memory: every context's goroutines use the
                // buffer, so none owns it.
                block = (bytes > 0).then(|| crate::roots::alloc_shared_block(bytes));
                Some(
                    block.map_or(std::ptr::NonNull::<T>::dangling().as_ptr().cast(), |b| {
                        b.as_ptr()
                    }),
                )
            },
        )
        .unwrap_or_else(|e| e.raise());
        Chan {
            owned: Some(std::sync::Arc::new(Owned {
                raw,
                block,
                drop_buffered: drop_buffered::<T>,
            })),
            _t: std::marker::PhantomData,
        }
    }

    /// A nil channel: sends and receives block forever, close panics.
    pub fn nil() -> Chan<T> {
        Chan {
            owned: None,
            _t: std::marker::PhantomData,
        }
    }

    pub(crate) fn raw(&self) -> Option<&RawChan> {
        self.owned.as_deref().map(|o| &o.raw)
    }

    /// `c <- v`. Panics (Go's `send on closed channel`) on a closed channel.
    pub fn send(&self, v: T) {
        let Some(raw) = self.raw() else {
            block_forever("chan send (nil chan)")
        };
        let v = std::mem::ManuallyDrop::new(v);
        // SAFETY: v is a T of the channel's element size; on success it is
        // moved into the channel (not dropped here).
        if let Err(e) = unsafe { raw.send((&*v as *const T).cast(), true) } {
            drop(std::mem::ManuallyDrop::into_inner(v));
            e.raise();
        }
    }

    /// `select { case c <- v: ... default: }`: sends if it can at once;
    /// otherwise gives `v` back.
    pub fn try_send(&self, v: T) -> Result<(), T> {
        let Some(raw) = self.raw() else { return Err(v) };
        let v = std::mem::ManuallyDrop::new(v);
        // SAFETY: as in send.
        match unsafe { raw.send((&*v as *const T).cast(), false) } {
            Ok(true) => Ok(()),
            Ok(false) => Err(std::mem::ManuallyDrop::into_inner(v)),
            Err(e) => {
                drop(std::mem::ManuallyDrop::into_inner(v));
                e.raise()
            }
        }
    }

    /// `v, ok := <-c`: `None` once the channel is closed and drained.
    pub fn recv(&self) -> Option<T> {
        let Some(raw) = self.raw() else {
            block_forever("chan receive (nil chan)")
        };
        let mut slot = std::mem::MaybeUninit::<T>::uninit();
        // SAFETY: slot has room for a T; Value means a T was moved into it.
        match unsafe { raw.recv(slot.as_mut_ptr().cast(), true) } {
            // SAFETY: as above.
            Received::Value => Some(unsafe { slot.assume_init() }),
            _ => None,
        }
    }

    /// `select { case v, ok := <-c: ... default: }`.
    pub fn try_recv(&self) -> TryRecv<T> {
        let Some(raw) = self.raw() else {
            return TryRecv::Empty;
        };
        let mut slot = std::mem::MaybeUninit::<T>::uninit();
        // SAFETY: as in recv.
        match unsafe { raw.recv(slot.as_mut_ptr().cast(), false) } {
            // SAFETY: as in recv.
            Received::Value => TryRecv::Value(unsafe { slot.assume_init() }),
            Received::Closed => TryRecv::Closed,
            Received::WouldBlock => TryRecv::Empty,
        }
    }

    /// `close(c)`. Panics as Go's does on a closed or nil channel.
    pub fn close(&self) {
        let result = match self.raw() {
            Some(raw) => raw.close(),
            None => Err(ChanError::CloseOfNil),
        };
        if let Err(e) = result {
            e.raise();
        }
    }

    /// `len(c)`.
    pub fn len(&self) -> usize {
        self.raw().map_or(0, RawChan::len)
    }

    /// Whether `len(c) == 0`.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `cap(c)`.
    pub fn cap(&self) -> usize {
        self.raw().map_or(0, RawChan::cap)
    }

    /// For the crate's tests: whether a receiver waits on the channel.
    #[cfg(all(test, feature = "precise"))]
    pub(crate) fn has_waiting_receiver(&self) -> bool {
        let Some(raw) = self.raw() else { return false };
        raw.lock();
        // SAFETY: the lock is held; then released.
        unsafe {
            let any = raw.recvq.any(|_| true);
            raw.unlock();
            any
        }
    }

    /// `for v := range c`: receives until the channel is closed and drained.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.recv())
    }
}
