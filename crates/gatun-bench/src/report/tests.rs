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
