//! Tests of the RISC-V 64 encoder: every encoder against the words of the GNU assembler (a
//! table of its words everywhere, the assembler itself when installed), the `li` sequences
//! evaluated with RV64 semantics (and, with the cross tools installed, assembled from their
//! text and evaluated again from the disassembler's reading of the words), and the assembler's
//! label patching.

use super::*;

fn a(n: u8) -> X {
    X::a(n)
}
fn fa(n: u8) -> F {
    F::fa(n)
}

/// Every encoder with the text the GNU assembler reads for it, and the word it produced.
fn table() -> Vec<(&'static str, u32)> {
    use Load as L;
    use Store as S;
    let (zero, ra, sp, s0) = (X::ZERO, X::RA, X::SP, X::S0);
    let (t0, t1, t2, t3, t4, t5, t6) = (X::T0, X::T1, X::T2, X::T3, X::T4, X::T5, X::T6);
    vec![
        // loads of every width, boundary offsets
        ("lb a0, -2048(a1)", load(L::B, a(0), a(1), -2048)),
        ("lbu t0, 2047(a0)", load(L::Bu, t0, a(0), 2047)),
        ("lh a7, 2(t3)", load(L::H, a(7), t3, 2)),
        ("lhu t4, -2(sp)", load(L::Hu, t4, sp, -2)),
        ("lw a2, 4(t2)", load(L::W, a(2), t2, 4)),
        ("lwu a3, 0(t6)", load(L::Wu, a(3), t6, 0)),
        ("ld a4, 2040(a0)", load(L::D, a(4), a(0), 2040)),
        ("ld ra, 8(sp)", load(L::D, ra, sp, 8)),
        ("ld s0, 0(sp)", load(L::D, s0, sp, 0)),
        ("ld s11, -1(s1)", load(L::D, X::s(11), X::S1, -1)),
        // stores of every width
        ("sb t5, -2048(sp)", store(S::B, t5, sp, -2048)),
        ("sh t5, 2047(t4)", store(S::H, t5, t4, 2047)),
        ("sw a5, 4(t4)", store(S::W, a(5), t4, 4)),
        ("sd zero, 0(sp)", store(S::D, zero, sp, 0)),
        ("sd ra, 8(sp)", store(S::D, ra, sp, 8)),
        ("sd a2, -24(s0)", store(S::D, a(2), s0, -24)),
        ("sd t6, -2047(a6)", store(S::D, t6, a(6), -2047)),
        // floating-point loads and stores
        ("flw fa0, 0(t3)", fload(FWidth::S, fa(0), t3, 0)),
        ("fld fa7, -2048(a0)", fload(FWidth::D, fa(7), a(0), -2048)),
        ("flw ft0, 2047(a0)", fload(FWidth::S, F::FT0, a(0), 2047)),
        ("fsw fa1, 12(t4)", fstore(FWidth::S, fa(1), t4, 12)),
        ("fsd ft0, 2040(sp)", fstore(FWidth::D, F::FT0, sp, 2040)),
        (
            "fsd ft11, -2048(sp)",
            fstore(FWidth::D, F::ft(11), sp, -2048),
        ),
        ("fld fs11, 16(t6)", fload(FWidth::D, F::new(27), t6, 16)),
        // integer register-immediate
        ("addi sp, sp, -16", addi(sp, sp, -16)),
        ("addi s0, sp, 16", addi(s0, sp, 16)),
        ("addi a0, zero, -2048", addi(a(0), zero, -2048)),
        ("addi t0, zero, 2047", addi(t0, zero, 2047)),
        ("addi a1, a2, 0", mv(a(1), a(2))),
        ("addiw t6, t6, -1", addiw(t6, t6, -1)),
        ("addiw a0, a0, 2047", addiw(a(0), a(0), 2047)),
        ("addiw a0, a0, -2048", addiw(a(0), a(0), -2048)),
        ("xori t0, t0, 17", xori(t0, t0, 17)),
        ("xori t0, t0, -2048", xori(t0, t0, -2048)),
        ("sltiu t0, t0, 2047", sltiu(t0, t0, 2047)),
        ("sltiu t0, t0, 16", sltiu(t0, t0, 16)),
        ("sltiu a0, a1, -1", sltiu(a(0), a(1), -1)),
        ("slli t4, t4, 32", slli(t4, t4, 32)),
        ("slli a0, a0, 63", slli(a(0), a(0), 63)),
        ("slli t5, t6, 0", slli(t5, t6, 0)),
        ("srli t5, t5, 8", srli(t5, t5, 8)),
        ("srli a0, a1, 63", srli(a(0), a(1), 63)),
        ("srai a0, a1, 63", srai(a(0), a(1), 63)),
        ("srai t3, t3, 1", srai(t3, t3, 1)),
        // integer register-register
        ("add t6, t6, sp", add(t6, t6, sp)),
        ("add a0, a1, a7", add(a(0), a(1), a(7))),
        ("sub t0, sp, t0", sub(t0, sp, t0)),
        ("sub sp, sp, t6", sub(sp, sp, t6)),
        ("and a0, t1, t2", and(a(0), t1, t2)),
        ("or a1, a1, t4", or(a(1), a(1), t4)),
        ("or t5, t5, t4", or(t5, t5, t4)),
        ("xor a3, a4, a5", xor(a(3), a(4), a(5))),
        ("sltu a0, zero, a0", sltu(a(0), zero, a(0))),
        ("sltu t5, zero, t5", sltu(t5, zero, t5)),
        // upper immediates
        ("lui t6, 1", lui(t6, 1)),
        ("lui t0, 257", lui(t0, 257)),
        ("lui a0, 0x80000", lui(a(0), 0x80000)),
        ("lui a0, 0xfffff", lui(a(0), 0xF_FFFF)),
        ("lui a0, 0x7ffff", lui(a(0), 0x7_FFFF)),
        ("auipc t1, 0", auipc(t1, 0)),
        ("auipc ra, 0xfffff", auipc(ra, 0xF_FFFF)),
        // jumps and branches (offsets relative to the instruction)
        ("jal zero, .+12", jal(zero, 12)),
        ("jal ra, .-4", jal(ra, -4)),
        ("jal zero, .+1048574", jal(zero, 1_048_574)),
        ("jal zero, .-1048576", jal(zero, -1_048_576)),
        ("jalr ra, 0(t1)", jalr(ra, t1, 0)),
        ("jalr zero, 0(t1)", jalr(zero, t1, 0)),
        ("jalr zero, 0(ra)", ret()),
        ("jalr t0, -2048(a0)", jalr(t0, a(0), -2048)),
        ("beq a0, a1, .+8", branch(Cond::Eq, a(0), a(1), 8)),
        ("bne t0, zero, .-8", branch(Cond::Ne, t0, zero, -8)),
        ("bne sp, t0, .-8", branch(Cond::Ne, sp, t0, -8)),
        ("blt a2, a3, .+4094", branch(Cond::Lt, a(2), a(3), 4094)),
        ("bge a4, a5, .-4096", branch(Cond::Ge, a(4), a(5), -4096)),
        ("bltu t0, t6, .+2048", branch(Cond::Ltu, t0, t6, 2048)),
        ("bgeu t6, t0, .+2046", branch(Cond::Geu, t6, t0, 2046)),
        ("bltu t0, t6, .+16", branch(Cond::Ltu, t0, t6, 16)),
        // moves between the register files, conversion
        ("fmv.x.w a0, fa0", fmv_x_w(a(0), fa(0))),
        ("fmv.x.d a0, fa0", fmv_x_d(a(0), fa(0))),
        ("fmv.x.d t5, fa1", fmv_x_d(t5, fa(1))),
        ("fmv.w.x ft0, t5", fmv_w_x(F::FT0, t5)),
        ("fmv.d.x fa7, t5", fmv_d_x(fa(7), t5)),
        ("fcvt.d.s fa0, fa0", fcvt_d_s(fa(0), fa(0))),
        ("fcvt.d.s ft0, ft0", fcvt_d_s(F::FT0, F::FT0)),
        ("fcvt.d.s fa3, ft11", fcvt_d_s(fa(3), F::ft(11))),
        ("unimp", UNIMP),
    ]
}

