//! The progress bar of a series: the current run, the command and an ETA, on a terminal only.
//! No ticker thread: the launcher forks a single-threaded arum, so the bar is redrawn from the
//! series' own thread between runs.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar on stderr when stderr is a terminal; nothing otherwise.
    pub fn new() -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs, ETA {eta}: {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Progress { bar: Some(bar) }
    }

    pub fn set_total(&self, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
    }

    /// A run of `label` starts.
    pub fn starting(&self, label: &str, index: i64) {
        if let Some(b) = &self.bar {
            let what = if index < 0 { "warm-up" } else { "run" };
            b.set_message(format!("{what} {index}: {label}"));
        }
    }

    /// A run ended.
    pub fn finished(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// Removes the bar before the summary is printed.
    pub fn clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}
