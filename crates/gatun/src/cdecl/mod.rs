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
//!   function pointers (both plain [`ValueLayout::ADDRESS`]; with
//!   [`Declarations::with_pointer_targets`], pointers to objects and strings carry their
//!   pointees as targets, so C data is walked without raw pointers), self-referential structs
//!   through pointers. Members are named after their declarators; structs and unions after
//!   their tags (or after the `typedef` name that gives an anonymous one its name).
//! - `typedef`, `enum` (enumerators are constants usable in array sizes and other constant
//!   expressions; the enum is `int`, or `unsigned int` / 64-bit if its values need it, as GCC
//!   does; an enumerator is `int` if its value fits, else of the enum's type, and one without
//!   a value that overflows its predecessor's type is an error, as in GCC). Constant
//!   expressions are typed as in C: integer constants take the type their suffix, base and
//!   value give (`~0U` is 4294967295), operands undergo the integer promotions and usual
//!   arithmetic conversions (`-1 < 0U` is 0), casts convert (`(unsigned char)-1` is 255),
//!   unsigned arithmetic wraps and signed overflow is an error; `sizeof` and `_Alignof` of a
//!   type or of an expression (`sizeof x` for a declared variable, `sizeof *(T *)0`,
//!   `sizeof ((T *)0)->member`, `sizeof "abc"`), `__builtin_offsetof(type, a.b[2])`, `?:`,
//!   `__extension__` and every integer operator are understood. `float` and `double`
//!   constants (decimal and hexadecimal, correctly rounded), address constants (`(void *)0`,
//!   `(char *)0 + 4`, `&((T *)0)->m`) and string literals are values too; an integer
//!   constant expression (an array size, a bitfield width) must end as an integer.
//! - Constants by name ([`Declarations::constant`], typed [`Constant`]s): enumeration
//!   constants, and in header mode every object-like macro whose expansion is a constant
//!   expression (`O_RDONLY`, `SQLITE_TRANSIENT`, `ZLIB_VERSION`). [`Declarations::macros`]
//!   lists every macro: constants, function-like ones, and the others with the reason they are
//!   not constants (see [`Declarations::from_headers`]).
//! - `const`, `volatile`, `restrict` (and the `__restrict`, `__const`, ... spellings), storage
//!   classes, `inline`, `_Noreturn`, `__extension__` are accepted and ignored.
//! - GNU C as system headers use it, after `cc -E -P` ([`Declarations::from_headers`] runs the
//!   preprocessor): `__attribute__((...))` wherever a declarator allows it; `static`/`inline`
//!   function definitions (their bodies are skipped and they are not declared: there may be no
//!   symbol; [`Declarations::is_inline_only`] tells such a name from an unknown one); `_Static_assert` (evaluated: a false one is an error); `__asm__("label")` after a
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
//! `tests/system_headers.rs` checks every enumeration constant (value and type), size,
//! alignment and member offset of every `/usr/include/*.h` and `openssl/*.h` against gcc;
//! `tests/cdecl_macros.rs` checks the value and type of every constant macro of `fcntl.h`,
//! `errno.h`, `netdb.h`, `sqlite3.h`, `zlib.h` and `jansson.h`.
//!
//! # What is rejected (with a positioned [`CdeclError`])
//! Non-`static`, non-`inline` function definitions, initializers, `#include`/`#define` and
//! other preprocessor directives in parsed source (`#pragma`s other than `pack` and GCC line
//! markers are ignored; header mode takes the preprocessor's `#define` lines itself),
//! `_Atomic`, `typeof`, decimal floating types, attributes gatun does not know, alignments over
//! GCC's maximum of 2^28 bytes, enumeration values that overflow, a non-integer value where an
//! integer constant expression is needed (`int a[1.5]`), reading memory or calling a function
//! in a constant expression, and recursion deeper than [`MAX_NESTING`].
//!
//! # Errors and robustness
//! Every error carries the line, column and span of the offending token; its `Display`
//! renders the message, the source line and a caret under the token. No input makes the parser
//! panic or overflow the stack: it is fuzzed with proptest (random bytes, token soups and
//! mutated declarations; `tests/cdecl_fuzz.rs`) and a regression corpus lives in
//! `tests/cdecl_corpus/`. Parsing is linear in the input: a system header of half a megabyte
//! after preprocessing (`openssl/ssl.h`, 4,300 functions) parses in well under a second in a
//! debug build.

