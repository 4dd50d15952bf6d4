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
    enum_layout, CdeclError, Declared, FnTy, FunctionDecl, NoLayout, Span, State, Tag, TagKind, Ty,
    MAX_NESTING,
};
use crate::layout::bitfield::{c_record_with_bitfields, RecordField};
use crate::layout::{BitField, DataModel, MemoryLayout, ValueLayout};
use crate::linker::FunctionDescriptor;

type PResult<T> = Result<T, CdeclError>;

/// Type qualifiers, storage classes and function specifiers: accepted and ignored (`inline`
/// and `static` are noted, for function definitions).
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

const ATTRIBUTE: &[&str] = &[
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

/// The largest alignment `__attribute__((aligned))` without an argument gives (GCC's
/// `__BIGGEST_ALIGNMENT__` on x86-64 and AArch64).
const BIGGEST_ALIGNMENT: usize = 16;

/// GCC's `mode` attribute argument: the machine mode a scalar type is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// An integer mode of this many bytes (QI 1, HI 2, SI 4, DI 8, TI 16; `word`, `pointer`,
    /// `unwind_word` are DI on 64-bit targets, `byte` is QI).
    Int(usize),
    /// A floating mode of this many bytes (SF 4, DF 8, XF/TF 16).
    Float(usize, &'static str),
}

#[derive(Debug, Clone, Default)]
struct Attrs {
    packed: bool,
    aligned: Option<usize>,
    /// `mode(...)` and where it was written.
    mode: Option<(Mode, Span)>,
    /// `vector_size(N)` (bytes) and where it was written.
    vector_size: Option<(usize, Span)>,
    /// `__asm__("label")`: the symbol name.
    asm_label: Option<String>,
    /// `transparent_union`: a parameter of this union type is passed as its first member.
    transparent_union: bool,
}

impl Attrs {
    fn merge(&mut self, other: Attrs) {
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
    fn type_changing(&self) -> Option<(&'static str, Span)> {
        if let Some((_, s)) = self.mode {
            return Some(("mode", s));
        }
        self.vector_size.map(|(_, s)| ("vector_size", s))
    }
}

/// Parsed declaration specifiers.
struct Spec {
    ty: Ty,
    typedef: bool,
    /// `inline` or `static` was among the specifiers (a definition's body is then skipped).
    inline_or_static: bool,
    /// The function type, when the type is a function-pointer typedef's name.
    typedef_fn: Option<Arc<FnTy>>,
    /// For a `transparent_union` type: its first member, which a parameter of the type is
    /// passed as (GCC).
    transparent: Option<MemoryLayout>,
    /// The bitfields of the record type named (empty for other types).
    bits: Arc<[BitField]>,
    /// The type is an enum without negative values (unsigned in a bitfield, as GCC has it).
    enum_unsigned: bool,
    /// The type is a typedef of an array of unknown size (incomplete: no `sizeof`).
    incomplete_array: bool,
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
    complex: u8,
    int128: u8,
    /// `_FloatN`, `__float128`, ...: the keyword.
    ext_float: Option<&'static str>,
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
            + self.complex
            + self.int128
            == 0
            && self.ext_float.is_none()
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

/// The type of a builtin scalar spelling (`"unsigned long"`, `"_Float64"`, `"long double"`).
pub(super) fn scalar_ty(name: &str) -> Result<Ty, crate::Error> {
    let no_layout = |reason: &str, size: usize| {
        Ok(Ty::NoLayout(Arc::new(NoLayout {
            spelling: name.to_string(),
            reason: reason.to_string(),
            size_align: Some((size, size)),
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
                "`long double` (80-bit x87 extended precision on x86-64, 128-bit on AArch64) has \
                 no gatun scalar; the linker cannot pass it",
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
pub(super) fn va_list() -> NoLayout {
    NoLayout {
        spelling: "__builtin_va_list".into(),
        reason: "a `va_list` cannot be built or passed by gatun: declare the function with `...` \
                 and pass the variadic arguments directly"
            .into(),
        size_align: if cfg!(all(target_arch = "x86_64", not(windows))) {
            Some((24, 8))
        } else if cfg!(any(
            all(target_arch = "aarch64", target_vendor = "apple"),
            all(target_arch = "x86_64", windows)
        )) {
            Some((8, 8))
        } else if cfg!(all(target_arch = "aarch64", not(windows))) {
            Some((32, 8))
        } else {
            None
        },
    }
}

#[derive(Debug)]
enum Suffix {
    Array(Option<usize>, Span),
    /// An array whose size is not a constant (a variable-length array, allowed only where it
    /// decays to a pointer: a parameter); the error evaluating the size.
    Vla(Box<CdeclError>),
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

    /// Whether the declarator derives a pointer, array or function type from the specifiers'.
    fn derives(&self) -> bool {
        self.ptrs > 0
            || !self.suffixes.is_empty()
            || self.inner.as_ref().is_some_and(|d| d.derives())
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

    /// `T name[]`, `T *name[]`: the outermost derivation is an array of unknown size.
    fn is_flexible(&self) -> bool {
        matches!(self.outermost(), Some(Some(Suffix::Array(None, _))))
    }
}

struct Member {
    layout: MemoryLayout,
    attrs: Attrs,
    flexible: Option<Span>,
    /// For a bitfield: its name (`None` if unnamed) and width; `layout` is its declared type.
    bits: Option<(Option<String>, u32)>,
    /// The bitfields of an anonymous record member, relative to that member.
    inner_bits: Vec<BitField>,
}

/// A count of the parser's steps on this thread (tokens consumed plus nesting levels
/// entered), so tests can check that the work grows with the input's size.
#[cfg(test)]
pub(super) mod work {
    use std::cell::Cell;

    thread_local! {
        static STEPS: Cell<u64> = const { Cell::new(0) };
    }

    /// Counts one step.
    pub(super) fn count() {
        STEPS.with(|s| s.set(s.get() + 1));
    }

    /// The steps `f` took on this thread.
    pub(in crate::cdecl) fn steps<R>(f: impl FnOnce() -> R) -> (R, u64) {
        let before = STEPS.with(Cell::get);
        let r = f();
        (r, STEPS.with(Cell::get) - before)
    }
}

/// One parse of one source over a [`State`].
pub(super) struct Parser<'s, 'st> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
    st: &'st mut State,
    depth: usize,
    declared: Vec<Declared>,
    /// The bitfields of the record `tag_spec` built last (for the specifiers using it).
    last_bits: Arc<[BitField]>,
    /// Whether the enum `tag_spec` saw last has no negative values.
    last_enum_unsigned: bool,
    /// The declarator being parsed declares a name (not a parameter or type name).
    named_context: bool,
    /// A token position from which [`Parser::skip_to_bracket`] found no closing `]` (it reached
    /// the end of the tokens), or `usize::MAX`. A skip that started earlier and reaches this
    /// position still open (depth at least 1) cannot close either, so it stops there at once:
    /// nested unterminated array sizes are each skipped once, not once per enclosing `[`.
    unclosed_from: usize,
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
            last_bits: Arc::from(Vec::new()),
            last_enum_unsigned: false,
            named_context: false,
            unclosed_from: usize::MAX,
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
        #[cfg(test)]
        work::count();
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
        #[cfg(test)]
        work::count();
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
            Ty::NoLayout(n) => Err(self.layout_err(span, n.error())),
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
            let ty = self.apply(base, &d)?;
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
                    // body is skipped and it is not declared (there may be no symbol).
                    self.bump();
                    self.skip_braces(t)?;
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
            if *old != ty && self.complete(old.clone()) != self.complete(ty.clone()) {
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

    /// Resolves an incomplete tag that has been defined since.
    fn complete(&self, ty: Ty) -> Ty {
        complete(self.st, ty)
    }

    // ---- preprocessor lines ----

    fn directive(&mut self, t: Token) -> PResult<()> {
        self.bump();
        let sub = tokenize(self.src, t.span.start + 1, t.span.end)?;
        let saved_toks = std::mem::replace(&mut self.toks, sub);
        let saved_pos = std::mem::replace(&mut self.pos, 0);
        let saved_unclosed = std::mem::replace(&mut self.unclosed_from, usize::MAX);
        let r = self.directive_body(t);
        self.toks = saved_toks;
        self.pos = saved_pos;
        self.unclosed_from = saved_unclosed;
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
        let mut inline_or_static = false;
        let mut typedef_fn = None;
        let mut transparent = None;
        let mut bits: Arc<[BitField]> = Arc::from(Vec::new());
        let mut enum_unsigned = false;
        let mut incomplete_array = false;
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
    /// `packed`, `aligned(n)`, `mode(m)`, `vector_size(n)` and `__asm__("label")` are recorded;
    /// the attributes in [`HARMLESS_ATTRIBUTES`] are skipped; any other attribute is an error
    /// (it might change a type gatun would then lay out wrongly).
    fn attributes(&mut self, attrs: &mut Attrs) -> PResult<()> {
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
    fn type_attrs(&self, base: Ty, attrs: &Attrs, d: Option<&Declarator>) -> PResult<Ty> {
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
                // baseline x86-64 and AArch64 targets; -mavx raises it, which gatun does not
                // model).
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

    /// Skips a function body: tokens up to the `}` matching the already consumed `{` at
    /// `opener` (iteratively).
    fn skip_braces(&mut self, opener: Token) -> PResult<()> {
        let mut depth = 1usize;
        loop {
            let t = self.bump();
            match t.kind {
                Kind::Eof => {
                    return Err(self.err(
                        opener,
                        "unterminated function body: this `{` is never closed",
                    ))
                }
                Kind::Punct("{") => depth += 1,
                Kind::Punct("}") => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
    }

    /// Skips an initializer after its `=` (at `eq`): tokens up to the `,` or `;` outside
    /// brackets, parentheses and braces (iteratively).
    fn skip_initializer(&mut self, eq: Token) -> PResult<()> {
        let mut depth = 0usize;
        loop {
            let t = self.peek();
            match t.kind {
                Kind::Eof | Kind::Directive => {
                    return Err(self.err(eq, "unterminated initializer: no `;` after it"))
                }
                Kind::Punct("," | ";") if depth == 0 => return Ok(()),
                Kind::Punct("(" | "[" | "{") => depth += 1,
                Kind::Punct(")" | "]" | "}") => {
                    if depth == 0 {
                        return Err(self.err(
                            t,
                            format!("unbalanced {} in an initializer", self.describe(t)),
                        ));
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// `_Static_assert(expr, "message");` (C11) or `_Static_assert(expr);` (C23): the
    /// expression is evaluated, and a false one is an error.
    fn static_assert(&mut self) -> PResult<()> {
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

    /// Skips tokens up to the `]` matching the already consumed `[` at `opener`, over nested
    /// brackets and parentheses (iteratively).
    fn skip_to_bracket(&mut self, opener: Token) -> PResult<()> {
        let start = self.pos;
        let mut depth = 1usize;
        loop {
            // At `unclosed_from` with depth >= 1: the tokens from there never bring the depth
            // below 1 again (a skip from there, starting at depth 1, met no closer), so this
            // `[` is never closed either.
            let unclosed = self.pos == self.unclosed_from;
            let t = if unclosed { self.peek() } else { self.bump() };
            match t.kind {
                // Unclosed from `start` too: remembered, so an enclosing skip stops there.
                _ if unclosed => {
                    self.unclosed_from = start;
                    return Err(
                        self.err(opener, "unterminated array size: this `[` is never closed")
                    );
                }
                Kind::Eof => {
                    self.unclosed_from = self.unclosed_from.min(start);
                    return Err(
                        self.err(opener, "unterminated array size: this `[` is never closed")
                    );
                }
                Kind::Punct("[" | "(") => depth += 1,
                Kind::Punct("]" | ")") => {
                    depth -= 1;
                    if depth == 0 {
                        return if matches!(t.kind, Kind::Punct("]")) {
                            Ok(())
                        } else {
                            Err(self.err(t, "unbalanced `)` in an array size"))
                        };
                    }
                }
                _ => {}
            }
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
    fn tag_spec(&mut self) -> PResult<(Ty, bool, bool)> {
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
            return Ok((r, false, false));
        }
        if let (Some(tag), false) = (&tag, self.is_punct("{")) {
            let ty = self.reference_tag(kind, tag, tag_tok)?;
            self.leave();
            return Ok((ty, false, false));
        }
        let open = self.peek();
        if let Some(tag) = &tag {
            // Register the tag as incomplete so the body can point to itself.
            self.reference_tag(kind, tag, tag_tok)?;
        }
        let (members, problem) = self.members(kind, open)?;
        self.attributes(&mut attrs)?;
        let span = self.span_from(kw);
        if let Some(reason) = problem {
            // Declared, but without a layout: an error only where one is needed.
            let spelling = match &tag {
                Some(t) => format!("{} {t}", kind.keyword()),
                None => format!("anonymous {}", kind.keyword()),
            };
            let nl = Arc::new(NoLayout {
                spelling,
                reason,
                size_align: None,
            });
            if let Some(tag) = &tag {
                self.define_tag(kind, tag, tag_tok, Err(nl.clone()))?;
            }
            self.leave();
            return Ok((Ty::NoLayout(nl), tag.is_none(), false));
        }
        let transparent = attrs.transparent_union && kind == TagKind::Union;
        let (mut layout, bits) = self.build_record(kind, members, attrs, span)?;
        self.last_bits = bits.clone().into();
        if let Some(tag) = &tag {
            layout = layout.with_name(tag.as_str());
            self.define_tag(kind, tag, tag_tok, Ok(layout.clone()))?;
            let full = format!("{} {tag}", kind.keyword());
            if bits.is_empty() {
                self.st.bitfields.remove(&full);
            } else {
                self.st.bitfields.insert(full, bits.into());
            }
            if transparent {
                if let Some(first) = first_member(&Ty::Object(layout.clone())) {
                    self.st.transparent.insert(format!("union {tag}"), first);
                }
            }
        }
        self.leave();
        Ok((Ty::Object(layout), tag.is_none(), transparent))
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
            Some(Tag {
                no_layout: Some(n), ..
            }) => Ok(Ty::NoLayout(n.clone())),
            Some(_) => Ok(Ty::Incomplete(format!("{} {tag}", kind.keyword()))),
            None => {
                self.st.tags.insert(
                    tag.to_string(),
                    Tag {
                        kind,
                        layout: None,
                        no_layout: None,
                    },
                );
                Ok(Ty::Incomplete(format!("{} {tag}", kind.keyword())))
            }
        }
    }

    fn define_tag(
        &mut self,
        kind: TagKind,
        tag: &str,
        tok: Token,
        def: Result<MemoryLayout, Arc<NoLayout>>,
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
            }) if def.as_ref().ok() != Some(old) => {
                let now = match &def {
                    Ok(l) => l.to_string(),
                    Err(n) => format!("no layout ({})", n.reason),
                };
                return Err(self.err(
                    tok,
                    format!(
                        "redefinition of `{full}` with a different layout: {old} before, {now} now"
                    ),
                ));
            }
            Some(Tag {
                no_layout: Some(old),
                ..
            }) if def.as_ref().err() != Some(old) => {
                return Err(self.err(
                    tok,
                    format!("redefinition of `{full}` with different members"),
                ));
            }
            _ => {}
        }
        let (layout, no_layout, ty) = match def {
            Ok(l) => (Some(l.clone()), None, Ty::Object(l)),
            Err(n) => (None, Some(n.clone()), Ty::NoLayout(n)),
        };
        self.st.tags.insert(
            tag.to_string(),
            Tag {
                kind,
                layout,
                no_layout,
            },
        );
        // Typedefs made while the tag was incomplete now name the complete type.
        if let Some(names) = self.st.pending_typedefs.remove(&full) {
            for name in names {
                if let Some(t) = self.st.typedefs.get_mut(&name) {
                    if matches!(t, Ty::Incomplete(n) if *n == full) {
                        *t = ty.clone();
                    }
                }
            }
        }
        self.declared.push(Declared::Tag(full));
        Ok(())
    }

    /// A record body after its `{`: the members, and, if some member has no layout (or is a
    /// bitfield), why the record has none.
    fn members(&mut self, kind: TagKind, open: Token) -> PResult<(Vec<Member>, Option<String>)> {
        self.bump(); // `{`
        let mut out: Vec<Member> = Vec::new();
        let mut problem: Option<String> = None;
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
            if self.is_word(t, &["_Static_assert", "static_assert"]) {
                self.static_assert()?;
                continue;
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
                    match spec.ty {
                        Ty::Object(l) => out.push(Member {
                            layout: l,
                            attrs: spec.attrs,
                            flexible: None,
                            bits: None,
                            inner_bits: spec.bits.to_vec(),
                        }),
                        Ty::NoLayout(n) => {
                            problem.get_or_insert_with(|| {
                                format!("its anonymous member has no layout: {}", n.reason)
                            });
                        }
                        _ => {}
                    }
                }
                continue;
            }
            loop {
                let d = if self.is_punct(":") {
                    Declarator::default() // an unnamed bitfield
                } else {
                    self.declarator_in(true)?
                };
                if self.is_punct(":") {
                    let colon = self.bump();
                    let mut attrs = spec.attrs.clone();
                    let base = self.type_attrs(spec.ty.clone(), &attrs, Some(&d))?;
                    let wt = self.peek();
                    let width = self.const_expr()?;
                    let width_span = self.span_from(wt);
                    self.attributes(&mut attrs)?;
                    let name = d.name().map(|(n, _)| n.clone());
                    let what = match &name {
                        Some(n) => format!("bitfield `{n}`"),
                        None => "an unnamed bitfield".to_string(),
                    };
                    let kind = match (d.derives(), self.complete(base)) {
                        (false, Ty::Object(MemoryLayout::Value(v)))
                            if !v.kind().is_float()
                                && v.kind() != crate::layout::ScalarKind::Pointer =>
                        {
                            if spec.enum_unsigned && v.kind() == crate::layout::ScalarKind::I32 {
                                Some(ValueLayout::U32)
                            } else {
                                Some(v)
                            }
                        }
                        (false, Ty::NoLayout(n)) => {
                            problem.get_or_insert_with(|| {
                                format!(
                                    "{what} has type `{}`, which has no layout: {}",
                                    n.spelling, n.reason
                                )
                            });
                            None
                        }
                        _ => {
                            return Err(self.err(
                                colon,
                                format!("{what} must have an integer, `_Bool` or enum type"),
                            ))
                        }
                    };
                    if let Some(v) = kind {
                        let bits = v.byte_size() * 8;
                        let w = match u32::try_from(width) {
                            Ok(w) if (w as usize) <= bits && (w > 0 || name.is_none()) => w,
                            _ => {
                                let lowest = u8::from(name.is_some());
                                return Err(self.err_at(
                                    width_span,
                                    format!(
                                        "{what} is {width} bits wide; expected {lowest}..={bits} \
                                         bits for its type `{}`",
                                        v.kind().name()
                                    ),
                                ));
                            }
                        };
                        if attrs.aligned.is_some() {
                            return Err(
                                self.err(colon, format!("`aligned` on {what} is not supported"))
                            );
                        }
                        out.push(Member {
                            layout: MemoryLayout::Value(v),
                            attrs,
                            flexible: None,
                            bits: Some((name, w)),
                            inner_bits: Vec::new(),
                        });
                    }
                    if self.eat_punct(",") {
                        continue;
                    }
                    self.expect_punct(";", "after the member declaration")?;
                    break;
                }
                let mut attrs = spec.attrs.clone();
                self.attributes(&mut attrs)?;
                let Some((name, name_span)) = d.name().cloned() else {
                    let t = self.peek();
                    return Err(self.err(
                        t,
                        format!("expected a member name, found {}", self.describe(t)),
                    ));
                };
                let flexible = d.is_flexible().then_some(name_span);
                let base = self.type_attrs(spec.ty.clone(), &attrs, Some(&d))?;
                let ty = self.apply(base, &d)?;
                let layout = match self.complete(ty) {
                    Ty::Object(l) => Some(l.with_name(name.as_str())),
                    Ty::NoLayout(n) => {
                        problem.get_or_insert_with(|| {
                            format!(
                                "member `{name}` has type `{}`, which has no layout: {}",
                                n.spelling, n.reason
                            )
                        });
                        None
                    }
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
                if let Some(layout) = layout {
                    out.push(Member {
                        layout,
                        attrs,
                        flexible,
                        bits: None,
                        inner_bits: Vec::new(),
                    });
                }
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
        Ok((out, problem))
    }

    /// The record's layout, and its bitfields (with those of anonymous record members).
    fn build_record(
        &self,
        kind: TagKind,
        members: Vec<Member>,
        attrs: Attrs,
        span: Span,
    ) -> PResult<(MemoryLayout, Vec<BitField>)> {
        // GCC: `aligned` raises a member's alignment and survives `packed`; `#pragma pack`
        // caps everything, explicitly aligned members included.
        let pack = self.st.pack;
        let effective = |m: &Member| {
            let natural = m.layout.byte_alignment();
            if attrs.packed || m.attrs.packed {
                m.attrs.aligned.unwrap_or(1)
            } else {
                m.attrs.aligned.map_or(natural, |x| x.max(natural))
            }
        };
        let with_bits = members
            .iter()
            .any(|m| m.bits.is_some() || !m.inner_bits.is_empty());
        let mut layout = if with_bits {
            let fields = members
                .into_iter()
                .map(|m| match m.bits {
                    Some((name, width)) => {
                        let k = match &m.layout {
                            MemoryLayout::Value(v) => v.kind(),
                            _ => crate::layout::ScalarKind::I32,
                        };
                        RecordField::Bits {
                            name: name.map(Arc::from),
                            kind: k,
                            type_alignment: m.layout.byte_alignment(),
                            width,
                            packed: attrs.packed || m.attrs.packed,
                        }
                    }
                    None => {
                        let a = effective(&m);
                        let a = pack.map_or(a, |p| a.min(p));
                        RecordField::Ordinary(m.layout.with_alignment_unchecked(a), m.inner_bits)
                    }
                })
                .collect::<Vec<_>>();
            for f in &fields {
                if let RecordField::Ordinary(l, _) = f {
                    self.check_depth(l, span)?;
                }
            }
            let (layout, bits) = c_record_with_bitfields(fields, kind == TagKind::Union, pack)
                .map_err(|e| self.layout_err(span, e))?;
            return self.record_aligned(layout, &attrs, span).map(|l| (l, bits));
        } else {
            let layouts: Vec<MemoryLayout> = members
                .into_iter()
                .map(|m| {
                    let a = effective(&m);
                    m.layout.with_alignment_unchecked(a)
                })
                .collect();
            for l in &layouts {
                self.check_depth(l, span)?;
            }
            let built = match (kind, pack) {
                (TagKind::Union, _) => MemoryLayout::union_layout(layouts.into_iter().map(|l| {
                    let a = pack.map_or(l.byte_alignment(), |p| l.byte_alignment().min(p));
                    l.with_alignment_unchecked(a)
                })),
                (_, Some(p)) => MemoryLayout::c_struct_packed(layouts, p),
                (_, None) => MemoryLayout::c_struct(layouts),
            };
            built.map_err(|e| self.layout_err(span, e))?
        };
        layout = self.record_aligned(layout, &attrs, span)?;
        Ok((layout, Vec::new()))
    }

    /// `__attribute__((aligned(n)))` on a record: raises its alignment (and pads its size).
    fn record_aligned(
        &self,
        layout: MemoryLayout,
        attrs: &Attrs,
        span: Span,
    ) -> PResult<MemoryLayout> {
        match attrs.aligned {
            Some(a) => {
                let a = a.max(layout.byte_alignment());
                layout
                    .with_byte_alignment(a)
                    .map_err(|e| self.layout_err(span, e))
            }
            None => Ok(layout),
        }
    }

    fn enum_body(&mut self, tag_tok: Token, tag: Option<String>) -> PResult<Ty> {
        if let (Some(tag), false) = (&tag, self.is_punct("{")) {
            self.last_enum_unsigned = self.st.unsigned_enums.contains(&format!("enum {tag}"));
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
        // GCC gives an enum without negative values an unsigned compatible type, which
        // matters for bitfields of it.
        self.last_enum_unsigned = min >= 0;
        if let Some(tag) = tag {
            self.define_tag(TagKind::Enum, &tag, tag_tok, Ok(layout.clone()))?;
            let full = format!("enum {tag}");
            if min >= 0 {
                self.st.unsigned_enums.insert(full);
            } else {
                self.st.unsigned_enums.remove(&full);
            }
        }
        Ok(Ty::Object(layout))
    }

    // ---- declarators ----

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
    fn declarator_in(&mut self, named: bool) -> PResult<Declarator> {
        let saved = std::mem::replace(&mut self.named_context, named);
        let r = self.declarator();
        self.named_context = saved;
        r
    }

    fn params(&mut self, open: Token) -> PResult<FnTy> {
        self.enter(open)?;
        let mut params = Vec::new();
        let mut callbacks = Vec::new();
        let mut variadic = false;
        let t = self.peek();
        if self.eat_punct(")") {
            self.leave();
            return Ok(FnTy {
                ret: Ty::Void,
                returns_c_string: false,
                params,
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
            let ty = match self.apply(base, &d) {
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
            returns_c_string: false,
            params,
            callbacks,
            variadic,
        })
    }

    /// The function type a declarator's pointer points to (`int (*cmp)(const void *, const
    /// void *)`, a function-pointer typedef used without derivation, or a function type that
    /// decays), if it declares a pointer to a function.
    fn pointee_fn(
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
            self.apply_ex(base.clone(), d, true)
        } else {
            self.apply_ex(base.clone(), d, false)
        };
        self.depth = saved_depth;
        match r {
            Ok(Ty::Func(f)) => Some(f),
            _ => None,
        }
    }

    /// Applies a declarator's derivations to the specifiers' type (C11 §6.7.6).
    fn apply(&mut self, base: Ty, d: &Declarator) -> PResult<Ty> {
        self.apply_ex(base, d, false)
    }

    /// [`Parser::apply`]; with `skip_leaf_ptr`, without the innermost declarator's last
    /// pointer (giving what that pointer points to).
    fn apply_ex(&mut self, base: Ty, d: &Declarator, skip_leaf_ptr: bool) -> PResult<Ty> {
        let mut t = base;
        let ptrs = if skip_leaf_ptr && d.inner.is_none() {
            d.ptrs.saturating_sub(1)
        } else {
            d.ptrs
        };
        // Whether `t` is a pointer to a character type (`char *`, `const unsigned char *`),
        // recorded in a function type that returns it (`FunctionDecl::returns_c_string`).
        let mut c_string = ptrs == 1
            && matches!(&t, Ty::Object(MemoryLayout::Value(v))
                if matches!(v.kind(), crate::layout::ScalarKind::I8 | crate::layout::ScalarKind::U8));
        for _ in 0..ptrs {
            t = Ty::Object(ValueLayout::ADDRESS.into());
        }
        for s in d.suffixes.iter().rev() {
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
                        callbacks: f.callbacks.clone(),
                        variadic: f.variadic,
                    })),
                },
            };
        }
        if let Some(inner) = &d.inner {
            t = self.apply_ex(t, inner, skip_leaf_ptr)?;
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
        let d = self.declarator_in(false)?;
        if let Some((n, span)) = d.name() {
            return Err(self.err_at(*span, format!("unexpected name `{n}` in a type name")));
        }
        self.apply(spec.ty, &d)
    }

    // ---- constant expressions (C11 §6.6): typed integers, evaluated with overflow checks ----

    /// An integer constant expression's value.
    fn const_expr(&mut self) -> PResult<i128> {
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

    fn unary(&mut self) -> PResult<CVal> {
        let t = self.peek();
        self.enter(t)?;
        let v = self.unary_inner(t)?;
        self.leave();
        Ok(v)
    }

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
    const INT: IntTy = IntTy {
        bits: 32,
        unsigned: false,
    };
    const SIZE_T: IntTy = IntTy {
        bits: usize::BITS,
        unsigned: true,
    };

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

/// The first member of a union type (without its name), for `transparent_union`.
fn first_member(ty: &Ty) -> Option<MemoryLayout> {
    match ty {
        Ty::Object(MemoryLayout::Union(u)) => u.members().first().map(|m| match m {
            MemoryLayout::Value(v) => MemoryLayout::Value(v.clone().without_name()),
            other => other.clone(),
        }),
        _ => None,
    }
}

/// The tag of a named union type.
fn union_tag(ty: &Ty) -> Option<&str> {
    match ty {
        Ty::Object(l @ MemoryLayout::Union(_)) => l.name(),
        _ => None,
    }
}

/// Resolves an incomplete tag that has been defined since.
pub(super) fn complete(st: &State, ty: Ty) -> Ty {
    if let Ty::Incomplete(n) = &ty {
        let tag = n.split_whitespace().last().unwrap_or("");
        match st.tags.get(tag) {
            Some(Tag {
                layout: Some(l), ..
            }) => return Ty::Object(l.clone()),
            Some(Tag {
                no_layout: Some(nl),
                ..
            }) => return Ty::NoLayout(nl.clone()),
            _ => {}
        }
    }
    ty
}

/// Why a function type gives no [`FunctionDecl`].
#[derive(Debug)]
pub(super) enum FnError {
    /// Not a valid function at all (an error where it is declared).
    Positioned(String),
    /// A parameter or the return type has no layout (an error only when it is linked).
    NoLayout(crate::Error),
}

/// The [`FunctionDecl`] of function type `f` named `name`.
pub(super) fn function_decl(
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
    })
}
