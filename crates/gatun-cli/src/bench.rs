//! `gatun bench`: runs the rows of `gatun-bench` and prints a JMH-style table.

use clap::Args;
use gatun_bench::{measure, Config, Measurement, Row, ThreadKind};

/// Options of `gatun bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Run JMH-like iterations (1 s warm-up, 20 samples of 100 ms) instead of the quick mode.
    #[arg(long)]
    full: bool,
    /// Only rows whose id (`group/name/param`) contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Only thread rows (skip the tokio-task variants).
    #[arg(long)]
    threads_only: bool,
}

/// Runs the suite.
pub fn run(args: &BenchArgs) -> Result<(), String> {
    let config = if args.full {
        Config::FULL
    } else {
        Config::QUICK
    };
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
    let kinds: &[ThreadKind] = if args.threads_only {
        &[ThreadKind::Thread]
    } else {
        &[ThreadKind::Thread, ThreadKind::Task]
    };
    let mut results: Vec<(Row, Measurement)> = Vec::new();
    for row in &rows {
        for &kind in kinds {
            eprintln!("running {} ({})", row.id(), kind.name());
            results.push((row.clone(), measure(row, kind, config)));
        }
    }
    print_table(&results);
    Ok(())
}

fn print_table(results: &[(Row, Measurement)]) {
    println!(
        "{:<44} {:>14} {:>6} {:>4} {:>10} {:>9} {:>6} {:>11}",
        "Benchmark", "(param)", "Mode", "Cnt", "Score", "Error", "Units", "allocs/op"
    );
    for (row, m) in results {
        let param = row
            .param
            .as_ref()
            .map(|(k, v)| format!("{k}={v}"))
            .unwrap_or_default();
        let err = (m.max() - m.min()) / 2.0;
        println!(
            "{:<44} {:>14} {:>6} {:>4} {:>10.3} {:>9.3} {:>6} {:>11.2}",
            format!("{}/{} [{}]", row.group, row.name, m.thread_kind.name()),
            param,
            "avgt",
            m.ns_per_op.len(),
            m.median(),
            err,
            "ns/op",
            m.allocs_per_op
        );
    }
}
