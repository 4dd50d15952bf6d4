//! The call layer's ABI backends, one module per ABI, and the choice of the native one.
//!
//! Each backend holds everything that depends on its calling convention: classification of a
//! descriptor into an ABI-neutral [`CallPlan`](crate::abi::CallPlan), the executor that carries
//! a plan out (compiled stubs, trampoline), and the upcall entry.
//!
//! - [`x86_64_sysv`]: System V AMD64. Classification on every host; the executor on x86-64
//!   Linux (not under Miri).
//! - [`aarch64`]: AAPCS64 (Linux) and Apple arm64. Classification on every host; the executor
//!   (trampoline, by-reference copies, upcall entry) on AArch64 Linux (not under Miri).
//! - `unsupported`: the backend of every other target, whose link returns
//!   [`Error::Unsupported`](crate::Error::Unsupported).
//!
//! [`native`] is the backend gatun runs on, chosen here once at compile time; the layers above
//! (`linker`, `upcall`, `capture`) use only `native` and contain no `cfg(target_arch)`.
//!
//! # Invariants
//! [`store_low_bytes`] writes and [`load_move`] reads exactly `size` bytes; callers guarantee
//! the memory.

use crate::abi::{ArgMove, CallPlan, Conversion, Register, ReturnPlan};
use crate::layout::{MemoryLayout, ScalarKind};

// The one place the native backend is chosen: each arm is the `cfg` predicate of a target
// with an executor and its backend module; every other target gets `unsupported`. (A macOS
// arm64 executor is one more arm.)
macro_rules! native_backend {
    ($(($pred:meta) => $module:ident,)*) => {
        $(
            #[cfg($pred)]
            pub(crate) use $module as native;
        )*
        #[cfg(not(any($($pred),*)))]
        pub(crate) mod unsupported;
        #[cfg(not(any($($pred),*)))]
        pub(crate) use unsupported as native;
    };
}

pub(crate) mod aarch64;
#[cfg(not(all(target_arch = "x86_64", target_os = "linux", not(miri))))]
mod absent;
pub(crate) mod x86_64_sysv;

native_backend! {
    (all(target_arch = "x86_64", target_os = "linux", not(miri))) => x86_64_sysv,
    (all(target_arch = "aarch64", target_os = "linux", not(miri))) => aarch64,
}

/// Which way a plan is used: the checks of a backend's [`native::plan`] name it in their
/// messages; downcalls and upcalls otherwise accept the same descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Rust calls C (`Linker::downcall`).
    Downcall,
    /// C calls Rust (`Linker::upcall_stub`).
    Upcall,
}

impl Direction {
    /// `"downcall"` or `"upcall"`.
    #[cfg_attr(
        all(target_arch = "aarch64", target_os = "linux", not(miri)),
        allow(dead_code)
    )]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Direction::Downcall => "downcall",
            Direction::Upcall => "upcall",
        }
    }
}

/// What an argument of a descriptor is, as the executors check it: a scalar of this kind, or
/// a struct/union of this size and alignment (passed as a segment of at least that size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgKind {
    /// A scalar (`ValueLayout`) of this kind.
    Scalar(ScalarKind),
    /// A struct or union.
    Group {
        /// Size in bytes.
        size: usize,
        /// Alignment in bytes (a power of two).
        align: usize,
    },
}

impl ArgKind {
    /// The kind of an argument layout.
    pub(crate) fn of(l: &MemoryLayout) -> ArgKind {
        match l {
            MemoryLayout::Value(v) => ArgKind::Scalar(v.kind()),
            g => ArgKind::Group {
                size: g.byte_size(),
                align: g.byte_alignment(),
            },
        }
    }
}

/// What a descriptor returns: nothing, a scalar, or a struct/union of `size` bytes aligned to
/// `align` (a power of two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetKind {
    /// `void`.
    Void,
    /// A scalar of this kind.
    Scalar(ScalarKind),
    /// A struct or union.
    Group {
        /// Size in bytes.
        size: usize,
        /// Alignment in bytes.
        align: usize,
    },
}

impl RetKind {
    /// The kind of a return layout (`None`: void).
    pub(crate) fn of(l: Option<&MemoryLayout>) -> RetKind {
        match l {
            None => RetKind::Void,
            Some(MemoryLayout::Value(v)) => RetKind::Scalar(v.kind()),
            Some(g) => RetKind::Group {
                size: g.byte_size(),
                align: g.byte_alignment(),
            },
        }
    }
}

