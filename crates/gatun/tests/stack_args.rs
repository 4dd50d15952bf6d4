//! Large stack-argument areas against C (tests/native/stack_args.c), up to the 1 MiB limit
//! (`MAX_STACK_BYTES`): structs of 4 KiB and 64 KiB by value as arguments and returns, a 1 MiB
//! struct argument, 250 and 1,000 mixed arguments (integers of every width, floats, doubles,
//! 3-byte structs), 250 24-byte structs, and a variadic call whose area is exactly 1 MiB. Each
//! goes through the compiled stub, the trampoline, the raw path, `Arguments` and, for the
//! structs, the typed path; on the test thread and on a thread with a 64 KiB stack, where a
//! 1 MiB area must end in Rust's stack-overflow abort (checked in a child process). The C
//! functions fold every byte into an FNV-1a hash that the test computes too.
//!
//! | rule | test |
//! |---|---|
//! | structs of 4 KiB and 64 KiB by value, every path | `structs_of_4_and_64_kib_by_value_on_every_path` |
//! | struct returns of 4 KiB and 64 KiB (hidden pointer), every path | `struct_returns_of_4_and_64_kib_on_every_path` |
//! | a 1 MiB struct argument (the whole area on x86-64 SysV) | `a_1_mib_struct_argument` |
//! | 250 and 1,000 mixed arguments, every path | `mixed_arguments_250_and_1000_on_every_path` |
//! | 250 24-byte structs | `structs_of_24_bytes_250_times` |
//! | exactly 1 MiB of stack arguments links and runs; 8 bytes more is refused | `exactly_1_mib_of_stack_arguments_and_not_a_byte_more` |
//! | the stub stays small for a 64 KiB struct | `the_stub_of_a_64_kib_struct_is_small` |
//! | a 64 KiB thread: 4 KiB and 1,000-argument calls work | `a_thread_with_a_64_kib_stack_makes_the_smaller_calls` |
//! | a 64 KiB thread: a 1 MiB area aborts at the guard page | `a_1_mib_area_on_a_64_kib_thread_stops_at_the_guard_page` |
//! | upcalls receive 4 KiB and 64 KiB structs | `upcalls_receive_4_and_64_kib_structs` |
// Linux (x86-64 SysV, AAPCS64 under qemu) and Windows on x86-64 (Microsoft x64, under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use common::*;
use gatun::layout::MemoryLayout;
use gatun::linker::{
    CType, DowncallHandle, FunctionDescriptor as FD, LinkerOption, MAX_STACK_BYTES,
};
use gatun::memory::{Arena, MemorySegment};
use gatun::{Arguments, Linker, Value};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x100_0000_01b3;

/// One 64-bit word into the hash (`mix` in stack_args.c).
fn mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(FNV_PRIME)
}

fn hash_bytes(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, &b| mix(h, u64::from(b)))
}

/// The bytes of a struct of `n` bytes made from `seed` (`stack_fill` in stack_args.c).
fn fill(seed: u32, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (seed as usize).wrapping_add(i * 131).wrapping_add(i >> 9) as u8)
        .collect()
}

/// What `stack_take4k` / `stack_take64k` return.
fn take_hash(before: i32, bytes: &[u8], after: i64) -> u64 {
    mix(
        hash_bytes(mix(FNV_OFFSET, before as i64 as u64), bytes),
        after as u64,
    )
}

