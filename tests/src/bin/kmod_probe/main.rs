//! `kmod_probe CHECK [ARGS]`: the /dev/arum checks run inside the test guest (arum-kmod/test).
//! Each exits 0 when the module behaves, non-zero with a reason otherwise. Run without
//! arguments for the list.
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use arum_wire as wire;
use nix::unistd::{setgid, setgroups, setuid, Gid, Uid};

mod oracle;

const DEV: &str = wire::DEVICE_PATH;
const SIM: &str = "/sys/kernel/debug/arum/sim";

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

fn must_open() -> File {
    open().unwrap_or_else(|e| fail(format!("open {DEV}: {e}")))
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
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The online CPUs, from sysfs ("0-3,5").
fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap());
    }
    cpus
}

fn with_cpus(mut r: wire::Request, cpus: &[u32]) -> wire::Request {
    r.cpus = [0; wire::CPUMASK_WORDS];
    for &c in cpus {
        r.cpus[c as usize / 64] |= 1 << (c % 64);
    }
    r
}

/// cpu-clock and context-switches on `cpus`, user and kernel.
fn software(cpus: &[u32]) -> wire::Request {
    let mut r = wire::Request::new(wire::FLAG_USER | wire::FLAG_KERNEL);
    r.ncounters = 2;
    for (i, config) in [0u64, 3].into_iter().enumerate() {
        r.counters[i] = wire::CounterRequest {
            source: wire::SOURCE_PERF,
            perf_type: wire::PERF_TYPE_SOFTWARE,
            config,
            ..Default::default()
        };
    }
    with_cpus(r, cpus)
}

fn msr(index: u32, config: u64) -> wire::CounterRequest {
    wire::CounterRequest {
        source: wire::SOURCE_MSR,
        index,
        config,
        ..Default::default()
    }
}

/// NetBurst instr_retired (CRU_ESCR0, select 4) on counter 12 and tc_deliver_mode (TC_ESCR0,
/// select 1) on counter 4.
fn netburst(index: u32, escr_msr: u32, select: u64, event: u64) -> wire::CounterRequest {
    wire::CounterRequest {
        source: wire::SOURCE_MSR,
        index,
        escr_msr,
        config: 1 << 12 | select << 13 | 3 << 16,
        escr: event << 25 | 1 << 9,
        ..Default::default()
    }
}

/// A register-back-end request for a simulated family, on `cpus`.
fn msr_request(kind: &str, cpus: &[u32]) -> wire::Request {
    let mut r = wire::Request::new(wire::FLAG_USER | wire::FLAG_KERNEL);
    let counters: Vec<wire::CounterRequest> = match kind {
        "k8" | "zen4" => vec![msr(0, 0x40), msr(1, 0x41), msr(3, 0x76)],
        "core2" => vec![msr(0, 0x01c2), msr(1, 0x00c4), msr(32, 0xc0), msr(33, 0x3c)],
        "core2-general" => vec![msr(0, 0x01c2), msr(1, 0x00c4)],
        "core2-fixed0" => vec![msr(32, 0xc0)],
        "core2-anythread" => vec![msr(0, 0x3c | wire::ANY_THREAD)],
        "netburst" => vec![netburst(12, 0x3B8, 4, 2), netburst(4, 0x3C4, 1, 1)],
        "netburst-badpair" => vec![netburst(14, 0x3B8, 4, 2)],
        _ => fail(format!("unknown request kind {kind}")),
    };
    r.ncounters = counters.len() as u32;
    r.counters[..counters.len()].copy_from_slice(&counters);
    with_cpus(r, cpus)
}

fn encode(r: &wire::Request) -> Vec<u8> {
    let mut b = vec![0u8; wire::REQUEST_SIZE];
    r.encode(&mut b);
    b
}

/// Writes a request; on refusal returns the module's detailed header.
fn submit(f: &mut File, r: &wire::Request) -> Result<(), wire::ResponseHeader> {
    match f.write(&encode(r)) {
        Ok(n) if n == wire::REQUEST_SIZE => Ok(()),
        Ok(n) => fail(format!("short write {n}")),
        Err(_) => {
            let resp = read_all(f);
            Err(wire::ResponseHeader::decode(&resp)
                .unwrap_or_else(|| fail("short refusal header".into())))
        }
    }
}

fn read_all(f: &mut File) -> Vec<u8> {
    let mut resp = Vec::new();
    f.read_to_end(&mut resp)
        .unwrap_or_else(|e| fail(format!("read: {e}")));
    resp
}

fn must_submit(f: &mut File, r: &wire::Request) {
    if let Err(h) = submit(f, r) {
        fail(format!(
            "request refused: {} ({h:?})",
            wire::error_text(h.error_code)
        ));
    }
}

fn expect_refusal(f: &mut File, r: &wire::Request, code: u32) -> wire::ResponseHeader {
    match submit(f, r) {
        Ok(()) => fail(format!("accepted; expected {}", wire::error_text(code))),
        Err(h) if h.error_code == code && h.status < 0 => h,
        Err(h) => fail(format!(
            "refused with {} ({h:?}); expected {}",
            wire::error_text(h.error_code),
            wire::error_text(code)
        )),
    }
}

/// Reads and checks a whole response.
fn collect(
    f: &mut File,
) -> (
    wire::ResponseHeader,
    Vec<wire::CpuCounts>,
    Vec<wire::Sample>,
) {
    let bytes = read_all(f);
    let r = wire::Response::parse(&bytes).unwrap_or_else(|e| fail(format!("bad response: {e:?}")));
    if r.header.status != 0 {
        fail(format!(
            "failed: {} ({:?})",
            wire::error_text(r.header.error_code),
            r.header
        ));
    }
    (r.header, r.cpus().collect(), r.samples().collect())
}

/// The simulated PMU's cores: (running counters, global enable, fixed control).
fn sim_state() -> Vec<(u64, u64, u64)> {
    let text = std::fs::read_to_string(SIM).unwrap_or_else(|e| fail(format!("{SIM}: {e}")));
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    text.lines()
        .filter(|l| l.starts_with("core "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (hex(w[3]), hex(w[5]), hex(w[7]))
        })
        .collect()
}

/// Every CPU's record counted `rate` events per µs of its running time, within 1%, at least
/// `min` events; `factor` for records that count two threads.
fn check_rate(cpus: &[wire::CpuCounts], n: usize, rate: f64, min: u64) {
    for c in cpus {
        if c.flags & wire::CPU_LATE_READ != 0 {
            fail(format!(
                "CPU {}: a timer reading came later than a wrap (machine too busy)",
                c.cpu
            ));
        }
        let factor = if c.flags & wire::CPU_INCLUDES_SIBLING != 0 {
            2.0
        } else {
            1.0
        };
        for i in 0..n {
            let expected = factor * rate * c.time_running_ns[i] as f64 / 1000.0;
            if (c.counts[i] as f64 - expected).abs() > 0.01 * expected + 2.0 || c.counts[i] < min {
                fail(format!(
                    "CPU {} counter {i}: {} events in {} ns, expected {expected:.0} (flags {:#x})",
                    c.cpu, c.counts[i], c.time_running_ns[i], c.flags
                ));
            }
        }
    }
}

fn set_online(cpu: u32, on: bool) {
    std::fs::write(
        format!("/sys/devices/system/cpu/cpu{cpu}/online"),
        if on { "1" } else { "0" },
    )
    .unwrap_or_else(|e| fail(format!("cpu{cpu} online={on}: {e}")));
}

