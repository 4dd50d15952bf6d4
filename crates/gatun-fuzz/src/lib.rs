//! The per-input checks of gatun's coverage-guided fuzz targets, shared by the libFuzzer
//! targets in `fuzz/` (run with `cargo +nightly fuzz run TARGET`) and by `tests/replay.rs`,
//! which replays the checked-in corpora (`fuzz/corpus/TARGET/`, `fuzz/regressions/TARGET/`)
//! in a normal `cargo test`.
//!
//! Each `check_*` function takes the fuzzer's raw bytes, drives one part of gatun with them
//! and panics (the fuzzer's "crash") when an invariant does not hold:
//!
//! - [`check_cdecl`]: the bytes as C declarations (`gatun::cdecl::Declarations::parse`); every
//!   declared function, tag and typedef is looked up, formatted, hashed, classified, planned
//!   (SysV x86-64) and its machine code generated (never mapped nor called); every layout is
//!   rendered as `gatun layout` renders it.
//! - [`check_layout`]: the bytes as an [`arbitrary`] description of a layout tree (shared
//!   sub-layouts, deep nesting, zero and huge counts and sizes), built through the public
//!   `MemoryLayout` constructors, then formatted, hashed, compared, path-selected, classified,
//!   planned, linked as a downcall to a no-op function (never called) and as an upcall stub
//!   (whose closure is never called).
//! - [`check_cli_args`]: the bytes as a `gatun call` / `gatun layout` command line (words
//!   separated by NUL bytes), parsed as the binary parses it (option hoisting, clap, the
//!   prototype, the argument literals into values and segments); nothing is loaded, linked
//!   or called.
//!
//! Invariants beyond "no panic": results are consistent (a struct's size covers its members'
//! ends, alignments are powers of two, a classification has one class per eightbyte, a call
//! plan has one entry per argument with moves of 1 to 8 bytes), equal layouts hash equally, and
//! error messages stay within [`message_limit`] of the input's size. Time is bounded by the
//! fuzzer's `-timeout` (seconds per input; see README's "Fuzzing"); the checks reject inputs
//! over [`MAX_INPUT_BYTES`] and bound their own work (node counts, visit budgets), so a slow
//! input means slow library code.
//!
//! All functions are safe to call from any thread; each input is independent (the only state
//! kept between inputs is gatun's own stub cache).
//!
//! ```
//! gatun_fuzz::check_cdecl(b"struct point { char tag; double x, y; }; double norm(struct point);");
//! gatun_fuzz::check_cli_args(b"call\0int abs(int)\0-42");
//! gatun_fuzz::check_layout(&[0u8; 64]);
//! ```

mod cdecl;
mod checks;
mod cli_args;
mod layout_tree;
mod noop;

pub use cdecl::check_cdecl;
pub use cli_args::check_cli_args;
pub use layout_tree::{check_layout, describe_layout_input};

/// Inputs longer than this (in bytes) are ignored by every check: the fuzz targets run with
/// a smaller `-max_len`, and replayed corpus files are smaller still.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;

/// The longest error message (in bytes) accepted for an input of `input_len` bytes: 8 KiB
/// plus 64 bytes per input byte. Messages quote offending values (a layout or descriptor,
/// whose text gatun cuts at 2 KiB, a name, a line of source), so they may grow with the input,
/// but not faster than that.
pub fn message_limit(input_len: usize) -> usize {
    8192 + 64 * input_len
}

/// A check function: takes one input, panics when an invariant does not hold.
pub type Check = fn(&[u8]);

/// The fuzz targets by name (the directory names under `fuzz/corpus/` and
/// `fuzz/regressions/`) with their check functions.
pub const TARGETS: &[(&str, Check)] = &[
    ("cdecl", check_cdecl),
    ("layout", check_layout),
    ("cli_args", check_cli_args),
];
