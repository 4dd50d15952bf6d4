//! The call layer's ABI backends, one module per ABI, behind one contract: the [`Backend`]
//! trait (classification and link) and the [`Executor`] trait (how a linked handle's calls
//! run). The linker (`linker::handle`) uses only [`Native`] and these traits.
//!
//! - [`x86_64_sysv`] ([`x86_64_sysv::SysV`]): System V AMD64, on x86-64 Linux.
//! - [`aarch64`] (`aarch64::Aapcs64`): AAPCS64 (Linux) and Apple arm64.
//! - [`win64`] (`win64::Win64`): the Microsoft x64 convention, on x86-64 Windows.
//! - [`riscv64`] (`riscv64::Lp64d`): the LP64D convention, on RISC-V 64 Linux.
//! - [`s390x`] (`s390x::S390x`): the s390x ELF ABI (z/Architecture, big-endian), on s390x
//!   Linux.
//! - [`ppc64le`] (`ppc64le::Elfv2`): the ELFv2 convention, on PowerPC 64 little-endian Linux.
//! - `unsupported` (`unsupported::Unsupported`): every other target (and every target under
//!   Miri); its link returns [`Error::Unsupported`](crate::Error::Unsupported).
//!
//! [`Native`] is the backend gatun runs on, chosen once by `cfg(gatun_backend = "...")`
//! (emitted by `build.rs`). Each backend module's classification
//! compiles on every host; its executor (trampoline, frame, entries) only where it runs
//! (`cfg(gatun_backend)` on each of those modules); its stub compiler also under `test`, for
//! the code-shape tests that run on every host.
//!
//! # Adding an ABI
//! A backend is its classification (a [`CallPlan`] per descriptor), its trampoline (the
//! checked general path) and a zero-sized type implementing [`Backend`]. What it must provide:
//! [`Backend::plan`], [`Backend::link`] and [`Executor::interpret`]. Everything else is
//! optional: every fast path of [`Executor`] has a default body meaning "absent", so the
//! handle layer falls back to [`Executor::interpret`], which accepts the same values and
//! reports the exact error. A backend with a stub compiler gets every fast path but the
//! SysV-only ones (the float path, image entries, a target standing in for its stub) by
//! implementing `executor::StubEntries` (its entry calls, copies' layout and slots path) and
//! naming `executor::StubExecutor<its entries>` as its executor, as AArch64, Win64 and RISC-V 64
//! do (s390x wraps it, to take a `float` result from the high word of `f0`).
//! x86-64 SysV keeps its own executor enum (`x86_64_sysv::executor`), one variant per fast
//! path, so that each fast path is one discriminant test with its entry inside the variant.

use std::ffi::c_void;

use crate::abi::CallPlan;
use crate::error::Result;
use crate::layout::FunctionDescriptor;
use crate::value::Value;

pub(crate) mod aarch64;
#[cfg(any(
    gatun_backend = "aarch64",
    gatun_backend = "win64",
    gatun_backend = "riscv64",
    gatun_backend = "s390x",
    gatun_backend = "ppc64le"
))]
pub(crate) mod executor;
mod moves;
pub(crate) mod ppc64le;
pub(crate) mod riscv64;
pub(crate) mod s390x;
// The register matrix of the direct `linker::Arguments` calls.
#[cfg(any(
    gatun_backend = "x86_64_sysv",
    gatun_backend = "aarch64",
    gatun_backend = "riscv64",
    gatun_backend = "s390x",
    gatun_backend = "ppc64le"
))]
mod slots;
#[cfg(all(test, gatun_executes))]
mod test_values;
#[cfg(gatun_backend = "unsupported")]
pub(crate) mod unsupported;
pub(crate) mod upcall;
pub(crate) mod win64;
// The x86-64 encoder of the stub compilers: where the SysV or the Win64 one runs, and for
// their code-shape tests on every host.
#[cfg(any(test, gatun_backend = "x86_64_sysv", gatun_backend = "win64"))]
mod x86_64_encode;
pub(crate) mod x86_64_sysv;

