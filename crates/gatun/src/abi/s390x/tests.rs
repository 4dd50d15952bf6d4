//! s390x plan unit tests: one per rule of the module docs (named in each test), plans asserted
//! directly (pure data, run on every host). `tests/s390x_oracle.rs` checks the same plans
//! against gcc's and clang's code generation.

use super::*;
use crate::abi::{ArgMove, Conversion, Location};
use crate::error::Error;
use crate::layout::{FunctionDescriptor as FD, MemoryLayout, ValueLayout as V};

use Conversion::{Bool, Bytes, FloatToDouble, SignExtend};
use Location::{Int, Stack, Vector};

fn st(m: &[MemoryLayout]) -> MemoryLayout {
    MemoryLayout::c_struct(m.iter().cloned()).unwrap()
}

fn un(m: &[MemoryLayout]) -> MemoryLayout {
    MemoryLayout::union_layout(m.iter().cloned()).unwrap()
}

fn v(l: V) -> MemoryLayout {
    l.into()
}

fn seq(n: usize, e: impl Into<MemoryLayout>) -> MemoryLayout {
    MemoryLayout::sequence_layout(n, e).unwrap()
}

fn empty() -> MemoryLayout {
    MemoryLayout::c_struct(Vec::<MemoryLayout>::new()).unwrap()
}

fn pad(n: usize) -> MemoryLayout {
    MemoryLayout::padding_layout(n).unwrap()
}

fn plan_of(args: Vec<MemoryLayout>) -> CallPlan {
    plan(&FD::of_void(args), None).unwrap()
}

fn mv(offset: u32, size: u8, to: Location, conv: Conversion) -> ArgMove {
    ArgMove {
        offset,
        size,
        to,
        conv,
    }
}

/// The single move of every argument (each argument here has exactly one).
fn moves(p: &CallPlan) -> Vec<ArgMove> {
    p.args
        .iter()
        .map(|a| {
            assert_eq!(a.moves.len(), 1, "{a:?}");
            a.moves[0]
        })
        .collect()
}

#[test]
fn integers_take_r2_to_r6_then_stack_slots_extended_by_type() {
    let p = plan_of(vec![
        v(V::I8),
        v(V::U8),
        v(V::I16),
        v(V::U16),
        v(V::I32),
        v(V::U32),
        v(V::BOOL),
        v(V::U64),
        v(V::ADDRESS),
    ]);
    assert_eq!(
        moves(&p),
        [
            mv(0, 1, Int(0), SignExtend),
            mv(0, 1, Int(1), Bytes),
            mv(0, 2, Int(2), SignExtend),
            mv(0, 2, Int(3), Bytes),
            mv(0, 4, Int(4), SignExtend),
            // `unsigned int` is zero-extended on s390x (`llgf`), unlike RV64.
            mv(0, 4, Stack(0), Bytes),
            mv(0, 1, Stack(8), Bool),
            mv(0, 8, Stack(16), Bytes),
            mv(0, 8, Stack(24), Bytes),
        ]
    );
    assert_eq!(p.stack_bytes, 32);
    assert_eq!(p.vector_registers, 0);
    assert_eq!(p.hidden_return_pointer, None);
}

#[test]
fn floats_take_f0_f2_f4_f6_then_stack_slots_counted_apart_from_gprs() {
    let p = plan_of(vec![
        v(V::F32),
        v(V::I32),
        v(V::F64),
        v(V::F64),
        v(V::F32),
        v(V::F32),
        v(V::F64),
        v(V::I64),
    ]);
    assert_eq!(
        moves(&p),
        [
            mv(0, 4, Vector(0), Bytes),
            mv(0, 4, Int(0), SignExtend),
            mv(0, 8, Vector(1), Bytes),
            mv(0, 8, Vector(2), Bytes),
            mv(0, 4, Vector(3), Bytes),
            // Past f6: an 8-byte slot, a `float` right-justified in it (its Bytes value).
            mv(0, 4, Stack(0), Bytes),
            mv(0, 8, Stack(8), Bytes),
            mv(0, 8, Int(1), Bytes),
        ]
    );
    assert_eq!(p.vector_registers, 4);
    assert_eq!(p.stack_bytes, 16);
    assert_eq!(
        describe(&p),
        "(f0, r2, f2, f4, f6, r15+160, r15+168, r3) -> void"
    );
}

