//! PPC64LE classification: the 64-bit ELF V2 ABI for the Power Architecture (OpenPOWER "64-Bit
//! ELF V2 ABI Specification", §2.2 "Function Calling Sequence": "Parameter Passing in
//! Registers", "Variable Argument Lists" and "Return Values"), as
//! little-endian Linux uses it. Pure data: this module compiles and is tested on every host (no
//! `cfg(target_arch)`); on powerpc64le Linux the ELFv2 executor carries the plans out.
//!
//! # The parameter save area
//! ELFv2 lays the arguments out as an image in memory, the **parameter save area** (PSA), which
//! starts at `32(r1)` in the caller's frame at the call (ELFv2 "The Stack Frame", after the 32-byte
//! frame header of back chain, CR save, LR save and TOC save). Every argument takes whole
//! doublewords of it, in order, each aligned to 8 bytes (16 for an aggregate whose alignment is
//! 16 or more and which is not a homogeneous floating-point aggregate). The first eight
//! doublewords (bytes 0..64) are *shadowed* by `r3..r10`: the part of an argument that falls in
//! doubleword d < 8 is passed in `r(3 + d)` (loaded as `ld` loads that doubleword: little-endian,
//! the first byte in the low-order byte), the rest in memory at its PSA offset. Floating-point
//! values go in `f1..f13` *instead*, but still take their doublewords (so a `double` passed in
//! `f1` leaves `r3` unused).
//!
//! A plan is that image:
//! - `Location::Int(n)` is `r(3 + n)`, n < 8, the PSA doubleword n (the whole 64-bit register is
//!   written, narrow values extended as their [`Conversion`] says);
//! - `Location::Vector(n)` is `f(1 + n)`, n < 13 (the whole register: a 4-byte move with
//!   [`Conversion::FloatToDouble`] is a `float` converted to double format, as `lfs` loads it —
//!   floating-point registers hold single-precision values in double format —
//!   and an 8-byte move is a `double`);
//! - `Location::Stack(off)` is byte `off` of the PSA, never below 64 (the shadowed bytes are
//!   registers); the executor adds the PSA's base, `32(r1)`, and writes the whole doubleword
//!   (the value's bytes first, a `float` as its 4 single-precision bytes, zero above).
//! - [`CallPlan::stack_bytes`] is the PSA's size in bytes, the shadowed 64 included: at least 64
//!   always (the caller must provide the area when an argument is in memory or the callee is
//!   variadic, and providing it always, as the JDK does, is never wrong), and
//!   `8 × (doublewords used)` beyond that. An executor reserves `32 + stack_bytes` bytes (frame
//!   header and PSA; rounded up to 16) below the caller's stack pointer.
//! - `Register::Int(0..2)` = `r3, r4`; `Register::Vector(0..8)` = `f1..f8`; a 4-byte
//!   [`ReturnMove`] from an FPR (and a `float` [`ReturnPlan::Scalar`] in `f1`) is a `float` held
//!   in double format (`stfs` stores it). A struct returned in memory has its address in `r3`
//!   ([`CallPlan::hidden_return_pointer`] `Some(Int(0))`), which takes doubleword 0 and shifts
//!   every argument by one.
//!
//! Several moves of one argument may cover the same source bytes: the value must then be in
//! *every* one of those places (an executor performs every move; a callee reads any of them).
//! That happens for variadic floating-point arguments and homogeneous aggregates (in an FPR
//! and in their GPR or memory doubleword) and for a homogeneous `float` aggregate split
//! between FPRs and GPRs (see below).
//!
//! # The rules
//! - **Integer scalars** (integers, `bool`, pointers) take one doubleword: a GPR or memory.
//!   Narrow values are extended to 64 bits by the caller according to their type (ELFv2
//!   "Parameter Passing in Registers"): signed ones sign-extended, unsigned ones (`unsigned int` included) and `bool`
//!   zero-extended. A scalar returned in `r3` is extended the same way by the callee.
//! - **Floating-point scalars**: a named `float`/`double` takes the next of `f1..f13` while one
//!   is left, and its doubleword (unwritten); once `f13` is used it is passed in its doubleword
//!   as its raw bits (a GPR, or memory; a `float` as its 4 single-precision bytes).
//! - **Homogeneous floating-point aggregates** (HFAs: structs, unions and arrays inside them,
//!   nested, whose leaves are all `float` or all `double`, 1 to 8 of them, with no padding at any
//!   level): one FPR per member, consecutively, a `float` member in double format. The aggregate
//!   still takes its doublewords (a `float` HFA packs two members per doubleword), aligned to 8
//!   whatever its alignment. When the FPRs run out part-way, the members that got none are
//!   passed in the image from **the doubleword holding the first of them** to the end (GPRs,
//!   then memory): with `f13` holding member 4 of an 8-`float` HFA, the doubleword of members
//!   4 and 5 goes in its GPR too, so member 4 is in both. Zero-size members are skipped (empty
//!   structs, arrays of them), but a zero-length array anywhere inside a member makes the
//!   aggregate an ordinary one (gcc's rule) — except that an *argument* struct whose only
//!   member of non-zero size is (through nested structs and one-element arrays) a
//!   `float`/`double` as large as the struct still takes one FPR: gcc gives it the scalar's
//!   machine mode and passes it as that scalar (it returns it in `r3`, as an aggregate).
//! - **Other aggregates** (any size) are passed by value as their image: each doubleword in
//!   its GPR or in memory, split between `r10` and memory when it straddles doubleword 8; the
//!   last move reads only the bytes that exist (a 3-byte struct is one 3-byte move into the low
//!   bytes of its GPR). An aggregate of alignment 16 or more starts at an even doubleword (the
//!   skipped one stays unused).
//! - **Variadic arguments**: a variadic `float` is promoted to `double` (C11 §6.5.2.2 ¶7). A
//!   variadic floating-point scalar or HFA is passed in FPRs as a named one would be (while FPRs
//!   are left) *and* in its whole image (GPRs, memory), which is where `va_arg` reads it: the
//!   plan has the FPR moves first, then the image moves, over the same bytes.
//! - **Results**: an integer scalar in `r3`, a `float`/`double` in `f1`; an HFA in `f1..f8`, one
//!   member each; another aggregate of at most 16 bytes in `r3`, `r4` (its image); anything
//!   larger in memory whose address the caller passes in `r3`.
//!
//! `long double` has no layout in gatun: it is the IBM double-double format in 16 bytes with
//! Debian's and most distributions' toolchains (`__LONG_DOUBLE_IBM128__`, a pair of FPRs), but
//! IEEE binary128 (passed in a vector register) where the toolchain defaults to
//! `-mabi=ieeelongdouble`; which one a library uses cannot be known from its symbols, so gatun
//! has no descriptor for it and these rules never apply. Vector types are likewise absent.
//! Sizes and limits are checked as in the other classifiers: a descriptor needing a PSA over
//! [`MAX_STACK_BYTES`](super::MAX_STACK_BYTES) bytes (the shadowed 64 included) is rejected,
//! and the work is linear in the arguments and the distinct sub-layouts of the HFA candidates.

