//! s390x classification: the z/Architecture (64-bit) calling convention of the ELF Application
//! Binary Interface s390x Supplement, §1.2 "Function-Calling Sequence" (its parameter passing
//! and return values), as Linux uses it and as gcc and clang compile it. Pure data: this
//! module compiles and is tested on every host (no `cfg(target_arch)`); on s390x Linux the
//! s390x executor carries the plans out.
//!
//! s390x is **big-endian**. Registers in the [`CallPlan`]: `Location::Int(n)` = `r(2 + n)`
//! (`r2..r6`, n < 5), `Location::Vector(n)` = `f(2n)` (`f0, f2, f4, f6`, n < 4);
//! `Register::Int(0)` = `r2`, `Register::Vector(0)` = `f0`; a struct or union result has its
//! address in `r2` ([`CallPlan::hidden_return_pointer`] `Some(Int(0))`), which shifts the
//! integer arguments by one register. `Location::Stack(off)` is the offset within the outgoing
//! argument area, which starts at `160(%r15)` at the call (below it are the 160 bytes of the
//! register save area the callee may write): the executor adds 160.
//!
//! # What a move writes
//! Every move reads exactly `size` bytes of the argument, from `offset`, and makes a 64-bit
//! value of them by its [`Conversion`]; [`Conversion::Bytes`] takes the bytes as an unsigned
//! integer in big-endian order (so a 4-byte struct `{ short a, b; }` becomes
//! `0x0000_0000_aaaa_bbbb`: the struct's image, right-justified, the rest zero).
//! - A **GPR** receives that 64-bit value.
//! - A **stack slot** (8 bytes) receives that 64-bit value stored big-endian: a value narrower
//!   than 8 bytes is **right-justified** in its slot (an `int` at slot + 4, a `float` at slot + 4
//!   as gcc's `ste %f0,164(%r15)`, a 4-byte struct at slot + 4), an 8-byte value fills it.
//! - An **FPR** receives the bytes **left-justified**: a 4-byte move is a `float` in the short
//!   format, the high 32 bits of the register (`le`); an 8-byte move (a `double`, the `double`
//!   made by [`Conversion::FloatToDouble`], or the 8-byte image of an 8-byte one-float struct)
//!   writes the whole register (`ld`).
//!
//! # The rules
//! - **Integer scalars** (integers, `bool`, pointers) take the next of `r2..r6`, else an 8-byte
//!   stack slot. A value narrower than 64 bits is extended to 64 bits by the caller, by its
//!   type: signed ones sign-extended ([`Conversion::SignExtend`]), unsigned ones (`unsigned
//!   int` included) zero-extended, `bool` 0 or 1 ([`Conversion::for_scalar`]). A scalar result
//!   in `r2` is extended the same way by the callee.
//! - **Floating-point scalars**: a `float` or `double` takes the next of `f0, f2, f4, f6`, else
//!   an 8-byte stack slot (a `float` right-justified in it). FPRs and GPRs are counted
//!   independently.
//! - **Structs and unions of exactly 1, 2, 4 or 8 bytes** are passed as the unsigned integer of
//!   their big-endian image ([`Conversion::Bytes`], one move of the whole size) in the next GPR
//!   or stack slot — whatever their members (`struct { float x, y; }` goes in a GPR).
//! - **One-float structs**: a *struct* (not a union) with exactly one member — counting every
//!   member C declares, so an empty-struct member or a zero-length array makes two — which is a
//!   `float` or `double`, or again such a struct (nested structs are walked; arrays are not,
//!   so `struct { float f[1]; }` is an ordinary 4-byte struct), and of at most 8 bytes, is
//!   passed like its floating-point member: in the next FPR, else a stack slot. The move is the
//!   struct's whole image (4 bytes: a `float`; 8 bytes: a `double`, or a `float` with 4 bytes of
//!   padding after it, whose image takes the whole FPR or slot — gcc's `ld`/`stg`, clang's
//!   `ld`/`std`). A gatun [`MemoryLayout::Padding`] member stands for C's implicit padding
//!   and is not a member.
//! - **By reference**: every other struct or union (3, 5, 6, 7, 9 or more bytes) is copied by the
//!   caller and the copy's address takes the next GPR or an 8-byte stack slot
//!   ([`ArgPlan::by_reference`]; `moves` is empty). The callee may modify the copy.
//! - **Variadic arguments** follow the same rules (a variadic `double` takes an FPR), except
//!   that a variadic `float` is promoted to `double` ([`Conversion::FloatToDouble`], C11
//!   §6.5.2.2 ¶7); a variadic one-float struct is not promoted.
//! - **Stack**: each stacked argument takes one 8-byte slot, left to right, at offsets 0, 8,
//!   16, …; [`CallPlan::stack_bytes`] is their total.
//! - **Results**: an integer scalar in `r2` (extended as above), a `float`/`double` in `f0`;
//!   every struct and union — one-float structs and 1-, 2-, 4-, 8-byte ones included — in
//!   memory whose address the caller passes in `r2` ([`ReturnPlan::InMemory`]).
//!
//! `long double` (a 16-byte IEEE binary128 on s390x Linux, passed by reference) and the vector
//! types have no layout in gatun, so no descriptor holds them. Sizes and limits are checked as
//! in the other classifiers: one stack-limit check against
//! [`MAX_STACK_BYTES`](super::MAX_STACK_BYTES), and work linear in the arguments and the length
//! of the one-member chains walked.

