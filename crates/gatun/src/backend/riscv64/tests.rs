//! The RISC-V 64 executor against C code compiled by `riscv64-linux-gnu-gcc`
//! (`tests/native/riscv64.c`, in the test library): every LP64D rule of the classifier
//! (`src/abi/riscv64.rs`) executed both ways — downcalls into C callees, and C callers calling
//! upcall stubs — plus the exact register images the executor produces, read by a recorder
//! (`rv_record`, assembly in the same file) that stores a0–a7, fa0–fa7 and the first stack
//! slots as it receives them, and a raw caller (`rv_call_raw`) that stores a0, a1, fa0, fa1 as
//! an upcall returns them. Run under `qemu-riscv64`, which checks NaN-boxing as hardware does
//! (a `float` in an FPR whose upper 32 bits are not all ones reads as the canonical NaN).
//!
//! The C callees read narrow integers as gcc's code does, without extending them again, so a
//! wrongly extended register changes their result; the C callers read an upcall's narrow result
//! the same way. Every downcall runs on the handle and on its `interpreted()` twin, which must
//! agree (the compiled stub against the trampoline), and every recorded register image is
//! compared between the two as well.
//!
//! # LP64D: rules and the tests that cover them
//!
//! | rule | downcall | upcall |
//! |---|---|---|
//! | narrow integers extended to 32 bits by their sign, then sign-extended (`unsigned int` too) | `narrow_integers_are_extended_as_gcc_reads_them` | `upcall_results_are_extended_and_nan_boxed_as_c_callers_read_them` |
//! | `float`/`double` in fa0–fa7, a `float` NaN-boxed, then GPRs | `floats_are_nan_boxed_in_fa0_to_fa7_then_take_gprs` | `upcall_results_are_extended_and_nan_boxed_as_c_callers_read_them`, `upcalls_receive_every_argument_class` |
//! | float+integer / two-float structs in FPR+GPR / two FPRs, both ways | `float_and_integer_pairs_take_an_fpr_and_a_gpr_or_two_fprs_both_ways` | `upcalls_return_float_pairs_small_and_large_structs` |
//! | FPRs exhausted: the integer convention | `fpr_exhaustion_falls_back_to_the_integer_convention` | `upcalls_receive_every_argument_class` |
//! | a 16-byte aggregate split between a7 and the stack | `a_16_byte_struct_splits_between_a7_and_the_stack` | `upcalls_receive_every_argument_class` |
//! | over 16 bytes: by reference to a caller's copy; results through a0 | `aggregates_over_16_bytes_go_by_reference_and_come_back_through_a0` | `upcalls_receive_every_argument_class`, `upcalls_return_float_pairs_small_and_large_structs` |
//! | variadic: doubles in GPRs, `float` promoted, 16-aligned at an even pair or the stack | `variadic_doubles_take_gprs_and_16_aligned_structs_an_even_pair` | — |
//! | sizes not a power of two: exact bytes read and written | `sizes_that_are_not_powers_of_two_are_never_read_or_written_past` | `upcalls_return_float_pairs_small_and_large_structs` (`rv_cb_b3`) |
//! | stack area of any size, sp 16-aligned | `large_stack_areas_are_made_a_page_at_a_time` | — |
//! | errno restored right before the call, saved right after | `errno_is_restored_before_and_saved_after_the_call` | — |

use std::cell::Cell;
use std::ffi::c_void;

use crate::abi::Location;
use crate::backend::test_values::{arena, read, seg_of, st};
use crate::layout::{MemoryLayout, ValueLayout as V};
use crate::linker::{
    DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol, SymbolLookup,
};
use crate::memory::{MemorySegment, SegmentAllocator};
use crate::Value;

/// The test library.
fn natives() -> SymbolLookup {
    // SAFETY: the test library's initialisers are plain C.
    unsafe { SymbolLookup::library(gatun_test_natives::PATH) }.expect("load the test natives")
}

/// The test library's `name`.
fn sym(name: &str) -> Symbol {
    natives().find(name).unwrap()
}

/// A function linked twice: the handle (`.0`) and its `interpreted()` twin (`.1`). Every call
/// runs on both, which must agree; the handle's result is returned.
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
        assert_eq!(format!("{c:?}"), format!("{t:?}"), "handle vs trampoline");
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
        match (&c, &t) {
            (Ok(Value::Segment(x)), Ok(Value::Segment(y))) => {
                let n = x.byte_size();
                let bytes = |s: &MemorySegment<'_>| -> Vec<u8> {
                    (0..n).map(|k| s.get::<u8>(k).unwrap()).collect()
                };
                assert_eq!(bytes(x), bytes(y), "handle vs trampoline");
            }
            _ => assert_eq!(format!("{c:?}"), format!("{t:?}"), "handle vs trampoline"),
        }
        c
    }
}

