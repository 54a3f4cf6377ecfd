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
mod cprog;
mod seeded;

use defergc::defer;
use defergc::go::{self, async_preempt_hooks as hooks, Refusal};
use seeded::Rng;
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
    // void preempt_clobber_vectors(void): ymm0-15 all ones (caller-saved
    // by the ABI: what other code may leave in them).
    ".globl preempt_clobber_vectors",
    ".type preempt_clobber_vectors,@function",
    "preempt_clobber_vectors:",
    ".irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
    "vpcmpeqd ymm\\n, ymm\\n, ymm\\n",
    ".endr",
    "ret",
    ".size preempt_clobber_vectors, .-preempt_clobber_vectors",
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
    fn preempt_clobber_vectors();
}

/// A plain thread that requests preemption of every running goroutine,
/// every `pause`, until stopped.
struct Requester {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl Requester {
    fn start(pause: Duration) -> Requester {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut sent = 0u64;
            while !s.load(Ordering::SeqCst) {
                sent += hooks::signal_running() as u64;
                std::thread::sleep(pause);
            }
            sent
        });
        Requester { stop, thread }
    }

    /// Stops the thread; how many signals it sent.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap()
    }
}

/// A goroutine spinning in compiled code until another ends its spin:
/// the flag it spins on (0 until ended) and whether it has started.
#[derive(Clone, Default)]
struct Spin {
    flag: Arc<AtomicU32>,
    started: Arc<AtomicBool>,
}

impl Spin {
    /// The spinner's part: says it started, then loops without calls
    /// (`preempt_spin_until`) until the spin is ended; how many loads it
    /// made.
    fn run(&self) -> u64 {
        self.start();
        // SAFETY: the flag lives as long as `self`.
        unsafe { preempt_spin_until(self.flag.as_ptr()) }
    }

    /// Says the spin started (for a spinner that spins on [`Spin::flag`]
    /// in a loop of its own).
    fn start(&self) {
        self.started.store(true, Ordering::SeqCst);
    }

    fn started(&self) -> bool {
        self.started.load(Ordering::SeqCst)
    }

    /// The flag to spin on.
    fn flag(&self) -> &AtomicU32 {
        &self.flag
    }

    /// Waits (yielding to other goroutines) until the spin has started:
    /// on one worker, from then on only a preemption lets the caller run
    /// again.
    fn wait_started(&self) {
        while !self.started() {
            go::gosched();
        }
    }

    /// Ends the spin.
    fn end(&self) {
        self.flag.store(1, Ordering::SeqCst);
    }

    /// Starts a goroutine that runs `spinner`; the channel its result
    /// comes on.
    fn spawn<T: Send + 'static>(
        &self,
        spinner: impl FnOnce(&Spin) -> T + Send + 'static,
    ) -> go::Chan<T> {
        let done = go::Chan::new(1);
        let (s, d) = (self.clone(), done.clone());
        go::go(move || d.send(spinner(&s)));
        done
    }

    /// In a goroutine: starts a spinner that runs `spinner` and an ender
    /// that waits until the spin has started, runs `between` and ends the
    /// spin; returns the spinner's result once both are done.
    fn with_ender<T: Send + 'static>(
        &self,
        spinner: impl FnOnce(&Spin) -> T + Send + 'static,
        between: impl FnOnce() + Send + 'static,
    ) -> T {
        let result = self.spawn(spinner);
        let ended = go::Chan::new(1);
        let (s, e) = (self.clone(), ended.clone());
        go::go(move || {
            s.wait_started();
            between();
            s.end();
            e.send(());
        });
        let r = result.recv().unwrap();
        ended.recv().unwrap();
        r
    }
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
    let req = Requester::start(Duration::from_micros(200));
    go::run(|| {
        let loads = Spin::default().with_ender(Spin::run, || {});
        assert!(loads > 0);
    });
    let sent = req.stop();
    let c = go::preempt_counts();
    assert!(c.preempted >= 1 && sent >= 1, "{c:?}");
    println!("spin ok: {c:?}");
}

