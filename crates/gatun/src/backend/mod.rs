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
// The register matrix of the direct `linker::Arguments` calls.
#[cfg(any(gatun_backend = "x86_64_sysv", gatun_backend = "aarch64"))]
mod slots;
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

pub(crate) use crate::abi::kinds::{ArgCheck, ArgKind, Direction, RetKind, Slots, SlotsPath};

pub(crate) use crate::abi::MAX_STACK_BYTES;
pub(crate) use crate::os::thread_errno;

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
