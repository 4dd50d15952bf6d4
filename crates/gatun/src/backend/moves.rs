//! Moving argument and result bytes on the interpreted paths, the same on every ABI: where an
//! argument's bytes are read from ([`ArgSource`]), one move's load and conversion
//! ([`load_move`]), the outgoing stack area ([`StackArgs`]), register-returned structs
//! ([`store_return`]), and the linker-stack frame of argument copies ([`CopyArea`]).
//!
//! # Invariants
//! [`store_low_bytes`] writes and [`load_low_bytes`] reads exactly `size` bytes (at most 8);
//! callers guarantee the memory.

// Used by the executors (and the upcall dispatcher) only: the unsupported backend has none.
#![cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(
            target_arch = "aarch64",
            any(target_os = "linux", target_vendor = "apple"),
            not(miri)
        )
    )),
    allow(dead_code)
)]

use crate::abi::{ArgMove, ArgPlan, CallPlan, Conversion, Location, Register, ReturnPlan};

/// Where the interpreted path reads one argument: the 64-bit little-endian bits of a scalar
/// (covering any scalar's bytes), or a pointer to the argument's bytes.
// Read by the executors only (the unsupported backend has none).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgSource {
    /// A scalar's value, its bytes in the low bytes.
    Bits(u64),
    /// The argument's bytes (readable for its layout's size).
    Bytes(*const u8),
}

impl ArgSource {
    /// Runs `f` on a pointer to the argument's bytes: the 8 little-endian bytes of `Bits`
    /// (covering any scalar, alive during `f`), or the `Bytes` pointer itself.
    #[inline(always)]
    pub(crate) fn with_bytes<R>(self, f: impl FnOnce(*const u8) -> R) -> R {
        match self {
            ArgSource::Bits(b) => f(&b as *const u64 as *const u8),
            ArgSource::Bytes(p) => f(p),
        }
    }
}

/// The register of a plan's scalar result (`Int(0)` for void and struct returns, whose
/// scalar bits nobody reads).
#[inline(always)]
pub(crate) fn scalar_register(plan: &CallPlan) -> Register {
    match plan.ret {
        ReturnPlan::Scalar(r) => r,
        _ => Register::Int(0),
    }
}

/// Writes a register-returned struct at `ret` from the registers after the call
/// (`returned(r)`: the low 64 bits of `r`), by the plan's return moves; nothing for other
/// returns.
///
/// # Safety
/// For a [`ReturnPlan::Registers`] plan, `ret` is writable for the return layout's size (every
/// move lies inside it).
#[inline(always)]
pub(crate) unsafe fn store_return(
    plan: &CallPlan,
    ret: *mut u8,
    returned: impl Fn(Register) -> u64,
) {
    if let ReturnPlan::Registers(moves) = &plan.ret {
        for m in moves {
            // SAFETY: `ret` has the return layout's size and every move lies inside it (caller).
            unsafe {
                store_low_bytes(
                    ret.add(m.offset as usize),
                    returned(m.from),
                    m.size as usize,
                )
            };
        }
    }
}

/// [`MAX_STACK_BYTES`](super::MAX_STACK_BYTES) in 8-byte slots.
pub(crate) const MAX_STACK_SLOTS: usize = super::MAX_STACK_BYTES / 8;

/// The outgoing stack-argument area of one interpreted call, [`MAX_STACK_SLOTS`] 8-byte slots
/// (2048 bytes) on the Rust stack; never zeroed beyond the slots a call uses. Slot k goes to
/// `[sp + 8k]` at the call on every backend.
pub(crate) struct StackArgs(pub [std::mem::MaybeUninit<u64>; MAX_STACK_SLOTS]);

impl StackArgs {
    /// An uninitialised area.
    #[inline(always)]
    pub(crate) fn new() -> StackArgs {
        StackArgs([const { std::mem::MaybeUninit::uninit() }; MAX_STACK_SLOTS])
    }

    /// Zeroes the first `slots` slots (a plan's `stack_bytes / 8`, at most [`MAX_STACK_SLOTS`]:
    /// the linker refuses larger plans).
    #[inline(always)]
    pub(crate) fn zero_prefix(&mut self, slots: usize) {
        debug_assert!(slots <= MAX_STACK_SLOTS);
        for s in &mut self.0[..slots] {
            s.write(0);
        }
    }

    /// The first slot's address, for the trampoline: taken right before the call, after every
    /// slot was written, so that no later borrow of the area invalidates it (the pointer is
    /// derived from this exclusive borrow, as the aliasing model requires for a pointer the
    /// assembly reads through).
    #[inline(always)]
    pub(crate) fn base(&mut self) -> *const u64 {
        self.0.as_mut_ptr().cast()
    }

    /// Writes the 8-byte slot at byte offset `off` (a `Location::Stack` of the plan).
    #[inline(always)]
    pub(crate) fn set(&mut self, off: u32, value: u64) {
        self.0[off as usize / 8].write(value);
    }
}

