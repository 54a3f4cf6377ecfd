//! `GODEBUG`: the one place that reads it. Go's format: comma-separated
//! `key=value` settings; where a key appears twice the last one counts
//! (Go's `runtime/runtime1.go` parses it so). Keys the runtime reads:
//! `gctrace` (gc/memory.rs), `asyncpreemptoff` (go/async_preempt.rs).
//! Uses nothing of the crate.

/// The value of `key` in `GODEBUG`, if set there.
pub(crate) fn value(key: &str) -> Option<String> {
    let all = std::env::var("GODEBUG").ok()?;
    lookup(&all, key).map(str::to_string)
}

/// Whether `GODEBUG` sets `key=1`.
pub(crate) fn is_one(key: &str) -> bool {
    value(key).is_some_and(|v| v == "1")
}

/// The last value of `key` in a `GODEBUG` string.
fn lookup<'a>(all: &'a str, key: &str) -> Option<&'a str> {
    all.split(',')
        .filter_map(|kv| kv.trim().split_once('='))
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::lookup;

    #[test]
    fn the_last_setting_of_a_key_counts() {
        assert_eq!(
            lookup("gctrace=1,asyncpreemptoff=1", "asyncpreemptoff"),
            Some("1")
        );
        assert_eq!(
            lookup("asyncpreemptoff=1, asyncpreemptoff=0", "asyncpreemptoff"),
            Some("0")
        );
        assert_eq!(lookup("gctrace=1", "asyncpreemptoff"), None);
        assert_eq!(lookup("", "gctrace"), None);
        assert_eq!(lookup("xgctrace=1", "gctrace"), None);
    }
}
