//! Asynchronous preemption's mechanism (Go's `doSigPreempt`, `pushCall`
//! and `asyncPreempt`, on x86-64 Linux): the SIGURG entry, the table of
//! compiled code, and the preemption entry a redirected thread calls.
//! Whether and when to preempt is the go layer's (`go/async_preempt.rs`):
//! it registers a [`Policy`] and sends the signal.
//!
//! # The signal
//!
//! SIGURG, as Go: programs rarely use it, and its default action is to
//! ignore it. Installed through `handler::install` with `SA_SIGINFO |
//! SA_ONSTACK | SA_RESTART`, and shared ([`Action::Shared`]): a handler
//! the program installed before ours is called for every SIGURG, ours or
//! not, so it may see SIGURGs it did not expect (Go's `os/signal` says
//! the same). A handler installed after ours replaces it: then requests
//! stay recorded and only the cooperative checks honour them.
//!
//! # The entry in the handler ([`on_sigurg`])
//!
//! Async-signal-safe: it asks the policy's `decide` (atomics and
//! thread-locals only), which checks that a request is pending for this
//! worker, that a goroutine runs here with a processor, that its stack
//! has room, and that the interrupted pc is compiled code
//! ([`in_compiled_code`]). If so the context is redirected
//! ([`Interrupted::redirect_call`]) to [`preempt_entry`], as if the
//! interrupted instruction had called it. Else nothing changes (the
//! request stays pending). In both cases the program's own handler, if
//! any, runs after.
//!
//! # Compiled code
//!
//! Preemption happens only where the pc is in *compiled code*: code the
//! runtime did not write, which holds no lock or state of the runtime's
//! between two of its instructions. Never the runtime's own code, bdwgc,
//! libc, the dynamic loader or the vDSO. The table is fixed before the
//! first signal ([`install`]), from the executable's symbol table
//! (`/proc/self/exe`, mapped and parsed once, not in a handler):
//!
//! - a function symbol of the executable is compiled code unless it is
//!   the runtime's: every Rust function, of any crate (the runtime, what
//!   it links, and a program's own Rust: Rust code keeps per-thread state
//!   a move between workers would break; see [`is_runtime_symbol`]),
//!   bdwgc's (`GC_*`, and every local function of a source file that has
//!   a local `GC_*` or `defergc_*` one: bdwgc's single translation unit,
//!   whose static helpers have names of any kind), the C ABI's
//!   (`defergc_*`), and every other name that starts with `_` (the C
//!   library's start files, compiler helpers);
//! - every other loaded object (libc, the loader, the vDSO, a shared
//!   `libdefergc`) is not compiled code, unless a compiler registers a
//!   range of its code with [`register_text`] (`defergc_preempt_text`),
//!   for code it loads itself or a shared library of compiled code;
//! - anything not covered (PLT stubs, gaps between symbols, a stripped
//!   executable) is refused.
//!
//! So Rust goroutines are preempted at their runtime calls and poll
//! points only (`go::preempt_point()`). The target is the code a compiler
//! of the Go-like language emits (C, assembly, LLVM), whose names are its
//! own. Compiled code that calls the runtime may already move to another
//! worker at that call; preempting it between two instructions moves it
//! no differently.
//!
//! # The entry ([`preempt_entry`])
//!
//! Runs on the goroutine's stack, out of signal context (the kernel
//! restored the signal mask), as if called by the interrupted
//! instruction: below the interrupted stack pointer's 128-byte red zone
//! lies the interrupted pc as its return address. It pushes the frame
//! pointer (a normal frame, with unwind information), rflags and the
//! other fourteen general registers, then saves the vector state in a
//! 64-byte aligned area below them: `xsave64` of every component enabled
//! in XCR0 (the area's size from CPUID leaf 0xD), or `fxsave64` where the
//! processor or the kernel has no XSAVE. It clears the direction flag,
//! loads the default MXCSR and resets the x87 state (the runtime is
//! called with the ABI's state, whatever the interrupted code had), and
//! calls the policy's `park`, which yields the goroutine. When the
//! goroutine runs again (on any worker), it restores the vector state,
//! the general registers and rflags exactly, and returns with `ret 128`:
//! the interrupted instruction runs next, with the stack pointer it had.
//!
//! Everything the goroutine held in registers is then on its own stack,
//! below the interrupted stack pointer and above the stack pointer it
//! switched out at: the collectors' scans of a parked goroutine cover it
//! (design.md invariant 6).

use super::context::{Interrupted, X86_64_RED_ZONE};
use super::handler::{self, Action};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The preemption signal.
pub(crate) const SIGNAL: libc::c_int = libc::SIGURG;

