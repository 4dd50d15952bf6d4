//! The argument words of `gatun call` as [`Value`]s: scalars checked against their
//! parameter's type (a number, or the name of a constant of the declarations: an enumeration
//! constant or a macro of the `-i` headers), strings, `[N]` buffers and `&TYPE` out-parameters
//! allocated in the call's arena, by-value structs filled from brace literals
//! ([`super::fill`]), variadic arguments typed by their text, and [`prepare_call`], which
//! builds a whole call.

use gatun::cdecl::{Constant, Declarations, FunctionDecl};
use gatun::layout::{BitField, MemoryLayout, ScalarKind, ValueLayout};
use gatun::linker::{capture_state_layout, LinkerOption};
use gatun::memory::{ConfinedArena, MemorySegment, SegmentAllocator};
use gatun::{FunctionDescriptor, Value};

use super::error::CallError;
use super::fill::fill;
use super::literal::{parse_float, parse_int, parse_literal};
use crate::headers::missing_type_phrase;

/// The largest `[N]` buffer, `&TYPE` out-parameter and by-value argument, in bytes (2^30):
/// each is allocated and zeroed before the call.
pub(super) const MAX_BUFFER_BYTES: usize = 1 << 30;

/// Where an argument's extra memory lives: strings and buffers, allocated from the call arena.
pub(super) struct Buffers<'a> {
    /// The call's arena.
    pub(super) arena: &'a ConfinedArena,
    /// The declarations, for the types of `&TYPE` out-parameters (`type_layout` may define
    /// a tag, so this is the call's own copy).
    pub(super) decls: Declarations,
    /// `(argument index, segment)` of each `[N]` buffer, printed after the call.
    pub(super) shown: Vec<(usize, MemorySegment<'a>)>,
    /// Each `&TYPE` out-parameter, printed after the call.
    pub(super) outs: Vec<Out<'a>>,
}

impl<'a> Buffers<'a> {
    /// No buffers yet; `&TYPE` types are looked up in (a copy of) `decls`.
    pub(super) fn new(arena: &'a ConfinedArena, decls: &Declarations) -> Self {
        Buffers {
            arena,
            decls: decls.clone(),
            shown: Vec::new(),
            outs: Vec::new(),
        }
    }
}

/// A `&TYPE` out-parameter: a zeroed (or initialized) `TYPE` in the call's arena whose
/// address is passed, printed after the call.
#[derive(Debug)]
pub struct Out<'a> {
    /// Argument index (from 0).
    pub index: usize,
    /// The type as written.
    pub ty: String,
    /// The type's layout (size at most 2^30 bytes, never 0).
    pub layout: MemoryLayout,
    /// Whether `TYPE` is a pointer to a character type (printed as the string it points to).
    pub c_string: bool,
    /// The out-parameter's memory: `layout`'s size and alignment.
    pub seg: MemorySegment<'a>,
    /// The bit-fields of `TYPE` when it is a record that has some (printed by name).
    pub bits: Vec<BitField>,
}

/// A call of `gatun call` ready to link and invoke: what [`prepare_call`] built from the
/// argument words. The segments live in the arena given to [`prepare_call`].
#[derive(Debug)]
pub struct PreparedCall<'a> {
    /// The function's descriptor, with the layouts of the variadic arguments of this call
    /// appended.
    pub descriptor: FunctionDescriptor,
    /// The argument values in order (the `errno` capture segment first when asked for).
    pub values: Vec<Value<'a>>,
    /// The linker options: `FirstVariadicArg` for a variadic function, `CaptureCallState`
    /// for `--errno`.
    pub options: Vec<LinkerOption>,
    /// The `errno` capture segment (4 bytes, alignment 4), when asked for.
    pub capture: Option<MemorySegment<'a>>,
    /// `(argument index, segment)` of each `[N]` buffer argument (N bytes, zeroed), printed
    /// after the call.
    pub buffers: Vec<(usize, MemorySegment<'a>)>,
    /// Each `&TYPE` out-parameter, printed after the call.
    pub outs: Vec<Out<'a>>,
}

/// The word that separates the argument words read as literals (`&int`, `[4]`, `{1, 2}`,
/// `NULL`, numbers) from those passed as text: `gatun call`'s `--` (see
/// [`hoist_options`](super::hoist_options), which puts one there when the user typed one).
pub const LITERAL_TEXT_FROM: &str = "--";

