//! What a run produces besides the JMH-style table: the ratios (ours beside the seeds'), the
//! JSON rows, the SVG bar chart and the `BENCHMARKS.md` document ([`markdown`]). Pure functions over `(Row, Measurement)` pairs, so a filtered
//! run simply yields fewer ratios: a ratio whose numerator or denominator row was not measured
//! is left out.

use std::fmt::Write as _;

use serde_json::{json, Value as Json};

pub mod markdown;

use crate::seeds::{seed_for, SeedFigure};
use crate::{Measurement, Row, ThreadKind};

/// One ratio definition: `group/num ÷ group/den`, for every parameter value measured.
#[derive(Debug, Clone, Copy)]
pub struct RatioDef {
    /// The family, e.g. `gatun / direct`.
    pub family: &'static str,
    /// The group both rows belong to.
    pub group: &'static str,
    /// The numerator row name.
    pub num: &'static str,
    /// The denominator row name.
    pub den: &'static str,
}

const fn r(
    family: &'static str,
    group: &'static str,
    num: &'static str,
    den: &'static str,
) -> RatioDef {
    RatioDef {
        family,
        group,
        num,
        den,
    }
}

/// The ratio families (gatun / direct, gatun / libffi, pooled / confined,
/// buffer / confined, adapted / explicit; gatun / tokio and gatun / mpsc for the round trips
/// of non-blocking calls and owner-thread callbacks) plus by_value / by_ptr, adapted / plain, and the
/// memory-image floor of a dynamic add6 (image / direct, gatun / image); the
/// task / thread family is computed separately ([`ratios`]).
#[rustfmt::skip]
pub const RATIO_DEFS: &[RatioDef] = &[
    r("gatun / direct", "call_overhead", "gatun_noop", "direct_noop"),
    r("gatun / direct", "call_overhead", "gatun_id_i32", "direct_id_i32"),
    r("gatun / direct", "call_overhead", "gatun_add6", "direct_add6"),
    r("gatun / direct", "call_overhead", "gatun_fma3", "direct_fma3"),
    r("gatun / direct", "call_overhead", "gatun_typed_noop", "direct_noop"),
    r("gatun / direct", "call_overhead", "gatun_typed_id_i32", "direct_id_i32"),
    r("gatun / direct", "call_overhead", "gatun_typed_add6", "direct_add6"),
    r("gatun / direct", "call_overhead", "gatun_typed_fma3", "direct_fma3"),
    r("image / direct", "call_overhead", "image_add6", "direct_add6"),
    r("gatun / image", "call_overhead", "gatun_add6", "image_add6"),
    r("gatun / direct", "call_overhead", "gatun_args_noop", "direct_noop"),
    r("gatun / direct", "call_overhead", "gatun_args_id_i32", "direct_id_i32"),
    r("gatun / direct", "call_overhead", "gatun_args_add6", "direct_add6"),
    r("gatun / image", "call_overhead", "gatun_args_add6", "image_add6"),
    r("gatun / direct", "downcall", "gatun_abs", "direct_abs"),
    r("gatun / direct", "downcall", "gatun_raw_abs", "direct_abs"),
    r("gatun / direct", "downcall", "gatun_fma", "direct_fma"),
    r("gatun / direct", "downcall", "gatun_ldiv", "direct_ldiv"),
    r("gatun / direct", "downcall", "gatun_typed_abs", "direct_abs"),
    r("gatun / direct", "downcall", "gatun_typed_fma", "direct_fma"),
    r("gatun / direct", "downcall", "gatun_typed_ldiv", "direct_ldiv"),
    r("gatun / direct", "upcall", "noop", "direct_noop"),
    r("gatun / direct", "upcall", "id_i32", "direct_id_i32"),
    r("gatun / direct", "upcall", "struct", "direct_struct"),
    r("gatun / direct", "upcall", "typed_noop", "direct_noop"),
    r("gatun / direct", "upcall", "typed_id_i32", "direct_id_i32"),
    r("gatun / direct", "upcall", "qsort", "direct_qsort"),
    r("gatun / direct", "upcall", "typed_qsort", "direct_qsort"),
    r("trampoline / direct", "downcall", "trampoline_abs", "direct_abs"),
    r("trampoline / direct", "downcall", "trampoline_fma", "direct_fma"),
    r("trampoline / direct", "downcall", "trampoline_ldiv", "direct_ldiv"),
    r("gatun / direct", "call_overhead_by_value", "by_ptr", "direct_by_ptr"),
    r("gatun / direct", "call_overhead_by_value", "by_value", "direct_by_value"),
    r("gatun / direct", "call_overhead_by_value", "gatun_typed_by_value", "direct_by_value"),
    r("gatun / direct", "call_overhead_by_value", "memory_by_value", "direct_memory_by_value"),
    r("gatun / direct", "call_overhead_by_value", "gatun_typed_memory_by_value", "direct_memory_by_value"),
    r("gatun / direct", "points_alloc", "circle_by_ptr", "direct_circle_by_ptr"),
    r("gatun / direct", "points_alloc", "circle_by_value", "direct_circle_by_value"),
    r("gatun / direct", "capture_state_util", "plain_sys_call_success", "direct_sys_call_success"),
    r("gatun / direct", "capture_state_util", "plain_sys_call_fail", "direct_sys_call_fail"),
    r("gatun / direct", "capture_state_util", "adapted_sys_call_success", "direct_sys_call_success"),
    r("gatun / direct", "capture_state_util", "adapted_sys_call_fail", "direct_sys_call_fail"),
    r("gatun / libffi", "call_overhead", "gatun_noop", "libffi_noop"),
    r("gatun / libffi", "call_overhead", "gatun_id_i32", "libffi_id_i32"),
    r("gatun / libffi", "call_overhead", "gatun_add6", "libffi_add6"),
    r("gatun / libffi", "call_overhead", "gatun_fma3", "libffi_fma3"),
    r("gatun / libffi", "call_overhead_by_value", "by_ptr", "libffi_by_ptr"),
    r("gatun / libffi", "call_overhead_by_value", "by_value", "libffi_by_value"),
    r("gatun / libffi", "call_overhead_by_value", "memory_by_value", "libffi_memory_by_value"),
    r("gatun / libffi", "call_overhead", "gatun_typed_noop", "libffi_noop"),
    r("gatun / libffi", "call_overhead", "gatun_typed_id_i32", "libffi_id_i32"),
    r("gatun / libffi", "call_overhead", "gatun_typed_add6", "libffi_add6"),
    r("gatun / libffi", "call_overhead", "gatun_typed_fma3", "libffi_fma3"),
    r("libffi / direct", "call_overhead", "libffi_noop", "direct_noop"),
    r("libffi / direct", "call_overhead", "libffi_id_i32", "direct_id_i32"),
    r("libffi / direct", "call_overhead", "libffi_add6", "direct_add6"),
    r("libffi / direct", "call_overhead", "libffi_fma3", "direct_fma3"),
    r("libffi / direct", "call_overhead_by_value", "libffi_by_value", "direct_by_value"),
    r("libffi / direct", "call_overhead_by_value", "libffi_memory_by_value", "direct_memory_by_value"),
    r("gatun / tokio", "nonblocking", "gatun_noop", "spawn_blocking_noop"),
    r("gatun / mpsc", "owner_thread", "gatun_callback", "mpsc_round_trip"),
    r("by_value / by_ptr", "call_overhead_by_value", "by_value", "by_ptr"),
    r("by_value / by_ptr", "call_overhead_by_value", "direct_by_value", "direct_by_ptr"),
    r("by_value / by_ptr", "points_alloc", "circle_by_value", "circle_by_ptr"),
    r("by_value / by_ptr", "points_alloc", "direct_circle_by_value", "direct_circle_by_ptr"),
    r("pooled / confined", "arena_pool", "pooled", "confined"),
    r("pooled / confined", "arena_pool", "pooled2", "confined2"),
    r("pooled / confined", "arena_pool_from", "pooled_int", "confined_int"),
    r("pooled / confined", "arena_pool_from", "pooled_string", "confined_string"),
    r("pooled / confined", "capture_state_util", "tl_allocation_success", "explicit_allocation_success"),
    r("pooled / confined", "capture_state_util", "tl_allocation_fail", "explicit_allocation_fail"),
    r("buffer / confined", "buffer_stack", "buffer", "confined"),
    r("adapted / explicit", "capture_state_util", "adapted_sys_call_success", "explicit_allocation_success"),
    r("adapted / explicit", "capture_state_util", "adapted_sys_call_fail", "explicit_allocation_fail"),
    r("adapted / plain", "capture_state_util", "adapted_sys_call_success", "plain_sys_call_success"),
    r("adapted / plain", "capture_state_util", "adapted_sys_call_fail", "plain_sys_call_fail"),
    r("adapted / explicit", "capture_state_util", "adapted_sys_call_raw_success", "explicit_allocation_success"),
    r("adapted / explicit", "capture_state_util", "adapted_sys_call_raw_fail", "explicit_allocation_fail"),
    r("adapted / explicit", "capture_state_util", "adapted_sys_call_typed_success", "explicit_allocation_success"),
    r("adapted / explicit", "capture_state_util", "adapted_sys_call_typed_fail", "explicit_allocation_fail"),
    r("gatun / direct", "capture_state_util", "adapted_sys_call_raw_success", "direct_sys_call_success"),
    r("gatun / direct", "capture_state_util", "adapted_sys_call_raw_fail", "direct_sys_call_fail"),
    r("gatun / direct", "capture_state_util", "adapted_sys_call_typed_success", "direct_sys_call_success"),
    r("gatun / direct", "capture_state_util", "adapted_sys_call_typed_fail", "direct_sys_call_fail"),
];

