//! The type registry: what the collector knows about an object's layout.
//!
//! Three kinds, each registered once and named by a [`TypeId`]:
//!
//! - **struct** ([`register_type`]): a fixed size and the byte offsets of
//!   its handle fields (8-byte aligned, inside the size, distinct);
//! - **handle array** ([`register_handle_array_type`]): variable length,
//!   every 8-byte word a handle;
//! - **pointer-free** ([`register_bytes_type`]): variable length bytes that
//!   the collector never looks into.
//!
//! Descriptions are immutable once registered and live until the process
//! exits, inline in a never-moving [`Segmented`] array, so a lookup (on
//! every allocation, access and traced object) takes no lock and two
//! dependent loads; a struct of up to 64 words carries its handle-field
//! bitmap in its slot. Type id 0
//! is never given out: a header with type id 0 is a free heap cell.

use super::error::{Error, Result};
use super::heap;
use crate::cache::CachePadded;
use crate::segmented::{Segmented, Zeroed};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;

/// The largest object payload, in bytes: an object (header, an array's
/// length word, payload) is sized in 32 bits.
pub const MAX_OBJECT_SIZE: usize = u32::MAX as usize - heap::HEADER - heap::LENGTH_WORD;

/// A registered type. Cheap to copy; valid for the life of the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct TypeId(NonZeroU32);

impl TypeId {
    /// The type with this raw id, if it was registered
    /// ([`Error::UnknownType`] otherwise, 0 included).
    pub fn from_raw(raw: u32) -> Result<TypeId> {
        if info_raw(raw).is_some() {
            // SAFETY: info_raw(0) is None, so raw is non-zero here.
            Ok(TypeId(unsafe { NonZeroU32::new_unchecked(raw) }))
        } else {
            Err(Error::UnknownType)
        }
    }

    /// The raw id (what the C ABI passes around).
    pub const fn to_raw(self) -> u32 {
        self.0.get()
    }
}

/// How the collector traces an object of a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Struct,
    HandleArray,
    Bytes,
}

/// One registered type, stored inline in the registry so that a lookup is
/// two dependent loads (chunk pointer, slot). Immutable once `meta` is
/// published (release; read with acquire by [`info_raw`]).
pub(crate) struct TypeInfo {
    /// 0 while unregistered; else kind (1 struct, 2 handle array, 3 bytes)
    /// in bits 0..8, size class in 8..16, struct payload size in 32..64.
    meta: AtomicU64,
    /// Bit `i` set when the word at byte offset `8 * i` (`i < 64`) is a
    /// handle field of a struct.
    bits: AtomicU64,
    /// Handle field offsets and the full bitmap (structs only).
    ext: AtomicPtr<StructLayout>,
}

// SAFETY: all-zero is an unregistered slot (three zeroed atomics).
unsafe impl Zeroed for TypeInfo {}

/// The layout of a struct type beyond what fits in its slot.
struct StructLayout {
    /// Handle field offsets in bytes, ascending.
    offsets: Box<[u32]>,
    /// Bit `i` set when the word at byte offset `8 * i` is a handle field.
    bitmap: Box<[u64]>,
}

impl TypeInfo {
    #[inline(always)]
    fn meta(&self) -> u64 {
        self.meta.load(Ordering::Relaxed)
    }

    #[inline(always)]
    pub(crate) fn kind(&self) -> Kind {
        match self.meta() & 0xFF {
            1 => Kind::Struct,
            2 => Kind::HandleArray,
            _ => Kind::Bytes,
        }
    }

    /// Payload size of a struct (0 for variable-length kinds).
    #[inline(always)]
    pub(crate) fn size(&self) -> u32 {
        (self.meta() >> 32) as u32
    }

    /// The handle-field bitmap of a struct whose size is at most 64 words.
    #[inline(always)]
    pub(crate) fn small_bitmap(&self) -> Option<u64> {
        (self.size() <= 512).then(|| self.bits.load(Ordering::Relaxed))
    }

