//! The Rust API's panic without unwinding: `raise`, `named_try` and
//! `call_try`, carried by `?` from frame to frame. Each test checks the
//! order the deferred calls ran in and that no panic is left behind in
//! the thread (a later frame's recover finds none).

use defergc::defer::{self, Panicking};
use std::cell::RefCell;

/// Whether the thread has a panic in flight: a fresh frame's deferred
/// recover would take it.
fn leftover_panic() -> bool {
    defer::named(false, |f, out| {
        f.defer_with(move |d| out.set(d.recover().is_some()));
        false
    })
}

#[test]
fn a_raise_recovered_in_its_own_frame_returns_the_named_result() {
    let r = defer::named_try(0u64, |f, out| {
        f.defer_with(move |d| {
            let v = d.recover().expect("the raised value");
            out.set(*v.downcast_ref::<u64>().unwrap() + 1);
        });
        Err(defer::raise(41u64))
    });
    assert_eq!(r.ok(), Some(42));
    assert!(!leftover_panic());
}

#[inline(never)]
fn level(depth: u32, log: &RefCell<Vec<String>>) -> Result<u32, Panicking> {
    defer::call_try(|f| {
        f.defer(move || log.borrow_mut().push(format!("deferred {depth}")));
        if depth == 0 {
            return Err(defer::raise("from the bottom"));
        }
        let v = level(depth - 1, log)?;
        log.borrow_mut().push(format!("after {depth}"));
        Ok(v + 1)
    })
}

#[test]
fn question_mark_carries_the_panic_through_every_frame_running_their_defers() {
    let log = RefCell::new(Vec::new());
    let r = defer::named_try(None, |f, out| {
        let log = &log;
        f.defer_with(move |d| {
            log.borrow_mut().push("recover".into());
            out.set(d.recover().map(|v| v.to_string()));
        });
        level(3, log).map(|v| Some(v.to_string()))
    });
    assert_eq!(r.ok(), Some(Some("from the bottom".to_string())));
    assert_eq!(
        *log.borrow(),
        [
            "deferred 0",
            "deferred 1",
            "deferred 2",
            "deferred 3",
            "recover"
        ]
    );
    assert!(!leftover_panic());
}

#[test]
fn an_unrecovered_raise_goes_on_unwinding_when_dropped() {
    let log = RefCell::new(Vec::new());
    let got = defer::named(None, |f, out| {
        let log = &log;
        f.defer_with(move |d| out.set(d.recover().map(|v| v.to_string())));
        let r = defer::call_try(|f| -> Result<(), _> {
            f.defer(move || log.borrow_mut().push("inner deferred"));
            Err(defer::raise("unrecovered"))
        });
        assert!(r.is_err());
        log.borrow_mut().push("before the drop");
        drop(r);
        log.borrow_mut().push("not reached");
        None
    });
    assert_eq!(got.as_deref(), Some("unrecovered"));
    assert_eq!(*log.borrow(), ["inner deferred", "before the drop"]);
    assert!(!leftover_panic());
}

#[test]
fn resume_turns_it_into_an_unwinding_panic() {
    let got = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover().map(|v| v.to_string())));
        match defer::call_try(|_| -> Result<(), _> { Err(defer::raise("resumed")) }) {
            Ok(()) => None,
            Err(p) => p.resume(),
        }
    });
    assert_eq!(got.as_deref(), Some("resumed"));
    assert!(!leftover_panic());
}

#[test]
fn an_unwinding_panic_in_a_try_frame_is_recovered_as_in_named() {
    let r = defer::named_try(0, |f, out| {
        f.defer_with(move |d| {
            if d.recover().is_some() {
                out.set(7);
            }
        });
        defer::panic("unwinding")
    });
    assert_eq!(r.ok(), Some(7));
    assert!(!leftover_panic());
}

#[test]
fn a_raise_dropped_by_a_newer_unwinding_panic_is_forgotten() {
    let got = defer::named(Vec::new(), |f, out| {
        f.defer_with(move |d| {
            let first = d.recover().map(|v| v.to_string());
            out.update(|o| o.push(first));
        });
        let _pending = defer::raise("older");
        defer::panic("newer")
    });
    assert_eq!(got, [Some("newer".to_string())]);
    // The older one went with its Panicking: nothing is left to recover.
    assert!(!leftover_panic());
}

