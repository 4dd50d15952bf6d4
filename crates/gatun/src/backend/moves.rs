//! Moving argument and result bytes on the interpreted paths, the same on every ABI: where an
//! argument's bytes are read from ([`ArgSource`]), one move's load and conversion
//! ([`load_move`]), the outgoing stack area ([`StackArgs`], [`with_stack_args`]), register-returned structs
//! ([`store_return`]), and the linker-stack frame of argument copies ([`CopyArea`]).
//!
//! # Byte order
//! A move's bytes are an integer of the target's byte order: [`load_low_bytes`] reads `size`
//! bytes as the unsigned integer they are in memory (little-endian: the first byte is the
//! least significant; big-endian, s390x: the first byte is the most significant, so a 4-byte
//! struct `{ short a, b; }` reads as `0x0000_0000_aaaa_bbbb`), and [`store_low_bytes`] writes
//! the low `size` bytes of a value the same way, so a store of a load gives the bytes back on
//! either. [`ArgSource::with_scalar_bytes`] hands out a scalar's bytes in memory order for the
//! same reason (on a big-endian target they are the high bytes of the `u64` holding it).
//!
//! # Invariants
//! [`store_low_bytes`] writes and [`load_low_bytes`] reads exactly `size` bytes (at most 8);
//! callers guarantee the memory.

// Used by the executors (and the upcall dispatcher) only: the unsupported backend has none.
#![cfg_attr(not(gatun_executes), allow(dead_code, unused_imports))]

use std::mem::MaybeUninit;

// (`Location` is named by the stack moves of the x86-64 and AArch64 executors only.)
#[cfg_attr(
    any(
        gatun_backend = "riscv64",
        gatun_backend = "s390x",
        gatun_backend = "ppc64le"
    ),
    allow(unused_imports)
)]
use crate::abi::{ArgMove, CallPlan, Conversion, Location, Register, ReturnPlan};

