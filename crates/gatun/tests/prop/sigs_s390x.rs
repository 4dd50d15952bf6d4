// The s390x mixture of the property tests, included by tests/prop/sigs.rs (and so shared with
// crates/gatun-test-natives/build.rs); the same rules as there: no dependency on gatun,
// deterministic, the ABI a parameter.
//
// Weighted toward what the s390x ELF ABI decides on: structs of exactly 1, 2, 4 or 8 bytes
// (their big-endian image in one GPR or stack slot, whatever their members) against those of 3,
// 5, 6, 7, 12, 16 and more bytes (by reference to a caller copy); one-float structs
// (`struct { float f; }`, `struct { double d; }`, through nested one-member structs: one FPR)
// and their near misses (an array of one float, two members, 16 bytes: an integer image or by
// reference); narrow signed and unsigned integers and bools (extended by type to 64 bits,
// right-justified in a stack slot); more than five integer-class arguments (`r2..r6`, then the
// stack) and more than four floating-point ones (`f0, f2, f4, f6`, then the stack); variadic
// calls (the same rules, a `float` promoted); and struct returns, every one through a hidden
// pointer in `r2`.

/// What a [`PropAbi::S390x`] signature exercises (bits of [`PropSig::tags`]).
#[allow(dead_code)]
pub const PROP_TAGS_S390X: [&str; 16] = [
    "1/2/4/8-byte struct argument (its image in a GPR or slot)",
    "3/5/6/7-byte struct argument (by reference)",
    "struct argument of 9 or more bytes (by reference)",
    "one-float struct argument (an FPR or slot)",
    "nested one-float struct argument",
    "near miss of a one-float struct (array of one, two members, 16 bytes)",
    "narrow integer or bool argument",
    "more than 5 integer-class arguments (stack slots)",
    "more than 4 floating-point arguments (stack slots)",
    "variadic",
    "variadic float or double",
    "variadic struct",
    "value narrower than 8 bytes in a stack slot (right-justified)",
    "other struct return (through r2)",
    "one-float or 1/2/4/8-byte struct return (through r2 all the same)",
    "scalar or void return",
];

/// Whether `t` is a one-float struct chain: a struct of exactly one member which is a `float`,
/// a `double` or again such a struct (s390x ELF ABI: a struct with one member is passed as
/// that member; arrays end the chain).
#[allow(dead_code)]
fn prop_s390x_one_float(t: &PropTy) -> bool {
    match t {
        PropTy::Struct(f, _) if f.len() == 1 => match &f[0] {
            PropTy::Scalar(k) => *k == PROP_F32 || *k == PROP_F64,
            inner => prop_s390x_one_float(inner),
        },
        _ => false,
    }
}

/// How s390x passes `t`: 0 = an integer-class scalar (a GPR), 1 = a `float`/`double` (an FPR),
/// 2 = a struct of 1, 2, 4 or 8 bytes as its image (a GPR), 3 = a one-float struct of at most 8
/// bytes (an FPR), 4 = any other struct (a pointer to a copy, in a GPR).
#[allow(dead_code)]
pub fn prop_s390x_class(t: &PropTy) -> u8 {
    match t {
        PropTy::Scalar(k) if *k == PROP_F32 || *k == PROP_F64 => 1,
        PropTy::Scalar(_) => 0,
        _ => match prop_size_align(t).0 {
            1 | 2 | 4 | 8 if prop_s390x_one_float(t) => 3,
            1 | 2 | 4 | 8 => 2,
            _ => 4,
        },
    }
}

#[allow(dead_code)]
impl PropRng {
    /// An integer scalar, the narrow kinds often (signed, unsigned, bool).
    fn s390x_int(&mut self) -> PropTy {
        PropTy::Scalar(match self.below(12) {
            0 | 1 => 6, // uint32_t
            2 => 5,     // uint16_t
            3 => 4,     // uint8_t
            4 => PROP_BOOL,
            5 => 0, // int8_t
            6 => 1, // int16_t
            7 | 8 => 2,
            9 => 3,
            10 => 7,
            _ => PROP_PTR,
        })
    }
    /// A one-float struct: a `float` or `double` in 1 to 3 nested one-member structs.
    fn s390x_one_float(&mut self) -> PropTy {
        let mut t = PropTy::Scalar(self.float_kind());
        for _ in 0..1 + self.below(3) {
            t = PropTy::Struct(vec![t], false);
        }
        t
    }
    /// A struct that looks like a one-float struct but is not one.
    fn s390x_near_miss(&mut self) -> PropTy {
        match self.below(4) {
            0 => {
                let k = self.float_kind();
                PropTy::Struct(vec![PropTy::Array(Box::new(PropTy::Scalar(k)), 1)], false)
            }
            1 => {
                let other = if self.chance(50) { PROP_F32 } else { 2 };
                let mut f = vec![PropTy::Scalar(PROP_F32), PropTy::Scalar(other)];
                if self.chance(50) {
                    f.reverse();
                }
                PropTy::Struct(f, false)
            }
            // 16 bytes: by reference.
            2 => {
                let inner = self.s390x_one_float();
                PropTy::Struct(vec![inner], true)
            }
            _ => {
                let inner = self.s390x_one_float();
                PropTy::Struct(vec![PropTy::Array(Box::new(inner), 1)], false)
            }
        }
    }
    /// A named argument of the general mixture.
    fn s390x_arg(&mut self) -> PropTy {
        match self.below(100) {
            0..=17 => self.s390x_int(),
            18..=29 => PropTy::Scalar(self.float_kind()),
            30..=49 => self.sized_exact(&[1, 2, 4, 8]),
            50..=61 => self.sized_exact(&[3, 5, 6, 7]),
            62..=69 => self.sized_exact(&[12, 16, 9, 24]),
            70..=84 => self.s390x_one_float(),
            85..=93 => self.s390x_near_miss(),
            _ => self.float_struct(),
        }
    }
    /// A variadic argument.
    fn s390x_variadic(&mut self) -> PropTy {
        match self.below(10) {
            0..=3 => PropTy::Scalar(self.float_kind()),
            4 | 5 => self.s390x_int(),
            6 => self.s390x_one_float(),
            7 | 8 => self.sized_exact(&[1, 2, 4, 8]),
            _ => self.sized_exact(&[3, 6, 12]),
        }
    }
    /// A struct result (every one returned through `r2`).
    fn s390x_struct_ret(&mut self) -> PropTy {
        match self.below(4) {
            0 => self.s390x_one_float(),
            1 => self.sized_exact(&[1, 2, 4, 8]),
            2 => self.sized_exact(&[3, 5, 6, 7, 12, 16]),
            _ => self.sized(17, 72),
        }
    }
}

