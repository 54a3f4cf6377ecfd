//! Access to objects through handles: raw pointers, handle fields,
//! pointer-free bytes.
//!
//! Every function here validates its handles (null, invalid, stale: always,
//! see `handles.rs`) and its offsets against the object's size and type
//! (always: a size compare and a bitmap test). Loads and stores are atomic
//! (relaxed for bytes, release/acquire for handle fields), so threads that
//! race on one object get unspecified values, never undefined behaviour.
//!
//! [`write_handle_slot`] is the one function through which every store of
//! a handle into memory the collector traces goes (heap fields, global
//! roots): the deletion barrier (see `collector/`). Shadow-stack slots
//! and root memory are roots, written only by their own thread and
//! snapshotted at its handshake, and do not go through it.
//!
//! The allocations ([`alloc`], [`alloc_array`], [`alloc_with`]) find the
//! type's size and the calling thread, pass a safepoint, and leave the rest
//! to the heap (`heap/alloc.rs`). All the other functions run on a
//! registered, running thread and contain no safepoint. A handle they validate names an object that is reachable
//! (the mutator rules) or was just allocated, and the concurrent collector
//! never frees such an object (see `collector/`); a stale handle is
//! rejected by validation, and the memory it named stays readable until
//! every thread has passed a safepoint, so no access goes through freed
//! memory.

use super::error::{Error, Result};
use super::handles::{self, Handle};
use super::heap::{self, Header};
use super::marking;
use super::mutator::{self, Mutator};
use super::types::{self, Kind, TypeId, TypeInfo};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// The header of `obj`'s object, checked, on a running thread.
#[inline(always)]
fn object(obj: Handle) -> Result<*mut Header> {
    mutator::current()?;
    handles::resolve(obj)
}

/// As [`object`], also returning the running thread's state.
#[inline(always)]
fn object_on(obj: Handle) -> Result<(&'static Mutator, *mut Header)> {
    let ts = mutator::current()?;
    Ok((ts, handles::resolve(obj)?))
}

/// The type of a live object.
#[inline(always)]
fn type_of_header(hdr: *mut Header) -> &'static TypeInfo {
    // SAFETY: a live object's header is initialised and its type id was
    // registered (allocation takes a TypeId).
    let raw = unsafe { (*hdr).type_id() };
    match types::info_raw(raw) {
        Some(info) => info,
        None => unreachable!("defergc: precise: live object with unknown type {raw}"),
    }
}

/// The payload of a live object.
#[inline(always)]
fn payload(hdr: *mut Header) -> *mut u8 {
    // SAFETY: a live object's header is initialised.
    if unsafe { (*hdr).is_array() } {
        Header::array_payload(hdr)
    } else {
        Header::body(hdr)
    }
}

/// The payload and payload size of a live object: an array's size is in
/// its length word, a struct's is its type's (`struct_size`, asked only
/// for a struct).
#[inline(always)]
fn payload_and_size(hdr: *mut Header, struct_size: impl FnOnce() -> usize) -> (*mut u8, usize) {
    // SAFETY: a live object's header is initialised.
    if unsafe { (*hdr).is_array() } {
        // SAFETY: a live array's header.
        (Header::array_payload(hdr), unsafe {
            Header::array_len(hdr)
        })
    } else {
        (Header::body(hdr), struct_size())
    }
}

/// [`payload_and_size`] with the struct's size from the registry.
#[inline(always)]
fn checked_payload(hdr: *mut Header) -> (*mut u8, usize) {
    // SAFETY: a live object's header is initialised.
    payload_and_size(hdr, || types::struct_size_raw(unsafe { (*hdr).type_id() }))
}

/// A pointer to the payload of `obj`'s object. It stays valid while the
/// object is reachable (rooted or referenced from a reachable object);
/// after that, using it is undefined behaviour. Objects never move. The
/// payload is aligned to 8 bytes, the largest alignment of a Go type on
/// 64-bit platforms.
#[inline]
pub fn deref(obj: Handle) -> Result<NonNull<u8>> {
    let hdr = object(obj)?;
    // SAFETY: inside a live object, so non-null.
    Ok(unsafe { NonNull::new_unchecked(payload(hdr)) })
}

/// The payload size of `obj`'s object, in bytes.
pub fn size_of(obj: Handle) -> Result<usize> {
    Ok(checked_payload(object(obj)?).1)
}

