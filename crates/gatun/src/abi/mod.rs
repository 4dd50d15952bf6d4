//! The ABI layer: per-ABI classification of a [`crate::linker::FunctionDescriptor`] into a
//! [`CallPlan`].
//!
//! A `CallPlan` is pure data saying where every byte of every argument and of the return value
//! lives at the moment of the call: which integer register, which vector register, which
//! 8-byte slot of the outgoing stack area, or memory behind a hidden return pointer. Executors
//! (the private `call` layer: the `global_asm!` trampoline today, a compiled stub later) only carry a plan
//! out; they never classify. Tests assert plans directly ("`{int; double}` → rdi, xmm0").
//!
//! The plan types are ABI-neutral: registers are *indices* into the ABI's argument and return
//! register sequences (for SysV AMD64: integer `rdi, rsi, rdx, rcx, r8, r9`, vector
//! `xmm0..xmm7`; returns `rax, rdx` and `xmm0, xmm1`), so an AArch64 or Win64 classifier can
//! produce the same type.
//!
//! - [`sysv_x64`]: System V AMD64 (ABI §3.2.3).

pub mod sysv_x64;

use std::fmt;

/// Where one eightbyte (or less) of an argument goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Location {
    /// The n-th integer argument register (SysV: 0 = rdi, 1 = rsi, 2 = rdx, 3 = rcx, 4 = r8,
    /// 5 = r9). The whole 64-bit register is written.
    Int(u8),
    /// The n-th vector argument register (SysV: xmm0..xmm7). The low 64 bits are written.
    Vector(u8),
    /// The outgoing stack argument area at this byte offset from the stack pointer at the call
    /// instruction (a multiple of 8; the whole 8-byte slot is written).
    Stack(u32),
}

/// A register holding (part of) a return value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Register {
    /// The n-th integer return register (SysV: 0 = rax, 1 = rdx).
    Int(u8),
    /// The n-th vector return register (SysV: 0 = xmm0, 1 = xmm1).
    Vector(u8),
}

/// How the bytes of a move are turned into the 64-bit register or slot value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Conversion {
    /// Copy the bytes; the rest of the 8 bytes is zero.
    Bytes,
    /// Sign-extend a signed integer of `size` bytes to 64 bits.
    SignExtend,
    /// A C `bool`: any non-zero byte becomes 1, zero stays 0 (bool arguments are always 0 or 1).
    Bool,
    /// A `float` widened to a `double` (the default argument promotion for a variadic `float`,
    /// C11 §6.5.2.2 ¶7). `size` is 4 (the source); 8 bytes are written.
    FloatToDouble,
}

/// One move of an argument's bytes into a register or stack slot.
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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArgPlan {
    /// The moves; a scalar has one, a struct one per eightbyte (registers) or per 8-byte chunk
    /// (stack). Empty for a struct whose eightbytes are all padding.
    pub moves: Vec<ArgMove>,
    /// `Some(loc)` when the ABI passes the argument by reference to a caller-made copy (AArch64
    /// composites over 16 bytes, Win64 structs not of 1/2/4/8 bytes): the copy's address goes
    /// to `loc` and `moves` is empty. Always `None` under SysV AMD64 (structs are copied into
    /// the stack area instead); reserved so other classifiers can emit the same type.
    pub by_reference: Option<Location>,
}

/// One move of a return register's low bytes into the return value.
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
    /// hidden first argument in [`CallPlan::hidden_return_pointer`]; the callee returns the same
    /// address in the first integer return register.
    InMemory,
}

/// The complete plan of a call: pure data, computed once at link time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallPlan {
    /// One entry per descriptor argument, in order.
    pub args: Vec<ArgPlan>,
    /// The return value's location.
    pub ret: ReturnPlan,
    /// Where the hidden return pointer goes (SysV: `Some(Int(0))` = rdi for MEMORY returns,
    /// which shifts the integer arguments by one register), else `None`.
    pub hidden_return_pointer: Option<Location>,
    /// Bytes of outgoing stack arguments (a multiple of 8).
    pub stack_bytes: u32,
    /// Number of vector registers used by the arguments.
    pub vector_registers: u8,
    /// `Some(i)` for a variadic call whose variadic arguments start at descriptor argument `i`;
    /// the executor then sets `%al` to [`CallPlan::vector_registers`] (SysV §3.5.7).
    pub first_variadic: Option<usize>,
}

impl CallPlan {
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

#[cfg(test)]
mod tests;
