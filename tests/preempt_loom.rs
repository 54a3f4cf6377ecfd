//! A worker's preemption request on the real code
//! (`src/go/async_preempt.rs`'s `Request`), checked exhaustively by loom:
//! a request is never lost (taken, or still pending at the end), never
//! taken twice, and one made after the worker's take stays pending for
//! the next check.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test preempt_loom
//! ```
#![cfg(loom)]

use defergc::go::model::PreemptRequest;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

/// One requester and two takers (the handler and a cooperative check):
/// the request is answered by one take, or still pending at the end;
/// never taken twice. (A take that loads and then stores, instead of
/// one compare-and-swap, fails this: both takers see it.)
#[test]
fn a_request_is_taken_once_or_stays_pending() {
    loom::model(|| {
        let r = Arc::new(PreemptRequest::new());
        let taken = Arc::new(AtomicUsize::new(0));
        let requester = {
            let r = r.clone();
            thread::spawn(move || r.make())
        };
        let taker = {
            let (r, taken) = (r.clone(), taken.clone());
            thread::spawn(move || {
                if r.take() {
                    taken.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        if r.take() {
            taken.fetch_add(1, Ordering::SeqCst);
        }
        requester.join().unwrap();
        taker.join().unwrap();
        let taken = taken.load(Ordering::SeqCst);
        assert!(taken <= 1, "one request taken {taken} times");
        assert!(taken == 1 || r.pending(), "the request was lost");
    });
}

/// A request made after the worker took the last one is pending for its
/// next check.
#[test]
fn a_request_after_a_take_stays_pending() {
    loom::model(|| {
        let r = Arc::new(PreemptRequest::new());
        r.make();
        let worker = {
            let r = r.clone();
            thread::spawn(move || r.take())
        };
        let first_taken = worker.join().unwrap();
        assert!(first_taken);
        let requester = {
            let r = r.clone();
            thread::spawn(move || r.make())
        };
        let t = {
            let r = r.clone();
            thread::spawn(move || r.take())
        };
        requester.join().unwrap();
        let took = t.join().unwrap();
        assert!(took || r.pending(), "the second request was lost");
        assert!(!(took && r.pending()));
    });
}
