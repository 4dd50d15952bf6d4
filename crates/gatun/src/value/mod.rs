//! Dynamic values ([`Value`]) and the statically typed scalars ([`Scalar`]) that segments read
//! and write.

use std::ffi::{c_char, c_void, CStr};
use std::fmt;

use crate::error::{Error, Result};
use crate::layout::ScalarKind;
use crate::memory::MemorySegment;

/// One argument or return value of a dynamic call, or a scalar read from a segment.
///
/// Build one with `From` (`Value::from(5_i32)`, `5u64.into()`, a raw pointer, a
/// [`MemorySegment`]), or with the checked conversions [`Value::from_int`],
/// [`Value::from_float`] and [`Value::convert_to`] when the kind comes from a layout at run
/// time; read one back with the `as_*` accessors.
///
/// ```
/// use gatun::{ScalarKind, Value};
/// let v: Value = 7_u32.into();
/// assert_eq!(v.as_u32(), Some(7));
/// assert_eq!(v.as_i64(), Some(7));
/// // A number whose C type is known only at run time, range-checked once:
/// assert_eq!(Value::from_int(ScalarKind::U32, 7_i64).unwrap(), v);
/// assert!(Value::from_int(ScalarKind::U32, -1_i64).is_err());
/// ```
///
/// `Segment` carries a struct or union by value (its bytes live in the segment) or a memory
/// region passed by address. `Value` is `Copy`, and `!Send`/`!Sync` like the segments it may hold.
/// It is `#[repr(C, u8)]` (24 bytes on 64-bit targets: a tag byte, then the payload at offset 8)
/// so that compiled downcall stubs can read a `&[Value]` directly.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C, u8)]
pub enum Value<'a> {
    /// No value (the result of a `void` function).
    Void,
    /// C `bool`.
    Bool(bool),
    /// 8-bit signed integer.
    I8(i8),
    /// 8-bit unsigned integer.
    U8(u8),
    /// 16-bit signed integer.
    I16(i16),
    /// 16-bit unsigned integer.
    U16(u16),
    /// 32-bit signed integer.
    I32(i32),
    /// 32-bit unsigned integer.
    U32(u32),
    /// 64-bit signed integer.
    I64(i64),
    /// 64-bit unsigned integer.
    U64(u64),
    /// binary32 float.
    F32(f32),
    /// binary64 float.
    F64(f64),
    /// A raw address (a C pointer).
    Address(*mut c_void),
    /// A segment: a struct/union by value, or (for a pointer parameter) its address.
    Segment(MemorySegment<'a>),
}

impl<'a> Value<'a> {
    /// The scalar kind this value carries, or `None` for `Void` and `Segment`.
    pub fn scalar_kind(&self) -> Option<ScalarKind> {
        Some(match self {
            Value::Bool(_) => ScalarKind::Bool,
            Value::I8(_) => ScalarKind::I8,
            Value::U8(_) => ScalarKind::U8,
            Value::I16(_) => ScalarKind::I16,
            Value::U16(_) => ScalarKind::U16,
            Value::I32(_) => ScalarKind::I32,
            Value::U32(_) => ScalarKind::U32,
            Value::I64(_) => ScalarKind::I64,
            Value::U64(_) => ScalarKind::U64,
            Value::F32(_) => ScalarKind::F32,
            Value::F64(_) => ScalarKind::F64,
            Value::Address(_) => ScalarKind::Pointer,
            Value::Void | Value::Segment(_) => return None,
        })
    }

