//! `gatun call [-l LIB]... [-i HEADER]... [-D NAME[=VALUE]]... [-I DIR]... [-include FILE]...
//! [--errno] [--json] [--hex] 'DECL' ARGS... [-- TEXT...]`: declare a C function with a
//! prototype, link it with `gatun::Linker` and call it with arguments written as text.
//!
//! - `DECL` is parsed by `gatun::cdecl` (a trailing `;` is optional; struct definitions may
//!   precede the prototype). With `-i HEADER` (repeatable) the headers are preprocessed by the
//!   system C compiler first and their declarations are available; `DECL` may then be just
//!   the name of a function they declare (`gatun call -l libz.so.1 -i zlib.h crc32 0 hello
//!   5`). `-D NAME[=VALUE]`, `-I DIR` and `-include FILE` are passed to the preprocessor
//!   (`gatun call -D _GNU_SOURCE -i string.h strcasestr Hello ELL`). The symbol is looked up
//!   in the `-l` libraries (sonames or paths, in order), then in the default lookup (the
//!   process, libc, libm); a function the headers declare but no library given exports is
//!   reported with a hint to add `-l`, one the headers only define `static inline` as such.
//! - Arguments: integers (`42`, `-1`, `0x10`), floating point (`1.5`, `1e3`), `true`/`false`,
//!   `NULL` (a floating-point parameter also takes integers, `0x10` included), or the name of a
//!   constant the declarations define: an enumeration constant, or a macro of the `-i` headers
//!   that expands to a constant (`open /etc/passwd O_RDONLY`, `uv_handle_size UV_TIMER`; a
//!   pointer parameter takes string and address macros, a variadic argument gets the
//!   constant's own type); any other text
//!   given for a pointer parameter is passed as a NUL-terminated string; `[N]` passes a zeroed
//!   buffer of N bytes (printed after the call: as a string when it holds text, as hex bytes
//!   otherwise or with `--hex`); `&TYPE` (`&int`, `&double`, `&char *`, `&struct tm`) passes
//!   the address of a zeroed `TYPE`, `&TYPE=VALUE` of an initialized one, and prints its
//!   value after the call (a pointer to a character type as its string); a struct or union
//!   by value is a literal in braces (`'{1.5, 2}'`; nested braces for nested members and
//!   arrays, which may be left out as in C: `{1, 2, 3}` for `struct { int a[2]; int b; }`;
//!   a union takes its first member, missing members are zero). Variadic arguments get their
//!   type from their text: integer → `int` (or `long` if it does not fit), floating →
//!   `double`, anything else → string.
//! - A word for a pointer that starts with `&`, `[` or `{` and is not a valid out-parameter
//!   (its type not declared, a typo), buffer or pointer is an error, and nothing is called:
//!   passed as a string, the callee would write past it. So is a type name (`int`, `struct
//!   stat`) for a pointer to anything but a character type: an out-parameter without its `&`.
//!   After `--`, words for pointer parameters and variadic arguments are passed as text,
//!   whatever they look like (`-- '&not an out-parameter'`); numbers and by-value structs are
//!   read as before.
//! - The result is printed as a number, `true`/`false`, an address (`0x...`, `NULL`), a string
//!   (for a return type written as a pointer to a character type, `char *`, `const unsigned
//!   char *` or a typedef of one, in the prototype or the header) or a struct with its
//!   members' names, as gdb prints it (`{quot = 3, rem = 2}`; bit-fields by name; in JSON an
//!   object keyed by member name); `--errno` captures `errno` and prints `-1 (errno 2: No such
//!   file or directory)`; `--json` prints one JSON object (and an error as `{"error":
//!   "MESSAGE"}` on stderr). Floating-point numbers are written the same way in text and
//!   JSON: their shortest round-trip digits, in plain or exponent notation, whichever is
//!   shorter (`0.1`, `1024`, `1e6`, `1e300`); in JSON, NaN and infinities are the strings
//!   `"NaN"`, `"inf"` and `"-inf"`.
//! - Options may also follow the declaration or the arguments ([`hoist_options`]); an unknown
//!   option is an error wherever it appears; after `--` every word is an argument. C's stdio
//!   is flushed (`fflush(NULL)`) after the call, so what the function printed comes before
//!   the result, which starts on a line of its own: a newline is printed first when the
//!   function's output did not end one ([`stdout`] says how that is known).
//! - Exit status 0 when the call completed; 2 with one line on stderr for any bad input
//!   ([`CallError`]: unknown type, missing symbol or library, wrong argument count,
//!   non-numeric argument, an out-parameter type that does not resolve, ...).
//!
//! The files, in the order a call goes through them: `prototype.rs` (the declaration),
//! `literal.rs` (numbers and brace literals as text), `values.rs` (argument words to values
//! and segments, [`prepare_call`]), `fill.rs` (brace literals written into memory), this file
//! (link and call, [`run`]), `stdout.rs` (standard output watched during the call),
//! `render.rs` (the text or JSON printed after the call); `options.rs` orders the command
//! line before clap reads it, `error.rs` holds [`CallError`].

mod error;
mod fill;
mod literal;
mod options;
mod prototype;
mod render;
pub mod stdout;
mod values;

use clap::Args;
use gatun::layout::ValueLayout;
use gatun::linker::SymbolLookup;
use gatun::memory::Arena;
use gatun::{FunctionDescriptor, Linker, Value};

pub use error::{CallError, LiteralError};
pub use options::hoist_options;
pub use prototype::parse_prototype;
pub use values::{prepare_call, split_argument_words, Out, PreparedCall, LITERAL_TEXT_FROM};

use crate::headers::{library_hint, HeaderArgs};
use crate::layout_cmd::named_record_bitfields;

