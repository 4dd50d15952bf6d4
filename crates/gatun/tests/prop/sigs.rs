// Random C signatures for the downcall property test, shared through `include!` by
// crates/gatun-test-natives/build.rs (which writes a C checker per signature) and
// tests/downcall_prop.rs (which calls them). No dependency on gatun: build.rs includes it too.
// Deterministic: a fixed-seed xorshift generator, so both sides see the same signatures.
//
// The mixture is weighted toward the cases where calling conventions differ: homogeneous
// floating-point aggregates (HFAs, 1 to 4 `float` or `double` found through nested structs
// and arrays) and near-HFAs (mixed types, 5 members, a padding hole), 9-16-byte and
// over-16-byte composites, 16-byte-aligned composites, narrow integers and bools, long
// argument lists that use up the registers, variadic calls, and every return class. All of
// it is plain C for x86-64 SysV, AAPCS64 and Microsoft x64 (pointers are 8 bytes on all; only
// fixed-width integer types are used, so LLP64's 4-byte `long` never matters).
//
// The Microsoft x64 mixture ([`PropAbi::Win64`]) is a different one, weighted toward what that
// convention decides on: aggregates of exactly 1, 2, 4 or 8 bytes (passed and returned in an
// integer register, even when all their members are floats) against every other size (3, 5,
// 6, 7, 9-16 bytes and larger: passed by reference to a copy, returned through a hidden
// pointer), floats and integers sharing the four argument slots, more than four arguments,
// and variadic calls with `float`/`double` arguments (which travel in both register files).
// The RISC-V 64 mixture ([`PropAbi::Lp64d`]) is in `sigs_lp64d.rs`, the PPC64LE one
// ([`PropAbi::ElfV2`]) in `sigs_ppc64le.rs`, the s390x one ([`PropAbi::S390x`]) in
// `sigs_s390x.rs`, all included below.
// The ABI is a parameter, never a `cfg!` here: this file is compiled both into a build script
// (whose `cfg!` is the host's) and into the tests (the target's); each passes its target's.

/// Which calling convention the signatures are generated for.
#[allow(dead_code)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropAbi {
    /// x86-64 SysV and AAPCS64 (the original mixture).
    Unix,
    /// Microsoft x64 (Windows on x86-64).
    Win64,
    /// RISC-V 64 LP64D (its own mixture, `sigs_lp64d.rs`).
    Lp64d,
    /// PPC64LE ELFv2 (its own mixture, `sigs_ppc64le.rs`).
    ElfV2,
    /// s390x Linux (its own mixture, `sigs_s390x.rs`).
    S390x,
}

/// C scalar types used: index = kind id.
#[allow(dead_code)]
pub const PROP_C_TYPES: [&str; 12] = [
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "float", "double", "void *", "bool",
];
/// Kind id of `float`.
#[allow(dead_code)]
pub const PROP_F32: usize = 8;
/// Kind id of `double`.
#[allow(dead_code)]
pub const PROP_F64: usize = 9;
/// Kind id of `void *`.
#[allow(dead_code)]
pub const PROP_PTR: usize = 10;
/// Kind id of `bool`.
#[allow(dead_code)]
pub const PROP_BOOL: usize = 11;
/// Number of generated signatures.
#[allow(dead_code)]
pub const PROP_SIGNATURES: usize = 1000;

/// A generated type.
#[allow(dead_code)]
#[derive(Debug, Clone, PartialEq)]
pub enum PropTy {
    /// A scalar of kind id `.0` (an index into [`PROP_C_TYPES`]).
    Scalar(usize),
    /// A struct of these members; `true`: `__attribute__((aligned(16)))` on the struct.
    Struct(Vec<PropTy>, bool),
    /// `T m[n]` (only as a struct member).
    Array(Box<PropTy>, usize),
}

/// What a signature exercises (bits of [`PropSig::tags`]), as the generator chose it.
#[allow(dead_code)]
pub const PROP_TAGS: [&str; 16] = [
    "HFA argument",
    "near-HFA argument",
    "9-16-byte composite argument",
    "over-16-byte composite argument",
    "16-byte-aligned composite argument",
    "narrow integer or bool argument",
    "array member in an argument",
    "more than 8 arguments",
    "variadic",
    "void return",
    "scalar return",
    "HFA return",
    "near-HFA return",
    "composite return of at most 16 bytes (not an HFA)",
    "composite return over 16 bytes",
    "16-byte-aligned composite return",
];

