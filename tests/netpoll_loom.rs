//! The poller's waits on the real code, checked exhaustively by loom: a
//! descriptor record's slots (`src/go/netpoll.rs`: `PollDesc::wait`,
//! `ready`, `expire`, `unblock_all`), with the waiter a loom thread that
//! parks through the real `Waiter` (`src/go/wait.rs`).
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test netpoll_loom
//! ```
//!
//! Readiness (the poller), a deadline firing (the timer) and a close race
//! with a wait and with each other; two closes race with each other and
//! with the end of an operation that pins the descriptor (`pin`,
//! `unpin`, `claim_close`): one close wins, the record is retired once.
//! A close of a guessed handle (the one a free record's next
//! registration will have) races the open that takes the record
//! (`begin_open`, `finish_open`): it closes the registration the open
//! handed out, or is refused, never the record before it is handed out.
//! Every model checks that the wait
//! ends (loom reports a waiter nobody wakes as a deadlock), with an
//! outcome one of the racers explains, and that no waiter is left in a
//! slot. A readiness that comes while the record is being opened is kept
//! for the first wait. The `loom_catches_` tests bring back a readiness
//! that overwrites the parked waiter instead of readying it, a close
//! claimed outside the record's lock, and a record that answers to its
//! next handle while free or being opened, and check loom finds each.
#![cfg(loom)]

mod loom_check;

use defergc::go::model::{self, Claim, Poll, PollEnd};
use loom::sync::Arc;
use loom::thread;
use loom_check::check;
use std::sync::RwLock;

/// Models run with the bug off while the bug test runs alone.
static BUG: RwLock<()> = RwLock::new(());

/// Runs `f` on the record in a new loom thread.
fn on<T: 'static>(p: &Arc<Poll>, f: impl FnOnce(&Poll) -> T + 'static) -> thread::JoinHandle<T> {
    let p = p.clone();
    thread::spawn(move || f(&p))
}

/// A wait and a readiness: the wait returns Ok whichever comes first.
fn wait_and_ready() {
    let p = Arc::new(Poll::new());
    let r = on(&p, |p| p.ready(true));
    assert_eq!(p.wait(true), Ok(()));
    r.join().unwrap();
    p.assert_no_waiter();
}

#[test]
fn ready_wakes_the_waiter() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(wait_and_ready);
}

/// A wait and a close: the wait ends with Closing, and so does the next.
#[test]
fn close_wakes_the_waiter() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(|| {
        let p = Arc::new(Poll::new());
        let c = on(&p, |p| p.close());
        assert_eq!(p.wait(true), Err(PollEnd::Closing));
        c.join().unwrap();
        assert_eq!(p.wait(true), Err(PollEnd::Closing));
        p.assert_no_waiter();
    });
}

/// Readiness and a close race with a wait: Ok if the readiness came
/// first, else Closing; never a hang.
#[test]
fn ready_and_close_race() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(|| {
        let p = Arc::new(Poll::new());
        let r = on(&p, |p| p.ready(true));
        let c = on(&p, |p| p.close());
        let got = p.wait(true);
        assert!(got == Ok(()) || got == Err(PollEnd::Closing), "{got:?}");
        r.join().unwrap();
        c.join().unwrap();
        p.assert_no_waiter();
    });
}

/// A deadline firing and readiness race with a wait: Ok or Timeout; once
/// expired, a direction stays expired (the next wait is Timeout at once);
/// the other direction is untouched.
#[test]
fn deadline_and_ready_race() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(|| {
        let p = Arc::new(Poll::new());
        p.arm(true, 1);
        let t = on(&p, |p| p.expire(true, 1));
        let r = on(&p, |p| p.ready(true));
        let got = p.wait(true);
        assert!(got == Ok(()) || got == Err(PollEnd::Timeout), "{got:?}");
        t.join().unwrap();
        r.join().unwrap();
        assert_eq!(p.wait(true), Err(PollEnd::Timeout));
        p.ready(false);
        assert_eq!(p.wait(false), Ok(()));
        p.assert_no_waiter();
    });
}

/// A deadline moved (re-armed as timer 2) while its old timer (1) fires:
/// the old firing does nothing once the new deadline is armed, and a
/// waiter parked meanwhile is woken by the readiness.
#[test]
fn a_stale_deadline_does_nothing() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(|| {
        let p = Arc::new(Poll::new());
        p.arm(true, 1);
        p.arm(true, 2);
        let t = on(&p, |p| p.expire(true, 1));
        let r = on(&p, |p| p.ready(true));
        assert_eq!(p.wait(true), Ok(()));
        t.join().unwrap();
        r.join().unwrap();
        p.assert_no_waiter();
    });
}

/// Readers and writers in both directions at once, each readied once.
#[test]
fn both_directions() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(|| {
        let p = Arc::new(Poll::new());
        let w = on(&p, |p| p.wait(false));
        let r = on(&p, |p| {
            p.ready(false);
            p.ready(true);
        });
        assert_eq!(p.wait(true), Ok(()));
        assert_eq!(w.join().unwrap(), Ok(()));
        r.join().unwrap();
        p.assert_no_waiter();
    });
}

