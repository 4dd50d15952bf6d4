//! Integer arguments of another integer kind than their parameter's (`linker::handle::convert`):
//! converted when the number fits, [`Error::ArgumentOutOfRange`] when it does not, never for
//! `bool`, pointer or floating-point parameters; through the stub's retry, the trampoline
//! (with and without a stub), `Arguments`, struct returns, capture handles and more arguments
//! than the retry's buffer holds. Every kind and count error names the function. The C side
//! is tests/native/conversions.c (each parameter's number as C sees it), sysv_abi.c and the
//! C library's `memset`.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use common::*;
use gatun::linker::{capture_state_layout, FunctionDescriptor as FD, LinkerOption, SymbolLookup};
use gatun::memory::{Arena, MemorySegment, SegmentAllocator};
use gatun::{Arguments, DowncallHandle, Error, Linker, ScalarKind as K, Value};

const INTEGERS: [K; 8] = [K::I8, K::U8, K::I16, K::U16, K::I32, K::U32, K::I64, K::U64];

/// The range of an integer kind.
fn range(k: K) -> (i128, i128) {
    match k {
        K::I8 => (i8::MIN.into(), i8::MAX.into()),
        K::U8 => (0, u8::MAX.into()),
        K::I16 => (i16::MIN.into(), i16::MAX.into()),
        K::U16 => (0, u16::MAX.into()),
        K::I32 => (i32::MIN.into(), i32::MAX.into()),
        K::U32 => (0, u32::MAX.into()),
        K::I64 => (i64::MIN.into(), i64::MAX.into()),
        K::U64 => (0, u64::MAX.into()),
        _ => unreachable!("{k:?}"),
    }
}

/// The number C received, from `conv_<kind>`'s 64-bit result.
fn number(v: Value<'_>) -> i128 {
    match v {
        Value::I64(x) => x.into(),
        Value::U64(x) => x.into(),
        other => panic!("{other:?}"),
    }
}

/// `conv_<kind>` linked with its C type, with its trampoline twin.
fn conv(k: K) -> [DowncallHandle; 2] {
    let ret = if k == K::U64 { V::U64 } else { V::I64 };
    let h = link(&format!("conv_{}", k.name()), &FD::of(ret, [V::new(k)]));
    let t = h.interpreted();
    [h, t]
}

