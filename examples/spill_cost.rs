//! What giving a parked goroutine's stack page back to the kernel would
//! cost (design.md, "Why these choices": the page a parked goroutine
//! keeps). Measures, per slot, on slots laid out as the stack pool lays
//! them out (one `MAP_NORESERVE` mapping, 256 KiB a slot, the top page
//! used):
//!
//! - *fault in*: a goroutine's first run writes its top bytes (the page
//!   fault every fresh slot takes today);
//! - *spill*: its used bytes copied to a heap block, then the pages given
//!   back with one `MADV_DONTNEED` per run of `BATCH` neighbouring slots;
//! - *restore*: the bytes copied back before it runs again (the page
//!   faults in again, zeroed by the kernel, then is overwritten).
//!
//! Every slot's bytes are checked after the restore.
//!
//! ```text
//! cargo run --release --example spill_cost [SLOTS [BATCH [USED_BYTES]]]
//! ```

use std::time::Instant;

const SLOT: usize = 256 << 10;

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .map(|a| a.parse().expect("a number"))
        .unwrap_or(default)
}

fn main() {
    let slots = arg(1, 1_000_000);
    let batch = arg(2, 1024).max(1);
    let used = arg(3, 1536).clamp(8, 4096);
    // SAFETY: a fresh private anonymous mapping, touched only below.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            slots * SLOT,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert!(base != libc::MAP_FAILED, "mmap failed");
    let base = base.cast::<u8>();
    let top = |i: usize| base.wrapping_add((i + 1) * SLOT - used);
    let byte = |i: usize| (i as u8) | 1;

    let t0 = Instant::now();
    for i in 0..slots {
        // SAFETY: `used` bytes below slot i's end lie in the mapping.
        unsafe { std::ptr::write_bytes(top(i), byte(i), used) };
    }
    let t1 = Instant::now();
    let mut copies: Vec<Box<[u8]>> = Vec::with_capacity(slots);
    let mut run = 0;
    for i in 0..slots {
        // SAFETY: as above; the slot was written just before.
        copies.push(unsafe { std::slice::from_raw_parts(top(i), used) }.into());
        if (i + 1) % batch == 0 || i + 1 == slots {
            // SAFETY: whole slots of the mapping, whose bytes were copied.
            let r = unsafe {
                libc::madvise(
                    base.wrapping_add(run * SLOT).cast(),
                    (i + 1 - run) * SLOT,
                    libc::MADV_DONTNEED,
                )
            };
            assert_eq!(r, 0, "madvise failed");
            run = i + 1;
        }
    }
    let t2 = Instant::now();
    for (i, copy) in copies.iter().enumerate() {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(copy.as_ptr(), top(i), used) };
    }
    let t3 = Instant::now();
    drop(copies);
    // SAFETY: as above.
    let bad = (0..slots)
        .filter(|&i| unsafe { *top(i).add(used - 1) } != byte(i))
        .count();
    assert_eq!(bad, 0, "slots lost their bytes");
    let per = |a: Instant, b: Instant| (b - a).as_nanos() as f64 / slots as f64;
    println!(
        "{slots} slots, {used} bytes used, madvise per {batch}: fault in {:.0} ns, \
         spill {:.0} ns, restore {:.0} ns per slot",
        per(t0, t1),
        per(t1, t2),
        per(t2, t3)
    );
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(base.cast(), slots * SLOT) };
}
