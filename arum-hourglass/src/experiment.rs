//! What an Hourglass run is made of, as plain data: the threads, each with its execution model,
//! priority, CPUs, timer and active window, and the names a command line gives them. A request's
//! directives (`replay`) build one; the engine runs it; the analyses and renderings read it.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use arum_units::{duration, size};

/// One Hourglass run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Experiment {
    /// From the common start to the end of the run.
    #[serde(with = "secs")]
    pub duration: Duration,
    pub threads: Vec<ThreadSpec>,
    /// Records the trace buffer holds (intervals, jobs, wake-ups); allocated and locked before
    /// the run starts.
    pub records: usize,
    pub gap: GapChoice,
    /// Let the CPUs enter deep idle states between wake-ups (`--deep-idle`); by default a run
    /// with latency threads holds them shallow, as cyclictest does.
    #[serde(default)]
    pub deep_idle: bool,
}

/// How the GAP threshold is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GapChoice {
    /// `factor` times the slowest thread's measured loop iteration (median).
    Auto { factor: f64 },
    /// Given by the user (`--gap`).
    Fixed {
        #[serde(with = "secs")]
        gap: Duration,
    },
}

/// One thread of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSpec {
    pub workload: Workload,
    pub priority: Priority,
    /// CPUs the thread may run on (`None`: those of the process).
    pub affinity: Option<Vec<usize>>,
    pub timer: TimerKind,
    /// Offset into the run at which the thread starts.
    #[serde(with = "secs")]
    pub start: Duration,
    /// Offset into the run at which the thread stops (`None`: the end of the run).
    #[serde(with = "opt_secs")]
    pub finish: Option<Duration>,
}

impl Default for ThreadSpec {
    fn default() -> Self {
        ThreadSpec {
            workload: Workload::Cpu,
            priority: Priority::NORMAL,
            affinity: None,
            timer: TimerKind::Nanosleep,
            start: Duration::ZERO,
            finish: None,
        }
    }
}

impl ThreadSpec {
    /// The thread's active window within a run of `duration`: [start, finish).
    pub fn window(&self, duration: Duration) -> (Duration, Duration) {
        let finish = self.finish.unwrap_or(duration).min(duration);
        (self.start.min(finish), finish)
    }
}

/// A thread execution model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Workload {
    /// Runs whenever it can.
    Cpu,
    /// Runs whenever it can, walking an array of `bytes` (a working set in the caches).
    CpuScan { bytes: usize },
    /// Runs until it received `amount` of CPU, then yields.
    CpuYield {
        #[serde(with = "secs")]
        amount: Duration,
    },
    /// Both of the above.
    CpuScanYield {
        bytes: usize,
        #[serde(with = "secs")]
        amount: Duration,
    },
    /// Needs `amount` of CPU in each `period`, then blocks until the next period starts; a job
    /// not served by the end of its period is a deadline miss.
    Periodic {
        #[serde(with = "secs")]
        amount: Duration,
        #[serde(with = "secs")]
        period: Duration,
    },
    /// Never blocks: each time it received `amount` it starts another period at once; a job that
    /// took longer than `period` is a deadline miss.
    CpuPeriodic {
        #[serde(with = "secs")]
        amount: Duration,
        #[serde(with = "secs")]
        period: Duration,
    },
    /// Dispatch latency: sleeps until `period` after it woke, and records how late it woke.
    Lat {
        #[serde(with = "secs")]
        period: Duration,
    },
}

impl Workload {
    /// Whether the model ever blocks or yields by itself (the paper's inferences about gaps in a
    /// thread that "never blocks" apply only when this is false).
    pub fn blocks(&self) -> bool {
        matches!(
            self,
            Workload::CpuYield { .. }
                | Workload::CpuScanYield { .. }
                | Workload::Periodic { .. }
                | Workload::Lat { .. }
        )
    }

    /// Whether the model records intervals of CPU time (all but the latency test).
    pub fn traces_intervals(&self) -> bool {
        !matches!(self, Workload::Lat { .. })
    }

    /// The working set walked on every iteration, if any.
    pub fn scan_bytes(&self) -> Option<usize> {
        match *self {
            Workload::CpuScan { bytes } | Workload::CpuScanYield { bytes, .. } => Some(bytes),
            _ => None,
        }
    }

    /// The period of the periodic and latency models.
    pub fn period(&self) -> Option<Duration> {
        match *self {
            Workload::Periodic { period, .. }
            | Workload::CpuPeriodic { period, .. }
            | Workload::Lat { period } => Some(period),
            _ => None,
        }
    }
}

