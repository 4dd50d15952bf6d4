//! Property test of downcalls against C: 1,000 random signatures from a fixed-seed generator
//! (tests/prop/sigs.rs) whose C checkers are generated at build time into the test-native
//! library. The mixture leans on the cases where calling conventions differ: HFAs of 1 to 4
//! `float`s or `double`s through nested structs and arrays, near-HFAs, 9-16-byte and larger
//! composites, 16-byte-aligned composites, narrow integers and bools, up to 24 arguments (past
//! every register), variadic calls, and every return class (void, each scalar, HFAs, small and
//! large composites). Each checker hashes every scalar leaf of its arguments, records the hash
//! (`prop_last_hash`) and returns a value derived from it; the test computes the same.
//!
//! Every call runs three ways: `invoke_into` through the handle's compiled stub,
//! `invoke_into` through the trampoline executor (`DowncallHandle::interpreted`), and
//! `invoke_raw`; every handle has a compiled stub (asserted).
//! The checks are the same on every ABI; the mixture is the target's (`PropAbi`: under
//! Microsoft x64 weighted toward 1/2/4/8-byte against other-sized aggregates, all-float
//! structs, floats and integers sharing the four slots, variadic floats, hidden-pointer
//! returns).
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

include!("prop/sigs.rs");
include!("prop/layouts.rs");
include!("prop/downcall.rs");

use std::sync::OnceLock;

use common::*;
use gatun::layout::{MemoryLayout, ScalarKind};
use gatun::linker::DowncallHandle;
use gatun::memory::{MemorySegment, SlicingAllocator};
use proptest::prelude::*;

struct Case {
    shape: PropLayouts,
    /// Linked normally: a compiled stub where the backend has them.
    handle: DowncallHandle,
    /// The same function through the trampoline executor.
    interp: DowncallHandle,
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        prop_signatures(ABI)
            .iter()
            .enumerate()
            .map(|(i, sig)| {
                let shape = PropLayouts::new(i, sig);
                let name = format!("prop_{i}");
                let handle = shape
                    .link(&sym(&name))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(handle.uses_compiled_stub(), "prop_{i}: no stub");
                let interp = handle.interpreted();
                assert!(!interp.uses_compiled_stub(), "prop_{i}");
                Case {
                    shape,
                    handle,
                    interp,
                }
            })
            .collect()
    })
}

/// Calls case `i` with leaf values drawn from `seed` on every path; checks every result.
fn run(i: usize, seed: u64) -> Result<(), String> {
    if cases()[i].handle.uses_compiled_stub() {
        run_with(i, seed, Path::Stub)?;
    }
    run_with(i, seed, Path::Trampoline)?;
    run_with(i, seed, Path::Arguments)?;
    run_with(i, seed, Path::Raw)
}

/// Calls case `i` on `path`, with arguments and results in a buffer on the stack.
fn run_with(i: usize, seed: u64, path: Path) -> Result<(), String> {
    let case = &cases()[i];
    let handle = match path {
        Path::Trampoline => &case.interp,
        Path::Stub | Path::Raw | Path::Arguments => &case.handle,
    };
    let mut mem = [0u64; 1024];
    let bytes: &mut [u8] =
        // SAFETY: plain integers, any byte pattern valid.
        unsafe { std::slice::from_raw_parts_mut(mem.as_mut_ptr().cast(), 8192) };
    let alloc = SlicingAllocator::new(MemorySegment::of_slice(bytes));
    call_prop(i, &case.shape, handle, seed, path, &alloc)
}

#[test]
fn every_generated_signature_once() {
    for i in 0..PROP_SIGNATURES {
        run(i, i as u64 * 7 + 1).unwrap();
    }
    // The slots path ran: the fixed corpus has a few signatures of scalars only (at most
    // eight, four on Windows), not variadic, with a non-bool scalar or void return.
    let slots = SLOTS_CALLS.with(|c| c.get());
    assert!(slots >= 5, "{slots} calls took the slots path");
}

/// The generator's mixture covers every case it is meant to, in fair numbers.
#[test]
fn every_category_is_generated() {
    let sigs = prop_signatures(ABI);
    assert_eq!(sigs.len(), PROP_SIGNATURES);
    for (bit, name) in prop_tags(ABI).iter().enumerate() {
        let n = sigs.iter().filter(|s| s.tags & (1 << bit) != 0).count();
        assert!(n >= 60, "{name}: {n} signatures of {PROP_SIGNATURES}");
    }
    let types = || {
        sigs.iter()
            .flat_map(|s| s.args.iter().chain(s.ret.as_ref()))
    };
    if ABI == PropAbi::Win64 {
        // every aggregate size the convention distinguishes, as arguments and as returns
        for size in [1, 2, 3, 4, 5, 6, 7, 8, 12, 16] {
            let aggregate =
                |t: &&PropTy| matches!(t, PropTy::Struct(..)) && prop_size_align(t).0 == size;
            let n = sigs.iter().flat_map(|s| &s.args).filter(aggregate).count();
            assert!(n >= 20, "{size}-byte aggregate arguments: {n}");
            let n = sigs
                .iter()
                .filter_map(|s| s.ret.as_ref())
                .filter(aggregate)
                .count();
            assert!(n >= 5, "{size}-byte aggregate returns: {n}");
        }
        // all-float structs that travel in an integer register ({float}, {float, float},
        // {double}) and those that go by reference
        for (k, count) in [
            (PROP_F32, 1),
            (PROP_F32, 2),
            (PROP_F64, 1),
            (PROP_F32, 3),
            (PROP_F64, 2),
        ] {
            let n = types()
                .filter(|t| {
                    let mut l = Vec::new();
                    prop_leaves(t, &mut l);
                    matches!(t, PropTy::Struct(..)) && l.len() == count && l.iter().all(|&x| x == k)
                })
                .count();
            assert!(
                n >= 20,
                "all-float structs of {count} {}: {n}",
                PROP_C_TYPES[k]
            );
        }
    } else if ABI == PropAbi::Unix {
        // HFAs of each member type and count
        for k in [PROP_F32, PROP_F64] {
            for count in 1..=4 {
                let n = types()
                    .filter(|t| {
                        let mut l = Vec::new();
                        prop_leaves(t, &mut l);
                        matches!(t, PropTy::Struct(..))
                            && l.len() == count
                            && l.iter().all(|&x| x == k)
                            && prop_size_align(t).0 == count * prop_size_align(&PropTy::Scalar(k)).0
                    })
                    .count();
                assert!(n >= 40, "HFAs of {count} {}: {n}", PROP_C_TYPES[k]);
            }
        }
    }
    // each return scalar kind
    for (k, name) in PROP_C_TYPES.iter().enumerate() {
        let n = sigs
            .iter()
            .filter(|s| s.ret == Some(PropTy::Scalar(k)))
            .count();
        assert!(n >= 10, "{name} returns: {n}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn random_signatures_and_values(i in 0..PROP_SIGNATURES, seed in any::<u64>()) {
        prop_assert_eq!(run(i, seed), Ok(()));
    }
}