#[test]
fn a_repanic_from_a_deferred_call_replaces_the_raised_panic() {
    let r = defer::named_try(String::new(), |f, out| {
        f.defer_with(move |d| {
            out.set(d.recover().map(|v| v.to_string()).unwrap_or_default());
        });
        defer::call_try(|f| -> Result<(), _> {
            f.defer(|| defer::panic("from a deferred call"));
            Err(defer::raise("first"))
        })?;
        Ok("not reached".into())
    });
    assert_eq!(r.ok().as_deref(), Some("from a deferred call"));
    assert!(!leftover_panic());
}

/// The message of an unrecovered panic, as it left the outermost frame.
fn report_of(f: impl FnOnce()) -> String {
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect_err("no panic");
    *err.downcast::<String>().expect("a report")
}

/// The report when `value` is raised, recovered, and a deferred call then
/// panics with "next": the recovered value's line, then the new panic.
fn recovered_then_next<T: std::any::Any + std::fmt::Debug>(value: T) -> String {
    report_of(|| {
        let _ = defer::call_try(|f| -> Result<(), Panicking> {
            f.defer_with(|d| {
                drop(d.recover().expect("the raised value"));
                defer::panic("next")
            });
            Err(defer::raise(value))
        });
    })
}

#[test]
fn a_recovered_value_prints_in_a_later_report_as_it_did_when_raised() {
    // Values a record keeps as they are (rendered only for a report) and
    // one it renders at once (a tuple): each line reads as the value's
    // own unrecovered report does.
    fn same<T: std::any::Any + std::fmt::Debug + Clone>(value: T, printed: &str) {
        let alone = report_of(|| defer::panic(value.clone()));
        assert_eq!(alone, format!("panic: {printed}"));
        assert_eq!(
            recovered_then_next(value),
            format!("panic: {printed} [recovered]\n\tpanic: next")
        );
    }
    same(42u64, "42");
    same(-7i8, "-7");
    same(u128::MAX, "340282366920938463463374607431768211455");
    same(0.1f32, "0.1");
    same(2.5f64, "2.5");
    same(true, "true");
    same('x', "x");
    same("two\nlines", "two\n\tlines");
    same(
        defer::RuntimeError("index out of range"),
        "runtime error: index out of range",
    );
    same(defer::PanicNilError, "panic called with nil argument");
    same((1, "a"), "(1, \"a\")");
    let obj = defergc::gc::alloc(16);
    same(obj, &format!("{:p}", obj.as_ptr()));
}

#[test]
fn a_record_reused_after_a_recovery_carries_nothing_of_the_last_panic() {
    for i in 0..3u64 {
        let r = defer::named_try(0u64, |f, out| {
            f.defer_with(move |d| out.set(*d.recover().unwrap().downcast_ref::<u64>().unwrap()));
            Err(defer::raise(i))
        });
        assert_eq!(r.ok(), Some(i));
    }
    // The next panic's report is its own: no earlier value, no marks.
    assert_eq!(report_of(|| defer::panic("last")), "panic: last");
    assert!(!leftover_panic());
}

#[test]
fn goroutines_raise_a_heap_object_and_recover_it() {
    use defergc::go::{self, WaitGroup};
    use std::ptr::NonNull;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    const N: usize = 2_000;
    let recovered = Arc::new(AtomicUsize::new(0));
    let seen = recovered.clone();
    let status = go::run(move || {
        let wg = Arc::new(WaitGroup::new());
        wg.add(N as i32).unwrap();
        for i in 0..N {
            let (wg, seen) = (wg.clone(), seen.clone());
            go::go(move || {
                let ended: Result<(), Panicking> = defer::call_try(|f| {
                    f.defer(move || wg.done().unwrap());
                    let obj = defergc::gc::alloc(16);
                    // SAFETY: a fresh 16-byte object.
                    unsafe { obj.cast::<usize>().as_ptr().write(i) };
                    let addr = obj.as_ptr() as usize;
                    f.defer_with(move |d| {
                        if i % 500 == 0 {
                            // The panic value keeps the object alive.
                            defergc::gc::collect();
                        }
                        let v = d.recover().expect("the raised object");
                        let p = v.downcast::<NonNull<u8>>().expect("a pointer");
                        assert_eq!(p.as_ptr() as usize, addr);
                        // SAFETY: the object the goroutine raised, live.
                        assert_eq!(unsafe { p.cast::<usize>().read() }, i);
                        seen.fetch_add(1, Ordering::Relaxed);
                    });
                    Err(defer::raise(obj))
                });
                assert!(ended.is_ok(), "the panic was recovered");
                assert!(!leftover_panic());
            });
        }
        wg.wait();
    });
    assert_eq!(status, 0);
    assert_eq!(recovered.load(Ordering::Relaxed), N);
}
