//! Asynchronous preemption (x86-64 Linux): a goroutine that loops in
//! compiled code without a call is made to yield by SIGURG, with every
//! register and the vector state restored exactly; a signal that lands in
//! libc, the runtime or the collector is refused; `asyncpreemptoff=1`
//! turns it off; a program's own SIGURG handler keeps running.
//!
//! Each case runs in a child process (`child::run_test`): a fresh
//! scheduler with its own `GOMAXPROCS` and `GODEBUG`, and a hang (a
//! spinner nothing preempts) fails the parent instead of hanging it. The
//! requests come from a plain thread through the test hook
//! (`async_preempt_hooks::signal_running`), where sysmon will send them.
//! The "compiled code" is assembly in this test binary: functions that
//! are neither the runtime's nor its dependencies', so the executable's
//! symbol table classifies them as preemptible.
#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

mod child;

use defergc::go::{self, async_preempt_hooks as hooks, Refusal};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const CHILD: &str = "DEFERGC_TEST_PREEMPT_CHILD";

// Compiled code without calls: spin loops and a register checker.
std::arch::global_asm!(
    // u64 preempt_spin_until(const u32 *flag): loads *flag until it is
    // non-zero; returns how many loads it made.
    ".globl preempt_spin_until",
    ".type preempt_spin_until,@function",
    "preempt_spin_until:",
    "xor eax, eax",
    "2:",
    "inc rax",
    "mov ecx, dword ptr [rdi]",
    "test ecx, ecx",
    "jz 2b",
    "ret",
    ".size preempt_spin_until, .-preempt_spin_until",
    // void *preempt_hold_spin(void *p, const u32 *flag): keeps p only in
    // r11 (rdi cleared) while it spins on *flag; returns it.
    ".globl preempt_hold_spin",
    ".type preempt_hold_spin,@function",
    "preempt_hold_spin:",
    "mov r11, rdi",
    "xor edi, edi",
    "2:",
    "mov ecx, dword ptr [rsi]",
    "test ecx, ecx",
    "jz 2b",
    "mov rax, r11",
    "xor r11d, r11d",
    "ret",
    ".size preempt_hold_spin, .-preempt_hold_spin",
    // u64 preempt_check_regs(u64 iterations): holds known values in
    // rbx, rcx, rdx, rsi, rdi, rbp, r8-r14, ymm0-ymm14, the direction
    // flag (set) and MXCSR (round down), checks every one of them each
    // iteration; returns 0, or the number of the first check that failed.
    // rax and ymm15 are the checks' scratch, r15 the counter.
    ".globl preempt_check_regs",
    ".type preempt_check_regs,@function",
    "preempt_check_regs:",
    "push rbx",
    "push rbp",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    "sub rsp, 8",
    "stmxcsr dword ptr [rsp]",
    "mov r15, rdi",
    "ldmxcsr dword ptr [rip + preempt_mxcsr]",
    "std",
    "mov rbx, qword ptr [rip + preempt_gprs + 0]",
    "mov rcx, qword ptr [rip + preempt_gprs + 8]",
    "mov rdx, qword ptr [rip + preempt_gprs + 16]",
    "mov rsi, qword ptr [rip + preempt_gprs + 24]",
    "mov rdi, qword ptr [rip + preempt_gprs + 32]",
    "mov rbp, qword ptr [rip + preempt_gprs + 40]",
    "mov r8, qword ptr [rip + preempt_gprs + 48]",
    "mov r9, qword ptr [rip + preempt_gprs + 56]",
    "mov r10, qword ptr [rip + preempt_gprs + 64]",
    "mov r11, qword ptr [rip + preempt_gprs + 72]",
    "mov r12, qword ptr [rip + preempt_gprs + 80]",
    "mov r13, qword ptr [rip + preempt_gprs + 88]",
    "mov r14, qword ptr [rip + preempt_gprs + 96]",
    ".irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14",
    "vmovdqu ymm\\n, ymmword ptr [rip + preempt_vecs + 32*\\n]",
    ".endr",
    "3:",
    "mov eax, 1",
    "cmp rbx, qword ptr [rip + preempt_gprs + 0]",
    "jne 9f",
    "inc eax",
    "cmp rcx, qword ptr [rip + preempt_gprs + 8]",
    "jne 9f",
    "inc eax",
    "cmp rdx, qword ptr [rip + preempt_gprs + 16]",
    "jne 9f",
    "inc eax",
    "cmp rsi, qword ptr [rip + preempt_gprs + 24]",
    "jne 9f",
    "inc eax",
    "cmp rdi, qword ptr [rip + preempt_gprs + 32]",
    "jne 9f",
    "inc eax",
    "cmp rbp, qword ptr [rip + preempt_gprs + 40]",
    "jne 9f",
    "inc eax",
    "cmp r8, qword ptr [rip + preempt_gprs + 48]",
    "jne 9f",
    "inc eax",
    "cmp r9, qword ptr [rip + preempt_gprs + 56]",
    "jne 9f",
    "inc eax",
    "cmp r10, qword ptr [rip + preempt_gprs + 64]",
    "jne 9f",
    "inc eax",
    "cmp r11, qword ptr [rip + preempt_gprs + 72]",
    "jne 9f",
    "inc eax",
    "cmp r12, qword ptr [rip + preempt_gprs + 80]",
    "jne 9f",
    "inc eax",
    "cmp r13, qword ptr [rip + preempt_gprs + 88]",
    "jne 9f",
    "inc eax",
    "cmp r14, qword ptr [rip + preempt_gprs + 96]",
    "jne 9f",
    // Checks 20 to 34: the vector registers, all 256 bits.
    ".irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14",
    "vpcmpeqb ymm15, ymm\\n, ymmword ptr [rip + preempt_vecs + 32*\\n]",
    "vpmovmskb eax, ymm15",
    "cmp eax, -1",
    "mov eax, 20 + \\n",
    "jne 9f",
    ".endr",
    // Check 40: the direction flag; 41: MXCSR.
    "pushfq",
    "pop rax",
    "test eax, 0x400",
    "mov eax, 40",
    "jz 9f",
    "sub rsp, 8",
    "stmxcsr dword ptr [rsp]",
    "mov eax, dword ptr [rsp]",
    "add rsp, 8",
    "cmp eax, dword ptr [rip + preempt_mxcsr]",
    "mov eax, 41",
    "jne 9f",
    "dec r15",
    "jnz 3b",
    "xor eax, eax",
    "9:",
    "cld",
    "vzeroupper",
    "ldmxcsr dword ptr [rsp]",
    "add rsp, 8",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbp",
    "pop rbx",
    "ret",
    ".size preempt_check_regs, .-preempt_check_regs",
    ".pushsection .rodata",
    ".p2align 5",
    "preempt_vecs:",
    ".irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14",
    ".irp b, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
    ".byte (\\n * 37 + \\b * 11 + 5) & 0xff",
    ".endr",
    ".endr",
    "preempt_gprs:",
    ".irp n, 1,2,3,4,5,6,7,8,9,10,11,12,13",
    ".quad 0x0123456789abcdef * \\n + 0x1111",
    ".endr",
    "preempt_mxcsr:",
    ".long 0x3f80",
    ".popsection",
);

