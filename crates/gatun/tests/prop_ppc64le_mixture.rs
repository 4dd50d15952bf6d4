//! The PPC64LE (ELFv2) property-test mixture (`tests/prop/sigs_ppc64le.rs`), checked on every
//! host: each category is generated in fair numbers, and what the generator believes of each
//! signature (its tags and its own layout of the arguments) is what gatun's ELFv2 classifier
//! plans for it — HFAs take one FPR per member while `f13` lasts and their image from the
//! doubleword of the first member left after it, floating-point scalars take their doubleword
//! (the shadowed GPR is skipped), variadic floating-point values are in an FPR and a GPR or
//! save-area doubleword at once, 16-byte-aligned aggregates start at an even doubleword, images
//! straddling doubleword 8 split between `r10` and the save area, and results go where the tags
//! say. On powerpc64le, `tests/downcall_prop.rs` and `tests/upcall_prop.rs` call the same
//! signatures against their C checkers.
#![cfg(not(miri))]

include!("prop/sigs.rs");

use gatun::abi::ppc64le::{classify, plan, ArgClass};
use gatun::abi::{ArgPlan, Location, Register, ReturnPlan};
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

fn fprs(a: &ArgPlan) -> usize {
    a.moves
        .iter()
        .filter(|m| matches!(m.to, Location::Vector(_)))
        .count()
}

/// The first save-area doubleword of an argument's image moves (`None`: FPRs only).
fn first_doubleword(a: &ArgPlan) -> Option<usize> {
    a.moves.iter().find_map(|m| {
        let dw = match m.to {
            Location::Int(n) => n as usize,
            Location::Stack(o) => o as usize / 8,
            Location::Vector(_) => return None,
        };
        Some(dw - m.offset as usize / 8)
    })
}

#[test]
fn every_elfv2_category_is_generated_and_planned_as_tagged() {
    let sigs = prop_signatures(PropAbi::ElfV2);
    assert_eq!(sigs.len(), PROP_SIGNATURES);
    for (bit, name) in PROP_TAGS_ELFV2.iter().enumerate() {
        let n = sigs.iter().filter(|s| s.tags & (1 << bit) != 0).count();
        assert!(n >= 40, "{name}: {n} signatures of {PROP_SIGNATURES}");
    }
    // every scalar kind is returned
    for (k, name) in PROP_C_TYPES.iter().enumerate() {
        let n = sigs
            .iter()
            .filter(|s| s.ret == Some(PropTy::Scalar(k)))
            .count();
        assert!(n >= 10, "{name} returns: {n}");
    }
    let mut checked = [0usize; 8];
    for (i, sig) in sigs.iter().enumerate() {
        let args: Vec<MemoryLayout> = sig.args.iter().map(layout).collect();
        for (a, t) in args.iter().zip(&sig.args) {
            assert_eq!(
                (a.byte_size(), a.byte_alignment()),
                prop_size_align(t),
                "prop_{i}"
            );
            // The generator's HFAs are the classifier's.
            let hfa = matches!(classify(a), ArgClass::Hfa { .. });
            assert_eq!(hfa, prop_elfv2_hfa(t).is_some(), "prop_{i}: {t:?}");
        }
        let d = match &sig.ret {
            Some(r) => gatun::FunctionDescriptor::of(layout(r), args),
            None => gatun::FunctionDescriptor::of_void(args),
        };
        let p = plan(&d, sig.first_variadic).unwrap_or_else(|e| panic!("prop_{i}: {e}"));
        let fixed = sig.first_variadic.unwrap_or(sig.args.len());
        let lay = prop_elfv2_layout(sig);
        for (j, (t, a)) in sig.args.iter().zip(p.args()).enumerate() {
            let (got, left, dw, split) = lay.args[j];
            assert_eq!(fprs(a), got, "prop_{i} arg {j}: FPRs");
            if let Some(first) = first_doubleword(a) {
                assert_eq!(first, dw, "prop_{i} arg {j}: first doubleword");
            }
            let image: Vec<Location> = a
                .moves
                .iter()
                .map(|m| m.to)
                .filter(|l| !matches!(l, Location::Vector(_)))
                .collect();
            if split {
                assert!(
                    image.contains(&Location::Int(7)) && image.contains(&Location::Stack(64)),
                    "prop_{i} arg {j}: not split at r10: {image:?}"
                );
                checked[0] += 1;
            }
            if j >= fixed {
                // Variadic: the whole image, and FPRs while they last.
                let dws = prop_size_align(t).0.div_ceil(8);
                assert_eq!(image.len(), dws, "prop_{i} arg {j}: variadic image");
                if got > 0 {
                    checked[1] += 1;
                }
                continue;
            }
            match (t, prop_elfv2_hfa(t)) {
                (PropTy::Scalar(PROP_F32 | PROP_F64), _) => {
                    // An FPR, or the doubleword once f13 is used up.
                    assert_eq!(image.is_empty(), got == 1, "prop_{i} arg {j}");
                    checked[2] += usize::from(got == 0);
                }
                (_, Some((k, n))) if left > 0 && got > 0 => {
                    // Split by f13: the image from the doubleword of member `got`.
                    let es = if k == PROP_F32 { 4 } else { 8 };
                    let from = a.moves[got].offset as usize;
                    assert_eq!(from, got * es / 8 * 8, "prop_{i} arg {j}");
                    assert_eq!(
                        image.len(),
                        (n * es).div_ceil(8) - from / 8,
                        "prop_{i} arg {j}"
                    );
                    checked[3] += 1;
                }
                (_, Some(_)) if left > 0 => {
                    assert_eq!(fprs(a), 0, "prop_{i} arg {j}");
                    checked[4] += 1;
                }
                (_, Some(_)) => assert!(image.is_empty(), "prop_{i} arg {j}: {image:?}"),
                (PropTy::Struct(..), None) if prop_size_align(t).1 >= 16 => {
                    assert_eq!(dw % 2, 0, "prop_{i} arg {j}: odd doubleword");
                    checked[5] += 1;
                }
                _ => {}
            }
        }
        if sig.tags & (1 << 5) != 0 {
            assert_eq!(p.vector_registers(), 13, "prop_{i}");
            checked[6] += 1;
        }
        let ret_from_fprs = matches!(p.ret(), ReturnPlan::Registers(m)
            if m.iter().all(|m| matches!(m.from, Register::Vector(_))));
        if sig.tags & (1 << 13) != 0 {
            assert!(ret_from_fprs, "prop_{i}: {:?}", p.ret());
            checked[7] += 1;
        }
        if sig.tags & (1 << 14) != 0 {
            assert!(
                matches!(p.ret(), ReturnPlan::Registers(m)
                    if m.iter().all(|m| matches!(m.from, Register::Int(_)))),
                "prop_{i}: {:?}",
                p.ret()
            );
        }
        if sig.tags & (1 << 15) != 0 {
            assert_eq!(*p.ret(), ReturnPlan::InMemory, "prop_{i}");
            assert_eq!(p.hidden_return_pointer(), Some(Location::Int(0)));
        }
        assert!(p.stack_bytes() >= 64, "prop_{i}: the save area");
    }
    // Each check above ran in fair numbers.
    assert!(checked.iter().all(|&n| n >= 20), "{checked:?}");
}
