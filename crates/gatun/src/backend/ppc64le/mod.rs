//! The PowerPC 64 little-endian backend: the ELFv2 calling convention of PPC64LE Linux
//! (64-Bit ELF V2 ABI Specification, Power Architecture, chapter 2.2 "Function Calling
//! Sequence"). Its classification is `crate::abi::ppc64le` (pure data, compiled and tested on
//! every host); on PPC64LE Linux — where this is `backend::native` — the executor: the
//! hand-written trampoline (`trampoline`) with the Rust code that fills its call frame
//! (`frame`), the result conversions of `executor`, and the upcall entry (`upcall_entry`).
//!
//! Calls run a compiled stub per signature (`stub`, encoded by `encode`; the code is pure
//! data, generated and tested on every host) chosen by the `executor` at link time; the
//! trampoline runs them when the OS refuses executable memory.
//!
//! Register usage the executor relies on (ELFv2 ABI 2.2.1 "Register Roles"): arguments in
//! r3–r10 and f1–f13, results in r3/r4 and f1–f8; r14–r31, f14–f31 and the CR fields CR2–CR4
//! are callee-saved (the executor names only r28–r31 of them, saved and restored, and the
//! volatile CR0); r1 is the stack pointer, 16-byte aligned at every call, with the 32-byte
//! frame header at 0(r1) (back chain at 0, CR save word at 8, LR save doubleword at 16, TOC
//! save doubleword at 24: 2.2.2 "The Stack Frame") and the parameter save area from 32(r1),
//! which every call here allocates (at least 64 bytes, whatever the callee's prototype).
//! r2 is the TOC pointer: every indirect call saves it at 24(r1) before `bctrl` and loads it
//! back after, and the target address is in r12 at the call (the callee's global entry point
//! computes its TOC from r12: 2.3.2.1 "Function Prologue"). r13 is the thread pointer and is
//! never named. Below r1 lies a 288-byte protected zone (2.2.2.4) the trampoline saves its
//! non-volatile registers in.
//!
//! A `float` in a floating-point register is held in double format (Power ISA Book I,
//! "Floating-Point Facility": `lfs` converts a single to double format, `stfs` back), so a
//! `float` argument's register image is its value as a `double` ([`single_to_double`]) and a
//! `float` result is read back with [`double_to_single`]; in a GPR or a stack doubleword a
//! `float` is its 4-byte image in the low-order word. Integers narrower than 64 bits are
//! extended to 64 bits by the caller, signed ones by sign, unsigned ones by zero (2.2.3.2
//! "Parameter Passing Register Selection Algorithm"): the plan's conversions say which.

#[cfg(gatun_backend = "ppc64le")]
pub(crate) use crate::abi::ppc64le as classify;

// The compiled-stub compiler: run by the executor; its code generation is pure data, compiled
// (and unit-tested) on every host for the tests.
#[cfg(any(test, gatun_backend = "ppc64le"))]
pub(crate) mod encode;
#[cfg(any(test, gatun_backend = "ppc64le"))]
pub(crate) mod stub;

/// One `global_asm!` function `$name` (a string literal, the C name) with the body `$body`
/// and the operands `$operands`: `.text`, 16-byte aligned, global but hidden (private to the
/// linked image), with the ELF `.type` and `.size` directives. The function has a single entry
/// point and does not use r2 as a TOC pointer (ELFv2 ABI 3.4.1: `st_other` local entry
/// field 0), so a local call reaches it with a plain `bl` and r2 is preserved across it.
#[cfg(gatun_backend = "ppc64le")]
macro_rules! asm_function {
    ($name:literal, [$($body:expr),* $(,)?] $(, $($operands:tt)*)?) => {
        std::arch::global_asm!(
            ".text",
            ".p2align 4",
            concat!(".globl ", $name),
            concat!(".hidden ", $name),
            concat!(".type ", $name, ",@function"),
            concat!($name, ":"),
            $($body,)*
            concat!(".size ", $name, ", . - ", $name),
            $($($operands)*)?
        );
    };
}

// The executor: compiled only where it runs (this module is then `backend::native`).
#[cfg(gatun_backend = "ppc64le")]
pub(crate) mod executor;
#[cfg(gatun_backend = "ppc64le")]
mod frame;
#[cfg(gatun_backend = "ppc64le")]
pub(crate) mod slots;
#[cfg(all(test, gatun_backend = "ppc64le"))]
mod tests;
#[cfg(gatun_backend = "ppc64le")]
pub(crate) mod trampoline;
#[cfg(gatun_backend = "ppc64le")]
pub(crate) mod upcall_entry;

#[cfg(gatun_backend = "ppc64le")]
pub(crate) use frame::CallFrame;