    /// A short name of the variant, for error messages (`i32`, `segment`, `void`, ...).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Void => "void",
            Value::Segment(_) => "segment",
            other => other.scalar_kind().map(ScalarKind::name).unwrap_or("?"),
        }
    }

    /// The value as `i64` if it is an integer, bool or address (addresses as their numeric
    /// value; unsigned 64-bit values are reinterpreted).
    pub fn as_i64(&self) -> Option<i64> {
        Some(match *self {
            Value::Bool(b) => b as i64,
            Value::I8(v) => v as i64,
            Value::U8(v) => v as i64,
            Value::I16(v) => v as i64,
            Value::U16(v) => v as i64,
            Value::I32(v) => v as i64,
            Value::U32(v) => v as i64,
            Value::I64(v) => v,
            Value::U64(v) => v as i64,
            Value::Address(p) => p as usize as i64,
            _ => return None,
        })
    }

    /// The value as `f64` if it is a float.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v as f64),
            Value::F64(v) => Some(v),
            _ => None,
        }
    }

    /// The value as `bool` if it is a `Bool`.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The numeric value of an integer kind (`I8` ..= `U64`; not `Bool` or `Address`).
    pub(crate) fn integer(&self) -> Option<i128> {
        Some(match *self {
            Value::I8(v) => v.into(),
            Value::U8(v) => v.into(),
            Value::I16(v) => v.into(),
            Value::U16(v) => v.into(),
            Value::I32(v) => v.into(),
            Value::U32(v) => v.into(),
            Value::I64(v) => v.into(),
            Value::U64(v) => v.into(),
            _ => return None,
        })
    }

    /// The value as `f32` if it is an `F32` (an `F64` is not narrowed).
    pub fn as_f32(&self) -> Option<f32> {
        match *self {
            Value::F32(v) => Some(v),
            _ => None,
        }
    }

    /// The pointer of an `Address`, or the address of a `Segment`'s first byte (null for
    /// [`MemorySegment::NULL`]).
    pub fn as_address(&self) -> Option<*mut c_void> {
        match *self {
            Value::Address(p) => Some(p),
            Value::Segment(s) => Some(s.as_address()),
            _ => None,
        }
    }

    /// The segment inside a `Segment` value.
    pub fn as_segment(&self) -> Option<MemorySegment<'a>> {
        match *self {
            Value::Segment(s) => Some(s),
            _ => None,
        }
    }
}

