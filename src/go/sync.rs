//! Go's `sync` package for goroutines: [`Mutex`], [`RwMutex`],
//! [`WaitGroup`], [`Once`], [`Cond`]. A goroutine that waits parks (its
//! worker runs others); a plain thread blocks.
//!
//! Each type is plain data whose all-zero value is ready to use, as Go's
//! are, with the layout of its C twin in `include/defergc.h`
//! (`defergc_mutex` ...), so compiled code can embed them in its own
//! structs. Waiting goes through the semaphores of `sema.rs`.
//!
//! Misuse is Go's: unlocking an unlocked mutex is a fatal error
//! (`fatal error: sync: unlock of unlocked mutex`, status 2); a negative
//! wait-group counter panics (`sync: negative WaitGroup counter`).

use super::sema;
use super::wait::{Queue, Waiter};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// Spins before a contended lock parks: only worth it with another
/// processor to run the holder.
const SPINS: u32 = 4;

/// Go's `sync.Mutex`: zero is unlocked. Not tied to a goroutine: any
/// goroutine may unlock it.
#[repr(C)]
#[derive(Default)]
pub struct Mutex {
    /// Bit 0: locked; the rest: waiters × 2.
    state: AtomicU32,
    sema: AtomicU32,
}

const LOCKED: u32 = 1;
const WAITER: u32 = 2;

impl Mutex {
    /// An unlocked mutex.
    pub const fn new() -> Mutex {
        Mutex {
            state: AtomicU32::new(0),
            sema: AtomicU32::new(0),
        }
    }

