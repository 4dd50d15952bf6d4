//! AArch64 classification: the Procedure Call Standard for the Arm 64-bit Architecture
//! (AAPCS64, §6.8 "Parameter passing", stages B and C; §6.9 "Result return") as used on Linux,
//! and Apple's arm64 variant of it. Pure data: this module compiles and is tested on every host
//! (no `cfg(target_arch)`); on AArch64 Linux the executor of `backend::aarch64` carries the
//! Linux plans out.
//!
//! Registers in the [`CallPlan`]: `Location::Int(n)` = `xn` (n < 8; `Int(8)` = `x8`, only as the
//! indirect-result register), `Location::Vector(n)` = `vn` written as `sn` (4-byte move) or
//! `dn` (8-byte move), `Register::Int(0..2)` = `x0, x1`, `Register::Vector(0..4)` = `v0..v3`.
//!
//! # The rules (both flavours unless noted)
//! Rule numbers are those of the AAPCS64 editions up to 2019Q4 (§6.8.2 "Parameter passing
//! rules", stages B and C), the numbering compilers' comments and tests use; every rule number
//! in this module, its tests and `tests/aarch64_oracle.rs` follows it. The 2020Q2 edition (and
//! every later one) inserted the SVE rules B.1, C.7 and C.8, which shifts the later numbers:
//! there B.2–B.4 below are B.3–B.5, C.7 is C.9, C.8 is C.10, C.10–C.11 are C.12–C.13 and
//! C.12–C.15 are C.14–C.17 (C.1–C.6 are unchanged).
//! - **B.2 HFA**: a composite (struct, union, arrays inside them) whose leaves, after skipping
//!   zero-size members (see below for zero-length arrays), are 1 to 4 scalars of one
//!   floating-point type (all `float` or all
//!   `double`), found through nested structs and arrays (a union counts its largest member, all
//!   members being HFAs of the same type), with no padding (size = count × member size, checked
//!   at every level), is a Homogeneous Floating-point Aggregate. There are no vector types, so
//!   no HVAs.
//! - **B.3**: a composite over 16 bytes that is not an HFA is copied by the caller to memory and
//!   passed as a pointer ([`ArgPlan::by_reference`]): one GPR, or one 8-byte stack slot.
//! - **B.4**: any other composite has its size rounded up to a multiple of 8 (so it takes
//!   `ceil(size / 8)` GPRs or stack bytes).
//! - **C.1–C.6** (floating point): a `float`/`double` takes the next v register (NSRN) if one is
//!   left; an HFA of n members takes n consecutive v registers, one member each, if all n are
//!   left — otherwise NSRN becomes 8 (no later float goes in a register either) and the whole HFA
//!   goes on the stack.
//! - **C.8** (Linux): a composite of natural alignment 16 starts at an even GPR (NGRN rounded
//!   up; the skipped register stays unused). The natural alignment is that of the most aligned
//!   *member* (an `aligned(16)` on the struct itself does not count; gcc and clang agree).
//!   Apple: clang never rounds NGRN up; the composite's full alignment (attribute included)
//!   only decides its stack alignment.
//! - **C.7**: integers, bools and pointers (at most 8 bytes) take the next GPR (NGRN).
//!   (C.9, 16-byte integers in a GPR pair, never applies: there is no 16-byte integer layout.)
//! - **C.10**: a composite of n 8-byte units (B.4) takes n consecutive GPRs if all fit.
//! - **C.11**: otherwise NGRN becomes 8 and the whole composite goes on the stack (later
//!   integers then go on the stack too).
//! - **C.12–C.15** (Linux stack): the next stacked argument address (NSAA) is rounded up to the
//!   larger of 8 and the argument's natural alignment (at most 16); the argument is copied there
//!   and NSAA advances by its size rounded up to 8. Every value therefore sits in whole 8-byte
//!   slots.
//! - **Results** (§6.9): a scalar in `x0` or `v0`; an HFA in `v0..v(n-1)`; another composite
//!   of at most 16 bytes in `x0`, `x1`; anything else in memory whose address the caller
//!   passes in `x8` (which does not consume an argument register).
//! - **Variadic, Linux**: variadic arguments are passed exactly as named ones; a variadic
//!   `float` is promoted to `double` (C's default argument promotions, as for SysV).
//! - **Variadic, Apple**: every variadic argument goes on the stack in 8-byte slots, even when
//!   registers are free; [`CallPlan::first_variadic`] decides which arguments those are. A
//!   composite other than an HFA of 16-byte alignment takes a 16-byte-aligned pair of slots;
//!   an HFA is 8-byte aligned whatever its alignment; a `float` is promoted to `double`.
//! - **Apple packed stack**: *named* stack arguments take their natural size and alignment
//!   (`i8, i16, i8, i8` past the registers land at `sp`, `sp+2`, `sp+4`, `sp+5`; an HFA at its
//!   member's alignment, one move per member); composites other than HFAs still take 8-byte
//!   units at 8-byte (or, for a 16-byte alignment, 16-byte) alignment, as clang passes them as
//!   arrays of 64-bit integers. In a call of a *variadic* function, the named integers narrower
//!   than 32 bits take 4-byte slots instead (clang extends them first). The plan's
//!   [`CallPlan::packed_named_stack`] tells the executor to write only those bytes
//!   ([`CallPlan::stack_write_bytes`]). The total is rounded up to 8.
//! - **Apple narrow integers**: the caller sign- or zero-extends integers narrower than 32 bits
//!   to 32 bits (the plan's conversions extend to 64, which includes it; Linux leaves the upper
//!   bits unspecified and gatun extends anyway). The register `x18` is reserved on Apple
//!   platforms; plans never name it (nor any register above `x8`).
//!
//! # Where the compilers and the specification differ
//! The system gcc is the ground truth for Linux, clang for Apple; `tests/aarch64_oracle.rs`
//! compiles generated callers and callees with both and checks every plan against where the
//! compiler puts each byte. Differences found and what this module follows:
//! - Zero-size members of a would-be HFA (GNU C empty structs and zero-length arrays). The
//!   specification has no such members. Both compilers skip an empty struct member (and an
//!   array of them), and both reject a zero-length array that is itself a member
//!   (`struct { float a; float z[0]; float b; }` goes in `x0`). They disagree on a zero-length
//!   array *inside* a zero-size member (`struct i { float z[0]; }` as a member, or an array of
//!   it): gcc rejects the HFA, clang skips the member as empty. Linux follows gcc, Apple
//!   clang; the oracle generates such members for gcc and Apple clang and leaves them out of
//!   the Linux clang run.
//! - Apple, 16-byte-aligned composites in registers: the base standard's C.8 would start them
//!   at an even GPR; clang for Apple does not (it does align them to 16 on the stack).
//! - Apple, named arguments of a variadic function past the registers: Apple's description
//!   of packed stack arguments gives a `char` one byte; clang gives the named narrow integers
//!   of a variadic call 4-byte, 4-aligned slots (extended to 32 bits). gatun follows clang.
//! - Everything else the oracle generates (HFAs, by-reference copies, C.8 on Linux, C.11,
//!   stack alignment, results, variadics) agrees with the specification on both compilers.
//!
//! Sizes and limits are checked as in [`crate::abi::sysv::plan`]: one stack-limit check
//! against [`MAX_STACK_BYTES`], and work linear in the distinct sub-layouts (see [`classify`]).
//!
//! [`MAX_STACK_BYTES`]: super::MAX_STACK_BYTES