macro_rules! integer_accessors {
    ($($(#[$doc:meta])* $name:ident -> $t:ty;)*) => {
        impl Value<'_> {
            $(
                $(#[$doc])*
                ///
                /// Returns `Some` for any integer kind (`I8` ..= `U64`) whose value this type
                /// represents exactly, `None` otherwise (out of range, a float, a bool, an
                /// address, a segment, void): `Value::U8(200).as_i16() == Some(200)`,
                /// `Value::I32(-1).as_u32() == None`.
                pub fn $name(&self) -> Option<$t> {
                    self.integer().and_then(|v| <$t>::try_from(v).ok())
                }
            )*
        }
    };
}

integer_accessors! {
    /// The value as `i8`.
    as_i8 -> i8;
    /// The value as `u8`.
    as_u8 -> u8;
    /// The value as `i16`.
    as_i16 -> i16;
    /// The value as `u16`.
    as_u16 -> u16;
    /// The value as `i32`.
    as_i32 -> i32;
    /// The value as `u32`.
    as_u32 -> u32;
    /// The value as `u64`.
    as_u64 -> u64;
    /// The value as `isize` (C `ptrdiff_t`, `ssize_t`).
    as_isize -> isize;
    /// The value as `usize` (C `size_t`).
    as_usize -> usize;
}

/// The range of an integer kind, as `(min, max)`.
pub(crate) fn integer_range(kind: ScalarKind) -> Option<(i128, i128)> {
    Some(match kind {
        ScalarKind::Bool => (0, 1),
        ScalarKind::I8 => (i8::MIN.into(), i8::MAX.into()),
        ScalarKind::U8 => (0, u8::MAX.into()),
        ScalarKind::I16 => (i16::MIN.into(), i16::MAX.into()),
        ScalarKind::U16 => (0, u16::MAX.into()),
        ScalarKind::I32 => (i32::MIN.into(), i32::MAX.into()),
        ScalarKind::U32 => (0, u32::MAX.into()),
        ScalarKind::I64 => (i64::MIN.into(), i64::MAX.into()),
        ScalarKind::U64 => (0, u64::MAX.into()),
        ScalarKind::Pointer => (0, usize::MAX as i128),
        ScalarKind::F32 | ScalarKind::F64 => return None,
    })
}

impl Value<'static> {
    /// The integer `n` as a value of `kind`, range-checked: the way to turn a number into the
    /// argument a layout asks for without matching `I32`/`U32`/... by hand.
    ///
    /// - Integer kinds take `n` if it lies in the kind's range (`u32`: `0..=4294967295`).
    /// - `Bool` takes 0 and 1; `Pointer` takes `0..=usize::MAX` as an address (an address
    ///   made from a number carries no provenance: pass it to C, do not read through it in Rust).
    /// - `F32` / `F64` take any integer, rounded to the nearest representable value (as C's
    ///   integer-to-floating conversion does).
    ///
    /// ```
    /// use gatun::{ScalarKind, Value};
    /// assert_eq!(Value::from_int(ScalarKind::U16, 65535).unwrap(), Value::U16(65535));
    /// let e = Value::from_int(ScalarKind::I8, 200).unwrap_err();
    /// assert_eq!(e.to_string(), "200 is out of range for i8: expected -128..=127");
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfRange`] naming `n`, the kind and its range.
    pub fn from_int(kind: ScalarKind, n: impl Into<i128>) -> Result<Value<'static>> {
        let n: i128 = n.into();
        if let Some((lo, hi)) = integer_range(kind) {
            if n < lo || n > hi {
                return Err(Error::OutOfRange {
                    value: n.to_string(),
                    kind: kind.name().into(),
                    range: format!("{lo}..={hi}"),
                });
            }
        }
        // Each cast below is in range (checked above) and so exact.
        Ok(match kind {
            ScalarKind::Bool => Value::Bool(n == 1),
            ScalarKind::I8 => Value::I8(n as i8),
            ScalarKind::U8 => Value::U8(n as u8),
            ScalarKind::I16 => Value::I16(n as i16),
            ScalarKind::U16 => Value::U16(n as u16),
            ScalarKind::I32 => Value::I32(n as i32),
            ScalarKind::U32 => Value::U32(n as u32),
            ScalarKind::I64 => Value::I64(n as i64),
            ScalarKind::U64 => Value::U64(n as u64),
            ScalarKind::Pointer => Value::Address(std::ptr::without_provenance_mut(n as usize)),
            ScalarKind::F32 => Value::F32(n as f32),
            ScalarKind::F64 => Value::F64(n as f64),
        })
    }

    /// The number `x` as a value of `kind`, checked.
    ///
    /// - `F64` takes any `x`; `F32` takes `x` rounded to the nearest `f32`, unless a finite `x`
    ///   lies beyond `f32`'s range (C leaves that conversion undefined); NaN and infinities
    ///   pass through.
    /// - Integer kinds and `Bool` take an `x` with no fractional part that lies in the kind's
    ///   range (`3.0` → `3`; `2.5` and `NaN` are errors).
    /// - `Pointer` takes no floating-point number.
    ///
    /// ```
    /// use gatun::{ScalarKind, Value};
    /// assert_eq!(Value::from_float(ScalarKind::I32, 3.0).unwrap(), Value::I32(3));
    /// assert!(Value::from_float(ScalarKind::I32, 2.5).is_err());
    /// assert_eq!(Value::from_float(ScalarKind::F32, 0.5).unwrap(), Value::F32(0.5));
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfRange`] naming `x`, the kind and what it accepts; [`Error::ValueMismatch`]
    /// for `Pointer`.
    pub fn from_float(kind: ScalarKind, x: f64) -> Result<Value<'static>> {
        let out_of_range = |range: String| Error::OutOfRange {
            value: x.to_string(),
            kind: kind.name().into(),
            range,
        };
        match kind {
            ScalarKind::F64 => Ok(Value::F64(x)),
            ScalarKind::F32 => {
                let y = x as f32;
                if x.is_finite() && !y.is_finite() {
                    return Err(out_of_range(format!("a magnitude of at most {}", f32::MAX)));
                }
                Ok(Value::F32(y))
            }
            ScalarKind::Pointer => Err(Error::ValueMismatch {
                position: format!("conversion of {x}"),
                expected: "an integer (an address)".into(),
                found: "f64".into(),
            }),
            _ => {
                let (lo, hi) = integer_range(kind).expect("an integer kind");
                // Every integer kind's bounds are within ±2^64, where f64 -> i128 is exact for
                // integral values; the comparison in f64 is exact as well for integral x.
                if x.fract() != 0.0 || !x.is_finite() || x < lo as f64 || x > hi as f64 {
                    return Err(out_of_range(format!("an integer in {lo}..={hi}")));
                }
                Value::from_int(kind, x as i128)
            }
        }
    }
}

impl<'a> Value<'a> {
    /// This value as a value of `kind`, checked: integers by [`Value::from_int`] (so `I64(5)`
    /// becomes `U32(5)`, `I64(-1)` is an error), floats by [`Value::from_float`], a `Bool` as
    /// 0 or 1, an `Address` to `Pointer` only, a `Segment` to `Pointer` as its address. A value
    /// already of `kind` is returned as it is.
    ///
    /// ```
    /// use gatun::{ScalarKind, Value};
    /// assert_eq!(Value::I64(5).convert_to(ScalarKind::U32).unwrap(), Value::U32(5));
    /// assert_eq!(Value::U8(2).convert_to(ScalarKind::F64).unwrap(), Value::F64(2.0));
    /// assert!(Value::I64(-1).convert_to(ScalarKind::U32).is_err());
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfRange`] as above; [`Error::ValueMismatch`] for `Void`, for an `Address`
    /// or `Segment` converted to a number, and for a number converted from a `Segment`.
    pub fn convert_to(&self, kind: ScalarKind) -> Result<Value<'a>> {
        if self.scalar_kind() == Some(kind) {
            return Ok(*self);
        }
        let mismatch = || Error::ValueMismatch {
            position: "conversion".into(),
            expected: format!("a value convertible to {kind}"),
            found: self.kind_name().into(),
        };
        match *self {
            Value::Bool(b) => Value::from_int(kind, b as i32),
            Value::F32(x) => Value::from_float(kind, x.into()),
            Value::F64(x) => Value::from_float(kind, x),
            Value::Segment(s) if kind == ScalarKind::Pointer => Ok(Value::Address(s.as_address())),
            _ => match self.integer() {
                Some(n) => Value::from_int(kind, n),
                None => Err(mismatch()),
            },
        }
    }

    /// The NUL-terminated string at this address (a `char *` result or out-parameter) as a
    /// `&CStr`, without copying. For a `Segment` value the string must end within the segment.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Value;
    /// let arena = Arena::confined();
    /// let s = arena.allocate_c_string("hello").unwrap();
    /// let p = Value::Address(s.as_address());
    /// // SAFETY: `p` points to a NUL-terminated string that lives (unchanged) as long as `arena`.
    /// let c = unsafe { p.as_c_str() }.unwrap();
    /// assert_eq!(c.to_str(), Ok("hello"));
    /// ```
    ///
    /// # Errors
    /// [`Error::NullPointer`] for a null address; [`Error::ValueMismatch`] for a value that is
    /// not an `Address` or `Segment`; [`Error::UnterminatedString`] for a segment with no NUL.
    ///
    /// # Safety
    /// For an `Address`: it must point to a NUL-terminated string, readable up to and including
    /// its NUL and not written, for all of `'s` (the conditions of [`CStr::from_ptr`]). For a
    /// `Segment`: `'s` must not outlive the segment's owner, and its bytes must not be written
    /// during `'s`.
    pub unsafe fn as_c_str<'s>(&self) -> Result<&'s CStr> {
        match *self {
            Value::Address(p) if p.is_null() => Err(null_string()),
            // SAFETY: the caller's promise (a readable, unchanging NUL-terminated string).
            Value::Address(p) => Ok(unsafe { CStr::from_ptr(p.cast::<c_char>()) }),
            Value::Segment(s) => {
                let bytes: &'s [u8] = if s.is_empty() {
                    &[]
                } else {
                    // SAFETY: the segment's bytes are readable (its invariant) and, by the
                    // caller's promise, allocated and not written during 's.
                    unsafe { std::slice::from_raw_parts(s.as_ptr(), s.byte_size()) }
                };
                CStr::from_bytes_until_nul(bytes).map_err(|_| Error::UnterminatedString {
                    offset: 0,
                    segment_size: s.byte_size(),
                })
            }
            _ => Err(not_a_pointer(self)),
        }
    }

    /// As [`Value::as_c_str`], but reads at most `max_len` bytes at the address: a string with
    /// no NUL among them is an error, so a missing terminator costs at most `max_len` bytes of
    /// reading instead of running off into unrelated memory.
    ///
    /// # Errors
    /// As [`Value::as_c_str`]; [`Error::UnterminatedString`] (with `segment_size` = `max_len`)
    /// when no NUL lies within `max_len` bytes.
    ///
    /// # Safety
    /// For an `Address`: the bytes from it up to its first NUL, or `max_len` bytes if that
    /// comes first, must be readable and not written for all of `'s`. For a `Segment`: as
    /// [`Value::as_c_str`].
    pub unsafe fn as_c_str_within<'s>(&self, max_len: usize) -> Result<&'s CStr> {
        match *self {
            Value::Address(p) if p.is_null() => Err(null_string()),
            Value::Address(p) => {
                let p = p.cast::<u8>().cast_const();
                for i in 0..max_len {
                    // SAFETY: bytes before the first NUL (and within max_len) are readable by
                    // the caller's promise; we stop at the first NUL.
                    if unsafe { p.add(i).read() } == 0 {
                        // SAFETY: p..=p+i is readable, unchanging for 's and ends in its only NUL.
                        let bytes = unsafe { std::slice::from_raw_parts(p, i + 1) };
                        return Ok(CStr::from_bytes_with_nul(bytes).expect("one NUL, at the end"));
                    }
                }
                Err(Error::UnterminatedString {
                    offset: 0,
                    segment_size: max_len,
                })
            }
            // SAFETY: forwarded; a segment is bounded by its own size.
            Value::Segment(s) => unsafe {
                Value::Segment(s.slice(0, s.byte_size().min(max_len))?).as_c_str()
            },
            _ => Err(not_a_pointer(self)),
        }
    }

    /// The NUL-terminated UTF-8 string at this address, copied into a `String`: one call for
    /// a `char *` result.
    ///
    /// ```
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::Value;
    /// let arena = Arena::confined();
    /// let p = Value::Address(arena.allocate_c_string("héllo").unwrap().as_address());
    /// // SAFETY: a NUL-terminated string owned by `arena`.
    /// assert_eq!(unsafe { p.read_c_string() }.unwrap(), "héllo");
    /// ```
    ///
    /// # Errors
    /// As [`Value::as_c_str`]; [`Error::InvalidUtf8`] if the bytes are not UTF-8.
    ///
    /// # Safety
    /// As [`Value::as_c_str`], for the duration of the call.
    pub unsafe fn read_c_string(&self) -> Result<String> {
        // SAFETY: forwarded; the borrow ends inside this call.
        let c = unsafe { self.as_c_str() }?;
        c.to_str()
            .map(str::to_owned)
            .map_err(|e| Error::InvalidUtf8 {
                offset: 0,
                valid_up_to: e.valid_up_to(),
            })
    }
}

