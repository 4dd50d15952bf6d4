//! The text of `gatun call`'s arguments: brace literals (`{1.5, {2, 3}, "a, b"}`, parsed into
//! a [`Lit`] tree) and numbers (integers in decimal, `0x` hex or `0b` binary, signed;
//! floating point as Rust and `strtod` read it, `inf` and `nan` included).

use super::error::LiteralError;

/// The deepest nesting of braces a literal may have.
pub(super) const MAX_DEPTH: usize = 64;

/// A brace literal: `{1.5, {2, 3}, "a, b"}`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Lit {
    /// An unquoted word: a number, `NULL`, `true`, or text.
    Atom(String),
    /// A quoted string (`"a, b"`), without its quotes.
    Str(String),
    /// A braced list of elements.
    List(Vec<Lit>),
}

/// Parses `text` as one literal: a brace list, a quoted string or a word.
///
/// # Errors
/// Unbalanced braces, a missing `,`, an unterminated string, an empty element, braces nested
/// more than [`MAX_DEPTH`] levels, or text after the literal.
pub(super) fn parse_literal(text: &str) -> Result<Lit, LiteralError> {
    let chars: Vec<char> = text.chars().collect();
    let mut pos = 0;
    let lit = literal_at(&chars, &mut pos, 0)?;
    skip_ws(&chars, &mut pos);
    if pos != chars.len() {
        return Err(LiteralError::TrailingText {
            text: text.to_string(),
        });
    }
    Ok(lit)
}

/// Advances `*pos` past whitespace.
fn skip_ws(c: &[char], pos: &mut usize) {
    while *pos < c.len() && c[*pos].is_whitespace() {
        *pos += 1;
    }
}

/// The literal starting at `c[*pos]` (after whitespace), `depth` braces deep; `*pos` ends
/// just after it.
fn literal_at(c: &[char], pos: &mut usize, depth: usize) -> Result<Lit, LiteralError> {
    if depth > MAX_DEPTH {
        return Err(LiteralError::TooDeep);
    }
    skip_ws(c, pos);
    if c.get(*pos) == Some(&'{') {
        *pos += 1;
        let mut items = Vec::new();
        loop {
            skip_ws(c, pos);
            match c.get(*pos) {
                None => return Err(LiteralError::Unterminated),
                Some('}') => {
                    *pos += 1;
                    return Ok(Lit::List(items));
                }
                _ => {}
            }
            items.push(literal_at(c, pos, depth + 1)?);
            skip_ws(c, pos);
            match c.get(*pos) {
                Some(',') => *pos += 1,
                Some('}') => {}
                None => return Err(LiteralError::Unterminated),
                Some(&found) => return Err(LiteralError::ExpectedSeparator { found }),
            }
        }
    }
    if c.get(*pos) == Some(&'"') {
        *pos += 1;
        let start = *pos;
        while *pos < c.len() && c[*pos] != '"' {
            *pos += 1;
        }
        if *pos >= c.len() {
            return Err(LiteralError::UnterminatedString);
        }
        let s: String = c[start..*pos].iter().collect();
        *pos += 1;
        return Ok(Lit::Str(s));
    }
    let start = *pos;
    while *pos < c.len() && !matches!(c[*pos], ',' | '{' | '}') {
        *pos += 1;
    }
    let s: String = c[start..*pos].iter().collect();
    let s = s.trim().to_string();
    if s.is_empty() {
        return Err(LiteralError::EmptyElement);
    }
    Ok(Lit::Atom(s))
}

/// `text` (trimmed) as an integer: decimal, `0x`/`0X` hex or `0b` binary, with an optional
/// `-` or `+`; `None` for anything else or beyond `i128`.
pub(super) fn parse_int(text: &str) -> Option<i128> {
    let t = text.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else if let Some(b) = body.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse::<i128>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

/// `text` (trimmed) as a floating-point number, as [`str::parse::<f64>`] reads it (`1.5`,
/// `1e3`, `inf`, `-infinity`, `nan`; too large a magnitude is an infinity).
pub(super) fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim();
    // Rust accepts `inf`/`nan`/`infinity`; so does strtod.
    t.parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(
            parse_literal("{1.5, {2, 3}, \"a, b\"}").unwrap(),
            Lit::List(vec![
                Lit::Atom("1.5".into()),
                Lit::List(vec![Lit::Atom("2".into()), Lit::Atom("3".into())]),
                Lit::Str("a, b".into()),
            ])
        );
        assert!(parse_literal("{1, 2").is_err());
        assert!(parse_literal("{1 2 3} x").is_err());
        assert!(parse_literal(&"{".repeat(1000)).is_err());
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_int("-0x10"), Some(-16));
        assert_eq!(parse_int("12a"), None);
        assert_eq!(parse_float("1e3"), Some(1000.0));
    }
}
