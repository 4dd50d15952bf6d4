//! The values of constant expressions and C's arithmetic on them (C17 §6.3, §6.5, §6.6):
//! typed integers ([`CVal`]), `float` and `double` values, address constants, string literals,
//! and lvalues known only by type and address (what `*p`, `p->m`, `a[i]` and a declared
//! variable designate: `sizeof` and `&` take them, reading them is not a constant).
//!
//! The operations here are pure: they return a message, and the grammar
//! (`constant.rs`) gives it the position of the operator or operand.

use std::sync::Arc;

use super::complete;
use crate::cdecl::literals::FloatType;
use crate::cdecl::{Constant, State, Ty};
use crate::layout::{DataModel, MemoryLayout, ScalarKind};

/// The type of an integer value: its width in bits (1 for `_Bool`) and signedness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::cdecl) struct IntTy {
    pub(super) bits: u32,
    pub(super) unsigned: bool,
}

impl IntTy {
    /// `int`.
    pub(super) const INT: IntTy = IntTy {
        bits: 32,
        unsigned: false,
    };
    /// `_Bool` (values 0 and 1).
    pub(super) const BOOL: IntTy = IntTy {
        bits: 1,
        unsigned: true,
    };
    /// `size_t` (the type of `sizeof`, `_Alignof` and `offsetof`).
    pub(super) const SIZE_T: IntTy = IntTy {
        bits: usize::BITS,
        unsigned: true,
    };
    /// `ptrdiff_t` (the difference of two pointers).
    const PTRDIFF_T: IntTy = IntTy {
        bits: usize::BITS,
        unsigned: false,
    };
    /// An address, as an integer.
    const ADDRESS: IntTy = IntTy {
        bits: usize::BITS,
        unsigned: true,
    };

    /// The width of `long` on this build's target, in bits.
    fn long_bits() -> u32 {
        (DataModel::HOST.long_size * 8) as u32
    }

    /// The integer type of scalar kind `kind` (`None` for floating and pointer kinds).
    pub(in crate::cdecl) fn of_kind(kind: ScalarKind) -> Option<IntTy> {
        let (bits, unsigned) = match kind {
            ScalarKind::Bool => return Some(IntTy::BOOL),
            ScalarKind::I8 => (8, false),
            ScalarKind::U8 => (8, true),
            ScalarKind::I16 => (16, false),
            ScalarKind::U16 => (16, true),
            ScalarKind::I32 => (32, false),
            ScalarKind::U32 => (32, true),
            ScalarKind::I64 => (64, false),
            ScalarKind::U64 => (64, true),
            _ => return None,
        };
        Some(IntTy { bits, unsigned })
    }

    /// The scalar kind of values of this type.
    pub(in crate::cdecl) fn kind(self) -> ScalarKind {
        match (self.bits, self.unsigned) {
            (1, _) => ScalarKind::Bool,
            (8, false) => ScalarKind::I8,
            (8, true) => ScalarKind::U8,
            (16, false) => ScalarKind::I16,
            (16, true) => ScalarKind::U16,
            (32, false) => ScalarKind::I32,
            (32, true) => ScalarKind::U32,
            (_, false) => ScalarKind::I64,
            (_, true) => ScalarKind::U64,
        }
    }

    /// The size in bytes.
    fn byte_size(self) -> usize {
        (self.bits as usize).div_ceil(8)
    }

