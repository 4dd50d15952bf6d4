//! The ABI layer: per-ABI classification of a [`FunctionDescriptor`] into a [`CallPlan`].
//!
//! A `CallPlan` is pure data saying where every byte of every argument and of the return value
//! lives at the moment of the call: which integer register, which vector register, which
//! 8-byte slot of the outgoing stack area, or memory behind a hidden return pointer. Executors
//! (the backends' compiled stubs and trampolines) only carry a plan out; they never classify.
//! Tests assert plans directly ("`{int; double}` → rdi, xmm0").
//!
//! The plan types are ABI-neutral: registers are *indices* into the ABI's argument and return
//! register sequences (for SysV AMD64: integer `rdi, rsi, rdx, rcx, r8, r9`, vector
//! `xmm0..xmm7`; returns `rax, rdx` and `xmm0, xmm1`), so every classifier produces the same
//! type. Where a field means something different under another ABI, its documentation says so:
//!
//! - AArch64 (AAPCS64 on Linux, and Apple arm64): registers `x0..x7`, `v0..v7`, returns `x0, x1`
//!   and `v0..v3`, the indirect-result register `x8`.
//! - RISC-V 64 (LP64D): registers `a0..a7`, `fa0..fa7` (a 4-byte move is a NaN-boxed
//!   `float`), returns `a0, a1` and `fa0, fa1`; the hidden return pointer is `a0`.
//! - ELFv2 (PPC64LE Linux): registers `r3..r10`, `f1..f13`, returns `r3, r4` and `f1..f8`;
//!   `Stack(off)` is an offset in the parameter save area (which starts at `32(r1)`), the 64
//!   bytes shadowed by `r3..r10` included; a `float` in an FPR is in double format
//!   ([`Conversion::FloatToDouble`]); a variadic floating-point value has a move to its FPR and
//!   one to its GPR or memory doubleword.
//! - s390x (the z/Architecture ELF ABI, big-endian): registers `r2..r6`, `f0, f2, f4, f6`;
//!   returns `r2` and `f0` (every struct and union is returned in memory); the hidden return
//!   pointer is `r2`; stack offsets are within the outgoing argument area at `160(%r15)`.
//! - Win64 (the Microsoft x64 convention): `Int(n)`/`Vector(n)` are argument *slot* n (`rcx,
//!   rdx, r8, r9` / `xmm0..xmm3`), stack offsets start after the 32-byte shadow space, and a
//!   variadic float has a move to each of its slot's registers.
//!
//! [`plan_for`] plans a descriptor under any [`Abi`], on every host (classification is pure
//! data); a linked [`DowncallHandle`](crate::DowncallHandle) shows the plan it runs
//! ([`DowncallHandle::plan`](crate::DowncallHandle::plan)). The classifiers themselves (one
//! module per ABI, with the stack-area rules they share) are private: their classes and
//! register counts are not public API. With the `internals` feature (test and benchmark hooks,
//! not public API) they are reachable as `gatun::abi::sysv`, `gatun::abi::aarch64`,
//! `gatun::abi::riscv64`, `gatun::abi::ppc64le`, `gatun::abi::s390x` and `gatun::abi::win64`.

// The classifiers: crate-private; public only with the `internals` feature (the oracle tests,
// the fuzz checks and `gatun layout` read their classes).
#[cfg(feature = "internals")]
pub mod aarch64;
#[cfg(not(feature = "internals"))]
pub(crate) mod aarch64;
#[cfg(feature = "internals")]
pub mod ppc64le;
#[cfg(not(feature = "internals"))]
pub(crate) mod ppc64le;
#[cfg(feature = "internals")]
pub mod riscv64;
#[cfg(not(feature = "internals"))]
pub(crate) mod riscv64;
#[cfg(feature = "internals")]
pub mod s390x;
#[cfg(not(feature = "internals"))]
pub(crate) mod s390x;
mod stack;
#[cfg(feature = "internals")]
pub mod sysv;
#[cfg(not(feature = "internals"))]
pub(crate) mod sysv;
#[cfg(feature = "internals")]
pub mod win64;
#[cfg(not(feature = "internals"))]
pub(crate) mod win64;

pub(crate) use stack::StackArea;
pub use stack::MAX_STACK_BYTES;

pub(crate) mod kinds;

use std::fmt;

use crate::error::{Error, Result};
use crate::layout::{FunctionDescriptor, MemoryLayout, ScalarKind};

