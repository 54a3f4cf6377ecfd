//! Collection cycles, run concurrently with the mutators by a dedicated
//! collector thread: handshakes, marking with a deletion barrier,
//! termination, concurrent sweeping, and the thread's life.
//!
//! # The cycle
//!
//! The collector thread ([`collector_main`]) runs a cycle when one is
//! requested ([`gc_async`], [`collect`], or the pacer when allocation since
//! the last cycle started exceeds its trigger). A cycle `c` is:
//!
//! 1. **Prepare.** Lazy sweeping is switched off (no cell is freed while
//!    marking runs), validation starts accepting both the last completed
//!    mark `c-1` and the new one `c`, allocation turns *grey* (born with mark
//!    `c-1` and recorded in the thread's barrier log, so it will be traced),
//!    and the deletion barrier is switched on. Then a [`Round::Prepare`]
//!    handshake: every thread acknowledges at a safepoint (the collector
//!    for threads in native code), so from then on every thread's stores
//!    are barriered. Threads also drop stale log entries here.
//! 2. **Snapshot.** A [`Round::Snapshot`] handshake: each thread copies its
//!    shadow stack and its root memory (tls slots, defer records, panic
//!    values: `roots::precise::for_each_word(owner)`) into the
//!    collector's grey queue and retires its bump buffers; the collector
//!    does it for threads in native code. Only when *every* thread has
//!    done so does tracing start. Then allocation turns *black* (born with
//!    mark `c`, not traced), and the collector adds global roots, orphaned
//!    root memory and the added scanners.
//! 3. **Mark.** The collector traces from the grey queue (roots, logged
//!    values, grey-born objects), then runs [`Round::Flush`] handshakes, in
//!    which each thread hands over its barrier log (and the global roots are
//!    read again), tracing what they bring, until a round that marks
//!    nothing new: then marking is complete. Between Flush rounds,
//!    mutators whose allocation is ahead of marking, or past half the
//!    pacer's allowance, may mark too (mark assists, see [`assist`]); the
//!    collector closes assists, and waits until none runs, before each
//!    Flush round.
//! 4. **End.** The completed mark becomes `c` (validation accepts only `c`
//!    from now on, so a dead object's handle is stale), the barrier goes
//!    off, allocation is white for the next cycle (mark `c`), and
//!    [`heap::after_mark`] files the blocks and unlinks the dead large
//!    objects. A [`Round::End`] handshake makes every thread see this.
//! 5. **Sweep.** After the End round: the large objects unlinked in step 4
//!    are freed (no thread can still be reading them: each has passed a
//!    safepoint since), lazy sweeping is on again, and the collector sweeps
//!    every unswept block concurrently with the mutators (which may sweep
//!    the blocks they take themselves). The pacer's next goal is set as the
//!    sweep starts, and allocations waiting for the cycle go on then.
//!    A cell freed by any sweep is free from then on, and keeps its
//!    handle's index for its next object (with the next generation); the
//!    handles of large objects go to the pool at the end of the cycle. Then
//!    statistics, and the pacer gives back idle blocks.
//!
//! Memory and handles freed by a cycle are therefore reused only once its
//! marking is complete and every thread has acknowledged that (step 5),
//! and no cell is freed while any marking runs (so the marker never reads
//! a cell that is being reused).
//!
//! # Why no live object is lost
//!
//! The snapshot is the union of each thread's roots at its Snapshot
//! acknowledgement `T_i`, all of them taken after every thread has
//! acknowledged Prepare (`B`): so every store after `B` is barriered, and
//! tracing starts after the last `T_i`. The invariants:
//!
//! - **(I1) Deletion barrier, from `B` until marking ends.** A handle
//!   overwritten in a heap slot or global root is logged. The barrier is a
//!   plain load and store, not an atomic swap, so two racing stores can
//!   hide the first one's value from both logs; that value is then held
//!   by its writer, and a writer whose roots are not yet snapshotted also
//!   logs the value it stores (between its Prepare and Snapshot
//!   acknowledgements), while one whose roots are snapshotted only ever
//!   holds protected values (see the next point). Hence every value a slot
//!   of a traced object held since `B` is either seen by the marker when it
//!   reads the slot, logged, or held by a snapshotted thread.
//! - **Holdings of a snapshotted thread are protected.** By induction on
//!   time: a thread's handles after its snapshot come from the snapshot,
//!   from black allocation, or from loads of slots whose values are
//!   protected by (I1).
//! - **(I2) Roots are snapshotted only after `B`, and tracing waits for all
//!   of them.** So no object is traced (black) while some thread's roots
//!   are not yet in the snapshot.
//! - **(I3) Objects born before every thread has snapshotted are grey**
//!   (logged, so traced); only objects born after the last `T_i` are black
//!   (marked, never traced).
//! - **(I4) Termination** needs a Flush round with an empty mark stack at
//!   its start in which nothing is newly marked: any white object still
//!   reachable would need a log entry made after its thread's flush to
//!   protect it, and that entry would itself need an earlier one, back to
//!   a flushed entry, which was found marked: a contradiction.
//! - **(I5) No sweep during marking; reuse after the End round.**
//! - **Assists change none of this.** While they are open every marker
//!   claims an object's mark with a compare and swap, so each reachable
//!   object is traced by exactly one marker, and what an assist does not
//!   finish goes back to the grey queue, which the collector drains after
//!   closing assists. So the marking before each Flush round is the one a
//!   single marker would do, and every Flush round and its check (I4)
//!   see the collector alone. Assists run only in step 3, never after
//!   the last check (I5).
//!
//! Every lost-object case, and the invariant that makes it impossible:
//!
//! - *A handle copied out of an unscanned object into a scanned one, the
//!   original cleared*: clearing the original is a logged overwrite (I1).
//! - *A handle copied into a root slot above the snapshot, the original
//!   cleared*: same (I1); root slots need no barrier because a root is only
//!   ever written by its own thread, and a handle reached after a thread's
//!   snapshot came from the snapshot, from a black allocation, or from a
//!   heap slot whose later overwrite is logged.
//! - *A thread not yet snapshotted stores a handle from its stack into a
//!   black object and drops it before its handshake*: there is no black
//!   object before every thread has snapshotted (I2, I3): the object it
//!   stores into is grey or white and traced later, and finds the handle
//!   (or its later overwrite is logged). This is why allocation is grey
//!   during the handshakes: a black allocation by an already-snapshotted
//!   thread, handed to a not-yet-snapshotted one through the heap, would
//!   lose what that one stores into it (the torture test catches this
//!   ordering, see `tests/precise_torture.rs`).
//! - *A handle passed between threads through a shared queue*: the queue
//!   is a heap object, so its slot overwrites are logged (I1).
//! - *An object allocated during the cycle and stored only in the heap*:
//!   black or grey, never freed by this cycle (I3).
//! - *A thread in native code, or one that exits mid-cycle*: the collector
//!   snapshots a native thread on its behalf; an exiting thread performs
//!   any round it has not acknowledged and hands over its log before its
//!   shadow stack and root memory disappear.
//! - *A handle in a registered global address written without the
//!   barrier*: globals are read after the last snapshot and at every Flush
//!   round, which catches a value stored after the snapshot; a value that
//!   is *overwritten* before the collector reads it is only safe when the
//!   store went through the barrier ([`store_global`](crate::precise::store_global)).
//!
//! # Compared with Go and MMTk
//!
//! Go (design 17503, `mbarrier.go`, `mgc.go`) uses a *hybrid* barrier:
//! shade the overwritten value (Yuasa) and, while the storing goroutine's
//! stack is grey, also the new value (Dijkstra); stacks are scanned one at
//! a time and never rescanned, allocation is black, and mark termination is
//! a short stop-the-world. Its invariant: no black object points to a white
//! one unless that white one is grey-protected, and the hybrid's insertion
//! half covers the window before a stack is scanned. We take the other
//! sound design: the deletion barrier enabled (and allocation
//! grey) before the first root snapshot, with tracing only after the last
//! one (Doligez-Leroy-Gonthier's sync1/sync2 handshakes); this alone is
//! what makes the stack cases safe. We keep one piece of insertion: a
//! thread between its Prepare and Snapshot acknowledgements also logs the
//! value it stores, which is only there so that the barrier needs no
//! atomic swap (I1), not for the stack cases. It costs two ragged
//! handshakes instead of Go's per-store shading while stacks are grey,
//! keeps the barrier's fast path one relaxed load, and needs no
//! stop-the-world at termination (the Flush rounds replace it).
//!
//! MMTk's ConcurrentImmix also uses a snapshot-at-the-beginning (Yuasa)
//! barrier with a per-mutator buffer and black allocation, but it stops the
//! world for the initial root scan and for the final mark, which make the
//! snapshot consistent by construction; our handshakes take the snapshot
//! thread by thread (I2, I3 are what make that sound) and terminate without
//! a pause (I4).
//!
//! # Mark bytes
//!
//! An object's mark byte holds the low byte of a cycle id. `marking.rs` holds
//! the last completed cycle's byte and the running (started) cycle's; an
//! object is live for validation when its mark is either. Outside a cycle
//! both are equal. After the collector's sweep every object in the heap
//! carries the id of the cycle that swept it or of a later one; blocks
//! owned by a thread when a sweep runs are swept by the next one (they are
//! retired at every snapshot), so no object is ever more than a few cycles
//! old and ids can wrap around freely.