#[test]
fn structs_and_unions_of_1_2_4_8_bytes_go_in_one_gpr_as_their_image() {
    let s1 = st(&[v(V::U8)]);
    let s2 = st(&[v(V::I8), v(V::U8)]);
    let s4 = st(&[v(V::I16), v(V::I16)]);
    let s8 = st(&[v(V::I32), v(V::I32)]);
    // All-float members do not make an FPR struct: two floats are an 8-byte integer image.
    let ff = st(&[v(V::F32), v(V::F32)]);
    let u4 = un(&[v(V::F32), v(V::I32)]);
    let u8_ = un(&[v(V::F64)]);
    let p = plan_of(vec![s1, s2, s4, s8, ff, u4, u8_]);
    assert_eq!(
        moves(&p),
        [
            mv(0, 1, Int(0), Bytes),
            mv(0, 2, Int(1), Bytes),
            mv(0, 4, Int(2), Bytes),
            mv(0, 8, Int(3), Bytes),
            mv(0, 8, Int(4), Bytes),
            mv(0, 4, Stack(0), Bytes),
            mv(0, 8, Stack(8), Bytes),
        ]
    );
    assert_eq!(p.vector_registers, 0);
}

#[test]
fn structs_of_other_sizes_go_by_reference_in_a_gpr_or_stack_slot() {
    let sizes = [3usize, 5, 6, 7, 12, 16, 24];
    let mut args: Vec<MemoryLayout> = sizes.iter().map(|&n| st(&[seq(n, V::U8)])).collect();
    // A 16-byte struct of one (16-aligned) double, a 12-byte union.
    let d16 = st(&[v(V::F64)]).with_byte_alignment(16).unwrap();
    let d16 = st(&[d16]);
    args.push(d16);
    args.push(un(&[seq(3, V::F32)]));
    let p = plan_of(args);
    let refs: Vec<Option<Location>> = p.args.iter().map(|a| a.by_reference).collect();
    assert_eq!(
        refs,
        [
            Some(Int(0)),
            Some(Int(1)),
            Some(Int(2)),
            Some(Int(3)),
            Some(Int(4)),
            Some(Stack(0)),
            Some(Stack(8)),
            Some(Stack(16)),
            Some(Stack(24)),
        ]
    );
    assert!(p.args.iter().all(|a| a.moves.is_empty()));
    assert_eq!(p.stack_bytes, 32);
    assert_eq!(
        describe(&p),
        "(&r2, &r3, &r4, &r5, &r6, &r15+160, &r15+168, &r15+176, &r15+184) -> void"
    );
}

#[test]
fn one_float_structs_go_in_an_fpr_found_through_nested_structs_only() {
    let f1 = st(&[v(V::F32)]);
    let d1 = st(&[v(V::F64)]);
    let nested = st(&[st(&[st(&[v(V::F64)])])]);
    // A trailing explicit padding is C's implicit padding: not a member.
    let padded = st(&[v(V::F32), pad(4)]).with_byte_alignment(8).unwrap();
    let p = plan_of(vec![f1.clone(), d1, nested, padded, f1.clone(), f1]);
    assert_eq!(
        moves(&p),
        [
            mv(0, 4, Vector(0), Bytes),
            mv(0, 8, Vector(1), Bytes),
            mv(0, 8, Vector(2), Bytes),
            // The 8-byte image (the float in the high half, gcc's and clang's `ld`).
            mv(0, 8, Vector(3), Bytes),
            // Past f6: a stack slot, the 4-byte image right-justified.
            mv(0, 4, Stack(0), Bytes),
            mv(0, 4, Stack(8), Bytes),
        ]
    );
    assert_eq!(p.vector_registers, 4);
    assert_eq!(
        classify(&st(&[v(V::F32)])),
        ArgClass::FloatStruct { size: 4 }
    );
}

