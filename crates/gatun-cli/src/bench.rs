//! `gatun bench`: runs the rows of `gatun-bench`, prints a JMH-style table and the ratios beside
//! the seeds', and optionally writes JSON rows, an SVG chart of the ratios and the
//! `BENCHMARKS.md` document (`--markdown`, with the instruction counts of `--instructions`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use gatun_bench::report::markdown::{self, CpuSample, Document, Machine};
use gatun_bench::report::{json_rows, ratios, svg_chart, Ratio};
use gatun_bench::{measure, Config, Measurement, Row, ThreadKind};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Options of `gatun bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Run JMH-like iterations (1 s warm-up, then 2001 samples of 1 ms, per row and thread
    /// kind) instead of the quick mode (a 40 s budget: about 35 s for the whole suite on a
    /// shared 2-core machine).
    #[arg(long)]
    full: bool,
    /// Only rows whose id (`group/name` or `group/name/param`) contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Only thread rows (skip the tokio-task variants).
    #[arg(long)]
    threads_only: bool,
    /// Also write the results as JSON to FILE: an array with one object per row and thread
    /// kind (`group`, `name`, `params`, `thread_kind`, `ns_per_op` {median, min, max, ...},
    /// `allocs_per_op`).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write a bar chart of the ratios (ours beside the seeds') as SVG to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Also write the run as Markdown to FILE (`BENCHMARKS.md`): the machine (CPU, cores, OS,
    /// compiler, date, mode, the load other processes put on it), the instruction counts of
    /// `--instructions`, the ratios and the timings.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Instruction counts for `--markdown`: a `# ROW BUDGET X86_64 AARCH64 RISCV64` header naming
    /// the columns (one per target counted under qemu-user after X86_64; without it, `ROW BUDGET
    /// X86_64 AARCH64`), then one line per row (`-` where absent), as
    /// `crates/gatun-bench/scripts/benchmarks-md` writes them.
    #[arg(long, value_name = "FILE", requires = "markdown")]
    instructions: Option<PathBuf>,
    /// Print the ids of the rows (after --filter) and exit without measuring.
    #[arg(long)]
    list: bool,
    /// Tiny iteration counts, for tests of the output's shape: the figures mean nothing.
    #[arg(long, hide = true)]
    tiny: bool,
}