/// The family of the per-row task / thread ratios.
pub const TASK_THREAD: &str = "task / thread";

/// One computed ratio of medians.
#[derive(Debug, Clone)]
pub struct Ratio {
    /// The family, e.g. `gatun / direct`.
    pub family: &'static str,
    /// What is divided, e.g. `call_overhead/gatun_add6 ÷ direct_add6` or, for task / thread,
    /// the row id.
    pub label: String,
    /// The thread kind of both rows (for task / thread: [`ThreadKind::Task`]).
    pub kind: ThreadKind,
    /// Our ratio of medians.
    pub ours: f64,
    /// Our ratio of the fastest samples (less disturbed by other load on a shared machine).
    pub ours_min: f64,
    /// The seed's ratio of the same rows, if the seed tables have both.
    pub seed: Option<f64>,
    /// The seed files the seed ratio comes from.
    pub seed_source: Option<String>,
}

fn param_value(row: &Row) -> Option<&str> {
    row.param.as_ref().map(|(_, v)| v.as_str())
}

fn seed_score(fig: &SeedFigure, kind: ThreadKind) -> Option<f64> {
    match kind {
        ThreadKind::Thread => fig.thread,
        ThreadKind::Task => fig.task,
    }
}

fn source_of(a: &SeedFigure, b: &SeedFigure) -> String {
    let file = |s: &str| s.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
    if file(a.source) == file(b.source) {
        file(a.source)
    } else {
        format!("{}, {}", file(a.source), file(b.source))
    }
}