fn null_string() -> Error {
    Error::NullPointer {
        what: "reading a C string".into(),
    }
}

fn not_a_pointer(v: &Value<'_>) -> Error {
    Error::ValueMismatch {
        position: "C string".into(),
        expected: "an address or a segment".into(),
        found: v.kind_name().into(),
    }
}

macro_rules! from_scalar {
    ($($t:ty => $variant:ident;)*) => {$(
        impl From<$t> for Value<'_> {
            #[inline]
            fn from(v: $t) -> Self {
                Value::$variant(v as _)
            }
        }
    )*};
}

from_scalar! {
    bool => Bool;
    i8 => I8;
    u8 => U8;
    i16 => I16;
    u16 => U16;
    i32 => I32;
    u32 => U32;
    i64 => I64;
    u64 => U64;
    f32 => F32;
    f64 => F64;
}

#[cfg(target_pointer_width = "64")]
from_scalar! {
    isize => I64;
    usize => U64;
}

impl<T> From<*mut T> for Value<'_> {
    /// `Value::Address`.
    #[inline]
    fn from(p: *mut T) -> Self {
        Value::Address(p.cast())
    }
}

impl<T> From<*const T> for Value<'_> {
    /// `Value::Address`.
    #[inline]
    fn from(p: *const T) -> Self {
        Value::Address(p.cast_mut().cast())
    }
}

