//! Scalar layouts: [`ScalarKind`] (the carrier of a value) and [`ValueLayout`].

use std::fmt;
use std::sync::Arc;

use super::{MemoryLayout, PointerTarget};
use crate::error::{Error, Result};

/// The machine representation of a scalar: its width in bytes, integer or floating point,
/// signedness. C type names map onto these through [`super::DataModel`].
///
/// Sizes are fixed (independent of the platform); only `Pointer` is `size_of::<usize>()` bytes
/// (8 on x86-64 and AArch64).
///
/// ```
/// use gatun::ScalarKind;
/// assert_eq!(ScalarKind::U16.byte_size(), 2);
/// assert!(ScalarKind::I32.is_signed() && !ScalarKind::U32.is_signed());
/// assert!(ScalarKind::F64.is_float());
/// assert_eq!(ScalarKind::Pointer.name(), "ptr");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarKind {
    /// C `bool` / `_Bool`: 1 byte holding 0 or 1.
    Bool,
    /// Signed 8-bit integer (`signed char`, `int8_t`; `char` on x86-64 Linux).
    I8,
    /// Unsigned 8-bit integer (`unsigned char`, `uint8_t`).
    U8,
    /// Signed 16-bit integer (`short`).
    I16,
    /// Unsigned 16-bit integer (`unsigned short`).
    U16,
    /// Signed 32-bit integer (`int`).
    I32,
    /// Unsigned 32-bit integer (`unsigned int`).
    U32,
    /// Signed 64-bit integer (`long long`; `long` on LP64).
    I64,
    /// Unsigned 64-bit integer (`unsigned long long`; `size_t` on 64-bit targets).
    U64,
    /// IEEE 754 binary32 (`float`).
    F32,
    /// IEEE 754 binary64 (`double`).
    F64,
    /// A data or function pointer (`void *`), `size_of::<usize>()` bytes.
    Pointer,
}

impl ScalarKind {
    /// Every kind, in declaration order.
    pub const ALL: [ScalarKind; 12] = [
        ScalarKind::Bool,
        ScalarKind::I8,
        ScalarKind::U8,
        ScalarKind::I16,
        ScalarKind::U16,
        ScalarKind::I32,
        ScalarKind::U32,
        ScalarKind::I64,
        ScalarKind::U64,
        ScalarKind::F32,
        ScalarKind::F64,
        ScalarKind::Pointer,
    ];

    /// Size in bytes.
    ///
    /// ```
    /// use gatun::ScalarKind;
    /// assert_eq!(ScalarKind::Bool.byte_size(), 1);
    /// assert_eq!(ScalarKind::F32.byte_size(), 4);
    /// assert_eq!(ScalarKind::Pointer.byte_size(), std::mem::size_of::<usize>());
    /// ```
    #[inline]
    pub const fn byte_size(self) -> usize {
        match self {
            ScalarKind::Bool | ScalarKind::I8 | ScalarKind::U8 => 1,
            ScalarKind::I16 | ScalarKind::U16 => 2,
            ScalarKind::I32 | ScalarKind::U32 | ScalarKind::F32 => 4,
            ScalarKind::I64 | ScalarKind::U64 | ScalarKind::F64 => 8,
            ScalarKind::Pointer => std::mem::size_of::<usize>(),
        }
    }

    /// Natural alignment in bytes (equal to the size on every supported target).
    ///
    /// ```
    /// use gatun::ScalarKind;
    /// assert_eq!(ScalarKind::I16.natural_alignment(), 2);
    /// assert_eq!(ScalarKind::F64.natural_alignment(), 8);
    /// ```
    #[inline]
    pub const fn natural_alignment(self) -> usize {
        self.byte_size()
    }

    /// `true` for `F32` and `F64`.
    ///
    /// ```
    /// use gatun::ScalarKind;
    /// assert!(ScalarKind::F32.is_float());
    /// assert!(!ScalarKind::I64.is_float());
    /// ```
    #[inline]
    pub const fn is_float(self) -> bool {
        matches!(self, ScalarKind::F32 | ScalarKind::F64)
    }

