//! Compiling C programs against the library this very build produced: the
//! one helper the C tests (and the benches, through `#[path]`) share.
//!
//! Cargo builds `libdefergc.a` next to the test and bench binaries
//! (target/<profile>/deps), with the same profile and features. The C
//! compiler is `$CC`, or `cc`.
#![allow(dead_code)] // not every test uses every helper

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The repository root (the header and the C programs live there).
pub fn root() -> PathBuf {
    // The library's tests run from the root, the command's benches from
    // cli/: find the directory that holds include/defergc.h.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("include/defergc.h").exists())
        .unwrap_or(here)
        .to_path_buf()
}

/// The static library of this build, next to the running test binary.
pub fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libdefergc.a");
    assert!(
        lib.exists(),
        "{} missing: run through cargo test or cargo bench",
        lib.display()
    );
    lib
}

/// What a C program links after the static library: the system bdwgc when
/// the build uses one, then the system libraries.
pub fn link_args() -> Vec<&'static str> {
    let mut args = Vec::new();
    if defergc::gc::build::SOURCE == "system" {
        args.extend_from_slice(defergc::gc::build::LINK_ARGS);
    }
    args.extend_from_slice(defergc::ffi::STATIC_LINK_LIBS);
    args
}

/// The C compiler.
pub fn cc() -> Command {
    Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
}

/// Where compiled programs go.
pub fn out_dir(what: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(what);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `sources` (paths relative to the repository root) into the
/// executable `name`, linked with the static library, with the header's
/// directory and `tests/c` on the include path, warnings as errors; once
/// per process (tests run in parallel).
pub fn compile(name: &str, sources: &[&str], flags: &[&str]) -> PathBuf {
    static BUILT: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, exe)) = built.iter().find(|(n, _)| n == name) {
        return exe.clone();
    }
    let root = root();
    let exe = out_dir("c-programs").join(name);
    let out = cc()
        .args(["-std=c11", "-O2", "-g", "-fno-omit-frame-pointer"])
        .args(["-Wall", "-Wextra", "-Werror"])
        .args(flags)
        .arg(format!("-I{}", root.join("include").display()))
        .arg(format!("-I{}", root.join("tests/c").display()))
        .args(sources.iter().map(|s| root.join(s)))
        .arg("-o")
        .arg(&exe)
        .arg(static_lib())
        .args(link_args())
        .output()
        .unwrap();
    check_compiled(out, name);
    built.push((name.to_string(), exe.clone()));
    exe
}

/// Fails the test, with the compiler's messages, unless `out` (of a
/// compiler run for `what`) succeeded.
pub fn check_compiled(out: Output, what: &str) {
    assert!(
        out.status.success(),
        "compiling {what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `exe` with `args` and `env`.
pub fn run(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The cases a program of named cases has (`exe list`: tests/c/common.h's
/// `run_cases`), in its order.
pub fn cases(exe: &Path) -> Vec<String> {
    let out = run(exe, &["list"], &[]);
    assert!(
        out.status.success(),
        "{} list: {}",
        exe.display(),
        text(&out)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs `cmd` to its end (`Ok`, what it did), or kills it once `limit`
/// has passed (`Err`, everything it printed until then): for programs
/// whose bug is a hang. Both pipes are drained while it runs. The program
/// runs in a process group of its own, killed whole when it ends or its
/// time is up: a child it forked that hangs (and holds the pipes open)
/// ends with it.
pub fn run_with_deadline(cmd: &mut Command, limit: std::time::Duration) -> Result<Output, String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    // Both ways out of the loop below reap it (`child.wait()`).
    #[allow(clippy::zombie_processes)]
    let mut child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        let group = -(child.id() as libc::pid_t);
        // SAFETY: a zeroed siginfo for waitid to fill; the child is ours.
        let ended = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                child.id(),
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            ) == 0
                && info.si_pid() != 0
        };
        if ended {
            // SAFETY: a signal to the program's own group (what is left
            // of it: children it forked), sent while the ended program is
            // not reaped yet, so the group's number is still its own.
            unsafe { libc::kill(group, libc::SIGKILL) };
            break Some(child.wait().unwrap());
        }
        if std::time::Instant::now() > deadline {
            // SAFETY: as above, the whole group while it still runs.
            unsafe { libc::kill(group, libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    match status {
        Some(status) => Ok(Output {
            status,
            stdout,
            stderr,
        }),
        None => Err(format!(
            "{}{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        )),
    }
}

/// Everything the program printed.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Replaces every hexadecimal address with `0x…` (they differ from run to
/// run, and from Go's).
pub fn addresses_elided(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at]);
        out.push_str("0x…");
        rest = rest[at + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out
}
