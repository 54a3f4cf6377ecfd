//! Asynchronous preemption's policy (Go's `preemptM`, `wantAsyncPreempt`,
//! `isAsyncSafePoint` and `asyncPreempt2`): asking a worker's goroutine
//! to yield with a signal, deciding in the handler whether the
//! interrupted instruction is a safe point, and yielding once it is. The
//! mechanism (the SIGURG entry, the table of compiled code, the entry
//! that saves every register) is `signal/preempt.rs`'s.
//!
//! # Requests
//!
//! [`signal`] records a request on the worker ([`WorkerPreempt`]'s
//! `pending`, an atomic the worker owns) and sends SIGURG to the worker's
//! thread (`tgkill`). Who asks, and when (sysmon, for a goroutine that ran
//! for 10 ms), is not this file's business. The request is taken when the
//! handler preempts; a refused one stays pending. Where there is no
//! asynchronous preemption (`GODEBUG=asyncpreemptoff=1`, or not x86-64
//! Linux) no signal is sent: the request stays recorded, and the
//! cooperative checks (the next runtime call that polls, [`take_request`])
//! honour it.
//!
//! # Safe points (decided in the handler, async-signal-safe)
//!
//! A SIGURG preempts only if all of these hold, else it is refused and
//! counted by [`Refusal`]:
//!
//! 1. the thread is a worker and a request is pending for it;
//! 2. its no-preemption count is zero (see [`NoPreempt`]);
//! 3. a goroutine runs on it, in status `RUNNING` (not in a system call)
//!    and the worker holds a processor;
//! 4. the interrupted stack pointer lies in the goroutine's stack (not
//!    the worker's own or its signal stack: the worker may be switching),
//!    with room for the entry's frame (red zone, registers, vector state)
//!    and [`RUNTIME_ROOM`] for the runtime's frames below it;
//! 5. the interrupted pc is compiled code (`signal::preempt`'s table):
//!    never the runtime, bdwgc, libc, the loader or the vDSO. Since the
//!    runtime's code is never interrupted, no runtime lock is held and no
//!    runtime structure is half-changed: a preempted goroutine is in the
//!    state a cooperative `gosched` from compiled code would leave.
//!
//! # Yielding ([`park`])
//!
//! The entry calls [`park`] with every register saved on the goroutine's
//! stack. It yields to the global queue (Go's `gopreempt_m`: behind
//! everything the processor queued), the worker runs another goroutine,
//! and it returns when the goroutine runs again, on whichever worker.
//!
//! # The collectors
//!
//! bdwgc scans a preempted goroutine as a parked one (design.md
//! invariant 6): from the stack pointer it switched out at, which lies
//! below the saved registers and vector state, up to its stack's top.
//!
//! The precise collector scans handles in shadow stacks and root memory,
//! never machine stacks: compiled code keeps its handles in the shadow
//! stack at its safepoints. A goroutine interrupted between two
//! instructions is not at one: a handle may live only in a register or
//! in a stack slot. So, before it yields, a preempted goroutine that is a
//! precise mutator copies its whole machine stack, from below its saved
//! registers and vector state to its top, into a root block of its own
//! (read word by word as candidate handles, like all root memory: the
//! precise heap never moves an object, so a conservative word cannot go
//! stale), and then performs a pending handshake itself. The copy stays
//! until the goroutine runs again. Hence a cycle never waits for a
//! spinning goroutine beyond its next preemption (each one acknowledges
//! the running round, and while it is switched out the collector acts
//! for it, design.md invariant 7), and never loses what it holds: its
//! registers and stack are in root memory at every round acknowledged
//! while it is preempted.
//!
//! # Compiled code's obligations
//!
//! A preempted goroutine may continue on another thread: compiled code
//! must not keep a thread-local address in a register across
//! instructions (the same rule as across any runtime call, invariant 10).
//! Signals interrupt system calls: the handler is installed with
//! `SA_RESTART`, but some calls return `EINTR` regardless.

use super::g::{self, G};
use super::procs::{current_g, current_m, M};
use super::stack;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Stack a preempted goroutine's runtime frames need below the entry's
/// frame: the yield, the switch, the precise collector's copy and
/// handshake.
pub(crate) const RUNTIME_ROOM: usize = 2 * stack::RED_ZONE;

/// A pending request (`prim.rs`'s atomics, so that
/// `tests/preempt_loom.rs` checks the real one): made by any thread, taken
/// by the worker (the handler that preempts, or a cooperative check). A
/// request is never lost: it is taken once, or stays pending; requests
/// made before a take are all answered by it.
pub(crate) struct Request(super::prim::AtomicBool);

