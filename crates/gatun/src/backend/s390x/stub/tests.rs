//! Tests of the s390x stub compiler, on every host: the emitted code (a sequence of whole
//! instructions of the encoder, every one disassembled by `s390x-linux-gnu-objdump` when
//! installed), exact sequences and per-call instruction counts for typical shapes, the
//! rejection path, exact-width pieces of odd sizes, large displacements and the probing loop of
//! large frames; on s390x Linux (under `qemu-s390x` on other hosts), the stubs placed and
//! called.

use super::*;
use crate::abi::ArgPlan;
use crate::layout::FunctionDescriptor as FD;
use crate::layout::{MemoryLayout, ValueLayout as V};

use e::Insn;

fn checks_of(d: &FD) -> Vec<ArgCheck> {
    d.argument_layouts()
        .iter()
        .map(|l| match l {
            MemoryLayout::Value(v) => ArgCheck::Scalar(v.kind()),
            g => ArgCheck::Group(g.byte_size() as u32),
        })
        .collect()
}

/// The s390x plan of `d` (the classifier's).
fn plan_of(d: &FD, fv: Option<usize>) -> CallPlan {
    crate::abi::s390x::plan(d, fv).unwrap()
}

fn code_of(d: &FD, fv: Option<usize>, capture: bool) -> StubCode {
    compile(&plan_of(d, fv), &checks_of(d), capture)
}

fn s(members: &[V]) -> MemoryLayout {
    MemoryLayout::c_struct(members.iter().cloned()).unwrap()
}

/// The length of the instruction whose first byte is `op` (z/Architecture: the opcode's two
/// high bits).
fn insn_len(op: u8) -> usize {
    match op >> 6 {
        0 => 2,
        1 | 2 => 4,
        _ => 6,
    }
}

/// The instructions of `bytes`, from `from` up to `to`.
fn insns(bytes: &[u8], from: usize, to: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = from;
    while at < to {
        let n = insn_len(bytes[at]);
        out.push(bytes[at..at + n].to_vec());
        at += n;
    }
    assert_eq!(at, to, "an instruction crosses the end");
    out
}

/// The instructions of `is`, as [`insns`] gives them.
fn expect(is: &[Insn]) -> Vec<Vec<u8>> {
    is.iter().map(|i| i.bytes().to_vec()).collect()
}

/// The instructions of the raw entry (the code before the values entry, padding dropped).
fn raw_entry(code: &StubCode) -> Vec<Vec<u8>> {
    let mut end = code.values;
    while end >= 2 && code.bytes[end - 2..end] == [0, 0] {
        end -= 2;
    }
    insns(&code.bytes, 0, end)
}

/// The instructions of the values entry (padding dropped).
fn values_entry(code: &StubCode) -> Vec<Vec<u8>> {
    let mut end = code.bytes.len();
    while end >= code.values + 2 && code.bytes[end - 2..end] == [0, 0] {
        end -= 2;
    }
    insns(&code.bytes, code.values, end)
}

const R0: R = R::R0;
const R1: R = R::R1;
const R2: R = R::R2;
const R3: R = R::R3;
const R7: R = R::R7;
const R14: R = R::R14;

fn at(b: R, d: i32) -> Addr {
    Addr::new(b, d)
}

/// The prologue: `stmg`, the frame pointer, the arguments' and the target's registers.
fn prologue() -> Vec<Insn> {
    vec![
        e::rsy(Rsy::Stmg, R::R6, SP, Some(SP), 48),
        e::lgr(FP, SP),
        e::lgr(ARGS, R2),
        e::lgr(TARGET, R::R5),
    ]
}

/// The epilogue.
fn epilogue() -> Vec<Insn> {
    vec![e::rsy(Rsy::Lmg, R::R6, SP, Some(FP), 48), e::br(R14)]
}

