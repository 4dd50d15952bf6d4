//! The upcall half of the backend contract: what a backend's upcall entries and the upcall
//! layer's dispatchers share, and the [`UpcallEntries`] trait a backend implements.
//!
//! - [`UpcallFrame`]: the register image an entry builds on its stack (192 bytes, the same on
//!   every backend) and the dispatchers read the arguments from and write the return registers
//!   into.
//! - [`UpcallHeader`]: the first field of every dynamic upcall stub's context (`#[repr(C)]`).
//!   Its fields are the dispatchers' code addresses: an entry loads the one it calls from the
//!   header whose address its stub put in a scratch register (`call [r10]`, `blr`), so the
//!   entries name no function of the upcall layer.
//! - [`UpcallArgKind`], [`UpcallRetKind`]: where each argument of a signature is and how it
//!   is decoded, and where its result goes, read from the native plan.
//! - [`RegisterShape`]: the precomputed decoding of a signature whose arguments and result all
//!   lie in argument and return registers, for the register-shape dispatcher (made by a
//!   backend that has shape entries: x86-64 System V).
//! - [`UpcallEntries`]: the stub code a backend makes, and its optional fast paths, each with a
//!   default body meaning "not available" so that a stub falls back to the general entry.

use crate::abi::{ArgPlan, CallPlan, Location, Register, ReturnPlan};
use crate::code::ExecutableCode;
use crate::error::Result;
use crate::layout::FunctionDescriptor;
use crate::layout::{MemoryLayout, ScalarKind};
use crate::memory::MemorySegment;
use crate::value::Value;

/// The register image a native backend's upcall entry builds, the same on every backend
/// (`#[repr(C)]`: the entries' assembly uses these offsets; 192 bytes).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct UpcallFrame {
    /// 0: the integer argument registers as received: SysV rdi, rsi, rdx, rcx, r8, r9 in 0..6;
    /// AArch64 x0..x7, and x8 (the indirect-result register) at 8; Win64 rcx, rdx, r8, r9 in
    /// 0..4; RV64 a0..a7 in 0..8.
    pub gpr: [u64; 9],
    /// 72: the low 64 bits of the vector argument registers as received (SysV xmm0..xmm7,
    /// AArch64 v0..v7, Win64 xmm0..xmm3; RV64 the floating-point registers fa0..fa7).
    pub vector: [u64; 8],
    /// 136: the address `Location::Stack(0)` names: SysV, AArch64 and RV64 the caller's first
    /// stack argument; Win64 the caller's rsp at its call (the shadow space, stack arguments from 32).
    pub stack: *const u8,
    /// 144: the integer return registers to return (SysV rax, rdx; AArch64 x0, x1; Win64 rax;
    /// RV64 a0, a1).
    pub ret_int: [u64; 2],
    /// 160: the low 64 bits of the vector return registers to return (SysV xmm0, xmm1 in 0..2;
    /// AArch64 v0..v3; Win64 xmm0; RV64 fa0, fa1 in 0..2).
    pub ret_vector: [u64; 4],
}

/// Word index of [`UpcallFrame::vector`] in the frame seen as `u64`s.
pub(crate) const VECTOR_WORD: usize = 9;
/// Word index of [`UpcallFrame::ret_int`].
pub(crate) const RET_INT_WORD: usize = 18;
/// Word index of [`UpcallFrame::ret_vector`].
pub(crate) const RET_VECTOR_WORD: usize = 20;

// The offsets the entries' assembly uses.
const _: () = {
    assert!(std::mem::offset_of!(UpcallFrame, gpr) == 0);
    assert!(std::mem::offset_of!(UpcallFrame, vector) == 8 * VECTOR_WORD);
    assert!(std::mem::offset_of!(UpcallFrame, stack) == 136);
    assert!(std::mem::offset_of!(UpcallFrame, ret_int) == 8 * RET_INT_WORD);
    assert!(std::mem::offset_of!(UpcallFrame, ret_vector) == 8 * RET_VECTOR_WORD);
    assert!(std::mem::size_of::<UpcallFrame>() == 192);
    assert!(std::mem::offset_of!(UpcallHeader, dispatch) == 0);
    assert!(std::mem::offset_of!(UpcallHeader, shape_dispatch) == 8);
};

