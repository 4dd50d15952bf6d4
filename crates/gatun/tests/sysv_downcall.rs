//! x86-64 System V downcalls against the C functions of `tests/native/sysv_abi.c` (compiled by
//! gcc), through each handle's compiled stub; `memory_returns_use_the_hidden_pointer` also runs
//! the trampoline twin (`DowncallHandle::interpreted`). The plans these calls carry out are
//! asserted rule by rule in the SysV classifier's unit tests; the same rules are exercised by
//! 1,000 generated signatures in `downcall_prop.rs` and 10,000 in `stub_differential.rs`.
//!
//! # System V AMD64 (§3.2.3): rules and the tests that cover them
//!
//! | rule | tests |
//! |---|---|
//! | INTEGER class in rdi, rsi, rdx, rcx, r8, r9; SSE class in xmm0–xmm7; then the stack | `scalars`, `float_int_int_double_double_int`, `sixteen_ints_and_sixteen_doubles` |
//! | small integers and bools extended to 64 bits as arguments; returns truncated to the declared width, then extended by signedness | `small_integer_and_bool_arguments`, `small_integer_returns_are_truncated_then_extended` |
//! | eightbytes of an aggregate merged over its flattened scalars (nested structs, arrays, unions) | `nested_arrays_and_unions`, `debian_libffi_344_bug_cases` (mixed INTEGER/SSE structs in the last GPR) |
//! | a struct whose eightbytes do not all fit in the remaining registers goes wholly to the stack, leaving them for later arguments | `register_exhaustion_puts_whole_struct_on_stack` |
//! | over 16 bytes or unaligned members: MEMORY class, copied to the stack | `packed_structs`, `memory_returns_use_the_hidden_pointer` (100 bytes by value) |
//! | 16-byte-aligned aggregates on the stack at a 16-byte offset | `sixteen_byte_aligned_struct` |
//! | two-eightbyte returns in rax/rdx, xmm0/xmm1 or mixed | `two_register_returns` |
//! | MEMORY-class return through the hidden pointer in rdi, returned in rax | `memory_returns_use_the_hidden_pointer`, `raw_path_with_struct_return` |
//! | odd sizes moved in exact pieces (a 12-byte struct as 8 + 4), never past the value | `odd_sized_structs` (arguments end before a `PROT_NONE` page), `three_ints_then_an_int` |
//! | variadic: `%al` = vector registers used, `float` promoted to `double`, small integers extended | `variadic_promotions` |
//! | errno restored right before the call and saved right after | `errno_capture_restores_before_and_saves_after` |
//! | descriptors and options validated at link time | `link_time_validation` |
//! | wrong argument count or kind: an error before the call, naming the function and argument | `argument_count_errors_name_the_function_with_correct_plurals`, `wrong_arguments_are_errors` |
#![cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]

mod common;

use common::*;
use gatun::layout::MemoryLayout;
use gatun::linker::{capture_state_layout, FunctionDescriptor as FD, Linker, LinkerOption};
use gatun::memory::PrefixAllocator;
use gatun::memory::{Arena, MemorySegment, SegmentAllocator};
use gatun::{Error, Value};

fn f64_of(v: Value<'_>) -> f64 {
    match v {
        Value::F64(x) => x,
        other => panic!("expected f64, got {other:?}"),
    }
}

fn i64_of(v: Value<'_>) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("expected an integer, got {v:?}"))
}

