//! The s390x executor of a downcall handle: the shared
//! [`StubExecutor`](crate::backend::executor::StubExecutor) over this backend's stub entries
//! ([`Entries`]) — a compiled stub (`stub`), with the integer fast path where its signature
//! allows one, or the trampoline (`CallFrame`) when the OS refuses executable memory (and for
//! the `interpreted` test hook) — wrapped in [`Executor`], which takes a `float` result from
//! the high word of `f0`'s image. This module gives it the s390x entry calls, the copies'
//! layout (each copy at the aggregate's own alignment), the stub without capture of the
//! system-call adapter, and the slots path of `linker::Arguments` ([`super::slots`]).
//!
//! # By-reference arguments (s390x ELF ABI Supplement, "Parameter Passing")
//! A struct or union whose size is not 1, 2, 4 or 8 bytes is passed by reference: the caller
//! makes a copy and passes its address in the next GPR or stack slot
//! ([`crate::abi::ArgPlan::by_reference`]). The copies of one call live in ONE frame of
//! [`crate::memory::linker_stack`], pushed per call with the size and alignment computed at
//! link time ([`crate::backend::CopyArea`]; no frame when the plan has none) and closed when
//! the call returns. Frames nest LIFO, so an upcall running on top of the call (and any
//! downcall it makes) pushes and pops its own frames above it. The callee may write through
//! the pointer: it writes the copy, never the caller's segment. A compiled stub takes the
//! copies' addresses in `r6` as an array of pointers, one per by-reference argument in
//! argument order, at the start of the same frame
//! ([`Refs`](crate::backend::executor::Refs)).
//!
//! # `float` results
//! A `float` result is in the short format in `f0`, the register's high word (ABI Supplement,
//! "Return Values"). The trampoline and the stubs hand back `f0`'s whole 64-bit image (a stub
//! is shared by the `float` and `double` returns of equal plans, and a plan does not tell
//! them apart), so [`Executor`] — built with the handle's return kind — shifts a `float`
//! result's bits down to the low word, where the call layer reads them, on every path that
//! returns result bits.
//!
//! # Invariants (the unsafe story of this module)
//! - Every entry is kept alive by the `Arc<Stub>` in the same [`Entries`] (the stub cache
//!   holds only a `Weak`).
//! - The values entry checks every argument's tag and segment length before anything else and
//!   reports a mismatch without calling (`ValuesEntry::call` gives `None`).
//! - The executor was built by [`Executor::link`] from the handle's own plan, argument kinds,
//!   return kind and capture flag and never changes: its by-reference sizes follow
//!   `plan.args` in order, and `float_ret` is whether the return kind is `float`.
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy is inside
//!   the frame pushed for the call, which outlives the call.

use std::ffi::c_void;
use std::sync::Arc;

use super::stub::{RawFn, Stub, ValuesEntry};
use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::executor::{EntryArgs, StructEntry, StubEntries, StubExecutor, Uncaptured};
use crate::backend::{Absent, ArgCheck, ArgKind, ArgSource, RetKind, Slots, SlotsPath};
use crate::layout::ScalarKind;
use crate::value::Value;

/// The entries of an s390x stub, kept alive by the `Arc<Stub>` beside them (the stub cache
/// holds only a `Weak`).
#[derive(Clone)]
pub(crate) struct Entries {
    raw: RawFn,
    values: ValuesEntry,
    /// A capture handle with an integer or void result and no by-reference arguments: the
    /// values entry of the same signature's stub *without* capture, kept alive with it (the
    /// system-call adapter zeroes and reads errno itself).
    uncaptured: Option<(ValuesEntry, Arc<Stub>)>,
    _keep: Arc<Stub>,
}

impl StubEntries for Entries {
    type Frame = CallFrame;
    type Values = ValuesEntry;

    /// A by-reference argument's copy has the aggregate's own size and alignment.
    fn copy_layout(kind: ArgKind) -> (usize, usize) {
        match kind {
            ArgKind::Group { size, align } => (size, align),
            // Only aggregates are passed by reference; a scalar never has a by-reference plan.
            ArgKind::Scalar(k) => (k.byte_size(), k.byte_size()),
        }
    }

    fn compile(
        plan: &CallPlan,
        checks: &[ArgCheck],
        ret: RetKind,
        capture: bool,
    ) -> Option<Entries> {
        let stub = super::stub::stub_for(plan, checks, capture).ok()?;
        let by_ref = plan.args.iter().any(|a| a.by_reference.is_some());
        // Integer or void results only: the system-call adapter takes `int` and `long` results.
        let uncaptured = if capture
            && !by_ref
            && matches!(ret, RetKind::Void | RetKind::Scalar(_))
            && !matches!(
                ret,
                RetKind::Scalar(ScalarKind::Bool | ScalarKind::F32 | ScalarKind::F64)
            ) {
            super::stub::stub_for(plan, checks, false)
                .ok()
                .map(|s| (s.values, s))
        } else {
            None
        };
        Some(Entries {
            raw: stub.raw,
            values: stub.values,
            uncaptured,
            _keep: stub,
        })
    }

