//! AArch64 plan unit tests: one per AAPCS64 rule (named in each test), plans asserted directly
//! (pure data, run on every host). `tests/aarch64_oracle.rs` checks the same plans against
//! gcc's and clang's code generation.

use super::*;
use crate::abi::{ArgMove, Conversion, Location};
use crate::error::Error;
use crate::layout::{FunctionDescriptor as FD, MemoryLayout, ValueLayout as V};

use Flavour::{Apple, Linux};
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

/// A struct of `m` padded to 16 bytes and aligned to 16 (`__attribute__((aligned(16)))` on
/// the struct itself).
fn aligned16(m: &[MemoryLayout]) -> MemoryLayout {
    let s = st(m);
    let pad = s.byte_size().next_multiple_of(16) - s.byte_size();
    let mut m = m.to_vec();
    if pad > 0 {
        m.push(MemoryLayout::padding_layout(pad).unwrap());
    }
    st(&m).with_byte_alignment(16).unwrap()
}

fn locs(p: &CallPlan, i: usize) -> Vec<Location> {
    p.args[i].moves.iter().map(|m| m.to).collect()
}

fn plan_of(args: Vec<MemoryLayout>, f: Flavour) -> CallPlan {
    plan(&FD::of_void(args), None, f).unwrap()
}

fn ints(n: usize) -> Vec<MemoryLayout> {
    vec![v(V::I64); n]
}

fn doubles(n: usize) -> Vec<MemoryLayout> {
    vec![v(V::F64); n]
}

#[test]
fn b2_hfa_found_through_nested_structs_arrays_and_unions() {
    let nested = st(&[v(V::F32), st(&[seq(2, V::F32)])]);
    let uni = un(&[st(&[v(V::F64), v(V::F64)]), seq(2, V::F64)]);
    let with_empty = st(&[v(V::F32), empty(), seq(3, empty()), v(V::F32)]);
    for f in [Linux, Apple] {
        assert_eq!(
            classify(&nested, f),
            ArgClass::Hfa {
                kind: ScalarKind::F32,
                count: 3
            }
        );
        assert_eq!(
            classify(&uni, f),
            ArgClass::Hfa {
                kind: ScalarKind::F64,
                count: 2
            }
        );
        assert_eq!(
            classify(&with_empty, f),
            ArgClass::Hfa {
                kind: ScalarKind::F32,
                count: 2
            }
        );
        let p = plan_of(vec![nested.clone()], f);
        assert_eq!(
            p.args[0].moves,
            (0..3)
                .map(|k| ArgMove {
                    offset: 4 * k,
                    size: 4,
                    to: Vector(k as u8),
                    conv: Conversion::Bytes
                })
                .collect::<Vec<_>>()
        );
        assert_eq!(describe(&p), "(s0+s1+s2) -> void");
    }
}

#[test]
fn b2_not_an_hfa() {
    let cases = [
        // Mixed float and double.
        (
            st(&[v(V::F32), v(V::F64)]),
            ArgClass::Composite {
                units: 2,
                align16: false,
            },
        ),
        // An integer member.
        (
            st(&[v(V::F32), v(V::I32)]),
            ArgClass::Composite {
                units: 1,
                align16: false,
            },
        ),
        // Five members, 20 bytes: by reference.
        (st(&[seq(5, V::F32)]), ArgClass::Indirect),
        // Padding: 2 floats in an 8-aligned 16-byte struct.
        (
            aligned16(&[v(V::F32), v(V::F32)]),
            ArgClass::Composite {
                units: 2,
                align16: false,
            },
        ),
        // A zero-length array member (both compilers reject it).
        (
            st(&[v(V::F32), seq(0, V::F32), v(V::F32)]),
            ArgClass::Composite {
                units: 1,
                align16: false,
            },
        ),
        // A union mixing float and double members.
        (
            un(&[v(V::F32), v(V::F64)]),
            ArgClass::Composite {
                units: 1,
                align16: false,
            },
        ),
    ];
    for (layout, want) in cases {
        assert_eq!(classify(&layout, Linux), want, "{layout}");
    }
}