fn seg(v: Value<'_>) -> MemorySegment<'_> {
    v.as_segment().expect("segment")
}

#[test]
fn scalars() {
    let h = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    assert_eq!(
        // SAFETY: `int sysv_add_i32(int, int)` (tests/native/sysv_abi.c), as described; scalars
        // only.
        unsafe { h.invoke(&[Value::I32(40), Value::I32(2)]) }.unwrap(),
        Value::I32(42)
    );
    let h = link("sysv_fma3", &FD::of(V::F64, [V::F64, V::F64, V::F64]));
    assert_eq!(
        // SAFETY: `double sysv_fma3(double, double, double)`, as described; scalars only.
        unsafe { h.invoke(&[Value::F64(2.0), Value::F64(3.0), Value::F64(0.5)]) }.unwrap(),
        Value::F64(6.5)
    );
    let h = link("sysv_add6", &FD::of(V::I64, [V::I64; 6]));
    let args: Vec<Value> = (1..=6).map(Value::I64).collect();
    // SAFETY: `int64_t sysv_add6(int64_t x6)`, as described; scalars only.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(91));
    let h = link("sysv_noop", &FD::of_void([]));
    // SAFETY: `void sysv_noop(void)`, as described.
    assert_eq!(unsafe { h.invoke(&[]) }.unwrap(), Value::Void);
    // `void f(void)` is called as that Rust fn type directly: a stray argument is still an
    // error, before the call.
    assert!(matches!(
        // SAFETY: the argument count is checked before any call, so nothing is called.
        unsafe { h.invoke(&[Value::I32(1)]) },
        Err(gatun::Error::ArgumentCount {
            expected: 0,
            found: 1,
            ..
        })
    ));
    // SAFETY: `void sysv_noop(void)`, as described.
    assert_eq!(unsafe { h.interpreted().invoke(&[]) }.unwrap(), Value::Void);
    let h = link("sysv_f32_mix", &FD::of(V::F32, [V::F32, V::I32, V::F32]));
    assert_eq!(
        // SAFETY: `float sysv_f32_mix(float, int, float)`, as described; scalars only.
        unsafe { h.invoke(&[Value::F32(1.5), Value::I32(-4), Value::F32(3.0)]) }.unwrap(),
        Value::F32(0.5)
    );
    let h = link("sysv_ptr_offset", &FD::of(V::ADDRESS, [V::ADDRESS, V::I64]));
    let base = 0x1000 as *mut std::ffi::c_void;
    assert_eq!(
        // SAFETY: `void *sysv_ptr_offset(char *, int64_t)` only adds to the pointer, never
        // dereferences it.
        unsafe { h.invoke(&[Value::Address(base), Value::I64(24)]) }.unwrap(),
        Value::Address(0x1018 as *mut _)
    );
}

#[test]
fn small_integer_returns_are_truncated_then_extended() {
    let x = Value::I64(0x1234_5678_9abc_de80u64 as i64);
    let cases = [
        ("sysv_ret_i8", V::I8, Value::I8(-128)),
        ("sysv_ret_u8", V::U8, Value::U8(0x80)),
        ("sysv_ret_i16", V::I16, Value::I16(0xde80u16 as i16)),
        ("sysv_ret_u16", V::U16, Value::U16(0xde80)),
        ("sysv_ret_bool", V::BOOL, Value::Bool(true)),
    ];
    for (name, layout, want) in cases {
        let h = link(name, &FD::of(&layout, [V::I64]));
        // SAFETY: `sysv_ret_*(int64_t)` returns the small integer type `layout` describes; scalars
        // only.
        assert_eq!(unsafe { h.invoke(&[x]) }.unwrap(), want, "{name}");
        // raw: exactly `size` bytes written
        let mut out = [0xAAu8; 8];
        let arg = 0x1234_5678_9abc_de80u64;
        // SAFETY: one pointer to an `int64_t` argument; `out` has 8 bytes, room for any of these
        // returns.
        unsafe { h.invoke_raw(&[&arg as *const u64 as *const u8], out.as_mut_ptr()) }.unwrap();
        let size = layout.byte_size();
        assert!(
            out[size..].iter().all(|&b| b == 0xAA),
            "{name} wrote past {size} bytes"
        );
    }
}

#[test]
fn small_integer_and_bool_arguments() {
    let h = link(
        "sysv_small_args",
        &FD::of(V::I64, [V::I8, V::U8, V::I16, V::U16, V::BOOL, V::I32]),
    );
    // SAFETY: `int64_t sysv_small_args(signed char, unsigned char, short, unsigned short, bool,
    // int)`, as described.
    let r = unsafe {
        h.invoke(&[
            Value::I8(-3),
            Value::U8(200),
            Value::I16(-7),
            Value::U16(60000),
            Value::Bool(true),
            Value::I32(-2),
        ])
    }
    .unwrap();
    assert_eq!(
        i64_of(r),
        -3 + 2000 - 700 + 60_000_000 + 100_000 - 2_000_000
    );
    // a bool byte of 2 through the raw path is passed as 1
    let h = link("sysv_bool_as_int", &FD::of(V::I32, [V::BOOL]));
    let b = 2u8;
    let mut out = 0i32;
    // SAFETY: `int sysv_bool_as_int(bool)`: one pointer to a `bool` argument (2 is passed on
    // purpose: C sees a byte); `out` holds the int.
    unsafe { h.invoke_raw(&[&b], (&mut out as *mut i32).cast()) }.unwrap();
    assert_eq!(out, 1);
}

#[test]
fn float_int_int_double_double_int() {
    let arena = Arena::confined();
    let fi = st([V::F32, V::I32]);
    let s = arena.allocate_layout(&fi).unwrap();
    s.set(0, 1.5f32).unwrap();
    s.set(4, -7i32).unwrap();
    let h = link("sysv_fi_sum", &FD::of(V::F64, [&fi]));
    assert_eq!(h.plan().to_string(), "(rdi) -> xmm0");
    assert_eq!(
        // SAFETY: `double sysv_fi_sum(sysv_FI)`; `s` is an arena segment with the struct's layout.
        f64_of(unsafe { h.invoke(&[Value::Segment(s)]) }.unwrap()),
        8.0
    );
    let h = link("sysv_fi_make", &FD::of(&fi, [V::F32, V::I32]));
    // SAFETY: `sysv_FI sysv_fi_make(float, int)`; the arena hands out the return buffer.
    let r = seg(unsafe { h.invoke_into(&arena, &[Value::F32(2.5), Value::I32(9)]) }.unwrap());
    assert_eq!(
        (r.get::<f32>(0).unwrap(), r.get::<i32>(4).unwrap()),
        (2.5, 9)
    );

    let id = st([V::I32, V::F64]);
    let s = arena.allocate_layout(&id).unwrap();
    s.set(0, 3i32).unwrap();
    s.set(8, 0.25f64).unwrap();
    let h = link("sysv_id_sum", &FD::of(V::F64, [&id]));
    assert_eq!(h.plan().to_string(), "(rdi+xmm0) -> xmm0");
    assert_eq!(
        // SAFETY: `double sysv_id_sum(sysv_ID)`; `s` is an arena segment with the struct's layout.
        f64_of(unsafe { h.invoke(&[Value::Segment(s)]) }.unwrap()),
        30.25
    );
    let h = link("sysv_id_make", &FD::of(&id, [V::I32, V::F64]));
    assert_eq!(h.plan().to_string(), "(rdi, xmm0) -> rax+xmm0");
    // SAFETY: `sysv_ID sysv_id_make(int, double)`; the arena hands out the return buffer.
    let r = seg(unsafe { h.invoke_into(&arena, &[Value::I32(-5), Value::F64(1e300)]) }.unwrap());
    assert_eq!(
        (r.get::<i32>(0).unwrap(), r.get::<f64>(8).unwrap()),
        (-5, 1e300)
    );

    let di = st([V::F64, V::I32]);
    let s = arena.allocate_layout(&di).unwrap();
    s.set(0, 0.5f64).unwrap();
    s.set(8, 11i32).unwrap();
    let h = link("sysv_di_sum", &FD::of(V::F64, [&di]));
    assert_eq!(h.plan().to_string(), "(xmm0+rdi) -> xmm0");
    assert_eq!(
        // SAFETY: `double sysv_di_sum(sysv_DI)`; `s` is an arena segment with the struct's layout.
        f64_of(unsafe { h.invoke(&[Value::Segment(s)]) }.unwrap()),
        16.0
    );
    let h = link("sysv_di_make", &FD::of(&di, [V::F64, V::I32]));
    // SAFETY: `sysv_DI sysv_di_make(double, int)`; the arena hands out the return buffer.
    let r = seg(unsafe { h.invoke_into(&arena, &[Value::F64(-2.0), Value::I32(77)]) }.unwrap());
    assert_eq!(
        (r.get::<f64>(0).unwrap(), r.get::<i32>(8).unwrap()),
        (-2.0, 77)
    );
}

#[test]
fn debian_libffi_344_bug_cases() {
    let arena = Arena::confined();
    let cd = st([V::I8, V::F64]);
    let s = arena.allocate_layout(&cd).unwrap();
    s.set(0, 6i8).unwrap();
    s.set(8, 7.0f64).unwrap();
    let h = link(
        "sysv_ffi_bug1",
        &FD::of(
            V::I8,
            [
                V::I8.into(),
                V::I8.into(),
                V::I8.into(),
                V::I8.into(),
                V::I8.into(),
                V::F32.into(),
                cd.clone(),
            ],
        ),
    );
    assert_eq!(
        h.plan().to_string(),
        "(rdi, rsi, rdx, rcx, r8, xmm0, r9+xmm1) -> rax"
    );
    let mut args: Vec<Value> = (1..=5).map(Value::I8).collect();
    args.push(Value::F32(50.0));
    args.push(Value::Segment(s));
    // SAFETY: `char sysv_ffi_bug1(char x5, float, sysv_CD)`; `s` is an arena segment of `cd`.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I8(15 + 50 + 13));

    let lf = st([V::U64, V::F32]);
    let segs: Vec<_> = (1..=6u64)
        .map(|k| {
            let s = arena.allocate_layout(&lf).unwrap();
            s.set(0, k).unwrap();
            s.set(8, k as f32 * 10.0).unwrap();
            Value::Segment(s)
        })
        .collect();
    let h = link("sysv_ffi_bug2", &FD::of(V::F32, vec![lf.clone(); 6]));
    assert_eq!(
        h.plan().to_string(),
        "(rdi+xmm0, rsi+xmm1, rdx+xmm2, rcx+xmm3, r8+xmm4, r9+xmm5) -> xmm0"
    );
    // SAFETY: `float sysv_ffi_bug2(sysv_LF x6)`; every segment is an arena allocation of `lf`.
    assert_eq!(unsafe { h.invoke(&segs) }.unwrap(), Value::F32(10.0));
}

#[test]
fn register_exhaustion_puts_whole_struct_on_stack() {
    let arena = Arena::confined();
    let dd = st([V::F64, V::F64]);
    let s = arena.allocate_layout(&dd).unwrap();
    s.set(0, 1.0f64).unwrap();
    s.set(8, 2.0f64).unwrap();
    let mut args: Vec<MemoryLayout> = vec![V::F64.into(); 8];
    args.push(dd.clone());
    args.push(V::I64.into());
    let h = link("sysv_after_8_doubles", &FD::of(V::F64, args.clone()));
    assert!(
        h.plan()
            .to_string()
            .ends_with("xmm7, stack+0+stack+8, rdi) -> xmm0"),
        "{}",
        h.plan()
    );
    let mut vals: Vec<Value> = (1..=8).map(|k| Value::F64(k as f64)).collect();
    vals.push(Value::Segment(s));
    vals.push(Value::I64(3));
    let want = (1..=8).map(|k| (k * k) as f64).sum::<f64>() + 100.0 + 2000.0 + 30000.0;
    // SAFETY: `double sysv_after_8_doubles(double x8, sysv_DD, int64_t)`; `s` is an arena segment
    // of `dd`.
    assert_eq!(f64_of(unsafe { h.invoke(&vals) }.unwrap()), want);

    let dl = st([V::F64, V::I64]);
    let s2 = arena.allocate_layout(&dl).unwrap();
    s2.set(0, 4.0f64).unwrap();
    s2.set(8, 5i64).unwrap();
    args[8] = dl;
    let h = link("sysv_dl_after_8_doubles", &FD::of(V::F64, args));
    assert!(
        h.plan()
            .to_string()
            .ends_with("stack+0+stack+8, rdi) -> xmm0"),
        "{}",
        h.plan()
    );
    vals[8] = Value::Segment(s2);
    assert_eq!(
        // SAFETY: `double sysv_dl_after_8_doubles(double x8, sysv_DL, int64_t)`; `s2` is an arena
        // segment of `dl`.
        f64_of(unsafe { h.invoke(&vals) }.unwrap()),
        36.0 + 400.0 + 5000.0 + 30000.0
    );

    let ll = st([V::I64, V::I64]);
    let s3 = arena.allocate_layout(&ll).unwrap();
    s3.set(0, 6i64).unwrap();
    s3.set(8, 7i64).unwrap();
    let mut largs: Vec<MemoryLayout> = vec![V::I64.into(); 5];
    largs.push(ll);
    largs.push(V::I64.into());
    let h = link("sysv_ll_after_5_longs", &FD::of(V::I64, largs));
    assert_eq!(
        h.plan().to_string(),
        "(rdi, rsi, rdx, rcx, r8, stack+0+stack+8, r9) -> rax"
    );
    let mut v: Vec<Value> = (1..=5).map(Value::I64).collect();
    v.push(Value::Segment(s3));
    v.push(Value::I64(8));
    assert_eq!(
        // SAFETY: `int64_t sysv_ll_after_5_longs(int64_t x5, sysv_LL, int64_t)`; `s3` is an arena
        // segment of `ll`.
        i64_of(unsafe { h.invoke(&v) }.unwrap()),
        55 + 600 + 7000 + 80000
    );
}

#[test]
fn sixteen_ints_and_sixteen_doubles() {
    let mut layouts: Vec<MemoryLayout> = Vec::new();
    let mut vals = Vec::new();
    let mut want = 0.0;
    for k in 0..16 {
        layouts.push(V::I32.into());
        layouts.push(V::F64.into());
        vals.push(Value::I32(k - 5));
        vals.push(Value::F64(k as f64 * 0.5));
        want += (k as f64 - 5.0) * (k + 1) as f64 + (k as f64 * 0.5) * (k + 1) as f64 * 1000.0;
    }
    let h = link("sysv_16i_16d", &FD::of(V::F64, layouts));
    assert_eq!(h.plan().stack_bytes(), 18 * 8);
    // SAFETY: `double sysv_16i_16d` takes 16 (int, double) pairs, as described; scalars only.
    assert_eq!(f64_of(unsafe { h.invoke(&vals) }.unwrap()), want);
}

#[test]
fn memory_returns_use_the_hidden_pointer() {
    let arena = Arena::confined();
    let l3 = st([V::I64, V::I64, V::I64]);
    let h = link("sysv_l3_make", &FD::of(&l3, [V::I64, V::I64, V::I64]));
    assert_eq!(
        h.plan().to_string(),
        "(ret-ptr:rdi, rsi, rdx, rcx) -> memory"
    );
    let r = seg(
        // SAFETY: `sysv_L3 sysv_l3_make(int64_t, int64_t, int64_t)`; the arena hands out the return
        // buffer.
        unsafe { h.invoke_into(&arena, &[Value::I64(1), Value::I64(2), Value::I64(3)]) }.unwrap(),
    );
    assert_eq!(
        [
            r.get::<i64>(0).unwrap(),
            r.get::<i64>(8).unwrap(),
            r.get::<i64>(16).unwrap()
        ],
        [1, 4, 9]
    );

    // No arguments: the stub only moves the hidden pointer into rdi and jumps; twice into
    // the same segment, and an extra argument is still rejected.
    let h = link("sysv_l3_fixed", &FD::of(&l3, []));
    assert_eq!(h.plan().to_string(), "(ret-ptr:rdi) -> memory");
    let dest = arena.allocate(24, 8).unwrap();
    for _ in 0..2 {
        let into = PrefixAllocator::new(dest);
        // SAFETY: `sysv_L3 sysv_l3_fixed(void)`; `dest` (24 bytes, arena memory) receives the
        // result.
        let r = seg(unsafe { h.invoke_into(&into, &[]) }.unwrap());
        assert_eq!(r.as_ptr(), dest.as_ptr());
        assert_eq!(
            [
                r.get::<i64>(0).unwrap(),
                r.get::<i64>(8).unwrap(),
                r.get::<i64>(16).unwrap()
            ],
            [-7, 11, 1 << 20]
        );
    }
    // SAFETY: the argument count is checked before any call, so nothing is called.
    assert!(unsafe { h.invoke_into(&arena, &[Value::I64(1)]) }.is_err());

    let b100 = bytes_struct(100);
    let h = link("sysv_b100_make", &FD::of(&b100, [V::I32, V::F64]));
    let mut buf = [0u8; 100];
    let dest = MemorySegment::of_slice(&mut buf);
    // SAFETY: `sysv_B100 sysv_b100_make(int, double)`; `dest` is exactly the 100-byte result.
    unsafe {
        h.invoke_into(
            &PrefixAllocator::new(dest),
            &[Value::I32(3), Value::F64(2.0)],
        )
    }
    .unwrap();
    assert!(buf.iter().enumerate().all(|(k, &b)| b == (3 + 2 * k) as u8));
    // and passing 100 bytes by value (on the stack)
    let h = link(
        "sysv_b100_sum",
        &FD::of(V::I64, [b100.clone(), V::I32.into()]),
    );
    let dest = MemorySegment::of_slice(&mut buf);
    let want: i64 = (0..100)
        .map(|k| ((3 + 2 * k) as u8 as i64) * (k as i64 + 1))
        .sum::<i64>()
        + 5;
    assert_eq!(
        // SAFETY: `int64_t sysv_b100_sum(sysv_B100, int)`; `dest` covers the 100 bytes of `buf`.
        i64_of(unsafe { h.invoke(&[Value::Segment(dest), Value::I32(5)]) }.unwrap()),
        want
    );
    // a too-small destination is an error, not a write past its end
    let mut small = [0u8; 99];
    let into = PrefixAllocator::new(MemorySegment::of_slice(&mut small));
    // SAFETY: `sysv_b100_make` as above; the 99-byte destination is refused before the call.
    let err = unsafe {
        link("sysv_b100_make", &FD::of(&b100, [V::I32, V::F64]))
            .invoke_into(&into, &[Value::I32(3), Value::F64(2.0)])
            .map(|_| ())
    };
    assert!(
        matches!(
            err,
            Err(Error::AllocatorExhausted {
                requested: 100,
                available: 99,
                ..
            })
        ),
        "{err:?}"
    );

    let ll = st([V::I64, V::I64]);
    let s = arena.allocate_layout(&ll).unwrap();
    s.set(0, 10i64).unwrap();
    s.set(8, 20i64).unwrap();
    let h = link("sysv_l3_from_ll", &FD::of(&l3, [ll, V::I64.into()]));
    assert_eq!(
        h.plan().to_string(),
        "(ret-ptr:rdi, rsi+rdx, rcx) -> memory"
    );
    // SAFETY: `sysv_L3 sysv_l3_from_ll(sysv_LL, int64_t)`; `s` is an arena segment of `ll`.
    let r = seg(unsafe { h.invoke_into(&arena, &[Value::Segment(s), Value::I64(30)]) }.unwrap());
    assert_eq!(
        [
            r.get::<i64>(0).unwrap(),
            r.get::<i64>(8).unwrap(),
            r.get::<i64>(16).unwrap()
        ],
        [10, 20, 30]
    );
}

#[test]
fn odd_sized_structs() {
    for n in [3usize, 5, 6, 7, 9, 12, 15] {
        let l = bytes_struct(n);
        // exactly-sized buffers: a read past the struct would be caught by Miri/ASan, and the
        // return write is checked by the guard bytes after the destination
        let mut src = vec![0u8; n];
        for (k, b) in src.iter_mut().enumerate() {
            *b = (k * 7 + 1) as u8;
        }
        let h = link(&format!("sysv_b{n}_inc"), &FD::of(&l, [&l]));
        let mut out = vec![0xEEu8; n + 8];
        let s = MemorySegment::of_slice(&mut src);
        // SAFETY: `sysv_bN sysv_bN_inc(sysv_bN)` for this `n`: `s` and the destination hold at
        // least n bytes.
        unsafe {
            h.invoke_into(
                &PrefixAllocator::new(MemorySegment::of_slice(&mut out)),
                &[Value::Segment(s)],
            )
        }
        .unwrap();
        for (k, &b) in out.iter().enumerate().take(n) {
            assert_eq!(b, (k * 7 + 2) as u8, "n={n} byte {k}");
        }
        assert!(
            out[n..].iter().all(|&b| b == 0xEE),
            "n={n}: wrote past the struct"
        );

        let h = link(
            &format!("sysv_b{n}_sum"),
            &FD::of(V::I64, [V::I64.into(), l.clone(), V::I64.into()]),
        );
        // the struct's last byte is the last byte before a PROT_NONE page: reading one byte
        // past the argument would fault
        let guarded = GuardedBytes::new(&src);
        // SAFETY: `int64_t sysv_bN_sum(int64_t, sysv_bN, int64_t)`; the guarded segment holds
        // exactly n bytes.
        let r = unsafe {
            h.invoke(&[
                Value::I64(0),
                Value::Segment(guarded.segment()),
                Value::I64(0),
            ])
        };
        let want0: i64 = (0..n).map(|k| ((k * 7 + 1) as i64) * (k as i64 + 1)).sum();
        assert_eq!(i64_of(r.unwrap()), want0, "n={n} guarded");
        let s = MemorySegment::of_slice(&mut src);
        let want: i64 = (0..n)
            .map(|k| ((k * 7 + 1) as i64) * (k as i64 + 1))
            .sum::<i64>()
            + 100_000 * 2
            + 10_000_000 * 3;
        assert_eq!(
            i64_of(
                // SAFETY: as above, with `s` over the n bytes of `src`.
                unsafe { h.invoke(&[Value::I64(2), Value::Segment(s), Value::I64(3)]) }.unwrap()
            ),
            want,
            "n={n}"
        );
    }
}

#[test]
fn nested_arrays_and_unions() {
    let arena = Arena::confined();
    let ff = st([V::F32, V::F32]);
    let nested = st([ff.clone(), V::F64.into()]);
    let h = link(
        "sysv_nested_make",
        &FD::of(&nested, [V::F32, V::F32, V::F64]),
    );
    assert_eq!(h.plan().to_string(), "(xmm0, xmm1, xmm2) -> xmm0+xmm1");
    let r = seg(
        // SAFETY: `sysv_Nested sysv_nested_make(float, float, double)`; the arena hands out the
        // return buffer.
        unsafe { h.invoke_into(&arena, &[Value::F32(1.0), Value::F32(2.0), Value::F64(3.0)]) }
            .unwrap(),
    );
    let h = link("sysv_nested_sum", &FD::of(V::F64, [&nested]));
    assert_eq!(
        // SAFETY: `double sysv_nested_sum(sysv_Nested)`; `r` is the arena segment just returned.
        f64_of(unsafe { h.invoke(&[Value::Segment(r)]) }.unwrap()),
        321.0
    );

    let intarr = st([
        MemoryLayout::sequence_layout(3, V::I32).unwrap(),
        V::F32.into(),
    ]);
    let h = link(
        "sysv_intarr_make",
        &FD::of(&intarr, [V::I32, V::I32, V::I32, V::F32]),
    );
    assert_eq!(h.plan().to_string(), "(rdi, rsi, rdx, xmm0) -> rax+rdx");
    // SAFETY: `sysv_IntArr sysv_intarr_make(int, int, int, float)`; the arena hands out the return
    // buffer.
    let r = seg(unsafe {
        h.invoke_into(
            &arena,
            &[Value::I32(1), Value::I32(2), Value::I32(3), Value::F32(4.0)],
        )
    }
    .unwrap());
    let h = link("sysv_intarr_sum", &FD::of(V::F64, [&intarr]));
    assert_eq!(h.plan().to_string(), "(rdi+rsi) -> xmm0");
    assert_eq!(
        // SAFETY: `double sysv_intarr_sum(sysv_IntArr)`; `r` is the arena segment just returned.
        f64_of(unsafe { h.invoke(&[Value::Segment(r)]) }.unwrap()),
        4321.0
    );

    let f4 = st([MemoryLayout::sequence_layout(4, V::F32).unwrap()]);
    let h = link("sysv_f4_make", &FD::of(&f4, [V::F32]));
    // SAFETY: `sysv_F4 sysv_f4_make(float)`; the arena hands out the return buffer.
    let r = seg(unsafe { h.invoke_into(&arena, &[Value::F32(1.0)]) }.unwrap());
    let h = link("sysv_f4_sum", &FD::of(V::F32, [&f4]));
    assert_eq!(h.plan().to_string(), "(xmm0+xmm1) -> xmm0");
    assert_eq!(
        // SAFETY: `float sysv_f4_sum(sysv_F4)`; `r` is the arena segment just returned.
        unsafe { h.invoke(&[Value::Segment(r)]) }.unwrap(),
        Value::F32(4321.0)
    );

    let inner = st([V::I8, V::I16]);
    let nest2 = st([inner, V::F32.into(), V::I64.into()]);
    let s = arena.allocate_layout(&nest2).unwrap();
    s.set(0, 1i8).unwrap();
    s.set(2, 2i16).unwrap();
    s.set(4, 3.0f32).unwrap();
    s.set(8, 4i64).unwrap();
    let h = link("sysv_nest2_sum", &FD::of(V::F64, [&nest2]));
    assert_eq!(h.plan().to_string(), "(rdi+rsi) -> xmm0");
    assert_eq!(
        // SAFETY: `double sysv_nest2_sum(sysv_Nest2)`; `s` is an arena segment of the struct.
        f64_of(unsafe { h.invoke(&[Value::Segment(s)]) }.unwrap()),
        4321.0
    );

    let uif = MemoryLayout::union_layout([V::I32, V::F32]).unwrap();
    let s = arena.allocate_layout(&uif).unwrap();
    s.set(0, 41i32).unwrap();
    let h = link(
        "sysv_uif_bits",
        &FD::of(V::I32, [uif.clone(), V::F32.into()]),
    );
    assert_eq!(h.plan().to_string(), "(rdi, xmm0) -> rax");
    assert_eq!(
        // SAFETY: `int sysv_uif_bits(sysv_UIF, float)`; `s` is an arena segment of the union.
        unsafe { h.invoke(&[Value::Segment(s), Value::F32(1.0)]) }.unwrap(),
        Value::I32(42)
    );

    let udf = MemoryLayout::union_layout([V::F64, V::F32]).unwrap();
    let s = arena.allocate_layout(&udf).unwrap();
    s.set(0, 2.5f64).unwrap();
    let h = link(
        "sysv_udf_get",
        &FD::of(V::F64, [udf.clone(), V::I32.into()]),
    );
    assert_eq!(h.plan().to_string(), "(xmm0, rdi) -> xmm0");
    assert_eq!(
        // SAFETY: `double sysv_udf_get(sysv_UDF, int)`; `s` is an arena segment of the union.
        f64_of(unsafe { h.invoke(&[Value::Segment(s), Value::I32(0)]) }.unwrap()),
        2.5
    );

    let uld = MemoryLayout::union_layout([V::I64, V::F64]).unwrap();
    let h = link("sysv_uld_make", &FD::of(&uld, [V::I64]));
    assert_eq!(h.plan().to_string(), "(rdi) -> rax");
    // SAFETY: `sysv_ULD sysv_uld_make(int64_t)`; the arena hands out the return buffer.
    let r = seg(unsafe { h.invoke_into(&arena, &[Value::I64(-99)]) }.unwrap());
    assert_eq!(r.get::<i64>(0).unwrap(), -99);

    let uf2 = st([
        MemoryLayout::union_layout([V::F32, V::I32]).unwrap(),
        V::F32.into(),
    ]);
    let s = arena.allocate_layout(&uf2).unwrap();
    s.set(0, 1.5f32).unwrap();
    s.set(4, 2.0f32).unwrap();
    let h = link("sysv_uf2_sum", &FD::of(V::F32, [&uf2]));
    assert_eq!(h.plan().to_string(), "(rdi) -> xmm0");
    assert_eq!(
        // SAFETY: `float sysv_uf2_sum(sysv_UF2)`; `s` is an arena segment of the struct.
        unsafe { h.invoke(&[Value::Segment(s)]) }.unwrap(),
        Value::F32(3.5)
    );
}

#[test]
fn packed_structs() {
    let arena = Arena::confined();
    let pci = MemoryLayout::c_struct_packed([V::I8, V::I32], 1).unwrap();
    assert_eq!(pci.byte_size(), 5);
    let s = arena.allocate_layout(&pci).unwrap();
    s.set(0, 3i8).unwrap();
    s.set_unaligned(1, 7i32).unwrap();
    let h = link(
        "sysv_packed_ci",
        &FD::of(V::I64, [V::I64.into(), pci.clone(), V::I64.into()]),
    );
    assert_eq!(h.plan().to_string(), "(rdi, stack+0, rsi) -> rax");
    assert_eq!(
        // SAFETY: `int64_t sysv_packed_ci(int64_t, sysv_PackedCI, int64_t)`; `s` is an arena
        // segment of it.
        i64_of(unsafe { h.invoke(&[Value::I64(1), Value::Segment(s), Value::I64(2)]) }.unwrap()),
        1 + 30 + 700 + 200_000
    );

    let pcd = MemoryLayout::c_struct_packed([V::I8, V::F64], 1).unwrap();
    let h = link("sysv_packed_cd_make", &FD::of(&pcd, [V::I8, V::F64]));
    assert_eq!(h.plan().to_string(), "(ret-ptr:rdi, rsi, xmm0) -> memory");
    // SAFETY: `sysv_PackedCD sysv_packed_cd_make(char, double)`; the arena hands out the return
    // buffer.
    let r = seg(unsafe { h.invoke_into(&arena, &[Value::I8(5), Value::F64(0.5)]) }.unwrap());
    let h = link(
        "sysv_packed_cd",
        &FD::of(V::F64, [pcd.clone(), V::F64.into()]),
    );
    assert_eq!(h.plan().to_string(), "(stack+0+stack+8, xmm0) -> xmm0");
    assert_eq!(
        // SAFETY: `double sysv_packed_cd(sysv_PackedCD, double)`; `r` is the arena segment just
        // returned.
        f64_of(unsafe { h.invoke(&[Value::Segment(r), Value::F64(2.0)]) }.unwrap()),
        5.0 + 5.0 + 2000.0
    );

    let pii = MemoryLayout::c_struct_packed([V::I32, V::I32], 1).unwrap();
    let s = arena.allocate_layout(&pii).unwrap();
    s.set_unaligned(0, 3i32).unwrap();
    s.set_unaligned(4, 4i32).unwrap();
    let h = link("sysv_packed_ii", &FD::of(V::I64, [&pii]));
    assert_eq!(h.plan().to_string(), "(rdi) -> rax");
    assert_eq!(
        // SAFETY: `int64_t sysv_packed_ii(sysv_PackedII)`; `s` is an arena segment of the struct.
        i64_of(unsafe { h.invoke(&[Value::Segment(s)]) }.unwrap()),
        4003
    );
}

#[test]
fn three_ints_then_an_int() {
    let arena = Arena::confined();
    let i3 = st([V::I32, V::I32, V::I32]);
    let h = link("sysv_i3_make", &FD::of(&i3, [V::I32, V::I32, V::I32]));
    assert_eq!(h.plan().to_string(), "(rdi, rsi, rdx) -> rax+rdx");
    let r = seg(
        // SAFETY: `sysv_I3 sysv_i3_make(int, int, int)`; the arena hands out the return buffer.
        unsafe { h.invoke_into(&arena, &[Value::I32(1), Value::I32(2), Value::I32(3)]) }.unwrap(),
    );
    let h = link(
        "sysv_i3_then_int",
        &FD::of(V::I64, [i3.clone(), V::I32.into()]),
    );
    assert_eq!(h.plan().to_string(), "(rdi+rsi, rdx) -> rax");
    assert_eq!(
        // SAFETY: `int64_t sysv_i3_then_int(sysv_I3, int)`; `r` is the arena segment just returned.
        i64_of(unsafe { h.invoke(&[Value::Segment(r), Value::I32(4)]) }.unwrap()),
        4321
    );
}

#[test]
fn two_register_returns() {
    let arena = Arena::confined();
    let cases: [(&str, [V; 2], &str); 4] = [
        ("sysv_dd_make", [V::F64, V::F64], "xmm0+xmm1"),
        ("sysv_ld_make", [V::I64, V::F64], "rax+xmm0"),
        ("sysv_dl_make", [V::F64, V::I64], "xmm0+rax"),
        ("sysv_ll_make", [V::I64, V::I64], "rax+rdx"),
    ];
    for (name, fields, regs) in cases {
        let l = st(fields.clone());
        let h = link(name, &FD::of(&l, fields.clone()));
        assert!(h.plan().to_string().ends_with(regs), "{name}: {}", h.plan());
        assert_eq!(h.plan().return_image_bytes(), 16);
        let vals: Vec<Value> = fields
            .iter()
            .enumerate()
            .map(|(k, f)| {
                if f.kind().is_float() {
                    Value::F64(k as f64 + 0.5)
                } else {
                    Value::I64(-(k as i64) - 10)
                }
            })
            .collect();
        // SAFETY: each `sysv_*_make` takes the struct's two fields and returns the struct, as
        // described.
        let r = seg(unsafe { h.invoke_into(&arena, &vals) }.unwrap());
        for (k, v) in vals.iter().enumerate() {
            let got = match v {
                Value::F64(_) => Value::F64(r.get::<f64>(8 * k).unwrap()),
                _ => Value::I64(r.get::<i64>(8 * k).unwrap()),
            };
            assert_eq!(&got, v, "{name} field {k}");
        }
    }
}

#[test]
fn variadic_promotions() {
    let arena = Arena::confined();
    let tags = arena.allocate_c_string("didiils").unwrap();
    let dd = st([V::F64, V::F64]);
    let s = arena.allocate_layout(&dd).unwrap();
    s.set(0, 1.0f64).unwrap();
    s.set(8, 2.0f64).unwrap();
    let d = FD::of(
        V::F64,
        [
            V::ADDRESS.into(),
            V::F32.into(),
            V::I8.into(),
            V::F64.into(),
            V::I16.into(),
            V::BOOL.into(),
            V::I64.into(),
            dd,
        ],
    );
    let h = link_with("sysv_va_sum", &d, &[LinkerOption::FirstVariadicArg(1)]);
    assert_eq!(h.plan().vector_registers(), 4);
    assert_eq!(
        h.plan().to_string(),
        "(rdi, xmm0, rsi, xmm1, rdx, rcx, r8, xmm2+xmm3) -> xmm0"
    );
    // SAFETY: `double sysv_va_sum(const char *tags, ...)`: `tags` is a NUL-terminated arena string
    // naming the variadic types passed.
    let r = unsafe {
        h.invoke(&[
            Value::Segment(tags),
            Value::F32(1.5),
            Value::I8(-3),
            Value::F64(0.25),
            Value::I16(-300),
            Value::Bool(true),
            Value::I64(1 << 40),
            Value::Segment(s),
        ])
    }
    .unwrap();
    let want =
        1.5 - 3.0 * 2.0 + 0.25 * 3.0 - 300.0 * 4.0 + 5.0 + (1u64 << 40) as f64 * 6.0 + 21.0 * 7.0;
    assert_eq!(f64_of(r), want);
}

#[test]
fn errno_capture_restores_before_and_saves_after() {
    let h = link_with(
        "sysv_set_errno",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    let arena = Arena::confined();
    let cap = arena.allocate_layout(&capture_state_layout()).unwrap();
    assert_eq!(
        // SAFETY: `int sysv_set_errno(int, int)`; `cap` is an arena segment of the capture layout.
        unsafe { h.invoke(&[Value::Segment(cap), Value::I32(13), Value::I32(-1)]) }.unwrap(),
        Value::I32(-1)
    );
    assert_eq!(cap.get::<i32>(0).unwrap(), 13);
    // restore before: the callee sees the segment's errno
    let g = link_with(
        "sysv_get_errno",
        &FD::of(V::I32, []),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    assert_eq!(g.captured_states(), ["errno"]);
    assert!(g.captures_call_state() && g.arity() == 1);
    cap.set(0, 77i32).unwrap();
    assert_eq!(
        // SAFETY: `int sysv_get_errno(void)`; `cap` is an arena segment of the capture layout.
        unsafe { g.invoke(&[Value::Segment(cap)]) }.unwrap(),
        Value::I32(77)
    );
    assert_eq!(cap.get::<i32>(0).unwrap(), 77);
    // a missing capture segment is an error, not a crash
    assert!(matches!(
        // SAFETY: the missing capture segment is refused before the call.
        unsafe { g.invoke(&[Value::I32(1)]) },
        Err(Error::ValueMismatch { .. })
    ));
}

#[test]
fn link_time_validation() {
    let s = sym("sysv_noop");
    let l = Linker::native();
    let err = |d: FD, o: &[LinkerOption]| l.downcall(&s, &d, o).unwrap_err();
    let empty = MemoryLayout::c_struct([V::I32; 0]).unwrap();
    assert!(matches!(
        err(FD::of_void([empty]), &[]),
        Error::InvalidDescriptor { .. }
    ));
    let seq = MemoryLayout::sequence_layout(4, V::I32).unwrap();
    let e = err(FD::of_void([seq]), &[]);
    assert!(e.to_string().contains("sequence"), "{e}");
    assert!(matches!(
        err(FD::of_void([MemoryLayout::padding_layout(4).unwrap()]), &[]),
        Error::InvalidDescriptor { .. }
    ));
    let odd =
        MemoryLayout::struct_layout([V::I32.into(), MemoryLayout::padding_layout(1).unwrap()])
            .unwrap();
    let e = err(FD::of_void([odd]), &[]);
    assert!(
        e.to_string().contains("not a multiple of its alignment"),
        "{e}"
    );
    let e = err(FD::of_void([V::I32]), &[LinkerOption::FirstVariadicArg(2)]);
    assert!(e.to_string().contains("out of range"), "{e}");
    assert_eq!(
        err(
            FD::of_void([V::I32]),
            &[LinkerOption::CaptureCallState(&["errno", "foo"])]
        ),
        Error::UnknownCaptureState {
            name: "foo".into(),
            valid: "errno".into()
        }
    );
    let e = err(
        FD::of_void([V::I32]),
        &[LinkerOption::CaptureCallState(&["GetLastError"])],
    );
    assert_eq!(e.to_string(), "GetLastError is only available on Windows");
    // 6 in registers and 131,073 on the stack: 8 bytes over the 1 MiB limit.
    let e = err(FD::of_void(vec![V::I64; 6 + 131_073]), &[]);
    assert!(
        e.to_string()
            .contains("needs 1048584 bytes of stack arguments"),
        "{e}"
    );
    // SAFETY: a null symbol is never called: linking it must fail, which is what is tested.
    let null = unsafe { gatun::Symbol::from_address(std::ptr::null()) };
    assert!(l.downcall(&null, &FD::of_void([V::I32]), &[]).is_err());
    assert!(l
        .downcall(&s, &FD::of_void([V::I32]), &[LinkerOption::Critical])
        .unwrap()
        .is_critical());
    // the stub tools accept exactly what `downcall` accepts
    let twice = [LinkerOption::Critical, LinkerOption::Critical];
    for o in [
        &twice[..],
        &[
            LinkerOption::FirstVariadicArg(0),
            LinkerOption::FirstVariadicArg(1),
        ],
        &[
            LinkerOption::CaptureCallState(&["errno"]),
            LinkerOption::CaptureCallState(&["errno"]),
        ],
    ] {
        let d = FD::of_void([V::I32, V::I32]);
        let e = err(d.clone(), o);
        assert!(e.to_string().contains("given twice"), "{e}");
        assert_eq!(l.stub_code(&d, o).unwrap_err(), e);
        assert_eq!(l.compile_stub_uncached(&d, o).unwrap_err(), e);
    }
    assert!(l
        .stub_code(&FD::of_void([V::I32]), &[LinkerOption::Critical])
        .is_ok());
}

#[test]
fn argument_count_errors_name_the_function_with_correct_plurals() {
    let h = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    // SAFETY: rejected before any call.
    let e = unsafe { h.invoke(&[Value::I32(1)]) }.unwrap_err();
    assert_eq!(
        e.to_string(),
        "wrong argument count: `sysv_add_i32` (i32, i32)i32 takes 2 arguments, 1 given"
    );
    let h = link("sysv_noop", &FD::of_void([]));
    // SAFETY: rejected before any call.
    let e = unsafe { h.invoke(&[Value::I32(1)]) }.unwrap_err();
    assert_eq!(
        e.to_string(),
        "wrong argument count: `sysv_noop` ()v takes 0 arguments, 1 given"
    );
    // A symbol made from an address has no name: the message gives the address.
    let s = sym("sysv_add_i32");
    // SAFETY: the address of a live function of this type.
    let anon = unsafe { gatun::Symbol::from_address(s.address()) };
    let one = FD::of(V::I32, [V::I32]);
    let h = Linker::native().downcall(&anon, &one, &[]).unwrap();
    // SAFETY: rejected before any call.
    let e = unsafe { h.invoke(&[]) }.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "wrong argument count: the function at {:#x} (i32)i32 takes 1 argument, 0 given",
            s.address() as usize
        )
    );
    // Typed views: the same message for a tuple of the wrong length.
    let e = h.typed::<(i32, i32), i32>().unwrap_err();
    assert!(e.to_string().ends_with("takes 1 argument, 2 given"), "{e}");
}

#[test]
fn wrong_arguments_are_errors() {
    let h = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    assert!(matches!(
        // SAFETY: the argument count is checked before any call, so nothing is called.
        unsafe { h.invoke(&[Value::I32(1)]) },
        Err(Error::ArgumentCount {
            expected: 2,
            found: 1,
            ..
        })
    ));
    assert!(matches!(
        // SAFETY: the argument kinds are checked before any call, so nothing is called.
        unsafe { h.invoke(&[Value::I32(1), Value::F64(1.0)]) },
        Err(Error::ValueMismatch { .. })
    ));
    assert!(matches!(
        // SAFETY: the argument count is checked before any call, so nothing is called.
        unsafe { h.invoke_raw(&[], std::ptr::null_mut()) },
        Err(Error::ArgumentCount { .. })
    ));
    let fi = st([V::F32, V::I32]);
    let h = link("sysv_fi_sum", &FD::of(V::F64, [&fi]));
    let mut small = [0u8; 7];
    assert!(matches!(
        // SAFETY: the 7-byte segment is refused before the call (the struct needs 8).
        unsafe { h.invoke(&[Value::Segment(MemorySegment::of_slice(&mut small))]) },
        Err(Error::ValueMismatch { .. })
    ));
    assert!(matches!(
        // SAFETY: a scalar for a struct argument is refused before the call.
        unsafe { h.invoke(&[Value::I64(0)]) },
        Err(Error::ValueMismatch { .. })
    ));
    let h = link("sysv_fi_make", &FD::of(&fi, [V::F32, V::I32]));
    assert!(matches!(
        // SAFETY: this call is refused with an error before reaching C (asserted below).
        unsafe { h.invoke(&[Value::F32(1.0), Value::I32(1)]) },
        Err(Error::ValueMismatch { .. })
    ));
    // A register-returned struct goes through the stub's image entry: a rejected value falls
    // back to the checked path and is reported there, naming the argument.
    let arena = Arena::confined();
    // SAFETY: the `F64` for an `int` argument is refused before the call.
    let e = unsafe { h.invoke_into(&arena, &[Value::F32(1.0), Value::F64(1.0)]) };
    assert!(
        matches!(&e, Err(Error::ValueMismatch { position, .. })
            if position == "argument 2 of `sysv_fi_make`"),
        "{e:?}"
    );
    // An `I64` that fits an `int` is converted, through the image entry's retry as well.
    // SAFETY: `sysv_FI sysv_fi_make(float, int)`.
    let ok = seg(unsafe { h.invoke_into(&arena, &[Value::F32(2.5), Value::I64(-9)]) }.unwrap());
    assert_eq!(
        (ok.get::<f32>(0).unwrap(), ok.get::<i32>(4).unwrap()),
        (2.5, -9)
    );
    // SAFETY: `sysv_FI sysv_fi_make(float, int)`; the arena hands out the return buffer.
    let ok = seg(unsafe { h.invoke_into(&arena, &[Value::F32(1.5), Value::I32(7)]) }.unwrap());
    assert_eq!(ok.get::<f32>(0).unwrap(), 1.5);
    assert_eq!(ok.get::<i32>(4).unwrap(), 7);
    // A (safe) allocator handing out a segment shorter than the return layout: an error
    // before the call, never a write past the segment.
    struct Short(gatun::memory::ConfinedArena);
    impl SegmentAllocator for Short {
        fn allocate(&self, _size: usize, align: usize) -> gatun::Result<MemorySegment<'_>> {
            self.0.allocate(4, align)
        }
    }
    let short = Short(Arena::confined());
    // SAFETY: the allocator's short segment is refused before the call writes into it.
    let e = unsafe { h.invoke_into(&short, &[Value::F32(1.5), Value::I32(7)]) };
    assert!(
        matches!(
            e,
            Err(Error::OutOfBounds {
                access_size: 8,
                segment_size: 4,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn raw_path_with_struct_return() {
    let id = st([V::I32, V::F64]);
    let h = link("sysv_id_make", &FD::of(&id, [V::I32, V::F64]));
    let (a, b) = (7i32, 0.125f64);
    let mut out = [0u8; 24];
    // SAFETY: `sysv_ID sysv_id_make(int, double)`: pointers to an `int` and a `double`; `out` has
    // the 16-byte result and more.
    unsafe {
        h.invoke_raw(
            &[(&a as *const i32).cast(), (&b as *const f64).cast()],
            out.as_mut_ptr(),
        )
    }
    .unwrap();
    assert_eq!(i32::from_le_bytes(out[0..4].try_into().unwrap()), 7);
    assert_eq!(f64::from_le_bytes(out[8..16].try_into().unwrap()), 0.125);
    assert!(out[16..].iter().all(|&x| x == 0));
}

/// `bytes` copied to the very end of a read-write page that is followed by a `PROT_NONE` page.
struct GuardedBytes {
    base: *mut u8,
    len: usize,
}

impl GuardedBytes {
    const PAGE: usize = 4096;

    fn new(bytes: &[u8]) -> GuardedBytes {
        assert!(bytes.len() <= Self::PAGE);
        // SAFETY: a fresh anonymous private mapping of two pages; the second is made
        // inaccessible; `bytes` is copied into the end of the first.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                2 * Self::PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            let base = p.cast::<u8>();
            assert_eq!(
                libc::mprotect(base.add(Self::PAGE).cast(), Self::PAGE, libc::PROT_NONE),
                0
            );
            let dst = base.add(Self::PAGE - bytes.len());
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
            GuardedBytes {
                base,
                len: bytes.len(),
            }
        }
    }

    fn segment(&self) -> MemorySegment<'_> {
        // SAFETY: the last `len` bytes of the first page are mapped read-write while `self` lives.
        unsafe { MemorySegment::from_raw_parts(self.base.add(Self::PAGE - self.len), self.len) }
    }
}

impl Drop for GuardedBytes {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), 2 * Self::PAGE) };
    }
}

