//! The goroutine: its struct (Go's `g`), its coroutine, and the switches
//! out of it (yield, park, exit).
//!
//! A goroutine's struct lives in the header at the top of its stack slot
//! (`stack.rs`), so a parked goroutine costs one touched page when its
//! frames fit. It holds the goroutine's execution context (id, defer chain,
//! and whatever other layers keep per context), its status, the stack
//! pointer it switched out at (where the collector's scan of its stack
//! begins), its goroutine-local words, and what the scheduler needs to run
//! it and to say why it waits.
//!
//! # Status
//!
//! `RUNNABLE` (in a run queue, or about to be), `RUNNING` (on a worker),
//! `WAITING` (parked), `DEAD` (finished, its slot free or about to be). A
//! goroutine in a system call stays `RUNNING`: its worker holds no
//! processor then (`syscall.rs`), which is what says so, and the status
//! word is not touched on that path. The
//! [`NOTIFIED`] bit records a [`ready`](super::sched::ready) that came
//! before the goroutine finished parking: its park then returns at once
//! (token semantics, like a futex wake before the wait). The status word's
//! high half is the goroutine's *tag* (the low half of its id): a handle
//! kept past the goroutine's end carries the old tag, so it can never
//! wake the goroutine that reuses the slot.
//!
//! Only the goroutine itself moves `RUNNING` to `WAITING`, and only after
//! it switched out (on the worker's own stack), so a waker that sees
//! `WAITING` may queue it at once: its stack is no longer in use.

use super::stack::{self, Slot, RED_ZONE};
use crate::context::Context;
use corosensei::stack::{Stack, StackPointer};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

pub(crate) const RUNNABLE: u64 = 1;
pub(crate) const RUNNING: u64 = 2;
pub(crate) const WAITING: u64 = 3;
pub(crate) const DEAD: u64 = 5;
/// A wakeup that arrived before the goroutine parked.
pub(crate) const NOTIFIED: u64 = 0x100;
/// The state bits of the status word.
pub(crate) const STATE_MASK: u64 = 0xff;
/// The state and notification bits (the rest is the tag).
pub(crate) const LOW_MASK: u64 = 0xffff_ffff;

/// The tag of goroutine `id` in its status word.
#[inline]
pub(crate) fn tag_of(id: u64) -> u64 {
    id << 32
}

/// Goroutine-local words: GC roots (in the scanned header).
pub(crate) const LOCALS: usize = 8;
/// Argument bytes kept in the header; larger arguments go to root memory.
pub(crate) const INLINE_ARGS: usize = 128;

/// Why a goroutine switched out to its worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Switch {
    /// `gosched`: runnable again at once.
    Yield,
    /// Parking: the worker moves it to `WAITING` (unless notified), then
    /// runs its unlock action.
    Park,
    /// Leaving for a system call's slow return: queue it, stop the worker.
    SyscallExit,
    /// Honouring a preemption request (`preempt.rs`, or a signal's:
    /// `async_preempt.rs`): runnable again, at the back of the global
    /// queue (Go's `gopreempt_m`), so that a processor's own queue runs
    /// first.
    Preempt,
}

/// Something the worker runs right after a goroutine parked (Go's unlockf):
/// typically releases the lock that protects the wait queue it joined.
#[derive(Clone, Copy)]
pub(crate) struct Unlock {
    pub(crate) f: unsafe fn(*mut u8),
    pub(crate) arg: *mut u8,
}

/// A stack the coroutine runs on: a slot of the pool, owned by the pool.
pub(crate) struct SlotStack {
    base: StackPointer,
    limit: StackPointer,
}

// SAFETY: base and limit bound the slot's usable stack, which stays mapped
// for the life of the process. The guard zone below it exists where the
// kernel or the map budget allows (stack.rs); elsewhere the canary checked
// at every switch stands in for it (a deviation from corosensei's
// contract, which asks for a guard page: an overflow past the canary into
// the slot below is detected at the next switch, not prevented).
unsafe impl Stack for SlotStack {
    fn base(&self) -> StackPointer {
        self.base
    }

    fn limit(&self) -> StackPointer {
        self.limit
    }
}

pub(crate) type Co = Coroutine<(), Switch, (), SlotStack>;

