//! `BENCHMARKS.md`: one run's timings, ratios and instruction counts as a Markdown document that
//! states the machine it was measured on. `gatun bench --markdown FILE` writes it;
//! `crates/gatun-bench/scripts/benchmarks-md` is the one command that counts the instructions,
//! runs the suite and writes the file.
//!
//! The machine facts come from Linux's `/proc` (CPU model, other processes' CPU use during the
//! run, niceness) and `/etc/os-release`; elsewhere they read "unknown". Nothing here measures:
//! the renderer is a pure function of what it is given.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use super::Ratio;
use crate::{Measurement, Row};

/// Where and how a run was made, as the document states it.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    /// The CPU model (`model name` of `/proc/cpuinfo`).
    pub cpu: String,
    /// Cores available to the process (`std::thread::available_parallelism`).
    pub cores: usize,
    /// Distribution, kernel and architecture, e.g. `Debian GNU/Linux 12 (bookworm), Linux
    /// 6.1.0, x86_64`.
    pub os: String,
    /// `rustc -V` of the toolchain on the `PATH` when the run was made.
    pub rustc: String,
    /// When the measurements started, UTC, `YYYY-MM-DD HH:MM`.
    pub date: String,
    /// The process's niceness (`nice -n 10` gives 10), if known.
    pub nice: Option<i32>,
}

impl Machine {
    /// Reads the facts of the machine this process runs on.
    pub fn probe() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let distro = std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                    .map(|v| v.trim_matches('"').to_string())
            })
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|k| format!("Linux {}, ", k.trim()))
            .unwrap_or_default();
        let rustc = std::process::Command::new("rustc")
            .arg("-V")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let nice = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|s| stat_field(&s, 19)?.parse().ok());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: format!("{distro}, {kernel}{}", std::env::consts::ARCH),
            rustc,
            date: utc_minutes(SystemTime::now()),
            nice,
        }
    }
}

/// Field `n` (1-based, as in proc(5)) of a `/proc/<pid>/stat` line; the command name in
/// parentheses may contain spaces, so fields are counted after its closing parenthesis.
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n.checked_sub(3)?)
}

/// `YYYY-MM-DD HH:MM` (UTC) of `t`.
pub fn utc_minutes(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (the proleptic Gregorian algorithm of
    // H. Hinnant's `civil_from_days`).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// CPU time of the whole machine and of this process, in clock ticks, at one instant; two
/// samples give the share of the cores other processes kept busy in between
/// ([`CpuSample::others_busy_cores`]).
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    busy: u64,
    total: u64,
    own: u64,
}

impl CpuSample {
    /// Reads `/proc/stat` and `/proc/self/stat`; `None` where they do not exist.
    pub fn now() -> Option<CpuSample> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .strip_prefix("cpu ")?
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal ...
        let field = |i: usize| cpu.get(i).copied().unwrap_or(0);
        let idle = field(3) + field(4);
        let busy = field(0) + field(1) + field(2) + field(5) + field(6) + field(7);
        let own_stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let own = stat_field(&own_stat, 14)?.parse::<u64>().ok()?
            + stat_field(&own_stat, 15)?.parse::<u64>().ok()?;
        Some(CpuSample {
            busy,
            total: busy + idle,
            own,
        })
    }

    /// How many of `cores` cores other processes kept busy on average between `self` and
    /// `later` (this process's own CPU time subtracted); `None` if no time passed.
    pub fn others_busy_cores(&self, later: &CpuSample, cores: usize) -> Option<f64> {
        let total = later.total.checked_sub(self.total)?;
        if total == 0 {
            return None;
        }
        let busy = later.busy.saturating_sub(self.busy) as f64;
        let own = later.own.saturating_sub(self.own) as f64;
        Some(((busy - own).max(0.0) / total as f64 * cores as f64).max(0.0))
    }
}

/// The instruction-count file: which targets were counted under qemu-user, and one line per row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InstructionCounts {
    /// The targets counted under qemu-user, in column order, as the file's header names them
    /// (`AARCH64`, `RISCV64`).
    pub qemu: Vec<String>,
    /// The rows, in the file's order.
    pub rows: Vec<InstructionRow>,
}

