//! Attributes and alignment specifiers: GNU `__attribute__((...))`, `__declspec(...)`,
//! `__asm__("label")` and C17 `_Alignas` (§6.7.5); which attributes are recorded (`packed`,
//! `aligned`, `mode`, `vector_size`, `transparent_union`), which are harmless and skipped, and
//! which are rejected; and how `mode` and `vector_size` change the type they apply to.

use std::sync::Arc;

use super::declarators::Declarator;
use super::specifiers::scalar_ty;
use super::{PResult, Parser};
use crate::cdecl::lexer::{Kind, Token};
use crate::cdecl::{NoLayout, Span, Ty};
use crate::layout::{MemoryLayout, ValueLayout};

/// The keywords that open an attribute list or an `__asm__` label (see [`Parser::attributes`]).
pub(super) const ATTRIBUTE: &[&str] = &[
    "__attribute__",
    "__attribute",
    "__asm__",
    "__asm",
    "asm",
    "__declspec",
];

/// Attributes that change neither a type's size, alignment or representation nor how a
/// function is called: accepted (with any arguments) and ignored. Names are compared without
/// their `__` prefix and suffix.
const HARMLESS_ATTRIBUTES: &[&str] = &[
    "access",
    "alias",
    "alloc_align",
    "alloc_size",
    "always_inline",
    "artificial",
    "assume_aligned",
    "cold",
    "common",
    "const",
    "constructor",
    "copy",
    "deprecated",
    "designated_init",
    "destructor",
    "error",
    "externally_visible",
    "fallthrough",
    "fd_arg",
    "fd_arg_read",
    "fd_arg_write",
    "flatten",
    "format",
    "format_arg",
    "gnu_inline",
    "hot",
    "ifunc",
    "leaf",
    "malloc",
    "may_alias",
    "no_instrument_function",
    "no_reorder",
    "no_sanitize",
    "no_sanitize_address",
    "no_split_stack",
    "no_stack_protector",
    "nocommon",
    "noclone",
    "noinline",
    "noipa",
    "nonnull",
    "nonstring",
    "noplt",
    "noreturn",
    "nothrow",
    "null_terminated_string_arg",
    "optimize",
    "pure",
    "retain",
    "returns_nonnull",
    "returns_twice",
    "section",
    "sentinel",
    "target",
    "target_clones",
    "tls_model",
    "unavailable",
    "unused",
    "used",
    "visibility",
    "warn_if_not_aligned",
    "warn_unused_result",
    "warning",
    "weak",
    "weakref",
    "zero_call_used_regs",
    "gcc_struct",
    "sysv_abi",
    "cdecl",
    "regparm",
];

/// Attributes that change a type or a calling convention in a way gatun does not model:
/// positioned errors (never a silently wrong layout).
const REJECTED_ATTRIBUTES: &[(&str, &str)] = &[
    (
        "ms_abi",
        "the Microsoft x64 calling convention is not supported by the cdecl parser",
    ),
    ("ms_struct", "the Microsoft struct layout is not supported"),
    (
        "scalar_storage_order",
        "reversed scalar storage order is not supported",
    ),
    ("stdcall", "32-bit calling conventions are not supported"),
    ("fastcall", "32-bit calling conventions are not supported"),
    ("thiscall", "32-bit calling conventions are not supported"),
    ("vectorcall", "the vectorcall convention is not supported"),
    ("interrupt", "interrupt handlers cannot be called"),
    ("naked", "naked functions cannot be called"),
];

/// The largest alignment `__attribute__((aligned))` without an argument gives, and the most a
/// vector type is aligned to: GCC's `__BIGGEST_ALIGNMENT__` for this build's target (16 on
/// x86-64, AArch64, RISC-V 64 and PPC64LE; 8 on s390x, whose ABI aligns no type, vectors
/// included, to more than 8 bytes: s390x ELF ABI Supplement, "Fundamental Types").
const BIGGEST_ALIGNMENT: usize = if cfg!(target_arch = "s390x") { 8 } else { 16 };

/// The largest alignment `aligned(n)` and `_Alignas(n)` may ask for, in bytes: GCC's maximum
/// (2^28, its `MAX_OFILE_ALIGNMENT` for ELF; mingw-w64 gcc reports the same for types).
pub(super) const MAX_ALIGNMENT: usize = 1 << 28;