/// A goroutine (see the module docs).
#[repr(C)]
pub(crate) struct G {
    /// Its execution context: id, defer chain, other layers' states.
    pub(crate) ctx: Context,
    pub(crate) slot: Slot,
    /// Tag (high half), NOTIFIED and the state (see the module docs).
    pub(crate) status: AtomicU64,
    /// The stack pointer it last switched out at (its stack's top before
    /// it first runs). Its stack is scanned from here, less a margin for
    /// the registers the switch pushed.
    pub(crate) sp: AtomicUsize,
    /// Where a collection found it running (see `scan.rs`), and which
    /// scan that was.
    pub(crate) stopped_sp: AtomicUsize,
    pub(crate) stopped_epoch: AtomicU64,
    /// The lowest stack pointer seen, for clearing the slot at reuse.
    pub(crate) low: Cell<usize>,
    /// Its coroutine (None once finished).
    pub(crate) co: UnsafeCell<Option<Co>>,
    /// Its yielder, on its own stack (valid while the coroutine lives).
    yielder: Cell<*const Yielder<(), Switch>>,
    /// What the worker runs after it parked.
    pub(crate) unlock: Cell<Option<Unlock>>,
    /// Why it waits, for the goroutine list of a report ("chan receive").
    pub(crate) wait_reason: Cell<&'static str>,
    /// Its frame pointer where it last switched out (0 before it first
    /// ran): where a dump walks its parked stack from (`dump.rs`).
    pub(crate) fp: AtomicUsize,
    /// Times it switched out (written by the goroutine only, after `fp`):
    /// a dump that read its stack checks that this did not move, as a
    /// sequence lock's reader does (`dump.rs`).
    pub(crate) switches: super::prim::AtomicU64,
    /// When it last parked (`dump::coarse_now`: the coarse clock, whose
    /// milliseconds are plenty for a count of minutes): a dump's "N
    /// minutes" (Go's `waitsince`).
    pub(crate) waitsince: AtomicU64,
    /// The return address into the function whose `go` started it, and
    /// the id of the goroutine that ran it (0: not a goroutine): a dump's
    /// `created by` line.
    pub(crate) created_pc: usize,
    pub(crate) creator: u64,
    /// Goroutine-local words: scanned with the header.
    pub(crate) locals: [Cell<usize>; LOCALS],
    /// Argument bytes of a C goroutine (scanned with the header).
    pub(crate) args: UnsafeCell<[u64; INLINE_ARGS / 8]>,
    /// The run-queue link of the scheduler's intrusive lists.
    pub(crate) schedlink: Cell<*const G>,
    /// Whether this is the main goroutine of `go::run`.
    pub(crate) is_main: Cell<bool>,
    /// A preemption request for its current time slice (`preempt.rs`).
    pub(crate) preempt: AtomicBool,
    /// Between `enter_syscall` and `exit_syscall` (its status stays
    /// `RUNNING`): what a dump prints as `syscall`. Written by the
    /// goroutine only, with plain stores.
    pub(crate) in_syscall: AtomicBool,
    /// Where it entered its system call: the frame record of the
    /// function that entered it (`unwind::caller_frame`: the caller's
    /// stack pointer, its frame pointer and the return address into it),
    /// which stays as it is while the call lasts, and the worker that
    /// makes the call; what a dump with the world stopped walks and
    /// names. Written before the call's entry is published.
    pub(crate) syscall_sp: AtomicUsize,
    pub(crate) syscall_fp: AtomicUsize,
    pub(crate) syscall_pc: AtomicUsize,
    pub(crate) syscall_m: AtomicUsize,
    /// While a trace is taken: the time of the event that last queued it
    /// (its creation or unblocking), written before it is queued (see
    /// `trace::slice_start`).
    pub(crate) trace_queued: AtomicU64,
    /// The worker (`procs::M`) it is locked to (`LockOSThread`), or null:
    /// set and cleared by the goroutine itself, read by the worker that
    /// takes it from a run queue (the queue orders the two).
    pub(crate) locked_m: AtomicPtr<()>,
    /// Its `LockOSThread` nesting count (Go's external count): touched by
    /// the goroutine itself only.
    pub(crate) lock_count: Cell<u32>,
    /// Goroutines it started (saturating; touched by the goroutine
    /// itself only): whether its `go` statements are a loop's (see
    /// `sched::yield_if_far_ahead`).
    pub(crate) spawned: Cell<u32>,
}

