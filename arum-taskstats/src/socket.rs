//! A netlink socket as both interfaces use it: non-blocking, a large receive buffer, and reads
//! that tell an overflow apart from an empty queue.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use netlink_packet_core::NetlinkBuffer;
use netlink_sys::{Socket, SocketAddr};

/// Receive buffer asked for. Exit records are about 1 KiB each in the kernel's accounting: this
/// holds tens of thousands while the reader is descheduled. Privileged callers get it whatever
/// net.core.rmem_max says (SO_RCVBUFFORCE); others get rmem_max at most.
const RECEIVE_BUFFER: usize = 64 << 20;

/// What one drain of a socket brought.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Messages read.
    pub messages: usize,
    /// The kernel dropped messages since the last read: its queue for this socket was full.
    pub overflowed: bool,
}

pub(crate) struct NlSocket {
    socket: Socket,
    buf: Vec<u8>,
}

impl NlSocket {
    /// A socket of `protocol`, bound to the kernel-assigned port and to `groups`.
    pub fn open(protocol: isize, groups: u32) -> io::Result<NlSocket> {
        let mut socket = Socket::new(protocol)?;
        socket.bind(&SocketAddr::new(0, groups))?;
        enlarge_receive_buffer(socket.as_fd());
        Ok(NlSocket {
            socket,
            buf: vec![0; 64 << 10],
        })
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }

    pub fn send(&self, message: &[u8]) -> io::Result<()> {
        let kernel = SocketAddr::new(0, 0);
        self.socket.send_to(message, &kernel, 0).map(drop)
    }

    /// Reads one datagram, waiting for it if `wait`. `Ok(None)`: nothing queued. An overflow is
    /// `Err` of kind `ENOBUFS`, and the socket stays usable.
    pub fn recv(&mut self, wait: bool) -> io::Result<Option<&[u8]>> {
        let flags = if wait { 0 } else { libc::MSG_DONTWAIT };
        let mut slice = &mut self.buf[..];
        match self.socket.recv(&mut slice, flags) {
            Ok(n) => Ok(Some(&self.buf[..n.min(self.buf.len())])),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Drains every queued datagram, handing each netlink message (header and payload) to `each`.
    pub fn drain(&mut self, mut each: impl FnMut(&[u8])) -> Received {
        let mut got = Received::default();
        loop {
            match self.recv(false) {
                Ok(Some(datagram)) => got.messages += for_each_message(datagram, &mut each),
                Ok(None) => return got,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => got.overflowed = true,
                Err(_) => return got,
            }
        }
    }
}

/// The netlink messages of one datagram (a datagram may carry several), each whole.
pub(crate) fn for_each_message(mut datagram: &[u8], each: &mut impl FnMut(&[u8])) -> usize {
    let mut n = 0;
    while let Ok(msg) = NetlinkBuffer::new_checked(datagram) {
        let len = msg.length() as usize;
        each(&datagram[..len]);
        n += 1;
        // Messages are 4-byte aligned within a datagram.
        let next = len.div_ceil(4) * 4;
        if len == 0 || next >= datagram.len() {
            break;
        }
        datagram = &datagram[next..];
    }
    n
}

fn enlarge_receive_buffer(fd: BorrowedFd<'_>) {
    use rustix::net::sockopt::{set_socket_recv_buffer_size, set_socket_recv_buffer_size_force};
    // The size asked for is as large as the kernel allows; a refusal leaves the default.
    let _ = set_socket_recv_buffer_size_force(fd, RECEIVE_BUFFER)
        .or_else(|_| set_socket_recv_buffer_size(fd, RECEIVE_BUFFER));
}
