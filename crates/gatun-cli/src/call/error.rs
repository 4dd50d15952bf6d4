//! [`CallError`], everything `gatun call` rejects, and [`LiteralError`], a malformed brace
//! literal. Each variant names the offending value and what was expected; its `Display` text
//! is the one line `gatun` prints on stderr (`gatun: MESSAGE`, or `{"error": "MESSAGE"}` with
//! `--json`) before exiting with status 2.

use gatun::cdecl::CdeclError;
use gatun::layout::{MemoryLayout, ScalarKind};

use crate::headers::HeadersError;

/// Why `gatun call` could not parse its declaration, build its arguments, link or call.
///
/// Argument numbers (`argument`) count from 1, as the user does.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// A header given with `-i` did not preprocess or parse.
    #[error(transparent)]
    Headers(#[from] HeadersError),

    /// The declaration is a bare function name, but no header was given to declare it.
    #[error(
        "`{name}` is only a name: give its prototype (`int abs(int)`), or the header that \
         declares it with -i HEADER"
    )]
    OnlyAName {
        /// The name as typed.
        name: String,
    },

    /// The declaration is a bare function name the headers do not declare.
    #[error("`{name}` is not declared")]
    NotDeclared {
        /// The name as typed.
        name: String,
    },

    /// The headers declare the named function with a type gatun cannot pass.
    #[error("{error} (in {headers})")]
    NotCallableInHeaders {
        /// Why the function cannot be called.
        error: gatun::Error,
        /// The headers given with `-i`, comma separated.
        headers: String,
    },

    /// The declaration does not parse; shown as `LINE:COLUMN: error: MESSAGE`, positioned in
    /// the text as typed.
    #[error("{}", .0.summary())]
    Declaration(CdeclError),

    /// The declaration declares no function (only types, or variables).
    #[error("`{decl}` declares no function")]
    NoFunction {
        /// The declaration as typed.
        decl: String,
    },

    /// The declaration declares more than one function; exactly one is called.
    #[error(
        "`{decl}` declares {} functions ({}); give exactly one prototype to call",
        .functions.len(),
        quoted_list(.functions)
    )]
    SeveralFunctions {
        /// The declaration as typed.
        decl: String,
        /// The names of the functions it declares, in order.
        functions: Vec<String>,
    },

    /// Fewer argument words than the function has fixed parameters, or more for a function
    /// that is not variadic.
    #[error(
        "wrong argument count: `{function}` takes {}{fixed} argument{}, {given} given",
        if *.variadic { "at least " } else { "" },
        if *.fixed == 1 { "" } else { "s" }
    )]
    ArgumentCount {
        /// The function's name.
        function: String,
        /// How many fixed parameters it has.
        fixed: usize,
        /// Whether it takes more arguments after those (`...`).
        variadic: bool,
        /// How many argument words were given.
        given: usize,
    },

    /// A number for an integer parameter that is not an integer (`1.5`, `1e3`, `inf`).
    #[error("argument {argument}: `{text}` is not an integer (the type is {kind})")]
    NotAnInteger {
        /// The argument's position, from 1.
        argument: usize,
        /// The word, trimmed.
        text: String,
        /// The parameter's type.
        kind: ScalarKind,
    },

    /// A word that is not a number for an integer parameter.
    #[error(
        "argument {argument}: expected an integer ({kind}), found `{text}` (non-numeric argument)"
    )]
    NonNumericInteger {
        /// The argument's position, from 1.
        argument: usize,
        /// The word as given.
        text: String,
        /// The parameter's type.
        kind: ScalarKind,
    },

    /// An integer outside the range of its parameter's type.
    #[error("argument {argument}: {value} is out of range for {kind} ({min}..={max})")]
    IntegerOutOfRange {
        /// The argument's position, from 1.
        argument: usize,
        /// The integer given.
        value: i128,
        /// The parameter's type.
        kind: ScalarKind,
        /// The type's smallest value.
        min: i128,
        /// The type's largest value.
        max: i128,
    },

    /// A word other than `true`, `false`, `1`, `0` for a `bool` parameter.
    #[error("argument {argument}: expected true/false/1/0, found `{text}`")]
    NotABool {
        /// The argument's position, from 1.
        argument: usize,
        /// The word as given.
        text: String,
    },

    /// A word that is not a number for a floating-point parameter.
    #[error(
        "argument {argument}: expected a number ({kind}), found `{text}` (non-numeric argument)"
    )]
    NonNumeric {
        /// The argument's position, from 1.
        argument: usize,
        /// The word as given.
        text: String,
        /// The parameter's type.
        kind: ScalarKind,
    },

    /// A finite number too large for its floating-point type (`1e999` for a `double`), which
    /// would otherwise silently become an infinity.
    #[error(
        "argument {argument}: `{text}` is out of range for {type_name} (magnitude at most \
         {max:e}; write `inf` for an infinity)"
    )]
    FloatOutOfRange {
        /// The argument's position, from 1.
        argument: usize,
        /// The word, trimmed.
        text: String,
        /// The C type: `float` or `double`.
        type_name: &'static str,
        /// The type's largest finite magnitude.
        max: f64,
    },

    /// A quoted string in a brace literal where a number belongs.
    #[error("argument {argument}: expected a number ({kind}), found the string \"{text}\"")]
    StringForNumber {
        /// The argument's position, from 1.
        argument: usize,
        /// The string, without its quotes.
        text: String,
        /// The member's type.
        kind: ScalarKind,
    },

    /// A word starting with `[` that is not a `[N]` buffer with `N` a number of at most
    /// 2^30.
    #[error(
        "argument {argument}: bad buffer size in `{text}` (expected `[N]`, N <= 2^30; to pass \
         the text as a string, put it after `--`)"
    )]
    BufferSize {
        /// The argument's position, from 1.
        argument: usize,
        /// The word as given (`[N]`).
        text: String,
    },

    /// A `&TYPE` out-parameter whose type does not resolve (not declared, a typo, an
    /// incomplete type): nothing is called, rather than the text being passed as a string
    /// the callee would write past.
    #[error(
        "argument {argument}: '{text}': {reason}; nothing was called (to pass the text as a \
         string, put it after `--`)"
    )]
    Unresolved {
        /// The argument's position, from 1.
        argument: usize,
        /// The word as given.
        text: String,
        /// Why the type does not resolve, with what to add (`struct stat is not declared
        /// (add -i sys/stat.h)`).
        reason: String,
    },

    /// A type name (`int`, `struct stat`) given for a pointer to something other than a
    /// character type: an out-parameter written without its `&`.
    #[error(
        "argument {argument}: `{text}` names a type, and the parameter is not a string: write \
         `&{text}` for an out-parameter (to pass the text as a string, put it after `--`)"
    )]
    TypeNameForPointer {
        /// The argument's position, from 1.
        argument: usize,
        /// The word, trimmed.
        text: String,
    },

    /// The headers define the named function `static inline`: it has no symbol to call.
    #[error(
        "`{name}` is static inline in the header ({headers}), not exported by any library: \
         there is no symbol to call"
    )]
    InlineOnly {
        /// The function's name.
        name: String,
        /// The headers, comma separated.
        headers: String,
    },

    /// The symbol of a function the headers declare was not found, and no library was given:
    /// the message says to add `-l LIBRARY`.
    #[error("{error} (the headers declare it; add -l LIBRARY, the library that exports it{hint})")]
    SymbolNotFound {
        /// What the lookup reported.
        error: gatun::Error,
        /// `, e.g. -l libz.so.1` for a header of a known library, else empty.
        hint: String,
    },

    /// A brace literal given for a pointer parameter.
    #[error("argument {argument}: a struct literal cannot be passed for a pointer parameter")]
    StructForPointer {
        /// The argument's position, from 1.
        argument: usize,
    },

    /// An out-parameter `&TYPE` of an incomplete (zero-size) type.
    #[error("argument {argument}: `&{ty}` has size 0; an out-parameter needs a complete type")]
    EmptyOutParameter {
        /// The argument's position, from 1.
        argument: usize,
        /// The type as written.
        ty: String,
    },

    /// An out-parameter `&TYPE` over 2^30 bytes.
    #[error(
        "argument {argument}: `&{ty}` is {size} bytes; an out-parameter may be at most 2^30 bytes"
    )]
    OutParameterTooLarge {
        /// The argument's position, from 1.
        argument: usize,
        /// The type as written.
        ty: String,
        /// The type's size, in bytes.
        size: usize,
    },

    /// A by-value struct, union or array argument over 2^30 bytes.
    #[error(
        "argument {argument}: a by-value argument of {size} bytes; at most 2^30 are supported"
    )]
    ByValueTooLarge {
        /// The argument's position, from 1.
        argument: usize,
        /// The argument type's size, in bytes.
        size: usize,
    },

    /// A malformed brace literal.
    #[error("argument {argument}: {error}")]
    Literal {
        /// The argument's position, from 1.
        argument: usize,
        /// What is wrong with it.
        error: LiteralError,
    },

    /// Braces around a scalar member holding more than one value (`{{1, 2}}` for an `int`).
    #[error(
        "argument {argument}: braces around a scalar ({layout}) hold one value, found {count}"
    )]
    BracedScalar {
        /// The argument's position, from 1.
        argument: usize,
        /// The scalar's layout.
        layout: Box<MemoryLayout>,
        /// How many values the braces hold.
        count: usize,
    },

    /// More values in a brace literal than the struct, union or array takes.
    #[error(
        "argument {argument}: too many values in the literal: {given} given, the {aggregate} \
         takes {takes}"
    )]
    TooManyValues {
        /// The argument's position, from 1.
        argument: usize,
        /// How many values the braces hold.
        given: usize,
        /// `struct`, `union` or `array`.
        aggregate: &'static str,
        /// How many of them it takes.
        takes: usize,
    },

    /// A word where a struct, union or array (other than a char array) needs braces.
    #[error(
        "argument {argument}: expected a brace literal like {{1, 2}} for {layout}, found `{text}`"
    )]
    ExpectedBraces {
        /// The argument's position, from 1.
        argument: usize,
        /// The member's layout.
        layout: Box<MemoryLayout>,
        /// The word as given.
        text: String,
    },

    /// A string longer than the char array it initializes.
    #[error("argument {argument}: \"{text}\" does not fit in char[{capacity}]")]
    StringTooLong {
        /// The argument's position, from 1.
        argument: usize,
        /// The string.
        text: String,
        /// The array's length, in bytes.
        capacity: usize,
    },

    /// A variadic integer beyond both `i64` and `u64`.
    #[error("argument {argument}: {value} does not fit in 64 bits")]
    VariadicTooWide {
        /// The argument's position, from 1.
        argument: usize,
        /// The integer given.
        value: i128,
    },

    /// A brace literal given as a variadic argument (its type is unknown).
    #[error("argument {argument}: struct literals cannot be variadic arguments")]
    VariadicStruct {
        /// The argument's position, from 1.
        argument: usize,
    },

    /// What gatun reported: a library or symbol not found, a descriptor the ABI rejects, an
    /// allocation failure, a failed call.
    #[error(transparent)]
    Gatun(#[from] gatun::Error),
}

/// What is wrong with a brace literal (`{1.5, {2, 3}, "a, b"}`); [`CallError::Literal`]
/// names the argument.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LiteralError {
    /// Text follows the complete literal (`{1} x`).
    #[error("unexpected text after the literal in `{text}`")]
    TrailingText {
        /// The whole literal as given.
        text: String,
    },
    /// Braces nested more than 64 levels.
    #[error(
        "struct literal nested more than {} levels deep",
        super::literal::MAX_DEPTH
    )]
    TooDeep,
    /// The input ends inside braces.
    #[error("unterminated struct literal: missing `}}`")]
    Unterminated,
    /// Something other than `,` or `}` after an element.
    #[error("expected `,` or `}}` in struct literal, found `{found}`")]
    ExpectedSeparator {
        /// The character found.
        found: char,
    },
    /// The input ends inside a quoted string.
    #[error("unterminated string in struct literal")]
    UnterminatedString,
    /// An element with no text (`{1, , 2}`).
    #[error("empty element in struct literal")]
    EmptyElement,
}

/// `` `a`, `b` ``: each name in backquotes, comma separated.
fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
