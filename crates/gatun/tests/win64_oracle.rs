//! A small oracle for the Win64 plans (`gatun::abi::win64`), against mingw-w64 gcc's code
//! generation (no Windows code runs).
//!
//! Each case is a C signature and a caller passing a distinct value per argument: integers as
//! constants (1001, 1002, ...), `float`/`double` as constants, structs as globals. The file is
//! compiled with `x86_64-w64-mingw32-gcc -O1 -S` and each caller's instructions are checked
//! against the plan: an integer constant must be moved into the plan's GPR (`$1001, %ecx`) or
//! stack slot (`$1005, 32(%rsp)`); a floating-point argument's XMM register must be written; a
//! variadic one's GPR too; a small struct's GPR (or slot) must be written; a by-reference
//! argument's pointer made by `leaq` into its GPR (or stored in its slot); the hidden return
//! pointer made by `leaq` into `rcx`; and the caller must reserve at least the plan's
//! `stack_bytes` (`subq $N, %rsp`, N ≥ stack_bytes). The callers of small-struct returns must
//! read the struct from `rax`.
//!
//! Needs `x86_64-w64-mingw32-gcc` (Debian: `gcc-mingw-w64-x86-64`); skipped when missing.

use std::process::Command;

use gatun::abi::win64::{arg_register_name, plan};
use gatun::abi::{CallPlan, Location, ReturnPlan};
use gatun::layout::{MemoryLayout, ValueLayout as V};
use gatun::linker::FunctionDescriptor;

/// One argument of a case.
#[derive(Clone, Copy)]
enum Arg {
    /// An `int` constant.
    Int,
    /// A `long long` constant.
    LongLong,
    /// A `double` constant.
    Double,
    /// A `float` constant.
    Float,
    /// A global of the struct type `s<size>` (defined in `DEFS`).
    Struct(usize),
}

/// The struct types: `s<size>`.
const DEFS: &str = "struct s1 { char a; };
struct s2 { short a; };
struct s3 { char a, b, c; };
struct s4 { float a; };
struct s8 { float x, y; };
struct s12 { int a, b, c; };
struct s16 { double a, b; };
struct s24 { long long a, b, c; };
";

fn struct_layout(size: usize) -> MemoryLayout {
    let m: Vec<MemoryLayout> = match size {
        1 => vec![V::I8.into()],
        2 => vec![V::I16.into()],
        3 => vec![V::I8.into(); 3],
        4 => vec![V::F32.into()],
        8 => vec![V::F32.into(); 2],
        12 => vec![V::I32.into(); 3],
        16 => vec![V::F64.into(); 2],
        24 => vec![V::I64.into(); 3],
        _ => unreachable!("no struct s{size}"),
    };
    MemoryLayout::c_struct(m).unwrap()
}

struct Case {
    /// The return type: `None` void, `Some(0)` int, `Some(n)` struct `s<n>`.
    ret: Option<usize>,
    args: Vec<Arg>,
    /// Named arguments of a variadic function (`None`: not variadic).
    named: Option<usize>,
}

fn cases() -> Vec<Case> {
    use Arg::*;
    let c = |ret, args: &[Arg], named| Case {
        ret,
        args: args.to_vec(),
        named,
    };
    vec![
        c(None, &[Int, Double, Int, Float, Int, LongLong], None),
        c(None, &[Double, Double, Double, Double, Double, Int], None),
        c(
            Some(0),
            &[Struct(8), Struct(12), Struct(16), Struct(1), Struct(3)],
            None,
        ),
        c(
            Some(0),
            &[Struct(2), Struct(4), Struct(24), Int, Struct(8)],
            None,
        ),
        c(Some(12), &[Int, Double], None),
        c(Some(16), &[Double, Int, Int, Int], None),
        c(Some(8), &[Float], None),
        c(Some(1), &[], None),
        c(Some(0), &[Int, Double, Int, Float, Double], Some(1)),
        c(Some(0), &[Double, Double, Int], Some(1)),
        c(Some(0), &[Int, Int, Int, Int, Double, Float], Some(2)),
    ]
}

