//! The macros headers define, as [`Declarations::from_headers`](super::Declarations) collects
//! them: the preprocessor runs with `-dD`, which keeps every `#define` and `#undef` (the
//! predefined macros first) in its output; those lines are taken out of the declaration text
//! (replaced by empty lines, so positions stay those of the preprocessed text) and the
//! definitions in force at the end make a macro table.
//!
//! Each object-like macro is expanded as the preprocessor would expand its name after the
//! headers (`expand`: function-like macros invoked in it, `#`, `##`, hide sets) and the
//! result is evaluated as a constant expression against the declarations (enumeration
//! constants, types for casts and `sizeof`): a [`MacroKind::Constant`] with its C type's kind,
//! or [`MacroKind::NotConstant`] saying why not. Function-like macros are listed as
//! [`MacroKind::FunctionLike`], never invoked on their own.

mod expand;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use super::{Constant, State};
use expand::{Def, Table};

/// A macro the preprocessed headers define, with what gatun made of it.
///
/// `Send + Sync`, cheap to clone.
///
/// ```no_run
/// use gatun::cdecl::{Declarations, HeaderOptions, MacroKind};
///
/// let decls = Declarations::from_headers(["fcntl.h"], &HeaderOptions::default()).unwrap();
/// let m = decls.macro_definition("O_RDONLY").unwrap();
/// assert!(matches!(m.kind(), MacroKind::Constant(c) if c.as_i64() == Some(0)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Macro {
    /// The parameter list (function-like macros) and replacement list, as the preprocessor
    /// printed them.
    replacement: String,
    kind: MacroKind,
}

impl Macro {
    /// The replacement list as written (`00` for glibc's `O_RDONLY`, `(SQLITE_IOERR |
    /// (1<<8))`), after the parameter list for a function-like macro (`(n) ((n) & 0x1F)`).
    ///
    /// ```no_run
    /// use gatun::cdecl::{Declarations, HeaderOptions};
    /// let d = Declarations::from_headers(["sqlite3.h"], &HeaderOptions::default()).unwrap();
    /// let m = d.macro_definition("SQLITE_IOERR_READ").unwrap();
    /// assert_eq!(m.replacement(), "(SQLITE_IOERR | (1<<8))");
    /// ```
    pub fn replacement(&self) -> &str {
        &self.replacement
    }

    /// What the macro is: a constant, function-like, or not a constant (and why).
    ///
    /// ```no_run
    /// use gatun::cdecl::{Declarations, HeaderOptions, MacroKind};
    /// let d = Declarations::from_headers(["errno.h"], &HeaderOptions::default()).unwrap();
    /// // glibc: `#define errno (*__errno_location ())`.
    /// let errno = d.macro_definition("errno").unwrap();
    /// assert!(matches!(errno.kind(), MacroKind::NotConstant { .. }));
    /// ```
    pub fn kind(&self) -> &MacroKind {
        &self.kind
    }

    /// The macro's value, when it is a [`MacroKind::Constant`].
    ///
    /// ```no_run
    /// use gatun::cdecl::{Constant, Declarations, HeaderOptions};
    /// let d = Declarations::from_headers(["errno.h"], &HeaderOptions::default()).unwrap();
    /// let einval = d.macro_definition("EINVAL").unwrap();
    /// assert_eq!(einval.constant(), Some(&Constant::I32(22)));
    /// ```
    pub fn constant(&self) -> Option<&Constant> {
        match &self.kind {
            MacroKind::Constant(c) => Some(c),
            _ => None,
        }
    }
}

/// What a macro is, as [`Macro::kind`] says.
///
/// `Send + Sync`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MacroKind {
    /// An object-like macro whose expansion is a constant expression (an integer, floating,
    /// address or string constant), with its value.
    Constant(Constant),
    /// A function-like macro (`#define JSON_INDENT(n) ...`): it needs arguments, so it has no
    /// value of its own. Its parameters as written, `...` as `__VA_ARGS__`.
    FunctionLike {
        /// The parameter names.
        params: Vec<String>,
    },
    /// An object-like macro whose expansion is not a constant expression gatun can evaluate
    /// (a type name, a function call, an empty replacement, a `long double` constant, a
    /// reference to a variable...), and the reason.
    NotConstant {
        /// Why the expansion has no value: the evaluator's message (`` `__h_errno_location`
        /// is not a constant (it is a function) ``).
        reason: String,
    },
}