/// A calling convention gatun classifies, for [`plan_for`]. Each one is planned on every host
/// (classification is pure data); which one gatun *executes* depends on the target.
///
/// ```
/// use gatun::abi::{plan_for, Abi};
/// use gatun::{FunctionDescriptor, ValueLayout as V};
/// // double f(int, double): the int and the double take the first register of their kind,
/// // except on Win64, where the two share four argument slots.
/// let d = FunctionDescriptor::of(V::F64, [V::I32, V::F64]);
/// let shown = |abi: Abi| abi.describe(&plan_for(abi, &d, None).unwrap());
/// assert_eq!(shown(Abi::SysVAmd64), "(rdi, xmm0) -> xmm0");
/// assert_eq!(shown(Abi::Aapcs64), "(x0, d0) -> v0");
/// assert_eq!(shown(Abi::Win64), "(rcx, xmm1) -> xmm0");
/// assert_eq!(shown(Abi::Lp64d), "(a0, fa0) -> fa0");
/// assert_eq!(shown(Abi::ElfV2), "(r3, f1) -> f1");
/// assert_eq!(shown(Abi::S390x), "(r2, f0) -> f0");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Abi {
    /// System V AMD64 (x86-64 Linux, the BSDs, macOS on x86-64): System V Application Binary
    /// Interface, AMD64 Architecture Processor Supplement, §3.2.3.
    SysVAmd64,
    /// AAPCS64 as used by Linux and other ELF targets: Procedure Call Standard for the Arm
    /// 64-bit Architecture, §6.8 and §6.9.
    Aapcs64,
    /// Apple arm64 (macOS, iOS): AAPCS64 with Apple's changes (variadic arguments on the stack,
    /// named stack arguments packed at their natural size, narrow integers extended by the
    /// caller).
    AppleArm64,
    /// The Microsoft x64 calling convention (x86-64 Windows, MSVC and mingw-w64 alike).
    Win64,
    /// RISC-V 64 with the LP64D ABI (RISC-V Linux): the RISC-V ELF psABI's integer and
    /// hardware floating-point calling conventions with 64-bit GPRs and FPRs.
    Lp64d,
    /// The 64-bit ELF V2 ABI for the Power Architecture, little-endian (PPC64LE Linux):
    /// OpenPOWER 64-Bit ELF V2 ABI Specification, §2.2.
    ElfV2,
    /// s390x (z/Architecture, 64-bit, big-endian) Linux: the s390x ELF ABI Supplement's
    /// parameter passing and return values (`r2..r6`, `f0, f2, f4, f6`, every aggregate result
    /// in memory).
    S390x,
}

impl Abi {
    /// The calling convention of the target this build of gatun runs on: System V AMD64 on
    /// x86-64 other than Windows, Win64 on x86-64 Windows, Apple arm64 on Apple AArch64,
    /// AAPCS64 on other AArch64 targets, LP64D on RISC-V 64 Linux, ELFv2 on little-endian
    /// PowerPC 64 Linux, the s390x ELF ABI on s390x Linux; `None` on other architectures.
    ///
    /// ```
    /// use gatun::abi::Abi;
    /// if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
    ///     assert_eq!(Abi::host(), Some(Abi::SysVAmd64));
    /// }
    /// ```
    pub fn host() -> Option<Abi> {
        if cfg!(all(target_arch = "x86_64", windows)) {
            Some(Abi::Win64)
        } else if cfg!(target_arch = "x86_64") {
            Some(Abi::SysVAmd64)
        } else if cfg!(all(target_arch = "aarch64", target_vendor = "apple")) {
            Some(Abi::AppleArm64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Abi::Aapcs64)
        } else if cfg!(all(target_arch = "riscv64", target_os = "linux")) {
            Some(Abi::Lp64d)
        } else if cfg!(all(
            target_arch = "powerpc64",
            target_endian = "little",
            target_os = "linux"
        )) {
            Some(Abi::ElfV2)
        } else if cfg!(all(target_arch = "s390x", target_os = "linux")) {
            Some(Abi::S390x)
        } else {
            None
        }
    }