/// The same with no requester of the test's: sysmon sees the spinner run
/// its slice for 10 ms and asks for the signal itself.
#[test]
fn sysmon_alone_preempts_a_spinning_c_loop() {
    if !is_child() {
        in_child(
            "sysmon_alone_preempts_a_spinning_c_loop",
            &[("GOMAXPROCS", "1")],
            "spin ok",
        );
        return;
    }
    assert!(hooks::enabled(), "asynchronous preemption is off");
    go::run(|| {
        let loads = Spin::default().with_ender(Spin::run, || {});
        assert!(loads > 0);
    });
    let c = go::preempt_counts();
    assert!(c.preempted >= 1, "{c:?}");
    println!("spin ok: {c:?}");
}

/// One worker: a goroutine sleeps 1 ms twenty times while a spinner of
/// compiled code holds the worker. Each due timer that no processor is
/// free to run makes sysmon ask the spinner to yield once it has run
/// 1 ms (not 10): the timer rounds are counted, and every sleep returns.
/// Without the timer rounds the sleeps still end, through the 10 ms
/// time slice, but the count stays 0.
#[test]
fn a_due_timer_preempts_a_spinner_before_its_time_slice_ends() {
    if !is_child() {
        in_child(
            "a_due_timer_preempts_a_spinner_before_its_time_slice_ends",
            &[("GOMAXPROCS", "1")],
            "timer ok",
        );
        return;
    }
    assert!(hooks::enabled(), "asynchronous preemption is off");
    const SLEEPS: u64 = 20;
    go::run(|| {
        let spin = Spin::default();
        let done = spin.spawn(Spin::run);
        spin.wait_started();
        let mut slept = 0;
        for _ in 0..SLEEPS {
            go::sleep(Duration::from_millis(1));
            slept += 1;
        }
        spin.end();
        assert!(done.recv().unwrap() > 0, "the spinner never spun");
        assert_eq!(slept, SLEEPS);
    });
    let stats = go::sched_stats();
    assert!(stats.timer_preempt_requests >= 1, "{stats:?}");
    println!("timer ok: {stats:?}");
}

/// One worker: a deferred call that spins in compiled code is preempted,
/// once run at the function's return and once while a panic unwinds
/// through it (the deferred call then recovers the panic): another
/// goroutine runs meanwhile and ends each spin, and the recovery sees the
/// panic's value. Without preemption the spinner keeps the only worker
/// and the child is killed.
#[test]
fn a_deferred_call_is_preempted_at_a_return_and_during_a_panic() {
    if !is_child() {
        in_child(
            "a_deferred_call_is_preempted_at_a_return_and_during_a_panic",
            &[("GOMAXPROCS", "1")],
            "defer ok",
        );
        return;
    }
    assert!(hooks::enabled(), "asynchronous preemption is off");
    let before = go::preempt_counts().preempted;
    go::run(|| {
        for panicking in [false, true] {
            let spinner = move |s: &Spin| {
                defer::named(String::new(), |fr, out| {
                    fr.defer_with(move |dc| {
                        let loads = s.run();
                        assert!(loads > 0, "the deferred call never spun");
                        if let Some(v) = dc.recover() {
                            out.update(|r| *r = v.to_string());
                        }
                    });
                    if panicking {
                        defer::panic("unwinding");
                    }
                    "returned".to_string()
                })
            };
            let recovered = Spin::default().with_ender(spinner, || {});
            let want = if panicking { "unwinding" } else { "returned" };
            assert_eq!(recovered, want);
        }
    });
    let c = go::preempt_counts();
    assert!(c.preempted >= before + 2, "{c:?}");
    println!("defer ok: {c:?}");
}

/// Prints `line` and ends the process at once with status 0 (a spinner
/// that nothing preempts still holds a worker: no orderly exit).
fn exit_now(line: &str) -> ! {
    use std::io::Write;
    println!("{line}");
    std::io::stdout().flush().unwrap();
    // SAFETY: _exit ends the process; nothing runs after it.
    unsafe { libc::_exit(0) }
}