#[test]
fn every_integer_kind_converts_to_every_other_when_the_number_fits() {
    // boundary numbers of every kind, and one past them
    let mut numbers: Vec<i128> = vec![0, 1, -1];
    for k in INTEGERS {
        let (lo, hi) = range(k);
        numbers.extend([lo, hi, lo - 1, hi + 1]);
    }
    for declared in INTEGERS {
        let name = format!("`conv_{}`", declared.name());
        let (lo, hi) = range(declared);
        for h in conv(declared) {
            for given in INTEGERS {
                for &n in &numbers {
                    let Ok(v) = Value::from_int(given, n) else {
                        continue; // not a value of `given`
                    };
                    // SAFETY: conv_* take one integer and have no preconditions.
                    let r = unsafe { h.invoke(&[v]) };
                    if (lo..=hi).contains(&n) {
                        assert_eq!(number(r.unwrap()), n, "{v:?} for {declared:?}");
                    } else {
                        assert_eq!(
                            r.unwrap_err(),
                            Error::ArgumentOutOfRange {
                                function: name.clone(),
                                argument: 1,
                                value: n.to_string(),
                                kind: declared.name(),
                            },
                            "{v:?} for {declared:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bools_pointers_and_floats_are_not_converted() {
    let arena = Arena::confined();
    let seg = arena.allocate(8, 8).unwrap();
    // (declared, given): each rejected with a ValueMismatch naming the function
    let cases: [(K, Value<'_>); 9] = [
        (K::Bool, Value::I32(1)),
        (K::I32, Value::Bool(true)),
        (K::Pointer, Value::U64(0x1000)),
        (K::U64, Value::Address(std::ptr::null_mut())),
        (K::U64, Value::Segment(seg)),
        (K::F64, Value::I32(1)),
        (K::F64, Value::F32(1.0)),
        (K::F32, Value::F64(1.0)),
        (K::I32, Value::F64(1.0)),
    ];
    // sysv_bool_as_int reads one byte of its argument whatever its declared kind here; it is
    // never called, since every case is refused.
    for (declared, given) in cases {
        let h = link("sysv_bool_as_int", &FD::of(V::I32, [V::new(declared)]));
        for h in [&h, &h.interpreted()] {
            // SAFETY: refused before any call.
            let e = unsafe { h.invoke(&[given]) }.unwrap_err();
            match &e {
                Error::ValueMismatch {
                    position, expected, ..
                } => {
                    assert_eq!(position, "argument 1 of `sysv_bool_as_int`");
                    assert_eq!(expected, declared.name());
                }
                other => panic!("{declared:?} given {given:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn memset_takes_int_literals_for_its_size_t() {
    // void *memset(void *s, int c, size_t n), with `65.into()` and `8.into()`: both `I32`.
    let memset = SymbolLookup::default_lookup().find("memset").unwrap();
    let d = FD::of(V::ADDRESS, [V::ADDRESS, V::I32, V::U64]);
    let h = Linker::native().downcall(&memset, &d, &[]).unwrap();
    for h in [&h, &h.interpreted()] {
        let mut buf = [0u8; 12];
        let b = MemorySegment::of_slice(&mut buf);
        // SAFETY: `b` holds 12 bytes, memset writes 8.
        let r = unsafe { h.invoke(&[b.into(), 65.into(), 8.into()]) }.unwrap();
        assert_eq!(r.as_address(), Some(b.as_ptr().cast()));
        assert_eq!(&buf, b"AAAAAAAA\0\0\0\0");
        // a negative size is refused before the call, naming memset and the argument
        let b = MemorySegment::of_slice(&mut buf);
        // SAFETY: refused before any call.
        let e = unsafe { h.invoke(&[b.into(), 66.into(), (-1).into()]) }.unwrap_err();
        assert_eq!(
            e.to_string(),
            "-1 is out of range for argument 3 of `memset`: expected u64 in 0..=18446744073709551615"
        );
        assert_eq!(&buf, b"AAAAAAAA\0\0\0\0", "nothing was called");
    }
}

#[test]
fn an_i64_constant_passes_for_an_int_enum_parameter() {
    // `int abs(int)` standing for an enum parameter (C enums are `int`) given a constant read
    // as `i64`.
    let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    let h = Linker::native()
        .downcall(&abs, &FD::of(V::I32, [V::I32]), &[])
        .unwrap();
    let constant: i64 = -2;
    // SAFETY: abs has no preconditions.
    let r = unsafe { h.invoke(&[constant.into()]) };
    assert_eq!(r.unwrap(), Value::I32(2));
    // SAFETY: refused before any call.
    let e = unsafe { h.invoke(&[Value::I64(1 << 40)]) }.unwrap_err();
    assert!(
        matches!(&e, Error::ArgumentOutOfRange { argument: 1, value, kind, .. }
            if value == "1099511627776" && *kind == "i32"),
        "{e:?}"
    );
}

#[test]
fn arguments_struct_returns_and_capture_convert_too() {
    // `Arguments` with another kind leaves the slots path and converts on the `Value` path
    let add = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    for h in [&add, &add.interpreted()] {
        let mut a = Arguments::<2>::new();
        a.u8(40).i64(2);
        assert!(!h.takes_slots_path(&a));
        // SAFETY: sysv_add_i32 adds two ints.
        assert_eq!(unsafe { h.invoke_arguments(&a) }.unwrap(), Value::I32(42));
        let mut a = Arguments::<2>::new();
        a.u32(u32::MAX).i32(0);
        // SAFETY: refused before any call.
        let e = unsafe { h.invoke_arguments(&a) }.unwrap_err();
        assert!(
            matches!(e, Error::ArgumentOutOfRange { argument: 1, .. }),
            "{e:?}"
        );
    }
    // a struct return through `invoke_into` (the image entry, its retry, the trampoline)
    let id = st([V::I32, V::F64]);
    let make = link("sysv_id_make", &FD::of(&id, [V::I32, V::F64]));
    let arena = Arena::confined();
    for h in [&make, &make.interpreted()] {
        // SAFETY: `sysv_ID sysv_id_make(int, double)`.
        let r = unsafe { h.invoke_into(&arena, &[Value::I64(-6), Value::F64(0.5)]) }.unwrap();
        let s = r.as_segment().unwrap();
        assert_eq!(
            (s.get::<i32>(0).unwrap(), s.get::<f64>(8).unwrap()),
            (-6, 0.5)
        );
    }
    // a capture handle: the capture segment first, then converted integers
    let errno = link_with(
        "sysv_set_errno",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    let state = arena.allocate_layout(&capture_state_layout()).unwrap();
    let at = capture_state_layout().byte_offset_of("errno").unwrap();
    for h in [&errno, &errno.interpreted()] {
        let args = [Value::Segment(state), Value::U64(7), Value::I16(3)];
        // SAFETY: `int sysv_set_errno(int value, int ret)` sets errno to `value`.
        assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I32(3));
        assert_eq!(state.get::<i32>(at).unwrap(), 7);
        // SAFETY: refused before any call.
        let e = unsafe { h.invoke(&[Value::Segment(state), Value::I64(-1 << 33), Value::I32(0)]) }
            .unwrap_err();
        assert!(
            matches!(&e, Error::ArgumentOutOfRange { argument: 2, function, .. }
                if function == "`sysv_set_errno`"),
            "{e:?}"
        );
    }
}

#[test]
fn more_arguments_than_the_retry_buffer_convert_on_the_trampoline() {
    // double sysv_16i_16d(int i0, double d0, ..., int i15, double d15): 32 arguments
    let layouts: Vec<_> = (0..32)
        .map(|k| if k % 2 == 0 { V::I32 } else { V::F64 })
        .collect();
    let h = link("sysv_16i_16d", &FD::of(V::F64, layouts));
    let want: f64 = (0..16)
        .map(|k| f64::from(k - 3) * f64::from(k + 1) + 0.25 * f64::from(k + 1) * 1000.0)
        .sum();
    let args: Vec<Value<'_>> = (0..16)
        .flat_map(|k: i32| {
            // every integer of another kind than int, all in range
            let n = k - 3;
            let i = match k % 4 {
                0 => Value::I64(n.into()),
                1 => Value::I8(n as i8),
                2 => Value::I16(n as i16),
                _ if k < 8 => Value::U16(n as u16), // n is 0 or 4
                _ => Value::U64(n as u64),
            };
            [i, Value::F64(0.25)]
        })
        .collect();
    for h in [&h, &h.interpreted()] {
        // SAFETY: the C type of sysv_16i_16d; no preconditions.
        assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
        let mut bad = args.clone();
        bad[30] = Value::U32(u32::MAX);
        // SAFETY: refused before any call.
        let e = unsafe { h.invoke(&bad) }.unwrap_err();
        assert!(
            matches!(&e, Error::ArgumentOutOfRange { argument: 31, .. }),
            "{e:?}"
        );
    }
}

#[test]
fn every_kind_and_count_error_names_the_function() {
    let add = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    // SAFETY: refused before any call.
    let e = unsafe { add.invoke(&[Value::I32(1), Value::F32(2.0)]) }.unwrap_err();
    assert_eq!(
        e.to_string(),
        "value mismatch at argument 2 of `sysv_add_i32`: expected i32, found f32"
    );
    // SAFETY: refused before any call.
    let e = unsafe { add.invoke(&[Value::I32(1)]) }.unwrap_err();
    assert!(e.to_string().contains("`sysv_add_i32`"), "{e}");
    // a struct return through `invoke`
    let id = st([V::I32, V::F64]);
    let make = link("sysv_id_make", &FD::of(&id, [V::I32, V::F64]));
    // SAFETY: refused before any call.
    let e = unsafe { make.invoke(&[Value::I32(1), Value::F64(2.0)]) }.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("value mismatch at the return of `sysv_id_make`"),
        "{e}"
    );
    // a struct argument segment that is too small
    let sum = link("sysv_id_sum", &FD::of(V::F64, [&id]));
    let mut small = [0u8; 8];
    // SAFETY: refused before any call.
    let e =
        unsafe { sum.invoke(&[Value::Segment(MemorySegment::of_slice(&mut small))]) }.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("value mismatch at argument 1 of `sysv_id_sum`"),
        "{e}"
    );
    // a capture segment of the wrong kind
    let errno = link_with(
        "sysv_set_errno",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    // SAFETY: refused before any call.
    let e = unsafe { errno.invoke(&[Value::I32(0), Value::I32(1), Value::I32(2)]) }.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("value mismatch at argument 1 of `sysv_set_errno` (the capture segment)"),
        "{e}"
    );
    // a typed view of other types
    let e = add.typed::<(i32, f64), i32>().unwrap_err();
    assert!(
        e.to_string()
            .starts_with("value mismatch at argument 2 of `sysv_add_i32`"),
        "{e}"
    );
    // a function made from an address is named by it
    // SAFETY: the address is sysv_add_i32's, a function of the descriptor's type.
    let anon = unsafe { gatun::Symbol::from_address(sym("sysv_add_i32").address()) };
    let anon = Linker::native()
        .downcall(&anon, &FD::of(V::I32, [V::I32, V::I32]), &[])
        .unwrap();
    // SAFETY: refused before any call.
    let e = unsafe { anon.invoke(&[Value::I32(1), Value::Bool(true)]) }.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "value mismatch at argument 2 of the function at {:#x}: expected i32, found bool",
            anon.address() as usize
        )
    );
}