    /// The C spelling of the type (for messages).
    pub(super) fn name(self) -> &'static str {
        match (self.bits, self.unsigned) {
            (1, _) => "_Bool",
            (8, false) => "signed char",
            (8, true) => "unsigned char",
            (16, false) => "short",
            (16, true) => "unsigned short",
            (32, false) => "int",
            (32, true) => "unsigned int",
            (64, false) if IntTy::long_bits() == 64 => "long",
            (64, true) if IntTy::long_bits() == 64 => "unsigned long",
            (_, false) => "long long",
            (_, true) => "unsigned long long",
        }
    }

    /// Whether `v` is in range.
    pub(super) fn holds(self, v: i128) -> bool {
        if self.unsigned {
            v >= 0 && v < (1i128 << self.bits)
        } else {
            let half = 1i128 << (self.bits - 1);
            v >= -half && v < half
        }
    }

    /// The integer promotions (C11 §6.3.1.1 ¶2): anything narrower than `int` becomes `int`.
    fn promoted(self) -> IntTy {
        if self.bits < 32 {
            IntTy::INT
        } else {
            self
        }
    }

    /// The usual arithmetic conversions of two integer types (C11 §6.3.1.8).
    fn common(a: IntTy, b: IntTy) -> IntTy {
        let (a, b) = (a.promoted(), b.promoted());
        if a.bits != b.bits {
            // The wider type can represent every value of the narrower one.
            return if a.bits > b.bits { a } else { b };
        }
        IntTy {
            bits: a.bits,
            unsigned: a.unsigned || b.unsigned,
        }
    }

    /// The type of integer constant `text` with value `v` (C11 §6.4.4.1 ¶5): the first of
    /// the candidate types its suffix and base allow that holds it.
    pub(super) fn of_constant(text: &str, v: u64) -> IntTy {
        let lower = text.to_ascii_lowercase();
        let body = lower.trim_end_matches(['u', 'l']);
        let suffix = &lower[body.len()..];
        let unsigned_suffix = suffix.contains('u');
        let longs = suffix.matches('l').count();
        // Octal, hex and binary constants may also take unsigned types.
        let decimal = !(body.starts_with('0') && body.len() > 1);
        let long_bits = IntTy::long_bits();
        let widths: &[u32] = match longs {
            0 => &[32, 0, 64],
            1 => &[0, 64],
            _ => &[64],
        };
        for &w in widths {
            let bits = if w == 0 { long_bits } else { w };
            for unsigned in [false, true] {
                let allowed = if unsigned {
                    unsigned_suffix || !decimal
                } else {
                    !unsigned_suffix
                };
                let t = IntTy { bits, unsigned };
                if allowed && t.holds(i128::from(v)) {
                    return t;
                }
            }
        }
        // Too large for every candidate: gcc makes it `unsigned long long`.
        IntTy {
            bits: 64,
            unsigned: true,
        }
    }
}

/// A typed integer: `v` is in `ty`'s range.
#[derive(Debug, Clone, Copy)]
pub(in crate::cdecl) struct CVal {
    pub(super) v: i128,
    pub(super) ty: IntTy,
}

impl CVal {
    /// `v` converted to `ty` (C11 §6.3.1.3: modulo 2^bits; gcc does the same for signed
    /// targets).
    pub(in crate::cdecl) fn wrap(v: i128, ty: IntTy) -> CVal {
        let m = 1i128 << ty.bits;
        let mut r = v.rem_euclid(m);
        if !ty.unsigned && r >= m / 2 {
            r -= m;
        }
        CVal { v: r, ty }
    }

    /// A truth value: `int` 1 or 0.
    pub(super) fn truth(b: bool) -> CVal {
        CVal {
            v: i128::from(b),
            ty: IntTy::INT,
        }
    }
}

/// A `float` or `double` value (a `float` is held exactly in the `f64`).
#[derive(Debug, Clone, Copy)]
pub(in crate::cdecl) struct FVal {
    pub(super) v: f64,
    pub(super) ty: FloatType,
}

/// An address constant: its value and, when known, the type it points to (`None` for a
/// pointer typedef whose layout does not say).
#[derive(Debug, Clone)]
pub(in crate::cdecl) struct PVal {
    pub(super) addr: u64,
    pub(super) target: Option<Ty>,
}

/// The value of a (sub)expression.
#[derive(Debug, Clone)]
pub(in crate::cdecl) enum Val {
    /// An integer of a C integer type.
    Int(CVal),
    /// A floating value.
    Float(FVal),
    /// An address constant.
    Ptr(PVal),
    /// A string literal (adjacent ones concatenated): its bytes, without the NUL.
    Str(Arc<[u8]>),
    /// An lvalue: an object of type `ty` at `addr` (when known), whose contents are unknown.
    Obj { ty: Ty, addr: Option<u64> },
}

impl Val {
    /// What the value is, for messages: "a `double` value", "a string literal".
    pub(super) fn describe(&self) -> String {
        match self {
            Val::Int(c) => format!("an `{}` value", c.ty.name()),
            Val::Float(f) => format!("a floating value of type `{}`", float_name(f.ty)),
            Val::Ptr(_) => "an address".into(),
            Val::Str(_) => "a string literal".into(),
            Val::Obj { .. } => "an object in memory".into(),
        }
    }

