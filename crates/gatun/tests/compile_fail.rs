//! Compile-fail tests (trybuild): what the type system forbids.
//!
//! - `segment_outlives_arena`, `segment_outlives_dropped_arena`: a segment cannot outlive
//!   its arena.
//! - `segment_not_send`: a `MemorySegment` is `!Send`.
//! - `confined_arena_not_send`: a `ConfinedArena` is `!Send`.
//! - `arguments_outlive_arena`: an `Arguments` list holding a segment cannot be used after
//!   the segment's arena is dropped.
//!
//! The expected compiler messages are the `.stderr` files next to each case; regenerate them
//! with `TRYBUILD=overwrite cargo test -p gatun --test compile_fail` after a toolchain change.
//! Skipped under Miri (it would have to run rustc).

// trybuild runs cargo, which a Windows test binary under Wine does not have: Unix only.
// What the type system forbids does not depend on the target: checked once, in the native
// x86-64 suite (under qemu each case would be compiled again from an emulated process).
#![cfg(all(unix, target_arch = "x86_64", not(miri)))]

#[test]
fn compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/*.rs");
}
