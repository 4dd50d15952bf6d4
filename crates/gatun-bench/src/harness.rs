//! The measuring loop: warm-up, timed samples, median/min/max nanoseconds per operation, and
//! allocations per operation.

use std::time::{Duration, Instant};

use crate::{CountingAllocator, Row};

/// Where a row runs: a plain OS thread, or a task on a tokio multi-thread runtime (the Rust
/// counterpart of a JDK virtual thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadKind {
    /// A dedicated OS thread.
    Thread,
    /// A task spawned on a 2-worker tokio multi-thread runtime.
    Task,
}

impl ThreadKind {
    /// `thread` or `task`.
    pub fn name(self) -> &'static str {
        match self {
            ThreadKind::Thread => "thread",
            ThreadKind::Task => "task",
        }
    }
}

/// How long to measure.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Warm-up time before sampling.
    pub warmup: Duration,
    /// Number of timed samples (the JMH `Cnt`).
    pub samples: usize,
    /// Target duration of one sample; the iteration count is calibrated to it.
    pub sample_time: Duration,
}

impl Config {
    /// Quick mode: about 0.15 s per row and thread kind.
    pub const QUICK: Config = Config {
        warmup: Duration::from_millis(30),
        samples: 11,
        sample_time: Duration::from_millis(10),
    };
    /// JMH-like mode: a 1 s warm-up, then 2001 samples of 1 ms (about 3 s per row and thread
    /// kind; 5 minutes for a 100-measurement suite). Short samples for the same reason as
    /// [`Config::quick_for`].
    pub const FULL: Config = Config {
        warmup: Duration::from_millis(1000),
        samples: 2001,
        sample_time: Duration::from_millis(1),
    };
    /// For tests: tiny iteration counts; figures are meaningless, shapes are not.
    pub const TINY: Config = Config {
        warmup: Duration::from_micros(100),
        samples: 3,
        sample_time: Duration::from_micros(100),
    };

    /// Wall time the quick mode spends measuring the whole suite (all rows, all thread kinds),
    /// leaving room for thread and runtime start-up so that `gatun bench` ends within 90 s.
    pub const QUICK_SUITE_BUDGET: Duration = Duration::from_secs(40);

    /// Quick mode for a run of `measurements` (rows × thread kinds): spreads
    /// [`Config::QUICK_SUITE_BUDGET`] over them, at most 0.5 s and at least 40 ms each.
    ///
    /// Samples are short (1 ms) and many (up to 401): on a shared, loaded machine a 1 ms
    /// sample often runs within one scheduler time slice, so the median is an undisturbed
    /// sample, where every 100 ms sample would include waiting for the CPU. One measurement
    /// costs about `warmup + (samples + 1) × sample_time`: the calibration batches run inside
    /// the warm-up, then one batch estimates the time per iteration, then the samples.
    pub fn quick_for(measurements: usize) -> Config {
        let per =
            (Self::QUICK_SUITE_BUDGET.as_secs_f64() / measurements.max(1) as f64).clamp(0.04, 0.5);
        let sample_time = 0.001;
        let warmup = (0.15 * per).max(0.01);
        let fit = ((per - warmup) / sample_time * 0.8) as usize;
        // An odd count, so the median is one sample.
        let samples = (fit.clamp(11, 401) / 2) * 2 + 1;
        Config {
            warmup: Duration::from_secs_f64(warmup),
            samples,
            sample_time: Duration::from_secs_f64(sample_time),
        }
    }
}

/// The result of measuring one row on one thread kind.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Nanoseconds per operation, one per sample, sorted ascending. An operation is one
    /// iteration of the body divided by [`Row::ops_per_invocation`] (JMH's
    /// `@OperationsPerInvocation`).
    pub ns_per_op: Vec<f64>,
    /// Heap allocations per operation (counted over one untimed run).
    pub allocs_per_op: f64,
    /// Where it ran.
    pub thread_kind: ThreadKind,
}

impl Measurement {
    /// Median ns/op.
    pub fn median(&self) -> f64 {
        let v = &self.ns_per_op;
        let n = v.len();
        if n == 0 {
            return f64::NAN;
        }
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }
    /// Fastest sample, ns/op.
    pub fn min(&self) -> f64 {
        self.ns_per_op.first().copied().unwrap_or(f64::NAN)
    }
    /// Slowest sample, ns/op.
    pub fn max(&self) -> f64 {
        self.ns_per_op.last().copied().unwrap_or(f64::NAN)
    }
    /// Arithmetic mean of the samples, ns/op.
    pub fn mean(&self) -> f64 {
        let n = self.ns_per_op.len();
        if n == 0 {
            return f64::NAN;
        }
        self.ns_per_op.iter().sum::<f64>() / n as f64
    }
    /// JMH's "Error" (the half-width of the 99.9 % confidence interval of the mean,
    /// `t(0.9995, n-1) × s / √n` with the sample standard deviation `s`). NaN with fewer than
    /// 2 samples. One preempted sample inflates it; see [`Measurement::median_error`].
    pub fn mean_error(&self) -> f64 {
        let n = self.ns_per_op.len();
        if n < 2 {
            return f64::NAN;
        }
        let mean = self.mean();
        let var = self
            .ns_per_op
            .iter()
            .map(|x| (x - mean) * (x - mean))
            .sum::<f64>()
            / (n - 1) as f64;
        student_t_999(n - 1) * var.sqrt() / (n as f64).sqrt()
    }

