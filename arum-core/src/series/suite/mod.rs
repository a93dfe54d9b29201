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

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::ArumError;
use crate::request::{ProgramRequest, RunRequest};
use crate::series::{SeriesRequest, SeriesSettings};
use spec::Suite;

/// Where the suite's results go.
#[derive(Debug, Clone)]
pub struct SuiteOutputs {
    /// The page of the whole sweep.
    pub html: PathBuf,
    /// The series' text summary (stderr when not given).
    pub output: Option<PathBuf>,
    /// Every run's report and the statistics, as arum.runs/1 JSON.
    pub export_json: Option<PathBuf>,
}

/// Reads the `arum = [...]` options of a suite file as a measured run's command line would
/// (the binary's parser): the run's options, and the series options they give.
pub type OptionsParser<'a> = &'a dyn Fn(&[String]) -> Result<(RunRequest, SeriesRequest), String>;

pub fn run(
    file: &Path,
    outputs: &SuiteOutputs,
    parse_options: OptionsParser<'_>,
    started: Instant,
) -> Result<i32, ArumError> {
    let name = file.display().to_string();
    let text =
        std::fs::read_to_string(file).map_err(|e| ArumError::Usage(format!("{name}: {e}")))?;
    let suite = Suite::parse(&text, &name)?;
    let (mut request, extra) = parse_options(&suite.arum)
        .map_err(|e| ArumError::Usage(format!("{name}: arum = {:?}: {e}", suite.arum)))?;
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
    let series = series_request(&suite, outputs, extra)
        .map_err(|e| ArumError::Usage(format!("{name}: {e}")))?;
    let client = with_dir(&suite.client.command);
    request.program = client_program(&suite, &client, request.program.env);
    if clients_line(&suite, &client).is_some() {
        // The copies append their counts here; the clients facility reads them after each run.
        let counts = dir.path().join("counts");
        request.program.env.push(format!(
            "{}={}",
            crate::facilities::clients::COUNTS_VAR,
            counts.display()
        ));
        request.client_counts = Some(counts);
    }
    request.html = Some(outputs.html.clone());
    request.output = outputs.output.clone();
    crate::series::run(&request, &SeriesSettings::from_request(&series)?, started)
}

/// The series the suite describes: its runs, parameters and network conditions, with the
/// series options of its `arum = [...]` words (`--confidence`, `-i`, exports) where the suite
/// file does not set them itself.
fn series_request(
    suite: &Suite,
    outputs: &SuiteOutputs,
    extra: SeriesRequest,
) -> Result<SeriesRequest, String> {
    let own = [
        (extra.runs.is_some(), "-r/--runs"),
        (extra.warmup > 0, "-w/--warmup"),
        (!extra.parameter_list.is_empty(), "-L/--parameter-list"),
        (extra.prepare.is_some(), "--prepare"),
        (extra.export_json.is_some(), "--export-json"),
    ];
    if let Some((_, option)) = own.iter().find(|(given, _)| *given) {
        return Err(format!(
            "{option} in `arum = [...]`: the suite file sets it (runs, warmup, [parameters], [network], --export-json); leave it out"
        ));
    }
    let mut parameter_list = Vec::new();
    for (p, values) in &suite.parameters {
        parameter_list.extend([p.clone(), values.words().join(",")]);
    }
    Ok(SeriesRequest {
        runs: Some(suite.runs),
        warmup: suite.warmup,
        parameter_list,
        prepare: suite.network.netem.as_deref().map(netns::netem_command),
        export_json: outputs.export_json.clone(),
        ..extra
    })
}

/// The measured program: the client command, or the clients script around it.
fn client_program(suite: &Suite, client: &str, mut env: Vec<String>) -> ProgramRequest {
    let line = match clients_line(suite, client) {
        Some(line) => {
            env.push(format!("{SCRIPT_VAR}={CLIENTS_SCRIPT}"));
            line
        }
        None => client.to_string(),
    };
    ProgramRequest {
        launch: vec![line],
        shell: true,
        argv: Vec::new(),
        compare: false,
        env,
    }
}

/// The variable that carries the clients script into the measured program's environment.
const SCRIPT_VAR: &str = "ARUM_SUITE_CLIENTS";

/// The measured program: the client command itself, or the suite's clients script (in the
/// program's environment as `SCRIPT_VAR`, so the line stays short and the same from one suite
/// run to the next) running N copies of it at once, each repeated for the duration, failing
/// when any copy fails. Its line names N, the duration and the client command, so each
/// combination's label says what it ran. The script runs in bash, whose clock
/// (`EPOCHREALTIME`) and arithmetic keep the loop free of processes: the run's processes are
/// the requests'.
fn clients_line(suite: &Suite, client: &str) -> Option<String> {
    let c = &suite.client;
    if c.clients.is_none() && c.duration.is_none() {
        return None;
    }
    let ns = c.duration.map_or(0, |d| d.as_nanos());
    let n = c.clients.as_deref().unwrap_or("1");
    Some(format!(
        "bash -c \"${SCRIPT_VAR}\" clients {n} {ns} {}",
        shell_words::quote(client)
    ))
}

