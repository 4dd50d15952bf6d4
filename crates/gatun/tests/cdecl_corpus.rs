//! The cdecl regression corpus: every `tests/cdecl_corpus/*.h` is parsed and must give the
//! outcome its first line states:
//!
//! - `// expect: ok` — parses;
//! - `// expect: error LINE:COLUMN MESSAGE-PART` — fails at that position with a message
//!   containing `MESSAGE-PART`.
//!
//! Inputs that once crashed or misbehaved are kept here with their expected outcome.

use std::path::Path;

use gatun::cdecl::Declarations;

/// Files that use the POSIX typedefs (`pid_t`, `time_t`, ...), which gatun predefines on Unix
/// targets only: skipped elsewhere.
const POSIX_TYPEDEF_FILES: &[&str] = &["ok_libc_prototypes.h", "ok_structs.h"];

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cdecl_corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "h"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "corpus too small: {files:?}");
    let mut failures = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let src = String::from_utf8_lossy(&bytes);
        let first = src.lines().next().unwrap_or("");
        let expect = first
            .strip_prefix("// expect: ")
            .unwrap_or_else(|| panic!("{}: first line must be `// expect: ...`", path.display()));
        let name = path.file_name().unwrap().to_string_lossy();
        if !cfg!(unix) && POSIX_TYPEDEF_FILES.contains(&name.as_ref()) {
            continue;
        }
        let result = Declarations::parse(&src);
        match (expect, result) {
            ("ok", Ok(_)) => {}
            ("ok", Err(e)) => failures.push(format!("{name}: expected ok, got\n{e}")),
            (exp, Ok(_)) => failures.push(format!("{name}: expected `{exp}`, parsed fine")),
            (exp, Err(e)) => {
                let rest = exp.strip_prefix("error ").unwrap_or("");
                let (pos, part) = rest.split_once(' ').unwrap_or((rest, ""));
                let got = format!("{}:{}", e.line(), e.column());
                if pos != got || !e.message().contains(part) {
                    failures.push(format!("{name}: expected `{exp}`, got\n{e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