    /// [`super::slots::path_of`]: `Int` or `Float` for a handle without capture, not variadic,
    /// whose scalar arguments are all in registers, with a non-bool scalar or void return.
    fn slots_path(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath {
        super::slots::path_of(plan, args, ret, capture)
    }

    /// The registers loaded from `slots` in Rust and the target called
    /// ([`super::slots::DirectRegisters`]); returns r2, or f0's 64-bit image for a float.
    #[inline(always)]
    unsafe fn call_slots(kinds: u64, slots: &Slots, target: *const c_void, float: bool) -> u64 {
        // SAFETY: the slots of every argument `kinds` names are initialised; the handle's plan
        // is the kinds' (every argument in a register), not variadic, with a scalar or void
        // return of the class `float` says (caller, `slots_path`).
        unsafe { super::slots::DirectRegisters::of(kinds, slots).call(target, float) }
    }

    #[inline(always)]
    fn values(&self) -> ValuesEntry {
        self.values
    }

    #[inline(always)]
    fn uncaptured(&self) -> Option<ValuesEntry> {
        self.uncaptured.as_ref().map(|(v, _)| *v)
    }

    #[inline(always)]
    unsafe fn call_values(
        entry: ValuesEntry,
        values: *const Value<'_>,
        a: EntryArgs,
    ) -> Option<u64> {
        let (ret, capture, target) = (a.ret, a.capture, a.target);
        // SAFETY: the caller's contract.
        unsafe { entry.call(values, ret, capture, target, a.copies, a.errno_location) }
    }

    #[inline(always)]
    unsafe fn call_raw(&self, args: *const *const u8, a: EntryArgs) -> u64 {
        let (ret, capture, target) = (a.ret, a.capture, a.target);
        // SAFETY: the caller's contract.
        unsafe { (self.raw)(args, ret, capture, target, a.copies, a.errno_location) }
    }
}

/// The s390x executor: the shared stub executor, and whether the result is a `float` (whose
/// bits every path takes from the high word of `f0`'s image).
#[derive(Clone)]
pub(crate) struct Executor {
    inner: StubExecutor<Entries>,
    float_ret: bool,
}

impl Executor {
    /// The executor of a handle with `plan` (argument kinds `args`, return `ret`, `capture`):
    /// [`StubExecutor::link`], and the return kind's `float`-ness.
    ///
    /// # Errors
    /// As [`StubExecutor::link`].
    pub(crate) fn link(
        plan: &CallPlan,
        args: &[ArgKind],
        ret: RetKind,
        capture: bool,
    ) -> crate::Result<Executor> {
        Ok(Executor {
            inner: StubExecutor::link(plan, args, ret, capture)?,
            float_ret: ret == RetKind::Scalar(ScalarKind::F32),
        })
    }

    /// The result bits of the call layer from the return register's: a `float`'s from the
    /// high word of `f0`'s image (see the module documentation), every other kind's as they
    /// are.
    #[inline(always)]
    fn result(&self, bits: u64) -> u64 {
        if self.float_ret {
            super::short_bits(bits)
        } else {
            bits
        }
    }

    /// The shared executor.
    #[cfg(test)]
    pub(crate) fn inner(&self) -> &StubExecutor<Entries> {
        &self.inner
    }
}

impl crate::backend::Executor for Executor {
    type Image = Absent;
    type StructEntry = StructEntry<Entries>;
    type Uncaptured<'a> = Uncaptured<Entries>;

    /// [`StubExecutor`]'s interpreted call through the trampoline, its result bits as
    /// [`Executor::result`] says.
    #[inline(never)]
    unsafe fn interpret(
        &self,
        plan: &CallPlan,
        target: *const c_void,
        capture: *mut i32,
        ret: *mut u8,
        arg: impl FnMut(usize) -> crate::Result<ArgSource>,
    ) -> crate::Result<u64> {
        // SAFETY: forwarded to the caller.
        let bits = unsafe { self.inner.interpret(plan, target, capture, ret, arg) }?;
        Ok(self.result(bits))
    }

    #[cfg(feature = "internals")]
    fn interpreted(&self) -> Self {
        Executor {
            inner: self.inner.interpreted(),
            float_ret: self.float_ret,
        }
    }

    #[inline(always)]
    fn is_compiled(&self) -> bool {
        self.inner.is_compiled()
    }

    #[inline(always)]
    fn int_arity(&self, nargs: usize) -> usize {
        self.inner.int_arity(nargs)
    }

