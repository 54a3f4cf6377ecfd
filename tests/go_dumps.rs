//! Goroutine dumps as Go prints them (tests/go/dumps has Go's own output
//! for a sample program): SIGQUIT, the deadlock report, GOTRACEBACK=all,
//! runtime.Stack, `created by`, and the goroutine profile.
//!
//! Each program runs as a child process: a test of this binary run alone
//! (`DUMPS_CASE` says which), its standard error in a file (a dump of
//! 1,000 goroutines does not fit a pipe read after the child ends).

mod seeded;
mod skip;

use defergc::go;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The child's status and standard error.
fn child(case: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let dir = std::env::temp_dir().join(format!("defergc-dumps-{}-{case}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err_path = dir.join(format!("{case}.stderr"));
    let err = std::fs::File::create(&err_path).unwrap();
    // SIGQUIT's action before the runtime's: the default, or an ignore
    // when asked (a shell starts background commands with it ignored).
    let quit = if env.iter().any(|(k, _)| *k == "DUMPS_QUIT_IGNORED") {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    // SAFETY: signal(2) is async-signal-safe, as the code between fork
    // and exec must be.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGQUIT, quit);
            Ok(())
        })
    };
    let mut c = cmd
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env("DUMPS_CASE", case)
        .env("RUST_BACKTRACE", "0")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    // A hang fails the test instead of hanging it.
    let until = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = c.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = c.kill();
            let _ = c.wait();
            panic!("{case}: the child hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(&err_path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (status.code(), text)
}

/// Where each parked goroutine of the tests waits: a dump names it.
#[inline(never)]
fn parked_in_dump_test(c: go::Chan<u64>) {
    let _ = std::hint::black_box(c.recv());
}

/// Starts `n` goroutines parked in [`parked_in_dump_test`] on `c`: the
/// `created by` of each names this function.
#[inline(never)]
fn spawn_parked_goroutines(n: usize, c: &go::Chan<u64>) {
    for _ in 0..n {
        let c = c.clone();
        go::go(move || parked_in_dump_test(c));
    }
}

/// Waits until `n` goroutines are parked in a channel receive, by the
/// dump itself (runtime.Stack(all)): counts, not time.
fn wait_parked(n: usize) {
    loop {
        let text = go::stack(true);
        if text.matches("[chan receive]:\n").count() >= n {
            return;
        }
        go::sleep(Duration::from_millis(5));
    }
}

/// The sections of a dump: (header, the lines under it). A section ends
/// at a blank line (or at text that is no section's: a panic's message
/// after the report).
fn sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if line.starts_with("goroutine ") && line.ends_with("]:") {
            out.push((line.to_string(), Vec::new()));
            open = true;
        } else if line.is_empty() {
            open = false;
        } else if let Some(last) = out.last_mut().filter(|_| open) {
            last.1.push(line.to_string());
        }
    }
    out
}

/// Checks the layout of every line under a section header: frames as
/// `function(...)` then `\tfile:line[ +0xoff]`, then `created by F in
/// goroutine N` and its place, or Go's "stack unavailable".
fn check_shape(header: &str, lines: &[String]) {
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        if l.starts_with("created by ") {
            assert!(l.contains(" in goroutine "), "{header}: {l}");
            assert!(
                lines.get(i + 1).is_some_and(|p| p.starts_with('\t')),
                "{header}: {lines:?}"
            );
            assert_eq!(
                i + 2,
                lines.len(),
                "{header}: created by ends a section: {lines:?}"
            );
            return;
        }
        if l == "\tgoroutine running on other thread; stack unavailable" {
            i += 1;
            continue;
        }
        assert!(
            l.ends_with("(...)"),
            "{header}: a frame line: {l:?} in {lines:?}"
        );
        let place = lines
            .get(i + 1)
            .unwrap_or_else(|| panic!("{header}: {lines:?}"));
        assert!(
            place.starts_with('\t') && place.contains(':'),
            "{header}: {place:?}"
        );
        i += 2;
    }
}

