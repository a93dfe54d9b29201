//! What the kernel says about its clock tick, to set beside what the gaps say: CONFIG_HZ and
//! the tickless mode from the kernel's configuration (/proc/config.gz, or /boot/config-RELEASE),
//! the nohz_full CPUs, and, when no configuration is readable, the jiffies rate measured over
//! the run from /proc/timer_list (root only); and the local timer interrupts each CPU took
//! during the run, which a host that delivers a guest's tick late holds below HZ.

use std::io::Read;

use serde::{Deserialize, Serialize};

/// How the kernel runs its periodic tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TickMode {
    /// CONFIG_HZ_PERIODIC: the tick never stops.
    Periodic,
    /// CONFIG_NO_HZ_IDLE: the tick stops only on idle CPUs, so a busy CPU sees every tick.
    NohzIdle,
    /// CONFIG_NO_HZ_FULL: on nohz_full CPUs, the tick also stops while one task runs.
    NohzFull,
}

/// Where the HZ figure came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HzSource {
    Config(String),
    /// Jiffies counted over the run (rounded to a common HZ when within 2%).
    Jiffies,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelFacts {
    pub release: String,
    pub hz: Option<u32>,
    pub hz_source: Option<HzSource>,
    pub tick_mode: Option<TickMode>,
    /// CPUs in nohz_full mode.
    pub nohz_full: Vec<usize>,
    pub preempt: Option<String>,
    /// Local timer interrupts a second on each CPU over the run (CPU, rate), where the kernel
    /// lists them (x86's `LOC` line of /proc/interrupts).
    #[serde(default)]
    pub local_timer_hz: Vec<(usize, f64)>,
    /// Time the host took each CPU away over the run (CPU, ms; the kernel's steal time, which
    /// /proc/stat counts in 1/USER_HZ s): its preemptions are gaps whose cause the guest cannot
    /// see.
    #[serde(default)]
    pub stolen_ms: Vec<(usize, f64)>,
}

impl KernelFacts {
    pub fn read() -> KernelFacts {
        let release = nix::sys::utsname::uname()
            .map(|u| u.release().to_string_lossy().into_owned())
            .unwrap_or_default();
        let config = read_config(&release);
        let mut facts = config
            .as_ref()
            .map(|(text, path)| from_config(text, path))
            .unwrap_or(KernelFacts {
                release: String::new(),
                hz: None,
                hz_source: None,
                tick_mode: None,
                nohz_full: Vec::new(),
                preempt: None,
                local_timer_hz: Vec::new(),
                stolen_ms: Vec::new(),
            });
        facts.release = release;
        facts.nohz_full = std::fs::read_to_string("/sys/devices/system/cpu/nohz_full")
            .ok()
            .and_then(|s| parse_cpu_list(s.trim()))
            .unwrap_or_default();
        facts
    }

    /// Fills the local timer interrupts' rates from the counts at the run's start and end,
    /// `seconds` apart.
    pub fn timer_rates(&mut self, before: &[(u32, u64)], after: &[(u32, u64)], seconds: f64) {
        if seconds > 0.0 {
            self.local_timer_hz = per_cpu_change(before, after, 1.0 / seconds);
        }
    }

    /// Fills the steal time from the counts at the run's start and end, in clock ticks of
    /// `ticks_per_second`.
    pub fn stolen(&mut self, before: &[(u32, u64)], after: &[(u32, u64)], ticks_per_second: u64) {
        if ticks_per_second > 0 {
            self.stolen_ms = per_cpu_change(before, after, 1e3 / ticks_per_second as f64);
        }
    }

    /// The local timer interrupts a second `cpu` took over the run, where known.
    pub fn timer_hz(&self, cpu: usize) -> Option<f64> {
        on_cpu(&self.local_timer_hz, cpu)
    }

    /// The ms the host took `cpu` away over the run, where known.
    pub fn stolen_ms_on(&self, cpu: usize) -> Option<f64> {
        on_cpu(&self.stolen_ms, cpu)
    }

    /// Fills HZ from jiffies counted over a run, when the configuration did not say.
    pub fn hz_from_jiffies(&mut self, jiffies: u64, seconds: f64) {
        if self.hz.is_some() || seconds < 0.5 || jiffies == 0 {
            return;
        }
        let rate = jiffies as f64 / seconds;
        let hz = [100u32, 250, 300, 1000]
            .into_iter()
            .find(|&h| (rate / h as f64 - 1.0).abs() < 0.02)
            .unwrap_or(rate.round() as u32);
        self.hz = Some(hz);
        self.hz_source = Some(HzSource::Jiffies);
    }

    /// Whether a busy CPU gets a periodic tick (true unless it is a nohz_full CPU).
    pub fn ticks_while_busy(&self, cpu: usize) -> bool {
        !(self.tick_mode == Some(TickMode::NohzFull) && self.nohz_full.contains(&cpu))
    }
}

