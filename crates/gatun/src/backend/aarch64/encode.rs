//! A small AArch64 (A64) instruction encoder: exactly the instructions the compiled downcall
//! stubs ([`super::stub`]) emit, each a function returning its 32-bit instruction word, plus a
//! tiny assembler ([`Asm`]) with labels for forward branches.
//!
//! Encodings follow the Arm Architecture Reference Manual for A-profile (Arm ARM), chapter C4
//! "A64 Instruction Set Encoding" and the instruction pages of chapter C6: load/store register
//! (unsigned immediate, register offset, unscaled immediate), load/store pair (pre-/post-index,
//! signed offset), move wide, add/subtract (immediate, shifted register), logical (shifted
//! register), bitfield move (`ubfm`, as `lsl`/`lsr`), conditional select (`csinc`, as `cset`),
//! conditional and compare-and-branch, unconditional branch (immediate), branch to register, the floating-point move to/from a
//! general register and `fcvt`, and `hint #34` (`bti c`).
//!
//! Pure Rust with no `unsafe`: compiled and tested on every host. The tests compare every
//! encoder against words produced by the GNU cross assembler (`aarch64-linux-gnu-as`); a table
//! of those words runs everywhere (Miri included), and when the assembler is installed a
//! second test assembles the same text again and compares.
//!
//! # Invariants
//! - Register numbers are 0..=31. Number 31 means `sp` in a base-register (`Rn`) field of a
//!   load/store or in `add`/`sub` (immediate), and `xzr`/`wzr` elsewhere; each function's
//!   documentation says which. Callers never pass 18 (`x18` is the platform register); the stub
//!   tests check the emitted words for it.
//! - Immediates are range-checked with `debug_assert!`; the stub compiler only passes values
//!   in range (offsets are bounded by the stack limit and the scaled 12-bit offset fields, and
//!   larger displacements go through a register, see `super::stub`).

/// The stack pointer as a base register (`Rn` of a load/store, `add`/`sub` immediate).
pub(crate) const SP: u8 = 31;
/// The zero register (`xzr`/`wzr`) where an operand is not a base register.
pub(crate) const ZR: u8 = 31;
/// The frame pointer `x29`.
pub(crate) const FP: u8 = 29;
/// The link register `x30`.
pub(crate) const LR: u8 = 30;

/// A condition code (Arm ARM C1.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Cond {
    /// Equal (the stubs use `Ne` and `Lo` only; the others for the tests).
    #[cfg(test)]
    Eq = 0,
    /// Not equal.
    Ne = 1,
    /// Unsigned higher or same.
    #[cfg(test)]
    Hs = 2,
    /// Unsigned lower.
    Lo = 3,
}

/// The access size of a load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Width {
    /// 1 byte (`b`, `ldrb`/`strb`).
    B,
    /// 2 bytes (`h`).
    H,
    /// 4 bytes (`w` register or `s` register).
    W,
    /// 8 bytes (`x` register or `d` register).
    X,
}

impl Width {
    /// The width of an access of `bytes` bytes (1, 2, 4 or 8).
    pub(crate) fn of(bytes: u8) -> Width {
        match bytes {
            1 => Width::B,
            2 => Width::H,
            4 => Width::W,
            _ => {
                debug_assert_eq!(bytes, 8);
                Width::X
            }
        }
    }

    /// Bytes accessed.
    pub(crate) fn bytes(self) -> u32 {
        1 << self.size_field()
    }

    /// The `size` field (bits 31:30).
    fn size_field(self) -> u32 {
        match self {
            Width::B => 0,
            Width::H => 1,
            Width::W => 2,
            Width::X => 3,
        }
    }
}

/// What a load/store does with its register (the `V` bit and the `opc` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemOp {
    /// Store a general register's low bytes.
    Store,
    /// Load into a general register, zero-extending (`ldrb w`, `ldrh w`, `ldr w`, `ldr x`).
    Load,
    /// Load into an `x` register, sign-extending (`ldrsb x`, `ldrsh x`, `ldrsw x`; not with
    /// [`Width::X`]).
    LoadSigned,
    /// Store a SIMD&FP register (`str s` for [`Width::W`], `str d` for [`Width::X`]).
    StoreFp,
    /// Load a SIMD&FP register (`ldr s`, `ldr d`), zeroing the rest of the vector register.
    LoadFp,
}

