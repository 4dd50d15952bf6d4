//! `gatun layout 'struct S { char c; double d; int i[3]; }'`: the layout of a C type as
//! `gatun::cdecl` computes it — size, alignment, each field's offset and size, the padding
//! holes (like pahole), and the classification of the ABI gatun calls with on this host: on
//! x86-64 Linux the SysV class of each eightbyte (`gatun::abi::sysv::classify`, SysV AMD64
//! ABI §3.2.3), on x86-64 Windows the Microsoft x64 passing (1, 2, 4 or 8 bytes as an integer,
//! any other size by reference), on AArch64 the AAPCS64 (or Apple arm64) argument class
//! (`gatun::abi::aarch64::classify`, AAPCS64 §6.8.2 stage B: HFA, ≤ 16-byte composite, or by
//! reference), on RISC-V 64 the LP64D class (`gatun::abi::riscv64::classify`: an integer, a
//! float, a struct of floats or of a float and an integer for FP registers, an aggregate in
//! integer registers, or by reference), on s390x its class (`gatun::abi::s390x::classify`: a
//! float-like struct for an FPR, a 1-, 2-, 4- or 8-byte image for a GPR, or by reference), on
//! PPC64LE the ELFv2 class (`gatun::abi::ppc64le::classify`: an HFA for FPRs or an aggregate in
//! doublewords). `--json` prints the same as
//! JSON; `-i HEADER` makes a header's types available (`gatun layout -i sys/stat.h 'struct
//! stat'`).

use clap::Args;
use gatun::abi::sysv::{classify, ArgClass, Classification};
use gatun::cdecl::{CdeclError, Declarations};
use gatun::layout::{BitField, MemoryLayout, ScalarKind, ValueLayout};
use serde_json::{json, Value as Json};

use crate::headers::{
    header_declarations, header_hint, undeclared_hint, undeclared_type, HeaderArgs, HeadersError,
    Missing,
};

/// Why `gatun layout` could not show a type's layout.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// A header given with `-i` did not preprocess or parse.
    #[error(transparent)]
    Headers(#[from] HeadersError),
    /// The declaration does not parse or does not name a type with a layout; shown as
    /// `LINE:COLUMN: error: MESSAGE`, and for a type that is not declared, what to add
    /// (`(add -i time.h)` for `struct tm`).
    #[error("{}{}", .0.summary(), declaration_hint(.0))]
    Declaration(CdeclError),
    /// The JSON document could not be serialised (it cannot for these documents).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// ` (add -i time.h)` after an error saying a type is not declared or defined (or is an
/// unknown name that a well-known header declares), else nothing.
fn declaration_hint(e: &CdeclError) -> String {
    match undeclared_type(e.message()) {
        Some((ty, Missing::NotDeclared | Missing::Incomplete)) => {
            format!(" ({})", undeclared_hint(&ty))
        }
        Some((ty, Missing::Unknown)) => match header_hint(&ty) {
            Some(h) => format!(" (add -i {h})"),
            None => String::new(),
        },
        None => String::new(),
    }
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
    /// The headers whose types the declaration may use (`-i sys/stat.h` for `struct stat`),
    /// and the preprocessor's options for them.
    #[command(flatten)]
    pub headers: HeaderArgs,
}

/// At most this many fields are listed. Members can be shared (`union U1 { union U0 a, b; }`
/// … `U40` is 2^40 fields when expanded), so the listing stops there and says so.
pub const MAX_FIELDS: usize = 2000;

/// A bit-field member: where its bits are.
#[derive(Clone, Copy)]
struct Bits {
    /// The bit of the byte at the node's offset where the bit-field starts, in the target's bit
    /// order (0 = the least significant bit on a little-endian target, the most significant
    /// on a big-endian one, as `gatun::layout::BitField` numbers them).
    bit: usize,
    /// The width, in bits.
    width: u32,
    /// The declared type.
    kind: ScalarKind,
}

/// One field (or the whole type), with absolute offsets.
struct Node {
    name: Option<String>,
    offset: usize,
    layout: MemoryLayout,
    /// Set for a bit-field (then `layout` is the bytes holding it).
    bits: Option<Bits>,
    children: Vec<Node>,
    /// `(absolute offset, size)` of each padding hole directly inside this struct (between
    /// members, and trailing), in bytes.
    holes: Vec<(usize, usize)>,
    /// `(absolute bit offset, width)` of each run of unused bits among this struct's
    /// bit-field bytes.
    bit_holes: BitRuns,
    /// Members not listed because [`MAX_FIELDS`] were already listed.
    elided: usize,
}

/// The bit-fields of the record being listed: `bits` (offsets from the record's start),
/// the record starting at byte `base`. Anonymous struct and union members share their
/// record's; named struct members have their own, which are not known here.
#[derive(Clone, Copy)]
struct BitContext<'b> {
    bits: &'b [BitField],
    base: usize,
}