fn find<'a>(
    results: &'a [(Row, Measurement)],
    group: &str,
    name: &str,
    param: Option<&str>,
    kind: ThreadKind,
) -> Option<&'a Measurement> {
    results
        .iter()
        .find(|(r, m)| {
            r.group == group && r.name == name && param_value(r) == param && m.thread_kind == kind
        })
        .map(|(_, m)| m)
}

/// Every ratio the results allow: each [`RATIO_DEFS`] entry for each parameter value and
/// thread kind where both rows were measured, then task / thread for every row that has a seed
/// figure or whose name starts with `gatun`, `by_`, `circle_` or `adapted_`.
pub fn ratios(results: &[(Row, Measurement)]) -> Vec<Ratio> {
    let mut out = Vec::new();
    for def in RATIO_DEFS {
        for (row, m) in results {
            if row.group != def.group || row.name != def.num {
                continue;
            }
            let param = param_value(row);
            let Some(den) = find(results, def.group, def.den, param, m.thread_kind) else {
                continue;
            };
            let seed_num = seed_for(def.group, def.num, param);
            let seed_den = seed_for(def.group, def.den, param);
            let (seed, seed_source) = match (seed_num, seed_den) {
                (Some(a), Some(b)) => {
                    match (seed_score(a, m.thread_kind), seed_score(b, m.thread_kind)) {
                        (Some(x), Some(y)) => (Some(x / y), Some(source_of(a, b))),
                        _ => (None, None),
                    }
                }
                _ => (None, None),
            };
            let suffix = param.map(|p| format!("/{p}")).unwrap_or_default();
            out.push(Ratio {
                family: def.family,
                label: format!(
                    "{}/{}{} ÷ {}{}",
                    def.group, def.num, suffix, def.den, suffix
                ),
                kind: m.thread_kind,
                ours: m.median() / den.median(),
                ours_min: m.min() / den.min(),
                seed,
                seed_source,
            });
        }
    }
    for (row, m) in results {
        if m.thread_kind != ThreadKind::Task {
            continue;
        }
        let param = param_value(row);
        let fig = seed_for(row.group, row.name, param);
        let interesting = ["gatun", "by_", "circle_", "adapted_"]
            .iter()
            .any(|p| row.name.starts_with(p));
        if fig.is_none() && !interesting {
            continue;
        }
        let Some(thread) = find(results, row.group, row.name, param, ThreadKind::Thread) else {
            continue;
        };
        let seed = fig.and_then(|f| Some(f.task? / f.thread?));
        out.push(Ratio {
            family: TASK_THREAD,
            label: row.id(),
            kind: ThreadKind::Task,
            ours: m.median() / thread.median(),
            ours_min: m.min() / thread.min(),
            seed,
            seed_source: seed.and(fig).map(|f| source_of(f, f)),
        });
    }
    out
}