use render::{buffer_contents, show_out, show_result, Report};

/// Arguments of `gatun call`.
#[derive(Args, Debug)]
pub struct CallArgs {
    /// A library to search before the default ones (soname like `libz.so.1`, or a path).
    /// Repeatable.
    #[arg(short = 'l', long = "lib", value_name = "LIB")]
    pub libs: Vec<String>,
    /// The headers whose declarations the call may use (the declaration may then be just a
    /// function name), and the preprocessor's options for them.
    #[command(flatten)]
    pub headers: HeaderArgs,
    /// Capture `errno` right after the call and print it with its message.
    #[arg(long)]
    pub errno: bool,
    /// Print JSON instead of text. Errors are then one JSON object on stderr,
    /// `{"error": "MESSAGE"}` (stdout stays empty; exit status 2).
    #[arg(long)]
    pub json: bool,
    /// Print every `[N]` buffer as hex bytes (buffers that do not hold text always are).
    #[arg(long)]
    pub hex: bool,
    /// The C prototype, e.g. `size_t strlen(const char *)`.
    pub decl: String,
    /// The arguments, one per parameter (more for a variadic function); after a `--`, words
    /// for pointer parameters and variadic arguments are passed as text.
    #[arg(allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// Runs `gatun call`: parses the declaration, links the function from the `-l` libraries
/// (then the default lookup), builds the arguments ([`prepare_call`]), calls it, flushes C's
/// stdio and prints the result, `errno`, buffers and out-parameters on stdout (the result on
/// a line of its own, see [`stdout`]).
///
/// # Errors
/// Any [`CallError`]; `gatun` prints it as one line on stderr and exits with status 2.
pub fn run(args: &CallArgs) -> Result<(), CallError> {
    let (decls, f) = parse_prototype(&args.decl, &args.headers)?;

    let mut lookup: Option<SymbolLookup> = None;
    for lib in &args.libs {
        // SAFETY: loading runs the library's initialisers; naming a library on the command line
        // asserts that this is sound, as with any C program that links it.
        let l = unsafe { SymbolLookup::library(lib) }?;
        lookup = Some(match lookup {
            Some(prev) => prev.or(l),
            None => l,
        });
    }
    let lookup = match lookup {
        Some(l) => l.or(SymbolLookup::default_lookup()),
        None => SymbolLookup::default_lookup(),
    };
    let symbol = lookup.find(f.symbol()).map_err(|error| {
        // A function from the headers whose library was not given: say to give it.
        if args.headers.is_active() && args.libs.is_empty() {
            let hint = args
                .headers
                .includes
                .iter()
                .find_map(|h| library_hint(h))
                .map_or(String::new(), |lib| format!(", e.g. -l {lib}"));
            CallError::SymbolNotFound { error, hint }
        } else {
            CallError::Gatun(error)
        }
    })?;

    let arena = Arena::confined();
    let PreparedCall {
        descriptor,
        values,
        options,
        capture,
        buffers,
        outs,
    } = prepare_call(&decls, &f, &args.args, args.errno, &arena)?;
    let handle = Linker::native().downcall(&symbol, &descriptor, &options)?;
    let watch = stdout::Watch::start();
    // SAFETY: the user declared the function's type and chose its arguments; as with a C
    // program calling it, that declaration is the contract. Strings and buffers live in
    // `arena` until after the call.
    let result = unsafe { handle.invoke_into(&arena, &values) };
    // What the function printed through C's stdio (`printf`) comes before the result, which
    // starts on a line of its own.
    let (flushed, unterminated) = watch.finish(flush_c_stdio);
    let result = result?;
    flushed?;

    let bits = descriptor
        .return_layout()
        .map_or(Vec::new(), |l| named_record_bitfields(&decls, l));
    // SAFETY: the prototype (typed or from a header) says whether the function returns a
    // `char *`, i.e. a NUL-terminated string (or NULL); that declaration is the contract.
    let result = unsafe { show_result(&result, &descriptor, f.returns_c_string(), &bits) };
    let report = Report {
        function: &f.name,
        descriptor: &descriptor,
        result,
        errno: capture.map(|seg| seg.get::<i32>(0).unwrap_or(0)),
        // `[N]` buffers: text when they hold text (then NULs), hex otherwise or with `--hex`.
        buffers: buffers
            .iter()
            .map(|(i, seg)| (*i, buffer_contents(&seg.to_vec(), args.hex)))
            .collect(),
        // `&TYPE` out-parameters: their value after the call, shown by type.
        outs: outs
            .iter()
            .map(|o| {
                // SAFETY: `c_string` says the declared type is a pointer to a character type:
                // the out-parameter was NULL before the call, and the declaration says the
                // function stores NULL or the address of a NUL-terminated string there.
                let value = unsafe { show_out(o.seg, o.c_string, &o.layout, &o.bits) };
                (o.index, o.ty.as_str(), value)
            })
            .collect(),
    };
    let mut text = report.render(args.json);
    if unterminated && !text.is_empty() {
        text.insert(0, '\n');
    }
    print!("{text}");
    Ok(())
}

/// Flushes every C stdio output stream (`fflush(NULL)`, called through gatun), so output the
/// called function buffered in C's `stdout` is written before gatun prints the result.
fn flush_c_stdio() -> Result<(), CallError> {
    let fflush = SymbolLookup::default_lookup().find("fflush")?;
    let descriptor = FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::ADDRESS]);
    let handle = Linker::native().downcall(&fflush, &descriptor, &[])?;
    // SAFETY: `int fflush(FILE *)` with NULL flushes all output streams (C11 7.21.5.2) and
    // dereferences no argument.
    unsafe { handle.invoke(&[Value::Address(std::ptr::null_mut())]) }?;
    Ok(())
}