/// Two closes race: one retires the record, the other is refused.
fn two_closes() {
    let p = Arc::new(Poll::new());
    let a = on(&p, |p| p.claim_close());
    let b = p.claim_close();
    let a = a.join().unwrap();
    assert!(
        matches!(
            (a, b),
            (Claim::Retired, Claim::Refused) | (Claim::Refused, Claim::Retired)
        ),
        "two closes gave {a:?} and {b:?}: one must retire the record, the other be refused"
    );
    assert!(!p.registered());
}

#[test]
fn of_two_closes_one_wins() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(two_closes);
}

/// Two closes race with the end of the last operation on the descriptor:
/// one close is refused, and the record is retired exactly once, by the
/// winning close or, if the operation still ran then, by its end.
#[test]
fn two_closes_and_an_operation_retire_once() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(|| {
        let p = Arc::new(Poll::new());
        assert!(p.pin());
        let a = on(&p, |p| p.claim_close());
        let b = on(&p, |p| p.claim_close());
        let by_operation = p.unpin();
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        assert!(
            (a == Claim::Refused) != (b == Claim::Refused),
            "closes: {a:?} and {b:?}"
        );
        let by_close = a == Claim::Retired || b == Claim::Retired;
        assert!(
            by_close != by_operation,
            "retired by a close: {by_close}, by the operation's end: {by_operation}"
        );
        assert!(!p.registered());
        assert!(!p.pin(), "a closed record was pinned");
    });
}

/// An open takes a free record while another thread closes the handle
/// the open will hand out, guessed: the close is refused, or it retired
/// the registration the open handed out (whose generation it guessed).
/// Never a record retired while free (it would go on the free list
/// twice) or while being opened (the open would hand out a dead handle
/// with its number left registered).
fn guessed_close_races_open() {
    let p = Arc::new(Poll::free());
    let guess = on(&p, |p| p.claim_close_of(0));
    let opened = p.open();
    let guess = guess.join().unwrap();
    assert_ne!(guess, Claim::LeftToOperation, "nothing pinned the record");
    let live = p.live_generation();
    if guess == Claim::Retired {
        assert_eq!(
            opened, 0,
            "a guessed close retired the free record: the open handed out generation {opened}"
        );
        assert_eq!(
            live, None,
            "a guessed close retired the record while it was being opened: it is live again under generation {live:?}, a handle no close will end"
        );
    } else {
        assert_eq!(live, Some(opened), "the open's registration is not live");
    }
}

#[test]
fn a_guessed_close_never_retires_a_record_before_its_open_hands_it_out() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(guessed_close_races_open);
}

/// Readiness arrives while the record is being opened (the number is in
/// the epoll set before the handle is handed out): it is kept, and the
/// first wait after the open takes it (edge-triggered epoll reports that
/// edge once, so a readiness dropped here would leave the wait parked for
/// good).
#[test]
fn readiness_during_an_open_is_kept() {
    let _on = BUG.read().unwrap_or_else(|e| e.into_inner());
    check(|| {
        let p = Arc::new(Poll::free());
        assert_eq!(p.begin_open(), 0);
        // The number is in the epoll set from here: the poller may see it
        // ready at once.
        let poller = on(&p, |p| p.ready(true));
        p.finish_open();
        assert_eq!(p.wait(true), Ok(()));
        poller.join().unwrap();
        p.assert_no_waiter();
    });
}

/// Runs `model` with a bug switched on (`set`) and checks loom finds it:
/// the model fails with a message containing `expected`.
fn loom_catches(set: fn(bool), model: fn(), bug: &str, expected: &str) {
    let _alone = BUG.write().unwrap_or_else(|e| e.into_inner());
    set(true);
    let caught = std::panic::catch_unwind(|| check(model));
    set(false);
    let err = match caught {
        Ok(()) => panic!("loom found nothing wrong with {bug}: the model checks nothing"),
        Err(err) => err,
    };
    let msg = loom_check::panic_message(&*err);
    assert!(msg.contains(expected), "loom failed otherwise: {msg}");
    eprintln!("with {bug}, loom failed with: {msg}");
}

#[test]
fn loom_catches_a_record_that_answers_to_its_next_handle() {
    loom_catches(
        model::set_unchecked_phase,
        guessed_close_races_open,
        "free records answering to their next handle",
        "a guessed close retired",
    );
}

#[test]
fn loom_catches_a_close_claimed_without_the_lock() {
    loom_catches(
        model::set_unclaimed_close,
        two_closes,
        "the close claimed outside the lock",
        "two closes gave",
    );
}

#[test]
fn loom_catches_a_lost_wakeup() {
    loom_catches(model::set_lost_wakeup, wait_and_ready, "a lost wakeup", "");
}
