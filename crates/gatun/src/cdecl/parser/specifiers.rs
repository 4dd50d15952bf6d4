//! Declaration specifiers (C17 §6.7.1 storage classes, §6.7.2 type specifiers, §6.7.3 type
//! qualifiers, §6.7.4 function specifiers): the builtin scalar types and their combinations,
//! typedef names, and the record and enum specifiers (parsed in `records`); and type names
//! (§6.7.7: specifiers and an abstract declarator).

use std::sync::Arc;

use super::attributes::{Attrs, ATTRIBUTE};
use super::declarators::Declarator;
use super::records::{first_member, union_tag};
use super::{PResult, Parser};
use crate::cdecl::lexer::{Kind, Token};
use crate::cdecl::{FnTy, NoLayout, Span, Ty};
use crate::layout::{BitField, DataModel, MemoryLayout, ValueLayout};

/// Type qualifiers, storage classes and function specifiers: accepted and ignored (`inline`
/// and `static` are noted, for function definitions).
pub(super) const IGNORED: &[&str] = &[
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
    "_Complex",
    "__complex__",
    "__complex",
    "__int128",
    "_Float16",
    "_Float32",
    "_Float64",
    "_Float128",
    "_Float32x",
    "_Float64x",
    "_Float128x",
    "__float128",
    "__float80",
    "__ibm128",
    "__bf16",
];

/// Type keywords gatun does not parse at all.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("_Imaginary", "imaginary types have no gatun layout"),
    ("_Decimal32", "decimal floating types have no gatun layout"),
    ("_Decimal64", "decimal floating types have no gatun layout"),
    ("_Decimal128", "decimal floating types have no gatun layout"),
    ("_Atomic", "atomic types are not supported"),
    ("typeof", "`typeof` is not supported"),
    ("__typeof", "`typeof` is not supported"),
    ("__typeof__", "`typeof` is not supported"),
    ("typeof_unqual", "`typeof` is not supported"),
    ("__auto_type", "`__auto_type` is not supported"),
];

/// Parsed declaration specifiers.
pub(super) struct Spec {
    /// The type the specifiers name.
    pub(super) ty: Ty,
    /// `typedef` was among the specifiers.
    pub(super) typedef: bool,
    /// `inline` or `static` was among the specifiers (a definition's body is then skipped).
    pub(super) inline_or_static: bool,
    /// The function type, when the type is a function-pointer typedef's name.
    pub(super) typedef_fn: Option<Arc<FnTy>>,
    /// For a `transparent_union` type: its first member, which a parameter of the type is
    /// passed as (GCC).
    pub(super) transparent: Option<MemoryLayout>,
    /// The bitfields of the record type named (empty for other types).
    pub(super) bits: Arc<[BitField]>,
    /// The type is an enum without negative values (unsigned in a bitfield, as GCC has it).
    pub(super) enum_unsigned: bool,
    /// The type is a typedef of an array of unknown size (incomplete: no `sizeof`).
    pub(super) incomplete_array: bool,
    /// The type is a typedef of a pointer to a character type (`typedef const char *str;`).
    pub(super) c_string: bool,
    /// The type is plain `char` (neither `signed` nor `unsigned`), or a typedef of it: a
    /// pointer to it is a C string.
    pub(super) plain_char: bool,
    /// The attributes among the specifiers.
    pub(super) attrs: Attrs,
    /// The specifier defined an untagged struct/union (a C11 anonymous member if no
    /// declarator follows inside a record body).
    pub(super) anonymous_record: bool,
    /// Where the specifiers are written.
    pub(super) span: Span,
}

#[derive(Debug, Default)]
/// How many times each builtin type keyword appears among a declaration's specifiers.
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
    complex: u8,
    int128: u8,
    /// `_FloatN`, `__float128`, ...: the keyword.
    ext_float: Option<&'static str>,
}