    /// The value as a [`Constant`] (an lvalue is not one).
    pub(in crate::cdecl) fn to_constant(&self) -> Result<Constant, String> {
        Ok(match self {
            Val::Int(c) => match c.ty.kind() {
                ScalarKind::Bool => Constant::Bool(c.v != 0),
                ScalarKind::I8 => Constant::I8(c.v as i8),
                ScalarKind::U8 => Constant::U8(c.v as u8),
                ScalarKind::I16 => Constant::I16(c.v as i16),
                ScalarKind::U16 => Constant::U16(c.v as u16),
                ScalarKind::I32 => Constant::I32(c.v as i32),
                ScalarKind::U32 => Constant::U32(c.v as u32),
                ScalarKind::I64 => Constant::I64(c.v as i64),
                _ => Constant::U64(c.v as u64),
            },
            Val::Float(FVal {
                v,
                ty: FloatType::Float,
            }) => Constant::F32(*v as f32),
            Val::Float(f) => Constant::F64(f.v),
            Val::Ptr(p) => Constant::Address(p.addr),
            Val::Str(s) => Constant::String(s.clone()),
            Val::Obj { .. } => return Err(READS_MEMORY.into()),
        })
    }

    /// The value an operand has (C11 §6.3.2.1): an array object with a known address becomes a
    /// pointer to its first element, a function one a pointer to it; reading any other object
    /// is not a constant.
    pub(super) fn rvalue(self, st: &State) -> Result<Val, String> {
        let Val::Obj { ty, addr } = self else {
            return Ok(self);
        };
        match (complete(st, ty), addr) {
            (Ty::Object(MemoryLayout::Sequence(s)), Some(addr)) => Ok(Val::Ptr(PVal {
                addr,
                target: Some(Ty::Object(s.element().clone())),
            })),
            (f @ Ty::Func(_), Some(addr)) => Ok(Val::Ptr(PVal {
                addr,
                target: Some(f),
            })),
            (Ty::Func(_), None) => Err("the address of a function is not a constant".into()),
            _ => Err(READS_MEMORY.into()),
        }
    }

    /// Whether the value is nonzero (a condition; an operand of `!`, `&&`, `||`).
    pub(super) fn truth(&self) -> Result<bool, String> {
        match self {
            Val::Int(c) => Ok(c.v != 0),
            Val::Float(f) => Ok(f.v != 0.0),
            Val::Ptr(p) => Ok(p.addr != 0),
            // A string literal's address is never null.
            Val::Str(_) => Ok(true),
            Val::Obj { .. } => Err(READS_MEMORY.into()),
        }
    }

    /// `sizeof` and `_Alignof` of the value's type, in bytes.
    pub(super) fn size_align(&self, st: &State) -> Result<(usize, usize), String> {
        Ok(match self {
            Val::Int(c) => (c.ty.byte_size(), c.ty.byte_size()),
            Val::Float(f) => match f.ty {
                FloatType::Float => (4, 4),
                FloatType::Double => (8, 8),
            },
            Val::Ptr(_) => (IntTy::ADDRESS.byte_size(), IntTy::ADDRESS.byte_size()),
            Val::Str(s) => (s.len() + 1, 1),
            Val::Obj { ty, .. } => return type_size_align(st, ty.clone()),
        })
    }

    /// `-x`, `+x`, `~x`, `!x` on an operand already converted with [`Val::rvalue`].
    pub(super) fn unary(self, op: &str) -> Result<Val, String> {
        match (op, self) {
            ("!", x) => Ok(Val::Int(CVal::truth(!x.truth()?))),
            ("-", Val::Int(x)) => {
                let ty = x.ty.promoted();
                if !ty.unsigned && !ty.holds(-x.v) {
                    return Err("overflow in constant expression at `-`".into());
                }
                Ok(Val::Int(CVal::wrap(-x.v, ty)))
            }
            ("+", Val::Int(x)) => Ok(Val::Int(CVal::wrap(x.v, x.ty.promoted()))),
            ("~", Val::Int(x)) => Ok(Val::Int(CVal::wrap(!x.v, x.ty.promoted()))),
            ("-", Val::Float(f)) => Ok(Val::Float(FVal { v: -f.v, ty: f.ty })),
            ("+", Val::Float(f)) => Ok(Val::Float(f)),
            (op, x) => Err(format!("`{op}` cannot apply to {}", x.describe())),
        }
    }

