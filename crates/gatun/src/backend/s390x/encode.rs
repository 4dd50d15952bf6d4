//! A small z/Architecture instruction encoder: exactly the instructions the compiled downcall
//! stubs ([`super::stub`]) and the upcall stubs ([`super::upcall_entry`]) emit, each a
//! function returning its [`Insn`] (2, 4 or 6 bytes, big-endian as fetched), plus a tiny
//! assembler ([`Asm`]) with labels for forward branches.
//!
//! Encodings follow the z/Architecture Principles of Operation, chapter "Instructions" (the
//! RR, RRE, RI, RIL, RS/RSY, RX/RXY, RXE and SIY formats) and the instruction descriptions of
//! the general, floating-point-support and binary-floating-point chapters. Every instruction
//! is in the z10 architecture level that Rust's `s390x-unknown-linux-gnu` target requires (the
//! long-displacement forms with a signed 20-bit displacement, `lgfi`, `clgfi`,
//! `lgdr`/`ldgr`).
//!
//! Pure Rust with no `unsafe`: compiled and tested on every host. The tests compare every
//! encoder against the bytes produced by the GNU cross assembler (`s390x-linux-gnu-as`): a
//! table of those bytes runs everywhere (Miri included), and when the assembler is installed a
//! second test assembles the same text again and compares.
//!
//! # Invariants
//! - Registers are typed: [`R`] (`%r0`..`%r15`) and [`F`] (`%f0`..`%f15`), so a general
//!   register can never land in a floating-point field or the reverse. `%r0` is never used as
//!   a base or index register (a 0 in a B or X field means "none"): the address-register
//!   arguments are checked with `debug_assert!`.
//! - Immediates and displacements are range-checked with `debug_assert!`; the stub compiler
//!   only passes values in range: long displacements in −2^19..2^19, short (RX, RXE, SS-less
//!   forms) in 0..4096, 16-bit and 32-bit immediates and relative offsets in their ranges
//!   (offsets are even byte counts, encoded as halfwords).

use std::fmt;

/// A general register `%r0`..`%r15` (s390x ELF ABI Supplement, "Registers").
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) struct R(u8);

/// A floating-point register `%f0`..`%f15`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) struct F(u8);

impl R {
    /// `%r0`: scratch; never a base or index register.
    pub(crate) const R0: R = R(0);
    /// `%r1`: scratch.
    pub(crate) const R1: R = R(1);
    /// `%r2`: the first argument and the result.
    pub(crate) const R2: R = R(2);
    /// `%r3`.
    pub(crate) const R3: R = R(3);
    /// `%r4`.
    pub(crate) const R4: R = R(4);
    /// `%r5`.
    pub(crate) const R5: R = R(5);
    /// `%r6`: the fifth argument, callee-saved.
    pub(crate) const R6: R = R(6);
    /// `%r7` (callee-saved).
    pub(crate) const R7: R = R(7);
    /// `%r8` (callee-saved).
    pub(crate) const R8: R = R(8);
    /// `%r9` (callee-saved).
    pub(crate) const R9: R = R(9);
    /// `%r10` (callee-saved).
    pub(crate) const R10: R = R(10);
    /// `%r11` (callee-saved; the stubs' frame pointer).
    pub(crate) const R11: R = R(11);
    /// `%r12` (callee-saved).
    pub(crate) const R12: R = R(12);
    /// `%r13` (callee-saved).
    pub(crate) const R13: R = R(13);
    /// `%r14`: the return address.
    pub(crate) const R14: R = R(14);
    /// `%r15`: the stack pointer.
    pub(crate) const R15: R = R(15);

    /// `%rn`, n in 0..=15.
    #[cfg(test)]
    pub(crate) const fn new(n: u8) -> R {
        debug_assert!(n < 16);
        R(n & 15)
    }

    /// The argument register of `Location::Int(n)`: `%r(2 + n)`, n in 0..=4.
    pub(crate) const fn arg(n: u8) -> R {
        debug_assert!(n < 5);
        R(2 + (n % 5))
    }

    /// The register number.
    #[cfg(test)]
    pub(crate) const fn num(self) -> u8 {
        self.0
    }
}

impl F {
    /// `%f1`: scratch (call-clobbered, carries no argument).
    pub(crate) const F1: F = F(1);

    /// `%fn`, n in 0..=15.
    #[cfg(test)]
    pub(crate) const fn new(n: u8) -> F {
        debug_assert!(n < 16);
        F(n & 15)
    }

