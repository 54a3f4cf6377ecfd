//! The synchronisation primitives of the waiting protocol (`wait.rs`,
//! `chan.rs`, `select.rs`, `netpoll.rs`) and of the idle worker's parker
//! (`park.rs`), of a processor's system-call handshake (`syscall.rs`), of
//! sysmon's wait (`sysmon.rs`) and of the stop-the-world handshake
//! (`stw.rs`: its lock and condition variable), and of a worker's
//! preemption request (`async_preempt.rs`, `tests/preempt_loom.rs`): the
//! waiter's done flag and a select's selection word, a poller
//! descriptor's lock, a channel's lock (`chanlock.rs`; loom's mutex in
//! the channel models), and how a plain thread blocks and is woken.
//!
//! They are std's (the channel lock, re-exported here, sleeps on its own
//! word), or loom's under `cfg(loom)` (as
//! `precise/sync.rs` does for the collector), so that
//! `tests/chan_loom.rs` runs the real queues, channel operations, select
//! and the poller's waits under loom's exhaustive scheduler, with each waiter a loom
//! thread that blocks in `loom::thread::park`. Under `cfg(loom)` only that
//! test may run: loom's types work only inside `loom::model`.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
};
#[cfg(not(loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;

#[cfg(not(loom))]
pub(crate) use super::chanlock::ChanLock;

/// Under loom, in the channel models: loom's mutex, its guard kept in the
/// lock while it is held (so that loom sees a thread that waits for the
/// lock as blocked, and reports a deadlock rather than spinning). The
/// real lock is checked on its own (`tests/lock_loom.rs`), and its
/// every try would multiply the channel models' interleavings.
#[cfg(loom)]
pub(crate) struct ChanLock {
    /// The holder's guard. Declared first: dropped before the mutex it
    /// borrows.
    guard: std::cell::UnsafeCell<Option<loom::sync::MutexGuard<'static, ()>>>,
    mutex: loom::sync::Mutex<()>,
}

#[cfg(loom)]
impl ChanLock {
    pub(crate) fn new() -> ChanLock {
        ChanLock {
            guard: std::cell::UnsafeCell::new(None),
            mutex: loom::sync::Mutex::new(()),
        }
    }

    pub(crate) fn lock(&self) {
        let guard = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the guard borrows self.mutex, and is kept only in
        // self.guard, which is emptied by unlock or dropped before the
        // mutex (field order): it never outlives what it borrows.
        let guard = unsafe {
            std::mem::transmute::<loom::sync::MutexGuard<'_, ()>, loom::sync::MutexGuard<'static, ()>>(
                guard,
            )
        };
        // SAFETY: only the holder of the mutex touches the slot.
        unsafe { *self.guard.get() = Some(guard) };
    }

    /// # Safety
    /// The caller holds the lock.
    pub(crate) unsafe fn unlock(&self) {
        // SAFETY: the caller holds the mutex, so it alone touches the slot.
        let guard = unsafe { (*self.guard.get()).take() };
        debug_assert!(guard.is_some(), "unlock of a lock not held");
        drop(guard);
    }

    /// Whether the lock is held (as the real lock's `has_holder`: loom's
    /// mutex is never handed over).
    pub(crate) fn has_holder(&self) -> bool {
        self.mutex.try_lock().is_err()
    }
}

