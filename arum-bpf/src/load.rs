//! Loading an embedded object: its configuration written into its read-only data, the kernel's
//! verdict turned into one line a user can act on, and libbpf's own messages kept off arum's
//! stderr (the program's stderr is the user's) and quoted only in that line.

use std::fmt;
use std::path::Path;
use std::sync::Mutex;

use libbpf_rs::{
    ErrorKind, Link, Map, MapCore, MapFlags, Object, ObjectBuilder, OpenObject, PrintLevel,
    UprobeMultiOpts,
};

/// Why the in-kernel engine cannot run here; the perf_event_open path is used instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// libbpf's last warnings, for the message of a failed load.
static MESSAGES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn keep_message(_level: PrintLevel, msg: String) {
    if std::env::var_os("ARUM_BPF_LOG").is_some() {
        eprint!("{msg}");
    }
    let mut kept = MESSAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if kept.len() >= 8 {
        kept.remove(0);
    }
    kept.push(msg.trim_end().trim_start_matches("libbpf: ").to_string());
}

fn last_message() -> Option<String> {
    let kept = MESSAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    kept.last().cloned()
}

/// The verifier's verdict, when it rejected a program: the last line of its log that is neither
/// an instruction nor a source line nor the statistics.
fn verifier_verdict() -> Option<String> {
    let kept = MESSAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let log = kept
        .iter()
        .find(|m| m.contains("-- END PROG LOAD LOG --"))?;
    log.lines()
        .take_while(|l| !l.contains("-- END PROG LOAD LOG --"))
        .filter(|l| {
            let l = l.trim();
            !l.is_empty()
                && !l.starts_with(';')
                && !l.starts_with(|c: char| c.is_ascii_digit())
                && !l.starts_with("processed")
        })
        .last()
        .map(|l| l.trim().to_string())
}

/// Opens `object` (named `name` in messages) with `config` as its read-only data: the object
/// has one read-only variable, a struct of exactly `config.len()` bytes.
fn open(object: &[u8], name: &str, config: &[u8]) -> Result<OpenObject, Unavailable> {
    // ARUM_BPF_LOG also asks libbpf for its debug lines (map creation, relocations).
    let level = match std::env::var_os("ARUM_BPF_LOG") {
        Some(_) => PrintLevel::Debug,
        None => PrintLevel::Warn,
    };
    libbpf_rs::set_print(Some((level, keep_message)));
    MESSAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
    let mut open = ObjectBuilder::default()
        .open_memory(object)
        .map_err(|e| Unavailable(format!("the {name} BPF object does not open: {e}")))?;
    let mut set = false;
    for mut map in open.maps_mut() {
        if !map.name().to_string_lossy().ends_with(".rodata") {
            continue;
        }
        let data = map.initial_value_mut().ok_or_else(|| {
            Unavailable(format!(
                "the {name} BPF object's configuration is not writable"
            ))
        })?;
        if data.len() != config.len() {
            // A build mismatch between the C struct and its mirror: a bug, said plainly.
            return Err(Unavailable(format!(
                "the {name} BPF object's configuration is {} bytes, arum writes {}",
                data.len(),
                config.len()
            )));
        }
        data.copy_from_slice(config);
        set = true;
    }
    if !set && !config.is_empty() {
        return Err(Unavailable(format!(
            "the {name} BPF object has no configuration"
        )));
    }
    Ok(open)
}

/// Loads `open` into the kernel (the verifier runs here).
fn load(open: OpenObject, name: &str) -> Result<Object, Unavailable> {
    open.load()
        .map_err(|e| refused(&e, &format!("loading the {name} BPF programs")))
}

/// One line for an error of the kernel or libbpf during `what`.
pub(crate) fn refused(e: &libbpf_rs::Error, what: &str) -> Unavailable {
    let detail = last_message()
        .map(|m| format!(" (libbpf: {m})"))
        .unwrap_or_default();
    if let Some(verdict) = verifier_verdict() {
        return Unavailable(format!(
            "{what} failed: the kernel's verifier rejected them ({verdict})"
        ));
    }
    Unavailable(match e.kind() {
        // libbpf's own line here blames the kernel's configuration and RLIMIT_MEMLOCK: it
        // cannot tell a missing capability from those.
        ErrorKind::PermissionDenied => {
            format!("{what} was refused: BPF needs CAP_BPF and CAP_PERFMON, or root")
        }
        ErrorKind::Unsupported | ErrorKind::NotFound => format!(
            "{what} failed: this kernel lacks what the programs use (BTF, raw and BTF-typed tracepoints){detail}"
        ),
        _ => format!("{what} failed: {e}{detail}"),
    })
}

