//! Goroutines: scheduling, park/ready, ids, locals.

use defergc::go;
use serial_test::serial;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
#[serial]
fn thousands_of_goroutines_run_and_park() {
    let status = go::run(|| {
        let n = 10_000;
        let done = Arc::new(AtomicUsize::new(0));
        let me = go::Goroutine::current().unwrap();
        for i in 0..n {
            let done = done.clone();
            go::go(move || {
                go::gosched();
                assert!(go::goid() > 0);
                assert!(go::set_local(0, i));
                go::gosched();
                assert_eq!(go::local(0), Some(i));
                if done.fetch_add(1, Ordering::SeqCst) + 1 == n {
                    me.ready();
                }
            });
        }
        while done.load(Ordering::SeqCst) < n {
            go::park("test");
        }
    });
    assert_eq!(status, 0);
}

/// A main goroutine started from a plain thread is runnable from the
/// moment it counts as a goroutine: a worker that parks meanwhile (the
/// previous run's, going idle) must not take the program for deadlocked.
/// Each run here starts just as the last one's workers go idle.
#[test]
#[serial]
fn starting_main_goroutines_back_to_back_is_never_a_deadlock() {
    for i in 0..20_000u64 {
        let total = std::sync::Arc::new(AtomicUsize::new(0));
        let t = total.clone();
        assert_eq!(
            go::run(move || {
                t.fetch_add(i as usize, Ordering::SeqCst);
            }),
            0
        );
        assert_eq!(total.load(Ordering::SeqCst), i as usize);
    }
}
