//! Goroutines: scheduling, park/ready, ids, locals.

use defergc::go;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
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
