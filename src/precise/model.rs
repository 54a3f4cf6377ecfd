//! The parts of the collector that `tests/precise_loom.rs` runs under loom
//! (`--cfg loom` only): registered threads with their real state, their
//! safepoint polls, barriered stores and native-code declarations, and
//! the collector's [`mark_cycle`] (handshake rounds, the marking state,
//! grey queue and termination) over a heap the test models with a
//! [`Tracer`] of its own.

use super::access::{self, HandleSlot};
pub use super::collector::Tracer;
use super::mutator;

/// A registered thread, as a mutator of the model uses it: from one loom
/// thread at a time (its own while running; the collector's while it is
/// in native code).
pub struct Mutator(*const mutator::Mutator);

// SAFETY: the state is shared with the collector exactly as a registered
// thread's is (see mutator.rs); the test moves a Mutator to its thread.
unsafe impl Send for Mutator {}
// SAFETY: as above; the collector reaches it only through the registry.
unsafe impl Sync for Mutator {}

impl Mutator {
    /// Registers a new thread (born acknowledged, without root memory).
    pub fn register() -> Mutator {
        Mutator(mutator::enlist(crate::roots::precise::detached(), None))
    }

    fn state(&self) -> &mutator::Mutator {
        // SAFETY: alive from register until drop.
        unsafe { &*self.0 }
    }

    /// A safepoint poll.
    pub fn poll(&self) {
        mutator::poll(self.state());
    }

    /// Stores `raw` into `slot` through the write barrier.
    pub fn store(&self, slot: &impl HandleSlot, raw: u64) {
        access::barriered_store(self.state(), slot, raw);
    }

    /// Roots `raw` on the thread's shadow stack (in a new frame).
    pub fn root(&self, raw: u64) {
        // SAFETY: the running thread's own state, no other borrow live.
        let shadow = &mut unsafe { self.state().local() }.shadow;
        shadow.push_frame();
        let _ = shadow.root(raw);
    }

    /// Polls, then declares the thread in native code for good.
    pub fn enter_native(&self) {
        self.poll();
        mutator::declare_native(self.state());
    }
}

impl Drop for Mutator {
    fn drop(&mut self) {
        // Unregisters (performing a round it has not acknowledged) and
        // frees the state.
        let _ = mutator::unregister_state(self.state(), true);
    }
}

/// Runs steps 1 to 4 of a collection cycle (see `collector/`) on the
/// model heap `tracer`.
pub fn mark_cycle(id: u32, tracer: &mut impl Tracer) {
    super::collector::mark_cycle(id, tracer);
}
