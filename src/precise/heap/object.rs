//! What an object and a cell look like: the 8-byte [`Header`], the size
//! classes, and the free-cell invariant.
//!
//! Every object starts with a [`Header`] (its handle's generation, type
//! id, whether it is an array, mark byte); its body follows: a struct's
//! payload, whose size its type gives, or an array's length word and then
//! its payload (see [`LENGTH_WORD`]). Payloads are aligned to 8 bytes, the
//! largest alignment a Go type has on 64-bit platforms. The mark byte
//! holds the low byte of a cycle id: an object is marked in cycle `c` when
//! its mark byte equals `c` (see `collector/`).
//!
//! The header holds no index: a handle's index is where its object is (a
//! small object's block and cell, a large object's table entry, see
//! `handles.rs`), so an object whose header holds the handle's generation
//! is that handle's object. Nor does it hold a size: a struct's is its
//! type's, an array's is in its length word.
//!
//! Objects whose cell (header + body, rounded up to the size class) is
//! at most [`MAX_SMALL_CELL`] live in blocks (`blocks.rs`); larger ones are
//! allocated one by one ([`LARGE`]).
//!
//! Invariant: a free cell is bound to the handle its next object takes:
//! its generation word is that handle's generation with the [`FREE`] bit,
//! and the index leading to the cell is its position. The sweep frees a
//! dead cell by writing only that word, the next generation
//! ([`free_cell`]); allocation takes the generation and zeroes the body it
//! hands out ([`zero_body`]). Debug builds also poison a freed cell's body
//! and stamp its type, and check both, and the binding, when the cell is
//! reused ([`check_and_clear_poison`]): a write through a dangling pointer
//! aborts with a `defergc:` message.

use crate::precise::handles;
use std::ptr;
use std::sync::atomic::{fence, AtomicU32, AtomicU8, Ordering};

/// Bytes of an object header.
pub(crate) const HEADER: usize = 8;
/// Bytes of an array's length word, between its header and its payload:
/// the payload's size in bytes.
pub(crate) const LENGTH_WORD: usize = 8;
/// Cells are multiples of this, and so payloads are aligned to it.
pub(super) const GRANULE: usize = 8;

/// The largest small-object cell.
pub(crate) const MAX_SMALL_CELL: usize = 8192;
/// The size class of large objects.
pub(crate) const LARGE: u8 = u8::MAX;

/// The header in front of every object's body.
#[repr(C)]
pub(crate) struct Header {
    /// The generation of the object's handle; in a free cell, the
    /// generation its next object takes with the [`FREE`] bit; 0 in a
    /// large object being allocated (no handle has generation 0).
    /// Validation compares handles' generations with this.
    pub(crate) generation: AtomicU32,
    /// Registered type id, low 16 bits.
    type_lo: u16,
    /// Registered type id, bits 16..23, and [`ARRAY`].
    type_hi: u8,
    /// The low byte of the id of the last cycle that marked the object (or
    /// of its birth mark). A byte is enough: after a sweep every object
    /// carries the sweeping cycle's id.
    pub(crate) mark: AtomicU8,
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER);

impl Header {
    /// A header that matches no handle (all zero).
    pub(crate) const fn free() -> Header {
        Header {
            generation: AtomicU32::new(0),
            type_lo: 0,
            type_hi: 0,
            mark: AtomicU8::new(0),
        }
    }

    /// The body of the object whose header is at `hdr`: a struct's
    /// payload, an array's length word.
    #[inline(always)]
    pub(crate) fn body(hdr: *mut Header) -> *mut u8 {
        hdr.cast::<u8>().wrapping_add(HEADER)
    }

    /// The payload of the array whose header is at `hdr`.
    #[inline(always)]
    pub(crate) fn array_payload(hdr: *mut Header) -> *mut u8 {
        hdr.cast::<u8>().wrapping_add(HEADER + LENGTH_WORD)
    }

