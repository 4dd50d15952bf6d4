//! RISC-V 64 classification: the LP64D calling convention of the RISC-V ELF psABI
//! ("Integer Calling Convention" and "Hardware Floating-point Calling Convention", with
//! XLEN = FLEN = 64) as Linux uses it. Pure data: this module compiles and is tested on every
//! host (no `cfg(target_arch)`); on RISC-V 64 Linux the executor of `backend::riscv64` carries
//! the plans out.
//!
//! Registers in the [`CallPlan`]: `Location::Int(n)` = `a_n` (`x10 + n`, n < 8),
//! `Location::Vector(n)` = `fa_n` (`f10 + n`): a 4-byte move is a `float`, NaN-boxed in the
//! 64-bit register (upper 32 bits all ones, psABI "Hardware Floating-point Calling
//! Convention"), an 8-byte move or a [`Conversion::FloatToDouble`] a `double`;
//! `Register::Int(0..2)` = `a0, a1`, `Register::Vector(0..2)` = `fa0, fa1`; a struct returned
//! in memory has its address in `a0` ([`CallPlan::hidden_return_pointer`] `Some(Int(0))`), which
//! shifts the integer arguments by one register.
//!
//! # The rules
//! - **Integer scalars** (integers, `bool`, pointers) take the next of `a0..a7`, else an 8-byte
//!   stack slot. A value narrower than 64 bits is widened by the caller: to 32 bits by the sign
//!   of its type, then **sign-extended** to 64 bits — so an `unsigned int` is sign-extended
//!   (its conversion is [`Conversion::SignExtend`]), `unsigned char`/`unsigned short`/`bool`
//!   are zero-extended, the signed ones sign-extended. The callee may rely on it (gcc's
//!   `addw`/`sext.w`-free code does), and a scalar returned in `a0` follows the same rule.
//! - **Floating-point scalars**: a named `float`/`double` takes the next of `fa0..fa7`; once
//!   those are used up it follows the integer rule (a GPR, then the stack), as its raw bits.
//! - **Variadic arguments** follow the integer rule only: a variadic `double` goes in a GPR or
//!   stack slot, a variadic `float` is promoted to `double` first (C11 §6.5.2.2 ¶7). A variadic
//!   argument of 16-byte alignment (and at most 16 bytes) starts at an **even** register (the
//!   skipped register stays unused); if none is left it goes on the stack.
//! - **Structs in FPRs** (named arguments and returns only): a struct is *flattened* — nested
//!   structs and arrays are walked, members of zero size that are structs are skipped — and if
//!   it has exactly one or two leaves which are `float`/`double`, it takes one FPR per leaf; if
//!   it has one `float`/`double` leaf and one integer leaf (not a pointer: gcc and clang treat
//!   pointers as ineligible), it takes one FPR and one GPR, in either member order. Each leaf is
//!   moved from its own offset with its own width, so padding between them is never read. This
//!   applies only while enough registers of **each** kind remain; otherwise the struct follows
//!   the integer rule. A union, a pointer leaf, a zero-length array or an array whose element
//!   has no leaves anywhere inside (gcc's rule; they may look empty, but they make the struct
//!   ineligible), or more than two leaves, make the struct ineligible — except that a struct
//!   whose only member of non-zero size is (through nested structs and one-element arrays) a
//!   `float`/`double` as large as the struct still takes one FPR: gcc gives it the scalar's
//!   machine mode and passes it as that scalar.
//! - **Other aggregates of at most 16 bytes** go in one or two GPRs, 8 bytes each, the last
//!   move reading only the bytes that exist (a 12-byte struct is 8 + 4 bytes); if one GPR is
//!   left, the first 8 bytes go in `a7` and the rest on the stack; if none, on the stack.
//! - **Aggregates over 16 bytes** are passed by reference to a caller-made copy
//!   ([`ArgPlan::by_reference`]): the copy's address takes a GPR or an 8-byte stack slot.
//! - **Stack**: each stacked argument is aligned to the larger of 8 and its alignment (at most
//!   16) and takes its size rounded up to 8; the area is 16-byte aligned at the call.
//! - **Results**: a scalar in `a0` or `fa0`; a struct eligible for FPRs in `fa0`/`fa1` or
//!   `fa0` + `a0` (FP registers are always free for a result); another aggregate of at most
//!   16 bytes in `a0`, `a1`; anything larger in memory whose address the caller passes in `a0`.
//!
//! `long double` (a 16-byte IEEE quad on RISC-V Linux) has no layout in gatun, so the rules for
//! 2×XLEN scalars never apply. Sizes and limits are checked as in the other classifiers: one
//! stack-limit check against [`MAX_STACK_BYTES`](super::MAX_STACK_BYTES), and work linear in
//! the distinct sub-layouts (flattening memoizes each group node and stops past two leaves).

