//! C declarations as signatures and layouts (like LuaJIT's `ffi.cdef` and cffi's `cdef`).
//!
//! [`Declarations`] parses C declarations — prototypes, `struct`/`union`/`enum` definitions and
//! `typedef`s — into gatun [`FunctionDescriptor`]s and [`MemoryLayout`]s:
//!
//! ```
//! use gatun::cdecl::Declarations;
//! use gatun::layout::ValueLayout;
//!
//! let decls = Declarations::parse(
//!     "int open(const char *path, int flags, ...);
//!      struct point { char tag; double x, y; };",
//! ).unwrap();
//! let open = decls.function("open").unwrap();
//! assert_eq!(open.variadic, Some(2));
//! assert_eq!(
//!     open.descriptor,
//!     gatun::FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::ADDRESS, ValueLayout::I32]),
//! );
//! let point = decls.layout("struct point").unwrap();
//! assert_eq!((point.byte_size(), point.byte_offset_of("x").unwrap()), (24, 8));
//! ```
//!
//! # What is understood
//! - Prototypes, with or without parameter names; `(void)` and `()` both mean no parameters
//!   (C23 reading); `...` makes the function variadic ([`FunctionDecl::variadic`] is the number
//!   of fixed parameters, the linker's `FirstVariadicArg`). Array and function parameters decay
//!   to pointers (C11 §6.7.6.3 ¶7-8).
//! - `struct` and `union` definitions: named, anonymous (C11 anonymous members), nested, arrays
//!   (`T a[N][M]`, flexible `T a[]` and GNU `T a[0]` as zero-length sequences), pointers and
//!   function pointers (both plain [`ValueLayout::ADDRESS`]), self-referential structs through
//!   pointers. Members are named after their declarators; structs and unions after their tags
//!   (or after the `typedef` name that gives an anonymous one its name).
//! - `typedef`, `enum` (enumerators are constants usable in array sizes and other constant
//!   expressions; the enum is `int`, or `unsigned int` / 64-bit if its values need it, as GCC
//!   does). Constant expressions are typed as in C: integer constants take the type their
//!   suffix, base and value give (`~0U` is 4294967295), operands undergo the integer
//!   promotions and usual arithmetic conversions (`-1 < 0U` is 0), casts convert
//!   (`(unsigned char)-1` is 255), unsigned arithmetic wraps and signed overflow is an error;
//!   `sizeof(type)`, `_Alignof(type)`, `__builtin_offsetof(type, a.b[2])`, `?:`,
//!   `__extension__` and every integer operator are understood.
//! - `const`, `volatile`, `restrict` (and the `__restrict`, `__const`, ... spellings), storage
//!   classes, `inline`, `_Noreturn`, `__extension__` are accepted and ignored.
//! - GNU C as system headers use it, after `cc -E -P` ([`Declarations::from_headers`] runs the
//!   preprocessor): `__attribute__((...))` wherever a declarator allows it; `static`/`inline`
//!   function definitions (their bodies are skipped and they are not declared: there may be no
//!   symbol); `_Static_assert` (evaluated: a false one is an error); `__asm__("label")` after a
//!   prototype, which becomes the [`FunctionDecl::symbol`] to look up (glibc redirects some
//!   functions this way); variable-length array parameters (`int a[n]`, pointers anyway);
//!   identical re-declarations and re-typedefs (conflicting ones are errors), and a header's
//!   own definitions of the predefined typedefs (`typedef struct _IO_FILE FILE;`).
//! - Attributes that change a type: `packed`, `aligned(n)` (see Packing), `mode(m)` as GCC
//!   applies it (`QI`/`HI`/`SI`/`DI`/`TI`, `word`, `pointer`, `byte`, `SF`/`DF`/`XF`/`TF`: an
//!   integer keeps its signedness and takes the mode's width, so `typedef int register_t
//!   __attribute__((__mode__(__word__)))` is 8 bytes), `vector_size(n)` (a vector type, see
//!   below). Attributes that change neither layout nor calling convention (`nonnull`,
//!   `format`, `deprecated`, `visibility`, `nothrow`, `leaf`, `malloc`, `access`, ...) are
//!   accepted anywhere; any other attribute is a positioned error, never a silently wrong
//!   size.
//! - Types gatun cannot pass — `long double`, `_Float64x`, `_Float128`, `__float128`,
//!   `_Float16`, `__int128` (and `__int128_t`), `_Complex T`, vector types,
//!   `__builtin_va_list` / `va_list` by value — are *declared*: a header full of them still
//!   yields every other function. The error comes only when a layout is needed: linking a
//!   function that takes or returns one ([`Declarations::try_function`] names the function,
//!   the parameter and the type; [`Declarations::function`] is `None` for it), or asking for
//!   such a type or a record containing one ([`Declarations::try_layout`] names the member).
//!   `sizeof` and `_Alignof` of them still give gcc's figures in constant expressions.
//!   `_Float32` and `_Float64` are `float` and `double`.
//! - Bitfields, laid out as gcc does on SysV x86-64 and AArch64 (see
//!   [`BitField`](crate::layout::BitField)): the record is an ordinary struct layout whose
//!   bitfield bytes are unnamed `u8` runs, so it passes by value like any struct, and
//!   [`Declarations::bitfield`] gives each bitfield's bit offset, width and type, with typed
//!   `get`/`set`. An enum without negative values is unsigned in a bitfield, as in GCC.
//! - Function types: [`Declarations::function_pointer`] gives the descriptor of a
//!   function-pointer (or function) typedef, [`Declarations::callback`] that of a callback
//!   parameter, for [`Linker::upcall_stub`](crate::linker::Linker::upcall_stub);
//!   [`Declarations::link`], [`Declarations::link_with`] (with linker options) and
//!   [`Declarations::link_variadic`] link a declared function in one step, and a [`Library`]
//!   (a symbol lookup with its declarations) links each function once and keeps the handle.
//!   A `transparent_union` parameter is passed as the union's first member, as GCC does.
//! - The standard typedefs ([`STANDARD_TYPEDEFS`]): `size_t`, `ssize_t`, `ptrdiff_t`,
//!   `intptr_t`, `uintptr_t`, `intmax_t`, `intN_t`, `uintN_t`, `int_leastN_t`, `bool`, `wchar_t`,
//!   `char16_t`, `char32_t`, and on Unix `off_t`, `pid_t`, `uid_t`, `gid_t`, `mode_t`, `time_t`,
//!   ...; `FILE` and `DIR` as opaque (incomplete) structs. Scalar sizes follow
//!   [`DataModel::HOST`].
//!
//! # Packing
//! `__attribute__((packed))` on a struct or union (before or after its body) lowers every
//! member's alignment to 1; `#pragma pack(n)`, `pack(push, n)`, `pack(pop)` and `pack()` lower
//! member alignments to at most `n` for structs and unions defined while in force, as GCC and
//! MSVC do. Both are built with [`MemoryLayout::c_struct_packed`] (whose packed layouts the
//! linker classifies like any other: a by-value struct with a misaligned scalar is passed in
//! MEMORY on SysV, SysV AMD64 ABI §3.2.3). `__attribute__((packed))` on a single member lowers
//! that member only; `__attribute__((aligned(n)))` and `_Alignas(n)` raise a member's or a
//! record's alignment; on a typedef, `aligned` raises the alignment and keeps `sizeof`, as
//! GCC does. The layouts are checked against GCC in `tests/cdecl_layouts.rs`, and
//! `tests/system_headers.rs` checks every constant, size, alignment and member offset of every
//! `/usr/include/*.h` and `openssl/*.h` against gcc.
//!
//! # What is rejected (with a positioned [`CdeclError`])
//! Non-`static`, non-`inline` function definitions, initializers, `#include`/`#define` and
//! other preprocessor directives (`#pragma`s other than `pack` and GCC line markers are
//! ignored), `_Atomic`, `typeof`, decimal floating types, attributes gatun does not know,
//! floating constants in constant expressions, and recursion deeper than [`MAX_NESTING`].
//!
//! # Errors and robustness
//! Every error carries the line, column and span of the offending token; its `Display`
//! renders the message, the source line and a caret under the token. No input makes the parser
//! panic or overflow the stack: it is fuzzed with proptest (random bytes, token soups and
//! mutated declarations; `tests/cdecl_fuzz.rs`) and a regression corpus lives in
//! `tests/cdecl_corpus/`. Parsing is linear in the input: a system header of half a megabyte
//! after preprocessing (`openssl/ssl.h`, 4,300 functions) parses in well under a second in a
//! debug build.