impl<'a> From<MemorySegment<'a>> for Value<'a> {
    /// `Value::Segment`: a struct by value, or the segment's address for a pointer parameter.
    #[inline]
    fn from(s: MemorySegment<'a>) -> Self {
        Value::Segment(s)
    }
}

impl<'a> From<&MemorySegment<'a>> for Value<'a> {
    /// `Value::Segment`.
    #[inline]
    fn from(s: &MemorySegment<'a>) -> Self {
        Value::Segment(*s)
    }
}

impl From<()> for Value<'_> {
    /// `Value::Void`.
    #[inline]
    fn from(_: ()) -> Self {
        Value::Void
    }
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Void => f.write_str("void"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::I8(v) => write!(f, "{v}"),
            Value::U8(v) => write!(f, "{v}"),
            Value::I16(v) => write!(f, "{v}"),
            Value::U16(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Address(p) => write!(f, "{:p}", *p),
            Value::Segment(s) => write!(f, "{s:?}"),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is exactly one C scalar: `bool`, `i8`..`i64`, `u8`..`u64`, `isize`,
/// `usize`, `f32`, `f64`, `*const T`, `*mut T`. Sealed: gatun relies on `KIND`'s size being
/// `size_of::<Self>()` and on every bit pattern but bool's being valid.
///
/// ```
/// use gatun::memory::{Arena, SegmentAllocator};
/// use gatun::{Scalar, ScalarKind, Value};
/// fn describe<T: Scalar>() -> (ScalarKind, usize) {
///     (T::KIND, T::KIND.byte_size())
/// }
/// assert_eq!(describe::<u16>(), (ScalarKind::U16, 2));
/// assert_eq!(5_i32.into_value(), Value::I32(5));
/// let arena = Arena::confined();
/// let seg = arena.allocate_from(1.5_f32).unwrap(); // any Scalar goes into a segment
/// assert_eq!(seg.get::<f32>(0).unwrap(), 1.5);
/// ```
pub trait Scalar: Copy + sealed::Sealed + 'static {
    /// The scalar kind (size, alignment, class) of `Self`.
    const KIND: ScalarKind;

    /// Reads `Self` from `ptr` (no alignment requirement). A `bool` reads any non-zero byte
    /// as `true`, so foreign bytes can never make an invalid `bool`.
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `size_of::<Self>()` bytes.
    unsafe fn read_from(ptr: *const u8) -> Self;

    /// Writes `self` to `ptr` (no alignment requirement).
    ///
    /// # Safety
    /// `ptr` must be valid for writes of `size_of::<Self>()` bytes.
    unsafe fn write_to(self, ptr: *mut u8);

    /// The dynamic value of `self`.
    fn into_value(self) -> Value<'static>;

    /// Converts a dynamic value of exactly the same kind back (no numeric conversion).
    fn from_value(value: &Value<'_>) -> Option<Self>;
}

macro_rules! scalar_impl {
    ($($t:ty => $kind:ident, $variant:ident;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const KIND: ScalarKind = ScalarKind::$kind;
            #[inline(always)]
            unsafe fn read_from(ptr: *const u8) -> Self {
                // SAFETY: the caller guarantees `ptr` is readable for size_of::<Self>() bytes;
                // every bit pattern is a valid `$t`.
                unsafe { ptr.cast::<$t>().read_unaligned() }
            }
            #[inline(always)]
            unsafe fn write_to(self, ptr: *mut u8) {
                // SAFETY: the caller guarantees `ptr` is writable for size_of::<Self>() bytes.
                unsafe { ptr.cast::<$t>().write_unaligned(self) }
            }
            #[inline]
            fn into_value(self) -> Value<'static> {
                Value::$variant(self as _)
            }
            #[inline]
            fn from_value(value: &Value<'_>) -> Option<Self> {
                match *value {
                    Value::$variant(v) => Some(v as $t),
                    _ => None,
                }
            }
        }
    )*};
}

