//! `defergc bench echo` and `defergc bench http`: a TCP server of ours
//! beside Go's, driven by the same load generator from outside the
//! measured process.
//!
//! Our server is this command again in a child process (`--serve`,
//! hidden), goroutines on the Rust API (`defergc::go::net`); it goes
//! through the same poller as the C ABI's `defergc_net_*`, and a child of
//! our own binary needs no C compiler or library path at run time. Go's is
//! benches/go/echoserver or benches/go/httphello, built with `go build`.
//! Both print `listening on HOST:PORT`, and both are measured from here:
//! the load never shares the server's scheduler.
//!
//! - echo: one plain thread with epoll keeps `--conns` connections each
//!   ping-ponging a 64-byte message for `--secs`; requests/s and the
//!   p50/p99/p99.9 round trip.
//! - http: `wrk -t1 -c<conns> -d<secs>s --latency`; requests/s and wrk's
//!   p50/p90/p99. Without wrk it says SKIPPED and succeeds.
//!
//! Runs alternate (ours, Go's, ours, ...) so both see the same machine.
//! Before the load, each fresh server's resident memory per idle
//! connection: VmRSS before and after `--conns` connections that each made
//! one exchange and then wait.

use super::report::Json;
use super::stats::median;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The two network benchmarks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Echo,
    Http,
}

impl Kind {
    fn id(self) -> &'static str {
        match self {
            Kind::Echo => "echo",
            Kind::Http => "http",
        }
    }

    fn go_program(self) -> &'static str {
        match self {
            Kind::Echo => "benches/go/echoserver/main.go",
            Kind::Http => "benches/go/httphello/main.go",
        }
    }

    /// One exchange: what a client sends and the answer it wants.
    fn exchange(self) -> (&'static [u8], &'static [u8]) {
        match self {
            Kind::Echo => (b"x", b"x"),
            Kind::Http => (b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n", RESPONSE),
        }
    }
}

/// The fixed answer of every HTTP server here.
const RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";

/// The echo benchmark's message size.
const MESSAGE: usize = 64;

/// What the command line asks for.
pub struct Params {
    pub conns: usize,
    pub secs: u32,
    pub runs: u32,
    pub json: bool,
    pub go: bool,
}

/// One run's figures (latencies in microseconds).
#[derive(Clone, Copy, Default)]
struct Figures {
    rps: f64,
    p50: f64,
    p9x: f64,
    p99: f64,
    p999: f64,
}

// ---------------------------------------------------------------- servers

/// `--serve ADDR`: our server, in this process's goroutines, until killed.
pub fn serve(kind: Kind, addr: &str) -> i32 {
    use defergc::go::{self, net::TcpListener};
    let addr = addr.to_string();
    go::main(move || {
        let listener = match TcpListener::bind(addr.as_str()) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("defergc: bench --serve {addr}: {e}");
                std::process::exit(2);
            }
        };
        println!("listening on {}", listener.local_addr().unwrap());
        loop {
            match listener.accept() {
                Ok((conn, _)) => go::go(move || match kind {
                    Kind::Echo => serve_echo(conn),
                    Kind::Http => serve_http(conn),
                }),
                Err(e) => {
                    eprintln!("defergc: bench --serve: accept: {e}");
                    std::process::exit(2);
                }
            }
        }
    })
}

fn serve_echo(conn: defergc::go::net::TcpStream) {
    let mut buf = Box::new_uninit_slice(4096);
    while let Ok(n @ 1..) = conn.read_uninit(&mut buf) {
        // SAFETY: the read initialised its first n bytes.
        let got = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n) };
        if (&conn).write_all(got).is_err() {
            break;
        }
    }
    let _ = conn.close();
}

/// Read until the blank line that ends the headers, answer, loop: the
/// same work as examples/c/http_hello.c and benches/go/httphello. The
/// buffer is on the heap and not initialised, as Go's is (it escapes, and
/// fresh memory is not cleared again): only what reads write becomes
/// resident.
fn serve_http(conn: defergc::go::net::TcpStream) {
    let mut buf = Box::new_uninit_slice(8192);
    let mut have = 0;
    loop {
        // SAFETY: reads initialised the first `have` bytes (the copy below
        // keeps that so).
        let head = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), have) };
        match head.windows(4).position(|w| w == b"\r\n\r\n") {
            Some(end) => {
                if (&conn).write_all(RESPONSE).is_err() {
                    break;
                }
                buf.copy_within(end + 4..have, 0);
                have -= end + 4;
            }
            None if have == buf.len() => break,
            None => match conn.read_uninit(&mut buf[have..]) {
                Ok(n @ 1..) => have += n,
                _ => break,
            },
        }
    }
    let _ = conn.close();
}

