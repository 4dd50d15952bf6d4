//! A small RISC-V 64 (RV64GC) instruction encoder: exactly the instructions the compiled
//! downcall stubs ([`super::stub`]) emit, each a function returning its 32-bit instruction word,
//! the `li` sequences of any 64-bit constant, plus a tiny assembler ([`Asm`]) with labels for
//! forward and backward branches.
//!
//! Encodings follow The RISC-V Instruction Set Manual, Volume I: Unprivileged ISA, chapter
//! "RV32I Base Integer Instruction Set" (the R/I/S/B/U/J formats; `lui`, `auipc`, `jal`,
//! `jalr`, the conditional branches, loads and stores, the integer register-immediate and
//! register-register operations), "RV64I Base Integer Instruction Set" (`ld`, `sd`, `lwu`,
//! 6-bit shift amounts, `addiw`), and the "F" and "D" extension chapters (`flw`, `fld`, `fsw`,
//! `fsd`, `fmv.x.w`, `fmv.w.x`, `fmv.x.d`, `fmv.d.x`, `fcvt.d.s`). Only uncompressed 32-bit
//! instructions are emitted (no "C" extension), so every word stands alone.
//!
//! Pure Rust with no `unsafe`: compiled and tested on every host. The tests compare every
//! encoder against words produced by the GNU cross assembler (`riscv64-linux-gnu-as
//! -march=rv64gc -mno-relax`, `.option norvc`): a table of those words runs everywhere (Miri
//! included), and when the assembler is installed a second test assembles the same text
//! again and compares. The `li` sequences are evaluated (their RV64 semantics) for boundary and
//! random constants, and their text is assembled too.
//!
//! # Invariants
//! - Registers are typed: [`X`] (`x0`..`x31`) and [`F`] (`f0`..`f31`), so an integer register
//!   can never land in a floating-point field or the reverse. The stubs never name `gp` (`x3`)
//!   or `tp` (`x4`): the psABI reserves them (the global pointer, the thread pointer); the stub
//!   tests check the emitted words for them.
//! - Immediates are range-checked with `debug_assert!`; the stub compiler only passes values in
//!   range: load/store offsets and `addi`/`xori`/`sltiu` immediates in −2048..=2047 (larger
//!   displacements are formed with `lui` + `add` first, see `super::stub`), `lui` immediates
//!   in 0..2^20, shift amounts in 0..64, branch offsets even and within ±4 KiB (checked by
//!   [`Asm::branches_reach`] before [`Asm::finish`]), `jal` offsets within ±1 MiB. [`li`] and
//!   [`add_large`] take any value and choose the sequence themselves.

use std::fmt;

/// An integer register `x0`..`x31` (RISC-V psABI, "Integer Register Convention" for the ABI
/// names).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) struct X(u8);

/// A floating-point register `f0`..`f31` (RISC-V psABI, "Floating-point Register
/// Convention").
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) struct F(u8);

impl X {
    /// `x0`, hard-wired zero.
    pub(crate) const ZERO: X = X(0);
    /// `x1`, the return address.
    pub(crate) const RA: X = X(1);
    /// `x2`, the stack pointer.
    pub(crate) const SP: X = X(2);
    /// `x3`, the global pointer: never written by the stubs.
    #[cfg(test)]
    pub(crate) const GP: X = X(3);
    /// `x4`, the thread pointer: never written by the stubs.
    #[cfg(test)]
    pub(crate) const TP: X = X(4);
    /// `x5`, temporary `t0` (also the alternate link register).
    pub(crate) const T0: X = X(5);
    /// `x6`, temporary `t1`.
    pub(crate) const T1: X = X(6);
    /// `x7`, temporary `t2`.
    pub(crate) const T2: X = X(7);
    /// `x8`, the frame pointer `s0`/`fp` (callee-saved).
    pub(crate) const S0: X = X(8);
    /// `x9`, callee-saved `s1`.
    #[cfg(test)]
    pub(crate) const S1: X = X(9);
    /// `x28`, temporary `t3`.
    pub(crate) const T3: X = X(28);
    /// `x29`, temporary `t4`.
    pub(crate) const T4: X = X(29);
    /// `x30`, temporary `t5`.
    pub(crate) const T5: X = X(30);
    /// `x31`, temporary `t6`.
    pub(crate) const T6: X = X(31);
    /// `x10`, argument/return register `a0`.
    pub(crate) const A0: X = X(10);
    /// `x11`, argument/return register `a1`.
    pub(crate) const A1: X = X(11);
    /// `x12`, argument register `a2`.
    pub(crate) const A2: X = X(12);
    /// `x13`, argument register `a3`.
    pub(crate) const A3: X = X(13);
    /// `x14`, argument register `a4`.
    pub(crate) const A4: X = X(14);
    /// `x15`, argument register `a5`.
    pub(crate) const A5: X = X(15);

