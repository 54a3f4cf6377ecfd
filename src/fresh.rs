//! Thread-locals read afresh: the one way runtime code that may run on a
//! goroutine reaches a `thread_local!`.
//!
//! A goroutine moves between worker threads at every switch (a park, a
//! yield, a system call's return), in the middle of a Rust function. The
//! compiler takes a thread-local's address to be the same for the whole of
//! a function (the thread pointer never changes under it), so after
//! inlining it may compute the address once, before the switch, and use it
//! after: the goroutine then reads and writes the slot of the thread it
//! ran on before, which another goroutine now uses. (That is how readies a
//! wait did not ask for turned into goroutines switched out under the
//! wrong identity: a wait's loop parked twice, and the second park read
//! the old worker's current goroutine.)
//!
//! [`with`] and [`try_with`] do the access inside a call that is never
//! inlined, so each call computes the address on the thread it runs on.
//! The closure must not switch goroutines. Every `thread_local!` of the
//! crate that goroutine code can reach is read through them (design.md,
//! invariant 10); a thread-local only the scheduler's own stack or a plain
//! thread touches may use `LocalKey::with` directly.

use std::thread::{AccessError, LocalKey};

/// The value of a `Cell<T>` thread-local `KEY` of the calling module,
/// read on the thread this runs on: `fresh_get!(KEY: T)`. The hot case: a
/// function of its own per key, never inlined, in which the key is a
/// constant, so the access inlines to a load (the generic [`with`] reaches
/// the key through its accessor pointer, an indirect call).
macro_rules! fresh_get {
    ($key:ident: $t:ty) => {{
        #[inline(never)]
        fn get() -> $t {
            $key.with(std::cell::Cell::get)
        }
        get()
    }};
}
pub(crate) use fresh_get;

/// `key.with(f)`, on the thread this call runs on.
#[inline(never)]
pub(crate) fn with<T: 'static, R>(key: &'static LocalKey<T>, f: impl FnOnce(&T) -> R) -> R {
    key.with(f)
}

/// `key.try_with(f)`, on the thread this call runs on.
#[inline(never)]
pub(crate) fn try_with<T: 'static, R>(
    key: &'static LocalKey<T>,
    f: impl FnOnce(&T) -> R,
) -> Result<R, AccessError> {
    key.try_with(f)
}

/// The calling thread's `errno`, read on the thread this runs on. errno is
/// a thread-local of libc's, reached through `__errno_location()`, which
/// the compiler may take to return the same address for a whole function:
/// a goroutine that parked between a system call and its errno check
/// would read another thread's errno.
#[inline(never)]
pub(crate) fn errno() -> i32 {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// `std::io::Error::last_os_error()`, on the thread this runs on.
pub(crate) fn last_os_error() -> std::io::Error {
    std::io::Error::from_raw_os_error(errno())
}
