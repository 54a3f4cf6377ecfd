//! Channels, select, sync and timers on goroutines (the Rust API); the C
//! ABI and Go's own channel tests are in go_chan_c.rs.

mod child;
mod seeded;

use defergc::defer;
use defergc::go::{self, Chan, Mutex, Once, RwMutex, Select, TryRecv, WaitGroup};
use serial_test::serial;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Runs `f` as the main goroutine.
fn run(f: impl FnOnce() + Send + 'static) {
    assert_eq!(go::run(f), 0);
}

#[test]
#[serial]
fn unbuffered_ping_pong_passes_every_value_in_order() {
    run(|| {
        let (ping, pong) = (Chan::<u64>::new(0), Chan::<u64>::new(0));
        let (p, q) = (ping.clone(), pong.clone());
        go::go(move || {
            while let Some(v) = p.recv() {
                q.send(v * 2);
            }
            q.close();
        });
        for i in 0..10_000u64 {
            ping.send(i);
            assert_eq!(pong.recv(), Some(i * 2));
        }
        ping.close();
        assert_eq!(pong.recv(), None);
    });
}

#[test]
#[serial]
fn a_buffered_channel_is_fifo_and_reports_len_and_cap() {
    run(|| {
        let c = Chan::<String>::new(4);
        assert_eq!((c.len(), c.cap()), (0, 4));
        for i in 0..4 {
            c.send(format!("v{i}"));
        }
        assert_eq!(c.len(), 4);
        assert!(c.try_send("full".into()).is_err());
        assert_eq!(c.recv().as_deref(), Some("v0"));
        c.send("v4".into());
        c.close();
        let rest: Vec<String> = c.iter().collect();
        assert_eq!(rest, ["v1", "v2", "v3", "v4"]);
        assert_eq!(c.try_recv(), TryRecv::Closed);
    });
}

#[test]
#[serial]
fn many_producers_and_consumers_lose_and_duplicate_nothing() {
    run(|| {
        const PRODUCERS: u64 = 8;
        const PER: u64 = 20_000;
        let c = Chan::<u64>::new(128);
        let sum = Arc::new(AtomicUsize::new(0));
        let count = Arc::new(AtomicUsize::new(0));
        let wg = Arc::new(WaitGroup::new());
        wg.add(PRODUCERS as i32 + 8).unwrap();
        for p in 0..PRODUCERS {
            let (c, wg) = (c.clone(), wg.clone());
            go::go(move || {
                for i in 0..PER {
                    c.send(p * PER + i);
                }
                wg.done().unwrap();
            });
        }
        for _ in 0..8 {
            let (c, wg, sum, count) = (c.clone(), wg.clone(), sum.clone(), count.clone());
            go::go(move || {
                while let Some(v) = c.recv() {
                    sum.fetch_add(v as usize, Ordering::Relaxed);
                    count.fetch_add(1, Ordering::Relaxed);
                }
                wg.done().unwrap();
            });
        }
        // Close once every producer is done: a second group for them.
        let producers_done = Arc::new(WaitGroup::new());
        let _ = producers_done;
        while count.load(Ordering::SeqCst) < (PRODUCERS * PER) as usize {
            go::gosched();
        }
        c.close();
        wg.wait();
        let n = PRODUCERS * PER;
        assert_eq!(count.load(Ordering::SeqCst), n as usize);
        assert_eq!(sum.load(Ordering::SeqCst), (n * (n - 1) / 2) as usize);
    });
}

/// The message of the panic `f` raises, recovered in a deferred call.
fn panic_message(f: impl FnOnce()) -> String {
    defer::named(String::new(), |fr, out| {
        fr.defer_with(move |d| {
            if let Some(v) = d.recover() {
                out.set(v.to_string());
            }
        });
        f();
        String::new()
    })
}

#[test]
#[serial]
fn closed_and_nil_channels_panic_with_go_s_messages() {
    run(|| {
        let c = Chan::<u8>::new(1);
        c.close();
        assert_eq!(panic_message(|| c.send(1)), "send on closed channel");
        assert_eq!(panic_message(|| c.close()), "close of closed channel");
        assert_eq!(
            panic_message(|| Chan::<u8>::nil().close()),
            "close of nil channel"
        );
        assert_eq!(c.recv(), None);
        // A receiver waiting when the channel closes gets nothing.
        let d = Chan::<u8>::new(0);
        let e = d.clone();
        let got = Chan::<Option<u8>>::new(1);
        let g = got.clone();
        go::go(move || g.send(e.recv()));
        go::gosched();
        d.close();
        assert_eq!(got.recv(), Some(None));
        // A sender waiting when it closes panics.
        let s = Chan::<u8>::new(0);
        let s2 = s.clone();
        let msg = Chan::<String>::new(1);
        let m = msg.clone();
        go::go(move || m.send(panic_message(|| s2.send(7))));
        go::sleep(Duration::from_millis(1));
        s.close();
        assert_eq!(msg.recv().as_deref(), Some("send on closed channel"));
    });
}

