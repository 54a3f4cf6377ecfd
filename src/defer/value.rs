//! Panic values: what `panic` is given (a Rust value, a value of compiled
//! code, an ordinary Rust panic's payload), kept in root memory (design.md
//! invariant 2) so a GC pointer in it stays alive while the panic is in
//! flight; the runtime's own error values; a value's identity and how a
//! report prints it.

use super::state::Sequence;
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
    /// What a recovered record keeps of the value for a later report.
    keep: fn(&dyn Any) -> Recovered,
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

/// Where object keys come from: a thread takes them a block at a time, so
/// a panic's value gets its identity without an atomic operation (a value
/// may move to another thread; its key stays unique in the process).
static KEYS: Sequence = Sequence::new();

thread_local! {
    /// The thread's next object key (see [`Sequence::next`]).
    static NEXT_KEY: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn next_object_key() -> Key {
    // A thread whose locals are gone (its last destructors) takes a block
    // for the one key.
    let key = NEXT_KEY
        .try_with(|next| KEYS.next(next))
        .unwrap_or_else(|_| KEYS.block());
    Key::Object(key)
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

/// What a record keeps of a recovered value of type `T` (see
/// [`Recovered`]): a value of a type that prints the same whenever it is
/// printed, kept as it is; anything else, its text now.
fn keep_as<T: Any + fmt::Debug>(v: &dyn Any) -> Recovered {
    macro_rules! kept {
        ($($t:ty => $plain:expr),* $(,)?) => {$(
            if TypeId::of::<T>() == TypeId::of::<$t>() {
                if let Some(&x) = v.downcast_ref::<$t>() {
                    return Recovered::Plain($plain(x));
                }
            }
        )*};
    }
    kept!(
        i8 => |x| Plain::Int(i128::from(x)),
        i16 => |x| Plain::Int(i128::from(x)),
        i32 => |x| Plain::Int(i128::from(x)),
        i64 => |x| Plain::Int(i128::from(x)),
        i128 => Plain::Int,
        isize => |x: isize| Plain::Int(x as i128),
        u8 => |x| Plain::Uint(u128::from(x)),
        u16 => |x| Plain::Uint(u128::from(x)),
        u32 => |x| Plain::Uint(u128::from(x)),
        u64 => |x| Plain::Uint(u128::from(x)),
        u128 => Plain::Uint,
        usize => |x: usize| Plain::Uint(x as u128),
        f32 => Plain::F32,
        f64 => Plain::F64,
        bool => Plain::Bool,
        char => Plain::Char,
        &'static str => Plain::Str,
        RuntimeError => Plain::Runtime,
        PlainError => Plain::Error,
        PanicNilError => |_| Plain::Nil,
        NonNull<u8> => |p: NonNull<u8>| Plain::Pointer(p.as_ptr()),
        *mut u8 => Plain::Pointer,
        *const u8 => |p: *const u8| Plain::Pointer(p.cast_mut()),
    );
    if let Some(&c) = v.downcast_ref::<CValue>() {
        return Recovered::C(c);
    }
    Recovered::Text(render_as::<T>(v))
}

/// What a record keeps of a recovered Rust panic's payload: its text.
fn keep_rust_payload(v: &dyn Any) -> Recovered {
    match v.downcast_ref::<CValue>() {
        Some(&c) => Recovered::C(c),
        None => Recovered::Text(render_rust_payload(v)),
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
            keep: keep_as::<T>,
            key,
        }
    }

    pub(crate) fn from_rust(payload: Box<dyn Any + Send>) -> PanicValue {
        PanicValue {
            value: Value::Rust(payload),
            type_name: "rust panic",
            render: render_rust_payload,
            keep: keep_rust_payload,
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
        let (type_name, render, keep, key) = (self.type_name, self.render, self.keep, self.key);
        match self.value {
            Value::Root(b) => b.take::<T>().map_err(|b| PanicValue {
                value: Value::Root(b),
                type_name,
                render,
                keep,
                key,
            }),
            Value::Rust(b) => b.downcast::<T>().map(|b| *b).map_err(|b| PanicValue {
                value: Value::Rust(b),
                type_name,
                render,
                keep,
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

/// A recovered value's rendering for a later report. Recovering is the
/// common case and reporting the rare one, so what can be printed later
/// is: a value of compiled code, and a Rust value of a type that prints
/// the same whenever it is printed (a number, a string constant, a
/// run-time error, a raw pointer), kept as it is. Any other Rust value is
/// rendered at once: it leaves with the caller of recover.
pub(crate) enum Recovered {
    Nothing,
    C(CValue),
    Plain(Plain),
    Text(String),
}

/// A recovered Rust value kept as it is (see [`Recovered`]); each prints
/// as [`render_as`] prints its type.
#[derive(Clone, Copy)]
pub(crate) enum Plain {
    Int(i128),
    Uint(u128),
    F32(f32),
    F64(f64),
    Bool(bool),
    Char(char),
    Str(&'static str),
    Runtime(RuntimeError),
    Error(PlainError),
    Nil,
    Pointer(*mut u8),
}

impl Plain {
    fn render(self) -> String {
        let text = match self {
            Plain::Int(x) => x.to_string(),
            Plain::Uint(x) => x.to_string(),
            Plain::F32(x) => x.to_string(),
            Plain::F64(x) => x.to_string(),
            Plain::Bool(x) => x.to_string(),
            Plain::Char(x) => x.to_string(),
            Plain::Str(x) => x.to_string(),
            Plain::Runtime(x) => x.to_string(),
            Plain::Error(x) => x.to_string(),
            Plain::Nil => PanicNilError.to_string(),
            Plain::Pointer(x) => format!("{x:?}"),
        };
        super::render::indented(&text)
    }
}

impl Recovered {
    pub(crate) fn of(value: &PanicValue) -> Recovered {
        (value.keep)(value.as_any())
    }

    pub(crate) fn render(&self) -> String {
        match self {
            Recovered::Nothing => String::new(),
            Recovered::C(c) => PanicValue::new(*c).to_string(),
            Recovered::Plain(p) => p.render(),
            Recovered::Text(t) => t.clone(),
        }
    }
}
