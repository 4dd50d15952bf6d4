//! The s390x plans (`gatun::abi::s390x`) proved against the compilers' code generation (no
//! s390x code runs).
//!
//! For 1,200 random signatures (fixed seed) this test writes one C file holding, per signature,
//! a callee that stores every parameter to its own global (where the callee finds each byte),
//! a caller that passes a global per argument to an external function (where the caller puts
//! each byte) and a function returning a global (the return side); the C text and the neutral
//! random types are shared with the other oracles (`tests/common/c_oracle.rs`). It compiles the
//! file with `s390x-linux-gnu-gcc -O1 -S` (the ground truth) and
//! `clang --target=s390x-linux-gnu -O1 -S`, then reads the assembly with a small symbolic
//! interpreter: each register starts as "byte j of argument register rN/fN" (bytes in
//! big-endian order, as `stg` stores them), each incoming stack byte as "stack byte o" from the
//! entry `%r15`, each global byte as "byte b of global g"; loads, stores, register moves,
//! `mvc`, `lmg`/`stmg`, `risbg`, shifts, `ldeb` and the extending loads (`lgf` vs `llgf`,
//! `lgh`/`llgh`, `lgb`/`llgc`, the high-word `lbh`/`lfh`/`stfh`) carry those symbols along,
//! with "sign of byte s" and "zero" for the bytes they fill. At the call (or the callee's
//! stores, or its `br %r14`) every byte the C source passes must be exactly where the plan
//! says: right-justified in a GPR or stack slot (a stack slot at `160 + offset` from `%r15`),
//! left-justified in an FPR; and the other bytes of an integer scalar's register or slot must be
//! what its conversion writes (sign- or zero-extension by type, `unsigned int` zero-extended),
//! in the caller's arguments and in a scalar result in `r2`. A variadic `float` must be the
//! `double` made by `ldeb`.
//!
//! Needs `s390x-linux-gnu-gcc` and `clang` (Debian: `gcc-s390x-linux-gnu`, `clang`); the test
//! reports and skips a compiler that is missing (under `CI` it fails instead).
//!
//! The test counts how often each rule below is exercised, by the quoted label, and fails when
//! one is exercised fewer than 5 times; and it checks that the oracle is not blind: plans that
//! pass one-float structs as integers, plans that sign-extend `unsigned int`, and plans read
//! as left-justified in stack slots must fail here.
//!
//! gcc and clang agree on every signature of the mixture: none is skipped for either.
//!
//! Not checked, because neither compiler promises it: the bytes of a register or slot outside a
//! `float`, a struct's image or any FPR value (the callee reads only the value's bytes).

//! # s390x: rules and the labels that count them
//!
//! Rules as in the s390x ELF ABI Supplement ("Parameter Passing", "Return Values") and the
//! module docs of `gatun::abi::s390x`.
//!
//! | rule | labels |
//! |---|---|
//! | integer scalars in `r2..r6`, then 8-byte stack slots | "integer in r6", "8-byte integer in a stack slot" |
//! | narrow integers extended to 64 bits by type (`unsigned int` zero-extended), in registers and slots | "narrow signed sign-extended in a GPR", "narrow unsigned zero-extended in a GPR", "unsigned int zero-extended in a GPR", "narrow integer extended in a stack slot" |
//! | `float`/`double` in `f0, f2, f4, f6`, then stack slots (a `float` right-justified) | "float in an FPR", "double in an FPR", "float right-justified in a stack slot", "double in a stack slot" |
//! | structs and unions of 1, 2, 4, 8 bytes as their image in a GPR or slot, whatever their members | "1-byte struct in a GPR", "2-byte struct in a GPR", "4-byte struct in a GPR", "8-byte struct in a GPR", "small struct right-justified in a stack slot", "union of 1/2/4/8 bytes as an integer", "struct with floats of 1/2/4/8 bytes as an integer" |
//! | one-float structs (through nested one-member structs) in an FPR or slot, as their whole image | "one-float struct in an FPR", "one-double struct in an FPR", "8-byte one-float struct (float + padding) in an FPR", "one-float struct in a stack slot", "nested one-float struct in an FPR or slot" |
//! | arrays, unions and zero-size members end the one-float walk | "near miss of a one-float struct (array, union, zero-size member) as an integer" |
//! | other sizes by reference to a caller copy | "3/5/6/7-byte struct by reference", "16-byte one-float struct by reference", "by reference, pointer in a GPR", "by reference, pointer in a stack slot" |
//! | variadic arguments by the same rules, a `float` promoted | "variadic float promoted, in an FPR", "variadic float promoted, on the stack", "variadic double in an FPR", "variadic one-float struct, not promoted", "variadic small struct" |
//! | results: `r2` (extended), `f0`, every struct and union in memory at `r2` | "result narrow integer extended in r2", "result float in f0", "result one-float struct in memory (r2)", "result 1/2/4/8-byte struct in memory (r2)", "result other struct in memory (r2)" |
// Classification is pure data, so this runs in the native x86-64 suite only: under qemu or
// Wine it would check the same plans again, starting the host's compilers from an emulated
// process (and under Wine it cannot start them at all).
#![cfg(all(unix, target_arch = "x86_64"))]

#[path = "common/c_oracle.rs"]
mod c_oracle;

use std::collections::HashMap;

use c_oracle::{
    compile, functions, leaf_mask, render, scalar, sig_text, CType, Field, Functions, Insn, Report,
    Rng, Sig, Types,
};

use gatun::abi::s390x::{classify, plan, ArgClass, STACK_ARGS_OFFSET};
use gatun::abi::{CallPlan, Conversion, Location, Register, ReturnPlan};
use gatun::layout::{MemoryLayout, ScalarKind};
use gatun::linker::FunctionDescriptor;

// ---------------------------------------------------------------------------------------------
// The s390x mixture of random C types (the neutral parts are in `common/c_oracle.rs`).

const FLOATS: [ScalarKind; 2] = [ScalarKind::F32, ScalarKind::F64];

/// Integer kinds, the narrow ones (whose extension the ABI decides) weighted.
const NARROW_HEAVY: [ScalarKind; 13] = [
    ScalarKind::U32,
    ScalarKind::U32,
    ScalarKind::U16,
    ScalarKind::I16,
    ScalarKind::Bool,
    ScalarKind::U8,
    ScalarKind::I8,
    ScalarKind::I16,
    ScalarKind::I32,
    ScalarKind::I64,
    ScalarKind::U64,
    ScalarKind::Pointer,
    ScalarKind::I32,
];

/// Sizes of structs passed by reference, the near misses of 1, 2, 4, 8 weighted.
const OTHER_SIZES: [usize; 12] = [3, 5, 6, 7, 12, 16, 3, 6, 12, 9, 24, 40];

impl Types {
    /// A struct of exactly `n` bytes whose alignment is at most `cap` (a power of two dividing
    /// `n`): members of natural alignment, arrays of narrow ones, nested structs, and
    /// (`floats`) `float`/`double` members.
    fn exact(&mut self, rng: &mut Rng, n: usize, cap: usize, floats: bool, depth: usize) -> CType {
        let mut fields = Vec::new();
        let mut off = 0;
        while off < n {
            let rem = n - off;
            if depth < 2 && rem > 1 && rng.chance(15) {
                let m = 1 + rng.below(rem);
                let a = (1usize << m.trailing_zeros()).min(cap);
                if off % a == 0 && m % a == 0 {
                    let inner = self.exact(rng, m, a, floats, depth + 1);
                    fields.push(Field {
                        ty: inner,
                        array: None,
                    });
                    off += m;
                    continue;
                }
            }
            let fits = |k: ScalarKind| {
                let s = k.byte_size();
                s <= rem && s <= cap && off % s == 0
            };
            let k = loop {
                let k = if floats && rng.chance(25) {
                    FLOATS[rng.below(2)]
                } else {
                    NARROW_HEAVY[rng.below(NARROW_HEAVY.len())]
                };
                if fits(k) {
                    break k;
                }
                if !fits(ScalarKind::U16) && rng.chance(50) {
                    break [ScalarKind::U8, ScalarKind::I8, ScalarKind::Bool][rng.below(3)];
                }
            };
            let s = k.byte_size();
            let array =
                (s <= 2 && rem >= 2 * s && rng.chance(30)).then(|| 2 + rng.below(rem / s - 1));
            off += s * array.unwrap_or(1);
            fields.push(Field {
                ty: scalar(k),
                array,
            });
        }
        self.record(fields, false, false)
    }