impl Workload {
    /// Reads a model and its arguments as the original writes them (`-w PERIODIC 4ms 5ms`):
    /// the name in any case, times and sizes with their units.
    pub fn parse(words: &[String]) -> Result<Workload, String> {
        let name = words
            .first()
            .map(|w| w.to_ascii_uppercase())
            .unwrap_or_default();
        let args = &words[1.min(words.len())..];
        let want = |n: usize, form: &str| {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "-w {name} needs {form}, e.g. -w {}",
                    example(&name)
                ))
            }
        };
        let time = |text: &String, what: &str| match duration::parse(text) {
            Ok(d) if d.is_zero() => Err(format!("-w {name}: {what} must be more than zero")),
            Ok(d) => Ok(d),
            Err(e) => Err(format!("-w {name}: {e}")),
        };
        let bytes = |text: &String| working_set(text).map_err(|e| format!("-w {name}: {e}"));
        match name.as_str() {
            "CPU" => want(0, "no arguments").map(|_| Workload::Cpu),
            "CPU_SCAN" => {
                want(1, "SIZE")?;
                Ok(Workload::CpuScan {
                    bytes: bytes(&args[0])?,
                })
            }
            "CPU_YIELD" => {
                want(1, "AMOUNT")?;
                Ok(Workload::CpuYield {
                    amount: time(&args[0], "AMOUNT")?,
                })
            }
            "CPU_SCAN_YIELD" => {
                want(2, "SIZE AMOUNT")?;
                Ok(Workload::CpuScanYield {
                    bytes: bytes(&args[0])?,
                    amount: time(&args[1], "AMOUNT")?,
                })
            }
            "PERIODIC" | "CPU_PERIODIC" => {
                want(2, "AMOUNT PERIOD")?;
                let amount = time(&args[0], "AMOUNT")?;
                let period = time(&args[1], "PERIOD")?;
                if amount > period {
                    return Err(format!(
                        "-w {name}: AMOUNT {} exceeds PERIOD {}: every deadline would be missed",
                        duration::format(amount),
                        duration::format(period)
                    ));
                }
                Ok(if name == "PERIODIC" {
                    Workload::Periodic { amount, period }
                } else {
                    Workload::CpuPeriodic { amount, period }
                })
            }
            "LAT" => {
                want(1, "PERIOD")?;
                Ok(Workload::Lat {
                    period: time(&args[0], "PERIOD")?,
                })
            }
            _ => Err(format!(
                "unknown model {name:?}: use CPU, CPU_SCAN, CPU_YIELD, CPU_SCAN_YIELD, PERIODIC, \
                 CPU_PERIODIC or LAT"
            )),
        }
    }
}

/// A model's usage example, for the error that names its arguments.
fn example(name: &str) -> &'static str {
    match name {
        "CPU_SCAN" => "CPU_SCAN 64K",
        "CPU_YIELD" => "CPU_YIELD 0.9ms",
        "CPU_SCAN_YIELD" => "CPU_SCAN_YIELD 64K 0.9ms",
        "PERIODIC" => "PERIODIC 4ms 5ms",
        "CPU_PERIODIC" => "CPU_PERIODIC 10ms 50ms",
        "LAT" => "LAT 5.3ms",
        _ => "CPU",
    }
}

/// The largest working set a scan model walks: far beyond any cache, far below what the
/// machine could lock.
const LARGEST_WORKING_SET: u64 = 1 << 40;

/// Reads a working-set size (`64K`, `1.5M`): at least a byte, at most 1 TiB, and no more than
/// the machine's memory (a thread writes all of it before it starts).
pub fn working_set(text: &str) -> Result<usize, String> {
    let bytes = size::parse(text)?;
    if !(1..=LARGEST_WORKING_SET).contains(&bytes) {
        return Err(format!(
            "{:?}: a working set between 1 byte and 1 TiB, please",
            text.trim()
        ));
    }
    if let Some(total) = memory_total() {
        if bytes > total {
            return Err(format!(
                "{:?}: more than this machine's memory ({}); choose a smaller working set",
                text.trim(),
                size::format(total as f64)
            ));
        }
    }
    usize::try_from(bytes).map_err(|_| format!("{:?} does not fit in memory", text.trim()))
}

/// MemTotal of /proc/meminfo, in bytes.
fn memory_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let time = |d: Duration| duration::format(d);
        let bytes = |b: usize| size::format(b as f64);
        match *self {
            Workload::Cpu => write!(f, "CPU"),
            Workload::CpuScan { bytes: b } => write!(f, "CPU_SCAN {}", bytes(b)),
            Workload::CpuYield { amount } => write!(f, "CPU_YIELD {}", time(amount)),
            Workload::CpuScanYield { bytes: b, amount } => {
                write!(f, "CPU_SCAN_YIELD {} {}", bytes(b), time(amount))
            }
            Workload::Periodic { amount, period } => {
                write!(f, "PERIODIC {} {}", time(amount), time(period))
            }
            Workload::CpuPeriodic { amount, period } => {
                write!(f, "CPU_PERIODIC {} {}", time(amount), time(period))
            }
            Workload::Lat { period } => write!(f, "LAT {}", time(period)),
        }
    }
}

