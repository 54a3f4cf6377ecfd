//! The frame-pointer walk from inside a signal handler: a profiling
//! signal that interrupts a goroutine finds the goroutine's own frames.

use defergc::go;
use defergc::unwind::{walk_from, Regs, StackRange};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const DEPTH: usize = 32;

/// The walk the handler made: its addresses and how many.
static PCS: [AtomicUsize; DEPTH] = [const { AtomicUsize::new(0) }; DEPTH];
static FOUND: AtomicUsize = AtomicUsize::new(0);
/// The top of the part of the goroutine's stack the walk may read.
static STACK_HI: AtomicUsize = AtomicUsize::new(0);
/// The worker thread the goroutine spins on (a `pthread_t`).
static WORKER: AtomicUsize = AtomicUsize::new(0);
static SPINNING: AtomicBool = AtomicBool::new(false);
static WALKED: AtomicBool = AtomicBool::new(false);

/// The interrupted registers in a signal's ucontext.
///
/// # Safety
/// `ctx` is the ucontext a SA_SIGINFO handler was given.
unsafe fn regs(ctx: *mut libc::c_void) -> Regs {
    // SAFETY: as the contract says.
    let mc = unsafe { &(*ctx.cast::<libc::ucontext_t>()).uc_mcontext };
    #[cfg(target_arch = "x86_64")]
    let regs = Regs {
        pc: mc.gregs[libc::REG_RIP as usize] as usize,
        fp: mc.gregs[libc::REG_RBP as usize] as usize,
        sp: mc.gregs[libc::REG_RSP as usize] as usize,
    };
    #[cfg(target_arch = "aarch64")]
    let regs = Regs {
        pc: mc.pc as usize,
        fp: mc.regs[29] as usize,
        sp: mc.sp as usize,
    };
    regs
}

/// Async-signal-safe: walks into a buffer on its own stack and publishes
/// it through atomics.
extern "C" fn on_signal(_: libc::c_int, _: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: installed with SA_SIGINFO: ctx is the ucontext.
    let regs = unsafe { regs(ctx) };
    let stack = StackRange {
        lo: regs.sp,
        hi: STACK_HI.load(Ordering::Acquire),
    };
    let mut pcs = [0usize; DEPTH];
    let n = walk_from(regs, stack, &mut pcs);
    for (slot, &pc) in PCS.iter().zip(&pcs[..n]) {
        slot.store(pc, Ordering::Relaxed);
    }
    FOUND.store(n, Ordering::Relaxed);
    WALKED.store(true, Ordering::Release);
}

#[inline(never)]
fn spin_in_level3() {
    SPINNING.store(true, Ordering::Release);
    while !WALKED.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
}

#[inline(never)]
fn spin_in_level2() {
    spin_in_level3();
    std::hint::black_box(());
}

#[inline(never)]
fn spin_in_level1() {
    spin_in_level2();
    std::hint::black_box(());
}

/// The name of the function whose code holds `pc` (the byte before it
/// for a return address), not of those inlined into it there.
fn name_at(pc: usize, is_return: bool) -> String {
    let mut name = String::new();
    let at = if is_return { pc - 1 } else { pc };
    backtrace::resolve(at as *mut libc::c_void, |s| {
        name = s.name().map(|n| format!("{n:#}")).unwrap_or_default();
    });
    name
}

#[test]
fn a_profiling_signal_walks_the_interrupted_goroutines_frames() {
    // SAFETY: a zeroed sigaction is a valid start; the handler is
    // async-signal-safe, and the old action is put back.
    let old = unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_signal as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        let mut old: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(libc::SIGPROF, &act, &mut old), 0);
        old
    };
    let sender = std::thread::spawn(|| {
        while !SPINNING.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        let worker = WORKER.load(Ordering::Acquire) as libc::pthread_t;
        // SAFETY: the worker spins until the handler has run, so it lives.
        assert_eq!(unsafe { libc::pthread_kill(worker, libc::SIGPROF) }, 0);
    });
    let status = go::run(|| {
        let top = 0u8;
        // Everything the walk may read lies below this frame's locals.
        STACK_HI.store(
            std::hint::black_box(&top) as *const u8 as usize,
            Ordering::Release,
        );
        // SAFETY: pthread_self has no preconditions.
        WORKER.store(unsafe { libc::pthread_self() } as usize, Ordering::Release);
        spin_in_level1();
    });
    sender.join().unwrap();
    // SAFETY: puts back the action saved above.
    unsafe { libc::sigaction(libc::SIGPROF, &old, std::ptr::null_mut()) };
    assert_eq!(status, 0);

    let n = FOUND.load(Ordering::Relaxed);
    let names: Vec<String> = PCS[..n]
        .iter()
        .enumerate()
        .map(|(i, pc)| name_at(pc.load(Ordering::Relaxed), i > 0))
        .collect();
    let position = |f: &str| names.iter().position(|n| n.ends_with(f));
    let levels = [
        position("spin_in_level3"),
        position("spin_in_level2"),
        position("spin_in_level1"),
    ];
    assert!(
        levels.iter().all(Option::is_some) && levels.is_sorted(),
        "the walk found {names:#?}"
    );
    assert_eq!(levels[0], Some(0), "the interrupted pc first: {names:#?}");
}