/// What the go layer decides, registered once with [`install`].
pub(crate) struct Policy {
    /// In the handler: whether to preempt the goroutine interrupted at
    /// `pc` with stack pointer `sp` (async-signal-safe code only). True
    /// means the context is redirected: the request is taken.
    pub(crate) decide: fn(pc: usize, sp: usize) -> bool,
    /// Called by [`preempt_entry`] out of signal context, every register
    /// saved: yields the goroutine, returns when it runs again.
    pub(crate) park: extern "C" fn(),
}

/// The policy's `decide` (0 until installed).
static DECIDE: AtomicUsize = AtomicUsize::new(0);
/// The policy's `park`, called by the entry through this word.
static PARK: AtomicUsize = AtomicUsize::new(0);

/// How the entry saves the vector state: 0 not yet known, 1 `fxsave64`,
/// 2 `xsave64`.
static SAVE_KIND: AtomicU8 = AtomicU8::new(0);
const FXSAVE: u8 = 1;
const XSAVE: u8 = 2;
/// The components `xsave64` saves (XCR0).
static XSAVE_MASK: AtomicU64 = AtomicU64::new(0);
/// Bytes the entry reserves for the vector state, 64-byte alignment
/// included (at least the legacy area and the XSAVE header, which it
/// clears).
static SAVE_AREA: AtomicUsize = AtomicUsize::new(0);
/// MXCSR's value at reset (every exception masked, round to nearest).
static DEFAULT_MXCSR: u32 = 0x1f80;

/// The legacy area and the XSAVE header: the least the entry reserves.
const LEGACY_AND_HEADER: usize = 576;
/// What [`preempt_entry`] pushes below the red zone before the vector
/// area: the return address, the frame pointer, rflags and fourteen
/// general registers.
const PUSHED: usize = 8 * 17;

/// Installs the SIGURG entry with `policy` (the first policy stays) and
/// fixes the table of compiled code. False where there is no asynchronous
/// preemption (only x86-64 Linux has it).
pub(crate) fn install(policy: Policy) -> bool {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        return false;
    }
    static ONCE: OnceLock<bool> = OnceLock::new();
    *ONCE.get_or_init(|| {
        probe_vector_state();
        let _ = TABLE.set(compiled_code_table());
        PARK.store(policy.park as usize, Ordering::Release);
        DECIDE.store(policy.decide as usize, Ordering::Release);
        handler::install(SIGNAL, on_sigurg, true);
        true
    })
}

/// Bytes below an interrupted stack pointer that the entry uses before it
/// calls the policy's `park`: the red zone it skips, what it pushes, and
/// the vector state's area. Known once [`install`]ed (0 before).
pub(crate) fn entry_frame() -> usize {
    match SAVE_AREA.load(Ordering::Acquire) {
        0 => 0,
        area => X86_64_RED_ZONE + PUSHED + area,
    }
}

/// The SIGURG entry (see the module docs).
fn on_sigurg(i: &mut Interrupted) -> Action {
    let decide = DECIDE.load(Ordering::Acquire);
    if decide != 0 {
        // SAFETY: only install stores here, and it stores the policy's
        // decide function.
        let decide = unsafe { std::mem::transmute::<usize, fn(usize, usize) -> bool>(decide) };
        if decide(i.pc(), i.sp()) {
            let redirected = i.redirect_call(preempt_entry as *const () as usize);
            debug_assert!(
                redirected,
                "install succeeds only where redirect_call works"
            );
        }
    }
    Action::Shared
}

// ---- the vector state ---------------------------------------------------

/// Decides how the entry saves the vector state, and how much room that
/// takes (once, before the handler is installed).
fn probe_vector_state() {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__cpuid, __cpuid_count};
        // SAFETY: cpuid exists on every x86-64 processor (the intrinsic
        // is safe from Rust 1.94 on, unsafe before).
        #[allow(unused_unsafe)]
        let leaf1 = unsafe { __cpuid(1) };
        let osxsave = leaf1.ecx & (1 << 27) != 0;
        let (kind, size) = if osxsave {
            let xcr0 = xgetbv0();
            XSAVE_MASK.store(xcr0, Ordering::Release);
            // SAFETY: as above; leaf 0xD exists where XSAVE does. EBX:
            // the area's size for the components XCR0 enables.
            #[allow(unused_unsafe)]
            let size = unsafe { __cpuid_count(0xd, 0) }.ebx as usize;
            (XSAVE, size)
        } else {
            (FXSAVE, 512)
        };
        SAVE_AREA.store(size.max(LEGACY_AND_HEADER) + 64, Ordering::Release);
        SAVE_KIND.store(kind, Ordering::Release);
    }
}

