//! The system-call adapter (the JDK's internal `CaptureStateUtil.adaptSystemCall`,
//! JDK-8347408): a downcall handle linked with
//! [`LinkerOption::CaptureCallState`](crate::linker::LinkerOption::CaptureCallState) and returning
//! a C `int` or `long` becomes a [`SystemCall`] that returns `r` when `r >= 0` and minus the
//! captured state (`-errno`) otherwise, with no capture segment for the caller to manage and no
//! heap allocation per call.
//!
//! - [`adapt_system_call`]`(&handle, "errno")` validates once (return type, capture option,
//!   state name) and returns a [`SystemCall`].
//! - [`SystemCall::invoke`] (`&[Value]`) and [`SystemCall::invoke_raw`] (argument pointers):
//!   the JDK convention, `r` or `-state`, as an `i64`.
//! - [`SystemCall::call`]: the idiomatic form, `Ok(r)` or `Err(`[`Errno`]`)`; on Windows
//!   [`SystemCall::call_last_error`] for the `GetLastError` and `WSAGetLastError` states:
//!   `Ok(r)` or `Err(`[`LastError`]`)`, whose `Display` is the system's message
//!   (`FormatMessageW` into a stack buffer).
//! - [`SystemCall::typed`] → [`TypedSystemCall`]: for a signature known at compile time, a
//!   direct call through a checked `extern "C" fn` pointer (no call plan to interpret, no
//!   capture buffer).
//!
//! # The fast path: no capture buffer at all
//! For the `errno` state (the only one on Linux) and a handle with a compiled stub,
//! [`SystemCall::invoke`]/[`SystemCall::call`] zero the thread's errno (its address cached per
//! thread), call the same signature's stub *without* capture, and read errno right after it
//! returns — no code in between can change it, so this is the value the capture stub would
//! have saved into a buffer "right after the call" (the typed path, [`TypedSystemCall`], has
//! always worked this way). Anything else (another state, no stub, values the stub rejects)
//! takes the buffered path below, out of line.
//!
//! ```
//! use gatun::capture::{adapt_system_call, Errno};
//! use gatun::linker::{FunctionDescriptor, Linker, LinkerOption, SymbolLookup};
//! use gatun::{Value, ValueLayout};
//! # fn main() -> gatun::Result<()> {
//! # #[cfg(all(gatun_executes, unix))] {
//! let close = SymbolLookup::default_lookup().find("close")?;
//! let handle = Linker::native().downcall(
//!     &close,
//!     &FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::I32]),
//!     &[LinkerOption::CaptureCallState(&["errno"])],
//! )?;
//! let close = adapt_system_call(&handle, "errno")?;
//! // SAFETY: close(int) -> int; -1 is never an open descriptor.
//! assert_eq!(unsafe { close.invoke(&[Value::I32(-1)]) }?, -9); // -EBADF
//! assert_eq!(unsafe { close.call(&[Value::I32(-1)]) }?, Err(Errno(9)));
//! let close = close.typed::<unsafe extern "C" fn(i32) -> i32>()?;
//! // SAFETY: as above.
//! assert_eq!(unsafe { close.invoke((-1,)) }, -9);
//! # }
//! # Ok(())
//! # }
//! ```
//!
//! # Windows states
//! On Windows the capture struct is `{ GetLastError, WSAGetLastError, errno }` (12 bytes,
//! [`capture_state_layout`]) and an adapter may name any of the three. A capturing Win64 call
//! restores all three states from the buffer right before the call and saves all three right
//! after it (inside the stub, before anything that could change them runs — the JDK's
//! `CapturableState` order), whichever of them the handle names (the JDK touches only the
//! named ones). Windows keeps `GetLastError` and `WSAGetLastError` in one per-thread value, so
//! both fields come back equal. The adapter zeroes the whole struct first. The typed path clears
//! and reads the one state itself (`SetLastError(0)` … `GetLastError()`).
//!
//! # Where the capture buffer comes from
//! When a capture buffer is needed (the buffered path: no compiled stub, a stub that rejects
//! the values, or `invoke_raw`), [`SystemCall`] pushes a frame on one process-wide
//! [`BufferStack`] whose per-thread block holds [`CAPTURE_NESTING`] capture structs
//! ([`capture_state_layout`], 4 bytes each, 12 on Windows), hands the frame's segment to the handle as the
//! capture segment, and pops the frame on return (JDK `CaptureStateUtil`'s per-thread
//! `BufferStack.of(CAPTURE_LAYOUT)`). An adapted call made while another is in progress on the
//! same thread (from a callback the callee makes) pushes the next frame above it; beyond
//! [`CAPTURE_NESTING`] levels the frame falls back to a heap block (still correct, then
//! allocating). The JDK's stack holds exactly one capture struct, so any nested call falls back
//! there; 28 more bytes per thread (84 on Windows) buy allocation-free nesting. The fast path above needs no
//! buffer at all, which is why it is about 2.4 ns cheaper than a frame push/allocate/pop.
//!
//! # Semantics (JDK 25 `jdk.internal.foreign.CaptureStateUtil`, JDK-8347408), and where gatun differs
//! - The state is read only when the result is negative; then `-(state as i32)` is returned,
//!   sign-extended for a `long` (so a state of `i32::MIN` stays `i32::MIN`). A failure with
//!   state 0 returns 0 from `invoke` (as in the JDK); [`SystemCall::call`] reports it as
//!   `Err(Errno(0))` instead, because it keeps the sign of the result.
//! - gatun's capture is "restore before, save after" (the trampoline writes the buffer's errno
//!   into `errno` just before the call). The JDK restores whatever a reused buffer held — a
//!   stale errno of an earlier call. The adapter writes 0 into the buffer first, so every
//!   adapted call starts with `errno == 0`, on every path (typed included), and a failing call
//!   that does not set errno can never report an older call's errno.
//!
//! # Invariants (the unsafe story of this module)
//! - A [`SystemCall`] exists only for a handle that captures `errno`, takes the capture segment
//!   first and returns `i32` or `i64` (checked by [`adapt_system_call`]), so the `Value` it
//!   returns is `Value::I32` or `Value::I64` and the raw path writes 4 or 8 bytes.
//! - The capture segment lives in a [`crate::memory::Frame`] that outlives the downcall (it is
//!   dropped after the state is read), is 4-byte aligned and at least the capture struct's size.
//! - A [`TypedSystemCall`] exists only when the Rust function type's parameters and return are
//!   exactly the handle's descriptor (same scalar kinds, same count, not variadic); calling the
//!   target through that `extern "C" fn` type is then the same SysV call the trampoline makes.