#[cfg_attr(not(gatun_executes), allow(unused_imports))]
pub(crate) use moves::{
    load_low_bytes, scalar_register, store_low_bytes, store_return, with_stack_args, ArgSource,
    CopyArea, StackArgs,
};
// Whole-slot stack moves: the x86-64 executors' (the AArch64 one writes each move's width).
#[cfg(any(gatun_backend = "x86_64_sysv", gatun_backend = "win64"))]
pub(crate) use moves::load_arg;

/// The native backend: the one [`Backend`] the linker, upcalls and capture use.
#[cfg(gatun_backend = "x86_64_sysv")]
pub(crate) type Native = x86_64_sysv::SysV;
/// The native backend: the one [`Backend`] the linker, upcalls and capture use.
#[cfg(gatun_backend = "aarch64")]
pub(crate) type Native = aarch64::Aapcs64;
/// The native backend: the one [`Backend`] the linker, upcalls and capture use.
#[cfg(gatun_backend = "win64")]
pub(crate) type Native = win64::Win64;
/// The native backend: the one [`Backend`] the linker, upcalls and capture use.
#[cfg(gatun_backend = "riscv64")]
pub(crate) type Native = riscv64::Lp64d;
/// The native backend: the one [`Backend`] the linker, upcalls and capture use.
#[cfg(gatun_backend = "s390x")]
pub(crate) type Native = s390x::S390x;
#[cfg(gatun_backend = "ppc64le")]
pub(crate) type Native = ppc64le::Elfv2;
/// The native backend: the one [`Backend`] the linker, upcalls and capture use.
#[cfg(gatun_backend = "unsupported")]
pub(crate) type Native = unsupported::Unsupported;

// The native backend implements the contract, and its executor can be shared by handles.
const _: () = {
    const fn is_backend<B: Backend>() {}
    is_backend::<Native>();
};

/// One calling convention: classification of a descriptor into a [`CallPlan`], and the
/// executor that carries a plan out. Implemented by one zero-sized type per ABI; only
/// [`Native`]'s is used (static dispatch: nothing here is called through `dyn`).
///
/// Required: [`Backend::plan`] and [`Backend::link`]. The `internals` hooks
/// (`Backend::stub_code`, `Backend::compile_uncached`) default to
/// [`Error::Unsupported`](crate::Error::Unsupported): a backend without a stub compiler leaves
/// them out.
pub(crate) trait Backend: upcall::UpcallEntries + 'static {
    /// How a linked handle's calls run.
    type Executor: Executor;

    /// The plan of `descriptor` for this ABI (variadic from argument `first_variadic` on), for
    /// a downcall or an upcall (`direction` only names it in messages): classification plus
    /// every limit of this backend's executor (the stack area fits
    /// [`MAX_STACK_BYTES`]; anything the executor cannot carry out is rejected here, so that
    /// [`Backend::link`] and every later call accept the plan).
    ///
    /// # Errors
    /// [`Error::InvalidDescriptor`](crate::Error::InvalidDescriptor) for a descriptor the ABI
    /// cannot pass; [`Error::Unsupported`](crate::Error::Unsupported) for what this backend
    /// does not carry out (on the `unsupported` backend: always).
    fn plan(
        descriptor: &FunctionDescriptor,
        first_variadic: Option<usize>,
        direction: Direction,
    ) -> Result<CallPlan>;

    /// The executor of a handle calling `target` (non-null) by `plan` (from [`Backend::plan`]
    /// of the same descriptor) with argument kinds `args` (one per planned argument), return
    /// `ret` and `capture` (whether the handle captures call state): chosen once here — a
    /// compiled stub with the fast paths its signature allows, or the trampoline alone when
    /// the OS refuses executable memory.
    ///
    /// # Errors
    /// The backend's own link-time limits (e.g. by-reference copies exceeding `isize::MAX`
    /// bytes); [`Error::Unsupported`](crate::Error::Unsupported) on the `unsupported` backend.
    fn link(
        plan: &CallPlan,
        args: &[ArgKind],
        ret: RetKind,
        capture: bool,
        target: *const c_void,
    ) -> Result<Self::Executor>;

    /// The machine code of the stub [`Backend::link`] would compile for a signature (every
    /// entry), without the stub cache and without mapping it.
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) (the default) when the backend has
    /// no stub compiler.
    #[cfg(feature = "internals")]
    fn stub_code(_plan: &CallPlan, _args: &[ArgKind], _capture: bool) -> Result<Vec<u8>> {
        Err(no_stub_compiler())
    }

    /// Compiles and places a signature's stub bypassing the cache, frees it, and returns its
    /// size in bytes.
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) (the default) when the backend has
    /// no stub compiler, or when the OS refuses executable memory.
    #[cfg(feature = "internals")]
    fn compile_uncached(_plan: &CallPlan, _args: &[ArgKind], _capture: bool) -> Result<usize> {
        Err(no_stub_compiler())
    }
}