/// A spread of signatures covering every move kind, conversion, return kind and stack case.
fn shapes() -> Vec<(&'static str, FD, Option<usize>)> {
    vec![
        ("noop", FD::of_void([]), None),
        ("id_i32", FD::of(V::I32, [V::I32]), None),
        ("add5", FD::of(V::I64, [V::I64; 5]), None),
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
        ("spill_f", FD::of(V::F64, vec![V::F32; 7]), None),
        (
            "small_structs",
            FD::of_void([
                s(&[V::U8]),
                s(&[V::U8, V::U8]),
                s(&[V::I16, V::I16]),
                s(&[V::F32, V::F32]),
                s(&[V::F32]),
                s(&[V::F64]),
                s(&[V::I64]),
            ]),
            None,
        ),
        (
            "byref",
            FD::of(V::I64, [s(&[V::U8; 3]), s(&[V::I32; 3]), s(&[V::I64; 2])]),
            None,
        ),
        (
            "byref_stack",
            FD::of(
                V::I64,
                [vec![MemoryLayout::from(V::I64); 5], vec![s(&[V::I64; 3])]].concat(),
            ),
            None,
        ),
        (
            "in_memory",
            FD::of(s(&[V::I16, V::I16]), [V::I64, V::I32]),
            None,
        ),
        (
            "in_memory_stack",
            FD::of(s(&[V::U8; 3]), vec![V::I64; 6]),
            None,
        ),
        (
            "variadic",
            FD::of(
                V::I32,
                [V::ADDRESS, V::I64, V::ADDRESS, V::I32, V::F64, V::F32],
            ),
            Some(3),
        ),
        (
            "variadic_stack",
            FD::of(V::I32, [vec![V::I32], vec![V::F32; 6]].concat()),
            Some(1),
        ),
        ("many", FD::of(V::I64, vec![V::I64; 200]), None),
        ("big_frame", FD::of(V::I64, vec![V::I64; 5 + 1000]), None),
    ]
}

#[test]
fn every_stub_is_whole_instructions_with_the_values_entry_aligned() {
    for (name, d, fv) in shapes() {
        for capture in [false, true] {
            let code = code_of(&d, fv, capture);
            assert_eq!(code.raw, 0);
            assert_eq!(code.values % 8, 0, "{name}");
            assert_eq!(code.bytes.len() % 8, 0, "{name}");
            // each entry ends with `br %r14` (the values entry's rejection path too)
            for entry in [raw_entry(&code), values_entry(&code)] {
                assert_eq!(entry.last().unwrap(), e::br(R14).bytes(), "{name}");
            }
        }
    }
}

/// Every stub's instructions, disassembled by `s390x-linux-gnu-objdump` (when installed), are
/// instructions: no `.long`/`.short`/`(bad)` but the padding between and after the entries.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "runs the cross disassembler")]
fn every_instruction_disassembles() {
    use std::process::Command;
    let objdump = "s390x-linux-gnu-objdump";
    if Command::new(objdump).arg("--version").output().is_err() {
        eprintln!("skipped: {objdump} is not installed");
        return;
    }
    let mut all = Vec::new();
    for (_, d, fv) in shapes() {
        for capture in [false, true] {
            let code = code_of(&d, fv, capture);
            all.extend(raw_entry(&code).concat());
            all.extend(values_entry(&code).concat());
        }
    }
    let dir = std::env::temp_dir().join(format!(
        "gatun-s390x-dis-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("code.bin");
    std::fs::write(&bin, &all).unwrap();
    let out = Command::new(objdump)
        .args(["-D", "-b", "binary", "-m", "s390:64-bit"])
        .arg(&bin)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{objdump} failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.trim_start()
                .split(':')
                .next()
                .is_some_and(|a| !a.is_empty() && a.chars().all(|c| c.is_ascii_hexdigit()))
                && l.contains(":\t")
        })
        .collect();
    let count: usize = insns(&all, 0, all.len()).len();
    assert_eq!(lines.len(), count);
    for line in lines {
        assert!(
            !line.contains(".long") && !line.contains(".short") && !line.contains("(bad)"),
            "{line}"
        );
    }
}

