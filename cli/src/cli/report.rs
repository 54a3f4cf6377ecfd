//! Report helpers: a one-line JSON object builder and process memory.

use std::fmt;

/// Builds a flat JSON object, one key at a time, in insertion order.
pub struct Json {
    fields: Vec<(String, String)>,
}

impl Json {
    pub fn new() -> Json {
        Json { fields: Vec::new() }
    }

    fn raw(mut self, key: &str, value: String) -> Json {
        self.fields.push((key.to_string(), value));
        self
    }

    pub fn str(self, key: &str, value: &str) -> Json {
        self.raw(key, quote(value))
    }

    pub fn strs(self, key: &str, values: &[&str]) -> Json {
        let items: Vec<String> = values.iter().map(|v| quote(v)).collect();
        self.raw(key, format!("[{}]", items.join(",")))
    }

    pub fn num(self, key: &str, value: f64) -> Json {
        let text = if value.fract() == 0.0 && value.abs() < 1e15 {
            format!("{}", value as i64)
        } else {
            format!("{value:.3}")
        };
        self.raw(key, text)
    }

    pub fn nums(self, key: &str, values: &[f64]) -> Json {
        let items: Vec<String> = values.iter().map(|v| format!("{v:.3}")).collect();
        self.raw(key, format!("[{}]", items.join(",")))
    }

    pub fn bool(self, key: &str, value: bool) -> Json {
        self.raw(key, value.to_string())
    }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (k, v)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}:{}", quote(k), v)?;
        }
        f.write_str("}")
    }
}

/// The process's peak resident set size (VmHWM), in bytes; 0 if unknown.
pub fn peak_rss_bytes() -> usize {
    status_kb("VmHWM:") * 1024
}

/// The process's resident set size now (VmRSS), in bytes; 0 if unknown.
pub fn rss_bytes() -> usize {
    status_kb("VmRSS:") * 1024
}

/// The 1-minute load average (the first field of /proc/loadavg), as
/// written there; "?" if unknown. Benchmarks print it beside their figures:
/// these machines are shared.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
}

/// A `kB` field of /proc/self/status.
fn status_kb(key: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .unwrap_or(0)
}

/// Runs a Go program of `benches/go/` (see [`go_program`]) and prints its
/// JSON lines, as they are with `json`, else after `go: `; returns the
/// command's exit status.
pub fn print_go_program(command: &str, program: &str, args: &[String], json: bool) -> i32 {
    match go_program(command, program, args) {
        Ok(lines) => {
            for line in lines {
                if json {
                    println!("{line}");
                } else {
                    println!("go: {line}");
                }
            }
            0
        }
        Err(why) => {
            eprintln!("{why}");
            2
        }
    }
}

/// Runs a Go program of `benches/go/` with `go run` from the repository
/// root and returns the JSON lines it printed; the error is a `defergc:`
/// message for `command` (Go not installed, not at the root, or the
/// program failed).
pub fn go_program(command: &str, program: &str, args: &[String]) -> Result<Vec<String>, String> {
    if !std::path::Path::new(program).is_file() {
        return Err(format!(
            "defergc: {command} --go: run from the repository root ({program} not found)"
        ));
    }
    let out = std::process::Command::new("go")
        .arg("run")
        .arg(program)
        .args(args)
        .output()
        .map_err(|e| {
            format!("defergc: {command} --go: cannot run go (apt-get install golang-go): {e}")
        })?;
    json_output(command, out)
}

/// A Go program built into a temporary directory of its own, which goes
/// when this is dropped.
pub struct GoBinary {
    dir: std::path::PathBuf,
    exe: std::path::PathBuf,
}

impl std::ops::Deref for GoBinary {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.exe
    }
}

impl Drop for GoBinary {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Builds a Go program of `benches/go/` once (`go build`, from the
/// repository root) into a temporary directory, for running many times
/// alternating with ours; the error as [`go_program`]'s.
pub fn build_go_program(command: &str, program: &str) -> Result<GoBinary, String> {
    if !std::path::Path::new(program).is_file() {
        return Err(format!(
            "defergc: {command} --go: run from the repository root ({program} not found)"
        ));
    }
    let dir = std::env::temp_dir().join(format!("defergc-go-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("defergc: {command} --go: {e}"))?;
    let exe = dir.join("bench");
    let built = GoBinary {
        dir: dir.clone(),
        exe: exe.clone(),
    };
    let out = std::process::Command::new("go")
        .arg("build")
        .arg("-o")
        .arg(&exe)
        .arg(program)
        .output()
        .map_err(|e| {
            format!("defergc: {command} --go: cannot run go (apt-get install golang-go): {e}")
        })?;
    if !out.status.success() {
        return Err(format!(
            "defergc: {command} --go: go build failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(built)
}

/// Runs a Go program built by [`build_go_program`] and returns the JSON
/// lines it printed.
pub fn run_go_binary(
    command: &str,
    exe: &std::path::Path,
    args: &[String],
) -> Result<Vec<String>, String> {
    let out = std::process::Command::new(exe)
        .args(args)
        .output()
        .map_err(|e| format!("defergc: {command} --go: cannot run {}: {e}", exe.display()))?;
    json_output(command, out)
}

/// The JSON lines a Go program printed, or a `defergc:` message for
/// `command` if it failed.
fn json_output(command: &str, out: std::process::Output) -> Result<Vec<String>, String> {
    if !out.status.success() {
        return Err(format!(
            "defergc: {command} --go: the Go program failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(str::to_string)
        .collect())
}

/// The string at `key` of a flat JSON line (no escapes inside), if any.
pub fn json_string(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let end = line[at..].find('"')?;
    Some(line[at..at + end].to_string())
}

/// The number at `key` of a flat JSON line such as the Go programs print
/// (`"median":412.5`), if it has one.
pub fn json_number(line: &str, key: &str) -> Option<f64> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = line[at..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Two rows, ours and Go's, and the ratio of their medians: what `bench
/// NAME --go` prints for a person (`--json` prints both JSON lines).
pub fn comparison_table(
    name: &str,
    unit: &str,
    runs: u32,
    ours: (f64, u64),
    go: (f64, u64),
) -> String {
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    let mut t = format!("{name} ({unit}, median of {runs} runs each)\n");
    t.push_str(&format!(
        "  {:<8} {:>14} {:>14}\n",
        "", "median", "peak RSS"
    ));
    t.push_str(&format!(
        "  {:<8} {:>14.3} {:>10.1} MiB\n",
        "defergc",
        ours.0,
        mib(ours.1)
    ));
    t.push_str(&format!(
        "  {:<8} {:>14.3} {:>10.1} MiB\n",
        "go",
        go.0,
        mib(go.1)
    ));
    if go.0 > 0.0 {
        t.push_str(&format!("  defergc / go: {:.2}x\n", ours.0 / go.0));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_number_reads_a_field_of_a_go_line() {
        let line = r#"{"bench":"chan-pingpong","impl":"go","unit":"ns/op","median":412.5,"peak_rss_bytes":5242880}"#;
        assert_eq!(json_number(line, "median"), Some(412.5));
        assert_eq!(json_number(line, "peak_rss_bytes"), Some(5_242_880.0));
        assert_eq!(json_number(line, "missing"), None);
    }

    #[test]
    fn the_table_gives_the_ratio_of_the_medians() {
        let t = comparison_table("sieve", "ms", 9, (300.0, 1 << 20), (600.0, 2 << 20));
        assert!(t.contains("defergc / go: 0.50x"), "{t}");
        assert!(t.contains("1.0 MiB") && t.contains("2.0 MiB"), "{t}");
    }
}