/// The argument words before the first [`LITERAL_TEXT_FROM`] (read as literals) and after it
/// (passed as text where a pointer or variadic argument is expected).
///
/// ```
/// use gatun_cli::call::split_argument_words;
/// let words: Vec<String> = ["5", "--", "&int", "--"].map(String::from).into();
/// let (literal, text) = split_argument_words(&words);
/// assert_eq!((literal, text), (&words[..1], &words[2..]));
/// ```
pub fn split_argument_words(args: &[String]) -> (&[String], &[String]) {
    match args.iter().position(|a| a == LITERAL_TEXT_FROM) {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[]),
    }
}

/// Builds the values of a call of `f` (declared in `decls`, which also give the types of
/// `&TYPE` out-parameters) from the argument words `args` as `gatun call` does (see the
/// [module documentation](super) for the literal syntax), allocating strings, buffers,
/// out-parameters and by-value structs in `arena`. A [`LITERAL_TEXT_FROM`] word (`--`) in
/// `args` is no argument: the words after it are passed as text to pointer parameters and
/// as variadic arguments, whatever they look like ([`split_argument_words`]). The fixed
/// arguments are planned first, so a descriptor the linker would reject allocates nothing.
/// Nothing is linked or called.
///
/// A word for a pointer parameter that looks like a literal but is not a valid one is an
/// error, never a string the callee could write past: `&TYPE` whose type is not declared
/// (`&struct stat` without `-i sys/stat.h`, `&itn`), `[N` without its `]`, a brace
/// literal; so is a word that names a type (`int`, `struct stat`) for a pointer to anything
/// but a character type, which looks like an out-parameter without its `&`.
///
/// # Errors
/// A wrong argument count ([`CallError::ArgumentCount`]), a descriptor the ABI's
/// classification rejects (e.g. a by-value struct beyond the stack-argument limit), a
/// non-numeric or out-range argument, a malformed struct literal, an out-parameter type that
/// does not resolve ([`CallError::Unresolved`]), a type name for a non-string pointer
/// ([`CallError::TypeNameForPointer`]), a buffer, out-parameter or by-value argument over
/// 2^30 bytes, or an allocation failure.
pub fn prepare_call<'a>(
    decls: &Declarations,
    f: &FunctionDecl,
    args: &[String],
    errno: bool,
    arena: &'a ConfinedArena,
) -> Result<PreparedCall<'a>, CallError> {
    let (literal, text) = split_argument_words(args);
    let words: Vec<(&str, bool)> = literal
        .iter()
        .map(|w| (w.as_str(), false))
        .chain(text.iter().map(|w| (w.as_str(), true)))
        .collect();
    let fixed = f.descriptor.argument_layouts().len();
    let given = words.len();
    if given < fixed || (f.variadic.is_none() && given > fixed) {
        return Err(CallError::ArgumentCount {
            function: f.name.clone(),
            fixed,
            variadic: f.variadic.is_some(),
            given,
        });
    }
    check_plan(f)?;

    let mut bufs = Buffers::new(arena, decls);
    let mut values: Vec<Value<'a>> = Vec::with_capacity(given + 1);
    for (i, (&(word, as_text), layout)) in words
        .iter()
        .zip(f.descriptor.argument_layouts())
        .enumerate()
    {
        let v = match layout {
            MemoryLayout::Value(v) if v.kind() == ScalarKind::Pointer => {
                if as_text {
                    Value::Segment(bufs.arena.allocate_c_string(word)?)
                } else {
                    if !f.param_is_c_string(i) {
                        check_not_a_type_name(word, i, &bufs.decls)?;
                    }
                    pointer_value(word, i, &mut bufs)?
                }
            }
            MemoryLayout::Value(v) => scalar_value(v.kind(), word, i, &mut bufs)?,
            group => by_value(group, word, i, &mut bufs)?,
        };
        values.push(v);
    }
    let mut extra = Vec::new();
    for (i, &(word, as_text)) in words.iter().enumerate().skip(fixed) {
        let (layout, v) = if as_text {
            let seg = bufs.arena.allocate_c_string(word)?;
            (ValueLayout::ADDRESS, Value::Segment(seg))
        } else {
            variadic_value(word, i, &mut bufs)?
        };
        extra.push(layout);
        values.push(v);
    }
    let mut descriptor: FunctionDescriptor = f.descriptor.clone();
    if !extra.is_empty() {
        descriptor = descriptor.append_argument_layouts(extra);
    }
    let mut options = Vec::new();
    if let Some(n) = f.variadic {
        options.push(LinkerOption::FirstVariadicArg(n));
    }
    let capture = if errno {
        options.push(LinkerOption::CaptureCallState(&["errno"]));
        let seg = arena.allocate_layout(&capture_state_layout())?;
        seg.fill(0);
        values.insert(0, Value::Segment(seg));
        Some(seg)
    } else {
        None
    };
    Ok(PreparedCall {
        descriptor,
        values,
        options,
        capture,
        buffers: bufs.shown,
        outs: bufs.outs,
    })
}

