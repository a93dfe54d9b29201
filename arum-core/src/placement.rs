//! Where a run sits in a parallel job: its rank, the job's size and id, from the variables the
//! launchers set (ARUM runs under mpirun or srun, it does not launch ranks itself), and output
//! names that tell the ranks' reports apart (`-o run-%r.json`).

use std::path::{Path, PathBuf};

use crate::error::ArumError;
use crate::header::RankInfo;

/// Launchers' variables, in order of precedence: (launcher, rank, size, local rank).
const LAUNCHERS: &[(&str, &str, &str, &str)] = &[
    (
        "openmpi",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
    ),
    ("pmix", "PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK"),
    ("pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
];
/// Batch systems' job ids, in order of precedence.
const JOB_IDS: &[&str] = &["SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"];

/// The rank of this process from `var` (the environment), if a launcher started it.
pub fn rank_info(var: impl Fn(&str) -> Option<String>) -> Option<RankInfo> {
    let number = |name: &str| var(name).and_then(|v| v.trim().parse::<u32>().ok());
    let job_id = JOB_IDS.iter().find_map(|name| var(name));
    LAUNCHERS.iter().find_map(|(launcher, rank, size, local)| {
        Some(RankInfo {
            rank: number(rank)?,
            size: number(size).or_else(|| number("SLURM_NPROCS")),
            local_rank: number(local).or_else(|| number("SLURM_LOCALID")),
            job_id: job_id.clone(),
            launcher: (*launcher).to_string(),
        })
    })
}

/// The rank of this process, from arum's own environment.
pub fn from_env() -> Option<RankInfo> {
    rank_info(|name| std::env::var(name).ok())
}

/// `-o` with its `%` patterns replaced: `%h` host name, `%p` arum's process id, `%r` rank (0
/// outside a parallel launcher), `%j` job id (`none` outside a batch job), `%%` a `%`.
pub fn expand_output(pattern: &Path) -> Result<PathBuf, ArumError> {
    let Some(text) = pattern.to_str() else {
        return Ok(pattern.to_path_buf());
    };
    if !text.contains('%') {
        return Ok(pattern.to_path_buf());
    }
    let rank = from_env();
    // The report's metadata.host names the machine the same way (uname's nodename).
    let host = nix::sys::utsname::uname()
        .ok()
        .and_then(|u| u.nodename().to_str().map(str::to_string))
        .unwrap_or_else(|| "unknown-host".into());
    expand(text, &host, std::process::id(), rank.as_ref()).map(PathBuf::from)
}

fn expand(text: &str, host: &str, pid: u32, rank: Option<&RankInfo>) -> Result<String, ArumError> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(host),
            Some('p') => out.push_str(&pid.to_string()),
            Some('r') => out.push_str(&rank.map_or(0, |r| r.rank).to_string()),
            Some('j') => out.push_str(rank.and_then(|r| r.job_id.as_deref()).unwrap_or("none")),
            Some('%') => out.push('%'),
            other => {
                return Err(ArumError::Usage(format!(
                    "-o {text:?}: unknown pattern %{}; use %h (host), %p (pid), %r (rank), %j (job id) or %% (a %)",
                    other.map(String::from).unwrap_or_default()
                )))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn open_mpi_comes_before_slurm() {
        let r = rank_info(env(&[
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("SLURM_PROCID", "0"),
            ("SLURM_JOB_ID", "77"),
        ]))
        .unwrap();
        assert_eq!(
            (r.rank, r.size, r.launcher.as_str(), r.job_id.as_deref()),
            (3, Some(4), "openmpi", Some("77"))
        );
    }

    #[test]
    fn slurm_alone_and_no_launcher() {
        let r = rank_info(env(&[("SLURM_PROCID", "1"), ("SLURM_NPROCS", "2")])).unwrap();
        assert_eq!((r.rank, r.size, r.launcher.as_str()), (1, Some(2), "slurm"));
        assert_eq!(rank_info(env(&[("SLURM_JOB_ID", "5")])), None);
        assert_eq!(rank_info(env(&[("PMI_RANK", "x")])), None);
    }

    #[test]
    fn output_patterns() {
        let r = rank_info(env(&[("PMI_RANK", "2"), ("SLURM_JOB_ID", "9")])).unwrap();
        assert_eq!(
            expand("run-%j-%r-%h-%p-%%.json", "node1", 42, Some(&r)).unwrap(),
            "run-9-2-node1-42-%.json"
        );
        assert_eq!(expand("r%r-%j", "h", 1, None).unwrap(), "r0-none");
        assert!(expand("run-%x", "h", 1, None).is_err());
        assert!(expand("run-%", "h", 1, None).is_err());
    }
}
