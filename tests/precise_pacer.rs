//! The pacer's bound on the heap: however far marking falls behind the
//! mutators (three of them on this 2-core machine, with the collector
//! thread a fourth), the heap stays below the live size plus three goal
//! distances (`src/precise/heap/pacer.rs`), because an allocation past the
//! running cycle's allowance waits for it (after marking what it can: the
//! mutators here run hundreds of mark assists a run, and every live node
//! is checked afterwards). Without that wait, mutators that
//! outrun marking grow the heap by whatever they allocate while it runs
//! (GCBench on two mutators reached 270-320 MiB for about 20 MiB live).
//!
//! Its own test binary: the heap's peak is process-wide.
#![cfg(feature = "precise")]

use defergc::precise::{self, Field, Frame, Handle};

/// `struct Node { next: Handle, value: u64 }`: a 32-byte cell.
const NODE_BYTES: usize = 16;
const CELL_BYTES: usize = NODE_BYTES + 16;
/// Nodes each mutator keeps live throughout.
const LIVE_NODES: u64 = 120_000;
/// Garbage nodes each mutator allocates (in lists of 64).
const GARBAGE_NODES: u64 = 3_000_000;
const MUTATORS: u64 = 3;

fn mutator(next: Field) -> Result<(), String> {
    let node = next.type_id();
    let frame = Frame::new().map_err(|e| e.to_string())?;
    // The live list, built front to back: head rooted, each node rooted in
    // its predecessor before the next allocation.
    let head = precise::alloc(node).map_err(|e| e.to_string())?;
    frame.root(head).map_err(|e| e.to_string())?;
    let mut tail = head;
    for i in 1..LIVE_NODES {
        let n = precise::alloc(node).map_err(|e| e.to_string())?;
        precise::write_u64(n, 8, i).map_err(|e| e.to_string())?;
        precise::store_field(tail, next, n).map_err(|e| e.to_string())?;
        tail = n;
    }
    // Garbage: short lists that die at once.
    let slot = frame.root(None).map_err(|e| e.to_string())?;
    for i in 0..GARBAGE_NODES {
        let n = precise::alloc(node).map_err(|e| e.to_string())?;
        if i % 64 != 0 {
            if let Some(prev) = frame.get(slot).map_err(|e| e.to_string())? {
                precise::store_field(n, next, prev).map_err(|e| e.to_string())?;
            }
        }
        frame.set(slot, n).map_err(|e| e.to_string())?;
    }
    // Every live node is still there, in order.
    let mut count = 0;
    let mut at: Option<Handle> = Some(head);
    while let Some(n) = at {
        let value = precise::read_u64(n, 8).map_err(|e| e.to_string())?;
        if value != count {
            return Err(format!("live node {count} holds {value}"));
        }
        count += 1;
        at = precise::load_field(n, next).map_err(|e| e.to_string())?;
    }
    if count != LIVE_NODES {
        return Err(format!(
            "the live list has {count} nodes, expected {LIVE_NODES}"
        ));
    }
    frame.pop().map_err(|e| e.to_string())
}

#[test]
fn the_heap_stays_within_its_bound_while_mutators_outrun_marking() {
    precise::init().unwrap();
    let node = precise::register_type(NODE_BYTES, &[0]).unwrap();
    let next = Field::new(node, 0).unwrap();
    // This thread waits in native code: collections do not wait for it.
    precise::native(|| {
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..MUTATORS)
                .map(|_| s.spawn(move || mutator(next)))
                .collect();
            for w in workers {
                if let Err(why) = w.join().expect("a mutator panicked") {
                    panic!("a mutator failed: {why}");
                }
            }
        })
    })
    .unwrap();
    let stats = precise::stats();
    eprintln!(
        "PEAK {} waits {} assists {} {}",
        stats.peak_heap_size, stats.alloc_waits, stats.assists, stats.assist_objects
    );
    let live = (MUTATORS * LIVE_NODES) as usize * CELL_BYTES;
    // GOGC=100: the goal distance is the live size (at least 4 MiB), and
    // the pacer keeps the heap below the live size plus three of them
    // (peaks reach 44-47 MB here, the bound with three being 46 MB before
    // the blocks the mutators hold); one more for what the goal's live
    // count misses or adds (the garbage lists a snapshot still saw,
    // objects born grey), a block (128 KiB) per mutator, 4 MiB spare.
    // Without the pacer's wait the peak is 168-175 MiB.
    let goal = live.max(4 << 20);
    let bound = live + 4 * goal + MUTATORS as usize * (128 << 10) + (4 << 20);
    assert!(
        stats.peak_heap_size <= bound,
        "peak heap {} bytes, bound {bound} (live {live}); {} allocations waited",
        stats.peak_heap_size,
        stats.alloc_waits
    );
    assert!(
        stats.collections > 0,
        "no collection ran: nothing was checked"
    );
}