use super::handles::{self, Found, Freed};
use super::heap::{self, Header};
use super::marking;
use super::roots;
use super::stats;
use super::threads::{self, Round, ThreadState};
use super::types::{self, Kind, TypeInfo};
use crate::cache::prefetch;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Whether `w` may be a handle (a cheap filter for root memory words).
#[inline(always)]
pub(super) fn could_be_handle(w: u64) -> bool {
    w >> handles::INDEX_BITS != 0 && w & ((1 << handles::INDEX_BITS) - 1) != 0
}

/// Copies the root memory words of `owner` that may be handles into `out`.
fn snapshot_root_memory(owner: crate::roots::precise::Owner, out: &mut Vec<u64>) {
    // SAFETY: the owner is the caller, or is in native code held by the
    // collector (SCANNING), so its root stacks do not change meanwhile.
    unsafe {
        crate::roots::precise::for_each_word(owner, &mut |w| {
            if could_be_handle(w as u64) {
                out.push(w as u64)
            }
        })
    };
}

/// Performs round `kind` for `ts`: called by the thread itself at a
/// safepoint (or while unregistering), or by the collector while the
/// thread is `SCANNING`.
pub(crate) fn act(ts: &ThreadState, kind: Round) {
    // SAFETY: the callers own the thread's state (see the docs above).
    let local = unsafe { ts.local() };
    match kind {
        Round::Prepare => {
            local.log.clear();
            ts.set_before_snapshot(true);
        }
        Round::Snapshot => {
            ts.set_before_snapshot(false);
            heap::retire(&mut local.heap);
            let roots = local.shadow.roots();
            let mut snapshot = Vec::with_capacity(roots.len() + 16);
            snapshot.extend(roots.iter().copied().filter(|&r| r != 0));
            snapshot_root_memory(ts.owner, &mut snapshot);
            if !snapshot.is_empty() {
                marking::grey_queue().push(snapshot);
            }
        }
        Round::Flush => marking::hand_over_log(&mut local.log),
        Round::End => {}
    }
}

