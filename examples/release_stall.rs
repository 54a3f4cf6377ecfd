//! How long `go` statements stall when the stacks of a million finished
//! goroutines are given back to the kernel: a million goroutines park on
//! a channel and finish; after an idle spell longer than the pool's
//! release delay, rounds of 100 short goroutines run, and the slowest
//! round is printed.
//!
//! ```text
//! cargo run --release --example release_stall
//! ```

use defergc::go::{self, Chan, WaitGroup};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    go::run(|| {
        let gate = Chan::<()>::new(0);
        let wg = Arc::new(WaitGroup::new());
        wg.add(1_000_000).unwrap();
        for _ in 0..1_000_000 {
            let (gate, wg) = (gate.clone(), wg.clone());
            go::go(move || {
                let _ = gate.recv();
                wg.done().unwrap();
            });
        }
        gate.close();
        wg.wait();
        go::sleep(Duration::from_millis(1500));
        let mut worst = Duration::ZERO;
        for _ in 0..200 {
            let t = Instant::now();
            let wg = Arc::new(WaitGroup::new());
            wg.add(100).unwrap();
            for _ in 0..100 {
                let wg = wg.clone();
                go::go(move || wg.done().unwrap());
            }
            wg.wait();
            worst = worst.max(t.elapsed());
            go::sleep(Duration::from_millis(5));
        }
        println!("slowest round of 100 goroutines after the idle spell: {worst:?}");
    });
}
