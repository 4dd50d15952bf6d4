//! The ELFv2 plans (`gatun::abi::ppc64le`) proved against the compilers' code generation (no
//! PowerPC code runs).
//!
//! For 1,400 random signatures (fixed seed) this test writes one C file holding, per signature,
//! a callee that stores every parameter to its own global (where the callee finds each byte),
//! a caller that passes a global per argument to an external function (where the caller puts
//! each byte) and a function returning a global (the return side); the C text and the random
//! types are shared with the other oracles (`tests/common/c_oracle.rs`). It compiles the file
//! with `powerpc64le-linux-gnu-gcc -O1 -S` (the ground truth) and
//! `clang --target=powerpc64le-linux-gnu -O1 -S`, then reads the assembly with a small
//! symbolic interpreter: each register starts as "byte j of argument register rN/fN", each
//! incoming parameter-save-area byte as "stack byte o", each global byte as "byte b of global
//! g"; the TOC loads (`addis rT,2,sym@toc@ha` and the TOC entries `.LCn`), loads, stores,
//! rotates and masks (`rldicl`, `rldimi`, `rlwinm`, ...), the extending loads and `extsb`/
//! `extsh`/`extsw`, `lfs`/`stfs` (a `float` converted to and from double format),
//! `xscvdpspn`/`xscvspdpn`, the GPR↔VSR moves and the VSX copies (`lxvd2x`/`stxvd2x`) carry
//! those symbols along, with "sign of byte s" and "zero" for the bytes extensions fill. At the
//! call (or the callee's stores, or its `blr`) every byte the C source passes must be exactly
//! where the plan says — a `float` in an FPR as the double `lfs` makes of it, in a GPR or the
//! save area as its own 4 bytes — and the caller's upper register and save-area bytes of an
//! integer scalar must be what the plan's conversion writes (signed types sign-extended,
//! unsigned ones, `unsigned int` included, and `_Bool` zero-extended). Where a plan puts the
//! same bytes in two places (variadic floating-point values, an HFA split by `f13`), the
//! caller must fill both, and the callee may read either.
//!
//! Needs `powerpc64le-linux-gnu-gcc` and `clang` (Debian: `gcc-powerpc64le-linux-gnu`,
//! `clang`); the test reports and skips a compiler that is missing (and fails under `CI`).
//!
//! The test counts how often each rule below is exercised, by the quoted label, and fails when
//! one is not; and it checks that the oracle is not blind: plans made as if every argument were
//! variadic (floating-point values also in GPRs), and plans whose `unsigned int` is
//! sign-extended, must fail here.
//!
//! # Where gcc and clang differ (gcc wins; the cases are skipped for clang)
//!
//! - **An HFA split by `f13` in the save area**: for the members that got no FPR gcc writes
//!   whole doublewords from the one holding the first of them, so the members before it in that
//!   doubleword are in an FPR *and* in memory (gcc's callees read them from memory or the GPR);
//!   clang writes only the bytes of the members without an FPR (its callees read the others
//!   from the FPRs). The plans write both; against clang, the save-area bytes of members that
//!   are also in an FPR are not checked (in GPRs both compilers write the whole doubleword).
//! - **Zero-length arrays** inside a member of an otherwise homogeneous aggregate: gcc makes it
//!   an ordinary aggregate, clang skips a struct member holding only zero-length arrays. The
//!   signatures holding a struct with floating-point leaves and a zero-length array are not
//!   checked against clang (`gcc_only`).
//!
//! # ELFv2: rules and the labels that count them
//!
//! Rules as in the OpenPOWER 64-Bit ELF V2 ABI Specification, §2.2 "Function Calling
//! Sequence", and the module docs of `gatun::abi::ppc64le` (whose unit tests assert each).
//!
//! | rule | labels |
//! |---|---|
//! | integer scalars in `r3..r10`, then save-area doublewords from 64 | "integer in the save area past r10" |
//! | narrow integers extended by type (`unsigned int` zero-extended) | "narrow signed sign-extended in a GPR", "narrow unsigned zero-extended in a GPR", "narrow integer extended in the save area" |
//! | `float`/`double` in `f1..f13`, a `float` in double format | "float in an FPR (double format)", "double in an FPR" |
//! | a floating-point argument takes its doubleword: the next GPR is skipped | "GPR skipped by an FP argument" |
//! | past `f13`: the raw bits in the doubleword | "float past f13 in the save area", "double past f13 in the save area", "float in a GPR, f13 used by HFAs" |
//! | HFAs of 1–8 `float`/`double` members in consecutive FPRs | "float HFA in FPRs", "double HFA in FPRs", "HFA of 5-8 members in FPRs" |
//! | HFA shapes: nested structs, arrays, unions, empty members skipped | "nested or array HFA", "union HFA", "empty member skipped in an HFA" |
//! | HFA split by `f13`: the image from the doubleword of the first member left | "HFA split by f13, a member in both", "HFA split by f13 at a doubleword boundary" |
//! | HFA with no FPR left: its image | "HFA in the save area, FPRs used up" |
//! | not HFAs: 9+ members, mixed kinds, integers, padding, zero-length arrays (gcc) | "9+ floats: an ordinary aggregate", "mixed float kinds: an ordinary aggregate", "padded HFA shape: an ordinary aggregate", "zero-length array: an ordinary aggregate (gcc)" |
//! | an argument struct as large as its only `float`/`double` takes an FPR whatever its zero-length arrays (gcc's machine mode; returned in `r3`) | "one-float struct with a zero-length array in an FPR (gcc)" |
//! | aggregates by value as their image: GPRs, split `r10` + save area, save area | "aggregate of 1-7 bytes in a GPR", "aggregate in several GPRs", "aggregate split r10 + save area", "aggregate in the save area" |
//! | aggregates aligned to 16 at an even doubleword (not HFAs) | "16-aligned aggregate, a doubleword skipped", "16-aligned HFA at an odd doubleword" |
//! | variadic `float`/`double` in an FPR and its doubleword, `float` promoted | "variadic double in FPR and GPR", "variadic float promoted, FPR and GPR", "variadic FP in FPR and save area", "variadic FP past f13: doubleword only" |
//! | variadic HFA in FPRs and its whole image | "variadic HFA in FPRs and its image" |
//! | results: `r3` (extended), `f1`, HFA in `f1..f8`, ≤ 16 bytes in `r3`/`r4`, memory at `r3` | "result narrow integer extended", "result float in f1 (double format)", "result HFA in f1..f8", "result aggregate in r3/r4", "result in memory (r3)" |
// Classification is pure data, so this runs in the native x86-64 suite only: under qemu or
// Wine it would check the same plans again, starting the host's compilers from an emulated
// process.
#![cfg(all(unix, target_arch = "x86_64"))]

#[path = "common/c_oracle.rs"]
mod c_oracle;

use std::collections::HashMap;

use c_oracle::{
    compile, functions, leaf_mask, render, scalar, sig_text, CType, Field, Functions, Insn, Report,
    Rng, Sig, Types,
};

use gatun::abi::ppc64le::{classify, plan, ArgClass};
use gatun::abi::{CallPlan, Conversion, Location, Register, ReturnPlan};
use gatun::layout::{MemoryLayout, ScalarKind};
use gatun::linker::FunctionDescriptor;

// ---------------------------------------------------------------------------------------------
// The ELFv2 mixture of random C types (the neutral parts are in `common/c_oracle.rs`).

const FLOATS: [ScalarKind; 2] = [ScalarKind::F32, ScalarKind::F64];

/// Integer kinds, the narrow ones (whose extension the ABI decides) weighted.
const NARROW_HEAVY: [ScalarKind; 13] = [
    ScalarKind::U32,
    ScalarKind::U32,
    ScalarKind::U16,
    ScalarKind::U16,
    ScalarKind::Bool,
    ScalarKind::U8,
    ScalarKind::I8,
    ScalarKind::I16,
    ScalarKind::I32,
    ScalarKind::I64,
    ScalarKind::U64,
    ScalarKind::I32,
    ScalarKind::I8,
];

impl Types {
    /// An empty struct member, or an array of empty structs.
    fn empty_member(&mut self, rng: &mut Rng) -> Field {
        Field {
            ty: self.record(Vec::new(), false, false),
            array: rng.chance(30).then(|| 1 + rng.below(2)),
        }
    }

    /// A struct (or union) whose leaves are `count` of `kind`, with no padding, in a random
    /// shape: plain members, arrays, nested structs, unions of the same kind, and empty members.
    fn hfa(&mut self, rng: &mut Rng, kind: ScalarKind, count: usize, depth: usize) -> CType {
        let mut fields = Vec::new();
        let mut left = count;
        while left > 0 {
            if rng.chance(8) {
                fields.push(self.empty_member(rng));
            }
            match rng.below(if depth < 2 { 5 } else { 2 }) {
                0 => {
                    fields.push(Field {
                        ty: scalar(kind),
                        array: None,
                    });
                    left -= 1;
                }
                1 => {
                    let n = 1 + rng.below(left);
                    fields.push(Field {
                        ty: scalar(kind),
                        array: Some(n),
                    });
                    left -= n;
                }
                2 => {
                    // A nested HFA, sometimes as an array of copies.
                    let n = 1 + rng.below(left);
                    let copies = 1 + rng.below(left / n);
                    let inner = self.hfa(rng, kind, n, depth + 1);
                    fields.push(Field {
                        ty: inner,
                        array: (copies > 1 || rng.chance(20)).then_some(copies),
                    });
                    left -= n * copies;
                }
                3 => {
                    // A union of an HFA of n and a smaller array of the same kind: n members.
                    let n = 1 + rng.below(left);
                    let a = self.hfa(rng, kind, n, depth + 1);
                    let b = Field {
                        ty: scalar(kind),
                        array: Some(1 + rng.below(n)),
                    };
                    let u = self.record(vec![Field { ty: a, array: None }, b], true, false);
                    fields.push(Field { ty: u, array: None });
                    left -= n;
                }
                _ => {
                    fields.push(Field {
                        ty: scalar(kind),
                        array: Some(1),
                    });
                    left -= 1;
                }
            }
        }
        if rng.chance(8) {
            fields.push(self.empty_member(rng));
        }
        self.record(fields, false, false)
    }