/// What a [`PropAbi::Win64`] signature exercises (bits of [`PropSig::tags`]).
#[allow(dead_code)]
pub const PROP_TAGS_WIN64: [&str; 16] = [
    "1/2/4/8-byte aggregate argument (in a register)",
    "other aggregate argument of at most 16 bytes (by reference)",
    "all-float aggregate argument",
    "over-16-byte aggregate argument",
    "16-byte-aligned aggregate argument",
    "narrow integer or bool argument",
    "float and integer arguments both in the first 4 slots",
    "more than 4 arguments",
    "variadic",
    "variadic float or double",
    "void return",
    "scalar return",
    "1/2/4/8-byte aggregate return (in RAX)",
    "aggregate return through a hidden pointer",
    "all-float aggregate return",
    "array member in an argument",
];

/// The tag names of `abi`'s mixture (bit i of [`PropSig::tags`] is entry i).
#[allow(dead_code)]
pub fn prop_tags(abi: PropAbi) -> &'static [&'static str; 16] {
    match abi {
        PropAbi::Unix => &PROP_TAGS,
        PropAbi::Win64 => &PROP_TAGS_WIN64,
        PropAbi::Lp64d => &PROP_TAGS_LP64D,
        PropAbi::ElfV2 => &PROP_TAGS_ELFV2,
        PropAbi::S390x => &PROP_TAGS_S390X,
    }
}

/// A generated signature.
#[allow(dead_code)]
#[derive(Debug, Clone)]
pub struct PropSig {
    /// `None`: `void`.
    pub ret: Option<PropTy>,
    pub args: Vec<PropTy>,
    /// `Some(i)`: a variadic function `f(a0, .., a(i-1), ...)` called with the rest as its
    /// variadic arguments (scalars only, read with the default promotions).
    pub first_variadic: Option<usize>,
    /// Bit i set: the signature exercises `PROP_TAGS[i]`.
    pub tags: u32,
}

/// Size and alignment in bytes of `t` by the C rules (LP64: pointers take 8 bytes).
#[allow(dead_code)]
pub fn prop_size_align(t: &PropTy) -> (usize, usize) {
    match t {
        PropTy::Scalar(k) => {
            let n = [1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 8, 1][*k];
            (n, n)
        }
        PropTy::Array(e, n) => {
            let (s, a) = prop_size_align(e);
            (s * n, a)
        }
        PropTy::Struct(f, a16) => {
            let mut off = 0usize;
            let mut align: usize = if *a16 { 16 } else { 1 };
            for m in f {
                let (s, a) = prop_size_align(m);
                off = off.next_multiple_of(a) + s;
                align = align.max(a);
            }
            (off.next_multiple_of(align), align)
        }
    }
}

/// The scalar leaf kinds of a type, in declaration order (arrays expanded).
#[allow(dead_code)]
pub fn prop_leaves(t: &PropTy, out: &mut Vec<usize>) {
    match t {
        PropTy::Scalar(k) => out.push(*k),
        PropTy::Struct(f, _) => f.iter().for_each(|x| prop_leaves(x, out)),
        PropTy::Array(e, n) => (0..*n).for_each(|_| prop_leaves(e, out)),
    }
}

fn prop_has_array(t: &PropTy) -> bool {
    match t {
        PropTy::Scalar(_) => false,
        PropTy::Struct(f, _) => f.iter().any(prop_has_array),
        PropTy::Array(..) => true,
    }
}

#[allow(dead_code)]
struct PropRng(u64);

/// The kinds of composite the generator draws, for tags.
#[allow(dead_code)]
#[derive(Clone, Copy, PartialEq)]
enum PropShape {
    Hfa,
    NearHfa,
    Mid,
    Big,
    Aligned16,
    Other,
}