/// A server process that prints `listening on HOST:PORT` first; killed
/// when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(mut cmd: Command) -> Result<Server, String> {
        let mut child = cmd
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let Some(addr) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{cmd:?} printed {line:?}, not its address"));
        };
        let addr = addr.to_string();
        Ok(Server { child, addr })
    }

    fn rss_bytes(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0)
            * 1024.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The commands that start a fresh server: ours and (with `--go`) Go's.
struct Servers {
    kind: Kind,
    go_exe: Option<std::path::PathBuf>,
}

impl Servers {
    fn new(kind: Kind, go: bool) -> Result<Servers, String> {
        let go_exe = if go { Some(build_go(kind)?) } else { None };
        Ok(Servers { kind, go_exe })
    }

    fn impls(&self) -> Vec<&'static str> {
        let mut v = vec!["defergc"];
        if self.go_exe.is_some() {
            v.push("go");
        }
        v
    }

    fn start(&self, which: &str) -> Result<Server, String> {
        let cmd = if which == "go" {
            let mut c = Command::new(self.go_exe.as_ref().unwrap());
            c.arg("127.0.0.1:0");
            c
        } else {
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let mut c = Command::new(exe);
            c.args(["bench", self.kind.id(), "--serve", "127.0.0.1:0"]);
            c
        };
        Server::start(cmd)
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        if let Some(exe) = &self.go_exe {
            let _ = std::fs::remove_dir_all(exe.parent().unwrap());
        }
    }
}

