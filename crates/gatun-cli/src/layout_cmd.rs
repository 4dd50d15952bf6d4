//! `gatun layout 'struct S { char c; double d; int i[3]; }'`: the layout of a C type as
//! `gatun::cdecl` computes it — size, alignment, each field's offset and size, the padding
//! holes (like pahole), and the classification of the ABI gatun calls with on this host: on
//! x86-64 Linux the SysV class of each eightbyte (`gatun::abi::sysv::classify`, SysV AMD64
//! ABI §3.2.3), on x86-64 Windows the Microsoft x64 passing (1, 2, 4 or 8 bytes as an integer,
//! any other size by reference), on AArch64 the AAPCS64 (or Apple arm64) argument class
//! (`gatun::abi::aarch64::classify`, AAPCS64 §6.8.2 stage B: HFA, ≤ 16-byte composite, or by
//! reference). `--json` prints the same as
//! JSON; `-i HEADER` makes a header's types available (`gatun layout -i sys/stat.h 'struct
//! stat'`).

use clap::Args;
use gatun::abi::sysv::{classify, ArgClass, Classification};
use gatun::cdecl::CdeclError;
use gatun::layout::MemoryLayout;
use serde_json::{json, Value as Json};

use crate::headers::{header_declarations, HeadersError};

/// Why `gatun layout` could not show a type's layout.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// A header given with `-i` did not preprocess or parse.
    #[error(transparent)]
    Headers(#[from] HeadersError),
    /// The declaration does not parse or does not name a type with a layout; shown as
    /// `LINE:COLUMN: error: MESSAGE`.
    #[error("{}", .0.summary())]
    Declaration(CdeclError),
    /// The JSON document could not be serialised (it cannot for these documents).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Arguments of `gatun layout`.
#[derive(Args, Debug)]
pub struct LayoutArgs {
    /// A C type, optionally preceded by the declarations it uses: `int[3]`, `size_t`,
    /// `struct S { char c; double d; }`, `struct A { int x; }; struct B { struct A a; char c; }`,
    /// `typedef struct { float x, y; } vec2;`.
    pub decl: String,
    /// Print JSON instead of a table. Errors are then one JSON object on stderr,
    /// `{"error": "MESSAGE"}` (stdout stays empty; exit status 2).
    #[arg(long)]
    pub json: bool,
    /// A C header whose declarations the type may use (`sys/stat.h` for `struct stat`),
    /// preprocessed by the system C compiler (`$CC` or `cc`). Repeatable.
    #[arg(short = 'i', long = "include", value_name = "HEADER")]
    pub includes: Vec<String>,
}

/// At most this many fields are listed. Members can be shared (`union U1 { union U0 a, b; }`
/// … `U40` is 2^40 fields when expanded), so the listing stops there and says so.
pub const MAX_FIELDS: usize = 2000;

/// One field (or the whole type), with absolute offsets.
struct Node {
    name: Option<String>,
    offset: usize,
    layout: MemoryLayout,
    children: Vec<Node>,
    /// `(absolute offset, size)` of each padding hole directly inside this struct (between
    /// members, and trailing).
    holes: Vec<(usize, usize)>,
    /// Members not listed because [`MAX_FIELDS`] were already listed.
    elided: usize,
}

/// The field tree of `layout`, listing at most `budget` fields in all.
fn node(name: Option<String>, offset: usize, layout: &MemoryLayout, budget: &mut usize) -> Node {
    let mut children = Vec::new();
    let mut holes = Vec::new();
    let mut elided = 0;
    let mut child = |name: Option<&str>, offset: usize, m: &MemoryLayout| {
        if *budget == 0 {
            elided += 1;
        } else {
            *budget -= 1;
            children.push(node(name.map(str::to_string), offset, m, budget));
        }
    };
    match layout {
        MemoryLayout::Struct(s) => {
            let mut end = 0;
            for (off, m) in s.fields() {
                if off > end {
                    holes.push((offset + end, off - end));
                }
                child(m.name(), offset + off, m);
                end = end.max(off + m.byte_size());
            }
            if s.byte_size() > end {
                holes.push((offset + end, s.byte_size() - end));
            }
        }
        MemoryLayout::Union(u) => {
            for m in u.members() {
                child(m.name(), offset, m);
            }
            let largest = u.members().iter().map(MemoryLayout::byte_size).max();
            let largest = largest.unwrap_or(0);
            if u.byte_size() > largest {
                holes.push((offset + largest, u.byte_size() - largest));
            }
        }
        _ => {}
    }
    Node {
        name,
        offset,
        layout: layout.clone(),
        children,
        holes,
        elided,
    }
}

/// Whether any field of the tree was left out.
fn any_elided(n: &Node) -> bool {
    n.elided > 0 || n.children.iter().any(any_elided)
}

/// The label of a member's type: `struct`, `union`, `[3:i32]`, `i32`. (A member's layout
/// carries the member's name, not its tag, so nested groups are not named.)
fn member_label(l: &MemoryLayout) -> String {
    match l {
        MemoryLayout::Struct(_) => "struct".into(),
        MemoryLayout::Union(_) => "union".into(),
        MemoryLayout::Sequence(s) => format!("[{}:{}]", s.count(), member_label(s.element())),
        other => type_label(other),
    }
}

/// The label of the whole type: `struct point`, `union`, `[3:i32]`, `i32`.
fn type_label(l: &MemoryLayout) -> String {
    match l {
        MemoryLayout::Struct(s) => match s.name() {
            Some(n) => format!("struct {n}"),
            None => "struct".into(),
        },
        MemoryLayout::Union(u) => match u.name() {
            Some(n) => format!("union {n}"),
            None => "union".into(),
        },
        MemoryLayout::Value(v) => v.clone().without_name().to_string(),
        MemoryLayout::Sequence(s) => format!("[{}:{}]", s.count(), type_label(s.element())),
        MemoryLayout::Padding(p) => format!("x{}", p.byte_size()),
    }
}

fn class_name(c: ArgClass) -> &'static str {
    match c {
        ArgClass::NoClass => "NO_CLASS",
        ArgClass::Integer => "INTEGER",
        ArgClass::Sse => "SSE",
        ArgClass::Memory => "MEMORY",
    }
}

