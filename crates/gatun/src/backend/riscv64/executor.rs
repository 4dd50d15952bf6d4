//! The RISC-V 64 (LP64D) executor of a downcall handle: the shared
//! [`StubExecutor`](crate::backend::executor::StubExecutor) over this backend's stub entries
//! ([`Entries`]): a compiled stub (`stub`) — with the integer fast path where its signature
//! allows one — or the trampoline (`CallFrame`) when the OS refuses executable memory (and for
//! the `interpreted` test hook). This module gives it the RISC-V entry calls, the copies'
//! layout (each copy at the aggregate's own alignment) and the stub without capture of the
//! system-call adapter, and the slots path of `linker::Arguments` ([`super::slots`]).
//!
//! # By-reference arguments (RISC-V psABI, "Integer Calling Convention")
//! An aggregate larger than 2×XLEN bits (16 bytes) is "passed by reference and … replaced in
//! the argument list with the address": the caller makes the copy
//! ([`crate::abi::ArgPlan::by_reference`]). The copies of one call live in ONE frame of
//! [`crate::memory::linker_stack`], pushed per call with the size and alignment computed at
//! link time ([`crate::backend::CopyArea`]; no frame when the plan has none) and closed when
//! the call returns. Frames nest LIFO, so an upcall running on top of the call (and any
//! downcall it makes) pushes and pops its own frames above it; the BufferStack falls back to
//! the heap by itself when its block is full. The callee may write through the pointer: it
//! writes the copy, never the caller's segment. A compiled stub takes the copies' addresses in
//! `a4` as an array of pointers, one per by-reference argument in argument order, at the start
//! of the same frame ([`Refs`](crate::backend::executor::Refs)).
//!
//! # Invariants (the unsafe story of this module)
//! - Every entry is kept alive by the `Arc<Stub>` in the same [`Entries`] (the stub cache
//!   holds only a `Weak`).
//! - The values entry checks every argument's tag and segment length before anything else and
//!   reports a mismatch without calling (`ValuesEntry::call` gives `None`).
//! - The executor was built by `StubExecutor::link` from the handle's own plan, argument
//!   kinds, return kind and capture flag and never changes: its by-reference sizes follow
//!   `plan.args` in order.
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy is inside
//!   the frame pushed for the call, which outlives the call.

use std::ffi::c_void;
use std::sync::Arc;

use super::stub::{RawFn, Stub, ValuesEntry};
use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::executor::{EntryArgs, StubEntries};
use crate::backend::{ArgCheck, ArgKind, RetKind, Slots, SlotsPath};
use crate::layout::ScalarKind;
use crate::value::Value;

/// The entries of a RISC-V 64 stub, kept alive by the `Arc<Stub>` beside them (the stub cache
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
    /// of at most eight scalar arguments and a non-bool scalar or void return.
    fn slots_path(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath {
        super::slots::path_of(plan, args, ret, capture)
    }

    /// The registers loaded from `slots` in Rust and the target called
    /// ([`super::slots::DirectRegisters`]); returns a0, or fa0's bits for a float.
    #[inline(always)]
    unsafe fn call_slots(kinds: u64, slots: &Slots, target: *const c_void, float: bool) -> u64 {
        // SAFETY: the slots of every argument `kinds` names are initialised; the handle's plan
        // is the kinds' (at most eight scalars, all in registers), not variadic, with a scalar
        // or void return of the class `float` says (caller, `slots_path`).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::executor::StubExecutor;
    use crate::backend::{Backend, Executor as _};
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ValueLayout as V};

    extern "C" fn never_called() {}

    #[test]
    fn one_fast_path_per_signature_and_the_trampoline_with_the_same_copies() {
        let big = MemoryLayout::c_struct([V::I64, V::I64, V::I64].map(MemoryLayout::from)).unwrap();
        let pair = MemoryLayout::c_struct([V::F32, V::I32].map(MemoryLayout::from)).unwrap();
        for (d, capture, copies, variant) in [
            (FD::of(V::I32, [V::I32]), false, 0, "Int"),
            (FD::of(V::F64, [V::F32, V::I64]), false, 0, "Int"),
            (FD::of(V::BOOL, [V::I32]), false, 0, "Stub"),
            (FD::of(V::I32, [V::I32]), true, 0, "Stub"),
            (
                FD::of(V::I64, [big.clone(), V::I32.into(), big.clone()]),
                true,
                2,
                "Stub",
            ),
            (FD::of(&big, [V::F64]), false, 0, "Stub"),
            (FD::of(&pair, [&pair]), false, 0, "Stub"),
        ] {
            let plan = super::super::classify::plan(&d, None).unwrap();
            let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
            let ret = RetKind::of(d.return_layout());
            let target = never_called as *const c_void;
            let exec = super::super::Lp64d::link(&plan, &args, ret, capture, target).unwrap();
            let name = match exec {
                StubExecutor::Interpreted(_) => "Interpreted",
                StubExecutor::Int(_) => "Int",
                StubExecutor::Stub(_) => "Stub",
            };
            assert_eq!(name, variant, "{d}");
            assert!(exec.is_compiled());
            let interpreted = exec.interpreted();
            assert!(matches!(interpreted, StubExecutor::Interpreted(_)), "{d}");
            assert!(!interpreted.is_compiled());
            assert_eq!(interpreted.copies().area, exec.copies().area);
            assert_eq!(exec.copies().each.len(), copies, "{d}");
            assert!(exec.copies().each.iter().all(|&c| c == (24, 8)));
            let int_ret = matches!(ret, RetKind::Void)
                || matches!(ret, RetKind::Scalar(k) if !matches!(k, ScalarKind::Bool | ScalarKind::F32 | ScalarKind::F64));
            assert_eq!(
                exec.uncaptured().is_some(),
                capture && int_ret && copies == 0,
                "{d}"
            );
            let plain_struct = matches!(ret, RetKind::Group { .. }) && !capture && copies == 0;
            assert_eq!(exec.struct_entry().is_some(), plain_struct, "{d}");
        }
    }
}