/// The words `riscv64-linux-gnu-as -march=rv64gc -mno-relax` produced for [`table`]'s text
/// (with `.option norvc`), in the same order.
const EXPECTED: &[u32] = &[
    0x80058503, 0x7ff54283, 0x002e1883, 0xffe15e83, 0x0043a603, 0x000fe683, 0x7f853703, 0x00813083,
    0x00013403, 0xfff4bd83, 0x81e10023, 0x7fee9fa3, 0x00fea223, 0x00013023, 0x00113423, 0xfec43423,
    0x81f830a3, 0x000e2507, 0x80053887, 0x7ff52007, 0x00bea627, 0x7e013c27, 0x81f13027, 0x010fbd87,
    0xff010113, 0x01010413, 0x80000513, 0x7ff00293, 0x00060593, 0xffff8f9b, 0x7ff5051b, 0x8005051b,
    0x0112c293, 0x8002c293, 0x7ff2b293, 0x0102b293, 0xfff5b513, 0x020e9e93, 0x03f51513, 0x000f9f13,
    0x008f5f13, 0x03f5d513, 0x43f5d513, 0x401e5e13, 0x002f8fb3, 0x01158533, 0x405102b3, 0x41f10133,
    0x00737533, 0x01d5e5b3, 0x01df6f33, 0x00f746b3, 0x00a03533, 0x01e03f33, 0x00001fb7, 0x001012b7,
    0x80000537, 0xfffff537, 0x7ffff537, 0x00000317, 0xfffff097, 0x00c0006f, 0xffdff0ef, 0x7ffff06f,
    0x8000006f, 0x000300e7, 0x00030067, 0x00008067, 0x800502e7, 0x00b50463, 0xfe029ce3, 0xfe511ce3,
    0x7ed64fe3, 0x80f75063, 0x01f2e0e3, 0x7e5fff63, 0x01f2e863, 0xe0050553, 0xe2050553, 0xe2058f53,
    0xf00f0053, 0xf20f08d3, 0x42050553, 0x42000053, 0x420f86d3, 0xc0001073,
];