mod errno;
mod last_error;
mod thread_state;
mod typed;

#[cfg(test)]
mod tests;

pub use errno::Errno;
pub use last_error::LastError;
pub use typed::{SysCallReturn, SysCallSignature, TypedSystemCall};

use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::layout::{MemoryLayout, ScalarKind};
use crate::linker::option::CAPTURE_STATE_SIZE;
use crate::linker::{capturable_states, capture_state_layout, check_capture_names, DowncallHandle};
use crate::memory::{BufferStack, SegmentAllocator};
use crate::value::Value;
use thread_state::State;

/// How many buffered adapted calls can be nested on one thread (callee → callback → adapted
/// call → …) before a capture buffer comes from the heap: 8, i.e. a 32-byte block per thread (96 bytes on Windows).
pub const CAPTURE_NESTING: usize = 8;

/// Alignment in bytes of the capture struct.
const CAPTURE_ALIGN: usize = 4;

static CAPTURE_STACK: OnceLock<BufferStack> = OnceLock::new();

/// The per-thread stack the adapter takes capture buffers from.
#[inline(always)]
fn capture_stack() -> &'static BufferStack {
    match CAPTURE_STACK.get() {
        Some(stack) => stack,
        None => init_capture_stack(),
    }
}

#[cold]
#[inline(never)]
fn init_capture_stack() -> &'static BufferStack {
    CAPTURE_STACK.get_or_init(|| {
        let layout = MemoryLayout::sequence_layout(CAPTURE_NESTING, capture_state_layout())
            .expect("8 x 12 bytes at most fits");
        BufferStack::for_layout(&layout).expect("a 32-byte, 4-aligned stack is valid")
    })
}

