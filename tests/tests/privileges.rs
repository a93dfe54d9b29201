//! arum installed as README's "Privileges" recommends: a copy only a group may run, with
//! `cap_perfmon,cap_bpf` in its file. The test (as root) makes a user and a group of its own,
//! installs such a copy, and as that user: counts software events, times a function and its
//! system calls in the kernel, cannot write where only root may, changes nothing of the system,
//! and launches a program that holds no capability, even one the user could have passed on.
//! Not as root, or where the filesystem keeps no file capabilities, it says why and stops.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{arum_path, helper, temp_dir};
use object::read::elf::{Dyn, FileHeader, ProgramHeader};
use serde_json::Value;

/// A user and a group made for the test, removed when dropped.
struct TestUser {
    name: String,
}

impl TestUser {
    fn create() -> Result<TestUser, String> {
        let name = format!("arumt{}", std::process::id());
        run("groupadd", &[&name])?;
        if let Err(e) = run(
            "useradd",
            &["-M", "-N", "-g", &name, "-s", "/bin/sh", &name],
        ) {
            let _ = run("groupdel", &[&name]);
            return Err(e);
        }
        Ok(TestUser { name })
    }

    /// `program` run as the user with the user's group (and no other), from `dir`.
    fn command(&self, program: &Path, dir: &Path) -> Command {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={}", self.name),
            &format!("--regid={}", self.name),
            "--init-groups",
            // An inheritable capability the user's shell could have: arum must not hand it on.
            "--inh-caps=+perfmon",
            // setpriv execs while it still holds root's capabilities (it drops them at that
            // exec), which would pass the check of the file's mode: a shell without them runs
            // the program, as the user's own shell would.
            "--",
            "sh",
            "-c",
            "exec \"$@\"",
            "sh",
        ])
        .arg(program)
        .current_dir(dir)
        .env("HOME", dir);
        c
    }
}

impl TestUser {
    /// arum at `arum` run as the user from `home` with `args`, its JSON report written to
    /// `home/NAME.json`: the program's output and the report. The run must succeed.
    fn measure(&self, arum: &Path, home: &Path, name: &str, args: &[&str]) -> (Output, Value) {
        let report = home.join(format!("{name}.json"));
        let out = self
            .command(arum, home)
            .args(["--format", "json", "-o"])
            .arg(&report)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        (out, json)
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        let _ = run("userdel", &[&self.name]);
        let _ = run("groupdel", &[&self.name]);
    }
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The installed copy: `dir/bin/arum`, group `group`, mode 0750, the recommended capabilities.
fn install(dir: &Path, group: &str) -> Result<PathBuf, String> {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).map_err(|e| e.to_string())?;
    let arum = bin.join("arum");
    std::fs::copy(arum_path(), &arum).map_err(|e| e.to_string())?;
    run("chgrp", &[group, &arum.display().to_string()])?;
    std::fs::set_permissions(&arum, std::fs::Permissions::from_mode(0o750))
        .map_err(|e| e.to_string())?;
    run(
        "setcap",
        &["cap_perfmon,cap_bpf=ep", &arum.display().to_string()],
    )?;
    Ok(arum)
}

