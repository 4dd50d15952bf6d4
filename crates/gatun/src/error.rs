//! The crate's one error type.
//!
//! Every fallible operation in gatun returns [`Result<T>`]. The variants map the JDK FFM
//! exceptions onto typed errors (see `ARCHITECTURE.md`): `IllegalArgumentException` becomes
//! [`Error::InvalidAlignment`] / [`Error::InvalidSize`] / [`Error::SizeOverflow`] and friends,
//! `IndexOutOfBoundsException` becomes [`Error::OutOfBounds`], `IllegalStateException` becomes
//! [`Error::FrameNotTopOfStack`] and so on. Every message names the offending value and what was
//! expected.
//!
//! `Error` is `Send + Sync + 'static`, `Clone`, and comparable, so tests can assert exact kinds.
//!
//! **Argument numbering.** Messages count arguments from 1, in the order they are passed:
//! `argument 1` is `args[0]` of [`crate::DowncallHandle::invoke`], the first element of a typed
//! handle's tuple, `args.get(0)` in an upcall, the descriptor's first argument layout at link
//! time. For a handle that captures call state, `argument 1` is the capture segment and the
//! descriptor's arguments follow from `argument 2` (also in messages about the system-call
//! adapter's `SystemCall::invoke`, whose slice leaves the segment out). Indices that are API
//! parameters (`FirstVariadicArg(i)`, `insert_argument_layouts(index, ..)`) are called
//! indices and count from 0.

use std::fmt;

