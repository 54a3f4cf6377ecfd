//! Panic values: what `panic` is given (a Rust value, a value of compiled
//! code, an ordinary Rust panic's payload), kept in root memory (design.md
//! invariant 2) so a GC pointer in it stays alive while the panic is in
//! flight; the runtime's own error values; a value's identity and how a
//! report prints it.

use crate::roots;
use std::any::{Any, TypeId};
use std::ffi::c_void;
use std::fmt;
use std::ptr::{self, NonNull};

/// A value given to `defergc_panic` by compiled code, as it appears to
/// Rust code that recovers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CValue(pub *mut c_void);

/// The message of a nil-function call, Go's nil dereference runtime error.
pub(crate) const NIL_DEREF: &str = "invalid memory address or nil pointer dereference";

/// The value of `panic(nil)` since Go 1.21: a distinct, non-nil value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PanicNilError;

impl fmt::Display for PanicNilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("panic called with nil argument")
    }
}

impl std::error::Error for PanicNilError {}

/// A run-time error raised by the runtime itself, such as calling a nil
/// deferred function. Displays as `runtime error: <message>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuntimeError(pub &'static str);

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "runtime error: {}", self.0)
    }
}

impl std::error::Error for RuntimeError {}

/// A run-time error whose message Go prints as it is, without the
/// `runtime error: ` prefix: `send on closed channel`, `close of nil
/// channel`, `sync: negative WaitGroup counter` (Go's `plainError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlainError(pub &'static str);

impl fmt::Display for PlainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for PlainError {}

/// The payload a thread's unwinding ends with when Goexit reaches the top
/// of the thread (see [`super::goroutine`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Goexit;

/// A value in root memory, of a type known only at run time.
struct RootBox {
    ptr: NonNull<dyn Any>,
    /// The block holding the value, or null for a zero-sized value.
    block: *mut u8,
}

impl RootBox {
    fn new<T: Any>(value: T) -> RootBox {
        let size = std::mem::size_of::<T>();
        if std::mem::align_of::<T>() > 16 {
            crate::abort(&format!(
                "defergc: panic values aligned to more than 16 bytes are not supported ({})",
                std::any::type_name::<T>()
            ));
        }
        let (raw, block) = if size == 0 {
            (NonNull::<T>::dangling(), ptr::null_mut())
        } else {
            let block = roots::alloc_block(size);
            (block.cast::<T>(), block.as_ptr())
        };
        // SAFETY: raw is aligned and sized for T (or dangling for a ZST).
        unsafe { raw.as_ptr().write(value) };
        let ptr: NonNull<dyn Any> = raw;
        RootBox { ptr, block }
    }

    fn as_any(&self) -> &dyn Any {
        // SAFETY: the box owns a live value until dropped or taken.
        unsafe { self.ptr.as_ref() }
    }

    /// Moves the value out if it is a `T`.
    fn take<T: Any>(self) -> Result<T, RootBox> {
        if !self.as_any().is::<T>() {
            return Err(self);
        }
        // SAFETY: the value is a T; reading it moves it out, and the block
        // is freed below without dropping the value again.
        let value = unsafe { self.ptr.cast::<T>().as_ptr().read() };
        self.free_block();
        std::mem::forget(self);
        Ok(value)
    }

    fn free_block(&self) {
        if let Some(block) = NonNull::new(self.block) {
            // SAFETY: the block came from alloc_block and is released once.
            unsafe { roots::free_block(block) };
        }
    }
}

impl Drop for RootBox {
    fn drop(&mut self) {
        // SAFETY: the box owns a live value; drop it, then its block.
        unsafe { ptr::drop_in_place(self.ptr.as_ptr()) };
        self.free_block();
    }
}

enum Value {
    /// A value given to `panic`, kept in root memory.
    Root(RootBox),
    /// The payload of an ordinary Rust panic that unwound into a frame.
    Rust(Box<dyn Any + Send>),
}

/// The value of a panic, as returned by [`super::Deferred::recover`].
pub struct PanicValue {
    value: Value,
    type_name: &'static str,
    /// How a report prints the value (see `render.rs`).
    render: fn(&dyn Any) -> String,
    /// The value's identity: a re-panic with the value a recover returned
    /// is the same panic to a report (Go's `[recovered, repanicked]`).
    pub(crate) key: Key,
}

/// A panic value's identity (Go compares interface values: the same
/// pointer, or the same value object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// A value object of Rust code, by a number given at its creation.
    Object(u64),
    /// A pointer of compiled code.
    Pointer(usize),
    /// An interface value of compiled code: type and data word.
    Iface(usize, usize),
}

