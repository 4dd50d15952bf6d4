// The PPC64LE (ELFv2) mixture of the property tests, included by tests/prop/sigs.rs (and so
// shared with crates/gatun-test-natives/build.rs); the same rules as there: no dependency on
// gatun, deterministic, the ABI a parameter.
//
// Weighted toward what ELFv2 decides on: homogeneous floating-point aggregates of 1 to 8
// `float`s or `double`s (one FPR per member, `float`s in double format) found through nested
// structs and arrays; the same HFAs when `f13` runs out part-way (the rest in the GPRs and the
// parameter save area, from the doubleword of the first member left) or is used up; many
// floating-point scalars, interleaved with integers (each takes its doubleword, so the GPR it
// shadows is skipped); more than 8 integer arguments (the save area from offset 64); near-HFAs
// (mixed kinds, 9 or more members, a padding hole, an integer member: their image in GPRs);
// aggregates of 1 to 64 bytes split between `r10` and the save area; 16-byte-aligned
// aggregates (an even doubleword); narrow integers extended by type; variadic `float`s,
// `double`s and HFAs (in FPRs and in their GPRs or save-area doublewords at once); and HFA
// returns of up to 8 members in `f1..f8`, aggregates of at most 16 bytes in `r3`/`r4` and
// larger ones through `r3`.

/// What a [`PropAbi::ElfV2`] signature exercises (bits of [`PropSig::tags`]).
#[allow(dead_code)]
pub const PROP_TAGS_ELFV2: [&str; 16] = [
    "HFA of 1-4 members in FPRs",
    "HFA of 5-8 members in FPRs",
    "HFA split by f13 (the rest in GPRs or the save area)",
    "HFA after f13 is used up",
    "float and integer arguments interleaved (shadowed GPRs skipped)",
    "more than 13 floating-point arguments",
    "integer argument in the save area (past r10)",
    "near-HFA argument (mixed kinds, 9+ members, padding, integer member)",
    "aggregate split between r10 and the save area",
    "16-byte-aligned aggregate argument",
    "narrow integer or bool argument",
    "variadic",
    "variadic float, double or HFA (FPR and GPR at once)",
    "HFA return (f1..f8)",
    "other aggregate return of at most 16 bytes (r3/r4)",
    "aggregate return over 16 bytes (through r3)",
];

/// The ELFv2 homogeneous-aggregate shape of `t`: `Some((kind id, members))` for a struct whose
/// leaves are 1 to 8 of one floating-point kind with no padding anywhere (ELFv2 "Parameter
/// Passing in Registers"). Generated types hold no unions and no zero-length arrays, so the
/// leaves decide, except for padding: a struct is padded when its size is not its leaves'.
#[allow(dead_code)]
pub fn prop_elfv2_hfa(t: &PropTy) -> Option<(usize, usize)> {
    if !matches!(t, PropTy::Struct(..)) {
        return None;
    }
    let mut l = Vec::new();
    prop_leaves(t, &mut l);
    let k = *l.first()?;
    let n = l.len();
    let es = if k == PROP_F32 { 4 } else { 8 };
    let unpadded = |t: &PropTy| prop_size_align(t).0 == prop_elfv2_leaf_bytes(t);
    ((k == PROP_F32 || k == PROP_F64)
        && l.iter().all(|&x| x == k)
        && n <= 8
        && prop_size_align(t).0 == n * es
        && prop_elfv2_all_groups(t, &unpadded))
    .then_some((k, n))
}

/// Bytes of scalar leaves in `t`.
#[allow(dead_code)]
fn prop_elfv2_leaf_bytes(t: &PropTy) -> usize {
    let mut l = Vec::new();
    prop_leaves(t, &mut l);
    l.iter().map(|&k| prop_size_align(&PropTy::Scalar(k)).0).sum()
}

/// Whether `f` holds for every struct inside `t` (itself included).
#[allow(dead_code)]
fn prop_elfv2_all_groups(t: &PropTy, f: &dyn Fn(&PropTy) -> bool) -> bool {
    match t {
        PropTy::Scalar(_) => true,
        PropTy::Struct(m, _) => f(t) && m.iter().all(|x| prop_elfv2_all_groups(x, f)),
        PropTy::Array(e, _) => prop_elfv2_all_groups(e, f),
    }
}

/// Where the ELFv2 rules put a signature's arguments, as far as the tags need it: per argument
/// the FPRs it takes, whether the part of its image passed in GPRs or memory is split between
/// `r10` and the save area, and its first parameter-save-area doubleword.
#[allow(dead_code)]
pub struct PropElfV2Layout {
    /// Per argument: (FPRs taken, members or values that got none, first doubleword, split at
    /// r10).
    pub args: Vec<(usize, usize, usize, bool)>,
}

