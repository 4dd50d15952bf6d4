//! The `upcall/*` rows exist, run on a thread and in a tokio task, and allocate nothing per
//! callback (figures are meaningless at `Config::TINY`; allocation counts are not).
// Calls foreign code: only where the executor runs.
#![cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(miri)
))]

use gatun_bench::{measure, Config, CountingAllocator, ThreadKind};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn upcall_rows_exist_and_do_not_allocate() {
    let rows: Vec<_> = gatun_bench::rows()
        .into_iter()
        .filter(|r| r.group == "upcall")
        .collect();
    let ids: Vec<String> = rows.iter().map(|r| r.id()).collect();
    assert_eq!(
        ids,
        [
            "upcall/noop",
            "upcall/direct_noop",
            "upcall/id_i32",
            "upcall/direct_id_i32",
            "upcall/struct",
            "upcall/direct_struct",
        ]
    );
    for row in &rows {
        for kind in [ThreadKind::Thread, ThreadKind::Task] {
            let m = measure(row, kind, Config::TINY);
            assert_eq!(m.allocs_per_op, 0.0, "{} [{}]", row.id(), kind.name());
        }
    }
}