use crate::abi::{
    ArgMove, ArgPlan, CallPlan, Conversion, Location, Register, ReturnPlan, StackArea,
};
use crate::error::Result;
use crate::layout::{FunctionDescriptor, MemoryLayout, ScalarKind};

/// Number of integer argument registers (`r2..r6`).
pub const INT_ARG_REGS: u8 = 5;
/// Number of floating-point argument registers (`f0, f2, f4, f6`).
pub const FLOAT_ARG_REGS: u8 = 4;
/// Bytes from the stack pointer at the call to the outgoing argument area (the register save
/// area below it): `Location::Stack(off)` is at `off + 160` from `%r15`.
pub const STACK_ARGS_OFFSET: u32 = 160;

/// How a value is passed, before register assignment.
///
/// ```
/// use gatun::abi::s390x::{classify, ArgClass};
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// let one = MemoryLayout::c_struct([ValueLayout::F64]).unwrap();
/// assert_eq!(classify(&one), ArgClass::FloatStruct { size: 8 });
/// let pair = MemoryLayout::c_struct([ValueLayout::F32, ValueLayout::F32]).unwrap();
/// assert_eq!(classify(&pair), ArgClass::Small { size: 8 });
/// let three = MemoryLayout::c_struct([ValueLayout::U8; 3]).unwrap();
/// assert_eq!(classify(&three), ArgClass::Indirect);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgClass {
    /// An integer, bool or pointer scalar: one GPR or stack slot.
    Integer(ScalarKind),
    /// A `float` or `double` scalar: one FPR or stack slot.
    Float(ScalarKind),
    /// A struct whose one member is (through nested one-member structs) a `float` or `double`,
    /// of 4 or 8 bytes: its image in one FPR or stack slot. Returned in memory.
    FloatStruct {
        /// The struct's size in bytes (4 or 8).
        size: u8,
    },
    /// Another struct or union of 1, 2, 4 or 8 bytes: its image in one GPR or stack slot.
    /// Returned in memory.
    Small {
        /// The size in bytes (1, 2, 4 or 8).
        size: u8,
    },
    /// Any other struct or union: by reference to a caller-made copy; returned in memory.
    Indirect,
}

/// Whether `layout` is, through nested structs of exactly one member (padding layouts do not
/// count), a `float` or `double`. Arrays and unions end the walk (gcc walks record types
/// only). O(members on the chain).
fn is_float_like(layout: &MemoryLayout) -> bool {
    let mut at = layout;
    loop {
        match at {
            MemoryLayout::Value(v) => return v.kind().is_float(),
            MemoryLayout::Struct(s) => {
                let mut members = s
                    .members()
                    .iter()
                    .filter(|m| !matches!(m, MemoryLayout::Padding(_)));
                match (members.next(), members.next()) {
                    (Some(only), None) => at = only,
                    _ => return false,
                }
            }
            MemoryLayout::Union(_) | MemoryLayout::Sequence(_) | MemoryLayout::Padding(_) => {
                return false
            }
        }
    }
}