/// The section checks every dump passes: `n` goroutines parked in
/// [`parked_in_dump_test`], each with its frame and created by
/// [`spawn_parked_goroutines`]; every section well formed.
fn check_parked_sections(text: &str, n: usize) {
    let all = sections(text);
    for (h, lines) in &all {
        check_shape(h, lines);
    }
    let parked: Vec<_> = all
        .iter()
        .filter(|(_, lines)| lines.iter().any(|l| l.contains("parked_in_dump_test")))
        .collect();
    assert_eq!(parked.len(), n, "{text}");
    for (h, lines) in parked {
        assert!(h.ends_with(" [chan receive]:"), "{h}");
        let created = lines.iter().find(|l| l.starts_with("created by ")).unwrap();
        assert!(created.contains("spawn_parked_goroutines"), "{created}");
    }
}

/// What a SIGQUIT dump adds at Go's traceback level 2 (Go treats a
/// SIGQUIT as a runtime throw): each header names the goroutine's and its
/// worker's addresses, the runtime's frames are shown, each frame's place
/// line carries `fp= sp= pc=` (the offset's line, at least), and the
/// interrupted registers end the dump under Go's names, in Go's order
/// (`tests/go/dumps/sigquit.go1.19.out`).
fn check_system_level(text: &str) {
    let all = sections(text);
    assert!(!all.is_empty());
    for (h, lines) in &all {
        let rest = h.strip_prefix("goroutine ").unwrap();
        let (_, rest) = rest.split_once(" gp=0x").unwrap_or_else(|| panic!("{h}"));
        assert!(rest.contains(" m=nil [") || rest.contains(" mp=0x"), "{h}");
        // (The go statement's place has no fields, as in Go.)
        let frames = lines.iter().take_while(|l| !l.starts_with("created by "));
        for place in frames.filter(|l| l.starts_with('\t') && l.contains(" +0x")) {
            let fields = place.split_once(" fp=0x").map(|(_, f)| f);
            assert!(
                fields.is_some_and(|f| f.contains(" sp=0x") && f.contains(" pc=0x")),
                "{h}: {place}"
            );
        }
    }
    let parked = all
        .iter()
        .find(|(_, lines)| lines.iter().any(|l| l.contains("parked_in_dump_test")))
        .unwrap();
    assert!(
        parked.1.iter().any(|l| l.starts_with("defergc::go::")),
        "the runtime's frames: {parked:?}"
    );
    let go = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/go/dumps/sigquit.go1.19.out"
    ))
    .unwrap();
    let names = |t: &str| -> Vec<String> {
        let lines: Vec<&str> = t.lines().collect();
        lines[lines.len() - 21..]
            .iter()
            .map(|l| {
                let (name, value) = l.split_at(7);
                assert!(value.starts_with("0x"), "{l}");
                assert!(u64::from_str_radix(&value[2..], 16).is_ok(), "{l}");
                name.trim_end().to_string()
            })
            .collect()
    };
    assert_eq!(names(text), names(&go));
}

/// The entry of every child (does nothing in the test run itself).
#[test]
fn child_entry() {
    let Ok(case) = std::env::var("DUMPS_CASE") else {
        return;
    };
    match case.as_str() {
        "sigquit" => child_sigquit(1000),
        "sigquit_small" => child_sigquit(3),
        "deadlock" => child_deadlock(10),
        "deadlock_three" => child_deadlock(3),
        "panic_all" => child_panic_all(),
        "sigquit_churn" => child_sigquit_churn(),
        "stack" => child_stack(),
        "stack_churn" => child_stack_churn(),
        "stack_syscall_churn" => child_stack_syscall_churn(),
        "profile" => child_profile(),
        "sigquit_forked" | "sigquit_forked_ignored" => child_sigquit_forked(),
        other => panic!("unknown case {other}"),
    }
}

fn child_sigquit(n: usize) {
    go::main(move || {
        let c = go::Chan::<u64>::new(0);
        spawn_parked_goroutines(n, &c);
        wait_parked(n);
        // SAFETY: signals this process.
        unsafe { libc::kill(libc::getpid(), libc::SIGQUIT) };
        // The dump ends the process; a timer pending is no deadlock.
        loop {
            go::sleep(Duration::from_millis(10));
        }
    });
}

