//! The s390x executor against C code compiled by `s390x-linux-gnu-gcc`
//! (`tests/native/s390x.c`, in the test library): every rule of the classifier
//! (`src/abi/s390x.rs`) executed both ways — downcalls into C callees, and C callers calling
//! upcall stubs — plus the exact register images the executor produces, read by a recorder
//! (`sz_record`, assembly in the same file) that stores r2–r6, f0, f2, f4, f6 and the first
//! stack-argument slots as it receives them, and a raw caller (`sz_call_raw`) that stores r2
//! and f0 as an upcall returns them. Run under `qemu-s390x`.
//!
//! The C callees read narrow integers as gcc's code does, without extending them again, so a
//! wrongly extended register changes their result; they read a `float` from the high word of
//! its FPR, and a stacked narrow value from the right end of its slot. Every downcall runs on
//! the handle and on its `interpreted()` twin, which must agree (the compiled stub against the
//! trampoline), and every recorded register image is compared between the two as well.
//!
//! # s390x: rules and the tests that cover them
//!
//! | rule | downcall | upcall |
//! |---|---|---|
//! | integers extended to 64 bits by their type (caller for arguments, callee for results) | `narrow_integers_are_extended_as_gcc_reads_them` | `upcall_results_are_extended_and_floats_in_the_high_word` |
//! | `float`/`double` in f0, f2, f4, f6, a `float` in the high word; then the stack, right-justified | `floats_take_the_high_word_of_f0_to_f6_then_the_stack` | `upcall_results_are_extended_and_floats_in_the_high_word`, `upcalls_receive_every_argument_class` |
//! | structs of 1, 2, 4, 8 bytes: their big-endian image in a GPR | `structs_of_1_2_4_8_bytes_are_their_image_in_a_gpr` | `upcalls_receive_every_argument_class` |
//! | one-float structs (nested too) in an FPR; a one-element array is not one | `one_float_structs_take_an_fpr` | `upcalls_receive_every_argument_class`, `upcalls_return_structs_through_r2` |
//! | other sizes by reference to a caller's copy | `other_sizes_go_by_reference_to_a_copy` | `upcalls_receive_every_argument_class`, `upcalls_return_structs_through_r2` |
//! | every struct result in memory through r2 | `struct_results_are_written_through_r2` | `upcalls_return_structs_through_r2` |
//! | more than five integers and four floats: 8-byte stack slots | `arguments_past_the_registers_take_right_justified_slots` | `upcalls_receive_every_argument_class` |
//! | variadic: the same registers, a `float` promoted | `variadic_arguments_take_the_same_registers` | — |
//! | sizes not a power of two: exact bytes read and written | `sizes_that_are_not_powers_of_two_are_never_read_or_written_past` | `upcalls_return_structs_through_r2` (`sz_cb_b3`) |
//! | stack area of any size, r15 8-aligned, a register save area for the callee | `large_stack_areas_are_made_a_page_at_a_time` | — |
//! | errno restored right before the call, saved right after | `errno_is_restored_before_and_saved_after_the_call` | — |

use std::cell::Cell;
use std::ffi::c_void;

use crate::abi::{Conversion, Location};
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

/// Word index of r2 in what the recorder saw.
const R2: usize = 0;
/// Word index of f0 (then f2, f4, f6).
const F0: usize = 5;
/// Word index of the first stack-argument slot (`160(%r15)`).
const SP0: usize = 9;

/// What `sz_record` saw at its last call: r2..r6, f0, f2, f4, f6 (64-bit images), then the
/// first four 8-byte stack-argument slots.
fn seen() -> [u64; 13] {
    let h = link("sz_seen_regs", &FD::of(V::ADDRESS, []));
    // SAFETY: `const uint64_t *sz_seen_regs(void)`.
    let Value::Address(p) = (unsafe { h.0.invoke(&[]) }).unwrap() else {
        panic!()
    };
    // SAFETY: `sz_seen` is a static array of 13 `uint64_t`.
    unsafe { p.cast::<[u64; 13]>().read() }
}