/// The error of the `internals` stub hooks on a backend without a stub compiler.
#[cfg(feature = "internals")]
fn no_stub_compiler() -> crate::Error {
    crate::Error::Unsupported {
        type_name: "downcall".into(),
        reason: "this target's backend has no stub compiler".into(),
    }
}

/// How one linked handle's calls run, chosen once by [`Backend::link`] and never changed: the
/// handle layer (`linker::handle`) checks counts, capture buffers and return segments, builds
/// `Value`s, and calls these methods.
///
/// Required: [`Executor::interpret`], the checked general path every call can take. Every
/// other method is a fast path with a default body meaning "absent" (`false`, `None`,
/// `usize::MAX`, [`SlotsPath::None`]); the handle then falls back to `interpret`. A fast path
/// that returns `None` (or `false`) called nothing: the handle falls back to `interpret`, which
/// performs the same checks in Rust and reports the exact error, so the same values are
/// accepted with or without a fast path.
///
/// Shared by the threads of a handle (`Send + Sync`), cloned by the `interpreted` test hook.
/// Hot paths are `#[inline(always)]` in the implementations.
///
/// Common safety terms of the methods below: *values* is a pointer to one `Value` per
/// descriptor argument (the capture segment excluded); *pointers* is a pointer to one pointer
/// per descriptor argument, each readable for its layout's size; *`ret`* is null (scalar or
/// void return) or writable and aligned for the return layout's size; *`capture`* is null (no
/// capture) or the capture buffer of a capture handle (`capture_state_layout()`'s size,
/// 4-aligned); *`target`* is the handle's function, and its contract is the caller's.
pub(crate) trait Executor: Clone + Send + Sync + 'static {
    /// The entry of a struct returned in registers as an image (x86-64 SysV), or [`Absent`].
    type Image: ImageCall;
    /// The entry of a struct return written through the return destination, or [`Absent`].
    type StructEntry: StructCall;
    /// A capture handle's entry into its signature's stub without capture (it may borrow
    /// from the executor), or [`Absent`].
    type Uncaptured<'a>: UncapturedCall
    where
        Self: 'a;

    /// The checked general path: argument `i`'s source comes from `arg(i)` for every planned
    /// argument before anything is called (its first error is returned then); the hidden
    /// return pointer is `ret`; a register-returned struct is stored at `ret`; `capture` is
    /// restored right before the call and saved right after it. Returns the scalar result
    /// register's 64 bits.
    ///
    /// # Errors
    /// The first error of `arg`; the backend's own failures to prepare the call (by-reference
    /// copies, a stack area over 2048 bytes staged in a linker-stack frame:
    /// [`Error::OutOfMemory`](crate::Error::OutOfMemory)); nothing is called then.
    ///
    /// # Safety
    /// `plan` is the handle's; each `ArgSource::Bytes` is readable for its layout's size;
    /// `ret`, `capture` and `target` as the common terms.
    unsafe fn interpret(
        &self,
        plan: &CallPlan,
        target: *const c_void,
        capture: *mut i32,
        ret: *mut u8,
        arg: impl FnMut(usize) -> Result<ArgSource>,
    ) -> Result<u64>;

    /// The executor of the same handle that always takes the trampoline (the test hook
    /// forcing the interpreted path). The default, the executor itself, is right only for a
    /// backend without compiled stubs.
    #[cfg(feature = "internals")]
    fn interpreted(&self) -> Self {
        self.clone()
    }

    /// Whether calls run a compiled stub. Default: `false`.
    fn is_compiled(&self) -> bool {
        false
    }

    /// `nargs` (the descriptor's argument count) when [`Executor::call_int`] applies, else
    /// `usize::MAX` (no slice is that long), so the handle decides with one compare. Default:
    /// `usize::MAX`.
    fn int_arity(&self, _nargs: usize) -> usize {
        usize::MAX
    }

    /// The integer (and void) fast path: the result register's bits, or `None` if an argument
    /// was rejected (nothing called). No capture, no return destination. Default: `None`.
    ///
    /// # Safety
    /// [`Executor::int_arity`] is not `usize::MAX`; `args` are values; `target` as the common
    /// terms.
    unsafe fn call_int(&self, _args: *const u8, _target: *const c_void) -> Option<u64> {
        None
    }

    /// As [`Executor::int_arity`] for [`Executor::call_float`]. Default: `usize::MAX`.
    fn float_arity(&self, _nargs: usize) -> usize {
        usize::MAX
    }

    /// As [`Executor::call_int`] for a float result (its bits). Default: `None`.
    ///
    /// # Safety
    /// As [`Executor::call_int`], with [`Executor::float_arity`].
    unsafe fn call_float(&self, _args: *const u8, _target: *const c_void) -> Option<u64> {
        None
    }

    /// Which `linker::Arguments` fast path calls take ([`Executor::call_slots_int`] or
    /// [`Executor::call_slots_float`]), or [`SlotsPath::None`] (the default): the handle then
    /// converts the arguments to `Value`s.
    fn slots_path(&self) -> SlotsPath {
        SlotsPath::None
    }

    /// The slots fast path of an integer or void return: the result register's bits.
    /// The default is never called ([`Executor::slots_path`] is `None`) and panics.
    ///
    /// # Safety
    /// [`Executor::slots_path`] is `Int`; `kinds` is the descriptor's kind word
    /// (`linker::arguments`) and `slots` holds one 8-byte slot per descriptor argument with a
    /// value of its kind in its low bytes; `target` as the common terms.
    unsafe fn call_slots_int(&self, _kinds: u64, _slots: &Slots, _target: *const c_void) -> u64 {
        unreachable!("no slots path")
    }

    /// As [`Executor::call_slots_int`] for a float return (its bits). The default panics.
    ///
    /// # Safety
    /// As [`Executor::call_slots_int`], with [`Executor::slots_path`] `Float`.
    unsafe fn call_slots_float(&self, _kinds: u64, _slots: &Slots, _target: *const c_void) -> u64 {
        unreachable!("no slots path")
    }

    /// The image entry of a register-returned struct without capture. Default: `None`.
    fn image(&self) -> Option<Self::Image> {
        None
    }

    /// The entry of a struct return without capture written through the return destination,
    /// kept by the handle beside this executor (which keeps it alive). Default: `None`.
    fn struct_entry(&self) -> Option<Self::StructEntry> {
        None
    }

    /// A capture handle's entry into the same signature's stub without capture (the
    /// system-call adapter, which zeroes and reads errno itself). Default: `None`.
    fn uncaptured(&self) -> Option<Self::Uncaptured<'_>> {
        None
    }

    /// Any call through the stub's value entry: the scalar result's bits, or `None` (nothing
    /// called) without a stub or when an argument was rejected. Default: `None`.
    ///
    /// # Safety
    /// `args` are values; `ret`, `capture` and `target` as the common terms.
    unsafe fn call_values(
        &self,
        _args: *const u8,
        _ret: *mut u8,
        _capture: *mut i32,
        _target: *const c_void,
    ) -> Option<u64> {
        None
    }

    /// The system-call adapter's path: the capture stub with `capture`, the integer result
    /// register's bits. `None` (nothing called) when it does not apply (no stub, not a capture
    /// handle with a scalar or void return) or an argument was rejected. Default: `None`.
    ///
    /// # Safety
    /// As [`Executor::call_values`] with a non-null `capture` and no return destination.
    unsafe fn call_capture(
        &self,
        _args: *const u8,
        _capture: *mut i32,
        _target: *const c_void,
    ) -> Option<u64> {
        None
    }

    /// The raw path through the stub: a struct result written at `ret`, the scalar result's
    /// bits returned; `None` (nothing called) without a stub or when the stub's frame could
    /// not be had. Default: `None`.
    ///
    /// # Safety
    /// `args` are pointers; `ret` writable (and aligned) for the return layout's size;
    /// `capture` and `target` as the common terms.
    unsafe fn call_raw(
        &self,
        _args: *const *const u8,
        _ret: *mut u8,
        _capture: *mut i32,
        _target: *const c_void,
    ) -> Option<u64> {
        None
    }
}

