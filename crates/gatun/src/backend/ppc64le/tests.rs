//! The PPC64LE executor against C code compiled by `powerpc64le-linux-gnu-gcc`
//! (`tests/native/ppc64le.c`, in the test library): every ELFv2 rule of the classifier
//! (`src/abi/ppc64le.rs`) executed both ways — downcalls into C callees, and C callers calling
//! upcall stubs — plus the exact register images the executor produces, read by a recorder
//! (`pp_record`, assembly in the same file) that stores r3–r10, f1–f13 and the first four
//! doublewords of the parameter save area in memory as it receives them, and a raw caller
//! (`pp_call_raw`) that stores r3, r4 and f1–f8 as an upcall returns them. Run under
//! `qemu-ppc64le`.
//!
//! The C callees read narrow integers as gcc's code does, without extending them again, so a
//! wrongly extended register changes their result; the C callers read an upcall's narrow result
//! the same way. Every downcall runs on the handle and on its `interpreted()` twin, which must
//! agree (the compiled stub against the trampoline), and every recorded register image is
//! compared between the two as well.
//!
//! # ELFv2: rules and the tests that cover them
//!
//! | rule | downcall | upcall |
//! |---|---|---|
//! | narrow integers extended by their type, by caller (arguments) and callee (results) | `narrow_integers_are_extended_as_gcc_reads_them` | `upcall_results_are_extended_as_c_callers_read_them` |
//! | more than eight integer arguments: the parameter save area from offset 64 | `more_than_eight_integers_go_to_the_parameter_save_area` | `upcalls_receive_every_argument_class` |
//! | `float`/`double` in f1–f13 in double format, then memory; each takes its doubleword (GPR shadowing) | `floats_take_f1_to_f13_in_double_format_then_memory`, `a_floating_point_argument_uses_up_its_gpr` | `upcalls_receive_every_argument_class` |
//! | HFAs of 1–8 members, one FPR each, split when f13 runs out (to GPRs or memory) | `hfas_take_one_fpr_per_member_and_split_when_f13_runs_out` | `upcalls_receive_every_argument_class` |
//! | HFA results in f1–f8 | `hfa_results_come_back_in_f1_to_f8` | `upcalls_return_hfas_in_f1_to_f8` |
//! | other aggregates as their image in GPRs and memory; 16-aligned at an even doubleword | `aggregates_are_passed_as_their_image` | `upcalls_receive_every_argument_class` |
//! | results of at most 16 bytes in r3/r4, larger through r3 | `small_results_in_r3_r4_and_large_ones_through_r3` | `upcalls_return_small_and_large_structs` |
//! | variadic: floating-point values in FPRs and in their doublewords | `variadic_doubles_and_hfas_are_in_fprs_and_their_doublewords` | — |
//! | sizes not a power of two: exact bytes read and written | `sizes_that_are_not_powers_of_two_are_never_read_or_written_past` | `upcalls_return_small_and_large_structs` (`pp_cb_b3`) |
//! | parameter save area of any size, r1 16-aligned | `large_parameter_save_areas_are_made_a_page_at_a_time` | — |
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

/// What `pp_record` saw at its last call: r3..r10, f1..f13 (double images), then the parameter
/// save area's doublewords 8..11.
fn seen() -> [u64; 25] {
    let h = link("pp_seen_regs", &FD::of(V::ADDRESS, []));
    // SAFETY: `const uint64_t *pp_seen_regs(void)`.
    let Value::Address(p) = (unsafe { h.0.invoke(&[]) }).unwrap() else {
        panic!()
    };
    // SAFETY: `pp_seen` is a static array of 25 `uint64_t`.
    unsafe { p.cast::<[u64; 25]>().read() }
}

