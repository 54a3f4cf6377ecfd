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
