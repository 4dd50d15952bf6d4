//! The Win64 (Microsoft x64) executor of a downcall handle: the shared
//! [`StubExecutor`](crate::backend::executor::StubExecutor) over this backend's stub entries
//! ([`Entries`]): a compiled stub (`super::stub`) — with the integer fast path where its
//! signature allows one — or the trampoline (`CallFrame`) when the OS refuses executable memory
//! (and for the `interpreted` test hook). This module gives it the Win64 entry calls, the
//! copies' layout (16-byte aligned) and the slots path ([`super::slots`]). It has no stub
//! without capture for the system-call adapter: that path zeroes and reads `errno` alone, while
//! a Windows capture also carries the last-error and Winsock states, so capture handles take
//! the capture stub.
//!
//! A compiled stub takes the by-reference copies' addresses as its fifth parameter, an array of
//! pointers, one per by-reference argument in argument order. That array is the first 8 n bytes
//! of the call's one [`crate::memory::linker_stack`] frame (n by-reference arguments); the
//! copies follow, each at a 16-byte aligned offset computed at link time ([`Refs`](crate::backend::executor::Refs), laid out by [`plan_copies`](crate::backend::executor::plan_copies)), so a call
//! makes one frame and no heap allocation. On the value path each by-reference `Value` must be a
//! `Value::Segment` of at least the struct's size before its bytes are copied; otherwise nothing
//! is called and the handle interprets (and reports it).
//!
//! # The Win64 rules carried out here (the plan says where; this module does it)
//! - **By reference** ("x64 calling convention: parameter passing": "structs and unions of
//!   size 8, 16, 32, or 64 bits ... are passed as if they were integers of the same size ...
//!   Structs or unions of other sizes are passed as a pointer to memory allocated by the
//!   caller"; [`crate::abi::ArgPlan::by_reference`]): each such argument is copied, and the
//!   copy's address takes its slot (GPR or stack slot). The copies of one call live in ONE frame
//!   of [`crate::memory::linker_stack`], pushed per call with the size computed at link time
//!   ([`crate::backend::CopyArea`]; no frame when the plan has none) and closed when the call returns. Every
//!   copy starts at a multiple of 16 bytes ("allocated temporary memory must be 16-byte
//!   aligned"), whatever the struct's own alignment. The callee may write through the pointer:
//!   it writes the copy, never the caller's segment. Frames nest LIFO, so an upcall running on
//!   top of the call (and any downcall it makes) pushes and pops its own frames above it; the
//!   BufferStack falls back to the heap by itself when its block is full.
//! - **Hidden return pointer** ("x64 calling convention: return values": "the caller assumes
//!   the responsibility of allocating memory and passing a pointer for the return value as the
//!   first argument"; [`CallPlan::hidden_return_pointer`] = rcx, which shifts the arguments by
//!   one slot): rcx gets the handle's return destination `ret`, which the callee writes and
//!   returns in rax.
//! - **Shadow space and stack** ("the caller must always allocate sufficient space to store
//!   four register parameters"): the stack area of a call is the plan's `stack_bytes`, 32 bytes
//!   of shadow space at `rsp` (zeroed; the callee may write it) and then one 8-byte slot per
//!   argument past the fourth slot, written whole.
//! - **Capture** (the JDK's Windows capture state, 12 bytes: `GetLastError` at 0,
//!   `WSAGetLastError` at 4, `errno` at 8): the trampoline restores all three right before the
//!   call and saves them right after it (see `trampoline`).
//!
//! # Invariants (the unsafe story of this module)
//! - The executor was built by `StubExecutor::link` from the handle's own plan and argument
//!   kinds and never changes: its by-reference sizes follow `plan.args` in order, and the copy
//!   frame's size is their sum with each copy 16-byte aligned; the fast path is one variant.
//! - Every stub entry is kept alive by the `Arc<Stub>` in the same [`Entries`] (the stub cache
//!   holds only a `Weak`).
//! - The values entry checks every argument's tag and segment length before anything else and
//!   reports a mismatch without calling (its `rejected` flag).
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy is inside the
//!   frame pushed for the call, which outlives the call; a plan with more by-reference
//!   arguments than the linked one is reported as an internal error, never trusted.

use std::ffi::c_void;
use std::sync::Arc;

use super::stub::{ArgCheck, RawFn, Stub, ValuesFn};
use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::executor::{EntryArgs, StubEntries};
use crate::backend::{ArgKind, RetKind, Slots, SlotsPath};
use crate::value::Value;