    /// The "Error" `gatun bench` prints beside the median: the larger distance from the median
    /// to the bounds of its distribution-free 99.9 % confidence interval, the order statistics
    /// at ranks `n/2 ∓ 3.29·√n/2` (normal approximation of the binomial; clamped to the
    /// extremes for small `n`). Robust against a few preempted samples on a shared machine,
    /// unlike [`Measurement::mean_error`]. NaN with fewer than 2 samples.
    pub fn median_error(&self) -> f64 {
        let v = &self.ns_per_op;
        let n = v.len();
        if n < 2 {
            return f64::NAN;
        }
        let half = 3.291 * (n as f64).sqrt() / 2.0;
        let lo = ((n as f64 / 2.0 - half).floor().max(0.0)) as usize;
        let hi = ((n as f64 / 2.0 + half).ceil() as usize).min(n - 1);
        let m = self.median();
        (m - v[lo]).max(v[hi] - m)
    }
}

/// The 0.9995 quantile of Student's t distribution with `df` degrees of freedom (two-sided
/// 99.9 %, as JMH reports), from the standard table; between tabulated entries the next
/// smaller `df` is used (conservative).
pub fn student_t_999(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        636.619, 31.599, 12.924, 8.610, 6.869, 5.959, 5.408, 5.041, 4.781, 4.587, 4.437, 4.318,
        4.221, 4.140, 4.073, 4.015, 3.965, 3.922, 3.883, 3.850, 3.819, 3.792, 3.768, 3.745, 3.725,
        3.707, 3.690, 3.674, 3.659, 3.646,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        31..=39 => 3.646,
        40..=59 => 3.551,
        60..=119 => 3.460,
        120..=999 => 3.373,
        _ => 3.291,
    }
}

/// Samples kept even when a measurement overruns its time on a loaded machine.
const MIN_SAMPLES: usize = 11;

fn run_body(row: &Row, config: Config, kind: ThreadKind) -> Measurement {
    let ops = row.ops_per_invocation.max(1) as f64;
    let mut body = (row.make)();
    // Calibrate: grow the iteration count until one batch takes about sample_time.
    let mut iters: u64 = 1;
    let warm_end = Instant::now() + config.warmup;
    loop {
        let t = Instant::now();
        body(iters);
        let el = t.elapsed();
        if el >= config.sample_time || iters >= 1 << 40 {
            if Instant::now() >= warm_end {
                break;
            }
        } else {
            iters = iters.saturating_mul(2);
        }
    }
    let per_iter = {
        let t = Instant::now();
        body(iters);
        t.elapsed().as_secs_f64() / iters as f64
    };
    let iters = ((config.sample_time.as_secs_f64() / per_iter.max(1e-12)) as u64).max(1);
    let mut samples = Vec::with_capacity(config.samples);
    // On a loaded machine each sample waits for the CPU too; stop at twice the planned
    // sampling time (keeping at least MIN_SAMPLES) so that the suite's wall time stays bounded.
    let deadline = Instant::now() + config.sample_time.mul_f64(2.0 * config.samples as f64);
    for i in 0..config.samples {
        let t = Instant::now();
        body(iters);
        samples.push(t.elapsed().as_nanos() as f64 / (iters as f64 * ops));
        if i + 1 >= MIN_SAMPLES && Instant::now() > deadline {
            break;
        }
    }
    samples.sort_by(f64::total_cmp);
    let alloc_iters = iters.clamp(1, 10_000);
    let before = CountingAllocator::thread_count();
    body(alloc_iters);
    let allocs = CountingAllocator::thread_count() - before;
    Measurement {
        ns_per_op: samples,
        allocs_per_op: allocs as f64 / (alloc_iters as f64 * ops),
        thread_kind: kind,
    }
}

/// Measures `row` on `kind`: builds the body there, warms it up, takes `config.samples`
/// samples. Task rows run on a fresh 2-worker tokio runtime.
///
/// # Panics
/// If the body panics, or the tokio runtime cannot be built.
pub fn measure(row: &Row, kind: ThreadKind, config: Config) -> Measurement {
    match kind {
        ThreadKind::Thread => {
            let row = row.clone();
            std::thread::spawn(move || run_body(&row, config, kind))
                .join()
                .expect("benchmark body panicked")
        }
        ThreadKind::Task => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .expect("tokio runtime");
            let row = row.clone();
            rt.block_on(async move {
                tokio::spawn(async move { run_body(&row, config, kind) })
                    .await
                    .expect("benchmark task panicked")
            })
        }
    }
}