    /// `xn`, n in 0..=31.
    #[cfg(test)]
    pub(crate) const fn new(n: u8) -> X {
        debug_assert!(n < 32);
        X(n & 31)
    }

    /// The argument register `a_n` (`x10 + n`), n in 0..=7.
    pub(crate) const fn a(n: u8) -> X {
        debug_assert!(n < 8);
        X(10 + (n & 7))
    }

    /// The callee-saved `s_n`, n in 0..=11 (`x8`, `x9`, `x18`..`x27`).
    #[cfg(test)]
    pub(crate) const fn s(n: u8) -> X {
        debug_assert!(n < 12);
        if n < 2 {
            X(8 + n)
        } else {
            X(16 + n)
        }
    }

    /// The temporary `t_n`, n in 0..=6 (`x5`..`x7`, `x28`..`x31`).
    #[cfg(test)]
    pub(crate) const fn t(n: u8) -> X {
        debug_assert!(n < 7);
        if n < 3 {
            X(5 + n)
        } else {
            X(25 + n)
        }
    }

    /// The register number.
    #[cfg(test)]
    pub(crate) const fn num(self) -> u8 {
        self.0
    }
}

impl F {
    /// `f0`, temporary `ft0`.
    pub(crate) const FT0: F = F(0);

    /// `fn`, n in 0..=31.
    #[cfg(test)]
    pub(crate) const fn new(n: u8) -> F {
        debug_assert!(n < 32);
        F(n & 31)
    }

    /// The argument register `fa_n` (`f10 + n`), n in 0..=7.
    pub(crate) const fn fa(n: u8) -> F {
        debug_assert!(n < 8);
        F(10 + (n & 7))
    }

    /// The temporary `ft_n`, n in 0..=11 (`f0`..`f7`, `f28`..`f31`).
    #[cfg(test)]
    pub(crate) const fn ft(n: u8) -> F {
        debug_assert!(n < 12);
        if n < 8 {
            F(n)
        } else {
            F(20 + n)
        }
    }

    /// The register number.
    #[cfg(test)]
    pub(crate) const fn num(self) -> u8 {
        self.0
    }
}

/// The ABI names of `x0`..`x31` (what the GNU assembler prints).
const X_NAMES: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

/// The ABI names of `f0`..`f31`.
const F_NAMES: [&str; 32] = [
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2",
    "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
    "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
];

impl fmt::Display for X {
    /// The ABI name (`a0`, `sp`, `t6`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(X_NAMES[self.0 as usize])
    }
}

impl fmt::Display for F {
    /// The ABI name (`fa0`, `ft0`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(F_NAMES[self.0 as usize])
    }
}

// Major opcodes (Unprivileged ISA, "RV32/64G Instruction Set Listings").
const LOAD: u32 = 0x03;
const LOAD_FP: u32 = 0x07;
const OP_IMM: u32 = 0x13;
const AUIPC: u32 = 0x17;
const OP_IMM_32: u32 = 0x1B;
const STORE: u32 = 0x23;
const STORE_FP: u32 = 0x27;
const OP: u32 = 0x33;
const LUI: u32 = 0x37;
const OP_FP: u32 = 0x53;
const BRANCH: u32 = 0x63;
const JALR: u32 = 0x67;
const JAL: u32 = 0x6F;

/// Whether `imm` fits a signed 12-bit immediate (−2048..=2047).
pub(crate) fn fits_i12(imm: i64) -> bool {
    (-2048..2048).contains(&imm)
}

/// R-type: `funct7 | rs2 | rs1 | funct3 | rd | opcode`.
fn r_type(funct7: u32, rs2: u8, rs1: u8, funct3: u32, rd: u8, opcode: u32) -> u32 {
    funct7 << 25
        | u32::from(rs2) << 20
        | u32::from(rs1) << 15
        | funct3 << 12
        | u32::from(rd) << 7
        | opcode
}