/// Where the interpreted path reads one argument: the 64-bit little-endian bits of a scalar
/// (covering any scalar's bytes), or a pointer to the argument's bytes.
// Read by the executors only (the unsupported backend has none).
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgSource {
    /// A scalar's value, its bytes in the low bytes.
    Bits(u64),
    /// The argument's bytes (readable for its layout's size).
    Bytes(*const u8),
}

#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
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
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
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
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
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

/// Largest outgoing stack-argument area, in bytes, that the executors support (256 slots of
/// 8 bytes). A descriptor needing more is rejected at link time (downcalls and upcalls alike)
/// by the ABI's classification.
pub const MAX_STACK_BYTES: usize = 2048;
/// [`MAX_STACK_BYTES`] in 8-byte slots.
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
pub(crate) const MAX_STACK_SLOTS: usize = MAX_STACK_BYTES / 8;

/// The outgoing stack-argument area of one interpreted call, [`MAX_STACK_SLOTS`] 8-byte slots
/// (2048 bytes) on the Rust stack; never zeroed beyond the slots a call uses. Slot k goes to
/// `[sp + 8k]` at the call on every backend.
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
pub(crate) struct StackArgs(pub [std::mem::MaybeUninit<u64>; MAX_STACK_SLOTS]);

#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
impl StackArgs {
    /// An uninitialised area.
    #[inline(always)]
    pub(crate) fn new() -> StackArgs {
        StackArgs([const { std::mem::MaybeUninit::uninit() }; MAX_STACK_SLOTS])
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
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
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
/// CopyArea::default().with(24, 8).with(16, 16)  ->  bytes 40, align 16
/// ```
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
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

#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri))
    )),
    allow(dead_code)
)]
impl CopyArea {
    /// The area with one more copy of `size` bytes aligned to `align` (a power of two; a
    /// layout's size and alignment, so the sum cannot overflow for a descriptor that exists).
    pub(crate) fn with(self, size: usize, align: usize) -> CopyArea {
        CopyArea {
            bytes: self.bytes.next_multiple_of(align) + size,
            align: self.align.max(align),
        }
    }
}

/// This thread's `errno` address (`__errno_location()` on Linux and Android, `__error()` on
/// Apple targets and FreeBSD), cached in a thread-local after the first call: a TLS load
/// instead of a call into libc per captured call (the `errno_location` parameter of capture
/// stubs, the system-call adapter). The address is fixed for a thread's lifetime. Null on other
/// targets (which have no executor, so no handle reads it).
#[inline(always)]
pub(crate) fn thread_errno() -> *mut i32 {
    thread_local! {
        static ERRNO: std::cell::Cell<*mut i32> = const { std::cell::Cell::new(std::ptr::null_mut()) };
    }
    ERRNO.with(|c| {
        let p = c.get();
        if p.is_null() {
            init_thread_errno(c)
        } else {
            p
        }
    })
}

#[cold]
#[inline(never)]
fn init_thread_errno(c: &std::cell::Cell<*mut i32>) -> *mut i32 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: always safe to call; returns this thread's errno address.
    let p = unsafe { libc::__errno_location() };
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    // SAFETY: as above.
    let p = unsafe { libc::__error() };
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd"
    )))]
    let p = std::ptr::null_mut();
    c.set(p);
    p
}

/// The `Value` of a scalar or void return from its tag word and payload word.
///
/// # Safety
/// `tag` is the tag of `Value::Void` or of a scalar variant, and `bits` a valid payload of it
/// (a bool normalised to 0/1 by the caller; every other scalar accepts any bits).
#[inline(always)]
pub(crate) unsafe fn value_of_words(tag: u64, bits: u64) -> crate::value::Value<'static> {
    // `Value` is `#[repr(C, u8)]` (24 bytes): word 0 holds the tag byte (the rest of the word is
    // padding), word 1 the payload (a scalar variant's field is its low bytes, the rest
    // padding), word 2 is padding for every scalar variant and `Void`. Building the value from
    // two whole words lets callers copy it without store-forwarding stalls.
    // (On x86-64 tag and payload are written by one 16-byte store: a caller copying the value
    // with 16-byte loads then gets it store-forwarded instead of stalling.)
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as above; the caller guarantees tag and payload.
    unsafe {
        use std::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
        let mut v = std::mem::MaybeUninit::<crate::value::Value<'static>>::uninit();
        let p = v.as_mut_ptr().cast::<u64>();
        _mm_storeu_si128(p.cast(), _mm_set_epi64x(bits as i64, tag as i64));
        // Word 2 is padding for every scalar variant and `Void`: left uninitialised.
        v.assume_init()
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above.
    unsafe {
        std::mem::transmute::<[u64; 3], crate::value::Value<'static>>([tag, bits, 0])
    }
}
