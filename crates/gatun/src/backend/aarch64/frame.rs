//! The AArch64 trampoline's call frame, filled from a plan (Linux or Apple flavour) by Rust
//! code.
//!
//! # Invariants (the unsafe story of this module)
//! - A [`CallFrame`] is built on the Rust stack by the invoking thread, passed by pointer to
//!   the trampoline and read back after it returns; nothing else sees it.
//! - The stack-argument area ([`StackArgs`], made by
//!   [`with_stack_args`](crate::backend::with_stack_args)) has exactly the plan's
//!   `stack_bytes / 8` slots, at most [`crate::backend::MAX_STACK_BYTES`] bytes (the linker
//!   refuses larger plans at link time), so every `Location::Stack(off)` of a handle's plan
//!   (Linux: whole 8-byte slots, AAPCS64 §6.8.2 C.12–C.15; Apple: named arguments packed at
//!   their natural alignment, each written with exactly
//!   [`CallPlan::stack_write_bytes`] bytes) indexes inside it.
//! - Argument sources are read with exactly `ArgMove::size` bytes at `offset`
//!   ([`crate::backend::moves::load_move`]); the callers in `linker::handle` guarantee the source
//!   regions are at least the layout's size.
//! - A vector move's value is stored zero-extended to 64 bits and loaded with `ldr dN`: a
//!   4-byte move therefore leaves `sN` holding the float and the rest of `vN` zero.

use std::ffi::c_void;

use super::trampoline;
use crate::abi::{CallPlan, Location, Register};
use crate::backend::executor::Trampoline;
use crate::backend::StackArgs;

/// The call frame the trampoline consumes (`#[repr(C)]`: the assembly uses these offsets).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CallFrame {
    /// 0: the function to call.
    pub target: *const c_void,
    /// 8: x0..x7, then x8 (the indirect-result register, AAPCS64 §6.9).
    pub gpr: [u64; 9],
    /// 80: the low 64 bits of v0..v7 (loaded as d0..d7).
    pub vector: [u64; 8],
    /// 144: first stack slot, set by `call` (slot k goes to `[sp + 8k]` at the call).
    pub stack: *const u64,
    /// 152: number of stack slots.
    pub stack_slots: usize,
    /// 160: the capture segment's errno slot, or null for no capture.
    pub errno: *mut i32,
    /// 168: x0, x1 after the call.
    pub ret_int: [u64; 2],
    /// 184: the low 64 bits of v0..v3 after the call (d0..d3).
    pub ret_vector: [u64; 4],
}

impl Trampoline for CallFrame {
    /// A frame for `plan` calling `target`, with `stack` (the plan's zeroed area) as its
    /// outgoing stack area.
    #[inline(always)]
    fn for_plan(target: *const c_void, _plan: &CallPlan, stack: &mut StackArgs<'_>) -> CallFrame {
        CallFrame {
            target,
            gpr: [0; 9],
            vector: [0; 8],
            stack: std::ptr::null(),
            stack_slots: stack.slots(),
            errno: std::ptr::null_mut(),
            ret_int: [0; 2],
            ret_vector: [0; 4],
        }
    }

    /// Stores the address in `Int(0..=8)` (x0..x8) or the whole 8-byte stack slot at `Stack(off)`.
    #[inline(always)]
    fn store_address(&mut self, stack: &mut StackArgs<'_>, to: Location, address: u64) {
        self.store(stack, to, address, 8);
    }

    /// Each move of argument `i`, its stack moves written with
    /// [`CallPlan::stack_write_bytes`] bytes (fewer than 8 for a named argument of a packed
    /// Apple plan, so that the neighbouring packed arguments are not overwritten).
    #[inline(always)]
    unsafe fn store_arg(
        &mut self,
        stack: &mut StackArgs<'_>,
        plan: &CallPlan,
        i: usize,
        src: *const u8,
    ) {
        // SAFETY: forwarded to the caller.
        unsafe {
            crate::backend::moves::load_arg_sized(plan, i, src, |to, v, bytes| {
                self.store(stack, to, v, bytes)
            })
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
        unsafe { trampoline::gatun_aapcs64_call(self) }
    }

    /// `Int(0)`/`Int(1)` are x0/x1, `Vector(0..4)` the low 64 bits of v0..v3.
    #[inline(always)]
    fn result(&self, r: Register) -> u64 {
        match r {
            Register::Int(n) => self.ret_int[n as usize],
            Register::Vector(n) => self.ret_vector[n as usize],
        }
    }
}

impl CallFrame {
    /// Stores `value` at `to`: `Int(0..=8)` is x0..x8, `Vector(0..8)` v0..v7 (its low 64 bits),
    /// `Stack(off)` the low `bytes` bytes of `value` at byte offset `off` of `stack` (8 — the
    /// whole slot — for every stack move of a Linux plan and for pointers;
    /// [`CallPlan::stack_write_bytes`] for an argument move of a packed Apple plan). `bytes` is
    /// ignored for registers.
    #[inline(always)]
    fn store(&mut self, stack: &mut StackArgs<'_>, to: Location, value: u64, bytes: usize) {
        match to {
            Location::Int(n) => self.gpr[n as usize] = value,
            Location::Vector(n) => self.vector[n as usize] = value,
            Location::Stack(off) => stack.set_bytes(off, value, bytes),
        }
    }
}