/// `GODEBUG=asyncpreemptoff=1`: requests are recorded but no signal is
/// sent, nothing is preempted, and the goroutine that would end the spin
/// never runs (the child leaves with the spinner still spinning).
#[test]
fn asyncpreemptoff_sends_no_signal_and_preempts_nothing() {
    if !is_child() {
        in_child(
            "asyncpreemptoff_sends_no_signal_and_preempts_nothing",
            &[
                ("GOMAXPROCS", "1"),
                ("GODEBUG", "gctrace=0,asyncpreemptoff=1"),
            ],
            "off ok",
        );
        return;
    }
    assert!(!hooks::enabled());
    let spin = Spin::default();
    let s = spin.clone();
    // The main goroutine waits for the spinner for good.
    std::thread::spawn(move || {
        go::run(move || {
            s.with_ender(Spin::run, || {});
        })
    });
    while !spin.started() {
        std::thread::yield_now();
    }
    let mut requests = 0;
    while requests < 500 {
        requests += hooks::signal_running();
        std::thread::sleep(Duration::from_micros(100));
    }
    let c = go::preempt_counts();
    assert_eq!((c.sent, c.preempted), (0, 0), "{c:?}");
    assert_eq!(
        spin.flag().load(Ordering::SeqCst),
        0,
        "the other goroutine ran"
    );
    exit_now(&format!("off ok: {requests} requests, {c:?}"));
}

/// Every general register, ymm0-14, the direction flag and MXCSR hold
/// known values across thousands of preemptions, checked at every
/// iteration of a loop without calls: zero mismatches, and the other
/// goroutine (one worker) ran in between.
#[test]
fn registers_and_vector_state_survive_thousands_of_preemptions() {
    if !is_child() {
        in_child(
            "registers_and_vector_state_survive_thousands_of_preemptions",
            &[("GOMAXPROCS", "1")],
            "registers ok",
        );
        return;
    }
    if !std::arch::is_x86_feature_detected!("avx2") {
        println!("registers ok: skipped, no AVX2");
        return;
    }
    assert!(hooks::enabled());
    const PREEMPTIONS: u64 = 3000;
    let req = Requester::start(Duration::from_micros(50));
    let other_runs = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(AtomicU64::new(0));
    let failed_check = Arc::new(AtomicU64::new(0));
    let (o, n, fc) = (other_runs.clone(), calls.clone(), failed_check.clone());
    go::run(move || {
        let done = go::Chan::new(2);
        let finished = Arc::new(AtomicBool::new(false));
        let (d, fin) = (done.clone(), finished.clone());
        go::go(move || {
            let mut failed = 0;
            while go::preempt_counts().preempted < PREEMPTIONS && failed == 0 {
                // SAFETY: a pure function of registers and its constants.
                failed = unsafe { preempt_check_regs(200_000) };
                n.fetch_add(1, Ordering::Relaxed);
            }
            fin.store(true, Ordering::SeqCst);
            d.send(failed);
        });
        let (d, fin) = (done.clone(), finished.clone());
        go::go(move || {
            while !fin.load(Ordering::SeqCst) {
                o.fetch_add(1, Ordering::Relaxed);
                // What the preempted checker keeps must not depend on
                // what runs between.
                // SAFETY: only clobbers caller-saved registers.
                unsafe { preempt_clobber_vectors() };
                go::gosched();
            }
            d.send(0);
        });
        let a = done.recv().unwrap();
        let b = done.recv().unwrap();
        fc.store(a | b, Ordering::SeqCst);
    });
    let failed = failed_check.load(Ordering::SeqCst);
    assert_eq!(failed, 0, "check {failed} failed (see preempt_check_regs)");
    req.stop();
    let c = go::preempt_counts();
    assert!(c.preempted >= PREEMPTIONS, "{c:?}");
    assert!(other_runs.load(Ordering::SeqCst) > 0);
    println!(
        "registers ok: {} calls, the other goroutine ran {} times, {c:?}",
        calls.load(Ordering::SeqCst),
        other_runs.load(Ordering::SeqCst)
    );
}

/// A checksummed list of `n` objects in the collected heap: each object
/// is eight words, the first the next object, the rest derived from `key`.
fn build_list(n: usize, key: u64) -> *mut u64 {
    let mut head: *mut u64 = std::ptr::null_mut();
    for i in 0..n {
        let obj = defergc::gc::alloc(64).as_ptr().cast::<u64>();
        // SAFETY: a fresh 64-byte object.
        unsafe {
            obj.write(head as u64);
            for w in 1..8 {
                obj.add(w)
                    .write(key ^ (i as u64).wrapping_mul(0x9E37_79B9) ^ w as u64);
            }
        }
        head = obj;
    }
    head
}