extern "C" {
    fn preempt_spin_until(flag: *const u32) -> u64;
    fn preempt_hold_spin(p: usize, flag: *const u32) -> usize;
    fn preempt_check_regs(iterations: u64) -> u64;
}

/// A plain thread that requests preemption of every running goroutine,
/// every `pause`, until `stop`; returns how many signals it sent.
fn requester(stop: Arc<AtomicBool>, pause: Duration) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut sent = 0u64;
        while !stop.load(Ordering::SeqCst) {
            sent += hooks::signal_running() as u64;
            std::thread::sleep(pause);
        }
        sent
    })
}

/// Runs `test` in a child with `env` (and the child marker); its stdout,
/// after checking that it ended well and printed `expect`.
fn in_child(test: &str, env: &[(&str, &str)], expect: &str) -> String {
    let mut all = vec![(CHILD, "1")];
    all.extend_from_slice(env);
    let out = child::run_test(test, &all, Duration::from_secs(120))
        .unwrap_or_else(|| panic!("{test}: the child hung (killed)"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.contains(expect),
        "{test}: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// One worker: a goroutine spinning in a loop without calls is preempted,
/// so another goroutine runs, and it is the one that ends the spin.
/// Without preemption the spinner keeps the only worker: the child hangs
/// and is killed.
#[test]
fn a_spinning_goroutine_is_preempted_and_another_ends_its_spin() {
    if !is_child() {
        in_child(
            "a_spinning_goroutine_is_preempted_and_another_ends_its_spin",
            &[("GOMAXPROCS", "1")],
            "spin ok",
        );
        return;
    }
    assert!(hooks::enabled(), "asynchronous preemption is off");
    let stop = Arc::new(AtomicBool::new(false));
    let req = requester(stop.clone(), Duration::from_micros(200));
    go::run(|| {
        let flag = Arc::new(AtomicU32::new(0));
        let spinning = Arc::new(AtomicBool::new(false));
        let done = go::Chan::new(2);
        let (f, s, d) = (flag.clone(), spinning.clone(), done.clone());
        go::go(move || {
            s.store(true, Ordering::SeqCst);
            // SAFETY: the flag lives until the spin ends (this closure
            // holds it).
            let loads = unsafe { preempt_spin_until(f.as_ptr()) };
            d.send(loads);
        });
        let (f, s, d) = (flag.clone(), spinning.clone(), done.clone());
        go::go(move || {
            // Let the spinner start: from then on only a preemption lets
            // this goroutine run again.
            while !s.load(Ordering::SeqCst) {
                go::gosched();
            }
            f.store(1, Ordering::SeqCst);
            d.send(0u64);
        });
        let a = done.recv().unwrap();
        let b = done.recv().unwrap();
        assert!(a.max(b) > 0);
    });
    stop.store(true, Ordering::SeqCst);
    let sent = req.join().unwrap();
    let c = go::preempt_counts();
    assert!(c.preempted >= 1 && sent >= 1, "{c:?}");
    println!("spin ok: {c:?}");
}
