//! Downcalls into real system libraries: libc, libm, libz (zlib1g).
#![cfg(all(gatun_executes, target_os = "linux"))]

mod common;

use common::*;
use gatun::linker::{
    capture_state_layout, DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption,
    SymbolLookup,
};
use gatun::memory::{Arena, SegmentAllocator};
use gatun::Value;

fn lib(name: &str) -> SymbolLookup {
    // SAFETY: system libraries with sound initialisers.
    unsafe { SymbolLookup::library(name) }.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn link_lib(l: &SymbolLookup, name: &str, d: &FD, o: &[LinkerOption]) -> DowncallHandle {
    Linker::native().downcall(&sym_in(l, name), d, o).unwrap()
}

#[test]
fn libc_strlen_getpid_snprintf() {
    let c = lib("libc.so.6");
    let arena = Arena::confined();
    let strlen = link_lib(&c, "strlen", &FD::of(V::U64, [V::ADDRESS]), &[]);
    let s = arena.allocate_c_string("hello, gatun").unwrap();
    assert_eq!(
        // SAFETY: `size_t strlen(const char *)`; `s` is a NUL-terminated arena string.
        unsafe { strlen.invoke(&[Value::Segment(s)]) }.unwrap(),
        Value::U64(12)
    );

    let getpid = link_lib(&c, "getpid", &FD::of(V::I32, []), &[]);
    assert_eq!(
        // SAFETY: `pid_t getpid(void)` (an `int` on Linux), as described; no arguments.
        unsafe { getpid.invoke(&[]) }.unwrap(),
        Value::I32(std::process::id() as i32)
    );

    let snprintf = link_lib(
        &c,
        "snprintf",
        &FD::of(
            V::I32,
            [
                V::ADDRESS,
                V::U64,
                V::ADDRESS,
                V::I32,
                V::ADDRESS,
                V::F64,
                V::I8,
            ],
        ),
        &[LinkerOption::FirstVariadicArg(3)],
    );
    let buf = arena.allocate(64, 1).unwrap();
    let fmt = arena.allocate_c_string("%d %s %.2f %c").unwrap();
    let word = arena.allocate_c_string("apples").unwrap();
    // SAFETY: `int snprintf(char *, size_t, const char *, ...)`: `buf` has the 64 bytes passed as
    // the size, `fmt` and `word` are NUL-terminated, and the variadic values match the conversions
    // `%d %s %.2f %c`.
    let n = unsafe {
        snprintf.invoke(&[
            Value::Segment(buf),
            Value::U64(64),
            Value::Segment(fmt),
            Value::I32(-42),
            Value::Segment(word),
            Value::F64(1.23456),
            Value::I8(b'x' as i8),
        ])
    }
    .unwrap();
    assert_eq!(buf.get_string(0).unwrap(), "-42 apples 1.23 x");
    assert_eq!(n, Value::I32(17));
}

#[test]
fn libm_pow_frexp() {
    let m = lib("libm.so.6");
    let pow = link_lib(&m, "pow", &FD::of(V::F64, [V::F64, V::F64]), &[]);
    assert_eq!(
        // SAFETY: `double pow(double, double)`, as described; scalars only.
        unsafe { pow.invoke(&[Value::F64(2.0), Value::F64(10.0)]) }.unwrap(),
        Value::F64(1024.0)
    );
    let frexp = link_lib(&m, "frexp", &FD::of(V::F64, [V::F64, V::ADDRESS]), &[]);
    let arena = Arena::confined();
    let exp = arena.allocate(4, 4).unwrap();
    // SAFETY: `double frexp(double, int *)`; `exp` is a 4-byte, 4-aligned arena segment for the
    // `int`.
    let r = unsafe { frexp.invoke(&[Value::F64(48.0), Value::Segment(exp)]) }.unwrap();
    assert_eq!(r, Value::F64(0.75));
    assert_eq!(exp.get::<i32>(0).unwrap(), 6);
}

#[test]
fn libz_crc32_and_round_trip() {
    // SAFETY: zlib has sound initialisers.
    let Ok(z) = (unsafe { SymbolLookup::library("libz.so.1") }) else {
        // a cross build run under qemu may have no zlib of the target
        eprintln!("libz.so.1 of this target is not installed: skipped");
        return;
    };
    let arena = Arena::confined();
    let crc32 = link_lib(
        &z,
        "crc32",
        &FD::of(V::U64, [V::U64, V::ADDRESS, V::U32]),
        &[],
    );
    let data = arena
        .allocate_from_bytes(b"The quick brown fox jumps over the lazy dog")
        .unwrap();
    let r =
        // SAFETY: `uLong crc32(uLong, const Bytef *, uInt)`; `data` holds the 43 bytes passed as
        // the length.
        unsafe { crc32.invoke(&[Value::U64(0), Value::Segment(data), Value::U32(43)]) }.unwrap();
    assert_eq!(r, Value::U64(0x414f_a339));

    const N: usize = 1 << 20;
    let src = arena.allocate(N, 8).unwrap();
    for k in 0..N {
        src.set(k, ((k * 31) ^ (k >> 7)) as u8).unwrap();
    }
    let bound = link_lib(&z, "compressBound", &FD::of(V::U64, [V::U64]), &[]);
    // SAFETY: `uLong compressBound(uLong)`, as described; scalars only.
    let Value::U64(cap) = unsafe { bound.invoke(&[Value::U64(N as u64)]) }.unwrap() else {
        panic!()
    };
    let dst = arena.allocate(cap as usize, 8).unwrap();
    let dst_len = arena.allocate(8, 8).unwrap();
    dst_len.set(0, cap).unwrap();
    let compress2 = link_lib(
        &z,
        "compress2",
        &FD::of(V::I32, [V::ADDRESS, V::ADDRESS, V::ADDRESS, V::U64, V::I32]),
        &[],
    );
    // SAFETY: `int compress2(Bytef *, uLongf *, const Bytef *, uLong, int)`: `dst` has `cap` bytes
    // as `*dst_len` says, `src` has the N bytes passed.
    let rc = unsafe {
        compress2.invoke(&[
            Value::Segment(dst),
            Value::Segment(dst_len),
            Value::Segment(src),
            Value::U64(N as u64),
            Value::I32(6),
        ])
    }
    .unwrap();
    assert_eq!(rc, Value::I32(0));
    let clen = dst_len.get::<u64>(0).unwrap();
    assert!(clen > 0 && clen < cap);
    let back = arena.allocate(N, 8).unwrap();
    let back_len = arena.allocate(8, 8).unwrap();
    back_len.set(0, N as u64).unwrap();
    let uncompress = link_lib(
        &z,
        "uncompress",
        &FD::of(V::I32, [V::ADDRESS, V::ADDRESS, V::ADDRESS, V::U64]),
        &[],
    );
    // SAFETY: `int uncompress(Bytef *, uLongf *, const Bytef *, uLong)`: `back` has N bytes as
    // `*back_len` says, `dst` holds the `clen` compressed bytes.
    let rc = unsafe {
        uncompress.invoke(&[
            Value::Segment(back),
            Value::Segment(back_len),
            Value::Segment(dst),
            Value::U64(clen),
        ])
    }
    .unwrap();
    assert_eq!(rc, Value::I32(0));
    assert_eq!(back_len.get::<u64>(0).unwrap(), N as u64);
    assert_eq!(back.to_vec(), src.to_vec());
}

#[test]
fn strtol_and_open_capture_errno() {
    let c = lib("libc.so.6");
    let arena = Arena::confined();
    let capture = [LinkerOption::CaptureCallState(&["errno"])];
    let strtol = link_lib(
        &c,
        "strtol",
        &FD::of(V::I64, [V::ADDRESS, V::ADDRESS, V::I32]),
        &capture,
    );
    let cap = arena.allocate_layout(&capture_state_layout()).unwrap();
    // strtol(text, NULL, base) with the capture segment preset to `preset`: (result, errno)
    let call = |text: &str, base: i32, preset: i32| {
        let t = arena.allocate_c_string(text).unwrap();
        cap.set(0, preset).unwrap();
        // SAFETY: strtol(const char *, char **, int) with a NUL-terminated string.
        let r = unsafe {
            strtol.invoke(&[
                Value::Segment(cap),
                Value::Segment(t),
                Value::Address(std::ptr::null_mut()),
                Value::I32(base),
            ])
        };
        (r.unwrap(), cap.get::<i32>(0).unwrap())
    };
    assert_eq!(call("ffff", 16, 0), (Value::I64(65535), 0));
    assert_eq!(
        call("999999999999999999999999", 10, 0),
        (Value::I64(i64::MAX), 34)
    );
    // restore before, save after: a success after an error leaves the preset 0 in place
    assert_eq!(call("ffff", 16, 0), (Value::I64(65535), 0));
    // ... and a preset value survives a call that does not touch errno
    assert_eq!(call("12", 10, 99), (Value::I64(12), 99));

    let open = link_lib(
        &c,
        "open",
        &FD::of(V::I32, [V::ADDRESS, V::I32]),
        &[capture[0].clone(), LinkerOption::FirstVariadicArg(2)],
    );
    let path = arena.allocate_c_string("/nonexistent").unwrap();
    // SAFETY: `int open(const char *, int, ...)` with no variadic argument (flags 0 = `O_RDONLY`):
    // `cap` is the capture segment, `path` a NUL-terminated arena string.
    let r = unsafe { open.invoke(&[Value::Segment(cap), Value::Segment(path), Value::I32(0)]) }
        .unwrap();
    assert_eq!(r, Value::I32(-1));
    assert_eq!(cap.get::<i32>(0).unwrap(), 2);
}

#[test]
fn struct_return_errors_report_a_wrong_argument_count_first() {
    use gatun::layout::MemoryLayout;
    use gatun::Error;
    // ldiv_t ldiv(long, long): a struct return, so `invoke` (not `invoke_into`) is wrong too;
    // with a wrong count as well, the count is the error reported, as on every other path.
    let ldiv_t = MemoryLayout::c_struct([V::I64, V::I64]).unwrap();
    let h = link_lib(
        &lib("libc.so.6"),
        "ldiv",
        &FD::of(ldiv_t, [V::I64, V::I64]),
        &[],
    );
    let three = [Value::I64(7), Value::I64(2), Value::I64(0)];
    // SAFETY: the call is rejected before any foreign code runs.
    let err = unsafe { h.invoke(&three) }.unwrap_err();
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
    // SAFETY: as above.
    let err = unsafe { h.invoke(&three[..2]) }.unwrap_err();
    assert!(err.to_string().contains("invoke_into"), "{err}");
}
