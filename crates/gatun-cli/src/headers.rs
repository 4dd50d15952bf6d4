//! The headers of `-i HEADER` (shared by `gatun call` and `gatun layout`): the options that
//! say which headers to read and how to preprocess them ([`HeaderArgs`]: `-i`, `-D`, `-I`,
//! `-include`), their declarations, preprocessed by the system C compiler
//! ([`header_declarations`]), [`HeadersError`], the failure as one line for stderr, and
//! [`header_hint`], the header that usually declares a well-known type.

use std::fmt;
use std::path::PathBuf;

use clap::Args;
use gatun::cdecl::{Declarations, HeaderError, HeaderOptions};

/// The longest [`HeadersError`] message, in characters (then `…`): a preprocessor can print
/// pages of diagnostics.
const MAX_MESSAGE_CHARS: usize = 500;

/// Which headers a command reads, and how the system C preprocessor runs over them. `-D`,
/// `-I` and `-include` are the preprocessor's own options, passed through
/// [`HeaderOptions`]; they apply only with headers (`-i` or `-include`).
///
/// ```
/// use gatun_cli::headers::HeaderArgs;
/// let args = HeaderArgs {
///     includes: vec!["string.h".into()],
///     defines: vec!["_GNU_SOURCE".into(), "LEVEL=2".into()],
///     ..HeaderArgs::default()
/// };
/// assert!(args.is_active());
/// let options = args.options().unwrap();
/// assert_eq!(
///     options.defines,
///     [("_GNU_SOURCE".to_string(), None), ("LEVEL".to_string(), Some("2".to_string()))]
/// );
/// ```
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderArgs {
    /// A C header whose declarations may be used (`zlib.h`, `sys/stat.h`), preprocessed by
    /// the system C compiler (`$CC` or `cc`). Repeatable.
    #[arg(short = 'i', long = "include", value_name = "HEADER")]
    pub includes: Vec<String>,
    /// Define a macro for the headers, as the C compiler's `-D` (`-D _GNU_SOURCE`,
    /// `-D LEVEL=2`). Repeatable.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Search DIR for the headers' `#include`s before the system directories, as the C
    /// compiler's `-I`. Repeatable.
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Read FILE before the headers, as the C compiler's `-include FILE` (which is also
    /// accepted). Repeatable.
    #[arg(long = "force-include", value_name = "FILE")]
    pub force_includes: Vec<String>,
}

impl HeaderArgs {
    /// Whether any header is to be read (`-i` or `-include`).
    ///
    /// ```
    /// use gatun_cli::headers::HeaderArgs;
    /// assert!(!HeaderArgs::default().is_active());
    /// ```
    pub fn is_active(&self) -> bool {
        !self.includes.is_empty() || !self.force_includes.is_empty()
    }

