//! Runs one benchmark row's body for a given number of iterations (for instruction counts:
//! `valgrind --tool=callgrind target/release/examples/percall <row id> <iters>`; the
//! difference between two iteration counts divided by their difference is the cost per call).

fn main() {
    let mut a = std::env::args().skip(1);
    let id = a.next().expect("usage: percall <row id> <iters>");
    let iters: u64 = a.next().map_or(1_000_000, |s| s.parse().expect("iters"));
    let row = gatun_bench::rows()
        .into_iter()
        .find(|r| r.id() == id)
        .unwrap_or_else(|| panic!("no row {id}"));
    let mut body = (row.make)();
    body(1000);
    body(iters);
}
