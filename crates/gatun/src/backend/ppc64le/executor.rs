//! The PPC64LE (ELFv2) executor of a downcall handle: the shared
//! [`StubExecutor`] over this backend's stub entries ([`Entries`]) — a compiled stub (`stub`),
//! with the integer fast path where its signature allows one, or the trampoline (`CallFrame`)
//! when the OS refuses executable memory (and for the `interpreted` test hook) — wrapped in
//! [`Executor`], which turns a `float` result's register image into its single bits.
//!
//! # Why the wrapper
//! A `float` comes back in f1 in double format (ELFv2 ABI 2.2.4 "Return Values"; Power ISA
//! Book I, "Floating-Point Facility"). The plan says only "f1" for a `float` and a `double`
//! result alike, and a stub is shared by every signature of the same plan (the stub cache's
//! key), so the stub and the trampoline hand back f1's 64-bit image and the executor, linked
//! with the return kind, converts it ([`super::double_to_single`]) on every path that returns
//! a scalar. (A `float` member of a returned aggregate has its own 4-byte return move: the
//! trampoline frame and the stub convert those themselves.)
//!
//! # Invariants (the unsafe story of this module)
//! - Every entry is kept alive by the `Arc<Stub>` in the same [`Entries`] (the stub cache
//!   holds only a `Weak`).
//! - The values entry checks every argument's tag and segment length before anything else and
//!   reports a mismatch without calling (`ValuesEntry::call` gives `None`).
//! - The executor was built by [`Executor::link`] from the handle's own plan, argument kinds,
//!   return kind and capture flag and never changes; ELFv2 passes no argument by reference,
//!   so the plan has no copies.

use std::ffi::c_void;
use std::sync::Arc;

use super::stub::{RawFn, Stub, ValuesEntry};
use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::executor::{EntryArgs, StructEntry, StubEntries, StubExecutor, Uncaptured};
use crate::backend::{Absent, ArgCheck, ArgKind, ArgSource, RetKind, Slots, SlotsPath};
use crate::layout::ScalarKind;
use crate::value::Value;

/// The entries of a PPC64LE stub, kept alive by the `Arc<Stub>` beside them (the stub cache
/// holds only a `Weak`).
#[derive(Clone)]
pub(crate) struct Entries {
    raw: RawFn,
    values: ValuesEntry,
    /// A capture handle with an integer or void result: the values entry of the same
    /// signature's stub *without* capture, kept alive with it (the system-call adapter zeroes
    /// and reads errno itself).
    uncaptured: Option<(ValuesEntry, Arc<Stub>)>,
    _keep: Arc<Stub>,
}

impl StubEntries for Entries {
    type Frame = CallFrame;
    type Values = ValuesEntry;

    /// ELFv2 passes no argument by reference (aggregates go by value in GPRs and the parameter
    /// save area, 2.2.3.2): never called with a plan of this backend; the aggregate's own
    /// size and alignment.
    fn copy_layout(kind: ArgKind) -> (usize, usize) {
        match kind {
            ArgKind::Group { size, align } => (size, align),
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
        // Integer or void results only: the system-call adapter takes `int` and `long` results.
        let uncaptured = if capture
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

    /// [`super::slots::path_of`]: `Int` or `Float` (a `double` result) for a handle without
    /// capture, not variadic, whose scalar arguments all go in registers.
    fn slots_path(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath {
        super::slots::path_of(plan, args, ret, capture)
    }

    /// The registers loaded from `slots` in Rust and the target called
    /// ([`super::slots::DirectRegisters`]); returns r3, or f1's bits for a `double`.
    #[inline(always)]
    unsafe fn call_slots(kinds: u64, slots: &Slots, target: *const c_void, float: bool) -> u64 {
        // SAFETY: the slots of every argument `kinds` names are initialised; the handle's plan
        // is the kinds' (scalars in registers), not variadic, with a scalar or void return of
        // the class `float` says (caller, `slots_path`).
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
        unsafe { entry.call(values, ret, capture, target, a.errno_location) }
    }

    #[inline(always)]
    unsafe fn call_raw(&self, args: *const *const u8, a: EntryArgs) -> u64 {
        let (ret, capture, target) = (a.ret, a.capture, a.target);
        // SAFETY: the caller's contract.
        unsafe { (self.raw)(args, ret, capture, target, a.copies, a.errno_location) }
    }
}

/// A PPC64LE handle's executor: the shared [`StubExecutor`] and whether the result is a
/// `float` (whose register image every scalar path converts, see the module documentation).
#[derive(Clone)]
pub(crate) struct Executor {
    inner: StubExecutor<Entries>,
    single: bool,
}

impl Executor {
    /// The executor of a handle with `plan` (argument kinds `args`, return `ret`, `capture`):
    /// [`StubExecutor::link`], and the return kind's conversion.
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
            single: ret == RetKind::Scalar(ScalarKind::F32),
        })
    }