/// I-type: `imm[11:0] | rs1 | funct3 | rd | opcode`.
fn i_type(imm: i32, rs1: u8, funct3: u32, rd: u8, opcode: u32) -> u32 {
    debug_assert!(fits_i12(imm.into()), "I-type immediate {imm}");
    ((imm as u32) & 0xFFF) << 20 | u32::from(rs1) << 15 | funct3 << 12 | u32::from(rd) << 7 | opcode
}

/// S-type: `imm[11:5] | rs2 | rs1 | funct3 | imm[4:0] | opcode`.
fn s_type(imm: i32, rs2: u8, rs1: u8, funct3: u32, opcode: u32) -> u32 {
    debug_assert!(fits_i12(imm.into()), "S-type immediate {imm}");
    let imm = imm as u32;
    (imm >> 5 & 0x7F) << 25
        | u32::from(rs2) << 20
        | u32::from(rs1) << 15
        | funct3 << 12
        | (imm & 0x1F) << 7
        | opcode
}

/// A load into an integer register (the `funct3` is the width and signedness).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Load {
    /// `lb`: 1 byte, sign-extended.
    B = 0,
    /// `lh`: 2 bytes, sign-extended.
    H = 1,
    /// `lw`: 4 bytes, sign-extended.
    W = 2,
    /// `ld`: 8 bytes.
    D = 3,
    /// `lbu`: 1 byte, zero-extended.
    Bu = 4,
    /// `lhu`: 2 bytes, zero-extended.
    Hu = 5,
    /// `lwu`: 4 bytes, zero-extended.
    Wu = 6,
}

impl Load {
    /// The load of `bytes` (1, 2, 4 or 8) bytes, sign- or zero-extended to 64 bits.
    pub(crate) fn of(bytes: u8, signed: bool) -> Load {
        match (bytes, signed) {
            (1, true) => Load::B,
            (1, false) => Load::Bu,
            (2, true) => Load::H,
            (2, false) => Load::Hu,
            (4, true) => Load::W,
            (4, false) => Load::Wu,
            _ => {
                debug_assert_eq!(bytes, 8);
                Load::D
            }
        }
    }
}

/// A store of an integer register's low bytes (the `funct3` is the width).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Store {
    /// `sb`: 1 byte.
    B = 0,
    /// `sh`: 2 bytes.
    H = 1,
    /// `sw`: 4 bytes.
    W = 2,
    /// `sd`: 8 bytes.
    D = 3,
}

impl Store {
    /// The store of `bytes` (1, 2, 4 or 8) bytes.
    pub(crate) fn of(bytes: u8) -> Store {
        match bytes {
            1 => Store::B,
            2 => Store::H,
            4 => Store::W,
            _ => {
                debug_assert_eq!(bytes, 8);
                Store::D
            }
        }
    }
}

/// The width of a floating-point load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum FWidth {
    /// `flw`/`fsw`: a single (`flw` NaN-boxes it: the upper 32 bits of the register are set).
    S = 2,
    /// `fld`/`fsd`: a double.
    D = 3,
}

impl FWidth {
    /// The width of `bytes` (4 or 8).
    pub(crate) fn of(bytes: u8) -> FWidth {
        if bytes == 4 {
            FWidth::S
        } else {
            debug_assert_eq!(bytes, 8);
            FWidth::D
        }
    }
}

/// `l{b,h,w,d}{,u} rd, offset(rs1)`, offset in −2048..=2047.
pub(crate) fn load(op: Load, rd: X, rs1: X, offset: i32) -> u32 {
    i_type(offset, rs1.0, op as u32, rd.0, LOAD)
}

/// `s{b,h,w,d} rs2, offset(rs1)`, offset in −2048..=2047.
pub(crate) fn store(op: Store, rs2: X, rs1: X, offset: i32) -> u32 {
    s_type(offset, rs2.0, rs1.0, op as u32, STORE)
}

/// `flw`/`fld rd, offset(rs1)`, offset in −2048..=2047.
pub(crate) fn fload(w: FWidth, rd: F, rs1: X, offset: i32) -> u32 {
    i_type(offset, rs1.0, w as u32, rd.0, LOAD_FP)
}

