//! What a saved run holds: what identifies it and its values. The engine fills it from a
//! report; the store neither reads nor writes the report's layout.

/// The machine a run was measured on: runs are compared only with runs of the same machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Machine {
    pub host: String,
    /// The processor's table key (`GenuineIntel-6-55`).
    pub cpu_key: String,
    /// Its brand string.
    pub cpu_name: String,
    /// The kernel release.
    pub kernel: String,
    /// Online CPUs.
    pub cpus: u32,
}

/// The source the measured program was built from: a commit, and whether the work tree had
/// changes beside it (unknown when the commit was given by hand).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub id: String,
    pub dirty: Option<bool>,
}

/// One measured run as it is saved.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// When the program was started (Unix time, ns).
    pub started_unix_ns: u64,
    pub machine: Machine,
    pub arum_version: String,
    /// The command as run (a series' benchmark label, parameters substituted).
    pub command: String,
    /// The user's labels and a series' parameters, each key once, sorted by key.
    pub labels: Vec<(String, String)>,
    pub commit: Option<Commit>,
    /// The run's index in its series (0 for a single run).
    pub run_index: u64,
    /// arum's exit status for the run: the program's, or 128+N for signal N.
    pub exit_status: i32,
    /// Every metric of the run by name.
    pub metrics: Vec<(String, f64)>,
    /// The whole report (`arum.report/1` JSON).
    pub report: String,
}

/// A run read back: its place in the store and what was saved, with the metrics a query asked
/// for (and the report left in the store until asked for by id).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    /// Increasing in the order runs were saved.
    pub id: i64,
    /// The arum invocation (a run or a series) that saved it.
    pub batch: String,
    pub saved_unix_ns: i64,
    pub started_unix_ns: i64,
    pub machine: Machine,
    pub arum_version: String,
    pub command: String,
    pub labels: Vec<(String, String)>,
    pub commit: Option<Commit>,
    pub run_index: u64,
    pub exit_status: i32,
    pub metrics: Vec<(String, f64)>,
}

impl StoredRun {
    /// The value of `metric` in this run, if it was read and the run has it.
    pub fn metric(&self, metric: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|(name, _)| name == metric)
            .map(|(_, v)| *v)
    }

    /// The value of label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}
