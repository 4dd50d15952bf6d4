//! Tests of [`Value`], its conversions and the tag helpers.

use super::*;
use crate::memory::{Arena, SegmentAllocator};

#[test]
fn from_impls_pick_the_variant_of_each_rust_type() {
    assert_eq!(Value::from(true), Value::Bool(true));
    assert_eq!(Value::from(-1_i8), Value::I8(-1));
    assert_eq!(Value::from(200_u8), Value::U8(200));
    assert_eq!(Value::from(-2_i16), Value::I16(-2));
    assert_eq!(Value::from(60000_u16), Value::U16(60000));
    assert_eq!(Value::from(-3_i32), Value::I32(-3));
    assert_eq!(Value::from(3_000_000_000_u32), Value::U32(3_000_000_000));
    assert_eq!(Value::from(-4_i64), Value::I64(-4));
    assert_eq!(Value::from(u64::MAX), Value::U64(u64::MAX));
    assert_eq!(Value::from(-5_isize), Value::I64(-5));
    assert_eq!(Value::from(5_usize), Value::U64(5));
    assert_eq!(Value::from(1.5_f32), Value::F32(1.5));
    assert_eq!(Value::from(2.5_f64), Value::F64(2.5));
    assert_eq!(Value::from(()), Value::Void);
    let mut x = 7_i32;
    let p: *mut i32 = &mut x;
    assert_eq!(Value::from(p), Value::Address(p.cast()));
    assert_eq!(Value::from(p.cast_const()), Value::Address(p.cast()));
    let arena = Arena::confined();
    let seg = arena.allocate(8, 8).unwrap();
    assert_eq!(Value::from(seg), Value::Segment(seg));
    assert_eq!(Value::from(&seg), Value::Segment(seg));
    assert_eq!(Value::from(seg).as_address(), Some(seg.as_address()));
}

#[test]
fn accessors_return_exactly_representable_values_only() {
    assert_eq!(Value::U8(200).as_i16(), Some(200));
    assert_eq!(Value::U8(200).as_i8(), None);
    assert_eq!(Value::I32(-1).as_u32(), None);
    assert_eq!(Value::I32(-1).as_i8(), Some(-1));
    assert_eq!(Value::U64(u64::MAX).as_u64(), Some(u64::MAX));
    assert_eq!(Value::U64(u64::MAX).as_usize(), Some(usize::MAX));
    assert_eq!(Value::I64(-7).as_isize(), Some(-7));
    assert_eq!(Value::U32(70000).as_u16(), None);
    assert_eq!(Value::I16(-3).as_i32(), Some(-3));
    assert_eq!(Value::U16(3).as_u8(), Some(3));
    // Floats, bools, addresses and segments are not integers to these accessors.
    assert_eq!(Value::F64(1.0).as_i32(), None);
    assert_eq!(Value::Bool(true).as_i32(), None);
    assert_eq!(Value::Address(std::ptr::null_mut()).as_u64(), None);
    assert_eq!(Value::Void.as_u8(), None);
    assert_eq!(Value::Bool(true).as_bool(), Some(true));
    assert_eq!(Value::I8(1).as_bool(), None);
    assert_eq!(Value::F32(0.5).as_f32(), Some(0.5));
    assert_eq!(Value::F64(0.5).as_f32(), None);
    assert_eq!(Value::F32(0.5).as_f64(), Some(0.5));
    assert_eq!(Value::I32(0).as_address(), None);
    // `as_i64` keeps its bit-reinterpreting behaviour for u64 and addresses.
    assert_eq!(Value::U64(u64::MAX).as_i64(), Some(-1));
}