/// The handle on both executors: the compiled stub and the trampoline.
fn executors(h: &DowncallHandle) -> [(&'static str, DowncallHandle); 2] {
    assert!(h.uses_compiled_stub(), "{h:?}: no compiled stub");
    [("stub", h.clone()), ("trampoline", h.interpreted())]
}

/// The result bits of an integer `Value`.
fn bits(v: Value<'_>) -> u64 {
    match v {
        Value::I64(x) => x as u64,
        Value::U64(x) => x,
        other => panic!("not a 64-bit integer: {other:?}"),
    }
}

/// A pointer to `x`'s bytes, for `invoke_raw`.
fn ptr<T>(x: &T) -> *const u8 {
    (x as *const T).cast()
}

/// Where `invoke_raw` writes a 64-bit result.
fn out_ptr(x: &mut u64) -> *mut u8 {
    (x as *mut u64).cast()
}

/// `uint64_t f(int32_t, struct { unsigned char b[n]; }, int64_t)`.
fn take_descriptor(n: usize) -> FD {
    FD::of(V::I64, [V::I32.into(), bytes_struct(n), V::I64.into()])
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Big<const N: usize>([u8; N]);

// SAFETY: `#[repr(C)] struct { unsigned char b[N]; }`: N bytes, alignment 1, every bit pattern
// valid.
unsafe impl<const N: usize> CType for Big<N> {
    fn layout() -> MemoryLayout {
        bytes_struct(N)
    }
}

/// Calls `f(before, bytes, after)` (a `take_descriptor(bytes.len())` function) on every path
/// and checks each result against the hash.
fn check_take(name: &str, bytes: &mut [u8]) {
    let n = bytes.len();
    let h = link(name, &take_descriptor(n));
    let (before, after) = (-123_456i32, 0x1122_3344_5566_7788i64);
    let want = take_hash(before, bytes, after);
    let seg = MemorySegment::of_slice(bytes);
    for (path, h) in executors(&h) {
        let args = [Value::I32(before), Value::Segment(seg), Value::I64(after)];
        // SAFETY: the C type is the descriptor's; the segment holds the struct's n bytes.
        let got = unsafe { h.invoke(&args) }.unwrap();
        assert_eq!(bits(got), want, "{name} {path} invoke");
        let mut out = 0u64;
        let raw = [ptr(&before), seg.as_ptr().cast_const(), ptr(&after)];
        // SAFETY: as above; `out` takes the 8-byte result.
        unsafe { h.invoke_raw(&raw, out_ptr(&mut out)) }.unwrap();
        assert_eq!(out, want, "{name} {path} invoke_raw");
        let mut a = Arguments::<3>::new();
        a.i32(before).segment(seg).i64(after);
        // SAFETY: as above.
        let got = unsafe { h.invoke_arguments(&a) }.unwrap();
        assert_eq!(bits(got), want, "{name} {path} invoke_arguments");
    }
}

#[test]
fn structs_of_4_and_64_kib_by_value_on_every_path() {
    check_take("stack_take4k", &mut fill(3, 4096));
    check_take("stack_take64k", &mut fill(5, 65536));
    // The typed path (the target called as an `extern "C" fn` by Rust's own lowering).
    let t4 = link("stack_take4k", &take_descriptor(4096))
        .typed::<(i32, Big<4096>, i64), i64>()
        .unwrap();
    let b4 = Big::<4096>(fill(9, 4096).try_into().unwrap());
    // SAFETY: `uint64_t stack_take4k(int32_t, stack_big4k, int64_t)`.
    let got = unsafe { t4.call((7, b4, -8)) };
    assert_eq!(got as u64, take_hash(7, &b4.0, -8));
    // (Not on PPC64: LLVM's PPC64 backend spends many minutes at opt-level 1 on Rust passing a
    // 64 KiB struct by value in the parameter save area; the other paths above pass it there.)
    #[cfg(not(target_arch = "powerpc64"))]
    {
        let t64 = link("stack_take64k", &take_descriptor(65536))
            .typed::<(i32, Big<65536>, i64), i64>()
            .unwrap();
        let b64 = Box::new(Big::<65536>(fill(10, 65536).try_into().unwrap()));
        // SAFETY: as above, with the 64 KiB struct.
        let got = unsafe { t64.call((7, *b64, -8)) };
        assert_eq!(got as u64, take_hash(7, &b64.0, -8));
    }
}

/// Calls `make(seed)` returning an `n`-byte struct on every path.
fn check_make(name: &str, n: usize) {
    let h = link(name, &FD::of(bytes_struct(n), [V::U32]));
    let arena = Arena::confined();
    for (k, (path, h)) in executors(&h).into_iter().enumerate() {
        let seed = 40 + k as u32;
        // SAFETY: `stack_bigN stack_makeN(uint32_t)`; the result goes to the arena.
        let got = unsafe { h.invoke_into(&arena, &[Value::U32(seed)]) }.unwrap();
        let seg = got.as_segment().expect("a struct");
        assert_eq!(seg.to_vec(), fill(seed, n), "{name} {path} invoke_into");
        let mut out = vec![0u8; n];
        // SAFETY: as above; `out` has the struct's n bytes (alignment 1).
        unsafe { h.invoke_raw(&[ptr(&(seed + 1))], out.as_mut_ptr()) }.unwrap();
        assert_eq!(out, fill(seed + 1, n), "{name} {path} invoke_raw");
        let mut a = Arguments::<1>::new();
        a.u32(seed + 2);
        // SAFETY: as above.
        let got = unsafe { h.invoke_arguments_into(&arena, &a) }.unwrap();
        let seg = got.as_segment().expect("a struct");
        assert_eq!(seg.to_vec(), fill(seed + 2, n), "{name} {path} Arguments");
    }
}

#[test]
fn struct_returns_of_4_and_64_kib_on_every_path() {
    check_make("stack_make4k", 4096);
    check_make("stack_make64k", 65536);
    let t = link("stack_make64k", &FD::of(bytes_struct(65536), [V::U32]))
        .typed::<(u32,), Big<65536>>()
        .unwrap();
    // SAFETY: `stack_big64k stack_make64k(uint32_t)`.
    let got = Box::new(unsafe { t.call((77,)) });
    assert_eq!(got.0.to_vec(), fill(77, 65536));
    // Argument and return of 64 KiB in one call: the bytes reversed, each xor the key.
    let flip = link(
        "stack_flip64k",
        &FD::of(bytes_struct(65536), [bytes_struct(65536), V::U8.into()]),
    );
    let mut src = fill(12, 65536);
    let want: Vec<u8> = src.iter().rev().map(|b| b ^ 0x5A).collect();
    let arena = Arena::confined();
    let seg = MemorySegment::of_slice(&mut src);
    for (path, h) in executors(&flip) {
        // SAFETY: `stack_big64k stack_flip64k(stack_big64k, unsigned char)`.
        let got = unsafe { h.invoke_into(&arena, &[Value::Segment(seg), Value::U8(0x5A)]) };
        let got = got.unwrap().as_segment().expect("a struct").to_vec();
        assert!(got == want, "{path}: flipped bytes differ");
    }
}

#[test]
fn a_1_mib_struct_argument() {
    // x86-64 SysV: MEMORY class, the whole 1 MiB area (the limit) filled by `rep movsq` in
    // the stub and by 131,072 pushes in the trampoline. AArch64 and Win64: a pointer to a
    // 1 MiB copy.
    let n = 1 << 20;
    let h = link("stack_take1m", &FD::of(V::I64, [bytes_struct(n)]));
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        assert_eq!(h.plan().stack_bytes() as usize, MAX_STACK_BYTES);
    }
    let mut bytes = fill(21, n);
    let want = hash_bytes(FNV_OFFSET, &bytes);
    let seg = MemorySegment::of_slice(&mut bytes);
    for (path, h) in executors(&h) {
        // SAFETY: `uint64_t stack_take1m(stack_big1m)`; the segment holds its 1 MiB.
        let got = unsafe { h.invoke(&[Value::Segment(seg)]) }.unwrap();
        assert_eq!(bits(got), want, "{path} invoke");
        let mut out = 0u64;
        // SAFETY: as above.
        unsafe { h.invoke_raw(&[seg.as_ptr().cast_const()], out_ptr(&mut out)) }.unwrap();
        assert_eq!(out, want, "{path} invoke_raw");
        let mut a = Arguments::<1>::new();
        a.segment(seg);
        // SAFETY: as above.
        let got = unsafe { h.invoke_arguments(&a) }.unwrap();
        assert_eq!(bits(got), want, "{path} invoke_arguments");
    }
}

/// One mixed argument: its layout, `Value`, raw bytes (for `invoke_raw`) and hash word.
struct Mixed {
    layouts: Vec<MemoryLayout>,
    /// The scalars' bytes (8 per argument, the value's in the first ones as it lies in memory:
    /// [`in_memory`]) and the 3-byte structs' bytes.
    scalars: Vec<[u8; 8]>,
    structs: Vec<[u8; 3]>,
    /// Per argument: the kind (0..10) and its index into `scalars` or `structs`.
    kinds: Vec<(usize, usize)>,
    want: u64,
}

/// `n` mixed arguments (groups of ten: i8, u8, i16, u16, i32, u32, i64, float, double,
/// `struct { unsigned char a, b, c; }`) from a generator, with the hash the C side returns.
fn mixed(n: usize) -> Mixed {
    let s3 = st([V::U8, V::U8, V::U8]);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut m = Mixed {
        layouts: Vec::new(),
        scalars: Vec::new(),
        structs: Vec::new(),
        kinds: Vec::new(),
        want: FNV_OFFSET,
    };
    for i in 0..n {
        let r = next();
        let k = i % 10;
        // The word the C side mixes in, and the scalar's bytes.
        let (layout, word, raw): (MemoryLayout, u64, u64) = match k {
            0 => (V::I8.into(), r as i8 as i64 as u64, r as u8 as u64),
            1 => (V::U8.into(), r as u8 as u64, r as u8 as u64),
            2 => (V::I16.into(), r as i16 as i64 as u64, r as u16 as u64),
            3 => (V::U16.into(), r as u16 as u64, r as u16 as u64),
            4 => (V::I32.into(), r as i32 as i64 as u64, r as u32 as u64),
            5 => (V::U32.into(), r as u32 as u64, r as u32 as u64),
            6 => (V::I64.into(), r, r),
            7 => {
                let f = (r as i32) as f32 / 7.0;
                (V::F32.into(), f.to_bits() as u64, f.to_bits() as u64)
            }
            8 => {
                let d = (r as i64) as f64 / 3.0;
                (V::F64.into(), d.to_bits(), d.to_bits())
            }
            _ => {
                let b = [r as u8, (r >> 8) as u8, (r >> 16) as u8];
                m.kinds.push((k, m.structs.len()));
                m.structs.push(b);
                m.layouts.push(s3.clone());
                m.want = mix(m.want, r & 0xFF_FFFF);
                continue;
            }
        };
        m.kinds.push((k, m.scalars.len()));
        m.scalars.push(in_memory(raw, layout.byte_size()));
        m.layouts.push(layout);
        m.want = mix(m.want, word);
    }
    m
}

/// A scalar of `width` bytes whose value is `raw`, as it lies in memory: its bytes first (the
/// low ones first on a little-endian target, the high ones on a big-endian one), then zeros.
fn in_memory(raw: u64, width: usize) -> [u8; 8] {
    if cfg!(target_endian = "big") {
        (raw << (64 - 8 * width)).to_be_bytes()
    } else {
        raw.to_le_bytes()
    }
}

/// The value of the `width`-byte scalar [`in_memory`] laid out.
fn from_memory(b: [u8; 8], width: usize) -> u64 {
    if cfg!(target_endian = "big") {
        u64::from_be_bytes(b) >> (64 - 8 * width)
    } else {
        u64::from_le_bytes(b)
    }
}

impl Mixed {
    /// The arguments as `Value`s (struct segments over `structs`).
    fn values<'a>(&self, structs: &'a mut [[u8; 3]]) -> Vec<Value<'a>> {
        let mut segs: Vec<Option<MemorySegment<'a>>> = structs
            .iter_mut()
            .map(|b| Some(MemorySegment::of_slice(b)))
            .collect();
        self.kinds
            .iter()
            .zip(&self.layouts)
            .map(|(&(k, j), layout)| {
                let b = self.scalars.get(j).copied().unwrap_or_default();
                let r = from_memory(b, layout.byte_size().min(8));
                match k {
                    0 => Value::I8(r as i8),
                    1 => Value::U8(r as u8),
                    2 => Value::I16(r as i16),
                    3 => Value::U16(r as u16),
                    4 => Value::I32(r as i32),
                    5 => Value::U32(r as u32),
                    6 => Value::I64(r as i64),
                    7 => Value::F32(f32::from_bits(r as u32)),
                    8 => Value::F64(f64::from_bits(r)),
                    _ => Value::Segment(segs[j].take().unwrap()),
                }
            })
            .collect()
    }

    /// Pointers to each argument's bytes, for `invoke_raw`.
    fn pointers(&self) -> Vec<*const u8> {
        self.kinds
            .iter()
            .map(|&(k, j)| match k {
                9 => self.structs[j].as_ptr(),
                _ => self.scalars[j].as_ptr(),
            })
            .collect()
    }
}

