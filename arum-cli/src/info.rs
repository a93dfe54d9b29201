//! `arum info`: what an analyst needs to know before measuring on this machine.

use serde::Serialize;

use crate::cli::{InfoArgs, InfoFormat};
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
    online_cpus: Vec<u32>,
    permissions: Permissions,
    device: Device,
}

#[derive(Debug, Serialize)]
struct Device {
    path: &'static str,
    exists: bool,
    /// Whether arum could open it, or why not.
    open: Result<(), String>,
}

const DEVICE: &str = "/dev/arum";

pub fn run(args: &InfoArgs) -> Result<i32, ArumError> {
    let meta = system::metadata(std::time::SystemTime::now());
    let info = Info {
        arum_version: meta.arum_version,
        kernel_release: meta.kernel_release,
        kernel_version: meta.kernel_version,
        arch: meta.arch,
        cpu_key: meta.cpu.key(),
        cpu: meta.cpu,
        online_cpus: system::cpulist::online().unwrap_or_default(),
        permissions: Permissions::current(),
        device: Device {
            path: DEVICE,
            exists: std::path::Path::new(DEVICE).exists(),
            open: std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(DEVICE)
                .map(drop)
                .map_err(|e| e.to_string()),
        },
    };
    let text = match args.format {
        InfoFormat::Json => serde_json::to_string_pretty(&info).expect("serialises") + "\n",
        InfoFormat::Text => render_text(&info),
    };
    print!("{text}");
    Ok(0)
}

fn render_text(i: &Info) -> String {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let p = &i.permissions;
    let rows = [
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
            "online cpus",
            format!("{} ({:?})", i.online_cpus.len(), i.online_cpus),
        ),
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
            match (&i.device.exists, &i.device.open) {
                (false, _) => "absent (module not loaded)".into(),
                (true, Ok(())) => "present, opens".into(),
                (true, Err(e)) => format!("present, cannot open: {e}"),
            },
        ),
    ];
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{k:<width$}  {v}\n"))
        .collect()
}
