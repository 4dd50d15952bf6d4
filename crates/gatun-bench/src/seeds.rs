//! The seed tables' figures (ns/op, JMH `avgt`, the "Score" column), keyed by our row names, so
//! `gatun bench` can print the seed's ratio beside ours. Each figure's `source` names the seed
//! (by number, e.g. "seed 000") and the JMH row it comes from; `thread` is the platform-thread
//! row, `task` the `OfVirtual` (virtual-thread) row. The seeds were measured on Apple M1/M3 machines with the
//! JDK, so only ratios are comparable with ours, never the absolute figures.

/// One seed figure.
#[derive(Debug, Clone, Copy)]
pub struct SeedFigure {
    /// Our group name, e.g. `buffer_stack`.
    pub group: &'static str,
    /// Our row name, e.g. `buffer`.
    pub name: &'static str,
    /// The parameter value (e.g. `"8"` for `ELEM_SIZE=8`), if the seed row has one.
    pub param: Option<&'static str>,
    /// Platform-thread score, ns/op.
    pub thread: Option<f64>,
    /// Virtual-thread (`OfVirtual`) score, ns/op.
    pub task: Option<f64>,
    /// Where the figures come from: seed file and JMH row.
    pub source: &'static str,
}

const fn fig(
    group: &'static str,
    name: &'static str,
    param: Option<&'static str>,
    thread: f64,
    task: Option<f64>,
    source: &'static str,
) -> SeedFigure {
    SeedFigure {
        group,
        name,
        param,
        thread: Some(thread),
        task,
        source,
    }
}

/// Every seed figure that maps onto one of our rows.
#[rustfmt::skip]
pub const SEEDS: &[SeedFigure] = &[
    // seed 000 (PR 23765, M1 Mac): CaptureStateUtilBench, Cnt 30.
    fig("capture_state_util", "adapted_sys_call_fail", None, 23.918, Some(24.330), "seed 000 CaptureStateUtilBench.adaptedSysCallFail"),
    fig("capture_state_util", "adapted_sys_call_success", None, 4.946, Some(8.257), "seed 000 CaptureStateUtilBench.adaptedSysCallSuccess"),
    fig("capture_state_util", "explicit_allocation_fail", None, 42.280, Some(41.415), "seed 000 CaptureStateUtilBench.explicitAllocationFail"),
    fig("capture_state_util", "explicit_allocation_success", None, 21.809, Some(21.720), "seed 000 CaptureStateUtilBench.explicitAllocationSuccess"),
    fig("capture_state_util", "tl_allocation_fail", None, 24.422, Some(23.636), "seed 000 CaptureStateUtilBench.tlAllocationFail"),
    fig("capture_state_util", "tl_allocation_success", None, 5.182, Some(8.234), "seed 000 CaptureStateUtilBench.tlAllocationSuccess"),
    // seed 000: ArenaPoolBench (pool 32 B, alignment 8), ELEM_SIZE 4 and 64.
    fig("arena_pool", "confined", Some("4"), 23.286, Some(23.543), "seed 000 ArenaPoolBench.confined ELEM_SIZE=4"),
    fig("arena_pool", "confined", Some("64"), 27.026, Some(27.384), "seed 000 ArenaPoolBench.confined ELEM_SIZE=64"),
    fig("arena_pool", "confined2", Some("4"), 48.301, Some(47.811), "seed 000 ArenaPoolBench.confined2 ELEM_SIZE=4"),
    fig("arena_pool", "confined2", Some("64"), 57.512, Some(55.404), "seed 000 ArenaPoolBench.confined2 ELEM_SIZE=64"),
    fig("arena_pool", "pooled", Some("4"), 5.085, Some(8.210), "seed 000 ArenaPoolBench.pooled ELEM_SIZE=4"),
    fig("arena_pool", "pooled", Some("64"), 29.621, Some(45.525), "seed 000 ArenaPoolBench.pooled ELEM_SIZE=64"),
    fig("arena_pool", "pooled2", Some("4"), 10.610, Some(50.670), "seed 000 ArenaPoolBench.pooled2 ELEM_SIZE=4"),
    fig("arena_pool", "pooled2", Some("64"), 60.815, Some(85.846), "seed 000 ArenaPoolBench.pooled2 ELEM_SIZE=64"),
    // seed 000: ArenaPoolFromBench (pool 32 B, alignment 1); `confinedSting` [sic] in the seed.
    fig("arena_pool_from", "confined_int", None, 21.892, Some(21.944), "seed 000 ArenaPoolFromBench.confinedInt"),
    fig("arena_pool_from", "confined_string", None, 26.012, Some(26.190), "seed 000 ArenaPoolFromBench.confinedSting"),
    fig("arena_pool_from", "pooled_int", None, 5.056, Some(8.217), "seed 000 ArenaPoolFromBench.pooledInt"),
    fig("arena_pool_from", "pooled_string", None, 6.419, Some(9.271), "seed 000 ArenaPoolFromBench.pooledString"),
    // seed 004 (PR 24829 v6, the REDO that was integrated): BufferStackBench, Cnt 15.
    fig("buffer_stack", "buffer", Some("8"), 4.693, Some(12.653), "seed 004 BufferStackBench.buffer ELEM_SIZE=8"),
    fig("buffer_stack", "buffer", Some("16"), 4.715, Some(12.635), "seed 004 BufferStackBench.buffer ELEM_SIZE=16"),
    fig("buffer_stack", "buffer", Some("32"), 4.670, Some(12.562), "seed 004 BufferStackBench.buffer ELEM_SIZE=32"),
    fig("buffer_stack", "confined", Some("8"), 22.548, Some(22.649), "seed 004 BufferStackBench.confined ELEM_SIZE=8"),
    fig("buffer_stack", "confined", Some("16"), 23.494, Some(23.507), "seed 004 BufferStackBench.confined ELEM_SIZE=16"),
    fig("buffer_stack", "confined", Some("32"), 25.285, Some(25.426), "seed 004 BufferStackBench.confined ELEM_SIZE=32"),
    // seed 004: CallOverheadByValue (the integrated BufferStack). Seed 002 (PR 23142 "after",
    // MBA M3) has byPtr 3.311 / byValue 6.143 on platform threads only.
    fig("call_overhead_by_value", "by_ptr", None, 4.132, Some(4.095), "seed 004 CallOverheadByValue.byPtr"),
    fig("call_overhead_by_value", "by_value", None, 11.835, Some(16.666), "seed 004 CallOverheadByValue.byValue"),
    // seed 003 (PR 23142 v6, two cached buffers, MBA M3): PointsAlloc "after", per point.
    fig("points_alloc", "circle_by_ptr", None, 9.156, None, "seed 003 PointsAlloc.circle_by_ptr (after)"),
    fig("points_alloc", "circle_by_value", None, 11.995, None, "seed 003 PointsAlloc.circle_by_value (after)"),
];

/// The seed figure for a row, if the seeds have one.
pub fn seed_for(group: &str, name: &str, param: Option<&str>) -> Option<&'static SeedFigure> {
    SEEDS
        .iter()
        .find(|s| s.group == group && s.name == name && s.param == param)
}