/// gatun's result type: `std::result::Result<T, gatun::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in gatun. Marked `#[non_exhaustive]`: later layers add variants.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// use gatun::Error;
/// let arena = Arena::confined();
/// let seg = arena.allocate(4, 4).unwrap();
/// let e = seg.get::<u64>(0).unwrap_err();
/// assert_eq!(e, Error::OutOfBounds { offset: 0, access_size: 8, segment_size: 4 });
/// assert_eq!(
///     e.to_string(),
///     "out of bounds: access of 8 bytes at offset 0 in a segment of 4 bytes"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A byte alignment that is not a power of two (0 included).
    #[error("invalid byte alignment {alignment}: expected a power of two (1, 2, 4, 8, ...)")]
    InvalidAlignment {
        /// The rejected alignment, in bytes.
        alignment: usize,
    },

    /// A byte size that is not acceptable where it was given.
    #[error("invalid byte size {size}: {expected}")]
    InvalidSize {
        /// The rejected size, in bytes.
        size: usize,
        /// What was expected instead.
        expected: String,
    },

    /// A size or offset computation overflowed `usize` (or `isize::MAX` for allocations).
    #[error("size overflow: {what}")]
    SizeOverflow {
        /// What was being computed.
        what: String,
    },

    /// A field of an explicitly laid-out struct sits at an offset that violates its alignment.
    #[error(
        "field {field} at byte offset {offset} is misaligned: its alignment is {alignment} bytes"
    )]
    MisalignedField {
        /// The field's name, or `#index` for an unnamed field.
        field: String,
        /// The byte offset at which the field would be placed.
        offset: usize,
        /// The field's required alignment, in bytes.
        alignment: usize,
    },

    /// A layout was given an alignment smaller than its members require.
    #[error(
        "byte alignment {alignment} of {layout} is less than its members' alignment {required}"
    )]
    AlignmentTooSmall {
        /// The layout, as text.
        layout: String,
        /// The requested alignment, in bytes.
        alignment: usize,
        /// The smallest acceptable alignment, in bytes.
        required: usize,
    },

    /// A type gatun does not (yet) support on this platform, such as `long double`.
    #[error("unsupported type `{type_name}`: {reason}")]
    Unsupported {
        /// The C type or layout that was rejected.
        type_name: String,
        /// Why, and what to use instead.
        reason: String,
    },

    /// A name that a set of C declarations does not declare (as the kind asked for).
    #[error("no {kind} `{name}` is declared")]
    NotDeclared {
        /// What was looked up: `"function"`, `"type with a layout"`, ...
        kind: &'static str,
        /// The name that was looked up.
        name: String,
    },

    /// An unknown C type name.
    #[error("unknown C type `{name}`")]
    UnknownType {
        /// The name that was looked up.
        name: String,
    },

    /// A layout path element that does not exist in the layout it was applied to.
    #[error("layout path element {element} not found in {layout}")]
    PathNotFound {
        /// The path element, as text (`.name` or `[index]`).
        element: String,
        /// The layout it was applied to, as text.
        layout: String,
    },

    /// A layout path index past the members of a struct or union, or the elements of a
    /// sequence, it was applied to.
    #[error("layout path index {index} out of range 0..{count} in {layout}")]
    PathIndexOutOfRange {
        /// The index, as given.
        index: usize,
        /// How many members or elements there are (valid indices are `0..count`).
        count: usize,
        /// The layout it was applied to, as text.
        layout: String,
    },

    /// A layout path written as text (`a.b[2].c`) that cannot be parsed.
    #[error("malformed layout path `{path}` at byte {position}: {reason}")]
    MalformedPath {
        /// The whole path, as given.
        path: String,
        /// Byte offset in `path` where the problem is.
        position: usize,
        /// What is wrong there (`unclosed \`[\``, `empty member name`, ...).
        reason: String,
    },

    /// A memory access or slice outside a segment's bounds.
    #[error(
        "out of bounds: access of {access_size} bytes at offset {offset} in a segment of {segment_size} bytes"
    )]
    OutOfBounds {
        /// Byte offset of the access from the segment's start.
        offset: usize,
        /// Size of the access, in bytes.
        access_size: usize,
        /// The segment's size, in bytes.
        segment_size: usize,
    },

    /// An aligned access to an address that is not a multiple of the layout's alignment.
    #[error("misaligned access: address {address:#x} is not a multiple of {alignment} bytes")]
    MisalignedAccess {
        /// The absolute address of the access.
        address: usize,
        /// The required alignment, in bytes.
        alignment: usize,
    },

    /// A string passed to C contains a NUL byte before its end.
    #[error("interior NUL byte at index {index} of a string meant for C")]
    InteriorNul {
        /// Byte index of the first NUL.
        index: usize,
    },

    /// A C string read from a segment has no terminating NUL inside the segment.
    #[error("unterminated C string: no NUL byte between offset {offset} and the segment's end at {segment_size}")]
    UnterminatedString {
        /// Where reading started.
        offset: usize,
        /// The segment's size, in bytes.
        segment_size: usize,
    },

    /// A C string that is not valid UTF-8 where UTF-8 was requested.
    #[error(
        "C string at offset {offset} is not valid UTF-8 (first bad byte at index {valid_up_to})"
    )]
    InvalidUtf8 {
        /// Where the string starts in the segment.
        offset: usize,
        /// Length of the valid UTF-8 prefix, in bytes.
        valid_up_to: usize,
    },

    /// A value of the wrong kind for a layout or parameter.
    #[error("value mismatch at {position}: expected {expected}, found {found}")]
    ValueMismatch {
        /// Where (argument index, field, ...).
        position: String,
        /// The expected kind.
        expected: String,
        /// The kind that was given.
        found: String,
    },

    /// A number that the requested scalar kind cannot represent (a checked conversion such as
    /// [`crate::Value::from_int`]).
    #[error("{value} is out of range for {kind}: expected {range}")]
    OutOfRange {
        /// The rejected number, as text.
        value: String,
        /// The kind it was converted to (`u32`, `i8`, ...).
        kind: String,
        /// The accepted range, e.g. `0..=4294967295`.
        range: String,
    },

    /// An integer argument of another integer kind than its parameter's whose value the
    /// parameter's kind cannot represent (a downcall converts an integer `Value` to its
    /// parameter's integer kind when the value fits: see [`crate::DowncallHandle::invoke`]).
    /// The message gives the kind's range (`expected u64 in 0..=18446744073709551615`).
    #[error(
        "{value} is out of range for argument {argument} of {function}: expected {kind} in {}",
        integer_range_text(kind)
    )]
    ArgumentOutOfRange {
        /// The function: its symbol name in backquotes (`` `memset` ``), or `the function at
        /// 0x...` for a symbol made from an address.
        function: String,
        /// The argument's position, counted from 1 (the capture segment, if any, is 1).
        argument: usize,
        /// The rejected number, as text.
        value: String,
        /// The parameter's kind: `i8`, `u8`, `i16`, `u16`, `i32`, `u32`, `i64` or `u64`.
        kind: &'static str,
    },

    /// A null pointer where memory was to be read (a C string, a pointee).
    #[error("null pointer: {what}")]
    NullPointer {
        /// What was being read through it.
        what: String,
    },

    /// A BufferStack frame was closed while a frame pushed after it is still open
    /// (JDK: `IllegalStateException("Out of order access: frame not top-of-stack")`).
    #[error("frame not top-of-stack")]
    FrameNotTopOfStack,

    /// An allocation did not fit in a bounded allocator (frame, slicing allocator).
    #[error("allocation of {requested} bytes (alignment {alignment}) does not fit: {available} of {capacity} bytes left")]
    AllocatorExhausted {
        /// The requested size, in bytes.
        requested: usize,
        /// The requested alignment, in bytes.
        alignment: usize,
        /// Bytes still free (before alignment padding).
        available: usize,
        /// The allocator's total capacity, in bytes.
        capacity: usize,
    },

    /// The global allocator returned null.
    #[error("out of memory allocating {size} bytes (alignment {alignment})")]
    OutOfMemory {
        /// The requested size, in bytes.
        size: usize,
        /// The requested alignment, in bytes.
        alignment: usize,
    },

    /// A shared library could not be loaded.
    #[error("cannot load library {library}: {reason}")]
    LibraryLoad {
        /// The name or path that was given.
        library: String,
        /// The loader's message, or a hint (e.g. the real soname behind an ld script).
        reason: String,
    },

    /// A symbol was not found.
    #[error("symbol `{symbol}` not found{}", in_where(.library))]
    SymbolNotFound {
        /// The symbol's name (with `@VERSION` when versioned).
        symbol: String,
        /// Where it was looked up, if known.
        library: Option<String>,
    },

    /// A layout nested deeper than [`crate::layout::MAX_NESTING`] levels (a scalar is one
    /// level; each struct, union, sequence or pointer target around it adds one).
    #[error("{what} would be nested {depth} levels deep: at most {max} levels are allowed")]
    NestingTooDeep {
        /// The layout being built (`struct`, `union`, `sequence`, `pointer target`).
        what: String,
        /// The depth it would have had.
        depth: usize,
        /// The bound, [`crate::layout::MAX_NESTING`].
        max: usize,
    },

    /// A function descriptor or linker option that cannot be linked. The message gives the
    /// reason first, then the descriptor cut after
    /// [`Error::MAX_DESCRIPTOR_CHARS`] characters (`…`): a descriptor of many or large
    /// by-value structs can be kilobytes of text.
    ///
    /// ```
    /// use gatun::Error;
    /// let e = Error::InvalidDescriptor {
    ///     descriptor: format!("({})v", vec!["i32"; 500].join(", ")),
    ///     reason: "too many arguments".into(),
    /// };
    /// let text = e.to_string();
    /// assert!(text.starts_with("invalid function descriptor: too many arguments (descriptor: (i32, i32"));
    /// assert!(text.ends_with("…)") && text.len() < 300);
    /// ```
    #[error(
        "invalid function descriptor: {reason} (descriptor: {})",
        shortened(descriptor, Error::MAX_DESCRIPTOR_CHARS)
    )]
    InvalidDescriptor {
        /// The descriptor, as text.
        descriptor: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A call-state name that is not known on any platform.
    #[error("unknown capture state '{name}'; valid: {valid}")]
    UnknownCaptureState {
        /// The rejected name.
        name: String,
        /// The names this platform supports, comma separated.
        valid: String,
    },

    /// A call-state name that exists, but not on this platform.
    #[error("{name} is only available on {platform}")]
    CaptureStateUnavailable {
        /// The state's name, e.g. `GetLastError`.
        name: String,
        /// Where it exists, e.g. `Windows`.
        platform: String,
    },

    /// A wrong number of arguments at invocation (or in a typed view's tuple).
    #[error(
        "wrong argument count: {function} {descriptor} takes {expected} argument{}, {found} given{}",
        plural(*expected),
        capture_hint(*capture, *expected)
    )]
    ArgumentCount {
        /// The function: its symbol name in backquotes (`` `strlen` ``), or `the function at
        /// 0x...` for a symbol made from an address.
        function: String,
        /// The descriptor, as text.
        descriptor: String,
        /// Whether the handle captures call state, so that its first argument is the capture
        /// segment (counted in `expected` and `found`).
        capture: bool,
        /// Expected count.
        expected: usize,
        /// Given count.
        found: usize,
    },

    /// A handle that cannot be adapted (system-call adapter, typed views, ...).
    #[error("cannot adapt handle {handle}: {reason}")]
    Adapt {
        /// The handle's descriptor, as text.
        handle: String,
        /// Why.
        reason: String,
    },
}