use std::collections::HashMap;

use crate::abi::{
    ArgMove, ArgPlan, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan, StackArea,
};
use crate::error::Result;
use crate::layout::{FunctionDescriptor, MemoryLayout, ScalarKind};

/// Number of integer argument registers (`a0..a7`).
pub const INT_ARG_REGS: u8 = 8;
/// Number of floating-point argument registers (`fa0..fa7`).
pub const FLOAT_ARG_REGS: u8 = 8;

/// One leaf of a flattened struct: a scalar of `kind` at byte `offset` from the struct's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Leaf {
    /// The scalar's kind (never [`ScalarKind::Pointer`]).
    pub kind: ScalarKind,
    /// Byte offset within the struct.
    pub offset: u32,
}

/// How a value is passed, before register assignment.
///
/// ```
/// use gatun::abi::riscv64::{classify, ArgClass, Leaf};
/// use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
/// let s = MemoryLayout::c_struct([ValueLayout::F64, ValueLayout::I32]).unwrap();
/// assert_eq!(
///     classify(&s),
///     ArgClass::FloatInt {
///         float: Leaf { kind: ScalarKind::F64, offset: 0 },
///         int: Leaf { kind: ScalarKind::I32, offset: 8 },
///     }
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgClass {
    /// An integer, bool or pointer scalar: one GPR or stack slot.
    Integer(ScalarKind),
    /// A `float` or `double` scalar: one FPR, else as an integer.
    Float(ScalarKind),
    /// A struct of one or two `float`/`double` leaves: one FPR each (named arguments and
    /// returns), else the integer rule.
    Floats {
        /// The leaves, in member order.
        leaves: [Leaf; 2],
        /// How many of `leaves` are used (1 or 2).
        count: u8,
    },
    /// A struct of one `float`/`double` leaf and one integer leaf: one FPR and one GPR (named
    /// arguments and returns), else the integer rule.
    FloatInt {
        /// The floating-point leaf.
        float: Leaf,
        /// The integer leaf (not a pointer).
        int: Leaf,
    },
    /// Another aggregate of at most 16 bytes: `size.div_ceil(8)` GPRs or stack units.
    Aggregate {
        /// Whether its alignment is 16 (a variadic one then starts at an even register).
        align16: bool,
    },
    /// An aggregate over 16 bytes: by reference to a caller-made copy; returned in memory.
    Indirect,
}

/// The flattening of a group node: `None` = ineligible for the FP convention, else its leaves
/// (at most 2) with offsets relative to the node.
type Flat = Option<([Leaf; 2], u8)>;

/// Flattens structs with one memo entry per distinct group node, so shared sub-layouts cost
/// their number of distinct nodes; leaf counts above two stop the walk.
struct Flattener {
    memo: HashMap<(usize, usize), Flat>,
}

