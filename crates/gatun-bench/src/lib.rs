//! gatun's benchmark suite: one set of bodies ([`Row`]s, registered in [`rows`]) and a small
//! harness ([`measure`]) shared by `gatun bench` and `cargo bench`.
//!
//! A body is a closure that runs its operation `iters` times in a monomorphised loop, so the
//! harness pays one dynamic call per sample, not per operation. Every row can run on a plain
//! OS thread or inside a tokio multi-thread task ([`ThreadKind`]), the Rust counterpart of the
//! seeds' platform-thread and virtual-thread (`OfVirtual`) rows.
//!
//! Allocations per operation are counted by [`CountingAllocator`], which the final binary
//! installs as its `#[global_allocator]`; counts are per thread, so runtime threads do not
//! disturb them.

#![deny(missing_docs)]

pub mod alloc_count;
pub mod groups;
pub mod handles;
pub mod harness;
#[cfg(libffi_peer)]
pub mod libffi_peer;
pub mod natives;
pub mod report;
pub mod seeds;

pub use alloc_count::CountingAllocator;
pub use harness::{measure, Config, Measurement, ThreadKind};

use std::sync::Arc;

/// A benchmark body: runs the operation `iters` times. `Send` so it can be built and run inside
/// a tokio task.
pub type Body = Box<dyn FnMut(u64) + Send>;

/// One benchmark row, named as in the seed tables (`group/name`, plus a parameter such as
/// `ELEM_SIZE=8`).
#[derive(Clone)]
pub struct Row {
    /// The group, e.g. `buffer_stack`.
    pub group: &'static str,
    /// The row name, e.g. `buffer`.
    pub name: &'static str,
    /// The parameter as `(name, value)`, e.g. `("ELEM_SIZE", "8")`, if any.
    pub param: Option<(&'static str, String)>,
    /// Builds a fresh body on the thread (or task) that runs it.
    pub make: Arc<dyn Fn() -> Body + Send + Sync>,
    /// Operations per body iteration (JMH's `@OperationsPerInvocation`; 1 unless set with
    /// [`Row::ops_per_invocation`]): ns/op and allocs/op are divided by it, e.g. PointsAlloc
    /// reports per point of a 100-point circle.
    pub ops_per_invocation: u64,
}

impl Row {
    /// A row without a parameter.
    pub fn new(
        group: &'static str,
        name: &'static str,
        make: impl Fn() -> Body + Send + Sync + 'static,
    ) -> Row {
        Row {
            group,
            name,
            param: None,
            make: Arc::new(make),
            ops_per_invocation: 1,
        }
    }

    /// The same row reporting per `ops` operations per body iteration (at least 1).
    pub fn ops_per_invocation(mut self, ops: u64) -> Row {
        self.ops_per_invocation = ops.max(1);
        self
    }

    /// The same row with a parameter.
    pub fn with_param(mut self, name: &'static str, value: impl ToString) -> Row {
        self.param = Some((name, value.to_string()));
        self
    }

    /// `group/name` or `group/name/value`, the id used by `--filter` and in JSON.
    pub fn id(&self) -> String {
        match &self.param {
            Some((_, v)) => format!("{}/{}/{}", self.group, self.name, v),
            None => format!("{}/{}", self.group, self.name),
        }
    }
}

/// Every registered row, in a stable order.
pub fn rows() -> Vec<Row> {
    groups::all()
}

/// Runs `op` `iters` times, keeping each result alive with [`std::hint::black_box`].
#[inline(always)]
pub fn repeat<R>(iters: u64, mut op: impl FnMut() -> R) {
    for _ in 0..iters {
        std::hint::black_box(op());
    }
}