/// XCR0: the state components the kernel enabled for XSAVE.
#[cfg(target_arch = "x86_64")]
fn xgetbv0() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: xgetbv with ecx = 0 reads XCR0; the caller checked OSXSAVE,
    // without which it faults.
    unsafe {
        core::arch::asm!("xgetbv", in("ecx") 0, out("eax") lo, out("edx") hi,
            options(nomem, nostack, preserves_flags));
    }
    (u64::from(hi) << 32) | u64::from(lo)
}

/// The preemption entry (see the module docs). Not a function to call:
/// a redirected thread arrives here with the interrupted pc as its
/// return address, 128 bytes below the interrupted stack pointer.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[unsafe(naked)]
unsafe extern "C" fn preempt_entry() {
    core::arch::naked_asm!(
        ".cfi_startproc",
        "push rbp",
        ".cfi_def_cfa_offset 16",
        ".cfi_offset rbp, -16",
        "mov rbp, rsp",
        ".cfi_def_cfa_register rbp",
        "pushfq",
        "push rax",
        "push rbx",
        "push rcx",
        "push rdx",
        "push rsi",
        "push rdi",
        "push r8",
        "push r9",
        "push r10",
        "push r11",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        // rbx (saved above, callee-saved below) keeps where they are.
        "mov rbx, rsp",
        "cld",
        "sub rsp, qword ptr [rip + {area}]",
        "and rsp, -64",
        // XRSTOR wants the XSAVE header's reserved bytes zero: clear it
        // (the legacy area's end, for FXSAVE, is ours to scribble on).
        "xor eax, eax",
        "mov qword ptr [rsp + 512], rax",
        "mov qword ptr [rsp + 520], rax",
        "mov qword ptr [rsp + 528], rax",
        "mov qword ptr [rsp + 536], rax",
        "mov qword ptr [rsp + 544], rax",
        "mov qword ptr [rsp + 552], rax",
        "mov qword ptr [rsp + 560], rax",
        "mov qword ptr [rsp + 568], rax",
        "cmp byte ptr [rip + {kind}], {xsave}",
        "jne 2f",
        "mov eax, dword ptr [rip + {mask}]",
        "mov edx, dword ptr [rip + {mask} + 4]",
        "xsave64 [rsp]",
        "jmp 3f",
        "2:",
        "fxsave64 [rsp]",
        "3:",
        "ldmxcsr dword ptr [rip + {mxcsr}]",
        "fninit",
        "call qword ptr [rip + {park}]",
        "cmp byte ptr [rip + {kind}], {xsave}",
        "jne 4f",
        "mov eax, dword ptr [rip + {mask}]",
        "mov edx, dword ptr [rip + {mask} + 4]",
        "xrstor64 [rsp]",
        "jmp 5f",
        "4:",
        "fxrstor64 [rsp]",
        "5:",
        "mov rsp, rbx",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop r11",
        "pop r10",
        "pop r9",
        "pop r8",
        "pop rdi",
        "pop rsi",
        "pop rdx",
        "pop rcx",
        "pop rbx",
        "pop rax",
        "popfq",
        "pop rbp",
        ".cfi_def_cfa rsp, 8",
        "ret 128",
        ".cfi_endproc",
        area = sym SAVE_AREA,
        kind = sym SAVE_KIND,
        xsave = const XSAVE,
        mask = sym XSAVE_MASK,
        mxcsr = sym DEFAULT_MXCSR,
        park = sym PARK,
    )
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
unsafe extern "C" fn preempt_entry() {}

// ---- compiled code --------------------------------------------------------

/// The executable's compiled code: sorted, disjoint `[start, end)` ranges,
/// fixed before the handler is installed.
static TABLE: OnceLock<Box<[(usize, usize)]>> = OnceLock::new();

/// Ranges registered by [`register_text`]: a fixed array, so that the
/// handler reads it without a lock (a range is written before the count
/// that publishes it).
const REGISTERED_MAX: usize = 64;
static REGISTERED: [(AtomicUsize, AtomicUsize); REGISTERED_MAX] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; REGISTERED_MAX];
static REGISTERED_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Declares `[start, start + len)` compiled code that may be preempted
/// asynchronously (code a compiler generated, loaded outside the
/// executable's symbol table: a JIT's buffer, a shared library). False
/// if the range is empty or wraps around, or if [`REGISTERED_MAX`] ranges
/// are registered already.
pub(crate) fn register_text(start: usize, len: usize) -> bool {
    let Some(end) = start.checked_add(len) else {
        return false;
    };
    if len == 0 {
        return false;
    }
    static LOCK: Mutex<()> = Mutex::new(());
    let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let n = REGISTERED_COUNT.load(Ordering::Acquire);
    if n == REGISTERED_MAX {
        return false;
    }
    REGISTERED[n].0.store(start, Ordering::Relaxed);
    REGISTERED[n].1.store(end, Ordering::Relaxed);
    REGISTERED_COUNT.store(n + 1, Ordering::Release);
    true
}