impl InstructionCounts {
    /// Whether the file held no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// One line of the instruction-count file: a row id, its budget (from
/// `instruction-budget.toml`, if it has one), its instructions per call on x86-64 (callgrind)
/// and on each target counted under qemu-user, each `None` where not counted.
#[derive(Debug, Clone, PartialEq)]
pub struct InstructionRow {
    /// The row id, `group/name[/param]`.
    pub row: String,
    /// The row's x86-64 budget, if it is guarded.
    pub budget: Option<f64>,
    /// x86-64 instructions per call.
    pub x86_64: Option<f64>,
    /// Instructions per call under qemu-user, one per [`InstructionCounts::qemu`] target.
    pub qemu: Vec<Option<f64>>,
}

/// The heading of a qemu-user column: `AArch64` for `AARCH64`, `RISC-V 64` for `RISCV64`,
/// `s390x` for `S390X`, `PPC64LE` for `PPC64LE`, any other name as the file spells it.
pub fn target_heading(column: &str) -> &str {
    match column {
        "AARCH64" => "AArch64",
        "RISCV64" => "RISC-V 64",
        "S390X" => "s390x",
        other => other,
    }
}

/// Parses the instruction-count file `benchmarks-md` writes: a header comment naming the
/// columns, `# ROW BUDGET X86_64 AARCH64 RISCV64 (...)` (the upper-case words after `#`; one
/// column per target counted under qemu-user after `X86_64`), then one line per row with a
/// field per column, `-` for a figure that is absent, `#` starting a comment. A file without
/// that header has the columns `ROW BUDGET X86_64 AARCH64`.
///
/// # Errors
/// A header that does not start with `ROW BUDGET X86_64` or comes after a row, a line whose
/// fields do not match the columns, or a figure that is neither `-` nor a number, with its line
/// number.
pub fn parse_instruction_counts(text: &str) -> Result<InstructionCounts, String> {
    let mut qemu: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let (data, comment) = raw.split_once('#').unwrap_or((raw, ""));
        let line = data.trim();
        if line.is_empty() {
            let columns: Vec<&str> = comment
                .split_whitespace()
                .take_while(|w| {
                    w.bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                })
                .collect();
            if columns.first() == Some(&"ROW") {
                let ["ROW", "BUDGET", "X86_64", targets @ ..] = &columns[..] else {
                    return Err(format!(
                        "line {}: a header starts `# ROW BUDGET X86_64`, got {raw:?}",
                        i + 1
                    ));
                };
                if !rows.is_empty() {
                    return Err(format!("line {}: header after the first row", i + 1));
                }
                qemu = Some(targets.iter().map(|t| t.to_string()).collect());
            }
            continue;
        }
        let qemu = qemu.get_or_insert_with(|| vec!["AARCH64".into()]);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (row, budget, x86, counted) = match &fields[..] {
            [row, budget, x86, counted @ ..] if counted.len() == qemu.len() => {
                (row, budget, x86, counted)
            }
            _ => {
                return Err(format!(
                    "line {}: expected `ROW BUDGET X86_64{}`, got {raw:?}",
                    i + 1,
                    qemu.iter().map(|t| format!(" {t}")).collect::<String>()
                ))
            }
        };
        let num = |s: &str| -> Result<Option<f64>, String> {
            if s == "-" {
                Ok(None)
            } else {
                s.parse()
                    .map(Some)
                    .map_err(|e| format!("line {}: {s:?}: {e}", i + 1))
            }
        };
        rows.push(InstructionRow {
            row: row.to_string(),
            budget: num(budget)?,
            x86_64: num(x86)?,
            qemu: counted.iter().map(|s| num(s)).collect::<Result<_, _>>()?,
        });
    }
    Ok(InstructionCounts {
        qemu: qemu.unwrap_or_default(),
        rows,
    })
}