#[allow(dead_code)]
impl PropRng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn scalar(&mut self) -> PropTy {
        PropTy::Scalar(self.below(12) as usize)
    }
    fn float_kind(&mut self) -> usize {
        if self.chance(50) {
            PROP_F32
        } else {
            PROP_F64
        }
    }
    /// Members holding exactly `count` leaves of kind `k` and nothing else, in a random shape:
    /// scalars, arrays, nested structs, arrays of structs.
    fn hfa_members(&mut self, k: usize, count: usize, depth: u32) -> Vec<PropTy> {
        let mut out = Vec::new();
        let mut left = count;
        while left > 0 {
            let m = 1 + self.below(left as u64) as usize;
            left -= m;
            let pick = if depth >= 3 { 0 } else { self.below(4) };
            out.push(match (pick, m) {
                (0, 1) => PropTy::Scalar(k),
                (0, _) | (1, _) => PropTy::Array(Box::new(PropTy::Scalar(k)), m),
                (2, _) => PropTy::Struct(self.hfa_members(k, m, depth + 1), false),
                _ => {
                    // an array of `d` structs of `m / d` leaves each
                    let d = if m % 2 == 0 && self.chance(50) { 2 } else { m };
                    let e = PropTy::Struct(self.hfa_members(k, m / d, depth + 1), false);
                    PropTy::Array(Box::new(e), d)
                }
            });
        }
        out
    }
    /// An HFA of 1 to 4 `float`s or `double`s (16-byte aligned when that adds no padding).
    fn hfa(&mut self) -> PropTy {
        let k = self.float_kind();
        let count = 1 + self.below(4) as usize;
        let full16 = (k == PROP_F64 && count % 2 == 0) || (k == PROP_F32 && count == 4);
        let a16 = full16 && self.chance(25);
        PropTy::Struct(self.hfa_members(k, count, 1), a16)
    }
    /// Almost an HFA: mixed `float`/`double`, 5 members, a padding hole, or an integer member.
    fn near_hfa(&mut self) -> PropTy {
        let k = self.float_kind();
        match self.below(4) {
            0 => {
                let count = 1 + self.below(3) as usize;
                let mut f = self.hfa_members(k, count, 1);
                let other = if k == PROP_F32 { PROP_F64 } else { PROP_F32 };
                let at = self.below(f.len() as u64 + 1) as usize;
                f.insert(at, PropTy::Scalar(other));
                PropTy::Struct(f, false)
            }
            1 => PropTy::Struct(self.hfa_members(k, 5, 1), false),
            2 => {
                // 1-3 floats or 1 double in a 16-byte-aligned struct: a padding hole
                let count = if k == PROP_F32 { 1 + self.below(3) as usize } else { 1 };
                PropTy::Struct(self.hfa_members(k, count, 1), true)
            }
            _ => {
                let count = 1 + self.below(3) as usize;
                let mut f = self.hfa_members(k, count, 1);
                let at = self.below(f.len() as u64 + 1) as usize;
                f.insert(at, PropTy::Scalar(self.below(8) as usize));
                PropTy::Struct(f, false)
            }
        }
    }
    /// A struct of random scalars, small arrays and small structs, 16-byte aligned or not.
    fn mixed(&mut self, depth: u32, a16: bool) -> PropTy {
        let n = 1 + self.below(5) as usize;
        let f = (0..n)
            .map(|_| match self.below(10) {
                0..=5 => self.scalar(),
                6 | 7 => {
                    let e = self.scalar();
                    PropTy::Array(Box::new(e), 1 + self.below(4) as usize)
                }
                _ if depth < 2 => self.mixed(depth + 1, false),
                _ => self.scalar(),
            })
            .collect();
        PropTy::Struct(f, a16)
    }
    /// A struct whose size is in `lo..=hi` bytes (rejection sampling).
    fn sized(&mut self, lo: usize, hi: usize) -> PropTy {
        loop {
            let t = self.mixed(1, false);
            if (lo..=hi).contains(&prop_size_align(&t).0) {
                return t;
            }
        }
    }
    /// A composite of natural alignment 16: the attribute on the struct itself, or on a
    /// member (then the outer struct is 16-aligned through its member).
    fn aligned16(&mut self) -> PropTy {
        let inner = if self.chance(30) { self.hfa() } else { self.mixed(1, false) };
        let inner = match inner {
            PropTy::Struct(f, _) => PropTy::Struct(f, true),
            t => t,
        };
        if self.chance(50) {
            inner
        } else {
            let mut f = vec![inner];
            if self.chance(50) {
                f.insert(0, self.scalar());
            }
            PropTy::Struct(f, false)
        }
    }
    /// A composite of a chosen shape.
    fn composite(&mut self, shape: PropShape) -> PropTy {
        match shape {
            PropShape::Hfa => self.hfa(),
            PropShape::NearHfa => self.near_hfa(),
            PropShape::Mid => self.sized(9, 16),
            PropShape::Big => self.sized(17, 72),
            PropShape::Aligned16 => self.aligned16(),
            PropShape::Other => self.sized(1, 8),
        }
    }
    /// An argument type (`float_heavy`: mostly floats and HFAs) and the shape drawn.
    fn arg(&mut self, float_heavy: bool) -> (PropTy, Option<PropShape>) {
        let p = self.below(100);
        if float_heavy {
            return match p {
                0..=54 => (PropTy::Scalar(self.float_kind()), None),
                55..=84 => (self.hfa(), Some(PropShape::Hfa)),
                85..=89 => (self.near_hfa(), Some(PropShape::NearHfa)),
                _ => (self.scalar(), None),
            };
        }
        let shape = match p {
            0..=39 => return (self.scalar(), None),
            40..=52 => PropShape::Hfa,
            53..=61 => PropShape::NearHfa,
            62..=72 => PropShape::Mid,
            73..=81 => PropShape::Big,
            82..=89 => PropShape::Aligned16,
            _ => PropShape::Other,
        };
        (self.composite(shape), Some(shape))
    }
}

