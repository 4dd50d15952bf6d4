//! External declarations (C17 §6.7, §6.9): a declaration's declarators and what each one
//! defines (a typedef, §6.7.8; a function, recorded as a [`FunctionDecl`]; a variable), the
//! skipping of `static`/`inline` function definitions and `static` objects' initializers, and
//! `_Static_assert` (§6.7.10).

use std::sync::Arc;

use super::attributes::Attrs;
use super::records::first_member;
use super::{complete, PResult, Parser};
use crate::cdecl::lexer::Kind;
use crate::cdecl::{
    same_declared_descriptor, same_declared_ty, Declared, FnTy, FunctionDecl, NoLayout, Span,
    State, Ty,
};
use crate::layout::FunctionDescriptor;

impl Parser<'_, '_> {
    /// One external declaration. In type mode, returns the type if the item turned out to be
    /// a type name (specifiers and an abstract declarator, then `;` or the end).
    pub(super) fn external(&mut self, type_mode: bool) -> PResult<Option<Ty>> {
        let t = self.peek();
        if t.kind == Kind::Directive {
            self.directive(t)?;
            return Ok(None);
        }
        if self.eat_punct(";") {
            return Ok(None);
        }
        if self.is_word(t, &["_Static_assert", "static_assert"]) {
            self.static_assert()?;
            return Ok(None);
        }
        let spec = self.specifiers()?;
        if type_mode && !spec.typedef {
            let ends = self.at_eof() || (self.is_punct(";") && self.peek_at(1).kind == Kind::Eof);
            if ends {
                self.eat_punct(";");
                return Ok(Some(spec.ty));
            }
        }
        if self.eat_punct(";") {
            return Ok(None);
        }
        loop {
            let d = self.declarator_in(true)?;
            let mut attrs = spec.attrs.clone();
            self.attributes(&mut attrs)?;
            let base = self.type_attrs(spec.ty.clone(), &attrs, Some(&d))?;
            let base_for_fn = base.clone();
            let c_string = d.is_c_string(&base, spec.c_string, false);
            let ty = self.apply_spec(base, &d, spec.c_string, spec.plain_char)?;
            let Some((name, name_span)) = d.name().cloned() else {
                if type_mode && !spec.typedef {
                    self.eat_punct(";");
                    if !self.at_eof() {
                        let t = self.peek();
                        return Err(self.err(
                            t,
                            format!("expected the end of the type, found {}", self.describe(t)),
                        ));
                    }
                    return Ok(Some(ty));
                }
                let t = self.peek();
                return Err(self.err(
                    t,
                    format!(
                        "expected a name in this declaration, found {}",
                        self.describe(t)
                    ),
                ));
            };
            if self.is_punct("{") {
                let t = self.peek();
                if matches!(ty, Ty::Func(_)) && spec.inline_or_static && !spec.typedef {
                    // A `static`/`inline` definition (glibc's `static __inline` helpers): its
                    // body is skipped and it is not declared (there may be no symbol); its
                    // name is kept for `Declarations::is_inline_only`.
                    self.bump();
                    self.skip_braces(t)?;
                    self.st.inline_definitions.insert(name);
                    return Ok(None);
                }
                return Err(self.err(
                    t,
                    "function definitions are not supported: write a prototype ending in `;` \
                     (only `static` and `inline` definitions are skipped)",
                ));
            }
            if self.is_punct("=") {
                let t = self.peek();
                if spec.inline_or_static && !spec.typedef && !matches!(ty, Ty::Func(_)) {
                    // A `static` object's definition (kernel headers have a few): it has no
                    // symbol, so it is skipped, initializer and all.
                    self.bump();
                    self.skip_initializer(t)?;
                    if self.eat_punct(",") {
                        continue;
                    }
                    self.expect_punct(";", "after the declaration")?;
                    return Ok(None);
                }
                return Err(self.err(
                    t,
                    "initializers are not supported: declare, don't define (only `static` \
                     definitions are skipped)",
                ));
            }
            if spec.typedef {
                match self.pointee_fn(&base_for_fn, &d, spec.typedef_fn.as_ref()) {
                    Some(f) => {
                        self.st.fn_typedefs.insert(name.clone(), f);
                    }
                    None => {
                        self.st.fn_typedefs.remove(&name);
                    }
                }
                let transparent = match (&spec.transparent, attrs.transparent_union) {
                    (Some(t), _) if !d.derives() => Some(t.clone()),
                    (_, true) if !d.derives() => first_member(&ty),
                    _ => None,
                };
                match transparent {
                    Some(t) => self.st.transparent.insert(name.clone(), t),
                    None => self.st.transparent.remove(&name),
                };
                if spec.bits.is_empty() || d.derives() {
                    self.st.bitfields.remove(&name);
                } else {
                    self.st.bitfields.insert(name.clone(), spec.bits.clone());
                }
                if spec.enum_unsigned && !d.derives() {
                    self.st.unsigned_enums.insert(name.clone());
                } else {
                    self.st.unsigned_enums.remove(&name);
                }
                if c_string {
                    self.st.c_string_typedefs.insert(name.clone());
                } else {
                    self.st.c_string_typedefs.remove(&name);
                }
                if spec.plain_char && !d.derives() {
                    self.st.char_typedefs.insert(name.clone());
                } else {
                    self.st.char_typedefs.remove(&name);
                }
                if d.is_flexible() || (spec.incomplete_array && !d.derives()) {
                    self.st.incomplete_arrays.insert(name.clone());
                } else {
                    self.st.incomplete_arrays.remove(&name);
                }
                self.define_typedef(name, name_span, ty, attrs)?;
            } else if let Ty::Func(f) = &ty {
                self.define_function(name.clone(), name_span, f, attrs.asm_label.clone())?;
                self.st.fn_types.insert(name, f.clone());
            } else {
                self.st.variables.insert(name.clone(), ty);
                self.declared.push(Declared::Variable(name));
            }
            if self.eat_punct(",") {
                continue;
            }
            if type_mode && self.at_eof() {
                return Ok(None);
            }
            self.expect_punct(";", "after the declaration")?;
            return Ok(None);
        }
    }

