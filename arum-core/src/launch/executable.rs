//! The program as exec will need it, prepared before fork: the PATH search, the argument and
//! environment vectors, the fallback for scripts without a `#!` line.

use std::ffi::CString;
use std::os::unix::ffi::OsStringExt;

use crate::error::ArumError;

/// Everything the child needs after fork, built before fork so that the child allocates nothing.
pub struct Executable {
    pub(super) display: String,
    pub(super) candidates: Vec<CString>,
    /// Owns the strings `argv_ptrs` points into.
    _argv: Vec<CString>,
    /// NULL-terminated pointers into `argv`'s heap buffers, which stay put when `Executable` moves.
    pub(super) argv_ptrs: Vec<*const libc::c_char>,
    /// Per candidate, the argument vector that runs it as a shell script (`/bin/sh PATH ARGS...`),
    /// for a file the kernel refuses with ENOEXEC (no `#!` line), as execvp(3) does.
    pub(super) script_argvs: Vec<Vec<*const libc::c_char>>,
    /// Owns the strings `envp` points into.
    _env: Vec<CString>,
    /// The program's environment when it is not arum's own (`--env`, repeated runs): a
    /// NULL-terminated array for execve. None: execv, the program gets arum's environment as is.
    pub(super) envp: Option<Vec<*const libc::c_char>>,
}

/// The shell that runs scripts without a `#!` line (execvp's choice).
pub(super) const SHELL: &std::ffi::CStr = c"/bin/sh";

impl Executable {
    /// The file exec will run: the first candidate that is an executable regular file.
    pub fn resolved(&self) -> Option<std::path::PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::PermissionsExt;
        self.candidates
            .iter()
            .map(|c| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(c.as_bytes())))
            .find(|p| {
                std::fs::metadata(p)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    }

    /// Prepares `argv` for exec, searching PATH the way execvp does when the name has no slash.
    pub fn new(argv: &[String]) -> Result<Self, ArumError> {
        let bad = |what: &str| ArumError::BadLaunch {
            line: argv.join(" "),
            why: format!("{what} contains a NUL byte"),
        };
        let program = argv.first().ok_or_else(|| ArumError::BadLaunch {
            line: String::new(),
            why: "it names no program".into(),
        })?;
        let candidates = if program.is_empty() {
            // As the shell and execvp: an empty name is not found (no PATH search).
            Vec::new()
        } else if program.contains('/') {
            vec![CString::new(program.as_str()).map_err(|_| bad("the program name"))?]
        } else {
            let path =
                std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
            path.split(':')
                .map(|dir| {
                    let dir = if dir.is_empty() { "." } else { dir };
                    CString::new(format!("{dir}/{program}"))
                        .map_err(|_| bad("PATH or the program name"))
                })
                .collect::<Result<_, _>>()?
        };
        let argv: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_str()).map_err(|_| bad("an argument")))
            .collect::<Result<_, _>>()?;
        let argv_ptrs: Vec<*const libc::c_char> = argv
            .iter()
            .map(|a| a.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        let script_argvs = candidates
            .iter()
            .map(|path| {
                [SHELL.as_ptr(), path.as_ptr()]
                    .into_iter()
                    .chain(argv_ptrs[1..].iter().copied())
                    .collect()
            })
            .collect();
        Ok(Executable {
            display: program.clone(),
            candidates,
            _argv: argv,
            argv_ptrs,
            script_argvs,
            _env: Vec::new(),
            envp: None,
        })
    }

    /// As [`Executable::new`], with arum's environment changed by `set` (NAME, value): each
    /// replaces a variable of that name or is added. PATH is still searched as arum's own.
    pub fn with_env(argv: &[String], set: &[(String, String)]) -> Result<Self, ArumError> {
        let mut exe = Executable::new(argv)?;
        if set.is_empty() {
            return Ok(exe);
        }
        let bad = |name: &str| {
            ArumError::Usage(format!(
            "--env {name}=...: a variable's name and value cannot contain a NUL byte, nor its name `=`"
        ))
        };
        let mut env: Vec<CString> = Vec::new();
        for (name, value) in std::env::vars_os() {
            if set.iter().any(|(n, _)| std::ffi::OsStr::new(n) == name) {
                continue;
            }
            let mut entry = name.into_vec();
            entry.push(b'=');
            entry.extend(value.into_vec());
            // A variable of arum's own environment holds no NUL byte (it came from one).
            env.extend(CString::new(entry).ok());
        }
        for (name, value) in set {
            if name.is_empty() || name.contains('=') {
                return Err(bad(name));
            }
            env.push(CString::new(format!("{name}={value}")).map_err(|_| bad(name))?);
        }
        exe.envp = Some(
            env.iter()
                .map(|e| e.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect(),
        );
        exe._env = env;
        Ok(exe)
    }
}