/// A thread's priority: the original's names, mapped onto Linux's policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// SCHED_IDLE: runs only when nothing else on the CPU wants to.
    Idle,
    /// SCHED_OTHER with this nice value (LOW = 10, NORMAL = 0, HIGH = -10, HIGHEST = -20).
    Nice(i8),
    /// SCHED_FIFO with this priority (RTLOW = 10, RTMED = 50, RTHIGH = 90).
    Fifo(u8),
}

impl Priority {
    pub const LOW: Priority = Priority::Nice(10);
    pub const NORMAL: Priority = Priority::Nice(0);
    pub const HIGH: Priority = Priority::Nice(-10);
    pub const HIGHEST: Priority = Priority::Nice(-20);
    pub const RTLOW: Priority = Priority::Fifo(10);
    pub const RTMED: Priority = Priority::Fifo(50);
    pub const RTHIGH: Priority = Priority::Fifo(90);

    /// Parses the original's names, or `NICE:N` / `FIFO:N` for any other level.
    pub fn parse(text: &str) -> Result<Priority, String> {
        let upper = text.to_ascii_uppercase();
        let named = match upper.as_str() {
            "IDLE" => Some(Priority::Idle),
            "LOW" => Some(Priority::LOW),
            "NORMAL" => Some(Priority::NORMAL),
            "HIGH" => Some(Priority::HIGH),
            "HIGHEST" => Some(Priority::HIGHEST),
            "RTLOW" => Some(Priority::RTLOW),
            "RTMED" => Some(Priority::RTMED),
            "RTHIGH" => Some(Priority::RTHIGH),
            _ => None,
        };
        if let Some(p) = named {
            return Ok(p);
        }
        let bad = || {
            format!(
                "unknown priority {text:?}: use IDLE, LOW, NORMAL, HIGH, HIGHEST (nice), \
                 RTLOW, RTMED, RTHIGH (SCHED_FIFO), NICE:-20..19 or FIFO:1..99"
            )
        };
        match upper.split_once(':') {
            Some(("NICE", n)) => match n.parse::<i8>() {
                Ok(n) if (-20..=19).contains(&n) => Ok(Priority::Nice(n)),
                _ => Err(bad()),
            },
            Some(("FIFO", n)) => match n.parse::<u8>() {
                Ok(n) if (1..=99).contains(&n) => Ok(Priority::Fifo(n)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }

    pub fn is_realtime(&self) -> bool {
        matches!(self, Priority::Fifo(_))
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Priority::Idle => write!(f, "IDLE (SCHED_IDLE)"),
            Priority::LOW => write!(f, "LOW (nice 10)"),
            Priority::NORMAL => write!(f, "NORMAL (nice 0)"),
            Priority::HIGH => write!(f, "HIGH (nice -10)"),
            Priority::HIGHEST => write!(f, "HIGHEST (nice -20)"),
            Priority::Nice(n) => write!(f, "nice {n}"),
            Priority::RTLOW => write!(f, "RTLOW (SCHED_FIFO 10)"),
            Priority::RTMED => write!(f, "RTMED (SCHED_FIFO 50)"),
            Priority::RTHIGH => write!(f, "RTHIGH (SCHED_FIFO 90)"),
            Priority::Fifo(p) => write!(f, "SCHED_FIFO {p}"),
        }
    }
}

/// How blocking threads wait for an absolute time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimerKind {
    /// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME): the native timer.
    Nanosleep,
    /// A one-shot absolute timerfd on CLOCK_MONOTONIC, waited for with read().
    Timerfd,
    /// Spinning on the TSC until the time (the thread never blocks; its CPU is not "received").
    Busy,
}

impl TimerKind {
    pub fn parse(text: &str) -> Result<TimerKind, String> {
        match text.to_ascii_uppercase().as_str() {
            "NANOSLEEP" | "NATIVE" => Ok(TimerKind::Nanosleep),
            "TIMERFD" => Ok(TimerKind::Timerfd),
            "BUSY" => Ok(TimerKind::Busy),
            _ => Err(format!(
                "unknown timer {text:?}: use NANOSLEEP (alias NATIVE), TIMERFD or BUSY"
            )),
        }
    }
}

impl fmt::Display for TimerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimerKind::Nanosleep => "NANOSLEEP",
            TimerKind::Timerfd => "TIMERFD",
            TimerKind::Busy => "BUSY",
        })
    }
}

