//! Win64 classification: the Microsoft x64 calling convention ("x64 calling convention" and
//! "x64 ABI conventions" in Microsoft's documentation), as used by MSVC and by mingw-w64 gcc.
//! Pure data: this module compiles and is tested on every host (no `cfg(target_arch)`); on
//! x86-64 Windows the Win64 executor carries its plans out.
//!
//! Registers in the [`CallPlan`]: argument *slot* n (0..=3) is `Location::Int(n)` = `rcx`,
//! `rdx`, `r8`, `r9` or `Location::Vector(n)` = `xmm0..xmm3` (the low 4 or 8 bytes written);
//! `Register::Int(0)` = `rax`, `Register::Vector(0)` = `xmm0`. [`arg_register_name`] and
//! [`return_register_name`] give the names.
//!
//! # The rules
//! - **Slots**: every argument takes the next of four slots, shared by integer and
//!   floating-point arguments: the n-th argument (counting the hidden return pointer, see
//!   below) goes in `rcx`/`rdx`/`r8`/`r9` if it is an integer, bool, pointer, small aggregate
//!   or reference, in `xmm0..xmm3` if it is a `float` or `double` — never both kinds for one
//!   slot. `double f(int, double)` passes the int in `rcx` and the double in `xmm1`.
//! - **Aggregates** (structs and unions) of exactly 1, 2, 4 or 8 bytes are passed as the integer
//!   of that size, in the slot's GPR (or its stack slot) — even when all their members are
//!   floats (`struct { float x, y; }` goes in `rcx`, not in an XMM register). One move of
//!   `size` bytes, [`Conversion::Bytes`].
//! - **By reference**: an aggregate of any other size (3, 5, 6, 7, 12, 16, ... bytes) is copied
//!   by the caller to memory and its address takes the slot ([`ArgPlan::by_reference`]: the
//!   slot's GPR or its 8-byte stack slot; `moves` is empty). The copy must be 16-byte aligned
//!   (Microsoft: "allocated temporary memory must be 16-byte aligned"); an executor allocates
//!   it so. The callee may modify the copy.
//! - **Stack**: arguments from the fifth slot on go on the stack, the k-th of them (k = 0, 1,
//!   ...) in the 8-byte slot at `Location::Stack(32 + 8k)` from `rsp` at the call instruction:
//!   the caller always reserves 32 bytes of *shadow space* (home slots for the four register
//!   arguments, which the callee may write) below them, even for a function with fewer than four
//!   arguments or none. Each stack slot is written whole (scalars widened as on SysV).
//!   [`CallPlan::stack_bytes`] counts the shadow space: it is `32 + 8 × (arguments past the
//!   fourth slot)`, never less than 32, so an executor reserves exactly `stack_bytes` (plus its
//!   alignment to 16) below the return address and places the stack arguments at their offsets.
//! - **Variadic**: arguments from [`CallPlan::first_variadic`] on are passed like named ones,
//!   except a `float` or `double` in slots 0..=3, which goes in *both* the slot's XMM register
//!   and its GPR (the callee's `va_arg` reads the GPR home slot). The plan says "both" with
//!   two moves of the same source bytes: first to `Location::Vector(n)`, then to
//!   `Location::Int(n)`; an executor performs every move, so it writes both registers. A
//!   variadic `float` is promoted to `double` ([`Conversion::FloatToDouble`], in both moves).
//!   A variadic float past the fourth slot takes one stack slot, like any argument. There is
//!   no `%al`: [`CallPlan::vector_registers`] only counts the XMM registers used.
//! - **Results**: a scalar in `rax` (integers, bools, pointers) or `xmm0` (`float`, `double`);
//!   an aggregate of 1, 2, 4 or 8 bytes in `rax` (one move of its size; all-float ones too);
//!   any other aggregate in memory: the caller passes the destination's address as a hidden
//!   first argument in `rcx` ([`CallPlan::hidden_return_pointer`] = `Some(Int(0))`), which
//!   takes slot 0 and shifts every argument by one slot (`S f(int, double)` with a 12-byte `S`:
//!   the pointer in `rcx`, the int in `rdx`, the double in `xmm2`); the callee returns the same
//!   address in `rax`.
//! - **Widening**: narrow integers are sign- or zero-extended to 64 bits and bools normalised
//!   to 0/1 ([`Conversion::for_scalar`](crate::abi::Conversion)); Microsoft leaves the upper
//!   bits unspecified, so this is merely stronger.
//!
//! `long double` is not a [`ScalarKind`](crate::layout::ScalarKind): it cannot appear in a
//! descriptor (MSVC's is `double`; mingw-w64 gcc's is the 80-bit x87 type in 16 bytes, passed
//! by reference like a 16-byte aggregate).
//! Sizes and limits are checked as in [`crate::abi::sysv::plan`]: a descriptor needing more
//! than [`MAX_STACK_BYTES`] bytes of stack area (shadow space included) is rejected.
//!
//! [`MAX_STACK_BYTES`]: super::MAX_STACK_BYTES

