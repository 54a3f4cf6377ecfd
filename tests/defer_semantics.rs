//! Go's defer/panic/recover/Goexit semantics, ported from Go's own tests
//! (test/recover*.go, test/defernil.go, runtime/defer_test.go and the
//! crash tests of runtime/crash_test.go). Each test names its original.

use defergc::defer::{self, Deferred, PanicNilError, PanicValue, RuntimeError};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A log the deferred calls append to, to check order.
#[derive(Default)]
struct Log(RefCell<Vec<String>>);

impl Log {
    fn push(&self, s: impl Into<String>) {
        self.0.borrow_mut().push(s.into());
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

fn int(v: PanicValue) -> i64 {
    *v.downcast_ref::<i64>()
        .unwrap_or_else(|| panic!("not an i64: {v}"))
}

fn text(v: &PanicValue) -> String {
    v.to_string()
}

/// Go's mustRecover(x): recovers x, and a second recover gets nothing.
fn must_recover(d: &Deferred<'_>, x: i64) {
    let v = d.recover().expect("recover returned nothing");
    assert_eq!(int(v), x);
    assert!(d.recover().is_none(), "second recover returned a value");
}

fn must_not_recover(d: &Deferred<'_>) {
    assert!(d.recover().is_none(), "recover returned a value");
}

/// The message of an unrecovered panic, as it left the outermost frame.
fn report_of(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("did not panic");
    match err.downcast::<String>() {
        Ok(s) => *s,
        Err(e) => e
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_else(|| "<non-string payload>".into()),
    }
}

#[test]
fn deferred_calls_run_lifo_on_return() {
    let log = Log::default();
    let r: i32 = defer::call(|f| {
        for name in ["a", "b", "c"] {
            let log = &log;
            f.defer(move || log.push(name));
        }
        7
    });
    assert_eq!(r, 7);
    assert_eq!(log.take(), ["c", "b", "a"]);
}

#[test]
fn deferred_calls_run_lifo_on_panic() {
    let log = Log::default();
    let report = report_of(|| {
        defer::call(|f| -> () {
            for name in ["a", "b", "c"] {
                let log = &log;
                f.defer(move || log.push(name));
            }
            defer::panic("stop")
        })
    });
    assert_eq!(log.take(), ["c", "b", "a"]);
    assert_eq!(report, "panic: stop");
}

/// llgo test/defer_test.go TestDeferInLoopOrder and TestNestedDeferLoops:
/// loop defers all run at function exit, not per iteration.
#[test]
fn loop_defers_run_at_exit_not_per_iteration() {
    let log = Log::default();
    defer::call(|f| {
        for i in 0..3 {
            let log = &log;
            f.defer(move || log.push(format!("outer:{i}")));
            defer::call(|f| {
                for j in 0..2 {
                    f.defer(move || log.push(format!("inner{i}:{j}")));
                }
                log.push(format!("body{i}"));
            });
        }
        log.push("end");
    });
    assert_eq!(
        log.take(),
        [
            "body0", "inner0:1", "inner0:0", "body1", "inner1:1", "inner1:0", "body2", "inner2:1",
            "inner2:0", "end", "outer:2", "outer:1", "outer:0"
        ]
    );
}

/// runtime/defer_test.go TestNonSSAableArgs: arguments are evaluated once,
/// when the defer is made.
#[test]
fn arguments_are_evaluated_when_the_defer_is_made() {
    let evaluations = Cell::new(0);
    let seen = Cell::new(0);
    let side_effect = || {
        evaluations.set(evaluations.get() + 1);
        evaluations.get() * 10
    };
    let mut x = 1;
    defer::call(|f| {
        let arg = side_effect();
        let snapshot = x;
        let seen = &seen;
        f.defer(move || seen.set(arg + snapshot));
        x = 100;
        assert_eq!(x, 100);
    });
    assert_eq!(evaluations.get(), 1);
    assert_eq!(seen.get(), 11, "the deferred call saw later values");
}

/// runtime/defer_test.go TestConditionalDefers: [4, 2, 1].
#[test]
fn conditional_defers_run_in_reverse_registration_order() {
    let list = RefCell::new(Vec::new());
    let n = 8;
    let v = defer::call(|f| {
        f.defer_with(|d| {
            let v = d.recover().expect("recover");
            assert_eq!(text(&v), "testConditional");
            assert_eq!(*list.borrow(), [4, 2, 1]);
        });
        defer::call(|f| -> () {
            let list = &list;
            f.defer(move || list.borrow_mut().push(1));
            if n > 5 {
                f.defer(move || list.borrow_mut().push(2));
            }
            if n > 8 {
                f.defer(move || list.borrow_mut().push(3));
            } else {
                f.defer(move || list.borrow_mut().push(4));
            }
            defer::panic("testConditional")
        });
        1
    });
    assert_eq!(v, 0, "a recovered unnamed result is the zero value");
}

/// test/recover.go test1: defers [mustNotRecover, mustRecover(1),
/// withoutRecover]; withoutRecover's sub-call cannot recover.
#[test]
fn recover_go_test1_only_the_direct_deferred_call_recovers() {
    let ran = Log::default();
    defer::call(|f| -> () {
        let ran = &ran;
        f.defer_with(move |d| {
            must_not_recover(d);
            ran.push("mustNotRecover");
        });
        f.defer_with(move |d| {
            must_recover(d, 1);
            ran.push("mustRecover");
        });
        f.defer_with(move |_d| {
            // withoutRecover: a sub-call with its own frame; its deferred
            // call runs on that frame's normal return and gets nothing.
            defer::call(|f| f.defer_with(must_not_recover));
            ran.push("withoutRecover");
        });
        defer::panic(1i64)
    });
    assert_eq!(
        ran.take(),
        ["withoutRecover", "mustRecover", "mustNotRecover"]
    );
}

/// test/recover.go test3 and test4, test/recover1.go test5: a deferred
/// closure's own deferred call, run when the closure returns, recovers for
/// the closure (Go's `defer recover()` inside the closure).
#[test]
fn recover_go_test4_deferred_recover_inside_a_deferred_closure() {
    defer::call(|f| -> () {
        f.defer_with(must_not_recover);
        f.defer_with(|d| {
            defer::call(|f| {
                f.defer(move || {
                    assert_eq!(int(d.recover().expect("recover")), 4);
                })
            });
        });
        defer::panic(4i64)
    });
}

/// test/recover.go test5 (try): a deferred call overwrites the named
/// result after recovering.
#[test]
fn recover_go_test5_named_result_set_by_deferred_recover() {
    fn try_(g: impl FnOnce(), deflt: &'static str) -> String {
        defer::named(String::new(), |f, x| {
            f.defer_with(move |d| {
                if let Some(v) = d.recover() {
                    x.set(text(&v));
                }
            });
            g();
            deflt.to_string()
        })
    }
    assert_eq!(try_(|| defer::panic(5i64), "55"), "5");
    assert_eq!(try_(|| {}, "hi"), "hi");
}

/// test/recover.go test7: after a recovery the earlier defers still run.
#[test]
fn recover_go_test7_earlier_defers_run_after_recovery() {
    let ok = Cell::new(false);
    defer::call(|f| -> () {
        let ok = &ok;
        f.defer(move || ok.set(true));
        f.defer_with(|d| must_recover(d, 7));
        defer::panic(7i64)
    });
    assert!(ok.get());
}

/// test/recover.go test8: `defer varargs(&r, 1, 2, 3); panic(0)` returns
/// 106; `defer varargs(&r, 4, 5, 6); return` returns 15.
#[test]
fn recover_go_test8_deferred_call_changes_named_result() {
    fn varargs(d: &Deferred<'_>, s: &defer::Named<i64>, a: &[i64]) {
        let mut sum: i64 = a.iter().sum();
        if d.recover().is_some() {
            sum += 100;
        }
        s.set(sum);
    }
    let a = defer::named(0i64, |f, r| {
        f.defer_with(move |d| varargs(d, r, &[1, 2, 3]));
        defer::panic(0i64)
    });
    let b = defer::named(0i64, |f, r| {
        f.defer_with(move |d| varargs(d, r, &[4, 5, 6]));
        0
    });
    assert_eq!((a, b), (106, 15));
}

/// test/recover1.go test1: a panic inside a deferred call, recovered by its
/// own deferred call; the first panic then goes on and is recovered.
#[test]
fn recover1_test1_nested_panic_recovered_inside_deferred_call() {
    defer::call(|f| -> () {
        f.defer_with(|d| must_recover(d, 1));
        f.defer(|| {
            defer::call(|f| -> () {
                f.defer_with(|d| must_recover(d, 2));
                defer::panic(2i64)
            })
        });
        defer::panic(1i64)
    });
}

/// test/recover1.go test2: recover, then panic again inside the same
/// deferred call; its own deferred call recovers the second one.
#[test]
fn recover1_test2_recover_then_panic_again() {
    defer::call(|f| -> () {
        f.defer_with(must_not_recover);
        f.defer_with(|d| {
            assert_eq!(int(d.recover().expect("recover 2")), 2);
            defer::call(|f| -> () {
                f.defer_with(|d| must_recover(d, 3));
                defer::panic(3i64)
            })
        });
        defer::panic(2i64)
    });
}

/// test/recover1.go test6: the inner panic is recovered by the inner
/// deferred call; then the closure's deferred recover recovers panic 2.
#[test]
fn recover1_test6_outer_panic_recovered_after_inner_one() {
    defer::call(|f| -> () {
        f.defer_with(must_not_recover);
        f.defer_with(|d| {
            defer::call(|f| -> () {
                f.defer(move || {
                    assert_eq!(int(d.recover().expect("recover 2")), 2);
                });
                f.defer_with(|d| must_recover(d, 3));
                defer::panic(3i64)
            })
        });
        defer::panic(2i64)
    });
}

/// test/recover1.go test7: a `defer recover()` of the closure runs for the
/// closure's own panic 3, which the closure's token does not own: no-op.
#[test]
fn recover1_test7_recover_with_a_token_of_another_panic_is_a_no_op() {
    defer::call(|f| -> () {
        f.defer_with(|d| must_recover(d, 2));
        f.defer_with(|outer| {
            defer::call(|f| -> () {
                f.defer_with(|d| must_recover(d, 3));
                f.defer(move || assert!(outer.recover().is_none()));
                defer::panic(3i64)
            })
        });
        defer::panic(2i64)
    });
}

/// runtime/defer_test.go TestAbortedPanic: panic2 from a deferred call
/// aborts panic1; recovering panic2 leaves nothing for earlier defers.
#[test]
fn aborted_panic_cannot_be_recovered_later() {
    defer::call(|f| -> () {
        f.defer_with(|d| assert!(d.recover().is_none(), "aborted panic1 recovered"));
        f.defer_with(|d| assert_eq!(text(&d.recover().expect("panic2")), "panic2"));
        f.defer(|| defer::panic("panic2"));
        defer::panic("panic1")
    });
}

/// runtime/defer_test.go TestRecoverMatching: a call deferred by a
/// deferred call runs on that call's normal return and cannot recover.
#[test]
fn recover_matching_nested_deferred_call_gets_nothing() {
    defer::call(|f| -> () {
        f.defer_with(|d| assert_eq!(text(&d.recover().expect("panic1")), "panic1"));
        f.defer(|| defer::call(|f| f.defer_with(must_not_recover)));
        defer::panic("panic1")
    });
}

/// test/defernil.go: deferring a nil function panics when it would run.
#[test]
fn deferring_nil_panics_at_call_time_not_defer_time() {
    let x = Cell::new(0);
    let recovered = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        defer::call(|f| {
            f.defer_opt(None::<fn()>);
            x.set(1);
        });
        None
    });
    let v = recovered.expect("nil deferred call did not panic");
    assert_eq!(x.get(), 1, "the panic came before the body finished");
    assert_eq!(
        v.downcast_ref::<RuntimeError>(),
        Some(&RuntimeError(
            "invalid memory address or nil pointer dereference"
        ))
    );
    assert_eq!(
        v.to_string(),
        "runtime error: invalid memory address or nil pointer dereference"
    );
}

