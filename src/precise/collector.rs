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
//!    types' handle fields, with an explicit growable mark stack (no
//!    recursion, whatever the shape of the heap) and prefetching;
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
use super::types::{self, Kind, TypeInfo};
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
    let mut marked = mark(&world, cycle);
    let mut freed = Freed::new();
    // SAFETY: the world is stopped and marking for `cycle` is complete.
    let after = unsafe { heap::after_mark(cycle, &mut freed) };
    debug_assert_eq!(freed.len() as u64, after.large_freed);
    marked.heap_bytes += after.small_live_bytes;
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
    /// Payload bytes.
    bytes: u64,
    /// Heap bytes (large objects while marking; cells added after).
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

/// Prefetches the cache line at `p` (a hint: never faults).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint with no effect on memory, valid for any
    // address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
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
/// Marking is a pipeline that hides the two cache misses of each visit (the
/// handle's table entry, then the object): handle values wait on an
/// explicit, growable stack (roots and fields are pushed unresolved, so
/// that no object graph can make it recurse); a value taken off the stack
/// has its entry prefetched and waits in a short queue; once resolved, its
/// header is prefetched and waits in a second queue; then it is validated
/// against the handle, marked, and its handle fields are pushed. Any value is accepted: one that is not a
/// live handle is dropped when resolved.
struct Marker {
    cycle: u8,
    stack: Vec<u64>,
    entries: Fifo<u64, 8>,
    headers: Fifo<(u64, *mut Header), 8>,
    /// The type of the last object traced (objects of one type cluster).
    last_type: (u32, &'static TypeInfo),
    objects: u64,
    bytes: u64,
    heap_bytes: usize,
}

impl Marker {
    fn new(cycle: u8) -> Marker {
        Marker {
            cycle,
            stack: Vec::with_capacity(1024),
            entries: Fifo::new(0),
            headers: Fifo::new((0, std::ptr::null_mut())),
            last_type: (0, types::unregistered()),
            objects: 0,
            bytes: 0,
            heap_bytes: 0,
        }
    }

    /// Queues a root or field value for marking.
    #[inline(always)]
    fn visit(&mut self, raw: u64) {
        if raw != 0 {
            self.stack.push(raw);
        }
    }

    /// Marks everything reachable from the queued values.
    fn drain(&mut self) {
        loop {
            while !self.entries.is_full() {
                let Some(raw) = self.stack.pop() else { break };
                handles::prefetch_entry(raw);
                self.entries.push(raw);
            }
            while !self.headers.is_full() {
                let Some(raw) = self.entries.pop() else { break };
                if let Some(hdr) = handles::entry_target(raw) {
                    prefetch(hdr);
                    self.headers.push((raw, hdr));
                }
            }
            match self.headers.pop() {
                Some((raw, hdr)) if handles::names_object(raw, hdr) => self.mark(hdr),
                Some(_) => {}
                None if self.entries.len == 0 && self.stack.is_empty() => break,
                None => {}
            }
        }
    }

    /// Marks the live object at `hdr` unless it is marked, and queues its
    /// handle fields.
    #[inline(always)]
    fn mark(&mut self, hdr: *mut Header) {
        // SAFETY: resolved from a live handle: an initialised object that
        // no sweep frees while we mark.
        let (mark, type_id, size) =
            unsafe { (&(*hdr).mark, (*hdr).type_id(), (*hdr).size as usize) };
        if mark.load(Ordering::Relaxed) == self.cycle {
            return;
        }
        mark.store(self.cycle, Ordering::Relaxed);
        self.objects += 1;
        self.bytes += size as u64;
        if size + heap::HEADER <= heap::MAX_SMALL_CELL {
            // SAFETY: a small object lives in a block, whose header word
            // only the marker writes while it runs. The block counts feed
            // the live heap size (after_mark).
            let live = unsafe { &*heap::block_live_counter(hdr) };
            live.store(live.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        } else {
            self.heap_bytes += heap::HEADER + size;
        }
        let info = if type_id == self.last_type.0 {
            self.last_type.1
        } else {
            let Some(info) = types::info_raw(type_id) else {
                debug_assert!(false, "defergc: precise: object of unknown type {type_id}");
                return;
            };
            self.last_type = (type_id, info);
            info
        };
        let words = Header::payload(hdr).cast::<AtomicU64>();
        let field = |i: usize| {
            // SAFETY: the words read are inside the payload: registered
            // handle offsets are, and an array's slots are.
            unsafe { &*words.add(i) }.load(Ordering::Relaxed)
        };
        match info.kind() {
            Kind::Struct => match info.small_bitmap() {
                Some(mut bits) => {
                    while bits != 0 {
                        let word = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        self.visit(field(word));
                    }
                }
                None => {
                    for &off in info.offsets() {
                        self.visit(field(off as usize / 8));
                    }
                }
            },
            Kind::HandleArray => {
                for i in 0..size / 8 {
                    self.visit(field(i));
                }
            }
            Kind::Bytes => {}
        }
    }
}
