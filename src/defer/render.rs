//! How Go prints a panic value in its report (`printpanicval`): basic
//! kinds by value (floats in the runtime's `+d.dddddde+ddd` form), strings
//! as they are with a tab after each newline, named basic types as
//! `name(value)`, errors and Stringers by their text, anything else as
//! `(type) 0xaddress`. Values of compiled code carry a type descriptor
//! ([`RType`]) that says which applies; Rust values print through
//! `Display` (strings, numbers, errors) or `Debug`.

use std::ffi::{c_char, c_void, CStr};
use std::fmt::Write as _;

/// Go's kinds, numbered as `reflect.Kind`.
pub mod kind {
    /// Go's `bool`.
    pub const BOOL: u32 = 1;
    /// Go's `int`.
    pub const INT: u32 = 2;
    /// Go's `int8`.
    pub const INT8: u32 = 3;
    /// Go's `int16`.
    pub const INT16: u32 = 4;
    /// Go's `int32`.
    pub const INT32: u32 = 5;
    /// Go's `int64`.
    pub const INT64: u32 = 6;
    /// Go's `uint`.
    pub const UINT: u32 = 7;
    /// Go's `uint8`.
    pub const UINT8: u32 = 8;
    /// Go's `uint16`.
    pub const UINT16: u32 = 9;
    /// Go's `uint32`.
    pub const UINT32: u32 = 10;
    /// Go's `uint64`.
    pub const UINT64: u32 = 11;
    /// Go's `uintptr`.
    pub const UINTPTR: u32 = 12;
    /// Go's `float32`.
    pub const FLOAT32: u32 = 13;
    /// Go's `float64`.
    pub const FLOAT64: u32 = 14;
    /// Go's `complex64`.
    pub const COMPLEX64: u32 = 15;
    /// Go's `complex128`.
    pub const COMPLEX128: u32 = 16;
    /// Go's `string`.
    pub const STRING: u32 = 24;
}

/// A Go string as compiled code passes one: bytes and length (not
/// NUL-terminated).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GoString {
    /// The bytes (null for the empty string).
    pub ptr: *const u8,
    /// Their count.
    pub len: usize,
}

/// A method that writes text (`Error()` or `String()`): at most `cap`
/// bytes into `buf`, returning the length it needed (so a second call with
/// a larger buffer gets the rest).
pub type TextFn = unsafe extern "C" fn(data: *const c_void, buf: *mut c_char, cap: usize) -> usize;

/// A type descriptor of compiled code (`defergc_rtype`).
#[repr(C)]
#[derive(Debug)]
pub struct RType {
    /// `size_of::<RType>()` as the compiler knew it: the version.
    pub size: usize,
    /// Go's type string: `string`, `int`, `main.T`, `*main.T`.
    pub name: *const c_char,
    /// A [`kind`] number (0: none of the basic kinds).
    pub kind: u32,
    /// `Error()` for a type that implements `error`, else null.
    pub error: Option<TextFn>,
    /// `String()` for a Stringer, else null.
    pub string: Option<TextFn>,
}

/// An interface value of compiled code (`defergc_iface`): its type and
/// its data word (a pointer to the value; for a string kind, to a
/// [`GoString`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CIface {
    /// The dynamic type (null: the nil interface).
    pub ty: *const RType,
    /// The data word.
    pub data: *mut c_void,
}