/// The type of `obj`'s object.
pub fn type_of(obj: Handle) -> Result<TypeId> {
    let hdr = object(obj)?;
    // SAFETY: a live object's header is initialised.
    TypeId::from_raw(unsafe { (*hdr).type_id() })
}

/// The handle field at byte `offset` of the object at `hdr`, checked.
#[inline(always)]
fn handle_field(hdr: *mut Header, offset: usize) -> Result<&'static AtomicU64> {
    let info = type_of_header(hdr);
    let (payload, size) = payload_and_size(hdr, || info.size() as usize);
    if offset > size || size - offset < 8 {
        return Err(Error::OutOfBounds);
    }
    let ok = offset.is_multiple_of(8)
        && match info.kind() {
            Kind::HandleArray => true,
            Kind::Struct => info.is_handle_word(offset / 8),
            Kind::Bytes => false,
        };
    if !ok {
        return Err(Error::NotAHandleField);
    }
    // SAFETY: an aligned word inside a live object's payload, which stays
    // allocated for the rest of this (safepoint-free) call.
    Ok(unsafe { &*payload.add(offset).cast::<AtomicU64>() })
}

/// Loads the handle field at byte `offset` of `obj` (null as `None`).
///
/// [`Error::OutOfBounds`] if the field does not fit in the object,
/// [`Error::NotAHandleField`] if the offset is not a handle field.
#[inline(always)]
pub fn load(obj: Handle, offset: usize) -> Result<Option<Handle>> {
    let field = handle_field(object(obj)?, offset)?;
    Ok(Handle::from_raw(field.load(Ordering::Acquire)).ok())
}

/// Loads the handle fields at byte `offsets` of `obj` into the first
/// `offsets.len()` entries of `out` (null as `None`), finding the object
/// once: [`load`] for several fields of one object, as compiled code
/// reads them with no safepoint between (see also [`load_fields`]).
/// Errors as [`load`] for any offset, [`Error::OutOfBounds`] if `out` is
/// shorter than `offsets`; on error `out` is left as it was.
pub fn load_many(obj: Handle, offsets: &[usize], out: &mut [Option<Handle>]) -> Result<()> {
    if out.len() < offsets.len() {
        return Err(Error::OutOfBounds);
    }
    let hdr = object(obj)?;
    for &offset in offsets {
        handle_field(hdr, offset)?;
    }
    for (value, &offset) in out.iter_mut().zip(offsets) {
        *value = Handle::from_raw(handle_field(hdr, offset)?.load(Ordering::Acquire)).ok();
    }
    Ok(())
}

/// Stores `value` (a live handle, or null) into the handle field at byte
/// `offset` of `obj`.
///
/// Errors as [`load`], and [`Error::StaleHandle`] / [`Error::InvalidHandle`]
/// for a `value` that is not live (storing it would hide a dangling
/// reference in the heap).
#[inline(always)]
pub fn store(obj: Handle, offset: usize, value: impl Into<Option<Handle>>) -> Result<()> {
    let (ts, hdr) = object_on(obj)?;
    store_live(ts, handle_field(hdr, offset)?, value.into())
}

/// Stores `value` into a traced slot through the barrier, once it is known
/// to be null or live ([`Error::StaleHandle`] / [`Error::InvalidHandle`]
/// otherwise: storing it would hide a dangling reference). The two objects
/// the thread allocated last are known live without a lookup (see
/// `Mutator::is_fresh`).
#[inline(always)]
pub(crate) fn store_live(ts: &Mutator, slot: &AtomicU64, value: Option<Handle>) -> Result<()> {
    if let Some(v) = value {
        check_live(ts, v)?;
    }
    write_handle_slot(ts, slot, Handle::raw_or_null(value));
    Ok(())
}

/// `Ok` if `value` names a live object: one of the running thread's fresh
/// allocations, or one its lookup finds.
#[inline(always)]
fn check_live(ts: &Mutator, value: Handle) -> Result<()> {
    if !ts.is_fresh(value) {
        handles::resolve(value)?;
    }
    Ok(())
}

/// A handle field of a struct type, checked once when it is made: the
/// form of a field access that compiled code uses, where the field's type
/// and offset are known statically. [`load_field`] and [`store_field`]
/// then check only that the object is of the field's type (one compare
/// against its header) instead of its size, kind and handle bitmap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    type_id: u32,
    offset: u32,
}