    /// The value converted to floating type `ty`, if it is arithmetic.
    fn as_float(&self, ty: FloatType) -> Option<f64> {
        let v = match self {
            Val::Int(c) => match ty {
                FloatType::Double => c.v as f64,
                FloatType::Float => return Some(f64::from(c.v as f32)),
            },
            Val::Float(f) => f.v,
            _ => return None,
        };
        Some(match ty {
            FloatType::Double => v,
            FloatType::Float => f64::from(v as f32),
        })
    }
}

/// What reading an lvalue gives.
const READS_MEMORY: &str = "reading an object in memory is not a constant expression";

/// The C spelling of a floating type.
fn float_name(ty: FloatType) -> &'static str {
    match ty {
        FloatType::Float => "float",
        FloatType::Double => "double",
    }
}

/// `sizeof` and `_Alignof` of type `ty`, in bytes.
pub(super) fn type_size_align(st: &State, ty: Ty) -> Result<(usize, usize), String> {
    match complete(st, ty) {
        Ty::Object(l) => Ok((l.byte_size(), l.byte_alignment())),
        Ty::NoLayout(n) => n.size_align.ok_or_else(|| n.error().to_string()),
        Ty::Void => Err("`void` has no size".into()),
        Ty::Func(_) => Err("a function type has no size".into()),
        Ty::Incomplete(n) => Err(format!("`{n}` is incomplete, so it has no size")),
    }
}

/// The size of what pointer `p` points to, for pointer arithmetic (GNU C: 1 for `void` and
/// function types).
fn target_size(st: &State, p: &PVal) -> Result<usize, String> {
    match &p.target {
        None => Err("arithmetic on a pointer whose target type is unknown".into()),
        Some(Ty::Void | Ty::Func(_)) => Ok(1),
        Some(ty) => type_size_align(st, ty.clone()).map(|(s, _)| s),
    }
}

/// `lhs p rhs` for a binary operator other than `&&` and `||`, operands already converted with
/// [`Val::rvalue`].
pub(super) fn binary(st: &State, p: &str, lhs: Val, rhs: Val) -> Result<Val, String> {
    match (lhs, rhs) {
        (Val::Int(a), Val::Int(b)) => int_binary(p, a, b).map(Val::Int),
        (a @ (Val::Int(_) | Val::Float(_)), b @ (Val::Int(_) | Val::Float(_))) => {
            float_binary(p, &a, &b)
        }
        (Val::Ptr(a), Val::Int(b)) if matches!(p, "+" | "-") => {
            let size = target_size(st, &a)?;
            offset_pointer(a, if p == "-" { -b.v } else { b.v }, size)
        }
        (Val::Int(a), Val::Ptr(b)) if p == "+" => {
            let size = target_size(st, &b)?;
            offset_pointer(b, a.v, size)
        }
        (Val::Ptr(a), Val::Ptr(b)) if p == "-" => {
            let size = target_size(st, &a)?.max(1);
            let diff = i128::from(a.addr) - i128::from(b.addr);
            Ok(Val::Int(CVal::wrap(diff / size as i128, IntTy::PTRDIFF_T)))
        }
        (Val::Ptr(a), Val::Ptr(b)) => compare(p, i128::from(a.addr), i128::from(b.addr)),
        // A pointer against a null pointer constant.
        (Val::Ptr(a), Val::Int(b)) | (Val::Int(b), Val::Ptr(a))
            if b.v == 0 && matches!(p, "==" | "!=") =>
        {
            compare(p, i128::from(a.addr), 0)
        }
        (Val::Str(_), _) | (_, Val::Str(_)) => {
            Err("a string literal's address is not a constant".into())
        }
        (a, b) => Err(format!(
            "`{p}` cannot apply to {} and {}",
            a.describe(),
            b.describe()
        )),
    }
}

/// `p` moved by `n` elements of `size` bytes, modulo the address width.
fn offset_pointer(p: PVal, n: i128, size: usize) -> Result<Val, String> {
    let delta = n
        .checked_mul(size as i128)
        .ok_or("overflow in pointer arithmetic")?;
    let addr = CVal::wrap(i128::from(p.addr) + delta, IntTy::ADDRESS).v as u64;
    Ok(Val::Ptr(PVal {
        addr,
        target: p.target,
    }))
}

