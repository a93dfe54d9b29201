//! What arum says to the user: bad option values get one line with the fix and a documented
//! exit status, never a panic; options that would do nothing are pointed out; the reports stay
//! readable for huge command lines; `arum info --format json` has plain fields.

mod common;

use common::{arum, run_json};

fn stderr_of(args: &[&str]) -> (Option<i32>, String) {
    let out = arum().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ambient_intervals_need_a_unit_and_huge_values_are_refused_without_a_panic() {
    for (value, says) in [
        ("--ambient=10", "has no unit"),
        ("--ambient=500us", "1 ms"),
        ("--ambient=99999999999999999999", "has no unit"),
        ("--ambient=99999999999999999999s", "longer than"),
        ("--ambient=-1s", "negative"),
    ] {
        let (code, err) = stderr_of(&[value, "--", "true"]);
        assert_eq!(code, Some(2), "{value}: {err}");
        assert!(err.contains(says), "{value}: {err}");
        assert!(!err.contains("panicked"), "{value}: {err}");
    }
    let (_, r) = run_json(&["--ambient=250ms", "--", "sleep", "0.3"]);
    assert_eq!(r["ambient"]["interval_ms"], 250);
}

#[test]
fn options_that_do_nothing_without_events_are_pointed_out() {
    let (code, err) = stderr_of(&[
        "-C",
        "0",
        "-I",
        "100",
        "--backend",
        "perf",
        "-o",
        "/dev/null",
        "--",
        "true",
    ]);
    assert_eq!(code, Some(0));
    for option in ["-C/--cpus", "-I/--interval", "--backend"] {
        assert!(
            err.contains(&format!("{option} has no effect without events")),
            "{option}: {err}"
        );
    }
    let (code, err) = stderr_of(&["--shell", "--", "true"]);
    assert_eq!(code, Some(2), "--shell needs --launch: {err}");
}

#[test]
fn a_program_named_without_double_dash_gets_the_fix() {
    let (code, err) = stderr_of(&["xz", "--version"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "arum: put the program after `--`: arum -- xz --version\n"
    );
    // After an option and its value too; a subcommand is not taken for a program.
    let (code, err) = stderr_of(&["-o", "/dev/null", "sleep", "1"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "arum: put the program after `--`: arum -o /dev/null -- sleep 1\n"
    );
    let (code, err) = stderr_of(&["hourglass", "-d", "-1s"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("write -d=-1s") && !err.contains("arum --"),
        "{err}"
    );
    // The usage says where the program goes.
    let (_, err) = stderr_of(&["--bogus", "--", "true"]);
    assert!(
        err.contains("Usage: arum [OPTIONS] -- CMD [ARGS]..."),
        "{err}"
    );
    let (code, err) = stderr_of(&["--launch", "FOO=1 env"]);
    assert_eq!(code, Some(125));
    assert!(
        err.contains("add --shell") && err.contains("env FOO=1"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn warnings_are_said_once() {
    // The text report on stderr shows the warning itself: it is not also printed as it arises.
    let (_, err) = stderr_of(&["-C", "0", "--", "true"]);
    assert_eq!(err.matches("-C/--cpus has no effect").count(), 1, "{err}");
    // With the report in a file, stderr gets it as it arises, once; the file has it once.
    let dir = common::temp_dir();
    let path = dir.path().join("r.txt");
    let out = arum()
        .args(["-C", "0", "-o"])
        .arg(&path)
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("-C/--cpus has no effect").count(), 1, "{err}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("-C/--cpus has no effect").count(), 1, "{text}");
}

#[test]
fn a_huge_command_line_is_abbreviated_in_text_and_whole_in_json() {
    let long = "x".repeat(100_000);
    let (_, err) = stderr_of(&["--", "echo", &long]);
    let line = err
        .lines()
        .find(|l| l.trim_start().starts_with("command"))
        .unwrap();
    assert!(line.len() < 400, "{} bytes", line.len());
    assert!(line.contains("100005 bytes in all"), "{line}");
    let (_, r) = run_json(&["--", "echo", &long]);
    assert_eq!(r["command"]["argv"][1].as_str().unwrap().len(), 100_000);
}

#[test]
fn info_json_has_plain_fields() {
    let out = arum().args(["info", "--format", "json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("\"Ok\"") && !text.contains("\"Err\""),
        "{text}"
    );
    for probe in ["perf_software", "perf_hardware", "kmod", "bpf"] {
        let p = &v["backends"][probe];
        assert!(p["usable"].is_boolean(), "{probe}: {p}");
        assert_eq!(p["usable"].as_bool().unwrap(), p["reason"].is_null(), "{p}");
    }
    // Software events work wherever perf events do, as here.
    assert_eq!(v["backends"]["perf_software"]["usable"], true);
}

#[test]
fn an_unwritable_path_is_named_with_the_option_that_gave_it() {
    for (args, option) in [
        (
            vec!["-o", "/nonexistent/r.txt", "--", "true"],
            "-o/--output",
        ),
        (
            vec!["--html", "/nonexistent/r.html", "--", "true"],
            "--html",
        ),
        (
            vec![
                "-r",
                "2",
                "--export-json",
                "/nonexistent/r.json",
                "--",
                "true",
            ],
            "--export-json",
        ),
        (
            vec![
                "-r",
                "2",
                "--export-csv",
                "/nonexistent/r.csv",
                "--",
                "true",
            ],
            "--export-csv",
        ),
    ] {
        let (code, err) = stderr_of(&args);
        assert_eq!(code, Some(125), "{args:?}: {err}");
        assert!(
            err.contains("/nonexistent/")
                && err.ends_with(&format!("choose a writable path with {option}\n")),
            "{args:?}: {err}"
        );
    }
}

/// A function missing from a stripped executable is said to be missing because of the stripping,
/// not "misspelled, or inlined away".
#[test]
fn a_missing_function_of_a_stripped_file_says_stripped() {
    let program = "/usr/bin/true";
    let Ok(image) = arum_symbols::Image::read(std::path::Path::new(program)) else {
        println!("{program} cannot be read as ELF here: nothing to probe");
        return;
    };
    let stripped = image.table == arum_symbols::SymbolTable::Dynsym;
    let out = arum()
        .args([
            "-o",
            "/dev/null",
            "-F",
            "no_such_function_anywhere",
            "--",
            program,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    if stripped {
        assert!(
            err.contains("stripped") && !err.contains("inlined"),
            "{err}"
        );
    } else {
        println!("{program} keeps its symbols here: the unstripped wording is checked");
        assert!(err.contains("inlined away"), "{err}");
    }
}
