//! `arum info`: what an analyst needs to know before measuring on this machine.

use serde::Serialize;

use crate::error::ArumError;
use crate::system::{self, perms::Permissions};

#[derive(Debug, Serialize)]
struct Info {
    arum_version: String,
    kernel_release: String,
    kernel_version: String,
    arch: String,
    cpu: arum_events::cpu::CpuIdent,
    cpu_key: String,
    /// The event table ARUM has for this CPU, if any.
    microarchitecture: Option<String>,
    /// Counters as CPUID reports them (absent when the CPU, or a VM, hides them).
    pmu: Option<arum_events::cpu::PmuFacts>,
    /// General counters of this model as its event table lists them (what `arum list` shows).
    #[serde(default)]
    table_counters: Option<u32>,
    online_cpus: Vec<u32>,
    permissions: Permissions,
    device: Device,
    backends: Backends,
}

/// Which counting back-ends work here, tried for real on arum itself.
#[derive(Debug, Serialize)]
struct Backends {
    /// perf_event_open with a software event (task-clock).
    perf_software: Probe,
    /// perf_event_open with a generic hardware event (instructions): needs a PMU.
    perf_hardware: Probe,
    /// The /dev/arum module.
    kmod: Probe,
    /// The in-kernel engine (BPF programs) of --syscalls and --per-task.
    bpf: Probe,
}

/// Whether something works here, and why not.
#[derive(Debug, Clone, Serialize)]
struct Probe {
    usable: bool,
    reason: Option<String>,
}

impl From<Result<(), String>> for Probe {
    fn from(r: Result<(), String>) -> Probe {
        Probe {
            usable: r.is_ok(),
            reason: r.err(),
        }
    }
}

fn probe(type_: u32, config: u64) -> Result<(), String> {
    let attr = crate::perf::sys::Attr {
        type_,
        config,
        exclude_kernel: true,
        disabled: true,
        ..Default::default()
    };
    crate::perf::sys::open(&attr, 0, -1, None)
        .map(drop)
        .map_err(|e| format!("{} ({e:?})", e.desc()))
}

#[derive(Debug, Serialize)]
struct Device {
    path: &'static str,
    exists: bool,
    /// Whether arum could open it, or why not.
    open: Probe,
}

const DEVICE: &str = arum_wire::DEVICE_PATH;

/// How `arum info` and `arum list` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfoFormat {
    Text,
    Json,
}

pub fn run(format: InfoFormat) -> Result<i32, ArumError> {
    let meta = system::metadata(std::time::SystemTime::now());
    let table = arum_events::table::TableSource::new(None)
        .for_cpu(&meta.cpu)
        .ok()
        .flatten();
    let device_open = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(DEVICE)
        .map(drop)
        .map_err(|e| e.to_string());
    let info = Info {
        arum_version: meta.arum_version,
        kernel_release: meta.kernel_release,
        kernel_version: meta.kernel_version,
        arch: meta.arch,
        cpu_key: meta.cpu.key(),
        microarchitecture: table.map(|t| format!("{} [{}]", t.title(), t.name())),
        table_counters: table.map(|t| t.pmu().general_counters),
        pmu: meta.cpu.detect_pmu(),
        cpu: meta.cpu,
        online_cpus: system::cpulist::online().unwrap_or_default(),
        permissions: Permissions::current(),
        backends: Backends {
            perf_software: probe(1, 1).into(),
            perf_hardware: probe(0, 1).into(),
            kmod: device_open
                .clone()
                .map_err(|e| format!("{DEVICE}: {e}"))
                .into(),
            bpf: arum_bpf::probe().map_err(|u| u.0).into(),
        },
        device: Device {
            path: DEVICE,
            exists: std::path::Path::new(DEVICE).exists(),
            open: device_open.into(),
        },
    };
    let text = match format {
        InfoFormat::Json => serde_json::to_string_pretty(&info).expect("serialises") + "\n",
        InfoFormat::Text => render_text(&info),
    };
    print!("{text}");
    Ok(0)
}

