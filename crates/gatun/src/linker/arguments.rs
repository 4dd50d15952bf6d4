//! [`Arguments`]: a checked, dynamic argument list narrower than `&[Value]`, and
//! [`DowncallHandle::invoke_arguments`].
//!
//! An `Arguments<N>` holds up to `N` arguments as untagged 8-byte slots (a scalar's bits in the
//! slot's low bytes, as the stubs read a `Value`'s payload) beside a packed array of kind bytes
//! (the `Value` tag of each argument's variant). The first eight kind bytes, read as one
//! little-endian `u64`, are the **kind word**; the handle precomputes at link time the kind
//! word its descriptor's arguments have ([`slots_words`]: the tag of each argument's scalar
//! kind, zero bytes after the last), so checking count and every kind on a call is one 64-bit
//! compare. When the builder calls are inlined (they are `#[inline(always)]`) and the kinds
//! are constants, the compiler folds the kind word to a constant: the check is one compare of
//! the handle's word with an immediate.
//!
//! On a match the executor's **slots path** runs (`Executor::call_slots_int` /
//! `call_slots_float`, given the kind word and the slots): the registers of a register-only
//! scalar call follow from the kinds alone, so with a constant kind word the argument
//! registers are loaded from the caller's values and the target is called from inline
//! assembly, without a stub (x86-64 SysV up to six integer-class and eight float arguments,
//! AArch64 up to eight arguments, Win64 up to four); x86-64 SysV's seventh and eighth
//! integer-class arguments go through the compiled stub's **slots entry**, which reads the
//! slots with no per-argument tests. Which handles have the path is decided at link time (no
//! capture, not variadic, scalar arguments only, a non-bool scalar or void return, a compiled
//! stub). Every other case — no slots path, a struct argument or return, a bool return, more
//! arguments, or kinds that do not match (the `Value` path also accepts a segment for a pointer
//! parameter, converts integers of another kind that fit, and reports every mistake) — converts the arguments to `Value`s on the stack and
//! takes [`DowncallHandle::invoke`] or [`DowncallHandle::invoke_into`], so both paths accept
//! the same arguments and report the same errors.
//!
//! # Invariants (the unsafe story of this module)
//! - `slots[i]` and `kinds[i]` are initialised for `i < min(len, N)`; `kinds[i]` is 0 for
//!   `i >= len`. `kinds[i]` is the `Value` tag of the pushed variant ([`VOID_KIND`] for
//!   `Value::Void`), so no pushed argument has kind byte 0.
//! - For a segment argument (tag of `Value::Segment`), `slots[i]` is its address and `lens[i]`
//!   its length, taken from a `MemorySegment<'a>`: rebuilding it for the `Value` path is
//!   sound for `'a`, which the borrow checker ties to the `Arguments`.
//! - A handle's slots word is [`NO_WORD`] unless its executor has that slots path and the
//!   descriptor has at most eight arguments, all scalars; an `Arguments`' kind word is
//!   [`NO_WORD`] never (it is [`TOO_LONG`] past eight or `N` arguments). So a match means: the
//!   executor has the path, `len` is the descriptor's argument count, and each slot holds a
//!   value of its argument's exact kind.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crate::backend::{ArgKind, SlotsPath};
use crate::error::{Error, Result};
use crate::linker::DowncallHandle;
use crate::memory::{MemorySegment, SegmentAllocator};
use crate::value::{scalar_tag, value_tag, Value};

/// A handle's slots word when it has no such slots path: no `Arguments` has this kind word
/// (0xFF is no kind byte).
const NO_WORD: u64 = u64::MAX;

/// The kind word of an `Arguments` holding more than eight arguments or more than its
/// capacity: never a handle's slots word (0xFE is no handle's kind byte).
const TOO_LONG: u64 = u64::MAX - 1;

/// The kind byte of a pushed `Value::Void` (not an argument: the `Value` path reports it):
/// not 0, so it never reads as "no argument", and no handle's kind byte.
const VOID_KIND: u8 = 0xFE;