/// Whether the list at `head` is the one [`build_list`] built.
fn check_list(mut head: *const u64, n: usize, key: u64) -> bool {
    for i in (0..n).rev() {
        if head.is_null() {
            return false;
        }
        // SAFETY: an object of the list, kept alive by the caller.
        unsafe {
            for w in 1..8 {
                if head.add(w).read() != key ^ (i as u64).wrapping_mul(0x9E37_79B9) ^ w as u64 {
                    return false;
                }
            }
            head = head.read() as *const u64;
        }
    }
    head.is_null()
}

/// Allocates garbage and collects: what a collection freed is reused
/// (and overwritten) at once.
fn churn(rounds: usize) {
    for _ in 0..rounds {
        let _ = build_list(64, 0xAAAA_AAAA);
        defergc::gc::collect();
    }
}

/// Signals that land in libc (strlen), in the runtime (channel
/// operations) and in the collector (a goroutine collecting in a loop)
/// are refused, and counted by reason; what is preempted anyway (the
/// loops' own code) is safe: every object checked by checksum.
#[test]
fn signals_in_libc_the_runtime_and_the_collector_are_refused_or_safe() {
    if !is_child() {
        in_child(
            "signals_in_libc_the_runtime_and_the_collector_are_refused_or_safe",
            &[("GOMAXPROCS", "2")],
            "refusals ok",
        );
        return;
    }
    assert!(hooks::enabled());
    const SIGNALS: u64 = 3000;
    let req = Requester::start(Duration::from_micros(50));
    let bad = Arc::new(AtomicU64::new(0));
    let b = bad.clone();
    go::run(move || {
        let wg = Arc::new(go::WaitGroup::new());
        wg.add(4).unwrap();
        let finished = || go::preempt_counts().sent >= SIGNALS;
        {
            let wg = wg.clone();
            go::go(move || {
                let text = vec![b'x'; 1 << 20];
                let mut text = text;
                text.push(0);
                while !finished() {
                    // SAFETY: a NUL-terminated buffer.
                    let n = unsafe { libc::strlen(text.as_ptr().cast()) };
                    assert_eq!(n, 1 << 20);
                }
                wg.done().unwrap();
            });
        }
        let ping = go::Chan::<u64>::new(0);
        let pong = go::Chan::<u64>::new(0);
        {
            let (wg, ping, pong) = (wg.clone(), ping.clone(), pong.clone());
            go::go(move || {
                let mut i = 0;
                while !finished() {
                    ping.send(i);
                    assert_eq!(pong.recv(), Some(i + 1));
                    i += 1;
                }
                ping.close();
                wg.done().unwrap();
            });
        }
        {
            let wg = wg.clone();
            go::go(move || {
                while let Some(i) = ping.recv() {
                    pong.send(i + 1);
                }
                wg.done().unwrap();
            });
        }
        {
            let (wg, b) = (wg.clone(), b.clone());
            go::go(move || {
                let mut key = 1u64;
                while !finished() {
                    let list = build_list(100, key);
                    churn(2);
                    if !check_list(list, 100, key) {
                        b.fetch_add(1, Ordering::SeqCst);
                    }
                    key += 1;
                }
                wg.done().unwrap();
            });
        }
        wg.wait();
    });
    req.stop();
    let c = go::preempt_counts();
    assert_eq!(bad.load(Ordering::SeqCst), 0, "a list was corrupted");
    assert!(c.refused(Refusal::NotCompiledCode) > 0, "{c:?}");
    println!("refusals ok: {c:?}");
}

static PROGRAM_SIGURGS: AtomicU64 = AtomicU64::new(0);

extern "C" fn program_sigurg(_sig: libc::c_int) {
    PROGRAM_SIGURGS.fetch_add(1, Ordering::Relaxed);
}

/// A SIGURG handler the program installed before the runtime keeps being
/// called (for the runtime's signals too), and preemption still works.
#[test]
fn a_programs_own_sigurg_handler_keeps_running() {
    if !is_child() {
        in_child(
            "a_programs_own_sigurg_handler_keeps_running",
            &[("GOMAXPROCS", "1")],
            "own handler ok",
        );
        return;
    }
    // SAFETY: a plain handler that only counts.
    unsafe { libc::signal(libc::SIGURG, program_sigurg as *const () as usize) };
    assert!(hooks::enabled());
    // The program's own signal, sent to itself: its handler gets it.
    // SAFETY: raise has no preconditions.
    unsafe { libc::raise(libc::SIGURG) };
    assert_eq!(PROGRAM_SIGURGS.load(Ordering::SeqCst), 1);
    let req = Requester::start(Duration::from_micros(200));
    go::run(|| {
        Spin::default().with_ender(Spin::run, || {});
    });
    req.stop();
    let c = go::preempt_counts();
    let seen = PROGRAM_SIGURGS.load(Ordering::SeqCst);
    assert!(c.preempted >= 1, "{c:?}");
    assert!(
        seen > c.preempted,
        "{seen} SIGURGs seen by the program, {c:?}"
    );
    println!("own handler ok: the program saw {seen}, {c:?}");
}

