//! CallPlan unit tests: register assignments asserted directly (no native code; Miri-clean).

use super::{classify, plan, ArgClass, Classification, Visited};
use crate::abi::*;
use crate::error::Error;
use crate::layout::{FunctionDescriptor as FD, MemoryLayout, ValueLayout as V};

fn st(m: &[MemoryLayout]) -> MemoryLayout {
    MemoryLayout::c_struct(m.iter().cloned()).unwrap()
}

fn v(l: V) -> MemoryLayout {
    l.into()
}

fn locs(p: &CallPlan, i: usize) -> Vec<Location> {
    p.args[i].moves.iter().map(|m| m.to).collect()
}

use Location::{Int, Stack, Vector};

#[test]
fn int_double_is_rdi_xmm0() {
    let s = st(&[v(V::I32), v(V::F64)]);
    assert_eq!(
        classify(&s),
        Classification::Eightbytes(vec![ArgClass::Integer, ArgClass::Sse])
    );
    let p = plan(&FD::of_void([s]), None).unwrap();
    assert_eq!(locs(&p, 0), [Int(0), Vector(0)]);
    assert_eq!(
        p.args[0].moves[0],
        ArgMove {
            offset: 0,
            size: 8,
            to: Int(0),
            conv: Conversion::Bytes
        }
    );
    assert_eq!(p.to_string(), "(rdi+xmm0) -> void");
}

#[test]
fn float_int_merges_to_integer() {
    let s = st(&[v(V::F32), v(V::I32)]);
    assert_eq!(
        classify(&s),
        Classification::Eightbytes(vec![ArgClass::Integer])
    );
    let ff = st(&[v(V::F32), v(V::F32)]);
    assert_eq!(
        classify(&ff),
        Classification::Eightbytes(vec![ArgClass::Sse])
    );
}

#[test]
fn large_and_unaligned_are_memory() {
    let l3 = st(&[v(V::I64), v(V::I64), v(V::I64)]);
    assert_eq!(classify(&l3), Classification::Memory);
    let packed = MemoryLayout::c_struct_packed([V::I8, V::I32], 1).unwrap();
    assert_eq!(classify(&packed), Classification::Memory);
    let packed_ok = MemoryLayout::c_struct_packed([V::I32, V::I32], 1).unwrap();
    assert_eq!(
        classify(&packed_ok),
        Classification::Eightbytes(vec![ArgClass::Integer])
    );
}

#[test]
fn odd_sizes_move_exact_bytes() {
    for (n, sizes) in [
        (3usize, vec![3u8]),
        (5, vec![5]),
        (7, vec![7]),
        (9, vec![8, 1]),
        (12, vec![8, 4]),
        (15, vec![8, 7]),
    ] {
        let s = st(&[MemoryLayout::sequence_layout(n, V::U8).unwrap()]);
        let p = plan(&FD::of(s.clone(), [s]), None).unwrap();
        let got: Vec<u8> = p.args[0].moves.iter().map(|m| m.size).collect();
        assert_eq!(got, sizes, "n={n}");
        let ReturnPlan::Registers(r) = &p.ret else {
            panic!("n={n}: {:?}", p.ret)
        };
        let got: Vec<u8> = r.iter().map(|m| m.size).collect();
        assert_eq!(got, sizes, "ret n={n}");
        assert_eq!(p.return_image_bytes(), 8 * sizes.len());
    }
}

#[test]
fn memory_return_shifts_integer_arguments() {
    let l3 = st(&[v(V::I64), v(V::I64), v(V::I64)]);
    let p = plan(&FD::of(l3, [V::I32, V::F64, V::I32]), None).unwrap();
    assert_eq!(p.ret, ReturnPlan::InMemory);
    assert_eq!(p.hidden_return_pointer, Some(Int(0)));
    assert_eq!(locs(&p, 0), [Int(1)]);
    assert_eq!(locs(&p, 1), [Vector(0)]);
    assert_eq!(locs(&p, 2), [Int(2)]);
}