/// `Err` when `word`, given for argument `index` (from 0), a pointer to something other
/// than a character type, names a type (`int`, `struct stat`, `char[4]`): an out-parameter
/// written without its `&`, which passed as a string would let the callee write past it.
fn check_not_a_type_name(word: &str, index: usize, decls: &Declarations) -> Result<(), CallError> {
    let t = word.trim();
    let first = t.split_whitespace().next().unwrap_or("");
    let is_type = matches!(first, "struct" | "union" | "enum")
        || (!t.is_empty()
            && !matches!(t, "NULL" | "null" | "nullptr")
            && !t.starts_with(['&', '[', '{'])
            && decls.clone().type_layout(t).is_ok());
    if is_type {
        return Err(CallError::TypeNameForPointer {
            argument: index + 1,
            text: t.to_string(),
        });
    }
    Ok(())
}

/// Checks `f`'s fixed arguments against the linker's limits before any argument buffer is
/// allocated (a by-value `struct { long a[1 << 40]; }` is an error, not an allocation), with
/// the classification of the host's ABI; other hosts check nothing here.
fn check_plan(f: &FunctionDecl) -> Result<(), CallError> {
    if let Some(abi) = gatun::abi::Abi::host() {
        gatun::abi::plan_for(abi, &f.descriptor, f.variadic)?;
    }
    Ok(())
}

/// Argument `index` (from 0) of struct, union or array type `group`: a zeroed copy in the
/// arena filled from the brace literal `text`.
fn by_value<'a>(
    group: &MemoryLayout,
    text: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<Value<'a>, CallError> {
    let argument = index + 1;
    // Off x86-64 no plan bounds a by-value argument before this allocation.
    if group.byte_size() > MAX_BUFFER_BYTES {
        return Err(CallError::ByValueTooLarge {
            argument,
            size: group.byte_size(),
        });
    }
    let lit = parse_literal(text).map_err(|error| CallError::Literal { argument, error })?;
    let seg = bufs.arena.allocate_layout(group)?;
    seg.fill(0);
    fill(seg, 0, group, &lit, index, bufs)?;
    Ok(Value::Segment(seg))
}

