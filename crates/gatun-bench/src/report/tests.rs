use super::*;
use crate::{Body, Row};

fn row(group: &'static str, name: &'static str, param: Option<&str>) -> Row {
    let r = Row::new(group, name, || -> Body { Box::new(|_| {}) });
    match param {
        Some(p) => r.with_param("ELEM_SIZE", p),
        None => r,
    }
}

fn m(kind: ThreadKind, ns: &[f64], allocs: f64) -> Measurement {
    let mut v = ns.to_vec();
    v.sort_by(f64::total_cmp);
    Measurement {
        ns_per_op: v,
        allocs_per_op: allocs,
        thread_kind: kind,
    }
}

fn sample_results() -> Vec<(Row, Measurement)> {
    use ThreadKind::*;
    vec![
        (
            row("buffer_stack", "buffer", Some("8")),
            m(Thread, &[2.0, 2.0, 2.0], 0.0),
        ),
        (
            row("buffer_stack", "confined", Some("8")),
            m(Thread, &[20.0, 20.0, 20.0], 2.0),
        ),
        (
            row("buffer_stack", "buffer", Some("8")),
            m(Task, &[3.0, 3.0, 3.0], 0.0),
        ),
        // No task row for confined: that ratio must be left out, not NaN.
        (
            row("call_overhead", "direct_add6", None),
            m(Thread, &[1.0, 1.0, 1.0], 0.0),
        ),
        (
            row("call_overhead", "libffi_add6", None),
            m(Thread, &[9.0, 9.0, 9.0], 0.0),
        ),
    ]
}

#[test]
fn ratios_pair_rows_by_param_and_kind_and_skip_missing() {
    let rs = ratios(&sample_results());
    let buf: Vec<_> = rs
        .iter()
        .filter(|r| r.family == "buffer / confined")
        .collect();
    assert_eq!(buf.len(), 1, "{rs:?}");
    assert_eq!(buf[0].kind, ThreadKind::Thread);
    assert!((buf[0].ours - 0.1).abs() < 1e-12);
    let seed = buf[0]
        .seed
        .expect("seed 004 has buffer/confined at ELEM_SIZE=8");
    assert!((seed - 4.693 / 22.548).abs() < 1e-12);
    assert_eq!(buf[0].seed_source.as_deref(), Some("seed 004"));
    assert_eq!(buf[0].label, "buffer_stack/buffer/8 ÷ confined/8");

    let ffi: Vec<_> = rs
        .iter()
        .filter(|r| r.family == "libffi / direct")
        .collect();
    assert_eq!(ffi.len(), 1);
    assert!((ffi[0].ours - 9.0).abs() < 1e-12);
    assert!(ffi[0].seed.is_none());
    // gatun rows were not measured: no gatun ratios at all.
    assert!(rs.iter().all(|r| !r.family.starts_with("gatun")));

    let tt: Vec<_> = rs.iter().filter(|r| r.family == TASK_THREAD).collect();
    assert_eq!(tt.len(), 1);
    assert!((tt[0].ours - 1.5).abs() < 1e-12);
    assert!((tt[0].seed.unwrap() - 12.653 / 4.693).abs() < 1e-12);
}

#[test]
fn every_seed_figure_names_a_ratio_row_and_is_positive() {
    for s in crate::seeds::SEEDS {
        assert!(s.thread.is_some_and(|x| x > 0.0), "{s:?}");
        assert!(s.source.starts_with("seed 00"), "{s:?}");
        let used = RATIO_DEFS
            .iter()
            .any(|d| d.group == s.group && (d.num == s.name || d.den == s.name));
        assert!(used, "seed row {}/{} is in no ratio", s.group, s.name);
    }
}

#[test]
fn json_has_the_documented_shape() {
    let j = json_rows(&sample_results());
    let arr = j.as_array().unwrap();
    assert_eq!(arr.len(), 5);
    let first = &arr[0];
    assert_eq!(first["group"], "buffer_stack");
    assert_eq!(first["name"], "buffer");
    assert_eq!(first["params"]["ELEM_SIZE"], "8");
    assert_eq!(first["thread_kind"], "thread");
    for k in ["median", "min", "max"] {
        assert_eq!(first["ns_per_op"][k], 2.0);
    }
    assert_eq!(first["allocs_per_op"], 0.0);
    assert!(arr[3]["params"].as_object().unwrap().is_empty());
}

