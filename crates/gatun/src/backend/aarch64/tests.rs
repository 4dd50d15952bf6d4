//! The AArch64 executor against Rust `extern "C"` functions (which follow AAPCS64 as C does):
//! every argument class of §6.8.2, the results of §6.9, by-reference copies (B.3), x8, errno
//! capture, conversions, variadic calls, and upcalls of the same classes both ways (a downcall
//! into the upcall stub). Run under qemu on an x86-64 host.
//!
//! # AAPCS64: rules and the tests that cover them
//!
//! Rule numbers as in the AArch64 classifier (`src/abi/aarch64.rs`) (the AAPCS64 numbering up to its 2019Q4
//! edition; the module docs map them to the 2020Q2-and-later numbers, which insert the SVE rules).
//! Classification tests check plans (`abi/aarch64/tests.rs` on every host; `tests/aarch64_oracle.rs`
//! against gcc and clang, counting each rule by the labels quoted below). Execution tests call
//! real code under qemu or on hardware: `backend/aarch64/tests.rs` runs every case through the
//! compiled stub *and* the trampoline and compares; `backend/aarch64/stub/tests.rs` checks the
//! emitted words (and calls some stubs); `tests/downcall_prop.rs` (generated signatures against C
//! callees, stub, trampoline and raw paths), `tests/upcall_prop.rs` (C calling back),
//! `tests/stub_differential.rs` (stub and trampoline into a recorder, 10,000 random signatures).
//!
//! | rule | classification | execution |
//! |---|---|---|
//! | B.2 HFA (1–4 `float`/`double` leaves, no padding) | `b2_hfa_found_through_nested_structs_arrays_and_unions`, `b2_not_an_hfa`, `b2_zero_length_array_inside_a_member_gcc_rejects_clang_skips`, `hfa_detection_is_linear_on_shared_layouts_and_skips_zero_size_parts`; oracle "B.2 HFA in v registers", "B.2 HFA of 4" | `hfas_of_floats_and_doubles_in_vector_registers_both_ways`, `upcalls_take_and_return_hfas_pairs_and_by_reference_structs`; stub `hfas_take_consecutive_vector_registers`, `hfas_of_two_and_four_members_and_an_hfa_spilled_whole_with_nsrn_8` |
//! | B.3 over 16 bytes, not an HFA: by reference | `b3_composites_over_16_bytes_go_by_reference`, `huge_composites_cost_nothing_they_go_by_reference`; oracle "B.3 by reference in a GPR", "B.3 by reference on the stack" | `composites_over_16_bytes_are_passed_as_a_pointer_to_a_copy`, `by_reference_pointers_past_x7_go_in_stack_slots_and_large_frames_fall_back_to_the_heap` (asserts the heap fallback on both paths), `deep_reentrancy_with_by_reference_copies_at_every_level`; stub `large_composites_go_through_the_caller_copies`; `tests/sysv_zero_alloc.rs` (a 100-byte by-reference argument, no allocation) |
//! | B.4 size rounded up to 8 | `b4_composites_are_rounded_up_to_eight_bytes` | `composites_of_9_to_16_bytes_take_an_x_pair_or_go_whole_to_the_stack`; stub `odd_sizes_are_assembled_from_exact_pieces`, `odd_size_structs_never_read_past_their_bytes` |
//! | C.1–C.6 floating point, HFA all or nothing (NSRN = 8) | `c1_to_c6_hfa_all_or_nothing_then_nsrn_is_8`; oracle "C.3 HFA on the stack, v registers left", "HFA on the stack" | `floats_and_doubles_go_in_s_and_d_registers_then_the_stack`, `hfas_of_floats_and_doubles_in_vector_registers_both_ways`; stub `floats_and_doubles_in_vector_registers_and_the_result_bits_in_x0`, `hfas_of_two_and_four_members_and_an_hfa_spilled_whole_with_nsrn_8` |
//! | C.7 integers, bools, pointers in the next GPR | (every plan test); oracle "narrow integer in a GPR" | `integers_fill_x0_to_x7_then_the_stack`, `bools_and_narrow_integers_are_converted_both_ways`; stub `narrow_integers_are_sign_or_zero_extended_and_bools_normalised` |
//! | C.8 16-aligned composite at an even GPR (Linux) | `c8_sixteen_aligned_composites_start_at_an_even_gpr_on_linux`; oracle "C.8 16-aligned at an even GPR", "16-aligned at an odd GPR" (Apple) | `a_16_byte_aligned_composite_starts_at_an_even_gpr`; stub `composites_in_gpr_pairs_at_even_registers_and_spilled_whole` |
//! | C.10–C.11 composite in consecutive GPRs or wholly on the stack (NGRN = 8) | `c10_c11_composite_in_consecutive_gprs_or_wholly_on_the_stack`; oracle "C.10 composite in two GPRs", "C.11 composite on the stack, GPRs left" | `composites_of_9_to_16_bytes_take_an_x_pair_or_go_whole_to_the_stack`; stub `composites_in_gpr_pairs_at_even_registers_and_spilled_whole` |
//! | C.12–C.15 stack slots (NSAA at max(8, natural alignment), whole 8-byte slots) | `c12_to_c15_linux_stack_slots_at_max_8_and_natural_alignment`, `the_stack_limit_is_checked_once_and_exactly`; oracle "C.12 16-aligned on the stack", "narrow integer on the stack" | `integers_fill_x0_to_x7_then_the_stack`, `upcalls_receive_integers_floats_and_stack_arguments`; stub `many_arguments_spill_to_whole_stack_slots`, `large_value_offsets_use_register_offsets` |
//! | §6.9 results: x0/x1, v0–v3, memory at x8 | `results_in_x0_x1_v0_to_v3_or_memory_at_x8`; oracle "result composite in x0/x1", "result HFA in v0..v3", "result in memory (x8)" | `large_results_are_written_through_x8`, `upcalls_take_and_return_hfas_pairs_and_by_reference_structs`; stub `results_through_x8_and_in_x0_x1_and_v0_v3`; `tests/upcall.rs` `struct_arguments_and_returns_of_every_sysv_class` |
//! | variadics (Linux: as named, `float` promoted) | `variadic_arguments_on_linux_are_passed_as_named_ones`; oracle "Linux variadic in registers" | `variadic_arguments_are_passed_as_named_ones_and_floats_promoted`; stub `variadic_calls_promote_floats_and_pass_like_named_arguments` |
//! | errno capture window (set right before the call, saved right after) | — | `errno_is_captured_after_and_restored_before_the_call`; stub `capture_restores_right_before_and_saves_right_after_the_call`, `capture_restores_errno_before_and_saves_it_after`; `tests/capture.rs` |
//! | x18 never named; `bti c` at every stub entry | plans never name a register above x8 (`location_names`) | stub `every_word_is_known_and_no_word_names_x18`, `id_i32_raw_entry_is_a_tail_jump`, `values_entry_checks_then_frames_the_call`; upcall stubs `stub_code_loads_the_context_into_x17_and_branches_to_the_entry_through_x16` (`bti c`, x16/x17); encoder `encoders_match_the_gnu_assembler_words` |
//! | values-entry checks (`x9` = 1, nothing called) | — | stub `values_entry_rejects_wrong_tags_and_short_segments_without_calling` |
//!
//! Known gaps: no test plants sentinels in the callee-saved registers (x19–x28, d8–d15) and checks
//! them after a call (the stubs touch only x29/x30, by construction); `sp`'s 16-byte alignment at
//! the call is checked only implicitly (callees that would fault or misbehave on a misaligned
//! stack); no test executes a variadic call with a composite argument (classification only, in the
//! oracle); nothing checks the assembly of the trampoline and the upcall entry for x18 (they are
//! `global_asm!` text that names none; only the generated stub words are scanned).

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::abi::Location;
use crate::backend::test_values::{arena, read, seg_of, st};
use crate::layout::{MemoryLayout, ValueLayout as V};
use crate::linker::{DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol};
use crate::memory::SegmentAllocator;
use crate::Value;

