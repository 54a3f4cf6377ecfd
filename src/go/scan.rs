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
//! [`push_goroutines`] has each live goroutine's stack scanned: from where
//! the collection found it running (at once), or else from the stack
//! pointer it last switched out at (less [`SWITCH_MARGIN`] for the
//! registers and frames of the switch below it; by bdwgc's marker
//! threads, in parallel, a chunk of slots at a time), up to the end of
//! its slot, header included (its locals, its C arguments).
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
//! A worker can also be stopped inside a signal handler, on its signal
//! stack (`fault.rs`: a goroutine that faults, caught as a Go panic). Its
//! stopped stack pointer then lies in neither its own stack nor the
//! goroutine's, and bdwgc would scan from the signal stack to the worker's
//! stack base: a range over unrelated, partly unmapped memory. The fault
//! hook records the interrupted stack pointer ([`fault_entered`]) before
//! the collector can stop the thread (the handler blocks the stop signal
//! until then), so the corrector scans three ranges: the signal stack's
//! used part (the handler's frames and the interrupted registers, from the
//! stopped stack pointer to the signal stack's top), the goroutine's stack
//! from its stack pointer at the fault, and the worker's own stack from
//! `g0_sp` (or, for a fault on the worker's own stack, from the faulting
//! stack pointer). A signal stack entered any other way (a foreign handler
//! with `SA_ONSTACK`) has no recorded stack pointer: the goroutine's whole
//! stack and the worker's whole stack are scanned then.
//!
//! Everything here is read with the world stopped, without locks: workers
//! are an append-only list (a worker that ends stays in it, matching no
//! thread), live goroutines a bitmap of stack slots
//! (`stack.rs`).

use super::g::G;
use super::stack::{self, Slot};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// Bytes scanned below a parked goroutine's saved stack pointer: the
/// switch's own frames and the registers they saved (the switch writes
/// within 128 bytes of it; the test below checks that it writes nothing
/// below the margin, and fails for a window from 192 to 64 bytes below).
const SWITCH_MARGIN: usize = 256;

/// Bytes of a goroutine's stack prefetched ahead of its scan (from its
/// stack pointer: the rest of the page follows by the hardware's own
/// prefetching once the scan streams through it).
const PREFETCH_BYTES: usize = 512;

/// Asks for the cache line at `addr` ahead of use (a hint: never faults).
#[inline(always)]
fn prefetch(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint that never faults, whatever the
    // address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// What the collector reads of one worker thread.
pub(crate) struct WorkerScan {
    /// The worker's `pthread_t`; 0 once the worker ended (its id may be
    /// reused by another thread, which this record must not match).
    thread: AtomicUsize,
    /// Where bdwgc scans the worker's own stack from while it runs a
    /// goroutine.
    g0_sp: AtomicUsize,
    /// The goroutine running on the worker (set before switching to its
    /// stack, cleared after switching back), or null.
    pub(crate) running: AtomicPtr<G>,
    /// The worker's own stack: its lowest usable address (the scan's start
    /// when nothing better is known).
    stack_lo: usize,
    /// The worker's signal stack, `[alt_lo, alt_hi)`.
    alt_lo: usize,
    alt_hi: usize,
    /// The stack pointer a fault interrupted (written by the fault hook,
    /// on the signal stack, before the collector can stop the thread
    /// there), or 0.
    fault_sp: AtomicUsize,
    /// Where the collection found the worker on its signal stack, and in
    /// which scan (as a goroutine's `stopped_sp`).
    alt_sp: AtomicUsize,
    alt_epoch: AtomicU64,
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

    /// The worker thread ends (its locked goroutine exited): the record
    /// stays in the list, matching no thread.
    pub(crate) fn retire(&self) {
        self.thread.store(0, Ordering::Release);
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
    crate::gc::scan::set_part_scanner(scan_chunk, stack::live_chunks);
}

thread_local! {
    /// The calling worker's scan record (null on other threads). Read in
    /// the fault handler: a constant-initialised cell without a
    /// destructor, so reading it allocates nothing.
    static THIS_WORKER: Cell<*const WorkerScan> = const { Cell::new(ptr::null()) };
}

/// The lowest usable address of the calling thread's stack (0 if unknown).
fn own_stack_lo() -> usize {
    // SAFETY: a zeroed attribute object filled in by glibc for the calling
    // thread, destroyed after use; the out-pointers are locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return 0;
        }
        let mut addr: *mut libc::c_void = ptr::null_mut();
        let mut size = 0usize;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            addr as usize
        } else {
            0
        }
    }
}