#[test]
fn svg_is_one_document_with_a_bar_per_value() {
    let rs = ratios(&sample_results());
    let s = svg_chart(&rs, "t < u");
    assert!(s.starts_with("<svg ") && s.trim_end().ends_with("</svg>"));
    assert!(s.contains("t &lt; u"));
    let bars = rs
        .iter()
        .map(|r| 1 + r.seed.is_some() as usize)
        .sum::<usize>();
    // background + 2 legend swatches + bars
    assert_eq!(s.matches("<rect").count(), 3 + bars);
}

#[test]
fn errors_of_mean_and_median() {
    let x = m(ThreadKind::Thread, &[1.0, 2.0, 3.0], 0.0);
    assert_eq!(x.mean(), 2.0);
    // s = 1, n = 3, t(0.9995, 2) = 31.599
    assert!((x.mean_error() - 31.599 / 3f64.sqrt()).abs() < 1e-9);
    assert!(m(ThreadKind::Thread, &[1.0], 0.0).mean_error().is_nan());
    // Few samples: the interval of the median spans them all.
    assert_eq!(x.median_error(), 1.0);
    // Many samples with a few preempted outliers: the median's error ignores them.
    let mut v = vec![10.0; 95];
    v.extend([1000.0; 5]);
    let y = m(ThreadKind::Thread, &v, 0.0);
    assert_eq!(y.median(), 10.0);
    assert_eq!(y.median_error(), 0.0);
    assert!(y.mean_error() > 10.0);
}

#[test]
fn instruction_counts_parse_with_absent_figures_and_report_bad_lines() {
    use markdown::{parse_instruction_counts, InstructionRow};
    // No header: the columns of the four-field file, ROW BUDGET X86_64 AARCH64.
    let old = parse_instruction_counts("# c\nupcall/noop 30 29.5 -  # x\n\na/b - - 41\n").unwrap();
    assert_eq!(old.qemu, ["AARCH64"]);
    assert_eq!(
        old.rows,
        [
            InstructionRow {
                row: "upcall/noop".into(),
                budget: Some(30.0),
                x86_64: Some(29.5),
                qemu: vec![None],
            },
            InstructionRow {
                row: "a/b".into(),
                budget: None,
                x86_64: None,
                qemu: vec![Some(41.0)],
            },
        ]
    );
    assert!(parse_instruction_counts("a 1 2")
        .unwrap_err()
        .contains("line 1"));
    assert!(parse_instruction_counts("\na 1 x 2")
        .unwrap_err()
        .contains("line 2"));
    // The old header, with its trailing prose, names the same four columns.
    let headed = parse_instruction_counts(
        "# ROW BUDGET X86_64 AARCH64 (instructions per call; - = not counted)\na/b 1 2 3\n",
    )
    .unwrap();
    assert_eq!(headed.qemu, ["AARCH64"]);
    assert_eq!(headed.rows[0].qemu, [Some(3.0)]);

    // A header names one column per qemu target; every row must have them all.
    let text = "# ROW BUDGET X86_64 AARCH64 RISCV64 (instructions per call)\n\
                upcall/noop 30 29.5 76 -\n\
                a/b - - 41 37\n";
    let counts = parse_instruction_counts(text).unwrap();
    assert_eq!(counts.qemu, ["AARCH64", "RISCV64"]);
    assert_eq!(counts.rows[0].qemu, [Some(76.0), None]);
    assert_eq!(counts.rows[1].qemu, [Some(41.0), Some(37.0)]);
    let short =
        parse_instruction_counts("# ROW BUDGET X86_64 AARCH64 RISCV64\na/b 1 2 3\n").unwrap_err();
    assert!(
        short.contains("line 2") && short.contains("RISCV64"),
        "{short}"
    );
    // No qemu column at all.
    let x86_only = parse_instruction_counts("# ROW BUDGET X86_64\na/b 1 2\n").unwrap();
    assert!(x86_only.qemu.is_empty());
    assert_eq!(x86_only.rows[0].x86_64, Some(2.0));
    // Malformed or misplaced headers.
    assert!(parse_instruction_counts("# ROW X86_64 AARCH64\n")
        .unwrap_err()
        .contains("line 1"));
    assert!(
        parse_instruction_counts("a/b 1 2 3\n# ROW BUDGET X86_64 AARCH64\n")
            .unwrap_err()
            .contains("line 2")
    );
}