/// Everything the document is made of.
pub struct Document<'a> {
    /// The machine and the start of the run.
    pub machine: &'a Machine,
    /// `quick` or `full`.
    pub mode: &'a str,
    /// One line describing the per-measurement settings (warm-up, samples).
    pub settings: &'a str,
    /// Wall time of the measurements.
    pub wall: Duration,
    /// Cores other processes kept busy on average during the measurements, if known.
    pub others_busy_cores: Option<f64>,
    /// The one-minute load average at the end of the run, if known.
    pub load_average: Option<f64>,
    /// The measured rows.
    pub results: &'a [(Row, Measurement)],
    /// Their ratios ([`super::ratios`]).
    pub ratios: &'a [Ratio],
    /// Instruction counts, if any were given.
    pub instructions: &'a InstructionCounts,
}

/// The `N` of `scripts/qemu-instructions` as `benchmarks-md` runs it.
const QEMU_N: &str = "1,000";

fn num(x: f64, prec: usize) -> String {
    if x.is_finite() {
        format!("{x:.prec$}")
    } else {
        "–".into()
    }
}

fn opt(x: Option<f64>, prec: usize) -> String {
    match x {
        Some(x) if x.fract() == 0.0 => num(x, 0),
        Some(x) => num(x, prec),
        None => "–".into(),
    }
}