/// Go 1.21+: panic(nil) delivers a distinct non-nil value.
#[test]
fn panic_nil_delivers_panic_nil_error() {
    let v = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        defer::panic_nil()
    })
    .expect("recover returned nothing for panic(nil)");
    assert!(v.is::<PanicNilError>());
    assert_eq!(v.to_string(), "panic called with nil argument");
    assert_eq!(
        report_of(|| defer::panic_nil()),
        "panic: panic called with nil argument"
    );
}

/// runtime/defer_test.go TestDeferWithRepeatedRepanics: repeated
/// re-panics leave no stale records behind.
#[test]
fn repeated_repanics_leave_no_stale_records() {
    fn interpreter(level: i64, max: i64, rec: i64) {
        defer::call(|f| -> () {
            f.defer_with(move |d| {
                if let Some(e) = d.recover() {
                    let e = int(e);
                    if level != e {
                        defer::panic(e)
                    }
                }
            });
            if level + 1 < max {
                interpreter(level + 1, max, rec)
            } else {
                defer::panic(rec)
            }
        })
    }
    fn recurse_panic_rec(level: i64, max: i64) {
        defer::call(|f| -> () {
            f.defer_with(move |d| {
                if level == 0 {
                    assert_eq!(int(d.recover().expect("top recover")), max);
                }
            });
            if level < max {
                recurse_panic_rec(level + 1, max)
            } else {
                defer::panic(max)
            }
        })
    }
    for (max, rec) in [(6, 2), (5, 1), (6, 3)] {
        interpreter(0, max, rec);
        recurse_panic_rec(0, 10);
    }
    // The thread's chain is clean: a fresh panic reports alone.
    assert_eq!(
        report_of(|| defer::call(|_| -> () { defer::panic("x") })),
        "panic: x"
    );
}