/// failslab for this task only: every slab allocation fails while on. The control file is
/// opened before, because opening it allocates. So is every page the process has mapped made
/// present, page tables with it: a page fault while the task's slab allocations fail cannot
/// finish (a new page table's lock is a slab object under lock debugging) and the kernel retries
/// it for ever, so code that had not run before, reached while failslab is on, hung the check.
/// Nothing may allocate while it is on either.
struct FailSlab(File);
impl FailSlab {
    fn new() -> FailSlab {
        // SAFETY: mlockall only changes how this process's memory is kept.
        if unsafe { libc::mlockall(libc::MCL_CURRENT) } != 0 {
            fail(format!("mlockall: {}", std::io::Error::last_os_error()));
        }
        // The task filter first and the probability last: the settings are global, and in
        // between every task's allocations would fail.
        for (k, v) in [
            ("task-filter", "Y"),
            ("verbose", "0"),
            ("interval", "1"),
            ("times", "-1"),
            ("ignore-gfp-wait", "N"),
            ("probability", "100"),
        ] {
            set_failslab(k, v);
        }
        FailSlab(
            OpenOptions::new()
                .write(true)
                .open("/proc/thread-self/make-it-fail")
                .unwrap_or_else(|e| fail(format!("make-it-fail: {e}"))),
        )
    }
    fn set(&mut self, on: bool) {
        self.0.write_all(if on { b"1" } else { b"0" }).unwrap();
    }
}

/// failslab's setting `key` (global: every task's allocations follow it).
fn failslab_setting(key: &str) -> String {
    let path = format!("/sys/kernel/debug/failslab/{key}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| fail(format!("{path}: {e}")))
}

fn set_failslab(key: &str, value: &str) {
    let path = format!("/sys/kernel/debug/failslab/{key}");
    std::fs::write(&path, value).unwrap_or_else(|e| fail(format!("{path}: {e}")));
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> T {
    args.get(i)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fail(format!("argument {i}: {what}")))
}

/// A random request that is valid more often than not, so that many reach counter creation;
/// then a few fields flipped at random. `msr`: the simulated PMU's limits.
fn fuzz_request(rng: &mut Rng, sim: Option<&wire::Limits>, cpus: &[u32]) -> Vec<u8> {
    let mut r = wire::Request::new([wire::FLAG_USER, wire::FLAG_KERNEL, 3][rng.below(3) as usize]);
    let pick: Vec<u32> = cpus.iter().copied().filter(|_| rng.below(2) == 0).collect();
    r = with_cpus(r, if pick.is_empty() { &cpus[..1] } else { &pick });
    // Half the payloads are clean (valid, countable events), the rest mix every kind.
    let clean = rng.below(2) == 0;
    r.ncounters = 1 + rng.below(if clean { 2 } else { 4 }) as u32;
    let mut used = Vec::new();
    for i in 0..r.ncounters as usize {
        r.counters[i] = match sim {
            None if clean => wire::CounterRequest {
                source: wire::SOURCE_PERF,
                perf_type: wire::PERF_TYPE_SOFTWARE,
                config: [0, 1, 2, 3, 4, 5, 6, 7, 8, 11][rng.below(10) as usize],
                ..Default::default()
            },
            Some(l) if clean && l.style != wire::STYLE_NETBURST => {
                let free: Vec<u32> = (0..l.general_counters)
                    .chain((0..l.fixed_counters).map(|k| wire::FIXED_BASE + k))
                    .filter(|x| !used.contains(x))
                    .collect();
                let index = free[rng.below(free.len() as u64) as usize];
                used.push(index);
                msr(index, rng.next() & 0xFFFF)
            }
            None => {
                let (t, c) = match rng.below(6) {
                    0 => (wire::PERF_TYPE_HARDWARE, rng.below(11)),
                    1 => (
                        wire::PERF_TYPE_HW_CACHE,
                        rng.below(8) | rng.below(3) << 8 | rng.below(2) << 16,
                    ),
                    2 => (wire::PERF_TYPE_RAW, rng.next() & 0xFFFF),
                    3 => (rng.below(16) as u32, rng.below(4)),
                    _ => (wire::PERF_TYPE_SOFTWARE, rng.below(12)),
                };
                wire::CounterRequest {
                    source: wire::SOURCE_PERF,
                    perf_type: t,
                    config: c,
                    ..Default::default()
                }
            }
            Some(l) if l.style == wire::STYLE_NETBURST => {
                let e =
                    &wire::NETBURST_ESCRS[rng.below(wire::NETBURST_ESCRS.len() as u64) as usize];
                let index = e.counters[rng.below(e.counters.len() as u64) as usize];
                netburst(index, e.msr, u64::from(e.select), 1 + rng.below(0x3F))
            }
            Some(l) => {
                let index = if l.fixed_counters > 0 && rng.below(3) == 0 {
                    wire::FIXED_BASE + rng.below(u64::from(l.fixed_counters) + 1) as u32
                } else {
                    rng.below(u64::from(l.general_counters) + 1) as u32
                };
                msr(index, rng.next() & 0xFFFF)
            }
        };
    }
    if rng.below(4) == 0 {
        r.timer_period_ns = rng.below(30) * 1_000_000;
    }
    let mut b = encode(&r);
    if clean {
        return b;
    }
    match rng.below(3) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len() as u64) as usize;
                b[at] ^= 1 << rng.below(8);
            }
        }
        1 => b.truncate(rng.below(b.len() as u64) as usize),
        _ => {}
    }
    b
}

/// Whether the module should accept `payload`: the shared validation, plus what creation can do
/// in the guest (software perf events only: QEMU's emulator has no PMU).
fn should_accept(payload: &[u8], msr: Option<&wire::Limits>) -> bool {
    let Some(r) = wire::Request::decode(payload) else {
        return false;
    };
    let limits = msr.copied().unwrap_or(wire::Limits {
        style: 0,
        general_counters: 0,
        fixed_counters: 0,
        msr_allowed: false,
    });
    if wire::validate(&r, payload.len(), &limits).is_err() {
        return false;
    }
    let online = online_cpus();
    if (0..wire::MAX_CPUS).any(|c| r.has_cpu(c) && !online.contains(&(c as u32))) {
        return false;
    }
    match msr {
        None => r
            .active()
            .iter()
            .all(|c| c.source == wire::SOURCE_PERF && c.perf_type == wire::PERF_TYPE_SOFTWARE),
        Some(_) => r.active().iter().all(|c| c.source == wire::SOURCE_MSR),
    }
}

/// A check, given the whole command line (its own arguments from the third on).
type Check = fn(&[String]);

/// Every check, by the name the guest's script gives it, in the order the usage lists them.
const CHECKS: &[(&str, Check)] = &[
    ("ebusy", ebusy),
    ("not-configured", not_configured),
    ("offline-cpu", offline_cpu),
    ("refuse", refuse),
    ("sim-count", sim_count),
    ("ht-count", ht_count),
    ("hold", hold),
    ("hold-counting", hold_counting),
    ("write-close", write_close),
    ("sim-idle", sim_idle),
    ("open-close", open_close),
    ("write-while-counting", write_while_counting),
    ("sessions", sessions),
    ("partial-reads", partial_reads),
    ("concurrent-reads", concurrent_reads),
    ("as-user", as_user),
    ("opened-by-root", opened_by_root),
    ("caps-open", caps_open),
    ("allow-list", allow_list),
    ("fuzz", fuzz),
    ("hotplug", hotplug),
    ("rearm-failslab", rearm_failslab),
    ("suspend", suspend),
    ("suspend-perf", suspend_perf),
    ("churn", churn),
    ("fuzz-oracle", fuzz_oracle),
    ("hybrid", hybrid),
    ("series", series),
    ("spread", spread),
    ("failed-alloc-write", failed_alloc_write),
    ("failed-alloc-stop", failed_alloc_stop),
    ("counts", counts),
    ("intervals", intervals),
    ("peak", peak),
    ("sim-rate", sim_rate),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match CHECKS
        .iter()
        .find(|(name, _)| Some(*name) == args.get(1).map(String::as_str))
    {
        Some((_, check)) => check(&args),
        None => {
            let names: Vec<&str> = CHECKS.iter().map(|(name, _)| *name).collect();
            fail(format!(
                "usage: kmod_probe CHECK [ARGS]; checks: {}",
                names.join(" ")
            ))
        }
    }
}

