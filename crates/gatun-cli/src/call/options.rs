//! The order of `gatun call`'s command line: its options may follow the declaration and the
//! arguments, and negative numbers are arguments, not options ([`hoist_options`]).

use std::ffi::OsString;

use super::literal::{parse_float, parse_int};

/// Moves `gatun call`'s options (`--json`, `--errno`, `--hex`, `-l LIB`, `-lLIB`,
/// `--lib[=]LIB`, `-i HEADER`, `-iHEADER`, `--include[=]HEADER`, `-D NAME[=VALUE]`,
/// `-DNAME`, `-I DIR`, `-IDIR`, `-include FILE`, `--force-include[=]FILE`, `-h`, `--help`)
/// that appear after the declaration to the front, and puts a `--` before the declaration,
/// so clap reads every remaining word as the declaration or an argument. Any other word
/// starting with `-` is moved to the front as well, where clap reports it as an unknown
/// option; negative numbers (`-5`, `-1.5`, `-inf`) are arguments. Every word after a `--`
/// the user typed is an argument, and stays after a `--`
/// ([`LITERAL_TEXT_FROM`](super::LITERAL_TEXT_FROM)) in the arguments, which makes the
/// words after it text ([`prepare_call`](super::prepare_call)). The C compiler's spelling
/// `-include FILE` becomes `--force-include FILE` (for `gatun layout` too, before any `--`).
/// `argv` is the whole command line (`gatun call ...`); any other subcommand is returned
/// unchanged.
pub fn hoist_options(argv: Vec<OsString>) -> Vec<OsString> {
    match argv.get(1).and_then(|a| a.to_str()) {
        Some("call") => {}
        Some("layout") => {
            // Only the spelling of `-include`.
            let mut out = Vec::with_capacity(argv.len());
            let mut literal = false;
            for (i, arg) in argv.into_iter().enumerate() {
                literal |= i > 1 && arg == "--";
                if !literal && arg == "-include" {
                    out.push("--force-include".into());
                } else {
                    out.push(arg);
                }
            }
            return out;
        }
        _ => return argv,
    }
    let (mut options, mut words, mut literal) = (Vec::new(), Vec::new(), Vec::new());
    let mut typed_dashes = false;
    let mut rest = argv[2..].iter().cloned();
    while let Some(arg) = rest.next() {
        match arg.to_str() {
            Some("--") => {
                typed_dashes = true;
                literal.extend(rest.by_ref());
                break;
            }
            Some("--json" | "--errno" | "--hex" | "-h" | "--help") => options.push(arg),
            Some("-include") => {
                options.push("--force-include".into());
                options.extend(rest.next());
            }
            Some("-l" | "--lib" | "-i" | "--include" | "-D" | "-I" | "--force-include") => {
                options.push(arg);
                options.extend(rest.next());
            }
            Some(t)
                if t.starts_with("--lib=")
                    || t.starts_with("--include=")
                    || t.starts_with("--force-include=")
                    || (["-l", "-i", "-D", "-I"].iter().any(|p| t.starts_with(p))
                        && t.len() > 2
                        && !is_number(t)) =>
            {
                options.push(arg)
            }
            // Anything else starting with `-` that is not a number (`-5`, `-1.5`, `-inf`) is
            // left to clap, which reports an unknown option, before or after the declaration:
            // only after `--` is every word an argument.
            Some(t) if t.len() > 1 && t.starts_with('-') && !is_number(t) => options.push(arg),
            _ => words.push(arg),
        }
    }
    let mut out = argv[..2].to_vec();
    out.extend(options);
    out.push("--".into());
    // The declaration is the first word, typed before the `--` or after it.
    let mut literal = literal.into_iter();
    if words.is_empty() {
        out.extend(literal.next());
    }
    out.extend(words);
    let literal: Vec<OsString> = literal.collect();
    if typed_dashes && !literal.is_empty() {
        out.push(super::LITERAL_TEXT_FROM.into());
        out.extend(literal);
    }
    out
}

/// `true` for a word that `gatun call` reads as a number (`-5`, `-0x10`, `-1.5e3`, `-inf`).
fn is_number(word: &str) -> bool {
    parse_int(word).is_some() || parse_float(word).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_hoisted_before_a_double_dash() {
        let hoist = |words: &[&str]| -> Vec<String> {
            let argv = ["gatun", "call"].iter().chain(words).map(OsString::from);
            hoist_options(argv.collect())
                .into_iter()
                .map(|a| a.into_string().unwrap())
                .collect()
        };
        assert_eq!(
            hoist(&[
                "int f(int, char*)",
                "-5",
                "--json",
                "-l",
                "libm.so.6",
                "--",
                "--errno"
            ]),
            [
                "gatun",
                "call",
                "--json",
                "-l",
                "libm.so.6",
                "--",
                "int f(int, char*)",
                "-5",
                "--",
                "--errno"
            ]
        );
        assert_eq!(
            hoist(&["--bogus", "d", "-lz", "--lib=m", "-1.5"]),
            ["gatun", "call", "--bogus", "-lz", "--lib=m", "--", "d", "-1.5"]
        );
        // An unknown option after the declaration goes to clap too (which rejects it);
        // numbers and `-` stay arguments; after `--` anything is an argument, after a `--`.
        assert_eq!(
            hoist(&["d", "-inf", "--nope", "-0x10", "-", "--hex", "--", "--nope", "--"]),
            [
                "gatun", "call", "--nope", "--hex", "--", "d", "-inf", "-0x10", "-", "--",
                "--nope", "--"
            ]
        );
        // The declaration itself after `--`; a `--` with nothing after it.
        assert_eq!(
            hoist(&["--", "d", "x"]),
            ["gatun", "call", "--", "d", "--", "x"]
        );
        assert_eq!(hoist(&["--", "d"]), ["gatun", "call", "--", "d"]);
        assert_eq!(hoist(&["d", "1", "--"]), ["gatun", "call", "--", "d", "1"]);
        // The preprocessor's options, in either spelling, before or after the declaration;
        // `-Inf` is a number, `-include` is not `-i nclude`.
        assert_eq!(
            hoist(&["f", "-D", "A=1", "-DB", "-I", "dir", "-Idir2", "-include", "x.h", "-Inf"]),
            [
                "gatun",
                "call",
                "-D",
                "A=1",
                "-DB",
                "-I",
                "dir",
                "-Idir2",
                "--force-include",
                "x.h",
                "--",
                "f",
                "-Inf"
            ]
        );
        let layout: Vec<OsString> = ["gatun", "layout", "-include", "x.h", "T"]
            .map(OsString::from)
            .into();
        assert_eq!(
            hoist_options(layout),
            ["gatun", "layout", "--force-include", "x.h", "T"].map(OsString::from)
        );
        let bench: Vec<OsString> = ["gatun", "bench", "--json", "x"].map(OsString::from).into();
        assert_eq!(hoist_options(bench.clone()), bench);
    }
}
