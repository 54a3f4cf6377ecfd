//! A test's main goroutine and the thread it runs on. Test crates
//! include it with `mod gorun;`.
#![allow(dead_code)] // not every test uses every helper

use defergc::go;

/// `go::run`, with the main goroutine's panic report in the failure.
pub fn run<F: FnOnce() + Send + 'static>(main: F) {
    if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| go::run(main))) {
        let report = e
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_else(|| "(no report)".into());
        panic!("the main goroutine panicked:\n{report}");
    }
}

/// The calling thread's id.
pub fn gettid() -> i64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) }
}