    /// A compact summary of `plan` (a plan of this ABI) in this ABI's register names, each
    /// argument's destinations joined by `+`: SysV AMD64 `(rdi, xmm0+xmm1, stack+0) -> rax`
    /// (the plan's [`Display`](fmt::Display)); AArch64 `(x8:ret-ptr, x0+x1, s0+s1, &x2,
    /// sp+0) -> v0+v1` (`&`: a pointer to a caller-made copy; `s`/`d` by the move's width);
    /// Win64 `(ret-ptr:rcx, xmm1+rdx, &r8, rsp+32) -> rax`; LP64D `(a0:ret-ptr, fa0+a1, &a2,
    /// sp+0) -> fa0+fa1`; ELFv2 `(r3:ret-ptr, r4, f1+f2+r9, psa+64) -> f1` (`psa+n`: byte n of the
    /// parameter save area); s390x `(r2:ret-ptr, r3, f0, &r4, r15+160) -> memory` (a stack
    /// slot at its address from `%r15`).
    pub fn describe(self, plan: &CallPlan) -> String {
        match self {
            Abi::SysVAmd64 => plan.to_string(),
            Abi::Aapcs64 | Abi::AppleArm64 => aarch64::describe(plan),
            Abi::Win64 => win64::describe(plan),
            Abi::Lp64d => riscv64::describe(plan),
            Abi::ElfV2 => ppc64le::describe(plan),
            Abi::S390x => s390x::describe(plan),
        }
    }
}

/// Plans a call of `descriptor` under `abi`: the same classification a downcall or upcall of
/// that ABI uses at link time. `first_variadic` is the index of the first variadic argument
/// (`None` for a non-variadic function; `Some(args.len())` is a variadic call with no variadic
/// arguments).
///
/// Cost: linear in the number of arguments and in the distinct sub-layouts of the small
/// by-value groups, independent of byte sizes (a by-value struct of 2^62 bytes is rejected
/// without building a move per 8 bytes).
///
/// ```
/// use gatun::abi::{plan_for, Abi, Location};
/// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout as V};
/// // struct { float x, y, z; } by value: three vector registers on AArch64 (an HFA), two
/// // eightbytes in xmm0 and xmm1 on SysV AMD64, a pointer to a copy in rcx on Win64.
/// let s = MemoryLayout::c_struct([V::F32; 3]).unwrap();
/// let d = FunctionDescriptor::of_void([s]);
/// let to = |abi| -> Vec<Location> {
///     plan_for(abi, &d, None).unwrap().args()[0].moves.iter().map(|m| m.to).collect()
/// };
/// assert_eq!(to(Abi::Aapcs64), [Location::Vector(0), Location::Vector(1), Location::Vector(2)]);
/// assert_eq!(to(Abi::SysVAmd64), [Location::Vector(0), Location::Vector(1)]);
/// let win = plan_for(Abi::Win64, &d, None).unwrap();
/// assert_eq!(win.args()[0].by_reference, Some(Location::Int(0)));
/// ```
///
/// # Errors
/// [`Error::InvalidDescriptor`] for a padding, sequence or zero-sized argument or return, a
/// group whose size is not a multiple of its alignment, a variadic index beyond the argument
/// count, or a stack-argument area over [`MAX_STACK_BYTES`] (the message gives the bytes
/// needed). Where `abi` is the one gatun executes, [`Linker::downcall`](crate::Linker::downcall)
/// and [`Linker::upcall_stub`](crate::Linker::upcall_stub) reject the same descriptors with the
/// same messages.
pub fn plan_for(
    abi: Abi,
    descriptor: &FunctionDescriptor,
    first_variadic: Option<usize>,
) -> Result<CallPlan> {
    match abi {
        Abi::SysVAmd64 => sysv::plan(descriptor, first_variadic),
        Abi::Aapcs64 => aarch64::plan(descriptor, first_variadic, aarch64::Flavour::Linux),
        Abi::AppleArm64 => aarch64::plan(descriptor, first_variadic, aarch64::Flavour::Apple),
        Abi::Win64 => win64::plan(descriptor, first_variadic),
        Abi::Lp64d => riscv64::plan(descriptor, first_variadic),
        Abi::ElfV2 => ppc64le::plan(descriptor, first_variadic),
        Abi::S390x => s390x::plan(descriptor, first_variadic),
    }
}