/// One JSON object per measured row and thread kind: `group`, `name`, `params` (an object,
/// values as strings), `thread_kind` (`thread` or `task`), `ns_per_op` {`median`, `min`, `max`,
/// `median_error`, `mean`, `mean_error`} (ns per operation; the errors are 99.9 % confidence
/// half-widths, see [`Measurement::median_error`] and [`Measurement::mean_error`]), `samples` (the JMH Cnt), `ops_per_invocation` and
/// `allocs_per_op`. Non-finite numbers (e.g. the error of a single sample) become `null`.
pub fn json_rows(results: &[(Row, Measurement)]) -> Json {
    let num = |x: f64| if x.is_finite() { json!(x) } else { Json::Null };
    Json::Array(
        results
            .iter()
            .map(|(row, m)| {
                let mut params = serde_json::Map::new();
                if let Some((k, v)) = &row.param {
                    params.insert((*k).to_string(), json!(v));
                }
                json!({
                    "group": row.group,
                    "name": row.name,
                    "params": params,
                    "thread_kind": m.thread_kind.name(),
                    "ns_per_op": {
                        "median": num(m.median()),
                        "min": num(m.min()),
                        "max": num(m.max()),
                        "median_error": num(m.median_error()),
                        "mean": num(m.mean()),
                        "mean_error": num(m.mean_error()),
                    },
                    "samples": m.ns_per_op.len(),
                    "ops_per_invocation": row.ops_per_invocation,
                    "allocs_per_op": num(m.allocs_per_op),
                })
            })
            .collect(),
    )
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A horizontal bar chart of `ratios` as standalone SVG text: ratios grouped by family under a
/// heading, one line per ratio, our bar (blue) above the seed's (orange, when the seed has
/// one), drawn from 1 on a log₁₀ axis (bars to the left of the black line at 1 mean the
/// numerator is faster). Hand-written SVG with a generic font family, so no font files are
/// needed.
pub fn svg_chart(ratios: &[Ratio], title: &str) -> String {
    const BAR: f64 = 9.0;
    const LINE: f64 = 2.0 * BAR + 6.0;
    const HEAD: f64 = 22.0;
    const LEFT: f64 = 500.0;
    const PLOT: f64 = 520.0;
    const TOP: f64 = 60.0;
    let finite = |x: f64| x.is_finite() && x > 0.0;
    let values: Vec<f64> = ratios
        .iter()
        .flat_map(|r| [Some(r.ours), r.seed])
        .flatten()
        .filter(|x| finite(*x))
        .collect();
    let lo = values
        .iter()
        .copied()
        .fold(1.0f64, f64::min)
        .log10()
        .floor()
        .min(-1.0);
    let hi = values
        .iter()
        .copied()
        .fold(1.0f64, f64::max)
        .log10()
        .ceil()
        .max(1.0);
    let x_of = |v: f64| LEFT + (v.log10() - lo) / (hi - lo) * PLOT;
    let mut families: Vec<&str> = Vec::new();
    for r in ratios {
        if !families.contains(&r.family) {
            families.push(r.family);
        }
    }
    let bottom = TOP + LINE * ratios.len() as f64 + HEAD * families.len() as f64;
    let height = bottom + 50.0;
    let width = LEFT + PLOT + 60.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="14" font-weight="bold">{}</text>"#,
        xml_escape(title)
    );
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="30" width="12" height="10" fill="#3a6fb0"/><text x="{}" y="39">gatun (this run, ratio of medians)</text><rect x="{}" y="30" width="12" height="10" fill="#e08a2c"/><text x="{}" y="39">seed (JDK, M1/M3)</text>"##,
        LEFT + 16.0,
        LEFT + 250.0,
        LEFT + 266.0
    );
    let mut e = lo as i32;
    while e <= hi as i32 {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(e);
            if v.log10() > hi + 1e-9 {
                continue;
            }
            let x = x_of(v);
            let (stroke, w) = if (v - 1.0).abs() < 1e-12 {
                ("#000", 1.2)
            } else {
                ("#ddd", 0.8)
            };
            let _ = writeln!(
                s,
                r#"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{bottom}" stroke="{stroke}" stroke-width="{w}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                bottom + 14.0,
                fmt_tick(v)
            );
        }
        e += 1;
    }
    let one = x_of(1.0);
    let mut y = TOP;
    for family in &families {
        let _ = writeln!(
            s,
            r#"<text x="10" y="{:.1}" font-weight="bold">{}</text>"#,
            y + 15.0,
            xml_escape(family)
        );
        y += HEAD;
        for r in ratios.iter().filter(|r| r.family == *family) {
            let label = format!("[{}] {}", r.kind.name(), r.label);
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 6.0,
                y + BAR + 3.0,
                xml_escape(&label)
            );
            let bars = [(Some(r.ours), "#3a6fb0"), (r.seed, "#e08a2c")];
            for (j, (v, color)) in bars.into_iter().enumerate() {
                let Some(v) = v.filter(|v| finite(*v)) else {
                    continue;
                };
                let x = x_of(v);
                let (x0, x1) = if x < one { (x, one) } else { (one, x) };
                let by = y + BAR * j as f64;
                let (tx, anchor) = if x < one {
                    (x - 3.0, "end")
                } else {
                    (x + 3.0, "start")
                };
                let _ = writeln!(
                    s,
                    r#"<rect x="{x0:.1}" y="{by:.1}" width="{:.1}" height="{:.1}" fill="{color}"/><text x="{tx:.1}" y="{:.1}" font-size="9" text-anchor="{anchor}">{v:.2}</text>"#,
                    (x1 - x0).max(0.5),
                    BAR - 1.0,
                    by + BAR - 2.0
                );
            }
            y += LINE;
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{:.1}">ratio of medians (log scale; 1 = equal; left of 1 = numerator faster)</text>"#,
        bottom + 32.0
    );
    s.push_str("</svg>\n");
    s
}

fn fmt_tick(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests;