    /// Locks it, waiting (parked) while another holds it. A preemption
    /// point (`preempt.rs`).
    #[inline]
    pub fn lock(&self) {
        super::preempt::check();
        if self
            .state
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow();
        }
    }

    #[cold]
    fn lock_slow(&self) {
        let mut spins = 0;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & LOCKED == 0 {
                if self
                    .state
                    .compare_exchange_weak(s, s | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            if spins < SPINS && super::procs::gomaxprocs_started() > 1 {
                spins += 1;
                for _ in 0..30 {
                    std::hint::spin_loop();
                }
                continue;
            }
            // Count ourselves as a waiter, then park on the semaphore.
            if self
                .state
                .compare_exchange_weak(s, s + WAITER, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                sema::acquire(&self.sema, "sync.Mutex.Lock");
                spins = 0;
            }
        }
    }

    /// Locks it if it is free; returns whether it did.
    pub fn try_lock(&self) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        s & LOCKED == 0
            && self
                .state
                .compare_exchange(s, s | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// Unlocks it, waking one waiter. Unlocking an unlocked mutex is Go's
    /// fatal error.
    #[inline]
    pub fn unlock(&self) {
        if self
            .state
            .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            self.unlock_slow();
        }
    }

    #[cold]
    fn unlock_slow(&self) {
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & LOCKED == 0 {
                super::goroutine::fatal_plain("sync: unlock of unlocked mutex");
            }
            if s >= WAITER {
                // Unlock and take one waiter off the count: it is woken.
                if self
                    .state
                    .compare_exchange_weak(
                        s,
                        (s & !LOCKED) - WAITER,
                        Ordering::Release,
                        Ordering::Relaxed,
                    )
                    .is_ok()
                {
                    sema::release(&self.sema);
                    return;
                }
            } else if self
                .state
                .compare_exchange_weak(s, s & !LOCKED, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

/// Go's `sync.RWMutex`: any number of readers or one writer; a waiting
/// writer keeps new readers out. Zero is unlocked.
#[repr(C)]
#[derive(Default)]
pub struct RwMutex {
    w: Mutex,
    writer_sem: AtomicU32,
    reader_sem: AtomicU32,
    reader_count: AtomicI32,
    reader_wait: AtomicI32,
}

const MAX_READERS: i32 = 1 << 30;

impl RwMutex {
    /// An unlocked one.
    pub const fn new() -> RwMutex {
        RwMutex {
            w: Mutex::new(),
            writer_sem: AtomicU32::new(0),
            reader_sem: AtomicU32::new(0),
            reader_count: AtomicI32::new(0),
            reader_wait: AtomicI32::new(0),
        }
    }

    /// Locks for reading. A preemption point (`preempt.rs`).
    pub fn rlock(&self) {
        super::preempt::check();
        if self.reader_count.fetch_add(1, Ordering::AcqRel) + 1 < 0 {
            // A writer is pending: wait for it.
            sema::acquire(&self.reader_sem, "sync.RWMutex.RLock");
        }
    }

    /// Undoes one [`RwMutex::rlock`].
    pub fn runlock(&self) {
        let r = self.reader_count.fetch_sub(1, Ordering::AcqRel) - 1;
        if r < 0 {
            if r + 1 == 0 || r + 1 == -MAX_READERS {
                super::goroutine::fatal_plain("sync: RUnlock of unlocked RWMutex");
            }
            // A writer waits: the last reader out lets it in.
            if self.reader_wait.fetch_sub(1, Ordering::AcqRel) - 1 == 0 {
                sema::release(&self.writer_sem);
            }
        }
    }

    /// Locks for writing.
    pub fn lock(&self) {
        self.w.lock();
        // Announce the writer; wait for the readers already in.
        let r = self.reader_count.fetch_sub(MAX_READERS, Ordering::AcqRel);
        if r != 0 && self.reader_wait.fetch_add(r, Ordering::AcqRel) + r != 0 {
            sema::acquire(&self.writer_sem, "sync.RWMutex.Lock");
        }
    }

    /// Undoes [`RwMutex::lock`], letting waiting readers in.
    pub fn unlock(&self) {
        let r = self.reader_count.fetch_add(MAX_READERS, Ordering::AcqRel) + MAX_READERS;
        if r >= MAX_READERS {
            super::goroutine::fatal_plain("sync: Unlock of unlocked RWMutex");
        }
        for _ in 0..r {
            sema::release(&self.reader_sem);
        }
        self.w.unlock();
    }
}

/// Go's `sync.WaitGroup`. Zero is a group with no work.
#[repr(C)]
#[derive(Default)]
pub struct WaitGroup {
    /// High half: the counter; low half: waiters.
    state: AtomicU64,
    sema: AtomicU32,
    _pad: u32,
}

impl WaitGroup {
    /// An empty group.
    pub const fn new() -> WaitGroup {
        WaitGroup {
            state: AtomicU64::new(0),
            sema: AtomicU32::new(0),
            _pad: 0,
        }
    }

    /// Adds `delta` (may be negative) to the counter; at zero, every
    /// waiter is released. A negative counter panics, as in Go.
    pub fn add(&self, delta: i32) -> Result<(), &'static str> {
        let s = self
            .state
            .fetch_add((delta as i64 as u64) << 32, Ordering::AcqRel)
            .wrapping_add((delta as i64 as u64) << 32);
        let v = (s >> 32) as i32;
        let w = s as u32;
        if v < 0 {
            return Err("sync: negative WaitGroup counter");
        }
        if v > 0 || w == 0 {
            return Ok(());
        }
        // Counter zero with waiters: nobody may Add or Wait meanwhile (Go's
        // rule); release them all.
        if self.state.load(Ordering::Acquire) != s {
            return Err("sync: WaitGroup misuse: Add called concurrently with Wait");
        }
        self.state.store(0, Ordering::Release);
        for _ in 0..w {
            sema::release(&self.sema);
        }
        Ok(())
    }

    /// `Add(-1)`.
    pub fn done(&self) -> Result<(), &'static str> {
        self.add(-1)
    }

    /// Waits until the counter is zero. A preemption point (`preempt.rs`).
    pub fn wait(&self) {
        super::preempt::check();
        loop {
            let s = self.state.load(Ordering::Acquire);
            if s >> 32 == 0 {
                return;
            }
            if self
                .state
                .compare_exchange_weak(s, s + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                sema::acquire(&self.sema, "sync.WaitGroup.Wait");
                return;
            }
        }
    }
}

/// Go's `sync.Once`.
#[repr(C)]
#[derive(Default)]
pub struct Once {
    done: AtomicU32,
    m: Mutex,
    _pad: u32,
}

impl Once {
    /// Not done yet.
    pub const fn new() -> Once {
        Once {
            done: AtomicU32::new(0),
            m: Mutex::new(),
            _pad: 0,
        }
    }

    /// Runs `f` if no call has run it; every call returns after the one
    /// that runs it finished (even by a panic: then it counts as done).
    pub fn call(&self, f: impl FnOnce()) {
        if self.done.load(Ordering::Acquire) != 0 {
            return;
        }
        self.m.lock();
        struct Finish<'a>(&'a Once);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                self.0.done.store(1, Ordering::Release);
                self.0.m.unlock();
            }
        }
        let _finish = Finish(self);
        if self.done.load(Ordering::Relaxed) == 0 {
            f();
        }
    }

    /// Whether it has run.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire) != 0
    }
}

