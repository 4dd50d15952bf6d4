//! The recursive-descent parser for C declarations (C17 §6.7, the declaration subset, plus
//! the GNU extensions headers use: `__attribute__`, `__asm__`, `__extension__`, `#pragma pack`).
//! Section numbers are C17's, which are C11's too.
//!
//! This module holds the [`Parser`] type, its entry points ([`Parser::declarations`],
//! [`Parser::type_name_source`]), the token helpers, positioned errors, the nesting bound and the
//! skipping of bodies, initializers and balanced brackets. The grammar lives in the submodules:
//!
//! - `declarations`: external declarations, typedefs, function declarations and
//!   `_Static_assert` (§6.7, §6.7.8, §6.7.10, §6.9);
//! - `specifiers`: declaration specifiers and type names (§6.7.1-§6.7.4, §6.7.7);
//! - `attributes`: `__attribute__`, `__declspec`, `__asm__` labels and `_Alignas` (§6.7.5);
//! - `records`: struct and union specifiers, tags, record bodies and bitfields (§6.7.2.1,
//!   §6.7.2.3);
//! - `enums`: enum bodies and enumeration constants (§6.7.2.2);
//! - `declarators`: declarators, array sizes, parameter lists and function types (§6.7.6);
//! - `constant`: constant expressions (§6.6), as integer constant expressions and macro
//!   replacements use them; `const_value`: their typed values and C's arithmetic on them;
//! - `directives`: `#pragma pack` and GCC line markers (§6.10.6).
//!
//! Invariants: every recursive entry point (declarators, tag bodies, parameter lists, unary
//! constant expressions) goes through [`Parser::enter`], so nesting is bounded by
//! [`MAX_NESTING`] and no input can overflow the stack; all arithmetic on sizes and constants
//! is checked; token text is read with `str::get`, never by unchecked slicing.

mod attributes;
mod const_value;
mod constant;
mod declarations;
mod declarators;
mod directives;
mod enums;
mod records;
mod specifiers;

use std::sync::Arc;

use super::lexer::{tokenize, Kind, Token};
use super::{CdeclError, Declared, Span, State, Tag, Ty, MAX_NESTING};
use crate::layout::{BitField, MemoryLayout};

pub(super) use const_value::{CVal, IntTy, Val};
pub(super) use declarations::{function_decl, FnError};
pub(super) use specifiers::{scalar_ty, va_list};

/// A parser result: the value or a positioned error.
type PResult<T> = Result<T, CdeclError>;

/// One parse of one source over a [`State`].
pub(super) struct Parser<'s, 'st> {
    /// The source text.
    src: &'s str,
    /// The tokens being parsed (a preprocessor line's own tokens while one is parsed).
    toks: Vec<Token>,
    /// The index in `toks` of the next token.
    pos: usize,
    /// The declarations so far, which this parse adds to.
    st: &'st mut State,
    /// The nesting levels entered (see [`Parser::enter`]).
    depth: usize,
    /// What this parse declared, in order.
    declared: Vec<Declared>,
    /// The bitfields of the record `tag_spec` built last (for the specifiers using it).
    last_bits: Arc<[BitField]>,
    /// Each tag this parse met first as a reference (`struct tm` in `struct tm *p`), with
    /// the index of the token after it: a type name that is such a tag and nothing else
    /// names a type that is not declared at all (see [`Parser::type_name_source`]).
    implicit_tags: Vec<(String, usize)>,
    /// Whether the enum `tag_spec` saw last has no negative values.
    last_enum_unsigned: bool,
    /// The declarator being parsed declares a name (not a parameter or type name).
    named_context: bool,
    /// The tagged structs and unions whose bodies are being parsed, outermost first
    /// (`"struct node"`): a pointer to one of them is a pointer to its enclosing record.
    defining: Vec<String>,
    /// A token position from which [`Parser::skip_to_bracket`] found no closing `]` (it reached
    /// the end of the tokens), or `usize::MAX`. A skip that started earlier and reaches this
    /// position still open (depth at least 1) cannot close either, so it stops there at once:
    /// nested unterminated array sizes are each skipped once, not once per enclosing `[`.
    unclosed_from: usize,
}

