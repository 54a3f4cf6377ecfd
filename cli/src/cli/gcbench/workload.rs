//! The programs `gcbench` runs, written once against the [`Heap`] trait:
//! GCBench (on one mutator or several), binary-trees and the live heap,
//! each checking that its live data survived, and the timing of one run.

use super::heap::Heap;
use std::hint::black_box;
use std::time::{Duration, Instant};

pub(super) const STRETCH_TREE_DEPTH: u32 = 18;
pub(super) const LONG_LIVED_TREE_DEPTH: u32 = 16;
pub(super) const ARRAY_SIZE: usize = 500_000;
pub(super) const MIN_TREE_DEPTH: u32 = 4;
pub(super) const MAX_TREE_DEPTH: u32 = 16;

/// Nodes in a complete tree of `depth`.
fn tree_size(depth: u32) -> u64 {
    (1 << (depth + 1)) - 1
}

/// Trees of `depth` to build so that each depth allocates as much as
/// two stretch trees.
fn num_iters(depth: u32) -> u64 {
    2 * tree_size(STRETCH_TREE_DEPTH) / tree_size(depth)
}

/// Builds a tree top down, storing each new node into an older one. `node`
/// is kept by the caller; every new node is linked into it before the next
/// allocation, so it needs no scope of its own.
fn populate<H: Heap>(heap: &mut H, depth: u32, node: H::Node) {
    if depth == 0 {
        return;
    }
    let left = heap.node();
    heap.set_left(node, left);
    let right = heap.node();
    heap.set_right(node, right);
    populate(heap, depth - 1, left);
    populate(heap, depth - 1, right);
}

/// Builds a tree bottom up: children first, then the node that holds them.
fn make_tree<H: Heap>(heap: &mut H, depth: u32) -> H::Node {
    if depth == 0 {
        return heap.node();
    }
    let scope = heap.enter();
    let left = make_tree(heap, depth - 1);
    heap.keep(left);
    let right = make_tree(heap, depth - 1);
    heap.keep(right);
    // Leaving a scope is no safepoint: the caller keeps the node before
    // its next allocation, as it would a pointer returned in a register.
    let node = heap.node_with(left, right);
    heap.leave(scope);
    node
}

fn time_construction<H: Heap>(heap: &mut H, depth: u32) {
    let iters = num_iters(depth);
    for _ in 0..iters {
        let scope = heap.enter();
        let tree = heap.node();
        heap.keep(tree);
        populate(heap, depth, tree);
        heap.leave(scope);
    }
    for _ in 0..iters {
        make_tree(heap, depth);
    }
}

/// Nodes reachable from `node`.
fn count_nodes<H: Heap>(heap: &H, node: H::Node) -> u64 {
    heap.poll();
    match heap.children(node) {
        None => 1,
        Some((left, right)) => 1 + count_nodes(heap, left) + count_nodes(heap, right),
    }
}

/// Nodes reachable from `tree`, which nothing else keeps: counting polls,
/// so it is kept meanwhile.
fn count_kept<H: Heap>(heap: &mut H, tree: H::Node) -> u64 {
    let scope = heap.enter();
    heap.keep(tree);
    let nodes = count_nodes(heap, tree);
    heap.leave(scope);
    nodes
}

/// One run's figures.
pub(super) struct Run {
    pub(super) elapsed: Duration,
    /// Processor time of the whole process (every thread: the mutators and
    /// the collector's own) during the run and its settling.
    pub(super) cpu: Duration,
    pub(super) collections: u64,
    pub(super) peak_heap_bytes: usize,
}

/// The GCBench program; fails when the live data did not survive.
pub(super) fn gcbench_body<H: Heap>(heap: &mut H) -> Result<(), String> {
    // Stretch the heap with a tree that dies at once. Dead trees are not
    // passed to black_box: it would spill them to a stack slot, where the
    // conservative collector would find and keep them.
    make_tree(heap, STRETCH_TREE_DEPTH);

    // Live for the whole run: a tree and a half-filled array.
    let scope = heap.enter();
    let long_lived = heap.node();
    heap.keep(long_lived);
    populate(heap, LONG_LIVED_TREE_DEPTH, long_lived);
    let array = heap.array(ARRAY_SIZE);
    heap.keep_array(array);
    for i in 0..ARRAY_SIZE / 2 {
        heap.array_set(array, i, 1.0 / i as f64);
        heap.poll();
    }

    for depth in (MIN_TREE_DEPTH..=MAX_TREE_DEPTH).step_by(2) {
        time_construction(heap, depth);
    }

    let nodes = count_nodes(heap, black_box(long_lived));
    let probe = heap.array_get(black_box(array), 1000);
    heap.leave(scope);
    if nodes != tree_size(LONG_LIVED_TREE_DEPTH) {
        return Err(format!(
            "the long-lived tree has {nodes} nodes, expected {}",
            tree_size(LONG_LIVED_TREE_DEPTH)
        ));
    }
    if probe != 1.0 / 1000.0 {
        return Err(format!("the long-lived array holds {probe} at 1000"));
    }
    Ok(())
}