/// Calls the `n`-argument mixed function on every path (`arguments`: through `Arguments`
/// too, which holds at most 1,024).
fn check_mixed(name: &str, n: usize, arguments: bool) {
    let m = mixed(n);
    let h = link(name, &FD::of(V::I64, m.layouts.clone()));
    let mut structs = m.structs.clone();
    let values = m.values(&mut structs);
    for (path, h) in executors(&h) {
        // SAFETY: the C type is the descriptor's.
        let got = unsafe { h.invoke(&values) }.unwrap();
        assert_eq!(bits(got), m.want, "{name} {path} invoke");
        let mut out = 0u64;
        // SAFETY: as above; every pointer covers its argument's bytes.
        unsafe { h.invoke_raw(&m.pointers(), out_ptr(&mut out)) }.unwrap();
        assert_eq!(out, m.want, "{name} {path} invoke_raw");
        if arguments {
            let mut a = Box::new(Arguments::<1024>::new());
            for v in &values {
                a.value(*v);
            }
            // SAFETY: as above.
            let got = unsafe { h.invoke_arguments(&*a) }.unwrap();
            assert_eq!(bits(got), m.want, "{name} {path} invoke_arguments");
        }
    }
}

#[test]
fn mixed_arguments_250_and_1000_on_every_path() {
    check_mixed("stack_mixed250", 250, true);
    check_mixed("stack_mixed1000", 1000, true);
    // 1,000 arguments need more than the 2048 bytes the trampoline keeps on the Rust stack.
    let m = mixed(1000);
    let h = link("stack_mixed1000", &FD::of(V::I64, m.layouts));
    assert!(h.plan().stack_bytes() > 2048, "{}", h.plan().stack_bytes());
}

