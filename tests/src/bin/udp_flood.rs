//! `udp_flood PACKETS SECONDS`: a UDP sender and a receiver on 127.0.0.1 (meant to run in a
//! network namespace the test made), flooding 64-byte datagrams until PACKETS were sent or
//! SECONDS passed, whichever comes first. Prints "sent N received M".
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let packets: u64 = arum_tests::arg(1, 1_000_000);
    let secs: f64 = arum_tests::arg(2, 2.0);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let rx = UdpSocket::bind("127.0.0.1:0").expect("bind the receiver");
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .expect("receive timeout");
    let to = rx.local_addr().expect("receiver address");
    let done = Arc::new(AtomicBool::new(false));
    let receiver = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 128];
            let mut got = 0u64;
            // Bounded by the sender's end (plus one timeout) and by the deadline.
            while Instant::now() < end + Duration::from_secs(1) {
                match rx.recv(&mut buf) {
                    Ok(_) => got += 1,
                    Err(_) if done.load(Ordering::Relaxed) => break,
                    Err(_) => {}
                }
            }
            got
        })
    };
    let tx = UdpSocket::bind("127.0.0.1:0").expect("bind the sender");
    let payload = [0x5au8; 64];
    let mut sent = 0u64;
    while sent < packets && Instant::now() < end {
        // A full socket buffer drops the datagram (ENOBUFS or silently): count what left.
        if tx.send_to(&payload, to).is_ok() {
            sent += 1;
        }
    }
    done.store(true, Ordering::Relaxed);
    let received = receiver.join().expect("receiver");
    println!("sent {sent} received {received}");
}