/// The [`PropAbi::S390x`] mixture; tags from what each signature holds.
#[allow(dead_code)]
fn prop_signatures_s390x() -> Vec<PropSig> {
    let mut r = PropRng(0x3c6e_f372_fe94_f82b);
    (0..PROP_SIGNATURES)
        .map(|_| {
            // 0-1: floating-point arguments first (FPRs used up), 2-3: integers first (GPRs
            // used up), 4-5: variadic, else the general mixture
            let mode = r.below(10);
            let mut args: Vec<PropTy> = Vec::new();
            let mut first_variadic = None;
            match mode {
                0 | 1 => {
                    let floats = 3 + r.below(4) as usize;
                    args.extend((0..floats).map(|_| PropTy::Scalar(r.float_kind())));
                    let n = 1 + r.below(6) as usize;
                    for _ in 0..n {
                        let t = if r.chance(50) { r.s390x_one_float() } else { r.s390x_arg() };
                        args.push(t);
                    }
                }
                2 | 3 => {
                    let ints = 4 + r.below(3) as usize;
                    args.extend((0..ints).map(|_| r.s390x_int()));
                    let n = 1 + r.below(6) as usize;
                    for _ in 0..n {
                        let t = if r.chance(40) {
                            r.sized_exact(&[1, 2, 4, 8, 3, 6])
                        } else {
                            r.s390x_arg()
                        };
                        args.push(t);
                    }
                }
                4 | 5 => {
                    let named = 1 + r.below(6) as usize;
                    args.extend((0..named).map(|_| r.s390x_arg()));
                    let n = 1 + r.below(6) as usize;
                    args.extend((0..n).map(|_| r.s390x_variadic()));
                    first_variadic = Some(named);
                }
                _ => {
                    let n = r.below(13) as usize;
                    args.extend((0..n).map(|_| r.s390x_arg()));
                }
            }
            let ret = match r.below(20) {
                0 | 1 => None,
                2..=10 => Some(match r.below(3) {
                    0 => r.s390x_int(),
                    _ => r.scalar(),
                }),
                _ => Some(r.s390x_struct_ret()),
            };
            let mut tags = 0u32;
            let fixed = first_variadic.unwrap_or(args.len());
            // Registers used so far, as the classifier counts them (the result pointer in r2).
            let mut gprs = u32::from(matches!(ret, Some(PropTy::Struct(..))));
            let mut fprs = 0u32;
            for (j, a) in args.iter().enumerate() {
                let size = prop_size_align(a).0;
                let class = prop_s390x_class(a);
                if j >= fixed {
                    tags |= 1 << 9;
                    match a {
                        PropTy::Scalar(PROP_F32 | PROP_F64) => tags |= 1 << 10,
                        PropTy::Struct(..) => tags |= 1 << 11,
                        _ => {}
                    }
                }
                if let PropTy::Struct(f, _) = a {
                    match (class, size) {
                        (2, _) => tags |= 1,
                        (4, 3 | 5 | 6 | 7) => tags |= 1 << 1,
                        (4, s) if s > 8 => tags |= 1 << 2,
                        _ => {}
                    }
                    if class == 3 {
                        tags |= 1 << 3;
                        if matches!(f[0], PropTy::Struct(..)) {
                            tags |= 1 << 4;
                        }
                    }
                    let mut l = Vec::new();
                    prop_leaves(a, &mut l);
                    let floats = l.iter().filter(|&&k| k == PROP_F32 || k == PROP_F64).count();
                    if class != 3 && floats >= 1 && l.len() <= 2 && size <= 16 {
                        tags |= 1 << 5;
                    }
                }
                if matches!(a, PropTy::Scalar(0 | 1 | 2 | 4 | 5 | 6 | PROP_BOOL)) {
                    tags |= 1 << 6;
                }
                let in_fpr = matches!(class, 1 | 3);
                let on_stack = if in_fpr {
                    fprs += 1;
                    fprs > 4
                } else {
                    gprs += 1;
                    gprs > 5
                };
                // Narrower than the slot: an integer scalar, a named float, a struct image of
                // fewer than 8 bytes (not a pointer to a copy; a variadic float is a double).
                let narrow = match class {
                    0 | 2 | 3 => size < 8,
                    1 => size < 8 && j < fixed,
                    _ => false,
                };
                if on_stack && narrow {
                    tags |= 1 << 12;
                }
            }
            if gprs > 5 {
                tags |= 1 << 7;
            }
            if fprs > 4 {
                tags |= 1 << 8;
            }
            tags |= match &ret {
                None | Some(PropTy::Scalar(_)) => 1 << 15,
                Some(t) if matches!(prop_s390x_class(t), 2 | 3) => 1 << 14,
                Some(_) => 1 << 13,
            };
            PropSig { ret, args, first_variadic, tags }
        })
        .collect()
}
