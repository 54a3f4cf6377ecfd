//! precise collector costs: small-object allocation (with collections
//! amortised in, and the fast path alone), a frame push + root + pop, and
//! handle access. `scripts/bench-medians.sh precise` prints the medians.
// criterion's macros generate undocumented public functions.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use defergc::precise::{self, Frame};
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

criterion_group!(benches, alloc, frames, access);
criterion_main!(benches);
