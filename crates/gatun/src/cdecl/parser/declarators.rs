//! Declarators (C17 §6.7.6): pointers (§6.7.6.1), arrays and their sizes (§6.7.6.2, with
//! variable-length arrays accepted only where they decay), function declarators and parameter
//! lists (§6.7.6.3), and applying a declarator's derivations to the specifiers' type.

use std::sync::Arc;

use super::attributes::{Attrs, ATTRIBUTE};
use super::specifiers::IGNORED;
use super::{PResult, Parser};
use crate::cdecl::lexer::{Kind, Token};
use crate::cdecl::{CdeclError, FnTy, NoLayout, Span, Ty, MAX_NESTING};
use crate::layout::{MemoryLayout, PointerTarget, ScalarKind, ValueLayout};

/// Pointer targets are attached to layouts less deep than this, so that records holding such
/// pointers keep well within [`MAX_NESTING`] (a target adds its depth to the pointer's).
const MAX_TARGET_DEPTH: usize = MAX_NESTING / 2;

#[derive(Debug)]
/// An array or function derivation written after a declarator's name.
enum Suffix {
    Array(Option<usize>, Span),
    /// An array whose size is not a constant (a variable-length array, allowed only where it
    /// decays to a pointer: a parameter); the error evaluating the size.
    Vla(Box<CdeclError>),
    Func(FnTy, Span),
}

#[derive(Debug, Default)]
/// A parsed declarator: its name (if any), its pointers, a parenthesised inner declarator and
/// the suffixes after them.
pub(super) struct Declarator {
    /// The declared name and where it is written (`None` in an abstract declarator or when
    /// the name is in `inner`).
    name: Option<(String, Span)>,
    /// The number of `*` before the name or inner declarator.
    ptrs: usize,
    /// A parenthesised declarator (`(*f)` in `int (*f)(void)`).
    inner: Option<Box<Declarator>>,
    /// The array and function suffixes, in source order.
    suffixes: Vec<Suffix>,
}

impl Declarator {
    /// The declared name and where it is written, if the declarator is not abstract.
    pub(super) fn name(&self) -> Option<&(String, Span)> {
        match &self.name {
            Some(n) => Some(n),
            None => self.inner.as_ref().and_then(|d| d.name()),
        }
    }

    /// Whether the declarator derives a pointer, array or function type from the specifiers'.
    pub(super) fn derives(&self) -> bool {
        self.ptrs > 0
            || !self.suffixes.is_empty()
            || self.inner.as_ref().is_some_and(|d| d.derives())
    }

    /// Whether the declarator has a pointer anywhere (`*name[]`, `(*name)[]`).
    fn derives_pointer(&self) -> bool {
        self.ptrs > 0 || self.inner.as_ref().is_some_and(|d| d.derives_pointer())
    }

    /// Whether some array size is not a constant.
    fn has_vla(&self) -> bool {
        self.suffixes.iter().any(|s| matches!(s, Suffix::Vla(_)))
            || self.inner.as_ref().is_some_and(|d| d.has_vla())
    }

    /// The derivation applied last (the outermost one): the innermost declarator level that
    /// derives anything applies its first suffix last, or else its pointers.
    fn outermost(&self) -> Option<Option<&Suffix>> {
        match &self.inner {
            Some(inner) if inner.derives() => inner.outermost(),
            _ => match self.suffixes.first() {
                Some(s) => Some(Some(s)),
                None if self.ptrs > 0 => Some(None), // a pointer
                None => None,
            },
        }
    }

    /// The outermost derivation is an array (`T name[N]`, `T *name[]`, `T (name)[N]`).
    fn outer_is_array(&self) -> bool {
        matches!(
            self.outermost(),
            Some(Some(Suffix::Array(..) | Suffix::Vla(_)))
        )
    }

    /// Whether the outermost derivation is a pointer (`T *`, `T (*)[N]`, `T (*)(void)`).
    pub(super) fn is_pointer(&self) -> bool {
        matches!(self.outermost(), Some(None))
    }

    /// `T name[]`, `T *name[]`: the outermost derivation is an array of unknown size.
    pub(super) fn is_flexible(&self) -> bool {
        matches!(self.outermost(), Some(Some(Suffix::Array(None, _))))
    }

