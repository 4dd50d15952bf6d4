//! Enumeration specifiers' bodies (C17 §6.7.2.2): the enumerators and their values (each
//! the previous one plus one unless given), the enumeration constants they define, and the
//! integer type the enumerators' range gives the enum (GCC's rules, see `enum_layout`).

use super::attributes::Attrs;
use super::{PResult, Parser};
use crate::cdecl::lexer::{Kind, Token};
use crate::cdecl::{enum_layout, Tag, TagKind, Ty};
use crate::layout::{MemoryLayout, ValueLayout};

impl Parser<'_, '_> {
    /// After `enum` and its tag (at `tag_tok`, if any): a reference to the enum `tag` when no
    /// `{` follows (a forward-declared one is `int`), or else its body and trailing attributes,
    /// defining the tag if there is one.
    pub(super) fn enum_body(&mut self, tag_tok: Token, tag: Option<String>) -> PResult<Ty> {
        if let (Some(tag), false) = (&tag, self.is_punct("{")) {
            self.last_enum_unsigned = self.st.unsigned_enums.contains(&format!("enum {tag}"));
            return match self.st.tags.get(tag) {
                Some(t) if t.kind != TagKind::Enum => Err(self.err(
                    tag_tok,
                    format!("`{tag}` was declared as `{} {tag}`", t.kind.keyword()),
                )),
                Some(Tag {
                    layout: Some(l), ..
                }) => Ok(Ty::Object(l.clone())),
                // A forward-declared enum (GNU): `int`.
                _ => Ok(Ty::Object(ValueLayout::I32.into())),
            };
        }
        let open = self.bump();
        let mut next: i128 = 0;
        let mut min = i128::MAX;
        let mut max = i128::MIN;
        loop {
            let t = self.peek();
            if t.kind == Kind::Eof {
                return Err(self.err(open, "unterminated `enum` body: this `{` is never closed"));
            }
            if self.eat_punct("}") {
                break;
            }
            if t.kind != Kind::Ident {
                return Err(self.err(
                    t,
                    format!("expected an enumerator name, found {}", self.describe(t)),
                ));
            }
            self.bump();
            let name = self.text(t).to_string();
            let mut attrs = Attrs::default();
            self.attributes(&mut attrs)?;
            let value = if self.eat_punct("=") {
                self.const_expr()?
            } else {
                next
            };
            if let Some(&old) = self.st.constants.get(&name) {
                if old != value {
                    return Err(self.err(
                        t,
                        format!("enumerator `{name}` redefined with another value ({old} before, {value} now)"),
                    ));
                }
            }
            if value < i128::from(i64::MIN) || value > i128::from(u64::MAX) {
                return Err(self.err(
                    t,
                    format!("enumerator `{name}` = {value} does not fit in 64 bits"),
                ));
            }
            self.st.constants.insert(name, value);
            min = min.min(value);
            max = max.max(value);
            next = value + 1;
            if !self.eat_punct(",") {
                self.expect_punct("}", "after the enumerator")?;
                break;
            }
        }
        if min > max {
            return Err(self.err(open, "an `enum` needs at least one enumerator"));
        }
        let mut attrs = Attrs::default();
        self.attributes(&mut attrs)?;
        let layout: MemoryLayout = if attrs.packed {
            // GCC: a packed enum takes the smallest integer that holds its values.
            let kind = if min >= -128 && max <= 127 {
                ValueLayout::I8
            } else if min >= 0 && max <= 255 {
                ValueLayout::U8
            } else if min >= -32768 && max <= 32767 {
                ValueLayout::I16
            } else if min >= 0 && max <= 65535 {
                ValueLayout::U16
            } else {
                enum_layout(min, max)
            };
            kind.into()
        } else {
            enum_layout(min, max).into()
        };
        // GCC gives an enum without negative values an unsigned compatible type, which
        // matters for bitfields of it.
        self.last_enum_unsigned = min >= 0;
        if let Some(tag) = tag {
            self.define_tag(TagKind::Enum, &tag, tag_tok, Ok(layout.clone()))?;
            let full = format!("enum {tag}");
            if min >= 0 {
                self.st.unsigned_enums.insert(full);
            } else {
                self.st.unsigned_enums.remove(&full);
            }
        }
        Ok(Ty::Object(layout))
    }
}
