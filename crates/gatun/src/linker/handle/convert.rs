//! Integer arguments of another integer kind than their parameter's, converted off the fast
//! paths.
//!
//! # The rule
//! An integer `Value` (`I8` ..= `U64`) given for an integer parameter (`i8` ..= `u64`) of
//! another kind is accepted when its value lies in the parameter kind's range, and passed as
//! a value of the parameter's kind: `I32(8)` for a `size_t` (`u64`) parameter is passed as
//! `U64(8)`, `I64(0)` for an `int` (an enum) as `I32(0)`. A value outside the range is
//! [`Error::ArgumentOutOfRange`] naming the function, the argument, the value and the range
//! (`I32(-1)` for a `u64`, `I64(1 << 40)` for an `i32`): nothing wraps or truncates silently.
//! The number is compared, not its bits, so the result is the same C value the caller wrote.
//!
//! Nothing else is converted. A `bool` parameter takes only `Value::Bool`, and a `Bool` is no
//! integer (C would accept `1` for a `_Bool`, but an integer where a flag is declared is
//! more often a mistake than a shorthand). A pointer parameter takes `Value::Address` or
//! `Value::Segment`, never an integer (an address made from a number has no provenance), and
//! an address is no integer. Floats are passed only as their exact kind (`F32` for `float`,
//! `F64` for `double`): `F64` to `F32` loses precision, and an integer to a float is not what
//! a value of the wrong kind usually means. Everything not converted is reported as before,
//! [`Error::ValueMismatch`] naming the function and the argument.
//!
//! # Where it runs
//! Never on a fast path. The compiled stubs check every argument's kind and reject a call
//! with any argument of another kind without calling anything; the handle's checks of the
//! `Value` paths all end in `invoke_split`, which on a rejection calls
//! [`DowncallHandle::invoke_rejected`] (out of line, `#[cold]`). That converts the arguments
//! into an array of [`CONVERTED_MAX`] `Value`s on its own stack (no heap allocation) and calls
//! the stub again with the converted values (a segment given for a pointer parameter, which
//! the stubs also reject, becomes its address there, so such a call runs the stub too). Longer argument lists, and handles without a
//! compiled stub, go through the checked trampoline path, whose per-argument check converts
//! the same way ([`DowncallHandle::converted_bits`]), so every path accepts and rejects the
//! same arguments. The paths whose argument types are checked when they are made (typed
//! handles, the raw path) have nothing to convert.

use super::DowncallHandle;
use crate::backend::{ArgKind, Executor};
use crate::error::{Error, Result};
use crate::layout::ScalarKind;
use crate::value::{integer_range, Value};

/// How many arguments [`DowncallHandle::invoke_rejected`] converts into its stack buffer (24
/// bytes each: 384 bytes of stack); a call with more converts on the trampoline path.
pub(super) const CONVERTED_MAX: usize = 16;