fn c_type(a: Arg) -> String {
    match a {
        Arg::Int => "int".into(),
        Arg::LongLong => "long long".into(),
        Arg::Double => "double".into(),
        Arg::Float => "float".into(),
        Arg::Struct(n) => format!("struct s{n}"),
    }
}

fn layout(a: Arg) -> MemoryLayout {
    match a {
        Arg::Int => V::I32.into(),
        Arg::LongLong => V::I64.into(),
        Arg::Double => V::F64.into(),
        Arg::Float => V::F32.into(),
        Arg::Struct(n) => struct_layout(n),
    }
}

/// The C source of case `k`: `callee_k`'s declaration, globals, and `caller_k`.
fn c_source(k: usize, case: &Case) -> String {
    let ret = match case.ret {
        None => "void".to_string(),
        Some(0) => "int".to_string(),
        Some(n) => format!("struct s{n}"),
    };
    let params: Vec<String> = match case.named {
        Some(n) => {
            let mut p: Vec<String> = case.args[..n].iter().map(|&a| c_type(a)).collect();
            p.push("...".into());
            p
        }
        None if case.args.is_empty() => vec!["void".into()],
        None => case.args.iter().map(|&a| c_type(a)).collect(),
    };
    let mut src = format!("extern {ret} callee_{k}({});\n", params.join(", "));
    let mut values = Vec::new();
    for (i, &a) in case.args.iter().enumerate() {
        values.push(match a {
            Arg::Int | Arg::LongLong => format!("{}", 1001 + i),
            Arg::Double => format!("{}.5", i + 1),
            Arg::Float => format!("{}.5f", i + 1),
            Arg::Struct(n) => {
                src.push_str(&format!("struct s{n} arg_{k}_{i};\n"));
                format!("arg_{k}_{i}")
            }
        });
    }
    let call = format!("callee_{k}({})", values.join(", "));
    match case.ret {
        None | Some(0) => src.push_str(&format!("void caller_{k}(void) {{ {call}; }}\n")),
        Some(n) => src.push_str(&format!(
            "struct s{n} out_{k};\nvoid caller_{k}(void) {{ out_{k} = {call}; }}\n"
        )),
    }
    src
}

/// The instructions of function `name` in gcc's assembly, up to its `ret`.
fn body<'a>(asm: &'a str, name: &str) -> Vec<&'a str> {
    let label = format!("{name}:");
    let mut lines = asm.lines().skip_while(|l| l.trim() != label).skip(1);
    let mut out = Vec::new();
    for l in lines.by_ref() {
        let l = l.trim();
        if l.starts_with('.') {
            continue;
        }
        out.push(l);
        if l == "ret" {
            break;
        }
    }
    out
}

/// The 32-bit name of a 64-bit GPR (`rcx` → `ecx`, `r8` → `r8d`).
fn reg32(r64: &str) -> String {
    match r64.strip_prefix('r') {
        Some(n) if n.chars().all(|c| c.is_ascii_digit()) => format!("{r64}d"),
        Some(rest) => format!("e{rest}"),
        None => r64.into(),
    }
}

/// Whether some instruction writes `dest` (its last operand is `dest`), with a source operand
/// containing `src` when given.
fn writes(body: &[&str], dest: &str, src: Option<&str>) -> bool {
    body.iter().any(|l| {
        let Some((_, ops)) = l.split_once(char::is_whitespace) else {
            return false;
        };
        let ops = ops.trim();
        ops.ends_with(&format!(", {dest}"))
            && src.is_none_or(|s| ops[..ops.len() - dest.len()].contains(s))
    })
}

/// The AT&T operand of a plan location.
fn operand(loc: Location) -> String {
    match loc {
        Location::Stack(off) => format!("{off}(%rsp)"),
        l => format!("%{}", arg_register_name(l).unwrap()),
    }
}

