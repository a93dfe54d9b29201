//! Loading an embedded object: its configuration written into its read-only data, the kernel's
//! verdict turned into one line a user can act on, and libbpf's own messages kept off arum's
//! stderr (the program's stderr is the user's) and quoted only in that line.

use std::fmt;
use std::sync::Mutex;

use libbpf_rs::{ErrorKind, Object, ObjectBuilder, OpenObject, PrintLevel};

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
    let mut kept = MESSAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if kept.len() >= 8 {
        kept.remove(0);
    }
    kept.push(msg.trim_end().to_string());
}

fn last_message() -> Option<String> {
    let kept = MESSAGES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    kept.last().cloned()
}

/// Opens `object` (named `name` in messages) with `config` as its read-only data: the object
/// has one read-only variable, a struct of exactly `config.len()` bytes.
pub(crate) fn open(object: &[u8], name: &str, config: &[u8]) -> Result<OpenObject, Unavailable> {
    libbpf_rs::set_print(Some((PrintLevel::Warn, keep_message)));
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
pub(crate) fn load(open: OpenObject, name: &str) -> Result<Object, Unavailable> {
    open.load()
        .map_err(|e| refused(&e, &format!("loading the {name} BPF programs")))
}

/// One line for an error of the kernel or libbpf during `what`.
pub(crate) fn refused(e: &libbpf_rs::Error, what: &str) -> Unavailable {
    let detail = last_message()
        .map(|m| format!(" (libbpf: {m})"))
        .unwrap_or_default();
    Unavailable(match e.kind() {
        ErrorKind::PermissionDenied => format!(
            "{what} was refused: BPF needs CAP_BPF and CAP_PERFMON, or root{detail}"
        ),
        ErrorKind::Unsupported | ErrorKind::NotFound => format!(
            "{what} failed: this kernel lacks what the programs use (BTF, raw tracepoints, uprobe_multi links){detail}"
        ),
        _ => format!("{what} failed: {e}{detail}"),
    })
}