    /// The preprocessor options: `-I` directories, `-D` macros (`NAME` or `NAME=VALUE`),
    /// `-include FILE` as extra arguments; the compiler is `$CC` or `cc`.
    ///
    /// # Errors
    /// [`HeadersError`] ([`HeaderError::InvalidInput`]) for an empty macro name (`-D =1`),
    /// and for `-D` or `-I` without a header to apply them to.
    ///
    /// ```
    /// use gatun_cli::headers::HeaderArgs;
    /// let args = HeaderArgs { defines: vec!["X".into()], ..HeaderArgs::default() };
    /// assert!(args.options().unwrap_err().to_string().contains("-D and -I apply to headers"));
    /// ```
    pub fn options(&self) -> Result<HeaderOptions, HeadersError> {
        let invalid = |value: &str, reason: &str| {
            HeadersError(HeaderError::InvalidInput {
                value: value.to_string(),
                reason: reason.to_string(),
            })
        };
        if !self.is_active() && (!self.defines.is_empty() || !self.include_dirs.is_empty()) {
            let given = self
                .defines
                .iter()
                .map(|d| format!("-D {d}"))
                .chain(
                    self.include_dirs
                        .iter()
                        .map(|d| format!("-I {}", d.display())),
                )
                .collect::<Vec<_>>()
                .join(" ");
            return Err(invalid(
                &given,
                "-D and -I apply to headers: give the header with -i HEADER",
            ));
        }
        let mut defines = Vec::with_capacity(self.defines.len());
        for d in &self.defines {
            let (name, value) = match d.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (d.as_str(), None),
            };
            if name.trim().is_empty() {
                return Err(invalid(d, "expected -D NAME or -D NAME=VALUE"));
            }
            defines.push((name.trim().to_string(), value));
        }
        let mut extra_args = Vec::with_capacity(2 * self.force_includes.len());
        for file in &self.force_includes {
            if file.is_empty() {
                return Err(invalid(file, "expected -include FILE"));
            }
            extra_args.push("-include".to_string());
            extra_args.push(file.clone());
        }
        Ok(HeaderOptions {
            include_dirs: self.include_dirs.clone(),
            defines,
            extra_args,
            ..HeaderOptions::default()
        })
    }

    /// The headers as one comma-separated list for messages (`-include` files first).
    pub(crate) fn names(&self) -> String {
        self.force_includes
            .iter()
            .chain(&self.includes)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

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

/// The declarations of the headers `args` names (`-i`, `-include`), preprocessed by the
/// system C compiler with `args`' options ([`HeaderArgs::options`]); empty when no header is
/// given.
///
/// # Errors
/// [`HeadersError`] when the options are invalid, the compiler cannot be run, a header does
/// not preprocess, or what it declares does not parse.
///
/// ```
/// use gatun_cli::headers::{header_declarations, HeaderArgs};
/// let decls = header_declarations(&HeaderArgs::default()).unwrap();
/// assert!(decls.function("strlen").is_none()); // no header: nothing declared
/// ```
pub fn header_declarations(args: &HeaderArgs) -> Result<Declarations, HeadersError> {
    let options = args.options()?;
    if !args.is_active() {
        return Ok(Declarations::new());
    }
    Declarations::from_headers(&args.includes, &options).map_err(HeadersError)
}

/// Well-known C types and the header that declares them on POSIX systems, for the hint of
/// a type that is not declared.
const KNOWN_TYPES: &[(&str, &str)] = &[
    ("struct stat", "sys/stat.h"),
    ("struct statvfs", "sys/statvfs.h"),
    ("struct statfs", "sys/statfs.h"),
    ("struct tm", "time.h"),
    ("struct timespec", "time.h"),
    ("struct itimerspec", "time.h"),
    ("struct timeval", "sys/time.h"),
    ("struct timezone", "sys/time.h"),
    ("struct itimerval", "sys/time.h"),
    ("struct tms", "sys/times.h"),
    ("struct rusage", "sys/resource.h"),
    ("struct rlimit", "sys/resource.h"),
    ("struct utsname", "sys/utsname.h"),
    ("struct sysinfo", "sys/sysinfo.h"),
    ("struct passwd", "pwd.h"),
    ("struct group", "grp.h"),
    ("struct dirent", "dirent.h"),
    ("struct flock", "fcntl.h"),
    ("struct termios", "termios.h"),
    ("struct winsize", "sys/ioctl.h"),
    ("struct sigaction", "signal.h"),
    ("struct pollfd", "poll.h"),
    ("struct iovec", "sys/uio.h"),
    ("struct sockaddr", "sys/socket.h"),
    ("struct msghdr", "sys/socket.h"),
    ("struct sockaddr_un", "sys/un.h"),
    ("struct sockaddr_in", "netinet/in.h"),
    ("struct sockaddr_in6", "netinet/in.h"),
    ("struct in_addr", "netinet/in.h"),
    ("struct addrinfo", "netdb.h"),
    ("struct hostent", "netdb.h"),
    ("struct lconv", "locale.h"),
    ("struct sched_param", "sched.h"),
    ("div_t", "stdlib.h"),
    ("ldiv_t", "stdlib.h"),
    ("lldiv_t", "stdlib.h"),
    ("fd_set", "sys/select.h"),
    ("sigset_t", "signal.h"),
    ("jmp_buf", "setjmp.h"),
    ("mbstate_t", "wchar.h"),
    ("regex_t", "regex.h"),
    ("regmatch_t", "regex.h"),
    ("glob_t", "glob.h"),
    ("pthread_t", "pthread.h"),
    ("pthread_attr_t", "pthread.h"),
    ("pthread_mutex_t", "pthread.h"),
    ("z_stream", "zlib.h"),
];

/// The header that declares the well-known type `ty` (`struct stat` → `sys/stat.h`,
/// `z_stream` → `zlib.h`; whitespace between keyword and tag is free), if it is one.
///
/// ```
/// use gatun_cli::headers::header_hint;
/// assert_eq!(header_hint("struct  tm"), Some("time.h"));
/// assert_eq!(header_hint("struct my_own"), None);
/// ```
pub fn header_hint(ty: &str) -> Option<&'static str> {
    let ty = ty.split_whitespace().collect::<Vec<_>>().join(" ");
    KNOWN_TYPES
        .iter()
        .find(|(name, _)| *name == ty)
        .map(|&(_, header)| header)
}

