//! Semaphores on an address (Go's `semacquire` / `semrelease`): what the
//! `sync` types park on.
//!
//! A semaphore is a `u32` count the caller owns (inside its mutex or wait
//! group, so those stay small and zero-initialised). Waiters are kept in
//! a table of [`BUCKETS`] queues hashed by address, each under its own
//! lock. A release increments the count and, if a goroutine waits on that
//! address, takes the count back on its behalf and hands it over (the
//! waiter wakes owning it): no barging past a woken waiter, no lost
//! wakeup (a waiter re-checks the count under the bucket lock before it
//! parks).

use super::wait::{Queue, Waiter};
use lock_api::RawMutex as _;
use parking_lot::RawMutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Buckets of the waiter table (a prime, as Go's).
const BUCKETS: usize = 251;

struct Bucket {
    lock: RawMutex,
    /// Waiters queued here (read without the lock by releases).
    waiting: AtomicUsize,
    queue: Queue,
}

// SAFETY: the queue is touched only under the bucket's lock.
unsafe impl Sync for Bucket {}

static TABLE: [Bucket; BUCKETS] = [const {
    Bucket {
        lock: RawMutex::INIT,
        waiting: AtomicUsize::new(0),
        queue: Queue::new(),
    }
}; BUCKETS];

fn bucket(sema: &AtomicU32) -> &'static Bucket {
    let addr = sema as *const AtomicU32 as usize;
    &TABLE[(addr >> 3) % BUCKETS]
}

/// Takes one from the count if it is not zero.
fn try_take(sema: &AtomicU32) -> bool {
    let mut n = sema.load(Ordering::SeqCst);
    while n > 0 {
        match sema.compare_exchange_weak(n, n - 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return true,
            Err(now) => n = now,
        }
    }
    false
}

/// Waits until the count is positive and takes one. `reason` is what a
/// deadlock report says the goroutine waits for.
pub(crate) fn acquire(sema: &AtomicU32, reason: &'static str) {
    if try_take(sema) {
        return;
    }
    let b = bucket(sema);
    b.lock.lock();
    b.waiting.fetch_add(1, Ordering::SeqCst);
    if try_take(sema) {
        b.waiting.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: locked above.
        unsafe { b.lock.unlock() };
        return;
    }
    let w = Waiter::new((sema as *const AtomicU32).cast_mut().cast());
    let since = super::contention::mutex_wait_start();
    if since != 0 && (reason.starts_with("sync.RWMutex") || reason == "sync.Mutex.Lock") {
        w.since.set(since);
    }
    // SAFETY: locked; w stays on this stack until a release finished it.
    unsafe { b.queue.push(&w) };
    unsafe fn unlock(b: *mut u8) {
        // SAFETY: acquire passes its locked bucket.
        unsafe { (*b.cast::<Bucket>()).lock.unlock() };
    }
    // SAFETY: the bucket is static; unlock releases the lock held here.
    unsafe {
        super::goroutine::park_unlock(reason, unlock, (b as *const Bucket).cast_mut().cast())
    };
    // The releaser took the count for us before finishing the waiter.
    w.wait(reason);
}

/// Adds one to the count and, if a goroutine waits on it, hands it over.
pub(crate) fn release(sema: &AtomicU32) {
    sema.fetch_add(1, Ordering::SeqCst);
    let b = bucket(sema);
    if b.waiting.load(Ordering::SeqCst) == 0 {
        return;
    }
    b.lock.lock();
    let addr = (sema as *const AtomicU32).cast_mut().cast::<u8>();
    // SAFETY: locked.
    let waits = unsafe { b.queue.any(|w| w.elem == addr) };
    if waits && try_take(sema) {
        // SAFETY: locked; a waiter for this address is queued.
        let w = unsafe { b.queue.dequeue_where(|w| w.elem == addr) }.expect("checked");
        b.waiting.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: locked above.
        unsafe { b.lock.unlock() };
        // Before `finish` (the record may be gone after it), and not as
        // a tail call (which would take this frame off the stack walked).
        let since = w.since.get();
        if since != 0 {
            super::contention::mutex_event(since);
        }
        w.finish(true);
        return;
    }
    // SAFETY: locked above.
    unsafe { b.lock.unlock() };
}
