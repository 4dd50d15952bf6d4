//! What `gatun call` prints after the call: the result (a number, `true`/`false`, an address,
//! a string, or a struct with its members' names), `errno`, the `[N]` buffers (text, or hex
//! bytes with `--hex` or when they do not hold text) and the `&TYPE` out-parameters, as text
//! lines or (with `--json`) one JSON object ([`Report::render`]).
//!
//! Structs and unions print as gdb prints them, `{quot = 3, rem = 2}` (an anonymous member
//! as its own braces without a name, a union as its first member, bit-fields by name when
//! the declarations give them), arrays as `{1, 2, 3}`; in JSON a struct is an object keyed
//! by member name (an anonymous member's members merged in), an array a JSON array.
//! Floating-point numbers are written the same way in both, as their shortest round-trip
//! digits in plain or exponent notation, whichever is shorter (`0.1`, `1024`, `1e300`,
//! `1e6`, `1.5e-10`; a valid JSON number); NaN and infinities, which JSON numbers cannot
//! express, are the JSON strings `"NaN"`, `"inf"`, `"-inf"`.

use std::ffi::{c_void, CStr};

use gatun::layout::{BitField, MemoryLayout};
use gatun::memory::MemorySegment;
use gatun::{FunctionDescriptor, Value};

use super::fill::is_char_array;

/// A JSON value as `gatun call` writes it: object members in the order they were added
/// (struct members in declaration order), numbers as their text (so a float is written as
/// the text shows it).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, written as this text (a valid JSON number).
    Number(String),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, in this order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// A JSON string.
    pub(super) fn str(s: impl Into<String>) -> Json {
        Json::String(s.into())
    }

    /// A JSON number from an integer.
    pub(super) fn int(n: impl ToString) -> Json {
        Json::Number(n.to_string())
    }

    /// The value as compact JSON text.
    pub(super) fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => out.push_str(n),
            Json::String(s) => out.push_str(&quoted(s)),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&quoted(key));
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// `s` as a JSON string literal (quotes and escapes as serde_json writes them).
fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// A value shown two ways: as text, and as JSON.
pub(super) type Shown = (String, Json);

/// At most this many scalars of a struct/union/array result, and bytes of a buffer, are
/// printed; the rest of each array is summarised as `… (N more)`.
const MAX_SHOWN: usize = 1000;

/// What a completed call has to print.
pub(super) struct Report<'s> {
    /// The function's name.
    pub(super) function: &'s str,
    /// The descriptor it was called with (variadic arguments included).
    pub(super) descriptor: &'s FunctionDescriptor,
    /// The result ([`show_result`]).
    pub(super) result: Shown,
    /// `errno` right after the call, with `--errno`.
    pub(super) errno: Option<i32>,
    /// `(argument index from 0, contents)` of each `[N]` buffer.
    pub(super) buffers: Vec<(usize, BufferContents)>,
    /// `(argument index from 0, type as written, value)` of each `&TYPE` out-parameter.
    pub(super) outs: Vec<(usize, &'s str, Shown)>,
}