#[test]
fn arrays_unions_and_second_members_end_the_one_float_walk() {
    let cases = [
        // An array of one float: arrays are not walked.
        st(&[seq(1, V::F32)]),
        // A union of one float.
        un(&[v(V::F32)]),
        // A struct holding a union of one float.
        st(&[un(&[v(V::F64)])]),
        // An empty struct member, before or after, counts as a member in C.
        st(&[v(V::F32), empty()]),
        st(&[empty(), v(V::F64)]),
        // A zero-length array member too.
        st(&[v(V::F32), seq(0, V::I32)]),
        // A nested struct of two members.
        st(&[st(&[v(V::F32), empty()])]),
        // A non-float only member.
        st(&[st(&[v(V::I32)])]),
    ];
    for s in cases {
        let size = s.byte_size();
        let p = plan_of(vec![s.clone()]);
        assert_eq!(
            moves(&p),
            [mv(0, size as u8, Int(0), Bytes)],
            "{s} should go in a GPR"
        );
        assert_eq!(classify(&s), ArgClass::Small { size: size as u8 }, "{s}");
    }
}

#[test]
fn variadic_arguments_follow_the_same_rules_with_floats_promoted() {
    let f1 = st(&[v(V::F32)]);
    let s4 = st(&[v(V::I16), v(V::U16)]);
    let d = FD::of(
        V::I32,
        [
            v(V::ADDRESS),
            v(V::F32),
            v(V::F64),
            f1.clone(),
            s4,
            v(V::U8),
            v(V::F32),
            v(V::F32),
            st(&[seq(3, V::U8)]),
        ],
    );
    let p = plan(&d, Some(1)).unwrap();
    assert_eq!(p.first_variadic, Some(1));
    let ms: Vec<ArgMove> = p.args[..8].iter().map(|a| a.moves[0]).collect();
    assert_eq!(
        ms,
        [
            mv(0, 8, Int(0), Bytes),
            // A variadic float becomes a double in an FPR.
            mv(0, 4, Vector(0), FloatToDouble),
            mv(0, 8, Vector(1), Bytes),
            // A variadic one-float struct is not promoted.
            mv(0, 4, Vector(2), Bytes),
            mv(0, 4, Int(1), Bytes),
            mv(0, 1, Int(2), Bytes),
            mv(0, 4, Vector(3), FloatToDouble),
            mv(0, 4, Stack(0), FloatToDouble),
        ]
    );
    assert_eq!(p.args[8].by_reference, Some(Int(3)));
    assert_eq!(p.vector_registers, 4);
    assert_eq!(p.stack_bytes, 8);
}

