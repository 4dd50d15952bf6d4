//! The AArch64 (AAPCS64 and Apple arm64) executor of a downcall handle: the shared
//! [`StubExecutor`](crate::backend::executor::StubExecutor) over this backend's stub entries
//! ([`Entries`]): a compiled stub (`stub`) — with the integer fast path where its signature
//! allows one — or the trampoline (`CallFrame`) when the OS refuses executable memory (and for
//! the `interpreted` test hook). This module gives it the AArch64 entry calls, the copies'
//! layout (each copy at the struct's own alignment), the slots path ([`super::slots`]) and the
//! stub without capture of the system-call adapter.
//!
//! # By-reference arguments (AAPCS64 §6.8.2 rule B.3)
//! A composite over 16 bytes that is not an HFA is copied by the caller and passed as the
//! copy's address ([`crate::abi::ArgPlan::by_reference`]). The copies of one call live in ONE
//! frame of [`crate::memory::linker_stack`], pushed per call with the size and alignment
//! computed at link time ([`crate::backend::CopyArea`]; no frame when the plan has none) and closed when the
//! call returns. Frames nest LIFO, so an upcall running on top of the call (and any downcall
//! it makes) pushes and pops its own frames above it; the BufferStack falls back to the heap
//! by itself when its block is full. The callee may write through the pointer: it writes the
//! copy, never the caller's segment.
//!
//! A compiled stub takes the copies' addresses in `x4` as an array of pointers, one per
//! by-reference argument in argument order. That array is the first 8 n bytes of the same
//! frame (n by-reference arguments), the copies follow at offsets computed at link time
//! ([`Refs`](crate::backend::executor::Refs), laid out by [`plan_copies`](crate::backend::executor::plan_copies)), so a call makes one frame and no heap allocation. On the value path each
//! by-reference `Value` must be a `Value::Segment` of at least the struct's size before its
//! bytes are copied; otherwise nothing is called and the handle interprets (and reports it).
//!
//! # Invariants (the unsafe story of this module)
//! - The executor was built by `StubExecutor::link` from the handle's own plan, argument
//!   kinds, return kind and capture flag and never changes: its by-reference sizes follow
//!   `plan.args` in order; the fast path is one variant, so a handle cannot hold inconsistent
//!   fast paths.
//! - Every entry is kept alive by the `Arc<Stub>` in the same [`Entries`] (the stub cache
//!   holds only a `Weak`).
//! - The values entry checks every argument's tag and segment length before anything else and
//!   reports a mismatch without calling (`ValuesEntry::call` gives `None`).
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy (and the
//!   stub's pointer array) is inside the frame pushed for the call, which outlives the call.

use std::ffi::c_void;
use std::sync::Arc;

use super::stub::{ArgCheck, RawFn, Stub, ValuesEntry};
use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::executor::{EntryArgs, StubEntries};
use crate::backend::{ArgKind, RetKind, Slots, SlotsPath};
use crate::layout::ScalarKind;
use crate::value::Value;

/// The entries of an AArch64 stub, kept alive by the `Arc<Stub>` beside them (the stub cache
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

    /// A by-reference argument's copy (AAPCS64 §6.8.2 B.3) has the struct's own size and
    /// alignment.
    fn copy_layout(kind: ArgKind) -> (usize, usize) {
        match kind {
            ArgKind::Group { size, align } => (size, align),
            // B.3 applies to composites only; a scalar never has a by-reference plan.
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
    /// ([`super::slots::DirectRegisters`]); returns x0, or d0's bits for a float.
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
    use crate::backend::executor::{Refs, StubExecutor};
    use crate::backend::{Backend, CopyArea, Executor as _};
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ValueLayout as V};

    extern "C" fn never_called() {}

    /// The executor `link` picks for a descriptor (its variant's name), with its arities and
    /// by-reference count checked against the variant.
    fn variant(d: &FD, first_variadic: Option<usize>, capture: bool) -> &'static str {
        let plan = super::super::classify::plan(d, first_variadic, super::super::FLAVOUR).unwrap();
        let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
        let ret = RetKind::of(d.return_layout());
        let target = never_called as *const c_void;
        let exec = super::super::Aapcs64::link(&plan, &args, ret, capture, target).unwrap();
        // the test hook is the trampoline, with the same copies, whatever the fast path was
        let interpreted = exec.interpreted();
        assert!(matches!(interpreted, StubExecutor::Interpreted(_)));
        assert!(!interpreted.is_compiled() && exec.is_compiled(), "{d}");
        assert_eq!(interpreted.copies().area, exec.copies().area);
        assert_eq!(interpreted.int_arity(args.len()), usize::MAX);
        let n = args.len();
        assert_eq!(exec.float_arity(n), usize::MAX);
        assert!(exec.image().is_none() && interpreted.uncaptured().is_none());
        // a struct return without capture or by-reference arguments has the struct entry
        assert!(interpreted.struct_entry().is_none());
        let plain_struct = matches!(ret, RetKind::Group { .. })
            && !capture
            && plan.args.iter().all(|a| a.by_reference.is_none());
        assert_eq!(exec.struct_entry().is_some(), plain_struct, "{d}");
        // a capture handle of an integer or void result without by-reference arguments has
        // the same signature's stub without capture (the system-call adapter's fast path)
        let by_ref = plan.args.iter().any(|a| a.by_reference.is_some());
        let int_ret = matches!(ret, RetKind::Void)
            || matches!(ret, RetKind::Scalar(k) if !matches!(k, ScalarKind::Bool | ScalarKind::F32 | ScalarKind::F64));
        assert_eq!(
            exec.uncaptured().is_some(),
            capture && int_ret && !by_ref,
            "{d}"
        );
        assert_eq!(
            exec.int_arity(n) == n,
            matches!(exec, StubExecutor::Int(_)),
            "{d}"
        );
        let c = exec.compiled().unwrap();
        let by_ref = plan
            .args
            .iter()
            .filter(|a| a.by_reference.is_some())
            .count();
        assert_eq!(c.refs.each.len(), by_ref, "{d}");
        match exec {
            StubExecutor::Interpreted(_) => "Interpreted",
            StubExecutor::Int(_) => "Int",
            StubExecutor::Stub(_) => "Stub",
        }
    }

    fn st(m: &[V]) -> MemoryLayout {
        MemoryLayout::c_struct(m.iter().map(|v| MemoryLayout::from(v.clone()))).unwrap()
    }

    #[test]
    fn one_fast_path_per_signature() {
        let big = st(&[V::I64, V::I64, V::I64]);
        assert_eq!(variant(&FD::of_void([]), None, false), "Int");
        assert_eq!(variant(&FD::of(V::I32, [V::I32]), None, false), "Int");
        // float results come back in x0 too: the same fast path
        assert_eq!(variant(&FD::of(V::F64, [V::F64]), None, false), "Int");
        assert_eq!(variant(&FD::of(V::I32, [V::I32]), Some(0), false), "Int");
        // a bool result is normalised by the handle's value path
        assert_eq!(variant(&FD::of(V::BOOL, [V::I32]), None, false), "Stub");
        // by-reference arguments need the copies' frame
        assert_eq!(variant(&FD::of(V::I64, [&big]), None, false), "Stub");
        assert_eq!(variant(&FD::of(&big, [V::I32]), None, false), "Stub");
        assert_eq!(
            variant(&FD::of(st(&[V::I64, V::F64]), [V::I32]), None, false),
            "Stub"
        );
        assert_eq!(variant(&FD::of(V::I32, [V::I32]), None, true), "Stub");
        assert_eq!(variant(&FD::of(V::F64, [V::I32]), None, true), "Stub");
        assert_eq!(variant(&FD::of(V::I64, [&big]), None, true), "Stub");
        assert_eq!(variant(&FD::of(&big, [&big, &big]), None, true), "Stub");
    }

    #[test]
    fn the_pointer_array_comes_first_and_each_copy_is_aligned_in_one_frame() {
        let refs = Refs::new([(1, 24, 8), (3, 40, 16), (4, 17, 1)].into_iter()).unwrap();
        let at: Vec<(usize, usize, usize)> = refs
            .each
            .iter()
            .map(|r| (r.index, r.size, r.offset))
            .collect();
        assert_eq!(at, [(1, 24, 24), (3, 40, 48), (4, 17, 88)]);
        assert_eq!(
            refs.area,
            CopyArea {
                bytes: 105,
                align: 16
            }
        );
        assert!(Refs::new([(0, isize::MAX as usize, 8)].into_iter()).is_none());
        assert_eq!(Refs::new(std::iter::empty()).unwrap().area.bytes, 0);
    }
}