impl Report<'_> {
    /// The whole output, ending in a newline when not empty: with `json` one JSON object
    /// (`function`, `descriptor`, `result`, then `errno` and `errno_message`, `buffers`,
    /// `out` when there are any); else the result line (with ` (errno N: MESSAGE)`), then
    /// one `argument N: VALUE` line per buffer and per out-parameter.
    pub(super) fn render(&self, json: bool) -> String {
        if json {
            return format!("{}\n", self.json().to_text());
        }
        let mut line = self.result.0.clone();
        if let Some(e) = self.errno {
            if e == 0 {
                line.push_str(" (errno 0)");
            } else {
                line.push_str(&format!(" (errno {e}: {})", errno_message(e)));
            }
            line = line.trim_start().to_string();
        }
        let mut out = String::new();
        if !line.is_empty() {
            out.push_str(&line);
            out.push('\n');
        }
        for (i, contents) in &self.buffers {
            let shown = match contents {
                BufferContents::Text(s) => format!("{s:?}"),
                BufferContents::Hex(hex) => format!("[{hex}]"),
            };
            out.push_str(&format!("argument {}: {shown}\n", i + 1));
        }
        for (i, _, (text, _)) in &self.outs {
            out.push_str(&format!("argument {}: {text}\n", i + 1));
        }
        out
    }

    /// The `--json` object: its members in alphabetical order.
    fn json(&self) -> Json {
        let mut members: Vec<(String, Json)> = vec![
            ("descriptor".into(), Json::str(self.descriptor.to_string())),
            ("function".into(), Json::str(self.function)),
            ("result".into(), self.result.1.clone()),
        ];
        if let Some(e) = self.errno {
            members.push(("errno".into(), Json::int(e)));
            members.push(("errno_message".into(), Json::str(errno_message(e))));
        }
        if !self.buffers.is_empty() {
            let buffers = self
                .buffers
                .iter()
                .map(|(i, contents)| {
                    let (key, value) = match contents {
                        BufferContents::Text(s) => ("string", s),
                        BufferContents::Hex(hex) => ("hex", hex),
                    };
                    Json::Object(vec![
                        ("argument".into(), Json::int(i + 1)),
                        (key.into(), Json::str(value.as_str())),
                    ])
                })
                .collect();
            members.push(("buffers".into(), Json::Array(buffers)));
        }
        if !self.outs.is_empty() {
            let outs = self
                .outs
                .iter()
                .map(|(i, ty, (_, value))| {
                    Json::Object(vec![
                        ("argument".into(), Json::int(i + 1)),
                        ("type".into(), Json::str(*ty)),
                        ("value".into(), value.clone()),
                    ])
                })
                .collect();
            members.push(("out".into(), Json::Array(outs)));
        }
        members.sort_by(|a, b| a.0.cmp(&b.0));
        Json::Object(members)
    }
}

/// The call's result: a struct/union/array as [`show_memory`] shows it (with `bits`, the
/// bit-fields of the returned record), a non-null address as the string it points to when
/// `returns_c_string`, anything else as [`show_scalar`] shows it.
///
/// # Safety
/// When `returns_c_string`, a non-null [`Value::Address`] `result` must point to a readable
/// NUL-terminated string.
pub(super) unsafe fn show_result(
    result: &Value<'_>,
    descriptor: &FunctionDescriptor,
    returns_c_string: bool,
    bits: &[BitField],
) -> Shown {
    match (result, descriptor.return_layout()) {
        (Value::Segment(seg), Some(layout)) if layout.is_group() => {
            show_memory(*seg, 0, layout, bits)
        }
        (Value::Address(p), _) if !p.is_null() && returns_c_string => {
            // SAFETY: the caller guarantees that a non-null address result of a function
            // returning a `char *` points to a NUL-terminated string.
            let s = unsafe { CStr::from_ptr(p.cast()) }
                .to_string_lossy()
                .into_owned();
            (s.clone(), Json::String(s))
        }
        (v, _) => show_scalar(v),
    }
}

/// A float's text, the one rule for text and JSON: its shortest round-trip digits (Rust's
/// `{}` and `{:e}`, both shortest), in plain or exponent notation, whichever is shorter
/// (plain on a tie): `0.1`, `1024`, `123456`, `1e6`, `1e300`, `1.5e-10`, `-0`. Finite values
/// give valid JSON numbers; NaN and infinities give `NaN`, `inf`, `-inf`.
pub(super) fn float_text(plain: String, exponent: String) -> String {
    if exponent.len() < plain.len() {
        exponent
    } else {
        plain
    }
}

/// A float as text and JSON: the JSON number is the same text; NaN and infinities, which
/// JSON numbers cannot express, are the strings `"NaN"`, `"inf"`, `"-inf"`.
fn show_float(finite: bool, text: String) -> Shown {
    let json = if finite {
        Json::Number(text.clone())
    } else {
        Json::String(text.clone())
    };
    (text, json)
}

/// A scalar value: integers in decimal, `true`/`false`, floats by [`float_text`],
/// addresses as `0x...` (`NULL`, JSON `null`); `void` as nothing (JSON `null`).
pub(super) fn show_scalar(v: &Value<'_>) -> Shown {
    let int = |text: String| (text.clone(), Json::Number(text));
    match *v {
        Value::Void => (String::new(), Json::Null),
        Value::Bool(b) => (b.to_string(), Json::Bool(b)),
        Value::I8(x) => int(x.to_string()),
        Value::U8(x) => int(x.to_string()),
        Value::I16(x) => int(x.to_string()),
        Value::U16(x) => int(x.to_string()),
        Value::I32(x) => int(x.to_string()),
        Value::U32(x) => int(x.to_string()),
        Value::I64(x) => int(x.to_string()),
        Value::U64(x) => int(x.to_string()),
        Value::F32(x) => show_float(x.is_finite(), float_text(x.to_string(), format!("{x:e}"))),
        Value::F64(x) => show_float(x.is_finite(), float_text(x.to_string(), format!("{x:e}"))),
        Value::Address(p) => address(p),
        Value::Segment(s) => address(s.as_address()),
    }
}

