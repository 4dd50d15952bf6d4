//! The raw paths of a [`DowncallHandle`] (arguments as pointers to their bytes, the result
//! written at a destination): `invoke_raw`, its capture variant, and the typed handles' stub
//! call.

use std::ffi::c_void;

use super::checks::write_scalar;
use super::DowncallHandle;
use crate::backend::{ArgSource, Executor, RetKind};
use crate::error::Result;

impl DowncallHandle {
    /// The raw path through the compiled stub, if the handle has one (for typed handles):
    /// `args` the descriptor's arguments only, `capture` null or the capture buffer. `None`
    /// (nothing called) without a stub.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`] (with `args` holding one pointer per descriptor
    /// argument, count not checked); `capture` null for a handle without capture, else a
    /// capture buffer (`capture_state_layout()`'s size, 4-aligned).
    #[inline(always)]
    pub(in crate::linker) unsafe fn call_stub_raw(
        &self,
        args: *const *const u8,
        ret: *mut u8,
        capture: *mut i32,
    ) -> Option<u64> {
        // SAFETY: forwarded to the caller.
        unsafe {
            self.inner
                .exec
                .call_raw(args, ret, capture, self.inner.target as *const c_void)
        }
    }

    /// The raw path, for interpreters that hold arguments in memory (like libffi's
    /// `ffi_call`): `args[i]` points to argument i's bytes in its layout's representation
    /// (a scalar's `size` bytes, a pointer's 8 bytes, a struct's bytes); with capture,
    /// `args[0]` points to the capture buffer itself (`capture_state_layout()`: 4 bytes, 12 on
    /// Windows; 4-byte aligned; its fields written to the thread's states before the call and
    /// read back after it).
    ///
    /// Return contract: exactly the return layout's size in bytes is written at `ret` — a
    /// scalar's `size` bytes (small integers truncated to their width; a `bool` as 0 or 1), or
    /// the struct's bytes. Nothing is written for `void` (`ret` may then be null).
    ///
    /// # Errors
    /// [`Error::ArgumentCount`](crate::Error::ArgumentCount) (before the call); [`Error::OutOfMemory`](crate::Error::OutOfMemory) when the caller copies
    /// of by-reference arguments (AArch64 composites over 16 bytes, AAPCS64 §6.8.2 B.3) fit
    /// neither this thread's linker stack nor the heap (nothing is called then).
    ///
    /// # Safety
    /// Each `args[i]` must be readable for its layout's size, `ret` writable for the return
    /// layout's size and aligned to the return layout's alignment (a callee returning a
    /// MEMORY-class struct may store through the hidden pointer with aligned vector stores,
    /// e.g. `movaps`), and the call must satisfy the callee's contract.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let h = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// let (x, mut r) = (-9i32, 0i32);
    /// let args = [(&x as *const i32).cast::<u8>()];
    /// // SAFETY: `args[0]` points to an i32; `r` takes the i32 result; abs has no preconditions.
    /// unsafe { h.invoke_raw(&args, (&mut r as *mut i32).cast()) }.unwrap();
    /// assert_eq!(r, 9);
    /// # }
    /// ```
    pub unsafe fn invoke_raw(&self, args: &[*const u8], ret: *mut u8) -> Result<()> {
        self.check_count(args.len())?;
        let (capture, args) = if self.inner.capture {
            (args[0] as *mut i32, &args[1..])
        } else {
            (std::ptr::null_mut(), args)
        };
        // SAFETY: forwarded to the caller; the count was checked.
        unsafe { self.invoke_raw_split(capture, args, ret) }
    }

    /// The raw path after the count check (`args`: the descriptor's arguments only).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`]; `capture` is null (no capture) or a capture buffer.
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke_raw`] after its count check: the executor's own failure to
    /// make by-reference copies (then nothing was called and nothing written).
    #[inline(always)]
    pub(super) unsafe fn invoke_raw_split(
        &self,
        capture: *mut i32,
        args: &[*const u8],
        ret: *mut u8,
    ) -> Result<()> {
        let inner = &*self.inner;
        let target = inner.target as *const c_void;
        // SAFETY: one pointer per descriptor argument (count checked by the callers), each
        // readable for its layout's size; `ret` writable for the return layout's size;
        // `capture` null or a valid capture buffer: the caller's contract.
        let bits = match unsafe { inner.exec.call_raw(args.as_ptr(), ret, capture, target) } {
            Some(bits) => bits,
            None => {
                // SAFETY: as above (the sources are the caller's argument bytes). The sources
                // are never checked; the only failure is making by-reference copies, reported
                // before anything is called.
                unsafe {
                    inner
                        .exec
                        .interpret(&inner.plan, target, capture, ret, |i| {
                            Ok(ArgSource::Bytes(args[i]))
                        })
                }?
            }
        };
        if let RetKind::Scalar(k) = inner.ret {
            // SAFETY: as above.
            unsafe { write_scalar(k, bits, ret) };
        }
        Ok(())
    }

    /// The raw counterpart of [`DowncallHandle::invoke_capture_ptr`] (the system-call
    /// adapter's raw path): as [`DowncallHandle::invoke_raw`] with the capture buffer passed on
    /// its own (`capture`: `capture_state_layout()`'s size, 4-byte aligned, its fields written to
    /// the thread's states before and read back after the call) and
    /// `args` holding only the descriptor's arguments.
    ///
    /// # Errors
    /// [`Error::ArgumentCount`](crate::Error::ArgumentCount) as [`DowncallHandle::invoke_capture_ptr`];
    /// [`Error::ValueMismatch`](crate::Error::ValueMismatch) if the handle does not capture call state (before the call).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`]; `capture` must be valid for reads and writes of
    /// `capture_state_layout()`'s size and 4-byte aligned.
    pub(crate) unsafe fn invoke_raw_captured(
        &self,
        capture: *mut u8,
        args: &[*const u8],
        ret: *mut u8,
    ) -> Result<()> {
        self.check_captured(args.len())?;
        // SAFETY: forwarded to the caller.
        unsafe { self.invoke_raw_split(capture.cast(), args, ret) }
    }
}
