//! `kmod_probe CHECK [ARGS]`: the /dev/arum checks run inside the test guest (arum-kmod/test).
//! Each exits 0 when the module behaves, non-zero with a reason otherwise.
//!
//! ebusy | read-before-write | offline-cpu | hold | open-close | fuzz N SEED | counts REPORT CPUS
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};

use arum_wire as wire;

const DEV: &str = wire::DEVICE_PATH;

fn open() -> std::io::Result<File> {
    OpenOptions::new().read(true).write(true).open(DEV)
}

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

fn fail(why: String) -> ! {
    eprintln!("kmod_probe: {why}");
    std::process::exit(1)
}

/// xorshift64*: a fixed-seed generator, so a failing payload can be replayed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn valid_request() -> wire::Request {
    let mut r = wire::Request::new(wire::FLAG_USER | wire::FLAG_KERNEL);
    r.cpus[0] = 1;
    r.ncounters = 1;
    r.counters[0] = wire::CounterRequest {
        source: wire::SOURCE_PERF,
        perf_type: 1,
        config: 0,
        ..Default::default()
    };
    r
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("ebusy") => {
            let _first = open().unwrap_or_else(|e| fail(format!("first open: {e}")));
            match open() {
                Err(e) if errno(&e) == libc::EBUSY => {}
                other => fail(format!("second open gave {other:?}, expected EBUSY")),
            }
        }
        Some("read-before-write") => {
            let mut f = open().unwrap_or_else(|e| fail(format!("open: {e}")));
            let mut buf = [0u8; 4096];
            match f.read(&mut buf) {
                Err(e) if errno(&e) == libc::EINVAL => {}
                other => fail(format!("read before write gave {other:?}, expected EINVAL")),
            }
        }
        Some("offline-cpu") => {
            // CPU 200 does not exist: the write fails, and the next read says which check and CPU.
            let mut r = valid_request();
            r.cpus[3] = 1 << (200 - 192);
            let mut bytes = vec![0u8; wire::REQUEST_SIZE];
            r.encode(&mut bytes);
            let mut f = open().unwrap_or_else(|e| fail(format!("open: {e}")));
            if f.write(&bytes).is_ok() {
                fail("a request for CPU 200 was accepted".into());
            }
            let mut resp = Vec::new();
            f.read_to_end(&mut resp).unwrap_or_else(|e| fail(format!("read after failed write: {e}")));
            let h = wire::ResponseHeader::decode(&resp).unwrap_or_else(|| fail("short response".into()));
            if h.error_code != wire::ERR_CPU_OFFLINE || h.error_cpu != 200 || h.status >= 0 {
                fail(format!("expected ERR_CPU_OFFLINE on CPU 200, got {h:?}"));
            }
        }
        Some("hold") => {
            let _f = open().unwrap_or_else(|e| fail(format!("open: {e}")));
            println!("holding");
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
        Some("open-close") => {
            open().unwrap_or_else(|e| fail(format!("open after the holder died: {e}")));
        }
        Some("fuzz") => {
            let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3000);
            let mut rng = Rng(args.get(3).and_then(|s| s.parse().ok()).unwrap_or(42) | 1);
            let mut accepted = 0;
            for i in 0..n {
                let mut f = open().unwrap_or_else(|e| fail(format!("open #{i}: {e}")));
                let payload: Vec<u8> = match rng.next() % 3 {
                    // Random length, random bytes.
                    0 => (0..rng.next() % 2048).map(|_| rng.next() as u8).collect(),
                    // The right length, random bytes.
                    1 => (0..wire::REQUEST_SIZE).map(|_| rng.next() as u8).collect(),
                    // A valid request with a few bytes flipped.
                    _ => {
                        let mut b = vec![0u8; wire::REQUEST_SIZE];
                        valid_request().encode(&mut b);
                        for _ in 0..1 + rng.next() % 4 {
                            let at = (rng.next() as usize) % b.len();
                            b[at] ^= 1 << (rng.next() % 8);
                        }
                        b
                    }
                };
                if f.write(&payload).is_ok() {
                    accepted += 1;
                    let mut resp = Vec::new();
                    f.read_to_end(&mut resp).unwrap_or_else(|e| fail(format!("read after accepted write #{i}: {e}")));
                }
            }
            println!("{n} payloads, {accepted} accepted");
        }
        Some("counts") => {
            // An arum JSON report: every event counted on CPUS CPUs, each with a non-zero count.
            let text = std::fs::read_to_string(&args[2]).unwrap_or_else(|e| fail(format!("{}: {e}", args[2])));
            let want: usize = args[3].parse().unwrap();
            let r: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("bad JSON: {e}")));
            let c = &r["counters"];
            if c["backend"] != "kmod" {
                fail(format!("backend {}", c["backend"]));
            }
            for e in c["events"].as_array().unwrap() {
                let per_cpu = e["per_cpu"].as_array().unwrap();
                if e["status"] != "counted" || per_cpu.len() != want || per_cpu.iter().any(|p| p["raw"].as_u64() == Some(0)) {
                    fail(format!("{} not counted on all {want} CPUs: {e}", e["name"]));
                }
            }
        }
        Some("as-user") => {
            // Opens /dev/arum as UID with primary group GID and optional supplementary GROUP;
            // prints "open" or the errno name.
            let uid: u32 = args[2].parse().unwrap();
            let gid: u32 = args[3].parse().unwrap();
            let groups: Vec<libc::gid_t> = args.get(4).map(|g| vec![g.parse().unwrap()]).unwrap_or_default();
            // SAFETY: plain credential syscalls on this process, in the order that keeps them legal.
            unsafe {
                assert_eq!(libc::setgroups(groups.len(), groups.as_ptr()), 0);
                assert_eq!(libc::setgid(gid), 0);
                assert_eq!(libc::setuid(uid), 0);
            }
            match open() {
                Ok(_) => println!("open"),
                Err(e) if errno(&e) == libc::EACCES => println!("EACCES"),
                Err(e) => fail(format!("open as {uid}:{gid}: {e}")),
            }
        }
        Some("intervals") => {
            // An arum report with -I: several intervals, and they sum to each event's total.
            let text = std::fs::read_to_string(&args[2]).unwrap_or_else(|e| fail(format!("{}: {e}", args[2])));
            let r: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("bad JSON: {e}")));
            let c = &r["counters"];
            let intervals = c["intervals"].as_array().unwrap();
            if intervals.len() < 3 {
                fail(format!("only {} intervals", intervals.len()));
            }
            for (e, ev) in c["events"].as_array().unwrap().iter().enumerate() {
                let sum: u64 = intervals.iter().map(|i| i["counts"][e].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum::<u64>()).sum();
                if sum != ev["total_raw"].as_u64().unwrap() {
                    fail(format!("{}: intervals sum to {sum}, total {}", ev["name"], ev["total_raw"]));
                }
            }
        }
        Some("peak") => {
            // An arum report: peak memory measured by METHOD, at least MIN MiB and below MAX MiB.
            let text = std::fs::read_to_string(&args[2]).unwrap_or_else(|e| fail(format!("{}: {e}", args[2])));
            let r: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("bad JSON: {e}")));
            let p = &r["usage"]["peak_memory"];
            let min: u64 = args[3].parse().unwrap();
            let max: u64 = args.get(5).and_then(|m| m.parse().ok()).unwrap_or(u64::MAX >> 20);
            let peak = p["peak_rss_bytes"].as_u64().unwrap_or(0);
            if p["method"] != args[4].as_str() || peak < min << 20 || peak >= max << 20 {
                fail(format!("expected {min}..{max} MiB by {}: {p}", args[4]));
            }
        }
        Some("sim-rate") => {
            // An arum report taken with the simulated PMU: every event on every CPU counted
            // RATE events per microsecond of counting time (within 1%), and at least MIN events.
            let text = std::fs::read_to_string(&args[2]).unwrap_or_else(|e| fail(format!("{}: {e}", args[2])));
            let rate: f64 = args[3].parse().unwrap();
            let min: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
            let r: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("bad JSON: {e}")));
            let events = r["counters"]["events"].as_array().unwrap();
            if events.is_empty() {
                fail("no events".into());
            }
            for e in events {
                if e["status"] != "counted" {
                    fail(format!("{} not counted: {}", e["name"], e["reason"]));
                }
                for p in e["per_cpu"].as_array().unwrap() {
                    let raw = p["raw"].as_u64().unwrap();
                    let expected = rate * p["time_enabled_ns"].as_u64().unwrap() as f64 / 1000.0;
                    if (raw as f64 - expected).abs() > 0.01 * expected || raw < min {
                        fail(format!("{} on CPU {}: {raw} events, expected {expected:.0} (min {min})", e["name"], p["cpu"]));
                    }
                }
            }
        }
        _ => fail("usage: kmod_probe ebusy|read-before-write|offline-cpu|hold|open-close|fuzz N SEED|counts REPORT CPUS|sim-rate REPORT RATE [MIN]|peak REPORT MIN METHOD [MAX]".into()),
    }
}
