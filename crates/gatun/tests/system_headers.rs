//! gatun::cdecl on real headers: every `/usr/include/*.h` that gcc accepts on its own
//! (`#include <NAME>` through `gcc -E -P`; with and without `_GNU_SOURCE`), `sqlite3.h`,
//! `zlib.h` and every `openssl/*.h` must parse with `Declarations`. Headers gcc rejects alone
//! are listed and skipped: ones gcc cannot preprocess alone (they `#error` unless included
//! through another, C++ headers), and ones that preprocess but do not compile alone
//! (`gcc -fsyntax-only` fails: they need another header first). Every parse failure is
//! reported with the header's name and the positioned error, and the test fails if there is
//! any.
//!
//! Each header is parsed a second time into the same set (identical re-declarations must be
//! accepted), and twice more into a set with pointer targets
//! (`Declarations::with_pointer_targets`), which must declare the same functions. What was
//! parsed is then checked against gcc: every enumeration constant's value and the size,
//! alignment and member offsets of every record and typedef with a layout become
//! `_Static_assert`s compiled after the header, and every bitfield's bit offset (in the
//! target's bit order), width and signedness is measured by a program gcc compiles and runs;
//! every disagreement is reported.
#![cfg(all(target_os = "linux", not(miri)))]

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many bitfields `check_bitfields` has had gcc measure (so a test can tell the check ran).
static BITFIELDS_CHECKED: AtomicUsize = AtomicUsize::new(0);

use gatun::cdecl::{Declarations, Declared};
use gatun::layout::MemoryLayout;

/// Runs the target's gcc (`gatun_test_natives::CC`: under qemu the host's gcc would check
/// the host's ABI) as `gcc FLAGS ARGS` with `input` on its standard input; stdout is captured when
/// `capture_stdout`, stderr always (and discarded by callers that do not need it).
fn gcc_with_input(
    flags: &[&str],
    args: &[&std::ffi::OsStr],
    input: &str,
    capture_stdout: bool,
) -> std::io::Result<std::process::Output> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(gatun_test_natives::CC)
        .args(flags)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(if capture_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(input.as_bytes())?;
    drop(stdin);
    child.wait_with_output()
}

/// `_Generic` associations (`int: 1,`) selecting 1 for the C integer types of kind `kind`.
fn c_types_of(kind: gatun::layout::ScalarKind) -> &'static str {
    use gatun::layout::ScalarKind as K;
    match kind {
        K::I32 => "int: 1,",
        K::U32 => "unsigned int: 1,",
        K::I64 => "long: 1, long long: 1,",
        K::U64 => "unsigned long: 1, unsigned long long: 1,",
        K::I16 => "short: 1,",
        K::U16 => "unsigned short: 1,",
        K::I8 => "signed char: 1, char: 1,",
        K::U8 => "unsigned char: 1, char: 1,",
        K::Bool => "_Bool: 1,",
        _ => "",
    }
}