fn link_with(name: &str, d: &FD, options: &[LinkerOption]) -> Both {
    let h = Linker::native().downcall(&sym(name), d, options).unwrap();
    let t = h.interpreted();
    assert!(!t.uses_compiled_stub());
    Both(h, t)
}

fn link(name: &str, d: &FD) -> Both {
    link_with(name, d, &[])
}

/// What `rv_record` saw at its last call: a0..a7, fa0..fa7 (64-bit images), then the first
/// four 8-byte stack slots.
fn seen() -> [u64; 20] {
    let h = link("rv_seen_regs", &FD::of(V::ADDRESS, []));
    // SAFETY: `const uint64_t *rv_seen_regs(void)`.
    let Value::Address(p) = (unsafe { h.0.invoke(&[]) }).unwrap() else {
        panic!()
    };
    // SAFETY: `rv_seen` is a static array of 20 `uint64_t`.
    unsafe { p.cast::<[u64; 20]>().read() }
}

/// `rv_record` called as `d` with `args`, through the handle (its compiled stub) and then
/// through the trampoline: every register and recorded stack slot the plan writes must hold
/// the same image both times (all 64 bits, except the undefined bits above a `float` or a
/// struct's last bytes in a GPR or stack slot). Returns the handle's image.
fn record(d: &FD, options: &[LinkerOption], args: &[Value<'_>]) -> [u64; 20] {
    let h = link_with("rv_record", d, options);
    assert!(h.0.uses_compiled_stub());
    // SAFETY: `rv_record` reads registers and four stack slots of any call and returns.
    unsafe { h.0.invoke(args) }.unwrap();
    let stub = seen();
    // SAFETY: as above.
    unsafe { h.1.invoke(args) }.unwrap();
    let trampoline = seen();
    for (i, a) in h.plan().args().iter().enumerate() {
        for m in &a.moves {
            let (word, vector) = match m.to {
                Location::Int(n) => (A0 + n as usize, false),
                Location::Vector(n) => (FA0 + n as usize, true),
                Location::Stack(o) if o < 32 => (SP0 + o as usize / 8, false),
                Location::Stack(_) => continue,
            };
            let mask = match m.conv {
                crate::abi::Conversion::Bytes if !vector && m.size < 8 => {
                    (1u64 << (8 * m.size)) - 1
                }
                _ => u64::MAX,
            };
            assert_eq!(
                stub[word] & mask,
                trampoline[word] & mask,
                "argument {i}, {:?}: stub vs trampoline",
                m.to
            );
        }
    }
    stub
}

/// The 64-bit image of a NaN-boxed `float`.
fn boxed(x: f32) -> u64 {
    0xFFFF_FFFF_0000_0000 | u64::from(x.to_bits())
}

const A0: usize = 0;
const FA0: usize = 8;
const SP0: usize = 16;

#[test]
fn narrow_integers_are_extended_as_gcc_reads_them() {
    let cases: [(&str, V, Value<'_>, i64); 7] = [
        ("rv_u32_widened", V::U32, Value::U32(0xFFFF_FFF0), -16),
        ("rv_i32_widened", V::I32, Value::I32(-7), -7),
        ("rv_u16_widened", V::U16, Value::U16(0xFFFF), 0xFFFF),
        ("rv_i16_widened", V::I16, Value::I16(-300), -300),
        ("rv_u8_widened", V::U8, Value::U8(0xF0), 0xF0),
        ("rv_i8_widened", V::I8, Value::I8(-2), -2),
        ("rv_bool_widened", V::BOOL, Value::Bool(true), 1),
    ];
    for (name, v, arg, want) in cases {
        let h = link(name, &FD::of(V::I64, [v]));
        assert_eq!(
            // SAFETY: `int64_t name(<v>)`.
            unsafe { h.invoke(&[arg]) }.unwrap(),
            Value::I64(want),
            "{name}"
        );
    }
    let mut d = vec![V::I64; 8];
    d.push(V::U32);
    let h = link("rv_u32_on_stack", &FD::of(V::I64, d));
    assert_eq!(h.plan().args()[8].moves[0].to, Location::Stack(0));
    let mut args: Vec<Value> = (1..=8).map(Value::I64).collect();
    args.push(Value::U32(0x8000_0001));
    // SAFETY: rv_u32_on_stack's type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::I64(i64::from(0x8000_0001u32 as i32)));
    // results: the declared width, whatever the register holds above it
    for (name, r, x, want) in [
        ("rv_u32_ret", V::U32, -1i64, Value::U32(u32::MAX)),
        ("rv_u16_ret", V::U16, 0x1_2345_F00D, Value::U16(0xF00D)),
        ("rv_i8_ret", V::I8, 0x1FF, Value::I8(-1)),
    ] {
        let h = link(name, &FD::of(r, [V::I64]));
        assert_eq!(
            // SAFETY: `<r> name(int64_t)`.
            unsafe { h.invoke(&[Value::I64(x)]) }.unwrap(),
            want,
            "{name}"
        );
    }
    // the whole registers, as the recorder received them
    let d = FD::of_void([
        V::U32,
        V::U32,
        V::U16,
        V::I16,
        V::U8,
        V::I8,
        V::BOOL,
        V::I32,
    ]);
    let r = record(
        &d,
        &[],
        &[
            Value::U32(0x8000_0000),
            Value::U32(0x7FFF_FFFF),
            Value::U16(0xFFFF),
            Value::I16(-1),
            Value::U8(0x80),
            Value::I8(-128),
            Value::Bool(true),
            Value::I32(-1),
        ],
    );
    assert_eq!(
        r[A0..A0 + 8],
        [
            0xFFFF_FFFF_8000_0000,
            0x7FFF_FFFF,
            0xFFFF,
            u64::MAX,
            0x80,
            0xFFFF_FFFF_FFFF_FF80,
            1,
            u64::MAX
        ]
    );
}

#[test]
fn floats_are_nan_boxed_in_fa0_to_fa7_then_take_gprs() {
    let h = link("rv_f32_scale", &FD::of(V::F32, [V::F32, V::F32]));
    // SAFETY: rv_f32_scale's type.
    let r = unsafe { h.invoke(&[Value::F32(1.5), Value::F32(-4.0)]) }.unwrap();
    assert_eq!(r, Value::F32(-6.0));
    let h = link("rv_f32_to_f64", &FD::of(V::F64, [V::F32]));
    // SAFETY: rv_f32_to_f64's type.
    let r = unsafe { h.invoke(&[Value::F32(0.1)]) }.unwrap();
    assert_eq!(r, Value::F64(f64::from(0.1f32)));
    let kinds = [
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
    ];
    let args: Vec<Value> = kinds
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let x = 0.5 + k as f64;
            if *v == V::F32 {
                Value::F32(x as f32)
            } else {
                Value::F64(x)
            }
        })
        .collect();
    let h = link("rv_fp10", &FD::of(V::F64, kinds.clone()));
    let want: f64 = (0..10).map(|k| (0.5 + k as f64) * (k + 1) as f64).sum();
    // SAFETY: rv_fp10's type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
    let to: Vec<Location> = h.plan().args().iter().map(|a| a.moves[0].to).collect();
    assert_eq!(
        to[7..],
        [Location::Vector(7), Location::Int(0), Location::Int(1)]
    );
    let r = record(&FD::of_void(kinds), &[], &args);
    for (k, v) in args.iter().enumerate().take(8) {
        let want = match *v {
            Value::F32(x) => boxed(x),
            Value::F64(x) => x.to_bits(),
            _ => unreachable!(),
        };
        assert_eq!(r[FA0 + k], want, "fa{k}");
    }
    // past fa7: a float's bits in a GPR, a double's whole
    assert_eq!(r[A0] as u32, 8.5f32.to_bits());
    assert_eq!(r[A0 + 1], 9.5f64.to_bits());
}