fn usable(p: &Probe) -> String {
    match &p.reason {
        None => "usable".into(),
        Some(e) => format!("not usable: {e}"),
    }
}

fn render_text(i: &Info) -> String {
    let mut rows = machine_rows(i);
    rows.extend(access_rows(i));
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{k:<width$}  {v}\n"))
        .collect()
}

/// arum, the kernel and the processor: its identity, event table and counters.
fn machine_rows(i: &Info) -> Vec<(&'static str, String)> {
    vec![
        ("arum version", i.arum_version.clone()),
        (
            "kernel",
            format!("{} {} ({})", i.kernel_release, i.kernel_version, i.arch),
        ),
        ("cpu vendor", i.cpu.vendor.clone()),
        (
            "cpu family/model/stepping",
            format!(
                "{} / 0x{:X} / {} (key {})",
                i.cpu.family, i.cpu.model, i.cpu.stepping, i.cpu_key
            ),
        ),
        ("cpu model name", i.cpu.model_name.clone()),
        (
            "microarchitecture",
            i.microarchitecture
                .clone()
                .unwrap_or_else(|| "no ARUM event table (generic, architectural or AMD legacy events by name; raw codes)".into()),
        ),
        (
            "counters (CPUID)",
            counters_row(i),
        ),
        (
            "online cpus",
            format!("{} ({:?})", i.online_cpus.len(), i.online_cpus),
        ),
    ]
}

/// The counters CPUID reports, which arum places events on, and the table's figure where it
/// differs (the one `arum list` shows for the model).
fn counters_row(i: &Info) -> String {
    let Some(p) = &i.pmu else {
        return "none reported (CPUID leaf 0xA version 0: a VM hiding the PMU?)".into();
    };
    let mut row = format!("{} general of {} bits", p.general_counters, p.counter_width);
    if p.fixed_counters > 0 {
        row += &format!(", {} fixed of {} bits", p.fixed_counters, p.fixed_width);
    }
    if p.arch_perfmon_version > 0 {
        row += &format!(" (architectural perfmon v{})", p.arch_perfmon_version);
    }
    match i.table_counters {
        Some(t) if t != p.general_counters => {
            row += &format!(
                "; events are placed on these; the event table lists {t} general for this model \
                 (`arum list`): a VM may hide some"
            )
        }
        _ => {}
    }
    row
}

/// What this process may count, and which back-ends open.
fn access_rows(i: &Info) -> Vec<(&'static str, String)> {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let p = &i.permissions;
    vec![
        (
            "perf_event_paranoid",
            p.perf_event_paranoid
                .map_or("absent (kernel without perf events)".into(), |v| {
                    v.to_string()
                }),
        ),
        ("root", yes(p.root).into()),
        (
            "CAP_PERFMON / CAP_SYS_ADMIN",
            format!("{} / {}", yes(p.cap_perfmon), yes(p.cap_sys_admin)),
        ),
        (
            "system-wide counting allowed",
            yes(p.system_wide_allowed()).into(),
        ),
        (
            "kernel-mode counting allowed",
            yes(p.kernel_allowed()).into(),
        ),
        (
            "/dev/arum",
            match (&i.device.exists, &i.device.open.reason) {
                (false, _) => "absent (module not loaded)".into(),
                (true, None) => "present, opens".into(),
                (true, Some(e)) => format!("present, cannot open: {e}"),
            },
        ),
        (
            "perf_event_open, software events",
            usable(&i.backends.perf_software),
        ),
        (
            "perf_event_open, hardware events",
            usable(&i.backends.perf_hardware),
        ),
        ("kmod back-end (/dev/arum)", usable(&i.backends.kmod)),
        ("in-kernel probe engine (BPF)", usable(&i.backends.bpf)),
    ]
}