/// Whether `pc` is in compiled code (see the module docs). Lock-free and
/// allocation-free: called in the handler.
pub(crate) fn in_compiled_code(pc: usize) -> bool {
    let n = REGISTERED_COUNT.load(Ordering::Acquire);
    if REGISTERED[..n]
        .iter()
        .any(|(s, e)| (s.load(Ordering::Relaxed)..e.load(Ordering::Relaxed)).contains(&pc))
    {
        return true;
    }
    let Some(table) = TABLE.get() else {
        return false;
    };
    let i = table.partition_point(|&(start, _)| start <= pc);
    i > 0 && pc < table[i - 1].1
}

/// Whether the function `name` (a local symbol of source file `file`, if
/// known) is the runtime's, not compiled code.
///
/// Every Rust function is the runtime's, whatever its crate: Rust code
/// keeps state per thread (`thread_local!` in std and in crates, such as
/// a lock's "held by this thread" flag), which a goroutine moved to
/// another worker between two of its instructions would find wrong, and
/// the runtime links crates no list could name for good (and rustc's own
/// shims, `__rustc::__rdl_alloc`). Compiled code of the Go-like language
/// is C, assembly or LLVM output, with its own names.
fn is_runtime_symbol(name: &str, file: Option<&str>) -> bool {
    if file.is_some_and(|f| f == "gc.c" || f.ends_with("/gc.c")) {
        // bdwgc's one translation unit (defergc-sys builds extra/gc.c).
        return true;
    }
    // Rust's manglings (legacy `_ZN`, v0 `_R`) start with `_`, as do the
    // C library's start files and the compilers' helpers.
    name.starts_with('_')
        || name.starts_with("GC_")
        || name.starts_with("defergc_")
        || RUNTIME_UNMANGLED.contains(&name)
}

/// The runtime's functions whose names are not mangled: the coroutine
/// library's assembly (a goroutine's first instructions run in
/// `stack_init_trampoline` before it has a yielder to switch out with)
/// and Rust's unwinding personality.
const RUNTIME_UNMANGLED: [&str; 3] = [
    "stack_init_trampoline",
    "stack_call_trampoline",
    "rust_eh_personality",
];

/// The executable's compiled code, from its symbol table (empty if it
/// cannot be read).
fn compiled_code_table() -> Box<[(usize, usize)]> {
    let Some(bias) = executable_bias() else {
        return Box::new([]);
    };
    let Some(map) = Mapped::open("/proc/self/exe") else {
        return Box::new([]);
    };
    let mut ranges = compiled_ranges(map.bytes());
    for r in ranges.iter_mut() {
        *r = (r.0.wrapping_add(bias), r.1.wrapping_add(bias));
    }
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged.into_boxed_slice()
}