/// Argument `index` (from 0) of scalar type `kind`, from its word `text`: an integer in the
/// type's range, a number for a floating-point type, `true`/`false`/`1`/`0` for `bool`, and
/// for a pointer what [`pointer_value`] accepts.
pub(super) fn scalar_value<'a>(
    kind: ScalarKind,
    text: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<Value<'a>, CallError> {
    let argument = index + 1;
    // A constant the headers define (`O_RDONLY`, `UV_TIMER`) stands for its value.
    let constant = named_constant(text, bufs);
    let int = |min: i128, max: i128| -> Result<i128, CallError> {
        let value = parse_int(text)
            .or_else(|| constant.as_ref().and_then(Constant::as_i128))
            .ok_or_else(|| {
                if parse_float(text).is_some() {
                    // `1.5`, `1e3`, `inf`: a number, but not an integer.
                    CallError::NotAnInteger {
                        argument,
                        text: text.trim().to_string(),
                        kind,
                    }
                } else {
                    CallError::NonNumericInteger {
                        argument,
                        text: text.to_string(),
                        kind,
                    }
                }
            })?;
        if value < min || value > max {
            return Err(CallError::IntegerOutOfRange {
                argument,
                value,
                kind,
                min,
                max,
            });
        }
        Ok(value)
    };
    Ok(match kind {
        ScalarKind::Bool => match (text.trim(), constant.as_ref().and_then(Constant::as_i128)) {
            ("true" | "1", _) | (_, Some(1)) => Value::Bool(true),
            ("false" | "0", _) | (_, Some(0)) => Value::Bool(false),
            _ => {
                return Err(CallError::NotABool {
                    argument,
                    text: text.to_string(),
                })
            }
        },
        ScalarKind::I8 => Value::I8(int(i8::MIN.into(), i8::MAX.into())? as i8),
        ScalarKind::U8 => Value::U8(int(0, u8::MAX.into())? as u8),
        ScalarKind::I16 => Value::I16(int(i16::MIN.into(), i16::MAX.into())? as i16),
        ScalarKind::U16 => Value::U16(int(0, u16::MAX.into())? as u16),
        ScalarKind::I32 => Value::I32(int(i32::MIN.into(), i32::MAX.into())? as i32),
        ScalarKind::U32 => Value::U32(int(0, u32::MAX.into())? as u32),
        ScalarKind::I64 => Value::I64(int(i64::MIN.into(), i64::MAX.into())? as i64),
        ScalarKind::U64 => Value::U64(int(0, u64::MAX.into())? as u64),
        ScalarKind::F32 | ScalarKind::F64 => {
            // Integers in any form `parse_int` accepts (`0x10`, `0b101`) convert to the nearest
            // floating-point value, as a C integer constant does.
            let v = parse_float(text)
                .or_else(|| parse_int(text).map(|i| i as f64))
                .or_else(|| constant.as_ref().and_then(Constant::as_f64))
                .ok_or_else(|| CallError::NonNumeric {
                    argument,
                    text: text.to_string(),
                    kind,
                })?;
            check_float_range(argument, text, v, kind)?;
            if kind == ScalarKind::F32 {
                Value::F32(v as f32)
            } else {
                Value::F64(v)
            }
        }
        ScalarKind::Pointer => pointer_value(text, index, bufs)?,
    })
}

/// The constant `text` names in the call's declarations (an enumeration constant, or a macro
/// of the `-i` headers that expands to a constant), if it is a C identifier naming one.
fn named_constant(text: &str, bufs: &Buffers<'_>) -> Option<Constant> {
    let name = text.trim();
    let is_identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if is_identifier {
        bufs.decls.constant(name)
    } else {
        None
    }
}

/// `Err` when `text` (argument `argument`, counted from 1, converted to `v`, of type `kind`)
/// is a finite number too large for `kind` (`1e999` for a double, `1e39` for a float), which
/// would otherwise silently become an infinity; `inf` and `infinity` (any case, signed) are
/// infinities on purpose.
pub(super) fn check_float_range(
    argument: usize,
    text: &str,
    v: f64,
    kind: ScalarKind,
) -> Result<(), CallError> {
    let word = text
        .trim()
        .trim_start_matches(['-', '+'])
        .to_ascii_lowercase();
    let overflows = match kind {
        ScalarKind::F32 => (v as f32).is_infinite(),
        _ => v.is_infinite(),
    };
    if overflows && word != "inf" && word != "infinity" {
        let (type_name, max) = match kind {
            ScalarKind::F32 => ("float", f64::from(f32::MAX)),
            _ => ("double", f64::MAX),
        };
        return Err(CallError::FloatOutOfRange {
            argument,
            text: text.trim().to_string(),
            type_name,
            max,
        });
    }
    Ok(())
}

