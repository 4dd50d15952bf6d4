//! The Win64 (Microsoft x64) executor of a downcall handle, chosen once at link time. Today
//! every call runs the trampoline (`CallFrame`, [`Executor::Interpreted`]); the compiled-stub
//! variant has its place marked below.
//!
//! The handle layer (`linker::handle`) is ABI-neutral: it checks counts, capture buffers and
//! return segments, builds `Value`s, and calls the methods below. The fast-path methods report
//! "no stub" (`None`/`false`, arities `usize::MAX`), so the handle calls
//! [`Executor::interpret`], which performs the checks in Rust and reports the exact error.
//!
//! # The Win64 rules carried out here (the plan says where; this module does it)
//! - **By reference** ("x64 calling convention: parameter passing": "structs and unions of
//!   size 8, 16, 32, or 64 bits ... are passed as if they were integers of the same size ...
//!   Structs or unions of other sizes are passed as a pointer to memory allocated by the
//!   caller"; [`crate::abi::ArgPlan::by_reference`]): each such argument is copied, and the
//!   copy's address takes its slot (GPR or stack slot). The copies of one call live in ONE frame
//!   of [`crate::memory::linker_stack`], pushed per call with the size computed at link time
//!   ([`CopyArea`]; no frame when the plan has none) and closed when the call returns. Every
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
//!   frame's size is their sum with each copy 16-byte aligned.
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy is inside the
//!   frame pushed for the call, which outlives the call; a plan with more by-reference
//!   arguments than the linked one is reported as an internal error, never trusted.

use std::ffi::c_void;

use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::by_reference::{self, kinds_mismatch};
use crate::backend::{ArgKind, ArgSource, CopyArea, RetKind};
use crate::error::Result;

/// The alignment in bytes of every by-reference copy ("allocated temporary memory must be
/// 16-byte aligned").
pub(crate) const COPY_ALIGN: usize = 16;

/// What the interpreted path needs beyond the plan: the by-reference copies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Copies {
    /// The frame holding every copy of one call (`bytes == 0`: none, no frame pushed).
    area: CopyArea,
    /// The size in bytes of each by-reference argument, in argument order (each copy is
    /// [`COPY_ALIGN`]-aligned).
    each: Box<[usize]>,
}

/// How a handle's calls run. Chosen once by [`Executor::link`].
#[derive(Clone)]
pub(crate) enum Executor {
    /// The trampoline carries the plan out.
    Interpreted(Copies),
    // The compiled-stub variant goes here: `Stub(Compiled)` (a Win64 stub per signature,
    // `backend/win64/stub.rs`, with `Interpreted` kept as the fallback when the OS refuses
    // executable memory); `link` then picks it and the fast-path methods below use it.
}

/// The stub tools' code: [`crate::Error::Unsupported`] (no Win64 stub compiler yet).
///
/// # Errors
/// Always [`crate::Error::Unsupported`].
#[cfg(feature = "internals")]
pub(crate) fn stub_code(_plan: &CallPlan, _args: &[ArgKind], _capture: bool) -> Result<Vec<u8>> {
    Err(no_stub_compiler())
}

/// As [`stub_code`].
///
/// # Errors
/// Always [`crate::Error::Unsupported`].
#[cfg(feature = "internals")]
pub(crate) fn compile_uncached(_plan: &CallPlan, _args: &[ArgKind], _capture: bool) -> Result<usize> {
    Err(no_stub_compiler())
}

/// The error of the stub tools without a Win64 stub compiler.
#[cfg(feature = "internals")]
fn no_stub_compiler() -> crate::error::Error {
    crate::error::Error::Unsupported {
        type_name: "compiled stub".into(),
        reason: "gatun has no Win64 stub compiler; Win64 calls run the trampoline".into(),
    }
}

