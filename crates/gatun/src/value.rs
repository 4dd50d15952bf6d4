//! Dynamic values ([`Value`]) and the statically typed scalars ([`Scalar`]) that segments read
//! and write.

use std::ffi::c_void;
use std::fmt;

use crate::layout::ScalarKind;
use crate::memory::MemorySegment;

/// One argument or return value of a dynamic call, or a scalar read from a segment.
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

    /// The segment inside a `Segment` value.
    pub fn as_segment(&self) -> Option<MemorySegment<'a>> {
        match *self {
            Value::Segment(s) => Some(s),
            _ => None,
        }
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

/// The tag byte of a `Value` (its `#[repr(C, u8)]` discriminant).
pub(crate) fn value_tag(v: &Value<'_>) -> u8 {
    // SAFETY: `Value` is `#[repr(C, u8)]`: its first byte is the discriminant.
    unsafe { *(v as *const Value<'_>).cast::<u8>() }
}

/// The `Value` tag a scalar parameter of `kind` expects on the value entry.
pub(crate) fn scalar_tag(kind: ScalarKind) -> u8 {
    value_tag(&match kind {
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
    })
}
