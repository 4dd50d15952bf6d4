//! The RISC-V 64 (LP64D) executor of a downcall handle: the shared
//! [`StubExecutor`](crate::backend::executor::StubExecutor) over this backend's stub entries
//! ([`Entries`]). The backend has no stub compiler yet: [`Entries`] is uninhabited and
//! `compile` gives `None`, so every handle runs the trampoline (`CallFrame`). This module
//! gives the executor the trampoline frame and the copies' layout (each copy at the
//! aggregate's own alignment).
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
//! writes the copy, never the caller's segment.
//!
//! # Invariants (the unsafe story of this module)
//! - The executor was built by `StubExecutor::link` from the handle's own plan, argument
//!   kinds, return kind and capture flag and never changes: its by-reference sizes follow
//!   `plan.args` in order.
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy is inside
//!   the frame pushed for the call, which outlives the call.

use std::ffi::c_void;

use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::executor::{EntryArgs, StubEntries};
use crate::backend::{Absent, ArgCheck, ArgKind, RetKind, Slots, SlotsPath};
use crate::value::Value;

/// The entries of a RISC-V 64 stub: none exist (no stub compiler), so no value of this type
/// does either and every method below is unreachable.
#[derive(Clone)]
pub(crate) enum Entries {}

impl StubEntries for Entries {
    type Frame = CallFrame;
    type Values = Absent;

    /// A by-reference argument's copy has the aggregate's own size and alignment.
    fn copy_layout(kind: ArgKind) -> (usize, usize) {
        match kind {
            ArgKind::Group { size, align } => (size, align),
            // Only aggregates are passed by reference; a scalar never has a by-reference plan.
            ArgKind::Scalar(k) => (k.byte_size(), k.byte_size()),
        }
    }

    /// No stub: the handle runs the trampoline.
    fn compile(
        _plan: &CallPlan,
        _checks: &[ArgCheck],
        _ret: RetKind,
        _capture: bool,
    ) -> Option<Entries> {
        None
    }

    fn slots_path(_plan: &CallPlan, _args: &[ArgKind], _ret: RetKind, _capture: bool) -> SlotsPath {
        SlotsPath::None
    }

    /// Never called: `slots_path` is `None`.
    unsafe fn call_slots(_kinds: u64, _slots: &Slots, _target: *const c_void, _float: bool) -> u64 {
        unreachable!("no slots path")
    }

    fn values(&self) -> Absent {
        match *self {}
    }

    unsafe fn call_values(entry: Absent, _values: *const Value<'_>, _a: EntryArgs) -> Option<u64> {
        match entry {}
    }

    unsafe fn call_raw(&self, _args: *const *const u8, _a: EntryArgs) -> u64 {
        match *self {}
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
    fn every_handle_takes_the_trampoline_with_its_copies() {
        let big = MemoryLayout::c_struct([V::I64, V::I64, V::I64].map(MemoryLayout::from)).unwrap();
        for (d, capture, copies) in [
            (FD::of(V::I32, [V::I32]), false, 0),
            (
                FD::of(V::I64, [big.clone(), V::I32.into(), big.clone()]),
                true,
                2,
            ),
            (FD::of(&big, [V::F64]), false, 0),
        ] {
            let plan = super::super::classify::plan(&d, None).unwrap();
            let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
            let ret = RetKind::of(d.return_layout());
            let target = never_called as *const c_void;
            let exec = super::super::Lp64d::link(&plan, &args, ret, capture, target).unwrap();
            assert!(matches!(exec, StubExecutor::Interpreted(_)), "{d}");
            assert!(!exec.is_compiled());
            assert_eq!(exec.int_arity(args.len()), usize::MAX);
            assert!(exec.struct_entry().is_none() && exec.uncaptured().is_none());
            assert_eq!(exec.copies().each.len(), copies, "{d}");
            assert!(exec.copies().each.iter().all(|&c| c == (24, 8)));
        }
    }
}
