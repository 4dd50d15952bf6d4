//! [`check_cdecl`]: bytes as C declarations.

use std::collections::BTreeSet;

use gatun::abi::sysv as sysv_x64;
use gatun::cdecl::{CdeclError, Declarations, Declared};
use gatun::layout::MemoryLayout;
use gatun::{Linker, LinkerOption};
use gatun_cli::layout_cmd;

use crate::checks;

/// Declared names looked at per input, at most (each costs a few formatting and
/// classification passes).
const MAX_NAMES: usize = 256;
/// Declared layouts rendered as `gatun layout` renders them, per input, at most (a rendering
/// lists up to `layout_cmd::MAX_FIELDS` fields, as a table and as JSON: milliseconds each).
const MAX_RENDERED: usize = 4;

/// Parses `data` (if it is UTF-8 of at most [`crate::MAX_INPUT_BYTES`] bytes) as C
/// declarations with `Declarations::parse`, then for every declared name:
///
/// - a function: its descriptor formatted, every argument and the return classified, the
///   call planned (SysV x86-64, with the declaration's variadic index) and its stub's machine
///   code generated with `Linker::stub_code` (not mapped, not called);
/// - a tag or typedef with a layout: its shape checked (members within the size, powers of two),
///   formatted, hashed, compared with its clone, classified, and (the first few) rendered as
///   `gatun layout` renders them (table and JSON).
///
/// An error must have a position inside the source and a bounded message. The same source is
/// also given to `Declarations::type_layout` (the `gatun layout` path).
///
/// # Panics
/// When an invariant above does not hold (the fuzzer's crash).
pub fn check_cdecl(data: &[u8]) {
    if data.len() > crate::MAX_INPUT_BYTES {
        return;
    }
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let mut decls = Declarations::new();
    match decls.add(src) {
        Ok(declared) => {
            let parsed = Declarations::parse(src).expect("`add` succeeded on the same source");
            check_declared(&parsed, &declared, src.len());
        }
        Err(e) => {
            check_error(&e, src);
            assert!(
                Declarations::parse(src).is_err(),
                "`parse` accepts what `add` rejects"
            );
        }
    }
    match Declarations::new().type_layout(src) {
        Ok(layout) => check_type(&layout, true),
        Err(e) => check_error(&e, src),
    }
}

fn check_error(e: &CdeclError, src: &str) {
    let span = e.span();
    assert!(
        span.start <= span.end && span.end <= src.len(),
        "error span {span:?} outside a source of {} bytes: {e}",
        src.len()
    );
    assert!(
        e.line() >= 1 && e.column() >= 1,
        "error at line {}, column {}",
        e.line(),
        e.column()
    );
    assert!(
        e.line() <= src.lines().count().max(1) + 1,
        "error at line {} of a source of {} lines",
        e.line(),
        src.lines().count()
    );
    assert!(!e.message().is_empty(), "an empty error message");
    checks::bounded_message("error summary", &e.summary(), src.len());
    checks::bounded_message("error", &e.to_string(), src.len());
}

fn check_declared(decls: &Declarations, declared: &[Declared], input_len: usize) {
    let mut functions = BTreeSet::new();
    let mut rendered = 0;
    let mut render = || {
        rendered += 1;
        rendered <= MAX_RENDERED
    };
    for d in declared.iter().take(MAX_NAMES) {
        match d {
            Declared::Function(name) => {
                functions.insert(name.clone());
                let f = decls
                    .function(name)
                    .unwrap_or_else(|| panic!("declared function `{name}` not found"));
                assert_eq!(&f.name, name, "function name");
                if let Some(v) = f.variadic {
                    assert_eq!(
                        v,
                        f.descriptor.argument_layouts().len(),
                        "a variadic function's index is its fixed parameter count"
                    );
                }
                assert_eq!(
                    f.param_names.len(),
                    f.descriptor.argument_layouts().len(),
                    "one parameter name slot per parameter"
                );
                check_function(&f.descriptor, f.variadic, input_len);
            }
            Declared::Tag(tag) => {
                if let Some(layout) = decls.layout(tag) {
                    check_type(layout, render());
                }
            }
            Declared::Typedef(name) => {
                if let Some(layout) = decls.typedef(name) {
                    assert_eq!(
                        decls.layout(name),
                        Some(layout),
                        "typedef `{name}` by layout()"
                    );
                    check_type(layout, render());
                }
            }
            Declared::Variable(_) => {}
        }
    }
    if declared.len() <= MAX_NAMES {
        for f in decls.functions() {
            assert!(
                functions.contains(&f.name),
                "function `{}` listed but not declared by the source",
                f.name
            );
        }
    }
}

/// A layout from the parser: shape, identity, classification, and `gatun layout`'s rendering.
fn check_type(layout: &MemoryLayout, render: bool) {
    checks::layout_shape(layout);
    checks::layout_identity(layout);
    checks::classification(layout);
    if !render {
        return;
    }
    for json in [false, true] {
        let out = layout_cmd::render_layout(layout, json)
            .unwrap_or_else(|e| panic!("`gatun layout` rendering failed: {e}"));
        assert!(
            out.ends_with('\n'),
            "`gatun layout` output does not end in a newline"
        );
    }
}

/// A function descriptor from the parser: formatted, classified, planned and compiled.
fn check_function(
    descriptor: &gatun::FunctionDescriptor,
    variadic: Option<usize>,
    input_len: usize,
) {
    let text = descriptor.to_string();
    assert!(!text.is_empty(), "a descriptor formats as the empty string");
    for a in descriptor.argument_layouts() {
        checks::classification(a);
    }
    if let Some(r) = descriptor.return_layout() {
        checks::classification(r);
    }
    match sysv_x64::plan(descriptor, variadic) {
        Ok(plan) => {
            checks::call_plan(&plan, descriptor, variadic);
            let _ = plan.to_string();
        }
        Err(e) => checks::bounded_message("plan error", &e.to_string(), input_len),
    }
    let options: Vec<LinkerOption> = variadic
        .map(LinkerOption::FirstVariadicArg)
        .into_iter()
        .collect();
    match Linker::native().stub_code(descriptor, &options) {
        Ok(code) => assert!(!code.is_empty(), "empty stub code for {text}"),
        Err(e) => checks::bounded_message("stub error", &e.to_string(), input_len),
    }
}