    /// The argument register of `Location::Vector(n)`: `%f(2n)`, n in 0..=3.
    pub(crate) const fn arg(n: u8) -> F {
        debug_assert!(n < 4);
        F(2 * (n % 4))
    }

    /// The register number.
    #[cfg(test)]
    pub(crate) const fn num(self) -> u8 {
        self.0
    }
}

impl fmt::Display for R {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%r{}", self.0)
    }
}

impl fmt::Display for F {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%f{}", self.0)
    }
}

/// One instruction: its 2, 4 or 6 bytes, in the order they are fetched.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Insn {
    bytes: [u8; 6],
    len: u8,
}

impl Insn {
    /// The instruction's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Its length in bytes.
    #[cfg(gatun_backend = "s390x")]
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    fn two(h: u16) -> Insn {
        let [a, b] = h.to_be_bytes();
        Insn {
            bytes: [a, b, 0, 0, 0, 0],
            len: 2,
        }
    }

    fn four(w: u32) -> Insn {
        let [a, b, c, d] = w.to_be_bytes();
        Insn {
            bytes: [a, b, c, d, 0, 0],
            len: 4,
        }
    }

    fn six(w: u64) -> Insn {
        let b = w.to_be_bytes();
        Insn {
            bytes: [b[2], b[3], b[4], b[5], b[6], b[7]],
            len: 6,
        }
    }
}

/// Whether `d` fits a long (20-bit signed) displacement.
pub(crate) fn fits_long(d: i64) -> bool {
    (-(1 << 19)..(1 << 19)).contains(&d)
}

/// Whether `d` fits a short (12-bit unsigned) displacement.
pub(crate) fn fits_short(d: i64) -> bool {
    (0..4096).contains(&d)
}

/// Whether `v` fits a signed 16-bit immediate.
pub(crate) fn fits_i16(v: i64) -> bool {
    i16::try_from(v).is_ok()
}

/// The RR format: `op r1, r2` (8-bit opcode).
fn rr(op: u8, r1: u8, r2: u8) -> Insn {
    Insn::two(u16::from(op) << 8 | u16::from(r1) << 4 | u16::from(r2))
}

/// The RRE format: `op r1, r2` (16-bit opcode).
fn rre(op: u16, r1: u8, r2: u8) -> Insn {
    Insn::four(u32::from(op) << 16 | u32::from(r1) << 4 | u32::from(r2))
}

/// The RI format: 8-bit opcode, `r1` (or a mask), 4-bit opcode extension, 16-bit immediate.
fn ri(op: u8, r1: u8, op2: u8, i2: u16) -> Insn {
    Insn::four(u32::from(op) << 24 | u32::from(r1) << 20 | u32::from(op2) << 16 | u32::from(i2))
}

/// The RIL format: 8-bit opcode, `r1` (or a mask), 4-bit opcode extension, 32-bit immediate.
fn ril(op: u8, r1: u8, op2: u8, i2: u32) -> Insn {
    Insn::six(u64::from(op) << 40 | u64::from(r1) << 36 | u64::from(op2) << 32 | u64::from(i2))
}

/// The long-displacement formats RXY, RSY and SIY: `op1 | f1 f2 | b dl | dh | op2`, `d` the
/// signed 20-bit displacement split into its low 12 and high 8 bits.
fn long_form(op1: u8, f1: u8, f2: u8, b: u8, d: i32, op2: u8) -> Insn {
    debug_assert!(fits_long(d.into()), "displacement {d}");
    let d = d as u32;
    let (dl, dh) = (d & 0xFFF, (d >> 12) & 0xFF);
    Insn::six(
        u64::from(op1) << 40
            | u64::from(f1) << 36
            | u64::from(f2) << 32
            | u64::from(b) << 28
            | u64::from(dl) << 16
            | u64::from(dh) << 8
            | u64::from(op2),
    )
}

/// An address `d(x, b)`: a base register, an optional index register, a displacement.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Addr {
    /// The base register (never `%r0`).
    pub(crate) base: R,
    /// The index register (never `%r0`), if any.
    pub(crate) index: Option<R>,
    /// The displacement.
    pub(crate) disp: i32,
}

impl Addr {
    /// `disp(base)`.
    pub(crate) fn new(base: R, disp: i32) -> Addr {
        debug_assert!(base != R::R0, "%r0 as a base register");
        Addr {
            base,
            index: None,
            disp,
        }
    }

    /// `disp(index, base)`.
    pub(crate) fn indexed(index: R, base: R, disp: i32) -> Addr {
        debug_assert!(
            base != R::R0 && index != R::R0,
            "%r0 as an address register"
        );
        Addr {
            base,
            index: Some(index),
            disp,
        }
    }

