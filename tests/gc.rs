//! The safe collector API: allocation kinds, collection, finalizers,
//! thread registration (Rust and foreign threads) and statistics.

use defergc::gc;
use serial_test::serial;
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A pointer the collector cannot see: stored complemented.
#[derive(Clone, Copy)]
struct Hidden(usize);

impl Hidden {
    fn new(p: *mut u8) -> Hidden {
        Hidden(!(p as usize))
    }
    fn get(self) -> *mut u8 {
        (!self.0) as *mut u8
    }
}

fn fill(p: *mut u8, len: usize, seed: u8) {
    for i in 0..len {
        // SAFETY: p points to at least len writable bytes.
        unsafe { p.add(i).write(seed.wrapping_add(i as u8)) };
    }
}

fn check(p: *const u8, len: usize, seed: u8) -> bool {
    // SAFETY: p points to at least len readable bytes.
    (0..len).all(|i| unsafe { p.add(i).read() } == seed.wrapping_add(i as u8))
}

/// Allocates garbage so that collections have something to do.
fn churn(bytes: usize) {
    let mut left = bytes;
    while left > 0 {
        black_box(gc::alloc(64));
        left = left.saturating_sub(64);
    }
}

#[test]
#[serial]
fn scanned_and_uncollectable_memory_is_zeroed() {
    for &size in &[1usize, 16, 100, 4096, 100_000] {
        let a = gc::alloc(size).as_ptr();
        let u = gc::alloc_uncollectable(size).as_ptr();
        // SAFETY: both blocks are size bytes long.
        unsafe {
            assert!(
                (0..size).all(|i| a.add(i).read() == 0),
                "GC_malloc({size}) not zeroed"
            );
            assert!(
                (0..size).all(|i| u.add(i).read() == 0),
                "uncollectable({size}) not zeroed"
            );
            gc::free(u);
        }
    }
}

#[test]
#[serial]
fn every_kind_holds_its_contents_and_frees() {
    for kind in [gc::Kind::Scanned, gc::Kind::Atomic, gc::Kind::Uncollectable] {
        let p = gc::try_alloc(kind, 256).expect("small allocation").as_ptr();
        fill(p, 256, 3);
        assert!(check(p, 256, 3));
        // SAFETY: p is a live allocation of ours, not used afterwards.
        unsafe { gc::free(p) };
    }
    let zero = gc::alloc(0).as_ptr();
    assert!(!zero.is_null());
}

#[test]
#[serial]
fn realloc_keeps_contents_and_grows() {
    let p = gc::alloc(64).as_ptr();
    fill(p, 64, 9);
    // SAFETY: p is live and not used after realloc.
    let q = unsafe { gc::realloc(p, 64 * 1024) };
    assert!(!q.is_null());
    assert!(check(q, 64, 9));
    fill(q, 64 * 1024, 1);
    // SAFETY: q is live.
    let r = unsafe { gc::realloc(q, 32) };
    assert!(check(r, 32, 1));
    // SAFETY: a null pointer makes realloc allocate.
    let fresh = unsafe { gc::realloc(std::ptr::null_mut(), 8) };
    assert!(!fresh.is_null());
}

/// Counts finalizations into the counter its client data names. Each test
/// has a counter of its own: finalizers of one test's garbage may run on
/// the finalizer thread while a later test runs, and must not land in that
/// test's count.
unsafe extern "C" fn count_finalized(_obj: *mut c_void, data: *mut c_void) {
    // SAFETY: every registration passes a `&'static AtomicUsize`.
    let counter = unsafe { &*data.cast::<AtomicUsize>() };
    counter.fetch_add(1, Ordering::SeqCst);
}

fn counter_data(counter: &'static AtomicUsize) -> *mut c_void {
    std::ptr::from_ref(counter).cast_mut().cast()
}

/// Allocates `n` finalizable objects and forgets them, in a frame of its
/// own so that no stale pointer stays in the caller's frame.
#[cfg(defergc_boehm)]
#[inline(never)]
fn make_garbage_with_finalizers(n: usize, counter: &'static AtomicUsize) {
    for _ in 0..n {
        let p = gc::alloc(48).as_ptr();
        // SAFETY: p is a fresh collectable object.
        unsafe { gc::register_finalizer(p, Some(count_finalized), counter_data(counter)) };
    }
}

