//! The recursive-descent parser for C declarations (C11 §6.7, the declaration subset, plus
//! the GNU extensions headers use: `__attribute__`, `__asm__`, `__extension__`, `#pragma pack`).
//!
//! Invariants: every recursive entry point (declarators, tag bodies, parameter lists, unary
//! constant expressions) goes through [`Parser::enter`], so nesting is bounded by
//! [`MAX_NESTING`] and no input can overflow the stack; all arithmetic on sizes and constants
//! is checked; token text is read with `str::get`, never by unchecked slicing.

use std::sync::Arc;

use super::lexer::{tokenize, Kind, Token};
use super::{
    enum_layout, CdeclError, Declared, FnTy, FunctionDecl, Span, State, Tag, TagKind, Ty,
    MAX_NESTING,
};
use crate::layout::{DataModel, MemoryLayout, ValueLayout};
use crate::linker::FunctionDescriptor;

type PResult<T> = Result<T, CdeclError>;

/// Type qualifiers, storage classes and function specifiers: accepted and ignored.
const IGNORED: &[&str] = &[
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "__restrict__",
    "__const",
    "__const__",
    "__volatile",
    "__volatile__",
    "extern",
    "static",
    "inline",
    "__inline",
    "__inline__",
    "register",
    "auto",
    "_Noreturn",
    "__extension__",
    "_Thread_local",
    "thread_local",
    "__thread",
    "_Nullable",
    "_Nonnull",
    "_Null_unspecified",
    "__cdecl",
];

/// Builtin type-specifier keywords.
const BUILTIN: &[&str] = &[
    "void",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "__signed",
    "__signed__",
    "unsigned",
    "_Bool",
];

/// Type keywords gatun has no layout for.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "_Complex",
        "complex types have no gatun layout (the linker rejects them too)",
    ),
    (
        "__complex__",
        "complex types have no gatun layout (the linker rejects them too)",
    ),
    ("_Imaginary", "imaginary types have no gatun layout"),
    (
        "__int128",
        "128-bit integers have no gatun layout (the linker rejects them too)",
    ),
    (
        "__int128_t",
        "128-bit integers have no gatun layout (the linker rejects them too)",
    ),
    (
        "__uint128_t",
        "128-bit integers have no gatun layout (the linker rejects them too)",
    ),
    ("_Float16", "extended floating types have no gatun layout"),
    ("_Float128", "extended floating types have no gatun layout"),
    ("__float128", "extended floating types have no gatun layout"),
    ("__float80", "extended floating types have no gatun layout"),
    ("__bf16", "extended floating types have no gatun layout"),
    ("_Decimal32", "decimal floating types have no gatun layout"),
    ("_Decimal64", "decimal floating types have no gatun layout"),
    ("_Decimal128", "decimal floating types have no gatun layout"),
    ("_Atomic", "atomic types are not supported"),
    ("typeof", "`typeof` is not supported"),
    ("__typeof", "`typeof` is not supported"),
    ("__typeof__", "`typeof` is not supported"),
    ("__auto_type", "`__auto_type` is not supported"),
    (
        "__builtin_va_list",
        "`va_list` is not supported: pass variadic arguments with `...`",
    ),
    (
        "va_list",
        "`va_list` is not supported: pass variadic arguments with `...`",
    ),
];

const ATTRIBUTE: &[&str] = &[
    "__attribute__",
    "__attribute",
    "__asm__",
    "__asm",
    "asm",
    "__declspec",
];

/// The largest alignment `__attribute__((aligned))` without an argument gives (GCC's
/// `__BIGGEST_ALIGNMENT__` on x86-64 and AArch64).
const BIGGEST_ALIGNMENT: usize = 16;

#[derive(Debug, Clone, Copy, Default)]
struct Attrs {
    packed: bool,
    aligned: Option<usize>,
}

impl Attrs {
    fn merge(&mut self, other: Attrs) {
        self.packed |= other.packed;
        if let Some(a) = other.aligned {
            self.aligned = Some(self.aligned.map_or(a, |b| b.max(a)));
        }
    }
}

/// Parsed declaration specifiers.
struct Spec {
    ty: Ty,
    typedef: bool,
    attrs: Attrs,
    /// The specifier defined an untagged struct/union (a C11 anonymous member if no
    /// declarator follows inside a record body).
    anonymous_record: bool,
    span: Span,
}

#[derive(Debug, Default)]
struct Builtin {
    void: u8,
    char: u8,
    short: u8,
    int: u8,
    long: u8,
    float: u8,
    double: u8,
    signed: u8,
    unsigned: u8,
    bool: u8,
}

impl Builtin {
    fn is_empty(&self) -> bool {
        self.void
            + self.char
            + self.short
            + self.int
            + self.long
            + self.float
            + self.double
            + self.signed
            + self.unsigned
            + self.bool
            == 0
    }

    fn add(&mut self, word: &str) {
        let slot = match word {
            "void" => &mut self.void,
            "char" => &mut self.char,
            "short" => &mut self.short,
            "int" => &mut self.int,
            "long" => &mut self.long,
            "float" => &mut self.float,
            "double" => &mut self.double,
            "signed" | "__signed" | "__signed__" => &mut self.signed,
            "unsigned" => &mut self.unsigned,
            _ => &mut self.bool,
        };
        *slot = slot.saturating_add(1);
    }

    fn valid(&self) -> bool {
        let sign = self.signed + self.unsigned;
        let kinds = self.void + self.char + self.short + self.float + self.double + self.bool;
        if sign > 1 || self.int > 1 || self.long > 2 || kinds > 1 {
            return false;
        }
        if self.void + self.bool + self.float > 0 {
            return self.long + self.int + sign == 0;
        }
        if self.double > 0 {
            return self.int + sign == 0 && self.long <= 1;
        }
        if self.char > 0 {
            return self.int + self.long == 0;
        }
        if self.short > 0 {
            return self.long == 0;
        }
        true
    }

