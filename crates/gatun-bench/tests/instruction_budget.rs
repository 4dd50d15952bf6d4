//! The instruction-count regression guard: every row in `instruction-budget.toml` is run under
//! callgrind (`examples/percall.rs`, built in release mode by this test) for `N` and `2N`
//! iterations; `(count(2N) - count(N)) / N` is its cost per call, which must not exceed the
//! row's budget by more than 5 %. Instruction counts are deterministic, so this is a count, not
//! a timing. Without valgrind on the `PATH` the test prints why and passes without checking.
// callgrind counts x86-64 instructions; the budget is for x86-64 Linux.
#![cfg(all(target_os = "linux", target_arch = "x86_64", not(miri)))]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Iterations of the shorter run; the longer one runs twice as many.
const N: u64 = 10_000;

/// Allowed growth over the budget, in percent.
const TOLERANCE_PERCENT: f64 = 5.0;

/// `(row id, instructions per call)` pairs of the budget file, in file order.
fn parse_budget(text: &str) -> Result<Vec<(String, f64)>, String> {
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| format!("line {}: expected `\"row\" = count`, got {raw:?}", i + 1))?;
        let key = key.trim();
        let id = key
            .strip_prefix('"')
            .and_then(|k| k.strip_suffix('"'))
            .ok_or_else(|| format!("line {}: row id {key:?} is not quoted", i + 1))?;
        let count: f64 = value
            .trim()
            .parse()
            .map_err(|e| format!("line {}: count {:?}: {e}", i + 1, value.trim()))?;
        rows.push((id.to_string(), count));
    }
    Ok(rows)
}

#[test]
fn budget_file_parses() {
    let rows = parse_budget("# c\n\"a/b\" = 12 # x\n\n\"c/d/4\" = 7.5\n").unwrap();
    assert_eq!(
        rows,
        [("a/b".to_string(), 12.0), ("c/d/4".to_string(), 7.5)]
    );
    assert!(parse_budget("a/b = 1").unwrap_err().contains("not quoted"));
    assert!(parse_budget("\"a\" = x")
        .unwrap_err()
        .contains("count \"x\""));
    assert!(parse_budget("\"a\"").unwrap_err().contains("line 1"));
}

/// Builds `examples/percall.rs` in release mode and returns the executable's path.
fn build_percall() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "--release",
            "-p",
            "gatun-bench",
            "--example",
            "percall",
            "--message-format=json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "cargo build --release --example percall failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "percall")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo reported no percall executable")
}

/// Instructions callgrind collects over `percall ROW ITERS`.
fn collected(percall: &Path, row: &str, iters: u64) -> u64 {
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(percall)
        .args([row, &iters.to_string()])
        .output()
        .expect("run valgrind");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "percall {row} {iters} failed:\n{stderr}"
    );
    stderr
        .lines()
        .find_map(|l| l.split_once("Collected : ").map(|(_, n)| n.trim()))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `Collected` line from callgrind:\n{stderr}"))
}

#[test]
fn instruction_counts_within_budget() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!("instruction budget NOT checked: valgrind is not installed");
        return;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("instruction-budget.toml");
    let text = std::fs::read_to_string(&path).expect("read instruction-budget.toml");
    let budget = parse_budget(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let percall = build_percall();
    let mut failed = Vec::new();
    println!(
        "{:<46} {:>8} {:>9} {:>8}",
        "row", "budget", "measured", "change"
    );
    for (row, limit) in &budget {
        let a = collected(&percall, row, N);
        let b = collected(&percall, row, 2 * N);
        let per_call = b.saturating_sub(a) as f64 / N as f64;
        let change = (per_call / limit - 1.0) * 100.0;
        let over = change > TOLERANCE_PERCENT;
        println!(
            "{row:<46} {limit:>8.1} {per_call:>9.1} {change:>+7.1}%{}",
            if over { "  OVER" } else { "" }
        );
        if over {
            failed.push(row.as_str());
        }
    }
    assert!(
        failed.is_empty(),
        "instructions per call over budget by more than {TOLERANCE_PERCENT} %: {failed:?}"
    );
}
