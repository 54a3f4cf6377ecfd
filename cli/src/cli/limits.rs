//! What the machine allows a run: the memory a workload may take, checked
//! before it starts (so that a run too big for the machine fails at once
//! with its reason instead of being killed a minute later), and counts
//! parsed with messages that say what a valid one is.

/// Bytes this process can still take: the least of the kernel's estimate
/// of available memory, the cgroup's limit less its usage, and the
/// address-space limit. `None` when none of them can be read.
pub fn available_memory() -> Option<u64> {
    let mut bounds = Vec::new();
    if let Ok(info) = std::fs::read_to_string("/proc/meminfo") {
        if let Some(kb) = info
            .lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            bounds.push(kb * 1024);
        }
    }
    let read = |p: &str| std::fs::read_to_string(p).ok();
    if let (Some(max), Some(cur)) = (
        read("/sys/fs/cgroup/memory.max"),
        read("/sys/fs/cgroup/memory.current"),
    ) {
        if let (Ok(max), Ok(cur)) = (max.trim().parse::<u64>(), cur.trim().parse::<u64>()) {
            bounds.push(max.saturating_sub(cur));
        }
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
        && lim.rlim_cur != libc::RLIM_INFINITY
    {
        bounds.push(lim.rlim_cur);
    }
    bounds.into_iter().min()
}

/// `Err` with a `defergc:` message when `bytes` (what the run needs) is
/// more than the machine has for it.
pub fn check_memory(what: &str, bytes: u64) -> Result<(), String> {
    match available_memory() {
        Some(avail) if bytes > avail => Err(format!(
            "defergc: {what} needs about {:.1} GiB, more than the {:.1} GiB available here",
            bytes as f64 / (1u64 << 30) as f64,
            avail as f64 / (1u64 << 30) as f64
        )),
        _ => Ok(()),
    }
}

/// A clap value parser for a count from `min` to `max`, saying which
/// counts are valid when the value is not one (negative numbers included:
/// the option must allow them through, `allow_negative_numbers`).
pub fn count(min: u64, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone {
    move |s: &str| {
        let bad = || format!("expected a whole number from {min} to {max}");
        let n: u64 = s.trim().replace('_', "").parse().map_err(|_| bad())?;
        if (min..=max).contains(&n) {
            Ok(n)
        } else {
            Err(bad())
        }
    }
}

/// [`count`] for options held in a `u32`.
pub fn count32(min: u32, max: u32) -> impl Fn(&str) -> Result<u32, String> + Clone {
    let parse = count(u64::from(min), u64::from(max));
    move |s: &str| parse(s).map(|n| n as u32)
}
