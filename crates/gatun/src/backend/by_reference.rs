//! The interpreted call of the ABIs with by-reference arguments (AAPCS64 composites over 16
//! bytes that are not HFAs, Win64 aggregates not of 1, 2, 4 or 8 bytes), the same on each:
//! [`interpret`] pushes the linker-stack frame of one call's copies, places every argument (a
//! by-reference one as its copy's address) into the backend's [`Trampoline`] frame, runs it and
//! reads the result; [`kinds_mismatch`] is the error of a plan that does not match the linked
//! copies.
//!
//! # Invariants
//! Each copy is a fresh allocation of the call's frame of exactly the argument's size, filled
//! from a source the caller vouches for; the frame outlives the call (the caller keeps it).

// Used by the executors with by-reference copies (AArch64, Win64) only.
#![cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "windows", not(miri)),
        all(
            target_arch = "aarch64",
            any(target_os = "linux", target_vendor = "apple"),
            not(miri)
        )
    )),
    allow(dead_code)
)]

use std::ffi::c_void;

use crate::abi::{CallPlan, Location, Register};
use crate::backend::{ArgSource, CopyArea, StackArgs};
use crate::memory::Frame;

/// The internal error of a plan whose arguments do not match the kinds (or by-reference copies)
/// an executor was linked with: the handle layer never produces one.
pub(crate) fn kinds_mismatch(planned: usize, linked: usize) -> crate::Error {
    crate::Error::InvalidDescriptor {
        descriptor: format!("with {planned} planned arguments"),
        reason: format!(
            "internal error: the executor was linked with {linked} argument kinds or \
             by-reference copies that do not match the plan"
        ),
    }
}

/// A backend's trampoline call frame, as [`interpret`] fills and runs it (with the outgoing
/// stack area `stack` beside it).
pub(crate) trait Trampoline {
    /// A frame calling `target` by `plan`, with the plan's slots of `stack` zeroed.
    fn for_plan(target: *const c_void, plan: &CallPlan, stack: &mut StackArgs) -> Self;

    /// Stores an 8-byte address (a by-reference copy's, or the hidden return pointer) at `to`.
    fn store_address(&mut self, stack: &mut StackArgs, to: Location, address: u64);

    /// Carries out the moves of argument `i` of `plan` from the argument's bytes at `src`.
    ///
    /// # Safety
    /// `src` is readable for every move's `offset + size` bytes (the argument layout's size).
    unsafe fn store_arg(
        &mut self,
        stack: &mut StackArgs,
        plan: &CallPlan,
        i: usize,
        src: *const u8,
    );

    /// Captures into `buffer` (null: no capture): the backend's call state is restored from it
    /// right before the call and saved into it right after.
    fn capture_into(&mut self, buffer: *mut i32);

    /// Calls the target.
    ///
    /// # Safety
    /// The frame and `stack` describe a valid call of the target by the plan (the backend's
    /// frame invariants); the target's own contract holds.
    unsafe fn run(&mut self, stack: &mut StackArgs);

    /// The 64-bit value of the return register `r` after the call.
    fn result(&self, r: Register) -> u64;
}

/// One interpreted call of `target` by `plan` through the trampoline frame `T`. `arg(i)` gives
/// argument `i`'s source, for every planned argument, before anything is called (its first
/// error is returned). A by-reference argument (`ArgPlan::by_reference`) takes the next
/// `(size, align)` of `copies` (bytes, in argument order; `area` holds them all), is copied
/// into this call's linker-stack frame and passed as the copy's address; the hidden return
/// pointer, if the plan has one, is `ret`; `capture` is handed to the frame. After the call
/// the frame is popped, a register-returned struct is written to `ret`, and the scalar result
/// register's bits are returned.
///
/// # Errors
/// The first error of `arg`; [`crate::Error::OutOfMemory`] if the copies' frame falls back to
/// the heap and that allocation fails; [`kinds_mismatch`] (an internal error) when the plan has
/// more by-reference arguments than `copies`, or has one and `area` is empty. Nothing is called
/// on an error.
///
/// # Safety
/// Each `ArgSource::Bytes` is readable for its layout's size; `ret` is writable (and aligned)
/// for the return layout's size, or null for scalar/void returns; `capture` is what `T` expects
/// (null or the capture buffer of a capture handle); the callee's contract is the caller's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn interpret<T: Trampoline>(
    plan: &CallPlan,
    target: *const c_void,
    capture: *mut i32,
    ret: *mut u8,
    area: CopyArea,
    mut copies: impl ExactSizeIterator<Item = (usize, usize)>,
    mut arg: impl FnMut(usize) -> crate::Result<ArgSource>,
) -> crate::Result<u64> {
    use crate::memory::SegmentAllocator as _;
    let copy_frame = push_copies(area)?;
    let linked = copies.len();
    let mut stack = StackArgs::new();
    let mut frame = T::for_plan(target, plan, &mut stack);
    for (i, ap) in plan.args.iter().enumerate() {
        let src = arg(i)?;
        if let Some(loc) = ap.by_reference {
            // One copy per by-reference argument of the linked plan, in one frame; a plan other
            // than the linked one is reported, never trusted.
            let (Some((size, align)), Some(f)) = (copies.next(), copy_frame.as_ref()) else {
                return Err(kinds_mismatch(plan.args.len(), linked));
            };
            let copy = f.allocate_uninit(size, align)?;
            // SAFETY: the source is readable for the layout's size (caller) and `copy` is a
            // fresh region of that size in the call's frame: no overlap.
            src.with_bytes(|p| unsafe { std::ptr::copy_nonoverlapping(p, copy.as_ptr(), size) });
            frame.store_address(&mut stack, loc, copy.as_ptr() as usize as u64);
        } else {
            // SAFETY: the source is 8 bytes covering any scalar, or the argument's bytes
            // (caller).
            src.with_bytes(|p| unsafe { frame.store_arg(&mut stack, plan, i, p) });
        }
    }
    if let Some(loc) = plan.hidden_return_pointer {
        frame.store_address(&mut stack, loc, ret as usize as u64);
    }
    frame.capture_into(capture);
    // SAFETY: the frame follows the handle's validated plan; the copies live in `copy_frame`
    // until after the call; the caller vouches for `capture` and the callee's contract.
    unsafe { frame.run(&mut stack) };
    drop(copy_frame);
    // SAFETY: `ret` has the return layout's size for a register-returned struct (caller).
    unsafe { crate::backend::store_return(plan, ret, |r| frame.result(r)) };
    Ok(frame.result(crate::backend::scalar_register(plan)))
}

/// The linker-stack frame of one call's by-reference copies, pushed for `area` (`None` when
/// `area.bytes` is 0: no copies, no frame); the caller keeps it until the call has returned.
///
/// # Errors
/// As [`crate::memory::BufferStack::push_frame`] ([`crate::Error::OutOfMemory`] when the frame
/// falls back to the heap and that allocation fails).
fn push_copies(area: CopyArea) -> crate::Result<Option<Frame<'static>>> {
    if area.bytes == 0 {
        return Ok(None);
    }
    crate::memory::linker_stack()
        .push_frame(area.bytes, area.align)
        .map(Some)
}