/// 250 `struct { int64_t a, b, c; }` and the hash `stack_l3x250` returns.
fn l3x250() -> (FD, Vec<[i64; 3]>, u64) {
    let l3 = st([V::I64, V::I64, V::I64]);
    let vals: Vec<[i64; 3]> = (0..250i64)
        .map(|i| [i * 3 - 7, -(i * 1_000_003), i << 40])
        .collect();
    let want = vals
        .iter()
        .flatten()
        .fold(FNV_OFFSET, |h, &x| mix(h, x as u64));
    (FD::of(V::I64, vec![l3; 250]), vals, want)
}

#[test]
fn structs_of_24_bytes_250_times() {
    let (d, mut vals, want) = l3x250();
    let h = link("stack_l3x250", &d);
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        assert_eq!(h.plan().stack_bytes(), 250 * 24); // MEMORY class: all on the stack
    }
    let pointers: Vec<*const u8> = vals.iter().map(ptr).collect();
    let values: Vec<Value<'_>> = vals
        .iter_mut()
        .map(|v| {
            // SAFETY: the 24 bytes of three i64s, borrowed for the segment's lifetime.
            let bytes = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), 24) };
            Value::Segment(MemorySegment::of_slice(bytes))
        })
        .collect();
    for (path, h) in executors(&h) {
        // SAFETY: the C type is the descriptor's; each segment holds one struct.
        assert_eq!(bits(unsafe { h.invoke(&values) }.unwrap()), want, "{path}");
        let mut out = 0u64;
        // SAFETY: as above (the pointers were taken before the segments borrowed the values
        // and read the same bytes).
        unsafe { h.invoke_raw(&pointers, out_ptr(&mut out)) }.unwrap();
        assert_eq!(out, want, "{path} invoke_raw");
    }
}