/// Registers the calling thread as a worker whose signal stack is
/// `[alt_lo, alt_hi)` (once per worker; never removed).
pub(crate) fn register_worker(alt_lo: usize, alt_hi: usize) -> &'static WorkerScan {
    // SAFETY: pthread_self has no preconditions.
    let thread = unsafe { libc::pthread_self() } as usize;
    let w = Box::leak(Box::new(WorkerScan {
        thread: AtomicUsize::new(thread),
        g0_sp: AtomicUsize::new(0),
        running: AtomicPtr::new(ptr::null_mut()),
        stack_lo: own_stack_lo(),
        alt_lo,
        alt_hi,
        fault_sp: AtomicUsize::new(0),
        alt_sp: AtomicUsize::new(0),
        alt_epoch: AtomicU64::new(u64::MAX),
        next: ptr::null(),
    }));
    THIS_WORKER.with(|c| c.set(w));
    let mut head = WORKERS.load(Ordering::Acquire);
    loop {
        w.next = head;
        match WORKERS.compare_exchange_weak(head, w, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return w,
            Err(h) => head = h,
        }
    }
}

/// The fault handler entered on this thread, interrupting code whose stack
/// pointer was `sp` (called in the signal handler, with the collector's
/// stop signal blocked: one atomic store, no allocation, no lock).
pub(crate) fn fault_entered(sp: usize) {
    // A thread-local of a worker (never freed), read on the thread the
    // handler runs on; try_with fails only while the thread exits.
    let _ = crate::fresh::try_with(&THIS_WORKER, |w| {
        // SAFETY: workers are leaked: a set pointer stays valid.
        if let Some(w) = unsafe { w.get().as_ref() } {
            w.fault_sp.store(sp, Ordering::Release);
        }
    });
}

/// bdwgc's stack-pointer corrector (world stopped, allocation lock held).
/// bdwgc then scans the worker's own stack from `*sp` to its base.
fn correct(thread: usize, sp: &mut usize) {
    let mut w = WORKERS.load(Ordering::Acquire);
    // SAFETY: workers are leaked: every node stays valid.
    while let Some(worker) = unsafe { w.as_ref() } {
        if worker.thread.load(Ordering::Acquire) == thread {
            *sp = worker.correct(*sp, EPOCH.load(Ordering::Relaxed));
            return;
        }
        w = worker.next.cast_mut();
    }
}

impl WorkerScan {
    /// Where bdwgc scans this worker's own stack from, when the collection
    /// stopped it at `sp`; records what [`push_goroutines`] scans besides
    /// (see the module docs).
    fn correct(&self, sp: usize, epoch: u64) -> usize {
        let mut at = sp;
        let mut unknown = false;
        if sp >= self.alt_lo && sp < self.alt_hi {
            // In a signal handler: its frames and the interrupted
            // registers are on the signal stack, above sp.
            self.alt_sp.store(sp, Ordering::Relaxed);
            self.alt_epoch.store(epoch, Ordering::Relaxed);
            at = self.fault_sp.load(Ordering::Acquire);
            unknown = at == 0;
        }
        // SAFETY: a running goroutine's header lives while it runs.
        let running = unsafe { self.running.load(Ordering::Acquire).as_ref() };
        if let Some(g) = running {
            let geometry = stack::geometry();
            let in_slot = at >= g.slot.start && at < g.slot.end(&geometry);
            if in_slot || unknown {
                let from = if in_slot { at } else { g.slot.lo(&geometry) };
                g.stopped_sp.store(from, Ordering::Relaxed);
                g.stopped_epoch.store(epoch, Ordering::Relaxed);
                return self.g0_sp.load(Ordering::Acquire);
            }
        }
        if unknown {
            // Somewhere on the worker's own stack.
            return self.stack_lo;
        }
        at
    }
}

