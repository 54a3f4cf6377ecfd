//! Collection cycles, run concurrently with the mutators by a dedicated
//! collector thread: handshakes, marking with a deletion barrier,
//! termination, concurrent sweeping, and the thread's life.
//!
//! # The cycle
//!
//! The collector thread (`collector_main`) runs a cycle when one is
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
//!    pacer's allowance, may mark too (mark assists, see `poll.rs`); the
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
//! - *A goroutine preempted asynchronously* (`go/async_preempt.rs`),
//!   between two instructions of compiled code, so not at a safepoint:
//!   a handle may live only in a register or a machine-stack slot, which
//!   no round reads. **(I6)** Before it yields it copies its machine stack
//!   from below its saved registers and vector state up to its top into
//!   a root block of its own context, then acknowledges the running round
//!   itself; the block stays until it runs again. So every round it
//!   acknowledges while preempted (itself, or by the collector while it
//!   is switched out) sees those words as root memory, read as candidate
//!   handles: sound because no object moves (a handle names its block
//!   and cell, or its table entry), so a word copied stays the handle it
//!   was. And a cycle never waits forever for a goroutine that spins
//!   without safepoints: each preemption acknowledges a round, and while
//!   it is switched out the collector acts for it (tests/go_preempt.rs,
//!   `precise_cycles_complete_and_keep_what_a_spinning_goroutine_holds`).
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
//!
//! # Layout
//!
//! `thread.rs` (the collector thread, requests and waits for cycles),
//! `cycle.rs` (one cycle: its steps and the marking loop; what a round
//! asks of each thread is `mutator.rs`'s), `mark.rs` (the [`Tracer`] and
//! the collector's marker), `assist.rs` (the state that the collector and
//! assisting mutators share), `poll.rs` (`on_alloc`, what the allocation
//! path's one hook does: mark assists, requests, waits; the heap declares
//! the hook, and `install` registers it when the collector starts).
//!
//! [`Tracer`]: mark::Tracer
//! [`heap::after_mark`]: crate::precise::heap::after_mark
//! [`Round::Prepare`]: crate::precise::mutator::Round::Prepare
//! [`Round::Snapshot`]: crate::precise::mutator::Round::Snapshot
//! [`Round::Flush`]: crate::precise::mutator::Round::Flush
//! [`Round::End`]: crate::precise::mutator::Round::End

mod assist;
mod cycle;
mod mark;
mod poll;
mod thread;

#[cfg(loom)]
pub(crate) use cycle::mark_cycle;
#[cfg(loom)]
pub use mark::Tracer;
pub(crate) use poll::install;
pub use thread::{collect, gc_async, gc_wait, shutdown};
pub(crate) use thread::{forget_after_fork, quiet_for_fork, restart_after_fork, wait_for_marking};