impl<'s, 'st> Parser<'s, 'st> {
    /// A parser over `src`, declaring into `st`; the source is tokenized first.
    ///
    /// # Errors
    /// A positioned error if `src` has a character or literal the lexer rejects.
    pub(super) fn new(src: &'s str, st: &'st mut State) -> PResult<Self> {
        let toks = tokenize(src, 0, src.len())?;
        Ok(Parser {
            src,
            toks,
            pos: 0,
            st,
            depth: 0,
            declared: Vec::new(),
            last_bits: Arc::from(Vec::new()),
            implicit_tags: Vec::new(),
            last_enum_unsigned: false,
            named_context: false,
            defining: Vec::new(),
            unclosed_from: usize::MAX,
        })
    }

    // ---- token helpers ----

    /// The next token (not consumed).
    fn peek(&self) -> Token {
        self.peek_at(0)
    }

    /// The token `n` places ahead (the last token, the end of input, past the end).
    fn peek_at(&self, n: usize) -> Token {
        let i = self
            .pos
            .saturating_add(n)
            .min(self.toks.len().saturating_sub(1));
        self.toks.get(i).copied().unwrap_or(Token {
            kind: Kind::Eof,
            span: Span::new(self.src.len(), self.src.len()),
        })
    }

    /// Consumes and returns the next token (the end of input is never consumed).
    fn bump(&mut self) -> Token {
        #[cfg(test)]
        work::count();
        let t = self.peek();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    /// The source text of `t` (empty if its span is not in the source).
    fn text(&self, t: Token) -> &'s str {
        self.src.get(t.span.start..t.span.end).unwrap_or("")
    }

    /// Whether all tokens are consumed.
    fn at_eof(&self) -> bool {
        self.peek().kind == Kind::Eof
    }

