//! A small Power ISA (64-bit, little-endian) instruction encoder: exactly the instructions the
//! compiled downcall stubs ([`super::stub`]) emit, each a function returning its 32-bit
//! instruction word, plus a tiny assembler ([`Asm`]) with labels for forward and backward
//! branches.
//!
//! Encodings follow the Power ISA Version 3.0B, Book I: chapter 1.6 "Instruction Formats"
//! (the I, B, D, DS, X, XO, XL, XFX, XX1 and MD forms), chapter 2.4 "Branch Instructions"
//! (`b`, `bc`, `bcctr`, `bclr`), chapter 3.3 "Fixed-Point Facility Instructions" (loads and
//! stores of bytes, halfwords, words and doublewords, `addi`, `addis`, `ori`, `xori`,
//! `cmpldi`, `cmpld`, `or`, `extsb`/`extsh`/`extsw`, `cntlzd`, `rldicl`, `rldicr`,
//! `mtspr`/`mfspr` of LR and CTR), chapter 4.6 "Floating-Point Load and Store Instructions"
//! (`lfs`, `lfd`, `stfs`, `stfd`) and chapter 7.6 "VSX Instructions" (`mfvsrd`, `mtvsrd`:
//! moves between a GPR and a floating-point register, Power ISA 2.07).
//!
//! Pure Rust with no `unsafe`: compiled and tested on every host. The tests compare every
//! encoder against words produced by the GNU cross assembler (`powerpc64le-linux-gnu-as`): a
//! table of those words runs everywhere (Miri included), and when the assembler is installed a
//! second test assembles the same text again and compares.
//!
//! # Invariants
//! - Registers are typed: [`R`] (`r0`..`r31`) and [`F`] (`f0`..`f31`), so a GPR can never
//!   land in a floating-point field or the reverse. The stubs never name r13 (the thread
//!   pointer) and name r2 only to save and restore it around the call (the stub tests check
//!   the emitted words).
//! - Immediates are range-checked with `debug_assert!`; the stub compiler only passes values in
//!   range: D-form displacements and `addi`/`addis` immediates in −32768..=32767, DS-form
//!   displacements also multiples of 4, unsigned immediates in 0..=65535, shift amounts in
//!   0..64, conditional branch offsets within ±32 KiB (checked by [`Asm::branches_reach`]),
//!   unconditional ones within ±32 MiB.

/// A general-purpose register `r0`..`r31` (ELFv2 ABI 2.2.1 "Register Roles").
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) struct R(u8);

/// A floating-point register `f0`..`f31` (ELFv2 ABI 2.2.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) struct F(u8);

impl R {
    /// `r0`: as the base of a D-form access it means the value 0, so it is never a base.
    pub(crate) const R0: R = R(0);
    /// `r1`, the stack pointer.
    pub(crate) const SP: R = R(1);
    /// `r2`, the TOC pointer: saved and restored around the call only.
    pub(crate) const TOC: R = R(2);

    /// `rn`, n in 0..=31.
    pub(crate) const fn new(n: u8) -> R {
        debug_assert!(n < 32);
        R(n & 31)
    }

    /// The argument register `r(3 + n)`, n in 0..=7.
    pub(crate) const fn arg(n: u8) -> R {
        debug_assert!(n < 8);
        R(3 + (n & 7))
    }
}

impl F {
    /// `f0`, a volatile scratch register that carries no argument.
    pub(crate) const F0: F = F(0);

    /// The argument or return register `f(1 + n)`, n in 0..=12.
    pub(crate) const fn arg(n: u8) -> F {
        debug_assert!(n < 13);
        F(1 + n)
    }
}

fn d_form(op: u32, rt: u8, ra: u8, d: i32) -> u32 {
    debug_assert!((-32768..=32767).contains(&d), "D-form displacement {d}");
    op << 26 | u32::from(rt) << 21 | u32::from(ra) << 16 | (d as u32 & 0xFFFF)
}

fn ds_form(op: u32, rt: u8, ra: u8, ds: i32, xo: u32) -> u32 {
    debug_assert!(
        (-32768..=32767).contains(&ds) && ds % 4 == 0,
        "DS-form {ds}"
    );
    op << 26 | u32::from(rt) << 21 | u32::from(ra) << 16 | (ds as u32 & 0xFFFC) | xo
}