impl UpcallFrame {
    /// The 64-bit value of an argument location.
    ///
    /// # Safety
    /// For `Location::Stack(off)`, `stack + off .. + 8` must be readable.
    #[inline(always)]
    pub(crate) unsafe fn arg(&self, loc: Location) -> u64 {
        match loc {
            Location::Int(n) => self.gpr[n as usize],
            Location::Vector(n) => self.vector[n as usize],
            // SAFETY: forwarded to the caller.
            Location::Stack(off) => unsafe {
                self.stack.add(off as usize).cast::<u64>().read_unaligned()
            },
        }
    }

    /// Sets the return register `r` (as a plan names it) to `bits`.
    #[inline(always)]
    pub(crate) fn set_return(&mut self, r: Register, bits: u64) {
        // Plans name x0/x1 (rax/rdx) and v0..v3 only (no bounds checks on the hot path).
        match r {
            Register::Int(0) => self.ret_int[0] = bits,
            Register::Int(_) => self.ret_int[1] = bits,
            Register::Vector(0) => self.ret_vector[0] = bits,
            Register::Vector(n) => self.ret_vector[n as usize & 3] = bits,
        }
    }
}

/// The frame word of a return register as a plan names it (x0/x1 or rax/rdx, v0..v3).
#[inline]
pub(crate) fn return_word(r: Register) -> usize {
    match r {
        Register::Int(0) => RET_INT_WORD,
        Register::Int(_) => RET_INT_WORD + 1,
        Register::Vector(n) => RET_VECTOR_WORD + (n as usize & 3),
    }
}

/// A dispatcher an entry calls: `(header, frame)`, the header being the stub's context.
pub(crate) type UpcallDispatch = unsafe extern "C" fn(*const UpcallHeader, *mut UpcallFrame);

/// The first field of a dynamic upcall stub's context (`#[repr(C)]`, 16 bytes): the code
/// addresses of its dispatchers. A stub puts the header's address in a scratch register;
/// its entry calls one of these with `(header, frame)`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct UpcallHeader {
    /// Offset 0: the dispatcher of the general entry (every backend's `upcall_code`).
    pub dispatch: UpcallDispatch,
    /// Offset 8: the dispatcher of a register-shape entry
    /// ([`UpcallEntries::shape_upcall_code`]); `dispatch` again when the stub has no
    /// register-shape path.
    pub shape_dispatch: UpcallDispatch,
}

/// One argument of an upcall signature, where the native plan puts it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum UpcallArgKind {
    /// A scalar and its register or stack slot (the plan's single move).
    Scalar(ScalarKind, Location),
    /// A struct or union by value: copied from its moves (`size` and `align` in bytes).
    Group { size: usize, align: usize },
    /// A struct or union the caller passes as a pointer to its own copy (AAPCS64 §6.8.2 B.3,
    /// Win64 aggregates not of 1, 2, 4 or 8 bytes, RV64 aggregates over 16 bytes): the pointer
    /// is at `at`; `size` in bytes.
    ByReference { size: usize, at: Location },
}

impl UpcallArgKind {
    /// The kind of an argument of layout `layout` that the plan passes as `ap`.
    pub(crate) fn of(layout: &MemoryLayout, ap: &ArgPlan) -> UpcallArgKind {
        match (layout, ap.by_reference) {
            (MemoryLayout::Value(v), _) => UpcallArgKind::Scalar(v.kind(), ap.moves[0].to),
            (g, Some(at)) => UpcallArgKind::ByReference {
                size: g.byte_size(),
                at,
            },
            (g, None) => UpcallArgKind::Group {
                size: g.byte_size(),
                align: g.byte_alignment(),
            },
        }
    }
}

/// The result of an upcall signature, where the native plan puts it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum UpcallRetKind {
    /// `void`.
    Void,
    /// A scalar and its return register.
    Scalar(ScalarKind, Register),
    /// A struct or union of this many bytes (in registers or behind the hidden pointer, per
    /// the plan).
    Group(usize),
}

