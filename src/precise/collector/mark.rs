//! Marking: what a cycle's marking needs of the heap ([`Tracer`]), and the
//! collector's marker, which assists share.

use super::assist::{share, ASSISTS};
use crate::cache::prefetch;
use crate::precise::handles::{self, Found};
use crate::precise::heap::{self, Header};
use crate::precise::marking;
use crate::precise::mutator;
use crate::precise::root_scan;
use crate::precise::types::{self, Kind, TypeInfo};
use std::sync::atomic::{AtomicU64, Ordering};

/// What a cycle's marking needs of the heap: the [`Marker`], or the
/// model heap of `tests/precise_loom.rs`, which runs [`mark_cycle`](super::cycle::mark_cycle) under
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
    /// (mark assists, see `poll.rs`) until [`Tracer::close_assists`]. The
    /// loom model has none.
    fn open_assists(&mut self) {}
    /// Returns once no assist runs, with what they marked counted.
    fn close_assists(&mut self) {}
}

/// Marking steps between two looks at the assist state.
pub(super) const CHECK_EVERY: u32 = 1024;

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
pub(super) struct Marker {
    cycle: u8,
    /// The mark of the last completed cycle: objects to mark carry it.
    prev: u8,
    stack: Vec<u64>,
    headers: Fifo<(u64, Found), 16>,
    /// The type of the last object traced (objects of one type cluster).
    last_type: TypeView,
    pub(super) objects: u64,
    pub(super) bytes: u64,
    pub(super) heap_bytes: usize,
    /// Objects allocated in all when the snapshot was complete.
    pub(super) allocated: u64,
    /// Other markers (assists) may run: claim marks with a compare and
    /// swap, and share work through the grey queue.
    pub(super) shared: bool,
    /// The collector may open assists when a mutator asks (between
    /// open_assists and close_assists).
    may_open: bool,
    /// Stop marking after this many objects (an assist's budget).
    pub(super) limit: u64,
    /// Marks until the next look at the assist state.
    until_check: u32,
    /// The collector's marker: tells the pacer its progress at every look
    /// at the assist state.
    pub(super) paces: bool,
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
        self.allocated = mutator::allocation_totals().0;
        root_scan::scan_shared_roots(&mut |raw| self.visit(raw));
    }

    fn globals(&mut self) {
        root_scan::for_each_global(&mut |raw| self.visit(raw));
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
    pub(super) fn new(cycle: u8) -> Marker {
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
    pub(super) fn hand_back(&mut self) {
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
