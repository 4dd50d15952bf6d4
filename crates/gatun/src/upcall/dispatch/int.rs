//! The integer-register path ([`Path::Int`](super::super::context::Path::Int)): the stub jumps
//! straight to a dispatcher whose parameters are the C caller's integer argument registers and
//! whose result is the return register.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::super::abort::{abort_panicked, abort_upcall, args_context};
use super::super::context::Context;
use super::super::UpcallArgs;
use super::scalar::{scalar_result_bits, ScalarPath};
use crate::backend::upcall::{UpcallArgKind, UpcallEntries, UpcallRetKind};
use crate::error::Result;
use crate::value::Value;

/// The integer-register path of a signature (the backend's
/// [`int_register_args`](UpcallEntries::int_register_args): on x86-64 System V every argument
/// is a scalar in integer argument register `i` for argument `i`, at most five, the return
/// `void` or a scalar in rax), no argument a `bool`, the stub not confined. The stub loads the
/// context's address into the next free integer argument register and jumps straight to
/// `entry`: a [`gatun_upcall_dispatch_int`] for the argument count and the result's `Value`
/// tag, an `extern "C" fn(a0: u64, .., context) -> u64` that builds the `n` [`Value`]s from
/// its own parameters and returns the result's bits in the first integer return register. No
/// assembly entry and no register frame in between.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IntPath {
    /// The dispatcher (its type erased: the parameters depend on `n`).
    pub(crate) entry: ErasedFn,
    /// The number of arguments (0..=[`INT_PATH_ARGS`]).
    pub(crate) n: u8,
    /// Argument `i`'s `Value` tag.
    tags: [u8; INT_PATH_ARGS],
}

/// The most arguments the integer-register dispatchers take.
const INT_PATH_ARGS: usize = 5;

impl IntPath {
    /// The integer path of a signature whose scalar path is `scalar`, if backend `B` has one
    /// for it (see [`IntPath`]).
    pub(crate) fn of<B: UpcallEntries>(
        scalar: &ScalarPath,
        args: &[UpcallArgKind],
        ret: UpcallRetKind,
    ) -> Option<IntPath> {
        let n = B::int_register_args(args, ret)?;
        if n > INT_PATH_ARGS || n != scalar.args.len() || scalar.args.iter().any(|a| a.is_bool) {
            return None;
        }
        let ret_tag = match scalar.ret {
            None => crate::value::value_tag(&Value::Void),
            Some((kind, _)) => crate::value::scalar_tag(kind),
        };
        let mut path = IntPath {
            entry: int_dispatcher(n, ret_tag),
            n: n as u8,
            tags: [0; INT_PATH_ARGS],
        };
        for (t, a) in path.tags.iter_mut().zip(scalar.args.iter()) {
            *t = a.tag;
        }
        Some(path)
    }
}

/// A function pointer whose real type is recorded elsewhere (transmuted back to it before a
/// call).
pub(crate) type ErasedFn = unsafe extern "C" fn();

