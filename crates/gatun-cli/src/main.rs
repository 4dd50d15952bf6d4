//! `gatun`: the command line of the gatun FFI library.
//!
//! - `gatun bench`: run the benchmark suite and print a JMH-style table.
//! - `gatun call [-l LIB]... [-i HEADER]... [-D NAME[=VALUE]]... [-I DIR]... 'DECL' ARGS...`:
//!   declare a C function (or name one a header declares) and call it.
//! - `gatun layout [-i HEADER]... DECL`: size, alignment, field offsets, bit-fields, padding
//!   holes and the argument classification of a C type (SysV on x86-64, AAPCS64 on AArch64).

mod bench;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use gatun_cli::{call, layout_cmd};

#[global_allocator]
static ALLOC: gatun_bench::CountingAllocator = gatun_bench::CountingAllocator;

/// gatun: foreign function & memory for Rust.
#[derive(Parser)]
#[command(name = "gatun", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the benchmark suite (quick mode by default) and print a JMH-style table.
    Bench(bench::BenchArgs),
    /// Print the layout of a C type: size, alignment, field offsets and sizes, bit-fields
    /// (byte offset, bit offset, width), padding holes, and the ABI's classification: on x86-64 the SysV class of each eightbyte, on AArch64
    /// the AAPCS64 (Linux) argument class.
    Layout(layout_cmd::LayoutArgs),
    /// Declare a C function with a prototype and call it: `gatun call 'size_t strlen(const
    /// char *)' hello` prints 5. Exit status 0 when the call completed, 2 on bad input.
    #[command(
        after_help = "Arguments, one per parameter (more for a variadic function):\n  \
        integers: 42, -1, 0x10; floating point: 1.5, 1e3 (a floating-point parameter also \
        takes integers); true, false; NULL\n  \
        text for a pointer parameter: passed as a NUL-terminated string\n  \
        [N]: a zeroed buffer of N bytes, printed after the call (as a string when it holds \
        text, else as hex bytes; --hex: always hex)\n  \
        &TYPE, &TYPE=VALUE: the address of a zeroed (initialized) TYPE (&int, &double, \
        &char *, &struct tm), whose value is printed after the call\n  \
        '{1.5, 2}': a struct or union by value (nested braces for nested members and arrays, \
        which may be left out as in C; a union takes its first member; missing members are \
        zero)\n  \
        variadic arguments: integer -> int (long if it does not fit), floating -> double, \
        anything else -> string\n  \
        A word starting with &, [ or { that does not resolve (&struct stat without its \
        header, a typo) is an error and nothing is called; so is a type name for a pointer to \
        a non-character type. After `--`, words for pointer parameters and variadic \
        arguments are passed as text, whatever they look like.\n\n\
        With -i HEADER (repeatable) the header's declarations are available, and the \
        declaration may be just a function name: gatun call -l libz.so.1 -i zlib.h crc32 0 \
        hello 5. -D NAME[=VALUE], -I DIR and -include FILE are passed to the C \
        preprocessor: gatun call -D _GNU_SOURCE -i string.h strcasestr Hello ELL.\n\n\
        Options (-l, -i, -D, -I, -include, --errno, --json, --hex) may come before or after \
        the declaration; an unknown option is an error anywhere. Negative numbers (-5, -1.5) \
        are arguments; after `--` every word is an argument (to pass text such as `--json` or \
        `-lx` to a `char *` parameter). Structs print with their members' names ({quot = 3, \
        rem = 2}; JSON objects); floating-point numbers print in their shortest round-trip \
        form, plain or with an exponent, whichever is shorter, alike in text and --json \
        (where NaN and infinities are the strings \"NaN\", \"inf\", \"-inf\"). The result \
        starts on a line of its own. A declaration must declare exactly one function (struct \
        definitions may precede it)."
    )]
    Call(call::CallArgs),
}

/// Help and version go to stdout as clap prints them; a usage error (an unknown option, a
/// missing declaration, an extra argument) is one error line on stderr with exit status 2,
/// like every other bad input.
fn usage_error(e: clap::Error, sub: Option<&str>, json: bool) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    fail(&usage_message(&e, sub), json)
}

/// A clap error as one complete line: what is wrong, and the usage when that helps.
fn usage_message(e: &clap::Error, sub: Option<&str>) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    // The subcommand's full usage (clap's error context names only the required arguments).
    let mut cli = Cli::command();
    cli.build();
    let usage = match sub.and_then(|s| cli.find_subcommand_mut(s)) {
        Some(c) => Some(c.render_usage().to_string()),
        None => match e.get(ContextKind::Usage) {
            Some(ContextValue::StyledStr(u)) => Some(u.to_string()),
            _ => None,
        },
    };
    let usage = match usage {
        Some(u) => {
            let u = u.trim();
            format!(" (usage: {})", u.strip_prefix("Usage:").unwrap_or(u).trim())
        }
        None => String::new(),
    };
    let invalid = e.get(ContextKind::InvalidArg);
    match (e.kind(), invalid) {
        (ErrorKind::MissingRequiredArgument, Some(ContextValue::Strings(missing))) => {
            let plural = if missing.len() == 1 { "" } else { "s" };
            format!(
                "missing required argument{plural} {}{usage}",
                missing.join(", ")
            )
        }
        (ErrorKind::UnknownArgument, Some(ContextValue::String(arg)))
            if !arg.starts_with('-') || arg == "-" =>
        {
            format!("unexpected extra argument '{arg}'{usage}")
        }
        (ErrorKind::UnknownArgument, Some(ContextValue::String(arg))) => {
            format!(
                "unknown option '{arg}' (to pass `{arg}` as an argument, put it after `--`){usage}"
            )
        }
        _ => {
            // Clap's first line ("error: ..."), then the usage.
            let rendered = e.render().to_string();
            let first = rendered
                .lines()
                .next()
                .unwrap_or("invalid command line")
                .trim_start_matches("error: ")
                .to_string();
            format!("{first}{usage}")
        }
    }
}

/// Reports an error: `gatun: MESSAGE` on stderr, or with `--json` the JSON object
/// `{"error": "MESSAGE"}` on stderr (one line either way, stdout stays empty); exit status 2.
fn fail(message: &str, json: bool) -> ExitCode {
    if json {
        eprintln!("{}", serde_json::json!({ "error": message }));
    } else {
        eprintln!("gatun: {message}");
    }
    ExitCode::from(2)
}

/// Whether `gatun call` or `gatun layout` has the `--json` flag: before a `--` (after which
/// every word is an argument; `gatun call` puts its options before one, see
/// `hoist_options`). `gatun bench --json PATH` names a file, so its errors stay text.
fn wants_json(argv: &[OsString]) -> bool {
    matches!(
        argv.get(1).and_then(|a| a.to_str()),
        Some("call" | "layout")
    ) && argv
        .iter()
        .skip(2)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json")
}

fn main() -> ExitCode {
    let argv = call::hoist_options(std::env::args_os().collect());
    let json = wants_json(&argv);
    let sub = argv.get(1).and_then(|a| a.to_str()).map(str::to_string);
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => return usage_error(e, sub.as_deref(), json),
    };
    match cli.command {
        Command::Bench(args) => exit(bench::run(&args), json),
        Command::Layout(args) => exit(layout_cmd::run(&args), json),
        Command::Call(args) => exit(call::run(&args), json),
    }
}

/// A subcommand's outcome as the exit status: 0 on success, else the error's text reported
/// by [`fail`] (status 2).
fn exit<E: std::fmt::Display>(result: Result<(), E>, json: bool) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e.to_string(), json),
    }
}
