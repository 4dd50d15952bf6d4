//! The ABI-neutral half of the compiler oracles (`aarch64_oracle`, `riscv64_oracle`): a seeded
//! random generator, C types as text and as gatun layouts (structs, unions, arrays, zero-size
//! members), signatures rendered as one C file of callers, callees and return functions, the
//! assembly split into functions, and the report of failed checks. Each oracle adds its own
//! type mixture, its assembly interpreter and its plan checks.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::Command;

use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
use gatun::linker::FunctionDescriptor;

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A C type: its spelling, its layout, and the struct definitions it needs.
#[derive(Clone)]
pub struct CType {
    pub spelling: String,
    pub layout: MemoryLayout,
}

pub struct Types {
    pub defs: String,
    pub next: usize,
    /// Whether to generate zero-length arrays (on which gcc and clang disagree for Linux).
    pub zero_arrays: bool,
}

pub const INTS: [ScalarKind; 10] = [
    ScalarKind::Bool,
    ScalarKind::I8,
    ScalarKind::U8,
    ScalarKind::I16,
    ScalarKind::U16,
    ScalarKind::I32,
    ScalarKind::U32,
    ScalarKind::I64,
    ScalarKind::U64,
    ScalarKind::Pointer,
];

pub fn c_name(k: ScalarKind) -> &'static str {
    match k {
        ScalarKind::Bool => "_Bool",
        ScalarKind::I8 => "signed char",
        ScalarKind::U8 => "unsigned char",
        ScalarKind::I16 => "short",
        ScalarKind::U16 => "unsigned short",
        ScalarKind::I32 => "int",
        ScalarKind::U32 => "unsigned",
        ScalarKind::I64 => "long long",
        ScalarKind::U64 => "unsigned long long",
        ScalarKind::F32 => "float",
        ScalarKind::F64 => "double",
        ScalarKind::Pointer => "void*",
    }
}

pub fn scalar(k: ScalarKind) -> CType {
    CType {
        spelling: c_name(k).into(),
        layout: ValueLayout::new(k).into(),
    }
}

/// A struct member: a type, possibly as an array of `n`.
pub struct Field {
    pub ty: CType,
    pub array: Option<usize>,
}

impl Types {
    pub fn record(&mut self, fields: Vec<Field>, union: bool, aligned16: bool) -> CType {
        self.record_aligned(fields, union, if aligned16 { 16 } else { 1 })
    }

    /// A struct or union of `fields` with `__attribute__((aligned(align)))` when `align` is
    /// over 1 (the layout then padded to a multiple of `align` and aligned to it, if that
    /// raises its natural alignment).
    pub fn record_aligned(&mut self, fields: Vec<Field>, union: bool, align: usize) -> CType {
        let name = format!("t{}", self.next);
        self.next += 1;
        let kw = if union { "union" } else { "struct" };
        let _ = write!(self.defs, "{kw} {name} {{");
        let mut members = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            match f.array {
                Some(n) => {
                    let _ = write!(self.defs, " {} m{i}[{n}];", f.ty.spelling);
                    members.push(MemoryLayout::sequence_layout(n, f.ty.layout.clone()).unwrap());
                }
                None => {
                    let _ = write!(self.defs, " {} m{i};", f.ty.spelling);
                    members.push(f.ty.layout.clone());
                }
            }
        }
        let attr = if align > 1 {
            format!(" __attribute__((aligned({align})))")
        } else {
            String::new()
        };
        let _ = writeln!(self.defs, " }}{attr};");
        let build = |m: Vec<MemoryLayout>| {
            if union {
                MemoryLayout::union_layout(m).unwrap()
            } else {
                MemoryLayout::c_struct(m).unwrap()
            }
        };
        let mut layout = build(members.clone());
        if align > 1 && layout.byte_alignment() < align {
            let pad = layout.byte_size().next_multiple_of(align) - layout.byte_size();
            if pad > 0 {
                if union {
                    members.push(MemoryLayout::padding_layout(layout.byte_size() + pad).unwrap());
                } else {
                    members.push(MemoryLayout::padding_layout(pad).unwrap());
                }
                layout = build(members);
            }
            layout = layout.with_byte_alignment(align).unwrap();
        }
        CType {
            spelling: format!("{kw} {name}"),
            layout,
        }
    }

    /// A zero-size member: an empty struct, an array of them, and (when `zero_arrays`) a
    /// zero-length array, or a struct holding one, or an array of such structs.
    pub fn zero_size_member(&mut self, rng: &mut Rng, k: ScalarKind) -> Field {
        let choice = rng.below(if self.zero_arrays { 5 } else { 2 });
        match choice {
            0 | 1 => Field {
                ty: self.record(Vec::new(), false, false),
                array: (choice == 1).then(|| 1 + rng.below(3)),
            },
            2 => Field {
                ty: scalar(k),
                array: Some(0),
            },
            _ => {
                let z = Field {
                    ty: scalar(k),
                    array: Some(0),
                };
                Field {
                    ty: self.record(vec![z], false, false),
                    array: (choice == 4).then(|| 1 + rng.below(3)),
                }
            }
        }
    }

    /// A composite of mixed integer (and sometimes float) members of about `target` bytes.
    pub fn mixed(&mut self, rng: &mut Rng, target: usize, floats: bool) -> CType {
        let mut fields = Vec::new();
        let mut size = 0usize;
        while size < target.max(1) {
            let k = if floats && rng.chance(30) {
                [ScalarKind::F32, ScalarKind::F64][rng.below(2)]
            } else {
                INTS[rng.below(INTS.len())]
            };
            let ty = scalar(k);
            let array = (rng.chance(20) && k.byte_size() < 4).then(|| 1 + rng.below(5));
            size = size.next_multiple_of(k.byte_size()) + k.byte_size() * array.unwrap_or(1);
            fields.push(Field { ty, array });
            if rng.chance(10) && size < target {
                let t = 1 + rng.below(6);
                let inner = self.mixed(rng, t, floats);
                size =
                    size.next_multiple_of(inner.layout.byte_alignment()) + inner.layout.byte_size();
                fields.push(Field {
                    ty: inner,
                    array: None,
                });
            }
        }
        self.record(fields, false, false)
    }
}