/// Argument registers a variadic `int64_t` can take before the stack: x86-64 SysV six
/// (rdi..r9), AAPCS64 eight (x0..x7), LP64D eight (a0..a7), s390x five (r2..r6); Win64 none
/// beyond the four slots, which count towards its stack area (the shadow space), and ELFv2
/// none: its parameter save area counts the doublewords of r3..r10 too.
const VARIADIC_REGISTERS: usize = if cfg!(any(windows, target_arch = "powerpc64")) {
    0
} else if cfg!(any(target_arch = "aarch64", target_arch = "riscv64")) {
    8
} else if cfg!(target_arch = "s390x") {
    5
} else {
    6
};

/// `stack_sum_va(n, ...)` with `n` 8-byte variadic arguments: the descriptor, the values and
/// the hash the C side returns.
fn sum_va(n: usize) -> (FD, Vec<Value<'static>>, u64) {
    let mut d = vec![MemoryLayout::from(V::I32)];
    d.extend(std::iter::repeat_n(MemoryLayout::from(V::I64), n));
    let mut values = vec![Value::I32(n as i32)];
    let mut want = FNV_OFFSET;
    for i in 0..n as i64 {
        let x = i.wrapping_mul(0x5851_F42D_4C95_7F2D) ^ -i;
        values.push(Value::I64(x));
        want = mix(want, x as u64);
    }
    (FD::of(V::I64, d), values, want)
}