/// Where one eightbyte (or less) of an argument goes.
///
/// ```
/// use gatun::abi::{plan_for, Abi, Location};
/// use gatun::{FunctionDescriptor, ValueLayout as V};
/// // double f(int, double): the int in rdi (integer register 0), the double in xmm0.
/// let d = FunctionDescriptor::of(V::F64, [V::I32, V::F64]);
/// let plan = plan_for(Abi::SysVAmd64, &d, None).unwrap();
/// assert_eq!(plan.args()[0].moves[0].to, Location::Int(0));
/// assert_eq!(plan.args()[1].moves[0].to, Location::Vector(0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Location {
    /// The n-th integer argument register (SysV: 0 = rdi, 1 = rsi, 2 = rdx, 3 = rcx, 4 = r8,
    /// 5 = r9). The whole 64-bit register is written.
    ///
    /// AArch64: `Int(n)` is `xn` for n in 0..=7, the whole 64-bit register written (so a
    /// narrow integer is extended to 64 bits, which covers Apple's "extend to 32 bits" rule);
    /// `Int(8)` is `x8` and appears only as [`CallPlan::hidden_return_pointer`].
    ///
    /// s390x: `Int(n)` is `r(2 + n)` for n in 0..=4 (`r2..r6`), the whole 64-bit register
    /// written.
    Int(u8),
    /// The n-th vector argument register (SysV: xmm0..xmm7). The low 64 bits are written.
    ///
    /// AArch64: `vn` for n in 0..=7; a move of 4 bytes writes `sn`, of 8 bytes (or a
    /// [`Conversion::FloatToDouble`]) writes `dn`; the rest of the register is zero.
    ///
    /// s390x: `f(2n)` for n in 0..=3 (`f0, f2, f4, f6`); the bytes are left-justified: a move
    /// of 4 bytes is a short `float` in the high 32 bits (`le`), a move of 8 bytes (or a
    /// [`Conversion::FloatToDouble`]) writes the whole register (`ld`).
    Vector(u8),
    /// The outgoing stack argument area at this byte offset from the stack pointer at the call
    /// instruction. Unless [`CallPlan::packed_named_stack`] says otherwise for the argument
    /// (see [`CallPlan::stack_write_bytes`]), the offset is a multiple of 8 and the whole 8-byte
    /// slot is written (the converted value; [`Conversion::Bytes`] zero-fills).
    ///
    /// ELFv2: the offset within the parameter save area (at `32(r1)`), at least 64 (the first
    /// 64 bytes are `r3..r10`).
    /// s390x: the offset within the outgoing argument area, which starts 160 bytes above the
    /// stack pointer at the call (`160(%r15)`, past the register save area); the slot holds the
    /// converted 64-bit value stored big-endian, so a narrower value (a `float` too) is
    /// right-justified in it.
    Stack(u32),
}

/// A register holding (part of) a return value.
///
/// ```
/// use gatun::abi::{plan_for, Abi, Register, ReturnPlan};
/// use gatun::{FunctionDescriptor, ValueLayout as V};
/// let plan = plan_for(Abi::SysVAmd64, &FunctionDescriptor::of(V::F64, []), None).unwrap();
/// assert_eq!(*plan.ret(), ReturnPlan::Scalar(Register::Vector(0))); // xmm0
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Register {
    /// The n-th integer return register (SysV: 0 = rax, 1 = rdx; s390x: 0 = r2).
    Int(u8),
    /// The n-th vector return register (SysV: 0 = xmm0, 1 = xmm1; s390x: 0 = f0).
    Vector(u8),
}

/// How the bytes of a move are turned into the 64-bit register or slot value.
///
/// ```
/// use gatun::abi::{plan_for, Abi, Conversion};
/// use gatun::{FunctionDescriptor, ValueLayout as V};
/// let d = FunctionDescriptor::of_void([V::I16, V::U16, V::BOOL]);
/// let plan = plan_for(Abi::SysVAmd64, &d, None).unwrap();
/// let convs: Vec<Conversion> = plan.args().iter().map(|a| a.moves[0].conv).collect();
/// assert_eq!(convs, [Conversion::SignExtend, Conversion::Bytes, Conversion::Bool]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Conversion {
    /// Copy the bytes; the rest of the 8 bytes is zero.
    ///
    /// On a big-endian target (s390x) the 64-bit value is the `size` bytes taken as an unsigned
    /// integer in target byte order: the bytes are right-justified and the high bytes zero (the
    /// big-endian image of a 1-, 2-, 4- or 8-byte struct in a GPR is exactly that). An FPR
    /// move is the exception: see [`Location::Vector`].
    Bytes,
    /// Sign-extend the `size` bytes, as a signed integer (in target byte order), to 64 bits (a
    /// signed integer; on RISC-V 64 also an `unsigned int`, which RV64 keeps sign-extended in
    /// registers).
    SignExtend,
    /// A C `bool`: any non-zero byte becomes 1, zero stays 0 (bool arguments are always 0 or 1).
    Bool,
    /// A `float` widened to a `double` (the default argument promotion for a variadic `float`,
    /// C11 §6.5.2.2 ¶7). `size` is 4 (the source); 8 bytes are written.
    FloatToDouble,
}