    #[inline(always)]
    fn layout(&self) -> Option<&'static StructLayout> {
        let p = self.ext.load(Ordering::Relaxed);
        // SAFETY: published before meta, leaked, never changed or freed.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// Handle field offsets of a struct, ascending (empty otherwise).
    #[inline(always)]
    pub(crate) fn offsets(&self) -> &'static [u32] {
        self.layout().map_or(&[], |l| &l.offsets)
    }

    /// Whether the 8-byte word at `word` (offset / 8) is a handle field of a
    /// struct; the caller has checked the word is inside the object.
    #[inline(always)]
    pub(crate) fn is_handle_word(&self, word: usize) -> bool {
        if word < 64 {
            self.bits.load(Ordering::Relaxed) & (1 << word) != 0
        } else {
            self.layout()
                .and_then(|l| l.bitmap.get(word / 64))
                .is_some_and(|bits| bits & (1 << (word % 64)) != 0)
        }
    }

    /// Whether any word in `first..=last` is a handle field (structs only).
    pub(crate) fn any_handle_word(&self, first: usize, last: usize) -> bool {
        (first..=last).any(|w| self.is_handle_word(w))
    }
}

/// 2^22 types, in chunks of 1024 slots (the first chunk unused: those ids
/// live in [`FIRST`]).
type Registry = Segmented<TypeInfo, 10, 4096>;
static TYPES: Registry = Registry::new();
// Every id fits in an object header.
const _: () = assert!(Registry::CAPACITY <= heap::MAX_TYPE_ID as usize + 1);
/// The next id to give out; ids are dense from 1.
static NEXT: Mutex<u32> = Mutex::new(1);

/// Slots of the first [`FIRST_TYPES`] ids, inline in the static (no chunk
/// pointer to load first): programs rarely register more.
const FIRST_TYPES: usize = 1024;
static FIRST: CachePadded<[TypeInfo; FIRST_TYPES]> = CachePadded(
    [const {
        TypeInfo {
            meta: AtomicU64::new(0),
            bits: AtomicU64::new(0),
            ext: AtomicPtr::new(std::ptr::null_mut()),
        }
    }; FIRST_TYPES],
);

/// The slot of `raw` (registered or not), if the registry can hold it.
#[inline(always)]
fn slot(raw: u32) -> Option<&'static TypeInfo> {
    match FIRST.0.get(raw as usize) {
        Some(slot) => Some(slot),
        None => {
            if !TYPES.ensure(raw as usize) {
                return None;
            }
            TYPES.get(raw as usize)
        }
    }
}

/// The slot of type id 0, which is never registered (a placeholder).
pub(crate) fn unregistered() -> &'static TypeInfo {
    &FIRST.0[0]
}

/// The slot of `raw` if the registry has one there (registered or not),
/// without growing it: the lookups' common step.
#[inline(always)]
fn existing_slot(raw: u32) -> Option<&'static TypeInfo> {
    match FIRST.0.get(raw as usize) {
        Some(slot) => Some(slot),
        None => TYPES.get(raw as usize),
    }
}

/// The registered type with this raw id.
#[inline(always)]
pub(crate) fn info_raw(raw: u32) -> Option<&'static TypeInfo> {
    let slot = existing_slot(raw)?;
    (slot.meta.load(Ordering::Acquire) != 0).then_some(slot)
}

/// The payload size of struct type `raw` (0 for an id that is not
/// registered, or not a struct's): the size check of an access by offset,
/// one load of the type's slot.
#[inline(always)]
pub(crate) fn struct_size_raw(raw: u32) -> usize {
    let Some(slot) = existing_slot(raw) else {
        return 0;
    };
    (slot.meta.load(Ordering::Acquire) >> 32) as usize
}

/// A registered struct type's payload size and size class ([`heap::LARGE`]
/// for large ones), or `None` for
/// the variable-length kinds: what allocation needs, in one load of the
/// type's slot (a registered id's slot is published, so no other check).
#[inline(always)]
pub(crate) fn struct_size_class(id: TypeId) -> Option<(u32, u8)> {
    let meta = existing_slot(id.to_raw())?.meta.load(Ordering::Acquire);
    (meta & 0xFF == 1).then_some(((meta >> 32) as u32, (meta >> 8) as u8))
}

/// The description of a registered type.
#[inline(always)]
pub(crate) fn info(id: TypeId) -> &'static TypeInfo {
    match info_raw(id.to_raw()) {
        Some(info) => info,
        // A TypeId only exists for registered ids, which stay registered.
        None => unreachable!("defergc: precise: TypeId {} not registered", id.to_raw()),
    }
}