/// While the worker's no-preemption count is raised, signals are refused
/// (counted) and the spinner is never preempted.
#[test]
fn a_no_preemption_section_is_never_preempted() {
    if !is_child() {
        in_child(
            "a_no_preemption_section_is_never_preempted",
            &[("GOMAXPROCS", "1")],
            "no preemption ok",
        );
        return;
    }
    assert!(hooks::enabled());
    let req = Requester::start(Duration::from_micros(100));
    let flag = Arc::new(AtomicU32::new(0));
    let f = flag.clone();
    let releaser = std::thread::spawn(move || {
        while go::preempt_counts().refused(Refusal::NoPreempt) < 50 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let preempted = go::preempt_counts().preempted;
        f.store(1, Ordering::SeqCst);
        preempted
    });
    go::run(move || {
        // SAFETY: the flag lives until the spin ends.
        hooks::without_preemption(|| unsafe { preempt_spin_until(flag.as_ptr()) });
    });
    req.stop();
    let preempted = releaser.join().unwrap();
    assert_eq!(preempted, 0);
    println!("no preemption ok: {:?}", go::preempt_counts());
}

/// The only reference to a collected object lives in a register of a
/// goroutine that is preempted again and again while another goroutine
/// collects and reuses freed memory (one worker): the object survives,
/// its checksum intact (bdwgc scans the saved registers with the
/// goroutine's stack).
#[test]
fn an_object_held_only_in_a_register_survives_collections_while_preempted() {
    if !is_child() {
        in_child(
            "an_object_held_only_in_a_register_survives_collections_while_preempted",
            &[("GOMAXPROCS", "1")],
            "held ok",
        );
        return;
    }
    assert!(hooks::enabled());
    let req = Requester::start(Duration::from_micros(100));
    let collections = Arc::new(AtomicU64::new(0));
    let cs = collections.clone();
    go::run(move || {
        let holder = |s: &Spin| {
            s.start();
            let list = build_list(50, 0x5EED);
            // SAFETY: the flag lives until the spin ends; the list is
            // handed back.
            let list = unsafe { preempt_hold_spin(list as usize, s.flag().as_ptr()) };
            check_list(list as *const u64, 50, 0x5EED)
        };
        // Each round runs while the holder is preempted.
        let churner = move || {
            while go::preempt_counts().preempted < 100 {
                churn(1);
                cs.fetch_add(1, Ordering::SeqCst);
                go::gosched();
            }
        };
        let intact = Spin::default().with_ender(holder, churner);
        assert!(intact, "the list was corrupted");
    });
    req.stop();
    println!(
        "held ok: {} collections, {:?}",
        collections.load(Ordering::SeqCst),
        go::preempt_counts()
    );
}

/// Precise collector: a goroutine spinning in compiled code with the only
/// handle of an object in a register. Full cycles complete (the collector
/// does not wait forever: each preemption acknowledges its round) and
/// the object survives them (the preempted goroutine's registers and
/// stack are in its root memory).
#[cfg(feature = "precise")]
#[test]
fn precise_cycles_complete_and_keep_what_a_spinning_goroutine_holds() {
    if !is_child() {
        in_child(
            "precise_cycles_complete_and_keep_what_a_spinning_goroutine_holds",
            &[("GOMAXPROCS", "2")],
            "precise ok",
        );
        return;
    }
    use defergc::precise::{self, Handle};
    assert!(hooks::enabled());
    const VALUE: u64 = 0x0123_4567_89AB;
    let req = Requester::start(Duration::from_micros(100));
    go::run(move || {
        let spin = Spin::default();
        let done = spin.spawn(|s| {
            let t = precise::register_bytes_type().unwrap();
            let h = precise::alloc_array(t, 8).unwrap();
            precise::write_u64(h, 0, VALUE).unwrap();
            s.start();
            // SAFETY: the flag lives until the spin ends.
            let raw = unsafe { preempt_hold_spin(h.to_raw() as usize, s.flag().as_ptr()) };
            let h = Handle::from_raw(raw as u64).unwrap();
            precise::read_u64(h, 0).ok()
        });
        spin.wait_started();
        for _ in 0..5 {
            // Garbage, so that a lost object's cell is reused.
            let t = precise::register_bytes_type().unwrap();
            for _ in 0..1000 {
                let _ = precise::alloc_array(t, 8).unwrap();
            }
            precise::collect().unwrap();
        }
        spin.end();
        assert_eq!(
            done.recv().unwrap(),
            Some(VALUE),
            "the held object was lost"
        );
    });
    req.stop();
    println!("precise ok: {:?}", go::preempt_counts());
}