fn x_form(rs: u8, ra: u8, rb: u8, xo: u32) -> u32 {
    31 << 26 | u32::from(rs) << 21 | u32::from(ra) << 16 | u32::from(rb) << 11 | xo << 1
}

/// A load of a GPR: the width and whether it sign-extends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Load {
    /// `lbz`: a byte, zero-extended.
    Bz,
    /// `lhz`: a halfword, zero-extended.
    Hz,
    /// `lha`: a halfword, sign-extended.
    Ha,
    /// `lwz`: a word, zero-extended.
    Wz,
    /// `lwa`: a word, sign-extended (DS-form).
    Wa,
    /// `ld`: a doubleword (DS-form).
    D,
}

impl Load {
    /// The zero-extending load of 1, 2, 4 or 8 bytes.
    pub(crate) fn zero(size: u8) -> Load {
        match size {
            1 => Load::Bz,
            2 => Load::Hz,
            4 => Load::Wz,
            _ => Load::D,
        }
    }

    /// Whether the displacement must be a multiple of 4 (DS-form).
    pub(crate) fn is_ds(self) -> bool {
        matches!(self, Load::Wa | Load::D)
    }
}

/// A store of a GPR's low 1, 2, 4 or 8 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Store {
    /// `stb`.
    B,
    /// `sth`.
    H,
    /// `stw`.
    W,
    /// `std` (DS-form).
    D,
}

impl Store {
    /// The store of 1, 2, 4 or 8 bytes.
    pub(crate) fn of(size: u8) -> Store {
        match size {
            1 => Store::B,
            2 => Store::H,
            4 => Store::W,
            _ => Store::D,
        }
    }
}

/// `<load> rt, d(ra)`.
pub(crate) fn load(op: Load, rt: R, ra: R, d: i32) -> u32 {
    match op {
        Load::Bz => d_form(34, rt.0, ra.0, d),
        Load::Hz => d_form(40, rt.0, ra.0, d),
        Load::Ha => d_form(42, rt.0, ra.0, d),
        Load::Wz => d_form(32, rt.0, ra.0, d),
        Load::Wa => ds_form(58, rt.0, ra.0, d, 2),
        Load::D => ds_form(58, rt.0, ra.0, d, 0),
    }
}

/// `<store> rs, d(ra)`.
pub(crate) fn store(op: Store, rs: R, ra: R, d: i32) -> u32 {
    match op {
        Store::B => d_form(38, rs.0, ra.0, d),
        Store::H => d_form(44, rs.0, ra.0, d),
        Store::W => d_form(36, rs.0, ra.0, d),
        Store::D => ds_form(62, rs.0, ra.0, d, 0),
    }
}

/// `ldu rt, d(ra)`: loads and sets `ra` to the address.
pub(crate) fn ldu(rt: R, ra: R, d: i32) -> u32 {
    ds_form(58, rt.0, ra.0, d, 1)
}

/// `stdu rs, d(ra)`: stores and sets `ra` to the address.
pub(crate) fn stdu(rs: R, ra: R, d: i32) -> u32 {
    ds_form(62, rs.0, ra.0, d, 1)
}

/// `lfs frt, d(ra)`: a single, converted to double format.
pub(crate) fn lfs(frt: F, ra: R, d: i32) -> u32 {
    d_form(48, frt.0, ra.0, d)
}

/// `lfd frt, d(ra)`.
pub(crate) fn lfd(frt: F, ra: R, d: i32) -> u32 {
    d_form(50, frt.0, ra.0, d)
}

/// `stfs frs, d(ra)`: the register converted to a single.
pub(crate) fn stfs(frs: F, ra: R, d: i32) -> u32 {
    d_form(52, frs.0, ra.0, d)
}

/// `stfd frs, d(ra)`.
pub(crate) fn stfd(frs: F, ra: R, d: i32) -> u32 {
    d_form(54, frs.0, ra.0, d)
}

/// `addi rt, ra, si` (`li rt, si` with `ra` = r0).
pub(crate) fn addi(rt: R, ra: R, si: i32) -> u32 {
    d_form(14, rt.0, ra.0, si)
}

/// `addis rt, ra, si` (`lis rt, si` with `ra` = r0).
pub(crate) fn addis(rt: R, ra: R, si: i32) -> u32 {
    d_form(15, rt.0, ra.0, si)
}

