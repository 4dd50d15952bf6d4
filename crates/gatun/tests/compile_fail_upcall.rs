//! Compile-fail tests for upcalls: the closure must be `Send + Sync` (dynamic and typed), a
//! confined stub (dynamic and typed) is not `Send`, `UpcallFn` is sealed (no crate can supply
//! its own trampoline address), a typed upcall's closure must have the signature's exact
//! types, struct argument segments cannot escape the upcall, and a stub cannot outlive its
//! arena. The expected compiler output
//! is in `tests/compile_fail/upcall/*.stderr`; regenerate with
//! `TRYBUILD=overwrite cargo test -p gatun --test compile_fail_upcall` after a toolchain change
//! and review the diff.
// trybuild runs cargo, which a Windows test binary under Wine does not have: Unix only.
// What the type system forbids does not depend on the target: checked once, in the native
// x86-64 suite (under qemu each case would be compiled again from an emulated process).
#![cfg(all(unix, target_arch = "x86_64", not(miri)))]

#[test]
#[cfg_attr(miri, ignore)]
fn upcall_compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/upcall/*.rs");
}