/// The handle's slots words `(int, float)` for its executor's slots path and argument kinds:
/// the kind word of the descriptor's arguments for the path the executor has, [`NO_WORD`] for
/// the other (and for both when an argument is not a scalar or there are more than eight).
pub(super) fn slots_words(path: SlotsPath, args: &[ArgKind]) -> (u64, u64) {
    let word = (args.len() <= 8)
        .then(|| {
            args.iter().enumerate().try_fold(0u64, |w, (i, a)| match a {
                ArgKind::Scalar(k) => Some(w | u64::from(scalar_tag(*k)) << (8 * i)),
                ArgKind::Group { .. } => None,
            })
        })
        .flatten();
    match (path, word) {
        (SlotsPath::Int, Some(w)) => (w, NO_WORD),
        (SlotsPath::Float, Some(w)) => (NO_WORD, w),
        _ => (NO_WORD, NO_WORD),
    }
}

/// A dynamic argument list for [`DowncallHandle::invoke_arguments`]: up to `N` arguments
/// (default 8), each an untagged 8-byte slot plus one kind byte, built with one call per
/// argument in order.
///
/// Narrower than a `&[Value]` (24 bytes per argument, a tag and a payload): the list is
/// `17 * N + 8` bytes rounded up to a multiple of 8, aligned to 8 (8-byte slots, 8-byte lengths
/// written only for segment arguments, kind bytes, the count); a call passes only the slots
/// and checks count and kinds against the descriptor with one 64-bit compare (up to eight
/// arguments). The kinds are still
/// checked on every call: a mismatch is an error naming the argument, never undefined
/// behaviour. Building never fails and never panics: pushing more than `N` arguments makes the
/// call fail with [`Error::ValueMismatch`] (nothing is called).
///
/// Scalars are pushed with the method of their kind (`i32` for `ValueLayout::I32`, `address`
/// for a pointer, ...): the kinds are checked as for `Value`s, and an integer of another
/// integer kind is converted when its value fits, as [`DowncallHandle::invoke`] does (on the
/// `Value` path: only a list of exactly the descriptor's kinds takes the slots path). A segment is pushed with [`Arguments::segment`] (a struct/union by value, the
/// capture segment, or a pointer parameter's address, as `Value::Segment`) or
/// [`Arguments::segment_address`] (a pointer parameter). The lifetime `'a` is the segments':
/// the borrow checker keeps their memory alive as long as the `Arguments`.
///
/// An `Arguments` is reusable ([`Arguments::clear`]) and `Copy`; not `Send`/`Sync` (it may hold
/// segments, like `Value`). No method allocates.
///
/// `N` is at most [`Arguments::MAX_CAPACITY`] (1024), checked at compile time: a larger `N` is
/// a build error where [`Arguments::new`] or `Default` is instantiated. The bound keeps the list
/// (17 bytes per argument) and the `Value`s the checked path builds from it (24 bytes each, on
/// the stack) under about 60 KiB. A descriptor may take more arguments (up to about 131,000
/// within the 1 MiB stack-argument limit,
/// [`MAX_STACK_BYTES`](crate::linker::MAX_STACK_BYTES)): call those with
/// [`DowncallHandle::invoke`] or [`DowncallHandle::invoke_raw`].
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use gatun::linker::SymbolLookup;
/// use gatun::{Arguments, FunctionDescriptor, Linker, Value, ValueLayout as V};
/// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
/// let abs = Linker::native()
///     .downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[])
///     .unwrap();
/// let mut args = Arguments::<1>::new();
/// args.i32(-5);
/// // SAFETY: int abs(int) has no preconditions.
/// assert_eq!(unsafe { abs.invoke_arguments(&args) }.unwrap(), Value::I32(5));
/// // The kind is checked: a `double` for an `int` parameter is an error before any call.
/// args.clear();
/// args.f64(-5.0);
/// // SAFETY: as above.
/// assert!(unsafe { abs.invoke_arguments(&args) }.is_err());
/// // An integer of another kind is converted if it fits (on the `Value` path).
/// args.clear();
/// args.i64(-5);
/// // SAFETY: as above.
/// assert_eq!(unsafe { abs.invoke_arguments(&args) }.unwrap(), Value::I32(5));
/// # }
/// ```
#[derive(Clone, Copy)]
pub struct Arguments<'a, const N: usize = 8> {
    /// The arguments' 8-byte slots (the first `len`, at most `N`, initialised).
    slots: [MaybeUninit<u64>; N],
    /// The byte lengths of segment arguments (initialised for those only).
    lens: [MaybeUninit<usize>; N],
    /// Each argument's kind byte (the `Value` tag of its variant); 0 after the last.
    kinds: [u8; N],
    /// The number of arguments pushed (may exceed `N`: the call then fails).
    len: usize,
    _segments: PhantomData<MemorySegment<'a>>,
}