#[test]
#[serial]
fn select_chooses_uniformly_among_ready_cases() {
    run(|| {
        let chans: Vec<Chan<u8>> = (0..4).map(|_| Chan::new(1)).collect();
        let mut hits = [0usize; 4];
        const ROUNDS: usize = 8000;
        for _ in 0..ROUNDS {
            for c in &chans {
                let _ = c.try_send(1);
            }
            let mut sel = Select::new();
            let idx: Vec<usize> = chans.iter().map(|c| sel.recv(c)).collect();
            let chosen = sel.wait();
            hits[idx.iter().position(|&i| i == chosen).unwrap()] += 1;
        }
        // Uniform: each case near a quarter (2000 ± 5 sigma ~ 200).
        for (i, &h) in hits.iter().enumerate() {
            assert!(
                (1750..=2250).contains(&h),
                "case {i} chosen {h} times of {ROUNDS}: {hits:?}"
            );
        }
    });
}

#[test]
#[serial]
fn select_with_default_and_sends_and_nil_channels() {
    run(|| {
        let (a, b) = (Chan::<u32>::new(0), Chan::<u32>::new(1));
        let nil = Chan::<u32>::nil();
        let mut sel = Select::new();
        sel.recv(&a);
        sel.recv(&nil);
        assert_eq!(sel.try_wait(), None, "nothing ready: default");
        let mut sel = Select::new();
        sel.recv(&a);
        let s = sel.send(&b, 5);
        assert_eq!(sel.wait(), s);
        assert_eq!(b.recv(), Some(5));
    });
}

#[test]
#[serial]
fn a_select_keeps_each_cases_value_and_type_apart() {
    run(|| {
        // Nine cases (past the inline capacity) of three element types,
        // sends holding values the select owns until one is chosen.
        let held = std::sync::Arc::new(());
        let (ready, full) = (Chan::<String>::new(1), Chan::<u64>::new(0));
        ready.send(String::from("chosen"));
        let sends: Vec<Chan<std::sync::Arc<()>>> = (0..4).map(|_| Chan::new(0)).collect();
        let waits: Vec<Chan<u8>> = (0..4).map(|_| Chan::new(0)).collect();
        let mut sel = Select::new();
        for c in &sends {
            sel.send(c, held.clone());
        }
        let f = sel.recv(&full);
        let r = sel.recv(&ready);
        for c in &waits {
            sel.recv(c);
        }
        assert_eq!(std::sync::Arc::strong_count(&held), 5);
        assert_eq!(sel.wait(), r);
        assert_eq!(sel.received::<u64>(f), None);
        let wrong =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sel.received::<u64>(r)));
        let msg = wrong.unwrap_err();
        assert_eq!(
            msg.downcast_ref::<&str>().copied(),
            Some("defergc: Select::received with the wrong element type")
        );
        assert_eq!(sel.received::<String>(r).as_deref(), Some("chosen"));
        assert_eq!(sel.received::<String>(r), None, "a value is received once");
        drop(sel);
        // The four values the sends held were dropped with the select.
        assert_eq!(std::sync::Arc::strong_count(&held), 1);
    });
}

#[test]
#[serial]
fn selects_under_contention_lose_no_wakeup() {
    // Goroutines each select over two channels; senders feed both; every
    // value is received exactly once.
    run(|| {
        const N: usize = 50_000;
        let (a, b) = (Chan::<usize>::new(0), Chan::<usize>::new(0));
        let done = Chan::<usize>::new(16);
        for _ in 0..16 {
            let (a, b, done) = (a.clone(), b.clone(), done.clone());
            go::go(move || {
                let mut sum = 0;
                loop {
                    let mut sel = Select::new();
                    let ra = sel.recv(&a);
                    let rb = sel.recv(&b);
                    let i = sel.wait();
                    let v = if i == ra {
                        sel.received::<usize>(ra)
                    } else {
                        sel.received::<usize>(rb)
                    };
                    match v {
                        Some(v) => sum += v,
                        None => break,
                    }
                }
                done.send(sum);
            });
        }
        for i in 0..N {
            if i % 2 == 0 {
                a.send(i)
            } else {
                b.send(i)
            }
        }
        a.close();
        b.close();
        let total: usize = (0..16).map(|_| done.recv().unwrap()).sum();
        assert_eq!(total, N * (N - 1) / 2);
    });
}