/// runtime/defer_test.go TestIssue43921.
#[test]
fn issue43921_panic_recovered_in_deferred_call_resumes_outer_panic() {
    defer::call(|f| -> () {
        f.defer_with(|d| must_recover(d, 1));
        defer::call(|f| -> () {
            for _ in 0..1 {
                f.defer(|| {});
            }
            f.defer(|| {
                defer::call(|f| -> () {
                    f.defer_with(|d| must_recover(d, 4));
                    defer::panic(4i64)
                })
            });
            defer::panic(1i64)
        })
    });
}

/// runtime/defer_test.go TestIssue43920.
#[test]
fn issue43920_panics_inside_nested_deferred_calls() {
    let steps = Cell::new(0);
    defer::call(|f| -> () {
        f.defer_with(|d| must_recover(d, 1));
        f.defer(|| {
            defer::call(|f| {
                f.defer(|| {
                    defer::call(|f| -> () {
                        f.defer_with(|d| must_recover(d, 5));
                        f.defer(|| defer::panic(5i64));
                        defer::call(|_| -> () { defer::panic(4i64) })
                    })
                });
                f.defer_with(|d| must_recover(d, 3));
                f.defer(|| defer::panic(3i64));
            })
        });
        defer::call(|f| -> () {
            let steps = &steps;
            f.defer(move || steps.set(steps.get() + 1));
            defer::panic(1i64)
        })
    });
    assert_eq!(steps.get(), 1);
}