impl Field {
    /// The handle field at byte `offset` of struct type `ty`.
    /// [`Error::WrongTypeKind`] for a variable-length type,
    /// [`Error::OutOfBounds`] if the word does not fit in the struct,
    /// [`Error::NotAHandleField`] if it is not one of its handle fields.
    pub fn new(ty: TypeId, offset: usize) -> Result<Field> {
        let info = types::info(ty);
        if info.kind() != Kind::Struct {
            return Err(Error::WrongTypeKind);
        }
        let size = info.size() as usize;
        if offset > size || size - offset < 8 {
            return Err(Error::OutOfBounds);
        }
        if !offset.is_multiple_of(8) || !info.is_handle_word(offset / 8) {
            return Err(Error::NotAHandleField);
        }
        Ok(Field {
            type_id: ty.to_raw(),
            // A struct's size fits in 32 bits (MAX_OBJECT_SIZE).
            offset: offset as u32,
        })
    }

    /// The struct type the field belongs to.
    pub fn type_id(self) -> TypeId {
        match TypeId::from_raw(self.type_id) {
            Ok(ty) => ty,
            Err(_) => unreachable!("a Field is made from a registered type"),
        }
    }

    /// The field's byte offset.
    pub fn offset(self) -> usize {
        self.offset as usize
    }
}

/// The slot of `field` in the object at `hdr`; [`Error::WrongType`] if
/// the object is not of the field's type.
#[inline(always)]
fn field_slot(hdr: *mut Header, field: Field) -> Result<&'static AtomicU64> {
    // SAFETY: a live object's header is initialised. An array's type word
    // has the ARRAY bit, so it is never a struct's id.
    if unsafe { (*hdr).type_word() } != field.type_id {
        return Err(Error::WrongType);
    }
    // SAFETY: the object is of the field's struct type, whose size holds
    // the (aligned) field; it stays allocated for this safepoint-free call.
    Ok(unsafe {
        &*Header::body(hdr)
            .add(field.offset as usize)
            .cast::<AtomicU64>()
    })
}

/// Allocates a zeroed object of the fixed-size type `ty` (a safepoint).
///
/// [`Error::WrongTypeKind`] for a variable-length type,
/// [`Error::HeapLimit`] when the heap is full even after a collection.
#[inline(always)]
pub fn alloc(ty: TypeId) -> Result<Handle> {
    alloc_struct(ty).map(|(_, obj, _)| obj)
}

/// [`alloc`], also returning the calling thread and the new object's
/// header, for a caller that initialises the object before its next
/// safepoint ([`alloc_with`]).
#[inline(always)]
fn alloc_struct(ty: TypeId) -> Result<(&'static Mutator, Handle, *mut Header)> {
    let Some((size, class)) = types::struct_size_class(ty) else {
        return Err(Error::WrongTypeKind);
    };
    let ts = mutator::current()?;
    mutator::poll(ts);
    let (obj, hdr) = heap::alloc_object(ts, ty.to_raw(), size, None, class)?;
    Ok((ts, obj, hdr))
}

/// Allocates a zeroed object of the variable-length type `ty` (a
/// safepoint): `len` handles for a handle-array type, `len` bytes for a
/// pointer-free one.
///
/// [`Error::WrongTypeKind`] for a fixed-size type, [`Error::TooLarge`]
/// above [`MAX_OBJECT_SIZE`](crate::precise::MAX_OBJECT_SIZE),
/// [`Error::HeapLimit`] when the heap is full even after a collection.
#[inline]
pub fn alloc_array(ty: TypeId, len: usize) -> Result<Handle> {
    let size = types::array_size(types::info(ty), len)?;
    let body = size + heap::LENGTH_WORD;
    let ts = mutator::current()?;
    mutator::poll(ts);
    heap::alloc_object(
        ts,
        ty.to_raw(),
        body as u32,
        Some(size as u64),
        heap::class_of(body),
    )
    .map(|(obj, _)| obj)
}