fn register(kind: Kind, size: u32, class: u8, layout: Option<StructLayout>) -> Result<TypeId> {
    let mut next = NEXT.lock().unwrap_or_else(|e| e.into_inner());
    let id = *next;
    // The registry is full (2^22 types) or the chunk allocation failed.
    let Some(slot) = slot(id) else {
        return Err(Error::OutOfMemory);
    };
    if let Some(layout) = layout {
        slot.bits.store(
            layout.bitmap.first().copied().unwrap_or(0),
            Ordering::Relaxed,
        );
        slot.ext
            .store(Box::into_raw(Box::new(layout)), Ordering::Relaxed);
    }
    let kind = match kind {
        Kind::Struct => 1,
        Kind::HandleArray => 2,
        Kind::Bytes => 3,
    };
    let meta = kind | u64::from(class) << 8 | u64::from(size) << 32;
    slot.meta.store(meta, Ordering::Release);
    *next += 1;
    // SAFETY: ids start at 1 and only grow.
    Ok(TypeId(unsafe { NonZeroU32::new_unchecked(id) }))
}

/// Registers a fixed-size type of `size` payload bytes whose handle fields
/// are at the byte offsets `handle_offsets` (in any order).
///
/// Errors: [`Error::TooLarge`] above [`MAX_OBJECT_SIZE`];
/// [`Error::InvalidLayout`] for an offset that is not a multiple of 8, does
/// not leave room for 8 bytes inside `size`, or is repeated.
pub fn register_type(size: usize, handle_offsets: &[usize]) -> Result<TypeId> {
    if size > MAX_OBJECT_SIZE {
        return Err(Error::TooLarge);
    }
    let mut offsets: Vec<u32> = Vec::with_capacity(handle_offsets.len());
    let mut bitmap = vec![0u64; size.div_ceil(8).div_ceil(64)];
    for &off in handle_offsets {
        match off.checked_add(8) {
            Some(end) if end <= size && off % 8 == 0 => {}
            _ => return Err(Error::InvalidLayout),
        }
        let word = off / 8;
        if bitmap[word / 64] & (1 << (word % 64)) != 0 {
            return Err(Error::InvalidLayout);
        }
        bitmap[word / 64] |= 1 << (word % 64);
        offsets.push(off as u32);
    }
    offsets.sort_unstable();
    let layout = StructLayout {
        offsets: offsets.into_boxed_slice(),
        bitmap: bitmap.into_boxed_slice(),
    };
    register(
        Kind::Struct,
        size as u32,
        heap::class_of(size),
        Some(layout),
    )
}

/// Registers a variable-length array-of-handles type: allocate it with
/// [`alloc_array`](crate::precise::alloc_array) and a length in elements.
pub fn register_handle_array_type() -> Result<TypeId> {
    register(Kind::HandleArray, 0, heap::LARGE, None)
}

/// Registers a variable-length pointer-free type: allocate it with
/// [`alloc_array`](crate::precise::alloc_array) and a length in bytes.
pub fn register_bytes_type() -> Result<TypeId> {
    register(Kind::Bytes, 0, heap::LARGE, None)
}

/// The payload size of an array of `len` elements of a variable-length
/// type: [`Error::WrongTypeKind`] for a struct, [`Error::TooLarge`] when it
/// does not fit.
pub(crate) fn array_size(info: &TypeInfo, len: usize) -> Result<usize> {
    let bytes = match info.kind() {
        Kind::Struct => return Err(Error::WrongTypeKind),
        Kind::HandleArray => len.checked_mul(8).ok_or(Error::TooLarge)?,
        Kind::Bytes => len,
    };
    if bytes > MAX_OBJECT_SIZE {
        return Err(Error::TooLarge);
    }
    Ok(bytes)
}

/// Before a fork (leaf locks, in the order registration takes them): the
/// id counter and the registry's growth lock, kept until after the fork.
pub(super) fn lock_for_fork() {
    crate::gc::fork::held::keep(NEXT.lock().unwrap_or_else(|e| e.into_inner()));
    crate::gc::fork::held::keep(TYPES.lock_growth());
}
