//! Root memory is a root of the precise collector: a handle kept only in a
//! tls slot, only captured by a deferred closure, or only carried by a panic
//! value survives collections; once let go, it is collected.
#![cfg(feature = "precise")]

mod common;

use common::{intact, new_pair};
use defergc::precise::{self, Error, Handle};
use defergc::{defer, tls};
use serial_test::serial;

/// Collections with garbage in between, so freed cells get reused.
fn collect_with_churn(rounds: usize) {
    for _ in 0..rounds {
        for i in 0..20_000 {
            let _ = new_pair(i);
        }
        precise::collect().unwrap();
    }
}

#[test]
#[serial]
fn a_handle_only_in_a_tls_slot_survives_then_dies_when_cleared() {
    std::thread::spawn(|| {
        let slot = tls::alloc::<u64>(None);
        let h = new_pair(0xC0DE);
        slot.set(h.to_raw());
        collect_with_churn(5);
        assert!(
            intact(h, 0xC0DE),
            "the object held by a tls slot was collected"
        );
        slot.clear();
        collect_with_churn(2);
        assert_eq!(precise::read_u64(h, 0), Err(Error::StaleHandle));
    })
    .join()
    .unwrap();
}

#[test]
#[serial]
fn handles_only_captured_by_deferred_closures_survive_collections() {
    std::thread::spawn(|| {
        let bad = std::cell::Cell::new(0);
        defer::call(|f| {
            for i in 0..10_000u64 {
                let h = new_pair(i);
                let bad = &bad;
                f.defer(move || {
                    if !intact(h, i) {
                        bad.set(bad.get() + 1);
                    }
                });
                if i % 2_000 == 0 {
                    collect_with_churn(1);
                }
            }
        });
        assert_eq!(bad.get(), 0, "deferred calls saw collected objects");
    })
    .join()
    .unwrap();
}

#[test]
#[serial]
fn a_handle_carried_by_a_panic_value_survives_the_unwinding() {
    std::thread::spawn(|| {
        let recovered = defer::named(None, |f, out| {
            f.defer_with(move |d| out.set(d.recover()));
            // Collections while the panic is in flight.
            f.defer(|| collect_with_churn(3));
            defer::panic(new_pair(77).to_raw())
        });
        let raw = recovered.unwrap().downcast::<u64>().unwrap();
        assert!(intact(Handle::from_raw(raw).unwrap(), 77));
    })
    .join()
    .unwrap();
}

#[test]
#[serial]
fn small_integers_in_root_memory_never_keep_objects_alive() {
    std::thread::spawn(|| {
        // Root memory full of small integers, the values the first handles
        // would have if generations started at 0.
        let slots: Vec<tls::Slot<u64>> = (0..64).map(|_| tls::alloc(None)).collect();
        for (i, s) in slots.iter().enumerate() {
            s.set(i as u64 + 1);
        }
        let h = new_pair(5);
        assert!(h.to_raw() >= 1 << 40, "handle {:#x} below 2^40", h.to_raw());
        collect_with_churn(2);
        assert_eq!(precise::read_u64(h, 0), Err(Error::StaleHandle));
    })
    .join()
    .unwrap();
}

/// Sleeps during thread teardown while another thread collects.
fn slow_destructor(_: u8) {
    std::thread::sleep(std::time::Duration::from_millis(300));
}

#[test]
#[serial]
fn root_memory_left_by_an_exiting_thread_is_scanned_throughout_its_exit() {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let collector = {
        let done = done.clone();
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                collect_with_churn(1);
            }
        })
    };
    let raw = std::thread::spawn(|| {
        let h = new_pair(99);
        // The handle's only home: a low-level record the thread never frees.
        let record = defer::lowlevel::record_alloc(8);
        // SAFETY: 8 fresh bytes.
        unsafe { record.cast::<u64>().as_ptr().write(h.to_raw()) };
        // A slot whose destructor takes its time during the teardown, after
        // the thread first used the precise collector.
        let slow = tls::alloc::<u8>(Some(slow_destructor));
        slow.set(1);
        h.to_raw()
    })
    .join()
    .unwrap();
    let h = Handle::from_raw(raw).unwrap();
    collect_with_churn(2);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    // This thread is registered now: it waits as native code, or the
    // collector's handshakes would wait for it.
    precise::native(|| collector.join().unwrap()).unwrap();
    assert!(
        intact(h, 99),
        "a handle left in an exiting thread's root memory was collected"
    );
}