/// Forks; the forked child sleeps and would exit 7, and is sent SIGQUIT.
/// Prints how the forked child ended.
fn child_sigquit_forked() {
    go::main(|| {
        // SAFETY: the child only sleeps and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            go::sleep(Duration::from_secs(2));
            // SAFETY: ends the forked child.
            unsafe { libc::_exit(7) };
        }
        go::sleep(Duration::from_millis(200));
        // SAFETY: signals our own child, then reaps it.
        let status = unsafe {
            libc::kill(pid, libc::SIGQUIT);
            let mut status = 0;
            assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
            status
        };
        if libc::WIFSIGNALED(status) {
            eprintln!("forked child: killed by signal {}", libc::WTERMSIG(status));
        } else {
            eprintln!("forked child: status {status:#x}");
        }
    });
}

fn child_deadlock(n: usize) {
    go::main(move || {
        let c = go::Chan::<u64>::new(0);
        spawn_parked_goroutines(n, &c);
        wait_parked(n);
        main_waits_forever(&c);
    });
}

/// The main goroutine's frame in the deadlock report.
#[inline(never)]
fn main_waits_forever(c: &go::Chan<u64>) {
    let _ = std::hint::black_box(c.recv());
}

fn child_panic_all() {
    go::main(|| {
        let c = go::Chan::<u64>::new(0);
        spawn_parked_goroutines(10, &c);
        wait_parked(10);
        panic!("boom");
    });
}

/// SIGQUIT while goroutines come and go, send and receive, and (on the
/// collectors that collect) collections run: every section is well
/// formed and the parked goroutines are all there, with their frames.
fn child_sigquit_churn() {
    let seed: u64 = std::env::var("DUMPS_SEED").unwrap().parse().unwrap();
    go::main(move || {
        let c = go::Chan::<u64>::new(0);
        spawn_parked_goroutines(200, &c);
        wait_parked(200);
        let work = go::Chan::<u64>::new(4);
        let mut x = seed | 1;
        for i in 0..8 {
            let work = work.clone();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let spins = x % 50;
            go::go(move || loop {
                for _ in 0..spins {
                    go::gosched();
                }
                let w = work.clone();
                go::go(move || w.send(1));
                let _ = work.recv();
                if i == 0 {
                    collect();
                }
            });
        }
        go::sleep(Duration::from_millis(x % 40));
        // SAFETY: signals this process.
        unsafe { libc::kill(libc::getpid(), libc::SIGQUIT) };
        loop {
            go::sleep(Duration::from_millis(10));
        }
    });
}

/// A collection by every collector enabled (none under nogc).
fn collect() {
    defergc::gc::collect();
    #[cfg(feature = "precise")]
    let _ = defergc::precise::collect();
}

/// A forked child has no thread of ours to dump on SIGQUIT: the signal
/// takes the action installed before ours, here the default (the child
/// ends by SIGQUIT). Before, the handler restored the default action and
/// returned, and the signal sent was lost: the child slept on and exited
/// 7.
#[test]
fn sigquit_in_a_forked_child_takes_the_default_action() {
    let (status, text) = child("sigquit_forked", &[]);
    assert_eq!(status, Some(0), "{text}");
    assert!(
        text.contains(&format!("forked child: killed by signal {}", libc::SIGQUIT)),
        "{text}"
    );
}

/// The same where the program started with SIGQUIT ignored: the forked
/// child ignores it (sleeps on, exits 7).
#[test]
fn sigquit_in_a_forked_child_ignored_before_the_runtime_is_ignored() {
    let (status, text) = child("sigquit_forked_ignored", &[("DUMPS_QUIT_IGNORED", "1")]);
    assert_eq!(status, Some(0), "{text}");
    assert!(text.contains("forked child: status 0x700"), "{text}");
}

#[test]
fn sigquit_prints_every_parked_goroutine_with_its_frames_and_exits_2() {
    let (status, text) = child("sigquit", &[]);
    assert_eq!(status, Some(2), "{text}");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("SIGQUIT: quit"), "{text}");
    let pc = lines.next().unwrap();
    assert!(
        pc.starts_with("PC=0x") && pc.contains(" m=") && pc.contains(" sigcode="),
        "{pc}"
    );
    assert_eq!(lines.next(), Some(""));
    check_parked_sections(&text, 1000);
    check_system_level(&text);
    // The main goroutine is there too (sleeping, or its timer just
    // fired), without created by.
    let main = sections(&text)
        .into_iter()
        .find(|(_, lines)| lines.iter().any(|l| l.contains("child_sigquit")))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        main.0.ends_with(" [sleep]:") || main.0.ends_with(" [runnable]:"),
        "{main:?}"
    );
    assert!(
        !main.1.iter().any(|l| l.starts_with("created by")),
        "{main:?}"
    );
}