impl Builtin {
    /// Whether no builtin type keyword was seen.
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
            + self.complex
            + self.int128
            == 0
            && self.ext_float.is_none()
    }

    /// Counts keyword `word` (one of [`BUILTIN`]).
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
            "_Complex" | "__complex__" | "__complex" => &mut self.complex,
            "__int128" => &mut self.int128,
            "_Bool" => &mut self.bool,
            other => {
                let kw = BUILTIN.iter().copied().find(|k| *k == other);
                if self.ext_float.is_some() {
                    // Two extended float keywords: make `valid` fail.
                    self.float = self.float.saturating_add(2);
                }
                self.ext_float = kw.or(Some("_Float128"));
                return;
            }
        };
        *slot = slot.saturating_add(1);
    }

    /// Whether the keywords name plain `char` (C17 §6.2.5 ¶15: a type of its own, distinct
    /// from `signed char` and `unsigned char`).
    fn is_plain_char(&self) -> bool {
        self.char > 0 && self.signed + self.unsigned + self.complex == 0
    }

    /// Whether the keywords seen form a valid combination (C17 §6.7.2 ¶2).
    fn valid(&self) -> bool {
        let sign = self.signed + self.unsigned;
        let ext = u8::from(self.ext_float.is_some());
        let kinds = self.void
            + self.char
            + self.short
            + self.float
            + self.double
            + self.bool
            + self.int128
            + ext;
        if sign > 1 || self.int > 1 || self.long > 2 || kinds > 1 || self.complex > 1 {
            return false;
        }
        if self.void + self.bool + self.float + ext > 0 {
            return self.long + self.int + sign == 0 && self.void + self.bool + self.complex <= 1;
        }
        if self.double > 0 {
            return self.int + sign == 0 && self.long <= 1;
        }
        if self.int128 > 0 {
            return self.int + self.long == 0;
        }
        if self.char > 0 {
            return self.int + self.long == 0;
        }
        if self.short > 0 {
            return self.long == 0;
        }
        true
    }

    /// The type these specifiers name.
    fn ty(&self) -> Result<Ty, crate::Error> {
        if self.void > 0 {
            return Ok(Ty::Void);
        }
        let sign = if self.unsigned > 0 {
            "unsigned "
        } else if self.signed > 0 {
            "signed "
        } else {
            ""
        };
        let real = if self.bool > 0 {
            "_Bool"
        } else if self.float > 0 {
            "float"
        } else if let Some(f) = self.ext_float {
            f
        } else if self.double > 0 {
            if self.long > 0 {
                "long double"
            } else {
                "double"
            }
        } else if self.int128 > 0 {
            "__int128"
        } else if self.char > 0 {
            "char"
        } else if self.short > 0 {
            "short"
        } else if self.long == 2 {
            "long long"
        } else if self.long == 1 {
            "long"
        } else if self.complex > 0 && sign.is_empty() {
            // `_Complex` alone is `_Complex double` (GNU).
            "double"
        } else {
            "int"
        };
        let real = format!("{sign}{real}");
        let scalar = scalar_ty(&real)?;
        if self.complex == 0 {
            return Ok(scalar);
        }
        let (size, align) = match &scalar {
            Ty::Object(l) => (l.byte_size(), l.byte_alignment()),
            Ty::NoLayout(n) => n.size_align.unwrap_or((16, 16)),
            _ => (8, 8),
        };
        Ok(Ty::NoLayout(Arc::new(NoLayout {
            spelling: format!("_Complex {real}"),
            reason: "complex types have no gatun layout (the linker cannot pass them)".into(),
            size_align: size.checked_mul(2).map(|s| (s, align)),
        })))
    }
}

/// The alignment of this build's target for its 16-byte scalars without a gatun layout
/// (`long double`, `__int128`, `_Float128`): 8 on s390x (s390x ELF ABI Supplement,
/// "Fundamental Types": no type is aligned to more than 8 bytes), their size elsewhere.
const WIDE_SCALAR_ALIGN: usize = if cfg!(target_arch = "s390x") { 8 } else { 16 };

/// The type of a builtin scalar spelling (`"unsigned long"`, `"_Float64"`, `"long double"`).
pub(in crate::cdecl) fn scalar_ty(name: &str) -> Result<Ty, crate::Error> {
    let no_layout = |reason: &str, size: usize| {
        Ok(Ty::NoLayout(Arc::new(NoLayout {
            spelling: name.to_string(),
            reason: reason.to_string(),
            size_align: Some((size, size.min(WIDE_SCALAR_ALIGN))),
        })))
    };
    let base = name.rsplit(' ').next().unwrap_or(name);
    match base {
        "_Float32" => return Ok(Ty::Object(ValueLayout::F32.into())),
        "_Float64" | "_Float32x" => return Ok(Ty::Object(ValueLayout::F64.into())),
        "__int128" => return no_layout("128-bit integers have no gatun scalar", 16),
        "_Float16" | "__bf16" => return no_layout("16-bit floating types have no gatun scalar", 2),
        "_Float128" | "__float128" | "_Float128x" | "__ibm128" => {
            return no_layout("128-bit floating types have no gatun scalar", 16)
        }
        "_Float64x" | "__float80" => {
            return no_layout("80-bit x87 extended precision has no gatun scalar", 16)
        }
        "double" if name == "long double" && DataModel::HOST.long_double_is_double => {
            return Ok(Ty::Object(ValueLayout::F64.into()))
        }
        "double" if name == "long double" => {
            return no_layout(
                "`long double` (80-bit x87 extended precision on x86-64, 128-bit on AArch64, \
                 RISC-V 64, s390x and PPC64LE) has no gatun scalar; the linker cannot pass it",
                16,
            )
        }
        _ => {}
    }
    DataModel::HOST
        .layout(name)
        .map(|v| Ty::Object(MemoryLayout::Value(v)))
}