#[test]
fn b2_zero_length_array_inside_a_member_gcc_rejects_clang_skips() {
    let holder = st(&[seq(0, V::F32)]);
    for s in [
        st(&[v(V::F32), holder.clone(), v(V::F32)]),
        st(&[v(V::F32), seq(2, holder), v(V::F32)]),
    ] {
        assert_eq!(
            classify(&s, Linux),
            ArgClass::Composite {
                units: 1,
                align16: false
            }
        );
        assert_eq!(
            classify(&s, Apple),
            ArgClass::Hfa {
                kind: ScalarKind::F32,
                count: 2
            }
        );
    }
}

#[test]
fn b3_composites_over_16_bytes_go_by_reference() {
    let big = st(&[v(V::I64), v(V::I64), v(V::I32)]);
    for f in [Linux, Apple] {
        let p = plan_of(vec![big.clone(), v(V::I32)], f);
        assert_eq!(p.args[0].by_reference, Some(Int(0)));
        assert!(p.args[0].moves.is_empty());
        assert_eq!(locs(&p, 1), [Int(1)]);
        // Past the registers: the pointer takes one 8-byte stack slot.
        let mut args = ints(8);
        args.push(big.clone());
        let p = plan_of(args, f);
        assert_eq!(p.args[8].by_reference, Some(Stack(0)));
        assert_eq!(p.stack_bytes, 8);
        assert_eq!(describe(&p).split(", ").last(), Some("&sp+0) -> void"));
    }
    // An HFA of 4 doubles (32 bytes) is not passed by reference.
    let hfa4 = st(&doubles(4));
    let p = plan_of(vec![hfa4], Linux);
    assert_eq!(locs(&p, 0), [Vector(0), Vector(1), Vector(2), Vector(3)]);
    assert_eq!(p.args[0].by_reference, None);
}

#[test]
fn b4_composites_are_rounded_up_to_eight_bytes() {
    for (n, units, sizes) in [
        (3usize, 1u8, vec![3u8]),
        (8, 1, vec![8]),
        (9, 2, vec![8, 1]),
        (15, 2, vec![8, 7]),
    ] {
        let s = st(&[seq(n, V::U8)]);
        assert_eq!(
            classify(&s, Linux),
            ArgClass::Composite {
                units,
                align16: false
            }
        );
        let p = plan_of(vec![s.clone(), v(V::I32)], Linux);
        assert_eq!(
            p.args[0].moves.iter().map(|m| m.size).collect::<Vec<_>>(),
            sizes
        );
        assert_eq!(locs(&p, 1), [Int(units)]);
        // On the stack: the size rounded up to 8.
        let mut args = ints(8);
        args.extend([s, v(V::I64)]);
        let p = plan_of(args, Linux);
        assert_eq!(locs(&p, 9), [Stack(8 * units as u32)]);
    }
}

#[test]
fn c1_to_c6_hfa_all_or_nothing_then_nsrn_is_8() {
    // Six doubles leave v6, v7: an HFA of three floats does not fit, goes wholly on the
    // stack, and NSRN becomes 8, so the double after it is on the stack too (C.3).
    let hfa3 = st(&[seq(3, V::F32)]);
    let mut args = doubles(6);
    args.extend([hfa3.clone(), v(V::F64), v(V::I32)]);
    let p = plan_of(args.clone(), Linux);
    assert_eq!(locs(&p, 6), [Stack(0), Stack(8)]);
    assert_eq!(p.args[6].moves[1].size, 4);
    assert_eq!(locs(&p, 7), [Stack(16)]);
    assert_eq!(locs(&p, 8), [Int(0)]);
    assert_eq!(p.vector_registers, 8);
    assert_eq!(p.stack_bytes, 24);
    // Apple: the same registers; the HFA packed at 4-byte alignment, the double after it at 8.
    let p = plan_of(args, Apple);
    assert_eq!(locs(&p, 6), [Stack(0), Stack(4), Stack(8)]);
    assert_eq!(locs(&p, 7), [Stack(16)]);
    // A float scalar takes the next v register while one is left (C.1).
    let p = plan_of(vec![v(V::F32), v(V::F64)], Linux);
    assert_eq!(locs(&p, 0), [Vector(0)]);
    assert_eq!(describe(&p), "(s0, d1) -> void");
}

