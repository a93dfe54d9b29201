//! A second network namespace reached over a veth pair, made by this command and gone with it.
//!
//! The namespace belongs to a server thread that unshares its network namespace: no name is
//! bound under /run/netns, so when the thread ends (or the process dies, however) the
//! namespace has no user left, the kernel destroys it, and destroying a namespace deletes the
//! veth end inside it and with it the whole pair. The host side is also deleted explicitly.
//!
//! ```text
//!   main thread                         server thread
//!   spawn ───────────────────────────▶  unshare(CLONE_NEWNET), send own tid
//!   ip link add H type veth
//!      peer name N netns <tid>
//!   ip addr add A.1/30 dev H; up
//!   "go" ────────────────────────────▶  ip addr add A.2/30 dev N; up; lo up
//!                                       bind A.2:0, serve
//!   measure to A.2 ... drop ─────────▶  stop; thread ends → namespace and pair destroyed
//!   ip link del H (if still there)
//! ```

use std::net::{Ipv4Addr, SocketAddr};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::tcp::Server;
use crate::sys::cpu::{thread_id, unshare_network};

/// The veth pair and the server in the other namespace.
pub struct Veth {
    pub host_if: String,
    pub host_addr: Ipv4Addr,
    pub peer_addr: Ipv4Addr,
    server: Option<Server>,
    pub server_addr: SocketAddr,
    netem: bool,
}

/// Runs `ip`/`tc` with `args`; the error carries the command and its message.
fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {cmd}: {e} (install iproute2)"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{cmd} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Why this process cannot make namespaces, if it cannot.
pub fn unavailable() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some(
            "creating a network namespace and a veth pair needs root (CAP_SYS_ADMIN and \
             CAP_NET_ADMIN); measured loopback only"
                .into(),
        );
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("the ip command (iproute2) is missing; measured loopback only".into());
    }
    None
}

/// A /30 in 198.18.0.0/15 (reserved for benchmarking, RFC 2544) that no interface here uses,
/// chosen from the process id so concurrent runs do not collide.
fn free_subnet() -> Ipv4Addr {
    let used = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let base = u32::from(Ipv4Addr::new(198, 18, 0, 0));
    let start = std::process::id() % 32768;
    for k in 0..64 {
        let net = Ipv4Addr::from(base + ((start + k * 7) % 32768) * 4);
        let o = net.octets();
        let prefix = format!("inet {}.{}.{}.", o[0], o[1], o[2]);
        let taken = used.lines().any(|l| {
            l.split_once(&prefix).is_some_and(|(_, rest)| {
                rest.split(['/', ' '])
                    .next()
                    .and_then(|x| x.parse::<u32>().ok())
                    .is_some_and(|x| x / 4 == u32::from(o[3]) / 4)
            })
        });
        if !taken {
            return net;
        }
    }
    Ipv4Addr::from(base + start * 4)
}

impl Veth {
    /// Creates the pair and starts the server in the other namespace, on `server_cpu`.
    pub fn create(server_cpu: usize) -> Result<Veth, String> {
        if let Some(why) = unavailable() {
            return Err(why);
        }
        let net = u32::from(free_subnet());
        let (host_addr, peer_addr) = (Ipv4Addr::from(net + 1), Ipv4Addr::from(net + 2));
        let tag = std::process::id() % 1_000_000;
        let host_if = format!("arum{tag}h");
        let peer_if = format!("arum{tag}n");

        let (tid_tx, tid_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<bool>();
        let peer_if2 = peer_if.clone();
        let mut server = Server::spawn(server_cpu, move || {
            let setup = || -> Result<SocketAddr, String> {
                unshare_network().map_err(|e| format!("unshare(CLONE_NEWNET): {e}"))?;
                let _ = tid_tx.send(thread_id());
                if !go_rx.recv_timeout(Duration::from_secs(30)).unwrap_or(false) {
                    return Err("the host side of the veth pair was not set up".into());
                }
                // Commands started from this thread run in its namespace.
                let cidr = format!("{peer_addr}/30");
                run("ip", &["addr", "add", &cidr, "dev", &peer_if2])?;
                run("ip", &["link", "set", &peer_if2, "up"])?;
                run("ip", &["link", "set", "lo", "up"])?;
                Ok(SocketAddr::from((peer_addr, 0)))
            };
            setup().map_err(std::io::Error::other)
        });

        let host_side = || -> Result<(), String> {
            let tid = tid_rx
                .recv_timeout(Duration::from_secs(10))
                .map_err(|_| "the namespace thread did not start".to_string())?;
            let tid = tid.to_string();
            run(
                "ip",
                &[
                    "link", "add", &host_if, "type", "veth", "peer", "name", &peer_if, "netns",
                    &tid,
                ],
            )?;
            run(
                "ip",
                &["addr", "add", &format!("{host_addr}/30"), "dev", &host_if],
            )?;
            run("ip", &["link", "set", &host_if, "up"])
        };
        let done = host_side();
        let _ = go_tx.send(done.is_ok());
        let addr = server.addr();
        let mut veth = Veth {
            host_if,
            host_addr,
            peer_addr,
            server: Some(server),
            server_addr: SocketAddr::from((peer_addr, 0)),
            netem: false,
        };
        done?;
        veth.server_addr = addr.map_err(|e| e.to_string())?;
        veth.wait_reachable()?;
        Ok(veth)
    }

    /// The link comes up a moment after both ends are set up: try to connect for up to 5 s.
    fn wait_reachable(&self) -> Result<(), String> {
        let end = Instant::now() + Duration::from_secs(5);
        loop {
            match std::net::TcpStream::connect_timeout(&self.server_addr, Duration::from_secs(1)) {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() >= end => {
                    return Err(format!(
                        "{} not reachable over the veth pair: {e}",
                        self.server_addr
                    ))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Whether the kernel has `tc netem`, tried on our own device (added, then removed).
    pub fn netem_available(&self) -> Result<(), String> {
        run("tc", &["qdisc", "add", "dev", &self.host_if, "root", "netem", "delay", "0ms"])
            .map_err(|e| format!("tc netem is not available ({e}); the kernel needs sch_netem (CONFIG_NET_SCH_NETEM)"))?;
        run("tc", &["qdisc", "del", "dev", &self.host_if, "root"])
    }

    /// Delays every packet leaving the host side by `delay` (an emulated remote host).
    pub fn add_delay(&mut self, delay: Duration) -> Result<(), String> {
        let ms = format!("{}us", delay.as_micros());
        run(
            "tc",
            &[
                "qdisc",
                "add",
                "dev",
                &self.host_if,
                "root",
                "netem",
                "delay",
                &ms,
            ],
        )?;
        self.netem = true;
        Ok(())
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        if self.netem {
            let _ = run("tc", &["qdisc", "del", "dev", &self.host_if, "root"]);
        }
        // Ending the server thread releases the namespace, which takes the pair with it.
        drop(self.server.take());
        let _ = run("ip", &["link", "del", &self.host_if]);
    }
}
