//! The AArch64 (AAPCS64, Linux) executor of a downcall handle, chosen once at link time. Every
//! call runs the trampoline (`CallFrame`) today; the compiled-stub variants join the
//! [`Executor`] enum (see the marked place) when the AArch64 stub encoder exists.
//!
//! The handle layer (`linker::handle`) is ABI-neutral: it checks counts, capture buffers and
//! return segments, builds `Value`s, and calls the methods below. Every fast-path method
//! reports "no stub" (`None`/`false`), so the handle falls back to [`Executor::interpret`].
//!
//! # By-reference arguments (AAPCS64 §6.8.2 rule B.3)
//! A composite over 16 bytes that is not an HFA is copied by the caller and passed as the
//! copy's address ([`crate::abi::ArgPlan::by_reference`]). The copies of one call live in ONE
//! frame of [`crate::memory::linker_stack`], pushed per call with the size and alignment
//! computed at link time ([`CopyArea`]; no frame when the plan has none) and closed when the
//! call returns. Frames nest LIFO, so an upcall running on top of the call (and any downcall
//! it makes) pushes and pops its own frames above it; the BufferStack falls back to the heap
//! by itself when its block is full. The callee may write through the pointer: it writes the
//! copy, never the caller's segment.
//!
//! # Invariants (the unsafe story of this module)
//! - An [`Executor`] was built by [`Executor::link`] from the handle's own plan and argument
//!   kinds and never changes: its by-reference sizes follow `plan.args` in order.
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy is inside the
//!   frame pushed for the call, which outlives the call.

use std::ffi::c_void;

use super::{CallFrame, StackArgs};
use crate::abi::CallPlan;
use crate::backend::{ArgKind, ArgSource, CopyArea, RetKind};
use crate::error::Result;
use crate::memory::{linker_stack, SegmentAllocator};

/// What the interpreted path needs beyond the plan: the by-reference copies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Copies {
    /// The frame holding every copy of one call (`bytes == 0`: none, no frame pushed).
    area: CopyArea,
    /// `(size, align)` in bytes of each by-reference argument, in argument order.
    each: Box<[(usize, usize)]>,
}

/// How a handle's calls run. Chosen once by [`Executor::link`].
#[derive(Clone)]
pub(crate) enum Executor {
    /// The trampoline carries the plan out.
    Interpreted(Copies),
    // The compiled-stub variants (the entries `raw` and `values` of `backend/aarch64/stub.rs`,
    // with the same fast paths as the x86-64 executor) go here.
}

/// The stub tools' code: [`crate::Error::Unsupported`] (no AArch64 stub encoder yet).
///
/// # Errors
/// Always [`crate::Error::Unsupported`].
#[cfg(feature = "internals")]
pub(crate) fn stub_code(_plan: &CallPlan, _args: &[ArgKind], _capture: bool) -> Result<Vec<u8>> {
    Err(no_stubs())
}

/// As [`stub_code`].
///
/// # Errors
/// Always [`crate::Error::Unsupported`].
#[cfg(feature = "internals")]
pub(crate) fn compile_uncached(
    _plan: &CallPlan,
    _args: &[ArgKind],
    _capture: bool,
) -> Result<usize> {
    Err(no_stubs())
}

#[cfg(feature = "internals")]
fn no_stubs() -> crate::Error {
    crate::Error::Unsupported {
        type_name: "compiled downcall stub".into(),
        reason: "the AArch64 executor runs every call through its trampoline".into(),
    }
}