    /// The shared executor inside.
    #[cfg(test)]
    pub(crate) fn inner(&self) -> &StubExecutor<Entries> {
        &self.inner
    }

    /// The scalar result's bits from the result register's: a `float`'s single bits from its
    /// double image, every other kind's unchanged.
    #[inline(always)]
    fn result(&self, bits: u64) -> u64 {
        if self.single {
            super::double_to_single(bits)
        } else {
            bits
        }
    }
}

impl crate::backend::Executor for Executor {
    type Image = Absent;
    type StructEntry = StructEntry<Entries>;
    type Uncaptured<'a> = Uncaptured<Entries>;

    /// [`StubExecutor`]'s trampoline call, the result converted.
    ///
    /// # Errors
    /// As [`StubExecutor`]'s.
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
        unsafe { self.inner.interpret(plan, target, capture, ret, arg) }.map(|b| self.result(b))
    }

    #[cfg(feature = "internals")]
    fn interpreted(&self) -> Self {
        Executor {
            inner: self.inner.interpreted(),
            single: self.single,
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

    /// Integer or void results only (no conversion).
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
    fn one_fast_path_per_signature_and_the_float_conversion_on_each() {
        let big = MemoryLayout::c_struct([V::I64, V::I64, V::I64].map(MemoryLayout::from)).unwrap();
        let f8 = MemoryLayout::c_struct([V::F32; 8].map(MemoryLayout::from)).unwrap();
        for (d, capture, variant, single) in [
            (FD::of(V::I32, [V::I32]), false, "Int", false),
            (FD::of(V::F32, [V::F32, V::I64]), false, "Int", true),
            (FD::of(V::F64, [V::F32, V::I64]), false, "Int", false),
            (FD::of(V::BOOL, [V::I32]), false, "Stub", false),
            (FD::of(V::I32, [V::I32]), true, "Stub", false),
            (FD::of(V::F32, [V::I32]), true, "Stub", true),
            (
                FD::of(V::I64, [big.clone(), V::I32.into()]),
                false,
                "Int",
                false,
            ),
            (FD::of(&big, [V::F64]), false, "Stub", false),
            (FD::of(&f8, [&f8]), false, "Stub", false),
        ] {
            let plan = super::super::classify::plan(&d, None).unwrap();
            let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
            let ret = RetKind::of(d.return_layout());
            let target = never_called as *const c_void;
            let exec = super::super::Elfv2::link(&plan, &args, ret, capture, target).unwrap();
            let name = match exec.inner() {
                StubExecutor::Interpreted(_) => "Interpreted",
                StubExecutor::Int(_) => "Int",
                StubExecutor::Stub(_) => "Stub",
            };
            assert_eq!(name, variant, "{d}");
            assert_eq!(exec.single, single, "{d}");
            assert!(exec.is_compiled());
            let interpreted = exec.interpreted();
            assert!(
                matches!(interpreted.inner(), StubExecutor::Interpreted(_)),
                "{d}"
            );
            assert_eq!(interpreted.single, single, "{d}");
            assert!(
                exec.inner().copies().each.is_empty(),
                "{d}: no by-reference copies"
            );
            let int_ret = matches!(ret, RetKind::Void)
                || matches!(ret, RetKind::Scalar(k) if !matches!(k, ScalarKind::Bool | ScalarKind::F32 | ScalarKind::F64));
            assert_eq!(exec.uncaptured().is_some(), capture && int_ret, "{d}");
            let plain_struct = matches!(ret, RetKind::Group { .. }) && !capture;
            assert_eq!(exec.struct_entry().is_some(), plain_struct, "{d}");
        }
    }
}
