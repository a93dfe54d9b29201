//! `arum suite FILE.toml`: a test suite as data. A server and a client command with parameters
//! (sizes, number of clients, duration, network conditions), run in a network namespace of the
//! suite's own with `tc netem` on its loopback, every combination measured by the repeated-runs
//! machinery (`bench`), one HTML page for the whole sweep.
//!
//! ```text
//!  parse FILE → enter a new network namespace (loopback only) → check netem
//!  → setup (once, {dir} a private directory) → start the server, wait for its port
//!  → bench: -L for every parameter, --prepare "tc qdisc replace dev lo root netem ...",
//!    the client command (N copies at once, each repeated for DURATION) as the measured program
//!  → stop the server → the series' text, exports and --html page
//! ```

pub mod netns;
pub mod server;
pub mod spec;

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, Parser};

use crate::cli::Cli;
use crate::error::ArumError;
use spec::Suite;

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// The suite: server, client, parameters, network (see README, "arum suite").
    #[arg(value_name = "FILE.toml")]
    pub file: PathBuf,

    /// The page of the whole sweep: every combination's statistics, distributions, the sweep.
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,

    /// The series' text summary goes here instead of stderr.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Every run's report and the statistics, as arum.runs/1 JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
}

pub fn run(args: &SuiteArgs, started: Instant) -> Result<i32, ArumError> {
    let name = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| ArumError::Usage(format!("{name}: {e}")))?;
    let suite = Suite::parse(&text, &name)?;
    netns::enter()?;
    if suite.network.netem.is_some() {
        netns::check_netem()?;
    }
    let dir = tempfile::Builder::new()
        .prefix("arum-suite-")
        .tempdir()
        .map_err(|e| ArumError::Suite(format!("a private directory: {e}")))?;
    let dir_path = dir.path().display().to_string();
    let with_dir = |s: &str| s.replace("{dir}", &dir_path);
    if let Some(setup) = &suite.setup {
        let status = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(with_dir(setup))
            .status()
            .map_err(|e| ArumError::Suite(format!("setup: {e}")))?;
        if !status.success() {
            return Err(ArumError::Suite(format!(
                "setup {setup:?} failed ({status}); fix it, or leave out setup"
            )));
        }
    }
    let _server = match &suite.server {
        Some(s) => Some(server::Running::start(
            &with_dir(&s.command),
            s.port,
            s.ready_timeout,
        )?),
        None => None,
    };
    let argv = bench_argv(&suite, &with_dir(&suite.client.command), args)?;
    let cli = Cli::try_parse_from(&argv).map_err(|e| {
        ArumError::Usage(format!(
            "{name}: {}",
            e.to_string().lines().next().unwrap_or("")
        ))
    })?;
    crate::bench::run(&cli.run, started)
}

/// The command line of the series the suite describes.
fn bench_argv(suite: &Suite, client: &str, args: &SuiteArgs) -> Result<Vec<String>, ArumError> {
    let mut argv: Vec<String> = vec![
        "arum".into(),
        "-r".into(),
        suite.runs.to_string(),
        "-w".into(),
        suite.warmup.to_string(),
        "--html".into(),
        args.html.display().to_string(),
    ];
    if let Some(o) = &args.output {
        argv.extend(["-o".into(), o.display().to_string()]);
    }
    if let Some(j) = &args.export_json {
        argv.extend(["--export-json".into(), j.display().to_string()]);
    }
    for (p, values) in &suite.parameters {
        argv.extend(["-L".into(), p.clone(), values.words().join(",")]);
    }
    if let Some(netem) = &suite.network.netem {
        argv.extend(["--prepare".into(), netns::netem_command(netem)]);
    }
    argv.extend(suite.arum.iter().cloned());
    let line = match clients_line(suite, client)? {
        Some(line) => {
            argv.extend(["--env".into(), format!("{SCRIPT_VAR}={CLIENTS_SCRIPT}")]);
            line
        }
        None => client.to_string(),
    };
    argv.extend(["--shell".into(), "-l".into(), line]);
    Ok(argv)
}

/// The variable that carries the clients script into the measured program's environment.
const SCRIPT_VAR: &str = "ARUM_SUITE_CLIENTS";