/// `v` as a value of the integer kind `kind` under the module's rule: `Some(Ok(value))` when
/// both are integers and the number fits, `Some(Err(n))` when it does not (`n` the number),
/// `None` when the rule converts nothing (either is not an integer kind).
fn integer_as(kind: ScalarKind, v: &Value<'_>) -> Option<Result<Value<'static>, i128>> {
    use ScalarKind as K;
    if !matches!(
        kind,
        K::I8 | K::U8 | K::I16 | K::U16 | K::I32 | K::U32 | K::I64 | K::U64
    ) {
        return None;
    }
    let n = v.integer()?;
    let (lo, hi) = integer_range(kind)?;
    if n < lo || n > hi {
        return Some(Err(n));
    }
    // In range, so `from_int` succeeds; its error would be the same range failure.
    Some(Value::from_int(kind, n).map_err(|_| n))
}

impl DowncallHandle {
    /// The stub rejected `args` (the descriptor's arguments, as many as it has, after the
    /// capture segment): an argument of another kind, or a struct segment that is too small.
    /// If every rejected argument is an integer the module's rule converts, calls the stub
    /// again with the converted arguments (copied into a buffer on this function's stack, up
    /// to [`CONVERTED_MAX`]); otherwise, or with more arguments, or without a stub, takes the
    /// checked trampoline path, which converts the same way or reports the exact error.
    ///
    /// # Safety
    /// As `invoke_split`: the arguments satisfy the callee's contract; `ret` and `capture` as
    /// that function's contract says.
    #[cold]
    #[inline(never)]
    pub(super) unsafe fn invoke_rejected(
        &self,
        ret: *mut u8,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        let inner = &*self.inner;
        if inner.exec.is_compiled() && args.len() <= CONVERTED_MAX {
            let mut buffer = [Value::Void; CONVERTED_MAX];
            let converted = &mut buffer[..args.len()];
            if self.convert_into(args, converted) {
                // SAFETY: one `Value` per descriptor argument (as many as `args`, whose count
                // the callers checked), now of their arguments' kinds; the callee's contract
                // is the caller's (the converted values are the numbers the caller gave); the
                // rest forwarded.
                if let Some(bits) = unsafe { self.call_values_entry(ret, capture, converted) } {
                    return Ok(self.returned_value(bits));
                }
                // SAFETY: forwarded (a struct segment the stub still rejects is reported).
                return unsafe { self.invoke_split_trampoline(ret, capture, converted) };
            }
        }
        // SAFETY: forwarded.
        unsafe { self.invoke_split_trampoline(ret, capture, args) }
    }

    /// Copies `args` (the descriptor's arguments) into `out` (as long), converting each
    /// integer of another kind than its integer parameter's by the module's rule, and each
    /// segment given for a pointer parameter to its address (`Value::Address`, what the stubs
    /// take; the trampoline takes the segment's address the same way). `true` if at least one
    /// was converted and every other scalar already has its parameter's kind; `false`
    /// otherwise (nothing to convert, or an argument the rule does not fix: the trampoline
    /// path then reports it).
    fn convert_into<'a>(&self, args: &[Value<'a>], out: &mut [Value<'a>]) -> bool {
        let mut any = false;
        for ((v, kind), o) in args.iter().zip(self.inner.args.iter()).zip(out) {
            *o = match (*kind, *v) {
                (ArgKind::Scalar(ScalarKind::Pointer), Value::Segment(s)) => {
                    any = true;
                    Value::Address(s.as_ptr().cast())
                }
                (ArgKind::Scalar(k), v) if v.scalar_bits(k).is_none() => match integer_as(k, &v) {
                    Some(Ok(c)) => {
                        any = true;
                        c
                    }
                    _ => return false,
                },
                (_, v) => v,
            };
        }
        any
    }

    /// The register bits of argument `v`, at 0-based `position` among all the call's values,
    /// for a scalar parameter of kind `kind` that `v` is not of: the converted integer (the
    /// module's rule), [`Error::ArgumentOutOfRange`] for an integer that does not fit, or
    /// [`Error::ValueMismatch`] for a value the rule does not convert. The trampoline path's
    /// slow branch, out of line.
    #[cold]
    #[inline(never)]
    pub(super) fn converted_bits(
        &self,
        position: usize,
        kind: ScalarKind,
        v: &Value<'_>,
    ) -> Result<u64> {
        match integer_as(kind, v) {
            Some(Ok(c)) => c
                .scalar_bits(kind)
                .ok_or_else(|| self.mismatch(position, kind, v)),
            Some(Err(n)) => Err(self.out_of_range(position, kind, n)),
            None => Err(self.mismatch(position, kind, v)),
        }
    }

    /// [`Error::ArgumentOutOfRange`] for the number `n` at 0-based `position` for a parameter
    /// of integer kind `kind`.
    fn out_of_range(&self, position: usize, kind: ScalarKind, n: i128) -> Error {
        Error::ArgumentOutOfRange {
            function: self.function_label(),
            argument: position + 1,
            value: n.to_string(),
            kind: kind.name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ScalarKind as K;

    #[test]
    fn integers_convert_when_they_fit() {
        assert_eq!(integer_as(K::U64, &Value::I32(8)), Some(Ok(Value::U64(8))));
        assert_eq!(
            integer_as(K::I32, &Value::I64(-5)),
            Some(Ok(Value::I32(-5)))
        );
        assert_eq!(
            integer_as(K::U8, &Value::U64(255)),
            Some(Ok(Value::U8(255)))
        );
        assert_eq!(
            integer_as(K::I64, &Value::U64(i64::MAX as u64)),
            Some(Ok(Value::I64(i64::MAX)))
        );
    }

    #[test]
    fn out_of_range_integers_are_reported_with_their_number() {
        assert_eq!(integer_as(K::U64, &Value::I32(-1)), Some(Err(-1)));
        assert_eq!(integer_as(K::I32, &Value::I64(1 << 40)), Some(Err(1 << 40)));
        assert_eq!(integer_as(K::I8, &Value::U8(128)), Some(Err(128)));
        assert_eq!(
            integer_as(K::I64, &Value::U64(u64::MAX)),
            Some(Err(u64::MAX.into()))
        );
    }

    #[test]
    fn bools_pointers_and_floats_are_never_converted() {
        assert_eq!(integer_as(K::Bool, &Value::I32(1)), None);
        assert_eq!(integer_as(K::I32, &Value::Bool(true)), None);
        assert_eq!(integer_as(K::Pointer, &Value::U64(8)), None);
        assert_eq!(
            integer_as(K::U64, &Value::Address(std::ptr::null_mut())),
            None
        );
        assert_eq!(integer_as(K::F64, &Value::I32(1)), None);
        assert_eq!(integer_as(K::I32, &Value::F64(1.0)), None);
        assert_eq!(integer_as(K::F64, &Value::F32(1.0)), None);
        assert_eq!(integer_as(K::I32, &Value::Void), None);
    }
}
