//! Upcalls: Rust closures called from C through `Linker::upcall_stub`, against
//! `tests/native/upcall.c` and the C library's `qsort` (glibc's, or msvcrt's on Windows). The
//! struct cases name their SysV class (checked with `abi::sysv::classify`, a pure
//! function); under Microsoft x64 the same structs are the 1/2/4/8-byte register cases and the
//! by-reference ones.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::*;
use gatun::abi::sysv::{classify, ArgClass, Classification};
use gatun::layout::MemoryLayout;
use gatun::linker::{FunctionDescriptor as FD, Linker, SymbolLookup};
use gatun::memory::{linker_stack, Arena, MemorySegment, SegmentAllocator};
use gatun::{UpcallArgs, Value};

#[test]
fn qsort_with_a_rust_comparator() {
    // SAFETY: the system C library has sound initialisers.
    let libc = unsafe {
        SymbolLookup::library(if cfg!(windows) {
            "msvcrt.dll"
        } else {
            "libc.so.6"
        })
    }
    .unwrap();
    let qsort = Linker::native()
        .downcall(
            &sym_in(&libc, "qsort"),
            &FD::of_void([V::ADDRESS, V::U64, V::U64, V::ADDRESS]),
            &[],
        )
        .unwrap();
    let arena = Arena::confined();
    let calls = AtomicU64::new(0);
    let cmp = Linker::native()
        .upcall_stub(
            &FD::of(V::I32, [V::ADDRESS, V::ADDRESS]),
            |args| {
                calls.fetch_add(1, Ordering::Relaxed);
                // SAFETY: qsort passes two pointers into the int array.
                let (a, b) = unsafe {
                    (
                        *args.address(0)?.cast::<i32>(),
                        *args.address(1)?.cast::<i32>(),
                    )
                };
                Ok(Value::I32(a.cmp(&b) as i32))
            },
            &arena,
        )
        .unwrap();
    const N: usize = 100_000;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let values: Vec<i32> = (0..N)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as i32
        })
        .collect();
    let array = arena.allocate_array(&V::I32.into(), N).unwrap();
    for (i, v) in values.iter().enumerate() {
        array.set(4 * i, *v).unwrap();
    }
    // SAFETY: qsort(base, nmemb, size, compar) over the array's N ints.
    unsafe {
        qsort.invoke(&[
            Value::Segment(array),
            Value::U64(N as u64),
            Value::U64(4),
            cmp.as_value(),
        ])
    }
    .unwrap();
    let mut expected = values;
    expected.sort();
    let sorted: Vec<i32> = (0..N).map(|i| array.get(4 * i).unwrap()).collect();
    assert_eq!(sorted, expected);
    assert!(calls.load(Ordering::Relaxed) >= N as u64 - 1);
}

fn point_layout() -> MemoryLayout {
    st([V::F64, V::F64, V::F64])
}

/// The JDK's `TestBufferStack.testDeepStack`: C `recurse(10, cb)` → Rust `cb(9)` → C
/// `recurse(9, cb)` → ... Each Rust level pushes a 48-byte frame on the linker stack (the
/// JDK's per-level size) and has the downcall return its `HVAPoint3D` into it: with the default
/// 256-byte stack the five outer levels get stack frames and the five inner levels fall back.
#[test]
fn deep_stack_recursion_through_the_linker_stack() {
    let point = point_layout();
    assert_eq!(classify(&point), Classification::Memory);
    let recurse = link(
        "upcall_recurse",
        &FD::of(point.clone(), [V::I32, V::ADDRESS]),
    );
    let arena = Arena::confined();
    let cb_address = Arc::new(AtomicUsize::new(0));
    let levels = Arc::new(Mutex::new(Vec::new()));
    let stub = {
        let (cb_address, levels, recurse) = (cb_address.clone(), levels.clone(), recurse.clone());
        Linker::native()
            .upcall_stub(
                &FD::of(point.clone(), [V::I32]),
                move |args| {
                    let depth = args.get::<i32>(0)?;
                    let frame = linker_stack().push_frame(48, 8)?;
                    levels.lock().unwrap().push((depth, frame.is_fallback()));
                    let cb = cb_address.load(Ordering::Relaxed) as *mut std::ffi::c_void;
                    // SAFETY: recurse(int, HVAPoint3D (*)(int)) with this very stub.
                    let p = unsafe {
                        recurse.invoke_into(&frame, &[Value::I32(depth), Value::Address(cb)])
                    }?;
                    let out = args.return_segment().expect("a struct return");
                    out.copy_from(&p.as_segment().expect("a struct"))?;
                    Ok(Value::Void)
                },
                &arena,
            )
            .unwrap()
    };
    cb_address.store(stub.address() as usize, Ordering::Relaxed);
    // SAFETY: `HVAPoint3D upcall_recurse(int, HVAPoint3D (*)(int))` (tests/native/upcall.c), as
    // described; `stub` has that callback type and lives in `arena`, and the 24-byte result goes to
    // `arena`.
    let top = unsafe { recurse.invoke_into(&arena, &[Value::I32(10), stub.as_value()]) }
        .unwrap()
        .as_segment()
        .unwrap();
    assert_eq!(
        (
            top.get::<f64>(0).unwrap(),
            top.get::<f64>(8).unwrap(),
            top.get::<f64>(16).unwrap()
        ),
        (12.0, 11.0, 10.0)
    );
    let fit = (linker_stack().byte_size() / 48).min(10);
    let expected: Vec<(i32, bool)> = (0..10).rev().map(|d| (d, 9 - d >= fit as i32)).collect();
    assert_eq!(*levels.lock().unwrap(), expected);
    if linker_stack().byte_size() == 256 {
        assert_eq!(expected.iter().filter(|(_, fallback)| *fallback).count(), 5);
    }
}