/// A thread registered (under the registry lock): if the running cycle's
/// snapshot is under way or done, its root memory (from an earlier
/// registration, if any) joins it.
pub(crate) fn on_register(ts: &ThreadState) {
    let (barrier, marking) = marking::registration_view();
    if barrier && !marking {
        // Between Prepare and Snapshot: like every other thread now.
        ts.set_before_snapshot(true);
    }
    if marking {
        let mut snapshot = Vec::new();
        snapshot_root_memory(ts.owner, &mut snapshot);
        if !snapshot.is_empty() {
            marking::grey_queue().push(snapshot);
        }
    }
}

// ---- the collector thread and requests ---------------------------------

struct Control {
    /// Cycles asked for (counting from 1), started, completed.
    requested: u64,
    started: u64,
    completed: u64,
    /// Cycles whose marking has ended and whose pacer goal is set (the
    /// running one's sweep may still be going on): what an allocation
    /// past its allowance waits for.
    marked: u64,
    running: bool,
    shutdown: bool,
    /// While shutting down: the last cycle to run before the thread exits
    /// (the ones requested before [`shutdown`] was called).
    last: u64,
    thread: Option<std::thread::JoinHandle<()>>,
}

static CONTROL: Mutex<Control> = Mutex::new(Control {
    requested: 0,
    started: 0,
    completed: 0,
    marked: 0,
    running: false,
    shutdown: false,
    last: 0,
    thread: None,
});
/// The collector thread waits here for requests.
static WORK: Condvar = Condvar::new();
/// Waiters for cycles wait here.
static DONE: Condvar = Condvar::new();
/// Mirrors `Control::requested > Control::started`: a cycle is pending, so
/// the pacer need not take the lock.
static PENDING: AtomicBool = AtomicBool::new(false);

fn control() -> MutexGuard<'static, Control> {
    CONTROL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Asks for a cycle that starts after this call; returns its number.
fn request_new(c: &mut Control) -> u64 {
    let target = c.started + 1;
    if c.requested < target {
        c.requested = target;
        PENDING.store(true, Ordering::Relaxed);
        WORK.notify_all();
    }
    ensure_thread(c);
    target
}

fn ensure_thread(c: &mut Control) {
    if c.thread.is_none() && !c.shutdown {
        let spawned = std::thread::Builder::new()
            .name("defergc-precise-gc".into())
            .spawn(|| {
                // A panic here is a collector bug: waiters would hang and
                // mutators run on without collections. Fail loudly.
                if std::panic::catch_unwind(collector_main).is_err() {
                    crate::abort("defergc: precise: the collector thread panicked");
                }
            });
        match spawned {
            Ok(handle) => c.thread = Some(handle),
            Err(e) => crate::abort(&format!(
                "defergc: precise: cannot start the collector thread: {e}"
            )),
        }
    }
}

fn collector_main() {
    loop {
        let mut c = control();
        while c.requested <= c.started && !c.shutdown {
            c = WORK.wait(c).unwrap_or_else(|e| e.into_inner());
        }
        if c.shutdown && c.started >= c.last.min(c.requested) {
            // Shut down: what was asked for before is done. Later requests
            // are served by a new thread once shutdown has joined this one.
            return;
        }
        c.started += 1;
        c.running = true;
        PENDING.store(c.requested > c.started, Ordering::Relaxed);
        drop(c);
        run_cycle();
        let mut c = control();
        c.completed += 1;
        c.marked = c.completed;
        c.running = false;
        DONE.notify_all();
    }
}

/// Requests a collection cycle and returns at once: the collector thread
/// runs it concurrently with the mutators. A cycle that is already running
/// does not count (its snapshot may predate the caller's garbage), so this
/// asks for one that starts after the call. Does not register the calling
/// thread.
pub fn gc_async() {
    super::ensure_started();
    request_new(&mut control());
}

/// Waits until every requested cycle has completed (immediately if none is
/// pending). A registered thread waits as if in native code, so the
/// collector does not wait for it. [`Error::InNative`] never: a thread in
/// native code may wait too.
///
/// [`Error::InNative`]: crate::precise::Error::InNative
pub fn gc_wait() {
    let target = control().requested;
    wait_for(target);
}