/// GCC's `mode` attribute argument: the machine mode a scalar type is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// An integer mode of this many bytes (QI 1, HI 2, SI 4, DI 8, TI 16; `word`, `pointer`,
    /// `unwind_word` are DI on 64-bit targets, `byte` is QI).
    Int(usize),
    /// A floating mode of this many bytes (SF 4, DF 8, XF/TF 16).
    Float(usize, &'static str),
}

#[derive(Debug, Clone, Default)]
/// The attributes recorded on a declaration, a declarator or a record (the others are skipped).
pub(super) struct Attrs {
    pub(super) packed: bool,
    pub(super) aligned: Option<usize>,
    /// `mode(...)` and where it was written.
    pub(super) mode: Option<(Mode, Span)>,
    /// `vector_size(N)` (bytes) and where it was written.
    pub(super) vector_size: Option<(usize, Span)>,
    /// `__asm__("label")`: the symbol name.
    pub(super) asm_label: Option<String>,
    /// `transparent_union`: a parameter of this union type is passed as its first member.
    pub(super) transparent_union: bool,
}

impl Attrs {
    /// Adds `other`'s attributes: flags accumulate, the larger alignment wins, later `mode`,
    /// `vector_size` and labels replace earlier ones.
    pub(super) fn merge(&mut self, other: Attrs) {
        self.packed |= other.packed;
        if let Some(a) = other.aligned {
            self.aligned = Some(self.aligned.map_or(a, |b| b.max(a)));
        }
        if other.mode.is_some() {
            self.mode = other.mode;
        }
        if other.vector_size.is_some() {
            self.vector_size = other.vector_size;
        }
        if other.asm_label.is_some() {
            self.asm_label = other.asm_label;
        }
        self.transparent_union |= other.transparent_union;
    }

    /// The first attribute that changes the type it applies to, with its position.
    pub(super) fn type_changing(&self) -> Option<(&'static str, Span)> {
        if let Some((_, s)) = self.mode {
            return Some(("mode", s));
        }
        self.vector_size.map(|(_, s)| ("vector_size", s))
    }
}

impl Parser<'_, '_> {
    /// `_Alignas ( type-name | constant-expression )`, after the keyword.
    pub(super) fn alignas(&mut self) -> PResult<usize> {
        let open = self.expect_punct("(", "after `_Alignas`")?;
        let t = self.peek();
        let a = if self.is_type_start(t) {
            let ty = self.type_name()?;
            let span = self.span_from(t);
            self.object_layout(ty, span)?.byte_alignment()
        } else {
            let v = self.const_expr()?;
            self.alignment_value(v, t)?
        };
        self.expect_punct(")", "to close `_Alignas(`")?;
        let _ = open;
        Ok(a)
    }

    /// Alignment `v` written from token `start` on: a power of two of at most
    /// [`MAX_ALIGNMENT`] bytes.
    fn alignment_value(&self, v: i128, start: Token) -> PResult<usize> {
        match usize::try_from(v) {
            Ok(n) if n.is_power_of_two() && n <= MAX_ALIGNMENT => Ok(n),
            Ok(n) if n.is_power_of_two() => Err(self.err_at(
                self.span_from(start),
                format!("requested alignment {v} exceeds the maximum {MAX_ALIGNMENT}"),
            )),
            _ => Err(self.err_at(
                self.span_from(start),
                format!("alignment {v} is not a power of two"),
            )),
        }
    }