/// Size in bytes of the capture struct on this platform (`capture_state_layout()`: 4, or 12 on
/// Windows).
const CAPTURE_SIZE: usize = CAPTURE_STATE_SIZE;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// C `int` (`i32`).
    Int,
    /// A 64-bit result (`i64`): C `long` on LP64, `long long`/`ssize_t`/`intptr_t`.
    Long,
}

/// A downcall handle adapted to the system-call convention: `r` when `r >= 0`, else minus the
/// captured state (built by [`adapt_system_call`]; see the [module docs](self)).
///
/// `Send + Sync` and cheap to clone (it holds a [`DowncallHandle`]); every thread gets its own
/// capture buffers (on its stack). No invocation path allocates.
///
/// ```
/// # #[cfg(all(gatun_executes, unix))] {
/// use gatun::capture::{adapt_system_call, Errno};
/// use gatun::linker::{FunctionDescriptor, Linker, LinkerOption, SymbolLookup};
/// use gatun::{Value, ValueLayout};
/// let close = SymbolLookup::default_lookup().find("close").unwrap();
/// let handle = Linker::native()
///     .downcall(
///         &close,
///         &FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::I32]),
///         &[LinkerOption::CaptureCallState(&["errno"])],
///     )
///     .unwrap();
/// let close = adapt_system_call(&handle, "errno").unwrap();
/// // SAFETY: close(int) -> int; -1 is never an open descriptor.
/// assert_eq!(unsafe { close.call(&[Value::I32(-1)]) }.unwrap(), Err(Errno(9))); // EBADF
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SystemCall {
    handle: DowncallHandle,
    state: &'static str,
    /// The thread state `state` names.
    kind: State,
    /// Byte offset of the state in the capture struct.
    offset: usize,
    width: Width,
    /// The state is `errno`: `invoke` may read the thread's errno itself instead of a capture
    /// buffer.
    errno_direct: bool,
}

/// Adapts `handle` into a [`SystemCall`] that returns `r` or `-state` (the JDK's
/// `CaptureStateUtil.adaptSystemCall(target, stateName)`).
///
/// Validation, in the JDK's order (JDK 25 `jdk.internal.foreign.CaptureStateUtil.adaptSystemCall`,
/// JDK-8347408): the return type, then the capture segment, then the state name.
///
/// # Errors
/// - [`Error::Adapt`] `"... does not return an int or a long"`: the descriptor's return is not
///   `I32` or `I64` (C `int`, or `long`/`ssize_t` on LP64);
/// - [`Error::Adapt`] `"... was not linked with capture_call_state(\"errno\")"`: the handle
///   takes no capture segment, or it was linked with a `CaptureCallState` list that does not
///   include `state`;
/// - [`Error::UnknownCaptureState`] `"unknown capture state 'foo'; valid: errno"`;
/// - [`Error::CaptureStateUnavailable`] `"GetLastError is only available on Windows"` (also
///   `WSAGetLastError`).
pub fn adapt_system_call(handle: &DowncallHandle, state: &str) -> Result<SystemCall> {
    let adapt = |reason: String| Error::Adapt {
        handle: handle.descriptor().to_string(),
        reason,
    };
    let width = match handle.descriptor().return_layout() {
        Some(MemoryLayout::Value(v)) if v.kind() == ScalarKind::I32 => Width::Int,
        Some(MemoryLayout::Value(v)) if v.kind() == ScalarKind::I64 => Width::Long,
        _ => return Err(adapt("does not return an int or a long".into())),
    };
    let not_linked = || {
        adapt(format!(
            "was not linked with capture_call_state(\"{state}\")"
        ))
    };
    if !handle.captures_call_state() {
        return Err(not_linked());
    }
    check_capture_names(&[state])?;
    let Some(&state) = capturable_states().iter().find(|&&s| s == state) else {
        return Err(not_linked());
    };
    if !handle.captured_states().contains(&state) {
        return Err(not_linked());
    }
    let Some(kind) = State::of(state) else {
        return Err(not_linked());
    };
    let offset = capture_state_layout().byte_offset_of(state)?;
    if offset + 4 > CAPTURE_SIZE {
        return Err(not_linked());
    }
    Ok(SystemCall {
        handle: handle.clone(),
        state,
        kind,
        offset,
        width,
        errno_direct: kind == State::Errno,
    })
}

