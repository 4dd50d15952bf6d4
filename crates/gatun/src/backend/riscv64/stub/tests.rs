//! Tests of the RISC-V 64 stub compiler, on every host: the emitted words (every word an
//! uncompressed instruction the encoder knows, no register field naming `gp` or `tp`, every
//! word disassembled by `riscv64-linux-gnu-objdump` when installed), exact sequences and
//! per-call instruction counts for typical shapes, the tail form, the rejection path and its
//! islands, exact-width pieces of odd sizes, large displacements and the probing loop of large
//! frames.

use super::*;
use crate::layout::FunctionDescriptor as FD;
use crate::layout::{MemoryLayout, ScalarKind, ValueLayout as V};

use e::{FWidth as W, Load as L, Store as S};

// Registers by ABI name.
const ZERO: X = X::ZERO;
const RA: X = X::RA;
const A0: X = X::A0;
const A1: X = X::A1;
const A3: X = X::A3;
const T0: X = X::T0;
const T1: X = X::T1;
const T3: X = X::T3;
const T4: X = X::T4;
const T5: X = X::T5;
const T6: X = X::T6;

fn a(n: u8) -> X {
    X::a(n)
}
fn fa(n: u8) -> F {
    F::fa(n)
}

fn checks_of(d: &FD) -> Vec<ArgCheck> {
    d.argument_layouts()
        .iter()
        .map(|l| match l {
            MemoryLayout::Value(v) => ArgCheck::Scalar(v.kind()),
            g => ArgCheck::Group(g.byte_size() as u32),
        })
        .collect()
}

/// The LP64D plan of `d` (the RISC-V classifier's).
fn plan_of(d: &FD, fv: Option<usize>) -> CallPlan {
    crate::abi::riscv64::plan(d, fv).unwrap()
}

