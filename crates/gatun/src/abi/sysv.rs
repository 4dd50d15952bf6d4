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

use std::collections::HashSet;

use crate::abi::{
    ArgMove, ArgPlan, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan, StackArea,
};
use crate::error::Result;
use crate::layout::{FunctionDescriptor, MemoryLayout, ScalarKind};

/// Number of integer argument registers (rdi, rsi, rdx, rcx, r8, r9).
pub const INT_ARG_REGS: u8 = 6;
/// Number of vector argument registers (xmm0..xmm7).
pub const VECTOR_ARG_REGS: u8 = 8;

/// The class of one eightbyte (ABI §3.2.3; X87, SSEUP and COMPLEX_X87 cannot arise from gatun
/// layouts, which have no `long double` and no vector types).
///
/// ```
/// use gatun::abi::sysv::{classify, ArgClass, Classification};
/// use gatun::{MemoryLayout, ValueLayout as V};
/// let s = MemoryLayout::c_struct([V::I32, V::F32, V::F64]).unwrap();
/// assert_eq!(classify(&s), Classification::Eightbytes(vec![ArgClass::Integer, ArgClass::Sse]));
/// ```
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
///
/// ```
/// use gatun::abi::sysv::{classify, Classification};
/// use gatun::{MemoryLayout, ValueLayout as V};
/// let big = MemoryLayout::c_struct([V::I64, V::I64, V::I64]).unwrap(); // over 16 bytes
/// assert_eq!(classify(&big), Classification::Memory);
/// ```
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

