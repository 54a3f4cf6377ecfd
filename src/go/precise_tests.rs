//! Channels under the precise collector, whose marking runs while the
//! mutators do: a handle that moves through a channel while a cycle is
//! between two contexts' snapshots must not hide from it. Each test holds
//! a cycle at that point on purpose (a registered thread that has
//! acknowledged Prepare and spins before its Snapshot, which it cannot
//! reach without a safepoint), moves one object's only reference through
//! a channel, and then checks that the object survived. Without the
//! channel's report of the copy (`roots::words_moved`) both lose it.

use super::chan::Chan;
use crate::precise::{self, Frame, Handle};
use serial_test::serial;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const VALUE: u64 = 0x005E_ED0F_C4A7;

fn bytes_object(value: u64) -> Handle {
    let t = precise::register_bytes_type().unwrap();
    let h = precise::alloc_array(t, 8).unwrap();
    precise::write_u64(h, 0, value).unwrap();
    h
}

/// Safepoints until this thread has acknowledged the running cycle's
/// Prepare round but not yet its Snapshot round (a cycle is requested
/// first).
fn stop_before_snapshot() {
    precise::gc_async();
    while !precise::snapshot_pending() {
        precise::safepoint().unwrap();
        std::thread::yield_now();
    }
}

/// Safepoints until the running cycle has snapshotted this thread.
fn pass_snapshot() {
    while !precise::snapshot_taken() {
        precise::safepoint().unwrap();
        std::thread::yield_now();
    }
}

/// A thread that holds the running cycle before its own snapshot until
/// `release` is set: while it spins, no snapshot round completes, so the
/// shared roots (channel buffers) are not read yet either.
fn staller(stalled: Arc<AtomicBool>, release: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        precise::safepoint().unwrap();
        stop_before_snapshot();
        stalled.store(true, Ordering::SeqCst);
        while !release.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        pass_snapshot();
        precise::unregister_thread().unwrap();
    })
}

/// The only reference sits in a channel's buffer when the cycle starts; a
/// thread that has already snapshotted its roots takes it out before the
/// buffer is read. The receive must log it.
#[test]
#[serial(precise)]
fn a_handle_received_after_the_receivers_snapshot_survives() {
    let c = Chan::<Handle>::new(1);
    let tx = c.clone();
    std::thread::spawn(move || {
        tx.send(bytes_object(VALUE));
        precise::unregister_thread().unwrap();
    })
    .join()
    .unwrap();
    let (stalled, release) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let receiver = {
        let (stalled, release) = (stalled.clone(), release.clone());
        std::thread::spawn(move || {
            // In the buffer only, across a full cycle first.
            precise::collect().unwrap();
            let frame = Frame::new().unwrap();
            let staller = staller(stalled.clone(), release.clone());
            while !stalled.load(Ordering::SeqCst) {
                precise::safepoint().unwrap();
                std::thread::yield_now();
            }
            // The staller holds the cycle before its own snapshot; this
            // thread goes past its snapshot.
            pass_snapshot();
            // Snapshotted; the buffer is not read until the staller's
            // snapshot. Take the handle out and root it (a root added
            // after the snapshot is not read by this cycle).
            let h = match c.try_recv() {
                super::chan::TryRecv::Value(h) => h,
                other => panic!("the buffer lost its value: {other:?}"),
            };
            frame.root(h).unwrap();
            release.store(true, Ordering::SeqCst);
            precise::native(|| staller.join().unwrap()).unwrap();
            precise::gc_wait();
            precise::collect().unwrap();
            assert_eq!(
                precise::read_u64(h, 0),
                Ok(VALUE),
                "the object received during marking was freed"
            );
            drop(frame);
            precise::unregister_thread().unwrap();
        })
    };
    receiver.join().unwrap();
}

/// The receiver waits (snapshotted on its behalf, in native code); the
/// sender, not yet snapshotted, hands the object over and drops its own
/// root before its snapshot. The send must log it.
#[test]
#[serial(precise)]
fn a_handle_handed_to_a_snapshotted_receiver_survives() {
    let c = Chan::<Handle>::new(0);
    let rx = c.clone();
    let receiver = std::thread::spawn(move || {
        precise::safepoint().unwrap();
        // Waits in native code: the collector snapshots it at once.
        let h = rx.recv().expect("a value");
        let frame = Frame::new().unwrap();
        frame.root(h).unwrap();
        precise::gc_wait();
        precise::collect().unwrap();
        let got = precise::read_u64(h, 0);
        drop(frame);
        precise::unregister_thread().unwrap();
        got
    });
    let sender = std::thread::spawn(move || {
        let frame = Frame::new().unwrap();
        let h = bytes_object(VALUE);
        let slot = frame.root(h).unwrap();
        precise::collect().unwrap();
        // The receiver must be waiting: a send that waited would put this
        // thread in native code, snapshotted with the handle unrooted.
        while !c.has_waiting_receiver() {
            precise::safepoint().unwrap();
            std::thread::yield_now();
        }
        stop_before_snapshot();
        // The receiver waits in native code: the Snapshot round, published
        // once every running thread acknowledged Prepare, is taken for it
        // at once. Wait for the round (no safepoint here).
        while !precise::snapshot_phase() {
            std::hint::spin_loop();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        // Hand it over and drop the root, neither a safepoint: this
        // thread's snapshot will not hold the handle.
        c.send(h);
        precise::set_root(slot, None).unwrap();
        pass_snapshot();
        drop(frame);
        precise::unregister_thread().unwrap();
    });
    sender.join().unwrap();
    assert_eq!(
        receiver.join().unwrap(),
        Ok(VALUE),
        "the object handed over during marking was freed"
    );
}

/// A timer that fires while a cycle marks, from a worker between
/// goroutines: that thread's own context copies the time into
/// the timer's channel, a copy the channel reports. It must not make the
/// runtime's thread a mutator: such a thread never reaches a safepoint
/// (an idle worker sleeps), and every later round of every collection
/// waited for it for ever. The cycle is held open (a staller before its
/// snapshot) while the program's one goroutine waits for its timer.
#[test]
#[serial(precise)]
fn a_timer_fired_by_the_scheduler_while_marking_does_not_stall_collections() {
    use std::time::Duration;
    let _one = super::ONE_RUN_IN_TESTS
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (stalled, release) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let staller = staller(stalled.clone(), release.clone());
    while !stalled.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    super::run(|| {
        // Parked on the channel until the timer fires: the firing is
        // the scheduler's, not a goroutine's.
        let t = super::Timer::new(Duration::from_millis(5));
        assert!(t.chan().recv().is_some_and(|when| when > 0));
    });
    release.store(true, Ordering::SeqCst);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        staller.join().unwrap();
        precise::collect().unwrap();
        precise::unregister_thread().unwrap();
        let _ = done_tx.send(());
    });
    // Not a bound on speed: a collection of an empty heap takes
    // milliseconds; this only turns the hang into a failure.
    assert!(
        done_rx.recv_timeout(Duration::from_secs(60)).is_ok(),
        "the held cycle and the next collection did not finish in a minute: \
         a runtime thread became a mutator the rounds wait for"
    );
}