fn capability_lines(status: &str) -> Vec<(String, u64)> {
    status
        .lines()
        .filter(|l| l.starts_with("Cap"))
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (
                k.to_string(),
                u64::from_str_radix(v.trim(), 16).expect("a capability mask"),
            )
        })
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_group_installation_measures_and_grants_nothing_beyond_measuring() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("not root: cannot create a user and set file capabilities; nothing checked");
        return;
    }
    let dir = temp_dir();
    // Everyone may pass through; the user's own directory is the user's.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let user = match TestUser::create() {
        Ok(u) => u,
        Err(why) => {
            eprintln!("cannot create a test user ({why}); nothing checked");
            return;
        }
    };
    let arum = match install(dir.path(), &user.name) {
        Ok(a) => a,
        Err(why) => {
            eprintln!("cannot install a copy with file capabilities ({why}): the filesystem of the temporary directory may keep no extended attributes; nothing checked");
            return;
        }
    };
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    run("chown", &[&user.name, &home.display().to_string()]).unwrap();
    // Only root may write here.
    let root_only = dir.path().join("root-only");
    std::fs::create_dir(&root_only).unwrap();
    std::fs::set_permissions(&root_only, std::fs::Permissions::from_mode(0o755)).unwrap();

    // Another user may not even run it.
    let other = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .args(["sh", "-c", "exec \"$@\"", "sh"])
        .arg(&arum)
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        other.status.code(),
        Some(126),
        "a user outside the group ran arum"
    );
    assert!(
        stderr(&other).contains("Permission denied"),
        "{}",
        stderr(&other)
    );

    let delayacct_before = std::fs::read_to_string("/proc/sys/kernel/task_delayacct").ok();

    // Counting software events of its own program; the program holds no capability.
    let events = [
        "-e",
        "task-clock,page-faults",
        "--",
        "cat",
        "/proc/self/status",
    ];
    let (out, json) = user.measure(&arum, &home, "count", &events);
    let events = json["counters"]["events"].as_array().unwrap();
    for e in events {
        assert_eq!(e["status"], "counted", "{e:#}");
        assert!(e["total_raw"].as_u64().unwrap() > 0, "{e:#}");
    }
    let caps = capability_lines(&String::from_utf8_lossy(&out.stdout));
    for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        let v = caps.iter().find(|(k, _)| k == set).map(|(_, v)| *v);
        assert_eq!(v, Some(0), "{set} of the launched program: {caps:?}");
    }
    // The file is the user's: written with the user's rights.
    let report = std::fs::metadata(home.join("count.json")).unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&report);
    assert_ne!(owner, 0, "the report belongs to the user, not root");

    // A function and its system calls, counted in the kernel.
    let rustfn = helper("rustfn");
    let timed = [
        "--no-throttle",
        "-F",
        "rustfn::work::step",
        "--syscalls",
        "--",
        &rustfn,
        "50",
    ];
    let (_, json) = user.measure(&arum, &home, "functions", &timed);
    let f = &json["functions"];
    if f["engine"] == "bpf" {
        let calls = f["functions"][0]["calls"].as_u64();
        assert_eq!(calls, Some(50), "{f:#}");
        assert_eq!(json["syscalls"]["engine"], "bpf");
        assert!(!json["syscalls"]["calls"].as_array().unwrap().is_empty());
    } else {
        // A kernel without the engine's needs: the report says why, and so does this test.
        eprintln!(
            "the in-kernel engine is off here ({}, {}): function timing not checked as the user",
            f["engine_note"], f["off_reason"]
        );
    }

    // A program that raises its privilege is measured only as perf would let the user: no
    // probes of it, and the report says why. On a nosuid mount nothing raises it.
    let nosuid = nix::sys::statvfs::statvfs(dir.path())
        .unwrap()
        .flags()
        .contains(nix::sys::statvfs::FsFlags::ST_NOSUID);
    if nosuid {
        eprintln!("the temporary directory is on a nosuid mount: set-ID programs not checked");
    }
    let suid = dir.path().join("bin").join("suid-true");
    if !nosuid {
        std::fs::copy("/bin/true", &suid).unwrap();
        std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();
        let suid = suid.display().to_string();
        let (_, json) = user.measure(&arum, &home, "suid", &["--syscalls", "--", &suid]);
        assert!(
            json["syscalls"].is_null(),
            "a set-user-ID program was traced"
        );
        let warned = json["warnings"].as_array().unwrap();
        assert!(
            warned
                .iter()
                .any(|w| w.as_str().unwrap().contains("is set-user-ID")),
            "{warned:?}"
        );
    }

    // A set-ID program the tree execs later: the in-kernel engine stops following it at that
    // exec, as the kernel stops perf's counters there (uname(2) is its call; sh makes none).
    let suid_uname = dir.path().join("bin").join("suid-uname");
    std::fs::copy("/bin/uname", &suid_uname).unwrap();
    std::fs::set_permissions(&suid_uname, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let later = [
        "--syscalls",
        "--",
        "sh",
        "-c",
        "\"$0\"; /bin/uname; true",
        &suid_uname.display().to_string(),
    ];
    let (_, json) = user.measure(&arum, &home, "later", &later);
    let calls = |name: &str| {
        json["syscalls"]["calls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .and_then(|c| c["calls"].as_u64())
            .unwrap_or(0)
    };
    let warned = json["warnings"].as_array().unwrap();
    let left = warned.iter().any(|w| {
        w.as_str()
            .unwrap()
            .contains("1 process of the tree exec'd a program that raises its privilege")
    });
    if nosuid {
        // Nothing raised, nothing left: both calls counted (where the engine runs).
        assert!(!left, "{warned:?}");
    } else if json["syscalls"]["engine"] == "bpf" {
        // The plain uname's call is counted, the set-user-ID one's is not.
        assert_eq!(calls("uname"), 1, "{:#}", json["syscalls"]);
        assert!(left, "{warned:?}");
    } else {
        eprintln!(
            "the in-kernel engine is off here ({}): the kernel detaches the perf path's events \
             at a set-ID exec itself; not checked",
            json["syscalls"]["engine_note"]
        );
    }

    // tracefs is root's here unless its permissions were opened: the records' path says that,
    // not that the kernel lacks its tracepoints.
    let tracefs_closed =
        std::fs::metadata("/sys/kernel/tracing").is_ok_and(|m| m.permissions().mode() & 0o005 == 0);
    if tracefs_closed {
        let perf_path = [
            "--syscalls",
            "--probe-engine",
            "perf",
            "-o",
            "/dev/null",
            "--",
            "true",
        ];
        let out = user.command(&arum, &home).args(perf_path).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let said = stderr(&out);
        assert!(said.contains("may not be read by this user"), "{said}");
        assert!(!said.contains("CONFIG_FTRACE_SYSCALLS"), "{said}");
    } else {
        eprintln!("tracefs is open to other users here: the refusal's words are not checked");
    }

    // Nowhere only root may write: refused before the program runs.
    let marker = home.join("ran");
    let out = user
        .command(&arum, &home)
        .arg("-o")
        .arg(root_only.join("r.txt"))
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists(), "the program ran");
    assert!(!root_only.join("r.txt").exists());

    // No sysctl changes: --enable-delayacct is root's (where delay accounting is off).
    if delayacct_before.as_deref().map(str::trim) == Some("0") {
        let sysctl = [
            "--per-task",
            "--enable-delayacct",
            "-o",
            "/dev/null",
            "--",
            "true",
        ];
        let out = user.command(&arum, &home).args(sysctl).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("only for root"), "{}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string("/proc/sys/kernel/task_delayacct").ok(),
            delayacct_before
        );
    } else {
        eprintln!("delay accounting is on already: --enable-delayacct would change nothing");
    }

    // Installed set-user-ID instead of with capabilities: refused before anything runs.
    std::fs::set_permissions(&arum, std::fs::Permissions::from_mode(0o4750)).unwrap();
    let out = user
        .command(&arum, &home)
        .args(["--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    assert!(stderr(&out).contains("set-user-ID"), "{}", stderr(&out));
    assert!(!marker.exists(), "the program ran");
}

/// arum's ELF header and program headers, as `object` reads them.
struct Elf {
    data: Vec<u8>,
}

type Header = object::elf::FileHeader64<object::Endianness>;

impl Elf {
    fn read() -> Elf {
        Elf {
            data: std::fs::read(arum_path()).unwrap(),
        }
    }
    fn header(&self) -> (&Header, object::Endianness) {
        let header = Header::parse(&*self.data).expect("a 64-bit ELF");
        (header, header.endian().unwrap())
    }
    fn program_headers(&self) -> &[object::elf::ProgramHeader64<object::Endianness>] {
        let (header, endian) = self.header();
        header.program_headers(endian, &*self.data).unwrap()
    }
    /// The dynamic section's entries, (tag, value), up to DT_NULL.
    fn dynamic(&self) -> Vec<(u64, u64)> {
        let (_, endian) = self.header();
        let entries = self
            .program_headers()
            .iter()
            .find_map(|ph| ph.dynamic(endian, &*self.data).unwrap())
            .unwrap_or_default();
        entries
            .iter()
            .map(|d| (d.d_tag(endian), d.d_val(endian)))
            .take_while(|&(tag, _)| tag != u64::from(object::elf::DT_NULL))
            .collect()
    }
}

/// The binary is position-independent (its code at a random address at every start, as for
/// every program Debian builds that may hold privileges) and still static (no interpreter, no
/// shared library to load): an ELF of type DYN without a PT_INTERP program header.
#[test]
fn the_binary_is_a_static_position_independent_executable() {
    let elf = Elf::read();
    let (header, endian) = elf.header();
    assert_eq!(
        header.e_type(endian),
        object::elf::ET_DYN,
        "not position-independent (readelf -h says EXEC)"
    );
    let types: Vec<u32> = elf
        .program_headers()
        .iter()
        .map(|ph| ph.p_type(endian))
        .collect();
    assert!(
        !types.contains(&object::elf::PT_INTERP),
        "dynamically linked: {types:?}"
    );
    // A static PIE has a dynamic section for its own relocations, and nothing to load.
    assert!(!elf.dynamic().is_empty(), "no dynamic section: {types:?}");
}

/// The relative relocations are packed (DT_RELR), for the entry point to apply (arum/src/entry.rs),
/// and none is left in the plain table: a linker that ignored `-z pack-relative-relocs` would
/// leave them all to the C library, and every start would read the plain table's 250 KiB.
#[test]
fn the_relative_relocations_are_packed_for_the_entry_point() {
    // DT_RELRSZ is newer than the `object` release the workspace uses.
    const DT_RELRSZ: u64 = 35;
    const DT_RELACOUNT: u64 = object::elf::DT_RELACOUNT as u64;
    let dynamic = Elf::read().dynamic();
    let value = |tag| dynamic.iter().find(|&&(t, _)| t == tag).map(|&(_, v)| v);
    assert!(
        value(DT_RELRSZ).is_some_and(|size| size > 0),
        "no packed relocations (readelf -d shows no RELR): {dynamic:x?}"
    );
    assert_eq!(
        value(DT_RELACOUNT).unwrap_or(0),
        0,
        "relative relocations left in the plain table"
    );
}