/// Allocates a zeroed object of the struct type `ty` (a safepoint) with
/// its first handle fields set: `fields[i]` (a live handle, or null) goes
/// into the type's `i`-th handle field in ascending offset order, and the
/// fields past `fields` stay null. What [`alloc`] and a
/// [`store_field`] per field do, without finding the new object again for
/// each store: the form of `&T{a, b}` in compiled code.
///
/// Errors as `alloc`, [`Error::OutOfBounds`] for more values than the type
/// has handle fields, and [`Error::StaleHandle`] / [`Error::InvalidHandle`]
/// for a value that is not live (checked after the allocation, which may
/// collect: the values must be rooted across it, as for any safepoint).
#[inline(always)]
pub fn alloc_with(ty: TypeId, fields: &[Option<Handle>]) -> Result<Handle> {
    let offsets = types::info(ty).offsets();
    if fields.len() > offsets.len() {
        return Err(if types::info(ty).kind() == Kind::Struct {
            Error::OutOfBounds
        } else {
            Error::WrongTypeKind
        });
    }
    let (ts, obj, hdr) = alloc_struct(ty)?;
    // No safepoint from here on: the new object is reachable from nowhere
    // yet, and no collection can start marking without this thread.
    let before_snapshot = marking::barrier_on() && ts.before_snapshot();
    for (&offset, &value) in offsets.iter().zip(fields) {
        // SAFETY: a registered handle offset of the new object's struct
        // type, inside its payload.
        let slot = unsafe { &*Header::body(hdr).add(offset as usize).cast::<AtomicU64>() };
        let Some(value) = value else { continue };
        check_live(ts, value)?;
        // The slot holds null: the barrier's deletion half has nothing to
        // log, and its insertion half logs only before the snapshot.
        if before_snapshot {
            ts.log(value.to_raw());
        }
        slot.store(value.to_raw(), Ordering::Release);
    }
    Ok(obj)
}

/// Loads `field` of `obj` (null as `None`); [`Error::WrongType`] if `obj`
/// is not of the field's type.
#[inline(always)]
pub fn load_field(obj: Handle, field: Field) -> Result<Option<Handle>> {
    let slot = field_slot(object(obj)?, field)?;
    Ok(Handle::from_raw(slot.load(Ordering::Acquire)).ok())
}

/// Loads several `fields` of `obj` at once (null as `None`), finding the
/// object once: the form of reading `n.left` and `n.right` with no
/// safepoint between, where [`load_field`] per field would look `obj` up
/// each time. [`Error::WrongType`] if `obj` is not of every field's type.
///
/// ```
/// use defergc::precise::{self, Field, Frame};
///
/// // struct Node { left: Handle, right: Handle }
/// let node = precise::register_type(16, &[0, 8]).unwrap();
/// let (left, right) = (Field::new(node, 0).unwrap(), Field::new(node, 8).unwrap());
/// let frame = Frame::new().unwrap();
/// let leaf = precise::alloc(node).unwrap();
/// frame.root(leaf).unwrap(); // held across the next allocation
/// let n = precise::alloc_with(node, &[Some(leaf)]).unwrap();
/// assert_eq!(precise::load_fields(n, [left, right]), Ok([Some(leaf), None]));
/// ```
#[inline(always)]
pub fn load_fields<const N: usize>(obj: Handle, fields: [Field; N]) -> Result<[Option<Handle>; N]> {
    let hdr = object(obj)?;
    let mut out = [None; N];
    for (value, field) in out.iter_mut().zip(fields) {
        *value = Handle::from_raw(field_slot(hdr, field)?.load(Ordering::Acquire)).ok();
    }
    Ok(out)
}

/// Stores `value` (a live handle, or null) into `field` of `obj`: as
/// [`store`], with [`Error::WrongType`] if `obj` is not of the field's
/// type.
#[inline(always)]
pub fn store_field(obj: Handle, field: Field, value: impl Into<Option<Handle>>) -> Result<()> {
    let (ts, hdr) = object_on(obj)?;
    store_live(ts, field_slot(hdr, field)?, value.into())
}

/// Stores a handle value into a slot the collector traces (a heap field or
/// a global root), on the running thread `ts`. Every such store goes
/// through here: the write barrier (see `collector/`). Off, it costs one
/// relaxed load. On (while a marking runs), it records the overwritten
/// value in the thread's log (deletion, snapshot-at-the-beginning), and,
/// while the thread's own roots are not yet snapshotted, the stored value
/// too; the load and the store need no atomic read-modify-write: a value
/// that a racing store hides without its being logged was logged by its
/// own writer (not yet snapshotted) or is held by a thread whose roots
/// are, which protects it (collector/, I1).
#[inline(always)]
pub(crate) fn write_handle_slot(ts: &Mutator, slot: &AtomicU64, raw: u64) {
    barriered_store(ts, slot, raw)
}