impl Executor {
    /// The executor of a handle with `plan` (argument kinds `args`): the trampoline, with the
    /// by-reference copy area computed here once.
    ///
    /// # Errors
    /// [`crate::Error::SizeOverflow`] when the by-reference copies together exceed `isize::MAX`
    /// bytes (no frame can hold them); [`crate::Error::InvalidDescriptor`] (an internal error)
    /// when `args` does not have one kind per planned argument.
    pub(crate) fn link(
        plan: &CallPlan,
        args: &[ArgKind],
        _ret: RetKind,
        _capture: bool,
        _target: *const c_void,
    ) -> Result<Executor> {
        // The handle layer derives `args` from the same descriptor as `plan`: one kind per
        // planned argument. Checked here too, so a mismatch is an error, not fewer copies.
        debug_assert_eq!(plan.args.len(), args.len(), "one argument kind per planned argument");
        if plan.args.len() != args.len() {
            return Err(kinds_mismatch(plan.args.len(), args.len()));
        }
        let each: Box<[usize]> = plan
            .args
            .iter()
            .zip(args)
            .filter(|(ap, _)| ap.by_reference.is_some())
            .map(|(_, kind)| match *kind {
                ArgKind::Group { size, .. } => size,
                // Only aggregates are passed by reference; a scalar never has such a plan.
                ArgKind::Scalar(k) => k.byte_size(),
            })
            .collect();
        let area = each
            .iter()
            .try_fold(CopyArea::default(), |a, &size| a.with(size, COPY_ALIGN))
            .ok_or_else(CopyArea::too_large)?;
        Ok(Executor::Interpreted(Copies { area, each }))
    }

    /// The trampoline's copies.
    fn copies(&self) -> &Copies {
        match self {
            Executor::Interpreted(copies) => copies,
        }
    }

    super::super::absent::no_fast_paths!();
}

#[allow(clippy::missing_safety_doc)]
impl Executor {
    /// One call through the trampoline. `arg(i)` gives argument `i`'s bytes, for every
    /// planned argument, before anything runs (an error stops there). Aggregates passed by
    /// reference get a 16-byte-aligned copy in this call's linker-stack frame, whose address
    /// takes their slot; an in-memory result's destination `ret` goes in rcx. With a capture
    /// buffer the three states are restored from it right before the call and saved into it
    /// right after. A struct returned in rax is written to `ret`; the value is the bits of
    /// rax or of xmm0's low half, whichever the plan returns a scalar in.
    ///
    /// # Errors
    /// Whatever `arg` reports first; [`crate::Error::OutOfMemory`] when the copy frame needs
    /// the heap and cannot get it; [`crate::Error::InvalidDescriptor`] (internal: `plan` has
    /// by-reference arguments this executor has no copies for). Nothing is called on an error.
    ///
    /// # Safety
    /// Sources given as `ArgSource::Bytes` are readable for their layout's size; `ret` is null
    /// (scalar or void result) or writable and aligned for the return layout; `capture` is
    /// null or the 12-byte, 4-aligned buffer of a capture handle; the callee's own contract
    /// holds.
    #[inline(never)]
    pub(crate) unsafe fn interpret(
        &self,
        plan: &CallPlan,
        target: *const c_void,
        capture: *mut i32,
        ret: *mut u8,
        arg: impl FnMut(usize) -> Result<ArgSource>,
    ) -> Result<u64> {
        let copies = self.copies();
        let each = copies.each.iter().map(|&size| (size, COPY_ALIGN));
        // SAFETY: forwarded to the caller; `capture` is the frame's 12-byte buffer or null.
        unsafe {
            by_reference::interpret::<CallFrame>(plan, target, capture, ret, copies.area, each, arg)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{MemoryLayout, ValueLayout as V};
    use crate::linker::FunctionDescriptor as FD;

    fn copies(d: &FD) -> Copies {
        let plan = super::super::classify::plan(d, None).unwrap();
        let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
        let exec = Executor::link(&plan, &args, RetKind::of(d.return_layout()), false, std::ptr::null())
            .unwrap();
        assert!(!exec.is_compiled() && exec.int_arity(args.len()) == usize::MAX);
        exec.copies().clone()
    }

    #[test]
    fn every_by_reference_copy_is_16_byte_aligned_in_one_frame() {
        let s3 = MemoryLayout::c_struct([V::I8, V::I8, V::I8]).unwrap();
        let s12 = MemoryLayout::c_struct([V::I32, V::I32, V::I32]).unwrap();
        let s8 = MemoryLayout::c_struct([V::I32, V::I32]).unwrap();
        let c = copies(&FD::of_void([s3.clone(), s8, s12.clone(), V::I64.into(), s3]));
        assert_eq!(&*c.each, &[3, 12, 3]);
        // 3 at 0, 12 at 16, 3 at 32
        assert_eq!(c.area, CopyArea { bytes: 35, align: 16 });
        assert_eq!(copies(&FD::of(s12, [V::I32])).area.bytes, 0);
    }
}