#[test]
fn id_i32_entries_frame_the_call() {
    let code = code_of(&FD::of(V::I32, [V::I32]), None, false);
    let tag = scalar_tag(crate::layout::ScalarKind::I32);
    let frame = e::rxy(Rxy::Lay, SP, at(SP, -160));
    let mut raw = prologue();
    raw.extend([
        frame,
        e::rxy(Rxy::Lg, R1, at(R7, 0)),
        e::rxy(Rxy::Lgf, R2, at(R1, 0)),
        e::basr(R14, TARGET),
    ]);
    raw.extend(epilogue());
    assert_eq!(raw_entry(&code), expect(&raw));
    let mut values = vec![e::cliy(R2, 0, tag)];
    let checks = values.len();
    values.extend(prologue());
    values.extend([
        frame,
        e::rxy(Rxy::Lgf, R2, at(R7, VALUE_PAYLOAD)),
        e::basr(R14, TARGET),
        e::lghi(R0, 0),
    ]);
    values.extend(epilogue());
    values.extend([e::lghi(R0, 1), e::br(R14)]);
    let got = values_entry(&code);
    // the check branches to the rejection path, past the normal path (a `brcl 7`)
    assert_eq!(got[checks][..2], [0xC0, 0x74]);
    let mut without_branch = got.clone();
    without_branch.remove(checks);
    assert_eq!(without_branch, expect(&values));
    let to = i32::from_be_bytes(got[checks][2..6].try_into().unwrap());
    let from: usize = got[..checks].iter().map(Vec::len).sum();
    let fail: usize = got[..got.len() - 2].iter().map(Vec::len).sum();
    assert_eq!(from as i64 + 2 * i64::from(to), fail as i64);
    // per call: ten instructions on the raw entry, twelve on the values entry
    let p = code.paths;
    assert_eq!((p.raw, p.values), (raw.len(), values.len() - 2 + 1));
}

#[test]
fn group_checks_compare_the_segment_length_unsigned() {
    let d = FD::of_void([s(&[V::I64; 2])]);
    let code = code_of(&d, None, false);
    let got = values_entry(&code);
    let len = VALUE_PAYLOAD + MemorySegment::LEN_OFFSET as i32;
    assert_eq!(got[0], e::cliy(R2, 0, segment_tag()).bytes());
    assert_eq!(got[1][..2], [0xC0, 0x74]); // jgne
    assert_eq!(got[2], e::rxy(Rxy::Lg, R0, at(R2, len)).bytes());
    assert_eq!(got[3], e::clgfi(R0, 16).bytes());
    assert_eq!(got[4][..2], [0xC0, 0x44]); // jgl
                                           // by reference: the copy's address from `copies`, not the segment
    assert!(got.contains(&e::rxy(Rxy::Lg, R2, at(COPIES, 0)).bytes().to_vec()));
}

#[test]
fn floats_take_the_high_word_and_the_result_comes_back_whole_in_r2() {
    let d = FD::of(V::F32, [V::F32, V::F64, V::F32]);
    let raw = raw_entry(&code_of(&d, None, false));
    for (n, i) in [(0u8, FRxy::Ley), (1, FRxy::Ldy), (2, FRxy::Ley)] {
        assert!(
            raw.contains(&e::frxy(i, F::arg(n), at(R1, 0)).bytes().to_vec()),
            "f{}",
            2 * n
        );
    }
    assert!(raw.contains(&e::lgdr(R2, F::arg(0)).bytes().to_vec()));
    // variadic floats are widened: `ldeb` into the FPR, or through f1 into a stack slot
    let d = FD::of(V::I32, [vec![V::I32], vec![V::F32; 6]].concat());
    let raw = raw_entry(&code_of(&d, Some(1), false));
    assert!(raw.contains(&e::ldeb(F::arg(3), at(R1, 0)).bytes().to_vec()));
    assert!(raw.contains(&e::ldeb(FSCRATCH, at(R1, 0)).bytes().to_vec()));
    assert!(raw.contains(&e::frxy(FRxy::Stdy, FSCRATCH, at(SP, 168)).bytes().to_vec()));
}

#[test]
fn bools_are_normalised_and_narrow_integers_extended_by_their_type() {
    let d = FD::of_void([V::I8, V::U8, V::I16, V::U16, V::BOOL]);
    let values = values_entry(&code_of(&d, None, false));
    let p = |i: i32| at(R7, VALUE_STRIDE * i + VALUE_PAYLOAD);
    for want in [
        e::rxy(Rxy::Lgb, R2, p(0)),
        e::rxy(Rxy::Llgc, R3, p(1)),
        e::rxy(Rxy::Lgh, R::R4, p(2)),
        e::rxy(Rxy::Llgh, R::R5, p(3)),
    ] {
        assert!(values.contains(&want.bytes().to_vec()), "{want:?}");
    }
    let b = values
        .iter()
        .position(|i| *i == e::rxy(Rxy::Llgc, R::R6, p(4)).bytes())
        .unwrap();
    assert_eq!(
        values[b + 1..b + 3],
        expect(&[e::lcgr(R::R6, R::R6), e::srlg(R::R6, R::R6, 63)])
    );
}