/// `sz_record` called as `d` with `args`, through the handle (its compiled stub) and then
/// through the trampoline: every register and recorded stack slot the plan writes must hold
/// the same image both times (all 64 bits, except the undefined low word of an FPR holding a
/// short-format value). Returns the handle's image.
fn record(d: &FD, options: &[LinkerOption], args: &[Value<'_>]) -> [u64; 13] {
    let h = link_with("sz_record", d, options);
    assert!(h.0.uses_compiled_stub());
    // SAFETY: `sz_record` reads registers and four stack slots of any call and returns.
    unsafe { h.0.invoke(args) }.unwrap();
    let stub = seen();
    // SAFETY: as above.
    unsafe { h.1.invoke(args) }.unwrap();
    let trampoline = seen();
    for (i, a) in h.plan().args().iter().enumerate() {
        let at = a
            .by_reference
            .into_iter()
            .map(|to| (to, 8, Conversion::Bytes));
        for (to, size, conv) in a.moves.iter().map(|m| (m.to, m.size, m.conv)).chain(at) {
            let (word, mask) = match to {
                Location::Int(n) => (R2 + n as usize, u64::MAX),
                Location::Vector(n) if size == 4 && conv != Conversion::FloatToDouble => {
                    (F0 + n as usize, 0xFFFF_FFFF_0000_0000)
                }
                Location::Vector(n) => (F0 + n as usize, u64::MAX),
                Location::Stack(o) if o < 32 => (SP0 + o as usize / 8, u64::MAX),
                Location::Stack(_) => continue,
            };
            // by-reference copies are made per call: their addresses differ
            if a.by_reference.is_some() {
                continue;
            }
            assert_eq!(
                stub[word] & mask,
                trampoline[word] & mask,
                "argument {i}, {to:?}: stub vs trampoline"
            );
        }
    }
    stub
}

/// The 64-bit image of a `float` in an FPR: its bits in the high word (the low word is not
/// compared).
fn high(x: f32) -> u64 {
    u64::from(x.to_bits()) << 32
}

#[test]
fn narrow_integers_are_extended_as_gcc_reads_them() {
    let cases: [(&str, V, Value<'_>, i64); 7] = [
        (
            "sz_u32_widened",
            V::U32,
            Value::U32(0xFFFF_FFF0),
            0xFFFF_FFF0,
        ),
        ("sz_i32_widened", V::I32, Value::I32(-7), -7),
        ("sz_u16_widened", V::U16, Value::U16(0xFFFF), 0xFFFF),
        ("sz_i16_widened", V::I16, Value::I16(-300), -300),
        ("sz_u8_widened", V::U8, Value::U8(0xF0), 0xF0),
        ("sz_i8_widened", V::I8, Value::I8(-2), -2),
        ("sz_bool_widened", V::BOOL, Value::Bool(true), 1),
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
    let mut d = vec![V::I64; 5];
    d.push(V::U32);
    let h = link("sz_u32_on_stack", &FD::of(V::I64, d));
    assert_eq!(h.plan().args()[5].moves[0].to, Location::Stack(0));
    let mut args: Vec<Value> = (1..=5).map(Value::I64).collect();
    args.push(Value::U32(0x8000_0001));
    // SAFETY: sz_u32_on_stack's type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::I64(i64::from(0x8000_0001u32 as i32)));
    // results: the declared width, whatever the register holds above it
    for (name, r, x, want) in [
        ("sz_u32_ret", V::U32, -1i64, Value::U32(u32::MAX)),
        ("sz_u16_ret", V::U16, 0x1_2345_F00D, Value::U16(0xF00D)),
        ("sz_i8_ret", V::I8, 0x1FF, Value::I8(-1)),
    ] {
        let h = link(name, &FD::of(r, [V::I64]));
        assert_eq!(
            // SAFETY: `<r> name(int64_t)`.
            unsafe { h.invoke(&[Value::I64(x)]) }.unwrap(),
            want,
            "{name}"
        );
    }
    // the whole registers, as the recorder received them, and the stack slots
    let d = FD::of_void([
        V::U32,
        V::U16,
        V::I16,
        V::U8,
        V::I8,
        V::BOOL,
        V::I32,
        V::U16,
    ]);
    let r = record(
        &d,
        &[],
        &[
            Value::U32(0x8000_0000),
            Value::U16(0xFFFF),
            Value::I16(-1),
            Value::U8(0x80),
            Value::I8(-128),
            Value::Bool(true),
            Value::I32(-1),
            Value::U16(0x8001),
        ],
    );
    assert_eq!(
        r[R2..R2 + 5],
        [0x8000_0000, 0xFFFF, u64::MAX, 0x80, 0xFFFF_FFFF_FFFF_FF80]
    );
    assert_eq!(r[SP0..SP0 + 3], [1, u64::MAX, 0x8001]);
}

#[test]
fn floats_take_the_high_word_of_f0_to_f6_then_the_stack() {
    let h = link("sz_f32_scale", &FD::of(V::F32, [V::F32, V::F32]));
    // SAFETY: sz_f32_scale's type.
    let r = unsafe { h.invoke(&[Value::F32(1.5), Value::F32(-4.0)]) }.unwrap();
    assert_eq!(r, Value::F32(-6.0));
    let h = link("sz_f32_to_f64", &FD::of(V::F64, [V::F32]));
    // SAFETY: sz_f32_to_f64's type.
    let r = unsafe { h.invoke(&[Value::F32(0.1)]) }.unwrap();
    assert_eq!(r, Value::F64(f64::from(0.1f32)));
    let kinds = [V::F32, V::F64, V::F32, V::F64, V::F32, V::F64, V::F32];
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
    let h = link("sz_fp7", &FD::of(V::F64, kinds.clone()));
    let want: f64 = (0..7).map(|k| (0.5 + k as f64) * (k + 1) as f64).sum();
    // SAFETY: sz_fp7's type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
    let to: Vec<Location> = h.plan().args().iter().map(|a| a.moves[0].to).collect();
    assert_eq!(
        to[3..],
        [
            Location::Vector(3),
            Location::Stack(0),
            Location::Stack(8),
            Location::Stack(16)
        ]
    );
    let r = record(&FD::of_void(kinds), &[], &args);
    for (k, v) in args.iter().enumerate().take(4) {
        let (got, want) = match *v {
            Value::F32(x) => (r[F0 + k] & 0xFFFF_FFFF_0000_0000, high(x)),
            Value::F64(x) => (r[F0 + k], x.to_bits()),
            _ => unreachable!(),
        };
        assert_eq!(got, want, "f{}", 2 * k);
    }
    // past f6: a float right-justified in its slot, a double whole
    assert_eq!(r[SP0], u64::from(4.5f32.to_bits()));
    assert_eq!(r[SP0 + 1], 5.5f64.to_bits());
    assert_eq!(r[SP0 + 2], u64::from(6.5f32.to_bits()));
}

#[test]
fn structs_of_1_2_4_8_bytes_are_their_image_in_a_gpr() {
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct B2(u8, u8);
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct H2(i16, i16);
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct FF(f32, f32);
    let a = arena();
    let (b1, b2, h2, ff) = (
        st([V::U8]),
        st([V::U8, V::U8]),
        st([V::I16, V::I16]),
        st([V::F32, V::F32]),
    );
    let cases: [(&str, &MemoryLayout, Value<'_>, Value<'_>); 4] = [
        (
            "sz_b1_get",
            &b1,
            Value::Segment(seg_of(&a, 0xABu8)),
            Value::I64(0xAB),
        ),
        (
            "sz_b2_sum",
            &b2,
            Value::Segment(seg_of(&a, B2(7, 9))),
            Value::I64(9007),
        ),
        (
            "sz_h2_sum",
            &h2,
            Value::Segment(seg_of(&a, H2(-3, 4))),
            Value::I64(399_997),
        ),
        (
            "sz_ff_sum",
            &ff,
            Value::Segment(seg_of(&a, FF(1.5, -3.0))),
            Value::F64(12.0),
        ),
    ];
    for (name, layout, arg, want) in cases {
        let r = if name == "sz_ff_sum" { V::F64 } else { V::I64 };
        let h = link(name, &FD::of(r, [layout]));
        let m = h.plan().args()[0].moves[0];
        assert_eq!(
            (m.to, m.size as usize, m.conv),
            (Location::Int(0), layout.byte_size(), Conversion::Bytes),
            "{name}"
        );
        // SAFETY: `<r> name(<layout>)`.
        assert_eq!(unsafe { h.invoke(&[arg]) }.unwrap(), want, "{name}");
    }
    // the images, right-justified, zero above
    let d = FD::of_void([&b1, &b2, &h2, &ff]);
    let args = [
        Value::Segment(seg_of(&a, 0xABu8)),
        Value::Segment(seg_of(&a, B2(7, 9))),
        Value::Segment(seg_of(&a, H2(-3, 4))),
        Value::Segment(seg_of(&a, FF(1.5, -3.0))),
    ];
    let r = record(&d, &[], &args);
    let ff_image = u64::from(1.5f32.to_bits()) << 32 | u64::from((-3.0f32).to_bits());
    assert_eq!(r[R2..R2 + 4], [0xAB, 0x0709, 0xFFFD_0004, ff_image]);
}

#[test]
fn one_float_structs_take_an_fpr() {
    let a = arena();
    let (f1, d1, f1n) = (
        st([V::F32]),
        st([V::F64]),
        MemoryLayout::c_struct([st([V::F32])]).unwrap(),
    );
    let fa = MemoryLayout::c_struct([MemoryLayout::sequence_layout(1, V::F32).unwrap()]).unwrap();
    let d = FD::of(V::F64, [&f1, &d1, &f1n, &fa]);
    let h = link("sz_f1_sum", &d);
    let to: Vec<Location> = h.plan().args().iter().map(|a| a.moves[0].to).collect();
    assert_eq!(
        to,
        [
            Location::Vector(0),
            Location::Vector(1),
            Location::Vector(2),
            Location::Int(0)
        ]
    );
    let args = [
        Value::Segment(seg_of(&a, 1.5f32)),
        Value::Segment(seg_of(&a, -2.0f64)),
        Value::Segment(seg_of(&a, 3.25f32)),
        Value::Segment(seg_of(&a, 4.0f32)),
    ];
    // SAFETY: sz_f1_sum's type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::F64(1.5 - 20.0 + 325.0 + 4000.0));
    let r = record(&FD::of_void([&f1, &d1, &f1n, &fa]), &[], &args);
    assert_eq!(r[F0] & 0xFFFF_FFFF_0000_0000, high(1.5));
    assert_eq!(r[F0 + 1], (-2.0f64).to_bits());
    assert_eq!(r[F0 + 2] & 0xFFFF_FFFF_0000_0000, high(3.25));
    assert_eq!(r[R2], u64::from(4.0f32.to_bits()));
}

#[test]
fn other_sizes_go_by_reference_to_a_copy() {
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct LL(i64, i64);
    let a = arena();
    let ll = st([V::I64, V::I64]);
    let h = link(
        "sz_ll_sum",
        &FD::of(V::I64, [V::I32.into(), ll.clone(), V::I32.into()]),
    );
    assert_eq!(h.plan().args()[1].by_reference, Some(Location::Int(1)));
    let s = seg_of(&a, LL(1, 2));
    // SAFETY: sz_ll_sum's type.
    let r = unsafe { h.invoke(&[Value::I32(4), Value::Segment(s), Value::I32(5)]) }.unwrap();
    assert_eq!(r, Value::I64(4 + 10 + 200 + 5000));
    // the callee wrote its copy, not the caller's segment
    assert_eq!(read::<LL>(&s), LL(1, 2));
    let b3 = st([V::U8, V::U8, V::U8]);
    let h = link("sz_b3_sum", &FD::of(V::I64, [&b3]));
    assert_eq!(h.plan().args()[0].by_reference, Some(Location::Int(0)));
    let s = seg_of(&a, [1u8, 2, 3]);
    // SAFETY: sz_b3_sum's type.
    let r = unsafe { h.invoke(&[Value::Segment(s)]) }.unwrap();
    assert_eq!(r, Value::I64(321));
    crate::backend::test_values::assert_linker_stack_is_empty();
}

#[test]
fn struct_results_are_written_through_r2() {
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct H2(i16, i16);
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct LL(i64, i64);
    let a = arena();
    let (h2, f1, ll) = (st([V::I16, V::I16]), st([V::F32]), st([V::I64, V::I64]));
    let h = link("sz_h2_make", &FD::of(&h2, [V::I16, V::I16]));
    assert_eq!(h.plan().hidden_return_pointer(), Some(Location::Int(0)));
    assert_eq!(h.plan().args()[0].moves[0].to, Location::Int(1));
    // SAFETY: sz_h2_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::I16(-5), Value::I16(6)]) }.unwrap();
    assert_eq!(read::<H2>(&r.as_segment().unwrap()), H2(-5, 6));
    let h = link("sz_f1_make", &FD::of(&f1, [V::F32]));
    assert_eq!(h.plan().args()[0].moves[0].to, Location::Vector(0));
    // SAFETY: sz_f1_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::F32(-0.5)]) }.unwrap();
    assert_eq!(read::<f32>(&r.as_segment().unwrap()), -0.5);
    let h = link("sz_ll_make", &FD::of(&ll, [V::I64, V::I32]));
    // SAFETY: sz_ll_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::I64(-8), Value::I32(7)]) }.unwrap();
    assert_eq!(read::<LL>(&r.as_segment().unwrap()), LL(-8, 7));
}

#[test]
fn arguments_past_the_registers_take_right_justified_slots() {
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct H2(i16, i16);
    let a = arena();
    let (h2, f1) = (st([V::I16, V::I16]), st([V::F32]));
    let mut d: Vec<MemoryLayout> = vec![V::I64.into(); 5];
    d.extend(
        [
            V::I32,
            V::I8,
            V::F64,
            V::F64,
            V::F32,
            V::F64,
            V::F32,
            V::F64,
        ]
        .map(MemoryLayout::from),
    );
    d.extend([h2, f1]);
    let d = FD::of(V::F64, d);
    let h = link("sz_stacked", &d);
    let to: Vec<Location> = h.plan().args().iter().map(|a| a.moves[0].to).collect();
    assert_eq!(
        to[5..],
        [
            Location::Stack(0),
            Location::Stack(8),
            Location::Vector(0),
            Location::Vector(1),
            Location::Vector(2),
            Location::Vector(3),
            Location::Stack(16),
            Location::Stack(24),
            Location::Stack(32),
            Location::Stack(40),
        ]
    );
    let mut args: Vec<Value> = (1..=5).map(Value::I64).collect();
    args.extend([
        Value::I32(-6),
        Value::I8(-7),
        Value::F64(8.0),
        Value::F64(9.0),
        Value::F32(10.0),
        Value::F64(11.0),
        Value::F32(12.0),
        Value::F64(13.0),
        Value::Segment(seg_of(&a, H2(-14, 15))),
        Value::Segment(seg_of(&a, 16.0f32)),
    ]);
    let want = (1..=5).map(|k| (k * k) as f64).sum::<f64>() - 36.0 - 49.0
        + 64.0
        + 81.0
        + 100.0
        + 121.0
        + 144.0
        + 169.0
        - 196.0
        + 225.0
        + 256.0;
    // SAFETY: sz_stacked's type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
    let r = record(&FD::of_void(d.argument_layouts().to_vec()), &[], &args);
    assert_eq!(
        r[SP0..SP0 + 4],
        [
            (-6i64) as u64,
            (-7i64) as u64,
            u64::from(12.0f32.to_bits()),
            13.0f64.to_bits()
        ]
    );
}

#[test]
fn variadic_arguments_take_the_same_registers() {
    let vararg = [LinkerOption::FirstVariadicArg(1)];
    let d = FD::of(V::F64, [V::I32, V::F64, V::F32, V::F64, V::F64, V::F32]);
    let h = link_with("sz_va_doubles", &d, &vararg);
    let to: Vec<Location> = h.plan().args().iter().map(|a| a.moves[0].to).collect();
    assert_eq!(
        to,
        [
            Location::Int(0),
            Location::Vector(0),
            Location::Vector(1),
            Location::Vector(2),
            Location::Vector(3),
            Location::Stack(0)
        ]
    );
    let args = [
        Value::I32(5),
        Value::F64(1.5),
        Value::F32(2.25),
        Value::F64(-4.0),
        Value::F64(0.5),
        Value::F32(3.0),
    ];
    // SAFETY: `double sz_va_doubles(int, ...)` with five doubles (the floats promoted).
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::F64(1.5 + 4.5 - 12.0 + 2.0 + 15.0));
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct H2(i16, i16);
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct LL(i64, i64);
    let a = arena();
    let (h2, f1, ll) = (st([V::I16, V::I16]), st([V::F32]), st([V::I64, V::I64]));
    for n in 0..=5usize {
        let mut layouts: Vec<MemoryLayout> = vec![V::I32.into()];
        layouts.extend(std::iter::repeat_n(MemoryLayout::from(V::I64), n));
        layouts.extend([h2.clone(), f1.clone(), ll.clone()]);
        let h = link_with("sz_va_structs", &FD::of(V::F64, layouts), &vararg);
        let mut args: Vec<Value> = vec![Value::I32(n as i32)];
        args.extend((1..=n as i64).map(Value::I64));
        args.push(Value::Segment(seg_of(&a, H2(-1, 2))));
        args.push(Value::Segment(seg_of(&a, 0.5f32)));
        args.push(Value::Segment(seg_of(&a, LL(3, 4))));
        let sum = (n * (n + 1) / 2) as f64;
        // SAFETY: `double sz_va_structs(int n, ...)` with n int64_t, an sz_H2, an sz_F1 and an
        // sz_LL.
        let r = unsafe { h.invoke(&args) }.unwrap();
        assert_eq!(
            r,
            Value::F64(sum - 1000.0 + 20000.0 + 50000.0 + 3e6 + 4e7),
            "after {n} int64_t"
        );
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
            "sz_b3_next",
            st([V::U8, V::U8, V::U8]),
            vec![1, 2, 3],
            vec![2, 3, 4],
        ),
        (
            "sz_i3_next",
            st([V::I32, V::I32, V::I32]),
            [1i32, -2, 3].iter().flat_map(|v| v.to_ne_bytes()).collect(),
            [2i32, -1, 4].iter().flat_map(|v| v.to_ne_bytes()).collect(),
        ),
        (
            "sz_f3_next",
            st([V::F32, V::F32, V::F32]),
            [1f32, -2.0, 3.0]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect(),
            [2f32, -1.0, 4.0]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
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
    // 5 registers, then 1000 stack slots (8000 bytes: two pages and more, beyond the 2048
    // bytes kept on the Rust stack)
    let n = 1005;
    let d = FD::of_void(vec![V::I64; n]);
    let args: Vec<Value> = (0..n as i64).map(|k| Value::I64(k * 3)).collect();
    let r = record(&d, &[], &args);
    assert_eq!(r[R2..R2 + 5], [0, 3, 6, 9, 12]);
    assert_eq!(r[SP0..SP0 + 4], [15, 18, 21, 24]);
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
        let h = Linker::native().downcall(&sym, d, &opts).unwrap();
        let t = h.interpreted();
        (h, t)
    };
    let set = link_rust(
        set_errno as *const c_void,
        &FD::of(V::I32, [V::I32, V::I32]),
    );
    let get = link_rust(get_errno as *const c_void, &FD::of(V::I32, []));
    let a = arena();
    let cap = a.allocate(4, 4).unwrap();
    for (set, get) in [(&set.0, &get.0), (&set.1, &get.1)] {
        cap.set::<i32>(0, 0).unwrap();
        // SAFETY: set_errno has this type; `cap` is a capture buffer.
        let r =
            unsafe { set.invoke(&[Value::Segment(cap), Value::I32(42), Value::I32(7)]) }.unwrap();
        assert_eq!((r, cap.get::<i32>(0).unwrap()), (Value::I32(7), 42));
        cap.set::<i32>(0, 1234).unwrap();
        // SAFETY: get_errno has this type.
        let r = unsafe { get.invoke(&[Value::Segment(cap)]) }.unwrap();
        assert_eq!(r, Value::I32(1234));
    }
}

// ---- upcalls: C callers calling upcall stubs ----

/// `sz_call_raw(f)`: r2 and f0 as the stub at `f` returned them (called with no arguments;
/// the closure reads none of its declared ones).
fn call_raw(f: *const c_void) -> [u64; 2] {
    let h = link("sz_call_raw", &FD::of_void([V::ADDRESS]));
    // SAFETY: `void sz_call_raw(void *)` calls `f` with no arguments.
    unsafe { h.0.invoke(&[Value::Address(f.cast_mut())]) }.unwrap();
    let h = link("sz_seen_ret_regs", &FD::of(V::ADDRESS, []));
    // SAFETY: `const uint64_t *sz_seen_ret_regs(void)`.
    let Value::Address(p) = (unsafe { h.0.invoke(&[]) }).unwrap() else {
        panic!()
    };
    // SAFETY: `sz_seen_ret` is a static array of 2 `uint64_t`.
    unsafe { p.cast::<[u64; 2]>().read() }
}

#[test]
fn upcall_results_are_extended_and_floats_in_the_high_word() {
    let a = arena();
    // C callers that use the narrow result's register as it is
    let cases: [(&str, V, Value<'static>, i64); 7] = [
        ("sz_cb_u8", V::U8, Value::U8(200), 200),
        ("sz_cb_u16", V::U16, Value::U16(60_000), 60_000),
        ("sz_cb_u32", V::U32, Value::U32(0x8000_0001), 0x8000_0001),
        ("sz_cb_i8", V::I8, Value::I8(-3), -3),
        ("sz_cb_i16", V::I16, Value::I16(-300), -300),
        ("sz_cb_i32", V::I32, Value::I32(-70_000), -70_000),
        ("sz_cb_bool", V::BOOL, Value::Bool(true), 1),
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
            &FD::of(V::F32, [V::F32, V::F64]),
            |u| Ok(Value::F32(u.get::<f32>(0)? * 3.0 + u.get::<f64>(1)? as f32)),
            &a,
        )
        .unwrap();
    let h = link("sz_cb_f32", &FD::of(V::F32, [V::ADDRESS, V::F32]));
    // SAFETY: sz_cb_f32's type, with a stub of `float (*)(float, double)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::F32(1.5)]) }.unwrap();
    assert_eq!(r, Value::F32(6.0));
    // the whole return registers, on each dispatcher path: scalar arguments only (the scalar
    // path), a struct argument in a register (the register path), a stack argument (general)
    let h2 = st([V::I16, V::I16]);
    let shapes: [Vec<MemoryLayout>; 3] = [vec![], vec![h2.clone()], vec![V::I64.into(); 6]];
    for args in shapes {
        let cases: [(V, Value<'static>, u64); 6] = [
            (V::U32, Value::U32(0x8000_0001), 0x8000_0001),
            (V::I32, Value::I32(-5), (-5i64) as u64),
            (V::U8, Value::U8(0xFF), 0xFF),
            (V::I16, Value::I16(-2), u64::MAX - 1),
            (V::F32, Value::F32(-0.75), high(-0.75)),
            (V::F64, Value::F64(-0.75), (-0.75f64).to_bits()),
        ];
        for (v, result, want) in cases {
            let d = FD::of(v.clone(), args.clone());
            let stub = Linker::native()
                .upcall_stub_confined(&d, move |_| Ok(result), &a)
                .unwrap();
            let regs = call_raw(stub.address());
            let got = match v {
                V::F32 => regs[1] & 0xFFFF_FFFF_0000_0000,
                V::F64 => regs[1],
                _ => regs[0],
            };
            assert_eq!(got, want, "{d}");
        }
    }
}

#[test]
fn upcalls_return_structs_through_r2() {
    let a = arena();
    let (h2, f1, ll, b3) = (
        st([V::I16, V::I16]),
        st([V::F32]),
        st([V::I64, V::I64]),
        st([V::U8, V::U8, V::U8]),
    );
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&h2, [V::I16, V::I16]),
            |u| {
                let r = u.return_segment().unwrap();
                r.set::<i16>(0, u.get::<i16>(0)?)?;
                r.set::<i16>(2, u.get::<i16>(1)?)?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = link("sz_cb_h2", &FD::of(V::I64, [V::ADDRESS, V::I16, V::I16]));
    // SAFETY: sz_cb_h2's type, with a stub of `sz_H2 (*)(int16_t, int16_t)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::I16(-7), Value::I16(3)]) }.unwrap();
    assert_eq!(r, Value::I64(-7 + 300_000));
    // a one-float struct in, a one-float struct out (through r2)
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&f1, [&f1]),
            |u| {
                let x = u.segment(0)?.get::<f32>(0)?;
                u.return_segment().unwrap().set::<f32>(0, x * 2.0 - 1.0)?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = link("sz_cb_f1", &FD::of(V::F64, [V::ADDRESS, V::F32]));
    // SAFETY: sz_cb_f1's type, with a stub of `sz_F1 (*)(sz_F1)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::F32(2.25)]) }.unwrap();
    assert_eq!(r, Value::F64(3.5));
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&ll, [V::I64, V::I32]),
            |u| {
                let (x, c) = (u.get::<i64>(0)?, u.get::<i32>(1)?);
                let r = u.return_segment().unwrap();
                r.set::<i64>(0, x)?;
                r.set::<i64>(8, i64::from(c))?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = link("sz_cb_ll", &FD::of(V::I64, [V::ADDRESS, V::I64, V::I32]));
    // SAFETY: sz_cb_ll's type, with a stub of `sz_LL (*)(int64_t, int32_t)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::I64(5), Value::I32(-2)]) }.unwrap();
    assert_eq!(r, Value::I64(5 - 20));
    // three bytes by reference in, through r2 out
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
    let h = link("sz_cb_b3", &FD::of(V::I64, [V::ADDRESS]));
    // SAFETY: sz_cb_b3's type, with a stub of `sz_B3 (*)(sz_B3)`.
    let r = unsafe { h.invoke(&[stub.as_value()]) }.unwrap();
    assert_eq!(r, Value::I64(2 + 40 + 600));
}

#[test]
fn upcalls_receive_every_argument_class() {
    let a = arena();
    let (f1, d1, h2, ff, b1, ll) = (
        st([V::F32]),
        st([V::F64]),
        st([V::I16, V::I16]),
        st([V::F32, V::F32]),
        st([V::U8]),
        st([V::I64, V::I64]),
    );
    let d = FD::of(
        V::F64,
        [
            V::F64.into(),
            V::F32.into(),
            f1,
            V::F64.into(),
            V::F32.into(),
            d1,
            V::I64.into(),
            h2,
            ff,
            b1,
            V::I32.into(),
            ll,
            V::U32.into(),
            V::I8.into(),
        ],
    );
    let wrote_copy = Cell::new(false);
    let stub = Linker::native()
        .upcall_stub_confined(
            &d,
            |u| {
                let mut s = u.get::<f64>(0)? + 10.0 * f64::from(u.get::<f32>(1)?);
                s += 100.0 * f64::from(u.segment(2)?.get::<f32>(0)?);
                s += 1e3 * u.get::<f64>(3)? + 1e4 * f64::from(u.get::<f32>(4)?);
                s += 1e5 * u.segment(5)?.get::<f64>(0)?;
                s += u.get::<i64>(6)? as f64;
                let (h, ff, b) = (u.segment(7)?, u.segment(8)?, u.segment(9)?);
                s += 1e6 * f64::from(h.get::<i16>(0)?) + 1e7 * f64::from(h.get::<i16>(2)?);
                s += 1e8 * f64::from(ff.get::<f32>(0)?) + 1e9 * f64::from(ff.get::<f32>(4)?);
                s += 1e10 * f64::from(b.get::<u8>(0)?);
                s += 1e11 * f64::from(u.get::<i32>(10)?);
                let ll = u.segment(11)?;
                s += 1e12 * ll.get::<i64>(0)? as f64 + 1e13 * ll.get::<i64>(8)? as f64;
                // the caller's copy may be written; the C caller checks its own struct
                ll.set::<i64>(0, -1)?;
                wrote_copy.set(true);
                assert_eq!(u.get::<u32>(12)?, 0xFFFF_FFF0);
                s += 1e14 * f64::from(u.get::<i8>(13)?);
                Ok(Value::F64(s))
            },
            &a,
        )
        .unwrap();
    let h = link("sz_cb_mixed", &FD::of(V::F64, [V::ADDRESS]));
    // SAFETY: sz_cb_mixed's type, with a stub of `sz_mixed_fn`.
    let r = unsafe { h.invoke(&[stub.as_value()]) }.unwrap();
    let want = 0.5 + 15.0 + 250.0 + 3e3 - 4.5e4 - 6e5 + 5.0 - 7e6 + 8e7 + 1.5e8 - 2.5e9 + 2e12
        - 9e11
        + 11e12
        + 12e13
        - 3e14;
    assert_eq!(r, Value::F64(want));
    assert!(wrote_copy.get());
}
