//! defer costs: one frame with one defer (Go's BenchmarkDefer shape), and a
//! million loop defers capturing a fresh GC object or only an integer, with
//! the collector running when it decides to (default settings).
// criterion's macros generate undocumented public functions.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use defergc::{defer, gc};
use std::cell::Cell;
use std::time::Duration;

fn one_frame_one_defer(c: &mut Criterion) {
    let hits = Cell::new(0u64);
    c.bench_function("defer/one_frame_one_defer", |b| {
        b.iter(|| {
            defer::call(|f| {
                let hits = &hits;
                f.defer(move || hits.set(hits.get() + 1));
            });
        })
    });
    black_box(hits.get());
}

fn million(c: &mut Criterion) {
    let mut group = c.benchmark_group("defer/million");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("capturing_gc_object", |b| {
        b.iter(|| {
            let sum = Cell::new(0usize);
            defer::call(|f| {
                for i in 0..1_000_000usize {
                    let p = gc::alloc(16).as_ptr().cast::<usize>();
                    // SAFETY: a fresh 16-byte object.
                    unsafe { p.write(i) };
                    let sum = &sum;
                    f.defer(move || {
                        // SAFETY: the record keeps p alive until this runs.
                        let v = unsafe { p.read() };
                        sum.set(sum.get() + v)
                    });
                }
            });
            assert_eq!(sum.get(), 499_999_500_000);
        })
    });
    group.bench_function("capturing_integer", |b| {
        b.iter(|| {
            let sum = Cell::new(0usize);
            defer::call(|f| {
                for i in 0..1_000_000usize {
                    let sum = &sum;
                    f.defer(move || sum.set(sum.get() + i));
                }
            });
            assert_eq!(sum.get(), 499_999_500_000);
        })
    });
    group.finish();
}

criterion_group!(benches, one_frame_one_defer, million);
criterion_main!(benches);