/// runtime/defer_test.go TestIssue43941: the step sequence 8..14 and the
/// values recovered on the way.
#[test]
fn issue43941_steps_and_recovered_values() {
    let steps = Cell::new(7);
    let step = |n: i32| {
        steps.set(steps.get() + 1);
        assert_eq!(steps.get(), n, "step order");
    };
    let step = &step;
    defer::call(|f| -> () {
        f.defer_with(move |d| {
            step(14);
            must_recover(d, 4);
        });
        // func A
        defer::call(|f| {
            f.defer(|| {});
            f.defer(|| {});
            f.defer(move || step(10));
            f.defer(move || step(9));
            step(8);
            // func B
            defer::call(|f| -> () {
                f.defer(|| {
                    defer::call(|f| -> () {
                        f.defer_with(|d| must_recover(d, 3));
                        f.defer(|| defer::panic(3i64));
                        defer::panic(2i64)
                    })
                });
                f.defer_with(|d| must_recover(d, 1));
                f.defer(|| defer::panic(1i64));
            });
        });
        // func C
        defer::call(|f| -> () {
            f.defer(move || step(13));
            f.defer(move || step(12));
            defer::call(|f| -> () {
                f.defer(move || step(11));
                defer::panic(4i64)
            })
        })
    });
    assert_eq!(steps.get(), 14);
}

/// crash_test RecursivePanic4: recovered, then a new panic in the same
/// deferred call.
#[test]
fn report_marks_recovered_panics() {
    let report = report_of(|| {
        defer::call(|f| -> () {
            f.defer_with(|d| {
                d.recover();
                defer::panic("second panic")
            });
            defer::panic("first panic")
        })
    });
    assert_eq!(
        report,
        "panic: first panic [recovered]\n\tpanic: second panic"
    );
}

/// crash_test PanicTraceback: aborted panics print without a marker.
#[test]
fn report_lists_aborted_panics_oldest_first() {
    let report = report_of(|| {
        defer::call(|f| -> () {
            f.defer(|| defer::panic("panic pt1"));
            defer::call(|f| -> () {
                f.defer(|| defer::panic("panic pt2"));
                defer::panic("hello")
            })
        })
    });
    assert_eq!(
        report,
        "panic: hello\n\tpanic: panic pt2\n\tpanic: panic pt1"
    );
}