scalar_impl! {
    i8 => I8, I8;
    u8 => U8, U8;
    i16 => I16, I16;
    u16 => U16, U16;
    i32 => I32, I32;
    u32 => U32, U32;
    i64 => I64, I64;
    u64 => U64, U64;
    f32 => F32, F32;
    f64 => F64, F64;
}

#[cfg(target_pointer_width = "64")]
scalar_impl! {
    isize => I64, I64;
    usize => U64, U64;
}

impl sealed::Sealed for bool {}
impl Scalar for bool {
    const KIND: ScalarKind = ScalarKind::Bool;
    #[inline(always)]
    unsafe fn read_from(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees one readable byte; read as u8 so any byte is valid.
        unsafe { ptr.read() != 0 }
    }
    #[inline(always)]
    unsafe fn write_to(self, ptr: *mut u8) {
        // SAFETY: the caller guarantees one writable byte.
        unsafe { ptr.write(self as u8) }
    }
    fn into_value(self) -> Value<'static> {
        Value::Bool(self)
    }
    fn from_value(value: &Value<'_>) -> Option<Self> {
        match *value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
}

impl<T: 'static> sealed::Sealed for *mut T {}
impl<T: 'static> Scalar for *mut T {
    const KIND: ScalarKind = ScalarKind::Pointer;
    #[inline(always)]
    unsafe fn read_from(ptr: *const u8) -> Self {
        // SAFETY: the caller guarantees pointer-sized readable memory; any bits are a valid
        // raw pointer.
        unsafe { ptr.cast::<*mut T>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn write_to(self, ptr: *mut u8) {
        // SAFETY: the caller guarantees pointer-sized writable memory.
        unsafe { ptr.cast::<*mut T>().write_unaligned(self) }
    }
    fn into_value(self) -> Value<'static> {
        Value::Address(self.cast())
    }
    fn from_value(value: &Value<'_>) -> Option<Self> {
        match *value {
            Value::Address(p) => Some(p.cast()),
            _ => None,
        }
    }
}