/// A second open while the first is held fails with EBUSY.
fn ebusy(_: &[String]) {
    let _first = must_open();
    match open() {
        Err(e) if errno(&e) == libc::EBUSY => {}
        other => fail(format!("second open gave {other:?}, expected EBUSY")),
    }
}

/// A read before any write says so, in a header.
fn not_configured(_: &[String]) {
    let mut f = must_open();
    let h = wire::ResponseHeader::decode(&read_all(&mut f))
        .unwrap_or_else(|| fail("short response".into()));
    if h.error_code != wire::ERR_NOT_CONFIGURED || h.status != -libc::EINVAL {
        fail(format!("expected ERR_NOT_CONFIGURED, got {h:?}"));
    }
}

/// CPU 200 does not exist: the write fails, and the next read says which check and CPU.
fn offline_cpu(_: &[String]) {
    let mut f = must_open();
    let h = expect_refusal(&mut f, &software(&[0, 200]), wire::ERR_CPU_OFFLINE);
    if h.error_cpu != 200 {
        fail(format!("expected CPU 200, got {h:?}"));
    }
}

/// refuse KIND CODE [PERIOD_MS]: a register-back-end request the module must refuse.
fn refuse(args: &[String]) {
    let mut r = msr_request(&args[2], &online_cpus());
    if let Some(ms) = args.get(4) {
        r.timer_period_ns = ms.parse::<u64>().unwrap() * 1_000_000;
    }
    let code: u32 = arg(args, 3, "code");
    let h = expect_refusal(&mut must_open(), &r, code);
    println!(
        "refused: {} (errno {}, counter {})",
        wire::error_text(h.error_code),
        -h.status,
        h.error_counter as i32
    );
}

/// sim-count KIND SECONDS RATE [FLAGS_WANTED]: counts match the simulated rate.
fn sim_count(args: &[String]) {
    let cpus = online_cpus();
    let mut f = must_open();
    let r = msr_request(&args[2], &cpus);
    must_submit(&mut f, &r);
    std::thread::sleep(Duration::from_secs_f64(arg(args, 3, "seconds")));
    let (h, recs, _) = collect(&mut f);
    check_rate(&recs, r.ncounters as usize, arg(args, 4, "rate"), 1);
    if let Some(want) = args.get(5) {
        let want = u32::from_str_radix(want.trim_start_matches("0x"), 16).unwrap();
        if h.flags & want != want {
            fail(format!("response flags {:#x}, wanted {want:#x}", h.flags));
        }
    }
}

/// ht-count RATE: NetBurst with Hyper-Threading (CPUs 2k, 2k+1 share a core): the first thread's
/// record counts both threads, the second's says so and is empty.
fn ht_count(args: &[String]) {
    let cpus = online_cpus();
    let r = msr_request("netburst", &cpus);
    let mut f = must_open();
    must_submit(&mut f, &r);
    std::thread::sleep(Duration::from_millis(500));
    let (_, recs, _) = collect(&mut f);
    for c in &recs {
        let (want, empty) = if c.cpu % 2 == 0 {
            (wire::CPU_INCLUDES_SIBLING, false)
        } else {
            (wire::CPU_COUNTED_BY_SIBLING, true)
        };
        if c.flags & want == 0 || empty != c.counts[..2].iter().all(|&v| v == 0) {
            fail(format!(
                "CPU {}: flags {:#x}, counts {:?}",
                c.cpu,
                c.flags,
                &c.counts[..2]
            ));
        }
    }
    check_rate(&recs, r.ncounters as usize, arg(args, 2, "rate"), 0);
}

/// Holds /dev/arum open until killed; prints "holding" once it does.
fn hold(_: &[String]) {
    let _f = must_open();
    println!("holding");
    std::thread::sleep(Duration::from_secs(3600));
}

/// hold-counting KIND: a live register-back-end session until killed.
fn hold_counting(args: &[String]) {
    let mut f = must_open();
    must_submit(&mut f, &msr_request(&args[2], &online_cpus()));
    println!("counting");
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(3600));
}

/// write-close KIND: start a session and close the descriptor without reading.
fn write_close(args: &[String]) {
    let mut f = must_open();
    must_submit(&mut f, &msr_request(&args[2], &online_cpus()));
    if sim_state().iter().all(|c| c.0 == 0) {
        fail("nothing runs while counting".into());
    }
    std::thread::sleep(Duration::from_millis(100));
}

/// sim-idle [GLOBAL [FIXED_CTRL [RUNNING]]]: every simulated core is back to what it was: no
/// counter of ours runs, the global enable and fixed control as given.
fn sim_idle(args: &[String]) {
    let want = |i: usize| {
        args.get(i)
            .map(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap())
    };
    for (k, &(running, global, fixed)) in sim_state().iter().enumerate() {
        let ok = running == want(4).unwrap_or(0)
            && want(2).is_none_or(|g| g == global)
            && want(3).is_none_or(|x| x == fixed);
        if !ok {
            fail(format!(
                "core {k}: running {running:#x} global {global:#x} fixed_ctrl {fixed:#x}"
            ));
        }
    }
}

/// Opens /dev/arum and closes it.
fn open_close(_: &[String]) {
    must_open();
}

/// A second write during a session fails with EBUSY, and the session still reads back.
fn write_while_counting(_: &[String]) {
    let mut f = must_open();
    must_submit(&mut f, &software(&online_cpus()));
    match f.write(&encode(&software(&[0]))) {
        Err(e) if errno(&e) == libc::EBUSY => {}
        other => fail(format!("second write gave {other:?}, expected EBUSY")),
    }
    collect(&mut f);
}

/// Several sessions on one descriptor; a refusal in between is what the next read returns, never
/// the previous session's counts.
fn sessions(_: &[String]) {
    let mut f = must_open();
    let cpus = online_cpus();
    for round in 0..4 {
        let t = Instant::now();
        must_submit(&mut f, &software(&cpus));
        std::thread::sleep(Duration::from_millis(50));
        let (h, recs, _) = collect(&mut f);
        let wall = t.elapsed().as_nanos() as u64;
        if recs.len() != cpus.len() || h.time_counted_ns == 0 || h.time_counted_ns > wall {
            fail(format!(
                "round {round}: {} records, counted {} ns of {wall}",
                recs.len(),
                h.time_counted_ns
            ));
        }
        // The read after the refused write (in `expect_refusal`) gives the refusal.
        let mut bad = software(&cpus);
        bad.magic = 0;
        expect_refusal(&mut f, &bad, wire::ERR_MAGIC);
    }
}

