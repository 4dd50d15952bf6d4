//! The typed fast path of the system-call adapter: [`TypedSystemCall`], for callers that know
//! the C signature at compile time.
//!
//! [`SystemCall::typed`] checks once that an `unsafe extern "C" fn(A1, .., An) -> R` type (each
//! `Ai` a [`Scalar`], `R` `i32`, `i64` or `isize`, n ≤ 8) is exactly the handle's descriptor,
//! then calls the target through that function pointer: rustc emits the same SysV call the trampoline would,
//! with no call plan to interpret, no `Value` matching and no capture buffer — the state is read
//! from the thread's `errno` right after the call, with no code that could change it in between
//! (the same "save after" the trampoline does, done by the caller).

use std::ffi::{c_int, c_void};
use std::fmt;

use super::thread_state::State;
use super::{Errno, LastError, SystemCall};
use crate::error::{Error, Result};
use crate::layout::{MemoryLayout, ScalarKind};
use crate::linker::DowncallHandle;
use crate::value::Scalar;

mod sealed {
    pub trait Sealed {}
}

/// The return type of a typed system call: `i32` (C `int`), or `i64` / `isize` (C `long`,
/// `ssize_t`; both the descriptor's `I64` on LP64). Sealed.
///
/// ```
/// use gatun::capture::SysCallReturn;
/// fn takes<R: SysCallReturn>() {}
/// takes::<i32>(); // C int
/// takes::<isize>(); // ssize_t
/// ```
pub trait SysCallReturn: Scalar + sealed::Sealed {
    /// `self < 0`.
    fn is_negative(self) -> bool;
    /// `-state` in the JDK's convention (the `int` negated, wrapping, then sign-extended).
    fn negated_state(state: i32) -> Self;
}

impl sealed::Sealed for i32 {}
impl SysCallReturn for i32 {
    #[inline(always)]
    fn is_negative(self) -> bool {
        self < 0
    }
    #[inline(always)]
    fn negated_state(state: i32) -> i32 {
        state.wrapping_neg()
    }
}

macro_rules! long_return {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl SysCallReturn for $t {
            #[inline(always)]
            fn is_negative(self) -> bool {
                self < 0
            }
            #[inline(always)]
            fn negated_state(state: i32) -> $t {
                state.wrapping_neg() as $t
            }
        }
    )*};
}
long_return!(i64, isize);

/// An `unsafe extern "C" fn(A1, .., An) -> R` type usable with [`SystemCall::typed`]: up to 8
/// [`Scalar`] parameters, an `i32`, `i64` or `isize` return. Sealed (implemented for exactly those
/// function pointer types).
///
/// ```
/// use gatun::capture::SysCallSignature;
/// fn signature<F: SysCallSignature>() {}
/// signature::<unsafe extern "C" fn(i32) -> i32>(); // int close(int)
/// signature::<unsafe extern "C" fn(i32, *mut u8, usize) -> isize>(); // ssize_t read(...)
/// ```
pub trait SysCallSignature: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The arguments as a tuple, e.g. `(c_int,)`.
    type Args;
    /// The C return type.
    type Ret: SysCallReturn;
    /// The scalar kinds of the parameters, in order.
    const PARAMETERS: &'static [ScalarKind];

    /// The function at `address`.
    ///
    /// # Safety
    /// `address` must be a non-null function of exactly this C signature.
    #[doc(hidden)]
    unsafe fn from_address(address: *const c_void) -> Self;

    /// Calls the function.
    ///
    /// # Safety
    /// The callee's contract must hold for `args`.
    #[doc(hidden)]
    unsafe fn call(self, args: Self::Args) -> Self::Ret;
}