#[test]
fn encoders_match_the_gnu_assembler_words() {
    let t = table();
    assert_eq!(t.len(), EXPECTED.len());
    for ((text, got), want) in t.iter().zip(EXPECTED) {
        assert_eq!(
            *got, *want,
            "{text}: encoded {got:#010x}, the assembler gives {want:#010x}"
        );
    }
}

/// `(text, words)` of `li` for `imm` into `rd`: the text of each step and the encoded words.
#[cfg(unix)]
fn li_text(rd: X, imm: i64) -> Vec<(String, u32)> {
    li_steps(imm)
        .into_iter()
        .map(|s| {
            let text = match s {
                LiStep::Lui(v) => format!("lui {rd}, {v:#x}"),
                LiStep::Addiw(v) => format!("addiw {rd}, {rd}, {v}"),
                LiStep::Load(v) => format!("addi {rd}, zero, {v}"),
                LiStep::Addi(v) => format!("addi {rd}, {rd}, {v}"),
                LiStep::Slli(v) => format!("slli {rd}, {rd}, {v}"),
            };
            (text, s.encode(rd))
        })
        .collect()
}

/// RV64 semantics of a `li` sequence.
fn run_steps(steps: &[LiStep]) -> i64 {
    let mut r: i64 = 0;
    for s in steps {
        r = match *s {
            LiStep::Lui(v) => i64::from((v << 12) as i32),
            LiStep::Addiw(v) => i64::from((r as i32).wrapping_add(v)),
            LiStep::Load(v) => i64::from(v),
            LiStep::Addi(v) => r.wrapping_add(i64::from(v)),
            LiStep::Slli(v) => r << v,
        };
    }
    r
}

/// A deterministic stream of 64-bit values (xorshift64*).
fn pseudo_random(n: usize) -> impl Iterator<Item = i64> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n).map(move |_| {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D) as i64
    })
}