/// `gcc -E -P` of `#include <name>`, or `None` if gcc rejects the header on its own.
fn preprocess(name: &str, flags: &[&str]) -> Option<String> {
    let out = gcc_with_input(
        flags,
        &["-E", "-P", "-x", "c", "-"].map(std::ffi::OsStr::new),
        &format!("#include <{name}>\n"),
        true,
    )
    .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

/// Whether gcc compiles `#include <name>` alone (`-fsyntax-only`): some headers preprocess but
/// are not C on their own (they need another header first).
fn compiles_alone(name: &str, flags: &[&str]) -> bool {
    gcc_with_input(
        flags,
        &["-fsyntax-only", "-x", "c", "-"].map(std::ffi::OsStr::new),
        &format!("#include <{name}>\n"),
        false,
    )
    .is_ok_and(|o| o.status.success())
}

/// gcc's verdict on what `Declarations` made of header `name`: every enumeration constant's
/// value, and the size, alignment and named members' offsets of every tag and typedef it
/// declared with a layout, as `_Static_assert`s compiled after `#include <name>`. Returns the
/// figures gcc disagrees with.
fn check_against_gcc(
    name: &str,
    flags: &[&str],
    decls: &Declarations,
    declared: &[Declared],
) -> Vec<String> {
    let mut checks = format!("#include <{name}>\n");
    // Each check is skipped where a name it uses is also a macro (the header may `#define`
    // an enumerator's name to something else, or a member's name to a path).
    let mut assert = |cond: String, what: String, names: &[&str]| {
        for n in names {
            checks.push_str(&format!("#ifndef {n}\n"));
        }
        checks.push_str(&format!("_Static_assert({cond}, \"{what}\");\n"));
        for _ in names {
            checks.push_str("#endif\n");
        }
    };
    let mut consts: Vec<(&str, i64, &str)> = decls
        .constants()
        .filter_map(|(n, c)| Some((n, c.as_i64()?, c_types_of(c.kind()?))))
        .collect();
    consts.sort_unstable();
    for (c, v, types) in consts {
        assert(
            format!("(__int128)({c}) == (__int128)({v}LL)"),
            format!("{c} = {v}"),
            &[c],
        );
        assert(
            format!("_Generic(({c}), {types} default: 0)"),
            format!("{c} has a type of {types}"),
            &[c],
        );
    }
    let mut seen = std::collections::HashSet::new();
    for d in declared {
        let ty = match d {
            Declared::Tag(t) if !t.starts_with("enum") => t,
            Declared::Typedef(t) => t,
            _ => continue,
        };
        if !seen.insert(ty.clone()) {
            continue;
        }
        let Some(l) = decls.layout(ty) else { continue };
        let ident = ty.rsplit(' ').next().unwrap_or(ty);
        let (size, align) = (l.byte_size(), l.byte_alignment());
        assert(
            format!("sizeof({ty}) == {size}"),
            format!("sizeof({ty}) = {size}"),
            &[ident],
        );
        assert(
            format!("_Alignof({ty}) == {align}"),
            format!("_Alignof({ty}) = {align}"),
            &[ident],
        );
        let members = match l {
            MemoryLayout::Struct(s) => s.members(),
            _ => continue,
        };
        for m in members {
            if let (Some(field), false) = (m.name(), matches!(m, MemoryLayout::Padding(_))) {
                let Ok(offset) = l.byte_offset_of(field) else {
                    continue;
                };
                assert(
                    format!("__builtin_offsetof({ty}, {field}) == {offset}"),
                    format!("offsetof({ty}, {field}) = {offset}"),
                    &[ident, field],
                );
            }
        }
    }
    let out = gcc_with_input(
        flags,
        &["-fsyntax-only", "-w", "-x", "c", "-"].map(std::ffi::OsStr::new),
        &checks,
        false,
    );
    let out = match out {
        Ok(o) => o,
        Err(e) => return vec![format!("running gcc: {e}")],
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && !compiles_alone(name, flags) {
        return Vec::new(); // not C on its own: gcc cannot check it alone
    }
    let mut wrong: Vec<String> = stderr
        .lines()
        .filter(|l| l.contains("error:"))
        .map(|l| {
            let msg = l.split_once("error: ").map_or(l, |(_, m)| m);
            format!("  gatun says {msg}")
        })
        .collect();
    if wrong.is_empty() && !out.status.success() {
        wrong.push(format!("  gcc failed: {stderr}"));
    }
    if wrong.is_empty() {
        wrong.extend(check_bitfields(name, flags, decls, declared));
    }
    wrong
}

/// The bit offset, width and signedness of every bitfield of every record the header declared,
/// against gcc's: a C program sets each field to all ones in a zeroed record and finds its
/// bits (bitfields have no `offsetof`). Compiled and run only for headers with bitfields.
fn check_bitfields(
    name: &str,
    flags: &[&str],
    decls: &Declarations,
    declared: &[Declared],
) -> Vec<String> {
    let mut body = String::new();
    let mut seen = std::collections::HashSet::new();
    for d in declared {
        let ty = match d {
            Declared::Tag(t) if !t.starts_with("enum") => t,
            Declared::Typedef(t) => t,
            _ => continue,
        };
        if !seen.insert(ty.clone()) || decls.layout(ty).is_none() {
            continue;
        }
        let ident = ty.rsplit(' ').next().unwrap_or(ty);
        for b in decls.bitfields(ty) {
            BITFIELDS_CHECKED.fetch_add(1, Ordering::Relaxed);
            let f = b.name();
            body.push_str(&format!(
                "#ifndef {ident}\n#ifndef {f}\n{{ {ty} s; memset(&s, 0, sizeof s); \
                 s.{f} = s.{f} - 1; long long v = s.{f}; check(\"{ty}.{f}\", \
                 (const unsigned char *)&s, sizeof s, {}, {}, {}, v < 0); }}\n#endif\n#endif\n",
                b.bit_offset(),
                b.bit_width(),
                i32::from(b.kind().is_signed()),
            ));
        }
    }
    if body.is_empty() {
        return Vec::new();
    }
    let program = format!(
        "#include <{name}>\n#include <stdio.h>\n#include <string.h>\n\
         #if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__\n#define BIT(i) (7 - (i) % 8)\n\
         #else\n#define BIT(i) ((i) % 8)\n#endif\n\
         static int bad;\n\
         static void check(const char *what, const unsigned char *p, size_t size, size_t off, \
         size_t width, int is_signed, int gcc_signed) {{\n\
           size_t first = (size_t)-1, n = 0;\n\
           for (size_t i = 0; i < size * 8; i++)\n\
             if ((p[i / 8] >> BIT(i)) & 1) {{ if (first == (size_t)-1) first = i; n++; }}\n\
           if (first != off || n != width || is_signed != gcc_signed) {{\n\
             bad = 1;\n\
             printf(\"%s: gcc (offset, width, signed) (%zu, %zu, %d), \
         gatun (%zu, %zu, %d)\\n\", what, first, n, gcc_signed, off, width, is_signed);\n\
           }}\n\
         }}\n\
         int main(void) {{\n{body}return bad;\n}}\n"
    );
    // One directory per check: the tests run concurrently, and two of them check the same
    // header (with and without _GNU_SOURCE).
    static CHECKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "gatun-bitfields-{}-{}-{}",
        std::process::id(),
        CHECKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        name.replace('/', "_")
    ));
    let _ = std::fs::create_dir_all(&dir);
    let exe = dir.join("check");
    let args = ["-w", "-x", "c", "-o"]
        .map(std::ffi::OsStr::new)
        .into_iter()
        .chain([exe.as_os_str(), std::ffi::OsStr::new("-")])
        .collect::<Vec<_>>();
    let compiled = gcc_with_input(flags, &args, &program, false);
    let result = match compiled {
        Ok(o) if o.status.success() => match gatun_test_natives::target_command(&exe).output() {
            Ok(run) => String::from_utf8_lossy(&run.stdout)
                .lines()
                .map(|l| format!("  bitfield {l}"))
                .collect(),
            Err(e) => vec![format!("  running the bitfield check: {e}")],
        },
        Ok(o) => vec![format!(
            "  the bitfield check does not compile:\n{}",
            String::from_utf8_lossy(&o.stderr)
        )],
        Err(e) => vec![format!("  running gcc: {e}")],
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn gcc_available() -> bool {
    Command::new(gatun_test_natives::CC)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Preprocesses (with gcc `flags`) and parses `names` on a few threads; returns (parsed,
/// rejected by gcc, failures).
fn run(names: Vec<String>, flags: &[&str]) -> (usize, Vec<String>, Vec<String>) {
    let queue = Mutex::new(names);
    let parsed = Mutex::new(0usize);
    let rejected = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let Some(name) = queue.lock().unwrap().pop() else {
                    break;
                };
                let Some(src) = preprocess(&name, flags) else {
                    rejected.lock().unwrap().push(name);
                    continue;
                };
                let mut decls = Declarations::new();
                match decls.add(&src) {
                    Ok(declared) => {
                        *parsed.lock().unwrap() += 1;
                        // Everything again: identical re-declarations are accepted.
                        if let Err(e) = decls.add(&src) {
                            failures
                                .lock()
                                .unwrap()
                                .push(format!("{name} parsed twice: {e}"));
                        }
                        // With pointer targets too: the same source parses (twice) and
                        // declares the same functions.
                        // SAFETY: nothing is read through these declarations' layouts.
                        let mut targets = unsafe { Declarations::with_pointer_targets() };
                        match targets.add(&src).and_then(|_| targets.add(&src)) {
                            Ok(_) if targets.functions().count() == decls.functions().count() => {}
                            Ok(_) => failures.lock().unwrap().push(format!(
                                "{name} with pointer targets declares {} functions, {} without",
                                targets.functions().count(),
                                decls.functions().count()
                            )),
                            Err(e) => failures
                                .lock()
                                .unwrap()
                                .push(format!("{name} with pointer targets: {e}")),
                        }
                        let wrong = check_against_gcc(&name, flags, &decls, &declared);
                        if !wrong.is_empty() {
                            failures.lock().unwrap().push(format!(
                                "{name}: {} figures differ from gcc's:\n{}",
                                wrong.len(),
                                wrong.join("\n")
                            ));
                        }
                    }
                    // Not C alone: gcc rejects it too (checked only on failure: it is slow).
                    Err(_) if !compiles_alone(&name, flags) => rejected.lock().unwrap().push(name),
                    Err(e) => failures
                        .lock()
                        .unwrap()
                        .push(format!("{name} {}: {e}", flags.join(" "))),
                }
            });
        }
    });
    let mut rejected = rejected.into_inner().unwrap();
    rejected.sort();
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    (parsed.into_inner().unwrap(), rejected, failures)
}