macro_rules! signature {
    ($($a:ident $t:ident),*) => {
        impl<R: SysCallReturn, $($t: Scalar),*> sealed::Sealed
            for unsafe extern "C" fn($($t),*) -> R {}

        impl<R: SysCallReturn, $($t: Scalar),*> SysCallSignature
            for unsafe extern "C" fn($($t),*) -> R
        {
            type Args = ($($t,)*);
            type Ret = R;
            const PARAMETERS: &'static [ScalarKind] = &[$($t::KIND),*];

            #[inline(always)]
            unsafe fn from_address(address: *const c_void) -> Self {
                // SAFETY: a data pointer and a function pointer have the same size on every
                // target gatun links on; the caller guarantees the signature.
                unsafe { std::mem::transmute::<*const c_void, Self>(address) }
            }

            #[inline(always)]
            unsafe fn call(self, args: Self::Args) -> R {
                let ($($a,)*) = args;
                // SAFETY: forwarded to the caller.
                unsafe { self($($a),*) }
            }
        }
    };
}

signature!();
signature!(a1 A1);
signature!(a1 A1, a2 A2);
signature!(a1 A1, a2 A2, a3 A3);
signature!(a1 A1, a2 A2, a3 A3, a4 A4);
signature!(a1 A1, a2 A2, a3 A3, a4 A4, a5 A5);
signature!(a1 A1, a2 A2, a3 A3, a4 A4, a5 A5, a6 A6);
signature!(a1 A1, a2 A2, a3 A3, a4 A4, a5 A5, a6 A6, a7 A7);
signature!(a1 A1, a2 A2, a3 A3, a4 A4, a5 A5, a6 A6, a7 A7, a8 A8);

/// The calling thread's `errno` (POSIX: a modifiable per-thread lvalue).
#[inline(always)]
fn errno_location() -> *mut c_int {
    // `__errno_location()`, cached per thread (a TLS load instead of a call into libc).
    crate::os::thread_errno()
}

/// A [`SystemCall`] with its signature fixed at compile time (built by
/// [`SystemCall::typed`]): arguments as a tuple, result as the C return type `F::Ret`, no
/// argument checks left to do at call time, no allocation, no capture buffer.
///
/// `Send + Sync` and `Clone`; keeps the handle (and so its library) alive.
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
/// let close = close.typed::<unsafe extern "C" fn(i32) -> i32>().unwrap();
/// // SAFETY: as for close(2): -1 is never an open descriptor.
/// assert_eq!(unsafe { close.call((-1,)) }, Err(Errno(9)));
/// assert_eq!(unsafe { close.invoke((-1,)) }, -9);
/// # }
/// ```
pub struct TypedSystemCall<F: SysCallSignature> {
    f: F,
    handle: DowncallHandle,
    /// The adapter's state.
    state: State,
}

impl<F: SysCallSignature> Clone for TypedSystemCall<F> {
    fn clone(&self) -> Self {
        TypedSystemCall {
            f: self.f,
            handle: self.handle.clone(),
            state: self.state,
        }
    }
}

impl<F: SysCallSignature> fmt::Debug for TypedSystemCall<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TypedSystemCall({:?})", self.handle)
    }
}

impl<F: SysCallSignature> TypedSystemCall<F> {
    /// Checks `F` against `sc`'s handle (see [`SystemCall::typed`]).
    pub(super) fn new(sc: &SystemCall) -> Result<TypedSystemCall<F>> {
        let handle = sc.handle();
        let d = handle.descriptor();
        let mismatch = |what: String| Error::Adapt {
            handle: d.to_string(),
            reason: format!("the typed signature does not match: {what}"),
        };
        if handle.plan().is_variadic() {
            return Err(mismatch("the handle is variadic".into()));
        }
        let params = d.argument_layouts();
        if params.len() != F::PARAMETERS.len() {
            return Err(mismatch(format!(
                "{} argument{} in the Rust type, {} in the descriptor",
                F::PARAMETERS.len(),
                crate::error::plural(F::PARAMETERS.len()),
                params.len()
            )));
        }
        for (i, (l, k)) in params.iter().zip(F::PARAMETERS).enumerate() {
            match l {
                MemoryLayout::Value(v) if v.kind() == *k => {}
                other => {
                    return Err(mismatch(format!(
                        "argument {} is {other} in the descriptor, {k} in the Rust type",
                        i + 1
                    )))
                }
            }
        }
        match d.return_layout() {
            Some(MemoryLayout::Value(v)) if v.kind() == <F::Ret as Scalar>::KIND => {}
            other => {
                return Err(mismatch(format!(
                    "the descriptor returns {}, the Rust type {}",
                    other.map_or_else(|| "void".to_string(), |l| l.to_string()),
                    <F::Ret as Scalar>::KIND
                )))
            }
        }
        Ok(TypedSystemCall {
            // SAFETY: the handle's address is a non-null function (checked at link time) of the
            // handle's descriptor, and `F` has exactly that descriptor's scalar kinds, not
            // variadic (checked above); every `Scalar` has its kind's size and ABI class.
            f: unsafe { F::from_address(handle.address()) },
            handle: handle.clone(),
            state: sc.kind,
        })
    }

