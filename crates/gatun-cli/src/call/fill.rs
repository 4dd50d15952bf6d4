//! Brace literals written into memory: a struct, union or array (by value, or behind a
//! `&TYPE=VALUE` out-parameter) initialized from a [`Lit`] as a C initializer list does,
//! brace elision included (C11 6.7.9 ¶20-21).

use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
use gatun::memory::MemorySegment;
use gatun::Value;

use super::error::CallError;
use super::literal::{parse_int, Lit};
use super::values::{pointer_value, scalar_value, Buffers};

/// Writes literal `lit` for `layout` at `offset` (bytes) of `seg`, for argument `index`
/// (from 0). A brace list for a struct, union or array may leave out inner braces (C brace
/// elision, C11 6.7.9 ¶20-21): `{1, 2, 3.5}` initializes `struct { int a[2]; double d; }` as
/// `{{1, 2}, 3.5}`; a scalar may be braced (`{5}`). Members without a value are left as they
/// are (the callers zero the memory first).
///
/// # Errors
/// A value that does not suit its member (see [`scalar_value`]), a quoted string for a
/// number, more values than the aggregate takes, several values in braces around a scalar,
/// a word for an aggregate, a string longer than its char array, or an allocation failure
/// (a pointer member's string or buffer).
pub(super) fn fill<'a>(
    seg: MemorySegment<'_>,
    offset: usize,
    layout: &MemoryLayout,
    lit: &Lit,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<(), CallError> {
    let argument = index + 1;
    match (layout, lit) {
        (MemoryLayout::Value(v), Lit::Atom(text) | Lit::Str(text)) => {
            let value = match (v.kind(), lit) {
                (ScalarKind::Pointer, _) => pointer_value(text, index, bufs)?,
                (kind, Lit::Str(_)) => {
                    return Err(CallError::StringForNumber {
                        argument,
                        text: text.clone(),
                        kind,
                    })
                }
                (kind, _) => scalar_value(kind, text, index, bufs)?,
            };
            let value = match value {
                Value::Segment(s) => Value::Address(s.as_address()),
                other => other,
            };
            Ok(seg.set_value(v, offset, &value)?)
        }
        (MemoryLayout::Value(_), Lit::List(items)) => match items.as_slice() {
            [] => Ok(()),
            [one] => fill(seg, offset, layout, one, index, bufs),
            _ => Err(CallError::BracedScalar {
                argument,
                layout: Box::new(layout.clone()),
                count: items.len(),
            }),
        },
        (MemoryLayout::Padding(_), _) => Ok(()),
        (group, Lit::Str(text) | Lit::Atom(text)) if is_char_array(group) => {
            fill_chars(seg, offset, group, text, argument)
        }
        (group, Lit::List(items)) => {
            let mut pos = 0;
            fill_aggregate(seg, offset, group, items, &mut pos, index, bufs)?;
            if pos < items.len() {
                let aggregate = match group {
                    MemoryLayout::Union(_) => "union",
                    MemoryLayout::Sequence(_) => "array",
                    _ => "struct",
                };
                return Err(CallError::TooManyValues {
                    argument,
                    given: items.len(),
                    aggregate,
                    takes: pos,
                });
            }
            Ok(())
        }
        (_, Lit::Atom(text) | Lit::Str(text)) => Err(CallError::ExpectedBraces {
            argument,
            layout: Box::new(layout.clone()),
            text: text.clone(),
        }),
    }
}

/// `char[N]` / `unsigned char[N]`.
pub(super) fn is_char_array(layout: &MemoryLayout) -> bool {
    match layout {
        MemoryLayout::Sequence(s) => matches!(
            s.element().as_value().map(ValueLayout::kind),
            Some(ScalarKind::I8 | ScalarKind::U8)
        ),
        _ => false,
    }
}

