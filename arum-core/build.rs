//! Records the git commit arum is built from, for `arum --version` and the report's
//! `metadata.arum_version`. Without git (a source tarball, a machine without git) the build still
//! works: ARUM_BUILD_COMMIT names the commit if the packager knows it, else it says "unknown".

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=ARUM_BUILD_COMMIT");
    let commit = match std::env::var("ARUM_BUILD_COMMIT") {
        Ok(c) if !c.is_empty() => c,
        _ => match git(&["rev-parse", "--short=12", "HEAD"]) {
            Some(hash) => {
                // Rebuild when HEAD moves: HEAD itself (a branch switch) and the ref it names.
                if let Some(head) = git(&["rev-parse", "--git-path", "HEAD"]) {
                    println!("cargo:rerun-if-changed={head}");
                }
                if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
                    if let Some(path) = git(&["rev-parse", "--git-path", &r]) {
                        println!("cargo:rerun-if-changed={path}");
                    }
                }
                if let Some(packed) = git(&["rev-parse", "--git-path", "packed-refs"]) {
                    println!("cargo:rerun-if-changed={packed}");
                }
                let date = git(&["log", "-1", "--format=%cs", "HEAD"]);
                match date {
                    Some(d) => format!("{hash} {d}"),
                    None => hash,
                }
            }
            None => "commit unknown".to_string(),
        },
    };
    println!("cargo:rustc-env=ARUM_GIT_COMMIT={commit}");
}