/// `clients N DURATION_NS COMMAND`: N copies of COMMAND at once (each repeated until
/// DURATION_NS have passed when it is not 0, stopping at its first failure); fails when any copy
/// fails. Each copy appends `REQUESTS FAILED` to `$ARUM_SUITE_COUNTS` when it ends (an
/// append of one short line is one write, whole however the copies interleave).
const CLIENTS_SCRIPT: &str = r#"n=$1 ns=$2 cmd=$3
now() { t=${EPOCHREALTIME/[.,]/}; }
copy() {
  local done=0 failed=0 status=0 t end
  if [ "$ns" -eq 0 ]; then
    if eval "$cmd"; then done=1; else failed=1; status=1; fi
  else
    now; end=$((t + ns / 1000))
    while now; [ "$t" -lt "$end" ]; do
      if eval "$cmd"; then done=$((done + 1)); else failed=1; status=1; break; fi
    done
  fi
  if [ -n "$ARUM_SUITE_COUNTS" ]; then echo "$done $failed" >> "$ARUM_SUITE_COUNTS"; fi
  return $status
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
        assert_eq!(clients_line(&s, "get 1"), None);
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
        let line = clients_line(&s, &format!("echo $i >> {}", marks.display()));
        assert_eq!(status(&line.unwrap()), Some(0));
        let mut seen: Vec<String> = std::fs::read_to_string(&marks)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        seen.sort();
        assert_eq!(seen, ["0", "1", "2"], "each copy ran once");
        // Copy 1 of 3 fails: the run fails.
        let line = clients_line(&s, "exit $((i == 1))").unwrap();
        assert_eq!(status(&line), Some(1), "{line}");
    }

    #[test]
    fn a_duration_repeats_each_copy_until_it_has_passed() {
        let s = suite("[client]\ncommand = \"x\"\nduration = \"300ms\"\n");
        let dir = tempfile::tempdir().unwrap();
        let marks = dir.path().join("marks");
        let line = clients_line(&s, &format!("echo . >> {}; sleep 0.05", marks.display())).unwrap();
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

    // Two copies for 200 ms: each appends what it completed, and the counts are the runs of
    // the command (each leaves a mark); a failing command is counted as failed and fails the run.
    #[test]
    fn copies_report_the_requests_they_completed() {
        let s = suite("[client]\ncommand = \"x\"\nclients = \"2\"\nduration = \"200ms\"\n");
        let dir = tempfile::tempdir().unwrap();
        let (marks, counts) = (dir.path().join("marks"), dir.path().join("counts"));
        let run = |cmd: &str| {
            std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(clients_line(&s, cmd).unwrap())
                .env(SCRIPT_VAR, CLIENTS_SCRIPT)
                .env(crate::facilities::clients::COUNTS_VAR, &counts)
                .status()
                .unwrap()
                .code()
        };
        assert_eq!(run(&format!("echo . >> {}", marks.display())), Some(0));
        let text = std::fs::read_to_string(&counts).unwrap();
        let r = crate::facilities::clients::model::ClientsReport::from_counts(&text, 1);
        let made = std::fs::read_to_string(&marks).unwrap().lines().count() as u64;
        assert_eq!((r.copies_reporting, r.failed), (2, 0), "{text}");
        assert!(made > 2 && r.requests == made, "{text}: {made} marks");
        std::fs::write(&counts, "").unwrap();
        assert_eq!(run("false"), Some(1));
        let text = std::fs::read_to_string(&counts).unwrap();
        assert_eq!(text.lines().collect::<Vec<_>>(), ["0 1", "0 1"]);
    }

    #[test]
    fn the_series_gets_every_parameter_and_the_netem_prepare() {
        let s = suite(
            "runs = 3\n[client]\ncommand = \"get {size}\"\n[network]\nnetem = \"delay {delay}\"\n\
             [parameters]\nsize = [\"1K\", \"1M\"]\ndelay = [\"0ms\", \"20ms\"]\n",
        );
        let outputs = SuiteOutputs {
            html: "s.html".into(),
            output: None,
            export_json: Some("s.json".into()),
        };
        let extra = SeriesRequest {
            confidence: 0.95,
            ..SeriesRequest::default()
        };
        let series = series_request(&s, &outputs, extra).unwrap();
        assert_eq!(
            series.parameter_list,
            ["delay", "0ms,20ms", "size", "1K,1M"]
        );
        assert_eq!(
            series.prepare.as_deref(),
            Some("tc qdisc replace dev lo root netem delay {delay}")
        );
        assert_eq!((series.runs, series.warmup), (Some(3), 0));
        assert_eq!(series.export_json, outputs.export_json);
        assert_eq!(series.confidence, 0.95, "the arum = [...] options' own");
        let program = client_program(&s, "get {size}", vec!["A=1".into()]);
        assert_eq!(program.launch, ["get {size}"]);
        assert!(program.shell);
        assert_eq!(program.env, ["A=1"]);
    }

    #[test]
    fn series_options_the_suite_file_sets_are_refused_in_its_arum_options() {
        let s = suite("[client]\ncommand = \"x\"\n");
        let outputs = SuiteOutputs {
            html: "s.html".into(),
            output: None,
            export_json: None,
        };
        let extra = SeriesRequest {
            runs: Some(2),
            ..SeriesRequest::default()
        };
        let e = series_request(&s, &outputs, extra).unwrap_err();
        assert!(e.contains("-r/--runs") && e.contains("leave it out"), "{e}");
    }
}