use std::collections::HashMap;

use crate::abi::{
    ArgMove, ArgPlan, CallPlan, Conversion, Location, Register, ReturnMove, ReturnPlan, StackArea,
};
use crate::error::Result;
use crate::layout::{FunctionDescriptor, MemoryLayout, ScalarKind};

/// Number of general-purpose argument registers (`r3..r10`), the shadowed doublewords of the
/// parameter save area.
pub const GPR_ARG_REGS: u8 = 8;
/// Number of floating-point argument registers (`f1..f13`).
pub const FPR_ARG_REGS: u8 = 13;
/// Number of floating-point return registers (`f1..f8`).
// Read by the `internals` view and the tests.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub const FPR_RET_REGS: u8 = 8;
/// Largest number of members of a homogeneous floating-point aggregate.
pub const MAX_HFA_MEMBERS: usize = 8;
/// Offset of the parameter save area from the stack pointer (`r1`) at the call: the frame
/// header (back chain, CR save, LR save, TOC save) comes first. [`Location::Stack`] offsets are
/// from the area's start.
// Read by the `internals` view and the tests.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub const SAVE_AREA_OFFSET: u32 = 32;
/// Smallest parameter save area a plan asks for: the 64 bytes shadowed by `r3..r10`.
pub const MIN_SAVE_AREA_BYTES: u32 = 64;

