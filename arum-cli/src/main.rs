//! `arum`: launch an unmodified program and report its resource usage.
//!
//! `no_main`: Rust's usual entry point prepares the process in ways a launched program would
//! inherit — it sets SIGPIPE to ignored (inherited across exec) and reopens closed descriptors
//! 0-2 on /dev/null — so arum starts from the C `main` and the program gets exactly the process
//! state arum was given. The standard library works as usual (arguments, threads, stdio).
#![no_main]

use std::time::Instant;

use arum_cli::{cli, info, list, run, stdio};

#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    let started = Instant::now();
    stdio::hold_closed_standard_descriptors();
    let cli = match cli::Cli::parse_args(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => {
            let args: Vec<String> = std::env::args().skip(1).collect();
            match cli::hint_for_stray_program(&args) {
                Some(hint) if e.kind() == clap::error::ErrorKind::UnknownArgument => {
                    eprintln!("arum: {hint}");
                    std::process::exit(2)
                }
                _ => e.exit(),
            }
        }
    };
    let result = match &cli.command {
        Some(cli::Command::Info(args)) => info::run(args),
        Some(cli::Command::List(args)) => list::run(args),
        Some(cli::Command::Compare(args)) => arum_cli::compare::run(args),
        Some(cli::Command::Merge(args)) => arum_cli::merge::run(args),
        Some(cli::Command::Completions(args)) => arum_cli::completions::completions(args),
        Some(cli::Command::Man) => arum_cli::completions::man(),
        Some(cli::Command::Html(args)) => arum_cli::report::html::saved::run(args),
        Some(cli::Command::Suite(args)) => arum_cli::suite::run(args, started),
        Some(cli::Command::Hourglass(args)) => Ok(arum_hourglass::exit_status(args)),
        Some(cli::Command::Calibrate(args)) => {
            Ok(arum_calibrate::exit_status(arum_calibrate::run(args)))
        }
        None => run::run(&cli.run, started),
    };
    match result {
        Ok(status) => std::process::exit(status),
        Err(e) => {
            eprintln!("arum: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