/// `-state` in the JDK's convention: the `int` negated (wrapping), then sign-extended.
#[inline(always)]
fn negated(state: i32) -> i64 {
    state.wrapping_neg() as i64
}

impl SystemCall {
    /// The adapted handle (the capturing [`DowncallHandle`]).
    pub fn handle(&self) -> &DowncallHandle {
        &self.handle
    }

    /// The captured state this adapter returns on failure (`"errno"`, `"GetLastError"` or
    /// `"WSAGetLastError"`).
    pub fn state(&self) -> &'static str {
        self.state
    }

    /// The checked path of `invoke_state` (no stub, or values the stub does not accept): out of
    /// line, so that the adapted call inlines only the stub call into its caller.
    ///
    /// # Safety
    /// As [`SystemCall::invoke`]; `capture` is a valid capture buffer (the capture struct's size, 4-aligned).
    #[cold]
    #[inline(never)]
    unsafe fn invoke_checked(&self, capture: *mut i32, args: &[Value<'_>]) -> Result<i64> {
        // SAFETY: forwarded to the caller; the return is `int` or `long` (adapt-time check).
        match unsafe { self.handle.invoke_capture_ptr(capture, args) }? {
            Value::I32(r) => Ok(r as i64),
            Value::I64(r) => Ok(r),
            other => Err(unexpected_return(other)),
        }
    }

    /// Calls the target with a capture buffer on this call's Rust stack frame and returns
    /// `Ok(r)` when the result `r >= 0`, `Err(state)` otherwise.
    ///
    /// # Safety
    /// As [`SystemCall::invoke`].
    #[inline(always)]
    unsafe fn invoke_state(&self, args: &[Value<'_>]) -> Result<std::result::Result<i64, i32>> {
        if !self.errno_direct {
            // SAFETY: forwarded to the caller.
            return unsafe { self.invoke_state_buffered(args) };
        }
        // The fast path (the `errno` state only): errno zeroed, the non-capturing stub
        // called, errno read right after (no code in between can change it).
        // SAFETY: forwarded to the caller; the return is `int` or `long`, so the raw return
        // register holds the `int` (low 32 bits) or the `long`.
        if let Some((bits, errno)) = unsafe { self.handle.invoke_errno_bits(args) } {
            let r = match self.width {
                Width::Int => bits as u32 as i32 as i64,
                Width::Long => bits as i64,
            };
            if r >= 0 {
                return Ok(Ok(r));
            }
            // SAFETY: `errno` is this thread's errno address, and `errno` is this adapter's
            // state (`errno_direct`).
            return Ok(Err(unsafe { errno.read() }));
        }
        // SAFETY: forwarded to the caller.
        unsafe { self.invoke_state_buffered(args) }
    }

    /// `invoke_state` through a capture buffer on this frame (the capture stub, or the
    /// checked path): out of line, for values the fast path does not take.
    ///
    /// # Safety
    /// As [`SystemCall::invoke`].
    #[cold]
    #[inline(never)]
    unsafe fn invoke_state_buffered(
        &self,
        args: &[Value<'_>],
    ) -> Result<std::result::Result<i64, i32>> {
        // The capture struct, zeroed (every state 0 before the call): CAPTURE_SIZE bytes,
        // 4-aligned, alive until the end of this function.
        let frame = capture_stack().push_frame(CAPTURE_SIZE, CAPTURE_ALIGN)?;
        let seg = frame.allocate_uninit(CAPTURE_SIZE, CAPTURE_ALIGN)?;
        let capture = seg.as_ptr().cast::<i32>();
        // Inside `seg` (offset + 4 <= CAPTURE_SIZE) and 4-aligned (the offset is a field's).
        let slot = capture.wrapping_byte_add(self.offset);
        // SAFETY: `seg` is CAPTURE_SIZE writable bytes, 4-aligned; the frame keeps it valid
        // until the end of this function. Every state = 0 before the call (module docs).
        unsafe { seg.as_ptr().write_bytes(0, CAPTURE_SIZE) };
        // SAFETY: forwarded to the caller; `seg` is a valid capture buffer and the return is
        // `int` or `long`, so the stub's raw return register holds the `int` (low 32 bits) or
        // the `long`.
        let r = match unsafe { self.handle.invoke_capture_bits(capture, args) } {
            Some(bits) => match self.width {
                Width::Int => bits as u32 as i32 as i64,
                Width::Long => bits as i64,
            },
            // SAFETY: as above.
            None => unsafe { self.invoke_checked(capture, args) }?,
        };
        if r >= 0 {
            return Ok(Ok(r));
        }
        // SAFETY: as above; the trampoline saved errno into `slot` right after the call.
        Ok(Err(unsafe { slot.read() }))
    }

    /// Calls the target (`args` **without** the capture segment: the adapter supplies it) and
    /// returns its result `r` when `r >= 0`, else minus the captured state, e.g. `-9`
    /// (`-EBADF`) for `close(-1)`. An `int` result is widened to `i64`.
    ///
    /// The state is read only for a negative result. No heap allocation (up to
    /// [`CAPTURE_NESTING`] nested buffered calls per thread): the fast path needs no buffer, the
    /// buffered path takes it from this thread's capture stack (see the module docs).
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke`] with the capture segment: [`Error::ArgumentCount`] (its
    /// counts include the capture segment),
    /// [`Error::ValueMismatch`] (before the call). [`Error::OutOfMemory`] only if a deeply
    /// nested call's heap fallback frame cannot be allocated.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]: the symbol must be a function of the linked type, and
    /// `args` must satisfy its contract.
    #[inline]
    pub unsafe fn invoke(&self, args: &[Value<'_>]) -> Result<i64> {
        // SAFETY: forwarded to the caller.
        Ok(match unsafe { self.invoke_state(args) }? {
            Ok(r) => r,
            Err(state) => negated(state),
        })
    }

    /// As [`SystemCall::invoke`], returning `Ok(Ok(r))` for `r >= 0` and `Ok(Err(Errno(state)))`
    /// for a negative result, for an adapter of the `errno` state. The outer `Result` reports
    /// gatun's own argument errors, the inner one the call's outcome, so `?` can send each to
    /// its own error type (`Errno` converts into [`std::io::Error`]). Unlike `invoke`, a failure
    /// with state 0 stays a failure (`Err(Errno(0))`).
    ///
    /// # Errors
    /// As [`SystemCall::invoke`]; and [`Error::Adapt`] (before the call) for an adapter of
    /// `GetLastError` or `WSAGetLastError`, whose codes are not errno values: use
    /// [`SystemCall::call_last_error`].
    ///
    /// # Safety
    /// As [`SystemCall::invoke`].
    #[inline]
    pub unsafe fn call(&self, args: &[Value<'_>]) -> Result<std::result::Result<i64, Errno>> {
        if self.kind.is_windows_error() {
            return Err(self.wrong_error_type("a Windows error code", "call_last_error"));
        }
        // SAFETY: forwarded to the caller.
        Ok(unsafe { self.invoke_state(args) }?.map_err(Errno))
    }

    /// As [`SystemCall::call`] for an adapter of `GetLastError` or `WSAGetLastError` (Windows):
    /// `Ok(Ok(r))` for `r >= 0`, `Ok(Err(LastError(code)))` for a negative result
    /// ([`LastError`] displays the system's message).
    ///
    /// ```
    /// # fn main() -> gatun::Result<()> {
    /// # if !cfg!(all(windows, target_arch = "x86_64")) { return Ok(()); }
    /// use gatun::capture::{adapt_system_call, LastError};
    /// use gatun::linker::{FunctionDescriptor, Linker, LinkerOption, SymbolLookup};
    /// use gatun::{Value, ValueLayout};
    /// // int closesocket(SOCKET s): fails with WSANOTINITIALISED (10093) before WSAStartup.
    /// // SAFETY: ws2_32.dll is a system library whose initialisers are sound to run.
    /// let ws2 = unsafe { SymbolLookup::library("ws2_32.dll") }?;
    /// let f = ws2.find("closesocket")?;
    /// let handle = Linker::native().downcall(
    ///     &f,
    ///     &FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::I64]),
    ///     &[LinkerOption::CaptureCallState(&["WSAGetLastError"])],
    /// )?;
    /// let closesocket = adapt_system_call(&handle, "WSAGetLastError")?;
    /// // SAFETY: closesocket(SOCKET) -> int; an invalid socket is reported, not used.
    /// let r = unsafe { closesocket.call_last_error(&[Value::I64(-1)]) }?;
    /// assert!(matches!(r, Err(LastError(10093 | 10038))), "{r:?}");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`SystemCall::invoke`]; and [`Error::Adapt`] (before the call) for an adapter of
    /// `errno`: use [`SystemCall::call`].
    ///
    /// # Safety
    /// As [`SystemCall::invoke`].
    #[inline]
    pub unsafe fn call_last_error(
        &self,
        args: &[Value<'_>],
    ) -> Result<std::result::Result<i64, LastError>> {
        if !self.kind.is_windows_error() {
            return Err(self.wrong_error_type("an errno value", "call"));
        }
        // SAFETY: forwarded to the caller.
        Ok(unsafe { self.invoke_state(args) }?.map_err(|code| LastError(code as u32)))
    }

    #[cold]
    #[inline(never)]
    fn wrong_error_type(&self, what: &str, instead: &str) -> Error {
        Error::Adapt {
            handle: self.handle.descriptor().to_string(),
            reason: format!(
                "its state {} is {what}: use SystemCall::{instead} for this adapter",
                self.state
            ),
        }
    }

    /// The raw path (like [`DowncallHandle::invoke_raw`]): `args[i]` points to descriptor
    /// argument i's bytes (without the capture segment). Returns as [`SystemCall::invoke`]; the
    /// capture buffer comes from this thread's capture stack.
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] (before the call); [`Error::OutOfMemory`] as
    /// [`SystemCall::invoke`].
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`]: each `args[i]` must be readable for its layout's
    /// size, and the call must satisfy the callee's contract.
    #[inline]
    pub unsafe fn invoke_raw(&self, args: &[*const u8]) -> Result<i64> {
        // The capture struct, from this thread's capture stack as in `invoke_state_buffered`.
        let frame = capture_stack().push_frame(CAPTURE_SIZE, CAPTURE_ALIGN)?;
        let seg = frame.allocate_uninit(CAPTURE_SIZE, CAPTURE_ALIGN)?;
        let capture = seg.as_ptr().cast::<i32>();
        let slot = capture.wrapping_byte_add(self.offset);
        // SAFETY: `seg` is CAPTURE_SIZE writable bytes, 4-aligned, valid until the frame drops
        // at the end of this function; every state = 0 before the call.
        unsafe { seg.as_ptr().write_bytes(0, CAPTURE_SIZE) };
        let mut ret = 0u64;
        // SAFETY: forwarded to the caller; `seg` is a valid capture buffer and `ret` has 8
        // bytes, enough for the `int` or `long` return.
        unsafe {
            self.handle
                .invoke_raw_captured(capture.cast(), args, (&mut ret as *mut u64).cast())?
        };
        // The raw path stored the result's bytes at the start of `ret` (an `int` in its first
        // four bytes, in the target's byte order).
        let r = match self.width {
            Width::Int => i32::from_ne_bytes(ret.to_ne_bytes()[..4].try_into().unwrap()) as i64,
            Width::Long => ret as i64,
        };
        if r >= 0 {
            return Ok(r);
        }
        // SAFETY: as in `invoke_state`.
        Ok(negated(unsafe { slot.read() }))
    }

    /// The typed fast path for a signature known at compile time, e.g.
    /// `sc.typed::<unsafe extern "C" fn(c_int) -> c_int>()`: a [`TypedSystemCall`] that calls
    /// the target directly through that function pointer type.
    ///
    /// # Errors
    /// [`Error::Adapt`] if `F`'s parameters or return are not exactly the handle's descriptor
    /// (same count, same scalar kinds; struct arguments cannot be typed), or the handle is
    /// variadic.
    pub fn typed<F: SysCallSignature>(&self) -> Result<TypedSystemCall<F>> {
        TypedSystemCall::new(self)
    }
}

#[cold]
fn unexpected_return(v: Value<'_>) -> Error {
    Error::ValueMismatch {
        position: "return".into(),
        expected: "an int or a long".into(),
        found: v.kind_name().into(),
    }
}

// An adapter is shared between threads; keep that a compile-time fact.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<SystemCall>();
    send_sync::<TypedSystemCall<unsafe extern "C" fn(i32) -> i32>>();
    send_sync::<Errno>();
};
