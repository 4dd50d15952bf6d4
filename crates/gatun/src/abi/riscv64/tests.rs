//! LP64D plan unit tests: one per rule of the module docs (named in each test), plans asserted
//! directly (pure data, run on every host). `tests/riscv64_oracle.rs` checks the same plans
//! against gcc's and clang's code generation; `backend::riscv64`'s tests execute them.

use super::*;
use crate::abi::{ArgMove, Conversion, Location};
use crate::error::Error;
use crate::layout::{FunctionDescriptor as FD, MemoryLayout, ValueLayout as V};

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

fn locs(p: &CallPlan, i: usize) -> Vec<Location> {
    p.args[i].moves.iter().map(|m| m.to).collect()
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

#[test]
fn narrow_integers_are_extended_to_32_bits_by_type_then_sign_extended() {
    let p = plan_of(vec![
        v(V::I8),
        v(V::U8),
        v(V::I16),
        v(V::U16),
        v(V::I32),
        v(V::U32),
        v(V::BOOL),
        v(V::U64),
    ]);
    let convs: Vec<Conversion> = p.args.iter().map(|a| a.moves[0].conv).collect();
    use Conversion::{Bool, Bytes, SignExtend};
    // `unsigned int` is sign-extended from bit 31: RV64 keeps 32-bit values sign-extended.
    assert_eq!(
        convs,
        [SignExtend, Bytes, SignExtend, Bytes, SignExtend, SignExtend, Bool, Bytes]
    );
    let locs: Vec<Location> = p.args.iter().map(|a| a.moves[0].to).collect();
    assert_eq!(locs, (0..8).map(Int).collect::<Vec<_>>());
    // On the stack too, and inside a struct passed in FPR + GPR.
    let p = plan_of([vec![v(V::I64); 8], vec![v(V::U32)]].concat());
    assert_eq!(p.args[8].moves[0], mv(0, 4, Stack(0), SignExtend));
    let p = plan_of(vec![st(&[v(V::F32), v(V::U32)])]);
    assert_eq!(p.args[0].moves[1], mv(4, 4, Int(0), SignExtend));
}

#[test]
fn floats_take_fprs_then_gprs_then_the_stack() {
    let mut args = vec![v(V::F64); 8];
    args.extend([v(V::F32), v(V::F64)]);
    args.extend(vec![v(V::I64); 6]);
    args.extend([v(V::F64), v(V::I32)]);
    let p = plan_of(args);
    for i in 0..8 {
        assert_eq!(locs(&p, i), [Vector(i as u8)]);
    }
    // FPRs used up: the float and double follow the integer rule, as raw bits.
    assert_eq!(p.args[8].moves[0], mv(0, 4, Int(0), Conversion::Bytes));
    assert_eq!(p.args[9].moves[0], mv(0, 8, Int(1), Conversion::Bytes));
    assert_eq!(locs(&p, 15), [Int(7)]);
    assert_eq!(locs(&p, 16), [Stack(0)]);
    assert_eq!(locs(&p, 17), [Stack(8)]);
    assert_eq!(p.stack_bytes, 16);
    assert_eq!(p.vector_registers, 8);
}

#[test]
fn variadic_floats_go_in_gprs_promoted_to_double() {
    let d = FD::of(V::I32, [V::ADDRESS, V::F64, V::F32, V::I32]);
    let p = plan(&d, Some(1)).unwrap();
    assert_eq!(p.args[1].moves[0], mv(0, 8, Int(1), Conversion::Bytes));
    assert_eq!(
        p.args[2].moves[0],
        mv(0, 4, Int(2), Conversion::FloatToDouble)
    );
    assert_eq!(locs(&p, 3), [Int(3)]);
    assert_eq!(p.vector_registers, 0);
    // A struct of two doubles is variadic too: the integer rule (two GPRs).
    let d = FD::of_void([v(V::I32), st(&[v(V::F64), v(V::F64)])]);
    assert_eq!(locs(&plan(&d, Some(1)).unwrap(), 1), [Int(1), Int(2)]);
}

#[test]
fn sixteen_aligned_variadics_take_an_even_odd_pair_named_ones_do_not() {
    let a16 = st(&[v(V::I64)]).with_byte_alignment(16).unwrap();
    let a16 = st(&[a16]); // 16 bytes, 16-aligned
    assert_eq!(a16.byte_size(), 16);
    let d = FD::of_void([v(V::I32), a16.clone()]);
    // Variadic: a1 skipped, a2+a3.
    assert_eq!(locs(&plan(&d, Some(1)).unwrap(), 1), [Int(2), Int(3)]);
    // Named: a1+a2.
    assert_eq!(locs(&plan(&d, None).unwrap(), 1), [Int(1), Int(2)]);
    // Variadic with only a7 left: the pair is not split, a7 stays unused, the stack is
    // 16-aligned.
    let mut args = vec![v(V::I64); 7];
    args.push(a16.clone());
    args.push(v(V::I64));
    let p = plan(&FD::of_void(args), Some(7)).unwrap();
    assert_eq!(locs(&p, 7), [Stack(0), Stack(8)]);
    assert_eq!(locs(&p, 8), [Stack(16)]);
}

#[test]
fn structs_of_one_or_two_floats_go_in_fprs_found_through_nesting() {
    let nested = st(&[st(&[v(V::F32)]), seq(1, V::F64)]);
    let p = plan_of(vec![nested.clone()]);
    assert_eq!(
        p.args[0].moves,
        [
            mv(0, 4, Vector(0), Conversion::Bytes),
            mv(8, 8, Vector(1), Conversion::Bytes)
        ]
    );
    // An array of two floats is two leaves; empty struct members are skipped.
    let arr = st(&[empty(), seq(2, V::F32)]);
    assert_eq!(locs(&plan_of(vec![arr]), 0), [Vector(0), Vector(1)]);
    // One float, aligned to 16 (size 16): still one FPR.
    let f16 = st(&[v(V::F32)]).with_byte_alignment(16).unwrap();
    let f16 = st(&[f16]);
    assert_eq!(locs(&plan_of(vec![f16]), 0), [Vector(0)]);
}

#[test]
fn a_float_and_an_integer_go_in_an_fpr_and_a_gpr_in_either_order() {
    let p = plan_of(vec![
        v(V::I32),
        st(&[v(V::I8), v(V::F64)]),
        st(&[v(V::F32), v(V::I64)]),
    ]);
    assert_eq!(
        p.args[1].moves,
        [
            mv(0, 1, Int(1), Conversion::SignExtend),
            mv(8, 8, Vector(0), Conversion::Bytes)
        ]
    );
    assert_eq!(locs(&p, 2), [Vector(1), Int(2)]);
    // A bool is an integer leaf.
    let b = st(&[v(V::F64), v(V::BOOL)]);
    assert_eq!(locs(&plan_of(vec![b]), 0), [Vector(0), Int(0)]);
}

#[test]
fn ineligible_structs_follow_the_integer_rule() {
    let cases = [
        // A pointer leaf.
        st(&[v(V::F64), v(V::ADDRESS)]),
        // Two integers.
        st(&[v(V::I32), v(V::F32), v(V::I32)]),
        // More than two leaves.
        st(&[v(V::F32), v(V::F32), v(V::F32)]),
        // A union member.
        st(&[un(&[v(V::F32)]), v(V::F32)]),
        // A zero-length array, directly or nested (gcc).
        st(&[v(V::F32), seq(0, V::F32), v(V::F32)]),
        st(&[v(V::F32), st(&[seq(0, V::F32)]), v(V::F32)]),
        // An array of empty structs (gcc).
        st(&[v(V::F32), seq(3, empty()), v(V::F32)]),
    ];
    for s in cases {
        assert_eq!(classify(&s), ArgClass::Aggregate { align16: false }, "{s}");
        let p = plan_of(vec![s.clone()]);
        let expected: Vec<Location> = (0..s.byte_size().div_ceil(8) as u8).map(Int).collect();
        assert_eq!(locs(&p, 0), expected, "{s}");
    }
    // A union is never flattened.
    assert_eq!(
        classify(&un(&[v(V::F64)])),
        ArgClass::Aggregate { align16: false }
    );
}

#[test]
fn a_struct_as_large_as_its_only_float_takes_an_fpr_despite_zero_size_members() {
    // Rule "Structs in FPRs", gcc's machine-mode exception: the flattening fails on the
    // zero-length array or the array of empty structs, but the struct is as large as its one
    // `float`/`double`, so gcc passes (and returns) it as that scalar.
    let one = |s: MemoryLayout, kind| {
        assert_eq!(
            classify(&s),
            ArgClass::Floats {
                leaves: [
                    Leaf { kind, offset: 0 },
                    Leaf {
                        kind: ScalarKind::I8,
                        offset: 0
                    }
                ],
                count: 1
            },
            "{s}"
        );
        let p = plan(&FD::of(s.clone(), [s.clone()]), None).unwrap();
        assert_eq!(locs(&p, 0), [Vector(0)], "{s}");
        let size = kind.byte_size() as u8;
        assert_eq!(
            p.ret,
            ReturnPlan::Registers(vec![ReturnMove {
                from: Register::Vector(0),
                offset: 0,
                size
            }]),
            "{s}"
        );
    };
    let f32_ = ScalarKind::F32;
    one(st(&[v(V::F32), seq(0, V::F32)]), f32_);
    one(st(&[v(V::F32), seq(2, empty())]), f32_);
    one(st(&[seq(1, empty()), v(V::F32)]), f32_);
    one(st(&[seq(1, V::F32), st(&[seq(0, V::F32)])]), f32_);
    one(st(&[v(V::F64), st(&[seq(0, V::F32)])]), ScalarKind::F64);
    one(st(&[st(&[v(V::F32), empty()]), seq(1, empty())]), f32_);
    // Not when the struct is larger than the scalar, has two sized members, or is a union.
    for s in [
        st(&[v(V::F32), seq(0, V::F64)]),
        st(&[v(V::F32), seq(0, V::F32), v(V::F32)]),
        st(&[un(&[v(V::F32)])]),
        st(&[v(V::F32), seq(0, V::ADDRESS), v(V::I32)]),
    ] {
        assert_eq!(classify(&s), ArgClass::Aggregate { align16: false }, "{s}");
    }
}

#[test]
fn fp_structs_need_enough_registers_of_each_kind() {
    // One FPR left: a two-float struct takes the integer rule (one GPR for 8 bytes).
    let mut args = vec![v(V::F64); 7];
    args.push(st(&[v(V::F32), v(V::F32)]));
    args.push(v(V::F64));
    let p = plan_of(args);
    assert_eq!(p.args[7].moves, [mv(0, 8, Int(0), Conversion::Bytes)]);
    // The lone double after it still gets fa7.
    assert_eq!(locs(&p, 8), [Vector(7)]);
    // No GPR left: float + int goes on the stack whole.
    let mut args = vec![v(V::I64); 8];
    args.push(st(&[v(V::F64), v(V::I32)]));
    let p = plan_of(args);
    assert_eq!(locs(&p, 8), [Stack(0), Stack(8)]);
    assert_eq!(p.vector_registers, 0);
    // No FPR left: float + int goes in two GPRs.
    let mut args = vec![v(V::F64); 8];
    args.push(st(&[v(V::F64), v(V::I32)]));
    assert_eq!(locs(&plan_of(args), 8), [Int(0), Int(1)]);
}

#[test]
fn aggregates_up_to_16_bytes_in_gprs_split_or_on_the_stack_without_over_reading() {
    let s12 = st(&[v(V::I32), v(V::I32), v(V::I32)]);
    let p = plan_of(vec![s12.clone()]);
    assert_eq!(
        p.args[0].moves,
        [
            mv(0, 8, Int(0), Conversion::Bytes),
            mv(8, 4, Int(1), Conversion::Bytes)
        ]
    );
    // Seven bytes: one move of exactly seven.
    let s7 = st(&[seq(7, V::U8)]);
    assert_eq!(
        plan_of(vec![s7]).args[0].moves,
        [mv(0, 7, Int(0), Conversion::Bytes)]
    );
    // Only a7 left: the first eightbyte in a7, the rest at sp+0.
    let mut args = vec![v(V::I64); 7];
    args.push(s12.clone());
    args.push(v(V::I32));
    let p = plan_of(args);
    assert_eq!(
        p.args[7].moves,
        [
            mv(0, 8, Int(7), Conversion::Bytes),
            mv(8, 4, Stack(0), Conversion::Bytes)
        ]
    );
    assert_eq!(locs(&p, 8), [Stack(8)]);
    assert_eq!(p.stack_bytes, 16);
    // No register left: wholly on the stack; a 16-aligned one at a 16-aligned offset.
    let a16 = st(&[st(&[v(V::I64)]).with_byte_alignment(16).unwrap()]);
    let mut args = vec![v(V::I64); 9];
    args.push(a16);
    let p = plan_of(args);
    assert_eq!(locs(&p, 8), [Stack(0)]);
    assert_eq!(locs(&p, 9), [Stack(16), Stack(24)]);
    assert_eq!(p.stack_bytes, 32);
}

#[test]
fn aggregates_over_16_bytes_go_by_reference() {
    let s24 = st(&[v(V::I64), v(V::I64), v(V::I64)]);
    let mut args = vec![s24.clone()];
    args.extend(vec![v(V::I64); 7]);
    args.push(s24.clone());
    let p = plan_of(args);
    assert_eq!(p.args[0].by_reference, Some(Int(0)));
    assert!(p.args[0].moves.is_empty());
    assert_eq!(p.args[8].by_reference, Some(Stack(0)));
    // An FP-eligible struct made 32 bytes by its alignment, with no FPR left: by reference.
    let f32a = st(&[st(&[v(V::F64)]).with_byte_alignment(32).unwrap()]);
    let mut args = vec![v(V::F64); 8];
    args.push(f32a.clone());
    let p = plan_of(args);
    assert_eq!(p.args[8].by_reference, Some(Int(0)));
    // With an FPR free it is one double in fa0.
    assert_eq!(locs(&plan_of(vec![f32a]), 0), [Vector(0)]);
}

#[test]
fn results_in_a0_a1_fa0_fa1_or_memory_through_a0() {
    let ret = |r: MemoryLayout| plan(&FD::of(r, [V::I32]), None).unwrap();
    assert_eq!(ret(v(V::U32)).ret, ReturnPlan::Scalar(Register::Int(0)));
    assert_eq!(ret(v(V::F32)).ret, ReturnPlan::Scalar(Register::Vector(0)));
    let p = ret(st(&[v(V::F32), v(V::F32)]));
    assert_eq!(
        p.ret,
        ReturnPlan::Registers(vec![
            ReturnMove {
                from: Register::Vector(0),
                offset: 0,
                size: 4
            },
            ReturnMove {
                from: Register::Vector(1),
                offset: 4,
                size: 4
            },
        ])
    );
    let p = ret(st(&[v(V::I16), v(V::F64)]));
    assert_eq!(
        p.ret,
        ReturnPlan::Registers(vec![
            ReturnMove {
                from: Register::Int(0),
                offset: 0,
                size: 2
            },
            ReturnMove {
                from: Register::Vector(0),
                offset: 8,
                size: 8
            },
        ])
    );
    let p = ret(st(&[v(V::I32), v(V::I32), v(V::I32)]));
    assert_eq!(
        p.ret,
        ReturnPlan::Registers(vec![
            ReturnMove {
                from: Register::Int(0),
                offset: 0,
                size: 8
            },
            ReturnMove {
                from: Register::Int(1),
                offset: 8,
                size: 4
            },
        ])
    );
    // Over 16 bytes: in memory, the address in a0, the arguments shifted to a1.
    let p = ret(st(&vec![v(V::I64); 3]));
    assert_eq!(p.ret, ReturnPlan::InMemory);
    assert_eq!(p.hidden_return_pointer, Some(Int(0)));
    assert_eq!(locs(&p, 0), [Int(1)]);
    assert_eq!(describe(&p), "(a0:ret-ptr, a1) -> memory");
}

#[test]
fn invalid_descriptors_are_rejected_like_the_other_abis() {
    let bad = [
        FD::of_void([MemoryLayout::padding_layout(8).unwrap()]),
        FD::of_void([seq(2, V::I32)]),
        FD::of_void([empty()]),
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
    let fits = FD::of_void(vec![V::I64; 8 + slots]);
    assert_eq!(
        plan(&fits, None).unwrap().stack_bytes as usize,
        crate::abi::MAX_STACK_BYTES
    );
    let over = FD::of_void(vec![V::I64; 9 + slots]);
    let e = plan(&over, None).unwrap_err().to_string();
    assert!(e.contains("1048584 bytes of stack"), "{e}");
}

#[test]
fn flattening_is_linear_on_shared_layouts() {
    // 60 levels of a struct holding its inner struct twice: 2^60 paths, 60 distinct nodes,
    // all of them padding (no leaf), so the walk cannot stop early.
    let mut s = st(&[MemoryLayout::padding_layout(1).unwrap()]);
    for _ in 0..30 {
        s = st(&[s.clone(), s.clone()]);
    }
    VISITS.with(|v| v.set(0));
    let _ = classify(&s);
    assert!(
        VISITS.with(|v| v.get()) <= 31,
        "{}",
        VISITS.with(|v| v.get())
    );
    // A huge array of floats stops at once.
    let big = st(&[seq(1 << 40, V::F32)]);
    VISITS.with(|v| v.set(0));
    assert_eq!(classify(&big), ArgClass::Indirect);
    assert!(VISITS.with(|v| v.get()) <= 2);
}

#[test]
fn location_names_and_descriptions() {
    let s = st(&[v(V::F32), v(V::I32)]);
    let big = st(&vec![v(V::I64); 3]);
    let d = FD::of(st(&[v(V::F64), v(V::F64)]), [s, big, v(V::I8)]);
    assert_eq!(
        describe(&plan(&d, None).unwrap()),
        "(fa0+a0, &a1, a2) -> fa0+fa1"
    );
    assert_eq!(location_name(Int(7)), "a7");
}
