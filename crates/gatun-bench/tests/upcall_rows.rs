//! The `upcall/*` rows exist, run on a thread and in a tokio task, and allocate nothing per
//! callback (figures are meaningless at `Config::TINY`; allocation counts are not); the
//! `qsort` rows run once on the test thread.
// Calls foreign code: only where the executor runs.
#![cfg(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "s390x",
        all(target_arch = "powerpc64", target_endian = "little")
    ),
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
            "upcall/typed_noop",
            "upcall/typed_id_i32",
            "upcall/struct",
            "upcall/direct_struct",
            "upcall/qsort",
            "upcall/typed_qsort",
            "upcall/direct_qsort",
        ]
    );
    for row in &rows {
        if row.name.ends_with("qsort") {
            // A sort per iteration is slow under qemu even at the debug builds' 10^4 doubles:
            // run it once on this thread (after one warm-up sort) and count its allocations.
            let mut body = (row.make)();
            body(1);
            let before = CountingAllocator::thread_count();
            body(1);
            assert_eq!(CountingAllocator::thread_count(), before, "{}", row.id());
            continue;
        }
        for kind in [ThreadKind::Thread, ThreadKind::Task] {
            let m = measure(row, kind, Config::TINY);
            assert_eq!(m.allocs_per_op, 0.0, "{} [{}]", row.id(), kind.name());
        }
    }
}
