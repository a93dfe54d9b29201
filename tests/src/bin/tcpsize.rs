//! A tiny TCP server and client with known behaviour, for `arum suite` tests.
//!
//! `tcpsize serve PORT`: listens on 127.0.0.1:PORT; each connection sends a decimal byte count
//! and a newline and gets that many bytes back, then the connection closes. Runs until killed.
//! `tcpsize get PORT BYTES`: asks 127.0.0.1:PORT for BYTES bytes; exits 0 only when exactly
//! that many came back.
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};

fn serve(port: u16) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).expect("bind");
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        std::thread::spawn(move || {
            let mut reader = BufReader::new(&conn);
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                return;
            }
            let Ok(n) = line.trim().parse::<usize>() else {
                return;
            };
            let block = [b'x'; 65536];
            let mut left = n;
            let mut w = &conn;
            while left > 0 {
                let k = left.min(block.len());
                if w.write_all(&block[..k]).is_err() {
                    return;
                }
                left -= k;
            }
        });
    }
}

fn get(port: u16, bytes: usize) -> bool {
    let Ok(mut s) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) else {
        eprintln!("tcpsize: cannot connect to 127.0.0.1:{port}");
        return false;
    };
    if s.write_all(format!("{bytes}\n").as_bytes()).is_err() {
        return false;
    }
    let mut got = 0usize;
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(_) => return false,
        }
    }
    got == bytes
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = args.get(2).and_then(|p| p.parse().ok()).expect("PORT");
    match args.get(1).map(String::as_str) {
        Some("serve") => serve(port),
        Some("get") => {
            let bytes = args.get(3).and_then(|b| b.parse().ok()).expect("BYTES");
            std::process::exit(if get(port, bytes) { 0 } else { 1 });
        }
        _ => {
            eprintln!("usage: tcpsize serve PORT | tcpsize get PORT BYTES");
            std::process::exit(2);
        }
    }
}
