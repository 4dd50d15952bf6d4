//! The Win64 executor against Rust `extern "C"` functions (on x86-64 Windows they follow the
//! Microsoft x64 convention as C does): shared slots, the shadow space and stack arguments,
//! register-sized aggregates in GPRs, by-reference copies, the hidden return pointer, variadic
//! doubles in both registers, nonvolatile registers, capture of the three Windows states, and
//! upcalls of the same classes (a downcall into the upcall stub, and Rust code calling the stub
//! as C, on this thread and on a `CreateThread` thread). Run under Wine on a Linux host.
//!
//! # Microsoft x64: rules and the tests that cover them
//!
//! Rules as stated in the Win64 classifier (`src/abi/win64.rs`) (Microsoft "x64 calling convention" and "x64 ABI
//! conventions"). Classification: `abi/win64/tests.rs` on every host and
//! `tests/win64_oracle.rs` against `x86_64-w64-mingw32-gcc`. Execution runs under Wine:
//! `backend/win64/tests.rs` (the trampoline, against Rust `extern "C"` functions, which are
//! Microsoft x64 functions there), `backend/win64/stub/tests/on_windows.rs` and
//! `stub/tests/differential.rs` (compiled stubs, both entries, compared with the trampoline),
//! `backend/win64/stub/tests.rs` (the emitted code, on every host), and the integration suites
//! against the mingw-built C test natives: `tests/downcall_prop.rs` (1,000 generated signatures in
//! the Microsoft x64 mixture: 601 with 1/2/4/8-byte aggregate arguments, 532 with other aggregates
//! up to 16 bytes, 446 all-float structs, 553 with more than four arguments, 255 variadic, 439
//! hidden-pointer returns; stub, trampoline and raw paths), `tests/upcall_prop.rs` (the same
//! signatures called from C), `tests/stub_differential.rs` (a Microsoft x64 recorder, 10,000 random
//! signatures), `tests/win64_capture.rs` and `tests/win64_zero_alloc.rs`.
//!
//! | rule | execution tests |
//! |---|---|
//! | four slots shared by integer and floating arguments (`double f(int, double)`: rcx, xmm1) | `int_of_int_and_slots_shared_by_int_and_double`; stub `scalars_slots_and_stack_arguments_agree_on_every_path`; `downcall_prop` |
//! | stack arguments from the fifth slot at `rsp+32+8k`, above the 32-byte shadow space; 16-byte alignment at the call | `arguments_past_the_fourth_slot_go_to_the_stack_above_the_shadow_space`, `upcalls_with_stack_arguments`; stub `six_integers_put_two_on_the_stack_above_the_shadow_space`, `stack_arguments_mixed_kinds_and_a_float_result` |
//! | aggregates of 1, 2, 4, 8 bytes as integers in a GPR, all-float ones too | `aggregates_of_1_2_4_8_bytes_travel_as_integers_even_all_float`; stub `a_struct_in_rax_is_stored_with_its_exact_size`, `aggregates_by_value_by_reference_and_through_the_hidden_pointer_agree` |
//! | other aggregates by reference to a 16-byte-aligned caller copy from the linker BufferStack; the callee writing it leaves the caller's segment unchanged | `other_aggregates_are_passed_as_a_16_byte_aligned_copy_the_callee_may_write`, `deep_reentrancy_with_by_reference_copies_at_every_level`, `upcalls_take_by_reference_structs_and_return_through_the_hidden_pointer`; stub `by_reference_arguments_pass_the_copies_in_registers_and_on_the_stack`; `tests/sysv_zero_alloc.rs` and `tests/win64_zero_alloc.rs` (no allocation) |
//! | hidden return pointer in rcx (slot 0, arguments shifted), returned in rax | `other_results_are_written_through_the_hidden_pointer_in_rcx_shifting_the_arguments`; stub `a_16_byte_struct_comes_back_through_the_hidden_pointer_in_rcx`, `struct_results_in_memory_and_in_rax`; upcalls return it in rax (`upcalls_take_by_reference_structs_and_return_through_the_hidden_pointer`) |
//! | variadic `float`/`double` in both the XMM register and the GPR | `variadic_doubles_go_in_both_the_xmm_register_and_the_gpr`, `the_c_runtime_formats_variadic_doubles_and_ints` (msvcrt `sprintf`); stub `a_variadic_float_arrives_in_both_its_xmm_register_and_its_gpr`, `variadic_floats_agree_in_both_registers` |
//! | rbx, rbp, rdi, rsi, r12–r15, xmm6–xmm15 nonvolatile | `the_trampoline_and_the_upcall_entry_preserve_every_nonvolatile_register`; stub `random_plans_decode_and_never_write_a_nonvolatile_register` |
//! | unwind data for the trampoline, the upcall entry and every framed stub | `stack_walks_pass_through_the_trampoline_and_the_upcall_entry`, stub `stack_walks_get_through_a_framed_stub` (fails without the registered table), `the_unwind_information_describes_the_frame` |
//! | capture: the three states restored right before the call (`SetLastError` last) and saved right after | `capture_restores_the_three_states_before_the_call_and_saves_them_after`, stub `capture_restores_before_and_saves_after_the_call`, `capture_agrees_on_every_path`; `tests/win64_capture.rs`: `a_failing_create_file_is_captured_before_anything_can_clobber_it`, `every_state_is_restored_just_before_the_call`, `every_state_is_saved_just_after_the_call`, `socket_without_wsastartup_is_wsanotinitialised`, `a_captured_call_nested_through_an_upcall`, `eight_threads_each_see_their_own_last_error`, `call_last_error_gives_windows_error_codes`, `capturing_calls_allocate_nothing` |
//! | upcalls from threads the process did not create with Rust | `upcalls_run_on_a_thread_created_with_create_thread`; `tests/upcall.rs` (C threads made with `CreateThread`) |
//! | `long` is 4 bytes (LLP64) | `tests/win64_data_model.rs` against mingw gcc |

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::last_error::{GetLastError, SetLastError, WSAGetLastError};
use super::{CallFrame, Win64};
use crate::abi::{Location, Register, ReturnPlan};
use crate::backend::test_values::{arena, read, seg_of, st};
use crate::backend::{ArgKind, ArgSource, Backend, Executor as _, RetKind};
use crate::layout::ValueLayout as V;
use crate::linker::{DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol};
use crate::memory::SegmentAllocator;
use crate::Value;

