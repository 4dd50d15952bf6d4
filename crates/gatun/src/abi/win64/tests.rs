//! Win64 plan unit tests: one per rule of the module documentation, plans asserted directly
//! (pure data, run on every host). `tests/win64_oracle.rs` checks plans against mingw-w64 gcc's
//! code generation.

use super::*;
use crate::abi::{ArgMove, Conversion, Location, MAX_STACK_BYTES};
use crate::error::Error;
use crate::layout::{FunctionDescriptor as FD, MemoryLayout, ValueLayout as V};

use Location::{Int, Stack, Vector};

fn st(m: &[MemoryLayout]) -> MemoryLayout {
    MemoryLayout::c_struct(m.iter().cloned()).unwrap()
}

fn v(l: V) -> MemoryLayout {
    l.into()
}

/// Each argument's destinations (by-reference ones as their pointer's location).
fn dests(p: &CallPlan) -> Vec<Vec<Location>> {
    p.args()
        .iter()
        .map(|a| match a.by_reference {
            Some(l) => vec![l],
            None => a.moves.iter().map(|m| m.to).collect(),
        })
        .collect()
}

#[test]
fn slots_are_shared_by_integer_and_float_arguments() {
    let p = plan(&FD::of_void([V::F64, V::I32, V::F32, V::I64]), None).unwrap();
    assert_eq!(
        dests(&p),
        [vec![Vector(0)], vec![Int(1)], vec![Vector(2)], vec![Int(3)]]
    );
    assert_eq!(p.vector_registers(), 2);
    assert_eq!(describe(&p), "(xmm0, rdx, xmm2, r9) -> void");
    // A float is passed as itself (4 bytes), not promoted, when named.
    assert_eq!(p.args()[2].moves[0].size, 4);
    assert_eq!(p.args()[2].moves[0].conv, Conversion::Bytes);
}

#[test]
fn narrow_integers_are_widened_and_bools_normalised() {
    let p = plan(&FD::of_void([V::I8, V::U16, V::BOOL, V::ADDRESS]), None).unwrap();
    let convs: Vec<Conversion> = p.args().iter().map(|a| a.moves[0].conv).collect();
    assert_eq!(
        convs,
        [
            Conversion::SignExtend,
            Conversion::Bytes,
            Conversion::Bool,
            Conversion::Bytes
        ]
    );
    assert_eq!(describe(&p), "(rcx, rdx, r8, r9) -> void");
}

#[test]
fn stack_arguments_follow_the_32_byte_shadow_space() {
    let args = [V::I32, V::I32, V::I32, V::I32, V::F64, V::I8, V::F32];
    let p = plan(&FD::of_void(args), None).unwrap();
    assert_eq!(
        dests(&p)[4..],
        [vec![Stack(32)], vec![Stack(40)], vec![Stack(48)]]
    );
    // 32 bytes of shadow space + 3 slots.
    assert_eq!(p.stack_bytes(), 32 + 24);
    assert_eq!(p.vector_registers(), 0);
    assert_eq!(
        describe(&p),
        "(rcx, rdx, r8, r9, rsp+32, rsp+40, rsp+48) -> void"
    );
}

#[test]
fn shadow_space_is_reserved_for_every_call() {
    for n in 0..=4 {
        let p = plan(&FD::of_void(vec![V::I64; n]), None).unwrap();
        assert_eq!(p.stack_bytes(), SHADOW_SPACE_BYTES, "{n} arguments");
    }
    assert_eq!(plan(&FD::of(V::I32, []), None).unwrap().stack_bytes(), 32);
}

#[test]
fn aggregates_of_1_2_4_8_bytes_go_in_a_gpr_even_all_float() {
    let cases = [
        st(&[v(V::I8)]),
        st(&[v(V::I8), v(V::I8)]),
        st(&[v(V::F32)]),
        st(&[v(V::F32), v(V::F32)]),
        st(&[v(V::F64)]),
        st(&[v(V::I16), v(V::I8), v(V::I8), v(V::I32)]),
    ];
    for s in cases {
        let size = s.byte_size();
        let p = plan(&FD::of_void([v(V::F64), s.clone()]), None).unwrap();
        assert_eq!(
            p.args()[1].moves,
            [ArgMove {
                offset: 0,
                size: size as u8,
                to: Int(1),
                conv: Conversion::Bytes
            }],
            "{s}"
        );
        assert_eq!(p.args()[1].by_reference, None);
        assert_eq!(p.vector_registers(), 1, "{s}");
    }
}