/// Bytes a goroutine's header takes at the top of its slot.
pub(crate) const HEADER: usize = std::mem::size_of::<G>();

/// Lines of a parked goroutine's stack asked for before it resumes: the
/// switch's saved registers and the frames of the park and its caller
/// (`million`: 12 lines and 32 gave the same time).
const RESUME_LINES: usize = 12;

impl G {
    /// Asks the processor for the lines of `g`'s header that running it
    /// reads first (a hint: `g` may be any goroutine's address, live or
    /// not, as a peek at a run queue gives it).
    #[inline]
    pub(crate) fn prefetch_header(g: *const G) {
        // Only addresses are computed (nothing is read); headers stay
        // mapped for the life of the process, and a prefetch of any
        // address is harmless.
        crate::cache::prefetch(g.wrapping_byte_add(std::mem::offset_of!(G, locked_m)));
        crate::cache::prefetch(g.wrapping_byte_add(std::mem::offset_of!(G, status)));
    }

    /// Asks for the lines a resumed goroutine reads first: its saved
    /// stack, [`RESUME_LINES`] lines from its stack pointer up (below its
    /// header). Reads `g`'s saved stack pointer, so `g`'s header should
    /// have been asked for earlier ([`prefetch_header`](Self::prefetch_header)).
    /// A hint, as `prefetch_header`: `g` may be any goroutine's address.
    #[inline]
    pub(crate) fn prefetch_stack(g: *const G) {
        // SAFETY: headers stay mapped for the life of the process, and
        // `sp` is an atomic: a stale or reused header gives a wrong
        // address, which is only prefetched.
        let sp = unsafe { (*g).sp.load(Ordering::Relaxed) };
        let mut line = sp & !63;
        for _ in 0..RESUME_LINES {
            if line >= g as usize {
                break;
            }
            crate::cache::prefetch(line as *const u8);
            line += 64;
        }
    }