const SEED: &str = "DEFERGC_PREEMPT_SEED";

/// A precise object holding `key` (its raw handle: kept by the caller
/// outside every shadow stack).
#[cfg(feature = "precise")]
fn precise_object(key: u64) -> u64 {
    use defergc::precise;
    let t = precise::register_bytes_type().unwrap();
    let h = precise::alloc_array(t, 8).unwrap();
    precise::write_u64(h, 0, key).unwrap();
    h.to_raw()
}

/// Whether the precise object `raw` is alive and holds `key`.
#[cfg(feature = "precise")]
fn precise_object_is(raw: u64, key: u64) -> bool {
    use defergc::precise::{self, Handle};
    Handle::from_raw(raw)
        .ok()
        .and_then(|h| precise::read_u64(h, 0).ok())
        == Some(key)
}

/// Seeded randomized stress: a random number of workers, register
/// checkers, goroutines that build checksummed lists (and, under the
/// precise collector, an object whose handle only their machine stack
/// holds) and hold them across preemptible loops, channel ping-pong pairs
/// and collectors (bdwgc's, and forced precise cycles), preempted
/// at random intervals until thousands of preemptions happened: no
/// register mismatch, no corrupted list, no lost channel value. The seed
/// is printed (set `DEFERGC_PREEMPT_SEED` to replay one).
#[test]
fn seeded_stress_preempts_a_random_mix_and_loses_nothing() {
    if !is_child() {
        let seed = seeded::seed(SEED);
        let procs = (1 + seed % 4).to_string();
        println!("seed {seed} (GOMAXPROCS={procs})");
        let out = in_child(
            "seeded_stress_preempts_a_random_mix_and_loses_nothing",
            &[
                ("GOMAXPROCS", procs.as_str()),
                (SEED, seed.to_string().as_str()),
            ],
            "stress ok",
        );
        println!(
            "{}",
            out.lines().find(|l| l.contains("stress ok")).unwrap_or("")
        );
        return;
    }
    let seed: u64 = std::env::var(SEED).unwrap().parse().unwrap();
    println!("seed {seed}");
    assert!(hooks::enabled());
    const TARGET: u64 = 2000;
    let avx2 = std::arch::is_x86_feature_detected!("avx2");
    let mut rng = Rng(seed);
    let stop = Arc::new(AtomicBool::new(false));
    let req = {
        let (stop, mut rng) = (stop.clone(), Rng(seed ^ 0x5555));
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                hooks::signal_running();
                std::thread::sleep(Duration::from_micros(20 + rng.below(300)));
            }
        })
    };
    let failures = Arc::new(AtomicU64::new(0));
    let checked = Arc::new(AtomicU64::new(0));
    let (checkers, listers, pairs, collectors) = (
        1 + rng.below(4),
        1 + rng.below(4),
        rng.below(4),
        // The precise build always forces cycles.
        rng.below(3) + u64::from(cfg!(feature = "precise")),
    );
    println!("{checkers} checkers, {listers} listers, {pairs} pairs, {collectors} collectors");
    let (f, c) = (failures.clone(), checked.clone());
    go::run(move || {
        let finished = || go::preempt_counts().preempted >= TARGET;
        let wg = Arc::new(go::WaitGroup::new());
        wg.add((checkers + listers + 2 * pairs + collectors) as i32)
            .unwrap();
        for i in 0..checkers {
            let (wg, f, c) = (wg.clone(), f.clone(), c.clone());
            let mut rng = Rng(seed.wrapping_add(i + 1));
            go::go(move || {
                while !finished() {
                    let r = if avx2 {
                        // SAFETY: a pure function of registers and constants.
                        unsafe { preempt_check_regs(1000 + rng.below(100_000)) }
                    } else {
                        0
                    };
                    if r != 0 {
                        f.fetch_add(1, Ordering::SeqCst);
                    }
                    c.fetch_add(1, Ordering::Relaxed);
                    if rng.below(4) == 0 {
                        go::gosched();
                    }
                }
                wg.done().unwrap();
            });
        }
        for i in 0..listers {
            let (wg, f, c) = (wg.clone(), f.clone(), c.clone());
            let mut rng = Rng(seed.wrapping_mul(i + 3) | 1);
            go::go(move || {
                while !finished() {
                    let (n, key) = (1 + rng.below(200) as usize, rng.next());
                    let list = build_list(n, key);
                    // Under the precise collector, a handle kept only on
                    // this goroutine's machine stack across preemptions.
                    #[cfg(feature = "precise")]
                    let held = precise_object(key);
                    let spins = if avx2 { 1000 + rng.below(50_000) } else { 0 };
                    // SAFETY: as above; the list lives on this stack.
                    if spins != 0 && unsafe { preempt_check_regs(spins) } != 0 {
                        f.fetch_add(1, Ordering::SeqCst);
                    }
                    if !check_list(std::hint::black_box(list), n, key) {
                        f.fetch_add(1, Ordering::SeqCst);
                    }
                    #[cfg(feature = "precise")]
                    if !precise_object_is(std::hint::black_box(held), key) {
                        f.fetch_add(1, Ordering::SeqCst);
                    }
                    c.fetch_add(1, Ordering::Relaxed);
                }
                wg.done().unwrap();
            });
        }
        for _ in 0..pairs {
            let ping = go::Chan::<u64>::new(rng.below(3) as usize);
            let pong = go::Chan::<u64>::new(rng.below(3) as usize);
            let (wg1, f1, p1, q1) = (wg.clone(), f.clone(), ping.clone(), pong.clone());
            go::go(move || {
                let mut i = 0;
                while !finished() {
                    // A pair handing over through runnext would keep the
                    // processor from its queue for good (a scheduler
                    // matter, not preemption's: the handover rarely runs
                    // compiled code to preempt).
                    if i % 16 == 0 {
                        go::gosched();
                    }
                    p1.send(i);
                    if q1.recv() != Some(i.wrapping_mul(3)) {
                        f1.fetch_add(1, Ordering::SeqCst);
                    }
                    i += 1;
                }
                p1.close();
                wg1.done().unwrap();
            });
            let wg2 = wg.clone();
            go::go(move || {
                while let Some(i) = ping.recv() {
                    pong.send(i.wrapping_mul(3));
                }
                wg2.done().unwrap();
            });
        }
        for _ in 0..collectors {
            let wg = wg.clone();
            go::go(move || {
                while !finished() {
                    churn(1);
                    #[cfg(feature = "precise")]
                    {
                        let _ = precise_object(0);
                        defergc::precise::collect().unwrap();
                    }
                    go::gosched();
                }
                wg.done().unwrap();
            });
        }
        wg.wait();
    });
    stop.store(true, Ordering::SeqCst);
    req.join().unwrap();
    let counts = go::preempt_counts();
    assert_eq!(
        failures.load(Ordering::SeqCst),
        0,
        "seed {seed}: {counts:?}"
    );
    assert!(counts.preempted >= TARGET, "seed {seed}: {counts:?}");
    println!(
        "stress ok: seed {seed}, {} checks, {counts:?}",
        checked.load(Ordering::SeqCst)
    );
}