/// The epoch of the latest root push, for the marker threads' scans of
/// the parts it handed them.
static PUSH_EPOCH: AtomicU64 = AtomicU64::new(0);

/// bdwgc's root pusher for goroutine stacks (world stopped).
///
/// Goroutines a worker was running when the world stopped are scanned
/// here, from where the corrector found them. The parked ones, most of
/// them, are handed to bdwgc's marker threads a chunk of up to 64 at a
/// time ([`scan_chunk`]), so that with a million goroutines every core
/// scans stacks (a parked goroutine's stack does not change until it is
/// readied, and nothing is readied while the world is stopped). Chunks
/// the mark stack has no room for (more than the collection's start
/// reserved for), and all of them with a system libgc, are scanned here.
fn push_goroutines() {
    let geometry = stack::geometry();
    let epoch = EPOCH.load(Ordering::Relaxed);
    PUSH_EPOCH.store(epoch, Ordering::Relaxed);
    let mut w = WORKERS.load(Ordering::Relaxed);
    // SAFETY: workers are leaked: every node stays valid.
    while let Some(worker) = unsafe { w.as_ref() } {
        if worker.alt_epoch.load(Ordering::Relaxed) == epoch {
            let from = worker.alt_sp.load(Ordering::Relaxed);
            crate::gc::scan::push_stack_range(from as *const u8, worker.alt_hi as *const u8);
        }
        w = worker.next.cast_mut();
    }
    // The goroutines running when the world stopped, from where it found
    // them.
    let mut w = WORKERS.load(Ordering::Relaxed);
    // SAFETY: workers are leaked: every node stays valid.
    while let Some(worker) = unsafe { w.as_ref() } {
        // SAFETY: a goroutine running when the world stopped is live.
        if let Some(g) = unsafe { worker.running.load(Ordering::Relaxed).as_ref() } {
            if g.stopped_epoch.load(Ordering::Relaxed) == epoch {
                let from = g
                    .stopped_sp
                    .load(Ordering::Relaxed)
                    .max(g.slot.lo(&geometry));
                let to = g.slot.end(&geometry);
                crate::gc::scan::push_stack_range(from as *const u8, to as *const u8);
            }
        }
        w = worker.next.cast_mut();
    }
    // The parked ones: to the marker threads while they take them.
    let mut parts = true;
    stack::for_each_live_chunk(|chunk| {
        parts = parts && crate::gc::scan::push_part(chunk.to_bits());
        if !parts {
            scan_slots(
                |f| stack::for_each_live_in(chunk, f),
                &geometry,
                epoch,
                |from, to| crate::gc::scan::push_stack_range(from as *const u8, to as *const u8),
            );
        }
    });
    // The next scan (a rescan after a mark-stack overflow, or the next
    // collection) records its own stopped stack pointers.
    EPOCH.store(epoch + 1, Ordering::Relaxed);
}

/// A marker thread's scan of one chunk of goroutine slots that
/// [`push_goroutines`] handed out: the parked goroutines' stacks (the
/// running ones were scanned by the pusher).
fn scan_chunk(part: usize, marker: &mut crate::gc::scan::Marker) {
    let Some(chunk) = stack::Chunk::from_bits(part) else {
        return;
    };
    let geometry = stack::geometry();
    let epoch = PUSH_EPOCH.load(Ordering::Relaxed);
    scan_slots(
        |f| stack::for_each_live_in(chunk, f),
        &geometry,
        epoch,
        |from, to| marker.scan_stack(from, to),
    );
}

