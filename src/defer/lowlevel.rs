//! The low-level chain, for runtimes that manage their own frames (as llgo
//! does): a per-thread head word and individually allocated records.
//!
//! Both live in root memory, which is what such runtimes get wrong when
//! they keep the head in pthread TLS and the records in malloc memory: the
//! collector sees neither, and reclaims what the records capture.
//!
//! Records carry a header in front of what the caller sees, so that freeing
//! something that is not a live record is caught and named.

use super::state::DeferState;
use crate::roots;
use std::ffi::c_void;
use std::ptr::NonNull;

/// This thread's defer head (null until set).
pub fn head() -> *mut c_void {
    DeferState::current().head.get()
}

/// Sets this thread's defer head. The word is a GC root: whatever chain
/// hangs off it stays alive.
pub fn set_head(head: *mut c_void) {
    DeferState::current().head.set(head);
}

/// Clears this thread's defer head.
pub fn clear_head() {
    set_head(std::ptr::null_mut());
}

/// Bytes in front of a record: its state word and its size.
const HEADER: usize = 16;
const LIVE: u64 = 0x6466_6772_6563_4c56; // "dfgrecLV"
const FREED: u64 = 0x6466_6772_6563_4644; // "dfgrecFD"
/// Freed records wait here before their memory goes back to the
/// allocator, which would overwrite the state word with its own links:
/// until then, a second free is recognised for certain.
pub const QUARANTINE: usize = 64;

/// Why [`record_free`] refused a pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// The pointer is null.
    Null,
    /// The record was already freed.
    DoubleFree,
    /// The pointer is not a record from [`record_alloc`].
    NotARecord,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecordError::Null => "defergc: null defer record freed",
            RecordError::DoubleFree => "defergc: defer record freed twice",
            RecordError::NotARecord => "defergc: freed pointer is not a defer record",
        })
    }
}

impl std::error::Error for RecordError {}

/// The largest record [`record_alloc`] makes (1 GiB: a record holds a
/// deferred call's arguments).
pub const MAX_RECORD: usize = 1 << 30;

/// Allocates a zeroed record of `size` bytes in root memory: everything
/// stored in it is visible to the collector until [`record_free`].
/// Aborts (`defergc:`) above [`MAX_RECORD`] bytes or when out of memory.
pub fn record_alloc(size: usize) -> NonNull<u8> {
    if size > MAX_RECORD {
        crate::abort(&format!(
            "defergc: defergc_record_alloc: {size} bytes, more than the largest record ({MAX_RECORD})"
        ));
    }
    let block = roots::alloc_block(HEADER + size);
    // SAFETY: the block has HEADER + size bytes, 16-aligned.
    unsafe {
        let words = block.cast::<u64>().as_ptr();
        words.write(LIVE);
        words.add(1).write(size as u64);
        NonNull::new_unchecked(block.as_ptr().add(HEADER))
    }
}

/// Frees a record from [`record_alloc`], right after its call has run:
/// its bytes are cleared at once (it keeps nothing alive), and its memory
/// goes back to the allocator once [`QUARANTINE`] later frees have passed.
///
/// Reports a null pointer, a pointer that is not a record, and a second
/// free of a record: for certain while the record is in quarantine, and
/// as "not a record" at worst after that, unless a new record has reused
/// the memory (then the second free frees that record: no pointer-based API
/// can tell the two apart).
///
/// Any address is accepted: one that does not start a record's block
/// (checked with `roots` before the header is read) is not a record.
///
/// # Safety
/// The record is not used after a successful free.
pub unsafe fn record_free(record: *mut u8) -> Result<(), RecordError> {
    let Some(record) = NonNull::new(record) else {
        return Err(RecordError::Null);
    };
    let block = record.as_ptr().wrapping_sub(HEADER);
    if !roots::is_block(block) {
        return Err(RecordError::NotARecord);
    }
    let words = block.cast::<u64>();
    // SAFETY: the block starts a live allocation of ours (checked), at
    // least HEADER bytes long: its first words are readable.
    match unsafe { words.read() } {
        LIVE => {
            // SAFETY: a live record: HEADER + size bytes from `words`.
            unsafe {
                let size = words.add(1).read() as usize;
                std::ptr::write_bytes(record.as_ptr(), 0, size);
                words.write(FREED);
            }
            // SAFETY: words is the non-null start of the record's block.
            quarantine(DeferState::current(), unsafe {
                NonNull::new_unchecked(words.cast())
            });
            Ok(())
        }
        FREED => Err(RecordError::DoubleFree),
        _ => Err(RecordError::NotARecord),
    }
}

/// Holds the block of a freed low-level record until `QUARANTINE` later
/// frees have passed, then gives it back to the allocator.
fn quarantine(th: &DeferState, block: NonNull<u8>) {
    let evicted = {
        let mut q = th.quarantine.borrow_mut();
        q.push_back(block);
        (q.len() > QUARANTINE).then(|| q.pop_front()).flatten()
    };
    if let Some(old) = evicted {
        // SAFETY: a record block from alloc_block, freed exactly once.
        unsafe { roots::free_block(old) };
    }
}
