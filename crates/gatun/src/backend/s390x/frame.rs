//! The s390x trampoline's call frame, filled from an s390x plan by Rust code.
//!
//! # Invariants (the unsafe story of this module)
//! - A [`CallFrame`] is built on the Rust stack by the invoking thread, passed by pointer to
//!   the trampoline and read back after it returns; nothing else sees it.
//! - The stack-argument area ([`StackArgs`], made by
//!   [`with_stack_args`](crate::backend::with_stack_args)) has exactly the plan's
//!   `stack_bytes / 8` slots, at most [`crate::backend::MAX_STACK_BYTES`] bytes (the linker
//!   refuses larger plans at link time), so every `Location::Stack(off)` of a handle's plan
//!   (whole 8-byte slots, s390x ELF ABI Supplement "Parameter Passing") indexes inside it. A
//!   slot's `u64` is stored in the target's (big-endian) order, so a value narrower than 8
//!   bytes is right-justified in it, as the ABI places it.
//! - Argument sources are read with exactly `ArgMove::size` bytes at `offset`
//!   ([`crate::backend::moves::load_move`]: the bytes as a big-endian integer); the callers in
//!   `linker::handle` guarantee the source regions are at least the layout's size.
//! - A register's 64-bit image is written whole: a general register gets the move's converted
//!   value (narrow integers extended to 64 bits as the plan's conversion says); a
//!   floating-point register gets a `double`'s bits (or an 8-byte one-float struct's image),
//!   or a short-format value's (a 4-byte move without `FloatToDouble`) in its high word
//!   ([`super::short_image`]).

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
    /// 8: r2..r6.
    pub gpr: [u64; 5],
    /// 48: f0, f2, f4, f6 (64-bit images: a `float` in the high word).
    pub fpr: [u64; 4],
    /// 80: first stack slot, set by `run` (slot k goes to `[r15 + 160 + 8k]` at the call).
    pub stack: *const u64,
    /// 88: number of stack slots.
    pub stack_slots: usize,
    /// 96: the capture segment's errno slot, or null for no capture.
    pub errno: *mut i32,
    /// 104: r2 after the call.
    pub ret_int: u64,
    /// 112: f0 after the call (its 64-bit image: a `float` in the high word).
    pub ret_fpr: u64,
}

impl Trampoline for CallFrame {
    /// A frame for a plan calling `target`, with `stack` (the plan's zeroed area) as its
    /// outgoing stack area.
    #[inline(always)]
    fn for_plan(target: *const c_void, _plan: &CallPlan, stack: &mut StackArgs<'_>) -> CallFrame {
        CallFrame {
            target,
            gpr: [0; 5],
            fpr: [0; 4],
            stack: std::ptr::null(),
            stack_slots: stack.slots(),
            errno: std::ptr::null_mut(),
            ret_int: 0,
            ret_fpr: 0,
        }
    }

    /// Stores the address in `Int(0..5)` (r2..r6) or the whole 8-byte stack slot at
    /// `Stack(off)`.
    #[inline(always)]
    fn store_address(&mut self, stack: &mut StackArgs<'_>, to: Location, address: u64) {
        self.store(stack, to, address);
    }

    /// Each move of argument `i`: its converted value, a short-format value in a
    /// floating-point register in the high word.
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
                Location::Vector(_) if super::is_short_fpr_move(m.size, m.conv) => {
                    super::short_image(v)
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
        unsafe { trampoline::gatun_s390x_call(self) }
    }

    /// `Int(0)` is r2, `Vector(0)` the 64-bit image of f0 (a `float` result in its high word:
    /// the executor, which knows the return kind, takes it from there).
    #[inline(always)]
    fn result(&self, r: Register) -> u64 {
        match r {
            Register::Int(_) => self.ret_int,
            Register::Vector(_) => self.ret_fpr,
        }
    }
}

impl CallFrame {
    /// Stores `value` at `to`: `Int(0..5)` is r2..r6, `Vector(0..4)` f0, f2, f4, f6 (its
    /// 64-bit image), `Stack(off)` the whole 8-byte slot at byte offset `off` of `stack`.
    #[inline(always)]
    fn store(&mut self, stack: &mut StackArgs<'_>, to: Location, value: u64) {
        match to {
            Location::Int(n) => self.gpr[n as usize] = value,
            Location::Vector(n) => self.fpr[n as usize] = value,
            Location::Stack(off) => stack.set(off, value),
        }
    }
}