/// Constants at every boundary of the `li` construction: the 12-bit immediate, the 32-bit
/// `lui` + `addiw` range (with and without the carry of a negative low part), each width of
/// the upper part, and the extremes.
fn li_constants() -> Vec<i64> {
    let mut v = vec![
        0,
        1,
        -1,
        2047,
        -2048,
        2048,
        -2049,
        4095,
        4096,
        0x7FF,
        0x800,
        0xFFF,
        0x1000,
        0x1800,
        0x7FFF_F7FF,
        0x7FFF_F800,
        0x7FFF_FFFF,
        -0x8000_0000,
        -0x7FFF_F801,
        -0x8000_0001,
        0x8000_0000,
        0x8000_07FF,
        0x8000_0800,
        0xFFFF_FFFF,
        0x1_0000_0000,
        0x1_0000_0800,
        0x0FFF_FFFF_FFFF,
        0x1234_5678_9ABC_DEF0,
        0x7FFF_FFFF_FFFF_FFFF,
        0x7FFF_FFFF_FFFF_F800,
        0x0FFF_FFFF_FFFF_FFFF,
        0x8000_0000_0000_0001u64 as i64,
        0x8000_0000_0000_0800u64 as i64,
        0xFFFF_FFFF_0000_0000u64 as i64,
        0x0000_8000_0000_0000,
        0x0123_4567_89AB_CDEF,
        0xFEDC_BA98_7654_3210u64 as i64,
        0x8888_8888_8888_8888u64 as i64,
        0x7777_7777_7777_7777,
        0x0000_0FFF_FFFF_F800,
        i64::MIN,
        i64::MAX,
        u64::MAX as i64,
        u32::MAX.into(),
        i32::MIN.into(),
        i32::MAX.into(),
        1 << 20,
        (1 << 20) + 4000,
    ];
    for bit in 0..64 {
        let b = 1i64 << bit;
        v.extend([
            b,
            b.wrapping_sub(1),
            b.wrapping_neg(),
            b | 0x800,
            b ^ 0xFFF,
            !b,
        ]);
    }
    v.extend(pseudo_random(2000));
    v
}

#[test]
fn li_sequences_load_every_constant_in_at_most_eight_instructions() {
    for imm in li_constants() {
        let steps = li_steps(imm);
        assert!(steps.len() <= 8, "{imm:#x}: {steps:?}");
        assert_eq!(run_steps(&steps), imm, "{imm:#x}: {steps:?}");
        assert_eq!(li(X::T6, imm).count(), steps.len());
    }
    // the short forms
    assert_eq!(li_steps(-2048), [LiStep::Load(-2048)]);
    assert_eq!(li_steps(4096), [LiStep::Lui(1)]);
    assert_eq!(
        li_steps(0x7FFF_F800),
        [LiStep::Lui(0x80000), LiStep::Addiw(-2048)]
    );
    assert_eq!(li_steps(i64::MIN), [LiStep::Load(-1), LiStep::Slli(63)]);
    assert_eq!(li_steps(-1), [LiStep::Load(-1)]);
    assert_eq!(
        li_steps(0xFFFF_FFFF),
        [LiStep::Load(1), LiStep::Slli(32), LiStep::Addi(-1)]
    );
}

#[test]
fn large_additions_take_one_or_two_addi_or_li_and_add() {
    let (sp, t6) = (X::SP, X::T6);
    assert_eq!(add_large(sp, sp, -2048, t6), [addi(sp, sp, -2048)]);
    assert_eq!(
        add_large(sp, sp, -4096, t6),
        [addi(sp, sp, -2048), addi(sp, sp, -2048)]
    );
    assert_eq!(
        add_large(sp, sp, 4094, t6),
        [addi(sp, sp, 2047), addi(sp, sp, 2047)]
    );
    let mut want: Vec<u32> = li(t6, -1_048_608).collect();
    want.push(add(sp, sp, t6));
    assert_eq!(add_large(sp, sp, -1_048_608, t6), want);
    for disp in [
        0i64,
        1,
        2047,
        2048,
        4095,
        4096,
        0xFFFFF,
        1 << 20,
        0x7FFF_F7FF,
    ] {
        let (hi, lo) = split_hi_lo(disp);
        assert_eq!(
            run_steps(&[LiStep::Lui(hi)]) + i64::from(lo),
            disp,
            "{disp}"
        );
        assert!(fits_i12(lo.into()));
    }
}

