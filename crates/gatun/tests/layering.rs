//! The dependency rule of `crates/gatun/src`: dependencies only point down.
//!
//! ```text
//! cdecl                          (C declarations → descriptors and layouts)
//! linker · upcall · capture · nonblocking (ABI-neutral handles, stubs, the system-call adapter, worker pools)
//! backend                        (the Backend trait and one module per ABI)
//! code                           (executable memory, the stub cache)
//! abi                            (CallPlan, per-ABI classification)
//! layout · value · memory · os · error
//! ```
//!
//! A file under `src/<module>/` may name `crate::<other>` only for a module on its own level or
//! below. Test code is exempt (files named `tests.rs` or `test_*.rs`, files under a `tests/`
//! folder, and `#[cfg(test)]` modules written inline): a backend's tests may drive it through
//! the linker. Comments (doc links included) are not dependencies.

use std::path::{Path, PathBuf};

/// The level of a top-level module of `src/` (higher may depend on lower), or `None` for
/// files at the crate root (`lib.rs`), which may name every module.
fn level(module: &str) -> Option<u8> {
    Some(match module {
        "layout" | "value" | "memory" | "os" | "error" => 0,
        "abi" => 1,
        "code" => 2,
        "backend" => 3,
        "linker" | "upcall" | "capture" | "nonblocking" => 4,
        "cdecl" => 5,
        _ => return None,
    })
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether a file holds only test code, by its name or folder.
fn is_test_file(relative: &Path) -> bool {
    let name = relative.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.starts_with("test_")
        || relative.components().any(|c| c.as_os_str() == "tests")
}

/// The lines of `text` that are library code: comments and inline `#[cfg(test)]` items
/// (tracked by brace depth from the attribute to the end of the item) are left out.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut skip_depth: Option<i64> = None;
    let mut depth: i64 = 0;
    let mut pending_test = false;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let code = match trimmed.find("//") {
            Some(i) => &trimmed[..i],
            None => trimmed,
        };
        if trimmed.starts_with("#[cfg(test)]") || trimmed.starts_with("#[cfg(all(test") {
            pending_test = true;
            continue;
        }
        let opens = code.matches('{').count() as i64;
        let closes = code.matches('}').count() as i64;
        if pending_test && skip_depth.is_none() && opens > 0 {
            skip_depth = Some(depth);
            pending_test = false;
        } else if pending_test && code.trim_end().ends_with(';') {
            // `#[cfg(test)] mod tests;` or a one-line item: nothing to skip here.
            pending_test = false;
        }
        depth += opens - closes;
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
            continue;
        }
        if !code.is_empty() {
            out.push((n + 1, code));
        }
    }
    out
}

#[test]
fn dependencies_only_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "found only {} files under {src:?}",
        files.len()
    );
    let mut violations = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        if is_test_file(relative) {
            continue;
        }
        let first = relative.components().next().expect("a component");
        let own = first.as_os_str().to_str().expect("utf-8 path");
        let Some(own_level) = level(own.trim_end_matches(".rs")) else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("read file");
        for (n, line) in code_lines(&text) {
            for (i, _) in line.match_indices("crate::") {
                // `gatun_crate::x` or `$crate::x` are other paths, not this crate's modules.
                let before = line[..i].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                    continue;
                }
                let rest = &line[i + "crate::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if let Some(target) = level(&name) {
                    if target > own_level {
                        violations.push(format!(
                            "{}:{n}: `{own}` (level {own_level}) names `crate::{name}` (level {target}): {}",
                            relative.display(),
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "{} upward dependencies:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

/// Files of the layers above `backend` that name one ABI's backend module: the ABI-neutral
/// layers reach a backend only through `backend::Native` and the `Backend` trait.
#[test]
fn abi_neutral_layers_name_no_backend_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let own = relative.components().next().expect("a component");
        let own = own
            .as_os_str()
            .to_str()
            .expect("utf-8 path")
            .trim_end_matches(".rs");
        if is_test_file(relative) || level(own).is_none_or(|l| l < 4) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("read file");
        for (n, line) in code_lines(&text) {
            for abi in ["x86_64_sysv", "aarch64", "win64", "riscv64", "unsupported"] {
                if line.contains(&format!("backend::{abi}")) || line.contains("target_arch") {
                    violations.push(format!("{}:{n}: {}", relative.display(), line.trim()));
                    break;
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "{} ABI-specific references above the backend:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[test]
fn the_scanner_skips_comments_and_inline_test_modules() {
    let text = "use crate::abi::CallPlan; // crate::upcall\n\
                /// [`crate::linker::Linker`]\n\
                #[cfg(test)]\n\
                mod tests {\n    use crate::linker::Linker;\n    fn f() { }\n}\n\
                fn g() { crate::code::x(); }\n";
    let lines: Vec<&str> = code_lines(text).into_iter().map(|(_, l)| l).collect();
    assert_eq!(
        lines,
        ["use crate::abi::CallPlan; ", "fn g() { crate::code::x(); }"]
    );
}
