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
#![cfg(all(
    any(
        all(
            any(target_arch = "x86_64", target_arch = "aarch64"),
            target_os = "linux"
        ),
        all(target_arch = "x86_64", windows)
    ),
    not(miri)
))]

mod common;

include!("prop/sigs.rs");

use std::sync::OnceLock;

use common::*;
use gatun::layout::{MemoryLayout, ScalarKind};
use gatun::linker::{DowncallHandle, FunctionDescriptor as FD, LinkerOption};
use gatun::memory::{MemorySegment, SegmentAllocator, SlicingAllocator};
use gatun::Value;
use proptest::prelude::*;

include!("prop/layouts.rs");

struct Case {
    /// Linked normally: a compiled stub where the backend has them.
    handle: DowncallHandle,
    /// The same function through the trampoline executor.
    interp: DowncallHandle,
    args: Vec<(MemoryLayout, Vec<(usize, usize)>)>,
    /// `None` for void.
    ret: Option<(MemoryLayout, Vec<(usize, usize)>)>,
    first_variadic: Option<usize>,
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        prop_signatures(ABI)
            .iter()
            .enumerate()
            .map(|(i, sig)| {
                let shaped = |t: &PropTy| {
                    let l = layout(t);
                    let (size, align) = prop_size_align(t);
                    assert_eq!(
                        (l.byte_size(), l.byte_alignment()),
                        (size, align),
                        "prop_{i}: {l} vs the C rules for {t:?}"
                    );
                    let mut leaves = Vec::new();
                    leaf_offsets(&l, t, 0, &mut leaves);
                    (l, leaves)
                };
                let args: Vec<_> = sig.args.iter().map(shaped).collect();
                let ret = sig.ret.as_ref().map(shaped);
                let arg_layouts = args.iter().map(|(l, _)| l.clone());
                let d = match &ret {
                    Some((l, _)) => FD::of(l.clone(), arg_layouts),
                    None => FD::of_void(arg_layouts),
                };
                let opts: Vec<LinkerOption> = sig
                    .first_variadic
                    .map(LinkerOption::FirstVariadicArg)
                    .into_iter()
                    .collect();
                let handle = link_with(&format!("prop_{i}"), &d, &opts);
                assert!(handle.uses_compiled_stub(), "prop_{i}: no stub");
                let interp = handle.interpreted();
                assert!(!interp.uses_compiled_stub(), "prop_{i}");
                Case {
                    interp,
                    handle,
                    first_variadic: sig.first_variadic,
                    args,
                    ret,
                }
            })
            .collect()
    })
}

/// `prop_last_hash()`: the hash the last checker called on this thread computed.
fn last_hash() -> u64 {
    static H: OnceLock<DowncallHandle> = OnceLock::new();
    let h = H.get_or_init(|| link("prop_last_hash", &FD::of(V::U64, [])));
    // SAFETY: `uint64_t prop_last_hash(void)` reads a thread-local.
    match unsafe { h.invoke(&[]) }.unwrap() {
        Value::U64(v) => v,
        v => panic!("prop_last_hash returned {v:?}"),
    }
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random leaf payload of `kind` (a bool is 0 or 1).
fn leaf_raw(kind: ScalarKind, s: &mut u64) -> u64 {
    let raw = splitmix(s);
    if kind == ScalarKind::Bool {
        raw & 1
    } else {
        raw
    }
}

/// The 64-bit value C's `MIX*` sees for a leaf whose stored bytes are the low bytes of `raw`.
fn c_bits(kind: ScalarKind, raw: u64) -> u64 {
    let n = kind.byte_size() as u32 * 8;
    let low = if n == 64 {
        raw
    } else {
        raw & ((1u64 << n) - 1)
    };
    if kind.is_signed() && n < 64 {
        (((low << (64 - n)) as i64) >> (64 - n)) as u64
    } else {
        low
    }
}

/// How a call is made.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `invoke_into` on the linked handle (its compiled stub, where there is one).
    Stub,
    /// `invoke_into` on `interpreted()`.
    Trampoline,
    /// `invoke_raw` on the linked handle.
    Raw,
    /// `invoke_arguments` (`invoke_arguments_into` for a struct return) on the linked handle,
    /// with an `Arguments` list.
    Arguments,
}

