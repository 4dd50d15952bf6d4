//! `gatun call [-l LIB]... [-i HEADER]... [--errno] [--json] [--hex] 'DECL' ARGS...`: declare a C function with a
//! prototype, link it with `gatun::Linker` and call it with arguments written as text.
//!
//! - `DECL` is parsed by `gatun::cdecl` (a trailing `;` is optional; struct definitions may
//!   precede the prototype). With `-i HEADER` (repeatable) the headers are preprocessed by the
//!   system C compiler first and their declarations are available; `DECL` may then be just
//!   the name of a function they declare (`gatun call -l libz.so.1 -i zlib.h crc32 0 hello
//!   5`). The symbol is looked up in the `-l` libraries (sonames or paths, in order), then
//!   in the default lookup (the process, libc, libm).
//! - Arguments: integers (`42`, `-1`, `0x10`), floating point (`1.5`, `1e3`), `true`/`false`,
//!   `NULL` (a floating-point parameter also takes integers, `0x10` included); any other text given for a pointer parameter is passed as a NUL-terminated string;
//!   `[N]` passes a zeroed buffer of N bytes (printed after the call: as a string when it holds
//!   text, as hex bytes otherwise or with `--hex`); `&TYPE` (`&int`, `&double`, `&char *`,
//!   `&struct tm`) passes the address of a zeroed `TYPE`, `&TYPE=VALUE` of an initialized one,
//!   and prints its value after the call (a `char *` as its string); a struct or union by
//!   value is a literal in braces (`'{1.5, 2}'`; nested braces for nested members and arrays,
//!   which may be left out as in C: `{1, 2, 3}` for `struct { int a[2]; int b; }`; a union
//!   takes its first member, missing members are zero). Variadic arguments get
//!   their type from their text: integer → `int` (or `long` if it does not fit), floating →
//!   `double`, anything else → string.
//! - The result is printed as a number, `true`/`false`, an address (`0x...`, `NULL`), a string
//!   (for a return type written as a pointer to a character type, `char *` or `const
//!   unsigned char *`, in the prototype or the header) or a brace literal for a struct; `--errno` captures `errno` and
//!   prints `-1 (errno 2: No such file or directory)`; `--json` prints one JSON object (and
//!   an error as `{"error": "MESSAGE"}` on stderr).
//!   Floating-point results are printed in their shortest round-trip form (`0.1`, `1e300`);
//!   in JSON, NaN and infinities are the strings `"NaN"`, `"inf"` and `"-inf"`.
//! - Options may also follow the declaration or the arguments ([`hoist_options`]); an unknown
//!   option is an error wherever it appears; after `--` every word is an argument. C's stdio is flushed (`fflush(NULL)`) after the call, so what
//!   the function printed comes before the result.
//! - Exit status 0 when the call completed; 2 with one line on stderr for any bad input
//!   (unknown type, missing symbol or library, wrong argument count, non-numeric argument, ...).

use std::ffi::{c_void, CStr, OsString};

use clap::Args;
use gatun::cdecl::{Declarations, Declared, FunctionDecl, HeaderOptions};
use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
use gatun::linker::{capture_state_layout, LinkerOption, SymbolLookup};
use gatun::memory::{Arena, ConfinedArena, MemorySegment, SegmentAllocator};
use gatun::{FunctionDescriptor, Linker, Value};
use serde_json::{json, Value as Json};

/// Arguments of `gatun call`.
#[derive(Args, Debug)]
pub struct CallArgs {
    /// A library to search before the default ones (soname like `libz.so.1`, or a path).
    /// Repeatable.
    #[arg(short = 'l', long = "lib", value_name = "LIB")]
    pub libs: Vec<String>,
    /// A C header whose declarations the call may use (`zlib.h`, `sys/stat.h`), preprocessed
    /// by the system C compiler (`$CC` or `cc`); the declaration may then be just a function
    /// name. Repeatable.
    #[arg(short = 'i', long = "include", value_name = "HEADER")]
    pub includes: Vec<String>,
    /// Capture `errno` right after the call and print it with its message.
    #[arg(long)]
    pub errno: bool,
    /// Print JSON instead of text. Errors are then one JSON object on stderr,
    /// `{"error": "MESSAGE"}` (stdout stays empty; exit status 2).
    #[arg(long)]
    pub json: bool,
    /// Print every `[N]` buffer as hex bytes (buffers that do not hold text always are).
    #[arg(long)]
    pub hex: bool,
    /// The C prototype, e.g. `size_t strlen(const char *)`.
    pub decl: String,
    /// The arguments, one per parameter (more for a variadic function).
    #[arg(allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// A brace literal: `{1.5, {2, 3}, "a, b"}`.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    /// An unquoted word: a number, `NULL`, `true`, or text.
    Atom(String),
    /// A quoted string (`"a, b"`).
    Str(String),
    List(Vec<Lit>),
}

fn parse_literal(text: &str) -> Result<Lit, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut pos = 0;
    let lit = literal_at(&chars, &mut pos, 0)?;
    skip_ws(&chars, &mut pos);
    if pos != chars.len() {
        return Err(format!("unexpected text after the literal in `{text}`"));
    }
    Ok(lit)
}

fn skip_ws(c: &[char], pos: &mut usize) {
    while *pos < c.len() && c[*pos].is_whitespace() {
        *pos += 1;
    }
}

fn literal_at(c: &[char], pos: &mut usize, depth: usize) -> Result<Lit, String> {
    if depth > 64 {
        return Err("struct literal nested more than 64 levels deep".into());
    }
    skip_ws(c, pos);
    if c.get(*pos) == Some(&'{') {
        *pos += 1;
        let mut items = Vec::new();
        loop {
            skip_ws(c, pos);
            match c.get(*pos) {
                None => return Err("unterminated struct literal: missing `}`".into()),
                Some('}') => {
                    *pos += 1;
                    return Ok(Lit::List(items));
                }
                _ => {}
            }
            items.push(literal_at(c, pos, depth + 1)?);
            skip_ws(c, pos);
            match c.get(*pos) {
                Some(',') => *pos += 1,
                Some('}') => {}
                None => return Err("unterminated struct literal: missing `}`".into()),
                Some(x) => {
                    return Err(format!(
                        "expected `,` or `}}` in struct literal, found `{x}`"
                    ))
                }
            }
        }
    }
    if c.get(*pos) == Some(&'"') {
        *pos += 1;
        let start = *pos;
        while *pos < c.len() && c[*pos] != '"' {
            *pos += 1;
        }
        if *pos >= c.len() {
            return Err("unterminated string in struct literal".into());
        }
        let s: String = c[start..*pos].iter().collect();
        *pos += 1;
        return Ok(Lit::Str(s));
    }
    let start = *pos;
    while *pos < c.len() && !matches!(c[*pos], ',' | '{' | '}') {
        *pos += 1;
    }
    let s: String = c[start..*pos].iter().collect();
    let s = s.trim().to_string();
    if s.is_empty() {
        return Err("empty element in struct literal".into());
    }
    Ok(Lit::Atom(s))
}