mod headers;
mod lexer;
mod library;
mod parser;

pub use headers::{HeaderError, HeaderOptions};
pub use library::Library;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use crate::layout::{DataModel, MemoryLayout, ScalarKind, ValueLayout};
use crate::linker::{DowncallHandle, FunctionDescriptor, Linker, LinkerOption, SymbolLookup};

/// How deeply declarators, records, parameter lists and constant expressions may nest (each
/// level is one recursive call; deeper input is an error, not a stack overflow). The same
/// bound as layouts' ([`crate::layout::MAX_NESTING`]), so every type the parser accepts can be
/// built as a layout.
pub const MAX_NESTING: usize = crate::layout::MAX_NESTING;

/// A byte range `start..end` in the parsed source.
///
/// ```
/// use gatun::cdecl::Declarations;
/// let src = "int f(chr c);";
/// let e = Declarations::parse(src).unwrap_err();
/// let span = e.span();
/// assert_eq!(&src[span.start..span.end], "chr"); // the offending token
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte (equal to `start` for the end of input).
    pub end: usize,
}

impl Span {
    pub(crate) fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
}

/// A function declared by a prototype.
///
/// `Send + Sync`, cheap to clone.
///
/// ```
/// use gatun::cdecl::Declarations;
/// let d = Declarations::parse("int printf(const char *format, ...);").unwrap();
/// let printf = d.function("printf").unwrap();
/// assert_eq!((printf.name.as_str(), printf.symbol()), ("printf", "printf"));
/// assert_eq!(printf.variadic, Some(1)); // one fixed parameter
/// assert_eq!(printf.param_names, [Some("format".to_string())]);
/// assert_eq!(printf.descriptor.to_string(), "(ptr)i32");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FunctionDecl {
    /// The function's name as C code calls it.
    pub name: String,
    /// The symbol to look up: the `__asm__("label")` the prototype gives (glibc redirects
    /// some functions this way, e.g. `fscanf` to `__isoc99_fscanf`), else the name.
    pub symbol: String,
    /// Return and fixed-parameter layouts. For a variadic function the variadic arguments of a
    /// particular call are appended with [`FunctionDescriptor::append_argument_layouts`]
    /// (promoted: `float` → `double`, narrow integers → `int`, C11 §6.5.2.2 ¶7).
    pub descriptor: FunctionDescriptor,
    /// For a variadic function (`...`), the index of the first variadic argument, i.e. the
    /// number of fixed parameters; `None` otherwise.
    pub variadic: Option<usize>,
    /// Each fixed parameter's name, if the prototype gave one.
    pub param_names: Vec<Option<String>>,
    /// See [`FunctionDecl::returns_c_string`].
    returns_c_string: bool,
}

