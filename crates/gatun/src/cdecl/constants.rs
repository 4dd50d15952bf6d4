//! [`Constant`]: the typed value of an enumeration constant or of a macro that expands to a
//! constant expression, as [`Declarations::constant`](super::Declarations::constant) gives it.

use std::fmt;
use std::sync::Arc;

use crate::layout::ScalarKind;
use crate::value::Value;

/// The value of a named C constant, with its C type's kind: an enumeration constant, or an
/// object-like macro whose replacement is a constant expression.
///
/// Integers carry the kind of their C type as [`DataModel::HOST`](crate::layout::DataModel)
/// lays it out: `int` is `I32`, `unsigned int` `U32`, `long` `I64` on LP64 targets and `I32`
/// on Windows, `long long` `I64`, `unsigned long long` `U64`; a cast gives the cast's type
/// (`(unsigned char)1` is `U8`, `(_Bool)1` is `Bool`). An enumeration constant is `int`
/// when its value fits, else its enumeration's type (as GCC types it). `float` constants are
/// `F32`, `double` ones `F64`; address constants (`((void *) 0)`, `(sqlite3_destructor_type)
/// -1`) are `Address`; string literals (adjacent ones concatenated) are `String`, their bytes
/// without the terminating NUL.
///
/// `Send + Sync`, cheap to clone (a string is shared).
///
/// ```
/// use gatun::cdecl::{Constant, Declarations};
///
/// let d = Declarations::parse("enum color { RED, GREEN = 5 };").unwrap();
/// let green = d.constant("GREEN").unwrap();
/// assert_eq!(green, Constant::I32(5));
/// assert_eq!(green.as_i64(), Some(5));
/// assert_eq!(green.to_value(), Some(gatun::Value::I32(5)));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Constant {
    /// A `_Bool`.
    Bool(bool),
    /// An 8-bit signed integer (`signed char`, `char` where it is signed).
    I8(i8),
    /// An 8-bit unsigned integer.
    U8(u8),
    /// A 16-bit signed integer (`short`).
    I16(i16),
    /// A 16-bit unsigned integer.
    U16(u16),
    /// A 32-bit signed integer (`int`; `long` on Windows).
    I32(i32),
    /// A 32-bit unsigned integer.
    U32(u32),
    /// A 64-bit signed integer (`long` on LP64 targets, `long long`).
    I64(i64),
    /// A 64-bit unsigned integer.
    U64(u64),
    /// A `float`.
    F32(f32),
    /// A `double`.
    F64(f64),
    /// An address constant (a pointer type): its numeric value.
    Address(u64),
    /// A `char` string literal: its bytes, without the terminating NUL (it may contain NULs).
    String(Arc<[u8]>),
}

impl Constant {
    /// The scalar kind of the constant's type; `None` for a string.
    ///
    /// ```
    /// use gatun::cdecl::Constant;
    /// use gatun::layout::ScalarKind;
    /// assert_eq!(Constant::U32(7).kind(), Some(ScalarKind::U32));
    /// assert_eq!(Constant::String(b"x"[..].into()).kind(), None);
    /// ```
    pub fn kind(&self) -> Option<ScalarKind> {
        Some(match self {
            Constant::Bool(_) => ScalarKind::Bool,
            Constant::I8(_) => ScalarKind::I8,
            Constant::U8(_) => ScalarKind::U8,
            Constant::I16(_) => ScalarKind::I16,
            Constant::U16(_) => ScalarKind::U16,
            Constant::I32(_) => ScalarKind::I32,
            Constant::U32(_) => ScalarKind::U32,
            Constant::I64(_) => ScalarKind::I64,
            Constant::U64(_) => ScalarKind::U64,
            Constant::F32(_) => ScalarKind::F32,
            Constant::F64(_) => ScalarKind::F64,
            Constant::Address(_) => ScalarKind::Pointer,
            Constant::String(_) => return None,
        })
    }