/// The signatures of `abi`'s mixture (the same on every call).
#[allow(dead_code)]
pub fn prop_signatures(abi: PropAbi) -> Vec<PropSig> {
    match abi {
        PropAbi::Unix => prop_signatures_unix(),
        PropAbi::Win64 => prop_signatures_win64(),
        PropAbi::Lp64d => prop_signatures_lp64d(),
        PropAbi::ElfV2 => prop_signatures_ppc64le(),
        PropAbi::S390x => prop_signatures_s390x(),
    }
}

/// Whether every scalar leaf of `t` is a `float` or a `double`.
#[allow(dead_code)]
fn prop_all_float(t: &PropTy) -> bool {
    let mut l = Vec::new();
    prop_leaves(t, &mut l);
    !l.is_empty() && l.iter().all(|&k| k == PROP_F32 || k == PROP_F64)
}

#[allow(dead_code)]
impl PropRng {
    /// A struct of one of `sizes` bytes: a size drawn, then random structs until one has it
    /// (a byte array when none does in 10,000 tries; deterministic either way).
    fn sized_exact(&mut self, sizes: &[usize]) -> PropTy {
        let want = sizes[self.below(sizes.len() as u64) as usize];
        for _ in 0..10_000 {
            let t = if want <= 2 || self.chance(70) {
                self.mixed(1, false)
            } else {
                self.mixed(0, false)
            };
            if prop_size_align(&t).0 == want {
                return t;
            }
        }
        PropTy::Struct(vec![PropTy::Array(Box::new(PropTy::Scalar(4)), want)], false)
    }
    /// A struct of only `float`s or only `double`s, 4 to 16 bytes (nested shapes as HFAs).
    fn float_struct(&mut self) -> PropTy {
        let k = self.float_kind();
        let count = if k == PROP_F32 { 1 + self.below(4) } else { 1 + self.below(2) };
        PropTy::Struct(self.hfa_members(k, count as usize, 1), false)
    }
    /// An integer-class scalar (integers, pointers, bools).
    fn int_scalar(&mut self) -> PropTy {
        let k = self.below(10) as usize;
        PropTy::Scalar(match k {
            8 => PROP_PTR,
            9 => PROP_BOOL,
            k => k,
        })
    }
    /// A Microsoft x64 argument type.
    fn win64_arg(&mut self) -> PropTy {
        match self.below(100) {
            0..=19 => self.int_scalar(),
            20..=34 => PropTy::Scalar(self.float_kind()),
            35..=52 => self.sized_exact(&[1, 2, 4, 8]),
            53..=67 => self.sized_exact(&[3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16]),
            68..=79 => self.float_struct(),
            80..=88 => self.sized(17, 72),
            89..=94 => self.aligned16(),
            _ => self.near_hfa(),
        }
    }
}

/// The [`PropAbi::Win64`] mixture; tags from what each signature holds.
#[allow(dead_code)]
fn prop_signatures_win64() -> Vec<PropSig> {
    let mut r = PropRng(0x2545_f491_4f6c_dd1d);
    (0..PROP_SIGNATURES)
        .map(|_| {
            // 0-1: floats and integers sharing the slots, 2-3: past the four registers, else
            // a mixture of up to 8
            let mode = r.below(10);
            let nargs = match mode {
                0 | 1 => 2 + r.below(5) as usize,
                2 | 3 => 5 + r.below(20) as usize,
                _ => r.below(9) as usize,
            };
            let first_variadic = if nargs >= 1 && r.chance(30) {
                Some(1 + r.below(nargs as u64) as usize)
            } else {
                None
            };
            let args: Vec<PropTy> = (0..nargs)
                .map(|j| {
                    if first_variadic.is_some_and(|f| j >= f) {
                        // variadic part: scalars, floats and doubles often
                        return if r.chance(40) {
                            PropTy::Scalar(r.float_kind())
                        } else {
                            r.int_scalar()
                        };
                    }
                    match mode {
                        0 | 1 => match r.below(100) {
                            0..=49 => PropTy::Scalar(r.float_kind()),
                            50..=84 => r.int_scalar(),
                            _ => r.sized_exact(&[1, 2, 4, 8]),
                        },
                        _ => r.win64_arg(),
                    }
                })
                .collect();
            let ret = match r.below(20) {
                0 | 1 => None,
                2..=4 => Some(r.int_scalar()),
                5 | 6 => Some(PropTy::Scalar(r.float_kind())),
                7..=9 => Some(r.sized_exact(&[1, 2, 4, 8])),
                10 | 11 => Some(r.float_struct()),
                12..=14 => Some(r.sized_exact(&[3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16])),
                15 | 16 => Some(r.sized(17, 72)),
                17 => Some(r.aligned16()),
                _ => Some(r.near_hfa()),
            };
            let mut sig = PropSig { ret, args, first_variadic, tags: 0 };
            sig.tags = prop_win64_tags(&sig);
            sig
        })
        .collect()
}