/// A response read 7 bytes at a time is the whole response.
fn partial_reads(_: &[String]) {
    let mut f = must_open();
    let cpus = online_cpus();
    must_submit(&mut f, &software(&cpus));
    std::thread::sleep(Duration::from_millis(100));
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 7];
    loop {
        let n = f
            .read(&mut chunk)
            .unwrap_or_else(|e| fail(format!("read: {e}")));
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    let r = wire::Response::parse(&bytes)
        .unwrap_or_else(|e| fail(format!("7-byte reads gave a bad response: {e:?}")));
    if r.cpus().count() != cpus.len() || r.header.size as usize != bytes.len() {
        fail(format!("{:?}", r.header));
    }
}

/// Four threads read the same live session at once (pread at 0): one stops it, all get the same
/// whole response.
fn concurrent_reads(_: &[String]) {
    let mut f = must_open();
    must_submit(&mut f, &software(&online_cpus()));
    std::thread::sleep(Duration::from_millis(100));
    let f = &f;
    let got: Vec<Vec<u8>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(move || {
                    let mut buf = vec![0u8; 1 << 20];
                    let n = f
                        .read_at(&mut buf, 0)
                        .unwrap_or_else(|e| fail(format!("pread: {e}")));
                    buf.truncate(n);
                    buf
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    wire::Response::parse(&got[0]).unwrap_or_else(|e| fail(format!("bad response: {e:?}")));
    if got.iter().any(|g| g != &got[0]) {
        fail(format!(
            "concurrent reads differ: {:?}",
            got.iter().map(Vec::len).collect::<Vec<_>>()
        ));
    }
}

/// as-user UID GID [GROUP [write | write-after FILE | write-msr KIND]]: drops to UID:GID (with
/// GROUP as its one supplementary group), opens the device and prints "open" or "EACCES"; with
/// `write`, writes a user-mode software request and prints the outcome ("accepted",
/// "ERR_PERMISSION errno N"); `write-after FILE` prints "opened" and writes once FILE exists
/// (at most 30 s later); `write-msr KIND` writes a register back-end request of KIND.
fn as_user(args: &[String]) {
    let uid: u32 = arg(args, 2, "uid");
    let gid: u32 = arg(args, 3, "gid");
    drop_to(uid, gid, &group_arg(args, 4));
    let mut f = match open() {
        Ok(f) => f,
        Err(e) if errno(&e) == libc::EACCES => return println!("EACCES"),
        Err(e) => fail(format!("open as {uid}:{gid}: {e}")),
    };
    let mut r = software(&[0]);
    r.flags = wire::FLAG_USER;
    match args.get(5).map(String::as_str) {
        None => return println!("open"),
        Some("write") => {}
        Some("write-after") => {
            println!("opened");
            std::io::stdout().flush().unwrap();
            let go = std::path::Path::new(&args[6]);
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !go.exists() {
                if std::time::Instant::now() > deadline {
                    fail(format!("{} never appeared", go.display()));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Some("write-msr") => r = msr_request(&args[6], &[0]),
        Some(other) => fail(format!("unknown mode {other}")),
    }
    print_outcome(&mut f, &r);
}

/// Writes `r` and prints "accepted" (and collects the counts), or the refusal's code and errno.
fn print_outcome(f: &mut File, r: &wire::Request) {
    match submit(f, r) {
        Ok(()) => {
            collect(f);
            println!("accepted")
        }
        Err(h) if h.error_code == wire::ERR_PERMISSION => {
            println!("ERR_PERMISSION errno {}", -h.status)
        }
        Err(h) => fail(format!("refused: {h:?}")),
    }
}

/// opened-by-root UID [GROUP]: opens as root, drops to UID (no capabilities; GROUP its one
/// supplementary group), writes a user-mode software request and prints the outcome: the
/// writer's rights count, not the opener's.
fn opened_by_root(args: &[String]) {
    let mut f = must_open();
    drop_to(
        arg(args, 2, "uid"),
        arg(args, 2, "uid"),
        &group_arg(args, 3),
    );
    let mut r = software(&[0]);
    r.flags = wire::FLAG_USER;
    print_outcome(&mut f, &r);
}

/// caps-open PERFMON(0|1): root without CAP_SYS_ADMIN, in no group, with or without CAP_PERFMON;
/// prints "open" or "EACCES".
fn caps_open(args: &[String]) {
    keep_caps(arg::<u32>(args, 2, "perfmon") != 0);
    match open() {
        Ok(_) => println!("open"),
        Err(e) if errno(&e) == libc::EACCES => println!("EACCES"),
        Err(e) => fail(format!("open: {e}")),
    }
}

/// perf back-end: what perf_event_open's checks would refuse a group member, and dynamic PMUs,
/// tracepoints, breakpoints and odd software events, are refused.
fn allow_list(_: &[String]) {
    let mut f = must_open();
    let mut refused = vec![
        (2u32, 0u64),
        (5, 0),
        (wire::PERF_TYPE_SOFTWARE, 9),
        (wire::PERF_TYPE_SOFTWARE, 10),
        (wire::PERF_TYPE_HARDWARE, 1 << 32),
    ];
    for pmu in ["power", "msr", "cstate_core", "software"] {
        if let Ok(t) = std::fs::read_to_string(format!("/sys/bus/event_source/devices/{pmu}/type"))
        {
            let t: u32 = t.trim().parse().unwrap();
            if t >= 6 {
                refused.push((t, 1));
            }
        }
    }
    for (t, c) in refused {
        let mut r = software(&[0]);
        r.counters[1].perf_type = t;
        r.counters[1].config = c;
        let h = expect_refusal(&mut f, &r, wire::ERR_EVENT_NOT_ALLOWED);
        if h.error_counter != 1 {
            fail(format!("type {t} config {c}: counter {}", h.error_counter));
        }
    }
    println!("refused every event outside the allow-list");
}

/// fuzz N SEED perf | fuzz N SEED msr STYLE GENERAL FIXED: N mostly well-formed requests with some
/// fields flipped; the module accepts exactly those the shared validation accepts and the guest can
/// count, and at least a third reach creation.
fn fuzz(args: &[String]) {
    let n: u32 = arg(args, 2, "count");
    let mut rng = Rng(arg::<u64>(args, 3, "seed") | 1);
    let limits = (args.get(4).map(String::as_str) == Some("msr")).then(|| wire::Limits {
        style: arg(args, 5, "style"),
        general_counters: arg(args, 6, "general"),
        fixed_counters: arg(args, 7, "fixed"),
        msr_allowed: true,
    });
    let cpus = online_cpus();
    let (mut accepted, mut expected, mut reached, mut mismatches) = (0u32, 0u32, 0u32, Vec::new());
    let mut f = must_open();
    for i in 0..n {
        let payload = fuzz_request(&mut rng, limits.as_ref(), &cpus);
        let want = should_accept(&payload, limits.as_ref());
        expected += u32::from(want);
        let got = f.write(&payload).is_ok();
        accepted += u32::from(got);
        let resp = read_all(&mut f);
        if got != want && mismatches.len() < 5 {
            mismatches.push(format!(
                "#{i}: accepted={got} expected={want}: {:?}",
                wire::ResponseHeader::decode(&resp)
            ));
        }
        let h = wire::Response::parse(&resp)
            .unwrap_or_else(|e| fail(format!("#{i}: bad response {e:?}")))
            .header;
        // Accepted, or refused by the counters themselves: validation let it through.
        reached += u32::from(
            got || [
                wire::ERR_PERF_CREATE,
                wire::ERR_COUNTER_BUSY,
                wire::ERR_MSR_ACCESS,
            ]
            .contains(&h.error_code),
        );
    }
    println!("{n} payloads, {accepted} accepted ({expected} expected), {reached} reached counter creation");
    if !mismatches.is_empty() || accepted != expected || reached * 3 < n {
        fail(format!("accepted {accepted}, expected {expected}; {reached} reached creation (want {}): {mismatches:?}", n.div_ceil(3)));
    }
}

/// hotplug CPU KIND|perf RATE: CPU goes offline and comes back during a session; its record says
/// so, and its counts are right for the time it counted.
fn hotplug(args: &[String]) {
    let cpu: u32 = arg(args, 2, "cpu");
    let cpus = online_cpus();
    let perf = args[3] == "perf";
    let mut r = if perf {
        software(&cpus)
    } else {
        msr_request(&args[3], &cpus)
    };
    r.timer_period_ns = 100_000_000;
    let mut f = must_open();
    must_submit(&mut f, &r);
    std::thread::sleep(Duration::from_millis(300));
    set_online(cpu, false);
    std::thread::sleep(Duration::from_millis(300));
    set_online(cpu, true);
    std::thread::sleep(Duration::from_millis(600));
    let (_, recs, samples) = collect(&mut f);
    if std::env::var_os("ARUM_DEBUG").is_some() {
        print_hotplug_records(&recs, &samples, cpu);
    }
    let rec = recs
        .iter()
        .find(|c| c.cpu == cpu)
        .unwrap_or_else(|| fail(format!("no record for CPU {cpu}")));
    if rec.flags & wire::CPU_WENT_OFFLINE == 0
        || rec.flags & (wire::CPU_OFFLINE_AT_END | wire::CPU_REARM_FAILED) != 0
    {
        fail(format!("CPU {cpu} flags {:#x}", rec.flags));
    }
    let others = recs.iter().find(|c| c.cpu != cpu).unwrap();
    if rec.time_enabled_ns[0] + 200_000_000 > others.time_enabled_ns[0] {
        fail(format!(
            "CPU {cpu} enabled {} ns, others {} ns: the offline time is not excluded",
            rec.time_enabled_ns[0], others.time_enabled_ns[0]
        ));
    }
    // It counted again after it came back.
    let mine: Vec<&wire::Sample> = samples.iter().filter(|s| s.cpu == cpu).collect();
    let last = mine.last().unwrap_or_else(|| fail("no samples".into()));
    if last.counts[0] != rec.counts[0]
        || mine.iter().filter(|s| s.time_ns > 650_000_000).count() < 2
    {
        fail(format!(
            "CPU {cpu}: {} samples, last {:?}",
            mine.len(),
            last.counts[0]
        ));
    }
    if perf {
        // cpu-clock counts nanoseconds: it cannot exceed the time the counter ran.
        if rec.counts[0] > rec.time_running_ns[0] + 50_000_000 || rec.counts[0] == 0 {
            fail(format!(
                "CPU {cpu}: cpu-clock {} over {} ns",
                rec.counts[0], rec.time_running_ns[0]
            ));
        }
    } else {
        check_rate(&recs, r.ncounters as usize, arg(args, 4, "rate"), 1);
    }
}

/// rearm-failslab CPU ROUNDS: in one perf session CPU goes off- and online ROUNDS times, and in
/// round N the Nth allocation made under the module's code by each of the CPU's high-priority
/// workers fails (their `fail-nth`, counting only allocations with a return address in the
/// module: failslab's stack filter). The module's re-arm work runs there, so each of its
/// allocations fails in turn, the list of counters it replaces among them, whatever the worker
/// allocates for itself. The session must end readable with the CPU's record; what must not
/// happen on the way (a lock taken out of order, a leak) the kernel's checkers report, and the
/// no-oops-or-warning and kmemleak checks after it fail.
fn rearm_failslab(args: &[String]) {
    let cpu: u32 = arg(args, 2, "cpu");
    let rounds: u32 = arg(args, 3, "rounds");
    let (start, end) = module_range("arum");
    // The slab allocator's own refills of its per-CPU caches (sheaves) come and go with what
    // every task allocates: counted, they would move the re-arm's allocations from round to round.
    let (not_from, not_to) = symbol_range("__alloc_empty_sheaf").unwrap_or((0, 0));
    // GFP_KERNEL allocations may fail too; no stack printed for an injected failure; only
    // allocations under the module count. The settings are global: they are given back as found.
    let found = [
        "ignore-gfp-wait",
        "verbose",
        "require-start",
        "require-end",
        "reject-start",
        "reject-end",
    ]
    .map(|k| (k, failslab_setting(k)));
    set_failslab("ignore-gfp-wait", "N");
    set_failslab("verbose", "0");
    set_failslab("require-start", &start.to_string());
    set_failslab("require-end", &end.to_string());
    set_failslab("reject-start", &not_from.to_string());
    set_failslab("reject-end", &not_to.to_string());
    let mut r = software(&online_cpus());
    r.timer_period_ns = 100_000_000;
    let mut f = must_open();
    must_submit(&mut f, &r);
    let mut injected = Vec::new();
    for nth in 1..=rounds {
        set_online(cpu, false);
        let workers = highpri_workers(cpu);
        for w in &workers {
            // A worker that has exited meanwhile has no allocation to fail.
            let _ = std::fs::write(format!("/proc/{w}/fail-nth"), nth.to_string());
        }
        set_online(cpu, true);
        std::thread::sleep(Duration::from_millis(200));
        for w in &workers {
            let path = format!("/proc/{w}/fail-nth");
            // 0 after a count was set: it reached its Nth allocation, which failed.
            if std::fs::read_to_string(&path).is_ok_and(|v| v.trim() == "0") {
                injected.push(nth);
            }
            let _ = std::fs::write(&path, "0");
        }
    }
    for (k, v) in &found {
        set_failslab(k, v.trim());
    }
    let (_, recs, _) = collect(&mut f);
    let rec = recs
        .iter()
        .find(|c| c.cpu == cpu)
        .unwrap_or_else(|| fail(format!("no record for CPU {cpu}")));
    if rec.flags & wire::CPU_WENT_OFFLINE == 0 {
        fail(format!("CPU {cpu} flags {:#x}", rec.flags));
    }
    // The re-arm's allocations up to the list of counters it replaces are the same each round;
    // the check asks no more of what follows (the kernel's checkers may allocate there). Round 1
    // without a failure means the re-arm ran where no count was set, and a sweep that failed
    // in every round never reached the re-arm's end: either way not every allocation was tried.
    let first_without = (1..=rounds).find(|n| !injected.contains(n));
    if first_without.is_none_or(|n| n == 1) {
        fail(format!(
            "{rounds} rounds, allocations under the module failed in rounds {injected:?} on \
             CPU {cpu}'s high-priority workers: want rounds 1 to K < {rounds}"
        ));
    }
    println!("{rounds} rounds, failures injected in rounds {injected:?}");
}

/// Where the kernel's function `name` begins and the next symbol does (/proc/kallsyms), if the
/// kernel has it.
fn symbol_range(name: &str) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/kallsyms").ok()?;
    let mut addrs: Vec<(u64, &str)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let a = u64::from_str_radix(f.next()?, 16).ok()?;
            Some((a, f.nth(1)?))
        })
        .collect();
    addrs.sort_unstable();
    let i = addrs.iter().position(|&(_, n)| n == name)?;
    let start = addrs[i].0;
    let end = addrs[i..].iter().find(|&&(a, _)| a > start)?.0;
    (start != 0).then_some((start, end))
}

/// The addresses of module `name`'s memory, text first (/proc/modules: its size and where its
/// text begins); only this module is loaded, so a return address in the range is its code.
fn module_range(name: &str) -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    let line = text
        .lines()
        .find(|l| l.split(' ').next() == Some(name))
        .unwrap_or_else(|| fail(format!("{name} is not in /proc/modules")));
    let fields: Vec<&str> = line.split(' ').collect();
    let size: u64 = fields.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let base = fields
        .get(5)
        .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        .unwrap_or(0);
    if size == 0 || base == 0 {
        fail(format!(
            "/proc/modules hides {name}'s address (kptr_restrict): {line}"
        ));
    }
    (base, base + size)
}

/// The pids of CPU's high-priority workqueue workers (`kworker/1:0H`, with `-queue` while busy).
fn highpri_workers(cpu: u32) -> Vec<u32> {
    let prefix = format!("kworker/{cpu}:");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        fail("/proc unreadable".into())
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|comm| {
                let name = comm.trim().split('-').next().unwrap_or("");
                name.starts_with(&prefix) && name.ends_with('H')
            })
        })
        .collect()
}

