//! Tests of the AArch64 stub compiler: on every host, the emitted words (entries start with
//! `bti c`, every word is an instruction the encoder knows, no register field names `x18`, exact
//! sequences and per-call instruction counts for a few shapes); on AArch64 Linux (under qemu on
//! other hosts), the stubs placed in the code arena and called.

use super::*;
use crate::abi::aarch64::{plan, Flavour};
use crate::backend::aarch64::encode::SP;
use crate::layout::FunctionDescriptor as FD;
use crate::layout::{MemoryLayout, ValueLayout as V};

fn checks_of(d: &FD) -> Vec<ArgCheck> {
    d.argument_layouts()
        .iter()
        .map(|l| match l {
            MemoryLayout::Value(v) => ArgCheck::Scalar(v.kind()),
            g => ArgCheck::Group(g.byte_size() as u32),
        })
        .collect()
}

fn linux(d: &FD, fv: Option<usize>) -> CallPlan {
    plan(d, fv, Flavour::Linux).unwrap()
}

fn code_of(d: &FD, fv: Option<usize>, capture: bool) -> StubCode {
    compile(&linux(d, fv), &checks_of(d), capture)
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The register fields of an instruction word the encoder emits (general or SIMD&FP register
/// numbers; 31 included), or `None` for a word of no known instruction class.
fn register_fields(w: u32) -> Option<Vec<u32>> {
    let (rt, rn, rt2, rm) = (w & 31, w >> 5 & 31, w >> 10 & 31, w >> 16 & 31);
    let pair = [0xA880_0000, 0xA980_0000, 0xA900_0000].contains(&(w & 0xFF80_0000));
    Some(
        if w == 0xD503_245F || w == 0 || w & 0xFF00_0010 == 0x5400_0000 || w >> 26 == 0b000101 {
            vec![] // bti c, udf #0 padding, b.cond, b
        } else if pair {
            vec![rt, rn, rt2]
        } else if w & 0x3B00_0000 == 0x3900_0000 || w & 0x3B20_0C00 == 0x3800_0000 {
            vec![rt, rn] // load/store unsigned immediate, unscaled immediate
        } else if w & 0x3B20_0C00 == 0x3820_0800 {
            vec![rt, rn, rm] // load/store register offset
        } else if [0xD280_0000, 0xF280_0000].contains(&(w & 0xFF80_0000)) {
            vec![rt] // movz, movk
        } else if [0x9100_0000, 0xD100_0000].contains(&(w & 0xFF80_0000)) {
            vec![rt, rn] // add, sub immediate
        } else if w & 0x7F80_001F == 0x7100_001F {
            vec![rn] // cmp immediate
        } else if w & 0x7FE0_FC1F == 0x6B00_001F {
            vec![rn, rm] // cmp register
        } else if w & 0x7E00_0000 == 0x3400_0000 {
            vec![rt] // cbz, cbnz
        } else if [0xD63F_0000, 0xD61F_0000, 0xD65F_0000].contains(&(w & 0xFFFF_FC1F)) {
            vec![rn] // blr, br, ret
        } else if w & 0xFFFE_FC00 == 0x9E66_0000 || w & 0xFFFF_FC00 == 0x1E22_C000 {
            vec![rt, rn] // fmov, fcvt
        } else if w & 0xFFFF_0FE0 == 0x9A9F_07E0 {
            vec![rt] // cset
        } else if w & 0xFF20_0000 == 0xAA00_0000 || w & 0xFFC0_0000 == 0xD340_0000 {
            vec![rt, rn, rm] // orr (shifted register); ubfm (lsl/lsr; its rm field is immr)
        } else {
            return None;
        },
    )
}

/// Every word known, no register field 18 (ubfm's `immr` field aside), both entries starting
/// with `bti c`.
fn check_words(code: &StubCode, what: &str) {
    let ws = words(&code.bytes);
    assert_eq!(ws[code.raw / 4], 0xD503_245F, "{what}: raw entry");
    assert_eq!(ws[code.values / 4], 0xD503_245F, "{what}: values entry");
    for (i, &w) in ws.iter().enumerate() {
        let fields =
            register_fields(w).unwrap_or_else(|| panic!("{what}: unknown word {w:#010x} at {i}"));
        let ubfm = w & 0xFFC0_0000 == 0xD340_0000;
        let named = if ubfm { &fields[..2] } else { &fields[..] };
        assert!(
            !named.contains(&18),
            "{what}: word {w:#010x} at {i} names x18"
        );
    }
}

fn s(members: &[V]) -> MemoryLayout {
    MemoryLayout::c_struct(members.iter().cloned()).unwrap()
}

/// A spread of signatures covering every move kind, conversion, return kind and stack case.
fn shapes() -> Vec<(&'static str, FD, Option<usize>)> {
    let a16 = s(&[V::I64.with_byte_alignment(16).unwrap(), V::I64]);
    vec![
        ("noop", FD::of_void([]), None),
        ("id_i32", FD::of(V::I32, [V::I32]), None),
        ("add6", FD::of(V::I64, [V::I64; 6]), None),
        ("by_value", FD::of(V::I64, [s(&[V::I64, V::I64])]), None),
        (
            "syscall",
            FD::of(V::I64, [V::I32, V::ADDRESS, V::I64]),
            None,
        ),
        (
            "narrow",
            FD::of(
                V::I64,
                [V::I8, V::U8, V::I16, V::U16, V::I32, V::U32, V::BOOL],
            ),
            None,
        ),
        ("floats", FD::of(V::F32, [V::F32, V::F64, V::F32]), None),
        ("double", FD::of(V::F64, [V::F64]), None),
        ("spill", FD::of(V::I64, vec![V::I32; 12]), None),
        ("spill_f", FD::of(V::F64, vec![V::F32; 11]), None),
        (
            "hfa4",
            FD::of(s(&[V::F64; 4]), [s(&[V::F32; 3]), s(&[V::F64; 4])]),
            None,
        ),
        (
            "odd",
            FD::of(
                s(&[V::U8; 7]),
                [s(&[V::U8; 3]), s(&[V::U8; 5]), s(&[V::U8; 12])],
            ),
            None,
        ),
        ("c8", FD::of_void([V::I64.into(), a16]), None),
        (
            "c11",
            FD::of_void(
                [
                    vec![MemoryLayout::from(V::I64); 7],
                    vec![s(&[V::I32; 3]), V::I64.into()],
                ]
                .concat(),
            ),
            None,
        ),
        (
            "byref",
            FD::of(V::I64, [s(&[V::I64; 3]), s(&[V::I64; 4])]),
            None,
        ),
        (
            "byref_stack",
            FD::of(
                V::I64,
                [vec![MemoryLayout::from(V::I64); 8], vec![s(&[V::I64; 3])]].concat(),
            ),
            None,
        ),
        ("big_ret", FD::of(s(&[V::I64; 3]), [V::I64]), None),
        ("ret_odd", FD::of(s(&[V::U8; 3]), []), None),
        (
            "variadic",
            FD::of(
                V::I32,
                [V::ADDRESS, V::I64, V::ADDRESS, V::I32, V::F64, V::F32],
            ),
            Some(3),
        ),
        (
            "stack_odd",
            FD::of_void(
                [
                    vec![MemoryLayout::from(V::I64); 8],
                    vec![s(&[V::U8; 7]), V::F32.into(), V::BOOL.into()],
                ]
                .concat(),
            ),
            None,
        ),
        ("many", FD::of(V::I64, vec![V::I64; 200]), None),
    ]
}

#[test]
fn every_word_is_known_and_no_word_names_x18() {
    for (name, d, fv) in shapes() {
        for capture in [false, true] {
            let code = code_of(&d, fv, capture);
            check_words(&code, &format!("{name} capture={capture}"));
            assert_eq!(code.values % 16, 0);
        }
    }
}

#[test]
fn id_i32_raw_entry_is_a_tail_jump() {
    let code = code_of(&FD::of(V::I32, [V::I32]), None, false);
    let ws = words(&code.bytes);
    use e::*;
    assert_eq!(
        ws[..5],
        [
            bti_c(),
            mov(16, 3),
            mem_imm(MemOp::Load, Width::X, 11, 0, 0),
            mem_imm(MemOp::LoadSigned, Width::W, 0, 11, 0),
            br(16),
        ]
    );
    assert_eq!(code.paths.raw, 5);
}

#[test]
fn values_entry_checks_then_frames_the_call() {
    let d = FD::of(V::I32, [V::I32]);
    let code = code_of(&d, None, false);
    let ws = words(&code.bytes[code.values..]);
    let tag = u32::from(scalar_tag(crate::layout::ScalarKind::I32));
    use e::*;
    let want = [
        bti_c(),
        mem_imm(MemOp::Load, Width::B, 9, 0, 0),
        cmp_imm(false, 9, tag),
        b_cond(Cond::Ne, 8),
        stp(PairMode::Pre, FP, LR, SP, -16),
        add_imm(FP, SP, 0, false),
        mem_imm(MemOp::LoadSigned, Width::W, 0, 0, 8),
        blr(3),
        movz(9, 0, 0),
        ldp(PairMode::Post, FP, LR, SP, 16),
        ret(),
        movz(9, 1, 0),
        ret(),
    ];
    assert_eq!(ws, want);
    assert_eq!(code.paths.values, 11);
}

#[test]
fn odd_sizes_are_assembled_from_exact_pieces() {
    // a 7-byte struct in x0: ldrw + ldrh + ldrb, never an 8-byte load
    let d = FD::of_void([s(&[V::U8; 7])]);
    let code = code_of(&d, None, false);
    let ws = words(&code.bytes[..code.paths.raw * 4]);
    use e::*;
    assert_eq!(
        ws,
        [
            bti_c(),
            mov(16, 3),
            mem_imm(MemOp::Load, Width::X, 11, 0, 0),
            mem_imm(MemOp::Load, Width::W, 0, 11, 0),
            mem_imm(MemOp::Load, Width::H, 12, 11, 4),
            orr_lsl(0, 0, 12, 32),
            mem_imm(MemOp::Load, Width::B, 12, 11, 6),
            orr_lsl(0, 0, 12, 48),
            br(16),
        ]
    );
}

#[test]
fn capture_restores_right_before_and_saves_right_after_the_call() {
    let d = FD::of(V::I64, [V::I32, V::ADDRESS, V::I64]);
    let code = code_of(&d, None, true);
    let ws = words(&code.bytes[..code.paths.raw * 4]);
    let call = ws.iter().position(|&w| w == e::blr(3)).unwrap();
    use e::*;
    assert_eq!(
        ws[call - 3..call + 4],
        [
            ldp(PairMode::Offset, 12, 13, FP, -16),
            mem_imm(MemOp::Load, Width::W, 14, 12, 0),
            mem_imm(MemOp::Store, Width::W, 14, 13, 0),
            blr(3),
            ldp(PairMode::Offset, 12, 13, FP, -16),
            mem_imm(MemOp::Load, Width::W, 14, 13, 0),
            mem_imm(MemOp::Store, Width::W, 14, 12, 0),
        ]
    );
}

/// The per-call instruction counts of the benchmark rows (both entries; `bti c`, frame and
/// checks included, the target not).
#[test]
fn path_lengths_of_the_benchmark_rows() {
    let rows: Vec<(&str, FD, bool, PathLengths)> = vec![
        (
            "noop",
            FD::of_void([]),
            false,
            PathLengths { raw: 3, values: 7 },
        ),
        (
            "id_i32",
            FD::of(V::I32, [V::I32]),
            false,
            PathLengths { raw: 5, values: 11 },
        ),
        (
            "add6",
            FD::of(V::I64, [V::I64; 6]),
            false,
            PathLengths {
                raw: 15,
                values: 32,
            },
        ),
        (
            "by_value",
            FD::of(V::I64, [s(&[V::I64, V::I64])]),
            false,
            PathLengths { raw: 6, values: 16 },
        ),
        (
            "syscall",
            FD::of(V::I64, [V::I32, V::ADDRESS, V::I64]),
            true,
            PathLengths {
                raw: 21,
                values: 28,
            },
        ),
    ];
    for (name, d, capture, want) in rows {
        let p = linux(&d, None);
        assert_eq!(path_lengths(&p, &checks_of(&d), capture), want, "{name}");
    }
}

#[test]
fn large_value_offsets_use_register_offsets() {
    // 200 arguments: the tags of the later values are beyond ldrb's 4095-byte immediate
    let d = FD::of(V::I64, vec![V::I64; 200]);
    let code = code_of(&d, None, false);
    let ws = words(&code.bytes[code.values..]);
    let reg_offset = e::mem_reg(MemOp::Load, Width::B, 9, 0, 15);
    assert!(ws.contains(&reg_offset));
    check_words(&code, "many");
}

#[test]
fn apple_packed_stack_arguments_are_stored_with_their_own_width() {
    // eight longs fill x0..x7; then i8, i16, i32, i8 packed at 0, 2, 4, 8 (Apple) or in
    // whole slots at 0, 8, 16, 24 (Linux)
    let mut args: Vec<MemoryLayout> = vec![V::I64.into(); 8];
    args.extend([V::I8, V::I16, V::I32, V::I8].map(MemoryLayout::from));
    let d = FD::of_void(args);
    // the store of register `rt` (masked out) to `[sp + off]`: STRB/STRH/STR w/STR x
    // (unsigned scaled offset)
    let store = |bytes: u32, off: u32| {
        let (op, scale) = match bytes {
            1 => (0x3900_0000, 1),
            2 => (0x7900_0000, 2),
            4 => (0xB900_0000, 4),
            _ => (0xF900_0000, 8),
        };
        op | (off / scale) << 10 | 31 << 5
    };
    let stores = |p: &CallPlan| {
        let code = compile(p, &checks_of(&d), false);
        check_words(&code, "packed");
        let ws = words(&code.bytes);
        let found = |w: u32| ws.iter().filter(|&&x| x & !31 == w).count();
        [
            (1, 0),
            (2, 2),
            (4, 4),
            (1, 8),
            (8, 0),
            (8, 8),
            (8, 16),
            (8, 24),
        ]
        .map(|(b, o)| found(store(b, o)))
    };
    let apple = plan(&d, None, Flavour::Apple).unwrap();
    // both entries store each packed argument with its own width, and no whole slot
    assert_eq!(stores(&apple), [2, 2, 2, 2, 0, 0, 0, 0]);
    let linux = linux(&d, None);
    assert_eq!(stores(&linux), [0, 0, 0, 0, 2, 2, 2, 2]);
}

/// The words of the stack probe of a `frame`-byte frame (see `sub_sp_probed`).
fn probe_words(frame: u32) -> Vec<u32> {
    let mut w = vec![
        e::movz(17, (frame / 4096) as u16, 0),
        e::sub_imm(SP, SP, 1, true),
        e::mem_imm(MemOp::Store, Width::X, e::ZR, SP, 0),
        e::sub_imm(17, 17, 1, false),
        e::cbnz(true, 17, -3),
    ];
    if frame % 4096 > 0 {
        w.push(e::sub_imm(SP, SP, frame % 4096, false));
    }
    w
}

#[test]
fn frames_of_a_page_or_more_are_probed_page_by_page_going_down() {
    // 8 longs in x0..x7, then 1,000 on the stack: an 8,000-byte frame, one probed page and
    // 3,904 bytes more, right after the frame record in both entries.
    let d = FD::of(V::I64, vec![V::I64; 8 + 1000]);
    let code = code_of(&d, None, false);
    check_words(&code, "1,008 longs");
    let record = [
        e::stp(PairMode::Pre, FP, LR, SP, -16),
        e::add_imm(FP, SP, 0, false),
    ];
    for entry in [code.raw, code.values] {
        let ws = words(&code.bytes[entry..]);
        let at = ws.windows(2).position(|w| w == record).unwrap() + 2;
        assert_eq!(ws[at..at + 6], probe_words(8000), "entry at {entry}");
    }
    // Each entry executes the loop's four words once per page.
    let lengths = path_lengths(&linux(&d, None), &checks_of(&d), false);
    let big = FD::of(V::I64, vec![V::I64; 8 + 131_072]);
    let big_code = code_of(&big, None, false);
    assert_eq!(
        words(&big_code.bytes[big_code.raw..])[3..8],
        probe_words(1 << 20)
    );
    let big_lengths = path_lengths(&linux(&big, None), &checks_of(&big), false);
    // 130,072 more stack moves of two words (ldr, str; from 32 KiB on with a movz/movk of
    // the offset first), 255 more pages of four words, the same prologue otherwise.
    assert!(big_lengths.raw > lengths.raw + 2 * 130_072 + 4 * 255);
    // A frame under a page: one `sub sp` as before.
    let small = code_of(&FD::of(V::I64, vec![V::I64; 8 + 500]), None, false);
    assert_eq!(words(&small.bytes)[3], e::sub_imm(SP, SP, 4000, false));
}

#[test]
fn stack_offsets_past_the_immediate_fields_go_through_x15() {
    // 5,000 longs on the stack: offsets from 32 KiB (past `str x`'s scaled field) to 40 KiB
    // are stored with `str x14, [sp, x15]`, after `movz`/`movk` of the offset.
    let d = FD::of(V::I64, vec![V::I64; 8 + 5000]);
    let code = code_of(&d, None, false);
    check_words(&code, "5,008 longs");
    let ws = words(&code.bytes);
    let reg_store = e::mem_reg(MemOp::Store, Width::X, 14, SP, 15);
    assert_eq!(
        ws.iter().filter(|&&w| w == reg_store).count(),
        2 * (5000 - 4096)
    );
    // The last slot, 39,992 = 0x9C38: `movz x15, #0x9c38` right before a register store.
    let at = ws.iter().rposition(|&w| w == reg_store).unwrap();
    assert_eq!(ws[at - 1], e::movz(15, 0x9C38, 0));
    // Apple packs one-byte arguments: from 4096 on, `strb w14, [sp, x15]`.
    let mut args: Vec<MemoryLayout> = vec![V::I64.into(); 8];
    args.extend(vec![MemoryLayout::from(V::I8); 5000]);
    let d = FD::of_void(args);
    let code = compile(
        &plan(&d, None, Flavour::Apple).unwrap(),
        &checks_of(&d),
        false,
    );
    check_words(&code, "5,000 packed bytes");
    let ws = words(&code.bytes);
    let reg_strb = e::mem_reg(MemOp::Store, Width::B, 14, SP, 15);
    assert_eq!(
        ws.iter().filter(|&&w| w == reg_strb).count(),
        2 * (5000 - 4096)
    );
    // Near the 1 MiB limit: a two-piece offset.
    let d = FD::of(V::I64, vec![V::I64; 8 + 131_072]);
    let ws = words(&code_of(&d, None, false).bytes);
    let last = [
        e::movz(15, 0xFFF8, 0),
        e::movk(15, 0xF, 1),
        e::mem_reg(MemOp::Store, Width::X, 14, SP, 15),
    ];
    assert_eq!(ws.windows(3).filter(|w| *w == last).count(), 2);
}

#[test]
fn very_many_checks_reject_through_islands_within_branch_reach() {
    // 40,000 arguments: the end of the values entry is more than 1 MiB after the first
    // check, beyond `b.cond`; each block of 4,096 checks gets its own rejection path.
    let n = 8 + 40_000;
    let d = FD::of(V::I64, vec![V::I64; n]);
    let code = code_of(&d, None, false);
    check_words(&code, "40,008 longs");
    let ws = words(&code.bytes[code.values..]);
    let island = [e::movz(FLAG, 1, 0), e::ret()];
    let islands = ws.windows(2).filter(|w| *w == island).count();
    assert_eq!(islands, n.div_ceil(ISLAND_CHECKS));
    // Every `b.cond` of the checks goes forward to the next island, within reach.
    for (i, &w) in ws.iter().enumerate() {
        if w & 0xFF00_0010 == 0x5400_0000 {
            let words = ((w >> 5 & 0x7FFFF) << 13) as i32 >> 13;
            assert!(words > 0, "b.cond at {i} goes back");
            assert_eq!(ws[i + words as usize..][..2], island, "b.cond at {i}");
        }
    }
    // A small signature keeps its one rejection path at the end and no extra jump.
    let small = code_of(&FD::of(V::I64, vec![V::I64; 20]), None, false);
    let ws = words(&small.bytes[small.values..]);
    assert_eq!(ws.windows(2).filter(|w| *w == island).count(), 1);
    assert_eq!(ws[ws.len() - 2..], island);
}

#[cfg(all(gatun_backend = "aarch64", target_os = "linux"))]
mod run {
    //! The stubs placed and called (AArch64 Linux; `qemu-aarch64` on other hosts).

    use super::*;
    use crate::os::thread_errno;
    use crate::value::Value;
    use std::cell::RefCell;
    use std::ffi::c_void;

    thread_local! {
        /// What the last target saw (its parameters, as 64-bit words).
        static SEEN: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
        /// How many times a target ran.
        static CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn record(words: &[u64]) {
        CALLS.with(|c| c.set(c.get() + 1));
        SEEN.with(|s| *s.borrow_mut() = words.to_vec());
    }

    fn seen() -> Vec<u64> {
        SEEN.with(|s| s.borrow().clone())
    }

    fn calls() -> usize {
        CALLS.with(|c| c.get())
    }

    /// The plan and a placed stub of `d` (freed when the caller drops it).
    fn place(d: &FD, fv: Option<usize>, capture: bool) -> (CallPlan, Stub) {
        let p = linux(d, fv);
        let stub = build(&p, &checks_of(d), capture).unwrap();
        (p, stub)
    }

    /// The caller copies of the by-reference arguments (as the executor makes them).
    fn copies(p: &CallPlan, args: &[*const u8], d: &FD) -> Vec<Vec<u8>> {
        p.args()
            .iter()
            .zip(args)
            .zip(d.argument_layouts())
            .filter(|((a, _), _)| a.by_reference.is_some())
            .map(|((_, &ptr), l)| {
                // SAFETY: the test's argument bytes are readable for the layout's size.
                unsafe { std::slice::from_raw_parts(ptr, l.byte_size()) }.to_vec()
            })
            .collect()
    }

    /// Calls the raw entry with `args` (pointers to each argument's bytes).
    fn call_raw(
        d: &FD,
        fv: Option<usize>,
        target: *const c_void,
        args: &[*const u8],
        ret: *mut u8,
    ) -> u64 {
        let (p, stub) = place(d, fv, false);
        let c = copies(&p, args, d);
        let cp: Vec<*const u8> = c.iter().map(|v| v.as_ptr()).collect();
        // SAFETY: the target's C signature matches the descriptor's register use; the
        // argument pointers cover their layouts; `ret` covers the return layout.
        unsafe {
            (stub.raw)(
                args.as_ptr(),
                ret,
                std::ptr::null_mut(),
                target,
                cp.as_ptr(),
                std::ptr::null_mut(),
            )
        }
    }

    /// Calls the values entry with `values`.
    fn call_values(
        d: &FD,
        fv: Option<usize>,
        target: *const c_void,
        values: &[Value<'_>],
        copies_of: &[*const u8],
        ret: *mut u8,
    ) -> Option<u64> {
        let (p, stub) = place(d, fv, false);
        let c = copies(&p, copies_of, d);
        let cp: Vec<*const u8> = c.iter().map(|v| v.as_ptr()).collect();
        // SAFETY: as in `call_raw`.
        unsafe {
            stub.values.call(
                values.as_ptr(),
                ret,
                std::ptr::null_mut(),
                target,
                cp.as_ptr(),
                std::ptr::null_mut(),
            )
        }
    }

    fn p<T>(v: &T) -> *const u8 {
        (v as *const T).cast()
    }

    extern "C" fn ints(a: i64, b: u64, c: i64, d: u64, e: i64, f: u64, g: u64) -> i64 {
        record(&[a as u64, b, c as u64, d, e as u64, f, g]);
        a + c + e
    }

    #[test]
    fn narrow_integers_are_sign_or_zero_extended_and_bools_normalised() {
        let d = FD::of(
            V::I64,
            [V::I8, V::U8, V::I16, V::U16, V::I32, V::U32, V::BOOL],
        );
        let (a, b, c, dd, e, f, g) = (
            -3i8,
            0xF0u8,
            -300i16,
            0xFFFEu16,
            -70000i32,
            0xFFFF_FFF0u32,
            2u8,
        );
        let args = [p(&a), p(&b), p(&c), p(&dd), p(&e), p(&f), p(&g)];
        let want = vec![
            -3i64 as u64,
            0xF0,
            -300i64 as u64,
            0xFFFE,
            -70000i64 as u64,
            0xFFFF_FFF0,
            1,
        ];
        let r = call_raw(&d, None, ints as *const c_void, &args, std::ptr::null_mut());
        assert_eq!(r as i64, -70303);
        assert_eq!(seen(), want);
        let vals = [
            Value::I8(a),
            Value::U8(b),
            Value::I16(c),
            Value::U16(dd),
            Value::I32(e),
            Value::U32(f),
            Value::Bool(true),
        ];
        let r = call_values(
            &d,
            None,
            ints as *const c_void,
            &vals,
            &[],
            std::ptr::null_mut(),
        );
        assert_eq!(r.map(|r| r as i64), Some(-70303));
        assert_eq!(seen(), want);
    }

    extern "C" fn floats(a: f32, b: f64, c: f32) -> f32 {
        record(&[a.to_bits().into(), b.to_bits(), c.to_bits().into()]);
        a + b as f32 + c
    }

    extern "C" fn double(a: f64) -> f64 {
        a * 2.0
    }

    #[test]
    fn floats_and_doubles_in_vector_registers_and_the_result_bits_in_x0() {
        let d = FD::of(V::F32, [V::F32, V::F64, V::F32]);
        let (a, b, c) = (1.5f32, 2.25f64, -0.5f32);
        let r = call_raw(
            &d,
            None,
            floats as *const c_void,
            &[p(&a), p(&b), p(&c)],
            std::ptr::null_mut(),
        );
        assert_eq!(f32::from_bits(r as u32), 3.25);
        assert_eq!(
            seen(),
            [a.to_bits().into(), b.to_bits(), c.to_bits().into()]
        );
        let vals = [Value::F32(a), Value::F64(b), Value::F32(c)];
        let r = call_values(
            &d,
            None,
            floats as *const c_void,
            &vals,
            &[],
            std::ptr::null_mut(),
        );
        assert_eq!(r.map(|r| f32::from_bits(r as u32)), Some(3.25));
        let d = FD::of(V::F64, [V::F64]);
        let x = 1.25f64;
        let r = call_raw(
            &d,
            None,
            double as *const c_void,
            &[p(&x)],
            std::ptr::null_mut(),
        );
        assert_eq!(f64::from_bits(r), 2.5);
    }

    #[allow(clippy::too_many_arguments)]
    extern "C" fn spill(
        a0: i64,
        a1: i64,
        a2: i64,
        a3: i64,
        a4: i64,
        a5: i64,
        a6: i64,
        a7: i64,
        s0: i64,
        s1: u64,
        s2: i64,
        f0: f64,
        f1: f64,
        f2: f64,
        f3: f64,
        f4: f64,
        f5: f64,
        f6: f64,
        f7: f64,
        s3: u64,
        s4: u64,
    ) -> i64 {
        record(&[
            a0 as u64,
            a1 as u64,
            a2 as u64,
            a3 as u64,
            a4 as u64,
            a5 as u64,
            a6 as u64,
            a7 as u64,
            s0 as u64,
            s1,
            s2 as u64,
            f0.to_bits(),
            f7.to_bits(),
            s3,
            s4,
        ]);
        let _ = (f1, f2, f3, f4, f5, f6);
        a0 + a7 + s0 + s2
    }

    #[test]
    fn many_arguments_spill_to_whole_stack_slots() {
        // 8 ints in x0..x7, then i32 (sign-extended slot), u8 (zero-extended slot), bool; 8
        // doubles in d0..d7, then a double and a float on the stack
        let mut layouts: Vec<MemoryLayout> = vec![MemoryLayout::from(V::I64); 8];
        layouts.extend([V::I32.into(), V::U8.into(), V::BOOL.into()]);
        layouts.extend(vec![V::F64.into(); 8]);
        layouts.extend([V::F64.into(), V::F32.into()]);
        let d = FD::of(V::I64, layouts);
        let pl = linux(&d, None);
        assert_eq!(pl.stack_bytes(), 40);
        let ints: Vec<i64> = (1..=8).collect();
        let (s0, s1, s2) = (-7i32, 0xAAu8, 1u8);
        let fl: Vec<f64> = (0..8).map(|i| i as f64 + 0.5).collect();
        let (s3, s4) = (9.75f64, 3.5f32);
        let mut args: Vec<*const u8> = ints.iter().map(p).collect();
        args.extend([p(&s0), p(&s1), p(&s2)]);
        args.extend(fl.iter().map(p));
        args.extend([p(&s3), p(&s4)]);
        let r = call_raw(
            &d,
            None,
            spill as *const c_void,
            &args,
            std::ptr::null_mut(),
        );
        assert_eq!(r as i64, 1 + 8 - 7 + 1);
        let mut want: Vec<u64> = (1..=8).collect();
        want.extend([
            -7i64 as u64,
            0xAA,
            1,
            0.5f64.to_bits(),
            7.5f64.to_bits(),
            s3.to_bits(),
            u64::from(s4.to_bits()),
        ]);
        assert_eq!(seen(), want);
    }

    extern "C" fn hfas(a: f32, b: f32, c: f32, d0: f64, d1: f64, d2: f64, d3: f64, e: f32) -> f64 {
        record(&[
            a.to_bits().into(),
            b.to_bits().into(),
            c.to_bits().into(),
            d0.to_bits(),
            d3.to_bits(),
            e.to_bits().into(),
        ]);
        f64::from(a + b + c) + d0 + d1 + d2 + d3 + f64::from(e)
    }

    #[test]
    fn hfas_take_consecutive_vector_registers() {
        let f3 = s(&[V::F32; 3]);
        let d4 = s(&[V::F64; 4]);
        let f1 = s(&[V::F32]);
        let d = FD::of(V::F64, [f3, d4, f1]);
        let a = [1.0f32, 2.0, 3.0];
        let b = [10.0f64, 20.0, 30.0, 40.0];
        let c = [0.5f32];
        let r = call_raw(
            &d,
            None,
            hfas as *const c_void,
            &[p(&a), p(&b), p(&c)],
            std::ptr::null_mut(),
        );
        assert_eq!(f64::from_bits(r), 106.5);
        assert_eq!(
            seen(),
            [
                1f32.to_bits().into(),
                2f32.to_bits().into(),
                3f32.to_bits().into(),
                10f64.to_bits(),
                40f64.to_bits(),
                0.5f32.to_bits().into()
            ]
        );
        let (mut a2, mut b2, mut c2) = (a, b, c);
        // SAFETY: the arrays outlive the call and are as long as the layouts.
        let segs = unsafe {
            [
                MemorySegment::from_raw_parts(a2.as_mut_ptr().cast(), 12),
                MemorySegment::from_raw_parts(b2.as_mut_ptr().cast(), 32),
                MemorySegment::from_raw_parts(c2.as_mut_ptr().cast(), 4),
            ]
        };
        let vals = segs.map(Value::Segment);
        let r = call_values(
            &d,
            None,
            hfas as *const c_void,
            &vals,
            &[],
            std::ptr::null_mut(),
        );
        assert_eq!(r.map(f64::from_bits), Some(106.5));
    }

    #[allow(clippy::too_many_arguments)]
    extern "C" fn hfa_spill(
        d0: f64,
        d1: f64,
        d2: f64,
        d3: f64,
        d4: f64,
        d5: f64,
        d6: f64,
        x0: u64,
        x1: u64,
        x2: u64,
        x3: u64,
        x4: u64,
        x5: u64,
        x6: u64,
        x7: u64,
        s0: u64,
        s1: u64,
        s2: u64,
    ) -> f64 {
        record(&[x0, x7, s0, s1, s2]);
        let _ = (x1, x2, x3, x4, x5, x6);
        d0 + d1 + d2 + d3 + d4 + d5 + d6
    }

    extern "C" fn hfa2(a0: f64, a1: f64, b0: f32, b1: f32, b2: f32, b3: f32) -> f64 {
        a0 + a1 + f64::from(b0 + b1 + b2 + b3)
    }

    #[test]
    fn hfas_of_two_and_four_members_and_an_hfa_spilled_whole_with_nsrn_8() {
        let d = FD::of(V::F64, [s(&[V::F64; 2]), s(&[V::F32; 4])]);
        let (a, b) = ([1.0f64, 2.0], [0.25f32, 0.5, 0.75, 1.5]);
        let r = call_raw(
            &d,
            None,
            hfa2 as *const c_void,
            &[p(&a), p(&b)],
            std::ptr::null_mut(),
        );
        assert_eq!(f64::from_bits(r), 6.0);
        // 7 doubles in d0..d6; a two-double HFA does not fit d7: the whole HFA goes to
        // sp+0..16 and NSRN becomes 8, so the next double goes to sp+16 (C.3); 8 ints in x0..x7
        let mut layouts: Vec<MemoryLayout> = vec![V::F64.into(); 7];
        layouts.push(s(&[V::F64; 2]));
        layouts.push(V::F64.into());
        layouts.extend(vec![MemoryLayout::from(V::I64); 8]);
        let d = FD::of(V::F64, layouts);
        let pl = linux(&d, None);
        assert_eq!(pl.stack_bytes(), 24);
        let ds: Vec<f64> = (1..=7).map(f64::from).collect();
        let hfa = [0.5f64, 0.25];
        let after = 8.0f64;
        let ints: Vec<u64> = (100..108).collect();
        let mut args: Vec<*const u8> = ds.iter().map(p).collect();
        args.extend([p(&hfa), p(&after)]);
        args.extend(ints.iter().map(p));
        let r = call_raw(
            &d,
            None,
            hfa_spill as *const c_void,
            &args,
            std::ptr::null_mut(),
        );
        assert_eq!(f64::from_bits(r), 28.0);
        assert_eq!(
            seen(),
            [
                100,
                107,
                0.5f64.to_bits(),
                0.25f64.to_bits(),
                8.0f64.to_bits()
            ]
        );
    }

    #[allow(clippy::too_many_arguments)]
    extern "C" fn eight(
        a0: u64,
        a1: u64,
        a2: u64,
        a3: u64,
        a4: u64,
        a5: u64,
        a6: u64,
        a7: u64,
        s0: u64,
        s1: u64,
        s2: u64,
    ) -> u64 {
        record(&[a0, a1, a2, a3, a4, a5, a6, a7, s0, s1, s2]);
        a0
    }

    #[test]
    fn composites_in_gpr_pairs_at_even_registers_and_spilled_whole() {
        // {i64, i32, i32} in x1, x2 after an i64; then a 16-aligned {i64, i64} at x4 (C.8: x3
        // skipped); then a 12-byte struct that needs two GPRs with one left: spilled whole to
        // the stack (C.11), and the i64 after it goes to the stack too.
        let a16 = s(&[V::I64.with_byte_alignment(16).unwrap(), V::I64]);
        let d = FD::of(
            V::I64,
            [
                V::I64.into(),
                s(&[V::I64, V::I32, V::I32]),
                a16,
                V::I64.into(),
                s(&[V::I32; 3]),
                V::I64.into(),
            ],
        );
        let x = 5u64;
        let pair = [0x1111_2222_3333_4444u64, 0x5555_6666_7777_8888];
        #[repr(C, align(16))]
        struct A16([u64; 2]);
        let al = A16([0xA, 0xB]);
        let y = 6u64;
        let odd = [0x1000_0001u32, 0x2000_0002, 0x3000_0003];
        let z = 7u64;
        call_raw(
            &d,
            None,
            eight as *const c_void,
            &[p(&x), p(&pair), p(&al), p(&y), p(&odd), p(&z)],
            std::ptr::null_mut(),
        );
        let seen = seen();
        assert_eq!(seen[..7], [5, pair[0], pair[1], seen[3], 0xA, 0xB, 6]);
        assert_eq!(seen[8..], [0x2000_0002_1000_0001, 0x3000_0003, 7]);
    }

    /// Two pages, the second inaccessible: `bytes` copied to the end of the first, so any read
    /// past them faults.
    struct Guarded {
        base: *mut u8,
        page: usize,
    }

    impl Guarded {
        fn new() -> Guarded {
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
            // SAFETY: a fresh anonymous mapping; the second page is made inaccessible.
            let base = unsafe {
                let m = libc::mmap(
                    std::ptr::null_mut(),
                    2 * page,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(m, libc::MAP_FAILED);
                assert_eq!(
                    libc::mprotect(m.cast::<u8>().add(page).cast(), page, libc::PROT_NONE),
                    0
                );
                m.cast::<u8>()
            };
            Guarded { base, page }
        }

        /// A pointer to `n` writable bytes ending at the inaccessible page, holding `bytes`.
        fn tail(&self, bytes: &[u8]) -> *mut u8 {
            // SAFETY: within the first page.
            unsafe {
                let p = self.base.add(self.page - bytes.len());
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
                p
            }
        }
    }

    impl Drop for Guarded {
        fn drop(&mut self) {
            // SAFETY: unmapping our own mapping.
            unsafe { libc::munmap(self.base.cast(), 2 * self.page) };
        }
    }

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Three([u8; 3]);

    extern "C" fn odd_target(a: u64, b: u64, c0: u64, c1: u64) -> Three {
        record(&[a, b, c0, c1]);
        Three([0xC1, 0xC2, 0xC3])
    }

    extern "C" fn odd_stack(
        a0: u64,
        a1: u64,
        a2: u64,
        a3: u64,
        a4: u64,
        a5: u64,
        a6: u64,
        a7: u64,
        s0: u64,
        s1: u64,
    ) {
        let _ = (a0, a1, a2, a3, a4, a5, a6);
        record(&[a7, s0, s1]);
    }

    #[test]
    fn odd_size_structs_never_read_past_their_bytes() {
        // 3-, 5- and 12-byte structs in registers, each right before an inaccessible page; the
        // 3-byte result stored right before one too.
        let d = FD::of(
            s(&[V::U8; 3]),
            [s(&[V::U8; 3]), s(&[V::U8; 5]), s(&[V::U8; 12])],
        );
        let g = [
            Guarded::new(),
            Guarded::new(),
            Guarded::new(),
            Guarded::new(),
        ];
        let a = g[0].tail(&[1, 2, 3]);
        let b = g[1].tail(&[1, 2, 3, 4, 5]);
        let c = g[2].tail(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        let ret = g[3].tail(&[0; 3]);
        call_raw(&d, None, odd_target as *const c_void, &[a, b, c], ret);
        assert_eq!(
            seen(),
            [0x030201, 0x05_0403_0201, 0x0807_0605_0403_0201, 0x0C0B_0A09]
        );
        assert_eq!(
            // SAFETY: `ret` is the last 3 bytes of `g[3]`'s readable page (the guard page
            // follows), just written by `call_raw` with `odd_target`'s `Three`; `g` outlives
            // the slice, and any byte is a valid `u8`.
            unsafe { std::slice::from_raw_parts(ret, 3) },
            [0xC1, 0xC2, 0xC3]
        );
        // SAFETY: each segment covers its guarded bytes.
        let vals = unsafe {
            [
                Value::Segment(MemorySegment::from_raw_parts(a, 3)),
                Value::Segment(MemorySegment::from_raw_parts(b, 5)),
                Value::Segment(MemorySegment::from_raw_parts(c, 12)),
            ]
        };
        let ret2 = g[3].tail(&[0; 3]);
        assert!(call_values(&d, None, odd_target as *const c_void, &vals, &[], ret2).is_some());
        assert_eq!(
            seen(),
            [0x030201, 0x05_0403_0201, 0x0807_0605_0403_0201, 0x0C0B_0A09]
        );
        // a 7-byte struct in x7 and a 7-byte struct on the stack (its 8-byte slot zero-filled)
        let mut layouts: Vec<MemoryLayout> = vec![MemoryLayout::from(V::I64); 7];
        layouts.extend([s(&[V::U8; 7]), s(&[V::U8; 7]), V::U8.into()]);
        let d = FD::of_void(layouts);
        let zero = 0u64;
        let g7 = [Guarded::new(), Guarded::new()];
        let x7 = g7[0].tail(&[1, 2, 3, 4, 5, 6, 7]);
        let st = g7[1].tail(&[9, 8, 7, 6, 5, 4, 3]);
        let last = 0xEEu8;
        let mut args = vec![p(&zero); 7];
        args.extend([x7.cast_const(), st.cast_const(), p(&last)]);
        call_raw(
            &d,
            None,
            odd_stack as *const c_void,
            &args,
            std::ptr::null_mut(),
        );
        assert_eq!(seen(), [0x07_0605_0403_0201, 0x03_0405_0607_0809, 0xEE]);
    }

    extern "C" fn by_ref(a: *const [u64; 3], b: *const [u64; 4]) -> u64 {
        // SAFETY: the stub passes pointers to the caller's copies.
        let (a, b) = unsafe { (*a, *b) };
        record(&[a[0], a[2], b[0], b[3]]);
        a.iter().sum::<u64>() + b.iter().sum::<u64>()
    }

    #[allow(clippy::too_many_arguments)]
    extern "C" fn by_ref_stack(
        a0: u64,
        a1: u64,
        a2: u64,
        a3: u64,
        a4: u64,
        a5: u64,
        a6: u64,
        a7: u64,
        s: *const [u64; 3],
    ) -> u64 {
        let _ = (a1, a2, a3, a4, a5, a6, a7);
        // SAFETY: as above.
        let s = unsafe { *s };
        a0 + s[0] + s[1] + s[2]
    }

    #[test]
    fn large_composites_go_through_the_caller_copies() {
        let d = FD::of(V::I64, [s(&[V::I64; 3]), s(&[V::I64; 4])]);
        let (a, b) = ([1u64, 2, 3], [10u64, 20, 30, 40]);
        let r = call_raw(
            &d,
            None,
            by_ref as *const c_void,
            &[p(&a), p(&b)],
            std::ptr::null_mut(),
        );
        assert_eq!(r, 106);
        assert_eq!(seen(), [1, 3, 10, 40]);
        let (mut a2, mut b2) = (a, b);
        // SAFETY: the arrays outlive the call.
        let vals = unsafe {
            [
                Value::Segment(MemorySegment::from_raw_parts(a2.as_mut_ptr().cast(), 24)),
                Value::Segment(MemorySegment::from_raw_parts(b2.as_mut_ptr().cast(), 32)),
            ]
        };
        let r = call_values(
            &d,
            None,
            by_ref as *const c_void,
            &vals,
            &[p(&a), p(&b)],
            std::ptr::null_mut(),
        );
        assert_eq!(r, Some(106));
        let mut layouts: Vec<MemoryLayout> = vec![MemoryLayout::from(V::I64); 8];
        layouts.push(s(&[V::I64; 3]));
        let d = FD::of(V::I64, layouts);
        let ones = [100u64, 1, 1, 1, 1, 1, 1, 1];
        let mut args: Vec<*const u8> = ones.iter().map(p).collect();
        args.push(p(&a));
        let r = call_raw(
            &d,
            None,
            by_ref_stack as *const c_void,
            &args,
            std::ptr::null_mut(),
        );
        assert_eq!(r, 106);
    }

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Big([u64; 3]);
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Pair(u64, u64);
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Twelve(u32, u32, u32);
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct D4([f64; 4]);
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct F3([f32; 3]);

    extern "C" fn ret_big(x: u64) -> Big {
        Big([x, x + 1, x + 2])
    }
    extern "C" fn ret_pair(x: u64) -> Pair {
        Pair(x, !x)
    }
    extern "C" fn ret_twelve(x: u64) -> Twelve {
        Twelve(x as u32, 2, 3)
    }
    extern "C" fn ret_d4(x: f64) -> D4 {
        D4([x, 2.0 * x, 3.0 * x, 4.0 * x])
    }
    extern "C" fn ret_f3(x: f64) -> F3 {
        F3([x as f32, 1.5, 2.5])
    }

    #[test]
    fn results_through_x8_and_in_x0_x1_and_v0_v3() {
        let x = 40u64;
        let mut big = [0u8; 24 + 8];
        let d = FD::of(s(&[V::I64; 3]), [V::I64]);
        call_raw(
            &d,
            None,
            ret_big as *const c_void,
            &[p(&x)],
            big.as_mut_ptr(),
        );
        assert_eq!(big[..24], *bytes_of(&Big([40, 41, 42])));
        assert_eq!(big[24..], [0; 8]);
        let vals = [Value::I64(41)];
        let mut big = [0u8; 24];
        assert!(call_values(
            &d,
            None,
            ret_big as *const c_void,
            &vals,
            &[],
            big.as_mut_ptr()
        )
        .is_some());
        assert_eq!(big, *bytes_of(&Big([41, 42, 43])));

        let mut out = [0xFFu8; 17];
        let d = FD::of(s(&[V::I64; 2]), [V::I64]);
        call_raw(
            &d,
            None,
            ret_pair as *const c_void,
            &[p(&x)],
            out.as_mut_ptr(),
        );
        assert_eq!(out[..16], *bytes_of(&Pair(40, !40)));
        assert_eq!(out[16], 0xFF);

        let mut out = [0xFFu8; 13];
        let d = FD::of(s(&[V::I32; 3]), [V::I64]);
        call_raw(
            &d,
            None,
            ret_twelve as *const c_void,
            &[p(&x)],
            out.as_mut_ptr(),
        );
        assert_eq!(out[..12], *bytes_of(&Twelve(40, 2, 3)));
        assert_eq!(out[12], 0xFF);

        let y = 1.5f64;
        let mut out = [0u8; 32];
        let d = FD::of(s(&[V::F64; 4]), [V::F64]);
        call_raw(
            &d,
            None,
            ret_d4 as *const c_void,
            &[p(&y)],
            out.as_mut_ptr(),
        );
        assert_eq!(out, *bytes_of(&D4([1.5, 3.0, 4.5, 6.0])));

        let mut out = [0xFFu8; 13];
        let d = FD::of(s(&[V::F32; 3]), [V::F64]);
        call_raw(
            &d,
            None,
            ret_f3 as *const c_void,
            &[p(&y)],
            out.as_mut_ptr(),
        );
        assert_eq!(out[..12], *bytes_of(&F3([1.5, 1.5, 2.5])));
        assert_eq!(out[12], 0xFF);
    }

    fn bytes_of<T>(v: &T) -> &[u8] {
        // SAFETY: plain-old-data test structs without padding.
        unsafe { std::slice::from_raw_parts(p(v), std::mem::size_of::<T>()) }
    }

    #[test]
    fn variadic_calls_promote_floats_and_pass_like_named_arguments() {
        // int snprintf(char *, size_t, const char *, ...) with an int, a double and a float
        let d = FD::of(
            V::I32,
            [V::ADDRESS, V::I64, V::ADDRESS, V::I32, V::F64, V::F32],
        );
        let mut buf = [0u8; 64];
        let bp = buf.as_mut_ptr();
        let n = buf.len() as u64;
        let fmt = c"%d %.2f %.1f".as_ptr();
        let (i, f, g) = (-42i32, 2.5f64, 0.25f32);
        let r = call_raw(
            &d,
            Some(3),
            libc::snprintf as *const c_void,
            &[p(&bp), p(&n), p(&fmt), p(&i), p(&f), p(&g)],
            std::ptr::null_mut(),
        );
        let text = b"-42 2.50 0.2";
        assert_eq!(r as i32, text.len() as i32);
        assert_eq!(&buf[..text.len()], text);
        let vals = [
            Value::Address(bp.cast()),
            Value::I64(n as i64),
            Value::Address(fmt.cast_mut().cast()),
            Value::I32(7),
            Value::F64(1.0),
            Value::F32(-3.5),
        ];
        let r = call_values(
            &d,
            Some(3),
            libc::snprintf as *const c_void,
            &vals,
            &[],
            std::ptr::null_mut(),
        );
        assert_eq!(r.map(|r| r as i32), Some(11));
        assert_eq!(&buf[..11], b"7 1.00 -3.5");
    }

    extern "C" fn errno_target(a: i32, p: *const u8, b: i64) -> i64 {
        // SAFETY: this thread's errno.
        let e = unsafe { libc::__errno_location() };
        // SAFETY: as above.
        let before = unsafe { *e };
        // SAFETY: as above.
        unsafe { *e = 42 };
        record(&[before as u64, a as u64, p as u64, b as u64]);
        -1
    }

    #[test]
    fn capture_restores_errno_before_and_saves_it_after() {
        let d = FD::of(V::I64, [V::I32, V::ADDRESS, V::I64]);
        let (_, stub) = place(&d, None, true);
        let (a, ptr, b) = (3i32, 0x1234usize as *const u8, 99i64);
        let mut slot = 7i32;
        // SAFETY: this thread's errno.
        unsafe { *thread_errno() = 0 };
        // SAFETY: the target matches the descriptor; `slot` and errno are valid.
        let r = unsafe {
            (stub.raw)(
                [p(&a), p(&ptr), p(&b)].as_ptr(),
                std::ptr::null_mut(),
                &mut slot,
                errno_target as *const c_void,
                std::ptr::null(),
                thread_errno(),
            )
        };
        assert_eq!(r as i64, -1);
        assert_eq!(seen(), [7, 3, 0x1234, 99]);
        assert_eq!(slot, 42);
        let mut slot = 5i32;
        let vals = [
            Value::I32(3),
            Value::Address(ptr.cast_mut().cast()),
            Value::I64(99),
        ];
        // SAFETY: as above.
        let r = unsafe {
            stub.values.call(
                vals.as_ptr(),
                std::ptr::null_mut(),
                &mut slot,
                errno_target as *const c_void,
                std::ptr::null(),
                thread_errno(),
            )
        };
        assert_eq!(r.map(|r| r as i64), Some(-1));
        assert_eq!(seen()[0], 5);
        assert_eq!(slot, 42);
    }

    #[test]
    fn values_entry_rejects_wrong_tags_and_short_segments_without_calling() {
        let d = FD::of(V::I64, [V::I32.into(), s(&[V::I64, V::I64]), V::F64.into()]);
        let mut pair = [1u64, 2];
        let good_seg = MemorySegment::of_slice(bytemuck_pair(&mut pair));
        let before = calls();
        let mut out = 0xABu8;
        let cases: Vec<[Value<'_>; 3]> = vec![
            [Value::I64(1), Value::Segment(good_seg), Value::F64(1.0)],
            [
                Value::I32(1),
                Value::Segment(good_seg.slice(0, 15).unwrap()),
                Value::F64(1.0),
            ],
            [Value::I32(1), Value::I64(0), Value::F64(1.0)],
            [Value::I32(1), Value::Segment(good_seg), Value::F32(1.0)],
        ];
        for vals in &cases {
            let r = call_values(&d, None, sum3 as *const c_void, vals, &[], &mut out);
            assert_eq!(r, None, "{vals:?}");
        }
        assert_eq!(calls(), before, "a rejected call ran the target");
        assert_eq!(out, 0xAB);
        let vals = [Value::I32(1), Value::Segment(good_seg), Value::F64(4.0)];
        let r = call_values(&d, None, sum3 as *const c_void, &vals, &[], &mut out);
        assert_eq!(r, Some(8));
        assert_eq!(calls(), before + 1);
        // a longer segment is fine
        let mut wide = [1u64, 2, 3];
        // SAFETY: `wide` outlives the call.
        let seg = unsafe { MemorySegment::from_raw_parts(wide.as_mut_ptr().cast(), 24) };
        let vals = [Value::I32(1), Value::Segment(seg), Value::F64(4.0)];
        assert_eq!(
            call_values(&d, None, sum3 as *const c_void, &vals, &[], &mut out),
            Some(8)
        );
    }

    fn bytemuck_pair(v: &mut [u64; 2]) -> &mut [u8] {
        // SAFETY: 16 initialised bytes, borrowed as long as `v`.
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), 16) }
    }

    extern "C" fn sum3(a: i32, b0: u64, b1: u64, c: f64) -> i64 {
        record(&[a as u64, b0, b1, c.to_bits()]);
        i64::from(a) + (b0 + b1) as i64 + c as i64
    }

    #[test]
    fn the_cache_shares_live_stubs() {
        let d = FD::of(V::I64, [V::I64, V::F64, V::I16]);
        let pl = linux(&d, None);
        let a = stub_for(&pl, &checks_of(&d), false).unwrap();
        let b = stub_for(&pl, &checks_of(&d), false).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let c = stub_for(&pl, &checks_of(&d), true).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
    }
}