    /// The goroutine whose header sits at the top of `slot`.
    ///
    /// # Safety
    /// `slot` holds a goroutine (initialised by [`G::init`]).
    pub(crate) unsafe fn of(slot: Slot, g: &stack::Geometry) -> &'static G {
        // SAFETY: the caller guarantees an initialised header there.
        unsafe { &*(slot.hi(g) as *const G) }
    }

    /// Builds a goroutine in `slot` that runs `body`, status `RUNNABLE`.
    /// The closure is written at the top of the goroutine's own stack (so
    /// whatever it captured is scanned with it until it runs).
    pub(crate) fn init<F: FnOnce() + 'static>(
        slot: Slot,
        geometry: &stack::Geometry,
        created: (usize, u64),
        body: F,
    ) -> &'static G {
        let at = slot.hi(geometry) as *mut G;
        let stack = SlotStack {
            // The usable stack: from above the canary to the header.
            base: StackPointer::new(slot.hi(geometry)).expect("non-null"),
            limit: StackPointer::new(slot.lo(geometry)).expect("non-null"),
        };
        let ctx = Context::new();
        ctx.set_boundary();
        let tag = tag_of(ctx.id());
        let header = G {
            ctx,
            slot,
            status: AtomicU64::new(tag | RUNNABLE),
            // Below the closure the coroutine's stack starts with.
            sp: AtomicUsize::new(
                (slot.hi(geometry) - std::mem::size_of::<F>() - 256).max(slot.lo(geometry)),
            ),
            stopped_sp: AtomicUsize::new(0),
            stopped_epoch: AtomicU64::new(u64::MAX),
            low: Cell::new(slot.hi(geometry)),
            co: UnsafeCell::new(None),
            yielder: Cell::new(std::ptr::null()),
            unlock: Cell::new(None),
            wait_reason: Cell::new(""),
            fp: AtomicUsize::new(0),
            switches: super::prim::AtomicU64::new(0),
            waitsince: AtomicU64::new(0),
            created_pc: created.0,
            creator: created.1,
            locals: [const { Cell::new(0) }; LOCALS],
            args: UnsafeCell::new([0; INLINE_ARGS / 8]),
            schedlink: Cell::new(std::ptr::null()),
            is_main: Cell::new(false),
            preempt: AtomicBool::new(false),
            in_syscall: AtomicBool::new(false),
            syscall_sp: AtomicUsize::new(0),
            syscall_fp: AtomicUsize::new(0),
            syscall_pc: AtomicUsize::new(0),
            syscall_m: AtomicUsize::new(0),
            trace_queued: AtomicU64::new(0),
            locked_m: AtomicPtr::new(std::ptr::null_mut()),
            lock_count: Cell::new(0),
            spawned: Cell::new(0),
        };
        // Written but for the preemption flag: a request for the slot's
        // last goroutine may have set it after that one ended (sysmon read
        // it as running, then set its flag). The count of pending requests
        // has it, so it stays set until a `clear` takes it (the asker's own,
        // or this goroutine's first time slice's) and the count with it;
        // overwritten, the count would stay up for good (every poll point
        // then takes the slow path). `give_back` keeps it for the same
        // reason. A fresh slot's is zero.
        let flag = std::mem::offset_of!(G, preempt);
        let (src, dst) = ((&raw const header).cast::<u8>(), at.cast::<u8>());
        // SAFETY: the header area belongs to this slot, which is ours; a G
        // fits (the geometry reserved HEADER bytes). The two copies write
        // every byte of the header but the flag's (an `AtomicBool`, one
        // byte), which only atomic operations touch; `header` is moved
        // into place by them and not dropped.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, flag);
            std::ptr::copy_nonoverlapping(
                src.add(flag + 1),
                dst.add(flag + 1),
                std::mem::size_of::<G>() - flag - 1,
            );
        }
        std::mem::forget(header);
        // SAFETY: just written; lives until the slot is given back.
        let g: &'static G = unsafe { &*at };
        let g_addr = at as usize;
        let co = Coroutine::with_stack(stack, move |yielder: &Yielder<(), Switch>, ()| {
            // SAFETY: the goroutine outlives its coroutine's run.
            let g = unsafe { &*(g_addr as *const G) };
            g.yielder.set(yielder);
            body();
        });
        // SAFETY: only the thread running or creating the goroutine
        // touches its coroutine.
        unsafe { *g.co.get() = Some(co) };
        g
    }

    /// The goroutine's id (its context's).
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.ctx.id()
    }

    pub(crate) fn state(&self) -> u64 {
        self.status.load(Ordering::Acquire) & STATE_MASK
    }

    /// This goroutine's tag in its status word.
    #[inline]
    pub(crate) fn tag(&self) -> u64 {
        tag_of(self.id())
    }

    /// Runs the goroutine on this thread until it switches out; returns
    /// why, or `None` when it finished. Called by its worker only.
    pub(crate) fn resume(&self) -> Option<Switch> {
        // SAFETY: the worker that resumes a goroutine is the only thread
        // touching its coroutine until it switches out again.
        let co = unsafe { &mut *self.co.get() };
        let result = co.as_mut().expect("a live coroutine").resume(());
        match result {
            CoroutineResult::Yield(why) => Some(why),
            CoroutineResult::Return(()) => {
                *co = None;
                None
            }
        }
    }

    /// Switches out to the worker (on the goroutine's own stack).
    pub(crate) fn switch_out(&self, why: Switch) {
        let sp = approximate_sp();
        self.fp
            .store(crate::unwind::frame_pointer(), Ordering::Relaxed);
        super::dump::seq::count_switch(&self.switches);
        self.sp.store(sp, Ordering::Release);
        #[cfg(test)]
        super::scan::tests::paint_below(sp);
        if sp < self.low.get() {
            self.low.set(sp);
        }
        let yielder = self.yielder.get();
        // SAFETY: the yielder lives on this goroutine's stack, which is the
        // one running (a goroutine switches only itself out).
        unsafe { (*yielder).suspend(why) };
    }

    /// Whether its stack is intact at `sp` (the canary and room for a
    /// switch): checked at every switch out.
    pub(crate) fn stack_intact(&self, geometry: &stack::Geometry) -> bool {
        let sp = self.sp.load(Ordering::Relaxed);
        self.slot.intact(geometry, sp.saturating_sub(RED_ZONE / 4))
    }
}

/// The current stack pointer, roughly (a local's address: the callee
/// frames of the switch lie below it, within `stack::RED_ZONE`).
#[inline(always)]
pub(crate) fn approximate_sp() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}
