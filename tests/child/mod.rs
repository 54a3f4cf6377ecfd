//! Running one test of the current test binary alone, in a child process
//! (a fresh runtime, its own environment, an exit that is not the
//! harness's). Test crates include it with `mod child;`.
#![allow(dead_code)] // not every test uses every helper

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A child's standard output, then its standard error, as text.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the test named `test` of this binary alone in a child process with
/// `env` set; its output, or `None` if it had not ended after `limit` (it
/// is killed: a hang fails the caller instead of hanging it). The child's
/// output must fit the pipes (it is read once the child has ended).
pub fn run_test(test: &str, env: &[(&str, &str)], limit: Duration) -> Option<Output> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

/// The text a [`loom_catches`] child prints when loom let its model pass.
const LOOM_FOUND_NOTHING: &str = "loom found nothing";

/// A check that loom finds a bug brought back into the model: the test
/// named `test` (the caller itself) runs again in a child process with
/// `switch` set in its environment, where `model` turns the bug on and
/// runs the model under loom. Loom reports some bugs by aborting the
/// process (a deadlock: a destructor runs into its ended execution while
/// the panic unwinds), hence the child.
///
/// In the parent: asserts that the child failed before the end of
/// `model` and returns loom's report (the child's standard error); `bug`
/// names the bug in the messages. In the child: runs `model`, prints
/// "loom found nothing" if it returns, and returns `None`.
pub fn loom_catches(test: &str, switch: &str, bug: &str, model: impl FnOnce()) -> Option<String> {
    if std::env::var_os(switch).is_some() {
        model();
        println!("{LOOM_FOUND_NOTHING}");
        return None;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(switch, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        !out.status.success() && !stdout.contains(LOOM_FOUND_NOTHING),
        "loom found nothing wrong with {bug}: the model checks nothing\n{stdout}{stderr}"
    );
    Some(stderr.into_owned())
}

/// The first line of loom's `report` that `is` picks, printed as what
/// loom failed with, with `bug`, or "(no message)" if none does.
pub fn loom_line<'a>(bug: &str, report: &'a str, is: impl Fn(&str) -> bool) -> Option<&'a str> {
    let line = report.lines().find(|l| is(l));
    eprintln!(
        "with {bug}, loom failed with: {}",
        line.unwrap_or("(no message)")
    );
    line
}
