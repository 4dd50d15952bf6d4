//! Real C headers as the signature source: the system C preprocessor turns `#include`s into
//! declarations, which [`Declarations`] parses.
//!
//! The preprocessor is `$CC` (split on whitespace, so `CC="gcc -m64"` works) or `cc`, run as
//! `CC -E -P -dD -x c [-I DIR]... [-D NAME[=VALUE]]... [-U NAME]... -` with the `#include`
//! lines on its standard input. `-P` drops line markers, so error positions refer to the
//! preprocessed text, whose line the error shows. `-dD` keeps the `#define` and `#undef`
//! lines (the predefined macros first) in the output, in one run: they are taken out of the
//! text before it is parsed (blank lines keep the positions) and become the set's macros
//! (see [`Declarations::macros`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{CdeclError, Declarations};

/// How [`Declarations::from_headers`] runs the preprocessor.
///
/// `Send + Sync`, cheap to clone.
///
/// ```
/// use gatun::cdecl::HeaderOptions;
///
/// let options = HeaderOptions {
///     include_dirs: vec!["/opt/mylib/include".into()],
///     defines: vec![("_GNU_SOURCE".into(), None), ("MYLIB_API".into(), Some("".into()))],
///     ..HeaderOptions::default()
/// };
/// assert!(options.compiler.is_none()); // `$CC`, else `cc`
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderOptions {
    /// Directories searched for `#include`s, in order, before the system ones (`-I`).
    pub include_dirs: Vec<PathBuf>,
    /// Macros defined before the headers (`-D NAME` or `-D NAME=VALUE`).
    pub defines: Vec<(String, Option<String>)>,
    /// Macros undefined before the headers (`-U NAME`).
    pub undefines: Vec<String>,
    /// Extra arguments passed to the preprocessor as they are (`-std=c11`, `-m32`, ...).
    pub extra_args: Vec<String>,
    /// The compiler to preprocess with (a program and arguments, split on whitespace); `None`
    /// means `$CC`, or `cc` when `$CC` is unset or empty.
    pub compiler: Option<String>,
}