/// Argument `index` (from 0) for a pointer parameter: `NULL` (`null`, `nullptr`), a zeroed
/// `[N]` buffer, a `&TYPE` out-parameter, or else the text as a NUL-terminated string. A
/// word starting with `[`, `{` or `&` that is not a valid buffer, out-parameter (a type
/// that does not resolve) or pointer is an error: passed as a string, the callee could
/// write past it.
pub(super) fn pointer_value<'a>(
    text: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<Value<'a>, CallError> {
    if matches!(text, "NULL" | "null" | "nullptr") {
        return Ok(Value::Address(std::ptr::null_mut()));
    }
    // An address or string constant of the headers (`SQLITE_TRANSIENT`, `ZLIB_VERSION`); other
    // constants are no pointers, so their names stay text.
    match named_constant(text, bufs) {
        Some(c @ Constant::Address(_)) => {
            return Ok(c.to_value().unwrap_or(Value::Address(std::ptr::null_mut())))
        }
        Some(Constant::String(bytes)) => {
            let seg = bufs.arena.allocate(bytes.len() + 1, 1)?;
            seg.fill(0);
            seg.copy_from_slice(0, &bytes)?;
            return Ok(Value::Segment(seg));
        }
        _ => {}
    }
    if text.starts_with('[') {
        let n: usize = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .and_then(|n| n.trim().parse().ok())
            .filter(|&n| n <= MAX_BUFFER_BYTES)
            .ok_or_else(|| CallError::BufferSize {
                argument: index + 1,
                text: text.to_string(),
            })?;
        let seg = bufs.arena.allocate(n.max(1), 16)?;
        seg.fill(0);
        bufs.shown.push((index, seg));
        return Ok(Value::Segment(seg));
    }
    if text.starts_with('{') {
        return Err(CallError::StructForPointer {
            argument: index + 1,
        });
    }
    if let Some(spec) = text.strip_prefix('&') {
        return out_parameter(text, spec, index, bufs);
    }
    let seg = bufs.arena.allocate_c_string(text)?;
    Ok(Value::Segment(seg))
}

/// `&TYPE` or `&TYPE=VALUE` (`spec` is the text after the `&`): a zeroed (or initialized)
/// `TYPE` whose address is passed and whose value is printed after the call.
///
/// # Errors
/// [`CallError::Unresolved`] when `TYPE` is not a type with a layout (not declared, a typo,
/// incomplete); as [`fill`] for a bad `VALUE`; size limits.
fn out_parameter<'a>(
    text: &str,
    spec: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<Value<'a>, CallError> {
    let argument = index + 1;
    let (ty, init) = match spec.split_once('=') {
        Some((t, v)) => (t.trim(), Some(v.trim())),
        None => (spec.trim(), None),
    };
    let unresolved = |reason: String| CallError::Unresolved {
        argument,
        text: text.to_string(),
        reason,
    };
    if ty.is_empty() {
        return Err(unresolved(
            "expected a type after `&` (`&int`, `&struct tm`)".into(),
        ));
    }
    let layout = bufs
        .decls
        .type_layout(ty)
        .map_err(|e| unresolved(type_problem(e.message())))?;
    if layout.byte_size() == 0 {
        return Err(CallError::EmptyOutParameter {
            argument,
            ty: ty.to_string(),
        });
    }
    if layout.byte_size() > MAX_BUFFER_BYTES {
        // Allocated and zeroed before the call: bounded as a `[N]` buffer is.
        return Err(CallError::OutParameterTooLarge {
            argument,
            ty: ty.to_string(),
            size: layout.byte_size(),
        });
    }
    let seg = bufs.arena.allocate_layout(&layout)?;
    seg.fill(0);
    if let Some(init) = init {
        let lit = parse_literal(init).map_err(|error| CallError::Literal { argument, error })?;
        fill(seg, 0, &layout, &lit, index, bufs)?;
    }
    let c_string = layout.as_value().map(ValueLayout::kind) == Some(ScalarKind::Pointer)
        && is_c_string_type(&bufs.decls, ty);
    let bits = bufs.decls.bitfields(ty).to_vec();
    bufs.outs.push(Out {
        index,
        ty: ty.to_string(),
        layout,
        c_string,
        seg,
        bits,
    });
    Ok(Value::Segment(seg))
}

/// Why a type did not resolve: the declarations' message, or for a type that is not
/// declared or defined (or an unknown name), that fact and the header to add.
fn type_problem(message: &str) -> String {
    missing_type_phrase(message).unwrap_or_else(|| message.to_string())
}

/// Whether type `ty` is a pointer to a character type (`char *`, `const unsigned char *`, a
/// typedef of `char` then `*`). The declarations record that fact for a function's return
/// type ([`gatun::cdecl::FunctionDecl::returns_c_string`]), so this declares a function
/// returning `ty` in a copy of `decls` and asks it.
fn is_c_string_type(decls: &Declarations, ty: &str) -> bool {
    const PROBE: &str = "__gatun_cli_out_parameter_probe";
    let mut probe = decls.clone();
    probe.add(&format!("{ty} {PROBE}(void);")).is_ok()
        && probe.function(PROBE).is_some_and(|f| f.returns_c_string())
}