/// The `__builtin_va_list` type of this build's target: an array of one 24-byte record
/// (alignment 8) on x86-64 System V, a 32-byte record (alignment 8) on AAPCS64 Linux, a
/// `char *` on Apple arm64 and on 64-bit Windows; its size is unknown elsewhere.
pub(in crate::cdecl) fn va_list() -> NoLayout {
    NoLayout {
        spelling: "__builtin_va_list".into(),
        reason: "a `va_list` cannot be built or passed by gatun: declare the function with `...` \
                 and pass the variadic arguments directly"
            .into(),
        size_align: crate::abi::va_list_size_align(),
    }
}

impl Parser<'_, '_> {
    /// Whether `t` can start a type name or declaration specifiers.
    pub(super) fn is_type_start(&self, t: Token) -> bool {
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

    /// Declaration specifiers (C17 §6.7.1-§6.7.5) and the attributes among them.
    pub(super) fn specifiers(&mut self) -> PResult<Spec> {
        let start = self.peek();
        let mut b = Builtin::default();
        let mut ty: Option<Ty> = None;
        let mut typedef = false;
        let mut inline_or_static = false;
        let mut typedef_fn = None;
        let mut transparent = None;
        let mut bits: Arc<[BitField]> = Arc::from(Vec::new());
        let mut enum_unsigned = false;
        let mut incomplete_array = false;
        let mut c_string = false;
        let mut plain_char = false;
        let mut attrs = Attrs::default();
        let mut anonymous_record = false;
        loop {
            let t = self.peek();
            if t.kind != Kind::Ident {
                break;
            }
            let w = self.text(t);
            if IGNORED.contains(&w) {
                inline_or_static |= matches!(w, "static" | "inline" | "__inline" | "__inline__");
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
                    aligned: Some(a),
                    ..Attrs::default()
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
                self.last_bits = Arc::from(Vec::new());
                self.last_enum_unsigned = false;
                let (tt, anon, transparent_union) = self.tag_spec()?;
                anonymous_record = anon;
                enum_unsigned = w == "enum" && self.last_enum_unsigned;
                bits = if self.last_bits.is_empty() {
                    match tt.name_of_record() {
                        Some(full) => self.st.bitfields.get(&full).cloned().unwrap_or(bits),
                        None => bits,
                    }
                } else {
                    self.last_bits.clone()
                };
                if transparent_union {
                    transparent = first_member(&tt);
                } else if let Some(tag) = union_tag(&tt) {
                    transparent = self.st.transparent.get(&format!("union {tag}")).cloned();
                }
                ty = Some(tt);
            } else if ty.is_none() && b.is_empty() {
                match self.st.typedefs.get(w) {
                    Some(tt) => {
                        ty = Some(tt.clone());
                        typedef_fn = self.st.fn_typedefs.get(w).cloned();
                        transparent = self.st.transparent.get(w).cloned();
                        if let Some(b) = self.st.bitfields.get(w) {
                            bits = b.clone();
                        }
                        enum_unsigned = self.st.unsigned_enums.contains(w);
                        incomplete_array = self.st.incomplete_arrays.contains(w);
                        c_string = self.st.c_string_typedefs.contains(w);
                        plain_char = self.st.char_typedefs.contains(w);
                        self.bump();
                    }
                    None => break,
                }
            } else {
                break;
            }
        }
        let span = self.span_from(start);
        plain_char |= ty.is_none() && b.is_plain_char();
        let ty = match ty {
            Some(t) => t,
            None if !b.is_empty() => b.ty().map_err(|e| self.layout_err(span, e))?,
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
            inline_or_static,
            typedef_fn,
            transparent,
            bits,
            enum_unsigned,
            incomplete_array,
            c_string,
            plain_char,
            attrs,
            anonymous_record,
            span,
        })
    }

    /// A type name: specifiers and an abstract declarator (C11 §6.7.7).
    pub(super) fn type_name(&mut self) -> PResult<Ty> {
        let (base, d, plain_char) = self.type_name_parts()?;
        self.apply(base, &d, plain_char)
    }

    /// A type name, and what it points to when its declarator makes it a pointer (`T *`,
    /// `int (*)[4]`; `None` for other types, pointer typedefs included), for casts in constant
    /// expressions.
    pub(super) fn type_name_and_target(&mut self) -> PResult<(Ty, Option<Ty>)> {
        let (base, d, plain_char) = self.type_name_parts()?;
        let target = if d.is_pointer() {
            Some(self.pointer_target(base.clone(), &d)?)
        } else {
            None
        };
        Ok((self.apply(base, &d, plain_char)?, target))
    }

    /// A type name's specifiers' type, its abstract declarator, and whether the specifiers
    /// name plain `char` (see [`Parser::apply`]).
    fn type_name_parts(&mut self) -> PResult<(Ty, Declarator, bool)> {
        let spec = self.specifiers()?;
        if spec.typedef {
            return Err(self.err_at(spec.span, "`typedef` is not allowed in a type name"));
        }
        let d = self.declarator_in(false)?;
        if let Some((n, span)) = d.name() {
            return Err(self.err_at(*span, format!("unexpected name `{n}` in a type name")));
        }
        Ok((spec.ty, d, spec.plain_char))
    }
}
