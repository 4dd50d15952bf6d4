//! Helpers of the executors' case tables (`aarch64/tests.rs`, `win64/tests.rs`): struct layouts,
//! segments holding a Rust value, reading one back, and the linker stack's emptiness.

// The case tables run on their executors' targets only; elsewhere these are unused.
#![allow(dead_code)]

use crate::layout::{MemoryLayout, ValueLayout as V};
use crate::memory::{MemorySegment, SegmentAllocator};

/// The arena the case tables allocate from.
pub(crate) type Arena = crate::memory::ConfinedArena;

/// A fresh confined arena.
pub(crate) fn arena() -> Arena {
    crate::memory::Arena::confined()
}

/// The C struct of `members`.
pub(crate) fn st<const N: usize>(members: [V; N]) -> MemoryLayout {
    MemoryLayout::c_struct(members).unwrap()
}

/// A segment of `arena` with `T`'s size and alignment holding `v`.
pub(crate) fn seg_of<'a, T: Copy>(arena: &'a Arena, v: T) -> MemorySegment<'a> {
    let s = arena
        .allocate(std::mem::size_of::<T>(), std::mem::align_of::<T>())
        .unwrap();
    // SAFETY: `s` has T's size and alignment.
    unsafe { s.as_ptr().cast::<T>().write(v) };
    s
}

/// The `T` at the start of `s` (at least `T`'s size; read unaligned).
pub(crate) fn read<T: Copy>(s: &MemorySegment<'_>) -> T {
    assert!(s.byte_size() >= std::mem::size_of::<T>());
    // SAFETY: size checked; an unaligned read.
    unsafe { s.as_ptr().cast::<T>().read_unaligned() }
}

/// Asserts that every linker-stack frame of this thread was closed: a frame of the whole block
/// fits in it again (no heap fallback).
pub(crate) fn assert_linker_stack_is_empty() {
    let stack = crate::memory::linker_stack();
    let f = stack.push_frame(stack.byte_size(), 16).unwrap();
    assert!(!f.is_fallback(), "a linker-stack frame was left open");
}