    /// The C spelling [`DataModel::layout`] understands, or `None` for `void`.
    fn name(&self) -> Option<String> {
        if self.void > 0 {
            return None;
        }
        let sign = if self.unsigned > 0 {
            "unsigned "
        } else if self.signed > 0 {
            "signed "
        } else {
            ""
        };
        let base = if self.bool > 0 {
            "_Bool"
        } else if self.float > 0 {
            "float"
        } else if self.double > 0 {
            if self.long > 0 {
                "long double"
            } else {
                "double"
            }
        } else if self.char > 0 {
            "char"
        } else if self.short > 0 {
            "short"
        } else if self.long == 2 {
            "long long"
        } else if self.long == 1 {
            "long"
        } else {
            "int"
        };
        Some(format!("{sign}{base}"))
    }
}

#[derive(Debug)]
enum Suffix {
    Array(Option<usize>, Span),
    Func(FnTy, Span),
}

#[derive(Debug, Default)]
struct Declarator {
    name: Option<(String, Span)>,
    ptrs: usize,
    inner: Option<Box<Declarator>>,
    suffixes: Vec<Suffix>,
}

impl Declarator {
    fn name(&self) -> Option<&(String, Span)> {
        match &self.name {
            Some(n) => Some(n),
            None => self.inner.as_ref().and_then(|d| d.name()),
        }
    }

    /// `T name[]`: the outermost derivation is an array of unknown size.
    fn is_flexible(&self) -> bool {
        match &self.inner {
            Some(inner) => inner.ptrs == 0 && inner.suffixes.is_empty() && inner.is_flexible(),
            None => self.ptrs == 0 && matches!(self.suffixes.first(), Some(Suffix::Array(None, _))),
        }
    }
}

struct Member {
    layout: MemoryLayout,
    attrs: Attrs,
    flexible: Option<Span>,
}

/// One parse of one source over a [`State`].
pub(super) struct Parser<'s, 'st> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
    st: &'st mut State,
    depth: usize,
    declared: Vec<Declared>,
}

impl<'s, 'st> Parser<'s, 'st> {
    pub(super) fn new(src: &'s str, st: &'st mut State) -> PResult<Self> {
        let toks = tokenize(src, 0, src.len())?;
        Ok(Parser {
            src,
            toks,
            pos: 0,
            st,
            depth: 0,
            declared: Vec::new(),
        })
    }

    // ---- token helpers ----

    fn peek(&self) -> Token {
        self.peek_at(0)
    }

    fn peek_at(&self, n: usize) -> Token {
        let i = self
            .pos
            .saturating_add(n)
            .min(self.toks.len().saturating_sub(1));
        self.toks.get(i).copied().unwrap_or(Token {
            kind: Kind::Eof,
            span: Span::new(self.src.len(), self.src.len()),
        })
    }

    fn bump(&mut self) -> Token {
        let t = self.peek();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn text(&self, t: Token) -> &'s str {
        self.src.get(t.span.start..t.span.end).unwrap_or("")
    }

