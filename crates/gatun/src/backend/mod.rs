//! The call layer's ABI backends, one module per ABI, and the choice of the native one.
//!
//! Each backend holds everything that depends on its calling convention: classification of a
//! descriptor into an ABI-neutral [`CallPlan`](crate::abi::CallPlan), the executor that carries
//! a plan out (compiled stubs, trampoline), and the upcall entry.
//!
//! - [`x86_64_sysv`]: System V AMD64. Classification on every host; the executor on x86-64
//!   Linux (not under Miri).
//! - [`aarch64`]: AAPCS64 (Linux) and Apple arm64. Classification on every host; the executor
//!   (compiled stubs, the trampoline as checked fallback, by-reference copies, upcall entry) on
//!   AArch64 Linux and Apple arm64 (not under Miri; the Apple flavour is compiled but not
//!   executed in CI).
//! - [`win64`]: the Microsoft x64 convention. Classification on every host; the executor
//!   (compiled stubs with registered unwind data, the trampoline as fallback, by-reference copies, hidden return pointer, capture of `GetLastError`,
//!   `WSAGetLastError` and `errno`, upcall entry) on x86-64 Windows (not under Miri).
//! - `unsupported`: the backend of every other target, whose link returns
//!   [`Error::Unsupported`](crate::Error::Unsupported).
//!
//! [`native`] is the backend gatun runs on, chosen here once at compile time; the layers above
//! (`linker`, `upcall`, `capture`) use only `native` and contain no `cfg(target_arch)`.
//!
use crate::layout::{MemoryLayout, ScalarKind};

// The one place the native backend is chosen: each arm is the `cfg` predicate of a target
// with an executor and its backend module; every other target gets `unsupported`.
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

// The `internals` hooks of `linker::handle` (`Linker::stub_code`, `compile_uncached`), the
// same on every backend with a stub compiler: the argument kinds' checks, then the stub
// module's `compile` (the code bytes; `$compile` calls it with the plan, the checks and the
// capture flag) or its `build` (placed, then freed). `$build_errors` documents `build`'s errors.
#[cfg(feature = "internals")]
macro_rules! stub_internals {
    (compile: $compile:expr, build_errors: $build_errors:literal $(,)?) => {
        /// The stub's machine code for a signature (both entries), without the cache or a
        /// mapping.
        ///
        /// # Errors
        /// None (the `Result` is the backend interface).
        pub(crate) fn stub_code(
            plan: &CallPlan,
            args: &[ArgKind],
            capture: bool,
        ) -> Result<Vec<u8>> {
            let checks = crate::backend::ArgCheck::all(args);
            let compile: fn(&CallPlan, &[ArgCheck], bool) -> Vec<u8> = $compile;
            Ok(compile(plan, &checks, capture))
        }

        /// Compiles and places a signature's stub bypassing the cache, frees it, and returns
        /// its size in bytes.
        ///
        /// # Errors
        #[doc = $build_errors]
        pub(crate) fn compile_uncached(
            plan: &CallPlan,
            args: &[ArgKind],
            capture: bool,
        ) -> Result<usize> {
            let checks = crate::backend::ArgCheck::all(args);
            Ok(super::stub::build(plan, &checks, capture)?.bytes().len())
        }
    };
}

pub(crate) mod aarch64;
#[cfg(not(all(target_arch = "x86_64", target_os = "linux", not(miri))))]
mod absent;
mod by_reference;
mod moves;
mod stub_cache;
#[cfg(test)]
mod test_values;
pub(crate) mod upcall;
pub(crate) mod win64;
// The x86-64 encoder of the stub compilers: where the SysV one runs, and where the Win64 one is
// compiled (x86-64 Windows, and its code-shape tests on every host).
#[cfg(any(
    test,
    all(
        target_arch = "x86_64",
        any(target_os = "linux", target_os = "windows"),
        not(miri)
    )
))]
mod x86_64_encode;
pub(crate) mod x86_64_sysv;

#[cfg_attr(
    not(any(
        all(
            target_arch = "x86_64",
            any(target_os = "linux", target_os = "windows"),
            not(miri)
        ),
        all(
            target_arch = "aarch64",
            any(target_os = "linux", target_vendor = "apple"),
            not(miri)
        )
    )),
    allow(unused_imports)
)]
pub(crate) use moves::{
    load_low_bytes, scalar_register, store_low_bytes, store_return, ArgSource, CopyArea, StackArgs,
};
// Whole-slot stack moves: the x86-64 executors' (the AArch64 one writes each move's width).
#[cfg_attr(
    not(all(
        target_arch = "x86_64",
        any(target_os = "linux", target_os = "windows"),
        not(miri)
    )),
    allow(unused_imports)
)]
pub(crate) use moves::load_arg;

native_backend! {
    (all(target_arch = "x86_64", target_os = "linux", not(miri))) => x86_64_sysv,
    (all(target_arch = "aarch64", target_os = "linux", not(miri))) => aarch64,
    (all(target_arch = "aarch64", target_vendor = "apple", not(miri))) => aarch64,
    (all(target_arch = "x86_64", target_os = "windows", not(miri))) => win64,
}

