//! System V AMD64 classification (System V Application Binary Interface, AMD64 Architecture
//! Processor Supplement, §3.2.3 "Parameter Passing").
//!
//! - Scalars: bool, integers and pointers are INTEGER; `float`/`double` are SSE.
//! - Aggregates (structs, unions, arrays inside them) larger than 16 bytes, or with a scalar at
//!   an offset that is not a multiple of its size (packed/unaligned fields), are MEMORY.
//!   Otherwise each eightbyte is classified by merging the classes of the scalars it holds
//!   (nested structs flattened, array elements one by one, union members overlaid): equal →
//!   that class; NO_CLASS yields to the other; MEMORY wins; then INTEGER wins; else SSE. An
//!   eightbyte of padding only (NO_CLASS) takes no register.
//! - Arguments are assigned left to right: INTEGER eightbytes to rdi, rsi, rdx, rcx, r8, r9,
//!   SSE eightbytes to xmm0..xmm7. If *all* eightbytes of an aggregate do not fit in the
//!   remaining registers, the whole aggregate goes on the stack and the registers stay free for
//!   later arguments. MEMORY aggregates are copied to the stack (8-byte slots; 16-byte
//!   alignment when the aggregate's alignment is 16 or more).
//! - A MEMORY return passes the destination in rdi (the hidden return pointer), shifting the
//!   integer arguments; INTEGER eightbytes of a return use rax then rdx, SSE ones xmm0 then xmm1.
//! - Variadic calls: `%al` holds the number of vector registers used (an upper bound is allowed;
//!   we give the exact count); variadic arguments get the default argument promotions
//!   (`float` → `double`; bool, char and short → int with their signedness, which in a 64-bit
//!   register or slot is a sign or zero extension we do for every small integer anyway). Fixed
//!   arguments are never promoted.
//! - Small integers (bool, char, short, int) are sign- or zero-extended to 64 bits in registers
//!   and stack slots (the ABI leaves the upper bits undefined; clang relies on extension to 32
//!   bits, so we extend), bools to exactly 0 or 1.

use crate::abi::{
    ArgMove, ArgPlan, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan,
};
use crate::error::{Error, Result};
use crate::layout::{MemoryLayout, ScalarKind};
use crate::linker::FunctionDescriptor;

/// Number of integer argument registers (rdi, rsi, rdx, rcx, r8, r9).
pub const INT_ARG_REGS: u8 = 6;
/// Number of vector argument registers (xmm0..xmm7).
pub const VECTOR_ARG_REGS: u8 = 8;

/// The class of one eightbyte (ABI §3.2.3; X87, SSEUP and COMPLEX_X87 cannot arise from gatun
/// layouts, which have no `long double` and no vector types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgClass {
    /// Padding only.
    NoClass,
    /// General-purpose registers.
    Integer,
    /// Vector registers.
    Sse,
    /// Passed in memory.
    Memory,
}

/// The classification of a whole value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Classification {
    /// Passed/returned in memory (stack copy, or hidden return pointer).
    Memory,
    /// One class per eightbyte (1 or 2 entries).
    Eightbytes(Vec<ArgClass>),
}

fn merge(a: ArgClass, b: ArgClass) -> ArgClass {
    use ArgClass::*;
    match (a, b) {
        _ if a == b => a,
        (NoClass, x) | (x, NoClass) => x,
        (Memory, _) | (_, Memory) => Memory,
        (Integer, _) | (_, Integer) => Integer,
        _ => Sse,
    }
}

fn scalar_class(kind: ScalarKind) -> ArgClass {
    if kind.is_float() {
        ArgClass::Sse
    } else {
        ArgClass::Integer
    }
}

/// Merges the classes of every scalar in `layout` (placed at byte `base`) into `classes`.
/// Returns `false` on an unaligned scalar (→ MEMORY).
fn walk(layout: &MemoryLayout, base: usize, classes: &mut [ArgClass; 2]) -> bool {
    match layout {
        MemoryLayout::Value(v) => {
            let k = v.kind();
            if base % k.natural_alignment() != 0 {
                return false;
            }
            let i = base / 8;
            classes[i] = merge(classes[i], scalar_class(k));
            true
        }
        MemoryLayout::Struct(s) => s.fields().all(|(off, m)| walk(m, base + off, classes)),
        MemoryLayout::Union(u) => u.members().iter().all(|m| walk(m, base, classes)),
        MemoryLayout::Sequence(s) => {
            let stride = s.element().byte_size();
            (0..s.count()).all(|i| walk(s.element(), base + i * stride, classes))
        }
        MemoryLayout::Padding(_) => true,
    }
}

