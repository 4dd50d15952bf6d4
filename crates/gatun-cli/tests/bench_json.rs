//! `gatun bench --tiny --filter … --json FILE`: the JSON rows have the documented shape (not the
//! timings, which mean nothing with tiny iteration counts).
#![cfg(not(miri))]

/// The built `gatun` binary (through the cross runner on a cross build).
fn gatun() -> std::process::Command {
    gatun_test_natives::target_command(env!("CARGO_BIN_EXE_gatun"))
}

use serde_json::Value;

fn run_bench(filter: &str, name: &str) -> (Vec<Value>, String) {
    let dir = std::env::temp_dir().join(format!("gatun-bench-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("rows.json");
    let svg = dir.join("ratios.svg");
    let out = gatun()
        .args(["bench", "--tiny", "--filter", filter, "--json"])
        .arg(&json)
        .arg("--svg")
        .arg(&svg)
        .output()
        .expect("run gatun bench");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "gatun bench failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.starts_with("<svg ") && svg_text.trim_end().ends_with("</svg>"));
    std::fs::remove_dir_all(&dir).ok();
    (rows, stdout)
}

fn check_shape(rows: &[Value], group_prefix: &str) {
    assert!(!rows.is_empty());
    for row in rows {
        assert!(
            row["group"]
                .as_str()
                .is_some_and(|g| g.starts_with(group_prefix)),
            "{row}"
        );
        assert!(row["name"].as_str().is_some_and(|n| !n.is_empty()), "{row}");
        assert!(row["params"].is_object(), "{row}");
        for v in row["params"].as_object().unwrap().values() {
            assert!(v.is_string(), "{row}");
        }
        assert!(
            matches!(row["thread_kind"].as_str(), Some("thread" | "task")),
            "{row}"
        );
        let ns = &row["ns_per_op"];
        let (min, median, max) = (
            ns["min"].as_f64().unwrap(),
            ns["median"].as_f64().unwrap(),
            ns["max"].as_f64().unwrap(),
        );
        assert!(min > 0.0 && min <= median && median <= max, "{row}");
        assert!(
            row["allocs_per_op"].as_f64().is_some_and(|a| a >= 0.0),
            "{row}"
        );
    }
    // Every row comes as a thread and a task variant.
    let kinds = |k: &str| rows.iter().filter(|r| r["thread_kind"] == k).count();
    assert_eq!(kinds("thread"), kinds("task"));
}

#[test]
fn buffer_stack_json_rows_have_the_documented_shape() {
    // The buffer_stack group is written on another branch; fall back to the arena group (the
    // same kind of rows) while it is not registered.
    let has_buffer_stack = gatun_bench::rows()
        .iter()
        .any(|r| r.group == "buffer_stack");
    let group = if has_buffer_stack {
        "buffer_stack"
    } else {
        "arena"
    };
    let (rows, stdout) = run_bench(group, group);
    check_shape(&rows, group);
    assert!(
        stdout.contains("Benchmark") && stdout.contains("allocs/op"),
        "{stdout}"
    );
    if has_buffer_stack {
        let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
        assert!(
            names.contains(&"buffer") && names.contains(&"confined"),
            "{names:?}"
        );
        for size in ["8", "16", "32"] {
            assert!(
                rows.iter().any(|r| r["params"]["ELEM_SIZE"] == size),
                "ELEM_SIZE {size}"
            );
        }
        assert!(stdout.contains("buffer / confined"), "{stdout}");
    }
}

// The call rows call through gatun's downcall handles: only where gatun executes calls.
#[cfg(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "s390x",
        all(target_arch = "powerpc64", target_endian = "little")
    )
))]
#[test]
fn call_rows_and_ratios_appear_and_calls_do_not_allocate() {
    let (rows, stdout) = run_bench("call_overhead", "call_overhead");
    check_shape(&rows, "call_overhead");
    // The libffi peer rows exist where gatun-bench links libffi: x86-64 and AArch64 (the other
    // targets' qemu sysroots have no libffi).
    let libffi = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
    for name in [
        "gatun_add6",
        "direct_noop",
        "direct_add6",
        "libffi_id_i32",
        "libffi_fma3",
        "by_value",
        "direct_by_value",
    ] {
        let expected = libffi || !name.starts_with("libffi");
        assert_eq!(rows.iter().any(|r| r["name"] == name), expected, "{name}");
    }
    // Handle, direct and libffi calls never allocate (by_value returns into a reused point).
    for r in &rows {
        assert_eq!(r["allocs_per_op"].as_f64(), Some(0.0), "{r}");
    }
    for family in [
        "gatun / direct",
        "gatun / libffi",
        "libffi / direct",
        "by_value / by_ptr",
    ] {
        let expected = libffi || !family.contains("libffi");
        assert_eq!(stdout.contains(family), expected, "{family}: {stdout}");
    }
}

// The capture rows call through gatun's downcall handles: only where gatun executes calls.
#[cfg(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "s390x",
        all(target_arch = "powerpc64", target_endian = "little")
    )
))]
#[test]
fn capture_rows_allocate_only_for_the_explicit_arena() {
    let (rows, _) = run_bench("capture_state_util", "capture_state_util");
    check_shape(&rows, "capture_state_util");
    for r in &rows {
        let name = r["name"].as_str().unwrap();
        let allocs = r["allocs_per_op"].as_f64().unwrap();
        if name.starts_with("explicit_allocation") {
            assert!(allocs >= 1.0, "{r}");
        } else {
            assert_eq!(allocs, 0.0, "{r}");
        }
    }
}

#[test]
fn an_unmatched_filter_is_an_error() {
    let out = gatun()
        .args(["bench", "--tiny", "--filter", "no-such-row"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no benchmark row matches"));
}

#[test]
fn list_prints_row_ids_without_measuring() {
    let out = gatun()
        .args(["bench", "--list", "--filter", "call_overhead/direct_"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let ids: Vec<&str> = text.lines().collect();
    assert_eq!(
        ids,
        [
            "call_overhead/direct_noop",
            "call_overhead/direct_id_i32",
            "call_overhead/direct_add6",
            "call_overhead/direct_fma3"
        ]
    );
}