mod constants;
mod headers;
mod lexer;
mod library;
mod literals;
mod macros;
mod parser;

pub use constants::Constant;
pub use headers::{HeaderError, HeaderOptions};
pub use library::Library;
pub use macros::{Macro, MacroKind};

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
    /// See [`FunctionDecl::param_is_c_string`]: one entry per fixed parameter.
    param_c_strings: Vec<bool>,
}

impl FunctionDecl {
    /// The symbol to look up for this function: its `__asm__` label, else its name.
    pub fn symbol(&self) -> &str {
        &self.symbol
    }

    /// Whether the prototype writes the return type as a pointer to a character type
    /// (`char *`, `const char *`, `unsigned char *`, `signed char *`, or a typedef of one of
    /// those character types followed by `*`, or a typedef of such a pointer:
    /// `typedef const char *png_const_charp;`), i.e. the function returns what C code
    /// usually treats as a NUL-terminated string (or NULL). The [`FunctionDescriptor`]
    /// returns a plain address either way; this is a hint for printing results.
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// let d = Declarations::parse(
    ///     "char *getenv(const char *); void *malloc(unsigned long);
    ///      typedef const char *str; str version(void);",
    /// )
    /// .unwrap();
    /// assert!(d.function("getenv").unwrap().returns_c_string());
    /// assert!(d.function("version").unwrap().returns_c_string());
    /// assert!(!d.function("malloc").unwrap().returns_c_string());
    /// ```
    pub fn returns_c_string(&self) -> bool {
        self.returns_c_string
    }