/// A function linked twice: through its compiled stub (`.0`, asserted) and through the
/// trampoline (`.1`, [`DowncallHandle::interpreted`]). Every call runs on both paths, which
/// must give the same result; the compiled path's is returned.
struct Both(DowncallHandle, DowncallHandle);

impl Both {
    fn plan(&self) -> &crate::abi::CallPlan {
        self.0.plan()
    }

    /// # Safety
    /// As [`DowncallHandle::invoke`].
    unsafe fn invoke(&self, args: &[Value<'_>]) -> crate::Result<Value<'static>> {
        // SAFETY: forwarded.
        let (c, t) = unsafe { (self.0.invoke(args), self.1.invoke(args)) };
        assert_eq!(format!("{c:?}"), format!("{t:?}"), "compiled vs trampoline");
        c
    }

    /// # Safety
    /// As [`DowncallHandle::invoke_into`].
    unsafe fn invoke_into<'a, A: SegmentAllocator + ?Sized>(
        &self,
        allocator: &'a A,
        args: &[Value<'_>],
    ) -> crate::Result<Value<'a>> {
        // SAFETY: forwarded.
        let (c, t) = unsafe {
            (
                self.0.invoke_into(allocator, args),
                self.1.invoke_into(allocator, args),
            )
        };
        // A struct result's bytes are not compared here (padding is left uninitialised); both
        // must succeed or fail alike, and the tests check the returned contents.
        match (&c, &t) {
            (Ok(Value::Segment(_)), Ok(Value::Segment(_))) => {}
            _ => assert_eq!(format!("{c:?}"), format!("{t:?}"), "compiled vs trampoline"),
        }
        c
    }

    /// # Safety
    /// As [`DowncallHandle::invoke_raw`] (`ret` holds at most 64 bytes).
    unsafe fn invoke_raw(&self, args: &[*const u8], ret: *mut u8) -> crate::Result<()> {
        let n = self
            .0
            .descriptor()
            .return_layout()
            .map_or(0, |l| l.byte_size());
        assert!(n <= 64);
        let mut theirs = [0u64; 8];
        // SAFETY: forwarded; `theirs` holds 64 bytes, 8-aligned.
        unsafe { self.1.invoke_raw(args, theirs.as_mut_ptr().cast()) }?;
        // SAFETY: forwarded.
        unsafe { self.0.invoke_raw(args, ret) }?;
        // SAFETY: `ret` holds the return layout's `n` bytes, just written.
        let ours = unsafe { std::slice::from_raw_parts(ret, n) };
        // SAFETY: `theirs` holds 64 bytes.
        let theirs = unsafe { std::slice::from_raw_parts(theirs.as_ptr().cast::<u8>(), n) };
        assert_eq!(ours, theirs, "compiled vs trampoline");
        Ok(())
    }
}

fn link_with(f: *const c_void, d: &FD, options: &[LinkerOption]) -> Both {
    // SAFETY: `f` is a Rust function of the descriptor's C type, alive for the program.
    let sym = unsafe { Symbol::from_address(f) };
    let h = Linker::native().downcall(&sym, d, options).unwrap();
    assert!(h.uses_compiled_stub(), "{h:?}");
    let t = h.interpreted();
    assert!(!t.uses_compiled_stub());
    Both(h, t)
}

fn link(f: *const c_void, d: &FD) -> Both {
    link_with(f, d, &[])
}

extern "C" fn ints10(
    a: i64,
    b: i64,
    c: i64,
    d: i64,
    e: i64,
    f: i64,
    g: i64,
    h: i64,
    i: i64,
    j: i32,
) -> i64 {
    [a, b, c, d, e, f, g, h, i, j as i64]
        .iter()
        .enumerate()
        .map(|(k, v)| v * 10i64.pow(k as u32))
        .sum()
}

#[test]
fn integers_fill_x0_to_x7_then_the_stack() {
    let d = FD::of(
        V::I64,
        [
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I32,
        ],
    );
    let h = link(ints10 as *const c_void, &d);
    assert_eq!(h.plan().stack_bytes(), 16);
    let args: Vec<Value> = (1..=9).map(Value::I64).chain([Value::I32(-1)]).collect();
    // SAFETY: ints10 has this type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::I64(ints10(1, 2, 3, 4, 5, 6, 7, 8, 9, -1)));
}

extern "C" fn floats10(
    a: f32,
    b: f64,
    c: f32,
    d: f64,
    e: f32,
    f: f64,
    g: f32,
    h: f64,
    i: f32,
    j: f64,
) -> f64 {
    a as f64
        + 2.0 * b
        + 3.0 * c as f64
        + 4.0 * d
        + 5.0 * e as f64
        + 6.0 * f
        + 7.0 * g as f64
        + 8.0 * h
        + 9.0 * i as f64
        + 10.0 * j
}

extern "C" fn half(x: f32) -> f32 {
    x / 2.0
}

#[test]
fn floats_and_doubles_go_in_s_and_d_registers_then_the_stack() {
    let d = FD::of(
        V::F64,
        [
            V::F32,
            V::F64,
            V::F32,
            V::F64,
            V::F32,
            V::F64,
            V::F32,
            V::F64,
            V::F32,
            V::F64,
        ],
    );
    let h = link(floats10 as *const c_void, &d);
    assert_eq!(h.plan().stack_bytes(), 16);
    let args: Vec<Value> = (1..=10)
        .map(|k| {
            if k % 2 == 1 {
                Value::F32(k as f32 + 0.5)
            } else {
                Value::F64(k as f64 + 0.25)
            }
        })
        .collect();
    // SAFETY: floats10 has this type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    let want = floats10(1.5, 2.25, 3.5, 4.25, 5.5, 6.25, 7.5, 8.25, 9.5, 10.25);
    assert_eq!(r, Value::F64(want));
    let h = link(half as *const c_void, &FD::of(V::F32, [V::F32]));
    assert_eq!(
        // SAFETY: `half` is a Rust `extern "C" fn(f32) -> f32`, the descriptor's
        // `float (float)`, alive for the program; the argument is a plain value.
        unsafe { h.invoke(&[Value::F32(-3.0)]) }.unwrap(),
        Value::F32(-1.5)
    );
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct F3 {
    a: f32,
    b: f32,
    c: f32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct D4 {
    a: f64,
    b: f64,
    c: f64,
    d: f64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct F2 {
    a: f32,
    b: f32,
}

extern "C" fn hfa_mix(x: F3, y: D4, z: F2) -> F3 {
    F3 {
        a: x.a + y.a as f32 + z.a,
        b: x.b + y.b as f32 + z.b,
        c: x.c + (y.c + y.d) as f32,
    }
}

extern "C" fn hfa_d4(s: f64) -> D4 {
    D4 {
        a: s,
        b: 2.0 * s,
        c: 3.0 * s,
        d: 4.0 * s,
    }
}

#[test]
fn hfas_of_floats_and_doubles_in_vector_registers_both_ways() {
    let (f3, d4, f2) = (st([V::F32; 3]), st([V::F64; 4]), st([V::F32; 2]));
    let d = FD::of(&f3, [&f3, &d4, &f2]);
    let h = link(hfa_mix as *const c_void, &d);
    // 3 + 4 registers, then the F2 no longer fits (C.3): on the stack.
    assert_eq!(h.plan().stack_bytes(), 8);
    let a = arena();
    let x = F3 {
        a: 1.0,
        b: 2.0,
        c: 3.0,
    };
    let y = D4 {
        a: 10.0,
        b: 20.0,
        c: 30.0,
        d: 40.0,
    };
    let z = F2 { a: 0.5, b: 0.25 };
    let args = [seg_of(&a, x), seg_of(&a, y), seg_of(&a, z)].map(Value::Segment);
    // SAFETY: hfa_mix has this type.
    let r = unsafe { h.invoke_into(&a, &args) }.unwrap();
    let Value::Segment(r) = r else {
        panic!("{r:?}")
    };
    assert_eq!(read::<F3>(&r), hfa_mix(x, y, z));

    let h = link(hfa_d4 as *const c_void, &FD::of(&d4, [V::F64]));
    // SAFETY: hfa_d4 has this type.
    let Value::Segment(r) = unsafe { h.invoke_into(&a, &[Value::F64(1.5)]) }.unwrap() else {
        panic!()
    };
    assert_eq!(read::<D4>(&r), hfa_d4(1.5));
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct I3 {
    a: i32,
    b: i32,
    c: i32,
}

extern "C" fn pair_and_spill(
    a: i64,
    b: i64,
    c: i64,
    d: i64,
    e: i64,
    f: i64,
    g: I3,
    h: i64,
    s: I3,
    t: i64,
) -> I3 {
    I3 {
        a: g.a + s.a + (a + b + c) as i32,
        b: g.b + s.b + (d + e + f) as i32,
        c: g.c + s.c + (h * 100 + t) as i32,
    }
}

#[test]
fn composites_of_9_to_16_bytes_take_an_x_pair_or_go_whole_to_the_stack() {
    let i3 = st([V::I32; 3]);
    let l: MemoryLayout = V::I64.into();
    let d = FD::of(&i3, [&l, &l, &l, &l, &l, &l, &i3, &l, &i3, &l]);
    let h = link(pair_and_spill as *const c_void, &d);
    let p = h.plan();
    // g in x6+x7; h: NGRN 8, stack 0; s: whole on the stack (C.11) at 8; t at 24.
    assert_eq!(p.args()[6].moves[0].to, Location::Int(6));
    assert_eq!(p.args()[8].moves[0].to, Location::Stack(8));
    assert_eq!(p.args()[9].moves[0].to, Location::Stack(24));
    let a = arena();
    let (g, s) = (
        I3 { a: 1, b: 2, c: 3 },
        I3 {
            a: 10,
            b: 20,
            c: 30,
        },
    );
    let mut args: Vec<Value> = (1..=6).map(Value::I64).collect();
    args.extend([
        Value::Segment(seg_of(&a, g)),
        Value::I64(7),
        Value::Segment(seg_of(&a, s)),
        Value::I64(9),
    ]);
    // SAFETY: pair_and_spill has this type.
    let Value::Segment(r) = unsafe { h.invoke_into(&a, &args) }.unwrap() else {
        panic!()
    };
    assert_eq!(read::<I3>(&r), pair_and_spill(1, 2, 3, 4, 5, 6, g, 7, s, 9));
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct A16 {
    v: u128,
}

extern "C" fn even_pair(a: i64, x: A16, b: i64) -> u64 {
    (x.v >> 64) as u64 ^ (x.v as u64) ^ (a as u64) << 8 ^ (b as u64) << 16
}

#[test]
fn a_16_byte_aligned_composite_starts_at_an_even_gpr() {
    let member = V::U64.with_byte_alignment(16).unwrap();
    let a16 = MemoryLayout::c_struct([MemoryLayout::from(member), V::U64.into()]).unwrap();
    assert_eq!((a16.byte_size(), a16.byte_alignment()), (16, 16));
    let d = FD::of(V::U64, [V::I64.into(), a16, V::I64.into()]);
    let h = link(even_pair as *const c_void, &d);
    let regs: Vec<Location> = h.plan().args()[1].moves.iter().map(|m| m.to).collect();
    assert_eq!(regs, [Location::Int(2), Location::Int(3)]); // x1 skipped (C.8)
    assert_eq!(h.plan().args()[2].moves[0].to, Location::Int(4));
    let ar = arena();
    let x = A16 {
        v: 0x1111_2222_3333_4444_5555_6666_7777_8888,
    };
    let args = [Value::I64(3), Value::Segment(seg_of(&ar, x)), Value::I64(5)];
    assert_eq!(
        // SAFETY: `even_pair` is a Rust `extern "C" fn(i64, A16, i64) -> u64`, the
        // descriptor's `uint64_t (int64_t, struct { 16-aligned uint64_t; uint64_t }, int64_t)`;
        // the segment holds an `A16` in the arena `ar`, alive across the call.
        unsafe { h.invoke(&args) }.unwrap(),
        Value::U64(even_pair(3, x, 5))
    );
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Big {
    a: i64,
    b: i64,
    c: i64,
    d: i32,
}

static SEEN_AT: AtomicUsize = AtomicUsize::new(0);

extern "C" fn by_ref(x: i32, mut big: Big, y: i32) -> i64 {
    SEEN_AT.store(&big as *const Big as usize, Ordering::Relaxed);
    let sum = big.a + 10 * big.b + 100 * big.c + 1000 * big.d as i64 + 10_000 * (x + y) as i64;
    big.a = -1; // writes the caller's copy, never the original
    big.d = -1;
    std::hint::black_box(&mut big);
    sum
}

#[test]
fn composites_over_16_bytes_are_passed_as_a_pointer_to_a_copy() {
    let big = st([V::I64, V::I64, V::I64, V::I32]);
    let d = FD::of(V::I64, [V::I32.into(), big, V::I32.into()]);
    let h = link(by_ref as *const c_void, &d);
    assert_eq!(h.plan().args()[1].by_reference, Some(Location::Int(1)));
    let a = arena();
    let v = Big {
        a: 1,
        b: 2,
        c: 3,
        d: 4,
    };
    let s = seg_of(&a, v);
    let args = [Value::I32(5), Value::Segment(s), Value::I32(6)];
    for h in [&h.0, &h.1] {
        assert_eq!(
            // SAFETY: `by_ref` is a Rust `extern "C" fn(i32, Big, i32) -> i64`, the
            // descriptor's `int64_t (int32_t, struct { int64_t a, b, c; int32_t d; }, int32_t)`;
            // `s` holds a `Big` in the arena `a`, alive across the call (the callee gets a copy).
            unsafe { h.invoke(&args) }.unwrap(),
            Value::I64(110_000 + 4321)
        );
        assert_eq!(read::<Big>(&s), v, "the caller's segment is unchanged");
        assert_ne!(SEEN_AT.load(Ordering::Relaxed), s.address());
        // the raw path copies too
        let (x, y) = (5i32, 6i32);
        let ptrs = [
            &x as *const i32 as *const u8,
            s.as_ptr() as *const u8,
            &y as *const i32 as *const u8,
        ];
        let mut out = 0i64;
        // SAFETY: each pointer covers its argument; `out` holds the i64 result.
        unsafe { h.invoke_raw(&ptrs, (&mut out as *mut i64).cast()) }.unwrap();
        assert_eq!((out, read::<Big>(&s)), (114_321, v));
    }
    // and both raw paths agree
    let (x, y) = (5i32, 6i32);
    let ptrs = [
        &x as *const i32 as *const u8,
        s.as_ptr() as *const u8,
        &y as *const i32 as *const u8,
    ];
    let mut out = 0i64;
    // SAFETY: each pointer covers its argument; `out` holds the i64 result.
    unsafe { h.invoke_raw(&ptrs, (&mut out as *mut i64).cast()) }.unwrap();
    assert_eq!(out, 114_321);
}

thread_local! {
    /// Calls of `many_by_ref` that found the linker stack's block free (copies on the heap).
    static COPIES_OFF_THE_BLOCK: Cell<usize> = const { Cell::new(0) };
}

extern "C" fn many_by_ref(
    a: Big,
    b: Big,
    c: Big,
    d: Big,
    e: Big,
    f: Big,
    g: Big,
    h: Big,
    i: Big,
    j: Big,
) -> i64 {
    // Where the caller put the copies: if the linker stack's block still takes a frame of its
    // whole size without falling back, the copies' frame is not in the block (it is on the
    // heap).
    let stack = crate::memory::linker_stack();
    let probe = stack.push_frame(stack.byte_size(), 8).unwrap();
    if !probe.is_fallback() {
        COPIES_OFF_THE_BLOCK.with(|n| n.set(n.get() + 1));
    }
    drop(probe);
    [a, b, c, d, e, f, g, h, i, j]
        .iter()
        .map(|x| x.a + x.d as i64)
        .sum()
}

#[test]
fn by_reference_pointers_past_x7_go_in_stack_slots_and_large_frames_fall_back_to_the_heap() {
    // ten copies of 32 bytes: 320 bytes, more than the 256-byte linker stack holds.
    let big = st([V::I64, V::I64, V::I64, V::I32]);
    let d = FD::of(V::I64, vec![big; 10]);
    let h = link(many_by_ref as *const c_void, &d);
    assert_eq!(h.plan().args()[9].by_reference, Some(Location::Stack(8)));
    let a = arena();
    let segs: Vec<_> = (0..10)
        .map(|k| {
            seg_of(
                &a,
                Big {
                    a: k,
                    b: 0,
                    c: 0,
                    d: 100,
                },
            )
        })
        .collect();
    let args: Vec<Value> = segs.iter().copied().map(Value::Segment).collect();
    // The premise: the copies (320 bytes, plus the stub's 80-byte pointer array) do not fit
    // in the linker stack's block.
    assert!(crate::memory::linker_stack().byte_size() < 320);
    COPIES_OFF_THE_BLOCK.with(|n| n.set(0));
    // SAFETY: many_by_ref has this type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(45 + 1000));
    // Both paths (stub and trampoline) ran with their copies' frame on the heap.
    assert_eq!(COPIES_OFF_THE_BLOCK.with(Cell::get), 2);
}

extern "C" fn make_big(a: i64, d: i32) -> Big {
    Big {
        a,
        b: a + 1,
        c: a + 2,
        d,
    }
}

#[test]
fn large_results_are_written_through_x8() {
    let big = st([V::I64, V::I64, V::I64, V::I32]);
    let h = link(make_big as *const c_void, &FD::of(&big, [V::I64, V::I32]));
    assert_eq!(h.plan().hidden_return_pointer(), Some(Location::Int(8)));
    // x8 shifts nothing: the first argument is still in x0
    assert_eq!(h.plan().args()[0].moves[0].to, Location::Int(0));
    let a = arena();
    // SAFETY: make_big has this type.
    let Value::Segment(r) = unsafe { h.invoke_into(&a, &[Value::I64(7), Value::I32(-3)]) }.unwrap()
    else {
        panic!()
    };
    assert_eq!(read::<Big>(&r), make_big(7, -3));
}

extern "C" fn set_errno(v: i32, ret: i32) -> i32 {
    // SAFETY: this thread's errno.
    unsafe { *crate::os::thread_errno() = v };
    ret
}

extern "C" fn get_errno() -> i32 {
    // SAFETY: this thread's errno.
    unsafe { *crate::os::thread_errno() }
}

#[test]
fn errno_is_captured_after_and_restored_before_the_call() {
    let opts = [LinkerOption::CaptureCallState(&["errno"])];
    let set = link_with(
        set_errno as *const c_void,
        &FD::of(V::I32, [V::I32, V::I32]),
        &opts,
    );
    let get = link_with(get_errno as *const c_void, &FD::of(V::I32, []), &opts);
    let a = arena();
    let cap = a.allocate(4, 4).unwrap();
    cap.set::<i32>(0, 0).unwrap();
    // SAFETY: set_errno has this type; `cap` is a capture buffer.
    let r = unsafe { set.invoke(&[Value::Segment(cap), Value::I32(42), Value::I32(7)]) }.unwrap();
    assert_eq!((r, cap.get::<i32>(0).unwrap()), (Value::I32(7), 42));
    cap.set::<i32>(0, 1234).unwrap();
    // SAFETY: get_errno has this type.
    let r = unsafe { get.invoke(&[Value::Segment(cap)]) }.unwrap();
    assert_eq!(r, Value::I32(1234));
}

extern "C" fn narrow(b: bool, x: i8, y: u16, z: i16) -> i32 {
    (b as i32) * 1_000_000 + x as i32 * 1000 + y as i32 + z as i32 * 100_000
}

extern "C" fn narrow_ret(k: i32) -> i8 {
    k as i8
}

extern "C" fn bool_ret(k: i32) -> bool {
    k != 0
}

#[test]
fn bools_and_narrow_integers_are_converted_both_ways() {
    let h = link(
        narrow as *const c_void,
        &FD::of(V::I32, [V::BOOL, V::I8, V::U16, V::I16]),
    );
    let args = [
        Value::Bool(true),
        Value::I8(-5),
        Value::U16(65_535),
        Value::I16(-2),
    ];
    assert_eq!(
        // SAFETY: `narrow` is a Rust `extern "C" fn(bool, i8, u16, i16) -> i32`, the
        // descriptor's `int32_t (bool, int8_t, uint16_t, int16_t)`, alive for the program.
        unsafe { h.invoke(&args) }.unwrap(),
        Value::I32(narrow(true, -5, 65_535, -2))
    );
    let h = link(narrow_ret as *const c_void, &FD::of(V::I8, [V::I32]));
    assert_eq!(
        // SAFETY: `narrow_ret` is a Rust `extern "C" fn(i32) -> i8`, the descriptor's
        // `int8_t (int32_t)`, alive for the program.
        unsafe { h.invoke(&[Value::I32(0x1ff)]) }.unwrap(),
        Value::I8(-1)
    );
    let h = link(bool_ret as *const c_void, &FD::of(V::BOOL, [V::I32]));
    assert_eq!(
        // SAFETY: `bool_ret` is a Rust `extern "C" fn(i32) -> bool`, the descriptor's
        // `bool (int32_t)`, alive for the program.
        unsafe { h.invoke(&[Value::I32(9)]) }.unwrap(),
        Value::Bool(true)
    );
}

extern "C" fn named_like_variadic(n: i32, x: f64, y: i64, z: f64) -> f64 {
    n as f64 + x * 10.0 + y as f64 * 100.0 + z * 1000.0
}

#[test]
fn variadic_arguments_are_passed_as_named_ones_and_floats_promoted() {
    let d = FD::of(V::F64, [V::I32, V::F32, V::I64, V::F64]);
    let h = link_with(
        named_like_variadic as *const c_void,
        &d,
        &[LinkerOption::FirstVariadicArg(1)],
    );
    let args = [
        Value::I32(1),
        Value::F32(0.5),
        Value::I64(3),
        Value::F64(0.25),
    ];
    assert_eq!(
        // SAFETY: `named_like_variadic` is a Rust `extern "C" fn(i32, f64, i64, f64) -> f64`;
        // under AAPCS64 (Linux) a variadic call passes its arguments in the registers this
        // named function reads, the `float` promoted to `double`. (Apple arm64 puts variadic
        // arguments on the stack instead; the Apple tests are compiled, never run.)
        unsafe { h.invoke(&args) }.unwrap(),
        Value::F64(1.0 + 5.0 + 300.0 + 250.0)
    );
    // a real variadic function of the C library
    let snprintf = crate::linker::SymbolLookup::default_lookup()
        .find("snprintf")
        .unwrap();
    let d = FD::of(
        V::I32,
        [V::ADDRESS, V::U64, V::ADDRESS, V::I32, V::F64, V::ADDRESS],
    );
    let h = Linker::native()
        .downcall(&snprintf, &d, &[LinkerOption::FirstVariadicArg(3)])
        .unwrap();
    assert!(h.uses_compiled_stub());
    let t = h.interpreted();
    let h = Both(h, t);
    let a = arena();
    let buf = a.allocate(64, 1).unwrap();
    let fmt = seg_of(&a, *b"%d %.2f %s\0");
    let word = seg_of(&a, *b"ok\0");
    let args = [
        Value::Segment(buf),
        Value::U64(64),
        Value::Segment(fmt),
        Value::I32(-7),
        Value::F64(2.5),
        Value::Segment(word),
    ];
    // SAFETY: snprintf(char *, size_t, const char *, ...) with a matching format.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I32(10));
    let mut out = [0u8; 10];
    for (k, b) in out.iter_mut().enumerate() {
        *b = buf.get::<u8>(k).unwrap();
    }
    assert_eq!(&out, b"-7 2.50 ok");
}

// ---- upcalls: Rust -> (downcall handle) -> upcall stub -> closure ----

/// A downcall handle calling the upcall stub `stub` with its own descriptor.
fn through(stub: &crate::upcall::UpcallStub<'_>) -> Both {
    link(stub.address(), stub.descriptor())
}

#[test]
fn upcalls_receive_integers_floats_and_stack_arguments() {
    let a = arena();
    let mut args_d = vec![V::I64; 9];
    args_d.extend([
        V::F32,
        V::F64,
        V::F64,
        V::F64,
        V::F64,
        V::F64,
        V::F64,
        V::F64,
        V::F64,
        V::I8,
    ]);
    let d = FD::of(V::F64, args_d);
    let stub = Linker::native()
        .upcall_stub(
            &d,
            |u| {
                let mut s = 0.0;
                for k in 0..9 {
                    s += u.get::<i64>(k)? as f64 * (k + 1) as f64;
                }
                s += u.get::<f32>(9)? as f64;
                for k in 10..18 {
                    s += u.get::<f64>(k)? * 1000.0;
                }
                Ok(Value::F64(s + u.get::<i8>(18)? as f64 * 1e6))
            },
            &a,
        )
        .unwrap();
    let h = through(&stub);
    assert!(h.plan().stack_bytes() >= 24);
    let mut args: Vec<Value> = (1..=9).map(Value::I64).collect();
    args.push(Value::F32(0.5));
    args.extend((0..8).map(|k| Value::F64(k as f64)));
    args.push(Value::I8(-2));
    let want = (1..=9).map(|k| (k * k) as f64).sum::<f64>() + 0.5 + 28.0 * 1000.0 - 2e6;
    // SAFETY: the stub has this type and lives.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
}

#[test]
fn upcalls_take_and_return_hfas_pairs_and_by_reference_structs() {
    let a = arena();
    let (f3, d4, i3) = (st([V::F32; 3]), st([V::F64; 4]), st([V::I32; 3]));
    let big = st([V::I64, V::I64, V::I64, V::I32]);
    // F3 f(F3, D4, I3, Big): HFA regs, x-pair, by reference; returns an HFA of floats.
    let d = FD::of(&f3, [&f3, &d4, &i3, &big]);
    let caller_copy = Cell::new(0usize);
    let stub = Linker::native()
        .upcall_stub_confined(
            &d,
            |u| {
                let (x, y, z, b) = (u.segment(0)?, u.segment(1)?, u.segment(2)?, u.segment(3)?);
                caller_copy.set(b.address());
                let x: F3 = read(&x);
                let y: D4 = read(&y);
                let z: I3 = read(&z);
                let big: Big = read(&b);
                b.set::<i64>(0, -9)?; // the caller's copy: allowed, invisible to the original
                let r = u.return_segment().unwrap();
                r.set::<f32>(0, x.a + y.d as f32)?;
                r.set::<f32>(4, x.b + z.b as f32)?;
                r.set::<f32>(8, x.c + big.d as f32)?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = through(&stub);
    assert_eq!(h.plan().args()[3].by_reference, Some(Location::Int(2)));
    let bv = Big {
        a: 1,
        b: 2,
        c: 3,
        d: 40,
    };
    let bs = seg_of(&a, bv);
    let args = [
        Value::Segment(seg_of(
            &a,
            F3 {
                a: 1.0,
                b: 2.0,
                c: 3.0,
            },
        )),
        Value::Segment(seg_of(
            &a,
            D4 {
                a: 0.0,
                b: 0.0,
                c: 0.0,
                d: 100.0,
            },
        )),
        Value::Segment(seg_of(&a, I3 { a: 0, b: 20, c: 0 })),
        Value::Segment(bs),
    ];
    // SAFETY: the stub has this type and lives.
    let Value::Segment(r) = unsafe { h.invoke_into(&a, &args) }.unwrap() else {
        panic!()
    };
    assert_eq!(
        read::<F3>(&r),
        F3 {
            a: 101.0,
            b: 22.0,
            c: 43.0
        }
    );
    assert_eq!(read::<Big>(&bs), bv);
    assert_ne!(caller_copy.get(), bs.address());

    // D4 g(double) and Big h(i64): v0..v3 and x8 returns
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&d4, [V::F64]),
            |u| {
                let s = u.get::<f64>(0)?;
                let r = u.return_segment().unwrap();
                for k in 0..4 {
                    r.set::<f64>(8 * k, s * (k + 1) as f64)?;
                }
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    // SAFETY: the stub has this type and lives.
    let Value::Segment(r) = unsafe { through(&stub).invoke_into(&a, &[Value::F64(0.5)]) }.unwrap()
    else {
        panic!()
    };
    assert_eq!(read::<D4>(&r), hfa_d4(0.5));
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&big, [V::I64]),
            |u| {
                let v = u.get::<i64>(0)?;
                let r = u.return_segment().unwrap();
                for k in 0..3 {
                    r.set::<i64>(8 * k, v + k as i64)?;
                }
                r.set::<i32>(24, 77)?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    // SAFETY: the stub has this type and lives.
    let Value::Segment(r) = unsafe { through(&stub).invoke_into(&a, &[Value::I64(5)]) }.unwrap()
    else {
        panic!()
    };
    assert_eq!(
        read::<Big>(&r),
        Big {
            a: 5,
            b: 6,
            c: 7,
            d: 77
        }
    );
}

#[test]
fn c_function_pointers_of_upcall_stubs_are_called_by_rust_code_as_c() {
    // the stub called as a plain C function pointer (no gatun on the calling side)
    let a = arena();
    let big = st([V::I64, V::I64, V::I64, V::I32]);
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(V::I64, [V::I32.into(), big, V::I32.into()]),
            |u| {
                let b = u.segment(1)?;
                Ok(Value::I64(
                    b.get::<i64>(0)?
                        + 10 * b.get::<i64>(8)?
                        + 100 * b.get::<i64>(16)?
                        + 1000 * b.get::<i32>(24)? as i64
                        + 10_000 * (u.get::<i32>(0)? + u.get::<i32>(2)?) as i64,
                ))
            },
            &a,
        )
        .unwrap();
    // SAFETY: the stub is an `int64_t (*)(int, struct Big, int)`.
    let f: extern "C" fn(i32, Big, i32) -> i64 = unsafe { std::mem::transmute(stub.address()) };
    assert_eq!(
        f(
            5,
            Big {
                a: 1,
                b: 2,
                c: 3,
                d: 4
            },
            6
        ),
        by_ref(
            5,
            Big {
                a: 1,
                b: 2,
                c: 3,
                d: 4
            },
            6
        )
    );
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(st([V::F32; 3]), [V::F32]),
            |u| {
                let x = u.get::<f32>(0)?;
                let r = u.return_segment().unwrap();
                for k in 0..3 {
                    r.set::<f32>(4 * k, x + k as f32)?;
                }
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    // SAFETY: the stub is an `F3 (*)(float)`.
    let g: extern "C" fn(f32) -> F3 = unsafe { std::mem::transmute(stub.address()) };
    assert_eq!(
        g(1.5),
        F3 {
            a: 1.5,
            b: 2.5,
            c: 3.5
        }
    );
}

/// `f(depth, big)` through a C function pointer: the Rust "C library" between the levels.
extern "C" fn call_back(f: extern "C" fn(i32, Big) -> i64, depth: i32, big: Big) -> i64 {
    f(depth, big) + big.d as i64
}

#[test]
fn deep_reentrancy_with_by_reference_copies_at_every_level() {
    // downcall call_back(stub, n, big) -> upcall closure(n, big) -> downcall call_back(stub,
    // n - 1, big') -> ... : every level passes a 28-byte struct by reference both ways, so the
    // downcall copies and the upcall segments nest on the linker stack.
    let big = st([V::I64, V::I64, V::I64, V::I32]);
    let cb = link(
        call_back as *const c_void,
        &FD::of(V::I64, [V::ADDRESS.into(), V::I32.into(), big.clone()]),
    );
    let a = arena();
    let stub_addr = AtomicUsize::new(0);
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(V::I64, [V::I32.into(), big.clone()]),
            |u| {
                let (depth, b) = (u.get::<i32>(0)?, u.segment(1)?);
                let v: Big = read(&b);
                assert_eq!((v.a, v.d), (depth as i64, depth));
                if depth == 0 {
                    return Ok(Value::I64(0));
                }
                let inner = arena();
                let next = seg_of(
                    &inner,
                    Big {
                        a: (depth - 1) as i64,
                        b: 0,
                        c: 0,
                        d: depth - 1,
                    },
                );
                let stub = Value::Address(stub_addr.load(Ordering::Relaxed) as *mut c_void);
                // SAFETY: call_back's type; the stub lives for the whole test.
                // (inner levels through the compiled stub only: `Both` would double every level)
                let r = unsafe {
                    cb.0.invoke(&[stub, Value::I32(depth - 1), Value::Segment(next)])
                }?;
                assert_eq!(
                    read::<Big>(&next).a,
                    (depth - 1) as i64,
                    "copied, not shared"
                );
                Ok(Value::I64(r.as_i64().unwrap() + 1))
            },
            &a,
        )
        .unwrap();
    stub_addr.store(stub.address() as usize, Ordering::Relaxed);
    let depth = 40;
    let top = seg_of(
        &a,
        Big {
            a: depth as i64,
            b: 0,
            c: 0,
            d: depth,
        },
    );
    // SAFETY: call_back's type; the stub lives.
    let r =
        unsafe { cb.invoke(&[stub.as_value(), Value::I32(depth), Value::Segment(top)]) }.unwrap();
    // each level adds 1 (the closure) plus its d (call_back): 40 + (40 + 39 + ... + 0)
    assert_eq!(r, Value::I64(40 + (0..=40).sum::<i64>()));
    crate::backend::test_values::assert_linker_stack_is_empty();
}

#[test]
fn invoke_into_takes_the_struct_entry_for_hidden_pointer_returns() {
    crate::backend::test_values::check_struct_entry_path();
}
