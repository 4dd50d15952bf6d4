//! Compile-fail tests for `Arguments`' capacity bound: `N` over `Arguments::MAX_CAPACITY`
//! fails the build where `Arguments::new` or `Default` is instantiated, and `N` at the bound
//! builds and runs. The bound is a constant evaluated after monomorphization, which
//! `cargo check` does not reach: the passing case makes trybuild run `cargo build` for all
//! cases. The expected compiler output is in `tests/compile_fail/arguments/*.stderr`;
//! regenerate with `TRYBUILD=overwrite cargo test -p gatun --test compile_fail_arguments` after
//! a toolchain change and review the diff.
// trybuild runs cargo, which a Windows test binary under Wine does not have: Unix only.
// What the type system forbids does not depend on the target: checked once, in the native
// x86-64 suite (under qemu each case would be compiled again from an emulated process).
#![cfg(all(unix, target_arch = "x86_64", not(miri)))]

#[test]
fn arguments_capacity_bound() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/compile_fail/arguments/pass/*.rs");
    cases.compile_fail("tests/compile_fail/arguments/*.rs");
}
