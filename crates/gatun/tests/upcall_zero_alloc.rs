//! Zero heap allocations per upcall once a thread's linker-stack block exists: scalar
//! arguments and returns, struct arguments in registers and on the stack (copied into a
//! linker-stack frame), register and MEMORY struct returns, typed and confined typed stubs
//! (direct and value paths). One test only, so no other test thread allocates while we count.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use common::*;
use gatun::linker::FunctionDescriptor as FD;
use gatun::memory::PrefixAllocator;
use gatun::memory::{Arena, MemorySegment};
use gatun::{Linker, MemoryLayout, Value};

// The bench harness's per-thread counting allocator (one file, no dependencies), as in
// arena_pool_alloc_count.rs: counts are per thread, so the test harness's own threads do not
// disturb them.
#[path = "../../gatun-bench/src/alloc_count.rs"]
mod alloc_count;

#[global_allocator]
static GLOBAL: alloc_count::CountingAllocator = alloc_count::CountingAllocator;

fn thread_allocs() -> u64 {
    alloc_count::CountingAllocator::thread_count()
}

/// `S cb(S, int)` through C's `upcall_call_<name>`, echoing the struct argument segment.
fn echo(name: &str, layout: &MemoryLayout) -> (gatun::DowncallHandle, gatun::UpcallStub<'static>) {
    let call = link(
        &format!("upcall_call_{name}"),
        &FD::of(
            layout.clone(),
            [V::ADDRESS.into(), layout.clone(), V::I32.into()],
        ),
    );
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(layout.clone(), [layout.clone(), V::I32.into()]),
            |a| Ok(a[0]),
            Arena::global(),
        )
        .unwrap();
    (call, stub)
}

#[test]
fn no_allocation_per_upcall() {
    let arena = Arena::confined();
    let ii = st([V::I64, V::I64]);
    let si = st([V::F64, V::I32]);
    let m24 = st([V::I64, V::I64, V::I64]);
    let cases: Vec<_> = [("upcall_II", &ii), ("upcall_SI", &si), ("upcall_M24", &m24)]
        .into_iter()
        .map(|(n, l)| (echo(n, l), l.byte_size()))
        .collect();
    let neg = Linker::native()
        .upcall_stub(
            &FD::of(V::I8, [V::I8]),
            |a| Ok(Value::I8(a.get::<i8>(0)?.wrapping_neg())),
            &arena,
        )
        .unwrap();
    let call_i8 = link("upcall_call_i8", &FD::of(V::I32, [V::ADDRESS, V::I8]));
    // typed stubs, called through their C function pointers: the direct path (x86-64 SysV)
    // and the value path (six integer arguments; every other ABI), plain and confined
    let typed = Linker::native()
        .upcall_typed(|x: i8| x.wrapping_neg(), &arena)
        .unwrap();
    let calls = std::cell::Cell::new(0u64);
    let confined = Linker::native()
        .upcall_typed_confined(
            |x: i64| {
                calls.set(calls.get() + 1);
                x + 1
            },
            &arena,
        )
        .unwrap();
    type Six = unsafe extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64;
    let confined_six = Linker::native()
        .upcall_typed_confined::<Six>(
            |a, b, c, d, e, f| {
                calls.set(calls.get() + 1);
                a + b + c + d + e + f
            },
            &arena,
        )
        .unwrap();
    let (typed, confined, confined_six) = (
        typed.function(),
        confined.function(),
        confined_six.function(),
    );
    let mut input = [0u8; 24];
    let mut out = [0u8; 24];
    for (i, b) in input.iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut round = |k: i32| {
        // SAFETY: each handle is called with arguments of its C type.
        unsafe {
            assert_eq!(
                call_i8
                    .invoke(&[neg.as_value(), Value::I8(k as i8)])
                    .unwrap(),
                Value::I32((k as i8).wrapping_neg() as i32)
            );
            for ((call, stub), size) in &cases {
                let src = MemorySegment::of_slice(&mut input[..*size]);
                let dst = MemorySegment::of_slice(&mut out[..*size]);
                call.invoke_into(
                    &PrefixAllocator::new(dst),
                    &[stub.as_value(), Value::Segment(src), Value::I32(k)],
                )
                .unwrap();
                assert_eq!(dst.get::<i64>(0).unwrap(), src.get::<i64>(0).unwrap());
            }
            // on the thread that made the confined stubs
            assert_eq!(typed(k as i8), (k as i8).wrapping_neg());
            assert_eq!(confined(k.into()), i64::from(k) + 1);
            assert_eq!(confined_six(k.into(), 1, 1, 1, 1, 1), i64::from(k) + 5);
        }
    };
    round(1); // creates this thread's linker-stack block
    let before = thread_allocs();
    for k in 0..1000 {
        round(k);
    }
    let after = thread_allocs();
    assert_eq!(
        after - before,
        0,
        "heap allocations during 1000 rounds of upcalls"
    );
    assert_eq!(calls.get(), 2 * 1001);
}