fn parse_int(text: &str) -> Option<i128> {
    let t = text.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else if let Some(b) = body.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse::<i128>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim();
    // Rust accepts `inf`/`nan`/`infinity`; so does strtod.
    t.parse::<f64>().ok()
}

/// `Err` when `text` (converted to `v`, of type `kind`) is a finite number too large for
/// `kind` (`1e999` for a double, `1e39` for a float), which would otherwise silently become
/// an infinity; `inf` and `infinity` (any case, signed) are infinities on purpose.
fn check_float_range(what: &str, text: &str, v: f64, kind: ScalarKind) -> Result<(), String> {
    let word = text
        .trim()
        .trim_start_matches(['-', '+'])
        .to_ascii_lowercase();
    let overflows = match kind {
        ScalarKind::F32 => (v as f32).is_infinite(),
        _ => v.is_infinite(),
    };
    if overflows && word != "inf" && word != "infinity" {
        let (name, max) = match kind {
            ScalarKind::F32 => ("float", f64::from(f32::MAX)),
            _ => ("double", f64::MAX),
        };
        return Err(format!(
            "{what}: `{}` is out of range for {name} (magnitude at most {max:e}; write `inf` \
             for an infinity)",
            text.trim()
        ));
    }
    Ok(())
}

/// Where an argument's extra memory lives: strings and buffers, allocated from the call arena.
struct Buffers<'a> {
    arena: &'a ConfinedArena,
    /// The declarations, for the types of `&TYPE` out-parameters (`type_layout` may define
    /// a tag, so this is the call's own copy).
    decls: Declarations,
    /// `(argument index, segment)` of each `[N]` buffer, printed after the call.
    shown: Vec<(usize, MemorySegment<'a>)>,
    /// Each `&TYPE` out-parameter, printed after the call.
    outs: Vec<Out<'a>>,
}

/// A `&TYPE` out-parameter: a zeroed (or initialized) `TYPE` in the call's arena whose
/// address is passed, printed after the call.
#[derive(Debug)]
pub struct Out<'a> {
    /// Argument index (from 0).
    pub index: usize,
    /// The type as written.
    pub ty: String,
    /// The type's layout (size at most 2^30 bytes, never 0).
    pub layout: MemoryLayout,
    /// Whether `TYPE` is a pointer to a character type (printed as the string it points to).
    pub c_string: bool,
    /// The out-parameter's memory: `layout`'s size and alignment.
    pub seg: MemorySegment<'a>,
}

fn scalar_value<'a>(
    kind: ScalarKind,
    text: &str,
    what: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<Value<'a>, String> {
    let int = |lo: i128, hi: i128| -> Result<i128, String> {
        let v = parse_int(text).ok_or_else(|| {
            if parse_float(text).is_some() {
                // `1.5`, `1e3`, `inf`: a number, but not an integer.
                format!(
                    "{what}: `{}` is not an integer (the type is {kind})",
                    text.trim()
                )
            } else {
                format!(
                    "{what}: expected an integer ({kind}), found `{text}` (non-numeric argument)"
                )
            }
        })?;
        if v < lo || v > hi {
            return Err(format!(
                "{what}: {v} is out of range for {kind} ({lo}..={hi})"
            ));
        }
        Ok(v)
    };
    Ok(match kind {
        ScalarKind::Bool => match text.trim() {
            "true" | "1" => Value::Bool(true),
            "false" | "0" => Value::Bool(false),
            _ => return Err(format!("{what}: expected true/false/1/0, found `{text}`")),
        },
        ScalarKind::I8 => Value::I8(int(i8::MIN.into(), i8::MAX.into())? as i8),
        ScalarKind::U8 => Value::U8(int(0, u8::MAX.into())? as u8),
        ScalarKind::I16 => Value::I16(int(i16::MIN.into(), i16::MAX.into())? as i16),
        ScalarKind::U16 => Value::U16(int(0, u16::MAX.into())? as u16),
        ScalarKind::I32 => Value::I32(int(i32::MIN.into(), i32::MAX.into())? as i32),
        ScalarKind::U32 => Value::U32(int(0, u32::MAX.into())? as u32),
        ScalarKind::I64 => Value::I64(int(i64::MIN.into(), i64::MAX.into())? as i64),
        ScalarKind::U64 => Value::U64(int(0, u64::MAX.into())? as u64),
        ScalarKind::F32 | ScalarKind::F64 => {
            // Integers in any form `parse_int` accepts (`0x10`, `0b101`) convert to the nearest
            // floating-point value, as a C integer constant does.
            let v = parse_float(text)
                .or_else(|| parse_int(text).map(|i| i as f64))
                .ok_or_else(|| {
                    format!(
                        "{what}: expected a number ({kind}), found `{text}` (non-numeric argument)"
                    )
                })?;
            check_float_range(what, text, v, kind)?;
            if kind == ScalarKind::F32 {
                Value::F32(v as f32)
            } else {
                Value::F64(v)
            }
        }
        ScalarKind::Pointer => pointer_value(text, index, bufs)?,
    })
}

fn pointer_value<'a>(
    text: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<Value<'a>, String> {
    if matches!(text, "NULL" | "null" | "nullptr") {
        return Ok(Value::Address(std::ptr::null_mut()));
    }
    if let Some(n) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let n: usize = n
            .trim()
            .parse()
            .ok()
            .filter(|&n| n <= MAX_BUFFER_BYTES)
            .ok_or_else(|| format!("bad buffer size in `{text}` (expected `[N]`, N <= 2^30)"))?;
        let seg = bufs
            .arena
            .allocate(n.max(1), 16)
            .map_err(|e| e.to_string())?;
        seg.fill(0);
        bufs.shown.push((index, seg));
        return Ok(Value::Segment(seg));
    }
    if text.starts_with('{') {
        return Err(format!(
            "argument {}: a struct literal cannot be passed for a pointer parameter",
            index + 1
        ));
    }
    if let Some(out) = out_parameter(text, index, bufs)? {
        return Ok(out);
    }
    let seg = bufs
        .arena
        .allocate_c_string(text)
        .map_err(|e| e.to_string())?;
    Ok(Value::Segment(seg))
}

/// The largest `[N]` buffer and `&TYPE` out-parameter, in bytes (2^30): both are allocated
/// and zeroed before the call.
const MAX_BUFFER_BYTES: usize = 1 << 30;