impl MemOp {
    /// `V << 26 | opc << 22`.
    fn bits(self) -> u32 {
        let (v, opc) = match self {
            MemOp::Store => (0, 0),
            MemOp::Load => (0, 1),
            MemOp::LoadSigned => (0, 2),
            MemOp::StoreFp => (1, 0),
            MemOp::LoadFp => (1, 1),
        };
        v << 26 | opc << 22
    }
}

fn reg(r: u8) -> u32 {
    debug_assert!(r < 32);
    u32::from(r & 31)
}

/// `ldr/str` (unsigned immediate): `[rn, #offset]`, `offset` a multiple of the access size,
/// below 4096 × size. `rn` 31 = `sp`.
pub(crate) fn mem_imm(op: MemOp, w: Width, rt: u8, rn: u8, offset: u32) -> u32 {
    debug_assert!(offset % w.bytes() == 0 && offset / w.bytes() < 4096);
    w.size_field() << 30
        | 0x3900_0000
        | op.bits()
        | (offset / w.bytes()) << 10
        | reg(rn) << 5
        | reg(rt)
}

/// `ldr/str` (register offset): `[rn, xm]` (no shift). `rn` 31 = `sp`, `rm` 31 = `xzr`.
pub(crate) fn mem_reg(op: MemOp, w: Width, rt: u8, rn: u8, rm: u8) -> u32 {
    // option = 011 (LSL/UXTX), S = 0
    w.size_field() << 30 | 0x3820_6800 | op.bits() | reg(rm) << 16 | reg(rn) << 5 | reg(rt)
}

/// `ldur/stur` (unscaled immediate): `[rn, #offset]`, -256 ≤ `offset` ≤ 255. `rn` 31 = `sp`.
pub(crate) fn mem_unscaled(op: MemOp, w: Width, rt: u8, rn: u8, offset: i32) -> u32 {
    debug_assert!((-256..256).contains(&offset));
    w.size_field() << 30
        | 0x3800_0000
        | op.bits()
        | ((offset as u32) & 0x1ff) << 12
        | reg(rn) << 5
        | reg(rt)
}

/// The addressing form of a load/store pair of `x` registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PairMode {
    /// `[rn], #imm` (post-index: access at `rn`, then `rn += imm`).
    Post,
    /// `[rn, #imm]!` (pre-index: `rn += imm`, then access).
    Pre,
    /// `[rn, #imm]` (signed offset, `rn` unchanged).
    Offset,
}

fn pair(load: bool, mode: PairMode, rt: u8, rt2: u8, rn: u8, offset: i32) -> u32 {
    debug_assert!(offset % 8 == 0 && (-512..=504).contains(&offset));
    let base = match mode {
        PairMode::Post => 0xA880_0000,
        PairMode::Pre => 0xA980_0000,
        PairMode::Offset => 0xA900_0000,
    };
    base | (load as u32) << 22
        | (((offset / 8) as u32) & 0x7f) << 15
        | reg(rt2) << 10
        | reg(rn) << 5
        | reg(rt)
}

/// `stp xt, xt2, ...` (64-bit pair store); `offset` a multiple of 8 in -512..=504; `rn` 31 = `sp`.
pub(crate) fn stp(mode: PairMode, rt: u8, rt2: u8, rn: u8, offset: i32) -> u32 {
    pair(false, mode, rt, rt2, rn, offset)
}

/// `ldp xt, xt2, ...` (64-bit pair load); as [`stp`].
pub(crate) fn ldp(mode: PairMode, rt: u8, rt2: u8, rn: u8, offset: i32) -> u32 {
    pair(true, mode, rt, rt2, rn, offset)
}

/// `movz xd, #imm16, lsl #(16 × hw)`.
pub(crate) fn movz(rd: u8, imm16: u16, hw: u8) -> u32 {
    debug_assert!(hw < 4);
    0xD280_0000 | u32::from(hw) << 21 | u32::from(imm16) << 5 | reg(rd)
}

/// `movk xd, #imm16, lsl #(16 × hw)`.
pub(crate) fn movk(rd: u8, imm16: u16, hw: u8) -> u32 {
    debug_assert!(hw < 4);
    0xF280_0000 | u32::from(hw) << 21 | u32::from(imm16) << 5 | reg(rd)
}

