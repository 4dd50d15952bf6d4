//! [`Errno`]: a captured C `errno` value as a Rust error.

use std::fmt;

/// A C `errno` value captured after a system call (POSIX.1-2017 `<errno.h>`).
///
/// `Display` uses the C library's `strerror_r` (on Windows the C runtime's `strerror`, whose
/// buffer is per thread) into a stack buffer (no allocation), e.g.
/// `errno 2: No such file or directory`. Converts into [`std::io::Error`] with the same raw OS
/// error code. `Copy`, `Send`, `Sync`.
///
/// ```
/// use gatun::capture::Errno;
/// let e = Errno(2);
/// assert_eq!(e.to_string(), "errno 2: No such file or directory");
/// let mut buf = [0u8; 128];
/// assert_eq!(e.describe(&mut buf), "No such file or directory");
/// assert_eq!(std::io::Error::from(e).raw_os_error(), Some(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Errno(pub i32);

impl Errno {
    /// The raw OS error code (the value `errno` held).
    #[inline]
    pub fn raw_os_error(self) -> i32 {
        self.0
    }

    /// The C library's description of this error, written into `buf` (NUL excluded). Falls
    /// back to `Unknown error N` when the C library has none.
    pub fn describe(self, buf: &mut [u8; 128]) -> &str {
        strerror(self.0, buf)
    }
}

#[cfg(unix)]
fn strerror(code: i32, buf: &mut [u8; 128]) -> &str {
    // SAFETY: `buf` is writable for its full length and we pass that length; the XSI
    // `strerror_r` (which the `libc` crate binds on glibc as `__xpg_strerror_r`) writes a
    // NUL-terminated string of at most `len` bytes and returns 0 on success.
    let rc = unsafe { libc::strerror_r(code, buf.as_mut_ptr().cast(), buf.len()) };
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    if rc == 0 && len > 0 && std::str::from_utf8(&buf[..len]).is_ok() {
        return std::str::from_utf8(&buf[..len]).unwrap_or("");
    }
    let mut w = SliceWriter {
        buf: &mut buf[..],
        len: 0,
    };
    let _ = fmt::write(&mut w, format_args!("Unknown error {code}"));
    let len = w.len;
    std::str::from_utf8(&buf[..len]).unwrap_or("Unknown error")
}

#[cfg(windows)]
fn strerror(code: i32, buf: &mut [u8; 128]) -> &str {
    // SAFETY: the Windows C runtime's `strerror` (msvcrt.dll, ucrtbase.dll) returns a
    // NUL-terminated message in a buffer of the calling thread (never shared with another
    // thread), valid until this thread's next `strerror` call; it is copied at once.
    let msg = unsafe { libc::strerror(code) };
    let mut n = 0;
    if !msg.is_null() {
        // SAFETY: non-null: a NUL-terminated string, see above.
        let bytes = unsafe { std::ffi::CStr::from_ptr(msg) }.to_bytes();
        n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
    }
    if n > 0 && std::str::from_utf8(&buf[..n]).is_ok() {
        return std::str::from_utf8(&buf[..n]).unwrap_or("");
    }
    let mut w = SliceWriter {
        buf: &mut buf[..],
        len: 0,
    };
    let _ = fmt::write(&mut w, format_args!("Unknown error {code}"));
    let len = w.len;
    std::str::from_utf8(&buf[..len]).unwrap_or("Unknown error")
}

#[cfg(not(any(unix, windows)))]
fn strerror(code: i32, buf: &mut [u8; 128]) -> &str {
    let mut w = SliceWriter {
        buf: &mut buf[..],
        len: 0,
    };
    let _ = fmt::write(&mut w, format_args!("error {code}"));
    let len = w.len;
    std::str::from_utf8(&buf[..len]).unwrap_or("error")
}

/// A `fmt::Write` into a byte buffer that truncates (at a byte boundary) when it is full.
pub(super) struct SliceWriter<'b> {
    pub(super) buf: &'b mut [u8],
    pub(super) len: usize,
}

impl fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

impl fmt::Display for Errno {
    /// `errno N: description`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 128];
        write!(f, "errno {}: {}", self.0, self.describe(&mut buf))
    }
}

impl std::error::Error for Errno {}

impl From<Errno> for std::io::Error {
    fn from(e: Errno) -> Self {
        std::io::Error::from_raw_os_error(e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn display_uses_strerror() {
        assert_eq!(Errno(2).to_string(), "errno 2: No such file or directory");
        assert_eq!(Errno(13).to_string(), "errno 13: Permission denied");
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn unknown_code_has_a_description() {
        let s = Errno(99999).to_string();
        assert!(s.starts_with("errno 99999: "), "{s}");
        assert!(s.contains("99999"), "{s}");
    }

    #[test]
    fn into_io_error_keeps_the_code() {
        let io: std::io::Error = Errno(9).into();
        assert_eq!(io.raw_os_error(), Some(9));
        assert_eq!(Errno(9).raw_os_error(), 9);
    }
}