#[test]
fn sigquit_at_gotraceback_none_prints_two_lines_and_exits_2() {
    let (status, text) = child("sigquit_small", &[("GOTRACEBACK", "none")]);
    assert_eq!(status, Some(2), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], "SIGQUIT: quit");
    assert!(lines[1].starts_with("PC=0x"), "{text}");
}

#[test]
fn sigquit_while_goroutines_churn_prints_consistent_sections() {
    let seed = seeded::seed("DUMPS_SEED");
    for round in 0..3 {
        let seed = seed.wrapping_add(round);
        eprintln!("sigquit churn: DUMPS_SEED={seed}");
        let s = seed.to_string();
        let (status, text) = child("sigquit_churn", &[("DUMPS_SEED", &s)]);
        assert_eq!(status, Some(2), "seed {seed}: {text}");
        assert!(text.starts_with("SIGQUIT: quit\n"), "seed {seed}: {text}");
        check_parked_sections(&text, 200);
        check_system_level(&text);
    }
}

/// Where the churning goroutines wait, one call after the other from the
/// same loop (so at the same depth): a dump that mixed two states of one
/// goroutine would show both, or a frame of neither.
#[inline(never)]
fn churn_waits_in_a(c: &go::Chan<u64>) -> u64 {
    std::hint::black_box(c.recv().unwrap_or(0)) + 1
}

#[inline(never)]
fn churn_waits_in_b(c: &go::Chan<u64>) -> u64 {
    std::hint::black_box(c.recv().unwrap_or(0)) + 2
}

fn child_stack_churn() {
    let seed: u64 = std::env::var("DUMPS_SEED").unwrap().parse().unwrap();
    go::main(move || {
        let c = go::Chan::<u64>::new(0);
        for g in 0..16u64 {
            let c = c.clone();
            go::go(move || {
                let mut x = seed ^ g.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                loop {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let v = if x & 1 == 0 {
                        churn_waits_in_a(&c)
                    } else {
                        churn_waits_in_b(&c)
                    };
                    if v == 0 {
                        return;
                    }
                }
            });
        }
        for _ in 0..4 {
            let c = c.clone();
            go::go(move || loop {
                c.send(1);
            });
        }
        let mut checked = 0;
        for _ in 0..200 {
            let text = go::stack(true);
            for (h, lines) in sections(&text) {
                check_shape(&h, &lines);
                let a = lines.iter().any(|l| l.contains("churn_waits_in_a"));
                let b = lines.iter().any(|l| l.contains("churn_waits_in_b"));
                assert!(!(a && b), "two states in one section: {h} {lines:?}");
                if a || b {
                    // Parked, or readied and not running yet.
                    assert!(
                        h.ends_with(" [chan receive]:") || h.ends_with(" [runnable]:"),
                        "{h} {lines:?}"
                    );
                    checked += 1;
                }
            }
        }
        // Some walks found their goroutine parked (a count, not a time).
        assert!(checked > 0);
        eprintln!("stack churn: {checked} parked sections checked");
        std::process::exit(0);
    });
}

#[test]
fn runtime_stack_while_goroutines_park_and_run_never_mixes_two_states() {
    let seed = seeded::seed("DUMPS_SEED");
    eprintln!("stack churn: DUMPS_SEED={seed}");
    let (status, text) = child("stack_churn", &[("DUMPS_SEED", &seed.to_string())]);
    assert_eq!(status, Some(0), "seed {seed}: {text}");
    assert!(
        text.contains("parked sections checked"),
        "seed {seed}: {text}"
    );
}

