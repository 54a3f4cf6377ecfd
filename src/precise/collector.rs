//! Collection cycles: handshake, mark, sweep, end of cycle.
//!
//! A cycle here is stop-the-world, run by the thread that asks for it
//! ([`collect`], or an allocation that hits the pacer's trigger or the heap
//! limit). Its phases are kept apart so that the concurrent collector can
//! move them to a GC thread one at a time:
//!
//! 1. **handshake** ([`threads::stop_the_world`]): every registered thread
//!    is parked at a safepoint or in native code; the new cycle id is
//!    published and every thread's bump buffers are retired;
//! 2. **mark** ([`Marker`]): from the shadow stacks, the global roots and
//!    root memory (candidates, validated), then transitively through the
//!    types' handle fields, with an explicit growable mark stack: no
//!    recursion, whatever the shape of the heap;
//! 3. **sweep** ([`heap::sweep`]): unmarked objects are freed, their
//!    handles go to the cycle's pending list;
//! 4. **end of cycle**: freed handles and large objects become reusable,
//!    statistics and the pacer are updated, the world resumes.
//!
//! # Mark words
//!
//! [`CYCLE`] is the id of the latest cycle. An object is marked in cycle
//! `c` when its mark word is `c`; new objects are born with the current
//! value ([`birth_mark`]). Outside a cycle that is the previous id, i.e.
//! white for the next cycle; once a concurrent cycle publishes its id
//! before mutators resume, the same line allocates black. After a sweep
//! every object in the heap carries the id of the cycle that swept it, so
//! ids can wrap around freely.

use super::handles::{self, Freed};
use super::heap::{self, Header};
use super::roots;
use super::stats;
use super::threads::{self, ThreadState, World};
use super::types::{self, Kind};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The id of the latest cycle.
static CYCLE: AtomicU32 = AtomicU32::new(0);

/// The mark word of a new object.
#[inline(always)]
pub(crate) fn birth_mark() -> u32 {
    CYCLE.load(Ordering::Relaxed)
}

/// Runs a full stop-the-world collection. Every registered thread is
/// brought to a safepoint first (threads in native code are not waited
/// for); a thread that never reaches one holds the collection up (see
/// [`safepoint`](crate::precise::safepoint) and
/// [`native`](crate::precise::native)). If another thread is collecting,
/// waits for it, then collects again.
///
/// [`Error::InNative`](crate::precise::Error::InNative) from native code.
pub fn collect() -> super::Result<()> {
    let ts = threads::current()?;
    run(ts, true);
    Ok(())
}

/// A collection on behalf of an allocation on `ts` (which is at a
/// safepoint). Without `force`, a collection some other thread is running
/// counts.
pub(crate) fn collect_for_alloc(ts: &ThreadState, force: bool) {
    run(ts, force);
}

fn run(me: &ThreadState, force: bool) {
    let Some(world) = threads::stop_the_world(me, force) else {
        return;
    };
    let cycle = begin(&world);
    mark(&world, cycle);
    let mut freed = Freed::new();
    // SAFETY: the world is stopped, marking for `cycle` is complete, and
    // begin retired every thread's buffers.
    let swept = unsafe { heap::sweep(cycle, &mut freed) };
    debug_assert_eq!(freed.len() as u64, swept.freed_objects);
    end(world, swept, freed);
}

/// Handshake epilogue: publishes the new cycle id and takes every block
/// away from the threads.
fn begin(world: &World) -> u32 {
    let cycle = CYCLE.load(Ordering::Relaxed).wrapping_add(1);
    CYCLE.store(cycle, Ordering::Relaxed);
    for ts in world.threads() {
        // SAFETY: the thread is stopped (or is us, with no borrow live).
        heap::retire(&mut unsafe { ts.local() }.heap);
    }
    cycle
}

#[inline(never)]
fn mark(world: &World, cycle: u32) {
    let mut marker = Marker::new(cycle);
    for ts in world.threads() {
        // SAFETY: the thread is stopped (or is us, with no borrow live).
        for &raw in unsafe { ts.local() }.shadow.roots() {
            marker.visit(raw);
        }
    }
    roots::for_each_global(&mut |raw| marker.visit(raw));
    roots::scan_root_memory(&mut |raw| marker.visit(raw));
    marker.drain();
}

fn end(world: World, swept: heap::Swept, freed: Freed) {
    handles::release(freed);
    heap::end_cycle(swept.live_heap_bytes);
    let pause = world.requested.elapsed();
    stats::record_cycle(&swept, pause);
    drop(world);
}

/// The marking state of one cycle.
struct Marker {
    cycle: u32,
    stack: Vec<*mut Header>,
}

impl Marker {
    fn new(cycle: u32) -> Marker {
        Marker {
            cycle,
            stack: Vec::with_capacity(1024),
        }
    }

    /// Marks the object named by `raw` if it is a live handle that is not
    /// marked yet. Any value is accepted; non-handles are ignored.
    #[inline(always)]
    fn visit(&mut self, raw: u64) {
        let Some(hdr) = handles::resolve_candidate(raw) else {
            return;
        };
        // SAFETY: a live entry's object is allocated until a sweep frees
        // it, and none runs while we mark.
        let mark = unsafe { &(*hdr).mark };
        if mark.load(Ordering::Relaxed) != self.cycle {
            mark.store(self.cycle, Ordering::Relaxed);
            self.stack.push(hdr);
        }
    }

    /// Traces marked objects until none is left to trace.
    fn drain(&mut self) {
        while let Some(hdr) = self.stack.pop() {
            // SAFETY: pushed by visit, so a live, initialised object.
            let (type_id, size) = unsafe { ((*hdr).type_id, (*hdr).size as usize) };
            let Some(info) = types::info_raw(type_id) else {
                debug_assert!(false, "defergc: precise: object of unknown type {type_id}");
                continue;
            };
            let words = Header::payload(hdr).cast::<AtomicU64>();
            match info.kind {
                Kind::Struct => {
                    for &off in info.offsets.iter() {
                        // SAFETY: registered offsets are aligned and inside
                        // the payload.
                        let raw = unsafe { &*words.add(off as usize / 8) }.load(Ordering::Relaxed);
                        self.visit(raw);
                    }
                }
                Kind::HandleArray => {
                    for i in 0..size / 8 {
                        // SAFETY: every word of the payload is a slot.
                        let raw = unsafe { &*words.add(i) }.load(Ordering::Relaxed);
                        self.visit(raw);
                    }
                }
                Kind::Bytes => {}
            }
        }
    }
}
