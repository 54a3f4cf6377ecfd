//! The collectors see every goroutine's stack (design.md invariant 6).
//!
//! bdwgc stops each registered thread and scans from its stopped stack
//! pointer up to the thread's own stack base. A worker that runs a
//! goroutine is stopped with its stack pointer on the goroutine's stack,
//! so the [`correct`] hook (bdwgc's stack-pointer corrector, called for
//! each thread while the world is stopped) records that pointer in the
//! goroutine (`stopped_sp`, with this scan's epoch) and moves the worker's
//! own scan to where its scheduler loop left its own stack (`g0_sp`, set
//! when the worker started, below every frame the loop keeps). Then
//! [`push_goroutines`] scans each live goroutine's stack: from where the
//! collection found it running, or else from the stack pointer it last
//! switched out at (less [`SWITCH_MARGIN`] for the registers and frames
//! of the switch below it), up to the end of its slot, header included
//! (its locals, its C arguments).
//!
//! A worker can be stopped at any instruction of a switch. Before the
//! stack pointer moves to the goroutine's stack (and after it moved back)
//! the worker is scanned as usual from its own stack pointer, and the
//! goroutine from its saved one, which is exact then: it was written
//! before the goroutine switched out and nothing ran on its stack since.
//! While the stack pointer is on the goroutine's stack, the corrector sees
//! it there: `running` is set before the switch in and cleared after the
//! switch out.
//!
//! Everything here is read with the world stopped, without locks: workers
//! are an append-only list, live goroutines a bitmap of stack slots
//! (`stack.rs`).

use super::g::G;
use super::stack;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// Bytes scanned below a parked goroutine's saved stack pointer: the
/// switch's own frames and the registers they saved.
const SWITCH_MARGIN: usize = 512;

/// What the collector reads of one worker thread.
pub(crate) struct WorkerScan {
    /// The worker's `pthread_t`.
    thread: usize,
    /// Where bdwgc scans the worker's own stack from while it runs a
    /// goroutine.
    g0_sp: AtomicUsize,
    /// The goroutine running on the worker (set before switching to its
    /// stack, cleared after switching back), or null.
    pub(crate) running: AtomicPtr<G>,
    next: *const WorkerScan,
}

// SAFETY: written once before publication, except for the atomics.
unsafe impl Sync for WorkerScan {}

impl WorkerScan {
    /// Sets where the worker's own stack is scanned from while it runs a
    /// goroutine (below every frame of its scheduler loop).
    pub(crate) fn set_g0_sp(&self, sp: usize) {
        self.g0_sp.store(sp, Ordering::Release);
    }
}

static WORKERS: AtomicPtr<WorkerScan> = AtomicPtr::new(ptr::null_mut());
/// Counts the collector's scans: a goroutine's `stopped_sp` belongs to the
/// scan whose epoch it carries.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Hooks the goroutine stacks into bdwgc (once, at scheduler start).
pub(crate) fn install() {
    crate::gc::scan::set_stack_corrector(correct);
    crate::gc::scan::add_root_pusher(push_goroutines);
}

/// Registers the calling thread as a worker (once per worker; never
/// removed).
pub(crate) fn register_worker() -> &'static WorkerScan {
    // SAFETY: pthread_self has no preconditions.
    let thread = unsafe { libc::pthread_self() } as usize;
    let w = Box::leak(Box::new(WorkerScan {
        thread,
        g0_sp: AtomicUsize::new(0),
        running: AtomicPtr::new(ptr::null_mut()),
        next: ptr::null(),
    }));
    let mut head = WORKERS.load(Ordering::Acquire);
    loop {
        w.next = head;
        match WORKERS.compare_exchange_weak(head, w, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return w,
            Err(h) => head = h,
        }
    }
}

/// bdwgc's stack-pointer corrector (world stopped, allocation lock held).
fn correct(thread: usize, sp: &mut usize) {
    let mut w = WORKERS.load(Ordering::Acquire);
    // SAFETY: workers are leaked: every node stays valid.
    while let Some(worker) = unsafe { w.as_ref() } {
        if worker.thread == thread {
            // SAFETY: a running goroutine's header lives while it runs.
            if let Some(g) = unsafe { worker.running.load(Ordering::Acquire).as_ref() } {
                let geometry = stack::geometry();
                if *sp >= g.slot.start && *sp < g.slot.end(&geometry) {
                    g.stopped_sp.store(*sp, Ordering::Relaxed);
                    g.stopped_epoch
                        .store(EPOCH.load(Ordering::Relaxed), Ordering::Relaxed);
                    *sp = worker.g0_sp.load(Ordering::Acquire);
                }
            }
            return;
        }
        w = worker.next.cast_mut();
    }
}

/// bdwgc's root pusher for goroutine stacks (world stopped).
fn push_goroutines() {
    let geometry = stack::geometry();
    let epoch = EPOCH.load(Ordering::Relaxed);
    stack::for_each_live(|slot| {
        // SAFETY: a live slot holds an initialised goroutine header.
        let g = unsafe { G::of(slot, &geometry) };
        let from = if g.stopped_epoch.load(Ordering::Relaxed) == epoch {
            g.stopped_sp.load(Ordering::Relaxed)
        } else {
            g.sp.load(Ordering::Relaxed).saturating_sub(SWITCH_MARGIN)
        };
        let from = from.max(slot.lo(&geometry));
        crate::gc::scan::push_stack_range(from as *const u8, slot.end(&geometry) as *const u8);
    });
    // The next scan (a rescan after a mark-stack overflow, or the next
    // collection) records its own stopped stack pointers.
    EPOCH.store(epoch + 1, Ordering::Relaxed);
}