/// The [`PROP_TAGS_WIN64`] bits of `sig`.
#[allow(dead_code)]
fn prop_win64_tags(sig: &PropSig) -> u32 {
    let mut tags = 0u32;
    let fixed = sig.first_variadic.unwrap_or(sig.args.len());
    let (mut float_slot, mut int_slot) = (false, false);
    for (j, a) in sig.args.iter().enumerate() {
        let (size, align) = prop_size_align(a);
        let mut l = Vec::new();
        prop_leaves(a, &mut l);
        if let PropTy::Struct(..) = a {
            tags |= match size {
                1 | 2 | 4 | 8 => 1 << 0,
                0..=16 => 1 << 1,
                _ => 1 << 3,
            };
            if prop_all_float(a) {
                tags |= 1 << 2;
            }
            if align == 16 {
                tags |= 1 << 4;
            }
            if prop_has_array(a) {
                tags |= 1 << 15;
            }
        }
        if l.iter().any(|&k| matches!(k, 0 | 1 | 4 | 5 | PROP_BOOL)) {
            tags |= 1 << 5;
        }
        if j < 4 {
            match a {
                PropTy::Scalar(PROP_F32 | PROP_F64) => float_slot = true,
                _ => int_slot = true,
            }
        }
        if j >= fixed && matches!(a, PropTy::Scalar(PROP_F32 | PROP_F64)) {
            tags |= 1 << 9;
        }
    }
    if float_slot && int_slot {
        tags |= 1 << 6;
    }
    if sig.args.len() > 4 {
        tags |= 1 << 7;
    }
    if sig.first_variadic.is_some() {
        tags |= 1 << 8;
    }
    tags |= match &sig.ret {
        None => 1 << 10,
        Some(PropTy::Scalar(_)) => 1 << 11,
        Some(t) => {
            let bit = match prop_size_align(t).0 {
                1 | 2 | 4 | 8 => 1 << 12,
                _ => 1 << 13,
            };
            if prop_all_float(t) {
                bit | 1 << 14
            } else {
                bit
            }
        }
    };
    tags
}

/// The [`PropAbi::Unix`] mixture.
#[allow(dead_code)]
fn prop_signatures_unix() -> Vec<PropSig> {
    let mut r = PropRng(0x9e37_79b9_7f4a_7c15);
    (0..PROP_SIGNATURES)
        .map(|_| {
            let mut tags = 0u32;
            // 0-1: many floats/HFAs, 2: many integers and small composites, else a mixture
            let mode = r.below(10);
            let nargs = match mode {
                0..=2 => 9 + r.below(16) as usize,
                _ => r.below(17) as usize,
            };
            let first_variadic = if nargs >= 1 && r.chance(25) {
                Some(1 + r.below(nargs as u64) as usize)
            } else {
                None
            };
            let args: Vec<PropTy> = (0..nargs)
                .map(|j| {
                    if first_variadic.is_some_and(|f| j >= f) {
                        // variadic part: integers, bools, floats, doubles, pointers
                        return r.scalar();
                    }
                    let (t, shape) = match mode {
                        0 | 1 => r.arg(true),
                        2 => match r.below(10) {
                            0..=6 => (r.scalar(), None),
                            7 | 8 => (r.composite(PropShape::Mid), Some(PropShape::Mid)),
                            _ => (r.composite(PropShape::Other), Some(PropShape::Other)),
                        },
                        _ => r.arg(false),
                    };
                    tags |= match shape {
                        Some(PropShape::Hfa) => 1 << 0,
                        Some(PropShape::NearHfa) => 1 << 1,
                        Some(PropShape::Mid) => 1 << 2,
                        Some(PropShape::Big) => 1 << 3,
                        Some(PropShape::Aligned16) => 1 << 4,
                        _ => 0,
                    };
                    t
                })
                .collect();
            for a in &args {
                let mut l = Vec::new();
                prop_leaves(a, &mut l);
                if l.iter().any(|&k| matches!(k, 0 | 1 | 4 | 5 | PROP_BOOL)) {
                    tags |= 1 << 5;
                }
                if prop_has_array(a) {
                    tags |= 1 << 6;
                }
            }
            if nargs > 8 {
                tags |= 1 << 7;
            }
            if first_variadic.is_some() {
                tags |= 1 << 8;
            }
            let (ret, bit) = match r.below(20) {
                0 | 1 => (None, 9),
                2..=6 => (Some(r.scalar()), 10),
                7..=9 => (Some(r.hfa()), 11),
                10 | 11 => (Some(r.near_hfa()), 12),
                12..=14 => {
                    let shape = if r.chance(60) { PropShape::Mid } else { PropShape::Other };
                    (Some(r.composite(shape)), 13)
                }
                15..=17 => (Some(r.composite(PropShape::Big)), 14),
                _ => (Some(r.aligned16()), 15),
            };
            tags |= 1 << bit;
            PropSig { ret, args, first_variadic, tags }
        })
        .collect()
}