/// ARUM_DEBUG: every record, and the samples of CPU 0 and the CPU that went offline.
fn print_hotplug_records(recs: &[wire::CpuCounts], samples: &[wire::Sample], cpu: u32) {
    for c in recs {
        eprintln!(
            "cpu {} flags {:#x} counts {:?} en {:?} run {:?}",
            c.cpu,
            c.flags,
            &c.counts[..3],
            &c.time_enabled_ns[..3],
            &c.time_running_ns[..3]
        );
    }
    for s in samples.iter().filter(|s| s.cpu == 0 || s.cpu == cpu) {
        eprintln!(
            "  sample cpu {} expiry {} t {} {:?}",
            s.cpu,
            s.expiry,
            s.time_ns,
            &s.counts[..2]
        );
    }
}

/// suspend KIND RATE: a (test-mode) system suspend during a session.
fn suspend(args: &[String]) {
    let cpus = online_cpus();
    let r = msr_request(&args[2], &cpus);
    let mut f = must_open();
    must_submit(&mut f, &r);
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write("/sys/power/pm_test", "devices")
        .unwrap_or_else(|e| fail(format!("pm_test: {e}")));
    std::fs::write("/sys/power/state", "freeze").unwrap_or_else(|e| fail(format!("suspend: {e}")));
    std::thread::sleep(Duration::from_millis(300));
    let (h, recs, _) = collect(&mut f);
    if h.flags & wire::RESPONSE_SUSPENDED == 0 {
        fail(format!("flags {:#x}: the suspend went unnoticed", h.flags));
    }
    check_rate(&recs, r.ncounters as usize, arg(args, 3, "rate"), 1);
}