    /// A struct of exactly `n` bytes of any alignment that fits it.
    fn sized(&mut self, rng: &mut Rng, n: usize, floats: bool) -> CType {
        let cap = (1usize << n.trailing_zeros()).min(8);
        self.exact(rng, n, cap, floats, 0)
    }

    /// A union of exactly `n` bytes: a struct of `n` bytes beside a scalar that fits.
    fn sized_union(&mut self, rng: &mut Rng, n: usize) -> CType {
        let floats = rng.chance(40);
        let big = self.sized(rng, n, floats);
        let cap = big.layout.byte_alignment();
        let mut fields = vec![Field {
            ty: big,
            array: None,
        }];
        let k = [
            ScalarKind::U8,
            ScalarKind::I16,
            ScalarKind::F32,
            ScalarKind::F64,
        ][rng.below(4)];
        if k.byte_size() <= cap {
            fields.push(Field {
                ty: scalar(k),
                array: None,
            });
        }
        if rng.chance(50) {
            fields.reverse();
        }
        self.record(fields, true, false)
    }

    /// A struct whose only member is (through 0 to 2 more one-member structs) a `float` or
    /// `double`; sometimes an 8-byte one: a `float` in a struct aligned to 8.
    fn one_float(&mut self, rng: &mut Rng) -> CType {
        let k = FLOATS[rng.below(2)];
        let mut t = scalar(k);
        let levels = 1 + rng.below(3);
        let padded_at = (k == ScalarKind::F32 && rng.chance(25)).then(|| rng.below(levels));
        for level in 0..levels {
            let align = if padded_at == Some(level) { 8 } else { 1 };
            t = self.record_aligned(vec![Field { ty: t, array: None }], false, align);
        }
        t
    }

    /// A struct or union that looks like a one-float struct but is not one in C.
    fn near_miss(&mut self, rng: &mut Rng) -> CType {
        let k = FLOATS[rng.below(2)];
        let f = |k| Field {
            ty: scalar(k),
            array: None,
        };
        match rng.below(7) {
            // An array of one float.
            0 => self.record(
                vec![Field {
                    ty: scalar(k),
                    array: Some(1),
                }],
                false,
                false,
            ),
            // A float beside an empty struct or a zero-length array.
            1 | 2 => {
                let z = self.zero_size_member(rng, k);
                let mut fields = vec![f(k), z];
                if rng.chance(50) {
                    fields.reverse();
                }
                self.record(fields, false, false)
            }
            // A union of one float, alone or in a struct.
            3 => {
                let u = self.record(vec![f(k)], true, false);
                if rng.chance(50) {
                    u
                } else {
                    self.record(vec![Field { ty: u, array: None }], false, false)
                }
            }
            // Two floats in 8 bytes, or a float and an int.
            4 => {
                let other = if rng.chance(50) {
                    ScalarKind::F32
                } else {
                    ScalarKind::I32
                };
                self.record(vec![f(ScalarKind::F32), f(other)], false, false)
            }
            // A one-float struct of 16 bytes (aligned to 16): by reference.
            5 => {
                let inner = self.one_float(rng);
                self.record(
                    vec![Field {
                        ty: inner,
                        array: None,
                    }],
                    false,
                    true,
                )
            }
            // An array of one one-float struct.
            _ => {
                let inner = self.one_float(rng);
                self.record(
                    vec![Field {
                        ty: inner,
                        array: Some(1),
                    }],
                    false,
                    false,
                )
            }
        }
    }

    /// Any argument or result type.
    fn any_s390(&mut self, rng: &mut Rng) -> CType {
        match rng.below(100) {
            0..=24 => {
                if rng.chance(60) {
                    scalar(NARROW_HEAVY[rng.below(NARROW_HEAVY.len())])
                } else {
                    scalar(ScalarKind::ALL[rng.below(12)])
                }
            }
            25..=44 => {
                let n = [1, 2, 4, 8][rng.below(4)];
                let f = rng.chance(40);
                self.sized(rng, n, f)
            }
            45..=59 => {
                let n = OTHER_SIZES[rng.below(OTHER_SIZES.len())];
                let f = rng.chance(40);
                self.sized(rng, n, f)
            }
            60..=74 => self.one_float(rng),
            75..=84 => self.near_miss(rng),
            85..=94 => {
                let n = if rng.chance(60) {
                    [1, 2, 4, 8][rng.below(4)]
                } else {
                    OTHER_SIZES[rng.below(OTHER_SIZES.len())]
                };
                self.sized_union(rng, n)
            }
            _ => {
                let t = 1 + rng.below(20);
                let f = rng.chance(40);
                self.mixed(rng, t, f)
            }
        }
    }
}

fn generate(count: usize, seed: u64) -> (Vec<Sig>, String) {
    let mut rng = Rng(seed);
    let mut types = Types {
        defs: String::new(),
        next: 0,
        zero_arrays: true,
    };
    let mut sigs = Vec::new();
    while sigs.len() < count {
        let mut args: Vec<CType> = Vec::new();
        match rng.below(100) {
            // FPR exhaustion: 3 to 6 floating-point scalars first.
            0..=14 => {
                for _ in 0..3 + rng.below(4) {
                    args.push(scalar(FLOATS[rng.below(2)]));
                }
            }
            // GPR exhaustion: 4 to 7 integers first.
            15..=29 => {
                for _ in 0..4 + rng.below(4) {
                    args.push(scalar(ScalarKind::I64));
                }
            }
            _ => {}
        }
        let n = if rng.chance(30) {
            4 + rng.below(8)
        } else {
            rng.below(7)
        };
        for _ in 0..n {
            args.push(types.any_s390(&mut rng));
        }
        if rng.chance(12) {
            // Narrow integers and floats past the registers.
            for _ in 0..5 {
                args.insert(0, scalar(ScalarKind::I64));
            }
            for _ in 0..4 {
                args.insert(0, scalar(ScalarKind::F64));
            }
            for _ in 0..(2 + rng.below(6)) {
                let t = if rng.chance(25) {
                    types.one_float(&mut rng)
                } else if rng.chance(25) {
                    scalar(FLOATS[rng.below(2)])
                } else {
                    scalar(NARROW_HEAVY[rng.below(NARROW_HEAVY.len())])
                };
                args.push(t);
            }
        }
        if args.is_empty() {
            args.push(scalar(NARROW_HEAVY[rng.below(NARROW_HEAVY.len())]));
        }
        let first_variadic = rng.chance(25).then(|| 1 + rng.below(args.len()));
        if first_variadic.is_some() {
            // Variadic floats (promoted by C), doubles, one-float and small structs.
            for _ in 0..1 + rng.below(4) {
                let extra = match rng.below(5) {
                    0 | 1 => scalar(ScalarKind::F32),
                    2 => scalar(ScalarKind::F64),
                    3 => types.one_float(&mut rng),
                    _ => {
                        let n = [1, 2, 4, 8, 3, 12][rng.below(6)];
                        types.sized(&mut rng, n, true)
                    }
                };
                args.push(extra);
            }
        }
        let ret = match rng.below(10) {
            0..=1 => None,
            2..=5 => Some(types.any_s390(&mut rng)),
            _ if rng.chance(70) => Some(scalar(NARROW_HEAVY[rng.below(NARROW_HEAVY.len())])),
            _ => Some(scalar(FLOATS[rng.below(2)])),
        };
        sigs.push(Sig {
            ret,
            args,
            first_variadic,
        });
    }
    let src = render(&types.defs, &sigs);
    (sigs, src)
}