/// Waits until cycle `target` has completed, as native code if the caller
/// is a running registered thread.
fn wait_for(target: u64) {
    let wait = || {
        let mut c = control();
        while c.completed < target {
            c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
        }
    };
    let ts = threads::current_ptr();
    // SAFETY: current_ptr is this thread's live state when non-null.
    match unsafe { ts.as_ref() } {
        Some(ts) if ts.status.load(Ordering::Relaxed) == threads::RUNNING => {
            threads::wait_native(ts, wait)
        }
        _ => wait(),
    }
}

/// Runs a full collection: [`gc_async`] then [`gc_wait`] for the cycle it
/// asked for. Every object unreachable when this is called is freed by the
/// time it returns. The caller does not stop anyone: it waits as if in
/// native code.
///
/// [`Error::InNative`](crate::precise::Error::InNative) from native code.
pub fn collect() -> super::Result<()> {
    threads::current()?;
    let target = request_new(&mut control());
    wait_for(target);
    Ok(())
}

/// A collection on behalf of an allocation on `ts` (at a safepoint). With
/// `wait` (the heap limit, no handles left) the allocation waits for a
/// full new cycle; without it (the pacer) a cycle is requested unless one
/// is pending, and the allocation goes on.
pub(crate) fn collect_for_alloc(ts: &ThreadState, wait: bool) {
    if wait {
        let target = request_new(&mut control());
        threads::wait_native(ts, || {
            let mut c = control();
            while c.completed < target {
                c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
            }
        });
    } else if !PENDING.load(Ordering::Relaxed) {
        let mut c = control();
        if c.requested <= c.started {
            request_new(&mut c);
        }
    }
}

/// The cycle whose marking an allocation that must not go on before a
/// cycle has marked waits for (past the pacer's allowance, see
/// `heap/pacer.rs`, or at the soft memory limit): the running one if it
/// has not finished marking, or if none runs the requested one. With
/// `request`, a new cycle is asked for if there is none (one that is
/// sweeping found its dead already); without, `None` then. (Waiting past
/// the allowance also for a cycle requested while the last one sweeps
/// made four mutators wait 5.0 s in all over 3 runs of gcbench-mt4
/// instead of 3.8, and take 1.24x bdwgc's time instead of 0.95x.)
pub(crate) fn marking_target(request: bool) -> Option<u64> {
    let mut c = control();
    let target = if c.running { c.started } else { c.requested };
    if target > c.marked {
        Some(target)
    } else if request {
        Some(request_new(&mut c))
    } else {
        None
    }
}

/// Waits, as native code, until cycle `target` has finished marking and
/// set the pacer's next goal. Its sweep may still run; the allocation
/// sweeps the blocks it takes itself if the collector has not reached
/// them.
pub(crate) fn wait_marked(ts: &ThreadState, target: u64) {
    let start = Instant::now();
    threads::wait_native(ts, || {
        let mut c = control();
        while c.marked < target {
            c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
        }
    });
    stats::record_alloc_wait(start.elapsed());
}

/// Waits, as native code, until the cycle that is running (if any) has
/// completed: a weak handle's read while that cycle's marking decides its
/// object (see `weak.rs`). Returns at once if none runs.
pub(crate) fn wait_for_marking(ts: &ThreadState) {
    let target = {
        let c = control();
        if !c.running || c.started <= c.completed {
            drop(c);
            // Between the flag and the control block (a cycle starting or
            // ending): look again soon.
            std::thread::yield_now();
            return;
        }
        c.started
    };
    threads::wait_native(ts, || {
        let mut c = control();
        while c.completed < target {
            c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
        }
    });
}

/// Stops the collector thread and joins it, after the cycles already
/// requested have completed. Mutators may still be registered and running:
/// they are not waited for beyond the handshakes of those cycles. A later
/// request ([`collect`], [`gc_async`], the pacer) starts a new collector
/// thread.
pub fn shutdown() {
    let handle = {
        let mut c = control();
        c.shutdown = true;
        c.last = c.requested;
        WORK.notify_all();
        c.thread.take()
    };
    if let Some(handle) = handle {
        // The thread can only die of a bug; say so rather than hide it.
        if handle.join().is_err() {
            crate::abort("defergc: precise: the collector thread panicked");
        }
    }
    let mut c = control();
    c.shutdown = false;
    if c.requested > c.started {
        // Asked for while we were shutting down: serve it.
        ensure_thread(&mut c);
    }
}

/// Before a fork: waits until no cycle runs (as native code if the caller
/// is a running registered thread, so that the cycle does not wait for
/// it) and returns the control lock, which keeps the next one from
/// starting (kept until after the fork).
pub(super) fn quiet_for_fork() {
    let wait = || {
        let mut c = control();
        while c.running {
            c = DONE.wait(c).unwrap_or_else(|e| e.into_inner());
        }
        c
    };
    let ts = threads::current_ptr();
    // SAFETY: current_ptr is this thread's live state when non-null.
    let quiet = match unsafe { ts.as_ref() } {
        Some(ts) if ts.status.load(Ordering::Relaxed) == threads::RUNNING => {
            threads::wait_native(ts, wait)
        }
        _ => wait(),
    };
    crate::gc::fork::held::keep(quiet);
}

/// In a forked child: the collector thread did not come along. Forget it;
/// the next request starts a new one (now, if one is pending).
pub(super) fn restart_after_fork() {
    let mut c = control();
    // The handle names a thread of the parent: never join or detach it.
    std::mem::forget(c.thread.take());
    if c.requested > c.started {
        ensure_thread(&mut c);
    }
}