fn usr_include_headers() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/usr/include")
        .expect("/usr/include")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".h"))
        .collect();
    names.sort();
    names
}

#[test]
fn every_usr_include_header_parses() {
    every_usr_include_header_parses_with(&[]);
}

/// The same with `_GNU_SOURCE`, which exposes much more of glibc (`transparent_union`s,
/// `_Float128` functions, more redirections).
#[test]
fn every_usr_include_header_parses_with_gnu_source() {
    every_usr_include_header_parses_with(&["-D_GNU_SOURCE"]);
}

fn every_usr_include_header_parses_with(flags: &[&str]) {
    if !gcc_available() {
        eprintln!("gcc not found: skipping");
        return;
    }
    let names = usr_include_headers();
    let total = names.len();
    let (parsed, rejected, failures) = run(names, flags);
    eprintln!(
        "{total} headers {flags:?}: {parsed} parsed, {} rejected by gcc alone ({}), {} failed",
        rejected.len(),
        rejected.join(", "),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} headers failed to parse:\n\n{}",
        failures.len(),
        total - rejected.len(),
        failures.join("\n\n")
    );
    assert!(parsed >= 100, "only {parsed} headers parsed");
    // obstack.h, among others, has bitfields: their positions were measured by gcc.
    assert!(BITFIELDS_CHECKED.load(Ordering::Relaxed) > 0);
}

