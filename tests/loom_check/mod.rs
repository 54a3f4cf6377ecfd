//! What the loom models share. Model files include it with
//! `mod loom_check;`.
#![allow(dead_code)] // not every model uses every helper

use std::any::Any;

/// Runs `f` under loom: every interleaving up to three preemptions, or
/// up to `LOOM_MAX_PREEMPTIONS` where that is set.
pub fn check(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

/// The message of a panic caught from a model (loom's report), or
/// "(not a string)".
pub fn panic_message(err: &(dyn Any + Send)) -> &str {
    err.downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| err.downcast_ref::<&str>().copied())
        .unwrap_or("(not a string)")
}
