//! Macro expansion (C17 §6.10.3), for evaluating what an object-like macro stands for: the
//! preprocessing tokens of a replacement list, object-like and function-like macros with
//! argument pre-expansion, `#` (stringizing), `##` (pasting, with placemarkers), `__VA_ARGS__`,
//! GNU `, ## __VA_ARGS__`, `__VA_OPT__`, and rescanning. Recursion is prevented with hide
//! sets (Prosser's algorithm, the one the standard's rules describe): a token produced by
//! expanding a macro carries the names being expanded and never expands them again, which
//! makes self-reference (`#define FOO FOO`) and mutual recursion end.
//!
//! Work is bounded: each expansion has a budget of [`MAX_STEPS`] steps (a token examined or
//! copied is a step) and [`MAX_TOKENS`] tokens in flight, argument pre-expansion nests at most
//! [`MAX_NESTING`](crate::cdecl::MAX_NESTING) deep, and all the expansions of one table share
//! a budget proportional to the size of its definitions ([`Table::new`]); past them the macro
//! is reported as not a constant, never expanded further. So the work is linear in the size
//! of the preprocessor's output.

use std::cell::{Cell, OnceCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use crate::cdecl::MAX_NESTING;

/// The most steps (tokens examined) one macro's expansion may take.
pub(super) const MAX_STEPS: usize = 1 << 16;
/// The most tokens an expansion may hold at once.
pub(super) const MAX_TOKENS: usize = 1 << 12;

/// The names (indices in the [`Table`]) a token may no longer be expanded by.
type HideSet = Rc<[u32]>;

/// What a preprocessing token is (C17 §6.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PpKind {
    Ident,
    Number,
    /// A character constant or string literal, prefix included.
    Literal,
    Punct,
    /// A character that is no other token (`@`, `\`).
    Other,
    /// The result of pasting with an empty argument (C17 §6.10.3.3 ¶2); removed at the end of
    /// a substitution.
    Placemarker,
}

/// A preprocessing token.
#[derive(Debug, Clone)]
struct PpTok {
    text: Rc<str>,
    kind: PpKind,
    /// Whether white space preceded it (for `#`).
    space: bool,
    hide: HideSet,
}

impl PpTok {
    fn is_punct(&self, p: &str) -> bool {
        self.kind == PpKind::Punct && &*self.text == p
    }
}

/// A token of a replacement list, with the parameter it names.
#[derive(Debug, Clone)]
struct BodyTok {
    tok: PpTok,
    param: Option<usize>,
}

/// C's punctuators, longest first within each leading character's group.
const PUNCTS: &[&str] = &[
    "...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=",
    "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "[", "]", "(", ")", "{", "}", ".", "&", "*",
    "+", "-", "~", "!", "/", "%", "<", ">", "^", "|", "?", ":", ";", "=", ",", "#",
];

/// The preprocessing tokens of `text` (a replacement list, or two tokens pasted together).
///
/// # Errors
/// An unterminated character constant or string literal.
fn pp_lex(text: &str, empty: &HideSet) -> Result<Vec<PpTok>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut space = false;
    let ident_byte = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        let start = i;
        let number =
            c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit));
        let kind = if number {
            i += 1;
            while i < b.len() {
                let d = b[i];
                let exponent_sign =
                    matches!(d, b'+' | b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if !(exponent_sign || ident_byte(d) || d == b'.') {
                    break;
                }
                i += 1;
            }
            PpKind::Number
        } else if ident_byte(c) {
            while i < b.len() && ident_byte(b[i]) {
                i += 1;
            }
            if matches!(&text[start..i], "L" | "u" | "U" | "u8")
                && matches!(b.get(i), Some(b'\'' | b'"'))
            {
                i = literal_end(text, i)?;
                PpKind::Literal
            } else {
                PpKind::Ident
            }
        } else if c == b'\'' || c == b'"' {
            i = literal_end(text, i)?;
            PpKind::Literal
        } else if let Some(p) = PUNCTS.iter().find(|p| b[i..].starts_with(p.as_bytes())) {
            i += p.len();
            PpKind::Punct
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            PpKind::Other
        };
        out.push(PpTok {
            text: Rc::from(&text[start..i]),
            kind,
            space,
            hide: empty.clone(),
        });
        space = false;
    }
    Ok(out)
}

