//! Preemption requests, the cooperative half: sysmon asks a goroutine
//! that has run one time slice too long to yield ([`request`]); the
//! goroutine honours the request at its next *preemption point* (its next
//! runtime call that can switch goroutines, or a poll point compiled code
//! put in a loop), by yielding to the back of the global queue as Go's
//! `gopreempt_m` does.
//!
//! A request is the goroutine's `preempt` flag (Go's `gp.preempt`), and
//! [`PENDING`] counts the flags set: a preemption point costs one load of
//! that word and a branch not taken while it is zero (almost always), and
//! only then looks at its own goroutine ([`check_slow`]). A request lives
//! for the time slice it was made for: the worker clears the flag when the
//! goroutine switches out, and again when it starts running (a request
//! that came too late, after the slice ended), so no request outlives its
//! slice and [`PENDING`] returns to zero. [`request`] also calls
//! [`signal_async`], the asynchronous half's entry (a signal that makes
//! the goroutine yield between two instructions), which does nothing yet
//! and says so.
//!
//! The points (besides [`check`] itself, the poll point, through
//! `defergc::go::preempt_point` and the C ABI's `DEFERGC_PREEMPT_POINT()`):
//! the blocking channel operations and select, the sync primitives' locks
//! and waits, `defergc_alloc` and `defergc_alloc_atomic`, `gosched` (a
//! yield anyway), and `exit_syscall`'s fast path (a goroutine that loops
//! on short system calls keeps its processor through them, so its time
//! slice grows as a computing one's does; Go asks it too). They are
//! entries of the public API (Rust and C) or places that may switch
//! anyway, never the runtime's internal uses, which may hold a lock. Go before 1.14 checked the same
//! request at every function prologue (the stack-bound check, with the
//! bound poisoned); a loop without calls never yielded. Go 1.14 added the
//! signal. Where signals cannot be used (or code is not known to be safe
//! to interrupt), a compiler puts the poll point at loop back-edges.

use super::g::{Switch, G};
use super::procs::{self, M};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Preemption requests pending (goroutines whose `preempt` flag is set):
/// the word compiled code's poll point loads. Non-zero while any request
/// is pending; it may read non-zero for a moment after the last one was
/// honoured, or wrap below zero for a moment while a request races its
/// clearing (either only sends a poll point to [`check_slow`] once more).
/// Exported for `DEFERGC_PREEMPT_POINT()` in `include/defergc.h`.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static defergc_preempt_pending: AtomicU32 = AtomicU32::new(0);

use defergc_preempt_pending as PENDING;

/// Requests made, and honoured (the goroutine yielded for one).
static REQUESTS: AtomicU64 = AtomicU64::new(0);
static HONOURED: AtomicU64 = AtomicU64::new(0);

/// Requests made and honoured since the process started.
pub(crate) fn counts() -> (u64, u64) {
    (
        REQUESTS.load(Ordering::Relaxed),
        HONOURED.load(Ordering::Relaxed),
    )
}

/// sysmon asks the goroutine `m` runs to yield (see the module docs).
pub(crate) fn request(m: &M) {
    let asked = flag(m);
    // The slice may have ended before the flag was set: the worker cleared
    // after it stopped running the goroutine (it stores `running`, then
    // loads the flag, with only a compiler fence between; this stored the
    // flag, then runs a fence on every running thread, then loads
    // `running`: `membar.rs`).
    super::membar::heavy_barrier();
    recheck(m, asked);
    signal_async(m);
}

/// Sets the request flag of the goroutine `m` runs, if any: which one.
fn flag(m: &M) -> Option<&'static G> {
    let g = m.scan.running.load(Ordering::SeqCst);
    // SAFETY: a running goroutine's header lives in its stack slot, which
    // stays mapped for the life of the process (a stale one is harmless:
    // the flag is cleared when it next runs).
    let g = unsafe { g.as_ref() }?;
    if !g.preempt.swap(true, Ordering::SeqCst) {
        PENDING.fetch_add(1, Ordering::SeqCst);
        REQUESTS.fetch_add(1, Ordering::Relaxed);
        super::trace::preempt_requested(g.id());
    }
    Some(g)
}

