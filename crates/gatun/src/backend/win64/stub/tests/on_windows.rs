//! The stubs placed and called on x86-64 Windows (under Wine in CI), with Rust `extern "C"`
//! targets (the Microsoft x64 convention on this target): both entries, every body, the
//! rejection protocol, capture, and stack walks through a framed stub.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::*;
use crate::memory::MemorySegment;

/// A placed stub of `d` (cached).
fn stub(d: &FD, fv: Option<usize>, capture: bool) -> Arc<Stub> {
    stub_for(&plan_of(d, fv), &checks_of(d), capture).unwrap()
}

/// Calls the raw entry with argument pointers `args`.
///
/// # Safety
/// As the raw entry: the arguments match `s`'s plan and `target`'s signature.
unsafe fn raw(
    s: &Stub,
    args: &[*const u8],
    ret: *mut u8,
    capture: *mut i32,
    target: *const c_void,
    refs: &[*mut u8],
) -> u64 {
    // SAFETY: forwarded to the caller.
    unsafe {
        (s.raw)(
            args.as_ptr(),
            ret,
            capture,
            target,
            refs.as_ptr().cast(),
            crate::os::thread_errno(),
        )
    }
}

/// Calls the values entry: `None` if it rejected the arguments.
///
/// # Safety
/// As [`raw`], with `Value`s.
unsafe fn values(
    s: &Stub,
    vals: &[Value<'_>],
    ret: *mut u8,
    capture: *mut i32,
    target: *const c_void,
    refs: &[*mut u8],
) -> Option<u64> {
    let mut rejected = 0u8;
    // SAFETY: forwarded to the caller; `rejected` is writable.
    let r = unsafe {
        (s.values)(
            vals.as_ptr(),
            ret,
            capture,
            target,
            refs.as_ptr().cast(),
            crate::os::thread_errno(),
            &mut rejected,
        )
    };
    (rejected == 0).then_some(r)
}

fn p<T>(v: &T) -> *const u8 {
    (v as *const T).cast()
}

static NOOPS: AtomicUsize = AtomicUsize::new(0);
extern "C" fn noop() {
    NOOPS.fetch_add(1, Ordering::SeqCst);
}

extern "C" fn neg(x: i32) -> i32 {
    -x
}

extern "C" fn add6(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64) -> i64 {
    a + 10 * b + 100 * c + 1000 * d + 10_000 * e + 100_000 * f
}

#[allow(clippy::too_many_arguments)]
extern "C" fn mixed(a: i8, b: f32, c: u16, d: f64, e: bool, f: f32, g: i64, h: f64) -> f64 {
    a as f64
        + b as f64 * 10.0
        + c as f64 * 100.0
        + d * 1000.0
        + e as u8 as f64 * 1e4
        + f as f64 * 1e5
        + g as f64 * 1e6
        + h * 1e7
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct S16 {
    a: i64,
    b: i64,
}

extern "C" fn make16(a: i64, b: i64) -> S16 {
    S16 { a: a * 2, b: b * 3 }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct P2 {
    x: f32,
    y: f32,
}

extern "C" fn swap(p: P2) -> P2 {
    P2 { x: p.y, y: p.x }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct S12 {
    a: i32,
    b: i32,
    c: i32,
}

/// Takes by-reference structs in rcx, rdx and on the stack; writes the copies.
extern "C" fn refs3(mut x: S12, mut y: S12, m: i32, n: i32, mut z: S12) -> i32 {
    let r = x.a + 10 * y.b + 100 * z.c + 1000 * m + 10_000 * n;
    x.a = -1;
    y.a = -1;
    z.a = -1;
    std::hint::black_box((x, y, z));
    r
}

fn s12() -> MemoryLayout {
    MemoryLayout::c_struct([V::I32, V::I32, V::I32]).unwrap()
}

#[test]
fn noop_and_int_tail_stubs_call_through_both_entries() {
    let s = stub(&FD::of_void(Vec::<MemoryLayout>::new()), None, false);
    let before = NOOPS.load(Ordering::SeqCst);
    // SAFETY: `noop` is `void(void)`.
    unsafe {
        raw(
            &s,
            &[],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            noop as _,
            &[],
        );
        let v = values(
            &s,
            &[],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            noop as _,
            &[],
        );
        assert!(v.is_some(), "no argument to reject");
        assert!(values(
            &s,
            &[],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            noop as _,
            &[]
        )
        .is_some());
    }
    assert_eq!(NOOPS.load(Ordering::SeqCst), before + 3);
    let s = stub(&FD::of(V::I32, [V::I32]), None, false);
    let x = 41i32;
    // SAFETY: `neg` is `int(int)`.
    unsafe {
        assert_eq!(
            raw(
                &s,
                &[p(&x)],
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                neg as _,
                &[]
            ) as i32,
            -41
        );
        let v = values(
            &s,
            &[Value::I32(7)],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            neg as _,
            &[],
        );
        assert_eq!(v.map(|r| r as i32), Some(-7));
    }
}

#[test]
fn the_values_entry_rejects_a_mismatch_without_calling() {
    let s = stub(&FD::of_void([V::I64]), None, false);
    let before = NOOPS.load(Ordering::SeqCst);
    // SAFETY: the stub rejects the I32 before calling anything.
    let r = unsafe {
        values(
            &s,
            &[Value::I32(1)],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            noop as _,
            &[],
        )
    };
    assert_eq!(r, None);
    let s = stub(&FD::of(V::I32, [s12()]), None, false);
    let mut short = [0u8; 8];
    let seg = MemorySegment::of_slice(&mut short);
    // SAFETY: as above: the 8-byte segment is shorter than the 12-byte struct.
    let r = unsafe {
        values(
            &s,
            &[Value::Segment(seg)],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            noop as _,
            &[],
        )
    };
    assert_eq!(r, None);
    assert_eq!(NOOPS.load(Ordering::SeqCst), before);
}

#[test]
fn stack_arguments_mixed_kinds_and_a_float_result() {
    let s = stub(&FD::of(V::I64, [V::I64; 6]), None, false);
    let a: [i64; 6] = [1, 2, 3, 4, 5, 6];
    let ptrs: Vec<*const u8> = a.iter().map(p).collect();
    // SAFETY: `add6` matches the descriptor.
    unsafe {
        assert_eq!(
            raw(
                &s,
                &ptrs,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                add6 as _,
                &[]
            ),
            654_321
        );
        let vals: Vec<Value<'_>> = a.iter().map(|&x| Value::I64(x)).collect();
        assert_eq!(
            values(
                &s,
                &vals,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                add6 as _,
                &[]
            ),
            Some(654_321)
        );
    }
    let d = FD::of(
        V::F64,
        [
            V::I8,
            V::F32,
            V::U16,
            V::F64,
            V::BOOL,
            V::F32,
            V::I64,
            V::F64,
        ],
    );
    let s = stub(&d, None, false);
    let want = mixed(-3, 1.5, 7, 2.25, true, 0.5, 9, 1.0);
    let (a, b, c, dd, e, f, g, h) = (-3i8, 1.5f32, 7u16, 2.25f64, 1u8, 0.5f32, 9i64, 1.0f64);
    let ptrs = [p(&a), p(&b), p(&c), p(&dd), p(&e), p(&f), p(&g), p(&h)];
    let vals = [
        Value::I8(a),
        Value::F32(b),
        Value::U16(c),
        Value::F64(dd),
        Value::Bool(true),
        Value::F32(f),
        Value::I64(g),
        Value::F64(h),
    ];
    // SAFETY: `mixed` matches the descriptor.
    unsafe {
        let r = raw(
            &s,
            &ptrs,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            mixed as _,
            &[],
        );
        assert_eq!(f64::from_bits(r), want);
        let r = values(
            &s,
            &vals,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            mixed as _,
            &[],
        );
        assert_eq!(r.map(f64::from_bits), Some(want));
    }
}

#[test]
fn struct_results_in_memory_and_in_rax() {
    let s16 = MemoryLayout::c_struct([V::I64, V::I64]).unwrap();
    let s = stub(&FD::of(&s16, [V::I64, V::I64]), None, false);
    let (a, b) = (5i64, 7i64);
    let mut out = S16 { a: 0, b: 0 };
    let ret = (&mut out as *mut S16).cast::<u8>();
    // SAFETY: `make16` matches; `out` is the 16-byte destination.
    unsafe {
        let r = raw(
            &s,
            &[p(&a), p(&b)],
            ret,
            std::ptr::null_mut(),
            make16 as _,
            &[],
        );
        assert_eq!((out, r), (S16 { a: 10, b: 21 }, ret as u64));
        out = S16 { a: 0, b: 0 };
        let r = values(
            &s,
            &[Value::I64(1), Value::I64(2)],
            ret,
            std::ptr::null_mut(),
            make16 as _,
            &[],
        );
        assert_eq!((out, r), (S16 { a: 2, b: 6 }, Some(ret as u64)));
    }
    let p2 = MemoryLayout::c_struct([V::F32, V::F32]).unwrap();
    let s = stub(&FD::of(&p2, [&p2]), None, false);
    let arg = P2 { x: 1.0, y: 2.0 };
    // one byte past the struct stays untouched: the store has the struct's size exactly
    let mut out = [0xAAu8; 9];
    // SAFETY: `swap` matches; `out` holds 8 bytes for the result (unaligned access is fine on
    // x86-64 for the stub's plain store).
    unsafe {
        raw(
            &s,
            &[p(&arg)],
            out.as_mut_ptr(),
            std::ptr::null_mut(),
            swap as _,
            &[],
        );
    }
    let got = P2 {
        x: f32::from_le_bytes(out[0..4].try_into().unwrap()),
        y: f32::from_le_bytes(out[4..8].try_into().unwrap()),
    };
    assert_eq!((got, out[8]), (P2 { x: 2.0, y: 1.0 }, 0xAA));
}

#[test]
fn by_reference_arguments_pass_the_copies_in_registers_and_on_the_stack() {
    let d = FD::of(V::I32, [s12(), s12(), V::I32.into(), V::I32.into(), s12()]);
    let s = stub(&d, None, false);
    let (x, y, z) = (
        S12 { a: 1, b: 2, c: 3 },
        S12 { a: 4, b: 5, c: 6 },
        S12 { a: 7, b: 8, c: 9 },
    );
    let (m, n) = (3i32, 4i32);
    // the caller's copies (16-byte aligned), which the callee may write
    #[repr(C, align(16))]
    struct Copy16(S12);
    let mut copies = [Copy16(x), Copy16(y), Copy16(z)];
    let refs: Vec<*mut u8> = copies
        .iter_mut()
        .map(|c| (&mut c.0 as *mut S12).cast())
        .collect();
    let want = 1 + 10 * 5 + 100 * 9 + 1000 * 3 + 10_000 * 4;
    // SAFETY: `refs3` matches; each ref points to a 16-byte aligned copy.
    unsafe {
        let r = raw(
            &s,
            &[p(&x), p(&y), p(&m), p(&n), p(&z)],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            refs3 as _,
            &refs,
        );
        assert_eq!(r as i32, want);
    }
    assert_eq!(
        copies.iter().map(|c| c.0.a).collect::<Vec<_>>(),
        [-1, -1, -1],
        "the callee wrote the copies"
    );
    assert_eq!(x.a, 1, "never the caller's bytes");
    let mut copies = [Copy16(x), Copy16(y), Copy16(z)];
    let refs: Vec<*mut u8> = copies
        .iter_mut()
        .map(|c| (&mut c.0 as *mut S12).cast())
        .collect();
    let mut segs = [x, y, z].map(|s| {
        // SAFETY: an S12 is 12 plain bytes.
        unsafe { std::slice::from_raw_parts((&s as *const S12).cast::<u8>(), 12) }.to_vec()
    });
    let [s0, s1, s2] = &mut segs;
    let vals = [
        Value::Segment(MemorySegment::of_slice(s0)),
        Value::Segment(MemorySegment::of_slice(s1)),
        Value::I32(m),
        Value::I32(n),
        Value::Segment(MemorySegment::of_slice(s2)),
    ];
    // SAFETY: as above.
    let r = unsafe {
        values(
            &s,
            &vals,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            refs3 as _,
            &refs,
        )
    };
    assert_eq!(r.map(|r| r as i32), Some(want));
}

extern "C" fn second_as_bits(_a: i64, x: u64) -> u64 {
    x
}

extern "C" fn second_as_double(_a: i64, x: f64) -> f64 {
    x
}

#[test]
fn a_variadic_float_arrives_in_both_its_xmm_register_and_its_gpr() {
    let d = FD::of(V::I64, [V::I64, V::F32]);
    let s = stub(&d, Some(1), false);
    let (a, x) = (0i64, 2.5f32);
    // SAFETY: both targets read the second slot as a 64-bit value (GPR, then XMM).
    unsafe {
        let gpr = raw(
            &s,
            &[p(&a), p(&x)],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            second_as_bits as _,
            &[],
        );
        assert_eq!(
            f64::from_bits(gpr),
            2.5,
            "the GPR holds the promoted double"
        );
    }
    let d = FD::of(V::F64, [V::I64, V::F64]);
    let s = stub(&d, Some(1), false);
    let y = -7.25f64;
    // SAFETY: as above.
    unsafe {
        let r = raw(
            &s,
            &[p(&a), p(&y)],
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            second_as_double as _,
            &[],
        );
        assert_eq!(
            f64::from_bits(r),
            -7.25,
            "the XMM register holds the double"
        );
    }
}

use super::super::super::last_error::{
    GetLastError, SetLastError, WSAGetLastError, WSASetLastError,
};

/// What the capture target saw at entry: (GetLastError, WSAGetLastError, errno).
static SEEN: std::sync::Mutex<(u32, i32, i32)> = std::sync::Mutex::new((0, 0, 0));

/// Records the states it finds, then sets the last error to `x + 1` and errno to `x + 3`.
extern "C" fn set_states(x: i32) -> i32 {
    // SAFETY: per-thread state functions, callable at any time; errno's address is this
    // thread's.
    unsafe {
        let seen = (
            GetLastError(),
            WSAGetLastError(),
            *crate::os::thread_errno(),
        );
        *SEEN.lock().unwrap() = seen;
        // errno first: its thread-local lookup may clear the last error (TlsGetValue does)
        *crate::os::thread_errno() = x + 3;
        SetLastError((x + 1) as u32);
    }
    x * 2
}

extern "C" fn set_states_f(x: i32) -> f64 {
    set_states(x) as f64 + 0.5
}

#[test]
fn capture_restores_before_and_saves_after_the_call() {
    // Whether this system keeps the Winsock error in the last-error slot (Windows and Wine
    // both implement WSASetLastError as SetLastError); the expectations follow.
    // SAFETY: per-thread state functions.
    let shared = unsafe {
        SetLastError(1);
        WSASetLastError(2);
        GetLastError() == 2
    };
    for float in [false, true] {
        let d = if float {
            FD::of(V::F64, [V::I32])
        } else {
            FD::of(V::I32, [V::I32])
        };
        let target: *const c_void = if float {
            set_states_f as _
        } else {
            set_states as _
        };
        let s = stub(&d, None, true);
        for via_values in [false, true] {
            let mut buf = [7i32, 8, 9];
            let x = 40i32;
            // SAFETY: the target matches; `buf` is the 12-byte capture buffer.
            let r = unsafe {
                if via_values {
                    values(
                        &s,
                        &[Value::I32(x)],
                        std::ptr::null_mut(),
                        buf.as_mut_ptr(),
                        target,
                        &[],
                    )
                    .unwrap()
                } else {
                    raw(
                        &s,
                        &[p(&x)],
                        std::ptr::null_mut(),
                        buf.as_mut_ptr(),
                        target,
                        &[],
                    )
                }
            };
            if float {
                assert_eq!(f64::from_bits(r), 80.5);
            } else {
                assert_eq!(r as i32, 80);
            }
            let seen = *SEEN.lock().unwrap();
            // restore: errno = 9, WSASetLastError(8), SetLastError(7) last
            assert_eq!(
                seen,
                (7, if shared { 7 } else { 8 }, 9),
                "float={float} values={via_values}"
            );
            // save: GetLastError, WSAGetLastError, errno
            let wsa_after = if shared {
                41
            } else {
                // SAFETY: `WSAGetLastError` (ws2_32, `int WSAGetLastError(void)`) only reads this
                // thread's last Winsock error; it has no preconditions.
                unsafe { WSAGetLastError() }
            };
            assert_eq!(
                buf,
                [41, wsa_after, 43],
                "float={float} values={via_values}"
            );
        }
    }
}

#[link(name = "kernel32")]
extern "system" {
    fn RtlCaptureStackBackTrace(
        skip: u32,
        count: u32,
        frames: *mut *mut c_void,
        hash: *mut u32,
    ) -> u16;
}

/// This thread's return addresses, innermost first (at most 64).
#[inline(never)]
fn backtrace() -> Vec<usize> {
    let mut frames = [std::ptr::null_mut(); 64];
    // SAFETY: `frames` holds 64 pointers; no hash wanted.
    let n = unsafe { RtlCaptureStackBackTrace(0, 64, frames.as_mut_ptr(), std::ptr::null_mut()) };
    frames[..n as usize].iter().map(|&f| f as usize).collect()
}

static WALKED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// Records the stack walk seen from inside the call through the stub.
extern "C" fn walk(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64) -> i64 {
    *WALKED.lock().unwrap() = backtrace();
    a + b + c + d + e + f
}

/// Calls `walk` through `s` (framed: two stack arguments); returns the walk seen from here.
#[inline(never)]
fn call_through(s: &Stub) -> Vec<usize> {
    let mine = backtrace();
    let a: [i64; 6] = [1, 2, 3, 4, 5, 6];
    let ptrs: Vec<*const u8> = a.iter().map(p).collect();
    // SAFETY: `walk` matches the descriptor.
    let r = unsafe {
        raw(
            s,
            &ptrs,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            walk as _,
            &[],
        )
    };
    assert_eq!(std::hint::black_box(r), 21);
    mine
}

#[test]
fn stack_walks_get_through_a_framed_stub() {
    let s = stub(&FD::of(V::I64, [V::I64; 6]), None, false);
    let mine = call_through(&s);
    let walked = WALKED.lock().unwrap().clone();
    // `mine` (taken in `call_through`) is [backtrace, call_through, this test, ...]; the walk
    // from inside `walk` is [backtrace, walk, the stub, raw (unless inlined), call_through,
    // this test, ...]. It gets through the stub when the frame after the stub's is its
    // caller's: then at most two frames (raw, call_through) separate the stub from the frames
    // of `mine` from this test on. (An unwinder that does not know the stub's frame takes it
    // for a leaf and reads the stub's stack slots as return addresses one by one.)
    // the raw entry is the first code byte
    let start = s.raw as usize;
    let end = start + s.bytes().len();
    let in_stub = walked.iter().position(|&a| (start..end).contains(&a));
    let Some(in_stub) = in_stub else {
        panic!("the walk {walked:x?} has no frame in the stub at {start:#x}");
    };
    let outer = &mine[2..];
    let after = &walked[in_stub + 1..];
    assert!(
        outer.len() >= 2 && after.ends_with(outer) && after.len() - outer.len() <= 2,
        "the walk {walked:x?} does not unwind the stub at {start:#x} to its caller (then {outer:x?})"
    );
}

#[test]
fn identical_signatures_share_one_stub_freed_with_its_last_user() {
    // a signature no other test uses
    let d = FD::of(
        V::I16,
        [V::U8, V::F32, V::I16, V::F64, V::U8, V::I8, V::U16],
    );
    let (plan, checks) = (plan_of(&d, None), checks_of(&d));
    let a = stub_for(&plan, &checks, false).unwrap();
    let b = stub_for(&plan, &checks, false).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    let with_capture = stub_for(&plan, &checks, true).unwrap();
    assert!(!Arc::ptr_eq(&a, &with_capture));
    assert!(cached_stubs() >= 2);
    assert_eq!(
        a.bytes(),
        compile(&plan, &checks, false, &CaptureFns::native()).bytes
    );
    let weak = Arc::downgrade(&a);
    drop((a, b));
    assert!(weak.upgrade().is_none(), "freed with its last user");
    // a new link compiles a new, working stub (its function table registered afresh)
    let again = stub_for(&plan, &checks, false).unwrap();
    assert_eq!(Arc::strong_count(&again), 1);
}

#[test]
fn one_fast_path_per_signature() {
    use crate::backend::executor::StubExecutor as Executor;
    use crate::backend::{ArgKind, Backend, Executor as _, RetKind};
    let variant = |d: &FD, fv: Option<usize>, capture: bool| {
        let plan = plan_of(d, fv);
        let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
        let exec = crate::backend::win64::Win64::link(
            &plan,
            &args,
            RetKind::of(d.return_layout()),
            capture,
            noop as _,
        )
        .unwrap();
        let interpreted = exec.interpreted();
        assert!(exec.is_compiled() && !interpreted.is_compiled(), "{d}");
        assert_eq!(interpreted.int_arity(args.len()), usize::MAX);
        assert!(exec.uncaptured().is_none() && exec.image().is_none());
        assert_eq!(exec.float_arity(args.len()), usize::MAX);
        let n = args.len();
        match exec {
            Executor::Int(_) => {
                assert_eq!(exec.int_arity(n), n);
                "Int"
            }
            Executor::Stub(_) => {
                assert_eq!(exec.int_arity(n), usize::MAX);
                "Stub"
            }
            Executor::Interpreted(_) => "Interpreted",
        }
    };
    let s12 = s12();
    let s8 = MemoryLayout::c_struct([V::I32, V::I32]).unwrap();
    assert_eq!(
        variant(&FD::of_void(Vec::<MemoryLayout>::new()), None, false),
        "Int"
    );
    assert_eq!(variant(&FD::of(V::I32, [V::I32]), None, false), "Int");
    assert_eq!(variant(&FD::of(V::F64, [V::F64]), None, false), "Int");
    assert_eq!(
        variant(&FD::of(V::F64, [V::I32, V::F64]), Some(1), false),
        "Int"
    );
    // a bool result is normalised by the handle's value path
    assert_eq!(variant(&FD::of(V::BOOL, [V::I32]), None, false), "Stub");
    assert_eq!(variant(&FD::of(V::I32, [&s12]), None, false), "Stub");
    assert_eq!(variant(&FD::of(&s12, [V::I32]), None, false), "Stub");
    assert_eq!(variant(&FD::of(&s8, [V::I32]), None, false), "Stub");
    assert_eq!(variant(&FD::of(V::I32, [V::I32]), None, true), "Stub");
}