/// The end (just past the closing quote) of the literal whose opening quote is at `i`.
fn literal_end(text: &str, i: usize) -> Result<usize, String> {
    let b = text.as_bytes();
    let quote = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            q if q == quote => return Ok(j + 1),
            _ => j += 1,
        }
    }
    Err(format!("unterminated literal in `{text}`"))
}

/// One macro definition.
#[derive(Debug)]
pub(super) struct Def<'a> {
    /// The parameters of a function-like macro (`__VA_ARGS__` for `...`); `None` for an
    /// object-like one.
    pub(super) params: Option<Vec<&'a str>>,
    /// Whether the last parameter takes the variable arguments (`...` or GNU `name...`).
    pub(super) variadic: bool,
    /// The replacement list as written.
    pub(super) body: &'a str,
    /// The replacement list's tokens, made on first use.
    tokens: OnceCell<Result<Rc<[BodyTok]>, String>>,
}

impl<'a> Def<'a> {
    /// A definition (see the fields).
    pub(super) fn new(params: Option<Vec<&'a str>>, variadic: bool, body: &'a str) -> Def<'a> {
        Def {
            params,
            variadic,
            body,
            tokens: OnceCell::new(),
        }
    }
}

/// How many steps all the expansions of a table may take, per byte of its definitions (on top
/// of one expansion's [`MAX_STEPS`]).
pub(super) const STEPS_PER_BYTE: usize = 64;

/// The macros in force, by name.
pub(super) struct Table<'a> {
    index: HashMap<&'a str, u32>,
    defs: Vec<(&'a str, Def<'a>)>,
    empty: HideSet,
    /// The steps all expansions may still take.
    budget: Cell<usize>,
}

impl<'a> Table<'a> {
    /// A table of `defs` (names unique). Its expansions together may take [`MAX_STEPS`] plus
    /// [`STEPS_PER_BYTE`] steps per byte of the names and replacement lists.
    pub(super) fn new(defs: Vec<(&'a str, Def<'a>)>) -> Table<'a> {
        let index = defs
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (*name, i as u32))
            .collect();
        let bytes: usize = defs.iter().map(|(n, d)| n.len() + d.body.len() + 1).sum();
        Table {
            index,
            defs,
            empty: Rc::from(Vec::new()),
            budget: Cell::new(MAX_STEPS.saturating_add(bytes.saturating_mul(STEPS_PER_BYTE))),
        }
    }

    /// The definitions, in the order given.
    pub(super) fn defs(&self) -> impl Iterator<Item = &(&'a str, Def<'a>)> {
        self.defs.iter()
    }

    /// The tokens of definition `id`'s replacement list, parameters marked.
    fn body(&self, id: u32) -> Result<Rc<[BodyTok]>, String> {
        let (_, def) = &self.defs[id as usize];
        def.tokens
            .get_or_init(|| {
                let toks = pp_lex(def.body, &self.empty)?;
                Ok(toks
                    .into_iter()
                    .map(|tok| {
                        let param = match (&def.params, tok.kind) {
                            (Some(ps), PpKind::Ident) => ps.iter().position(|p| **p == *tok.text),
                            _ => None,
                        };
                        BodyTok { tok, param }
                    })
                    .collect())
            })
            .clone()
    }

    /// The text object-like macro `name` expands to (its tokens separated by spaces), or why
    /// it cannot be expanded.
    pub(super) fn expand_object(&self, name: &str) -> Result<String, String> {
        let Some(&id) = self.index.get(name) else {
            return Err(format!("`{name}` is not defined"));
        };
        let body = self.body(id)?;
        // Most replacement lists (`0x0002`, `(-1)`, `"2.14"`) name no macro and paste nothing:
        // they are their own expansion.
        let toks: Vec<PpTok> = if self.defs[id as usize].1.params.is_none()
            && body
                .iter()
                .all(|b| b.tok.kind != PpKind::Ident && !b.tok.is_punct("##"))
        {
            body.iter().map(|b| b.tok.clone()).collect()
        } else {
            let mut ex = Expander {
                table: self,
                steps: 0,
            };
            let start = PpTok {
                text: Rc::from(name),
                kind: PpKind::Ident,
                space: false,
                hide: self.empty.clone(),
            };
            ex.expand(vec![start], 0)?
        };
        let mut text = String::new();
        for (i, t) in toks.iter().enumerate() {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(&t.text);
        }
        Ok(text)
    }
}