#[test]
fn capture_restores_right_before_and_saves_right_after_the_call() {
    let d = FD::of(V::I64, [V::I32, V::ADDRESS, V::I64]);
    let raw = raw_entry(&code_of(&d, None, true));
    let call = raw
        .iter()
        .position(|i| *i == e::basr(R14, TARGET).bytes())
        .unwrap();
    assert_eq!(
        raw[call - 2..call + 3],
        expect(&[
            e::rxy(Rxy::Ly, R0, at(CAPTURE, 0)),
            e::rxy(Rxy::Sty, R0, at(ERRNO, 0)),
            e::basr(R14, TARGET),
            e::rxy(Rxy::Ly, R0, at(ERRNO, 0)),
            e::rxy(Rxy::Sty, R0, at(CAPTURE, 0)),
        ])
    );
    // the errno address is the sixth parameter, above the caller's register save area
    assert!(raw.contains(&e::rxy(Rxy::Lg, ERRNO, at(FP, 160)).bytes().to_vec()));
    assert!(raw.contains(&e::lgr(CAPTURE, R::R4).bytes().to_vec()));
}

#[test]
fn in_memory_results_pass_ret_in_r2_after_the_moves() {
    let d = FD::of(s(&[V::I16, V::I16]), [V::I64, V::I32]);
    let raw = raw_entry(&code_of(&d, None, false));
    let call = raw
        .iter()
        .position(|i| *i == e::basr(R14, TARGET).bytes())
        .unwrap();
    assert_eq!(raw[call - 1], e::lgr(R2, RET).bytes());
    assert!(raw.contains(&e::lgr(RET, R3).bytes().to_vec()));
    // the arguments shifted to r3 and r4
    assert!(raw.contains(&e::rxy(Rxy::Lg, R3, at(R1, 0)).bytes().to_vec()));
    assert!(raw.contains(&e::rxy(Rxy::Lgf, R::R4, at(R1, 0)).bytes().to_vec()));
}

#[test]
fn by_reference_arguments_take_the_copies_pointers() {
    let d = FD::of(
        V::I64,
        [
            vec![MemoryLayout::from(V::I64); 4],
            vec![s(&[V::I64; 3]); 2],
        ]
        .concat(),
    );
    let raw = raw_entry(&code_of(&d, None, false));
    assert!(raw.contains(&e::lgr(COPIES, R::R6).bytes().to_vec()));
    assert!(raw.contains(&e::rxy(Rxy::Lg, R::R6, at(COPIES, 0)).bytes().to_vec()));
    // the second copy's address to the first stack slot
    let k = raw
        .iter()
        .position(|i| *i == e::rxy(Rxy::Lg, R0, at(COPIES, 8)).bytes())
        .unwrap();
    assert_eq!(raw[k + 1], e::rxy(Rxy::Stg, R0, at(SP, 160)).bytes());
}

#[test]
fn frames_of_a_page_or_more_are_probed_page_by_page_going_down() {
    // 5 registers and 1000 slots: a frame of 160 + 8000 bytes, two pages and the rest
    let d = FD::of(V::I64, vec![V::I64; 5 + 1000]);
    let code = code_of(&d, None, false);
    let raw = raw_entry(&code);
    let lay = |n: i32| e::rxy(Rxy::Lay, SP, at(SP, n));
    let k = raw
        .iter()
        .position(|i| *i == e::lghi(R1, 1).bytes())
        .unwrap();
    assert_eq!(
        raw[k..k + 5],
        expect(&[
            e::lghi(R1, 1),
            lay(-4096),
            e::rxy(Rxy::Stg, R1, at(SP, 48)),
            e::brctg(R1, -12),
            lay(-(8160 - 4096)),
        ])
    );
    // 160 + 8 × 1000 = 8160 = 1 × 4096 + 4064
    let d = FD::of(V::I64, vec![V::I64; 5 + 2000]);
    let raw = raw_entry(&code_of(&d, None, false));
    assert!(raw.contains(&e::lghi(R1, 3).bytes().to_vec()));
    assert!(raw.contains(&lay(-(16160 - 3 * 4096)).bytes().to_vec()));
    // a small frame is one `lay`
    let raw = raw_entry(&code_of(&FD::of(V::I64, vec![V::I64; 7]), None, false));
    assert!(raw.contains(&lay(-176).bytes().to_vec()));
    assert!(!raw.iter().any(|i| i[..2] == [0xA7, 0x17]), "no loop");
}