    #[inline(always)]
    unsafe fn call_int(&self, args: *const u8, target: *const c_void) -> Option<u64> {
        // SAFETY: forwarded to the caller.
        unsafe { self.inner.call_int(args, target) }.map(|b| self.result(b))
    }

    #[inline(always)]
    fn slots_path(&self) -> SlotsPath {
        self.inner.slots_path()
    }

    #[inline(always)]
    unsafe fn call_slots_int(&self, kinds: u64, slots: &Slots, target: *const c_void) -> u64 {
        // SAFETY: forwarded to the caller.
        unsafe { self.inner.call_slots_int(kinds, slots, target) }
    }

    #[inline(always)]
    unsafe fn call_slots_float(&self, kinds: u64, slots: &Slots, target: *const c_void) -> u64 {
        // SAFETY: forwarded to the caller.
        self.result(unsafe { self.inner.call_slots_float(kinds, slots, target) })
    }

    #[inline(always)]
    fn struct_entry(&self) -> Option<StructEntry<Entries>> {
        self.inner.struct_entry()
    }

    #[inline(always)]
    fn uncaptured(&self) -> Option<Uncaptured<Entries>> {
        self.inner.uncaptured()
    }

    #[inline(always)]
    unsafe fn call_values(
        &self,
        args: *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        // SAFETY: forwarded to the caller.
        unsafe { self.inner.call_values(args, ret, capture, target) }.map(|b| self.result(b))
    }

    #[inline(always)]
    unsafe fn call_capture(
        &self,
        args: *const u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        // SAFETY: forwarded to the caller.
        unsafe { self.inner.call_capture(args, capture, target) }.map(|b| self.result(b))
    }

    #[inline(always)]
    unsafe fn call_raw(
        &self,
        args: *const *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        // SAFETY: forwarded to the caller.
        unsafe { self.inner.call_raw(args, ret, capture, target) }.map(|b| self.result(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, Executor as _};
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ValueLayout as V};

    extern "C" fn never_called() {}

    #[test]
    fn one_fast_path_per_signature_and_the_trampoline_with_the_same_copies() {
        let big = MemoryLayout::c_struct([V::I64, V::I64, V::I64].map(MemoryLayout::from)).unwrap();
        let three = MemoryLayout::c_struct([V::U8, V::U8, V::U8].map(MemoryLayout::from)).unwrap();
        let pair = MemoryLayout::c_struct([V::F32, V::I32].map(MemoryLayout::from)).unwrap();
        for (d, capture, copies, variant) in [
            (FD::of(V::I32, [V::I32]), false, vec![], "Int"),
            (FD::of(V::F64, [V::F32, V::I64]), false, vec![], "Int"),
            (FD::of(V::F32, [V::F32]), false, vec![], "Int"),
            (FD::of(V::BOOL, [V::I32]), false, vec![], "Stub"),
            (FD::of(V::I32, [V::I32]), true, vec![], "Stub"),
            (
                FD::of(V::I64, [big.clone(), V::I32.into(), three.clone()]),
                true,
                vec![(24, 8), (3, 1)],
                "Stub",
            ),
            (FD::of(&big, [V::F64]), false, vec![], "Stub"),
            (FD::of(&pair, [&pair]), false, vec![], "Stub"),
        ] {
            let plan = super::super::classify::plan(&d, None).unwrap();
            let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
            let ret = RetKind::of(d.return_layout());
            let target = never_called as *const c_void;
            let exec = super::super::S390x::link(&plan, &args, ret, capture, target).unwrap();
            assert_eq!(
                exec.float_ret,
                ret == RetKind::Scalar(ScalarKind::F32),
                "{d}"
            );
            let name = match exec.inner() {
                StubExecutor::Interpreted(_) => "Interpreted",
                StubExecutor::Int(_) => "Int",
                StubExecutor::Stub(_) => "Stub",
            };
            assert_eq!(name, variant, "{d}");
            assert!(exec.is_compiled());
            let interpreted = exec.interpreted();
            assert!(
                matches!(interpreted.inner(), StubExecutor::Interpreted(_)),
                "{d}"
            );
            assert!(!interpreted.is_compiled());
            assert_eq!(interpreted.float_ret, exec.float_ret);
            assert_eq!(
                interpreted.inner().copies().area,
                exec.inner().copies().area
            );
            assert_eq!(*exec.inner().copies().each, *copies, "{d}");
            let int_ret = matches!(ret, RetKind::Void)
                || matches!(ret, RetKind::Scalar(k) if !matches!(k, ScalarKind::Bool | ScalarKind::F32 | ScalarKind::F64));
            assert_eq!(
                exec.uncaptured().is_some(),
                capture && int_ret && copies.is_empty(),
                "{d}"
            );
            let plain_struct =
                matches!(ret, RetKind::Group { .. }) && !capture && copies.is_empty();
            assert_eq!(exec.struct_entry().is_some(), plain_struct, "{d}");
        }
    }
}