fn total_holes(n: &Node) -> (usize, usize) {
    let own = n.holes.iter().map(|h| h.1).sum::<usize>();
    n.children.iter().fold((n.holes.len(), own), |(c, b), ch| {
        let (cc, cb) = total_holes(ch);
        (c + cc, b + cb)
    })
}

fn render_text(n: &Node, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth + 1);
    // Members and holes by offset (a union's members keep their order: all at one offset).
    let mut items: Vec<(usize, u8, Option<&Node>)> =
        n.children.iter().map(|c| (c.offset, 0, Some(c))).collect();
    items.extend(n.holes.iter().map(|&(off, _)| (off, 1, None)));
    items.sort_by_key(|&(off, tag, _)| (off, tag));
    let mut hole_iter = n.holes.iter();
    for (off, _, child) in items {
        match child {
            Some(c) => {
                let name = c.name.as_deref().unwrap_or("(anonymous)");
                out.push_str(&format!(
                    "{:>6} {:>6} {:>6}  {indent}{name}: {}\n",
                    c.offset,
                    c.layout.byte_size(),
                    c.layout.byte_alignment(),
                    member_label(&c.layout)
                ));
                render_text(c, depth + 1, out);
            }
            None => {
                let size = hole_iter.find(|h| h.0 == off).map_or(0, |h| h.1);
                let trailing = off + size == n.offset + n.layout.byte_size();
                let what = if trailing { "trailing padding" } else { "hole" };
                out.push_str(&format!(
                    "{:>6} {:>6} {:>6}  {indent}/* {what}: {size} byte{} */\n",
                    off,
                    size,
                    "",
                    if size == 1 { "" } else { "s" }
                ));
            }
        }
    }
    if n.elided > 0 {
        out.push_str(&format!(
            "{:>6} {:>6} {:>6}  {indent}/* … {} more field{} not shown (at most {MAX_FIELDS} are listed) */\n",
            "",
            "",
            "",
            n.elided,
            if n.elided == 1 { "" } else { "s" }
        ));
    }
}