/// `go build`s the Go server into a directory of its own.
fn build_go(kind: Kind) -> Result<std::path::PathBuf, String> {
    let program = kind.go_program();
    if !std::path::Path::new(program).is_file() {
        return Err(format!(
            "run from the repository root ({program} not found)"
        ));
    }
    let dir = std::env::temp_dir().join(format!("defergc-netbench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let exe = dir.join(kind.id());
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&exe)
        .arg(program)
        .output()
        .map_err(|e| format!("cannot run go (apt-get install golang-go): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "go build {program}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(exe)
}

// ------------------------------------------------------------ the driver

pub fn run(kind: Kind, p: &Params) -> i32 {
    match drive(kind, p) {
        Ok(status) => status,
        Err(why) => {
            eprintln!("defergc: bench {}: {why}", kind.id());
            2
        }
    }
}

fn drive(kind: Kind, p: &Params) -> Result<i32, String> {
    if kind == Kind::Http && !have_wrk() {
        println!("SKIPPED bench http: wrk is not installed (apt-get install wrk)");
        return Ok(0);
    }
    raise_open_files(p.conns)?;
    let servers = Servers::new(kind, p.go)?;
    let impls = servers.impls();
    let mut rss = Vec::new();
    let mut runs: Vec<Vec<Figures>> = vec![Vec::new(); impls.len()];
    for (i, which) in impls.iter().enumerate() {
        let server = servers.start(which)?;
        rss.push(rss_per_idle_conn(kind, &server, p.conns)?);
        runs[i].reserve(p.runs as usize);
    }
    for r in 0..p.runs {
        for (i, which) in impls.iter().enumerate() {
            let server = servers.start(which)?;
            let f = match kind {
                Kind::Echo => echo_load(&server.addr, p.conns, p.secs)?,
                Kind::Http => wrk_load(&server.addr, p.conns, p.secs)?,
            };
            if !p.json {
                eprintln!(
                    "  {which} run {}/{}: {:.0} req/s, p50 {:.0} us, p99 {:.0} us",
                    r + 1,
                    p.runs,
                    f.rps,
                    f.p50,
                    f.p99
                );
            }
            runs[i].push(f);
        }
    }
    let med =
        |v: &[Figures], f: fn(&Figures) -> f64| median(&mut v.iter().map(f).collect::<Vec<_>>());
    let rows: Vec<(Figures, f64)> = runs
        .iter()
        .zip(&rss)
        .map(|(v, &rss)| {
            let m = Figures {
                rps: med(v, |f| f.rps),
                p50: med(v, |f| f.p50),
                p9x: med(v, |f| f.p9x),
                p99: med(v, |f| f.p99),
                p999: med(v, |f| f.p999),
            };
            (m, rss)
        })
        .collect();
    if p.json {
        for ((which, (m, rss)), v) in impls.iter().zip(&rows).zip(&runs) {
            let rps: Vec<f64> = v.iter().map(|f| f.rps).collect();
            let mut j = Json::new()
                .str("bench", kind.id())
                .str("impl", which)
                .str("unit", "req/s")
                .num("conns", p.conns as f64)
                .num("secs", f64::from(p.secs))
                .nums("runs", &rps)
                .num("median", m.rps)
                .num("p50_us", m.p50);
            j = match kind {
                Kind::Echo => j.num("p99_us", m.p99).num("p999_us", m.p999),
                Kind::Http => j.num("p90_us", m.p9x).num("p99_us", m.p99),
            };
            println!("{}", j.num("rss_per_idle_conn_bytes", rss.round()));
        }
        return Ok(0);
    }
    print!("{}", table(kind, p, &impls, &rows));
    Ok(0)
}

fn table(kind: Kind, p: &Params, impls: &[&str], rows: &[(Figures, f64)]) -> String {
    let what = match kind {
        Kind::Echo => format!("{MESSAGE}-byte ping-pong, our epoll client"),
        Kind::Http => "wrk -t1, keep-alive".to_string(),
    };
    let (mid, tail) = match kind {
        Kind::Echo => ("p99 us", "p99.9 us"),
        Kind::Http => ("p90 us", "p99 us"),
    };
    let mut t = format!(
        "{} ({} connections, {what}, {} s a run, median of {} runs each)\n",
        kind.id(),
        p.conns,
        p.secs,
        p.runs
    );
    t.push_str(&format!(
        "  {:<8} {:>10} {:>9} {:>9} {:>9} {:>14}\n",
        "", "req/s", "p50 us", mid, tail, "RSS/idle conn"
    ));
    for (which, (m, rss)) in impls.iter().zip(rows) {
        let (a, b) = match kind {
            Kind::Echo => (m.p99, m.p999),
            Kind::Http => (m.p9x, m.p99),
        };
        t.push_str(&format!(
            "  {:<8} {:>10.0} {:>9.0} {:>9.0} {:>9.0} {:>8.1} KiB\n",
            which,
            m.rps,
            m.p50,
            a,
            b,
            rss / 1024.0
        ));
    }
    if rows.len() == 2 && rows[1].0.rps > 0.0 {
        t.push_str(&format!(
            "  defergc / go: {:.2}x the requests/s\n",
            rows[0].0.rps / rows[1].0.rps
        ));
    }
    t
}

fn have_wrk() -> bool {
    Command::new("wrk")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Raises the soft open-file limit to the hard one (children inherit it):
/// each connection is a descriptor here and one in the server.
fn raise_open_files(conns: usize) -> Result<(), String> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    lim.rlim_cur = lim.rlim_max;
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    let want = conns as u64 + 64;
    if lim.rlim_cur < want {
        return Err(format!(
            "{conns} connections want {want} open files, the hard limit is {}",
            lim.rlim_cur
        ));
    }
    Ok(())
}

/// Opens `conns` connections, each makes one exchange (checked byte for
/// byte) and then waits; the server's VmRSS growth divided by `conns`.
fn rss_per_idle_conn(kind: Kind, server: &Server, conns: usize) -> Result<f64, String> {
    let settle = Duration::from_millis(300);
    std::thread::sleep(settle);
    let before = server.rss_bytes();
    let (ask, want) = kind.exchange();
    let mut open = Vec::with_capacity(conns);
    let mut got = vec![0u8; want.len()];
    for _ in 0..conns {
        let mut c = std::net::TcpStream::connect(&server.addr).map_err(|e| e.to_string())?;
        c.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        c.write_all(ask).map_err(|e| e.to_string())?;
        c.read_exact(&mut got).map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!(
                "the server answered {:?}",
                String::from_utf8_lossy(&got)
            ));
        }
        open.push(c);
    }
    std::thread::sleep(settle);
    let after = server.rss_bytes();
    Ok((after - before).max(0.0) / conns as f64)
}

/// Connects `conns` non-blocking, no-delay connections.
fn connect_all(addr: &str, conns: usize) -> Result<Vec<std::net::TcpStream>, String> {
    (0..conns)
        .map(|_| {
            let c = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
            c.set_nodelay(true).map_err(|e| e.to_string())?;
            c.set_nonblocking(true).map_err(|e| e.to_string())?;
            Ok(c)
        })
        .collect()
}

/// The echo load: every connection sends a message, waits for all of it
/// back, records the round trip and sends again, for `secs`; one thread,
/// level-triggered epoll.
fn echo_load(addr: &str, conns: usize, secs: u32) -> Result<Figures, String> {
    let streams = connect_all(addr, conns)?;
    // SAFETY: epoll_create1 takes no pointers.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    let result = echo_loop(ep, &streams, secs);
    // SAFETY: ep is our descriptor, closed once.
    unsafe { libc::close(ep) };
    result
}

fn echo_loop(ep: i32, streams: &[std::net::TcpStream], secs: u32) -> Result<Figures, String> {
    let message = [b'e'; MESSAGE];
    let mut got = vec![0usize; streams.len()];
    let mut sent = vec![Instant::now(); streams.len()];
    let mut lat: Vec<u32> = Vec::with_capacity(1 << 20);
    let mut buf = [0u8; MESSAGE];
    let send = |s: &std::net::TcpStream| -> Result<(), String> {
        match (&*s).write(&message) {
            Ok(MESSAGE) => Ok(()),
            Ok(n) => Err(format!("a {MESSAGE}-byte write took {n} bytes")),
            Err(e) => Err(e.to_string()),
        }
    };
    for (i, s) in streams.iter().enumerate() {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        // SAFETY: ep and the stream's descriptor are open; ev is read.
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) } != 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
    }
    let start = Instant::now();
    for (i, s) in streams.iter().enumerate() {
        sent[i] = Instant::now();
        send(s)?;
    }
    let end = start + Duration::from_secs(u64::from(secs));
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut now = Instant::now();
    while now < end {
        // SAFETY: events has room for the count we pass.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, 100) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e.to_string());
        }
        now = Instant::now();
        for ev in &events[..n as usize] {
            let i = ev.u64 as usize;
            let s = &streams[i];
            match (&*s).read(&mut buf[..MESSAGE - got[i]]) {
                Ok(0) => return Err("the server closed a connection".into()),
                Ok(k) => got[i] += k,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e.to_string()),
            }
            if got[i] == MESSAGE {
                got[i] = 0;
                let us = (now - sent[i]).as_nanos() / 1000;
                lat.push(u32::try_from(us).unwrap_or(u32::MAX));
                sent[i] = now;
                send(s)?;
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    lat.sort_unstable();
    let pct = |q: f64| -> f64 {
        if lat.is_empty() {
            return f64::NAN;
        }
        f64::from(lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)])
    };
    Ok(Figures {
        rps: lat.len() as f64 / elapsed,
        p50: pct(0.50),
        p9x: pct(0.90),
        p99: pct(0.99),
        p999: pct(0.999),
    })
}

