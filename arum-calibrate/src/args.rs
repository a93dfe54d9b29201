//! `arum calibrate`'s command line (parsing only; the crate's core takes domain settings).

use std::path::PathBuf;

use clap::{ArgAction, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Measure this machine's operating-system and hardware costs (timer, calls, system calls,
/// process and thread creation, context switches, memory latency and bandwidth, page faults,
/// TCP, file reads), each repeated until its median is known to ±2% (90% confidence) or a time
/// limit, with mean, sd, min, max and a histogram.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = "The measurements and how each is taken: arum calibrate --list.")]
pub struct Args {
    /// Measure only these: groups (timing, cpu, tasks, memory, network, files), measurement
    /// names, or dotted prefixes (tasks.switch); comma- or space-separated, repeatable.
    #[arg(long, value_name = "NAME", num_args = 1.., action = ArgAction::Append)]
    pub only: Vec<String>,

    /// A short run: fewer sizes, smaller buffers and files, the suite within about 25 s.
    #[arg(long)]
    pub quick: bool,

    /// Output format (JSON: schema arum.calibration/1).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Write the report to FILE (atomically) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write SVG plots into DIR: a histogram per measurement, the memory-latency curve
    /// with the cache sizes, the file-cache curve.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,

    /// Show the predictions in FILE (TOML: `"cpu.syscall.getppid" = "150 ns"`, or a table with
    /// hardware, software and note) beside the measurements.
    #[arg(long, value_name = "FILE")]
    pub predict: Option<PathBuf>,

    /// Keep the figures for this host, CPU and kernel in the user's cache directory; later
    /// `arum` runs estimate the time spent in context switches, page faults and process
    /// creation from them.
    #[arg(long)]
    pub save: bool,

    /// Directory for the file and page-fault measurements (default: a new temporary directory,
    /// removed afterwards); its file system decides what can be measured (tmpfs has no device,
    /// overlayfs and tmpfs no O_DIRECT).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// List the measurements with their methods, and exit.
    #[arg(long)]
    pub list: bool,

    /// Also run perf bench (linux-perf) and sysbench where installed, and show their figures
    /// beside ours, measured right after each.
    #[arg(long)]
    pub peers: bool,

    /// Print every histogram in full (the tables show each as one line).
    #[arg(long)]
    pub histograms: bool,

    /// Longest time to repeat one measurement (default 1s; 250ms with --quick).
    #[arg(long, value_name = "DURATION")]
    pub time_limit: Option<humantime::Duration>,

    /// Target half-width of the median's 90% confidence interval, in percent of the median.
    #[arg(long, value_name = "PERCENT", default_value_t = 2.0)]
    pub ci: f64,

    /// Largest file of the file-cache curve, e.g. 4GiB (default 1GiB; 64MiB with --quick).
    /// Above the memory the kernel reports available, the curve shows where the cache ends.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub file_max: Option<u64>,

    /// Delay packets on the veth pair by DELAY with tc netem (e.g. 1ms) and measure the round
    /// trip to this emulated remote host.
    #[arg(long, value_name = "DELAY")]
    pub netem: Option<humantime::Duration>,
}

/// `64MiB`, `1GiB`, `512M`, `1G`, or bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 512MiB, 4GiB)"))?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        u => return Err(format!("unknown size unit {u:?} (use KiB, MiB, GiB)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("{s:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn options_parse() {
        let c = Cli::parse_from([
            "x",
            "--only",
            "tasks.switch",
            "memory",
            "--only",
            "cpu,timing",
            "--quick",
            "--file-max",
            "2GiB",
            "--netem",
            "1ms",
            "--format",
            "json",
        ]);
        assert_eq!(c.args.only, ["tasks.switch", "memory", "cpu,timing"]);
        assert_eq!(c.args.file_max, Some(2 << 30));
        assert_eq!(
            c.args.netem.map(|d| *d),
            Some(std::time::Duration::from_millis(1))
        );
        assert_eq!(c.args.format, Format::Json);
        assert!(parse_size("12 parsecs").is_err());
    }
}
