//! The RISC-V 64 (LP64D) property-test mixture (`tests/prop/sigs_lp64d.rs`), checked on every
//! host: each category is generated in fair numbers, and what the generator believes of each
//! signature (its tags) is what gatun's LP64D classifier plans for it — the FP-eligible
//! structs go in FPRs (or FPR + GPR) while registers last, the ineligible ones and those after
//! the FPRs are used up follow the integer rule, the split aggregates really split between
//! `a7` and the stack, variadic floats go in GPRs, 16-byte-aligned variadics start at an even
//! register. Under `qemu-riscv64`, `tests/downcall_prop.rs` and `tests/upcall_prop.rs` call the
//! same signatures against their C checkers.
#![cfg(not(miri))]

include!("prop/sigs.rs");

use gatun::abi::riscv64::plan;
use gatun::abi::{ArgPlan, Location};
use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout as V};

const KINDS: [ScalarKind; 12] = [
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
    ScalarKind::Bool,
];

fn layout(t: &PropTy) -> MemoryLayout {
    match t {
        PropTy::Scalar(k) => V::new(KINDS[*k]).into(),
        PropTy::Struct(f, a16) => {
            let s = MemoryLayout::c_struct(f.iter().map(layout)).unwrap();
            if *a16 && s.byte_alignment() < 16 {
                s.with_byte_alignment(16).unwrap()
            } else {
                s
            }
        }
        PropTy::Array(e, n) => MemoryLayout::sequence_layout(*n, layout(e)).unwrap(),
    }
}

fn is_fpr(a: &ArgPlan) -> bool {
    a.moves.iter().any(|m| matches!(m.to, Location::Vector(_)))
}

#[test]
fn every_lp64d_category_is_generated_and_planned_as_tagged() {
    let sigs = prop_signatures(PropAbi::Lp64d);
    assert_eq!(sigs.len(), PROP_SIGNATURES);
    for (bit, name) in PROP_TAGS_LP64D.iter().enumerate() {
        let n = sigs.iter().filter(|s| s.tags & (1 << bit) != 0).count();
        assert!(n >= 60, "{name}: {n} signatures of {PROP_SIGNATURES}");
    }
    // every scalar kind is returned
    for (k, name) in PROP_C_TYPES.iter().enumerate() {
        let n = sigs
            .iter()
            .filter(|s| s.ret == Some(PropTy::Scalar(k)))
            .count();
        assert!(n >= 10, "{name} returns: {n}");
    }
    let mut checked = [0usize; 5];
    for (i, sig) in sigs.iter().enumerate() {
        let args: Vec<MemoryLayout> = sig.args.iter().map(layout).collect();
        for (a, t) in args.iter().zip(&sig.args) {
            assert_eq!(
                (a.byte_size(), a.byte_alignment()),
                prop_size_align(t),
                "prop_{i}"
            );
        }
        let d = match &sig.ret {
            Some(r) => gatun::FunctionDescriptor::of(layout(r), args),
            None => gatun::FunctionDescriptor::of_void(args),
        };
        let p = plan(&d, sig.first_variadic).unwrap_or_else(|e| panic!("prop_{i}: {e}"));
        let fixed = sig.first_variadic.unwrap_or(sig.args.len());
        let mut fprs_left = 8u32;
        for (j, (t, a)) in sig.args.iter().zip(p.args()).enumerate() {
            let class = prop_lp64d_fp_class(t);
            if j >= fixed {
                // Variadic: never an FPR; a 16-aligned aggregate in registers starts even.
                assert!(!is_fpr(a), "prop_{i} arg {j}: variadic in an FPR");
                if let (PropTy::Struct(..), (_, 16)) = (t, prop_size_align(t)) {
                    if let Some(Location::Int(n)) = a.moves.first().map(|m| m.to) {
                        assert_eq!(n % 2, 0, "prop_{i} arg {j}: odd register");
                        checked[0] += 1;
                    }
                }
                continue;
            }
            let need = match class {
                2 => 2,
                1 | 3 => 1,
                _ => 0,
            };
            match t {
                PropTy::Scalar(PROP_F32 | PROP_F64) => {
                    assert_eq!(is_fpr(a), fprs_left > 0, "prop_{i} arg {j}");
                    fprs_left = fprs_left.saturating_sub(1);
                }
                PropTy::Struct(..) if need > 0 && need <= fprs_left && is_fpr(a) => {
                    fprs_left -= need;
                    checked[1] += 1;
                }
                PropTy::Struct(..) if need > fprs_left || need == 0 => {
                    assert!(!is_fpr(a), "prop_{i} arg {j}: {t:?} in an FPR");
                    checked[2] += 1;
                }
                // Float + integer with FPRs left but no GPR: the integer rule, on the stack.
                PropTy::Struct(..) => {
                    assert_eq!(class, 3, "prop_{i} arg {j}: {t:?} not in FPRs");
                    assert!(a.moves.iter().all(|m| matches!(m.to, Location::Stack(_))));
                }
                _ => {}
            }
        }
        if sig.tags & (1 << 6) != 0 {
            let moves: Vec<Location> = p.args()[7].moves.iter().map(|m| m.to).collect();
            assert_eq!(moves, [Location::Int(7), Location::Stack(0)], "prop_{i}");
            checked[3] += 1;
        }
        if sig.tags & (1 << 12) != 0 {
            let fp_ret = matches!(p.ret(), gatun::abi::ReturnPlan::Registers(m)
                if m.iter().any(|m| matches!(m.from, gatun::abi::Register::Vector(_))));
            assert!(fp_ret, "prop_{i}: {:?}", p.ret());
            checked[4] += 1;
        }
    }
    // Each check above ran in fair numbers.
    assert!(checked.iter().all(|&n| n >= 30), "{checked:?}");
}