// Every upcall closure returns a `Result<Value, Error>`, and the dispatchers read it: a larger
// `Error` makes that result larger and the upcall paths longer (the instruction budget of
// gatun-bench measures them). Keep new variants within the largest existing ones (three
// `String`s, or two and two words).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Error>() <= 80);

/// `""` for 1, `"s"` otherwise: `format!("{n} argument{}", plural(n))`.
impl Error {
    /// At most this many characters of a descriptor are shown in
    /// [`Error::InvalidDescriptor`]'s message (then `…`).
    pub const MAX_DESCRIPTOR_CHARS: usize = 200;
}

/// `text` cut after `max` characters, with `…` when it was cut.
fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn capture_hint(capture: bool, expected: usize) -> String {
    if capture {
        format!(
            " (the first argument is the capture segment, then the descriptor's {})",
            expected.saturating_sub(1)
        )
    } else {
        String::new()
    }
}

/// The range of an integer kind named as `ScalarKind::name` does (`u8` → `0..=255`).
fn integer_range_text(kind: &str) -> String {
    let (lo, hi): (i128, i128) = match kind {
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "u8" => (0, u8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "i64" => (i64::MIN.into(), i64::MAX.into()),
        "u64" => (0, u64::MAX.into()),
        _ => return "its range".into(),
    };
    format!("{lo}..={hi}")
}

fn in_where(library: &Option<String>) -> String {
    match library {
        Some(lib) => format!(" in {lib}"),
        None => String::new(),
    }
}

/// The largest alignment, in bytes, that an allocation may ask for on this target: on Windows
/// 2^30 (1 GiB), because Rust's Windows allocator serves an alignment above 16 by taking
/// `size + alignment` bytes from the process heap (`HeapAlloc`, which commits them), so a
/// 16-byte segment aligned to 2^40 would commit a terabyte (and take seconds); elsewhere
/// unbounded (the Unix allocators reserve such blocks without committing them).
pub(crate) const MAX_ALLOCATION_ALIGNMENT: usize = if cfg!(windows) { 1 << 30 } else { usize::MAX };

/// Validates an allocation request: `byte_alignment` must be a power of two, at most
/// [`MAX_ALLOCATION_ALIGNMENT`], and `byte_size` rounded up to it must not exceed `isize::MAX`
/// (the limit of Rust's allocator).
///
/// # Errors
/// [`Error::InvalidAlignment`], [`Error::OutOfMemory`] (an alignment above
/// [`MAX_ALLOCATION_ALIGNMENT`]) or [`Error::SizeOverflow`].
#[inline]
pub(crate) fn check_size_align(byte_size: usize, byte_alignment: usize) -> Result<()> {
    if !byte_alignment.is_power_of_two() {
        return Err(Error::InvalidAlignment {
            alignment: byte_alignment,
        });
    }
    // Always false off Windows, where the limit is usize::MAX.
    #[allow(clippy::absurd_extreme_comparisons)]
    if byte_alignment > MAX_ALLOCATION_ALIGNMENT {
        return Err(Error::OutOfMemory {
            size: byte_size,
            alignment: byte_alignment,
        });
    }
    if byte_size > isize::MAX as usize - (byte_alignment - 1) {
        return Err(Error::SizeOverflow {
            what: format!(
                "allocation of {byte_size} bytes aligned to {byte_alignment} exceeds isize::MAX"
            ),
        });
    }
    Ok(())
}

/// Formats a list for error messages: `a, b, c`.
pub(crate) fn join<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