impl Conversion {
    /// How a scalar argument of `kind` is widened into its register or slot, the same on every
    /// ABI gatun classifies: bools normalised, a variadic `float` promoted to `double`, narrower
    /// signed integers sign-extended, everything else copied (zero-extended).
    pub(crate) fn for_scalar(kind: ScalarKind, variadic: bool) -> Conversion {
        match kind {
            ScalarKind::Bool => Conversion::Bool,
            ScalarKind::F32 if variadic => Conversion::FloatToDouble,
            k if k.is_signed() && k.byte_size() < 8 => Conversion::SignExtend,
            _ => Conversion::Bytes,
        }
    }
}

/// One move of an argument's bytes into a register or stack slot.
///
/// ```
/// use gatun::abi::{plan_for, Abi, ArgMove, Conversion, Location};
/// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout as V};
/// // A 12-byte struct { int a, b, c; } by value: 8 bytes into rdi, then 4 into rsi.
/// let s = MemoryLayout::c_struct([V::I32, V::I32, V::I32]).unwrap();
/// let plan = plan_for(Abi::SysVAmd64, &FunctionDescriptor::of_void([s]), None).unwrap();
/// assert_eq!(plan.args()[0].moves[1], ArgMove {
///     offset: 8,
///     size: 4,
///     to: Location::Int(1),
///     conv: Conversion::Bytes,
/// });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArgMove {
    /// Byte offset of the first source byte within the argument's value.
    pub offset: u32,
    /// Number of source bytes, 1..=8. Exactly these bytes are read, never more (a 12-byte
    /// struct is moved as 8 + 4 bytes).
    pub size: u8,
    /// Destination.
    pub to: Location,
    /// How the bytes become the destination's 64-bit value.
    pub conv: Conversion,
}

/// The moves of one argument, in order.
///
/// ```
/// use gatun::abi::{plan_for, Abi};
/// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout as V};
/// let s = MemoryLayout::c_struct([V::F64, V::F64]).unwrap(); // two SSE eightbytes
/// let plan = plan_for(Abi::SysVAmd64, &FunctionDescriptor::of_void([s]), None).unwrap();
/// assert_eq!(plan.args()[0].moves.len(), 2);
/// assert_eq!(plan.args()[0].by_reference, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArgPlan {
    /// The moves; a scalar has one, a struct one per eightbyte (registers) or per 8-byte chunk
    /// (stack). Empty for a struct whose eightbytes are all padding. Under Win64 and ELFv2 two
    /// moves may read the same source bytes: the value goes in both places (an executor
    /// performs every move; a callee may read either).
    pub moves: Vec<ArgMove>,
    /// `Some(loc)` when the ABI passes the argument by reference to a caller-made copy (AArch64
    /// composites over 16 bytes that are not HFAs, AAPCS64 rule B.3; Win64 structs not of
    /// 1/2/4/8 bytes; s390x structs and unions not of 1/2/4/8 bytes): the executor copies the value to memory it owns for the duration of the
    /// call and writes the copy's 8-byte address to `loc` (a register, or a whole 8-byte stack
    /// slot); `moves` is empty. Always `None` under SysV AMD64 (structs are copied into the
    /// stack area instead).
    pub by_reference: Option<Location>,
}

/// One move of a return register's low bytes into the return value.
///
/// ```
/// use gatun::abi::{plan_for, Abi, Register, ReturnMove, ReturnPlan};
/// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout as V};
/// // struct { int quot; int rem; } comes back in rax, both members in its 8 bytes.
/// let div_t = MemoryLayout::c_struct([V::I32, V::I32]).unwrap();
/// let d = FunctionDescriptor::of(div_t, [V::I32, V::I32]);
/// let plan = plan_for(Abi::SysVAmd64, &d, None).unwrap();
/// assert_eq!(
///     *plan.ret(),
///     ReturnPlan::Registers(vec![ReturnMove { from: Register::Int(0), offset: 0, size: 8 }])
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReturnMove {
    /// The source register.
    pub from: Register,
    /// Byte offset within the returned value.
    pub offset: u32,
    /// Number of bytes, 1..=8 (exactly these bytes of the destination are written).
    pub size: u8,
}

