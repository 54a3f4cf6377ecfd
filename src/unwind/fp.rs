//! The frame-pointer walk: return addresses from the chain of saved frame
//! pointers, with no allocation, no lock and no read outside the stack
//! the caller names, so that a signal handler may call it (CPU profiles:
//! the interrupted pc, fp and sp come from the signal's ucontext).
//!
//! On x86-64 and aarch64 a function built with frame pointers keeps a
//! frame record where its frame pointer points: the caller's frame
//! pointer, then the return address into the caller. The walk follows
//! those records while each frame pointer is word-aligned, strictly
//! above the previous one (stacks grow down: a loop or a step back ends
//! the walk), not below the stack pointer, and has its whole record
//! inside the caller's [`StackRange`]; it stops at the first that is not,
//! at a zero return address, or when the output is full. A bad frame
//! pointer so ends a walk early and never faults.
//!
//! What it sees depends on how the code was built: a frame of code built
//! without frame pointers (`-fomit-frame-pointer`, the default of an
//! optimising C compiler) either ends the walk or hides the frames
//! between it and the next frame record. This workspace builds its Rust
//! code with frame pointers (`.cargo/config.toml`) and bdwgc with
//! `-fno-omit-frame-pointer`; compiled code and embedders do their part
//! (README, "Frame pointers"). A function interrupted before it has set
//! up its own record (in its prologue) shows the pc, then its caller's
//! caller.
//!
//! On other architectures a walk finds nothing beyond the pc it is given.

/// The bounds of a stack a walk may read: `lo` up to, not including, `hi`
/// (a goroutine's stack, or a thread's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackRange {
    /// Lowest address.
    pub lo: usize,
    /// One past the highest address (the stack's base).
    pub hi: usize,
}

impl StackRange {
    /// The calling thread's own stack, as pthreads knows it (not the
    /// goroutine stack a worker may be running on). Not
    /// async-signal-safe: ask before, and keep it for the handler.
    pub fn of_thread() -> Option<StackRange> {
        let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        // SAFETY: pthread_getattr_np initialises `attr` when it returns
        // 0, and only then is it read and destroyed.
        unsafe {
            if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
                return None;
            }
            let got = libc::pthread_attr_getstack(attr.as_ptr(), &mut addr, &mut size);
            libc::pthread_attr_destroy(attr.as_mut_ptr());
            if got != 0 {
                return None;
            }
        }
        Some(StackRange {
            lo: addr as usize,
            hi: addr as usize + size,
        })
    }

    /// Whether the `bytes` bytes at `at` lie inside the range.
    fn holds(self, at: usize, bytes: usize) -> bool {
        at >= self.lo && at.checked_add(bytes).is_some_and(|end| end <= self.hi)
    }
}

/// An interrupted frame's registers: program counter, frame pointer
/// (`rbp`, `x29`) and stack pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs {
    /// The instruction interrupted.
    pub pc: usize,
    /// Its frame pointer.
    pub fp: usize,
    /// Its stack pointer: no frame record lies below it.
    pub sp: usize,
}

/// A frame record: the caller's frame pointer, then the return address.
const RECORD: usize = 2 * std::mem::size_of::<usize>();

/// Writes `regs.pc`, then the return address of each frame record of the
/// chain from `regs.fp`, into `out`; returns how many it wrote.
/// Async-signal-safe: reads only words inside `stack` (see the module
/// docs for when a walk stops).
pub fn walk_from(regs: Regs, stack: StackRange, out: &mut [usize]) -> usize {
    if out.is_empty() {
        return 0;
    }
    out[0] = regs.pc;
    1 + follow(regs.fp, regs.sp, stack, &mut out[1..], None)
}

/// Writes the return addresses of the calling function's frame chain
/// into `out`, the first being the return into the caller of
/// `walk_here`; returns how many it wrote. `stack` is the stack the
/// caller runs on. Async-signal-safe.
#[inline(never)]
pub fn walk_here(stack: StackRange, out: &mut [usize]) -> usize {
    let (_, sp) = registers();
    let fp = frame_here();
    follow(fp, sp, stack, out, None)
}