/// hybrid CPU: with `sim_perf_absent` naming CPU (the test build's stand-in for a hybrid part's
/// other core type), the first counter is missing there and only there: the session counts,
/// CPU's record says so with no time for it, the other counter and CPUs count as usual; a
/// request on CPU alone, where the first counter exists nowhere, is refused.
fn hybrid(args: &[String]) {
    let absent: u32 = arg(args, 2, "cpu");
    let cpus = online_cpus();
    let mut f = must_open();
    must_submit(&mut f, &software(&cpus));
    std::thread::sleep(Duration::from_millis(300));
    let (_, recs, _) = collect(&mut f);
    for c in &recs {
        let flagged = c.flags & wire::CPU_COUNTER_ABSENT != 0;
        let ok = if c.cpu == absent {
            flagged && c.time_enabled_ns[0] == 0 && c.counts[0] == 0 && c.time_enabled_ns[1] > 0
        } else {
            !flagged && c.time_enabled_ns[0] > 0 && c.counts[0] > 0
        };
        if !ok {
            fail(format!(
                "CPU {}: flags {:#x}, counter 0 {} in {} ns, counter 1 enabled {} ns",
                c.cpu, c.flags, c.counts[0], c.time_enabled_ns[0], c.time_enabled_ns[1]
            ));
        }
    }
    let h = expect_refusal(&mut f, &software(&[absent]), wire::ERR_PERF_CREATE);
    if h.status != -libc::ENOENT || h.error_counter != 0 {
        fail(format!("alone on CPU {absent}: {h:?}"));
    }
    println!(
        "refused: a counter no requested CPU has (errno {})",
        -h.status
    );
}

/// fuzz-oracle N SEED perf|msr [STYLE GENERAL FIXED]: N payloads from `oracle`'s grammar, each
/// answered as the rule it breaks says (accepted, or refused with EINVAL, that code and counter).
fn fuzz_oracle(args: &[String]) {
    let n: u32 = arg(args, 2, "count");
    let mut rng = Rng(arg::<u64>(args, 3, "seed") | 1);
    let target = match args.get(4).map(String::as_str) {
        Some("perf") => oracle::Target::Perf,
        Some("msr") => oracle::Target::Msr {
            style: arg(args, 5, "style"),
            general: arg(args, 6, "general"),
            fixed: arg(args, 7, "fixed"),
        },
        other => fail(format!("target {other:?}: perf or msr")),
    };
    let cpus = online_cpus();
    let mut f = must_open();
    let mut rules = std::collections::BTreeMap::new();
    let mut wrong = Vec::new();
    for i in 0..n {
        let case = oracle::case(&mut rng, target, &cpus);
        let written = f.write(&case.payload);
        let resp = read_all(&mut f);
        let h = wire::ResponseHeader::decode(&resp)
            .unwrap_or_else(|| fail(format!("#{i} ({}): no response header", case.rule)));
        let got = match written {
            Ok(_) if h.status == 0 => oracle::Expect::Accepted,
            Ok(_) => fail(format!(
                "#{i} ({}): accepted, then failed: {h:?}",
                case.rule
            )),
            Err(_) => oracle::Expect::Refused(
                h.error_code,
                (h.error_counter != wire::NO_COUNTER).then_some(h.error_counter),
            ),
        };
        let matches = match (case.expect, got) {
            (oracle::Expect::Refused(code, None), oracle::Expect::Refused(got_code, _)) => {
                code == got_code && h.status == -libc::EINVAL
            }
            (oracle::Expect::Refused(..), oracle::Expect::Refused(..)) => {
                case.expect == got && h.status == -libc::EINVAL
            }
            (want, got) => want == got,
        };
        *rules.entry(case.rule).or_insert(0u32) += 1;
        if !matches && wrong.len() < 5 {
            wrong.push(format!(
                "#{i} {}: expected {:?}, got {got:?} (errno {})",
                case.rule, case.expect, -h.status
            ));
        }
    }
    if !wrong.is_empty() {
        fail(wrong.join("; "));
    }
    println!(
        "{n} payloads over {} rules, each answered as its rule says",
        rules.len()
    );
}

/// churn N: N sessions one after another, each on the CPUs online at its start, held for up to
/// 2 ms and closed without reading; a CPU that went offline meanwhile may refuse one.
fn churn(args: &[String]) {
    let n: u32 = arg(args, 2, "sessions");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut counted, mut offline) = (0, 0);
    for _ in 0..n {
        let mut f = must_open();
        match submit(&mut f, &software(&online_cpus())) {
            Ok(()) => counted += 1,
            // Offline when checked, or by the time its counter was made.
            Err(h)
                if h.error_code == wire::ERR_CPU_OFFLINE
                    || (h.error_code == wire::ERR_PERF_CREATE && h.status == -libc::ENODEV) =>
            {
                offline += 1
            }
            Err(h) => fail(format!("refused: {h:?}")),
        }
        std::thread::sleep(Duration::from_micros(rng.next() % 2000));
    }
    println!("{counted} sessions counted, {offline} refused for an offline CPU");
}