/// Lays out `sig` as ELFv2 does (floating-point scalars and HFAs take FPRs while `f13` lasts,
/// variadic ones too; every argument takes its doublewords; aggregates aligned to 16 that are
/// not HFAs start at an even doubleword).
#[allow(dead_code)]
pub fn prop_elfv2_layout(sig: &PropSig) -> PropElfV2Layout {
    let ret_in_memory = sig.ret.as_ref().is_some_and(|r| {
        matches!(r, PropTy::Struct(..)) && prop_elfv2_hfa(r).is_none() && prop_size_align(r).0 > 16
    });
    let mut dw = usize::from(ret_in_memory);
    let mut fprs = 0usize;
    let mut out = Vec::new();
    for a in &sig.args {
        let (size, align) = prop_size_align(a);
        let hfa = prop_elfv2_hfa(a);
        let wanted = match (a, hfa) {
            (PropTy::Scalar(PROP_F32 | PROP_F64), _) => 1,
            (_, Some((_, n))) => n,
            _ => 0,
        };
        let got = wanted.min(13 - fprs);
        fprs += got;
        if hfa.is_none() && align >= 16 && dw % 2 == 1 {
            dw += 1;
        }
        let dws = size.div_ceil(8);
        // The first doubleword of the image passed in GPRs or memory (`dws`: none): all of it
        // for a variadic argument, from the member after the last FPR for a named HFA.
        let variadic = sig.first_variadic.is_some_and(|f| out.len() >= f);
        let es = if hfa.is_some_and(|h| h.0 == PROP_F32) { 4 } else { 8 };
        let from = match (variadic, wanted, got) {
            (false, w, g) if w > 0 && g == w => dws,
            (false, w, g) if w > 0 => g * es / 8,
            _ => 0,
        };
        out.push((got, wanted - got, dw, from < dws && dw + from < 8 && dw + dws > 8));
        dw += dws;
    }
    PropElfV2Layout { args: out }
}

#[allow(dead_code)]
impl PropRng {
    /// A narrow integer or bool most of the time, any integer class otherwise.
    fn elfv2_int(&mut self) -> PropTy {
        PropTy::Scalar(match self.below(10) {
            0 => 0,
            1 => 1,
            2 => 2,
            3 => 4,
            4 => 5,
            5 => 6,
            6 => PROP_BOOL,
            7 => PROP_PTR,
            _ => [3, 7][self.below(2) as usize],
        })
    }
    /// An HFA of `count` members of kind `k` (16-byte aligned sometimes, when that adds no
    /// padding).
    fn elfv2_hfa_of(&mut self, k: usize, count: usize) -> PropTy {
        let bytes = count * if k == PROP_F32 { 4 } else { 8 };
        let a16 = bytes % 16 == 0 && self.chance(15);
        PropTy::Struct(self.hfa_members(k, count, 1), a16)
    }
    /// An HFA of 1 to 8 members, the larger counts weighted.
    fn elfv2_hfa(&mut self) -> PropTy {
        let k = self.float_kind();
        let count = if self.chance(50) {
            5 + self.below(4) as usize
        } else {
            1 + self.below(8) as usize
        };
        self.elfv2_hfa_of(k, count)
    }
    /// Almost an HFA: mixed kinds, 9 to 16 `float`s, a padding hole, or an integer member.
    fn elfv2_near_hfa(&mut self) -> PropTy {
        let k = self.float_kind();
        match self.below(4) {
            0 => self.near_hfa(),
            1 => {
                let n = 9 + self.below(8) as usize;
                PropTy::Struct(self.hfa_members(PROP_F32, n, 1), false)
            }
            2 => {
                // 1-3 floats or 1 double in a 16-byte-aligned struct: a padding hole
                let count = if k == PROP_F32 { 1 + self.below(3) as usize } else { 1 };
                PropTy::Struct(self.hfa_members(k, count, 1), true)
            }
            _ => {
                let count = 1 + self.below(6) as usize;
                let mut f = self.hfa_members(k, count, 1);
                let at = self.below(f.len() as u64 + 1) as usize;
                let int = self.elfv2_int();
                f.insert(at, int);
                PropTy::Struct(f, false)
            }
        }
    }
    /// A named argument of the general mixture.
    fn elfv2_arg(&mut self) -> PropTy {
        match self.below(100) {
            0..=17 => self.elfv2_int(),
            18..=31 => PropTy::Scalar(self.float_kind()),
            32..=56 => self.elfv2_hfa(),
            57..=66 => self.elfv2_near_hfa(),
            67..=84 => self.sized(1, 64),
            85..=91 => self.aligned16(),
            _ => self.sized(17, 72),
        }
    }
    /// A variadic argument.
    fn elfv2_variadic(&mut self) -> PropTy {
        match self.below(10) {
            0..=3 => PropTy::Scalar(self.float_kind()),
            4 | 5 => self.elfv2_int(),
            6 | 7 => self.elfv2_hfa(),
            8 => self.aligned16(),
            _ => self.sized(1, 40),
        }
    }
}