#[test]
fn float_and_integer_pairs_take_an_fpr_and_a_gpr_or_two_fprs_both_ways() {
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct FI(f32, i32);
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct IF(i32, f32);
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct FF(f32, f32);
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct DL(f64, i64);
    let a = arena();
    let (fi, if_, ff, dl) = (
        st([V::F32, V::I32]),
        st([V::I32, V::F32]),
        st([V::F32, V::F32]),
        st([V::F64, V::I64]),
    );
    let sums: [(&str, &MemoryLayout, Value<'_>, f64, [Location; 2]); 4] = [
        (
            "rv_fi_sum",
            &fi,
            Value::Segment(seg_of(&a, FI(1.5, -3))),
            12.0,
            [Location::Vector(0), Location::Int(0)],
        ),
        (
            "rv_if_sum",
            &if_,
            Value::Segment(seg_of(&a, IF(-3, 1.5))),
            12.0,
            [Location::Int(0), Location::Vector(0)],
        ),
        (
            "rv_ff_sum",
            &ff,
            Value::Segment(seg_of(&a, FF(1.5, -3.0))),
            12.0,
            [Location::Vector(0), Location::Vector(1)],
        ),
        (
            "rv_dl_sum",
            &dl,
            Value::Segment(seg_of(&a, DL(1.5, -3))),
            12.0,
            [Location::Vector(0), Location::Int(0)],
        ),
    ];
    for (name, layout, arg, want, to) in sums {
        let d = FD::of(V::F64, [layout]);
        let h = link(name, &d);
        let got: Vec<Location> = h.plan().args()[0].moves.iter().map(|m| m.to).collect();
        assert_eq!(got, to, "{name}");
        assert_eq!(
            // SAFETY: `double name(<layout>)`.
            unsafe { h.invoke(&[arg]) }.unwrap(),
            Value::F64(want),
            "{name}"
        );
        let r = record(&FD::of_void([layout]), &[], &[arg]);
        for m in &h.plan().args()[0].moves {
            if let Location::Vector(n) = m.to {
                let bits = r[FA0 + n as usize];
                if m.size == 4 {
                    assert_eq!(bits >> 32, 0xFFFF_FFFF, "{name}: fa{n} NaN-boxed");
                }
            }
        }
    }
    // results in fa0 + a0 and fa0 + fa1
    let h = link("rv_fi_make", &FD::of(&fi, [V::F32, V::I32]));
    // SAFETY: rv_fi_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::F32(2.5), Value::I32(-9)]) }.unwrap();
    assert_eq!(read::<FI>(&r.as_segment().unwrap()), FI(2.5, -9));
    let h = link("rv_ff_make", &FD::of(&ff, [V::F32, V::F32]));
    // SAFETY: rv_ff_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::F32(2.5), Value::F32(-9.0)]) }.unwrap();
    assert_eq!(read::<FF>(&r.as_segment().unwrap()), FF(2.5, -9.0));
    let h = link("rv_dl_make", &FD::of(&dl, [V::F64, V::I64]));
    // SAFETY: rv_dl_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::F64(2.5), Value::I64(i64::MIN)]) }.unwrap();
    assert_eq!(read::<DL>(&r.as_segment().unwrap()), DL(2.5, i64::MIN));
}

#[test]
fn fpr_exhaustion_falls_back_to_the_integer_convention() {
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct FF(f32, f32);
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct FI(f32, i32);
    let a = arena();
    let (ff, fi) = (st([V::F32, V::F32]), st([V::F32, V::I32]));
    let mut d: Vec<MemoryLayout> = vec![V::F64.into(); 7];
    d.extend([ff, fi, V::F32.into()]);
    let h = link("rv_fpr_left_one", &FD::of(V::F64, d));
    let to =
        |k: usize| -> Vec<Location> { h.plan().args()[k].moves.iter().map(|m| m.to).collect() };
    // {float, float} needs two FPRs, one is left: one GPR for its 8 bytes
    assert_eq!(to(7), [Location::Int(0)]);
    // {float, int} takes the last FPR and a GPR; the float after it a GPR
    assert_eq!(to(8), [Location::Vector(7), Location::Int(1)]);
    assert_eq!(to(9), [Location::Int(2)]);
    let mut args: Vec<Value> = (1..=7).map(|k| Value::F64(k as f64)).collect();
    args.push(Value::Segment(seg_of(&a, FF(1.0, 2.0))));
    args.push(Value::Segment(seg_of(&a, FI(3.0, 4))));
    args.push(Value::F32(5.0));
    let want = 28.0 + 100.0 + 2000.0 + 3e4 + 4e5 + 5e6;
    // SAFETY: rv_fpr_left_one's type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
}

#[test]
fn a_16_byte_struct_splits_between_a7_and_the_stack() {
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct LL(i64, i64);
    let a = arena();
    let mut d: Vec<MemoryLayout> = vec![V::I64.into(); 7];
    d.extend([st([V::I64, V::I64]), V::I64.into()]);
    let h = link("rv_split", &FD::of(V::I64, d));
    let to: Vec<Location> = h.plan().args()[7].moves.iter().map(|m| m.to).collect();
    assert_eq!(to, [Location::Int(7), Location::Stack(0)]);
    assert_eq!(h.plan().args()[8].moves[0].to, Location::Stack(8));
    let mut args: Vec<Value> = (1..=7).map(Value::I64).collect();
    args.push(Value::Segment(seg_of(&a, LL(3, 4))));
    args.push(Value::I64(5));
    // SAFETY: rv_split's type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::I64(28 + 3000 + 400_000 + 50_000_000));
}

#[test]
fn aggregates_over_16_bytes_go_by_reference_and_come_back_through_a0() {
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct L3(i64, i64, i64);
    let a = arena();
    let l3 = st([V::I64, V::I64, V::I64]);
    let h = link(
        "rv_big_sum",
        &FD::of(V::I64, [V::I32.into(), l3.clone(), V::I32.into()]),
    );
    assert_eq!(h.plan().args()[1].by_reference, Some(Location::Int(1)));
    let big = seg_of(&a, L3(1, 2, 3));
    // SAFETY: rv_big_sum's type.
    let r = unsafe { h.invoke(&[Value::I32(4), Value::Segment(big), Value::I32(5)]) }.unwrap();
    assert_eq!(r, Value::I64(4 + 10 + 200 + 3000 + 50_000));
    // the callee wrote its copy, not the caller's segment
    assert_eq!(read::<L3>(&big), L3(1, 2, 3));
    let h = link("rv_big_make", &FD::of(&l3, [V::I64, V::I32]));
    assert_eq!(h.plan().hidden_return_pointer(), Some(Location::Int(0)));
    assert_eq!(h.plan().args()[0].moves[0].to, Location::Int(1));
    // SAFETY: rv_big_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::I64(-8), Value::I32(7)]) }.unwrap();
    assert_eq!(read::<L3>(&r.as_segment().unwrap()), L3(-8, -7, 7));
    crate::backend::test_values::assert_linker_stack_is_empty();
}

#[test]
fn variadic_doubles_take_gprs_and_16_aligned_structs_an_even_pair() {
    let vararg = [LinkerOption::FirstVariadicArg(1)];
    let d = FD::of(V::F64, [V::I32, V::F64, V::F32, V::F64]);
    let h = link_with("rv_va_doubles", &d, &vararg);
    let to: Vec<Location> = h.plan().args().iter().map(|a| a.moves[0].to).collect();
    assert_eq!(
        to,
        [
            Location::Int(0),
            Location::Int(1),
            Location::Int(2),
            Location::Int(3)
        ]
    );
    let args = [
        Value::I32(3),
        Value::F64(1.5),
        Value::F32(2.25),
        Value::F64(-4.0),
    ];
    // SAFETY: `double rv_va_doubles(int, ...)` with three doubles (the float promoted).
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::F64(1.5 + 4.5 - 12.0));
    // n int64_t, then a 16-aligned struct: at the next even register, else on the stack
    #[repr(C, align(16))]
    #[derive(Clone, Copy)]
    struct A16(i64, i64);
    let a = arena();
    let a16 = st([V::I64, V::I64]).with_byte_alignment(16).unwrap();
    for n in 0..=7usize {
        let mut layouts: Vec<MemoryLayout> = vec![V::I32.into()];
        layouts.extend(std::iter::repeat_n(MemoryLayout::from(V::I64), n));
        layouts.push(a16.clone());
        let h = link_with("rv_va_a16", &FD::of(V::I64, layouts), &vararg);
        let to: Vec<Location> = h.plan().args()[n + 1].moves.iter().map(|m| m.to).collect();
        let first = n + 1 + (n + 1) % 2;
        let want = if first < 8 {
            vec![Location::Int(first as u8), Location::Int(first as u8 + 1)]
        } else {
            vec![Location::Stack(0), Location::Stack(8)]
        };
        assert_eq!(to, want, "after {n} int64_t");
        let mut args: Vec<Value> = vec![Value::I32(n as i32)];
        args.extend((1..=n as i64).map(Value::I64));
        args.push(Value::Segment(seg_of(&a, A16(6, 7))));
        let sum = (n * (n + 1) / 2) as i64;
        // SAFETY: `int64_t rv_va_a16(int n, ...)` with n int64_t and an rv_A16.
        let r = unsafe { h.invoke(&args) }.unwrap();
        assert_eq!(r, Value::I64(sum + 6000 + 700_000), "after {n} int64_t");
    }
}

