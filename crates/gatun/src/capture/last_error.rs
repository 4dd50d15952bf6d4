//! [`LastError`]: a captured Windows error code (`GetLastError`, `WSAGetLastError`) as a Rust
//! error.

use std::fmt;

use super::errno::SliceWriter;

/// A Windows error code captured after a call: the value `GetLastError()` or
/// `WSAGetLastError()` returned (a system error code such as `ERROR_FILE_NOT_FOUND` = 2, or a
/// Windows Sockets code such as `WSANOTINITIALISED` = 10093).
///
/// `Display` asks the system for the message (`FormatMessageW` with
/// `FORMAT_MESSAGE_FROM_SYSTEM`, into a 256-unit UTF-16 buffer on the stack, converted to UTF-8
/// into a 256-byte one: no allocation), e.g. `Windows error 2: The system cannot find the file
/// specified.`; codes without a message, and every code off Windows, read
/// `Windows error N: Unknown error N`. Converts into [`std::io::Error`] with the same raw OS
/// error code (on Windows `std::io::Error`'s raw codes are these). `Copy`, `Send`, `Sync`.
///
/// ```
/// use gatun::capture::LastError;
/// let e = LastError(2);
/// assert!(e.to_string().starts_with("Windows error 2: "));
/// let mut buf = [0u8; 256];
/// let text = e.describe(&mut buf);
/// if cfg!(windows) {
///     // "The system cannot find the file specified." (Wine: "File not found.")
///     assert!(text.to_lowercase().contains("file"), "{text}");
/// } else {
///     assert_eq!(text, "Unknown error 2");
/// }
/// assert_eq!(std::io::Error::from(e).raw_os_error(), Some(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LastError(pub u32);

impl LastError {
    /// The code as `std::io::Error` holds a raw OS error (the DWORD's bits as an `i32`).
    #[inline]
    pub fn raw_os_error(self) -> i32 {
        self.0 as i32
    }

    /// The system's message for this code, written into `buf` without the trailing line break
    /// (truncated at a character boundary if its UTF-8 is longer than 256 bytes); `Unknown
    /// error N` when the system has none, when the message is longer than 255 UTF-16 units
    /// (`FormatMessageW` then fails rather than truncating), and always off Windows.
    pub fn describe(self, buf: &mut [u8; 256]) -> &str {
        let len = system_message(self.0, buf);
        if len > 0 {
            return std::str::from_utf8(&buf[..len]).unwrap_or("");
        }
        let mut w = SliceWriter {
            buf: &mut buf[..],
            len: 0,
        };
        let _ = fmt::write(&mut w, format_args!("Unknown error {}", self.0));
        let len = w.len;
        std::str::from_utf8(&buf[..len]).unwrap_or("Unknown error")
    }
}

/// Writes the system's message for `code` into `buf` as UTF-8 (whole characters only, the
/// trailing `\r\n` and spaces dropped) and returns its length in bytes; 0 when there is none.
#[cfg(windows)]
fn system_message(code: u32, buf: &mut [u8; 256]) -> usize {
    use crate::os::last_error::{
        FormatMessageW, FORMAT_MESSAGE_FROM_SYSTEM, FORMAT_MESSAGE_IGNORE_INSERTS,
    };
    let mut wide = [0u16; 256];
    // SAFETY: `wide` is writable for its 256 UTF-16 units, the size passed; with
    // FORMAT_MESSAGE_FROM_SYSTEM and no FORMAT_MESSAGE_ALLOCATE_BUFFER the function writes at
    // most that many units (NUL included) and returns the count without the NUL, or 0; no
    // inserts are read (FORMAT_MESSAGE_IGNORE_INSERTS).
    let n = unsafe {
        FormatMessageW(
            FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
            std::ptr::null(),
            code,
            0,
            wide.as_mut_ptr(),
            wide.len() as u32,
            std::ptr::null_mut(),
        )
    };
    let n = (n as usize).min(wide.len());
    let mut len = 0;
    for c in char::decode_utf16(wide[..n].iter().copied()) {
        let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
        if len + c.len_utf8() > buf.len() {
            break;
        }
        len += c.encode_utf8(&mut buf[len..]).len();
    }
    while len > 0 && matches!(buf[len - 1], b'\r' | b'\n' | b' ') {
        len -= 1;
    }
    len
}

/// No system messages off Windows.
#[cfg(not(windows))]
fn system_message(_code: u32, _buf: &mut [u8; 256]) -> usize {
    0
}

impl fmt::Display for LastError {
    /// `Windows error N: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 256];
        write!(f, "Windows error {}: {}", self.0, self.describe(&mut buf))
    }
}

impl std::error::Error for LastError {}

impl From<LastError> for std::io::Error {
    fn from(e: LastError) -> Self {
        std::io::Error::from_raw_os_error(e.raw_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn display_names_the_code() {
        let s = LastError(2).to_string();
        assert!(s.starts_with("Windows error 2: "), "{s}");
        if cfg!(windows) {
            assert!(!s.contains("Unknown error"), "{s}");
            assert!(!s.ends_with('\n'), "{s:?}");
        } else {
            assert_eq!(s, "Windows error 2: Unknown error 2");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn unknown_code() {
        let mut buf = [0u8; 256];
        assert_eq!(
            LastError(0x2fff_ffff).describe(&mut buf),
            "Unknown error 805306367"
        );
    }

    #[test]
    fn into_io_error_keeps_the_code() {
        assert_eq!(std::io::Error::from(LastError(5)).raw_os_error(), Some(5));
        assert_eq!(LastError(u32::MAX).raw_os_error(), -1);
    }
}
