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

/// The argument registers of a call whose arguments are all scalars, at most six integer-class
/// (integers, bools, pointers) and at most eight floats, not variadic: SysV AMD64 (§3.2.3)
/// passes each in the next free register of its class, in order, so the registers follow from
/// the kinds alone. `gp[..ni]` go to rdi, rsi, rdx, rcx, r8, r9 and `fp[..nf]` to xmm0-xmm7.
/// Each slot holds the value already widened as the callee may read it (small integers
/// extended to 64 bits, a bool 0 or 1, a `float`'s bits in the low 32 bits).
pub(crate) struct DirectRegisters {
    /// Integer-class slots, in order.
    pub gp: [u64; 6],
    /// Float slots, in order.
    pub fp: [u64; 8],
    /// How many of `gp` are arguments.
    pub ni: usize,
    /// How many of `fp` are arguments.
    pub nf: usize,
}

impl DirectRegisters {
    /// The registers of the arguments whose kind word is `kinds` (`linker::arguments`: the
    /// `Value` tag of each argument, zero bytes after the last) with slots `slots`; `None` if
    /// the arguments do not fit the registers (more than six integer-class ones). Inlined
    /// with a constant `kinds` this folds to the register assignment itself.
    ///
    /// # Safety
    /// `slots[i]` is initialised for every non-zero kind byte `i` of `kinds`.
    #[inline(always)]
    pub(crate) unsafe fn of(kinds: u64, slots: &crate::backend::Slots) -> Option<Self> {
        let float = |k: u8| {
            k == crate::value::scalar_tag(crate::layout::ScalarKind::F32)
                || k == crate::value::scalar_tag(crate::layout::ScalarKind::F64)
        };
        let mut r = DirectRegisters {
            gp: [0; 6],
            fp: [0; 8],
            ni: 0,
            nf: 0,
        };
        for (i, slot) in slots.iter().enumerate() {
            let k = (kinds >> (8 * i)) as u8;
            if k == 0 {
                break;
            }
            // SAFETY: kind byte `i` is not zero (caller).
            let bits = unsafe { slot.assume_init() };
            if float(k) {
                r.fp[r.nf] = bits;
                r.nf += 1;
            } else if r.ni < 6 {
                r.gp[r.ni] = bits;
                r.ni += 1;
            } else {
                return None;
            }
        }
        Some(r)
    }

    /// Calls `target` with these registers (`%al` is not set: the callee is not variadic) and
    /// returns rax (`xmm0 = false`) or xmm0's low 64 bits (`xmm0 = true`). One `call` from
    /// inline assembly whose operands are exactly the argument registers in use: with constant
    /// counts the match below folds to that one block.
    ///
    /// # Safety
    /// `target` is a function, not variadic, whose arguments are exactly these registers'
    /// (the kinds `of` read) and that returns in rax (`xmm0 = false`: an integer, a pointer
    /// or nothing) or xmm0 (`xmm0 = true`); its contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(&self, target: *const c_void, xmm0: bool) -> u64 {
        let (g, f) = (&self.gp, &self.fp);
        macro_rules! asm_call {
            ([$($gr:tt $gi:tt)*], [$($fr:tt $fi:tt)*]) => {{
                let (rax, x0): (u64, f64);
                // SAFETY: a SysV call (see the module invariants) with the argument
                // registers the callee reads; it clobbers only what the C ABI lets it
                // (`clobber_abi("C")`); it may read and write memory as its contract allows.
                unsafe {
                    std::arch::asm!(
                        "call {t}",
                        t = in(reg) target,
                        $(in($gr) g[$gi],)*
                        $(in($fr) f64::from_bits(f[$fi]),)*
                        lateout("rax") rax,
                        lateout("xmm0") x0,
                        clobber_abi("C"),
                    );
                }
                if xmm0 { x0.to_bits() } else { rax }
            }};
        }
        crate::backend::slots::register_matrix!(
            asm_call!,
            self.ni => ["rdi" 0 "rsi" 1 "rdx" 2 "rcx" 3 "r8" 4 "r9" 5],
            self.nf => ["xmm0" 0 "xmm1" 1 "xmm2" 2 "xmm3" 3 "xmm4" 4 "xmm5" 5 "xmm6" 6 "xmm7" 7],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ScalarKind as K;
    use crate::value::scalar_tag;
    use std::mem::MaybeUninit;

    fn word(kinds: &[K]) -> u64 {
        kinds
            .iter()
            .enumerate()
            .fold(0, |w, (i, k)| w | u64::from(scalar_tag(*k)) << (8 * i))
    }

    #[test]
    fn registers_follow_the_kinds_in_order_per_class() {
        let mut slots: crate::backend::Slots = [MaybeUninit::uninit(); 8];
        for (i, s) in slots.iter_mut().enumerate() {
            *s = MaybeUninit::new(100 + i as u64);
        }
        let kinds = [K::I32, K::F64, K::Pointer, K::F32, K::Bool, K::U64];
        // SAFETY: every slot is initialised.
        let r = unsafe { DirectRegisters::of(word(&kinds), &slots) }.unwrap();
        assert_eq!((r.ni, r.nf), (4, 2));
        assert_eq!(&r.gp[..4], &[100, 102, 104, 105]);
        assert_eq!(&r.fp[..2], &[101, 103]);
        // eight floats fill xmm0-xmm7
        // SAFETY: as above.
        let r = unsafe { DirectRegisters::of(word(&[K::F64; 8]), &slots) }.unwrap();
        assert_eq!((r.ni, r.nf), (0, 8));
        // no arguments
        // SAFETY: as above.
        let r = unsafe { DirectRegisters::of(0, &slots) }.unwrap();
        assert_eq!((r.ni, r.nf), (0, 0));
        // a seventh integer goes on the stack: not for this path
        // SAFETY: as above.
        assert!(unsafe { DirectRegisters::of(word(&[K::I64; 7]), &slots) }.is_none());
        let mut mixed = [K::I64; 8];
        mixed[7] = K::F64;
        mixed[0] = K::F32;
        // SAFETY: as above.
        assert!(unsafe { DirectRegisters::of(word(&mixed), &slots) }.is_some());
    }
}
