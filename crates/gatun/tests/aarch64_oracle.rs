//! The AArch64 plans proved against the compilers' code generation (no AArch64 code runs).
//!
//! For 1,200 random signatures (fixed seed) this test writes one C file holding, per signature,
//! a callee that stores every parameter to its own global (the upcall side: where the callee
//! finds each byte), a caller that passes a global per argument to an external function (the
//! downcall side: where the caller puts each byte) and a function returning a global (the
//! return side). It compiles the file with `aarch64-linux-gnu-gcc -O1 -S` and
//! `clang -target aarch64-linux-gnu -O1 -S` (checked against the Linux plans) and
//! `clang -target arm64-apple-macos11 -O1 -S` (the Apple plans), then reads the assembly
//! with a small symbolic interpreter: each register starts as "the bytes of argument register
//! xN/vN", each incoming stack byte as "stack byte o", each global byte as "byte b of global g";
//! loads, stores, moves, shifts and bit-field inserts carry those symbols along. At the call
//! (or the callee's stores, or its `ret`) every byte the C source passes must be exactly where
//! the plan says: the same register and byte, the same stack offset, or behind the pointer of a
//! by-reference argument. Apple callers must also extend integers narrower than 32 bits.
//!
//! Needs `clang` and `aarch64-linux-gnu-gcc` (Debian: `clang`, `gcc-aarch64-linux-gnu`); the
//! test reports and skips a compiler that is missing.
//!
//! The test also counts how often each rule below is exercised, by the quoted label, and fails
//! when one is not; and it checks that the other flavour's plans fail on the same assembly (the
//! oracle is not blind). Linux follows gcc where gcc and clang differ, Apple follows clang; the
//! differences are listed in the AArch64 classifier's module docs.
//!
//! # AAPCS64: rules and the labels that count them
//!
//! Rule numbers as in the AArch64 classifier (`crate::abi::aarch64`), AAPCS64 numbering up to
//! its 2019Q4 edition. The plan unit tests and the execution tests of each rule are listed in
//! the AArch64 backend's test module docs.
//!
//! | rule | labels (`linux_plans_match_gcc`, `linux_plans_match_clang`) |
//! |---|---|
//! | B.2 HFA (1–4 `float`/`double` leaves, no padding) | "B.2 HFA in v registers", "B.2 HFA of 4", "16-aligned HFA in v registers" |
//! | B.3 over 16 bytes, not an HFA: by reference | "B.3 by reference in a GPR", "B.3 by reference on the stack" |
//! | C.1–C.6 HFA all or nothing (NSRN = 8) | "C.3 HFA on the stack, v registers left", "HFA on the stack", "16-aligned HFA on the stack" |
//! | C.7 integers, bools, pointers in the next GPR | "narrow integer in a GPR" |
//! | C.8 16-aligned composite at an even GPR | "C.8 16-aligned at an even GPR" |
//! | C.10–C.11 composite in consecutive GPRs or wholly on the stack | "C.10 composite in two GPRs", "C.11 composite on the stack, GPRs left" |
//! | C.12–C.15 stack slots at max(8, natural alignment) | "C.12 16-aligned on the stack", "narrow integer on the stack" |
//! | §6.9 results: x0/x1, v0–v3, memory at x8 | "result composite in x0/x1", "result HFA in v0..v3", "result in memory (x8)" |
//! | variadics on Linux passed as named ones | "Linux variadic in registers" |
//! | zero-length array inside an HFA member (gcc: not an HFA; clang: skipped) | "zero-length array in a member: HFA for clang, not for gcc" |
//! | x18 and registers above x8 never used | every plan check: only x0–x8 and v0–v7 are accepted |
//!
//! # Apple arm64: rules and what checks them
//!
//! Nothing Apple executes in CI: `apple_plans_match_clang` checks the plans against
//! `clang -target arm64-apple-macos11 -O1 -S`; the executor is built for `aarch64-apple-darwin`
//! (`cargo build -p gatun --lib` assembles its Mach-O `global_asm!`) and the rest type-checks.
//!
//! | Apple rule | checked by |
//! |---|---|
//! | variadic arguments on the stack, one 8-byte slot each, even with registers free | "variadic on the stack, GPRs free"; unit test `variadic_arguments_on_apple_go_on_the_stack_in_8_byte_slots` |
//! | named stack arguments packed at natural size and alignment | "Apple packed stack offset"; unit tests `apple_named_stack_arguments_are_packed`, `packed_apple_stack_arguments_are_written_with_their_own_bytes_only` (trampoline), `apple_packed_stack_arguments_are_stored_with_their_own_width` (stubs) |
//! | callers extend integers narrower than 32 bits to 32 bits | the caller check of this test; unit test `apple_callers_extend_narrow_integers_in_registers` |
//! | no even-GPR rounding for 16-byte-aligned composites | "16-aligned at an odd GPR" |
//! | zero-length arrays inside HFA members skipped (clang) | "zero-length array in a member: HFA for clang, not for gcc"; unit test `b2_zero_length_array_inside_a_member_gcc_rejects_clang_skips` |
//! | x18 reserved | plans name no register above x8; stub unit test `every_word_is_known_and_no_word_names_x18` |
//! | `char` signed, `long double` = `double` | `data_models_match_the_compilers` |
//! | `MAP_JIT`, `pthread_jit_write_protect_np` around writes, `sys_icache_invalidate`; default lookup = the process, then `libSystem.B.dylib` | compiled only; the pure choice logic is unit-tested in `code` and `linker::lookup` |
// Classification is pure data, so this runs in the native x86-64 suite only: under qemu or
// Wine it would check the same plans again, starting the host's compilers from an emulated
// process (and under Wine it cannot start them at all).
#![cfg(all(unix, target_arch = "x86_64"))]

#[path = "common/c_oracle.rs"]
mod c_oracle;

use std::collections::HashMap;

use c_oracle::{
    compile, functions, leaf_mask, render, scalar, sig_text, CType, Field, Functions, Insn, Report,
    Rng, Sig, Types, INTS,
};

use gatun::abi::aarch64::{classify, plan, ArgClass, Flavour};
use gatun::abi::{CallPlan, Location, Register, ReturnPlan};
use gatun::layout::{MemoryLayout, ScalarKind};

// ---------------------------------------------------------------------------------------------
// The AArch64 mixture of random C types (the neutral parts are in `common/c_oracle.rs`).