/// Classifies a value of `layout` (ABI §3.2.3).
pub fn classify(layout: &MemoryLayout) -> Classification {
    if let MemoryLayout::Value(v) = layout {
        return Classification::Eightbytes(vec![scalar_class(v.kind())]);
    }
    let size = layout.byte_size();
    if size > 16 {
        return Classification::Memory;
    }
    let mut classes = [ArgClass::NoClass; 2];
    if !walk(layout, 0, &mut classes) {
        return Classification::Memory;
    }
    let n = size.div_ceil(8);
    if classes[..n].contains(&ArgClass::Memory) {
        return Classification::Memory;
    }
    Classification::Eightbytes(classes[..n].to_vec())
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

fn scalar_conv(kind: ScalarKind, variadic: bool) -> Conversion {
    match kind {
        ScalarKind::Bool => Conversion::Bool,
        ScalarKind::F32 if variadic => Conversion::FloatToDouble,
        k if k.is_signed() && k.byte_size() < 8 => Conversion::SignExtend,
        _ => Conversion::Bytes,
    }
}

struct Assigner {
    int: u8,
    vec: u8,
    stack: u32,
}

impl Assigner {
    fn stack_chunks(&mut self, size: usize, align: usize) -> Vec<ArgMove> {
        if align >= 16 {
            self.stack = self.stack.next_multiple_of(16);
        }
        let moves = (0..size.div_ceil(8))
            .map(|k| ArgMove {
                offset: (8 * k) as u32,
                size: (size - 8 * k).min(8) as u8,
                to: Location::Stack(self.stack + (8 * k) as u32),
                conv: Conversion::Bytes,
            })
            .collect();
        self.stack += (size.div_ceil(8) * 8) as u32;
        moves
    }

    fn arg(&mut self, layout: &MemoryLayout, variadic: bool) -> ArgPlan {
        if let MemoryLayout::Value(v) = layout {
            let kind = v.kind();
            let conv = scalar_conv(kind, variadic);
            let to = if kind.is_float() && self.vec < VECTOR_ARG_REGS {
                self.vec += 1;
                Location::Vector(self.vec - 1)
            } else if !kind.is_float() && self.int < INT_ARG_REGS {
                self.int += 1;
                Location::Int(self.int - 1)
            } else {
                let s = self.stack;
                self.stack += 8;
                Location::Stack(s)
            };
            return ArgPlan {
                moves: vec![ArgMove {
                    offset: 0,
                    size: kind.byte_size() as u8,
                    to,
                    conv,
                }],
                by_reference: None,
            };
        }
        let size = layout.byte_size();
        let classes = match classify(layout) {
            Classification::Memory => {
                return ArgPlan {
                    moves: self.stack_chunks(size, layout.byte_alignment()),
                    by_reference: None,
                }
            }
            Classification::Eightbytes(c) => c,
        };
        let need_int = classes.iter().filter(|&&c| c == ArgClass::Integer).count() as u8;
        let need_vec = classes.iter().filter(|&&c| c == ArgClass::Sse).count() as u8;
        if self.int + need_int > INT_ARG_REGS || self.vec + need_vec > VECTOR_ARG_REGS {
            return ArgPlan {
                moves: self.stack_chunks(size, layout.byte_alignment()),
                by_reference: None,
            };
        }
        let mut moves = Vec::with_capacity(classes.len());
        for (k, c) in classes.iter().enumerate() {
            let to = match c {
                ArgClass::Integer => {
                    self.int += 1;
                    Location::Int(self.int - 1)
                }
                ArgClass::Sse => {
                    self.vec += 1;
                    Location::Vector(self.vec - 1)
                }
                _ => continue,
            };
            moves.push(ArgMove {
                offset: (8 * k) as u32,
                size: (size - 8 * k).min(8) as u8,
                to,
                conv: Conversion::Bytes,
            });
        }
        ArgPlan {
            moves,
            by_reference: None,
        }
    }
}

/// Plans a call of `descriptor` under SysV AMD64. `first_variadic` is the index of the first
/// variadic argument (`None` for a non-variadic function; `Some(args.len())` is a variadic call
/// with no variadic arguments).
///
/// # Errors
/// [`Error::InvalidDescriptor`] for a padding, sequence or zero-sized argument/return, a group
/// whose size is not a multiple of its alignment, or a variadic index beyond the argument count.
pub fn plan(descriptor: &FunctionDescriptor, first_variadic: Option<usize>) -> Result<CallPlan> {
    let args = descriptor.argument_layouts();
    if let Some(i) = first_variadic {
        if i > args.len() {
            return Err(Error::InvalidDescriptor {
                descriptor: descriptor.to_string(),
                reason: format!(
                    "first variadic argument index {i} is out of range: the descriptor has {} arguments",
                    args.len()
                ),
            });
        }
    }
    for (i, a) in args.iter().enumerate() {
        validate(a, &format!("argument {i}"), descriptor)?;
    }
    if let Some(r) = descriptor.return_layout() {
        validate(r, "the return layout", descriptor)?;
    }
    let mut asg = Assigner {
        int: 0,
        vec: 0,
        stack: 0,
    };
    let (ret, hidden_return_pointer) = match descriptor.return_layout() {
        None => (ReturnPlan::Void, None),
        Some(MemoryLayout::Value(v)) => (
            ReturnPlan::Scalar(if v.kind().is_float() {
                Register::Vector(0)
            } else {
                Register::Int(0)
            }),
            None,
        ),
        Some(r) => match classify(r) {
            Classification::Memory => {
                asg.int = 1;
                (ReturnPlan::InMemory, Some(Location::Int(0)))
            }
            Classification::Eightbytes(classes) => {
                let size = r.byte_size();
                let (mut ni, mut nv) = (0u8, 0u8);
                let mut moves = Vec::with_capacity(2);
                for (k, c) in classes.iter().enumerate() {
                    let from = match c {
                        ArgClass::Integer => {
                            ni += 1;
                            Register::Int(ni - 1)
                        }
                        ArgClass::Sse => {
                            nv += 1;
                            Register::Vector(nv - 1)
                        }
                        _ => continue,
                    };
                    moves.push(ReturnMove {
                        from,
                        offset: (8 * k) as u32,
                        size: (size - 8 * k).min(8) as u8,
                    });
                }
                (ReturnPlan::Registers(moves), None)
            }
        },
    };
    let arg_plans = args
        .iter()
        .enumerate()
        .map(|(i, a)| asg.arg(a, first_variadic.is_some_and(|f| i >= f)))
        .collect();
    Ok(CallPlan {
        args: arg_plans,
        ret,
        hidden_return_pointer,
        stack_bytes: asg.stack.next_multiple_of(8),
        vector_registers: asg.vec,
        first_variadic,
    })
}