/// Why [`Declarations::from_headers`] failed.
///
/// `Send + Sync`, `Clone`, comparable.
///
/// ```
/// use gatun::cdecl::{Declarations, HeaderError, HeaderOptions};
///
/// let options = HeaderOptions {
///     compiler: Some("/nonexistent/cc".into()),
///     ..HeaderOptions::default()
/// };
/// let e = Declarations::from_headers(["stdio.h"], &options).unwrap_err();
/// assert!(matches!(e, HeaderError::NoCompiler { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// The preprocessor could not be started (typically: no C compiler is installed), or it
    /// exited with status 127 (command not found) without output.
    #[error(
        "cannot run the C preprocessor `{compiler}`: {reason} (install a C compiler, or set \
         $CC or HeaderOptions::compiler)"
    )]
    NoCompiler {
        /// The command that was tried.
        compiler: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The preprocessor ran and failed (a header not found, an `#error`, a bad option).
    #[error("the C preprocessor `{compiler}` failed ({status}):\n{stderr}")]
    Preprocessor {
        /// The command that was run.
        compiler: String,
        /// How it exited.
        status: String,
        /// What it printed on standard error (at most [`HeaderError::MAX_STDERR`] bytes).
        stderr: String,
    },
    /// A header name or option that cannot be passed to the preprocessor.
    #[error("invalid header or option {value:?}: {reason}")]
    InvalidInput {
        /// The offending header name or option.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// The preprocessed headers do not parse (the position is in the preprocessed text).
    #[error("{headers}: {error}")]
    Parse {
        /// The headers, as given.
        headers: String,
        /// The parse error.
        error: CdeclError,
    },
}

impl HeaderError {
    /// How much of the preprocessor's standard error [`HeaderError::Preprocessor`] keeps, in
    /// bytes.
    pub const MAX_STDERR: usize = 4096;
}

/// The `#include` line for `header`: `<name>` or `"name"` as given, an existing file by its
/// path, anything else as `<header>`.
fn include_line(header: &str) -> Result<String, HeaderError> {
    let bad = |reason: &str| HeaderError::InvalidInput {
        value: header.to_string(),
        reason: reason.to_string(),
    };
    if header.is_empty() {
        return Err(bad("expected a header name such as `zlib.h`"));
    }
    if header.contains(['\n', '\r', '\0']) {
        return Err(bad("a header name cannot contain line breaks or NUL"));
    }
    if (header.starts_with('<') && header.ends_with('>'))
        || (header.len() > 1 && header.starts_with('"') && header.ends_with('"'))
    {
        return Ok(format!("#include {header}\n"));
    }
    if Path::new(header).is_file() {
        let path = std::fs::canonicalize(header).unwrap_or_else(|_| PathBuf::from(header));
        let text = path.to_string_lossy();
        if text.contains('"') {
            return Err(bad("a header path cannot contain `\"`"));
        }
        return Ok(format!("#include \"{text}\"\n"));
    }
    if header.contains('>') {
        return Err(bad("a header name cannot contain `>`"));
    }
    Ok(format!("#include <{header}>\n"))
}

/// The preprocessor command line for `options` (program first).
fn command_line(options: &HeaderOptions) -> Result<Vec<String>, HeaderError> {
    let cc = match &options.compiler {
        Some(c) => c.clone(),
        None => std::env::var("CC")
            .ok()
            .filter(|c| !c.trim().is_empty())
            .unwrap_or_else(|| "cc".to_string()),
    };
    let mut args: Vec<String> = cc.split_whitespace().map(str::to_string).collect();
    if args.is_empty() {
        return Err(HeaderError::InvalidInput {
            value: cc,
            reason: "expected a compiler command such as `cc`".into(),
        });
    }
    args.extend(["-E", "-P", "-dD", "-x", "c"].map(String::from));
    for dir in &options.include_dirs {
        args.push(format!("-I{}", dir.display()));
    }
    for (name, value) in &options.defines {
        if name.is_empty() || name.contains(['=', '\n', '\0']) {
            return Err(HeaderError::InvalidInput {
                value: name.clone(),
                reason: "expected a macro name (no `=`, line break or NUL)".into(),
            });
        }
        args.push(match value {
            Some(v) => format!("-D{name}={v}"),
            None => format!("-D{name}"),
        });
    }
    for name in &options.undefines {
        args.push(format!("-U{name}"));
    }
    args.extend(options.extra_args.iter().cloned());
    args.push("-".into());
    Ok(args)
}

/// Runs the preprocessor over `#include`s of `headers`; returns its output.
pub(super) fn preprocess<I, S>(headers: I, options: &HeaderOptions) -> Result<String, HeaderError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut input = String::new();
    for h in headers {
        input.push_str(&include_line(h.as_ref())?);
    }
    let args = command_line(options)?;
    let shown = args.join(" ");
    let mut child = Command::new(&args[0])
        .args(&args[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| HeaderError::NoCompiler {
            compiler: args[0].clone(),
            reason: e.to_string(),
        })?;
    // The input is a few short lines: it fits in the pipe, so writing it all before reading
    // the output cannot deadlock.
    let written = child
        .stdin
        .take()
        .map(|mut stdin| stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| HeaderError::Preprocessor {
            compiler: shown.clone(),
            status: "could not be waited for".into(),
            stderr: e.to_string(),
        })?;
    // Exit status 127 with no output is "command not found": what a shell wrapper reports,
    // and what a spawn whose exec failed looks like where the failure cannot be reported to
    // the parent (under qemu-user emulation, for instance).
    if out.status.code() == Some(127) && out.stdout.is_empty() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stderr = stderr.trim();
        return Err(HeaderError::NoCompiler {
            compiler: args[0].clone(),
            reason: if stderr.is_empty() {
                "it exited with status 127 (command not found) and no output".into()
            } else {
                let mut cut = stderr.len().min(HeaderError::MAX_STDERR);
                while !stderr.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!(
                    "it exited with status 127 (command not found): {}",
                    &stderr[..cut]
                )
            },
        });
    }
    if !out.status.success() || matches!(written, Some(Err(_))) {
        let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if stderr.len() > HeaderError::MAX_STDERR {
            let mut cut = HeaderError::MAX_STDERR;
            while !stderr.is_char_boundary(cut) {
                cut -= 1;
            }
            stderr.truncate(cut);
            stderr.push_str("\n...");
        }
        return Err(HeaderError::Preprocessor {
            compiler: shown,
            status: out.status.to_string(),
            stderr: stderr.trim_end().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Declarations {
    /// Preprocesses `#include`s of `headers` with the system C preprocessor and parses the
    /// result into a new set (see the module docs for what headers may contain).
    ///
    /// Each header is a name searched on the include path (`"zlib.h"`, `"openssl/evp.h"`), a
    /// path to an existing file, or a spelled-out `"<name>"` / `"\"name\""`.
    ///
    /// The macros defined at the end of the headers (the predefined ones and those of
    /// [`HeaderOptions::defines`] included) are kept: each object-like macro is expanded and
    /// evaluated as a constant expression against the parsed declarations, so
    /// [`Declarations::constant`] gives `O_RDONLY` or `Z_OK` with its C type's kind;
    /// [`Declarations::macros`] lists them all, function-like ones and ones that are not
    /// constants included. Evaluation never fails the call: a macro gatun cannot evaluate is
    /// listed as [`MacroKind::NotConstant`](super::MacroKind::NotConstant) with the reason.
    ///
    /// ```no_run
    /// use gatun::cdecl::{Constant, Declarations, HeaderOptions};
    ///
    /// let decls = Declarations::from_headers(["zlib.h"], &HeaderOptions::default()).unwrap();
    /// assert!(decls.function("crc32").is_some());
    /// assert_eq!(decls.constant("Z_BUF_ERROR"), Some(Constant::I32(-5)));
    /// assert!(decls.constant("ZLIB_VERSION").unwrap().as_str().is_some());
    /// ```
    ///
    /// # Errors
    /// [`HeaderError::NoCompiler`] if the preprocessor cannot be started,
    /// [`HeaderError::Preprocessor`] if it fails (a header that does not exist),
    /// [`HeaderError::InvalidInput`] for an empty or malformed header name or macro name,
    /// [`HeaderError::Parse`] if the preprocessed text does not parse.
    pub fn from_headers<I, S>(
        headers: I,
        options: &HeaderOptions,
    ) -> Result<Declarations, HeaderError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut d = Declarations::new();
        d.add_headers(headers, options)?;
        Ok(d)
    }

    /// Preprocesses `#include`s of `headers` as [`Declarations::from_headers`] does and adds
    /// what they declare to this set (atomic, as [`Declarations::add`]); returns what was
    /// declared, in order. Their macros join the set's, replacing macros of the same name;
    /// they are evaluated against the whole set.
    ///
    /// # Errors
    /// As [`Declarations::from_headers`]; a redeclaration that conflicts with this set is a
    /// [`HeaderError::Parse`].
    pub fn add_headers<I, S>(
        &mut self,
        headers: I,
        options: &HeaderOptions,
    ) -> Result<Vec<super::Declared>, HeaderError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let headers: Vec<String> = headers
            .into_iter()
            .map(|h| h.as_ref().to_string())
            .collect();
        let out = preprocess(&headers, options)?;
        let (src, definitions) = super::macros::split_definitions(&out);
        let declared = self.add(&src).map_err(|error| HeaderError::Parse {
            headers: headers.join(", "),
            error,
        })?;
        let evaluated = super::macros::evaluate(&mut self.state, &definitions);
        let macros = std::sync::Arc::make_mut(&mut self.state.macros);
        macros.extend(evaluated);

        Ok(declared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "looks at the file system")]
    fn include_lines_and_command_lines() {
        assert_eq!(include_line("zlib.h").unwrap(), "#include <zlib.h>\n");
        assert_eq!(include_line("<a/b.h>").unwrap(), "#include <a/b.h>\n");
        assert_eq!(include_line("\"x.h\"").unwrap(), "#include \"x.h\"\n");
        assert!(matches!(
            include_line(""),
            Err(HeaderError::InvalidInput { .. })
        ));
        assert!(matches!(
            include_line("a.h\n#define x"),
            Err(HeaderError::InvalidInput { .. })
        ));
        let options = HeaderOptions {
            include_dirs: vec!["/inc".into()],
            defines: vec![("A".into(), None), ("B".into(), Some("2".into()))],
            undefines: vec!["C".into()],
            extra_args: vec!["-std=c11".into()],
            compiler: Some("gcc -m64".into()),
        };
        assert_eq!(
            command_line(&options).unwrap().join(" "),
            "gcc -m64 -E -P -dD -x c -I/inc -DA -DB=2 -UC -std=c11 -"
        );
        let bad = HeaderOptions {
            defines: vec![("A=1".into(), None)],
            ..HeaderOptions::default()
        };
        assert!(matches!(
            command_line(&bad),
            Err(HeaderError::InvalidInput { .. })
        ));
    }

    #[test]
    #[cfg_attr(miri, ignore = "runs a process")]
    fn a_missing_compiler_is_a_clear_error() {
        let options = HeaderOptions {
            compiler: Some("/nonexistent/gatun-no-such-cc".into()),
            ..HeaderOptions::default()
        };
        let e = Declarations::from_headers(["stdio.h"], &options).unwrap_err();
        assert!(matches!(e, HeaderError::NoCompiler { .. }), "{e}");
        assert!(e.to_string().contains("gatun-no-such-cc"), "{e}");
    }
}