impl FunctionDecl {
    /// The symbol to look up for this function: its `__asm__` label, else its name.
    pub fn symbol(&self) -> &str {
        &self.symbol
    }

    /// Whether the prototype writes the return type as a pointer to a character type
    /// (`char *`, `const char *`, `unsigned char *`, `signed char *`, or a typedef of one of
    /// those character types followed by `*`), i.e. the function returns what C code
    /// usually treats as a NUL-terminated string (or NULL). The [`FunctionDescriptor`]
    /// returns a plain address either way; this is a hint for printing results. A typedef
    /// naming the pointer type itself (`typedef char *str; str f(void);`) is not recognised:
    /// the typedef keeps only the address layout.
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// let d = Declarations::parse("char *getenv(const char *); void *malloc(unsigned long);").unwrap();
    /// assert!(d.function("getenv").unwrap().returns_c_string());
    /// assert!(!d.function("malloc").unwrap().returns_c_string());
    /// ```
    pub fn returns_c_string(&self) -> bool {
        self.returns_c_string
    }
}

/// What one declaration declared; [`Declarations::add`] returns these in source order.
///
/// ```
/// use gatun::cdecl::{Declarations, Declared};
/// let mut d = Declarations::new();
/// let what = d.add("struct point { int x, y; }; typedef struct point point_t; int norm(point_t);").unwrap();
/// assert_eq!(
///     what,
///     [
///         Declared::Tag("struct point".into()),
///         Declared::Typedef("point_t".into()),
///         Declared::Function("norm".into()),
///     ]
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Declared {
    /// A function prototype (its name).
    Function(String),
    /// A `struct`, `union` or `enum` tag that was defined or forward-declared, with its
    /// keyword: `"struct point"`.
    Tag(String),
    /// A `typedef` name.
    Typedef(String),
    /// A variable (`extern int errno;`): accepted, its name reported, nothing stored.
    Variable(String),
}

/// A parse error: a message, and where in the source it happened.
///
/// `Display` renders three lines — `LINE:COLUMN: error: MESSAGE`, the source line, and a caret
/// (`^^^`) under the offending token. [`CdeclError::summary`] is the first line alone.
/// Lines and columns count from 1; columns count characters (not bytes).
///
/// ```
/// use gatun::cdecl::Declarations;
/// let e = Declarations::parse("int x;\nint f(chr c);").unwrap_err();
/// assert_eq!((e.line(), e.column()), (2, 7)); // at `chr`
/// assert!(e.summary().starts_with("2:7: error:"), "{}", e.summary());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdeclError {
    message: String,
    span: Span,
    line: usize,
    column: usize,
    source_line: String,
    caret_len: usize,
}

impl CdeclError {
    pub(crate) fn new(src: &str, span: Span, message: String) -> CdeclError {
        let start = floor_char_boundary(src, span.start.min(src.len()));
        let end = floor_char_boundary(src, span.end.clamp(start, src.len()));
        let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
        let line = src[..start].matches('\n').count() + 1;
        let column = src[line_start..start].chars().count() + 1;
        let caret_len = src[start..end.min(line_end).max(start)]
            .chars()
            .count()
            .max(1);
        CdeclError {
            message,
            span: Span::new(start, end),
            line,
            column,
            source_line: src[line_start..line_end].trim_end_matches('\r').to_string(),
            caret_len,
        }
    }

    /// The message, without position.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The line of the offending token, from 1.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column (in characters) of the offending token's first character, from 1.
    pub fn column(&self) -> usize {
        self.column
    }

    /// The offending token's byte span in the source.
    pub fn span(&self) -> Span {
        self.span
    }

    /// `LINE:COLUMN: error: MESSAGE` on one line (for command lines and logs).
    pub fn summary(&self) -> String {
        format!("{}:{}: error: {}", self.line, self.column, self.message)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for CdeclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary())?;
        let gutter = self.line.to_string();
        writeln!(f, "{gutter} | {}", self.source_line)?;
        let pad: String = self
            .source_line
            .chars()
            .take(self.column - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        write!(
            f,
            "{} | {pad}{}",
            " ".repeat(gutter.len()),
            "^".repeat(self.caret_len)
        )
    }
}

impl std::error::Error for CdeclError {}

/// The kind of a tag (the tag namespace is shared by the three, C11 §6.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TagKind {
    Struct,
    Union,
    Enum,
}

impl TagKind {
    fn keyword(self) -> &'static str {
        match self {
            TagKind::Struct => "struct",
            TagKind::Union => "union",
            TagKind::Enum => "enum",
        }
    }
}

