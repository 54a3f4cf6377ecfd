//! precise collector costs: small-object allocation (with collections
//! amortised in, and the fast path alone), a frame push + root + pop,
//! handle access, and marking a tree laid out as either order of building
//! leaves it. `scripts/bench-medians.sh precise` prints the medians.
// criterion's macros generate undocumented public functions.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use defergc::precise::{self, Field, Frame, Handle, TypeId};
use std::time::Instant;

fn alloc(c: &mut Criterion) {
    // struct { next: Handle, value: u64 }: a 32-byte cell.
    let node = precise::register_type(16, &[0]).unwrap();
    c.bench_function("precise/alloc_small", |b| {
        b.iter(|| black_box(precise::alloc(black_box(node)).unwrap()))
    });
    // The fast path alone: no collection inside the timed loop (the
    // garbage is collected after each sample, untimed).
    c.bench_function("precise/alloc_small_no_gc", |b| {
        b.iter_custom(|iters| {
            precise::set_gc_percent(None);
            let start = Instant::now();
            for _ in 0..iters {
                black_box(precise::alloc(black_box(node)).unwrap());
            }
            let elapsed = start.elapsed();
            precise::set_gc_percent(Some(100));
            precise::collect().unwrap();
            elapsed
        })
    });
    let bytes = precise::register_bytes_type().unwrap();
    c.bench_function("precise/alloc_array_64", |b| {
        b.iter(|| black_box(precise::alloc_array(black_box(bytes), 64).unwrap()))
    });
}

fn frames(c: &mut Criterion) {
    let node = precise::register_type(16, &[0]).unwrap();
    let h = precise::alloc(node).unwrap();
    c.bench_function("precise/push_root_pop", |b| {
        b.iter(|| {
            let f = precise::push_frame().unwrap();
            precise::root(black_box(h)).unwrap();
            precise::pop_frame(f).unwrap();
        })
    });
    c.bench_function("precise/frame_guard_root", |b| {
        b.iter(|| {
            let f = Frame::new().unwrap();
            f.root(black_box(h)).unwrap();
            drop(f);
        })
    });
}

fn access(c: &mut Criterion) {
    let node = precise::register_type(16, &[0]).unwrap();
    let frame = Frame::new().unwrap();
    let a = precise::alloc(node).unwrap();
    frame.root(a).unwrap();
    let b2 = precise::alloc(node).unwrap();
    frame.root(b2).unwrap();
    // Stores of `b2` look it up: it is not among this thread's last two
    // allocations (see `store_field_fresh`).
    let fresh = [precise::alloc(node).unwrap(), precise::alloc(node).unwrap()];
    for h in fresh {
        frame.root(h).unwrap();
    }
    c.bench_function("precise/deref", |b| {
        b.iter(|| black_box(precise::deref(black_box(a)).unwrap()))
    });
    c.bench_function("precise/load", |b| {
        b.iter(|| black_box(precise::load(black_box(a), 0).unwrap()))
    });
    c.bench_function("precise/store", |b| {
        b.iter(|| precise::store(black_box(a), 0, black_box(b2)).unwrap())
    });
    let next = precise::Field::new(node, 0).unwrap();
    c.bench_function("precise/load_field", |b| {
        b.iter(|| black_box(precise::load_field(black_box(a), black_box(next)).unwrap()))
    });
    c.bench_function("precise/store_field", |b| {
        b.iter(|| precise::store_field(black_box(a), black_box(next), black_box(b2)).unwrap())
    });
    // The value is the thread's last allocation: stored without a lookup.
    c.bench_function("precise/store_field_fresh", |b| {
        b.iter(|| precise::store_field(black_box(a), black_box(next), black_box(fresh[1])).unwrap())
    });
    c.bench_function("precise/read_u64", |b| {
        b.iter(|| black_box(precise::read_u64(black_box(a), 8).unwrap()))
    });
    // Pointer chasing: each load needs the handle the previous one
    // returned, so a lookup's whole chain of dependent loads is paid per
    // hop (the loads above overlap from one iteration to the next). A ring
    // of 4,096 nodes, each on a cache line of its own (garbage between
    // them), over 8 blocks: 1 MiB, most of it in the L2 cache here.
    let mut ring = vec![precise::alloc(node).unwrap()];
    frame.root(ring[0]).unwrap();
    for _ in 1..4096 {
        let n = precise::alloc(node).unwrap();
        frame.root(n).unwrap();
        precise::store_field(*ring.last().unwrap(), next, n).unwrap();
        ring.push(n);
        for _ in 0..7 {
            black_box(precise::alloc(node).unwrap());
        }
    }
    precise::store_field(*ring.last().unwrap(), next, ring[0]).unwrap();
    let mut at = ring[0];
    c.bench_function("precise/chase_field", |b| {
        b.iter(|| {
            at = precise::load_field(at, next).unwrap().unwrap();
        })
    });
}

/// A tree of `depth` built bottom up: each node allocated after its
/// children (with their fields), so a subtree is one stretch of memory.
fn bottom_up(node: TypeId, depth: u32) -> Handle {
    if depth == 0 {
        return precise::alloc(node).unwrap();
    }
    let frame = Frame::new().unwrap();
    let left = bottom_up(node, depth - 1);
    frame.root(left).unwrap();
    let right = bottom_up(node, depth - 1);
    frame.root(right).unwrap();
    precise::alloc_with(node, &[Some(left), Some(right)]).unwrap()
}

/// Fills in a tree of `depth` under `at` top down: both children of a node
/// are allocated together, before either's subtree.
fn top_down(node: TypeId, [left, right]: [Field; 2], depth: u32, at: Handle) {
    if depth == 0 {
        return;
    }
    let l = precise::alloc(node).unwrap();
    precise::store_field(at, left, l).unwrap();
    let r = precise::alloc(node).unwrap();
    precise::store_field(at, right, r).unwrap();
    top_down(node, [left, right], depth - 1, l);
    top_down(node, [left, right], depth - 1, r);
}

/// A whole collection (handshakes and all) with a rooted tree of 2^18 - 1
/// nodes (8 MiB) as the live heap: throughput in objects marked. GCBench's
/// long-lived tree is built top down, binary-trees' bottom up; the marker
/// meets each cell's lines in a different order.
fn marking(c: &mut Criterion) {
    const DEPTH: u32 = 17;
    let node = precise::register_type(24, &[0, 8]).unwrap();
    let fields = [Field::new(node, 0).unwrap(), Field::new(node, 8).unwrap()];
    let old = precise::set_gc_percent(None);
    let mut group = c.benchmark_group("precise/mark_tree");
    group.throughput(Throughput::Elements((1 << (DEPTH + 1)) - 1));
    for order in ["bottom_up", "top_down"] {
        let frame = Frame::new().unwrap();
        let tree = if order == "bottom_up" {
            bottom_up(node, DEPTH)
        } else {
            let root = precise::alloc(node).unwrap();
            frame.root(root).unwrap();
            top_down(node, fields, DEPTH, root);
            root
        };
        frame.root(tree).unwrap();
        precise::collect().unwrap();
        group.bench_function(order, |b| b.iter(|| precise::collect().unwrap()));
        drop(frame);
        precise::collect().unwrap();
    }
    group.finish();
    precise::set_gc_percent(old);
}

criterion_group!(benches, alloc, frames, access, marking);
criterion_main!(benches);