/// `ori ra, rs, ui`.
pub(crate) fn ori(ra: R, rs: R, ui: u32) -> u32 {
    debug_assert!(ui <= 0xFFFF);
    24 << 26 | u32::from(rs.0) << 21 | u32::from(ra.0) << 16 | ui
}

/// `xori ra, rs, ui`.
pub(crate) fn xori(ra: R, rs: R, ui: u32) -> u32 {
    debug_assert!(ui <= 0xFFFF);
    26 << 26 | u32::from(rs.0) << 21 | u32::from(ra.0) << 16 | ui
}

/// `cmpldi cr0, ra, ui`: an unsigned 64-bit compare with an immediate.
pub(crate) fn cmpldi(ra: R, ui: u32) -> u32 {
    debug_assert!(ui <= 0xFFFF);
    10 << 26 | 1 << 21 | u32::from(ra.0) << 16 | ui
}

/// `cmpld cr0, ra, rb`.
pub(crate) fn cmpld(ra: R, rb: R) -> u32 {
    31 << 26 | 1 << 21 | u32::from(ra.0) << 16 | u32::from(rb.0) << 11 | 32 << 1
}

/// `or ra, rs, rb` (`mr ra, rs` with `rb` = `rs`).
pub(crate) fn or(ra: R, rs: R, rb: R) -> u32 {
    x_form(rs.0, ra.0, rb.0, 444)
}

/// `mr ra, rs`.
pub(crate) fn mr(ra: R, rs: R) -> u32 {
    or(ra, rs, rs)
}

/// `extsb ra, rs`.
pub(crate) fn extsb(ra: R, rs: R) -> u32 {
    x_form(rs.0, ra.0, 0, 954)
}

/// `cntlzd ra, rs`.
pub(crate) fn cntlzd(ra: R, rs: R) -> u32 {
    x_form(rs.0, ra.0, 0, 58)
}

fn md_form(ra: R, rs: R, sh: u32, mbe: u32, xo: u32) -> u32 {
    debug_assert!(sh < 64 && mbe < 64);
    30 << 26
        | u32::from(rs.0) << 21
        | u32::from(ra.0) << 16
        | (sh & 31) << 11
        | ((mbe & 31) << 1 | mbe >> 5) << 5
        | xo << 2
        | (sh >> 5) << 1
}

/// `sldi ra, rs, n` (`rldicr ra, rs, n, 63 - n`), n in 1..64.
pub(crate) fn sldi(ra: R, rs: R, n: u32) -> u32 {
    md_form(ra, rs, n, 63 - n, 1)
}

/// `srdi ra, rs, n` (`rldicl ra, rs, 64 - n, n`), n in 1..64.
pub(crate) fn srdi(ra: R, rs: R, n: u32) -> u32 {
    md_form(ra, rs, 64 - n, n, 0)
}

/// `mfvsrd ra, frs`: a floating-point register's 64 bits into a GPR.
pub(crate) fn mfvsrd(ra: R, frs: F) -> u32 {
    x_form(frs.0, ra.0, 0, 51)
}

/// `mtvsrd frt, ra`: a GPR's 64 bits into a floating-point register.
pub(crate) fn mtvsrd(frt: F, ra: R) -> u32 {
    x_form(frt.0, ra.0, 0, 179)
}

/// `mflr rt`.
pub(crate) fn mflr(rt: R) -> u32 {
    31 << 26 | u32::from(rt.0) << 21 | 8 << 16 | 339 << 1
}

/// `mtlr rs`.
pub(crate) fn mtlr(rs: R) -> u32 {
    31 << 26 | u32::from(rs.0) << 21 | 8 << 16 | 467 << 1
}

/// `mtctr rs`.
pub(crate) fn mtctr(rs: R) -> u32 {
    31 << 26 | u32::from(rs.0) << 21 | 9 << 16 | 467 << 1
}

/// `bctrl`: a call through CTR.
pub(crate) const BCTRL: u32 = 0x4E80_0421;
/// `blr`: a return.
pub(crate) const BLR: u32 = 0x4E80_0020;
/// `trap` (`tw 31, 0, 0`): the padding between the entries (never executed).
pub(crate) const TRAP: u32 = 0x7FE0_0008;

/// `b` to `offset` bytes from the instruction.
pub(crate) fn b(offset: i32) -> u32 {
    debug_assert!(offset % 4 == 0 && (-(1 << 25)..(1 << 25)).contains(&offset));
    18 << 26 | (offset as u32 & 0x03FF_FFFC)
}