/// `fsw`/`fsd rs2, offset(rs1)`, offset in −2048..=2047.
pub(crate) fn fstore(w: FWidth, rs2: F, rs1: X, offset: i32) -> u32 {
    s_type(offset, rs2.0, rs1.0, w as u32, STORE_FP)
}

/// `addi rd, rs1, imm`, imm in −2048..=2047 (`mv rd, rs1` is `addi rd, rs1, 0`; `li rd, imm`
/// of a small constant is `addi rd, zero, imm`).
pub(crate) fn addi(rd: X, rs1: X, imm: i32) -> u32 {
    i_type(imm, rs1.0, 0, rd.0, OP_IMM)
}

/// `addiw rd, rs1, imm` (32-bit add, result sign-extended), imm in −2048..=2047.
pub(crate) fn addiw(rd: X, rs1: X, imm: i32) -> u32 {
    i_type(imm, rs1.0, 0, rd.0, OP_IMM_32)
}

/// `xori rd, rs1, imm`, imm in −2048..=2047.
pub(crate) fn xori(rd: X, rs1: X, imm: i32) -> u32 {
    i_type(imm, rs1.0, 4, rd.0, OP_IMM)
}

/// `sltiu rd, rs1, imm`: 1 if `rs1 < imm` unsigned (imm sign-extended first), imm in
/// −2048..=2047.
pub(crate) fn sltiu(rd: X, rs1: X, imm: i32) -> u32 {
    i_type(imm, rs1.0, 3, rd.0, OP_IMM)
}

/// `slli rd, rs1, shamt`, shamt in 0..=63.
pub(crate) fn slli(rd: X, rs1: X, shamt: u8) -> u32 {
    debug_assert!(shamt < 64);
    i_type(i32::from(shamt & 63), rs1.0, 1, rd.0, OP_IMM)
}

/// `srli rd, rs1, shamt` (logical), shamt in 0..=63.
pub(crate) fn srli(rd: X, rs1: X, shamt: u8) -> u32 {
    debug_assert!(shamt < 64);
    i_type(i32::from(shamt & 63), rs1.0, 5, rd.0, OP_IMM)
}

/// `srai rd, rs1, shamt` (arithmetic), shamt in 0..=63.
#[cfg(test)] // not used by the stubs; kept with its encoding test
pub(crate) fn srai(rd: X, rs1: X, shamt: u8) -> u32 {
    srli(rd, rs1, shamt) | 0x400 << 20
}

/// `add rd, rs1, rs2`.
pub(crate) fn add(rd: X, rs1: X, rs2: X) -> u32 {
    r_type(0, rs2.0, rs1.0, 0, rd.0, OP)
}

/// `sub rd, rs1, rs2`.
pub(crate) fn sub(rd: X, rs1: X, rs2: X) -> u32 {
    r_type(0x20, rs2.0, rs1.0, 0, rd.0, OP)
}

/// `and rd, rs1, rs2`.
#[cfg(test)] // not used by the stubs; kept with its encoding test
pub(crate) fn and(rd: X, rs1: X, rs2: X) -> u32 {
    r_type(0, rs2.0, rs1.0, 7, rd.0, OP)
}

/// `or rd, rs1, rs2`.
pub(crate) fn or(rd: X, rs1: X, rs2: X) -> u32 {
    r_type(0, rs2.0, rs1.0, 6, rd.0, OP)
}

/// `xor rd, rs1, rs2`.
#[cfg(test)] // not used by the stubs; kept with its encoding test
pub(crate) fn xor(rd: X, rs1: X, rs2: X) -> u32 {
    r_type(0, rs2.0, rs1.0, 4, rd.0, OP)
}

/// `sltu rd, rs1, rs2`: 1 if `rs1 < rs2` unsigned (`snez rd, rs` is `sltu rd, zero, rs`).
pub(crate) fn sltu(rd: X, rs1: X, rs2: X) -> u32 {
    r_type(0, rs2.0, rs1.0, 3, rd.0, OP)
}

/// `lui rd, imm20`: `rd = sign-extend(imm20 << 12)`, imm20 in 0..2^20.
pub(crate) fn lui(rd: X, imm20: u32) -> u32 {
    debug_assert!(imm20 < 1 << 20);
    (imm20 & 0xF_FFFF) << 12 | u32::from(rd.0) << 7 | LUI
}

