//! `Arguments` and `invoke_arguments` against C: every scalar kind through the slots path and
//! the trampoline, the kind and count checks (typed errors naming the argument), and the
//! `Value`-path fallbacks (struct arguments and returns, segments for pointers, capture,
//! variadic). The functions are tests/native/sysv_abi.c's and capture.c's.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use common::*;
use gatun::linker::{capture_state_layout, FunctionDescriptor as FD, LinkerOption};
use gatun::memory::{MemorySegment, PrefixAllocator};
use gatun::{Arguments, Error, Value};

/// Whether a call of `n` scalar arguments (not variadic, a non-bool return) takes the slots
/// path on this target: up to eight on x86-64 SysV, AArch64 and RISC-V 64, four on Windows (the register
/// arguments of each convention's direct call; x86-64 SysV's seventh and eighth go through the
/// stub's slots entry).
fn slots(n: usize) -> bool {
    n <= if cfg!(windows) { 4 } else { 8 }
}

#[test]
fn every_scalar_kind_through_both_executors() {
    // int64_t sysv_small_args(signed char, unsigned char, short, unsigned short, bool, int)
    let h = link(
        "sysv_small_args",
        &FD::of(V::I64, [V::I8, V::U8, V::I16, V::U16, V::BOOL, V::I32]),
    );
    let mut a = Arguments::<6>::new();
    a.i8(-3).u8(200).i16(-300).u16(60000).bool(true).i32(-7);
    let want = -3 + 200 * 10 + -300 * 100 + 60000 * 1000 + 100000 + -7 * 1_000_000;
    assert_eq!(h.takes_slots_path(&a), slots(6));
    for h in [&h, &h.interpreted()] {
        // SAFETY: the C type is the descriptor's.
        assert_eq!(unsafe { h.invoke_arguments(&a) }.unwrap(), Value::I64(want));
    }
    // float, int, float -> float; double x 3 -> double; pointer, long -> pointer
    let f = link("sysv_f32_mix", &FD::of(V::F32, [V::F32, V::I32, V::F32]));
    let mut a = Arguments::<3>::new();
    a.f32(1.5).i32(2).f32(4.0);
    assert_eq!(f.takes_slots_path(&a), slots(3));
    // SAFETY: as above.
    assert_eq!(unsafe { f.invoke_arguments(&a) }.unwrap(), Value::F32(7.0));
    let d = link("sysv_fma3", &FD::of(V::F64, [V::F64; 3]));
    let mut a = Arguments::<3>::new();
    a.f64(2.0).f64(3.0).f64(0.5);
    // SAFETY: as above.
    assert_eq!(unsafe { d.invoke_arguments(&a) }.unwrap(), Value::F64(6.5));
    let p = link("sysv_ptr_offset", &FD::of(V::ADDRESS, [V::ADDRESS, V::I64]));
    let mut buf = [0u8; 16];
    let seg = MemorySegment::of_slice(&mut buf);
    let mut a = Arguments::<2>::new();
    a.segment_address(seg).i64(5);
    assert_eq!(p.takes_slots_path(&a), slots(2));
    // SAFETY: the function only computes an address.
    let got = unsafe { p.invoke_arguments(&a) }.unwrap();
    assert_eq!(got, Value::Address(seg.as_ptr().wrapping_add(5).cast()));
    // a segment for a pointer parameter takes the `Value` path, with the same result
    let mut a = Arguments::<2>::new();
    a.segment(seg).i64(5);
    assert!(!p.takes_slots_path(&a));
    // SAFETY: as above.
    assert_eq!(unsafe { p.invoke_arguments(&a) }.unwrap(), got);
    // unsigned 32/64-bit and address kinds, and no arguments at all
    let noop = link("sysv_noop", &FD::of_void([]));
    let none = Arguments::<0>::new();
    assert_eq!(noop.takes_slots_path(&none), slots(0));
    assert_eq!(
        // SAFETY: void sysv_noop(void).
        unsafe { noop.invoke_arguments(&none) }.unwrap(),
        Value::Void
    );
    // a bool return normalises on the `Value` path
    let b = link("sysv_ret_bool", &FD::of(V::BOOL, [V::I64]));
    let mut a = Arguments::<1>::new();
    a.i64(0x100);
    assert!(!b.takes_slots_path(&a));
    assert_eq!(
        // SAFETY: as above.
        unsafe { b.invoke_arguments(&a) }.unwrap(),
        Value::Bool(false)
    );
}