/// The C source of all checkers. `prop_<i>` folds every scalar leaf of its arguments into an
/// FNV-style hash `h` (integers and bools as their 64-bit sign/zero extension, floats as their
/// bits, pointers as their address), stores `h` where `prop_last_hash()` (this thread's last
/// hash) finds it, and returns a value derived from `h`: leaf k of the return gets
/// `v = h + k * 0x9e3779b97f4a7c15`, as `(T)v` for integers and pointers, `(bool)(v & 1)`,
/// `(float)(int32_t)(v >> 40)` and `(double)(int64_t)(v >> 12)` for floats.
#[allow(dead_code)]
pub fn prop_c_source(abi: PropAbi) -> String {
    // The C spelling of a type (declaring the typedefs it needs into `out`).
    fn decl(t: &PropTy, sig: usize, next: &mut usize, out: &mut String) -> String {
        match t {
            PropTy::Scalar(k) => PROP_C_TYPES[*k].to_string(),
            PropTy::Struct(fields, a16) => {
                let mut members = String::new();
                for (i, f) in fields.iter().enumerate() {
                    let m = match f {
                        PropTy::Array(e, n) => format!("{} f{i}[{n}]; ", decl(e, sig, next, out)),
                        _ => format!("{} f{i}; ", decl(f, sig, next, out)),
                    };
                    members.push_str(&m);
                }
                let name = format!("prop_s{sig}_{}", *next);
                *next += 1;
                let attr = if *a16 { "__attribute__((aligned(16))) " } else { "" };
                out.push_str(&format!("typedef struct {attr}{{ {members}}} {name};\n"));
                name
            }
            PropTy::Array(..) => unreachable!("arrays are only struct members"),
        }
    }
    fn paths(t: &PropTy, prefix: String, out: &mut Vec<(String, usize)>) {
        match t {
            PropTy::Scalar(k) => out.push((prefix, *k)),
            PropTy::Struct(f, _) => {
                for (i, x) in f.iter().enumerate() {
                    paths(x, format!("{prefix}.f{i}"), out)
                }
            }
            PropTy::Array(e, n) => {
                for i in 0..*n {
                    paths(e, format!("{prefix}[{i}]"), out)
                }
            }
        }
    }
    let mut s = String::from(
        "/* generated by gatun-test-natives' build.rs from tests/prop/sigs.rs: downcall property-test checkers */\n\
         #include <stdarg.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n\
         #define MIXI(x) h = (h ^ (uint64_t)(x)) * 0x100000001b3ULL\n\
         #define MIXF(x) do { uint32_t b_; float f_ = (x); memcpy(&b_, &f_, 4); h = (h ^ b_) * 0x100000001b3ULL; } while (0)\n\
         #define MIXD(x) do { uint64_t b_; double d_ = (x); memcpy(&b_, &d_, 8); h = (h ^ b_) * 0x100000001b3ULL; } while (0)\n\
         #define MIXP(x) h = (h ^ (uint64_t)(uintptr_t)(x)) * 0x100000001b3ULL\n\
         static _Thread_local uint64_t prop_h;\n\
         uint64_t prop_last_hash(void) { return prop_h; }\n",
    );
    for (i, sig) in prop_signatures(abi).iter().enumerate() {
        let mut next = 0;
        let arg_types: Vec<String> = sig.args.iter().map(|a| decl(a, i, &mut next, &mut s)).collect();
        let ret_type = match &sig.ret {
            Some(t) => decl(t, i, &mut next, &mut s),
            None => "void".to_string(),
        };
        let fixed = sig.first_variadic.unwrap_or(arg_types.len());
        let mut params: Vec<String> =
            arg_types[..fixed].iter().enumerate().map(|(j, t)| format!("{t} a{j}")).collect();
        if sig.first_variadic.is_some() {
            params.push("...".to_string());
        }
        let params = if params.is_empty() { "void".to_string() } else { params.join(", ") };
        s.push_str(&format!("{ret_type} prop_{i}({params}) {{\n  uint64_t h = 0xcbf29ce484222325ULL ^ {i}ULL;\n"));
        if sig.first_variadic.is_some() {
            s.push_str(&format!("  va_list ap;\n  va_start(ap, a{});\n", fixed - 1));
            for (j, t) in arg_types.iter().enumerate().skip(fixed) {
                // default argument promotions: small integers and bools arrive as int, float
                // as double
                let line = match &sig.args[j] {
                    PropTy::Scalar(0 | 1 | 4 | 5 | PROP_BOOL) => {
                        format!("  {t} a{j} = ({t})va_arg(ap, int);\n")
                    }
                    PropTy::Scalar(PROP_F32) => format!("  double a{j} = va_arg(ap, double);\n"),
                    _ => format!("  {t} a{j} = va_arg(ap, {t});\n"),
                };
                s.push_str(&line);
            }
            s.push_str("  va_end(ap);\n");
        }
        for (j, a) in sig.args.iter().enumerate() {
            let mut p = Vec::new();
            paths(a, format!("a{j}"), &mut p);
            for (path, k) in p {
                // a variadic float is hashed as the double it was promoted to (a float member
                // of a variadic struct is not promoted)
                let m = match k {
                    PROP_F32 if j >= fixed && matches!(a, PropTy::Scalar(_)) => "MIXD",
                    PROP_F32 => "MIXF",
                    PROP_F64 => "MIXD",
                    PROP_PTR => "MIXP",
                    _ => "MIXI",
                };
                s.push_str(&format!("  {m}({path});\n"));
            }
        }
        s.push_str("  prop_h = h;\n");
        if let Some(ret) = &sig.ret {
            let mut p = Vec::new();
            paths(ret, "r".to_string(), &mut p);
            s.push_str(&format!("  {ret_type} r;\n  memset(&r, 0, sizeof r);\n"));
            for (idx, (path, k)) in p.iter().enumerate() {
                let v = format!("(h + {idx}ULL * 0x9e3779b97f4a7c15ULL)");
                let e = match *k {
                    PROP_F32 => format!("(float)(int32_t)({v} >> 40)"),
                    PROP_F64 => format!("(double)(int64_t)({v} >> 12)"),
                    PROP_PTR => format!("(void *)(uintptr_t){v}"),
                    PROP_BOOL => format!("(bool)({v} & 1)"),
                    _ => format!("({}){v}", PROP_C_TYPES[*k]),
                };
                s.push_str(&format!("  {path} = {e};\n"));
            }
            s.push_str("  return r;\n");
        }
        s.push_str("}\n");
    }
    s
}

