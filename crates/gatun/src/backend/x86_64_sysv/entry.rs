//! Calling a compiled stub's **checked** entries (the value entry and the image entry, see
//! `super::stub`) from Rust.
//!
//! A checked entry rejects an argument by returning at once with r12 set to all ones
//! (`or r12, -1; ret`), before anything else happened. r12 is callee-saved in the SysV AMD64
//! ABI (§3.2.1), so on every other path — the stub's bodies never touch it and the target
//! preserves it — r12 comes back as the caller left it. The caller puts a value other than
//! all ones in r12 and compares afterwards: a failure costs no memory flag (no store before
//! the call, no load after it). Because this convention breaks the C ABI on the failure path,
//! a checked entry is never exposed as an `extern "C" fn`: [`CheckedEntry`] can only be called
//! through the inline-assembly calls in this module (and `backend::x86_64_sysv::image`).
//!
//! # Invariants
//! - A `CheckedEntry` is the start of a value or image entry emitted by `super::stub` inside a
//!   read-execute mapping that lives as long as the stub (kept alive by its owner).
//! - Calls are made from `asm!` blocks without `nostack` (the stack pointer is call-aligned and
//!   the red zone is free) and with `clobber_abi("C")`, r12 declared as an in-out operand.

use std::ffi::c_void;
use std::ptr::NonNull;

/// The r12 value a checked entry leaves when it rejects an argument.
pub(crate) const REJECTED: u64 = u64::MAX;

/// `call`s a checked entry from inline assembly with r12 = 0, the given register operands
/// and `clobber_abi("C")`; evaluates to whether the entry accepted the arguments (r12 came back
/// as anything but [`REJECTED`]). Must be used inside an `unsafe` context whose caller upholds
/// the entry's contract.
macro_rules! checked_call {
    ($entry:expr; $($operands:tt)*) => {{
        let r12: u64;
        // SAFETY: see the module invariants: a checked entry is a SysV function (parameters in
        // rdi, rsi, rdx, rcx, r9) that clobbers only caller-saved registers and leaves r12 as
        // it found it unless it rejects an argument; it may read and write memory (no `nomem`)
        // as the caller's contract allows; without `nostack` the stack is call-aligned and the
        // red zone is not in use.
        unsafe {
            std::arch::asm!(
                "call {entry}",
                entry = in(reg) $entry,
                inout("r12") 0u64 => r12,
                $($operands)*
                clobber_abi("C"),
            );
        }
        r12 != REJECTED
    }};
}

/// The address of a stub's checked entry (value or image entry, or a no-argument C function
/// standing in for its own stub). `Copy`; `Send + Sync`: a code address in an immutable
/// mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckedEntry(NonNull<u8>);

// SAFETY: the entry is immutable machine code; calling it from any thread is what it is for.
unsafe impl Send for CheckedEntry {}
// SAFETY: as above.
unsafe impl Sync for CheckedEntry {}

impl CheckedEntry {
    /// Wraps the address of a checked entry.
    ///
    /// # Safety
    /// `code` is the start of a value or image entry emitted by `super::stub`, or a C function
    /// that takes no arguments (it reads no stub parameter and never rejects), mapped
    /// read-execute for as long as this value is called.
    pub(crate) unsafe fn new(code: NonNull<u8>) -> Self {
        CheckedEntry(code)
    }

    /// The entry's address.
    pub(crate) fn address(self) -> *const u8 {
        self.0.as_ptr()
    }

    /// Calls a value entry with every stub parameter: `args` (a `&[Value]`), `ret` (the
    /// struct-return destination or null), `capture` (the capture buffer or null), `target`,
    /// and `errno_location` (the thread's errno address, read by capture stubs). Returns the
    /// return registers `[rax, xmm0's low 64 bits]` — a float result is in xmm0 (a value entry
    /// may tail-jump to a float-returning target, leaving rax undefined) — or `None` if the
    /// stub rejected an argument (then nothing was called and nothing written).
    ///
    /// # Safety
    /// `self` is a value entry; `args` points to one `Value` per argument of the stub's plan;
    /// `ret`, `capture` and `errno_location` are valid as the stub's plan needs them (see
    /// `super::stub`); the target's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(
        self,
        args: *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
        errno_location: *mut i32,
    ) -> Option<[u64; 2]> {
        let rax: u64;
        let xmm0: f64;
        let accepted = checked_call!(self.address();
            in("rdi") args, in("rsi") ret, in("rdx") capture, in("rcx") target,
            in("r9") errno_location, lateout("rax") rax, lateout("xmm0") xmm0,
        );
        accepted.then_some([rax, xmm0.to_bits()])
    }

    /// [`CheckedEntry::call`] for a stub that reads neither `ret`, nor the capture buffer, nor
    /// the errno address (no capture, a scalar or void return): those registers are left as
    /// they are. Returns rax only: for a stub (or a target used as its own entry) whose result
    /// is in an integer register or that returns nothing.
    ///
    /// # Safety
    /// As [`CheckedEntry::call`], for such a stub.
    #[inline(always)]
    pub(crate) unsafe fn call_plain(self, args: *const u8, target: *const c_void) -> Option<u64> {
        let rax: u64;
        // The stub reads only rdi and rcx of its parameters.
        let accepted = checked_call!(self.address();
            in("rdi") args, in("rcx") target, lateout("rax") rax,
        );
        accepted.then_some(rax)
    }

    /// [`CheckedEntry::call`] for a stub without capture that returns a struct through `ret`
    /// (written by the stub, or by the target through the hidden pointer): the capture buffer
    /// and errno address registers are left as they are, and no result register is read.
    /// Returns whether the stub accepted the arguments (then the struct is in `ret`).
    ///
    /// # Safety
    /// As [`CheckedEntry::call`], for such a stub; `ret` is writable and aligned for the
    /// return layout.
    #[inline(always)]
    pub(crate) unsafe fn call_struct(
        self,
        args: *const u8,
        ret: *mut u8,
        target: *const c_void,
    ) -> bool {
        // The stub reads only rdi, rsi and rcx of its parameters.
        checked_call!(self.address();
            in("rdi") args, in("rsi") ret, in("rcx") target,
        )
    }

    /// [`CheckedEntry::call_plain`] for a stub whose result is a float: returns xmm0's low 64
    /// bits (the value entry tail-jumps to such a target, so rax is undefined).
    ///
    /// # Safety
    /// As [`CheckedEntry::call`], for such a stub.
    #[inline(always)]
    pub(crate) unsafe fn call_plain_float(
        self,
        args: *const u8,
        target: *const c_void,
    ) -> Option<u64> {
        let xmm0: f64;
        // The stub reads only rdi and rcx of its parameters.
        let accepted = checked_call!(self.address();
            in("rdi") args, in("rcx") target, lateout("xmm0") xmm0,
        );
        accepted.then_some(xmm0.to_bits())
    }
}
