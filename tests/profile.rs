//! Heap profiles: sampled allocation sites written in pprof's format, read
//! back (and, where Go is installed, by `go tool pprof -top`).

mod cprog;
mod gotool;
mod skip;

use defergc::gc::{self, profile};
use serial_test::serial;
use std::hint::black_box;

const N: usize = 1000;

/// The profile's values (alloc_objects, alloc_space, inuse_objects,
/// inuse_space) summed over the sites whose innermost frame is `function`.
fn totals_of(function: &str) -> [i64; 4] {
    let mut bytes = Vec::new();
    profile::write_heap_profile(&mut bytes).unwrap();
    let sites = profile::decode_for_tests(&bytes).expect("a valid profile");
    let mut totals = [0; 4];
    for (_, values) in sites
        .iter()
        .filter(|(names, _)| names.first().is_some_and(|n| n.contains(function)))
    {
        for (t, v) in totals.iter_mut().zip(values) {
            *t += v;
        }
    }
    totals
}

/// Allocates N objects of 64 bytes; keeps every second one in `keep`.
#[inline(never)]
fn allocate_in_profile_helper(keep: *mut *mut u8) {
    for i in 0..N {
        let p = gc::alloc(64).as_ptr();
        if i % 2 == 0 {
            // SAFETY: keep has N / 2 slots.
            unsafe { keep.add(i / 2).write(p) };
        }
        black_box(p);
    }
}

#[test]
#[serial]
fn a_profile_names_the_allocating_function_with_its_counts() {
    let previous = profile::set_mem_profile_rate(1);
    let keep = gc::alloc(N / 2 * 8).cast::<*mut u8>().as_ptr();
    allocate_in_profile_helper(keep);
    profile::set_mem_profile_rate(previous);
    gc::collect_with_clean_stack();
    let mut bytes = Vec::new();
    profile::write_heap_profile(&mut bytes).unwrap();
    let sites = profile::decode_for_tests(&bytes).expect("a valid profile");
    let helper: Vec<&(Vec<String>, Vec<i64>)> = sites
        .iter()
        .filter(|(names, _)| {
            names
                .first()
                .is_some_and(|n| n.contains("allocate_in_profile_helper"))
        })
        .collect();
    assert!(
        !helper.is_empty(),
        "no site names the helper first: {sites:?}"
    );
    let alloc_objects: i64 = helper.iter().map(|(_, v)| v[0]).sum();
    let alloc_space: i64 = helper.iter().map(|(_, v)| v[1]).sum();
    let inuse_objects: i64 = helper.iter().map(|(_, v)| v[2]).sum();
    // Every allocation sampled (rate 1): the scale is 1.
    assert_eq!((alloc_objects, alloc_space), (N as i64, 64 * N as i64));
    if gc::BACKEND == "bdwgc" {
        assert!(
            inuse_objects >= (N / 2) as i64 && inuse_objects <= (N / 2 + N / 20) as i64,
            "{inuse_objects} in use"
        );
    } else {
        assert_eq!(
            inuse_objects, N as i64,
            "nothing is freed without a collector"
        );
    }
    gc::keep_alive(keep);

    if gotool::have_go() {
        let path = std::env::temp_dir().join(format!("defergc-heap-{}.pprof", std::process::id()));
        profile::write_heap_profile_to(&path).unwrap();
        let out = pprof_top(&path);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("allocate_in_profile_helper"),
            "go tool pprof: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = std::fs::remove_file(path);
    } else {
        skip::skipped(
            "reading the profile with go tool pprof",
            "Go is not installed (apt-get install golang-go)",
        );
    }
}

#[test]
#[serial]
fn the_rate_is_set_and_read_back() {
    let previous = profile::set_mem_profile_rate(4096);
    assert_eq!(profile::mem_profile_rate(), 4096);
    assert_eq!(profile::set_mem_profile_rate(previous), 4096);
    assert_eq!(profile::set_mem_profile_rate(-3), previous);
    assert_eq!(profile::set_mem_profile_rate(previous), 0);
}