/// How a value is passed, before the save-area layout.
///
/// ```
/// use gatun::abi::ppc64le::{classify, ArgClass};
/// use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
/// let s = MemoryLayout::c_struct([ValueLayout::F32; 6]).unwrap();
/// assert_eq!(classify(&s), ArgClass::Hfa { kind: ScalarKind::F32, count: 6 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgClass {
    /// An integer, bool or pointer scalar: one doubleword.
    Integer(ScalarKind),
    /// A `float` or `double` scalar: one FPR, and one doubleword.
    Float(ScalarKind),
    /// A homogeneous floating-point aggregate of `count` (1..=8) members of `kind`.
    Hfa {
        /// The member type, [`ScalarKind::F32`] or [`ScalarKind::F64`].
        kind: ScalarKind,
        /// Number of members, 1..=8.
        count: u8,
    },
    /// Any other aggregate: its image in doublewords.
    Aggregate {
        /// Whether its alignment is 16 or more (it then starts at an even doubleword).
        align16: bool,
    },
}

/// The HFA shape of a sub-layout: `Some((None, 0))` for no leaves (zero size),
/// `Some((Some(kind), n))` for n leaves of `kind`, `None` for "not part of an HFA".
type Shape = Option<(Option<ScalarKind>, usize)>;

/// Largest byte size of an HFA (8 doubles).
const MAX_HFA_BYTES: usize = 64;

#[cfg(test)]
thread_local! {
    /// Group nodes visited by the HFA walk on this thread (tests bound the work by it).
    pub(crate) static VISITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The memo key of a group node: the address of its member list or element, with the kind of
/// group (a sequence's count included).
fn node_key(layout: &MemoryLayout) -> Option<(usize, usize)> {
    match layout {
        MemoryLayout::Struct(s) => Some((s.members().as_ptr() as usize, usize::MAX)),
        MemoryLayout::Union(u) => Some((u.members().as_ptr() as usize, usize::MAX - 1)),
        MemoryLayout::Sequence(s) => Some((s.element() as *const MemoryLayout as usize, s.count())),
        MemoryLayout::Value(_) | MemoryLayout::Padding(_) => None,
    }
}

/// Finds HFA shapes, each distinct group node once (shared sub-layouts cost their number of
/// distinct nodes; element counts are multiplied, never expanded; parts over
/// [`MAX_HFA_BYTES`] are rejected before descent).
struct HfaWalker {
    memo: HashMap<(usize, usize), Shape>,
    zero_memo: HashMap<(usize, usize), bool>,
}

impl HfaWalker {
    /// Whether a zero-length sequence is inside `layout` (or is it).
    fn has_zero_array(&mut self, layout: &MemoryLayout) -> bool {
        let Some(key) = node_key(layout) else {
            return false;
        };
        if let Some(&z) = self.zero_memo.get(&key) {
            return z;
        }
        #[cfg(test)]
        VISITS.with(|v| v.set(v.get() + 1));
        let z = match layout {
            MemoryLayout::Sequence(s) => s.count() == 0 || self.has_zero_array(s.element()),
            MemoryLayout::Struct(s) => s.members().iter().any(|m| self.has_zero_array(m)),
            MemoryLayout::Union(u) => u.members().iter().any(|m| self.has_zero_array(m)),
            MemoryLayout::Value(_) | MemoryLayout::Padding(_) => false,
        };
        self.zero_memo.insert(key, z);
        z
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
            // A zero-size member: skipped, unless a zero-length array is inside (gcc).
            _ if size == 0 => {
                return (!self.has_zero_array(layout)).then_some((None, 0));
            }
            _ => node_key(layout)?,
        };
        if let Some(&known) = self.memo.get(&key) {
            return known;
        }
        #[cfg(test)]
        VISITS.with(|v| v.set(v.get() + 1));
        let shape = self.group_shape(layout);
        // No padding at any level: the size is exactly the leaves' sizes.
        let shape = shape.filter(|&(k, n)| k.is_some_and(|k| n * k.byte_size() == size));
        self.memo.insert(key, shape);
        shape
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
                    let (k, n) = self.shape(m)?;
                    kind = join(kind, k)?;
                    count += n;
                    if count > MAX_HFA_MEMBERS {
                        return None;
                    }
                }
                Some((kind, count))
            }
            MemoryLayout::Union(u) => {
                let (mut kind, mut count) = (None, 0usize);
                for m in u.members() {
                    let (k, n) = self.shape(m)?;
                    kind = join(kind, k)?;
                    count = count.max(n);
                }
                Some((kind, count))
            }
            MemoryLayout::Sequence(s) => {
                // Non-zero size (checked by `shape`) and at most 64 bytes.
                let (k, n) = self.shape(s.element())?;
                let count = n.checked_mul(s.count())?;
                (count <= MAX_HFA_MEMBERS).then_some((k, count))
            }
            MemoryLayout::Value(_) | MemoryLayout::Padding(_) => None,
        }
    }
}

