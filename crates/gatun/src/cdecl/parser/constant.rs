//! Constant expressions (C17 §6.6): as array sizes, bitfield widths, enumerator values,
//! alignments and `_Static_assert` conditions use them (integer constant expressions), and as
//! macro replacements give them (arithmetic, address and string constants). The grammar is
//! C's expression grammar without assignment and comma operators: conditional, binary and
//! unary operators, casts, `sizeof`/`_Alignof` of a type name or an expression,
//! `offsetof`, postfix `[]`, `.` and `->` (for `sizeof` and `&`), literals, enumeration
//! constants and declared variables (their type, for `sizeof`).
//!
//! The evaluator is a part of the recursive descent: it reads the parser's tokens and, for
//! `sizeof`, casts and `offsetof`, parses type names, so it is written as [`Parser`] methods;
//! the values and C's arithmetic on them are in `const_value.rs`.

use super::const_value::{self, CVal, CastTo, FVal, IntTy, Val};
use super::{PResult, Parser};
use crate::cdecl::lexer::{Kind, Token};
use crate::cdecl::literals::{self, FloatType};
use crate::cdecl::{Span, Ty};
use crate::layout::{MemoryLayout, ScalarKind};

impl Parser<'_, '_> {
    /// An integer constant expression's value.
    pub(super) fn const_expr(&mut self) -> PResult<i128> {
        Ok(self.int_const_expr()?.v)
    }

    /// An integer constant expression's value and type.
    pub(super) fn int_const_expr(&mut self) -> PResult<CVal> {
        let start = self.peek();
        let v = self.cond_expr()?;
        match self.operand(v, start)? {
            Val::Int(c) => Ok(c),
            other => Err(self.err_at(
                self.span_from(start),
                format!(
                    "expected an integer constant expression, found {}",
                    other.describe()
                ),
            )),
        }
    }

    /// The whole source as one constant expression (a macro's replacement), of any type.
    pub(in crate::cdecl) fn whole_expression(mut self) -> PResult<Val> {
        let start = self.peek();
        let v = self.cond_expr()?;
        let v = self.operand(v, start)?;
        let t = self.peek();
        if t.kind != Kind::Eof {
            return Err(self.err(
                t,
                format!(
                    "expected the end of the constant expression, found {}",
                    self.describe(t)
                ),
            ));
        }
        Ok(v)
    }

    /// An error `message` at the span from `start` to the last consumed token.
    fn err_from(&self, start: Token, message: String) -> super::CdeclError {
        self.err_at(self.span_from(start), message)
    }

    /// `v` as an operand (see [`Val::rvalue`]), an error positioned from `start`.
    fn operand(&self, v: Val, start: Token) -> PResult<Val> {
        v.rvalue(self.st).map_err(|m| self.err_from(start, m))
    }

    /// A conditional expression: `a ? b : c` (GNU `a ?: c`) or a binary expression.
    fn cond_expr(&mut self) -> PResult<Val> {
        let t = self.peek();
        self.enter(t)?;
        let c = self.binary(0)?;
        let r = if self.is_punct("?") {
            let q = self.bump();
            let c = self.operand(c, t)?;
            let cond = c.truth().map_err(|m| self.err(q, m))?;
            let a = if self.is_punct(":") {
                c
            } else {
                let at = self.peek();
                let a = self.cond_expr()?;
                self.operand(a, at)?
            };
            self.expect_punct(":", "in the conditional expression")?;
            let at = self.peek();
            let b = self.cond_expr()?;
            let b = self.operand(b, at)?;
            const_value::conditional(cond, a, b).map_err(|m| self.err(q, m))?
        } else {
            c
        };
        self.leave();
        Ok(r)
    }

