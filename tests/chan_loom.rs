//! The real channel code, checked exhaustively by loom: the waiter
//! queues (`src/go/wait.rs`), a channel's send, receive and close
//! (`src/go/chan.rs`) and `select` (`src/go/select.rs`), driven from loom
//! threads.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test chan_loom
//! ```
//!
//! Under `--cfg loom` the channel's lock, its atomics and the waiters'
//! done flags and selection words are loom's (`src/go/prim.rs`), and a
//! waiting thread blocks in `loom::thread::park` (its waker unparks it),
//! so loom reports a waiter nobody wakes as a deadlock. Every change of
//! a queue checks the queue is consistent, and each model checks at the
//! end that every value arrived exactly once and every queue is empty.
//! `defergc::go::model` hands the test channels of `u64` and `select`.
//! A select locks its channels in address order, so the models that
//! select over two channels place them side by side and run once for
//! each order ([`chans`]): both lock orders are checked, and what loom
//! explores does not depend on where the allocator put them.
//!
//! `select_issue_2075` is Go's select6 (issue 2075): a receiver queued on
//! c1, then a select queued on c1 behind it (two receive cases) and on
//! c2, completed through c2, then more receives and sends on c1. With bug
//! 1 brought back (a select's cleanup took its waiter out of both queues
//! of a channel, and a queue judged a waiter its own by its links alone),
//! loom finds the interleaving that corrupts c1's queues, and
//! `loom_catches_bug_1` checks that it does.
//!
//! Without `--cfg loom` this file is empty: the channels' tests on
//! goroutines and threads are `go_chan.rs` and `go_chan_ports.rs`.
#![cfg(loom)]

mod loom_check;

use defergc::go::model::{self, select, Case, Chan, SendOnClosed};
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::RwLock;

/// Runs a model under loom: every interleaving with at most three
/// preemptions (`LOOM_MAX_PREEMPTIONS` overrides it); says how many
/// executions that took, or after how many it failed (with
/// `--nocapture`).
fn check(name: &str, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.max_branches = 100_000;
    let report = Report {
        name: name.to_owned(),
        runs: std::sync::Arc::new(AtomicUsize::new(0)),
        start: std::time::Instant::now(),
    };
    let counted = report.runs.clone();
    b.check(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        f();
    });
}

/// Says, when dropped (also while a failure unwinds), how a model went.
struct Report {
    name: String,
    runs: std::sync::Arc<AtomicUsize>,
    start: std::time::Instant,
}

impl Drop for Report {
    fn drop(&mut self) {
        let (name, n, t) = (
            &self.name,
            self.runs.load(Ordering::Relaxed),
            self.start.elapsed(),
        );
        if std::thread::panicking() {
            eprintln!("{name}: failed in execution {n}, after {t:.2?}");
        } else {
            eprintln!("{name}: {n} executions, all passed, in {t:.2?}");
        }
    }
}

/// Bug 1 is switched for the whole process: the test that turns it on
/// runs alone (write), the others together (read).
static BUG: RwLock<()> = RwLock::new(());

fn normal() -> std::sync::RwLockReadGuard<'static, ()> {
    BUG.read().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn unbuffered_send_recv() {
    let _n = normal();
    check("unbuffered_send_recv", || {
        let c = Arc::new(Chan::new(0));
        let c2 = c.clone();
        let sender = thread::spawn(move || c2.send(7));
        assert_eq!(c.recv(), Some(7));
        assert_eq!(sender.join().unwrap(), Ok(()));
        assert!(c.is_empty());
        c.assert_idle();
    });
}

