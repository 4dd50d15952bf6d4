// The RISC-V 64 (LP64D) mixture of the property tests, included by tests/prop/sigs.rs (and so
// shared with crates/gatun-test-natives/build.rs); the same rules as there: no dependency on
// gatun, deterministic, the ABI a parameter.
//
// Weighted toward what LP64D decides on: structs whose flattening is one or two `float`/`double`
// leaves (FPRs) or one float and one integer leaf (an FPR and a GPR), found through nested
// structs and one- or two-element arrays; the same structs after the eight FPRs are used up
// (the integer rule); structs that look eligible but are not (a pointer leaf, three leaves,
// two integers); 9-16-byte aggregates split between `a7` and the stack; aggregates over 16
// bytes (by reference, returned through `a0`); narrow unsigned integers (`uint32_t`, which RV64
// sign-extends, `uint16_t`, `uint8_t`, `bool`); variadic `double`s and `float`s (in GPRs) and
// variadic 16-byte-aligned aggregates (an even-odd register pair).

/// What a [`PropAbi::Lp64d`] signature exercises (bits of [`PropSig::tags`]).
#[allow(dead_code)]
pub const PROP_TAGS_LP64D: [&str; 16] = [
    "struct of one float or double (one FPR)",
    "struct of two floats/doubles (two FPRs)",
    "struct of a float and an integer (an FPR and a GPR)",
    "FP-eligible struct after the FPRs are used up (integer rule)",
    "ineligible struct of at most 16 bytes (pointer leaf, 3 leaves, two integers)",
    "aggregate over 16 bytes (by reference)",
    "9-16-byte aggregate split between a7 and the stack",
    "narrow unsigned integer or bool argument",
    "more than 8 floating-point arguments",
    "variadic",
    "variadic float or double",
    "variadic 16-byte-aligned aggregate",
    "FP-eligible struct return (fa0/fa1, fa0 + a0)",
    "other aggregate return of at most 16 bytes (a0/a1)",
    "aggregate return over 16 bytes (through a0)",
    "scalar or void return",
];

/// The LP64D floating-point class of `t`: 0 = none (integer rule), 1 = one float leaf, 2 = two
/// float leaves, 3 = a float and a non-pointer integer leaf. Generated types hold no unions
/// and no zero-length arrays, so a struct's class is its leaves' (psABI "Hardware
/// Floating-point Calling Convention").
#[allow(dead_code)]
pub fn prop_lp64d_fp_class(t: &PropTy) -> u8 {
    if !matches!(t, PropTy::Struct(..)) {
        return 0;
    }
    let mut l = Vec::new();
    prop_leaves(t, &mut l);
    let floats = l.iter().filter(|&&k| k == PROP_F32 || k == PROP_F64).count();
    match (l.len(), floats) {
        (1, 1) => 1,
        (2, 2) => 2,
        (2, 1) if !l.contains(&PROP_PTR) => 3,
        _ => 0,
    }
}

#[allow(dead_code)]
impl PropRng {
    /// A non-pointer integer scalar, narrow unsigned kinds often.
    fn lp64d_int(&mut self) -> PropTy {
        PropTy::Scalar(match self.below(10) {
            0..=2 => 6, // uint32_t
            3 => 5,     // uint16_t
            4 => 4,     // uint8_t
            5 => PROP_BOOL,
            k => [0, 1, 2, 3][k as usize - 6],
        })
    }
    /// `leaves` wrapped in a random nesting: plain members, a nested struct, a one- or
    /// two-element array (when the leaves are of one kind).
    fn lp64d_wrap(&mut self, leaves: Vec<PropTy>) -> PropTy {
        let same = leaves.windows(2).all(|w| w[0] == w[1]);
        let members = match self.below(4) {
            1 if same => vec![PropTy::Array(Box::new(leaves[0].clone()), leaves.len())],
            2 => vec![PropTy::Struct(leaves, false)],
            3 if leaves.len() == 2 => {
                let mut it = leaves.into_iter();
                let a = it.next().unwrap();
                vec![PropTy::Struct(vec![a], false), it.next().unwrap()]
            }
            _ => leaves,
        };
        PropTy::Struct(members, false)
    }
    /// A struct eligible for the FP convention: one float, two floats, or a float and an
    /// integer (in either order).
    fn lp64d_fp_struct(&mut self) -> PropTy {
        let leaves = match self.below(3) {
            0 => vec![PropTy::Scalar(self.float_kind())],
            1 => vec![PropTy::Scalar(self.float_kind()), PropTy::Scalar(self.float_kind())],
            _ => {
                let (f, i) = (PropTy::Scalar(self.float_kind()), self.lp64d_int());
                if self.chance(50) {
                    vec![f, i]
                } else {
                    vec![i, f]
                }
            }
        };
        self.lp64d_wrap(leaves)
    }
    /// A struct of at most 16 bytes that looks eligible but is not.
    fn lp64d_ineligible(&mut self) -> PropTy {
        let f = PropTy::Scalar(self.float_kind());
        let leaves = match self.below(4) {
            0 => vec![f, PropTy::Scalar(PROP_PTR)],
            1 => vec![PropTy::Scalar(PROP_F32); 3],
            2 => vec![self.lp64d_int(), self.lp64d_int()],
            _ => vec![PropTy::Scalar(PROP_F32), self.lp64d_int(), self.lp64d_int()],
        };
        self.lp64d_wrap(leaves)
    }
    /// A named argument of the general mixture.
    fn lp64d_arg(&mut self) -> PropTy {
        match self.below(100) {
            0..=17 => self.lp64d_int(),
            18..=29 => PropTy::Scalar(self.float_kind()),
            30..=34 => PropTy::Scalar(PROP_PTR),
            35..=59 => self.lp64d_fp_struct(),
            60..=69 => self.lp64d_ineligible(),
            70..=79 => self.sized(9, 16),
            80..=89 => self.sized(17, 72),
            _ => self.aligned16(),
        }
    }
    /// A variadic argument.
    fn lp64d_variadic(&mut self) -> PropTy {
        match self.below(10) {
            0..=3 => PropTy::Scalar(self.float_kind()),
            4..=5 => self.lp64d_int(),
            6 => PropTy::Scalar(PROP_PTR),
            7 => self.lp64d_fp_struct(),
            _ => {
                // a 16-byte, 16-aligned aggregate
                let inner = if self.chance(50) { self.lp64d_fp_struct() } else { self.sized(1, 16) };
                match inner {
                    PropTy::Struct(f, _) => PropTy::Struct(f, true),
                    t => t,
                }
            }
        }
    }
}