/// A comparison `a p b` of two values in a common type, as `int` 1 or 0; an error for an
/// operator that is not a comparison.
fn compare<T: PartialOrd>(p: &str, a: T, b: T) -> Result<Val, String> {
    let r = match p {
        "==" => a == b,
        "!=" => a != b,
        "<" => a < b,
        ">" => a > b,
        "<=" => a <= b,
        ">=" => a >= b,
        _ => return Err(format!("`{p}` cannot apply to addresses")),
    };
    Ok(Val::Int(CVal::truth(r)))
}

/// `a p b` on floating values (one may be an integer), in their common type (C11 §6.3.1.8:
/// `double` if either is `double`, else `float`).
fn float_binary(p: &str, a: &Val, b: &Val) -> Result<Val, String> {
    let ty = match (a, b) {
        (Val::Float(x), _) if x.ty == FloatType::Double => FloatType::Double,
        (_, Val::Float(y)) if y.ty == FloatType::Double => FloatType::Double,
        _ => FloatType::Float,
    };
    let (Some(x), Some(y)) = (a.as_float(ty), b.as_float(ty)) else {
        return Err(format!("`{p}` cannot apply to these operands"));
    };
    let v = match ty {
        FloatType::Double => match p {
            "+" => x + y,
            "-" => x - y,
            "*" => x * y,
            "/" => x / y,
            _ => return compare(p, x, y).map_err(|_| float_operator(p)),
        },
        FloatType::Float => {
            let (x, y) = (x as f32, y as f32);
            f64::from(match p {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "/" => x / y,
                _ => return compare(p, x, y).map_err(|_| float_operator(p)),
            })
        }
    };
    Ok(Val::Float(FVal { v, ty }))
}

/// The error for an integer-only operator applied to a floating value.
fn float_operator(p: &str) -> String {
    format!("`{p}` needs integer operands, found a floating value")
}

/// `lhs p rhs` on integers with C's conversions: shifts take the promoted left operand's
/// type; other arithmetic, bitwise and comparison operators convert both operands to their
/// common type (C11 §6.3.1.8); comparisons give `int`. Unsigned arithmetic wraps; signed
/// overflow is an error.
pub(super) fn int_binary(p: &str, lhs: CVal, rhs: CVal) -> Result<CVal, String> {
    let overflow = || format!("overflow in constant expression at `{p}`");
    if matches!(p, "<<" | ">>") {
        let ty = lhs.ty.promoted();
        let sh = u32::try_from(rhs.v)
            .ok()
            .filter(|&s| s < ty.bits)
            .ok_or_else(|| format!("shift count {} out of range 0..{}", rhs.v, ty.bits))?;
        let v = if p == "<<" {
            if !ty.unsigned && lhs.v < 0 {
                return Err("left shift of a negative value".into());
            }
            // Shifting into (not past) the sign bit gives the wrapped value, as gcc does.
            let r = lhs.v.checked_mul(1i128 << sh).ok_or_else(overflow)?;
            if !ty.unsigned && r >> (ty.bits - 1) > 1 {
                return Err(overflow());
            }
            r
        } else {
            lhs.v >> sh
        };
        return Ok(CVal::wrap(v, ty));
    }
    let ty = IntTy::common(lhs.ty, rhs.ty);
    let (a, b) = (CVal::wrap(lhs.v, ty).v, CVal::wrap(rhs.v, ty).v);
    let v = match p {
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "+" => a.checked_add(b).ok_or_else(overflow)?,
        "-" => a.checked_sub(b).ok_or_else(overflow)?,
        "*" => a.checked_mul(b).ok_or_else(overflow)?,
        "/" | "%" => {
            if b == 0 {
                return Err("division by zero in constant expression".into());
            }
            if p == "/" {
                a.checked_div(b).ok_or_else(overflow)?
            } else {
                a.checked_rem(b).ok_or_else(overflow)?
            }
        }
        _ => {
            return match compare(p, a, b)? {
                Val::Int(c) => Ok(c),
                _ => Err(overflow()),
            }
        }
    };
    if !ty.unsigned && !ty.holds(v) {
        return Err(overflow());
    }
    Ok(CVal::wrap(v, ty))
}

