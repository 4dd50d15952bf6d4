//! The C declaration lexer: turns source text into [`Token`]s with byte spans.
//!
//! Handles identifiers, integer and character constants (values computed with overflow
//! checks), string literals (kept only as spans, for `__asm__("name")` and attribute
//! arguments), punctuators, `//` and `/* */` comments, and preprocessor lines (one
//! [`Kind::Directive`] token per line, continued by a trailing backslash). Floating constants
//! are recognised so that the parser can reject them with a precise message.
//!
//! The lexer never panics: every index is checked and every arithmetic step is checked.

use super::{CdeclError, Span};

/// What a token is. Identifier and punctuator text is read back from the source through
/// the token's span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An identifier or keyword.
    Ident,
    /// An integer constant (value; suffixes are accepted and ignored).
    Int(u64),
    /// A character constant (its value as an `int`).
    Char(i64),
    /// A floating constant (rejected by the parser).
    Float,
    /// A string literal.
    Str,
    /// A punctuator (`{`, `...`, `<<`, ...).
    Punct(&'static str),
    /// A whole preprocessor line, `#` included, continuation lines joined.
    Directive,
    /// End of input (an empty span just after the last token).
    Eof,
}

/// One token: its kind and its byte span in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    pub(super) kind: Kind,
    pub(super) span: Span,
}

const PUNCTS: &[&str] = &[
    "...", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "->", "++", "--", "##", "{", "}", "(",
    ")", "[", "]", ";", ",", "*", "=", ":", "<", ">", "+", "-", "/", "%", "&", "|", "^", "~", "!",
    "?", ".",
];