#[test]
fn c8_sixteen_aligned_composites_start_at_an_even_gpr_on_linux() {
    // The alignment comes from a member: natural alignment 16.
    let a16 = aligned16(&[v(V::I64), v(V::I64)]);
    let member_aligned = st(std::slice::from_ref(&a16));
    let p = plan_of(vec![v(V::I32), member_aligned.clone(), v(V::I32)], Linux);
    assert_eq!(locs(&p, 1), [Int(2), Int(3)]);
    // x1 is skipped, never reused.
    assert_eq!(locs(&p, 2), [Int(4)]);
    // `aligned(16)` on the struct itself does not change its natural alignment (gcc, clang).
    let p = plan_of(vec![v(V::I32), a16.clone()], Linux);
    assert_eq!(locs(&p, 1), [Int(1), Int(2)]);
    // Apple: clang never rounds NGRN up.
    let p = plan_of(vec![v(V::I32), member_aligned], Apple);
    assert_eq!(locs(&p, 1), [Int(1), Int(2)]);
}

#[test]
fn c10_c11_composite_in_consecutive_gprs_or_wholly_on_the_stack() {
    let pair = st(&[v(V::I64), v(V::I64)]);
    // Six integers: x6, x7 take the pair (C.10).
    let mut args = ints(6);
    args.push(pair.clone());
    let p = plan_of(args, Linux);
    assert_eq!(locs(&p, 6), [Int(6), Int(7)]);
    // Seven: the pair does not fit, goes on the stack, NGRN becomes 8 (C.11), so the
    // integer after it is on the stack too (x7 stays unused).
    let mut args = ints(7);
    args.extend([pair, v(V::I32)]);
    for f in [Linux, Apple] {
        let p = plan_of(args.clone(), f);
        assert_eq!(locs(&p, 7), [Stack(0), Stack(8)], "{f:?}");
        assert_eq!(locs(&p, 8), [Stack(16)], "{f:?}");
    }
}

#[test]
fn c12_to_c15_linux_stack_slots_at_max_8_and_natural_alignment() {
    let member_aligned = st(&[aligned16(&[v(V::I64), v(V::I64)])]);
    let mut args = ints(8);
    args.extend([v(V::I8), member_aligned, v(V::F32), v(V::I16)]);
    args.splice(0..0, doubles(8));
    let p = plan_of(args, Linux);
    // i8 in an 8-byte slot; the 16-aligned composite at 16; the float and short after it.
    assert_eq!(locs(&p, 16), [Stack(0)]);
    assert_eq!(locs(&p, 17), [Stack(16), Stack(24)]);
    assert_eq!(locs(&p, 18), [Stack(32)]);
    assert_eq!(locs(&p, 19), [Stack(40)]);
    assert_eq!(p.stack_bytes, 48);
    assert!(!p.packed_named_stack);
    assert_eq!(p.stack_write_bytes(16, &p.args[16].moves[0]), 8);
}