/// The trampoline handle of `f` (these tests are the trampoline's; the compiled stubs are
/// compared with it in `stub`'s tests).
fn link_with(f: *const c_void, d: &FD, options: &[LinkerOption]) -> DowncallHandle {
    // SAFETY: `f` is a Rust function of the descriptor's C type, alive for the program.
    let sym = unsafe { Symbol::from_address(f) };
    let h = Linker::native().downcall(&sym, d, options).unwrap();
    assert!(h.uses_compiled_stub(), "{h:?}");
    let h = h.interpreted();
    assert!(!h.uses_compiled_stub(), "{h:?}");
    h
}

fn link(f: *const c_void, d: &FD) -> DowncallHandle {
    link_with(f, d, &[])
}

extern "C" fn twice(x: i32) -> i32 {
    2 * x
}

extern "C" fn int_double(n: i32, x: f64) -> f64 {
    n as f64 * x
}

#[test]
fn int_of_int_and_slots_shared_by_int_and_double() {
    let h = link(twice as *const c_void, &FD::of(V::I32, [V::I32]));
    assert_eq!(h.plan().stack_bytes(), 32);
    assert_eq!(
        // SAFETY: `twice` is a Rust `extern "C" fn(i32) -> i32`, the descriptor's `int (int)`,
        // alive for the program.
        unsafe { h.invoke(&[Value::I32(21)]) }.unwrap(),
        Value::I32(42)
    );
    let d = FD::of(V::F64, [V::I32, V::F64]);
    let h = link(int_double as *const c_void, &d);
    let to: Vec<_> = h.plan().args().iter().map(|a| a.moves[0].to).collect();
    assert_eq!(to, [Location::Int(0), Location::Vector(1)]);
    // SAFETY: `int_double` has this type.
    let r = unsafe { h.invoke(&[Value::I32(-3), Value::F64(2.5)]) }.unwrap();
    assert_eq!(r, Value::F64(-7.5));
}

#[allow(clippy::too_many_arguments)]
extern "C" fn seven(a: i64, b: f64, c: i8, d: f32, e: i32, f: f64, g: u16) -> f64 {
    a as f64
        + b * 10.0
        + c as f64 * 100.0
        + d as f64 * 1e3
        + e as f64 * 1e4
        + f * 1e5
        + g as f64 * 1e6
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
    [a, b, c, d, e, f as i64, g as i64, h, i as i64, j]
        .iter()
        .enumerate()
        .map(|(k, v)| v * 10i64.pow(k as u32))
        .sum()
}

