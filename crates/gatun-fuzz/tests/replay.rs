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

fn replay_all() -> usize {
    let mut failures = Vec::new();
    let mut count = 0;
    for (relative, check) in inputs() {
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
    let replayed = replay_all();
    assert!(replayed > 0);
}