#[test]
fn eight_arguments_in_registers_and_on_the_stack() {
    // six integers in registers, two on the stack (the stub's slots entry on x86-64 SysV)
    let add8 = link("sysv_add8", &FD::of(V::I64, [V::I64; 8]));
    let mut a = Arguments::<8>::new();
    (1..=8).for_each(|i| {
        a.i64(i * 10 - 100);
    });
    let want: i64 = (1..=8).map(|i| i * (i * 10 - 100)).sum();
    // eight doubles in xmm0-xmm7 (straight from Rust on x86-64 SysV)
    let sum8 = link("sysv_sum8d", &FD::of(V::F64, [V::F64; 8]));
    let mut d = Arguments::<8>::new();
    (1..=8).for_each(|i| {
        d.f64(i as f64 * 0.5);
    });
    let want_d: f64 = (1..=8).map(|i| i as f64 * (i as f64 * 0.5)).sum();
    // a float return with a stack argument (the slots entry's leaf frame)
    let mix = link(
        "sysv_mix7i1d",
        &FD::of(
            V::F64,
            [
                V::I64,
                V::I64,
                V::I64,
                V::I64,
                V::I64,
                V::I64,
                V::I32,
                V::F64,
            ],
        ),
    );
    let mut m = Arguments::<8>::new();
    m.i64(1)
        .i64(2)
        .i64(3)
        .i64(4)
        .i64(5)
        .i64(6)
        .i32(-7)
        .f64(0.25);
    let want_m = (1 + 4 + 9 + 16 + 25 + 36 - 49) as f64 + 0.25;
    for (h, args) in [(&add8, &a), (&sum8, &d), (&mix, &m)] {
        assert_eq!(h.takes_slots_path(args), slots(8), "{h:?}");
    }
    for _ in 0..3 {
        for (add8, sum8, mix) in [
            (add8.clone(), sum8.clone(), mix.clone()),
            (add8.interpreted(), sum8.interpreted(), mix.interpreted()),
        ] {
            // SAFETY: the C types are the descriptors'.
            unsafe {
                assert_eq!(add8.invoke_arguments(&a).unwrap(), Value::I64(want));
                assert_eq!(sum8.invoke_arguments(&d).unwrap(), Value::F64(want_d));
                assert_eq!(mix.invoke_arguments(&m).unwrap(), Value::F64(want_m));
            }
        }
    }
    // nine arguments never take the slots path, and still work
    let mut nine = Arguments::<9>::new();
    (1..=9).for_each(|i| {
        nine.i64(i);
    });
    // SAFETY: nothing is called on an error (nine arguments for eight).
    assert!(unsafe { add8.invoke_arguments(&nine) }.is_err());
}