#[test]
#[serial]
#[cfg(defergc_boehm)]
fn collection_frees_unreachable_objects() {
    static FINALIZED: AtomicUsize = AtomicUsize::new(0);
    let counter = &FINALIZED;
    make_garbage_with_finalizers(1000, counter);
    for _ in 0..5 {
        churn(1 << 20);
        gc::collect();
        gc::run_finalizers();
    }
    // Conservative scanning may keep a handful alive through stale words.
    let freed = FINALIZED.load(Ordering::SeqCst);
    assert!(
        freed >= 990,
        "only {freed} of 1000 unreachable objects were finalized"
    );
}

#[test]
#[serial]
#[cfg(defergc_boehm)]
fn finalizers_run_on_their_own_thread_without_being_asked() {
    static FINALIZED: AtomicUsize = AtomicUsize::new(0);
    let counter = &FINALIZED;
    make_garbage_with_finalizers(100, counter);
    // The thread runs them within milliseconds; the bound only turns a
    // finalizer thread that never runs into a failure instead of a hang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while FINALIZED.load(Ordering::SeqCst) < 90 {
        assert!(
            std::time::Instant::now() < deadline,
            "the finalizer thread ran only {} of 100 finalizers",
            FINALIZED.load(Ordering::SeqCst)
        );
        churn(1 << 20);
        gc::collect();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
#[serial]
fn objects_on_a_spawned_threads_stack_survive_collections() {
    const N: usize = 256;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    static FINALIZED: AtomicUsize = AtomicUsize::new(0);
    let counter = &FINALIZED;
    let worker = gc::spawn(move || {
        // The only references live in this array, on this thread's stack.
        let mut objs = [std::ptr::null_mut::<u8>(); N];
        for (i, slot) in objs.iter_mut().enumerate() {
            let p = gc::alloc(128).as_ptr();
            fill(p, 128, i as u8);
            // SAFETY: p is a fresh collectable object.
            unsafe { gc::register_finalizer(p, Some(count_finalized), counter_data(counter)) };
            *slot = p;
        }
        let objs = black_box(objs);
        ready_tx.send(()).unwrap();
        done_rx.recv().unwrap();
        let intact = objs
            .iter()
            .enumerate()
            .filter(|(i, p)| check(**p, 128, *i as u8))
            .count();
        black_box(&objs);
        intact
    });
    ready_rx.recv().unwrap();
    for _ in 0..20 {
        churn(256 << 10);
        gc::collect();
        gc::run_finalizers();
    }
    done_tx.send(()).unwrap();
    assert_eq!(
        worker.join().unwrap(),
        N,
        "objects on a live thread's stack were reclaimed"
    );
    assert_eq!(
        FINALIZED.load(Ordering::SeqCst),
        0,
        "a reachable object was finalized"
    );
}

#[test]
#[serial]
fn uncollectable_memory_survives_without_any_reference() {
    let hidden: Vec<Hidden> = (0..100)
        .map(|i| {
            let p = gc::alloc_uncollectable(64).as_ptr();
            fill(p, 64, i as u8);
            Hidden::new(p)
        })
        .collect();
    for _ in 0..5 {
        churn(1 << 20);
        gc::collect();
    }
    for (i, h) in hidden.iter().enumerate() {
        assert!(
            check(h.get(), 64, i as u8),
            "uncollectable object {i} was reclaimed"
        );
        // SAFETY: a live uncollectable block, freed once.
        unsafe { gc::free(h.get()) };
    }
}

#[test]
#[serial]
#[cfg(defergc_boehm)]
fn uncollectable_memory_is_scanned() {
    static FINALIZED: AtomicUsize = AtomicUsize::new(0);
    let counter = &FINALIZED;
    let root = gc::alloc_uncollectable(8 * 64).as_ptr().cast::<*mut u8>();
    let hidden_root = Hidden::new(root.cast());
    fill_roots(root, 64, counter);
    for _ in 0..5 {
        churn(1 << 20);
        gc::collect();
        gc::run_finalizers();
    }
    assert_eq!(
        FINALIZED.load(Ordering::SeqCst),
        0,
        "object held by root memory was finalized"
    );
    let root = hidden_root.get().cast::<*mut u8>();
    for i in 0..64 {
        // SAFETY: the root block holds 64 live pointers.
        assert!(check(unsafe { root.add(i).read() }, 32, i as u8));
    }
    // SAFETY: a live uncollectable block.
    unsafe { gc::free(root.cast()) };
}

#[cfg(defergc_boehm)]
#[inline(never)]
fn fill_roots(root: *mut *mut u8, n: usize, counter: &'static AtomicUsize) {
    for i in 0..n {
        let p = gc::alloc(32).as_ptr();
        fill(p, 32, i as u8);
        // SAFETY: p is a fresh collectable object; root has n slots.
        unsafe {
            gc::register_finalizer(p, Some(count_finalized), counter_data(counter));
            root.add(i).write(p);
        }
    }
}

#[test]
#[serial]
fn stats_move_with_allocation_and_collection() {
    let before = gc::stats();
    churn(4 << 20);
    gc::collect();
    gc::collect();
    let after = gc::stats();
    if gc::BACKEND == "bdwgc" {
        assert!(
            after.collections >= before.collections + 2,
            "{before:?} -> {after:?}"
        );
        assert!(after.bytes_allocated_total >= before.bytes_allocated_total + (4 << 20));
        assert!(after.heap_size > 0 && after.heap_size >= after.free_bytes);
        assert!(after.markers >= 1);
        assert!(after.gc_time >= before.gc_time);
    } else {
        assert_eq!(after, gc::Stats::default());
    }
}

#[test]
#[serial]
fn threads_register_on_first_use_and_unregister_at_exit() {
    let handles: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                assert!(!gc::is_thread_registered());
                // First touch: collect, not alloc, the path bdwgc aborts on
                // for an unknown thread.
                gc::collect();
                assert!(gc::is_thread_registered());
                let p = gc::alloc(64).as_ptr();
                fill(p, 64, i);
                check(p, 64, i)
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap());
    }
    // Collections after those threads exited must not try to stop them.
    for _ in 0..3 {
        gc::collect();
    }
}

