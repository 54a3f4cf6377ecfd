//! `GcAlloc` as the global allocator of this whole test binary (the test
//! harness, its threads and its strings included).

use defergc::gc::{self, GcAlloc};
use std::alloc::{GlobalAlloc, Layout};

#[global_allocator]
static ALLOC: GcAlloc = GcAlloc;

#[test]
fn every_alignment_up_to_4096_is_honoured_and_zeroed() {
    let mut align = 1;
    while align <= 4096 {
        for &size in &[1usize, 7, 64, 1000, 5000, 70_000] {
            let layout = Layout::from_size_align(size, align).unwrap();
            // SAFETY: a non-zero-sized, valid layout.
            let p = unsafe { ALLOC.alloc_zeroed(layout) };
            assert!(!p.is_null());
            assert_eq!(p as usize % align, 0, "size {size} align {align}");
            // SAFETY: p has size bytes.
            unsafe {
                assert!(
                    (0..size).all(|i| *p.add(i) == 0),
                    "size {size} align {align} not zeroed"
                );
                std::ptr::write_bytes(p, 0xAB, size);
                // Growing keeps the alignment and the contents.
                let q = ALLOC.realloc(p, layout, size * 3);
                assert!(!q.is_null());
                assert_eq!(q as usize % align, 0);
                assert!((0..size).all(|i| *q.add(i) == 0xAB));
                ALLOC.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
            }
        }
        align *= 2;
    }
}

#[repr(align(4096))]
struct Page([u8; 4096]);

#[test]
fn over_aligned_boxes_and_vectors_work() {
    let pages: Vec<Box<Page>> = (0..64).map(|i| Box::new(Page([i as u8; 4096]))).collect();
    for (i, p) in pages.iter().enumerate() {
        assert_eq!(&**p as *const Page as usize % 4096, 0);
        assert!(p.0.iter().all(|&b| b == i as u8));
    }
    let mut v: Vec<u64> = Vec::new();
    for i in 0..100_000u64 {
        v.push(i * 3);
    }
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
}

/// Only bdwgc collects: under `nogc` there is nothing to keep alive.
#[cfg(defergc_boehm)]
mod collected {
    use super::*;
    use serial_test::serial;
    use std::ffi::c_void;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static FINALIZED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn count(_obj: *mut c_void, _data: *mut c_void) {
        FINALIZED.fetch_add(1, Ordering::SeqCst);
    }

    #[inline(never)]
    fn gc_objects_in_a_vec(n: usize) -> Vec<usize> {
        (0..n)
            .map(|i| {
                let p = gc::alloc(32).as_ptr();
                // SAFETY: p is a fresh 32-byte object.
                unsafe {
                    p.cast::<usize>().write(i);
                    gc::register_finalizer(p, Some(count), std::ptr::null_mut());
                }
                p as usize
            })
            .collect()
    }

    #[test]
    #[serial]
    fn gc_pointers_kept_in_rust_heap_containers_stay_alive() {
        FINALIZED.store(0, Ordering::SeqCst);
        let v = gc_objects_in_a_vec(1000);
        for _ in 0..5 {
            for _ in 0..10_000 {
                std::hint::black_box(gc::alloc(64));
            }
            gc::collect();
            gc::run_finalizers();
        }
        assert_eq!(
            FINALIZED.load(Ordering::SeqCst),
            0,
            "an object referenced from a Vec died"
        );
        for (i, &p) in v.iter().enumerate() {
            // SAFETY: the objects are alive (checked above) and hold their index.
            assert_eq!(unsafe { (p as *const usize).read() }, i);
        }
    }
}

#[test]
fn threads_allocate_through_the_collector() {
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let s: Vec<String> = (0..1000).map(|i| format!("{t}-{i}")).collect();
                s.iter().enumerate().all(|(i, x)| *x == format!("{t}-{i}"))
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap());
    }
    gc::collect();
}