    /// `true` for the signed integer kinds.
    ///
    /// ```
    /// use gatun::ScalarKind;
    /// assert!(ScalarKind::I8.is_signed());
    /// assert!(!ScalarKind::U8.is_signed() && !ScalarKind::Bool.is_signed() && !ScalarKind::F64.is_signed());
    /// ```
    #[inline]
    pub const fn is_signed(self) -> bool {
        matches!(
            self,
            ScalarKind::I8 | ScalarKind::I16 | ScalarKind::I32 | ScalarKind::I64
        )
    }

    /// `true` for bool, the integer kinds and pointers (everything passed in integer registers).
    ///
    /// ```
    /// use gatun::ScalarKind;
    /// assert!(ScalarKind::Pointer.is_integral() && ScalarKind::Bool.is_integral());
    /// assert!(!ScalarKind::F32.is_integral());
    /// ```
    #[inline]
    pub const fn is_integral(self) -> bool {
        !self.is_float()
    }

    /// A short name: `bool`, `i8` .. `u64`, `f32`, `f64`, `ptr`.
    ///
    /// ```
    /// use gatun::ScalarKind;
    /// assert_eq!(ScalarKind::U64.name(), "u64");
    /// assert_eq!(ScalarKind::Bool.to_string(), ScalarKind::Bool.name());
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ScalarKind::Bool => "bool",
            ScalarKind::I8 => "i8",
            ScalarKind::U8 => "u8",
            ScalarKind::I16 => "i16",
            ScalarKind::U16 => "u16",
            ScalarKind::I32 => "i32",
            ScalarKind::U32 => "u32",
            ScalarKind::I64 => "i64",
            ScalarKind::U64 => "u64",
            ScalarKind::F32 => "f32",
            ScalarKind::F64 => "f64",
            ScalarKind::Pointer => "ptr",
        }
    }
}

impl fmt::Display for ScalarKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The layout of one scalar value (Java's `ValueLayout`): a [`ScalarKind`], an alignment, an
/// optional name and, for pointers, an optional [`PointerTarget`] (Java's `AddressLayout
/// .withTargetLayout`, attached with the `unsafe` [`ValueLayout::with_target`]).
///
/// Byte order is always the platform's native order. The size is `kind.byte_size()`; the
/// alignment defaults to the natural one and can be lowered for packed structs with
/// [`ValueLayout::with_byte_alignment`].
///
/// `ValueLayout` is cheap to clone (the target is behind an `Arc`) and `Send + Sync`.
///
/// ```
/// use gatun::{ScalarKind, ValueLayout};
/// let x = ValueLayout::F64.with_name("x");
/// assert_eq!((x.byte_size(), x.byte_alignment(), x.name()), (8, 8, Some("x")));
/// // A member of a packed struct: alignment lowered to 1.
/// let packed = ValueLayout::I32.with_byte_alignment(1).unwrap();
/// assert!(!packed.is_naturally_aligned());
/// assert_eq!(ValueLayout::new(ScalarKind::U8), ValueLayout::U8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValueLayout {
    kind: ScalarKind,
    byte_alignment: usize,
    name: Option<Arc<str>>,
    target: Option<Arc<PointerTarget>>,
}