/// `&TYPE` or `&TYPE=VALUE`: a zeroed (or initialized) `TYPE` whose address is passed and
/// whose value is printed after the call. `None` when `text` after the `&` is not a type, so
/// such text is passed as a string.
fn out_parameter<'a>(
    text: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<Option<Value<'a>>, String> {
    let Some(spec) = text.strip_prefix('&') else {
        return Ok(None);
    };
    let (ty, init) = match spec.split_once('=') {
        Some((t, v)) => (t.trim(), Some(v.trim())),
        None => (spec.trim(), None),
    };
    let Ok(layout) = bufs.decls.type_layout(ty) else {
        return Ok(None);
    };
    if layout.byte_size() == 0 {
        return Err(format!(
            "argument {}: `&{ty}` has size 0; an out-parameter needs a complete type",
            index + 1
        ));
    }
    if layout.byte_size() > MAX_BUFFER_BYTES {
        // Allocated and zeroed before the call: bounded as a `[N]` buffer is.
        return Err(format!(
            "argument {}: `&{ty}` is {} bytes; an out-parameter may be at most 2^30 bytes",
            index + 1,
            layout.byte_size()
        ));
    }
    let seg = bufs
        .arena
        .allocate_layout(&layout)
        .map_err(|e| e.to_string())?;
    seg.fill(0);
    if let Some(init) = init {
        let lit = parse_literal(init).map_err(|e| format!("argument {}: {e}", index + 1))?;
        fill(seg, 0, &layout, &lit, index, bufs)?;
    }
    let c_string = layout.as_value().map(ValueLayout::kind) == Some(ScalarKind::Pointer)
        && is_c_string_type(&bufs.decls, ty);
    bufs.outs.push(Out {
        index,
        ty: ty.to_string(),
        layout,
        c_string,
        seg,
    });
    Ok(Some(Value::Segment(seg)))
}

/// Whether type `ty` is a pointer to a character type (`char *`, `const unsigned char *`, a
/// typedef of `char` then `*`). The declarations record that fact for a function's return
/// type ([`gatun::cdecl::FunctionDecl::returns_c_string`]), so this declares a function
/// returning `ty` in a copy of `decls` and asks it.
fn is_c_string_type(decls: &Declarations, ty: &str) -> bool {
    const PROBE: &str = "__gatun_cli_out_parameter_probe";
    let mut probe = decls.clone();
    probe.add(&format!("{ty} {PROBE}(void);")).is_ok()
        && probe.function(PROBE).is_some_and(|f| f.returns_c_string())
}

/// Writes literal `lit` for `layout` at `offset` of `seg`. A brace list for a struct, union
/// or array may leave out inner braces (C brace elision, C11 6.7.9 ¶20-21): `{1, 2, 3.5}`
/// initializes `struct { int a[2]; double d; }` as `{{1, 2}, 3.5}`; a scalar may be braced
/// (`{5}`).
fn fill<'a>(
    seg: MemorySegment<'_>,
    offset: usize,
    layout: &MemoryLayout,
    lit: &Lit,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<(), String> {
    let what = format!("argument {}", index + 1);
    match (layout, lit) {
        (MemoryLayout::Value(v), Lit::Atom(text) | Lit::Str(text)) => {
            let value = match (v.kind(), lit) {
                (ScalarKind::Pointer, _) => pointer_value(text, index, bufs)?,
                (_, Lit::Str(_)) => {
                    return Err(format!(
                        "{what}: expected a number ({}), found the string \"{text}\"",
                        v.kind()
                    ))
                }
                _ => scalar_value(v.kind(), text, &what, index, bufs)?,
            };
            let value = match value {
                Value::Segment(s) => Value::Address(s.as_address()),
                other => other,
            };
            seg.set_value(v, offset, &value).map_err(|e| e.to_string())
        }
        (MemoryLayout::Value(_), Lit::List(items)) => match items.as_slice() {
            [] => Ok(()),
            [one] => fill(seg, offset, layout, one, index, bufs),
            _ => Err(format!(
                "{what}: braces around a scalar ({layout}) hold one value, found {}",
                items.len()
            )),
        },
        (MemoryLayout::Padding(_), _) => Ok(()),
        (group, Lit::Str(text) | Lit::Atom(text)) if is_char_array(group) => {
            fill_chars(seg, offset, group, text, &what)
        }
        (group, Lit::List(items)) => {
            let mut pos = 0;
            fill_aggregate(seg, offset, group, items, &mut pos, index, bufs)?;
            if pos < items.len() {
                let kind = match group {
                    MemoryLayout::Union(_) => "union",
                    MemoryLayout::Sequence(_) => "array",
                    _ => "struct",
                };
                return Err(format!(
                    "{what}: too many values in the literal: {} given, the {kind} takes {pos}",
                    items.len()
                ));
            }
            Ok(())
        }
        (_, Lit::Atom(text) | Lit::Str(text)) => Err(format!(
            "{what}: expected a brace literal like {{1, 2}} for {layout}, found `{text}`"
        )),
    }
}

/// `char[N]` / `unsigned char[N]`.
fn is_char_array(layout: &MemoryLayout) -> bool {
    match layout {
        MemoryLayout::Sequence(s) => matches!(
            s.element().as_value().map(ValueLayout::kind),
            Some(ScalarKind::I8 | ScalarKind::U8)
        ),
        _ => false,
    }
}

/// Copies `text` into the char array `layout` at `offset` (no NUL needed when it fills the
/// array exactly, as in C).
fn fill_chars(
    seg: MemorySegment<'_>,
    offset: usize,
    layout: &MemoryLayout,
    text: &str,
    what: &str,
) -> Result<(), String> {
    let count = layout.byte_size();
    if text.len() > count {
        return Err(format!("{what}: \"{text}\" does not fit in char[{count}]"));
    }
    seg.copy_from_slice(offset, text.as_bytes())
        .map_err(|e| e.to_string())
}

/// Initializes the members (elements) of the struct, union or array `layout` from
/// `items[*pos..]`, advancing `*pos` past what they use: a scalar or a braced member takes one
/// item; an aggregate member without braces takes as many as its own members need (brace
/// elision); a union initializes its first member.
fn fill_aggregate<'a>(
    seg: MemorySegment<'_>,
    offset: usize,
    layout: &MemoryLayout,
    items: &[Lit],
    pos: &mut usize,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<(), String> {
    let mut member = |off: usize, m: &MemoryLayout, pos: &mut usize| -> Result<(), String> {
        let item = &items[*pos];
        let elide = match (m, item) {
            (MemoryLayout::Padding(_), _) => return Ok(()),
            (MemoryLayout::Value(_), _) | (_, Lit::List(_)) => false,
            (m, Lit::Str(_)) if is_char_array(m) => false,
            // An unquoted word for a char array is its text unless it is a number.
            (m, Lit::Atom(t)) if is_char_array(m) => parse_int(t).is_some(),
            _ => true,
        };
        if elide {
            fill_aggregate(seg, offset + off, m, items, pos, index, bufs)
        } else {
            *pos += 1;
            fill(seg, offset + off, m, item, index, bufs)
        }
    };
    match layout {
        MemoryLayout::Struct(s) => {
            for (off, m) in s.fields() {
                if *pos >= items.len() {
                    break;
                }
                member(off, m, pos)?;
            }
        }
        MemoryLayout::Union(u) => {
            if let (Some(first), true) = (u.members().first(), *pos < items.len()) {
                member(0, first, pos)?;
            }
        }
        MemoryLayout::Sequence(s) => {
            let stride = s.element().byte_size();
            for i in 0..s.count() {
                let before = *pos;
                if before >= items.len() {
                    break;
                }
                member(i * stride, s.element(), pos)?;
                if *pos == before {
                    // An element that takes no value (an empty struct) takes none in the
                    // next element either: stop instead of walking a long array.
                    break;
                }
            }
        }
        MemoryLayout::Value(_) | MemoryLayout::Padding(_) => {
            fill(seg, offset, layout, &items[*pos], index, bufs)?;
            *pos += 1;
        }
    }
    Ok(())
}

