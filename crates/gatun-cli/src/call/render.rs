//! What `gatun call` prints after the call: the result (a number, `true`/`false`, an address,
//! a string, or a brace literal for a struct), `errno`, the `[N]` buffers (text, or hex bytes
//! with `--hex` or when they do not hold text) and the `&TYPE` out-parameters, as text lines
//! or (with `--json`) one JSON object ([`Report::render`]).

use std::ffi::{c_void, CStr};

use gatun::layout::MemoryLayout;
use gatun::memory::MemorySegment;
use gatun::{FunctionDescriptor, Value};
use serde_json::{json, Value as Json};

use super::fill::is_char_array;

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
            return format!("{}\n", self.json());
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

    /// The `--json` object.
    fn json(&self) -> Json {
        let mut out = json!({
            "function": self.function,
            "descriptor": self.descriptor.to_string(),
            "result": self.result.1,
        });
        if let Some(e) = self.errno {
            out["errno"] = json!(e);
            out["errno_message"] = json!(errno_message(e));
        }
        if !self.buffers.is_empty() {
            out["buffers"] = Json::Array(
                self.buffers
                    .iter()
                    .map(|(i, contents)| match contents {
                        BufferContents::Text(s) => json!({ "argument": i + 1, "string": s }),
                        BufferContents::Hex(hex) => json!({ "argument": i + 1, "hex": hex }),
                    })
                    .collect(),
            );
        }
        if !self.outs.is_empty() {
            out["out"] = Json::Array(
                self.outs
                    .iter()
                    .map(|(i, ty, (_, value))| {
                        json!({ "argument": i + 1, "type": ty, "value": value })
                    })
                    .collect(),
            );
        }
        out
    }
}

/// The call's result: a struct/union/array as [`show_memory`] shows it, a non-null address
/// as the string it points to when `returns_c_string`, anything else as [`show_scalar`]
/// shows it.
///
/// # Safety
/// When `returns_c_string`, a non-null [`Value::Address`] `result` must point to a readable
/// NUL-terminated string.
pub(super) unsafe fn show_result(
    result: &Value<'_>,
    descriptor: &FunctionDescriptor,
    returns_c_string: bool,
) -> Shown {
    match (result, descriptor.return_layout()) {
        (Value::Segment(seg), Some(layout)) if layout.is_group() => show_memory(*seg, 0, layout),
        (Value::Address(p), _) if !p.is_null() && returns_c_string => {
            // SAFETY: the caller guarantees that a non-null address result of a function
            // returning a `char *` points to a NUL-terminated string.
            let s = unsafe { CStr::from_ptr(p.cast()) }
                .to_string_lossy()
                .into_owned();
            (s.clone(), json!(s))
        }
        (v, _) => show_scalar(v),
    }
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
fn show_float(x: f64, text: String) -> Shown {
    let json = if x.is_finite() {
        text.parse::<f64>().map(|v| json!(v)).unwrap_or(Json::Null)
    } else {
        json!(text)
    };
    (text, json)
}

/// A scalar value: integers in decimal, `true`/`false`, floats in their shortest round-trip
/// form, addresses as `0x...` (`NULL`, JSON `null`); `void` as nothing (JSON `null`).
pub(super) fn show_scalar(v: &Value<'_>) -> Shown {
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

/// An address: `NULL` (JSON `null`), else `0x...` (a JSON string).
fn address(p: *mut c_void) -> Shown {
    if p.is_null() {
        ("NULL".into(), Json::Null)
    } else {
        let s = format!("{p:p}");
        (s.clone(), json!(s))
    }
}

/// A struct/union/array read back from memory, as a brace literal and JSON. At most
/// [`MAX_SHOWN`] scalars in all: an array met once the budget is spent stops there and ends
/// with `… (N more)` (a JSON string as the last element), so a 40-character declaration of a
/// `char a[1 << 30]` result prints a bounded line.
pub(super) fn show_memory(seg: MemorySegment<'_>, offset: usize, layout: &MemoryLayout) -> Shown {
    show_memory_within(seg, offset, layout, &mut { MAX_SHOWN })
}

/// [`show_memory`] with `budget` scalars left to print (decremented).
fn show_memory_within(
    seg: MemorySegment<'_>,
    offset: usize,
    layout: &MemoryLayout,
    budget: &mut usize,
) -> Shown {
    let list = |parts: Vec<Shown>| {
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

/// An out-parameter's value: a pointer to a character type (`c_string`: `char *`, `const
/// unsigned char *`) as the string it points to (quoted; `NULL`), a `char[N]` as a `[N]`
/// buffer (a quoted string, or hex bytes), any other type as [`show_memory`] shows it.
///
/// # Safety
/// When `c_string`, `seg` must hold NULL or the address of a readable NUL-terminated string.
pub(super) unsafe fn show_out(
    seg: MemorySegment<'_>,
    c_string: bool,
    layout: &MemoryLayout,
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
            return (format!("{s:?}"), json!(s));
        }
    }
    if is_char_array(layout) {
        return match buffer_contents(&seg.to_vec(), false) {
            BufferContents::Text(s) => (format!("{s:?}"), json!(s)),
            BufferContents::Hex(hex) => (format!("[{hex}]"), json!({ "hex": hex })),
        };
    }
    show_memory(seg, 0, layout)
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
}
