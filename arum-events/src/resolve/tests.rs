//! Unit tests of name resolution. Every CPU is named by its `--cpu` key and resolved against its
//! built-in table, and the kernel's PMUs, where a name needs them, are a sysfs tree the test
//! writes: nothing depends on the machine the tests run on.

mod any_string;
mod encodings;
mod names;
mod refusals;

use super::*;
use crate::cpu::{parse_spec, CpuIdent};
use crate::sysfs::Pmus;
use crate::table::{Table, TableSource};

/// CPUs by `--cpu` key, one per kind of table the tests need.
const SKYLAKE_SP: &str = "GenuineIntel-6-55-4";
const ALDER_LAKE: &str = "GenuineIntel-6-97";
const CORE2: &str = "GenuineIntel-6-17";
const NETBURST: &str = "GenuineIntel-15-3";
const K8_REV_C: &str = "AuthenticAMD-15-F";
const K8_REV_F: &str = "AuthenticAMD-15-41";
const BARCELONA: &str = "AuthenticAMD-16-2";
const SHANGHAI: &str = "AuthenticAMD-16-4";
const ZEN4: &str = "AuthenticAMD-25-11";
/// Families ARUM has no table for.
const INTEL_NO_TABLE: &str = "GenuineIntel-19-1";
const AMD_NO_TABLE: &str = "AuthenticAMD-31-0";
const NETBURST_NO_TABLE: &str = "GenuineIntel-15-7";

/// A CPU by its `--cpu` key, with the built-in table that claims it (if any).
struct Model {
    cpu: CpuIdent,
    table: Option<Table>,
}

impl Model {
    fn new(key: &str) -> Model {
        let cpu = parse_spec(key).unwrap_or_else(|e| panic!("{key}: {e}"));
        let table = TableSource::default()
            .for_cpu(&cpu)
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        Model { cpu, table }
    }

    /// A CPU whose table must be `name`: the tests name its events.
    fn with_table(key: &str, name: &str) -> Model {
        let m = Model::new(key);
        assert_eq!(m.table.map(|t| t.name()), Some(name), "{key}");
        m
    }

    /// A CPU ARUM has no table for.
    fn without_table(key: &str) -> Model {
        let m = Model::new(key);
        assert_eq!(m.table.map(|t| t.name()), None, "{key}");
        m
    }

    fn resolver(&self) -> Resolver<'_> {
        Resolver::new(&self.cpu, self.table)
    }

    fn ok(&self, name: &str) -> ResolvedEvent {
        self.resolver()
            .resolve(name)
            .unwrap_or_else(|e| panic!("{}: {name}: {e}", self.cpu.key()))
    }

    fn err(&self, name: &str) -> ResolveError {
        match self.resolver().resolve(name) {
            Ok(ev) => panic!("{}: {name} resolved: {ev:?}", self.cpu.key()),
            Err(e) => e,
        }
    }

    /// The register-level encoding `name` resolves to.
    fn hw(&self, name: &str) -> HwEvent {
        hw_of(&self.ok(name))
    }

    /// The select fields of `name`: (event select, unit mask, counter mask, invert, edge, any).
    fn sel(&self, name: &str) -> (u32, u32, u32, bool, bool, bool) {
        let f = self.hw(name).fields.expect("AMD or Intel select fields");
        (f.event_select, f.umask, f.cmask, f.inv, f.edge, f.any)
    }
}

fn hw_of(ev: &ResolvedEvent) -> HwEvent {
    match &ev.kind {
        EventKind::Hardware(h) => h.clone(),
        EventKind::Software { .. } => panic!("{} is a software event", ev.spec),
    }
}

/// The kernel's PMUs as a test's own sysfs tree: the core PMUs given, each with Intel's select
/// fields as formats and a `topdown-retiring` event, and `msr` with a `tsc` event.
struct Sysfs {
    _dir: tempfile::TempDir,
    pmus: Pmus,
}

impl Sysfs {
    /// `core`: (PMU name, perf type, cpulist).
    fn new(core: &[(&str, u32, &str)]) -> Sysfs {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let write = |path: &std::path::Path, text: &str| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        for (name, perf_type, cpus) in core {
            let pmu = dir.path().join(name);
            write(&pmu.join("type"), &format!("{perf_type}\n"));
            write(&pmu.join("cpus"), &format!("{cpus}\n"));
            write(
                &pmu.join("events/topdown-retiring"),
                "event=0x00,umask=0x80\n",
            );
            for (term, bits) in [
                ("event", "config:0-7"),
                ("umask", "config:8-15"),
                ("edge", "config:18"),
                ("inv", "config:23"),
                ("cmask", "config:24-31"),
            ] {
                write(&pmu.join("format").join(term), &format!("{bits}\n"));
            }
        }
        let msr = dir.path().join("msr");
        write(&msr.join("type"), "11\n");
        write(&msr.join("events/tsc"), "event=0x00\n");
        write(&msr.join("format/event"), "config:0-63\n");
        let pmus = Pmus::read(dir.path());
        Sysfs { _dir: dir, pmus }
    }
}