/// Scans the stacks of the parked goroutines in the slots `slots` yields
/// (those the collection of `epoch` found running are scanned by the
/// pusher): each from the stack pointer it last switched out at less
/// [`SWITCH_MARGIN`], up to the end of its slot, header included.
///
/// A parked goroutine's stack is cold memory on a page of its own: a TLB
/// miss and a run of cache misses each. So the scan runs two goroutines
/// behind the walk: a slot's header is prefetched when the walk reaches
/// it, its stack's first lines when the walk is one slot further (its
/// header has arrived by then, saying where the stack begins), and it is
/// scanned one slot after that.
fn scan_slots(
    slots: impl FnOnce(&mut dyn FnMut(Slot)),
    geometry: &stack::Geometry,
    epoch: u64,
    mut scan: impl FnMut(usize, usize),
) {
    let mut headed: Option<Slot> = None;
    let mut ranged: Option<(usize, usize)> = None;
    let mut step = |next: Option<Slot>| {
        if let Some(slot) = next {
            prefetch(slot.hi(geometry));
        }
        let range = headed.and_then(|slot| {
            // SAFETY: a live slot holds an initialised goroutine header.
            let g = unsafe { G::of(slot, geometry) };
            if g.stopped_epoch.load(Ordering::Relaxed) == epoch {
                return None;
            }
            let from = g.sp.load(Ordering::Relaxed).saturating_sub(SWITCH_MARGIN);
            let from = from.max(slot.lo(geometry));
            let to = slot.end(geometry);
            let mut line = from & !63;
            while line < to.min(from + PREFETCH_BYTES) {
                prefetch(line);
                line += 64;
            }
            Some((from, to))
        });
        if let Some((from, to)) = ranged {
            scan(from, to);
        }
        headed = next;
        ranged = range;
    };
    slots(&mut |slot| step(Some(slot)));
    step(None);
    step(None);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::SWITCH_MARGIN;
    use crate::go::{self, Chan};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    const PAINT: u8 = 0xA5;
    static PAINTING: AtomicBool = AtomicBool::new(false);
    static PAINTED_SP: AtomicUsize = AtomicUsize::new(0);

    /// Called by `switch_out` in test builds: while a test asks, fills the
    /// stack from `SWITCH_MARGIN` to twice that below `sp` with a pattern
    /// that the switch must not overwrite (it is scanned only down to
    /// `sp - SWITCH_MARGIN`).
    pub(crate) fn paint_below(sp: usize) {
        if PAINTING.swap(false, Ordering::AcqRel) {
            // SAFETY: the range lies in this goroutine's own usable stack
            // (far above its low end), below every live frame; nothing
            // reads it before the switch's frames would overwrite it.
            unsafe {
                std::ptr::write_bytes((sp - 2 * SWITCH_MARGIN) as *mut u8, PAINT, SWITCH_MARGIN)
            };
            PAINTED_SP.store(sp, Ordering::Release);
        }
    }

    #[test]
    fn a_switch_writes_nothing_below_the_scanned_margin() {
        let _one = crate::go::ONE_RUN_IN_TESTS
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        go::run(|| {
            for _ in 0..100 {
                let gate = Chan::<u64>::new(0);
                let g2 = gate.clone();
                let ready = Chan::<()>::new(0);
                let r2 = ready.clone();
                PAINTED_SP.store(0, Ordering::Release);
                go::go(move || {
                    r2.send(());
                    PAINTING.store(true, Ordering::Release);
                    assert_eq!(g2.recv(), Some(7));
                });
                ready.recv();
                // Parked (painted) once the painted pointer is published
                // and the send below finds a receiver.
                while PAINTED_SP.load(Ordering::Acquire) == 0 {
                    go::gosched();
                }
                let sp = PAINTED_SP.load(Ordering::Acquire);
                // The receiver may still be switching out: give it time
                // to finish (a gosched lets the worker complete it).
                for _ in 0..10 {
                    go::gosched();
                }
                // SAFETY: the parked goroutine's stack is mapped; it does
                // not run until the send below.
                let painted = unsafe {
                    std::slice::from_raw_parts((sp - 2 * SWITCH_MARGIN) as *const u8, SWITCH_MARGIN)
                };
                let written = painted.iter().filter(|&&b| b != PAINT).count();
                assert_eq!(written, 0, "the switch wrote below sp - {SWITCH_MARGIN}");
                gate.send(7);
            }
        });
    }
}
