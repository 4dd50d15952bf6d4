//! Struct, union and enum specifiers (C17 §6.7.2.1 structure and union specifiers, §6.7.2.3
//! tags): the tag namespace, references to tags declared before or later, and record bodies
//! (members, bitfields, anonymous members, flexible array members, `packed`/`aligned` and
//! `#pragma pack`) with their layouts. Enum bodies (§6.7.2.2) are in `enums`.

use std::sync::Arc;

use super::attributes::Attrs;
use super::declarators::Declarator;
use super::{PResult, Parser};
use crate::cdecl::lexer::{Kind, Token};
use crate::cdecl::{Declared, NoLayout, Span, Tag, TagKind, Ty};
use crate::layout::bitfield::{c_record_with_bitfields, RecordField};
use crate::layout::{BitField, MemoryLayout, ValueLayout};

/// A member of a record body as declared, before the record is laid out.
struct Member {
    /// The member's layout, carrying the member's name if it has one.
    layout: MemoryLayout,
    /// The member's attributes.
    attrs: Attrs,
    /// Where a flexible array member (`T name[]`) is declared.
    flexible: Option<Span>,
    /// For a bitfield: its name (`None` if unnamed) and width; `layout` is its declared type.
    bits: Option<(Option<String>, u32)>,
    /// The bitfields of an anonymous record member, relative to that member.
    inner_bits: Vec<BitField>,
}

impl Parser<'_, '_> {
    /// After `struct`/`union`/`enum`; returns the type and whether it was an untagged
    /// struct/union definition.
    pub(super) fn tag_spec(&mut self) -> PResult<(Ty, bool, bool)> {
        let kw = self.bump();
        self.enter(kw)?;
        let kind = match self.text(kw) {
            "struct" => TagKind::Struct,
            "union" => TagKind::Union,
            _ => TagKind::Enum,
        };
        let mut attrs = Attrs::default();
        self.attributes(&mut attrs)?;
        let tag_tok = self.peek();
        let tag = if tag_tok.kind == Kind::Ident {
            self.bump();
            Some(self.text(tag_tok).to_string())
        } else {
            None
        };
        if tag.is_none() && !self.is_punct("{") {
            let t = self.peek();
            return Err(self.err(
                t,
                format!(
                    "expected a tag name or `{{` after `{}`, found {}",
                    kind.keyword(),
                    self.describe(t)
                ),
            ));
        }
        if kind == TagKind::Enum {
            let r = self.enum_body(tag_tok, tag)?;
            self.leave();
            return Ok((r, false, false));
        }
        if let (Some(tag), false) = (&tag, self.is_punct("{")) {
            let ty = self.reference_tag(kind, tag, tag_tok)?;
            self.leave();
            return Ok((ty, false, false));
        }
        let open = self.peek();
        if let Some(tag) = &tag {
            // Register the tag as incomplete so the body can point to itself.
            self.reference_tag(kind, tag, tag_tok)?;
            self.defining.push(format!("{} {tag}", kind.keyword()));
        }
        let body = self.members(kind, open);
        if tag.is_some() {
            self.defining.pop();
        }
        let (members, problem) = body?;
        self.attributes(&mut attrs)?;
        let span = self.span_from(kw);
        if let Some(reason) = problem {
            // Declared, but without a layout: an error only where one is needed.
            let spelling = match &tag {
                Some(t) => format!("{} {t}", kind.keyword()),
                None => format!("anonymous {}", kind.keyword()),
            };
            let nl = Arc::new(NoLayout {
                spelling,
                reason,
                size_align: None,
            });
            if let Some(tag) = &tag {
                self.define_tag(kind, tag, tag_tok, Err(nl.clone()))?;
            }
            self.leave();
            return Ok((Ty::NoLayout(nl), tag.is_none(), false));
        }
        let transparent = attrs.transparent_union && kind == TagKind::Union;
        let (mut layout, bits) = self.build_record(kind, members, attrs, span)?;
        self.last_bits = bits.clone().into();
        if let Some(tag) = &tag {
            layout = layout.with_name(tag.as_str());
            self.define_tag(kind, tag, tag_tok, Ok(layout.clone()))?;
            let full = format!("{} {tag}", kind.keyword());
            if bits.is_empty() {
                self.st.bitfields.remove(&full);
            } else {
                self.st.bitfields.insert(full, bits.into());
            }
            if transparent {
                if let Some(first) = first_member(&Ty::Object(layout.clone())) {
                    self.st.transparent.insert(format!("union {tag}"), first);
                }
            }
        }
        self.leave();
        Ok((Ty::Object(layout), tag.is_none(), transparent))
    }

