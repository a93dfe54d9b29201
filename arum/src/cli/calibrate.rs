//! `arum calibrate`'s options, and what they ask of `arum_calibrate`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CalibrateFormat {
    Text,
    Json,
}

/// Measure this machine's operating-system and hardware costs (timer, calls, system calls,
/// process and thread creation, context switches, memory latency and bandwidth, page faults,
/// TCP, file reads), each repeated until its median is known to ±2% (90% confidence) or a time
/// limit, with mean, sd, min, max and a histogram.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = "The measurements and how each is taken: arum calibrate --list.")]
pub struct CalibrateArgs {
    /// Measure only these: groups (timing, cpu, tasks, memory, network, files), measurement
    /// names, or dotted prefixes (tasks.switch); comma- or space-separated, repeatable.
    #[arg(long, value_name = "NAME", num_args = 1.., action = ArgAction::Append)]
    pub only: Vec<String>,

    /// A short run: fewer sizes, smaller buffers and files, the suite within about 25 s.
    #[arg(long)]
    pub quick: bool,

    /// Output format (JSON: schema arum.calibration/1).
    #[arg(long, value_enum, default_value_t = CalibrateFormat::Text)]
    pub format: CalibrateFormat,

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
    #[arg(long, value_name = "DURATION", value_parser = crate::values::duration)]
    pub time_limit: Option<Duration>,

    /// Target half-width of the median's 90% confidence interval, in percent of the median.
    #[arg(long, value_name = "PERCENT", default_value_t = 2.0, value_parser = crate::values::percent)]
    pub ci: f64,

    /// Largest file of the file-cache curve, a number with its unit, e.g. 4GiB (default 1GiB;
    /// 64MiB with --quick). Above the memory the kernel reports available, the curve shows where
    /// the cache ends.
    #[arg(long, value_name = "SIZE", value_parser = crate::values::size)]
    pub file_max: Option<u64>,

    /// Delay packets on the veth pair by DELAY with tc netem (e.g. 1ms) and measure the round
    /// trip to this emulated remote host.
    #[arg(long, value_name = "DELAY", value_parser = crate::values::duration)]
    pub netem: Option<Duration>,
}

impl From<CalibrateArgs> for arum_calibrate::Request {
    fn from(a: CalibrateArgs) -> Self {
        arum_calibrate::Request {
            only: a.only,
            quick: a.quick,
            format: match a.format {
                CalibrateFormat::Text => arum_calibrate::Format::Text,
                CalibrateFormat::Json => arum_calibrate::Format::Json,
            },
            output: a.output,
            plots: a.plots,
            predict: a.predict,
            save: a.save,
            dir: a.dir,
            list: a.list,
            peers: a.peers,
            histograms: a.histograms,
            time_limit: a.time_limit,
            ci_percent: a.ci,
            file_max: a.file_max,
            netem: a.netem,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CalibrateArgs,
    }

    fn request(args: &[&str]) -> Result<arum_calibrate::Request, String> {
        Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .map(|c| c.args.into())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn options_become_the_request() {
        let r = request(&[
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
            "--time-limit",
            "1.5s",
            "--ci",
            "5%",
            "--format",
            "json",
        ])
        .unwrap();
        assert_eq!(r.only, ["tasks.switch", "memory", "cpu,timing"]);
        assert_eq!(r.file_max, Some(2 << 30));
        assert_eq!(r.netem, Some(Duration::from_millis(1)));
        assert_eq!(r.time_limit, Some(Duration::from_millis(1500)));
        assert_eq!(r.ci_percent, 5.0);
        assert_eq!(r.format, arum_calibrate::Format::Json);
        assert!(r.quick && !r.save && !r.peers);
    }

    #[test]
    fn the_defaults_are_the_library_s() {
        assert_eq!(request(&[]).unwrap(), arum_calibrate::Request::default());
    }

    #[test]
    fn sizes_and_durations_need_their_unit() {
        let err = request(&["--file-max", "1048576"]).unwrap_err();
        assert!(err.contains("has no unit"), "{err}");
        assert!(request(&["--file-max", "12 parsecs"])
            .unwrap_err()
            .contains("unknown unit"));
        assert!(request(&["--time-limit", "2"])
            .unwrap_err()
            .contains("has no unit"));
        assert!(request(&["--netem", "1 fortnight"]).is_err());
    }
}