    /// A random HFA: 1 to 8 members, the larger counts weighted.
    fn any_hfa(&mut self, rng: &mut Rng) -> CType {
        let kind = FLOATS[rng.below(2)];
        let count = if rng.chance(50) {
            5 + rng.below(4)
        } else {
            1 + rng.below(8)
        };
        let t = self.hfa(rng, kind, count, 0);
        if rng.chance(8) && t.layout.byte_size() % 16 == 0 {
            // 16-aligned without padding: still an HFA, doubleword-aligned.
            return self.record(vec![Field { ty: t, array: None }], false, true);
        }
        t
    }

    /// A struct that looks homogeneous but is not: too many members, mixed kinds, an integer
    /// member, padding, or a zero-length array (gcc).
    fn near_hfa(&mut self, rng: &mut Rng) -> CType {
        let f = FLOATS[rng.below(2)];
        match rng.below(5) {
            0 => {
                // 9 to 16 floats (up to 64 bytes) or 9 doubles.
                let n = if f == ScalarKind::F32 {
                    9 + rng.below(8)
                } else {
                    9
                };
                self.hfa(rng, f, n, 0)
            }
            1 => {
                let (na, nb) = (1 + rng.below(3), 1 + rng.below(3));
                let a = self.hfa(rng, ScalarKind::F32, na, 1);
                let b = self.hfa(rng, ScalarKind::F64, nb, 1);
                let mut fields = vec![Field { ty: a, array: None }, Field { ty: b, array: None }];
                if rng.chance(50) {
                    fields.swap(0, 1);
                }
                self.record(fields, false, false)
            }
            2 => {
                let n = 1 + rng.below(4);
                let a = self.hfa(rng, f, n, 1);
                let mut fields = vec![
                    Field { ty: a, array: None },
                    Field {
                        ty: scalar(NARROW_HEAVY[rng.below(NARROW_HEAVY.len())]),
                        array: None,
                    },
                ];
                if rng.chance(50) {
                    fields.swap(0, 1);
                }
                self.record(fields, false, false)
            }
            3 => {
                // Padding: a 16-aligned struct of fewer bytes.
                let n = (1 + rng.below(3)).min(8 / f.byte_size());
                let a = self.hfa(rng, f, n, 1);
                self.record(vec![Field { ty: a, array: None }], false, true)
            }
            _ => {
                // A zero-length array beside the members (directly or in a member).
                let n = 1 + rng.below(4);
                let a = self.hfa(rng, f, n, 1);
                let z = if rng.chance(50) {
                    Field {
                        ty: scalar(f),
                        array: Some(0),
                    }
                } else {
                    let inner = Field {
                        ty: scalar(f),
                        array: Some(0),
                    };
                    Field {
                        ty: self.record(vec![inner], false, false),
                        array: None,
                    }
                };
                let mut fields = vec![Field { ty: a, array: None }, z];
                if rng.chance(50) {
                    fields.swap(0, 1);
                }
                self.record(fields, false, false)
            }
        }
    }

    /// A 16-byte-aligned aggregate (mixed members, 1 to 40 bytes before the alignment).
    fn aligned16(&mut self, rng: &mut Rng) -> CType {
        let t = 1 + rng.below(40);
        let f = rng.chance(30);
        let inner = self.mixed(rng, t, f);
        self.record(
            vec![Field {
                ty: inner,
                array: None,
            }],
            false,
            true,
        )
    }

    /// Any argument or result type.
    fn any_ppc(&mut self, rng: &mut Rng) -> CType {
        match rng.below(100) {
            0..=19 => {
                if rng.chance(50) {
                    scalar(NARROW_HEAVY[rng.below(NARROW_HEAVY.len())])
                } else {
                    scalar(ScalarKind::ALL[rng.below(12)])
                }
            }
            20..=24 => scalar(FLOATS[rng.below(2)]),
            25..=54 => self.any_hfa(rng),
            55..=64 => self.near_hfa(rng),
            65..=87 => {
                // Structs of 1 to 64 bytes.
                let t = 1 + rng.below(64);
                let f = rng.chance(40);
                self.mixed(rng, t, f)
            }
            88..=94 => self.aligned16(rng),
            _ => {
                let (t, f) = (1 + rng.below(12), rng.chance(30));
                let a = self.mixed(rng, t, f);
                let b = scalar(ScalarKind::ALL[rng.below(12)]);
                self.record(
                    vec![Field { ty: a, array: None }, Field { ty: b, array: None }],
                    true,
                    false,
                )
            }
        }
    }
}