/// `auipc rd, imm20`: `rd = pc + sign-extend(imm20 << 12)`, imm20 in 0..2^20.
pub(crate) fn auipc(rd: X, imm20: u32) -> u32 {
    debug_assert!(imm20 < 1 << 20);
    (imm20 & 0xF_FFFF) << 12 | u32::from(rd.0) << 7 | AUIPC
}

/// `jal rd, offset`: offset in bytes, even, within ±1 MiB (`j offset` is `jal zero`).
pub(crate) fn jal(rd: X, offset: i32) -> u32 {
    debug_assert!(jal_reaches(offset.into()), "jal over {offset} bytes");
    let o = offset as u32;
    (o >> 20 & 1) << 31
        | (o >> 1 & 0x3FF) << 21
        | (o >> 11 & 1) << 20
        | (o >> 12 & 0xFF) << 12
        | u32::from(rd.0) << 7
        | JAL
}

/// `jalr rd, offset(rs1)`, offset in −2048..=2047 (`jalr ra, 0(t1)` calls, `jr t1` is
/// `jalr zero, 0(t1)`, `ret` is `jalr zero, 0(ra)`).
pub(crate) fn jalr(rd: X, rs1: X, offset: i32) -> u32 {
    i_type(offset, rs1.0, 0, rd.0, JALR)
}

/// The 32-bit `unimp` (`csrrw zero, cycle, zero`: a write to the read-only `cycle` CSR, an
/// illegal instruction, as the GNU assembler encodes `unimp` without the "C" extension).
pub(crate) const UNIMP: u32 = 0xC000_1073;

/// `mv rd, rs` (`addi rd, rs, 0`).
pub(crate) fn mv(rd: X, rs: X) -> u32 {
    addi(rd, rs, 0)
}

/// `ret` (`jalr zero, 0(ra)`).
pub(crate) fn ret() -> u32 {
    jalr(X::ZERO, X::RA, 0)
}

/// A branch condition: the `funct3` of a conditional branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Cond {
    /// `beq`.
    #[cfg(test)]
    Eq = 0,
    /// `bne`.
    Ne = 1,
    /// `blt` (signed).
    #[cfg(test)]
    Lt = 4,
    /// `bge` (signed).
    #[cfg(test)]
    Ge = 5,
    /// `bltu`.
    Ltu = 6,
    /// `bgeu`.
    #[cfg(test)]
    Geu = 7,
}

/// Whether a conditional branch reaches `offset` bytes away: −4096..=4094.
pub(crate) fn branch_reaches(offset: i64) -> bool {
    (-4096..4096).contains(&offset)
}

/// Whether `jal` reaches `offset` bytes away: ±1 MiB.
pub(crate) fn jal_reaches(offset: i64) -> bool {
    (-(1 << 20)..(1 << 20)).contains(&offset)
}

/// `b{eq,ne,lt,ge,ltu,geu} rs1, rs2, offset`: offset in bytes, even, within ±4 KiB.
pub(crate) fn branch(cond: Cond, rs1: X, rs2: X, offset: i32) -> u32 {
    debug_assert!(branch_reaches(offset.into()) && offset % 2 == 0);
    let o = offset as u32;
    (o >> 12 & 1) << 31
        | (o >> 5 & 0x3F) << 25
        | u32::from(rs2.0) << 20
        | u32::from(rs1.0) << 15
        | (cond as u32) << 12
        | (o >> 1 & 0xF) << 8
        | (o >> 11 & 1) << 7
        | BRANCH
}

/// `fmv.x.w rd, rs1`: the low 32 bits of `rs1`, sign-extended.
#[cfg(test)] // not used by the stubs; kept with its encoding test
pub(crate) fn fmv_x_w(rd: X, rs1: F) -> u32 {
    r_type(0x70, 0, rs1.0, 0, rd.0, OP_FP)
}

/// `fmv.x.d rd, rs1`: the 64 bits of `rs1`.
pub(crate) fn fmv_x_d(rd: X, rs1: F) -> u32 {
    r_type(0x71, 0, rs1.0, 0, rd.0, OP_FP)
}

/// `fmv.w.x rd, rs1`: the low 32 bits of `rs1` as a single, NaN-boxed.
#[cfg(test)] // not used by the stubs; kept with its encoding test
pub(crate) fn fmv_w_x(rd: F, rs1: X) -> u32 {
    r_type(0x78, 0, rs1.0, 0, rd.0, OP_FP)
}