    /// A use of tag `tag` of `kind` without a body (at `tok`): the defined type, or an incomplete
    /// one (declaring the tag if it is new).
    fn reference_tag(&mut self, kind: TagKind, tag: &str, tok: Token) -> PResult<Ty> {
        match self.st.tags.get(tag) {
            Some(t) if t.kind != kind => Err(self.err(
                tok,
                format!(
                    "`{tag}` was declared as `{} {tag}`, used here as `{} {tag}`",
                    t.kind.keyword(),
                    kind.keyword()
                ),
            )),
            Some(Tag {
                layout: Some(l), ..
            }) => Ok(Ty::Object(l.clone())),
            Some(Tag {
                no_layout: Some(n), ..
            }) => Ok(Ty::NoLayout(n.clone())),
            Some(_) => Ok(Ty::Incomplete(format!("{} {tag}", kind.keyword()))),
            None => {
                self.st.tags.insert(
                    tag.to_string(),
                    Tag {
                        kind,
                        layout: None,
                        no_layout: None,
                    },
                );
                self.implicit_tags.push((tag.to_string(), self.pos));
                Ok(Ty::Incomplete(format!("{} {tag}", kind.keyword())))
            }
        }
    }

    /// Defines tag `tag` of `kind` (written at `tok`) as `def`, a layout or the reason it has
    /// none; a redefinition as another kind or layout is an error.
    pub(super) fn define_tag(
        &mut self,
        kind: TagKind,
        tag: &str,
        tok: Token,
        def: Result<MemoryLayout, Arc<NoLayout>>,
    ) -> PResult<()> {
        let full = format!("{} {tag}", kind.keyword());
        match self.st.tags.get(tag) {
            Some(t) if t.kind != kind => {
                return Err(self.err(
                    tok,
                    format!(
                        "`{tag}` was declared as `{} {tag}` before",
                        t.kind.keyword()
                    ),
                ))
            }
            // Pointer targets aside: a pointee may have been completed in between.
            Some(Tag {
                layout: Some(old), ..
            }) if !def
                .as_ref()
                .is_ok_and(|l| crate::layout::same_declaration(l, old)) =>
            {
                let now = match &def {
                    Ok(l) => l.to_string(),
                    Err(n) => format!("no layout ({})", n.reason),
                };
                return Err(self.err(
                    tok,
                    format!(
                        "redefinition of `{full}` with a different layout: {old} before, {now} now"
                    ),
                ));
            }
            Some(Tag {
                no_layout: Some(old),
                ..
            }) if def.as_ref().err() != Some(old) => {
                return Err(self.err(
                    tok,
                    format!("redefinition of `{full}` with different members"),
                ));
            }
            _ => {}
        }
        let (layout, no_layout, ty) = match def {
            Ok(l) => (Some(l.clone()), None, Ty::Object(l)),
            Err(n) => (None, Some(n.clone()), Ty::NoLayout(n)),
        };
        self.st.tags.insert(
            tag.to_string(),
            Tag {
                kind,
                layout,
                no_layout,
            },
        );
        // Typedefs made while the tag was incomplete now name the complete type.
        if let Some(names) = self.st.pending_typedefs.remove(&full) {
            for name in names {
                if let Some(t) = self.st.typedefs.get_mut(&name) {
                    if matches!(t, Ty::Incomplete(n) if *n == full) {
                        *t = ty.clone();
                    }
                }
            }
        }
        self.declared.push(Declared::Tag(full));
        Ok(())
    }