/// After [`flag`] and a heavy barrier: clears the request if `m` no
/// longer runs the goroutine asked.
fn recheck(m: &M, asked: Option<&'static G>) {
    if let Some(g) = asked {
        if !std::ptr::eq(m.scan.running.load(Ordering::SeqCst), g) {
            clear(g);
        }
    }
}

/// Asks every goroutine running on a processor to yield (Go's
/// `preemptall`): what a stop of the world does once it has claimed the
/// rest (`stw.rs`). One heavy barrier for up to [`AT_ONCE`] processors,
/// kept on the stack (a stopper allocates nothing here).
pub(crate) fn request_all() {
    const AT_ONCE: usize = 16;
    let Some(s) = super::procs::get() else { return };
    let mut running = s.ps().filter_map(|p| {
        if p.status.load(Ordering::Acquire) != super::procs::P_RUNNING {
            return None;
        }
        // SAFETY: workers are never freed.
        unsafe { p.m.load(Ordering::Acquire).as_ref() }
    });
    loop {
        let mut asked: [Option<(&M, Option<&'static G>)>; AT_ONCE] = [None; AT_ONCE];
        let mut n = 0;
        for m in running.by_ref().take(AT_ONCE) {
            asked[n] = Some((m, flag(m)));
            n += 1;
        }
        if n == 0 {
            return;
        }
        super::membar::heavy_barrier();
        for (m, g) in asked.into_iter().flatten() {
            recheck(m, g);
            signal_async(m);
        }
    }
}

/// The asynchronous half: interrupts `m`'s goroutine with a signal so that
/// it yields at once where that is safe (`async_preempt.rs`); whether a
/// signal was sent. Elsewhere the request waits for the goroutine's next
/// preemption point.
pub(crate) fn signal_async(m: &M) -> bool {
    super::async_preempt::signal(m)
}

/// Clears a request for `g` (its slice ended, or it is honoured); whether
/// there was one.
#[inline]
pub(crate) fn clear(g: &G) -> bool {
    if g.preempt.load(Ordering::SeqCst) && g.preempt.swap(false, Ordering::SeqCst) {
        PENDING.fetch_sub(1, Ordering::SeqCst);
        return true;
    }
    false
}

/// A preemption point: yields if the running goroutine was asked to.
/// One relaxed load and a branch while no request is pending.
#[inline(always)]
pub(crate) fn check() {
    if PENDING.load(Ordering::Relaxed) != 0 {
        check_slow();
    }
}

/// A request is pending somewhere: yields (to the global queue) if it is
/// this goroutine's and it holds a processor (not inside a system call).
#[cold]
#[inline(never)]
pub(crate) fn check_slow() {
    let Some(m) = procs::current_m() else { return };
    if m.p.get().is_null() {
        return;
    }
    // SAFETY: a worker's current goroutine lives while it runs.
    let Some(g) = (unsafe { m.current.get().as_ref() }) else {
        return;
    };
    honour(g);
}

/// If `g` (running, holding a processor) was asked to yield, it yields
/// now; whether it did.
pub(crate) fn honour(g: &G) -> bool {
    if !clear(g) {
        return false;
    }
    HONOURED.fetch_add(1, Ordering::Relaxed);
    g.switch_out(Switch::Preempt);
    true
}

/// A preemption point for loops that make no runtime call (Go's
/// cooperative check; see `DEFERGC_PREEMPT_POINT()` in the C header): if
/// sysmon asked the running goroutine to yield (it ran one time slice for
/// 10 ms), it yields here, to the back of the global queue. One load of a
/// shared word and a branch not taken while no request is pending
/// anywhere. Does nothing outside a goroutine, or between
/// [`enter_syscall`](super::enter_syscall) and
/// [`exit_syscall`](super::exit_syscall).
///
/// ```
/// use defergc::go;
/// # go::run(|| {
/// let mut x = 0u64;
/// for i in 0..1_000_000u64 {
///     x = x.wrapping_mul(31).wrapping_add(i);
///     go::preempt_point();
/// }
/// # std::hint::black_box(x);
/// # });
/// ```
#[inline(always)]
pub fn preempt_point() {
    check();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::go::{self, Chan};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    /// Starts the next of a chain of goroutines, each of which starts the
    /// next and ends: every slice ends with a goroutine's end.
    fn link(v: u64, last: u64, ran: Arc<AtomicU64>, done: Chan<u64>) {
        ran.fetch_add(1, Ordering::Relaxed);
        if v == last {
            done.send(v);
        } else {
            go::go(move || link(v + 1, last, ran, done));
        }
    }

    /// Seeded: a chain of goroutines each starts the next and ends (slices
    /// of about a microsecond), two chains at once, while a plain thread
    /// asks every processor's worker to preempt what it runs, as fast as
    /// it can. A request that lands as a slice ends is cleared by one side
    /// or the other (`membar.rs`); with neither side seeing the other's
    /// store, the flag stays on a goroutine that ended and the pending
    /// count with it. Once the chains are done none may be left. (It
    /// checks the flag's life, not the barrier pair, which `membar.rs`'s
    /// litmus test checks.)
    #[test]
    fn requests_racing_the_ends_of_slices_leave_none_pending() {
        let _one = go::ONE_RUN_IN_TESTS
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let seed = crate::seeded::seed("DEFERGC_PREEMPT_SEED");
        println!("seed {seed} (DEFERGC_PREEMPT_SEED={seed} repeats it)");
        const CHAINS: u64 = 2;
        const LENGTH: u64 = 100_000;
        let requests = Arc::new(AtomicU64::new(0));
        let r2 = requests.clone();
        let status = go::run(move || {
            let stop = Arc::new(AtomicBool::new(false));
            let ran = Arc::new(AtomicU64::new(0));
            let done = Chan::<u64>::new(CHAINS as usize);
            let asker = {
                let (stop, requests) = (stop.clone(), r2.clone());
                std::thread::spawn(move || {
                    let mut rng = crate::seeded::Rng(seed | 1);
                    let s = super::super::procs::get().expect("started");
                    while !stop.load(Ordering::Relaxed) {
                        for p in s.ps() {
                            // SAFETY: workers are never freed.
                            if let Some(m) = unsafe { p.m.load(Ordering::Acquire).as_ref() } {
                                super::request(m);
                                requests.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        for _ in 0..rng.below(32) {
                            std::hint::spin_loop();
                        }
                    }
                })
            };
            for _ in 0..CHAINS {
                let (ran, done) = (ran.clone(), done.clone());
                go::go(move || link(1, LENGTH, ran, done));
            }
            for _ in 0..CHAINS {
                assert_eq!(done.recv(), Some(LENGTH));
            }
            stop.store(true, Ordering::Relaxed);
            asker.join().expect("the asking thread");
            assert_eq!(
                ran.load(Ordering::Relaxed),
                CHAINS * LENGTH,
                "a link was lost"
            );
            // Every goroutine of the chains has ended, though the last
            // link's worker may not yet have cleared its flag (the send
            // that woke this one came first); this one's own flag is
            // cleared when its slice ends. A leaked request never is.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            let mut pending = super::PENDING.load(Ordering::SeqCst);
            while pending != 0 && std::time::Instant::now() < deadline {
                go::gosched();
                pending = super::PENDING.load(Ordering::SeqCst);
            }
            assert_eq!(pending, 0, "seed {seed}: {pending} requests left pending");
        });
        assert_eq!(status, 0);
        println!("{} requests", requests.load(Ordering::Relaxed));
    }
}