#[test]
fn arguments_past_the_fourth_slot_go_to_the_stack_above_the_shadow_space() {
    let d = FD::of(
        V::F64,
        [V::I64, V::F64, V::I8, V::F32, V::I32, V::F64, V::U16],
    );
    let h = link(seven as *const c_void, &d);
    assert_eq!(h.plan().stack_bytes(), 32 + 3 * 8);
    let args = [
        Value::I64(1),
        Value::F64(2.0),
        Value::I8(-3),
        Value::F32(4.0),
        Value::I32(5),
        Value::F64(6.0),
        Value::U16(7),
    ];
    let want = 1.0 + 20.0 - 300.0 + 4e3 + 5e4 + 6e5 + 7e6;
    // SAFETY: `seven` has this type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
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
    let h = link(ten as *const c_void, &d);
    assert_eq!(h.plan().stack_bytes(), 32 + 6 * 8);
    let args = [
        Value::I64(1),
        Value::I64(2),
        Value::I64(3),
        Value::I64(4),
        Value::I64(5),
        Value::I8(6),
        Value::F64(7.0),
        Value::I64(8),
        Value::F32(9.0),
        Value::I64(1),
    ];
    assert_eq!(
        // SAFETY: `ten` is a Rust
        // `extern "C" fn(i64, i64, i64, i64, i64, i8, f64, i64, f32, i64) -> i64`, exactly the
        // descriptor's ten arguments and return, alive for the program.
        unsafe { h.invoke(&args) }.unwrap(),
        Value::I64(1_987_654_321)
    );
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct F1(f32);
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct F2(f32, f32);
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct D1(f64);
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct B2(u8, u8);
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct B1(u8);

extern "C" fn small(a: F1, b: F2, c: B2, d: D1, e: B1) -> F2 {
    F2(
        a.0 + b.0 + c.0 as f32 + e.0 as f32,
        b.1 * d.0 as f32 + c.1 as f32,
    )
}

extern "C" fn small_bits(a: u32, b: u64, c: u16, d: u64, e: u8) -> u64 {
    a as u64 ^ b ^ c as u64 ^ d ^ e as u64
}

#[test]
fn aggregates_of_1_2_4_8_bytes_travel_as_integers_even_all_float() {
    let (f1, f2, b2, d1, b1) = (
        st([V::F32]),
        st([V::F32, V::F32]),
        st([V::U8, V::U8]),
        st([V::F64]),
        st([V::U8]),
    );
    let d = FD::of(&f2, [&f1, &f2, &b2, &d1, &b1]);
    let h = link(small as *const c_void, &d);
    let to: Vec<_> = h.plan().args().iter().map(|a| a.moves[0].to).collect();
    assert_eq!(
        to,
        [
            Location::Int(0),
            Location::Int(1),
            Location::Int(2),
            Location::Int(3),
            Location::Stack(32)
        ]
    );
    assert_eq!(
        *h.plan().ret(),
        ReturnPlan::Registers(vec![crate::abi::ReturnMove {
            from: Register::Int(0),
            offset: 0,
            size: 8
        }])
    );
    let a = arena();
    let args = [
        Value::Segment(seg_of(&a, F1(1.0))),
        Value::Segment(seg_of(&a, F2(2.0, 3.0))),
        Value::Segment(seg_of(&a, B2(4, 5))),
        Value::Segment(seg_of(&a, D1(6.0))),
        Value::Segment(seg_of(&a, B1(7))),
    ];
    // SAFETY: `small` has this type.
    let r = unsafe { h.invoke_into(&a, &args) }.unwrap();
    let Value::Segment(r) = r else {
        panic!("{r:?}")
    };
    assert_eq!(read::<F2>(&r), F2(14.0, 23.0));
    // The same bytes seen by a callee reading the GPRs and the stack slot as integers: the
    // floats are in rcx/rdx/r8/r9, not in an XMM register.
    let bits = FD::of(V::I64, [&f1, &f2, &b2, &d1, &b1]);
    let h = link(small_bits as *const c_void, &bits);
    // SAFETY: `small_bits` reads the same slots as integers.
    let r = unsafe { h.invoke(&args) }.unwrap();
    let want = 1f32.to_bits() as u64
        ^ (2f32.to_bits() as u64 | (3f32.to_bits() as u64) << 32)
        ^ 0x0504
        ^ 6f64.to_bits()
        ^ 7;
    assert_eq!(r, Value::I64(want as i64));
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct S3(u8, u8, u8);
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct S12(i32, i32, i32);
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct S16(f64, i64);
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct S24(i64, f64, i64);

/// The addresses the by-reference target received, OR-ed together (for the alignment check).
static COPY_ADDRESSES: AtomicUsize = AtomicUsize::new(0);

/// Receives the copies' addresses (as C sees a by-reference struct), writes every copy.
extern "C" fn by_ref(x: i32, a: *mut S3, b: *mut S12, c: *mut S16, d: *mut S24, y: i32) -> i64 {
    COPY_ADDRESSES.store(
        a as usize | b as usize | c as usize | d as usize,
        Ordering::Relaxed,
    );
    // SAFETY: the executor passes a copy of each struct, readable and writable.
    unsafe {
        let sum = (*a).0 as i64 + (*a).2 as i64 + (*b).1 as i64 + (*c).1 + (*d).2 + (*d).1 as i64;
        *a = S3(0, 0, 0);
        *b = S12(-1, -1, -1);
        *c = S16(-1.0, -1);
        *d = S24(-1, -1.0, -1);
        sum * 10 + x as i64 + y as i64 * 1000
    }
}

/// The same structs received by value, as Rust declares a Win64 C function.
extern "C" fn by_value(x: i32, a: S3, b: S12, c: S16, d: S24, y: i32) -> i64 {
    (a.0 as i64 + a.2 as i64 + b.1 as i64 + c.1 + d.2 + d.1 as i64) * 10
        + x as i64
        + y as i64 * 1000
}

#[test]
fn other_aggregates_are_passed_as_a_16_byte_aligned_copy_the_callee_may_write() {
    let (s3, s12, s16, s24) = (
        st([V::U8, V::U8, V::U8]),
        st([V::I32, V::I32, V::I32]),
        st([V::F64, V::I64]),
        st([V::I64, V::F64, V::I64]),
    );
    let d = FD::of(V::I64, [V::I32.into(), s3, s12, s16, s24, V::I32.into()]);
    let h = link(by_ref as *const c_void, &d);
    let refs: Vec<_> = h.plan().args().iter().map(|a| a.by_reference).collect();
    assert_eq!(
        refs,
        [
            None,
            Some(Location::Int(1)),
            Some(Location::Int(2)),
            Some(Location::Int(3)),
            Some(Location::Stack(32)),
            None
        ]
    );
    let a = arena();
    let (v3, v12, v16, v24) = (S3(1, 2, 3), S12(4, 5, 6), S16(7.0, 8), S24(9, 10.0, 11));
    let segs = [
        seg_of(&a, v3),
        seg_of(&a, v12),
        seg_of(&a, v16),
        seg_of(&a, v24),
    ];
    let args = [
        Value::I32(7),
        Value::Segment(segs[0]),
        Value::Segment(segs[1]),
        Value::Segment(segs[2]),
        Value::Segment(segs[3]),
        Value::I32(2),
    ];
    let want = (1 + 3 + 5 + 8 + 11 + 10) * 10 + 7 + 2000;
    // SAFETY: `by_ref` takes pointers where the descriptor has by-reference structs.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(want));
    assert_eq!(
        COPY_ADDRESSES.load(Ordering::Relaxed) % 16,
        0,
        "every copy is 16-byte aligned"
    );
    // the callee wrote its copies, not the caller's segments
    assert_eq!((read::<S3>(&segs[0]), read::<S12>(&segs[1])), (v3, v12));
    assert_eq!((read::<S16>(&segs[2]), read::<S24>(&segs[3])), (v16, v24));
    // the raw path copies too
    let ptrs: Vec<*const u8> = [
        &7i32 as *const i32 as *const u8,
        segs[0].as_ptr(),
        segs[1].as_ptr(),
        segs[2].as_ptr(),
        segs[3].as_ptr(),
        &2i32 as *const i32 as *const u8,
    ]
    .to_vec();
    let mut out = 0i64;
    // SAFETY: every pointer is readable for its layout; `out` holds the i64 result.
    unsafe { h.invoke_raw(&ptrs, (&mut out as *mut i64).cast()) }.unwrap();
    assert_eq!(out, want);
    assert_eq!(read::<S24>(&segs[3]), v24);
    // a Rust callee declaring the structs by value reads the same copies
    let h = link(by_value as *const c_void, &d);
    // SAFETY: `by_value` has this type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(want));
}

extern "C" fn make12(a: i32, b: f64, c: i32) -> S12 {
    S12(a, b as i32, c)
}

extern "C" fn make16(a: f64, b: i64) -> S16 {
    S16(a * 2.0, b * 2)
}

extern "C" fn make24(a: i64, b: f64, c: i64, d: i64) -> S24 {
    S24(a + d, b, c)
}

#[test]
fn other_results_are_written_through_the_hidden_pointer_in_rcx_shifting_the_arguments() {
    let a = arena();
    let s12 = st([V::I32, V::I32, V::I32]);
    let d = FD::of(&s12, [V::I32, V::F64, V::I32]);
    let h = link(make12 as *const c_void, &d);
    assert_eq!(h.plan().hidden_return_pointer(), Some(Location::Int(0)));
    assert_eq!(
        super::classify::describe(h.plan()),
        "(ret-ptr:rcx, rdx, xmm2, r9) -> memory"
    );
    // SAFETY: `make12` has this type.
    let r = unsafe { h.invoke_into(&a, &[Value::I32(1), Value::F64(2.0), Value::I32(3)]) };
    let Value::Segment(r) = r.unwrap() else {
        panic!()
    };
    assert_eq!(read::<S12>(&r), S12(1, 2, 3));
    let h = link(
        make16 as *const c_void,
        &FD::of(st([V::F64, V::I64]), [V::F64, V::I64]),
    );
    // SAFETY: `make16` has this type.
    let r = unsafe { h.invoke_into(&a, &[Value::F64(1.5), Value::I64(-4)]) };
    let Value::Segment(r) = r.unwrap() else {
        panic!()
    };
    assert_eq!(read::<S16>(&r), S16(3.0, -8));
    // four arguments and the pointer: the last argument goes to the first stack slot
    let d = FD::of(
        st([V::I64, V::F64, V::I64]),
        [V::I64, V::F64, V::I64, V::I64],
    );
    let h = link(make24 as *const c_void, &d);
    assert_eq!(h.plan().args()[3].moves[0].to, Location::Stack(32));
    let args = [
        Value::I64(1),
        Value::F64(2.5),
        Value::I64(3),
        Value::I64(40),
    ];
    // SAFETY: `make24` has this type.
    let r = unsafe { h.invoke_into(&a, &args) };
    let Value::Segment(r) = r.unwrap() else {
        panic!()
    };
    assert_eq!(read::<S24>(&r), S24(41, 2.5, 3));
    // the executor itself: the callee returns the destination's address in rax
    let plan = h.plan().clone();
    let kinds: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
    let exec = Win64::link(
        &plan,
        &kinds,
        RetKind::of(d.return_layout()),
        false,
        std::ptr::null(),
    )
    .unwrap();
    let mut out = S24(0, 0.0, 0);
    let ret = (&mut out as *mut S24).cast::<u8>();
    let bits = [1u64, 2.5f64.to_bits(), 3, 40];
    // SAFETY: `make24` has this type; `ret` holds an S24; every source is 8 readable bytes.
    let rax = unsafe {
        exec.interpret(
            &plan,
            make24 as *const c_void,
            std::ptr::null_mut(),
            ret,
            |i| Ok(ArgSource::Bits(bits[i])),
        )
    }
    .unwrap();
    assert_eq!(rax, ret as usize as u64);
    assert_eq!(out, S24(41, 2.5, 3));
}

extern "C" fn va_xmm(n: i32, x: f64, y: f64, z: f64) -> f64 {
    n as f64 + x * 10.0 + y * 100.0 + z * 1000.0
}

extern "C" fn va_gpr(_n: i32, x: u64, y: u64, z: u64) -> u64 {
    x ^ y.rotate_left(1) ^ z.rotate_left(2)
}

#[test]
fn variadic_doubles_go_in_both_the_xmm_register_and_the_gpr() {
    let d = FD::of(V::F64, [V::I32, V::F64, V::F32, V::F64]);
    let opts = [LinkerOption::FirstVariadicArg(1)];
    let args = [
        Value::I32(1),
        Value::F64(2.0),
        Value::F32(3.0),
        Value::F64(4.0),
    ];
    let h = link_with(va_xmm as *const c_void, &d, &opts);
    assert_eq!(
        super::classify::describe(h.plan()),
        "(rcx, xmm1+rdx, xmm2+r8, xmm3+r9) -> xmm0"
    );
    // SAFETY: `va_xmm` reads the XMM registers (the float promoted to double).
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(4321.0));
    let h = link_with(
        va_gpr as *const c_void,
        &FD::of(V::I64, [V::I32, V::F64, V::F32, V::F64]),
        &opts,
    );
    let want = 2f64.to_bits() ^ 3f64.to_bits().rotate_left(1) ^ 4f64.to_bits().rotate_left(2);
    // SAFETY: `va_gpr` reads the same calls' GPRs as integers.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(want as i64));
}

#[test]
fn the_c_runtime_formats_variadic_doubles_and_ints() {
    let Ok(snprintf) = crate::linker::SymbolLookup::default_lookup().find("_snprintf") else {
        panic!("the C runtime's _snprintf is not found by the default lookup")
    };
    // int _snprintf(char *buf, size_t n, const char *fmt, ...)
    let d = FD::of(
        V::I32,
        [V::ADDRESS, V::U64, V::ADDRESS, V::F64, V::I32, V::F64],
    );
    let h = Linker::native()
        .downcall(&snprintf, &d, &[LinkerOption::FirstVariadicArg(3)])
        .unwrap();
    let a = arena();
    let buf = a.allocate(64, 1).unwrap();
    let fmt = a.allocate_c_string("%.2f %d %.1f").unwrap();
    let args = [
        Value::Segment(buf),
        Value::U64(64),
        Value::Segment(fmt),
        Value::F64(1.25),
        Value::I32(-7),
        Value::F64(0.5),
    ];
    // SAFETY: `_snprintf` with a 64-byte buffer and a format matching the arguments.
    let n = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(n, Value::I32(11));
    assert_eq!(buf.get_string(0).unwrap(), "1.25 -7 0.5");
}

// A harness that fills every nonvolatile register with a pattern, calls the trampoline and
// records the registers right after it returns (rbx, rbp, rsi, rdi, r12..r15, then the low 64
// bits of xmm6..xmm15), restoring its caller's values before returning. A global symbol: the
// call to it may be compiled into another codegen unit (inside a generic closure).
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl gatun_win64_test_nonvolatile",
    ".def gatun_win64_test_nonvolatile",
    ".scl 2",
    ".type 32",
    ".endef",
    "gatun_win64_test_nonvolatile:",
    ".seh_proc gatun_win64_test_nonvolatile",
    "push rbx",
    ".seh_pushreg rbx",
    "push rbp",
    ".seh_pushreg rbp",
    "push rsi",
    ".seh_pushreg rsi",
    "push rdi",
    ".seh_pushreg rdi",
    "push r12",
    ".seh_pushreg r12",
    "push r13",
    ".seh_pushreg r13",
    "push r14",
    ".seh_pushreg r14",
    "push r15",
    ".seh_pushreg r15",
    "sub rsp, 200",
    ".seh_stackalloc 200",
    "movdqa xmmword ptr [rsp + 32], xmm6",
    ".seh_savexmm xmm6, 32",
    "movdqa xmmword ptr [rsp + 48], xmm7",
    ".seh_savexmm xmm7, 48",
    "movdqa xmmword ptr [rsp + 64], xmm8",
    ".seh_savexmm xmm8, 64",
    "movdqa xmmword ptr [rsp + 80], xmm9",
    ".seh_savexmm xmm9, 80",
    "movdqa xmmword ptr [rsp + 96], xmm10",
    ".seh_savexmm xmm10, 96",
    "movdqa xmmword ptr [rsp + 112], xmm11",
    ".seh_savexmm xmm11, 112",
    "movdqa xmmword ptr [rsp + 128], xmm12",
    ".seh_savexmm xmm12, 128",
    "movdqa xmmword ptr [rsp + 144], xmm13",
    ".seh_savexmm xmm13, 144",
    "movdqa xmmword ptr [rsp + 160], xmm14",
    ".seh_savexmm xmm14, 160",
    "movdqa xmmword ptr [rsp + 176], xmm15",
    ".seh_savexmm xmm15, 176",
    ".seh_endprologue",
    "mov qword ptr [rsp + 192], rdx",
    "mov rax, 0x0101010101010101",
    "mov rbx, rax",
    "lea rbp, [rax + rax]",
    "lea rsi, [rax + rax*2]",
    "lea rdi, [rax*4]",
    "lea r12, [rax + rax*4]",
    "lea r13, [rbp + rbp*2]",
    "lea r14, [rdi + rsi]",
    "lea r15, [rax*8]",
    "lea rdx, [r15 + rax]",
    "movq xmm6, rdx",
    "add rdx, rax",
    "movq xmm7, rdx",
    "add rdx, rax",
    "movq xmm8, rdx",
    "add rdx, rax",
    "movq xmm9, rdx",
    "add rdx, rax",
    "movq xmm10, rdx",
    "add rdx, rax",
    "movq xmm11, rdx",
    "add rdx, rax",
    "movq xmm12, rdx",
    "add rdx, rax",
    "movq xmm13, rdx",
    "add rdx, rax",
    "movq xmm14, rdx",
    "add rdx, rax",
    "movq xmm15, rdx",
    "call {call}",
    "mov rax, qword ptr [rsp + 192]",
    "mov qword ptr [rax], rbx",
    "mov qword ptr [rax + 8], rbp",
    "mov qword ptr [rax + 16], rsi",
    "mov qword ptr [rax + 24], rdi",
    "mov qword ptr [rax + 32], r12",
    "mov qword ptr [rax + 40], r13",
    "mov qword ptr [rax + 48], r14",
    "mov qword ptr [rax + 56], r15",
    "movq qword ptr [rax + 64], xmm6",
    "movq qword ptr [rax + 72], xmm7",
    "movq qword ptr [rax + 80], xmm8",
    "movq qword ptr [rax + 88], xmm9",
    "movq qword ptr [rax + 96], xmm10",
    "movq qword ptr [rax + 104], xmm11",
    "movq qword ptr [rax + 112], xmm12",
    "movq qword ptr [rax + 120], xmm13",
    "movq qword ptr [rax + 128], xmm14",
    "movq qword ptr [rax + 136], xmm15",
    "movdqa xmm6, xmmword ptr [rsp + 32]",
    "movdqa xmm7, xmmword ptr [rsp + 48]",
    "movdqa xmm8, xmmword ptr [rsp + 64]",
    "movdqa xmm9, xmmword ptr [rsp + 80]",
    "movdqa xmm10, xmmword ptr [rsp + 96]",
    "movdqa xmm11, xmmword ptr [rsp + 112]",
    "movdqa xmm12, xmmword ptr [rsp + 128]",
    "movdqa xmm13, xmmword ptr [rsp + 144]",
    "movdqa xmm14, xmmword ptr [rsp + 160]",
    "movdqa xmm15, xmmword ptr [rsp + 176]",
    "add rsp, 200",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rdi",
    "pop rsi",
    "pop rbp",
    "pop rbx",
    "ret",
    ".seh_endproc",
    call = sym super::trampoline::gatun_win64_call,
);