    /// Whether the declarator applied to `base` declares a pointer to a character type: `*`
    /// on a character type (`char *s`, `const unsigned char *s`), nothing on a typedef of
    /// such a pointer (`base_c_string`: `str s` after `typedef char *str;`), or for a
    /// parameter (`decays`) an array of a character type (`char s[]`, C11 §6.7.6.3 ¶7).
    pub(super) fn is_c_string(&self, base: &Ty, base_c_string: bool, decays: bool) -> bool {
        if self.inner.as_ref().is_some_and(|d| d.derives()) {
            return false;
        }
        match (self.ptrs, self.suffixes.as_slice()) {
            (0, []) => base_c_string,
            (1, []) => is_char(base),
            (0, [Suffix::Array(..) | Suffix::Vla(_)]) => decays && is_char(base),
            _ => false,
        }
    }
}

/// Whether `ty` is a character type (`char`, `signed char`, `unsigned char`, or a typedef of
/// one): a byte-sized integer.
fn is_char(ty: &Ty) -> bool {
    matches!(ty, Ty::Object(MemoryLayout::Value(v))
        if matches!(v.kind(), crate::layout::ScalarKind::I8 | crate::layout::ScalarKind::U8))
}

impl Parser<'_, '_> {
    /// A declarator, concrete or abstract (C17 §6.7.6, §6.7.7): pointers with their qualifiers
    /// and attributes, a name or a parenthesised declarator, then array and function suffixes.
    fn declarator(&mut self) -> PResult<Declarator> {
        let start = self.peek();
        self.enter(start)?;
        let mut d = Declarator::default();
        loop {
            let t = self.peek();
            if self.is_word(t, &["__attribute__", "__attribute"]) {
                // Attributes before a (nested) declarator or after a `*`: only ones that do
                // not change the type are allowed here.
                let mut here = Attrs::default();
                self.attributes(&mut here)?;
                if let Some((what, span)) = here.type_changing() {
                    return Err(self.err_at(
                        span,
                        format!("`{what}` inside a declarator is not supported"),
                    ));
                }
                if here.aligned.is_some() || here.packed {
                    return Err(self.err(
                        t,
                        "`aligned`/`packed` inside a declarator is not supported: put it after \
                         the declarator",
                    ));
                }
            } else if self.eat_punct("*") {
                d.ptrs += 1;
                loop {
                    let t = self.peek();
                    if self.is_word(t, IGNORED) {
                        self.bump();
                    } else {
                        break;
                    }
                }
            } else if self.is_punct("^") {
                let t = self.peek();
                return Err(self.err(t, "blocks (`^`) are not supported"));
            } else {
                break;
            }
        }
        let t = self.peek();
        if self.is_punct("(") && self.nested_declarator_follows() {
            self.bump();
            let inner = self.declarator()?;
            d.inner = Some(Box::new(inner));
            self.expect_punct(")", "to close the parenthesized declarator")?;
        } else if t.kind == Kind::Ident && !self.is_word(t, ATTRIBUTE) {
            let w = self.text(t);
            if self.is_type_start(t) && !self.st.typedefs.contains_key(w) {
                return Err(self.err(t, format!("unexpected keyword `{w}` in a declarator")));
            }
            self.bump();
            d.name = Some((w.to_string(), t.span));
        }
        loop {
            if self.is_punct("[") {
                let open = self.bump();
                loop {
                    let q = self.peek();
                    if self.is_word(q, IGNORED) {
                        self.bump();
                    } else {
                        break;
                    }
                }
                if self.eat_punct("]") {
                    d.suffixes.push(Suffix::Array(None, self.span_from(open)));
                    continue;
                }
                let et = self.peek();
                let saved = self.pos;
                let saved_depth = self.depth;
                let first = self.const_expr();
                self.depth = saved_depth;
                let v = match first {
                    Ok(v) if self.is_punct("]") => v,
                    Ok(_) | Err(_) => {
                        // Not a constant (`int a[n]` in a parameter list): remember why and
                        // skip to the matching `]`. The one parse's own error (or where it
                        // stopped) says why: parsing the size again would double the work at
                        // every nested `[(`, exponential in the nesting.
                        let e = match first {
                            Err(e) => e,
                            Ok(_) => {
                                let t = self.peek();
                                self.err(
                                    t,
                                    format!(
                                        "expected `]` to close the array size, found {}",
                                        self.describe(t)
                                    ),
                                )
                            }
                        };
                        self.pos = saved;
                        self.skip_to_bracket(open)?;
                        d.suffixes.push(Suffix::Vla(Box::new(e)));
                        continue;
                    }
                };
                let span = self.span_from(et);
                self.expect_punct("]", "to close the array size")?;
                let n = usize::try_from(v).map_err(|_| {
                    if v < 0 {
                        self.err_at(span, format!("array size {v} is negative"))
                    } else {
                        self.err_at(span, format!("array size {v} is too large"))
                    }
                })?;
                d.suffixes
                    .push(Suffix::Array(Some(n), self.span_from(open)));
            } else if self.is_punct("(") {
                let open = self.bump();
                let f = self.params(open)?;
                d.suffixes.push(Suffix::Func(f, self.span_from(open)));
            } else {
                break;
            }
        }
        self.leave();
        Ok(d)
    }