/// The [`PropAbi::Lp64d`] mixture; tags from what each signature holds.
#[allow(dead_code)]
fn prop_signatures_lp64d() -> Vec<PropSig> {
    let mut r = PropRng(0x6a09_e667_f3bc_c909);
    (0..PROP_SIGNATURES)
        .map(|_| {
            let mut tags = 0u32;
            // 0-2: floats first (FPRs used up), 3: seven integers then a 9-16-byte aggregate
            // (the a7/stack split), 4-5: variadic, else the general mixture
            let mode = r.below(10);
            let mut args: Vec<PropTy> = Vec::new();
            let mut first_variadic = None;
            match mode {
                0..=2 => {
                    let floats = 5 + r.below(6) as usize;
                    args.extend((0..floats).map(|_| PropTy::Scalar(r.float_kind())));
                    let n = 1 + r.below(6) as usize;
                    for _ in 0..n {
                        let t = if r.chance(60) { r.lp64d_fp_struct() } else { r.lp64d_arg() };
                        args.push(t);
                    }
                }
                3 => {
                    args.extend((0..7).map(|_| r.lp64d_int()));
                    args.push(if r.chance(50) { r.sized(9, 16) } else { r.lp64d_ineligible() });
                    let n = r.below(4) as usize;
                    args.extend((0..n).map(|_| r.lp64d_arg()));
                    let size = prop_size_align(&args[7]).0;
                    if (9..=16).contains(&size) && prop_lp64d_fp_class(&args[7]) == 0 {
                        tags |= 1 << 6;
                    }
                }
                4 | 5 => {
                    let named = 1 + r.below(7) as usize;
                    args.extend((0..named).map(|_| r.lp64d_arg()));
                    let n = 1 + r.below(6) as usize;
                    args.extend((0..n).map(|_| r.lp64d_variadic()));
                    first_variadic = Some(named);
                }
                _ => {
                    let n = r.below(14) as usize;
                    args.extend((0..n).map(|_| r.lp64d_arg()));
                }
            }
            let fixed = first_variadic.unwrap_or(args.len());
            // FPRs used so far by the named arguments, as the classifier counts them.
            let mut fprs = 0u32;
            let mut float_args = 0;
            for (j, a) in args.iter().enumerate() {
                let (size, align) = prop_size_align(a);
                if j >= fixed {
                    tags |= 1 << 9;
                    if matches!(a, PropTy::Scalar(PROP_F32 | PROP_F64)) {
                        tags |= 1 << 10;
                    }
                    if matches!(a, PropTy::Struct(..)) && align == 16 && size <= 16 {
                        tags |= 1 << 11;
                    }
                }
                let mut l = Vec::new();
                prop_leaves(a, &mut l);
                if l.iter().any(|&k| matches!(k, 4 | 5 | 6 | PROP_BOOL)) {
                    tags |= 1 << 7;
                }
                if matches!(a, PropTy::Scalar(PROP_F32 | PROP_F64)) {
                    float_args += 1;
                    if j < fixed {
                        fprs += 1;
                    }
                }
                if let PropTy::Struct(..) = a {
                    let need = match prop_lp64d_fp_class(a) {
                        1 | 3 => 1,
                        2 => 2,
                        _ => 0,
                    };
                    if need > 0 && j < fixed {
                        tags |= 1 << (prop_lp64d_fp_class(a) - 1);
                        if fprs + need > 8 {
                            tags |= 1 << 3;
                        } else {
                            fprs += need;
                        }
                    } else if size <= 16 && need == 0 && l.len() >= 2 {
                        tags |= 1 << 4;
                    }
                    if size > 16 {
                        tags |= 1 << 5;
                    }
                }
            }
            if float_args > 8 {
                tags |= 1 << 8;
            }
            let ret = match r.below(20) {
                0 | 1 => None,
                // every scalar kind, narrow unsigned integers and floats most
                2..=8 => Some(match r.below(4) {
                    0 => r.lp64d_int(),
                    1 => PropTy::Scalar(r.float_kind()),
                    _ => r.scalar(),
                }),
                // the a7/stack split needs a0 free: no return through memory there
                _ if mode == 3 => Some(r.lp64d_int()),
                9..=11 => Some(r.lp64d_fp_struct()),
                12..=15 => Some(if r.chance(50) { r.lp64d_ineligible() } else { r.sized(1, 16) }),
                _ => Some(r.sized(17, 72)),
            };
            tags |= match &ret {
                None | Some(PropTy::Scalar(_)) => 1 << 15,
                Some(t) if prop_lp64d_fp_class(t) != 0 => 1 << 12,
                Some(t) if prop_size_align(t).0 <= 16 => 1 << 13,
                Some(_) => 1 << 14,
            };
            PropSig { ret, args, first_variadic, tags }
        })
        .collect()
}