/// Classifies a value of `layout` (an argument; every group is returned in memory).
///
/// Cost: O(1) for a scalar; otherwise linear in the members on the one-member chain walked.
///
/// ```
/// use gatun::abi::s390x::{classify, ArgClass};
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// let nested = MemoryLayout::c_struct([MemoryLayout::c_struct([ValueLayout::F32]).unwrap()]);
/// assert_eq!(classify(&nested.unwrap()), ArgClass::FloatStruct { size: 4 });
/// let array = MemoryLayout::sequence_layout(1, ValueLayout::F32).unwrap();
/// let in_array = MemoryLayout::c_struct([array]).unwrap();
/// assert_eq!(classify(&in_array), ArgClass::Small { size: 4 });
/// ```
pub fn classify(layout: &MemoryLayout) -> ArgClass {
    if let MemoryLayout::Value(v) = layout {
        let k = v.kind();
        return if k.is_float() {
            ArgClass::Float(k)
        } else {
            ArgClass::Integer(k)
        };
    }
    let size = layout.byte_size();
    if !matches!(size, 1 | 2 | 4 | 8) {
        return ArgClass::Indirect;
    }
    if matches!(layout, MemoryLayout::Struct(_)) && is_float_like(layout) {
        ArgClass::FloatStruct { size: size as u8 }
    } else {
        ArgClass::Small { size: size as u8 }
    }
}

/// Register and stack assignment, left to right.
struct Assigner {
    /// Next integer argument register (0 = `r2`).
    ngr: u8,
    /// Next floating-point argument register (0 = `f0`).
    nfr: u8,
    stack: StackArea,
}

impl Assigner {
    fn stack_slot(&mut self) -> Location {
        // Over the stack limit: the plan is rejected, the location is never used.
        Location::Stack(self.stack.reserve_slots(1).unwrap_or(0))
    }

    fn gpr_or_stack(&mut self) -> Location {
        if self.ngr < INT_ARG_REGS {
            self.ngr += 1;
            Location::Int(self.ngr - 1)
        } else {
            self.stack_slot()
        }
    }

    fn fpr_or_stack(&mut self) -> Location {
        if self.nfr < FLOAT_ARG_REGS {
            self.nfr += 1;
            Location::Vector(self.nfr - 1)
        } else {
            self.stack_slot()
        }
    }

    fn arg(&mut self, layout: &MemoryLayout, variadic: bool) -> ArgPlan {
        let one = |size: usize, to, conv| ArgPlan {
            moves: vec![ArgMove {
                offset: 0,
                size: size as u8,
                to,
                conv,
            }],
            by_reference: None,
        };
        match classify(layout) {
            ArgClass::Integer(kind) => {
                let to = self.gpr_or_stack();
                one(kind.byte_size(), to, Conversion::for_scalar(kind, variadic))
            }
            ArgClass::Float(kind) => {
                let to = self.fpr_or_stack();
                one(kind.byte_size(), to, Conversion::for_scalar(kind, variadic))
            }
            ArgClass::FloatStruct { size } => {
                let to = self.fpr_or_stack();
                one(size as usize, to, Conversion::Bytes)
            }
            ArgClass::Small { size } => {
                let to = self.gpr_or_stack();
                one(size as usize, to, Conversion::Bytes)
            }
            ArgClass::Indirect => ArgPlan {
                moves: Vec::new(),
                by_reference: Some(self.gpr_or_stack()),
            },
        }
    }
}

/// The return plan: `r2` for integer scalars, `f0` for floating-point ones, memory for every
/// group.
fn return_plan(layout: Option<&MemoryLayout>) -> ReturnPlan {
    match layout.map(classify) {
        None => ReturnPlan::Void,
        Some(ArgClass::Integer(_)) => ReturnPlan::Scalar(Register::Int(0)),
        Some(ArgClass::Float(_)) => ReturnPlan::Scalar(Register::Vector(0)),
        Some(ArgClass::FloatStruct { .. } | ArgClass::Small { .. } | ArgClass::Indirect) => {
            ReturnPlan::InMemory
        }
    }
}

