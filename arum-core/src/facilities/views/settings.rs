//! What the views need beyond the records: the probes that delimit a task.

/// `--task-begin` / `--task-end`: the probes (by name) that delimit a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskProbes {
    pub begin: String,
    pub end: String,
}
