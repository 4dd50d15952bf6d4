//! Integer constant expressions (C17 §6.6), as array sizes, bitfield widths, enumerator
//! values, alignments and `_Static_assert` conditions use them: conditional, binary and unary
//! operators, casts, `sizeof`/`_Alignof` of a type name and `offsetof`, evaluated over typed
//! integers ([`CVal`]) with C's promotions and conversions and with overflow checks.
//!
//! The evaluator is a part of the recursive descent: it reads the parser's tokens and, for
//! `sizeof`, casts and `offsetof`, parses type names, so it is written as [`Parser`] methods;
//! the values and their types are small types of their own.

use super::{PResult, Parser};
use crate::cdecl::lexer::{Kind, Token};
use crate::cdecl::{Span, Ty};
use crate::layout::{DataModel, MemoryLayout};

impl Parser<'_, '_> {
    /// An integer constant expression's value.
    pub(super) fn const_expr(&mut self) -> PResult<i128> {
        Ok(self.cond_expr()?.v)
    }

    /// A conditional expression: `a ? b : c` or a binary expression.
    fn cond_expr(&mut self) -> PResult<CVal> {
        let t = self.peek();
        self.enter(t)?;
        let c = self.binary(0)?;
        let r = if self.eat_punct("?") {
            let a = self.cond_expr()?;
            self.expect_punct(":", "in the conditional expression")?;
            let b = self.cond_expr()?;
            // The result has the two branches' common type (C11 §6.5.15 ¶5).
            let ty = IntTy::common(a.ty, b.ty);
            let pick = if c.v != 0 { a } else { b };
            CVal::wrap(pick.v, ty)
        } else {
            c
        };
        self.leave();
        Ok(r)
    }

    /// A binary expression whose operators bind at least as tightly as `min_prec` (precedence
    /// climbing over C's binary operators, `||` lowest).
    fn binary(&mut self, min_prec: u8) -> PResult<CVal> {
        let mut lhs = self.unary()?;
        loop {
            let op = self.peek();
            let Kind::Punct(p) = op.kind else { break };
            let prec = match p {
                "||" => 1,
                "&&" => 2,
                "|" => 3,
                "^" => 4,
                "&" => 5,
                "==" | "!=" => 6,
                "<" | ">" | "<=" | ">=" => 7,
                "<<" | ">>" => 8,
                "+" | "-" => 9,
                "*" | "/" | "%" => 10,
                _ => break,
            };
            if prec < min_prec {
                break;
            }
            self.bump();
            let rhs = self.binary(prec + 1)?;
            lhs = self.binary_op(op, p, lhs, rhs)?;
        }
        Ok(lhs)
    }

