//! The network examples of examples/c, compiled against this build and
//! talked to over loopback: each server is started on a port of its
//! choosing, a few connections make a few exchanges each, every answer is
//! checked byte for byte, and every wait is bounded.

mod cprog;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long any single read or write may wait.
const LIMIT: Duration = Duration::from_secs(20);

/// A server example, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(name: &str, source: &str) -> Server {
        let exe = cprog::compile(name, &[source], &[]);
        let mut child = Command::new(exe)
            .arg("127.0.0.1:0")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // The first line says where it listens (read on a thread: a
        // server that never prints fails the test instead of hanging it).
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(LIMIT).unwrap_or_default();
        let Some(addr) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            panic!("{name} printed {line:?}, not its address");
        };
        Server {
            addr: addr.to_string(),
            child,
        }
    }

    fn connect(&self) -> TcpStream {
        let c = TcpStream::connect(&self.addr).unwrap();
        c.set_read_timeout(Some(LIMIT)).unwrap();
        c.set_write_timeout(Some(LIMIT)).unwrap();
        c
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `ask` on `c` and wants exactly `want` back.
fn exchange(c: &mut TcpStream, ask: &[u8], want: &[u8]) {
    c.write_all(ask).unwrap();
    let mut got = vec![0u8; want.len()];
    c.read_exact(&mut got).unwrap();
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
}

#[test]
fn the_c_echo_server_echoes_on_every_connection() {
    let server = Server::start("echo_server", "examples/c/echo_server.c");
    let mut conns: Vec<TcpStream> = (0..8).map(|_| server.connect()).collect();
    for round in 0..10u8 {
        for (i, c) in conns.iter_mut().enumerate() {
            let message: Vec<u8> = (0..100).map(|k| k ^ round ^ i as u8).collect();
            exchange(c, &message, &message);
        }
    }
    // A message larger than the server's buffer comes back whole.
    let big: Vec<u8> = (0..100_000u32).map(|k| (k % 251) as u8).collect();
    let mut c = server.connect();
    let writer = {
        let mut w = c.try_clone().unwrap();
        let big = big.clone();
        std::thread::spawn(move || w.write_all(&big).unwrap())
    };
    let mut got = vec![0u8; big.len()];
    c.read_exact(&mut got).unwrap();
    writer.join().unwrap();
    assert!(got == big, "the large message came back altered");
}

const RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";

#[test]
fn the_c_http_server_answers_keep_alive_requests() {
    let server = Server::start("http_hello", "examples/c/http_hello.c");
    let request = b"GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\n\r\n";
    let mut conns: Vec<TcpStream> = (0..4).map(|_| server.connect()).collect();
    for _ in 0..10 {
        for c in &mut conns {
            exchange(c, request, RESPONSE);
        }
    }
    // Two requests in one write (pipelined) get two answers, and a
    // request split across writes gets one.
    let c = &mut conns[0];
    let two = [&request[..], &request[..]].concat();
    exchange(c, &two, &[RESPONSE, RESPONSE].concat());
    c.write_all(&request[..10]).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    exchange(c, &request[10..], RESPONSE);
}