/// An address: `NULL` (JSON `null`), else `0x...` (a JSON string).
fn address(p: *mut c_void) -> Shown {
    if p.is_null() {
        ("NULL".into(), Json::Null)
    } else {
        let s = format!("{p:p}");
        (s.clone(), Json::String(s))
    }
}

/// A struct/union/array read back from memory at `offset` of `seg`: a struct or union as
/// `{name = value, ...}` (JSON: an object keyed by member name), an array as `{1, 2}` (JSON:
/// an array); `bits` are the bit-fields of the record `layout` is (offsets from its start),
/// shown by name in place of the bytes holding them. At most [`MAX_SHOWN`] scalars in all:
/// an array met once the budget is spent stops there and ends with `… (N more)` (a JSON
/// string as the last element), so a 40-character declaration of a `char a[1 << 30]` result
/// prints a bounded line.
pub(super) fn show_memory(
    seg: MemorySegment<'_>,
    offset: usize,
    layout: &MemoryLayout,
    bits: &[BitField],
) -> Shown {
    let record = Record {
        seg,
        bits,
        base: offset,
    };
    record.show(offset, layout, &mut { MAX_SHOWN })
}

/// The record being shown: its memory, and its bit-fields (offsets from byte `base`).
#[derive(Clone, Copy)]
struct Record<'s, 'b> {
    seg: MemorySegment<'s>,
    bits: &'b [BitField],
    base: usize,
}

/// A member shown inside braces: with its name (`x = 1`, JSON key `x`), or anonymous (its
/// members merged into the enclosing JSON object).
enum Part {
    Named(String, Shown),
    Anonymous(Shown),
}

impl Part {
    fn text(&self) -> String {
        match self {
            Part::Named(name, (text, _)) => format!("{name} = {text}"),
            Part::Anonymous((text, _)) => text.clone(),
        }
    }
}

/// `{a, b}` and a JSON object of the named parts (anonymous parts' members merged in).
fn object(parts: Vec<Part>) -> Shown {
    let text = parts.iter().map(Part::text).collect::<Vec<_>>().join(", ");
    let mut members = Vec::with_capacity(parts.len());
    for part in parts {
        match part {
            Part::Named(name, (_, json)) => members.push((name, json)),
            Part::Anonymous((_, Json::Object(inner))) => members.extend(inner),
            // Not a record (cannot happen for an anonymous member): keyed by its text.
            Part::Anonymous((text, json)) => members.push((text, json)),
        }
    }
    (format!("{{{text}}}"), Json::Object(members))
}