impl Types {
    /// An HFA of `count` members of `k`, in a random shape (flat, arrays, nested, unions).
    fn hfa(&mut self, rng: &mut Rng, k: ScalarKind, count: usize, depth: usize) -> CType {
        let mut fields = Vec::new();
        let mut left = count;
        while left > 0 {
            let n = 1 + rng.below(left);
            let f = match rng.below(if depth < 2 { 4 } else { 2 }) {
                0 => Field {
                    ty: scalar(k),
                    array: None,
                },
                1 => Field {
                    ty: scalar(k),
                    array: Some(n),
                },
                2 => Field {
                    ty: self.hfa(rng, k, n, depth + 1),
                    array: None,
                },
                _ => {
                    // A union of two same-size HFA shapes.
                    let a = self.hfa(rng, k, n, depth + 2);
                    let b = self.hfa(rng, k, n, depth + 2);
                    let u = self.record(
                        vec![Field { ty: a, array: None }, Field { ty: b, array: None }],
                        true,
                        false,
                    );
                    Field { ty: u, array: None }
                }
            };
            left -= match f.array {
                Some(n) => n,
                None if matches!(f.ty.layout, MemoryLayout::Value(_)) => 1,
                None => n,
            };
            fields.push(f);
            if rng.chance(8) {
                fields.push(self.zero_size_member(rng, k));
            }
        }
        self.record(fields, false, false)
    }