/// `wrk -t1 -c<conns> -d<secs>s --latency`: its requests/s and latency
/// distribution; an error if an answer was not 2xx. Socket errors
/// (connect, timeout) are said on stderr: the figures count only answers.
fn wrk_load(addr: &str, conns: usize, secs: u32) -> Result<Figures, String> {
    let out = Command::new("wrk")
        .args([
            "-t1",
            &format!("-c{conns}"),
            &format!("-d{secs}s"),
            "--latency",
        ])
        .arg(format!("http://{addr}/"))
        .output()
        .map_err(|e| format!("wrk: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "wrk failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    if let Some(errors) = text.lines().find(|l| l.contains("Socket errors")) {
        eprintln!("  wrk against {addr}: {}", errors.trim());
    }
    parse_wrk(&text).ok_or_else(|| format!("cannot read wrk's report:\n{text}"))
}

/// Reads wrk's `--latency` report (None if an answer was not 2xx).
fn parse_wrk(text: &str) -> Option<Figures> {
    if text.contains("Non-2xx or 3xx responses") {
        return None;
    }
    let field = |key: &str| -> Option<&str> {
        text.lines()
            .find_map(|l| l.trim_start().strip_prefix(key))
            .map(str::trim)
    };
    let us = |v: &str| -> Option<f64> {
        let (num, scale) = if let Some(n) = v.strip_suffix("us") {
            (n, 1.0)
        } else if let Some(n) = v.strip_suffix("ms") {
            (n, 1e3)
        } else if let Some(n) = v.strip_suffix('s') {
            (n, 1e6)
        } else {
            return None;
        };
        num.parse::<f64>().ok().map(|x| x * scale)
    };
    Some(Figures {
        rps: field("Requests/sec:")?.parse().ok()?,
        p50: us(field("50%")?)?,
        p9x: us(field("90%")?)?,
        p99: us(field("99%")?)?,
        p999: f64::NAN,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrk_report_is_read() {
        let text = "Running 5s test @ http://127.0.0.1:1/\n  1 threads and 100 connections\n  Latency Distribution\n     50%  520.00us\n     75%    1.10ms\n     90%    2.50ms\n     99%    1.20s\n  100 requests in 5.00s, 1 KB read\nRequests/sec:  20.50\nTransfer/sec: 1KB\n";
        let f = parse_wrk(text).unwrap();
        assert_eq!(f.rps, 20.5);
        assert_eq!(f.p50, 520.0);
        assert_eq!(f.p9x, 2500.0);
        assert_eq!(f.p99, 1.2e6);
    }
}