/// `{a, b}` and a JSON array.
fn array(parts: Vec<Shown>) -> Shown {
    let text = parts
        .iter()
        .map(|p| p.0.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    (
        format!("{{{text}}}"),
        Json::Array(parts.into_iter().map(|p| p.1).collect()),
    )
}

impl Record<'_, '_> {
    /// `layout` at `offset` of the record's segment, with `budget` scalars left to print
    /// (decremented).
    fn show(&self, offset: usize, layout: &MemoryLayout, budget: &mut usize) -> Shown {
        // A zero-size struct, union or array holds no bytes: `{}`, whatever its element count
        // (`struct e z[1 << 62]` must not be expanded).
        if !matches!(layout, MemoryLayout::Value(_)) && layout.byte_size() == 0 {
            return match layout {
                MemoryLayout::Sequence(_) => array(Vec::new()),
                _ => object(Vec::new()),
            };
        }
        match layout {
            MemoryLayout::Value(v) => {
                *budget = budget.saturating_sub(1);
                match self.seg.get_value(v, offset) {
                    Ok(value) => show_scalar(&value),
                    Err(e) => (format!("<{e}>"), Json::Null),
                }
            }
            MemoryLayout::Struct(s) => {
                let mut parts = Vec::new();
                for (off, m) in s.fields() {
                    self.member(offset + off, m, budget, &mut parts);
                }
                object(parts)
            }
            MemoryLayout::Union(u) => {
                let mut parts = Vec::new();
                if let Some(first) = u.members().first() {
                    self.member(offset, first, budget, &mut parts);
                }
                object(parts)
            }
            MemoryLayout::Sequence(s) => {
                let stride = s.element().byte_size();
                // Elements are records of their own: their bit-fields are not known here.
                let element = Record { bits: &[], ..*self };
                let mut parts = Vec::new();
                for i in 0..s.count() {
                    if *budget == 0 {
                        let more = format!("… ({} more)", s.count() - i);
                        parts.push((more.clone(), Json::String(more)));
                        break;
                    }
                    parts.push(element.show(offset + i * stride, s.element(), budget));
                }
                array(parts)
            }
            MemoryLayout::Padding(_) => (String::new(), Json::Null),
        }
    }

    /// Member `m` of a struct or union, at `offset`, appended to `parts`: nothing for
    /// padding, the bit-fields for the bytes holding them (when known), an anonymous
    /// record with this record's bit-fields, a named record with none known.
    fn member(&self, offset: usize, m: &MemoryLayout, budget: &mut usize, parts: &mut Vec<Part>) {
        if matches!(m, MemoryLayout::Padding(_)) {
            return;
        }
        match m.name() {
            Some(name) => {
                let own = Record { bits: &[], ..*self };
                let shown = if m.is_group() {
                    own.show(offset, m, budget)
                } else {
                    self.show(offset, m, budget)
                };
                parts.push(Part::Named(name.to_string(), shown));
            }
            None if m.is_group() && !matches!(m, MemoryLayout::Sequence(_)) => {
                parts.push(Part::Anonymous(self.show(offset, m, budget)));
            }
            None => {
                // The bytes holding bit-fields (an unnamed byte array).
                let start = offset * 8;
                let end = start + m.byte_size() * 8;
                let mut found = false;
                for b in self.bits {
                    let at = self.base * 8 + b.bit_offset();
                    if at < start || at >= end {
                        continue;
                    }
                    found = true;
                    *budget = budget.saturating_sub(1);
                    let shown = match b.get_at(&self.seg, self.base) {
                        Ok(v) => show_scalar(&v),
                        Err(e) => (format!("<{e}>"), Json::Null),
                    };
                    parts.push(Part::Named(b.name().to_string(), shown));
                }
                if !found {
                    // Bit-fields whose names are not known (or unnamed ones): their bytes.
                    let bytes = self
                        .seg
                        .slice(offset, m.byte_size())
                        .map(|s| s.to_vec())
                        .unwrap_or_default();
                    let hex = bytes
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<Vec<_>>()
                        .join(" ");
                    parts.push(Part::Named(
                        format!("(bit-field bytes at {offset})"),
                        (format!("[{hex}]"), Json::String(hex)),
                    ));
                }
            }
        }
    }
}

/// An out-parameter's value: a pointer to a character type (`c_string`: `char *`, `const
/// unsigned char *`, a typedef of one) as the string it points to (quoted; `NULL`), a
/// `char[N]` as a `[N]` buffer (a quoted string, or hex bytes), any other type as
/// [`show_memory`] shows it (`bits`: the bit-fields of the record type).
///
/// # Safety
/// When `c_string`, `seg` must hold NULL or the address of a readable NUL-terminated string.
pub(super) unsafe fn show_out(
    seg: MemorySegment<'_>,
    c_string: bool,
    layout: &MemoryLayout,
    bits: &[BitField],
) -> Shown {
    if c_string {
        if let Ok(p) = seg.get_address(0) {
            if p.is_null() {
                return ("NULL".into(), Json::Null);
            }
            // SAFETY: the caller guarantees that a non-null address here points to a
            // NUL-terminated string.
            let s = unsafe { CStr::from_ptr(p.cast()) }
                .to_string_lossy()
                .into_owned();
            return (format!("{s:?}"), Json::String(s));
        }
    }
    if is_char_array(layout) {
        return match buffer_contents(&seg.to_vec(), false) {
            BufferContents::Text(s) => (format!("{s:?}"), Json::String(s)),
            BufferContents::Hex(hex) => (
                format!("[{hex}]"),
                Json::Object(vec![("hex".into(), Json::String(hex))]),
            ),
        };
    }
    show_memory(seg, 0, layout, bits)
}

/// What a `[N]` buffer (or a `char[N]` out-parameter) holds after the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum BufferContents {
    /// UTF-8 text without control characters (tab, newline and carriage return allowed),
    /// followed only by NUL bytes, so what is printed is all there is.
    Text(String),
    /// Anything else (or anything with `--hex`): two lowercase hex digits per byte, space
    /// separated, at most [`MAX_SHOWN`] bytes then `… (N more)`.
    Hex(String),
}