/// [`write_handle_slot`] for any kind of slot.
#[inline(always)]
pub(crate) fn barriered_store(ts: &Mutator, slot: &impl HandleSlot, raw: u64) {
    if marking::barrier_on() {
        let old = slot.load(Ordering::Relaxed);
        if old != 0 || ts.before_snapshot() {
            barrier_slow(ts, old, raw);
        }
    }
    slot.store(raw, Ordering::Release);
}

/// A word the collector traces: a heap field or a global root (an
/// `AtomicU64`), or under loom the model heap's slots of
/// `tests/precise_loom.rs`, which runs the barrier itself.
pub trait HandleSlot {
    /// Loads the slot's value.
    fn load(&self, order: Ordering) -> u64;
    /// Stores `raw` into the slot.
    fn store(&self, raw: u64, order: Ordering);
}

impl HandleSlot for AtomicU64 {
    #[inline(always)]
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }

    #[inline(always)]
    fn store(&self, raw: u64, order: Ordering) {
        AtomicU64::store(self, raw, order)
    }
}

#[cfg(loom)]
impl HandleSlot for loom::sync::atomic::AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        loom::sync::atomic::AtomicU64::load(self, order)
    }

    fn store(&self, raw: u64, order: Ordering) {
        loom::sync::atomic::AtomicU64::store(self, raw, order)
    }
}

#[cold]
#[inline(never)]
fn barrier_slow(ts: &Mutator, old: u64, raw: u64) {
    if old != 0 {
        ts.log(old);
    }
    if raw != 0 && ts.before_snapshot() {
        ts.log(raw);
    }
}

/// While a marking runs: the `len` bytes at `data` were just copied from
/// one context's memory to another's through shared memory (a channel's
/// copy, see `crate::roots::words_moved`). Each word that may be a handle
/// is logged, as a barriered store logs both the value it stores and the
/// one it removes: the copy may have taken it out of memory scanned later
/// (a shared block) into memory scanned already (a snapshotted context),
/// or the other way round. A context that was not registered registers
/// now, so that the Flush rounds wait for its log; but never a runtime
/// thread outside a goroutine (a worker firing a timer between
/// goroutines: it copies the time, never a reference): it never reaches a
/// safepoint, and an idle worker sleeps, so every later round would wait
/// for it for ever.
#[cold]
#[inline(never)]
pub(crate) fn log_moved_words(data: *const u8, len: usize) {
    let words = (0..len / 8)
        // SAFETY: the caller's len readable bytes (elements are copied
        // whole; a handle in one is at a multiple of 8 from its start).
        .map(|i| unsafe { data.add(i * 8).cast::<u64>().read_unaligned() })
        .filter(|&w| handles::could_be_handle(w));
    let logger = if crate::context::on_runtime_thread() {
        None
    } else {
        mutator::current().ok()
    };
    match logger {
        Some(ts) => words.for_each(|w| ts.log(w)),
        // Declared in native code, or the runtime's: holds no handle of
        // its own, but what it moved must still reach the marker.
        None => {
            let batch: Vec<u64> = words.collect();
            if !batch.is_empty() {
                marking::grey_queue().push(batch);
            }
        }
    }
}

/// The checked byte range `offset..offset + len` of the object at `hdr`.
#[inline(always)]
fn byte_range(hdr: *mut Header, offset: usize, len: usize) -> Result<*mut u8> {
    let (payload, size) = checked_payload(hdr);
    if offset > size || size - offset < len {
        return Err(Error::OutOfBounds);
    }
    Ok(payload.wrapping_add(offset))
}

/// Copies `buf.len()` bytes from `obj` at byte `offset` into `buf`.
/// Handle fields may be read as bytes. [`Error::OutOfBounds`] if the range
/// does not fit.
pub fn read_bytes(obj: Handle, offset: usize, buf: &mut [u8]) -> Result<()> {
    let src = byte_range(object(obj)?, offset, buf.len())?;
    // SAFETY: the range is inside a live payload (checked above).
    unsafe { copy_out(src, buf) };
    Ok(())
}