    /// `__attribute__((...))`, `__asm__(...)` and `__declspec(...)`, any number in a row.
    /// `packed`, `aligned(n)`, `mode(m)`, `vector_size(n)` and `__asm__("label")` are recorded;
    /// the attributes in [`HARMLESS_ATTRIBUTES`] are skipped; any other attribute is an error
    /// (it might change a type gatun would then lay out wrongly).
    pub(super) fn attributes(&mut self, attrs: &mut Attrs) -> PResult<()> {
        loop {
            let t = self.peek();
            if !self.is_word(t, ATTRIBUTE) {
                return Ok(());
            }
            self.bump();
            let w = self.text(t);
            if w.starts_with("__asm") || w == "asm" {
                self.expect_punct("(", &format!("after `{w}`"))?;
                attrs.asm_label = Some(self.asm_label(t)?);
                continue;
            }
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
                self.attribute(a, attrs)?;
            }
            self.expect_punct(")", "to close `__attribute__((`")?;
            self.expect_punct(")", "to close `__attribute__(`")?;
        }
    }

    /// One attribute inside `__attribute__((...))`, its name `a` already consumed.
    fn attribute(&mut self, a: Token, attrs: &mut Attrs) -> PResult<()> {
        let full = self.text(a);
        let name = full.strip_prefix("__").unwrap_or(full);
        let name = name.strip_suffix("__").unwrap_or(name);
        match name {
            "packed" => attrs.packed = true,
            "transparent_union" => attrs.transparent_union = true,
            "aligned" => {
                let n = if self.eat_punct("(") {
                    let v = self.const_expr()?;
                    self.expect_punct(")", "to close `aligned(`")?;
                    self.alignment_value(v, a)?
                } else {
                    BIGGEST_ALIGNMENT
                };
                attrs.merge(Attrs {
                    aligned: Some(n),
                    ..Attrs::default()
                });
            }
            "mode" => {
                self.expect_punct("(", "after `mode`")?;
                let m = self.peek();
                if m.kind != Kind::Ident {
                    return Err(self.err(
                        m,
                        format!("expected a machine mode name, found {}", self.describe(m)),
                    ));
                }
                self.bump();
                let mode_text = self.text(m);
                let mode_name = mode_text.strip_prefix("__").unwrap_or(mode_text);
                let mode_name = mode_name.strip_suffix("__").unwrap_or(mode_name);
                let word = std::mem::size_of::<usize>();
                let mode = match mode_name {
                    "QI" | "byte" => Mode::Int(1),
                    "HI" => Mode::Int(2),
                    "SI" => Mode::Int(4),
                    "DI" => Mode::Int(8),
                    "TI" => Mode::Int(16),
                    "word" | "pointer" | "unwind_word" => Mode::Int(word),
                    "SF" => Mode::Float(4, "float"),
                    "DF" => Mode::Float(8, "double"),
                    "XF" => Mode::Float(16, "__float80"),
                    "TF" => Mode::Float(16, "__float128"),
                    _ => {
                        return Err(self.err(
                            m,
                            format!(
                                "unsupported machine mode `{mode_text}`: gatun knows QI, HI, SI, \
                                 DI, TI, word, pointer, byte, SF, DF, XF and TF"
                            ),
                        ))
                    }
                };
                self.expect_punct(")", "to close `mode(`")?;
                attrs.mode = Some((mode, self.span_from(a)));
            }
            "vector_size" => {
                self.expect_punct("(", "after `vector_size`")?;
                let v = self.const_expr()?;
                self.expect_punct(")", "to close `vector_size(`")?;
                let span = self.span_from(a);
                match usize::try_from(v) {
                    Ok(n) if n.is_power_of_two() => attrs.vector_size = Some((n, span)),
                    _ => {
                        return Err(self.err_at(
                            span,
                            format!("vector size {v} is not a positive power of two"),
                        ))
                    }
                }
            }
            _ => {
                if let Some((_, why)) = REJECTED_ATTRIBUTES.iter().find(|(k, _)| *k == name) {
                    return Err(self.err(a, format!("unsupported attribute `{full}`: {why}")));
                }
                if !HARMLESS_ATTRIBUTES.contains(&name) {
                    return Err(self.err(
                        a,
                        format!(
                            "unknown attribute `{full}`: gatun rejects attributes it does not \
                             know, since they may change a type's layout or calling convention"
                        ),
                    ));
                }
                if self.eat_punct("(") {
                    self.skip_balanced(a)?;
                }
            }
        }
        Ok(())
    }

    /// `__asm__("label" ...)` after the `(`: the label (adjacent string literals joined).
    fn asm_label(&mut self, kw: Token) -> PResult<String> {
        let mut label = String::new();
        loop {
            let t = self.peek();
            match t.kind {
                Kind::Str => {
                    self.bump();
                    let text = self.text(t);
                    let inner = text
                        .strip_prefix('"')
                        .and_then(|x| x.strip_suffix('"'))
                        .unwrap_or("");
                    if inner.contains('\\') {
                        return Err(
                            self.err(t, "escape sequences in `__asm__` labels are not supported")
                        );
                    }
                    label.push_str(inner);
                }
                Kind::Punct(")") => {
                    self.bump();
                    break;
                }
                _ => {
                    return Err(self.err(
                        t,
                        format!(
                            "expected a string literal in `{}(...)`, found {}",
                            self.text(kw),
                            self.describe(t)
                        ),
                    ))
                }
            }
        }
        if label.is_empty() {
            return Err(self.err(kw, "empty `__asm__` label"));
        }
        Ok(label)
    }

    /// Applies `mode` and `vector_size` to the base type of a declaration. They apply to the
    /// specifiers' type; on a declarator that derives another type (pointer, array, function)
    /// they are an error.
    pub(super) fn type_attrs(
        &self,
        base: Ty,
        attrs: &Attrs,
        d: Option<&Declarator>,
    ) -> PResult<Ty> {
        let Some((what, span)) = attrs.type_changing() else {
            return Ok(base);
        };
        if d.is_some_and(|d| d.derives()) {
            return Err(self.err_at(
                span,
                format!(
                    "`{what}` on a pointer, array or function declarator is not supported: \
                     apply it to a typedef of the scalar type"
                ),
            ));
        }
        let mut ty = base;
        if let Some((mode, span)) = attrs.mode {
            ty = self.apply_mode(ty, mode, span)?;
        }
        if let Some((n, span)) = attrs.vector_size {
            let (spelling, elem) = match &ty {
                Ty::Object(MemoryLayout::Value(v))
                    if v.kind() != crate::layout::ScalarKind::Pointer =>
                {
                    (v.kind().name().to_string(), v.byte_size())
                }
                Ty::NoLayout(nl) => (nl.spelling.clone(), nl.size_align.map_or(0, |s| s.0)),
                _ => {
                    return Err(self.err_at(
                        span,
                        "`vector_size` applies to integer and floating types only",
                    ))
                }
            };
            if elem == 0 || n % elem != 0 {
                return Err(self.err_at(
                    span,
                    format!("vector size {n} is not a multiple of the element size {elem}"),
                ));
            }
            ty = Ty::NoLayout(Arc::new(NoLayout {
                spelling: format!("{spelling} __attribute__((vector_size({n})))"),
                reason: "vector types are passed in vector registers and have no gatun layout"
                    .into(),
                // gcc aligns a vector to its size, at most `__BIGGEST_ALIGNMENT__` (16 for the
                // baseline x86-64 and AArch64 targets, 8 on s390x; -mavx raises it, which
                // gatun does not model).
                size_align: Some((n, n.min(BIGGEST_ALIGNMENT))),
            }));
        }
        Ok(ty)
    }

    /// `mode(m)` on a scalar type, as GCC applies it: an integer type keeps its signedness and
    /// takes the mode's width; a floating type takes the mode's format.
    fn apply_mode(&self, ty: Ty, mode: Mode, span: Span) -> PResult<Ty> {
        use crate::layout::ScalarKind as K;
        let kind = match &ty {
            Ty::Object(MemoryLayout::Value(v)) => v.kind(),
            _ => {
                return Err(self.err_at(
                    span,
                    "`mode` applies to integer and floating scalar types only",
                ))
            }
        };
        match mode {
            Mode::Int(bytes) => {
                if !kind.is_integral() || matches!(kind, K::Bool | K::Pointer) {
                    return Err(self.err_at(
                        span,
                        format!("integer `mode` on a non-integer type `{}`", kind.name()),
                    ));
                }
                let signed = kind.is_signed();
                let k = match (bytes, signed) {
                    (1, true) => K::I8,
                    (1, false) => K::U8,
                    (2, true) => K::I16,
                    (2, false) => K::U16,
                    (4, true) => K::I32,
                    (4, false) => K::U32,
                    (8, true) => K::I64,
                    (8, false) => K::U64,
                    _ => {
                        let spelling = if signed {
                            "__int128"
                        } else {
                            "unsigned __int128"
                        };
                        return scalar_ty(spelling).map_err(|e| self.layout_err(span, e));
                    }
                };
                Ok(Ty::Object(ValueLayout::new(k).into()))
            }
            Mode::Float(bytes, name) => {
                if !kind.is_float() {
                    return Err(self.err_at(
                        span,
                        format!("floating `mode` on a non-floating type `{}`", kind.name()),
                    ));
                }
                let _ = bytes;
                scalar_ty(name).map_err(|e| self.layout_err(span, e))
            }
        }
    }
}