    fn x(self) -> u8 {
        self.index.map_or(0, |r| r.0)
    }
}

/// The RXY-format operations on a general register (z/Architecture: `op1 = 0xE3`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Rxy {
    /// `lg`: load 64 bits.
    Lg,
    /// `lgf`: load 32 bits sign-extended.
    Lgf,
    /// `llgf`: load 32 bits zero-extended.
    Llgf,
    /// `lgh`: load 16 bits sign-extended.
    Lgh,
    /// `llgh`: load 16 bits zero-extended.
    Llgh,
    /// `lgb`: load 8 bits sign-extended.
    Lgb,
    /// `llgc`: load 8 bits zero-extended.
    Llgc,
    /// `ly`: load 32 bits into the low word (the high word unchanged).
    Ly,
    /// `stg`: store 64 bits.
    Stg,
    /// `sty`: store the low 32 bits.
    Sty,
    /// `sthy`: store the low 16 bits.
    Sthy,
    /// `stcy`: store the low 8 bits.
    Stcy,
    /// `lay`: load the address.
    Lay,
}

impl Rxy {
    fn op2(self) -> u8 {
        match self {
            Rxy::Lg => 0x04,
            Rxy::Lgf => 0x14,
            Rxy::Llgf => 0x16,
            Rxy::Lgh => 0x15,
            Rxy::Llgh => 0x91,
            Rxy::Lgb => 0x77,
            Rxy::Llgc => 0x90,
            Rxy::Ly => 0x58,
            Rxy::Stg => 0x24,
            Rxy::Sty => 0x50,
            Rxy::Sthy => 0x70,
            Rxy::Stcy => 0x72,
            Rxy::Lay => 0x71,
        }
    }

    /// The load of `bytes` (1, 2, 4, 8) bytes into a whole register, `signed` or zero-extended.
    pub(crate) fn load(bytes: u8, signed: bool) -> Rxy {
        match (bytes, signed) {
            (1, true) => Rxy::Lgb,
            (1, false) => Rxy::Llgc,
            (2, true) => Rxy::Lgh,
            (2, false) => Rxy::Llgh,
            (4, true) => Rxy::Lgf,
            (4, false) => Rxy::Llgf,
            _ => Rxy::Lg,
        }
    }

    /// The store of the low `bytes` (1, 2, 4, 8) bytes.
    pub(crate) fn store(bytes: u8) -> Rxy {
        match bytes {
            1 => Rxy::Stcy,
            2 => Rxy::Sthy,
            4 => Rxy::Sty,
            _ => Rxy::Stg,
        }
    }
}

/// An RXY operation on a general register: `op r1, d(x, b)`.
pub(crate) fn rxy(op: Rxy, r1: R, a: Addr) -> Insn {
    long_form(0xE3, r1.0, a.x(), a.base.0, a.disp, op.op2())
}

/// The RXY-format operations on a floating-point register (`op1 = 0xED`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FRxy {
    /// `ley`: load a short value into the high word (the low word unchanged).
    Ley,
    /// `ldy`: load 64 bits.
    Ldy,
    /// `stey`: store the high word.
    Stey,
    /// `stdy`: store 64 bits.
    Stdy,
}

/// An RXY operation on a floating-point register: `op f1, d(x, b)`.
pub(crate) fn frxy(op: FRxy, f1: F, a: Addr) -> Insn {
    let op2 = match op {
        FRxy::Ley => 0x64,
        FRxy::Ldy => 0x65,
        FRxy::Stey => 0x66,
        FRxy::Stdy => 0x67,
    };
    long_form(0xED, f1.0, a.x(), a.base.0, a.disp, op2)
}

/// `ldeb f1, d(x, b)` (RXE): load a short BFP value lengthened to long (a `float` widened to a
/// `double`); short displacement.
pub(crate) fn ldeb(f1: F, a: Addr) -> Insn {
    debug_assert!(fits_short(a.disp.into()), "displacement {}", a.disp);
    Insn::six(
        0xEDu64 << 40
            | u64::from(f1.0) << 36
            | u64::from(a.x()) << 32
            | u64::from(a.base.0) << 28
            | u64::from(a.disp as u32 & 0xFFF) << 16
            | 0x04,
    )
}