#[test]
fn struct_goes_wholly_to_stack_and_registers_stay_free() {
    let ll = st(&[v(V::I64), v(V::I64)]);
    let mut args = vec![v(V::I64); 5];
    args.push(ll);
    args.push(v(V::I64));
    let p = plan(&FD::of_void(args), None).unwrap();
    assert_eq!(locs(&p, 5), [Stack(0), Stack(8)]);
    assert_eq!(locs(&p, 6), [Int(4 + 1)]);
    assert_eq!(p.stack_bytes, 16);

    let dl = st(&[v(V::F64), v(V::I64)]);
    let mut args = vec![v(V::F64); 8];
    args.push(dl);
    args.push(v(V::I64));
    let p = plan(&FD::of_void(args), None).unwrap();
    assert_eq!(locs(&p, 8), [Stack(0), Stack(8)]);
    assert_eq!(locs(&p, 9), [Int(0)]);
}

#[test]
fn return_registers() {
    let cases = [
        (
            vec![v(V::F64), v(V::F64)],
            vec![Register::Vector(0), Register::Vector(1)],
        ),
        (
            vec![v(V::I64), v(V::F64)],
            vec![Register::Int(0), Register::Vector(0)],
        ),
        (
            vec![v(V::F64), v(V::I64)],
            vec![Register::Vector(0), Register::Int(0)],
        ),
        (
            vec![v(V::I64), v(V::I64)],
            vec![Register::Int(0), Register::Int(1)],
        ),
    ];
    for (fields, regs) in cases {
        let p = plan(&FD::of(st(&fields), []), None).unwrap();
        let ReturnPlan::Registers(r) = p.ret else {
            panic!()
        };
        assert_eq!(r.iter().map(|m| m.from).collect::<Vec<_>>(), regs);
    }
    let p = plan(&FD::of(V::F32, []), None).unwrap();
    assert_eq!(p.ret, ReturnPlan::Scalar(Register::Vector(0)));
}

#[test]
fn variadic_promotions_and_al() {
    let d = FD::of(V::I32, [V::ADDRESS, V::F32, V::I16, V::F32]);
    let p = plan(&d, Some(2)).unwrap();
    // fixed float: no promotion; variadic float: float → double
    assert_eq!(p.args[1].moves[0].conv, Conversion::Bytes);
    assert_eq!(p.args[3].moves[0].conv, Conversion::FloatToDouble);
    assert_eq!(p.args[2].moves[0].conv, Conversion::SignExtend);
    assert_eq!(p.vector_registers, 2);
    assert!(p.is_variadic());
    let p = plan(&d, None).unwrap();
    assert_eq!(p.args[3].moves[0].conv, Conversion::Bytes);
    assert!(plan(&d, Some(5)).is_err());
    assert!(plan(&d, Some(4)).is_ok());
}

#[test]
fn nested_arrays_unions() {
    let nested = st(&[st(&[v(V::F32), v(V::F32)]), v(V::F64)]);
    assert_eq!(
        classify(&nested),
        Classification::Eightbytes(vec![ArgClass::Sse, ArgClass::Sse])
    );
    let arr = st(&[MemoryLayout::sequence_layout(3, V::I32).unwrap(), v(V::F32)]);
    assert_eq!(
        classify(&arr),
        Classification::Eightbytes(vec![ArgClass::Integer, ArgClass::Integer])
    );
    let u = MemoryLayout::union_layout([V::F64, V::F32]).unwrap();
    assert_eq!(
        classify(&u),
        Classification::Eightbytes(vec![ArgClass::Sse])
    );
    let u = MemoryLayout::union_layout([V::I64, V::F64]).unwrap();
    assert_eq!(
        classify(&u),
        Classification::Eightbytes(vec![ArgClass::Integer])
    );
}

#[test]
fn sixteen_ints_sixteen_doubles_stack_layout() {
    let mut a = Vec::new();
    for _ in 0..16 {
        a.push(v(V::I32));
        a.push(v(V::F64));
    }
    let p = plan(&FD::of_void(a), None).unwrap();
    // ints 6.. and doubles 8.. go to the stack in argument order
    assert_eq!(locs(&p, 10), [Int(5)]);
    assert_eq!(locs(&p, 12), [Stack(0)]);
    assert_eq!(locs(&p, 15), [Vector(7)]);
    assert_eq!(locs(&p, 16), [Stack(16)]);
    assert_eq!(locs(&p, 17), [Stack(24)]);
    assert_eq!(p.stack_bytes, 18 * 8);
    assert_eq!(p.vector_registers, 8);
}

