//! `arum`: launch an unmodified program and report its resource usage. The command line goes
//! to clap (`cli`), then to the engine's requests (`cli::convert`), then to `arum_core`.
//!
//! `no_main`: Rust's usual entry point prepares the process in ways a launched program would
//! inherit — it sets SIGPIPE to ignored (inherited across exec) and reopens closed descriptors
//! 0-2 on /dev/null — so arum starts from the C `main` and the program gets exactly the process
//! state arum was given. The standard library works as usual (arguments, threads, stdio).
//! The unit tests (`cargo test`) run under the test harness's own `main` instead.
#![cfg_attr(not(test), no_main)]

mod cli;
mod completions;
#[cfg(arum_entry)]
mod entry;
#[cfg(arum_static_glibc)]
mod origin;
mod values;

use std::time::Instant;

use arum_core::error::ArumError;
use arum_core::history::Saving;
use arum_core::series::{self, suite, SeriesSettings};
use cli::{Cli, Command};

#[cfg_attr(not(test), no_mangle)]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    let started = Instant::now();
    arum_core::facilities::functions::first_call_if_asked();
    arum_core::launch::stdio::hold_closed_standard_descriptors();
    if let Err(why) = arum_core::system::perms::refuse_set_id() {
        eprintln!("arum: {why}");
        std::process::exit(arum_core::error::EXIT_ARUM_FAILED);
    }
    let cli = match Cli::parse_args(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => {
            let args: Vec<String> = std::env::args().skip(1).collect();
            match cli::hint(&args) {
                Some(hint) if e.kind() == clap::error::ErrorKind::UnknownArgument => {
                    eprintln!("arum: {hint}");
                    std::process::exit(2)
                }
                _ => e.exit(),
            }
        }
    };
    match dispatch(cli, started) {
        Ok(status) => std::process::exit(status),
        Err(e) => {
            eprintln!("arum: {e}");
            std::process::exit(e.exit_code());
        }
    }
}

fn dispatch(cli: Cli, started: Instant) -> Result<i32, ArumError> {
    match cli.command {
        Some(Command::Info(args)) => arum_core::info::run(args.format.into()),
        Some(Command::List(args)) => arum_core::list::run(&args.into()),
        Some(Command::Compare(args)) => series::compare::run(&args.into()),
        Some(Command::Merge(args)) => series::merge::run(&args.into()),
        Some(Command::Completions(args)) => completions::completions(&args),
        Some(Command::Man(args)) => completions::man(&args),
        Some(Command::Html(args)) => series::saved::run(&args.into()),
        Some(Command::History(args)) => match args.action {
            Some(cli::HistoryAction::Changes(c)) => arum_core::history::changes::run(&c.request()),
            None => arum_core::history::list::run(&(*args).into()),
        },
        Some(Command::Suite(args)) => suite::run(
            &args.file,
            &suite::SuiteOutputs {
                html: args.html,
                output: args.output,
                export_json: args.export_json,
            },
            &cli::suite_options,
            started,
        ),
        Some(Command::Hourglass(args)) => Ok(arum_hourglass::exit_status(&args.request())),
        Some(Command::Calibrate(args)) => {
            let request = args.into();
            Ok(arum_calibrate::exit_status(arum_calibrate::run(&request)))
        }
        None => {
            let (run, series) = cli.run.requests();
            if series.asks_for_a_series(&run.program) {
                series::run(&run, &SeriesSettings::from_request(&series)?, started)
            } else {
                let save = Saving::from_request(&series.save)?;
                arum_core::run::run(&run, started, save.as_ref())
            }
        }
    }
}