/// The function ranges of an ELF image that are compiled code (addresses
/// as linked). Local symbols follow the source file they come from (an
/// `STT_FILE` symbol): a file with a local `GC_*` or `defergc_*` function
/// is the runtime's whole (bdwgc's single translation unit, whose inner
/// functions are static, with static helpers of any name beside them).
fn compiled_ranges(image: &[u8]) -> Vec<(usize, usize)> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let Ok(file) = object::File::parse(image) else {
        return Vec::new();
    };
    // First pass: which source files (by their order) are the runtime's.
    let mut runtime_files: Vec<bool> = Vec::new();
    for sym in file.symbols() {
        match sym.kind() {
            SymbolKind::File => runtime_files.push(false),
            SymbolKind::Text if sym.is_local() => {
                let name = sym.name().unwrap_or("");
                if name.starts_with("GC_") || name.starts_with("defergc_") {
                    if let Some(last) = runtime_files.last_mut() {
                        *last = true;
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut files = 0usize;
    let mut source: Option<&str> = None;
    for sym in file.symbols() {
        match sym.kind() {
            SymbolKind::File => {
                files += 1;
                source = sym.name().ok();
            }
            SymbolKind::Text if sym.size() > 0 => {
                let Ok(name) = sym.name() else { continue };
                let local = sym.is_local();
                if local && files > 0 && runtime_files[files - 1] {
                    continue;
                }
                let file = if local { source } else { None };
                if !is_runtime_symbol(name, file) {
                    let start = sym.address() as usize;
                    out.push((start, start + sym.size() as usize));
                }
            }
            _ => {}
        }
    }
    out
}

/// The executable's load bias (what `dl_iterate_phdr` says for the first
/// object, the program itself).
fn executable_bias() -> Option<usize> {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our data, a
        // usize, for the time of the call.
        unsafe { *data.cast::<usize>() = (*info).dlpi_addr as usize };
        1
    }
    let mut bias = usize::MAX;
    // SAFETY: the callback stops at the first object and writes only its
    // data argument, a live local.
    unsafe { libc::dl_iterate_phdr(Some(first), (&mut bias as *mut usize).cast()) };
    (bias != usize::MAX).then_some(bias)
}

/// A file mapped read-only, unmapped on drop.
struct Mapped {
    at: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    fn open(path: &str) -> Option<Mapped> {
        let file = std::fs::File::open(path).ok()?;
        let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
        if len == 0 {
            return None;
        }
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh private read-only mapping of an open file; the
        // descriptor may close after mmap returns.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        (at != libc::MAP_FAILED).then_some(Mapped { at, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: len readable bytes, mapped until self drops.
        unsafe { std::slice::from_raw_parts(self.at.cast::<u8>(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in open, unused from here.
        unsafe { libc::munmap(self.at, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::{compiled_ranges, is_runtime_symbol, Mapped};

    #[test]
    fn the_runtime_its_dependencies_and_every_rust_function_are_never_compiled_code() {
        for name in [
            "_ZN7defergc2go5sched8gosched17h0123456789abcdefE",
            "_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
            "_ZN10corosensei9coroutine17h0123456789abcdefE",
            "_RNvCs1234_7defergc3foo",
            "_ZN72_$LT$alloc..boxed..Box$LT$T$C$A$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop17h1bc4adac370bb1a6E",
            // A crate no list names, and a program's own Rust: Rust code
            // keeps per-thread state a move between workers would break.
            "_ZN9once_cell4race8OnceBox3get17h0123456789abcdefE",
            "_ZN10go_preempt4spin17h0123456789abcdefE",
            // rustc's allocator shim (v0: `7___rustc` is `__rustc`).
            "_RNvCsfLfy6EI15iL_7___rustc12___rdl_alloc",
            "GC_malloc",
            "defergc_chan_send",
            "_start",
            "__libc_csu_init",
            // corosensei's assembly: a goroutine preempted there, before
            // its yielder is set, could not switch out.
            "stack_init_trampoline",
            "stack_call_trampoline",
            "rust_eh_personality",
        ] {
            assert!(is_runtime_symbol(name, None), "{name}");
        }
        assert!(is_runtime_symbol("push_roots", Some("gc.c")));
    }

    #[test]
    fn other_functions_of_the_executable_are_compiled_code() {
        for name in ["spin_on_flag", "main", "go_main"] {
            assert!(!is_runtime_symbol(name, None), "{name}");
        }
        assert!(!is_runtime_symbol("helper", Some("prog.c")));
    }

    /// On this test's own executable: no function rustc compiled (nor
    /// corosensei's trampolines, where a goroutine starts) lies in a
    /// compiled-code range (rustc's `__rdl_alloc` once did, and a
    /// goroutine preempted in it while the backtrace crate held its
    /// per-thread lock flag resumed on another worker, failing that
    /// crate's assertion or hanging on its lock).
    #[test]
    fn no_rust_function_of_a_real_executable_is_compiled_code() {
        use object::{Object, ObjectSymbol, SymbolKind};
        let map = Mapped::open("/proc/self/exe").expect("the test's executable maps");
        let ranges = compiled_ranges(map.bytes());
        let file = object::File::parse(map.bytes()).expect("the executable parses");
        let mut rust = 0;
        for sym in file.symbols() {
            let Ok(name) = sym.name() else { continue };
            if sym.kind() != SymbolKind::Text || sym.size() == 0 {
                continue;
            }
            let trampoline = ["stack_init_trampoline", "stack_call_trampoline"].contains(&name);
            if !(name.starts_with("_ZN") || name.starts_with("_R") || trampoline) {
                continue;
            }
            rust += 1;
            let at = sym.address() as usize;
            assert!(
                !ranges.iter().any(|&(s, e)| (s..e).contains(&at)),
                "{name} is classified as compiled code"
            );
        }
        assert!(rust > 1000, "only {rust} Rust functions found");
    }
}
