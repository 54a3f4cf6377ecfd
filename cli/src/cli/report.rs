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
