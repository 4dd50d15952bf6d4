//! The declaration of `gatun call`: a prototype (struct definitions may precede it; a
//! trailing `;` is optional), or with `-i HEADER` just the name of a function the headers
//! declare ([`parse_prototype`]).

use gatun::cdecl::{Declarations, Declared, FunctionDecl};

use super::error::CallError;
use crate::headers::{header_declarations, HeaderArgs};

/// A C identifier: the declaration is then a function name looked up in the headers.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Parses `decl` as `gatun call` does: any number of declarations (a trailing `;` is
/// optional) declaring exactly one function, or with headers (`headers`, preprocessed by the
/// system C compiler) just the name of a function they declare. Returns the declarations and
/// the function's declaration.
///
/// ```
/// use gatun_cli::call::parse_prototype;
/// use gatun_cli::headers::HeaderArgs;
/// let (_, f) = parse_prototype("size_t strlen(const char *s)", &HeaderArgs::default()).unwrap();
/// assert_eq!((f.name.as_str(), f.param_is_c_string(0)), ("strlen", true));
/// ```
///
/// # Errors
/// A header that does not preprocess or parse ([`CallError::Headers`]), the parse error of
/// `decl` (positioned as typed, [`CallError::Declaration`]), a bare name without headers
/// ([`CallError::OnlyAName`]), that they define only `static inline`
/// ([`CallError::InlineOnly`]) or do not declare ([`CallError::NotDeclared`]),
/// [`CallError::NoFunction`], [`CallError::SeveralFunctions`], or a function whose type
/// gatun cannot pass.
pub fn parse_prototype(
    decl: &str,
    headers: &HeaderArgs,
) -> Result<(Declarations, FunctionDecl), CallError> {
    let mut decls = header_declarations(headers)?;
    let typed = decl.trim_end();
    let name = typed.trim();
    // With headers, the declaration may be just the name of a function they declare.
    let bare_name = headers.is_active() && is_identifier(name);
    let mut src = typed.to_string();
    if !src.ends_with(';') {
        src.push(';');
    }
    if !headers.is_active() && is_identifier(name) && decls.function(name).is_none() {
        return Err(CallError::OnlyAName {
            name: name.to_string(),
        });
    }
    let declared = if bare_name {
        if decls.function(name).is_none() {
            if decls.is_inline_only(name) {
                return Err(CallError::InlineOnly {
                    name: name.to_string(),
                    headers: headers.names(),
                });
            }
            // The header's reason (a type gatun cannot pass), or "not declared".
            return Err(match decls.try_function(name).err() {
                Some(error) => CallError::NotCallableInHeaders {
                    error,
                    headers: headers.names(),
                },
                None => CallError::NotDeclared {
                    name: name.to_string(),
                },
            });
        }
        Ok(vec![Declared::Function(name.to_string())])
    } else {
        decls.add(&src)
    };
    let declared = match declared {
        Ok(d) => d,
        // The error is at the `;` appended above, which the user never typed: report it
        // against what they typed ("found end of input" right after it).
        Err(e) if src.len() > typed.len() && e.span().start >= typed.len() => {
            return Err(CallError::Declaration(
                header_declarations(headers)?.add(typed).err().unwrap_or(e),
            ));
        }
        Err(e) => return Err(CallError::Declaration(e)),
    };
    let functions: Vec<&str> = declared
        .iter()
        .filter_map(|d| match d {
            Declared::Function(n) => Some(n.as_str()),
            _ => None,
        })
        .collect();
    let name = match functions.as_slice() {
        [] => {
            return Err(CallError::NoFunction {
                decl: decl.to_string(),
            })
        }
        [one] => one.to_string(),
        many => {
            return Err(CallError::SeveralFunctions {
                decl: decl.to_string(),
                functions: many.iter().map(|n| n.to_string()).collect(),
            })
        }
    };
    let f = decls.try_function(&name)?.clone();
    Ok((decls, f))
}
