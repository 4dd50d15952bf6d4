//! Shared helpers of the `gatun` end-to-end tests.
#![allow(dead_code)]

use assert_cmd::Command;

/// The built `gatun` binary (through the cross runner on a cross build), with backtraces on
/// (so a panic would show in stderr) and `$CC` set to the target's C compiler (for `-i`).
pub fn gatun() -> Command {
    let mut c = Command::from_std(gatun_test_natives::target_command(env!(
        "CARGO_BIN_EXE_gatun"
    )));
    c.env("RUST_BACKTRACE", "1")
        .env("CC", gatun_test_natives::CC);
    c
}

/// Runs a failing command: exit status 2, exactly one `gatun: ` line on stderr, no panic, no
/// output. Returns the stderr line.
pub fn one_line_error(args: &[&str]) -> String {
    let out = gatun().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{args:?}: stderr was {err:?}");
    assert!(err.starts_with("gatun: "), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    err
}