#[test]
fn other_aggregates_are_passed_by_reference() {
    let cases = [
        st(&[v(V::I8), v(V::I8), v(V::I8)]),    // 3
        st(&[v(V::I16), v(V::I16), v(V::I16)]), // 6
        st(&[v(V::I32), v(V::I32), v(V::I32)]), // 12
        st(&[v(V::F64), v(V::F64)]),            // 16, all double
        st(&[v(V::I64), v(V::I64), v(V::I64)]), // 24
    ];
    for s in cases {
        let args = [s.clone(), v(V::F32), s.clone(), s.clone(), s.clone()];
        let p = plan(&FD::of_void(args), None).unwrap();
        assert_eq!(
            dests(&p),
            [
                vec![Int(0)],
                vec![Vector(1)],
                vec![Int(2)],
                vec![Int(3)],
                vec![Stack(32)]
            ],
            "{s}"
        );
        for i in [0, 2, 3, 4] {
            assert!(p.args()[i].moves.is_empty(), "{s}");
        }
        assert_eq!(describe(&p), "(&rcx, xmm1, &r8, &r9, &rsp+32) -> void");
    }
}

#[test]
fn a_union_is_sized_like_a_struct() {
    let u8b = MemoryLayout::union_layout([v(V::F64), v(V::I32)]).unwrap();
    let p = plan(&FD::of(u8b.clone(), [u8b]), None).unwrap();
    assert_eq!(dests(&p), [vec![Int(0)]]);
    assert_eq!(describe(&p), "(rcx) -> rax");
    let u12 = MemoryLayout::union_layout([st(&vec![v(V::I32); 3]), v(V::I32)]).unwrap();
    let p = plan(&FD::of_void([u12]), None).unwrap();
    assert_eq!(p.args()[0].by_reference, Some(Int(0)));
}

#[test]
fn scalar_returns_in_rax_or_xmm0() {
    let ret = |r: V| plan(&FD::of(r, []), None).unwrap().ret().clone();
    assert_eq!(ret(V::I32), ReturnPlan::Scalar(Register::Int(0)));
    assert_eq!(ret(V::ADDRESS), ReturnPlan::Scalar(Register::Int(0)));
    assert_eq!(ret(V::BOOL), ReturnPlan::Scalar(Register::Int(0)));
    assert_eq!(ret(V::F32), ReturnPlan::Scalar(Register::Vector(0)));
    assert_eq!(ret(V::F64), ReturnPlan::Scalar(Register::Vector(0)));
    let void = plan(&FD::of_void([]), None).unwrap();
    assert_eq!(*void.ret(), ReturnPlan::Void);
    assert_eq!(void.hidden_return_pointer(), None);
}

#[test]
fn small_aggregates_return_in_rax_even_all_float() {
    for s in [
        st(&[v(V::I8)]),
        st(&[v(V::I16)]),
        st(&[v(V::F32)]),
        st(&[v(V::F32), v(V::F32)]),
        st(&[v(V::F64)]),
    ] {
        let size = s.byte_size() as u8;
        let p = plan(&FD::of(s.clone(), [V::F64]), None).unwrap();
        assert_eq!(
            *p.ret(),
            ReturnPlan::Registers(vec![ReturnMove {
                from: Register::Int(0),
                offset: 0,
                size
            }]),
            "{s}"
        );
        assert_eq!(p.hidden_return_pointer(), None);
        assert_eq!(p.return_image_bytes(), 8);
        // No hidden pointer: the double stays in slot 0.
        assert_eq!(dests(&p), [vec![Vector(0)]]);
    }
}