#[cfg(test)]
thread_local! {
    /// Layout nodes visited by [`Walker::walk`] on this thread (tests bound the work by it).
    pub(crate) static VISITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Merges the classes of the scalars of an aggregate of at most 16 bytes.
///
/// Work is bounded by the distinct work, not by the tree expansion: a zero-size member or
/// element holds no bytes and is skipped (so `struct e z[1 << 62]` inside a 4-byte struct costs
/// one step), every other sub-layout is at most 16 bytes (so a sequence inside has at most 16
/// elements), and each group node is walked at most once per base offset (merging is
/// idempotent), so members shared through `Arc`s (a union of unions of unions …) are walked once.
struct Walker {
    classes: [ArgClass; 2],
    /// `(address of the group's members or element, base offset)` already merged.
    seen: Visited,
}

/// A set of `(node, base)` pairs: the first [`Visited::INLINE`] in an array searched linearly
/// (no allocation for the usual small aggregate), all of them in a hash set once there are more
/// (a ≤ 16-byte union may still have any number of distinct members), so every insertion costs
/// O(1) whatever the number of nodes.
struct Visited {
    inline: [(usize, usize); Visited::INLINE],
    len: usize,
    spilled: Option<HashSet<(usize, usize)>>,
}

impl Visited {
    const INLINE: usize = 16;

    fn new() -> Self {
        Visited {
            inline: [(0, 0); Visited::INLINE],
            len: 0,
            spilled: None,
        }
    }

    /// Adds `key`; `true` if it was not there yet.
    fn insert(&mut self, key: (usize, usize)) -> bool {
        if let Some(set) = &mut self.spilled {
            return set.insert(key);
        }
        if self.inline[..self.len].contains(&key) {
            return false;
        }
        if self.len < Visited::INLINE {
            self.inline[self.len] = key;
            self.len += 1;
        } else {
            let mut set: HashSet<_> = self.inline.iter().copied().collect();
            set.insert(key);
            self.spilled = Some(set);
        }
        true
    }

    /// Whether the pairs moved to a hash set (tests check both representations).
    #[cfg(test)]
    fn is_spilled(&self) -> bool {
        self.spilled.is_some()
    }
}

impl Walker {
    /// `true` the first time the group at `node` is seen at `base`.
    fn first_visit(&mut self, node: usize, base: usize) -> bool {
        self.seen.insert((node, base))
    }

    /// Merges every scalar of `layout` placed at byte `base` (within the first 16 bytes).
    /// Returns `false` on an unaligned scalar (→ MEMORY).
    fn walk(&mut self, layout: &MemoryLayout, base: usize) -> bool {
        #[cfg(test)]
        VISITS.with(|v| v.set(v.get() + 1));
        if layout.byte_size() == 0 {
            return true;
        }
        match layout {
            MemoryLayout::Value(v) => {
                let k = v.kind();
                if base % k.natural_alignment() != 0 {
                    return false;
                }
                let i = base / 8;
                self.classes[i] = merge(self.classes[i], scalar_class(k));
                true
            }
            MemoryLayout::Struct(s) => {
                if !self.first_visit(s.members().as_ptr() as usize, base) {
                    return true;
                }
                s.fields().all(|(off, m)| self.walk(m, base + off))
            }
            MemoryLayout::Union(u) => {
                if !self.first_visit(u.members().as_ptr() as usize, base) {
                    return true;
                }
                u.members().iter().all(|m| self.walk(m, base))
            }
            MemoryLayout::Sequence(s) => {
                let element = s.element();
                if !self.first_visit(element as *const MemoryLayout as usize, base) {
                    return true;
                }
                // Non-zero size (checked above) and at most 16 bytes in all: at most 16 elements.
                let stride = element.byte_size();
                (0..s.count()).all(|i| self.walk(element, base + i * stride))
            }
            MemoryLayout::Padding(_) => true,
        }
    }
}

/// Classifies a value of `layout` (ABI §3.2.3).
///
/// Cost: O(1) for a layout of more than 16 bytes (always MEMORY, never walked); otherwise
/// linear in the number of distinct sub-layouts (see `Walker`), whatever the element counts.
pub fn classify(layout: &MemoryLayout) -> Classification {
    if let MemoryLayout::Value(v) = layout {
        return Classification::Eightbytes(vec![scalar_class(v.kind())]);
    }
    let size = layout.byte_size();
    if size > 16 {
        return Classification::Memory;
    }
    let mut walker = Walker {
        classes: [ArgClass::NoClass; 2],
        seen: Visited::new(),
    };
    if !walker.walk(layout, 0) {
        return Classification::Memory;
    }
    let classes = walker.classes;
    let n = size.div_ceil(8);
    if classes[..n].contains(&ArgClass::Memory) {
        return Classification::Memory;
    }
    Classification::Eightbytes(classes[..n].to_vec())
}

/// Register and stack assignment, left to right.
///
/// `stack` is the outgoing stack area (8-byte slots; see [`StackArea`]). Once it passes
/// [`MAX_STACK_BYTES`] no more moves are built (the plan is an error anyway), so a huge
/// by-value struct costs O(1) here, not one move per eightbyte; every `Location::Stack` offset
/// built is below the limit.
///
/// [`MAX_STACK_BYTES`]: super::MAX_STACK_BYTES
struct Assigner {
    int: u8,
    vec: u8,
    stack: StackArea,
}

impl Assigner {
    fn stack_chunks(&mut self, size: usize, align: usize) -> Vec<ArgMove> {
        // `size` <= isize::MAX (a layout invariant), so rounding up to 8 cannot overflow.
        let align = if align >= 16 { 16 } else { 8 };
        let Some(start) = self.stack.reserve(size.div_ceil(8) * 8, align) else {
            return Vec::new();
        };
        // Within the limit: at most MAX_STACK_BYTES / 8 moves, offsets fit in u32.
        (0..size.div_ceil(8))
            .map(|k| ArgMove {
                offset: (8 * k) as u32,
                size: (size - 8 * k).min(8) as u8,
                to: Location::Stack(start + (8 * k) as u32),
                conv: Conversion::Bytes,
            })
            .collect()
    }

    fn arg(&mut self, layout: &MemoryLayout, variadic: bool) -> ArgPlan {
        if let MemoryLayout::Value(v) = layout {
            let kind = v.kind();
            let conv = Conversion::for_scalar(kind, variadic);
            let to = if kind.is_float() && self.vec < VECTOR_ARG_REGS {
                self.vec += 1;
                Location::Vector(self.vec - 1)
            } else if !kind.is_float() && self.int < INT_ARG_REGS {
                self.int += 1;
                Location::Int(self.int - 1)
            } else {
                match self.stack.reserve_slots(1) {
                    Some(s) => Location::Stack(s),
                    // Over the stack limit: the plan is rejected, this move is never used.
                    None => Location::Stack(0),
                }
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
/// This is the one place where descriptors are checked against the executor's limits, before
/// any per-eightbyte work: downcalls ([`crate::linker::Linker::downcall`]) and upcalls
/// ([`crate::linker::Linker::upcall_stub`]) both call it, so they reject the same descriptors
/// with the same message. Cost: O(number of arguments + distinct sub-layouts of the ≤ 16-byte
/// aggregates), independent of the byte sizes (a by-value struct of 2^62 bytes is rejected
/// without building a move per eightbyte).
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
    let args = descriptor.argument_layouts();
    crate::abi::check_descriptor(descriptor, first_variadic)?;
    let mut asg = Assigner {
        int: 0,
        vec: 0,
        stack: StackArea::new(),
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
    let stack_bytes = asg.stack.size(descriptor, "stack arguments")?;
    Ok(CallPlan {
        args: arg_plans,
        ret,
        hidden_return_pointer,
        stack_bytes,
        vector_registers: asg.vec,
        first_variadic,
        packed_named_stack: false,
    })
}

#[cfg(test)]
mod tests;