/// Where the return value is.
///
/// ```
/// use gatun::abi::{plan_for, Abi, Location, ReturnPlan};
/// use gatun::{FunctionDescriptor, MemoryLayout, ValueLayout as V};
/// // A 24-byte struct is returned in memory through a hidden pointer in rdi.
/// let big = MemoryLayout::c_struct([V::I64, V::I64, V::I64]).unwrap();
/// let plan = plan_for(Abi::SysVAmd64, &FunctionDescriptor::of(big, []), None).unwrap();
/// assert_eq!(*plan.ret(), ReturnPlan::InMemory);
/// assert_eq!(plan.hidden_return_pointer(), Some(Location::Int(0)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ReturnPlan {
    /// `void`.
    Void,
    /// A scalar in one register (only its declared width is defined; see the executor for the
    /// truncate-and-extend rule).
    Scalar(Register),
    /// A struct or union returned in registers: its bytes are assembled from a register image
    /// (rax, rdx, xmm0, xmm1) by these moves.
    Registers(Vec<ReturnMove>),
    /// A struct or union returned in memory: the caller passes the destination address as a
    /// hidden first argument in [`CallPlan::hidden_return_pointer`]. SysV: the callee returns
    /// the same address in the first integer return register. AArch64: the address goes in
    /// `x8`, and the callee need not preserve or return it (AAPCS64 §6.9). s390x: every struct
    /// and union result, the address in `r2`.
    InMemory,
}

/// The complete plan of a call: pure data, computed once at link time.
///
/// ```
/// use gatun::abi::{plan_for, Abi};
/// use gatun::{FunctionDescriptor, ValueLayout as V};
/// // int printf(const char *, ...) called with one double: variadic from argument index 1.
/// let d = FunctionDescriptor::of(V::I32, [V::ADDRESS, V::F64]);
/// let plan = plan_for(Abi::SysVAmd64, &d, Some(1)).unwrap();
/// assert!(plan.is_variadic());
/// assert_eq!((plan.vector_registers(), plan.stack_bytes()), (1, 0)); // %al = 1
/// assert_eq!(plan.to_string(), "(rdi, xmm0) -> rax");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallPlan {
    /// One entry per descriptor argument, in order.
    pub(crate) args: Vec<ArgPlan>,
    /// The return value's location.
    pub(crate) ret: ReturnPlan,
    /// Where the hidden return pointer goes (SysV: `Some(Int(0))` = rdi for MEMORY returns,
    /// which shifts the integer arguments by one register; AArch64: `Some(Int(8))` = x8, which
    /// shifts nothing; s390x: `Some(Int(0))` = r2 for every struct or union
    /// result), else `None`.
    pub(crate) hidden_return_pointer: Option<Location>,
    /// Bytes of outgoing stack arguments (a multiple of 8). Win64: the shadow space included.
    /// ELFv2: the size of the parameter save area, its 64 register-shadowed bytes included
    /// (never less than 64).
    pub(crate) stack_bytes: u32,
    /// Number of vector registers used by the arguments.
    pub(crate) vector_registers: u8,
    /// `Some(i)` for a variadic call whose variadic arguments start at descriptor argument `i`;
    /// the executor then sets `%al` to [`CallPlan::vector_registers`] (SysV §3.5.7; AArch64
    /// has no such register).
    pub(crate) first_variadic: Option<usize>,
    /// `true` for Apple arm64 plans: stack moves of *named* arguments write only their own
    /// bytes, at an offset that is a multiple of the value's natural alignment, not whole
    /// 8-byte slots: exactly `size` bytes (the low bytes of the converted value) in a call of a
    /// non-variadic function, `max(size, 4)` bytes for the named arguments of a variadic call
    /// (clang extends narrow integers to 32 bits and gives them 4-byte slots there). Stack
    /// moves of variadic arguments write whole 8-byte slots. `false` (SysV AMD64, AAPCS64 Linux): every
    /// stack move writes its whole 8-byte slot. [`CallPlan::stack_write_bytes`] applies the rule.
    pub(crate) packed_named_stack: bool,
}

impl CallPlan {
    /// One entry per descriptor argument, in order (the capture segment is not one).
    pub fn args(&self) -> &[ArgPlan] {
        &self.args
    }

    /// The return value's location.
    pub fn ret(&self) -> &ReturnPlan {
        &self.ret
    }