#[test]
fn results_in_x0_x1_v0_to_v3_or_memory_at_x8() {
    for f in [Linux, Apple] {
        let p = plan(&FD::of(V::I16, [V::I32]), None, f).unwrap();
        assert_eq!(p.ret, ReturnPlan::Scalar(Register::Int(0)));
        let p = plan(&FD::of(V::F32, [V::I32]), None, f).unwrap();
        assert_eq!(p.ret, ReturnPlan::Scalar(Register::Vector(0)));
        // HFA of four floats: s0..s3.
        let p = plan(&FD::of(st(&[seq(4, V::F32)]), [V::I32]), None, f).unwrap();
        let ReturnPlan::Registers(m) = &p.ret else {
            panic!("{:?}", p.ret)
        };
        assert_eq!(
            m.iter()
                .map(|m| (m.from, m.offset, m.size))
                .collect::<Vec<_>>(),
            (0..4u8)
                .map(|k| (Register::Vector(k), 4 * k as u32, 4))
                .collect::<Vec<_>>()
        );
        assert_eq!(describe(&p), "(x0) -> s0+s1+s2+s3");
        // A 12-byte composite: x0 (8 bytes) and x1 (4 bytes).
        let p = plan(
            &FD::of(st(&[v(V::I32), v(V::I32), v(V::I32)]), [V::I32]),
            None,
            f,
        )
        .unwrap();
        let ReturnPlan::Registers(m) = &p.ret else {
            panic!("{:?}", p.ret)
        };
        assert_eq!(
            m.iter()
                .map(|m| (m.from, m.offset, m.size))
                .collect::<Vec<_>>(),
            [(Register::Int(0), 0, 8), (Register::Int(1), 8, 4)]
        );
        // 24 bytes: memory at x8, which shifts no argument register.
        let big = st(&[v(V::I64), v(V::I64), v(V::I64)]);
        let p = plan(&FD::of(big, [V::I32, V::F64]), None, f).unwrap();
        assert_eq!(p.ret, ReturnPlan::InMemory);
        assert_eq!(p.hidden_return_pointer, Some(Int(INDIRECT_RESULT_REG)));
        assert_eq!(locs(&p, 0), [Int(0)]);
        assert_eq!(describe(&p), "(x8:ret-ptr, x0, d0) -> memory");
    }
}

#[test]
fn variadic_arguments_on_linux_are_passed_as_named_ones() {
    let hfa2 = st(&doubles(2));
    let d = FD::of_void([v(V::I32), v(V::F64), v(V::I32), hfa2.clone(), v(V::F32)]);
    let named = plan(&d, None, Linux).unwrap();
    let var = plan(&d, Some(1), Linux).unwrap();
    for i in 0..4 {
        assert_eq!(locs(&var, i), locs(&named, i));
    }
    assert_eq!(locs(&var, 3), [Vector(1), Vector(2)]);
    // A variadic float is promoted to double.
    assert_eq!(var.args[4].moves[0].conv, Conversion::FloatToDouble);
    assert_eq!(named.args[4].moves[0].conv, Conversion::Bytes);
    assert_eq!(describe(&var), "(x0, d0, x1, d1+d2, d3) -> void");
    assert_eq!(var.stack_bytes, 0);
}

#[test]
fn variadic_arguments_on_apple_go_on_the_stack_in_8_byte_slots() {
    let hfa3 = st(&[seq(3, V::F32)]);
    let big = st(&[v(V::I64), v(V::I64), v(V::I64)]);
    let a16 = st(&[aligned16(&[v(V::I64), v(V::I64)])]);
    let d = FD::of_void([v(V::I32), v(V::F64), v(V::I8), hfa3, big, v(V::F32), a16]);
    let p = plan(&d, Some(1), Apple).unwrap();
    assert_eq!(locs(&p, 0), [Int(0)]);
    assert_eq!(locs(&p, 1), [Stack(0)]);
    assert_eq!(locs(&p, 2), [Stack(8)]);
    // The HFA as memory: 12 bytes in two 8-byte slots.
    assert_eq!(locs(&p, 3), [Stack(16), Stack(24)]);
    assert_eq!(p.args[4].by_reference, Some(Stack(32)));
    assert_eq!(locs(&p, 5), [Stack(40)]);
    assert_eq!(p.args[5].moves[0].conv, Conversion::FloatToDouble);
    // 16-byte alignment: a 16-aligned pair of slots.
    assert_eq!(locs(&p, 6), [Stack(48), Stack(56)]);
    assert_eq!(p.stack_bytes, 64);
    assert_eq!(p.vector_registers, 0);
    // Variadic moves write whole slots, even in a packed plan.
    assert_eq!(p.stack_write_bytes(2, &p.args[2].moves[0]), 8);
    // A 16-byte-aligned HFA is still 8-byte aligned there (clang passes it as its members).
    let hfa_a16 = aligned16(&[v(V::F64), v(V::F64)]);
    assert_eq!(
        classify(&hfa_a16, Apple),
        ArgClass::Hfa {
            kind: ScalarKind::F64,
            count: 2
        }
    );
    let p = plan(
        &FD::of_void([v(V::I32), v(V::I32), hfa_a16.clone()]),
        Some(1),
        Apple,
    )
    .unwrap();
    assert_eq!(locs(&p, 2), [Stack(8), Stack(16)]);
    // Linux, on the stack: the member alignment (8) decides, not the attribute.
    let mut args = doubles(8);
    args.extend([v(V::F32), hfa_a16]);
    let p = plan_of(args, Linux);
    assert_eq!(locs(&p, 9), [Stack(8), Stack(16)]);
    // With no variadic arguments, the registers are used as usual.
    let p = plan(&FD::of_void([v(V::I32), v(V::F64)]), Some(2), Apple).unwrap();
    assert_eq!(locs(&p, 1), [Vector(0)]);
}