    /// A record body after its `{`: the members, and, if some member has no layout (or is a
    /// bitfield), why the record has none.
    fn members(&mut self, kind: TagKind, open: Token) -> PResult<(Vec<Member>, Option<String>)> {
        self.bump(); // `{`
        let mut out: Vec<Member> = Vec::new();
        let mut problem: Option<String> = None;
        loop {
            let t = self.peek();
            match t.kind {
                Kind::Eof => {
                    return Err(self.err(
                        open,
                        format!(
                            "unterminated `{}` body: this `{{` is never closed",
                            kind.keyword()
                        ),
                    ))
                }
                Kind::Punct("}") => {
                    self.bump();
                    break;
                }
                Kind::Punct(";") => {
                    self.bump();
                    continue;
                }
                Kind::Directive => {
                    return Err(self.err(
                        t,
                        "preprocessor lines inside a struct or union body are not supported",
                    ))
                }
                _ => {}
            }
            if self.is_word(t, &["_Static_assert", "static_assert"]) {
                self.static_assert()?;
                continue;
            }
            let spec = self.specifiers()?;
            if spec.typedef {
                return Err(self.err_at(
                    spec.span,
                    "`typedef` is not allowed inside a struct or union",
                ));
            }
            if self.eat_punct(";") {
                if spec.anonymous_record {
                    match spec.ty {
                        Ty::Object(l) => out.push(Member {
                            layout: l,
                            attrs: spec.attrs,
                            flexible: None,
                            bits: None,
                            inner_bits: spec.bits.to_vec(),
                        }),
                        Ty::NoLayout(n) => {
                            problem.get_or_insert_with(|| {
                                format!("its anonymous member has no layout: {}", n.reason)
                            });
                        }
                        _ => {}
                    }
                }
                continue;
            }
            loop {
                let d = if self.is_punct(":") {
                    Declarator::default() // an unnamed bitfield
                } else {
                    self.declarator_in(true)?
                };
                if self.is_punct(":") {
                    let colon = self.bump();
                    let mut attrs = spec.attrs.clone();
                    let base = self.type_attrs(spec.ty.clone(), &attrs, Some(&d))?;
                    let wt = self.peek();
                    let width = self.const_expr()?;
                    let width_span = self.span_from(wt);
                    self.attributes(&mut attrs)?;
                    let name = d.name().map(|(n, _)| n.clone());
                    let what = match &name {
                        Some(n) => format!("bitfield `{n}`"),
                        None => "an unnamed bitfield".to_string(),
                    };
                    let kind = match (d.derives(), self.complete(base)) {
                        (false, Ty::Object(MemoryLayout::Value(v)))
                            if !v.kind().is_float()
                                && v.kind() != crate::layout::ScalarKind::Pointer =>
                        {
                            if spec.enum_unsigned && v.kind() == crate::layout::ScalarKind::I32 {
                                Some(ValueLayout::U32)
                            } else {
                                Some(v)
                            }
                        }
                        (false, Ty::NoLayout(n)) => {
                            problem.get_or_insert_with(|| {
                                format!(
                                    "{what} has type `{}`, which has no layout: {}",
                                    n.spelling, n.reason
                                )
                            });
                            None
                        }
                        _ => {
                            return Err(self.err(
                                colon,
                                format!("{what} must have an integer, `_Bool` or enum type"),
                            ))
                        }
                    };
                    if let Some(v) = kind {
                        let bits = v.byte_size() * 8;
                        let w = match u32::try_from(width) {
                            Ok(w) if (w as usize) <= bits && (w > 0 || name.is_none()) => w,
                            _ => {
                                let lowest = u8::from(name.is_some());
                                return Err(self.err_at(
                                    width_span,
                                    format!(
                                        "{what} is {width} bits wide; expected {lowest}..={bits} \
                                         bits for its type `{}`",
                                        v.kind().name()
                                    ),
                                ));
                            }
                        };
                        if attrs.aligned.is_some() {
                            return Err(
                                self.err(colon, format!("`aligned` on {what} is not supported"))
                            );
                        }
                        out.push(Member {
                            layout: MemoryLayout::Value(v),
                            attrs,
                            flexible: None,
                            bits: Some((name, w)),
                            inner_bits: Vec::new(),
                        });
                    }
                    if self.eat_punct(",") {
                        continue;
                    }
                    self.expect_punct(";", "after the member declaration")?;
                    break;
                }
                let mut attrs = spec.attrs.clone();
                self.attributes(&mut attrs)?;
                let Some((name, name_span)) = d.name().cloned() else {
                    let t = self.peek();
                    return Err(self.err(
                        t,
                        format!("expected a member name, found {}", self.describe(t)),
                    ));
                };
                let flexible = d.is_flexible().then_some(name_span);
                let base = self.type_attrs(spec.ty.clone(), &attrs, Some(&d))?;
                let ty = self.apply(base, &d, spec.plain_char)?;
                let layout = match self.complete(ty) {
                    Ty::Object(l) => Some(l.with_name(name.as_str())),
                    Ty::NoLayout(n) => {
                        problem.get_or_insert_with(|| {
                            format!(
                                "member `{name}` has type `{}`, which has no layout: {}",
                                n.spelling, n.reason
                            )
                        });
                        None
                    }
                    Ty::Void => {
                        return Err(self.err_at(name_span, format!("member `{name}` has type `void`")))
                    }
                    Ty::Incomplete(n) => {
                        return Err(self.err_at(
                            name_span,
                            format!("member `{name}` has incomplete type `{n}` (use a pointer)"),
                        ))
                    }
                    Ty::Func(_) => {
                        return Err(self.err_at(
                            name_span,
                            format!(
                                "member `{name}` is a function; declare a function pointer `(*{name})(...)`"
                            ),
                        ))
                    }
                };
                if let Some(layout) = layout {
                    out.push(Member {
                        layout,
                        attrs,
                        flexible,
                        bits: None,
                        inner_bits: Vec::new(),
                    });
                }
                if self.eat_punct(",") {
                    continue;
                }
                self.expect_punct(";", "after the member declaration")?;
                break;
            }
        }
        if let Some(pos) = out.iter().position(|m| m.flexible.is_some()) {
            if pos + 1 != out.len() {
                let span = out[pos].flexible.unwrap_or_default();
                return Err(
                    self.err_at(span, "a flexible array member `[]` must be the last member")
                );
            }
        }
        Ok((out, problem))
    }

