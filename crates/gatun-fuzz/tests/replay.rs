//! Replays the checked-in fuzz inputs through the same checks the libFuzzer targets run:
//! every file in `fuzz/corpus/TARGET/` (the minimised corpus) and `fuzz/regressions/TARGET/`
//! (inputs that once crashed or timed out), for each target in `gatun_fuzz::TARGETS`.
//!
//! Each input runs on its own thread under a watchdog: a panic fails the test naming the file,
//! and so does an input that has not finished after [`WATCHDOG`] (a hang, or work out of
//! proportion to the input; the fuzzer's own per-input budget is much smaller, see README's
//! "Fuzzing"). The replay stops at the first such timeout (the stuck thread cannot be stopped).
//! A stack overflow aborts the whole test binary; run with `-- --nocapture` to see the file
//! names as they are replayed.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// How long one input may take (generous: the inputs take milliseconds in a debug build).
const WATCHDOG: Duration = Duration::from_secs(10);

/// The stack of the thread each input runs on: the main-thread stack libFuzzer runs inputs on.
const STACK_BYTES: usize = 8 << 20;

/// Regression inputs that fail until the library fixes they check are merged (paths relative
/// to `fuzz/`). They are skipped by `replay` and run by the ignored `replay_pending`; once a
/// fix is in, its inputs are removed from this list.
const PENDING: &[&str] = &[
    // Huge by-value aggregates: a 2^61-byte struct argument, 2^62-byte struct arguments and
    // return; `plan` aborts (a 2^62-byte allocation).
    "regressions/cdecl/huge_by_value_struct.h",
    // A union aligned to 2^61 bytes, passed and returned by value: `plan` aborts.
    "regressions/layout/union_aligned_2_61_by_value",
    // Shared sub-layouts: exponential time and memory in parsing, formatting, hashing and
    // classification.
    "regressions/cdecl/shared_union_40_levels.h",
    "regressions/cli_args/shared_union_28_levels_by_value",
    "regressions/layout/share_struct_34_levels",
    "regressions/layout/share_message_327766_bytes",
    // Zero-size elements: classification walks 10^18 (or 2^62) elements.
    "regressions/cdecl/zero_size_elements.h",
    "regressions/cdecl/zero_size_typedef_arrays.h",
    // Unbounded builder nesting: 22604 nested structs overflow the stack (drop, Display);
    // 60254 nested arrays take time quadratic in the depth (each level's byte_size walks
    // the levels below) and then overflow the stack.
    "regressions/layout/nest_struct_22604_levels",
    "regressions/layout/nest_array_60254_levels",
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// `(path relative to fuzz/, check)` for every input file of every target, sorted.
fn inputs() -> Vec<(String, gatun_fuzz::Check)> {
    let mut out = Vec::new();
    for &(target, check) in gatun_fuzz::TARGETS {
        for kind in ["corpus", "regressions"] {
            let dir = fuzz_dir().join(kind).join(target);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .map(|e| e.expect("reading a corpus directory").file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.') && n != "README.md")
                .collect();
            names.sort();
            out.extend(
                names
                    .into_iter()
                    .map(|n| (format!("{kind}/{target}/{n}"), check)),
            );
        }
    }
    out
}

/// Runs `check` on the file under the watchdog: `Err` describes a panic or a timeout.
fn replay_one(relative: &str, check: gatun_fuzz::Check) -> Result<(), String> {
    let bytes = std::fs::read(fuzz_dir().join(relative))
        .unwrap_or_else(|e| panic!("reading {relative}: {e}"));
    eprintln!("replaying {relative} ({} bytes)", bytes.len());
    let (done, finished) = mpsc::channel();
    let worker = thread::Builder::new()
        .name(relative.to_string())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let result = std::panic::catch_unwind(|| check(&bytes));
            let _ = done.send(result.map_err(|payload| {
                payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic with a non-text payload".into())
            }));
        })
        .expect("spawning a replay thread");
    match finished.recv_timeout(WATCHDOG) {
        Ok(result) => {
            worker.join().expect("the replay thread caught its panic");
            result.map_err(|message| format!("{relative}: panicked: {message}"))
        }
        Err(_) => Err(format!(
            "{relative}: not finished after {} s (a hang or superlinear work)",
            WATCHDOG.as_secs()
        )),
    }
}

fn replay_all(filter: impl Fn(&str) -> bool) -> usize {
    let mut failures = Vec::new();
    let mut count = 0;
    for (relative, check) in inputs().into_iter().filter(|(r, _)| filter(r)) {
        count += 1;
        if let Err(e) = replay_one(&relative, check) {
            let timed_out = e.contains("not finished after");
            failures.push(e);
            if timed_out {
                failures.push("(replay stopped at the first timeout)".into());
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the replayed inputs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    count
}

#[test]
fn replay() {
    for &(target, _) in gatun_fuzz::TARGETS {
        let corpus = fuzz_dir().join("corpus").join(target);
        let files = std::fs::read_dir(&corpus).map_or(0, |d| d.count());
        assert!(
            files > 0,
            "no corpus for target `{target}` in {}",
            corpus.display()
        );
    }
    let replayed = replay_all(|r| !PENDING.contains(&r));
    assert!(replayed > 0);
}

#[test]
#[ignore = "inputs of defects whose fixes are not merged yet (PENDING)"]
fn replay_pending() {
    let replayed = replay_all(|r| PENDING.contains(&r));
    assert_eq!(
        replayed,
        PENDING.len(),
        "a PENDING input is missing: {PENDING:?}"
    );
}