extern "C" {
    /// Calls `gatun_win64_call(frame)` with patterns in every nonvolatile register and writes
    /// the 18 registers after it into `out` (see the harness above).
    fn gatun_win64_test_nonvolatile(frame: *mut CallFrame, out: *mut [u64; 18]);
}

/// Clobbers every volatile register a Rust function may use and writes the last error.
extern "C" fn clobber_volatile(a: i64, b: f64, c: i64, d: f64, e: i64, f: f64) -> i64 {
    // SAFETY: always safe.
    unsafe { SetLastError(77) };
    a + b as i64 + c + d as i64 + e + f as i64
}

#[test]
fn the_trampoline_and_the_upcall_entry_preserve_every_nonvolatile_register() {
    let d = FD::of(V::I64, [V::I64, V::F64, V::I64, V::F64, V::I64, V::F64]);
    let plan = super::classify::plan(&d, None).unwrap();
    let want: Vec<u64> = (1..=18u64).map(|k| k * 0x0101_0101_0101_0101).collect();
    let a = arena();
    // The same function as an upcall: the trampoline calls the stub, the entry, the dispatcher.
    let stub = Linker::native()
        .upcall_stub(
            &d,
            |u| {
                // SAFETY: always safe.
                unsafe { SetLastError(77) };
                let (i, f) = (|k| u.get::<i64>(k), |k| u.get::<f64>(k));
                Ok(Value::I64(
                    i(0)? + f(1)? as i64 + i(2)? + f(3)? as i64 + i(4)? + f(5)? as i64,
                ))
            },
            &a,
        )
        .unwrap();
    let targets = [clobber_volatile as *const c_void, stub.address()];
    for (target, capture) in targets.into_iter().flat_map(|t| [(t, false), (t, true)]) {
        let mut buffer = [1i32, 2, 3];
        let (out, frame) = crate::backend::with_stack_args(plan.stack_bytes(), |stack| {
            let mut frame = CallFrame::new(target, &plan, stack);
            for (k, ap) in plan.args().iter().enumerate() {
                let v = if k % 2 == 0 {
                    k as u64 + 1
                } else {
                    ((k + 1) as f64).to_bits()
                };
                frame.store(stack, ap.moves[0].to, v);
            }
            frame.capture_into(if capture {
                buffer.as_mut_ptr()
            } else {
                std::ptr::null_mut()
            });
            frame.stack = stack.base();
            let mut out = [0u64; 18];
            // SAFETY: the frame follows the plan of both targets' type; the harness restores
            // its caller's registers.
            unsafe { gatun_win64_test_nonvolatile(&mut frame, &mut out) };
            Ok((out, frame))
        })
        .unwrap();
        assert_eq!(out.to_vec(), want, "target {target:?}, capture: {capture}");
        assert_eq!(frame.rax, 21);
        // (Only the direct call: the dispatcher's own code after the closure may leave the
        // last error at another value.)
        if capture && target == clobber_volatile as *const c_void {
            assert_eq!(buffer[0], 77);
        }
    }
}

