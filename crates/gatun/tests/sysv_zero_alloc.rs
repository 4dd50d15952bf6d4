//! Zero heap allocations per downcall on every path: scalars, struct in/out (registers and
//! memory), varargs, errno capture, the raw path, integer arguments converted to their
//! parameters' kinds. One test only, so no other test thread
//! allocates while we count. The functions are tests/native/sysv_abi.c's; under Microsoft x64
//! the 16-byte `{int, double}` and the 100-byte struct are by-reference copies and the 24-byte
//! struct a hidden-pointer return, which must not allocate either.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use common::*;
use gatun::linker::{capture_state_layout, FunctionDescriptor as FD, LinkerOption};
use gatun::memory::PrefixAllocator;
use gatun::memory::{MemorySegment, SlicingAllocator};
use gatun::Value;

// The bench harness's per-thread counting allocator (one file, no dependencies; counts alloc,
// alloc_zeroed and realloc), as in arena_pool_alloc_count.rs: counts are per thread, so the test
// harness's own threads do not disturb them.
#[path = "../../gatun-bench/src/alloc_count.rs"]
mod alloc_count;

#[global_allocator]
static GLOBAL: alloc_count::CountingAllocator = alloc_count::CountingAllocator;

fn count() -> usize {
    alloc_count::CountingAllocator::thread_count() as usize
}