#[test]
fn buffered_two_senders_one_receiver() {
    let _n = normal();
    check("buffered_two_senders_one_receiver", || {
        let c = Arc::new(Chan::new(1));
        let ca = c.clone();
        let a = thread::spawn(move || {
            ca.send(1).unwrap();
            ca.send(2).unwrap();
        });
        let cb = c.clone();
        let b = thread::spawn(move || cb.send(11).unwrap());
        let got: Vec<u64> = (0..3).map(|_| c.recv().expect("a value")).collect();
        a.join().unwrap();
        b.join().unwrap();
        // Each value once; a sender's values in its order.
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [1, 2, 11], "received {got:?}");
        let pos = |v| got.iter().position(|&x| x == v).unwrap();
        assert!(pos(1) < pos(2), "FIFO per sender: received {got:?}");
        assert!(c.is_empty());
        c.assert_idle();
    });
}

#[test]
fn close_races_a_receiver_and_a_sender() {
    let _n = normal();
    check("close_races_a_receiver_and_a_sender", || {
        let c = Arc::new(Chan::new(0));
        let cr = c.clone();
        let receiver = thread::spawn(move || cr.recv());
        let cs = c.clone();
        let sender = thread::spawn(move || cs.send(5));
        c.close();
        let (got, sent) = (receiver.join().unwrap(), sender.join().unwrap());
        // Either they met before the close, or the close ended both.
        match got {
            Some(v) => {
                assert_eq!(v, 5);
                assert_eq!(sent, Ok(()), "received a value never sent");
            }
            None => assert_eq!(sent, Err(SendOnClosed), "sent a value never received"),
        }
        // Closed and drained: a receive returns at once.
        assert_eq!(c.recv(), None);
        c.assert_idle();
    });
}

/// Channels side by side, so at addresses in index order: a select
/// locks its channels in address order, and a model picks that order by
/// the indexes it gives each channel rather than leave it to where the
/// allocator put them (which would also make the exploration depend on
/// what ran before).
fn chans<const N: usize>() -> Arc<[Chan; N]> {
    Arc::new(std::array::from_fn(|_| Chan::new(0)))
}

/// The two ways two channels can lie in memory (so be locked by select).
const ORDERS: [[usize; 2]; 2] = [[0, 1], [1, 0]];

#[test]
fn select_two_receives_two_senders() {
    let _n = normal();
    for [ia, ib] in ORDERS {
        check(
            &format!("select_two_receives_two_senders, channels {ia}, {ib}"),
            move || {
                let cs = chans::<2>();
                let ca = cs.clone();
                let sa = thread::spawn(move || ca[ia].send(1).unwrap());
                let cb = cs.clone();
                let sb = thread::spawn(move || cb[ib].send(2).unwrap());
                let (a, b) = (&cs[ia], &cs[ib]);
                let (index, v) = select(&[Case::Recv(a), Case::Recv(b)]).unwrap();
                // The case's own value; then the other sender's, directly.
                let rest = match index {
                    0 => {
                        assert_eq!(v, Some(1));
                        b.recv()
                    }
                    1 => {
                        assert_eq!(v, Some(2));
                        a.recv()
                    }
                    _ => unreachable!(),
                };
                assert_eq!(rest, Some(if index == 0 { 2 } else { 1 }));
                sa.join().unwrap();
                sb.join().unwrap();
                a.assert_idle();
                b.assert_idle();
            },
        );
    }
}

/// A select over two channels while one is closed and a value is sent
/// on the other: the close ends the select's case on its channel (a
/// receive gets closed, a send the error) unless the value came first;
/// either way the value is delivered once.
fn select_races_close_and_send(send_case: bool) {
    for [ia, ib] in ORDERS {
        let name =
            format!("select_races_close_and_send, send case {send_case}, channels {ia}, {ib}");
        check(&name, move || {
            let cs = chans::<2>();
            let cc = cs.clone();
            let closer = thread::spawn(move || cc[ia].close());
            let cv = cs.clone();
            let sender = thread::spawn(move || cv[ib].send(9).unwrap());
            let (a, b) = (&cs[ia], &cs[ib]);
            let first = if send_case {
                Case::Send(a, 1)
            } else {
                Case::Recv(a)
            };
            match select(&[first, Case::Recv(b)]) {
                Ok((1, v)) => assert_eq!(v, Some(9)),
                // The closed case: the value is still b's to receive.
                closed => {
                    if send_case {
                        assert_eq!(closed, Err(SendOnClosed));
                    } else {
                        assert_eq!(closed, Ok((0, None)));
                    }
                    assert_eq!(b.recv(), Some(9));
                }
            }
            closer.join().unwrap();
            sender.join().unwrap();
            assert_eq!(a.recv(), None);
            a.assert_idle();
            b.assert_idle();
        });
    }
}