/// What `last_errors` saw at entry: GetLastError, errno.
static SEEN: AtomicU64 = AtomicU64::new(0);

extern "C" fn last_errors(code: u32, errno: i32) -> i32 {
    // SAFETY: this thread's errno address; the error functions are always safe.
    unsafe {
        // First: a thread-local access may go through `TlsGetValue`, which clears the last
        // error when it succeeds.
        let last = GetLastError();
        let e = crate::os::thread_errno();
        SEEN.store((last as u64) << 32 | *e as u32 as u64, Ordering::Relaxed);
        SetLastError(code);
        *e = errno;
        WSAGetLastError()
    }
}

#[test]
fn capture_restores_the_three_states_before_the_call_and_saves_them_after() {
    let opts = [LinkerOption::CaptureCallState(&[
        "GetLastError",
        "WSAGetLastError",
        "errno",
    ])];
    let h = link_with(
        last_errors as *const c_void,
        &FD::of(V::I32, [V::U32, V::I32]),
        &opts,
    );
    let layout = crate::linker::capture_state_layout();
    assert_eq!((layout.byte_size(), layout.byte_alignment()), (12, 4));
    let a = arena();
    let cap = a.allocate(12, 4).unwrap();
    for (k, v) in [11, 22, 33].into_iter().enumerate() {
        cap.set::<i32>(4 * k, v).unwrap();
    }
    // SAFETY: `last_errors` has this type; `cap` is a 12-byte capture buffer.
    let r = unsafe { h.invoke(&[Value::Segment(cap), Value::U32(5), Value::I32(9)]) }.unwrap();
    // restored before: SetLastError(buffer[0]) last, so the callee sees 11 (not the Winsock 22)
    assert_eq!(SEEN.load(Ordering::Relaxed), 11 << 32 | 33);
    let Value::I32(wsa) = r else { panic!("{r:?}") };
    let saved: Vec<i32> = (0..3).map(|k| cap.get::<i32>(4 * k).unwrap()).collect();
    // saved after: the callee's last error and errno, and what WSAGetLastError gave it
    assert_eq!(saved, [5, wsa, 9]);
}

