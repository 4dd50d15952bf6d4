//! Enumeration specifiers' bodies (C17 §6.7.2.2): the enumerators and their values (each
//! the previous one plus one unless given, an error where that overflows), the enumeration
//! constants they define with their types, and the integer type the enumerators' range gives
//! the enum (GCC's rules, see `enum_layout`).

use super::attributes::Attrs;
use super::const_value::{CVal, IntTy};
use super::{PResult, Parser};
use crate::cdecl::lexer::{Kind, Token};
use crate::cdecl::{enum_layout, Enumerator, Tag, TagKind, Ty};
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
        // The previous enumerator's value and type, and the names this body defines.
        let mut prev: Option<CVal> = None;
        let mut names: Vec<String> = Vec::new();
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
            // GCC: an enumerator's type is `int` if its value fits, else its value's type; an
            // enumerator without a value is the previous one plus one in the previous one's
            // type, and an error where that overflows.
            let value = if self.eat_punct("=") {
                self.int_const_expr()?
            } else {
                match prev {
                    None => CVal::truth(false),
                    Some(p) => {
                        if !p.ty.holds(p.v + 1) {
                            return Err(self.err(
                                t,
                                format!(
                                "overflow in enumeration values: `{name}` would be {} + 1, which \
                                 does not fit in `{}`",
                                p.v,
                                p.ty.name()
                            ),
                            ));
                        }
                        CVal {
                            v: p.v + 1,
                            ty: p.ty,
                        }
                    }
                }
            };
            let ty = if IntTy::INT.holds(value.v) {
                IntTy::INT
            } else {
                value.ty
            };
            let value_v = value.v;
            if let Some(old) = self.st.constants.get(&name) {
                if old.value != value_v {
                    return Err(self.err(
                        t,
                        format!(
                            "enumerator `{name}` redefined with another value ({} before, \
                             {value_v} now)",
                            old.value
                        ),
                    ));
                }
            }
            if value_v < i128::from(i64::MIN) || value_v > i128::from(u64::MAX) {
                return Err(self.err(
                    t,
                    format!("enumerator `{name}` = {value_v} does not fit in 64 bits"),
                ));
            }
            self.st.constants.insert(
                name.clone(),
                Enumerator {
                    value: value_v,
                    kind: ty.kind(),
                },
            );
            names.push(name);
            min = min.min(value_v);
            max = max.max(value_v);
            prev = Some(CVal { v: value_v, ty });
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
        // After the body, GCC gives the enumerators that do not fit in `int` the enum's type.
        if let Some(kind) = layout.as_value().map(|v| v.kind()) {
            for name in &names {
                if let Some(e) = self.st.constants.get_mut(name) {
                    if !IntTy::INT.holds(e.value) {
                        e.kind = kind;
                    }
                }
            }
        }
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