/// Splits `src[start..end]` into tokens, ending with one [`Kind::Eof`] token.
///
/// # Errors
/// Unterminated comments, strings and character constants, malformed numbers, integer
/// constants above `u64::MAX`, and characters that are not C punctuation.
pub(super) fn tokenize(src: &str, start: usize, end: usize) -> Result<Vec<Token>, CdeclError> {
    let bytes = src.as_bytes();
    let end = end.min(bytes.len());
    let mut toks = Vec::new();
    let mut i = start.min(end);
    // Whether only whitespace/comments were seen since the last newline (for `#` lines).
    let mut line_start = true;
    let err = |s: usize, e: usize, msg: String| CdeclError::new(src, Span::new(s, e), msg);
    while i < end {
        let c = bytes[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'\\' && bytes.get(i + 1) == Some(&b'\n') {
            // A line continuation (inside `#` lines, which are tokenized on their own).
            i += 2;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < end && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let open = i;
            i += 2;
            loop {
                if i + 1 >= end {
                    return Err(err(open, open + 2, "unterminated comment `/*`".into()));
                }
                if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        if c == b'#' && line_start {
            let s = i;
            while i < end && bytes[i] != b'\n' {
                if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                i += 1;
            }
            toks.push(Token {
                kind: Kind::Directive,
                span: Span::new(s, i),
            });
            continue;
        }
        line_start = false;
        let s = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < end && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            // A prefixed character or string literal: L'x', u8"x", U"x", u"x".
            let prefix = &src[s..i];
            if matches!(prefix, "L" | "u" | "U" | "u8")
                && i < end
                && (bytes[i] == b'\'' || bytes[i] == b'"')
            {
                i = push_quoted(&mut toks, src, s, i, end)?;
                continue;
            }
            toks.push(Token {
                kind: Kind::Ident,
                span: Span::new(s, i),
            });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            // A preprocessing number: digits, letters, `_`, `.`, and signs after an exponent.
            i += 1;
            while i < end {
                let b = bytes[i];
                let prev = bytes[i - 1].to_ascii_lowercase();
                if b.is_ascii_alphanumeric()
                    || b == b'_'
                    || b == b'.'
                    || ((b == b'+' || b == b'-') && (prev == b'e' || prev == b'p'))
                {
                    i += 1;
                } else {
                    break;
                }
            }
            let kind = number(src, Span::new(s, i))?;
            toks.push(Token {
                kind,
                span: Span::new(s, i),
            });
            continue;
        }
        if c == b'\'' || c == b'"' {
            i = push_quoted(&mut toks, src, s, i, end)?;
            continue;
        }
        if let Some(p) = PUNCTS
            .iter()
            .find(|p| src.as_bytes()[i..end].starts_with(p.as_bytes()))
        {
            i += p.len();
            toks.push(Token {
                kind: Kind::Punct(p),
                span: Span::new(s, i),
            });
            continue;
        }
        // Not C: report the whole (possibly multi-byte) character.
        let ch = src[i..].chars().next().unwrap_or('\u{fffd}');
        let e = i + ch.len_utf8();
        let shown = if ch.is_control() || ch.is_whitespace() {
            format!("{:?}", ch)
        } else {
            format!("`{ch}`")
        };
        return Err(err(i, e, format!("unexpected character {shown}")));
    }
    let eof_at = toks.last().map_or(start.min(end), |t| t.span.end);
    toks.push(Token {
        kind: Kind::Eof,
        span: Span::new(eof_at, eof_at),
    });
    Ok(toks)
}

/// Lexes the literal whose opening quote is at `quote` (its token starts at `start`, before
/// any prefix), pushes it, and returns the offset just after it.
fn push_quoted(
    toks: &mut Vec<Token>,
    src: &str,
    start: usize,
    quote: usize,
    end: usize,
) -> Result<usize, CdeclError> {
    let (kind, e) = quoted(src, quote, end)?;
    toks.push(Token {
        kind,
        span: Span::new(start, e),
    });
    Ok(e)
}

/// A string literal or character constant starting at the quote at `i`; returns its kind and
/// the end offset (just after the closing quote).
fn quoted(src: &str, i: usize, end: usize) -> Result<(Kind, usize), CdeclError> {
    let bytes = src.as_bytes();
    let quote = bytes[i];
    let mut j = i + 1;
    let mut value: i64 = 0;
    let mut count = 0usize;
    loop {
        if j >= end || bytes[j] == b'\n' {
            let what = if quote == b'"' {
                "string literal"
            } else {
                "character constant"
            };
            return Err(CdeclError::new(
                src,
                Span::new(i, i + 1),
                format!("unterminated {what}"),
            ));
        }
        let b = bytes[j];
        if b == quote {
            j += 1;
            break;
        }
        let ch: i64;
        if b == b'\\' {
            let esc = bytes.get(j + 1).copied().filter(|_| j + 1 < end);
            let Some(esc) = esc else {
                return Err(CdeclError::new(
                    src,
                    Span::new(i, i + 1),
                    "unterminated literal".into(),
                ));
            };
            if esc >= 0x80 {
                // `\` before a multi-byte character: keep the character whole.
                let c = src[j + 1..].chars().next().unwrap_or('\u{fffd}');
                j += 1 + c.len_utf8();
                count += 1;
                value = value.wrapping_shl(8) | (i64::from(u32::from(c)) & 0xff);
                continue;
            }
            j += 2;
            ch = match esc {
                b'n' => 10,
                b't' => 9,
                b'r' => 13,
                b'0'..=b'7' => {
                    let mut v = i64::from(esc - b'0');
                    let mut k = 0;
                    while k < 2 && j < end && (b'0'..=b'7').contains(&bytes[j]) {
                        v = v * 8 + i64::from(bytes[j] - b'0');
                        j += 1;
                        k += 1;
                    }
                    v
                }
                b'x' => {
                    let mut v: i64 = 0;
                    let s = j;
                    while j < end && bytes[j].is_ascii_hexdigit() {
                        let d = (bytes[j] as char).to_digit(16).unwrap_or(0);
                        v = v.saturating_mul(16).saturating_add(i64::from(d));
                        j += 1;
                    }
                    if j == s {
                        return Err(CdeclError::new(
                            src,
                            Span::new(s - 2, s),
                            "`\\x` escape without hex digits".into(),
                        ));
                    }
                    v
                }
                b'a' => 7,
                b'b' => 8,
                b'f' => 12,
                b'v' => 11,
                b'e' => 27,
                _ => i64::from(esc),
            };
        } else {
            let c = src[j..].chars().next().unwrap_or('\u{fffd}');
            j += c.len_utf8();
            ch = i64::from(u32::from(c));
        }
        count += 1;
        value = value.wrapping_shl(8) | (ch & 0xff);
    }
    if quote == b'"' {
        return Ok((Kind::Str, j));
    }
    if count == 0 {
        return Err(CdeclError::new(
            src,
            Span::new(i, j),
            "empty character constant".into(),
        ));
    }
    if count == 1 {
        // Plain `char` value, sign-extended where `char` is signed (as C does for '\xff').
        let v = value & 0xff;
        let v = if crate::layout::DataModel::HOST.char_signed && v >= 0x80 {
            v - 0x100
        } else {
            v
        };
        return Ok((Kind::Char(v), j));
    }
    Ok((Kind::Char(value & 0xffff_ffff), j))
}

/// Interprets a preprocessing number: an integer constant (decimal, `0x` hex, `0b` binary,
/// leading-`0` octal; suffixes `u`, `l`, `ll` in any case and order) or a floating constant.
/// The number is `src`'s text at `span`.
///
/// # Errors
/// A positioned error for a malformed suffix or digit, or a value over `u64::MAX`.
fn number(src: &str, span: Span) -> Result<Kind, CdeclError> {
    let text = &src[span.start..span.end];
    let err = |message: String| CdeclError::new(src, span, message);
    let lower = text.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    if lower.contains('.')
        || (!is_hex && lower.contains('e'))
        || (is_hex && lower.contains('p'))
        || lower.ends_with('f') && !is_hex
    {
        return Ok(Kind::Float);
    }
    let digits_end = lower.trim_end_matches(['u', 'l']).len();
    let suffix = &lower[digits_end..];
    if !matches!(suffix, "" | "u" | "l" | "ul" | "lu" | "ll" | "ull" | "llu") {
        return Err(err(format!("invalid integer constant `{text}`")));
    }
    let body = &lower[..digits_end];
    let (radix, digits) = if let Some(h) = body.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = body.strip_prefix("0b") {
        (2, b)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() {
        return Err(err(format!("invalid integer constant `{text}`")));
    }
    let mut v: u64 = 0;
    for ch in digits.chars() {
        let d = ch
            .to_digit(radix)
            .ok_or_else(|| err(format!("invalid digit `{ch}` in integer constant `{text}`")))?;
        v = v
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or_else(|| err(format!("integer constant `{text}` is too large")))?;
    }
    Ok(Kind::Int(v))
}