fn through(stub: &crate::upcall::UpcallStub<'_>) -> DowncallHandle {
    link(stub.address(), stub.descriptor())
}

#[test]
fn upcalls_of_int_and_double_arguments() {
    let a = arena();
    let inc = Linker::native()
        .upcall_stub(
            &FD::of(V::I32, [V::I32]),
            |u| Ok(Value::I32(u.get::<i32>(0)? + 1)),
            &a,
        )
        .unwrap();
    // SAFETY: the stub is an `int (int)` that lives while `inc` does.
    let f: extern "C" fn(i32) -> i32 = unsafe { std::mem::transmute(inc.address()) };
    assert_eq!(f(41), 42);
    assert_eq!(
        // SAFETY: `through` links `inc`'s address with `inc`'s own `int (int)` descriptor;
        // the stub lives (in the arena `a`) while `inc` does, across the call.
        unsafe { through(&inc).invoke(&[Value::I32(-1)]) }.unwrap(),
        Value::I32(0)
    );
    let d = FD::of(V::F64, [V::F64, V::I32]);
    let mul = Linker::native()
        .upcall_stub(
            &d,
            |u| Ok(Value::F64(u.get::<f64>(0)? * u.get::<i32>(1)? as f64)),
            &a,
        )
        .unwrap();
    // SAFETY: the stub is a `double (double, int)`.
    let f: extern "C" fn(f64, i32) -> f64 = unsafe { std::mem::transmute(mul.address()) };
    assert_eq!(f(1.5, 4), 6.0);
    // SAFETY: as above.
    let r = unsafe { through(&mul).invoke(&[Value::F64(-0.25), Value::I32(8)]) }.unwrap();
    assert_eq!(r, Value::F64(-2.0));
}