#[test]
fn the_deadlock_report_lists_frames_under_each_goroutine() {
    let (status, text) = child("deadlock", &[]);
    assert_eq!(status, Some(2), "{text}");
    assert!(
        text.starts_with("fatal error: all goroutines are asleep - deadlock!\n\ngoroutine "),
        "{text}"
    );
    check_parked_sections(&text, 10);
    let main = sections(&text)
        .into_iter()
        .find(|(_, lines)| lines.iter().any(|l| l.contains("main_waits_forever")))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(main.0.ends_with(" [chan receive]:"), "{main:?}");
}

/// A dump's lines as kinds (header, frame, place, created by, blank,
/// other), runs of frames with their places as one: the layout without
/// names, paths and numbers.
fn shape(text: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for line in text.lines() {
        let kind = if line.starts_with("goroutine ") && line.ends_with("]:") {
            "header"
        } else if line.starts_with("created by ") && line.contains(" in goroutine ") {
            "created by"
        } else if line.starts_with('\t') && (line.contains(".go:") || line.contains(".rs:")) {
            "place"
        } else if line.ends_with(')') {
            "frame"
        } else if line.is_empty() {
            "blank"
        } else {
            "other"
        };
        if kind == "place" && out.last() == Some(&"frames") {
            continue;
        }
        if kind == "place" && out.last() == Some(&"frame") {
            out.pop();
            if out.last() != Some(&"frames") {
                out.push("frames");
            }
            continue;
        }
        out.push(kind);
    }
    out
}

#[test]
fn the_deadlock_report_has_the_layout_go_prints() {
    let go = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/go/dumps/deadlock.out"),
    )
    .unwrap();
    let (status, ours) = child("deadlock_three", &[]);
    assert_eq!(status, Some(2), "{ours}");
    assert_eq!(shape(&ours), shape(&go), "ours:\n{ours}\nGo's:\n{go}");
    assert_eq!(ours.lines().next(), go.lines().next());
}

#[test]
fn gotraceback_all_shows_the_other_goroutines_frames() {
    let (status, text) = child("panic_all", &[("GOTRACEBACK", "all")]);
    assert_eq!(status, Some(2), "{text}");
    // The report (go::main also lets the Rust panic hook print it first,
    // on the thread that called it: the last one is the exit's).
    let report = &text[text
        .rfind("panic: boom\n")
        .unwrap_or_else(|| panic!("{text}"))..];
    assert!(report.contains(" [running]:\n"), "{text}");
    check_parked_sections(report, 10);
    // At the default level, only the panicking goroutine.
    let (status, text) = child("panic_all", &[]);
    assert_eq!(status, Some(2), "{text}");
    assert!(!text.contains("parked_in_dump_test"), "{text}");
}

#[inline(never)]
fn syscall_site_a(spins: u64) -> u64 {
    go::syscall(|| spin_in_call(spins))
}

#[inline(never)]
fn syscall_site_b(spins: u64) -> u64 {
    defergc::ffi::defergc_enter_syscall();
    let v = spin_in_call(spins);
    defergc::ffi::defergc_exit_syscall();
    v
}

