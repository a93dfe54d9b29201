//! Things the user should know about how a run's values were obtained: printed on stderr when
//! they arise, and kept for the report's `warnings`.

#[derive(Debug, Default, Clone)]
pub struct Warnings(Vec<String>);

impl Warnings {
    /// Prints `line` now and keeps it for the report.
    pub fn add(&mut self, line: impl Into<String>) {
        let line = line.into();
        eprintln!("arum: warning: {line}");
        self.0.push(line);
    }

    /// Lines already printed elsewhere (set-up warnings repeated in every run's report).
    pub fn extend_quietly(&mut self, lines: &[String]) {
        self.0.extend_from_slice(lines);
    }

    pub fn lines(&self) -> &[String] {
        &self.0
    }

    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}