#[test]
fn wrong_kinds_and_counts_are_typed_errors_before_the_call() {
    let add = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    for h in [&add, &add.interpreted()] {
        let mut a = Arguments::<2>::new();
        a.i32(1).f64(2.0);
        // SAFETY: nothing is called on an error.
        match unsafe { h.invoke_arguments(&a) } {
            Err(Error::ValueMismatch {
                position,
                expected,
                found,
            }) => {
                assert_eq!(position, "argument 2 of `sysv_add_i32`");
                assert_eq!((expected.as_str(), found.as_str()), ("i32", "f64"));
            }
            other => panic!("{other:?}"),
        }
        // an integer of another kind is converted when it fits, an error when it does not
        let mut a = Arguments::<2>::new();
        a.i32(1).i64(2);
        // SAFETY: sysv_add_i32 adds two ints.
        assert_eq!(unsafe { h.invoke_arguments(&a) }.unwrap(), Value::I32(3));
        let mut a = Arguments::<2>::new();
        a.u64(1 << 40).i32(2);
        // SAFETY: nothing is called on an error.
        let err = unsafe { h.invoke_arguments(&a) }.unwrap_err();
        assert!(
            matches!(&err, Error::ArgumentOutOfRange { argument: 1, function, .. } if function == "`sysv_add_i32`"),
            "{err}"
        );
        let mut a = Arguments::<3>::new();
        a.i32(1);
        // SAFETY: as above.
        let err = unsafe { h.invoke_arguments(&a) }.unwrap_err();
        assert!(
            matches!(
                err,
                Error::ArgumentCount {
                    expected: 2,
                    found: 1,
                    ..
                }
            ),
            "{err}"
        );
        a.i32(2).i32(3);
        // SAFETY: as above.
        let err = unsafe { h.invoke_arguments(&a) }.unwrap_err();
        assert!(
            matches!(
                err,
                Error::ArgumentCount {
                    expected: 2,
                    found: 3,
                    ..
                }
            ),
            "{err}"
        );
        // past the capacity: nothing is called, the error names the first argument lost
        let mut a = Arguments::<1>::new();
        a.i32(1).i32(2);
        // SAFETY: as above.
        let err = unsafe { h.invoke_arguments(&a) }.unwrap_err();
        assert!(
            matches!(&err, Error::ValueMismatch { position, .. } if position == "argument 2 of `sysv_add_i32`"),
            "{err}"
        );
        assert!(
            err.to_string().contains(
                "expected at most 1 argument (the capacity of Arguments<1>), found 2 pushed"
            ),
            "{err}"
        );
        // `Void` is no argument
        let mut a = Arguments::<2>::new();
        a.i32(1).value(Value::Void);
        // SAFETY: as above.
        assert!(unsafe { h.invoke_arguments(&a) }.is_err());
    }
    // every scalar kind against every other: accepted exactly when equal, or when both are
    // integer kinds (the 1 pushed fits every integer kind)
    use gatun::ScalarKind as K;
    let integer = |k: K| {
        matches!(
            k,
            K::I8 | K::U8 | K::I16 | K::U16 | K::I32 | K::U32 | K::I64 | K::U64
        )
    };
    let push = |a: &mut Arguments<'_, 1>, k: K| {
        match k {
            K::Bool => a.bool(true),
            K::I8 => a.i8(1),
            K::U8 => a.u8(1),
            K::I16 => a.i16(1),
            K::U16 => a.u16(1),
            K::I32 => a.i32(1),
            K::U32 => a.u32(1),
            K::I64 => a.i64(1),
            K::U64 => a.u64(1),
            K::F32 => a.f32(1.0),
            K::F64 => a.f64(1.0),
            K::Pointer => a.address(std::ptr::null_mut()),
        };
    };
    // sysv_bool_as_int reads one byte of its argument whatever its declared kind here: any
    // single scalar in the first argument register or xmm0 is harmless.
    for declared in K::ALL {
        let layout = gatun::ValueLayout::new(declared);
        let h = link("sysv_bool_as_int", &FD::of(V::I32, [layout]));
        for given in K::ALL {
            let mut a = Arguments::<1>::new();
            push(&mut a, given);
            assert_eq!(h.takes_slots_path(&a), slots(1) && given == declared);
            // SAFETY: see above.
            let r = unsafe { h.invoke_arguments(&a) };
            assert_eq!(
                r.is_ok(),
                given == declared || (integer(given) && integer(declared)),
                "{declared:?} given {given:?}: {r:?}"
            );
        }
    }
}

#[test]
fn segments_structs_capture_and_variadic_take_the_value_path() {
    let id = st([V::I32, V::F64]);
    let id_sum = link("sysv_id_sum", &FD::of(V::F64, [&id]));
    let id_make = link("sysv_id_make", &FD::of(&id, [V::I32, V::F64]));
    let mut buf = [0u8; 16];
    let s = MemorySegment::of_slice(&mut buf);
    let mut a = Arguments::<2>::new();
    a.i32(4).f64(0.25);
    let alloc = PrefixAllocator::new(s);
    // SAFETY: the C types are the descriptors'.
    let r = unsafe { id_make.invoke_arguments_into(&alloc, &a) }.unwrap();
    assert_eq!(r.as_segment().unwrap().get::<i32>(0).unwrap(), 4);
    // a struct return through `invoke_arguments` is the same error as through `invoke`
    // SAFETY: nothing is called on an error.
    assert!(unsafe { id_make.invoke_arguments(&a) }.is_err());
    let mut a = Arguments::<1>::new();
    a.segment(s);
    assert_eq!(
        // SAFETY: as above.
        unsafe { id_sum.invoke_arguments(&a) }.unwrap(),
        Value::F64(40.25)
    );
    // a segment shorter than the struct is an error
    let mut short = [0u8; 8];
    let mut a = Arguments::<1>::new();
    a.segment(MemorySegment::of_slice(&mut short));
    // SAFETY: nothing is called on an error.
    assert!(unsafe { id_sum.invoke_arguments(&a) }.is_err());

    let errno = link_with(
        "sysv_set_errno",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    let mut cap = [0u32; 3];
    // SAFETY: u32 has no padding; lengths match.
    let bytes = unsafe { std::slice::from_raw_parts_mut(cap.as_mut_ptr().cast::<u8>(), 12) };
    let c = MemorySegment::of_slice(bytes);
    let mut a = Arguments::<3>::new();
    a.segment(c).i32(33).i32(-1);
    assert_eq!(
        // SAFETY: the C type is the descriptor's; `c` is a capture buffer.
        unsafe { errno.invoke_arguments(&a) }.unwrap(),
        Value::I32(-1)
    );
    let at = capture_state_layout().byte_offset_of("errno").unwrap() / 4;
    assert_eq!(cap[at], 33);

    let va = link_with(
        "sysv_va_sum",
        &FD::of(V::F64, [V::ADDRESS, V::F32, V::I8, V::F64]),
        &[LinkerOption::FirstVariadicArg(1)],
    );
    let mut tags = *b"did\0";
    let t = MemorySegment::of_slice(&mut tags);
    let mut a = Arguments::<4>::new();
    a.segment_address(t).f32(1.5).i8(2).f64(3.0);
    let mut v = [Value::Void; 4];
    v[0] = Value::Segment(t);
    v[1] = Value::F32(1.5);
    v[2] = Value::I8(2);
    v[3] = Value::F64(3.0);
    // SAFETY: the C type is the descriptor's; `tags` is NUL-terminated.
    let want = unsafe { va.invoke(&v) }.unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { va.invoke_arguments(&a) }.unwrap(), want);
}