#[test]
fn registers_have_their_abi_numbers_and_names() {
    assert_eq!(
        [X::T0, X::T1, X::T2, X::T3, X::T4, X::T5, X::T6].map(X::num),
        [5, 6, 7, 28, 29, 30, 31]
    );
    assert_eq!(
        (0..7).map(|n| X::t(n).num()).collect::<Vec<_>>(),
        [5, 6, 7, 28, 29, 30, 31]
    );
    assert_eq!((X::a(0).num(), X::a(7).num()), (10, 17));
    assert_eq!(
        (X::s(0), X::s(1), X::s(2), X::s(11)),
        (X::S0, X::S1, X::new(18), X::new(27))
    );
    assert_eq!(
        (F::fa(0).num(), F::fa(7).num(), F::ft(8).num()),
        (10, 17, 28)
    );
    assert_eq!((X::GP.num(), X::TP.num()), (3, 4));
    assert_eq!(
        [X::ZERO, X::RA, X::SP, X::GP, X::TP, X::S0, X::a(7), X::T6].map(|x| x.to_string()),
        ["zero", "ra", "sp", "gp", "tp", "s0", "a7", "t6"]
    );
    assert_eq!(
        [F::FT0, F::fa(3), F::ft(11)].map(|f| f.to_string()),
        ["ft0", "fa3", "ft11"]
    );
}

#[test]
fn labels_patch_forward_and_backward_branches() {
    let mut asm = Asm::default();
    let back = asm.label();
    asm.bind(back);
    asm.emit(addi(X::T0, X::ZERO, 0));
    let fwd = asm.label();
    asm.branch(Cond::Ne, X::T0, X::ZERO, fwd);
    asm.branch(Cond::Eq, X::A0, X::A1, back);
    asm.jump(fwd);
    asm.emit(ret());
    asm.bind(fwd);
    asm.emit(ret());
    assert!(asm.branches_reach());
    let w = asm.finish();
    assert_eq!(w[1], branch(Cond::Ne, X::T0, X::ZERO, 16));
    assert_eq!(w[2], branch(Cond::Eq, X::A0, X::A1, -8));
    assert_eq!(w[3], jal(X::ZERO, 8));
}

#[test]
fn branches_beyond_four_kib_do_not_reach() {
    let mut asm = Asm::default();
    let l = asm.label();
    asm.branch(Cond::Ne, X::T0, X::ZERO, l);
    (0..1022).for_each(|_| asm.emit(ret()));
    asm.bind(l);
    assert!(asm.branches_reach()); // +4092 bytes
    let mut asm = Asm::default();
    let l = asm.label();
    asm.branch(Cond::Ne, X::T0, X::ZERO, l);
    (0..1023).for_each(|_| asm.emit(ret()));
    asm.bind(l);
    assert!(!asm.branches_reach()); // +4096 bytes
    let mut asm = Asm::default();
    let l = asm.label();
    asm.jump(l);
    (0..1024).for_each(|_| asm.emit(ret()));
    asm.bind(l);
    assert!(asm.branches_reach());
}

/// Assembles `text` (one instruction a line) with the cross assembler and returns the words,
/// or `None` when the assembler is not installed (skipped, except in CI, where `.ci/run`
/// installs it).
#[cfg(unix)]
fn assemble(text: &str, what: &str) -> Option<Vec<u32>> {
    use std::process::Command;
    let (as_, objcopy) = ("riscv64-linux-gnu-as", "riscv64-linux-gnu-objcopy");
    if Command::new(as_).arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{as_} is missing in CI (.ci/run installs binutils-riscv64-linux-gnu)"
        );
        eprintln!("skipped: {as_} is not installed");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("gatun-rv64-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, obj, bin) = (dir.join("t.s"), dir.join("t.o"), dir.join("t.bin"));
    std::fs::write(&src, format!(".option norvc\n{text}")).unwrap();
    let ok = Command::new(as_)
        .args(["-march=rv64gc", "-mno-relax", "-o"])
        .arg(&obj)
        .arg(&src)
        .status()
        .unwrap();
    assert!(ok.success(), "{as_} failed");
    let ok = Command::new(objcopy)
        .args(["-O", "binary", "-j", ".text"])
        .arg(&obj)
        .arg(&bin)
        .status()
        .unwrap();
    assert!(ok.success(), "{objcopy} failed");
    let bytes = std::fs::read(&bin).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    )
}

/// Assembles [`table`]'s text with the cross assembler (when installed) and compares every
/// word. Unix hosts only (under Wine the GNU assembler, a Linux program, cannot be started;
/// the table test above runs there).
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "runs the cross assembler")]
fn encoders_match_the_cross_assembler_when_installed() {
    let t = table();
    let text: String = t.iter().map(|(t, _)| format!("{t}\n")).collect();
    let Some(words) = assemble(&text, "encode") else {
        return;
    };
    assert_eq!(words.len(), t.len());
    for ((text, got), want) in t.iter().zip(&words) {
        assert_eq!(
            *got, *want,
            "{text}: encoded {got:#010x}, the assembler gives {want:#010x}"
        );
    }
}

