//! ELFv2 plan unit tests: one per rule of the module docs (named in each test), plans asserted
//! directly (pure data, run on every host). `tests/ppc64le_oracle.rs` checks the same plans
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

fn bytes(n: usize) -> MemoryLayout {
    st(&[seq(n, V::U8)])
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
fn integers_take_r3_to_r10_then_save_area_doublewords_from_64() {
    let p = plan_of(vec![v(V::I64); 11]);
    let all: Vec<Location> = (0..11).map(|i| p.args[i].moves[0].to).collect();
    let mut want: Vec<Location> = (0..8).map(Int).collect();
    want.extend([Stack(64), Stack(72), Stack(80)]);
    assert_eq!(all, want);
    assert_eq!(p.stack_bytes(), 88);
    assert_eq!(describe(&p).split(", ").nth(8), Some("psa+64"));
}

#[test]
fn the_save_area_is_never_smaller_than_its_64_shadowed_bytes() {
    assert_eq!(plan_of(vec![]).stack_bytes(), 64);
    assert_eq!(plan_of(vec![v(V::I32)]).stack_bytes(), 64);
    assert_eq!(plan_of(vec![v(V::I64); 8]).stack_bytes(), 64);
    assert_eq!(plan_of(vec![v(V::I64); 9]).stack_bytes(), 72);
}

#[test]
fn narrow_integers_are_extended_by_type() {
    let p = plan_of(vec![
        v(V::I8),
        v(V::U8),
        v(V::I16),
        v(V::U16),
        v(V::I32),
        v(V::U32),
        v(V::BOOL),
        v(V::U64),
        v(V::I8),
    ]);
    let convs: Vec<Conversion> = p.args.iter().map(|a| a.moves[0].conv).collect();
    // `unsigned int` is zero-extended (unlike RV64).
    assert_eq!(
        convs,
        [SignExtend, Bytes, SignExtend, Bytes, SignExtend, Bytes, Bool, Bytes, SignExtend]
    );
    assert_eq!(p.args[8].moves[0], mv(0, 1, Stack(64), SignExtend));
}

#[test]
fn floats_take_fprs_in_double_format_and_their_doubleword() {
    // int, double, float, int: the double takes f1 and doubleword 1 (r4 unused), the float f2
    // and doubleword 2, the last int doubleword 3 = r6.
    let p = plan_of(vec![v(V::I32), v(V::F64), v(V::F32), v(V::I32)]);
    assert_eq!(p.args[1].moves, [mv(0, 8, Vector(0), Bytes)]);
    assert_eq!(p.args[2].moves, [mv(0, 4, Vector(1), FloatToDouble)]);
    assert_eq!(p.args[3].moves, [mv(0, 4, Int(3), SignExtend)]);
    assert_eq!(p.vector_registers(), 2);
    assert_eq!(describe(&p), "(r3, f1, f2, r6) -> void");
}

#[test]
fn floats_past_f13_go_in_their_doubleword_as_raw_bits() {
    let mut args = vec![v(V::F64); 13];
    args.extend([v(V::F32), v(V::F64)]);
    let p = plan_of(args);
    assert_eq!(locs(&p, 12), [Vector(12)]);
    // Doublewords 13 and 14: memory; the float as its 4 single-precision bytes.
    assert_eq!(p.args[13].moves, [mv(0, 4, Stack(104), Bytes)]);
    assert_eq!(p.args[14].moves, [mv(0, 8, Stack(112), Bytes)]);
    assert_eq!(p.stack_bytes(), 120);
    assert_eq!(p.vector_registers(), 13);
}

#[test]
fn a_float_finds_a_gpr_when_hfas_used_the_fprs_up_early() {
    // An 8-float HFA (f1..f8, doublewords 0-3), a 6-float HFA (f9..f13 and r9 for members 4
    // and 5), then a float in r10 and a double in memory.
    let h8 = st(&[seq(8, V::F32)]);
    let h6 = st(&[seq(6, V::F32)]);
    let p = plan_of(vec![h8, h6, v(V::F32), v(V::F64)]);
    assert_eq!(locs(&p, 0), (0..8).map(Vector).collect::<Vec<_>>());
    assert_eq!(p.args[2].moves, [mv(0, 4, Int(7), Bytes)]);
    assert_eq!(p.args[3].moves, [mv(0, 8, Stack(64), Bytes)]);
}

#[test]
fn hfas_take_one_fpr_per_member_and_their_doublewords() {
    let h3 = st(&[v(V::F32), v(V::F32), v(V::F32)]);
    let p = plan_of(vec![v(V::I64), h3, v(V::I32)]);
    assert_eq!(
        p.args[1].moves,
        [
            mv(0, 4, Vector(0), FloatToDouble),
            mv(4, 4, Vector(1), FloatToDouble),
            mv(8, 4, Vector(2), FloatToDouble),
        ]
    );
    // 12 bytes: doublewords 1 and 2; the int is doubleword 3.
    assert_eq!(locs(&p, 2), [Int(3)]);
    let h4d = st(&[seq(4, V::F64)]);
    let p = plan_of(vec![h4d, v(V::I32)]);
    assert_eq!(
        p.args[0].moves,
        (0..4)
            .map(|k| mv(8 * k, 8, Vector(k as u8), Bytes))
            .collect::<Vec<_>>()
    );
    assert_eq!(locs(&p, 1), [Int(4)]);
}

#[test]
fn hfa_shapes_nested_arrays_unions_and_empty_members() {
    let f = v(V::F32);
    let d = v(V::F64);
    let hfa = |l: &MemoryLayout| classify(l);
    use ScalarKind::{F32, F64};
    // Nested structs and arrays.
    let inner = st(&[seq(2, f.clone())]);
    assert_eq!(
        hfa(&st(&[inner.clone(), seq(2, inner.clone()), f.clone()])),
        ArgClass::Hfa {
            kind: F32,
            count: 7
        }
    );
    // Eight members at most.
    assert_eq!(
        hfa(&st(&[seq(8, d.clone())])),
        ArgClass::Hfa {
            kind: F64,
            count: 8
        }
    );
    assert_eq!(
        hfa(&st(&[seq(9, f.clone())])),
        ArgClass::Aggregate { align16: false }
    );
    // A union of float shapes is one (its largest).
    assert_eq!(
        hfa(&un(&[f.clone(), seq(2, f.clone())])),
        ArgClass::Hfa {
            kind: F32,
            count: 2
        }
    );
    // Mixed kinds, integers, padding: not.
    assert!(matches!(
        hfa(&st(&[f.clone(), d.clone()])),
        ArgClass::Aggregate { .. }
    ));
    assert!(matches!(
        hfa(&un(&[f.clone(), v(V::I32)])),
        ArgClass::Aggregate { .. }
    ));
    let padded = st(std::slice::from_ref(&f)).with_byte_alignment(8).unwrap();
    let padded = st(&[padded]);
    assert!(matches!(hfa(&padded), ArgClass::Aggregate { .. }));
    // Empty structs (and arrays of them) are skipped; a zero-length array is not (gcc).
    assert_eq!(
        hfa(&st(&[f.clone(), empty(), seq(2, empty()), f.clone()])),
        ArgClass::Hfa {
            kind: F32,
            count: 2
        }
    );
    assert!(matches!(
        hfa(&st(&[f.clone(), seq(0, f.clone()), f.clone()])),
        ArgClass::Aggregate { .. }
    ));
    assert!(matches!(
        hfa(&st(&[f.clone(), st(&[seq(0, f.clone())]), f.clone()])),
        ArgClass::Aggregate { .. }
    ));
    // A single-member struct is an HFA of one.
    assert_eq!(
        hfa(&st(&[d])),
        ArgClass::Hfa {
            kind: F64,
            count: 1
        }
    );
}

#[test]
fn an_hfa_split_by_f13_passes_the_rest_from_the_doubleword_of_the_first_member_left() {
    // Two 8-float HFAs: the second gets f9..f13 (members 0-4); members 5-7 go in the image from
    // its doubleword 2 (members 4 and 5) on, r9 and r10, so member 4 is in f13 and in r9.
    let h8 = st(&[seq(8, V::F32)]);
    let p = plan_of(vec![h8.clone(), h8, v(V::I32)]);
    let mut want: Vec<ArgMove> = (0..5)
        .map(|k| mv(4 * k, 4, Vector(8 + k as u8), FloatToDouble))
        .collect();
    want.extend([mv(16, 8, Int(6), Bytes), mv(24, 8, Int(7), Bytes)]);
    assert_eq!(p.args[1].moves, want);
    assert_eq!(p.args[2].moves, [mv(0, 4, Stack(64), SignExtend)]);
    assert_eq!(p.vector_registers(), 13);
    // Split at a doubleword boundary: no member is in both.
    let h4 = st(&[seq(4, V::F32)]);
    let h12 = st(&[seq(3, h4.clone())]);
    assert!(matches!(classify(&h12), ArgClass::Aggregate { .. }));
    let mut args = vec![v(V::F64); 9];
    args.push(h4.clone());
    args.push(h4);
    // Doubles: f1..f9, doublewords 0-8. HFA 1: f10..f13. HFA 2: no FPR, memory.
    let p = plan_of(args);
    assert_eq!(locs(&p, 9), (9..13).map(Vector).collect::<Vec<_>>());
    assert_eq!(locs(&p, 10), [Stack(88), Stack(96)]);
    // Doubles split mid-aggregate: members 0-1 in FPRs, 2-3 in their doublewords.
    let h4d = st(&[seq(4, V::F64)]);
    let mut args = vec![v(V::F64); 11];
    args.push(h4d);
    let p = plan_of(args);
    assert_eq!(
        p.args[11].moves,
        [
            mv(0, 8, Vector(11), Bytes),
            mv(8, 8, Vector(12), Bytes),
            mv(16, 8, Stack(104), Bytes),
            mv(24, 8, Stack(112), Bytes),
        ]
    );
}

#[test]
fn hfas_are_doubleword_aligned_whatever_their_alignment() {
    let h2 = st(&[v(V::F64), v(V::F64)]).with_byte_alignment(16).unwrap();
    assert!(matches!(classify(&h2), ArgClass::Hfa { count: 2, .. }));
    let p = plan_of(vec![v(V::I32), h2, v(V::I32)]);
    // Doublewords 1 and 2, not 2 and 3: the int after it is r6.
    assert_eq!(locs(&p, 2), [Int(3)]);
}

#[test]
fn aggregates_are_their_image_in_gprs_then_memory() {
    // 3 bytes: one 3-byte move into the low bytes of r3; 12 bytes: 8 + 4.
    let p = plan_of(vec![bytes(3), st(&vec![v(V::I32); 3]), bytes(5)]);
    assert_eq!(p.args[0].moves, [mv(0, 3, Int(0), Bytes)]);
    assert_eq!(
        p.args[1].moves,
        [mv(0, 8, Int(1), Bytes), mv(8, 4, Int(2), Bytes)]
    );
    assert_eq!(p.args[2].moves, [mv(0, 5, Int(3), Bytes)]);
    // A 40-byte struct from doubleword 7: r10, then memory at 64..96.
    let big = st(&vec![v(V::I64); 5]);
    let mut args = vec![v(V::I64); 7];
    args.push(big);
    let p = plan_of(args);
    assert_eq!(
        p.args[7].moves,
        [
            mv(0, 8, Int(7), Bytes),
            mv(8, 8, Stack(64), Bytes),
            mv(16, 8, Stack(72), Bytes),
            mv(24, 8, Stack(80), Bytes),
            mv(32, 8, Stack(88), Bytes),
        ]
    );
    assert_eq!(p.stack_bytes(), 96);
    // Structs with floats that are not HFAs are images too (no FPR).
    let p = plan_of(vec![
        st(&[v(V::F32), v(V::I32)]),
        st(&[v(V::F32), v(V::F64)]),
    ]);
    assert_eq!(locs(&p, 0), [Int(0)]);
    assert_eq!(locs(&p, 1), [Int(1), Int(2)]);
    assert_eq!(p.vector_registers(), 0);
}

#[test]
fn aggregates_aligned_to_16_start_at_an_even_doubleword() {
    let a16 = st(&[v(V::I64)]).with_byte_alignment(16).unwrap();
    let a16 = st(&[a16]);
    assert_eq!(classify(&a16), ArgClass::Aggregate { align16: true });
    // int r3, a16 skips r4 → r5+r6, int r7, a16 skips r8 → r9+r10, int → memory 64.
    let p = plan_of(vec![
        v(V::I32),
        a16.clone(),
        v(V::I32),
        a16.clone(),
        v(V::I32),
    ]);
    assert_eq!(describe(&p), "(r3, r5+r6, r7, r9+r10, psa+64) -> void");
    // In memory too: from doubleword 9 to 10.
    let mut args = vec![v(V::I64); 9];
    args.push(a16);
    let p = plan_of(args);
    assert_eq!(locs(&p, 9), [Stack(80), Stack(88)]);
    assert_eq!(p.stack_bytes(), 96);
}

#[test]
fn variadic_floats_go_in_an_fpr_and_in_their_doubleword() {
    let d = FD::of(V::I32, [V::I32, V::F64, V::F32, V::I32]);
    let p = plan(&d, Some(1)).unwrap();
    assert_eq!(
        p.args[1].moves,
        [mv(0, 8, Vector(0), Bytes), mv(0, 8, Int(1), Bytes)]
    );
    // A variadic float is promoted to double, in both places.
    assert_eq!(
        p.args[2].moves,
        [
            mv(0, 4, Vector(1), FloatToDouble),
            mv(0, 4, Int(2), FloatToDouble)
        ]
    );
    assert_eq!(locs(&p, 3), [Int(3)]);
    assert_eq!(describe(&p), "(r3, f1+r4, f2+r5, r6) -> r3");
    // Past r10: FPR and memory; past f13: memory only.
    let mut args = vec![V::I64; 8];
    args.extend([V::F64; 14]);
    let p = plan(&FD::of_void(args), Some(8)).unwrap();
    assert_eq!(locs(&p, 8), [Vector(0), Stack(64)]);
    assert_eq!(locs(&p, 20), [Vector(12), Stack(160)]);
    assert_eq!(locs(&p, 21), [Stack(168)]);
    // Named floats of a variadic function take their FPR only.
    let p = plan(&FD::of_void([V::F64, V::F64]), Some(1)).unwrap();
    assert_eq!(locs(&p, 0), [Vector(0)]);
    assert_eq!(locs(&p, 1), [Vector(1), Int(1)]);
}

#[test]
fn variadic_hfas_go_in_fprs_and_in_their_whole_image() {
    let h3 = st(&vec![v(V::F32); 3]);
    let d = FD::of_void([v(V::I32), h3]);
    let p = plan(&d, Some(1)).unwrap();
    assert_eq!(
        p.args[1].moves,
        [
            mv(0, 4, Vector(0), FloatToDouble),
            mv(4, 4, Vector(1), FloatToDouble),
            mv(8, 4, Vector(2), FloatToDouble),
            mv(0, 8, Int(1), Bytes),
            mv(8, 4, Int(2), Bytes),
        ]
    );
    // Split by f13: the FPR part, then the whole image in memory.
    let h8 = st(&[seq(8, V::F32)]);
    let mut args = vec![v(V::I32)];
    args.extend(vec![v(V::F64); 10]);
    args.push(h8);
    let p = plan(&FD::of_void(args), Some(1)).unwrap();
    assert_eq!(locs(&p, 11), {
        let mut l: Vec<Location> = (10..13).map(Vector).collect();
        l.extend([Stack(88), Stack(96), Stack(104), Stack(112)]);
        l
    });
}

#[test]
fn results_in_r3_f1_fprs_gprs_or_memory() {
    use crate::abi::{Register as R, ReturnMove as RM};
    let ret = |r: MemoryLayout| plan(&FD::of(r, [v(V::I32)]), None).unwrap();
    assert_eq!(*ret(v(V::U16)).ret(), ReturnPlan::Scalar(R::Int(0)));
    assert_eq!(*ret(v(V::F32)).ret(), ReturnPlan::Scalar(R::Vector(0)));
    // HFAs in f1..f8.
    let p = ret(st(&[seq(8, V::F32)]));
    assert_eq!(
        *p.ret(),
        ReturnPlan::Registers(
            (0..8)
                .map(|k| RM {
                    from: R::Vector(k),
                    offset: 4 * k as u32,
                    size: 4
                })
                .collect()
        )
    );
    assert_eq!(p.hidden_return_pointer(), None);
    // Aggregates of at most 16 bytes: r3, r4.
    assert_eq!(describe(&ret(bytes(3))), "(r3) -> r3");
    assert_eq!(
        *ret(st(&vec![v(V::I32); 3])).ret(),
        ReturnPlan::Registers(vec![
            RM {
                from: R::Int(0),
                offset: 0,
                size: 8
            },
            RM {
                from: R::Int(1),
                offset: 8,
                size: 4
            },
        ])
    );
    // Larger ones (and 9 floats) in memory at r3, which shifts the arguments.
    for big in [bytes(17), st(&[seq(9, V::F32)])] {
        let p = plan(&FD::of(big, [V::I32, V::F64]), None).unwrap();
        assert_eq!(*p.ret(), ReturnPlan::InMemory);
        assert_eq!(p.hidden_return_pointer(), Some(Int(0)));
        assert_eq!(describe(&p), "(r3:ret-ptr, r4, f1) -> memory");
    }
}

#[test]
fn abi_dispatch_names_and_limits() {
    let d = FD::of(V::F64, [V::I32, V::F64]);
    let p = crate::abi::plan_for(crate::abi::Abi::ElfV2, &d, None).unwrap();
    assert_eq!(crate::abi::Abi::ElfV2.describe(&p), "(r3, f1) -> f1");
    if cfg!(all(
        target_arch = "powerpc64",
        target_endian = "little",
        target_os = "linux"
    )) {
        assert_eq!(crate::abi::Abi::host(), Some(crate::abi::Abi::ElfV2));
    }
    // A save area over the limit is rejected with the bytes needed.
    let huge = bytes(crate::abi::MAX_STACK_BYTES);
    let Err(e) = plan(&FD::of_void([huge, v(V::I32)]), None) else {
        panic!("a save area of 1 MiB + 8 bytes was accepted");
    };
    assert!(
        matches!(&e, Error::InvalidDescriptor { reason, .. }
            if reason.contains("needs 1048584 bytes of parameter save area")),
        "{e}"
    );
    // Exactly at the limit (the 64 shadowed bytes included): accepted.
    let p = plan_of(vec![bytes(crate::abi::MAX_STACK_BYTES - 8), v(V::I64)]);
    assert_eq!(p.stack_bytes() as usize, crate::abi::MAX_STACK_BYTES);
    let e = plan(&FD::of_void([v(V::I32)]), Some(2)).unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
}

#[test]
fn hfa_walk_is_linear_in_distinct_nodes() {
    // A chain of structs sharing one sub-layout: each distinct node is walked once.
    let mut l = st(&[v(V::F32)]);
    for _ in 0..20 {
        l = un(&[l.clone(), l.clone()]);
    }
    VISITS.with(|c| c.set(0));
    assert!(matches!(classify(&l), ArgClass::Hfa { count: 1, .. }));
    assert!(
        VISITS.with(|c| c.get()) <= 60,
        "{}",
        VISITS.with(|c| c.get())
    );
}

#[test]
fn a_struct_with_a_float_machine_mode_is_passed_as_the_scalar_but_returned_in_r3() {
    // struct { float z[0]; struct { double d; } x[1]; }: a zero-length array makes it no HFA,
    // but its only sized member is a double as large as the struct: f1 (gcc's DFmode).
    let s = st(&[seq(0, V::F32), seq(1, st(&[v(V::F64)]))]);
    assert_eq!(
        classify(&s),
        ArgClass::Hfa {
            kind: ScalarKind::F64,
            count: 1
        }
    );
    let p = plan(&FD::of(s.clone(), [s.clone(), v(V::I32)]), None).unwrap();
    assert_eq!(p.args[0].moves, [mv(0, 8, Vector(0), Bytes)]);
    assert_eq!(locs(&p, 1), [Int(1)]);
    assert_eq!(describe(&p), "(f1, r4) -> r3");
    // A float one is converted to double format like any float in an FPR.
    let f = st(&[v(V::F32), seq(0, V::F32)]);
    assert_eq!(
        plan_of(vec![f]).args[0].moves,
        [mv(0, 4, Vector(0), FloatToDouble)]
    );
    // Unions and padded structs never qualify.
    let u = un(&[v(V::F32), seq(0, V::F32)]);
    assert_eq!(classify(&u), ArgClass::Aggregate { align16: false });
    let padded = st(&[v(V::F32), seq(0, V::F32)])
        .with_byte_alignment(8)
        .unwrap();
    assert_eq!(classify(&padded), ArgClass::Aggregate { align16: false });
}

#[test]
fn hfas_past_every_register_are_images_in_the_save_area() {
    // Three 8-float HFAs and a float: the third HFA is wholly in memory (doublewords 8-11),
    // the float in doubleword 12.
    let h8 = st(&[seq(8, V::F32)]);
    let p = plan_of(vec![h8.clone(), h8.clone(), h8, v(V::F32)]);
    assert_eq!(locs(&p, 2), [Stack(64), Stack(72), Stack(80), Stack(88)]);
    assert_eq!(p.args[3].moves, [mv(0, 4, Stack(96), Bytes)]);
    assert_eq!(p.stack_bytes(), 104);
}