/// `Some((kind, count))` when `layout` is a group that is an HFA.
fn hfa(layout: &MemoryLayout) -> Option<(ScalarKind, u8)> {
    if !layout.is_group() || layout.byte_size() > MAX_HFA_BYTES {
        return None;
    }
    let mut walker = HfaWalker {
        memo: HashMap::new(),
        zero_memo: HashMap::new(),
    };
    match walker.shape(layout)? {
        (Some(kind), n @ 1..=MAX_HFA_MEMBERS) => Some((kind, n as u8)),
        _ => None,
    }
}

/// gcc's second way into an FPR: a struct whose only member of non-zero size is (through
/// nested structs and one-element arrays) a `float`/`double` of the struct's whole size has that
/// scalar's machine mode, and gcc passes it as the scalar even when a zero-length array made it
/// an ordinary aggregate. Unions never qualify (gcc gives them integer modes). Walks one chain
/// of members: O(members on the chain).
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

/// Classifies an argument of `layout`. A struct that is not an HFA but has a `float`/`double`
/// machine mode (see the module docs) is an HFA of one member here; as a result it is an
/// ordinary aggregate (gcc returns it in `r3`).
///
/// Cost: O(1) for a scalar or an aggregate over 64 bytes; otherwise linear in the number of
/// distinct group nodes (shared sub-layouts are walked once, element counts never expanded).
///
/// ```
/// use gatun::abi::ppc64le::{classify, ArgClass};
/// use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
/// let mixed = MemoryLayout::c_struct([ValueLayout::F32, ValueLayout::F64]).unwrap();
/// assert_eq!(classify(&mixed), ArgClass::Aggregate { align16: false });
/// let nested = MemoryLayout::c_struct([mixed.clone(), mixed]).unwrap();
/// assert_eq!(classify(&nested), ArgClass::Aggregate { align16: false });
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
    if let Some((kind, count)) = hfa(layout) {
        return ArgClass::Hfa { kind, count };
    }
    if let Some(kind) = float_mode(layout) {
        return ArgClass::Hfa { kind, count: 1 };
    }
    ArgClass::Aggregate {
        align16: layout.byte_alignment() >= 16,
    }
}

/// Classifies a result of `layout`: as an argument, without the machine-mode rule.
fn classify_result(layout: &MemoryLayout) -> ArgClass {
    match classify(layout) {
        ArgClass::Hfa { .. } if hfa(layout).is_none() => ArgClass::Aggregate {
            align16: layout.byte_alignment() >= 16,
        },
        class => class,
    }
}

/// The conversion of a floating-point value of `kind` into an FPR: a `float` is converted to
/// double format.
fn fpr_conversion(kind: ScalarKind) -> Conversion {
    if kind == ScalarKind::F32 {
        Conversion::FloatToDouble
    } else {
        Conversion::Bytes
    }
}

/// The location of PSA doubleword `dw`: its GPR, or memory.
fn doubleword(dw: usize) -> Location {
    if dw < GPR_ARG_REGS as usize {
        Location::Int(dw as u8)
    } else {
        Location::Stack((8 * dw) as u32)
    }
}

/// The parameter save area being laid out, and the FPRs used.
struct Assigner {
    /// The PSA image (from byte 0, the shadowed doublewords included).
    area: StackArea,
    /// Next FPR.
    nfr: u8,
}

impl Assigner {
    /// Reserves `size` bytes (rounded up to whole doublewords) at `align` (8 or 16); the first
    /// doubleword's index, or `None` once the area is over the limit (no moves are built then).
    fn reserve(&mut self, size: usize, align: usize) -> Option<usize> {
        // A size whose doublewords overflow puts the area over the limit for good.
        let bytes = size.div_ceil(8).saturating_mul(8);
        let start = self.area.reserve(bytes, align)?;
        Some(start as usize / 8)
    }

    /// The image moves of an aggregate of `size` bytes whose first doubleword is `start`, from
    /// its doubleword `from` (counted in the aggregate) to its end.
    fn image(start: usize, size: usize, from: usize, conv: Conversion) -> Vec<ArgMove> {
        (from..size.div_ceil(8))
            .map(|k| ArgMove {
                offset: (8 * k) as u32,
                size: (size - 8 * k).min(8) as u8,
                to: doubleword(start + k),
                conv,
            })
            .collect()
    }