thread_local! {
    /// How many calls on this thread took `invoke_arguments`' slots path.
    static SLOTS_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
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

/// Compares the returned bytes of every leaf with what the checker stores.
fn check_leaves(
    i: usize,
    p: Path,
    h: u64,
    leaves: &[(usize, usize)],
    bytes: &[u8],
) -> Result<(), String> {
    for (idx, &(off, k)) in leaves.iter().enumerate() {
        let n = KINDS[k].byte_size();
        let want = ret_leaf(h, idx, k).to_le_bytes();
        if bytes[off..off + n] != want[..n] {
            return Err(format!(
                "prop_{i} ({p:?}): return leaf {idx} ({}) at byte {off}: got {:?}, want {:?}",
                PROP_C_TYPES[k],
                &bytes[off..off + n],
                &want[..n]
            ));
        }
    }
    Ok(())
}

fn run_with(i: usize, seed: u64, path: Path) -> Result<(), String> {
    let case = &cases()[i];
    let handle = match path {
        Path::Trampoline => &case.interp,
        Path::Stub | Path::Raw | Path::Arguments => &case.handle,
    };
    let mut s = seed;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ i as u64;
    let mut mem = [0u64; 1024];
    let bytes: &mut [u8] =
        // SAFETY: plain integers, any byte pattern valid.
        unsafe { std::slice::from_raw_parts_mut(mem.as_mut_ptr().cast(), 8192) };
    let alloc = SlicingAllocator::new(MemorySegment::of_slice(bytes));
    let mut vals: Vec<Value> = Vec::new();
    let mut segs: Vec<MemorySegment> = Vec::new();
    for (j, (l, leaves)) in case.args.iter().enumerate() {
        let seg = alloc
            .allocate(l.byte_size(), l.byte_alignment().max(8))
            .unwrap();
        seg.fill(0);
        match l {
            MemoryLayout::Value(v) => {
                let raw = leaf_raw(v.kind(), &mut s);
                let variadic = case.first_variadic.is_some_and(|f| j >= f);
                let bits = if variadic && v.kind() == ScalarKind::F32 {
                    // promoted to double; the checker hashes the double
                    (f32::from_bits(raw as u32) as f64).to_bits()
                } else {
                    c_bits(v.kind(), raw)
                };
                h = (h ^ bits).wrapping_mul(0x100_0000_01b3);
                seg.copy_from_slice(0, &raw.to_le_bytes()[..v.byte_size()])
                    .unwrap();
                vals.push(value_from_bits(v.kind(), raw));
            }
            _ => {
                for &(off, k) in leaves {
                    let kind = KINDS[k];
                    let raw = leaf_raw(kind, &mut s);
                    seg.copy_from_slice(off, &raw.to_le_bytes()[..kind.byte_size()])
                        .unwrap();
                    h = (h ^ c_bits(kind, raw)).wrapping_mul(0x100_0000_01b3);
                }
                vals.push(Value::Segment(seg));
            }
        }
        segs.push(seg);
    }
    let ret_bytes: Option<Vec<u8>> = match path {
        Path::Raw => {
            let ptrs: Vec<*const u8> = segs.iter().map(|s| s.as_ptr() as *const u8).collect();
            let dest = case.ret.as_ref().map(|(l, _)| {
                let d = alloc
                    .allocate(l.byte_size(), l.byte_alignment().max(16))
                    .unwrap();
                d.fill(0);
                d
            });
            let ret_ptr = dest.map_or(std::ptr::null_mut(), |d| d.as_ptr());
            // SAFETY: the checker's C type is exactly the descriptor; every argument has its
            // layout's bytes; `dest` has the return layout's size and alignment; pointers are
            // never dereferenced by the checker.
            unsafe { handle.invoke_raw(&ptrs, ret_ptr) }.map_err(|e| e.to_string())?;
            dest.map(|d| d.to_vec())
        }
        Path::Stub | Path::Trampoline | Path::Arguments => {
            let got = if let Path::Arguments = path {
                let mut list = gatun::Arguments::<24>::new();
                vals.iter().for_each(|v| {
                    list.value(*v);
                });
                if handle.takes_slots_path(&list) {
                    SLOTS_CALLS.with(|c| c.set(c.get() + 1));
                }
                match case.ret {
                    // SAFETY: as above.
                    Some((MemoryLayout::Value(_), _)) | None => unsafe {
                        handle.invoke_arguments(&list)
                    },
                    // SAFETY: as above.
                    Some(_) => unsafe { handle.invoke_arguments_into(&alloc, &list) },
                }
            } else {
                // SAFETY: as above.
                unsafe { handle.invoke_into(&alloc, &vals) }
            }
            .map_err(|e| e.to_string())?;
            match (&case.ret, got) {
                (None, Value::Void) => None,
                (None, v) => return Err(format!("prop_{i} ({path:?}): void returned {v:?}")),
                (Some((MemoryLayout::Value(v), _)), got) => {
                    if got.scalar_kind() != Some(v.kind()) {
                        return Err(format!("prop_{i} ({path:?}): got {got:?}, want a {v}"));
                    }
                    let d = alloc.allocate(8, 8).unwrap();
                    d.set_value(v, 0, &got).unwrap();
                    Some(d.to_vec())
                }
                (Some(_), got) => {
                    let seg = got.as_segment().ok_or_else(|| {
                        format!("prop_{i} ({path:?}): got {got:?}, want a segment")
                    })?;
                    Some(seg.to_vec())
                }
            }
        }
    };
    let seen = last_hash();
    if seen != h {
        return Err(format!(
            "prop_{i} ({path:?}): the checker hashed its arguments to {seen:#x}, want {h:#x}"
        ));
    }
    if let (Some((_, leaves)), Some(bytes)) = (&case.ret, ret_bytes) {
        check_leaves(i, path, h, leaves, &bytes)?;
    }
    Ok(())
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
    } else {
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