/// Number of signatures (the first of [`prop_signatures`]) with an upcall checker.
#[allow(dead_code)]
pub const PROP_CB_SIGNATURES: usize = 1000;

/// The base of the constants `call_cb_<i>` passes: argument leaf n (counted across all
/// arguments in order) gets `v = base + n * 0x9e3779b97f4a7c15`, encoded as for a return leaf
/// of [`prop_c_source`].
#[allow(dead_code)]
pub fn prop_cb_arg_base(i: usize) -> u64 {
    0x5eed_c0de_0000_0001u64 ^ (i as u64).wrapping_mul(0x0100_0000_01b3)
}

/// The base of the values the callback of `call_cb_<i>` returns (the same encoding).
#[allow(dead_code)]
pub fn prop_cb_ret_base(i: usize) -> u64 {
    prop_cb_arg_base(i).rotate_left(29) ^ 0xa5a5_a5a5
}

/// The C source of the upcall checkers: `int32_t call_cb_<i>(R (*cb)(A0, A1, ..))` (every
/// argument named, also those of a variadic downcall signature) builds its arguments from
/// the constants of [`prop_cb_arg_base`], calls `cb` once, and returns 0 if every leaf of the
/// result equals the encoding of [`prop_cb_ret_base`], else 1 + the index of the first leaf
/// that does not. Appended to [`prop_c_source`]'s file (it uses its includes).
#[allow(dead_code)]
pub fn prop_cb_c_source(abi: PropAbi) -> String {
    fn decl(t: &PropTy, sig: usize, next: &mut usize, out: &mut String) -> String {
        match t {
            PropTy::Scalar(k) => PROP_C_TYPES[*k].to_string(),
            PropTy::Struct(fields, a16) => {
                let mut members = String::new();
                for (i, f) in fields.iter().enumerate() {
                    let m = match f {
                        PropTy::Array(e, n) => format!("{} f{i}[{n}]; ", decl(e, sig, next, out)),
                        _ => format!("{} f{i}; ", decl(f, sig, next, out)),
                    };
                    members.push_str(&m);
                }
                let name = format!("prop_cs{sig}_{}", *next);
                *next += 1;
                let attr = if *a16 { "__attribute__((aligned(16))) " } else { "" };
                out.push_str(&format!("typedef struct {attr}{{ {members}}} {name};\n"));
                name
            }
            PropTy::Array(..) => unreachable!("arrays are only struct members"),
        }
    }
    fn paths(t: &PropTy, prefix: String, out: &mut Vec<(String, usize)>) {
        match t {
            PropTy::Scalar(k) => out.push((prefix, *k)),
            PropTy::Struct(f, _) => {
                for (i, x) in f.iter().enumerate() {
                    paths(x, format!("{prefix}.f{i}"), out)
                }
            }
            PropTy::Array(e, n) => {
                for i in 0..*n {
                    paths(e, format!("{prefix}[{i}]"), out)
                }
            }
        }
    }
    fn value(base: &str, idx: usize, k: usize) -> String {
        let v = format!("({base} + {idx}ULL * 0x9e3779b97f4a7c15ULL)");
        match k {
            PROP_F32 => format!("(float)(int32_t)({v} >> 40)"),
            PROP_F64 => format!("(double)(int64_t)({v} >> 12)"),
            PROP_PTR => format!("(void *)(uintptr_t){v}"),
            PROP_BOOL => format!("(bool)({v} & 1)"),
            _ => format!("({}){v}", PROP_C_TYPES[k]),
        }
    }
    let mut s = String::from("/* upcall property-test checkers */\n");
    for (i, sig) in prop_signatures(abi).iter().take(PROP_CB_SIGNATURES).enumerate() {
        let mut next = 0;
        let arg_types: Vec<String> = sig.args.iter().map(|a| decl(a, i, &mut next, &mut s)).collect();
        let ret_type = match &sig.ret {
            Some(t) => decl(t, i, &mut next, &mut s),
            None => "void".to_string(),
        };
        let params = if arg_types.is_empty() { "void".to_string() } else { arg_types.join(", ") };
        s.push_str(&format!(
            "int32_t call_cb_{i}({ret_type} (*cb)({params})) {{\n  const uint64_t ha = {:#x}ULL, hr = {:#x}ULL;\n  (void)ha; (void)hr;\n",
            prop_cb_arg_base(i),
            prop_cb_ret_base(i)
        ));
        let mut n = 0;
        for (j, (a, t)) in sig.args.iter().zip(&arg_types).enumerate() {
            s.push_str(&format!("  {t} a{j};\n  memset(&a{j}, 0, sizeof a{j});\n"));
            let mut p = Vec::new();
            paths(a, format!("a{j}"), &mut p);
            for (path, k) in p {
                s.push_str(&format!("  {path} = {};\n", value("ha", n, k)));
                n += 1;
            }
        }
        let call_args: Vec<String> = (0..sig.args.len()).map(|j| format!("a{j}")).collect();
        let call = format!("cb({})", call_args.join(", "));
        match &sig.ret {
            None => s.push_str(&format!("  {call};\n  return 0;\n}}\n")),
            Some(ret) => {
                s.push_str(&format!("  {ret_type} r = {call};\n"));
                let mut p = Vec::new();
                paths(ret, "r".to_string(), &mut p);
                for (idx, (path, k)) in p.iter().enumerate() {
                    let want = value("hr", idx, *k);
                    let cond = match *k {
                        // compare bits: a float that C computes must round-trip exactly
                        PROP_F32 | PROP_F64 => format!("memcmp(&(__typeof__({path})){{{want}}}, &{path}, sizeof {path}) != 0"),
                        _ => format!("{path} != {want}"),
                    };
                    s.push_str(&format!("  if ({cond}) return {};\n", idx + 1));
                }
                s.push_str("  return 0;\n}\n");
            }
        }
    }
    s
}

include!("sigs_lp64d.rs");
include!("sigs_ppc64le.rs");
include!("sigs_s390x.rs");