/// Runs `classify` and counts the layout nodes it visits.
fn classify_counting(l: &MemoryLayout) -> (Classification, usize) {
    super::VISITS.with(|v| v.set(0));
    let c = classify(l);
    (c, super::VISITS.with(|v| v.get()))
}

#[test]
fn zero_size_elements_are_skipped_whatever_their_count() {
    let empty = MemoryLayout::c_struct(Vec::<MemoryLayout>::new()).unwrap();
    let zs = MemoryLayout::sequence_layout(usize::MAX, empty.clone()).unwrap();
    let s = st(&[v(V::I32), zs.clone()]);
    assert_eq!(s.byte_size(), 4);
    let (c, visits) = classify_counting(&s);
    assert_eq!(c, Classification::Eightbytes(vec![ArgClass::Integer]));
    assert!(visits <= 3, "{visits} nodes visited");
    let p = plan(&FD::of(s.clone(), [s.clone()]), None).unwrap();
    assert_eq!(p.to_string(), "(rdi) -> rax");
    // Zero-length arrays of non-empty elements too, and zero-size members among real ones.
    let zl = MemoryLayout::sequence_layout(0, V::F64).unwrap();
    let s = st(&[zl, v(V::F32), zs, v(V::F32), empty]);
    let (c, visits) = classify_counting(&s);
    assert_eq!(c, Classification::Eightbytes(vec![ArgClass::Sse]));
    assert!(visits <= 6, "{visits} nodes visited");
}

#[test]
fn shared_unions_are_classified_in_linear_work() {
    let mut u = MemoryLayout::union_layout([V::I32.with_name("a"), V::F32.with_name("b")]).unwrap();
    for _ in 0..40 {
        u = MemoryLayout::union_layout([u.clone().with_name("a"), u.with_name("b")]).unwrap();
    }
    let s = st(&[u.clone(), v(V::F64)]);
    let (c, visits) = classify_counting(&s);
    assert_eq!(
        c,
        Classification::Eightbytes(vec![ArgClass::Integer, ArgClass::Sse])
    );
    // Each distinct union once, its second (shared) member a memo hit: 2 visits per level.
    assert!(visits <= 2 * 41 + 8, "{visits} nodes visited");
    let p = plan(&FD::of(u.clone(), [s]), None).unwrap();
    assert_eq!(p.to_string(), "(rdi+xmm0) -> rax");
}

#[test]
fn a_small_union_of_many_distinct_members_is_classified_in_linear_work() {
    // 16 bytes, but any number of distinct members (more than the walker's inline memo holds):
    // each member struct is visited once, with its two scalars.
    let n = if cfg!(miri) { 100 } else { 5000 };
    let member = |i: usize| st(&[v(V::I64.with_name(format!("a{i}"))), v(V::F64)]);
    let u = MemoryLayout::union_layout((0..n).map(member)).unwrap();
    let (c, visits) = classify_counting(&u);
    assert_eq!(
        c,
        Classification::Eightbytes(vec![ArgClass::Integer, ArgClass::Sse])
    );
    assert_eq!(visits, 1 + 3 * n);
    // The same member shared n times: one walk of it, n - 1 memo hits.
    let shared = member(0);
    let u = MemoryLayout::union_layout((0..n).map(|_| shared.clone())).unwrap();
    let (_, visits) = classify_counting(&u);
    assert_eq!(visits, 1 + 3 + (n - 1));
}

#[test]
fn sequences_inside_small_aggregates_walk_every_element() {
    // The memo is per (node, offset): each element of a sequence is still merged.
    let s = st(&[MemoryLayout::sequence_layout(3, V::F32).unwrap(), v(V::I32)]);
    assert_eq!(
        classify(&s),
        Classification::Eightbytes(vec![ArgClass::Sse, ArgClass::Integer])
    );
    let inner = st(&[v(V::F32)]);
    let s = st(&[inner.clone(), inner.clone(), inner, v(V::I8)]);
    assert_eq!(
        classify(&s),
        Classification::Eightbytes(vec![ArgClass::Sse, ArgClass::Integer])
    );
}

fn huge_struct(bytes: usize) -> MemoryLayout {
    st(&[MemoryLayout::sequence_layout(bytes / 8, V::I64).unwrap()])
}