fn next_object_key() -> Key {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    Key::Object(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// How Rust values print in a report: strings, numbers and errors through
/// `Display`; the values of compiled code as Go prints them; anything
/// else through `Debug` (never by its Rust type name).
fn render_as<T: Any + fmt::Debug>(v: &dyn Any) -> String {
    macro_rules! try_display {
        ($($t:ty),*) => {$(
            if let Some(x) = v.downcast_ref::<$t>() {
                return super::render::indented(&x.to_string());
            }
        )*};
    }
    try_display!(
        &'static str,
        String,
        PanicNilError,
        RuntimeError,
        PlainError,
        i8,
        i16,
        i32,
        i64,
        i128,
        isize,
        u8,
        u16,
        u32,
        u64,
        u128,
        usize,
        f32,
        f64,
        bool,
        char
    );
    if let Some(e) = v.downcast_ref::<Box<dyn std::error::Error + Send + Sync>>() {
        return super::render::indented(&e.to_string());
    }
    if let Some(c) = v.downcast_ref::<CValue>() {
        // Go's print of an unsafe.Pointer in an interface.
        return format!("(unsafe.Pointer) {:#x}", c.0 as usize);
    }
    if let Some(c) = v.downcast_ref::<super::render::CIface>() {
        // SAFETY: compiled code gave a descriptor that describes its data
        // (defergc_panic_iface's contract).
        return unsafe { super::render::iface_text(c) };
    }
    match v.downcast_ref::<T>() {
        Some(x) => super::render::indented(&format!("{x:?}")),
        None => String::from("(value)"),
    }
}

/// How an ordinary Rust panic's payload prints: its message.
fn render_rust_payload(v: &dyn Any) -> String {
    if let Some(s) = v.downcast_ref::<&'static str>() {
        return super::render::indented(s);
    }
    if let Some(s) = v.downcast_ref::<String>() {
        return super::render::indented(s);
    }
    String::from("Rust panic with a payload that is not a message")
}

impl PanicValue {
    /// Wraps any value; a `PanicValue` is passed through unchanged (so
    /// re-panicking with a recovered value does not nest it).
    pub fn new<T: Any + fmt::Debug>(value: T) -> PanicValue {
        if TypeId::of::<T>() == TypeId::of::<PanicValue>() {
            let value = std::mem::ManuallyDrop::new(value);
            // SAFETY: T is PanicValue (same TypeId); the original is not
            // dropped, so the value moves exactly once.
            return unsafe { ptr::read((&*value as *const T).cast::<PanicValue>()) };
        }
        let any: &dyn Any = &value;
        let key = if let Some(c) = any.downcast_ref::<CValue>() {
            Key::Pointer(c.0 as usize)
        } else if let Some(c) = any.downcast_ref::<super::render::CIface>() {
            Key::Iface(c.ty as usize, c.data as usize)
        } else {
            next_object_key()
        };
        PanicValue {
            value: Value::Root(RootBox::new(value)),
            type_name: std::any::type_name::<T>(),
            render: render_as::<T>,
            key,
        }
    }

    pub(crate) fn from_rust(payload: Box<dyn Any + Send>) -> PanicValue {
        PanicValue {
            value: Value::Rust(payload),
            type_name: "rust panic",
            render: render_rust_payload,
            key: next_object_key(),
        }
    }

    /// The value as `&dyn Any`.
    pub fn as_any(&self) -> &dyn Any {
        match &self.value {
            Value::Root(b) => b.as_any(),
            Value::Rust(b) => &**b,
        }
    }

    /// Whether the value is a `T`.
    pub fn is<T: Any>(&self) -> bool {
        self.as_any().is::<T>()
    }

    /// The value as a `T`, if it is one.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.as_any().downcast_ref()
    }

    /// Takes the value out as a `T`, or gives the `PanicValue` back.
    pub fn downcast<T: Any>(self) -> Result<T, PanicValue> {
        let (type_name, render, key) = (self.type_name, self.render, self.key);
        match self.value {
            Value::Root(b) => b.take::<T>().map_err(|b| PanicValue {
                value: Value::Root(b),
                type_name,
                render,
                key,
            }),
            Value::Rust(b) => b.downcast::<T>().map(|b| *b).map_err(|b| PanicValue {
                value: Value::Rust(b),
                type_name,
                render,
                key,
            }),
        }
    }

    /// Whether this came from an ordinary Rust panic (`panic!`, an index
    /// out of bounds, ...) rather than [`super::panic()`].
    pub fn is_rust_panic(&self) -> bool {
        matches!(self.value, Value::Rust(_))
    }

    /// The Rust type name of a value given to [`super::panic()`].
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    pub(crate) fn into_rust_payload(self) -> Box<dyn Any + Send> {
        match self.value {
            Value::Rust(b) => b,
            Value::Root(_) => Box::new(self.to_string()),
        }
    }
}

impl fmt::Display for PanicValue {
    /// Go's rendering (see `render.rs`): strings as they are, errors by
    /// their message, numbers and booleans in decimal, values of compiled
    /// code as Go prints them, other Rust values through `Debug`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&(self.render)(self.as_any()))
    }
}

impl fmt::Debug for PanicValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PanicValue({self})")
    }
}

/// A recovered value's rendering for a later report. A value of compiled
/// code is rendered only if a report needs it (recovering is the common
/// case, reporting the rare one); a Rust value is rendered at once (it
/// leaves with the caller of recover).
pub(crate) enum Recovered {
    Nothing,
    C(CValue),
    Text(String),
}

impl Recovered {
    pub(crate) fn of(value: &PanicValue) -> Recovered {
        match value.downcast_ref::<CValue>() {
            Some(c) => Recovered::C(*c),
            None => Recovered::Text(value.to_string()),
        }
    }

    pub(crate) fn render(&self) -> String {
        match self {
            Recovered::Nothing => String::new(),
            Recovered::C(c) => PanicValue::new(*c).to_string(),
            Recovered::Text(t) => t.clone(),
        }
    }
}