/// Two pages, the second inaccessible: a struct placed at the end of the first is read or
/// written past its last byte only by a fault.
struct Guarded(*mut u8, usize);

impl Guarded {
    fn new() -> Guarded {
        // SAFETY: querying the page size.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // SAFETY: a fresh private anonymous mapping; the second page is made inaccessible.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(
                libc::mprotect(p.cast::<u8>().add(page).cast(), page, libc::PROT_NONE),
                0
            );
            Guarded(p.cast(), page)
        }
    }

    /// The last `n` bytes before the guard page.
    fn end(&self, n: usize) -> *mut u8 {
        // SAFETY: inside the first page.
        unsafe { self.0.add(self.1 - n) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe { libc::munmap(self.0.cast(), 2 * self.1) };
    }
}

#[test]
fn sizes_that_are_not_powers_of_two_are_never_read_or_written_past() {
    let cases: [(&str, MemoryLayout, Vec<u8>, Vec<u8>); 3] = [
        (
            "rv_b3_next",
            st([V::U8, V::U8, V::U8]),
            vec![1, 2, 3],
            vec![2, 3, 4],
        ),
        (
            "rv_i3_next",
            st([V::I32, V::I32, V::I32]),
            [1i32, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect(),
            [2i32, -1, 4].iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
        (
            "rv_f3_next",
            st([V::F32, V::F32, V::F32]),
            [1f32, -2.0, 3.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            [2f32, -1.0, 4.0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        ),
    ];
    let (arg, ret) = (Guarded::new(), Guarded::new());
    for (name, layout, input, want) in cases {
        let n = layout.byte_size();
        let h = link(name, &FD::of(&layout, [&layout]));
        for h in [&h.0, &h.1] {
            let src = arg.end(n);
            // SAFETY: `src` has `n` writable bytes.
            unsafe { std::ptr::copy_nonoverlapping(input.as_ptr(), src, n) };
            let dst = ret.end(n);
            // SAFETY: `<layout> name(<layout>)`; the argument's and the result's `n` bytes
            // end at an inaccessible page, `dst` aligned for the layout.
            unsafe { h.invoke_raw(&[src.cast_const()], dst) }.unwrap();
            // SAFETY: `n` bytes just written.
            let got = unsafe { std::slice::from_raw_parts(dst, n) };
            assert_eq!(got, &want[..], "{name}");
        }
    }
}

#[test]
fn large_stack_areas_are_made_a_page_at_a_time() {
    // 8 registers, then 1000 stack slots (8000 bytes: two pages and more, beyond the 2048
    // bytes kept on the Rust stack)
    let n = 1008;
    let d = FD::of_void(vec![V::I64; n]);
    let args: Vec<Value> = (0..n as i64).map(|k| Value::I64(k * 3)).collect();
    let r = record(&d, &[], &args);
    assert_eq!(r[A0..A0 + 8], [0, 3, 6, 9, 12, 15, 18, 21]);
    assert_eq!(r[SP0..SP0 + 4], [24, 27, 30, 33]);
    crate::backend::test_values::assert_linker_stack_is_empty();
}

extern "C" fn set_errno(v: i32, ret: i32) -> i32 {
    // SAFETY: this thread's errno.
    unsafe { *libc::__errno_location() = v };
    ret
}

extern "C" fn get_errno() -> i32 {
    // SAFETY: this thread's errno.
    unsafe { *libc::__errno_location() }
}

#[test]
fn errno_is_restored_before_and_saved_after_the_call() {
    let opts = [LinkerOption::CaptureCallState(&["errno"])];
    let link_rust = |f: *const c_void, d: &FD| {
        // SAFETY: a Rust function of the descriptor's C type, alive for the program.
        let sym = unsafe { Symbol::from_address(f) };
        Linker::native().downcall(&sym, d, &opts).unwrap()
    };
    let set = link_rust(
        set_errno as *const c_void,
        &FD::of(V::I32, [V::I32, V::I32]),
    );
    let get = link_rust(get_errno as *const c_void, &FD::of(V::I32, []));
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

// ---- upcalls: C callers calling upcall stubs ----

/// `rv_call_raw(f)`: a0, a1, fa0, fa1 as the stub at `f` returned them (called with no
/// arguments; the closure reads none of its declared ones).
fn call_raw(f: *const c_void) -> [u64; 4] {
    let h = link("rv_call_raw", &FD::of_void([V::ADDRESS]));
    // SAFETY: `void rv_call_raw(void *)` calls `f` with no arguments.
    unsafe { h.0.invoke(&[Value::Address(f.cast_mut())]) }.unwrap();
    let h = link("rv_seen_ret_regs", &FD::of(V::ADDRESS, []));
    // SAFETY: `const uint64_t *rv_seen_ret_regs(void)`.
    let Value::Address(p) = (unsafe { h.0.invoke(&[]) }).unwrap() else {
        panic!()
    };
    // SAFETY: `rv_seen_ret` is a static array of 4 `uint64_t`.
    unsafe { p.cast::<[u64; 4]>().read() }
}

#[test]
fn upcall_results_are_extended_and_nan_boxed_as_c_callers_read_them() {
    let a = arena();
    // C callers that use the narrow result's register as it is
    let cases: [(&str, V, Value<'static>, i64); 5] = [
        ("rv_cb_u8", V::U8, Value::U8(200), 200),
        ("rv_cb_u16", V::U16, Value::U16(60_000), 60_000),
        ("rv_cb_i8", V::I8, Value::I8(-3), -3),
        ("rv_cb_i16", V::I16, Value::I16(-300), -300),
        ("rv_cb_bool", V::BOOL, Value::Bool(true), 1),
    ];
    for (name, v, result, want) in cases {
        let stub = Linker::native()
            .upcall_stub_confined(&FD::of(v, []), move |_| Ok(result), &a)
            .unwrap();
        let h = link(name, &FD::of(V::I64, [V::ADDRESS]));
        // SAFETY: `int64_t name(<v> (*)(void))` with a stub of that type.
        let r = unsafe { h.invoke(&[stub.as_value()]) }.unwrap();
        assert_eq!(r, Value::I64(want), "{name}");
    }
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(V::F32, [V::F32]),
            |u| Ok(Value::F32(u.get::<f32>(0)? * 3.0)),
            &a,
        )
        .unwrap();
    let h = link("rv_cb_f32", &FD::of(V::F32, [V::ADDRESS, V::F32]));
    // SAFETY: rv_cb_f32's type, with a stub of `float (*)(float)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::F32(1.5)]) }.unwrap();
    assert_eq!(r, Value::F32(5.5));
    // the whole return registers, on each dispatcher path: scalar arguments only (the scalar
    // path), a struct argument in registers (the register path), a stack argument (general)
    let ff = st([V::F32, V::F32]);
    let shapes: [Vec<MemoryLayout>; 3] = [vec![], vec![ff.clone()], vec![V::I64.into(); 9]];
    for args in shapes {
        let cases: [(V, Value<'static>, u64); 6] = [
            (V::U32, Value::U32(0x8000_0001), 0xFFFF_FFFF_8000_0001),
            (V::U32, Value::U32(0x7FFF_FFFF), 0x7FFF_FFFF),
            (V::I32, Value::I32(-5), (-5i64) as u64),
            (V::U8, Value::U8(0xFF), 0xFF),
            (V::I16, Value::I16(-2), u64::MAX - 1),
            (V::F32, Value::F32(-0.75), boxed(-0.75)),
        ];
        for (v, result, want) in cases {
            let d = FD::of(v.clone(), args.clone());
            let stub = Linker::native()
                .upcall_stub_confined(&d, move |_| Ok(result), &a)
                .unwrap();
            let regs = call_raw(stub.address());
            let got = if v == V::F32 { regs[2] } else { regs[0] };
            assert_eq!(got, want, "{d}");
        }
    }
}

#[test]
fn upcalls_return_float_pairs_small_and_large_structs() {
    let a = arena();
    let (fi, ff, dl, l3, b3) = (
        st([V::F32, V::I32]),
        st([V::F32, V::F32]),
        st([V::F64, V::I64]),
        st([V::I64, V::I64, V::I64]),
        st([V::U8, V::U8, V::U8]),
    );
    // each result's members are the arguments, written by the closure into the return segment
    // at their offsets: `f` f32, `i` i32, `d` f64, `l` i64
    fn copy_args(
        members: &'static [(usize, char)],
    ) -> impl for<'a> Fn(&crate::upcall::UpcallArgs<'a>) -> crate::Result<Value<'a>> + Send + Sync
    {
        move |u| {
            let r = u.return_segment().unwrap();
            for (k, &(offset, kind)) in members.iter().enumerate() {
                match kind {
                    'f' => r.set::<f32>(offset, u.get::<f32>(k)?)?,
                    'i' => r.set::<i32>(offset, u.get::<i32>(k)?)?,
                    'd' => r.set::<f64>(offset, u.get::<f64>(k)?)?,
                    _ => r.set::<i64>(offset, u.get::<i64>(k)?)?,
                }
            }
            Ok(Value::Void)
        }
    }
    let cases: [(&str, FD, FD, Vec<Value<'static>>, f64); 3] = [
        (
            "rv_cb_fi",
            FD::of(&fi, [V::F32, V::I32]),
            FD::of(V::F64, [V::ADDRESS, V::F32, V::I32]),
            vec![Value::F32(1.5), Value::I32(-3)],
            12.0,
        ),
        (
            "rv_cb_ff",
            FD::of(&ff, [V::F32, V::F32]),
            FD::of(V::F64, [V::ADDRESS, V::F32, V::F32]),
            vec![Value::F32(1.5), Value::F32(-3.0)],
            12.0,
        ),
        (
            "rv_cb_dl",
            FD::of(&dl, [V::F64, V::I64]),
            FD::of(V::F64, [V::ADDRESS, V::F64, V::I64]),
            vec![Value::F64(1.5), Value::I64(-3)],
            12.0,
        ),
    ];
    let members: [&'static [(usize, char)]; 3] = [
        &[(0, 'f'), (4, 'i')],
        &[(0, 'f'), (4, 'f')],
        &[(0, 'd'), (8, 'l')],
    ];
    for ((name, stub_d, caller_d, args, want), members) in cases.into_iter().zip(members) {
        let stub = Linker::native()
            .upcall_stub(&stub_d, copy_args(members), &a)
            .unwrap();
        let h = link(name, &caller_d);
        let mut all = vec![stub.as_value()];
        all.extend(args);
        assert_eq!(
            // SAFETY: `double name(<stub_d> *, ..)` with a stub of that type.
            unsafe { h.invoke(&all) }.unwrap(),
            Value::F64(want),
            "{name}"
        );
    }
    // {float, float} through the general path (a stack argument): both floats NaN-boxed
    let mut stack_args: Vec<MemoryLayout> = vec![V::I64.into(); 9];
    stack_args.push(V::F32.into());
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&ff, stack_args),
            |u| {
                let r = u.return_segment().unwrap();
                r.set::<f32>(0, 0.25)?;
                r.set::<f32>(4, -8.0)?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let regs = call_raw(stub.address());
    assert_eq!((regs[2], regs[3]), (boxed(0.25), boxed(-8.0)));
    // over 16 bytes: written through a0
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&l3, [V::I64, V::I32]),
            |u| {
                let (x, c) = (u.get::<i64>(0)?, u.get::<i32>(1)?);
                let r = u.return_segment().unwrap();
                r.set::<i64>(0, x)?;
                r.set::<i64>(8, x + 1)?;
                r.set::<i64>(16, i64::from(c))?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = link("rv_cb_big", &FD::of(V::I64, [V::ADDRESS, V::I64, V::I32]));
    // SAFETY: rv_cb_big's type, with a stub of `rv_L3 (*)(int64_t, int32_t)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::I64(5), Value::I32(-2)]) }.unwrap();
    assert_eq!(r, Value::I64(5 + 60 - 200));
    // three bytes in a0, both ways
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&b3, [&b3]),
            |u| {
                let s = u.segment(0)?;
                let r = u.return_segment().unwrap();
                for k in 0..3 {
                    r.set::<u8>(k, s.get::<u8>(k)? * 2)?;
                }
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = link("rv_cb_b3", &FD::of(V::I64, [V::ADDRESS]));
    // SAFETY: rv_cb_b3's type, with a stub of `rv_B3 (*)(rv_B3)`.
    let r = unsafe { h.invoke(&[stub.as_value()]) }.unwrap();
    assert_eq!(r, Value::I64(2 + 40 + 600));
}

#[test]
fn upcalls_receive_every_argument_class() {
    let a = arena();
    let (ff, fi, ll, l3) = (
        st([V::F32, V::F32]),
        st([V::F32, V::I32]),
        st([V::I64, V::I64]),
        st([V::I64, V::I64, V::I64]),
    );
    let mut d: Vec<MemoryLayout> = vec![V::F64.into(); 7];
    d.extend([ff, fi, V::F32.into()]);
    d.extend(vec![MemoryLayout::from(V::I64); 4]);
    d.extend([ll, l3, V::U32.into()]);
    let d = FD::of(V::F64, d);
    let wrote_copy = Cell::new(false);
    let stub = Linker::native()
        .upcall_stub_confined(
            &d,
            |u| {
                let mut s = 0.0;
                for k in 0..7 {
                    s += u.get::<f64>(k)?;
                }
                let (ff, fi) = (u.segment(7)?, u.segment(8)?);
                s += 10.0 * f64::from(ff.get::<f32>(0)?) + 100.0 * f64::from(ff.get::<f32>(4)?);
                s += 1e3 * f64::from(fi.get::<f32>(0)?) + 1e4 * f64::from(fi.get::<i32>(4)?);
                s += 1e5 * f64::from(u.get::<f32>(9)?);
                for k in 10..14 {
                    s += u.get::<i64>(k)? as f64;
                }
                let (ll, big) = (u.segment(14)?, u.segment(15)?);
                s += 1e6 * ll.get::<i64>(0)? as f64 + 1e7 * ll.get::<i64>(8)? as f64;
                s += 1e8 * (big.get::<i64>(0)? + big.get::<i64>(8)? + big.get::<i64>(16)?) as f64;
                // the caller's copy may be written; the C caller checks its own struct
                big.set::<i64>(0, -1)?;
                wrote_copy.set(true);
                assert_eq!(u.get::<u32>(16)?, 0xFFFF_FFF0);
                Ok(Value::F64(s))
            },
            &a,
        )
        .unwrap();
    let h = link("rv_cb_mixed", &FD::of(V::F64, [V::ADDRESS]));
    // SAFETY: rv_cb_mixed's type, with a stub of `rv_mixed_fn`.
    let r = unsafe { h.invoke(&[stub.as_value()]) }.unwrap();
    let want = 14.0 + 15.0 + 250.0 + 3.5e3 - 4e4 + 4.5e5 + 26.0 + 11e6 + 12e7 + 66e8;
    assert_eq!(r, Value::F64(want));
    assert!(wrote_copy.get());
}
