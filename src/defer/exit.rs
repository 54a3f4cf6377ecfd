//! How the runtime ends the process after an unrecovered panic or a fatal
//! error: Go's exit, below everything in this layer that reports.

/// The one way the runtime ends the process after an unrecovered panic or
/// a fatal error (every such path comes here; the one exception is a
/// goroutine's stack overflow, reported inside the fault handler, where
/// only `write(2)` and `_exit(2)` are safe):
///
/// 1. C's stdio buffers are flushed (`fflush(NULL)`): what a compiled
///    program printed before the panic appears before the report, as a Go
///    program's does (Go's os.Stdout is unbuffered);
/// 2. `text` (with a final newline) is written to standard error;
/// 3. the process ends with `_exit(2)`, Go's status: no `atexit` handlers
///    and no destructors run (Go's runtime runs none either, and other
///    threads may still be running the program's code). With
///    `GOTRACEBACK=crash` it ends with SIGABRT instead, as Go's does.
pub(crate) fn exit_go(text: &str) -> ! {
    let mut text = text.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let crash = super::traceback::level() == super::traceback::Level::Crash;
    // SAFETY: flushes C's buffers, writes initialised bytes to fd 2, then
    // ends the process (SIGABRT with its default action, or _exit).
    unsafe {
        libc::fflush(std::ptr::null_mut());
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let n = libc::write(2, rest.as_ptr().cast(), rest.len());
            if n <= 0 {
                if n < 0 && *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            rest = &rest[n as usize..];
        }
        if crash {
            libc::signal(libc::SIGABRT, libc::SIG_DFL);
            libc::raise(libc::SIGABRT);
        }
        libc::_exit(2)
    }
}