impl UpcallRetKind {
    /// The kind of a result of layout `layout` (`None`: `void`) that the plan returns as `ret`.
    pub(crate) fn of(layout: Option<&MemoryLayout>, ret: &ReturnPlan) -> UpcallRetKind {
        match layout {
            None => UpcallRetKind::Void,
            Some(MemoryLayout::Value(v)) => UpcallRetKind::Scalar(
                v.kind(),
                match *ret {
                    ReturnPlan::Scalar(r) => r,
                    _ => Register::Int(0),
                },
            ),
            Some(g) => UpcallRetKind::Group(g.byte_size()),
        }
    }
}

/// The most arguments a [`RegisterShape`] takes.
pub(crate) const SHAPE_ARGS: usize = 8;

/// [`ShapeArg::kind`]: a scalar in frame word `word`.
pub(crate) const SHAPE_SCALAR: u8 = 0;
/// [`ShapeArg::kind`]: a struct whose bytes are frame words `word`, `word + 1` (in place).
pub(crate) const SHAPE_IN_PLACE: u8 = 1;
/// [`ShapeArg::kind`]: a struct whose eightbytes are frame words `word` and `word2` (copied).
pub(crate) const SHAPE_COPIED: u8 = 2;
/// [`ShapeArg::kind`]: a struct of two eightbytes whose first is frame word `word` and whose
/// second is padding only (passed in no register): copied, the second eightbyte zeroed.
pub(crate) const SHAPE_COPIED_LOW: u8 = 3;

/// [`RegisterShape::class`]: `void`.
pub(crate) const RET_VOID: u8 = 0;
/// [`RegisterShape::class`]: a scalar in frame word `ret_word`.
pub(crate) const RET_SCALAR: u8 = 1;
/// [`RegisterShape::class`]: a struct in registers, per `ret_moves`.
pub(crate) const RET_GROUP: u8 = 2;
/// [`RegisterShape::class`]es of a 16-byte struct returned as two whole eightbytes, bytes
/// 0..8 and 8..16: in the first two integer return registers (SysV rax and rdx), integer and
/// vector (rax and xmm0), vector and integer (xmm0 and rax), two vector (xmm0 and xmm1):
/// constant return words, so the dispatcher reads nothing of the context after the closure.
pub(crate) const RET_II: u8 = 3;
/// See [`RET_II`].
pub(crate) const RET_IV: u8 = 4;
/// See [`RET_II`].
pub(crate) const RET_VI: u8 = 5;
/// See [`RET_II`].
pub(crate) const RET_VV: u8 = 6;

/// The frame words of the two eightbytes of return class `c` (one of [`RET_II`]..[`RET_VV`]).
pub(crate) const fn pair_words(c: u8) -> (usize, usize) {
    match c {
        RET_II => (RET_INT_WORD, RET_INT_WORD + 1),
        RET_IV => (RET_INT_WORD, RET_VECTOR_WORD),
        RET_VI => (RET_VECTOR_WORD, RET_INT_WORD),
        _ => (RET_VECTOR_WORD, RET_VECTOR_WORD + 1),
    }
}

/// One argument of a [`RegisterShape`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ShapeArg {
    /// [`SHAPE_SCALAR`], [`SHAPE_IN_PLACE`], [`SHAPE_COPIED`] or [`SHAPE_COPIED_LOW`].
    pub kind: u8,
    /// A scalar's `Value` tag.
    pub tag: u8,
    /// The frame word of the scalar, or of the struct's first eightbyte.
    pub word: u8,
    /// The frame word of a copied struct's second eightbyte (its first, for one eightbyte).
    pub word2: u8,
    /// Whether the scalar is a `bool` (normalised to 0 or 1).
    pub is_bool: bool,
    /// A struct's size in bytes (1..=16).
    pub size: u8,
}