/// The RSY-format operations (`op1 = 0xEB`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Rsy {
    /// `stmg r1, r3, d(b)`: store r1..r3.
    Stmg,
    /// `lmg r1, r3, d(b)`: load r1..r3.
    Lmg,
    /// `sllg r1, r3, d(b)`: shift left by the address's low 6 bits.
    Sllg,
    /// `srlg r1, r3, d(b)`: shift right logical.
    Srlg,
}

/// An RSY operation with two registers: `op r1, r3, d(b)` (`b` = `None`: no base, the
/// displacement alone, as shifts use it).
pub(crate) fn rsy(op: Rsy, r1: R, r3: R, b: Option<R>, d: i32) -> Insn {
    let op2 = match op {
        Rsy::Stmg => 0x24,
        Rsy::Lmg => 0x04,
        Rsy::Sllg => 0x0D,
        Rsy::Srlg => 0x0C,
    };
    long_form(0xEB, r1.0, r3.0, b.map_or(0, |r| r.0), d, op2)
}

/// `sllg r1, r3, n`.
pub(crate) fn sllg(r1: R, r3: R, n: u8) -> Insn {
    debug_assert!(n < 64);
    rsy(Rsy::Sllg, r1, r3, None, n.into())
}

/// `srlg r1, r3, n`.
pub(crate) fn srlg(r1: R, r3: R, n: u8) -> Insn {
    debug_assert!(n < 64);
    rsy(Rsy::Srlg, r1, r3, None, n.into())
}

/// The character-under-mask operations (RSY): insert or store the bytes of the low (`…y`) or
/// high (`…h`) word that the 4-bit mask selects, in order, from or to consecutive bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mask {
    /// `icmy`: insert into the low word.
    Icmy,
    /// `icmh`: insert into the high word.
    Icmh,
    /// `stcmy`: store from the low word.
    Stcmy,
    /// `stcmh`: store from the high word.
    Stcmh,
}

/// A character-under-mask operation: `op r1, mask, d(b)`.
pub(crate) fn mask_op(op: Mask, r1: R, mask: u8, b: R, d: i32) -> Insn {
    debug_assert!(mask > 0 && mask < 16);
    debug_assert!(b != R::R0);
    let op2 = match op {
        Mask::Icmy => 0x81,
        Mask::Icmh => 0x80,
        Mask::Stcmy => 0x2D,
        Mask::Stcmh => 0x2C,
    };
    long_form(0xEB, r1.0, mask, b.0, d, op2)
}

/// `cliy d(b), i`: compare the byte at `d(b)` with `i`.
pub(crate) fn cliy(b: R, d: i32, i: u8) -> Insn {
    debug_assert!(b != R::R0);
    long_form(0xEB, i >> 4, i & 15, b.0, d, 0x55)
}

/// `la r1, d(x, b)` (RX): load the address; short displacement.
pub(crate) fn la(r1: R, a: Addr) -> Insn {
    debug_assert!(fits_short(a.disp.into()), "displacement {}", a.disp);
    Insn::four(
        0x41u32 << 24
            | u32::from(r1.0) << 20
            | u32::from(a.x()) << 16
            | u32::from(a.base.0) << 12
            | (a.disp as u32 & 0xFFF),
    )
}

/// `lgr r1, r2`.
pub(crate) fn lgr(r1: R, r2: R) -> Insn {
    rre(0xB904, r1.0, r2.0)
}

/// `lcgr r1, r2`: load the complement (negate).
pub(crate) fn lcgr(r1: R, r2: R) -> Insn {
    rre(0xB903, r1.0, r2.0)
}

/// `lgdr r1, f2`: the 64 bits of a floating-point register into a general one.
pub(crate) fn lgdr(r1: R, f2: F) -> Insn {
    rre(0xB3CD, r1.0, f2.0)
}

/// `ldgr f1, r2`: the 64 bits of a general register into a floating-point one.
pub(crate) fn ldgr(f1: F, r2: R) -> Insn {
    rre(0xB3C1, f1.0, r2.0)
}

/// `lghi r1, i`: load a signed 16-bit immediate.
pub(crate) fn lghi(r1: R, i: i16) -> Insn {
    ri(0xA7, r1.0, 0x9, i as u16)
}

/// `aghi r1, i`: add a signed 16-bit immediate.
#[cfg(test)]
pub(crate) fn aghi(r1: R, i: i16) -> Insn {
    ri(0xA7, r1.0, 0xB, i as u16)
}

/// `lgfi r1, i`: load a signed 32-bit immediate.
pub(crate) fn lgfi(r1: R, i: i32) -> Insn {
    ril(0xC0, r1.0, 0x1, i as u32)
}

