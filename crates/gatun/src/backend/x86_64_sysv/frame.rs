//! The trampoline's call frame, filled from a plan by Rust code.
//!
//! # Invariants (the unsafe story of this module)
//! - A [`CallFrame`] is built on the Rust stack by the invoking thread, passed by pointer to
//!   the trampoline and read back after it returns; nothing else sees it.
//! - The stack-argument area ([`StackArgs`], made by
//!   [`with_stack_args`](crate::backend::with_stack_args)) has exactly the plan's
//!   `stack_bytes / 8` slots, at most [`crate::backend::MAX_STACK_BYTES`] bytes (the linker
//!   refuses larger plans at link time), so every `Location::Stack(off)` of a handle's plan
//!   indexes inside it.
//! - Argument sources are read with exactly `ArgMove::size` bytes at `offset` (never past the
//!   argument); return moves write exactly `ReturnMove::size` bytes at `offset`. The callers in
//!   `linker::handle` guarantee the source/destination regions are at least the layout's size.

use std::ffi::c_void;

use super::trampoline;
use crate::abi::{CallPlan, Location, Register};
use crate::backend::StackArgs;

/// The call frame the trampoline consumes (`#[repr(C)]`: the assembly uses these offsets).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CallFrame {
    /// 0: the function to call.
    pub target: *const c_void,
    /// 8: rdi, rsi, rdx, rcx, r8, r9.
    pub gpr: [u64; 6],
    /// 56: low 64 bits of xmm0..xmm7.
    pub xmm: [u64; 8],
    /// 120: first stack slot, set by `call` (slot k goes to `[rsp + 8k]` at the call).
    pub stack: *const u64,
    /// 128: number of stack slots.
    pub stack_slots: usize,
    /// 136: value of rax (%al = vector register count for variadic calls).
    pub al: u64,
    /// 144: the capture segment's errno slot, or null for no capture.
    pub errno: *mut i32,
    /// 152: rax after the call.
    pub rax: u64,
    /// 160: rdx after the call.
    pub rdx: u64,
    /// 168: low 64 bits of xmm0 after the call.
    pub xmm0: u64,
    /// 176: low 64 bits of xmm1 after the call.
    pub xmm1: u64,
}

impl CallFrame {
    /// A frame for `plan` calling `target`, with `stack` (the plan's zeroed area) as its
    /// outgoing stack area and `%al` set for variadic calls.
    #[inline(always)]
    pub fn new(target: *const c_void, plan: &CallPlan, stack: &mut StackArgs<'_>) -> CallFrame {
        CallFrame {
            target,
            gpr: [0; 6],
            xmm: [0; 8],
            stack: std::ptr::null(),
            stack_slots: stack.slots(),
            al: if plan.is_variadic() {
                plan.vector_registers as u64
            } else {
                0
            },
            errno: std::ptr::null_mut(),
            rax: 0,
            rdx: 0,
            xmm0: 0,
            xmm1: 0,
        }
    }

    /// Stores `value` at `to`.
    #[inline(always)]
    pub fn store(&mut self, stack: &mut StackArgs<'_>, to: Location, value: u64) {
        match to {
            Location::Int(n) => self.gpr[n as usize] = value,
            Location::Vector(n) => self.xmm[n as usize] = value,
            Location::Stack(off) => stack.set(off, value),
        }
    }

    /// The 64-bit value of a return register after the call.
    #[inline(always)]
    pub fn returned(&self, r: Register) -> u64 {
        match r {
            Register::Int(0) => self.rax,
            Register::Int(_) => self.rdx,
            Register::Vector(0) => self.xmm0,
            Register::Vector(_) => self.xmm1,
        }
    }

    /// Calls the target with `stack` as its outgoing stack area (the one given to
    /// [`CallFrame::new`] and written by [`CallFrame::store`]).
    ///
    /// # Safety
    /// The frame must describe a valid call of `target` (see the module invariants) and the
    /// target's own contract must hold.
    #[inline(always)]
    pub unsafe fn call(&mut self, stack: &mut StackArgs<'_>) {
        self.stack = stack.base();
        // SAFETY: forwarded to the caller; `stack` is the area the frame's stack moves wrote.
        unsafe { trampoline::gatun_sysv_x64_call(self) }
    }
}