/// Appends Go's runtime print of a float: `NaN`, `+Inf`, `-Inf`, or a
/// sign, seven significant digits and a three-digit exponent
/// (`+1.500000e+000`).
pub fn go_float(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
        return;
    }
    if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
        return;
    }
    const DIGITS: usize = 7;
    let mut sign = '+';
    let mut exp: i32 = 0;
    let mut m = v;
    if m == 0.0 {
        if m.is_sign_negative() {
            sign = '-';
        }
    } else {
        if m < 0.0 {
            m = -m;
            sign = '-';
        }
        // Scale into [1, 10) by repeated division or multiplication, as
        // the runtime does (so the last digit rounds the same way).
        while m >= 10.0 {
            exp += 1;
            m /= 10.0;
        }
        while m < 1.0 {
            exp -= 1;
            m *= 10.0;
        }
        let mut half = 5.0;
        for _ in 0..DIGITS {
            half /= 10.0;
        }
        m += half;
        if m >= 10.0 {
            exp += 1;
            m /= 10.0;
        }
    }
    out.push(sign);
    for i in 0..DIGITS {
        let d = m as u32;
        out.push(char::from(b'0' + d as u8));
        if i == 0 {
            out.push('.');
        }
        m -= f64::from(d);
        m *= 10.0;
    }
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    let _ = write!(out, "{}{}{}", e / 100, (e / 10) % 10, e % 10);
}

/// Appends Go's print of a complex number: `(re+imi)` with both parts as
/// [`go_float`].
pub fn go_complex(re: f64, im: f64, out: &mut String) {
    out.push('(');
    go_float(re, out);
    go_float(im, out);
    out.push_str("i)");
}

/// Go prints a tab after each newline inside a panic value.
pub fn indented(s: &str) -> String {
    s.replace('\n', "\n\t")
}

