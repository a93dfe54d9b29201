//! `arum`: launch an unmodified program and report its resource usage.

use std::time::Instant;

use arum_cli::{cli, info, list, run};
use clap::Parser;

fn main() {
    let started = Instant::now();
    let cli = cli::Cli::parse();
    let result = match &cli.command {
        Some(cli::Command::Info(args)) => info::run(args),
        Some(cli::Command::List(args)) => list::run(args),
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