    /// Whether fixed parameter `index` (from 0) is written as a pointer to a character type,
    /// in any of the spellings [`FunctionDecl::returns_c_string`] recognises, or as an array
    /// of one (`char s[]`, which decays to `char *`): the parameter C code usually passes a
    /// NUL-terminated string to. `false` for any other parameter and for an `index` past the
    /// fixed parameters. Like `returns_c_string`, a hint that is no part of the descriptor.
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// let d = Declarations::parse("int stat(const char *path, struct stat *buf);").unwrap();
    /// let stat = d.function("stat").unwrap();
    /// assert!(stat.param_is_c_string(0));
    /// assert!(!stat.param_is_c_string(1)); // a pointer, but not to a character type
    /// assert!(!stat.param_is_c_string(2)); // no such parameter
    /// ```
    pub fn param_is_c_string(&self, index: usize) -> bool {
        self.param_c_strings.get(index).copied().unwrap_or(false)
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
    /// For each parameter, whether it was written as a pointer to a character type (like
    /// `returns_c_string`, no part of the type's identity).
    pub(crate) param_c_strings: Vec<bool>,
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

/// An enumeration constant: its value and its type (`int` if the value fits, else the
/// enumeration's type, as GCC types it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Enumerator {
    pub(crate) value: i128,
    pub(crate) kind: ScalarKind,
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
    /// Enumeration constants.
    constants: HashMap<String, Enumerator>,
    /// Declared variables (`extern int x;`): their types, for `sizeof x`.
    variables: HashMap<String, Ty>,
    /// The macros of the headers [`Declarations::add_headers`] preprocessed (shared: cloning
    /// a set for an atomic `add` does not copy them).
    macros: Arc<BTreeMap<String, Macro>>,
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
    /// Typedef names of pointers to a character type (`typedef const char *str;`), for
    /// [`FunctionDecl::returns_c_string`] and [`FunctionDecl::param_is_c_string`].
    c_string_typedefs: HashSet<String>,
    /// Names of functions defined `static` or `inline` with a body (skipped, not declared),
    /// for [`Declarations::is_inline_only`].
    inline_definitions: HashSet<String>,
    /// Typedef names of plain `char` (`typedef char XML_Char;`): pointers to them are C
    /// strings.
    char_typedefs: HashSet<String>,
    /// Pointers carry their pointees as targets ([`Declarations::with_pointer_targets`]).
    pointer_targets: bool,
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

/// A set of parsed C declarations: functions, tagged types, typedefs and enum constants, and
/// in header mode ([`Declarations::from_headers`]) the headers' macros.
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

    /// A set holding only [`STANDARD_TYPEDEFS`] and [`OPAQUE_TYPEDEFS`], whose pointers carry
    /// their pointees as targets ([`ValueLayout::with_target`], Java's restricted
    /// `withTargetLayout`): the one trust step after which C data structures are walked with
    /// no `unsafe` and no raw pointer — a member `struct addrinfo *ai_next` read with
    /// [`Accessor::get_target`](crate::layout::Accessor::get_target) is the next node as a
    /// segment, `char *` members read as C strings, `const char **` arrays with
    /// [`Accessor::null_terminated`](crate::layout::Accessor::null_terminated).
    ///
    /// Every pointer type written in a declaration later [added](Declarations::add) to the set
    /// (members, parameters, return types, typedefs, callbacks) gets a target by C's rules:
    ///
    /// - a pointer to a complete object type `T`: one `T`
    ///   ([`PointerTarget::Layout`](crate::layout::PointerTarget::Layout));
    /// - a pointer to plain `char` (or a typedef of it, like expat's `XML_Char`; not
    ///   `signed char`/`unsigned char`, which are bytes): a NUL-terminated string
    ///   ([`PointerTarget::CString`](crate::layout::PointerTarget::CString));
    /// - a pointer to the struct or union being defined around it (`struct node *next` inside
    ///   `struct node`): [`PointerTarget::Enclosing`](crate::layout::PointerTarget::Enclosing),
    ///   which accessors built from that record (or one holding it) resolve to the record;
    /// - `void *`, function pointers, pointers to incomplete types (declared but not defined at
    ///   that point), to types without a layout, and to layouts at least [`MAX_NESTING`]` / 2`
    ///   levels deep: a plain [`ValueLayout::ADDRESS`].
    ///
    /// An array parameter decays to a pointer to its element (`char *argv[]` is a pointer to
    /// C-string pointers). Redeclarations are compared without targets (a prototype written
    /// before and after its pointee is complete is the same prototype; the later one is kept).
    /// Without this step (every other constructor), pointers are plain addresses and a parsed
    /// descriptor equals the hand-built one.
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// use gatun::layout::PointerTarget;
    /// // SAFETY: every pointer read through these declarations is null or points to what its
    /// // C type says (see `# Safety`); nothing is read here.
    /// let mut d = unsafe { Declarations::with_pointer_targets() };
    /// d.add("struct node { int v; const char *name; struct node *next; void *data; };").unwrap();
    /// let node = d.layout("struct node").unwrap();
    /// let target = |m: &str| node.accessor(m).unwrap().layout().pointer_target().cloned();
    /// assert_eq!(target("name"), Some(PointerTarget::CString));
    /// assert_eq!(target("next"), Some(PointerTarget::Layout(node.clone()))); // resolved
    /// assert_eq!(target("data"), None);
    /// assert!(d.has_pointer_targets());
    /// ```
    ///
    /// # Safety
    /// The promise of [`ValueLayout::with_target`], for every pointer turned into a segment
    /// through a layout or descriptor these declarations give: each such pointer C stores,
    /// returns or passes is null or points to what its C type says — `sizeof(T)` bytes aligned
    /// for `T` for a `T *`, a NUL-terminated string for a `char *`, and a NULL-terminated array
    /// where the program reads one as such — valid for as long as the segments read from it
    /// are used (not freed by C meanwhile: for `getaddrinfo`'s list, until `freeaddrinfo`), and
    /// writable where the program writes through them.
    pub unsafe fn with_pointer_targets() -> Declarations {
        let mut d = Declarations::new();
        d.state.pointer_targets = true;
        d
    }

    /// Whether pointers carry their pointees as targets: this set was made with
    /// [`Declarations::with_pointer_targets`].
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// assert!(!Declarations::new().has_pointer_targets());
    /// ```
    pub fn has_pointer_targets(&self) -> bool {
        self.state.pointer_targets
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

    /// Whether `name` is a function the declarations only *define*, `static` or `inline`
    /// with a body (headers' `static inline` helpers), and never declare with a prototype.
    /// Such a definition's body is skipped and the function is not declared
    /// ([`Declarations::function`] is `None`): no library need export a symbol for it, so
    /// it cannot be linked. `false` once a prototype declares `name` too.
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// let d = Declarations::parse(
    ///     "static inline int twice(int x) { return 2 * x; }
    ///      inline int half(int x) { return x / 2; } int half(int);",
    /// )
    /// .unwrap();
    /// assert!(d.is_inline_only("twice") && d.function("twice").is_none());
    /// assert!(!d.is_inline_only("half")); // also declared by a prototype
    /// assert!(!d.is_inline_only("thrice")); // never mentioned
    /// ```
    pub fn is_inline_only(&self, name: &str) -> bool {
        self.state.inline_definitions.contains(name)
            && !self.state.functions.contains_key(name)
            && !self.state.unlinkable.contains_key(name)
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

    /// Every named constant with its value: the object-like macros whose expansion is a
    /// constant (those of [`Declarations::add_headers`]), in name order, then the
    /// enumeration constants that no macro of the same name hides, in no particular order.
    ///
    /// ```
    /// use gatun::cdecl::{Constant, Declarations};
    /// let d = Declarations::parse("enum { A = 1, B = 4294967295 };").unwrap();
    /// let mut all: Vec<(&str, Constant)> = d.constants().collect();
    /// all.sort_by_key(|(name, _)| *name);
    /// assert_eq!(all, [("A", Constant::I32(1)), ("B", Constant::U32(4294967295))]);
    /// ```
    pub fn constants(&self) -> impl Iterator<Item = (&str, Constant)> {
        let macros = self
            .state
            .macros
            .iter()
            .filter_map(|(k, m)| Some((k.as_str(), m.constant()?.clone())));
        let enums = self
            .state
            .constants
            .iter()
            .filter(|(k, _)| !self.state.macros.contains_key(*k))
            .filter_map(|(k, e)| Some((k.as_str(), enumerator_constant(e)?)));
        macros.chain(enums)
    }

    /// Every macro the headers given to [`Declarations::add_headers`] (or
    /// [`Declarations::from_headers`]) define, the predefined ones included, in name order:
    /// constants with their values, function-like macros, and the object-like macros that are
    /// not constants with the reason.
    ///
    /// ```no_run
    /// use gatun::cdecl::{Declarations, HeaderOptions, MacroKind};
    /// let d = Declarations::from_headers(["jansson.h"], &HeaderOptions::default()).unwrap();
    /// let function_like = d
    ///     .macros()
    ///     .filter(|(_, m)| matches!(m.kind(), MacroKind::FunctionLike { .. }))
    ///     .count();
    /// assert!(function_like > 0); // json_decref(json), JSON_INDENT(n), ...
    /// ```
    pub fn macros(&self) -> impl Iterator<Item = (&str, &Macro)> {
        self.state.macros.iter().map(|(k, m)| (k.as_str(), m))
    }

    /// The macro `name` as the headers define it (see [`Declarations::macros`]); `None` if
    /// they do not define it (or no headers were preprocessed: [`Declarations::parse`] keeps
    /// no macros).
    ///
    /// ```no_run
    /// use gatun::cdecl::{Declarations, HeaderOptions, MacroKind};
    /// let d = Declarations::from_headers(["jansson.h"], &HeaderOptions::default()).unwrap();
    /// let indent = d.macro_definition("JSON_INDENT").unwrap();
    /// assert_eq!(indent.kind(), &MacroKind::FunctionLike { params: vec!["n".into()] });
    /// assert!(Declarations::new().macro_definition("JSON_INDENT").is_none());
    /// ```
    pub fn macro_definition(&self, name: &str) -> Option<&Macro> {
        self.state.macros.get(name)
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

    /// The value of the constant `name`: a macro of the headers whose expansion is a
    /// constant expression (`O_RDONLY`, `SQLITE_OK`, `ZLIB_VERSION`), else an enumeration
    /// constant. A macro hides an enumeration constant of the same name, as in C (glibc's
    /// `#define SOCK_STREAM SOCK_STREAM` expands to the enumeration constant, so both agree).
    /// `None` if `name` is neither, or is a macro that is not a constant
    /// ([`Declarations::macro_definition`] says why).
    ///
    /// ```
    /// use gatun::cdecl::{Constant, Declarations};
    /// let d = Declarations::parse("enum big { SMALL = 1, HUGE = 1LL << 40 };").unwrap();
    /// assert_eq!(d.constant("SMALL"), Some(Constant::I32(1)));
    /// // An enumerator that does not fit in `int` has the enumeration's type (GCC).
    /// assert_eq!(d.constant("HUGE"), Some(Constant::I64(1 << 40)));
    /// assert_eq!(d.constant("NOPE"), None);
    /// ```
    pub fn constant(&self, name: &str) -> Option<Constant> {
        if let Some(m) = self.state.macros.get(name) {
            return m.constant().cloned();
        }
        self.state.constants.get(name).and_then(enumerator_constant)
    }

    /// The value of the integer constant `name` (see [`Declarations::constant`]) if it fits in
    /// `i64`; `None` for other constants and names.
    ///
    /// ```
    /// use gatun::cdecl::Declarations;
    /// let d = Declarations::parse("enum { EIGHT = sizeof(double) };").unwrap();
    /// assert_eq!(d.constant_i64("EIGHT"), Some(8));
    /// ```
    pub fn constant_i64(&self, name: &str) -> Option<i64> {
        self.constant(name)?.as_i64()
    }
}

/// An enumeration constant as a [`Constant`] of its type.
fn enumerator_constant(e: &Enumerator) -> Option<Constant> {
    let ty = parser::IntTy::of_kind(e.kind)?;
    parser::Val::Int(parser::CVal::wrap(e.value, ty))
        .to_constant()
        .ok()
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

/// Whether two declarations of a type agree, pointer targets aside: a declaration made before
/// a pointee is complete (a plain address) and one made after it (a pointer with a target)
/// declare the same type.
pub(crate) fn same_declared_ty(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Object(x), Ty::Object(y)) => crate::layout::same_declaration(x, y),
        (Ty::Func(x), Ty::Func(y)) => same_declared_fn(x, y),
        _ => a == b,
    }
}

/// [`same_declared_ty`] for function types.
fn same_declared_fn(a: &FnTy, b: &FnTy) -> bool {
    a.variadic == b.variadic
        && same_declared_ty(&a.ret, &b.ret)
        && a.params.len() == b.params.len()
        && a.params
            .iter()
            .zip(&b.params)
            .all(|((n, x), (m, y))| n == m && same_declared_ty(x, y))
        && a.callbacks.len() == b.callbacks.len()
        && a.callbacks.iter().zip(&b.callbacks).all(|pair| match pair {
            (Some(x), Some(y)) => same_declared_fn(x, y),
            (x, y) => x.is_none() && y.is_none(),
        })
}

/// [`same_declared_ty`] for descriptors.
pub(crate) fn same_declared_descriptor(a: &FunctionDescriptor, b: &FunctionDescriptor) -> bool {
    let same = |x: &MemoryLayout, y: &MemoryLayout| crate::layout::same_declaration(x, y);
    match (a.return_layout(), b.return_layout()) {
        (Some(x), Some(y)) if same(x, y) => {}
        (None, None) => {}
        _ => return false,
    }
    a.argument_layouts().len() == b.argument_layouts().len()
        && a.argument_layouts()
            .iter()
            .zip(b.argument_layouts())
            .all(|(x, y)| same(x, y))
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