#[allow(clippy::missing_safety_doc)]
impl Executor {
    /// The executor of a handle with `plan` (argument kinds `args`): the trampoline, with the
    /// by-reference copy area computed here once.
    ///
    /// # Errors
    /// [`crate::Error::SizeOverflow`] when the by-reference copies together exceed `isize::MAX`
    /// bytes (no frame can hold them).
    pub(crate) fn link(
        plan: &CallPlan,
        args: &[ArgKind],
        _ret: RetKind,
        _capture: bool,
        _target: *const c_void,
    ) -> Result<Executor> {
        let each: Box<[(usize, usize)]> = plan
            .args
            .iter()
            .zip(args)
            .filter(|(ap, _)| ap.by_reference.is_some())
            .map(|(_, kind)| match *kind {
                ArgKind::Group { size, align } => (size, align),
                // B.3 applies to composites only; a scalar never has a by-reference plan.
                ArgKind::Scalar(k) => (k.byte_size(), k.byte_size()),
            })
            .collect();
        let area = each
            .iter()
            .try_fold(CopyArea::default(), |a, &(size, align)| a.with(size, align))
            .ok_or_else(CopyArea::too_large)?;
        Ok(Executor::Interpreted(Copies { area, each }))
    }

    // The compiled-stub variants replace these with their fast paths.
    super::super::absent::no_fast_paths!();

    /// The trampoline path: argument `i`'s source comes from `arg(i)` for `i` in
    /// `0..plan.args.len()` (its first error is returned before anything is called); a
    /// by-reference argument's bytes are copied into this call's linker-stack frame and the
    /// copy's address passed; x8 is set to `ret` for an in-memory result; calls; stores a
    /// register-returned struct at `ret` (x0/x1, or v0..v3 for an HFA, by the plan's return
    /// moves), and returns the scalar result's register bits (x0, or the low 64 bits of v0).
    ///
    /// # Errors
    /// The first error of `arg`; [`crate::Error::OutOfMemory`] if the copies' frame falls back
    /// to the heap and that allocation fails (nothing is called then).
    ///
    /// # Safety
    /// Each `ArgSource::Bytes` is readable for its layout's size; `ret` is writable (and
    /// aligned) for the return layout's size, or null for scalar/void returns; `capture` null
    /// or a capture buffer of a capture handle; the callee's contract is the caller's.
    #[inline(never)]
    pub(crate) unsafe fn interpret(
        &self,
        plan: &CallPlan,
        target: *const c_void,
        capture: *mut i32,
        ret: *mut u8,
        mut arg: impl FnMut(usize) -> Result<ArgSource>,
    ) -> Result<u64> {
        let Executor::Interpreted(copies) = self;
        let copy_frame = if copies.area.bytes > 0 {
            Some(linker_stack().push_frame(copies.area.bytes, copies.area.align)?)
        } else {
            None
        };
        let mut by_ref = copies.each.iter();
        let mut stack = StackArgs::new();
        let mut frame = CallFrame::new(target, plan, &mut stack);
        frame.errno = capture;
        for (i, ap) in plan.args.iter().enumerate() {
            let src = arg(i)?;
            if let Some(loc) = ap.by_reference {
                let (Some(&(size, align)), Some(f)) = (by_ref.next(), copy_frame.as_ref()) else {
                    unreachable!("link made one copy per by-reference argument, in one frame");
                };
                let copy = f.allocate_uninit(size, align)?;
                // SAFETY: the source is readable for the layout's size (caller) and `copy` is a
                // fresh region of that size in this call's frame: no overlap.
                src.with_bytes(|p| unsafe {
                    std::ptr::copy_nonoverlapping(p, copy.as_ptr(), size)
                });
                frame.store(&mut stack, loc, copy.as_ptr() as usize as u64);
            } else {
                // SAFETY: the source is 8 bytes covering any scalar, or the argument's bytes
                // (caller).
                src.with_bytes(|p| unsafe {
                    crate::backend::load_arg(ap, p, |to, v| frame.store(&mut stack, to, v))
                });
            }
        }
        if let Some(loc) = plan.hidden_return_pointer {
            frame.store(&mut stack, loc, ret as usize as u64);
        }
        // SAFETY: the frame follows the handle's validated plan; the copies live in
        // `copy_frame` until after the call; the caller vouches for the callee's contract.
        unsafe { frame.call() };
        drop(copy_frame);
        // SAFETY: `ret` has the return layout's size for a register-returned struct (caller).
        unsafe { crate::backend::store_return(plan, ret, |r| frame.returned(r)) };
        Ok(frame.returned(crate::backend::scalar_register(plan)))
    }
}
