//! The suite's server: started once in the suite's namespace, ready when its port accepts,
//! stopped (its whole process group) when the suite ends, whatever happened.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::ArumError;

pub struct Running {
    child: Child,
}

impl Running {
    /// Starts `command` with /bin/sh in a process group of its own; with `port`, waits until
    /// 127.0.0.1:`port` accepts (at most `timeout`).
    pub fn start(
        command: &str,
        port: Option<u16>,
        timeout: Duration,
    ) -> Result<Running, ArumError> {
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| ArumError::Suite(format!("server {command:?}: {e}")))?;
        let mut running = Running { child };
        let Some(port) = port else {
            return Ok(running);
        };
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + timeout;
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(running);
            }
            if let Ok(Some(status)) = running.child.try_wait() {
                return Err(ArumError::Suite(format!(
                    "the server {command:?} ended ({status}) before {addr} accepted"
                )));
            }
            if Instant::now() >= deadline {
                return Err(ArumError::Suite(format!(
                    "the server {command:?} did not accept on {addr} within {}; \
                     check its port, or raise ready_timeout",
                    arum_units::duration::format(timeout)
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(-(self.child.id() as i32));
        let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}
