//! The s390x property-test mixture (`tests/prop/sigs_s390x.rs`), checked on every host: each
//! category is generated in fair numbers, and what the generator believes of each signature
//! (its classes and tags) is what gatun's s390x classifier plans for it — integer-class scalars
//! and 1/2/4/8-byte structs in `r2..r6` then 8-byte stack slots, floats and one-float structs
//! in `f0, f2, f4, f6` then stack slots, every other struct by reference, a variadic `float`
//! promoted, every struct result through `r2`. Under `qemu-s390x`, once gatun executes s390x,
//! `tests/downcall_prop.rs` and `tests/upcall_prop.rs` call the same signatures against their C
//! checkers.
#![cfg(not(miri))]

include!("prop/sigs.rs");

use gatun::abi::s390x::plan;
use gatun::abi::{Conversion, Location, Register, ReturnPlan};
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

/// The conversion of an integer-class scalar of kind id `k`: sign-extended if signed, a bool
/// normalised, everything else zero-extended.
fn int_conversion(k: usize) -> Conversion {
    match KINDS[k] {
        ScalarKind::Bool => Conversion::Bool,
        kind if kind.is_signed() && kind.byte_size() < 8 => Conversion::SignExtend,
        _ => Conversion::Bytes,
    }
}

#[test]
fn every_s390x_category_is_generated_and_planned_as_classified() {
    let sigs = prop_signatures(PropAbi::S390x);
    assert_eq!(sigs.len(), PROP_SIGNATURES);
    for (bit, name) in PROP_TAGS_S390X.iter().enumerate() {
        let n = sigs.iter().filter(|s| s.tags & (1 << bit) != 0).count();
        eprintln!("{n:5}  {name}");
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
    // every struct size the convention distinguishes, as an argument
    for size in [1, 2, 3, 4, 5, 6, 7, 8, 12, 16] {
        let n = sigs
            .iter()
            .flat_map(|s| &s.args)
            .filter(|t| matches!(t, PropTy::Struct(..)) && prop_size_align(t).0 == size)
            .count();
        assert!(n >= 20, "{size}-byte struct arguments: {n}");
    }
    // Checks by class: 0 integer, 1 float, 2 small struct, 3 one-float struct, 4 by reference;
    // then stack-slot moves and struct returns.
    let mut checked = [0usize; 7];
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
        let struct_ret = matches!(sig.ret, Some(PropTy::Struct(..)));
        // The expected registers and stack slots, assigned left to right.
        let (mut gprs, mut fprs, mut stack) = (u8::from(struct_ret), 0u8, 0u32);
        let mut next = |fpr: bool| -> Location {
            let (n, max, mk): (&mut u8, u8, fn(u8) -> Location) = if fpr {
                (&mut fprs, 4, Location::Vector)
            } else {
                (&mut gprs, 5, Location::Int)
            };
            if *n < max {
                *n += 1;
                mk(*n - 1)
            } else {
                stack += 8;
                Location::Stack(stack - 8)
            }
        };
        for (j, (t, a)) in sig.args.iter().zip(p.args()).enumerate() {
            let class = prop_s390x_class(t);
            let size = prop_size_align(t).0 as u8;
            let to = next(matches!(class, 1 | 3));
            let what = format!("prop_{i} arg {j} {t:?}: {a:?}");
            if class == 4 {
                assert_eq!(a.by_reference, Some(to), "{what}");
                assert!(a.moves.is_empty(), "{what}");
                checked[4] += 1;
                continue;
            }
            assert_eq!(a.by_reference, None, "{what}");
            assert_eq!(a.moves.len(), 1, "{what}");
            let m = a.moves[0];
            assert_eq!((m.offset, m.size, m.to), (0, size, to), "{what}");
            let conv = match t {
                PropTy::Scalar(PROP_F32) if j >= fixed => Conversion::FloatToDouble,
                PropTy::Scalar(k) if class == 0 => int_conversion(*k),
                _ => Conversion::Bytes,
            };
            assert_eq!(m.conv, conv, "{what}");
            checked[class as usize] += 1;
            if matches!(to, Location::Stack(_)) && size < 8 {
                checked[5] += 1;
            }
        }
        assert_eq!(p.stack_bytes(), stack, "prop_{i}");
        assert_eq!(p.vector_registers(), fprs, "prop_{i}");
        let want_ret = match &sig.ret {
            None => ReturnPlan::Void,
            Some(PropTy::Scalar(PROP_F32 | PROP_F64)) => ReturnPlan::Scalar(Register::Vector(0)),
            Some(PropTy::Scalar(_)) => ReturnPlan::Scalar(Register::Int(0)),
            Some(_) => {
                checked[6] += 1;
                ReturnPlan::InMemory
            }
        };
        assert_eq!(*p.ret(), want_ret, "prop_{i}");
        assert_eq!(
            p.hidden_return_pointer(),
            struct_ret.then_some(Location::Int(0)),
            "prop_{i}"
        );
    }
    // Each check above ran in fair numbers.
    eprintln!("checked by class, stack slots, struct returns: {checked:?}");
    assert!(checked.iter().all(|&n| n >= 30), "{checked:?}");
}