// ---- one cycle -------------------------------------------------------------

fn run_cycle() {
    let started = Instant::now();
    let id = marking::completed_id().wrapping_add(1);
    heap::set_lazy_sweep(false);
    heap::cycle_started();
    // 1 to 4: handshakes and marking.
    let mut marker = Marker::new(id as u8);
    marker.paces = true;
    mark_cycle(id, &mut marker);
    let mark_time = started.elapsed();

    // 4. End of marking, for the heap.
    let mut freed = Freed::new();
    // SAFETY: marking for `id` is complete and no sweep runs.
    let after = unsafe { heap::after_mark(id, &mut freed) };
    threads::round(Round::End);

    // 5. Sweep.
    heap::free_pending_large();
    heap::set_lazy_sweep(true);
    // What marking found live (objects allocated during the cycle are not
    // counted: when marking is slow they would inflate the next trigger
    // without bound) sets the next goal; allocations waiting for this
    // cycle go on now, sweeping what they take if the collector has not.
    let live_heap = marker.heap_bytes + after.small_live_bytes;
    heap::end_marking(live_heap, marker.objects);
    {
        let mut c = control();
        c.marked = c.started;
        DONE.notify_all();
    }
    // A swept cell keeps its handle's index for its next object (the
    // cycle is complete: it may be reused at once); the handles of large
    // objects go back to the pool.
    heap::sweep_all_unswept(id);
    handles::release(freed);
    heap::end_sweep();
    stats::record_cycle(stats::Cycle {
        live_objects: marker.objects,
        live_bytes: marker.bytes,
        allocated: marker.allocated,
        mark_time,
        total_time: started.elapsed(),
    });
    // Leftover grey values (logged after the last flush) are candidates of
    // no cycle: drop them.
    marking::grey_queue().clear();
}

/// What a cycle's marking needs of the heap: the [`Marker`], or the
/// model heap of `tests/precise_loom.rs`, which runs [`mark_cycle`] under
/// loom.
pub trait Tracer {
    /// Queues a root or logged value for marking (any value: one that is
    /// not a live handle is ignored).
    fn visit(&mut self, raw: u64);
    /// Marks everything reachable from the queued values.
    fn drain(&mut self);
    /// Objects marked so far.
    fn marked(&self) -> u64;
    /// Every thread has snapshotted its roots: queue the roots that belong
    /// to no thread (global roots, orphaned root memory, added scanners).
    fn snapshot_taken(&mut self);
    /// Queue the global roots again (at every Flush round).
    fn globals(&mut self);
    /// Lets mutators that allocate past the pacer's allowance mark too
    /// (mark assists, see [`assist`]) until [`Tracer::close_assists`]. The
    /// loom model has none.
    fn open_assists(&mut self) {}
    /// Returns once no assist runs, with what they marked counted.
    fn close_assists(&mut self) {}
}

/// Steps 1 to 4 of cycle `id` (see the module docs): the handshake
/// rounds and the marking, until marking is complete and every thread
/// validates against the new mark.
pub(crate) fn mark_cycle(id: u32, tracer: &mut impl Tracer) {
    let (prev_mark, mark) = (id.wrapping_sub(1) as u8, id as u8);

    // 1. Prepare.
    marking::prepare(prev_mark, mark);
    threads::round(Round::Prepare);

    // 2. Snapshot.
    marking::snapshot_started();
    threads::round(Round::Snapshot);
    marking::snapshot_taken(mark);
    tracer.snapshot_taken();

    // 3. Mark, until a Flush round marks nothing new. Assists mark along
    // with the collector, but never across a Flush round and its check:
    // those see the collector's marking alone, as without assists.
    tracer.open_assists();
    loop {
        drain_queue(tracer);
        tracer.close_assists();
        drain_queue(tracer);
        let before = tracer.marked();
        threads::round(Round::Flush);
        tracer.globals();
        drain_queue(tracer);
        if tracer.marked() == before {
            break;
        }
        tracer.open_assists();
    }

    // 4. End of marking.
    marking::finish(id, mark);
}

/// Traces everything in the grey queue, and what it reaches.
fn drain_queue(tracer: &mut impl Tracer) {
    tracer.drain();
    loop {
        let batches = std::mem::take(&mut *marking::grey_queue());
        if batches.is_empty() {
            return;
        }
        for batch in batches {
            for raw in batch {
                tracer.visit(raw);
            }
            tracer.drain();
        }
    }
}

// ---- mark assists -----------------------------------------------------------

/// Marking steps between two looks at the assist state.
const CHECK_EVERY: u32 = 1024;
/// Values the collector hands to assists at a time.
const SHARE: usize = 512;
/// How long a mutator waits for the collector to open assists it asked
/// for, or to queue work for them, before it waits for the cycle instead.
const ASSIST_ASK_WAIT: std::time::Duration = std::time::Duration::from_micros(200);

/// What the collector hands to assists from its mark stack: [`SHARE`]
/// values off the top while it has plenty; else, once an assist found
/// nothing queued (`hungry`, asked only then), the bottom half of a stack
/// of two or more. Marking a tree or a list keeps the stack to a few dozen
/// values, so without the second rule assists would never get work there.
/// The bottom holds the oldest values, the roots of the largest subgraphs
/// still to mark; the top is what marking reached last, mostly leaves.
fn share(stack: &mut Vec<u64>, hungry: impl FnOnce() -> bool) -> Option<Vec<u64>> {
    if stack.len() >= 2 * SHARE {
        Some(stack.split_off(stack.len() - SHARE))
    } else if stack.len() >= 2 && hungry() {
        let half = stack.len() / 2;
        Some(stack.drain(..half).collect())
    } else {
        None
    }
}