#[test]
fn upcalls_with_stack_arguments() {
    let a = arena();
    let d = FD::of(V::F64, [V::I64, V::F64, V::I32, V::F32, V::I8, V::F64]);
    let stub = Linker::native()
        .upcall_stub(
            &d,
            |u| {
                Ok(Value::F64(
                    u.get::<i64>(0)? as f64
                        + u.get::<f64>(1)? * 10.0
                        + u.get::<i32>(2)? as f64 * 100.0
                        + u.get::<f32>(3)? as f64 * 1e3
                        + u.get::<i8>(4)? as f64 * 1e4
                        + u.get::<f64>(5)? * 1e5,
                ))
            },
            &a,
        )
        .unwrap();
    assert_eq!(stub.plan().stack_bytes(), 48);
    let want = 1.0 + 20.0 + 300.0 + 4e3 - 5e4 + 6e5;
    // SAFETY: the stub has this type.
    let f: extern "C" fn(i64, f64, i32, f32, i8, f64) -> f64 =
        unsafe { std::mem::transmute(stub.address()) };
    assert_eq!(f(1, 2.0, 3, 4.0, -5, 6.0), want);
    let args = [
        Value::I64(1),
        Value::F64(2.0),
        Value::I32(3),
        Value::F32(4.0),
        Value::I8(-5),
        Value::F64(6.0),
    ];
    assert_eq!(
        // SAFETY: `through` links `stub`'s address with `stub`'s own
        // `double (int64_t, double, int, float, int8_t, double)` descriptor; the stub lives
        // (in the arena `a`) while `stub` does, across the call.
        unsafe { through(&stub).invoke(&args) }.unwrap(),
        Value::F64(want)
    );
}