    /// A binary expression whose operators bind at least as tightly as `min_prec` (precedence
    /// climbing over C's binary operators, `||` lowest).
    fn binary(&mut self, min_prec: u8) -> PResult<Val> {
        let start = self.peek();
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
            let rstart = self.peek();
            let rhs = self.binary(prec + 1)?;
            let a = self.operand(lhs, start)?;
            let b = self.operand(rhs, rstart)?;
            lhs = match p {
                "||" | "&&" => {
                    let (x, y) = (
                        a.truth().map_err(|m| self.err(op, m))?,
                        b.truth().map_err(|m| self.err(op, m))?,
                    );
                    Val::Int(CVal::truth(if p == "||" { x || y } else { x && y }))
                }
                _ => const_value::binary(self.st, p, a, b).map_err(|m| self.err(op, m))?,
            };
        }
        Ok(lhs)
    }

    /// A unary expression, one nesting level deeper (see [`Parser::enter`]).
    fn unary(&mut self) -> PResult<Val> {
        let t = self.peek();
        self.enter(t)?;
        let v = self.unary_inner(t);
        self.leave();
        v
    }

    /// A unary expression starting at `t`: a unary operator applied to one, a cast, `sizeof`
    /// or `_Alignof`, or a postfix expression.
    fn unary_inner(&mut self, t: Token) -> PResult<Val> {
        match t.kind {
            Kind::Punct(op @ ("-" | "+" | "~" | "!")) => {
                self.bump();
                let start = self.peek();
                let x = self.unary()?;
                let x = self.operand(x, start)?;
                x.unary(op).map_err(|m| self.err(t, m))
            }
            Kind::Punct("*") => {
                self.bump();
                let start = self.peek();
                let x = self.unary()?;
                let x = self.operand(x, start)?;
                const_value::deref(x).map_err(|m| self.err(t, m))
            }
            Kind::Punct("&") => {
                self.bump();
                let x = self.unary()?;
                const_value::address_of(x).map_err(|m| self.err(t, m))
            }
            Kind::Punct("(") if self.cast_follows() => {
                // A cast: the value converted to the type (C11 §6.3).
                self.bump();
                let start = self.peek();
                let (ty, target) = self.type_name_and_target()?;
                let span = self.span_from(start);
                self.expect_punct(")", "to close the cast")?;
                if self.is_punct("{") {
                    let b = self.peek();
                    return Err(self.err(b, "a compound literal is not a constant expression"));
                }
                let xstart = self.peek();
                let x = self.unary()?;
                let x = self.operand(x, xstart)?;
                let to = self.cast_target(ty, target, span)?;
                const_value::cast(x, to).map_err(|m| self.err_at(span, m))
            }
            Kind::Ident if matches!(self.text(t), "__extension__") => {
                self.bump();
                self.unary()
            }
            Kind::Ident
                if matches!(
                    self.text(t),
                    "sizeof" | "_Alignof" | "alignof" | "__alignof__" | "__alignof"
                ) =>
            {
                self.bump();
                self.size_of(t)
            }
            _ => {
                let v = self.primary(t)?;
                self.postfix(v)
            }
        }
    }

    /// Whether the `(` ahead opens a cast: a type name follows it (after any
    /// `__extension__`, which may also start a parenthesised expression: `(__extension__ 1)`).
    fn cast_follows(&self) -> bool {
        let mut n = 1;
        while self.is_word(self.peek_at(n), &["__extension__"]) && n < 4 {
            n += 1;
        }
        self.is_type_start(self.peek_at(n))
    }

    /// `sizeof`/`_Alignof` (the keyword `kw` consumed) of a parenthesised type name or of a
    /// unary expression (whose value is not read: `sizeof *(T *)0`, `sizeof x`).
    fn size_of(&mut self, kw: Token) -> PResult<Val> {
        let w = self.text(kw);
        let start = self.peek();
        let (size, align) = if self.is_punct("(") && self.is_type_start(self.peek_at(1)) {
            self.bump();
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
            match self.complete(ty) {
                Ty::NoLayout(n) if n.size_align.is_some() => n.size_align.unwrap_or_default(),
                ty => {
                    let l = self.object_layout(ty, span)?;
                    (l.byte_size(), l.byte_alignment())
                }
            }
        } else {
            let x = self.unary()?;
            x.size_align(self.st)
                .map_err(|m| self.err_from(start, format!("`{w}`: {m}")))?
        };
        let v = if w == "sizeof" { size } else { align };
        Ok(Val::Int(CVal {
            v: v as i128,
            ty: IntTy::SIZE_T,
        }))
    }

    /// A primary expression at `t`: a literal, a parenthesised expression, `offsetof`, an
    /// enumeration constant, or a declared variable or function (an object of unknown
    /// address).
    fn primary(&mut self, t: Token) -> PResult<Val> {
        match t.kind {
            Kind::Int(v) => {
                self.bump();
                Ok(Val::Int(CVal {
                    v: i128::from(v),
                    ty: IntTy::of_constant(self.text(t), v),
                }))
            }
            Kind::Char(_) => {
                self.bump();
                let (v, unsigned, bits) =
                    literals::char_value(self.text(t)).map_err(|m| self.err(t, m))?;
                Ok(Val::Int(CVal {
                    v,
                    ty: IntTy { bits, unsigned },
                }))
            }
            Kind::Float => {
                self.bump();
                let (v, ty) = literals::float_value(self.text(t)).map_err(|m| self.err(t, m))?;
                Ok(Val::Float(FVal { v, ty }))
            }
            Kind::Str => {
                let mut texts = Vec::new();
                while self.peek().kind == Kind::Str {
                    let s = self.bump();
                    texts.push(self.text(s));
                }
                let bytes = literals::string_bytes(texts).map_err(|m| self.err_from(t, m))?;
                Ok(Val::Str(bytes.into()))
            }
            Kind::Punct("(") => {
                self.bump();
                if self.is_punct("{") {
                    let b = self.peek();
                    return Err(self.err(b, "a statement expression is not a constant expression"));
                }
                let v = self.cond_expr()?;
                self.expect_punct(")", "to close the parenthesis")?;
                Ok(v)
            }
            Kind::Ident => {
                let w = self.text(t);
                if matches!(w, "__builtin_offsetof" | "offsetof") {
                    self.bump();
                    return self.offsetof(t);
                }
                if let Some(&e) = self.st.constants.get(w) {
                    self.bump();
                    let ty = IntTy::of_kind(e.kind).unwrap_or(IntTy::INT);
                    return Ok(Val::Int(CVal { v: e.value, ty }));
                }
                if let Some(ty) = self.st.variables.get(w).cloned() {
                    self.bump();
                    return Ok(Val::Obj { ty, addr: None });
                }
                if self.is_type_start(t) {
                    return Err(
                        self.err(t, format!("`{w}` names a type, not a constant expression"))
                    );
                }
                if let Some(f) = self.st.fn_types.get(w).cloned() {
                    self.bump();
                    return Ok(Val::Obj {
                        ty: Ty::Func(f),
                        addr: None,
                    });
                }
                Err(self.err(
                    t,
                    format!("`{w}` is not a constant (not an enumeration constant)"),
                ))
            }
            _ => Err(self.err(
                t,
                format!("expected a constant expression, found {}", self.describe(t)),
            )),
        }
    }

    /// Postfix operators after `v`: `[index]`, `.member`, `->member`; a call is an error.
    fn postfix(&mut self, mut v: Val) -> PResult<Val> {
        loop {
            let op = self.peek();
            v = match op.kind {
                Kind::Punct("[") => {
                    self.bump();
                    let start = self.peek();
                    let i = self.cond_expr()?;
                    let i = self.operand(i, start)?;
                    self.expect_punct("]", "to close the index")?;
                    let base = match v {
                        o @ Val::Obj { .. } => o,
                        other => self.operand(other, op)?,
                    };
                    const_value::index(self.st, base, &i).map_err(|m| self.err(op, m))?
                }
                Kind::Punct(p @ ("." | "->")) => {
                    self.bump();
                    let name = self.peek();
                    if name.kind != Kind::Ident {
                        return Err(self.err(
                            name,
                            format!(
                                "expected a member name after `{p}`, found {}",
                                self.describe(name)
                            ),
                        ));
                    }
                    self.bump();
                    let obj = if p == "->" {
                        let ptr = self.operand(v, op)?;
                        const_value::deref(ptr).map_err(|m| self.err(op, m))?
                    } else {
                        v
                    };
                    let Val::Obj { ty, addr } = obj else {
                        return Err(self.err(op, format!("`.` cannot apply to {}", obj.describe())));
                    };
                    const_value::member(self.st, ty, addr, self.text(name))
                        .map_err(|m| self.err(name, m))?
                }
                Kind::Punct("(") => {
                    return Err(self.err(op, "a function call is not a constant expression"))
                }
                Kind::Punct(p @ ("++" | "--")) => {
                    return Err(
                        self.err(op, format!("`{p}` is not allowed in a constant expression"))
                    )
                }
                _ => return Ok(v),
            };
        }
    }

    /// What a cast to `ty` (written at `span`; `target` is what a pointer declarator points
    /// to) converts to: integer, enum, `_Bool`, floating and pointer types.
    fn cast_target(&self, ty: Ty, target: Option<Ty>, span: Span) -> PResult<CastTo> {
        let v = match self.complete(ty) {
            Ty::Object(MemoryLayout::Value(v)) => v,
            Ty::Void => return Err(self.err_at(span, "a cast to `void` has no value")),
            Ty::NoLayout(n) => {
                return Err(self.err_at(
                    span,
                    format!("a cast to `{}`, which has no gatun value", n.spelling),
                ))
            }
            _ => {
                return Err(self.err_at(
                    span,
                    "a cast in a constant expression must be to a scalar type",
                ))
            }
        };
        Ok(match v.kind() {
            ScalarKind::F32 => CastTo::Float(FloatType::Float),
            ScalarKind::F64 => CastTo::Float(FloatType::Double),
            ScalarKind::Pointer => {
                CastTo::Ptr(target.or_else(|| v.target().map(|l| Ty::Object(l.clone()))))
            }
            kind => CastTo::Int(IntTy::of_kind(kind).unwrap_or(IntTy::INT)),
        })
    }

    /// `__builtin_offsetof(type, member-designator)` after the keyword `kw`: the member's byte
    /// offset (`a.b[2].c` designators; a bitfield has no byte offset).
    fn offsetof(&mut self, kw: Token) -> PResult<Val> {
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
        Ok(Val::Int(CVal {
            v: off as i128,
            ty: IntTy::SIZE_T,
        }))
    }
}