/// Builds tests/c/preempt_spin.c into a shared library and loads it;
/// returns `c_spin_until` and the library's executable ranges.
fn load_c_spinner() -> (extern "C" fn(*const AtomicU32) -> u64, Vec<(usize, usize)>) {
    let so = cprog::out_dir("preempt").join("libpreempt_spin.so");
    let out = cprog::cc()
        .args(["-O2", "-shared", "-fPIC", "-Wall", "-Werror", "-o"])
        .arg(&so)
        .arg(cprog::root().join("tests/c/preempt_spin.c"))
        .output()
        .unwrap();
    cprog::check_compiled(out, "preempt_spin.c");
    let path = std::ffi::CString::new(so.to_str().unwrap()).unwrap();
    // SAFETY: a library we just built, with no initialisers.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW) };
    assert!(!lib.is_null(), "dlopen failed");
    // SAFETY: the symbol the C file defines.
    let f = unsafe { libc::dlsym(lib, c"c_spin_until".as_ptr()) };
    assert!(!f.is_null());
    // SAFETY: c_spin_until's C signature.
    let f: extern "C" fn(*const AtomicU32) -> u64 = unsafe { std::mem::transmute(f) };

    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr's info for this call; data is our Vec.
        unsafe {
            let info = &*info;
            let name = std::ffi::CStr::from_ptr(info.dlpi_name).to_string_lossy();
            if name.ends_with("libpreempt_spin.so") {
                let ranges = &mut *data.cast::<Vec<(usize, usize)>>();
                for i in 0..info.dlpi_phnum as usize {
                    let ph = &*info.dlpi_phdr.add(i);
                    if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 {
                        let start = info.dlpi_addr as usize + ph.p_vaddr as usize;
                        ranges.push((start, ph.p_memsz as usize));
                    }
                }
            }
        }
        0
    }
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    // SAFETY: the callback writes only the Vec it is given.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut ranges as *mut Vec<_>).cast()) };
    assert!(!ranges.is_empty());
    (f, ranges)
}

