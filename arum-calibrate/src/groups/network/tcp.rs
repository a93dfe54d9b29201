//! The TCP measurements, against a server thread of ours: round trip of a 32-byte message,
//! connection set-up and tear-down, and bulk bandwidth. Every socket has time-outs and every
//! loop a bound, so nothing here can hang on a lost peer.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::context::{skipped, Context, Entry};
use crate::model::Measurement;
use crate::stats::repeat::Limits;

const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// The server gives up after this long whatever happens.
const SERVER_LIFETIME: Duration = Duration::from_secs(600);
pub const MESSAGE: usize = 32;
/// TIME_WAIT sockets pile up with every connection the client closes; stay well below the
/// ephemeral port range.
const MAX_CONNECTIONS: usize = 2000;

/// An echo/sink server on its own thread.
pub struct Server {
    addr: mpsc::Receiver<io::Result<SocketAddr>>,
    known: Option<SocketAddr>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts the server thread on `cpu`: `setup` runs on it first (to enter a network
    /// namespace, say) and returns the address to listen on.
    pub fn spawn(
        cpu: usize,
        setup: impl FnOnce() -> io::Result<SocketAddr> + Send + 'static,
    ) -> Server {
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let handle = std::thread::spawn(move || {
            let _ = crate::sys::cpu::pin_thread(cpu);
            let listener = setup().and_then(TcpListener::bind).and_then(|l| {
                l.set_nonblocking(true)?;
                Ok(l)
            });
            match listener {
                Ok(l) => {
                    let _ = tx.send(l.local_addr());
                    serve(&l, &stop2);
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        });
        Server {
            addr: rx,
            known: None,
            stop,
            handle: Some(handle),
        }
    }

    /// The address the server listens on, once it does (waits up to 30 s).
    pub fn addr(&mut self) -> io::Result<SocketAddr> {
        if let Some(a) = self.known {
            return Ok(a);
        }
        let a = self
            .addr
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| io::Error::other("the server thread did not start"))??;
        self.known = Some(a);
        Ok(a)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn serve(listener: &TcpListener, stop: &AtomicBool) {
    let end = Instant::now() + SERVER_LIFETIME;
    while !stop.load(Ordering::Acquire) && Instant::now() < end {
        match listener.accept() {
            Ok((conn, _)) => {
                let _ = handle(conn);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                // Wait for a connection, waking every 50 ms to look at the stop flag.
                let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
                let _ = poll(&mut fds, PollTimeout::from(50u16));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// One connection: nothing (set-up/tear-down tests), `E` then echo 32-byte messages, or `B`
/// then (8-byte length, that many bytes, one byte back) repeatedly; until end of file.
fn handle(mut c: TcpStream) -> io::Result<()> {
    c.set_nonblocking(false)?;
    c.set_read_timeout(Some(IO_TIMEOUT))?;
    c.set_write_timeout(Some(IO_TIMEOUT))?;
    c.set_nodelay(true)?;
    let mut mode = [0u8; 1];
    if c.read(&mut mode)? == 0 {
        return Ok(());
    }
    match mode[0] {
        b'E' => {
            let mut m = [0u8; MESSAGE];
            while c.read_exact(&mut m).is_ok() {
                c.write_all(&m)?;
            }
        }
        b'B' => {
            let mut buf = vec![0u8; 256 * 1024];
            let mut len = [0u8; 8];
            while c.read_exact(&mut len).is_ok() {
                let mut left = u64::from_le_bytes(len);
                while left > 0 {
                    let want = left.min(buf.len() as u64) as usize;
                    let n = c.read(&mut buf[..want])?;
                    if n == 0 {
                        return Ok(());
                    }
                    left -= n as u64;
                }
                c.write_all(&[1])?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn client(addr: SocketAddr, mode: u8) -> io::Result<TcpStream> {
    let mut s = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    s.write_all(&[mode])?;
    Ok(s)
}

/// Round trips of a 32-byte message, each timed.
pub fn rtt(ctx: &mut Context, entry: &Entry, addr: SocketAddr) -> Measurement {
    let mut s = match client(addr, b'E') {
        Ok(s) => s,
        Err(e) => return skipped(entry, None, format!("connecting to {addr}: {e}")),
    };
    let clock = ctx.clock.clone();
    let l = ctx.limits(1);
    let msg = [0x5au8; MESSAGE];
    let mut back = [0u8; MESSAGE];
    let mut m = ctx.measure(entry, None, 1, &l, |samples| {
        for _ in 0..20 {
            let (ns, r) = clock.single(|| {
                s.write_all(&msg)?;
                s.read_exact(&mut back)
            });
            r.map_err(|e| format!("echo from {addr}: {e}"))?;
            samples.push(ns);
        }
        Ok::<_, String>(())
    });
    m.notes.push(format!("server {addr}"));
    m
}

fn socket_for(addr: SocketAddr) -> io::Result<Socket> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    Ok(s)
}

fn capped(mut l: Limits) -> Limits {
    l.max_samples = l.max_samples.min(MAX_CONNECTIONS);
    l
}

/// connect(2) on a socket created beforehand: the three-way handshake.
pub fn connect(ctx: &mut Context, entry: &Entry, addr: SocketAddr) -> Measurement {
    let clock = ctx.clock.clone();
    let l = capped(ctx.limits(1));
    let target = SockAddr::from(addr);
    ctx.measure(entry, None, 1, &l, |s| {
        let sock = socket_for(addr).map_err(|e| format!("socket: {e}"))?;
        let (ns, r) = clock.single(|| sock.connect(&target));
        r.map_err(|e| format!("connect to {addr}: {e}"))?;
        s.push(ns);
        Ok::<_, String>(())
    })
}

/// close(2) of a connected socket (the kernel sends the FIN; the peer's answer is not awaited).
pub fn close(ctx: &mut Context, entry: &Entry, addr: SocketAddr) -> Measurement {
    let clock = ctx.clock.clone();
    let l = capped(ctx.limits(1));
    let target = SockAddr::from(addr);
    ctx.measure(entry, None, 1, &l, |s| {
        let sock = socket_for(addr).map_err(|e| format!("socket: {e}"))?;
        sock.connect(&target)
            .map_err(|e| format!("connect to {addr}: {e}"))?;
        let (ns, ()) = clock.single(|| drop(sock));
        s.push(ns);
        Ok::<_, String>(())
    })
}

/// Bulk transfer of `bytes` per sample until the receiver's one-byte acknowledgement.
pub fn bandwidth(ctx: &mut Context, entry: &Entry, addr: SocketAddr, bytes: u64) -> Measurement {
    let mut s = match client(addr, b'B') {
        Ok(s) => s,
        Err(e) => return skipped(entry, None, format!("connecting to {addr}: {e}")),
    };
    let clock = ctx.clock.clone();
    let l = ctx.limits(1);
    let chunk = vec![0xa5u8; 256 * 1024];
    let mut retaken = 0;
    let mut m = ctx.measure(entry, None, 1, &l, |samples| {
        let ((r, t0, t1), p) = crate::clock::unpreempted(3, || {
            let t0 = arum_tsc::begin();
            let r = (|| {
                s.write_all(&bytes.to_le_bytes())?;
                let mut left = bytes;
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    s.write_all(&chunk[..n])?;
                    left -= n as u64;
                }
                let mut ack = [0u8; 1];
                s.read_exact(&mut ack)
            })();
            (r, t0, arum_tsc::end())
        });
        retaken += p;
        r.map_err(|e| format!("sending to {addr}: {e}"))?;
        samples.push(bytes as f64 / clock.elapsed_ns(t0, t1) * 1e9);
        Ok::<_, String>(())
    });
    m.details.insert("bytes_per_sample".into(), bytes as f64);
    m.details
        .insert("preempted_samples_retaken".into(), retaken as f64);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_echoes_and_acknowledges_bulk_data() {
        let mut server = Server::spawn(0, || Ok("127.0.0.1:0".parse().unwrap()));
        let addr = server.addr().unwrap();
        let mut e = client(addr, b'E').unwrap();
        e.write_all(&[7u8; MESSAGE]).unwrap();
        let mut back = [0u8; MESSAGE];
        e.read_exact(&mut back).unwrap();
        assert_eq!(back, [7u8; MESSAGE]);
        drop(e);
        let mut b = client(addr, b'B').unwrap();
        b.write_all(&1000u64.to_le_bytes()).unwrap();
        b.write_all(&[0u8; 1000]).unwrap();
        let mut ack = [0u8; 1];
        b.read_exact(&mut ack).unwrap();
        assert_eq!(ack, [1]);
    }
}