/// `add xd, xn, #imm12` (`shift12`: `lsl #12`). `rd`/`rn` 31 = `sp` (`mov xd, sp` is
/// `add xd, sp, #0`).
pub(crate) fn add_imm(rd: u8, rn: u8, imm12: u32, shift12: bool) -> u32 {
    debug_assert!(imm12 < 4096);
    0x9100_0000 | (shift12 as u32) << 22 | imm12 << 10 | reg(rn) << 5 | reg(rd)
}

/// `sub xd, xn, #imm12` (`shift12`: `lsl #12`). `rd`/`rn` 31 = `sp`.
pub(crate) fn sub_imm(rd: u8, rn: u8, imm12: u32, shift12: bool) -> u32 {
    debug_assert!(imm12 < 4096);
    0xD100_0000 | (shift12 as u32) << 22 | imm12 << 10 | reg(rn) << 5 | reg(rd)
}

/// `cmp xn` (`wide`) or `cmp wn`, `#imm12` (`subs zr, rn, #imm12`). `rn` 31 = `sp`.
pub(crate) fn cmp_imm(wide: bool, rn: u8, imm12: u32) -> u32 {
    debug_assert!(imm12 < 4096);
    let base = if wide { 0xF100_001F } else { 0x7100_001F };
    base | imm12 << 10 | reg(rn) << 5
}

/// `cmp xn, xm` (`wide`) or `cmp wn, wm` (`subs zr, rn, rm`). 31 = the zero register.
pub(crate) fn cmp_reg(wide: bool, rn: u8, rm: u8) -> u32 {
    let base = if wide { 0xEB00_001F } else { 0x6B00_001F };
    base | reg(rm) << 16 | reg(rn) << 5
}

/// `b.cond` to `words` instructions away (a signed 19-bit word offset).
pub(crate) fn b_cond(cond: Cond, words: i32) -> u32 {
    debug_assert!((-(1 << 18)..(1 << 18)).contains(&words));
    0x5400_0000 | ((words as u32) & 0x7ffff) << 5 | cond as u32
}

/// `b` to `words` instructions away (a signed 26-bit word offset: ±128 MiB).
pub(crate) fn b(words: i32) -> u32 {
    debug_assert!((-(1 << 25)..(1 << 25)).contains(&words));
    0x1400_0000 | ((words as u32) & 0x3ff_ffff)
}

/// Whether `b.cond` (and `cbz`/`cbnz`) reaches `words` instructions away: ±1 MiB.
pub(crate) fn cond_reaches(words: i64) -> bool {
    (-(1 << 18)..(1 << 18)).contains(&words)
}

/// `cbz xt` (`wide`) or `cbz wt`, to `words` instructions away.
pub(crate) fn cbz(wide: bool, rt: u8, words: i32) -> u32 {
    debug_assert!((-(1 << 18)..(1 << 18)).contains(&words));
    (wide as u32) << 31 | 0x3400_0000 | ((words as u32) & 0x7ffff) << 5 | reg(rt)
}

/// `cbnz xt` (`wide`) or `cbnz wt`, to `words` instructions away (the stack probe's loop).
pub(crate) fn cbnz(wide: bool, rt: u8, words: i32) -> u32 {
    cbz(wide, rt, words) | 1 << 24
}

/// `blr xn`.
pub(crate) fn blr(rn: u8) -> u32 {
    0xD63F_0000 | reg(rn) << 5
}

/// `br xn` (a `bti c` landing pad accepts it only from `x16`/`x17`).
pub(crate) fn br(rn: u8) -> u32 {
    0xD61F_0000 | reg(rn) << 5
}

/// `ret` (to `x30`).
pub(crate) fn ret() -> u32 {
    0xD65F_0000 | reg(LR) << 5
}

/// `bti c` (`hint #34`): the landing pad of an indirect call.
pub(crate) fn bti_c() -> u32 {
    0xD503_201F | 34 << 5
}

/// `fmov xd, dn` (the bits of a double into a general register).
pub(crate) fn fmov_x_d(rd: u8, rn: u8) -> u32 {
    0x9E66_0000 | reg(rn) << 5 | reg(rd)
}

/// `fmov dd, xn` (a general register's bits into a double register, the rest zeroed).
pub(crate) fn fmov_d_x(rd: u8, rn: u8) -> u32 {
    0x9E67_0000 | reg(rn) << 5 | reg(rd)
}

