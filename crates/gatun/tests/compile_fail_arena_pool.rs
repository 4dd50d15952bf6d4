//! Compile-fail tests of [`gatun::memory::PooledArena`]: it is `!Send`, and its segments cannot
//! outlive it (nor can it outlive its pool).
// trybuild runs cargo, which a Windows test binary under Wine does not have: Unix only.
#![cfg(all(unix, not(miri)))]

#[test]
fn arena_pool_compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/arena_pool/*.rs");
}