/// suspend-perf: cpu-clock on every CPU through the perf back-end across a suspend to RAM
/// tested at the "processors" level (the non-boot CPUs go offline and come back; the machine
/// does not sleep). cpu-clock counts a CPU's time: each CPU's total is at most the session's
/// length (1% over for the timer's reads), at least that less the suspend, and counting goes
/// on at the wall clock's pace after the resume, on every CPU.
fn suspend_perf(_: &[String]) {
    let state = std::fs::read_to_string("/sys/power/state").unwrap_or_default();
    if !state.split_whitespace().any(|s| s == "mem") {
        fail(format!(
            "no suspend to RAM here (/sys/power/state: {state:?})"
        ));
    }
    let cpus = online_cpus();
    let mut r = software(&cpus);
    r.timer_period_ns = 100_000_000;
    let mut f = must_open();
    let t0 = Instant::now();
    must_submit(&mut f, &r);
    std::thread::sleep(Duration::from_millis(1000));
    let write = |path: &str, value: &str| {
        std::fs::write(path, value).unwrap_or_else(|e| fail(format!("{path}: {e}")))
    };
    write("/sys/module/suspend/parameters/pm_test_delay", "0");
    write("/sys/power/pm_test", "processors");
    let before = t0.elapsed();
    write("/sys/power/state", "mem");
    let after = t0.elapsed();
    write("/sys/power/pm_test", "none");
    std::thread::sleep(Duration::from_millis(2000));
    let (h, recs, samples) = collect(&mut f);
    if h.flags & wire::RESPONSE_SUSPENDED == 0 {
        fail(format!("flags {:#x}: the suspend went unnoticed", h.flags));
    }
    let length = h.time_counted_ns as f64;
    let suspend = (after - before).as_nanos() as f64;
    let resumed = (after + Duration::from_millis(300)).as_nanos() as u64;
    println!(
        "suspend took {:.0} ms of a {:.0} ms session",
        suspend / 1e6,
        length / 1e6
    );
    for c in &recs {
        let counted = c.counts[0] as f64;
        if counted > 1.01 * length || counted < length - suspend - 0.01 * length {
            fail(format!(
                "CPU {} counted {:.0} ms of cpu-clock in a {:.0} ms session with a {:.0} ms suspend (flags {:#x})",
                c.cpu,
                counted / 1e6,
                length / 1e6,
                suspend / 1e6,
                c.flags
            ));
        }
        let late: Vec<&wire::Sample> = samples
            .iter()
            .filter(|s| s.cpu == c.cpu && s.time_ns >= resumed)
            .collect();
        let (Some(first), Some(last)) = (late.first(), late.last()) else {
            fail(format!("CPU {}: no samples after the resume", c.cpu));
        };
        let pace = last.counts[0].saturating_sub(first.counts[0]) as f64
            / last.time_ns.saturating_sub(first.time_ns).max(1) as f64;
        if !(0.95..=1.05).contains(&pace) {
            fail(format!(
                "CPU {}: cpu-clock ran at {pace:.3} of the wall clock after the resume",
                c.cpu
            ));
        }
    }
}

/// series SECONDS MIN_PER_CPU [THINNED]: a 10 ms timer for SECONDS; every CPU has at least MIN
/// samples, rising, ending at its totals; THINNED: the series had to be thinned to fit the module's
/// cap, and says so.
fn series(args: &[String]) {
    let cpus = online_cpus();
    let mut r = software(&cpus);
    r.timer_period_ns = wire::MIN_PERIOD_NS;
    let min: usize = arg(args, 3, "min");
    let secs = match args[2].as_str() {
        "auto" => auto_series_seconds(&r, min),
        s => s.parse().unwrap_or_else(|_| fail(format!("seconds {s}"))),
    };
    let mut f = must_open();
    must_submit(&mut f, &r);
    std::thread::sleep(Duration::from_secs_f64(secs));
    let (h, recs, samples) = collect(&mut f);
    for c in &recs {
        let mine: Vec<&wire::Sample> = samples.iter().filter(|s| s.cpu == c.cpu).collect();
        let rising = mine.windows(2).all(|w| {
            w[0].time_ns < w[1].time_ns
                && w[0].counts[0] <= w[1].counts[0]
                && w[0].expiry < w[1].expiry
        });
        let aligned = mine
            .iter()
            .rev()
            .skip(1)
            .all(|s| s.expiry % h.sample_stride == 0);
        if mine.len() < min
            || !rising
            || !aligned
            || mine.last().unwrap().counts[..2] != c.counts[..2]
        {
            fail(format!(
                "CPU {}: {} samples (want {min}) of {} expiries in {:.1} s, rising {rising}, aligned {aligned}, stride {}",
                c.cpu,
                mine.len(),
                h.accumulations,
                h.time_counted_ns as f64 / 1e9,
                h.sample_stride
            ));
        }
    }
    let thinned = h.flags & wire::RESPONSE_SERIES_THINNED != 0;
    if args.get(4).is_some() != thinned || (thinned && h.sample_stride < 2) {
        fail(format!("thinned {thinned}, stride {}", h.sample_stride));
    }
    println!(
        "{} samples per CPU, stride {}, {} expiries",
        samples.len() / recs.len(),
        h.sample_stride,
        h.accumulations
    );
}

/// The seconds a session of `r` needs for `min` samples on its slowest CPU (a busy host runs the
/// guest's timer late, and late expiries are skipped), measured with a 2 s session first, with
/// twice that to spare: the emulated CPUs share the host's, so the rate moves with the host's
/// load between the two sessions, and one CPU's rate may fall below the session's rate of
/// expiries (docs/kmod.md has the shortfalls seen).
fn auto_series_seconds(r: &wire::Request, min: usize) -> f64 {
    let mut f = must_open();
    must_submit(&mut f, r);
    std::thread::sleep(Duration::from_secs(2));
    let (h, recs, samples) = collect(&mut f);
    let slowest = recs
        .iter()
        .map(|c| samples.iter().filter(|s| s.cpu == c.cpu).count())
        .min()
        .unwrap_or(0);
    let per_s =
        slowest.max(1) as f64 * h.sample_stride.max(1) as f64 / (h.time_counted_ns as f64 / 1e9);
    let secs = (2.0 * min as f64 / per_s).min(120.0);
    println!("{per_s:.0} samples/s on the slowest CPU: counting {secs:.0} s");
    secs
}