/// Checks case `k` against its plan; returns the mismatches.
fn check(k: usize, case: &Case, plan: &CallPlan, asm: &str) -> Vec<String> {
    let body = body(asm, &format!("caller_{k}"));
    let mut bad = Vec::new();
    if body.is_empty() {
        return vec![format!("caller_{k}: not found in the assembly")];
    }
    let reserved = body
        .iter()
        .find_map(|l| {
            l.strip_prefix("subq\t$")?
                .strip_suffix(", %rsp")?
                .parse::<u32>()
                .ok()
        })
        .unwrap_or(0);
    if reserved < plan.stack_bytes() {
        bad.push(format!(
            "reserves {reserved} bytes of stack, the plan needs {}",
            plan.stack_bytes()
        ));
    }
    if let Some(h) = plan.hidden_return_pointer() {
        if !body
            .iter()
            .any(|l| l.starts_with("leaq") && l.ends_with(&format!(", {}", operand(h))))
        {
            bad.push(format!("no leaq of the return buffer into {}", operand(h)));
        }
    }
    if let ReturnPlan::Registers(_) = plan.ret() {
        if !body.iter().any(|l| {
            l.contains("%rax") || l.contains("%eax") || l.contains("%ax") || l.contains("%al")
        }) {
            bad.push("the small struct result is not read from rax".into());
        }
    }
    for (i, (&a, ap)) in case.args.iter().zip(plan.args()).enumerate() {
        let what = format!("argument {i} ({})", c_type(a));
        if let Some(loc) = ap.by_reference {
            let op = operand(loc);
            let ok = match loc {
                Location::Stack(_) => writes(&body, &op, None),
                _ => body
                    .iter()
                    .any(|l| l.starts_with("leaq") && l.ends_with(&format!(", {op}"))),
            };
            if !ok {
                bad.push(format!("{what}: no pointer to a copy into {op}"));
            }
            continue;
        }
        for m in &ap.moves {
            let op = operand(m.to);
            // A GPR may be written whole or through its 32-bit name (gcc loads a 4-byte struct
            // with `movl`, a 2-byte one with `movzwl`, which clear the upper half).
            let op32 = match m.to {
                Location::Int(_) => format!("%{}", reg32(&op[1..])),
                _ => op.clone(),
            };
            let ok = match (a, m.to) {
                (Arg::Int | Arg::LongLong, Location::Int(_)) => {
                    let c = format!("${}", 1001 + i);
                    writes(&body, &op32, Some(&c)) || writes(&body, &op, Some(&c))
                }
                (_, Location::Int(_)) => writes(&body, &op32, None) || writes(&body, &op, None),
                (Arg::Int | Arg::LongLong, Location::Stack(_)) => {
                    writes(&body, &op, Some(&format!("${}", 1001 + i)))
                }
                _ => writes(&body, &op, None),
            };
            if !ok {
                bad.push(format!("{what}: {op} is not written"));
            }
        }
    }
    bad
}

#[test]
fn win64_plans_match_mingw_gcc() {
    let gcc = "x86_64-w64-mingw32-gcc";
    if Command::new(gcc).arg("--version").output().is_err() {
        eprintln!("skipped: {gcc} not found (Debian: gcc-mingw-w64-x86-64)");
        return;
    }
    let cases = cases();
    let mut src = String::from(DEFS);
    for (k, case) in cases.iter().enumerate() {
        src.push_str(&c_source(k, case));
    }
    let dir = std::env::temp_dir().join(format!("gatun-win64-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c_path = dir.join("callers.c");
    let s_path = dir.join("callers.s");
    std::fs::write(&c_path, &src).unwrap();
    let out = Command::new(gcc)
        .args(["-O1", "-S", "-fno-asynchronous-unwind-tables", "-o"])
        .arg(&s_path)
        .arg(&c_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{gcc} failed:\n{}\n{src}",
        String::from_utf8_lossy(&out.stderr)
    );
    let asm = std::fs::read_to_string(&s_path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut failures = Vec::new();
    for (k, case) in cases.iter().enumerate() {
        let args: Vec<MemoryLayout> = case.args.iter().map(|&a| layout(a)).collect();
        let descriptor = match case.ret {
            None => FunctionDescriptor::of_void(args),
            Some(0) => FunctionDescriptor::of(V::I32, args),
            Some(n) => FunctionDescriptor::of(struct_layout(n), args),
        };
        let p = plan(&descriptor, case.named).unwrap();
        for b in check(k, case, &p, &asm) {
            failures.push(format!("caller_{k} ({descriptor}): {b}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}\n\n{asm}",
        failures.len(),
        failures.join("\n")
    );
}
