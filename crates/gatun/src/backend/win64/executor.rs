//! The Win64 (Microsoft x64) executor of a downcall handle, chosen once at link time: a
//! compiled stub (`super::stub`) — with the integer fast path where its signature allows one —
//! or the trampoline (`CallFrame`, [`Executor::Interpreted`]) when the OS refuses executable
//! memory (and for [`Executor::interpreted`], the test hook).
//!
//! The handle layer (`linker::handle`) is ABI-neutral: it checks counts, capture buffers and
//! return segments, builds `Value`s, and calls the methods below. A stub method that returns
//! `None`/`false` called nothing; the handle then falls back to [`Executor::interpret`], which
//! performs the same checks in Rust and reports the exact error.
//!
//! The executor itself (its variants, fast paths and the by-reference copy frame) is the one
//! shared with the other by-reference ABI, [`by_reference::Executor`]; this module gives it the
//! Win64 entry calls ([`Entries`]) and `link`, `image`, `struct_entry` and `uncaptured`.
//!
//! A compiled stub takes the by-reference copies' addresses as its fifth parameter, an array of
//! pointers, one per by-reference argument in argument order. That array is the first 8 n bytes
//! of the call's one [`crate::memory::linker_stack`] frame (n by-reference arguments); the
//! copies follow, each at a 16-byte aligned offset computed at link time ([`by_reference::Refs`], laid out by [`by_reference::plan_copies`]), so a call
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
//! - An [`Executor`] was built by [`Executor::link`] from the handle's own plan and argument
//!   kinds and never changes: its by-reference sizes follow `plan.args` in order, and the copy
//!   frame's size is their sum with each copy 16-byte aligned; the fast path is one variant, so
//!   [`Executor::int_arity`] is derived from it.
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
use crate::backend::by_reference::{self, EntryArgs, StubEntries};
use crate::backend::{ArgKind, RetKind, Slots, SlotsPath};
use crate::error::Result;
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

    #[inline(always)]
    unsafe fn call_values(&self, values: *const Value<'_>, a: EntryArgs) -> Option<u64> {
        let mut rejected = 0u8;
        // SAFETY: the caller's contract; `rejected` is writable for the call.
        let r = unsafe {
            (self.values)(
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

/// How a handle's calls run (the trampoline, the integer fast path or the stub; see
/// [`by_reference::Executor`]). Chosen once by [`Executor::link`].
pub(crate) type Executor = by_reference::Executor<Entries>;

#[cfg(feature = "internals")]
stub_internals! {
    compile: |plan, checks, capture| {
        let fns = super::stub::CaptureFns::native();
        super::stub::compile(plan, checks, capture, &fns).bytes
    },
    build_errors: "[`crate::Error::Unsupported`] if the OS refuses executable memory or the \
                   function table.",
}

impl Executor {
    /// The executor of a handle with `plan` (argument kinds `args`, return `ret`, `capture`): a
    /// compiled stub with its fast path, or the trampoline when the OS gives no executable
    /// memory (or refuses the stub's function table). The by-reference copy areas are computed
    /// here once.
    ///
    /// # Errors
    /// [`crate::Error::SizeOverflow`] when the by-reference copies together exceed `isize::MAX`
    /// bytes (no frame can hold them); [`crate::Error::InvalidDescriptor`] (an internal error)
    /// when `args` does not have one kind per planned argument.
    pub(crate) fn link(
        plan: &CallPlan,
        args: &[ArgKind],
        ret: RetKind,
        capture: bool,
        _target: *const c_void,
    ) -> Result<Executor> {
        // Every copy is 16-byte aligned, whatever the struct's own alignment.
        let (copies, refs) = by_reference::plan_copies(plan, args, |kind| match kind {
            ArgKind::Group { size, .. } => (size, COPY_ALIGN),
            // Only aggregates are passed by reference; a scalar never has such a plan.
            ArgKind::Scalar(k) => (k.byte_size(), COPY_ALIGN),
        })?;
        let Some(refs) = refs else {
            return Ok(Executor::Interpreted(copies));
        };
        let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
        let Ok(stub) = super::stub::stub_for(plan, &checks, capture) else {
            return Ok(Executor::Interpreted(copies));
        };
        let entries = Entries {
            raw: stub.raw,
            values: stub.values,
            _keep: stub,
        };
        let slots = super::slots::path_of(plan, args, ret, capture);
        Ok(Executor::of_stub(entries, refs, copies, ret, capture).with_slots(slots))
    }

    /// The `linker::Arguments` fast path ([`super::slots`]): `Int` or `Float` for a handle
    /// without capture, not variadic, of at most four scalar arguments and a non-bool scalar
    /// or void return (with a stub: the trampoline test hook has none), else `None`.
    #[inline(always)]
    pub(crate) fn slots_path(&self) -> SlotsPath {
        self.slots_choice()
    }

    /// The slots fast path of an integer or void return: the target called with `slots` in the
    /// argument registers through the slots helper ([`super::slots::call`]); returns rax.
    ///
    /// # Safety
    /// [`Executor::slots_path`] is `Int`; `_kinds` is the descriptor's kind word
    /// (`linker::arguments`; not needed here: the four slots are passed whatever the count)
    /// and `slots` holds one 8-byte slot per descriptor argument with a value of its kind in
    /// its low bytes; the callee's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call_slots_int(
        &self,
        _kinds: u64,
        slots: &Slots,
        target: *const c_void,
    ) -> u64 {
        // SAFETY: the slot of every descriptor argument is initialised; the handle's plan
        // is the kinds' (at most four scalars, in registers), not variadic, with an integer or
        // void return (caller, `slots_path`).
        unsafe { super::slots::call(slots, target, false) }
    }

    /// As [`Executor::call_slots_int`] for a float return: xmm0's low 64 bits.
    ///
    /// # Safety
    /// As [`Executor::call_slots_int`], with [`Executor::slots_path`] `Float`.
    #[inline(always)]
    pub(crate) unsafe fn call_slots_float(
        &self,
        _kinds: u64,
        slots: &Slots,
        target: *const c_void,
    ) -> u64 {
        // SAFETY: as in `call_slots_int`; the result is in xmm0.
        unsafe { super::slots::call(slots, target, true) }
    }

    /// No image entries on this backend.
    #[inline(always)]
    pub(crate) fn image(&self) -> Option<super::ImageEntry> {
        None
    }

    /// The entry of a struct return without capture and without by-reference arguments (the
    /// values entry, which passes `ret` to the target as the hidden pointer in rcx, or stores a
    /// register-returned struct there), if the handle has one. The handle keeps it beside this
    /// executor, which keeps the stub alive.
    #[inline(always)]
    pub(crate) fn struct_entry(&self) -> Option<StructEntry> {
        match self {
            Executor::Stub(c) if c.struct_ret && !c.capture && c.refs.each.is_empty() => {
                Some(StructEntry(c.entries.values))
            }
            _ => None,
        }
    }

    /// No entry without capture for the system-call adapter: its fast path zeroes and reads
    /// `errno` alone, while a Windows capture also carries the last-error and Winsock states,
    /// so capture handles take the capture stub ([`Executor::call_capture`]).
    #[inline(always)]
    pub(crate) fn uncaptured(&self) -> Option<crate::backend::absent::Uncaptured<'_>> {
        None
    }
}

/// The values entry of a struct return without capture and without by-reference arguments
/// ([`Executor::struct_entry`]). `Copy`; valid while the executor it came from is alive.
#[derive(Clone, Copy)]
pub(crate) struct StructEntry(ValuesFn);

impl StructEntry {
    /// Calls it with `args` (a `&[Value]`), the struct written at `ret` (by the target through
    /// the hidden pointer, or by the stub from rax): `true` if it ran, `false` if the stub
    /// rejected an argument (then nothing was called and nothing written).
    ///
    /// # Safety
    /// The executor it came from is alive; `args` holds one `Value` per descriptor
    /// argument; `ret` is writable for the return layout's size and aligned for it; the
    /// callee's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(
        self,
        args: &[Value<'_>],
        ret: *mut u8,
        target: *const c_void,
    ) -> bool {
        let mut rejected = 0u8;
        // SAFETY: the stub checks every argument first; no capture (no buffer, no errno
        // address) and no by-reference copies; `rejected` is writable for the call; `ret` and
        // the rest are the caller's contract.
        unsafe {
            (self.0)(
                args.as_ptr(),
                ret,
                std::ptr::null_mut(),
                target,
                std::ptr::null(),
                std::ptr::null_mut(),
                &mut rejected,
            )
        };
        rejected == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::by_reference::Copies;
    use crate::backend::CopyArea;
    use crate::layout::{MemoryLayout, ValueLayout as V};
    use crate::linker::FunctionDescriptor as FD;

    fn copies(d: &FD) -> Copies {
        let plan = super::super::classify::plan(d, None).unwrap();
        let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
        let exec = Executor::link(&plan, &args, RetKind::of(d.return_layout()), false, std::ptr::null())
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
        let c = copies(&FD::of_void([s3.clone(), s8, s12.clone(), V::I64.into(), s3]));
        assert_eq!(&*c.each, &[(3, 16), (12, 16), (3, 16)]);
        // 3 at 0, 12 at 16, 3 at 32
        assert_eq!(c.area, CopyArea { bytes: 35, align: 16 });
        assert_eq!(copies(&FD::of(s12, [V::I32])).area.bytes, 0);
    }
}
