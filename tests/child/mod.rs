//! Running one test of the current test binary alone, in a child process
//! (a fresh runtime, its own environment, an exit that is not the
//! harness's). Test crates include it with `mod child;`.
#![allow(dead_code)] // not every test uses every helper

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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