/// One register part of a struct return: `size` bytes at `offset` of the result go to frame
/// word `word`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ShapeRetMove {
    /// A return word of the frame.
    pub word: u8,
    /// Byte offset in the struct.
    pub offset: u8,
    /// Bytes (1..=8).
    pub size: u8,
}

/// The precomputed decoding of a register-shape signature: every argument (at most
/// [`SHAPE_ARGS`]) a scalar or a struct/union of one or two eightbytes in argument registers,
/// the result `void`, a scalar, or a struct/union in at most two return registers.
///
/// Invariants (checked by the backend that makes it): every `word` of a [`ShapeArg`] is an
/// argument-register word of the frame (below 17), and an in-place struct's `size` bytes lie
/// in the frame's register words from `word`; every [`ShapeRetMove`] lies inside the return
/// layout (`offset + size <= ret_size`) and names a return word of the frame (18..22).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RegisterShape {
    /// The number of arguments (at most [`SHAPE_ARGS`]).
    pub len: u8,
    /// The return class ([`RET_VOID`]..[`RET_VV`]).
    pub class: u8,
    /// Integer argument registers the entry stores (rounded up to 0, 2, 4 or 6).
    pub gprs: u8,
    /// Vector argument registers the entry stores (rounded up to 0, 2, 4 or 8).
    pub vectors: u8,
    /// The first `len` are the arguments.
    pub args: [ShapeArg; SHAPE_ARGS],
    /// A scalar return's kind.
    pub ret_kind: ScalarKind,
    /// A scalar return's frame word.
    pub ret_word: u8,
    /// A struct return's size in bytes (at most 16).
    pub ret_size: u8,
    /// A struct return's moves (the first `ret_moves_len`).
    pub ret_moves: [ShapeRetMove; 2],
    /// The number of `ret_moves`.
    pub ret_moves_len: u8,
}

impl RegisterShape {
    /// Whether the shape entry stores frame word `word` (an argument register among the
    /// first [`RegisterShape::gprs`] integer or [`RegisterShape::vectors`] vector ones).
    pub(crate) fn stores(&self, word: u8) -> bool {
        match word.checked_sub(VECTOR_WORD as u8) {
            None => word < self.gprs,
            Some(v) => v < self.vectors,
        }
    }
}

/// The upcall entries of a backend: the code of a stub, and its optional fast paths.
///
/// Every optional path has a default body returning `None` ("not available"): the upcall
/// layer then takes the general entry ([`UpcallEntries::upcall_code`]), whose dispatcher
/// handles every signature the backend's plan accepts. Only x86-64 System V overrides them.
pub(crate) trait UpcallEntries {
    /// The code of a stub whose context starts with the header at `header`, placed in the
    /// code arena: it passes the header's address to the backend's general entry, which stores
    /// the argument registers and the stack-argument address into an [`UpcallFrame`], calls
    /// `header.dispatch` with `(header, frame)` and returns the frame's return registers.
    ///
    /// # Errors
    /// [`crate::Error::Unsupported`] on a target without upcalls, or if the OS refuses
    /// executable memory.
    fn upcall_code(header: *const UpcallHeader) -> Result<ExecutableCode>;

    /// The integer-register path: `Some(n)` when a stub for these arguments can load its
    /// context's address into integer argument register `n` (free: the `n` arguments are the
    /// scalars in integer argument registers `0..n`, in order) and jump to an
    /// `extern "C" fn(a0: u64, .., a<n-1>: u64, context) -> u64` whose 64-bit result is the
    /// return register (the result is `void` or a scalar in the first integer return
    /// register). The code is [`UpcallEntries::free_register_code`]'s.
    fn int_register_args(_args: &[UpcallArgKind], _ret: UpcallRetKind) -> Option<usize> {
        None
    }

    /// The register-shape path: the [`RegisterShape`] of a signature whose plan is `plan`,
    /// if the backend has a shape entry for it ([`UpcallEntries::shape_upcall_code`]).
    fn register_shape(
        _args: &[UpcallArgKind],
        _ret: UpcallRetKind,
        _plan: &CallPlan,
    ) -> Option<RegisterShape> {
        None
    }