/// Carries out an argument's moves from the argument bytes at `src`: each move's converted
/// value goes to `store(location, value)` (a call frame's register or stack slot).
///
/// # Safety
/// `src` must be readable for every move's `offset + size` bytes (the argument layout's size).
#[inline(always)]
pub(crate) unsafe fn load_arg(arg: &ArgPlan, src: *const u8, mut store: impl FnMut(Location, u64)) {
    for m in &arg.moves {
        // SAFETY: forwarded to the caller.
        store(m.to, unsafe { load_move(src, m) });
    }
}

/// Writes the low `size` bytes of `value` to `dst`.
///
/// # Safety
/// `dst .. + size` must be writable; `size <= 8`.
#[inline(always)]
pub(crate) unsafe fn store_low_bytes(dst: *mut u8, value: u64, size: usize) {
    // SAFETY: forwarded to the caller; unaligned stores of exactly `size` bytes.
    unsafe {
        match size {
            8 => dst.cast::<u64>().write_unaligned(value),
            4 => dst.cast::<u32>().write_unaligned(value as u32),
            2 => dst.cast::<u16>().write_unaligned(value as u16),
            1 => dst.write(value as u8),
            n => {
                let bytes = value.to_le_bytes();
                for (k, b) in bytes.iter().enumerate().take(n) {
                    dst.add(k).write(*b);
                }
            }
        }
    }
}

/// Reads one argument move's bytes (exactly `m.size` of them, at `src + m.offset`) and converts
/// them into the 64-bit value of its register or stack slot (ABI-neutral: every executor's
/// interpreted path uses it).
///
/// # Safety
/// `src + m.offset .. + m.size` must be readable.
#[inline(always)]
pub(crate) unsafe fn load_move(src: *const u8, m: &ArgMove) -> u64 {
    // SAFETY: forwarded to the caller.
    let raw = unsafe { load_low_bytes(src.add(m.offset as usize), m.size as usize) };
    match m.conv {
        Conversion::Bytes => raw,
        Conversion::SignExtend => {
            let shift = 64 - 8 * m.size as u32;
            (((raw << shift) as i64) >> shift) as u64
        }
        Conversion::Bool => (raw != 0) as u64,
        Conversion::FloatToDouble => (f32::from_bits(raw as u32) as f64).to_bits(),
    }
}

/// Reads `size` bytes at `src` as the low bytes of a little-endian `u64` (the rest zero).
///
/// # Safety
/// `src .. + size` must be readable; `size <= 8`.
#[inline(always)]
pub(crate) unsafe fn load_low_bytes(src: *const u8, size: usize) -> u64 {
    // SAFETY: forwarded to the caller; unaligned reads of exactly `size` bytes.
    unsafe {
        match size {
            8 => src.cast::<u64>().read_unaligned(),
            4 => src.cast::<u32>().read_unaligned() as u64,
            2 => src.cast::<u16>().read_unaligned() as u64,
            1 => src.read() as u64,
            n => {
                let mut v = 0u64;
                for k in 0..n {
                    v |= (src.add(k).read() as u64) << (8 * k);
                }
                v
            }
        }
    }
}

/// The bytes and alignment of one linker-stack frame holding several copies, each placed at
/// the next multiple of its alignment (the bump rule of [`crate::memory::Frame`]'s allocations,
/// with the frame aligned to the largest alignment). Computed once at link time by the upcall
/// context (struct arguments) and the AArch64 executor (by-reference copies).
///
/// ```text
/// CopyArea::default().with(24, 8)?.with(16, 16)?  ->  bytes 40, align 16
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CopyArea {
    /// Bytes of the frame (0: no copies, no frame).
    pub bytes: usize,
    /// Its alignment in bytes (a power of two; 1 with no copies).
    pub align: usize,
}

impl Default for CopyArea {
    fn default() -> CopyArea {
        CopyArea { bytes: 0, align: 1 }
    }
}

impl CopyArea {
    /// The area with one more copy of `size` bytes aligned to `align` (a power of two: a
    /// layout's size and alignment), or `None` when the total would exceed `isize::MAX` bytes
    /// (several huge by-reference arguments), which no frame can hold.
    pub(crate) fn with(self, size: usize, align: usize) -> Option<CopyArea> {
        let bytes = self
            .bytes
            .checked_next_multiple_of(align)?
            .checked_add(size)
            .filter(|&b| b <= isize::MAX as usize)?;
        Some(CopyArea {
            bytes,
            align: self.align.max(align),
        })
    }

    /// The error of copies that do not fit in one area ([`CopyArea::with`] gave `None`).
    pub(crate) fn too_large() -> crate::Error {
        crate::Error::SizeOverflow {
            what: format!(
                "the copies of a call's struct arguments take more than {} bytes in all",
                isize::MAX
            ),
        }
    }
}
