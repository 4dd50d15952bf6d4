//! Compile-fail tests of [`gatun::memory::PooledArena`]: it is `!Send`, and its segments cannot
//! outlive it (nor can it outlive its pool).
// trybuild runs cargo, which a Windows test binary under Wine does not have: Unix only.
// What the type system forbids does not depend on the target: checked once, in the native
// x86-64 suite (under qemu each case would be compiled again from an emulated process).
#![cfg(all(unix, target_arch = "x86_64", not(miri)))]

#[test]
fn arena_pool_compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/arena_pool/*.rs");
}