/// crash_test RecursivePanic3: a panic recovered inside a deferred call
/// leaves the first one unmarked.
#[test]
fn report_omits_panics_recovered_within_a_deferred_call() {
    let report = report_of(|| {
        defer::call(|f| -> () {
            f.defer(|| {
                defer::call(|f| -> () {
                    f.defer_with(|d| {
                        d.recover();
                    });
                    defer::panic("second panic")
                })
            });
            defer::panic("first panic")
        })
    });
    assert_eq!(report, "panic: first panic");
}

/// crash_test RepanickedPanicSandwich (as Go printed it before the 1.25
/// "[recovered, repanicked]" merge).
#[test]
fn report_of_a_repanic_sandwich() {
    let report = report_of(|| {
        defer::call(|f| -> () {
            f.defer_with(|d| {
                let v = d.recover().expect("inner");
                assert_eq!(text(&v), "inner");
                defer::panic("outer")
            });
            f.defer_with(|d| {
                let v = d.recover().expect("outer");
                assert_eq!(text(&v), "outer");
                defer::panic("inner")
            });
            defer::panic("outer")
        })
    });
    assert_eq!(
        report,
        "panic: outer [recovered]\n\tpanic: inner [recovered]\n\tpanic: outer"
    );
}

/// A recovered value re-raised as it is.
#[test]
fn repanic_with_a_recovered_value_keeps_its_type() {
    let v = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        defer::call(|f| -> () {
            f.defer_with(|d| defer::panic(d.recover().expect("first")));
            defer::panic(41i64)
        });
        None
    })
    .expect("second recover");
    assert_eq!(int(v), 41);
}

/// crash_test GoexitDefer: Goexit runs the defers; recover gets nothing.
#[test]
fn goexit_runs_every_deferred_call_and_cannot_be_recovered() {
    let log = Log::default();
    let out = defer::goroutine(|| {
        defer::call(|f| -> () {
            let log = &log;
            f.defer(move || log.push("outer"));
            defer::call(|f| -> () {
                f.defer_with(move |d| {
                    assert!(d.recover().is_none());
                    assert!(!d.is_panicking());
                    log.push("inner");
                });
                defer::goexit()
            });
            log.push("not reached");
        });
        "returned"
    });
    assert_eq!(out, None);
    assert_eq!(log.take(), ["inner", "outer"]);
}

/// crash_test RecoverBeforePanicAfterGoexit (and its loop-defer variant):
/// a panic raised during Goexit and recovered does not cancel it.
#[test]
fn goexit_continues_after_a_recovered_panic() {
    for extra in [0, 2] {
        let log = Log::default();
        let out = defer::goroutine(|| {
            defer::call(|f| -> () {
                let log = &log;
                f.defer(move || log.push("outer frame"));
                defer::call(|f| -> () {
                    for _ in 0..extra {
                        f.defer(move || log.push("loop"));
                    }
                    f.defer_with(move |d| {
                        assert_eq!(text(&d.recover().expect("hello")), "hello");
                        log.push("recovered");
                    });
                    f.defer(|| defer::panic("hello"));
                    defer::goexit()
                });
                log.push("returned normally");
            });
        });
        assert_eq!(out, None, "the goroutine survived Goexit");
        let mut expected = vec!["recovered".to_string()];
        expected.extend(std::iter::repeat_n("loop".to_string(), extra));
        expected.push("outer frame".into());
        assert_eq!(log.take(), expected);
    }
}

/// crash_test RecoveredPanicAfterGoexit.
#[test]
fn goexit_continues_after_a_panic_recovered_inside_a_deferred_call() {
    let out = defer::goroutine(|| {
        defer::call(|f| -> () {
            f.defer(|| {
                defer::call(|f| -> () {
                    f.defer_with(|d| assert!(d.recover().is_some()));
                    defer::panic("hello")
                })
            });
            defer::goexit()
        })
    });
    assert_eq!(out, None);
}

/// crash_test GoexitInPanic: Goexit in a deferred call during a panic ends
/// the goroutine silently; the panic is never reported.
#[test]
fn goexit_during_a_panic_ends_the_goroutine_silently() {
    let out = defer::goroutine(|| {
        defer::call(|f| -> () {
            f.defer(|| defer::goexit());
            defer::panic("hello")
        })
    });
    assert_eq!(out, None);
}