    /// Defines typedef `name` (written at `span`) as `ty`, with the typedef's `aligned` attribute
    /// applied; a redefinition as another type is an error.
    fn define_typedef(&mut self, name: String, span: Span, ty: Ty, attrs: Attrs) -> PResult<()> {
        let ty = match ty {
            Ty::Object(l) => {
                let mut l = l;
                if let Some(a) = attrs.aligned {
                    // gcc: `aligned` on a typedef sets the alignment — raising it (a 104-byte
                    // struct aligned to 16 stays 104 bytes) or lowering it (the kernel's
                    // `typedef unsigned long __attribute__((aligned(4))) packed_ulong`).
                    l = l.with_alignment_unchecked(a);
                }
                if l.is_group() && l.name().is_none() {
                    l = l.with_name(name.as_str());
                }
                Ty::Object(l)
            }
            // An untagged record without a layout is known by its typedef name.
            Ty::NoLayout(n) if n.spelling.starts_with("anonymous ") => {
                Ty::NoLayout(Arc::new(NoLayout {
                    spelling: name.clone(),
                    ..(*n).clone()
                }))
            }
            other => other,
        };
        // A header's own definition of a predefined name (`FILE`, `size_t`) replaces it.
        if self.st.predefined.remove(&name) {
            self.st.typedefs.remove(&name);
        }
        if let Some(old) = self.st.typedefs.get(&name) {
            // Pointer targets aside: a pointee may have been completed in between.
            if !same_declared_ty(old, &ty)
                && !same_declared_ty(&self.complete(old.clone()), &self.complete(ty.clone()))
            {
                return Err(self.err_at(
                    span,
                    format!("conflicting typedef `{name}`: it was declared before as another type"),
                ));
            }
        }
        if let Ty::Incomplete(tag) = &ty {
            self.st
                .pending_typedefs
                .entry(tag.clone())
                .or_default()
                .push(name.clone());
        }
        self.st.typedefs.insert(name.clone(), ty);
        self.declared.push(Declared::Typedef(name));
        Ok(())
    }

    /// Declares function `name` (written at `span`) of type `f` with symbol `label`; a
    /// redeclaration with another signature is an error.
    fn define_function(
        &mut self,
        name: String,
        span: Span,
        f: &FnTy,
        label: Option<String>,
    ) -> PResult<()> {
        let label = label.or_else(|| self.st.functions.get(&name).map(|o| o.symbol.clone()));
        match self.function_decl(&name, f, label) {
            Ok(mut decl) => {
                if let Some(old) = self.st.functions.get(&name) {
                    // One `char *` spelling is enough (a redeclaration may use a typedef).
                    decl.returns_c_string |= old.returns_c_string;
                    for (new, old) in decl.param_c_strings.iter_mut().zip(&old.param_c_strings) {
                        *new |= old;
                    }
                    if !same_declared_descriptor(&old.descriptor, &decl.descriptor)
                        || old.variadic != decl.variadic
                    {
                        return Err(self.err_at(
                            span,
                            format!(
                                "conflicting declaration of `{name}`: {}{} before, {}{} now",
                                old.descriptor,
                                if old.variadic.is_some() {
                                    " (variadic)"
                                } else {
                                    ""
                                },
                                decl.descriptor,
                                if decl.variadic.is_some() {
                                    " (variadic)"
                                } else {
                                    ""
                                },
                            ),
                        ));
                    }
                }
                if self.st.unlinkable.contains_key(&name) {
                    return Err(self.err_at(
                        span,
                        format!(
                            "conflicting declaration of `{name}`: its types differ from before"
                        ),
                    ));
                }
                self.st.functions.insert(name.clone(), decl);
            }
            Err(FnError::Positioned(m)) => return Err(self.err_at(span, m)),
            Err(FnError::NoLayout(e)) => {
                if self.st.functions.contains_key(&name)
                    || self.st.unlinkable.get(&name).is_some_and(|old| *old != e)
                {
                    return Err(self.err_at(
                        span,
                        format!(
                            "conflicting declaration of `{name}`: its types differ from before"
                        ),
                    ));
                }
                self.st.unlinkable.insert(name.clone(), e);
            }
        }
        self.declared.push(Declared::Function(name));
        Ok(())
    }