    /// The code of a register-shape stub for `shape` whose context starts with the header at
    /// `header`: the shape entry stores only the argument registers `shape` uses into an
    /// [`UpcallFrame`] and calls `header.shape_dispatch` with `(header, frame)`. `None` if
    /// the backend has no shape entries.
    ///
    /// # Errors
    /// In the `Some`: [`crate::Error::Unsupported`] if the OS refuses executable memory.
    ///
    /// # Safety
    /// `shape` is this backend's [`UpcallEntries::register_shape`] of the signature the stub
    /// is called as, and `header.shape_dispatch` is a shape dispatcher for it.
    unsafe fn shape_upcall_code(
        _shape: &RegisterShape,
        _header: *const UpcallHeader,
    ) -> Option<Result<ExecutableCode>> {
        None
    }

    /// The typed (free-register) path: the integer argument register (its index among the
    /// integer argument registers) in which the native ABI passes a pointer parameter
    /// appended to `descriptor`'s parameters, whose plan is `plan`, when that pointer adds no
    /// stack bytes; `None` if there is none or the backend has no free-register stubs.
    fn free_register(_descriptor: &FunctionDescriptor, _plan: &CallPlan) -> Option<usize> {
        None
    }

    /// The code of a free-register stub: `context` into integer argument register `n`, then a
    /// jump to `target`, the caller's argument registers and stack untouched. `None` if the
    /// backend has no free-register stubs.
    ///
    /// # Errors
    /// In the `Some`: [`crate::Error::Unsupported`] if the OS refuses executable memory.
    ///
    /// # Safety
    /// `target` is an `extern "C"` function whose parameters are those of the C type the stub
    /// is called as followed by one pointer parameter that the native ABI puts in integer
    /// argument register `n` ([`UpcallEntries::free_register`],
    /// [`UpcallEntries::int_register_args`]); it must accept `context` there.
    unsafe fn free_register_code(
        _n: usize,
        _context: usize,
        _target: usize,
    ) -> Option<Result<ExecutableCode>> {
        None
    }

    /// The image of a scalar upcall result of `kind` in its return register, from the result's
    /// bits as [`Value`] gives them (the declared width's value, signed kinds sign-extended and
    /// the others zero-extended to 64 bits, a `float` in the low 32). The default, the bits
    /// themselves, is right where the caller reads only the declared width (System V AMD64,
    /// AArch64, Win64); a backend whose ABI defines the whole register overrides it (RV64: an
    /// `unsigned int` sign-extended from bit 31, a `float` NaN-boxed). Every dispatcher applies
    /// it but the integer-register path's (whose result is its dispatcher's return value): a
    /// backend that overrides it has no integer-register path
    /// ([`UpcallEntries::int_register_args`]).
    #[inline(always)]
    fn scalar_return_bits(_kind: ScalarKind, bits: u64) -> u64 {
        bits
    }

    /// The image of one register part of a struct upcall result in its return register
    /// (`vector`: a vector or floating-point register, else an integer one), from the part's
    /// `size` bytes in the low bytes of `bits` (the bytes above them unspecified). The
    /// default, the bits themselves, is right where the caller reads only the part's bytes; a
    /// backend whose ABI defines more of the register overrides it (RV64: a `float` member
    /// NaN-boxed). Applied where [`UpcallEntries::scalar_return_bits`] is.
    #[inline(always)]
    fn group_return_bits(_vector: bool, _size: usize, bits: u64) -> u64 {
        bits
    }

    /// Writes `Value::Segment` over `len` bytes at `ptr` into `slot` (a backend may write it
    /// in the pieces its closures' loads of a whole `Value` forward from best).
    ///
    /// # Safety
    /// `slot` is valid for writes of a `Value`; `ptr .. ptr + len` is a valid segment for the
    /// upcall (non-null).
    #[inline(always)]
    unsafe fn write_segment_value(slot: *mut Value<'_>, ptr: *mut u8, len: usize) {
        // SAFETY: the caller's contract.
        unsafe { slot.write(Value::Segment(MemorySegment::from_raw_parts(ptr, len))) };
    }
}
