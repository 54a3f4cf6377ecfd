//! Small-object allocation through `defergc::gc`: `alloc(32)` on the main
//! thread and on a second thread that registered itself on first use, and
//! `alloc_atomic(32)`, and the main thread's with heap-profile sampling
//! off (the others sample at Go's default rate). The objects die at once, so the figures include the
//! collections (and sweeping) that the allocation rate pays for. And
//! `read_memstats` while 8 other threads allocate (Go's ReadMemStats; the
//! goal is under 1 us).
//!
//! Skipped under `nogc`, where these functions are malloc and every object
//! would leak.

use criterion::Criterion;
use defergc::gc;
use std::hint::black_box;
use std::time::{Duration, Instant};

const SIZE: usize = 32;

fn alloc_main_thread(c: &mut Criterion) {
    c.bench_function("alloc(32) main thread", |b| {
        b.iter(|| gc::alloc(black_box(SIZE)))
    });
}

fn alloc_main_thread_sampling_off(c: &mut Criterion) {
    let previous = gc::profile::set_mem_profile_rate(0);
    c.bench_function("alloc(32) main thread, heap profile sampling off", |b| {
        b.iter(|| gc::alloc(black_box(SIZE)))
    });
    gc::profile::set_mem_profile_rate(previous);
}

fn alloc_second_thread(c: &mut Criterion) {
    c.bench_function("alloc(32) second thread", |b| {
        b.iter_custom(|iters| {
            // A fresh thread each time, registered by its first allocation
            // (not by gc::spawn); that one-off registration is not timed.
            std::thread::spawn(move || -> Duration {
                black_box(gc::alloc(SIZE));
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(gc::alloc(black_box(SIZE)));
                }
                start.elapsed()
            })
            .join()
            .expect("the benchmark thread panicked")
        })
    });
}

fn alloc_atomic_main_thread(c: &mut Criterion) {
    c.bench_function("alloc_atomic(32) main thread", |b| {
        b.iter(|| gc::alloc_atomic(black_box(SIZE)))
    });
}

fn read_memstats_alone(c: &mut Criterion) {
    c.bench_function("read_memstats, alone", |b| {
        b.iter(|| black_box(gc::read_memstats()).mallocs)
    });
}

fn read_memstats_while_8_threads_allocate(c: &mut Criterion) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..1000 {
                        black_box(gc::alloc(SIZE));
                    }
                }
            })
        })
        .collect();
    c.bench_function("read_memstats, 8 threads allocating", |b| {
        b.iter(|| black_box(gc::read_memstats()).mallocs)
    });
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("an allocating thread panicked");
    }
}

fn main() {
    if gc::BACKEND != "bdwgc" {
        println!(
            "alloc: skipped, bdwgc is not built (backend \"{}\")",
            gc::BACKEND
        );
        return;
    }
    // What criterion_group!/criterion_main! expand to, written out so that
    // no undocumented public function is generated.
    let mut c = Criterion::default().configure_from_args();
    alloc_main_thread(&mut c);
    alloc_main_thread_sampling_off(&mut c);
    alloc_second_thread(&mut c);
    alloc_atomic_main_thread(&mut c);
    read_memstats_alone(&mut c);
    read_memstats_while_8_threads_allocate(&mut c);
    c.final_summary();
}
