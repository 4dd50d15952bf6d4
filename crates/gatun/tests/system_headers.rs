//! gatun::cdecl on real headers: every `/usr/include/*.h` that gcc accepts on its own
//! (`#include <NAME>` through `gcc -E -P`), plus `sqlite3.h` and `zlib.h`, must parse with
//! `Declarations::parse`. Headers gcc rejects alone are listed and skipped: ones gcc cannot
//! preprocess alone (they `#error` unless included through another, C++ headers), and ones
//! that preprocess but do not compile alone (`gcc -fsyntax-only` fails: they need another
//! header first). Every parse failure is reported with the header's name and the positioned
//! error, and the test fails if there is any.
#![cfg(all(target_os = "linux", not(miri)))]

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use gatun::cdecl::Declarations;

/// `gcc -E -P` of `#include <name>`, or `None` if gcc rejects the header on its own.
fn preprocess(name: &str) -> Option<String> {
    let out = Command::new("gcc")
        .args(["-E", "-P", "-x", "c", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("piped stdin");
            writeln!(stdin, "#include <{name}>")?;
            drop(stdin);
            child.wait_with_output()
        })
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

/// Whether gcc compiles `#include <name>` alone (`-fsyntax-only`): some headers preprocess but
/// are not C on their own (they need another header first).
fn compiles_alone(name: &str) -> bool {
    Command::new("gcc")
        .args(["-fsyntax-only", "-x", "c", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("piped stdin");
            writeln!(stdin, "#include <{name}>")?;
            drop(stdin);
            child.wait()
        })
        .is_ok_and(|s| s.success())
}

fn gcc_available() -> bool {
    Command::new("gcc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Preprocesses and parses `names` on a few threads; returns (parsed, rejected by gcc,
/// failures).
fn run(names: Vec<String>) -> (usize, Vec<String>, Vec<String>) {
    let queue = Mutex::new(names);
    let parsed = Mutex::new(0usize);
    let rejected = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let Some(name) = queue.lock().unwrap().pop() else {
                    break;
                };
                let Some(src) = preprocess(&name) else {
                    rejected.lock().unwrap().push(name);
                    continue;
                };
                match Declarations::parse(&src) {
                    Ok(_) => *parsed.lock().unwrap() += 1,
                    // Not C alone: gcc rejects it too (checked only on failure: it is slow).
                    Err(_) if !compiles_alone(&name) => rejected.lock().unwrap().push(name),
                    Err(e) => failures.lock().unwrap().push(format!("{name}: {e}")),
                }
            });
        }
    });
    let mut rejected = rejected.into_inner().unwrap();
    rejected.sort();
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    (parsed.into_inner().unwrap(), rejected, failures)
}

#[test]
fn every_usr_include_header_parses() {
    if !gcc_available() {
        eprintln!("gcc not found: skipping");
        return;
    }
    let mut names: Vec<String> = std::fs::read_dir("/usr/include")
        .expect("/usr/include")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".h"))
        .collect();
    names.sort();
    let total = names.len();
    let (parsed, rejected, failures) = run(names);
    eprintln!(
        "{total} headers: {parsed} parsed, {} rejected by gcc alone ({}), {} failed",
        rejected.len(),
        rejected.join(", "),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} headers failed to parse:\n\n{}",
        failures.len(),
        total - rejected.len(),
        failures.join("\n\n")
    );
    assert!(parsed >= 100, "only {parsed} headers parsed");
}

#[test]
fn library_headers_parse() {
    if !gcc_available() {
        eprintln!("gcc not found: skipping");
        return;
    }
    let mut names = Vec::new();
    for h in ["sqlite3.h", "zlib.h"] {
        if Path::new("/usr/include").join(h).exists() {
            names.push(h.to_string());
        } else {
            eprintln!("{h} is not installed: skipped");
        }
    }
    let (_, rejected, failures) = run(names);
    assert!(rejected.is_empty(), "gcc rejected {rejected:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