/// `fcvt dd, sn` (single to double precision).
pub(crate) fn fcvt_d_s(rd: u8, rn: u8) -> u32 {
    0x1E22_C000 | reg(rn) << 5 | reg(rd)
}

/// `cset xd, cond` (`csinc xd, xzr, xzr, invert(cond)`).
pub(crate) fn cset(rd: u8, cond: Cond) -> u32 {
    0x9A9F_07E0 | (cond as u32 ^ 1) << 12 | reg(rd)
}

/// `orr xd, xn, xm, lsl #shift` (shift 0..=63). `mov xd, xm` is `orr xd, xzr, xm`.
pub(crate) fn orr_lsl(rd: u8, rn: u8, rm: u8, shift: u8) -> u32 {
    debug_assert!(shift < 64);
    0xAA00_0000 | reg(rm) << 16 | u32::from(shift) << 10 | reg(rn) << 5 | reg(rd)
}

/// `mov xd, xm` (`orr xd, xzr, xm`; neither may be `sp`).
pub(crate) fn mov(rd: u8, rm: u8) -> u32 {
    orr_lsl(rd, ZR, rm, 0)
}

/// `lsr xd, xn, #shift` (`ubfm xd, xn, #shift, #63`), shift 1..=63.
pub(crate) fn lsr(rd: u8, rn: u8, shift: u8) -> u32 {
    debug_assert!((1..64).contains(&shift));
    0xD340_FC00 | u32::from(shift) << 16 | reg(rn) << 5 | reg(rd)
}

/// `lsl xd, xn, #shift` (`ubfm xd, xn, #(64 - shift), #(63 - shift)`), shift 1..=63.
#[cfg(test)] // not used by the stubs; kept with its encoding test
pub(crate) fn lsl(rd: u8, rn: u8, shift: u8) -> u32 {
    debug_assert!((1..64).contains(&shift));
    let (immr, imms) = (u32::from(64 - shift), u32::from(63 - shift));
    0xD340_0000 | immr << 16 | imms << 10 | reg(rn) << 5 | reg(rd)
}

/// A forward-branch target of an [`Asm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label(usize);

/// A branch whose offset is patched when the assembly is finished.
#[derive(Debug, Clone, Copy)]
enum Fixup {
    /// A `b.cond` at this word index.
    Cond(usize, Cond),
    /// A `b` at this word index.
    Always(usize),
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

    /// `b.cond l`.
    pub(crate) fn b_cond(&mut self, cond: Cond, l: Label) {
        self.fixups.push((Fixup::Cond(self.words.len(), cond), l));
        self.words.push(0);
    }

    /// `b l`.
    pub(crate) fn b(&mut self, l: Label) {
        self.fixups.push((Fixup::Always(self.words.len()), l));
        self.words.push(0);
    }

    /// Whether every `b.cond` reaches its label (±1 MiB; unbound labels count as reached).
    pub(crate) fn branches_reach(&self) -> bool {
        self.fixups
            .iter()
            .all(|(f, l)| match (*f, self.labels[l.0]) {
                (Fixup::Cond(at, _), Some(to)) => cond_reaches(to as i64 - at as i64),
                _ => true,
            })
    }