/// The integer-register path's dispatcher for `n` arguments (at most [`INT_PATH_ARGS`]) and a
/// result of `Value` tag `ret_tag` (a scalar's, or `Value::Void`'s), its type erased: it is an
/// `unsafe extern "C" fn(u64, .. (n times), *const c_void) -> u64`.
fn int_dispatcher(n: usize, ret_tag: u8) -> ErasedFn {
    macro_rules! by_return {
        ($f:ident, $ty:ty) => {{
            let f: $ty = match ret_tag {
                1 => $f::<1>,
                2 => $f::<2>,
                3 => $f::<3>,
                4 => $f::<4>,
                5 => $f::<5>,
                6 => $f::<6>,
                7 => $f::<7>,
                8 => $f::<8>,
                9 => $f::<9>,
                10 => $f::<10>,
                11 => $f::<11>,
                12 => $f::<12>,
                _ => $f::<0>,
            };
            // SAFETY: a function pointer to a function pointer of another type; it is called
            // only as `$ty` (the stub's C type, `IntPath::of`; `call_int` in the tests).
            unsafe { std::mem::transmute::<$ty, ErasedFn>(f) }
        }};
    }
    type P = *const c_void;
    match n {
        0 => by_return!(gatun_upcall_dispatch_int0, unsafe extern "C" fn(P) -> u64),
        1 => by_return!(
            gatun_upcall_dispatch_int1,
            unsafe extern "C" fn(u64, P) -> u64
        ),
        2 => by_return!(
            gatun_upcall_dispatch_int2,
            unsafe extern "C" fn(u64, u64, P) -> u64
        ),
        3 => by_return!(
            gatun_upcall_dispatch_int3,
            unsafe extern "C" fn(u64, u64, u64, P) -> u64
        ),
        4 => by_return!(
            gatun_upcall_dispatch_int4,
            unsafe extern "C" fn(u64, u64, u64, u64, P) -> u64
        ),
        _ => by_return!(
            gatun_upcall_dispatch_int5,
            unsafe extern "C" fn(u64, u64, u64, u64, u64, P) -> u64
        ),
    }
}

/// The integer-register path's dispatchers, one per argument count: `gatun_upcall_dispatch_int<n>::<R>`
/// is an `extern "C" fn(a0: u64, .., a<n-1>: u64, context: *const c_void) -> u64` (the stub puts
/// the context in the integer argument register after the last argument) that runs
/// [`gatun_upcall_dispatch_int`] for a result of `Value` tag `R`.
macro_rules! int_dispatchers {
    ($($name:ident($($a:ident),*) = $n:literal;)*) => {$(
        /// See [`gatun_upcall_dispatch_int`].
        ///
        /// # Safety
        /// As [`gatun_upcall_dispatch_int`], for this many arguments.
        unsafe extern "C" fn $name<const R: u8>($($a: u64,)* ctx: *const c_void) -> u64 {
            // SAFETY: forwarded.
            unsafe { gatun_upcall_dispatch_int::<$n, R>(ctx, [$($a),*]) }
        }
    )*};
}

int_dispatchers! {
    gatun_upcall_dispatch_int0() = 0;
    gatun_upcall_dispatch_int1(a0) = 1;
    gatun_upcall_dispatch_int2(a0, a1) = 2;
    gatun_upcall_dispatch_int3(a0, a1, a2) = 3;
    gatun_upcall_dispatch_int4(a0, a1, a2, a3) = 4;
    gatun_upcall_dispatch_int5(a0, a1, a2, a3, a4) = 5;
}

