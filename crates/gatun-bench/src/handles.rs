//! gatun's side of the call rows: downcall handles for the natives, and the reused-segment
//! allocator the struct-return rows hand to `invoke_into` (as the JDK benchmarks pass an
//! allocator that always returns the same `point`: the JDK's `CallOverheadByValue` and
//! `PointsAlloc` microbenchmarks in `test/micro/org/openjdk/bench/java/lang/foreign`).

use crate::natives::Native;
use gatun::layout::MemoryLayout;
use gatun::memory::{MemorySegment, SegmentAllocator};
use gatun::{DowncallHandle, FunctionDescriptor, Linker, LinkerOption, Symbol, ValueLayout};

/// Links `native` with `descriptor` and `options`.
///
/// # Panics
/// If the linker rejects the descriptor (a bug in the benchmark).
pub fn link(
    native: Native,
    descriptor: &FunctionDescriptor,
    options: &[LinkerOption],
) -> DowncallHandle {
    // SAFETY: the natives are linked into this binary statically; their code stays mapped for
    // the life of the process.
    let symbol = unsafe { Symbol::from_address(native.address()) };
    Linker::native()
        .downcall(&symbol, descriptor, options)
        .unwrap_or_else(|e| panic!("link {descriptor}: {e}"))
}

/// `struct { double x; double y; }` (16 bytes, alignment 8): [`crate::natives::DoublePoint`].
pub fn double_point_layout() -> MemoryLayout {
    MemoryLayout::c_struct([ValueLayout::F64, ValueLayout::F64]).expect("DoublePoint layout")
}

/// `struct { long a, b, c; }` (24 bytes, alignment 8): [`crate::natives::Long3`].
pub fn long3_layout() -> MemoryLayout {
    let long = if cfg!(windows) {
        ValueLayout::I32
    } else {
        ValueLayout::I64
    };
    MemoryLayout::c_struct([long.clone(), long.clone(), long]).expect("Long3 layout")
}

/// A [`SegmentAllocator`] that hands out the same segment on every request (the JDK
/// benchmarks' `(size, align) -> point` lambda), so a struct return lands in a reused buffer
/// without allocating. Like the lambda it does not look at the request: the rows use it only
/// with `invoke_into`, which checks the segment it gets (at least the return layout's size,
/// aligned to its alignment) and fails with an error otherwise — checking here too would
/// measure the check twice.
pub struct Reused<'a>(pub MemorySegment<'a>);

impl SegmentAllocator for Reused<'_> {
    #[inline]
    fn allocate(
        &self,
        _byte_size: usize,
        _byte_alignment: usize,
    ) -> gatun::Result<MemorySegment<'_>> {
        Ok(self.0)
    }
}