/// An image entry ([`Executor::image`]): a struct returned in registers, handed back as its
/// register image and stored by the caller. `Copy`; valid while its executor is alive.
pub(crate) trait ImageCall: Copy {
    /// The struct's `(size, align)` in bytes (the return layout's).
    fn size_align(&self) -> (usize, usize);

    /// Calls the entry: the struct's two eightbytes, or `None` if an argument was rejected
    /// (nothing called).
    ///
    /// # Safety
    /// `args` are values (see [`Executor`]); `target` as the common terms.
    unsafe fn call(&self, args: *const u8, target: *const c_void) -> Option<[u64; 2]>;

    /// Stores exactly the struct's size in bytes of `image` at `ret` (unaligned).
    ///
    /// # Safety
    /// `ret` is writable for the struct's size.
    unsafe fn store(&self, ret: *mut u8, image: [u64; 2]);
}

/// A struct entry ([`Executor::struct_entry`]). `Copy`; valid while its executor is alive.
pub(crate) trait StructCall: Copy + Send + Sync + 'static {
    /// Calls it with `args`, the struct written at `ret`: `true` if it ran, `false` if an
    /// argument was rejected (nothing called, nothing written).
    ///
    /// # Safety
    /// `args` holds one `Value` per descriptor argument; `ret` is writable and aligned for the
    /// return layout; `target` as the common terms of [`Executor`].
    unsafe fn call(self, args: &[Value<'_>], ret: *mut u8, target: *const c_void) -> bool;
}

/// An entry without capture of a capture handle ([`Executor::uncaptured`]). `Copy`; valid
/// while its executor is alive.
pub(crate) trait UncapturedCall: Copy {
    /// Calls it: the integer result register, or `None` if an argument was rejected (nothing
    /// called).
    ///
    /// # Safety
    /// `args` are values (see [`Executor`]); `target` as the common terms.
    unsafe fn call(self, args: *const u8, target: *const c_void) -> Option<u64>;
}

/// The entry type of a backend without that entry (no value exists, so no method runs), and
/// the executor of the `unsupported` backend (whose link always fails).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Absent {}

impl ImageCall for Absent {
    fn size_align(&self) -> (usize, usize) {
        match *self {}
    }
    unsafe fn call(&self, _: *const u8, _: *const c_void) -> Option<[u64; 2]> {
        match *self {}
    }
    unsafe fn store(&self, _: *mut u8, _: [u64; 2]) {
        match *self {}
    }
}

impl StructCall for Absent {
    unsafe fn call(self, _: &[Value<'_>], _: *mut u8, _: *const c_void) -> bool {
        match self {}
    }
}

impl UncapturedCall for Absent {
    unsafe fn call(self, _: *const u8, _: *const c_void) -> Option<u64> {
        match self {}
    }
}

/// No executor: the `unsupported` backend's (its link fails, so no handle has one); every
/// fast path is the trait's "absent" default.
impl Executor for Absent {
    type Image = Absent;
    type StructEntry = Absent;
    type Uncaptured<'a> = Absent;

    unsafe fn interpret(
        &self,
        _: &CallPlan,
        _: *const c_void,
        _: *mut i32,
        _: *mut u8,
        _: impl FnMut(usize) -> Result<ArgSource>,
    ) -> Result<u64> {
        match *self {}
    }
}

// `Absent` stands in for every entry and for a whole executor.
const _: () = {
    const fn executor<E: Executor>() {}
    executor::<Absent>();
};

#[cfg(any(
    test,
    gatun_backend = "aarch64",
    gatun_backend = "win64",
    gatun_backend = "riscv64",
    gatun_backend = "s390x",
    gatun_backend = "ppc64le"
))]
/// The raw entry's signature of a by-reference backend's stub (the platform's C convention:
/// AAPCS64 `x0`..`x5`, LP64D `a0`..`a5`, s390x `r2`..`r6` and one stack slot, or Win64 `rcx`,
/// `rdx`, `r8`, `r9` and two stack slots): argument `i`'s
/// bytes at `args[i]`; the struct result's destination `ret`; the capture buffer; the target;
/// the by-reference copies' pointer array (one per such argument, in argument order; the
/// callee may write through them); the thread's errno address (capture stubs only). Returns the
/// result's raw 64 bits (see each backend's `stub` module).
pub(crate) type RawFn = unsafe extern "C" fn(
    args: *const *const u8,
    ret: *mut u8,
    capture: *mut i32,
    target: *const c_void,
    copies: *const *const u8,
    errno_location: *mut i32,
) -> u64;