/// `cpu`'s figure in a per-CPU list.
fn on_cpu(list: &[(usize, f64)], cpu: usize) -> Option<f64> {
    list.iter().find(|c| c.0 == cpu).map(|c| c.1)
}

/// Each CPU's count in `after` less its count in `before`, times `scale`.
fn per_cpu_change(before: &[(u32, u64)], after: &[(u32, u64)], scale: f64) -> Vec<(usize, f64)> {
    after
        .iter()
        .filter_map(|&(cpu, b)| {
            let &(_, a) = before.iter().find(|c| c.0 == cpu)?;
            Some((cpu as usize, b.saturating_sub(a) as f64 * scale))
        })
        .collect()
}

fn read_config(release: &str) -> Option<(String, String)> {
    let gz = "/proc/config.gz";
    if let Ok(f) = std::fs::File::open(gz) {
        let mut text = String::new();
        if flate2::read::GzDecoder::new(f)
            .read_to_string(&mut text)
            .is_ok()
        {
            return Some((text, gz.into()));
        }
    }
    let boot = format!("/boot/config-{release}");
    std::fs::read_to_string(&boot).ok().map(|t| (t, boot))
}

fn from_config(text: &str, path: &str) -> KernelFacts {
    let on = |key: &str| text.lines().any(|l| l.trim() == format!("{key}=y"));
    let hz = text
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok());
    let tick_mode = if on("CONFIG_NO_HZ_FULL") {
        Some(TickMode::NohzFull)
    } else if on("CONFIG_NO_HZ_IDLE") {
        Some(TickMode::NohzIdle)
    } else if on("CONFIG_HZ_PERIODIC") {
        Some(TickMode::Periodic)
    } else {
        None
    };
    let preempt = [
        ("CONFIG_PREEMPT_RT", "PREEMPT_RT"),
        ("CONFIG_PREEMPT_DYNAMIC", "PREEMPT_DYNAMIC"),
        ("CONFIG_PREEMPT", "PREEMPT"),
        ("CONFIG_PREEMPT_VOLUNTARY", "PREEMPT_VOLUNTARY"),
        ("CONFIG_PREEMPT_NONE", "PREEMPT_NONE"),
    ]
    .into_iter()
    .find(|(k, _)| on(k))
    .map(|(_, v)| v.to_string());
    KernelFacts {
        release: String::new(),
        hz,
        hz_source: hz.map(|_| HzSource::Config(path.to_string())),
        tick_mode,
        nohz_full: Vec::new(),
        preempt,
        local_timer_hz: Vec::new(),
        stolen_ms: Vec::new(),
    }
}

/// The kernel's jiffies counter from /proc/timer_list (readable by root only).
pub fn jiffies() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/timer_list").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("jiffies: "))
        .and_then(|v| v.trim().parse().ok())
}

/// Parses a Linux CPU list ("0-3,8").
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    let mut cpus = Vec::new();
    for part in text.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 65536 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_gives_hz_and_the_tick_mode() {
        let f = from_config(
            "# CONFIG_NO_HZ_FULL is not set\nCONFIG_NO_HZ_IDLE=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_PREEMPT_DYNAMIC=y\n",
            "/proc/config.gz",
        );
        assert_eq!(f.hz, Some(250));
        assert_eq!(f.tick_mode, Some(TickMode::NohzIdle));
        assert_eq!(f.preempt.as_deref(), Some("PREEMPT_DYNAMIC"));
        let full = from_config("CONFIG_NO_HZ_FULL=y\nCONFIG_HZ=1000\n", "x");
        assert_eq!(full.tick_mode, Some(TickMode::NohzFull));
    }

    #[test]
    fn jiffies_round_to_a_common_hz() {
        let mut f = from_config("", "x");
        f.hz_from_jiffies(2_495, 10.0);
        assert_eq!(f.hz, Some(250));
        assert_eq!(f.hz_source, Some(HzSource::Jiffies));
    }

    #[test]
    fn per_cpu_rates_pair_cpus_by_number() {
        let mut f = from_config("", "x");
        f.timer_rates(&[(0, 100), (2, 50)], &[(0, 600), (2, 50), (3, 9)], 2.0);
        assert_eq!(f.local_timer_hz, [(0, 250.0), (2, 0.0)]);
        assert_eq!(f.timer_hz(0), Some(250.0));
        assert_eq!(f.timer_hz(3), None);
        f.stolen(&[(1, 4)], &[(1, 7)], 100);
        assert_eq!(f.stolen_ms, [(1, 30.0)]);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8").unwrap(), vec![0, 1, 2, 3, 8]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<usize>::new());
        assert!(parse_cpu_list("3-1").is_none());
        assert!(parse_cpu_list("x").is_none());
    }

    #[test]
    fn this_kernel_is_readable_or_says_nothing() {
        let f = KernelFacts::read();
        assert!(!f.release.is_empty());
        if let Some(hz) = f.hz {
            assert!((24..=10_000).contains(&hz), "{f:?}");
        }
    }
}