pub struct Sig {
    pub ret: Option<CType>,
    pub args: Vec<CType>,
    pub first_variadic: Option<usize>,
}

impl Sig {
    pub fn descriptor(&self) -> FunctionDescriptor {
        let args = self.args.iter().map(|a| a.layout.clone());
        match &self.ret {
            Some(r) => FunctionDescriptor::of(r.layout.clone(), args),
            None => FunctionDescriptor::of_void(args),
        }
    }
}

/// The C text of `sigs`: `defs`, then per signature its globals, an extern `f{i}` and a
/// caller `call{i}` passing a global per argument, a `callee{i}` storing each parameter to
/// its global (non-variadic signatures) and a `ret{i}` returning global `gr{i}`.
pub fn render(defs: &str, sigs: &[Sig]) -> String {
    let mut src = defs.to_string();
    for (i, s) in sigs.iter().enumerate() {
        for (k, a) in s.args.iter().enumerate() {
            let _ = writeln!(src, "{} g{i}_{k};", a.spelling);
        }
        let params: Vec<String> = s
            .args
            .iter()
            .enumerate()
            .map(|(k, a)| format!("{} a{k}", a.spelling))
            .collect();
        let named = s.first_variadic.unwrap_or(s.args.len());
        let mut decl = params[..named].join(", ");
        if s.first_variadic.is_some() {
            decl.push_str(", ...");
        }
        if decl.is_empty() {
            decl.push_str("void");
        }
        let ret = s
            .ret
            .as_ref()
            .map_or("void".to_string(), |r| r.spelling.clone());
        // The downcall side: a caller of an external function.
        let _ = writeln!(src, "{ret} f{i}({decl});");
        let pass: Vec<String> = (0..s.args.len()).map(|k| format!("g{i}_{k}")).collect();
        let _ = writeln!(src, "void call{i}(void) {{ f{i}({}); }}", pass.join(", "));
        // The upcall side: a callee storing each parameter (named arguments only).
        if s.first_variadic.is_none() {
            let params = if params.is_empty() {
                "void".to_string()
            } else {
                params.join(", ")
            };
            let stores: String = (0..s.args.len())
                .map(|k| format!(" g{i}_{k} = a{k};"))
                .collect();
            let _ = writeln!(
                src,
                "__attribute__((noinline)) void callee{i}({params}) {{{stores} }}"
            );
        }
        if let Some(r) = &s.ret {
            let _ = writeln!(src, "{} gr{i};", r.spelling);
            let _ = writeln!(src, "{} ret{i}(void) {{ return gr{i}; }}", r.spelling);
        }
    }
    src
}