    /// After a `(` in a declarator: a nested declarator (`(*fp)`, `(name)`) rather than a
    /// parameter list?
    fn nested_declarator_follows(&self) -> bool {
        let t = self.peek_at(1);
        match t.kind {
            Kind::Punct("*" | "(" | "[" | "^") => true,
            Kind::Ident => {
                self.is_word(t, ATTRIBUTE)
                    || !self.is_type_start(t)
                    // `typedef int (T)(void);` again: where a name is expected, `(T)` is the
                    // parenthesized name even when `T` is already a typedef name.
                    || (self.named_context
                        && self.st.typedefs.contains_key(self.text(t))
                        && matches!(self.peek_at(2).kind, Kind::Punct(")")))
            }
            _ => false,
        }
    }

    /// A declarator where a name is expected (`named`: declarations and members) or not
    /// (parameters, type names).
    pub(super) fn declarator_in(&mut self, named: bool) -> PResult<Declarator> {
        let saved = std::mem::replace(&mut self.named_context, named);
        let r = self.declarator();
        self.named_context = saved;
        r
    }

    /// A parameter list after its `(` at `open`, through the closing `)` (C17 §6.7.6.3).
    fn params(&mut self, open: Token) -> PResult<FnTy> {
        self.enter(open)?;
        let mut params = Vec::new();
        let mut param_c_strings = Vec::new();
        let mut callbacks = Vec::new();
        let mut variadic = false;
        let t = self.peek();
        if self.eat_punct(")") {
            self.leave();
            return Ok(FnTy {
                ret: Ty::Void,
                returns_c_string: false,
                params,
                param_c_strings: Vec::new(),
                callbacks: Vec::new(),
                variadic,
            });
        }
        if t.kind == Kind::Ident
            && self.text(t) == "void"
            && matches!(self.peek_at(1).kind, Kind::Punct(")"))
        {
            self.bump();
            self.bump();
            self.leave();
            return Ok(FnTy {
                ret: Ty::Void,
                returns_c_string: false,
                params,
                param_c_strings: Vec::new(),
                callbacks: Vec::new(),
                variadic,
            });
        }
        loop {
            if self.eat_punct("...") {
                variadic = true;
                self.expect_punct(")", "after `...` (it must be the last parameter)")?;
                break;
            }
            let spec = self.specifiers()?;
            if spec.typedef {
                return Err(self.err_at(spec.span, "`typedef` is not allowed in a parameter list"));
            }
            let d = self.declarator_in(false)?;
            let mut attrs = spec.attrs.clone();
            self.attributes(&mut attrs)?;
            let base = self.type_attrs(spec.ty.clone(), &attrs, Some(&d))?;
            let name = d.name().map(|(n, _)| n.clone());
            callbacks.push(self.pointee_fn(&base, &d, spec.typedef_fn.as_ref()));
            param_c_strings.push(d.is_c_string(&base, spec.c_string, true));
            let ty = match self.apply_spec(base, &d, spec.c_string, spec.plain_char) {
                // A variable-length array parameter is a pointer, whatever its sizes.
                Err(_) if d.has_vla() && d.derives() => Ty::Object(ValueLayout::ADDRESS.into()),
                // Arrays of types without a layout decay too.
                Ok(Ty::NoLayout(_)) if d.outer_is_array() => {
                    Ty::Object(ValueLayout::ADDRESS.into())
                }
                r => r?,
            };
            let ty = match (&spec.transparent, d.derives()) {
                // GCC: a `transparent_union` parameter is passed as the union's first member.
                (Some(first), false) => Ty::Object(first.clone()),
                _ => ty,
            };
            let ty = match ty {
                // C11 §6.7.6.3 ¶7-8: arrays decay to pointers to their elements (`char s[]`
                // to `char *`, a C string with pointer targets), functions to pointers.
                Ty::Object(MemoryLayout::Sequence(seq)) => {
                    let element = seq.element().clone();
                    let char_element = spec.plain_char && !d.derives_pointer();
                    self.pointer(Ty::Object(element), char_element)
                }
                Ty::Func(_) => Ty::Object(ValueLayout::ADDRESS.into()),
                Ty::Void => return Err(self.err_at(
                    spec.span,
                    "a parameter cannot have type `void` (write `(void)` alone for no parameters)",
                )),
                other => other,
            };
            params.push((name, ty));
            if self.eat_punct(",") {
                continue;
            }
            let t = self.peek();
            if !self.eat_punct(")") {
                return Err(self.err(
                    t,
                    format!(
                        "expected `,` or `)` in the parameter list, found {}",
                        self.describe(t)
                    ),
                ));
            }
            break;
        }
        self.leave();
        Ok(FnTy {
            ret: Ty::Void,
            returns_c_string: false,
            params,
            param_c_strings,
            callbacks,
            variadic,
        })
    }