#[test]
fn utc_minutes_is_the_civil_date() {
    use std::time::{Duration, SystemTime};
    let at = |s: u64| markdown::utc_minutes(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
    assert_eq!(at(0), "1970-01-01 00:00");
    // 2000-02-29 12:34 UTC (a leap day in a year divisible by 400).
    assert_eq!(at(951_827_640), "2000-02-29 12:34");
    // 2026-12-04 18:30 UTC.
    assert_eq!(at(1_796_409_000), "2026-12-04 18:30");
}

#[test]
fn markdown_states_the_machine_and_the_load_and_lists_every_row() {
    use markdown::{render, Document, InstructionCounts, InstructionRow, Machine};
    let results = sample_results();
    let rs = ratios(&results);
    let machine = Machine {
        cpu: "Test CPU".into(),
        cores: 2,
        os: "TestOS".into(),
        rustc: "rustc 1.0.0".into(),
        date: "2026-12-04 18:30".into(),
        nice: Some(10),
    };
    // AArch64 named but not counted; RISC-V 64 counted.
    let instructions = InstructionCounts {
        qemu: vec!["AARCH64".into(), "RISCV64".into()],
        rows: vec![
            InstructionRow {
                row: "upcall/noop".into(),
                budget: Some(30.0),
                x86_64: Some(29.5),
                qemu: vec![None, Some(61.0)],
            },
            InstructionRow {
                row: "upcall/direct_noop".into(),
                budget: None,
                x86_64: Some(5.0),
                qemu: vec![None, None],
            },
        ],
    };
    let doc = Document {
        machine: &machine,
        mode: "quick",
        settings: "test",
        wall: std::time::Duration::from_secs(40),
        others_busy_cores: Some(1.5),
        load_average: Some(6.0),
        results: &results,
        ratios: &rs,
        instructions: &instructions,
    };
    let text = render(&doc);
    for needle in [
        "| CPU | Test CPU |",
        "| cores available | 2 |",
        "rustc 1.0.0",
        "2026-12-04 18:30 UTC",
        "| niceness | 10 |",
        "1.50 of the 2 cores",
        "a loaded, shared machine",
        "| row | budget (x86-64) | x86-64 | RISC-V 64 |\n|---|---:|---:|---:|\n",
        "| `upcall/noop` | 30 | 29.5 | 61 |",
        "| `upcall/direct_noop` | – | 5 | – |",
        "AArch64 not counted in this run: `benchmarks-md --qemu aarch64`",
        "`crates/gatun-bench/scripts/qemu-instructions` under qemu-user on AArch64 and RISC-V 64 \
         (N = 1,000;",
        "`buffer_stack/buffer/8 ÷ confined/8`",
        "| `call_overhead/libffi_add6` | thread | 9.000 |",
        "median",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    // Both targets counted: a column each, in the file's order, and no "not counted" note.
    let mut both = instructions.clone();
    both.rows[0].qemu[0] = Some(76.0);
    let both = render(&Document {
        instructions: &both,
        ..doc
    });
    for needle in [
        "| row | budget (x86-64) | x86-64 | AArch64 | RISC-V 64 |\n|---|---:|---:|---:|---:|\n",
        "| `upcall/noop` | 30 | 29.5 | 76 | 61 |",
        "| `upcall/direct_noop` | – | 5 | – | – |",
    ] {
        assert!(both.contains(needle), "{needle:?} missing from:\n{both}");
    }
    assert!(!both.contains("not counted in this run"), "{both}");
    let idle = render(&Document {
        others_busy_cores: Some(0.05),
        ..doc
    });
    assert!(idle.contains("otherwise close to idle"), "{idle}");
}