/// The register image of a `float` (its IEEE single bits in the low 32 of `bits`) in a
/// floating-point register: the same value in double format, as `lfs` loads it (Power ISA
/// Book I, "Floating-Point Load Instructions": exact, a NaN keeps its payload and its
/// signalling bit).
#[cfg(any(test, gatun_backend = "ppc64le"))]
#[inline(always)]
pub(crate) const fn single_to_double(bits: u64) -> u64 {
    let s = bits as u32;
    let (sign, exp, frac) = ((s >> 31) as u64, (s >> 23) & 0xFF, (s & 0x7F_FFFF) as u64);
    if exp == 0xFF {
        // infinities and NaNs: the fraction moved to the top of the double's
        (sign << 63) | (0x7FF << 52) | (frac << 29)
    } else {
        // every finite single is a double exactly
        (f32::from_bits(s) as f64).to_bits()
    }
}

/// The IEEE single bits (in the low 32, zero above) of a `float` held in double format in a
/// floating-point register, as `stfs` stores it (Power ISA Book I, "Floating-Point Store
/// Instructions": for an operand in the single format's normal range, an infinity, a NaN or
/// zero, the sign, the exponent's top bit and the next 30 bits are selected, no rounding; an
/// operand in its denormal range is denormalized). `bits` is a double image the callee made
/// from a `float`, so the conversion is exact.
#[cfg(any(test, gatun_backend = "ppc64le"))]
#[inline(always)]
pub(crate) const fn double_to_single(bits: u64) -> u64 {
    let exp = (bits >> 52) & 0x7FF;
    if exp > 896 || bits << 1 == 0 {
        ((bits >> 32) & 0xC000_0000) | ((bits >> 29) & 0x3FFF_FFFF)
    } else {
        // a single denormal (or below): exact for a value the single format holds
        (f64::from_bits(bits) as f32).to_bits() as u64
    }
}

/// The ELFv2 backend of PPC64LE Linux.
#[cfg(gatun_backend = "ppc64le")]
pub(crate) struct Elfv2;

#[cfg(gatun_backend = "ppc64le")]
impl crate::backend::Backend for Elfv2 {
    type Executor = executor::Executor;

    /// [`classify::plan`] (which checks every size and the stack limit) for downcalls; for
    /// upcalls the same plan with its floating-point and stack locations moved to where the
    /// upcall entry stores them ([`upcall_entry::upcall_plan`]).
    fn plan(
        descriptor: &crate::layout::FunctionDescriptor,
        first_variadic: Option<usize>,
        direction: crate::backend::Direction,
    ) -> crate::Result<crate::abi::CallPlan> {
        let plan = classify::plan(descriptor, first_variadic)?;
        Ok(match direction {
            crate::backend::Direction::Upcall => upcall_entry::upcall_plan(plan),
            _ => plan,
        })
    }

    /// A compiled stub with its fast path, or the trampoline when the OS gives no executable
    /// memory (`StubExecutor::link`), converting a `float` result from its register image.
    fn link(
        plan: &crate::abi::CallPlan,
        args: &[crate::backend::ArgKind],
        ret: crate::backend::RetKind,
        capture: bool,
        _target: *const std::ffi::c_void,
    ) -> crate::Result<Self::Executor> {
        executor::Executor::link(plan, args, ret, capture)
    }

    #[cfg(feature = "internals")]
    fn stub_code(
        plan: &crate::abi::CallPlan,
        args: &[crate::backend::ArgKind],
        capture: bool,
    ) -> crate::Result<Vec<u8>> {
        Ok(stub::compile(plan, &crate::backend::ArgCheck::all(args), capture).bytes)
    }

    #[cfg(feature = "internals")]
    fn compile_uncached(
        plan: &crate::abi::CallPlan,
        args: &[crate::backend::ArgKind],
        capture: bool,
    ) -> crate::Result<usize> {
        let checks = crate::backend::ArgCheck::all(args);
        Ok(stub::build(plan, &checks, capture)?.bytes().len())
    }
}

#[cfg(test)]
mod float_tests {
    use super::{double_to_single, single_to_double};

    #[test]
    fn a_float_register_image_is_its_double_and_converts_back_exactly() {
        for x in [
            0.0f32,
            -0.0,
            1.5,
            -3.25e-3,
            f32::MIN_POSITIVE,
            1e-45,
            f32::MAX,
            f32::INFINITY,
        ] {
            let image = single_to_double(x.to_bits() as u64);
            assert_eq!(f64::from_bits(image), x as f64, "{x}");
            assert_eq!(double_to_single(image), x.to_bits() as u64, "{x}");
        }
        // NaNs keep sign, payload and the signalling bit both ways (as lfs and stfs do)
        for s in [0x7FC0_0001u32, 0xFF80_0001, 0x7FA5_A5A5] {
            let image = single_to_double(s as u64);
            assert!(f64::from_bits(image).is_nan());
            assert_eq!(double_to_single(image), s as u64, "{s:#x}");
        }
    }
}
