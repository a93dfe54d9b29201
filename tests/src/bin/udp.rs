//! `udp K`: sends K datagrams of 32 bytes to itself over loopback and receives each one.
use std::net::UdpSocket;

fn main() {
    let k: u32 = arum_tests::arg(1, 1000);
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap();
    let payload = [7u8; 32];
    let mut buf = [0u8; 64];
    for _ in 0..k {
        tx.send_to(&payload, to).unwrap();
        let (n, _) = rx.recv_from(&mut buf).unwrap();
        assert_eq!(n, 32);
    }
}