impl BitContext<'_> {
    const NONE: BitContext<'static> = BitContext { bits: &[], base: 0 };

    /// The bit-fields whose first bit lies in the bytes `start..end` (absolute), as
    /// `(absolute bit offset, bit-field)`.
    fn within(&self, start: usize, end: usize) -> Vec<(usize, &BitField)> {
        self.bits
            .iter()
            .map(|b| (self.base * 8 + b.bit_offset(), b))
            .filter(|&(at, _)| at >= start * 8 && at < end * 8)
            .collect()
    }
}

/// Whether `m` is the storage of bit-fields: an unnamed byte array (how cdecl lays out the
/// bytes holding a record's bit-fields).
fn is_bit_storage(m: &MemoryLayout) -> bool {
    match m {
        MemoryLayout::Sequence(s) => {
            m.name().is_none() && s.element().as_value().map(|v| v.kind()) == Some(ScalarKind::U8)
        }
        _ => false,
    }
}

/// Runs of bits, as `(absolute bit offset, width in bits)`.
type BitRuns = Vec<(usize, usize)>;

/// The nodes of the bit-fields stored in `m`, at absolute byte `at`, and the runs of its bits
/// no bit-field uses; `None` when the record's bit-fields are not known.
fn bit_nodes(at: usize, m: &MemoryLayout, ctx: BitContext<'_>) -> Option<(Vec<Node>, BitRuns)> {
    if ctx.bits.is_empty() {
        return None;
    }
    let end = at + m.byte_size();
    let mut fields = ctx.within(at, end);
    fields.sort_by_key(|&(bit, _)| bit);
    let mut nodes = Vec::with_capacity(fields.len());
    let mut gaps = Vec::new();
    let mut next = at * 8;
    for (bit, b) in fields {
        if bit > next {
            gaps.push((next, bit - next));
        }
        next = next.max(bit + b.bit_width() as usize);
        nodes.push(Node {
            name: Some(b.name().to_string()),
            offset: bit / 8,
            layout: m.clone(),
            bits: Some(Bits {
                bit: bit % 8,
                width: b.bit_width(),
                kind: b.kind(),
            }),
            children: Vec::new(),
            holes: Vec::new(),
            bit_holes: Vec::new(),
            elided: 0,
        });
    }
    if end * 8 > next {
        gaps.push((next, end * 8 - next));
    }
    Some((nodes, gaps))
}