impl Request {
    pub(crate) fn new() -> Request {
        Request(super::prim::AtomicBool::new(false))
    }

    /// Asks for a preemption (before the signal is sent, so the handler
    /// it reaches sees it).
    pub(crate) fn make(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether one is pending.
    pub(crate) fn pending(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Takes a pending request: true for the one taker of each.
    pub(crate) fn take(&self) -> bool {
        self.0
            .compare_exchange(true, false, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// A worker's preemption state (in its `M`).
pub(crate) struct WorkerPreempt {
    /// A request is pending: made by [`signal`], taken by the handler that
    /// preempts (or by [`take_request`]).
    pending: Request,
    /// While non-zero, the handler refuses ([`NoPreempt`]).
    no_preempt: AtomicU32,
    /// The worker thread's kernel id, for `tgkill`.
    tid: libc::pid_t,
}

impl WorkerPreempt {
    /// The state of a worker running on the calling thread.
    pub(crate) fn for_current_thread() -> WorkerPreempt {
        WorkerPreempt {
            pending: Request::new(),
            no_preempt: AtomicU32::new(0),
            // SAFETY: gettid has no preconditions.
            tid: unsafe { libc::gettid() },
        }
    }

    /// Drops a pending request (its time slice ended: the worker runs
    /// another goroutine next).
    pub(crate) fn forget(&self) {
        // A load first: a failed compare-exchange is a locked instruction
        // too, and at the end of each time slice there is mostly nothing
        // to take. A request made after the load stays pending, as one
        // made after the exchange would.
        if self.pending.pending() {
            self.pending.take();
        }
    }
}

/// Why a SIGURG did not preempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Refusal {
    /// Not a worker thread (a SIGURG the program sent elsewhere).
    NotWorker,
    /// No request pending for this worker.
    NotRequested,
    /// The worker's no-preemption count is non-zero.
    NoPreempt,
    /// No goroutine runs on the worker.
    NoGoroutine,
    /// The goroutine is not `RUNNING` (in a system call).
    NotRunning,
    /// The worker holds no processor.
    NoProcessor,
    /// The interrupted stack pointer is not in the goroutine's stack (the
    /// worker is switching, or on its signal stack).
    OffStack,
    /// The interrupted stack leaves no room for the entry and the
    /// runtime's frames.
    NoRoom,
    /// The interrupted pc is not compiled code.
    NotCompiledCode,
}

impl Refusal {
    /// Every reason, in counter order.
    pub const ALL: [Refusal; 9] = [
        Refusal::NotWorker,
        Refusal::NotRequested,
        Refusal::NoPreempt,
        Refusal::NoGoroutine,
        Refusal::NotRunning,
        Refusal::NoProcessor,
        Refusal::OffStack,
        Refusal::NoRoom,
        Refusal::NotCompiledCode,
    ];
}

/// Counters (statistics, and what the tests count).
static SENT: AtomicU64 = AtomicU64::new(0);
static PREEMPTED: AtomicU64 = AtomicU64::new(0);
static REFUSED: [AtomicU64; Refusal::ALL.len()] = [const { AtomicU64::new(0) }; Refusal::ALL.len()];

/// One worker in [`WORKERS`].
struct Worker {
    m: &'static M,
    next: *const Worker,
}

/// Every worker, for the tests' hook (a lock-free, append-only list:
/// workers never end, and a forked child's new workers register without
/// a lock a parent's thread may have held).
static WORKERS: AtomicPtr<Worker> = AtomicPtr::new(std::ptr::null_mut());

/// Registers a new worker (once, when it starts).
pub(crate) fn register_worker(m: &'static M) {
    let node = Box::leak(Box::new(Worker {
        m,
        next: std::ptr::null(),
    }));
    let mut head = WORKERS.load(Ordering::Acquire);
    loop {
        node.next = head;
        match WORKERS.compare_exchange_weak(head, node, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(h) => head = h,
        }
    }
}

/// Calls `f` with every worker.
#[cfg_attr(not(feature = "test-hooks"), allow(dead_code))]
fn each_worker(mut f: impl FnMut(&'static M)) {
    let mut at = WORKERS.load(Ordering::Acquire).cast_const();
    // SAFETY: nodes are leaked, and published complete by the push.
    while let Some(node) = unsafe { at.as_ref() } {
        f(node.m);
        at = node.next;
    }
}

/// Whether asynchronous preemption works here: x86-64 Linux, not turned
/// off by `GODEBUG=asyncpreemptoff=1`. The first call installs the
/// handler.
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        !crate::godebug::is_one("asyncpreemptoff")
            && crate::signal::preempt::install(crate::signal::preempt::Policy { decide, park })
    })
}

/// Asks `m`'s goroutine to yield: records the request, and sends SIGURG
/// to `m`'s thread. False when no signal was sent (preemption is off or
/// absent here): the request stays recorded for the cooperative checks.
/// sysmon calls it through `preempt::request`.
pub(crate) fn signal(m: &M) -> bool {
    m.preempt.pending.make();
    if !enabled() {
        return false;
    }
    // SAFETY: tgkill with our own process id and a live worker's thread
    // id (workers never end while the process runs).
    let sent = unsafe {
        libc::syscall(
            libc::SYS_tgkill,
            libc::getpid(),
            m.preempt.tid,
            crate::signal::preempt::SIGNAL,
        )
    } == 0;
    if sent {
        SENT.fetch_add(1, Ordering::Relaxed);
    }
    sent
}

/// Takes the calling worker's pending request, if any: for the
/// cooperative checks at runtime calls.
#[allow(dead_code)] // the cooperative checks (go/preempt.rs) call it
pub(crate) fn take_request() -> bool {
    current_m().is_some_and(|m| m.preempt.pending.take())
}

/// While one lives, the calling worker is never preempted asynchronously
/// (Go's `m.locks`): for runtime sections that call compiled code while
/// they hold runtime state. None exists today: runtime code that calls
/// compiled code (a goroutine's body, a deferred call) already lets it
/// yield at any runtime call.
#[allow(dead_code)] // the tests' hook uses it; runtime sections may
pub(crate) struct NoPreempt(&'static M);

impl NoPreempt {
    /// Starts a no-preemption section on the calling worker (None on
    /// other threads, which are never preempted).
    #[allow(dead_code)]
    pub(crate) fn enter() -> Option<NoPreempt> {
        let m = current_m()?;
        m.preempt.no_preempt.fetch_add(1, Ordering::SeqCst);
        Some(NoPreempt(m))
    }
}

impl Drop for NoPreempt {
    fn drop(&mut self) {
        self.0.preempt.no_preempt.fetch_sub(1, Ordering::SeqCst);
    }
}

fn refuse(why: Refusal) -> bool {
    REFUSED[why as usize].fetch_add(1, Ordering::Relaxed);
    false
}

/// The safe-point decision, in the SIGURG handler (see the module docs).
/// Async-signal-safe: a `const` thread-local, atomics, and fields of the
/// worker that only this thread writes (it is the interrupted thread).
fn decide(pc: usize, sp: usize) -> bool {
    let Some(m) = current_m() else {
        return refuse(Refusal::NotWorker);
    };
    let wp = &m.preempt;
    if !wp.pending.pending() {
        return refuse(Refusal::NotRequested);
    }
    if wp.no_preempt.load(Ordering::Acquire) != 0 {
        return refuse(Refusal::NoPreempt);
    }
    // SAFETY: the interrupted thread's own cells, read on that thread.
    let (g, p) = unsafe {
        (
            m.current.as_ptr().read_volatile(),
            m.p.as_ptr().read_volatile(),
        )
    };
    // SAFETY: a worker's current goroutine lives while it runs there.
    let Some(g) = (unsafe { g.as_ref() }) else {
        return refuse(Refusal::NoGoroutine);
    };
    if g.state() != g::RUNNING {
        return refuse(Refusal::NotRunning);
    }
    if p.is_null() {
        return refuse(Refusal::NoProcessor);
    }
    let geometry = stack::geometry();
    let (lo, hi) = (g.slot.lo(&geometry), g.slot.hi(&geometry));
    if sp < lo || sp > hi {
        return refuse(Refusal::OffStack);
    }
    if sp - lo < crate::signal::preempt::entry_frame() + RUNTIME_ROOM {
        return refuse(Refusal::NoRoom);
    }
    if !crate::signal::preempt::in_compiled_code(pc) {
        return refuse(Refusal::NotCompiledCode);
    }
    // Taken: a request made from here on asks for the next preemption.
    // Only the handler and the cooperative check (this thread) take one.
    wp.pending.take()
}

/// Called by the preemption entry, every register saved (see the module
/// docs). A Rust panic here would cross the entry: it aborts instead.
extern "C" fn park() {
    let yielded = std::panic::catch_unwind(|| {
        let Some(g) = current_g() else { return };
        PREEMPTED.fetch_add(1, Ordering::Relaxed);
        // Kept until the goroutine runs again.
        let _held = PreciseHold::take(g);
        super::sched::preempted(g);
    });
    if yielded.is_err() {
        crate::abort("defergc: a panic while a goroutine yielded to asynchronous preemption");
    }
}

/// What a preempted goroutine holds, in root memory while it is switched
/// out (see the module docs): its machine stack, registers included.
#[cfg(feature = "precise")]
struct PreciseHold(Option<std::ptr::NonNull<u8>>);

#[cfg(feature = "precise")]
impl PreciseHold {
    /// Copies the running goroutine `g`'s stack, from here to its top,
    /// into a root block, then acknowledges a pending handshake; nothing
    /// if the goroutine is not a precise mutator (or in native code).
    fn take(g: &G) -> PreciseHold {
        if !crate::precise::is_thread_registered() {
            return PreciseHold(None);
        }
        let geometry = stack::geometry();
        let from = g::approximate_sp() & !7;
        let to = g.slot.hi(&geometry);
        let len = to.saturating_sub(from);
        let block = crate::roots::alloc_block(len.max(8));
        // SAFETY: [from, to) is the live part of the running goroutine's
        // own stack, readable; the block has len bytes.
        unsafe { std::ptr::copy_nonoverlapping(from as *const u8, block.as_ptr(), len) };
        // In native code the collector acts for it anyway.
        let _ = crate::precise::safepoint();
        PreciseHold(Some(block))
    }
}

#[cfg(feature = "precise")]
impl Drop for PreciseHold {
    fn drop(&mut self) {
        if let Some(block) = self.0.take() {
            // SAFETY: the block take allocated, referenced nowhere else.
            unsafe { crate::roots::free_block(block) };
        }
    }
}

#[cfg(not(feature = "precise"))]
struct PreciseHold;

#[cfg(not(feature = "precise"))]
impl PreciseHold {
    fn take(_g: &G) -> PreciseHold {
        PreciseHold
    }
}

/// Declares `[start, start + len)` compiled code that may be preempted
/// asynchronously, beside the executable's own (see `signal/preempt.rs`):
/// code a compiler loads itself, or a shared library of compiled code.
/// False if the range is empty or wraps, or too many are registered
/// (64).
pub fn preempt_text(start: usize, len: usize) -> bool {
    crate::signal::preempt::register_text(start, len)
}

/// Counts of asynchronous preemption since the process started.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreemptCounts {
    /// Signals sent by requests.
    pub sent: u64,
    /// Goroutines preempted (each one yield).
    pub preempted: u64,
    /// Signals refused, by [`Refusal`] (in [`Refusal::ALL`]'s order).
    pub refused: [u64; Refusal::ALL.len()],
}

impl PreemptCounts {
    /// The count of one reason.
    pub fn refused(&self, why: Refusal) -> u64 {
        self.refused[why as usize]
    }
}

/// Whether goroutines are preempted asynchronously in this process:
/// x86-64 Linux, and not turned off by `GODEBUG=asyncpreemptoff=1`.
/// Elsewhere, only the cooperative checks honour requests.
pub fn async_preemption() -> bool {
    enabled()
}

/// The counters of asynchronous preemption.
pub fn preempt_counts() -> PreemptCounts {
    let mut refused = [0; Refusal::ALL.len()];
    for (r, c) in refused.iter_mut().zip(REFUSED.iter()) {
        *r = c.load(Ordering::Relaxed);
    }
    PreemptCounts {
        sent: SENT.load(Ordering::Relaxed),
        preempted: PREEMPTED.load(Ordering::Relaxed),
        refused,
    }
}

/// Hooks for this crate's tests (feature `test-hooks`): requests sent by
/// hand, where sysmon will send them.
#[cfg(feature = "test-hooks")]
pub mod hooks {
    use super::*;

    /// Requests preemption of every worker that runs a goroutine now;
    /// returns how many requests were made (signals sent are counted in
    /// [`preempt_counts`]).
    pub fn signal_running() -> usize {
        let mut requested = 0;
        each_worker(|m| {
            if !m.scan.running.load(Ordering::Acquire).is_null() {
                signal(m);
                requested += 1;
            }
        });
        requested
    }

    /// Whether asynchronous preemption is on (installs it).
    pub fn enabled() -> bool {
        super::enabled()
    }

    /// Whether `pc` is compiled code to the handler (installs it).
    pub fn is_compiled_code(pc: usize) -> bool {
        super::enabled() && crate::signal::preempt::in_compiled_code(pc)
    }

    /// Runs `f` with the calling worker's no-preemption count raised.
    pub fn without_preemption<R>(f: impl FnOnce() -> R) -> R {
        let _section = NoPreempt::enter();
        f()
    }
}