/// `clgfi r1, i`: compare logical (unsigned) with a 32-bit unsigned immediate.
pub(crate) fn clgfi(r1: R, i: u32) -> Insn {
    ril(0xC2, r1.0, 0xE, i)
}

/// `larl r1, .+offset` (`offset` in bytes, even).
pub(crate) fn larl(r1: R, offset: i64) -> Insn {
    debug_assert!(offset % 2 == 0);
    ril(0xC0, r1.0, 0x0, (offset / 2) as i32 as u32)
}

/// The condition-code masks of the branches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Cond {
    /// Always (`j`, `jg`).
    #[cfg(test)]
    Always,
    /// Not equal (`jne`, `jgne`): condition codes 1, 2, 3.
    Ne,
    /// Low (`jl`, `jgl`): condition code 1 (first operand low).
    Low,
}

impl Cond {
    fn mask(self) -> u8 {
        match self {
            #[cfg(test)]
            Cond::Always => 15,
            Cond::Ne => 7,
            Cond::Low => 4,
        }
    }
}

/// `brcl mask, .+offset` (`jg…`): a branch of ±4 GiB (`offset` in bytes, even).
pub(crate) fn brcl(cond: Cond, offset: i64) -> Insn {
    debug_assert!(offset % 2 == 0);
    ril(0xC0, cond.mask(), 0x4, (offset / 2) as i32 as u32)
}

/// `brctg r1, .+offset`: decrement `r1` and branch when it is not zero (`offset` in bytes,
/// even, within ±64 KiB).
pub(crate) fn brctg(r1: R, offset: i64) -> Insn {
    debug_assert!(offset % 2 == 0 && fits_i16(offset / 2));
    ri(0xA7, r1.0, 0x7, (offset / 2) as i16 as u16)
}

/// `basr r1, r2`: call `r2`, the return address in `r1`.
pub(crate) fn basr(r1: R, r2: R) -> Insn {
    debug_assert!(r2 != R::R0, "basr to %r0 does not branch");
    rr(0x0D, r1.0, r2.0)
}

/// `br r2` (`bcr 15, r2`): jump to `r2`.
pub(crate) fn br(r2: R) -> Insn {
    debug_assert!(r2 != R::R0, "br %r0 does not branch");
    rr(0x07, 15, r2.0)
}

/// The two zero bytes of an invalid operation (opcode 0): the padding between a stub's
/// entries and after code, never executed.
pub(crate) const INVALID: u16 = 0x0000;

/// `nopr %r7` (`bcr 0, %r7`): a no-operation, the padding inside an upcall stub.
pub(crate) fn nopr() -> Insn {
    rr(0x07, 0, 7)
}

/// A branch target of an [`Asm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label(usize);

/// A tiny assembler: a buffer of instruction bytes, labels, and `brcl` branches to labels
/// patched in [`Asm::finish`] (a `brcl` reaches ±4 GiB: any stub).
#[derive(Debug, Default)]
pub(crate) struct Asm {
    bytes: Vec<u8>,
    insns: usize,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Cond, Label)>,
}

impl Asm {
    /// Appends an instruction.
    pub(crate) fn emit(&mut self, i: Insn) {
        self.bytes.extend_from_slice(i.bytes());
        self.insns += 1;
    }

    /// Bytes emitted so far (the offset of the next instruction).
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Instructions emitted so far.
    pub(crate) fn insns(&self) -> usize {
        self.insns
    }

    /// Appends `n` bytes of padding (two-byte invalid operations; `n` even).
    pub(crate) fn pad(&mut self, n: usize) {
        debug_assert!(n % 2 == 0);
        for _ in 0..n / 2 {
            self.bytes.extend_from_slice(&INVALID.to_be_bytes());
        }
    }

    /// A new, unbound label.
    pub(crate) fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `l` to the next instruction.
    pub(crate) fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.bytes.len());
    }

    /// `brcl cond, l`.
    pub(crate) fn branch(&mut self, cond: Cond, l: Label) {
        self.fixups.push((self.bytes.len(), cond, l));
        self.emit(brcl(cond, 0));
    }

    /// The bytes with every branch patched.
    ///
    /// # Panics
    /// If a branched-to label was never bound: a bug in the stub compiler.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        for &(at, cond, l) in &self.fixups {
            let to = self.labels[l.0].expect("branch to an unbound label");
            let i = brcl(cond, to as i64 - at as i64);
            self.bytes[at..at + 6].copy_from_slice(i.bytes());
        }
        self.bytes
    }
}

#[cfg(test)]
pub(crate) mod tests;
