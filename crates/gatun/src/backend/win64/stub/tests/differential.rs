//! Differential tests on x86-64 Windows: every class of call the Win64 executor handles
//! (shared slots, stack arguments, register-sized aggregates, by-reference copies, the hidden
//! return pointer, variadic floats, narrow and bool results, capture), each through the
//! compiled stub's values entry (`invoke`/`invoke_into`), the stub's raw entry (`invoke_raw`),
//! and the trampoline (`interpreted()`, both ways): the results, the bytes written and the
//! capture buffers must be identical.

use std::ffi::c_void;

use crate::layout::{MemoryLayout, ValueLayout as V};
use crate::linker::{DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol};
use crate::memory::{Arena, ConfinedArena, MemorySegment, SegmentAllocator};
use crate::Value;

use super::super::super::last_error::{GetLastError, SetLastError, WSAGetLastError};

fn st<const N: usize>(members: [V; N]) -> MemoryLayout {
    MemoryLayout::c_struct(members).unwrap()
}

/// The bytes of a scalar or void `Value` in its layout's representation.
fn value_bytes(v: &Value<'_>) -> Vec<u8> {
    match *v {
        Value::Void => vec![],
        Value::Bool(b) => vec![b as u8],
        Value::I8(x) => x.to_le_bytes().to_vec(),
        Value::U8(x) => x.to_le_bytes().to_vec(),
        Value::I16(x) => x.to_le_bytes().to_vec(),
        Value::U16(x) => x.to_le_bytes().to_vec(),
        Value::I32(x) => x.to_le_bytes().to_vec(),
        Value::U32(x) => x.to_le_bytes().to_vec(),
        Value::I64(x) => x.to_le_bytes().to_vec(),
        Value::U64(x) => x.to_le_bytes().to_vec(),
        Value::F32(x) => x.to_le_bytes().to_vec(),
        Value::F64(x) => x.to_le_bytes().to_vec(),
        Value::Address(p) => (p as usize).to_le_bytes().to_vec(),
        Value::Segment(s) => s.to_vec(),
    }
}

/// What one path produced: the result's bytes and the capture buffer after the call.
type Outcome = (Vec<u8>, Vec<u8>);