/// A C type while parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ty {
    Void,
    /// A complete object type.
    Object(MemoryLayout),
    /// A declared but not (yet) defined struct or union: `"struct foo"`.
    Incomplete(String),
    /// A function type.
    Func(Arc<FnTy>),
    /// A type that is declared but has no gatun layout (`long double`, `__int128`,
    /// `_Complex`, vectors, `va_list`, records containing one): an error arises only where a
    /// layout is needed.
    NoLayout(Arc<NoLayout>),
}

impl Ty {
    /// `"struct tag"` / `"union tag"` for a named record type.
    pub(crate) fn name_of_record(&self) -> Option<String> {
        match self {
            Ty::Object(l @ MemoryLayout::Struct(_)) => l.name().map(|n| format!("struct {n}")),
            Ty::Object(l @ MemoryLayout::Union(_)) => l.name().map(|n| format!("union {n}")),
            _ => None,
        }
    }
}

/// Why a type has no layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoLayout {
    /// The type as C spells it: `"long double"`, `"struct max_align_t"`.
    pub(crate) spelling: String,
    /// Why it has no layout (for a record: the member that has none, and why).
    pub(crate) reason: String,
    /// `sizeof` and `_Alignof` in bytes, where gcc's are known (for constant expressions).
    pub(crate) size_align: Option<(usize, usize)>,
}

