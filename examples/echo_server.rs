//! A TCP echo server on the runtime's goroutines and network poller
//! (`defergc::go::net`): one goroutine per connection, reads and writes
//! written as if they blocked; a goroutine waiting for bytes parks on the
//! poller, not its worker thread. The same program as
//! examples/c/echo_server.c and benches/go/echoserver.
//!
//! Run it with `cargo run --release --example echo_server -- 127.0.0.1:7000`;
//! it prints `listening on HOST:PORT` once it accepts (port 0 picks one).

use defergc::go::{self, net::TcpListener, net::TcpStream};
use std::io::{Read, Write};

fn serve(mut conn: TcpStream) {
    let mut buf = [0u8; 4096];
    loop {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if conn.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = conn.close();
}

fn main() {
    let Some(addr) = std::env::args().nth(1) else {
        eprintln!("usage: echo_server HOST:PORT");
        std::process::exit(2);
    };
    std::process::exit(go::main(move || {
        let listener = TcpListener::bind(addr.as_str()).unwrap_or_else(|e| {
            eprintln!("{addr}: {e}");
            std::process::exit(1);
        });
        println!("listening on {}", listener.local_addr().unwrap());
        loop {
            match listener.accept() {
                Ok((conn, _)) => go::go(move || serve(conn)),
                Err(e) => {
                    eprintln!("accept: {e}");
                    std::process::exit(1);
                }
            }
        }
    }));
}