/// The field tree of `layout` at byte `offset`, listing at most `budget` fields in all;
/// `ctx` holds the bit-fields of the record `layout` belongs to (or is).
fn node(
    name: Option<String>,
    offset: usize,
    layout: &MemoryLayout,
    ctx: BitContext<'_>,
    budget: &mut usize,
) -> Node {
    let mut children = Vec::new();
    let mut holes = Vec::new();
    let mut bit_holes = Vec::new();
    let mut elided = 0;
    // The members of a group: bit-field bytes become the bit-fields (when known), anonymous
    // records share this record's bit-fields, named ones have their own (unknown here).
    let mut member = |at: usize, m: &MemoryLayout, children: &mut Vec<Node>| {
        if is_bit_storage(m) {
            if let Some((nodes, gaps)) = bit_nodes(at, m, ctx) {
                bit_holes.extend(gaps);
                for n in nodes {
                    if *budget == 0 {
                        elided += 1;
                    } else {
                        *budget -= 1;
                        children.push(n);
                    }
                }
                return;
            }
        }
        if *budget == 0 {
            elided += 1;
            return;
        }
        *budget -= 1;
        let inner = if m.is_group() && m.name().is_none() {
            ctx
        } else {
            BitContext::NONE
        };
        children.push(node(m.name().map(str::to_string), at, m, inner, budget));
    };
    match layout {
        MemoryLayout::Struct(s) => {
            let mut end = 0;
            for (off, m) in s.fields() {
                if matches!(m, MemoryLayout::Padding(_)) {
                    continue;
                }
                if off > end {
                    holes.push((offset + end, off - end));
                }
                member(offset + off, m, &mut children);
                end = end.max(off + m.byte_size());
            }
            if s.byte_size() > end {
                holes.push((offset + end, s.byte_size() - end));
            }
        }
        MemoryLayout::Union(u) => {
            let mut largest = 0;
            let mut bits_listed = false;
            for m in u.members() {
                if matches!(m, MemoryLayout::Padding(_)) {
                    continue;
                }
                largest = largest.max(m.byte_size());
                // In a union each bit-field has its own bytes at offset 0: list the
                // bit-fields once, with the first run.
                if is_bit_storage(m) && !ctx.bits.is_empty() {
                    if !bits_listed {
                        bits_listed = true;
                        let all = MemoryLayout::sequence_layout(u.byte_size(), ValueLayout::U8)
                            .unwrap_or_else(|_| m.clone());
                        if let Some((nodes, _)) = bit_nodes(offset, &all, ctx) {
                            children.extend(nodes);
                        }
                    }
                    continue;
                }
                member(offset, m, &mut children);
            }
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
        bits: None,
        children,
        holes,
        bit_holes,
        elided,
    }
}

/// Whether any field of the tree was left out.
fn any_elided(n: &Node) -> bool {
    n.elided > 0 || n.children.iter().any(any_elided)
}

/// The label of a member's type: `struct`, `union`, `[3:i32]`, `i32`, `i32:3` for a
/// bit-field. (A member's layout carries the member's name, not its tag, so nested groups
/// are not named.)
fn member_label(n: &Node) -> String {
    match n.bits {
        Some(b) => format!("{}:{}", b.kind, b.width),
        None => layout_member_label(&n.layout),
    }
}

fn layout_member_label(l: &MemoryLayout) -> String {
    match l {
        MemoryLayout::Struct(_) => "struct".into(),
        MemoryLayout::Union(_) => "union".into(),
        MemoryLayout::Sequence(s) => {
            format!("[{}:{}]", s.count(), layout_member_label(s.element()))
        }
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

/// `(holes, bytes)` of padding in the tree, and `(bit holes, bits)` unused among bit-field
/// bytes.
fn total_holes(n: &Node) -> ((usize, usize), (usize, usize)) {
    let own = (n.holes.len(), n.holes.iter().map(|h| h.1).sum::<usize>());
    let own_bits = (
        n.bit_holes.len(),
        n.bit_holes.iter().map(|h| h.1).sum::<usize>(),
    );
    n.children
        .iter()
        .fold((own, own_bits), |((c, b), (bc, bb)), ch| {
            let ((cc, cb), (cbc, cbb)) = total_holes(ch);
            ((c + cc, b + cb), (bc + cbc, bb + cbb))
        })
}

/// One row of the table: a member, a padding hole or unused bits, by offset.
enum Row<'n> {
    Member(&'n Node),
    Hole(usize, usize),
    BitHole(usize, usize),
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn render_text(n: &Node, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth + 1);
    // Members and holes by offset (bits within a byte); a union's members keep their order:
    // all at one offset.
    let mut rows: Vec<(usize, u8, Row<'_>)> = n
        .children
        .iter()
        .map(|c| {
            (
                c.offset * 8 + c.bits.map_or(0, |b| b.bit),
                0,
                Row::Member(c),
            )
        })
        .collect();
    rows.extend(
        n.holes
            .iter()
            .map(|&(off, size)| (off * 8, 1, Row::Hole(off, size))),
    );
    rows.extend(
        n.bit_holes
            .iter()
            .map(|&(bit, width)| (bit, 1, Row::BitHole(bit, width))),
    );
    rows.sort_by_key(|&(at, tag, _)| (at, tag));
    for (_, _, row) in rows {
        match row {
            Row::Member(c) => {
                // Unnamed bytes holding bit-fields whose names are not known here (those of
                // a named nested record) are labelled as such.
                let unnamed = if is_bit_storage(&c.layout) {
                    "(bit-fields)"
                } else {
                    "(anonymous)"
                };
                let name = c.name.as_deref().unwrap_or(unnamed);
                match c.bits {
                    Some(b) => out.push_str(&format!(
                        "{:>6} {:>6} {:>6}  {indent}{name}: {} (bit offset {}, width {})\n",
                        c.offset,
                        "",
                        "",
                        member_label(c),
                        b.bit,
                        b.width
                    )),
                    None => out.push_str(&format!(
                        "{:>6} {:>6} {:>6}  {indent}{name}: {}\n",
                        c.offset,
                        c.layout.byte_size(),
                        c.layout.byte_alignment(),
                        member_label(c)
                    )),
                }
                render_text(c, depth + 1, out);
            }
            Row::Hole(off, size) => {
                let trailing = off + size == n.offset + n.layout.byte_size();
                let what = if trailing { "trailing padding" } else { "hole" };
                out.push_str(&format!(
                    "{:>6} {:>6} {:>6}  {indent}/* {what}: {size} byte{} */\n",
                    off,
                    size,
                    "",
                    plural(size)
                ));
            }
            Row::BitHole(bit, width) => out.push_str(&format!(
                "{:>6} {:>6} {:>6}  {indent}/* bit hole: {width} bit{} at bit offset {} */\n",
                bit / 8,
                "",
                "",
                plural(width),
                bit % 8
            )),
        }
    }
    if n.elided > 0 {
        out.push_str(&format!(
            "{:>6} {:>6} {:>6}  {indent}/* … {} more field{} not shown (at most {MAX_FIELDS} are listed) */\n",
            "",
            "",
            "",
            n.elided,
            plural(n.elided)
        ));
    }
}

fn node_json(n: &Node) -> Json {
    if let Some(b) = n.bits {
        return json!({
            "name": n.name,
            "type": member_label(n),
            "offset": n.offset,
            "bit_offset": b.bit,
            "bit_width": b.width,
        });
    }
    let mut v = json!({
        "name": n.name,
        "type": if n.name.is_some() { member_label(n) } else { type_label(&n.layout) },
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
        if !n.bit_holes.is_empty() {
            v["bit_holes"] = Json::Array(
                n.bit_holes
                    .iter()
                    .map(|&(bit, width)| {
                        json!({ "offset": bit / 8, "bit_offset": bit % 8, "bit_width": width })
                    })
                    .collect(),
            );
        }
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
    Some(match classify(layout, flavour) {
        A::Integer => (
            format!("{abi}: INTEGER (one x register or stack slot)"),
            json!({ "class": "INTEGER" }),
        ),
        A::Float(k) => (
            format!("{abi}: FLOAT ({}; one v register or stack slot)", float_name(k)),
            json!({ "class": "FLOAT", "member": float_name(k) }),
        ),
        A::Hfa { kind, count } => (
            format!(
                "{abi}: HFA of {count} {} (v registers, all or none; B.2, C.2-C.4)",
                float_name(kind)
            ),
            json!({ "class": "HFA", "member": float_name(kind), "count": count }),
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

/// The RISC-V 64 LP64D argument class as text and JSON, or `None` off RISC-V 64.
fn lp64d(layout: &MemoryLayout) -> Option<(String, Json)> {
    use gatun::abi::riscv64::{classify, ArgClass as A, Leaf};
    if !cfg!(target_arch = "riscv64") {
        return None;
    }
    let leaf = |l: Leaf| format!("{} at byte {}", l.kind.name(), l.offset);
    Some(match classify(layout) {
        A::Integer(_) => (
            "LP64D: INTEGER (one a register or stack slot; narrower than 64 bits: extended to 32 bits by its sign, then sign-extended)".to_string(),
            json!({ "class": "INTEGER" }),
        ),
        A::Float(_) => (
            "LP64D: FLOAT (one fa register while any is left, else as an integer; variadic: as an integer)".to_string(),
            json!({ "class": "FLOAT" }),
        ),
        A::Floats { leaves, count } => {
            let shown: Vec<String> = leaves[..count as usize].iter().map(|l| leaf(*l)).collect();
            (
                format!(
                    "LP64D: FLOATS ({}: one fa register each when enough are left, else the integer rule; variadic: the integer rule)",
                    shown.join(" and ")
                ),
                json!({ "class": "FLOATS", "count": count }),
            )
        }
        A::FloatInt { float, int } => (
            format!(
                "LP64D: FLOAT_INT ({} in an fa register, {} in an a register, when one of each is left; else the integer rule)",
                leaf(float),
                leaf(int)
            ),
            json!({ "class": "FLOAT_INT" }),
        ),
        A::Aggregate { align16 } => (
            format!(
                "LP64D: AGGREGATE of {} bytes (a registers, 8 bytes each, the last one may spill to the stack{})",
                layout.byte_size(),
                if align16 { "; variadic: starts at an even a register" } else { "" }
            ),
            json!({ "class": "AGGREGATE", "align16": align16 }),
        ),
        A::Indirect => (
            "LP64D: INDIRECT (over 16 bytes: passed as a pointer to a caller copy; returned through a hidden pointer in a0)".to_string(),
            json!({ "class": "INDIRECT" }),
        ),
    })
}

/// The name of a floating-point kind as C spells it.
fn float_name(k: gatun::layout::ScalarKind) -> &'static str {
    if k == gatun::layout::ScalarKind::F32 {
        "float"
    } else {
        "double"
    }
}

/// The s390x (z/Architecture ELF ABI) argument class as text and JSON, or `None` off s390x.
fn s390x(layout: &MemoryLayout) -> Option<(String, Json)> {
    use gatun::abi::s390x::{classify, ArgClass as A};
    if !cfg!(target_arch = "s390x") {
        return None;
    }
    Some(match classify(layout) {
        A::Integer(_) => (
            "s390x: INTEGER (one r register, r2-r6, or 8-byte stack slot; narrower than 64 bits: sign- or zero-extended by its type)".to_string(),
            json!({ "class": "INTEGER" }),
        ),
        A::Float(k) => (
            format!("s390x: FLOAT ({}; one f register, f0/f2/f4/f6, or 8-byte stack slot)", float_name(k)),
            json!({ "class": "FLOAT", "member": float_name(k) }),
        ),
        A::FloatStruct { size } => (
            format!("s390x: FLOAT_STRUCT of {size} bytes (its one floating-point member in an f register or stack slot; returned through a hidden pointer in r2)"),
            json!({ "class": "FLOAT_STRUCT", "size": size }),
        ),
        A::Small { size } => (
            format!("s390x: SMALL of {size} bytes (its big-endian image in one r register or stack slot; returned through a hidden pointer in r2)"),
            json!({ "class": "SMALL", "size": size }),
        ),
        A::Indirect => (
            format!(
                "s390x: INDIRECT ({} bytes, not 1, 2, 4 or 8: passed as a pointer to a caller copy; returned through a hidden pointer in r2)",
                layout.byte_size()
            ),
            json!({ "class": "INDIRECT" }),
        ),
    })
}

/// The PPC64LE ELFv2 argument class as text and JSON, or `None` off PPC64LE.
fn elfv2(layout: &MemoryLayout) -> Option<(String, Json)> {
    use gatun::abi::ppc64le::{classify, ArgClass as A};
    if !cfg!(all(target_arch = "powerpc64", target_endian = "little")) {
        return None;
    }
    Some(match classify(layout) {
        A::Integer(_) => (
            "ELFv2: INTEGER (one doubleword: r3-r10 or the parameter save area; narrower than 64 bits: sign- or zero-extended by its type)".to_string(),
            json!({ "class": "INTEGER" }),
        ),
        A::Float(k) => (
            format!("ELFv2: FLOAT ({}; an f register, f1-f13, while any is left, and its doubleword; variadic: also in the doubleword's r register)", float_name(k)),
            json!({ "class": "FLOAT", "member": float_name(k) }),
        ),
        A::Hfa { kind, count } => (
            format!(
                "ELFv2: HFA of {count} {} (one f register each while any of f1-f13 is left, the rest in its doublewords; returned in f1-f{count})",
                float_name(kind)
            ),
            json!({ "class": "HFA", "member": float_name(kind), "count": count }),
        ),
        A::Aggregate { align16 } => {
            let size = layout.byte_size();
            (
                format!(
                    "ELFv2: AGGREGATE of {size} bytes ({} doubleword{}: r3-r10, then the parameter save area{}; returned {})",
                    size.div_ceil(8),
                    plural(size.div_ceil(8)),
                    if align16 { "; 16-byte aligned: starts at an even doubleword" } else { "" },
                    if size <= 16 { "in r3 and r4" } else { "through a hidden pointer in r3" }
                ),
                json!({ "class": "AGGREGATE", "align16": align16 }),
            )
        }
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
/// ending in a newline. Headers given (`args.headers`) are preprocessed by the system C
/// compiler first. A record's bit-fields are listed by name, with their bit offsets and
/// widths (those of named nested records as the bytes holding them).
///
/// # Errors
/// A header that does not preprocess or parse ([`LayoutError::Headers`]), or the parse error
/// of `args.decl` (positioned), or a declaration that is not a type with a layout
/// ([`LayoutError::Declaration`]; a type that is not declared says which header usually
/// declares it).
pub fn render(args: &LayoutArgs) -> Result<String, LayoutError> {
    let mut decls = header_declarations(&args.headers)?;
    let layout = decls
        .type_layout(&args.decl)
        .map_err(LayoutError::Declaration)?;
    let bits = record_bitfields(&decls, &args.decl, &layout);
    render_with_bitfields(&layout, &bits, args.json)
}

/// The bit-fields of the record type `layout` that `decl` names (after `decl` was added to
/// `decls`): by the record's tag or typedef name, or for an untagged record written out in
/// `decl` by declaring it again as a typedef (`DECL typedef NAME;`) in a copy of `decls`.
fn record_bitfields(decls: &Declarations, decl: &str, layout: &MemoryLayout) -> Vec<BitField> {
    if !layout.is_group() {
        return Vec::new();
    }
    if layout.name().is_some() {
        return named_record_bitfields(decls, layout);
    }
    const PROBE: &str = "__gatun_layout_record";
    let mut probe = decls.clone();
    let src = format!("{} typedef {PROBE};", decl.trim_end().trim_end_matches(';'));
    match probe.type_layout(&src) {
        Ok(l) if l == layout.clone().with_name(PROBE) => probe.bitfields(PROBE).to_vec(),
        _ => Vec::new(),
    }
}

/// The bit-fields of the record type `layout`, found in `decls` by the record's name (its
/// tag, `struct NAME` / `union NAME`, or the typedef name an untagged record is known by);
/// empty for other types and records without bit-fields.
pub(crate) fn named_record_bitfields(decls: &Declarations, layout: &MemoryLayout) -> Vec<BitField> {
    let Some(name) = layout.name().filter(|_| layout.is_group()) else {
        return Vec::new();
    };
    let keyword = if matches!(layout, MemoryLayout::Union(_)) {
        "union"
    } else {
        "struct"
    };
    [format!("{keyword} {name}"), name.to_string()]
        .iter()
        .map(|key| decls.bitfields(key))
        .find(|bits| !bits.is_empty())
        .map_or(Vec::new(), <[BitField]>::to_vec)
}

/// What `gatun layout` prints for a type of `layout` (as a table, or with `json` as a JSON
/// document), ending in a newline. At most [`MAX_FIELDS`] fields are listed. Bit-fields
/// are not known from a layout alone: their bytes are listed as unnamed byte arrays (see
/// [`render`]).
///
/// # Errors
/// Only if JSON serialisation fails ([`LayoutError::Json`]; it does not for these documents).
pub fn render_layout(layout: &MemoryLayout, json: bool) -> Result<String, LayoutError> {
    render_with_bitfields(layout, &[], json)
}

/// [`render_layout`] for a record whose bit-fields are `bits`.
fn render_with_bitfields(
    layout: &MemoryLayout,
    bits: &[BitField],
    json: bool,
) -> Result<String, LayoutError> {
    let mut budget = MAX_FIELDS;
    let ctx = BitContext { bits, base: 0 };
    let root = node(None, 0, layout, ctx, &mut budget);
    let sysv = sysv(layout);
    let aapcs64 = aapcs64(layout);
    let win64 = win64(layout);
    let lp64d = lp64d(layout);
    let s390x = s390x(layout);
    let elfv2 = elfv2(layout);
    if json {
        let mut v = node_json(&root);
        v["sysv_x86_64"] = sysv.clone().map_or(Json::Null, |s| s.1);
        if let Some((_, j)) = &aapcs64 {
            v["aapcs64"] = j.clone();
        }
        if let Some((_, j)) = &win64 {
            v["win64"] = j.clone();
        }
        if let Some((_, j)) = &lp64d {
            v["lp64d"] = j.clone();
        }
        if let Some((_, j)) = &s390x {
            v["s390x"] = j.clone();
        }
        if let Some((_, j)) = &elfv2 {
            v["elfv2"] = j.clone();
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
        let ((count, bytes), (bit_count, bit_total)) = total_holes(&root);
        out.push_str(&format!(
            "padding: {bytes} byte{} in {count} hole{}",
            plural(bytes),
            plural(count)
        ));
        if bit_count > 0 {
            out.push_str(&format!(
                ", {bit_total} unused bit{} in {bit_count} bit hole{}",
                plural(bit_total),
                plural(bit_count)
            ));
        }
        if any_elided(&root) {
            out.push_str(" among the fields shown");
        }
        out.push('\n');
    }
    if let Some((text, _)) = sysv.or(aapcs64).or(win64).or(lp64d).or(s390x).or(elfv2) {
        out.push_str(&text);
        out.push('\n');
    }
    Ok(out)
}