/// The state that the collector and the assisting mutators share.
///
/// A mutator whose allocation is ahead of marking or past half the pacer's
/// allowance while marking runs asks for assists (`wanted`). The collector,
/// at its next look, switches its own marking to atomic claims and opens
/// them (`open`); from then on it hands part of its stack to the grey
/// queue, and an assisting mutator takes a batch there (when it finds none,
/// it says so, `hungry`, and waits a moment for the collector's next look:
/// see [`share`]), marks what it reaches (at most the budget the pacer gave
/// it, the rest handed back), and adds what it marked to the counts here
/// (and the pacer's). The collector closes assists before every Flush
/// round: it stores `open` false, then waits until `active` is 0; an assist
/// increments `active`, then checks `open` (both sequentially consistent),
/// so once the collector has seen `active` at 0 no assist is running or can
/// start, and the round and its check (I4) see the collector's marking
/// alone. Assists never run after marking ends: the collector closes them
/// before its last Flush round.
struct Assists {
    wanted: AtomicBool,
    open: AtomicBool,
    /// An assist found the grey queue empty: the collector hands over part
    /// of its stack at its next look, however short the stack is (a tree's
    /// marking keeps it to a few dozen values).
    hungry: AtomicBool,
    active: AtomicUsize,
    objects: AtomicU64,
    bytes: AtomicU64,
    heap_bytes: AtomicU64,
}

static ASSISTS: Assists = Assists {
    wanted: AtomicBool::new(false),
    open: AtomicBool::new(false),
    hungry: AtomicBool::new(false),
    active: AtomicUsize::new(0),
    objects: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
    heap_bytes: AtomicU64::new(0),
};

/// A mark assist, by the running thread `ts` whose allocation is ahead of
/// marking or past half the pacer's allowance: marks up to `budget` objects
/// if assists are open and the grey queue has work, and returns how many
/// it marked; `None` when there is nothing to do. If assists are closed it
/// asks for them; with `ask_and_wait` it waits up to [`ASSIST_ASK_WAIT`]
/// for the collector to open them or queue work (polling safepoints
/// meanwhile). Holds no lock while it marks.
pub(crate) fn assist(ts: &ThreadState, ask_and_wait: bool, budget: u64) -> Option<u64> {
    let asked = Instant::now();
    loop {
        let marked = if ASSISTS.open.load(Ordering::Acquire) {
            ASSISTS.active.fetch_add(1, Ordering::SeqCst);
            let marked = if ASSISTS.open.load(Ordering::SeqCst) {
                assist_once(budget)
            } else {
                None
            };
            ASSISTS.active.fetch_sub(1, Ordering::SeqCst);
            marked
        } else {
            ASSISTS.wanted.store(true, Ordering::Relaxed);
            None
        };
        if marked.is_some() || !ask_and_wait || asked.elapsed() > ASSIST_ASK_WAIT {
            return marked;
        }
        // Closed, or open with nothing queued: the collector opens them,
        // or hands over part of its stack, at its next look (every
        // CHECK_EVERY steps). Poll meanwhile, so that a round waiting for
        // this thread goes on.
        threads::poll(ts);
        std::thread::yield_now();
    }
}

fn assist_once(budget: u64) -> Option<u64> {
    let Some(batch) = marking::grey_queue().pop() else {
        ASSISTS.hungry.store(true, Ordering::Relaxed);
        return None;
    };
    let mut m = Marker::new(marking::running_mark());
    m.shared = true;
    m.limit = budget;
    for raw in batch {
        m.visit(raw);
    }
    m.drain();
    m.hand_back();
    ASSISTS.objects.fetch_add(m.objects, Ordering::Relaxed);
    ASSISTS.bytes.fetch_add(m.bytes, Ordering::Relaxed);
    ASSISTS
        .heap_bytes
        .fetch_add(m.heap_bytes as u64, Ordering::Relaxed);
    stats::record_assist(m.objects);
    heap::assist_marked(m.objects);
    Some(m.objects)
}

/// A small first-in first-out buffer of the marker's prefetch pipeline
/// (`N` a power of two).
struct Fifo<T: Copy, const N: usize> {
    items: [T; N],
    head: usize,
    len: usize,
}