// ---------------------------------------------------------------------------------------------
// A symbolic interpreter of the s390x assembly the compilers emit for these small functions.
//
// Registers and memory hold symbolic bytes. A register's 8 bytes are indexed in big-endian
// order, as `stg` stores them (byte 0 the most significant): a 32-bit load writes bytes 4..8,
// `le` writes bytes 0..4 of an FPR.

/// What one byte holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sym {
    Unknown,
    Zero,
    /// The sign fill of the byte inside (all ones or all zeros by its top bit).
    Sign(Box<Sym>),
    /// Byte `j` of argument register `r(2 + n)` at entry.
    X(u8, u8),
    /// Byte `j` of argument register `f(2n)` at entry.
    F(u8, u8),
    /// Byte at this offset from the entry stack pointer (incoming stack arguments at 160 on).
    Stack(i64),
    /// Byte at this offset behind the pointer passed in `r(2 + n)` or in the incoming stack
    /// slot at this offset from the entry stack pointer.
    Ref(Ptr, i64),
    /// Byte `b` of global `g`.
    Global(String, i64),
    /// Byte `j` of the address `sp_entry + off` (a pointer to a local copy).
    SpAddr(i64, u8),
    /// Byte `j` of the `double` made by `ldeb` from the `float` whose first byte is inside.
    Widened(Box<Sym>, u8),
}