use crate::abi::{
    ArgMove, ArgPlan, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan, StackArea,
};
use crate::error::Result;
use crate::layout::{FunctionDescriptor, MemoryLayout};

/// Number of argument slots passed in registers (`rcx`/`xmm0` .. `r9`/`xmm3`).
pub const REGISTER_SLOTS: usize = 4;
/// Bytes of shadow space the caller reserves at `rsp` below the stack arguments (one 8-byte home
/// slot per register slot), always, in every call.
pub const SHADOW_SPACE_BYTES: u32 = 32;

/// The GPR names of the four slots.
const INT_ARGS: [&str; REGISTER_SLOTS] = ["rcx", "rdx", "r8", "r9"];
/// The XMM names of the four slots.
const VECTOR_ARGS: [&str; REGISTER_SLOTS] = ["xmm0", "xmm1", "xmm2", "xmm3"];

/// Whether an aggregate of `size` bytes travels as an integer (1, 2, 4 or 8 bytes); any other
/// size is passed by reference and returned in memory.
///
/// ```
/// use gatun::abi::win64::is_register_sized;
/// assert!(is_register_sized(8) && is_register_sized(1));
/// assert!(!is_register_sized(3) && !is_register_sized(16));
/// ```
pub const fn is_register_sized(size: usize) -> bool {
    matches!(size, 1 | 2 | 4 | 8)
}

/// The Win64 name of an argument location: `rcx`..`r9`, `xmm0`..`xmm3`, `rsp+40`; `None` for a
/// register index no Win64 plan uses (4 and above).
///
/// ```
/// use gatun::abi::{win64::arg_register_name, Location};
/// assert_eq!(arg_register_name(Location::Int(2)).as_deref(), Some("r8"));
/// assert_eq!(arg_register_name(Location::Vector(1)).as_deref(), Some("xmm1"));
/// assert_eq!(arg_register_name(Location::Stack(32)).as_deref(), Some("rsp+32"));
/// assert_eq!(arg_register_name(Location::Int(4)), None);
/// ```
pub fn arg_register_name(loc: Location) -> Option<String> {
    match loc {
        Location::Int(n) => INT_ARGS.get(n as usize).map(|s| s.to_string()),
        Location::Vector(n) => VECTOR_ARGS.get(n as usize).map(|s| s.to_string()),
        Location::Stack(off) => Some(format!("rsp+{off}")),
    }
}

/// The Win64 name of a return register: `rax` or `xmm0`; `None` for any other index.
///
/// ```
/// use gatun::abi::{win64::return_register_name, Register};
/// assert_eq!(return_register_name(Register::Int(0)), Some("rax"));
/// assert_eq!(return_register_name(Register::Vector(1)), None);
/// ```
pub fn return_register_name(reg: Register) -> Option<&'static str> {
    match reg {
        Register::Int(0) => Some("rax"),
        Register::Vector(0) => Some("xmm0"),
        _ => None,
    }
}