/// A loaded object, its programs attached or not, and the tree it follows.
pub(crate) struct Loaded {
    object: Object,
    links: Vec<Link>,
}

/// The object's `tree` map's states (`bpf/arum.h`).
pub(crate) const TREE_HELD: u8 = 1;
pub(crate) const TREE_RUNNING: u8 = 2;
/// A process that left the tree at an exec that raised its privilege (`bpf/tree.h`).
pub(crate) const TREE_LEFT: u8 = 3;

impl Loaded {
    /// Opens `object` with `config` (see [`open`]) and loads it.
    pub fn new(object: &[u8], name: &str, config: &[u8]) -> Result<Loaded, Unavailable> {
        let object = load(open(object, name, config)?, name)?;
        Ok(Loaded {
            object,
            links: Vec::new(),
        })
    }

    /// Attaches every program of the object where its section says.
    pub fn attach(&mut self) -> Result<(), Unavailable> {
        self.attach_where(|_| true)
    }

    /// Attaches the programs `which` names, where their sections say.
    pub fn attach_where(&mut self, which: impl Fn(&str) -> bool) -> Result<(), Unavailable> {
        for prog in self.object.progs_mut() {
            let name = prog.name().to_string_lossy().into_owned();
            if !which(&name) {
                continue;
            }
            let link = prog
                .attach()
                .map_err(|e| refused(&e, &format!("attaching the BPF program {name}")))?;
            self.links.push(link);
        }
        Ok(())
    }

    /// Attaches program `prog` as a uprobe session on the functions of `path` at `offsets`
    /// (file offsets), each with its cookie: one uprobe_multi link, one registration. The link
    /// is the caller's: dropping it detaches the functions in one unregistration.
    pub fn attach_sessions(
        &mut self,
        prog: &str,
        path: &Path,
        offsets: Vec<usize>,
        cookies: Vec<u64>,
    ) -> Result<Link, Unavailable> {
        let program = self
            .object
            .progs_mut()
            .find(|p| p.name() == prog)
            .ok_or_else(|| Unavailable(format!("the BPF object has no program {prog}")))?;
        let opts = UprobeMultiOpts {
            offsets,
            cookies,
            session: true,
            ..UprobeMultiOpts::default()
        };
        // Every process: the tree's are told apart in the program (a process the tree forks
        // later maps the file too).
        program
            .attach_uprobe_multi_with_opts(-1, path, "", opts)
            .map_err(|e| refused(&e, &format!("probing the functions of {}", path.display())))
    }

    /// Detaches every program: nothing more is counted.
    pub fn detach(&mut self) {
        self.links.clear();
    }

    pub fn map(&self, name: &str) -> Result<Map<'_>, Unavailable> {
        self.object
            .maps()
            .find(|m| m.name() == name)
            .ok_or_else(|| Unavailable(format!("the BPF object has no map {name}")))
    }

    /// Puts `pid` in the object's tree in `state`.
    pub fn follow(&self, pid: u32, state: u8) -> Result<(), Unavailable> {
        self.map("tree")?
            .update(&pid.to_ne_bytes(), &[state], MapFlags::ANY)
            .map_err(|e| refused(&e, "following the launched process"))
    }

    /// Takes `pid` out of the tree.
    pub fn unfollow(&self, pid: u32) -> Result<(), Unavailable> {
        self.map("tree")?
            .delete(&pid.to_ne_bytes())
            .map_err(|e| refused(&e, "no longer following a process"))
    }

    /// How many processes left the tree at an exec that raised their privilege: from there on
    /// nothing of them (or of what they fork) was counted.
    pub fn left_tree(&self) -> Result<u64, Unavailable> {
        let tree = self.map("tree")?;
        let mut n = 0;
        for key in tree.keys() {
            if let Ok(Some(state)) = tree.lookup(&key, MapFlags::ANY) {
                n += u64::from(state.first() == Some(&TREE_LEFT));
            }
        }
        Ok(n)
    }

    /// The per-CPU drop counters (`enum arum_drop`), summed.
    pub fn drops(&self) -> Result<[u64; 4], Unavailable> {
        let map = self.map("drops")?;
        let mut out = [0u64; 4];
        for (k, o) in (0u32..).zip(out.iter_mut()) {
            let copies = map
                .lookup_percpu(&k.to_ne_bytes(), MapFlags::ANY)
                .map_err(|e| Unavailable(format!("reading the BPF drop counters: {e}")))?
                .unwrap_or_default();
            *o = copies.iter().map(|c| crate::percpu::u64_at(c, 0)).sum();
        }
        Ok(out)
    }
}