    /// The payload size of the array whose header is at `hdr`.
    ///
    /// # Safety
    /// `hdr` is a live array's header.
    #[inline(always)]
    pub(crate) unsafe fn array_len(hdr: *mut Header) -> usize {
        // SAFETY: an array's length word, written before its handle was
        // handed out and never changed.
        unsafe { Header::body(hdr).cast::<u64>().read() as usize }
    }

    /// The registered type id.
    #[inline(always)]
    pub(crate) fn type_id(&self) -> u32 {
        self.type_word() & MAX_TYPE_ID
    }

    /// The type id with the [`ARRAY`] bit: a struct's type id.
    #[inline(always)]
    pub(crate) fn type_word(&self) -> u32 {
        u32::from(self.type_lo) | u32::from(self.type_hi) << 16
    }

    /// Whether the object is an array (with a length word).
    #[inline(always)]
    pub(crate) fn is_array(&self) -> bool {
        self.type_hi & ARRAY != 0
    }

    /// Writes a new object's header: type and birth mark, then its
    /// generation (with release, last: nobody reads the other fields
    /// before the generation matches). A reader that matched a stale handle
    /// to this cell's last object before the cell was freed may read the
    /// new birth mark: a release fence orders the mark after the cell's
    /// free word, so a validator that reads the generation again after the
    /// mark (with an acquire fence) rejects the stale handle.
    ///
    /// # Safety
    /// `hdr` is a free cell (or zeroed large allocation) owned by the
    /// caller.
    #[inline(always)]
    pub(super) unsafe fn init(
        hdr: *mut Header,
        type_id: u32,
        array: bool,
        mark: u8,
        generation: u32,
    ) {
        debug_assert!(type_id <= MAX_TYPE_ID);
        let hi = (type_id >> 16) as u8 | if array { ARRAY } else { 0 };
        // SAFETY: the cell is the caller's.
        unsafe {
            ptr::addr_of_mut!((*hdr).type_lo).write(type_id as u16);
            ptr::addr_of_mut!((*hdr).type_hi).write(hi);
            fence(Ordering::Release);
            (*hdr).mark.store(mark, Ordering::Relaxed);
            (*hdr).generation.store(generation, Ordering::Release);
        }
    }

    /// Makes the cell at `hdr` a free cell bound to generation `next`, the
    /// one its next object takes (see [`FREE`]). Only the generation word
    /// is written.
    ///
    /// # Safety
    /// `hdr` is a free cell, or a dead object's cell, owned by the caller.
    /// Other threads may only read its generation word (validating a stale
    /// handle).
    #[inline(always)]
    pub(super) unsafe fn bind_free(hdr: *mut Header, next: u32) {
        // SAFETY: the cell is the caller's.
        unsafe { (*hdr).generation.store(next | FREE, Ordering::Relaxed) };
    }

    /// The generation the free cell at `hdr` is bound to: the one its next
    /// object takes.
    ///
    /// # Safety
    /// `hdr` is a free cell owned by the caller.
    #[inline(always)]
    pub(super) unsafe fn next_generation(hdr: *mut Header) -> u32 {
        // SAFETY: the cell is the caller's.
        unsafe { (*hdr).generation.load(Ordering::Relaxed) & !FREE }
    }
}

/// Set in the generation word of a free cell, whose other bits are the
/// generation the cell is bound to (the one its next object takes). No
/// handle's generation has this bit (generations have 24 bits), so a free
/// cell never matches a handle, and it is recognised with one test.
pub(crate) const FREE: u32 = 1 << 31;

const _: () = assert!(handles::MAX_GENERATION < FREE);

/// Whether a cell's generation word is a free cell's.
#[inline(always)]
pub(super) fn is_free(word: u32) -> bool {
    word & FREE != 0
}

/// Type ids fit in the header's 23 bits.
pub(crate) const MAX_TYPE_ID: u32 = (1 << 23) - 1;
/// Set in the header's type byte of an array: the object has a length
/// word. Struct or array is what every access needs to know first (where
/// the payload starts, where its size comes from), and the header tells
/// it without a look at the type registry.
const ARRAY: u8 = 0x80;

/// Number of small size classes.
pub(crate) const CLASSES: usize = 43;

