//! `cargo bench -p gatun-bench [-- FILTER]`: the same rows as `gatun bench`, measured by
//! criterion through `iter_custom` (one body call of `iters` iterations per sample), as
//! `<group>/<name>[/<param>]/{thread,task}`. Task rows move the body into a task spawned on a
//! 2-worker tokio runtime for each sample, so only the body's own loop is timed.
//!
//! Times are per body iteration: for rows with `ops_per_invocation > 1` (points_alloc, 100
//! points) divide by it to compare with `gatun bench`, which reports per operation.

use std::time::{Duration, Instant};

use criterion::Criterion;
use gatun_bench::{Body, Row};

#[global_allocator]
static ALLOC: gatun_bench::CountingAllocator = gatun_bench::CountingAllocator;

fn time(body: &mut Body, iters: u64) -> Duration {
    let t = Instant::now();
    body(iters);
    t.elapsed()
}

fn bench_thread(c: &mut Criterion, row: &Row) {
    let mut body: Option<Body> = None;
    c.bench_function(&format!("{}/thread", row.id()), |b| {
        let body = body.get_or_insert_with(|| (row.make)());
        b.iter_custom(|iters| time(body, iters))
    });
}

fn bench_task(c: &mut Criterion, row: &Row, rt: &tokio::runtime::Runtime) {
    let mut slot: Option<Body> = None;
    c.bench_function(&format!("{}/task", row.id()), |b| {
        b.iter_custom(|iters| {
            let held = slot.take();
            let make = row.make.clone();
            let (body, elapsed) = rt.block_on(async move {
                tokio::spawn(async move {
                    let mut body = held.unwrap_or_else(|| make());
                    let elapsed = time(&mut body, iters);
                    (body, elapsed)
                })
                .await
                .expect("benchmark task panicked")
            });
            slot = Some(body);
            elapsed
        })
    });
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime");
    for row in gatun_bench::rows() {
        bench_thread(&mut c, &row);
        bench_task(&mut c, &row, &rt);
    }
    c.final_summary();
}