/// spread [MAX_MS KIND]: every online CPU starts at once; prints the start and stop spreads, which
/// the per-CPU start offsets must agree with; with MAX_MS, a register-back-end request of KIND
/// whose spreads must stay below it.
fn spread(args: &[String]) {
    let cpus = online_cpus();
    let limit: Option<u64> = args.get(2).map(|_| arg(args, 2, "max ms"));
    let r = match args.get(3) {
        Some(kind) => msr_request(kind, &cpus),
        None => software(&cpus),
    };
    let mut f = must_open();
    must_submit(&mut f, &r);
    std::thread::sleep(Duration::from_millis(300));
    let (h, recs, _) = collect(&mut f);
    let offsets: Vec<u64> = recs.iter().map(|c| c.start_offset_ns).collect();
    println!(
        "{} CPUs: start spread {} us, stop spread {} us",
        recs.len(),
        h.start_spread_ns / 1000,
        h.stop_spread_ns / 1000
    );
    let consistent = offsets.iter().max() == Some(&h.start_spread_ns)
        && offsets.contains(&0)
        && h.start_spread_ns < h.time_counted_ns;
    let within = limit
        .is_none_or(|ms| h.start_spread_ns < ms * 1_000_000 && h.stop_spread_ns < ms * 1_000_000);
    if recs.len() != cpus.len() || !consistent || !within {
        fail(format!(
            "spreads {} / {} ns over {} CPUs, offsets {offsets:?}",
            h.start_spread_ns,
            h.stop_spread_ns,
            recs.len()
        ));
    }
}

/// A write whose allocation fails leaves no earlier measurement to read.
fn failed_alloc_write(_: &[String]) {
    let mut f = must_open();
    must_submit(&mut f, &software(&[0]));
    collect(&mut f);
    let req = encode(&software(&[0]));
    let mut fs = FailSlab::new();
    fs.set(true);
    let w = f.write(&req);
    fs.set(false);
    match w {
        Err(e) if errno(&e) == libc::ENOMEM => {}
        other => fail(format!("write under failslab gave {other:?}")),
    }
    let h = wire::ResponseHeader::decode(&read_all(&mut f)).unwrap_or_else(|| fail("short".into()));
    if h.error_code != wire::ERR_NO_MEMORY || h.status != -libc::ENOMEM {
        fail(format!("after a failed write the read gave {h:?}"));
    }
}

/// failed-alloc-stop KIND: stopping cannot allocate its response; the counters are stopped anyway
/// and the next read says why.
fn failed_alloc_stop(args: &[String]) {
    let mut f = must_open();
    must_submit(&mut f, &msr_request(&args[2], &online_cpus()));
    std::thread::sleep(Duration::from_millis(100));
    let mut buf = vec![0u8; 1 << 16];
    let mut fs = FailSlab::new();
    fs.set(true);
    let first = f.read(&mut buf);
    fs.set(false);
    match first {
        Err(e) if errno(&e) == libc::ENOMEM => {}
        other => fail(format!("read under failslab gave {other:?}")),
    }
    let h = wire::ResponseHeader::decode(&read_all(&mut f)).unwrap_or_else(|| fail("short".into()));
    if h.error_code != wire::ERR_NO_MEMORY {
        fail(format!("after a failed stop the read gave {h:?}"));
    }
    if sim_state().iter().any(|c| c.0 != 0) {
        fail("counters still run after the failed stop".into());
    }
}

/// An arum JSON report: every event counted on CPUS CPUs, each with a non-zero count.
fn counts(args: &[String]) {
    let r = report(&args[2]);
    let want: usize = arg(args, 3, "cpus");
    let c = &r["counters"];
    if c["backend"] != "kmod" {
        fail(format!("backend {}", c["backend"]));
    }
    for e in c["events"].as_array().unwrap() {
        let per_cpu = e["per_cpu"].as_array().unwrap();
        if e["status"] != "counted"
            || per_cpu.len() != want
            || per_cpu.iter().any(|p| p["raw"].as_u64() == Some(0))
        {
            fail(format!("{} not counted on all {want} CPUs: {e}", e["name"]));
        }
    }
}

/// An arum report with -I: several intervals, and they sum to each event's total.
fn intervals(args: &[String]) {
    let r = report(&args[2]);
    let c = &r["counters"];
    let intervals = c["intervals"].as_array().unwrap();
    if intervals.len() < 3 {
        fail(format!("only {} intervals", intervals.len()));
    }
    for (e, ev) in c["events"].as_array().unwrap().iter().enumerate() {
        let sum: u64 = intervals
            .iter()
            .map(|i| {
                i["counts"][e]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .sum::<u64>()
            })
            .sum();
        if sum != ev["total_raw"].as_u64().unwrap() {
            fail(format!(
                "{}: intervals sum to {sum}, total {}",
                ev["name"], ev["total_raw"]
            ));
        }
    }
}

/// An arum report: peak memory measured by METHOD, at least MIN MiB and below MAX MiB.
fn peak(args: &[String]) {
    let r = report(&args[2]);
    let p = &r["usage"]["peak_memory"];
    let min: u64 = arg(args, 3, "min");
    let max: u64 = args
        .get(5)
        .and_then(|m| m.parse().ok())
        .unwrap_or(u64::MAX >> 20);
    let peak = p["peak_rss_bytes"].as_u64().unwrap_or(0);
    if p["method"] != args[4].as_str() || peak < min << 20 || peak >= max << 20 {
        fail(format!("expected {min}..{max} MiB by {}: {p}", args[4]));
    }
}

/// An arum report taken with the simulated PMU: every event on every CPU counted RATE events per
/// microsecond of counting time (within 1%), and at least MIN events.
fn sim_rate(args: &[String]) {
    let r = report(&args[2]);
    let rate: f64 = arg(args, 3, "rate");
    let min: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
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
                fail(format!(
                    "{} on CPU {}: {raw} events, expected {expected:.0} (min {min})",
                    e["name"], p["cpu"]
                ));
            }
        }
    }
}

fn report(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("bad JSON: {e}")))
}

/// Takes the credentials in the order that keeps each change permitted (the user last).
/// The one supplementary group given as argument `i`, if any.
fn group_arg(args: &[String], i: usize) -> Vec<Gid> {
    args.get(i)
        .and_then(|g| g.parse().ok())
        .map(Gid::from_raw)
        .into_iter()
        .collect()
}

fn drop_to(uid: u32, gid: u32, groups: &[Gid]) {
    setgroups(groups).unwrap_or_else(|e| fail(format!("setgroups: {e}")));
    setgid(Gid::from_raw(gid)).unwrap_or_else(|e| fail(format!("setgid: {e}")));
    setuid(Uid::from_raw(uid)).unwrap_or_else(|e| fail(format!("setuid: {e}")));
}

/// Stays root but in no supplementary group, with every capability except CAP_SYS_ADMIN, and
/// CAP_PERFMON only if `perfmon`.
fn keep_caps(perfmon: bool) {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const CAP_SYS_ADMIN: u32 = 21;
    const CAP_PERFMON: u32 = 38;
    let mut caps = [Data {
        effective: !0,
        permitted: !0,
        inheritable: 0,
    }; 2];
    for d in caps.iter_mut() {
        d.effective = d.permitted;
    }
    let clear = |caps: &mut [Data; 2], cap: u32| {
        let d = &mut caps[(cap / 32) as usize];
        d.effective &= !(1 << (cap % 32));
        d.permitted &= !(1 << (cap % 32));
    };
    clear(&mut caps, CAP_SYS_ADMIN);
    if !perfmon {
        clear(&mut caps, CAP_PERFMON);
    }
    let header = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    setgroups(&[]).unwrap_or_else(|e| fail(format!("setgroups: {e}")));
    setgid(Gid::from_raw(1000)).unwrap_or_else(|e| fail(format!("setgid: {e}")));
    // SAFETY: capset(2) reads the header and the two data records (the count version 3 of the
    // header, _LINUX_CAPABILITY_VERSION_3, asks for) through pointers to these locals, which
    // are #[repr(C)] as the kernel lays them out; it writes nothing.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, caps.as_ptr()) };
    if rc != 0 {
        fail(format!("capset: {}", std::io::Error::last_os_error()));
    }
}