/// Headers of well-known libraries and the soname to give `-l` on Linux, for the hint of a
/// symbol that is not found.
const KNOWN_LIBRARIES: &[(&str, &str)] = &[
    ("zlib.h", "libz.so.1"),
    ("bzlib.h", "libbz2.so.1.0"),
    ("lzma.h", "liblzma.so.5"),
    ("zstd.h", "libzstd.so.1"),
    ("png.h", "libpng16.so.16"),
    ("sqlite3.h", "libsqlite3.so.0"),
    ("expat.h", "libexpat.so.1"),
    ("uuid/uuid.h", "libuuid.so.1"),
    ("curl/curl.h", "libcurl.so.4"),
];

/// The `-l` library of a well-known library header (`zlib.h` → `libz.so.1`; any
/// `openssl/*.h` → `libcrypto.so.3`), if `header` is one.
///
/// ```
/// use gatun_cli::headers::library_hint;
/// assert_eq!(library_hint("zlib.h"), Some("libz.so.1"));
/// assert_eq!(library_hint("openssl/evp.h"), Some("libcrypto.so.3"));
/// assert_eq!(library_hint("stdio.h"), None);
/// ```
pub fn library_hint(header: &str) -> Option<&'static str> {
    let header = header.trim_matches(['<', '>', '"']);
    if header.starts_with("openssl/") {
        return Some("libcrypto.so.3");
    }
    KNOWN_LIBRARIES
        .iter()
        .find(|(h, _)| *h == header)
        .map(|&(_, lib)| lib)
}

/// What to suggest for type `ty` that is not declared: `add -i time.h` for a well-known
/// type, else to give the header that defines it (or to define it in the declaration).
pub(crate) fn undeclared_hint(ty: &str) -> String {
    match header_hint(ty) {
        Some(header) => format!("add -i {header}"),
        None => "define it in the declaration, or add -i with the header that defines it".into(),
    }
}

/// Why a type has no layout, read from the declarations' message about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// A tag that nothing declares (`` `struct tm` is not declared ``).
    NotDeclared,
    /// A tag declared (by a prototype, a typedef, a forward declaration) but never defined.
    Incomplete,
    /// An unknown type name (``unknown type name `itn` ``).
    Unknown,
}

/// The type a cdecl message says has no layout, and why; `None` for other messages.
pub(crate) fn undeclared_type(message: &str) -> Option<(String, Missing)> {
    let quoted = |m: &str| -> Option<String> {
        let start = m.find('`')? + 1;
        let len = m[start..].find('`')?;
        Some(m[start..start + len].to_string())
    };
    let why = if message.starts_with('`') && message.contains("` is not declared") {
        Missing::NotDeclared
    } else if message.starts_with('`') && message.contains("` is incomplete (declared but never") {
        Missing::Incomplete
    } else if message.starts_with("unknown type name `") {
        Missing::Unknown
    } else {
        return None;
    };
    quoted(message).map(|t| (t, why))
}

/// A type problem as one phrase with its hint: `struct stat is not declared (add -i
/// sys/stat.h)`, `struct stat is declared but never defined (add -i sys/stat.h)`,
/// ``unknown type name `z_stream` (add -i zlib.h)``; `None` for other messages.
pub(crate) fn missing_type_phrase(message: &str) -> Option<String> {
    let (ty, why) = undeclared_type(message)?;
    Some(match why {
        Missing::NotDeclared => format!("{ty} is not declared ({})", undeclared_hint(&ty)),
        Missing::Incomplete => format!(
            "{ty} is declared but never defined, so it has no size ({})",
            undeclared_hint(&ty)
        ),
        Missing::Unknown => match header_hint(&ty) {
            Some(h) => format!("unknown type name `{ty}` (add -i {h})"),
            None => format!("unknown type name `{ty}`"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_problems_name_the_type_and_the_header() {
        assert_eq!(
            missing_type_phrase("`struct stat` is not declared, so it has no layout").unwrap(),
            "struct stat is not declared (add -i sys/stat.h)"
        );
        assert_eq!(
            missing_type_phrase(
                "`struct tm` is incomplete (declared but never defined), so it has no layout"
            )
            .unwrap(),
            "struct tm is declared but never defined, so it has no size (add -i time.h)"
        );
        assert_eq!(
            missing_type_phrase("unknown type name `itn`").unwrap(),
            "unknown type name `itn`"
        );
        let mine = missing_type_phrase("`struct mine` is not declared, so ...").unwrap();
        assert!(
            mine.contains("add -i with the header that defines it"),
            "{mine}"
        );
        assert_eq!(missing_type_phrase("expected a type"), None);
    }
}
