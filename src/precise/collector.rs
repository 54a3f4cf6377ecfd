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
//! 3. **sweep**: unmarked large objects are freed at once
//!    ([`heap::after_mark`]), their handles to the cycle's pending list;
//!    blocks are swept lazily by the threads that allocate in them next,
//!    and what is left by the start of the next cycle
//!    ([`heap::finish_sweep`]);
//! 4. **end of cycle**: freed handles and large objects become reusable,
//!    statistics and the pacer are updated, the world resumes.
//!
//! # Mark words
//!
//! [`CYCLE`] is the id of the latest cycle. An object is marked in cycle
//! `c` when its mark byte is `c`'s low byte; new objects are born with the
//! current value ([`birth_mark`]). Outside a cycle that is the previous id, i.e.
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

/// The mark byte of a new object.
#[inline(always)]
pub(crate) fn birth_mark() -> u8 {
    CYCLE.load(Ordering::Relaxed) as u8
}

/// The mark byte every live object has outside a cycle: the last cycle's.
/// A dead object that is not swept yet has an older one.
#[inline(always)]
pub(crate) fn live_mark() -> u8 {
    CYCLE.load(Ordering::Relaxed) as u8
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
    let marked = mark(&world, cycle);
    let mut freed = Freed::new();
    // SAFETY: the world is stopped and marking for `cycle` is complete.
    let large = unsafe { heap::after_mark(cycle, &mut freed) };
    debug_assert_eq!(freed.len() as u64, large.freed);
    end(world, marked, freed);
}

/// Handshake epilogue: takes every block away from the threads, sweeps
/// what the previous cycle left unswept, and publishes the new cycle id.
fn begin(world: &World) -> u8 {
    for ts in world.threads() {
        // SAFETY: the thread is stopped (or is us, with no borrow live).
        heap::retire(&mut unsafe { ts.local() }.heap);
    }
    // SAFETY: the world is stopped and every buffer retired.
    unsafe { heap::finish_sweep(live_mark()) };
    let cycle = CYCLE.load(Ordering::Relaxed).wrapping_add(1);
    CYCLE.store(cycle, Ordering::Relaxed);
    cycle as u8
}

/// What marking found live.
struct Marked {
    objects: u64,
    bytes: u64,
    heap_bytes: usize,
}

#[inline(never)]
fn mark(world: &World, cycle: u8) -> Marked {
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
    Marked {
        objects: marker.objects,
        bytes: marker.bytes,
        heap_bytes: marker.heap_bytes,
    }
}

fn end(world: World, marked: Marked, freed: Freed) {
    handles::release(freed);
    heap::end_cycle(marked.heap_bytes);
    let allocated = world.allocated_objects();
    let pause = world.requested.elapsed();
    stats::record_cycle(marked.objects, marked.bytes, allocated, pause);
    drop(world);
}

/// The marking state of one cycle.
struct Marker {
    cycle: u8,
    stack: Vec<*mut Header>,
    objects: u64,
    bytes: u64,
    heap_bytes: usize,
}

impl Marker {
    fn new(cycle: u8) -> Marker {
        Marker {
            cycle,
            stack: Vec::with_capacity(1024),
            objects: 0,
            bytes: 0,
            heap_bytes: 0,
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
            let (type_id, size) = unsafe { ((*hdr).type_id(), (*hdr).size as usize) };
            self.objects += 1;
            self.bytes += size as u64;
            self.heap_bytes += heap::footprint(size);
            let Some(info) = types::info_raw(type_id) else {
                debug_assert!(false, "defergc: precise: object of unknown type {type_id}");
                continue;
            };
            let words = Header::payload(hdr).cast::<AtomicU64>();
            match info.kind() {
                Kind::Struct if info.small_bitmap().is_some() => {
                    let mut bits = info.small_bitmap().unwrap_or(0);
                    while bits != 0 {
                        let word = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        // SAFETY: registered handle words are inside the
                        // payload.
                        let raw = unsafe { &*words.add(word) }.load(Ordering::Relaxed);
                        self.visit(raw);
                    }
                }
                Kind::Struct => {
                    for &off in info.offsets() {
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