#[test]
fn apple_named_stack_arguments_are_packed() {
    let mut args = ints(8);
    args.extend([
        v(V::I8),
        v(V::I16),
        v(V::I8),
        v(V::I8),
        v(V::I32),
        v(V::I64),
    ]);
    let p = plan_of(args.clone(), Apple);
    assert_eq!(
        (8..14).map(|i| locs(&p, i)[0]).collect::<Vec<_>>(),
        [Stack(0), Stack(2), Stack(4), Stack(5), Stack(8), Stack(16)]
    );
    assert_eq!(p.stack_bytes, 24);
    assert!(p.packed_named_stack);
    for i in 8..14 {
        let m = &p.args[i].moves[0];
        assert_eq!(p.stack_write_bytes(i, m), m.size as usize);
    }
    // Linux: one 8-byte slot each.
    let p = plan_of(args.clone(), Linux);
    assert_eq!(
        (8..14).map(|i| locs(&p, i)[0]).collect::<Vec<_>>(),
        [
            Stack(0),
            Stack(8),
            Stack(16),
            Stack(24),
            Stack(32),
            Stack(40)
        ]
    );
    // The named arguments of a variadic call: narrow integers in 4-byte slots (clang).
    let p = plan(&FD::of_void(args), Some(14), Apple).unwrap();
    assert_eq!(
        (8..14).map(|i| locs(&p, i)[0]).collect::<Vec<_>>(),
        [
            Stack(0),
            Stack(4),
            Stack(8),
            Stack(12),
            Stack(16),
            Stack(24)
        ]
    );
    assert_eq!(p.stack_write_bytes(8, &p.args[8].moves[0]), 4);
    // A composite that is not an HFA still takes 8-byte units.
    let mut args = ints(8);
    args.extend([v(V::I8), st(&[seq(3, V::U8)]), v(V::I8)]);
    let p = plan_of(args, Apple);
    assert_eq!(locs(&p, 9), [Stack(8)]);
    assert_eq!(locs(&p, 10), [Stack(16)]);
}

#[test]
fn apple_callers_extend_narrow_integers_in_registers() {
    let d = FD::of_void([V::I8, V::U8, V::I16, V::U16, V::BOOL, V::I32, V::I64]);
    for f in [Linux, Apple] {
        let p = plan(&d, None, f).unwrap();
        let convs: Vec<Conversion> = p.args.iter().map(|a| a.moves[0].conv).collect();
        // The whole 64-bit register is written: sign extension for signed, zero fill for
        // unsigned (`Bytes`), 0 or 1 for bool; this covers Apple's "to 32 bits".
        assert_eq!(
            convs,
            [
                Conversion::SignExtend,
                Conversion::Bytes,
                Conversion::SignExtend,
                Conversion::Bytes,
                Conversion::Bool,
                Conversion::SignExtend,
                Conversion::Bytes
            ]
        );
        assert!(locs(&p, 6) == [Int(6)]);
    }
}

#[test]
fn invalid_descriptors_are_rejected_like_sysv() {
    for f in [Linux, Apple] {
        for bad in [
            MemoryLayout::padding_layout(4).unwrap(),
            seq(2, V::I32),
            empty(),
        ] {
            let e = plan(&FD::of_void([bad.clone()]), None, f).unwrap_err();
            assert!(matches!(e, Error::InvalidDescriptor { .. }), "{e}");
        }
        let e = plan(&FD::of_void([V::I32]), Some(2), f).unwrap_err();
        assert!(
            e.to_string().contains("first variadic argument index 2"),
            "{e}"
        );
    }
}