impl<T: Copy, const N: usize> Fifo<T, N> {
    fn new(fill: T) -> Self {
        const { assert!(N.is_power_of_two()) };
        Fifo {
            items: [fill; N],
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn is_full(&self) -> bool {
        self.len == N
    }

    #[inline(always)]
    fn push(&mut self, item: T) {
        debug_assert!(!self.is_full());
        self.items[(self.head + self.len) & (N - 1)] = item;
        self.len += 1;
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let item = self.items[self.head];
        self.head = (self.head + 1) & (N - 1);
        self.len -= 1;
        Some(item)
    }
}

/// The marking state of one cycle.
///
/// Marking is a pipeline that hides the cache miss of each visit (the
/// object's header): handle values wait on an explicit, growable stack
/// (roots and fields are pushed unresolved, so that no object graph can
/// make it recurse); a value taken off the stack is resolved to the header
/// it would name (a small object's from its block's layout, hot in cache),
/// which is prefetched while the value waits in a short queue; then it is
/// validated against the handle, marked, and its handle fields are pushed.
/// Any value is accepted: one that is not a live handle is dropped.
struct Marker {
    cycle: u8,
    /// The mark of the last completed cycle: objects to mark carry it.
    prev: u8,
    stack: Vec<u64>,
    headers: Fifo<(u64, Found), 16>,
    /// The type of the last object traced (objects of one type cluster).
    last_type: TypeView,
    objects: u64,
    bytes: u64,
    heap_bytes: usize,
    /// Objects allocated in all when the snapshot was complete.
    allocated: u64,
    /// Other markers (assists) may run: claim marks with a compare and
    /// swap, and share work through the grey queue.
    shared: bool,
    /// The collector may open assists when a mutator asks (between
    /// open_assists and close_assists).
    may_open: bool,
    /// Stop marking after this many objects (an assist's budget).
    limit: u64,
    /// Marks until the next look at the assist state.
    until_check: u32,
    /// The collector's marker: tells the pacer its progress at every look
    /// at the assist state.
    paces: bool,
    /// Objects marked by assists, counted in `objects` once they closed.
    absorbed: u64,
}

impl Tracer for Marker {
    #[inline(always)]
    fn visit(&mut self, raw: u64) {
        if raw != 0 {
            self.stack.push(raw);
        }
    }

    fn drain(&mut self) {
        Marker::drain(self)
    }

    fn marked(&self) -> u64 {
        self.objects
    }

    fn snapshot_taken(&mut self) {
        heap::snapshot_taken();
        self.allocated = threads::allocation_totals().0;
        roots::scan_shared_roots(&mut |raw| self.visit(raw));
    }

    fn globals(&mut self) {
        roots::for_each_global(&mut |raw| self.visit(raw));
    }

    fn open_assists(&mut self) {
        self.may_open = true;
        self.consider_assists();
    }

    fn close_assists(&mut self) {
        self.may_open = false;
        ASSISTS.wanted.store(false, Ordering::Relaxed);
        ASSISTS.hungry.store(false, Ordering::Relaxed);
        ASSISTS.open.store(false, Ordering::SeqCst);
        while ASSISTS.active.load(Ordering::SeqCst) != 0 {
            std::thread::yield_now();
        }
        // No assist runs, none can start: marking is ours alone again.
        self.shared = false;
        let assisted = ASSISTS.objects.swap(0, Ordering::Relaxed);
        self.objects += assisted;
        self.absorbed += assisted;
        self.bytes += ASSISTS.bytes.swap(0, Ordering::Relaxed);
        self.heap_bytes += ASSISTS.heap_bytes.swap(0, Ordering::Relaxed) as usize;
    }
}

impl Marker {
    fn new(cycle: u8) -> Marker {
        Marker {
            cycle,
            prev: cycle.wrapping_sub(1),
            stack: Vec::with_capacity(1024),
            headers: Fifo::new((0, Found::NONE)),
            last_type: TypeView::of(0, types::unregistered()),
            objects: 0,
            bytes: 0,
            heap_bytes: 0,
            allocated: 0,
            shared: false,
            may_open: false,
            limit: u64::MAX,
            until_check: CHECK_EVERY,
            paces: false,
            absorbed: 0,
        }
    }

    /// Marks everything reachable from the queued values.
    fn drain(&mut self) {
        loop {
            while !self.headers.is_full() {
                let Some(raw) = self.stack.pop() else { break };
                if let Some(found) = handles::locate(raw) {
                    prefetch(found.hdr);
                    prefetch(found.first_line_end());
                    self.headers.push((raw, found));
                }
            }
            match self.headers.pop() {
                Some((raw, found)) if handles::names_object(raw, found) => self.mark(found.hdr),
                Some(_) => {}
                None if self.stack.is_empty() => break,
                None => {}
            }
            self.until_check -= 1;
            if self.until_check == 0 {
                self.until_check = CHECK_EVERY;
                if self.objects >= self.limit {
                    return;
                }
                if self.paces {
                    heap::collector_marked(self.objects - self.absorbed);
                }
                self.consider_assists();
            }
        }
    }

    /// The collector, every [`CHECK_EVERY`] steps: opens assists if a
    /// mutator asked for them and it may, and while they are open hands
    /// them part of its stack through the grey queue.
    fn consider_assists(&mut self) {
        if !self.may_open {
            return;
        }
        if !self.shared {
            if !ASSISTS.wanted.load(Ordering::Relaxed) {
                return;
            }
            // Claim marks atomically from here on, then let assists in.
            self.shared = true;
            ASSISTS.open.store(true, Ordering::SeqCst);
        }
        if let Some(batch) = share(&mut self.stack, || {
            ASSISTS.hungry.swap(false, Ordering::Relaxed)
        }) {
            marking::grey_queue().push(batch);
        }
    }

    /// Gives back what an assist did not get to: its stack and the values
    /// in its pipeline.
    fn hand_back(&mut self) {
        let mut rest = std::mem::take(&mut self.stack);
        while let Some((raw, _)) = self.headers.pop() {
            rest.push(raw);
        }
        if !rest.is_empty() {
            marking::grey_queue().push(rest);
        }
    }

    /// Marks the live object at `hdr` unless it is marked, and queues its
    /// handle fields.
    #[inline(always)]
    fn mark(&mut self, hdr: *mut Header) {
        // SAFETY: resolved from a handle that matched its header: an
        // initialised object, which no sweep frees while we mark (sweeps
        // never overlap marking).
        let mark = unsafe { &(*hdr).mark };
        // Only an object that was live at the last completed marking (or
        // was born since, white) is marked: one marked already is done, and
        // any other mark is a dead, not yet swept object, never revived.
        // With assists running, exactly one marker claims it.
        if self.shared {
            let claimed =
                mark.compare_exchange(self.prev, self.cycle, Ordering::Relaxed, Ordering::Relaxed);
            if claimed.is_err() {
                return;
            }
        } else if mark.load(Ordering::Relaxed) != self.prev {
            return;
        } else {
            mark.store(self.cycle, Ordering::Relaxed);
        }
        // SAFETY: as above; the type never changes after allocation.
        let type_id = unsafe { (*hdr).type_id() };
        if type_id != self.last_type.id {
            let Some(info) = types::info_raw(type_id) else {
                debug_assert!(false, "defergc: precise: object of unknown type {type_id}");
                return;
            };
            self.last_type = TypeView::of(type_id, info);
        }
        let t = self.last_type;
        let field = |words: *const u64, i: usize| {
            // SAFETY: the words read are inside the payload: registered
            // handle offsets are, and an array's slots are.
            unsafe { &*words.cast::<AtomicU64>().add(i) }.load(Ordering::Relaxed)
        };
        if t.kind == Kind::Struct {
            // A struct's body is its payload, of its type's size.
            let size = t.size as usize;
            self.count(hdr, size, size);
            let words = Header::body(hdr).cast::<u64>().cast_const();
            match t.bits {
                Some(mut bits) => {
                    while bits != 0 {
                        let word = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        self.visit(field(words, word));
                    }
                }
                None => {
                    for &off in t.info.offsets() {
                        self.visit(field(words, off as usize / 8));
                    }
                }
            }
        } else {
            // An array's body is its length word and payload.
            // SAFETY: a live array's header.
            let size = unsafe { Header::array_len(hdr) };
            self.count(hdr, size, size + heap::LENGTH_WORD);
            if t.kind == Kind::HandleArray {
                let words = Header::array_payload(hdr).cast::<u64>().cast_const();
                for i in 0..size / 8 {
                    self.visit(field(words, i));
                }
            }
        }
    }

    /// Counts a marked object of `size` payload bytes and `body` bytes
    /// after its header: in the marker's totals, and in its block's live
    /// counter or the large-object bytes.
    #[inline(always)]
    fn count(&mut self, hdr: *mut Header, size: usize, body: usize) {
        self.objects += 1;
        self.bytes += size as u64;
        if body + heap::HEADER <= heap::MAX_SMALL_CELL {
            // SAFETY: a small object lives in a block, whose header word
            // only markers write while marking runs. An assist and the
            // collector may race here and lose an increment: a count can
            // only be low, which costs a sweep of a full block and a
            // smaller goal, never a dead object left unswept (each object
            // is counted by the one marker that claimed it). The counts
            // feed the live heap size (after_mark).
            let live = unsafe { &*heap::block_live_counter(hdr) };
            live.store(live.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        } else {
            self.heap_bytes += heap::HEADER + body;
        }
    }
}

/// What the marker needs of a type, read from the registry once per change
/// of type (objects of one type cluster).
#[derive(Clone, Copy)]
struct TypeView {
    id: u32,
    kind: Kind,
    /// A struct's payload size.
    size: u32,
    /// A struct's handle-field bitmap, if it has at most 64 words (else
    /// its offsets are read from `info`).
    bits: Option<u64>,
    info: &'static TypeInfo,
}

impl TypeView {
    fn of(id: u32, info: &'static TypeInfo) -> TypeView {
        TypeView {
            id,
            kind: info.kind(),
            size: info.size(),
            bits: info.small_bitmap(),
            info,
        }
    }
}

#[cfg(test)]
mod share_tests {
    use super::{share, SHARE};

    #[test]
    fn a_long_stack_gives_its_top_without_asking() {
        let mut stack: Vec<u64> = (0..2 * SHARE as u64).collect();
        let batch = share(&mut stack, || panic!("asked whether an assist is hungry")).unwrap();
        assert_eq!(batch, (SHARE as u64..2 * SHARE as u64).collect::<Vec<_>>());
        assert_eq!(stack, (0..SHARE as u64).collect::<Vec<_>>());
    }

    #[test]
    fn a_short_stack_gives_its_bottom_half_to_a_hungry_assist_only() {
        let mut stack: Vec<u64> = vec![10, 11, 12, 13, 14];
        assert_eq!(share(&mut stack, || false), None);
        assert_eq!(stack, [10, 11, 12, 13, 14]);
        assert_eq!(share(&mut stack, || true), Some(vec![10, 11]));
        assert_eq!(stack, [12, 13, 14]);
        // One value is the collector's own: it keeps it.
        let mut one = vec![7];
        assert_eq!(share(&mut one, || true), None);
        assert_eq!(one, [7]);
    }
}