    /// The adapted handle.
    pub fn handle(&self) -> &DowncallHandle {
        &self.handle
    }

    /// Calls the target with the adapter's state (`errno`, or on Windows `GetLastError` /
    /// `WSAGetLastError`) set to 0 and returns its result `r` when `r >= 0`, else minus the
    /// state it left (read only then), as [`SystemCall::invoke`].
    ///
    /// # Safety
    /// As [`SystemCall::invoke`]: the callee's contract must hold for `args`.
    #[inline(always)]
    pub unsafe fn invoke(&self, args: F::Args) -> F::Ret {
        // SAFETY: forwarded to the caller.
        match unsafe { self.invoke_state(args) } {
            Ok(r) => r,
            Err(state) => F::Ret::negated_state(state),
        }
    }

    /// As [`TypedSystemCall::invoke`], returning `Ok(r)` or `Err(Errno(errno))` (a failure that
    /// left errno at 0 is `Err(Errno(0))`), for an adapter of `errno`. No gatun error can occur
    /// at call time. (For an adapter of a Windows state the code comes back in the `Errno`
    /// unchanged; [`TypedSystemCall::call_last_error`] gives it its own type.)
    ///
    /// # Safety
    /// As [`SystemCall::invoke`].
    #[inline(always)]
    pub unsafe fn call(&self, args: F::Args) -> std::result::Result<F::Ret, Errno> {
        // SAFETY: forwarded to the caller.
        unsafe { self.invoke_state(args) }.map_err(Errno)
    }

    /// As [`TypedSystemCall::call`] for an adapter of `GetLastError` or `WSAGetLastError`
    /// (Windows): `Ok(r)` or `Err(LastError(code))`. (For an `errno` adapter the errno value
    /// comes back in the `LastError` unchanged.)
    ///
    /// # Safety
    /// As [`SystemCall::invoke`].
    #[inline(always)]
    pub unsafe fn call_last_error(&self, args: F::Args) -> std::result::Result<F::Ret, LastError> {
        // SAFETY: forwarded to the caller.
        unsafe { self.invoke_state(args) }.map_err(|code| LastError(code as u32))
    }

    /// # Safety
    /// As [`SystemCall::invoke`].
    #[inline(always)]
    unsafe fn invoke_state(&self, args: F::Args) -> std::result::Result<F::Ret, i32> {
        if self.state != State::Errno {
            // SAFETY: forwarded to the caller.
            return unsafe { self.invoke_thread_state(args) };
        }
        let errno = errno_location();
        // SAFETY: `errno` is this thread's errno, valid for the thread's life; nothing runs on
        // this thread between the call's return and the read.
        unsafe {
            errno.write(0);
            let r = self.f.call(args);
            if r.is_negative() {
                Err(errno.read())
            } else {
                Ok(r)
            }
        }
    }

    /// `invoke_state` for a Windows state: cleared before the call, read right after it.
    ///
    /// # Safety
    /// As [`SystemCall::invoke`].
    #[inline(always)]
    unsafe fn invoke_thread_state(&self, args: F::Args) -> std::result::Result<F::Ret, i32> {
        self.state.clear();
        // SAFETY: forwarded to the caller.
        let r = unsafe { self.f.call(args) };
        if r.is_negative() {
            Err(self.state.read())
        } else {
            Ok(r)
        }
    }
}
