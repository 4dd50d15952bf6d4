//! `gatun`: the command line of the gatun FFI library.
//!
//! - `gatun bench`: run the benchmark suite and print a JMH-style table.
//! - `gatun call [-l LIB]... 'DECL' ARGS...`: declare a C function and call it.
//! - `gatun layout DECL`: size, alignment, field offsets, padding holes and the SysV
//!   classification of a C type.

mod bench;
mod call_cmd;
mod layout_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Print the layout of a C type: size, alignment, field offsets and sizes, padding holes,
    /// and (on x86-64) the SysV classification of each eightbyte.
    Layout(layout_cmd::LayoutArgs),
    /// Declare a C function with a prototype and call it: `gatun call 'size_t strlen(const
    /// char *)' hello` prints 5. Exit status 0 when the call completed, 2 on bad input.
    #[command(
        after_help = "Arguments, one per parameter (more for a variadic function):\n  \
        integers: 42, -1, 0x10; floating point: 1.5, 1e3 (a floating-point parameter also \
        takes integers); true, false; NULL\n  \
        text for a pointer parameter: passed as a NUL-terminated string\n  \
        [N]: a zeroed buffer of N bytes, printed as a string after the call\n  \
        '{1.5, 2}': a struct or union by value (nested braces for nested members and arrays; \
        a union takes its first member; missing members are zero)\n  \
        variadic arguments: integer -> int (long if it does not fit), floating -> double, \
        anything else -> string\n\n\
        Options (-l, --errno, --json) may come before or after the declaration. Negative \
        numbers (-5, -1.5) after the declaration are arguments; after `--` every word is an \
        argument (to pass text such as `--json` or `-lx` to a `char *` parameter). A \
        declaration must declare exactly one function (struct definitions may precede it)."
    )]
    Call(call_cmd::CallArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(call_cmd::hoist_options(std::env::args_os().collect()));
    let result = match cli.command {
        Command::Bench(args) => bench::run(&args),
        Command::Layout(args) => layout_cmd::run(&args),
        Command::Call(args) => call_cmd::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("gatun: {message}");
            ExitCode::from(2)
        }
    }
}