#[test]
#[serial]
fn explicit_guard_unregisters_only_what_it_registered() {
    std::thread::spawn(|| {
        let guard = gc::ThreadGuard::new();
        assert!(gc::is_thread_registered());
        drop(guard);
        assert!(!gc::is_thread_registered());
        black_box(gc::alloc(16));
        assert!(
            gc::is_thread_registered(),
            "use after the guard registers again"
        );
        let inner = gc::ThreadGuard::new();
        drop(inner);
        assert!(
            gc::is_thread_registered(),
            "a guard on a registered thread is a no-op"
        );
    })
    .join()
    .unwrap();
    gc::collect();
}

extern "C" fn foreign_thread_body(arg: *mut c_void) -> *mut c_void {
    let seed = arg as usize as u8;
    gc::collect();
    let mut ok = true;
    for _ in 0..1000 {
        let p = gc::alloc(40).as_ptr();
        fill(p, 40, seed);
        ok &= check(p, 40, seed);
    }
    ok as usize as *mut c_void
}

#[test]
#[serial]
fn foreign_pthreads_register_and_unregister_automatically() {
    for round in 0..50usize {
        let mut tid: libc::pthread_t = 0;
        // SAFETY: a plain pthread running an extern "C" fn that cannot unwind.
        let rc = unsafe {
            libc::pthread_create(
                &mut tid,
                std::ptr::null(),
                foreign_thread_body,
                round as *mut c_void,
            )
        };
        assert_eq!(rc, 0);
        let mut result = std::ptr::null_mut();
        // SAFETY: tid is a joinable thread we created.
        assert_eq!(unsafe { libc::pthread_join(tid, &mut result) }, 0);
        assert_eq!(result as usize, 1, "foreign thread saw corrupted memory");
        gc::collect();
    }
}

#[test]
#[serial]
fn init_with_after_start_is_refused() {
    gc::init();
    assert_eq!(
        gc::init_with(gc::Config::DEFAULT),
        Err(gc::AlreadyInitialized)
    );
}

#[test]
#[serial]
fn heap_pointers_are_recognised() {
    let p = gc::alloc(64).as_ptr();
    let local = 5u64;
    assert_eq!(gc::is_heap_ptr(p), gc::BACKEND == "bdwgc");
    assert!(!gc::is_heap_ptr((&local as *const u64).cast()));
}

#[test]
#[serial]
#[cfg(defergc_boehm)]
fn collection_times_and_pauses_are_measured() {
    let before = gc::stats();
    for _ in 0..5 {
        churn(1 << 20);
        gc::collect();
    }
    let after = gc::stats();
    assert!(after.gc_time > before.gc_time, "{before:?} -> {after:?}");
    assert!(after.stopped_time > before.stopped_time);
    assert!(after.max_pause > std::time::Duration::ZERO);
    assert!(after.max_pause <= after.stopped_time);
    assert!(after.stopped_time <= after.gc_time + std::time::Duration::from_millis(1));
}
