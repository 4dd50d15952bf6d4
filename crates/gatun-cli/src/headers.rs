//! The headers of `-i HEADER` (shared by `gatun call` and `gatun layout`): their declarations,
//! preprocessed by the system C compiler, and [`HeadersError`], the failure as one line for
//! stderr.

use std::fmt;

use gatun::cdecl::{Declarations, HeaderError, HeaderOptions};

/// The longest [`HeadersError`] message, in characters (then `…`): a preprocessor can print
/// pages of diagnostics.
const MAX_MESSAGE_CHARS: usize = 500;

/// Headers that did not preprocess or parse: [`HeaderError`] shown on one line (the
/// preprocessor's own lines joined with spaces, blank ones left out, at most
/// 500 characters then `…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadersError(
    /// What [`Declarations::from_headers`] reported.
    pub HeaderError,
);

impl fmt::Display for HeadersError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.to_string();
        let mut line = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if let Some((cut, _)) = line.char_indices().nth(MAX_MESSAGE_CHARS) {
            line.truncate(cut);
            line.push('…');
        }
        f.write_str(&line)
    }
}

impl std::error::Error for HeadersError {}

/// The declarations of `headers` (`-i`), preprocessed by the system C compiler
/// ([`HeaderOptions::default`]: `$CC` or `cc`); empty when no header is given.
///
/// # Errors
/// [`HeadersError`] when the compiler cannot be run, a header does not preprocess, or what it
/// declares does not parse.
pub fn header_declarations(headers: &[String]) -> Result<Declarations, HeadersError> {
    if headers.is_empty() {
        return Ok(Declarations::new());
    }
    Declarations::from_headers(headers, &HeaderOptions::default()).map_err(HeadersError)
}