/// Where the interpreted path reads one argument: a scalar's value as 64 bits (its
/// declared width's value in the low bits), or a pointer to the argument's bytes.
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
    /// (covering any scalar, alive during `f`), or the `Bytes` pointer itself. Little-endian
    /// targets only: on a big-endian one a scalar's bytes depend on its width
    /// ([`ArgSource::with_scalar_bytes`]).
    #[cfg(gatun_backend = "x86_64_sysv")]
    #[inline(always)]
    pub(crate) fn with_bytes<R>(self, f: impl FnOnce(*const u8) -> R) -> R {
        match self {
            ArgSource::Bits(b) => f(&b as *const u64 as *const u8),
            ArgSource::Bytes(p) => f(p),
        }
    }

    /// Runs `f` on a pointer to the bytes of an argument planned as `arg`, in memory order:
    /// for `Bits`, the scalar's value as the integer of its width (the size of the argument's
    /// one move: a scalar has exactly one, at offset 0) in the target's byte order, alive
    /// during `f` — the low bytes of the `u64` on a little-endian target, its high bytes on a
    /// big-endian one; for `Bytes`, the pointer itself.
    // The shared stub executor's (`backend::executor`), and the tests'.
    #[cfg(any(
        test,
        gatun_backend = "aarch64",
        gatun_backend = "win64",
        gatun_backend = "riscv64",
        gatun_backend = "s390x",
        gatun_backend = "ppc64le"
    ))]
    #[inline(always)]
    pub(crate) fn with_scalar_bytes<R>(
        self,
        arg: &crate::abi::ArgPlan,
        f: impl FnOnce(*const u8) -> R,
    ) -> R {
        match self {
            #[cfg(target_endian = "little")]
            ArgSource::Bits(b) => {
                let _ = arg;
                f(&b as *const u64 as *const u8)
            }
            #[cfg(target_endian = "big")]
            ArgSource::Bits(b) => {
                // The width's bytes first: shifted to the top of the big-endian `u64`.
                let width = arg
                    .moves
                    .first()
                    .map_or(8, |m| u32::from(m.size).clamp(1, 8));
                let b = b << (64 - 8 * width);
                f(&b as *const u64 as *const u8)
            }
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

/// 8-byte slots of the outgoing stack area an interpreted call keeps on the Rust stack: 256
/// (2048 bytes). A larger area ([`with_stack_args`]) is staged in a frame of the thread's
/// [`linker_stack`](crate::memory::linker_stack).
pub(crate) const INLINE_STACK_SLOTS: usize = 256;

/// The outgoing stack-argument area of one interpreted call: exactly the plan's
/// `stack_bytes / 8` 8-byte slots, zeroed when made ([`with_stack_args`]). Slot k goes to
/// `[sp + 8k]` at the call on every backend (the trampoline copies them there).
pub(crate) struct StackArgs<'a>(&'a mut [MaybeUninit<u64>]);

/// Runs `f` with the outgoing stack area of a call of `stack_bytes` bytes (a plan's
/// [`CallPlan::stack_bytes`], a multiple of 8): up to [`INLINE_STACK_SLOTS`] slots on the Rust
/// stack (the common case, no allocation), a larger area (up to
/// [`MAX_STACK_BYTES`](super::MAX_STACK_BYTES)) in one frame of the thread's
/// [`linker_stack`](crate::memory::linker_stack), popped when `f` returns. The linker stack's
/// block is small (256 bytes unless `GATUN_LINKER_STACK_SIZE` says otherwise), so such a frame
/// is usually its zeroed heap fallback: the one allocation of an interpreted call with more
/// than 2048 bytes of stack arguments. The area never lives on the Rust stack beyond 2048 bytes.
///
/// # Errors
/// [`crate::Error::OutOfMemory`] when a large area's heap fallback cannot be allocated (`f` is
/// not run); otherwise `f`'s result.
#[inline(always)]
pub(crate) fn with_stack_args<R>(
    stack_bytes: u32,
    f: impl FnOnce(&mut StackArgs<'_>) -> crate::Result<R>,
) -> crate::Result<R> {
    debug_assert!(stack_bytes as usize <= super::MAX_STACK_BYTES);
    let slots = stack_bytes as usize / 8;
    if slots <= INLINE_STACK_SLOTS {
        let mut inline = [const { MaybeUninit::<u64>::uninit() }; INLINE_STACK_SLOTS];
        f(&mut StackArgs::zeroed(&mut inline[..slots]))
    } else {
        with_large_stack_args(slots, f)
    }
}

/// [`with_stack_args`] for more than [`INLINE_STACK_SLOTS`] slots: the area in a linker-stack
/// frame.
#[cold]
#[inline(never)]
fn with_large_stack_args<R>(
    slots: usize,
    f: impl FnOnce(&mut StackArgs<'_>) -> crate::Result<R>,
) -> crate::Result<R> {
    use crate::memory::SegmentAllocator as _;
    let bytes = slots * 8;
    let frame = crate::memory::linker_stack().push_frame(bytes, 16)?;
    let area = frame.allocate_uninit(bytes, 16)?;
    // SAFETY: `area` is `bytes` = 8 × `slots` bytes, 16-aligned, fresh in this frame and used
    // by nothing else until the frame is dropped after `f` returns; `MaybeUninit` slots need
    // no initialisation.
    let area = unsafe { std::slice::from_raw_parts_mut(area.as_ptr().cast(), slots) };
    f(&mut StackArgs::zeroed(area))
}

impl<'a> StackArgs<'a> {
    /// The area of `slots`, each zeroed.
    #[inline(always)]
    fn zeroed(slots: &'a mut [MaybeUninit<u64>]) -> StackArgs<'a> {
        for s in slots.iter_mut() {
            s.write(0);
        }
        StackArgs(slots)
    }

    /// Number of 8-byte slots.
    #[inline(always)]
    pub(crate) fn slots(&self) -> usize {
        self.0.len()
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
    ///
    /// # Panics
    /// If the slot is outside the area: a plan the linker accepted never names one.
    // The x86-64, RISC-V 64 and s390x executors' (whole slots; on s390x the slot's `u64`
    // stored big-endian, so a narrow value is right-justified).
    #[cfg(any(
        gatun_backend = "x86_64_sysv",
        gatun_backend = "win64",
        gatun_backend = "riscv64",
        gatun_backend = "s390x",
        gatun_backend = "ppc64le"
    ))]
    #[inline(always)]
    pub(crate) fn set(&mut self, off: u32, value: u64) {
        self.0[off as usize / 8].write(value);
    }

    /// Writes the low `bytes` bytes (1..=8) of `value` at byte offset `off` and nothing else:
    /// a stack move of a plan with [`CallPlan::packed_named_stack`], whose width is
    /// [`CallPlan::stack_write_bytes`] (8 is a whole slot for an 8-aligned `off`).
    /// The bytes around it keep their values (zeroed when the area was made).
    ///
    /// # Panics
    /// If `off + bytes` exceeds the area or `bytes > 8`: a plan the linker accepted never
    /// does.
    // Used by the AArch64 executor (packed Apple stack arguments) and the tests.
    #[cfg(any(test, gatun_backend = "aarch64"))]
    #[inline(always)]
    pub(crate) fn set_bytes(&mut self, off: u32, value: u64, bytes: usize) {
        let end = off as usize + bytes;
        let size = std::mem::size_of_val(self.0);
        assert!(
            bytes <= 8 && end <= size,
            "stack write of {bytes} bytes at offset {off} exceeds the {size}-byte area"
        );
        let dst = self.0.as_mut_ptr().cast::<u8>();
        // SAFETY: `off .. off + bytes` is inside the area (checked above), `bytes <= 8`, and
        // the area is exclusively borrowed; writing bytes into `MaybeUninit` slots is sound.
        unsafe { store_low_bytes(dst.add(off as usize), value, bytes) }
    }
}

/// The shortest run of whole-slot stack moves a compiled stub copies with a loop (`rep movsq`
/// on x86-64) instead of one load and store per slot: 16 slots (128 bytes). Shorter runs, every
/// struct of less than 128 bytes among them, keep their moves.
// The x86-64 System V and PPC64LE stubs' (AArch64 and Win64 pass such structs by reference).
#[cfg(any(test, gatun_backend = "x86_64_sysv", gatun_backend = "ppc64le"))]
pub(crate) const MIN_COPY_RUN: usize = 16;

/// The runs of an argument's `moves` a compiled stub copies as one block: at least
/// [`MIN_COPY_RUN`] consecutive moves, each [`Conversion::Bytes`] of 8 bytes into a
/// [`Location::Stack`] slot, each reading the 8 bytes right after the previous one's and
/// writing the slot right after the previous one's (a MEMORY-class struct on the stack, SysV
/// AMD64 §3.2.3). Each run is a range of indices into `moves`; linear in `moves`.
#[cfg(any(test, gatun_backend = "x86_64_sysv", gatun_backend = "ppc64le"))]
pub(crate) fn copy_runs(moves: &[ArgMove]) -> Vec<std::ops::Range<usize>> {
    let whole_slot = |m: &ArgMove| {
        m.conv == Conversion::Bytes && m.size == 8 && matches!(m.to, Location::Stack(_))
    };
    let follows = |p: &ArgMove, m: &ArgMove| match (p.to, m.to) {
        (Location::Stack(a), Location::Stack(b)) => {
            Some(b) == a.checked_add(8) && Some(m.offset) == p.offset.checked_add(8)
        }
        _ => false,
    };
    let mut runs = Vec::new();
    let mut start = 0;
    for k in 0..=moves.len() {
        let extends = k < moves.len()
            && whole_slot(&moves[k])
            && (k == start || follows(&moves[k - 1], &moves[k]));
        if !extends {
            if k - start >= MIN_COPY_RUN {
                runs.push(start..k);
            }
            // A move that breaks a run may start the next one.
            start = if k < moves.len() && whole_slot(&moves[k]) {
                k
            } else {
                k + 1
            };
        }
    }
    runs
}

/// Carries out an argument's moves from the argument bytes at `src`: each move's converted
/// value goes to `store(location, value)` (a call frame's register or stack slot).
///
/// # Safety
/// `src` must be readable for every move's `offset + size` bytes (the argument layout's size).
// The x86-64 executors' (whole slots).
#[cfg(any(gatun_backend = "x86_64_sysv", gatun_backend = "win64"))]
#[inline(always)]
pub(crate) unsafe fn load_arg(
    arg: &crate::abi::ArgPlan,
    src: *const u8,
    mut store: impl FnMut(Location, u64),
) {
    for m in &arg.moves {
        // SAFETY: forwarded to the caller.
        store(m.to, unsafe { load_move(src, m) });
    }
}

/// As [`load_arg`], with each move's store width: `store(location, value, bytes)` gets
/// `bytes` = [`CallPlan::stack_write_bytes`] for a stack move of argument `i` of `plan` (fewer
/// than 8 for a named argument of a packed Apple plan), 8 for a register move.
///
/// # Safety
/// As [`load_arg`]: `src` must be readable for every move's `offset + size` bytes.
// Used by the AArch64 executor (packed Apple stack arguments) and the (little-endian) tests.
#[cfg(any(all(test, target_endian = "little"), gatun_backend = "aarch64"))]
#[inline(always)]
pub(crate) unsafe fn load_arg_sized(
    plan: &CallPlan,
    i: usize,
    src: *const u8,
    mut store: impl FnMut(Location, u64, usize),
) {
    for m in &plan.args[i].moves {
        let bytes = match m.to {
            Location::Stack(_) => plan.stack_write_bytes(i, m),
            _ => 8,
        };
        // SAFETY: forwarded to the caller.
        store(m.to, unsafe { load_move(src, m) }, bytes);
    }
}

/// Writes the low `size` bytes of `value` to `dst`, as the `size`-byte integer of the
/// target's byte order (see "Byte order" in the module documentation).
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
                #[cfg(target_endian = "little")]
                let bytes = value.to_le_bytes();
                // Big-endian: the low `n` bytes are the last `n` of the big-endian image.
                #[cfg(target_endian = "big")]
                let bytes = (value << (8 * (8 - n as u32))).to_be_bytes();
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

/// Reads `size` bytes at `src` as the unsigned `size`-byte integer of the target's byte order
/// (see "Byte order" in the module documentation): the low bytes of the result, the rest zero.
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
                    #[cfg(target_endian = "little")]
                    let shift = 8 * k;
                    #[cfg(target_endian = "big")]
                    let shift = 8 * (n - 1 - k);
                    v |= (src.add(k).read() as u64) << shift;
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

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_endian = "little")]
    use crate::abi::aarch64::{plan, Flavour};
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ValueLayout as V};

    /// The outgoing stack area an interpreted call of `args` (after eight `long`s and eight
    /// `double`s that fill the registers) writes for `flavour`, from the argument bytes `src`.
    #[cfg(target_endian = "little")]
    fn outgoing(flavour: Flavour, args: &[V], src: &[u64]) -> Vec<u8> {
        let mut all: Vec<MemoryLayout> = vec![V::I64.into(); 8];
        all.extend(vec![MemoryLayout::from(V::F64); 8]);
        all.extend(args.iter().cloned().map(MemoryLayout::from));
        let p = plan(&FD::of_void(all), None, flavour).unwrap();
        with_stack_args(p.stack_bytes, |stack| {
            for (k, bits) in src.iter().enumerate() {
                let bytes = bits.to_le_bytes();
                // SAFETY: 8 readable bytes cover any scalar argument.
                unsafe {
                    load_arg_sized(&p, 16 + k, bytes.as_ptr(), |to, v, n| match to {
                        Location::Stack(off) => stack.set_bytes(off, v, n),
                        _ => panic!("argument {k} is not on the stack: {to:?}"),
                    })
                };
            }
            Ok(area_bytes(stack))
        })
        .unwrap()
    }

    /// The bytes of a whole area.
    fn area_bytes(stack: &mut StackArgs<'_>) -> Vec<u8> {
        let n = 8 * stack.slots();
        // SAFETY: every slot was zeroed when the area was made (then maybe written).
        unsafe { std::slice::from_raw_parts(stack.base().cast::<u8>(), n) }.to_vec()
    }

    // AArch64 plans carried out as on an AArch64 (little-endian) target: the bytes of a value
    // in its slot are the little-endian ones.
    #[cfg(target_endian = "little")]
    #[test]
    fn packed_apple_stack_arguments_are_written_with_their_own_bytes_only() {
        let args = [V::I8, V::I16, V::I32, V::I8, V::F32, V::I64];
        let src = [
            0x11,
            0x2233,
            0x4455_6677,
            0x88, // -120: sign-extended by the load, one byte written
            f32::to_bits(1.5) as u64,
            0x0102_0304_0506_0708,
        ];
        let f = 1.5f32.to_le_bytes();
        let mut want = vec![0x11, 0, 0x33, 0x22, 0x77, 0x66, 0x55, 0x44, 0x88, 0, 0, 0];
        want.extend(f);
        want.extend(0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(outgoing(Flavour::Apple, &args, &src), want);
        // Linux: one whole 8-byte slot each (the i8's sign extension fills its slot).
        let linux = outgoing(Flavour::Linux, &args, &src);
        assert_eq!(linux.len(), 48);
        assert_eq!(linux[0..8], 0x11u64.to_le_bytes());
        assert_eq!(linux[8..16], 0x2233u64.to_le_bytes());
        assert_eq!(linux[24..32], (-120i64).to_le_bytes());
        assert_eq!(linux[32..36], f);
    }

    #[test]
    // The ranges are lists of runs (index ranges), not ranges of values.
    #[allow(clippy::single_range_in_vec_init)]
    fn copy_runs_are_long_whole_slot_byte_moves_of_consecutive_bytes_and_slots() {
        use crate::abi::sysv;
        let big = |bytes: usize| {
            MemoryLayout::c_struct([MemoryLayout::sequence_layout(bytes, V::U8).unwrap()]).unwrap()
        };
        let runs = |d: &FD| -> Vec<Vec<std::ops::Range<usize>>> {
            let p = sysv::plan(d, None).unwrap();
            p.args.iter().map(|a| copy_runs(&a.moves)).collect()
        };
        // 128 bytes: one run of 16; 127 bytes: 15 whole slots and a 7-byte tail, no run; a
        // 4100-byte struct: 512 whole slots, then its 4-byte tail on its own.
        let d = FD::of_void([big(128), big(127), big(4100), big(16)]);
        assert_eq!(runs(&d), [vec![0..16], vec![], vec![0..512], vec![]]);
        // Scalars never make a run, however many.
        let d = FD::of_void(vec![MemoryLayout::from(V::I64); 64]);
        assert!(runs(&d).iter().all(|r| r.is_empty()));
        // A move that converts, or is not the next slot or the next 8 bytes, splits a run.
        let m = |offset: u32, to: u32| ArgMove {
            offset,
            size: 8,
            to: Location::Stack(to),
            conv: Conversion::Bytes,
        };
        let mut moves: Vec<ArgMove> = (0..40).map(|k| m(8 * k, 8 * k)).collect();
        assert_eq!(copy_runs(&moves), [0..40]);
        moves[20].conv = Conversion::SignExtend;
        assert_eq!(copy_runs(&moves), [0..20, 21..40]);
        moves[20].conv = Conversion::Bytes;
        moves[20].to = Location::Stack(4096);
        assert_eq!(copy_runs(&moves), [0..20, 21..40]);
        moves[25].size = 4;
        assert_eq!(copy_runs(&moves), [0..20]);
        moves[25].size = 8;
        moves[20].to = Location::Stack(160);
        moves[3].offset = 100;
        assert_eq!(copy_runs(&moves), [4..40]);
    }

    #[test]
    fn bytes_are_integers_of_the_targets_byte_order() {
        let bytes = [0x11u8, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88];
        for n in 1..=8 {
            // SAFETY: `bytes` has 8 readable bytes.
            let v = unsafe { load_low_bytes(bytes.as_ptr(), n) };
            let want = if cfg!(target_endian = "big") {
                bytes[..n].iter().fold(0u64, |v, &b| v << 8 | u64::from(b))
            } else {
                bytes[..n]
                    .iter()
                    .rev()
                    .fold(0u64, |v, &b| v << 8 | u64::from(b))
            };
            assert_eq!(v, want, "{n} bytes");
            // A store of the load gives the bytes back, and nothing past them.
            let mut out = [0xAAu8; 9];
            // SAFETY: `out` has 9 writable bytes.
            unsafe { store_low_bytes(out.as_mut_ptr(), v, n) };
            assert_eq!(out[..n], bytes[..n], "{n} bytes");
            assert!(out[n..].iter().all(|&b| b == 0xAA), "{n} bytes");
        }
    }

    #[test]
    fn scalar_sources_give_their_bytes_in_memory_order() {
        let d = FD::of_void([V::I8, V::I16, V::I32, V::F32, V::I64]);
        let p = crate::abi::sysv::plan(&d, None).unwrap();
        let values: [(u64, Vec<u8>); 5] = [
            (0xFFFF_FFFF_FFFF_FF85, (-123i8).to_ne_bytes().to_vec()),
            (0x1234, 0x1234u16.to_ne_bytes().to_vec()),
            (0x89AB_CDEF, 0x89AB_CDEFu32.to_ne_bytes().to_vec()),
            (u64::from(1.5f32.to_bits()), 1.5f32.to_ne_bytes().to_vec()),
            (
                0x0102_0304_0506_0708,
                0x0102_0304_0506_0708u64.to_ne_bytes().to_vec(),
            ),
        ];
        for (ap, (bits, want)) in p.args.iter().zip(values) {
            let got = ArgSource::Bits(bits).with_scalar_bytes(ap, |q| {
                // SAFETY: a scalar's bytes, `want.len()` of them.
                unsafe { std::slice::from_raw_parts(q, want.len()) }.to_vec()
            });
            assert_eq!(got, want);
        }
    }

    #[test]
    fn set_bytes_writes_exactly_the_named_bytes() {
        let b = with_stack_args(16, |s| {
            s.set_bytes(3, 0xAABB_CCDD_EEFF, 3);
            s.set_bytes(8, u64::MAX, 8);
            Ok(area_bytes(s))
        })
        .unwrap();
        // the low three bytes, in the target's byte order
        let low: [u8; 3] = if cfg!(target_endian = "big") {
            [0xDD, 0xEE, 0xFF]
        } else {
            [0xFF, 0xEE, 0xDD]
        };
        assert_eq!(b[..3], [0; 3]);
        assert_eq!(b[3..6], low);
        assert_eq!(b[6..8], [0; 2]);
        assert_eq!(b[8..], [0xFF; 8]);
    }

    #[test]
    #[should_panic(expected = "exceeds the 2048-byte area")]
    fn set_bytes_past_the_area_panics() {
        let _ = with_stack_args(2048, |s| {
            s.set_bytes(2045, 0, 4);
            Ok(())
        });
    }

    #[test]
    fn areas_over_2048_bytes_are_staged_off_the_rust_stack_zeroed_and_exactly_sized() {
        // On a thread with a 64 KiB stack: a 1 MiB area on the Rust stack would overflow it.
        let t = std::thread::Builder::new().stack_size(64 * 1024).spawn(|| {
            // (Miri: the 1 MiB area only outside it, zeroing it there takes too long.)
            let max = if cfg!(miri) {
                1 << 16
            } else {
                crate::abi::MAX_STACK_BYTES as u32
            };
            for bytes in [0u32, 8, 2048, 2056, 1 << 16, max] {
                for _ in 0..2 {
                    let (slots, zero) = with_stack_args(bytes, |s| {
                        let zero = area_bytes(s).iter().all(|&b| b == 0);
                        // Fill both ends: the next area must come back zeroed all the same.
                        if s.slots() > 0 {
                            let last = 8 * (s.slots() - 1) as u32;
                            s.set_bytes(last, u64::MAX, 8);
                            s.set_bytes(0, u64::MAX, 8);
                        }
                        Ok((s.slots(), zero))
                    })
                    .unwrap();
                    assert_eq!(slots, bytes as usize / 8);
                    assert!(zero, "{bytes} bytes");
                }
            }
            // Every frame was popped.
            let stack = crate::memory::linker_stack();
            assert!(!stack
                .push_frame(stack.byte_size(), 16)
                .unwrap()
                .is_fallback());
        });
        t.unwrap().join().unwrap();
    }
}
