//! Messages written from a signal handler: text built in a fixed buffer
//! (integers formatted by hand, no allocation, no lock) and written with
//! `write(2)`.

/// Text built without allocating, for a signal handler: a fixed buffer
/// (what does not fit is cut off).
pub(crate) struct SignalText {
    buf: [u8; 256],
    len: usize,
}

impl SignalText {
    pub(crate) const fn new() -> SignalText {
        SignalText {
            buf: [0; 256],
            len: 0,
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    /// `n` in decimal.
    pub(crate) fn push_u64(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Writes the text to fd 2 (`write(2)`, retried when interrupted or
    /// short).
    pub(crate) fn write_stderr(&self) {
        let mut rest = self.as_bytes();
        while !rest.is_empty() {
            // SAFETY: writes initialised bytes of our buffer to fd 2.
            let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
            if n < 0 {
                // SAFETY: errno is a thread-local the handler may read.
                if unsafe { *libc::__errno_location() } == libc::EINTR {
                    continue;
                }
                return;
            }
            if n == 0 {
                return;
            }
            rest = &rest[n as usize..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SignalText;

    #[test]
    fn signal_text_formats_integers_as_format_does() {
        for n in [0u64, 7, 10, 256, 65536, u64::MAX] {
            let mut t = SignalText::new();
            t.push(b"x");
            t.push_u64(n);
            assert_eq!(t.as_bytes(), format!("x{n}").as_bytes());
        }
    }

    #[test]
    fn signal_text_cuts_what_does_not_fit() {
        let mut t = SignalText::new();
        for _ in 0..100 {
            t.push(b"abcdef");
        }
        assert_eq!(t.as_bytes().len(), 256);
    }
}
