//! Benchmark groups; each module's `rows()` lists its rows with the seed tables' names.

pub mod arena;
pub mod arena_pool;
pub mod buffer_stack;
pub mod call_overhead;
pub mod call_overhead_by_value;
pub mod capture_state_util;
pub mod downcall;
pub mod nonblocking;
pub mod owner_thread;
pub mod points_alloc;
pub mod stub_compile;
pub mod upcall;

use crate::Row;

/// All rows of all groups.
pub fn all() -> Vec<Row> {
    let mut rows = Vec::new();
    rows.extend(arena::rows());
    rows.extend(arena_pool::rows());
    rows.extend(buffer_stack::rows());
    rows.extend(downcall::rows());
    rows.extend(upcall::rows());
    rows.extend(call_overhead::rows());
    rows.extend(call_overhead_by_value::rows());
    rows.extend(points_alloc::rows());
    rows.extend(capture_state_util::rows());
    rows.extend(stub_compile::rows());
    rows.extend(nonblocking::rows());
    rows.extend(owner_thread::rows());
    rows
}
