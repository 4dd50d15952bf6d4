//! The PPC64LE trampoline's call frame, filled from an ELFv2 plan by Rust code.
//!
//! # Invariants (the unsafe story of this module)
//! - A [`CallFrame`] is built on the Rust stack by the invoking thread, passed by pointer to
//!   the trampoline and read back after it returns; nothing else sees it.
//! - The stack-argument area ([`StackArgs`], made by
//!   [`with_stack_args`](crate::backend::with_stack_args)) has exactly the plan's
//!   `stack_bytes / 8` doublewords of the parameter save area, at most
//!   [`crate::backend::MAX_STACK_BYTES`] bytes (the linker refuses larger plans at link time),
//!   so every `Location::Stack(off)` of a handle's plan (a whole doubleword at offset `off` of
//!   the parameter save area, ELFv2 ABI 2.2.3 "Parameter Passing in Memory") indexes inside it.
//! - Argument sources are read with exactly `ArgMove::size` bytes at `offset`
//!   ([`crate::backend::moves::load_move`]); the callers in `linker::handle` guarantee the
//!   source regions are at least the layout's size.
//! - A register's 64-bit image is written whole: a GPR gets the move's converted value
//!   (narrow integers extended as the plan's conversion says); a floating-point register gets
//!   a `double`'s bits, or a `float`'s (a 4-byte move without `FloatToDouble`) converted to
//!   double format ([`super::single_to_double`]).

use std::ffi::c_void;

use super::trampoline;
use crate::abi::{CallPlan, Conversion, Location, Register, ReturnPlan};
use crate::backend::executor::Trampoline;
use crate::backend::StackArgs;

/// The call frame the trampoline consumes (`#[repr(C)]`: the assembly uses the offsets up to
/// `ret_fpr`; `ret_single` is read by Rust only).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CallFrame {
    /// 0: the function to call.
    pub target: *const c_void,
    /// 8: r3..r10.
    pub gpr: [u64; 8],
    /// 72: f1..f13 (64-bit images: a `float` in double format).
    pub fpr: [u64; 13],
    /// 176: first doubleword of the parameter save area, set by `run` (doubleword k goes to
    /// `32 + 8k(r1)` at the call).
    pub stack: *const u64,
    /// 184: number of doublewords.
    pub stack_slots: usize,
    /// 192: the capture segment's errno slot, or null for no capture.
    pub errno: *mut i32,
    /// 200: the thread's errno address (a capture call only).
    pub errno_location: *mut i32,
    /// 208: r3, r4 after the call.
    pub ret_int: [u64; 2],
    /// 224: f1..f8 after the call (64-bit images).
    pub ret_fpr: [u64; 8],
    /// 288: bit n set: f(n+1) holds a `float` member of a returned homogeneous aggregate (read
    /// back as a single).
    pub ret_single: u8,
}

impl Trampoline for CallFrame {
    /// A frame for a plan calling `target`, with `stack` (the plan's zeroed area) as its
    /// outgoing parameter save area.
    #[inline(always)]
    fn for_plan(target: *const c_void, plan: &CallPlan, stack: &mut StackArgs<'_>) -> CallFrame {
        let mut ret_single = 0u8;
        if let ReturnPlan::Registers(moves) = &plan.ret {
            for m in moves {
                if let (Register::Vector(n), 4) = (m.from, m.size) {
                    ret_single |= 1 << (n & 7);
                }
            }
        }
        CallFrame {
            target,
            gpr: [0; 8],
            fpr: [0; 13],
            stack: std::ptr::null(),
            stack_slots: stack.slots(),
            errno: std::ptr::null_mut(),
            errno_location: std::ptr::null_mut(),
            ret_int: [0; 2],
            ret_fpr: [0; 8],
            ret_single,
        }
    }

    /// Stores the address in `Int(0..8)` (r3..r10) or the whole doubleword at `Stack(off)`.
    #[inline(always)]
    fn store_address(&mut self, stack: &mut StackArgs<'_>, to: Location, address: u64) {
        self.store(stack, to, address);
    }

    /// Each move of argument `i`: its converted value, a `float` in a floating-point register
    /// in double format.
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
                    super::single_to_double(v)
                }
                _ => v,
            };
            self.store(stack, m.to, v);
        }
    }

    /// `buffer` is the capture segment's errno slot (null: no capture); the thread's errno
    /// address is taken here, before any argument register is loaded.
    #[inline(always)]
    fn capture_into(&mut self, buffer: *mut i32) {
        self.errno = buffer;
        self.errno_location = crate::backend::executor::errno_for(buffer);
    }

    /// Calls the target with `stack` as its parameter save area (the one given to
    /// [`Trampoline::for_plan`] and written by the stores).
    ///
    /// # Safety
    /// The frame must describe a valid call of `target` (see the module invariants) and the
    /// target's own contract must hold.
    #[inline(always)]
    unsafe fn run(&mut self, stack: &mut StackArgs<'_>) {
        self.stack = stack.base();
        // SAFETY: forwarded to the caller; `stack` is the area the frame's stack moves wrote.
        unsafe { trampoline::gatun_elfv2_call(self) }
    }

    /// `Int(0)`/`Int(1)` are r3/r4, `Vector(n)` the 64-bit image of f(n+1) — a `float` member
    /// of a returned aggregate as its single bits. (A scalar `float` result is converted by
    /// the executor, which knows the return kind.)
    #[inline(always)]
    fn result(&self, r: Register) -> u64 {
        match r {
            Register::Int(n) => self.ret_int[n as usize & 1],
            Register::Vector(n) => {
                let bits = self.ret_fpr[n as usize & 7];
                if self.ret_single & (1 << (n & 7)) != 0 {
                    super::double_to_single(bits)
                } else {
                    bits
                }
            }
        }
    }
}

impl CallFrame {
    /// Stores `value` at `to`: `Int(0..8)` is r3..r10, `Vector(0..13)` f1..f13 (its 64-bit
    /// image), `Stack(off)` the whole doubleword at byte offset `off` of `stack`.
    #[inline(always)]
    fn store(&mut self, stack: &mut StackArgs<'_>, to: Location, value: u64) {
        match to {
            Location::Int(n) => self.gpr[n as usize] = value,
            Location::Vector(n) => self.fpr[n as usize] = value,
            Location::Stack(off) => stack.set(off, value),
        }
    }
}