#[test]
fn results_in_r2_or_f0_and_every_group_in_memory_through_r2() {
    let ret = |r: MemoryLayout| plan(&FD::of(r, [v(V::I32)]), None).unwrap();
    for (r, want) in [
        (v(V::U8), ReturnPlan::Scalar(Register::Int(0))),
        (v(V::I32), ReturnPlan::Scalar(Register::Int(0))),
        (v(V::ADDRESS), ReturnPlan::Scalar(Register::Int(0))),
        (v(V::BOOL), ReturnPlan::Scalar(Register::Int(0))),
        (v(V::F32), ReturnPlan::Scalar(Register::Vector(0))),
        (v(V::F64), ReturnPlan::Scalar(Register::Vector(0))),
    ] {
        let p = ret(r);
        assert_eq!(p.ret, want);
        assert_eq!(p.hidden_return_pointer, None);
        assert_eq!(p.args[0].moves[0].to, Int(0));
    }
    // One-float, tiny, 8-byte and large structs and unions: all in memory, address in r2, the
    // arguments shifted by one GPR (FPRs are not).
    for r in [
        st(&[v(V::F32)]),
        st(&[v(V::F64)]),
        st(&[v(V::U8)]),
        st(&[v(V::I32), v(V::I32)]),
        st(&[seq(3, V::U8)]),
        st(&vec![v(V::I64); 3]),
        un(&[v(V::I32)]),
    ] {
        let p = plan(&FD::of(r.clone(), [v(V::I32), v(V::F64)]), None).unwrap();
        assert_eq!(p.ret, ReturnPlan::InMemory, "{r}");
        assert_eq!(p.hidden_return_pointer, Some(Int(0)));
        assert_eq!(p.args[0].moves[0].to, Int(1));
        assert_eq!(p.args[1].moves[0].to, Vector(0));
        assert_eq!(p.return_image_bytes(), 0);
    }
    // With the pointer in r2, the fifth integer argument goes on the stack.
    let p = plan(&FD::of(st(&[v(V::F32)]), vec![V::I64; 5]), None).unwrap();
    assert_eq!(p.args[4].moves[0].to, Stack(0));
    assert_eq!(
        describe(&p),
        "(r2:ret-ptr, r3, r4, r5, r6, r15+160) -> memory"
    );
    let void = plan(&FD::of_void([]), None).unwrap();
    assert_eq!(void.ret, ReturnPlan::Void);
}

#[test]
fn invalid_descriptors_are_rejected_like_the_other_abis() {
    let bad = [
        FD::of_void([pad(8)]),
        FD::of_void([seq(2, V::I32)]),
        FD::of_void([empty()]),
        FD::of(empty(), []),
    ];
    for d in bad {
        assert!(
            matches!(plan(&d, None), Err(Error::InvalidDescriptor { .. })),
            "{d}"
        );
    }
    let d = FD::of_void([V::I32]);
    assert!(matches!(
        plan(&d, Some(2)),
        Err(Error::InvalidDescriptor { .. })
    ));
}

#[test]
fn the_stack_limit_is_checked() {
    let slots = crate::abi::MAX_STACK_BYTES / 8;
    let fits = FD::of_void(vec![V::I64; 5 + slots]);
    assert_eq!(
        plan(&fits, None).unwrap().stack_bytes as usize,
        crate::abi::MAX_STACK_BYTES
    );
    let over = FD::of_void(vec![V::I64; 6 + slots]);
    let e = plan(&over, None).unwrap_err().to_string();
    assert!(e.contains("1048584 bytes of stack"), "{e}");
}

#[test]
fn huge_and_deep_groups_classify_without_walking_their_bytes() {
    // A struct of 2^40 floats is by reference at once.
    let big = st(&[seq(1 << 40, V::F32)]);
    assert_eq!(classify(&big), ArgClass::Indirect);
    // A deep one-member chain ends in its float.
    let mut s = v(V::F64);
    for _ in 0..60 {
        s = st(&[s]);
    }
    assert_eq!(classify(&s), ArgClass::FloatStruct { size: 8 });
}

#[test]
fn names_and_the_abi_dispatch() {
    assert_eq!(location_name(Int(4)), "r6");
    assert_eq!(location_name(Vector(3)), "f6");
    assert_eq!(location_name(Stack(0)), "r15+160");
    let d = FD::of(
        V::F64,
        [v(V::I32), st(&[v(V::F32)]), st(&[seq(5, V::U8)]), v(V::F32)],
    );
    let p = crate::abi::plan_for(crate::abi::Abi::S390x, &d, None).unwrap();
    assert_eq!(p, plan(&d, None).unwrap());
    assert_eq!(
        crate::abi::Abi::S390x.describe(&p),
        "(r2, f0, &r3, f2) -> f0"
    );
}