/// `fmv.d.x rd, rs1`: the 64 bits of `rs1` into `rd`.
pub(crate) fn fmv_d_x(rd: F, rs1: X) -> u32 {
    r_type(0x79, 0, rs1.0, 0, rd.0, OP_FP)
}

/// `fcvt.d.s rd, rs1` (exact; rounding-mode field 0, as the GNU assembler writes it).
pub(crate) fn fcvt_d_s(rd: F, rs1: F) -> u32 {
    r_type(0x21, 0, rs1.0, 0, rd.0, OP_FP)
}

/// One step of a [`li`] sequence (the register is the sequence's destination throughout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LiStep {
    /// `lui rd, imm20`.
    Lui(u32),
    /// `addiw rd, rd, imm` (after a `lui`).
    Addiw(i32),
    /// `addi rd, zero, imm` (the first step when there is no `lui`).
    Load(i32),
    /// `addi rd, rd, imm`.
    Addi(i32),
    /// `slli rd, rd, shamt`.
    Slli(u8),
}

impl LiStep {
    /// The instruction word of this step into `rd`.
    pub(crate) fn encode(self, rd: X) -> u32 {
        match self {
            LiStep::Lui(imm) => lui(rd, imm),
            LiStep::Addiw(imm) => addiw(rd, rd, imm),
            LiStep::Load(imm) => addi(rd, X::ZERO, imm),
            LiStep::Addi(imm) => addi(rd, rd, imm),
            LiStep::Slli(s) => slli(rd, rd, s),
        }
    }
}

/// The steps of `li rd, imm` for any 64-bit constant (`u64` values as their bits): at most
/// eight, built as follows. A constant that fits 32 signed bits is `lui` of its upper 20 bits
/// (rounded so that the low 12 bits are a signed immediate) and `addiw` of the low 12 bits —
/// `addiw` wraps in 32 bits and sign-extends, which keeps constants just under 2^31 right —
/// or `addi rd, zero, imm` alone when the upper bits are zero. A wider constant is its upper
/// part (the constant minus its sign-extended low 12 bits, shifted right by 12 plus its
/// trailing zeros and sign-extended from the bits that survive the shift back) loaded the same
/// way, then `slli` and `addi` of the low 12 bits (omitted when zero). Each level removes at
/// least 12 significant bits.
pub(crate) fn li_steps(imm: i64) -> Vec<LiStep> {
    let mut steps = Vec::with_capacity(8);
    li_into(imm, &mut steps);
    steps
}

fn li_into(imm: i64, steps: &mut Vec<LiStep>) {
    let lo12 = (imm << 52) >> 52;
    if i32::try_from(imm).is_ok() {
        let hi20 = ((imm + 0x800) >> 12) as u32 & 0xF_FFFF;
        if hi20 == 0 {
            steps.push(LiStep::Load(lo12 as i32));
        } else {
            steps.push(LiStep::Lui(hi20));
            if lo12 != 0 {
                steps.push(LiStep::Addiw(lo12 as i32));
            }
        }
        return;
    }
    // imm - lo12 (exact: no overflow, as the low 12 bits cancel) over 4096
    let hi52 = (imm >> 12) + i64::from(lo12 < 0);
    let zeros = hi52.trailing_zeros(); // hi52 != 0: imm does not fit 32 bits
    let shift = 12 + zeros;
    // the bits of the upper part that survive `slli shift`, sign-extended
    let upper = ((hi52 >> zeros) << shift) >> shift;
    li_into(upper, steps);
    steps.push(LiStep::Slli(shift as u8));
    if lo12 != 0 {
        steps.push(LiStep::Addi(lo12 as i32));
    }
}

/// The words of `li rd, imm` ([`li_steps`]): 1 to 8 instructions.
pub(crate) fn li(rd: X, imm: i64) -> impl Iterator<Item = u32> {
    li_steps(imm).into_iter().map(move |s| s.encode(rd))
}