fn generate(count: usize, seed: u64) -> (Vec<Sig>, String) {
    let mut rng = Rng(seed);
    let mut types = Types {
        defs: String::new(),
        next: 0,
        zero_arrays: false,
    };
    let mut sigs = Vec::new();
    while sigs.len() < count {
        let mut args: Vec<CType> = Vec::new();
        match rng.below(100) {
            // FPR exhaustion: 10 to 14 floating-point scalars first.
            0..=14 => {
                for _ in 0..10 + rng.below(5) {
                    args.push(scalar(FLOATS[rng.below(2)]));
                }
            }
            // FPR exhaustion mid-HFA: one or two large HFAs (and floats) first.
            15..=34 => {
                for _ in 0..1 + rng.below(2) {
                    let kind = FLOATS[rng.below(2)];
                    let n = 5 + rng.below(4);
                    args.push(types.hfa(&mut rng, kind, n, 0));
                }
                for _ in 0..rng.below(4) {
                    args.push(scalar(FLOATS[rng.below(2)]));
                }
            }
            // GPR exhaustion: 5 to 9 integers first.
            35..=49 => {
                for _ in 0..5 + rng.below(5) {
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
            args.push(types.any_ppc(&mut rng));
        }
        if rng.chance(10) {
            // Narrow integers past the registers.
            for _ in 0..8 {
                args.insert(0, scalar(ScalarKind::I64));
            }
            for _ in 0..(2 + rng.below(6)) {
                args.push(scalar(NARROW_HEAVY[rng.below(NARROW_HEAVY.len())]));
            }
        }
        if args.is_empty() {
            args.push(scalar(NARROW_HEAVY[rng.below(NARROW_HEAVY.len())]));
        }
        let first_variadic = rng.chance(25).then(|| 1 + rng.below(args.len()));
        if first_variadic.is_some() {
            // Variadic floats (promoted by C), doubles, HFAs and aligned aggregates.
            for _ in 0..1 + rng.below(4) {
                let extra = match rng.below(5) {
                    0 => scalar(ScalarKind::F32),
                    1 => scalar(ScalarKind::F64),
                    2 | 3 => types.any_hfa(&mut rng),
                    _ => types.aligned16(&mut rng),
                };
                args.push(extra);
            }
        }
        let ret = match rng.below(10) {
            0..=1 => None,
            2..=3 => Some(types.any_hfa(&mut rng)),
            4..=5 => Some(types.any_ppc(&mut rng)),
            _ => Some(scalar(if rng.chance(30) {
                FLOATS[rng.below(2)]
            } else {
                NARROW_HEAVY[rng.below(NARROW_HEAVY.len())]
            })),
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

/// Whether `layout` holds a zero-length array.
fn has_zero_array(layout: &MemoryLayout) -> bool {
    match layout {
        MemoryLayout::Value(_) | MemoryLayout::Padding(_) => false,
        MemoryLayout::Struct(s) => s.members().iter().any(has_zero_array),
        MemoryLayout::Union(u) => u.members().iter().any(has_zero_array),
        MemoryLayout::Sequence(s) => s.count() == 0 || has_zero_array(s.element()),
    }
}

/// Whether gcc and clang may classify `t` differently: a struct with floating-point leaves and
/// a zero-length array (gcc: never an HFA; clang: sometimes).
fn gcc_only(t: &CType) -> bool {
    let mut s = Scan::default();
    scan(&t.layout, &mut s, 0);
    s.floats > 0 && has_zero_array(&t.layout)
}

// ---------------------------------------------------------------------------------------------
// A symbolic interpreter of the PowerPC assembly the compilers emit for these small functions.

/// What one byte holds. Register bytes are numbered by significance (byte 0 is the low-order
/// byte), as little-endian memory holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sym {
    Unknown,
    Zero,
    Ones,
    /// The sign fill of the byte inside (all ones or all zeros by its top bit).
    Sign(Box<Sym>),
    /// Byte `j` of argument GPR `r(3 + n)` at entry.
    X(u8, u8),
    /// Byte `j` of argument FPR `f(1 + n)` at entry.
    F(u8, u8),
    /// Byte `j` of the `float` made (`stfs`, `xscvdpspn`) from the double in `f(1 + n)` at
    /// entry.
    Narrowed(u8, u8),
    /// Incoming parameter-save-area byte at this offset from the entry stack pointer.
    Stack(i64),
    /// Byte at this offset behind the pointer passed in `r(3 + n)`.
    Ref(u8, i64),
    /// Byte `b` of global `g`.
    Global(String, i64),
    /// Byte `j` of the address `sp_entry + off` (a pointer to a local buffer).
    SpAddr(i64, u8),
    /// Byte `j` of the double made (`lfs`, `xscvspdpn`) from the `float` of these 4 bytes.
    Widened(Vec<Sym>, u8),
}

/// The fill byte of a sign extension from `top` (the highest byte kept).
fn sign_of(top: &Sym) -> Sym {
    match top {
        Sym::Zero => Sym::Zero,
        Sym::Ones => Sym::Ones,
        Sym::Sign(_) => top.clone(),
        Sym::Unknown => Sym::Unknown,
        other => Sym::Sign(Box::new(other.clone())),
    }
}

/// The 8 bytes of the double made from the `float` of `single` (4 bytes).
fn widen(single: &[Sym]) -> Vec<Sym> {
    if single.contains(&Sym::Unknown) {
        return vec![Sym::Unknown; 8];
    }
    (0..8).map(|j| Sym::Widened(single.to_vec(), j)).collect()
}

/// The 4 bytes of the `float` made from the double of `double` (8 bytes).
fn narrow(double: &[Sym]) -> Vec<Sym> {
    if let Sym::Widened(v, 0) = &double[0] {
        if (0..8).all(|j| double[j] == Sym::Widened(v.clone(), j as u8)) {
            return v.to_vec();
        }
    }
    if let Sym::F(n, 0) = double[0] {
        if (0..8).all(|j| double[j] == Sym::F(n, j as u8)) {
            return (0..4).map(|j| Sym::Narrowed(n, j)).collect();
        }
    }
    vec![Sym::Unknown; 4]
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Base {
    Sp,
    Global(String),
    Ref(u8),
}

#[derive(Debug, Clone)]
enum Val {
    Bytes(Vec<Sym>),
    Addr(Base, i64),
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

/// A register number: `9`, `r9`, `%r9`, `f9`, `vs9` (the kind is the instruction's).
fn parse_num(s: &str) -> Option<u8> {
    let s = s.trim().trim_start_matches('%');
    let s = s
        .strip_prefix("vs")
        .or_else(|| s.strip_prefix('r'))
        .or_else(|| s.strip_prefix('f'))
        .unwrap_or(s);
    s.parse::<u8>().ok().filter(|&n| n < 64)
}

/// `sym@toc@ha`, `sym+8@toc@l` → (`sym`, 8) and whether it is the high part (a displacement
/// after the relocation, clang's `sym@toc@l+4`, is [`toc_extra`]'s).
fn parse_toc(s: &str) -> Option<(String, i64, bool)> {
    let s = s.trim();
    let (body, high) = if let Some((b, _)) = s.split_once("@toc@ha") {
        (b, true)
    } else if let Some((b, _)) = s.split_once("@toc@l") {
        (b, false)
    } else {
        return None;
    };
    let (name, k) = match body.rsplit_once('+') {
        Some((n, o)) => (n.to_string(), parse_imm(o)?),
        None => (body.to_string(), 0),
    };
    Some((name, k, high))
}

/// The TOC entries of an assembly file: `.LCn` → the symbol whose address it holds (gcc's
/// `.quad sym`, clang's `.tc sym[TC],sym`, and `.set` aliases).
fn toc_entries(asm: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut alias = Vec::new();
    let mut label: Option<String> = None;
    for line in asm.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(l) = line.strip_suffix(':') {
            label = Some(l.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix(".set") {
            if let Some((a, b)) = rest.trim().split_once(',') {
                alias.push((a.trim().to_string(), b.trim().to_string()));
            }
            continue;
        }
        let target = if let Some(rest) = line.strip_prefix(".quad") {
            Some(rest.trim().to_string())
        } else if let Some(rest) = line.strip_prefix(".tc") {
            rest.split(',').nth(1).map(|t| t.trim().to_string())
        } else {
            None
        };
        // Only local labels are TOC entries (a global's own data may be a `.quad` too).
        if let (Some(l), Some(t)) = (label.take(), target) {
            if l.starts_with(".L") {
                map.insert(l, t);
            }
        }
    }
    for _ in 0..4 {
        for (a, b) in &alias {
            if let Some(t) = map.get(b).cloned() {
                map.insert(a.clone(), t);
            }
        }
    }
    map
}

struct Machine<'t> {
    gpr: Vec<Val>,
    /// VSRs 0..64, 16 bytes each: bytes 0..8 are doubleword 0 (the FPR of VSRs 0..32) by
    /// significance, bytes 8..16 doubleword 1.
    vsr: Vec<Vec<Sym>>,
    /// Stores to the frame (key: offset from the entry sp) and to other memory.
    frame: HashMap<i64, Sym>,
    memory: HashMap<(Base, i64), Sym>,
    /// GPRs holding a known constant.
    consts: HashMap<u8, i64>,
    toc: &'t HashMap<String, String>,
}

/// The bytes of a constant: its 0x00 and 0xff bytes are known, the others are not.
fn const_bytes(c: i64) -> Vec<Sym> {
    (0..8)
        .map(|j| match (c >> (8 * j)) & 0xff {
            0 => Sym::Zero,
            0xff => Sym::Ones,
            _ => Sym::Unknown,
        })
        .collect()
}

/// A 64-bit rotate left by `sh` bits then a mask of the bits of significance `lo..=hi`, byte
/// by byte; bytes outside the mask come from `outside` (zero, or the target of an insert).
/// `None` when the shift or mask is not whole bytes.
fn rotate_mask(src: &[Sym], sh: i64, lo: i64, hi: i64, outside: &[Sym]) -> Option<Vec<Sym>> {
    if sh % 8 != 0 || lo % 8 != 0 || (hi + 1) % 8 != 0 || lo > hi {
        return None;
    }
    let k = (sh / 8) as usize;
    Some(
        (0..8)
            .map(|b| {
                if (lo / 8..=hi / 8).contains(&(b as i64)) {
                    src[(b + 8 - k) % 8].clone()
                } else {
                    outside[b].clone()
                }
            })
            .collect(),
    )
}

impl<'t> Machine<'t> {
    fn new(toc: &'t HashMap<String, String>) -> Machine<'t> {
        let gpr = (0..32u8)
            .map(|n| match n {
                1 => Val::Addr(Base::Sp, 0),
                3..=10 => Val::Bytes((0..8).map(|j| Sym::X(n - 3, j)).collect()),
                _ => Val::Bytes(vec![Sym::Unknown; 8]),
            })
            .collect();
        let vsr = (0..64u8)
            .map(|n| {
                let mut v = vec![Sym::Unknown; 16];
                if (1..=13).contains(&n) {
                    for j in 0..8 {
                        v[j as usize] = Sym::F(n - 1, j);
                    }
                }
                v
            })
            .collect();
        Machine {
            gpr,
            vsr,
            frame: HashMap::new(),
            memory: HashMap::new(),
            consts: HashMap::new(),
            toc,
        }
    }

    /// A GPR's 8 bytes (addresses of the frame become address bytes).
    fn bytes(&self, r: u8) -> Vec<Sym> {
        match &self.gpr[r as usize] {
            Val::Bytes(b) => b.clone(),
            Val::Addr(Base::Sp, o) => (0..8).map(|j| Sym::SpAddr(*o, j)).collect(),
            Val::Addr(..) => vec![Sym::Unknown; 8],
        }
    }

    fn set(&mut self, r: u8, v: Val) {
        self.consts.remove(&r);
        self.gpr[r as usize] = v;
    }

    fn set_bytes(&mut self, r: u8, mut b: Vec<Sym>, fill: Sym) {
        b.resize(8, fill);
        self.set(r, Val::Bytes(b));
    }

    fn unknown(&mut self, r: u8) {
        self.set(r, Val::Bytes(vec![Sym::Unknown; 8]));
    }

    fn set_dw0(&mut self, v: u8, b: Vec<Sym>) {
        self.vsr[v as usize][..8].clone_from_slice(&b[..8]);
        for s in &mut self.vsr[v as usize][8..] {
            *s = Sym::Unknown;
        }
    }

    /// A GPR used as an address.
    fn addr(&self, r: u8) -> Option<(Base, i64)> {
        match &self.gpr[r as usize] {
            Val::Addr(b, o) => Some((b.clone(), *o)),
            Val::Bytes(b) => match b[0].clone() {
                Sym::X(n, 0) if (0..8).all(|j| b[j] == Sym::X(n, j as u8)) => {
                    Some((Base::Ref(n), 0))
                }
                Sym::SpAddr(o, 0) if (0..8).all(|j| b[j] == Sym::SpAddr(o, j as u8)) => {
                    Some((Base::Sp, o))
                }
                _ => None,
            },
        }
    }

    /// A D-form operand `d(rA)`: an immediate or a `@toc@l` displacement.
    fn d_form(&self, op: &str) -> Option<(Base, i64)> {
        let op = op.trim();
        let open = op.rfind('(')?;
        let (disp, reg) = (&op[..open], &op[open + 1..op.len() - 1]);
        let r = parse_num(reg)?;
        if r == 0 {
            return None;
        }
        let (base, off) = self.addr(r)?;
        if disp.is_empty() {
            return Some((base, off));
        }
        if let Some((sym, k, false)) = parse_toc(disp) {
            // The high part already added the symbol and its offset; clang adds a
            // displacement after the relocation (`sym@toc@l+4`).
            let extra = match disp.split_once("@toc@l").map(|(_, e)| e.trim()) {
                Some("") | None => 0,
                Some(e) => parse_imm(e.trim_start_matches('+'))?,
            };
            return match &base {
                Base::Global(g) if *g == sym && off == k => Some((base, off + extra)),
                _ => None,
            };
        }
        Some((base, off + parse_imm(disp)?))
    }

    /// An X-form address `(rA|0) + rB`.
    fn x_form(&self, ra: &str, rb: &str) -> Option<(Base, i64)> {
        let (a, b) = (parse_num(ra)?, parse_num(rb)?);
        let c = |r: u8| self.consts.get(&r).copied();
        if a == 0 {
            return self.addr(b);
        }
        match (self.addr(a), self.addr(b)) {
            (Some((base, o)), None) => Some((base, o + c(b)?)),
            (None, Some((base, o))) => Some((base, o + c(a)?)),
            _ => None,
        }
    }

    /// The address of a load or store: D-form `d(rA)` (operand 1) or X-form (operands 1, 2).
    fn ea(&self, mnemonic: &str, ops: &[String]) -> Option<(Base, i64)> {
        if mnemonic.ends_with('x') && ops.len() == 3 {
            self.x_form(&ops[1], &ops[2])
        } else {
            self.d_form(ops.get(1)?)
        }
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
            Base::Ref(n) => self
                .memory
                .get(&(base.clone(), at))
                .cloned()
                .unwrap_or(Sym::Ref(*n, at)),
        }
    }

    fn load(&self, base: &Base, at: i64, n: usize) -> Vec<Sym> {
        (0..n)
            .map(|j| self.load_byte(base, at + j as i64))
            .collect()
    }

    fn store(&mut self, base: &Base, at: i64, bytes: &[Sym]) {
        for (j, s) in bytes.iter().enumerate() {
            let k = at + j as i64;
            match base {
                Base::Sp => {
                    self.frame.insert(k, s.clone());
                }
                _ => {
                    self.memory.insert((base.clone(), k), s.clone());
                }
            }
        }
    }

    /// Runs one instruction; returns `Some(target)` at a call or tail call, `Some("ret")` at a
    /// return.
    fn step(&mut self, mnemonic: &str, ops: &[String]) -> Option<String> {
        let konst = self.constant(mnemonic, ops);
        let out = self.step_symbolic(mnemonic, ops);
        if let (Some(d), Some(c)) = (ops.first().and_then(|s| parse_num(s)), konst) {
            self.gpr[d as usize] = Val::Bytes(const_bytes(c));
            self.consts.insert(d, c);
        }
        if out.as_deref() == Some("memcpy") {
            self.memcpy();
            return None;
        }
        out
    }

    /// The value an instruction computes from constants, if it does.
    fn constant(&self, mnemonic: &str, ops: &[String]) -> Option<i64> {
        let c = |i: usize| {
            ops.get(i)
                .and_then(|s| parse_num(s))
                .and_then(|n| self.consts.get(&n).copied())
        };
        let imm = |i: usize| ops.get(i).and_then(|s| parse_imm(s));
        Some(match mnemonic {
            "li" => imm(1)?,
            "lis" => imm(1)? << 16,
            "mr" => c(1)?,
            "addi" => c(1)?.wrapping_add(imm(2)?),
            "addis" => c(1)?.wrapping_add(imm(2)? << 16),
            "ori" => c(1)? | imm(2)?,
            "oris" => c(1)? | (imm(2)? << 16),
            "sldi" => c(1)?.wrapping_shl(imm(2)? as u32),
            "srdi" => ((c(1)? as u64) >> imm(2)?) as i64,
            "rldicr" => {
                let (sh, me) = (imm(2)?, imm(3)?);
                c(1)?.rotate_left(sh as u32) & (-1i64 << (63 - me))
            }
            "add" => c(1)?.wrapping_add(c(2)?),
            "and" => c(1)? & c(2)?,
            "or" => c(1)? | c(2)?,
            _ => return None,
        })
    }

    /// `memcpy(r3, r4, r5)` with a constant length: the bytes move; the volatile registers
    /// other than `r3` are lost.
    fn memcpy(&mut self) {
        let (dst, src, n) = (self.addr(3), self.addr(4), self.consts.get(&5).copied());
        if let (Some((db, d)), Some((sb, s)), Some(n)) = (dst, src, n) {
            for j in 0..n {
                let b = self.load_byte(&sb, s + j);
                self.store(&db, d + j, &[b]);
            }
        }
        for r in [0, 4, 5, 6, 7, 8, 9, 10, 11, 12] {
            self.unknown(r);
        }
        for v in (0..14).chain(32..52) {
            self.vsr[v] = vec![Sym::Unknown; 16];
        }
    }

    /// `step` without the constants and calls of known functions.
    fn step_symbolic(&mut self, mnemonic: &str, ops: &[String]) -> Option<String> {
        let num = |i: usize| ops.get(i).and_then(|s| parse_num(s));
        let imm = |i: usize| ops.get(i).and_then(|s| parse_imm(s));
        let target = |i: usize| {
            ops.get(i).map(|s| {
                s.trim()
                    .trim_end_matches("@notoc")
                    .trim_end_matches("@plt")
                    .to_string()
            })
        };
        // Extended rotate mnemonics as (base form, SH, MB or ME).
        let rot = match mnemonic {
            "sldi" => Some(("rldicr", imm(2)?, 63 - imm(2)?)),
            "srdi" => Some(("rldicl", (64 - imm(2)?) % 64, imm(2)?)),
            "clrldi" => Some(("rldicl", 0, imm(2)?)),
            "rotldi" => Some(("rldicl", imm(2)?, 0)),
            "clrrdi" => Some(("rldicr", 0, 63 - imm(2)?)),
            "rldicl" | "rldicr" | "rldic" | "rldimi" => Some((mnemonic, imm(2)?, imm(3)?)),
            "insrdi" => {
                let (n, b) = (imm(2)?, imm(3)?);
                Some(("rldimi", 64 - (b + n), b))
            }
            _ => None,
        };
        if let Some((form, sh, m)) = rot {
            let (d, s) = (num(0)?, num(1)?);
            let src = self.bytes(s);
            let zeros = vec![Sym::Zero; 8];
            let (lo, hi, outside) = match form {
                "rldicl" => (0, 63 - m, zeros),
                "rldicr" => (63 - m, 63, zeros),
                "rldic" => (sh, 63 - m, zeros),
                _ => (sh, 63 - m, self.bytes(d)),
            };
            match rotate_mask(&src, sh, lo, hi, &outside) {
                Some(v) => self.set(d, Val::Bytes(v)),
                None => self.unknown(d),
            }
            return None;
        }
        let word = match mnemonic {
            "slwi" => Some((imm(2)?, 0, 31 - imm(2)?)),
            "srwi" => Some(((32 - imm(2)?) % 32, imm(2)?, 31)),
            "clrlwi" => Some((0, imm(2)?, 31)),
            "rotlwi" => Some((imm(2)?, 0, 31)),
            "rlwinm" => Some((imm(2)?, imm(3)?, imm(4)?)),
            _ => None,
        };
        if let Some((sh, mb, me)) = word {
            let (d, s) = (num(0)?, num(1)?);
            let src = self.bytes(s);
            // The low word rotated (replicated in both halves), masked within the low word.
            let w: Vec<Sym> = (0..8).map(|b| src[b % 4].clone()).collect();
            match (mb <= me)
                .then(|| rotate_mask(&w, sh, 31 - me, 31 - mb, &vec![Sym::Zero; 8]))
                .flatten()
            {
                Some(v) => self.set(d, Val::Bytes(v)),
                None => self.unknown(d),
            }
            return None;
        }
        match mnemonic {
            "bl" => {
                return target(0);
            }
            "b" => {
                let t = target(0)?;
                if !t.starts_with('.') {
                    return Some(t);
                }
            }
            "blr" => return Some("ret".into()),
            "nop" | "mtlr" | "mtctr" | "cmpdi" | "cmpwi" | "cmpld" | "cmplw" | "cmpw" | "cmpd"
            | "cmplwi" | "cmpldi" => {}
            "li" | "lis" => self.unknown(num(0)?),
            "addis" => {
                let d = num(0)?;
                match parse_toc(&ops[2]) {
                    Some((sym, k, true)) => self.set(d, Val::Addr(Base::Global(sym), k)),
                    _ => self.unknown(d),
                }
            }
            "addi" => {
                let (d, s) = (num(0)?, num(1)?);
                let v = if let Some((sym, k, false)) = parse_toc(&ops[2]) {
                    match &self.gpr[s as usize] {
                        Val::Addr(Base::Global(g), o) if *g == sym && *o == k => {
                            Val::Addr(Base::Global(sym), k)
                        }
                        _ => Val::Bytes(vec![Sym::Unknown; 8]),
                    }
                } else {
                    match (s, self.addr(s), imm(2)) {
                        (0, _, _) => Val::Bytes(vec![Sym::Unknown; 8]),
                        (_, Some((b, o)), Some(i)) => Val::Addr(b, o + i),
                        (_, None, Some(0)) => Val::Bytes(self.bytes(s)),
                        _ => Val::Bytes(vec![Sym::Unknown; 8]),
                    }
                };
                self.set(d, v);
            }
            "mr" => {
                let (d, s) = (num(0)?, num(1)?);
                let v = self.gpr[s as usize].clone();
                self.set(d, v);
            }
            "or" | "add" | "xor" => {
                let (d, a, b) = (num(0)?, num(1)?, num(2)?);
                if a == b && mnemonic == "or" {
                    let v = self.gpr[a as usize].clone();
                    self.set(d, v);
                    return None;
                }
                if mnemonic == "add" {
                    // An address plus a constant.
                    let c = |r: u8| self.consts.get(&r).copied();
                    let sum = match (self.addr(a), self.addr(b)) {
                        (Some((base, o)), None) => c(b).map(|k| (base, o + k)),
                        (None, Some((base, o))) => c(a).map(|k| (base, o + k)),
                        _ => None,
                    };
                    if let Some((base, o)) = sum {
                        self.set(d, Val::Addr(base, o));
                        return None;
                    }
                }
                let (ba, bb) = (self.bytes(a), self.bytes(b));
                let v = (0..8)
                    .map(|j| match (&ba[j], &bb[j]) {
                        (Sym::Zero, o) | (o, Sym::Zero) => o.clone(),
                        _ => Sym::Unknown,
                    })
                    .collect();
                self.set(d, Val::Bytes(v));
            }
            "ori" if imm(2) == Some(0) => {
                let (d, s) = (num(0)?, num(1)?);
                let v = self.gpr[s as usize].clone();
                self.set(d, v);
            }
            "and" => {
                let (d, a, b) = (num(0)?, num(1)?, num(2)?);
                let (ba, bb) = (self.bytes(a), self.bytes(b));
                let v = (0..8)
                    .map(|j| match (&ba[j], &bb[j]) {
                        (Sym::Zero, _) | (_, Sym::Zero) => Sym::Zero,
                        (Sym::Ones, o) | (o, Sym::Ones) => o.clone(),
                        _ => Sym::Unknown,
                    })
                    .collect();
                self.set(d, Val::Bytes(v));
            }
            "andi." => {
                let (d, s) = (num(0)?, num(1)?);
                let n = match imm(2) {
                    Some(255) | Some(1) => 1,
                    Some(65535) => 2,
                    _ => {
                        self.unknown(d);
                        return None;
                    }
                };
                let b = self.bytes(s);
                self.set_bytes(d, b[..n].to_vec(), Sym::Zero);
            }
            "extsb" | "extsh" | "extsw" => {
                let (d, s) = (num(0)?, num(1)?);
                let n = match mnemonic {
                    "extsb" => 1,
                    "extsh" => 2,
                    _ => 4,
                };
                let b = self.bytes(s);
                let fill = sign_of(&b[n - 1]);
                self.set_bytes(d, b[..n].to_vec(), fill);
            }
            "sradi" => {
                let (d, s) = (num(0)?, num(1)?);
                let sh = imm(2)?;
                if sh % 8 != 0 {
                    self.unknown(d);
                    return None;
                }
                let b = self.bytes(s);
                let fill = sign_of(&b[7]);
                let k = (sh / 8) as usize;
                let v = (0..8)
                    .map(|j| b.get(j + k).cloned().unwrap_or(fill.clone()))
                    .collect();
                self.set(d, Val::Bytes(v));
            }
            "lbz" | "lhz" | "lha" | "lwz" | "lwa" | "ld" | "lbzx" | "lhzx" | "lhax" | "lwzx"
            | "lwax" | "ldx" => {
                let d = num(0)?;
                let Some((base, at)) = self.ea(mnemonic, ops) else {
                    self.unknown(d);
                    return None;
                };
                let n = match &mnemonic[..2] {
                    "lb" => 1,
                    "lh" => 2,
                    "lw" => 4,
                    _ => 8,
                };
                if n == 8 && at == 0 {
                    if let Base::Global(label) = &base {
                        if let Some(t) = self.toc.get(label) {
                            // A TOC entry: the address of its symbol.
                            let v = Val::Addr(Base::Global(t.clone()), 0);
                            self.set(d, v);
                            return None;
                        }
                    }
                }
                let v = self.load(&base, at, n);
                let fill = if mnemonic.starts_with("lha") || mnemonic.starts_with("lwa") {
                    sign_of(&v[n - 1])
                } else {
                    Sym::Zero
                };
                self.set_bytes(d, v, fill);
            }
            "stb" | "sth" | "stw" | "std" | "stbx" | "sthx" | "stwx" | "stdx" | "stdu" | "stwu" => {
                let s = num(0)?;
                let n = match &mnemonic[..3] {
                    "stb" => 1,
                    "sth" => 2,
                    "stw" => 4,
                    _ => 8,
                };
                let b = self.bytes(s);
                let (base, at) = self.ea(mnemonic, ops)?;
                self.store(&base, at, &b[..n]);
                if mnemonic.ends_with('u') {
                    let r = num(1).or_else(|| {
                        let op = &ops[1];
                        parse_num(&op[op.rfind('(')? + 1..op.len() - 1])
                    })?;
                    self.set(r, Val::Addr(base, at));
                }
            }
            "lfs" | "lfsx" | "lxsspx" | "lfd" | "lfdx" | "lxsdx" | "lfiwzx" | "lfiwax" => {
                let d = num(0)?;
                let Some((base, at)) = self.ea(mnemonic, ops) else {
                    self.set_dw0(d, vec![Sym::Unknown; 8]);
                    return None;
                };
                let v = match mnemonic {
                    "lfs" | "lfsx" | "lxsspx" => widen(&self.load(&base, at, 4)),
                    "lfiwzx" | "lfiwax" => {
                        let mut w = self.load(&base, at, 4);
                        let fill = if mnemonic == "lfiwax" {
                            sign_of(&w[3])
                        } else {
                            Sym::Zero
                        };
                        w.resize(8, fill);
                        w
                    }
                    _ => self.load(&base, at, 8),
                };
                self.set_dw0(d, v);
            }
            "stfs" | "stfsx" | "stxsspx" | "stfd" | "stfdx" | "stxsdx" | "stfiwx" | "stxsiwx" => {
                let s = num(0)?;
                let dw = self.vsr[s as usize][..8].to_vec();
                let (base, at) = self.ea(mnemonic, ops)?;
                let b = match mnemonic {
                    "stfs" | "stfsx" | "stxsspx" => narrow(&dw),
                    "stfiwx" | "stxsiwx" => dw[..4].to_vec(),
                    _ => dw,
                };
                self.store(&base, at, &b);
            }
            "lxvd2x" | "lxvw4x" => {
                let d = num(0)?;
                let v = match self.x_form(&ops[1], &ops[2]) {
                    Some((base, at)) => {
                        let m = self.load(&base, at, 16);
                        if mnemonic == "lxvd2x" {
                            m
                        } else {
                            [&m[4..8], &m[0..4], &m[12..16], &m[8..12]].concat()
                        }
                    }
                    None => vec![Sym::Unknown; 16],
                };
                self.vsr[d as usize] = v;
            }
            "lvx" => {
                // A vector register (VSR 32 + n), copied as memory holds it.
                let d = 32 + num(0)? as usize;
                let v = match self.x_form(&ops[1], &ops[2]) {
                    Some((base, at)) => self.load(&base, at & !15, 16),
                    None => vec![Sym::Unknown; 16],
                };
                self.vsr[d] = v;
            }
            "stvx" => {
                let v = self.vsr[32 + num(0)? as usize].clone();
                let (base, at) = self.x_form(&ops[1], &ops[2])?;
                self.store(&base, at & !15, &v);
            }
            "stxvd2x" | "stxvw4x" => {
                let s = num(0)?;
                let v = self.vsr[s as usize].clone();
                let (base, at) = self.x_form(&ops[1], &ops[2])?;
                let m = if mnemonic == "stxvd2x" {
                    v
                } else {
                    [&v[4..8], &v[0..4], &v[12..16], &v[8..12]].concat()
                };
                self.store(&base, at, &m);
            }
            "fmr" | "frsp" | "xxlor" => {
                let (d, s) = (num(0)?, num(1)?);
                if mnemonic == "xxlor" && num(2) != Some(s) {
                    self.vsr[d as usize] = vec![Sym::Unknown; 16];
                    return None;
                }
                let v = self.vsr[s as usize].clone();
                if mnemonic == "xxlor" {
                    self.vsr[d as usize] = v;
                } else {
                    self.set_dw0(d, v[..8].to_vec());
                }
            }
            "xxlxor" if num(1) == num(2) => {
                self.vsr[num(0)? as usize] = vec![Sym::Zero; 16];
            }
            "xxswapd" | "xxpermdi" | "xxmrghd" | "xxmrgld" => {
                let (d, a) = (num(0)?, num(1)?);
                let b = num(2).unwrap_or(a);
                let dm = match mnemonic {
                    "xxswapd" => 2,
                    "xxmrghd" => 0,
                    "xxmrgld" => 3,
                    _ => imm(3)?,
                };
                let (va, vb) = (&self.vsr[a as usize], &self.vsr[b as usize]);
                let d0 = if dm & 2 != 0 { &va[8..] } else { &va[..8] };
                let d1 = if dm & 1 != 0 { &vb[8..] } else { &vb[..8] };
                let v = [d0, d1].concat();
                self.vsr[d as usize] = v;
            }
            "xscvdpspn" => {
                let (d, s) = (num(0)?, num(1)?);
                let single = narrow(&self.vsr[s as usize][..8]);
                let v = [single.clone(), single].concat();
                self.set_dw0(d, v);
            }
            "xscvspdpn" => {
                let (d, s) = (num(0)?, num(1)?);
                let v = widen(&self.vsr[s as usize][4..8]);
                self.set_dw0(d, v);
            }
            "mfvsrd" | "mffprd" => {
                let (d, s) = (num(0)?, num(1)?);
                let v = self.vsr[s as usize][..8].to_vec();
                self.set(d, Val::Bytes(v));
            }
            "mfvsrwz" | "mffprwz" => {
                let (d, s) = (num(0)?, num(1)?);
                let v = self.vsr[s as usize][..4].to_vec();
                self.set_bytes(d, v, Sym::Zero);
            }
            "mtvsrd" | "mtfprd" => {
                let (d, s) = (num(0)?, num(1)?);
                let v = self.bytes(s);
                self.set_dw0(d, v);
            }
            "mtvsrwz" | "mtfprwz" | "mtvsrwa" | "mtfprwa" => {
                let (d, s) = (num(0)?, num(1)?);
                let mut v = self.bytes(s)[..4].to_vec();
                let fill = if mnemonic.ends_with('a') {
                    sign_of(&v[3])
                } else {
                    Sym::Zero
                };
                v.resize(8, fill);
                self.set_dw0(d, v);
            }
            m if m.starts_with('f') || m.starts_with('x') || m.starts_with("lxv") => {
                if let Some(d) = num(0) {
                    self.vsr[d as usize] = vec![Sym::Unknown; 16];
                }
            }
            m if m.starts_with("st") => {}
            _ => {
                if let Some(d) = num(0) {
                    self.unknown(d);
                }
            }
        }
        None
    }
}

/// Runs `body` until the first call/tail call to `until` (or `ret` when `until` is "ret").
fn run<'t>(body: &[Insn], until: &str, toc: &'t HashMap<String, String>) -> Option<Machine<'t>> {
    let mut m = Machine::new(toc);
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

/// What the checks may assume of the compiler.
#[derive(Clone, Copy, PartialEq)]
struct Mode {
    /// The negative check: an `unsigned int` expected sign-extended.
    wrong_u32: bool,
    /// clang: the save-area bytes of the members of a named HFA split by `f13` that went in
    /// FPRs are left unwritten (see the module docs).
    split_hfa_fpr_members_unwritten: bool,
}

/// The upper bytes a conversion writes above a value whose top byte is `top`.
fn fill(conv: Conversion, top: &Sym) -> Sym {
    match conv {
        Conversion::SignExtend => sign_of(top),
        _ => Sym::Zero,
    }
}

/// The PSA byte of `Location::Stack(o)`: its offset from the stack pointer at the call.
const PSA: i64 = 32;

/// What the callee finds of byte `j` of a move to `loc` with `conv`.
fn incoming(loc: Location, conv: Conversion, j: i64) -> Sym {
    match loc {
        Location::Int(n) => Sym::X(n, j as u8),
        Location::Vector(n) if conv == Conversion::FloatToDouble => Sym::Narrowed(n, j as u8),
        Location::Vector(n) => Sym::F(n, j as u8),
        Location::Stack(o) => Sym::Stack(PSA + o as i64 + j),
    }
}

/// The upcall side: `callee{i}` stores each argument byte to global `g{i}_{k}`; each byte must
/// come from one of the places the plan puts it.
fn check_callee(
    i: usize,
    sig: &Sig,
    p: &CallPlan,
    body: &[Insn],
    toc: &HashMap<String, String>,
    r: &mut Report,
) {
    let Some(m) = run(body, "ret", toc) else {
        r.fail(format!("callee{i}: did not reach blr"));
        return;
    };
    for (k, a) in sig.args.iter().enumerate() {
        let g = Base::Global(format!("g{i}_{k}"));
        let ap = &p.args()[k];
        for (b, leaf) in leaf_mask(&a.layout).into_iter().enumerate() {
            if !leaf {
                continue;
            }
            let wants: Vec<Sym> = ap
                .moves
                .iter()
                .filter(|mv| {
                    (mv.offset as usize..mv.offset as usize + mv.size as usize).contains(&b)
                })
                .map(|mv| incoming(mv.to, mv.conv, (b - mv.offset as usize) as i64))
                .collect();
            if wants.is_empty() {
                r.fail(format!("callee{i} arg {k} byte {b}: no move in the plan"));
                return;
            }
            let got = m.memory.get(&(g.clone(), b as i64));
            if !got.is_some_and(|s| wants.contains(s)) {
                r.fail(format!(
                    "callee{i} ({}) arg {k} `{}` byte {b}: compiler reads {got:?}, plan says one of {wants:?}",
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
/// where each of the plan's moves says, and the bytes above each integer scalar are what its
/// conversion writes.
fn check_caller(
    i: usize,
    sig: &Sig,
    p: &CallPlan,
    mode: Mode,
    body: &[Insn],
    toc: &HashMap<String, String>,
    r: &mut Report,
) {
    let Some(m) = run(body, &format!("f{i}"), toc) else {
        r.fail(format!("call{i}: no call of f{i} found"));
        return;
    };
    let content = |loc: Location, j: i64| -> Sym {
        match loc {
            Location::Int(n) => m.bytes(3 + n)[j as usize].clone(),
            Location::Vector(n) => m.vsr[1 + n as usize][j as usize].clone(),
            Location::Stack(o) => match &m.gpr[1] {
                Val::Addr(Base::Sp, s) => m.load_byte(&Base::Sp, s + PSA + o as i64 + j),
                _ => Sym::Unknown,
            },
        }
    };
    if let Some(h) = p.hidden_return_pointer() {
        let ptr: Vec<Sym> = (0..8).map(|j| content(h, j)).collect();
        if !matches!(ptr[0], Sym::SpAddr(t, 0) if (0..8).all(|j| ptr[j] == Sym::SpAddr(t, j as u8)))
        {
            r.fail(format!(
                "call{i} ({}): the result pointer in {h:?} is {ptr:?}",
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
        let variadic = sig.first_variadic.is_some_and(|f| k >= f);
        let in_fpr = |b: i64| {
            ap.moves.iter().any(|mv| {
                matches!(mv.to, Location::Vector(_))
                    && (mv.offset as i64..mv.offset as i64 + mv.size as i64).contains(&b)
            })
        };
        for mv in &ap.moves {
            let (o, size) = (mv.offset as i64, mv.size as i64);
            if mv.conv == Conversion::FloatToDouble {
                let single: Vec<Sym> = (0..4).map(|j| Sym::Global(g.clone(), o + j)).collect();
                let want = widen(&single);
                for (j, w) in want.iter().enumerate() {
                    let got = content(mv.to, j as i64);
                    if got != *w {
                        fail(
                            r,
                            format!(
                                "byte {j} of the double of bytes {o}.. in {:?}: {got:?}",
                                mv.to
                            ),
                        );
                        return;
                    }
                    r.checked += 1;
                }
                continue;
            }
            for j in 0..size {
                if !mask[(o + j) as usize] {
                    continue;
                }
                if mode.split_hfa_fpr_members_unwritten
                    && !variadic
                    && matches!(mv.to, Location::Stack(_))
                    && in_fpr(o + j)
                {
                    continue;
                }
                let want = Sym::Global(g.clone(), o + j);
                let got = content(mv.to, j);
                if got != want {
                    fail(
                        r,
                        format!(
                            "byte {}: plan says {:?}+{j}, compiler put {got:?} there",
                            o + j,
                            mv.to
                        ),
                    );
                    return;
                }
                r.checked += 1;
            }
            // The bytes above an integer scalar: its conversion's fill, in a GPR or the save
            // area alike. Above a `float`'s bits and an aggregate's last bytes they are
            // unspecified.
            if size == 8 || scalar_kind.is_none_or(|k| k.is_float()) {
                continue;
            }
            let conv = if mode.wrong_u32 && scalar_kind == Some(ScalarKind::U32) {
                Conversion::SignExtend
            } else {
                mv.conv
            };
            let want = fill(conv, &Sym::Global(g.clone(), o + size - 1));
            for j in size..8 {
                let got = content(mv.to, j);
                if got != want {
                    fail(
                        r,
                        format!(
                            "byte {j} of {:?} above the value: {conv:?} says {want:?}, found {got:?}",
                            mv.to
                        ),
                    );
                    return;
                }
            }
            r.checked += 1;
        }
    }
}

/// The conversion of an integer return value (the argument rule: by type).
fn return_conversion(kind: ScalarKind) -> Conversion {
    if kind.is_signed() && kind.byte_size() < 8 {
        Conversion::SignExtend
    } else {
        Conversion::Bytes
    }
}

/// The return side: at `blr` of `ret{i}`, the bytes of `gr{i}` are where the plan says.
fn check_return(
    i: usize,
    sig: &Sig,
    p: &CallPlan,
    body: &[Insn],
    toc: &HashMap<String, String>,
    r: &mut Report,
) {
    let Some(ret) = &sig.ret else { return };
    let Some(m) = run(body, "ret", toc) else {
        r.fail(format!("ret{i}: did not reach blr"));
        return;
    };
    let g = format!("gr{i}");
    let reg = |reg: Register| match reg {
        Register::Int(n) => m.bytes(3 + n),
        Register::Vector(n) => m.vsr[1 + n as usize][..8].to_vec(),
    };
    let fail = |r: &mut Report, what: String| {
        r.fail(format!("ret{i} `{}` ({:?}): {what}", ret.spelling, p.ret()))
    };
    let size = ret.layout.byte_size();
    let float_kind = ret
        .layout
        .as_value()
        .map(|v| v.kind())
        .filter(|k| k.is_float());
    // (register, offset, size) of each part of the result.
    let parts: Vec<(Register, usize, usize)> = match p.ret() {
        ReturnPlan::Scalar(reg) => vec![(*reg, 0, size)],
        ReturnPlan::Registers(moves) => moves
            .iter()
            .map(|mv| (mv.from, mv.offset as usize, mv.size as usize))
            .collect(),
        ReturnPlan::InMemory => {
            for (b, _) in leaf_mask(&ret.layout)
                .iter()
                .enumerate()
                .filter(|(_, l)| **l)
            {
                let got = m
                    .memory
                    .get(&(Base::Ref(0), b as i64))
                    .cloned()
                    .unwrap_or(Sym::Unknown);
                if got != Sym::Global(g.clone(), b as i64) {
                    fail(r, format!("byte {b} in memory at r3: {got:?}"));
                    return;
                }
                r.checked += 1;
            }
            return;
        }
        ReturnPlan::Void => {
            fail(r, "void plan".into());
            return;
        }
    };
    let mask = leaf_mask(&ret.layout);
    for (b, _) in mask.iter().enumerate().filter(|(_, l)| **l) {
        if !parts.iter().any(|&(_, o, s)| (o..o + s).contains(&b)) {
            fail(r, format!("byte {b}: no move in the plan"));
            return;
        }
    }
    for &(from, o, s) in &parts {
        let bytes = reg(from);
        if matches!(from, Register::Vector(_)) && s == 4 {
            // A `float` in double format.
            let single: Vec<Sym> = (0..4)
                .map(|j| Sym::Global(g.clone(), (o + j) as i64))
                .collect();
            if bytes != widen(&single) {
                fail(r, format!("the float at {o} in {from:?}: {bytes:?}"));
                return;
            }
            r.checked += 8;
            continue;
        }
        for j in 0..s {
            if mask[o + j] && bytes[j] != Sym::Global(g.clone(), (o + j) as i64) {
                fail(r, format!("byte {} in {from:?}: {:?}", o + j, bytes[j]));
                return;
            }
            r.checked += 1;
        }
        if let (Register::Int(_), Some(v), None) = (from, ret.layout.as_value(), float_kind) {
            if s < 8 {
                let want = fill(
                    return_conversion(v.kind()),
                    &Sym::Global(g.clone(), (s - 1) as i64),
                );
                if bytes[s..].iter().any(|b| *b != want) {
                    fail(
                        r,
                        format!("bytes above the value: {:?}, want {want:?}", &bytes[s..]),
                    );
                    return;
                }
                r.checked += 1;
            }
        }
    }
}

/// Checks every signature's plan against the assembly; `all_variadic` plans every argument as
/// variadic (the negative check). Returns the report and the signatures skipped.
fn check_all(
    sigs: &[Sig],
    funcs: &Functions,
    toc: &HashMap<String, String>,
    mode: Mode,
    skip: &dyn Fn(&Sig) -> bool,
    all_variadic: bool,
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
        let fv = if all_variadic {
            Some(0)
        } else {
            sig.first_variadic
        };
        let p = plan(&sig.descriptor(), fv)
            .unwrap_or_else(|e| panic!("plan of {}: {e}", sig_text(sig)));
        if sig.first_variadic.is_none() && !all_variadic {
            // The callee returns void: no result pointer shifts its arguments.
            let args = sig.args.iter().map(|a| a.layout.clone());
            let pv = plan(&FunctionDescriptor::of_void(args), fv).unwrap();
            let body = funcs
                .get(&format!("callee{i}"))
                .expect("callee in the assembly");
            check_callee(i, sig, &pv, body, toc, &mut r);
        }
        let body = funcs
            .get(&format!("call{i}"))
            .expect("caller in the assembly");
        check_caller(i, sig, &p, mode, body, toc, &mut r);
        if sig.ret.is_some() && !all_variadic {
            check_return(i, sig, &p, &funcs[&format!("ret{i}")], toc, &mut r);
        }
    }
    (r, skipped)
}

/// Leaves, floats, and what else is inside `layout`.
#[derive(Default)]
struct Scan {
    leaves: usize,
    floats: usize,
    union: bool,
    nested: bool,
    empty_member: bool,
}

fn scan(l: &MemoryLayout, s: &mut Scan, depth: usize) {
    match l {
        MemoryLayout::Value(v) => {
            s.leaves += 1;
            s.floats += usize::from(v.kind().is_float());
        }
        MemoryLayout::Padding(_) => {}
        MemoryLayout::Struct(st) => {
            if depth > 0 {
                s.nested = true;
                s.empty_member |= st.members().is_empty();
            }
            st.members().iter().for_each(|m| scan(m, s, depth + 1));
        }
        MemoryLayout::Union(u) => {
            s.union = true;
            u.members().iter().for_each(|m| scan(m, s, depth + 1));
        }
        MemoryLayout::Sequence(q) => {
            s.nested = true;
            for _ in 0..q.count() {
                scan(q.element(), s, depth + 1);
            }
        }
    }
}

/// How often each rule is exercised by the signatures' plans (`skip`ped ones left out).
fn coverage(sigs: &[Sig], skip: &dyn Fn(&Sig) -> bool) -> Vec<(&'static str, usize)> {
    let mut c: Vec<(&'static str, usize)> = Vec::new();
    let mut bump = |name: &'static str| match c.iter_mut().find(|(n, _)| *n == name) {
        Some((_, k)) => *k += 1,
        None => c.push((name, 1)),
    };
    for sig in sigs.iter().filter(|s| !skip(s)) {
        let p = plan(&sig.descriptor(), sig.first_variadic).unwrap();
        // The next doubleword, from the previous argument's last move.
        let mut next_dw = usize::from(p.hidden_return_pointer().is_some());
        let mut prev_fp = false;
        for (k, a) in sig.args.iter().enumerate() {
            let ap = &p.args()[k];
            let variadic = sig.first_variadic.is_some_and(|f| k >= f);
            let locs: Vec<Location> = ap.moves.iter().map(|m| m.to).collect();
            let on_stack = locs.iter().any(|l| matches!(l, Location::Stack(_)));
            let gprs = locs
                .iter()
                .filter(|l| matches!(l, Location::Int(_)))
                .count();
            let fprs = locs
                .iter()
                .filter(|l| matches!(l, Location::Vector(_)))
                .count();
            let first_dw = locs.iter().find_map(|l| match l {
                Location::Int(n) => Some(*n as usize),
                Location::Stack(o) => Some(*o as usize / 8),
                Location::Vector(_) => None,
            });
            let mut s = Scan::default();
            scan(&a.layout, &mut s, 0);
            let class = classify(&a.layout);
            if prev_fp && matches!(class, ArgClass::Integer(_)) && gprs == 1 {
                if let Some(Location::Int(n)) = locs.first() {
                    if *n > 0 {
                        bump("GPR skipped by an FP argument");
                    }
                }
            }
            prev_fp = false;
            match class {
                ArgClass::Integer(kind) => {
                    let narrow = kind.byte_size() < 8;
                    if on_stack {
                        bump("integer in the save area past r10");
                        if narrow {
                            bump("narrow integer extended in the save area");
                        }
                    } else if narrow && kind.is_signed() {
                        bump("narrow signed sign-extended in a GPR");
                    } else if narrow {
                        bump("narrow unsigned zero-extended in a GPR");
                    }
                }
                ArgClass::Float(kind) => {
                    prev_fp = fprs > 0;
                    let is_f32 = kind == ScalarKind::F32;
                    if variadic {
                        match (fprs, gprs, on_stack) {
                            (1, 1, _) if is_f32 => bump("variadic float promoted, FPR and GPR"),
                            (1, 1, _) => bump("variadic double in FPR and GPR"),
                            (1, 0, true) => bump("variadic FP in FPR and save area"),
                            (0, _, _) => bump("variadic FP past f13: doubleword only"),
                            _ => {}
                        }
                    } else if fprs == 1 {
                        bump(if is_f32 {
                            "float in an FPR (double format)"
                        } else {
                            "double in an FPR"
                        });
                    } else if gprs == 1 {
                        bump("float in a GPR, f13 used by HFAs");
                    } else if is_f32 {
                        bump("float past f13 in the save area");
                    } else {
                        bump("double past f13 in the save area");
                    }
                }
                ArgClass::Hfa { kind, count } => {
                    prev_fp = fprs > 0;
                    if variadic {
                        if fprs > 0 && gprs + usize::from(on_stack) > 0 {
                            bump("variadic HFA in FPRs and its image");
                        }
                    } else if fprs == count as usize {
                        if count == 1 && has_zero_array(&a.layout) {
                            bump("one-float struct with a zero-length array in an FPR (gcc)");
                        }
                        bump(if kind == ScalarKind::F32 {
                            "float HFA in FPRs"
                        } else {
                            "double HFA in FPRs"
                        });
                        if count >= 5 {
                            bump("HFA of 5-8 members in FPRs");
                        }
                        if s.nested {
                            bump("nested or array HFA");
                        }
                        if s.union {
                            bump("union HFA");
                        }
                        if s.empty_member {
                            bump("empty member skipped in an HFA");
                        }
                        if a.layout.byte_alignment() >= 16 && first_dw.is_none() && next_dw % 2 == 1
                        {
                            bump("16-aligned HFA at an odd doubleword");
                        }
                    } else if fprs > 0 {
                        let split = ap.moves[fprs].offset as usize;
                        let first_left = fprs * kind.byte_size();
                        bump(if split < first_left {
                            "HFA split by f13, a member in both"
                        } else {
                            "HFA split by f13 at a doubleword boundary"
                        });
                    } else {
                        bump("HFA in the save area, FPRs used up");
                    }
                }
                ArgClass::Aggregate { align16 } => {
                    if s.floats > 0 && matches!(a.layout, MemoryLayout::Struct(_)) {
                        let kinds = {
                            let mut f32s = false;
                            let mut f64s = false;
                            fn kinds(l: &MemoryLayout, a: &mut bool, b: &mut bool) {
                                match l {
                                    MemoryLayout::Value(v) => {
                                        *a |= v.kind() == ScalarKind::F32;
                                        *b |= v.kind() == ScalarKind::F64;
                                    }
                                    MemoryLayout::Struct(s) => {
                                        s.members().iter().for_each(|m| kinds(m, a, b))
                                    }
                                    MemoryLayout::Union(u) => {
                                        u.members().iter().for_each(|m| kinds(m, a, b))
                                    }
                                    MemoryLayout::Sequence(q) => kinds(q.element(), a, b),
                                    MemoryLayout::Padding(_) => {}
                                }
                            }
                            kinds(&a.layout, &mut f32s, &mut f64s);
                            (f32s, f64s)
                        };
                        if s.floats == s.leaves {
                            if has_zero_array(&a.layout) {
                                bump("zero-length array: an ordinary aggregate (gcc)");
                            } else if kinds.0 && kinds.1 {
                                bump("mixed float kinds: an ordinary aggregate");
                            } else if s.leaves > 8 {
                                bump("9+ floats: an ordinary aggregate");
                            } else {
                                bump("padded HFA shape: an ordinary aggregate");
                            }
                        }
                    }
                    let size = a.layout.byte_size();
                    if gprs > 0 && on_stack {
                        bump("aggregate split r10 + save area");
                    } else if gprs > 1 {
                        bump("aggregate in several GPRs");
                    } else if gprs == 1 && size < 8 {
                        bump("aggregate of 1-7 bytes in a GPR");
                    } else if on_stack {
                        bump("aggregate in the save area");
                    }
                    if align16 && first_dw.is_some_and(|d| d > next_dw) {
                        bump("16-aligned aggregate, a doubleword skipped");
                    }
                }
            }
            // The doubleword after this argument.
            let dws = a.layout.byte_size().div_ceil(8);
            let start = first_dw
                .map(|d| {
                    // The first image move may not be the argument's first doubleword (an HFA
                    // split by f13).
                    d - ap
                        .moves
                        .iter()
                        .find(|m| !matches!(m.to, Location::Vector(_)))
                        .map_or(0, |m| m.offset as usize / 8)
                })
                .unwrap_or(next_dw);
            next_dw = start + dws;
        }
        let ret_class = sig.ret.as_ref().map(|r| classify(&r.layout));
        match (p.ret(), ret_class) {
            (ReturnPlan::InMemory, _) => bump("result in memory (r3)"),
            (ReturnPlan::Registers(m), _) if matches!(m[0].from, Register::Vector(_)) => {
                bump("result HFA in f1..f8")
            }
            (ReturnPlan::Registers(_), _) => bump("result aggregate in r3/r4"),
            (ReturnPlan::Scalar(_), Some(ArgClass::Integer(k))) if k.byte_size() < 8 => {
                bump("result narrow integer extended")
            }
            (ReturnPlan::Scalar(_), Some(ArgClass::Float(ScalarKind::F32))) => {
                bump("result float in f1 (double format)")
            }
            _ => {}
        }
    }
    c
}

const PPC64LE_COMPILERS: &str = "gcc-powerpc64le-linux-gnu and clang";

/// Strips a numeric local label (`0:`) in front of an instruction.
fn strip_numeric_labels(asm: &str) -> String {
    asm.lines()
        .map(|l| {
            let t = l.trim_start();
            match t.split_once(':') {
                Some((n, rest)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
                    format!("\t{}", rest.trim_start())
                }
                _ => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn oracle(cmd: &[&str], name: &str, gcc: bool) {
    let (sigs, src) = generate(1400, 0x5EED_0E1F);
    let Some(asm) = compile(cmd, &src, name, PPC64LE_COMPILERS) else {
        return;
    };
    let asm = strip_numeric_labels(&asm);
    let toc = toc_entries(&asm);
    let funcs = functions(&asm, &["#"]);
    // clang differs from gcc on zero-length arrays in homogeneous-looking structs.
    let skip = |s: &Sig| !gcc && s.args.iter().chain(s.ret.as_ref()).any(gcc_only);
    let mode = Mode {
        wrong_u32: false,
        split_hfa_fpr_members_unwritten: !gcc,
    };
    let (r, skipped) = check_all(&sigs, &funcs, &toc, mode, &skip, false);
    let cov = coverage(&sigs, &skip);
    eprintln!(
        "{name}: {} signatures ({skipped} skipped: zero-length arrays, gcc's), {} checks, {} failures",
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
    assert!(r.checked > 50_000, "{name}: too few checks ({})", r.checked);
    let mut expected = vec![
        "integer in the save area past r10",
        "narrow signed sign-extended in a GPR",
        "narrow unsigned zero-extended in a GPR",
        "narrow integer extended in the save area",
        "float in an FPR (double format)",
        "double in an FPR",
        "GPR skipped by an FP argument",
        "float past f13 in the save area",
        "double past f13 in the save area",
        "float in a GPR, f13 used by HFAs",
        "float HFA in FPRs",
        "double HFA in FPRs",
        "HFA of 5-8 members in FPRs",
        "nested or array HFA",
        "union HFA",
        "empty member skipped in an HFA",
        "HFA split by f13, a member in both",
        "HFA split by f13 at a doubleword boundary",
        "HFA in the save area, FPRs used up",
        "9+ floats: an ordinary aggregate",
        "mixed float kinds: an ordinary aggregate",
        "padded HFA shape: an ordinary aggregate",
        "aggregate of 1-7 bytes in a GPR",
        "aggregate in several GPRs",
        "aggregate split r10 + save area",
        "aggregate in the save area",
        "16-aligned aggregate, a doubleword skipped",
        "16-aligned HFA at an odd doubleword",
        "variadic double in FPR and GPR",
        "variadic float promoted, FPR and GPR",
        "variadic FP in FPR and save area",
        "variadic FP past f13: doubleword only",
        "variadic HFA in FPRs and its image",
        "result narrow integer extended",
        "result float in f1 (double format)",
        "result HFA in f1..f8",
        "result aggregate in r3/r4",
        "result in memory (r3)",
    ];
    if gcc {
        expected.push("zero-length array: an ordinary aggregate (gcc)");
        expected.push("one-float struct with a zero-length array in an FPR (gcc)");
    }
    for rule in expected {
        let n = cov.iter().find(|(r, _)| *r == rule).map_or(0, |(_, n)| *n);
        assert!(n >= 5, "{name}: rule `{rule}` exercised only {n} times");
    }
    // The oracle is not blind: plans with floating-point values also in GPRs, or with
    // `unsigned int` sign-extended, fail.
    let named = |s: &Sig| skip(s) || s.first_variadic.is_some();
    let (wrong, _) = check_all(&sigs, &funcs, &toc, mode, &named, true);
    eprintln!(
        "{name}: all-variadic plans fail {} checks, as they should",
        wrong.failed
    );
    assert!(
        wrong.failed > 100,
        "{name}: all-variadic plans pass too: the oracle is blind"
    );
    let sext = Mode {
        wrong_u32: true,
        ..mode
    };
    let (wrong, _) = check_all(&sigs, &funcs, &toc, sext, &skip, false);
    eprintln!(
        "{name}: sign-extending unsigned int fails {} checks, as it should",
        wrong.failed
    );
    assert!(
        wrong.failed > 20,
        "{name}: the oracle does not see extension"
    );
}

#[test]
fn elfv2_plans_match_gcc() {
    oracle(
        &[
            "powerpc64le-linux-gnu-gcc",
            "-ffreestanding",
            "-fno-section-anchors",
        ],
        "gcc-powerpc64le-linux",
        true,
    );
}

#[test]
fn elfv2_plans_match_clang() {
    oracle(
        &["clang", "--target=powerpc64le-linux-gnu", "-ffreestanding"],
        "clang-powerpc64le-linux",
        false,
    );
}
