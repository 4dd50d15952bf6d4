//! [`check_cli_args`]: bytes as a `gatun call` / `gatun layout` command line.

use std::ffi::OsString;

use clap::{Args, Command, FromArgMatches};
use gatun::abi::sysv as sysv_x64;
use gatun::memory::Arena;
use gatun::LinkerOption;
use gatun_cli::call::{self as call_cmd, CallArgs};
use gatun_cli::layout_cmd::{self, LayoutArgs};

use crate::checks;

/// Words of one command line, at most.
const MAX_WORDS: usize = 64;
/// `[N]` buffer arguments larger than this (bytes) make the check skip building the values:
/// the CLI accepts buffers up to 2^30 bytes by design, and zeroing a gibibyte per input would
/// only measure the machine's memory bandwidth.
const MAX_BUFFER: usize = 1 << 20;

/// Splits `data` (at most [`crate::MAX_INPUT_BYTES`] bytes) at NUL bytes into command-line
/// words after `gatun` (the words need not be UTF-8), and parses them as the binary does:
///
/// - `call ...`: options hoisted (`call_cmd::hoist_options`: the result must hold the same
///   words, `-include` respelled `--force-include`, plus one `--`), clap's parse of `CallArgs`, the prototype
///   (`call_cmd::parse_prototype`), then the argument words built into values and segments
///   (`call_cmd::prepare_call`: one value per word, plus the `errno` segment for `--errno`)
///   and the resulting descriptor planned (SysV x86-64). No library is loaded, nothing is
///   linked or called, and command lines with headers (`-i`, which would run the system C
///   compiler) are skipped.
/// - `layout ...`: clap's parse of `LayoutArgs` and `layout_cmd::render` (table or JSON).
///
/// Other first words are ignored. Every error message is bounded by [`crate::message_limit`].
///
/// # Panics
/// When an invariant above does not hold (the fuzzer's crash).
pub fn check_cli_args(data: &[u8]) {
    if data.len() > crate::MAX_INPUT_BYTES {
        return;
    }
    let mut argv: Vec<OsString> = vec!["gatun".into()];
    argv.extend(data.split(|&b| b == 0).take(MAX_WORDS).map(os_word));
    match argv.get(1).and_then(|a| a.to_str()) {
        Some("call") => call(argv, data.len()),
        Some("layout") => layout(&argv[1..], data.len()),
        _ => {}
    }
}

/// One command-line word from its bytes: as they are on Unix; on other targets (Windows, whose
/// command lines are UTF-16) the bytes read as UTF-8, invalid sequences replaced by U+FFFD.
fn os_word(bytes: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        OsString::from_vec(bytes.to_vec())
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(bytes).into_owned().into()
    }
}

fn call(argv: Vec<OsString>, input_len: usize) {
    let hoisted = call_cmd::hoist_options(argv.clone());
    let dash = OsString::from("--");
    // The C compiler's `-include` is respelled `--force-include` before the user's `--`.
    let typed_dash = argv
        .iter()
        .skip(2)
        .position(|w| *w == dash)
        .map_or(argv.len(), |i| i + 2);
    let force_include = OsString::from("--force-include");
    let before: Vec<&OsString> = argv
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i < typed_dash && w == "-include" {
                &force_include
            } else {
                w
            }
        })
        .collect();
    let mut before = before;
    let mut after: Vec<&OsString> = hoisted.iter().collect();
    // hoist_options adds one `--`, and keeps a `--` the user typed as one before the words
    // after it (which are then passed as text): compare the words without any `--`, and
    // count the added one.
    let dashes_before = before.iter().filter(|w| ***w == dash).count();
    let dashes_after = after.iter().filter(|w| ***w == dash).count();
    before.retain(|w| **w != dash);
    after.retain(|w| **w != dash);
    before.sort();
    after.sort();
    assert_eq!(
        before, after,
        "hoist_options changed the words, not only their order"
    );
    assert!(
        dashes_after >= 1 && dashes_after <= dashes_before + 1,
        "hoist_options: {dashes_before} `--` before, {dashes_after} after"
    );
    let command = CallArgs::augment_args(Command::new("call"));
    let args = match command
        .try_get_matches_from(&hoisted[1..])
        .and_then(|m| CallArgs::from_arg_matches(&m))
    {
        Ok(args) => args,
        Err(e) => {
            checks::bounded_message("clap error", &e.render().to_string(), input_len);
            return;
        }
    };
    if args.headers.is_active() {
        // `-i HEADER` runs the system C compiler: not from a fuzz target.
        return;
    }
    let (decls, f) = match call_cmd::parse_prototype(&args.decl, &args.headers) {
        Ok(parsed) => parsed,
        Err(e) => {
            checks::bounded_message("prototype error", &e.to_string(), input_len);
            return;
        }
    };
    let huge_buffer = args.args.iter().any(|a| {
        a.strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .is_some_and(|n| n > MAX_BUFFER)
    });
    if huge_buffer {
        return;
    }
    let arena = Arena::confined();
    let prepared = match call_cmd::prepare_call(&decls, &f, &args.args, args.errno, &arena) {
        Ok(p) => p,
        Err(e) => {
            checks::bounded_message("argument error", &e.to_string(), input_len);
            return;
        }
    };
    // A `--` among the words separates the literal ones from those passed as text.
    let (literal, text) = call_cmd::split_argument_words(&args.args);
    let words = literal.len() + text.len();
    assert_eq!(
        prepared.values.len(),
        words + usize::from(args.errno),
        "one value per argument word (and the errno segment)"
    );
    assert_eq!(
        prepared.descriptor.argument_layouts().len(),
        words,
        "one argument layout per argument word"
    );
    assert_eq!(
        prepared.capture.is_some(),
        args.errno,
        "an errno segment exactly for --errno"
    );
    assert_eq!(
        prepared
            .options
            .iter()
            .any(|o| matches!(o, LinkerOption::FirstVariadicArg(_))),
        f.variadic.is_some(),
        "FirstVariadicArg exactly for a variadic prototype"
    );
    match sysv_x64::plan(&prepared.descriptor, f.variadic) {
        Ok(plan) => checks::call_plan(&plan, &prepared.descriptor, f.variadic),
        Err(e) => checks::bounded_message("plan error", &e.to_string(), input_len),
    }
}

fn layout(argv: &[OsString], input_len: usize) {
    let command = LayoutArgs::augment_args(Command::new("layout"));
    let args = match command
        .try_get_matches_from(argv)
        .and_then(|m| LayoutArgs::from_arg_matches(&m))
    {
        Ok(args) => args,
        Err(e) => {
            checks::bounded_message("clap error", &e.render().to_string(), input_len);
            return;
        }
    };
    if args.headers.is_active() {
        // `-i HEADER` runs the system C compiler: not from a fuzz target.
        return;
    }
    match layout_cmd::render(&args) {
        Ok(out) => assert!(
            out.ends_with('\n'),
            "`gatun layout` output does not end in a newline"
        ),
        Err(e) => checks::bounded_message("layout error", &e.to_string(), input_len),
    }
}