/// One expansion in progress: the table and the steps taken.
struct Expander<'t, 'a> {
    table: &'t Table<'a>,
    steps: usize,
}

impl Expander<'_, '_> {
    /// Counts a step; an error past [`MAX_STEPS`] or the table's budget.
    fn step(&mut self) -> Result<(), String> {
        self.charge(1)
    }

    /// Counts `n` steps (tokens copied); an error past [`MAX_STEPS`] or the table's budget.
    fn charge(&mut self, n: usize) -> Result<(), String> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > MAX_STEPS {
            return Err(format!("the expansion takes more than {MAX_STEPS} steps"));
        }
        let left = self.table.budget.get();
        if left < n {
            return Err("the expansions of these headers' macros exceed their work budget".into());
        }
        self.table.budget.set(left - n);
        Ok(())
    }

    /// `input` fully macro-expanded (with what follows it: nothing), argument expansions
    /// `depth` deep.
    fn expand(&mut self, input: Vec<PpTok>, depth: usize) -> Result<Vec<PpTok>, String> {
        if depth > MAX_NESTING {
            return Err(format!(
                "macro arguments nested more than {MAX_NESTING} levels deep"
            ));
        }
        let mut input: VecDeque<PpTok> = input.into();
        let mut out: Vec<PpTok> = Vec::new();
        while let Some(t) = input.pop_front() {
            self.step()?;
            if t.kind != PpKind::Ident {
                out.push(t);
                continue;
            }
            let Some(&id) = self.table.index.get(&*t.text) else {
                out.push(t);
                continue;
            };
            if t.hide.contains(&id) {
                out.push(t);
                continue;
            }
            let (name, def) = &self.table.defs[id as usize];
            let body = self.table.body(id)?;
            let replacement = match &def.params {
                None => self.substitute(def, &body, &[], &hide_add(&t.hide, id), depth)?,
                Some(params) => {
                    if !input.front().is_some_and(|p| p.is_punct("(")) {
                        out.push(t);
                        continue;
                    }
                    let (args, close) = collect_args(&mut input, name, params.len(), def.variadic)?;
                    let hide = hide_add(&hide_meet(&t.hide, &close), id);
                    self.substitute(def, &body, &args, &hide, depth)?
                }
            };
            for tok in replacement.into_iter().rev() {
                input.push_front(tok);
            }
            if input.len() + out.len() > MAX_TOKENS {
                return Err(format!("the expansion is longer than {MAX_TOKENS} tokens"));
            }
        }
        Ok(out)
    }

    /// The replacement list `body` of `def` with the arguments `args` substituted (C17
    /// §6.10.3.1-§6.10.3.3), every token's hide set extended by `hide`.
    fn substitute(
        &mut self,
        def: &Def<'_>,
        body: &[BodyTok],
        args: &[Vec<PpTok>],
        hide: &HideSet,
        depth: usize,
    ) -> Result<Vec<PpTok>, String> {
        let mut expanded: Vec<Option<Vec<PpTok>>> = vec![None; args.len()];
        let mut out = Vec::new();
        self.substitute_into(def, body, args, &mut expanded, depth, &mut out)?;
        out.retain(|t| t.kind != PpKind::Placemarker);
        // Runs of tokens share a hide set (a body's tokens, an argument's): one union each.
        let mut last: Option<(HideSet, HideSet)> = None;
        for t in &mut out {
            let union = match &last {
                Some((from, to)) if Rc::ptr_eq(from, &t.hide) => to.clone(),
                _ => {
                    let to = hide_union(&t.hide, hide);
                    last = Some((t.hide.clone(), to.clone()));
                    to
                }
            };
            t.hide = union;
        }
        Ok(out)
    }

    /// [`Expander::substitute`]'s work, appending to `out` (and called again for the
    /// contents of `__VA_OPT__`).
    fn substitute_into(
        &mut self,
        def: &Def<'_>,
        body: &[BodyTok],
        args: &[Vec<PpTok>],
        expanded: &mut [Option<Vec<PpTok>>],
        depth: usize,
        out: &mut Vec<PpTok>,
    ) -> Result<(), String> {
        let function_like = def.params.is_some();
        let va = if def.variadic {
            args.len().checked_sub(1)
        } else {
            None
        };
        let mut i = 0;
        while i < body.len() {
            self.step()?;
            let b = &body[i];
            if function_like && b.tok.is_punct("#") {
                let Some(p) = body.get(i + 1).and_then(|n| n.param) else {
                    return Err("`#` is not followed by a macro parameter".into());
                };
                out.push(stringize(&args[p], &b.tok.hide));
                i += 2;
                continue;
            }
            if b.tok.is_punct("##") && i > 0 && i + 1 < body.len() {
                let rhs = &body[i + 1];
                let rhs_toks: Vec<PpTok> = match rhs.param {
                    Some(p) => args[p].clone(),
                    None => vec![rhs.tok.clone()],
                };
                if rhs.param.is_some()
                    && rhs.param == va
                    && out.last().is_some_and(|t| t.is_punct(","))
                {
                    // GNU `, ## __VA_ARGS__`: the comma goes when there are no variable
                    // arguments and stays, unpasted, when there are.
                    if rhs_toks.is_empty() {
                        out.pop();
                    } else {
                        self.charge(rhs_toks.len())?;
                        out.extend(rhs_toks);
                    }
                    i += 2;
                    continue;
                }
                let lhs = out.pop().unwrap_or_else(|| placemarker(&b.tok.hide));
                let mut rest = rhs_toks.into_iter();
                let first = rest.next().unwrap_or_else(|| placemarker(&b.tok.hide));
                out.push(glue(lhs, first, &self.table.empty)?);
                self.charge(rest.len())?;
                out.extend(rest);
                i += 2;
                continue;
            }
            if let Some(p) = b.param {
                if body.get(i + 1).is_some_and(|n| n.tok.is_punct("##")) {
                    if args[p].is_empty() {
                        out.push(placemarker(&b.tok.hide));
                    } else {
                        self.charge(args[p].len())?;
                        out.extend(args[p].iter().cloned());
                    }
                } else {
                    if expanded[p].is_none() {
                        expanded[p] = Some(self.expand(args[p].clone(), depth + 1)?);
                    }
                    let e = expanded[p].as_deref().unwrap_or_default();
                    self.charge(e.len())?;
                    out.extend(e.iter().cloned());
                }
                i += 1;
                continue;
            }
            if def.variadic && &*b.tok.text == "__VA_OPT__" && b.tok.kind == PpKind::Ident {
                let end = va_opt_end(body, i)?;
                let present = va.is_some_and(|v| !args[v].is_empty());
                if present {
                    self.substitute_into(def, &body[i + 2..end], args, expanded, depth, out)?;
                }
                i = end + 1;
                continue;
            }
            out.push(b.tok.clone());
            i += 1;
        }
        Ok(())
    }
}