/// Cell bytes of each class: 16..=128 by 8, 144..=256 by 16, then four
/// steps per doubling up to 8 KiB (at most 25% internal waste above 256
/// bytes). The 8-byte steps serve the commonest objects (a header and a
/// few words) without padding.
pub(super) static CELL: [u32; CLASSES] = {
    let mut cells = [0u32; CLASSES];
    let mut i = 0;
    while i < 15 {
        cells[i] = 16 + i as u32 * 8;
        i += 1;
    }
    while i < 23 {
        cells[i] = 144 + (i as u32 - 15) * 16;
        i += 1;
    }
    let mut base = 256u32;
    while i < CLASSES {
        let mut step = 5;
        while step <= 8 {
            cells[i] = base * step / 4;
            i += 1;
            step += 1;
        }
        base *= 2;
    }
    cells
};

/// The class of a cell of `g` granules, for `g` up to 8 KiB / 8.
static CLASS_BY_GRANULES: [u8; MAX_SMALL_CELL / GRANULE + 1] = {
    let mut table = [0u8; MAX_SMALL_CELL / GRANULE + 1];
    let mut g = 0;
    let mut class = 0;
    while g < table.len() {
        while (CELL[class] as usize) < g * GRANULE {
            class += 1;
        }
        table[g] = class as u8;
        g += 1;
    }
    table
};

/// The size class for a body of `size` bytes (a struct's payload, an
/// array's length word and payload), or [`LARGE`].
#[inline]
pub(crate) fn class_of(size: usize) -> u8 {
    let cell = size.saturating_add(HEADER);
    if cell > MAX_SMALL_CELL {
        LARGE
    } else {
        CLASS_BY_GRANULES[cell.div_ceil(GRANULE)]
    }
}

/// Written over the body of freed cells in debug builds.
const POISON: u8 = 0xDB;
/// Written as the type word of freed cells in debug builds (above every
/// id the registry hands out).
const FREED_STAMP: u32 = 0xF4_EED0;

/// Debug builds: before a cell is reused, checks that the handle it is
/// bound to (`handle`, from the allocator's count of cells) leads to it and
/// has its generation, and that nobody wrote to it since it was freed (its
/// body still all poison, its stamp intact, or all zero if never used),
/// then zeroes it. A write through a dangling pointer is reported here
/// instead of corrupting the new object.
///
/// # Safety
/// `hdr` is a free cell of at least `HEADER + size` bytes owned by the
/// caller.
pub(super) unsafe fn check_and_clear_poison(hdr: *mut Header, handle: u64, size: usize) {
    // SAFETY: forwarded from the caller.
    unsafe {
        let next = Header::next_generation(hdr);
        if !handles::names(handle, hdr) || handles::generation_of(handle) != next {
            crate::abort(&format!(
                "defergc: precise: heap corruption: free cell {hdr:p} (generation {next}) is not bound to {handle:#x}"
            ));
        }
        let stamp = (*hdr).type_word();
        let body = std::slice::from_raw_parts_mut(Header::body(hdr), size);
        let fill = if stamp == FREED_STAMP { POISON } else { 0 };
        if stamp != 0 && stamp != FREED_STAMP {
            crate::abort(&format!(
                "defergc: precise: heap corruption: free cell {hdr:p} has type word {stamp:#x}"
            ));
        }
        if let Some(i) = body.iter().position(|&b| b != fill) {
            crate::abort(&format!(
                "defergc: precise: use after free: byte {i} of freed cell {hdr:p} was written ({:#x})",
                body[i]
            ));
        }
        if fill != 0 {
            body.fill(0);
        }
    }
}