#[test]
#[cfg_attr(miri, ignore = "131,072-argument plans: slow under Miri")]
fn the_stack_limit_is_checked_once_and_exactly() {
    // 8 registers + 131,072 slots of 8 bytes = 1 MiB: accepted; one more slot is not.
    let slots = crate::abi::MAX_STACK_BYTES / 8;
    let p = plan_of(ints(8 + slots), Linux);
    assert_eq!(p.stack_bytes, 1_048_576);
    assert_eq!(locs(&p, 8 + slots - 1), [Stack(1_048_568)]);
    let e = plan(&FD::of_void(ints(8 + slots + 1)), None, Linux).unwrap_err();
    let Error::InvalidDescriptor { reason, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(
        reason,
        "the call needs 1048584 bytes of stack arguments; gatun's executor supports at most 1048576"
    );
    // Apple packs: 131,071 eight-byte slots and eight one-byte arguments fill 1 MiB exactly,
    // one more byte does not fit.
    let mut args = ints(8 + slots - 1);
    args.extend(vec![v(V::I8); 8]);
    let p = plan_of(args.clone(), Apple);
    assert_eq!(p.stack_bytes, 1_048_576);
    assert_eq!(locs(&p, 8 + slots - 1 + 7), [Stack(1_048_575)]);
    args.push(v(V::I8));
    let e = plan(&FD::of_void(args), None, Apple).unwrap_err();
    assert!(
        e.to_string()
            .contains("the call needs 1048584 bytes of stack arguments"),
        "{e}"
    );
}

#[test]
fn huge_composites_cost_nothing_they_go_by_reference() {
    let e = MemoryLayout::padding_layout(1 << 40).unwrap();
    let huge = st(&[v(V::I64), e]);
    VISITS.with(|c| c.set(0));
    assert_eq!(classify(&huge, Linux), ArgClass::Indirect);
    assert_eq!(VISITS.with(|c| c.get()), 0);
    let p = plan_of(vec![huge.clone(); 20], Linux);
    assert_eq!(p.args[19].by_reference, Some(Stack(88)));
    let p = plan(&FD::of(huge, [V::I32]), None, Apple).unwrap();
    assert_eq!(p.ret, ReturnPlan::InMemory);
}

#[test]
fn hfa_detection_is_linear_on_shared_layouts_and_skips_zero_size_parts() {
    // 40 levels of unions whose two members are the same (shared) union: 2^40 paths.
    let mut u = un(&[v(V::F32), st(&[v(V::F32)])]);
    for _ in 0..40 {
        u = un(&[u.clone(), u]);
    }
    let s = st(&[u.clone(), u.clone(), v(V::F32)]);
    VISITS.with(|c| c.set(0));
    assert_eq!(
        classify(&s, Linux),
        ArgClass::Hfa {
            kind: ScalarKind::F32,
            count: 3
        }
    );
    let visits = VISITS.with(|c| c.get());
    assert!(visits <= 50, "{visits} nodes visited");
    // Zero-size parts with astronomic counts, shared 30 levels deep: memoised, not expanded.
    let mut z = st(&[seq(usize::MAX, empty())]);
    for _ in 0..30 {
        z = st(&[z.clone(), seq(usize::MAX, z)]);
    }
    let s = st(&[v(V::F64), z.clone(), v(V::F64)]);
    for f in [Linux, Apple] {
        VISITS.with(|c| c.set(0));
        assert_eq!(
            classify(&s, f),
            ArgClass::Hfa {
                kind: ScalarKind::F64,
                count: 2
            }
        );
        let visits = VISITS.with(|c| c.get());
        assert!(visits <= 200, "{f:?}: {visits} nodes visited");
    }
}

#[test]
fn location_names() {
    assert_eq!(location_name(Int(3), 4), "x3");
    assert_eq!(location_name(Vector(1), 8), "d1");
    assert_eq!(location_name(Stack(12), 1), "sp+12");
}