    /// Any argument type.
    fn any(&mut self, rng: &mut Rng) -> CType {
        match rng.below(100) {
            0..=39 => scalar(ScalarKind::ALL[rng.below(12)]),
            40..=59 => {
                let k = [ScalarKind::F32, ScalarKind::F64][rng.below(2)];
                let most = if rng.chance(15) { 5 } else { 4 }; // sometimes 5: not an HFA
                let n = 1 + rng.below(most);
                self.hfa(rng, k, n, 0)
            }
            60..=74 => {
                let t = 1 + rng.below(16);
                let f = rng.chance(40);
                self.mixed(rng, t, f)
            }
            75..=84 => {
                let t = 17 + rng.below(32);
                let f = rng.chance(40);
                self.mixed(rng, t, f)
            }
            85..=91 => {
                // 16-byte alignment: on the struct itself, or through a member.
                let t = 1 + rng.below(16);
                let inner = if rng.chance(30) {
                    // A 16-byte-aligned HFA: 2 doubles or 4 floats (no padding), or 4 doubles.
                    match rng.below(3) {
                        0 => self.hfa(rng, ScalarKind::F64, 2, 1),
                        1 => self.hfa(rng, ScalarKind::F32, 4, 1),
                        _ => self.hfa(rng, ScalarKind::F64, 4, 1),
                    }
                } else {
                    self.mixed(rng, t, false)
                };
                if rng.chance(50) {
                    let f = Field {
                        ty: inner,
                        array: None,
                    };
                    self.record(vec![f], false, true)
                } else {
                    let a = self.record(
                        vec![Field {
                            ty: inner,
                            array: None,
                        }],
                        false,
                        true,
                    );
                    let mut fields = vec![Field { ty: a, array: None }];
                    if rng.chance(30) {
                        fields.insert(
                            0,
                            Field {
                                ty: scalar(INTS[rng.below(9)]),
                                array: None,
                            },
                        );
                    }
                    self.record(fields, false, false)
                }
            }
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

fn generate(count: usize, seed: u64, zero_arrays: bool) -> (Vec<Sig>, String) {
    let mut rng = Rng(seed);
    let mut types = Types {
        defs: String::new(),
        next: 0,
        zero_arrays,
    };
    let mut sigs = Vec::new();
    while sigs.len() < count {
        // Many arguments sometimes, to exhaust the registers and reach the stack.
        let n = if rng.chance(30) {
            8 + rng.below(9)
        } else {
            rng.below(8)
        };
        let mut args: Vec<CType> = (0..n).map(|_| types.any(&mut rng)).collect();
        if rng.chance(10) {
            // Narrow integers past the registers.
            for _ in 0..8 {
                args.insert(0, scalar(ScalarKind::I64));
            }
            for _ in 0..(2 + rng.below(6)) {
                args.push(scalar(INTS[rng.below(5)]));
            }
        }
        let first_variadic =
            (rng.chance(20) && !args.is_empty()).then(|| 1 + rng.below(args.len()));
        if let Some(f) = first_variadic {
            // Variadic arguments as C passes them after the promotions: no `float`.
            for a in &mut args[f..] {
                if a.layout
                    .as_value()
                    .is_some_and(|v| v.kind() == ScalarKind::F32)
                {
                    *a = scalar(ScalarKind::F64);
                }
            }
        }
        let ret = match rng.below(10) {
            0..=1 => None,
            2..=5 => Some(types.any(&mut rng)),
            _ => Some(scalar(ScalarKind::ALL[rng.below(12)])),
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
// A symbolic interpreter of the AArch64 assembly the compilers emit for these small functions.

/// What one byte holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sym {
    Unknown,
    Zero,
    /// A byte of sign fill (all ones or all zeros according to a sign bit).
    Sign,
    /// Byte `j` of argument register xN at entry.
    X(u8, u8),
    /// Byte `j` of argument register vN at entry.
    V(u8, u8),
    /// Incoming stack argument byte at this offset from the entry stack pointer.
    Stack(i64),
    /// Byte at this offset behind the pointer passed in xN (`Ptr::X`) or in the incoming stack
    /// slot at offset o (`Ptr::Stack`).
    Ref(Ptr, i64),
    /// Byte `b` of global `g`.
    Global(String, i64),
    /// Byte `j` of the address `sp_entry + off` (a pointer to a local copy).
    SpAddr(i64, u8),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Ptr {
    X(u8),
    Stack(i64),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Base {
    Sp,
    Page(String),
    Global(String),
    Ref(Ptr),
}

#[derive(Debug, Clone)]
enum Val {
    Bytes(Vec<Sym>),
    Addr(Base, i64),
}

struct Machine {
    gpr: Vec<Val>, // 0..=30 (31 = sp is kept separately)
    vec: Vec<Vec<Sym>>,
    sp: i64,
    /// Stores to the frame (key: offset from the entry sp) and to other memory.
    frame: HashMap<i64, Sym>,
    memory: HashMap<(Base, i64), Sym>,
    /// The register bytes of the last `cmp reg, #0`.
    compared: Option<Vec<Sym>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Reg {
    X(u8, usize), // index, width in bytes (8 or 4)
    Sp,
    Zr(usize),
    V(u8, usize), // index, width (1, 2, 4, 8, 16)
}

fn parse_reg(s: &str) -> Option<Reg> {
    let s = s.trim();
    if s == "sp" || s == "wsp" {
        return Some(Reg::Sp);
    }
    if s == "xzr" {
        return Some(Reg::Zr(8));
    }
    if s == "wzr" {
        return Some(Reg::Zr(4));
    }
    if let Some(rest) = s.strip_prefix('v') {
        let (n, arr) = rest.split_once('.').unwrap_or((rest, ""));
        let n: u8 = n.parse().ok()?;
        let w = if arr.contains('[') {
            return None; // lane access: not modelled
        } else if arr.ends_with("16b")
            || arr.ends_with("2d")
            || arr.ends_with("4s")
            || arr.ends_with("8h")
        {
            16
        } else {
            8
        };
        return Some(Reg::V(n, w));
    }
    let (c, n) = s.split_at(1);
    let n: u8 = n.parse().ok()?;
    match c {
        "x" if n <= 30 => Some(Reg::X(n, 8)),
        "w" if n <= 30 => Some(Reg::X(n, 4)),
        "q" if n < 32 => Some(Reg::V(n, 16)),
        "d" if n < 32 => Some(Reg::V(n, 8)),
        "s" if n < 32 => Some(Reg::V(n, 4)),
        "h" if n < 32 => Some(Reg::V(n, 2)),
        "b" if n < 32 => Some(Reg::V(n, 1)),
        _ => None,
    }
}

fn parse_imm(s: &str) -> Option<i64> {
    let s = s.trim().trim_start_matches('#');
    if let Some(h) = s.strip_prefix("0x") {
        return i64::from_str_radix(h, 16).ok();
    }
    if let Some(h) = s.strip_prefix("-0x") {
        return i64::from_str_radix(h, 16).ok().map(|v| -v);
    }
    s.parse().ok()
}

/// `:lo12:sym+8`, `sym@PAGEOFF`, `_sym+8@PAGEOFF` → (`sym`, 8).
fn parse_lo12(s: &str) -> Option<(String, i64)> {
    let s = s.trim().trim_start_matches('#');
    let body = if let Some(b) = s.strip_prefix(":lo12:") {
        b.to_string()
    } else if let Some(b) = s.strip_suffix("@PAGEOFF") {
        b.trim_start_matches('_').to_string()
    } else {
        return None;
    };
    Some(match body.split_once('+') {
        Some((n, o)) => (n.to_string(), o.parse().ok()?),
        None => (body, 0),
    })
}

fn parse_page(s: &str) -> Option<String> {
    let s = s.trim();
    if let Some(b) = s.strip_suffix("@PAGE") {
        return Some(b.trim_start_matches('_').to_string());
    }
    if s.starts_with(':') || s.contains('@') {
        return None;
    }
    Some(s.split('+').next()?.to_string())
}

impl Machine {
    fn new() -> Machine {
        let gpr = (0..31u8)
            .map(|n| {
                Val::Bytes(
                    (0..8)
                        .map(|j| if n <= 8 { Sym::X(n, j) } else { Sym::Unknown })
                        .collect(),
                )
            })
            .collect();
        let vec = (0..32u8)
            .map(|n| {
                (0..16)
                    .map(|j| if n < 8 { Sym::V(n, j) } else { Sym::Unknown })
                    .collect()
            })
            .collect();
        Machine {
            gpr,
            vec,
            sp: 0,
            frame: HashMap::new(),
            memory: HashMap::new(),
            compared: None,
        }
    }

    /// The value of a register, as `width` bytes (pointers become address bytes).
    fn read(&self, r: Reg) -> Val {
        match r {
            Reg::X(n, w) => match &self.gpr[n as usize] {
                Val::Bytes(b) => Val::Bytes(b[..w].to_vec()),
                a => a.clone(),
            },
            Reg::Sp => Val::Addr(Base::Sp, self.sp),
            Reg::Zr(w) => Val::Bytes(vec![Sym::Zero; w]),
            Reg::V(n, w) => Val::Bytes(self.vec[n as usize][..w].to_vec()),
        }
    }

    fn bytes(&self, r: Reg) -> Vec<Sym> {
        match self.read(r) {
            Val::Bytes(b) => b,
            Val::Addr(Base::Sp, o) => (0..8).map(|j| Sym::SpAddr(o, j)).collect(),
            Val::Addr(..) => vec![Sym::Unknown; 8],
        }
    }

    fn write(&mut self, r: Reg, v: Val) {
        match r {
            Reg::X(n, w) => {
                self.gpr[n as usize] = match v {
                    Val::Bytes(mut b) => {
                        b.resize(w, Sym::Unknown);
                        b.resize(8, Sym::Zero);
                        Val::Bytes(b)
                    }
                    a => a,
                }
            }
            Reg::Sp => {
                if let Val::Addr(Base::Sp, o) = v {
                    self.sp = o;
                } else {
                    self.sp = i64::MIN / 2;
                }
            }
            Reg::Zr(_) => {}
            Reg::V(n, w) => {
                let mut b = match v {
                    Val::Bytes(b) => b,
                    Val::Addr(..) => vec![Sym::Unknown; 8],
                };
                b.resize(w, Sym::Unknown);
                b.resize(16, Sym::Zero);
                self.vec[n as usize] = b;
            }
        }
    }

    fn unknown(&mut self, r: Reg) {
        let w = match r {
            Reg::X(_, w) | Reg::Zr(w) | Reg::V(_, w) => w,
            Reg::Sp => 8,
        };
        self.write(r, Val::Bytes(vec![Sym::Unknown; w]));
    }

    /// A register used as an address.
    fn addr(&self, r: Reg) -> Option<(Base, i64)> {
        match self.read(r) {
            Val::Addr(b, o) => Some((b, o)),
            Val::Bytes(b) if b.len() == 8 => {
                if let Sym::X(n, 0) = b[0] {
                    if (0..8).all(|j| b[j] == Sym::X(n, j as u8)) {
                        return Some((Base::Ref(Ptr::X(n)), 0));
                    }
                }
                if let Sym::Stack(o) = b[0] {
                    if (0..8).all(|j| b[j] == Sym::Stack(o + j as i64)) {
                        return Some((Base::Ref(Ptr::Stack(o)), 0));
                    }
                }
                if let Sym::SpAddr(o, 0) = b[0] {
                    if (0..8).all(|j| b[j] == Sym::SpAddr(o, j as u8)) {
                        return Some((Base::Sp, o));
                    }
                }
                None
            }
            _ => None,
        }
    }

    /// Parses `[base, #off]`, `[base, :lo12:sym]`, with `!` pre-index and a post-index
    /// immediate; returns the address and applies the write-back.
    fn mem_operand(&mut self, op: &str, post: Option<&String>) -> Option<(Base, i64)> {
        let pre = op.ends_with('!');
        let inner = op
            .trim_end_matches('!')
            .trim()
            .strip_prefix('[')?
            .strip_suffix(']')?;
        let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
        let base_reg = parse_reg(parts[0])?;
        let (mut base, mut off) = self.addr(base_reg)?;
        let mut disp = 0;
        if let Some(p) = parts.get(1) {
            if let Some((sym, o)) = parse_lo12(p) {
                if base != Base::Page(sym.clone()) {
                    return None;
                }
                base = Base::Global(sym);
                off = o;
            } else {
                disp = parse_imm(p)?;
            }
        }
        let post_disp = post.and_then(|p| parse_imm(p));
        let at = off + disp;
        if pre {
            self.write(base_reg, Val::Addr(base.clone(), at));
        } else if let Some(pd) = post_disp {
            self.write(base_reg, Val::Addr(base.clone(), off + pd));
            return Some((base, off));
        }
        Some((base, at))
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
            Base::Page(_) => Sym::Unknown,
        }
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

    /// Runs one instruction; returns `Some(target)` at a call or tail call, `Some("ret")` at a
    /// return.
    fn step(&mut self, mnemonic: &str, ops: &[String]) -> Option<String> {
        let reg = |i: usize| ops.get(i).and_then(|s| parse_reg(s));
        match mnemonic {
            "bl" | "b" => return Some(ops[0].trim_start_matches('_').to_string()),
            "ret" => return Some("ret".into()),
            "adrp" => {
                let r = reg(0)?;
                let v = match parse_page(&ops[1]) {
                    Some(p) => Val::Addr(Base::Page(p), 0),
                    None => Val::Bytes(vec![Sym::Unknown; 8]),
                };
                self.write(r, v);
            }
            "orr" | "add"
                if (ops.len() == 4 || ops.len() == 3)
                    && ops
                        .get(2)
                        .and_then(|o| parse_reg(o))
                        .is_some_and(|r| matches!(r, Reg::X(..) | Reg::Zr(_))) =>
            {
                // orr d, a, b, lsl #s: combine bytes where the other side is zero.
                let (d, a, b) = (reg(0)?, reg(1)?, reg(2)?);
                let Reg::X(_, w) = d else { return None };
                let sh = match ops.get(3) {
                    Some(s) => match s.strip_prefix("lsl ").and_then(parse_imm) {
                        Some(v) if v % 8 == 0 => (v / 8) as usize,
                        _ => {
                            self.unknown(d);
                            return None;
                        }
                    },
                    None => 0,
                };
                let (ba, bb) = (self.bytes(a), self.bytes(b));
                let v = (0..w)
                    .map(|j| {
                        let y = if j < sh {
                            Sym::Zero
                        } else {
                            bb[j - sh].clone()
                        };
                        match (&ba[j], &y) {
                            (Sym::Zero, o) | (o, Sym::Zero) => o.clone(),
                            _ => Sym::Unknown,
                        }
                    })
                    .collect();
                self.write(d, Val::Bytes(v));
            }
            "add" | "sub" => {
                let (d, s) = (reg(0)?, reg(1)?);
                let v = match (self.read(s), ops.get(2)) {
                    (Val::Addr(Base::Page(p), _), Some(o)) if mnemonic == "add" => {
                        match parse_lo12(o) {
                            Some((sym, off)) if sym == p => Val::Addr(Base::Global(sym), off),
                            _ => Val::Bytes(vec![Sym::Unknown; 8]),
                        }
                    }
                    (Val::Addr(b, off), Some(o)) if ops.len() == 3 => match parse_imm(o) {
                        Some(i) => Val::Addr(b, if mnemonic == "add" { off + i } else { off - i }),
                        None => Val::Bytes(vec![Sym::Unknown; 8]),
                    },
                    _ => match self.addr(s) {
                        Some((b, off)) if ops.len() == 3 => match parse_imm(&ops[2]) {
                            Some(i) => {
                                Val::Addr(b, if mnemonic == "add" { off + i } else { off - i })
                            }
                            None => Val::Bytes(vec![Sym::Unknown; 8]),
                        },
                        _ => Val::Bytes(vec![Sym::Unknown; 8]),
                    },
                };
                self.write(d, v);
            }
            "mov" | "fmov" | "orr"
                if ops.len() == 2
                    || (mnemonic == "orr" && ops.len() == 3 && ops[1].contains('.')) =>
            {
                let d = reg(0)?;
                match reg(1) {
                    Some(s) => {
                        let v = self.read(s);
                        let v = match (v, d) {
                            (Val::Bytes(mut b), Reg::X(_, w) | Reg::V(_, w)) => {
                                b.resize(w, Sym::Unknown);
                                Val::Bytes(b)
                            }
                            (a, _) => a,
                        };
                        self.write(d, v);
                    }
                    None => self.unknown(d),
                }
            }
            "lsr" | "asr" => {
                let (d, s) = (reg(0)?, reg(1)?);
                let (Some(sh), Reg::X(_, w)) = (ops.get(2).and_then(|o| parse_imm(o)), d) else {
                    self.unknown(d);
                    return None;
                };
                let b = self.bytes(s);
                if sh % 8 != 0 {
                    self.unknown(d);
                    return None;
                }
                let k = (sh / 8) as usize;
                let fill = if mnemonic == "lsr" {
                    Sym::Zero
                } else {
                    Sym::Sign
                };
                let v = (0..w)
                    .map(|j| b.get(j + k).cloned().unwrap_or(fill.clone()))
                    .collect();
                self.write(d, Val::Bytes(v));
            }
            "lsl" => {
                let (d, s) = (reg(0)?, reg(1)?);
                let (Some(sh), Reg::X(_, w)) = (ops.get(2).and_then(|o| parse_imm(o)), d) else {
                    self.unknown(d);
                    return None;
                };
                if sh % 8 != 0 {
                    self.unknown(d);
                    return None;
                }
                let b = self.bytes(s);
                let k = (sh / 8) as usize;
                let v = (0..w)
                    .map(|j| if j < k { Sym::Zero } else { b[j - k].clone() })
                    .collect();
                self.write(d, Val::Bytes(v));
            }
            "ubfx" | "sbfx" | "ubfiz" | "sbfiz" => {
                let (d, s) = (reg(0)?, reg(1)?);
                let (lsb, width) = (parse_imm(&ops[2])?, parse_imm(&ops[3])?);
                let Reg::X(_, w) = d else { return None };
                if lsb % 8 != 0 || width % 8 != 0 {
                    self.unknown(d);
                    return None;
                }
                let b = self.bytes(s);
                let (l, n) = ((lsb / 8) as usize, (width / 8) as usize);
                let fill = if mnemonic.starts_with('u') {
                    Sym::Zero
                } else {
                    Sym::Sign
                };
                let v = if mnemonic.ends_with("iz") {
                    (0..w)
                        .map(|j| {
                            if j < l {
                                Sym::Zero
                            } else if j < l + n {
                                b[j - l].clone()
                            } else {
                                fill.clone()
                            }
                        })
                        .collect()
                } else {
                    (0..w)
                        .map(|j| {
                            if j < n {
                                b[l + j].clone()
                            } else {
                                fill.clone()
                            }
                        })
                        .collect()
                };
                self.write(d, Val::Bytes(v));
            }
            "sxtb" | "sxth" | "sxtw" | "uxtb" | "uxth" | "and" if ops.len() <= 3 => {
                let (d, s) = (reg(0)?, reg(1)?);
                let Reg::X(_, w) = d else {
                    self.unknown(d);
                    return None;
                };
                let n = match mnemonic {
                    "sxtb" | "uxtb" => 1,
                    "sxth" | "uxth" => 2,
                    "sxtw" => 4,
                    _ => match ops.get(2).and_then(|o| parse_imm(o)) {
                        // `and w0, w0, #1` on a bool: the byte itself, if 0 or 1.
                        Some(1) => 1,
                        Some(m)
                            if m > 0
                                && (m + 1).count_ones() == 1
                                && (m + 1).trailing_zeros() % 8 == 0 =>
                        {
                            ((m + 1).trailing_zeros() / 8) as usize
                        }
                        Some(-1) => 8,
                        _ => {
                            self.unknown(d);
                            return None;
                        }
                    },
                };
                let b = self.bytes(s);
                let fill = if mnemonic.starts_with('s') {
                    Sym::Sign
                } else {
                    Sym::Zero
                };
                let v = (0..w)
                    .map(|j| if j < n { b[j].clone() } else { fill.clone() })
                    .collect();
                self.write(d, Val::Bytes(v));
            }
            "bfi" | "bfxil" => {
                let (d, s) = (reg(0)?, reg(1)?);
                let (lsb, width) = (parse_imm(&ops[2])?, parse_imm(&ops[3])?);
                if lsb % 8 != 0 || width % 8 != 0 {
                    self.unknown(d);
                    return None;
                }
                let mut bd = self.bytes(d);
                let bs = self.bytes(s);
                let (l, n) = ((lsb / 8) as usize, (width / 8) as usize);
                for j in 0..n {
                    if mnemonic == "bfi" {
                        bd[l + j] = bs[j].clone();
                    } else {
                        bd[j] = bs[l + j].clone();
                    }
                }
                self.write(d, Val::Bytes(bd));
            }
            "ld1" | "st1" => {
                // `{vA.16b - vB.16b}` or `{vA.16b, vB.16b}`: consecutive whole registers.
                let list = ops[0].trim_matches(['{', '}']);
                let regs: Vec<Reg> = list
                    .split(['-', ','])
                    .map(parse_reg)
                    .collect::<Option<_>>()?;
                let (Some(&Reg::V(first, 16)), Some(&Reg::V(last, 16))) =
                    (regs.first(), regs.last())
                else {
                    return None;
                };
                let Some((base, at)) = self.mem_operand(&ops[1], ops.get(2)) else {
                    for n in first..=last {
                        self.unknown(Reg::V(n, 16));
                    }
                    return None;
                };
                for (k, n) in (first..=last).enumerate() {
                    let start = at + 16 * k as i64;
                    if mnemonic == "ld1" {
                        let v = (0..16).map(|j| self.load_byte(&base, start + j)).collect();
                        self.write(Reg::V(n, 16), Val::Bytes(v));
                    } else {
                        let b = self.vec[n as usize].clone();
                        for (j, s) in b.into_iter().enumerate() {
                            self.store_byte(&base, start + j as i64, s);
                        }
                    }
                }
            }
            m if m.starts_with("ld") && !m.starts_with("ld1") => {
                let pair = m.starts_with("ldp") || m.starts_with("ldnp");
                let (r1, r2) = (reg(0)?, if pair { reg(1) } else { None });
                let mi = if pair { 2 } else { 1 };
                let Some((base, at)) = self.mem_operand(&ops[mi], ops.get(mi + 1)) else {
                    self.unknown(r1);
                    if let Some(r) = r2 {
                        self.unknown(r);
                    }
                    return None;
                };
                let rw = |r: Reg| match r {
                    Reg::X(_, w) | Reg::V(_, w) => w,
                    _ => 8,
                };
                let (n, fill) = match m {
                    "ldrb" | "ldurb" => (1, Sym::Zero),
                    "ldrh" | "ldurh" => (2, Sym::Zero),
                    "ldrsb" | "ldursb" => (1, Sym::Sign),
                    "ldrsh" | "ldursh" => (2, Sym::Sign),
                    "ldrsw" | "ldursw" | "ldpsw" => (4, Sym::Sign),
                    _ => (rw(r1), Sym::Zero),
                };
                let load = |mm: &Machine, start: i64, r: Reg| -> Val {
                    let mut v: Vec<Sym> = (0..n as i64)
                        .map(|j| mm.load_byte(&base, start + j))
                        .collect();
                    v.resize(rw(r), fill.clone());
                    Val::Bytes(v)
                };
                let v1 = load(self, at, r1);
                if let Some(r2) = r2 {
                    let v2 = load(self, at + n as i64, r2);
                    self.write(r2, v2);
                }
                self.write(r1, v1);
            }
            m if m.starts_with("st") && !m.starts_with("st1") => {
                let pair = m.starts_with("stp") || m.starts_with("stnp");
                let mi = if pair { 2 } else { 1 };
                let (r1, r2) = (reg(0)?, if pair { reg(1) } else { None });
                let n = match m {
                    "strb" | "sturb" => Some(1),
                    "strh" | "sturh" => Some(2),
                    _ => None,
                };
                let b1 = self.bytes(r1);
                let b2 = r2.map(|r| self.bytes(r));
                let (base, at) = self.mem_operand(&ops[mi], ops.get(mi + 1))?;
                let n = n.unwrap_or(b1.len());
                for (j, s) in b1.iter().take(n).enumerate() {
                    self.store_byte(&base, at + j as i64, s.clone());
                }
                if let Some(b2) = b2 {
                    for (j, s) in b2.iter().take(n).enumerate() {
                        self.store_byte(&base, at + (n + j) as i64, s.clone());
                    }
                }
            }
            "cmp" if ops.get(1).is_some_and(|o| parse_imm(o) == Some(0)) => {
                self.compared = reg(0).map(|r| self.bytes(r));
            }
            "cset" if ops.get(1).map(String::as_str) == Some("ne") => {
                // `cmp wB, #0; cset wD, ne` normalises a bool: for a 0/1 byte it is the byte.
                let d = reg(0)?;
                match self.compared.take() {
                    Some(mut b) if b[1..].iter().all(|s| *s == Sym::Zero) => {
                        b.resize(8, Sym::Zero);
                        self.write(d, Val::Bytes(b));
                    }
                    _ => self.unknown(d),
                }
            }
            "cmp" | "cmn" | "tst" | "nop" | "hint" | "fcmp" => {}
            _ => {
                if let Some(r) = reg(0) {
                    self.unknown(r);
                }
            }
        }
        None
    }
}

/// Runs `body` until the first call/tail call to `until` (or `ret` when `until` is "ret").
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

/// Where the plan puts byte `b` of argument `k`.
enum Where {
    Reg(Sym),
    /// Behind the pointer at this location.
    Ref(Location, i64),
}

fn plan_byte(p: &CallPlan, k: usize, b: usize) -> Option<Where> {
    let a = &p.args()[k];
    if let Some(loc) = a.by_reference {
        return Some(Where::Ref(loc, b as i64));
    }
    let m = a
        .moves
        .iter()
        .find(|m| (m.offset as usize..m.offset as usize + m.size as usize).contains(&b))?;
    let j = (b - m.offset as usize) as u8;
    Some(Where::Reg(match m.to {
        Location::Int(n) => Sym::X(n, j),
        Location::Vector(n) => Sym::V(n, j),
        Location::Stack(o) => Sym::Stack(o as i64 + j as i64),
    }))
}

/// The upcall side: `callee{i}` stores each argument byte to global `g{i}_{k}`.
fn check_callee(i: usize, sig: &Sig, p: &CallPlan, body: &[Insn], r: &mut Report) {
    let Some(m) = run(body, "ret") else {
        r.fail(format!("callee{i}: did not reach ret"));
        return;
    };
    for (k, a) in sig.args.iter().enumerate() {
        let g = Base::Global(format!("g{i}_{k}"));
        for (b, leaf) in leaf_mask(&a.layout).into_iter().enumerate() {
            if !leaf {
                continue;
            }
            let got = m.memory.get(&(g.clone(), b as i64));
            let want = match plan_byte(p, k, b) {
                Some(Where::Reg(s)) => s,
                Some(Where::Ref(Location::Int(n), o)) => Sym::Ref(Ptr::X(n), o),
                Some(Where::Ref(Location::Stack(s), o)) => Sym::Ref(Ptr::Stack(s as i64), o),
                Some(Where::Ref(l, _)) => {
                    r.fail(format!("callee{i} arg {k}: by reference in {l:?}"));
                    return;
                }
                None => {
                    r.fail(format!("callee{i} arg {k} byte {b}: no move in the plan"));
                    return;
                }
            };
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
/// where the plan says; Apple callers extend narrow integers in registers to 32 bits.
fn check_caller(
    i: usize,
    sig: &Sig,
    p: &CallPlan,
    flavour: Flavour,
    body: &[Insn],
    r: &mut Report,
) {
    let Some(m) = run(body, &format!("f{i}")) else {
        r.fail(format!("call{i}: no call of f{i} found"));
        return;
    };
    let content = |loc: Location, j: i64| -> Sym {
        match loc {
            Location::Int(n) => m.bytes(Reg::X(n, 8))[j as usize].clone(),
            Location::Vector(n) => m.vec[n as usize][j as usize].clone(),
            Location::Stack(o) => m.load_byte(&Base::Sp, m.sp + o as i64 + j),
        }
    };
    for (k, a) in sig.args.iter().enumerate() {
        let g = format!("g{i}_{k}");
        for (b, leaf) in leaf_mask(&a.layout).into_iter().enumerate() {
            if !leaf {
                continue;
            }
            let want = Sym::Global(g.clone(), b as i64);
            let got = match plan_byte(p, k, b) {
                Some(Where::Reg(Sym::X(n, j))) => content(Location::Int(n), j as i64),
                Some(Where::Reg(Sym::V(n, j))) => content(Location::Vector(n), j as i64),
                Some(Where::Reg(Sym::Stack(o))) => content(Location::Stack(0), o),
                Some(Where::Ref(loc, o)) => {
                    let ptr: Vec<Sym> = (0..8).map(|j| content(loc, j)).collect();
                    match ptr[0] {
                        Sym::SpAddr(t, 0) if (0..8).all(|j| ptr[j] == Sym::SpAddr(t, j as u8)) => {
                            m.load_byte(&Base::Sp, t + o)
                        }
                        _ => Sym::Unknown,
                    }
                }
                _ => Sym::Unknown,
            };
            if got != want {
                r.fail(format!(
                    "call{i} ({}) arg {k} `{}` byte {b}: plan says {:?}, compiler put {got:?} there",
                    sig_text(sig),
                    a.spelling,
                    plan_byte(p, k, b).map(|w| match w {
                        Where::Reg(s) => format!("{s:?}"),
                        Where::Ref(l, o) => format!("*({l:?})+{o}"),
                    })
                ));
                return;
            }
            r.checked += 1;
        }
        // Apple: the caller extends integers narrower than 32 bits (in registers; variadic
        // ones are promoted to int by C itself, in registers or slots).
        let variadic = sig.first_variadic.is_some_and(|f| k >= f);
        if let (Some(v), Some(mv)) = (a.layout.as_value(), p.args()[k].moves.first()) {
            let size = v.byte_size();
            let in_reg = matches!(mv.to, Location::Int(_));
            if size < 4 && (variadic || (flavour == Flavour::Apple && in_reg)) {
                let fill = if v.kind().is_signed() {
                    Sym::Sign
                } else {
                    Sym::Zero
                };
                for j in size..4 {
                    let got = content(mv.to, j as i64);
                    let ok = got == fill
                        || (fill == Sym::Zero && v.kind() == ScalarKind::Bool && got == Sym::Zero);
                    if !ok {
                        r.fail(format!(
                            "call{i} arg {k} `{}` byte {j}: expected extension {fill:?}, found {got:?}",
                            a.spelling
                        ));
                        return;
                    }
                }
                r.checked += 1;
            }
        }
    }
}

/// The return side: at `ret` of `ret{i}`, the bytes of `gr{i}` are where the plan says.
fn check_return(i: usize, sig: &Sig, p: &CallPlan, body: &[Insn], r: &mut Report) {
    let Some(ret) = &sig.ret else { return };
    let Some(m) = run(body, "ret") else {
        r.fail(format!("ret{i}: did not reach ret"));
        return;
    };
    let g = format!("gr{i}");
    for (b, leaf) in leaf_mask(&ret.layout).into_iter().enumerate() {
        if !leaf {
            continue;
        }
        let want = Sym::Global(g.clone(), b as i64);
        let got = match &p.ret() {
            ReturnPlan::Scalar(Register::Int(0)) => m.bytes(Reg::X(0, 8))[b].clone(),
            ReturnPlan::Scalar(Register::Vector(0)) => m.vec[0][b].clone(),
            ReturnPlan::Registers(moves) => {
                match moves.iter().find(|mv| {
                    (mv.offset as usize..mv.offset as usize + mv.size as usize).contains(&b)
                }) {
                    Some(mv) => {
                        let j = b - mv.offset as usize;
                        match mv.from {
                            Register::Int(n) => m.bytes(Reg::X(n, 8))[j].clone(),
                            Register::Vector(n) => m.vec[n as usize][j].clone(),
                        }
                    }
                    None => Sym::Unknown,
                }
            }
            ReturnPlan::InMemory => m
                .memory
                .get(&(Base::Ref(Ptr::X(8)), b as i64))
                .cloned()
                .unwrap_or(Sym::Unknown),
            other => {
                r.fail(format!("ret{i}: unexpected plan {other:?}"));
                return;
            }
        };
        if got != want {
            r.fail(format!(
                "ret{i} `{}` byte {b}: plan {:?}, compiler has {got:?}",
                ret.spelling,
                p.ret()
            ));
            return;
        }
        r.checked += 1;
    }
}

/// Checks every signature's plan under `flavour` against the assembly.
fn check_all(sigs: &[Sig], funcs: &Functions, flavour: Flavour) -> Report {
    let mut r = Report {
        checked: 0,
        failed: 0,
        failures: Vec::new(),
    };
    for (i, sig) in sigs.iter().enumerate() {
        let p = plan(&sig.descriptor(), sig.first_variadic, flavour)
            .unwrap_or_else(|e| panic!("plan of {}: {e}", sig_text(sig)));
        if sig.first_variadic.is_none() {
            let body = funcs
                .get(&format!("callee{i}"))
                .expect("callee in the assembly");
            check_callee(i, sig, &p, body, &mut r);
        }
        let body = funcs
            .get(&format!("call{i}"))
            .expect("caller in the assembly");
        check_caller(i, sig, &p, flavour, body, &mut r);
        if sig.ret.is_some() {
            check_return(i, sig, &p, &funcs[&format!("ret{i}")], &mut r);
        }
    }
    r
}

/// How often each rule is exercised by the signatures' plans under `flavour`, so the test
/// fails if the generator stops reaching one.
fn coverage(sigs: &[Sig], flavour: Flavour) -> Vec<(&'static str, usize)> {
    let mut c: Vec<(&'static str, usize)> = Vec::new();
    let mut bump = |name: &'static str| match c.iter_mut().find(|(n, _)| *n == name) {
        Some((_, k)) => *k += 1,
        None => c.push((name, 1)),
    };
    for sig in sigs {
        let p = plan(&sig.descriptor(), sig.first_variadic, flavour).unwrap();
        // Only x0..x7 and v0..v7 carry arguments, x8 the result pointer: x18 (reserved on
        // Apple) and the other registers never appear.
        for a in p.args() {
            for l in a.moves.iter().map(|m| m.to).chain(a.by_reference) {
                assert!(
                    !matches!(l, Location::Int(8..) | Location::Vector(8..)),
                    "{l:?}"
                );
            }
        }
        assert!(matches!(
            p.hidden_return_pointer(),
            None | Some(Location::Int(8))
        ));
        let used = |f: fn(&Location) -> bool| {
            p.args()
                .iter()
                .flat_map(|a| a.moves.iter().map(|m| m.to).chain(a.by_reference))
                .filter(f)
                .count()
        };
        let gprs_used = used(|l| matches!(l, Location::Int(_)));
        let vregs_used = used(|l| matches!(l, Location::Vector(_)));
        for (k, a) in sig.args.iter().enumerate() {
            let ap = &p.args()[k];
            let on_stack = ap.moves.iter().any(|m| matches!(m.to, Location::Stack(_)))
                || matches!(ap.by_reference, Some(Location::Stack(_)));
            if matches!(classify(&a.layout, Flavour::Apple), ArgClass::Hfa { .. })
                && !matches!(classify(&a.layout, Flavour::Linux), ArgClass::Hfa { .. })
            {
                bump("zero-length array in a member: HFA for clang, not for gcc");
            }
            let variadic = sig.first_variadic.is_some_and(|f| k >= f);
            if a.layout.byte_alignment() >= 16
                && matches!(classify(&a.layout, flavour), ArgClass::Hfa { .. })
            {
                bump(if on_stack {
                    "16-aligned HFA on the stack"
                } else {
                    "16-aligned HFA in v registers"
                });
            }
            match classify(&a.layout, flavour) {
                ArgClass::Hfa { count, .. } if !on_stack => {
                    bump("B.2 HFA in v registers");
                    if count == 4 {
                        bump("B.2 HFA of 4");
                    }
                }
                ArgClass::Hfa { .. } if !variadic && vregs_used < 8 => {
                    bump("C.3 HFA on the stack, v registers left")
                }
                ArgClass::Hfa { .. } => bump("HFA on the stack"),
                ArgClass::Indirect => match ap.by_reference {
                    Some(Location::Int(_)) => bump("B.3 by reference in a GPR"),
                    _ => bump("B.3 by reference on the stack"),
                },
                ArgClass::Composite { units, align16 } => {
                    if !on_stack && units == 2 {
                        bump("C.10 composite in two GPRs");
                    }
                    if on_stack && !variadic && gprs_used < 8 {
                        bump("C.11 composite on the stack, GPRs left");
                    }
                    if align16 {
                        match ap.moves[0].to {
                            Location::Int(n) if n % 2 == 0 && n > 0 => {
                                bump("C.8 16-aligned at an even GPR")
                            }
                            Location::Int(n) if n % 2 == 1 => bump("16-aligned at an odd GPR"),
                            Location::Stack(o) if o % 16 == 0 => {
                                bump("C.12 16-aligned on the stack")
                            }
                            _ => {}
                        }
                    }
                }
                ArgClass::Integer | ArgClass::Float(_) => {
                    if on_stack && a.layout.byte_size() < 4 {
                        bump("narrow integer on the stack");
                    }
                    if !on_stack
                        && a.layout.byte_size() < 4
                        && !a.layout.as_value().unwrap().kind().is_float()
                    {
                        bump("narrow integer in a GPR");
                    }
                }
            }
            if on_stack
                && ap
                    .moves
                    .iter()
                    .any(|m| matches!(m.to, Location::Stack(o) if o % 8 != 0))
            {
                bump("Apple packed stack offset");
            }
            if variadic && on_stack && gprs_used < 8 {
                bump("variadic on the stack, GPRs free");
            }
            if variadic && !on_stack {
                bump("Linux variadic in registers");
            }
        }
        match (
            &p.ret(),
            sig.ret.as_ref().map(|r| classify(&r.layout, flavour)),
        ) {
            (ReturnPlan::InMemory, _) => bump("result in memory (x8)"),
            (ReturnPlan::Registers(_), Some(ArgClass::Hfa { .. })) => bump("result HFA in v0..v3"),
            (ReturnPlan::Registers(_), _) => bump("result composite in x0/x1"),
            _ => {}
        }
    }
    c
}

fn oracle(flavour: Flavour, cmd: &[&str], name: &str, zero_arrays: bool) {
    let (sigs, src) = generate(1200, 0x5EED_A64C, zero_arrays);
    let Some(asm) = compile(cmd, &src, name, AARCH64_COMPILERS) else {
        return;
    };
    let funcs = functions(&asm, &["//", ";"]);
    let r = check_all(&sigs, &funcs, flavour);
    let cov = coverage(&sigs, flavour);
    eprintln!(
        "{name}: {} signatures, {} bytes checked, {} failures; rules exercised: {cov:?}",
        sigs.len(),
        r.checked,
        r.failed
    );
    assert!(
        r.failures.is_empty(),
        "{name}: the plans disagree with the compiler:\n{}",
        r.failures.join("\n")
    );
    assert!(
        r.checked > 100_000,
        "{name}: too few bytes checked ({})",
        r.checked
    );
    let mut expected = vec![
        "B.2 HFA in v registers",
        "B.2 HFA of 4",
        "C.3 HFA on the stack, v registers left",
        "B.3 by reference in a GPR",
        "B.3 by reference on the stack",
        "C.10 composite in two GPRs",
        "C.11 composite on the stack, GPRs left",
        "C.12 16-aligned on the stack",
        "16-aligned HFA on the stack",
        "16-aligned HFA in v registers",
        "narrow integer on the stack",
        "narrow integer in a GPR",
        "result in memory (x8)",
        "result HFA in v0..v3",
        "result composite in x0/x1",
    ];
    if zero_arrays {
        expected.push("zero-length array in a member: HFA for clang, not for gcc");
    }
    match flavour {
        Flavour::Linux => expected.extend([
            "C.8 16-aligned at an even GPR",
            "Linux variadic in registers",
        ]),
        Flavour::Apple => expected.extend([
            "16-aligned at an odd GPR",
            "Apple packed stack offset",
            "variadic on the stack, GPRs free",
        ]),
    }
    for rule in expected {
        let n = cov.iter().find(|(r, _)| *r == rule).map_or(0, |(_, n)| *n);
        assert!(n >= 5, "{name}: rule `{rule}` exercised only {n} times");
    }
    // The oracle can tell the flavours apart: the other flavour's plans must fail here.
    let other = match flavour {
        Flavour::Linux => Flavour::Apple,
        Flavour::Apple => Flavour::Linux,
    };
    let wrong = check_all(&sigs, &funcs, other);
    eprintln!(
        "{name}: {:?} plans fail {} checks here, as they should",
        other, wrong.failed
    );
    assert!(
        wrong.failed > 50,
        "{name}: {other:?} plans pass too: the oracle is blind"
    );
}

/// What to install when a compiler is missing.
const AARCH64_COMPILERS: &str = "clang and gcc-aarch64-linux-gnu";

#[test]
fn linux_plans_match_gcc() {
    oracle(
        Flavour::Linux,
        &[
            "aarch64-linux-gnu-gcc",
            "-ffreestanding",
            "-fno-section-anchors",
        ],
        "gcc-aarch64-linux",
        true,
    );
}

#[test]
fn linux_plans_match_clang() {
    oracle(
        Flavour::Linux,
        &["clang", "-target", "aarch64-linux-gnu", "-ffreestanding"],
        "clang-aarch64-linux",
        false,
    );
}

#[test]
fn apple_plans_match_clang() {
    oracle(
        Flavour::Apple,
        &["clang", "-target", "arm64-apple-macos11", "-ffreestanding"],
        "clang-arm64-apple",
        true,
    );
}

/// The per-target C type tables against the compilers: `sizeof` and signedness as constants
/// in the assembly.
fn data_model_matches(model: gatun::layout::DataModel, cmd: &[&str], name: &str) {
    let src = "int ld_size = sizeof(long double);\n\
               int char_signed = (char)-1 < 0;\n\
               int long_size = sizeof(long);\n\
               int wchar_size = sizeof(__WCHAR_TYPE__);\n\
               int wchar_signed = (__WCHAR_TYPE__)-1 < 0;\n\
               int double_size = sizeof(double);\n";
    let Some(asm) = compile(cmd, src, name, AARCH64_COMPILERS) else {
        return;
    };
    let value = |var: &str| -> usize {
        let mut lines = asm.lines().map(str::trim);
        lines
            .by_ref()
            .find(|l| l.trim_start_matches('_') == format!("{var}:"))
            .unwrap_or_else(|| panic!("{name}: no {var} in\n{asm}"));
        let word = lines.next().unwrap();
        let word = word.split([';', '/']).next().unwrap().trim();
        if word.starts_with(".zero") {
            return 0; // gcc emits a zero value as `.zero 4`
        }
        word.strip_prefix(".word")
            .or_else(|| word.strip_prefix(".long"))
            .unwrap_or_else(|| panic!("{name}: {var}: {word}"))
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(model.char_signed, value("char_signed") == 1, "{name}: char");
    assert_eq!(model.long_size, value("long_size"), "{name}: long");
    assert_eq!(model.wchar_size, value("wchar_size"), "{name}: wchar_t");
    let wchar = model.layout("wchar_t").unwrap().kind();
    assert_eq!(
        wchar.is_signed(),
        value("wchar_signed") == 1,
        "{name}: wchar_t sign"
    );
    assert_eq!(
        model.long_double_is_double,
        value("ld_size") == value("double_size"),
        "{name}: long double"
    );
    match model.layout("long double") {
        Ok(l) => assert_eq!(l.byte_size(), value("ld_size"), "{name}: long double"),
        Err(e) => assert_eq!(value("ld_size"), 16, "{name}: long double rejected: {e}"),
    }
}

#[test]
fn data_models_match_the_compilers() {
    use gatun::layout::DataModel;
    data_model_matches(
        DataModel::LINUX_AARCH64,
        &["aarch64-linux-gnu-gcc", "-ffreestanding"],
        "gcc-aarch64-linux-model",
    );
    data_model_matches(
        DataModel::LINUX_AARCH64,
        &["clang", "-target", "aarch64-linux-gnu", "-ffreestanding"],
        "clang-aarch64-linux-model",
    );
    data_model_matches(
        DataModel::APPLE_ARM64,
        &["clang", "-target", "arm64-apple-macos11", "-ffreestanding"],
        "clang-arm64-apple-model",
    );
}
