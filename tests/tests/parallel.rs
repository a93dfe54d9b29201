//! ARUM under the launchers analysts use: Debian's OpenMPI (`mpirun -n 2 arum -o run-%r.json --
//! ./mpi_helper`) and Slurm (`srun -n 2 arum ...` on a cluster of this one machine that the test
//! starts and always stops). Each rank's report records its rank, the job's size and id, and
//! `arum merge` combines them. A launcher that is not installed is said, and the test checks
//! what it can; under CI (CI set) a missing launcher is a failure, since scripts/deps.sh installs
//! them.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{arum_path, temp_dir};
use serde_json::Value;

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether the tools are there; if not, says why (and fails under CI).
fn available(what: &str, tools: &[&str]) -> bool {
    let missing: Vec<&&str> = tools.iter().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "{what} test not run: {missing:?} not installed (scripts/deps.sh installs them); \
         tests/tests/bench.rs checks rank variables and merging without a launcher"
    );
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("{why}");
    false
}

/// Builds the MPI helper into `dir` with mpicc.
fn build_helper(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("mpi/mpi_helper.c");
    let exe = dir.join("mpi_helper");
    let out = Command::new("mpicc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("mpicc runs");
    assert!(
        out.status.success(),
        "mpicc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no report {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Checks the two ranks' reports and the helper's own account of its job, then merges them.
fn check_ranks(dir: &Path, files: &[PathBuf], launcher_ranks: bool, job_id: Option<&str>) {
    for (rank, file) in files.iter().enumerate() {
        let r = read(file);
        assert_eq!(r["rank"]["rank"], rank as u64, "{}", file.display());
        assert_eq!(r["rank"]["size"], 2);
        assert_eq!(r["exit"]["status"], 0);
        if let Some(job) = job_id {
            assert_eq!(r["rank"]["job_id"], job);
        }
        // The helper ran as that rank of a 2-rank MPI job: MPI itself agrees with arum.
        let own = std::fs::read_to_string(dir.join(format!("mpi-rank-{rank}.txt"))).unwrap();
        if launcher_ranks {
            assert_eq!(own.trim(), format!("{rank} 2 1"), "rank size sum");
        }
    }
    let out = Command::new(arum_path())
        .args(["merge", "--format", "json"])
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(m["ranks"].as_array().unwrap().len(), 2);
    let user = m["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["metric"] == "usage.user_ns")
        .unwrap();
    let sum: u64 = files
        .iter()
        .map(|f| read(f)["usage"]["user_ns"].as_u64().unwrap())
        .sum();
    assert_eq!(user["total"].as_f64().unwrap(), sum as f64);
    assert!(m["notes"].as_array().unwrap().is_empty(), "{}", m["notes"]);
}

#[test]
fn openmpi_ranks_write_their_own_reports() {
    if !available("OpenMPI", &["mpicc", "mpirun"]) {
        return;
    }
    let dir = temp_dir();
    let helper = build_helper(dir.path());
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-n", "2"])
        .arg(arum_path())
        .args(["--format", "json", "-o"])
        .arg(dir.path().join("run-%r.json"))
        .arg("--")
        .arg(&helper)
        .arg(dir.path())
        .current_dir(dir.path())
        .output()
        .expect("mpirun runs");
    assert!(
        out.status.success(),
        "mpirun failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<PathBuf> = (0..2)
        .map(|r| dir.path().join(format!("run-{r}.json")))
        .collect();
    check_ranks(dir.path(), &files, true, None);
    assert_eq!(read(&files[0])["rank"]["launcher"], "openmpi");
}

/// A Slurm cluster of this machine, stopped when dropped (also when the test fails).
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("slurm/cluster.sh")
}

impl Cluster {
    fn start() -> Cluster {
        let dir = temp_dir();
        // Two free ports on the loopback address; the daemons take them a moment later.
        let ports: Vec<u16> = (0..2)
            .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
            .collect::<Vec<_>>()
            .iter()
            .map(|l| l.local_addr().unwrap().port())
            .collect();
        let out = Command::new(script())
            .arg("start")
            .arg(dir.path())
            .args(ports.iter().map(u16::to_string))
            .output()
            .expect("the cluster script runs");
        let cluster = Cluster {
            conf: PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()),
            dir,
        };
        assert!(
            out.status.success(),
            "the Slurm cluster did not start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        cluster
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn slurm_ranks_write_their_own_reports() {
    if !available("Slurm", &["slurmctld", "slurmd", "srun", "munged", "mpicc"]) {
        return;
    }
    if !nix_is_root() {
        eprintln!("Slurm test not run: the one-machine cluster runs its daemons as root");
        assert!(std::env::var_os("CI").is_none());
        return;
    }
    let cluster = Cluster::start();
    let work = temp_dir();
    let helper = build_helper(work.path());
    let srun = |args: &[&str]| {
        Command::new("srun")
            .env("SLURM_CONF", &cluster.conf)
            .args(args)
            .current_dir(work.path())
            .output()
            .expect("srun runs")
    };
    // OpenMPI ranks find each other through Slurm's PMIx plugin where it is installed;
    // without it each rank is an MPI singleton, but arum's ranks still come from SLURM_PROCID.
    let mpi_list = srun(&["--mpi=list"]);
    let pmix = String::from_utf8_lossy(&mpi_list.stdout).contains("pmix")
        || String::from_utf8_lossy(&mpi_list.stderr).contains("pmix");
    if !pmix {
        eprintln!("Slurm's PMIx plugin is missing: the MPI helper runs as singletons");
    }
    let pattern = work.path().join("run-%r-%j.json");
    let mut args = vec!["-n", "2", "--time=2"];
    if pmix {
        args.push("--mpi=pmix");
    }
    let arum = arum_path();
    let arum_s = arum.to_string_lossy();
    let pattern_s = pattern.to_string_lossy();
    let helper_s = helper.to_string_lossy();
    let work_s = work.path().to_string_lossy();
    args.extend([
        arum_s.as_ref(),
        "--format",
        "json",
        "-o",
        pattern_s.as_ref(),
        "--",
        helper_s.as_ref(),
        work_s.as_ref(),
    ]);
    let out = srun(&args);
    assert!(
        out.status.success(),
        "srun failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<PathBuf> = std::fs::read_dir(work.path())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    let mut files = files;
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    // run-R-JOB.json: the job id in the name is the one in the report.
    let job = read(&files[0])["rank"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(files[0].ends_with(format!("run-0-{job}.json")), "{files:?}");
    check_ranks(work.path(), &files, pmix, Some(&job));
    drop(cluster);
}

fn nix_is_root() -> bool {
    nix::unistd::geteuid().is_root()
}