/// crash_test PanicAfterGoexit: a panic during Goexit is reported, without
/// a tab (the Goexit record prints nothing).
#[test]
fn panic_after_goexit_is_reported() {
    let report = report_of(|| {
        defer::goroutine(|| {
            defer::call(|f| -> () {
                f.defer(|| defer::panic("hello"));
                defer::goexit()
            })
        });
    });
    assert_eq!(report, "panic: hello");
}

#[test]
fn goexit_without_any_frame_ends_the_goroutine() {
    assert_eq!(defer::goroutine(|| -> () { defer::goexit() }), None);
}

#[test]
fn a_goroutine_keeps_its_panics_apart_from_the_surrounding_ones() {
    defer::call(|f| -> () {
        f.defer_with(|d| must_recover(d, 1));
        f.defer(|| {
            // A goroutine run from a deferred call during panic 1.
            let r =
                catch_unwind(|| defer::goroutine(|| defer::call(|_| -> () { defer::panic(2i64) })));
            assert_eq!(*r.unwrap_err().downcast::<String>().unwrap(), "panic: 2");
        });
        defer::panic(1i64)
    });
}

/// Ordinary Rust panics (index out of bounds, panic!) are Go panics inside
/// frames: deferred calls run and may recover them.
#[test]
fn rust_panics_are_recoverable_go_panics() {
    let v = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        let v: Vec<i32> = Vec::new();
        let i = std::hint::black_box(3);
        Some(PanicValue::new(v[i]))
    })
    .expect("index panic not recovered");
    assert!(v.is_rust_panic());
    assert!(v.to_string().contains("index out of bounds"), "{v}");
}

#[test]
#[should_panic(expected = "plain rust panic")]
fn unrecovered_rust_panics_leave_unchanged() {
    defer::call(|f| -> () {
        f.defer(|| {});
        panic!("plain rust panic")
    });
}

#[test]
fn deferring_on_an_outer_frame_while_an_inner_one_is_active_panics() {
    let v = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        defer::call(|outer| {
            defer::call(|_inner| outer.defer(|| {}));
        });
        None
    })
    .expect("misuse not reported");
    assert!(v
        .to_string()
        .starts_with("defergc: defer on a frame that is not the innermost"));
}

#[test]
fn foreign_catch_unwind_between_frames_leaves_the_chain_consistent() {
    defer::call(|f| -> () {
        f.defer_with(|d| must_recover(d, 2));
        // A library in between swallows the unwinding of panic 1.
        let swallowed = catch_unwind(|| defer::call(|_| -> () { defer::panic(1i64) }));
        assert!(swallowed.is_err());
        defer::panic(2i64)
    });
    assert_eq!(report_of(|| defer::panic("alone")), "panic: alone");
}

#[test]
fn a_recovered_value_panicked_again_reports_once_as_repanicked() {
    // Go 1.25: `panic: v [recovered, repanicked]`, one line.
    let report = report_of(|| {
        defer::call(|f| -> () {
            f.defer_with(|d| {
                let v = d.recover().expect("recovered");
                defer::panic(v)
            });
            defer::panic("first")
        })
    });
    assert_eq!(report, "panic: first [recovered, repanicked]");
    // Another value after a recovery is two panics, as before.
    let report = report_of(|| {
        defer::call(|f| -> () {
            f.defer_with(|d| {
                d.recover().expect("recovered");
                defer::panic("second")
            });
            defer::panic("first")
        })
    });
    assert_eq!(report, "panic: first [recovered]\n\tpanic: second");
}

#[test]
fn panic_values_of_any_type_round_trip() {
    #[derive(Debug, PartialEq)]
    struct Custom(Vec<u8>, &'static str);
    let v = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        defer::panic(Custom(vec![1, 2, 3], "x"))
    })
    .unwrap();
    // Printed through Debug: never by its Rust type name.
    assert_eq!(v.to_string(), r#"Custom([1, 2, 3], "x")"#);
    assert_eq!(v.downcast::<Custom>().unwrap(), Custom(vec![1, 2, 3], "x"));
    let zst = defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover()));
        defer::panic(())
    })
    .unwrap();
    assert!(zst.is::<()>());
}

#[test]
fn multi_line_panic_messages_are_indented_like_go() {
    assert_eq!(
        report_of(|| defer::panic("important multi-line\nstring message")),
        "panic: important multi-line\n\tstring message"
    );
}