fn spin_in_call(spins: u64) -> u64 {
    let mut x = spins;
    for _ in 0..spins {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    if spins.is_multiple_of(3) {
        std::thread::sleep(Duration::from_micros(50));
    }
    x
}

fn child_stack_syscall_churn() {
    let seed: u64 = std::env::var("DUMPS_SEED").unwrap().parse().unwrap();
    go::main(move || {
        let stop = Arc::new(AtomicUsize::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let done = go::Chan::<u64>::new(8);
        for g in 0..8u64 {
            let (stop, calls, done) = (stop.clone(), calls.clone(), done.clone());
            go::go(move || {
                let mut x = seed ^ g.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                let mut sum = 0u64;
                while stop.load(Ordering::Relaxed) == 0 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    sum = sum.wrapping_add(if x & 1 == 0 {
                        syscall_site_a(x % 2000)
                    } else {
                        syscall_site_b(x % 2000)
                    });
                    calls.fetch_add(1, Ordering::Relaxed);
                    if x.is_multiple_of(5) {
                        go::gosched();
                    }
                }
                done.send(sum);
            });
        }
        let mut seen = 0;
        for _ in 0..200 {
            let text = go::stack(true);
            for (h, lines) in sections(&text) {
                check_shape(&h, &lines);
                if h.ends_with(" [syscall]:") {
                    // With the world stopped, a goroutine in a call shows
                    // the function that entered it, under its body.
                    let first = lines.first().map(String::as_str).unwrap_or("");
                    assert!(
                        first.contains("syscall_site_a") || first.contains("syscall_site_b"),
                        "{h}: {lines:?}"
                    );
                    assert!(
                        lines
                            .iter()
                            .any(|l| l.contains("child_stack_syscall_churn")),
                        "{h}: {lines:?}"
                    );
                    seen += 1;
                }
            }
        }
        stop.store(1, Ordering::Relaxed);
        for _ in 0..8 {
            done.recv();
        }
        assert!(seen > 0, "no dump found a goroutine in a call");
        eprintln!(
            "syscall churn: {seen} sections in calls checked, {} calls",
            calls.load(Ordering::Relaxed)
        );
        std::process::exit(0);
    });
}

#[test]
fn runtime_stack_shows_goroutines_in_system_calls_where_they_entered_them() {
    let seed = seeded::seed("DUMPS_SEED");
    eprintln!("syscall churn: DUMPS_SEED={seed}");
    let (status, text) = child("stack_syscall_churn", &[("DUMPS_SEED", &seed.to_string())]);
    assert_eq!(status, Some(0), "seed {seed}: {text}");
    assert!(
        text.contains("sections in calls checked"),
        "seed {seed}: {text}"
    );
}

#[test]
fn runtime_stack_truncates_and_lists_others_only_with_all() {
    let (status, text) = child("stack", &[]);
    assert_eq!(status, Some(0), "{text}");
}

fn child_stack() {
    let out = Arc::new(AtomicUsize::new(0));
    let o = out.clone();
    go::run(move || {
        let c = go::Chan::<u64>::new(0);
        spawn_parked_goroutines(5, &c);
        wait_parked(5);
        let one = go::stack(false);
        assert!(
            one.starts_with(&format!("goroutine {} [running]:\n", go::goid())),
            "{one}"
        );
        assert_eq!(one.matches("goroutine ").count(), 1, "{one}");
        assert!(one.contains("child_stack"), "{one}");
        let all = go::stack(true);
        assert!(all.starts_with(&one[..one.find('\n').unwrap()]), "{all}");
        check_parked_sections(&all, 5);
        // Go's truncation: as much as fits, no terminator.
        let mut buf = [0u8; 16];
        assert_eq!(go::stack_into(&mut buf, true), 16);
        assert_eq!(&buf, &all.as_bytes()[..16]);
        let mut big = vec![0u8; all.len() + 4096];
        let n = go::stack_into(&mut big, false);
        assert!(n < big.len() && big[..n].starts_with(b"goroutine "));
        assert_eq!(go::stack_into(&mut [], true), 0);
        // The C ABI: the same text, cut the same way.
        let mut cbuf = [0u8; 10];
        // SAFETY: 10 writable bytes.
        let n = unsafe { defergc::ffi::defergc_stack(cbuf.as_mut_ptr().cast(), 10, 1) };
        assert_eq!(n, 10);
        assert_eq!(&cbuf, b"goroutine ");
        // SAFETY: NULL is refused.
        let n = unsafe { defergc::ffi::defergc_stack(std::ptr::null_mut(), 10, 1) };
        assert_eq!(n, 0);
        for _ in 0..5 {
            c.send(0);
        }
        // Goroutines in system calls (their status stays running): Go's
        // `[syscall]` header, and the frames of the function that entered
        // the call (the world is stopped while they are read), through the
        // Rust API and through the C ABI.
        let inside = Arc::new(AtomicUsize::new(0));
        let done = go::Chan::<u64>::new(2);
        for c_abi in [false, true] {
            let (i, d) = (inside.clone(), done.clone());
            go::go(move || {
                if c_abi {
                    blocks_in_a_c_system_call(&i);
                } else {
                    blocks_in_a_system_call(&i);
                }
                d.send(0);
            });
        }
        while inside.load(Ordering::SeqCst) < 2 {
            go::gosched();
        }
        let all = go::stack(true);
        assert_eq!(all.matches(" [syscall]:\n").count(), 2, "{all}");
        for f in ["blocks_in_a_system_call", "blocks_in_a_c_system_call"] {
            // Its first frame is the function that entered the call, and
            // the goroutine's body called it.
            let found = sections(&all).into_iter().find(|(h, lines)| {
                h.ends_with(" [syscall]:") && lines.first().is_some_and(|l| l.contains(f))
            });
            let (h, lines) =
                found.unwrap_or_else(|| panic!("no [syscall] section starts in {f}: {all}"));
            check_shape(&h, &lines);
            assert!(lines.iter().any(|l| l.contains("child_stack")), "{lines:?}");
        }
        assert!(!all.contains("stack unavailable"), "{all}");
        inside.store(3, Ordering::SeqCst);
        done.recv();
        done.recv();
        o.store(1, Ordering::SeqCst);
    });
    assert_eq!(out.load(Ordering::SeqCst), 1);
}

/// Waits in a system call (a sleep loop) until `inside` reaches 3.
#[inline(never)]
fn blocks_in_a_system_call(inside: &AtomicUsize) {
    go::syscall(|| wait_in_call(inside));
}

/// The same, entered through the C ABI.
#[inline(never)]
fn blocks_in_a_c_system_call(inside: &AtomicUsize) {
    defergc::ffi::defergc_enter_syscall();
    wait_in_call(inside);
    defergc::ffi::defergc_exit_syscall();
}

fn wait_in_call(inside: &AtomicUsize) {
    inside.fetch_add(1, Ordering::SeqCst);
    while inside.load(Ordering::SeqCst) < 3 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn goroutine_profile_counts_goroutines_by_stack() {
    let (status, text) = child("profile", &[]);
    assert_eq!(status, Some(0), "{text}");
}

fn child_profile() {
    let path = std::env::temp_dir().join(format!("defergc-goroutine-{}.pprof", std::process::id()));
    let p = path.clone();
    go::run(move || {
        let c = go::Chan::<u64>::new(0);
        spawn_parked_goroutines(50, &c);
        wait_parked(50);
        let mut bytes = Vec::new();
        go::write_goroutine_profile(&mut bytes).unwrap();
        let samples = defergc::gc::profile::decode_for_tests(&bytes).expect("a profile");
        let parked: Vec<_> = samples
            .iter()
            .filter(|(names, _)| names.iter().any(|n| n.contains("parked_in_dump_test")))
            .collect();
        assert_eq!(parked.len(), 1, "{samples:?}");
        assert_eq!(parked[0].1, vec![50], "{samples:?}");
        // The stack starts at the parked function (the runtime's frames
        // left out).
        assert!(parked[0].0[0].contains("parked_in_dump_test"), "{parked:?}");
        // The calling goroutine is counted too.
        let total: i64 = samples.iter().map(|(_, v)| v[0]).sum();
        assert!(total >= 51, "{samples:?}");
        // The C ABI writes the same profile to a file.
        let cpath = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        let written = unsafe { defergc::ffi::defergc_write_goroutine_profile(cpath.as_ptr()) };
        assert_eq!(written, 0);
        // SAFETY: NULL is refused.
        let refused = unsafe { defergc::ffi::defergc_write_goroutine_profile(std::ptr::null()) };
        assert_eq!(refused, defergc::ffi::errors::EINVAL);
        assert_eq!(
            defergc::ffi::defergc_write_goroutine_profile_fd(-1),
            defergc::ffi::errors::EINVAL
        );
        for _ in 0..50 {
            c.send(0);
        }
    });
    let bytes = std::fs::read(&path).unwrap();
    let samples = defergc::gc::profile::decode_for_tests(&bytes).expect("a profile");
    assert!(samples
        .iter()
        .any(|(names, v)| v == &vec![50] && names[0].contains("parked_in_dump_test")));
    // go tool pprof reads it, when Go is installed.
    match Command::new("go")
        .args(["tool", "pprof", "-top"])
        .arg(&path)
        .output()
    {
        Ok(out) if out.status.success() => {
            let top = String::from_utf8_lossy(&out.stdout);
            assert!(top.contains("parked_in_dump_test"), "{top}");
            assert!(top.contains("Type: goroutine"), "{top}");
        }
        _ => skip::skipped("go tool pprof -top on a goroutine profile", "no go here"),
    }
    let _ = std::fs::remove_file(&path);
}