    /// The function type a declarator's pointer points to (`int (*cmp)(const void *, const
    /// void *)`, a function-pointer typedef used without derivation, or a function type that
    /// decays), if it declares a pointer to a function.
    pub(super) fn pointee_fn(
        &mut self,
        base: &Ty,
        d: &Declarator,
        typedef_fn: Option<&Arc<FnTy>>,
    ) -> Option<Arc<FnTy>> {
        if !d.derives() {
            return match base {
                Ty::Func(f) => Some(f.clone()),
                _ => typedef_fn.cloned(),
            };
        }
        let mut leaf = d;
        while let Some(inner) = &leaf.inner {
            leaf = inner;
        }
        let saved_depth = self.depth;
        let r = if leaf.ptrs == 1 && leaf.suffixes.is_empty() {
            self.apply_ex(base.clone(), d, true, false, false)
        } else {
            self.apply_ex(base.clone(), d, false, false, false)
        };
        self.depth = saved_depth;
        match r {
            Ok(Ty::Func(f)) => Some(f),
            _ => None,
        }
    }

    /// Applies a declarator's derivations to the specifiers' type (C11 §6.7.6); `plain_char`:
    /// the specifiers name plain `char` (or a typedef of it), whose pointers are C strings.
    pub(super) fn apply(&mut self, base: Ty, d: &Declarator, plain_char: bool) -> PResult<Ty> {
        self.apply_ex(base, d, false, false, plain_char)
    }

    /// [`Parser::apply`] for specifiers naming a typedef of a pointer to a character type
    /// (`base_c_string`: `typedef const char *str;`), so that a function declared to return
    /// `str` is known to return a C string.
    pub(super) fn apply_spec(
        &mut self,
        base: Ty,
        d: &Declarator,
        base_c_string: bool,
        plain_char: bool,
    ) -> PResult<Ty> {
        self.apply_ex(base, d, false, base_c_string, plain_char)
    }

    /// What the pointer type `base` with declarator `d` points to (`d` is a pointer:
    /// [`Declarator::is_pointer`]).
    pub(super) fn pointer_target(&mut self, base: Ty, d: &Declarator) -> PResult<Ty> {
        self.apply_ex(base, d, true, false, false)
    }