/// Allocates `size` bytes, frees them, and allocates `size` again until
/// the new object lands where the freed one was; returns it.
#[inline(never)]
fn reuse_an_address_in_profile(size: usize) -> Option<*mut u8> {
    for _ in 0..100 {
        let p = gc::alloc(size).as_ptr();
        // SAFETY: p is ours and not used after.
        unsafe { gc::free(p) };
        let q = gc::alloc(size).as_ptr();
        if q == p {
            return Some(q);
        }
    }
    None
}

#[test]
#[serial]
fn an_object_freed_explicitly_is_not_in_use_even_when_its_address_is_reused() {
    if gc::BACKEND != "bdwgc" {
        skip::skipped(
            "freed samples",
            "nothing is freed without a collector (nogc)",
        );
        return;
    }
    let previous = profile::set_mem_profile_rate(1);
    let q = reuse_an_address_in_profile(3 * 4096).expect("a large block freed is reused");
    profile::set_mem_profile_rate(previous);
    let [alloc, _, inuse, _] = totals_of("reuse_an_address_in_profile");
    // The freed object and the one at its address were both sampled; only
    // the second lives.
    assert!(alloc >= 2, "{alloc} sampled");
    assert_eq!(inuse, 1, "in use: the object at the reused address, once");
    gc::keep_alive(q);
}

/// Allocates `n` objects of 32 bytes and drops them.
#[inline(never)]
fn churn_in_profile(n: usize) -> usize {
    let mut odd = 0;
    for _ in 0..n {
        odd += gc::alloc(32).as_ptr() as usize & 1;
    }
    odd
}

#[test]
#[serial]
fn samples_of_dead_objects_are_not_kept() {
    if gc::BACKEND != "bdwgc" {
        skip::skipped("dead samples", "nothing dies without a collector (nogc)");
        return;
    }
    const ROUND: usize = 5_000;
    const ROUNDS: usize = 20;
    let previous = profile::set_mem_profile_rate(1);
    let before = profile::entries_for_tests();
    for _ in 0..ROUNDS {
        black_box(churn_in_profile(ROUND));
        gc::collect_with_clean_stack();
    }
    profile::set_mem_profile_rate(previous);
    gc::collect_with_clean_stack();
    // Every one of the 100,000 objects was sampled and died; their entries
    // are reused round after round instead of piling up.
    let grown = profile::entries_for_tests() - before;
    assert!(
        grown <= 4 * ROUND,
        "{grown} entries for {ROUND} objects a round"
    );
    let [alloc, _, inuse, _] = totals_of("churn_in_profile");
    assert_eq!(alloc, (ROUND * ROUNDS) as i64);
    assert!(
        inuse <= (ROUND / 10) as i64,
        "{inuse} of the dead still in use"
    );
}

/// A C program's profile names the compiled function that allocated, and
/// `go tool pprof` finds the program's binary by the profile's mapping.
#[test]
fn a_c_programs_profile_names_its_function_and_binary() {
    let exe = cprog::compile("heap-profile", &["tests/c/heap_profile.c"], &[]);
    let path = cprog::out_dir("heap-profile").join("c.pprof");
    let out = cprog::run(&exe, &[path.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", cprog::text(&out));
    let bytes = std::fs::read(&path).unwrap();
    let sites = profile::decode_for_tests(&bytes).expect("a valid profile");
    let objects: i64 = sites
        .iter()
        .filter(|(names, _)| names.first().is_some_and(|n| n == "compiled_allocator"))
        .map(|(_, v)| v[0])
        .sum();
    if gc::BACKEND == "nogc" {
        skip::skipped(
            "the C program's profile",
            "no samples without a collector (nogc)",
        );
        return;
    }
    assert_eq!(objects, 1000, "{sites:?}");
    if gotool::have_go() {
        let out = pprof_top(&path);
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && text.contains("compiled_allocator"),
            "{text}{err}"
        );
        assert!(
            !text.contains("Main binary filename not available")
                && !err.contains("Main binary filename not available"),
            "{text}{err}"
        );
        assert!(text.contains("Build ID: "), "{text}");
    } else {
        skip::skipped(
            "reading the C program's profile with go tool pprof",
            "Go is not installed (apt-get install golang-go)",
        );
    }
}

/// `go tool pprof -top` of the profile at `path`, by allocations.
fn pprof_top(path: &std::path::Path) -> std::process::Output {
    gotool::pprof_top(path, &["-sample_index=alloc_objects"])
}