use std::collections::HashMap;

use crate::abi::{
    ArgMove, ArgPlan, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan, StackArea,
};
use crate::error::Result;
use crate::layout::{FunctionDescriptor, MemoryLayout, ScalarKind};

/// Number of general-purpose argument registers (`x0..x7`).
pub const INT_ARG_REGS: u8 = 8;
/// Number of SIMD/floating-point argument registers (`v0..v7`).
pub const VECTOR_ARG_REGS: u8 = 8;
/// The indirect-result register (`x8`), as a [`Location::Int`] index.
pub const INDIRECT_RESULT_REG: u8 = 8;

/// Which AArch64 calling convention a plan follows.
///
/// ```
/// use gatun::abi::aarch64::Flavour;
/// assert_ne!(Flavour::Linux, Flavour::Apple);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// AAPCS64 as used by Linux (and other ELF targets): the base standard.
    Linux,
    /// Apple arm64 (`target_vendor = "apple"`): variadics on the stack, packed named stack
    /// arguments, caller-extended narrow integers, full alignment for C.8.
    Apple,
}

/// How a value is passed, before register assignment (AAPCS64 stage B), for display.
///
/// ```
/// use gatun::abi::aarch64::{classify, ArgClass, Flavour};
/// use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
/// let s = MemoryLayout::c_struct([ValueLayout::F64; 3]).unwrap();
/// assert_eq!(
///     classify(&s, Flavour::Linux),
///     ArgClass::Hfa { kind: ScalarKind::F64, count: 3 }
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgClass {
    /// An integer, bool or pointer scalar: one GPR or stack slot.
    Integer,
    /// A `float` or `double` scalar: one v register or stack slot.
    Float(ScalarKind),
    /// A Homogeneous Floating-point Aggregate of `count` (1..=4) members of `kind` (`F32` or
    /// `F64`): `count` consecutive v registers, all or none (B.2, C.2–C.4).
    Hfa {
        /// The member type, [`ScalarKind::F32`] or [`ScalarKind::F64`].
        kind: ScalarKind,
        /// Number of members, 1..=4.
        count: u8,
    },
    /// A composite of at most 16 bytes that is not an HFA: `units` (1 or 2) consecutive GPRs or
    /// 8-byte stack units (B.4, C.10); `align16` when it takes a 16-byte-aligned stack offset
    /// and, on Linux, starts at an even GPR (C.8).
    Composite {
        /// Number of 8-byte units, the size rounded up to 8 divided by 8 (1 or 2).
        units: u8,
        /// Whether the composite's alignment (per flavour, see the module docs) is 16 or more.
        align16: bool,
    },
    /// A composite over 16 bytes that is not an HFA: passed by reference to a caller-made copy
    /// (B.3); returned through memory at `x8`.
    Indirect,
}