/// The measured program: the client command itself, or the suite's clients script (in the
/// program's environment as `SCRIPT_VAR`, so the line stays short and the same from one suite
/// run to the next) running N copies of it at once, each repeated for the duration, failing
/// when any copy fails. Its line names N, the duration and the client command, so each
/// combination's label says what it ran.
fn clients_line(suite: &Suite, client: &str) -> Result<Option<String>, ArumError> {
    let c = &suite.client;
    if c.clients.is_none() && c.duration.is_none() {
        return Ok(None);
    }
    let ns = match &c.duration {
        Some(d) => humantime::parse_duration(d)
            .map_err(|e| ArumError::Usage(format!("client duration {d:?}: {e}")))?
            .as_nanos(),
        None => 0,
    };
    let n = c.clients.as_deref().unwrap_or("1");
    Ok(Some(format!(
        "sh -c \"${SCRIPT_VAR}\" clients {n} {ns} {}",
        shell_words::quote(client)
    )))
}

/// `clients N DURATION_NS COMMAND`: N copies of COMMAND at once (each repeated until
/// DURATION_NS have passed when it is not 0); fails when any copy fails.
const CLIENTS_SCRIPT: &str = r#"n=$1 ns=$2 cmd=$3
copy() {
  if [ "$ns" -eq 0 ]; then eval "$cmd"; return; fi
  end=$(( $(date +%s%N) + ns ))
  while [ "$(date +%s%N)" -lt "$end" ]; do eval "$cmd" || return 1; done
}
i=0 pids=
while [ "$i" -lt "$n" ]; do copy & pids="$pids $!"; i=$((i + 1)); done
s=0
for p in $pids; do wait "$p" || s=1; done
exit $s
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(toml: &str) -> Suite {
        Suite::parse(toml, "t").unwrap()
    }

    #[test]
    fn one_client_once_is_the_command_itself() {
        let s = suite("[client]\ncommand = \"get 1\"\n");
        assert_eq!(clients_line(&s, "get 1").unwrap(), None);
    }

    /// Runs `line` as a series runs it (--shell, the script in the environment).
    fn status(line: &str) -> Option<i32> {
        std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(line)
            .env(SCRIPT_VAR, CLIENTS_SCRIPT)
            .status()
            .unwrap()
            .code()
    }

    #[test]
    fn copies_run_at_once_and_any_failure_fails_the_run() {
        let s = suite("[client]\ncommand = \"x\"\nclients = \"3\"\n");
        let dir = tempfile::tempdir().unwrap();
        let marks = dir.path().join("marks");
        let line = clients_line(&s, &format!("echo $i >> {}", marks.display())).unwrap();
        assert_eq!(status(&line.unwrap()), Some(0));
        let mut seen: Vec<String> = std::fs::read_to_string(&marks)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        seen.sort();
        assert_eq!(seen, ["0", "1", "2"], "each copy ran once");
        // Copy 1 of 3 fails: the run fails.
        let line = clients_line(&s, "exit $((i == 1))").unwrap().unwrap();
        assert_eq!(status(&line), Some(1), "{line}");
    }

    #[test]
    fn a_duration_repeats_each_copy_until_it_has_passed() {
        let s = suite("[client]\ncommand = \"x\"\nduration = \"300ms\"\n");
        let dir = tempfile::tempdir().unwrap();
        let marks = dir.path().join("marks");
        let line = clients_line(&s, &format!("echo . >> {}; sleep 0.05", marks.display()))
            .unwrap()
            .unwrap();
        assert!(line.contains(" clients 1 300000000 "), "{line}");
        let t = Instant::now();
        assert_eq!(status(&line), Some(0));
        assert!(t.elapsed().as_millis() >= 300, "ended before the duration");
        let n = std::fs::read_to_string(&marks).unwrap().lines().count();
        assert!(
            n >= 2,
            "the command ran {n} time(s) in 300 ms of 50 ms calls"
        );
    }

    #[test]
    fn the_series_gets_every_parameter_and_the_netem_prepare() {
        let s = suite(
            "runs = 3\n[client]\ncommand = \"get {size}\"\n[network]\nnetem = \"delay {delay}\"\n\
             [parameters]\nsize = [\"1K\", \"1M\"]\ndelay = [\"0ms\", \"20ms\"]\n",
        );
        let args = SuiteArgs {
            file: "s.toml".into(),
            html: "s.html".into(),
            output: None,
            export_json: None,
        };
        let argv = bench_argv(&s, "get {size}", &args).unwrap();
        let line = argv.join(" ");
        assert!(line.contains("-L delay 0ms,20ms"), "{line}");
        assert!(line.contains("-L size 1K,1M"), "{line}");
        assert!(
            line.contains("--prepare tc qdisc replace dev lo root netem delay {delay}"),
            "{line}"
        );
        let cli = Cli::try_parse_from(&argv).expect("a valid series");
        assert_eq!(cli.run.launch, ["get {size}"]);
        assert_eq!(cli.run.series.runs, Some(3));
    }
}