    /// Where the hidden return pointer goes (SysV: `Some(Int(0))` = rdi for MEMORY returns,
    /// which shifts the integer arguments by one register; AArch64: `Some(Int(8))` = x8, which
    /// shifts nothing; s390x: `Some(Int(0))` = r2 for every struct or union
    /// result), else `None`.
    pub fn hidden_return_pointer(&self) -> Option<Location> {
        self.hidden_return_pointer
    }

    /// Bytes of outgoing stack arguments (a multiple of 8; at most
    /// [`MAX_STACK_BYTES`]). Win64 counts the 32-byte shadow space; ELFv2 gives the size of
    /// the parameter save area, never less than its 64 register-shadowed bytes.
    pub fn stack_bytes(&self) -> u32 {
        self.stack_bytes
    }

    /// Number of vector registers used by the arguments (SysV: `%al` of a variadic call).
    pub fn vector_registers(&self) -> u8 {
        self.vector_registers
    }

    /// `Some(i)` for a variadic call whose variadic arguments start at descriptor argument `i`.
    pub fn first_variadic(&self) -> Option<usize> {
        self.first_variadic
    }

    /// Whether stack moves of named arguments are packed at their natural size and alignment
    /// (Apple arm64; see [`CallPlan::stack_write_bytes`]); `false` for SysV AMD64 and AAPCS64
    /// Linux, whose stack moves write whole 8-byte slots.
    pub fn packed_named_stack(&self) -> bool {
        self.packed_named_stack
    }

    /// Size in bytes of the register image an executor needs to assemble a struct returned in
    /// registers (8 per register move; 0 for scalar, void and in-memory returns). This is the
    /// JDK's `returnBufferSize`.
    pub fn return_image_bytes(&self) -> usize {
        match &self.ret {
            ReturnPlan::Registers(m) => 8 * m.len(),
            _ => 0,
        }
    }

    /// Whether `%al` must be set (a variadic call).
    pub fn is_variadic(&self) -> bool {
        self.first_variadic.is_some()
    }

    /// How many bytes the stack move `m` of argument `arg` writes at its [`Location::Stack`]
    /// offset: for a named argument of a [`CallPlan::packed_named_stack`] plan `m.size` (or
    /// `max(m.size, 4)` in a variadic call), else 8 (the whole slot). Not meaningful for
    /// register moves.
    ///
    /// ```
    /// use gatun::abi::{plan_for, Abi};
    /// use gatun::layout::ValueLayout;
    /// use gatun::linker::FunctionDescriptor;
    /// let d = FunctionDescriptor::of_void(vec![ValueLayout::I8; 9]);
    /// let apple = plan_for(Abi::AppleArm64, &d, None).unwrap();
    /// assert_eq!(apple.stack_write_bytes(8, &apple.args()[8].moves[0]), 1);
    /// let linux = plan_for(Abi::Aapcs64, &d, None).unwrap();
    /// assert_eq!(linux.stack_write_bytes(8, &linux.args()[8].moves[0]), 8);
    /// ```
    pub fn stack_write_bytes(&self, arg: usize, m: &ArgMove) -> usize {
        match self.first_variadic {
            None if self.packed_named_stack => m.size as usize,
            Some(f) if self.packed_named_stack && arg < f => (m.size as usize).max(4),
            _ => 8,
        }
    }
}

/// Link-time checks shared by every classifier: the variadic index is in range, and every
/// argument and the return layout is passable by value (not padding, not a bare sequence, not
/// a zero-sized group, a group's size a multiple of its alignment).
///
/// # Errors
/// [`Error::InvalidDescriptor`] naming the descriptor and the offending argument.
pub(crate) fn check_descriptor(
    descriptor: &FunctionDescriptor,
    first_variadic: Option<usize>,
) -> Result<()> {
    let args = descriptor.argument_layouts();
    if let Some(i) = first_variadic {
        if i > args.len() {
            return Err(Error::InvalidDescriptor {
                descriptor: descriptor.to_string(),
                reason: format!(
                    "first variadic argument index {i} is out of range: the descriptor has {} argument{}",
                    args.len(),
                    crate::error::plural(args.len())
                ),
            });
        }
    }
    for (i, a) in args.iter().enumerate() {
        validate(a, &format!("argument {}", i + 1), descriptor)?;
    }
    if let Some(r) = descriptor.return_layout() {
        validate(r, "the return layout", descriptor)?;
    }
    Ok(())
}
/// Link-time checks on one argument or return layout.
fn validate(layout: &MemoryLayout, what: &str, descriptor: &FunctionDescriptor) -> Result<()> {
    let bad = |reason: String| Error::InvalidDescriptor {
        descriptor: descriptor.to_string(),
        reason,
    };
    match layout {
        MemoryLayout::Value(_) => Ok(()),
        MemoryLayout::Padding(_) => Err(bad(format!("{what} is a padding layout"))),
        MemoryLayout::Sequence(_) => Err(bad(format!(
            "{what} is a sequence layout {layout}: C cannot pass an array by value (wrap it in a struct, or pass its address)"
        ))),
        MemoryLayout::Struct(_) | MemoryLayout::Union(_) => {
            let (size, align) = (layout.byte_size(), layout.byte_alignment());
            if size == 0 {
                return Err(bad(format!("{what} is a zero-sized group {layout}")));
            }
            if size % align != 0 {
                return Err(bad(format!(
                    "{what} {layout} has size {size}, which is not a multiple of its alignment {align} (add trailing padding)"
                )));
            }
            Ok(())
        }
    }
}

