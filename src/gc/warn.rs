//! Collector warnings: counted, and handed to a replaceable handler.
//!
//! bdwgc calls its warn proc with the allocation lock held, so nothing here
//! may allocate from the collector (or through [`super::GcAlloc`]): the
//! message is formatted into a stack buffer and the default handler writes
//! it with one `write(2)`, prefixed `defergc: bdwgc warning:`, for the first
//! 16 warnings of the process; later ones are only counted.

// Under nogc nothing calls the warn proc; the handler API stays.
#![cfg_attr(not(defergc_boehm), allow(dead_code))]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A warning handler: receives the formatted message, without a trailing
/// newline. It runs with the collector's lock held: it must not allocate
/// collector memory, must not use the collector in any way, and must not
/// unwind (a panic is caught and ignored).
pub type WarningHandler = fn(&str);

/// How many warnings the default handler prints before it goes quiet.
const PRINT_LIMIT: u64 = 16;

static COUNT: AtomicU64 = AtomicU64::new(0);
static HANDLER: AtomicUsize = AtomicUsize::new(0);

/// Replaces the warning handler; `None` restores the default (print the
/// first 16 warnings to stderr). Warnings are counted in
/// [`super::Stats::warnings`] either way.
pub fn set_warning_handler(handler: Option<WarningHandler>) {
    HANDLER.store(handler.map_or(0, |h| h as usize), Ordering::Release);
}

pub(super) fn count() -> u64 {
    COUNT.load(Ordering::Relaxed)
}

fn default_handler(msg: &str) {
    if COUNT.load(Ordering::Relaxed) <= PRINT_LIMIT {
        let mut buf = StackBuf::new();
        buf.push_str("defergc: bdwgc warning: ");
        buf.push_str(msg);
        buf.push_str("\n");
        // SAFETY: writes the buffer's initialised bytes to fd 2.
        unsafe { libc::write(2, buf.bytes.as_ptr().cast(), buf.len) };
    }
}

/// bdwgc's warn proc: `msg` is a printf format with at most one argument.
#[cfg(defergc_boehm)]
pub(super) unsafe extern "C" fn warn_proc(
    msg: *const std::ffi::c_char,
    arg: super::sys::GC_uintptr_t,
) {
    COUNT.fetch_add(1, Ordering::Relaxed);
    // SAFETY: bdwgc passes a NUL-terminated format string.
    let fmt = unsafe { std::ffi::CStr::from_ptr(msg) }.to_bytes();
    let mut buf = StackBuf::new();
    format_one_arg(&mut buf, fmt, arg as usize);
    let text = buf.as_str().trim_end_matches('\n');
    let handler = HANDLER.load(Ordering::Acquire);
    let handler: WarningHandler = if handler == 0 {
        default_handler
    } else {
        // SAFETY: only set_warning_handler stores here, and it stores fns.
        unsafe { std::mem::transmute::<usize, WarningHandler>(handler) }
    };
    let _ = std::panic::catch_unwind(|| handler(text));
}

/// Substitutes `arg` for the first printf conversion in `fmt` (bdwgc's
/// warnings use %ld, %lu, %lx, %p and %s-free formats), and `%%` for `%`.
#[cfg(any(defergc_boehm, test))]
fn format_one_arg(buf: &mut StackBuf, fmt: &[u8], arg: usize) {
    let mut i = 0;
    let mut used = false;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            buf.push_byte(c);
            i += 1;
            continue;
        }
        // Skip flags, width and length modifiers up to the conversion.
        let mut j = i + 1;
        while j < fmt.len() && b"-+ #0123456789.lhzjt".contains(&fmt[j]) {
            j += 1;
        }
        let conv = fmt.get(j).copied().unwrap_or(b'%');
        match conv {
            b'%' => buf.push_byte(b'%'),
            _ if used => buf.push_str("?"),
            b'd' | b'i' => {
                buf.push_signed(arg as isize);
                used = true;
            }
            b'u' => {
                buf.push_unsigned(arg as u64, 10);
                used = true;
            }
            b'x' | b'X' | b'p' => {
                buf.push_str("0x");
                buf.push_unsigned(arg as u64, 16);
                used = true;
            }
            _ => buf.push_str("?"),
        }
        i = j + 1;
    }
}

/// A fixed buffer that never allocates; text past its end is dropped.
struct StackBuf {
    bytes: [u8; 512],
    len: usize,
}

impl StackBuf {
    fn new() -> StackBuf {
        StackBuf {
            bytes: [0; 512],
            len: 0,
        }
    }

    fn push_byte(&mut self, b: u8) {
        if self.len < self.bytes.len() {
            self.bytes[self.len] = b;
            self.len += 1;
        }
    }

    fn push_str(&mut self, s: &str) {
        for &b in s.as_bytes() {
            self.push_byte(b);
        }
    }

    #[cfg(any(defergc_boehm, test))]
    fn push_unsigned(&mut self, mut v: u64, radix: u64) {
        let mut digits = [0u8; 20];
        let mut n = 0;
        loop {
            digits[n] = b"0123456789abcdef"[(v % radix) as usize];
            n += 1;
            v /= radix;
            if v == 0 {
                break;
            }
        }
        for &d in digits[..n].iter().rev() {
            self.push_byte(d);
        }
    }

    #[cfg(any(defergc_boehm, test))]
    fn push_signed(&mut self, v: isize) {
        if v < 0 {
            self.push_byte(b'-');
        }
        self.push_unsigned(v.unsigned_abs() as u64, 10);
    }

    /// The text so far; a multi-byte character cut at the end is dropped.
    #[cfg(any(defergc_boehm, test))]
    fn as_str(&self) -> &str {
        match std::str::from_utf8(&self.bytes[..self.len]) {
            Ok(s) => s,
            // SAFETY: valid_up_to marks the end of the valid UTF-8 prefix.
            Err(e) => unsafe { std::str::from_utf8_unchecked(&self.bytes[..e.valid_up_to()]) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(f: &str, arg: usize) -> String {
        let mut buf = StackBuf::new();
        format_one_arg(&mut buf, f.as_bytes(), arg);
        buf.as_str().to_string()
    }

    #[test]
    fn warning_formats_substitute_the_single_argument() {
        assert_eq!(
            fmt(
                "Repeated allocation of very large block (appr. size %ld KiB)",
                4096
            ),
            "Repeated allocation of very large block (appr. size 4096 KiB)"
        );
        assert_eq!(fmt("at %p", 255), "at 0xff");
        assert_eq!(fmt("%lu%% done, %lu", 5), "5% done, ?");
        assert_eq!(fmt("neg %ld", (-3isize) as usize), "neg -3");
    }

    #[test]
    fn overlong_warnings_are_truncated_not_overflowed() {
        let long = "x".repeat(2000);
        assert_eq!(fmt(&long, 0).len(), 512);
    }
}