/// The location of argument slot `slot`: a register below [`REGISTER_SLOTS`] (`vector`: the XMM
/// one), else its stack slot after the shadow space.
fn slot_location(slot: usize, vector: bool) -> Location {
    if slot < REGISTER_SLOTS {
        if vector {
            Location::Vector(slot as u8)
        } else {
            Location::Int(slot as u8)
        }
    } else {
        // Only called for slots whose stack area has been checked against MAX_STACK_BYTES.
        Location::Stack(SHADOW_SPACE_BYTES + 8 * (slot - REGISTER_SLOTS) as u32)
    }
}

/// How a return value of `ret` (None: void) comes back.
fn return_plan(ret: Option<&MemoryLayout>) -> ReturnPlan {
    match ret {
        None => ReturnPlan::Void,
        Some(MemoryLayout::Value(v)) if v.kind().is_float() => {
            ReturnPlan::Scalar(Register::Vector(0))
        }
        Some(MemoryLayout::Value(_)) => ReturnPlan::Scalar(Register::Int(0)),
        Some(g) if is_register_sized(g.byte_size()) => ReturnPlan::Registers(vec![ReturnMove {
            from: Register::Int(0),
            offset: 0,
            size: g.byte_size() as u8,
        }]),
        Some(_) => ReturnPlan::InMemory,
    }
}

/// The plan of one argument in `slot`.
fn arg_plan(layout: &MemoryLayout, slot: usize, variadic: bool) -> ArgPlan {
    match layout {
        MemoryLayout::Value(v) => {
            let kind = v.kind();
            let float = kind.is_float();
            let conv = Conversion::for_scalar(kind, variadic);
            let size = kind.byte_size() as u8;
            let to = slot_location(slot, float);
            let mut moves = vec![ArgMove {
                offset: 0,
                size,
                to,
                conv,
            }];
            if float && variadic && slot < REGISTER_SLOTS {
                moves.push(ArgMove {
                    offset: 0,
                    size,
                    to: Location::Int(slot as u8),
                    conv,
                });
            }
            ArgPlan {
                moves,
                by_reference: None,
            }
        }
        g if is_register_sized(g.byte_size()) => ArgPlan {
            moves: vec![ArgMove {
                offset: 0,
                size: g.byte_size() as u8,
                to: slot_location(slot, false),
                conv: Conversion::Bytes,
            }],
            by_reference: None,
        },
        _ => ArgPlan {
            moves: Vec::new(),
            by_reference: Some(slot_location(slot, false)),
        },
    }
}