/// The number of variadic arguments whose stack area is exactly `MAX_STACK_BYTES`.
fn variadic_for_1_mib() -> usize {
    MAX_STACK_BYTES / 8 - 1 + VARIADIC_REGISTERS
}

fn link_sum_va(d: &FD) -> gatun::Result<DowncallHandle> {
    Linker::native().downcall(
        &sym("stack_sum_va"),
        d,
        &[LinkerOption::FirstVariadicArg(1)],
    )
}

#[test]
fn exactly_1_mib_of_stack_arguments_and_not_a_byte_more() {
    let n = variadic_for_1_mib();
    let (d, values, want) = sum_va(n);
    let h = link_sum_va(&d).unwrap();
    assert_eq!(h.plan().stack_bytes() as usize, MAX_STACK_BYTES);
    for (path, h) in executors(&h) {
        // SAFETY: `uint64_t stack_sum_va(int32_t n, ...)` with n int64_t arguments.
        assert_eq!(bits(unsafe { h.invoke(&values) }.unwrap()), want, "{path}");
        let words: Vec<u64> = values[1..].iter().map(|v| bits(*v)).collect();
        let count = n as i32;
        let mut raw = vec![ptr(&count)];
        raw.extend(words.iter().map(ptr));
        let mut out = 0u64;
        // SAFETY: as above.
        unsafe { h.invoke_raw(&raw, out_ptr(&mut out)) }.unwrap();
        assert_eq!(out, want, "{path} invoke_raw");
    }
    // The last argument of another integer kind: the stub's checks reject it (AArch64: from
    // the last block's own rejection path) and the call is converted and made on the
    // trampoline path, with the same result; one of no integer kind is an error.
    let mut other = values.clone();
    let last = other.len() - 1;
    other[last] = Value::I32(-5);
    let want_other = values[1..last]
        .iter()
        .fold(FNV_OFFSET, |h, v| mix(h, bits(*v)));
    let want_other = mix(want_other, -5i64 as u64);
    // SAFETY: as above.
    assert_eq!(bits(unsafe { h.invoke(&other) }.unwrap()), want_other);
    other[last] = Value::F64(1.0);
    // SAFETY: nothing is called: the argument's kind is wrong.
    let e = unsafe { h.invoke(&other) }.unwrap_err().to_string();
    assert!(e.contains(&format!("argument {}", last + 1)), "{e}");
    // One argument more: refused at link time, the bytes needed first.
    let (d, _, _) = sum_va(n + 1);
    let e = link_sum_va(&d).unwrap_err().to_string();
    let what = if cfg!(windows) {
        "stack area (32 of shadow space and 8 per argument past the fourth)"
    } else if cfg!(target_arch = "powerpc64") {
        "parameter save area"
    } else {
        "stack arguments"
    };
    assert!(
        e.starts_with(&format!(
            "invalid function descriptor: the call needs 1048584 bytes of {what}; gatun's \
             executor supports at most 1048576"
        )),
        "{e}"
    );
}