/// Renders the document.
pub fn render(doc: &Document<'_>) -> String {
    let m = doc.machine;
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "# gatun benchmarks\n");
    let _ = writeln!(
        w,
        "Generated by `crates/gatun-bench/scripts/benchmarks-md` ({} mode); do not edit by \
         hand. Regenerate with that script (`--full` for JMH-like iterations, `--qemu \
         aarch64,riscv64,s390x,ppc64le` to add those targets' instruction counts under \
         qemu-user); \
         it writes the raw rows as JSON to `target/benchmarks/bench.json`.\n",
        doc.mode
    );
    let _ = writeln!(w, "## Machine and run\n");
    let _ = writeln!(w, "| | |\n|---|---|");
    let _ = writeln!(w, "| CPU | {} |", m.cpu);
    let _ = writeln!(w, "| cores available | {} |", m.cores);
    let _ = writeln!(w, "| OS | {} |", m.os);
    let _ = writeln!(w, "| compiler | `{}`, release profile |", m.rustc);
    let _ = writeln!(w, "| date | {} UTC |", m.date);
    let _ = writeln!(
        w,
        "| mode | {} ({}); {} measurements in {:.0} s |",
        doc.mode,
        doc.settings,
        doc.results.len(),
        doc.wall.as_secs_f64()
    );
    if let Some(n) = m.nice {
        let _ = writeln!(w, "| niceness | {n} |");
    }
    let load = match (doc.others_busy_cores, doc.load_average) {
        (Some(o), la) => {
            let shared = if o >= 0.25 {
                "**a loaded, shared machine**: other processes competed for the cores while \
                 these figures were taken, so single timings are noisier than on an idle machine"
            } else {
                "the machine was otherwise close to idle"
            };
            let la = la.map_or_else(String::new, |l| {
                format!(" (one-minute load average {l:.2} at the end)")
            });
            format!(
                "other processes kept {o:.2} of the {} cores busy on average during the \
                 measurements{la}: {shared}",
                m.cores
            )
        }
        (None, Some(l)) => format!("one-minute load average {l:.2} at the end of the run"),
        (None, None) => "unknown".into(),
    };
    let _ = writeln!(w, "| other load | {load} |\n");

    let _ = writeln!(w, "## How to read these figures\n");
    let _ = writeln!(
        w,
        "- **Timings** are nanoseconds per operation: the median of one row's samples in this \
         run, with the 99.9 % confidence half-width of that median (order statistics). A row \
         runs on an OS thread (`thread`) and inside a tokio task (`task`). Absolute figures \
         depend on the machine, its load and code placement; compare rows of the same run."
    );
    let _ = writeln!(
        w,
        "- **Ratios** divide the medians (and, in brackets, the fastest samples) of two rows \
         of this run. The seed column is the same ratio from the JDK figures published with \
         the OpenJDK changes these benchmarks reproduce (measured by the JDK authors on Apple \
         M1/M3): compare ratios, not nanoseconds."
    );
    let qemu = &doc.instructions.qemu;
    let qemu_clause = if qemu.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = qemu.iter().map(|t| target_heading(t)).collect();
        let names = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.join(""),
        };
        format!(
            " and by `crates/gatun-bench/scripts/qemu-instructions` under qemu-user on {names} \
             (N = {QEMU_N}; – where the target's `percall` does not build the row: the \
             `libffi_*` references need a libffi for the target)"
        )
    };
    let _ = writeln!(
        w,
        "- **Instructions per call** are deterministic: `(count(2N) - count(N)) / N` over \
         `crates/gatun-bench/examples/percall.rs` for N = 10,000, counted by callgrind on \
         x86-64{qemu_clause}. The budget column is \
         `crates/gatun-bench/instruction-budget.toml`, which `cargo test -p gatun-bench --test \
         instruction_budget` enforces (5 % tolerance). Rows named `direct_*`, `image_*`, \
         `libffi_*` or `confined*` are references, not gatun paths.\n"
    );

    let _ = writeln!(w, "## Instructions per call\n");
    if doc.instructions.is_empty() {
        let _ = writeln!(
            w,
            "Not counted in this run (`benchmarks-md` counts them when valgrind is installed).\n"
        );
    } else {
        // One column per qemu target with at least one figure.
        let counted: Vec<usize> = (0..qemu.len())
            .filter(|&t| doc.instructions.rows.iter().any(|r| r.qemu[t].is_some()))
            .collect();
        let _ = write!(w, "| row | budget (x86-64) | x86-64 |");
        for &t in &counted {
            let _ = write!(w, " {} |", target_heading(&qemu[t]));
        }
        let _ = writeln!(w, "\n|---|---:|---:|{}", "---:|".repeat(counted.len()));
        for r in &doc.instructions.rows {
            let _ = write!(
                w,
                "| `{}` | {} | {} |",
                r.row,
                opt(r.budget, 0),
                opt(r.x86_64, 1)
            );
            for &t in &counted {
                let _ = write!(w, " {} |", opt(r.qemu[t], 0));
            }
            let _ = writeln!(w);
        }
        let missing: Vec<&String> = (0..qemu.len())
            .filter(|t| !counted.contains(t))
            .map(|t| &qemu[t])
            .collect();
        if !missing.is_empty() {
            let headings: Vec<&str> = missing.iter().map(|t| target_heading(t)).collect();
            let args: Vec<String> = missing.iter().map(|t| t.to_ascii_lowercase()).collect();
            let _ = writeln!(
                w,
                "\n{} not counted in this run: `benchmarks-md --qemu {}` adds the column (it \
                 builds `percall` for the target and needs the cross toolchains and qemu-user \
                 that `.ci/run` installs).",
                headings.join(", "),
                args.join(",")
            );
        }
        let _ = writeln!(w);
    }

    let _ = writeln!(w, "## Ratios\n");
    if doc.ratios.is_empty() {
        let _ = writeln!(
            w,
            "None: the rows each ratio needs were not all measured.\n"
        );
    } else {
        let _ = writeln!(
            w,
            "| family | rows | kind | ours (min) | seed | seed source |"
        );
        let _ = writeln!(w, "|---|---|---|---:|---:|---|");
        for r in doc.ratios {
            let _ = writeln!(
                w,
                "| {} | `{}` | {} | {} ({}) | {} | {} |",
                r.family,
                r.label,
                r.kind.name(),
                num(r.ours, 3),
                num(r.ours_min, 3),
                opt(r.seed, 3),
                r.seed_source.as_deref().unwrap_or("")
            );
        }
        let _ = writeln!(w);
    }

    let _ = writeln!(w, "## Timings\n");
    let _ = writeln!(
        w,
        "| row | kind | median | ± | unit | samples | allocs/op |\n|---|---|---:|---:|---|---:|---:|"
    );
    for (row, r) in doc.results {
        let unit = if row.ops_per_invocation > 1 {
            "ns/point"
        } else {
            "ns/op"
        };
        let _ = writeln!(
            w,
            "| `{}` | {} | {} | {} | {unit} | {} | {} |",
            row.id(),
            r.thread_kind.name(),
            num(r.median(), 3),
            num(r.median_error(), 3),
            r.ns_per_op.len(),
            num(r.allocs_per_op, 3)
        );
    }
    s
}
