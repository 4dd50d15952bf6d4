//! The Win64 trampoline's call frame, filled from a plan by Rust code.
//!
//! # Invariants (the unsafe story of this module)
//! - A [`CallFrame`] is built on the Rust stack by the invoking thread, passed by pointer to
//!   the trampoline and read back after it returns; nothing else sees it.
//! - The stack-argument area ([`StackArgs`], made by
//!   [`with_stack_args`](crate::backend::with_stack_args)) has exactly the plan's
//!   `stack_bytes / 8` slots (32 bytes of shadow space included, so at least 4), at most
//!   [`crate::backend::MAX_STACK_BYTES`] bytes (the linker refuses larger plans at link time),
//!   so every `Location::Stack(off)` of a handle's plan indexes inside it. Slots 0..4 are the shadow space: zeroed, never written by a move.
//! - Argument sources are read with exactly `ArgMove::size` bytes at `offset`
//!   ([`crate::backend::moves::load_move`]); the callers in `linker::handle` guarantee the source
//!   regions are at least the layout's size.
//! - `capture` is null or a capture buffer of 12 bytes (`GetLastError`, `WSAGetLastError`,
//!   `errno`, 4-byte aligned), and then `errno` is this thread's errno address.

use std::ffi::c_void;

use super::trampoline;
use crate::abi::{CallPlan, Location, Register};
use crate::backend::executor::Trampoline;
use crate::backend::StackArgs;

/// The call frame the trampoline consumes (`#[repr(C)]`: the assembly uses these offsets,
/// asserted in `trampoline`; 120 bytes).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CallFrame {
    /// 0: the function to call.
    pub target: *const c_void,
    /// 8: rcx, rdx, r8, r9 (argument slots 0..4).
    pub gpr: [u64; 4],
    /// 40: the low 64 bits of xmm0..xmm3 (argument slots 0..4).
    pub xmm: [u64; 4],
    /// 72: first stack slot, set by `call` (slot k goes to `[rsp + 8k]` at the call; slots
    /// 0..4 are the shadow space).
    pub stack: *const u64,
    /// 80: number of 8-byte stack slots, shadow space included (`stack_bytes / 8`, at least 4).
    pub stack_slots: usize,
    /// 88: the capture buffer (`[GetLastError, WSAGetLastError, errno]` as `i32`s), or null
    /// for no capture.
    pub capture: *mut i32,
    /// 96: this thread's errno address when `capture` is not null.
    pub errno: *mut i32,
    /// 104: rax after the call.
    pub rax: u64,
    /// 112: the low 64 bits of xmm0 after the call.
    pub xmm0: u64,
}

impl CallFrame {
    /// A frame for `plan` calling `target`, with `stack` (the plan's zeroed area, the four
    /// shadow slots included) as its outgoing stack area.
    ///
    /// # Panics
    /// If `stack` has fewer than the four shadow slots (a Win64 plan's `stack_bytes` is at
    /// least 32, so an area made for the plan never has).
    #[inline(always)]
    pub fn new(target: *const c_void, plan: &CallPlan, stack: &mut StackArgs<'_>) -> CallFrame {
        debug_assert_eq!(stack.slots(), plan.stack_bytes as usize / 8);
        assert!(
            stack.slots() >= 4,
            "a Win64 stack area without its shadow space"
        );
        CallFrame {
            target,
            gpr: [0; 4],
            xmm: [0; 4],
            stack: std::ptr::null(),
            stack_slots: stack.slots(),
            capture: std::ptr::null_mut(),
            errno: std::ptr::null_mut(),
            rax: 0,
            xmm0: 0,
        }
    }

    /// Captures into `buffer` (null: no capture): the trampoline restores the three states
    /// from it right before the call and saves them into it right after.
    #[inline(always)]
    pub fn capture_into(&mut self, buffer: *mut i32) {
        self.capture = buffer;
        if !buffer.is_null() {
            self.errno = crate::os::thread_errno();
        }
    }

    /// Stores `value` at `to`: `Int(0..4)` is rcx, rdx, r8, r9, `Vector(0..4)` xmm0..xmm3 (its
    /// low 64 bits), `Stack(off)` the whole 8-byte slot at byte offset `off` (32 or more).
    #[inline(always)]
    pub fn store(&mut self, stack: &mut StackArgs<'_>, to: Location, value: u64) {
        match to {
            Location::Int(n) => self.gpr[n as usize] = value,
            Location::Vector(n) => self.xmm[n as usize] = value,
            Location::Stack(off) => stack.set(off, value),
        }
    }

    /// The 64-bit value of a return register after the call: `Int(0)` is rax, `Vector(0)` the
    /// low 64 bits of xmm0 (the only return registers of a Win64 plan).
    #[inline(always)]
    pub fn returned(&self, r: Register) -> u64 {
        match r {
            Register::Int(_) => self.rax,
            Register::Vector(_) => self.xmm0,
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
        unsafe { trampoline::gatun_win64_call(self) }
    }
}

impl Trampoline for CallFrame {
    #[inline(always)]
    fn for_plan(target: *const c_void, plan: &CallPlan, stack: &mut StackArgs<'_>) -> CallFrame {
        CallFrame::new(target, plan, stack)
    }

    #[inline(always)]
    fn store_address(&mut self, stack: &mut StackArgs<'_>, to: Location, address: u64) {
        self.store(stack, to, address);
    }

    /// Each move of argument `i`, stack moves writing their whole 8-byte slot.
    #[inline(always)]
    unsafe fn store_arg(
        &mut self,
        stack: &mut StackArgs<'_>,
        plan: &CallPlan,
        i: usize,
        src: *const u8,
    ) {
        // SAFETY: forwarded to the caller.
        unsafe { crate::backend::load_arg(&plan.args[i], src, |to, v| self.store(stack, to, v)) }
    }

    /// `buffer` is the 12-byte capture buffer (null: no capture); see
    /// [`CallFrame::capture_into`].
    #[inline(always)]
    fn capture_into(&mut self, buffer: *mut i32) {
        CallFrame::capture_into(self, buffer);
    }

    #[inline(always)]
    unsafe fn run(&mut self, stack: &mut StackArgs<'_>) {
        // SAFETY: forwarded to the caller.
        unsafe { self.call(stack) }
    }

    #[inline(always)]
    fn result(&self, r: Register) -> u64 {
        self.returned(r)
    }
}