/// The native backend's type (its upcall entries: [`upcall::UpcallEntries`]), chosen with the
/// same conditions as [`native`].
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) type Native = x86_64_sysv::SysV;
/// See the `x86_64_sysv` alias.
#[cfg(gatun_backend = "aarch64")]
pub(crate) type Native = aarch64::Aapcs64;
/// See the `x86_64_sysv` alias.
#[cfg(gatun_backend = "win64")]
pub(crate) type Native = win64::Win64;
/// See the `x86_64_sysv` alias.
#[cfg(gatun_backend = "unsupported")]
pub(crate) type Native = unsupported::Unsupported;

/// Byte offset of a `Value`'s payload in the stubs' values entries (the `#[repr(C, u8)]` tag is
/// byte 0; the payload union is 8-aligned). An `i32` (x86-64 displacements; the AArch64 stub takes them as `u32`).
pub(crate) const VALUE_PAYLOAD: i32 = 8;
/// Bytes between consecutive `Value`s of a `&[Value]`, as [`VALUE_PAYLOAD`].
pub(crate) const VALUE_STRIDE: i32 = std::mem::size_of::<crate::value::Value<'static>>() as i32;

const _: () = assert!(VALUE_STRIDE == 24);

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
        any(
            all(
                target_arch = "aarch64",
                any(target_os = "linux", target_vendor = "apple"),
                not(miri)
            ),
            all(target_arch = "x86_64", target_os = "windows", not(miri))
        ),
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

/// What a compiled stub's value entry checks for one argument before anything else (shared by
/// the x86-64 and AArch64 stub compilers).
// Read by the stub compilers only (on targets without an executor, by their tests).
#[cfg_attr(
    not(all(target_arch = "x86_64", target_os = "linux", not(miri))),
    allow(dead_code)
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ArgCheck {
    /// A scalar: the `Value` must have this kind's variant.
    Scalar(ScalarKind),
    /// A struct/union of this many bytes: a `Value::Segment` at least this long.
    Group(u32),
}

#[cfg_attr(
    not(all(target_arch = "x86_64", target_os = "linux", not(miri))),
    allow(dead_code)
)]
impl ArgCheck {
    /// The checks of argument kinds `args`, one per argument in order.
    #[cfg(feature = "internals")]
    pub(crate) fn all(args: &[ArgKind]) -> Vec<ArgCheck> {
        args.iter().map(|a| ArgCheck::of(*a)).collect()
    }

    /// The check of an argument of kind `a` (a group over `u32::MAX` bytes checks for
    /// `u32::MAX`: no segment of a valid layout is that short and longer at once).
    pub(crate) fn of(a: ArgKind) -> ArgCheck {
        match a {
            ArgKind::Scalar(k) => ArgCheck::Scalar(k),
            ArgKind::Group { size, .. } => ArgCheck::Group(u32::try_from(size).unwrap_or(u32::MAX)),
        }
    }
}

/// The tag byte of `Value::Segment` (what a value entry compares a struct argument's tag with).
#[cfg_attr(
    not(all(target_arch = "x86_64", target_os = "linux", not(miri))),
    allow(dead_code)
)]
pub(crate) fn segment_tag() -> u8 {
    crate::value::value_tag(&crate::value::Value::Segment(
        crate::memory::MemorySegment::NULL,
    ))
}

/// The argument slots of `linker::Arguments`' fast path: at most eight, 8 bytes each, a
/// scalar's bits in the low bytes (initialised for the arguments only).
pub(crate) type Slots = [std::mem::MaybeUninit<u64>; 8];

/// Which fast path an executor has for `linker::Arguments` (untagged 8-byte argument slots):
/// a slots entry returning in the integer register (or nothing), one returning a float, or
/// none (the handle then converts the arguments to `Value`s and takes the `Value` path).
// Only the x86-64 SysV executor has slots entries (elsewhere `None` is the only variant made).
#[cfg_attr(
    not(all(target_arch = "x86_64", target_os = "linux", not(miri))),
    allow(dead_code)
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotsPath {
    /// No slots entry.
    None,
    /// An integer or void return.
    Int,
    /// A float return.
    Float,
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

/// Largest outgoing stack-argument area, in bytes, that the executors support (256 slots of
/// 8 bytes). A descriptor needing more is rejected at link time (downcalls and upcalls alike)
/// by the ABI's classification.
pub const MAX_STACK_BYTES: usize = 2048;

/// This thread's `errno` address (`__errno_location()` on Linux and Android, `__error()` on
/// Apple targets and FreeBSD, the C runtime's `_errno()` on Windows), cached in a thread-local after the first call: a TLS load
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
    #[cfg(windows)]
    // SAFETY: the C runtime's `_errno` (msvcrt.dll and ucrtbase.dll alike) is always safe to
    // call and returns this thread's errno address, valid for the thread's lifetime.
    let p = unsafe { windows_crt::_errno() };
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        windows
    )))]
    let p = std::ptr::null_mut();
    c.set(p);
    p
}

/// The Windows C runtime's functions that the `libc` crate does not declare.
#[cfg(windows)]
mod windows_crt {
    extern "C" {
        /// This thread's `errno` address (`<errno.h>`'s `errno` is `(*_errno())`).
        pub(super) fn _errno() -> *mut std::ffi::c_int;
    }
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