/// Runs `args` through `h` by values (`invoke`, or `invoke_into` for a struct result).
fn by_values(
    h: &DowncallHandle,
    d: &FD,
    args: &[Value<'_>],
    cap: Option<MemorySegment<'_>>,
) -> Outcome {
    let arena = Arena::confined();
    // SAFETY: each case's target has the descriptor's C type; segments are live.
    let r = unsafe {
        match d.return_layout() {
            Some(MemoryLayout::Value(_)) | None => h.invoke(args),
            Some(_) => h.invoke_into(&arena, args),
        }
    }
    .unwrap();
    (value_bytes(&r), cap.map_or(vec![], |c| c.to_vec()))
}

/// Runs `args` through `h` by raw pointers (`invoke_raw`).
fn by_raw(
    h: &DowncallHandle,
    d: &FD,
    args: &[Value<'_>],
    cap: Option<MemorySegment<'_>>,
) -> Outcome {
    // every argument's bytes: scalars (and addresses) in their own 8-byte slots, structs in place
    let mut slots: Vec<[u8; 8]> = vec![[0; 8]; args.len()];
    let layouts: Vec<Option<&MemoryLayout>> = cap
        .iter()
        .map(|_| None)
        .chain(d.argument_layouts().iter().map(Some))
        .collect();
    let mut ptrs = Vec::with_capacity(args.len());
    for (k, (v, l)) in args.iter().zip(&layouts).enumerate() {
        let p = match (v, l) {
            (Value::Segment(s), None) => s.as_ptr().cast_const(),
            (Value::Segment(s), Some(MemoryLayout::Value(_))) => {
                slots[k] = (s.as_ptr() as usize).to_le_bytes();
                slots[k].as_ptr()
            }
            (Value::Segment(s), Some(_)) => s.as_ptr().cast_const(),
            (v, _) => {
                let b = value_bytes(v);
                slots[k][..b.len()].copy_from_slice(&b);
                slots[k].as_ptr()
            }
        };
        ptrs.push(p);
    }
    let size = d.return_layout().map_or(0, |l| l.byte_size());
    #[repr(C, align(16))]
    struct Ret([u8; 64]);
    let mut ret = Ret([0xEE; 64]);
    // SAFETY: as `by_values`; `ret` holds 64 bytes, 16-aligned; `slots` outlives the call.
    unsafe { h.invoke_raw(&ptrs, ret.0.as_mut_ptr()) }.unwrap();
    assert!(
        ret.0[size..].iter().all(|&b| b == 0xEE),
        "the raw path wrote past {size} bytes"
    );
    (ret.0[..size].to_vec(), cap.map_or(vec![], |c| c.to_vec()))
}

/// Links `f` with `d`, checks it gets a compiled stub, and compares the four paths on `args`
/// (`args` starts with the capture segment `cap` for a capture handle, which each path gets
/// afresh with the same contents).
fn compare(
    name: &str,
    f: *const c_void,
    d: &FD,
    fv: Option<usize>,
    cap: Option<MemorySegment<'_>>,
    args: &[Value<'_>],
) -> Outcome {
    let mut opts = Vec::new();
    if let Some(i) = fv {
        opts.push(LinkerOption::FirstVariadicArg(i));
    }
    if cap.is_some() {
        opts.push(LinkerOption::CaptureCallState(&[
            "GetLastError",
            "WSAGetLastError",
            "errno",
        ]));
    }
    // SAFETY: `f` is a Rust function of the descriptor's C type, alive for the program.
    let sym = unsafe { Symbol::from_address(f) };
    let h = Linker::native().downcall(&sym, d, &opts).unwrap();
    assert!(h.uses_compiled_stub(), "{name}: {h:?}");
    let t = h.interpreted();
    assert!(!t.uses_compiled_stub());
    let initial = cap.map(|c| c.to_vec());
    let reset = || {
        if let (Some(c), Some(init)) = (cap, &initial) {
            for (k, b) in init.iter().enumerate() {
                c.set::<u8>(k, *b).unwrap();
            }
        }
    };
    let mut outcomes = Vec::new();
    for (path, h) in [("stub", &h), ("trampoline", &t)] {
        reset();
        outcomes.push((format!("{path} values"), by_values(h, d, args, cap)));
        reset();
        outcomes.push((format!("{path} raw"), by_raw(h, d, args, cap)));
    }
    for (path, o) in &outcomes[1..] {
        assert_eq!(
            o, &outcomes[0].1,
            "{name}: {path} differs from {}",
            outcomes[0].0
        );
    }
    outcomes.swap_remove(0).1
}

extern "C" fn twice(x: i32) -> i32 {
    2 * x
}
extern "C" fn int_double(n: i32, x: f64) -> f64 {
    n as f64 * x
}
extern "C" fn seven(a: i64, b: f64, c: i8, d: f32, e: i32, f: f64, g: u16) -> f64 {
    a as f64 + b * 2.0 + c as f64 * 3.0 + d as f64 * 4.0 + e as f64 * 5.0 + f * 6.0 + g as f64 * 7.0
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ten(
    a: i64,
    b: i64,
    c: i64,
    d: i64,
    e: i64,
    f: i8,
    g: f64,
    h: i64,
    i: f32,
    j: i64,
) -> i64 {
    a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f as i64 + 7 * g as i64 + 8 * h + 9 * i as i64 + 10 * j
}
extern "C" fn narrow(a: i8, b: u16, c: bool, d: u8) -> i16 {
    (a as i16) * 3 - (b as i16) + c as i16 * 100 + d as i16
}
extern "C" fn is_negative(x: i64, y: f32) -> bool {
    x < 0 || y < 0.0
}
extern "C" fn halve(x: f32) -> f32 {
    x / 2.0
}

#[repr(C)]
#[derive(Clone, Copy)]
struct F2 {
    x: f32,
    y: f32,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct B2 {
    a: u8,
    b: u8,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct D1 {
    d: f64,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct B1 {
    a: i8,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct S3 {
    a: u8,
    b: u8,
    c: u8,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct S12 {
    a: i32,
    b: i32,
    c: i32,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct S16 {
    a: f64,
    b: i64,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct S24 {
    a: i64,
    b: f64,
    c: i64,
}

extern "C" fn small(a: F2, b: B2, c: D1, d: B1, e: F2) -> F2 {
    F2 {
        x: a.x + b.a as f32 + c.d as f32 + e.y,
        y: a.y * b.b as f32 - d.a as f32 + e.x,
    }
}
extern "C" fn by_value(x: i32, a: S3, b: S12, c: S16, d: S24, y: i32) -> i64 {
    x as i64
        + a.a as i64
        + a.c as i64 * 10
        + b.b as i64 * 100
        + c.b * 1000
        + d.c * 10_000
        + (c.a + d.b) as i64
        + y as i64 * 100_000
}
extern "C" fn make12(a: i32, b: f64, c: i32) -> S12 {
    S12 { a, b: b as i32, c }
}
extern "C" fn make16(a: f64, b: i64) -> S16 {
    S16 {
        a: a * 2.0,
        b: b - 1,
    }
}
extern "C" fn make24(s: S3, a: i64, b: f64, c: i64, d: i64) -> S24 {
    S24 {
        a: a + s.a as i64,
        b,
        c: c * d,
    }
}
extern "C" fn va_xmm(_n: i32, x: f64, y: f64, z: f64) -> f64 {
    x + 10.0 * y + 100.0 * z
}
extern "C" fn va_gpr(_n: i32, x: u64, y: u64, z: u64) -> u64 {
    x ^ y.rotate_left(1) ^ z.rotate_left(2)
}

fn seg<'a, T: Copy>(a: &'a ConfinedArena, v: T) -> MemorySegment<'a> {
    let s = a
        .allocate(std::mem::size_of::<T>(), std::mem::align_of::<T>())
        .unwrap();
    // SAFETY: `s` has T's size and alignment.
    unsafe { s.as_ptr().cast::<T>().write(v) };
    s
}

#[test]
fn scalars_slots_and_stack_arguments_agree_on_every_path() {
    let r = compare(
        "twice",
        twice as _,
        &FD::of(V::I32, [V::I32]),
        None,
        None,
        &[Value::I32(-21)],
    );
    assert_eq!(r.0, (-42i32).to_le_bytes());
    compare(
        "int_double",
        int_double as _,
        &FD::of(V::F64, [V::I32, V::F64]),
        None,
        None,
        &[Value::I32(-3), Value::F64(2.5)],
    );
    let d = FD::of(
        V::F64,
        [V::I64, V::F64, V::I8, V::F32, V::I32, V::F64, V::U16],
    );
    let args = [
        Value::I64(1),
        Value::F64(0.5),
        Value::I8(-2),
        Value::F32(1.5),
        Value::I32(-9),
        Value::F64(3.25),
        Value::U16(65535),
    ];
    compare("seven", seven as _, &d, None, None, &args);
    let d = FD::of(
        V::I64,
        [
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I8,
            V::F64,
            V::I64,
            V::F32,
            V::I64,
        ],
    );
    let args = [
        Value::I64(1),
        Value::I64(2),
        Value::I64(3),
        Value::I64(4),
        Value::I64(5),
        Value::I8(-6),
        Value::F64(7.0),
        Value::I64(8),
        Value::F32(9.0),
        Value::I64(-10),
    ];
    compare("ten", ten as _, &d, None, None, &args);
    let d = FD::of(V::I16, [V::I8, V::U16, V::BOOL, V::U8]);
    let r = compare(
        "narrow",
        narrow as _,
        &d,
        None,
        None,
        &[
            Value::I8(-5),
            Value::U16(7),
            Value::Bool(true),
            Value::U8(200),
        ],
    );
    assert_eq!(r.0, (-15i16 - 7 + 100 + 200).to_le_bytes());
    let d = FD::of(V::BOOL, [V::I64, V::F32]);
    let r = compare(
        "is_negative",
        is_negative as _,
        &d,
        None,
        None,
        &[Value::I64(5), Value::F32(-1.0)],
    );
    assert_eq!(r.0, [1]);
    compare(
        "halve",
        halve as _,
        &FD::of(V::F32, [V::F32]),
        None,
        None,
        &[Value::F32(5.0)],
    );
}

#[test]
fn aggregates_by_value_by_reference_and_through_the_hidden_pointer_agree() {
    let a = Arena::confined();
    let (f2, b2, d1, b1) = (
        st([V::F32, V::F32]),
        st([V::U8, V::U8]),
        st([V::F64]),
        st([V::I8]),
    );
    let d = FD::of(&f2, [&f2, &b2, &d1, &b1, &f2]);
    let args = [
        Value::Segment(seg(&a, F2 { x: 1.5, y: 2.0 })),
        Value::Segment(seg(&a, B2 { a: 3, b: 4 })),
        Value::Segment(seg(&a, D1 { d: 0.25 })),
        Value::Segment(seg(&a, B1 { a: -7 })),
        Value::Segment(seg(&a, F2 { x: 10.0, y: 20.0 })),
    ];
    compare("small", small as _, &d, None, None, &args);
    let (s3, s12, s16, s24) = (
        st([V::U8, V::U8, V::U8]),
        st([V::I32, V::I32, V::I32]),
        st([V::F64, V::I64]),
        st([V::I64, V::F64, V::I64]),
    );
    let d = FD::of(
        V::I64,
        [&V::I32.into(), &s3, &s12, &s16, &s24, &V::I32.into()],
    );
    let args = [
        Value::I32(1),
        Value::Segment(seg(&a, S3 { a: 2, b: 3, c: 4 })),
        Value::Segment(seg(&a, S12 { a: 5, b: 6, c: 7 })),
        Value::Segment(seg(&a, S16 { a: 0.5, b: 8 })),
        Value::Segment(seg(
            &a,
            S24 {
                a: 9,
                b: 1.5,
                c: 10,
            },
        )),
        Value::I32(11),
    ];
    compare("by_value", by_value as _, &d, None, None, &args);
    compare(
        "make12",
        make12 as _,
        &FD::of(&s12, [V::I32, V::F64, V::I32]),
        None,
        None,
        &[Value::I32(1), Value::F64(2.0), Value::I32(3)],
    );
    compare(
        "make16",
        make16 as _,
        &FD::of(&s16, [V::F64, V::I64]),
        None,
        None,
        &[Value::F64(1.5), Value::I64(-4)],
    );
    let d = FD::of(
        &s24,
        [
            &s3,
            &V::I64.into(),
            &V::F64.into(),
            &V::I64.into(),
            &V::I64.into(),
        ],
    );
    let args = [
        Value::Segment(seg(&a, S3 { a: 1, b: 2, c: 3 })),
        Value::I64(5),
        Value::F64(6.5),
        Value::I64(7),
        Value::I64(8),
    ];
    compare("make24", make24 as _, &d, None, None, &args);
}

#[test]
fn variadic_floats_agree_in_both_registers() {
    let args = [
        Value::I32(3),
        Value::F64(1.0),
        Value::F64(2.0),
        Value::F64(3.0),
    ];
    let d = FD::of(V::F64, [V::I32, V::F64, V::F64, V::F64]);
    compare("va_xmm", va_xmm as _, &d, Some(1), None, &args);
    let d = FD::of(V::I64, [V::I32, V::F64, V::F64, V::F64]);
    let r = compare("va_gpr", va_gpr as _, &d, Some(1), None, &args);
    let want = 1.0f64.to_bits() ^ 2.0f64.to_bits().rotate_left(1) ^ 3.0f64.to_bits().rotate_left(2);
    assert_eq!(r.0, want.to_le_bytes());
    let args = [
        Value::I32(3),
        Value::F32(1.0),
        Value::F32(2.0),
        Value::F32(3.0),
    ];
    let d = FD::of(V::I64, [V::I32, V::F32, V::F32, V::F32]);
    let r = compare(
        "va_gpr of promoted floats",
        va_gpr as _,
        &d,
        Some(1),
        None,
        &args,
    );
    assert_eq!(r.0, want.to_le_bytes());
}

/// Sets the last error and errno from its arguments; returns what it found at entry.
extern "C" fn last_errors(code: u32, errno: i32) -> i64 {
    // SAFETY: this thread's errno address; the error functions are always safe.
    unsafe {
        let last = GetLastError();
        let wsa = WSAGetLastError();
        let e = crate::os::thread_errno();
        let seen = (last as i64) << 40 | (wsa as i64 & 0xFF) << 32 | *e as u32 as i64;
        *e = errno;
        SetLastError(code);
        seen
    }
}

extern "C" fn last_errors_f(code: u32, errno: i32) -> f64 {
    last_errors(code, errno) as f64
}

#[test]
fn capture_agrees_on_every_path() {
    let a = Arena::confined();
    let cap = a.allocate(12, 4).unwrap();
    for (k, v) in [11, 22, 33].into_iter().enumerate() {
        cap.set::<i32>(4 * k, v).unwrap();
    }
    let args = [Value::Segment(cap), Value::U32(5), Value::I32(9)];
    let d = FD::of(V::I64, [V::U32, V::I32]);
    let (r, after) = compare("last_errors", last_errors as _, &d, None, Some(cap), &args);
    // restored before: the callee saw errno 33 and the last error 11 (set last)
    let seen = i64::from_le_bytes(r.try_into().unwrap());
    assert_eq!((seen >> 40, seen & 0xFFFF_FFFF), (11, 33));
    // saved after: the callee's last error and errno
    let after: Vec<i32> = after
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!((after[0], after[2]), (5, 9));
    let d = FD::of(V::F64, [V::U32, V::I32]);
    compare(
        "last_errors_f",
        last_errors_f as _,
        &d,
        None,
        Some(cap),
        &args,
    );
}
