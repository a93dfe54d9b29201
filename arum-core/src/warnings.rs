//! Things the user should know about how a run's values were obtained. Each is said once: kept
//! for the report's `warnings` (the text report prints them at its end), and also printed on
//! stderr as it arises when the report goes elsewhere (a file, or JSON/CSV for a script).

#[derive(Debug, Default, Clone)]
pub struct Warnings {
    lines: Vec<String>,
    /// Print each line as it arises (the report is not the text on stderr that shows them).
    echo: bool,
}

impl Warnings {
    pub fn new(echo: bool) -> Self {
        Warnings {
            lines: Vec::new(),
            echo,
        }
    }

    /// A warning for the report (and, with `echo`, for stderr now).
    pub fn add(&mut self, line: impl Into<String>) {
        let line = line.into();
        self.echo(&line);
        self.lines.push(line);
    }

    /// A line the report shows in its own place (an event's reason, the counters section): only
    /// printed now, with `echo`, so a script still sees it as it happens.
    pub fn echo(&self, line: &str) {
        if self.echo {
            eprintln!("arum: warning: {line}");
        }
    }

    /// Lines already printed elsewhere (set-up warnings repeated in every run's report).
    pub fn extend_quietly(&mut self, lines: &[String]) {
        self.lines.extend_from_slice(lines);
    }

    pub fn echoes(&self) -> bool {
        self.echo
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    pub fn into_vec(self) -> Vec<String> {
        self.lines
    }
}