/// The `li` sequences' text assembled (when the assembler is installed) gives the encoded
/// words; the disassembler's reading of those words (`objdump -M no-aliases`), evaluated
/// with RV64 semantics, gives the constant.
#[test]
#[cfg(unix)]
#[cfg_attr(miri, ignore = "runs the cross assembler")]
fn li_sequences_match_the_cross_assembler_when_installed() {
    let rds = [X::A0, X::T6, X::T0, X::a(7)];
    let constants = li_constants();
    let seqs: Vec<Vec<(String, u32)>> = constants
        .iter()
        .enumerate()
        .map(|(i, &c)| li_text(rds[i % rds.len()], c))
        .collect();
    let text: String = seqs
        .iter()
        .flatten()
        .map(|(t, _)| format!("{t}\n"))
        .collect();
    let Some(words) = assemble(&text, "li") else {
        return;
    };
    let mine: Vec<u32> = seqs.iter().flatten().map(|&(_, w)| w).collect();
    assert_eq!(words.len(), mine.len());
    for (((text, got), want), i) in seqs.iter().flatten().zip(&words).zip(0..) {
        assert_eq!(
            *got, *want,
            "{text} (word {i}): encoded {got:#010x}, as gives {want:#010x}"
        );
    }
    // What the disassembler reads in the words, evaluated.
    let Some(lines) = disassemble(&mine) else {
        return;
    };
    assert_eq!(lines.len(), mine.len());
    let mut at = 0;
    for (seq, &c) in seqs.iter().zip(&constants) {
        let mut r: i64 = 0;
        for line in &lines[at..at + seq.len()] {
            let mut parts = line.split_whitespace();
            let op = parts.next().unwrap();
            let ops: Vec<&str> = parts.next().unwrap_or("").split(',').collect();
            let imm = |s: &str| -> i64 {
                match s.strip_prefix("0x") {
                    Some(h) => i64::from_str_radix(h, 16).unwrap(),
                    None => s.parse().unwrap(),
                }
            };
            r = match op {
                "lui" => i64::from((imm(ops[1]) << 12) as i32),
                "addiw" if ops[1] == "zero" => imm(ops[2]),
                "addiw" => i64::from((r as i32).wrapping_add(imm(ops[2]) as i32)),
                "addi" if ops[1] == "zero" => imm(ops[2]),
                "addi" => r.wrapping_add(imm(ops[2])),
                "slli" => r << imm(ops[2]),
                other => panic!("unexpected {other} in a li sequence: {line}"),
            };
        }
        assert_eq!(r, c, "li {c:#x}: {:?}", &lines[at..at + seq.len()]);
        at += seq.len();
    }
}

/// The disassembler's text of each word (`mnemonic operands`, no aliases), or `None` when
/// `riscv64-linux-gnu-objdump` is not installed.
#[cfg(unix)]
pub(crate) fn disassemble(words: &[u32]) -> Option<Vec<String>> {
    use std::process::Command;
    let objdump = "riscv64-linux-gnu-objdump";
    if Command::new(objdump).arg("--version").output().is_err() {
        eprintln!("skipped: {objdump} is not installed");
        return None;
    }
    let dir = std::env::temp_dir().join(format!(
        "gatun-rv64-dis-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("code.bin");
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&bin, bytes).unwrap();
    let out = Command::new(objdump)
        .args(["-D", "-b", "binary", "-m", "riscv:rv64", "-M", "no-aliases"])
        .arg(&bin)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{objdump} failed");
    let text = String::from_utf8(out.stdout).unwrap();
    // lines "   0:\t00b50463          \tbeq\ta0,a1,0x8": the third tab-separated field on
    Some(
        text.lines()
            .filter_map(|l| {
                let mut f = l.splitn(3, '\t');
                let addr = f.next()?;
                if !addr.trim_end().ends_with(':') || addr.trim().is_empty() {
                    return None;
                }
                f.next()?;
                let ins = f.next()?;
                let ins = ins.split('#').next().unwrap().trim();
                Some(ins.replacen('\t', " ", 1))
            })
            .collect(),
    )
}