#[cfg(test)]
thread_local! {
    /// Group nodes flattened on this thread (tests bound the work by it).
    pub(crate) static VISITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Appends `extra` leaves (shifted by `base` bytes) to `acc`; `None` past two leaves or on an
/// offset that does not fit `u32`.
fn append(acc: &mut ([Leaf; 2], u8), extra: &([Leaf; 2], u8), base: usize) -> Option<()> {
    for leaf in &extra.0[..extra.1 as usize] {
        if acc.1 == 2 {
            return None;
        }
        let offset = u32::try_from(base).ok()?.checked_add(leaf.offset)?;
        acc.0[acc.1 as usize] = Leaf {
            kind: leaf.kind,
            offset,
        };
        acc.1 += 1;
    }
    Some(())
}

const NO_LEAVES: ([Leaf; 2], u8) = (
    [Leaf {
        kind: ScalarKind::I8,
        offset: 0,
    }; 2],
    0,
);

impl Flattener {
    fn flatten(&mut self, layout: &MemoryLayout) -> Flat {
        let key = match layout {
            MemoryLayout::Value(v) => {
                let kind = v.kind();
                if kind == ScalarKind::Pointer {
                    return None;
                }
                let mut one = NO_LEAVES;
                one.0[0] = Leaf { kind, offset: 0 };
                one.1 = 1;
                return Some(one);
            }
            // Explicit padding stands for the implicit padding of C: no leaf.
            MemoryLayout::Padding(_) => return Some(NO_LEAVES),
            // gcc flattens structs and arrays only.
            MemoryLayout::Union(_) => return None,
            MemoryLayout::Struct(s) => (s.members().as_ptr() as usize, usize::MAX),
            MemoryLayout::Sequence(s) => (s.element() as *const MemoryLayout as usize, s.count()),
        };
        if let Some(&known) = self.memo.get(&key) {
            return known;
        }
        #[cfg(test)]
        VISITS.with(|v| v.set(v.get() + 1));
        let flat = match layout {
            MemoryLayout::Struct(s) => {
                let mut acc = NO_LEAVES;
                s.fields()
                    .try_for_each(|(offset, m)| append(&mut acc, &self.flatten(m)?, offset))
                    .map(|()| acc)
            }
            MemoryLayout::Sequence(s) => {
                // A zero-length array, or one whose element has no leaf, is ineligible (gcc).
                match self.flatten(s.element()) {
                    Some(sub) if sub.1 > 0 && s.count() > 0 && s.count() <= 2 => {
                        let mut acc = NO_LEAVES;
                        let stride = s.element().byte_size();
                        (0..s.count())
                            .try_for_each(|k| append(&mut acc, &sub, k * stride))
                            .map(|()| acc)
                    }
                    _ => None,
                }
            }
            MemoryLayout::Value(_) | MemoryLayout::Padding(_) | MemoryLayout::Union(_) => None,
        };
        self.memo.insert(key, flat);
        flat
    }
}

/// gcc's second way into an FPR: a struct whose only member of non-zero size is (through
/// nested structs and one-element arrays) a `float`/`double` of the struct's whole size has that
/// scalar's machine mode, and gcc passes it as the scalar even when a zero-size member made the
/// flattening fail (a zero-length array, an array of empty structs). Unions never qualify (gcc
/// gives them integer modes). Walks one chain of members: O(members on the chain).
fn float_mode(layout: &MemoryLayout) -> Option<ScalarKind> {
    match layout {
        MemoryLayout::Value(v) if v.kind().is_float() => Some(v.kind()),
        MemoryLayout::Struct(s) => {
            let mut sized = s.members().iter().filter(|m| m.byte_size() > 0);
            let only = sized.next()?;
            if sized.next().is_some() || only.byte_size() != layout.byte_size() {
                return None;
            }
            float_mode(only)
        }
        MemoryLayout::Sequence(s) if s.count() == 1 => float_mode(s.element()),
        _ => None,
    }
}

/// Classifies a value of `layout`.
///
/// Cost: O(1) for a scalar; otherwise linear in the number of distinct group nodes reached
/// before the flattening has more than two leaves (shared sub-layouts are walked once).
///
/// ```
/// use gatun::abi::riscv64::{classify, ArgClass};
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// let pair = MemoryLayout::c_struct([ValueLayout::F32, ValueLayout::F32]).unwrap();
/// assert!(matches!(classify(&pair), ArgClass::Floats { count: 2, .. }));
/// let with_ptr = MemoryLayout::c_struct([ValueLayout::F64, ValueLayout::ADDRESS]).unwrap();
/// assert_eq!(classify(&with_ptr), ArgClass::Aggregate { align16: false });
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
    if matches!(layout, MemoryLayout::Struct(_)) {
        let mut f = Flattener {
            memo: HashMap::new(),
        };
        if let Some((leaves, count)) = f.flatten(layout) {
            let floats = leaves[..count as usize]
                .iter()
                .filter(|l| l.kind.is_float())
                .count();
            match (count, floats) {
                (1..=2, n) if n == count as usize => return ArgClass::Floats { leaves, count },
                (2, 1) => {
                    let (float, int) = if leaves[0].kind.is_float() {
                        (leaves[0], leaves[1])
                    } else {
                        (leaves[1], leaves[0])
                    };
                    return ArgClass::FloatInt { float, int };
                }
                _ => {}
            }
        } else if let Some(kind) = float_mode(layout) {
            let mut leaves = NO_LEAVES.0;
            leaves[0] = Leaf { kind, offset: 0 };
            return ArgClass::Floats { leaves, count: 1 };
        }
    }
    if layout.byte_size() > 16 {
        ArgClass::Indirect
    } else {
        ArgClass::Aggregate {
            align16: layout.byte_alignment() >= 16,
        }
    }
}