#[cfg(test)]
thread_local! {
    /// Group nodes visited by the HFA walk on this thread (tests bound the work by it).
    pub(crate) static VISITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The HFA shape of a sub-layout: `Some((None, 0))` for no floating-point leaves at all (zero
/// size), `Some((Some(kind), n))` for n leaves of `kind`, `None` for "not part of an HFA".
type Shape = Option<(Option<ScalarKind>, usize)>;

/// Largest byte size of an HFA (4 doubles).
const MAX_HFA_BYTES: usize = 32;

/// What the HFA rules need to know of a zero-size member (computed once per node).
#[derive(Debug, Clone, Copy)]
struct Empty {
    /// A sequence of count 0 is inside (or it is one).
    zero_array: bool,
    /// clang's "empty field": a zero-count sequence, a sequence of empty fields, or a group all
    /// of whose members are empty fields (a group with no members included).
    clang_empty: bool,
}

/// Finds HFA shapes. Each group node (keyed by the address of its member list or element) is
/// computed once and remembered, so a layout sharing sub-layouts through `Arc`s costs its number
/// of distinct nodes; element counts are never expanded (a sequence's shape is its element's
/// times the count); a non-zero-size part over [`MAX_HFA_BYTES`] bytes is rejected before
/// descent; zero-size parts are only asked whether they hold a zero-length array.
struct HfaWalker {
    flavour: Flavour,
    memo: HashMap<(usize, usize), Shape>,
    empty_memo: HashMap<(usize, usize), Empty>,
}

/// The memo key of a group node: the address of its member list or element, with the kind of
/// group (a sequence's count included, so two sequences sharing an element stay apart).
fn node_key(layout: &MemoryLayout) -> Option<(usize, usize)> {
    match layout {
        MemoryLayout::Struct(s) => Some((s.members().as_ptr() as usize, usize::MAX)),
        MemoryLayout::Union(u) => Some((u.members().as_ptr() as usize, usize::MAX - 1)),
        MemoryLayout::Sequence(s) => Some((s.element() as *const MemoryLayout as usize, s.count())),
        MemoryLayout::Value(_) | MemoryLayout::Padding(_) => None,
    }
}

impl HfaWalker {
    /// The [`Empty`] facts of a (zero-size or not) member, linear in distinct nodes.
    fn empty(&mut self, layout: &MemoryLayout) -> Empty {
        let Some(key) = node_key(layout) else {
            return Empty {
                zero_array: false,
                clang_empty: false,
            };
        };
        if let Some(&e) = self.empty_memo.get(&key) {
            return e;
        }
        #[cfg(test)]
        VISITS.with(|v| v.set(v.get() + 1));
        let e = match layout {
            MemoryLayout::Sequence(s) => {
                let inner = self.empty(s.element());
                Empty {
                    zero_array: s.count() == 0 || inner.zero_array,
                    clang_empty: s.count() == 0 || inner.clang_empty,
                }
            }
            MemoryLayout::Struct(_) | MemoryLayout::Union(_) => {
                let members = match layout {
                    MemoryLayout::Struct(s) => s.members(),
                    MemoryLayout::Union(u) => u.members(),
                    _ => &[],
                };
                let mut e = Empty {
                    zero_array: false,
                    clang_empty: true,
                };
                for m in members {
                    let me = self.empty(m);
                    e.zero_array |= me.zero_array;
                    e.clang_empty &= me.clang_empty;
                }
                e
            }
            MemoryLayout::Value(_) | MemoryLayout::Padding(_) => Empty {
                zero_array: false,
                clang_empty: false,
            },
        };
        self.empty_memo.insert(key, e);
        e
    }

    fn shape(&mut self, layout: &MemoryLayout) -> Shape {
        let size = layout.byte_size();
        if size > MAX_HFA_BYTES {
            return None;
        }
        let key = match layout {
            MemoryLayout::Value(v) => {
                let k = v.kind();
                return k.is_float().then_some((Some(k), 1));
            }
            MemoryLayout::Padding(_) => return None,
            _ if size == 0 => return Some((None, 0)),
            _ => node_key(layout)?,
        };
        if let Some(&known) = self.memo.get(&key) {
            return known;
        }
        #[cfg(test)]
        VISITS.with(|v| v.set(v.get() + 1));
        let shape = self.group_shape(layout);
        // Every level has no padding: its size is exactly its leaves' sizes.
        let shape = shape.filter(|&(k, n)| k.is_none_or(|k| n * k.byte_size() == size));
        self.memo.insert(key, shape);
        shape
    }

    /// The shape a struct or union member contributes: gcc rejects a zero-length array
    /// anywhere inside; clang rejects one only as the member itself (arrays of arrays
    /// included) and skips members that are "empty fields".
    fn member(&mut self, m: &MemoryLayout) -> Shape {
        if m.byte_size() == 0 {
            let e = self.empty(m);
            let direct_zero_array = {
                let mut l = m;
                let mut zero = false;
                while let MemoryLayout::Sequence(s) = l {
                    zero |= s.count() == 0;
                    l = s.element();
                }
                zero
            };
            let rejected = match self.flavour {
                Flavour::Linux => e.zero_array,
                Flavour::Apple => direct_zero_array,
            };
            return if rejected { None } else { Some((None, 0)) };
        }
        self.shape(m)
    }

    fn group_shape(&mut self, layout: &MemoryLayout) -> Shape {
        fn join(a: Option<ScalarKind>, b: Option<ScalarKind>) -> Option<Option<ScalarKind>> {
            match (a, b) {
                (None, x) | (x, None) => Some(x),
                (Some(x), Some(y)) => (x == y).then_some(Some(x)),
            }
        }
        match layout {
            MemoryLayout::Struct(s) => {
                let (mut kind, mut count) = (None, 0usize);
                for m in s.members() {
                    let (k, n) = self.member(m)?;
                    kind = join(kind, k)?;
                    count += n;
                    if count > 4 {
                        return None;
                    }
                }
                Some((kind, count))
            }
            MemoryLayout::Union(u) => {
                let (mut kind, mut count) = (None, 0usize);
                for m in u.members() {
                    let (k, n) = self.member(m)?;
                    kind = join(kind, k)?;
                    count = count.max(n);
                }
                Some((kind, count))
            }
            MemoryLayout::Sequence(s) => {
                // Non-zero size (checked by the caller) and at most 32 bytes: the element has
                // non-zero size and the count is at most 32.
                let (k, n) = self.shape(s.element())?;
                let count = n.checked_mul(s.count())?;
                (count <= 4).then_some((k, count))
            }
            MemoryLayout::Value(_) | MemoryLayout::Padding(_) => None,
        }
    }
}

/// `Some((kind, count))` when `layout` is a composite HFA (B.2) under `flavour`.
fn hfa(layout: &MemoryLayout, flavour: Flavour) -> Option<(ScalarKind, u8)> {
    if !layout.is_group() || layout.byte_size() > MAX_HFA_BYTES {
        return None;
    }
    let mut walker = HfaWalker {
        flavour,
        memo: HashMap::new(),
        empty_memo: HashMap::new(),
    };
    match walker.shape(layout)? {
        (Some(kind), n @ 1..=4) => Some((kind, n as u8)),
        _ => None,
    }
}

/// The alignment C.8 and C.12 (stack) use for a composite: Linux, the largest member
/// alignment (the "natural alignment" before any adjustment of the composite itself, zero-size members
/// included as gcc does); Apple, the composite's alignment (clang's). Capped at 16 (the stack
/// alignment).
fn composite_alignment(layout: &MemoryLayout, flavour: Flavour) -> usize {
    let a = match (flavour, layout) {
        (Flavour::Linux, MemoryLayout::Struct(s)) => {
            s.members().iter().map(|m| m.byte_alignment()).max()
        }
        (Flavour::Linux, MemoryLayout::Union(u)) => {
            u.members().iter().map(|m| m.byte_alignment()).max()
        }
        _ => None,
    };
    a.unwrap_or_else(|| layout.byte_alignment()).clamp(1, 16)
}

/// Classifies a value of `layout` (AAPCS64 stage B).
///
/// Cost: O(1) for a scalar or a composite over 32 bytes; otherwise linear in the number of
/// distinct group nodes (shared sub-layouts are walked once, zero-size parts skipped, element
/// counts never expanded).
pub fn classify(layout: &MemoryLayout, flavour: Flavour) -> ArgClass {
    if let MemoryLayout::Value(v) = layout {
        let k = v.kind();
        return if k.is_float() {
            ArgClass::Float(k)
        } else {
            ArgClass::Integer
        };
    }
    if let Some((kind, count)) = hfa(layout, flavour) {
        return ArgClass::Hfa { kind, count };
    }
    let size = layout.byte_size();
    if size > 16 {
        return ArgClass::Indirect;
    }
    ArgClass::Composite {
        units: size.div_ceil(8) as u8,
        align16: composite_alignment(layout, flavour) >= 16,
    }
}

/// Register and stack assignment, left to right (stage C).
///
/// `stack` is the area from the NSAA's start (see [`StackArea`]); its end is the NSAA. Past
/// [`MAX_STACK_BYTES`] no more moves are built (the plan is rejected), so a huge HFA-free
/// argument list costs O(arguments).
///
/// [`MAX_STACK_BYTES`]: super::MAX_STACK_BYTES
struct Assigner {
    flavour: Flavour,
    /// A call of a variadic function (`first_variadic` is `Some`).
    variadic_call: bool,
    ngrn: u8,
    nsrn: u8,
    stack: StackArea,
}

impl Assigner {
    /// A stack location for a scalar (or a pointer to a copy): an 8-byte slot, or on Apple for
    /// a named argument its natural size and alignment.
    fn stack_scalar(&mut self, size: usize, packed: bool) -> Location {
        let (bytes, align) = match (packed, self.variadic_call) {
            (false, _) => (8, 8),
            // Apple, named arguments of a variadic call: at least 4 bytes (clang extends the
            // narrow integers to 32 bits there).
            (true, true) => (size.max(4), size.max(4)),
            (true, false) => (size, size),
        };
        // Over the stack limit: the plan is rejected, the location is never used.
        Location::Stack(self.stack.reserve(bytes, align).unwrap_or(0))
    }

    /// Moves copying `size` bytes (at most 32, or a ≤ 16-byte composite) to the stack in 8-byte
    /// chunks at a multiple of `align`, taking `size` rounded up to 8 (`chunk` bytes for an
    /// Apple named HFA: one move per member, no rounding).
    fn stack_copy(&mut self, size: usize, align: usize, chunk: usize) -> Vec<ArgMove> {
        let bytes = if chunk == 8 {
            size.div_ceil(8) * 8
        } else {
            size
        };
        let Some(start) = self.stack.reserve(bytes, align) else {
            return Vec::new();
        };
        (0..size.div_ceil(chunk))
            .map(|k| ArgMove {
                offset: (chunk * k) as u32,
                size: (size - chunk * k).min(chunk) as u8,
                to: Location::Stack(start + (chunk * k) as u32),
                conv: Conversion::Bytes,
            })
            .collect()
    }

    fn next_gpr_or_stack(&mut self, size: usize, packed: bool) -> Location {
        if self.ngrn < INT_ARG_REGS {
            self.ngrn += 1;
            Location::Int(self.ngrn - 1)
        } else {
            self.stack_scalar(size, packed)
        }
    }

    fn arg(&mut self, layout: &MemoryLayout, variadic: bool) -> ArgPlan {
        let apple = self.flavour == Flavour::Apple;
        // Apple: variadic arguments always on the stack, 8-byte slots.
        let stack_only = apple && variadic;
        let packed = apple && !variadic;
        let size = layout.byte_size();
        let plain = |moves| ArgPlan {
            moves,
            by_reference: None,
        };
        match classify(layout, self.flavour) {
            ArgClass::Integer | ArgClass::Float(_) => {
                let kind = layout.as_value().map_or(ScalarKind::I64, |v| v.kind());
                let to = if kind.is_float() && self.nsrn < VECTOR_ARG_REGS && !stack_only {
                    self.nsrn += 1;
                    Location::Vector(self.nsrn - 1)
                } else if kind.is_float() || stack_only {
                    self.stack_scalar(kind.byte_size(), packed)
                } else {
                    self.next_gpr_or_stack(kind.byte_size(), packed)
                };
                plain(vec![ArgMove {
                    offset: 0,
                    size: kind.byte_size() as u8,
                    to,
                    conv: Conversion::for_scalar(kind, variadic),
                }])
            }
            ArgClass::Hfa { kind, count } => {
                let es = kind.byte_size();
                if !stack_only && self.nsrn + count <= VECTOR_ARG_REGS {
                    let first = self.nsrn;
                    self.nsrn += count;
                    return plain(
                        (0..count)
                            .map(|k| ArgMove {
                                offset: (k as usize * es) as u32,
                                size: es as u8,
                                to: Location::Vector(first + k),
                                conv: Conversion::Bytes,
                            })
                            .collect(),
                    );
                }
                if !stack_only {
                    self.nsrn = VECTOR_ARG_REGS; // C.3
                }
                match self.flavour {
                    // Named: packed at the member's alignment, one move per member.
                    Flavour::Apple if packed => plain(self.stack_copy(size, es, es)),
                    // Variadic: 8-byte slots at 8-byte alignment, whatever the HFA's alignment
                    // (clang passes it as an array of its members).
                    Flavour::Apple => plain(self.stack_copy(size, 8, 8)),
                    Flavour::Linux => {
                        let align = composite_alignment(layout, self.flavour).max(8);
                        plain(self.stack_copy(size, align, 8))
                    }
                }
            }
            ArgClass::Indirect => {
                let to = if stack_only {
                    self.stack_scalar(8, false)
                } else {
                    self.next_gpr_or_stack(8, packed)
                };
                ArgPlan {
                    moves: Vec::new(),
                    by_reference: Some(to),
                }
            }
            ArgClass::Composite { units, align16 } => {
                if !stack_only {
                    if align16 && !apple && self.ngrn % 2 == 1 {
                        self.ngrn += 1; // C.8 (Linux only: clang for Apple does not round)
                    }
                    if self.ngrn + units <= INT_ARG_REGS {
                        let first = self.ngrn;
                        self.ngrn += units;
                        return plain(
                            (0..units as usize)
                                .map(|k| ArgMove {
                                    offset: (8 * k) as u32,
                                    size: (size - 8 * k).min(8) as u8,
                                    to: Location::Int(first + k as u8),
                                    conv: Conversion::Bytes,
                                })
                                .collect(),
                        );
                    }
                    self.ngrn = INT_ARG_REGS; // C.11
                }
                let align = if align16 { 16 } else { 8 };
                plain(self.stack_copy(size, align, 8))
            }
        }
    }
}

/// The return plan (§6.9).
fn return_plan(layout: Option<&MemoryLayout>, flavour: Flavour) -> ReturnPlan {
    let Some(layout) = layout else {
        return ReturnPlan::Void;
    };
    let size = layout.byte_size();
    match classify(layout, flavour) {
        ArgClass::Integer => ReturnPlan::Scalar(Register::Int(0)),
        ArgClass::Float(_) => ReturnPlan::Scalar(Register::Vector(0)),
        ArgClass::Hfa { kind, count } => ReturnPlan::Registers(
            (0..count)
                .map(|k| ReturnMove {
                    from: Register::Vector(k),
                    offset: (k as usize * kind.byte_size()) as u32,
                    size: kind.byte_size() as u8,
                })
                .collect(),
        ),
        ArgClass::Composite { units, .. } => ReturnPlan::Registers(
            (0..units)
                .map(|k| ReturnMove {
                    from: Register::Int(k),
                    offset: 8 * k as u32,
                    size: (size - 8 * k as usize).min(8) as u8,
                })
                .collect(),
        ),
        ArgClass::Indirect => ReturnPlan::InMemory,
    }
}

/// Plans a call of `descriptor` under AArch64 `flavour`. `first_variadic` is the index of the
/// first variadic argument (`None` for a non-variadic function; `Some(args.len())` is a
/// variadic call with no variadic arguments).
///
/// Stack moves: see [`CallPlan::packed_named_stack`] (set for [`Flavour::Apple`]). A
/// by-reference argument ([`ArgPlan::by_reference`]) has no moves: the executor makes the copy.
/// Cost: O(number of arguments + distinct sub-layouts of the ≤ 32-byte composites),
/// independent of byte sizes.
///
/// ```
/// use gatun::abi::aarch64::{plan, Flavour};
/// use gatun::abi::Location;
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// use gatun::linker::FunctionDescriptor;
/// let hfa = MemoryLayout::c_struct([ValueLayout::F32; 3]).unwrap();
/// let p = plan(&FunctionDescriptor::of_void([hfa]), None, Flavour::Linux).unwrap();
/// let regs: Vec<_> = p.args()[0].moves.iter().map(|m| m.to).collect();
/// assert_eq!(regs, [Location::Vector(0), Location::Vector(1), Location::Vector(2)]);
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
pub fn plan(
    descriptor: &FunctionDescriptor,
    first_variadic: Option<usize>,
    flavour: Flavour,
) -> Result<CallPlan> {
    crate::abi::check_descriptor(descriptor, first_variadic)?;
    let ret = return_plan(descriptor.return_layout(), flavour);
    let hidden_return_pointer =
        (ret == ReturnPlan::InMemory).then_some(Location::Int(INDIRECT_RESULT_REG));
    let mut asg = Assigner {
        flavour,
        variadic_call: first_variadic.is_some(),
        ngrn: 0,
        nsrn: 0,
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
        hidden_return_pointer,
        stack_bytes,
        vector_registers: asg.nsrn,
        first_variadic,
        packed_named_stack: flavour == Flavour::Apple,
    })
}

/// The AArch64 name of a move's destination: `x3`, `s0`/`d0` (by the move's size), `sp+16`.
///
/// ```
/// use gatun::abi::aarch64::location_name;
/// use gatun::abi::Location;
/// assert_eq!(location_name(Location::Vector(2), 4), "s2");
/// assert_eq!(location_name(Location::Stack(8), 8), "sp+8");
/// ```
pub fn location_name(loc: Location, size: u8) -> String {
    match loc {
        Location::Int(n) => format!("x{n}"),
        Location::Vector(n) if size == 4 => format!("s{n}"),
        Location::Vector(n) => format!("d{n}"),
        Location::Stack(o) => format!("sp+{o}"),
    }
}

/// A compact AArch64 summary of a plan: `(x8:ret-ptr, x0+x1, s0+s1+s2, &x2, sp+0) -> v0+v1`
/// (`&` marks a pointer to a caller-made copy).
///
/// ```
/// use gatun::abi::aarch64::{describe, plan, Flavour};
/// use gatun::layout::ValueLayout;
/// use gatun::linker::FunctionDescriptor;
/// let d = FunctionDescriptor::of(ValueLayout::F64, [ValueLayout::I32, ValueLayout::F32]);
/// assert_eq!(describe(&plan(&d, None, Flavour::Linux).unwrap()), "(x0, s0) -> v0");
/// ```
pub fn describe(plan: &CallPlan) -> String {
    let mut parts = Vec::new();
    if let Some(h) = plan.hidden_return_pointer {
        parts.push(format!("{}:ret-ptr", location_name(h, 8)));
    }
    for a in &plan.args {
        if let Some(r) = a.by_reference {
            parts.push(format!("&{}", location_name(r, 8)));
        } else {
            let m: Vec<String> = a
                .moves
                .iter()
                .map(|m| {
                    location_name(
                        m.to,
                        if m.conv == Conversion::FloatToDouble {
                            8
                        } else {
                            m.size
                        },
                    )
                })
                .collect();
            parts.push(m.join("+"));
        }
    }
    let ret = match &plan.ret {
        ReturnPlan::Void => "void".to_string(),
        ReturnPlan::InMemory => "memory".to_string(),
        ReturnPlan::Scalar(Register::Int(n)) => format!("x{n}"),
        ReturnPlan::Scalar(Register::Vector(n)) => format!("v{n}"),
        ReturnPlan::Registers(m) => m
            .iter()
            .map(|m| match m.from {
                Register::Int(n) => format!("x{n}"),
                Register::Vector(n) => location_name(Location::Vector(n), m.size),
            })
            .collect::<Vec<_>>()
            .join("+"),
    };
    format!("({}) -> {ret}", parts.join(", "))
}

#[cfg(test)]
mod tests;