/// A close wakes the waiters it finds a batch at a time (32 queued at
/// once): rounds of a random number of receivers, plain receives and
/// selects over the channel and one that stays silent, on goroutines and
/// on plain threads, parked before the close. Each must see the close
/// exactly once, and every one finish (a waiter left in a batch never
/// flushed would hang the round, or end it with Go's deadlock report).
#[test]
#[serial]
fn a_close_wakes_every_waiter_once_whatever_their_number() {
    let seed = seeded::seed("DEFERGC_CLOSE_SEED");
    println!("seed {seed} (DEFERGC_CLOSE_SEED={seed} repeats it)");
    run(move || {
        let mut rng = seeded::Rng(seed);
        let mut woken_in_all = 0;
        for round in 0..40 {
            let goroutines = rng.below(200) as usize;
            let threads = rng.below(4) as usize;
            let (c, silent) = (Chan::<u64>::new(0), Chan::<u64>::new(0));
            let woken = Arc::new(AtomicUsize::new(0));
            let started = Arc::new(WaitGroup::new());
            let finished = Arc::new(WaitGroup::new());
            started.add(goroutines as i32).unwrap();
            finished.add(goroutines as i32).unwrap();
            let receive = |c: &Chan<u64>, silent: &Chan<u64>, select: bool| {
                if select {
                    let mut sel = Select::new();
                    let rc = sel.recv(c);
                    let _ = sel.recv(silent);
                    assert_eq!(sel.wait(), rc, "the silent channel was chosen");
                    sel.received::<u64>(rc)
                } else {
                    c.recv()
                }
            };
            for _ in 0..goroutines {
                let select = rng.below(3) == 0;
                let (c, silent) = (c.clone(), silent.clone());
                let (woken, started, finished) = (woken.clone(), started.clone(), finished.clone());
                go::go(move || {
                    started.done().unwrap();
                    assert_eq!(receive(&c, &silent, select), None);
                    woken.fetch_add(1, Ordering::Relaxed);
                    finished.done().unwrap();
                });
            }
            let on_threads: Vec<_> = (0..threads)
                .map(|_| {
                    let select = rng.below(2) == 0;
                    let (c, silent, woken) = (c.clone(), silent.clone(), woken.clone());
                    std::thread::spawn(move || {
                        assert_eq!(receive(&c, &silent, select), None);
                        woken.fetch_add(1, Ordering::Relaxed);
                    })
                })
                .collect();
            started.wait();
            for _ in 0..rng.below(8) {
                go::gosched();
            }
            c.close();
            finished.wait();
            for t in on_threads {
                t.join().unwrap();
            }
            assert_eq!(
                woken.load(Ordering::Relaxed),
                goroutines + threads,
                "round {round}, seed {seed}"
            );
            woken_in_all += goroutines + threads;
        }
        assert!(woken_in_all > 0, "seed {seed}: no waiter in any round");
    });
}

#[test]
#[serial]
fn mutex_rwmutex_once_and_waitgroup_on_many_goroutines() {
    run(|| {
        let m = Arc::new(Mutex::new());
        let rw = Arc::new(RwMutex::new());
        let once = Arc::new(Once::new());
        let counter = Arc::new(AtomicUsize::new(0));
        let once_runs = Arc::new(AtomicUsize::new(0));
        let wg = Arc::new(WaitGroup::new());
        const G: usize = 10_000;
        wg.add(G as i32).unwrap();
        for i in 0..G {
            let (m, rw, once, counter, once_runs, wg) = (
                m.clone(),
                rw.clone(),
                once.clone(),
                counter.clone(),
                once_runs.clone(),
                wg.clone(),
            );
            go::go(move || {
                once.call(|| {
                    once_runs.fetch_add(1, Ordering::SeqCst);
                });
                for _ in 0..10 {
                    m.lock();
                    // A non-atomic read-modify-write, made safe by the lock.
                    let v = counter.load(Ordering::Relaxed);
                    if v % 7 == 0 {
                        go::gosched();
                    }
                    counter.store(v + 1, Ordering::Relaxed);
                    m.unlock();
                }
                if i % 10 == 0 {
                    rw.lock();
                    rw.unlock();
                } else {
                    rw.rlock();
                    go::gosched();
                    rw.runlock();
                }
                wg.done().unwrap();
            });
        }
        wg.wait();
        assert_eq!(counter.load(Ordering::SeqCst), G * 10);
        assert_eq!(once_runs.load(Ordering::SeqCst), 1);
        assert_eq!(wg.add(-1), Err("sync: negative WaitGroup counter"));
    });
}