    /// The [`FunctionDecl`] of a function type (also used for function-pointer typedefs).
    pub(super) fn function_decl(
        &self,
        name: &str,
        f: &FnTy,
        label: Option<String>,
    ) -> Result<FunctionDecl, FnError> {
        function_decl(self.st, name, f, label)
    }

    /// `_Static_assert(expr, "message");` (C11) or `_Static_assert(expr);` (C23): the
    /// expression is evaluated, and a false one is an error.
    pub(super) fn static_assert(&mut self) -> PResult<()> {
        let kw = self.bump();
        self.expect_punct("(", &format!("after `{}`", self.text(kw)))?;
        let start = self.peek();
        let v = self.const_expr()?;
        let span = self.span_from(start);
        let mut message = String::new();
        if self.eat_punct(",") {
            while self.peek().kind == Kind::Str {
                let t = self.bump();
                message.push_str(self.text(t));
            }
        }
        self.expect_punct(")", "to close the static assertion")?;
        self.expect_punct(";", "after the static assertion")?;
        if v == 0 {
            return Err(self.err_at(span, format!("static assertion failed {message}")));
        }
        Ok(())
    }
}

/// Why a function type gives no [`FunctionDecl`].
#[derive(Debug)]
pub(in crate::cdecl) enum FnError {
    /// Not a valid function at all (an error where it is declared).
    Positioned(String),
    /// A parameter or the return type has no layout (an error only when it is linked).
    NoLayout(crate::Error),
}

/// The [`FunctionDecl`] of function type `f` named `name`.
pub(in crate::cdecl) fn function_decl(
    st: &State,
    name: &str,
    f: &FnTy,
    label: Option<String>,
) -> Result<FunctionDecl, FnError> {
    let no_layout = |n: &NoLayout, what: String| {
        FnError::NoLayout(crate::Error::Unsupported {
            type_name: n.spelling.clone(),
            reason: format!(
                "{what} of `{name}` has this type, so `{name}` cannot be linked: {}",
                n.reason
            ),
        })
    };
    let ret = match complete(st, f.ret.clone()) {
        Ty::Void => None,
        Ty::Object(l) => Some(l),
        Ty::Incomplete(n) => {
            return Err(FnError::Positioned(format!(
                "`{name}` returns `{n}` by value, which is incomplete"
            )))
        }
        Ty::Func(_) => {
            return Err(FnError::Positioned(format!(
                "`{name}` cannot return a function"
            )))
        }
        Ty::NoLayout(n) => return Err(no_layout(&n, "the return type".into())),
    };
    let mut args = Vec::with_capacity(f.params.len());
    for (i, (pname, ty)) in f.params.iter().enumerate() {
        let which = || {
            pname
                .as_ref()
                .map_or_else(|| format!("#{}", i + 1), |p| format!("`{p}`"))
        };
        match complete(st, ty.clone()) {
            Ty::Object(l) => args.push(l),
            Ty::Incomplete(n) => {
                return Err(FnError::Positioned(format!(
                    "parameter {} of `{name}` has incomplete type `{n}`",
                    which()
                )));
            }
            Ty::NoLayout(n) => return Err(no_layout(&n, format!("parameter {}", which()))),
            Ty::Void | Ty::Func(_) => {
                return Err(FnError::Positioned(format!(
                    "invalid parameter type in `{name}`"
                )))
            }
        }
    }
    let descriptor = match ret {
        Some(r) => FunctionDescriptor::of(r, args),
        None => FunctionDescriptor::of_void(args),
    };
    Ok(FunctionDecl {
        name: name.to_string(),
        symbol: label.unwrap_or_else(|| name.to_string()),
        descriptor,
        variadic: f.variadic.then_some(f.params.len()),
        param_names: f.params.iter().map(|(n, _)| n.clone()).collect(),
        returns_c_string: f.returns_c_string,
        param_c_strings: f.param_c_strings.clone(),
    })
}
