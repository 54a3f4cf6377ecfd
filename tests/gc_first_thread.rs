//! The thread that starts the collector is registered by it, and leaves it
//! when it exits, like any other thread: a record left behind would belong
//! to no thread, its stop signals would never be answered, and the next
//! collection would wait for it until bdwgc aborts.
//!
//! Alone in its binary: the collector must start on the thread under test.

#![cfg(defergc_boehm)]

use defergc::gc;

#[test]
fn the_thread_that_started_the_collector_leaves_it_at_exit() {
    std::thread::spawn(|| {
        gc::init();
        // Starting the collector is all this thread does with it.
    })
    .join()
    .unwrap();
    // Collections stop every registered thread; they complete only if the
    // exited one is gone from the collector's list.
    for i in 0..20 {
        let p = gc::alloc(64).cast::<u64>();
        // SAFETY: a fresh 64-byte object.
        unsafe { p.as_ptr().write(i) };
        gc::collect();
        // SAFETY: still referenced (p is live on this stack).
        assert_eq!(unsafe { p.as_ptr().read() }, i);
    }
}
