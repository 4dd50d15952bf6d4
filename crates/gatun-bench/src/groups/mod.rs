//! Benchmark groups; each module's `rows()` lists its rows with the seed tables' names.

pub mod arena;
pub mod arena_pool;
pub mod buffer_stack;
pub mod downcall;
pub mod stub_compile;
pub mod upcall;

use crate::Row;

/// All rows of all groups.
pub fn all() -> Vec<Row> {
    let mut rows = Vec::new();
    rows.extend(arena::rows());
    rows.extend(downcall::rows());
    rows.extend(buffer_stack::rows());
    rows.extend(upcall::rows());
    rows.extend(arena_pool::rows());
    rows.extend(stub_compile::rows());
    rows
}