#[test]
fn other_aggregates_return_through_a_hidden_pointer_in_rcx_shifting_the_slots() {
    for s in [
        st(&vec![v(V::I8); 3]),
        st(&vec![v(V::I32); 3]),
        st(&[v(V::F64), v(V::F64)]),
        st(&vec![v(V::I64); 4]),
    ] {
        let p = plan(&FD::of(s.clone(), [V::I32, V::F64, V::I32, V::F32]), None).unwrap();
        assert_eq!(*p.ret(), ReturnPlan::InMemory, "{s}");
        assert_eq!(p.hidden_return_pointer(), Some(Int(0)));
        assert_eq!(
            dests(&p),
            [vec![Int(1)], vec![Vector(2)], vec![Int(3)], vec![Stack(32)]],
            "{s}"
        );
        assert_eq!(p.stack_bytes(), 40);
        assert_eq!(
            describe(&p),
            "(ret-ptr:rcx, rdx, xmm2, r9, rsp+32) -> memory"
        );
    }
}

#[test]
fn variadic_floats_go_in_both_the_xmm_register_and_the_gpr() {
    // printf(const char *, ...) with (double, float, int, double): the double in xmm1 and rdx,
    // the float promoted to double in xmm2 and r8, the int in r9, the last double on the stack.
    let d = FD::of(V::I32, [V::ADDRESS, V::F64, V::F32, V::I32, V::F64]);
    let p = plan(&d, Some(1)).unwrap();
    assert_eq!(
        dests(&p),
        [
            vec![Int(0)],
            vec![Vector(1), Int(1)],
            vec![Vector(2), Int(2)],
            vec![Int(3)],
            vec![Stack(32)]
        ]
    );
    let f = &p.args()[2].moves;
    assert!(f
        .iter()
        .all(|m| m.conv == Conversion::FloatToDouble && m.size == 4 && m.offset == 0));
    let last = p.args()[4].moves[0];
    assert_eq!((last.size, last.conv), (8, Conversion::Bytes));
    assert_eq!(p.first_variadic(), Some(1));
    assert_eq!(p.vector_registers(), 2);
    assert_eq!(describe(&p), "(rcx, xmm1+rdx, xmm2+r8, r9, rsp+32) -> rax");
}

#[test]
fn named_floats_of_a_variadic_call_are_only_in_xmm() {
    // void f(double, ...) called with (double, double): the named one in xmm0 only.
    let p = plan(&FD::of_void([V::F64, V::F64]), Some(1)).unwrap();
    assert_eq!(dests(&p), [vec![Vector(0)], vec![Vector(1), Int(1)]]);
}

#[test]
fn variadic_aggregates_are_passed_as_named_ones() {
    let s8 = st(&[v(V::F32), v(V::F32)]);
    let s12 = st(&vec![v(V::I32); 3]);
    let p = plan(&FD::of_void([v(V::ADDRESS), s8, s12]), Some(1)).unwrap();
    assert_eq!(dests(&p), [vec![Int(0)], vec![Int(1)], vec![Int(2)]]);
    assert_eq!(p.args()[2].by_reference, Some(Int(2)));
}

#[test]
#[cfg_attr(miri, ignore = "131,072-argument plans: slow under Miri")]
fn too_many_stack_arguments_are_rejected_with_the_bytes_needed() {
    // 4 register slots + 131,068 stack slots = 32 + 1,048,544 = 1 MiB: the limit (the shadow
    // space counts).
    assert_eq!(MAX_STACK_BYTES, 1_048_576);
    let n = MAX_STACK_BYTES / 8;
    let ok = plan(&FD::of_void(vec![V::I64; n]), None).unwrap();
    assert_eq!(ok.stack_bytes() as usize, MAX_STACK_BYTES);
    assert_eq!(ok.args()[n - 1].moves[0].to, Location::Stack(1_048_568));
    let err = plan(&FD::of_void(vec![V::I64; n + 1]), None).unwrap_err();
    let Error::InvalidDescriptor { reason, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(
        reason,
        "the call needs 1048584 bytes of stack area (32 of shadow space and 8 per argument past \
         the fourth); gatun's executor supports at most 1048576"
    );
    // The hidden return pointer takes a slot too.
    let big = st(&vec![v(V::I64); 3]);
    let err = plan(&FD::of(big, vec![V::I64; n]), None).unwrap_err();
    assert!(err.to_string().contains("1048584 bytes"), "{err}");
}

#[test]
fn invalid_descriptors_are_rejected() {
    let seq = MemoryLayout::sequence_layout(2, V::I32).unwrap();
    assert!(plan(&FD::of_void([seq]), None).is_err());
    assert!(plan(&FD::of_void([V::I32]), Some(2)).is_err());
}