#[test]
fn from_int_checks_the_range_of_every_kind() {
    for kind in ScalarKind::ALL {
        if kind.is_float() {
            continue;
        }
        let (lo, hi) = integer_range(kind).unwrap();
        let at_lo = Value::from_int(kind, lo).unwrap();
        let at_hi = Value::from_int(kind, hi).unwrap();
        assert_eq!(at_lo.scalar_kind(), Some(kind));
        assert_eq!(at_hi.scalar_kind(), Some(kind));
        if kind != ScalarKind::Pointer && kind != ScalarKind::Bool {
            assert_eq!(at_lo.integer(), Some(lo), "{kind}");
            assert_eq!(at_hi.integer(), Some(hi), "{kind}");
        }
        for bad in [lo - 1, hi + 1] {
            let e = Value::from_int(kind, bad).unwrap_err();
            assert_eq!(
                e,
                Error::OutOfRange {
                    value: bad.to_string(),
                    kind: kind.name().into(),
                    range: format!("{lo}..={hi}"),
                }
            );
        }
    }
    assert_eq!(
        Value::from_int(ScalarKind::U32, -1_i64)
            .unwrap_err()
            .to_string(),
        "-1 is out of range for u32: expected 0..=4294967295"
    );
    assert_eq!(
        Value::from_int(ScalarKind::Bool, 1).unwrap(),
        Value::Bool(true)
    );
    assert_eq!(
        Value::from_int(ScalarKind::F64, u64::MAX).unwrap(),
        Value::F64(u64::MAX as f64)
    );
    assert_eq!(
        Value::from_int(ScalarKind::Pointer, 0x1000).unwrap(),
        Value::Address(std::ptr::without_provenance_mut(0x1000))
    );
}

#[test]
fn from_float_rejects_fractions_nan_and_out_of_range() {
    assert_eq!(
        Value::from_float(ScalarKind::U8, 255.0).unwrap(),
        Value::U8(255)
    );
    assert!(Value::from_float(ScalarKind::U8, 256.0).is_err());
    assert!(Value::from_float(ScalarKind::I64, 9.3e18).is_err());
    assert_eq!(
        Value::from_float(ScalarKind::I64, i64::MIN as f64).unwrap(),
        Value::I64(i64::MIN)
    );
    assert!(Value::from_float(ScalarKind::I32, 0.5).is_err());
    assert!(Value::from_float(ScalarKind::I32, f64::NAN).is_err());
    assert!(Value::from_float(ScalarKind::I32, f64::INFINITY).is_err());
    let e = Value::from_float(ScalarKind::I8, 2.5).unwrap_err();
    assert_eq!(
        e.to_string(),
        "2.5 is out of range for i8: expected an integer in -128..=127"
    );
    assert!(Value::from_float(ScalarKind::F32, 1e300).is_err());
    assert!(Value::from_float(ScalarKind::F32, f64::NAN)
        .unwrap()
        .as_f32()
        .unwrap()
        .is_nan());
    assert_eq!(
        Value::from_float(ScalarKind::F32, f64::NEG_INFINITY).unwrap(),
        Value::F32(f32::NEG_INFINITY)
    );
    assert!(matches!(
        Value::from_float(ScalarKind::Pointer, 1.0),
        Err(Error::ValueMismatch { .. })
    ));
    assert_eq!(
        Value::from_float(ScalarKind::Bool, 0.0).unwrap(),
        Value::Bool(false)
    );
}

#[test]
fn convert_to_goes_between_kinds_with_checks() {
    assert_eq!(
        Value::I64(5).convert_to(ScalarKind::U32).unwrap(),
        Value::U32(5)
    );
    assert!(Value::I64(-1).convert_to(ScalarKind::U32).is_err());
    assert_eq!(
        Value::Bool(true).convert_to(ScalarKind::I32).unwrap(),
        Value::I32(1)
    );
    assert_eq!(
        Value::F32(2.0).convert_to(ScalarKind::I16).unwrap(),
        Value::I16(2)
    );
    assert_eq!(
        Value::U64(1).convert_to(ScalarKind::Pointer).unwrap(),
        Value::Address(std::ptr::without_provenance_mut(1))
    );
    let p = Value::Address(std::ptr::null_mut());
    assert_eq!(p.convert_to(ScalarKind::Pointer).unwrap(), p);
    assert!(p.convert_to(ScalarKind::U64).is_err());
    assert!(Value::Void.convert_to(ScalarKind::I32).is_err());
    let arena = Arena::confined();
    let seg = arena.allocate(4, 4).unwrap();
    assert_eq!(
        Value::Segment(seg).convert_to(ScalarKind::Pointer).unwrap(),
        Value::Address(seg.as_address())
    );
    assert!(Value::Segment(seg).convert_to(ScalarKind::I32).is_err());
}