/// Copies `text` into the char array `layout` at `offset` (no NUL needed when it fills the
/// array exactly, as in C); `argument` (from 1) names the argument in an error.
fn fill_chars(
    seg: MemorySegment<'_>,
    offset: usize,
    layout: &MemoryLayout,
    text: &str,
    argument: usize,
) -> Result<(), CallError> {
    let capacity = layout.byte_size();
    if text.len() > capacity {
        return Err(CallError::StringTooLong {
            argument,
            text: text.to_string(),
            capacity,
        });
    }
    Ok(seg.copy_from_slice(offset, text.as_bytes())?)
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
) -> Result<(), CallError> {
    let mut member = |off: usize, m: &MemoryLayout, pos: &mut usize| -> Result<(), CallError> {
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

#[cfg(test)]
mod tests {
    use gatun::cdecl::Declarations;
    use gatun::memory::{Arena, SegmentAllocator};
    use serde_json::json;

    use super::super::literal::parse_literal;
    use super::super::render::show_memory;
    use super::*;

    #[test]
    fn struct_literals_fill_and_show_nested_layouts() {
        let layout = Declarations::new()
            .type_layout(
                "struct o { char c; struct { int a[2]; double d; } in; \
                 union { int i; float f; } u; char name[4]; void *p; }",
            )
            .unwrap();
        let arena = Arena::confined();
        let mut bufs = Buffers::new(&arena, &Declarations::new());
        let seg = arena.allocate_layout(&layout).unwrap();
        let lit = parse_literal("{1, {{2, 3}, 4.5}, {7}, \"abc\", NULL}").unwrap();
        fill(seg, 0, &layout, &lit, 0, &mut bufs).unwrap();
        let (text, json) = show_memory(seg, 0, &layout, &[]);
        assert_eq!(
            text,
            "{c = 1, in = {a = {2, 3}, d = 4.5}, u = {i = 7}, name = {97, 98, 99, 0}, p = NULL}"
        );
        let json: serde_json::Value = serde_json::from_str(&json.to_text()).unwrap();
        assert_eq!(json["in"]["a"], json!([2, 3]));
        assert_eq!(json["u"], json!({ "i": 7 }));
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
        assert!(show_memory(seg, 0, &layout, &[])
            .0
            .starts_with("{c = 5, in = {a = {0, 0}, d = 0}"));
        let too_many = parse_literal("{1, {}, {}, \"a\", NULL, 6}").unwrap();
        assert!(fill(seg, 0, &layout, &too_many, 0, &mut bufs).is_err());
        let bad = parse_literal("{x}").unwrap();
        assert!(fill(seg, 0, &layout, &bad, 0, &mut bufs)
            .unwrap_err()
            .to_string()
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
        let mut bufs = Buffers::new(&arena, &Declarations::new());
        let show = |lit: &str, bufs: &mut Buffers<'_>| -> Result<String, CallError> {
            let seg = arena.allocate_layout(&layout).unwrap();
            fill(seg, 0, &layout, &parse_literal(lit).unwrap(), 0, bufs)?;
            Ok(show_memory(seg, 0, &layout, &[]).0)
        };
        let full = "{{1, 2}, {3, {4, 5, 6}}, 7.5, {8}}";
        let want = "{a = {1, 2}, in = {s = 3, t = {4, 5, 6}}, d = 7.5, u = {i = 8}}";
        assert_eq!(show(full, &mut bufs).unwrap(), want);
        // Every inner brace left out: C11 6.7.9 ¶20.
        assert_eq!(show("{1, 2, 3, 4, 5, 6, 7.5, 8}", &mut bufs).unwrap(), want);
        // Some left out; a quoted string initializes the char array; a braced scalar.
        assert_eq!(
            show("{1, 2, {3, \"ab\"}, {7.5}, 8}", &mut bufs).unwrap(),
            "{a = {1, 2}, in = {s = 3, t = {97, 98, 0}}, d = 7.5, u = {i = 8}}"
        );
        // Stopping early leaves the rest zero.
        assert_eq!(
            show("{1, 2, 3}", &mut bufs).unwrap(),
            "{a = {1, 2}, in = {s = 3, t = {0, 0, 0}}, d = 0, u = {i = 0}}"
        );
        let e = show("{1, 2, 3, 4, 5, 6, 7.5, 8, 9}", &mut bufs).unwrap_err();
        assert_eq!(
            e.to_string(),
            "argument 1: too many values in the literal: 9 given, the struct takes 8"
        );
        assert!(matches!(
            e,
            CallError::TooManyValues {
                argument: 1,
                given: 9,
                aggregate: "struct",
                takes: 8
            }
        ));
        let e = show("{{1, 2, 3}}", &mut bufs).unwrap_err().to_string();
        assert!(e.contains("3 given, the array takes 2"), "{e}");
        let e = show("{{{1, 2}}}", &mut bufs).unwrap_err().to_string();
        assert!(e.contains("braces around a scalar"), "{e}");
        let e = show("{\"x\"}", &mut bufs).unwrap_err().to_string();
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
}
