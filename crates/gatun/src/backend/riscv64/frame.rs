//! The RISC-V 64 trampoline's call frame, filled from an LP64D plan by Rust code.
//!
//! # Invariants (the unsafe story of this module)
//! - A [`CallFrame`] is built on the Rust stack by the invoking thread, passed by pointer to
//!   the trampoline and read back after it returns; nothing else sees it.
//! - The stack-argument area ([`StackArgs`], made by
//!   [`with_stack_args`](crate::backend::with_stack_args)) has exactly the plan's
//!   `stack_bytes / 8` slots, at most [`crate::backend::MAX_STACK_BYTES`] bytes (the linker
//!   refuses larger plans at link time), so every `Location::Stack(off)` of a handle's plan
//!   (whole 8-byte slots, RISC-V psABI "Integer Calling Convention") indexes inside it.
//! - Argument sources are read with exactly `ArgMove::size` bytes at `offset`
//!   ([`crate::backend::moves::load_move`]); the callers in `linker::handle` guarantee the
//!   source regions are at least the layout's size.
//! - A register's 64-bit image is written whole: an integer register gets the move's
//!   converted value (narrow integers extended as the plan's conversion says, an `unsigned
//!   int` sign-extended by its `SignExtend` move); a floating-point register gets a `double`'s
//!   bits, or a `float`'s (a 4-byte move without `FloatToDouble`) NaN-boxed.

use std::ffi::c_void;

use super::trampoline;
use crate::abi::{CallPlan, Conversion, Location, Register};
use crate::backend::executor::Trampoline;
use crate::backend::StackArgs;

/// The call frame the trampoline consumes (`#[repr(C)]`: the assembly uses these offsets).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CallFrame {
    /// 0: the function to call.
    pub target: *const c_void,
    /// 8: a0..a7.
    pub gpr: [u64; 8],
    /// 72: fa0..fa7 (64-bit images: a `float` NaN-boxed).
    pub fpr: [u64; 8],
    /// 136: first stack slot, set by `run` (slot k goes to `[sp + 8k]` at the call).
    pub stack: *const u64,
    /// 144: number of stack slots.
    pub stack_slots: usize,
    /// 152: the capture segment's errno slot, or null for no capture.
    pub errno: *mut i32,
    /// 160: a0, a1 after the call.
    pub ret_int: [u64; 2],
    /// 176: fa0, fa1 after the call (64-bit images).
    pub ret_fpr: [u64; 2],
}

impl Trampoline for CallFrame {
    /// A frame for a plan calling `target`, with `stack` (the plan's zeroed area) as its
    /// outgoing stack area.
    #[inline(always)]
    fn for_plan(target: *const c_void, _plan: &CallPlan, stack: &mut StackArgs<'_>) -> CallFrame {
        CallFrame {
            target,
            gpr: [0; 8],
            fpr: [0; 8],
            stack: std::ptr::null(),
            stack_slots: stack.slots(),
            errno: std::ptr::null_mut(),
            ret_int: [0; 2],
            ret_fpr: [0; 2],
        }
    }

    /// Stores the address in `Int(0..8)` (a0..a7) or the whole 8-byte stack slot at
    /// `Stack(off)`.
    #[inline(always)]
    fn store_address(&mut self, stack: &mut StackArgs<'_>, to: Location, address: u64) {
        self.store(stack, to, address);
    }

    /// Each move of argument `i`: its converted value, a `float` in a floating-point register
    /// NaN-boxed.
    #[inline(always)]
    unsafe fn store_arg(
        &mut self,
        stack: &mut StackArgs<'_>,
        plan: &CallPlan,
        i: usize,
        src: *const u8,
    ) {
        for m in &plan.args[i].moves {
            // SAFETY: `src` is readable for every move's bytes (caller).
            let v = unsafe { crate::backend::moves::load_move(src, m) };
            let v = match m.to {
                Location::Vector(_) if m.size == 4 && m.conv != Conversion::FloatToDouble => {
                    super::nan_box(v)
                }
                _ => v,
            };
            self.store(stack, m.to, v);
        }
    }

    /// `buffer` is the capture segment's errno slot (null: no capture).
    #[inline(always)]
    fn capture_into(&mut self, buffer: *mut i32) {
        self.errno = buffer;
    }

    /// Calls the target with `stack` as its outgoing stack area (the one given to
    /// [`Trampoline::for_plan`] and written by the stores).
    ///
    /// # Safety
    /// The frame must describe a valid call of `target` (see the module invariants) and the
    /// target's own contract must hold.
    #[inline(always)]
    unsafe fn run(&mut self, stack: &mut StackArgs<'_>) {
        self.stack = stack.base();
        // SAFETY: forwarded to the caller; `stack` is the area the frame's stack moves wrote.
        unsafe { trampoline::gatun_lp64d_call(self) }
    }

    /// `Int(0)`/`Int(1)` are a0/a1, `Vector(0)`/`Vector(1)` the 64-bit images of fa0/fa1.
    #[inline(always)]
    fn result(&self, r: Register) -> u64 {
        match r {
            Register::Int(n) => self.ret_int[n as usize],
            Register::Vector(n) => self.ret_fpr[n as usize],
        }
    }
}

impl CallFrame {
    /// Stores `value` at `to`: `Int(0..8)` is a0..a7, `Vector(0..8)` fa0..fa7 (its 64-bit
    /// image), `Stack(off)` the whole 8-byte slot at byte offset `off` of `stack`.
    #[inline(always)]
    fn store(&mut self, stack: &mut StackArgs<'_>, to: Location, value: u64) {
        match to {
            Location::Int(n) => self.gpr[n as usize] = value,
            Location::Vector(n) => self.fpr[n as usize] = value,
            Location::Stack(off) => stack.set(off, value),
        }
    }
}