/// The contents of buffer `bytes`: [`BufferContents::Text`] when it holds text (then only
/// NULs) and `hex` is false, else [`BufferContents::Hex`].
pub(super) fn buffer_contents(bytes: &[u8], hex: bool) -> BufferContents {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let text = std::str::from_utf8(&bytes[..end]).ok().filter(|t| {
        t.chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
    });
    match text {
        Some(t) if !hex && bytes[end..].iter().all(|&b| b == 0) => {
            BufferContents::Text(t.to_string())
        }
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
            BufferContents::Hex(hex)
        }
    }
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
    use super::BufferContents::{Hex, Text};
    use super::*;

    #[test]
    fn buffers_are_text_or_hex() {
        assert_eq!(buffer_contents(b"hi\n\0\0", false), Text("hi\n".into()));
        assert_eq!(buffer_contents(b"\0\0", false), Text(String::new()));
        assert_eq!(buffer_contents(b"hi\0\0", true), Hex("68 69 00 00".into()));
        assert_eq!(buffer_contents(b"hi\0x", false), Hex("68 69 00 78".into()));
        assert_eq!(
            buffer_contents(&[4, 3, 2, 1], false),
            Hex("04 03 02 01".into())
        );
        assert_eq!(buffer_contents(&[0xff, 0], false), Hex("ff 00".into()));
        let Hex(big) = buffer_contents(&[1; 5000], false) else {
            panic!("5000 bytes of 0x01 are not text");
        };
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
        let number = |t: &str| Json::Number(t.into());
        assert_eq!(f(0.1), ("0.1".into(), number("0.1")));
        assert_eq!(f(1e300).0, "1e300");
        assert_eq!(f(1.5e-10).0, "1.5e-10");
        assert_eq!(f(1024.0).0, "1024");
        assert_eq!(f(123456.0).0, "123456");
        assert_eq!(f(1e6), ("1e6".into(), number("1e6")));
        assert_eq!(f(-0.0).0, "-0");
        assert_eq!(f(f64::NAN), ("NaN".into(), Json::str("NaN")));
        assert_eq!(f(f64::INFINITY), ("inf".into(), Json::str("inf")));
        assert_eq!(f(f64::NEG_INFINITY), ("-inf".into(), Json::str("-inf")));
        for x in [
            0.1,
            1e300,
            5e-324,
            f64::MAX,
            1.0 / 3.0,
            123456789.125,
            1e6,
            -0.0,
            2.0,
        ] {
            let (text, json) = f(x);
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                x.to_bits(),
                "round trip of {x}"
            );
            // The JSON is the same text, and valid JSON for the same number.
            assert_eq!(json, number(&text));
            let parsed: serde_json::Value = serde_json::from_str(&json.to_text()).unwrap();
            assert_eq!(parsed.as_f64(), Some(x), "{text}");
        }
        // An f32 is shown (and put in JSON) as its own shortest form, not its f64 widening.
        assert_eq!(show_scalar(&Value::F32(0.1)), ("0.1".into(), number("0.1")));
        assert_eq!(show_scalar(&Value::F32(f32::NAN)).1, Json::str("NaN"));
    }

    #[test]
    fn json_text_is_valid_and_keeps_member_order() {
        let v = Json::Object(vec![
            ("z".into(), Json::Number("1e6".into())),
            (
                "a \"q\"\n".into(),
                Json::Array(vec![Json::Null, Json::Bool(true)]),
            ),
            ("s".into(), Json::str("tab\there")),
        ]);
        let text = v.to_text();
        assert_eq!(text, r#"{"z":1e6,"a \"q\"\n":[null,true],"s":"tab\there"}"#);
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["z"], serde_json::json!(1e6));
    }
}
