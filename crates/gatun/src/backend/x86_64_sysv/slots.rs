//! Calling a compiled stub's **slots entry** (see `super::stub`, `has_slots_entry`) from Rust:
//! the fast path of `linker::Arguments`.
//!
//! The slots entry is an ordinary SysV function of `(args, _, _, target)` (rdi, rcx): it loads
//! the argument registers from the 8-byte slots at `args` without any check and tail-jumps to
//! the target (or calls it from a leaf frame when there are stack arguments), so the target's
//! rax (integer or void return) or xmm0 (float return) comes back unchanged. A function of no
//! arguments, not variadic, with an integer or void return stands in for its own slots entry
//! (it reads neither parameter).
//!
//! # Invariants
//! - A `SlotsEntry` is the start of a slots entry emitted by `super::stub` inside a
//!   read-execute mapping that lives as long as the stub (kept alive by its owner), or a C
//!   function of no arguments as above.
//! - Calls are made from `asm!` blocks without `nostack` (the stack pointer is call-aligned and
//!   the red zone is free) and with `clobber_abi("C")`.

use std::ffi::c_void;
use std::ptr::NonNull;

/// The address of a slots entry. `Copy`; `Send + Sync`: a code address in an immutable mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotsEntry(NonNull<u8>);

// SAFETY: the entry is immutable machine code; calling it from any thread is what it is for.
unsafe impl Send for SlotsEntry {}
// SAFETY: as above.
unsafe impl Sync for SlotsEntry {}

impl SlotsEntry {
    /// Wraps the address of a slots entry.
    ///
    /// # Safety
    /// `code` is the start of a slots entry emitted by `super::stub`, or a C function of no
    /// arguments with an integer or void return (not variadic), mapped read-execute for as long
    /// as this value is called.
    pub(crate) unsafe fn new(code: NonNull<u8>) -> Self {
        SlotsEntry(code)
    }

    /// Calls the entry with the slots at `slots` and `target`; returns rax (an integer or void
    /// return's register).
    ///
    /// # Safety
    /// `slots` points to one 8-byte slot per argument of the stub's plan, each holding a valid
    /// value of the argument's kind in its low bytes; the stub returns an integer or nothing;
    /// the target's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call_int(self, slots: *const u64, target: *const c_void) -> u64 {
        let rax: u64;
        // SAFETY: see the module invariants: a SysV function reading rdi and rcx that clobbers
        // only what the C ABI lets a callee clobber; it may read and write memory as the
        // target's contract allows (no `nomem`); the stack is call-aligned (no `nostack`).
        unsafe {
            std::arch::asm!(
                "call {entry}",
                entry = in(reg) self.0.as_ptr(),
                in("rdi") slots,
                in("rcx") target,
                lateout("rax") rax,
                clobber_abi("C"),
            );
        }
        rax
    }

    /// As [`SlotsEntry::call_int`] for a float return: xmm0's low 64 bits.
    ///
    /// # Safety
    /// As [`SlotsEntry::call_int`], for a stub whose return is a float.
    #[inline(always)]
    pub(crate) unsafe fn call_float(self, slots: *const u64, target: *const c_void) -> u64 {
        let xmm0: f64;
        // SAFETY: as in `call_int`; the result is in xmm0.
        unsafe {
            std::arch::asm!(
                "call {entry}",
                entry = in(reg) self.0.as_ptr(),
                in("rdi") slots,
                in("rcx") target,
                lateout("xmm0") xmm0,
                clobber_abi("C"),
            );
        }
        xmm0.to_bits()
    }
}
