//! Typed panic values from compiled code (tests/c/panics.c): the
//! unrecovered report reads as Go's for the same panic (tests/go/panics),
//! up to the goroutine header; recovered values come back as they went.

mod cprog;

fn panics_c(case: &str) -> std::process::Output {
    panics_c_env(case, &[])
}

fn panics_c_env(case: &str, env: &[(&str, &str)]) -> std::process::Output {
    // -O1 keeps the test's small functions apart (-g: files and lines).
    let exe = cprog::compile("panics", &["tests/c/panics.c"], &["-D_GNU_SOURCE"]);
    cprog::run(&exe, &[case], env)
}

/// The function names of a report's frames, in order.
fn functions(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.ends_with("(...)"))
        .map(|l| l.trim_end_matches("(...)").to_string())
        .collect()
}

/// The report up to and including the first goroutine header.
fn head(stderr: &str) -> String {
    let mut out = String::new();
    for line in stderr.lines() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("goroutine ") && line.ends_with("[running]:") {
            break;
        }
    }
    out
}

#[test]
fn unrecovered_typed_values_print_as_go_prints_them() {
    let cases = [
        "str",
        "int",
        "err",
        "struct",
        "named",
        "nstr",
        "stringer",
        "float",
        "repanic",
        "nested",
        "recovered-then-other",
        "nil",
        "pointer",
    ];
    let mut failures = Vec::new();
    for case in cases {
        let out = panics_c(case);
        let expected =
            std::fs::read_to_string(cprog::root().join(format!("tests/go/panics/{case}.out")))
                .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let got = cprog::addresses_elided(&head(&stderr));
        if out.status.code() != Some(2) || got != cprog::addresses_elided(&expected) {
            failures.push(format!(
                "{case}: status {}, got\n{got}\nwhere Go prints\n{expected}",
                out.status
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn recovered_values_come_back_as_they_went() {
    for case in [
        "recover-iface",
        "recover-runtime-error",
        "recover-pointer",
        "recover-nil",
    ] {
        let out = panics_c(case);
        assert!(out.status.success(), "{case}: {}", cprog::text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{case} ok\n"));
    }
}

/// After the panic lines, Go's goroutine section: the header, then each
/// frame as `function(...)` and `\tfile:line +0xoffset`. By default the
/// panic's site, the frames with deferred calls and what called the
/// outermost; `GOTRACEBACK=system` records every frame; `none` prints no
/// section; `all` adds the other goroutines.
#[test]
fn reports_carry_go_s_goroutine_section() {
    let out = panics_c("trace");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("panic: 42\n\ngoroutine 1 [running]:\ninner(...)\n\t"),
        "{err}"
    );
    assert_eq!(functions(&err), ["inner", "outer", "go_main"], "{err}");
    // Each frame's second line names the C file, a line and an offset.
    for line in err.lines().filter(|l| l.starts_with('\t')) {
        let (place, offset) = line.trim_start().rsplit_once(" +0x").expect(line);
        assert!(place.contains("tests/c/panics.c:"), "{line}");
        assert!(u64::from_str_radix(offset, 16).is_ok(), "{line}");
    }

    let err = String::from_utf8_lossy(&panics_c_env("trace", &[("GOTRACEBACK", "system")]).stderr)
        .into_owned();
    // The panicking goroutine's section: every frame recorded. The other
    // goroutines' sections follow at Go's level 2 (`gp=` in the header,
    // the runtime's frames), as Go prints them at this level.
    let own = err.split("\n\n").nth(1).unwrap_or("");
    assert_eq!(
        functions(own),
        ["inner", "middle", "outer", "go_main"],
        "{err}"
    );
    let others: Vec<&str> = err
        .split("\n\n")
        .skip(2)
        .filter(|s| s.starts_with("goroutine "))
        .collect();
    assert!(!others.is_empty(), "{err}");
    for other in others {
        assert!(other.contains(" gp=0x"), "{other}");
    }

    let out = panics_c_env("trace", &[("GOTRACEBACK", "none")]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "panic: 42\n");

    let err = String::from_utf8_lossy(&panics_c_env("trace", &[("GOTRACEBACK", "all")]).stderr)
        .into_owned();
    assert!(err.contains("\ngoroutine 2 [chan receive]:\n"), "{err}");
}