/// Byte offset of a `Value`'s payload in the stubs' values entries (the `#[repr(C, u8)]` tag is
/// byte 0; the payload union is 8-aligned). An `i32` (x86-64 displacements; the AArch64 stub takes them as `u32`).
#[cfg(any(test, gatun_executes))]
pub(crate) const VALUE_PAYLOAD: i32 = 8;
/// Bytes between consecutive `Value`s of a `&[Value]`, as [`VALUE_PAYLOAD`].
pub(crate) const VALUE_STRIDE: i32 = std::mem::size_of::<crate::value::Value<'static>>() as i32;

const _: () = assert!(VALUE_STRIDE == 24);

#[cfg(any(test, gatun_executes))]
pub(crate) use crate::abi::kinds::ArgCheck;
pub(crate) use crate::abi::kinds::{ArgKind, Direction, RetKind, Slots, SlotsPath};

pub(crate) use crate::abi::MAX_STACK_BYTES;

/// The `Value` of a scalar or void return from its tag word and payload word.
///
/// # Safety
/// `tag` is the tag of `Value::Void` or of a scalar variant, and `bits` a valid payload of it
/// (a bool normalised to 0/1 by the caller; every other scalar accepts any bits).
#[inline(always)]
pub(crate) unsafe fn value_of_words(tag: u64, bits: u64) -> crate::value::Value<'static> {
    // `Value` is `#[repr(C, u8)]` (24 bytes): word 0 holds the tag byte (the rest of the word is
    // padding), word 1 the payload (a scalar variant's field is its first bytes: the low ones
    // on a little-endian target, the rest padding), word 2 is padding for every scalar
    // variant and `Void`. Building the value from
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
    // SAFETY: as above (`scalar_words` places tag and payload for the target's byte order).
    unsafe {
        let [tag, bits] = crate::value::scalar_words(tag as u8, bits);
        std::mem::transmute::<[u64; 3], crate::value::Value<'static>>([tag, bits, 0])
    }
}