    /// The FPR moves of HFA members `0..` while FPRs are left; how many members got one.
    fn fpr_members(&mut self, kind: ScalarKind, count: u8) -> (Vec<ArgMove>, u8) {
        let n = count.min(FPR_ARG_REGS - self.nfr);
        let es = kind.byte_size();
        let moves = (0..n)
            .map(|k| ArgMove {
                offset: (k as usize * es) as u32,
                size: es as u8,
                to: Location::Vector(self.nfr + k),
                conv: fpr_conversion(kind),
            })
            .collect();
        self.nfr += n;
        (moves, n)
    }

    fn arg(&mut self, layout: &MemoryLayout, variadic: bool) -> ArgPlan {
        let plain = |moves| ArgPlan {
            moves,
            by_reference: None,
        };
        let size = layout.byte_size();
        let moves = match classify(layout) {
            ArgClass::Integer(kind) => match self.reserve(8, 8) {
                Some(dw) => vec![ArgMove {
                    offset: 0,
                    size: kind.byte_size() as u8,
                    to: doubleword(dw),
                    conv: Conversion::for_scalar(kind, variadic),
                }],
                None => Vec::new(),
            },
            ArgClass::Float(kind) => {
                let Some(dw) = self.reserve(8, 8) else {
                    return plain(Vec::new());
                };
                let mut moves = Vec::new();
                let fpr = self.nfr < FPR_ARG_REGS;
                if fpr {
                    moves.push(ArgMove {
                        offset: 0,
                        size: kind.byte_size() as u8,
                        to: Location::Vector(self.nfr),
                        conv: fpr_conversion(kind),
                    });
                    self.nfr += 1;
                }
                if variadic || !fpr {
                    moves.push(ArgMove {
                        offset: 0,
                        size: kind.byte_size() as u8,
                        to: doubleword(dw),
                        conv: Conversion::for_scalar(kind, variadic),
                    });
                }
                moves
            }
            ArgClass::Hfa { kind, count } => {
                let Some(start) = self.reserve(size, 8) else {
                    return plain(Vec::new());
                };
                let (mut moves, n) = self.fpr_members(kind, count);
                // The image from the doubleword of the first member without an FPR (all of
                // it for a variadic argument).
                let from = if variadic {
                    0
                } else if n == count {
                    size.div_ceil(8)
                } else {
                    n as usize * kind.byte_size() / 8
                };
                moves.extend(Self::image(start, size, from, Conversion::Bytes));
                moves
            }
            ArgClass::Aggregate { align16 } => {
                match self.reserve(size, if align16 { 16 } else { 8 }) {
                    Some(start) => Self::image(start, size, 0, Conversion::Bytes),
                    None => Vec::new(),
                }
            }
        };
        plain(moves)
    }
}

/// The return plan.
fn return_plan(layout: Option<&MemoryLayout>) -> ReturnPlan {
    let Some(layout) = layout else {
        return ReturnPlan::Void;
    };
    let size = layout.byte_size();
    match classify_result(layout) {
        ArgClass::Integer(_) => ReturnPlan::Scalar(Register::Int(0)),
        ArgClass::Float(_) => ReturnPlan::Scalar(Register::Vector(0)),
        ArgClass::Hfa { kind, count } => {
            let es = kind.byte_size();
            ReturnPlan::Registers(
                (0..count)
                    .map(|k| ReturnMove {
                        from: Register::Vector(k),
                        offset: (k as usize * es) as u32,
                        size: es as u8,
                    })
                    .collect(),
            )
        }
        ArgClass::Aggregate { .. } if size <= 16 => ReturnPlan::Registers(
            (0..size.div_ceil(8))
                .map(|k| ReturnMove {
                    from: Register::Int(k as u8),
                    offset: 8 * k as u32,
                    size: (size - 8 * k).min(8) as u8,
                })
                .collect(),
        ),
        ArgClass::Aggregate { .. } => ReturnPlan::InMemory,
    }
}