    fn at_eof(&self) -> bool {
        self.peek().kind == Kind::Eof
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek().kind, Kind::Punct(q) if q == p)
    }

    fn is_word(&self, t: Token, words: &[&str]) -> bool {
        t.kind == Kind::Ident && words.contains(&self.text(t))
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn describe(&self, t: Token) -> String {
        match t.kind {
            Kind::Eof => "end of input".into(),
            Kind::Directive => "a preprocessor line".into(),
            _ => {
                let text = self.text(t);
                if text.chars().count() > 24 {
                    let short: String = text.chars().take(24).collect();
                    format!("`{short}...`")
                } else {
                    format!("`{text}`")
                }
            }
        }
    }

    fn err_at(&self, span: Span, message: impl Into<String>) -> CdeclError {
        CdeclError::new(self.src, span, message.into())
    }

    fn err(&self, t: Token, message: impl Into<String>) -> CdeclError {
        self.err_at(t.span, message)
    }

    fn expect_punct(&mut self, p: &str, context: &str) -> PResult<Token> {
        if self.is_punct(p) {
            return Ok(self.bump());
        }
        let t = self.peek();
        Err(self.err(
            t,
            format!("expected `{p}` {context}, found {}", self.describe(t)),
        ))
    }

    fn enter(&mut self, t: Token) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err(
                t,
                format!("declaration nested more than {MAX_NESTING} levels deep"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn span_from(&self, start: Token) -> Span {
        let end = if self.pos > 0 {
            self.toks
                .get(self.pos - 1)
                .map_or(start.span.end, |t| t.span.end)
        } else {
            start.span.end
        };
        Span::new(start.span.start, end.max(start.span.end))
    }

    fn layout_err(&self, span: Span, e: crate::Error) -> CdeclError {
        self.err_at(span, e.to_string())
    }

    // ---- top level ----

    /// Any number of declarations until the end of input.
    pub(super) fn declarations(mut self) -> PResult<Vec<Declared>> {
        while !self.at_eof() {
            self.external(false)?;
        }
        Ok(self.declared)
    }

    /// Declarations followed by one type name (see `Declarations::type_layout`).
    pub(super) fn type_name_source(mut self) -> PResult<MemoryLayout> {
        loop {
            if self.at_eof() {
                let t = self.peek();
                return Err(self.err(t, "expected a C type, found end of input"));
            }
            let start = self.peek();
            if let Some(ty) = self.external(true)? {
                let span = self.span_from(start);
                return self.object_layout(ty, span);
            }
            if self.at_eof() {
                let span = self.span_from(start);
                return match self.declared.last() {
                    Some(Declared::Typedef(name)) => match self.st.typedefs.get(name).cloned() {
                        Some(ty) => self.object_layout(ty, span),
                        None => Err(self.err_at(span, "expected a C type")),
                    },
                    Some(Declared::Tag(tag)) => {
                        let t = tag.split_whitespace().last().unwrap_or("");
                        match self.st.tags.get(t).and_then(|t| t.layout.clone()) {
                            Some(l) => Ok(l),
                            None => Err(self.err_at(span, format!("`{tag}` is incomplete"))),
                        }
                    }
                    Some(Declared::Function(name)) | Some(Declared::Variable(name)) => Err(self
                        .err_at(
                            span,
                            format!("expected a C type, found a declaration of `{name}`"),
                        )),
                    None => Err(self.err_at(span, "expected a C type")),
                };
            }
        }
    }

    fn object_layout(&self, ty: Ty, span: Span) -> PResult<MemoryLayout> {
        match self.complete(ty) {
            Ty::Object(l) => Ok(l),
            Ty::Void => Err(self.err_at(span, "`void` has no layout")),
            Ty::Incomplete(n) => Err(self.err_at(
                span,
                format!("`{n}` is incomplete (declared but never defined), so it has no layout"),
            )),
            Ty::Func(_) => Err(self.err_at(
                span,
                "a function type has no layout (a pointer to it is `void *`)",
            )),
        }
    }

    /// One external declaration. In type mode, returns the type if the item turned out to be
    /// a type name (specifiers and an abstract declarator, then `;` or the end).
    fn external(&mut self, type_mode: bool) -> PResult<Option<Ty>> {
        let t = self.peek();
        if t.kind == Kind::Directive {
            self.directive(t)?;
            return Ok(None);
        }
        if self.eat_punct(";") {
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
            let d = self.declarator()?;
            let mut attrs = spec.attrs;
            self.attributes(&mut attrs)?;
            let ty = self.apply(spec.ty.clone(), &d)?;
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
            if spec.typedef {
                self.define_typedef(name, name_span, ty, attrs)?;
            } else if let Ty::Func(f) = &ty {
                self.define_function(name, name_span, f)?;
            } else {
                self.declared.push(Declared::Variable(name));
            }
            if self.is_punct("=") {
                let t = self.peek();
                return Err(self.err(t, "initializers are not supported: declare, don't define"));
            }
            if self.is_punct("{") {
                let t = self.peek();
                return Err(self.err(
                    t,
                    "function definitions are not supported: write a prototype ending in `;`",
                ));
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

    fn define_typedef(&mut self, name: String, span: Span, ty: Ty, attrs: Attrs) -> PResult<()> {
        let ty = match ty {
            Ty::Object(l) => {
                let mut l = l;
                if let Some(a) = attrs.aligned {
                    let a = a.max(l.byte_alignment());
                    l = l
                        .with_byte_alignment(a)
                        .map_err(|e| self.layout_err(span, e))?;
                }
                if l.is_group() && l.name().is_none() {
                    l = l.with_name(name.as_str());
                }
                Ty::Object(l)
            }
            other => other,
        };
        if let Some(old) = self.st.typedefs.get(&name) {
            if *old != ty {
                return Err(self.err_at(
                    span,
                    format!("conflicting typedef `{name}`: it was declared before as another type"),
                ));
            }
        }
        self.st.typedefs.insert(name.clone(), ty);
        self.declared.push(Declared::Typedef(name));
        Ok(())
    }

    fn define_function(&mut self, name: String, span: Span, f: &FnTy) -> PResult<()> {
        let ret = match self.complete(f.ret.clone()) {
            Ty::Void => None,
            Ty::Object(l) => Some(l),
            Ty::Incomplete(n) => {
                return Err(self.err_at(
                    span,
                    format!("`{name}` returns `{n}` by value, which is incomplete"),
                ))
            }
            Ty::Func(_) => {
                return Err(self.err_at(span, format!("`{name}` cannot return a function")))
            }
        };
        let mut args = Vec::with_capacity(f.params.len());
        for (i, (pname, ty)) in f.params.iter().enumerate() {
            match self.complete(ty.clone()) {
                Ty::Object(l) => args.push(l),
                Ty::Incomplete(n) => {
                    let which = pname
                        .as_ref()
                        .map_or_else(|| format!("#{}", i + 1), |p| format!("`{p}`"));
                    return Err(self.err_at(
                        span,
                        format!("parameter {which} of `{name}` has incomplete type `{n}`"),
                    ));
                }
                Ty::Void | Ty::Func(_) => {
                    return Err(self.err_at(span, format!("invalid parameter type in `{name}`")))
                }
            }
        }
        let descriptor = match ret {
            Some(r) => FunctionDescriptor::of(r, args),
            None => FunctionDescriptor::of_void(args),
        };
        let decl = FunctionDecl {
            name: name.clone(),
            descriptor,
            variadic: f.variadic.then_some(f.params.len()),
            param_names: f.params.iter().map(|(n, _)| n.clone()).collect(),
        };
        if let Some(old) = self.st.functions.get(&name) {
            if old.descriptor != decl.descriptor || old.variadic != decl.variadic {
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
        self.st.functions.insert(name.clone(), decl);
        self.declared.push(Declared::Function(name));
        Ok(())
    }

    /// Resolves an incomplete tag that has been defined since.
    fn complete(&self, ty: Ty) -> Ty {
        if let Ty::Incomplete(n) = &ty {
            let tag = n.split_whitespace().last().unwrap_or("");
            if let Some(Tag {
                layout: Some(l), ..
            }) = self.st.tags.get(tag)
            {
                return Ty::Object(l.clone());
            }
        }
        ty
    }

    // ---- preprocessor lines ----

    fn directive(&mut self, t: Token) -> PResult<()> {
        self.bump();
        let sub = tokenize(self.src, t.span.start + 1, t.span.end)?;
        let saved_toks = std::mem::replace(&mut self.toks, sub);
        let saved_pos = std::mem::replace(&mut self.pos, 0);
        let r = self.directive_body(t);
        self.toks = saved_toks;
        self.pos = saved_pos;
        r
    }

    fn directive_body(&mut self, hash: Token) -> PResult<()> {
        let first = self.peek();
        match first.kind {
            // `#` alone, or a GCC line marker (`# 1 "file.h"`): ignored.
            Kind::Eof | Kind::Int(_) => return Ok(()),
            Kind::Ident if self.text(first) == "pragma" => {}
            _ => {
                let span = Span::new(hash.span.start, first.span.end);
                return Err(self.err_at(
                    span,
                    format!(
                        "preprocessor directive `#{}` is not supported: gatun parses declarations, \
                         not the preprocessor (only `#pragma pack` is understood)",
                        self.text(first)
                    ),
                ));
            }
        }
        self.bump();
        let what = self.peek();
        if !(what.kind == Kind::Ident && self.text(what) == "pack") {
            return Ok(()); // other pragmas (`once`, `GCC visibility`, ...) are ignored
        }
        self.bump();
        self.expect_punct("(", "after `#pragma pack`")?;
        let mut set: Option<Option<usize>> = Some(None); // `pack()` resets
        let w = self.peek();
        if w.kind == Kind::Ident && matches!(self.text(w), "push" | "pop") {
            let push = self.text(w) == "push";
            self.bump();
            set = None;
            if push {
                self.st.pack_stack.push(self.st.pack);
            } else {
                match self.st.pack_stack.pop() {
                    Some(p) => self.st.pack = p,
                    None => return Err(self.err(w, "`#pragma pack(pop)` without a matching push")),
                }
            }
            while self.eat_punct(",") {
                let a = self.peek();
                if a.kind == Kind::Ident {
                    self.bump(); // an identifier label: ignored
                } else {
                    set = Some(Some(self.pack_value()?));
                }
            }
        } else if !self.is_punct(")") {
            set = Some(Some(self.pack_value()?));
        }
        self.expect_punct(")", "to close `#pragma pack(`")?;
        if !self.at_eof() {
            let t = self.peek();
            return Err(self.err(
                t,
                format!("unexpected {} after `#pragma pack(...)`", self.describe(t)),
            ));
        }
        if let Some(p) = set {
            self.st.pack = p;
        }
        Ok(())
    }

    fn pack_value(&mut self) -> PResult<usize> {
        let t = self.peek();
        let v = self.const_expr()?;
        match usize::try_from(v) {
            Ok(n) if n.is_power_of_two() && n <= 16 => Ok(n),
            _ => Err(self.err_at(
                self.span_from(t),
                format!("`#pragma pack` value {v} must be 1, 2, 4, 8 or 16"),
            )),
        }
    }

    // ---- specifiers ----

    fn is_type_start(&self, t: Token) -> bool {
        if t.kind != Kind::Ident {
            return false;
        }
        let w = self.text(t);
        BUILTIN.contains(&w)
            || IGNORED.contains(&w)
            || matches!(w, "struct" | "union" | "enum" | "_Alignas" | "alignas")
            || UNSUPPORTED.iter().any(|(k, _)| *k == w)
            || (self.st.typedefs.contains_key(w) && !self.st.constants.contains_key(w))
    }

    fn specifiers(&mut self) -> PResult<Spec> {
        let start = self.peek();
        let mut b = Builtin::default();
        let mut ty: Option<Ty> = None;
        let mut typedef = false;
        let mut attrs = Attrs::default();
        let mut anonymous_record = false;
        loop {
            let t = self.peek();
            if t.kind != Kind::Ident {
                break;
            }
            let w = self.text(t);
            if IGNORED.contains(&w) {
                self.bump();
            } else if w == "typedef" {
                typedef = true;
                self.bump();
            } else if ATTRIBUTE.contains(&w) {
                self.attributes(&mut attrs)?;
            } else if matches!(w, "_Alignas" | "alignas") {
                self.bump();
                let a = self.alignas()?;
                attrs.merge(Attrs {
                    packed: false,
                    aligned: Some(a),
                });
            } else if BUILTIN.contains(&w) {
                if ty.is_some() {
                    return Err(self.err(
                        t,
                        format!("`{w}` cannot be combined with the type named before it"),
                    ));
                }
                b.add(w);
                if !b.valid() {
                    return Err(self.err(
                        t,
                        format!("`{w}` cannot be combined with the previous type specifiers"),
                    ));
                }
                self.bump();
            } else if let Some((_, why)) = UNSUPPORTED.iter().find(|(k, _)| *k == w) {
                return Err(self.err(t, format!("unsupported type `{w}`: {why}")));
            } else if matches!(w, "struct" | "union" | "enum") {
                if ty.is_some() || !b.is_empty() {
                    return Err(self.err(
                        t,
                        format!("`{w}` cannot be combined with the previous type specifiers"),
                    ));
                }
                let (tt, anon) = self.tag_spec()?;
                anonymous_record = anon;
                ty = Some(tt);
            } else if ty.is_none() && b.is_empty() {
                match self.st.typedefs.get(w) {
                    Some(tt) => {
                        ty = Some(tt.clone());
                        self.bump();
                    }
                    None => break,
                }
            } else {
                break;
            }
        }
        let span = self.span_from(start);
        let ty = match ty {
            Some(t) => t,
            None if !b.is_empty() => match b.name() {
                None => Ty::Void,
                Some(name) => match DataModel::HOST.layout(&name) {
                    Ok(v) => Ty::Object(MemoryLayout::Value(v)),
                    Err(e) => return Err(self.layout_err(span, e)),
                },
            },
            None => {
                let t = self.peek();
                return Err(if t.kind == Kind::Ident {
                    self.err(t, format!("unknown type name `{}`", self.text(t)))
                } else {
                    self.err(t, format!("expected a type, found {}", self.describe(t)))
                });
            }
        };
        Ok(Spec {
            ty,
            typedef,
            attrs,
            anonymous_record,
            span,
        })
    }

    /// `_Alignas ( type-name | constant-expression )`, after the keyword.
    fn alignas(&mut self) -> PResult<usize> {
        let open = self.expect_punct("(", "after `_Alignas`")?;
        let t = self.peek();
        let a = if self.is_type_start(t) {
            let ty = self.type_name()?;
            let span = self.span_from(t);
            self.object_layout(ty, span)?.byte_alignment()
        } else {
            let v = self.const_expr()?;
            match usize::try_from(v) {
                Ok(n) if n.is_power_of_two() => n,
                _ => {
                    return Err(self.err_at(
                        self.span_from(t),
                        format!("alignment {v} is not a power of two"),
                    ))
                }
            }
        };
        self.expect_punct(")", "to close `_Alignas(`")?;
        let _ = open;
        Ok(a)
    }

    /// `__attribute__((...))`, `__asm__(...)` and `__declspec(...)`, any number in a row.
    /// `packed` and `aligned(n)` are recorded; everything else is skipped.
    fn attributes(&mut self, attrs: &mut Attrs) -> PResult<()> {
        loop {
            let t = self.peek();
            if !self.is_word(t, ATTRIBUTE) {
                return Ok(());
            }
            self.bump();
            let w = self.text(t);
            if !w.starts_with("__attribute") {
                self.expect_punct("(", &format!("after `{w}`"))?;
                self.skip_balanced(t)?;
                continue;
            }
            self.expect_punct("(", "after `__attribute__`")?;
            self.expect_punct("(", "after `__attribute__(`")?;
            loop {
                if self.eat_punct(",") {
                    continue;
                }
                if self.is_punct(")") {
                    break;
                }
                let a = self.peek();
                if a.kind != Kind::Ident {
                    return Err(self.err(
                        a,
                        format!("expected an attribute name, found {}", self.describe(a)),
                    ));
                }
                self.bump();
                let name = self.text(a).trim_start_matches("__").trim_end_matches("__");
                match name {
                    "packed" => attrs.packed = true,
                    "aligned" => {
                        let n = if self.eat_punct("(") {
                            let v = self.const_expr()?;
                            self.expect_punct(")", "to close `aligned(`")?;
                            match usize::try_from(v) {
                                Ok(n) if n.is_power_of_two() => n,
                                _ => {
                                    return Err(self.err_at(
                                        self.span_from(a),
                                        format!("alignment {v} is not a power of two"),
                                    ))
                                }
                            }
                        } else {
                            BIGGEST_ALIGNMENT
                        };
                        attrs.merge(Attrs {
                            packed: false,
                            aligned: Some(n),
                        });
                    }
                    _ => {
                        if self.eat_punct("(") {
                            self.skip_balanced(a)?;
                        }
                    }
                }
            }
            self.expect_punct(")", "to close `__attribute__((`")?;
            self.expect_punct(")", "to close `__attribute__(`")?;
        }
    }

    /// Skips tokens up to the `)` matching an already consumed `(` (iteratively).
    fn skip_balanced(&mut self, opener: Token) -> PResult<()> {
        let mut depth = 1usize;
        loop {
            let t = self.bump();
            match t.kind {
                Kind::Eof => {
                    return Err(self.err(
                        opener,
                        format!("unterminated `{}(`: `(` is never closed", self.text(opener)),
                    ))
                }
                Kind::Punct("(") => depth += 1,
                Kind::Punct(")") => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
    }

    // ---- struct / union / enum ----

    /// After `struct`/`union`/`enum`; returns the type and whether it was an untagged
    /// struct/union definition.
    fn tag_spec(&mut self) -> PResult<(Ty, bool)> {
        let kw = self.bump();
        self.enter(kw)?;
        let kind = match self.text(kw) {
            "struct" => TagKind::Struct,
            "union" => TagKind::Union,
            _ => TagKind::Enum,
        };
        let mut attrs = Attrs::default();
        self.attributes(&mut attrs)?;
        let tag_tok = self.peek();
        let tag = if tag_tok.kind == Kind::Ident {
            self.bump();
            Some(self.text(tag_tok).to_string())
        } else {
            None
        };
        if tag.is_none() && !self.is_punct("{") {
            let t = self.peek();
            return Err(self.err(
                t,
                format!(
                    "expected a tag name or `{{` after `{}`, found {}",
                    kind.keyword(),
                    self.describe(t)
                ),
            ));
        }
        if kind == TagKind::Enum {
            let r = self.enum_body(tag_tok, tag)?;
            self.leave();
            return Ok((r, false));
        }
        if let (Some(tag), false) = (&tag, self.is_punct("{")) {
            let ty = self.reference_tag(kind, tag, tag_tok)?;
            self.leave();
            return Ok((ty, false));
        }
        let open = self.peek();
        if let Some(tag) = &tag {
            // Register the tag as incomplete so the body can point to itself.
            self.reference_tag(kind, tag, tag_tok)?;
        }
        let members = self.members(kind, open)?;
        self.attributes(&mut attrs)?;
        let span = self.span_from(kw);
        let mut layout = self.build_record(kind, members, attrs, span)?;
        if let Some(tag) = &tag {
            layout = layout.with_name(tag.as_str());
            self.define_tag(kind, tag, tag_tok, layout.clone())?;
        }
        self.leave();
        Ok((Ty::Object(layout), tag.is_none()))
    }

    fn reference_tag(&mut self, kind: TagKind, tag: &str, tok: Token) -> PResult<Ty> {
        match self.st.tags.get(tag) {
            Some(t) if t.kind != kind => Err(self.err(
                tok,
                format!(
                    "`{tag}` was declared as `{} {tag}`, used here as `{} {tag}`",
                    t.kind.keyword(),
                    kind.keyword()
                ),
            )),
            Some(Tag {
                layout: Some(l), ..
            }) => Ok(Ty::Object(l.clone())),
            Some(_) => Ok(Ty::Incomplete(format!("{} {tag}", kind.keyword()))),
            None => {
                self.st
                    .tags
                    .insert(tag.to_string(), Tag { kind, layout: None });
                Ok(Ty::Incomplete(format!("{} {tag}", kind.keyword())))
            }
        }
    }

    fn define_tag(
        &mut self,
        kind: TagKind,
        tag: &str,
        tok: Token,
        layout: MemoryLayout,
    ) -> PResult<()> {
        let full = format!("{} {tag}", kind.keyword());
        match self.st.tags.get(tag) {
            Some(t) if t.kind != kind => {
                return Err(self.err(
                    tok,
                    format!(
                        "`{tag}` was declared as `{} {tag}` before",
                        t.kind.keyword()
                    ),
                ))
            }
            Some(Tag {
                layout: Some(old), ..
            }) if *old != layout => {
                return Err(self.err(
                    tok,
                    format!(
                    "redefinition of `{full}` with a different layout: {old} before, {layout} now"
                ),
                ))
            }
            _ => {}
        }
        self.st.tags.insert(
            tag.to_string(),
            Tag {
                kind,
                layout: Some(layout.clone()),
            },
        );
        // Typedefs made while the tag was incomplete now name the complete type.
        for ty in self.st.typedefs.values_mut() {
            if matches!(ty, Ty::Incomplete(n) if *n == full) {
                *ty = Ty::Object(layout.clone());
            }
        }
        self.declared.push(Declared::Tag(full));
        Ok(())
    }

    fn members(&mut self, kind: TagKind, open: Token) -> PResult<Vec<Member>> {
        self.bump(); // `{`
        let mut out: Vec<Member> = Vec::new();
        loop {
            let t = self.peek();
            match t.kind {
                Kind::Eof => {
                    return Err(self.err(
                        open,
                        format!(
                            "unterminated `{}` body: this `{{` is never closed",
                            kind.keyword()
                        ),
                    ))
                }
                Kind::Punct("}") => {
                    self.bump();
                    break;
                }
                Kind::Punct(";") => {
                    self.bump();
                    continue;
                }
                Kind::Directive => {
                    return Err(self.err(
                        t,
                        "preprocessor lines inside a struct or union body are not supported",
                    ))
                }
                _ => {}
            }
            let spec = self.specifiers()?;
            if spec.typedef {
                return Err(self.err_at(
                    spec.span,
                    "`typedef` is not allowed inside a struct or union",
                ));
            }
            if self.eat_punct(";") {
                if spec.anonymous_record {
                    if let Ty::Object(l) = spec.ty {
                        out.push(Member {
                            layout: l,
                            attrs: spec.attrs,
                            flexible: None,
                        });
                    }
                }
                continue;
            }
            loop {
                let d = self.declarator()?;
                if self.is_punct(":") {
                    let c = self.peek();
                    return Err(self.err(
                        c,
                        "bitfields are not supported: gatun layouts are byte-granular and \
                         bitfield placement is ABI-specific; declare the containing integer instead",
                    ));
                }
                let mut attrs = spec.attrs;
                self.attributes(&mut attrs)?;
                let Some((name, name_span)) = d.name().cloned() else {
                    let t = self.peek();
                    return Err(self.err(
                        t,
                        format!("expected a member name, found {}", self.describe(t)),
                    ));
                };
                let flexible = d.is_flexible().then_some(name_span);
                let ty = self.apply(spec.ty.clone(), &d)?;
                let layout = match self.complete(ty) {
                    Ty::Object(l) => l.with_name(name.as_str()),
                    Ty::Void => {
                        return Err(self.err_at(name_span, format!("member `{name}` has type `void`")))
                    }
                    Ty::Incomplete(n) => {
                        return Err(self.err_at(
                            name_span,
                            format!("member `{name}` has incomplete type `{n}` (use a pointer)"),
                        ))
                    }
                    Ty::Func(_) => {
                        return Err(self.err_at(
                            name_span,
                            format!(
                                "member `{name}` is a function; declare a function pointer `(*{name})(...)`"
                            ),
                        ))
                    }
                };
                out.push(Member {
                    layout,
                    attrs,
                    flexible,
                });
                if self.eat_punct(",") {
                    continue;
                }
                self.expect_punct(";", "after the member declaration")?;
                break;
            }
        }
        if let Some(pos) = out.iter().position(|m| m.flexible.is_some()) {
            if pos + 1 != out.len() {
                let span = out[pos].flexible.unwrap_or_default();
                return Err(
                    self.err_at(span, "a flexible array member `[]` must be the last member")
                );
            }
        }
        Ok(out)
    }

    fn build_record(
        &self,
        kind: TagKind,
        members: Vec<Member>,
        attrs: Attrs,
        span: Span,
    ) -> PResult<MemoryLayout> {
        // GCC: `aligned` raises a member's alignment and survives `packed`; `#pragma pack`
        // caps everything, explicitly aligned members included.
        let layouts: Vec<MemoryLayout> = members
            .into_iter()
            .map(|m| {
                let natural = m.layout.byte_alignment();
                let a = if attrs.packed || m.attrs.packed {
                    m.attrs.aligned.unwrap_or(1)
                } else {
                    m.attrs.aligned.map_or(natural, |x| x.max(natural))
                };
                m.layout.with_alignment_unchecked(a)
            })
            .collect();
        for l in &layouts {
            self.check_depth(l, span)?;
        }
        let pack = self.st.pack;
        let built = match (kind, pack) {
            (TagKind::Union, _) => MemoryLayout::union_layout(layouts.into_iter().map(|l| {
                let a = pack.map_or(l.byte_alignment(), |p| l.byte_alignment().min(p));
                l.with_alignment_unchecked(a)
            })),
            (_, Some(p)) => MemoryLayout::c_struct_packed(layouts, p),
            (_, None) => MemoryLayout::c_struct(layouts),
        };
        let mut layout = built.map_err(|e| self.layout_err(span, e))?;
        if let Some(a) = attrs.aligned {
            let a = a.max(layout.byte_alignment());
            layout = layout
                .with_byte_alignment(a)
                .map_err(|e| self.layout_err(span, e))?;
        }
        Ok(layout)
    }

    fn enum_body(&mut self, tag_tok: Token, tag: Option<String>) -> PResult<Ty> {
        if let (Some(tag), false) = (&tag, self.is_punct("{")) {
            return match self.st.tags.get(tag) {
                Some(t) if t.kind != TagKind::Enum => Err(self.err(
                    tag_tok,
                    format!("`{tag}` was declared as `{} {tag}`", t.kind.keyword()),
                )),
                Some(Tag {
                    layout: Some(l), ..
                }) => Ok(Ty::Object(l.clone())),
                // A forward-declared enum (GNU): `int`.
                _ => Ok(Ty::Object(ValueLayout::I32.into())),
            };
        }
        let open = self.bump();
        let mut next: i128 = 0;
        let mut min = i128::MAX;
        let mut max = i128::MIN;
        loop {
            let t = self.peek();
            if t.kind == Kind::Eof {
                return Err(self.err(open, "unterminated `enum` body: this `{` is never closed"));
            }
            if self.eat_punct("}") {
                break;
            }
            if t.kind != Kind::Ident {
                return Err(self.err(
                    t,
                    format!("expected an enumerator name, found {}", self.describe(t)),
                ));
            }
            self.bump();
            let name = self.text(t).to_string();
            let mut attrs = Attrs::default();
            self.attributes(&mut attrs)?;
            let value = if self.eat_punct("=") {
                self.const_expr()?
            } else {
                next
            };
            if let Some(&old) = self.st.constants.get(&name) {
                if old != value {
                    return Err(self.err(
                        t,
                        format!("enumerator `{name}` redefined with another value ({old} before, {value} now)"),
                    ));
                }
            }
            if value < i128::from(i64::MIN) || value > i128::from(u64::MAX) {
                return Err(self.err(
                    t,
                    format!("enumerator `{name}` = {value} does not fit in 64 bits"),
                ));
            }
            self.st.constants.insert(name, value);
            min = min.min(value);
            max = max.max(value);
            next = value + 1;
            if !self.eat_punct(",") {
                self.expect_punct("}", "after the enumerator")?;
                break;
            }
        }
        if min > max {
            return Err(self.err(open, "an `enum` needs at least one enumerator"));
        }
        let mut attrs = Attrs::default();
        self.attributes(&mut attrs)?;
        let layout: MemoryLayout = if attrs.packed {
            // GCC: a packed enum takes the smallest integer that holds its values.
            let kind = if min >= -128 && max <= 127 {
                ValueLayout::I8
            } else if min >= 0 && max <= 255 {
                ValueLayout::U8
            } else if min >= -32768 && max <= 32767 {
                ValueLayout::I16
            } else if min >= 0 && max <= 65535 {
                ValueLayout::U16
            } else {
                enum_layout(min, max)
            };
            kind.into()
        } else {
            enum_layout(min, max).into()
        };
        if let Some(tag) = tag {
            self.define_tag(TagKind::Enum, &tag, tag_tok, layout.clone())?;
        }
        Ok(Ty::Object(layout))
    }

    // ---- declarators ----

    fn declarator(&mut self) -> PResult<Declarator> {
        let start = self.peek();
        self.enter(start)?;
        let mut d = Declarator::default();
        loop {
            if self.eat_punct("*") {
                d.ptrs += 1;
                loop {
                    let t = self.peek();
                    if self.is_word(t, IGNORED) {
                        self.bump();
                    } else if self.is_word(t, ATTRIBUTE) {
                        let mut ignored = Attrs::default();
                        self.attributes(&mut ignored)?;
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
                let v = self.const_expr()?;
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
            Kind::Ident => self.is_word(t, ATTRIBUTE) || !self.is_type_start(t),
            _ => false,
        }
    }

    fn params(&mut self, open: Token) -> PResult<FnTy> {
        self.enter(open)?;
        let mut params = Vec::new();
        let mut variadic = false;
        let t = self.peek();
        if self.eat_punct(")") {
            self.leave();
            return Ok(FnTy {
                ret: Ty::Void,
                params,
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
                params,
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
            let d = self.declarator()?;
            let mut attrs = spec.attrs;
            self.attributes(&mut attrs)?;
            let ty = self.apply(spec.ty.clone(), &d)?;
            let name = d.name().map(|(n, _)| n.clone());
            let ty = match ty {
                // C11 §6.7.6.3 ¶7-8: arrays and functions decay to pointers.
                Ty::Object(MemoryLayout::Sequence(_)) | Ty::Func(_) => {
                    Ty::Object(ValueLayout::ADDRESS.into())
                }
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
            params,
            variadic,
        })
    }

    /// Applies a declarator's derivations to the specifiers' type (C11 §6.7.6).
    fn apply(&mut self, base: Ty, d: &Declarator) -> PResult<Ty> {
        let mut t = base;
        for _ in 0..d.ptrs {
            t = Ty::Object(ValueLayout::ADDRESS.into());
        }
        for s in d.suffixes.iter().rev() {
            t = match s {
                Suffix::Array(n, span) => match self.complete(t) {
                    Ty::Object(l) => {
                        self.check_depth(&l, *span)?;
                        Ty::Object(
                            MemoryLayout::sequence_layout(n.unwrap_or(0), l)
                                .map_err(|e| self.layout_err(*span, e))?,
                        )
                    }
                    Ty::Void => return Err(self.err_at(*span, "array of `void`")),
                    Ty::Incomplete(n) => {
                        return Err(self.err_at(*span, format!("array of incomplete type `{n}`")))
                    }
                    Ty::Func(_) => {
                        return Err(self.err_at(*span, "array of functions (use function pointers)"))
                    }
                },
                Suffix::Func(f, span) => match t {
                    Ty::Object(MemoryLayout::Sequence(_)) => {
                        return Err(self.err_at(*span, "a function cannot return an array"))
                    }
                    Ty::Func(_) => {
                        return Err(self.err_at(*span, "a function cannot return a function"))
                    }
                    ret => Ty::Func(Arc::new(FnTy {
                        ret,
                        params: f.params.clone(),
                        variadic: f.variadic,
                    })),
                },
            };
        }
        if let Some(inner) = &d.inner {
            t = self.apply(t, inner)?;
        }
        Ok(t)
    }

    /// Layouts nest (arrays of arrays, structs of structs) at most [`MAX_NESTING`] deep, so
    /// that dropping, comparing and printing them cannot overflow the stack. The layout
    /// constructors enforce the same bound; checking here first gives the error a source
    /// position. `depth()` is cached per group, so this is O(1) however much is shared.
    fn check_depth(&self, member: &MemoryLayout, span: Span) -> PResult<()> {
        if member.depth() >= MAX_NESTING {
            return Err(self.err_at(
                span,
                format!("type nested more than {MAX_NESTING} levels deep"),
            ));
        }
        Ok(())
    }

    /// A type name: specifiers and an abstract declarator (C11 §6.7.7).
    fn type_name(&mut self) -> PResult<Ty> {
        let spec = self.specifiers()?;
        if spec.typedef {
            return Err(self.err_at(spec.span, "`typedef` is not allowed in a type name"));
        }
        let d = self.declarator()?;
        if let Some((n, span)) = d.name() {
            return Err(self.err_at(*span, format!("unexpected name `{n}` in a type name")));
        }
        self.apply(spec.ty, &d)
    }

    // ---- constant expressions (C11 §6.6), evaluated in i128 with overflow checks ----

    fn const_expr(&mut self) -> PResult<i128> {
        let t = self.peek();
        self.enter(t)?;
        let c = self.binary(0)?;
        let r = if self.eat_punct("?") {
            let a = self.const_expr()?;
            self.expect_punct(":", "in the conditional expression")?;
            let b = self.const_expr()?;
            if c != 0 {
                a
            } else {
                b
            }
        } else {
            c
        };
        self.leave();
        Ok(r)
    }

    fn binary(&mut self, min_prec: u8) -> PResult<i128> {
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
            let overflow = || self.err(op, format!("overflow in constant expression at `{p}`"));
            lhs = match p {
                "||" => i128::from(lhs != 0 || rhs != 0),
                "&&" => i128::from(lhs != 0 && rhs != 0),
                "|" => lhs | rhs,
                "^" => lhs ^ rhs,
                "&" => lhs & rhs,
                "==" => i128::from(lhs == rhs),
                "!=" => i128::from(lhs != rhs),
                "<" => i128::from(lhs < rhs),
                ">" => i128::from(lhs > rhs),
                "<=" => i128::from(lhs <= rhs),
                ">=" => i128::from(lhs >= rhs),
                "<<" | ">>" => {
                    let sh = u32::try_from(rhs).ok().filter(|&s| s < 64).ok_or_else(|| {
                        self.err(op, format!("shift count {rhs} out of range 0..64"))
                    })?;
                    if p == "<<" {
                        lhs.checked_mul(1i128 << sh).ok_or_else(overflow)?
                    } else {
                        lhs >> sh
                    }
                }
                "+" => lhs.checked_add(rhs).ok_or_else(overflow)?,
                "-" => lhs.checked_sub(rhs).ok_or_else(overflow)?,
                "*" => lhs.checked_mul(rhs).ok_or_else(overflow)?,
                _ => {
                    if rhs == 0 {
                        return Err(self.err(op, "division by zero in constant expression"));
                    }
                    if p == "/" {
                        lhs.checked_div(rhs).ok_or_else(overflow)?
                    } else {
                        lhs.checked_rem(rhs).ok_or_else(overflow)?
                    }
                }
            };
            if lhs.unsigned_abs() > u128::from(u64::MAX) {
                return Err(overflow());
            }
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<i128> {
        let t = self.peek();
        self.enter(t)?;
        let v = self.unary_inner(t)?;
        self.leave();
        Ok(v)
    }

    fn unary_inner(&mut self, t: Token) -> PResult<i128> {
        match t.kind {
            Kind::Int(v) => {
                self.bump();
                Ok(i128::from(v))
            }
            Kind::Char(v) => {
                self.bump();
                Ok(i128::from(v))
            }
            Kind::Float => Err(self.err(
                t,
                "floating constants are not supported in constant expressions",
            )),
            Kind::Punct("-") => {
                self.bump();
                Ok(-self.unary()?)
            }
            Kind::Punct("+") => {
                self.bump();
                self.unary()
            }
            Kind::Punct("~") => {
                self.bump();
                Ok(!self.unary()?)
            }
            Kind::Punct("!") => {
                self.bump();
                Ok(i128::from(self.unary()? == 0))
            }
            Kind::Punct("(") => {
                self.bump();
                if self.is_type_start(self.peek()) {
                    // A cast: the value is kept (constant expressions here are integers).
                    self.type_name()?;
                    self.expect_punct(")", "to close the cast")?;
                    return self.unary();
                }
                let v = self.const_expr()?;
                self.expect_punct(")", "to close the parenthesis")?;
                Ok(v)
            }
            Kind::Ident => {
                let w = self.text(t);
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
                    let ty = self.type_name()?;
                    let span = self.span_from(start);
                    self.expect_punct(")", &format!("to close `{w}(`"))?;
                    let l = self.object_layout(ty, span)?;
                    let v = if w == "sizeof" {
                        l.byte_size()
                    } else {
                        l.byte_alignment()
                    };
                    return Ok(v as i128);
                }
                match self.st.constants.get(w) {
                    Some(&v) => {
                        self.bump();
                        Ok(v)
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
}