/// Writes the return address of each frame record of the chain from
/// `fp` into `out` (no record outside `stack`); returns how many it
/// wrote. For a stack that is not running: a parked coroutine's, from the
/// frame pointer it saved when it switched out. Async-signal-safe.
pub fn walk_chain(fp: usize, stack: StackRange, out: &mut [usize]) -> usize {
    follow(fp, stack.lo, stack, out, None)
}

/// [`walk_chain`], also writing into `records` (as long as `out`) the
/// address of the frame record each return address was read from: a
/// frame's stack pointer is two words above its callee's record, its
/// frame's top two words above its own.
pub fn walk_chain_records(
    fp: usize,
    stack: StackRange,
    out: &mut [usize],
    records: &mut [usize],
) -> usize {
    follow(fp, stack.lo, stack, out, Some(records))
}

/// The calling function's frame pointer (where this is inlined): kept by
/// a coroutine that switches out, for [`walk_chain`].
#[inline(always)]
pub fn frame_pointer() -> usize {
    registers().0
}

/// The return address of the function this is inlined into (into its
/// caller), read from its frame record: what a `go` statement records as
/// its creator. Zero on architectures without frame records. The
/// function must be built with frame pointers (the workspace's are) and
/// must not be inlined itself.
#[inline(always)]
pub fn return_address() -> usize {
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return 0;
    }
    let fp = frame_here();
    if fp == 0 || !fp.is_multiple_of(std::mem::size_of::<usize>()) {
        return 0;
    }
    // SAFETY: with frame pointers, the running function's frame pointer
    // points at its own frame record on the running stack: two words,
    // the second its return address.
    unsafe { (fp as *const usize).add(1).read() }
}

/// A function's frame record, read: where it lies, the caller's frame
/// pointer and the return address into the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameRecord {
    /// The record's address (the function's frame pointer); the caller's
    /// stack pointer at the call was two words above it.
    pub at: usize,
    /// The caller's frame pointer.
    pub fp: usize,
    /// The return address into the caller.
    pub pc: usize,
}

/// The frame record of the function this is inlined into. What a
/// goroutine entering a system call keeps: its caller's frames stay as
/// they are while the call lasts, so a dump walks them from there. All
/// zero on architectures without frame records. The function must be
/// built with frame pointers and must not be inlined itself.
#[inline(always)]
pub fn caller_frame() -> FrameRecord {
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return FrameRecord::default();
    }
    let at = frame_here();
    if at == 0 || !at.is_multiple_of(std::mem::size_of::<usize>()) {
        return FrameRecord::default();
    }
    // SAFETY: with frame pointers, the running function's frame pointer
    // points at its own frame record on the running stack: the caller's
    // frame pointer, then the return address. Two word loads, never one
    // wide one: the record was just written by two pushes (the call's
    // and the prologue's), and a load spanning both would wait for them
    // to reach the cache instead of taking their values forwarded.
    let (fp, pc) = unsafe {
        let record = at as *const usize;
        (
            std::ptr::read_volatile(record),
            std::ptr::read_volatile(record.add(1)),
        )
    };
    FrameRecord { at, fp, pc }
}

/// Follows the chain from `fp`, no record below `sp` nor outside `stack`.
fn follow(
    mut fp: usize,
    sp: usize,
    stack: StackRange,
    out: &mut [usize],
    mut records: Option<&mut [usize]>,
) -> usize {
    const WORD: usize = std::mem::size_of::<usize>();
    if !cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        return 0;
    }
    let stack = StackRange {
        lo: stack.lo.max(sp),
        hi: stack.hi,
    };
    let mut n = 0;
    while n < out.len() && fp.is_multiple_of(WORD) && stack.holds(fp, RECORD) {
        let record = fp as *const usize;
        // SAFETY: the record's two words lie inside `stack`, which the
        // caller names as mapped stack memory, and are aligned.
        let (next, ret) = unsafe { (record.read(), record.add(1).read()) };
        if ret == 0 {
            break;
        }
        out[n] = ret;
        if let Some(r) = records.as_deref_mut().and_then(|r| r.get_mut(n)) {
            *r = fp;
        }
        n += 1;
        if next <= fp {
            break;
        }
        fp = next;
    }
    n
}