#[test]
fn the_stub_of_a_64_kib_struct_is_small() {
    // 8,192 eightbytes (x86-64 SysV: one `rep movsq`; AArch64, Win64: a pointer to a copy):
    // the stub's size does not grow with the struct.
    let small = Linker::native()
        .stub_code(&take_descriptor(4096), &[])
        .unwrap();
    let big = Linker::native()
        .stub_code(&take_descriptor(65536), &[])
        .unwrap();
    eprintln!(
        "stub bytes: 4 KiB struct {}, 64 KiB struct {}",
        small.len(),
        big.len()
    );
    // (The values entry's length check of 65,536 takes one instruction more than 4,096's.)
    assert!(
        big.len() <= small.len() + 16,
        "{} and {} bytes",
        small.len(),
        big.len()
    );
    assert!(big.len() < 512, "{} bytes", big.len());
}

/// Runs `f` on a thread with a 64 KiB stack.
fn on_small_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn a_thread_with_a_64_kib_stack_makes_the_smaller_calls() {
    let take = link("stack_take4k", &take_descriptor(4096));
    let m = mixed(1000);
    let mixed_h = link("stack_mixed1000", &FD::of(V::I64, m.layouts.clone()));
    let (d, l3_vals, l3_want) = l3x250();
    let l3 = link("stack_l3x250", &d);
    on_small_thread(move || {
        let mut bytes = fill(31, 4096);
        let want = take_hash(1, &bytes, 2);
        let seg = MemorySegment::of_slice(&mut bytes);
        let mut structs = m.structs.clone();
        let values = m.values(&mut structs);
        let l3_ptrs: Vec<*const u8> = l3_vals.iter().map(ptr).collect();
        for ((path, take), ((_, mixed_h), (_, l3))) in executors(&take)
            .into_iter()
            .zip(executors(&mixed_h).into_iter().zip(executors(&l3)))
        {
            let args = [Value::I32(1), Value::Segment(seg), Value::I64(2)];
            // SAFETY: the C types are the descriptors'.
            assert_eq!(bits(unsafe { take.invoke(&args) }.unwrap()), want, "{path}");
            // SAFETY: as above.
            let got = unsafe { mixed_h.invoke(&values) }.unwrap();
            assert_eq!(bits(got), m.want, "{path}");
            let mut out = 0u64;
            // SAFETY: as above.
            unsafe { l3.invoke_raw(&l3_ptrs, out_ptr(&mut out)) }.unwrap();
            assert_eq!(out, l3_want, "{path}");
        }
    });
}