/// 8 threads created in C (pthreads; Win32 threads on Windows) call a struct-taking callback 100,000 times each: the closure runs
/// on threads Rust never saw, each first upcall creating that thread's linker-stack block for
/// the struct argument's copy.
#[test]
fn pthreads_created_in_c_call_the_stub() {
    const THREADS: usize = 8;
    const ITERATIONS: i64 = 100_000;
    let ticket = st([V::I32, V::I32]);
    let run = link(
        "upcall_run_threads",
        &FD::of(V::I32, [V::ADDRESS, V::I32, V::I32, V::ADDRESS]),
    );
    let arena = Arena::confined();
    let counts: Arc<[AtomicU64; THREADS]> = Arc::new(Default::default());
    let total = Arc::new(AtomicI64::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let stub = {
        let (counts, total, seen) = (counts.clone(), total.clone(), seen.clone());
        Linker::native()
            .upcall_stub(
                &FD::of(V::I64, [ticket]),
                move |args| {
                    let t = args.segment(0)?;
                    let (thread, i) = (t.get::<i32>(0)?, t.get::<i32>(4)?);
                    counts[thread as usize].fetch_add(1, Ordering::Relaxed);
                    total.fetch_add(1, Ordering::Relaxed);
                    if i == 0 {
                        seen.lock().unwrap().push(std::thread::current().id());
                    }
                    Ok(Value::I64(thread as i64 * 1_000_000 + i as i64))
                },
                &arena,
            )
            .unwrap()
    };
    let sums = arena.allocate_array(&V::I64.into(), THREADS).unwrap();
    // SAFETY: `int upcall_run_threads(upcall_ticket_cb, int, int, int64_t *)`: `stub` has the
    // callback type and outlives the call (the C threads are joined before it returns); `sums` has
    // room for THREADS `int64_t`s.
    let r = unsafe {
        run.invoke(&[
            stub.as_value(),
            Value::I32(THREADS as i32),
            Value::I32(ITERATIONS as i32),
            Value::Segment(sums),
        ])
    }
    .unwrap();
    assert_eq!(r, Value::I32(0));
    assert_eq!(total.load(Ordering::Relaxed), THREADS as i64 * ITERATIONS);
    for t in 0..THREADS {
        assert_eq!(counts[t].load(Ordering::Relaxed), ITERATIONS as u64);
        assert_eq!(
            sums.get::<i64>(8 * t).unwrap(),
            t as i64 * 1_000_000 * ITERATIONS + ITERATIONS * (ITERATIONS - 1) / 2,
            "thread {t}"
        );
    }
    let seen = seen.lock().unwrap();
    let distinct: HashSet<_> = seen.iter().collect();
    assert_eq!(distinct.len(), THREADS);
    assert!(!distinct.contains(&std::thread::current().id()));
}

/// One struct class case: a C `S upcall_call_S(S (*cb)(S, int), S s, int k)` and the Rust
/// mirror of `S`.
fn check_class<S: Copy + PartialEq + Debug>(
    name: &str,
    layout: MemoryLayout,
    classes: Classification,
    sample: S,
    transform: fn(S, i32) -> S,
) {
    assert_eq!(layout.byte_size(), std::mem::size_of::<S>(), "{name}");
    assert_eq!(classify(&layout), classes, "{name}");
    let call = link(
        &format!("upcall_call_{name}"),
        &FD::of(
            layout.clone(),
            [V::ADDRESS.into(), layout.clone(), V::I32.into()],
        ),
    );
    let arena = Arena::confined();
    let d = FD::of(layout.clone(), [layout.clone(), V::I32.into()]);
    // Two ways to return a struct: write the return segment, or return a segment to copy.
    for in_place in [true, false] {
        let stub = Linker::native()
            .upcall_stub(
                &d,
                move |args: &UpcallArgs<'_>| {
                    let s = args.segment(0)?;
                    assert_eq!(s.address() % std::mem::align_of::<S>(), 0);
                    // SAFETY: the segment holds a copy of the C struct (size checked above).
                    let v = unsafe { s.as_ptr().cast::<S>().read() };
                    let out = transform(v, args.get::<i32>(1)?);
                    if in_place {
                        let r = args.return_segment().expect("struct return");
                        // SAFETY: the return segment has the struct's size.
                        unsafe { r.as_ptr().cast::<S>().write_unaligned(out) };
                        Ok(Value::Void)
                    } else {
                        // SAFETY: as above, the argument copy is ours to overwrite.
                        unsafe { s.as_ptr().cast::<S>().write(out) };
                        Ok(Value::Segment(s))
                    }
                },
                &arena,
            )
            .unwrap();
        let input = arena.allocate_layout(&layout).unwrap();
        // SAFETY: the segment has the struct's size and alignment.
        unsafe { input.as_ptr().cast::<S>().write(sample) };
        for k in [3, -7] {
            // SAFETY: `S upcall_call_S(S (*)(S, int), S, int)`, as described; `stub` has the
            // callback type and lives in `arena`, `input` holds a valid `S`.
            let r = unsafe {
                call.invoke_into(
                    &arena,
                    &[stub.as_value(), Value::Segment(input), Value::I32(k)],
                )
            }
            .unwrap()
            .as_segment()
            .unwrap();
            // SAFETY: the returned segment has the struct's size and alignment.
            let got = unsafe { r.as_ptr().cast::<S>().read() };
            assert_eq!(
                got,
                transform(sample, k),
                "{name}, k = {k}, in place {in_place}"
            );
        }
    }
}

