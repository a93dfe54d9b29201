//! The study end to end on a tiny scale (2 trials, a small chase): every table is written, with
//! numbers in every cell the machine can fill. The real tables come from a release build with
//! the defaults (see docs/overhead.md for the command).

use std::path::PathBuf;
use std::process::Command;

fn arum() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let arum = exe.parent().unwrap().parent().unwrap().join("arum");
    assert!(
        arum.exists(),
        "{} is missing: `cargo build --workspace` builds it",
        arum.display()
    );
    arum
}

#[test]
fn the_study_writes_all_three_tables() {
    let perf = Command::new("perf").arg("--version").output();
    if !perf.is_ok_and(|o| o.status.success()) {
        let why = "overhead study not run: perf is missing (scripts/deps.sh installs linux-perf)";
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("{why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("overhead.md");
    let status = Command::new(env!("CARGO_BIN_EXE_overhead-study"))
        .arg("--arum")
        .arg(arum())
        .args(["--trials", "2", "--setup-trials", "2"])
        .args(["--mib", "1", "--steps", "20000", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let md = std::fs::read_to_string(&out).unwrap();
    for heading in ["## Table 1.", "## Table 2.", "## Table 3."] {
        assert!(md.contains(heading), "{heading} missing:\n{md}");
    }
    // Table 3 has the run without a tool and 5 configurations of each tool.
    let rows = md
        .lines()
        .filter(|l| {
            (l.starts_with("| arum, ") || l.starts_with("| perf stat, "))
                && l.contains(" events per CPU |")
        })
        .count();
    assert_eq!(rows, 10, "{md}");
    // arum's self-timed phases are numbers with an interval for every event count.
    let phase2 = md
        .lines()
        .find(|l| l.starts_with("| arum phase 2: event verification"))
        .unwrap();
    assert_eq!(phase2.matches('[').count(), 5, "{phase2}");
    assert!(
        md.contains("```sh\n"),
        "the command that made the tables is recorded"
    );
}