/// Copies `data` into `obj` at byte `offset`. [`Error::OutOfBounds`] if the
/// range does not fit; [`Error::HandleFieldOverlap`] if it touches a handle
/// field (use [`store`] for those).
pub fn write_bytes(obj: Handle, offset: usize, data: &[u8]) -> Result<()> {
    let hdr = object(obj)?;
    let dst = byte_range(hdr, offset, data.len())?;
    check_no_handles(hdr, offset, data.len())?;
    // SAFETY: the range is inside a live payload and holds no handle.
    unsafe { copy_in(dst, data) };
    Ok(())
}

/// Reads the 8 bytes at byte `offset` of `obj` as a native-endian `u64`.
#[inline]
pub fn read_u64(obj: Handle, offset: usize) -> Result<u64> {
    let src = byte_range(object(obj)?, offset, 8)?;
    if (src as usize).is_multiple_of(8) {
        // SAFETY: an aligned word inside a live payload.
        return Ok(unsafe { &*src.cast::<AtomicU64>() }.load(Ordering::Relaxed));
    }
    let mut buf = [0u8; 8];
    // SAFETY: 8 bytes inside a live payload.
    unsafe { copy_out(src, &mut buf) };
    Ok(u64::from_ne_bytes(buf))
}

/// Writes `value` as 8 native-endian bytes at byte `offset` of `obj`;
/// errors as [`write_bytes`].
#[inline]
pub fn write_u64(obj: Handle, offset: usize, value: u64) -> Result<()> {
    let hdr = object(obj)?;
    let dst = byte_range(hdr, offset, 8)?;
    check_no_handles(hdr, offset, 8)?;
    if (dst as usize).is_multiple_of(8) {
        // SAFETY: an aligned word inside a live payload, not a handle.
        unsafe { &*dst.cast::<AtomicU64>() }.store(value, Ordering::Relaxed);
        return Ok(());
    }
    // SAFETY: 8 bytes inside a live payload, no handle among them.
    unsafe { copy_in(dst, &value.to_ne_bytes()) };
    Ok(())
}

/// [`Error::HandleFieldOverlap`] if `offset..offset + len` (in bounds)
/// touches a handle field of the object at `hdr`.
#[inline(always)]
fn check_no_handles(hdr: *mut Header, offset: usize, len: usize) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let info = type_of_header(hdr);
    let overlap = match info.kind() {
        Kind::Bytes => false,
        Kind::HandleArray => true,
        Kind::Struct => info.any_handle_word(offset / 8, (offset + len - 1) / 8),
    };
    if overlap {
        Err(Error::HandleFieldOverlap)
    } else {
        Ok(())
    }
}

/// Copies object bytes at `src` into `buf` with relaxed atomic loads.
///
/// # Safety
/// `src..src + buf.len()` is inside a live object.
unsafe fn copy_out(src: *const u8, buf: &mut [u8]) {
    let mut i = 0;
    if (src as usize).is_multiple_of(8) {
        while buf.len() - i >= 8 {
            // SAFETY: aligned and in bounds (caller).
            let w = unsafe { &*src.add(i).cast::<AtomicU64>() }.load(Ordering::Relaxed);
            buf[i..i + 8].copy_from_slice(&w.to_ne_bytes());
            i += 8;
        }
    }
    while i < buf.len() {
        // SAFETY: in bounds (caller).
        buf[i] = unsafe { &*src.add(i).cast::<AtomicU8>() }.load(Ordering::Relaxed);
        i += 1;
    }
}

/// Copies `data` into object bytes at `dst` with relaxed atomic stores.
///
/// # Safety
/// `dst..dst + data.len()` is inside a live object and holds no handle.
unsafe fn copy_in(dst: *mut u8, data: &[u8]) {
    let mut i = 0;
    if (dst as usize).is_multiple_of(8) {
        while data.len() - i >= 8 {
            let mut w = [0u8; 8];
            w.copy_from_slice(&data[i..i + 8]);
            // SAFETY: aligned and in bounds (caller).
            unsafe { &*dst.add(i).cast::<AtomicU64>() }
                .store(u64::from_ne_bytes(w), Ordering::Relaxed);
            i += 8;
        }
    }
    while i < data.len() {
        // SAFETY: in bounds (caller).
        unsafe { &*dst.add(i).cast::<AtomicU8>() }.store(data[i], Ordering::Relaxed);
        i += 1;
    }
}