/// Plans a call of `descriptor` under the ELFv2 ABI (little-endian). `first_variadic` is the
/// index of the first variadic argument (`None` for a non-variadic function; `Some(args.len())`
/// is a variadic call with no variadic arguments).
///
/// Cost: O(number of arguments + distinct sub-layouts of the HFA candidates + doublewords of
/// the by-value aggregates), the last bounded by [`MAX_STACK_BYTES`] / 8.
///
/// ```
/// use gatun::abi::ppc64le::{describe, plan};
/// use gatun::layout::{MemoryLayout, ValueLayout};
/// use gatun::linker::FunctionDescriptor;
/// // double f(int, double, struct { float x, y, z; }): the double takes f1 and doubleword 1,
/// // the HFA f2..f4 and doublewords 2 and 3.
/// let hfa = MemoryLayout::c_struct([ValueLayout::F32; 3]).unwrap();
/// let d = FunctionDescriptor::of(ValueLayout::F64, [ValueLayout::I32.into(), ValueLayout::F64.into(), hfa]);
/// let p = plan(&d, None).unwrap();
/// assert_eq!(describe(&p), "(r3, f1, f2+f3+f4) -> f1");
/// assert_eq!(p.stack_bytes(), 64);
/// ```
///
/// # Errors
/// [`Error::InvalidDescriptor`] for a padding, sequence or zero-sized argument/return, a group
/// whose size is not a multiple of its alignment, a variadic index beyond the argument count,
/// or a parameter save area over [`MAX_STACK_BYTES`] bytes (the message gives the bytes
/// needed).
///
/// [`MAX_STACK_BYTES`]: super::MAX_STACK_BYTES
/// [`Error::InvalidDescriptor`]: crate::Error::InvalidDescriptor
pub fn plan(descriptor: &FunctionDescriptor, first_variadic: Option<usize>) -> Result<CallPlan> {
    crate::abi::check_descriptor(descriptor, first_variadic)?;
    let ret = return_plan(descriptor.return_layout());
    let in_memory = ret == ReturnPlan::InMemory;
    let mut asg = Assigner {
        area: StackArea::new(),
        nfr: 0,
    };
    if in_memory {
        asg.reserve(8, 8);
    }
    let args = descriptor
        .argument_layouts()
        .iter()
        .enumerate()
        .map(|(i, a)| asg.arg(a, first_variadic.is_some_and(|f| i >= f)))
        .collect();
    let used = asg.area.size(descriptor, "parameter save area")?;
    Ok(CallPlan {
        args,
        ret,
        hidden_return_pointer: in_memory.then_some(Location::Int(0)),
        stack_bytes: used.max(MIN_SAVE_AREA_BYTES),
        vector_registers: asg.nfr,
        first_variadic,
        packed_named_stack: false,
    })
}

/// The ELFv2 name of a move's destination: `r5`, `f1`, `psa+64` (byte 64 of the parameter save
/// area, at `96(r1)`).
///
/// ```
/// use gatun::abi::ppc64le::location_name;
/// use gatun::abi::Location;
/// assert_eq!(location_name(Location::Int(0)), "r3");
/// assert_eq!(location_name(Location::Vector(12)), "f13");
/// assert_eq!(location_name(Location::Stack(64)), "psa+64");
/// ```
pub fn location_name(loc: Location) -> String {
    match loc {
        Location::Int(n) => format!("r{}", n + 3),
        Location::Vector(n) => format!("f{}", n + 1),
        Location::Stack(o) => format!("psa+{o}"),
    }
}

/// A compact ELFv2 summary of a plan: `(r3:ret-ptr, r4, f1+r6, f2+f3+r9+r10, psa+64) -> f1+f2`,
/// each argument's destinations joined by `+` (a variadic `double` in `f1` and `r5` is
/// `f1+r5`).
///
/// ```
/// use gatun::abi::ppc64le::{describe, plan};
/// use gatun::layout::ValueLayout;
/// use gatun::linker::FunctionDescriptor;
/// let d = FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::ADDRESS, ValueLayout::F64]);
/// assert_eq!(describe(&plan(&d, Some(1)).unwrap()), "(r3, f1+r4) -> r3");
/// ```
pub fn describe(plan: &CallPlan) -> String {
    let mut parts = Vec::new();
    if let Some(h) = plan.hidden_return_pointer {
        parts.push(format!("{}:ret-ptr", location_name(h)));
    }
    for a in &plan.args {
        let m: Vec<String> = a.moves.iter().map(|m| location_name(m.to)).collect();
        parts.push(m.join("+"));
    }
    let reg = |r: Register| match r {
        Register::Int(n) => format!("r{}", n + 3),
        Register::Vector(n) => format!("f{}", n + 1),
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
