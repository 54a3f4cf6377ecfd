//! The interrupted context of a signal: what the kernel said (signal,
//! code, fault address) and the interrupted registers (pc, sp), read on
//! x86-64 and aarch64 Linux (elsewhere pc and sp read as 0); and the
//! two redirects, which make the interrupted thread call a function when
//! the handler returns: one that never returns to the interrupted code
//! ([`Interrupted::redirect`], for faults), and one that does
//! ([`Interrupted::redirect_call`], for preemption: the interrupted
//! instruction then runs as if nothing had happened).

use std::ffi::c_void;

/// A signal being handled: the handler's three arguments, valid until the
/// handler returns.
pub(crate) struct Interrupted {
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut c_void,
}

/// How many registers [`Interrupted::registers`] gives.
pub(crate) const REGISTERS: usize = 21;

/// The names of [`Interrupted::registers`]' values, as Go's `dumpregs`
/// prints them on x86-64.
pub(crate) const REGISTER_NAMES: [&str; REGISTERS] = [
    "rax", "rbx", "rcx", "rdx", "rdi", "rsi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip", "rflags", "cs", "fs", "gs",
];

/// A function the interrupted thread is made to call by [`Interrupted::redirect`]: the
/// four words given, then the interrupted stack pointer. It never returns
/// to the interrupted code.
pub(crate) type Target = extern "C-unwind" fn(usize, usize, usize, usize, usize) -> !;

impl Interrupted {
    /// # Safety
    /// The arguments are those the kernel passed to an `SA_SIGINFO`
    /// handler that is still running.
    pub(crate) unsafe fn new(
        sig: libc::c_int,
        info: *mut libc::siginfo_t,
        ctx: *mut c_void,
    ) -> Interrupted {
        Interrupted { sig, info, ctx }
    }

    /// The signal.
    pub(crate) fn sig(&self) -> libc::c_int {
        self.sig
    }

    /// `si_code`: positive when the kernel raised the signal for an
    /// instruction (`SI_USER` and `SI_TKILL`, from kill and tgkill, are
    /// not).
    pub(crate) fn code(&self) -> libc::c_int {
        // SAFETY: info is valid while the handler runs (Interrupted::new).
        unsafe { (*self.info).si_code }
    }

    /// Whether the kernel raised the signal for an instruction.
    pub(crate) fn raised_by_kernel(&self) -> bool {
        self.code() > 0
    }

    /// The fault address (`si_addr`).
    pub(crate) fn addr(&self) -> usize {
        // SAFETY: as in code.
        unsafe { (*self.info).si_addr() as usize }
    }

    /// The interrupted general registers, as [`REGISTER_NAMES`] lists
    /// them (Go's `dumpregs` order on x86-64 Linux); `None` elsewhere.
    /// Async-signal-safe.
    pub(crate) fn registers(&self) -> Option<[u64; REGISTERS]> {
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        {
            let uc = self.ctx.cast::<libc::ucontext_t>();
            // SAFETY: ctx is the interrupted ucontext (Interrupted::new).
            let gregs = unsafe { &(*uc).uc_mcontext.gregs };
            let r = |i: libc::c_int| gregs[i as usize] as u64;
            // cs, gs and fs are 16-bit fields packed in one word, in
            // that order.
            let segments = r(libc::REG_CSGSFS);
            Some([
                r(libc::REG_RAX),
                r(libc::REG_RBX),
                r(libc::REG_RCX),
                r(libc::REG_RDX),
                r(libc::REG_RDI),
                r(libc::REG_RSI),
                r(libc::REG_RBP),
                r(libc::REG_RSP),
                r(libc::REG_R8),
                r(libc::REG_R9),
                r(libc::REG_R10),
                r(libc::REG_R11),
                r(libc::REG_R12),
                r(libc::REG_R13),
                r(libc::REG_R14),
                r(libc::REG_R15),
                r(libc::REG_RIP),
                r(libc::REG_EFL),
                segments & 0xffff,
                (segments >> 32) & 0xffff,
                (segments >> 16) & 0xffff,
            ])
        }
        #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
        {
            None
        }
    }