// The caller's frame pointer, read by a function of its own: a leaf
// without a frame, called. An `asm!` that reads the register inline may
// be scheduled before the prologue of the function it is in (the
// compiler places the prologue only before what it knows needs the
// frame), and then reads the caller's frame pointer instead, one frame
// too far; a call comes after the prologue.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".pushsection .text.defergc_frame_here,\"ax\",@progbits",
    ".globl defergc_frame_here",
    ".hidden defergc_frame_here",
    ".type defergc_frame_here,@function",
    ".p2align 4",
    "defergc_frame_here:",
    "mov rax, rbp",
    "ret",
    ".size defergc_frame_here, . - defergc_frame_here",
    ".popsection",
);
#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".pushsection .text.defergc_frame_here,\"ax\",@progbits",
    ".globl defergc_frame_here",
    ".hidden defergc_frame_here",
    ".type defergc_frame_here,%function",
    ".p2align 2",
    "defergc_frame_here:",
    "mov x0, x29",
    "ret",
    ".size defergc_frame_here, . - defergc_frame_here",
    ".popsection",
);

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
extern "C" {
    /// Returns its caller's frame pointer (see the assembly above).
    fn defergc_frame_here() -> usize;
}

/// The frame pointer of the function this is inlined into, after its
/// prologue (0 on other architectures).
#[inline(always)]
fn frame_here() -> usize {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the assembly reads one register and returns; it touches no
    // memory and follows the C calling convention.
    unsafe {
        defergc_frame_here()
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    0
}

/// The frame pointer and stack pointer where this is inlined (the frame
/// pointer may be read before the function's prologue: see
/// [`frame_here`]).
#[inline(always)]
fn registers() -> (usize, usize) {
    let (fp, sp): (usize, usize);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reads two registers into outputs; touches no memory.
    unsafe {
        std::arch::asm!("mov {}, rbp", "mov {}, rsp", out(reg) fp, out(reg) sp,
            options(nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: reads two registers into outputs; touches no memory.
    unsafe {
        std::arch::asm!("mov {}, x29", "mov {}, sp", out(reg) fp, out(reg) sp,
            options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        (fp, sp) = (0, 0);
    }
    (fp, sp)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPTH: usize = 64;

    /// Both walks from the same function: the frame-pointer one's
    /// addresses, the unwind tables' ones.
    #[inline(never)]
    fn walk_both_in_level3() -> (Vec<usize>, Vec<usize>) {
        let mut fp = [0usize; DEPTH];
        let n = walk_here(StackRange::of_thread().unwrap(), &mut fp);
        let mut tables = Vec::new();
        crate::unwind::walk(|pc| {
            tables.push(pc);
            tables.len() < DEPTH
        });
        std::hint::black_box((fp[..n].to_vec(), tables))
    }

    #[inline(never)]
    fn level2() -> (Vec<usize>, Vec<usize>) {
        std::hint::black_box(walk_both_in_level3())
    }

    #[inline(never)]
    fn level1() -> (Vec<usize>, Vec<usize>) {
        std::hint::black_box(level2())
    }

    #[test]
    fn frame_pointers_give_the_unwind_tables_return_addresses() {
        let (fp, tables) = level1();
        // The first frame differs (each walk is called from its own call
        // site in level 3); from the return into level 2 on, the callers
        // are the same frames.
        assert!(fp.len() >= 4, "{fp:x?}");
        let from = tables
            .iter()
            .position(|&pc| pc == fp[1])
            .unwrap_or_else(|| panic!("{:x} not in {tables:x?}", fp[1]));
        let common = (fp.len() - 1).min(tables.len() - from);
        assert!(common >= 3, "{fp:x?} {tables:x?}");
        assert_eq!(fp[1..1 + common], tables[from..from + common]);
    }

    /// A fake stack of frame records: `words[i]` as the walk reads them.
    fn fake(words: &mut [usize; 16], links: &[(usize, usize)]) -> (Regs, StackRange) {
        let base = words.as_ptr() as usize;
        let at = |i: usize| base + i * std::mem::size_of::<usize>();
        for &(from, to) in links {
            words[from] = at(to);
            words[from + 1] = 0x1000 + from;
        }
        let regs = Regs {
            pc: 0x42,
            fp: at(links[0].0),
            sp: base,
        };
        (
            regs,
            StackRange {
                lo: base,
                hi: at(words.len()),
            },
        )
    }

    /// Reads its own frame record, as `go::enter_syscall` does.
    #[inline(never)]
    fn record_of_a_callee() -> FrameRecord {
        std::hint::black_box(caller_frame())
    }

    /// Reads its own return address, as the `go` statement does.
    #[inline(never)]
    fn return_address_of_a_callee() -> usize {
        std::hint::black_box(return_address())
    }

    /// Calls both; its own frame pointer for the check.
    #[inline(never)]
    fn caller_of_both() -> (FrameRecord, usize, usize) {
        let r = record_of_a_callee();
        let a = return_address_of_a_callee();
        (r, a, std::hint::black_box(frame_here()))
    }

    /// The function whose code holds `pc`, by the unwind tables.
    fn function_of(pc: usize) -> usize {
        // SAFETY: a lookup; any address is accepted.
        unsafe { _Unwind_FindEnclosingFunction((pc - 1) as *mut std::ffi::c_void) as usize }
    }

    extern "C" {
        fn _Unwind_FindEnclosingFunction(pc: *mut std::ffi::c_void) -> *mut std::ffi::c_void;
    }

    /// The record read is the callee's own, after its prologue: the
    /// return address leads into the caller and the saved frame pointer
    /// is the caller's (read too early, it would be one frame further).
    #[test]
    fn a_callee_reads_its_own_record_and_return_address() {
        let (r, a, caller_fp) = caller_of_both();
        let caller = caller_of_both as fn() -> (FrameRecord, usize, usize) as usize;
        assert_eq!(function_of(r.pc), caller, "{r:?}");
        assert_eq!(r.fp, caller_fp, "{r:?}");
        assert_eq!(function_of(a), caller);
    }

    #[test]
    fn a_chain_that_loops_or_steps_back_ends_the_walk() {
        let mut words = [0usize; 16];
        let (regs, range) = fake(&mut words, &[(2, 6), (6, 2)]);
        let mut out = [0; 8];
        assert_eq!(walk_from(regs, range, &mut out), 3);
        assert_eq!(out[..3], [0x42, 0x1002, 0x1006]);
        let mut words = [0usize; 16];
        let (regs, range) = fake(&mut words, &[(4, 4)]);
        assert_eq!(walk_from(regs, range, &mut out), 2);
    }

    #[test]
    fn a_frame_pointer_outside_the_stack_or_misaligned_is_not_read() {
        let mut out = [0; 8];
        let mut words = [0usize; 16];
        // The second record would end past the range's top.
        let (regs, range) = fake(&mut words, &[(2, 15)]);
        assert_eq!(walk_from(regs, range, &mut out), 2);
        for garbage in [
            0,
            1,
            0xdead_beef,
            usize::MAX - 4,
            range.lo - 16,
            range.lo + 3,
        ] {
            let regs = Regs {
                fp: garbage,
                ..regs
            };
            assert_eq!(walk_from(regs, range, &mut out), 1, "{garbage:x}");
            assert_eq!(out[0], 0x42);
        }
        // Below the stack pointer is outside the stack too.
        let regs = Regs {
            sp: range.lo + 64,
            ..regs
        };
        assert_eq!(walk_from(regs, range, &mut out), 1);
        assert_eq!(walk_from(regs, range, &mut []), 0);
    }

    #[test]
    fn the_walk_stops_when_the_output_is_full() {
        let mut words = [0usize; 16];
        let (regs, range) = fake(&mut words, &[(0, 4), (4, 8), (8, 12)]);
        let mut out = [0; 3];
        assert_eq!(walk_from(regs, range, &mut out), 3);
        assert_eq!(out, [0x42, 0x1000, 0x1004]);
    }
}