impl<T: 'static> sealed::Sealed for *const T {}
impl<T: 'static> Scalar for *const T {
    const KIND: ScalarKind = ScalarKind::Pointer;
    #[inline(always)]
    unsafe fn read_from(ptr: *const u8) -> Self {
        // SAFETY: as for `*mut T`.
        unsafe { ptr.cast::<*const T>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn write_to(self, ptr: *mut u8) {
        // SAFETY: as for `*mut T`.
        unsafe { ptr.cast::<*const T>().write_unaligned(self) }
    }
    fn into_value(self) -> Value<'static> {
        Value::Address(self as *mut c_void)
    }
    fn from_value(value: &Value<'_>) -> Option<Self> {
        match *value {
            Value::Address(p) => Some(p.cast_const().cast()),
            _ => None,
        }
    }
}

impl Value<'_> {
    /// The 64-bit register image of this value as a scalar of `kind` — the one Value → bits
    /// conversion of the call layer (downcall arguments on the interpreted path, upcall
    /// returns): small integers sign- or zero-extended to 64 bits by their signedness, a
    /// `bool` as 0 or 1, an `f32` in the low 32 bits, an `f64` as its bits, a pointer from
    /// `Address` or `Segment` (its address). `None` if the value is not of that kind (`Void`
    /// included).
    #[inline]
    pub(crate) fn scalar_bits(&self, kind: ScalarKind) -> Option<u64> {
        use ScalarKind as K;
        let (found, bits) = match *self {
            Value::Bool(b) => (K::Bool, b as u64),
            Value::I8(x) => (K::I8, x as i64 as u64),
            Value::U8(x) => (K::U8, x as u64),
            Value::I16(x) => (K::I16, x as i64 as u64),
            Value::U16(x) => (K::U16, x as u64),
            Value::I32(x) => (K::I32, x as i64 as u64),
            Value::U32(x) => (K::U32, x as u64),
            Value::I64(x) => (K::I64, x as u64),
            Value::U64(x) => (K::U64, x),
            Value::F32(x) => (K::F32, x.to_bits() as u64),
            Value::F64(x) => (K::F64, x.to_bits()),
            Value::Address(p) => (K::Pointer, p as usize as u64),
            Value::Segment(s) => (K::Pointer, s.address() as u64),
            Value::Void => return None,
        };
        (found == kind).then_some(bits)
    }
}