    /// The record's layout, and its bitfields (with those of anonymous record members).
    fn build_record(
        &self,
        kind: TagKind,
        members: Vec<Member>,
        attrs: Attrs,
        span: Span,
    ) -> PResult<(MemoryLayout, Vec<BitField>)> {
        // GCC: `aligned` raises a member's alignment and survives `packed`; `#pragma pack`
        // caps everything, explicitly aligned members included.
        let pack = self.st.pack;
        let effective = |m: &Member| {
            let natural = m.layout.byte_alignment();
            if attrs.packed || m.attrs.packed {
                m.attrs.aligned.unwrap_or(1)
            } else {
                m.attrs.aligned.map_or(natural, |x| x.max(natural))
            }
        };
        let with_bits = members
            .iter()
            .any(|m| m.bits.is_some() || !m.inner_bits.is_empty());
        let mut layout = if with_bits {
            let fields = members
                .into_iter()
                .map(|m| match m.bits {
                    Some((name, width)) => {
                        let k = match &m.layout {
                            MemoryLayout::Value(v) => v.kind(),
                            _ => crate::layout::ScalarKind::I32,
                        };
                        RecordField::Bits {
                            name: name.map(Arc::from),
                            kind: k,
                            type_alignment: m.layout.byte_alignment(),
                            width,
                            packed: attrs.packed || m.attrs.packed,
                        }
                    }
                    None => {
                        let a = effective(&m);
                        let a = pack.map_or(a, |p| a.min(p));
                        RecordField::Ordinary(m.layout.with_alignment_unchecked(a), m.inner_bits)
                    }
                })
                .collect::<Vec<_>>();
            for f in &fields {
                if let RecordField::Ordinary(l, _) = f {
                    self.check_depth(l, span)?;
                }
            }
            let (layout, bits) = c_record_with_bitfields(fields, kind == TagKind::Union, pack)
                .map_err(|e| self.layout_err(span, e))?;
            return self.record_aligned(layout, &attrs, span).map(|l| (l, bits));
        } else {
            let layouts: Vec<MemoryLayout> = members
                .into_iter()
                .map(|m| {
                    let a = effective(&m);
                    m.layout.with_alignment_unchecked(a)
                })
                .collect();
            for l in &layouts {
                self.check_depth(l, span)?;
            }
            let built = match (kind, pack) {
                (TagKind::Union, _) => MemoryLayout::union_layout(layouts.into_iter().map(|l| {
                    let a = pack.map_or(l.byte_alignment(), |p| l.byte_alignment().min(p));
                    l.with_alignment_unchecked(a)
                })),
                (_, Some(p)) => MemoryLayout::c_struct_packed(layouts, p),
                (_, None) => MemoryLayout::c_struct(layouts),
            };
            built.map_err(|e| self.layout_err(span, e))?
        };
        layout = self.record_aligned(layout, &attrs, span)?;
        Ok((layout, Vec::new()))
    }

    /// `__attribute__((aligned(n)))` on a record: raises its alignment (and pads its size).
    fn record_aligned(
        &self,
        layout: MemoryLayout,
        attrs: &Attrs,
        span: Span,
    ) -> PResult<MemoryLayout> {
        match attrs.aligned {
            Some(a) => {
                let a = a.max(layout.byte_alignment());
                layout
                    .with_byte_alignment(a)
                    .map_err(|e| self.layout_err(span, e))
            }
            None => Ok(layout),
        }
    }
}

/// The first member of a union type (without its name), for `transparent_union`.
pub(super) fn first_member(ty: &Ty) -> Option<MemoryLayout> {
    match ty {
        Ty::Object(MemoryLayout::Union(u)) => u.members().first().map(|m| match m {
            MemoryLayout::Value(v) => MemoryLayout::Value(v.clone().without_name()),
            other => other.clone(),
        }),
        _ => None,
    }
}

/// The tag of a named union type.
pub(super) fn union_tag(ty: &Ty) -> Option<&str> {
    match ty {
        Ty::Object(l @ MemoryLayout::Union(_)) => l.name(),
        _ => None,
    }
}