/// `pp_record` called as `d` with `args`, through the handle and then through the trampoline:
/// every register and recorded doubleword the plan writes must hold the same image both times
/// (all 64 bits, except the undefined bits above a struct's last bytes in a GPR or
/// doubleword). Returns the handle's image.
/// Calls of the recorder hold this lock: its image is one static array.
static RECORDER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn record(d: &FD, options: &[LinkerOption], args: &[Value<'_>]) -> [u64; 25] {
    let _one = RECORDER.lock().unwrap_or_else(|e| e.into_inner());
    let h = link_with("pp_record", d, options);
    assert!(h.0.uses_compiled_stub());
    // SAFETY: `pp_record` reads registers and four doublewords of any call and returns.
    unsafe { h.0.invoke(args) }.unwrap();
    let stub = seen();
    // SAFETY: as above.
    unsafe { h.1.invoke(args) }.unwrap();
    let trampoline = seen();
    for (i, a) in h.plan().args().iter().enumerate() {
        for m in &a.moves {
            let (word, vector) = match m.to {
                Location::Int(n) => (R3 + n as usize, false),
                Location::Vector(n) => (F1 + n as usize, true),
                Location::Stack(o) if (64..96).contains(&o) => {
                    (PSA8 + (o as usize - 64) / 8, false)
                }
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

const R3: usize = 0;
const F1: usize = 8;
const PSA8: usize = 21;

/// The moves' destinations of argument `k` of `h`.
fn to(h: &Both, k: usize) -> Vec<Location> {
    h.plan().args()[k].moves.iter().map(|m| m.to).collect()
}

#[test]
fn narrow_integers_are_extended_as_gcc_reads_them() {
    let cases: [(&str, V, Value<'_>, i64); 7] = [
        (
            "pp_u32_widened",
            V::U32,
            Value::U32(0xFFFF_FFF0),
            0xFFFF_FFF0,
        ),
        ("pp_i32_widened", V::I32, Value::I32(-7), -7),
        ("pp_u16_widened", V::U16, Value::U16(0xFFFF), 0xFFFF),
        ("pp_i16_widened", V::I16, Value::I16(-300), -300),
        ("pp_u8_widened", V::U8, Value::U8(0xF0), 0xF0),
        ("pp_i8_widened", V::I8, Value::I8(-2), -2),
        ("pp_bool_widened", V::BOOL, Value::Bool(true), 1),
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
    d.push(V::I32);
    let h = link("pp_i32_in_memory", &FD::of(V::I64, d));
    assert_eq!(to(&h, 8), [Location::Stack(64)]);
    let mut args: Vec<Value> = (1..=8).map(Value::I64).collect();
    args.push(Value::I32(-5));
    // SAFETY: pp_i32_in_memory's type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(-5));
    // results: the declared width, whatever the register holds above it
    for (name, r, x, want) in [
        ("pp_u32_ret", V::U32, -1i64, Value::U32(u32::MAX)),
        ("pp_u16_ret", V::U16, 0x1_2345_F00D, Value::U16(0xF00D)),
        ("pp_i8_ret", V::I8, 0x1FF, Value::I8(-1)),
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
        V::I32,
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
            Value::I32(-2),
            Value::U16(0xFFFF),
            Value::I16(-1),
            Value::U8(0x80),
            Value::I8(-128),
            Value::Bool(true),
            Value::I32(i32::MIN),
        ],
    );
    assert_eq!(
        r[R3..R3 + 8],
        [
            0x8000_0000,
            (-2i64) as u64,
            0xFFFF,
            u64::MAX,
            0x80,
            0xFFFF_FFFF_FFFF_FF80,
            1,
            i64::from(i32::MIN) as u64
        ]
    );
}

#[test]
fn more_than_eight_integers_go_to_the_parameter_save_area() {
    let d = FD::of(
        V::I64,
        [
            V::I64,
            V::I32,
            V::I64,
            V::U16,
            V::I64,
            V::I64,
            V::I64,
            V::I64,
            V::I8,
            V::U32,
            V::I64,
        ],
    );
    let h = link("pp_int11", &d);
    assert_eq!(to(&h, 7), [Location::Int(7)]);
    assert_eq!(to(&h, 8), [Location::Stack(64)]);
    assert_eq!(to(&h, 10), [Location::Stack(80)]);
    let args = [
        Value::I64(1),
        Value::I32(-2),
        Value::I64(3),
        Value::U16(0xFFFF),
        Value::I64(5),
        Value::I64(6),
        Value::I64(7),
        Value::I64(8),
        Value::I8(-9),
        Value::U32(0xFFFF_FFFF),
        Value::I64(11),
    ];
    let want = 1 - 4 + 9 + 4 * 0xFFFF + 25 + 36 + 49 + 64 - 81 + 10 * 0xFFFF_FFFFi64 + 121;
    // SAFETY: pp_int11's type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(want));
    let r = record(&FD::of_void(d.argument_layouts().to_vec()), &[], &args);
    // the narrow ones in memory, extended to their doubleword
    assert_eq!(r[PSA8..PSA8 + 3], [(-9i64) as u64, 0xFFFF_FFFF, 11]);
}

#[test]
fn floats_take_f1_to_f13_in_double_format_then_memory() {
    let h = link("pp_f32_scale", &FD::of(V::F32, [V::F32, V::F32]));
    // SAFETY: pp_f32_scale's type.
    let r = unsafe { h.invoke(&[Value::F32(1.5), Value::F32(-4.0)]) }.unwrap();
    assert_eq!(r, Value::F32(-6.0));
    let h = link("pp_f32_to_f64", &FD::of(V::F64, [V::F32]));
    // SAFETY: pp_f32_to_f64's type.
    let r = unsafe { h.invoke(&[Value::F32(0.1)]) }.unwrap();
    assert_eq!(r, Value::F64(f64::from(0.1f32)));
    let kinds: Vec<V> = (0..15)
        .map(|k| if k % 2 == 0 { V::F32 } else { V::F64 })
        .collect();
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
    let h = link("pp_fp15", &FD::of(V::F64, kinds.clone()));
    let want: f64 = (0..15).map(|k| (0.5 + k as f64) * (k + 1) as f64).sum();
    // SAFETY: pp_fp15's type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
    assert_eq!(to(&h, 12), [Location::Vector(12)]);
    assert_eq!(to(&h, 13), [Location::Stack(104)]);
    assert_eq!(to(&h, 14), [Location::Stack(112)]);
    let r = record(&FD::of_void(kinds), &[], &args);
    for (k, v) in args.iter().enumerate().take(13) {
        let want = match *v {
            Value::F32(x) => f64::from(x).to_bits(),
            Value::F64(x) => x.to_bits(),
            _ => unreachable!(),
        };
        assert_eq!(r[F1 + k], want, "f{}", k + 1);
    }
}

#[test]
fn a_floating_point_argument_uses_up_its_gpr() {
    let d = FD::of(V::F64, [V::I32, V::F64, V::I64, V::F32, V::U8, V::F64]);
    let h = link("pp_mixed", &d);
    let all: Vec<Location> = (0..6).flat_map(|k| to(&h, k)).collect();
    assert_eq!(
        all,
        [
            Location::Int(0),
            Location::Vector(0),
            Location::Int(2),
            Location::Vector(1),
            Location::Int(4),
            Location::Vector(2)
        ]
    );
    let args = [
        Value::I32(-1),
        Value::F64(2.5),
        Value::I64(3),
        Value::F32(0.25),
        Value::U8(200),
        Value::F64(-1.0),
    ];
    // SAFETY: pp_mixed's type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::F64(-1.0 + 25.0 + 300.0 + 250.0 + 2e6 - 1e5));
    let r = record(&FD::of_void(d.argument_layouts().to_vec()), &[], &args);
    assert_eq!((r[R3], r[R3 + 2], r[R3 + 4]), (u64::MAX, 3, 200));
    assert_eq!(r[F1 + 1], 0.25f64.to_bits());
}

#[test]
fn hfas_take_one_fpr_per_member_and_split_when_f13_runs_out() {
    let a = arena();
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct F3(f32, f32, f32);
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct F8([f32; 8]);
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct D2(f64, f64);
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct D8([f64; 8]);
    let (f1, f3, d2) = (
        st([V::F32]),
        st([V::F32, V::F32, V::F32]),
        st([V::F64, V::F64]),
    );
    let f8 = st([V::F32; 8]);
    let d8 = st([V::F64; 8]);
    let h = link("pp_f1_sum", &FD::of(V::F64, [&f1]));
    // SAFETY: pp_f1_sum's type.
    let r = unsafe { h.invoke(&[Value::Segment(seg_of(&a, 2.5f32))]) }.unwrap();
    assert_eq!(r, Value::F64(2.5));
    let h = link("pp_f3_sum", &FD::of(V::F64, [&f3]));
    assert_eq!(
        to(&h, 0),
        [
            Location::Vector(0),
            Location::Vector(1),
            Location::Vector(2)
        ]
    );
    // SAFETY: pp_f3_sum's type.
    let r = unsafe { h.invoke(&[Value::Segment(seg_of(&a, F3(1.0, 2.0, 3.0)))]) }.unwrap();
    assert_eq!(r, Value::F64(321.0));
    let h = link("pp_d2_sum", &FD::of(V::F64, [&d2]));
    // SAFETY: pp_d2_sum's type.
    let r = unsafe { h.invoke(&[Value::Segment(seg_of(&a, D2(1.5, -2.0)))]) }.unwrap();
    assert_eq!(r, Value::F64(-18.5));
    let m8: [f32; 8] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let weighted = |m: &[f32; 8], w0: f64| -> f64 {
        m.iter()
            .enumerate()
            .map(|(k, x)| f64::from(*x) * (k as f64 + w0))
            .sum()
    };
    let h = link("pp_f8_sum", &FD::of(V::F64, [&f8]));
    // SAFETY: pp_f8_sum's type.
    let r = unsafe { h.invoke(&[Value::Segment(seg_of(&a, F8(m8)))]) }.unwrap();
    assert_eq!(r, Value::F64(weighted(&m8, 1.0)));
    let md: [f64; 8] = [0.5, -1.0, 2.0, 4.0, -8.0, 16.0, 0.25, 3.0];
    let h = link("pp_d8_sum", &FD::of(V::F64, [&d8]));
    // SAFETY: pp_d8_sum's type.
    let r = unsafe { h.invoke(&[Value::Segment(seg_of(&a, D8(md)))]) }.unwrap();
    let want: f64 = md.iter().enumerate().map(|(k, x)| x * (k + 1) as f64).sum();
    assert_eq!(r, Value::F64(want));
    // two eight-float HFAs: f1..f8, then f9..f13 and r9, r10
    let h = link("pp_two_f8", &FD::of(V::F64, [&f8, &f8]));
    let second = to(&h, 1);
    assert_eq!(
        second[..5],
        (8..13).map(Location::Vector).collect::<Vec<_>>()[..]
    );
    assert_eq!(second[5..], [Location::Int(6), Location::Int(7)]);
    let m8b: [f32; 8] = [-1.0, 0.5, 9.0, 2.0, -4.0, 1.25, 6.0, -7.0];
    let args = [
        Value::Segment(seg_of(&a, F8(m8))),
        Value::Segment(seg_of(&a, F8(m8b))),
    ];
    // SAFETY: pp_two_f8's type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::F64(weighted(&m8, 1.0) + weighted(&m8b, 11.0)));
    let rec = record(&FD::of_void([&f8, &f8]), &[], &args);
    // member 4 of the second in f13 and (with member 5) in r9
    assert_eq!(rec[F1 + 12], (-4.0f64).to_bits());
    assert_eq!(
        rec[R3 + 6],
        u64::from((-4.0f32).to_bits()) | u64::from(1.25f32.to_bits()) << 32
    );
    // nine doubles, then an eight-float HFA in f10..f13 and memory
    let mut d: Vec<MemoryLayout> = vec![V::F64.into(); 9];
    d.extend([f8.clone(), V::I64.into()]);
    let h = link("pp_f8_after_nine", &FD::of(V::F64, d));
    let hfa = to(&h, 9);
    assert_eq!(
        hfa[..4],
        (9..13).map(Location::Vector).collect::<Vec<_>>()[..]
    );
    assert_eq!(hfa[4..], [Location::Stack(88), Location::Stack(96)]);
    let mut args: Vec<Value> = (1..=9).map(|k| Value::F64(k as f64)).collect();
    args.push(Value::Segment(seg_of(&a, F8(m8b))));
    args.push(Value::I64(-3));
    // SAFETY: pp_f8_after_nine's type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::F64(45.0 - 3000.0 + weighted(&m8b, 11.0)));
}

#[test]
fn hfa_results_come_back_in_f1_to_f8() {
    let a = arena();
    let makes: [(&str, usize, bool); 6] = [
        ("pp_f1_make", 1, true),
        ("pp_f2_make", 2, true),
        ("pp_f5_make", 5, true),
        ("pp_f8_make", 8, true),
        ("pp_d1_make", 1, false),
        ("pp_d8_make", 8, false),
    ];
    for (name, n, single) in makes {
        let member = if single { V::F32 } else { V::F64 };
        let layout = MemoryLayout::c_struct(vec![member.clone(); n]).unwrap();
        let h = link(name, &FD::of(&layout, [member]));
        let arg = if single {
            Value::F32(1.5)
        } else {
            Value::F64(1.5)
        };
        // SAFETY: `<layout> name(<member>)`.
        let r = unsafe { h.invoke_into(&a, &[arg]) }.unwrap();
        let s = r.as_segment().unwrap();
        for k in 0..n {
            if single {
                assert_eq!(s.get::<f32>(4 * k).unwrap(), 1.5 + k as f32, "{name} {k}");
            } else {
                assert_eq!(
                    s.get::<f64>(8 * k).unwrap(),
                    1.5 * (k + 1) as f64,
                    "{name} {k}"
                );
            }
        }
    }
    let layout = MemoryLayout::c_struct(vec![V::F64; 5]).unwrap();
    let h = link("pp_d5_make", &FD::of(&layout, [V::F64]));
    // SAFETY: pp_d5_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::F64(-2.0)]) }.unwrap();
    let s = r.as_segment().unwrap();
    let got: Vec<f64> = (0..5).map(|k| s.get::<f64>(8 * k).unwrap()).collect();
    assert_eq!(got, [-2.0, -4.0, -6.0, -8.0, -10.0]);
}

#[test]
fn aggregates_are_passed_as_their_image() {
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct FI(f32, i32);
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct L3(i64, i64, i64);
    #[repr(C, align(16))]
    #[derive(Clone, Copy)]
    struct A16(i64, i64);
    let a = arena();
    let (fi, l3) = (st([V::F32, V::I32]), st([V::I64, V::I64, V::I64]));
    let h = link("pp_fi_sum", &FD::of(V::F64, [&fi]));
    assert_eq!(to(&h, 0), [Location::Int(0)]);
    // SAFETY: pp_fi_sum's type.
    let r = unsafe { h.invoke(&[Value::Segment(seg_of(&a, FI(1.5, -3)))]) }.unwrap();
    assert_eq!(r, Value::F64(12.0));
    // 24 bytes after seven int64_t: r10, then two doublewords in memory
    let mut d: Vec<MemoryLayout> = vec![V::I64.into(); 7];
    d.extend([l3.clone(), V::I64.into()]);
    let h = link("pp_l3_after_seven", &FD::of(V::I64, d));
    assert_eq!(
        to(&h, 7),
        [Location::Int(7), Location::Stack(64), Location::Stack(72)]
    );
    let mut args: Vec<Value> = (1..=7).map(Value::I64).collect();
    args.push(Value::Segment(seg_of(&a, L3(2, 3, 4))));
    args.push(Value::I64(5));
    // SAFETY: pp_l3_after_seven's type.
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(
        r,
        Value::I64(28 + 2000 + 300_000 + 40_000_000 + 5_000_000_000)
    );
    // the callee writes its copy, not the caller's segment
    let h = link(
        "pp_l3_sum",
        &FD::of(V::I64, [V::I32.into(), l3.clone(), V::I32.into()]),
    );
    let big = seg_of(&a, L3(1, 2, 3));
    // SAFETY: pp_l3_sum's type.
    let r = unsafe { h.invoke(&[Value::I32(4), Value::Segment(big), Value::I32(5)]) }.unwrap();
    assert_eq!(r, Value::I64(4 + 10 + 200 + 3000 + 50_000));
    assert_eq!(read::<L3>(&big), L3(1, 2, 3));
    // a 16-aligned struct at an even doubleword: r5, r6 (r4 unused)
    let a16 = st([V::I64, V::I64]).with_byte_alignment(16).unwrap();
    let h = link(
        "pp_a16_after",
        &FD::of(V::I64, [V::I32.into(), a16, V::I64.into()]),
    );
    assert_eq!(to(&h, 1), [Location::Int(2), Location::Int(3)]);
    assert_eq!(to(&h, 2), [Location::Int(4)]);
    let args = [
        Value::I32(1),
        Value::Segment(seg_of(&a, A16(2, 3))),
        Value::I64(4),
    ];
    // SAFETY: pp_a16_after's type.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::I64(4321));
}

#[test]
fn small_results_in_r3_r4_and_large_ones_through_r3() {
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct FI(f32, i32);
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct LL(i64, i64);
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct L3(i64, i64, i64);
    let a = arena();
    let (fi, ll, l3) = (
        st([V::F32, V::I32]),
        st([V::I64, V::I64]),
        st([V::I64, V::I64, V::I64]),
    );
    let h = link("pp_fi_make", &FD::of(&fi, [V::F32, V::I32]));
    // SAFETY: pp_fi_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::F32(2.5), Value::I32(-9)]) }.unwrap();
    assert_eq!(read::<FI>(&r.as_segment().unwrap()), FI(2.5, -9));
    let h = link("pp_ll_make", &FD::of(&ll, [V::I64, V::I64]));
    // SAFETY: pp_ll_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::I64(-1), Value::I64(i64::MAX)]) }.unwrap();
    assert_eq!(read::<LL>(&r.as_segment().unwrap()), LL(-1, i64::MAX));
    let h = link("pp_l3_make", &FD::of(&l3, [V::I64, V::I32]));
    assert_eq!(h.plan().hidden_return_pointer(), Some(Location::Int(0)));
    assert_eq!(to(&h, 0), [Location::Int(1)]);
    // SAFETY: pp_l3_make's type.
    let r = unsafe { h.invoke_into(&a, &[Value::I64(-8), Value::I32(7)]) }.unwrap();
    assert_eq!(read::<L3>(&r.as_segment().unwrap()), L3(-8, -7, 7));
}

#[test]
fn variadic_doubles_and_hfas_are_in_fprs_and_their_doublewords() {
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct D2(f64, f64);
    let vararg = [LinkerOption::FirstVariadicArg(1)];
    let d = FD::of(V::F64, [V::I32, V::F64, V::F32, V::F64]);
    let h = link_with("pp_va_doubles", &d, &vararg);
    assert_eq!(to(&h, 1), [Location::Vector(0), Location::Int(1)]);
    let args = [
        Value::I32(3),
        Value::F64(1.5),
        Value::F32(2.25),
        Value::F64(-4.0),
    ];
    // SAFETY: `double pp_va_doubles(int, ...)` with three doubles (the float promoted).
    let r = unsafe { h.invoke(&args) }.unwrap();
    assert_eq!(r, Value::F64(1.5 + 4.5 - 12.0));
    let rec = record(&d, &vararg, &args);
    assert_eq!(
        (rec[F1 + 1], rec[R3 + 2]),
        (2.25f64.to_bits(), 2.25f64.to_bits())
    );
    // five HFAs of two doubles: in FPRs and in their doublewords, the last ones in memory
    let a = arena();
    let d2 = st([V::F64, V::F64]);
    let mut layouts: Vec<MemoryLayout> = vec![V::I32.into()];
    layouts.extend(vec![d2; 5]);
    let h = link_with("pp_va_d2", &FD::of(V::F64, layouts), &vararg);
    let mut args = vec![Value::I32(5)];
    args.extend((0..5).map(|k| Value::Segment(seg_of(&a, D2(k as f64, 0.5)))));
    let want: f64 = (0..5).map(|k| (k as f64 + 5.0) * (k + 1) as f64).sum();
    // SAFETY: `double pp_va_d2(int, ...)` with five pp_D2.
    assert_eq!(unsafe { h.invoke(&args) }.unwrap(), Value::F64(want));
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
            "pp_b3_next",
            st([V::U8, V::U8, V::U8]),
            vec![1, 2, 3],
            vec![2, 3, 4],
        ),
        (
            "pp_i3_next",
            st([V::I32, V::I32, V::I32]),
            [1i32, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect(),
            [2i32, -1, 4].iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
        (
            "pp_f3_next",
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
fn large_parameter_save_areas_are_made_a_page_at_a_time() {
    // 8 registers, then 1000 doublewords in memory (8000 bytes: two pages and more, beyond the
    // 2048 bytes kept on the Rust stack)
    let n = 1008;
    let d = FD::of_void(vec![V::I64; n]);
    let args: Vec<Value> = (0..n as i64).map(|k| Value::I64(k * 3)).collect();
    let r = record(&d, &[], &args);
    assert_eq!(r[R3..R3 + 8], [0, 3, 6, 9, 12, 15, 18, 21]);
    assert_eq!(r[PSA8..PSA8 + 4], [24, 27, 30, 33]);
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
    for h in [&set, &set.interpreted()] {
        cap.set::<i32>(0, 0).unwrap();
        // SAFETY: set_errno has this type; `cap` is a capture buffer.
        let r = unsafe { h.invoke(&[Value::Segment(cap), Value::I32(42), Value::I32(7)]) };
        assert_eq!(
            (r.unwrap(), cap.get::<i32>(0).unwrap()),
            (Value::I32(7), 42)
        );
    }
    for h in [&get, &get.interpreted()] {
        cap.set::<i32>(0, 1234).unwrap();
        // SAFETY: get_errno has this type.
        let r = unsafe { h.invoke(&[Value::Segment(cap)]) }.unwrap();
        assert_eq!(r, Value::I32(1234));
    }
}

// ---- upcalls: C callers calling upcall stubs ----

/// `pp_call_raw(f)`: r3, r4, f1..f8 as the stub at `f` returned them (called with no
/// arguments; the closure reads none of its declared ones).
fn call_raw(f: *const c_void) -> [u64; 10] {
    let _one = RECORDER.lock().unwrap_or_else(|e| e.into_inner());
    let h = link("pp_call_raw", &FD::of_void([V::ADDRESS]));
    // SAFETY: `void pp_call_raw(void *)` calls `f` with no arguments.
    unsafe { h.0.invoke(&[Value::Address(f.cast_mut())]) }.unwrap();
    let h = link("pp_seen_ret_regs", &FD::of(V::ADDRESS, []));
    // SAFETY: `const uint64_t *pp_seen_ret_regs(void)`.
    let Value::Address(p) = (unsafe { h.0.invoke(&[]) }).unwrap() else {
        panic!()
    };
    // SAFETY: `pp_seen_ret` is a static array of 10 `uint64_t`.
    unsafe { p.cast::<[u64; 10]>().read() }
}

#[test]
fn upcall_results_are_extended_as_c_callers_read_them() {
    let a = arena();
    // C callers that use the narrow result's register as it is
    let cases: [(&str, V, Value<'static>, i64); 6] = [
        ("pp_cb_u8", V::U8, Value::U8(200), 200),
        ("pp_cb_u16", V::U16, Value::U16(60_000), 60_000),
        ("pp_cb_u32", V::U32, Value::U32(0xFFFF_FFF0), 0xFFFF_FFF0),
        ("pp_cb_i8", V::I8, Value::I8(-3), -3),
        ("pp_cb_i16", V::I16, Value::I16(-300), -300),
        ("pp_cb_bool", V::BOOL, Value::Bool(true), 1),
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
    let h = link("pp_cb_f32", &FD::of(V::F32, [V::ADDRESS, V::F32]));
    // SAFETY: pp_cb_f32's type, with a stub of `float (*)(float)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::F32(1.5)]) }.unwrap();
    assert_eq!(r, Value::F32(5.5));
    // the whole return registers, on each dispatcher path: scalar arguments only (the scalar
    // path), a struct argument in registers (the register path), a memory argument (general)
    let ll = st([V::I64, V::I64]);
    let shapes: [Vec<MemoryLayout>; 3] = [vec![], vec![ll.clone()], vec![V::I64.into(); 9]];
    for args in shapes {
        let cases: [(V, Value<'static>, u64); 5] = [
            (V::U32, Value::U32(0x8000_0001), 0x8000_0001),
            (V::I32, Value::I32(-5), (-5i64) as u64),
            (V::U8, Value::U8(0xFF), 0xFF),
            (V::I16, Value::I16(-2), u64::MAX - 1),
            (V::F32, Value::F32(-0.75), (-0.75f64).to_bits()),
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
fn upcalls_return_hfas_in_f1_to_f8() {
    let a = arena();
    let f8 = st([V::F32; 8]);
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&f8, [V::F32]),
            |u| {
                let x = u.get::<f32>(0)?;
                let r = u.return_segment().unwrap();
                for k in 0..8 {
                    r.set::<f32>(4 * k, x + k as f32)?;
                }
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = link("pp_cb_f8", &FD::of(V::F64, [V::ADDRESS, V::F32]));
    // SAFETY: pp_cb_f8's type, with a stub of `pp_F8 (*)(float)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::F32(0.5)]) }.unwrap();
    let want: f64 = (0..8).map(|k| (0.5 + k as f64) * (k + 1) as f64).sum();
    assert_eq!(r, Value::F64(want));
    // f1..f8 as the caller receives them: each member in double format
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&f8, []),
            |u| {
                let r = u.return_segment().unwrap();
                for k in 0..8 {
                    r.set::<f32>(4 * k, -0.25 * k as f32)?;
                }
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let regs = call_raw(stub.address());
    for k in 0..8 {
        assert_eq!(regs[2 + k], (-0.25 * k as f64).to_bits(), "f{}", k + 1);
    }
    for (name, n) in [("pp_cb_d5", 5usize), ("pp_cb_d8", 8)] {
        let layout = MemoryLayout::c_struct(vec![V::F64; n]).unwrap();
        let stub = Linker::native()
            .upcall_stub(
                &FD::of(&layout, [V::F64]),
                move |u| {
                    let x = u.get::<f64>(0)?;
                    let r = u.return_segment().unwrap();
                    for k in 0..n {
                        r.set::<f64>(8 * k, x * (k + 1) as f64)?;
                    }
                    Ok(Value::Void)
                },
                &a,
            )
            .unwrap();
        let h = link(name, &FD::of(V::F64, [V::ADDRESS, V::F64]));
        // SAFETY: `double name(<layout> (*)(double), double)` with a stub of that type.
        let r = unsafe { h.invoke(&[stub.as_value(), Value::F64(-1.5)]) }.unwrap();
        let want: f64 = (0..n).map(|k| -1.5 * ((k + 1) * (k + 1)) as f64).sum();
        assert_eq!(r, Value::F64(want), "{name}");
    }
    let f2 = st([V::F32, V::F32]);
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&f2, [V::F32, V::F32]),
            |u| {
                let r = u.return_segment().unwrap();
                r.set::<f32>(0, u.get::<f32>(0)?)?;
                r.set::<f32>(4, u.get::<f32>(1)?)?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = link("pp_cb_f2", &FD::of(V::F64, [V::ADDRESS, V::F32, V::F32]));
    // SAFETY: pp_cb_f2's type, with a stub of `pp_F2 (*)(float, float)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::F32(1.5), Value::F32(-3.0)]) }.unwrap();
    assert_eq!(r, Value::F64(12.0));
}

#[test]
fn upcalls_return_small_and_large_structs() {
    let a = arena();
    let (fi, l3, b3) = (
        st([V::F32, V::I32]),
        st([V::I64, V::I64, V::I64]),
        st([V::U8, V::U8, V::U8]),
    );
    let stub = Linker::native()
        .upcall_stub(
            &FD::of(&fi, [V::F32, V::I32]),
            |u| {
                let r = u.return_segment().unwrap();
                r.set::<f32>(0, u.get::<f32>(0)?)?;
                r.set::<i32>(4, u.get::<i32>(1)?)?;
                Ok(Value::Void)
            },
            &a,
        )
        .unwrap();
    let h = link("pp_cb_fi", &FD::of(V::F64, [V::ADDRESS, V::F32, V::I32]));
    // SAFETY: pp_cb_fi's type, with a stub of `pp_FI (*)(float, int32_t)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::F32(1.5), Value::I32(-3)]) }.unwrap();
    assert_eq!(r, Value::F64(12.0));
    // over 16 bytes: written through r3
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
    let h = link("pp_cb_big", &FD::of(V::I64, [V::ADDRESS, V::I64, V::I32]));
    // SAFETY: pp_cb_big's type, with a stub of `pp_L3 (*)(int64_t, int32_t)`.
    let r = unsafe { h.invoke(&[stub.as_value(), Value::I64(5), Value::I32(-2)]) }.unwrap();
    assert_eq!(r, Value::I64(5 + 60 - 200));
    // three bytes in r3, both ways
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
    let h = link("pp_cb_b3", &FD::of(V::I64, [V::ADDRESS]));
    // SAFETY: pp_cb_b3's type, with a stub of `pp_B3 (*)(pp_B3)`.
    let r = unsafe { h.invoke(&[stub.as_value()]) }.unwrap();
    assert_eq!(r, Value::I64(2 + 40 + 600));
}

#[test]
fn upcalls_receive_every_argument_class() {
    let a = arena();
    let (f4, d2, l3) = (
        st([V::F32; 4]),
        st([V::F64, V::F64]),
        st([V::I64, V::I64, V::I64]),
    );
    let mut d: Vec<MemoryLayout> = vec![V::I32.into()];
    d.extend(vec![MemoryLayout::from(V::F64); 9]);
    d.extend([V::F32.into(), f4, V::F32.into(), V::I64.into(), d2, l3]);
    d.extend([V::U32.into(), V::I8.into()]);
    let d = FD::of(V::F64, d);
    let wrote_copy = Cell::new(false);
    let stub = Linker::native()
        .upcall_stub_confined(
            &d,
            |u| {
                let mut s = f64::from(u.get::<i32>(0)?);
                for k in 1..10 {
                    s += u.get::<f64>(k)? * k as f64;
                }
                s += 100.0 * f64::from(u.get::<f32>(10)?);
                let h = u.segment(11)?;
                for k in 0..4 {
                    s += 1e3 * (k + 1) as f64 * f64::from(h.get::<f32>(4 * k)?);
                }
                s += 1e5 * f64::from(u.get::<f32>(12)?);
                s += 1e6 * u.get::<i64>(13)? as f64;
                let dd = u.segment(14)?;
                s += 1e7 * (dd.get::<f64>(0)? + 2.0 * dd.get::<f64>(8)?);
                let big = u.segment(15)?;
                s += 1e9 * (big.get::<i64>(0)? + big.get::<i64>(8)? + big.get::<i64>(16)?) as f64;
                // the callee's copy may be written; the C caller checks its own struct
                big.set::<i64>(0, -1)?;
                wrote_copy.set(true);
                assert_eq!(u.get::<u32>(16)?, 0xFFFF_FFF0);
                assert_eq!(u.get::<i8>(17)?, -9);
                Ok(Value::F64(s))
            },
            &a,
        )
        .unwrap();
    let h = link("pp_cb_mixed", &FD::of(V::F64, [V::ADDRESS]));
    // SAFETY: pp_cb_mixed's type, with a stub of `pp_mixed_fn`.
    let r = unsafe { h.invoke(&[stub.as_value()]) }.unwrap();
    let doubles: f64 = (1..10).map(|k| 0.5 * k as f64 * k as f64).sum();
    let want = -3.0
        + doubles
        + 25.0
        + 1e3 * (1.5 + 5.0 + 10.5 + 18.0)
        + 0.75e5
        + 7e6
        + 1e7 * (5.5 + 13.0)
        + 66e9;
    assert_eq!(r, Value::F64(want));
    assert!(wrote_copy.get());
}