/// How an integer scalar of `kind` is widened into a 64-bit register or slot: RV64 keeps every
/// 32-bit value sign-extended, `unsigned int` included.
fn int_conversion(kind: ScalarKind, variadic: bool) -> Conversion {
    match kind {
        ScalarKind::U32 => Conversion::SignExtend,
        k => Conversion::for_scalar(k, variadic),
    }
}

/// Register and stack assignment, left to right.
struct Assigner {
    /// Next integer argument register.
    ngr: u8,
    /// Next floating-point argument register.
    nfr: u8,
    stack: StackArea,
}

impl Assigner {
    fn stack_slot(&mut self) -> Location {
        // Over the stack limit: the plan is rejected, the location is never used.
        Location::Stack(self.stack.reserve(8, 8).unwrap_or(0))
    }

    fn gpr_or_stack(&mut self) -> Location {
        if self.ngr < INT_ARG_REGS {
            self.ngr += 1;
            Location::Int(self.ngr - 1)
        } else {
            self.stack_slot()
        }
    }

    /// A leaf of an FP-eligible struct in register `to`.
    fn leaf_move(leaf: Leaf, to: Location) -> ArgMove {
        ArgMove {
            offset: leaf.offset,
            size: leaf.kind.byte_size() as u8,
            to,
            conv: if leaf.kind.is_float() {
                Conversion::Bytes
            } else {
                int_conversion(leaf.kind, false)
            },
        }
    }

    /// The integer rule for an aggregate of `size` (1..=16) bytes: GPRs, a GPR/stack split, or
    /// the stack at `align`.
    fn aggregate(&mut self, size: usize, align: usize, even: bool) -> Vec<ArgMove> {
        let units = size.div_ceil(8);
        if even && self.ngr % 2 == 1 {
            self.ngr += 1;
        }
        let chunk = |k: usize, to| ArgMove {
            offset: (8 * k) as u32,
            size: (size - 8 * k).min(8) as u8,
            to,
            conv: Conversion::Bytes,
        };
        let in_regs = (INT_ARG_REGS.saturating_sub(self.ngr) as usize).min(units);
        let first = self.ngr;
        self.ngr += in_regs as u8;
        let mut moves: Vec<ArgMove> = (0..in_regs)
            .map(|k| chunk(k, Location::Int(first + k as u8)))
            .collect();
        if in_regs < units {
            let rest = units - in_regs;
            // A split aggregate's stack part is the first stacked argument (offset 0); an
            // aggregate wholly on the stack is aligned as its type (at most 16).
            let align = if in_regs == 0 { align.clamp(8, 16) } else { 8 };
            let Some(start) = self.stack.reserve(8 * rest, align) else {
                return moves;
            };
            moves.extend(
                (in_regs..units)
                    .map(|k| chunk(k, Location::Stack(start + (8 * (k - in_regs)) as u32))),
            );
        }
        moves
    }

    fn arg(&mut self, layout: &MemoryLayout, variadic: bool) -> ArgPlan {
        let plain = |moves| ArgPlan {
            moves,
            by_reference: None,
        };
        let size = layout.byte_size();
        match classify(layout) {
            ArgClass::Float(kind) if !variadic && self.nfr < FLOAT_ARG_REGS => {
                self.nfr += 1;
                plain(vec![ArgMove {
                    offset: 0,
                    size: kind.byte_size() as u8,
                    to: Location::Vector(self.nfr - 1),
                    conv: Conversion::Bytes,
                }])
            }
            ArgClass::Integer(kind) | ArgClass::Float(kind) => {
                let to = self.gpr_or_stack();
                plain(vec![ArgMove {
                    offset: 0,
                    size: kind.byte_size() as u8,
                    to,
                    conv: int_conversion(kind, variadic),
                }])
            }
            ArgClass::Floats { leaves, count }
                if !variadic && self.nfr + count <= FLOAT_ARG_REGS =>
            {
                let first = self.nfr;
                self.nfr += count;
                plain(
                    (0..count)
                        .map(|k| Self::leaf_move(leaves[k as usize], Location::Vector(first + k)))
                        .collect(),
                )
            }
            ArgClass::FloatInt { float, int }
                if !variadic && self.nfr < FLOAT_ARG_REGS && self.ngr < INT_ARG_REGS =>
            {
                let (f, g) = (self.nfr, self.ngr);
                self.nfr += 1;
                self.ngr += 1;
                let mut moves = [
                    Self::leaf_move(float, Location::Vector(f)),
                    Self::leaf_move(int, Location::Int(g)),
                ];
                moves.sort_by_key(|m| m.offset);
                plain(moves.to_vec())
            }
            // An FP-eligible struct over 16 bytes (its alignment made it so) that found no
            // registers for it is an aggregate over 16 bytes like any other.
            ArgClass::Indirect | ArgClass::Floats { .. } | ArgClass::FloatInt { .. }
                if size > 16 =>
            {
                ArgPlan {
                    moves: Vec::new(),
                    by_reference: Some(self.gpr_or_stack()),
                }
            }
            ArgClass::Indirect
            | ArgClass::Floats { .. }
            | ArgClass::FloatInt { .. }
            | ArgClass::Aggregate { .. } => {
                let align = layout.byte_alignment();
                plain(self.aggregate(size, align, variadic && align >= 16))
            }
        }
    }
}