/// The Win64 plan of `descriptor`, variadic from argument `first_variadic` when `Some` (see
/// the [module documentation](self) for the rules).
///
/// ```
/// use gatun::abi::{win64, Location, Register, ReturnPlan};
/// use gatun::layout::ValueLayout as V;
/// use gatun::linker::FunctionDescriptor;
/// // double f(int, double, int): rcx, xmm1, r8 (the slots are shared) -> xmm0
/// let p = win64::plan(&FunctionDescriptor::of(V::F64, [V::I32, V::F64, V::I32]), None).unwrap();
/// let to: Vec<_> = p.args().iter().map(|a| a.moves[0].to).collect();
/// assert_eq!(to, [Location::Int(0), Location::Vector(1), Location::Int(2)]);
/// assert_eq!(*p.ret(), ReturnPlan::Scalar(Register::Vector(0)));
/// assert_eq!(p.stack_bytes(), 32); // the shadow space
/// ```
///
/// # Errors
/// [`Error::InvalidDescriptor`] for a padding, sequence or zero-sized argument/return, a group
/// whose size is not a multiple of its alignment, a variadic index beyond the argument count,
/// or a stack area (32 bytes of shadow space plus 8 per argument past the fourth slot) over
/// [`MAX_STACK_BYTES`] (the message gives the bytes needed).
///
/// [`MAX_STACK_BYTES`]: super::MAX_STACK_BYTES
/// [`Error::InvalidDescriptor`]: crate::Error::InvalidDescriptor
pub fn plan(descriptor: &FunctionDescriptor, first_variadic: Option<usize>) -> Result<CallPlan> {
    crate::abi::check_descriptor(descriptor, first_variadic)?;
    let ret = return_plan(descriptor.return_layout());
    let hidden_return_pointer = (ret == ReturnPlan::InMemory).then_some(Location::Int(0));
    let first_slot = usize::from(hidden_return_pointer.is_some());
    let layouts = descriptor.argument_layouts();
    let slots = layouts.len() + first_slot;
    // The shadow space, then one 8-byte slot per argument past the fourth slot (whose offsets
    // `slot_location` computes), checked before any argument is planned.
    let mut area = StackArea::new();
    area.reserve(SHADOW_SPACE_BYTES as usize, 8);
    area.reserve_slots(slots.saturating_sub(REGISTER_SLOTS));
    let stack_bytes = area.size(
        descriptor,
        "stack area (32 of shadow space and 8 per argument past the fourth)",
    )?;
    let args: Vec<ArgPlan> = layouts
        .iter()
        .enumerate()
        .map(|(i, a)| arg_plan(a, first_slot + i, first_variadic.is_some_and(|f| i >= f)))
        .collect();
    let vector_registers = args
        .iter()
        .flat_map(|a| &a.moves)
        .filter(|m| matches!(m.to, Location::Vector(_)))
        .count() as u8;
    Ok(CallPlan {
        args,
        ret,
        hidden_return_pointer,
        stack_bytes,
        vector_registers,
        first_variadic,
        packed_named_stack: false,
    })
}

/// The plan in Win64 names, e.g. `(rcx, xmm1, r8, r9, rsp+32) -> rax`: each argument's
/// destinations joined by `+` (a variadic double in slot 1 is `xmm1+rdx`; a by-reference
/// argument `&r8`), the hidden return pointer first as `ret-ptr:rcx`.
///
/// ```
/// use gatun::abi::win64;
/// use gatun::layout::{MemoryLayout, ValueLayout as V};
/// use gatun::linker::FunctionDescriptor;
/// let s12 = MemoryLayout::c_struct([V::I32; 3]).unwrap();
/// let p = win64::plan(&FunctionDescriptor::of(s12.clone(), [V::F64.into(), s12]), None).unwrap();
/// assert_eq!(win64::describe(&p), "(ret-ptr:rcx, xmm1, &r8) -> memory");
/// ```
pub fn describe(plan: &CallPlan) -> String {
    let name = |l: Location| arg_register_name(l).unwrap_or_else(|| format!("{l:?}"));
    let mut parts = Vec::new();
    if let Some(h) = plan.hidden_return_pointer() {
        parts.push(format!("ret-ptr:{}", name(h)));
    }
    for a in plan.args() {
        let text = match a.by_reference {
            Some(l) => format!("&{}", name(l)),
            None => a
                .moves
                .iter()
                .map(|m| name(m.to))
                .collect::<Vec<_>>()
                .join("+"),
        };
        parts.push(text);
    }
    let ret = match plan.ret() {
        ReturnPlan::Void => "void".to_string(),
        ReturnPlan::Scalar(r) => return_register_name(*r).unwrap_or("?").to_string(),
        ReturnPlan::Registers(m) => m
            .iter()
            .map(|m| return_register_name(m.from).unwrap_or("?"))
            .collect::<Vec<_>>()
            .join("+"),
        ReturnPlan::InMemory => "memory".to_string(),
    };
    format!("({}) -> {ret}", parts.join(", "))
}

#[cfg(test)]
mod tests;