#[test]
fn large_displacements_go_through_an_index_register() {
    // 70,000 arguments: `Value`s from 1.68 MB on, stack slots from 560 KB on
    let n = 70_000usize;
    let d = FD::of(V::I64, vec![V::I64; n]);
    let code = code_of(&d, None, false);
    let values = values_entry(&code);
    let last = (n - 1) as i32;
    // the last check: the tag's address formed in r1
    let tag_at = VALUE_STRIDE * last;
    let k = values
        .iter()
        .position(|i| *i == e::lgfi(R1, tag_at).bytes())
        .unwrap();
    assert_eq!(values[k + 1], e::la(R1, Addr::indexed(R1, R2, 0)).bytes());
    assert_eq!(
        values[k + 2],
        e::cliy(R1, 0, scalar_tag(crate::layout::ScalarKind::I64)).bytes()
    );
    // the last argument's payload and its stack slot through r14
    let slot = 160 + 8 * (last - 5);
    let k = values
        .iter()
        .position(|i| *i == e::lgfi(R14, VALUE_STRIDE * last + VALUE_PAYLOAD).bytes())
        .unwrap();
    assert_eq!(
        values[k + 1..k + 4],
        expect(&[
            e::rxy(Rxy::Lg, R0, Addr::indexed(R14, R7, 0)),
            e::lgfi(R14, slot),
            e::rxy(Rxy::Stg, R0, Addr::indexed(R14, SP, 0)),
        ])
    );
}

/// A hand-made plan of odd-size moves (3, 5, 6 and 7 bytes, as no s390x plan has) into r2..r5
/// and a 7-byte result in registers.
fn odd_plan() -> CallPlan {
    let moves = |size: u8, n: u8| ArgPlan {
        moves: vec![ArgMove {
            offset: 0,
            size,
            to: Location::Int(n),
            conv: Conversion::Bytes,
        }],
        by_reference: None,
    };
    CallPlan {
        args: vec![moves(3, 0), moves(5, 1), moves(6, 2), moves(7, 3)],
        ret: ReturnPlan::Registers(vec![ReturnMove {
            from: Register::Int(0),
            offset: 0,
            size: 7,
        }]),
        hidden_return_pointer: None,
        stack_bytes: 0,
        vector_registers: 0,
        first_variadic: None,
        packed_named_stack: false,
    }
}

fn odd_checks() -> Vec<ArgCheck> {
    [3, 5, 6, 7].map(ArgCheck::Group).to_vec()
}

#[test]
fn odd_sizes_are_loaded_and_stored_under_masks_exactly() {
    let code = compile(&odd_plan(), &odd_checks(), false);
    let raw = raw_entry(&code);
    let m = |op, r: R, mask, d| e::mask_op(op, r, mask, R1, d);
    for (r, seq) in [
        (R2, vec![e::lghi(R2, 0), m(Mask::Icmy, R2, 0b0111, 0)]),
        (
            R3,
            vec![
                e::lghi(R3, 0),
                m(Mask::Icmh, R3, 0b0001, 0),
                m(Mask::Icmy, R3, 0b1111, 1),
            ],
        ),
        (
            R::R4,
            vec![
                e::lghi(R::R4, 0),
                m(Mask::Icmh, R::R4, 0b0011, 0),
                m(Mask::Icmy, R::R4, 0b1111, 2),
            ],
        ),
        (
            R::R5,
            vec![
                e::lghi(R::R5, 0),
                m(Mask::Icmh, R::R5, 0b0111, 0),
                m(Mask::Icmy, R::R5, 0b1111, 3),
            ],
        ),
    ] {
        let k = raw.iter().position(|i| *i == seq[0].bytes()).unwrap();
        assert_eq!(raw[k..k + seq.len()], expect(&seq), "{r}");
    }
    // the 7-byte result: the high word's three low bytes, then the low word
    let call = raw
        .iter()
        .position(|i| *i == e::basr(R14, TARGET).bytes())
        .unwrap();
    assert_eq!(
        raw[call + 1..call + 3],
        expect(&[
            e::mask_op(Mask::Stcmh, R2, 0b0111, RET, 0),
            e::mask_op(Mask::Stcmy, R2, 0b1111, RET, 3),
        ])
    );
}

