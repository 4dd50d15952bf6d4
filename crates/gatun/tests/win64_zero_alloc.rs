//! Zero heap allocations per Win64 downcall on the trampoline: scalars, stack arguments,
//! by-reference copies (in a linker-stack frame), a struct returned in rax and one returned
//! through the hidden pointer, variadic doubles, capture of the three Windows states, the raw
//! path, and a downcall into an upcall stub. The targets are Rust `extern "C"` functions (the
//! Microsoft x64 convention on this target). One test only, so no other test thread allocates
//! while we count.
#![cfg(all(target_arch = "x86_64", target_os = "windows", not(miri)))]

use std::ffi::c_void;

use gatun::layout::{MemoryLayout, ValueLayout as V};
use gatun::linker::{DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol};
use gatun::memory::{Arena, MemorySegment, PrefixAllocator};
use gatun::Value;

// The bench harness's per-thread counting allocator (one file, no dependencies; counts alloc,
// alloc_zeroed and realloc): counts are per thread, so the test harness's own threads do not
// disturb them.
#[path = "../../gatun-bench/src/alloc_count.rs"]
mod alloc_count;

#[global_allocator]
static GLOBAL: alloc_count::CountingAllocator = alloc_count::CountingAllocator;

fn count() -> usize {
    alloc_count::CountingAllocator::thread_count() as usize
}

fn link_with(f: *const c_void, d: &FD, options: &[LinkerOption]) -> DowncallHandle {
    // SAFETY: `f` is a Rust function of the descriptor's C type, alive for the program.
    let sym = unsafe { Symbol::from_address(f) };
    Linker::native().downcall(&sym, d, options).unwrap()
}

fn st<const N: usize>(members: [V; N]) -> MemoryLayout {
    MemoryLayout::c_struct(members).unwrap()
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct S24(i64, f64, i64);

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct F2(f32, f32);

extern "C" fn add(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}

extern "C" fn six(a: i64, b: f64, c: i32, d: f32, e: i64, f: f64) -> f64 {
    a as f64 + b + c as f64 + d as f64 + e as f64 + f
}

extern "C" fn sum24(x: i32, s: S24) -> i64 {
    x as i64 + s.0 + s.2
}

extern "C" fn make24(a: i64, b: f64) -> S24 {
    S24(a, b, -a)
}

extern "C" fn make_f2(a: f32) -> F2 {
    F2(a, -a)
}

extern "C" fn va(n: i32, x: f64, y: f64) -> f64 {
    n as f64 + x + y
}

#[link(name = "kernel32")]
extern "system" {
    fn SetLastError(code: u32);
}

extern "C" fn set_last_error(code: u32) -> i32 {
    // SAFETY: always safe.
    unsafe { SetLastError(code) };
    0
}

#[test]
fn no_allocation_on_any_win64_invocation_path() {
    let s24 = st([V::I64, V::F64, V::I64]);
    let add = link_with(add as *const c_void, &FD::of(V::I32, [V::I32, V::I32]), &[]);
    let six = link_with(
        six as *const c_void,
        &FD::of(V::F64, [V::I64, V::F64, V::I32, V::F32, V::I64, V::F64]),
        &[],
    );
    let sum24 = link_with(
        sum24 as *const c_void,
        &FD::of(V::I64, [V::I32.into(), s24.clone()]),
        &[],
    );
    let make24 = link_with(
        make24 as *const c_void,
        &FD::of(&s24, [V::I64, V::F64]),
        &[],
    );
    let make_f2 = link_with(
        make_f2 as *const c_void,
        &FD::of(st([V::F32, V::F32]), [V::F32]),
        &[],
    );
    let va = link_with(
        va as *const c_void,
        &FD::of(V::F64, [V::I32, V::F64, V::F64]),
        &[LinkerOption::FirstVariadicArg(1)],
    );
    let capture = link_with(
        set_last_error as *const c_void,
        &FD::of(V::I32, [V::U32]),
        &[LinkerOption::CaptureCallState(&[
            "GetLastError",
            "WSAGetLastError",
            "errno",
        ])],
    );
    let arena = Arena::confined();
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(V::I64, [V::I32.into(), s24.clone()]),
            |u| {
                Ok(Value::I64(
                    u.get::<i32>(0)? as i64 + u.segment(1)?.get::<i64>(16)?,
                ))
            },
            &arena,
        )
        .unwrap();
    // SAFETY: the stub is a function of its descriptor's type that lives while `stub` does.
    let into_stub = link_with(stub.address(), stub.descriptor(), &[]);

    let mut out = [0u64; 3];
    let mut cap = [0u32; 3];
    // Round 0 warms up what is made once per thread (the linker stack's block, the errno
    // address); rounds 1..=1000 are counted.
    let mut before = 0;
    for k in 0..1001i32 {
        if k == 1 {
            before = count();
        }
        let mut s24_buf = [k as u64, 2.5f64.to_bits(), 3];
        let s = MemorySegment::of_slice(bytes_of(&mut s24_buf));
        // SAFETY: every handle is called with arguments of its C type.
        unsafe {
            assert_eq!(
                add.invoke(&[Value::I32(k), Value::I32(1)]).unwrap(),
                Value::I32(k + 1)
            );
            let r = six
                .invoke(&[
                    Value::I64(1),
                    Value::F64(2.0),
                    Value::I32(3),
                    Value::F32(4.0),
                    Value::I64(5),
                    Value::F64(6.0),
                ])
                .unwrap();
            assert_eq!(r, Value::F64(21.0));
            let r = sum24.invoke(&[Value::I32(1), Value::Segment(s)]).unwrap();
            assert_eq!(r, Value::I64(k as i64 + 4));
            let o = PrefixAllocator::new(MemorySegment::of_slice(bytes_of(&mut out)));
            make24
                .invoke_into(&o, &[Value::I64(k as i64), Value::F64(0.5)])
                .unwrap();
            assert_eq!(out[2] as i64, -(k as i64));
            let o = PrefixAllocator::new(MemorySegment::of_slice(bytes_of(&mut out)));
            make_f2.invoke_into(&o, &[Value::F32(1.5)]).unwrap();
            assert_eq!(out[0] as u32, 1.5f32.to_bits());
            let r = va
                .invoke(&[Value::I32(1), Value::F64(2.0), Value::F64(3.0)])
                .unwrap();
            assert_eq!(r, Value::F64(6.0));
            let c = MemorySegment::of_slice(bytes_of(&mut cap));
            capture
                .invoke(&[Value::Segment(c), Value::U32(k as u32 + 7)])
                .unwrap();
            assert_eq!(cap[0], k as u32 + 7);
            let (a, b) = (k, 2i32);
            let mut r = 0i32;
            add.invoke_raw(
                &[(&a as *const i32).cast(), (&b as *const i32).cast()],
                (&mut r as *mut i32).cast(),
            )
            .unwrap();
            assert_eq!(r, k + 2);
            let r = into_stub
                .invoke(&[Value::I32(1), Value::Segment(s)])
                .unwrap();
            assert_eq!(r, Value::I64(4));
        }
    }
    let after = count();
    assert_eq!(
        after - before,
        0,
        "heap allocations during 1000 rounds of Win64 downcalls"
    );
}

/// The bytes of a `[T]` of plain integers (keeps the buffer aligned for `T`).
fn bytes_of<T: Copy>(x: &mut [T]) -> &mut [u8] {
    // SAFETY: used with u32/u64 only: no padding, any byte pattern valid; lengths match.
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast(), std::mem::size_of_val(x)) }
}