/// The index of the `)` closing `__VA_OPT__(` whose keyword is at `body[i]`.
fn va_opt_end(body: &[BodyTok], i: usize) -> Result<usize, String> {
    if !body.get(i + 1).is_some_and(|t| t.tok.is_punct("(")) {
        return Err("`__VA_OPT__` must be followed by `(`".into());
    }
    let mut depth = 0usize;
    for (j, t) in body.iter().enumerate().skip(i + 1) {
        if t.tok.is_punct("(") {
            depth += 1;
        } else if t.tok.is_punct(")") {
            depth -= 1;
            if depth == 0 {
                return Ok(j);
            }
        }
    }
    Err("unterminated `__VA_OPT__(`".into())
}

/// The arguments of an invocation of `name` (`params` parameters, the last taking the rest if
/// `variadic`), read from `input` starting at its `(`, and the closing `)`'s hide set.
fn collect_args(
    input: &mut VecDeque<PpTok>,
    name: &str,
    params: usize,
    variadic: bool,
) -> Result<(Vec<Vec<PpTok>>, HideSet), String> {
    input.pop_front(); // `(`
    let mut args: Vec<Vec<PpTok>> = Vec::new();
    let mut current = Vec::new();
    let mut depth = 1usize;
    let close = loop {
        let Some(t) = input.pop_front() else {
            return Err(format!(
                "unterminated argument list invoking macro `{name}`"
            ));
        };
        if t.is_punct("(") {
            depth += 1;
        } else if t.is_punct(")") {
            depth -= 1;
            if depth == 0 {
                args.push(std::mem::take(&mut current));
                break t.hide;
            }
        } else if t.is_punct(",") && depth == 1 && !(variadic && args.len() + 1 >= params) {
            args.push(std::mem::take(&mut current));
            continue;
        }
        current.push(t);
    };
    if params == 0 && args.len() == 1 && args[0].is_empty() {
        args.clear();
    }
    if variadic && args.len() + 1 == params {
        args.push(Vec::new());
    }
    if args.len() != params {
        return Err(format!(
            "macro `{name}` takes {params} argument{}, {} given",
            if params == 1 { "" } else { "s" },
            args.len()
        ));
    }
    Ok((args, close))
}