fn node_json(n: &Node) -> Json {
    let mut v = json!({
        "name": n.name,
        "type": if n.name.is_some() { member_label(&n.layout) } else { type_label(&n.layout) },
        "offset": n.offset,
        "size": n.layout.byte_size(),
        "alignment": n.layout.byte_alignment(),
    });
    if n.layout.is_group() {
        v["fields"] = Json::Array(n.children.iter().map(node_json).collect());
        v["holes"] = Json::Array(
            n.holes
                .iter()
                .map(|&(offset, size)| json!({ "offset": offset, "size": size }))
                .collect(),
        );
        if n.elided > 0 {
            v["elided_fields"] = json!(n.elided);
        }
    }
    v
}

/// The Win64 (Microsoft x64) passing of a value of `layout` as text and JSON, or `None` off
/// x86-64 Windows.
fn win64(layout: &MemoryLayout) -> Option<(String, Json)> {
    use gatun::layout::ScalarKind;
    if !cfg!(all(target_arch = "x86_64", windows)) {
        return None;
    }
    let size = layout.byte_size();
    Some(match layout {
        MemoryLayout::Value(v) if matches!(v.kind(), ScalarKind::F32 | ScalarKind::F64) => (
            "Win64: FLOAT (the argument slot's xmm register; variadic: xmm and GPR; returned in xmm0)"
                .to_string(),
            json!({ "class": "FLOAT" }),
        ),
        MemoryLayout::Value(_) => (
            "Win64: INTEGER (the argument slot's GPR or 8-byte stack slot; returned in rax)"
                .to_string(),
            json!({ "class": "INTEGER" }),
        ),
        _ if gatun::abi::win64::is_register_sized(size) => (
            format!(
                "Win64: INTEGER ({size} bytes: passed as an integer in the slot's GPR, even if all floats; returned in rax)"
            ),
            json!({ "class": "INTEGER", "bytes": size }),
        ),
        _ => (
            format!(
                "Win64: BY REFERENCE ({size} bytes, not 1, 2, 4 or 8: passed as a pointer to a 16-byte aligned caller copy; returned through a hidden pointer in rcx)"
            ),
            json!({ "class": "BY_REFERENCE", "bytes": size }),
        ),
    })
}

/// The SysV x86-64 classification as text and JSON, or `None` off x86-64 and on Windows.
fn sysv(layout: &MemoryLayout) -> Option<(String, Json)> {
    if !cfg!(target_arch = "x86_64") || cfg!(windows) {
        return None;
    }
    Some(match classify(layout) {
        Classification::Memory => {
            let why = if layout.byte_size() > 16 {
                "larger than 16 bytes"
            } else {
                "a misaligned field"
            };
            (
                format!("SysV x86-64: MEMORY ({why}; passed on the stack, returned through a hidden pointer)"),
                json!({ "class": "MEMORY", "eightbytes": Json::Null }),
            )
        }
        Classification::Eightbytes(classes) => {
            let mut text = String::from("SysV x86-64: in registers");
            for (i, c) in classes.iter().enumerate() {
                let lo = i * 8;
                let hi = (lo + 8).min(layout.byte_size()).max(lo + 1) - 1;
                text.push_str(&format!(
                    "\n  eightbyte {i} (bytes {lo}..={hi}): {}",
                    class_name(*c)
                ));
            }
            let names: Vec<&str> = classes.iter().map(|c| class_name(*c)).collect();
            (text, json!({ "class": "REGISTERS", "eightbytes": names }))
        }
    })
}