fn code_of(d: &FD, fv: Option<usize>, capture: bool) -> StubCode {
    compile(&plan_of(d, fv), &checks_of(d), capture)
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The integer register fields of an instruction word the encoder emits, or `None` for a word
/// of no known instruction (the floating-point register fields are not listed).
fn int_register_fields(w: u32) -> Option<Vec<u32>> {
    let (rd, rs1, rs2) = (w >> 7 & 31, w >> 15 & 31, w >> 20 & 31);
    let (funct3, funct7) = (w >> 12 & 7, w >> 25);
    Some(match w & 0x7F {
        _ if w == e::UNIMP => vec![],
        0x03 if funct3 != 7 => vec![rd, rs1],         // loads
        0x07 if matches!(funct3, 2 | 3) => vec![rs1], // flw, fld
        0x13 if !matches!(funct3, 1 | 5) || funct7 >> 1 & !0x10 == 0 => vec![rd, rs1], // op-imm
        0x1B if funct3 == 0 => vec![rd, rs1],         // addiw
        0x23 if funct3 < 4 => vec![rs1, rs2],         // stores
        0x27 if matches!(funct3, 2 | 3) => vec![rs1], // fsw, fsd
        0x33 if funct7 == 0 || (funct7 == 0x20 && funct3 == 0) => vec![rd, rs1, rs2],
        0x37 => vec![rd],                                   // lui
        0x63 if !matches!(funct3, 2 | 3) => vec![rs1, rs2], // branches
        0x67 if funct3 == 0 => vec![rd, rs1],               // jalr
        0x6F => vec![rd],                                   // jal
        0x53 if w & 0xFFF0_707F == 0x4200_0053 => vec![],   // fcvt.d.s, rm 0
        0x53 if funct3 == 0 && rs2 == 0 => match funct7 {
            0x71 => vec![rd],  // fmv.x.d
            0x79 => vec![rs1], // fmv.d.x
            _ => return None,
        },
        _ => return None,
    })
}

/// Every word an uncompressed instruction the encoder knows, no integer register field `gp`
/// (3) or `tp` (4), the values entry 16-byte aligned.
fn check_words(code: &StubCode, what: &str) {
    assert_eq!(code.values % 16, 0, "{what}");
    for (i, &w) in words(&code.bytes).iter().enumerate() {
        assert_eq!(w & 3, 3, "{what}: word {w:#010x} at {i} is compressed");
        let fields = int_register_fields(w)
            .unwrap_or_else(|| panic!("{what}: unknown word {w:#010x} at {i}"));
        assert!(
            !fields.iter().any(|&r| r == 3 || r == 4),
            "{what}: word {w:#010x} at {i} names gp or tp"
        );
    }
}

fn s(members: &[V]) -> MemoryLayout {
    MemoryLayout::c_struct(members.iter().cloned()).unwrap()
}

/// A spread of signatures covering every move kind, conversion, return kind and stack case.
fn shapes() -> Vec<(&'static str, FD, Option<usize>)> {
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
            "fp_pairs",
            FD::of(
                s(&[V::F32, V::F32]),
                [
                    s(&[V::F64, V::F64]),
                    s(&[V::F32, V::I32]),
                    s(&[V::I8, V::F64]),
                ],
            ),
            None,
        ),
        ("mixed_ret", FD::of(s(&[V::F64, V::I64]), [V::I64]), None),
        (
            "odd",
            FD::of(
                s(&[V::U8; 7]),
                [
                    s(&[V::U8; 3]),
                    s(&[V::U8; 5]),
                    s(&[V::U8; 6]),
                    s(&[V::U8; 12]),
                ],
            ),
            None,
        ),
        (
            "split",
            FD::of_void(
                [
                    vec![MemoryLayout::from(V::I64); 7],
                    vec![s(&[V::I64, V::I32]), V::I64.into()],
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
        ("big_ret", FD::of(s(&[V::I64; 3]), [V::I64, V::I32]), None),
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
            Some(9),
        ),
        ("many", FD::of(V::I64, vec![V::I64; 200]), None),
        ("big_frame", FD::of(V::I64, vec![V::I64; 8 + 1000]), None),
    ]
}

#[test]
fn every_word_is_known_and_no_word_names_gp_or_tp() {
    for (name, d, fv) in shapes() {
        for capture in [false, true] {
            let code = code_of(&d, fv, capture);
            check_words(&code, &format!("{name} capture={capture}"));
        }
    }
}

/// Every stub's words, disassembled by `riscv64-linux-gnu-objdump` (when installed), are
/// instructions: no `.word`/`.4byte`/unknown, no `gp`/`tp` operand.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "runs the cross disassembler")]
fn every_word_disassembles() {
    let mut all = Vec::new();
    for (_, d, fv) in shapes() {
        for capture in [false, true] {
            all.extend(words(&code_of(&d, fv, capture).bytes));
        }
    }
    let Some(lines) = super::super::encode::tests::disassemble(&all) else {
        return;
    };
    assert_eq!(lines.len(), all.len());
    for (line, w) in lines.iter().zip(&all) {
        assert!(
            !line.contains("word") && !line.contains("byte") && !line.contains("unknown"),
            "{w:#010x}: {line}"
        );
        let operands = line.split_whitespace().nth(1).unwrap_or("");
        for op in operands.split([',', '(', ')']) {
            assert!(op != "gp" && op != "tp", "{w:#010x}: {line}");
        }
    }
}

#[test]
fn id_i32_raw_entry_is_a_tail_jump() {
    let code = code_of(&FD::of(V::I32, [V::I32]), None, false);
    let ws = words(&code.bytes);
    assert_eq!(
        ws[..3],
        [
            e::load(L::D, T3, A0, 0),
            e::load(L::W, A0, T3, 0),
            e::jalr(ZERO, A3, 0),
        ]
    );
    assert_eq!(code.paths.raw, 3);
    // a3 is an argument register of add6: the target moves to t1 first
    let code = code_of(&FD::of(V::I64, [V::I64; 6]), None, false);
    let ws = words(&code.bytes);
    assert_eq!(ws[0], e::mv(T1, A3));
    assert_eq!(ws[code.paths.raw - 1], e::jalr(ZERO, T1, 0));
}

/// The frame record's four words.
fn record() -> [u32; 4] {
    [
        e::addi(SP, SP, -16),
        e::store(S::D, RA, SP, 8),
        e::store(S::D, FP, SP, 0),
        e::addi(FP, SP, 16),
    ]
}

/// The epilogue of a frame without own slots or stack area.
fn epilogue() -> [u32; 4] {
    [
        e::load(L::D, RA, SP, 8),
        e::load(L::D, FP, SP, 0),
        e::addi(SP, SP, 16),
        e::ret(),
    ]
}

#[test]
fn values_entry_checks_then_frames_the_call() {
    let d = FD::of(V::I32, [V::I32]);
    let code = code_of(&d, None, false);
    let ws = words(&code.bytes[code.values..]);
    let tag = i32::from(scalar_tag(ScalarKind::I32));
    let want: Vec<u32> = [
        e::load(L::Bu, T0, A0, 0),
        e::xori(T0, T0, tag),
        e::branch(Cond::Ne, T0, ZERO, 4 * 12),
    ]
    .into_iter()
    .chain(record())
    .chain([
        e::load(L::W, A0, A0, 8),
        e::jalr(RA, A3, 0),
        e::addi(T0, ZERO, 0),
    ])
    .chain(epilogue())
    .chain([e::addi(T0, ZERO, 1), e::ret()])
    .collect();
    assert_eq!(ws, want);
    assert_eq!(code.paths.values, 14);
}

#[test]
fn group_checks_compare_the_segment_length_unsigned() {
    let d = FD::of_void([s(&[V::I64, V::I64]), s(&[V::I64; 300])]);
    let code = code_of(&d, None, false);
    let ws = words(&code.bytes[code.values..]);
    let seg = i32::from(segment_tag());
    let len = VALUE_PAYLOAD + MemorySegment::LEN_OFFSET as i32;
    let mut want = vec![
        e::load(L::Bu, T0, A0, 0),
        e::xori(T0, T0, seg),
        0, // bne to the rejection path
        e::load(L::D, T0, A0, len),
        e::sltiu(T0, T0, 16),
        0,
        e::load(L::Bu, T0, A0, 24),
        e::xori(T0, T0, seg),
        0,
        e::load(L::D, T0, A0, 24 + len),
    ];
    want.extend(e::li(T6, 2400));
    want.push(0); // bltu
    let got: Vec<u32> = ws[..want.len()]
        .iter()
        .zip(&want)
        .map(|(&g, &w)| if w == 0 { 0 } else { g })
        .collect();
    assert_eq!(got, want);
    // the branches: bne t0, zero and bltu t0, t6, all to the same rejection path
    let fail = ws.len() - 2;
    assert_eq!(ws[fail..], [e::addi(T0, ZERO, 1), e::ret()]);
    for (i, w) in want.iter().enumerate().filter(|(_, &w)| w == 0) {
        let off = 4 * (fail as i32 - i as i32);
        let cond = if i == want.len() - 1 {
            e::branch(Cond::Ltu, T0, T6, off)
        } else {
            e::branch(Cond::Ne, T0, ZERO, off)
        };
        assert_eq!(ws[i], cond, "branch {i} ({w})");
    }
}

/// The words of the raw entry's normal path.
fn raw_path(code: &StubCode) -> Vec<u32> {
    words(&code.bytes[..code.paths.raw * 4])
}

#[test]
fn odd_sizes_are_assembled_from_exact_pieces() {
    // a 7-byte struct in a0: lwu + lhu + lbu, never an 8-byte load
    let d = FD::of_void([s(&[V::U8; 7])]);
    let code = code_of(&d, None, false);
    assert_eq!(
        raw_path(&code),
        [
            e::load(L::D, T3, A0, 0),
            e::load(L::Wu, A0, T3, 0),
            e::load(L::Hu, T4, T3, 4),
            e::slli(T4, T4, 32),
            e::or(A0, A0, T4),
            e::load(L::Bu, T4, T3, 6),
            e::slli(T4, T4, 48),
            e::or(A0, A0, T4),
            e::jalr(ZERO, A3, 0),
        ]
    );
    // each size's loads from the argument (t3) cover exactly its bytes
    for size in 1..=16u8 {
        let d = FD::of_void([s(&vec![V::U8; size as usize])]);
        let code = code_of(&d, None, false);
        let mut covered = vec![0u8; size as usize];
        for w in raw_path(&code) {
            if w & 0x7F == 0x03 && (w >> 15 & 31) == u32::from(T3.num()) {
                let width = 1usize << (w >> 12 & 3);
                let at = (w >> 20) as usize;
                for b in &mut covered[at..at + width] {
                    *b += 1;
                }
            }
        }
        assert_eq!(covered, vec![1; size as usize], "{size} bytes");
    }
}

#[test]
fn odd_size_results_are_stored_with_exact_pieces() {
    // a 3-byte struct returned in a0: sh + sb at ret, no wider store
    let d = FD::of(s(&[V::U8; 3]), []);
    let code = code_of(&d, None, false);
    let ws = raw_path(&code);
    let call = ws.iter().position(|&w| w == e::jalr(RA, A3, 0)).unwrap();
    assert_eq!(
        ws[call + 1..call + 6],
        [
            e::load(L::D, T4, FP, -24),
            e::mv(T5, A0),
            e::store(S::H, T5, T4, 0),
            e::srli(T5, T5, 16),
            e::store(S::B, T5, T4, 2),
        ]
    );
    // 12 bytes in a0, a1: sd + sw
    let d = FD::of(s(&[V::I32; 3]), [V::I64]);
    let ws = raw_path(&code_of(&d, None, false));
    let call = ws.iter().position(|&w| w == e::jalr(RA, A3, 0)).unwrap();
    assert_eq!(
        ws[call + 1..call + 4],
        [
            e::load(L::D, T4, FP, -24),
            e::store(S::D, A0, T4, 0),
            e::store(S::W, A1, T4, 8),
        ]
    );
    // { float, float } in fa0, fa1: fsw each
    let d = FD::of(s(&[V::F32, V::F32]), []);
    let ws = raw_path(&code_of(&d, None, false));
    let call = ws.iter().position(|&w| w == e::jalr(RA, A3, 0)).unwrap();
    assert_eq!(
        ws[call + 1..call + 4],
        [
            e::load(L::D, T4, FP, -24),
            e::fstore(W::S, fa(0), T4, 0),
            e::fstore(W::S, fa(1), T4, 4),
        ]
    );
}

#[test]
fn floats_go_to_fprs_nan_boxed_and_the_result_bits_come_back_in_a0() {
    let d = FD::of(V::F32, [V::F32, V::F64, V::F32]);
    let ws = raw_path(&code_of(&d, None, false));
    let want: Vec<u32> = record()
        .into_iter()
        .chain([
            e::load(L::D, T3, A0, 0),
            e::fload(W::S, fa(0), T3, 0),
            e::load(L::D, T3, A0, 8),
            e::fload(W::D, fa(1), T3, 0),
            e::load(L::D, T3, A0, 16),
            e::fload(W::S, fa(2), T3, 0),
            e::jalr(RA, A3, 0),
            e::fmv_x_d(A0, fa(0)),
        ])
        .chain(epilogue())
        .collect();
    assert_eq!(ws, want);
    // a variadic float is promoted to a double in a GPR
    let d = FD::of(V::I32, [V::ADDRESS, V::F32]);
    let ws = raw_path(&code_of(&d, Some(1), false));
    assert_eq!(
        ws,
        [
            e::load(L::D, T3, A0, 8),
            e::fload(W::S, F::FT0, T3, 0),
            e::fcvt_d_s(F::FT0, F::FT0),
            e::fmv_x_d(a(1), F::FT0),
            e::load(L::D, T3, A0, 0),
            e::load(L::D, A0, T3, 0),
            e::jalr(ZERO, A3, 0),
        ]
    );
}

#[test]
fn bools_are_normalised_and_narrow_integers_extended() {
    let d = FD::of(
        V::I64,
        [V::I8, V::U8, V::I16, V::U16, V::I32, V::U32, V::BOOL],
    );
    let code = code_of(&d, None, false);
    let ws = words(&code.bytes[code.values..]);
    let p = |i: i32| 24 * i + 8;
    let moves = [
        e::load(L::Bu, a(1), A0, p(1)),
        e::load(L::H, a(2), A0, p(2)),
        e::load(L::Hu, a(3), A0, p(3)),
        e::load(L::W, a(4), A0, p(4)),
        e::load(L::W, a(5), A0, p(5)),
        e::load(L::Bu, a(6), A0, p(6)),
        e::sltu(a(6), ZERO, a(6)),
        e::load(L::B, A0, A0, p(0)),
    ];
    let at = ws.windows(moves.len()).position(|w| w == moves);
    assert!(at.is_some(), "{ws:x?}");
}

#[test]
fn capture_restores_right_before_and_saves_right_after_the_call() {
    let d = FD::of(V::I64, [V::I32, V::ADDRESS, V::I64]);
    let code = code_of(&d, None, true);
    let ws = raw_path(&code);
    // capture and errno saved right after the frame is made
    assert_eq!(
        ws[4..7],
        [
            e::addi(SP, SP, -16),
            e::store(S::D, X::A2, FP, -24),
            e::store(S::D, X::A5, FP, -32),
        ]
    );
    let call = ws.iter().position(|&w| w == e::jalr(RA, A3, 0)).unwrap();
    assert_eq!(
        ws[call - 4..call + 5],
        [
            e::load(L::D, T4, FP, -24),
            e::load(L::D, T6, FP, -32),
            e::load(L::W, T5, T4, 0),
            e::store(S::W, T5, T6, 0),
            e::jalr(RA, A3, 0),
            e::load(L::D, T4, FP, -24),
            e::load(L::D, T6, FP, -32),
            e::load(L::W, T5, T6, 0),
            e::store(S::W, T5, T4, 0),
        ]
    );
}

#[test]
fn in_memory_results_pass_ret_in_a0_after_the_moves() {
    // a 24-byte struct: a0 = ret; the arguments start at a1, so ret waits in t0
    let d = FD::of(s(&[V::I64; 3]), [V::I64, V::I32]);
    let code = code_of(&d, None, false);
    assert_eq!(
        raw_path(&code),
        [
            e::mv(T0, A1),
            e::load(L::D, T3, A0, 0),
            e::load(L::D, a(1), T3, 0),
            e::load(L::D, T3, A0, 8),
            e::load(L::W, a(2), T3, 0),
            e::mv(A0, T0),
            e::jalr(ZERO, A3, 0),
        ]
    );
    // no argument: ret moves straight from a1
    let d = FD::of(s(&[V::I64; 3]), []);
    assert_eq!(
        raw_path(&code_of(&d, None, false)),
        [e::mv(A0, A1), e::jalr(ZERO, A3, 0)]
    );
}

#[test]
fn by_reference_arguments_take_the_copies_pointers() {
    let d = FD::of(V::I64, [s(&[V::I64; 3]), s(&[V::I64; 4])]);
    assert_eq!(
        raw_path(&code_of(&d, None, false)),
        [
            e::load(L::D, a(1), X::A4, 8),
            e::load(L::D, A0, X::A4, 0),
            e::jalr(ZERO, A3, 0),
        ]
    );
    // a4 is an argument register: copies move to t2 first
    let mut layouts = vec![MemoryLayout::from(V::I64); 6];
    layouts.push(s(&[V::I64; 3]));
    let d = FD::of(V::I64, layouts);
    let ws = raw_path(&code_of(&d, None, false));
    assert_eq!(ws[..2], [e::mv(T1, A3), e::mv(X::T2, X::A4)]);
    assert!(ws.contains(&e::load(L::D, a(6), X::T2, 0)));
}

/// The per-call instruction counts of the benchmark rows (both entries; frame and checks
/// included, the target not).
#[test]
fn path_lengths_of_the_benchmark_rows() {
    let rows: Vec<(&str, FD, bool, PathLengths)> = vec![
        (
            "noop",
            FD::of_void([]),
            false,
            PathLengths { raw: 1, values: 10 },
        ),
        (
            "id_i32",
            FD::of(V::I32, [V::I32]),
            false,
            PathLengths { raw: 3, values: 14 },
        ),
        (
            "add6",
            FD::of(V::I64, [V::I64; 6]),
            false,
            PathLengths {
                raw: 14,
                values: 35,
            },
        ),
        (
            "by_value",
            FD::of(V::I64, [s(&[V::I64, V::I64])]),
            false,
            PathLengths { raw: 4, values: 19 },
        ),
        (
            "syscall",
            FD::of(V::I64, [V::I32, V::ADDRESS, V::I64]),
            true,
            PathLengths {
                raw: 27,
                values: 34,
            },
        ),
    ];
    for (name, d, capture, want) in rows {
        let p = plan_of(&d, None);
        assert_eq!(path_lengths(&p, &checks_of(&d), capture), want, "{name}");
    }
}

#[test]
fn large_value_offsets_use_lui_and_add() {
    // 200 arguments: the tags of the later values are beyond the 2047-byte offset field
    let d = FD::of(V::I64, vec![V::I64; 200]);
    let code = code_of(&d, None, false);
    let ws = words(&code.bytes[code.values..]);
    // value 100's tag at 2400 = 4096 - 1696: lui t6, 1; add t6, t6, a0; lbu t0, -1696(t6)
    let tag = [
        e::lui(T6, 1),
        e::add(T6, T6, A0),
        e::load(L::Bu, T0, T6, -1696),
    ];
    assert_eq!(ws.windows(3).filter(|w| *w == tag).count(), 1);
    check_words(&code, "many");
}

/// The words of the stack probe of a `frame`-byte frame (see `sub_sp_probed`).
fn probe_words(frame: u32) -> Vec<u32> {
    let mut w = vec![
        e::lui(T6, 1),
        e::lui(T0, frame / 4096),
        e::sub(T0, SP, T0),
        e::sub(SP, SP, T6),
        e::store(S::D, ZERO, SP, 0),
        e::branch(Cond::Ne, SP, T0, -8),
    ];
    if frame % 4096 > 0 {
        w.extend(e::add_large(SP, SP, -i64::from(frame % 4096), T6));
    }
    w
}

#[test]
fn frames_of_a_page_or_more_are_probed_page_by_page_going_down() {
    // 8 longs in a0..a7, then 1,000 on the stack: an 8,000-byte frame, one probed page and
    // 3,904 bytes more (two addi), right after the frame record in both entries.
    let d = FD::of(V::I64, vec![V::I64; 8 + 1000]);
    let code = code_of(&d, None, false);
    check_words(&code, "1,008 longs");
    for entry in [code.raw, code.values] {
        let ws = words(&code.bytes[entry..]);
        let at = ws.windows(4).position(|w| w == record()).unwrap() + 4;
        assert_eq!(ws[at..at + 8], probe_words(8000), "entry at {entry}");
    }
    // Each entry executes the loop's three words once per page.
    let lengths = path_lengths(&plan_of(&d, None), &checks_of(&d), false);
    let big = FD::of(V::I64, vec![V::I64; 8 + 131_072]);
    let big_code = code_of(&big, None, false);
    assert_eq!(
        words(&big_code.bytes[big_code.raw..])[4..10],
        probe_words(1 << 20)
    );
    let big_lengths = path_lengths(&plan_of(&big, None), &checks_of(&big), false);
    // 130,072 more stack moves of at least three words (ld t3, ld t5, sd), 255 more pages of
    // three words, the same prologue otherwise.
    assert!(big_lengths.raw > lengths.raw + 3 * 130_072 + 3 * 255);
    // A frame under a page: one or two `addi sp`.
    let small = code_of(&FD::of(V::I64, vec![V::I64; 8 + 250]), None, false);
    assert_eq!(words(&small.bytes)[4], e::addi(SP, SP, -2000));
    let small = code_of(&FD::of(V::I64, vec![V::I64; 8 + 500]), None, false);
    assert_eq!(
        words(&small.bytes)[4..6],
        [e::addi(SP, SP, -2048), e::addi(SP, SP, -1952)]
    );
}

#[test]
fn stack_offsets_past_the_offset_field_go_through_t6() {
    // 300 longs on the stack: offsets 2048.. are stored with `lui t6; add t6, t6, sp; sd`.
    let d = FD::of(V::I64, vec![V::I64; 8 + 300]);
    let code = code_of(&d, None, false);
    check_words(&code, "308 longs");
    let ws = words(&code.bytes);
    let is_store_via_t6 = |w: &u32| w & 0x707F == 0x3023 && (w >> 15 & 31) == 31;
    // both entries, slots 256..300
    assert_eq!(ws.iter().filter(|w| is_store_via_t6(w)).count(), 2 * 44);
    // The last slot, 2,392 = 4096 - 1704.
    let last = [
        e::lui(T6, 1),
        e::add(T6, T6, SP),
        e::store(S::D, T5, T6, -1704),
    ];
    assert_eq!(ws.windows(3).filter(|w| *w == last).count(), 2);
    // Near the 1 MiB limit: 1,048,568 = 256 × 4096 - 8.
    let d = FD::of(V::I64, vec![V::I64; 8 + 131_072]);
    let ws = words(&code_of(&d, None, false).bytes);
    let last = [
        e::lui(T6, 256),
        e::add(T6, T6, SP),
        e::store(S::D, T5, T6, -8),
    ];
    assert_eq!(ws.windows(3).filter(|w| *w == last).count(), 2);
}

#[test]
fn very_many_checks_reject_through_islands_within_branch_reach() {
    // 300 arguments: the end of the values entry is more than 4 KiB after the first check,
    // beyond a conditional branch; each block of 64 checks gets its own rejection path.
    let n = 300;
    let d = FD::of(V::I64, vec![V::I64; n]);
    let code = code_of(&d, None, false);
    check_words(&code, "300 longs");
    let ws = words(&code.bytes[code.values..]);
    let island = [e::addi(T0, ZERO, 1), e::ret()];
    let islands = ws.windows(2).filter(|w| *w == island).count();
    assert_eq!(islands, n.div_ceil(ISLAND_CHECKS));
    // Every conditional branch of the checks goes forward to the next island.
    for (i, &w) in ws.iter().enumerate() {
        if w & 0x7F == 0x63 && (w >> 15 & 31) == u32::from(T0.num()) {
            let imm = ((w >> 31 & 1) << 12
                | (w >> 7 & 1) << 11
                | (w >> 25 & 0x3F) << 5
                | (w >> 8 & 0xF) << 1) as i32;
            let off = (imm << 19) >> 19;
            assert!(off > 0, "branch at {i} goes back");
            assert_eq!(ws[i + off as usize / 4..][..2], island, "branch at {i}");
        }
    }
    // Islands cost one `j` each on the normal path.
    let plain = code_of(&FD::of(V::I64, vec![V::I64; 20]), None, false);
    let ws = words(&plain.bytes[plain.values..]);
    assert_eq!(ws.windows(2).filter(|w| *w == island).count(), 1);
    assert_eq!(ws[ws.len() - 2..], island);
}

#[test]
fn the_raw_entry_pads_to_the_values_entry_with_unimp() {
    let code = code_of(&FD::of(V::I32, [V::I32]), None, false);
    let ws = words(&code.bytes);
    assert_eq!(code.values, 16);
    assert_eq!(ws[3], e::UNIMP);
}