/// Frees the cell of the dead object whose generation is `generation`: its
/// generation word becomes a free cell's, bound to the next generation
/// (see [`FREE`]), which also makes the object's handle stale. The rest is
/// left as it is (allocation zeroes the body it uses, see [`zero_body`]);
/// debug builds poison the first `used` bytes after the header and stamp
/// the type instead.
///
/// # Safety
/// `hdr` is a dead object's cell of at least `used` bytes, owned by the
/// caller, and `generation` its generation. Other threads may only read
/// its generation word and, if that still matched, its mark (validating a
/// stale handle): both are atomics; nothing else of a dead object is read
/// by anyone.
#[inline(always)]
pub(super) unsafe fn free_cell(hdr: *mut Header, generation: u32, used: usize) {
    // SAFETY: forwarded from the caller.
    unsafe {
        Header::bind_free(hdr, handles::generation_after(generation));
        if cfg!(debug_assertions) {
            // Poisoned and stamped, checked when the cell is reused.
            (*hdr).mark.store(0, Ordering::Relaxed);
            ptr::addr_of_mut!((*hdr).type_lo).write(FREED_STAMP as u16);
            ptr::addr_of_mut!((*hdr).type_hi).write((FREED_STAMP >> 16) as u8);
            ptr::write_bytes(Header::body(hdr), POISON, used - HEADER);
        }
    }
}

/// Zeroes the first `bytes` (rounded up to 8) of a new object's body.
///
/// # Safety
/// The body at `hdr` has room for `bytes` rounded up to 8, and is the
/// caller's (a cell it is allocating).
#[inline(always)]
pub(super) unsafe fn zero_body(hdr: *mut Header, bytes: usize) {
    let payload = Header::body(hdr);
    let n = (bytes + 7) & !7;
    // Most objects are small: two or four possibly overlapping stores
    // cover any length up to 64 (a loop would become a memset call per
    // object, a match on the length a jump through a table).
    // SAFETY: every store is inside the first n bytes of the payload,
    // which is the caller's; unaligned stores need no alignment.
    unsafe {
        if n <= 16 {
            if n != 0 {
                payload.cast::<u64>().write(0);
                payload.add(n - 8).cast::<u64>().write(0);
            }
        } else if n <= 32 {
            payload.cast::<[u64; 2]>().write_unaligned([0; 2]);
            payload
                .add(n - 16)
                .cast::<[u64; 2]>()
                .write_unaligned([0; 2]);
        } else if n <= 64 {
            payload.cast::<[u64; 4]>().write_unaligned([0; 4]);
            payload
                .add(n - 32)
                .cast::<[u64; 4]>()
                .write_unaligned([0; 4]);
        } else {
            ptr::write_bytes(payload, 0, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_body_clears_exactly_the_rounded_body() {
        const CELL_BYTES: usize = 256;
        for bytes in 0..=CELL_BYTES - HEADER {
            let mut cell = [0xAAAA_AAAA_AAAA_AAAAu64; CELL_BYTES / 8];
            let hdr = cell.as_mut_ptr().cast::<Header>();
            // SAFETY: the payload has room for bytes rounded up to 8.
            unsafe { zero_body(hdr, bytes) };
            let payload = &cell[HEADER / 8..];
            let n = bytes.div_ceil(8);
            assert!(payload[..n].iter().all(|&w| w == 0), "{bytes}: not zeroed");
            assert!(
                payload[n..].iter().all(|&w| w == 0xAAAA_AAAA_AAAA_AAAA),
                "{bytes}: zeroed past the payload"
            );
        }
    }

    #[test]
    fn size_classes_ascend_and_cover_every_small_size() {
        assert_eq!(CELL[0], 16);
        assert_eq!(CELL[CLASSES - 1] as usize, MAX_SMALL_CELL);
        assert!(CELL.windows(2).all(|w| w[0] < w[1]));
        assert!(CELL.iter().all(|c| (*c as usize).is_multiple_of(GRANULE)));
        for size in 0..=MAX_SMALL_CELL - HEADER {
            let class = class_of(size) as usize;
            let cell = CELL[class] as usize;
            assert!(cell >= size + HEADER, "size {size} in class {class}");
            assert!(class == 0 || (CELL[class - 1] as usize) < size + HEADER);
        }
        assert_eq!(class_of(MAX_SMALL_CELL - HEADER + 1), LARGE);
        assert_eq!(class_of(usize::MAX), LARGE);
    }
}