/// The preprocessor output `text` (from `-dD`) split into the declaration text (directive
/// lines blanked) and the macro definitions in force at its end, by name: the text after the
/// name (the parameter list, then a space and the replacement list).
pub(super) fn split_definitions(text: &str) -> (String, HashMap<&str, &str>) {
    let mut decls = String::with_capacity(text.len());
    let mut defs: HashMap<&str, &str> = HashMap::new();
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some(rest) = content.strip_prefix("#define ") {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(rest.len());
            if end > 0 {
                defs.insert(&rest[..end], &rest[end..]);
                decls.push('\n');
                continue;
            }
        } else if let Some(rest) = content.strip_prefix("#undef ") {
            defs.remove(rest.trim());
            decls.push('\n');
            continue;
        }
        decls.push_str(line);
    }
    (decls, defs)
}

/// Parses the text after a macro's name ([`split_definitions`]): the parameters of a
/// function-like macro and whether it is variadic, and the replacement list.
///
/// # Errors
/// A malformed parameter list (the preprocessor accepted it, so this is not expected).
fn definition(after_name: &str) -> Result<(Option<Vec<&str>>, bool, &str), String> {
    let Some(list) = after_name.strip_prefix('(') else {
        return Ok((None, false, after_name.trim()));
    };
    let close = list
        .find(')')
        .ok_or_else(|| "unterminated macro parameter list".to_string())?;
    let mut params = Vec::new();
    let mut variadic = false;
    for p in list[..close].split(',').map(str::trim) {
        if p.is_empty() {
            continue;
        }
        if variadic {
            return Err("`...` must be the last macro parameter".into());
        }
        if p == "..." {
            params.push("__VA_ARGS__");
            variadic = true;
        } else if let Some(named) = p.strip_suffix("...") {
            params.push(named.trim());
            variadic = true;
        } else {
            params.push(p);
        }
    }
    Ok((Some(params), variadic, list[close + 1..].trim()))
}

/// What each macro of `defs` is, evaluated against `state` (the declarations parsed from the
/// same preprocessor output).
///
/// Evaluation leaves `state` as it was (see [`value`]). The macros are expanded in name
/// order; once all expansions together have used the table's work budget (linear in the size
/// of `defs`, far above what real headers need) the remaining ones are not constants, with
/// that reason.
pub(super) fn evaluate(state: &mut State, defs: &HashMap<&str, &str>) -> Vec<(String, Macro)> {
    let mut out = Vec::with_capacity(defs.len());
    let mut table_defs = Vec::with_capacity(defs.len());
    // In name order, so that which macros a spent work budget leaves unevaluated does not
    // depend on hashing.
    let mut sorted: Vec<(&str, &str)> = defs.iter().map(|(&n, &a)| (n, a)).collect();
    sorted.sort_unstable();
    for (name, after) in sorted {
        match definition(after) {
            Ok((params, variadic, body)) => {
                table_defs.push((name, Def::new(params, variadic, body)));
            }
            Err(reason) => out.push((
                name.to_string(),
                Macro {
                    replacement: after.trim().to_string(),
                    kind: MacroKind::NotConstant { reason },
                },
            )),
        }
    }
    let table = Table::new(table_defs);
    for (name, def) in table.defs() {
        let replacement = defs.get(name).map_or("", |a| a.trim()).to_string();
        let kind = match &def.params {
            Some(params) => MacroKind::FunctionLike {
                params: params.iter().map(|p| p.to_string()).collect(),
            },
            None => match value(&table, name, state) {
                Ok(c) => MacroKind::Constant(c),
                Err(reason) => MacroKind::NotConstant { reason },
            },
        };
        out.push((name.to_string(), Macro { replacement, kind }));
    }
    out
}

/// The value object-like macro `name` of `table` expands to, evaluated against `state`.
///
/// Without braces (refused before evaluation) the only change a constant expression's type
/// names can make to the declarations is declaring a new, incomplete tag (`(struct foo *)0`);
/// the tags the expansion names that were not declared before are removed after it, so
/// `state` is left as it was.
fn value(table: &Table<'_>, name: &str, state: &mut State) -> Result<Constant, String> {
    let text = table.expand_object(name)?;
    if text.is_empty() {
        return Err("it expands to nothing".into());
    }
    let mut words = text.split(' ');
    if text.split(' ').any(|w| w == "{") {
        return Err("a braced initializer or statement is not a constant expression".into());
    }
    let mut new_tags = Vec::new();
    while let Some(w) = words.next() {
        if matches!(w, "struct" | "union" | "enum") {
            if let Some(tag) = words.next() {
                if !state.tags.contains_key(tag) {
                    new_tags.push(tag);
                }
            }
        }
    }
    let v = super::parser::Parser::new(&text, state).and_then(|p| p.whole_expression());
    for tag in new_tags {
        state.tags.remove(tag);
    }
    v.map_err(|e| e.message().to_string())?.to_constant()
}