impl Value<'static> {
    /// The value of a scalar of `kind` from its 64-bit register image — the one bits → Value
    /// conversion of the call layer (downcall returns, upcall arguments): truncated to the
    /// declared width and extended by signedness; a `bool` is `byte != 0`.
    #[inline(always)]
    pub(crate) fn from_scalar_bits(kind: ScalarKind, bits: u64) -> Value<'static> {
        match kind {
            ScalarKind::Bool => Value::Bool(bits as u8 != 0),
            ScalarKind::I8 => Value::I8(bits as i8),
            ScalarKind::U8 => Value::U8(bits as u8),
            ScalarKind::I16 => Value::I16(bits as i16),
            ScalarKind::U16 => Value::U16(bits as u16),
            ScalarKind::I32 => Value::I32(bits as i32),
            ScalarKind::U32 => Value::U32(bits as u32),
            ScalarKind::I64 => Value::I64(bits as i64),
            ScalarKind::U64 => Value::U64(bits),
            ScalarKind::F32 => Value::F32(f32::from_bits(bits as u32)),
            ScalarKind::F64 => Value::F64(f64::from_bits(bits)),
            ScalarKind::Pointer => Value::Address(bits as usize as *mut c_void),
        }
    }
}

/// The tag byte of a `Value` (its `#[repr(C, u8)]` discriminant).
pub(crate) fn value_tag(v: &Value<'_>) -> u8 {
    // SAFETY: `Value` is `#[repr(C, u8)]`: its first byte is the discriminant.
    unsafe { *(v as *const Value<'_>).cast::<u8>() }
}

/// The first two words of the `Value` of tag `tag` (a scalar variant's or `Value::Void`'s)
/// whose payload is the 64-bit register image `bits` of that kind (ignored for `Void`): the
/// words that code building a `Value` in place writes. `Value` is `#[repr(C, u8)]`: the tag is
/// byte 0 of word 0 and a scalar variant's field the first bytes of word 1 (the rest of both
/// words is padding). On a little-endian target those are the words' low bytes, so the words
/// are `tag` and `bits` as they are; on a big-endian target they are the high bytes, so the tag
/// goes to the top byte of word 0 and the image's low bytes (the value at its kind's width) to
/// the top of word 1.
#[inline(always)]
pub(crate) fn scalar_words(tag: u8, bits: u64) -> [u64; 2] {
    if cfg!(target_endian = "little") {
        [u64::from(tag), bits]
    } else {
        let width = ScalarKind::ALL
            .into_iter()
            .find(|&k| scalar_tag(k) == tag)
            .map_or(0, |k| k.byte_size());
        let payload = match width {
            0 => 0,
            w => bits << (64 - 8 * w),
        };
        [u64::from(tag) << 56, payload]
    }
}

/// The `Value` tag a scalar parameter of `kind` expects on the value entry.
pub(crate) fn scalar_tag(kind: ScalarKind) -> u8 {
    value_tag(&zero_of(kind))
}

/// The zero `Value` of `kind` (`false`, `0`, `0.0`, a null address).
pub(crate) fn zero_of(kind: ScalarKind) -> Value<'static> {
    match kind {
        ScalarKind::Bool => Value::Bool(false),
        ScalarKind::I8 => Value::I8(0),
        ScalarKind::U8 => Value::U8(0),
        ScalarKind::I16 => Value::I16(0),
        ScalarKind::U16 => Value::U16(0),
        ScalarKind::I32 => Value::I32(0),
        ScalarKind::U32 => Value::U32(0),
        ScalarKind::I64 => Value::I64(0),
        ScalarKind::U64 => Value::U64(0),
        ScalarKind::F32 => Value::F32(0.0),
        ScalarKind::F64 => Value::F64(0.0),
        ScalarKind::Pointer => Value::Address(std::ptr::null_mut()),
    }
}

#[cfg(test)]
mod tests;