#[test]
fn upcalls_take_by_reference_structs_and_return_through_the_hidden_pointer() {
    let a = arena();
    let (s16, s24, f2) = (
        st([V::F64, V::I64]),
        st([V::I64, V::F64, V::I64]),
        st([V::F32, V::F32]),
    );
    // S24 f(int, S16 by reference, F2 in a GPR, S24 by reference on the stack slot... ) with the
    // hidden pointer in rcx shifting the slots: rcx ret, rdx int, r8 &S16, r9 F2, [32] &S24.
    let d = FD::of(&s24, [V::I32.into(), s16, f2, s24.clone()]);
    let seen = Cell::new(0usize);
    let stub = Linker::native()
        .upcall_stub_confined(
            &d,
            |u| {
                let x = u.get::<i32>(0)?;
                let b: S16 = read(&u.segment(1)?);
                let c: F2 = read(&u.segment(2)?);
                let big = u.segment(3)?;
                seen.set(big.address());
                let e: S24 = read(&big);
                big.set::<i64>(0, -9)?; // the caller's copy: allowed
                let r = u.return_segment().unwrap();
                r.set::<i64>(0, x as i64 + b.1 + e.0)?;
                r.set::<f64>(8, b.0 + c.0 as f64 + c.1 as f64 + e.1)?;
                r.set::<i64>(16, e.2)?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    assert_eq!(
        super::classify::describe(stub.plan()),
        "(ret-ptr:rcx, rdx, &r8, r9, &rsp+32) -> memory"
    );
    let want = S24(1 + 8 + 100, 0.5 + 1.0 + 2.0 + 3.0, 7);
    // Rust calling the stub as C: the by-reference structs are Rust's own copies.
    // SAFETY: the stub has this type and lives; called on its thread.
    let f: extern "C" fn(i32, S16, F2, S24) -> S24 = unsafe { std::mem::transmute(stub.address()) };
    let mine = S24(100, 3.0, 7);
    assert_eq!(f(1, S16(0.5, 8), F2(1.0, 2.0), mine), want);
    assert_eq!(mine, S24(100, 3.0, 7));
    // a downcall into the stub: the executor's copies, and the caller's segment is unchanged
    let h = through(&stub);
    let segs = [
        seg_of(&a, S16(0.5, 8)),
        seg_of(&a, F2(1.0, 2.0)),
        seg_of(&a, mine),
    ];
    let args = [
        Value::I32(1),
        Value::Segment(segs[0]),
        Value::Segment(segs[1]),
        Value::Segment(segs[2]),
    ];
    // SAFETY: as above.
    let r = unsafe { h.invoke_into(&a, &args) }.unwrap();
    let Value::Segment(r) = r else {
        panic!("{r:?}")
    };
    assert_eq!(read::<S24>(&r), want);
    assert_ne!(seen.get(), segs[2].address());
    assert_eq!(seen.get() % 16, 0);
    assert_eq!(read::<S24>(&segs[2]), mine);
}

/// What the `CreateThread` thread runs: the stub as a C function pointer, and its result.
#[repr(C)]
struct ThreadCall {
    f: extern "C" fn(f64, i32, F2) -> f64,
    result: f64,
}

#[link(name = "kernel32")]
extern "system" {
    fn CreateThread(
        attributes: *mut c_void,
        stack_size: usize,
        start: unsafe extern "system" fn(*mut c_void) -> u32,
        parameter: *mut c_void,
        flags: u32,
        thread_id: *mut u32,
    ) -> *mut c_void;
    fn WaitForSingleObject(handle: *mut c_void, milliseconds: u32) -> u32;
    fn CloseHandle(handle: *mut c_void) -> i32;
    fn GetCurrentThreadId() -> u32;
}

unsafe extern "system" fn thread_main(p: *mut c_void) -> u32 {
    // SAFETY: `p` is the `ThreadCall` the test keeps alive until the thread has exited.
    let call = unsafe { &mut *p.cast::<ThreadCall>() };
    call.result = (call.f)(2.5, 3, F2(0.25, 0.5));
    0
}

#[test]
fn upcalls_run_on_a_thread_created_with_create_thread() {
    let a = arena();
    let ran_on = std::sync::atomic::AtomicU32::new(0);
    // an 8-byte struct argument: the dispatcher copies it into the new thread's linker stack
    let d = FD::of(V::F64, [V::F64.into(), V::I32.into(), st([V::F32, V::F32])]);
    let stub = Linker::native()
        .upcall_stub(
            &d,
            |u| {
                // SAFETY: always safe.
                ran_on.store(unsafe { GetCurrentThreadId() }, Ordering::Relaxed);
                let p: F2 = read(&u.segment(2)?);
                Ok(Value::F64(
                    u.get::<f64>(0)? * u.get::<i32>(1)? as f64 + (p.0 + p.1) as f64,
                ))
            },
            &a,
        )
        .unwrap();
    let mut call = ThreadCall {
        // SAFETY: the stub has this type and lives until after the thread has exited.
        f: unsafe {
            std::mem::transmute::<*const c_void, extern "C" fn(f64, i32, F2) -> f64>(stub.address())
        },
        result: 0.0,
    };
    let mut id = 0u32;
    // SAFETY: `thread_main` gets `call`, which outlives the thread (joined below).
    let thread = unsafe {
        CreateThread(
            std::ptr::null_mut(),
            0,
            thread_main,
            (&mut call as *mut ThreadCall).cast(),
            0,
            &mut id,
        )
    };
    assert!(!thread.is_null(), "CreateThread failed");
    // A generous watchdog (60 s), not a timing: the thread makes one call.
    // SAFETY: a live thread handle, closed once after the wait.
    let waited = unsafe { WaitForSingleObject(thread, 60_000) };
    // SAFETY: as above.
    unsafe { CloseHandle(thread) };
    assert_eq!(waited, 0, "the thread did not finish");
    assert_eq!(call.result, 8.25);
    // SAFETY: always safe.
    let main = unsafe { GetCurrentThreadId() };
    assert_eq!(ran_on.load(Ordering::Relaxed), id);
    assert_ne!(id, main);
}

/// The backtrace taken inside the innermost call of the unwind test.
static WALK: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

extern "C" fn take_backtrace(x: i32) -> i32 {
    *WALK.lock().unwrap() = std::backtrace::Backtrace::force_capture().to_string();
    x + 1
}

#[test]
fn stack_walks_pass_through_the_trampoline_and_the_upcall_entry() {
    // A downcall straight into a function that walks the stack: the walk must reach this
    // test's frame, below the trampoline (its `.pdata`/`.xdata` unwind it).
    let h = link(take_backtrace as *const c_void, &FD::of(V::I32, [V::I32]));
    assert_eq!(
        // SAFETY: `take_backtrace` is a Rust `extern "C" fn(i32) -> i32`, the descriptor's
        // `int (int)`, alive for the program.
        unsafe { h.invoke(&[Value::I32(1)]) }.unwrap(),
        Value::I32(2)
    );
    let walk = std::mem::take(&mut *WALK.lock().unwrap());
    assert!(
        walk.contains("stack_walks_pass_through_the_trampoline"),
        "{walk}"
    );
    // A downcall into an upcall whose closure walks the stack: through the dispatcher, the
    // upcall entry and the trampoline, down to this test.
    let a = arena();
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(V::I32, [V::I32]),
            |u| {
                *WALK.lock().unwrap() = std::backtrace::Backtrace::force_capture().to_string();
                Ok(Value::I32(u.get::<i32>(0)? * 3))
            },
            &a,
        )
        .unwrap();
    assert_eq!(
        // SAFETY: `through` links `stub`'s address with `stub`'s own `int (int)` descriptor;
        // the stub lives (in the arena `a`) while `stub` does, across the call.
        unsafe { through(&stub).invoke(&[Value::I32(5)]) }.unwrap(),
        Value::I32(15)
    );
    let walk = std::mem::take(&mut *WALK.lock().unwrap());
    assert!(walk.contains("gatun_upcall_dispatch"), "{walk}");
    assert!(
        walk.contains("stack_walks_pass_through_the_trampoline"),
        "{walk}"
    );
}

extern "C" fn call_back(f: extern "C" fn(i32, S24) -> i64, depth: i32, s: S24) -> i64 {
    f(depth, s) + s.2
}

#[test]
fn deep_reentrancy_with_by_reference_copies_at_every_level() {
    // downcall call_back(stub, n, s) -> upcall closure(n, s) -> downcall call_back(stub, n - 1,
    // s') -> ... : every level passes a 24-byte struct by reference both ways, so the downcall
    // copies and the upcall segments nest on the linker stack.
    let s24 = st([V::I64, V::F64, V::I64]);
    let cb = link(
        call_back as *const c_void,
        &FD::of(V::I64, [V::ADDRESS.into(), V::I32.into(), s24.clone()]),
    );
    let a = arena();
    let stub_addr = AtomicUsize::new(0);
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(V::I64, [V::I32.into(), s24.clone()]),
            |u| {
                let (depth, s) = (u.get::<i32>(0)?, u.segment(1)?);
                let v: S24 = read(&s);
                assert_eq!((v.0, v.2), (depth as i64, depth as i64));
                if depth == 0 {
                    return Ok(Value::I64(0));
                }
                let inner = arena();
                let d = (depth - 1) as i64;
                let next = seg_of(&inner, S24(d, 0.5, d));
                let stub = Value::Address(stub_addr.load(Ordering::Relaxed) as *mut c_void);
                // SAFETY: call_back's type; the stub lives for the whole test.
                let r = unsafe { cb.invoke(&[stub, Value::I32(depth - 1), Value::Segment(next)]) }?;
                assert_eq!(read::<S24>(&next), S24(d, 0.5, d), "copied, not shared");
                Ok(Value::I64(r.as_i64().unwrap() + 1))
            },
            &a,
        )
        .unwrap();
    stub_addr.store(stub.address() as usize, Ordering::Relaxed);
    let depth = 40;
    let top = seg_of(&a, S24(depth as i64, 0.5, depth as i64));
    // SAFETY: call_back's type; the stub lives.
    let r =
        unsafe { cb.invoke(&[stub.as_value(), Value::I32(depth), Value::Segment(top)]) }.unwrap();
    // each level adds 1 (the closure) plus its s.2 (call_back): 40 + (40 + 39 + ... + 0)
    assert_eq!(r, Value::I64(40 + (0..=40).sum::<i64>()));
    crate::backend::test_values::assert_linker_stack_is_empty();
}

#[test]
fn invoke_into_takes_the_struct_entry_for_hidden_pointer_returns() {
    crate::backend::test_values::check_struct_entry_path();
}