#[test]
fn sixteen_byte_aligned_struct() {
    let a16 = st([V::I64]).with_byte_alignment(16).unwrap();
    assert_eq!((a16.byte_size(), a16.byte_alignment()), (16, 16));
    let mut args: Vec<MemoryLayout> = vec![V::I64.into(); 7];
    args.push(a16.clone());
    args.push(V::I64.into());
    let h = link("sysv_a16_on_stack", &FD::of(V::I64, args));
    // y at stack+0, 8 bytes of padding, s at stack+16 (16-byte aligned), z at stack+32
    assert!(
        h.plan()
            .to_string()
            .ends_with("stack+0, stack+16+stack+24, stack+32) -> rax"),
        "{}",
        h.plan()
    );
    let mut buf = [0u64; 2];
    buf[0] = 5;
    // SAFETY: plain integers.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), 16) };
    let s = MemorySegment::of_slice(bytes);
    let mut v: Vec<Value> = (1..=7).map(Value::I64).collect();
    v.push(Value::Segment(s));
    v.push(Value::I64(3));
    assert_eq!(
        // SAFETY: `int64_t sysv_a16_on_stack(int64_t x7, sysv_A16, int64_t)`; `s` is an arena
        // segment of the struct.
        i64_of(unsafe { h.invoke(&v) }.unwrap()),
        21 + 700 + 5000 + 30000
    );
    let h = link("sysv_a16_in_reg", &FD::of(V::I64, [a16, V::I64.into()]));
    assert_eq!(h.plan().to_string(), "(rdi, rsi) -> rax");
    assert_eq!(
        // SAFETY: `int64_t sysv_a16_in_reg(sysv_A16, int64_t)`; `s` is an arena segment of the
        // struct.
        i64_of(unsafe { h.invoke(&[Value::Segment(s), Value::I64(4)]) }.unwrap()),
        5004
    );
}
