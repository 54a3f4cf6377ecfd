//! How an idle worker blocks and is woken: one primitive, "block until
//! woken or a deadline" ([`Parker::block`]), and its wake
//! ([`Parker::wake`]). `idle.rs` decides when a worker
//! has nothing to do and parks it here; whoever hands it a processor wakes
//! it. A wake that comes before the block is kept (a flag the block
//! consumes), so none is lost between deciding to park and parking.
//!
//! While goroutines wait on descriptors, one blocked worker waits in the
//! network poller instead of `std::thread::park` (Go's `findRunnable`
//! blocking in `netpoll`): what the poller readies is queued as any ready
//! is, and a wake of that worker goes through the poller's own eventfd.
//! The poller registers itself here ([`set_poller`]) when its first
//! descriptor is registered, so this file names no poller.

use super::prim::{fence, thread, AtomicBool, AtomicPtr};
use std::ptr;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// One worker's blocking point: owned by the worker, woken by any thread.
pub(crate) struct Parker {
    thread: thread::Thread,
    /// Set by [`Parker::wake`], consumed by [`Parker::block`].
    woken: AtomicBool,
}

impl Parker {
    /// The parker of the calling thread (the only one that may block on
    /// it).
    pub(crate) fn for_current() -> Parker {
        Parker {
            thread: thread::current(),
            woken: AtomicBool::new(false),
        }
    }

    /// Blocks the calling thread (the parker's own) until [`Parker::wake`]
    /// was called, `deadline` (if any) has passed, or its poll of the
    /// network readied goroutines. A wake is consumed by the block that
    /// sees it.
    pub(crate) fn block(&self, deadline: Option<Instant>) -> Wake {
        loop {
            // Only this thread clears the flag, so a load and a store
            // consume it as a swap would (wakes in between are the same
            // wake); loom 0.7 reports a false deadlock for a swap here.
            if self.woken.load(Ordering::Acquire) {
                self.woken.store(false, Ordering::Relaxed);
                return Wake::Woken;
            }
            let timeout = match deadline {
                None => None,
                Some(at) => {
                    let now = Instant::now();
                    if now >= at {
                        return Wake::Deadline;
                    }
                    Some(at - now)
                }
            };
            if let Some(p) = poller() {
                if (p.waiting)() > 0
                    && room()
                        .polling
                        .compare_exchange(
                            ptr::null_mut(),
                            (self as *const Parker).cast_mut(),
                            Ordering::SeqCst,
                            Ordering::SeqCst,
                        )
                        .is_ok()
                {
                    // The wake's store of `woken` and its load of `polling`
                    // pair with this claim and this load, a SeqCst fence
                    // between each pair: either the waker sees this worker
                    // polling and breaks the poll, or this load sees the
                    // wake (fences, not SeqCst accesses alone: loom checks
                    // this through the fences).
                    fence(Ordering::SeqCst);
                    #[cfg(loom)]
                    let looked =
                        !super::prim::unchecked_poll() && self.woken.load(Ordering::SeqCst);
                    #[cfg(not(loom))]
                    let looked = self.woken.load(Ordering::SeqCst);
                    let readied = if looked {
                        0
                    } else {
                        (p.poll)(timeout_ms(timeout))
                    };
                    room().polling.store(ptr::null_mut(), Ordering::SeqCst);
                    if readied > 0 && !self.woken.load(Ordering::Acquire) {
                        return Wake::Polled;
                    }
                    continue;
                }
            }
            #[cfg(not(loom))]
            match timeout {
                None => thread::park(),
                Some(d) => thread::park_timeout(d),
            }
            // (A loom model has no time: it never passes a deadline.)
            #[cfg(loom)]
            thread::park();
        }
    }

    /// Wakes the parker's thread (or makes its next block return at once).
    pub(crate) fn wake(&self) {
        self.woken.store(true, Ordering::SeqCst);
        self.thread.unpark();
        fence(Ordering::SeqCst);
        if ptr::eq(room().polling.load(Ordering::SeqCst), self) {
            if let Some(p) = poller() {
                (p.wake)();
            }
        }
    }
}

/// Why [`Parker::block`] returned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wake {
    /// [`Parker::wake`] was called.
    Woken,
    /// The deadline passed.
    Deadline,
    /// Its poll of the network readied goroutines (the poller's count;
    /// some may only have been notified).
    Polled,
}

/// What the scheduler needs of the network poller.
pub(crate) struct Poller {
    /// How many goroutines wait on descriptors.
    pub(crate) waiting: fn() -> usize,
    /// Readies what is ready, blocking up to the timeout (ms; -1: no
    /// limit, 0: not at all); how many it may have readied.
    pub(crate) poll: fn(i32) -> usize,
    /// Makes a blocked `poll` return.
    pub(crate) wake: fn(),
}

/// Where the poller is registered and which parker blocks in it: one
/// per process; under loom one per model execution (`tests/park_loom.rs`).
struct Room {
    poller: AtomicPtr<Poller>,
    /// The parker blocked in the poller, if any (at most one).
    polling: AtomicPtr<Parker>,
}

#[cfg(not(loom))]
static ROOM: Room = Room {
    poller: AtomicPtr::new(ptr::null_mut()),
    polling: AtomicPtr::new(ptr::null_mut()),
};

#[cfg(not(loom))]
fn room() -> &'static Room {
    &ROOM
}

#[cfg(loom)]
loom::lazy_static! {
    static ref ROOM: Room = Room {
        poller: AtomicPtr::new(ptr::null_mut()),
        polling: AtomicPtr::new(ptr::null_mut()),
    };
}

#[cfg(loom)]
fn room() -> &'static Room {
    &ROOM
}

/// Makes idle workers wait in `p` while goroutines wait on descriptors.
pub(crate) fn set_poller(p: &'static Poller) {
    room()
        .poller
        .store((p as *const Poller).cast_mut(), Ordering::Release);
}

fn poller() -> Option<&'static Poller> {
    // SAFETY: only set_poller stores here, a &'static.
    unsafe { room().poller.load(Ordering::Acquire).as_ref() }
}

/// How many goroutines wait on descriptors (the deadlock check: the
/// poller may still wake them).
pub(crate) fn io_waiters() -> usize {
    poller().map_or(0, |p| (p.waiting)())
}

/// For a worker that ran out of work: readies the goroutines whose
/// descriptors are ready, without blocking, unless another worker is
/// blocked in the poller (it readies them itself); whether any were.
pub(crate) fn poll_now() -> bool {
    match poller() {
        Some(p) => {
            (p.waiting)() > 0 && room().polling.load(Ordering::Relaxed).is_null() && (p.poll)(0) > 0
        }
        None => false,
    }
}

/// In a forked child: no worker is blocked in the poller.
pub(crate) fn forget_polling_after_fork() {
    room().polling.store(ptr::null_mut(), Ordering::SeqCst);
}

fn timeout_ms(t: Option<std::time::Duration>) -> i32 {
    match t {
        None => -1,
        // Rounded up: a poll that returns before the deadline blocks again.
        Some(d) => i32::try_from(d.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX),
    }
}