/// Plans a call of `descriptor` under the s390x ELF ABI. `first_variadic` is the index of the
/// first variadic argument (`None` for a non-variadic function; `Some(args.len())` is a
/// variadic call with no variadic arguments).
///
/// Cost: O(number of arguments + members on the one-member chains of the struct arguments),
/// independent of byte sizes.
///
/// ```
/// use gatun::abi::s390x::plan;
/// use gatun::abi::Location;
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// use gatun::linker::FunctionDescriptor;
/// // struct { double d; } in f0, the int in r2.
/// let s = MemoryLayout::c_struct([ValueLayout::F64]).unwrap();
/// let p = plan(&FunctionDescriptor::of_void([s, ValueLayout::I32.into()]), None).unwrap();
/// let to: Vec<_> = p.args().iter().map(|a| a.moves[0].to).collect();
/// assert_eq!(to, [Location::Vector(0), Location::Int(0)]);
/// ```
///
/// # Errors
/// [`Error::InvalidDescriptor`] for a padding, sequence or zero-sized argument/return, a group
/// whose size is not a multiple of its alignment, a variadic index beyond the argument count,
/// or arguments needing more than [`MAX_STACK_BYTES`] bytes of stack (the message gives the
/// bytes needed).
///
/// [`MAX_STACK_BYTES`]: super::MAX_STACK_BYTES
/// [`Error::InvalidDescriptor`]: crate::Error::InvalidDescriptor
pub fn plan(descriptor: &FunctionDescriptor, first_variadic: Option<usize>) -> Result<CallPlan> {
    crate::abi::check_descriptor(descriptor, first_variadic)?;
    let ret = return_plan(descriptor.return_layout());
    let in_memory = ret == ReturnPlan::InMemory;
    let mut asg = Assigner {
        ngr: u8::from(in_memory),
        nfr: 0,
        stack: StackArea::new(),
    };
    let args = descriptor
        .argument_layouts()
        .iter()
        .enumerate()
        .map(|(i, a)| asg.arg(a, first_variadic.is_some_and(|f| i >= f)))
        .collect();
    let stack_bytes = asg.stack.size(descriptor, "stack arguments")?;
    Ok(CallPlan {
        args,
        ret,
        hidden_return_pointer: in_memory.then_some(Location::Int(0)),
        stack_bytes,
        vector_registers: asg.nfr,
        first_variadic,
        packed_named_stack: false,
    })
}

/// The s390x name of a move's destination: `r3`, `f4`, `r15+168` (a stack slot at its address
/// from `%r15`, the 160 bytes of the register save area included).
///
/// ```
/// use gatun::abi::s390x::location_name;
/// use gatun::abi::Location;
/// assert_eq!(location_name(Location::Int(0)), "r2");
/// assert_eq!(location_name(Location::Vector(2)), "f4");
/// assert_eq!(location_name(Location::Stack(8)), "r15+168");
/// ```
pub fn location_name(loc: Location) -> String {
    match loc {
        Location::Int(n) => format!("r{}", 2 + u32::from(n)),
        Location::Vector(n) => format!("f{}", 2 * u32::from(n)),
        Location::Stack(o) => format!("r15+{}", u64::from(o) + u64::from(STACK_ARGS_OFFSET)),
    }
}

/// A compact s390x summary of a plan: `(r2:ret-ptr, r3, f0, &r4, r15+160) -> memory`
/// (`&` marks a pointer to a caller-made copy).
///
/// ```
/// use gatun::abi::s390x::{describe, plan};
/// use gatun::layout::ValueLayout;
/// use gatun::linker::FunctionDescriptor;
/// let d = FunctionDescriptor::of(ValueLayout::F64, [ValueLayout::I32, ValueLayout::F32]);
/// assert_eq!(describe(&plan(&d, None).unwrap()), "(r2, f0) -> f0");
/// ```
pub fn describe(plan: &CallPlan) -> String {
    let mut parts = Vec::new();
    if let Some(h) = plan.hidden_return_pointer {
        parts.push(format!("{}:ret-ptr", location_name(h)));
    }
    for a in &plan.args {
        if let Some(r) = a.by_reference {
            parts.push(format!("&{}", location_name(r)));
        } else {
            let m: Vec<String> = a.moves.iter().map(|m| location_name(m.to)).collect();
            parts.push(m.join("+"));
        }
    }
    let reg = |r: Register| match r {
        Register::Int(n) => format!("r{}", 2 + u32::from(n)),
        Register::Vector(n) => format!("f{}", 2 * u32::from(n)),
    };
    let ret = match &plan.ret {
        ReturnPlan::Void => "void".to_string(),
        ReturnPlan::InMemory => "memory".to_string(),
        ReturnPlan::Scalar(r) => reg(*r),
        ReturnPlan::Registers(m) => m.iter().map(|m| reg(m.from)).collect::<Vec<_>>().join("+"),
    };
    format!("({}) -> {ret}", parts.join(", "))
}

#[cfg(test)]
mod tests;