/// A bug brought back for a loom test that checks loom finds it: a std
/// atomic (set outside loom's executions), its setter (re-exported by
/// `model.rs`) and its reader. Here rather than in the model so that the
/// code with the bug reads it without importing the model.
#[cfg(loom)]
macro_rules! bug_switch {
    ($(#[$doc:meta])* $flag:ident, $set:ident, $get:ident) => {
        $(#[$doc])*
        static $flag: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

        /// Turns the bug on or off (see `model.rs`).
        pub fn $set(on: bool) {
            $flag.store(on, std::sync::atomic::Ordering::Relaxed);
        }

        /// Whether the bug is on.
        pub(crate) fn $get() -> bool {
            $flag.load(std::sync::atomic::Ordering::Relaxed)
        }
    };
}

#[cfg(loom)]
bug_switch!(
    /// Bug 1, for `tests/chan_loom.rs`: a select that cleans up took its
    /// waiter out of both queues of a channel.
    BUG1, set_bug1, bug1
);

#[cfg(loom)]
bug_switch!(
    /// The poller's lost wakeup, for `tests/netpoll_loom.rs`: a readiness
    /// overwrites the parked waiter.
    LOST_WAKEUP, set_lost_wakeup, lost_wakeup
);

#[cfg(loom)]
bug_switch!(
    /// For `tests/netpoll_loom.rs`: a close that retires the record after
    /// letting its lock go, so that two closes can both succeed.
    UNCLAIMED_CLOSE, set_unclaimed_close, unclaimed_close
);

#[cfg(loom)]
bug_switch!(
    /// For `tests/netpoll_loom.rs`: a record that is free or being opened
    /// answers to the handle its next registration will have.
    UNCHECKED_PHASE, set_unchecked_phase, unchecked_phase
);

#[cfg(loom)]
bug_switch!(
    /// The idle worker's lost wake, for `tests/park_loom.rs`: a parker that
    /// claims the poll does not look at its wake flag again before it
    /// blocks in the poll.
    UNCHECKED_POLL, set_unchecked_poll, unchecked_poll
);

#[cfg(loom)]
bug_switch!(
    /// The idle workers' lost watch, for `tests/park_loom.rs`: a parker
    /// woken while it watched the timers and the poller leaves with no
    /// one watching, and the parkers that saw it watching sleep on.
    UNPASSED_WATCH, set_unpassed_watch, unpassed_watch
);

#[cfg(loom)]
bug_switch!(
    /// The watcher's lost wake, for `tests/park_loom.rs`: the model's
    /// poll takes the poller's wake even when it does not block (a worker
    /// out of work polling while the watcher blocks in the poll), as the
    /// real one did.
    NONBLOCKING_TAKES_WAKE, set_nonblocking_takes_wake, nonblocking_takes_wake
);

#[cfg(loom)]
bug_switch!(
    /// The false deadlock, for `tests/timer_loom.rs`: a worker firing
    /// timers takes their entries out of the heap without counting the
    /// firing, so the deadlock check sees neither the timer nor the
    /// goroutine it has yet to ready.
    UNCOUNTED_FIRING, set_uncounted_firing, uncounted_firing
);

#[cfg(loom)]
bug_switch!(
    /// sysmon's lost wake, for `tests/syscall_loom.rs`: sysmon looks at the
    /// idle count before it announces that it waits.
    LATE_ANNOUNCE, set_late_announce, late_announce
);

#[cfg(loom)]
bug_switch!(
    /// The double owner, for `tests/syscall_loom.rs`: a worker back from
    /// its system call does not look for a taker deciding.
    BLIND_LEAVE, set_blind_leave, blind_leave
);

/// A lock with a guard, for state changed only under it (a poller
/// descriptor's): the standard library's mutex, or loom's under
/// `cfg(loom)`. A thread of the parent may hold it at a fork, and others
/// may wait for it; in the child, [`release_after_fork`](Self::release_after_fork)
/// puts an unlocked mutex in its place, with the state as the holder
/// left it. (A parking_lot lock, force-unlocked there, may hand itself to
/// a thread parked on it, which the child does not have: held for good.)
#[cfg(not(loom))]
pub(crate) struct Lock<T>(std::cell::UnsafeCell<std::sync::Mutex<T>>);

// SAFETY: as std's Mutex<T>: the cell is only written by
// `release_after_fork`, when no other thread exists.
#[cfg(not(loom))]
unsafe impl<T: Send> Sync for Lock<T> {}

#[cfg(not(loom))]
impl<T> Lock<T> {
    pub(crate) fn new(t: T) -> Lock<T> {
        Lock(std::cell::UnsafeCell::new(std::sync::Mutex::new(t)))
    }

    #[inline]
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        // SAFETY: the cell is replaced only when no thread but the caller
        // of `release_after_fork` exists, and it holds no guard then.
        let m = unsafe { &*self.0.get() };
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// In a forked child: if a thread that did not come along held the
    /// lock, an unlocked one takes its place, guarding the same state.
    ///
    /// # Safety
    /// Only the forking thread exists, and it holds no guard of this lock
    /// nor a reference into it.
    pub(crate) unsafe fn release_after_fork(&self) {
        // SAFETY: the caller's promise: no other thread uses the cell.
        let held = match unsafe { &*self.0.get() }.try_lock() {
            Ok(_) | Err(std::sync::TryLockError::Poisoned(_)) => false,
            Err(std::sync::TryLockError::WouldBlock) => true,
        };
        if held {
            // SAFETY: the caller's promise: the holder never runs again
            // and nothing else refers to the mutex; the old one is moved
            // out, its state kept, and the cell is written without
            // dropping it (read and write are of the same place).
            unsafe {
                let old = std::ptr::read(self.0.get());
                let t = old.into_inner().unwrap_or_else(|e| e.into_inner());
                std::ptr::write(self.0.get(), std::sync::Mutex::new(t));
            }
        }
    }
}

/// A mutex that a fork may take (`gc::fork::held`): the standard
/// library's, whose unlock hands the lock to no one (it clears the word
/// and wakes a waiter through the kernel). A parking_lot lock with a
/// thread of the parent parked on it may, at its unlock in the child,
/// hand itself to that thread, which does not exist there: held for good.
/// A panic while it is held does not poison it for the others.
pub(crate) struct ForkMutex<T>(std::sync::Mutex<T>);

impl<T> ForkMutex<T> {
    pub(crate) const fn new(t: T) -> ForkMutex<T> {
        ForkMutex(std::sync::Mutex::new(t))
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The read-write lock of the same kind (see [`ForkMutex`]).
pub(crate) struct ForkRwLock<T>(std::sync::RwLock<T>);

impl<T> ForkRwLock<T> {
    pub(crate) const fn new(t: T) -> ForkRwLock<T> {
        ForkRwLock(std::sync::RwLock::new(t))
    }

    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, T> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn write(&self) -> std::sync::RwLockWriteGuard<'_, T> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(loom)]
pub(crate) struct Lock<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Lock<T> {
    pub(crate) fn new(t: T) -> Lock<T> {
        Lock(loom::sync::Mutex::new(t))
    }

    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Models do not fork.
    ///
    /// # Safety
    /// None needed; the signature is the real one's.
    pub(crate) unsafe fn release_after_fork(&self) {}
}

#[cfg(loom)]
bug_switch!(
    /// For `tests/lock_loom.rs`: a channel lock's unlock that frees the
    /// lock without waking the thread parked on it.
    LOST_HANDOFF, set_lost_handoff, lost_handoff
);

#[cfg(loom)]
bug_switch!(
    /// For `tests/lock_loom.rs`: a channel lock's fair unlock that, having
    /// woken no one, leaves the lock handed over instead of freeing it.
    STRANDED_HANDOFF, set_stranded_handoff, stranded_handoff
);

#[cfg(loom)]
bug_switch!(
    /// For `tests/runq_loom.rs`: a thief that takes its half of a run
    /// queue (moves `head`) before it reads the slots, which the holder
    /// may fill again meanwhile.
    LATE_COPY, set_late_copy, late_copy
);

#[cfg(loom)]
bug_switch!(
    /// For `tests/stw_loom.rs`: a stopper that does not wait for another
    /// stopper to finish (two stops of the world at once).
    TWO_STOPPERS, set_two_stoppers, two_stoppers
);

#[cfg(loom)]
bug_switch!(
    /// For `tests/stw_loom.rs`: a worker that enters a system call does
    /// not look for a stop of the world that began meanwhile (Go's
    /// `entersyscall_gcwait` left out): the stop waits for the call.
    NO_GCWAIT, set_no_gcwait, no_gcwait
);