/// The fill byte of a sign extension from `top` (the most significant byte kept).
fn sign_of(top: &Sym) -> Sym {
    match top {
        Sym::Zero => Sym::Zero,
        Sym::Sign(_) => top.clone(),
        Sym::Unknown => Sym::Unknown,
        other => Sym::Sign(Box::new(other.clone())),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Ptr {
    X(u8),
    Stack(i64),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Base {
    /// Offsets from the stack pointer at entry.
    Sp,
    Global(String),
    Ref(Ptr),
}

#[derive(Debug, Clone)]
enum Val {
    Bytes(Vec<Sym>),
    Addr(Base, i64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Reg {
    R(u8),
    F(u8),
}

fn parse_reg(s: &str) -> Option<Reg> {
    let s = s.trim();
    if let Some(n) = s.strip_prefix("%r").and_then(|n| n.parse::<u8>().ok()) {
        return (n < 16).then_some(Reg::R(n));
    }
    s.strip_prefix("%f")
        .and_then(|n| n.parse::<u8>().ok())
        .filter(|&n| n < 16)
        .map(Reg::F)
}

fn parse_imm(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x") {
        return i64::from_str_radix(h, 16).ok();
    }
    if let Some(h) = s.strip_prefix("-0x") {
        return i64::from_str_radix(h, 16).ok().map(|v| -v);
    }
    s.parse().ok()
}

/// `sym`, `sym+8`, `sym@PLT` → (`sym`, 8).
fn parse_sym(s: &str) -> Option<(String, i64)> {
    let s = s.trim().trim_end_matches("@PLT");
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '%') {
        return None;
    }
    Some(match s.split_once('+') {
        Some((n, o)) => (n.to_string(), parse_imm(o)?),
        None => (s.to_string(), 0),
    })
}

/// The bytes of a constant (big-endian): its 0x00 bytes are known, the others are not.
fn const_bytes(c: i64) -> Vec<Sym> {
    (0..8)
        .map(|j| match (c >> (8 * (7 - j))) & 0xff {
            0 => Sym::Zero,
            _ => Sym::Unknown,
        })
        .collect()
}

struct Machine {
    r: Vec<Val>,
    f: Vec<Vec<Sym>>,
    /// Stores to the stack (key: offset from the entry stack pointer) and to other memory.
    frame: HashMap<i64, Sym>,
    memory: HashMap<(Base, i64), Sym>,
}

impl Machine {
    fn new() -> Machine {
        let r = (0..16u8)
            .map(|n| match n {
                2..=6 => Val::Bytes((0..8).map(|j| Sym::X(n - 2, j)).collect()),
                15 => Val::Addr(Base::Sp, 0),
                _ => Val::Bytes(vec![Sym::Unknown; 8]),
            })
            .collect();
        let f = (0..16u8)
            .map(|n| match n {
                0 | 2 | 4 | 6 => (0..8).map(|j| Sym::F(n / 2, j)).collect(),
                _ => vec![Sym::Unknown; 8],
            })
            .collect();
        Machine {
            r,
            f,
            frame: HashMap::new(),
            memory: HashMap::new(),
        }
    }

    /// A register's 8 bytes (an address of the frame becomes address bytes).
    fn bytes(&self, r: Reg) -> Vec<Sym> {
        match r {
            Reg::F(n) => self.f[n as usize].clone(),
            Reg::R(n) => match &self.r[n as usize] {
                Val::Bytes(b) => b.clone(),
                Val::Addr(Base::Sp, o) => (0..8).map(|j| Sym::SpAddr(*o, j)).collect(),
                Val::Addr(..) => vec![Sym::Unknown; 8],
            },
        }
    }

    fn write(&mut self, r: Reg, v: Val) {
        match r {
            Reg::R(n) => self.r[n as usize] = v,
            Reg::F(n) => {
                self.f[n as usize] = match v {
                    Val::Bytes(b) => b,
                    Val::Addr(..) => vec![Sym::Unknown; 8],
                }
            }
        }
    }

    /// Writes `value` to bytes `at..at + value.len()` of `r`, the others unchanged.
    fn write_part(&mut self, r: Reg, at: usize, value: Vec<Sym>) {
        let mut b = self.bytes(r);
        for (j, s) in value.into_iter().enumerate() {
            b[at + j] = s;
        }
        self.write(r, Val::Bytes(b));
    }

    /// Writes `value` (1 to 8 bytes) right-justified in bytes `..end` of `r` (`end` 4: the
    /// high word, 8: the low word or the whole register), extended to `width` bytes by `fill`;
    /// bytes outside `end - width..end` are unchanged.
    fn write_ext(&mut self, r: Reg, value: Vec<Sym>, width: usize, end: usize, fill: Sym) {
        let mut v = vec![fill; width - value.len()];
        v.extend(value);
        self.write_part(r, end - width, v);
    }

    fn unknown(&mut self, r: Reg) {
        self.write(r, Val::Bytes(vec![Sym::Unknown; 8]));
    }

    /// A register used as an address.
    fn addr(&self, r: Reg) -> Option<(Base, i64)> {
        let Reg::R(n) = r else { return None };
        match &self.r[n as usize] {
            Val::Addr(b, o) => Some((b.clone(), *o)),
            Val::Bytes(b) => {
                let run = |f: &dyn Fn(u8) -> Sym| (0..8u8).all(|j| b[j as usize] == f(j));
                match b[0].clone() {
                    Sym::X(n, 0) if run(&|j| Sym::X(n, j)) => Some((Base::Ref(Ptr::X(n)), 0)),
                    Sym::Stack(o) if run(&|j| Sym::Stack(o + j as i64)) => {
                        Some((Base::Ref(Ptr::Stack(o)), 0))
                    }
                    Sym::SpAddr(o, 0) if run(&|j| Sym::SpAddr(o, j)) => Some((Base::Sp, o)),
                    _ => None,
                }
            }
        }
    }

    /// A memory operand: `D(B)`, `D(X,B)` (no index), `D(L,B)` (the length is the caller's),
    /// or a relative-long `sym+k`.
    fn mem_operand(&self, op: &str) -> Option<(Base, i64)> {
        let op = op.trim();
        let Some(open) = op.find('(') else {
            let (sym, k) = parse_sym(op)?;
            return Some((Base::Global(sym), k));
        };
        let inner = op[open + 1..].strip_suffix(')')?;
        let disp = if open == 0 {
            0
        } else {
            parse_imm(&op[..open])?
        };
        let base = match inner.split_once(',') {
            Some((first, b)) => {
                // An index register other than %r0 is not modelled; a length is skipped.
                if first.trim().starts_with('%') && first.trim() != "%r0" {
                    return None;
                }
                b
            }
            None => inner,
        };
        let (b, o) = self.addr(parse_reg(base)?)?;
        Some((b, o + disp))
    }

    /// The length `L` of an SS operand `D(L,B)`.
    fn ss_length(op: &str) -> Option<i64> {
        let inner = op.split_once('(')?.1;
        parse_imm(inner.split_once(',')?.0)
    }

    fn load_byte(&self, base: &Base, at: i64) -> Sym {
        match base {
            Base::Sp => self.frame.get(&at).cloned().unwrap_or(if at >= 0 {
                Sym::Stack(at)
            } else {
                Sym::Unknown
            }),
            Base::Global(g) => self
                .memory
                .get(&(base.clone(), at))
                .cloned()
                .unwrap_or(Sym::Global(g.clone(), at)),
            Base::Ref(p) => self
                .memory
                .get(&(base.clone(), at))
                .cloned()
                .unwrap_or(Sym::Ref(p.clone(), at)),
        }
    }

    fn load(&self, op: &str, n: usize) -> Option<Vec<Sym>> {
        let (base, at) = self.mem_operand(op)?;
        Some(
            (0..n as i64)
                .map(|j| self.load_byte(&base, at + j))
                .collect(),
        )
    }

    fn store_byte(&mut self, base: &Base, at: i64, s: Sym) {
        match base {
            Base::Sp => {
                self.frame.insert(at, s);
            }
            _ => {
                self.memory.insert((base.clone(), at), s);
            }
        }
    }

    fn store(&mut self, op: &str, bytes: &[Sym]) -> Option<()> {
        let (base, at) = self.mem_operand(op)?;
        for (j, s) in bytes.iter().enumerate() {
            self.store_byte(&base, at + j as i64, s.clone());
        }
        Some(())
    }

    /// Adds `k` to the address in `s` (else the result is unknown) and writes it to `d`.
    fn add_addr(&mut self, d: Reg, s: Reg, k: i64) {
        match self.addr(s) {
            Some((b, o)) => self.write(d, Val::Addr(b, o + k)),
            None => self.unknown(d),
        }
    }

    /// Runs one instruction; returns `Some(target)` at a call, `Some("ret")` at a return.
    fn step(&mut self, mnemonic: &str, ops: &[String]) -> Option<String> {
        let reg = |i: usize| ops.get(i).and_then(|s| parse_reg(s));
        let imm = |i: usize| ops.get(i).and_then(|s| parse_imm(s));
        let op = |i: usize| ops.get(i).map_or("", String::as_str);
        // Loads into a GPR: (bytes, width extended to, end in the register, sign?).
        let gpr_load = match mnemonic {
            "lg" | "lgrl" => Some((8, 8, 8, false)),
            "l" | "ly" | "lrl" => Some((4, 4, 8, false)),
            "lgf" | "lgfrl" => Some((4, 8, 8, true)),
            "llgf" | "llgfrl" => Some((4, 8, 8, false)),
            "lh" | "lhy" | "lhrl" => Some((2, 4, 8, true)),
            "lgh" | "lghrl" => Some((2, 8, 8, true)),
            "llh" | "llhrl" => Some((2, 4, 8, false)),
            "llgh" | "llghrl" => Some((2, 8, 8, false)),
            "lb" | "lby" => Some((1, 4, 8, true)),
            "lgb" => Some((1, 8, 8, true)),
            "llc" => Some((1, 4, 8, false)),
            "llgc" => Some((1, 8, 8, false)),
            "ic" | "icy" => Some((1, 1, 8, false)),
            "lfh" => Some((4, 4, 4, false)),
            "lhh" => Some((2, 4, 4, true)),
            "llhh" => Some((2, 4, 4, false)),
            "lbh" => Some((1, 4, 4, true)),
            "llch" => Some((1, 4, 4, false)),
            _ => None,
        };
        if let Some((n, width, end, sign)) = gpr_load {
            let d = reg(0)?;
            match self.load(op(1), n) {
                Some(v) => {
                    let fill = if sign { sign_of(&v[0]) } else { Sym::Zero };
                    self.write_ext(d, v, width, end, fill);
                }
                None => self.unknown(d),
            }
            return None;
        }
        // Stores from a register: (bytes, end in the register).
        let store = match mnemonic {
            "stg" | "stgrl" | "std" | "stdy" => Some((8, 8)),
            "st" | "sty" | "strl" => Some((4, 8)),
            "sth" | "sthy" | "sthrl" => Some((2, 8)),
            "stc" | "stcy" => Some((1, 8)),
            "ste" | "stey" | "stfh" => Some((4, 4)),
            "sthh" => Some((2, 4)),
            "stch" => Some((1, 4)),
            _ => None,
        };
        if let Some((n, end)) = store {
            let b = self.bytes(reg(0)?);
            self.store(op(1), &b[end - n..end]);
            return None;
        }
        // Register-to-register extensions: (bytes, width, sign?).
        let ext = match mnemonic {
            "lgr" => Some((8, 8, false)),
            "lr" => Some((4, 4, false)),
            "lgfr" => Some((4, 8, true)),
            "llgfr" => Some((4, 8, false)),
            "lhr" => Some((2, 4, true)),
            "lghr" => Some((2, 8, true)),
            "llhr" => Some((2, 4, false)),
            "llghr" => Some((2, 8, false)),
            "lbr" => Some((1, 4, true)),
            "lgbr" => Some((1, 8, true)),
            "llcr" => Some((1, 4, false)),
            "llgcr" => Some((1, 8, false)),
            _ => None,
        };
        if let Some((n, width, sign)) = ext {
            let (d, s) = (reg(0)?, reg(1)?);
            if mnemonic == "lgr" {
                let v = match s {
                    Reg::R(k) => self.r[k as usize].clone(),
                    Reg::F(_) => Val::Bytes(self.bytes(s)),
                };
                self.write(d, v);
                return None;
            }
            let v = self.bytes(s)[8 - n..].to_vec();
            let fill = if sign { sign_of(&v[0]) } else { Sym::Zero };
            self.write_ext(d, v, width, 8, fill);
            return None;
        }
        match mnemonic {
            "brasl" => return Some(parse_sym(op(1)).map_or_else(String::new, |(s, _)| s)),
            "jg" => return Some(parse_sym(op(0)).map_or_else(String::new, |(s, _)| s)),
            "br" if reg(0) == Some(Reg::R(14)) => return Some("ret".into()),
            "larl" => {
                let d = reg(0)?;
                match parse_sym(op(1)) {
                    Some((s, k)) => self.write(d, Val::Addr(Base::Global(s), k)),
                    None => self.unknown(d),
                }
            }
            "la" | "lay" => {
                let d = reg(0)?;
                match self.mem_operand(op(1)) {
                    Some((b, o)) => self.write(d, Val::Addr(b, o)),
                    None => self.unknown(d),
                }
            }
            "aghi" | "agfi" => {
                let d = reg(0)?;
                self.add_addr(d, d, imm(1)?);
            }
            "aghik" => {
                let (d, s) = (reg(0)?, reg(1)?);
                self.add_addr(d, s, imm(2)?);
            }
            "nill" if imm(1) == Some(0xfff0) || imm(1) == Some(0xfff8) => {
                // Aligning an address of the frame down (clang's 16-byte-aligned copies); the
                // entry stack pointer is taken as 16-byte aligned.
                let d = reg(0)?;
                match self.addr(d) {
                    Some((Base::Sp, o)) => {
                        let m = !(0xffff - imm(1)?);
                        self.write(d, Val::Addr(Base::Sp, o & m));
                    }
                    _ => self.unknown(d),
                }
            }
            "lghi" | "lgfi" => {
                let d = reg(0)?;
                self.write(d, Val::Bytes(const_bytes(imm(1)?)));
            }
            "lhi" => {
                let d = reg(0)?;
                let c = const_bytes(imm(1)?);
                self.write_part(d, 4, c[4..].to_vec());
            }
            "le" | "ley" => {
                let d = reg(0)?;
                match self.load(op(1), 4) {
                    Some(v) => self.write_part(d, 0, v),
                    None => self.unknown(d),
                }
            }
            "ld" | "ldy" => {
                let d = reg(0)?;
                match self.load(op(1), 8) {
                    Some(v) => self.write(d, Val::Bytes(v)),
                    None => self.unknown(d),
                }
            }
            "ler" => {
                let (d, s) = (reg(0)?, reg(1)?);
                let v = self.bytes(s)[..4].to_vec();
                self.write_part(d, 0, v);
            }
            "ldr" | "ldgr" | "lgdr" => {
                let (d, s) = (reg(0)?, reg(1)?);
                let v = self.bytes(s);
                self.write(d, Val::Bytes(v));
            }
            "ldeb" | "ldebr" => {
                let d = reg(0)?;
                let first = if mnemonic == "ldeb" {
                    self.load(op(1), 1).map(|v| v[0].clone())
                } else {
                    Some(self.bytes(reg(1)?)[0].clone())
                };
                let v = match first {
                    Some(f) => (0..8)
                        .map(|j| Sym::Widened(Box::new(f.clone()), j))
                        .collect(),
                    None => vec![Sym::Unknown; 8],
                };
                self.write(d, Val::Bytes(v));
            }
            "lzer" | "lzdr" => {
                let d = reg(0)?;
                let n = if mnemonic == "lzer" { 4 } else { 8 };
                self.write_part(d, 0, vec![Sym::Zero; n]);
            }
            "mvc" => {
                let n = Self::ss_length(op(0))?;
                let (db, d) = self.mem_operand(op(0))?;
                let (sb, s) = self.mem_operand(op(1))?;
                for j in 0..n {
                    let b = self.load_byte(&sb, s + j);
                    self.store_byte(&db, d + j, b);
                }
            }
            "xc" if op(0) == op(1) => {
                let n = Self::ss_length(op(0))?;
                let (db, d) = self.mem_operand(op(0))?;
                for j in 0..n {
                    self.store_byte(&db, d + j, Sym::Zero);
                }
            }
            "stmg" | "lmg" => {
                let (first, last) = match (reg(0)?, reg(1)?) {
                    (Reg::R(a), Reg::R(b)) => (a, b),
                    _ => return None,
                };
                let (base, at) = self.mem_operand(op(2))?;
                let regs: Vec<u8> = (0..16u8)
                    .map(|k| (first + k) % 16)
                    .take(((last + 16 - first) % 16 + 1) as usize)
                    .collect();
                if mnemonic == "stmg" {
                    for (k, &n) in regs.iter().enumerate() {
                        let b = self.bytes(Reg::R(n));
                        for (j, s) in b.into_iter().enumerate() {
                            self.store_byte(&base, at + 8 * k as i64 + j as i64, s);
                        }
                    }
                } else {
                    // Every value is read before any register is written.
                    let values: Vec<Vec<Sym>> = (0..regs.len() as i64)
                        .map(|k| {
                            (0..8)
                                .map(|j| self.load_byte(&base, at + 8 * k + j))
                                .collect()
                        })
                        .collect();
                    for (n, v) in regs.into_iter().zip(values) {
                        self.write(Reg::R(n), Val::Bytes(v));
                    }
                }
            }
            "risbg" | "risbgn" => {
                // Rotate then insert selected bits, at byte granularity.
                let (d, s) = (reg(0)?, reg(1)?);
                let (i3, i4, i5) = (imm(2)?, imm(3)?, imm(4).unwrap_or(0));
                let zero = i4 & 0x80 != 0;
                let (from, to) = (i3 & 63, i4 & 63);
                if from % 8 != 0 || (to + 1) % 8 != 0 || i5 % 8 != 0 || from > to {
                    self.unknown(d);
                    return None;
                }
                let src = self.bytes(s);
                let rot = (i5 / 8) as usize;
                let rotated: Vec<Sym> = (0..8).map(|j| src[(j + rot) % 8].clone()).collect();
                let old = self.bytes(d);
                let v = (0..8)
                    .map(|j| {
                        if (from / 8..=to / 8).contains(&(j as i64)) {
                            rotated[j].clone()
                        } else if zero {
                            Sym::Zero
                        } else {
                            old[j].clone()
                        }
                    })
                    .collect();
                self.write(d, Val::Bytes(v));
            }
            "sllg" | "srlg" | "srag" => {
                let (d, s) = (reg(0)?, reg(1)?);
                let sh = imm(2)?;
                if sh % 8 != 0 {
                    self.unknown(d);
                    return None;
                }
                let k = (sh / 8) as usize;
                let b = self.bytes(s);
                let v: Vec<Sym> = match mnemonic {
                    "sllg" => (0..8)
                        .map(|j| b.get(j + k).cloned().unwrap_or(Sym::Zero))
                        .collect(),
                    _ => {
                        let fill = if mnemonic == "srag" {
                            sign_of(&b[0])
                        } else {
                            Sym::Zero
                        };
                        (0..8)
                            .map(|j| {
                                if j < k {
                                    fill.clone()
                                } else {
                                    b[j - k].clone()
                                }
                            })
                            .collect()
                    }
                };
                self.write(d, Val::Bytes(v));
            }
            "ogr" | "ogrk" | "agr" | "xgr" | "ngr" | "ngrk" => {
                let (d, a, b) = if ops.len() == 3 {
                    (reg(0)?, reg(1)?, reg(2)?)
                } else {
                    (reg(0)?, reg(0)?, reg(1)?)
                };
                let (ba, bb) = (self.bytes(a), self.bytes(b));
                let and = mnemonic.starts_with('n');
                let v = (0..8)
                    .map(|j| match (&ba[j], &bb[j]) {
                        (Sym::Zero, _) | (_, Sym::Zero) if and => Sym::Zero,
                        (Sym::Zero, o) | (o, Sym::Zero) if !and => o.clone(),
                        _ => Sym::Unknown,
                    })
                    .collect();
                self.write(d, Val::Bytes(v));
            }
            "nop" | "nopr" | "bcr" => {}
            _ => {
                if let Some(r) = reg(0) {
                    self.unknown(r);
                }
            }
        }
        None
    }
}

/// Runs `body` until the call of `until` (or `br %r14` when `until` is "ret").
fn run(body: &[Insn], until: &str) -> Option<Machine> {
    let mut m = Machine::new();
    for (mn, ops) in body {
        if let Some(t) = m.step(mn, ops) {
            if t == until {
                return Some(m);
            }
            if t == "ret" {
                return None;
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Comparing with the plans.

/// What the checks assume; the `wrong_*` fields are the negative checks (each must fail).
#[derive(Clone, Copy, PartialEq, Default)]
struct Mode {
    /// An `unsigned int` expected sign-extended (RV64's rule, wrong here).
    wrong_u32: bool,
    /// Narrow values expected left-justified in their stack slot (wrong on big-endian).
    wrong_left_justified: bool,
}

/// Where byte `i` (0-based, memory order) of a `size`-byte move to `loc` lands, as an index
/// into the 8 bytes of the register or slot: right-justified in a GPR or slot, left-justified in
/// an FPR.
fn byte_index(loc: Location, size: usize, i: usize, mode: Mode) -> usize {
    match loc {
        Location::Vector(_) => i,
        Location::Stack(_) if mode.wrong_left_justified => i,
        _ => 8 - size + i,
    }
}

/// The upper bytes a conversion writes above a value whose most significant byte is `top`.
fn fill(conv: Conversion, top: &Sym) -> Sym {
    match conv {
        Conversion::SignExtend => sign_of(top),
        _ => Sym::Zero,
    }
}

/// The symbol at index `j` of the 8 bytes of `loc` at the callee's entry.
fn loc_sym(loc: Location, j: usize) -> Sym {
    match loc {
        Location::Int(n) => Sym::X(n, j as u8),
        Location::Vector(n) => Sym::F(n, j as u8),
        Location::Stack(o) => Sym::Stack(i64::from(STACK_ARGS_OFFSET) + o as i64 + j as i64),
    }
}

/// The upcall side: `callee{i}` stores each argument byte to global `g{i}_{k}`.
fn check_callee(i: usize, sig: &Sig, p: &CallPlan, mode: Mode, body: &[Insn], r: &mut Report) {
    let Some(m) = run(body, "ret") else {
        r.fail(format!("callee{i}: did not reach br %r14"));
        return;
    };
    for (k, a) in sig.args.iter().enumerate() {
        let g = Base::Global(format!("g{i}_{k}"));
        let ap = &p.args()[k];
        for (b, leaf) in leaf_mask(&a.layout).into_iter().enumerate() {
            if !leaf {
                continue;
            }
            let want =
                match ap.by_reference {
                    Some(Location::Int(n)) => Sym::Ref(Ptr::X(n), b as i64),
                    Some(Location::Stack(s)) => Sym::Ref(
                        Ptr::Stack(i64::from(STACK_ARGS_OFFSET) + s as i64),
                        b as i64,
                    ),
                    Some(l) => {
                        r.fail(format!("callee{i} arg {k}: by reference in {l:?}"));
                        return;
                    }
                    None => match ap.moves.iter().find(|m| {
                        (m.offset as usize..m.offset as usize + m.size as usize).contains(&b)
                    }) {
                        Some(mv) => {
                            let at = b - mv.offset as usize;
                            loc_sym(mv.to, byte_index(mv.to, mv.size as usize, at, mode))
                        }
                        None => {
                            r.fail(format!("callee{i} arg {k} byte {b}: no move in the plan"));
                            return;
                        }
                    },
                };
            let got = m.memory.get(&(g.clone(), b as i64));
            if got != Some(&want) {
                r.fail(format!(
                    "callee{i} ({}) arg {k} `{}` byte {b}: compiler reads {got:?}, plan says {want:?}",
                    sig_text(sig),
                    a.spelling
                ));
                return;
            }
            r.checked += 1;
        }
    }
}

/// The downcall side: at the call of `f{i}` in `call{i}`, every byte of global `g{i}_{k}` is
/// where the plan says, and the bytes above each integer scalar are what its conversion writes.
fn check_caller(i: usize, sig: &Sig, p: &CallPlan, mode: Mode, body: &[Insn], r: &mut Report) {
    let Some(m) = run(body, &format!("f{i}")) else {
        r.fail(format!("call{i}: no call of f{i} found"));
        return;
    };
    // Byte j (0..8) of a register or of the 8-byte stack slot at the call.
    let content = |loc: Location, j: usize| -> Sym {
        match loc {
            Location::Int(n) => m.bytes(Reg::R(2 + n))[j].clone(),
            Location::Vector(n) => m.f[2 * n as usize][j].clone(),
            Location::Stack(o) => {
                let sp = match m.r[15] {
                    Val::Addr(Base::Sp, s) => s,
                    _ => return Sym::Unknown,
                };
                let at = sp + i64::from(STACK_ARGS_OFFSET) + o as i64 + j as i64;
                m.load_byte(&Base::Sp, at)
            }
        }
    };
    let pointer = |loc: Location| -> Option<i64> {
        let ptr: Vec<Sym> = (0..8).map(|j| content(loc, j)).collect();
        match ptr[0] {
            Sym::SpAddr(t, 0) if (0..8).all(|j| ptr[j] == Sym::SpAddr(t, j as u8)) => Some(t),
            _ => None,
        }
    };
    if let Some(h) = p.hidden_return_pointer() {
        if pointer(h).is_none() {
            r.fail(format!(
                "call{i} ({}): no result pointer in {h:?}",
                sig_text(sig)
            ));
            return;
        }
        r.checked += 1;
    }
    for (k, a) in sig.args.iter().enumerate() {
        let g = format!("g{i}_{k}");
        let ap = &p.args()[k];
        let mask = leaf_mask(&a.layout);
        let fail = |r: &mut Report, what: String| {
            r.fail(format!(
                "call{i} ({}) arg {k} `{}`: {what}",
                sig_text(sig),
                a.spelling
            ))
        };
        if let Some(loc) = ap.by_reference {
            let Some(t) = pointer(loc) else {
                let ptr: Vec<Sym> = (0..8).map(|j| content(loc, j)).collect();
                fail(r, format!("the pointer in {loc:?} is {ptr:?}"));
                return;
            };
            for (b, _) in mask.iter().enumerate().filter(|(_, l)| **l) {
                let got = m.load_byte(&Base::Sp, t + b as i64);
                if got != Sym::Global(g.clone(), b as i64) {
                    fail(r, format!("byte {b} of the copy is {got:?}"));
                    return;
                }
                r.checked += 1;
            }
            continue;
        }
        for (b, _) in mask.iter().enumerate().filter(|(_, l)| **l) {
            if !ap
                .moves
                .iter()
                .any(|mv| (mv.offset as usize..(mv.offset + mv.size as u32) as usize).contains(&b))
            {
                fail(r, format!("byte {b}: no move in the plan"));
                return;
            }
        }
        let scalar_kind = a.layout.as_value().map(|v| v.kind());
        for mv in &ap.moves {
            let (o, size) = (mv.offset as usize, mv.size as usize);
            if mv.conv == Conversion::FloatToDouble {
                for j in 0..8 {
                    let want = Sym::Widened(Box::new(Sym::Global(g.clone(), 0)), j as u8);
                    let got = content(mv.to, j);
                    if got != want {
                        fail(
                            r,
                            format!("byte {j} of the promoted double in {:?}: {got:?}", mv.to),
                        );
                        return;
                    }
                    r.checked += 1;
                }
                continue;
            }
            let mut used = [false; 8];
            for j in 0..size {
                let at = byte_index(mv.to, size, j, mode);
                used[at] = true;
                if !mask[o + j] {
                    continue;
                }
                let want = Sym::Global(g.clone(), (o + j) as i64);
                let got = content(mv.to, at);
                if got != want {
                    fail(
                        r,
                        format!(
                            "byte {}: plan says {:?} byte {at}, compiler put {got:?} there",
                            o + j,
                            mv.to
                        ),
                    );
                    return;
                }
                r.checked += 1;
            }
            // The other bytes of an integer scalar's register or slot: the conversion's fill.
            // Those of a float, a struct's image or an FPR are unspecified (the callee reads
            // only the value's bytes).
            let Some(kind) = scalar_kind.filter(|k| !k.is_float()) else {
                continue;
            };
            if size == 8 || matches!(mv.to, Location::Vector(_)) {
                continue;
            }
            let conv = if mode.wrong_u32 && kind == ScalarKind::U32 {
                Conversion::SignExtend
            } else {
                mv.conv
            };
            let want = fill(conv, &Sym::Global(g.clone(), o as i64));
            for j in (0..8).filter(|j| !used[*j]) {
                let got = content(mv.to, j);
                if got != want {
                    fail(
                        r,
                        format!(
                            "byte {j} of {:?} outside the value: {:?} says {want:?}, found {got:?}",
                            mv.to, conv
                        ),
                    );
                    return;
                }
            }
            r.checked += 1;
        }
    }
}

/// The return side: at `br %r14` of `ret{i}`, the bytes of `gr{i}` are where the plan says.
fn check_return(i: usize, sig: &Sig, p: &CallPlan, mode: Mode, body: &[Insn], r: &mut Report) {
    let Some(ret) = &sig.ret else { return };
    let Some(m) = run(body, "ret") else {
        r.fail(format!("ret{i}: did not reach br %r14"));
        return;
    };
    let g = format!("gr{i}");
    let fail = |r: &mut Report, what: String| {
        r.fail(format!("ret{i} `{}` ({:?}): {what}", ret.spelling, p.ret()))
    };
    let size = ret.layout.byte_size();
    match p.ret() {
        ReturnPlan::InMemory => {
            for (b, _) in leaf_mask(&ret.layout)
                .iter()
                .enumerate()
                .filter(|(_, l)| **l)
            {
                let got = m
                    .memory
                    .get(&(Base::Ref(Ptr::X(0)), b as i64))
                    .cloned()
                    .unwrap_or(Sym::Unknown);
                if got != Sym::Global(g.clone(), b as i64) {
                    fail(r, format!("byte {b} in memory at r2: {got:?}"));
                    return;
                }
                r.checked += 1;
            }
        }
        ReturnPlan::Scalar(Register::Vector(0)) => {
            for (j, got) in m.f[0].iter().take(size).enumerate() {
                if *got != Sym::Global(g.clone(), j as i64) {
                    fail(r, format!("byte {j} in f0: {got:?}"));
                    return;
                }
                r.checked += 1;
            }
        }
        ReturnPlan::Scalar(Register::Int(0)) => {
            let r2 = m.bytes(Reg::R(2));
            for j in 0..size {
                if r2[8 - size + j] != Sym::Global(g.clone(), j as i64) {
                    fail(r, format!("byte {j} in r2: {:?}", r2[8 - size + j]));
                    return;
                }
                r.checked += 1;
            }
            let kind = ret.layout.as_value().map(|v| v.kind()).unwrap();
            // The callee extends a narrow result by its type, as a caller does an argument.
            let signed = kind.is_signed() || (mode.wrong_u32 && kind == ScalarKind::U32);
            let conv = if signed {
                Conversion::SignExtend
            } else {
                Conversion::Bytes
            };
            let want = fill(conv, &Sym::Global(g.clone(), 0));
            if r2[..8 - size].iter().any(|b| *b != want) {
                fail(
                    r,
                    format!(
                        "bytes above the value in r2: {:?}, want {want:?}",
                        &r2[..8 - size]
                    ),
                );
                return;
            }
            r.checked += 1;
        }
        other => fail(r, format!("not an s390x return plan: {other:?}")),
    }
}

/// How the checked plans are made (the negative checks change them).
type Planner<'a> = &'a dyn Fn(&FunctionDescriptor, Option<usize>) -> CallPlan;

/// Checks every signature's plan (from `planner`) against the assembly. Returns the report and
/// the signatures skipped.
fn check_all(
    sigs: &[Sig],
    funcs: &Functions,
    mode: Mode,
    skip: &dyn Fn(&Sig) -> bool,
    planner: Planner<'_>,
) -> (Report, usize) {
    let mut r = Report {
        checked: 0,
        failed: 0,
        failures: Vec::new(),
    };
    let mut skipped = 0;
    for (i, sig) in sigs.iter().enumerate() {
        if skip(sig) {
            skipped += 1;
            continue;
        }
        let p = planner(&sig.descriptor(), sig.first_variadic);
        if sig.first_variadic.is_none() {
            // The callee returns void: no result pointer shifts its arguments.
            let args = sig.args.iter().map(|a| a.layout.clone());
            let pv = planner(&FunctionDescriptor::of_void(args), None);
            let body = funcs
                .get(&format!("callee{i}"))
                .expect("callee in the assembly");
            check_callee(i, sig, &pv, mode, body, &mut r);
        }
        let body = funcs
            .get(&format!("call{i}"))
            .expect("caller in the assembly");
        check_caller(i, sig, &p, mode, body, &mut r);
        if sig.ret.is_some() {
            check_return(i, sig, &p, mode, &funcs[&format!("ret{i}")], &mut r);
        }
    }
    (r, skipped)
}

/// Whether `layout` holds a union, an array or a zero-size member anywhere inside.
#[derive(Default)]
struct Scan {
    nested: bool,
    union: bool,
    array: bool,
    zero_size: bool,
    floats: usize,
}

fn scan(l: &MemoryLayout, s: &mut Scan, depth: usize) {
    match l {
        MemoryLayout::Value(v) => s.floats += usize::from(v.kind().is_float()),
        MemoryLayout::Padding(_) => {}
        MemoryLayout::Struct(st) => {
            s.nested |= depth > 0;
            s.zero_size |= depth > 0 && l.byte_size() == 0;
            st.members().iter().for_each(|m| scan(m, s, depth + 1));
        }
        MemoryLayout::Union(u) => {
            s.union = true;
            u.members().iter().for_each(|m| scan(m, s, depth + 1));
        }
        MemoryLayout::Sequence(q) => {
            s.array = true;
            s.zero_size |= l.byte_size() == 0;
            scan(q.element(), s, depth + 1);
        }
    }
}

/// How often each rule is exercised by the signatures' plans.
fn coverage(sigs: &[Sig]) -> Vec<(&'static str, usize)> {
    let mut c: Vec<(&'static str, usize)> = Vec::new();
    let mut bump = |name: &'static str| match c.iter_mut().find(|(n, _)| *n == name) {
        Some((_, k)) => *k += 1,
        None => c.push((name, 1)),
    };
    for sig in sigs {
        let p = plan(&sig.descriptor(), sig.first_variadic).unwrap();
        for (k, a) in sig.args.iter().enumerate() {
            let ap = &p.args()[k];
            let variadic = sig.first_variadic.is_some_and(|f| k >= f);
            let to = ap.by_reference.or(ap.moves.first().map(|m| m.to)).unwrap();
            let on_stack = matches!(to, Location::Stack(_));
            let mut s = Scan::default();
            scan(&a.layout, &mut s, 0);
            match classify(&a.layout) {
                ArgClass::Integer(kind) => {
                    let narrow = kind.byte_size() < 8;
                    match (kind, on_stack) {
                        (ScalarKind::U32, false) => bump("unsigned int zero-extended in a GPR"),
                        (ScalarKind::U8 | ScalarKind::U16 | ScalarKind::Bool, false) => {
                            bump("narrow unsigned zero-extended in a GPR")
                        }
                        (ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32, false) => {
                            bump("narrow signed sign-extended in a GPR")
                        }
                        (_, true) if narrow => bump("narrow integer extended in a stack slot"),
                        (_, true) => bump("8-byte integer in a stack slot"),
                        _ => {}
                    }
                    if to == Location::Int(4) {
                        bump("integer in r6");
                    }
                }
                ArgClass::Float(kind) => match (kind, variadic, on_stack) {
                    (ScalarKind::F32, true, false) => bump("variadic float promoted, in an FPR"),
                    (ScalarKind::F32, true, true) => bump("variadic float promoted, on the stack"),
                    (ScalarKind::F64, true, false) => bump("variadic double in an FPR"),
                    (ScalarKind::F32, false, false) => bump("float in an FPR"),
                    (ScalarKind::F64, false, false) => bump("double in an FPR"),
                    (ScalarKind::F32, false, true) => bump("float right-justified in a stack slot"),
                    (_, _, true) => bump("double in a stack slot"),
                    _ => {}
                },
                ArgClass::FloatStruct { size } => {
                    match (size, on_stack) {
                        (4, false) => bump("one-float struct in an FPR"),
                        (8, false) if s.floats == 1 && a.layout.byte_size() == 8 => {
                            let inner = leaf_mask(&a.layout).iter().filter(|b| **b).count();
                            bump(if inner == 4 {
                                "8-byte one-float struct (float + padding) in an FPR"
                            } else {
                                "one-double struct in an FPR"
                            })
                        }
                        (_, true) => bump("one-float struct in a stack slot"),
                        _ => {}
                    }
                    if s.nested {
                        bump("nested one-float struct in an FPR or slot");
                    }
                    if variadic {
                        bump("variadic one-float struct, not promoted");
                    }
                }
                ArgClass::Small { size } => {
                    if matches!(a.layout, MemoryLayout::Union(_)) {
                        bump("union of 1/2/4/8 bytes as an integer");
                    } else if s.floats > 0 {
                        bump("struct with floats of 1/2/4/8 bytes as an integer");
                    }
                    if s.floats > 0 && (s.array || s.union || s.zero_size) && size >= 4 {
                        bump("near miss of a one-float struct (array, union, zero-size member) as an integer");
                    }
                    bump(match (size, on_stack) {
                        (1, false) => "1-byte struct in a GPR",
                        (2, false) => "2-byte struct in a GPR",
                        (4, false) => "4-byte struct in a GPR",
                        (8, false) => "8-byte struct in a GPR",
                        _ => "small struct right-justified in a stack slot",
                    });
                    if variadic {
                        bump("variadic small struct");
                    }
                }
                ArgClass::Indirect => {
                    let n = a.layout.byte_size();
                    if matches!(n, 3 | 5 | 6 | 7) {
                        bump("3/5/6/7-byte struct by reference");
                    }
                    if s.floats == 1 && n == 16 {
                        bump("16-byte one-float struct by reference");
                    }
                    bump(if on_stack {
                        "by reference, pointer in a stack slot"
                    } else {
                        "by reference, pointer in a GPR"
                    });
                }
            }
        }
        match (p.ret(), sig.ret.as_ref().map(|r| classify(&r.layout))) {
            (ReturnPlan::InMemory, Some(ArgClass::FloatStruct { .. })) => {
                bump("result one-float struct in memory (r2)")
            }
            (ReturnPlan::InMemory, Some(ArgClass::Small { .. })) => {
                bump("result 1/2/4/8-byte struct in memory (r2)")
            }
            (ReturnPlan::InMemory, _) => bump("result other struct in memory (r2)"),
            (ReturnPlan::Scalar(Register::Vector(0)), _) => bump("result float in f0"),
            (ReturnPlan::Scalar(Register::Int(0)), Some(ArgClass::Integer(k)))
                if k.byte_size() < 8 =>
            {
                bump("result narrow integer extended in r2")
            }
            _ => {}
        }
    }
    c
}

const S390X_COMPILERS: &str = "gcc-s390x-linux-gnu and clang";

fn oracle(cmd: &[&str], name: &str) {
    let (sigs, src) = generate(1200, 0x5EED_0390);
    let Some(asm) = compile(cmd, &src, name, S390X_COMPILERS) else {
        return;
    };
    let funcs = functions(&asm, &["#"]);
    let skip = |_: &Sig| false;
    let mode = Mode::default();
    let real =
        |d: &FunctionDescriptor, fv| plan(d, fv).unwrap_or_else(|e| panic!("plan of {d}: {e}"));
    let (r, _) = check_all(&sigs, &funcs, mode, &skip, &real);
    let cov = coverage(&sigs);
    eprintln!(
        "{name}: {} signatures, {} checks, {} failures",
        sigs.len(),
        r.checked,
        r.failed
    );
    for (rule, n) in &cov {
        eprintln!("{name}:   {n:5}  {rule}");
    }
    assert!(
        r.failures.is_empty(),
        "{name}: the plans disagree with the compiler:\n{}",
        r.failures.join("\n")
    );
    assert!(r.checked > 30_000, "{name}: too few checks ({})", r.checked);
    let expected = [
        "unsigned int zero-extended in a GPR",
        "narrow unsigned zero-extended in a GPR",
        "narrow signed sign-extended in a GPR",
        "narrow integer extended in a stack slot",
        "8-byte integer in a stack slot",
        "integer in r6",
        "float in an FPR",
        "double in an FPR",
        "float right-justified in a stack slot",
        "double in a stack slot",
        "variadic float promoted, in an FPR",
        "variadic float promoted, on the stack",
        "variadic double in an FPR",
        "one-float struct in an FPR",
        "one-double struct in an FPR",
        "8-byte one-float struct (float + padding) in an FPR",
        "one-float struct in a stack slot",
        "nested one-float struct in an FPR or slot",
        "variadic one-float struct, not promoted",
        "union of 1/2/4/8 bytes as an integer",
        "struct with floats of 1/2/4/8 bytes as an integer",
        "near miss of a one-float struct (array, union, zero-size member) as an integer",
        "1-byte struct in a GPR",
        "2-byte struct in a GPR",
        "4-byte struct in a GPR",
        "8-byte struct in a GPR",
        "small struct right-justified in a stack slot",
        "variadic small struct",
        "3/5/6/7-byte struct by reference",
        "16-byte one-float struct by reference",
        "by reference, pointer in a GPR",
        "by reference, pointer in a stack slot",
        "result one-float struct in memory (r2)",
        "result 1/2/4/8-byte struct in memory (r2)",
        "result other struct in memory (r2)",
        "result float in f0",
        "result narrow integer extended in r2",
    ];
    for rule in expected {
        let n = cov.iter().find(|(r, _)| *r == rule).map_or(0, |(_, n)| *n);
        assert!(n >= 5, "{name}: rule `{rule}` exercised only {n} times");
    }
    // The oracle is not blind: plans that pass one-float structs as integers, plans that
    // sign-extend `unsigned int`, and left-justified stack slots must fail here.
    let no_fpr_structs = |d: &FunctionDescriptor, fv| {
        let as_int = |l: &MemoryLayout| match classify(l) {
            ArgClass::FloatStruct { size } => {
                let k = if size == 4 {
                    ScalarKind::U32
                } else {
                    ScalarKind::U64
                };
                MemoryLayout::c_struct([gatun::layout::ValueLayout::new(k)]).unwrap()
            }
            _ => l.clone(),
        };
        let args = d.argument_layouts().iter().map(as_int);
        let d = match d.return_layout() {
            Some(r) => FunctionDescriptor::of(r.clone(), args),
            None => FunctionDescriptor::of_void(args),
        };
        plan(&d, fv).unwrap()
    };
    let negatives: [(&str, Mode, Planner<'_>, usize); 3] = [
        ("one-float structs as integers", mode, &no_fpr_structs, 100),
        (
            "sign-extending unsigned int",
            Mode {
                wrong_u32: true,
                ..mode
            },
            &real,
            20,
        ),
        (
            "left-justified stack slots",
            Mode {
                wrong_left_justified: true,
                ..mode
            },
            &real,
            50,
        ),
    ];
    for (what, m, planner, min) in negatives {
        let (wrong, _) = check_all(&sigs, &funcs, m, &skip, planner);
        eprintln!("{name}: {what} fails {} checks, as it should", wrong.failed);
        assert!(
            wrong.failed > min,
            "{name}: {what} passes too: the oracle is blind"
        );
    }
}

#[test]
fn s390x_plans_match_gcc() {
    oracle(
        &[
            "s390x-linux-gnu-gcc",
            "-ffreestanding",
            "-fno-section-anchors",
        ],
        "gcc-s390x-linux",
    );
}

#[test]
fn s390x_plans_match_clang() {
    oracle(
        &["clang", "--target=s390x-linux-gnu", "-ffreestanding"],
        "clang-s390x-linux",
    );
}
