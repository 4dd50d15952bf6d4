//! `gatun`: the command line of the gatun FFI library.
//!
//! - `gatun bench`: run the benchmark suite and print a JMH-style table.

mod bench;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("gatun: {message}");
            ExitCode::from(2)
        }
    }
}