    /// Whether the next token is punctuator `p`.
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek().kind, Kind::Punct(q) if q == p)
    }

    /// Whether `t` is an identifier among `words`.
    fn is_word(&self, t: Token, words: &[&str]) -> bool {
        t.kind == Kind::Ident && words.contains(&self.text(t))
    }

    /// Consumes the next token if it is punctuator `p`, returning whether it did.
    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// `t` as an error message names it (its text quoted and cut at 24 characters).
    fn describe(&self, t: Token) -> String {
        match t.kind {
            Kind::Eof => "end of input".into(),
            Kind::Directive => "a preprocessor line".into(),
            _ => {
                let text = self.text(t);
                if text.chars().count() > 24 {
                    let short: String = text.chars().take(24).collect();
                    format!("`{short}...`")
                } else {
                    format!("`{text}`")
                }
            }
        }
    }

    /// An error at `span`.
    fn err_at(&self, span: Span, message: impl Into<String>) -> CdeclError {
        CdeclError::new(self.src, span, message.into())
    }

    /// An error at token `t`.
    fn err(&self, t: Token, message: impl Into<String>) -> CdeclError {
        self.err_at(t.span, message)
    }

    /// Consumes punctuator `p`, or fails with "expected `p` {context}".
    fn expect_punct(&mut self, p: &str, context: &str) -> PResult<Token> {
        if self.is_punct(p) {
            return Ok(self.bump());
        }
        let t = self.peek();
        Err(self.err(
            t,
            format!("expected `{p}` {context}, found {}", self.describe(t)),
        ))
    }

    /// Enters one nesting level at `t`; more than [`MAX_NESTING`] levels is an error. Each
    /// successful call is paired with a [`Parser::leave`].
    fn enter(&mut self, t: Token) -> PResult<()> {
        #[cfg(test)]
        work::count();
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err(
                t,
                format!("declaration nested more than {MAX_NESTING} levels deep"),
            ));
        }
        Ok(())
    }

    /// Leaves a nesting level [`Parser::enter`] entered.
    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The span from token `start` to the end of the last consumed token.
    fn span_from(&self, start: Token) -> Span {
        let end = if self.pos > 0 {
            self.toks
                .get(self.pos - 1)
                .map_or(start.span.end, |t| t.span.end)
        } else {
            start.span.end
        };
        Span::new(start.span.start, end.max(start.span.end))
    }

    /// A layout error `e` positioned at `span`.
    fn layout_err(&self, span: Span, e: crate::Error) -> CdeclError {
        self.err_at(span, e.to_string())
    }

    // ---- top level ----

    /// Any number of declarations until the end of input.
    pub(super) fn declarations(mut self) -> PResult<Vec<Declared>> {
        while !self.at_eof() {
            self.external(false)?;
        }
        Ok(self.declared)
    }

    /// Declarations followed by one type name (see `Declarations::type_layout`).
    pub(super) fn type_name_source(mut self) -> PResult<MemoryLayout> {
        loop {
            if self.at_eof() {
                let t = self.peek();
                return Err(self.err(t, "expected a C type, found end of input"));
            }
            let start = self.peek();
            let start_pos = self.pos;
            if let Some(ty) = self.external(true)? {
                let span = self.span_from(start);
                if let Ty::Incomplete(name) = &ty {
                    // A tag this very type name introduced (`struct tm` with nothing declaring
                    // it before): not declared, rather than declared but never defined.
                    let introduced = self.implicit_tags.iter().any(|(tag, at)| {
                        *at > start_pos && name.split_whitespace().last() == Some(tag.as_str())
                    });
                    if introduced {
                        return Err(self.err_at(
                            span,
                            format!("`{name}` is not declared, so it has no layout"),
                        ));
                    }
                }
                return self.object_layout(ty, span);
            }
            if self.at_eof() {
                let span = self.span_from(start);
                return match self.declared.last() {
                    Some(Declared::Typedef(name)) => match self.st.typedefs.get(name).cloned() {
                        Some(ty) => self.object_layout(ty, span),
                        None => Err(self.err_at(span, "expected a C type")),
                    },
                    Some(Declared::Tag(tag)) => {
                        let t = tag.split_whitespace().last().unwrap_or("");
                        match self.st.tags.get(t).and_then(|t| t.layout.clone()) {
                            Some(l) => Ok(l),
                            None => Err(self.err_at(span, format!("`{tag}` is incomplete"))),
                        }
                    }
                    Some(Declared::Function(name)) | Some(Declared::Variable(name)) => Err(self
                        .err_at(
                            span,
                            format!("expected a C type, found a declaration of `{name}`"),
                        )),
                    None => Err(self.err_at(span, "expected a C type")),
                };
            }
        }
    }

    /// The layout of `ty` written at `span`: an error for `void`, incomplete, function and
    /// layout-less types.
    fn object_layout(&self, ty: Ty, span: Span) -> PResult<MemoryLayout> {
        match self.complete(ty) {
            Ty::Object(l) => Ok(l),
            Ty::Void => Err(self.err_at(span, "`void` has no layout")),
            Ty::Incomplete(n) => Err(self.err_at(
                span,
                format!("`{n}` is incomplete (declared but never defined), so it has no layout"),
            )),
            Ty::Func(_) => Err(self.err_at(
                span,
                "a function type has no layout (a pointer to it is `void *`)",
            )),
            Ty::NoLayout(n) => Err(self.layout_err(span, n.error())),
        }
    }

    /// Resolves an incomplete tag that has been defined since.
    fn complete(&self, ty: Ty) -> Ty {
        complete(self.st, ty)
    }

    // ---- skipping ----

    /// Skips a function body: tokens up to the `}` matching the already consumed `{` at
    /// `opener` (iteratively).
    fn skip_braces(&mut self, opener: Token) -> PResult<()> {
        let mut depth = 1usize;
        loop {
            let t = self.bump();
            match t.kind {
                Kind::Eof => {
                    return Err(self.err(
                        opener,
                        "unterminated function body: this `{` is never closed",
                    ))
                }
                Kind::Punct("{") => depth += 1,
                Kind::Punct("}") => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
    }

    /// Skips an initializer after its `=` (at `eq`): tokens up to the `,` or `;` outside
    /// brackets, parentheses and braces (iteratively).
    fn skip_initializer(&mut self, eq: Token) -> PResult<()> {
        let mut depth = 0usize;
        loop {
            let t = self.peek();
            match t.kind {
                Kind::Eof | Kind::Directive => {
                    return Err(self.err(eq, "unterminated initializer: no `;` after it"))
                }
                Kind::Punct("," | ";") if depth == 0 => return Ok(()),
                Kind::Punct("(" | "[" | "{") => depth += 1,
                Kind::Punct(")" | "]" | "}") => {
                    if depth == 0 {
                        return Err(self.err(
                            t,
                            format!("unbalanced {} in an initializer", self.describe(t)),
                        ));
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips tokens up to the `]` matching the already consumed `[` at `opener`, over nested
    /// brackets and parentheses (iteratively).
    fn skip_to_bracket(&mut self, opener: Token) -> PResult<()> {
        let start = self.pos;
        let mut depth = 1usize;
        loop {
            // At `unclosed_from` with depth >= 1: the tokens from there never bring the depth
            // below 1 again (a skip from there, starting at depth 1, met no closer), so this
            // `[` is never closed either.
            let unclosed = self.pos == self.unclosed_from;
            let t = if unclosed { self.peek() } else { self.bump() };
            match t.kind {
                // Unclosed from `start` too: remembered, so an enclosing skip stops there.
                _ if unclosed => {
                    self.unclosed_from = start;
                    return Err(
                        self.err(opener, "unterminated array size: this `[` is never closed")
                    );
                }
                Kind::Eof => {
                    self.unclosed_from = self.unclosed_from.min(start);
                    return Err(
                        self.err(opener, "unterminated array size: this `[` is never closed")
                    );
                }
                Kind::Punct("[" | "(") => depth += 1,
                Kind::Punct("]" | ")") => {
                    depth -= 1;
                    if depth == 0 {
                        return if matches!(t.kind, Kind::Punct("]")) {
                            Ok(())
                        } else {
                            Err(self.err(t, "unbalanced `)` in an array size"))
                        };
                    }
                }
                _ => {}
            }
        }
    }

    /// Skips tokens up to the `)` matching an already consumed `(` (iteratively).
    fn skip_balanced(&mut self, opener: Token) -> PResult<()> {
        let mut depth = 1usize;
        loop {
            let t = self.bump();
            match t.kind {
                Kind::Eof => {
                    return Err(self.err(
                        opener,
                        format!("unterminated `{}(`: `(` is never closed", self.text(opener)),
                    ))
                }
                Kind::Punct("(") => depth += 1,
                Kind::Punct(")") => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
    }
}

/// Resolves an incomplete tag that has been defined since.
pub(super) fn complete(st: &State, ty: Ty) -> Ty {
    if let Ty::Incomplete(n) = &ty {
        let tag = n.split_whitespace().last().unwrap_or("");
        match st.tags.get(tag) {
            Some(Tag {
                layout: Some(l), ..
            }) => return Ty::Object(l.clone()),
            Some(Tag {
                no_layout: Some(nl),
                ..
            }) => return Ty::NoLayout(nl.clone()),
            _ => {}
        }
    }
    ty
}

/// A count of the parser's steps on this thread (tokens consumed plus nesting levels
/// entered), so tests can check that the work grows with the input's size.
#[cfg(test)]
pub(super) mod work {
    use std::cell::Cell;

    thread_local! {
        static STEPS: Cell<u64> = const { Cell::new(0) };
    }

    /// Counts one step.
    pub(super) fn count() {
        STEPS.with(|s| s.set(s.get() + 1));
    }

    /// The steps `f` took on this thread.
    pub(in crate::cdecl) fn steps<R>(f: impl FnOnce() -> R) -> (R, u64) {
        let before = STEPS.with(Cell::get);
        let r = f();
        (r, STEPS.with(Cell::get) - before)
    }
}
