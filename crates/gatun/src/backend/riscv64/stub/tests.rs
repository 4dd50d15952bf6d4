//! Tests of the RISC-V 64 stub compiler, on every host: the emitted words (every word an
//! uncompressed instruction the encoder knows, no register field naming `gp` or `tp`, every
//! word disassembled by `riscv64-linux-gnu-objdump` when installed), exact sequences and
//! per-call instruction counts for typical shapes, the tail form, the rejection path and its
//! islands, exact-width pieces of odd sizes, large displacements and the probing loop of large
//! frames; on RISC-V 64 Linux (under `qemu-riscv64` on other hosts), the stubs placed and
//! called.

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

#[cfg(all(gatun_backend = "riscv64", target_os = "linux"))]
mod run {
    //! The stubs placed and called (RISC-V 64 Linux; `qemu-riscv64` on other hosts).

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
        let p = plan_of(d, fv);
        let stub = build(&p, &checks_of(d), capture).unwrap();
        (p, stub)
    }

    /// The caller copies of the by-reference arguments (as the executor makes them).
    fn copies(p: &CallPlan, args: &[*const u8], d: &FD) -> Vec<Vec<u64>> {
        p.args()
            .iter()
            .zip(args)
            .zip(d.argument_layouts())
            .filter(|((a, _), _)| a.by_reference.is_some())
            .map(|((_, &ptr), l)| {
                let mut copy = vec![0u64; l.byte_size().div_ceil(8)];
                // SAFETY: the test's argument bytes are readable for the layout's size; the
                // copy is at least as long.
                unsafe {
                    std::ptr::copy_nonoverlapping(ptr, copy.as_mut_ptr().cast(), l.byte_size())
                };
                copy
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
        let cp: Vec<*const u8> = c.iter().map(|v| v.as_ptr().cast()).collect();
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
        let cp: Vec<*const u8> = c.iter().map(|v| v.as_ptr().cast()).collect();
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
    fn narrow_integers_are_extended_as_the_psabi_says_and_bools_normalised() {
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
        // an `unsigned int` is sign-extended from bit 31 (RV64)
        let want = vec![
            -3i64 as u64,
            0xF0,
            -300i64 as u64,
            0xFFFE,
            -70000i64 as u64,
            0xFFFF_FFFF_FFFF_FFF0,
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
    fn floats_and_doubles_in_fprs_and_the_result_bits_in_a0() {
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
        // the float comes back NaN-boxed: ones above its 32 bits
        assert_eq!(r >> 32, 0xFFFF_FFFF);
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
        f0: f64,
        f1: f64,
        f2: f64,
        f3: f64,
        f4: f64,
        f5: f64,
        f6: f64,
        f7: f64,
        g0: f64,
        g1: f32,
        s0: i32,
        s1: u8,
        s2: bool,
        s3: f64,
    ) -> i64 {
        record(&[
            a0 as u64,
            a5 as u64,
            f0.to_bits(),
            f7.to_bits(),
            g0.to_bits(),
            g1.to_bits().into(),
            s0 as u64,
            s1.into(),
            s2.into(),
            s3.to_bits(),
        ]);
        let _ = (a1, a2, a3, a4, f1, f2, f3, f4, f5, f6);
        a0 + a5 + i64::from(s0)
    }

    #[test]
    fn floats_past_the_fprs_take_gprs_then_stack_slots() {
        // 6 ints in a0..a5; 8 doubles in fa0..fa7; a double and a float in a6, a7; then an
        // i32, a u8, a bool and a double on the stack
        let mut layouts: Vec<MemoryLayout> = vec![MemoryLayout::from(V::I64); 6];
        layouts.extend(vec![V::F64.into(); 8]);
        layouts.extend([V::F64.into(), V::F32.into()]);
        layouts.extend([V::I32.into(), V::U8.into(), V::BOOL.into(), V::F64.into()]);
        let d = FD::of(V::I64, layouts);
        assert_eq!(plan_of(&d, None).stack_bytes(), 32);
        let ints: Vec<i64> = (1..=6).collect();
        let fl: Vec<f64> = (0..8).map(|i| f64::from(i) + 0.5).collect();
        let (g0, g1) = (9.75f64, 3.5f32);
        let (s0, s1, s2, s3) = (-7i32, 0xAAu8, 1u8, -1.25f64);
        let mut args: Vec<*const u8> = ints.iter().map(p).collect();
        args.extend(fl.iter().map(p));
        args.extend([p(&g0), p(&g1), p(&s0), p(&s1), p(&s2), p(&s3)]);
        let r = call_raw(
            &d,
            None,
            spill as *const c_void,
            &args,
            std::ptr::null_mut(),
        );
        assert_eq!(r as i64, 1 + 6 - 7);
        let want = vec![
            1,
            6,
            0.5f64.to_bits(),
            7.5f64.to_bits(),
            g0.to_bits(),
            g1.to_bits().into(),
            -7i64 as u64,
            0xAA,
            1,
            s3.to_bits(),
        ];
        assert_eq!(seen(), want);
    }

    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct FI(f32, i32);
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct DD(f64, f64);
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct BD(u8, f64);

    extern "C" fn fp_structs(a: DD, b: FI, c: BD) -> f64 {
        record(&[
            a.0.to_bits(),
            a.1.to_bits(),
            b.0.to_bits().into(),
            b.1 as u64,
            c.0.into(),
            c.1.to_bits(),
        ]);
        a.0 + a.1 + f64::from(b.0) + f64::from(b.1) + f64::from(c.0) + c.1
    }

    #[test]
    fn structs_of_floats_take_fprs_and_a_gpr_for_their_integer() {
        let d = FD::of(
            V::F64,
            [
                s(&[V::F64, V::F64]),
                s(&[V::F32, V::I32]),
                s(&[V::U8, V::F64]),
            ],
        );
        let (x, y, z) = (DD(1.5, 2.5), FI(0.25, -4), BD(7, 0.75));
        let r = call_raw(
            &d,
            None,
            fp_structs as *const c_void,
            &[p(&x), p(&y), p(&z)],
            std::ptr::null_mut(),
        );
        assert_eq!(f64::from_bits(r), 1.5 + 2.5 + 0.25 - 4.0 + 7.0 + 0.75);
        let want = vec![
            1.5f64.to_bits(),
            2.5f64.to_bits(),
            0.25f32.to_bits().into(),
            -4i64 as u64,
            7,
            0.75f64.to_bits(),
        ];
        assert_eq!(seen(), want);
        let (mut x2, mut y2, mut z2) = (x, y, z);
        // SAFETY: the structs outlive the call and are as long as the layouts.
        let vals = unsafe {
            [
                Value::Segment(MemorySegment::from_raw_parts((&raw mut x2).cast(), 16)),
                Value::Segment(MemorySegment::from_raw_parts((&raw mut y2).cast(), 8)),
                Value::Segment(MemorySegment::from_raw_parts((&raw mut z2).cast(), 16)),
            ]
        };
        let r = call_values(
            &d,
            None,
            fp_structs as *const c_void,
            &vals,
            &[],
            std::ptr::null_mut(),
        );
        assert_eq!(r.map(f64::from_bits), Some(8.0));
        assert_eq!(seen(), want);
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

    extern "C" fn odd_target(a: u64, b: u64, c: u64, d0: u64, d1: u64) -> Three {
        record(&[a, b, c, d0, d1]);
        Three([0xC1, 0xC2, 0xC3])
    }

    #[allow(clippy::too_many_arguments)]
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
        // 3-, 5-, 6- and 12-byte structs in registers, each right before an inaccessible page;
        // the 3-byte result stored right before one too.
        let d = FD::of(
            s(&[V::U8; 3]),
            [
                s(&[V::U8; 3]),
                s(&[V::U8; 5]),
                s(&[V::U8; 6]),
                s(&[V::U8; 12]),
            ],
        );
        let g: Vec<Guarded> = (0..5).map(|_| Guarded::new()).collect();
        let a = g[0].tail(&[1, 2, 3]);
        let b = g[1].tail(&[1, 2, 3, 4, 5]);
        let c = g[2].tail(&[1, 2, 3, 4, 5, 6]);
        let dd = g[3].tail(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
        let ret = g[4].tail(&[0; 3]);
        let want = [
            0x030201,
            0x05_0403_0201,
            0x0605_0403_0201,
            0x0807_0605_0403_0201,
            0x0C0B_0A09,
        ];
        call_raw(&d, None, odd_target as *const c_void, &[a, b, c, dd], ret);
        assert_eq!(seen(), want);
        assert_eq!(
            // SAFETY: `ret` is the last 3 bytes of `g[4]`'s readable page (the guard page
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
                Value::Segment(MemorySegment::from_raw_parts(c, 6)),
                Value::Segment(MemorySegment::from_raw_parts(dd, 12)),
            ]
        };
        let ret2 = g[4].tail(&[0; 3]);
        assert!(call_values(&d, None, odd_target as *const c_void, &vals, &[], ret2).is_some());
        assert_eq!(seen(), want);
        // a 7-byte struct in a7 and a 7-byte struct on the stack (its 8-byte slot zero-filled)
        let mut layouts: Vec<MemoryLayout> = vec![MemoryLayout::from(V::I64); 7];
        layouts.extend([s(&[V::U8; 7]), s(&[V::U8; 7]), V::U8.into()]);
        let d = FD::of_void(layouts);
        let zero = 0u64;
        let g7 = [Guarded::new(), Guarded::new()];
        let a7 = g7[0].tail(&[1, 2, 3, 4, 5, 6, 7]);
        let st = g7[1].tail(&[9, 8, 7, 6, 5, 4, 3]);
        let last = 0xEEu8;
        let mut args = vec![p(&zero); 7];
        args.extend([a7.cast_const(), st.cast_const(), p(&last)]);
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
    struct FF(f32, f32);
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct DI(f64, i64);

    extern "C" fn ret_big(x: u64, y: u64) -> Big {
        Big([x, y, x + 2])
    }
    extern "C" fn ret_pair(x: u64) -> Pair {
        Pair(x, !x)
    }
    extern "C" fn ret_twelve(x: u64) -> Twelve {
        Twelve(x as u32, 2, 3)
    }
    extern "C" fn ret_dd(x: f64) -> DD {
        DD(x, 2.0 * x)
    }
    extern "C" fn ret_ff(x: f64) -> FF {
        FF(x as f32, 1.5)
    }
    extern "C" fn ret_di(x: f64) -> DI {
        DI(x, -5)
    }

    #[test]
    fn results_in_memory_and_in_a0_a1_and_fa0_fa1() {
        let (x, y) = (40u64, 77u64);
        let mut big = [0u8; 24 + 8];
        let d = FD::of(s(&[V::I64; 3]), [V::I64, V::I64]);
        call_raw(
            &d,
            None,
            ret_big as *const c_void,
            &[p(&x), p(&y)],
            big.as_mut_ptr(),
        );
        assert_eq!(big[..24], *bytes_of(&Big([40, 77, 42])));
        assert_eq!(big[24..], [0; 8]);
        let vals = [Value::I64(41), Value::I64(1)];
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
        assert_eq!(big, *bytes_of(&Big([41, 1, 43])));

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

        let z = 1.5f64;
        let mut out = [0xFFu8; 17];
        let d = FD::of(s(&[V::F64, V::F64]), [V::F64]);
        call_raw(
            &d,
            None,
            ret_dd as *const c_void,
            &[p(&z)],
            out.as_mut_ptr(),
        );
        assert_eq!(out[..16], *bytes_of(&DD(1.5, 3.0)));
        assert_eq!(out[16], 0xFF);

        let mut out = [0xFFu8; 9];
        let d = FD::of(s(&[V::F32, V::F32]), [V::F64]);
        call_raw(
            &d,
            None,
            ret_ff as *const c_void,
            &[p(&z)],
            out.as_mut_ptr(),
        );
        assert_eq!(out[..8], *bytes_of(&FF(1.5, 1.5)));
        assert_eq!(out[8], 0xFF);

        let mut out = [0xFFu8; 17];
        let d = FD::of(s(&[V::F64, V::I64]), [V::F64]);
        call_raw(
            &d,
            None,
            ret_di as *const c_void,
            &[p(&z)],
            out.as_mut_ptr(),
        );
        assert_eq!(out[..16], *bytes_of(&DI(1.5, -5)));
        assert_eq!(out[16], 0xFF);
    }

    fn bytes_of<T>(v: &T) -> &[u8] {
        // SAFETY: plain-old-data test structs without padding.
        unsafe { std::slice::from_raw_parts(p(v), std::mem::size_of::<T>()) }
    }

    #[test]
    fn variadic_calls_promote_floats_and_pass_doubles_in_gprs() {
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

    #[test]
    fn frames_over_a_page_are_probed_and_carry_every_stack_argument() {
        // snprintf with 1,200 variadic longs: 1,195 of them on the stack, a 9,568-byte frame
        // (two probed pages and the rest), every one printed.
        let n = 1200usize;
        let mut layouts = vec![
            MemoryLayout::from(V::ADDRESS),
            V::I64.into(),
            V::ADDRESS.into(),
        ];
        layouts.extend(vec![MemoryLayout::from(V::I64); n]);
        let d = FD::of(V::I32, layouts);
        assert!(plan_of(&d, Some(3)).stack_bytes() >= 8192);
        let mut buf = vec![0u8; 8 * n];
        let (bp, len) = (buf.as_mut_ptr(), buf.len() as u64);
        let fmt = std::ffi::CString::new("%ld,".repeat(n)).unwrap();
        let fp = fmt.as_ptr();
        let longs: Vec<i64> = (0..n as i64).map(|i| i * 7 - 300).collect();
        let mut args = vec![p(&bp), p(&len), p(&fp)];
        args.extend(longs.iter().map(p));
        let r = call_raw(
            &d,
            Some(3),
            libc::snprintf as *const c_void,
            &args,
            std::ptr::null_mut(),
        );
        let want: String = longs.iter().map(|l| format!("{l},")).collect();
        assert_eq!(r as usize, want.len());
        assert_eq!(&buf[..want.len()], want.as_bytes());
        let mut vals = vec![
            Value::Address(bp.cast()),
            Value::I64(len as i64),
            Value::Address(fp.cast_mut().cast()),
        ];
        vals.extend(longs.iter().map(|&l| Value::I64(-l)));
        let r = call_values(
            &d,
            Some(3),
            libc::snprintf as *const c_void,
            &vals,
            &[],
            std::ptr::null_mut(),
        );
        let want: String = longs.iter().map(|l| format!("{},", -l)).collect();
        assert_eq!(r.map(|r| r as usize), Some(want.len()));
        assert_eq!(&buf[..want.len()], want.as_bytes());
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

    extern "C" fn sum3(a: i32, b0: u64, b1: u64, c: f64) -> i64 {
        record(&[a as u64, b0, b1, c.to_bits()]);
        i64::from(a) + (b0 + b1) as i64 + c as i64
    }

    #[test]
    fn values_entry_rejects_wrong_tags_and_short_segments_without_calling() {
        let d = FD::of(V::I64, [V::I32.into(), s(&[V::I64, V::I64]), V::F64.into()]);
        let mut pair = [1u64, 2];
        // SAFETY: `pair` outlives the segment's uses.
        let good_seg = unsafe { MemorySegment::from_raw_parts(pair.as_mut_ptr().cast(), 16) };
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

    #[test]
    fn rejection_islands_reject_late_arguments_without_calling() {
        // 300 arguments: the checks go through islands; a wrong tag on the last one rejects
        let d = FD::of(V::I64, vec![V::I64; 300]);
        let mut vals = vec![Value::I64(1); 300];
        vals[299] = Value::I32(1);
        let before = calls();
        let r = call_values(
            &d,
            None,
            sum3 as *const c_void,
            &vals,
            &[],
            std::ptr::null_mut(),
        );
        assert_eq!(r, None);
        assert_eq!(calls(), before);
    }

    #[test]
    fn the_cache_shares_live_stubs() {
        let d = FD::of(V::I64, [V::I64, V::F64, V::I16]);
        let pl = plan_of(&d, None);
        let a = stub_for(&pl, &checks_of(&d), false).unwrap();
        let b = stub_for(&pl, &checks_of(&d), false).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let c = stub_for(&pl, &checks_of(&d), true).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
    }
}
