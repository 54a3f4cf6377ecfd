//! What an object and a cell look like: the 16-byte [`Header`], the size
//! classes, and the free-cell invariant.
//!
//! Every object starts with a [`Header`] (its handle, payload size, type
//! id, mark byte); the payload follows, aligned to 16 bytes when its size
//! is a multiple of 16 and to 8 otherwise (see [`GRANULE`]). The mark byte
//! holds the low byte of a cycle id: an object is marked in cycle `c` when
//! its mark byte equals `c` (see `collector.rs`).
//!
//! Objects whose cell (header + payload, rounded up to the size class) is
//! at most [`MAX_SMALL_CELL`] live in blocks (`blocks.rs`); larger ones are
//! allocated one by one ([`LARGE`]).
//!
//! Invariant: a free cell is bound to the handle value its next object
//! takes: its handle word is that value with the [`FREE`] bit, and the
//! cell's index leads to the cell (see `handles.rs`). The sweep frees a
//! dead cell by writing only that word, the dead object's handle with the
//! next generation ([`free_cell`]); allocation takes the value and zeroes
//! the payload it hands out ([`zero_payload`]). Debug builds also poison a
//! freed cell's payload and stamp its size word, and check both, and the
//! binding, when the cell is reused ([`check_and_clear_poison`]): a write
//! through a dangling pointer aborts with a `defergc:` message.

use crate::precise::handles::{self, INDEX_BITS};
use std::ptr;
use std::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};

/// Bytes of an object header.
pub(crate) const HEADER: usize = 16;
/// Cells are multiples of this. A cell that is not a multiple of 16 holds
/// payloads whose size is not one either, and a type whose size is not a
/// multiple of 16 needs at most 8-byte alignment; so every payload is
/// aligned as its size allows (16 bytes at most), like `malloc`'s but
/// without rounding a 24-byte object up to 48 bytes.
pub(super) const GRANULE: usize = 8;

/// The largest small-object cell.
pub(crate) const MAX_SMALL_CELL: usize = 8192;
/// The size class of large objects.
pub(crate) const LARGE: u8 = u8::MAX;

/// The header in front of every object's payload.
#[repr(C)]
pub(crate) struct Header {
    /// The object's handle (index and generation); in a free cell, the
    /// handle its next object takes with the [`FREE`] bit; 0 in a large
    /// object being allocated. Validation compares handles with
    /// this.
    pub(crate) handle: AtomicU64,
    /// Payload bytes.
    pub(crate) size: u32,
    /// Registered type id, low 16 bits.
    type_lo: u16,
    /// Registered type id, bits 16..24.
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
            handle: AtomicU64::new(0),
            size: 0,
            type_lo: 0,
            type_hi: 0,
            mark: AtomicU8::new(0),
        }
    }

    /// The payload of the object whose header is at `hdr`.
    #[inline(always)]
    pub(crate) fn payload(hdr: *mut Header) -> *mut u8 {
        hdr.cast::<u8>().wrapping_add(HEADER)
    }

    /// The registered type id.
    #[inline(always)]
    pub(crate) fn type_id(&self) -> u32 {
        u32::from(self.type_lo) | u32::from(self.type_hi) << 16
    }

    /// Writes a new object's header: size, type and birth mark, then its
    /// handle (with release, last: nobody reads the other fields before
    /// the handle matches). A reader that matched a stale handle to this
    /// cell's last object before the cell was freed may read the new birth
    /// mark: a release fence orders the mark after the cell's free word,
    /// so a validator that reads the handle word again after the mark
    /// (with an acquire fence) rejects the stale handle.
    ///
    /// # Safety
    /// `hdr` is a free cell (or zeroed large allocation) owned by the
    /// caller.
    #[inline(always)]
    pub(super) unsafe fn init(hdr: *mut Header, size: u32, type_id: u32, mark: u8, handle: u64) {
        // SAFETY: the cell is the caller's.
        unsafe {
            ptr::addr_of_mut!((*hdr).size).write(size);
            ptr::addr_of_mut!((*hdr).type_lo).write(type_id as u16);
            ptr::addr_of_mut!((*hdr).type_hi).write((type_id >> 16) as u8);
            fence(Ordering::Release);
            (*hdr).mark.store(mark, Ordering::Relaxed);
            (*hdr).handle.store(handle, Ordering::Release);
        }
    }

    /// Makes the cell at `hdr` a free cell bound to the handle value
    /// `next`, the one its next object takes (see [`FREE`]). Only the
    /// handle word is written.
    ///
    /// # Safety
    /// `hdr` is a free cell, or a dead object's cell, owned by the caller.
    /// Other threads may only read its handle word (validating a stale
    /// handle).
    #[inline(always)]
    pub(super) unsafe fn bind_free(hdr: *mut Header, next: u64) {
        // SAFETY: the cell is the caller's.
        unsafe { (*hdr).handle.store(next | FREE, Ordering::Relaxed) };
    }

    /// The handle value the free cell at `hdr` is bound to: the one its
    /// next object takes.
    ///
    /// # Safety
    /// `hdr` is a free cell owned by the caller.
    #[inline(always)]
    pub(super) unsafe fn next_handle(hdr: *mut Header) -> u64 {
        // SAFETY: the cell is the caller's.
        unsafe { (*hdr).handle.load(Ordering::Relaxed) & !FREE }
    }
}