/// Go's `sync.Cond`, with its locker given to [`Cond::wait`].
#[repr(C)]
#[derive(Default)]
pub struct Cond {
    lock: CondLock,
    queue: QueueCell,
}

/// The cond's own lock, as plain data.
#[repr(transparent)]
struct CondLock(AtomicU32);

impl Default for CondLock {
    fn default() -> Self {
        CondLock(AtomicU32::new(0))
    }
}

impl CondLock {
    fn lock(&self) {
        while self
            .0
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
            std::thread::yield_now();
        }
    }

    fn unlock(&self) {
        self.0.store(0, Ordering::Release);
    }
}

/// A waiter queue whose all-zero value is empty.
#[repr(transparent)]
#[derive(Default)]
struct QueueCell(QueueZero);

#[repr(C)]
struct QueueZero {
    q: Queue,
}

impl Default for QueueZero {
    fn default() -> Self {
        QueueZero { q: Queue::new() }
    }
}

// SAFETY: the queue is touched only under the cond's lock.
unsafe impl Sync for Cond {}
// SAFETY: as above; a Cond with waiters is never moved (they point at it
// only through its queue, which holds pointers to them, not to it).
unsafe impl Send for Cond {}

impl Cond {
    /// A cond with no waiter.
    pub fn new() -> Cond {
        Cond::default()
    }

    /// Unlocks `m`, waits for [`Cond::signal`] or [`Cond::broadcast`],
    /// locks `m` again. As in Go, wake-ups may come without the condition
    /// holding: wait in a loop.
    pub fn wait(&self, m: &Mutex) {
        let w = Waiter::new(std::ptr::null_mut());
        self.lock.lock();
        // SAFETY: under the cond's lock; w stays here until finished.
        unsafe { self.queue.0.q.push(&w) };
        self.lock.unlock();
        m.unlock();
        w.wait("sync.Cond.Wait");
        m.lock();
    }

    /// Wakes one waiter, if any.
    pub fn signal(&self) {
        self.lock.lock();
        // SAFETY: under the lock.
        let w = unsafe { self.queue.0.q.dequeue() }.map(|w| w as *const Waiter);
        self.lock.unlock();
        if let Some(w) = w {
            // SAFETY: a dequeued waiter stays valid until finished.
            unsafe { (*w).finish(true) };
        }
    }

    /// Wakes every waiter.
    pub fn broadcast(&self) {
        let mut all: Vec<*const Waiter> = Vec::new();
        self.lock.lock();
        // SAFETY: under the lock.
        unsafe { self.queue.0.q.drain(|w| all.push(w)) };
        self.lock.unlock();
        for w in all {
            // SAFETY: as above.
            unsafe { (*w).finish(true) };
        }
    }
}

const _: () = assert!(std::mem::size_of::<Mutex>() == 8);
const _: () = assert!(std::mem::size_of::<RwMutex>() == 24);
const _: () = assert!(std::mem::size_of::<WaitGroup>() == 16);
const _: () = assert!(std::mem::size_of::<Once>() == 16);
const _: () = assert!(std::mem::size_of::<Cond>() == 32);