#[test]
fn no_allocation_on_any_invocation_path() {
    let add = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    let id = st([V::I32, V::F64]);
    let id_sum = link("sysv_id_sum", &FD::of(V::F64, [&id]));
    let id_make = link("sysv_id_make", &FD::of(&id, [V::I32, V::F64]));
    let l3 = st([V::I64, V::I64, V::I64]);
    let l3_make = link("sysv_l3_make", &FD::of(&l3, [V::I64, V::I64, V::I64]));
    // no arguments: on x86-64 SysV the handle calls the function itself as its struct entry
    let l3_fixed = link("sysv_l3_fixed", &FD::of(&l3, []));
    let b100 = bytes_struct(100);
    let b100_sum = link("sysv_b100_sum", &FD::of(V::I64, [b100, V::I32.into()]));
    let va = link_with(
        "sysv_va_sum",
        &FD::of(V::F64, [V::ADDRESS, V::F32, V::I8, V::F64]),
        &[LinkerOption::FirstVariadicArg(1)],
    );
    let errno = link_with(
        "sysv_set_errno",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    let mut tags = *b"did\0";
    let mut id_buf = [0u8; 16];
    let mut b100_buf = [7u8; 100];
    let mut out = [0u8; 24];
    let mut scratch = [0u8; 64];
    let mut fixed_out = [0u64; 3];
    // the capture buffer: 4 bytes on Linux, 12 on Windows (errno at 8)
    let mut cap = [0u32; 3];
    let at = capture_state_layout().byte_offset_of("errno").unwrap() / 4;

    // Every handle has a compiled stub (on AArch64 the by-reference copy of `b100`, and the
    // stub's pointer to it, go in a linker-stack frame, not on the heap).
    for h in [
        &add, &id_sum, &id_make, &l3_make, &l3_fixed, &b100_sum, &va, &errno,
    ] {
        assert!(h.uses_compiled_stub(), "{h:?}");
    }
    // the trampoline paths and the typed entries (direct and through the stub)
    let add_t = add.interpreted();
    let id_make_t = id_make.interpreted();
    let b100_sum_t = b100_sum.interpreted();
    let typed_add = add.typed::<(i32, i32), i32>().unwrap();
    assert!(typed_add.is_direct());
    let typed_errno = errno.typed::<(*mut i32, i32, i32), i32>().unwrap();

    // Round 0 warms up what is made once per thread (the linker stack's block, which AArch64's
    // by-reference copies use; the errno address); rounds 1..=1000 are counted.
    let mut before = 0;
    for k in 0..1001 {
        if k == 1 {
            before = count();
        }
        // SAFETY: every handle is called with arguments of its C type.
        unsafe {
            assert_eq!(
                add.invoke(&[Value::I32(k), Value::I32(1)]).unwrap(),
                Value::I32(k + 1)
            );
            let s = MemorySegment::of_slice(&mut id_buf);
            id_make
                .invoke_into(&PrefixAllocator::new(s), &[Value::I32(k), Value::F64(0.5)])
                .unwrap();
            assert!(matches!(
                id_sum.invoke(&[Value::Segment(s)]).unwrap(),
                Value::F64(_)
            ));
            let alloc = SlicingAllocator::new(MemorySegment::of_slice(&mut scratch));
            let r = id_make
                .invoke_into(&alloc, &[Value::I32(k), Value::F64(0.5)])
                .unwrap();
            assert_eq!(r.as_segment().unwrap().get::<i32>(0).unwrap(), k);
            l3_make
                .invoke_into(
                    &PrefixAllocator::new(MemorySegment::of_slice(&mut out)),
                    &[Value::I64(1), Value::I64(2), Value::I64(3)],
                )
                .unwrap();
            fixed_out[0] = 0;
            let fixed = MemorySegment::of_slice(bytemuck_u64(&mut fixed_out));
            l3_fixed
                .invoke_into(&PrefixAllocator::new(fixed), &[])
                .unwrap();
            assert_eq!(fixed_out, [-7i64 as u64, 11, 1 << 20]);
            for h in [&b100_sum, &b100_sum_t] {
                h.invoke(&[
                    Value::Segment(MemorySegment::of_slice(&mut b100_buf)),
                    Value::I32(1),
                ])
                .unwrap();
            }
            va.invoke(&[
                Value::Segment(MemorySegment::of_slice(&mut tags)),
                Value::F32(1.0),
                Value::I8(2),
                Value::F64(3.0),
            ])
            .unwrap();
            let c = MemorySegment::of_slice(bytemuck_u32(&mut cap));
            assert_eq!(
                errno
                    .invoke(&[Value::Segment(c), Value::I32(5), Value::I32(0)])
                    .unwrap(),
                Value::I32(0)
            );
            assert_eq!(cap[at], 5);
            let (a, b) = (k, 2i32);
            let mut r = 0i32;
            add.invoke_raw(
                &[(&a as *const i32).cast(), (&b as *const i32).cast()],
                (&mut r as *mut i32).cast(),
            )
            .unwrap();
            assert_eq!(r, k + 2);
            assert_eq!(
                add_t.invoke(&[Value::I32(k), Value::I32(1)]).unwrap(),
                Value::I32(k + 1)
            );
            id_make_t
                .invoke_into(&PrefixAllocator::new(s), &[Value::I32(k), Value::F64(0.5)])
                .unwrap();
            assert_eq!(typed_add.call((k, 3)), k + 3);
            let mut e = [0i32; 3];
            assert_eq!(typed_errno.call((e.as_mut_ptr(), 9, 1)), 1);
            assert_eq!(e[at], 9);
            // `Arguments`: the slots path, and the `Value` paths it falls back to (a struct
            // argument, a struct return, capture, variadic)
            let mut two = gatun::Arguments::<2>::new();
            two.i32(k).i32(1);
            assert_eq!(add.invoke_arguments(&two).unwrap(), Value::I32(k + 1));
            assert_eq!(add_t.invoke_arguments(&two).unwrap(), Value::I32(k + 1));
            let mut one = gatun::Arguments::<1>::new();
            one.segment(s);
            assert!(matches!(
                id_sum.invoke_arguments(&one).unwrap(),
                Value::F64(_)
            ));
            let mut made = gatun::Arguments::<2>::new();
            made.i32(k).f64(0.5);
            id_make
                .invoke_arguments_into(&PrefixAllocator::new(s), &made)
                .unwrap();
            let mut cap_args = gatun::Arguments::<3>::new();
            cap_args
                .segment(MemorySegment::of_slice(bytemuck_u32(&mut cap)))
                .i32(5)
                .i32(0);
            assert_eq!(errno.invoke_arguments(&cap_args).unwrap(), Value::I32(0));
            let mut va_args = gatun::Arguments::<4>::new();
            va_args
                .segment_address(MemorySegment::of_slice(&mut tags))
                .f32(1.0)
                .i8(2)
                .f64(3.0);
            va.invoke_arguments(&va_args).unwrap();
            // a wrong kind is an error, without allocating until it is reported
            let mut bad = gatun::Arguments::<2>::new();
            bad.i32(k).i64(1);
            assert!(add.takes_slots_path(&two));
            assert!(!add.takes_slots_path(&bad));
            // integers of another kind that fit, converted on the stack: the stub's retry,
            // the trampoline, `Arguments`, a struct return and a capture handle
            for h in [&add, &add_t] {
                assert_eq!(
                    h.invoke(&[Value::I64(k.into()), Value::U8(1)]).unwrap(),
                    Value::I32(k + 1)
                );
                assert_eq!(h.invoke_arguments(&bad).unwrap(), Value::I32(k + 1));
            }
            id_make
                .invoke_into(&PrefixAllocator::new(s), &[Value::U16(7), Value::F64(0.5)])
                .unwrap();
            let c = MemorySegment::of_slice(bytemuck_u32(&mut cap));
            assert_eq!(
                errno
                    .invoke(&[Value::Segment(c), Value::U64(5), Value::I8(0)])
                    .unwrap(),
                Value::I32(0)
            );
        }
    }
    let after = count();
    assert_eq!(
        after - before,
        0,
        "heap allocations during 1000 rounds of downcalls"
    );
}

/// The bytes of a `[u32]` (keeps the capture buffer 4-byte aligned).
fn bytemuck_u32(x: &mut [u32]) -> &mut [u8] {
    // SAFETY: u32 has no padding; any byte pattern is a valid u32; lengths match.
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast(), x.len() * 4) }
}

/// The bytes of a `[u64]` (keeps a struct-return buffer 8-byte aligned).
fn bytemuck_u64(x: &mut [u64]) -> &mut [u8] {
    // SAFETY: u64 has no padding; any byte pattern is a valid u64; lengths match.
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast(), x.len() * 8) }
}