/// Times `body` on `heap` as one run.
pub(super) fn timed<H: Heap>(
    heap: &mut H,
    body: impl FnOnce(&mut H) -> Result<(), String>,
) -> Result<Run, String> {
    let before = heap.counters();
    let cpu = process_cpu();
    let start = Instant::now();
    body(heap)?;
    let elapsed = start.elapsed();
    let after = heap.counters();
    Ok(Run {
        elapsed,
        cpu: process_cpu().saturating_sub(cpu),
        collections: after.collections - before.collections,
        peak_heap_bytes: after.peak_heap_bytes,
    })
}

/// GCBench on `threads` mutators at once, each on its own heap handle
/// from `heap.spawner()`; this thread waits for them.
pub(super) fn gcbench_mt_body<H: Heap>(heap: &mut H, threads: usize) -> Result<(), String> {
    let spawn = heap.spawner();
    let spawn = &spawn;
    let results: Vec<Result<(), String>> = H::blocking(|| {
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| s.spawn(move || gcbench_body(&mut spawn())))
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|_| Err("a mutator panicked".into()))
                })
                .collect()
        })
    });
    results.into_iter().collect()
}

/// binary-trees: a stretch tree of `max_depth + 1`, a long-lived tree of
/// `max_depth`, then `2^(max_depth - d + 4)` trees of each depth `d` in
/// `4..=max_depth` step 2, each built bottom-up and its nodes counted.
pub(super) fn binary_trees_body<H: Heap>(heap: &mut H, max_depth: u32) -> Result<(), String> {
    let check = |what: &str, got: u64, want: u64| {
        if got == want {
            Ok(())
        } else {
            Err(format!("{what} has {got} nodes, expected {want}"))
        }
    };
    let stretch = make_tree(heap, max_depth + 1);
    check(
        "the stretch tree",
        count_kept(heap, stretch),
        tree_size(max_depth + 1),
    )?;
    let scope = heap.enter();
    let long_lived = make_tree(heap, max_depth);
    heap.keep(long_lived);
    for depth in (MIN_TREE_DEPTH..=max_depth).step_by(2) {
        let iterations = 1u64 << (max_depth - depth + MIN_TREE_DEPTH);
        let mut nodes = 0;
        for _ in 0..iterations {
            let tree = make_tree(heap, depth);
            nodes += count_kept(heap, tree);
        }
        check(
            &format!("{iterations} trees of depth {depth}"),
            nodes,
            iterations * tree_size(depth),
        )?;
    }
    let nodes = count_nodes(heap, black_box(long_lived));
    heap.leave(scope);
    check("the long-lived tree", nodes, tree_size(max_depth))
}

/// Live-heap workload: `live_mb` megabytes of trees hung off a spine, each
/// tree replaced in turn by a new one (the old one becomes garbage) until
/// the whole live heap has been replaced `rounds` times; fails when a tree
/// lost nodes.
pub(super) fn live_heap_once<H: Heap>(
    heap: &mut H,
    live_mb: usize,
    rounds: usize,
) -> Result<Run, String> {
    const DEPTH: u32 = 14;
    // 32 bytes a node on either collector: bdwgc's 24 and its extra byte
    // round up to 32, the precise heap's 8-byte header makes 32.
    let trees = ((live_mb << 20) / (32 * tree_size(DEPTH) as usize)).max(1);
    let before = heap.counters();
    let cpu = process_cpu();
    let start = Instant::now();
    let scope = heap.enter();
    // The spine: a list whose nodes hold a tree on the left, the next
    // spine node on the right.
    let spine = heap.node();
    heap.keep(spine);
    let mut last = spine;
    for _ in 1..trees {
        let next = heap.node();
        heap.set_right(last, next);
        last = next;
    }
    let spine_node = |heap: &H, mut i: usize| {
        let mut n = spine;
        while i > 0 {
            n = heap.children_raw(n).1.expect("spine cut short");
            i -= 1;
            heap.poll();
        }
        n
    };
    for t in 0..trees * (rounds + 1) {
        let tree = make_tree(heap, DEPTH);
        // No allocation between making the tree and linking it in.
        let at = spine_node(heap, t % trees);
        heap.set_left(at, tree);
    }
    let elapsed = start.elapsed();
    let cpu = process_cpu().saturating_sub(cpu);
    let after = heap.counters();
    for i in 0..trees {
        let tree = heap.children_raw(spine_node(heap, i)).0;
        let nodes = tree.map_or(0, |t| count_nodes(heap, t));
        if nodes != tree_size(DEPTH) {
            return Err(format!("tree {i} has {nodes} nodes"));
        }
    }
    heap.leave(scope);
    Ok(Run {
        elapsed,
        cpu,
        collections: after.collections - before.collections,
        peak_heap_bytes: after.peak_heap_bytes,
    })
}

/// The processor time this process has used so far, in user and kernel
/// mode, over all its threads.
pub(super) fn process_cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given, which is ours and
    // zeroed (a valid rusage); RUSAGE_SELF cannot fail.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time =
        |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32).saturating_mul(1000));
    time(usage.ru_utime) + time(usage.ru_stime)
}