#[test]
#[serial]
fn timers_fire_stop_and_reset() {
    run(|| {
        // Sleep and After fire.
        go::sleep(Duration::from_millis(2));
        let c = go::after(Duration::from_millis(1));
        assert!(c.recv().unwrap() > 0);
        // A stopped timer does not fire; reset arms it again.
        let t = go::Timer::new(Duration::from_secs(3600));
        assert!(t.stop(), "a pending timer stops");
        assert!(!t.stop(), "a stopped one is not pending");
        assert!(!t.reset(Duration::from_millis(1)));
        assert!(t.chan().recv().is_some());
        assert!(!t.stop(), "a fired timer is not pending");
        // Many sleeping goroutines all wake.
        let wg = Arc::new(WaitGroup::new());
        wg.add(1000).unwrap();
        for i in 0..1000u64 {
            let wg = wg.clone();
            go::go(move || {
                go::sleep(Duration::from_micros(i % 50));
                wg.done().unwrap();
            });
        }
        wg.wait();
    });
}

#[repr(align(16))]
struct Align16(#[allow(dead_code)] u8);

#[repr(align(32))]
struct Align32(#[allow(dead_code)] u8);

#[test]
#[serial]
fn make_refuses_what_go_s_makechan_refuses_with_its_messages() {
    run(|| {
        let make = |f: fn()| panic_message(f);
        // The element: Go refuses 1 << 16 bytes and more.
        assert_eq!(go::MAX_ELEM_SIZE, 65535);
        let big = Chan::<[u8; 65535]>::new(1);
        big.send([7; 65535]);
        assert_eq!(big.recv().map(|b| b[65534]), Some(7));
        // (An element of 1 << 16 bytes is a fatal error: see
        // make_throws_for_element_types_no_channel_can_have.)
        // A negative size (above isize::MAX), even of zero-sized elements.
        assert_eq!(
            Chan::<()>::new(isize::MAX as usize).cap(),
            isize::MAX as usize
        );
        assert_eq!(
            make(|| drop(Chan::<()>::new(isize::MAX as usize + 1))),
            "makechan: size out of range"
        );
        assert_eq!(
            make(|| drop(Chan::<u8>::new(usize::MAX))),
            "makechan: size out of range"
        );
        // size * elemsize overflows.
        assert_eq!(
            make(|| drop(Chan::<u64>::new(usize::MAX / 4))),
            "makechan: size out of range"
        );
        // Beyond the largest allocation (with the channel's header).
        assert_eq!(
            make(|| drop(Chan::<u8>::new(defergc::gc::MAX_ALLOC))),
            "makechan: size out of range"
        );
        // The buffers are 16-byte aligned: no element may need more.
        assert_eq!(Chan::<Align16>::new(2).cap(), 2);
    });
}

const THROW_CHILD: &str = "DEFERGC_TEST_MAKECHAN_THROW";

/// Go's `makechan` throws (fatal error, status 2, not a panic a deferred
/// recover could catch) for an element of 1 << 16 bytes or more and for
/// one aligned beyond the buffers; each case runs in a child process.
#[test]
#[serial]
fn make_throws_for_element_types_no_channel_can_have() {
    if let Ok(case) = std::env::var(THROW_CHILD) {
        run(move || match case.as_str() {
            "elem" => drop(Chan::<[u8; 65536]>::new(0)),
            _ => drop(Chan::<Align32>::new(1)),
        });
        unreachable!("makechan returned");
    }
    for (case, want) in [
        (
            "elem",
            "fatal error: makechan: invalid channel element type\n",
        ),
        ("align", "fatal error: makechan: bad alignment\n"),
    ] {
        let out = child::run_test(
            "make_throws_for_element_types_no_channel_can_have",
            &[(THROW_CHILD, case)],
            Duration::from_secs(60),
        )
        .unwrap_or_else(|| panic!("{case}: the child hung"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
        assert!(stderr.starts_with(want), "{case}: {stderr}");
        assert!(stderr.contains("goroutine "), "{case}: {stderr}");
    }
}