    /// The interrupted program counter (0 where unknown).
    pub(crate) fn pc(&self) -> usize {
        let uc = self.ctx.cast::<libc::ucontext_t>();
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        {
            // SAFETY: ctx is the interrupted ucontext (Interrupted::new).
            unsafe { (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] as usize }
        }
        #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
        {
            // SAFETY: as above.
            unsafe { (*uc).uc_mcontext.pc as usize }
        }
        #[cfg(not(all(
            any(target_arch = "x86_64", target_arch = "aarch64"),
            target_os = "linux"
        )))]
        {
            let _ = uc;
            0
        }
    }

    /// Whether the signal interrupted a blocking system call: the kernel
    /// leaves the pc on the `syscall` instruction to restart it, or just
    /// after it with `-EINTR` in `rax`. A thread asleep in the kernel (a
    /// futex, a poll) is interrupted so; a thread running its own code
    /// stops there almost never. The two bytes of code are read with
    /// `process_vm_readv`, which fails on memory that cannot be read (an
    /// execute-only page) instead of faulting. Async-signal-safe (two
    /// system calls). False where unknown.
    pub(crate) fn in_system_call(&self) -> bool {
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        {
            const SYSCALL: [u8; 2] = [0x0f, 0x05];
            let pc = self.pc();
            if pc < 2 {
                return false;
            }
            let uc = self.ctx.cast::<libc::ucontext_t>();
            // SAFETY: ctx is the interrupted ucontext (Interrupted::new).
            let rax = unsafe { (*uc).uc_mcontext.gregs[libc::REG_RAX as usize] };
            let interrupted = rax == -i64::from(libc::EINTR);
            // The bytes before the pc and at it.
            let mut code = [0u8; 4];
            let local = libc::iovec {
                iov_base: code.as_mut_ptr().cast(),
                iov_len: code.len(),
            };
            let remote = libc::iovec {
                iov_base: (pc - 2) as *mut libc::c_void,
                iov_len: code.len(),
            };
            // SAFETY: `local` is this frame's buffer; the kernel checks
            // `remote` and reports what it could not read.
            let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
            let restarting = n == 4 && code[2..4] == SYSCALL;
            let returned = n >= 2 && interrupted && code[0..2] == SYSCALL;
            restarting || returned
        }
        #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
        {
            false
        }
    }

    /// The kernel's siginfo, for fields this type does not name.
    pub(crate) fn info(&self) -> *const libc::siginfo_t {
        self.info
    }

    /// The interrupted frame pointer (`rbp`, `x29`; 0 where unknown).
    pub(crate) fn fp(&self) -> usize {
        let uc = self.ctx.cast::<libc::ucontext_t>();
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        {
            // SAFETY: ctx is the interrupted ucontext (Interrupted::new).
            unsafe { (*uc).uc_mcontext.gregs[libc::REG_RBP as usize] as usize }
        }
        #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
        {
            // SAFETY: as above.
            unsafe { (*uc).uc_mcontext.regs[29] as usize }
        }
        #[cfg(not(all(
            any(target_arch = "x86_64", target_arch = "aarch64"),
            target_os = "linux"
        )))]
        {
            let _ = uc;
            0
        }
    }

    /// The interrupted stack pointer (0 where unknown).
    pub(crate) fn sp(&self) -> usize {
        let uc = self.ctx.cast::<libc::ucontext_t>();
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        {
            // SAFETY: ctx is the interrupted ucontext (Interrupted::new).
            unsafe { (*uc).uc_mcontext.gregs[libc::REG_RSP as usize] as usize }
        }
        #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
        {
            // SAFETY: as above.
            unsafe { (*uc).uc_mcontext.sp as usize }
        }
        #[cfg(not(all(
            any(target_arch = "x86_64", target_arch = "aarch64"),
            target_os = "linux"
        )))]
        {
            let _ = uc;
            0
        }
    }

    /// Makes the interrupted thread, when the handler returns, call
    /// `target(args[0], args[1], args[2], args[3], sp)` on its own stack,
    /// out of signal context (the kernel restores the signal mask), as if
    /// the interrupted instruction at `pc` had called it: the return
    /// address is `pc + 1` (unwinders look up the address before a return
    /// address, so the frames below unwind and symbolise from `pc`), the
    /// stack pointer just below the interrupted one, `sp` the interrupted
    /// stack pointer. The target never returns there. False where this
    /// target cannot redirect (x86-64 Linux only); then nothing changed.
    pub(crate) fn redirect(&mut self, target: Target, args: [usize; 4]) -> bool {
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        {
            // SAFETY: ctx is the interrupted ucontext (Interrupted::new),
            // ours to change until the handler returns.
            let gregs = unsafe { &mut (*self.ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
            let pc = gregs[libc::REG_RIP as usize] as usize;
            let ret = gregs[libc::REG_RSP as usize] as usize - 8;
            // SAFETY: the word below the interrupted stack pointer (in its
            // red zone, which the interrupted function never gets back to:
            // the target does not return).
            unsafe { (ret as *mut usize).write(pc + 1) };
            gregs[libc::REG_RSP as usize] = ret as i64;
            gregs[libc::REG_RIP as usize] = call_target as *const () as usize as i64;
            gregs[libc::REG_R11 as usize] = target as usize as i64;
            gregs[libc::REG_RDI as usize] = args[0] as i64;
            gregs[libc::REG_RSI as usize] = args[1] as i64;
            gregs[libc::REG_RDX as usize] = args[2] as i64;
            gregs[libc::REG_RCX as usize] = args[3] as i64;
            true
        }
        #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
        {
            let _ = (target, args);
            false
        }
    }
}

/// Bytes below the stack pointer that x86-64 code may use without moving
/// it (the System V ABI's red zone): a redirect that returns skips them.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub(crate) const X86_64_RED_ZONE: usize = 128;

impl Interrupted {
    /// Makes the interrupted thread, when the handler returns, call
    /// `entry` as if the interrupted instruction at `pc` had called it and
    /// `entry` will return there: the stack pointer moves below the
    /// interrupted one's red zone ([`X86_64_RED_ZONE`] bytes, which the
    /// interrupted function may be using), and `pc` itself (not `pc + 1`:
    /// the instruction has not run) is pushed as the return address. Every
    /// other register is left as it was interrupted, so `entry` must save
    /// and restore all of them, and return with `ret 128` (popping the
    /// return address and the skipped red zone), which leaves the stack
    /// pointer exactly as it was interrupted. The caller checked that the
    /// stack has room for `entry`'s frame below the red zone. False where
    /// this target cannot redirect (x86-64 Linux only); then nothing
    /// changed.
    pub(crate) fn redirect_call(&mut self, entry: usize) -> bool {
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        {
            // SAFETY: ctx is the interrupted ucontext (Interrupted::new),
            // ours to change until the handler returns.
            let gregs = unsafe { &mut (*self.ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
            let pc = gregs[libc::REG_RIP as usize] as usize;
            let ret = gregs[libc::REG_RSP as usize] as usize - X86_64_RED_ZONE - 8;
            // SAFETY: the word below the interrupted red zone, on the
            // interrupted stack, which the caller checked has room; nothing
            // of the interrupted code lives there.
            unsafe { (ret as *mut usize).write(pc) };
            gregs[libc::REG_RSP as usize] = ret as i64;
            gregs[libc::REG_RIP as usize] = entry as i64;
            true
        }
        #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
        {
            let _ = entry;
            false
        }
    }
}

/// Where a redirected thread resumes: called, as it were, by the
/// interrupted instruction, with the target in `r11` and its first four
/// arguments in place. It keeps the interrupted frame pointer as a normal
/// frame does (with unwind information, so the frames below unwind as
/// usual), aligns the stack and calls the target with the interrupted
/// stack pointer as the fifth argument.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[unsafe(naked)]
unsafe extern "C-unwind" fn call_target() -> ! {
    core::arch::naked_asm!(
        ".cfi_startproc",
        "push rbp",
        ".cfi_def_cfa_offset 16",
        ".cfi_offset rbp, -16",
        "mov rbp, rsp",
        ".cfi_def_cfa_register rbp",
        "lea r8, [rbp + 16]",
        "and rsp, -16",
        "call r11",
        "ud2",
        ".cfi_endproc",
    )
}