pub fn sig_text(sig: &Sig) -> String {
    let args: Vec<&str> = sig.args.iter().map(|a| a.spelling.as_str()).collect();
    format!(
        "{} ({}){}",
        sig.ret.as_ref().map_or("void", |r| r.spelling.as_str()),
        args.join(", "),
        sig.first_variadic
            .map_or(String::new(), |f| format!(" variadic from {f}"))
    )
}

/// Splits operands at top-level commas (not inside `[...]`, `{...}` or `(...)`).
pub fn operands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The functions of an assembly file: name → instruction lines.
/// One instruction: mnemonic and operands.
pub type Insn = (String, Vec<String>);
/// Function name → its instructions.
pub type Functions = HashMap<String, Vec<Insn>>;

pub fn functions(asm: &str, comments: &[&str]) -> Functions {
    let mut out = HashMap::new();
    let mut cur: Option<(String, Vec<Insn>)> = None;
    for line in asm.lines() {
        let line = comments
            .iter()
            .fold(line, |l, c| l.split(c).next().unwrap_or(""))
            .trim();
        if line.is_empty() {
            continue;
        }
        if let Some(label) = line.strip_suffix(':') {
            if !label.starts_with('.') && !label.starts_with("L") && !label.starts_with("Ltmp") {
                if let Some((n, body)) = cur.take() {
                    out.insert(n, body);
                }
                cur = Some((label.trim_start_matches('_').to_string(), Vec::new()));
            }
            continue;
        }
        if line.starts_with('.') {
            continue;
        }
        if let Some((_, body)) = cur.as_mut() {
            let (m, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            body.push((m.to_string(), operands(rest)));
        }
    }
    if let Some((n, body)) = cur {
        out.insert(n, body);
    }
    out
}

/// Bytes of `layout` holding scalar data (not padding), as a mask.
pub fn leaf_mask(layout: &MemoryLayout) -> Vec<bool> {
    fn walk(l: &MemoryLayout, base: usize, mask: &mut [bool]) {
        match l {
            MemoryLayout::Value(v) => {
                for b in &mut mask[base..base + v.byte_size()] {
                    *b = true;
                }
            }
            MemoryLayout::Struct(s) => s.fields().for_each(|(o, m)| walk(m, base + o, mask)),
            MemoryLayout::Union(u) => u.members().iter().for_each(|m| walk(m, base, mask)),
            MemoryLayout::Sequence(s) => {
                for i in 0..s.count() {
                    walk(s.element(), base + i * s.element().byte_size(), mask)
                }
            }
            MemoryLayout::Padding(_) => {}
        }
    }
    let mut mask = vec![false; layout.byte_size()];
    walk(layout, 0, &mut mask);
    mask
}

pub struct Report {
    pub checked: usize,
    pub failed: usize,
    pub failures: Vec<String>,
}

impl Report {
    pub fn fail(&mut self, msg: String) {
        self.failed += 1;
        if self.failures.len() < 40 {
            self.failures.push(msg);
        } else if self.failures.len() == 40 {
            self.failures.push("… (more failures not shown)".into());
        }
    }
}

/// Compiles `src` with `cmd -O1 -S` to assembly text; `None` (after saying so) when the compiler
/// cannot be started outside CI. `GATUN_ORACLE_KEEP=dir` keeps the C file there.
pub fn compile(cmd: &[&str], src: &str, name: &str, install: &str) -> Option<String> {
    let dir = std::env::temp_dir().join(format!("gatun-oracle-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let c = dir.join(format!("{name}.c"));
    let s = dir.join(format!("{name}.s"));
    std::fs::write(&c, src).ok()?;
    if let Ok(keep) = std::env::var("GATUN_ORACLE_KEEP") {
        let _ = std::fs::write(format!("{keep}/{name}.c"), src);
    }
    let out = match Command::new(cmd[0])
        .args(&cmd[1..])
        .args(["-O1", "-S", "-w", "-fno-asynchronous-unwind-tables", "-o"])
        .arg(&s)
        .arg(&c)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            // CI installs both compilers (.ci/run): there a missing one is a failure, not a skip.
            assert!(
                std::env::var_os("CI").is_none(),
                "{name}: cannot run {} under CI: {e}",
                cmd[0]
            );
            eprintln!(
                "SKIPPED {name}: cannot run {}: {e} (install {install})",
                cmd[0]
            );
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{name}: {cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let asm = std::fs::read_to_string(&s).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(asm)
}
