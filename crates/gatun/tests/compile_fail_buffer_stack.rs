//! Compile-fail tests for BufferStack frames: segments cannot outlive their frame, a frame
//! cannot be closed while a segment is in use, and frames are `!Send` (also across `.await`).
//! The expected compiler output is in `tests/compile_fail/buffer_stack/*.stderr`; regenerate with
//! `TRYBUILD=overwrite cargo test -p gatun --test compile_fail_buffer_stack` after a toolchain
//! change and review the diff.
// trybuild runs cargo, which a Windows test binary under Wine does not have: Unix only.
// What the type system forbids does not depend on the target: checked once, in the native
// x86-64 suite (under qemu each case would be compiled again from an emulated process).
#![cfg(all(unix, target_arch = "x86_64", not(miri)))]

#[test]
#[cfg_attr(miri, ignore)]
fn buffer_stack_compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/buffer_stack/*.rs");
}