#[test]
fn select_recv_races_close_and_send() {
    let _n = normal();
    select_races_close_and_send(false);
}

#[test]
fn select_send_races_close_and_send() {
    let _n = normal();
    select_races_close_and_send(true);
}

#[test]
fn select_send_and_recv_on_one_channel() {
    let _n = normal();
    check("select_send_and_recv_on_one_channel", || {
        let c = Arc::new(Chan::new(0));
        let c2 = c.clone();
        let receiver = thread::spawn(move || c2.recv());
        // Only a receiver comes: the send case completes, the receive
        // case (queued on the same channel) leaves its queue.
        let (index, v) = select(&[Case::Send(&c, 3), Case::Recv(&c)]).unwrap();
        assert_eq!((index, v), (0, None));
        assert_eq!(receiver.join().unwrap(), Some(3));
        c.assert_idle();
    });
}

#[test]
fn select_two_recvs_on_one_channel() {
    let _n = normal();
    check("select_two_recvs_on_one_channel", || {
        let c = Arc::new(Chan::new(0));
        let c2 = c.clone();
        let sender = thread::spawn(move || c2.send(4).unwrap());
        let (index, v) = select(&[Case::Recv(&c), Case::Recv(&c)]).unwrap();
        assert!(index < 2);
        assert_eq!(v, Some(4));
        sender.join().unwrap();
        c.assert_idle();
    });
}

/// Go's select6 (issue 2075), with a select of three cases over two
/// channels: a receiver is queued on c1 when the select queues behind it
/// (cases 0 and 2), the select completes through c2, then it receives on
/// c1 again and the main thread sends twice on c1. `[i1, i2]`: where c1
/// and c2 lie (see [`chans`]).
fn issue_2075([i1, i2]: [usize; 2]) {
    check(&format!("issue_2075, channels {i1}, {i2}"), move || {
        // c3 (index 2) is in no select: its place does not matter.
        let cs = chans::<3>();
        let cf = cs.clone();
        let first = thread::spawn(move || cf[i1].recv().expect("a value"));
        let css = cs.clone();
        let selecting = thread::spawn(move || {
            let (c1, c2, c3) = (&css[i1], &css[i2], &css[2]);
            let chosen = select(&[Case::Recv(c1), Case::Recv(c2), Case::Recv(c1)]).unwrap();
            // Nothing is sent on c1 before c3.
            assert_eq!(chosen, (1, Some(20)));
            c3.send(30).unwrap();
            c1.recv().expect("a value")
        });
        let (c1, c2, c3) = (&cs[i1], &cs[i2], &cs[2]);
        c2.send(20).unwrap();
        assert_eq!(c3.recv(), Some(30));
        c1.send(1).unwrap();
        c1.send(2).unwrap();
        let mut got = [first.join().unwrap(), selecting.join().unwrap()];
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
        for c in cs.iter() {
            c.assert_idle();
        }
    });
}

#[test]
fn select_issue_2075() {
    let _n = normal();
    for order in ORDERS {
        issue_2075(order);
    }
}

#[test]
fn loom_catches_bug_1() {
    let _alone = BUG.write().unwrap_or_else(|e| e.into_inner());
    for order in ORDERS {
        model::set_bug1(true);
        let caught = std::panic::catch_unwind(|| issue_2075(order));
        model::set_bug1(false);
        let err =
            caught.expect_err("loom found nothing wrong with bug 1 back: the model checks nothing");
        let msg = loom_check::panic_message(&*err);
        eprintln!("with bug 1 (channels in order {order:?}), loom failed with: {msg}");
    }
}