/// The type of a variadic argument, from its text.
fn variadic_value<'a>(
    text: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<(ValueLayout, Value<'a>), String> {
    if let Some(v) = parse_int(text) {
        if let Ok(i) = i32::try_from(v) {
            return Ok((ValueLayout::I32, Value::I32(i)));
        }
        if let Ok(i) = i64::try_from(v) {
            return Ok((ValueLayout::I64, Value::I64(i)));
        }
        if let Ok(u) = u64::try_from(v) {
            return Ok((ValueLayout::U64, Value::U64(u)));
        }
        return Err(format!(
            "argument {}: {v} does not fit in 64 bits",
            index + 1
        ));
    }
    if let Some(f) = parse_float(text) {
        check_float_range(&format!("argument {}", index + 1), text, f, ScalarKind::F64)?;
        return Ok((ValueLayout::F64, Value::F64(f)));
    }
    if text.starts_with('{') {
        return Err(format!(
            "argument {}: struct literals cannot be variadic arguments",
            index + 1
        ));
    }
    Ok((ValueLayout::ADDRESS, pointer_value(text, index, bufs)?))
}

/// The shorter of a float's two shortest-round-trip renderings (`{}` and `{:e}`): `0.1`,
/// `1024`, `1e300`, `1.5e-10` (`{}` alone would print 300 zeros for `1e300`).
fn shortest(plain: String, exponent: String) -> String {
    if exponent.len() < plain.len() {
        exponent
    } else {
        plain
    }
}

/// A float as text and JSON: the JSON number is the text's (so an `f32` 0.1 is `0.1`, not
/// its binary64 widening); NaN and infinities, which JSON numbers cannot express, are the
/// strings `"NaN"`, `"inf"`, `"-inf"`.
fn show_float(x: f64, text: String) -> (String, Json) {
    let json = if x.is_finite() {
        text.parse::<f64>().map(|v| json!(v)).unwrap_or(Json::Null)
    } else {
        json!(text)
    };
    (text, json)
}

fn show_scalar(v: &Value<'_>) -> (String, Json) {
    match *v {
        Value::Void => (String::new(), Json::Null),
        Value::Bool(b) => (b.to_string(), json!(b)),
        Value::I8(x) => (x.to_string(), json!(x)),
        Value::U8(x) => (x.to_string(), json!(x)),
        Value::I16(x) => (x.to_string(), json!(x)),
        Value::U16(x) => (x.to_string(), json!(x)),
        Value::I32(x) => (x.to_string(), json!(x)),
        Value::U32(x) => (x.to_string(), json!(x)),
        Value::I64(x) => (x.to_string(), json!(x)),
        Value::U64(x) => (x.to_string(), json!(x)),
        Value::F32(x) => show_float(x.into(), shortest(x.to_string(), format!("{x:e}"))),
        Value::F64(x) => show_float(x, shortest(x.to_string(), format!("{x:e}"))),
        Value::Address(p) => address(p),
        Value::Segment(s) => address(s.as_address()),
    }
}

fn address(p: *mut c_void) -> (String, Json) {
    if p.is_null() {
        ("NULL".into(), Json::Null)
    } else {
        let s = format!("{p:p}");
        (s.clone(), json!(s))
    }
}

/// At most this many scalars of a struct/union/array result are printed (`show_memory`); the
/// rest of each array is summarised as `… (N more)`.
const MAX_SHOWN: usize = 1000;

/// A struct/union/array read back from memory, as a brace literal and JSON. At most
/// [`MAX_SHOWN`] scalars in all: an array met once the budget is spent stops there and ends
/// with `… (N more)` (a JSON string as the last element), so a 40-character declaration of a
/// `char a[1 << 30]` result prints a bounded line.
fn show_memory(seg: MemorySegment<'_>, offset: usize, layout: &MemoryLayout) -> (String, Json) {
    show_memory_within(seg, offset, layout, &mut { MAX_SHOWN })
}

