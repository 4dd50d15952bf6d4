//! Preprocessor lines left in the input (C17 §6.10.6): `#pragma pack` (push, pop, set and
//! reset the packing of the records that follow), other pragmas and GCC line markers (ignored);
//! any other directive is an error.

use super::{PResult, Parser};
use crate::cdecl::lexer::{tokenize, Kind, Token};
use crate::cdecl::Span;

impl Parser<'_, '_> {
    /// The preprocessor line `t`, parsed from its own tokens.
    pub(super) fn directive(&mut self, t: Token) -> PResult<()> {
        self.bump();
        let sub = tokenize(self.src, t.span.start + 1, t.span.end)?;
        let saved_toks = std::mem::replace(&mut self.toks, sub);
        let saved_pos = std::mem::replace(&mut self.pos, 0);
        let saved_unclosed = std::mem::replace(&mut self.unclosed_from, usize::MAX);
        let r = self.directive_body(t);
        self.toks = saved_toks;
        self.pos = saved_pos;
        self.unclosed_from = saved_unclosed;
        r
    }

    /// The tokens of a preprocessor line after its `#` at `hash`.
    fn directive_body(&mut self, hash: Token) -> PResult<()> {
        let first = self.peek();
        match first.kind {
            // `#` alone, or a GCC line marker (`# 1 "file.h"`): ignored.
            Kind::Eof | Kind::Int(_) => return Ok(()),
            Kind::Ident if self.text(first) == "pragma" => {}
            _ => {
                let span = Span::new(hash.span.start, first.span.end);
                return Err(self.err_at(
                    span,
                    format!(
                        "preprocessor directive `#{}` is not supported: gatun parses declarations, \
                         not the preprocessor (only `#pragma pack` is understood)",
                        self.text(first)
                    ),
                ));
            }
        }
        self.bump();
        let what = self.peek();
        if !(what.kind == Kind::Ident && self.text(what) == "pack") {
            return Ok(()); // other pragmas (`once`, `GCC visibility`, ...) are ignored
        }
        self.bump();
        self.expect_punct("(", "after `#pragma pack`")?;
        let mut set: Option<Option<usize>> = Some(None); // `pack()` resets
        let w = self.peek();
        if w.kind == Kind::Ident && matches!(self.text(w), "push" | "pop") {
            let push = self.text(w) == "push";
            self.bump();
            set = None;
            if push {
                self.st.pack_stack.push(self.st.pack);
            } else {
                match self.st.pack_stack.pop() {
                    Some(p) => self.st.pack = p,
                    None => return Err(self.err(w, "`#pragma pack(pop)` without a matching push")),
                }
            }
            while self.eat_punct(",") {
                let a = self.peek();
                if a.kind == Kind::Ident {
                    self.bump(); // an identifier label: ignored
                } else {
                    set = Some(Some(self.pack_value()?));
                }
            }
        } else if !self.is_punct(")") {
            set = Some(Some(self.pack_value()?));
        }
        self.expect_punct(")", "to close `#pragma pack(`")?;
        if !self.at_eof() {
            let t = self.peek();
            return Err(self.err(
                t,
                format!("unexpected {} after `#pragma pack(...)`", self.describe(t)),
            ));
        }
        if let Some(p) = set {
            self.st.pack = p;
        }
        Ok(())
    }

    /// A `#pragma pack` value: 1, 2, 4, 8 or 16.
    fn pack_value(&mut self) -> PResult<usize> {
        let t = self.peek();
        let v = self.const_expr()?;
        match usize::try_from(v) {
            Ok(n) if n.is_power_of_two() && n <= 16 => Ok(n),
            _ => Err(self.err_at(
                self.span_from(t),
                format!("`#pragma pack` value {v} must be 1, 2, 4, 8 or 16"),
            )),
        }
    }
}
