//! The one error type of the precise collector, with stable numeric codes.
//!
//! Every fallible function of [`crate::precise`] returns
//! `Result<_, Error>`. The C ABI returns [`Error::code`] (0 means success),
//! so a code, once given to a variant, never changes or gets reused; new
//! variants take new numbers. [`Error::from_code`] is the inverse.

use std::fmt;

/// What went wrong in a call into the precise collector.
///
/// The numbers are the C ABI's error codes: stable, never reused, never 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
#[non_exhaustive]
pub enum Error {
    /// A handle argument was null (0) where an object is required.
    NullHandle = 1,
    /// The value is not a handle this collector ever gave out: its index is
    /// outside the table or was never allocated.
    InvalidHandle = 2,
    /// The handle's object was freed by a collection (the handle was not
    /// rooted or reachable); its table entry may since have been reused.
    StaleHandle = 3,
    /// The type id was never returned by a `register_*` function.
    UnknownType = 4,
    /// A field offset or byte range reaches outside the object.
    OutOfBounds = 5,
    /// A handle load or store at an offset that is inside the object but is
    /// not one of its handle fields (or is not 8-byte aligned).
    NotAHandleField = 6,
    /// A byte write would overwrite (part of) a handle field.
    HandleFieldOverlap = 7,
    /// `alloc` on a variable-length type, or `alloc_array` on a fixed one.
    WrongTypeKind = 8,
    /// A type description is malformed: a handle offset that is unaligned,
    /// repeated, or does not fit in the size.
    InvalidLayout = 9,
    /// The requested object size does not fit the header (4 GiB) or
    /// overflows.
    TooLarge = 10,
    /// The heap limit ([`crate::precise::Config::heap_limit`]) is reached
    /// and a collection could not make room.
    HeapLimit = 11,
    /// The operating system refused memory.
    OutOfMemory = 12,
    /// The handle table is full (2^30 live handles).
    OutOfHandles = 13,
    /// `root` or `pop_frame` with no open frame on this thread.
    NoFrame = 14,
    /// A frame was popped, or rooted into, while it is not the innermost one.
    FrameNotTop = 15,
    /// `unregister_thread` while the thread still has open frames.
    FramesOpen = 16,
    /// A heap operation from a thread that declared itself in native code
    /// (or a second `enter_native`).
    InNative = 17,
    /// `leave_native` on a thread that is not in native code.
    NotInNative = 18,
    /// `init_with` after the collector had started.
    AlreadyInitialized = 19,
    /// `remove_global_root` of an address that is not a registered root.
    UnknownRoot = 20,
    /// `set_root`/`get_root` with a slot index at or above the stack top.
    NoSuchRoot = 21,
    /// `unregister_thread` on an unregistered thread, or use of a [`Frame`]
    /// whose thread state was torn down.
    ///
    /// [`Frame`]: crate::precise::Frame
    NotRegistered = 22,
    /// `add_global_root` of a null or unaligned address.
    BadRootAddress = 23,
    /// A [`Field`](crate::precise::Field) access on an object of another
    /// type.
    WrongType = 24,
}

impl Error {
    /// Every variant, in code order.
    pub const ALL: [Error; 24] = [
        Error::NullHandle,
        Error::InvalidHandle,
        Error::StaleHandle,
        Error::UnknownType,
        Error::OutOfBounds,
        Error::NotAHandleField,
        Error::HandleFieldOverlap,
        Error::WrongTypeKind,
        Error::InvalidLayout,
        Error::TooLarge,
        Error::HeapLimit,
        Error::OutOfMemory,
        Error::OutOfHandles,
        Error::NoFrame,
        Error::FrameNotTop,
        Error::FramesOpen,
        Error::InNative,
        Error::NotInNative,
        Error::AlreadyInitialized,
        Error::UnknownRoot,
        Error::NoSuchRoot,
        Error::NotRegistered,
        Error::BadRootAddress,
        Error::WrongType,
    ];

    /// The stable C ABI code of this error (never 0).
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The error with this code, if there is one.
    pub fn from_code(code: i32) -> Option<Error> {
        Error::ALL.iter().copied().find(|e| e.code() == code)
    }

    fn message(self) -> &'static str {
        match self {
            Error::NullHandle => "null handle where an object is required",
            Error::InvalidHandle => "not a handle of this collector",
            Error::StaleHandle => "stale handle: its object was collected",
            Error::UnknownType => "unknown type id",
            Error::OutOfBounds => "offset or range outside the object",
            Error::NotAHandleField => "offset is not a handle field of the object's type",
            Error::HandleFieldOverlap => "byte write over a handle field",
            Error::WrongTypeKind => {
                "alloc needs a fixed-size type, alloc_array a variable-length one"
            }
            Error::InvalidLayout => {
                "invalid type layout: handle offsets must be 8-aligned, distinct and inside the size"
            }
            Error::TooLarge => "object too large",
            Error::HeapLimit => "heap limit reached and a collection could not make room",
            Error::OutOfMemory => "out of memory",
            Error::OutOfHandles => "handle table full",
            Error::NoFrame => "no open frame on this thread",
            Error::FrameNotTop => "frame is not the innermost open frame",
            Error::FramesOpen => "thread still has open frames",
            Error::InNative => "heap operation while the thread is in native code",
            Error::NotInNative => "leave_native without enter_native",
            Error::AlreadyInitialized => "the precise collector was already initialised",
            Error::UnknownRoot => "not a registered global root",
            Error::NoSuchRoot => "root slot index above the shadow-stack top",
            Error::NotRegistered => "thread is not registered with the precise collector",
            Error::BadRootAddress => "global root address is null or not 8-byte aligned",
            Error::WrongType => "the object is not of the field's type",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "defergc: precise: {}", self.message())
    }
}

impl std::error::Error for Error {}

/// The result type of the precise collector's API.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn codes_are_distinct_nonzero_and_round_trip() {
        for (i, e) in Error::ALL.iter().enumerate() {
            assert_eq!(e.code(), i as i32 + 1);
            assert_eq!(Error::from_code(e.code()), Some(*e));
            assert!(e.to_string().starts_with("defergc: precise: "));
        }
        assert_eq!(Error::from_code(0), None);
    }
}
