//! Property test: 1,000 random signatures (up to 16 arguments, so the stack is used, over i8..i64, u8..u64, f32, f64,
//! pointers and structs of up to 4 fields, nested) against C checkers generated at build time
//! from the same fixed-seed generator (tests/prop/sigs.rs). Each checker hashes every scalar
//! leaf of its arguments and returns a value derived from the hash; we compute the same here.
//! Every call runs twice: through the handle's compiled stub and through the trampoline.
#![cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]

mod common;

include!("prop/sigs.rs");

use std::sync::OnceLock;

use common::*;
use gatun::layout::{MemoryLayout, ScalarKind};
use gatun::linker::{DowncallHandle, FunctionDescriptor as FD, LinkerOption};
use gatun::memory::{MemorySegment, SegmentAllocator, SlicingAllocator};
use gatun::Value;
use proptest::prelude::*;

const KINDS: [ScalarKind; 11] = [
    ScalarKind::I8,
    ScalarKind::I16,
    ScalarKind::I32,
    ScalarKind::I64,
    ScalarKind::U8,
    ScalarKind::U16,
    ScalarKind::U32,
    ScalarKind::U64,
    ScalarKind::F32,
    ScalarKind::F64,
    ScalarKind::Pointer,
];

fn layout(t: &PropTy) -> MemoryLayout {
    match t {
        PropTy::Scalar(k) => V::new(KINDS[*k]).into(),
        PropTy::Struct(f) => MemoryLayout::c_struct(f.iter().map(layout)).unwrap(),
    }
}

/// (byte offset, kind id) of every scalar leaf, in declaration order.
fn leaf_offsets(l: &MemoryLayout, t: &PropTy, base: usize, out: &mut Vec<(usize, usize)>) {
    match (l, t) {
        (_, PropTy::Scalar(k)) => out.push((base, *k)),
        (MemoryLayout::Struct(s), PropTy::Struct(f)) => {
            for ((off, m), ft) in s.fields().zip(f) {
                leaf_offsets(m, ft, base + off, out);
            }
        }
        _ => unreachable!(),
    }
}

struct Case {
    /// Linked normally: a compiled stub.
    handle: DowncallHandle,
    /// The same function through the trampoline executor.
    interp: DowncallHandle,
    args: Vec<(MemoryLayout, Vec<(usize, usize)>)>,
    ret: (MemoryLayout, Vec<(usize, usize)>),
    ret_is_struct: bool,
    first_variadic: Option<usize>,
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        prop_signatures()
            .iter()
            .enumerate()
            .map(|(i, sig)| {
                let args: Vec<_> = sig
                    .args
                    .iter()
                    .map(|a| {
                        let l = layout(a);
                        let mut leaves = Vec::new();
                        leaf_offsets(&l, a, 0, &mut leaves);
                        (l, leaves)
                    })
                    .collect();
                let rl = layout(&sig.ret);
                let mut rleaves = Vec::new();
                leaf_offsets(&rl, &sig.ret, 0, &mut rleaves);
                let d = FD::of(rl.clone(), args.iter().map(|(l, _)| l.clone()));
                let opts: Vec<LinkerOption> = sig
                    .first_variadic
                    .map(LinkerOption::FirstVariadicArg)
                    .into_iter()
                    .collect();
                let handle = link_with(&format!("prop_{i}"), &d, &opts);
                assert!(handle.uses_compiled_stub(), "prop_{i}: no stub");
                Case {
                    interp: handle.interpreted(),
                    handle,
                    first_variadic: sig.first_variadic,
                    args,
                    ret: (rl, rleaves),
                    ret_is_struct: matches!(sig.ret, PropTy::Struct(_)),
                }
            })
            .collect()
    })
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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

/// The bytes C stores for return leaf `idx` of kind id `k`.
fn ret_leaf(h: u64, idx: usize, k: usize) -> u64 {
    let v = h.wrapping_add((idx as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    match k {
        8 => (((v >> 40) as i32) as f32).to_bits() as u64,
        9 => (((v >> 12) as i64) as f64).to_bits(),
        _ => v,
    }
}

/// Calls case `i` with leaf values drawn from `seed` through the compiled stub and through the
/// trampoline; checks both results.
fn run(i: usize, seed: u64) -> Result<(), String> {
    run_with(i, seed, false)?;
    run_with(i, seed, true)
}

fn run_with(i: usize, seed: u64, interpreted: bool) -> Result<(), String> {
    let case = &cases()[i];
    let handle = if interpreted {
        &case.interp
    } else {
        &case.handle
    };
    let mut s = seed;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ i as u64;
    let mut mem = [0u64; 512];
    let bytes: &mut [u8] =
        // SAFETY: plain integers, any byte pattern valid.
        unsafe { std::slice::from_raw_parts_mut(mem.as_mut_ptr().cast(), 4096) };
    let alloc = SlicingAllocator::new(MemorySegment::of_slice(bytes));
    let mut vals: Vec<Value> = Vec::new();
    for (j, (l, leaves)) in case.args.iter().enumerate() {
        match l {
            MemoryLayout::Value(v) => {
                let raw = splitmix(&mut s);
                let variadic = case.first_variadic.is_some_and(|f| j >= f);
                let bits = if variadic && v.kind() == ScalarKind::F32 {
                    // promoted to double; the checker hashes the double
                    (f32::from_bits(raw as u32) as f64).to_bits()
                } else {
                    c_bits(v.kind(), raw)
                };
                h = (h ^ bits).wrapping_mul(0x100_0000_01b3);
                vals.push(value_from_bits(v.kind(), raw));
            }
            _ => {
                let seg = alloc.allocate_layout(l).unwrap();
                for &(off, k) in leaves {
                    let kind = KINDS[k];
                    let raw = splitmix(&mut s);
                    seg.copy_from_slice(off, &raw.to_le_bytes()[..kind.byte_size()])
                        .unwrap();
                    h = (h ^ c_bits(kind, raw)).wrapping_mul(0x100_0000_01b3);
                }
                vals.push(Value::Segment(seg));
            }
        }
    }
    // SAFETY: the checker's C type is exactly the descriptor; pointers are never dereferenced.
    let got = unsafe { handle.invoke_into(&alloc, &vals) }.map_err(|e| e.to_string())?;
    let (_, rleaves) = &case.ret;
    if case.ret_is_struct {
        let seg = got.as_segment().ok_or("expected a segment")?;
        for (idx, &(off, k)) in rleaves.iter().enumerate() {
            let n = KINDS[k].byte_size();
            let mut b = [0u8; 8];
            seg.copy_to_slice(off, &mut b[..n]).unwrap();
            let want = ret_leaf(h, idx, k).to_le_bytes();
            if b[..n] != want[..n] {
                return Err(format!(
                    "prop_{i}: return leaf {idx} at {off}: got {:?}, want {:?}",
                    &b[..n],
                    &want[..n]
                ));
            }
        }
    } else {
        let k = rleaves[0].1;
        let want = value_from_bits(KINDS[k], ret_leaf(h, 0, k));
        let same = match (got, want) {
            (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
            (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits(),
            (a, b) => a == b,
        };
        if !same {
            return Err(format!("prop_{i}: got {got:?}, want {want:?}"));
        }
    }
    Ok(())
}

#[test]
fn every_generated_signature_once() {
    for i in 0..PROP_SIGNATURES {
        run(i, i as u64 * 7 + 1).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn random_signatures_and_values(i in 0..PROP_SIGNATURES, seed in any::<u64>()) {
        prop_assert_eq!(run(i, seed), Ok(()));
    }
}