/// The words of `rd = rs + imm` for any `imm` whose magnitude is below 2^31: one `addi` for
/// −2048..=2047, two `addi` for −4096..=4094, else `li scratch, imm` and `add` (`scratch`
/// distinct from `rs`). Used for stack adjustments.
pub(crate) fn add_large(rd: X, rs: X, imm: i64, scratch: X) -> Vec<u32> {
    if fits_i12(imm) {
        vec![addi(rd, rs, imm as i32)]
    } else if (-4096..=4094).contains(&imm) {
        let first = if imm < 0 { -2048 } else { 2047 };
        vec![
            addi(rd, rs, first),
            addi(rd, rd, (imm - i64::from(first)) as i32),
        ]
    } else {
        debug_assert!(scratch != rs);
        let mut w: Vec<u32> = li(scratch, imm).collect();
        w.push(add(rd, rs, scratch));
        w
    }
}

/// The `(hi20, lo12)` split of a displacement below 2^31 − 2048: `lui hi20` then a 12-bit
/// offset `lo12` reach `disp` exactly (`(hi20 << 12) + lo12 == disp`).
pub(crate) fn split_hi_lo(disp: i64) -> (u32, i32) {
    debug_assert!((0..(1 << 31) - 2048).contains(&disp));
    let lo12 = ((disp << 52) >> 52) as i32;
    let hi20 = ((disp + 0x800) >> 12) as u32;
    (hi20, lo12)
}

/// A branch target of an [`Asm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label(usize);

/// A branch whose offset is patched when the assembly is finished.
#[derive(Debug, Clone, Copy)]
enum Fixup {
    /// A conditional branch at this word index.
    Branch(usize, Cond, X, X),
    /// A `jal zero` (`j`) at this word index.
    Jump(usize),
}

/// A tiny assembler: a buffer of instruction words, labels, and branches to labels patched in
/// [`Asm::finish`].
#[derive(Debug, Default)]
pub(crate) struct Asm {
    words: Vec<u32>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(Fixup, Label)>,
}

impl Asm {
    /// Appends an instruction word.
    pub(crate) fn emit(&mut self, word: u32) {
        self.words.push(word);
    }

    /// Appends instruction words.
    pub(crate) fn emit_all(&mut self, words: impl IntoIterator<Item = u32>) {
        self.words.extend(words);
    }

    /// Number of words emitted so far (the index of the next one).
    pub(crate) fn len(&self) -> usize {
        self.words.len()
    }

    /// A new, unbound label.
    pub(crate) fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `l` to the next instruction.
    pub(crate) fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.words.len());
    }

    /// `b<cond> rs1, rs2, l`.
    pub(crate) fn branch(&mut self, cond: Cond, rs1: X, rs2: X, l: Label) {
        self.fixups
            .push((Fixup::Branch(self.words.len(), cond, rs1, rs2), l));
        self.words.push(0);
    }

    /// `j l` (`jal zero, l`).
    pub(crate) fn jump(&mut self, l: Label) {
        self.fixups.push((Fixup::Jump(self.words.len()), l));
        self.words.push(0);
    }

    /// The byte offset of a branch at word `at` to label `l` (`None`: unbound).
    fn offset(&self, at: usize, l: Label) -> Option<i64> {
        self.labels[l.0].map(|to| 4 * (to as i64 - at as i64))
    }

    /// Whether every branch reaches its label (conditional ±4 KiB, `j` ±1 MiB; unbound labels
    /// count as reached).
    pub(crate) fn branches_reach(&self) -> bool {
        self.fixups.iter().all(|&(f, l)| match f {
            Fixup::Branch(at, ..) => self.offset(at, l).is_none_or(branch_reaches),
            Fixup::Jump(at) => self.offset(at, l).is_none_or(jal_reaches),
        })
    }

    /// The instruction words with every branch patched.
    ///
    /// # Panics
    /// If a branched-to label was never bound, or a branch does not reach its label
    /// ([`Asm::branches_reach`]): bugs in the stub compiler.
    pub(crate) fn finish(mut self) -> Vec<u32> {
        for &(f, l) in &self.fixups {
            let at = match f {
                Fixup::Branch(at, ..) | Fixup::Jump(at) => at,
            };
            let off = self.offset(at, l).expect("branch to an unbound label");
            self.words[at] = match f {
                Fixup::Branch(_, cond, rs1, rs2) => {
                    assert!(branch_reaches(off), "branch over {off} bytes");
                    branch(cond, rs1, rs2, off as i32)
                }
                Fixup::Jump(_) => {
                    assert!(jal_reaches(off), "jump over {off} bytes");
                    jal(X::ZERO, off as i32)
                }
            };
        }
        self.words
    }
}

#[cfg(test)]
pub(crate) mod tests;
