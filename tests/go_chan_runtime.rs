//! Cases of Go's runtime channel and select tests (runtime/chan_test.go),
//! translated to the Rust API: each names the Go test it comes from. Where
//! Go sleeps to let a goroutine block, these do too; the checks are of
//! what must (not) have happened, never of how fast.

use defergc::go::{self, Chan, Select, TryRecv};
use serial_test::serial;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn run(f: impl FnOnce() + Send + 'static) {
    assert_eq!(go::run(f), 0);
}

const PAUSE: Duration = Duration::from_millis(1);

/// Go's TestChan, for capacities 0 to 5: a receive from an empty channel
/// and a send to a full one block; a closed channel gives its buffered
/// values, then zero values and not-ok; values come out in order; len
/// and cap.
#[test]
#[serial]
fn test_chan() {
    run(|| {
        for cap in 0..6usize {
            // A receive from an empty channel blocks.
            let c = Chan::<u64>::new(cap);
            let got = Arc::new(AtomicBool::new(false));
            {
                let (c, got) = (c.clone(), got.clone());
                go::go(move || {
                    assert_eq!(c.recv(), Some(0));
                    got.store(true, Ordering::SeqCst);
                });
            }
            go::sleep(PAUSE);
            assert!(
                !got.load(Ordering::SeqCst),
                "cap {cap}: received from an empty channel"
            );
            c.send(0);
            while !got.load(Ordering::SeqCst) {
                go::gosched();
            }

            // A send to a full channel blocks.
            let c = Chan::<u64>::new(cap);
            for i in 0..cap as u64 {
                c.send(i);
            }
            let sent = Arc::new(AtomicBool::new(false));
            {
                let (c, sent) = (c.clone(), sent.clone());
                go::go(move || {
                    c.send(cap as u64);
                    sent.store(true, Ordering::SeqCst);
                });
            }
            go::sleep(PAUSE);
            assert!(
                !sent.load(Ordering::SeqCst),
                "cap {cap}: sent to a full channel"
            );
            assert_eq!(c.recv(), Some(0));
            while !sent.load(Ordering::SeqCst) {
                go::gosched();
            }
            for i in 1..=cap as u64 {
                assert_eq!(c.recv(), Some(i), "cap {cap}: out of order");
            }

            // Closed: the buffered values, then not-ok, for ever.
            let c = Chan::<u64>::new(cap);
            for i in 0..cap as u64 {
                c.send(i);
            }
            c.close();
            for i in 0..cap as u64 {
                assert_eq!(c.recv(), Some(i));
            }
            for _ in 0..3 {
                assert_eq!(c.recv(), None);
                assert_eq!(c.try_recv(), TryRecv::Closed);
            }

            // A close wakes a blocked receiver with not-ok.
            let c = Chan::<u64>::new(cap);
            let done = Chan::<Option<u64>>::new(1);
            {
                let (c, done) = (c.clone(), done.clone());
                go::go(move || done.send(c.recv()));
            }
            go::sleep(PAUSE);
            c.close();
            assert_eq!(done.recv(), Some(None));

            // FIFO through a producer and a consumer.
            let c = Chan::<u64>::new(cap);
            let n = 1000u64;
            {
                let c = c.clone();
                go::go(move || {
                    for i in 0..n {
                        c.send(i);
                    }
                });
            }
            for i in 0..n {
                assert_eq!(c.recv(), Some(i), "cap {cap}");
            }

            // len and cap.
            let c = Chan::<u64>::new(cap);
            assert_eq!((c.len(), c.cap()), (0, cap));
            for i in 0..cap {
                c.send(i as u64);
                assert_eq!(c.len(), i + 1);
            }
        }
    });
}

/// Go's TestNonblockRecvRace: once a buffered value is in and the channel
/// closed, a non-blocking receive racing with the close must find the
/// value or the close, never "not ready".
#[test]
#[serial]
fn test_nonblock_recv_race() {
    run(|| {
        let n = 10_000;
        let failures = Arc::new(AtomicU64::new(0));
        for _ in 0..n {
            let c = Chan::<u64>::new(1);
            c.send(1);
            let done = Chan::<()>::new(1);
            {
                let (c, done, failures) = (c.clone(), done.clone(), failures.clone());
                go::go(move || {
                    let mut sel = Select::new();
                    sel.recv(&c);
                    if sel.try_wait().is_none() {
                        failures.fetch_add(1, Ordering::SeqCst);
                    }
                    done.send(());
                });
            }
            c.close();
            // The value, if the goroutine has not taken it yet; else closed.
            let _ = c.recv();
            done.recv();
        }
        assert_eq!(
            failures.load(Ordering::SeqCst),
            0,
            "a closed channel was not ready"
        );
    });
}