/// `#arg`: the argument's spelling as a string literal (C17 §6.10.3.2 ¶2).
fn stringize(arg: &[PpTok], hide: &HideSet) -> PpTok {
    let mut s = String::from("\"");
    for (k, t) in arg.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        if t.kind == PpKind::Literal {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    PpTok {
        text: Rc::from(s),
        kind: PpKind::Literal,
        space: true,
        hide: hide.clone(),
    }
}

/// A placemarker token.
fn placemarker(hide: &HideSet) -> PpTok {
    PpTok {
        text: Rc::from(""),
        kind: PpKind::Placemarker,
        space: false,
        hide: hide.clone(),
    }
}

/// `a ## b`: one token whose spelling is the two spellings joined (C17 §6.10.3.3 ¶3).
fn glue(a: PpTok, b: PpTok, empty: &HideSet) -> Result<PpTok, String> {
    if a.kind == PpKind::Placemarker {
        return Ok(b);
    }
    if b.kind == PpKind::Placemarker {
        return Ok(a);
    }
    let text = format!("{}{}", a.text, b.text);
    let mut toks = pp_lex(&text, empty)?;
    if toks.len() != 1 {
        return Err(format!(
            "pasting `{}` and `{}` does not give a valid preprocessing token",
            a.text, b.text
        ));
    }
    let mut t = toks.remove(0);
    t.space = a.space;
    t.hide = hide_meet(&a.hide, &b.hide);
    Ok(t)
}

/// `h` with `id` added.
fn hide_add(h: &HideSet, id: u32) -> HideSet {
    if h.contains(&id) {
        return h.clone();
    }
    let mut v = h.to_vec();
    let at = v.partition_point(|&x| x < id);
    v.insert(at, id);
    v.into()
}

/// The names in both `a` and `b`.
fn hide_meet(a: &HideSet, b: &HideSet) -> HideSet {
    if Rc::ptr_eq(a, b) {
        return a.clone();
    }
    a.iter()
        .copied()
        .filter(|x| b.contains(x))
        .collect::<Vec<_>>()
        .into()
}

/// The names in `a` or `b`.
fn hide_union(a: &HideSet, b: &HideSet) -> HideSet {
    if b.is_empty() || Rc::ptr_eq(a, b) {
        return a.clone();
    }
    if a.is_empty() {
        return b.clone();
    }
    let mut v: Vec<u32> = a.iter().chain(b.iter()).copied().collect();
    v.sort_unstable();
    v.dedup();
    v.into()
}