/// A C loop `while (!*flag)` without calls, in a shared library: not
/// compiled code for the runtime until the program registers its range
/// (`go::preempt_text`, C's `defergc_preempt_text`): until then every
/// signal is refused and the spinner keeps the only worker; once
/// registered it is preempted and the goroutine that ends its spin runs.
#[test]
fn a_c_loop_in_a_shared_library_is_preempted_once_its_code_is_registered() {
    if !is_child() {
        in_child(
            "a_c_loop_in_a_shared_library_is_preempted_once_its_code_is_registered",
            &[("GOMAXPROCS", "1")],
            "c spin ok",
        );
        return;
    }
    assert!(hooks::enabled());
    let (spin, ranges) = load_c_spinner();
    let req = Requester::start(Duration::from_micros(100));
    let before = Arc::new(AtomicU64::new(u64::MAX));
    let b = before.clone();
    let registrar = std::thread::spawn(move || {
        while go::preempt_counts().refused(Refusal::NotCompiledCode) < 50 {
            std::thread::sleep(Duration::from_millis(1));
        }
        b.store(go::preempt_counts().preempted, Ordering::SeqCst);
        for (start, len) in ranges {
            assert!(go::preempt_text(start, len));
        }
    });
    go::run(move || {
        let spinner = move |s: &Spin| {
            s.start();
            spin(s.flag())
        };
        Spin::default().with_ender(spinner, || {});
    });
    req.stop();
    registrar.join().unwrap();
    let c = go::preempt_counts();
    assert_eq!(
        before.load(Ordering::SeqCst),
        0,
        "preempted before registration"
    );
    assert!(c.preempted >= 1, "{c:?}");
    println!("c spin ok: {c:?}");
}

#[inline(never)]
fn a_function_of_the_test_program(x: u64) -> u64 {
    std::hint::black_box(x).wrapping_mul(3)
}

/// The table of compiled code: the test program's assembly functions are
/// compiled code; its Rust functions (Rust keeps per-thread state), the
/// runtime's, its C ABI's, the standard library's and libc's are not.
#[test]
fn the_code_table_tells_compiled_code_from_the_runtime_and_libc() {
    assert_eq!(a_function_of_the_test_program(2), 6);
    let compiled = [
        preempt_spin_until as *const () as usize,
        preempt_check_regs as *const () as usize,
    ];
    let runtime = [
        a_function_of_the_test_program as *const () as usize,
        defergc::gc::collect as *const () as usize,
        defergc::ffi::defergc_gosched as *const () as usize,
        go::gosched as *const () as usize,
        std::thread::yield_now as *const () as usize,
        libc::strlen as *const () as usize,
        libc::malloc as *const () as usize,
    ];
    for pc in compiled {
        assert!(hooks::is_compiled_code(pc + 1), "{pc:#x}");
    }
    for pc in runtime {
        assert!(!hooks::is_compiled_code(pc + 1), "{pc:#x}");
    }
}
