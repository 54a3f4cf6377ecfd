//! tls slot costs: get and set on an initialised slot, and the first touch
//! of a slot on a new thread (collector registration included).
// criterion's macros generate undocumented public functions.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use defergc::tls;
use std::time::{Duration, Instant};

fn get_set(c: &mut Criterion) {
    let slot = tls::alloc::<usize>(None);
    slot.set(1);
    c.bench_function("tls/get", |b| b.iter(|| black_box(black_box(slot).get())));
    c.bench_function("tls/set", |b| {
        let mut i = 0usize;
        b.iter(|| {
            i += 1;
            black_box(black_box(slot).set(i))
        })
    });
    static STATIC: tls::StaticSlot<usize> = tls::StaticSlot::new(None);
    STATIC.set(1);
    c.bench_function("tls/static_get", |b| b.iter(|| black_box(STATIC.get())));
}

fn first_touch(c: &mut Criterion) {
    let slot = tls::alloc::<usize>(None);
    c.bench_function("tls/first_touch_on_new_thread", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += std::thread::spawn(move || {
                    let start = Instant::now();
                    slot.set(black_box(7));
                    start.elapsed()
                })
                .join()
                .unwrap();
            }
            total
        })
    });
}

criterion_group!(benches, get_set, first_touch);
criterion_main!(benches);