/// The type of `a ? b : c`'s result and the chosen operand converted to it (C11 §6.5.15):
/// arithmetic operands take their common type, pointers and null pointer constants give a
/// pointer, two string literals give the chosen one.
pub(super) fn conditional(cond: bool, a: Val, b: Val) -> Result<Val, String> {
    let pick = |x: Val, y: Val| if cond { x } else { y };
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => {
            let ty = IntTy::common(x.ty, y.ty);
            let v = pick(Val::Int(x), Val::Int(y));
            match v {
                Val::Int(c) => Ok(Val::Int(CVal::wrap(c.v, ty))),
                other => Ok(other),
            }
        }
        (x @ (Val::Int(_) | Val::Float(_)), y @ (Val::Int(_) | Val::Float(_))) => {
            let ty = match (&x, &y) {
                (Val::Float(f), _) | (_, Val::Float(f)) if f.ty == FloatType::Double => {
                    FloatType::Double
                }
                _ => FloatType::Float,
            };
            let chosen = pick(x, y);
            let v = chosen
                .as_float(ty)
                .ok_or("the branches of `?:` are not arithmetic")?;
            Ok(Val::Float(FVal { v, ty }))
        }
        (Val::Ptr(x), Val::Ptr(y)) => Ok(pick(Val::Ptr(x), Val::Ptr(y))),
        // A pointer and a null pointer constant.
        (Val::Ptr(x), Val::Int(n)) if n.v == 0 => {
            let null = null_like(&x);
            Ok(pick(Val::Ptr(x), null))
        }
        (Val::Int(n), Val::Ptr(y)) if n.v == 0 => {
            let null = null_like(&y);
            Ok(pick(null, Val::Ptr(y)))
        }
        (Val::Str(x), Val::Str(y)) => Ok(pick(Val::Str(x), Val::Str(y))),
        (x, y) => Err(format!(
            "the branches of `?:` have incompatible types ({} and {})",
            x.describe(),
            y.describe()
        )),
    }
}

/// A null pointer of `p`'s type.
fn null_like(p: &PVal) -> Val {
    Val::Ptr(PVal {
        addr: 0,
        target: p.target.clone(),
    })
}

/// The C type a cast converts to, reduced to what constant expressions distinguish.
pub(super) enum CastTo {
    /// An integer type (`_Bool` included).
    Int(IntTy),
    /// A floating type.
    Float(FloatType),
    /// A pointer type, with its target when known.
    Ptr(Option<Ty>),
}

/// `(to) x`, `x` already converted with [`Val::rvalue`] (C11 §6.3.1.2-§6.3.1.5, §6.3.2.3).
pub(super) fn cast(x: Val, to: CastTo) -> Result<Val, String> {
    match (to, x) {
        (CastTo::Int(ty), x) if ty == IntTy::BOOL => Ok(Val::Int(CVal {
            v: i128::from(x.truth()?),
            ty,
        })),
        (CastTo::Int(ty), Val::Int(c)) => Ok(Val::Int(CVal::wrap(c.v, ty))),
        (CastTo::Int(ty), Val::Ptr(p)) => Ok(Val::Int(CVal::wrap(i128::from(p.addr), ty))),
        (CastTo::Int(ty), Val::Float(f)) => {
            let t = f.v.trunc();
            // 2^127: beyond every integer type (and where `as i128` would saturate).
            if !t.is_finite() || t.abs() >= 1.7e38 || !ty.holds(t as i128) {
                return Err(format!(
                    "the floating value {} is out of range for `{}`",
                    f.v,
                    ty.name()
                ));
            }
            Ok(Val::Int(CVal { v: t as i128, ty }))
        }
        (CastTo::Float(ty), x @ (Val::Int(_) | Val::Float(_))) => Ok(Val::Float(FVal {
            v: x.as_float(ty).unwrap_or_default(),
            ty,
        })),
        (CastTo::Ptr(target), Val::Int(c)) => Ok(Val::Ptr(PVal {
            addr: CVal::wrap(c.v, IntTy::ADDRESS).v as u64,
            target,
        })),
        (CastTo::Ptr(target), Val::Ptr(p)) => Ok(Val::Ptr(PVal {
            addr: p.addr,
            target,
        })),
        (_, Val::Str(_)) => Err("a string literal's address is not a constant".into()),
        (_, x) => Err(format!("{} cannot be converted by this cast", x.describe())),
    }
}

