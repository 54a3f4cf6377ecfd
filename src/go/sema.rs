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
//!
//! A fork may catch a bucket's lock held, or waited for, by a thread the
//! child does not have, and its queue holding their waiters: in the child
//! ([`forget_after_fork`], the table's fork hook, installed at the first
//! wait) every bucket gets a new, unlocked lock and an empty queue. The
//! lock is the standard library's: its waiters sleep in the kernel on its
//! own word, not in a table of queued threads (parking_lot's) that would
//! still list the parent's.

use super::wait::{Queue, Waiter};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Buckets of the waiter table (a prime, as Go's).
const BUCKETS: usize = 251;

struct Bucket {
    /// Held across a waiter's park: the guard is kept in `guard` and
    /// dropped by [`Bucket::unlock`], on the thread that locked it (the
    /// park's unlock runs on the parking worker).
    lock: UnsafeCell<Mutex<()>>,
    guard: UnsafeCell<Option<MutexGuard<'static, ()>>>,
    /// Waiters queued here (read without the lock by releases).
    waiting: AtomicUsize,
    queue: Queue,
}

// SAFETY: the queue and the kept guard are touched only under the
// bucket's lock; the lock's cell is replaced only in a forked child's
// single thread (`forget_after_fork`).
unsafe impl Sync for Bucket {}

impl Bucket {
    fn lock(&'static self) {
        // SAFETY: the cell is replaced only when no other thread exists.
        let g = unsafe { &*self.lock.get() }
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // SAFETY: the lock is held: no one else touches the kept guard.
        unsafe { *self.guard.get() = Some(g) };
    }

    /// # Safety
    /// The calling thread holds the lock ([`Bucket::lock`]).
    unsafe fn unlock(&self) {
        // SAFETY: the caller holds the lock, and with it the kept guard.
        drop(unsafe { (*self.guard.get()).take() });
    }
}

static TABLE: [Bucket; BUCKETS] = [const {
    Bucket {
        lock: UnsafeCell::new(Mutex::new(())),
        guard: UnsafeCell::new(None),
        waiting: AtomicUsize::new(0),
        queue: Queue::new(),
    }
}; BUCKETS];

fn bucket(sema: &AtomicU32) -> &'static Bucket {
    let addr = sema as *const AtomicU32 as usize;
    &TABLE[(addr >> 3) % BUCKETS]
}

/// Installs the table's fork hook (once, before the first wait).
fn on_fork() {
    static HOOKS: crate::gc::fork::ForkHooks = crate::gc::fork::ForkHooks {
        child: forget_after_fork,
        ..crate::gc::fork::ForkHooks::NONE
    };
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| crate::gc::fork::on_fork(&HOOKS));
}

/// In a forked child (only the forking thread exists, and it waits on no
/// semaphore): every waiter belonged to a thread or goroutine that did
/// not come along, and a bucket's lock may be held by one of them.
fn forget_after_fork() {
    for b in &TABLE {
        // SAFETY: the child's only thread; a guard kept by a parent
        // thread is forgotten (its mutex is replaced, not unlocked), the
        // old mutex is overwritten without being dropped, and the queue's
        // waiters are never touched again.
        unsafe {
            std::mem::forget((*b.guard.get()).take());
            std::ptr::write(b.lock.get(), Mutex::new(()));
            b.queue.forget_all();
        }
        b.waiting.store(0, Ordering::SeqCst);
    }
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
    on_fork();
    let b = bucket(sema);
    b.lock();
    b.waiting.fetch_add(1, Ordering::SeqCst);
    if try_take(sema) {
        b.waiting.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: locked above.
        unsafe { b.unlock() };
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
        unsafe { (*b.cast::<Bucket>()).unlock() };
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
    b.lock();
    let addr = (sema as *const AtomicU32).cast_mut().cast::<u8>();
    // SAFETY: locked.
    let waits = unsafe { b.queue.any(|w| w.elem == addr) };
    if waits && try_take(sema) {
        // SAFETY: locked; a waiter for this address is queued.
        let w = unsafe { b.queue.dequeue_where(|w| w.elem == addr) }.expect("checked");
        b.waiting.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: locked above.
        unsafe { b.unlock() };
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
    unsafe { b.unlock() };
}
