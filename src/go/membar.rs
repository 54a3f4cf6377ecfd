//! An asymmetric fence, for a store-then-load handshake (Dekker's) whose
//! one side runs at every goroutine switch and the other rarely: a worker
//! ending a time slice stores that nothing runs and then loads the slice's
//! preemption request; sysmon stores a request and then loads what runs
//! (`preempt::request`). Each side needs its store ordered before its
//! load, which on x86-64 takes a locked instruction.
//!
//! The frequent side, [`light`], only keeps the compiler from reordering.
//! The rare side, [`heavy`], has the kernel run a full fence on every
//! processor running a thread of the process
//! (`membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`; a thread not running
//! passes through one when it is switched in). So either the store before
//! a `light` is visible to the load after a `heavy`, or the load after
//! that `light` sees the store before the `heavy`. [`register`] runs once
//! before the scheduler starts a thread; where the kernel refuses (older
//! than 4.14, a seccomp filter), both sides are full fences. A forked
//! child keeps the registration (Linux copies it with the address space).
//! A `heavy` costs a few microseconds (an interrupt to each processor
//! running the process's threads).
//!
//! Under loom both sides are `SeqCst` fences, which is what the kernel
//! promises of the pair.

#[cfg(not(loom))]
use std::sync::atomic::{AtomicU8, Ordering};

/// Whether `light` may be a compiler fence only: membarrier is registered.
#[cfg(not(loom))]
static STATE: AtomicU8 = AtomicU8::new(UNTRIED);
#[cfg(not(loom))]
const UNTRIED: u8 = 0;
#[cfg(not(loom))]
const REGISTERED: u8 = 1;
#[cfg(not(loom))]
const REFUSED: u8 = 2;

#[cfg(not(loom))]
fn membarrier(cmd: libc::c_int) -> bool {
    // SAFETY: membarrier reads and writes no memory of ours.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0, 0) == 0 }
}

/// Registers the process for [`heavy`]'s expedited membarrier. Before any
/// thread that calls [`light`] or [`heavy`] starts (the scheduler's
/// start); later calls do nothing.
#[cfg(not(loom))]
pub(crate) fn register() {
    if STATE.load(Ordering::Relaxed) != UNTRIED {
        return;
    }
    let ok = membarrier(libc::MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
    STATE.store(if ok { REGISTERED } else { REFUSED }, Ordering::Relaxed);
}

#[cfg(loom)]
pub(crate) fn register() {}

/// The frequent side: between a store and a load that must not pass it
/// unless the other side's [`heavy`] makes up for it.
#[cfg(not(loom))]
#[inline(always)]
pub(crate) fn light() {
    if STATE.load(Ordering::Relaxed) == REGISTERED {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    } else {
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

#[cfg(loom)]
pub(crate) fn light() {
    loom::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// The rare side: a full fence on this thread and on every thread of the
/// process that is running.
#[cfg(not(loom))]
pub(crate) fn heavy() {
    std::sync::atomic::fence(Ordering::SeqCst);
    if STATE.load(Ordering::Relaxed) == REGISTERED
        && !membarrier(libc::MEMBARRIER_CMD_PRIVATE_EXPEDITED)
    {
        // Refused after its registration (nothing this process does
        // causes it): from now on both sides are full fences. Until the
        // other side sees that, a request may stay set for a slice that
        // ended, cleared when its goroutine next runs.
        STATE.store(REFUSED, Ordering::Relaxed);
    }
    std::sync::atomic::fence(Ordering::SeqCst);
}

#[cfg(loom)]
pub(crate) fn heavy() {
    loom::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};

    /// Both threads arrive (the `n`th time) before either goes on.
    fn meet(arrived: &AtomicU64, n: u64) {
        arrived.fetch_add(1, SeqCst);
        while arrived.load(SeqCst) < 2 * n {
            std::hint::spin_loop();
        }
    }

    /// The store-buffering litmus test, seeded: each round two threads
    /// meet, wait a random few pauses, store their flag, and (after
    /// `light` on one side, `heavy` on the other) load the other's; both
    /// loading zero is what the pair forbids. Without `heavy` (a compiler
    /// fence in its place) x86-64 shows that outcome in some of the
    /// rounds.
    #[test]
    fn a_light_and_a_heavy_fence_order_a_store_before_a_load() {
        super::register();
        assert_eq!(
            super::STATE.load(Relaxed),
            super::REGISTERED,
            "membarrier is refused here: the test would check full fences"
        );
        let seed = crate::seeded::seed("DEFERGC_MEMBAR_SEED");
        println!("seed {seed} (DEFERGC_MEMBAR_SEED={seed} repeats it)");
        const ROUNDS: u64 = 20_000;
        let (x, y) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let arrived = AtomicU64::new(0);
        let seen = [AtomicUsize::new(0), AtomicUsize::new(0)];
        let both_zero = AtomicU64::new(0);
        std::thread::scope(|s| {
            for side in 0..2u64 {
                let (x, y, arrived, seen, both_zero) = (&x, &y, &arrived, &seen, &both_zero);
                s.spawn(move || {
                    let mut rng = crate::seeded::Rng((seed ^ side << 32) | 1);
                    for r in 1..=ROUNDS {
                        meet(arrived, 2 * r - 1);
                        for _ in 0..rng.below(64) {
                            std::hint::spin_loop();
                        }
                        let got = if side == 0 {
                            x.store(1, Relaxed);
                            super::light();
                            y.load(Relaxed)
                        } else {
                            y.store(1, Relaxed);
                            super::heavy();
                            x.load(Relaxed)
                        };
                        seen[side as usize].store(got, Relaxed);
                        meet(arrived, 2 * r);
                        if side == 0 {
                            if seen[0].load(Relaxed) == 0 && seen[1].load(Relaxed) == 0 {
                                both_zero.fetch_add(1, Relaxed);
                            }
                            x.store(0, Relaxed);
                            y.store(0, Relaxed);
                        }
                    }
                });
            }
        });
        let n = both_zero.load(Relaxed);
        println!("{n} of {ROUNDS} rounds saw neither store");
        assert_eq!(
            n, 0,
            "seed {seed}: {n} of {ROUNDS} rounds saw neither store"
        );
    }
}