/// Variadic argument `index` (from 0), typed by its text: an integer is an `int`, else a
/// `long` (or `unsigned long` beyond `i64`); a floating-point number is a `double`; anything
/// else is what [`pointer_value`] makes of it.
fn variadic_value<'a>(
    text: &str,
    index: usize,
    bufs: &mut Buffers<'a>,
) -> Result<(ValueLayout, Value<'a>), CallError> {
    let argument = index + 1;
    if let Some(c) = named_constant(text, bufs) {
        // A constant passes with its own type, after the default argument promotions (C11
        // §6.5.2.2 ¶7): narrow integers and `_Bool` as `int`, `float` as `double`.
        let promoted = match &c {
            Constant::Bool(_)
            | Constant::I8(_)
            | Constant::U8(_)
            | Constant::I16(_)
            | Constant::U16(_) => c
                .as_i128()
                .and_then(|v| i32::try_from(v).ok())
                .map(Value::I32),
            Constant::F32(v) => Some(Value::F64(f64::from(*v))),
            Constant::String(_) => None,
            other => other.to_value(),
        };
        if let Some(v) = promoted {
            let layout = v
                .scalar_kind()
                .map_or(ValueLayout::ADDRESS, ValueLayout::new);
            return Ok((layout, v));
        }
        if matches!(c, Constant::String(_)) {
            return Ok((ValueLayout::ADDRESS, pointer_value(text, index, bufs)?));
        }
    }
    if let Some(value) = parse_int(text) {
        if let Ok(i) = i32::try_from(value) {
            return Ok((ValueLayout::I32, Value::I32(i)));
        }
        if let Ok(i) = i64::try_from(value) {
            return Ok((ValueLayout::I64, Value::I64(i)));
        }
        if let Ok(u) = u64::try_from(value) {
            return Ok((ValueLayout::U64, Value::U64(u)));
        }
        return Err(CallError::VariadicTooWide { argument, value });
    }
    if let Some(f) = parse_float(text) {
        check_float_range(argument, text, f, ScalarKind::F64)?;
        return Ok((ValueLayout::F64, Value::F64(f)));
    }
    if text.starts_with('{') {
        return Err(CallError::VariadicStruct { argument });
    }
    Ok((ValueLayout::ADDRESS, pointer_value(text, index, bufs)?))
}

#[cfg(test)]
mod tests {
    use gatun::memory::Arena;

    use super::super::prototype::parse_prototype;
    use super::*;

    #[test]
    fn a_huge_by_value_argument_is_an_error_not_an_allocation() {
        // 16 GiB by value: rejected before the arena is asked for it, on every target.
        let (decls, f) = parse_prototype(
            "union u { int a[1LL << 32]; }; int f(union u)",
            &Default::default(),
        )
        .unwrap();
        let arena = Arena::confined();
        let Err(e) = prepare_call(&decls, &f, &["{1}".to_string()], false, &arena) else {
            panic!("a 16 GiB argument is an error");
        };
        if !cfg!(target_arch = "x86_64") {
            let e = e.to_string();
            assert!(e.contains("17179869184 bytes"), "{e}");
        }
    }

    #[test]
    fn floats_beyond_their_type_are_errors_unless_written_as_infinities() {
        let f64_kind = ScalarKind::F64;
        assert!(check_float_range(1, "1e308", 1e308, f64_kind).is_ok());
        assert!(check_float_range(1, "-Infinity", f64::NEG_INFINITY, f64_kind).is_ok());
        let e = check_float_range(1, "1e999", f64::INFINITY, f64_kind).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("`1e999` is out of range for double"), "{e}");
        let e = check_float_range(1, "-1e39", -1e39, ScalarKind::F32).unwrap_err();
        assert!(
            matches!(
                &e,
                CallError::FloatOutOfRange { argument: 1, text, type_name: "float", .. }
                    if text == "-1e39"
            ),
            "{e}"
        );
        assert!(check_float_range(1, "1e38", 1e38, ScalarKind::F32).is_ok());
    }
}
