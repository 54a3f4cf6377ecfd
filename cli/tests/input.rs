//! The command never crashes on its own input: out-of-range and malformed
//! options get a `defergc:` message that says what is valid, and status 2,
//! before any work starts; what it accepts it does exactly.

mod common;

use common::{defergc, field, refused};

#[test]
fn counts_out_of_range_are_refused_with_the_range() {
    refused(
        &["stress", "--threads", "100000"],
        "expected a whole number from 1 to 1024",
    );
    refused(
        &["stress", "--defers", "18446744073709551615"],
        "expected a whole number from 1 to 100000000000",
    );
    refused(
        &["stress", "--defers", "-5"],
        "invalid value '-5' for '--defers",
    );
    refused(&["stress", "--defers", "0"], "from 1 to");
    refused(&["stress", "--runs", "0"], "from 1 to 1000");
    refused(&["stress", "--threads", "many"], "invalid value 'many'");
    refused(&["stress", "--gc-every", "-1"], "from 0 to");
    refused(
        &["stress", "--defers", "5", "--threads", "9"],
        "--defers (5) must be at least --threads (9)",
    );
    refused(
        &["gcbench", "--workload", "live-heap", "--live-mb", "0"],
        "from 1 to 65536",
    );
    refused(&["no-such-command"], "unrecognized subcommand");
}

#[test]
fn every_count_option_names_its_range_for_negative_and_zero_values() {
    for (args, range) in [
        (&["gcbench", "--runs"][..], "from 1 to 1000"),
        (&["gcbench", "--depth"], "from 4 to 26"),
        (&["gcbench", "--gc-percent"], "from 1 to 1000000"),
        (&["gcbench", "--memory-limit-mb"], "from 1 to 16777216"),
        (&["bench", "--runs"], "from 1 to 1000"),
        (&["profile", "--rate"], "from 1 to 1073741824"),
    ] {
        for bad in ["-1", "0"] {
            let mut line = args.to_vec();
            line.push(bad);
            refused(&line, range);
        }
    }
}

#[test]
fn help_is_a_command_with_help_of_its_own() {
    for args in [&["help", "--help"][..], &["help"], &["help", "gcbench"]] {
        let out = defergc(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(text.contains("Usage: defergc"), "{args:?}: {text}");
    }
    refused(&["help", "no-such-command"], "help: no command");
}

#[test]
fn a_profile_path_that_cannot_be_written_is_refused_before_the_workload() {
    // 10^11 defers would be refused for their memory once the workload
    // starts (and take hours if they ran): the path's refusal comes first.
    refused(
        &[
            "profile",
            "--out",
            "/nonexistent/dir/p.pb",
            "--defers",
            "100000000000",
        ],
        "cannot write /nonexistent/dir/p.pb",
    );
}

#[test]
fn a_run_bigger_than_the_machine_is_refused_before_it_starts() {
    // 10^11 defers need terabytes; the refusal names both sizes.
    refused(
        &["stress", "--defers", "100000000000"],
        "GiB available here",
    );
    refused(
        &["gcbench", "--workload", "live-heap", "--live-mb", "65536"],
        "GiB available here",
    );
}

#[test]
fn defers_that_do_not_divide_evenly_all_run() {
    for (defers, threads) in [("10", "3"), ("7", "7"), ("1001", "4")] {
        let out = defergc(&["stress", "--defers", defers, "--threads", threads, "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json = String::from_utf8_lossy(&out.stdout);
        assert_eq!(field(&json, "defers"), defers);
        // Every call ran, the remainder's too, and verified.
        assert_eq!(field(&json, "calls"), defers, "{json}");
        assert_eq!(field(&json, "verified"), "true", "{json}");
    }
}

#[test]
fn help_and_version_are_not_errors() {
    let out = defergc(&["--version"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("defergc "));
    let out = defergc(&["stress", "--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--defers"));
}

#[test]
fn profile_writes_a_heap_profile_of_the_stress_run() {
    let path = std::env::temp_dir().join(format!("defergc-cli-{}.pprof", std::process::id()));
    let out = defergc(&[
        "profile",
        "--defers",
        "100000",
        "--rate",
        "4096",
        "--json",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = String::from_utf8_lossy(&out.stdout);
    let bytes: u64 = field(&json, "bytes").parse().unwrap();
    assert!(
        bytes > 0 && std::fs::metadata(&path).unwrap().len() == bytes,
        "{json}"
    );
    let _ = std::fs::remove_file(path);
    refused(&["profile", "--rate", "0"], "--rate");
}

#[test]
fn profile_writes_the_block_and_mutex_profiles_and_the_trace_asked_for() {
    refused(
        &["profile", "--block", "/nonexistent/dir/b.pprof"],
        "cannot write /nonexistent/dir/b.pprof",
    );
    refused(
        &["profile", "--trace", "/nonexistent/dir/t.json"],
        "cannot trace to /nonexistent/dir/t.json",
    );
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    let block = dir.join(format!("defergc-cli-{pid}.block.pprof"));
    let mutex = dir.join(format!("defergc-cli-{pid}.mutex.pprof"));
    let trace = dir.join(format!("defergc-cli-{pid}.trace.json"));
    let out = defergc(&[
        "profile",
        "--block",
        block.to_str().unwrap(),
        "--mutex",
        mutex.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    for (path, what) in [
        (&block, "block profile"),
        (&mutex, "mutex profile"),
        (&trace, "execution trace"),
    ] {
        assert!(text.contains(what), "{text}");
        assert!(std::fs::metadata(path).unwrap().len() > 0, "{what} empty");
        let _ = std::fs::remove_file(path);
    }
}
