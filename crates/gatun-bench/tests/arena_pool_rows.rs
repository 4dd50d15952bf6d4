//! The `arena_pool/*` and `arena_pool_from/*` rows exist under the seed tables' names, run on a
//! thread and in a tokio task, and allocate what they should per operation (figures are
//! meaningless at `Config::TINY`; allocation counts are not).

use gatun_bench::{measure, Config, CountingAllocator, ThreadKind};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn arena_pool_rows_have_the_seed_names_and_allocation_counts() {
    let rows: Vec<_> = gatun_bench::rows()
        .into_iter()
        .filter(|r| r.group == "arena_pool" || r.group == "arena_pool_from")
        .collect();
    let ids: Vec<String> = rows.iter().map(|r| r.id()).collect();
    let expected = [
        "arena_pool/confined/4",
        "arena_pool/pooled/4",
        "arena_pool/confined2/4",
        "arena_pool/pooled2/4",
        "arena_pool/confined/64",
        "arena_pool/pooled/64",
        "arena_pool/confined2/64",
        "arena_pool/pooled2/64",
        "arena_pool_from/confined_int",
        "arena_pool_from/pooled_int",
        "arena_pool_from/confined_string",
        "arena_pool_from/pooled_string",
    ];
    assert_eq!(ids, expected);
    for row in &rows {
        if let Some((name, _)) = &row.param {
            assert_eq!(*name, "ELEM_SIZE");
        }
        for kind in [ThreadKind::Thread, ThreadKind::Task] {
            let m = measure(row, kind, Config::TINY);
            let id = row.id();
            // Pooled rows that fit allocate nothing; 64-byte rows (larger than the 32-byte
            // pool) fall back to one heap block per allocation, like the confined rows.
            let want = match id.as_str() {
                "arena_pool/pooled/4" | "arena_pool/pooled2/4" => 0.0,
                "arena_pool_from/pooled_int" | "arena_pool_from/pooled_string" => 0.0,
                "arena_pool/confined2/4" | "arena_pool/confined2/64" => 2.0,
                "arena_pool/pooled2/64" => 2.0,
                _ => 1.0,
            };
            assert_eq!(m.allocs_per_op, want, "{id} [{}]", kind.name());
        }
    }
}