#[test]
fn the_raw_entry_pads_to_the_values_entry_with_invalid_operations() {
    for (name, d, fv) in shapes() {
        let code = code_of(&d, fv, false);
        let end: usize = raw_entry(&code).iter().map(Vec::len).sum();
        assert!(code.values - end < 8, "{name}");
        assert!(
            code.bytes[end..code.values].iter().all(|&b| b == 0),
            "{name}"
        );
    }
}

/// The placed stubs, called (s390x Linux only).
#[cfg(gatun_backend = "s390x")]
mod placed {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The arguments `odd_target` last saw.
    static SEEN: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

    extern "C" fn odd_target(a: u64, b: u64, c: u64, d: u64) -> u64 {
        for (s, v) in SEEN.iter().zip([a, b, c, d]) {
            s.store(v, Ordering::Relaxed);
        }
        0x1122_3344_5566_7788
    }

    /// `n` bytes right before an inaccessible page (its bytes are `&mut` for the test's life).
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
    fn odd_sizes_read_and_write_exactly_their_bytes() {
        let stub = build(&odd_plan(), &odd_checks(), false).unwrap();
        let ret = Guarded::new();
        let bytes: [&[u8]; 4] = [
            &[1, 2, 3],
            &[4, 5, 6, 7, 8],
            &[9, 10, 11, 12, 13, 14],
            &[15, 16, 17, 18, 19, 20, 21],
        ];
        // each argument in its own page-end, one after another
        let mut pages = vec![];
        let mut ptrs = vec![];
        for b in bytes {
            let g = Guarded::new();
            let p = g.end(b.len());
            // SAFETY: `p` has `b.len()` writable bytes.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len()) };
            ptrs.push(p.cast_const());
            pages.push(g);
        }
        let dst = ret.end(7);
        // SAFETY: the raw entry of a stub of this plan: four pointers to 3, 5, 6 and 7 bytes,
        // a 7-byte destination; the target takes four integers.
        unsafe {
            (stub.raw)(
                ptrs.as_ptr(),
                dst,
                std::ptr::null_mut(),
                odd_target as *const std::ffi::c_void,
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        };
        let seen: Vec<u64> = SEEN.iter().map(|s| s.load(Ordering::Relaxed)).collect();
        assert_eq!(
            seen,
            [
                0x01_0203,
                0x04_0506_0708,
                0x090A_0B0C_0D0E,
                0x000F_1011_1213_1415
            ]
        );
        // SAFETY: 7 bytes just written.
        let got = unsafe { std::slice::from_raw_parts(dst, 7) };
        assert_eq!(got, [0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]);
    }

    static CALLED: AtomicU64 = AtomicU64::new(0);

    extern "C" fn count_calls(a: i64) -> i64 {
        CALLED.fetch_add(1, Ordering::Relaxed);
        a + 1
    }

    #[test]
    fn the_values_entry_rejects_wrong_tags_and_short_segments_without_calling() {
        let d = FD::of(V::I64, [V::I64.into(), s(&[V::I64; 2])]);
        let plan = plan_of(&d, None);
        let stub = build(&plan, &checks_of(&d), false).unwrap();
        let mut pair = [7u8; 16];
        let mut short = [0u8; 8];
        let ok_seg = MemorySegment::of_slice(&mut pair);
        let short_seg = MemorySegment::of_slice(&mut short);
        let target = count_calls as *const std::ffi::c_void;
        let copy = [7u8; 16];
        let copies = [copy.as_ptr()];
        let call = |args: &[crate::Value<'_>]| {
            // SAFETY: the values entry of this plan; `copies` holds a by-reference copy (the
            // target does not read it).
            unsafe {
                stub.values.call(
                    args.as_ptr(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    target,
                    copies.as_ptr(),
                    std::ptr::null_mut(),
                )
            }
        };
        let before = CALLED.load(Ordering::Relaxed);
        use crate::Value;
        assert_eq!(call(&[Value::I64(41), Value::Segment(ok_seg)]), Some(42));
        assert_eq!(call(&[Value::I32(41), Value::Segment(ok_seg)]), None);
        assert_eq!(call(&[Value::I64(41), Value::Segment(short_seg)]), None);
        assert_eq!(call(&[Value::I64(41), Value::I64(0)]), None);
        assert_eq!(CALLED.load(Ordering::Relaxed) - before, 1);
    }
}