#[test]
fn library_headers_parse() {
    if !gcc_available() {
        eprintln!("gcc not found: skipping");
        return;
    }
    let mut names = Vec::new();
    for h in ["sqlite3.h", "zlib.h"] {
        if Path::new("/usr/include").join(h).exists() {
            names.push(h.to_string());
        } else {
            eprintln!("{h} is not installed: skipped");
        }
    }
    let (_, rejected, failures) = run(names, &[]);
    assert!(rejected.is_empty(), "gcc rejected {rejected:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every C header one or two directories below `/usr/include` (`linux/*.h`, `X11/*.h`,
/// `gnutls/*.h`, ...; C++, LLVM and the multiarch `bits/` trees left out) that gcc accepts
/// alone: about 1,600 here. Slow, so not part of the normal run:
/// `cargo test -p gatun --test system_headers -- --ignored`.
#[test]
#[ignore = "about 1,600 headers; run with --ignored"]
fn every_usr_include_subdirectory_header_parses() {
    if !gcc_available() {
        eprintln!("gcc not found: skipping");
        return;
    }
    let skip = [
        "c++", "llvm", "clang", "node", "gdb", "finclude", "python3", "boost", "qt", "eigen", "drm",
    ];
    let mut names = Vec::new();
    let Ok(top) = std::fs::read_dir("/usr/include") else {
        return;
    };
    let mut dirs: Vec<std::path::PathBuf> = top
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter(|p| {
            let n = p
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            !n.contains("-linux-gnu") && !skip.iter().any(|s| n.starts_with(s))
        })
        .collect();
    let mut i = 0;
    while i < dirs.len() {
        let dir = dirs[i].clone();
        i += 1;
        let depth = dir
            .strip_prefix("/usr/include")
            .map_or(0, |p| p.components().count());
        for e in std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
        {
            let p = e.path();
            if p.is_dir() && depth < 2 {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "h") {
                if let Ok(rel) = p.strip_prefix("/usr/include") {
                    names.push(rel.to_string_lossy().into_owned());
                }
            }
        }
    }
    names.sort();
    let total = names.len();
    let (parsed, rejected, failures) = run(names, &[]);
    eprintln!(
        "{total} headers: {parsed} parsed, {} rejected by gcc alone, {} failed; {} bitfields \
         measured",
        rejected.len(),
        failures.len(),
        BITFIELDS_CHECKED.load(Ordering::Relaxed)
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every `openssl/*.h` (libssl-dev), when installed: big headers full of macros,
/// function-pointer typedefs and callbacks.
#[test]
fn openssl_headers_parse() {
    if !gcc_available() {
        eprintln!("gcc not found: skipping");
        return;
    }
    let Ok(dir) = std::fs::read_dir("/usr/include/openssl") else {
        eprintln!("openssl headers are not installed: skipped");
        return;
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".h"))
        .map(|n| format!("openssl/{n}"))
        .collect();
    names.sort();
    let total = names.len();
    let (parsed, rejected, failures) = run(names, &[]);
    eprintln!(
        "{total} openssl headers: {parsed} parsed, {} rejected by gcc alone ({}), {} failed",
        rejected.len(),
        rejected.join(", "),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