/// Go's TestSelectFairness: with two channels always ready (and two nil
/// ones), a select chooses each about half the time. The bound is wide:
/// 10,000 trials give 5,000 ± 50 (one standard deviation); this accepts
/// 4,000 to 6,000, so only a biased choice fails.
#[test]
#[serial]
fn test_select_fairness() {
    run(|| {
        const TRIALS: usize = 10_000;
        let (c1, c2) = (Chan::<u8>::new(TRIALS + 1), Chan::<u8>::new(TRIALS + 1));
        let (c3, c4) = (Chan::<u8>::nil(), Chan::<u8>::nil());
        for _ in 0..=TRIALS {
            c1.send(1);
            c2.send(2);
        }
        let mut counts = [0usize; 2];
        for _ in 0..TRIALS {
            let mut sel = Select::new();
            let a = sel.recv(&c1);
            let b = sel.recv(&c2);
            sel.recv(&c3);
            sel.recv(&c4);
            let i = sel.wait();
            assert!(i == a || i == b, "a nil channel's case was chosen");
            counts[usize::from(i == b)] += 1;
        }
        for (which, &n) in counts.iter().enumerate() {
            assert!(
                (4_000..=6_000).contains(&n),
                "channel {} chosen {n} times of {TRIALS}: {counts:?}",
                which + 1
            );
        }
    });
}

/// Go's TestSelectDuplicateChannel: a select with the same channel in two
/// cases, woken through a third, must leave both of the channel's waits
/// (a later receiver of the channel is served, and a send reaches it).
#[test]
#[serial]
fn test_select_duplicate_channel() {
    run(|| {
        let (c, d, e) = (
            Chan::<u64>::new(0),
            Chan::<u64>::new(0),
            Chan::<u64>::new(0),
        );
        {
            let (c, d, e) = (c.clone(), d.clone(), e.clone());
            go::go(move || {
                let mut sel = Select::new();
                sel.recv(&c);
                sel.recv(&c);
                let via_d = sel.recv(&d);
                assert_eq!(sel.wait(), via_d);
                assert_eq!(sel.received::<u64>(via_d), Some(7));
                e.send(9);
            });
        }
        go::sleep(PAUSE); // the select waits on c twice and on d
        let got = Chan::<Option<u64>>::new(1);
        {
            let (c, got) = (c.clone(), got.clone());
            go::go(move || got.send(c.recv()));
        }
        go::sleep(PAUSE); // that receiver waits on c behind the select
        d.send(7); // wakes the select, which leaves c's queue
        assert_eq!(e.recv(), Some(9));
        c.send(8); // must reach the receiver, not the select's stale wait
        assert_eq!(got.recv(), Some(Some(8)));
    });
}

/// Go's TestMultiConsumer: one producer, many consumers of a buffered
/// channel, each passing what it took to a results channel: the count and
/// sum come out as sent.
#[test]
#[serial]
fn test_multi_consumer() {
    run(|| {
        const NWORK: usize = 23;
        const NITER: u64 = 271_828;
        let q = Chan::<u64>::new(NWORK * 3);
        let r = Chan::<u64>::new(NWORK * 3);
        let wg = Arc::new(go::WaitGroup::new());
        wg.add(NWORK as i32).unwrap();
        for w in 0..NWORK {
            let (q, r, wg) = (q.clone(), r.clone(), wg.clone());
            go::go(move || {
                for v in q.iter() {
                    // Mix up the order a little, as Go's does.
                    if w % 5 == (v % 5) as usize {
                        go::gosched();
                    }
                    r.send(v);
                }
                wg.done().unwrap();
            });
        }
        let (mut expect_n, mut expect_sum) = (0u64, 0u64);
        {
            let q = q.clone();
            go::go(move || {
                for i in 0..NITER {
                    q.send(i * 3 + 1);
                }
                q.close();
            });
        }
        {
            let (r, wg) = (r.clone(), wg.clone());
            go::go(move || {
                wg.wait();
                r.close();
            });
        }
        for i in 0..NITER {
            expect_n += 1;
            expect_sum += i * 3 + 1;
        }
        let (mut n, mut sum) = (0u64, 0u64);
        for v in r.iter() {
            n += 1;
            sum += v;
        }
        assert_eq!((n, sum), (expect_n, expect_sum));
    });
}