    /// [`Parser::apply`]; with `skip_leaf_ptr`, without the innermost declarator's last
    /// pointer (giving what that pointer points to); `base_c_string` as in
    /// [`Parser::apply_spec`]; `plain_char`: `base` is plain `char`, not derived yet.
    fn apply_ex(
        &mut self,
        base: Ty,
        d: &Declarator,
        skip_leaf_ptr: bool,
        base_c_string: bool,
        plain_char: bool,
    ) -> PResult<Ty> {
        let mut t = base;
        let mut plain_char = plain_char;
        let ptrs = if skip_leaf_ptr && d.inner.is_none() {
            d.ptrs.saturating_sub(1)
        } else {
            d.ptrs
        };
        // Whether `t` is a pointer to a character type (`char *`, `const unsigned char *`, a
        // typedef of one), recorded in a function type that returns it
        // (`FunctionDecl::returns_c_string`).
        let mut c_string = (ptrs == 1 && is_char(&t)) || (ptrs == 0 && base_c_string);
        // This level leaves the type as it is: an inner declarator still applies to `base`.
        let inner_c_string = ptrs == 0 && d.suffixes.is_empty() && base_c_string;
        for _ in 0..ptrs {
            t = self.pointer(t, std::mem::take(&mut plain_char));
        }
        for s in d.suffixes.iter().rev() {
            plain_char = false;
            let returns_c_string = std::mem::take(&mut c_string);
            t = match s {
                Suffix::Array(n, span) => match self.complete(t) {
                    Ty::Object(l) => {
                        self.check_depth(&l, *span)?;
                        Ty::Object(
                            MemoryLayout::sequence_layout(n.unwrap_or(0), l)
                                .map_err(|e| self.layout_err(*span, e))?,
                        )
                    }
                    Ty::NoLayout(nl) => Ty::NoLayout(Arc::new(NoLayout {
                        spelling: format!(
                            "{}[{}]",
                            nl.spelling,
                            n.map_or(String::new(), |n| n.to_string())
                        ),
                        reason: nl.reason.clone(),
                        size_align: nl
                            .size_align
                            .and_then(|(s, a)| Some((s.checked_mul(n.unwrap_or(0))?, a))),
                    })),
                    Ty::Void => return Err(self.err_at(*span, "array of `void`")),
                    Ty::Incomplete(n) => {
                        return Err(self.err_at(*span, format!("array of incomplete type `{n}`")))
                    }
                    Ty::Func(_) => {
                        return Err(self.err_at(*span, "array of functions (use function pointers)"))
                    }
                },
                Suffix::Vla(e) => return Err((**e).clone()),
                Suffix::Func(f, span) => match t {
                    Ty::Object(MemoryLayout::Sequence(_)) => {
                        return Err(self.err_at(*span, "a function cannot return an array"))
                    }
                    Ty::Func(_) => {
                        return Err(self.err_at(*span, "a function cannot return a function"))
                    }
                    ret => Ty::Func(Arc::new(FnTy {
                        ret,
                        returns_c_string,
                        params: f.params.clone(),
                        param_c_strings: f.param_c_strings.clone(),
                        callbacks: f.callbacks.clone(),
                        variadic: f.variadic,
                    })),
                },
            };
        }
        if let Some(inner) = &d.inner {
            t = self.apply_ex(t, inner, skip_leaf_ptr, inner_c_string, plain_char)?;
        }
        Ok(t)
    }

    /// A pointer to `pointee`: a plain address, or, in a set made with
    /// `Declarations::with_pointer_targets`, one carrying its pointee as target (C's rules:
    /// a complete object type is a [`PointerTarget::Layout`], plain `char` a
    /// [`PointerTarget::CString`], the struct or union being defined around the pointer a
    /// [`PointerTarget::Enclosing`]; `void`, functions, incomplete types, types without a
    /// layout and layouts too deep to be a target give a plain address).
    pub(super) fn pointer(&self, pointee: Ty, plain_char: bool) -> Ty {
        if !self.st.pointer_targets {
            return Ty::Object(ValueLayout::ADDRESS.into());
        }
        let target = match self.complete(pointee) {
            Ty::Object(MemoryLayout::Value(v))
                if plain_char && matches!(v.kind(), ScalarKind::I8 | ScalarKind::U8) =>
            {
                Some(PointerTarget::CString)
            }
            Ty::Object(l) if l.depth() < MAX_TARGET_DEPTH => Some(PointerTarget::Layout(l)),
            Ty::Incomplete(full) if self.defining.contains(&full) => full
                .split_whitespace()
                .last()
                .map(|tag| PointerTarget::Enclosing(tag.into())),
            _ => None,
        };
        let pointer = match target {
            Some(t) => {
                // SAFETY: the caller of `Declarations::with_pointer_targets` (which sets
                // `pointer_targets`) made the promise of `ValueLayout::with_target` for every
                // pointer these declarations describe.
                let with = unsafe { ValueLayout::ADDRESS.with_target(t) };
                with.unwrap_or(ValueLayout::ADDRESS)
            }
            None => ValueLayout::ADDRESS,
        };
        Ty::Object(pointer.into())
    }

    /// Layouts nest (arrays of arrays, structs of structs) at most [`MAX_NESTING`] deep, so
    /// that dropping, comparing and printing them cannot overflow the stack. The layout
    /// constructors enforce the same bound; checking here first gives the error a source
    /// position. `depth()` is cached per group, so this is O(1) however much is shared.
    pub(super) fn check_depth(&self, member: &MemoryLayout, span: Span) -> PResult<()> {
        if member.depth() >= MAX_NESTING {
            return Err(self.err_at(
                span,
                format!("type nested more than {MAX_NESTING} levels deep"),
            ));
        }
        Ok(())
    }
}