/// The alignment in bytes of every by-reference copy ("allocated temporary memory must be
/// 16-byte aligned").
pub(crate) const COPY_ALIGN: usize = 16;

/// The entries of a Win64 stub, kept alive by the `Arc<Stub>` beside them (the stub cache holds
/// only a `Weak`).
#[derive(Clone)]
pub(crate) struct Entries {
    raw: RawFn,
    values: ValuesFn,
    _keep: Arc<Stub>,
}

impl StubEntries for Entries {
    type Frame = CallFrame;
    type Values = ValuesFn;

    /// Every copy is 16-byte aligned, whatever the struct's own alignment.
    fn copy_layout(kind: ArgKind) -> (usize, usize) {
        match kind {
            ArgKind::Group { size, .. } => (size, COPY_ALIGN),
            // Only aggregates are passed by reference; a scalar never has such a plan.
            ArgKind::Scalar(k) => (k.byte_size(), COPY_ALIGN),
        }
    }

    fn compile(
        plan: &CallPlan,
        checks: &[ArgCheck],
        _ret: RetKind,
        capture: bool,
    ) -> Option<Entries> {
        let stub = super::stub::stub_for(plan, checks, capture).ok()?;
        Some(Entries {
            raw: stub.raw,
            values: stub.values,
            _keep: stub,
        })
    }

    /// [`super::slots::path_of`]: `Int` or `Float` for a handle without capture, not variadic,
    /// of at most four scalar arguments and a non-bool scalar or void return.
    fn slots_path(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath {
        super::slots::path_of(plan, args, ret, capture)
    }

    /// The target called with `slots` in the argument registers through the slots helper
    /// ([`super::slots::call`]; `kinds` is not needed: the four slots are passed whatever the
    /// count); returns rax, or xmm0's low 64 bits for a float.
    #[inline(always)]
    unsafe fn call_slots(_kinds: u64, slots: &Slots, target: *const c_void, float: bool) -> u64 {
        // SAFETY: the slot of every descriptor argument is initialised; the handle's plan is
        // the kinds' (at most four scalars, in registers), not variadic, with a scalar or void
        // return of the class `float` says (caller, `slots_path`).
        unsafe { super::slots::call(slots, target, float) }
    }

    #[inline(always)]
    fn values(&self) -> ValuesFn {
        self.values
    }

    #[inline(always)]
    unsafe fn call_values(entry: ValuesFn, values: *const Value<'_>, a: EntryArgs) -> Option<u64> {
        let mut rejected = 0u8;
        // SAFETY: the caller's contract; `rejected` is writable for the call.
        let r = unsafe {
            entry(
                values,
                a.ret,
                a.capture,
                a.target,
                a.copies,
                a.errno_location,
                &mut rejected,
            )
        };
        (rejected == 0).then_some(r)
    }

    #[inline(always)]
    unsafe fn call_raw(&self, args: *const *const u8, a: EntryArgs) -> u64 {
        // SAFETY: the caller's contract.
        unsafe { (self.raw)(args, a.ret, a.capture, a.target, a.copies, a.errno_location) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::executor::Copies;
    use crate::backend::{Backend, CopyArea, Executor as _};
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ValueLayout as V};

    fn copies(d: &FD) -> Copies {
        let plan = super::super::classify::plan(d, None).unwrap();
        let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
        let exec = super::super::Win64::link(
            &plan,
            &args,
            RetKind::of(d.return_layout()),
            false,
            std::ptr::null(),
        )
        .unwrap();
        assert!(!exec.interpreted().is_compiled());
        assert_eq!(exec.interpreted().copies().area, exec.copies().area);
        exec.copies().clone()
    }

    #[test]
    fn every_by_reference_copy_is_16_byte_aligned_in_one_frame() {
        let s3 = MemoryLayout::c_struct([V::I8, V::I8, V::I8]).unwrap();
        let s12 = MemoryLayout::c_struct([V::I32, V::I32, V::I32]).unwrap();
        let s8 = MemoryLayout::c_struct([V::I32, V::I32]).unwrap();
        let c = copies(&FD::of_void([
            s3.clone(),
            s8,
            s12.clone(),
            V::I64.into(),
            s3,
        ]));
        assert_eq!(&*c.each, &[(3, 16), (12, 16), (3, 16)]);
        // 3 at 0, 12 at 16, 3 at 32
        assert_eq!(
            c.area,
            CopyArea {
                bytes: 35,
                align: 16
            }
        );
        assert_eq!(copies(&FD::of(s12, [V::I32])).area.bytes, 0);
    }
}