/// Set in the handle word of a free cell, whose other bits are the handle
/// value the cell is bound to (its index, and the generation its next
/// object takes). No handle has this bit: it is an index bit above every
/// index there can be. So a free cell's word never equals a handle that
/// resolves to it, and it is recognised with one test.
pub(crate) const FREE: u64 = 1 << (INDEX_BITS - 1);

// Index plus one stays below the free bit.
const _: () = assert!((handles::MAX_INDEX as u64) < FREE);

/// Whether a cell's handle word is a free cell's.
#[inline(always)]
pub(super) fn is_free(word: u64) -> bool {
    word & FREE != 0
}

/// Type ids fit in the header's 24 bits.
pub(crate) const MAX_TYPE_ID: u32 = (1 << 24) - 1;

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

/// The size class for a payload of `size` bytes, or [`LARGE`].
#[inline]
pub(crate) fn class_of(size: usize) -> u8 {
    let cell = size.saturating_add(HEADER);
    if cell > MAX_SMALL_CELL {
        LARGE
    } else {
        CLASS_BY_GRANULES[cell.div_ceil(GRANULE)]
    }
}

/// Written over the payload of freed cells in debug builds.
const POISON: u8 = 0xDB;
/// Written in the size word of freed cells in debug builds.
const FREED_STAMP: u32 = 0xF4EE_D0DE;

/// Debug builds: before a cell is reused, checks that the handle it is
/// bound to leads to it and that nobody wrote to it since it was freed (its
/// payload still all poison, its stamp intact, or all zero if never used),
/// then zeroes it. A write through a dangling pointer is reported here
/// instead of corrupting the new object.
///
/// # Safety
/// `hdr` is a free cell of at least `HEADER + size` bytes owned by the
/// caller.
pub(super) unsafe fn check_and_clear_poison(hdr: *mut Header, size: usize) {
    // SAFETY: forwarded from the caller.
    unsafe {
        let next = Header::next_handle(hdr);
        if !handles::names(next, hdr) {
            crate::abort(&format!(
                "defergc: precise: heap corruption: free cell {hdr:p} is not bound to {next:#x}"
            ));
        }
        let stamp = (*hdr).size;
        let payload = std::slice::from_raw_parts_mut(Header::payload(hdr), size);
        let fill = if stamp == FREED_STAMP { POISON } else { 0 };
        if stamp != 0 && stamp != FREED_STAMP {
            crate::abort(&format!(
                "defergc: precise: heap corruption: free cell {hdr:p} has size word {stamp:#x}"
            ));
        }
        if let Some(i) = payload.iter().position(|&b| b != fill) {
            crate::abort(&format!(
                "defergc: precise: use after free: byte {i} of freed cell {hdr:p} was written ({:#x})",
                payload[i]
            ));
        }
        if fill != 0 {
            payload.fill(0);
        }
    }
}

/// Frees the cell of the dead object whose handle is `handle`: its handle
/// word becomes a free cell's, bound to the same index with the next
/// generation (see [`FREE`]), which also makes `handle` stale. The rest is
/// left as it is (allocation zeroes the payload it uses, see
/// [`zero_payload`]); debug builds poison the first `used` bytes after the
/// header and stamp the size word instead.
///
/// # Safety
/// `hdr` is a dead object's cell of at least `used` bytes, owned by the
/// caller, and `handle` its handle. Other threads may only read its handle
/// word and, if that still matched, its mark (validating a stale handle):
/// both are atomics; nothing else of a dead object is read by anyone.
#[inline(always)]
pub(super) unsafe fn free_cell(hdr: *mut Header, handle: u64, used: usize) {
    // SAFETY: forwarded from the caller.
    unsafe {
        Header::bind_free(hdr, handles::next_generation(handle));
        if cfg!(debug_assertions) {
            // Poisoned and stamped, checked when the cell is reused.
            (*hdr).mark.store(0, Ordering::Relaxed);
            ptr::addr_of_mut!((*hdr).type_lo).write(0);
            ptr::addr_of_mut!((*hdr).type_hi).write(0);
            ptr::addr_of_mut!((*hdr).size).write(FREED_STAMP);
            ptr::write_bytes(Header::payload(hdr), POISON, used - HEADER);
        }
    }
}

/// Zeroes the first `bytes` (rounded up to 8) of a new object's payload.
///
/// # Safety
/// The payload at `hdr` has room for `bytes` rounded up to 8, and is the
/// caller's (a cell it is allocating).
#[inline(always)]
pub(super) unsafe fn zero_payload(hdr: *mut Header, bytes: usize) {
    let payload = Header::payload(hdr);
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
    fn zero_payload_clears_exactly_the_rounded_payload() {
        const CELL_BYTES: usize = 256;
        for bytes in 0..=CELL_BYTES - HEADER {
            let mut cell = [0xAAAA_AAAA_AAAA_AAAAu64; CELL_BYTES / 8];
            let hdr = cell.as_mut_ptr().cast::<Header>();
            // SAFETY: the payload has room for bytes rounded up to 8.
            unsafe { zero_payload(hdr, bytes) };
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