mod random_values {
    use super::*;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    /// Functions of mixed scalar kinds (registers only, stack arguments, float and integer
    /// results), linked once.
    fn handles() -> &'static [gatun::DowncallHandle; 5] {
        static H: OnceLock<[gatun::DowncallHandle; 5]> = OnceLock::new();
        H.get_or_init(|| {
            [
                link(
                    "sysv_small_args",
                    &FD::of(V::I64, [V::I8, V::U8, V::I16, V::U16, V::BOOL, V::I32]),
                ),
                link("sysv_f32_mix", &FD::of(V::F32, [V::F32, V::I32, V::F32])),
                link("sysv_add8", &FD::of(V::I64, [V::I64; 8])),
                link("sysv_sum8d", &FD::of(V::F64, [V::F64; 8])),
                link(
                    "sysv_mix7i1d",
                    &FD::of(
                        V::F64,
                        [
                            V::I64,
                            V::I64,
                            V::I64,
                            V::I64,
                            V::I64,
                            V::I64,
                            V::I32,
                            V::F64,
                        ],
                    ),
                ),
            ]
        })
    }

    /// Random values of function `f`'s argument kinds, from `bits`.
    fn values(f: usize, bits: &[u64; 8]) -> Vec<Value<'static>> {
        let fl = |b: u64| (b as i32 % 1000) as f64 / 8.0;
        match f {
            0 => vec![
                Value::I8(bits[0] as i8),
                Value::U8(bits[1] as u8),
                Value::I16(bits[2] as i16),
                Value::U16(bits[3] as u16),
                Value::Bool(bits[4] & 1 == 1),
                Value::I32(bits[5] as i32),
            ],
            1 => vec![
                Value::F32(fl(bits[0]) as f32),
                Value::I32(bits[1] as i32 % 1000),
                Value::F32(fl(bits[2]) as f32),
            ],
            2 => bits.iter().map(|b| Value::I64(*b as i64)).collect(),
            3 => bits.iter().map(|b| Value::F64(fl(*b))).collect(),
            _ => {
                let mut v: Vec<Value> = bits[..6].iter().map(|b| Value::I64(*b as i64)).collect();
                v.push(Value::I32(bits[6] as i32));
                v.push(Value::F64(fl(bits[7])));
                v
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn invoke_arguments_agrees_with_invoke(f in 0..5usize, bits in any::<[u64; 8]>()) {
            let h = &handles()[f];
            let vals = values(f, &bits);
            let mut a = Arguments::<8>::new();
            vals.iter().for_each(|v| {
                a.value(*v);
            });
            prop_assert_eq!(h.takes_slots_path(&a), slots(vals.len()));
            // SAFETY: the C types are the descriptors'; the functions only compute.
            let (want, got, interp) = unsafe {
                (
                    h.invoke(&vals).unwrap(),
                    h.invoke_arguments(&a).unwrap(),
                    h.interpreted().invoke_arguments(&a).unwrap(),
                )
            };
            prop_assert_eq!(got, want);
            prop_assert_eq!(interp, want);
        }
    }
}