    /// The constant as a [`Value`] of its kind, to pass to a call; `None` for a string (it
    /// needs memory: allocate it with
    /// [`SegmentAllocator::allocate_c_string`](crate::memory::SegmentAllocator)).
    ///
    /// ```
    /// use gatun::cdecl::Constant;
    /// use gatun::Value;
    /// assert_eq!(Constant::I64(-1).to_value(), Some(Value::I64(-1)));
    /// assert_eq!(Constant::Address(0).to_value(), Some(Value::Address(std::ptr::null_mut())));
    /// ```
    pub fn to_value(&self) -> Option<Value<'static>> {
        Some(match *self {
            Constant::Bool(b) => Value::Bool(b),
            Constant::I8(v) => Value::I8(v),
            Constant::U8(v) => Value::U8(v),
            Constant::I16(v) => Value::I16(v),
            Constant::U16(v) => Value::U16(v),
            Constant::I32(v) => Value::I32(v),
            Constant::U32(v) => Value::U32(v),
            Constant::I64(v) => Value::I64(v),
            Constant::U64(v) => Value::U64(v),
            Constant::F32(v) => Value::F32(v),
            Constant::F64(v) => Value::F64(v),
            // An address constant names no object: a pointer without provenance.
            Constant::Address(a) => Value::Address(std::ptr::without_provenance_mut(a as usize)),
            Constant::String(_) => return None,
        })
    }

    /// The value of an integer or `_Bool` constant (`true` is 1) as `i128`, which holds every
    /// one; `None` for floating, address and string constants.
    ///
    /// ```
    /// use gatun::cdecl::Constant;
    /// assert_eq!(Constant::U64(u64::MAX).as_i128(), Some(i128::from(u64::MAX)));
    /// assert_eq!(Constant::F64(1.0).as_i128(), None);
    /// ```
    pub fn as_i128(&self) -> Option<i128> {
        Some(match *self {
            Constant::Bool(b) => i128::from(b),
            Constant::I8(v) => v.into(),
            Constant::U8(v) => v.into(),
            Constant::I16(v) => v.into(),
            Constant::U16(v) => v.into(),
            Constant::I32(v) => v.into(),
            Constant::U32(v) => v.into(),
            Constant::I64(v) => v.into(),
            Constant::U64(v) => v.into(),
            _ => return None,
        })
    }

    /// The value of an integer or `_Bool` constant if it fits in `i64` (not for
    /// `U64` values over `i64::MAX`); `None` otherwise.
    ///
    /// ```
    /// use gatun::cdecl::Constant;
    /// assert_eq!(Constant::I32(-22).as_i64(), Some(-22));
    /// assert_eq!(Constant::U64(u64::MAX).as_i64(), None);
    /// ```
    pub fn as_i64(&self) -> Option<i64> {
        self.as_i128().and_then(|v| i64::try_from(v).ok())
    }

    /// The value of a floating constant, or of an integer one converted to the nearest
    /// `f64`; `None` for address and string constants.
    ///
    /// ```
    /// use gatun::cdecl::Constant;
    /// assert_eq!(Constant::F32(0.5).as_f64(), Some(0.5));
    /// assert_eq!(Constant::I32(3).as_f64(), Some(3.0));
    /// ```
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Constant::F32(v) => Some(f64::from(v)),
            Constant::F64(v) => Some(v),
            _ => self.as_i128().map(|v| v as f64),
        }
    }

    /// The bytes of a string constant (without the terminating NUL); `None` for other
    /// constants.
    ///
    /// ```
    /// use gatun::cdecl::Constant;
    /// assert_eq!(Constant::String(b"1.3"[..].into()).as_bytes(), Some(&b"1.3"[..]));
    /// ```
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Constant::String(s) => Some(s),
            _ => None,
        }
    }

    /// A string constant as UTF-8 text; `None` for other constants and for strings that are
    /// not UTF-8.
    ///
    /// ```
    /// use gatun::cdecl::Constant;
    /// assert_eq!(Constant::String(b"1.3"[..].into()).as_str(), Some("1.3"));
    /// ```
    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }
}

/// The value as C would write it: integers in decimal, floating values in their shortest
/// round-trip form, addresses in hex (`0x0`), strings as a C string literal with escapes.
///
/// ```
/// use gatun::cdecl::Constant;
/// assert_eq!(Constant::I32(-1).to_string(), "-1");
/// assert_eq!(Constant::F64(0.1).to_string(), "0.1");
/// assert_eq!(Constant::Address(16).to_string(), "0x10");
/// assert_eq!(Constant::String(b"a\"\n"[..].into()).to_string(), r#""a\"\n""#);
/// ```
impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::Bool(b) => write!(f, "{}", i32::from(*b)),
            Constant::F32(v) => write!(f, "{v:?}"),
            Constant::F64(v) => write!(f, "{v:?}"),
            Constant::Address(a) => write!(f, "{a:#x}"),
            Constant::String(s) => {
                f.write_str("\"")?;
                for &b in s.iter() {
                    match b {
                        b'"' => f.write_str("\\\"")?,
                        b'\\' => f.write_str("\\\\")?,
                        b'\n' => f.write_str("\\n")?,
                        b'\t' => f.write_str("\\t")?,
                        b'\r' => f.write_str("\\r")?,
                        0x20..=0x7e => write!(f, "{}", b as char)?,
                        _ => write!(f, "\\{b:03o}")?,
                    }
                }
                f.write_str("\"")
            }
            other => match other.as_i128() {
                Some(v) => write!(f, "{v}"),
                None => Ok(()),
            },
        }
    }
}