/// [`show_memory`] with `budget` scalars left to print (decremented).
fn show_memory_within(
    seg: MemorySegment<'_>,
    offset: usize,
    layout: &MemoryLayout,
    budget: &mut usize,
) -> (String, Json) {
    let list = |parts: Vec<(String, Json)>| {
        let text = parts
            .iter()
            .map(|p| p.0.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        (
            format!("{{{text}}}"),
            Json::Array(parts.into_iter().map(|p| p.1).collect()),
        )
    };
    // A zero-size struct, union or array holds no bytes: `{}`, whatever its element count
    // (`struct e z[1 << 62]` must not be expanded).
    if !matches!(layout, MemoryLayout::Value(_)) && layout.byte_size() == 0 {
        return list(Vec::new());
    }
    match layout {
        MemoryLayout::Value(v) => {
            *budget = budget.saturating_sub(1);
            match seg.get_value(v, offset) {
                Ok(value) => show_scalar(&value),
                Err(e) => (format!("<{e}>"), Json::Null),
            }
        }
        MemoryLayout::Struct(s) => list(
            s.fields()
                .filter(|(_, m)| !matches!(m, MemoryLayout::Padding(_)))
                .map(|(off, m)| show_memory_within(seg, offset + off, m, budget))
                .collect(),
        ),
        MemoryLayout::Union(u) => list(
            u.members()
                .first()
                .map(|m| show_memory_within(seg, offset, m, budget))
                .into_iter()
                .collect(),
        ),
        MemoryLayout::Sequence(s) => {
            let stride = s.element().byte_size();
            let mut parts = Vec::new();
            for i in 0..s.count() {
                if *budget == 0 {
                    let more = format!("… ({} more)", s.count() - i);
                    parts.push((more.clone(), json!(more)));
                    break;
                }
                parts.push(show_memory_within(
                    seg,
                    offset + i * stride,
                    s.element(),
                    budget,
                ));
            }
            list(parts)
        }
        MemoryLayout::Padding(_) => (String::new(), Json::Null),
    }
}

/// The declarations of `headers` (`-i`), preprocessed by the system C compiler; empty when no
/// header is given.
pub fn header_declarations(headers: &[String]) -> Result<Declarations, String> {
    if headers.is_empty() {
        return Ok(Declarations::new());
    }
    Declarations::from_headers(headers, &HeaderOptions::default()).map_err(|e| {
        // One line for stderr: the preprocessor's own lines joined, at most 500 characters.
        let text = e.to_string();
        let mut line = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some((cut, _)) = line.char_indices().nth(500) {
            line.truncate(cut);
            line.push('…');
        }
        line
    })
}

/// A C identifier: the declaration is then a function name looked up in the headers.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Parses `decl` as `gatun call` does: any number of declarations (a trailing `;` is
/// optional) declaring exactly one function, or with `includes` (headers, preprocessed by the
/// system C compiler) just the name of a function they declare. Returns the declarations and
/// the function's declaration.
///
/// # Errors
/// One line for stderr: a header that does not preprocess or parse, the parse error of `decl`
/// (positioned as typed), a bare name without headers, "declares no function", "declares N
/// functions" naming them, or a function whose type gatun cannot pass.
pub fn parse_prototype(
    decl: &str,
    includes: &[String],
) -> Result<(Declarations, FunctionDecl), String> {
    let mut decls = header_declarations(includes)?;
    let typed = decl.trim_end();
    // With headers, the declaration may be just the name of a function they declare.
    let bare_name = !includes.is_empty() && is_identifier(typed.trim());
    let mut src = typed.to_string();
    if !src.ends_with(';') {
        src.push(';');
    }
    if includes.is_empty() && is_identifier(typed.trim()) && decls.function(typed.trim()).is_none()
    {
        return Err(format!(
            "`{}` is only a name: give its prototype (`int abs(int)`), or the header that \
             declares it with -i HEADER",
            typed.trim()
        ));
    }
    let declared = if bare_name {
        if decls.function(typed.trim()).is_none() {
            // The header's reason (a type gatun cannot pass), or "not declared".
            let e = decls.try_function(typed.trim()).err();
            return Err(match e {
                Some(e) => format!("{e} (in {})", includes.join(", ")),
                None => format!("`{}` is not declared", typed.trim()),
            });
        }
        Ok(vec![Declared::Function(typed.trim().to_string())])
    } else {
        decls.add(&src)
    };
    let declared = match declared {
        Ok(d) => d,
        // The error is at the `;` appended above, which the user never typed: report it
        // against what they typed ("found end of input" right after it).
        Err(e) if src.len() > typed.len() && e.span().start >= typed.len() => {
            return Err(match header_declarations(includes)?.add(typed) {
                Err(at_end) => at_end.summary(),
                Ok(_) => e.summary(),
            });
        }
        Err(e) => return Err(e.summary()),
    };
    let functions: Vec<&str> = declared
        .iter()
        .filter_map(|d| match d {
            Declared::Function(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    let name = match functions.as_slice() {
        [] => return Err(format!("`{decl}` declares no function")),
        [one] => one.to_string(),
        many => {
            return Err(format!(
                "`{decl}` declares {} functions ({}); give exactly one prototype to call",
                many.len(),
                many.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    };
    let f = decls
        .try_function(&name)
        .map_err(|e| e.to_string())?
        .clone();
    Ok((decls, f))
}

/// A call of `gatun call` ready to link and invoke: what [`prepare_call`] built from the
/// argument words. The segments live in the arena given to [`prepare_call`].
#[derive(Debug)]
pub struct PreparedCall<'a> {
    /// The function's descriptor, with the layouts of the variadic arguments of this call
    /// appended.
    pub descriptor: FunctionDescriptor,
    /// The argument values in order (the `errno` capture segment first when asked for).
    pub values: Vec<Value<'a>>,
    /// The linker options: `FirstVariadicArg` for a variadic function, `CaptureCallState`
    /// for `--errno`.
    pub options: Vec<LinkerOption>,
    /// The `errno` capture segment (4 bytes, alignment 4), when asked for.
    pub capture: Option<MemorySegment<'a>>,
    /// `(argument index, segment)` of each `[N]` buffer argument (N bytes, zeroed), printed
    /// after the call.
    pub buffers: Vec<(usize, MemorySegment<'a>)>,
    /// Each `&TYPE` out-parameter, printed after the call.
    pub outs: Vec<Out<'a>>,
}

/// Builds the values of a call of `f` (declared in `decls`, which also give the types of
/// `&TYPE` out-parameters) from the argument words `args` as `gatun call` does (see the
/// module documentation for the literal syntax), allocating strings, buffers, out-parameters
/// and by-value structs in `arena`. The fixed arguments are planned first (on x86-64), so a
/// descriptor the linker would reject allocates nothing. Nothing is linked or called.
///
/// # Errors
/// One line for stderr: a wrong argument count, a descriptor the SysV classification rejects
/// (e.g. a by-value struct beyond the stack-argument limit), a non-numeric or out-of-range
/// argument, a malformed struct literal or out-parameter type, a buffer, out-parameter or
/// by-value argument over 2^30 bytes, or an allocation failure.
pub fn prepare_call<'a>(
    decls: &Declarations,
    f: &FunctionDecl,
    args: &[String],
    errno: bool,
    arena: &'a ConfinedArena,
) -> Result<PreparedCall<'a>, String> {
    let name = &f.name;

    let fixed = f.descriptor.argument_layouts().len();
    let given = args.len();
    if given < fixed || (f.variadic.is_none() && given > fixed) {
        let plural = if fixed == 1 { "" } else { "s" };
        let at_least = if f.variadic.is_some() {
            "at least "
        } else {
            ""
        };
        return Err(format!(
            "wrong argument count: `{name}` takes {at_least}{fixed} argument{plural}, {given} given"
        ));
    }

    // The fixed arguments are checked against the linker's limits before any argument buffer
    // is allocated (a by-value `struct { long a[1 << 40]; }` is an error, not an allocation).
    use gatun::abi::{plan_for, Abi};
    let abi = if cfg!(all(target_arch = "x86_64", windows)) {
        Some(Abi::Win64)
    } else if cfg!(target_arch = "x86_64") {
        Some(Abi::SysVAmd64)
    } else if cfg!(all(target_arch = "aarch64", target_vendor = "apple")) {
        Some(Abi::AppleArm64)
    } else if cfg!(target_arch = "aarch64") {
        Some(Abi::Aapcs64)
    } else {
        None
    };
    if let Some(abi) = abi {
        plan_for(abi, &f.descriptor, f.variadic).map_err(|e| e.to_string())?;
    }

    let mut bufs = Buffers {
        arena,
        decls: decls.clone(),
        shown: Vec::new(),
        outs: Vec::new(),
    };
    let mut values: Vec<Value<'a>> = Vec::with_capacity(given + 1);
    let mut descriptor: FunctionDescriptor = f.descriptor.clone();
    for (i, (text, layout)) in args.iter().zip(f.descriptor.argument_layouts()).enumerate() {
        let what = format!("argument {}", i + 1);
        let v = match layout {
            MemoryLayout::Value(v) => scalar_value(v.kind(), text, &what, i, &mut bufs)?,
            group => {
                // Off x86-64 no plan bounds a by-value argument before this allocation.
                if group.byte_size() > MAX_BUFFER_BYTES {
                    return Err(format!(
                        "{what}: a by-value argument of {} bytes; at most 2^30 are supported",
                        group.byte_size()
                    ));
                }
                let lit = parse_literal(text).map_err(|e| format!("{what}: {e}"))?;
                let seg = arena.allocate_layout(group).map_err(|e| e.to_string())?;
                seg.fill(0);
                fill(seg, 0, group, &lit, i, &mut bufs)?;
                Value::Segment(seg)
            }
        };
        values.push(v);
    }
    let mut extra = Vec::new();
    for (i, text) in args.iter().enumerate().skip(fixed) {
        let (layout, v) = variadic_value(text, i, &mut bufs)?;
        extra.push(layout);
        values.push(v);
    }
    if !extra.is_empty() {
        descriptor = descriptor.append_argument_layouts(extra);
    }
    let mut options = Vec::new();
    if let Some(n) = f.variadic {
        options.push(LinkerOption::FirstVariadicArg(n));
    }
    let capture = if errno {
        options.push(LinkerOption::CaptureCallState(&["errno"]));
        let seg = arena
            .allocate_layout(&capture_state_layout())
            .map_err(|e| e.to_string())?;
        seg.fill(0);
        values.insert(0, Value::Segment(seg));
        Some(seg)
    } else {
        None
    };
    Ok(PreparedCall {
        descriptor,
        values,
        options,
        capture,
        buffers: bufs.shown,
        outs: bufs.outs,
    })
}

/// Runs `gatun call`; `Err` is one line for stderr (exit status 2).
pub fn run(args: &CallArgs) -> Result<(), String> {
    let (decls, f) = parse_prototype(&args.decl, &args.includes)?;
    let name = f.name.clone();

    let mut lookup: Option<SymbolLookup> = None;
    for lib in &args.libs {
        // SAFETY: loading runs the library's initialisers; naming a library on the command line
        // asserts that this is sound, as with any C program that links it.
        let l = unsafe { SymbolLookup::library(lib) }.map_err(|e| e.to_string())?;
        lookup = Some(match lookup {
            Some(prev) => prev.or(l),
            None => l,
        });
    }
    let lookup = match lookup {
        Some(l) => l.or(SymbolLookup::default_lookup()),
        None => SymbolLookup::default_lookup(),
    };
    let symbol = lookup.find(f.symbol()).map_err(|e| e.to_string())?;

    let arena = Arena::confined();
    let PreparedCall {
        descriptor,
        values,
        options,
        capture,
        buffers,
        outs,
    } = prepare_call(&decls, &f, &args.args, args.errno, &arena)?;
    let handle = Linker::native()
        .downcall(&symbol, &descriptor, &options)
        .map_err(|e| e.to_string())?;
    // SAFETY: the user declared the function's type and chose its arguments; as with a C
    // program calling it, that declaration is the contract. Strings and buffers live in
    // `arena` until after the call.
    let result = unsafe { handle.invoke_into(&arena, &values) }.map_err(|e| e.to_string())?;
    // What the function printed through C's stdio (`printf`) comes before the result.
    flush_c_stdio()?;

    let (text, json_result) = match (&result, descriptor.return_layout()) {
        (Value::Segment(seg), Some(layout)) if layout.is_group() => show_memory(*seg, 0, layout),
        (Value::Address(p), _) if !p.is_null() && f.returns_c_string() => {
            // SAFETY: the prototype (typed or from a header) says the function returns a
            // `char *`, i.e. a NUL-terminated string (or NULL, handled above).
            let s = unsafe { CStr::from_ptr(p.cast()) }
                .to_string_lossy()
                .into_owned();
            (s.clone(), json!(s))
        }
        (v, _) => show_scalar(v),
    };
    let errno = capture.map(|seg| seg.get::<i32>(0).unwrap_or(0));
    // `[N]` buffers: text when they hold text (then NULs), hex otherwise or with `--hex`.
    let buffers: Vec<(usize, Result<String, String>)> = buffers
        .iter()
        .map(|(i, seg)| (*i, buffer_contents(&seg.to_vec(), args.hex)))
        .collect();
    // `&TYPE` out-parameters: their value after the call, shown by type.
    let outs: Vec<(usize, &str, (String, Json))> = outs
        .iter()
        .map(|o| {
            (
                o.index,
                o.ty.as_str(),
                show_out(o.seg, o.c_string, &o.layout),
            )
        })
        .collect();

    if args.json {
        let mut out = json!({
            "function": name,
            "descriptor": descriptor.to_string(),
            "result": json_result,
        });
        if let Some(e) = errno {
            out["errno"] = json!(e);
            out["errno_message"] = json!(errno_message(e));
        }
        if !buffers.is_empty() {
            out["buffers"] = Json::Array(
                buffers
                    .iter()
                    .map(|(i, contents)| match contents {
                        Ok(s) => json!({ "argument": i + 1, "string": s }),
                        Err(hex) => json!({ "argument": i + 1, "hex": hex }),
                    })
                    .collect(),
            );
        }
        if !outs.is_empty() {
            out["out"] = Json::Array(
                outs.iter()
                    .map(|(i, ty, (_, value))| {
                        json!({ "argument": i + 1, "type": ty, "value": value })
                    })
                    .collect(),
            );
        }
        println!("{out}");
        return Ok(());
    }
    let mut line = text;
    if let Some(e) = errno {
        if e == 0 {
            line.push_str(" (errno 0)");
        } else {
            line.push_str(&format!(" (errno {e}: {})", errno_message(e)));
        }
        line = line.trim_start().to_string();
    }
    if !line.is_empty() {
        println!("{line}");
    }
    for (i, contents) in buffers {
        match contents {
            Ok(s) => println!("argument {}: {s:?}", i + 1),
            Err(hex) => println!("argument {}: [{hex}]", i + 1),
        }
    }
    for (i, _, (text, _)) in outs {
        println!("argument {}: {text}", i + 1);
    }
    Ok(())
}

/// An out-parameter's value: a pointer to a character type (`c_string`: `char *`, `const
/// unsigned char *`) as the string it points to (quoted; `NULL`), a `char[N]` as a `[N]` buffer (a quoted string, or hex bytes), any other type as
/// [`show_memory`] shows it.
fn show_out(seg: MemorySegment<'_>, c_string: bool, layout: &MemoryLayout) -> (String, Json) {
    if c_string {
        if let Ok(p) = seg.get_address(0) {
            if p.is_null() {
                return ("NULL".into(), Json::Null);
            }
            // SAFETY: the declaration says the function stores a `char *` here (it was NULL
            // before the call), i.e. the address of a NUL-terminated string.
            let s = unsafe { CStr::from_ptr(p.cast()) }
                .to_string_lossy()
                .into_owned();
            return (format!("{s:?}"), json!(s));
        }
    }
    if is_char_array(layout) {
        return match buffer_contents(&seg.to_vec(), false) {
            Ok(s) => (format!("{s:?}"), json!(s)),
            Err(hex) => (format!("[{hex}]"), json!({ "hex": hex })),
        };
    }
    show_memory(seg, 0, layout)
}

/// A `[N]` buffer after the call: `Ok(text)` when it holds UTF-8 text without control
/// characters (tab, newline and carriage return allowed) followed only by NUL bytes, so what
/// is printed is all there is; `Err(hex)` (two lowercase digits per byte, space separated, at
/// most [`MAX_SHOWN`] bytes then `… (N more)`) otherwise, or always with `hex`.
fn buffer_contents(bytes: &[u8], hex: bool) -> Result<String, String> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let text = std::str::from_utf8(&bytes[..end]).ok().filter(|t| {
        t.chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
    });
    match text {
        Some(t) if !hex && bytes[end..].iter().all(|&b| b == 0) => Ok(t.to_string()),
        _ => {
            // Bounded like results: at most MAX_SHOWN bytes, then `… (N more)`.
            let mut hex = bytes
                .iter()
                .take(MAX_SHOWN)
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ");
            if bytes.len() > MAX_SHOWN {
                hex.push_str(&format!(" … ({} more)", bytes.len() - MAX_SHOWN));
            }
            Err(hex)
        }
    }
}

/// Flushes every C stdio output stream (`fflush(NULL)`, called through gatun), so output the
/// called function buffered in C's `stdout` is written before gatun prints the result.
fn flush_c_stdio() -> Result<(), String> {
    let fflush = SymbolLookup::default_lookup()
        .find("fflush")
        .map_err(|e| e.to_string())?;
    let descriptor = FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::ADDRESS]);
    let handle = Linker::native()
        .downcall(&fflush, &descriptor, &[])
        .map_err(|e| e.to_string())?;
    // SAFETY: `int fflush(FILE *)` with NULL flushes all output streams (C11 7.21.5.2) and
    // dereferences no argument.
    unsafe { handle.invoke(&[Value::Address(std::ptr::null_mut())]) }.map_err(|e| e.to_string())?;
    Ok(())
}

/// Moves `gatun call`'s options (`--json`, `--errno`, `--hex`, `-l LIB`, `-lLIB`,
/// `--lib[=]LIB`, `-i HEADER`, `-iHEADER`, `--include[=]HEADER`, `-h`, `--help`) that appear after the declaration to the front, and puts a
/// `--` before the declaration, so clap reads every remaining word as the declaration or an
/// argument. Any other word starting with `-` is moved to the front as well, where clap
/// reports it as an unknown option; negative numbers (`-5`, `-1.5`, `-inf`) are arguments, and
/// so is every word after a `--` the user typed. `argv` is the whole command line (`gatun call ...`); any
/// other subcommand is returned unchanged.
pub fn hoist_options(argv: Vec<OsString>) -> Vec<OsString> {
    if argv.get(1).map(|a| a != "call").unwrap_or(true) {
        return argv;
    }
    let (mut options, mut words, mut literal) = (Vec::new(), Vec::new(), Vec::new());
    let mut rest = argv[2..].iter().cloned();
    while let Some(arg) = rest.next() {
        match arg.to_str() {
            Some("--") => {
                literal.extend(rest.by_ref());
                break;
            }
            Some("--json" | "--errno" | "--hex" | "-h" | "--help") => options.push(arg),
            Some("-l" | "--lib" | "-i" | "--include") => {
                options.push(arg);
                options.extend(rest.next());
            }
            Some(t)
                if t.starts_with("--lib=")
                    || t.starts_with("--include=")
                    || ((t.starts_with("-l") || t.starts_with("-i"))
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
    out.extend(words);
    out.extend(literal);
    out
}

/// `true` for a word that `gatun call` reads as a number (`-5`, `-0x10`, `-1.5e3`, `-inf`).
fn is_number(word: &str) -> bool {
    parse_int(word).is_some() || parse_float(word).is_some()
}

/// `strerror(errno)` without the " (os error N)" suffix std adds.
fn errno_message(e: i32) -> String {
    let s = std::io::Error::from_raw_os_error(e).to_string();
    match s.rfind(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(
            parse_literal("{1.5, {2, 3}, \"a, b\"}").unwrap(),
            Lit::List(vec![
                Lit::Atom("1.5".into()),
                Lit::List(vec![Lit::Atom("2".into()), Lit::Atom("3".into())]),
                Lit::Str("a, b".into()),
            ])
        );
        assert!(parse_literal("{1, 2").is_err());
        assert!(parse_literal("{1 2 3} x").is_err());
        assert!(parse_literal(&"{".repeat(1000)).is_err());
    }

    #[test]
    fn a_huge_by_value_argument_is_an_error_not_an_allocation() {
        // 16 GiB by value: rejected before the arena is asked for it, on every target.
        let (decls, f) =
            parse_prototype("union u { int a[1LL << 32]; }; int f(union u)", &[]).unwrap();
        let arena = Arena::confined();
        let Err(e) = prepare_call(&decls, &f, &["{1}".to_string()], false, &arena) else {
            panic!("a 16 GiB argument is an error");
        };
        if !cfg!(target_arch = "x86_64") {
            assert!(e.contains("17179869184 bytes"), "{e}");
        }
    }

    #[test]
    fn struct_literals_fill_and_show_nested_layouts() {
        let layout = Declarations::new()
            .type_layout(
                "struct o { char c; struct { int a[2]; double d; } in; \
                 union { int i; float f; } u; char name[4]; void *p; }",
            )
            .unwrap();
        let arena = Arena::confined();
        let mut bufs = Buffers {
            arena: &arena,
            decls: Declarations::new(),
            shown: Vec::new(),
            outs: Vec::new(),
        };
        let seg = arena.allocate_layout(&layout).unwrap();
        let lit = parse_literal("{1, {{2, 3}, 4.5}, {7}, \"abc\", NULL}").unwrap();
        fill(seg, 0, &layout, &lit, 0, &mut bufs).unwrap();
        let (text, json) = show_memory(seg, 0, &layout);
        assert_eq!(text, "{1, {{2, 3}, 4.5}, {7}, {97, 98, 99, 0}, NULL}");
        assert_eq!(json[1][0], json!([2, 3]));
        // Fewer values than members: the rest stays zero; too many is an error.
        let seg = arena.allocate_layout(&layout).unwrap();
        fill(
            seg,
            0,
            &layout,
            &parse_literal("{5}").unwrap(),
            0,
            &mut bufs,
        )
        .unwrap();
        assert!(show_memory(seg, 0, &layout)
            .0
            .starts_with("{5, {{0, 0}, 0}"));
        let too_many = parse_literal("{1, {}, {}, \"a\", NULL, 6}").unwrap();
        assert!(fill(seg, 0, &layout, &too_many, 0, &mut bufs).is_err());
        let bad = parse_literal("{x}").unwrap();
        assert!(fill(seg, 0, &layout, &bad, 0, &mut bufs)
            .unwrap_err()
            .contains("non-numeric"));
    }

    #[test]
    fn brace_elision_fills_members_in_order() {
        let layout = Declarations::new()
            .type_layout(
                "struct e { int a[2]; struct { short s; char t[3]; } in; double d; \
                 union { int i; float f; } u; }",
            )
            .unwrap();
        let arena = Arena::confined();
        let mut bufs = Buffers {
            arena: &arena,
            decls: Declarations::new(),
            shown: Vec::new(),
            outs: Vec::new(),
        };
        let show = |lit: &str, bufs: &mut Buffers<'_>| -> Result<String, String> {
            let seg = arena.allocate_layout(&layout).unwrap();
            fill(seg, 0, &layout, &parse_literal(lit).unwrap(), 0, bufs)?;
            Ok(show_memory(seg, 0, &layout).0)
        };
        let full = "{{1, 2}, {3, {4, 5, 6}}, 7.5, {8}}";
        let want = "{{1, 2}, {3, {4, 5, 6}}, 7.5, {8}}";
        assert_eq!(show(full, &mut bufs).unwrap(), want);
        // Every inner brace left out: C11 6.7.9 ¶20.
        assert_eq!(show("{1, 2, 3, 4, 5, 6, 7.5, 8}", &mut bufs).unwrap(), want);
        // Some left out; a quoted string initializes the char array; a braced scalar.
        assert_eq!(
            show("{1, 2, {3, \"ab\"}, {7.5}, 8}", &mut bufs).unwrap(),
            "{{1, 2}, {3, {97, 98, 0}}, 7.5, {8}}"
        );
        // Stopping early leaves the rest zero.
        assert_eq!(
            show("{1, 2, 3}", &mut bufs).unwrap(),
            "{{1, 2}, {3, {0, 0, 0}}, 0, {0}}"
        );
        let e = show("{1, 2, 3, 4, 5, 6, 7.5, 8, 9}", &mut bufs).unwrap_err();
        assert_eq!(
            e,
            "argument 1: too many values in the literal: 9 given, the struct takes 8"
        );
        let e = show("{{1, 2, 3}}", &mut bufs).unwrap_err();
        assert!(e.contains("3 given, the array takes 2"), "{e}");
        let e = show("{{{1, 2}}}", &mut bufs).unwrap_err();
        assert!(e.contains("braces around a scalar"), "{e}");
        let e = show("{\"x\"}", &mut bufs).unwrap_err();
        assert!(e.contains("found the string \"x\""), "{e}");
        // A long array of empty structs takes no time: the first element that takes no value
        // ends the walk.
        let empties = Declarations::new()
            .type_layout("struct { struct {} e[1000000000]; int x; }")
            .unwrap();
        let seg = arena.allocate_layout(&empties).unwrap();
        for lit in ["{{}, 5}", "{5}"] {
            let lit_value = parse_literal(lit).unwrap();
            fill(seg, 0, &empties, &lit_value, 0, &mut bufs).unwrap();
            assert_eq!(seg.get::<i32>(0).unwrap(), 5, "{lit}");
        }
    }

    #[test]
    fn buffers_are_text_or_hex() {
        assert_eq!(buffer_contents(b"hi\n\0\0", false), Ok("hi\n".into()));
        assert_eq!(buffer_contents(b"\0\0", false), Ok(String::new()));
        assert_eq!(buffer_contents(b"hi\0\0", true), Err("68 69 00 00".into()));
        assert_eq!(buffer_contents(b"hi\0x", false), Err("68 69 00 78".into()));
        assert_eq!(
            buffer_contents(&[4, 3, 2, 1], false),
            Err("04 03 02 01".into())
        );
        assert_eq!(buffer_contents(&[0xff, 0], false), Err("ff 00".into()));
        let big = buffer_contents(&[1; 5000], false).unwrap_err();
        assert!(
            big.ends_with("01 … (4000 more)"),
            "{}",
            &big[big.len() - 30..]
        );
        assert_eq!(big.len(), 1000 * 3 - 1 + " … (4000 more)".len());
    }

    #[test]
    fn floats_print_shortest_and_json_spells_non_finite_values() {
        let f = |x: f64| show_scalar(&Value::F64(x));
        assert_eq!(f(0.1), ("0.1".into(), json!(0.1)));
        assert_eq!(f(1e300).0, "1e300");
        assert_eq!(f(1.5e-10).0, "1.5e-10");
        assert_eq!(f(1024.0).0, "1024");
        assert_eq!(f(123456.0).0, "123456");
        assert_eq!(f(-0.0).0, "-0");
        assert_eq!(f(f64::NAN), ("NaN".into(), json!("NaN")));
        assert_eq!(f(f64::INFINITY), ("inf".into(), json!("inf")));
        assert_eq!(f(f64::NEG_INFINITY), ("-inf".into(), json!("-inf")));
        for x in [0.1, 1e300, 5e-324, f64::MAX, 1.0 / 3.0, 123456789.125] {
            assert_eq!(f(x).0.parse::<f64>().unwrap(), x, "round trip of {x}");
        }
        // An f32 is shown (and put in JSON) as its own shortest form, not its f64 widening.
        assert_eq!(show_scalar(&Value::F32(0.1)), ("0.1".into(), json!(0.1)));
        assert_eq!(show_scalar(&Value::F32(f32::NAN)).1, json!("NaN"));
    }

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
                "--errno"
            ]
        );
        assert_eq!(
            hoist(&["--bogus", "d", "-lz", "--lib=m", "-1.5"]),
            ["gatun", "call", "--bogus", "-lz", "--lib=m", "--", "d", "-1.5"]
        );
        // An unknown option after the declaration goes to clap too (which rejects it);
        // numbers and `-` stay arguments; after `--` anything is an argument.
        assert_eq!(
            hoist(&["d", "-inf", "--nope", "-0x10", "-", "--hex", "--", "--nope"]),
            ["gatun", "call", "--nope", "--hex", "--", "d", "-inf", "-0x10", "-", "--nope"]
        );
        let bench: Vec<OsString> = ["gatun", "bench", "--json", "x"].map(OsString::from).into();
        assert_eq!(hoist_options(bench.clone()), bench);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_int("-0x10"), Some(-16));
        assert_eq!(parse_int("12a"), None);
        assert_eq!(parse_float("1e3"), Some(1000.0));
        let f64_kind = ScalarKind::F64;
        assert!(check_float_range("a", "1e308", 1e308, f64_kind).is_ok());
        assert!(check_float_range("a", "-Infinity", f64::NEG_INFINITY, f64_kind).is_ok());
        let e = check_float_range("a", "1e999", f64::INFINITY, f64_kind).unwrap_err();
        assert!(e.contains("`1e999` is out of range for double"), "{e}");
        let e = check_float_range("a", "-1e39", -1e39, ScalarKind::F32).unwrap_err();
        assert!(e.contains("`-1e39` is out of range for float"), "{e}");
        assert!(check_float_range("a", "1e38", 1e38, ScalarKind::F32).is_ok());
    }
}