    /// The instruction words with every branch patched.
    ///
    /// # Panics
    /// If a branched-to label was never bound, or a `b.cond` does not reach its label
    /// ([`Asm::branches_reach`]): bugs in the stub compiler.
    pub(crate) fn finish(mut self) -> Vec<u32> {
        for (f, l) in &self.fixups {
            let to = self.labels[l.0].expect("branch to an unbound label");
            match *f {
                Fixup::Cond(at, cond) => {
                    let words = to as i64 - at as i64;
                    assert!(cond_reaches(words), "b.cond over {words} words");
                    self.words[at] = b_cond(cond, words as i32);
                }
                Fixup::Always(at) => self.words[at] = b(to as i32 - at as i32),
            }
        }
        self.words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every encoder with the text the GNU assembler reads for it and the word it produced
    /// (`aarch64-linux-gnu-as` 2.x, `objdump -d`).
    fn table() -> Vec<(&'static str, u32)> {
        use MemOp::*;
        use Width::*;
        vec![
            ("bti c", bti_c()),
            (
                "stp x29, x30, [sp, #-16]!",
                stp(PairMode::Pre, FP, LR, SP, -16),
            ),
            (
                "ldp x29, x30, [sp], #16",
                ldp(PairMode::Post, FP, LR, SP, 16),
            ),
            (
                "stp x2, x5, [x29, #-16]",
                stp(PairMode::Offset, 2, 5, FP, -16),
            ),
            (
                "ldp x12, x13, [x29, #-16]",
                ldp(PairMode::Offset, 12, 13, FP, -16),
            ),
            (
                "stp x19, x20, [sp, #504]",
                stp(PairMode::Offset, 19, 20, SP, 504),
            ),
            (
                "ldp x0, x1, [x3, #-512]",
                ldp(PairMode::Offset, 0, 1, 3, -512),
            ),
            ("ldrb w9, [x0, #4095]", mem_imm(Load, B, 9, 0, 4095)),
            ("ldrh w1, [x11, #6]", mem_imm(Load, H, 1, 11, 6)),
            ("ldr w2, [x11, #4]", mem_imm(Load, W, 2, 11, 4)),
            ("ldr x3, [x9, #32760]", mem_imm(Load, X, 3, 9, 32760)),
            ("ldrsb x4, [x11]", mem_imm(LoadSigned, B, 4, 11, 0)),
            ("ldrsh x5, [x11, #2]", mem_imm(LoadSigned, H, 5, 11, 2)),
            ("ldrsw x6, [x0, #8]", mem_imm(LoadSigned, W, 6, 0, 8)),
            ("strb w14, [x12, #3]", mem_imm(Store, B, 14, 12, 3)),
            ("strh w14, [x12, #10]", mem_imm(Store, H, 14, 12, 10)),
            ("str w14, [sp, #4]", mem_imm(Store, W, 14, SP, 4)),
            ("str x14, [sp, #2040]", mem_imm(Store, X, 14, SP, 2040)),
            ("ldr s0, [x11]", mem_imm(LoadFp, W, 0, 11, 0)),
            ("ldr d7, [x11, #8]", mem_imm(LoadFp, X, 7, 11, 8)),
            ("str s3, [x12, #12]", mem_imm(StoreFp, W, 3, 12, 12)),
            ("str d16, [sp, #16]", mem_imm(StoreFp, X, 16, SP, 16)),
            ("ldrb w9, [x0, x15]", mem_reg(Load, B, 9, 0, 15)),
            ("ldrh w1, [x11, x15]", mem_reg(Load, H, 1, 11, 15)),
            ("ldr w2, [x11, x15]", mem_reg(Load, W, 2, 11, 15)),
            ("ldr x3, [x9, x15]", mem_reg(Load, X, 3, 9, 15)),
            ("ldrsb x4, [x11, x15]", mem_reg(LoadSigned, B, 4, 11, 15)),
            ("ldrsh x5, [x11, x15]", mem_reg(LoadSigned, H, 5, 11, 15)),
            ("ldrsw x6, [x11, x15]", mem_reg(LoadSigned, W, 6, 11, 15)),
            ("strb w14, [x12, x15]", mem_reg(Store, B, 14, 12, 15)),
            ("strh w14, [x12, x15]", mem_reg(Store, H, 14, 12, 15)),
            ("str w14, [x12, x15]", mem_reg(Store, W, 14, 12, 15)),
            ("str x14, [sp, x15]", mem_reg(Store, X, 14, SP, 15)),
            ("ldr s1, [x11, x15]", mem_reg(LoadFp, W, 1, 11, 15)),
            ("ldr d2, [x11, x15]", mem_reg(LoadFp, X, 2, 11, 15)),
            ("str s3, [x12, x15]", mem_reg(StoreFp, W, 3, 12, 15)),
            ("str d4, [x12, x15]", mem_reg(StoreFp, X, 4, 12, 15)),
            ("ldur x12, [x29, #-24]", mem_unscaled(Load, X, 12, FP, -24)),
            ("stur x1, [x29, #-8]", mem_unscaled(Store, X, 1, FP, -8)),
            ("ldur w3, [x11, #255]", mem_unscaled(Load, W, 3, 11, 255)),
            (
                "sturb w3, [x11, #-256]",
                mem_unscaled(Store, B, 3, 11, -256),
            ),
            ("movz x15, #0xffff, lsl #16", movz(15, 0xffff, 1)),
            ("movz x9, #1", movz(9, 1, 0)),
            ("movk x15, #0x1234, lsl #48", movk(15, 0x1234, 3)),
            ("movk x15, #7", movk(15, 7, 0)),
            ("add x29, sp, #0", add_imm(FP, SP, 0, false)),
            ("add sp, x29, #0", add_imm(SP, FP, 0, false)),
            ("add x15, x11, #4095", add_imm(15, 11, 4095, false)),
            ("add x15, x15, #1, lsl #12", add_imm(15, 15, 1, true)),
            ("sub sp, sp, #2080", sub_imm(SP, SP, 2080, false)),
            ("sub x1, x2, #3, lsl #12", sub_imm(1, 2, 3, true)),
            ("cmp w9, #11", cmp_imm(false, 9, 11)),
            ("cmp x9, #4095", cmp_imm(true, 9, 4095)),
            ("cmp x9, x15", cmp_reg(true, 9, 15)),
            ("cmp w1, w2", cmp_reg(false, 1, 2)),
            ("b.ne .+8", b_cond(Cond::Ne, 2)),
            ("b.eq .-4", b_cond(Cond::Eq, -1)),
            ("b.lo .+400", b_cond(Cond::Lo, 100)),
            ("b.hs .+4", b_cond(Cond::Hs, 1)),
            ("cbz x3, .+12", cbz(true, 3, 3)),
            ("cbz w3, .-8", cbz(false, 3, -2)),
            ("cbnz x7, .+16", cbnz(true, 7, 4)),
            ("cbnz w7, .+4", cbnz(false, 7, 1)),
            ("blr x16", blr(16)),
            ("blr x3", blr(3)),
            ("br x16", br(16)),
            ("ret", ret()),
            ("fmov x0, d0", fmov_x_d(0, 0)),
            ("fmov d5, x14", fmov_d_x(5, 14)),
            ("fcvt d3, s3", fcvt_d_s(3, 3)),
            ("fcvt d16, s16", fcvt_d_s(16, 16)),
            ("cset x2, ne", cset(2, Cond::Ne)),
            ("cset x14, eq", cset(14, Cond::Eq)),
            ("orr x1, x1, x14, lsl #32", orr_lsl(1, 1, 14, 32)),
            ("orr x0, x0, x14, lsl #48", orr_lsl(0, 0, 14, 48)),
            ("mov x9, x0", mov(9, 0)),
            ("mov x16, x3", mov(16, 3)),
            ("mov x8, x1", mov(8, 1)),
            ("lsr x14, x14, #16", lsr(14, 14, 16)),
            ("lsr x14, x14, #8", lsr(14, 14, 8)),
            ("lsl x1, x2, #8", lsl(1, 2, 8)),
            ("lsl x14, x14, #40", lsl(14, 14, 40)),
            // The stack probe of a frame of a page or more, and the rest of the frame.
            ("sub sp, sp, #1, lsl #12", sub_imm(SP, SP, 1, true)),
            ("str xzr, [sp]", mem_imm(Store, X, ZR, SP, 0)),
            ("sub x17, x17, #1", sub_imm(17, 17, 1, false)),
            ("cbnz x17, .-12", cbnz(true, 17, -3)),
            ("movz x17, #256", movz(17, 256, 0)),
            ("sub sp, sp, #4095", sub_imm(SP, SP, 4095, false)),
            // A stack offset near the 1 MiB limit (1,048,568) in x15, and the register-offset
            // accesses it serves.
            ("movz x15, #0xfff8", movz(15, 0xfff8, 0)),
            ("movk x15, #0xf, lsl #16", movk(15, 0xf, 1)),
            ("strb w14, [sp, x15]", mem_reg(Store, B, 14, SP, 15)),
            ("strh w14, [sp, x15]", mem_reg(Store, H, 14, SP, 15)),
            ("str d16, [sp, x15]", mem_reg(StoreFp, X, 16, SP, 15)),
            ("ldr x11, [x0, x15]", mem_reg(Load, X, 11, 0, 15)),
            // The jump over a rejection island of a values entry with very many arguments.
            ("b .+12", b(3)),
            ("b .-4", b(-1)),
        ]
    }

    /// The words `aarch64-linux-gnu-as` produced for [`table`]'s text, in the same order.
    const EXPECTED: &[u32] = &[
        0xd503245f, 0xa9bf7bfd, 0xa8c17bfd, 0xa93f17a2, 0xa97f37ac, 0xa91fd3f3, 0xa9600460,
        0x397ffc09, 0x79400d61, 0xb9400562, 0xf97ffd23, 0x39800164, 0x79800565, 0xb9800806,
        0x39000d8e, 0x7900158e, 0xb90007ee, 0xf903ffee, 0xbd400160, 0xfd400567, 0xbd000d83,
        0xfd000bf0, 0x386f6809, 0x786f6961, 0xb86f6962, 0xf86f6923, 0x38af6964, 0x78af6965,
        0xb8af6966, 0x382f698e, 0x782f698e, 0xb82f698e, 0xf82f6bee, 0xbc6f6961, 0xfc6f6962,
        0xbc2f6983, 0xfc2f6984, 0xf85e83ac, 0xf81f83a1, 0xb84ff163, 0x38100163, 0xd2bfffef,
        0xd2800029, 0xf2e2468f, 0xf28000ef, 0x910003fd, 0x910003bf, 0x913ffd6f, 0x914005ef,
        0xd12083ff, 0xd1400c41, 0x71002d3f, 0xf13ffd3f, 0xeb0f013f, 0x6b02003f, 0x54000041,
        0x54ffffe0, 0x54000c83, 0x54000022, 0xb4000063, 0x34ffffc3, 0xb5000087, 0x35000027,
        0xd63f0200, 0xd63f0060, 0xd61f0200, 0xd65f03c0, 0x9e660000, 0x9e6701c5, 0x1e22c063,
        0x1e22c210, 0x9a9f07e2, 0x9a9f17ee, 0xaa0e8021, 0xaa0ec000, 0xaa0003e9, 0xaa0303f0,
        0xaa0103e8, 0xd350fdce, 0xd348fdce, 0xd378dc41, 0xd3585dce, 0xd14007ff, 0xf90003ff,
        0xd1000631, 0xb5ffffb1, 0xd2802011, 0xd13fffff, 0xd29fff0f, 0xf2a001ef, 0x382f6bee,
        0x782f6bee, 0xfc2f6bf0, 0xf86f680b, 0x14000003, 0x17ffffff,
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

    /// Assembles [`table`]'s text with the cross assembler (when installed) and compares every
    /// word. Without the assembler the test is skipped, except in CI (`CI` set), where
    /// `.ci/run` installs it. Unix hosts only (under Wine the GNU assembler, a Linux program,
    /// cannot be started; the table test above runs there).
    #[test]
    #[cfg(unix)]
    #[cfg_attr(miri, ignore = "runs the cross assembler")]
    fn encoders_match_the_cross_assembler_when_installed() {
        use std::process::Command;
        let (as_, objcopy) = ("aarch64-linux-gnu-as", "aarch64-linux-gnu-objcopy");
        if Command::new(as_).arg("--version").output().is_err() {
            assert!(
                std::env::var_os("CI").is_none(),
                "{as_} is missing in CI (.ci/run installs gcc-aarch64-linux-gnu)"
            );
            eprintln!("skipped: {as_} is not installed");
            return;
        }
        let dir = std::env::temp_dir().join(format!("gatun-a64-encode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (src, obj, bin) = (dir.join("t.s"), dir.join("t.o"), dir.join("t.bin"));
        let text: String = table().iter().map(|(t, _)| format!("{t}\n")).collect();
        std::fs::write(&src, text).unwrap();
        let ok = Command::new(as_)
            .arg("-o")
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
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let t = table();
        assert_eq!(words.len(), t.len());
        for ((text, got), want) in t.iter().zip(&words) {
            assert_eq!(
                *got, *want,
                "{text}: encoded {got:#010x}, {as_} gives {want:#010x}"
            );
        }
    }

    #[test]
    fn labels_patch_forward_and_backward_branches() {
        let mut a = Asm::default();
        let back = a.label();
        a.bind(back);
        a.emit(bti_c());
        let fwd = a.label();
        a.b_cond(Cond::Ne, fwd);
        a.b_cond(Cond::Eq, back);
        a.emit(ret());
        a.bind(fwd);
        a.emit(ret());
        let w = a.finish();
        assert_eq!(w[1], b_cond(Cond::Ne, 3));
        assert_eq!(w[2], b_cond(Cond::Eq, -2));
    }
}