/// Runs the suite.
pub fn run(args: &BenchArgs) -> Result<(), String> {
    let started = Instant::now();
    let rows: Vec<Row> = gatun_bench::rows()
        .into_iter()
        .filter(|r| args.filter.as_deref().is_none_or(|f| r.id().contains(f)))
        .collect();
    if rows.is_empty() {
        return Err(format!(
            "no benchmark row matches --filter {:?}",
            args.filter.as_deref().unwrap_or("")
        ));
    }
    if args.list {
        for row in &rows {
            println!("{}", row.id());
        }
        return Ok(());
    }
    let kinds: &[ThreadKind] = if args.threads_only {
        &[ThreadKind::Thread]
    } else {
        &[ThreadKind::Thread, ThreadKind::Task]
    };
    let total = rows.len() * kinds.len();
    let (config, mode) = if args.tiny {
        (Config::TINY, "tiny")
    } else if args.full {
        (Config::FULL, "full")
    } else {
        (Config::quick_for(total), "quick")
    };

    let instructions = match &args.instructions {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("read {}: {e}", path.display()))
            .and_then(|t| {
                markdown::parse_instruction_counts(&t)
                    .map_err(|e| format!("{}: {e}", path.display()))
            })?,
        None => markdown::InstructionCounts::default(),
    };
    let machine = args.markdown.as_ref().map(|_| Machine::probe());
    let cpu_before = CpuSample::now();
    let measuring = Instant::now();
    let results = run_rows(&rows, kinds, config)?;
    let wall = measuring.elapsed();
    let others_busy_cores = cpu_before
        .zip(CpuSample::now())
        .and_then(|(a, b)| a.others_busy_cores(&b, machine.as_ref().map_or(1, |m| m.cores)));

    println!(
        "# gatun bench: {mode} mode, {} rows × {} thread kinds; per measurement: warm-up {:?}, {} samples of {:?}",
        rows.len(),
        kinds.len(),
        config.warmup,
        config.samples,
        config.sample_time
    );
    println!(
        "# Score = median ns/op over the samples; Error = 99.9% CI half-width of the median \
         (order statistics; robust to preempted samples, unlike JMH's CI of the mean, which --json also gives); \
         allocs/op from a counting allocator; [task] = inside a tokio task (2 workers); \
         ns/pt = per point of a 100-point circle (JMH @OperationsPerInvocation(100), as the seed)."
    );
    println!("# libffi rows: libffi-rs Cif::call on the system libffi (Debian 3.4.4).");
    println!();
    print_table(&results);
    let rs = ratios(&results);
    println!();
    println!(
        "# Ratios: ours = median ÷ median (and min ÷ min, less disturbed by other load); seed = \
         the same ratio from the JDK figures published in the OpenJDK pull requests these \
         benchmarks reproduce, measured by the JDK authors on Apple M1/M3 (thread = platform \
         thread, task = OfVirtual): compare the ratios; absolute ns are not comparable."
    );
    print_ratios(&rs);

    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&json_rows(&results))
            .map_err(|e| format!("serialise JSON: {e}"))?;
        std::fs::write(path, text + "\n").map_err(|e| format!("write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.svg {
        let title = format!("gatun bench ({mode}): ratios of medians, gatun beside the JDK seeds");
        std::fs::write(path, svg_chart(&rs, &title))
            .map_err(|e| format!("write {}: {e}", path.display()))?;
    }
    if let (Some(path), Some(machine)) = (&args.markdown, &machine) {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let settings = format!(
            "per measurement: warm-up {:.1} ms, {} samples of {} ms",
            ms(config.warmup),
            config.samples,
            ms(config.sample_time)
        );
        let load_average = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next()?.parse().ok());
        let text = markdown::render(&Document {
            machine,
            mode,
            settings: &settings,
            wall,
            others_busy_cores,
            load_average,
            results: &results,
            ratios: &rs,
            instructions: &instructions,
        });
        std::fs::write(path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
    }
    println!();
    println!(
        "# {} measurements in {:.1} s wall time",
        results.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn run_rows(
    rows: &[Row],
    kinds: &[ThreadKind],
    config: Config,
) -> Result<Vec<(Row, Measurement)>, String> {
    let total = (rows.len() * kinds.len()) as u64;
    let tty = std::io::stderr().is_terminal();
    let bar = if tty {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:30.cyan/blue} {pos}/{len} [{elapsed_precise}] {msg}",
            )
            .map_err(|e| e.to_string())?,
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut results = Vec::with_capacity(total as usize);
    for row in rows {
        for &kind in kinds {
            let what = format!("{} ({})", row.id(), kind.name());
            if tty {
                bar.set_message(what);
            } else {
                eprintln!("[{}/{}] {what}", results.len() + 1, total);
            }
            results.push((row.clone(), measure(row, kind, config)));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    Ok(results)
}

fn fmt_num(x: f64, prec: usize) -> String {
    if x.is_finite() {
        format!("{x:.prec$}")
    } else {
        "≈0/NaN".to_string()
    }
}

fn print_table(results: &[(Row, Measurement)]) {
    let name = |row: &Row, m: &Measurement| {
        format!("{}/{} [{}]", row.group, row.name, m.thread_kind.name())
    };
    let w = results
        .iter()
        .map(|(r, m)| name(r, m).chars().count())
        .max()
        .unwrap_or(0)
        .max("Benchmark".len());
    println!(
        "{:<w$} {:>10} {:>5} {:>4} {:>10} {:>9} {:>6} {:>10}",
        "Benchmark", "(param)", "Mode", "Cnt", "Score", "Error", "Units", "allocs/op"
    );
    for (row, m) in results {
        let param = row
            .param
            .as_ref()
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| "N/A".into());
        let units = if row.ops_per_invocation > 1 {
            "ns/pt"
        } else {
            "ns/op"
        };
        println!(
            "{:<w$} {:>10} {:>5} {:>4} {:>10.3} {:>9} {:>6} {:>10.3}",
            name(row, m),
            param,
            "avgt",
            m.ns_per_op.len(),
            m.median(),
            if m.median_error().is_finite() {
                format!("± {:.3}", m.median_error())
            } else {
                "".into()
            },
            units,
            m.allocs_per_op
        );
    }
}

fn print_ratios(rs: &[Ratio]) {
    if rs.is_empty() {
        println!("(no ratios: the rows each ratio needs were not all measured)");
        return;
    }
    let w = rs
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0);
    println!(
        "{:<19} {:<w$} {:<6} {:>8} {:>9} {:>8}  seed source",
        "Ratio", "Rows", "Kind", "median", "(min)", "seed"
    );
    for r in rs {
        println!(
            "{:<19} {:<w$} {:<6} {:>8} {:>9} {:>8}  {}",
            r.family,
            r.label,
            r.kind.name(),
            fmt_num(r.ours, 3),
            format!("({})", fmt_num(r.ours_min, 3)),
            r.seed.map(|s| fmt_num(s, 3)).unwrap_or_else(|| "-".into()),
            r.seed_source.as_deref().unwrap_or("")
        );
    }
}
