//! Shallow idle for latency runs: a PM QoS request of 0 µs on `/dev/cpu_dma_latency` keeps every
//! CPU out of idle states whose exit takes longer, as cyclictest does unless `--laptop`. Waking a
//! CPU from a deep state (or, in a virtual machine, from a halted vCPU) adds its exit latency to
//! every wake-up, which is the machine's power policy rather than its scheduling. The request
//! holds while the file is open and ends when it is closed, by arum or by the kernel when arum
//! ends however it ends: nothing outlives the run.

use std::fs::File;
use std::io::Write;

/// The request, held while this lives.
pub struct ShallowIdle {
    _request: File,
}

impl ShallowIdle {
    /// Asks for 0 µs of exit latency; why not where the file cannot be written (not root, or a
    /// kernel without PM QoS).
    pub fn hold() -> Result<ShallowIdle, String> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .map_err(|e| format!("/dev/cpu_dma_latency: {e}"))?;
        // The kernel reads a binary 32-bit value (or text); 0 is "no exit latency allowed".
        f.write_all(&0i32.to_ne_bytes())
            .map_err(|e| format!("/dev/cpu_dma_latency: {e}"))?;
        Ok(ShallowIdle { _request: f })
    }
}
