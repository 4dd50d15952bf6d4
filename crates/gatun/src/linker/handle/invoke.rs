//! The `Value` paths of a [`DowncallHandle`]: `invoke` (the integer and float fast paths),
//! the `linker::Arguments` slots path, `invoke_into` (image and struct entries), the capture
//! paths of the system-call adapter, and the checked trampoline path every one falls back to.

use std::ffi::c_void;

use super::checks::{check_return, cold_path};
use super::{DowncallHandle, Exec};
use crate::backend::{
    ArgKind, ArgSource, Executor, ImageCall, RetKind, StructCall, UncapturedCall,
};
use crate::error::Result;
use crate::memory::SegmentAllocator;
use crate::value::Value;

impl DowncallHandle {
    /// Calls the function with `args` (scalars as their `Value` variants; pointers as
    /// `Value::Address` or `Value::Segment` (its address); structs/unions as `Value::Segment`
    /// holding at least the layout's bytes). Returns `Value::Void` or the scalar result,
    /// truncated to its declared width and extended by its signedness (a `bool` is
    /// `byte != 0`).
    ///
    /// An integer of another integer kind than its parameter's is converted when its value
    /// fits the parameter's kind (`Value::I32(8)` for a `size_t` is passed as `U64(8)`; the
    /// number is compared, so `I32(-1)` for a `u64` is an error, never `u64::MAX`). `bool`,
    /// pointer and floating-point parameters take only their own kinds (a pointer also a
    /// `Value::Segment`). The conversion is off the fast path: a call whose arguments all have
    /// their parameters' kinds runs exactly as without it, and one that needs it converts into
    /// a buffer on the stack (no heap allocation) and calls again.
    ///
    /// # Errors
    /// Every error names the function (its symbol, or its address) and the argument, counted
    /// from 1. [`Error::ArgumentCount`](crate::Error::ArgumentCount);
    /// [`Error::ArgumentOutOfRange`](crate::Error::ArgumentOutOfRange) for an integer the
    /// parameter's integer kind cannot hold; [`Error::ValueMismatch`](crate::Error::ValueMismatch)
    /// for an argument of another kind that is not converted, a
    /// segment smaller than its struct layout or a capture segment smaller than
    /// [`capture_state_layout`](crate::linker::capture_state_layout) (4 bytes, 12 on Windows), and
    /// for a struct return (use [`DowncallHandle::invoke_into`]); [`Error::MisalignedAccess`](crate::Error::MisalignedAccess)
    /// for a capture segment that is not 4-byte aligned; all before the call. (Struct argument
    /// segments may have any alignment: their bytes are copied, never handed to the callee.)
    ///
    /// # Safety
    /// The symbol must be a function of the linked type, and `args` must satisfy its contract
    /// (valid pointers, etc.).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{Error, FunctionDescriptor, Linker, Value, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let h = Linker::native()
    ///     .downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[])
    ///     .unwrap();
    /// // SAFETY: int abs(int) has no preconditions.
    /// assert_eq!(unsafe { h.invoke(&[Value::I32(-8)]) }.unwrap(), Value::I32(8));
    /// // SAFETY: as above; a wrong count is an error before any call.
    /// let err = unsafe { h.invoke(&[]) }.unwrap_err();
    /// assert!(matches!(err, Error::ArgumentCount { expected: 1, found: 0, .. }));
    /// // An integer of another kind is converted if it fits an `int`...
    /// // SAFETY: as above.
    /// assert_eq!(unsafe { h.invoke(&[Value::I64(-8)]) }.unwrap(), Value::I32(8));
    /// // ...and is an error naming the function and the argument if it does not.
    /// // SAFETY: as above; nothing is called.
    /// let err = unsafe { h.invoke(&[Value::I64(1 << 40)]) }.unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "1099511627776 is out of range for argument 1 of `abs`: expected i32 in -2147483648..=2147483647"
    /// );
    /// # }
    /// ```
    #[inline(always)]
    pub unsafe fn invoke(&self, args: &[Value<'_>]) -> Result<Value<'static>> {
        let inner = &*self.inner;
        // The common case in one test: a stub, no capture, a scalar or void return, and as
        // many values as descriptor arguments.
        // One compare decides the fast path: `int_arity` is the argument count when the
        // executor has the integer fast path, else `usize::MAX` (no slice is that long).
        if args.len() == inner.int_arity {
            // SAFETY: `int_arity` is the executor's (`Inner::new`) and not `usize::MAX`; one
            // `Value` per descriptor argument; the callee's contract is the caller's.
            let bits = unsafe {
                inner
                    .exec
                    .call_int(args.as_ptr().cast(), inner.target as *const c_void)
            };
            if let Some(bits) = bits {
                // The integer fast path never serves a bool return: no normalisation needed.
                return Ok(self.value_of_bits(bits));
            }
        } else if args.len() == inner.float_arity {
            // SAFETY: as above, for the float fast path.
            let bits = unsafe {
                inner
                    .exec
                    .call_float(args.as_ptr().cast(), inner.target as *const c_void)
            };
            if let Some(bits) = bits {
                return Ok(self.value_of_bits(bits));
            }
        }
        // SAFETY: forwarded.
        unsafe { self.invoke_slow(args) }
    }

    /// The slots fast path of [`DowncallHandle::invoke_arguments`]: the compiled stub's slots
    /// entry called with `slots` when `kinds` (the arguments' kind word, `linker::arguments`)
    /// is the one this handle's integer or float slots path expects, returning the result's
    /// register bits (for [`DowncallHandle::slots_value`]); `None` (nothing called) otherwise.
    ///
    /// # Safety
    /// `slots` holds the arguments' slots: when `kinds` matches, one 8-byte slot per
    /// descriptor argument holding a value of its kind in its low bytes. The callee's contract
    /// is the caller's.
    #[inline(always)]
    pub(in crate::linker) unsafe fn invoke_slots(
        &self,
        kinds: u64,
        slots: &crate::backend::Slots,
    ) -> Option<u64> {
        let inner = &*self.inner;
        let target = inner.target as *const c_void;
        if kinds == inner.slots_int {
            // SAFETY: `slots_int` is not a word of any `Arguments` unless `slots_path` is
            // `Int` (`arguments::slots_words`), and then `kinds` says the slots hold exactly
            // the descriptor's argument kinds; the rest is the caller's contract.
            Some(unsafe { inner.exec.call_slots_int(kinds, slots, target) })
        } else if kinds == inner.slots_float {
            // SAFETY: as above, for the float path.
            Some(unsafe { inner.exec.call_slots_float(kinds, slots, target) })
        } else {
            None
        }
    }

    /// Whether `kinds` is one of this handle's slots words (the internals hook of
    /// `linker::arguments`).
    #[cfg(feature = "internals")]
    pub(in crate::linker) fn slots_kinds_match(&self, kinds: u64) -> bool {
        kinds == self.inner.slots_int || kinds == self.inner.slots_float
    }

    /// The `Value` of the register bits [`DowncallHandle::invoke_slots`] returned (neither
    /// slots path serves a bool return: no normalisation needed).
    #[inline(always)]
    pub(in crate::linker) fn slots_value(&self, bits: u64) -> Value<'static> {
        self.value_of_bits(bits)
    }

    /// `invoke` past the fast path: errors, capture, the trampoline, and values the stub does
    /// not accept. Out of line and `#[cold]`, so that `invoke` inlines into its caller as the
    /// stub call only, laid out as the fall-through.
    #[cold]
    #[inline(never)]
    pub(super) unsafe fn invoke_slow(&self, args: &[Value<'_>]) -> Result<Value<'static>> {
        if let RetKind::Group { .. } = self.inner.ret {
            // A wrong argument count is the first mistake to report, as on every other path.
            self.check_count(args.len())?;
            return Err(self.struct_return_error());
        }
        // SAFETY: forwarded; no destination is needed for scalar and void returns.
        unsafe { self.invoke_values(std::ptr::null_mut(), args) }
    }

    /// As [`DowncallHandle::invoke`], but a struct/union return is written into a segment
    /// allocated from `allocator` (size and alignment of the return layout; contents not
    /// zeroed before the call) and returned as `Value::Segment` (Java's leading
    /// `SegmentAllocator`). Scalar returns do not touch the allocator.
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke`], plus the allocator's errors, [`Error::OutOfBounds`](crate::Error::OutOfBounds) if
    /// the allocator returns a segment shorter than the return layout, and
    /// [`Error::MisalignedAccess`](crate::Error::MisalignedAccess) if the segment's address is not a multiple of the return
    /// layout's alignment (`SegmentAllocator` is a safe trait and may hand out either); all
    /// before the call.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`].
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{Arena, FunctionDescriptor, Linker, MemoryLayout, Value, ValueLayout as V};
    /// // div_t div(int, int), div_t being struct { int quot; int rem; }.
    /// let div = SymbolLookup::default_lookup().find("div").unwrap();
    /// let div_t = MemoryLayout::struct_layout([MemoryLayout::from(V::I32), V::I32.into()]).unwrap();
    /// let d = FunctionDescriptor::of(div_t, [V::I32, V::I32]);
    /// let h = Linker::native().downcall(&div, &d, &[]).unwrap();
    /// let arena = Arena::confined();
    /// // SAFETY: div has no preconditions for a non-zero divisor.
    /// let r = unsafe { h.invoke_into(&arena, &[Value::I32(17), Value::I32(5)]) }.unwrap();
    /// let Value::Segment(r) = r else { unreachable!() };
    /// assert_eq!((r.get::<i32>(0).unwrap(), r.get::<i32>(4).unwrap()), (3, 2));
    /// # }
    /// ```
    #[inline(always)]
    pub unsafe fn invoke_into<'a, A: SegmentAllocator + ?Sized>(
        &self,
        allocator: &'a A,
        args: &[Value<'_>],
    ) -> Result<Value<'a>> {
        let inner = &*self.inner;
        // A register-returned struct with an image entry: tested first, so that this common
        // case does not also test the return kind.
        if let Some(image) = self.inner.exec.image() {
            let (size, align) = image.size_align();
            let seg = allocator.allocate_uninit(size, align)?;
            check_return(&seg, size, align)?;
            // SAFETY: `seg` has at least the return layout's size; the rest is forwarded.
            unsafe { self.invoke_image(image, seg.as_ptr(), args)? };
            return Ok(Value::Segment(seg));
        }
        // Then a struct the stub writes through the return destination (a MEMORY-class return
        // through the hidden pointer): one compare decides, as in `invoke`.
        if args.len() == inner.struct_arity {
            let Some(entry) = inner.struct_entry else {
                // SAFETY: `struct_arity` is not `usize::MAX` only with a struct entry
                // (`Inner::new`).
                unsafe { std::hint::unreachable_unchecked() }
            };
            let seg = allocator.allocate_uninit(inner.ret_size, inner.ret_align_mask + 1)?;
            // `SegmentAllocator` is a safe trait: a segment shorter than asked for, or
            // misaligned (the callee may store through the hidden pointer with aligned vector
            // stores), is an error here, never a write past its end or a fault.
            if seg.byte_size() < inner.ret_size || seg.address() & inner.ret_align_mask != 0 {
                return Err(inner.bad_struct_segment(seg.address(), seg.byte_size()));
            }
            let target = inner.target as *const c_void;
            // SAFETY: one `Value` per descriptor argument, checked by the stub first; `seg`
            // holds the return layout's size at its alignment (checked above); the callee's
            // contract is the caller's.
            let done = unsafe { StructCall::call(entry, args, seg.as_ptr(), target) };
            if !done {
                // SAFETY: as above; the checked path reports the argument the stub rejected.
                unsafe { self.invoke_values_outlined(seg.as_ptr(), args)? };
            }
            return Ok(Value::Segment(seg));
        }
        // Everything else (a struct return of a capture handle, the trampoline, a wrong
        // argument count, a scalar result): laid out after the two stub paths.
        cold_path();
        match inner.ret {
            RetKind::Group { size, align } => {
                let seg = allocator.allocate_uninit(size, align)?;
                check_return(&seg, size, align)?;
                // SAFETY: `seg` has at least the return layout's size and its alignment; the
                // rest is forwarded.
                unsafe { self.invoke_values_outlined(seg.as_ptr(), args)? };
                Ok(Value::Segment(seg))
            }
            // SAFETY: forwarded.
            _ => unsafe { self.invoke(args) },
        }
    }

    /// A struct-returning call through the handle's image entry, storing the struct into
    /// `ret` (the return layout's size), else the checked path.
    #[inline(always)]
    pub(super) unsafe fn invoke_image(
        &self,
        image: <Exec as Executor>::Image,
        ret: *mut u8,
        args: &[Value<'_>],
    ) -> Result<()> {
        let inner = &*self.inner;
        if args.len() == inner.args.len() {
            let target = inner.target as *const c_void;
            // SAFETY: one `Value` per descriptor argument, checked by the stub first; the
            // callee's contract is the caller's.
            let regs = unsafe { ImageCall::call(&image, args.as_ptr().cast(), target) };
            if let Some(regs) = regs {
                // SAFETY: `ret` holds the return layout's size (caller).
                unsafe { image.store(ret, regs) };
                return Ok(());
            }
        }
        // SAFETY: forwarded.
        unsafe { self.invoke_values_outlined(ret, args).map(|_| ()) }
    }

    /// `invoke_values` out of line (the slow paths of the inlined entry points). `#[cold]`,
    /// so that the compiler lays the stub path of its callers out as the fall-through.
    #[cold]
    #[inline(never)]
    pub(super) unsafe fn invoke_values_outlined(
        &self,
        ret: *mut u8,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        // SAFETY: forwarded.
        unsafe { self.invoke_values(ret, args) }
    }

    /// The `Value` path. `ret` is the struct-return destination (return layout's size), or null
    /// for scalar/void returns.
    #[inline(always)]
    pub(super) unsafe fn invoke_values(
        &self,
        ret: *mut u8,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        self.check_count(args.len())?;
        let (capture, args) = if self.inner.capture {
            (self.capture_ptr(&args[0])?, &args[1..])
        } else {
            (std::ptr::null_mut(), args)
        };
        // SAFETY: forwarded; the count was checked and `capture` validated.
        unsafe { self.invoke_split(ret, capture, args) }
    }

    /// [`DowncallHandle::invoke`] for a capture handle with the capture buffer passed on its
    /// own, one the caller vouches for (the system-call adapter's), and `args` holding only the
    /// descriptor's arguments: only the capture option and the argument count are checked.
    ///
    /// # Errors
    /// [`Error::ArgumentCount`](crate::Error::ArgumentCount) (counting the capture segment, as [`DowncallHandle::invoke`]
    /// does); [`Error::ValueMismatch`](crate::Error::ValueMismatch) if the handle does not capture call state, and as
    /// [`DowncallHandle::invoke`] for the arguments; all before the call.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]; `capture` is valid for reads and writes of
    /// `capture_state_layout()`'s size and 4-byte aligned; the return is not a struct.
    #[inline(always)]
    pub(crate) unsafe fn invoke_capture_ptr(
        &self,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        self.check_captured(args.len())?;
        // SAFETY: forwarded; the count was checked; no destination is needed for scalar and
        // void returns.
        unsafe { self.invoke_split(std::ptr::null_mut(), capture, args) }
    }

    /// The system-call adapter's fast path: the compiled stub's value entry called with the
    /// adapter's capture buffer, returning the raw 64-bit return register (rax) — no `Value` is
    /// built for the return. `None` when the stub path does not apply (no stub, not a capture
    /// handle, a struct return, a wrong argument count, or an argument the stub rejects); the
    /// stub then called nothing and the caller takes the checked path
    /// ([`DowncallHandle::invoke_capture_ptr`]), which accepts the values or reports the exact
    /// error.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_capture_ptr`].
    #[inline(always)]
    pub(crate) unsafe fn invoke_capture_bits(
        &self,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Option<u64> {
        let inner = &*self.inner;
        // `args` are the descriptor's arguments (the capture segment is `capture`).
        if args.len() != inner.args.len() {
            return None;
        }
        // SAFETY: one `Value` per descriptor argument; `capture` is a valid capture buffer and
        // no return destination is needed (the caller's contract); the callee's contract is
        // the caller's.
        unsafe {
            inner
                .exec
                .call_capture(args.as_ptr().cast(), capture, inner.target as *const c_void)
        }
    }

    /// The system-call adapter's fastest path: errno set to 0, the non-capturing stub of this
    /// capture handle's signature called with `args` (the descriptor's arguments), and the raw
    /// return register returned with this thread's errno address. The caller reads errno there
    /// right after this returns, before anything that could change it — the same value the
    /// capture stub would have saved into a capture buffer "right after the call". `None` (with
    /// errno possibly already zeroed, nothing called) when this path does not apply: no stub,
    /// not a capture handle, a struct return, a wrong argument count, or an argument the stub
    /// rejects; the caller then takes the checked capture path.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`].
    #[inline(always)]
    pub(crate) unsafe fn invoke_errno_bits(&self, args: &[Value<'_>]) -> Option<(u64, *mut i32)> {
        let inner = &*self.inner;
        let stub = inner.exec.uncaptured()?;
        if args.len() != inner.args.len() {
            return None;
        }
        let errno = crate::os::thread_errno();
        if errno.is_null() {
            return None;
        }
        // SAFETY: `errno` is this thread's errno address (`__errno_location()`).
        unsafe { errno.write(0) };
        let target = inner.target as *const c_void;
        // SAFETY: one `Value` per descriptor argument,
        // checked by the stub first; the callee's contract is the caller's.
        let bits = unsafe { UncapturedCall::call(stub, args.as_ptr().cast(), target) };
        bits.map(|bits| (bits, errno))
    }

    /// The `Value` path after the count check. `capture` is the checked capture buffer (or
    /// null without capture) and `args` the descriptor's arguments (exactly their count).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]; `capture` is null or valid for `capture_state_layout()`'s size, 4-aligned; `ret`
    /// as in `invoke_values`.
    #[inline(always)]
    pub(super) unsafe fn invoke_split(
        &self,
        ret: *mut u8,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        // SAFETY: forwarded; one `Value` per descriptor argument (count checked by the
        // callers).
        if let Some(bits) = unsafe { self.call_values_entry(ret, capture, args) } {
            return Ok(self.returned_value(bits));
        }
        // Rejected by the stub, or no stub: out of line, integer conversions (`convert`) and
        // the checked trampoline.
        // SAFETY: forwarded.
        unsafe { self.invoke_rejected(ret, capture, args) }
    }

    /// The stub's values entry called with `args` (one `Value` per descriptor argument): the
    /// result's register bits, or `None` (nothing called) without a stub or when the stub
    /// rejects an argument.
    ///
    /// # Safety
    /// As `invoke_split`.
    #[inline(always)]
    pub(super) unsafe fn call_values_entry(
        &self,
        ret: *mut u8,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Option<u64> {
        let inner = &*self.inner;
        // SAFETY: one `Value` per descriptor argument (the caller); the stub checks every tag
        // and struct segment length before anything else; `ret` and `capture` as this
        // function's contract says; the callee's contract is the caller's.
        unsafe {
            inner.exec.call_values(
                args.as_ptr().cast(),
                ret,
                capture,
                inner.target as *const c_void,
            )
        }
    }

    /// The `Value` of a scalar or void return from the stub's raw register bits.
    #[inline(always)]
    pub(super) fn returned_value(&self, raw: u64) -> Value<'static> {
        let bits = if self.inner.ret_tag.1 {
            (raw as u8 != 0) as u64
        } else {
            raw
        };
        self.value_of_bits(bits)
    }

    /// The `Value` of a scalar or void return from register bits that are already a valid
    /// payload of the return kind's variant (a bool return normalised to 0/1 by the caller).
    #[inline(always)]
    pub(super) fn value_of_bits(&self, bits: u64) -> Value<'static> {
        // SAFETY: `ret_tag.0` is the tag of `Void` or of the return kind's variant, and `bits`
        // a valid payload of it (the caller).
        unsafe { crate::backend::value_of_words(self.inner.ret_tag.0, bits) }
    }

    /// The trampoline (`CallFrame`) value path, with full per-argument checks: handles without
    /// a stub, and values the stub does not accept. Out of line: invocations through a stub
    /// inline only the stub call into their caller.
    #[inline(never)]
    pub(super) unsafe fn invoke_split_trampoline(
        &self,
        ret: *mut u8,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        let inner = &*self.inner;
        let pos = inner.capture as usize;
        let arg = |i: usize| -> Result<ArgSource> {
            let (v, kind) = (args[i], inner.args[i]);
            Ok(match (kind, v) {
                (ArgKind::Scalar(k), v) => match v.scalar_bits(k) {
                    Some(bits) => ArgSource::Bits(bits),
                    // Another kind: an integer that fits is converted (`convert`), anything
                    // else is the error.
                    None => ArgSource::Bits(self.converted_bits(i + pos, k, &v)?),
                },
                (ArgKind::Group { size, .. }, Value::Segment(s)) if s.byte_size() >= size => {
                    ArgSource::Bytes(s.as_ptr() as *const u8)
                }
                (ArgKind::Group { size, .. }, v) => {
                    return Err(self.mismatch(
                        i + pos,
                        format_args!(
                            "a segment of at least {size} bytes for {}",
                            inner.descriptor.argument_layouts()[i]
                        ),
                        &v,
                    ))
                }
            })
        };
        // SAFETY: every `Bytes` source is a segment of at least the struct's size; `ret` and
        // `capture` as this function's contract says; the callee's contract is the caller's.
        let bits = unsafe {
            inner.exec.interpret(
                &inner.plan,
                inner.target as *const c_void,
                capture,
                ret,
                arg,
            )
        }?;
        Ok(match inner.ret {
            RetKind::Scalar(k) => Value::from_scalar_bits(k, bits),
            _ => Value::Void,
        })
    }
}