/// The SysV AMD64 register names, for display.
const SYSV_INT_ARGS: [&str; 6] = ["rdi", "rsi", "rdx", "rcx", "r8", "r9"];
const SYSV_INT_RETS: [&str; 2] = ["rax", "rdx"];

impl fmt::Display for Location {
    /// SysV AMD64 names: `rdi`, `xmm3`, `stack+16`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Location::Int(n) => match SYSV_INT_ARGS.get(n as usize) {
                Some(s) => f.write_str(s),
                None => write!(f, "int{n}"),
            },
            Location::Vector(n) => write!(f, "xmm{n}"),
            Location::Stack(o) => write!(f, "stack+{o}"),
        }
    }
}

impl fmt::Display for Register {
    /// SysV AMD64 names: `rax`, `rdx`, `xmm0`, `xmm1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Register::Int(n) => match SYSV_INT_RETS.get(n as usize) {
                Some(s) => f.write_str(s),
                None => write!(f, "ret{n}"),
            },
            Register::Vector(n) => write!(f, "xmm{n}"),
        }
    }
}

impl fmt::Display for CallPlan {
    /// A compact summary: `(rdi, xmm0 | stack+0..16) -> rax+xmm0`, each argument's
    /// destinations joined by `+`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        let mut first = true;
        if let Some(h) = self.hidden_return_pointer {
            write!(f, "ret-ptr:{h}")?;
            first = false;
        }
        for a in &self.args {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            let mut inner = true;
            for m in &a.moves {
                if !inner {
                    f.write_str("+")?;
                }
                inner = false;
                write!(f, "{}", m.to)?;
            }
        }
        f.write_str(") -> ")?;
        match &self.ret {
            ReturnPlan::Void => f.write_str("void"),
            ReturnPlan::Scalar(r) => write!(f, "{r}"),
            ReturnPlan::InMemory => f.write_str("memory"),
            ReturnPlan::Registers(m) => {
                for (i, m) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str("+")?;
                    }
                    write!(f, "{}", m.from)?;
                }
                Ok(())
            }
        }
    }
}

/// Size and alignment in bytes of the C `va_list` type (`__builtin_va_list`) of this build's
/// target, or `None` where gatun does not know it: an array of one 24-byte record aligned to
/// 8 on x86-64 System V (System V AMD64 ABI §3.5.7), a 32-byte record aligned to 8 on AAPCS64
/// Linux (AAPCS64 §10.1.5), a `char *` (8 bytes) on Apple arm64 and on 64-bit Windows, a
/// `void *` (8 bytes) on RISC-V 64 (psABI "va_list, va_start, and va_arg"), a `char *` on
/// 64-bit PowerPC (ELFv2 "Variable Argument Lists", a pointer into the parameter save area).
///
/// ```
/// let va_list = gatun::abi::va_list_size_align();
/// if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
///     assert_eq!(va_list, Some((24, 8)));
/// }
/// ```
pub fn va_list_size_align() -> Option<(usize, usize)> {
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        Some((24, 8))
    } else if cfg!(any(
        all(target_arch = "aarch64", target_vendor = "apple"),
        all(target_arch = "x86_64", windows),
        target_arch = "riscv64",
        target_arch = "powerpc64"
    )) {
        Some((8, 8))
    } else if cfg!(all(target_arch = "aarch64", not(windows))) {
        Some((32, 8))
    } else {
        None
    }
}