impl NoLayout {
    pub(crate) fn error(&self) -> crate::Error {
        crate::Error::Unsupported {
            type_name: self.spelling.clone(),
            reason: self.reason.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct FnTy {
    pub(crate) ret: Ty,
    /// Whether the return type was written as a pointer to a character type (`char *`,
    /// `const unsigned char *`). Not part of the type's identity (`==` ignores it): `ret`
    /// is the same address layout either way.
    pub(crate) returns_c_string: bool,
    pub(crate) params: Vec<(Option<String>, Ty)>,
    /// For each parameter that is a pointer to a function, that function's type.
    pub(crate) callbacks: Vec<Option<Arc<FnTy>>>,
    pub(crate) variadic: bool,
}

impl PartialEq for FnTy {
    fn eq(&self, other: &FnTy) -> bool {
        self.ret == other.ret
            && self.params == other.params
            && self.callbacks == other.callbacks
            && self.variadic == other.variadic
    }
}

impl Eq for FnTy {}

#[derive(Debug, Clone)]
pub(crate) struct Tag {
    kind: TagKind,
    layout: Option<MemoryLayout>,
    /// Set for a defined record that has no layout (a member of a type without one).
    no_layout: Option<Arc<NoLayout>>,
}

/// Everything declared so far (cloned for atomic `add`).
#[derive(Debug, Clone, Default)]
pub(crate) struct State {
    typedefs: HashMap<String, Ty>,
    tags: HashMap<String, Tag>,
    functions: BTreeMap<String, FunctionDecl>,
    /// Functions declared with a parameter or return type that has no layout: the error
    /// linking them gives.
    unlinkable: BTreeMap<String, crate::Error>,
    /// Typedef names still holding their predefined meaning ([`STANDARD_TYPEDEFS`],
    /// [`OPAQUE_TYPEDEFS`]): a header's own definition replaces them.
    predefined: HashSet<String>,
    /// For each incomplete tag (`"struct foo"`), the typedefs naming it, to complete them
    /// when it is defined.
    pending_typedefs: HashMap<String, Vec<String>>,
    constants: HashMap<String, i128>,
    /// Typedefs of function pointers and of function types: the function type.
    fn_typedefs: HashMap<String, Arc<FnTy>>,
    /// Every declared function's type (for its callback parameters).
    fn_types: HashMap<String, Arc<FnTy>>,
    /// `transparent_union` typedef names and `"union tag"`s: their first member.
    transparent: HashMap<String, MemoryLayout>,
    /// The bitfields of records with bitfields, by `"struct tag"` / `"union tag"` and by
    /// typedef name.
    bitfields: HashMap<String, Arc<[crate::layout::BitField]>>,
    /// Enum tags (`"enum e"`) and typedef names of enums without negative values.
    unsigned_enums: HashSet<String>,
    /// Typedef names of arrays of unknown size (`typedef T list[];`): incomplete types,
    /// held as zero-length sequences for members and parameters, but without a layout.
    incomplete_arrays: HashSet<String>,
    pack: Option<usize>,
    pack_stack: Vec<Option<usize>>,
}

/// The standard typedefs every [`Declarations`] starts with, and their C definitions on the
/// host (sizes from [`DataModel::HOST`]; the POSIX ones as glibc/musl/macOS define them on
/// 64-bit targets).
pub const STANDARD_TYPEDEFS: &[(&str, &str)] = &[
    ("size_t", "size_t"),
    ("ssize_t", "ssize_t"),
    ("ptrdiff_t", "ptrdiff_t"),
    ("intptr_t", "intptr_t"),
    ("uintptr_t", "uintptr_t"),
    ("intmax_t", "long long"),
    ("uintmax_t", "unsigned long long"),
    ("wchar_t", "wchar_t"),
    ("char16_t", "unsigned short"),
    ("char32_t", "unsigned int"),
    ("bool", "_Bool"),
    ("int8_t", "int8_t"),
    ("uint8_t", "uint8_t"),
    ("int16_t", "int16_t"),
    ("uint16_t", "uint16_t"),
    ("int32_t", "int32_t"),
    ("uint32_t", "uint32_t"),
    ("int64_t", "int64_t"),
    ("uint64_t", "uint64_t"),
    ("int_least8_t", "int8_t"),
    ("uint_least8_t", "uint8_t"),
    ("int_least16_t", "int16_t"),
    ("uint_least16_t", "uint16_t"),
    ("int_least32_t", "int32_t"),
    ("uint_least32_t", "uint32_t"),
    ("int_least64_t", "int64_t"),
    ("uint_least64_t", "uint64_t"),
    #[cfg(unix)]
    ("off_t", "long long"),
    #[cfg(unix)]
    ("off64_t", "long long"),
    #[cfg(unix)]
    ("pid_t", "int"),
    #[cfg(unix)]
    ("uid_t", "unsigned int"),
    #[cfg(unix)]
    ("gid_t", "unsigned int"),
    #[cfg(unix)]
    ("id_t", "unsigned int"),
    #[cfg(all(unix, not(target_vendor = "apple")))]
    ("mode_t", "unsigned int"),
    #[cfg(target_vendor = "apple")]
    ("mode_t", "unsigned short"),
    #[cfg(unix)]
    ("time_t", "long"),
    #[cfg(unix)]
    ("clock_t", "long"),
    #[cfg(unix)]
    ("suseconds_t", "long"),
    #[cfg(unix)]
    ("useconds_t", "unsigned int"),
    #[cfg(unix)]
    ("socklen_t", "unsigned int"),
    #[cfg(unix)]
    ("sig_atomic_t", "int"),
    #[cfg(unix)]
    ("key_t", "int"),
    #[cfg(unix)]
    ("ino_t", "unsigned long long"),
    #[cfg(all(unix, not(target_vendor = "apple")))]
    ("dev_t", "unsigned long long"),
    #[cfg(target_vendor = "apple")]
    ("dev_t", "int"),
];

/// Opaque (incomplete) struct typedefs every [`Declarations`] starts with: usable behind
/// pointers only (`FILE *`). Every set also knows `va_list` and `__builtin_va_list` (usable
/// behind pointers; by value they have no layout) and `__int128_t`, `__uint128_t` (no
/// layout). A header's own definition of any predefined typedef replaces it.
pub const OPAQUE_TYPEDEFS: &[&str] = &["FILE", "DIR"];

/// A set of parsed C declarations: functions, tagged types, typedefs and enum constants.
///
/// Start with [`Declarations::parse`] (or [`Declarations::new`] for just the standard
/// typedefs), add more source with [`Declarations::add`], then look things up. Adding is
/// atomic: a source that fails to parse leaves the set unchanged.
///
/// `Send + Sync`; cloning copies the tables (layouts inside are shared through `Arc`s).
///
/// ```
/// use gatun::cdecl::Declarations;
/// let mut d = Declarations::parse("typedef struct { double x, y; } vec2; double dot(vec2, vec2);").unwrap();
/// assert_eq!(d.layout("vec2").unwrap().byte_size(), 16);
/// assert_eq!(d.function("dot").unwrap().descriptor.argument_layouts().len(), 2);
/// // Later declarations may use earlier ones; a failing `add` changes nothing.
/// d.add("vec2 scale(vec2 v, double k);").unwrap();
/// assert!(d.add("vec3 bad(void);").is_err());
/// assert_eq!(d.type_layout("vec2[4]").unwrap().byte_size(), 64);
/// ```
#[derive(Debug, Clone)]
pub struct Declarations {
    state: State,
}

impl Default for Declarations {
    fn default() -> Self {
        Declarations::new()
    }
}

impl Declarations {
    /// A set holding only [`STANDARD_TYPEDEFS`] and [`OPAQUE_TYPEDEFS`].
    pub fn new() -> Declarations {
        let mut state = State::default();
        for &(name, c) in STANDARD_TYPEDEFS {
            let ty = match DataModel::HOST.layout(c) {
                Ok(v) => Ty::Object(MemoryLayout::Value(v)),
                // Every entry is a name DataModel knows; keep going rather than panic.
                Err(_) => continue,
            };
            state.typedefs.insert(name.to_string(), ty);
            state.predefined.insert(name.to_string());
        }
        for &name in OPAQUE_TYPEDEFS {
            state
                .typedefs
                .insert(name.to_string(), Ty::Incomplete(format!("struct {name}")));
            state.predefined.insert(name.to_string());
        }
        for (name, spelling) in [
            ("__int128_t", "__int128"),
            ("__uint128_t", "unsigned __int128"),
        ] {
            if let Ok(ty) = parser::scalar_ty(spelling) {
                state.typedefs.insert(name.to_string(), ty);
            }
        }
        for name in ["va_list", "__builtin_va_list"] {
            state
                .typedefs
                .insert(name.to_string(), Ty::NoLayout(Arc::new(parser::va_list())));
            if name == "va_list" {
                state.predefined.insert(name.to_string());
            }
        }
        Declarations { state }
    }

    /// Parses `src` (any number of declarations) into a new set.
    ///
    /// # Errors
    /// The first syntax or type error, with its position.
    pub fn parse(src: &str) -> Result<Declarations, CdeclError> {
        let mut d = Declarations::new();
        d.add(src)?;
        Ok(d)
    }

    /// Parses `src` into this set and returns what it declared, in order. Atomic: on error
    /// nothing of `src` is kept. `#pragma pack` state carries over from earlier sources, as in
    /// one translation unit.
    ///
    /// Redeclaring a function, tag or typedef identically is allowed (headers are often pasted
    /// twice); redeclaring it differently is an error.
    ///
    /// # Errors
    /// The first syntax or type error in `src`, with its position.
    pub fn add(&mut self, src: &str) -> Result<Vec<Declared>, CdeclError> {
        let mut state = self.state.clone();
        let declared = parser::Parser::new(src, &mut state)?.declarations()?;
        self.state = state;
        Ok(declared)
    }

    /// The layout of a C type name — `"int[3]"`, `"struct point"`, `"size_t"`,
    /// `"struct S { char c; double d; }"` — optionally preceded by declarations it uses and
    /// followed by a `;`. A source ending in a `typedef` yields that typedef's type. Anything
    /// the source defines (tags, typedefs, functions) is added to the set; atomic as
    /// [`Declarations::add`].
    ///
    /// # Errors
    /// Syntax errors; `void`, function and incomplete types (they have no layout); a source
    /// ending in a declaration that is not a type.
    pub fn type_layout(&mut self, src: &str) -> Result<MemoryLayout, CdeclError> {
        let mut state = self.state.clone();
        let layout = parser::Parser::new(src, &mut state)?.type_name_source()?;
        self.state = state;
        Ok(layout)
    }

    /// The function declared as `name`. `None` if it was not declared, or if its return type
    /// or a parameter has no gatun layout ([`Declarations::try_function`] says why).
    pub fn function(&self, name: &str) -> Option<&FunctionDecl> {
        self.state.functions.get(name)
    }

    /// The function declared as `name`, or why there is none.
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) naming the type and, in the reason,
    /// the function and the parameter (or the return type) when the prototype uses a type
    /// gatun cannot pass (`long double`, `__int128`, `_Complex`, vectors, `va_list` by value,
    /// records containing one); [`Error::NotDeclared`](crate::Error::NotDeclared) if no
    /// function `name` was declared.
    pub fn try_function(&self, name: &str) -> Result<&FunctionDecl, crate::Error> {
        if let Some(f) = self.state.functions.get(name) {
            return Ok(f);
        }
        match self.state.unlinkable.get(name) {
            Some(e) => Err(e.clone()),
            None => Err(crate::Error::NotDeclared {
                kind: "function",
                name: name.to_string(),
            }),
        }
    }

    /// Links the declared function `name` in one step: finds its [`FunctionDecl::symbol`] in
    /// `lookup` and makes a downcall handle with its descriptor.
    ///
    /// Each call links anew (a symbol lookup, classification and a stub-cache lookup: a few
    /// microseconds, against nanoseconds for a call through the handle): link once and keep
    /// the handle (it is cheap to clone and `Send + Sync`), or let a [`Library`] keep one per
    /// function.
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// use gatun::linker::SymbolLookup;
    ///
    /// let decls = Declarations::parse("size_t strlen(const char *s);").unwrap();
    /// # #[cfg(gatun_backend = "x86_64_sysv")]
    /// let strlen = decls.link(&SymbolLookup::default_lookup(), "strlen").unwrap();
    /// ```
    ///
    /// # Errors
    /// Those of [`Declarations::try_function`] (not declared; a type gatun cannot pass);
    /// [`Error::InvalidDescriptor`](crate::Error::InvalidDescriptor) for a variadic function
    /// (use [`Declarations::link_variadic`] with the call's extra arguments); those of
    /// [`SymbolLookup::find`] and [`Linker::downcall`].
    pub fn link(&self, lookup: &SymbolLookup, name: &str) -> Result<DowncallHandle, crate::Error> {
        self.link_with(lookup, name, &[])
    }

    /// [`Declarations::link`] with linker options: [`LinkerOption::CaptureCallState`] (the
    /// handle then takes the capture segment as its first argument) and
    /// [`LinkerOption::Critical`]. A variadic function is linked with
    /// [`Declarations::link_variadic`], which sets the first variadic index itself.
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// use gatun::linker::{capture_state_layout, LinkerOption, SymbolLookup};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Value;
    ///
    /// # #[cfg(gatun_executes)] {
    /// // int abs(int), with errno captured right after each call.
    /// let decls = Declarations::parse("int abs(int);").unwrap();
    /// let capture = [LinkerOption::CaptureCallState(&["errno"])];
    /// let abs = decls.link_with(&SymbolLookup::default_lookup(), "abs", &capture)?;
    /// assert!(abs.captures_call_state());
    /// let arena = Arena::confined();
    /// let state = arena.allocate_layout(&capture_state_layout())?;
    /// // SAFETY: abs has no preconditions; the capture segment comes first.
    /// let r = unsafe { abs.invoke(&[state.into(), (-5).into()]) }?;
    /// assert_eq!(r, Value::I32(5));
    /// # }
    /// # Ok::<(), gatun::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Declarations::link`]; [`Error::InvalidDescriptor`](crate::Error::InvalidDescriptor)
    /// for [`LinkerOption::FirstVariadicArg`] (the prototype says whether the function is
    /// variadic), and the errors of [`Linker::downcall`] for the options.
    pub fn link_with(
        &self,
        lookup: &SymbolLookup,
        name: &str,
        options: &[LinkerOption],
    ) -> Result<DowncallHandle, crate::Error> {
        let f = self.try_function(name)?;
        let invalid = |reason: String| crate::Error::InvalidDescriptor {
            descriptor: f.descriptor.to_string(),
            reason,
        };
        if f.variadic.is_some() {
            return Err(invalid(format!(
                "`{name}` is variadic: link it with `link_variadic` and the layouts of the \
                 call's variadic arguments"
            )));
        }
        if let Some(o) = options
            .iter()
            .find(|o| matches!(o, LinkerOption::FirstVariadicArg(_)))
        {
            return Err(invalid(format!(
                "`{name}` is declared without `...`: {o:?} would call it as a variadic function"
            )));
        }
        let symbol = lookup.find(f.symbol())?;
        Linker::native().downcall(&symbol, &f.descriptor, options)
    }

    /// Links the declared variadic function `name` for calls whose variadic arguments have
    /// the layouts `extra` (appended to its fixed parameters; the linker applies C's default
    /// argument promotions, so `float` is passed as `double`).
    ///
    /// # Errors
    /// Those of [`Declarations::try_function`];
    /// [`Error::InvalidDescriptor`](crate::Error::InvalidDescriptor) if `name` is not variadic;
    /// those of [`SymbolLookup::find`] and [`Linker::downcall`].
    pub fn link_variadic(
        &self,
        lookup: &SymbolLookup,
        name: &str,
        extra: &[MemoryLayout],
    ) -> Result<DowncallHandle, crate::Error> {
        let f = self.try_function(name)?;
        let Some(first) = f.variadic else {
            return Err(crate::Error::InvalidDescriptor {
                descriptor: f.descriptor.to_string(),
                reason: format!("`{name}` is not variadic: link it with `link`"),
            });
        };
        let descriptor = f.descriptor.append_argument_layouts(extra.iter().cloned());
        let symbol = lookup.find(f.symbol())?;
        Linker::native().downcall(
            &symbol,
            &descriptor,
            &[LinkerOption::FirstVariadicArg(first)],
        )
    }

    /// The descriptor of the function type a typedef names — a function-pointer typedef
    /// (`typedef int (*cmp)(const void *, const void *);`) or a function typedef — for
    /// [`Linker::upcall_stub`](crate::linker::Linker::upcall_stub).
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// use gatun::layout::ValueLayout as V;
    ///
    /// let d = Declarations::parse("typedef int (*cmp)(const void *, const void *);").unwrap();
    /// assert_eq!(
    ///     d.function_pointer("cmp").unwrap(),
    ///     gatun::FunctionDescriptor::of(V::I32, [V::ADDRESS, V::ADDRESS]),
    /// );
    /// ```
    ///
    /// # Errors
    /// [`Error::NotDeclared`](crate::Error::NotDeclared) if `typedef` is not a typedef of a
    /// function or function pointer; [`Error::Unsupported`](crate::Error::Unsupported) if the
    /// function takes or returns a type gatun cannot pass, or is variadic (an upcall cannot
    /// be).
    pub fn function_pointer(&self, typedef: &str) -> Result<FunctionDescriptor, crate::Error> {
        let f = self.state.fn_typedefs.get(typedef.trim()).ok_or_else(|| {
            crate::Error::NotDeclared {
                kind: "function-pointer typedef",
                name: typedef.trim().to_string(),
            }
        })?;
        upcall_descriptor(&self.state, typedef.trim(), f)
    }

    /// The descriptor of parameter `index` (from 0) of declared function `function`, when
    /// that parameter is a function pointer (`qsort`'s `int (*cmp)(const void *, const void
    /// *)`, or a function-pointer typedef): what an upcall stub passed there must be.
    ///
    /// # Errors
    /// [`Error::NotDeclared`](crate::Error::NotDeclared) if `function` is not declared or
    /// parameter `index` is not a function pointer; [`Error::Unsupported`](crate::Error::Unsupported)
    /// as for [`Declarations::function_pointer`].
    pub fn callback(
        &self,
        function: &str,
        index: usize,
    ) -> Result<FunctionDescriptor, crate::Error> {
        let not = || crate::Error::NotDeclared {
            kind: "function-pointer parameter",
            name: format!("{function} (index {index})"),
        };
        let f = self.state.fn_types.get(function).ok_or_else(not)?;
        let cb = f
            .callbacks
            .get(index)
            .and_then(Option::as_ref)
            .ok_or_else(not)?;
        upcall_descriptor(
            &self.state,
            &format!("the parameter at index {index} of `{function}`"),
            cb,
        )
    }

    /// Every declared function that can be linked, by name.
    pub fn functions(&self) -> impl Iterator<Item = &FunctionDecl> {
        self.state.functions.values()
    }

    /// The names of declared functions that cannot be linked (a parameter or the return type
    /// has no gatun layout), by name; [`Declarations::try_function`] gives the reason.
    pub fn unlinkable_functions(&self) -> impl Iterator<Item = &str> {
        self.state.unlinkable.keys().map(String::as_str)
    }

    /// The layout of a defined tag — `"struct point"`, `"union value"`, `"enum color"`
    /// (whitespace between keyword and tag is free) — or of a typedef name of an object type.
    /// `None` for unknown names and for tags declared but never defined.
    pub fn layout(&self, name: &str) -> Option<&MemoryLayout> {
        let words: Vec<&str> = name.split_whitespace().collect();
        match words.as_slice() {
            [kw @ ("struct" | "union" | "enum"), tag] => {
                let t = self.state.tags.get(*tag)?;
                if t.kind.keyword() != *kw {
                    return None;
                }
                t.layout.as_ref()
            }
            [one] => self.typedef(one),
            _ => None,
        }
    }

    /// The layout of a tag or typedef name, as [`Declarations::layout`], or why there is none.
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) for a type declared without a gatun
    /// layout (`long double`, `__int128`, `_Complex`, vectors, `va_list`, and records with a
    /// member of such a type or a bitfield: the reason names the member);
    /// [`Error::NotDeclared`](crate::Error::NotDeclared) for unknown names, incomplete tags,
    /// and typedefs of `void` or of function types.
    pub fn try_layout(&self, name: &str) -> Result<&MemoryLayout, crate::Error> {
        let not_declared = || crate::Error::NotDeclared {
            kind: "type with a layout",
            name: name.trim().to_string(),
        };
        let words: Vec<&str> = name.split_whitespace().collect();
        let ty_or_tag = match words.as_slice() {
            [kw @ ("struct" | "union" | "enum"), tag] => {
                let t = self.state.tags.get(*tag).ok_or_else(not_declared)?;
                if t.kind.keyword() != *kw {
                    return Err(not_declared());
                }
                if let Some(n) = &t.no_layout {
                    return Err(n.error());
                }
                return t.layout.as_ref().ok_or_else(not_declared);
            }
            [one] if self.state.incomplete_arrays.contains(*one) => return Err(not_declared()),
            [one] => self.state.typedefs.get(*one).ok_or_else(not_declared)?,
            _ => return Err(not_declared()),
        };
        match ty_or_tag {
            Ty::Object(l) => Ok(l),
            Ty::NoLayout(n) => Err(n.error()),
            Ty::Incomplete(tag) => {
                let t = tag.split_whitespace().last().unwrap_or("");
                match self.state.tags.get(t) {
                    Some(Tag {
                        layout: Some(l), ..
                    }) => Ok(l),
                    Some(Tag {
                        no_layout: Some(n), ..
                    }) => Err(n.error()),
                    _ => Err(not_declared()),
                }
            }
            _ => Err(not_declared()),
        }
    }

    /// The layout a typedef name stands for (`None` if unknown, or if it names `void`, a
    /// function type or an incomplete type).
    pub fn typedef(&self, name: &str) -> Option<&MemoryLayout> {
        if self.state.incomplete_arrays.contains(name.trim()) {
            return None;
        }
        match self.state.typedefs.get(name.trim())? {
            Ty::Object(l) => Some(l),
            _ => None,
        }
    }

    /// Every enumeration constant whose value fits in `i64`, with its value, in no particular
    /// order.
    pub fn constants(&self) -> impl Iterator<Item = (&str, i64)> {
        self.state
            .constants
            .iter()
            .filter_map(|(k, &v)| Some((k.as_str(), i64::try_from(v).ok()?)))
    }

    /// The bitfields of a record — `"struct flags"`, `"union u"` or a typedef name — in
    /// declaration order (those of anonymous record members included, at their offsets in
    /// this record); empty if it has none or is unknown.
    pub fn bitfields(&self, record: &str) -> &[crate::layout::BitField] {
        let key = record.split_whitespace().collect::<Vec<_>>().join(" ");
        self.state.bitfields.get(&key).map_or(&[], |b| b)
    }

    /// The bitfield member `field` of `record` (see [`Declarations::bitfields`]), to read and
    /// write it with [`BitField::get`](crate::layout::BitField::get) and
    /// [`BitField::set`](crate::layout::BitField::set).
    pub fn bitfield(&self, record: &str, field: &str) -> Option<&crate::layout::BitField> {
        self.bitfields(record).iter().find(|b| b.name() == field)
    }

    /// The value of an enumeration constant, if it fits in `i64`.
    pub fn constant(&self, name: &str) -> Option<i64> {
        self.state
            .constants
            .get(name)
            .and_then(|&v| i64::try_from(v).ok())
    }
}

/// The descriptor of function type `f` as an upcall target named `what` in errors.
fn upcall_descriptor(st: &State, what: &str, f: &FnTy) -> Result<FunctionDescriptor, crate::Error> {
    let decl = match parser::function_decl(st, what, f, None) {
        Ok(d) => d,
        Err(parser::FnError::NoLayout(e)) => return Err(e),
        Err(parser::FnError::Positioned(m)) => {
            return Err(crate::Error::Unsupported {
                type_name: what.to_string(),
                reason: m,
            })
        }
    };
    if decl.variadic.is_some() {
        return Err(crate::Error::Unsupported {
            type_name: what.to_string(),
            reason: "a variadic function type cannot be an upcall target".into(),
        });
    }
    Ok(decl.descriptor)
}

/// The value layout of an enum whose constants span `min..=max` (GCC's rule: `int` if they
/// fit, else `unsigned int`, else 64-bit).
pub(crate) fn enum_layout(min: i128, max: i128) -> ValueLayout {
    let kind = if min >= i128::from(i32::MIN) && max <= i128::from(i32::MAX) {
        ScalarKind::I32
    } else if min >= 0 && max <= i128::from(u32::MAX) {
        ScalarKind::U32
    } else if min >= i128::from(i64::MIN) && max <= i128::from(i64::MAX) {
        ScalarKind::I64
    } else {
        ScalarKind::U64
    };
    ValueLayout::new(kind)
}

#[cfg(test)]
mod tests;