/// A branch condition on CR0 (after a compare), or the CTR decrement of `bdnz`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Cond {
    /// `bne`.
    Ne,
    /// `blt` (unsigned after `cmpld`/`cmpldi`).
    Lt,
    /// `bdnz`: decrement CTR, branch if it is not zero.
    Dnz,
}

/// `bc` with `cond` to `offset` bytes from the instruction.
pub(crate) fn bc(cond: Cond, offset: i32) -> u32 {
    debug_assert!(offset % 4 == 0 && (-32768..32768).contains(&offset));
    let (bo, bi) = match cond {
        Cond::Ne => (4, 2),
        Cond::Lt => (12, 0),
        Cond::Dnz => (16, 0),
    };
    16 << 26 | bo << 21 | bi << 16 | (offset as u32 & 0xFFFC)
}

/// `(ha, lo)` of a displacement: `ha << 16` plus the sign-extended `lo` is `disp` (the
/// `addis` + D-form pair).
pub(crate) fn split_ha_lo(disp: i64) -> (i32, i32) {
    let lo = ((disp & 0xFFFF) ^ 0x8000) - 0x8000;
    (((disp - lo) >> 16) as i32, lo as i32)
}

/// The words loading `value` (below 2^31) into `rt`: `li`, or `lis` and `ori`.
pub(crate) fn li32(rt: R, value: u32) -> Vec<u32> {
    debug_assert!(value < 1 << 31);
    if value < 0x8000 {
        vec![addi(rt, R::R0, value as i32)]
    } else {
        let mut w = vec![addis(rt, R::R0, (value >> 16) as i32)];
        if value & 0xFFFF != 0 {
            w.push(ori(rt, rt, value & 0xFFFF));
        }
        w
    }
}

/// A branch target, bound to a word index by [`Asm::bind`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Label(usize);

/// Instruction words with labels: `b` and `bc` to a label are emitted with a zero offset and
/// patched by [`Asm::finish`].
#[derive(Default, Debug)]
pub(crate) struct Asm {
    words: Vec<u32>,
    labels: Vec<Option<usize>>,
    /// `(word index, label, conditional)`.
    fixups: Vec<(usize, Label, bool)>,
}

impl Asm {
    /// The number of words emitted.
    pub(crate) fn len(&self) -> usize {
        self.words.len()
    }

    /// Appends one word.
    pub(crate) fn emit(&mut self, word: u32) {
        self.words.push(word);
    }

    /// Appends words.
    pub(crate) fn emit_all(&mut self, words: impl IntoIterator<Item = u32>) {
        self.words.extend(words);
    }

    /// A new unbound label.
    pub(crate) fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `l` to the next word.
    pub(crate) fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.words.len());
    }

    /// `bc cond` to `l`.
    pub(crate) fn branch(&mut self, cond: Cond, l: Label) {
        self.fixups.push((self.words.len(), l, true));
        self.words.push(bc(cond, 0));
    }

    /// `b` to `l`.
    pub(crate) fn jump(&mut self, l: Label) {
        self.fixups.push((self.words.len(), l, false));
        self.words.push(b(0));
    }

    /// Whether every conditional branch reaches its label (±32 KiB) and every label is bound.
    pub(crate) fn branches_reach(&self) -> bool {
        self.fixups.iter().all(|&(at, l, cond)| {
            self.labels[l.0].is_some_and(|to| {
                let offset = 4 * (to as i64 - at as i64);
                !cond || (-32768..32768).contains(&offset)
            })
        })
    }

    /// The words with every branch patched.
    ///
    /// # Panics
    /// If a label is unbound or a branch does not reach ([`Asm::branches_reach`] first).
    pub(crate) fn finish(mut self) -> Vec<u32> {
        for &(at, l, _) in &self.fixups {
            let to = self.labels[l.0].expect("every label is bound");
            let offset = 4 * (to as i64 - at as i64);
            let word = self.words[at];
            self.words[at] = if word >> 26 == 16 {
                assert!((-32768..32768).contains(&offset), "branch out of reach");
                word | (offset as u32 & 0xFFFC)
            } else {
                word | (offset as u32 & 0x03FF_FFFC)
            };
        }
        self.words
    }
}

#[cfg(test)]
mod tests;