#[test]
fn huge_by_value_structs_are_rejected_without_per_byte_work() {
    for log2 in [27, 61, 62] {
        let s = huge_struct(1 << log2);
        assert_eq!(s.byte_size(), 1 << log2);
        let (c, visits) = classify_counting(&s);
        assert_eq!(c, Classification::Memory);
        assert_eq!(visits, 0);
        let fd = FD::of_void([v(V::I32), s.clone()]);
        let e = plan(&fd, None).unwrap_err();
        let Error::InvalidDescriptor { reason, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(
            reason,
            &format!(
                "the call needs {} bytes of stack arguments; gatun's executor supports at most 1048576",
                1usize << log2
            )
        );
        // Several of them: the total overflows usize, still an error.
        let e = plan(&FD::of_void([s.clone(), s.clone(), s.clone(), s]), None).unwrap_err();
        assert!(e.to_string().contains("bytes of stack arguments"), "{e}");
    }
    let e = plan(&FD::of_void(vec![huge_struct(1 << 62); 4]), None).unwrap_err();
    assert!(
        e.to_string().contains("needs more than usize::MAX bytes"),
        "{e}"
    );
    // A huge return goes through the hidden pointer: no stack, no error.
    let p = plan(&FD::of(huge_struct(1 << 62), [v(V::I32)]), None).unwrap();
    assert_eq!(p.to_string(), "(ret-ptr:rdi, rsi) -> memory");
}

#[test]
#[cfg_attr(miri, ignore = "131,072-move plans: slow under Miri")]
fn the_stack_limit_is_exact() {
    // 1 MiB of stack (1,048,576 bytes): accepted, the last of 131,072 slots at 1,048,568.
    let mib = crate::abi::MAX_STACK_BYTES;
    assert_eq!(mib, 1_048_576);
    let p = plan(&FD::of_void([huge_struct(mib)]), None).unwrap();
    assert_eq!(p.stack_bytes as usize, mib);
    assert_eq!(p.args[0].moves.len(), 131_072);
    assert_eq!(p.args[0].moves[131_071].to, Stack(1_048_568));
    // One more slot (a scalar after 6 integer registers are used) is too much, reason first.
    let mut args = vec![v(V::I64); 6];
    args.push(huge_struct(mib));
    args.push(v(V::I64));
    let e = plan(&FD::of_void(args), None).unwrap_err();
    let Error::InvalidDescriptor { reason, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(
        reason,
        "the call needs 1048584 bytes of stack arguments; gatun's executor supports at most 1048576"
    );
    assert!(
        e.to_string()
            .starts_with("invalid function descriptor: the call needs 1048584 bytes"),
        "{e}"
    );
    // The same in 131,072 scalars: 6 in registers, the rest one slot each.
    let p = plan(&FD::of_void(vec![v(V::I64); 6 + 131_072]), None).unwrap();
    assert_eq!(p.stack_bytes as usize, mib);
    assert!(plan(&FD::of_void(vec![v(V::I64); 6 + 131_073]), None).is_err());
    // 16-byte alignment padding counts.
    let a16 =
        MemoryLayout::c_struct([MemoryLayout::sequence_layout(2, V::I64).unwrap(), v(V::I64)])
            .unwrap()
            .with_byte_alignment(16)
            .unwrap();
    assert_eq!(a16.byte_size(), 32);
    let mut args = vec![v(V::I64); 7];
    args.push(a16);
    let p = plan(&FD::of_void(args), None).unwrap();
    assert_eq!(p.args[7].moves[0].to, Stack(16));
    assert_eq!(p.stack_bytes, 48);
}

#[test]
fn visited_pairs_are_remembered_inline_then_in_a_hash_set() {
    let mut seen = Visited::new();
    for i in 0..Visited::INLINE {
        assert!(seen.insert((i, 8)), "{i}");
        assert!(!seen.insert((i, 8)), "{i}");
    }
    assert!(!seen.is_spilled());
    assert!(seen.insert((0, 0)), "another base");
    assert!(seen.is_spilled());
    for i in 0..Visited::INLINE {
        assert!(!seen.insert((i, 8)), "{i} was kept when spilling");
    }
    assert!(!seen.insert((0, 0)));
    assert!(seen.insert((Visited::INLINE, 8)));
}