#[test]
fn c_strings_from_addresses_and_segments() {
    let arena = Arena::confined();
    let s = arena.allocate_c_string("héllo").unwrap();
    let p = Value::Address(s.as_address());
    // SAFETY: `s` is a NUL-terminated string that lives as long as `arena`, unchanged.
    unsafe {
        assert_eq!(p.as_c_str().unwrap().to_bytes(), "héllo".as_bytes());
        assert_eq!(p.read_c_string().unwrap(), "héllo");
        assert_eq!(p.as_c_str_within(7).unwrap().to_bytes().len(), 6);
        assert_eq!(
            p.as_c_str_within(6).unwrap_err(),
            Error::UnterminatedString {
                offset: 0,
                segment_size: 6
            }
        );
        assert_eq!(Value::Segment(s).read_c_string().unwrap(), "héllo");
        let unterminated = arena.allocate_from_bytes(b"abc").unwrap();
        assert!(matches!(
            Value::Segment(unterminated).as_c_str(),
            Err(Error::UnterminatedString { .. })
        ));
        assert_eq!(
            Value::Address(std::ptr::null_mut())
                .read_c_string()
                .unwrap_err()
                .to_string(),
            "null pointer: reading a C string"
        );
        assert!(matches!(
            Value::I32(3).as_c_str(),
            Err(Error::ValueMismatch { .. })
        ));
        let bad = arena.allocate_from_bytes(b"a\xffb\0").unwrap();
        assert_eq!(
            Value::Segment(bad).read_c_string().unwrap_err(),
            Error::InvalidUtf8 {
                offset: 0,
                valid_up_to: 1
            }
        );
        assert!(matches!(
            Value::Segment(MemorySegment::NULL).as_c_str(),
            Err(Error::UnterminatedString { .. })
        ));
    }
}

#[test]
fn scalar_words_are_the_value_of_the_register_image() {
    let images = [
        0u64,
        1,
        0x80,
        0xffff_ff85,
        0x0123_4567_89ab_cdef,
        u64::MAX,
        0x3ff8_0000_0000_0000,
    ];
    for kind in ScalarKind::ALL {
        for bits in images {
            // A bool's image is normalised to 0 or 1 by whoever builds its value.
            let bits = if kind == ScalarKind::Bool {
                bits & 1
            } else {
                bits
            };
            let [w0, w1] = scalar_words(scalar_tag(kind), bits);
            // SAFETY: `Value` is `#[repr(C, u8)]`, 24 bytes; the words are the tag and a valid
            // payload of a scalar variant (a bool's 0 or 1), word 2 is padding for it.
            let v = unsafe { std::mem::transmute::<[u64; 3], Value<'static>>([w0, w1, 0]) };
            // Compared bit for bit (a NaN is not equal to itself).
            let same = match (v, Value::from_scalar_bits(kind, bits)) {
                (Value::F32(a), Value::F32(b)) => a.to_bits() == b.to_bits(),
                (Value::F64(a), Value::F64(b)) => a.to_bits() == b.to_bits(),
                (a, b) => a == b,
            };
            assert!(same, "{kind:?} {bits:#x}: {v:?}");
        }
    }
    let [w0, _] = scalar_words(value_tag(&Value::Void), 7);
    // SAFETY: as above; `Void` has no payload.
    let v = unsafe { std::mem::transmute::<[u64; 3], Value<'static>>([w0, 0, 0]) };
    assert_eq!(v, Value::Void);
}