/// The AAPCS64 (Linux) or Apple arm64 argument class as text and JSON, or `None` off AArch64.
fn aapcs64(layout: &MemoryLayout) -> Option<(String, Json)> {
    use gatun::abi::aarch64::{classify, ArgClass as A, Flavour};
    if !cfg!(target_arch = "aarch64") {
        return None;
    }
    let (flavour, abi) = if cfg!(target_vendor = "apple") {
        (Flavour::Apple, "Apple arm64")
    } else {
        (Flavour::Linux, "AAPCS64")
    };
    let kind_name = |k: gatun::layout::ScalarKind| {
        if k == gatun::layout::ScalarKind::F32 {
            "float"
        } else {
            "double"
        }
    };
    Some(match classify(layout, flavour) {
        A::Integer => (
            format!("{abi}: INTEGER (one x register or stack slot)"),
            json!({ "class": "INTEGER" }),
        ),
        A::Float(k) => (
            format!("{abi}: FLOAT ({}; one v register or stack slot)", kind_name(k)),
            json!({ "class": "FLOAT", "member": kind_name(k) }),
        ),
        A::Hfa { kind, count } => (
            format!(
                "{abi}: HFA of {count} {} (v registers, all or none; B.2, C.2-C.4)",
                kind_name(kind)
            ),
            json!({ "class": "HFA", "member": kind_name(kind), "count": count }),
        ),
        A::Composite { units, align16 } => (
            format!(
                "{abi}: COMPOSITE of {units} 8-byte unit{}{} (x registers, all or none; B.4, C.10)",
                if units == 1 { "" } else { "s" },
                if align16 { ", 16-byte aligned: starts at an even x register (C.8)" } else { "" }
            ),
            json!({ "class": "COMPOSITE", "units": units, "align16": align16 }),
        ),
        A::Indirect => (
            format!("{abi}: INDIRECT (over 16 bytes: passed as a pointer to a caller copy, B.3; returned through x8)"),
            json!({ "class": "INDIRECT" }),
        ),
    })
}

/// Runs `gatun layout`: prints [`render`]'s text on stdout.
///
/// # Errors
/// As [`render`]; `gatun` prints the error as one line on stderr and exits with status 2.
pub fn run(args: &LayoutArgs) -> Result<(), LayoutError> {
    print!("{}", render(args)?);
    Ok(())
}

/// What `gatun layout` prints for `args`: the table (or with `args.json`, the JSON document),
/// ending in a newline. Headers given (`args.includes`) are preprocessed by the system C
/// compiler first.
///
/// # Errors
/// A header that does not preprocess or parse ([`LayoutError::Headers`]), or the parse error
/// of `args.decl` (positioned), or a declaration that is not a type with a layout
/// ([`LayoutError::Declaration`]).
pub fn render(args: &LayoutArgs) -> Result<String, LayoutError> {
    let mut decls = header_declarations(&args.includes)?;
    let layout = decls
        .type_layout(&args.decl)
        .map_err(LayoutError::Declaration)?;
    render_layout(&layout, args.json)
}

/// What `gatun layout` prints for a type of `layout` (as a table, or with `json` as a JSON
/// document), ending in a newline. At most [`MAX_FIELDS`] fields are listed.
///
/// # Errors
/// Only if JSON serialisation fails ([`LayoutError::Json`]; it does not for these documents).
pub fn render_layout(layout: &MemoryLayout, json: bool) -> Result<String, LayoutError> {
    let mut budget = MAX_FIELDS;
    let root = node(None, 0, layout, &mut budget);
    let sysv = sysv(layout);
    let aapcs64 = aapcs64(layout);
    let win64 = win64(layout);
    if json {
        let mut v = node_json(&root);
        v["sysv_x86_64"] = sysv.clone().map_or(Json::Null, |s| s.1);
        if let Some((_, j)) = &aapcs64 {
            v["aapcs64"] = j.clone();
        }
        if let Some((_, j)) = &win64 {
            v["win64"] = j.clone();
        }
        let mut out = serde_json::to_string_pretty(&v)?;
        out.push('\n');
        return Ok(out);
    }
    let mut out = format!(
        "{}: size {}, alignment {}\n",
        type_label(layout),
        layout.byte_size(),
        layout.byte_alignment()
    );
    if layout.is_group() {
        out.push_str("offset   size  align  field\n");
        render_text(&root, 0, &mut out);
        let (count, bytes) = total_holes(&root);
        out.push_str(&format!(
            "padding: {bytes} byte{} in {count} hole{}{}\n",
            if bytes == 1 { "" } else { "s" },
            if count == 1 { "" } else { "s" },
            if any_elided(&root) {
                " among the fields shown"
            } else {
                ""
            }
        ));
    }
    if let Some((text, _)) = sysv.or(aapcs64).or(win64) {
        out.push_str(&text);
        out.push('\n');
    }
    Ok(out)
}