/// The return plan: the first named argument's rules with every register free.
fn return_plan(layout: Option<&MemoryLayout>) -> ReturnPlan {
    let Some(layout) = layout else {
        return ReturnPlan::Void;
    };
    let size = layout.byte_size();
    let from = |leaf: Leaf, from| ReturnMove {
        from,
        offset: leaf.offset,
        size: leaf.kind.byte_size() as u8,
    };
    match classify(layout) {
        ArgClass::Integer(_) => ReturnPlan::Scalar(Register::Int(0)),
        ArgClass::Float(_) => ReturnPlan::Scalar(Register::Vector(0)),
        ArgClass::Floats { leaves, count } => ReturnPlan::Registers(
            (0..count)
                .map(|k| from(leaves[k as usize], Register::Vector(k)))
                .collect(),
        ),
        ArgClass::FloatInt { float, int } => {
            let mut moves = vec![
                from(float, Register::Vector(0)),
                from(int, Register::Int(0)),
            ];
            moves.sort_by_key(|m| m.offset);
            ReturnPlan::Registers(moves)
        }
        ArgClass::Aggregate { .. } => ReturnPlan::Registers(
            (0..size.div_ceil(8))
                .map(|k| ReturnMove {
                    from: Register::Int(k as u8),
                    offset: 8 * k as u32,
                    size: (size - 8 * k).min(8) as u8,
                })
                .collect(),
        ),
        ArgClass::Indirect => ReturnPlan::InMemory,
    }
}

/// Plans a call of `descriptor` under LP64D. `first_variadic` is the index of the first
/// variadic argument (`None` for a non-variadic function; `Some(args.len())` is a variadic
/// call with no variadic arguments).
///
/// Cost: O(number of arguments + distinct sub-layouts of the struct arguments flattened),
/// independent of byte sizes.
///
/// ```
/// use gatun::abi::riscv64::plan;
/// use gatun::abi::Location;
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// use gatun::linker::FunctionDescriptor;
/// // struct { float x; int n; }: x in fa0, n in a0.
/// let s = MemoryLayout::c_struct([ValueLayout::F32, ValueLayout::I32]).unwrap();
/// let p = plan(&FunctionDescriptor::of_void([s]), None).unwrap();
/// let regs: Vec<_> = p.args()[0].moves.iter().map(|m| m.to).collect();
/// assert_eq!(regs, [Location::Vector(0), Location::Int(0)]);
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

/// The RISC-V name of a move's destination: `a3`, `fa0`, `sp+16`.
///
/// ```
/// use gatun::abi::riscv64::location_name;
/// use gatun::abi::Location;
/// assert_eq!(location_name(Location::Vector(2)), "fa2");
/// assert_eq!(location_name(Location::Stack(8)), "sp+8");
/// ```
pub fn location_name(loc: Location) -> String {
    match loc {
        Location::Int(n) => format!("a{n}"),
        Location::Vector(n) => format!("fa{n}"),
        Location::Stack(o) => format!("sp+{o}"),
    }
}

/// A compact RISC-V summary of a plan: `(a0:ret-ptr, a1+a2, fa0+a3, &a4, sp+0) -> fa0+fa1`
/// (`&` marks a pointer to a caller-made copy).
///
/// ```
/// use gatun::abi::riscv64::{describe, plan};
/// use gatun::layout::ValueLayout;
/// use gatun::linker::FunctionDescriptor;
/// let d = FunctionDescriptor::of(ValueLayout::F64, [ValueLayout::I32, ValueLayout::F32]);
/// assert_eq!(describe(&plan(&d, None).unwrap()), "(a0, fa0) -> fa0");
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
        Register::Int(n) => format!("a{n}"),
        Register::Vector(n) => format!("fa{n}"),
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