    /// `lhs p rhs` with C's conversions: shifts take the promoted left operand's type; other
    /// arithmetic, bitwise and comparison operators convert both operands to their common
    /// type (C11 §6.3.1.8); comparisons and logical operators give `int`. Unsigned arithmetic
    /// wraps; signed overflow is an error.
    fn binary_op(&self, op: Token, p: &str, lhs: CVal, rhs: CVal) -> PResult<CVal> {
        let overflow = || self.err(op, format!("overflow in constant expression at `{p}`"));
        let int = |b: bool| CVal {
            v: i128::from(b),
            ty: IntTy::INT,
        };
        match p {
            "||" => return Ok(int(lhs.v != 0 || rhs.v != 0)),
            "&&" => return Ok(int(lhs.v != 0 && rhs.v != 0)),
            "<<" | ">>" => {
                let ty = lhs.ty.promoted();
                let sh = u32::try_from(rhs.v)
                    .ok()
                    .filter(|&s| s < ty.bits)
                    .ok_or_else(|| {
                        self.err(
                            op,
                            format!("shift count {} out of range 0..{}", rhs.v, ty.bits),
                        )
                    })?;
                let v = if p == "<<" {
                    if !ty.unsigned && lhs.v < 0 {
                        return Err(self.err(op, "left shift of a negative value"));
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
            _ => {}
        }
        let ty = IntTy::common(lhs.ty, rhs.ty);
        let (a, b) = (CVal::wrap(lhs.v, ty).v, CVal::wrap(rhs.v, ty).v);
        let v = match p {
            "|" => a | b,
            "^" => a ^ b,
            "&" => a & b,
            "==" => return Ok(int(a == b)),
            "!=" => return Ok(int(a != b)),
            "<" => return Ok(int(a < b)),
            ">" => return Ok(int(a > b)),
            "<=" => return Ok(int(a <= b)),
            ">=" => return Ok(int(a >= b)),
            "+" => a.checked_add(b).ok_or_else(overflow)?,
            "-" => a.checked_sub(b).ok_or_else(overflow)?,
            "*" => a.checked_mul(b).ok_or_else(overflow)?,
            _ => {
                if b == 0 {
                    return Err(self.err(op, "division by zero in constant expression"));
                }
                if p == "/" {
                    a.checked_div(b).ok_or_else(overflow)?
                } else {
                    a.checked_rem(b).ok_or_else(overflow)?
                }
            }
        };
        if !ty.unsigned && !ty.holds(v) {
            return Err(overflow());
        }
        Ok(CVal::wrap(v, ty))
    }

    /// A unary expression, one nesting level deeper (see [`Parser::enter`]).
    fn unary(&mut self) -> PResult<CVal> {
        let t = self.peek();
        self.enter(t)?;
        let v = self.unary_inner(t)?;
        self.leave();
        Ok(v)
    }

    /// A unary expression starting at `t`: a constant, a unary operator, a cast, a parenthesised
    /// expression, `sizeof`/`_Alignof` of a type name, `offsetof` or an enumeration constant.
    fn unary_inner(&mut self, t: Token) -> PResult<CVal> {
        match t.kind {
            Kind::Int(v) => {
                self.bump();
                Ok(CVal {
                    v: i128::from(v),
                    ty: IntTy::of_constant(self.text(t), v),
                })
            }
            Kind::Char(v) => {
                self.bump();
                Ok(CVal {
                    v: i128::from(v),
                    ty: IntTy::INT,
                })
            }
            Kind::Float => Err(self.err(
                t,
                "floating constants are not supported in constant expressions",
            )),
            Kind::Punct("-") => {
                self.bump();
                let x = self.unary()?;
                let ty = x.ty.promoted();
                if !ty.unsigned && !ty.holds(-x.v) {
                    return Err(self.err(t, "overflow in constant expression at `-`"));
                }
                Ok(CVal::wrap(-x.v, ty))
            }
            Kind::Punct("+") => {
                self.bump();
                let x = self.unary()?;
                Ok(CVal::wrap(x.v, x.ty.promoted()))
            }
            Kind::Punct("~") => {
                self.bump();
                let x = self.unary()?;
                Ok(CVal::wrap(!x.v, x.ty.promoted()))
            }
            Kind::Punct("!") => {
                self.bump();
                let x = self.unary()?;
                Ok(CVal {
                    v: i128::from(x.v == 0),
                    ty: IntTy::INT,
                })
            }
            Kind::Punct("(") => {
                self.bump();
                if self.is_type_start(self.peek()) {
                    // A cast: the value converted to the type (C11 §6.3.1.3).
                    let start = self.peek();
                    let ty = self.type_name()?;
                    let span = self.span_from(start);
                    self.expect_punct(")", "to close the cast")?;
                    let x = self.unary()?;
                    return self.cast(x, ty, span);
                }
                let v = self.cond_expr()?;
                self.expect_punct(")", "to close the parenthesis")?;
                Ok(v)
            }
            Kind::Ident => {
                let w = self.text(t);
                if w == "__extension__" {
                    self.bump();
                    return self.unary();
                }
                if matches!(w, "__builtin_offsetof" | "offsetof") {
                    self.bump();
                    return self.offsetof(t);
                }
                if matches!(
                    w,
                    "sizeof" | "_Alignof" | "alignof" | "__alignof__" | "__alignof"
                ) {
                    self.bump();
                    self.expect_punct(
                        "(",
                        &format!("after `{w}` (only `{w}(type)` is supported)"),
                    )?;
                    let start = self.peek();
                    let incomplete = start.kind == Kind::Ident
                        && self.st.incomplete_arrays.contains(self.text(start))
                        && matches!(self.peek_at(1).kind, Kind::Punct(")"));
                    let ty = self.type_name()?;
                    let span = self.span_from(start);
                    if incomplete {
                        return Err(self.err_at(
                            span,
                            format!(
                                "`{w}` of `{}`, an array of unknown size (incomplete)",
                                self.text(start)
                            ),
                        ));
                    }
                    self.expect_punct(")", &format!("to close `{w}(`"))?;
                    let (size, align) = match self.complete(ty) {
                        Ty::NoLayout(n) if n.size_align.is_some() => {
                            n.size_align.unwrap_or_default()
                        }
                        ty => {
                            let l = self.object_layout(ty, span)?;
                            (l.byte_size(), l.byte_alignment())
                        }
                    };
                    let v = if w == "sizeof" { size } else { align };
                    return Ok(CVal {
                        v: v as i128,
                        ty: IntTy::SIZE_T,
                    });
                }
                match self.st.constants.get(w) {
                    Some(&v) => {
                        self.bump();
                        Ok(CVal {
                            v,
                            ty: IntTy::of_enumerator(v),
                        })
                    }
                    None => Err(self.err(
                        t,
                        format!("`{w}` is not a constant (only enumeration constants are known)"),
                    )),
                }
            }
            _ => Err(self.err(
                t,
                format!("expected a constant expression, found {}", self.describe(t)),
            )),
        }
    }

    /// `__builtin_offsetof(type, member-designator)` after the keyword `kw`: the member's byte
    /// offset (`a.b[2].c` designators; a bitfield has no byte offset).
    fn offsetof(&mut self, kw: Token) -> PResult<CVal> {
        self.expect_punct("(", &format!("after `{}`", self.text(kw)))?;
        let start = self.peek();
        let ty = self.type_name()?;
        let span = self.span_from(start);
        let layout = self.object_layout(ty, span)?;
        self.expect_punct(",", "after the type in `offsetof`")?;
        let mut path = String::new();
        let first = self.peek();
        loop {
            let t = self.peek();
            if t.kind != Kind::Ident {
                return Err(self.err(
                    t,
                    format!(
                        "expected a member name in `offsetof`, found {}",
                        self.describe(t)
                    ),
                ));
            }
            self.bump();
            path.push_str(self.text(t));
            while self.eat_punct("[") {
                let i = self.const_expr()?;
                self.expect_punct("]", "to close the index in `offsetof`")?;
                path.push_str(&format!("[{i}]"));
            }
            if !self.eat_punct(".") {
                break;
            }
            path.push('.');
        }
        let pspan = self.span_from(first);
        self.expect_punct(")", "to close `offsetof(`")?;
        let off = layout
            .byte_offset_of(&path)
            .map_err(|e| self.layout_err(pspan, e))?;
        Ok(CVal {
            v: off as i128,
            ty: IntTy::SIZE_T,
        })
    }

    /// `(ty) x` in a constant expression: integer, enum, `_Bool` and pointer types.
    fn cast(&self, x: CVal, ty: Ty, span: Span) -> PResult<CVal> {
        use crate::layout::ScalarKind as K;
        let kind = match self.complete(ty) {
            Ty::Object(MemoryLayout::Value(v)) => v.kind(),
            Ty::Void => return Ok(x),
            _ => {
                return Err(self.err_at(
                    span,
                    "a cast in a constant expression must be to an integer or pointer type",
                ))
            }
        };
        if kind == K::Bool {
            return Ok(CVal {
                v: i128::from(x.v != 0),
                ty: IntTy::INT,
            });
        }
        if kind.is_float() {
            return Err(self.err_at(
                span,
                "floating casts are not supported in constant expressions",
            ));
        }
        let ty = IntTy {
            bits: (kind.byte_size() * 8) as u32,
            unsigned: !kind.is_signed(),
        };
        Ok(CVal::wrap(x.v, ty))
    }
}

/// The type of an integer constant expression's value (after the integer promotions: `int`
/// or wider).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IntTy {
    bits: u32,
    unsigned: bool,
}

impl IntTy {
    /// `int`.
    const INT: IntTy = IntTy {
        bits: 32,
        unsigned: false,
    };
    /// `size_t` (the type of `sizeof`, `_Alignof` and `offsetof`).
    const SIZE_T: IntTy = IntTy {
        bits: usize::BITS,
        unsigned: true,
    };

    /// The width of `long` on this build's target, in bits.
    fn long_bits() -> u32 {
        (DataModel::HOST.long_size * 8) as u32
    }

    /// Whether `v` is in range.
    fn holds(self, v: i128) -> bool {
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
    fn of_constant(text: &str, v: u64) -> IntTy {
        let lower = text.to_ascii_lowercase();
        let body = lower.trim_end_matches(['u', 'l']);
        let suffix = &lower[body.len()..];
        let unsigned_suffix = suffix.contains('u');
        let longs = suffix.matches('l').count();
        // Octal, hex and binary constants may also take unsigned types.
        let decimal = !(body.starts_with('0') && body.len() > 1);
        let long_bits = IntTy::long_bits();
        let mut candidates: Vec<IntTy> = Vec::with_capacity(6);
        let widths: &[u32] = match longs {
            0 => &[32, 0, 64],
            1 => &[0, 64],
            _ => &[64],
        };
        for &w in widths {
            let bits = if w == 0 { long_bits } else { w };
            if !unsigned_suffix {
                candidates.push(IntTy {
                    bits,
                    unsigned: false,
                });
            }
            if unsigned_suffix || !decimal {
                candidates.push(IntTy {
                    bits,
                    unsigned: true,
                });
            }
        }
        candidates
            .into_iter()
            .find(|t| t.holds(i128::from(v)))
            // Too large for every candidate: gcc makes it `unsigned long long`.
            .unwrap_or(IntTy {
                bits: 64,
                unsigned: true,
            })
    }

    /// The type of an enumeration constant with value `v`: `int`, or (GNU) the narrowest of
    /// `unsigned int`, `long`, `unsigned long` that holds it.
    fn of_enumerator(v: i128) -> IntTy {
        [(32, false), (32, true), (64, false), (64, true)]
            .into_iter()
            .map(|(bits, unsigned)| IntTy { bits, unsigned })
            .find(|t| t.holds(v))
            .unwrap_or(IntTy {
                bits: 64,
                unsigned: true,
            })
    }
}

/// A typed integer constant: `v` is in `ty`'s range.
#[derive(Debug, Clone, Copy)]
struct CVal {
    v: i128,
    ty: IntTy,
}

impl CVal {
    /// `v` converted to `ty` (C11 §6.3.1.3: modulo 2^bits; gcc does the same for signed
    /// targets).
    fn wrap(v: i128, ty: IntTy) -> CVal {
        let m = 1i128 << ty.bits;
        let mut r = v.rem_euclid(m);
        if !ty.unsigned && r >= m / 2 {
            r -= m;
        }
        CVal { v: r, ty }
    }
}