impl<const N: usize> Default for Arguments<'_, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> std::fmt::Debug for Arguments<'_, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..self.len.min(N)).map(|i| self.argument(i)))
            .finish()
    }
}

macro_rules! scalar_pushes {
    ($($(#[$doc:meta])* $name:ident($t:ty) => $variant:ident, $bits:expr;)*) => {
        $(
            $(#[$doc])*
            ///
            /// Returns `self` for chaining.
            ///
            /// ```
            #[doc = concat!("let mut args = gatun::Arguments::<2>::new();")]
            #[doc = concat!("args.", stringify!($name), "(Default::default());")]
            /// assert_eq!(args.len(), 1);
            /// ```
            #[inline(always)]
            pub fn $name(&mut self, value: $t) -> &mut Self {
                let bits: fn($t) -> u64 = $bits;
                self.push(value_tag(&Value::$variant(Default::default())), bits(value))
            }
        )*
    };
}

impl<'a, const N: usize> Arguments<'a, N> {
    /// The largest capacity `N` (see [`Arguments`]): 1024 arguments, the list and its `Value`s
    /// kept on the stack under about 60 KiB.
    ///
    /// ```
    /// assert_eq!(gatun::Arguments::<8>::MAX_CAPACITY, 1024);
    /// ```
    pub const MAX_CAPACITY: usize = 1024;

    /// An empty list with room for `N` arguments. Costs nothing at run time beyond zeroing `N`
    /// kind bytes (which the compiler folds away when the list is built and used in one
    /// function).
    ///
    /// # Panics
    /// Never at run time. `N` over [`Arguments::MAX_CAPACITY`] fails the build (a constant
    /// evaluated where `new` is instantiated).
    ///
    /// ```
    /// let args = gatun::Arguments::<4>::new();
    /// assert!(args.is_empty());
    /// assert_eq!(args.capacity(), 4);
    /// ```
    #[inline(always)]
    pub fn new() -> Self {
        const {
            assert!(
                N <= Arguments::<'static, 0>::MAX_CAPACITY,
                "Arguments<N>: N is over Arguments::MAX_CAPACITY (1024)"
            )
        };
        Arguments {
            slots: [MaybeUninit::uninit(); N],
            lens: [MaybeUninit::uninit(); N],
            kinds: [0; N],
            len: 0,
            _segments: PhantomData,
        }
    }

    /// The number of arguments pushed (more than [`Arguments::capacity`] if too many were:
    /// a call then fails).
    ///
    /// ```
    /// let mut args = gatun::Arguments::<2>::new();
    /// args.i32(1).f64(2.0);
    /// assert_eq!(args.len(), 2);
    /// ```
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no argument was pushed.
    ///
    /// ```
    /// assert!(gatun::Arguments::<2>::new().is_empty());
    /// ```
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `N`: how many arguments the list holds.
    ///
    /// ```
    /// assert_eq!(gatun::Arguments::<3>::new().capacity(), 3);
    /// ```
    #[inline(always)]
    pub fn capacity(&self) -> usize {
        N
    }

    /// Removes every argument (for reuse).
    ///
    /// ```
    /// let mut args = gatun::Arguments::<2>::new();
    /// args.i32(1);
    /// args.clear();
    /// assert!(args.is_empty());
    /// ```
    #[inline(always)]
    pub fn clear(&mut self) {
        self.kinds = [0; N];
        self.len = 0;
    }

    /// Appends an argument of kind byte `kind` with slot bits `bits`.
    #[inline(always)]
    fn push(&mut self, kind: u8, bits: u64) -> &mut Self {
        if self.len < N {
            self.slots[self.len] = MaybeUninit::new(bits);
            self.kinds[self.len] = kind;
        }
        self.len = self.len.saturating_add(1);
        self
    }

    scalar_pushes! {
        /// Appends a C `bool` (`ValueLayout::BOOL`).
        bool(bool) => Bool, |v| v as u64;
        /// Appends a signed 8-bit integer (`ValueLayout::I8`).
        i8(i8) => I8, |v| v as i64 as u64;
        /// Appends an unsigned 8-bit integer (`ValueLayout::U8`).
        u8(u8) => U8, |v| v as u64;
        /// Appends a signed 16-bit integer (`ValueLayout::I16`).
        i16(i16) => I16, |v| v as i64 as u64;
        /// Appends an unsigned 16-bit integer (`ValueLayout::U16`).
        u16(u16) => U16, |v| v as u64;
        /// Appends a signed 32-bit integer (`ValueLayout::I32`, C `int`).
        i32(i32) => I32, |v| v as i64 as u64;
        /// Appends an unsigned 32-bit integer (`ValueLayout::U32`).
        u32(u32) => U32, |v| v as u64;
        /// Appends a signed 64-bit integer (`ValueLayout::I64`; C `long` on LP64).
        i64(i64) => I64, |v| v as u64;
        /// Appends an unsigned 64-bit integer (`ValueLayout::U64`).
        u64(u64) => U64, |v| v;
        /// Appends a binary32 float (`ValueLayout::F32`).
        f32(f32) => F32, |v| u64::from(v.to_bits());
        /// Appends a binary64 float (`ValueLayout::F64`).
        f64(f64) => F64, |v| v.to_bits();
    }

    /// Appends a raw address for a pointer parameter (`ValueLayout::ADDRESS`), as
    /// `Value::Address`. Returns `self` for chaining.
    ///
    /// ```
    /// let mut args = gatun::Arguments::<1>::new();
    /// args.address(std::ptr::null_mut());
    /// assert_eq!(args.len(), 1);
    /// ```
    #[inline(always)]
    pub fn address(&mut self, address: *mut c_void) -> &mut Self {
        self.push(
            value_tag(&Value::Address(std::ptr::null_mut())),
            address as usize as u64,
        )
    }

    /// Appends a segment's address for a pointer parameter (`ValueLayout::ADDRESS`), on the
    /// fast path; the segment's memory must outlive the list (`'a`). Returns `self` for
    /// chaining.
    ///
    /// ```
    /// use gatun::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let buf = arena.allocate(16, 8).unwrap();
    /// let mut args = gatun::Arguments::<1>::new();
    /// args.segment_address(buf);
    /// assert_eq!(args.len(), 1);
    /// ```
    #[inline(always)]
    pub fn segment_address(&mut self, segment: MemorySegment<'a>) -> &mut Self {
        self.address(segment.as_ptr().cast())
    }

    /// Appends a segment as `Value::Segment`: a struct/union passed by value (at least the
    /// layout's size, any alignment), the capture segment of a capture handle (first), or a
    /// pointer parameter's address. Takes the checked `Value` path for the call. The segment's
    /// memory must outlive the list (`'a`). Returns `self` for chaining.
    ///
    /// ```
    /// use gatun::{Arena, SegmentAllocator};
    /// let arena = Arena::confined();
    /// let point = arena.allocate(16, 8).unwrap();
    /// let mut args = gatun::Arguments::<1>::new();
    /// args.segment(point);
    /// assert_eq!(args.len(), 1);
    /// ```
    #[inline(always)]
    pub fn segment(&mut self, segment: MemorySegment<'a>) -> &mut Self {
        if self.len < N {
            self.lens[self.len] = MaybeUninit::new(segment.byte_size());
        }
        self.push(
            value_tag(&Value::Segment(MemorySegment::NULL)),
            segment.address() as u64,
        )
    }

    /// Appends any `Value` (a segment as [`Arguments::segment`]; `Value::Void`, which is no
    /// argument, makes the call fail as it does in a `&[Value]`). Returns `self` for chaining.
    ///
    /// ```
    /// use gatun::Value;
    /// let mut args = gatun::Arguments::<2>::new();
    /// args.value(Value::I32(1)).value(Value::F64(0.5));
    /// assert_eq!(args.len(), 2);
    /// ```
    #[inline]
    pub fn value(&mut self, value: Value<'a>) -> &mut Self {
        match value {
            Value::Void => self.push(VOID_KIND, 0),
            Value::Segment(s) => self.segment(s),
            v => {
                let tag = value_tag(&v);
                let bits = v
                    .scalar_kind()
                    .and_then(|k| v.scalar_bits(k))
                    .unwrap_or_default();
                self.push(tag, bits)
            }
        }
    }

    /// The kind word: the first eight kind bytes as a little-endian `u64`, or [`TOO_LONG`] when
    /// more than eight (or more than `N`) arguments were pushed.
    #[inline(always)]
    fn kind_word(&self) -> u64 {
        if self.len > N || self.len > 8 {
            return TOO_LONG;
        }
        let mut word = 0u64;
        for (i, k) in self.kinds.iter().take(8).enumerate() {
            word |= u64::from(*k) << (8 * i);
        }
        word
    }

    /// Argument `i` (`i < min(len, N)`) as a `Value`.
    fn argument(&self, i: usize) -> Value<'a> {
        let kind = self.kinds[i];
        // SAFETY: `slots[i]` is initialised for a pushed argument (module invariants).
        let bits = unsafe { self.slots[i].assume_init() };
        if kind == VOID_KIND {
            return Value::Void;
        }
        if kind == value_tag(&Value::Segment(MemorySegment::NULL)) {
            // SAFETY: a segment argument's slot and length were taken from a
            // `MemorySegment<'a>` (module invariants), so the rebuilt segment is that one.
            return Value::Segment(unsafe {
                MemorySegment::from_raw_parts(bits as usize as *mut u8, self.lens[i].assume_init())
            });
        }
        // SAFETY: any other kind byte is the `Value` tag of a scalar variant, and the slot a
        // valid payload of it (a bool's is 0 or 1: `bool` and `value` push only those), so the
        // words are that `Value` (module invariants).
        unsafe { crate::backend::value_of_words(u64::from(kind), bits) }
    }

    /// The arguments as `Value`s (the first `len` of the array), or the error for a list that
    /// overflowed its capacity (naming the function `function()` returns).
    fn values(&self, function: impl FnOnce() -> String) -> Result<([Value<'a>; N], usize)> {
        if self.len > N {
            return Err(Error::ValueMismatch {
                position: format!("argument {} of {}", N + 1, function()),
                expected: format!(
                    "at most {N} argument{} (the capacity of Arguments<{N}>)",
                    if N == 1 { "" } else { "s" }
                ),
                found: format!("{} pushed", self.len),
            });
        }
        let mut values = [Value::Void; N];
        for (i, v) in values.iter_mut().enumerate().take(self.len) {
            *v = self.argument(i);
        }
        Ok((values, self.len))
    }
}

impl DowncallHandle {
    /// Calls the function with `args`: as [`DowncallHandle::invoke`] with the same arguments as
    /// `Value`s, through a narrower representation (see [`Arguments`]). With a compiled stub,
    /// no capture, not variadic, scalar arguments only (at most eight; four on Windows) and a
    /// non-bool scalar or void return, the check is one compare of the arguments' kind word
    /// with the handle's and the argument registers are loaded straight from the slots (x86-64
    /// System V's stack arguments by the stub's slots entry); everything else converts the
    /// arguments to `Value`s (on the stack) and takes `invoke`, with the same results and
    /// errors. Allocates nothing.
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke`] (an argument of the wrong kind is
    /// [`Error::ValueMismatch`] naming the function, its position, the expected and the given
    /// kind; an integer out of its parameter's range [`Error::ArgumentOutOfRange`]; a wrong
    /// count is [`Error::ArgumentCount`]); [`Error::ValueMismatch`] if more arguments were
    /// pushed than the list holds. All before the call.
    ///
    /// # Panics
    /// Never: every failure is one of the errors above.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]: the symbol must be a function of the linked type and the
    /// arguments must satisfy its contract.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{Arguments, FunctionDescriptor, Linker, Value, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let abs = Linker::native()
    ///     .downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[])
    ///     .unwrap();
    /// let mut args = Arguments::<1>::new();
    /// args.i32(-3);
    /// // SAFETY: int abs(int) has no preconditions.
    /// assert_eq!(unsafe { abs.invoke_arguments(&args) }.unwrap(), Value::I32(3));
    /// // SAFETY: as above; too few arguments is an error before any call.
    /// assert!(unsafe { abs.invoke_arguments(&Arguments::<1>::new()) }.is_err());
    /// # }
    /// ```
    #[inline(always)]
    pub unsafe fn invoke_arguments<const N: usize>(
        &self,
        args: &Arguments<'_, N>,
    ) -> Result<Value<'static>> {
        // The first (at most eight) slots, copied: only this copy's address reaches the stub,
        // so the list itself does not escape and the compiler keeps its kinds and length in
        // registers or constants (the copy's stores are the slot stores; nothing is copied
        // twice once the builder calls are inlined).
        let mut slots = [MaybeUninit::<u64>::uninit(); 8];
        let n = N.min(8);
        slots[..n].copy_from_slice(&args.slots[..n]);
        // SAFETY: `slots` holds the pushed arguments; a match of the kind word means one slot
        // of the exact kind per descriptor argument, at most eight (module invariants); the
        // callee's contract is the caller's.
        if let Some(bits) = unsafe { self.invoke_slots(args.kind_word(), &slots) } {
            return Ok(self.slots_value(bits));
        }
        // SAFETY: forwarded. The list goes by value: a copy made on this path only, so the
        // fast path above never makes the caller's list escape (which would keep every kind
        // byte and the length stored in memory).
        unsafe { self.invoke_arguments_slow(*args) }
    }

    /// Whether [`DowncallHandle::invoke_arguments`] with `args` takes the slots fast path (the
    /// compiled stub's slots entry, no `Value`s built). Test and benchmark hook (cargo feature
    /// `internals`).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let h = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// let mut args = gatun::Arguments::<2>::new();
    /// args.i32(-2);
    /// // A scalar-only signature takes the slots path wherever the OS allows compiled stubs.
    /// assert_eq!(h.takes_slots_path(&args), h.uses_compiled_stub());
    /// # }
    /// ```
    #[cfg(feature = "internals")]
    pub fn takes_slots_path<const N: usize>(&self, args: &Arguments<'_, N>) -> bool {
        self.slots_kinds_match(args.kind_word())
    }

    /// `invoke_arguments` past the slots path: the arguments as `Value`s through `invoke`.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]: the symbol must be a function of the linked type and the
    /// arguments must satisfy its contract.
    #[cold]
    #[inline(never)]
    unsafe fn invoke_arguments_slow<const N: usize>(
        &self,
        args: Arguments<'_, N>,
    ) -> Result<Value<'static>> {
        let (values, len) = args.values(|| self.function_label())?;
        // SAFETY: forwarded to the caller.
        unsafe { self.invoke(&values[..len]) }
    }

    /// As [`DowncallHandle::invoke_into`] with the arguments of `args`: a struct/union return
    /// is written into a segment allocated from `allocator` (the return layout's size and
    /// alignment) and returned as `Value::Segment`. Always the checked `Value` path (the
    /// arguments converted on the stack); scalar and void returns as
    /// [`DowncallHandle::invoke_arguments`].
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke_into`]; [`Error::ValueMismatch`] if more arguments were
    /// pushed than the list holds. All before the call.
    ///
    /// # Panics
    /// Never: every failure is one of the errors above.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`].
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{Arena, Arguments, FunctionDescriptor, Linker, MemoryLayout, Value, ValueLayout as V};
    /// // div_t div(int, int): a struct { int quot; int rem; } returned by value.
    /// let div = SymbolLookup::default_lookup().find("div").unwrap();
    /// let div_t = MemoryLayout::c_struct([V::I32, V::I32]).unwrap();
    /// let div = Linker::native()
    ///     .downcall(&div, &FunctionDescriptor::of(div_t, [V::I32, V::I32]), &[])
    ///     .unwrap();
    /// let arena = Arena::confined();
    /// let mut args = Arguments::<2>::new();
    /// args.i32(7).i32(2);
    /// // SAFETY: div(7, 2) has no preconditions.
    /// let Value::Segment(q) = (unsafe { div.invoke_arguments_into(&arena, &args) }).unwrap() else {
    ///     unreachable!()
    /// };
    /// assert_eq!((q.get::<i32>(0).unwrap(), q.get::<i32>(4).unwrap()), (3, 1));
    /// # }
    /// ```
    pub unsafe fn invoke_arguments_into<'r, A: SegmentAllocator + ?Sized, const N: usize>(
        &self,
        allocator: &'r A,
        args: &Arguments<'_, N>,
    ) -> Result<Value<'r>> {
        let (values, len) = args.values(|| self.function_label())?;
        // SAFETY: forwarded to the caller.
        unsafe { self.invoke_into(allocator, &values[..len]) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ScalarKind as K;

    fn word_of(kinds: &[K]) -> u64 {
        let args: Vec<ArgKind> = kinds.iter().map(|k| ArgKind::Scalar(*k)).collect();
        slots_words(SlotsPath::Int, &args).0
    }

    /// Pushes one argument of kind `k` (the builder method of that kind).
    fn push(a: &mut Arguments<'_, 8>, k: K) {
        match k {
            K::Bool => a.bool(true),
            K::I8 => a.i8(-1),
            K::U8 => a.u8(1),
            K::I16 => a.i16(-2),
            K::U16 => a.u16(2),
            K::I32 => a.i32(-3),
            K::U32 => a.u32(3),
            K::I64 => a.i64(-4),
            K::U64 => a.u64(4),
            K::F32 => a.f32(0.5),
            K::F64 => a.f64(0.25),
            K::Pointer => a.address(8 as *mut c_void),
        };
    }

    #[test]
    fn every_kind_has_the_descriptors_kind_byte() {
        for k in K::ALL {
            let mut a = Arguments::<8>::new();
            push(&mut a, k);
            assert_eq!(a.kind_word(), word_of(&[k]), "{k:?}");
            for other in K::ALL.into_iter().filter(|o| *o != k) {
                assert_ne!(a.kind_word(), word_of(&[other]), "{k:?} vs {other:?}");
            }
        }
        // eight arguments of mixed kinds: one word
        let ks = [
            K::I8,
            K::F64,
            K::Pointer,
            K::U16,
            K::I64,
            K::F32,
            K::Bool,
            K::U64,
        ];
        let mut a = Arguments::<8>::new();
        ks.iter().for_each(|k| push(&mut a, *k));
        assert_eq!(a.kind_word(), word_of(&ks));
    }

    #[test]
    fn counts_are_part_of_the_word() {
        let mut a = Arguments::<8>::new();
        assert_eq!(a.kind_word(), word_of(&[]));
        a.i32(1);
        assert_ne!(a.kind_word(), word_of(&[]));
        assert_ne!(a.kind_word(), word_of(&[K::I32, K::I32]));
        a.i32(2);
        assert_eq!(a.kind_word(), word_of(&[K::I32, K::I32]));
        // a pushed `Void` never reads as "no argument"
        let mut v = Arguments::<8>::new();
        v.i32(1).value(Value::Void);
        assert_ne!(v.kind_word(), word_of(&[K::I32]));
        assert_ne!(v.kind_word(), NO_WORD);
    }

    #[test]
    fn too_many_arguments_never_match() {
        let mut a = Arguments::<2>::new();
        a.i32(1).i32(2).i32(3);
        assert_eq!(a.len(), 3);
        assert_eq!(a.kind_word(), TOO_LONG);
        let err = a.values(|| "`f`".into()).unwrap_err();
        assert!(
            matches!(&err, Error::ValueMismatch { position, .. } if position == "argument 3 of `f`"),
            "{err}"
        );
        let mut nine = Arguments::<9>::new();
        (0..9).for_each(|i| {
            nine.i32(i);
        });
        assert_eq!(nine.kind_word(), TOO_LONG);
        assert_eq!(nine.values(String::new).unwrap().1, 9);
        // capacity 0
        let mut zero = Arguments::<0>::new();
        assert_eq!(zero.kind_word(), 0);
        zero.i32(1);
        assert_eq!(zero.kind_word(), TOO_LONG);
    }

    #[test]
    fn no_word_for_structs_many_arguments_or_no_path() {
        let g = ArgKind::Group { size: 8, align: 8 };
        let i = ArgKind::Scalar(K::I32);
        assert_eq!(slots_words(SlotsPath::Int, &[i, g]), (NO_WORD, NO_WORD));
        assert_eq!(slots_words(SlotsPath::Int, &[i; 9]), (NO_WORD, NO_WORD));
        assert_eq!(slots_words(SlotsPath::None, &[i]), (NO_WORD, NO_WORD));
        assert_eq!(slots_words(SlotsPath::Float, &[i]).0, NO_WORD);
        assert_eq!(slots_words(SlotsPath::Float, &[i]).1, word_of(&[K::I32]));
        assert_eq!(slots_words(SlotsPath::Int, &[]), (0, NO_WORD));
    }

    #[test]
    fn values_round_trip() {
        let arena = crate::memory::Arena::confined();
        let seg = arena.allocate(12, 4).unwrap();
        let vals = [
            Value::Bool(true),
            Value::I8(-8),
            Value::U8(200),
            Value::I16(-300),
            Value::U16(60000),
            Value::I32(-70000),
            Value::U32(4_000_000_000),
            Value::I64(-5),
            Value::U64(u64::MAX),
            Value::F32(-1.5),
            Value::F64(2.25),
            Value::Address(0x1234 as *mut c_void),
            Value::Segment(seg),
            Value::Void,
        ];
        let mut a = Arguments::<14>::new();
        vals.iter().for_each(|v| {
            a.value(*v);
        });
        let (out, len) = a.values(String::new).unwrap();
        assert_eq!(&out[..len], &vals[..]);
        assert!(format!("{a:?}").contains("I8(-8)"));
        let mut b = Arguments::<1>::new();
        b.segment_address(seg);
        assert_eq!(
            b.values(String::new).unwrap().0[0],
            Value::Address(seg.as_ptr().cast())
        );
    }
}