/// The child half of `a_1_mib_area_on_a_64_kib_thread_stops_at_the_guard_page`: with
/// `GATUN_STACK_CHILD` set to `stub` or `trampoline`, calls `stack_sum_va` with a 1 MiB stack
/// area on a 64 KiB thread, which must never return. Without the variable it does nothing
/// (ignored: the parent runs it with `--ignored`).
#[test]
#[ignore = "the child process of a_1_mib_area_on_a_64_kib_thread_stops_at_the_guard_page"]
fn stack_overflow_child() {
    let Ok(mode) = std::env::var("GATUN_STACK_CHILD") else {
        return;
    };
    let n = variadic_for_1_mib();
    let h = link_sum_va(&sum_va(n).0).unwrap();
    let h = if mode == "trampoline" {
        h.interpreted()
    } else {
        h
    };
    let r = on_small_thread(move || {
        // The values are on the heap.
        let values = sum_va(n).1;
        // SAFETY: `uint64_t stack_sum_va(int32_t n, ...)`; the thread's stack is too small
        // for the call, which must stop at its guard page.
        unsafe { h.invoke(&values) }.map(bits)
    });
    eprintln!("the call returned {r:?}");
}

/// Whether this Windows process runs under Wine (its ntdll exports `wine_get_version`).
#[cfg(windows)]
fn under_wine() -> bool {
    // SAFETY: ntdll is loaded in every process; loading it again runs no initialiser.
    let ntdll = unsafe { gatun::linker::SymbolLookup::library("ntdll.dll") };
    ntdll.is_ok_and(|l| l.find("wine_get_version").is_ok())
}

#[test]
fn a_1_mib_area_on_a_64_kib_thread_stops_at_the_guard_page() {
    for mode in ["stub", "trampoline"] {
        let exe = std::env::current_exe().unwrap();
        let out = gatun_test_natives::target_command(exe)
            .args([
                "--exact",
                "--ignored",
                "stack_overflow_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("GATUN_STACK_CHILD", mode)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{mode}: the child succeeded\n{stderr}"
        );
        // Rust's guard-page handler names the thread and aborts: SIGABRT on Unix.
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                out.status.signal(),
                Some(6),
                "{mode}: {}\n{stderr}",
                out.status
            );
            assert!(
                stderr.contains("has overflowed its stack"),
                "{mode}: {stderr}"
            );
        }
        // Windows: Rust's handler names the thread, and the process ends with
        // STATUS_STACK_OVERFLOW. Wine ends some such processes with STATUS_DEBUGGER_INACTIVE
        // instead (its unhandled-exception path tries to start a debugger; seen for the
        // trampoline's fault, whose frame has SEH unwind data), so under Wine that code is
        // accepted too; the fault itself is the guard page's either way (stderr).
        #[cfg(windows)]
        {
            assert!(
                stderr.contains("has overflowed its stack"),
                "{mode}: {stderr}"
            );
            let code = out.status.code().map(|c| c as u32);
            let wine = code == Some(0xC000_0354) && under_wine();
            assert!(
                code == Some(0xC000_00FD) || wine,
                "{mode}: {}\n{stderr}",
                out.status
            );
        }
    }
}

#[test]
fn upcalls_receive_4_and_64_kib_structs() {
    let arena = Arena::confined();
    for (n, caller) in [(4096usize, "stack_call_cb4k"), (65536, "stack_call_cb64k")] {
        let stub = Linker::native()
            .upcall_stub(
                &take_descriptor(n),
                move |args| {
                    let s = args.segment(1)?;
                    assert_eq!(s.byte_size(), n);
                    let h = take_hash(args.get::<i32>(0)?, &s.to_vec(), args.get::<i64>(2)?);
                    Ok(Value::I64(h as i64))
                },
                &arena,
            )
            .unwrap();
        let call = link(caller, &FD::of(V::I64, [V::ADDRESS, V::U32]));
        let want = take_hash(-7, &fill(19, n), 0x0102_0304_0506_0708);
        for (path, call) in executors(&call) {
            // SAFETY: `uint64_t stack_call_cbN(stack_cbN, uint32_t)` with a live stub of the
            // callback's type.
            let got = unsafe { call.invoke(&[stub.as_value(), Value::U32(19)]) }.unwrap();
            assert_eq!(bits(got), want, "{caller} {path}");
        }
    }
}