/// The text of a [`TextFn`] for `data`.
///
/// # Safety
/// `f` is a compiled-code method that may be called with `data`.
unsafe fn call_text(f: TextFn, data: *const c_void) -> String {
    let mut buf = vec![0u8; 256];
    // SAFETY: buf has buf.len() writable bytes; the method's contract.
    let need = unsafe { f(data, buf.as_mut_ptr().cast(), buf.len()) };
    if need > buf.len() {
        buf.resize(need, 0);
        // SAFETY: as above, with the size it asked for.
        let again = unsafe { f(data, buf.as_mut_ptr().cast(), buf.len()) };
        buf.truncate(again.min(buf.len()));
    } else {
        buf.truncate(need);
    }
    // A method that NUL-terminates within its count.
    if let Some(nul) = buf.iter().position(|&b| b == 0) {
        buf.truncate(nul);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Go's report text of an interface value of compiled code.
///
/// # Safety
/// `v.ty` is null or a live descriptor whose methods and kind describe
/// `v.data` truthfully.
pub unsafe fn iface_text(v: &CIface) -> String {
    // SAFETY: the caller's descriptor.
    let Some(ty) = (unsafe { v.ty.as_ref() }) else {
        return "nil".to_string();
    };
    if let Some(e) = ty.error {
        // SAFETY: a descriptor's method for its own data.
        let text = unsafe { call_text(e, v.data) };
        return indented(&text);
    }
    if let Some(s) = ty.string {
        // SAFETY: as above.
        let text = unsafe { call_text(s, v.data) };
        return indented(&text);
    }
    let name = if ty.name.is_null() {
        String::from("?")
    } else {
        // SAFETY: a NUL-terminated type string of the descriptor.
        unsafe { CStr::from_ptr(ty.name) }
            .to_string_lossy()
            .into_owned()
    };
    let mut value = String::new();
    // SAFETY: data points to a value of the descriptor's kind.
    let known = unsafe { basic_value(ty.kind, v.data, &mut value) };
    if !known || v.data.is_null() {
        return format!("({name}) {:#x}", v.data as usize);
    }
    // A basic type prints as its value; a named one as name(value).
    let basic = basic_name(ty.kind);
    match ty.kind {
        kind::STRING if name == "string" => indented(&value),
        kind::STRING => format!("{name}(\"{}\")", indented(&value)),
        kind::COMPLEX64 | kind::COMPLEX128 if Some(name.as_str()) != basic => {
            format!("{name}{value}")
        }
        _ if Some(name.as_str()) == basic => value,
        _ => format!("{name}({value})"),
    }
}

fn basic_name(k: u32) -> Option<&'static str> {
    Some(match k {
        kind::BOOL => "bool",
        kind::INT => "int",
        kind::INT8 => "int8",
        kind::INT16 => "int16",
        kind::INT32 => "int32",
        kind::INT64 => "int64",
        kind::UINT => "uint",
        kind::UINT8 => "uint8",
        kind::UINT16 => "uint16",
        kind::UINT32 => "uint32",
        kind::UINT64 => "uint64",
        kind::UINTPTR => "uintptr",
        kind::FLOAT32 => "float32",
        kind::FLOAT64 => "float64",
        kind::COMPLEX64 => "complex64",
        kind::COMPLEX128 => "complex128",
        kind::STRING => "string",
        _ => return None,
    })
}

/// Appends the value of a basic kind at `data`; false for other kinds.
///
/// # Safety
/// `data` is null or points to a value of kind `k`.
unsafe fn basic_value(k: u32, data: *const c_void, out: &mut String) -> bool {
    if data.is_null() {
        return basic_name(k).is_some();
    }
    // SAFETY: the caller's promise for each kind.
    unsafe {
        match k {
            kind::BOOL => out.push_str(if data.cast::<u8>().read() != 0 {
                "true"
            } else {
                "false"
            }),
            kind::INT | kind::INT64 => {
                let _ = write!(out, "{}", data.cast::<i64>().read_unaligned());
            }
            kind::INT8 => {
                let _ = write!(out, "{}", data.cast::<i8>().read());
            }
            kind::INT16 => {
                let _ = write!(out, "{}", data.cast::<i16>().read_unaligned());
            }
            kind::INT32 => {
                let _ = write!(out, "{}", data.cast::<i32>().read_unaligned());
            }
            kind::UINT | kind::UINT64 | kind::UINTPTR => {
                let _ = write!(out, "{}", data.cast::<u64>().read_unaligned());
            }
            kind::UINT8 => {
                let _ = write!(out, "{}", data.cast::<u8>().read());
            }
            kind::UINT16 => {
                let _ = write!(out, "{}", data.cast::<u16>().read_unaligned());
            }
            kind::UINT32 => {
                let _ = write!(out, "{}", data.cast::<u32>().read_unaligned());
            }
            kind::FLOAT32 => go_float(f64::from(data.cast::<f32>().read_unaligned()), out),
            kind::FLOAT64 => go_float(data.cast::<f64>().read_unaligned(), out),
            kind::COMPLEX64 => {
                let p = data.cast::<f32>();
                go_complex(
                    f64::from(p.read_unaligned()),
                    f64::from(p.add(1).read_unaligned()),
                    out,
                );
            }
            kind::COMPLEX128 => {
                let p = data.cast::<f64>();
                go_complex(p.read_unaligned(), p.add(1).read_unaligned(), out);
            }
            kind::STRING => {
                let s = data.cast::<GoString>().read_unaligned();
                if !s.ptr.is_null() {
                    let bytes = std::slice::from_raw_parts(s.ptr, s.len);
                    out.push_str(&String::from_utf8_lossy(bytes));
                }
            }
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f64) -> String {
        let mut s = String::new();
        go_float(v, &mut s);
        s
    }

    /// What Go's runtime prints for these (print(v) in Go 1.19).
    #[test]
    fn floats_print_as_the_go_runtime_does() {
        assert_eq!(f(1.5), "+1.500000e+000");
        assert_eq!(f(-0.25), "-2.500000e-001");
        assert_eq!(f(0.0), "+0.000000e+000");
        assert_eq!(f(-0.0), "-0.000000e+000");
        assert_eq!(f(1e100), "+1.000000e+100");
        assert_eq!(f(123456789.0), "+1.234568e+008");
        assert_eq!(f(f64::NAN), "NaN");
        assert_eq!(f(f64::INFINITY), "+Inf");
        assert_eq!(f(f64::NEG_INFINITY), "-Inf");
        let mut c = String::new();
        go_complex(1.0, -2.0, &mut c);
        assert_eq!(c, "(+1.000000e+000-2.000000e+000i)");
    }
}
