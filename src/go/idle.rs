//! How an idle worker blocks and is woken: one primitive, "block until
//! woken or a deadline" ([`Parker::block`]), and its wake
//! ([`Parker::wake`]). The scheduler (`sched.rs`) decides when a worker
//! has nothing to do and parks it here; whoever hands it a processor wakes
//! it. A wake that comes before the block is kept (a flag the block
//! consumes), so none is lost between deciding to park and parking.
//!
//! The body is `std::thread::park` today; it is the one place a worker
//! waits for lack of work, so a poller (waiting on descriptors, woken
//! through a descriptor of its own) or a timer deadline takes its place
//! here without touching the run queues.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::Thread;
use std::time::Instant;

/// One worker's blocking point: owned by the worker, woken by any thread.
pub(crate) struct Parker {
    thread: Thread,
    /// Set by [`Parker::wake`], consumed by [`Parker::block`].
    woken: AtomicBool,
}

impl Parker {
    /// The parker of the calling thread (the only one that may block on
    /// it).
    pub(crate) fn for_current() -> Parker {
        Parker {
            thread: std::thread::current(),
            woken: AtomicBool::new(false),
        }
    }

    /// Blocks the calling thread (the parker's own) until [`Parker::wake`]
    /// was called, or `deadline` (if any) has passed. Returns whether it
    /// was woken; a wake is consumed by the block that sees it.
    pub(crate) fn block(&self, deadline: Option<Instant>) -> bool {
        loop {
            if self.woken.swap(false, Ordering::AcqRel) {
                return true;
            }
            match deadline {
                None => std::thread::park(),
                Some(at) => {
                    let now = Instant::now();
                    if now >= at {
                        return false;
                    }
                    std::thread::park_timeout(at - now);
                }
            }
        }
    }

    /// Wakes the parker's thread (or makes its next block return at once).
    pub(crate) fn wake(&self) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}