fn eightbytes(c: &[ArgClass]) -> Classification {
    Classification::Eightbytes(c.to_vec())
}

#[test]
fn struct_arguments_and_returns_of_every_sysv_class() {
    use ArgClass::{Integer as I, Sse as S};
    let seq = |n, l: V| MemoryLayout::sequence_layout(n, l).unwrap();

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct I8s {
        a: i32,
        b: i16,
    }
    check_class(
        "upcall_I8",
        st([V::I32, V::I16]),
        eightbytes(&[I]),
        I8s { a: -123456, b: 321 },
        |s, k| I8s {
            a: s.a * 2 + k,
            b: s.b.wrapping_mul(3) - k as i16,
        },
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct I3([i8; 3]);
    check_class(
        "upcall_I3",
        st([seq(3, V::I8)]),
        eightbytes(&[I]),
        I3([1, -2, 3]),
        |s, k| I3(s.0.map(|c| c * 2 + k as i8)),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct II(i64, i64);
    check_class(
        "upcall_II",
        st([V::I64, V::I64]),
        eightbytes(&[I, I]),
        II(1 << 40, -(1 << 41)),
        |s, k| II(s.0 + k as i64, s.1 * k as i64),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct SS12(f32, f32, f32);
    check_class(
        "upcall_SS12",
        st([V::F32, V::F32, V::F32]),
        eightbytes(&[S, S]),
        SS12(1.5, -2.25, 3.0),
        |s, k| SS12(s.0 * k as f32, s.1 + k as f32, s.2 - k as f32),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct S8(f64);
    check_class(
        "upcall_S8",
        st([V::F64]),
        eightbytes(&[S]),
        S8(0.125),
        |s, k| S8(s.0 * 2.0 + k as f64),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct IS(i64, f64);
    check_class(
        "upcall_IS",
        st([V::I64, V::F64]),
        eightbytes(&[I, S]),
        IS(-5, 6.5),
        |s, k| IS(s.0 * k as i64, s.1 + k as f64),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct IS16(i32, f32, f64);
    check_class(
        "upcall_IS16",
        st([V::I32, V::F32, V::F64]),
        eightbytes(&[I, S]),
        IS16(7, 0.5, -1.25),
        |s, k| IS16(s.0 - k, s.1 * k as f32, s.2 * 4.0),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct SI(f64, i32);
    check_class(
        "upcall_SI",
        st([V::F64, V::I32]),
        eightbytes(&[S, I]),
        SI(2.75, -99),
        |s, k| SI(s.0 - k as f64, s.1 * k),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct SI9(f32, f32, i8);
    check_class(
        "upcall_SI9",
        st([V::F32, V::F32, V::I8]),
        eightbytes(&[S, I]),
        SI9(1.0, 2.0, -3),
        |s, k| SI9(s.1 + k as f32, s.0, s.2 * 2 - k as i8),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct IS12(i32, f32, f32);
    check_class(
        "upcall_IS12",
        st([V::I32, V::F32, V::F32]),
        eightbytes(&[I, S]),
        IS12(-4, 8.5, -0.75),
        |s, k| IS12(s.0 * k, s.2, s.1 + k as f32),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct M24(i64, i64, i64);
    check_class(
        "upcall_M24",
        st([V::I64, V::I64, V::I64]),
        Classification::Memory,
        M24(1, -2, 3 << 50),
        |s, k| M24(s.2, s.0 + k as i64, s.1 * k as i64),
    );

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct M17([u8; 17]);
    let mut bytes = [0u8; 17];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = 200 + i as u8;
    }
    check_class(
        "upcall_M17",
        st([seq(17, V::U8)]),
        Classification::Memory,
        M17(bytes),
        |s, k| {
            let mut r = s.0;
            r.reverse();
            M17(r.map(|b| b.wrapping_add(k as u8)))
        },
    );
}

/// 20 arguments: six INTEGER and eight SSE registers run out, so scalars, a MEMORY struct and
/// a register-class struct that no longer fits all arrive on the caller's stack.
#[test]
fn many_arguments_spill_to_the_stack() {
    let ii = st([V::I64, V::I64]);
    let si = st([V::F64, V::I32]);
    let m24 = st([V::I64, V::I64, V::I64]);
    let is = st([V::I64, V::F64]);
    let args: Vec<MemoryLayout> = vec![
        V::I32.into(),
        V::I64.into(),
        V::F64.into(),
        V::F32.into(),
        ii,
        si,
        V::I16.into(),
        V::I8.into(),
        V::F64.into(),
        V::F64.into(),
        V::F64.into(),
        V::F64.into(),
        V::F64.into(),
        V::F64.into(),
        m24,
        V::I32.into(),
        V::U16.into(),
        is,
        V::F32.into(),
        V::F64.into(),
    ];
    let d = FD::of(V::F64, args);
    let arena = Arena::confined();
    let stub = Linker::native()
        .upcall_stub(
            &d,
            |a| {
                let seg = |i| a.segment(i);
                let num = |v: Value<'_>| v.as_f64().or(v.as_i64().map(|x| x as f64)).unwrap();
                // The fields of each argument, in order, as f64.
                let mut fields: Vec<f64> = Vec::new();
                for (i, v) in a.iter().enumerate() {
                    match i {
                        4 => fields
                            .extend([seg(4)?.get::<i64>(0)? as f64, seg(4)?.get::<i64>(8)? as f64]),
                        5 => fields.extend([seg(5)?.get::<f64>(0)?, seg(5)?.get::<i32>(8)? as f64]),
                        14 => fields.extend(
                            (0..3).map(|k| seg(14).unwrap().get::<i64>(8 * k).unwrap() as f64),
                        ),
                        17 => {
                            fields.extend([seg(17)?.get::<i64>(0)? as f64, seg(17)?.get::<f64>(8)?])
                        }
                        _ => fields.push(num(*v)),
                    }
                }
                Ok(Value::F64(
                    fields
                        .iter()
                        .enumerate()
                        .map(|(w, x)| (w + 1) as f64 * x)
                        .sum(),
                ))
            },
            &arena,
        )
        .unwrap();
    let plan = stub.plan();
    // SysV: 6 GPRs and 8 vector registers, AAPCS64: 8 and 8; the rest is on the stack.
    let spilled = if cfg!(target_arch = "x86_64") { 9 } else { 6 };
    assert!(plan.stack_bytes() >= 8 * spilled, "{plan}");
    let many = link("upcall_many", &FD::of(V::F64, [V::ADDRESS]));
    let expected = link("upcall_many_expected", &FD::of(V::F64, []));
    // SAFETY: `double upcall_many_expected(void)`, as described; no arguments.
    let want = unsafe { expected.invoke(&[]) }.unwrap();
    assert_ne!(want, Value::F64(0.0));
    // SAFETY: `double upcall_many(upcall_many_cb)`; `stub` has the callback type and is alive.
    assert_eq!(unsafe { many.invoke(&[stub.as_value()]) }.unwrap(), want);
}

#[test]
fn scalar_returns_are_extended_and_void_and_pointers_work() {
    let arena = Arena::confined();
    let l = Linker::native();

    let neg = l
        .upcall_stub(
            &FD::of(V::I8, [V::I8]),
            |a| Ok(Value::I8(a.get::<i8>(0)? - 100)),
            &arena,
        )
        .unwrap();
    let call_i8 = link("upcall_call_i8", &FD::of(V::I32, [V::ADDRESS, V::I8]));
    // SAFETY: `int upcall_call_i8(signed char (*)(signed char), signed char)`; `neg` has that
    // callback type and is alive.
    let r = unsafe { call_i8.invoke(&[neg.as_value(), Value::I8(-20)]) }.unwrap();
    assert_eq!(r, Value::I32(-120));

    let u16s = l
        .upcall_stub(
            &FD::of(V::U16, [V::U16]),
            |a| Ok(Value::U16(a.get::<u16>(0)?.wrapping_add(1000))),
            &arena,
        )
        .unwrap();
    let call_u16 = link("upcall_call_u16", &FD::of(V::U32, [V::ADDRESS, V::U16]));
    // SAFETY: `unsigned upcall_call_u16(unsigned short (*)(unsigned short), unsigned short)`;
    // `u16s` has that callback type and is alive.
    let r = unsafe { call_u16.invoke(&[u16s.as_value(), Value::U16(65000)]) }.unwrap();
    assert_eq!(r, Value::U32(65000u16.wrapping_add(1000) as u32));

    let not = l
        .upcall_stub(
            &FD::of(V::BOOL, [V::BOOL]),
            |a| Ok(Value::Bool(!a.get::<bool>(0)?)),
            &arena,
        )
        .unwrap();
    let call_bool = link("upcall_call_bool", &FD::of(V::I32, [V::ADDRESS, V::BOOL]));
    for b in [false, true] {
        // SAFETY: `int upcall_call_bool(bool (*)(bool), bool)`; `not` has that callback type and is
        // alive.
        let r = unsafe { call_bool.invoke(&[not.as_value(), Value::Bool(b)]) }.unwrap();
        assert_eq!(r, Value::I32(!b as i32));
    }

    let got = Arc::new(Mutex::new(None));
    let sink = {
        let got = got.clone();
        l.upcall_stub(
            &FD::of_void([V::I64, V::F32]),
            move |a| {
                *got.lock().unwrap() = Some((a.get::<i64>(0)?, a.get::<f32>(1)?));
                Ok(Value::Void)
            },
            &arena,
        )
        .unwrap()
    };
    let call_void = link(
        "upcall_call_void",
        &FD::of_void([V::ADDRESS, V::I64, V::F32]),
    );
    // SAFETY: `void upcall_call_void(void (*)(int64_t, float), int64_t, float)`; `sink` has that
    // callback type and is alive.
    unsafe { call_void.invoke(&[sink.as_value(), Value::I64(-1 << 40), Value::F32(2.5)]) }.unwrap();
    assert_eq!(*got.lock().unwrap(), Some((-1 << 40, 2.5)));

    let offset = l
        .upcall_stub(
            &FD::of(V::ADDRESS, [V::ADDRESS, V::I64]),
            |a| {
                let p = a.address(0)?;
                Ok(Value::Address(
                    p.wrapping_byte_add(a.get::<i64>(1)? as usize),
                ))
            },
            &arena,
        )
        .unwrap();
    let call_ptr = link(
        "upcall_call_ptr",
        &FD::of(V::ADDRESS, [V::ADDRESS, V::ADDRESS, V::I64]),
    );
    let buf = arena.allocate(64, 8).unwrap();
    // SAFETY: `void *upcall_call_ptr(void *(*)(void *, int64_t), void *, int64_t)`: `offset` only
    // adds to the pointer and `buf` is a live arena segment.
    let r = unsafe { call_ptr.invoke(&[offset.as_value(), Value::Segment(buf), Value::I64(40)]) }
        .unwrap();
    assert_eq!(r, Value::Address(buf.as_ptr().wrapping_add(40).cast()));
}

#[test]
fn stub_is_send_and_sync_and_leakable_from_the_global_arena() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(V::I32, [V::I32]),
            |a| Ok(Value::I32(a.get::<i32>(0)? + 1)),
            Arena::global(),
        )
        .unwrap();
    send_sync(&stub);
    let seg: MemorySegment<'_> = stub.segment();
    assert_eq!(seg.address(), stub.address() as usize);
    assert_eq!(seg.byte_size(), 0);
    let address = std::thread::spawn(move || stub.leak() as usize)
        .join()
        .unwrap();
    // SAFETY: a leaked stub of type int(int) lives for the rest of the process.
    let f: extern "C" fn(i32) -> i32 = unsafe { std::mem::transmute(address) };
    assert_eq!(f(41), 42);
}

/// A confined stub's closure may capture `!Send` state (an `Rc<RefCell<..>>`, a segment of a
/// confined arena); on its own thread it works like any stub.
#[test]
fn confined_stub_with_a_non_send_closure_on_its_thread() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let arena = Arena::confined();
    let table = arena.allocate_array(&V::I8.into(), 256).unwrap();
    for i in 0..256 {
        table.set(i, (i as u8).wrapping_mul(7) as i8).unwrap();
    }
    let seen = Rc::new(RefCell::new(Vec::new()));
    let stub = {
        let seen = seen.clone();
        Linker::native()
            .upcall_stub_confined(
                &FD::of(V::I8, [V::I8]),
                move |a| {
                    let x = a.get::<i8>(0)?;
                    seen.borrow_mut().push(x);
                    Ok(Value::I8(table.get::<i8>(x as u8 as usize)?))
                },
                &arena,
            )
            .unwrap()
    };
    let call_i8 = link("upcall_call_i8", &FD::of(V::I32, [V::ADDRESS, V::I8]));
    for x in [-3i8, 0, 5, 127] {
        // SAFETY: `int upcall_call_i8(signed char (*)(signed char), signed char)`; `stub` has that
        // callback type and is alive.
        let r = unsafe { call_i8.invoke(&[stub.as_value(), Value::I8(x)]) }.unwrap();
        assert_eq!(r, Value::I32((x as u8).wrapping_mul(7) as i8 as i32));
    }
    assert_eq!(*seen.borrow(), [-3, 0, 5, 127]);
}

#[test]
fn invalid_descriptors_are_errors() {
    let arena = Arena::confined();
    let seq = MemoryLayout::sequence_layout(4, V::I32).unwrap();
    let err = Linker::native()
        .upcall_stub(&FD::of_void([seq]), |_| Ok(Value::Void), &arena)
        .unwrap_err();
    assert!(
        matches!(err, gatun::Error::InvalidDescriptor { .. }),
        "{err}"
    );
}

/// The child-process half of the abort tests: runs only when `GATUN_UPCALL_CHILD` names a
/// mode, and is expected to abort the process.
#[test]
fn upcall_abort_child() {
    let Some(mode) = std::env::var_os("GATUN_UPCALL_CHILD") else {
        return;
    };
    let arena = Arena::confined();
    if let Some(m) = mode.to_str().unwrap().strip_prefix("shape_") {
        // `II (*)(II, int)`: every argument and the result in registers, the register-shape
        // path on x86-64 System V.
        let ii = MemoryLayout::c_struct([V::I64, V::I64]).unwrap();
        let m = m.to_owned();
        let stub = Linker::native()
            .upcall_stub(
                &FD::of(ii.clone(), [ii.clone(), V::I32.into()]),
                move |a| match m.as_str() {
                    "panic" => panic!("boom from the register-shape path"),
                    "error" => Err(gatun::Error::FrameNotTopOfStack),
                    _ => Ok(Value::I32(a.get::<i32>(1)?)),
                },
                &arena,
            )
            .unwrap();
        let call = link(
            "upcall_call_upcall_II",
            &FD::of(ii.clone(), [V::ADDRESS.into(), ii, V::I32.into()]),
        );
        let s = arena.allocate(16, 8).unwrap();
        // SAFETY: upcall_call_upcall_II(cb, s, k) calls the live stub of type II (*)(II, int)
        // with a 16-byte struct argument; the process is expected to abort inside.
        let _ = unsafe {
            call.invoke_into(&arena, &[stub.as_value(), Value::Segment(s), Value::I32(1)])
        };
        unreachable!("the register-shape upcall must have aborted the process");
    }
    if mode == "confined" {
        let stub = Linker::native()
            .upcall_stub_confined(&FD::of(V::I8, [V::I8]), |a| Ok(a[0]), &arena)
            .unwrap();
        let on_thread = link(
            "upcall_call_i8_on_thread",
            &FD::of(V::I32, [V::ADDRESS, V::I8]),
        );
        // SAFETY: upcall_call_i8_on_thread(cb, x) calls the live stub of type int8_t (*)(int8_t)
        // on a new thread and joins it; the process is expected to abort inside.
        let _ = unsafe { on_thread.invoke(&[stub.as_value(), Value::I8(1)]) };
        unreachable!("the confined upcall must have aborted the process");
    }
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(V::I8, [V::I8]),
            move |a| match mode.to_str().unwrap() {
                "panic" => panic!("boom from the closure"),
                "error" => Err(gatun::Error::FrameNotTopOfStack),
                _ => Ok(Value::F64(a.get::<i8>(0)? as f64)),
            },
            &arena,
        )
        .unwrap();
    let call_i8 = link("upcall_call_i8", &FD::of(V::I32, [V::ADDRESS, V::I8]));
    // SAFETY: upcall_call_i8(cb, x) calls the live stub of type int8_t (*)(int8_t); the process
    // is expected to abort inside.
    let _ = unsafe { call_i8.invoke(&[stub.as_value(), Value::I8(1)]) };
    unreachable!("the upcall must have aborted the process");
}

/// Whether this test binary can run itself as a child process (through the cross-test runner,
/// `gatun_test_natives::target_command`, under qemu-user). Where it cannot, the abort tests
/// say so and stop.
fn can_spawn_self() -> bool {
    let out = gatun_test_natives::target_command(std::env::current_exe().unwrap())
        .args(["--list", "--exact", "upcall_abort_child"])
        .output()
        .unwrap();
    let ok = out.status.success();
    if !ok {
        eprintln!(
            "cannot run the test binary as a child process here ({}); abort test not run",
            out.status
        );
    }
    ok
}

/// Runs the child half in `mode`: whether it aborted (SIGABRT on Unix; on Windows Rust's
/// `abort`, a fail-fast exit with STATUS_STACK_BUFFER_OVERRUN), and its stderr.
fn run_child(mode: &str) -> (bool, String) {
    let out = gatun_test_natives::target_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "upcall_abort_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("GATUN_UPCALL_CHILD", mode)
        .output()
        .unwrap();
    #[cfg(unix)]
    let aborted = {
        use std::os::unix::process::ExitStatusExt;
        out.status.signal() == Some(libc_sigabrt())
    };
    #[cfg(windows)]
    let aborted = out.status.code().map(|c| c as u32) == Some(0xC000_0409);
    if !aborted {
        eprintln!("the child exited with {}", out.status);
    }
    (aborted, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_panic_in_the_closure_aborts_without_unwinding_into_c() {
    if cfg!(target_arch = "aarch64") && !can_spawn_self() {
        return;
    }
    let (aborted, stderr) = run_child("panic");
    assert!(aborted, "{stderr}");
    assert!(
        stderr.contains("gatun: upcall (i8)i8: the closure panicked: boom from the closure"),
        "{stderr}"
    );
}

#[test]
fn an_error_or_a_wrong_return_kind_aborts() {
    if cfg!(target_arch = "aarch64") && !can_spawn_self() {
        return;
    }
    let (aborted, stderr) = run_child("error");
    assert!(aborted, "{stderr}");
    assert!(
        stderr.contains("gatun: upcall (i8)i8: frame not top-of-stack"),
        "{stderr}"
    );
    let (aborted, stderr) = run_child("mismatch");
    assert!(aborted, "{stderr}");
    assert!(
        stderr.contains("value mismatch at upcall return: expected i8, found f64"),
        "{stderr}"
    );
}

#[test]
fn the_register_shape_path_aborts_on_a_panic_an_error_or_a_wrong_return_kind() {
    if cfg!(target_arch = "aarch64") && !can_spawn_self() {
        return;
    }
    for (mode, message) in [
        (
            "shape_panic",
            "the closure panicked: boom from the register-shape path",
        ),
        ("shape_error", "frame not top-of-stack"),
        (
            "shape_mismatch",
            "value mismatch at upcall return: expected a segment of at least 16 bytes, or void \
             after writing the return segment, found i32",
        ),
    ] {
        let (aborted, stderr) = run_child(mode);
        assert!(aborted, "{mode}: {stderr}");
        assert!(stderr.contains("gatun: upcall ("), "{mode}: {stderr}");
        assert!(stderr.contains(message), "{mode}: {stderr}");
    }
}

#[test]
fn a_confined_stub_called_on_another_thread_aborts() {
    if cfg!(target_arch = "aarch64") && !can_spawn_self() {
        return;
    }
    let (aborted, stderr) = run_child("confined");
    assert!(aborted, "{stderr}");
    assert!(
        stderr.contains(
            "gatun: upcall (i8)i8: called on a thread other than the one that made this confined stub"
        ),
        "{stderr}"
    );
}

#[cfg(unix)]
fn libc_sigabrt() -> i32 {
    6
}

/// A struct `{ long; 8 bytes of padding }` passes its second eightbyte in no register under
/// x86-64 System V (it is padding only), so a C caller passes it like a lone `long`: the
/// closure sees zeros in bytes 8..16, on every upcall path (register shape, confined register
/// copy, general with stack arguments), and the next argument is intact.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[test]
fn a_padding_only_eightbyte_reads_as_zero_and_leaves_the_next_argument_intact() {
    let low =
        MemoryLayout::c_struct([V::I64.into(), MemoryLayout::padding_layout(8).unwrap()]).unwrap();
    let arena = Arena::confined();
    fn closure<'a>(a: &UpcallArgs<'a>) -> gatun::Result<Value<'a>> {
        let s = a.segment(0)?;
        let mut expected = [0u8; 16];
        expected[..8].copy_from_slice(&0x0101_0101_0101_0101i64.to_le_bytes());
        // (A panic here would abort the process: report a mismatch as the result instead.)
        if s.to_vec() != expected {
            return Ok(Value::I64(-1));
        }
        // Writes into the struct's bytes stay in its copy.
        s.copy_from_slice(0, &[0xEE; 16])?;
        let rest: i64 = (1..a.len()).map(|i| a.get::<i64>(i).unwrap()).sum();
        Ok(Value::I64(rest))
    }
    let two = FD::of(V::I64, [low.clone(), V::I64.into()]);
    let shape = Linker::native().upcall_stub(&two, closure, &arena).unwrap();
    let confined = Linker::native()
        .upcall_stub_confined(&two, closure, &arena)
        .unwrap();
    for stub in [&shape, &*confined] {
        // SAFETY: the stub's C type is long (*)(struct low, long), which SysV passes as
        // long (*)(long, long): the struct's one register, then the long.
        let f: extern "C" fn(i64, i64) -> i64 = unsafe { std::mem::transmute(stub.address()) };
        assert_eq!(
            f(0x0101_0101_0101_0101, 0x0202_0202_0202_0202),
            0x0202_0202_0202_0202
        );
    }
    // Five longs in rsi..r9 and two on the stack: the general path.
    let mut args = vec![low];
    args.extend(std::iter::repeat_n(MemoryLayout::from(V::I64), 7));
    let general = Linker::native()
        .upcall_stub(&FD::of(V::I64, args), closure, &arena)
        .unwrap();
    type Eight = extern "C" fn(i64, i64, i64, i64, i64, i64, i64, i64) -> i64;
    // SAFETY: as above, with seven longs after the struct.
    let f: Eight = unsafe { std::mem::transmute(general.address()) };
    assert_eq!(f(0x0101_0101_0101_0101, 1, 2, 3, 4, 5, 6, 7), 28);
}