/// Member `name` of an object of type `ty` at `addr` (`s.name`; `p->name` is `(*p).name`),
/// looked for in anonymous struct and union members too (C11 §6.7.2.1 ¶13).
pub(super) fn member(st: &State, ty: Ty, addr: Option<u64>, name: &str) -> Result<Val, String> {
    let layout = match complete(st, ty) {
        Ty::Object(l @ (MemoryLayout::Struct(_) | MemoryLayout::Union(_))) => l,
        Ty::Incomplete(n) => return Err(format!("`{n}` is incomplete, so it has no members")),
        _ => {
            return Err(format!(
                "member `{name}` of something that is not a struct or union"
            ))
        }
    };
    let (offset, m) = find_member(&layout, name, 0)
        .ok_or_else(|| format!("`{layout}` has no member `{name}`"))?;
    Ok(Val::Obj {
        ty: Ty::Object(m.clone()),
        addr: addr.map(|a| a.wrapping_add(offset as u64)),
    })
}

/// The offset and layout of member `name` of record `l`, searching unnamed record members
/// (at most [`MAX_NESTING`](crate::cdecl::MAX_NESTING) deep, as layouts are).
fn find_member<'l>(
    l: &'l MemoryLayout,
    name: &str,
    depth: usize,
) -> Option<(usize, &'l MemoryLayout)> {
    if depth > crate::cdecl::MAX_NESTING {
        return None;
    }
    let fields: Vec<(usize, &MemoryLayout)> = match l {
        MemoryLayout::Struct(s) => s.fields().collect(),
        MemoryLayout::Union(u) => u.members().iter().map(|m| (0, m)).collect(),
        _ => return None,
    };
    for &(offset, m) in &fields {
        if m.name() == Some(name) {
            return Some((offset, m));
        }
    }
    fields.into_iter().find_map(|(offset, m)| {
        if m.name().is_some() {
            return None;
        }
        find_member(m, name, depth + 1).map(|(o, f)| (offset + o, f))
    })
}

/// Element `index` of an array object or of what a pointer points to (`a[i]`, `p[i]`).
pub(super) fn index(st: &State, base: Val, index: &Val) -> Result<Val, String> {
    let Val::Int(i) = index else {
        return Err(format!(
            "an array index must be an integer, found {}",
            index.describe()
        ));
    };
    let (element, addr) = match base {
        Val::Obj { ty, addr } => match complete(st, ty) {
            Ty::Object(MemoryLayout::Sequence(s)) => (Ty::Object(s.element().clone()), addr),
            _ => return Err("indexing something that is not an array or pointer".into()),
        },
        Val::Ptr(p) => match p.target {
            Some(t) => (t, Some(p.addr)),
            None => return Err("indexing a pointer whose target type is unknown".into()),
        },
        other => return Err(format!("indexing {}", other.describe())),
    };
    let (size, _) = type_size_align(st, element.clone())?;
    let addr = match addr {
        Some(a) => {
            let delta =
                i.v.checked_mul(size as i128)
                    .ok_or("overflow in an array index")?;
            Some(CVal::wrap(i128::from(a) + delta, IntTy::ADDRESS).v as u64)
        }
        None => None,
    };
    Ok(Val::Obj { ty: element, addr })
}

/// `*p`: the object `p` points to.
pub(super) fn deref(p: Val) -> Result<Val, String> {
    match p {
        Val::Ptr(PVal {
            target: Some(Ty::Void),
            ..
        }) => Err("dereferencing a `void *`".into()),
        Val::Ptr(PVal {
            addr,
            target: Some(ty),
        }) => Ok(Val::Obj {
            ty,
            addr: Some(addr),
        }),
        Val::Ptr(_) => Err("dereferencing a pointer whose target type is unknown".into()),
        other => Err(format!("`*` cannot apply to {}", other.describe())),
    }
}

/// `&x`: the address of an object whose address is known.
pub(super) fn address_of(x: Val) -> Result<Val, String> {
    match x {
        Val::Obj {
            ty,
            addr: Some(addr),
        } => Ok(Val::Ptr(PVal {
            addr,
            target: Some(ty),
        })),
        Val::Obj { addr: None, .. } => Err("the address of a declared object is not known".into()),
        other => Err(format!("`&` cannot apply to {}", other.describe())),
    }
}