/// Durations as seconds (f64) in JSON.
pub(crate) mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// Optional durations as seconds (f64) or null in JSON.
pub(crate) mod opt_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|v| Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_working_set_beyond_the_machines_memory_is_refused() {
        let Some(total) = memory_total() else {
            return;
        };
        let over = total + (1 << 20);
        let e = working_set(&format!("{over}B")).unwrap_err();
        let expected = if over > LARGEST_WORKING_SET {
            "between 1 byte and 1 TiB"
        } else {
            "more than this machine's memory"
        };
        assert!(e.contains(expected), "{e}");
        assert!(working_set(&format!("{}B", total / 2)).is_ok());
    }

    #[test]
    fn priorities_by_name_and_by_level() {
        let _one = crate::exclusive();
        assert_eq!(Priority::parse("rthigh").unwrap(), Priority::Fifo(90));
        assert_eq!(Priority::parse("LOW").unwrap(), Priority::Nice(10));
        assert_eq!(Priority::parse("IDLE").unwrap(), Priority::Idle);
        assert_eq!(Priority::parse("nice:-5").unwrap(), Priority::Nice(-5));
        assert_eq!(Priority::parse("FIFO:99").unwrap(), Priority::Fifo(99));
        for bad in ["FIFO:0", "NICE:20", "URGENT", "FIFO:x"] {
            assert!(
                Priority::parse(bad).unwrap_err().contains("RTHIGH"),
                "{bad}"
            );
        }
    }

    #[test]
    fn models_show_as_written() {
        let _one = crate::exclusive();
        let w = Workload::Periodic {
            amount: Duration::from_millis(4),
            period: Duration::from_millis(5),
        };
        assert_eq!(w.to_string(), "PERIODIC 4 ms 5 ms");
        assert!(w.blocks());
        assert!(!Workload::CpuScan { bytes: 65536 }.blocks());
        assert_eq!(
            Workload::CpuScan { bytes: 65536 }.to_string(),
            "CPU_SCAN 64 KiB"
        );
    }

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn models_as_the_original_writes_them() {
        let _one = crate::exclusive();
        let ms = Duration::from_millis;
        let cases = [
            ("CPU", Workload::Cpu),
            ("cpu_scan 64K", Workload::CpuScan { bytes: 65536 }),
            (
                "CPU_YIELD 0.9ms",
                Workload::CpuYield {
                    amount: Duration::from_micros(900),
                },
            ),
            (
                "CPU_SCAN_YIELD 1.5M 2ms",
                Workload::CpuScanYield {
                    bytes: 3 << 19,
                    amount: ms(2),
                },
            ),
            (
                "PERIODIC 4ms 5ms",
                Workload::Periodic {
                    amount: ms(4),
                    period: ms(5),
                },
            ),
            (
                "CPU_PERIODIC 5ms 5ms",
                Workload::CpuPeriodic {
                    amount: ms(5),
                    period: ms(5),
                },
            ),
            (
                "LAT 5.3ms",
                Workload::Lat {
                    period: Duration::from_micros(5300),
                },
            ),
        ];
        for (text, want) in cases {
            assert_eq!(Workload::parse(&words(text)), Ok(want), "{text}");
        }
    }

    #[test]
    fn models_refused_name_the_fix() {
        let _one = crate::exclusive();
        let cases = [
            ("", "unknown model"),
            ("SPIN", "unknown model"),
            ("CPU 1ms", "-w CPU needs no arguments"),
            ("PERIODIC 4ms", "e.g. -w PERIODIC 4ms 5ms"),
            ("PERIODIC 6ms 5ms", "AMOUNT 6 ms exceeds PERIOD 5 ms"),
            ("LAT 0", "PERIOD must be more than zero"),
            ("LAT 5", "-w LAT: \"5\" has no unit"),
            // A bare size is refused as every size in arum is: it asks for a unit.
            ("CPU_SCAN 32", "-w CPU_SCAN: \"32\" has no unit"),
            ("CPU_SCAN 0", "between 1 byte and 1 TiB"),
            ("CPU_SCAN 2T", "between 1 byte and 1 TiB"),
            ("CPU_SCAN 3X", "unknown unit"),
        ];
        for (text, want) in cases {
            let e = Workload::parse(&words(text)).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    proptest::proptest! {
        /// Whatever the words, a model or one line naming the problem; never a panic.
        #[test]
        fn any_words_give_a_model_or_one_line(words in proptest::collection::vec("[A-Za-z_0-9. µ]{0,12}", 0..4)) {
            let _one = crate::exclusive();
            if let Err(e) = Workload::parse(&words) {
                proptest::prop_assert!(!e.is_empty() && !e.contains('\n'));
            }
        }
    }

    #[test]
    fn windows_are_clamped_to_the_run() {
        let _one = crate::exclusive();
        let t = ThreadSpec {
            start: Duration::from_secs(1),
            finish: Some(Duration::from_secs(9)),
            ..Default::default()
        };
        assert_eq!(
            t.window(Duration::from_secs(5)),
            (Duration::from_secs(1), Duration::from_secs(5))
        );
    }
}