/// The [`PropAbi::ElfV2`] mixture; tags from what each signature holds.
#[allow(dead_code)]
fn prop_signatures_ppc64le() -> Vec<PropSig> {
    let mut r = PropRng(0xbb67_ae85_84ca_a73b);
    (0..PROP_SIGNATURES)
        .map(|_| {
            let mut tags = 0u32;
            // 0-1: floats then HFAs (f13 runs out mid-aggregate), 2: large HFAs first,
            // 3: floats and integers interleaved, 4: more than 8 integers, 5-6: variadic,
            // else the general mixture
            let mode = r.below(10);
            let mut args: Vec<PropTy> = Vec::new();
            let mut first_variadic = None;
            match mode {
                0 | 1 => {
                    let floats = 6 + r.below(9) as usize;
                    args.extend((0..floats).map(|_| PropTy::Scalar(r.float_kind())));
                    let n = 1 + r.below(4) as usize;
                    for _ in 0..n {
                        let t = if r.chance(70) { r.elfv2_hfa() } else { r.elfv2_arg() };
                        args.push(t);
                    }
                }
                2 => {
                    for _ in 0..1 + r.below(2) {
                        let k = r.float_kind();
                        let n = 5 + r.below(4) as usize;
                        let h = r.elfv2_hfa_of(k, n);
                        args.push(h);
                    }
                    let n = 1 + r.below(5) as usize;
                    args.extend((0..n).map(|_| r.elfv2_arg()));
                }
                3 => {
                    let n = 4 + r.below(12) as usize;
                    for _ in 0..n {
                        let t = if r.chance(50) {
                            PropTy::Scalar(r.float_kind())
                        } else {
                            r.elfv2_int()
                        };
                        args.push(t);
                    }
                }
                4 => {
                    let n = 9 + r.below(8) as usize;
                    args.extend((0..n).map(|_| r.elfv2_int()));
                    let m = r.below(3) as usize;
                    args.extend((0..m).map(|_| r.elfv2_arg()));
                }
                5 | 6 => {
                    let named = 1 + r.below(6) as usize;
                    args.extend((0..named).map(|_| r.elfv2_arg()));
                    let n = 1 + r.below(6) as usize;
                    args.extend((0..n).map(|_| r.elfv2_variadic()));
                    first_variadic = Some(named);
                }
                _ => {
                    let n = 1 + r.below(12) as usize;
                    args.extend((0..n).map(|_| r.elfv2_arg()));
                }
            }
            let ret = match r.below(20) {
                0 | 1 => None,
                // every scalar kind, narrow integers and floats most
                2..=7 => Some(match r.below(4) {
                    0 => r.elfv2_int(),
                    1 => PropTy::Scalar(r.float_kind()),
                    _ => r.scalar(),
                }),
                8..=11 => Some(r.elfv2_hfa()),
                12..=15 => Some(if r.chance(50) { r.elfv2_near_hfa() } else { r.sized(1, 16) }),
                _ => Some(r.sized(17, 72)),
            };
            let mut sig = PropSig { ret, args, first_variadic, tags: 0 };
            let fixed = first_variadic.unwrap_or(sig.args.len());
            let lay = prop_elfv2_layout(&sig);
            let mut floats = 0;
            let mut prev_float = false;
            for (j, a) in sig.args.iter().enumerate() {
                let (got, left, dw, split) = lay.args[j];
                let align = prop_size_align(a).1;
                let hfa = prop_elfv2_hfa(a);
                let is_float = matches!(a, PropTy::Scalar(PROP_F32 | PROP_F64));
                let is_int = matches!(a, PropTy::Scalar(_)) && !is_float;
                floats += usize::from(is_float) + hfa.map_or(0, |h| h.1);
                if j >= fixed {
                    tags |= 1 << 11;
                    if got > 0 {
                        tags |= 1 << 12;
                    }
                } else if let Some((_, n)) = hfa {
                    tags |= match (got, left) {
                        (_, 0) if n <= 4 => 1 << 0,
                        (_, 0) => 1 << 1,
                        (0, _) => 1 << 3,
                        _ => 1 << 2,
                    };
                }
                if is_int && prev_float && dw < 8 {
                    tags |= 1 << 4;
                }
                prev_float = is_float;
                if is_int && dw >= 8 {
                    tags |= 1 << 6;
                }
                if matches!(a, PropTy::Struct(..)) {
                    let mut l = Vec::new();
                    prop_leaves(a, &mut l);
                    if hfa.is_none() && l.iter().any(|&k| k == PROP_F32 || k == PROP_F64) {
                        tags |= 1 << 7;
                    }
                    if split && hfa.is_none() {
                        tags |= 1 << 8;
                    }
                    if align >= 16 && hfa.is_none() {
                        tags |= 1 << 9;
                    }
                }
                let mut l = Vec::new();
                prop_leaves(a, &mut l);
                if l.iter().any(|&k| matches!(k, 0 | 1 | 2 | 4 | 5 | 6 | PROP_BOOL)) {
                    tags |= 1 << 10;
                }
            }
            if floats > 13 {
                tags |= 1 << 5;
            }
            tags |= match &sig.ret {
                Some(t) if prop_elfv2_hfa(t).is_some() => 1 << 13,
                Some(t @ PropTy::Struct(..)) if prop_size_align(t).0 <= 16 => 1 << 14,
                Some(PropTy::Struct(..)) => 1 << 15,
                _ => 0,
            };
            sig.tags = tags;
            sig
        })
        .collect()
}