/// The Rust side of an integer-register path ([`IntPath`]) of `N` arguments whose result has
/// the `Value` tag `R`: builds the `N` [`Value`]s from the argument registers `regs` (each
/// value's tag from the path, its payload the 64-bit register image), runs the closure under
/// `catch_unwind` (aborting on a panic or an error) and returns the result's 64-bit register image (0 for `void`; small integers
/// extended by signedness, `f32` in the low 32 bits), which the caller finds in its first
/// integer return register.
///
/// # Safety
/// Called only from a stub of a context whose [`IntPath::entry`] is this function's dispatcher,
/// with `ctx` that context's address and `regs` the caller's first `N` integer argument
/// registers, for a C call of the stub's descriptor type.
#[inline(always)]
unsafe fn gatun_upcall_dispatch_int<const N: usize, const R: u8>(
    ctx: *const c_void,
    regs: [u64; N],
) -> u64 {
    // SAFETY: the stub's code holds the address of its live boxed Context (module invariants).
    let ctx = unsafe { &*ctx.cast::<Context<'_>>() };
    // SAFETY: the stub jumps here only for a context on the integer path (`stub_code`).
    let int = unsafe { ctx.path.int_unchecked() };
    let mut values = [const { MaybeUninit::<Value<'_>>::uninit() }; N];
    for i in 0..N {
        let p = values[i].as_mut_ptr().cast::<u64>();
        let [tag, bits] = crate::value::scalar_words(int.tags[i], regs[i]);
        // SAFETY: a 24-byte, 8-aligned `Value` (`#[repr(C, u8)]`): the tag byte and padding in
        // its first word, the payload from offset 8.
        unsafe {
            p.write(tag);
            p.add(1).write(bits);
        }
    }
    // SAFETY: the `N` values have their tags (the path's) and payloads (register images whose
    // low bytes are the declared width's value; no `bool`s).
    let values = unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<Value<'_>>(), N) };
    let args = UpcallArgs {
        values,
        ret: None,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let run = AssertUnwindSafe(|| {
        let result = (ctx.closure)(&args);
        // (Both branches return: merged, the two tag tests became a `sete`/`test` pair.)
        if let Ok(v) = &result {
            if crate::value::value_tag(v) == R {
                // SAFETY: the tag is `R`.
                return unsafe { int_payload_bits::<R>(v) };
            }
            // SAFETY: `args.ctx` is `ctx`; read back from memory (volatile), the context needs
            // no callee-saved register on the hot path.
            return int_result_slow(unsafe { args_context(&args) }, result);
        }
        // SAFETY: as above.
        int_result_slow(unsafe { args_context(&args) }, result)
    });
    match catch_unwind(run) {
        Ok(bits) => bits,
        // SAFETY: as above.
        Err(payload) => abort_panicked(unsafe { &args_context(&args).descriptor }, payload),
    }
}

/// The return image of an integer-path result of another tag than the declared kind's (a
/// segment for a pointer), or the abort for a mismatch or an error.
#[cold]
#[inline(never)]
fn int_result_slow(ctx: &Context<'_>, result: Result<Value<'_>>) -> u64 {
    match result
        .as_ref()
        .map(|v| scalar_result_bits(ctx.path.scalar(), v))
    {
        Ok(Ok(bits)) => bits,
        Ok(Err(e)) => abort_upcall(&ctx.descriptor, format_args!("{e}")),
        Err(e) => abort_upcall(&ctx.descriptor, format_args!("{e}")),
    }
}

/// The return image of a result of `Value` tag `R` (a scalar's, or `Value::Void`'s: 0): small
/// integers extended by signedness, `f32` in the low 32 bits.
///
/// # Safety
/// `result`'s tag is `R`.
#[inline(always)]
unsafe fn int_payload_bits<const R: u8>(result: &Value<'_>) -> u64 {
    let payload = (result as *const Value<'_>).cast::<u8>().wrapping_add(8);
    // SAFETY: the tag is `R` (caller), so the payload at offset 8 is an initialised value of
    // that kind's width (`Value` is `#[repr(C, u8)]`).
    unsafe {
        match R {
            1 | 3 => payload.read() as u64,
            2 => payload.cast::<i8>().read() as i64 as u64,
            4 => payload.cast::<i16>().read() as i64 as u64,
            5 => payload.cast::<u16>().read() as u64,
            6 => payload.cast::<i32>().read() as i64 as u64,
            7 | 10 => payload.cast::<u32>().read() as u64,
            8 | 9 | 11 | 12 => payload.cast::<u64>().read(),
            _ => 0,
        }
    }
}

/// The return image of an integer-path result whose declared kind has the `Value` tag `R`
/// (the unit tests' view of what the dispatcher does).
#[cfg(test)]
pub(crate) fn int_result_bits<const R: u8>(ctx: &Context<'_>, result: &Value<'_>) -> Result<u64> {
    if crate::value::value_tag(result) != R {
        return scalar_result_bits(ctx.path.scalar(), result);
    }
    // SAFETY: the tag is `R`.
    Ok(unsafe { int_payload_bits::<R>(result) })
}
