//! An asymmetric pair of barriers, for store-then-load handshakes
//! (Dekker's) whose one side runs often and the other rarely: a worker
//! leaving a system call and the taker of its processor (`syscall.rs`),
//! a worker ending a time slice and sysmon asking it to preempt
//! (`preempt.rs`). Each side must order its store before its load, which
//! on x86-64 takes a locked instruction or a fence.
//!
//! The frequent side, [`light_barrier`], is a compiler barrier only. The
//! rare side, [`heavy_barrier`], is
//! `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`: the kernel makes every
//! running thread of the process execute a full memory barrier before it
//! returns (a thread not running passes through one when it is switched
//! in), so it acts as if each thread had a fence at some point of its own
//! execution (Linux's and liburcu's asymmetric fences rest on the same
//! guarantee). Either the store before a light barrier is visible to the
//! load after a heavy one, or the load after that light barrier sees the
//! store before the heavy one. [`use_membarrier`] registers the process
//! as the scheduler starts, before any worker exists, and again in a
//! forked child (which normally inherits it). Where `membarrier` is not
//! available (an old kernel, a seccomp filter), both barriers are full
//! fences. Under `cfg(loom)` both are fences (the models of `syscall.rs`
//! and `stw.rs` check the protocols with them).

use super::prim::fence;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the heavy barrier is `membarrier` (registered, see
/// [`use_membarrier`]) and the light one a compiler barrier.
static ASYMMETRIC: AtomicBool = AtomicBool::new(false);

/// Registers the process for expedited private `membarrier` and, if that
/// worked, makes the barriers asymmetric; whether they are. Called as the
/// scheduler starts, before any worker exists, and in a forked child
/// (whose only thread is the forking one): never while a thread may be
/// between a light barrier's two sides.
pub(crate) fn use_membarrier() -> bool {
    #[cfg(not(loom))]
    {
        // SAFETY: membarrier takes no pointer; a failure is a return value.
        let r = unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                libc::MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                0,
                0,
            )
        };
        ASYMMETRIC.store(r == 0, Ordering::SeqCst);
    }
    ASYMMETRIC.load(Ordering::SeqCst)
}

/// Whether the light barrier is a compiler barrier only (a worker's exit
/// from a system call uses no fence): the scheduler registered for
/// `membarrier`. False before the scheduler starts, and where `membarrier`
/// is not available (both sides then use full fences).
pub fn exit_without_fence() -> bool {
    ASYMMETRIC.load(Ordering::Relaxed)
}

/// The frequent side: a compiler barrier when the heavy side is
/// `membarrier`, else a full fence.
#[inline(always)]
pub(crate) fn light_barrier() {
    #[cfg(not(loom))]
    if ASYMMETRIC.load(Ordering::Relaxed) {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        return;
    }
    fence(Ordering::SeqCst);
}

/// The rare side: every running thread of the process executes a full
/// barrier before this returns (or, without `membarrier`, a full fence
/// here).
pub(crate) fn heavy_barrier() {
    fence(Ordering::SeqCst);
    #[cfg(not(loom))]
    if ASYMMETRIC.load(Ordering::Relaxed) {
        // SAFETY: membarrier takes no pointer; a failure is a return value.
        let r = unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                libc::MEMBARRIER_CMD_PRIVATE_EXPEDITED,
                0,
                0,
            )
        };
        if r != 0 {
            // Registered at start, so it cannot fail; if it did, the
            // light barriers would order nothing.
            crate::abort("defergc: membarrier failed after registration");
        }
    }
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
    /// the light barrier on one side, the heavy one on the other) load
    /// the other's; both loading zero is what the pair forbids. With a
    /// compiler barrier in the heavy one's place, x86-64 shows that
    /// outcome in some of the rounds.
    #[test]
    fn a_light_and_a_heavy_fence_order_a_store_before_a_load() {
        assert!(
            super::use_membarrier(),
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
                            super::light_barrier();
                            y.load(Relaxed)
                        } else {
                            y.store(1, Relaxed);
                            super::heavy_barrier();
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