macro_rules! value_consts {
    ($($(#[$doc:meta])* $name:ident = $kind:ident;)*) => {
        $(
            $(#[$doc])*
            pub const $name: ValueLayout = ValueLayout {
                kind: ScalarKind::$kind,
                byte_alignment: ScalarKind::$kind.natural_alignment(),
                name: None,
                target: None,
            };
        )*
    };
}

impl ValueLayout {
    value_consts! {
        /// C `bool`: 1 byte, alignment 1.
        BOOL = Bool;
        /// `int8_t`: 1 byte, alignment 1.
        I8 = I8;
        /// `uint8_t`: 1 byte, alignment 1.
        U8 = U8;
        /// `int16_t`: 2 bytes, alignment 2.
        I16 = I16;
        /// `uint16_t`: 2 bytes, alignment 2.
        U16 = U16;
        /// `int32_t`: 4 bytes, alignment 4.
        I32 = I32;
        /// `uint32_t`: 4 bytes, alignment 4.
        U32 = U32;
        /// `int64_t`: 8 bytes, alignment 8.
        I64 = I64;
        /// `uint64_t`: 8 bytes, alignment 8.
        U64 = U64;
        /// `float`: 4 bytes, alignment 4.
        F32 = F32;
        /// `double`: 8 bytes, alignment 8.
        F64 = F64;
        /// A pointer without a target layout: `size_of::<usize>()` bytes, same alignment.
        ADDRESS = Pointer;
    }

    /// A layout of `kind` with its natural alignment and no name.
    ///
    /// ```
    /// use gatun::{ScalarKind, ValueLayout};
    /// let l = ValueLayout::new(ScalarKind::F32);
    /// assert_eq!((l.byte_size(), l.byte_alignment(), l.name()), (4, 4, None));
    /// assert_eq!(l, ValueLayout::F32);
    /// ```
    #[inline]
    pub const fn new(kind: ScalarKind) -> ValueLayout {
        ValueLayout {
            kind,
            byte_alignment: kind.natural_alignment(),
            name: None,
            target: None,
        }
    }

    /// A pointer to one object of layout `target` (Java's
    /// `ADDRESS.withTargetLayout(target)`): `ValueLayout::ADDRESS.with_target(
    /// PointerTarget::Layout(target))`. Reading a pointer through it gives a segment of
    /// `target.byte_size()` bytes.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// let point = MemoryLayout::c_struct([ValueLayout::I32, ValueLayout::I32]).unwrap();
    /// // SAFETY: every pointer read through `p` here is null or points to a point.
    /// let p = unsafe { ValueLayout::pointer_to(point) }.unwrap();
    /// assert_eq!(p.target().unwrap().byte_size(), 8);
    /// assert_eq!(p.depth(), 3);
    /// ```
    ///
    /// # Errors
    /// [`Error::NestingTooDeep`] if the pointer (1 level) around `target` would nest more than
    /// [`super::MAX_NESTING`] levels (long `pointer_to` chains count too).
    ///
    /// # Safety
    /// As [`ValueLayout::with_target`].
    pub unsafe fn pointer_to(target: MemoryLayout) -> Result<ValueLayout> {
        // SAFETY: forwarded to the caller.
        unsafe { ValueLayout::ADDRESS.with_target(PointerTarget::Layout(target)) }
    }

    /// This pointer layout with a target (Java's restricted `AddressLayout.withTargetLayout`):
    /// the one trust step after which pointers read through the layout become segments over
    /// their pointees, with no `unsafe` at each read. A
    /// [`Declarations`](crate::cdecl::Declarations) made with `with_pointer_targets` attaches
    /// targets to the pointers it declares by the same contract.
    ///
    /// How a pointer `p` read through the layout becomes a segment (null gives
    /// [`crate::MemorySegment::NULL`] or `None`, never a segment that reads anything):
    ///
    /// - [`PointerTarget::Layout`]`(t)`: `t.byte_size()` bytes at `p`; `p` must be a multiple
    ///   of `t.byte_alignment()` ([`Error::MisalignedAccess`] otherwise).
    /// - [`PointerTarget::CString`]: the bytes at `p` up to and including the first NUL, read
    ///   one by one and never past that NUL.
    /// - [`PointerTarget::Enclosing`]: as `Layout` of the enclosing record of that name where
    ///   an accessor resolves it (see [`PointerTarget`]); unresolved, zero bytes at `p`.
    /// - Read as a NULL-terminated array ([`ValueLayout::null_terminated`], for a pointer whose
    ///   target is a pointer layout): the pointer-sized slots from `p` on, up to the first null
    ///   one, each turned into a segment by its own target.
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] if `self` is not a pointer layout; [`Error::NestingTooDeep`] if
    /// the pointer around a [`PointerTarget::Layout`] target would nest more than
    /// [`super::MAX_NESTING`] levels.
    ///
    /// # Safety
    /// Every pointer turned into a segment through a layout carrying this target — read from
    /// memory ([`crate::MemorySegment::get_value`], [`crate::MemorySegment::get_target`],
    /// [`super::Accessor::get`], [`super::Accessor::get_target`], the elements of a
    /// [`ValueLayout::null_terminated`] array) or given as a value
    /// ([`ValueLayout::target_of`], [`ValueLayout::null_terminated`]) — must be null or point
    /// to what the rules above read: `byte_size` bytes for a layout, a NUL-terminated string
    /// for a C string, and, where the program reads it as a NULL-terminated array, pointers
    /// up to and including a null one. Those bytes must stay allocated and readable for as
    /// long as the segment read from the pointer (or a copy or slice of it) is used, must be
    /// writable if the program writes through that segment, and must not be accessed through
    /// Rust references meanwhile (the conditions of [`crate::MemorySegment::from_raw_parts`]).
    /// Layouts built from this one (a struct holding it, an accessor, a clone) carry the same
    /// promise; [`ValueLayout::without_target`] drops it.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::layout::{PointerTarget, ValueLayout};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// // SAFETY: every pointer read through `name` below is null or points to a C string.
    /// let name = unsafe { ValueLayout::ADDRESS.with_target(PointerTarget::CString) }.unwrap();
    /// let arena = Arena::confined();
    /// let text = arena.allocate_c_string("hi").unwrap();
    /// let slot = arena.allocate_from(text.as_address()).unwrap(); // a `char *` in memory
    /// let s = slot.get_target(&name, 0).unwrap().unwrap();
    /// assert_eq!((s.byte_size(), s.get_string(0).unwrap().as_str()), (3, "hi"));
    /// // SAFETY: nothing is read (an `int` layout takes no target).
    /// assert!(unsafe { ValueLayout::I32.with_target(PointerTarget::CString) }.is_err());
    /// ```
    pub unsafe fn with_target(self, target: PointerTarget) -> Result<ValueLayout> {
        if self.kind != ScalarKind::Pointer {
            return Err(Error::ValueMismatch {
                position: format!("the target {target}"),
                expected: "a pointer layout".into(),
                found: self.to_string(),
            });
        }
        if let PointerTarget::Layout(l) = &target {
            super::structure::pointer_depth(l)?;
        }
        Ok(self.replace_target(target))
    }

    /// This layout with `target` in place of its own, unchecked (for targets the trust step
    /// already covers, and which fit in [`super::MAX_NESTING`]).
    pub(super) fn replace_target(mut self, target: PointerTarget) -> ValueLayout {
        self.target = Some(Arc::new(target));
        self
    }

    /// The same layout without a target: a plain address again (safe: dropping a target only
    /// takes away what reads may do).
    ///
    /// ```
    /// use gatun::layout::{PointerTarget, ValueLayout};
    /// // SAFETY: nothing is read through `p`.
    /// let p = unsafe { ValueLayout::ADDRESS.with_target(PointerTarget::CString) }.unwrap();
    /// assert_eq!(p.without_target(), ValueLayout::ADDRESS);
    /// ```
    pub fn without_target(mut self) -> ValueLayout {
        self.target = None;
        self
    }

    /// The scalar kind.
    ///
    /// ```
    /// use gatun::{ScalarKind, ValueLayout};
    /// assert_eq!(ValueLayout::ADDRESS.kind(), ScalarKind::Pointer);
    /// ```
    #[inline]
    pub fn kind(&self) -> ScalarKind {
        self.kind
    }

    /// Size in bytes (`kind().byte_size()`).
    ///
    /// ```
    /// use gatun::ValueLayout;
    /// assert_eq!(ValueLayout::U16.byte_size(), 2);
    /// assert_eq!(ValueLayout::I64.with_byte_alignment(1).unwrap().byte_size(), 8);
    /// ```
    #[inline]
    pub fn byte_size(&self) -> usize {
        self.kind.byte_size()
    }

    /// Alignment in bytes (a power of two).
    ///
    /// ```
    /// use gatun::ValueLayout;
    /// assert_eq!(ValueLayout::I64.byte_alignment(), 8);
    /// assert_eq!(ValueLayout::I64.with_byte_alignment(2).unwrap().byte_alignment(), 2);
    /// ```
    #[inline]
    pub fn byte_alignment(&self) -> usize {
        self.byte_alignment
    }

    /// The name, if one was given with [`ValueLayout::with_name`].
    ///
    /// ```
    /// use gatun::ValueLayout;
    /// assert_eq!(ValueLayout::I32.name(), None);
    /// assert_eq!(ValueLayout::I32.with_name("fd").name(), Some("fd"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The pointee layout of a pointer whose target is a [`PointerTarget::Layout`] (made with
    /// [`ValueLayout::pointer_to`], for instance); `None` for other targets and for none.
    ///
    /// ```
    /// use gatun::layout::{MemoryLayout, ValueLayout};
    /// assert!(ValueLayout::ADDRESS.target().is_none());
    /// // SAFETY: nothing is read through `p`.
    /// let p = unsafe { ValueLayout::pointer_to(ValueLayout::F64.into()) }.unwrap();
    /// assert_eq!(p.target(), Some(&MemoryLayout::from(ValueLayout::F64)));
    /// ```
    pub fn target(&self) -> Option<&MemoryLayout> {
        self.pointer_target().and_then(PointerTarget::layout)
    }

    /// The target of a pointer layout ([`ValueLayout::with_target`]), of any kind.
    ///
    /// ```
    /// use gatun::layout::{PointerTarget, ValueLayout};
    /// assert!(ValueLayout::ADDRESS.pointer_target().is_none());
    /// // SAFETY: nothing is read through `p`.
    /// let p = unsafe { ValueLayout::ADDRESS.with_target(PointerTarget::CString) }.unwrap();
    /// assert_eq!(p.pointer_target(), Some(&PointerTarget::CString));
    /// ```
    pub fn pointer_target(&self) -> Option<&PointerTarget> {
        self.target.as_deref()
    }

    /// The target's `Arc` (shared-node checks in structural equality).
    pub(super) fn target_arc(&self) -> Option<&Arc<PointerTarget>> {
        self.target.as_ref()
    }

    /// The same layout with a name.
    ///
    /// ```
    /// use gatun::ValueLayout;
    /// let x = ValueLayout::F32.with_name("x");
    /// assert_eq!(x.name(), Some("x"));
    /// assert_ne!(x, ValueLayout::F32); // the name takes part in equality
    /// ```
    pub fn with_name(mut self, name: impl Into<Arc<str>>) -> ValueLayout {
        self.name = Some(name.into());
        self
    }

    /// The same layout without a name.
    ///
    /// ```
    /// use gatun::ValueLayout;
    /// assert_eq!(ValueLayout::I8.with_name("c").without_name(), ValueLayout::I8);
    /// ```
    pub fn without_name(mut self) -> ValueLayout {
        self.name = None;
        self
    }

    /// The same layout with another alignment, e.g. 1 for a member of a packed struct.
    /// Any power of two is accepted (Java allows under- and over-alignment of value layouts).
    ///
    /// # Errors
    /// [`Error::InvalidAlignment`] if `byte_alignment` is not a power of two.
    ///
    /// # Examples
    ///
    /// ```
    /// use gatun::{Error, ValueLayout};
    /// assert_eq!(ValueLayout::I32.with_byte_alignment(16).unwrap().byte_alignment(), 16);
    /// assert_eq!(
    ///     ValueLayout::I32.with_byte_alignment(3).unwrap_err(),
    ///     Error::InvalidAlignment { alignment: 3 }
    /// );
    /// ```
    pub fn with_byte_alignment(mut self, byte_alignment: usize) -> Result<ValueLayout> {
        if !byte_alignment.is_power_of_two() {
            return Err(Error::InvalidAlignment {
                alignment: byte_alignment,
            });
        }
        self.byte_alignment = byte_alignment;
        Ok(self)
    }

    /// `true` when the alignment is the natural one (accesses can use aligned loads).
    ///
    /// ```
    /// use gatun::ValueLayout;
    /// assert!(ValueLayout::F64.is_naturally_aligned());
    /// assert!(!ValueLayout::F64.with_byte_alignment(4).unwrap().is_naturally_aligned());
    /// ```
    #[inline]
    pub fn is_naturally_aligned(&self) -> bool {
        self.byte_alignment >= self.kind.natural_alignment()
    }
}
