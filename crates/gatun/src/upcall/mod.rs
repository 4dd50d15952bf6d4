//! Upcalls: Rust closures as C function pointers (Java's `Linker.upcallStub`).
//!
//! [`Linker::upcall_stub`]`(descriptor, closure, &arena)` returns an [`UpcallStub`]: a C function
//! pointer of the descriptor's type that, when C calls it, decodes the arguments with the
//! descriptor's [`CallPlan`] of the native ABI (SysV AMD64, AAPCS64 or Win64: the same plan a
//! downcall uses, read in reverse: where each argument *is*), calls the closure with them as [`Value`]s,
//! and encodes its result where the caller expects it.
//!
//! When the closure's C signature is known at compile time, [`Linker::upcall_typed`] (module
//! [`typed`]) takes a plain `Fn(A0, ..) -> R` instead and, on x86-64 System V, reaches it
//! without decoding anything. The rules below are those of the dynamic stubs.
//!
//! - **Arguments.** Scalars arrive as their `Value` variants, truncated to their declared width
//!   (a `bool` is `byte != 0`). A struct or union by value — in registers or, for MEMORY-class
//!   and spilled structs, on the caller's stack — is copied and arrives as a
//!   [`Value::Segment`] that lives for the duration of the upcall only (the lifetime of
//!   [`UpcallArgs`] makes keeping it longer a compile error). When every argument and the
//!   return are in registers the copies go into a buffer on the dispatcher's stack (on x86-64
//!   System V a struct whose eightbytes arrived in consecutive registers of one class is not
//!   copied at all: its segment points at the register values the entry saved on its stack,
//!   which the closure may also write); otherwise into one frame of the per-thread
//!   [`linker_stack`] (the JDK's `Allocate` binding from the upcall's context arena). Upcalls
//!   without struct arguments copy nothing. A struct
//!   the caller passes by reference (AAPCS64 §6.8.2 B.3: over 16 bytes and not an HFA; Win64:
//!   any size but 1, 2, 4 or 8 bytes) is not copied: its segment is the caller's own copy,
//!   which the closure may also write.
//! - **Returns.** The closure returns `Ok(value)`: [`Value::Void`] for `void`, the scalar of
//!   exactly the declared kind (a pointer as `Value::Address` or `Value::Segment`), or, for a
//!   struct return, either a `Value::Segment` of at least the layout's size whose bytes are
//!   copied, or `Value::Void` after writing the result into [`UpcallArgs::return_segment`]
//!   (no copy). For an in-memory return the return segment *is* the caller's buffer behind
//!   the hidden pointer (SysV rdi and Win64 rcx, which is then returned in rax; AArch64 x8); for
//!   a register-returned struct it is a zeroed image on the Rust stack whose parts are loaded
//!   into the return registers per the plan's [`ReturnPlan`] (SysV rax/rdx/xmm0/xmm1, AArch64
//!   x0/x1 or v0..v3, Win64 rax). Small integer returns are sign- or zero-extended to 64 bits.
//! - **Errors and panics: abort.** An upcall has nowhere to report an error: C expects a value.
//!   If the closure returns `Err`, returns a value of the wrong kind, or panics, gatun prints
//!   `gatun: upcall <descriptor>: ...` on stderr and aborts the process
//!   ([`std::process::abort`]); a panic is caught with `catch_unwind` first, so it never
//!   unwinds into C frames (which would be undefined behaviour). This is the JDK's policy for
//!   an uncaught exception in an upcall (it crashes the VM).
//! - **Threads.** C may call the pointer from any thread, including threads Rust never saw
//!   (created with `pthread_create` in C): the closure must be `Send + Sync`, a bound of
//!   [`Linker::upcall_stub`]. On such a thread the first upcall that copies into the linker
//!   stack (struct arguments not all in registers) creates the thread's linker-stack block; it is freed when the thread exits (Rust's thread-local
//!   destructors run for every pthread).
//!   A closure that is not `Send + Sync` (it captures an `Rc`, a `RefCell`, a segment of a
//!   confined arena) goes through [`Linker::upcall_stub_confined`] instead: the
//!   [`ConfinedUpcallStub`] is `!Send`, and a call on any other thread aborts before the closure
//!   runs.
//! - **Reentrancy.** An upcall may run downcalls that run upcalls (the JDK's deep-stack test):
//!   each level has its own Rust stack frame, and linker-stack frames nest LIFO, falling back
//!   to the heap when the 256-byte stack is full.
//!
//! # Lifetime (differs from the JDK in form, not in effect)
//! The JDK frees an upcall stub when its arena closes. In gatun the [`UpcallStub`] value owns
//! the stub's code and closure and frees them when it is dropped; it borrows the arena it was
//! made for, so it cannot outlive it. To keep a callback for the life of the process (C code
//! that stores it), make it from [`crate::memory::Arena::global`] and [`UpcallStub::leak`] it.
//! The C function pointer is a raw address: C must not call it after the stub is dropped, and
//! the stub must not be dropped while a call into it is running (on any thread, including from
//! inside its own closure). Both are part of the contract of the `unsafe` call that hands the
//! pointer to C.
//!
//! # Invariants (the unsafe story of this module)
//! - A stub's code holds the address of its boxed `Context`, which lives exactly as long as
//!   the [`UpcallStub`] (fields drop code first, then the context).
//! - `gatun_upcall_dispatch` is called only by the native backend's upcall entry with a frame holding the
//!   C caller's argument registers and the address of its stack arguments, for a call of the
//!   stub's descriptor type (the caller's contract): every `Location::Stack(off)` of the plan
//!   is then readable at `frame.stack + off`, and a MEMORY return's hidden pointer is writable
//!   for the return layout's size.
//! - Struct argument copies are zeroed where no move writes (padding), then written with
//!   exactly each move's `size` bytes at its `offset` (inside the copy of the layout's size):
//!   every byte of a struct argument's segment is initialised. A register-returned struct's
//!   image is zeroed, 32 bytes on the general and register paths (an AAPCS64 HFA of four
//!   doubles) and 16 bytes on the shape path (SysV returns at most two eightbytes).
//! - A context is `#[repr(C)]` with `shape_dispatch` first: the x86-64 System V shape entries
//!   call the function pointer at the context's address, which is set only for signatures that
//!   `shape::ShapePath::of` accepted on the native plan (every argument in the registers the
//!   entry stores, the result in rax/rdx/xmm0/xmm1). The integer path's stubs jump to
//!   `IntPath::entry` only for signatures `IntPath::of` accepted (arguments in rdi.. in order,
//!   at most five, result in rax), with the context in the register after the last argument.
//! - A `RegisterPath`'s moves lie inside the 128-byte copy buffer and inside each struct,
//!   and name only register words of the frame (checked when it is made).

use std::ffi::c_void;
use std::fmt;
use std::io::Write as _;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi::{ArgPlan, CallPlan, Location, Register, ReturnPlan};
use crate::backend::{load_low_bytes, store_low_bytes, CopyArea, Direction};
use crate::code::ExecutableCode;
use crate::error::{Error, Result};
use crate::layout::{MemoryLayout, ScalarKind};
use crate::linker::{FunctionDescriptor, Linker};
use crate::memory::{linker_stack, MemorySegment, SegmentAllocator};
use crate::value::{Scalar, Value};

mod shape;
pub mod typed;
pub use typed::{TypedUpcallStub, UpcallFn, UpcallSignature};

/// The register image a native backend's upcall entry builds, the same on every backend
/// (`#[repr(C)]`: the entries' assembly uses these offsets; 192 bytes).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct UpcallFrame {
    /// 0: the integer argument registers as received: SysV rdi, rsi, rdx, rcx, r8, r9 in 0..6;
    /// AArch64 x0..x7, and x8 (the indirect-result register) at 8; Win64 rcx, rdx, r8, r9 in
    /// 0..4.
    pub gpr: [u64; 9],
    /// 72: the low 64 bits of the vector argument registers as received (SysV xmm0..xmm7,
    /// AArch64 v0..v7, Win64 xmm0..xmm3).
    pub vector: [u64; 8],
    /// 136: the address `Location::Stack(0)` names: SysV and AArch64 the caller's first stack
    /// argument; Win64 the caller's rsp at its call (the shadow space, stack arguments from 32).
    pub stack: *const u8,
    /// 144: the integer return registers to return (SysV rax, rdx; AArch64 x0, x1; Win64 rax).
    pub ret_int: [u64; 2],
    /// 160: the low 64 bits of the vector return registers to return (SysV xmm0, xmm1 in 0..2;
    /// AArch64 v0..v3; Win64 xmm0).
    pub ret_vector: [u64; 4],
}

// The offsets the entries' assembly uses.
const _: () = {
    assert!(std::mem::offset_of!(UpcallFrame, gpr) == 0);
    assert!(std::mem::offset_of!(UpcallFrame, vector) == 72);
    assert!(std::mem::offset_of!(UpcallFrame, stack) == 136);
    assert!(std::mem::offset_of!(UpcallFrame, ret_int) == 144);
    assert!(std::mem::offset_of!(UpcallFrame, ret_vector) == 160);
    assert!(std::mem::size_of::<UpcallFrame>() == 192);
    // The integer and shape dispatchers write `Value`s as 24-byte images (the tag word, the
    // payload from offset 8); the x86-64 System V shape entries call the dispatcher whose
    // address is the context's first word.
    assert!(std::mem::size_of::<Value<'static>>() == 24);
    assert!(std::mem::offset_of!(Context<'static>, shape_dispatch) == 0);
};

impl UpcallFrame {
    /// The 64-bit value of an argument location.
    ///
    /// # Safety
    /// For `Location::Stack(off)`, `stack + off .. + 8` must be readable.
    #[inline(always)]
    unsafe fn arg(&self, loc: Location) -> u64 {
        match loc {
            Location::Int(n) => self.gpr[n as usize],
            Location::Vector(n) => self.vector[n as usize],
            // SAFETY: forwarded to the caller.
            Location::Stack(off) => unsafe {
                self.stack.add(off as usize).cast::<u64>().read_unaligned()
            },
        }
    }

    #[inline(always)]
    fn set_return(&mut self, r: Register, bits: u64) {
        // Plans name x0/x1 (rax/rdx) and v0..v3 only (no bounds checks on the hot path).
        match r {
            Register::Int(0) => self.ret_int[0] = bits,
            Register::Int(_) => self.ret_int[1] = bits,
            Register::Vector(0) => self.ret_vector[0] = bits,
            Register::Vector(n) => self.ret_vector[n as usize & 3] = bits,
        }
    }
}

/// The closure type an [`UpcallStub`] owns.
type Closure<'s> = dyn for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>> + Send + Sync + 's;

#[derive(Debug, Clone, Copy)]
enum ArgKind {
    /// A scalar and its register or stack slot (precomputed from the plan's single move).
    Scalar(ScalarKind, Location),
    /// A struct or union by value: copied from its moves.
    Group { size: usize, align: usize },
    /// A struct or union the caller passes as a pointer to its own copy (AAPCS64 §6.8.2 B.3,
    /// Win64 aggregates not of 1, 2, 4 or 8 bytes): the pointer is at `at`; the closure gets a segment over the caller's copy.
    ByReference { size: usize, at: Location },
}

#[derive(Debug, Clone, Copy)]
enum RetKind {
    Void,
    /// A scalar and its return register.
    Scalar(ScalarKind, Register),
    Group(usize),
}

/// The integer-register path of a signature (x86-64 System V's short path): every argument is
/// a non-`bool` scalar in integer argument register `i` for argument `i` (at most
/// [`INT_PATH_ARGS`]), the return is `void` or a scalar in the first integer return register,
/// and the stub is not confined. The stub then loads the context's address into the next free
/// integer argument register and jumps straight to `entry`: a [`gatun_upcall_dispatch_int`]
/// for the argument count and the result's `Value` tag, an `extern "C" fn(a0: u64, ..,
/// context) -> u64` that builds the `n` [`Value`]s from its own parameters and returns the
/// result's bits in rax. No assembly entry and no register frame in between.
#[derive(Debug, Clone, Copy, Default)]
struct IntPath {
    /// The dispatcher (its type erased: the parameters depend on `n`), `None` if the stub does
    /// not take this path.
    entry: Option<ErasedFn>,
    /// The number of arguments (0..=[`INT_PATH_ARGS`]).
    #[cfg_attr(
        not(all(target_arch = "x86_64", target_os = "linux", not(miri))),
        allow(dead_code)
    )]
    n: u8,
    /// Argument `i`'s `Value` tag.
    tags: [u8; INT_PATH_ARGS],
}

/// The most arguments the integer-register path takes: SysV has six integer argument
/// registers, and the context takes the one after the last argument.
const INT_PATH_ARGS: usize = 5;

impl IntPath {
    /// The integer path of a scalar path (no dispatcher if there is none).
    fn of(fast: Option<&ScalarPath>) -> IntPath {
        let Some(fast) = fast else {
            return IntPath::default();
        };
        let in_order = fast.args.len() <= INT_PATH_ARGS
            && fast
                .args
                .iter()
                .enumerate()
                .all(|(i, a)| a.word as usize == i && !a.is_bool);
        let ret_tag = match fast.ret {
            None => crate::value::value_tag(&Value::Void),
            Some((kind, RET_INT_WORD)) => crate::value::scalar_tag(kind),
            Some(_) => return IntPath::default(),
        };
        if !in_order {
            return IntPath::default();
        }
        let mut path = IntPath {
            entry: Some(int_dispatcher(fast.args.len(), ret_tag)),
            n: fast.args.len() as u8,
            tags: [0; INT_PATH_ARGS],
        };
        for (t, a) in path.tags.iter_mut().zip(fast.args.iter()) {
            *t = a.tag;
        }
        path
    }
}

/// Everything the dispatcher needs about one stub; its address is baked into the stub's code.
/// `#[repr(C)]` so that `shape_dispatch` is at offset 0.
#[repr(C)]
struct Context<'s> {
    /// At offset 0 (called by the x86-64 System V shape entries): the code address of the
    /// register-shape dispatcher, `shape.dispatch`, or `None` (0) if the stub does not take
    /// that path.
    shape_dispatch: Option<shape::ShapeDispatch>,
    int_path: IntPath,
    /// The register-shape path ([`shape::ShapePath::of`]), if the signature has one.
    shape: Option<shape::ShapePath>,
    descriptor: FunctionDescriptor,
    plan: CallPlan,
    args: Box<[ArgKind]>,
    ret: RetKind,
    /// The linker-stack frame holding the by-value struct argument copies (0 bytes: no frame).
    copies: CopyArea,
    closure: Box<Closure<'s>>,
    /// For a confined stub, [`thread_mark`] of the thread that made it; 0 for any thread.
    owner: usize,
    /// The precomputed decoding of a scalar-only signature ([`ScalarPath::of`]), if it is one.
    fast: Option<ScalarPath>,
    /// The precomputed decoding of a signature with struct arguments or a struct return, all
    /// in registers ([`RegisterPath::of`]), if it is one and has no [`ScalarPath`].
    regs: Option<RegisterPath>,
}

/// Word index of [`UpcallFrame::vector`] in the frame seen as `u64`s.
const VECTOR_WORD: usize = 9;
/// Word index of [`UpcallFrame::ret_int`].
const RET_INT_WORD: usize = 18;
/// Word index of [`UpcallFrame::ret_vector`].
const RET_VECTOR_WORD: usize = 20;

/// One argument of a scalar-only upcall: its `Value` tag and the frame word holding its bits
/// (an argument register: `gpr[n]` is word `n`, `vector[n]` word `9 + n`).
#[derive(Debug, Clone, Copy)]
struct ScalarArg {
    tag: u8,
    word: u8,
    is_bool: bool,
}

/// The upcall path of a signature whose arguments are all scalars in registers (at most
/// [`INLINE_ARGS`]) and whose return is `void` or a scalar: each argument's `Value` is written
/// straight from its frame word (a tag byte and the 64-bit register image as payload), the
/// result's bits go straight to their return word. No linker-stack frame, no return segment,
/// no per-kind dispatch.
#[derive(Debug)]
struct ScalarPath {
    args: Box<[ScalarArg]>,
    /// `None` for `void`, else the kind and the frame word of its return register.
    ret: Option<(ScalarKind, usize)>,
}

impl ScalarPath {
    /// The scalar path of a signature, or `None` if an argument is a struct or on the stack,
    /// there are more than [`INLINE_ARGS`], or the return is a struct.
    fn of(args: &[ArgKind], ret: RetKind) -> Option<ScalarPath> {
        if args.len() > INLINE_ARGS {
            return None;
        }
        let args = args
            .iter()
            .map(|a| match *a {
                ArgKind::Scalar(kind, Location::Int(n)) if (n as usize) < VECTOR_WORD => {
                    Some((kind, n as usize))
                }
                ArgKind::Scalar(kind, Location::Vector(n)) if n < 8 => {
                    Some((kind, VECTOR_WORD + n as usize))
                }
                _ => None,
            })
            .map(|a| {
                a.map(|(kind, word)| ScalarArg {
                    tag: crate::value::scalar_tag(kind),
                    word: word as u8,
                    is_bool: kind == ScalarKind::Bool,
                })
            })
            .collect::<Option<Box<[_]>>>()?;
        let ret = match ret {
            RetKind::Void => None,
            RetKind::Scalar(kind, reg) => Some((
                kind,
                match reg {
                    Register::Int(0) => RET_INT_WORD,
                    Register::Int(_) => RET_INT_WORD + 1,
                    Register::Vector(n) => RET_VECTOR_WORD + (n as usize & 3),
                },
            )),
            RetKind::Group(_) => return None,
        };
        Some(ScalarPath { args, ret })
    }
}

/// One register part of a struct argument: `size` bytes of frame word `word` go to byte `dst`
/// of the dispatcher's copy buffer.
#[derive(Debug, Clone, Copy)]
struct RegisterMove {
    word: u8,
    size: u8,
    dst: u16,
}

/// One argument of a [`RegisterPath`].
#[derive(Debug, Clone, Copy)]
enum RegisterArg {
    Scalar(ScalarArg),
    /// A struct copy at byte `offset` of the copy buffer, `size` bytes.
    Group {
        offset: u16,
        size: u16,
    },
}

/// Bytes of the dispatcher's stack buffer for register-passed struct argument copies (all of
/// SysV's 14 argument registers, or AAPCS64's 16, fit).
const REGISTER_COPY_BYTES: usize = 128;

/// The stack buffer of [`REGISTER_COPY_BYTES`] (16-aligned: no register-passed struct has a
/// larger alignment, since its size is a multiple of it and at most 16 bytes per argument
/// under the SysV rules, 64 under AAPCS64's HFA rules with 16-byte members at the most).
#[repr(C, align(16))]
struct RegisterCopies([MaybeUninit<u8>; REGISTER_COPY_BYTES]);

/// The upcall path of a signature whose arguments (at most [`INLINE_ARGS`]) are scalars and
/// structs passed in registers and whose return is `void`, a scalar or a struct in registers:
/// struct arguments are copied from their registers into a buffer on the dispatcher's stack
/// (they live for the upcall, like a linker-stack frame), and a struct result is loaded into
/// the return registers straight from the segment the closure returns. No linker-stack frame,
/// no per-move plan interpretation.
#[derive(Debug)]
struct RegisterPath {
    args: Box<[RegisterArg]>,
    moves: Box<[RegisterMove]>,
    /// For a struct return: `size` bytes at `dst` of the result go to frame word `word` (a
    /// return register word); `dst` is the offset in the struct here.
    ret_moves: Box<[RegisterMove]>,
    /// Whether some struct argument has bytes no move writes (padding): the copy buffer is
    /// then zeroed before the moves, so the closure reads zeroes there.
    padded: bool,
}

impl RegisterPath {
    /// The register path of a signature, or `None` (stack or by-reference arguments, a
    /// memory return, too many arguments or copies over [`REGISTER_COPY_BYTES`]).
    fn of(args: &[ArgKind], ret: RetKind, plan: &CallPlan) -> Option<RegisterPath> {
        if args.len() > INLINE_ARGS
            || plan.hidden_return_pointer.is_some()
            || (matches!(ret, RetKind::Group(_)) && !matches!(plan.ret, ReturnPlan::Registers(_)))
        {
            return None;
        }
        let word = |loc: Location| match loc {
            Location::Int(n) if (n as usize) < VECTOR_WORD => Some(n as usize),
            Location::Vector(n) if n < 8 => Some(VECTOR_WORD + n as usize),
            _ => None,
        };
        let mut used = 0usize;
        let mut padded = false;
        let mut moves = Vec::new();
        let mut out = Vec::with_capacity(args.len());
        for (kind, ap) in args.iter().zip(&plan.args) {
            out.push(match *kind {
                ArgKind::Scalar(kind, loc) => RegisterArg::Scalar(ScalarArg {
                    tag: crate::value::scalar_tag(kind),
                    word: word(loc)? as u8,
                    is_bool: kind == ScalarKind::Bool,
                }),
                ArgKind::Group { size, align } => {
                    let offset = used.checked_next_multiple_of(align)?;
                    used = offset.checked_add(size)?;
                    if used > REGISTER_COPY_BYTES || align > 16 {
                        return None;
                    }
                    // The moves of one struct do not overlap: fewer bytes than its size leave
                    // padding the moves do not write.
                    let moved: usize = ap.moves.iter().map(|m| m.size as usize).sum();
                    padded |= moved < size;
                    for m in &ap.moves {
                        if m.offset as usize + m.size as usize > size {
                            return None;
                        }
                        moves.push(RegisterMove {
                            word: word(m.to)? as u8,
                            size: m.size,
                            dst: (offset + m.offset as usize) as u16,
                        });
                    }
                    RegisterArg::Group {
                        offset: offset as u16,
                        size: size as u16,
                    }
                }
                ArgKind::ByReference { .. } => return None,
            });
        }
        let ret_moves = match (&plan.ret, ret) {
            (ReturnPlan::Registers(ms), RetKind::Group(size)) => ms
                .iter()
                .map(|m| {
                    (m.offset as usize + m.size as usize <= size).then_some(RegisterMove {
                        word: match m.from {
                            Register::Int(0) => RET_INT_WORD,
                            Register::Int(_) => RET_INT_WORD + 1,
                            Register::Vector(n) => RET_VECTOR_WORD + (n as usize & 3),
                        } as u8,
                        size: m.size,
                        dst: m.offset as u16,
                    })
                })
                .collect::<Option<Box<[_]>>>()?,
            _ => Box::new([]),
        };
        Some(RegisterPath {
            args: out.into(),
            moves: moves.into(),
            ret_moves,
            padded,
        })
    }
}

/// Writes the `Value` of a scalar argument from its 64-bit register image: the tag, then the
/// image as payload (a `bool` normalised to 0 or 1). Equal to `Value::from_scalar_bits` of the
/// tag's kind (asserted for every kind in the tests): every scalar variant's payload starts at
/// offset 8 and reads only its own low bytes, which are the image's.
///
/// # Safety
/// `slot` is valid for writes of a `Value`; `a.tag` is the tag of a scalar kind.
#[inline(always)]
unsafe fn write_scalar_value(slot: *mut Value<'_>, a: ScalarArg, bits: u64) {
    let bits = if a.is_bool {
        (bits as u8 != 0) as u64
    } else {
        bits
    };
    let p = slot.cast::<u64>();
    // SAFETY: `Value` is `#[repr(C, u8)]`, 24 bytes, 8-aligned: the tag byte and padding in
    // the first word, the payload from offset 8 (caller: `slot` is writable).
    unsafe {
        p.write(a.tag as u64);
        p.add(1).write(bits);
    }
}

impl<'s> Context<'s> {
    /// Classifies `descriptor` (the native backend's ABI) and precomputes what a call needs.
    fn new(descriptor: &FunctionDescriptor, closure: Box<Closure<'s>>) -> Result<Context<'s>> {
        let plan = <crate::backend::Native as crate::backend::Backend>::plan(
            descriptor,
            None,
            Direction::Upcall,
        )?;
        Self::with_plan(descriptor, plan, closure)
    }

    /// As [`Context::new`], with the plan already made (the dispatcher's unit tests give it
    /// the SysV plan on every host, so they run under Miri too).
    fn with_plan(
        descriptor: &FunctionDescriptor,
        plan: crate::abi::CallPlan,
        closure: Box<Closure<'s>>,
    ) -> Result<Context<'s>> {
        let mut copies = CopyArea::default();
        let args = descriptor
            .argument_layouts()
            .iter()
            .zip(&plan.args)
            .map(|(l, ap)| -> Result<ArgKind> {
                Ok(match (l, ap.by_reference) {
                    (MemoryLayout::Value(v), _) => ArgKind::Scalar(v.kind(), ap.moves[0].to),
                    (g, Some(at)) => ArgKind::ByReference {
                        size: g.byte_size(),
                        at,
                    },
                    (g, None) => {
                        let (size, align) = (g.byte_size(), g.byte_alignment());
                        copies = copies.with(size, align).ok_or_else(CopyArea::too_large)?;
                        ArgKind::Group { size, align }
                    }
                })
            })
            .collect::<Result<Box<[ArgKind]>>>()?;
        let ret = match descriptor.return_layout() {
            None => RetKind::Void,
            Some(MemoryLayout::Value(v)) => RetKind::Scalar(
                v.kind(),
                match plan.ret {
                    ReturnPlan::Scalar(r) => r,
                    _ => Register::Int(0),
                },
            ),
            Some(g) => RetKind::Group(g.byte_size()),
        };
        let fast = ScalarPath::of(&args, ret);
        let regs = match fast {
            Some(_) => None,
            None => RegisterPath::of(&args, ret, &plan),
        };
        // Only the x86-64 System V entries take the shape path (the unit tests run its
        // dispatcher on SysV frames on every host).
        let shape = if cfg!(any(test, all(target_arch = "x86_64", target_os = "linux"))) {
            shape::ShapePath::of(&args, ret, &plan)
        } else {
            None
        };
        Ok(Context {
            shape_dispatch: shape.map(|s| s.dispatch),
            shape,
            regs,
            int_path: IntPath::of(fast.as_ref()),
            owner: 0,
            fast,
            descriptor: descriptor.clone(),
            plan,
            args,
            ret,
            copies,
            closure,
        })
    }
}

/// Up to this many arguments are decoded into an array on the Rust stack; more take one heap
/// vector per call.
const INLINE_ARGS: usize = 16;

/// The arguments of one upcall, as the closure sees them: a slice of [`Value`]s (through
/// `Deref`, so `args[0]`, `args.len()` and `args.iter()` work) plus typed accessors and the
/// return segment.
///
/// Prefer the typed accessors ([`UpcallArgs::get`], [`UpcallArgs::address`],
/// [`UpcallArgs::segment`]) on hot paths: they read the value by reference, while copying a
/// whole scalar `Value` (`args[0]`) right after the dispatcher wrote it stalls on store
/// forwarding (measured: `int(int)` identity upcall 14.5 ns with `get`, 18-22 ns with
/// `Ok(args[0])`).
///
/// Everything borrows the upcall: struct argument segments point into a linker-stack frame or a
/// buffer on the dispatcher's stack, both gone when the closure returns, so they cannot be kept (the `'a` lifetime ends with the
/// call). `!Send` and `!Sync`, like the segments it holds.
///
/// ```
/// # #[cfg(any(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")), all(windows, target_arch = "x86_64")))] {
/// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
/// use gatun::memory::Arena;
/// let arena = Arena::confined();
/// // int add(int, int) as a C function pointer, reading its arguments from `UpcallArgs`.
/// let add = Linker::native()
///     .upcall_stub(
///         &FunctionDescriptor::of(V::I32, [V::I32, V::I32]),
///         |args| Ok(Value::I32(args.get::<i32>(0)? + args.get::<i32>(1)?)),
///         &arena,
///     )
///     .unwrap();
/// // SAFETY: the stub is an `int (*)(int, int)` that lives while `add` does.
/// let f: extern "C" fn(i32, i32) -> i32 = unsafe { std::mem::transmute(add.address()) };
/// assert_eq!(f(2, 3), 5);
/// # }
/// ```
pub struct UpcallArgs<'a> {
    values: &'a [Value<'a>],
    ret: Option<MemorySegment<'a>>,
    /// The stub's `Context` (a raw pointer: its lifetime parameter is the stub's, and the
    /// context outlives every call of the stub). After the closure, the dispatchers' cold paths
    /// read it back from here instead of keeping it in a callee-saved register.
    ctx: *const c_void,
}

impl<'a> Deref for UpcallArgs<'a> {
    type Target = [Value<'a>];

    fn deref(&self) -> &[Value<'a>] {
        self.values
    }
}

impl fmt::Debug for UpcallArgs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpcallArgs")
            .field("descriptor", &format_args!("{}", self.descriptor()))
            .field("values", &self.values)
            .field("return_segment", &self.ret)
            .finish()
    }
}

impl<'a> UpcallArgs<'a> {
    /// Argument `index` by reference: reading a `Value` through its tag, not as a 24-byte copy,
    /// avoids a store-forwarding stall on the value the dispatcher has just written.
    #[inline]
    fn value(&self, index: usize) -> Result<&Value<'a>> {
        match self.values.get(index) {
            Some(v) => Ok(v),
            None => Err(self.no_such_argument(index)),
        }
    }

    #[cold]
    #[inline(never)]
    fn no_such_argument(&self, index: usize) -> Error {
        Error::ValueMismatch {
            position: format!(
                "upcall argument {} (index {index})",
                index.saturating_add(1)
            ),
            expected: format!("an index below {}", self.values.len()),
            found: "no such argument".into(),
        }
    }

    #[cold]
    #[inline(never)]
    fn mismatch(&self, index: usize, expected: &dyn fmt::Display, found: &Value<'_>) -> Error {
        Error::ValueMismatch {
            position: format!("upcall argument {}", index + 1),
            expected: expected.to_string(),
            found: found.kind_name().into(),
        }
    }

    /// Argument `index` as the scalar type `T`, which must be exactly the declared kind
    /// (`args.get::<i32>(0)`; no numeric conversion).
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] for an index out of range or another kind.
    #[inline]
    pub fn get<T: Scalar>(&self, index: usize) -> Result<T> {
        let v = self.value(index)?;
        match T::from_value(v) {
            Some(x) => Ok(x),
            None => Err(self.mismatch(index, &T::KIND, v)),
        }
    }

    /// Argument `index`, a pointer, as a raw address.
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] for an index out of range or an argument that is not a pointer.
    #[inline]
    pub fn address(&self, index: usize) -> Result<*mut c_void> {
        match self.value(index)? {
            Value::Address(p) => Ok(*p),
            v => Err(self.mismatch(index, &ScalarKind::Pointer, v)),
        }
    }

    /// Argument `index`, a struct or union by value: a segment over its copy (exactly the
    /// layout's size, aligned to the layout's alignment), valid during the upcall.
    ///
    /// # Errors
    /// [`Error::ValueMismatch`] for an index out of range or a scalar argument.
    #[inline]
    pub fn segment(&self, index: usize) -> Result<MemorySegment<'a>> {
        match self.value(index)? {
            Value::Segment(s) => Ok(*s),
            v => Err(self.mismatch(index, &"a struct or union", v)),
        }
    }

    /// Where a struct/union return value goes (exactly the return layout's size), or `None`
    /// for scalar and `void` returns. Write the result here and return `Ok(Value::Void)` to
    /// avoid a copy. For a MEMORY-class return this is the C caller's own buffer (the hidden
    /// return pointer), for a register-returned struct a zeroed image on the stack.
    /// Its contents are unspecified before the closure writes them.
    pub fn return_segment(&self) -> Option<MemorySegment<'a>> {
        self.ret
    }

    /// The descriptor of the stub.
    pub fn descriptor(&self) -> &FunctionDescriptor {
        // SAFETY: `ctx` is the address of the live context of the stub being called (every
        // dispatcher sets it), which outlives the call and so this borrow.
        unsafe { &(*self.ctx.cast::<Context<'_>>()).descriptor }
    }
}

/// A C function pointer that calls a Rust closure (Java's upcall stub segment), made by
/// [`Linker::upcall_stub`].
///
/// Owns the generated code (32 bytes of the shared code arena) and the
/// closure; dropping it frees both. It borrows the arena it was made for (`'s`), so it never
/// outlives it. `Send + Sync` (the closure is). See the [module documentation](crate::upcall) for the
/// argument, return, error, panic and thread rules.
///
/// ```
/// # #[cfg(any(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")), all(windows, target_arch = "x86_64")))] {
/// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
/// use gatun::memory::Arena;
/// let arena = Arena::confined();
/// let calls = std::sync::atomic::AtomicUsize::new(0);
/// let stub = Linker::native()
///     .upcall_stub(
///         &FunctionDescriptor::of_void([]),
///         move |_| {
///             calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///             Ok(Value::Void)
///         },
///         &arena,
///     )
///     .unwrap();
/// assert!(!stub.address().is_null()); // pass `stub.as_value()` to C as a `void (*)(void)`
/// # }
/// ```
pub struct UpcallStub<'s> {
    /// Dropped first: no code refers to the context once it is gone.
    code: ExecutableCode,
    ctx: Box<Context<'s>>,
    _arena: PhantomData<&'s ()>,
}

impl fmt::Debug for UpcallStub<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "UpcallStub({:p}, {}, plan {})",
            self.address(),
            self.ctx.descriptor,
            self.ctx.plan
        )
    }
}

impl<'s> UpcallStub<'s> {
    /// The C function pointer (pass it to C, or as a `Value::Address` argument of a downcall).
    /// Valid until the stub is dropped.
    pub fn address(&self) -> *const c_void {
        self.code.entry().cast()
    }

    /// [`UpcallStub::address`] as a `Value::Address` argument.
    pub fn as_value(&self) -> Value<'static> {
        Value::Address(self.address().cast_mut())
    }

    /// A zero-length segment at the function's address, borrowing the stub (Java returns the
    /// stub as such a segment).
    pub fn segment(&self) -> MemorySegment<'_> {
        // SAFETY: a zero-length segment gives access to no bytes.
        unsafe { MemorySegment::from_raw_parts(self.address().cast_mut().cast(), 0) }
    }

    /// The descriptor the stub was made for.
    pub fn descriptor(&self) -> &FunctionDescriptor {
        &self.ctx.descriptor
    }

    /// The native ABI's call plan the stub decodes its arguments with.
    pub fn plan(&self) -> &CallPlan {
        &self.ctx.plan
    }

    /// Never frees the stub: returns its address, valid for the rest of the process (for
    /// callbacks that C keeps forever). Only a `'static` stub (made with
    /// [`crate::memory::Arena::global`] and a `'static` closure) can be leaked.
    pub fn leak(self) -> *const c_void
    where
        's: 'static,
    {
        let address = self.address();
        std::mem::forget(self);
        address
    }
}

impl Linker {
    /// Makes a C function pointer of type `descriptor` that calls `closure` (Java's
    /// `Linker.upcallStub(target, descriptor, arena)`).
    ///
    /// The closure gets the arguments as an [`UpcallArgs`] and returns the result (see the
    /// [module documentation](crate::upcall) for the exact value rules). It must be
    /// `Send + Sync` because C may call the pointer from any thread, and it may borrow anything
    /// that outlives the arena borrow `'s`. The stub lives until it is dropped, at the latest
    /// when the arena does.
    ///
    /// Sorting five C `int`s with the C library's `qsort` and a Rust comparator (the example
    /// runs on x86-64 and AArch64 Linux and x86-64 Windows):
    ///
    /// ```
    /// use gatun::linker::{FunctionDescriptor, Linker, SymbolLookup};
    /// use gatun::memory::{Arena, SegmentAllocator};
    /// use gatun::{Value, ValueLayout};
    ///
    /// # #[cfg(any(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")), all(windows, target_arch = "x86_64")))] {
    /// let arena = Arena::confined();
    /// // int cmp(const void *a, const void *b), comparing two ints.
    /// let cmp = Linker::native().upcall_stub(
    ///     &FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::ADDRESS, ValueLayout::ADDRESS]),
    ///     |args| {
    ///         // SAFETY: qsort passes pointers to two elements of the int array.
    ///         let (a, b) = unsafe {
    ///             (*args.address(0)?.cast::<i32>(), *args.address(1)?.cast::<i32>())
    ///         };
    ///         Ok(Value::I32(a.cmp(&b) as i32))
    ///     },
    ///     &arena,
    /// )?;
    ///
    /// // void qsort(void *base, size_t nmemb, size_t size, int (*compar)(const void *, const void *))
    /// let qsort = SymbolLookup::default_lookup().find("qsort")?;
    /// let descriptor = FunctionDescriptor::of_void([
    ///     ValueLayout::ADDRESS,
    ///     ValueLayout::U64,
    ///     ValueLayout::U64,
    ///     ValueLayout::ADDRESS,
    /// ]);
    /// let qsort = Linker::native().downcall(&qsort, &descriptor, &[])?;
    ///
    /// let ints = arena.allocate(5 * 4, 4)?; // int[5]
    /// for (i, v) in [3, 1, 4, 1, 5].into_iter().enumerate() {
    ///     ints.set::<i32>(i * 4, v)?;
    /// }
    /// let args = [Value::Segment(ints), Value::U64(5), Value::U64(4), cmp.as_value()];
    /// // SAFETY: `ints` holds 5 ints of 4 bytes; `cmp` is an int comparator that lives (with
    /// // `arena`) until after the call.
    /// unsafe { qsort.invoke(&args) }?;
    /// let sorted = (0..5).map(|i| ints.get::<i32>(i * 4)).collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(sorted, [1, 1, 3, 4, 5]);
    /// # }
    /// # Ok::<(), gatun::Error>(())
    /// ```
    ///
    /// # Errors
    /// - [`Error::InvalidDescriptor`] for a padding, sequence or zero-sized argument or return,
    ///   or a group whose size is not a multiple of its alignment (as for downcalls).
    /// - [`Error::Unsupported`] on targets other than x86-64 and AArch64 Linux, Apple arm64 and
    ///   x86-64 Windows, and when the OS refuses an executable mapping.
    /// - [`Error::InvalidDescriptor`] also when the arguments passed on the stack (those that
    ///   do not fit in registers, by the native ABI's rules) take more than 2048 bytes, the most
    ///   gatun's executor supports; the message gives the bytes needed.
    pub fn upcall_stub<'s, A, F>(
        &self,
        descriptor: &FunctionDescriptor,
        closure: F,
        arena: &'s A,
    ) -> Result<UpcallStub<'s>>
    where
        A: SegmentAllocator + ?Sized,
        F: for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>> + Send + Sync + 's,
    {
        UpcallStub::from_context(
            Box::new(Context::new(descriptor, Box::new(closure))?),
            arena,
        )
    }
}

impl<'s> UpcallStub<'s> {
    /// Generates the stub's code for `ctx`.
    fn from_context<A: SegmentAllocator + ?Sized>(
        ctx: Box<Context<'s>>,
        _arena: &'s A,
    ) -> Result<UpcallStub<'s>> {
        let code = stub_code(&ctx)?;
        Ok(UpcallStub {
            code,
            ctx,
            _arena: PhantomData,
        })
    }
}

/// An [`UpcallStub`] whose closure need not be `Send` or `Sync`, made by
/// [`Linker::upcall_stub_confined`]: it may capture `Rc`s, `RefCell`s and segments of a
/// confined arena. It must only be called on the thread that made it; a call from any other
/// thread aborts the process (`gatun: upcall ...: called on a thread other than the one that
/// made this confined stub`) before the closure runs. `!Send` and `!Sync`, so it is dropped on
/// that thread too. Derefs to [`UpcallStub`] for the address and the other accessors.
///
/// ```
/// # #[cfg(any(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")), all(windows, target_arch = "x86_64")))] {
/// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
/// use gatun::memory::Arena;
/// let arena = Arena::confined();
/// let seen = std::cell::Cell::new(0); // not Sync: needs a confined stub
/// let stub = Linker::native()
///     .upcall_stub_confined(
///         &FunctionDescriptor::of_void([V::I32]),
///         |args| {
///             seen.set(args.get::<i32>(0)?);
///             Ok(Value::Void)
///         },
///         &arena,
///     )
///     .unwrap();
/// // SAFETY: a `void (*)(int)` called on the thread that made it.
/// let f: extern "C" fn(i32) = unsafe { std::mem::transmute(stub.address()) };
/// f(9);
/// assert_eq!(seen.get(), 9);
/// # }
/// ```
pub struct ConfinedUpcallStub<'s> {
    stub: UpcallStub<'s>,
    _not_send: PhantomData<*const ()>,
}

impl<'s> Deref for ConfinedUpcallStub<'s> {
    type Target = UpcallStub<'s>;

    fn deref(&self) -> &UpcallStub<'s> {
        &self.stub
    }
}

impl fmt::Debug for ConfinedUpcallStub<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Confined{:?}", self.stub)
    }
}

/// A closure that is only ever called and dropped on one thread.
struct ThreadBound<F>(F);

// SAFETY: a `ThreadBound` lives only inside the context of a `ConfinedUpcallStub`, which is
// `!Send`/`!Sync` and so dropped on its owner thread; the dispatcher calls the closure only
// after checking that it runs on that thread (`Context::owner`). `&UpcallStub` (reachable by
// `Deref`) exposes no access to the closure.
unsafe impl<F> Send for ThreadBound<F> {}
// SAFETY: as above.
unsafe impl<F> Sync for ThreadBound<F> {}

impl<F: for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>>> ThreadBound<F> {
    fn call<'a>(&self, args: &UpcallArgs<'a>) -> Result<Value<'a>> {
        (self.0)(args)
    }
}

/// An address unique to the calling thread among live threads (its copy of a thread-local).
/// No destructor and a const initialiser: never fails, never allocates, also on threads
/// created in C.
#[inline]
fn thread_mark() -> usize {
    thread_local! {
        static MARK: u8 = const { 0 };
    }
    MARK.with(|m| m as *const u8 as usize)
}

impl Linker {
    /// As [`Linker::upcall_stub`], for a closure that is not `Send + Sync` and is called from
    /// C only on the current thread (a `qsort` comparator, a callback of a single-threaded
    /// library). A call on another thread aborts the process instead of running the closure
    /// (see [`ConfinedUpcallStub`]).
    ///
    /// # Errors
    /// As [`Linker::upcall_stub`].
    pub fn upcall_stub_confined<'s, A, F>(
        &self,
        descriptor: &FunctionDescriptor,
        closure: F,
        arena: &'s A,
    ) -> Result<ConfinedUpcallStub<'s>>
    where
        A: SegmentAllocator + ?Sized,
        F: for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>> + 's,
    {
        let bound = ThreadBound(closure);
        // `bound.call` captures the whole `ThreadBound`, not just its (non-Send) field.
        let mut ctx = Context::new(
            descriptor,
            Box::new(move |a: &UpcallArgs<'_>| bound.call(a)),
        )?;
        ctx.owner = thread_mark();
        // The integer and shape paths do not check the owner.
        ctx.int_path.entry = None;
        ctx.shape_dispatch = None;
        Ok(ConfinedUpcallStub {
            stub: UpcallStub::from_context(Box::new(ctx), arena)?,
            _not_send: PhantomData,
        })
    }
}

/// The stub's code for `ctx`, from the native backend (its upcall entry; on x86-64 System V
/// the integer-register path's entry when `ctx` has one).
fn stub_code(ctx: &Context<'_>) -> Result<ExecutableCode> {
    #[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
    if let Some(entry) = ctx.int_path.entry {
        // SAFETY: the entry is `gatun_upcall_dispatch_int<n>` for this context, an
        // `extern "C" fn(a0: u64, .., a<n-1>: u64, context: *const c_void) -> u64`, and the
        // stub is called as a function of the descriptor, whose `n` (at most 5) arguments are
        // in rdi.. in order and whose result is `void` or in rax (`IntPath::of` on the native
        // SysV plan): the context goes in integer argument register `n`.
        return unsafe {
            crate::backend::x86_64_sysv::typed_upcall_code(
                ctx.int_path.n as usize,
                ctx as *const Context<'_> as usize,
                entry as usize,
            )
        };
    }
    #[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
    if let (Some(shape), true) = (&ctx.shape, ctx.shape_dispatch.is_some()) {
        // SAFETY: the context's first word is its shape dispatcher, an
        // `extern "C" fn(context, frame)` for the descriptor, all of whose arguments are in
        // the first `gprs` integer and `vectors` vector argument registers and whose result is
        // `void` or in rax/rdx/xmm0/xmm1 (`ShapePath::of` on the native SysV plan).
        return unsafe {
            crate::backend::x86_64_sysv::shape_upcall_code(
                shape.gprs as usize,
                shape.vectors as usize,
                ctx as *const Context<'_> as usize,
            )
        };
    }
    crate::backend::native::upcall_code(ctx as *const Context<'_> as usize)
}

fn return_mismatch(expected: impl fmt::Display, found: &Value<'_>) -> Error {
    Error::ValueMismatch {
        position: "upcall return".into(),
        expected: expected.to_string(),
        found: found.kind_name().into(),
    }
}

/// Decodes the arguments, runs the closure and encodes its result into `frame` (what
/// [`gatun_upcall_dispatch`] does, without the abort; the unit tests call it).
///
/// # Safety
/// `frame` holds the registers and stack-argument address of a C call of `ctx`'s descriptor
/// type (module invariants).
#[cfg(test)]
unsafe fn dispatch(ctx: &Context<'_>, frame: &mut UpcallFrame) -> Result<()> {
    if let Some(fast) = &ctx.fast {
        // SAFETY: forwarded.
        return unsafe { dispatch_scalar(ctx, fast, frame) };
    }
    if let Some(regs) = &ctx.regs {
        // SAFETY: forwarded.
        return unsafe { dispatch_registers(ctx, regs, frame) };
    }
    // SAFETY: forwarded.
    unsafe { dispatch_general(ctx, frame) }
}

/// [`dispatch`] for a signature with a [`ScalarPath`].
///
/// # Safety
/// As [`dispatch`]; `fast` is `ctx`'s.
#[inline(always)]
unsafe fn dispatch_scalar(
    ctx: &Context<'_>,
    fast: &ScalarPath,
    frame: &mut UpcallFrame,
) -> Result<()> {
    let words = (frame as *mut UpcallFrame).cast::<u64>();
    let mut inline = [const { MaybeUninit::<Value<'_>>::uninit() }; INLINE_ARGS];
    for (slot, a) in inline.iter_mut().zip(fast.args.iter()) {
        // SAFETY: `a.word` is below 17, a register word of the 192-byte frame (`ScalarPath::of`);
        // `slot` is one of the inline values; `a.tag` is a scalar kind's tag.
        unsafe { write_scalar_value(slot.as_mut_ptr(), *a, words.add(a.word as usize).read()) };
    }
    // SAFETY: the first `args.len()` (at most INLINE_ARGS) slots were written just above.
    let values =
        unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<Value<'_>>(), fast.args.len()) };
    let args = UpcallArgs {
        values,
        ret: None,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let result = (ctx.closure)(&args)?;
    match fast.ret {
        None => {
            if !matches!(result, Value::Void) {
                return Err(return_mismatch("void", &result));
            }
        }
        Some((kind, word)) => {
            let bits = result
                .scalar_bits(kind)
                .ok_or_else(|| return_mismatch(kind, &result))?;
            // SAFETY: `word` is a return word of the frame (18..24, `ScalarPath::of`).
            unsafe { words.add(word).write(bits) };
        }
    }
    Ok(())
}

/// [`dispatch`] for a signature with a [`RegisterPath`].
///
/// # Safety
/// As [`dispatch`]; `regs` is `ctx`'s.
#[inline(always)]
unsafe fn dispatch_registers(
    ctx: &Context<'_>,
    regs: &RegisterPath,
    frame: &mut UpcallFrame,
) -> Result<()> {
    let words = (frame as *mut UpcallFrame).cast::<u64>();
    let mut copies = RegisterCopies([MaybeUninit::uninit(); REGISTER_COPY_BYTES]);
    let base = copies.0.as_mut_ptr().cast::<u8>();
    if regs.padded {
        // SAFETY: the buffer has `REGISTER_COPY_BYTES` bytes.
        unsafe { base.write_bytes(0, REGISTER_COPY_BYTES) };
    }
    for m in regs.moves.iter() {
        // SAFETY: `m.word` is a register word of the frame and `m.dst + m.size` lies inside
        // the buffer (`RegisterPath::of`).
        // Whole eightbytes (the common case) without the per-size dispatch.
        unsafe {
            let (dst, bits) = (base.add(m.dst as usize), words.add(m.word as usize).read());
            if m.size == 8 {
                dst.cast::<u64>().write_unaligned(bits);
            } else {
                store_low_bytes(dst, bits, m.size as usize);
            }
        };
    }
    let mut inline = [const { MaybeUninit::<Value<'_>>::uninit() }; INLINE_ARGS];
    for (slot, a) in inline.iter_mut().zip(regs.args.iter()) {
        match *a {
            // SAFETY: as in `dispatch_scalar`.
            RegisterArg::Scalar(s) => unsafe {
                write_scalar_value(slot.as_mut_ptr(), s, words.add(s.word as usize).read())
            },
            // SAFETY: the copy lies inside the buffer, which outlives the segment (the closure
            // cannot keep it: `UpcallArgs`); its bytes were written by the moves above, or
            // zeroed before them (bytes no move writes: `padded`).
            RegisterArg::Group { offset, size } => {
                slot.write(Value::Segment(unsafe {
                    MemorySegment::from_raw_parts(base.add(offset as usize), size as usize)
                }));
            }
        }
    }
    // SAFETY: the first `args.len()` (at most INLINE_ARGS) slots were written just above.
    let values =
        unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<Value<'_>>(), regs.args.len()) };
    // The largest register-returned struct: an HFA of four doubles in v0..v3 (AAPCS64).
    let mut image = [0u64; 4];
    let image_ptr = image.as_mut_ptr().cast::<u8>();
    let ret = match ctx.ret {
        // SAFETY: a register-returned struct has at most 32 bytes; `image` outlives the
        // segment, which the closure cannot keep, and is read below only through `image_ptr`.
        RetKind::Group(size) => {
            Some(unsafe { MemorySegment::from_raw_parts(image_ptr, size.min(32)) })
        }
        _ => None,
    };
    let args = UpcallArgs {
        values,
        ret,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let result = (ctx.closure)(&args)?;
    match ctx.ret {
        RetKind::Void => {
            if !matches!(result, Value::Void) {
                return Err(return_mismatch("void", &result));
            }
        }
        RetKind::Scalar(k, reg) => {
            let bits = result
                .scalar_bits(k)
                .ok_or_else(|| return_mismatch(k, &result))?;
            frame.set_return(reg, bits);
        }
        RetKind::Group(size) => {
            let src: *const u8 = match result {
                Value::Void => image_ptr,
                Value::Segment(s) if s.byte_size() >= size => s.as_ptr(),
                v => return Err(group_return_mismatch(size, &v)),
            };
            for m in regs.ret_moves.iter() {
                // SAFETY: a return move lies inside the struct (`dst + size <= size of the
                // layout`, `RegisterPath::of`), which `src` holds: the closure's segment of at
                // least that size, or the 32-byte image; `m.word` is a return word of the
                // frame.
                unsafe {
                    let p = src.add(m.dst as usize);
                    let bits = if m.size == 8 {
                        p.cast::<u64>().read_unaligned()
                    } else {
                        load_low_bytes(p, m.size as usize)
                    };
                    words.add(m.word as usize).write(bits);
                }
            }
        }
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn group_return_mismatch(size: usize, found: &Value<'_>) -> Error {
    return_mismatch(
        format_args!(
            "a segment of at least {size} bytes, or void after writing the return segment"
        ),
        found,
    )
}

/// [`dispatch`] for any signature: the plan interpreted argument by argument.
///
/// # Safety
/// As [`dispatch`].
#[inline(always)]
unsafe fn dispatch_general(ctx: &Context<'_>, frame: &mut UpcallFrame) -> Result<()> {
    let copies = if ctx.copies.bytes > 0 {
        Some(linker_stack().push_frame(ctx.copies.bytes, ctx.copies.align)?)
    } else {
        None
    };
    let copies = copies.as_ref();
    let decode = |(kind, ap): (&ArgKind, &ArgPlan)| -> Result<Value<'_>> {
        Ok(match *kind {
            ArgKind::Scalar(k, loc) => {
                // SAFETY: the location belongs to the plan of this call (caller's contract).
                let bits = unsafe { frame.arg(loc) };
                Value::from_scalar_bits(k, bits)
            }
            ArgKind::Group { size, align } => {
                let copy = copies
                    .expect("a frame is pushed when there are struct arguments")
                    .allocate_uninit(size, align)?;
                // Zeroed first: the moves need not write every byte (padding), and the
                // linker stack's memory holds earlier frames' data.
                // SAFETY: the copy is writable for `size` bytes.
                unsafe { copy.as_ptr().write_bytes(0, size) };
                for m in &ap.moves {
                    // SAFETY: the location is readable (caller's contract); the move lies
                    // inside the copy, which has the layout's size.
                    unsafe {
                        store_low_bytes(
                            copy.as_ptr().add(m.offset as usize),
                            frame.arg(m.to),
                            m.size as usize,
                        )
                    };
                }
                Value::Segment(copy)
            }
            ArgKind::ByReference { size, at } => {
                // SAFETY: the location holds the address of the caller's copy of the argument,
                // readable and writable for its size during the call (caller's contract); the
                // segment cannot outlive the upcall (`UpcallArgs`).
                let p = unsafe { frame.arg(at) } as usize as *mut u8;
                // SAFETY: as above.
                Value::Segment(unsafe { MemorySegment::from_raw_parts(p, size) })
            }
        })
    };
    let kinds = ctx.args.iter().zip(&ctx.plan.args);
    let n = ctx.args.len();
    // Only the used prefix of the inline array is written (no 16 x 24-byte fill per call).
    let mut inline = [const { MaybeUninit::<Value<'_>>::uninit() }; INLINE_ARGS];
    let heap: Vec<Value<'_>>;
    let values: &[Value<'_>] = if n <= INLINE_ARGS {
        for (slot, k) in inline.iter_mut().zip(kinds) {
            slot.write(decode(k)?);
        }
        // SAFETY: the first `n` slots were written just above (`Value` is `Copy`: nothing to
        // drop on an early return).
        unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<Value<'_>>(), n) }
    } else {
        heap = kinds.map(decode).collect::<Result<_>>()?;
        &heap
    };
    // The largest register-returned struct: an HFA of four doubles in v0..v3 (AAPCS64).
    // Zeroed only for a register-returned struct (the one case that reads it).
    let mut image = MaybeUninit::<[u64; 4]>::uninit();
    let image_ptr = image.as_mut_ptr().cast::<u8>();
    let ret = match (ctx.ret, ctx.plan.hidden_return_pointer) {
        // SAFETY: the hidden pointer is writable for the return layout's size (caller's
        // contract), for the whole call.
        (RetKind::Group(size), Some(loc)) => {
            Some(unsafe { MemorySegment::from_raw_parts(frame.arg(loc) as usize as *mut u8, size) })
        }
        // SAFETY: a register-returned struct has at most 32 bytes; `image` (32 bytes, zeroed
        // here) outlives the segment, which the closure cannot keep, and is read below only
        // through `image_ptr`.
        (RetKind::Group(size), None) => unsafe {
            image_ptr.write_bytes(0, 32);
            Some(MemorySegment::from_raw_parts(image_ptr, size.min(32)))
        },
        _ => None,
    };
    let args = UpcallArgs {
        values,
        ret,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let result = (ctx.closure)(&args)?;
    match (ctx.ret, &ctx.plan.ret) {
        (RetKind::Void, _) => {
            if !matches!(result, Value::Void) {
                return Err(return_mismatch("void", &result));
            }
        }
        (RetKind::Scalar(k, reg), _) => {
            let bits = result
                .scalar_bits(k)
                .ok_or_else(|| return_mismatch(k, &result))?;
            frame.set_return(reg, bits);
        }
        (RetKind::Group(size), plan) => {
            let dst = ret.expect("a return segment exists for struct returns");
            match result {
                Value::Void => {}
                Value::Segment(s) if s.byte_size() >= size => {
                    if s.address() != dst.address() {
                        dst.copy_from(&s.slice(0, size)?)?;
                    }
                }
                v => {
                    return Err(return_mismatch(
                        format_args!(
                            "a segment of at least {size} bytes, or void after writing the return segment"
                        ),
                        &v,
                    ))
                }
            }
            match plan {
                ReturnPlan::Registers(moves) => {
                    for m in moves {
                        // SAFETY: a register move starts at offset 24 at the most (the last
                        // double of a 32-byte HFA), so 8 bytes lie inside the 32-byte image,
                        // zeroed above for this return kind;
                        // bytes past the move's are the struct's next member or zero, and the
                        // caller reads only the move's low bytes of the register.
                        let bits = unsafe {
                            image_ptr
                                .add(m.offset as usize)
                                .cast::<u64>()
                                .read_unaligned()
                        };
                        frame.set_return(m.from, bits);
                    }
                }
                // SysV and Win64 return the hidden pointer in rax; AArch64 need not return it
                // in x0 (AAPCS64 §6.9), where the same store is harmless.
                _ => frame.ret_int[0] = dst.address() as u64,
            }
        }
    }
    Ok(())
}

/// Aborts unless the calling thread made the confined stub of `ctx` (out of line: only
/// confined stubs pay for the thread-local read).
#[cold]
#[inline(never)]
fn check_owner(ctx: &Context<'_>) {
    if ctx.owner != thread_mark() {
        abort_upcall(
            &ctx.descriptor,
            format_args!("called on a thread other than the one that made this confined stub"),
        );
    }
}

/// Prints why an upcall cannot continue and aborts the process (see the module documentation).
#[cold]
#[inline(never)]
fn abort_upcall(descriptor: &FunctionDescriptor, what: fmt::Arguments<'_>) -> ! {
    // Never panic on a closed stderr.
    let _ = writeln!(
        std::io::stderr(),
        "gatun: upcall {descriptor}: {what}; aborting the process (an upcall cannot return an \
         error to C or unwind into C)"
    );
    std::process::abort()
}

/// The Rust side of the upcall entry: runs [`dispatch`] and aborts on an error or a panic.
///
/// # Safety
/// Called only by the entry assembly, with the context address from the stub's code and a
/// frame as described in the module invariants.
#[cfg_attr(
    not(any(
        all(target_arch = "x86_64", target_os = "linux", not(miri)),
        all(target_arch = "aarch64", target_os = "linux", not(miri)),
        all(target_arch = "x86_64", target_os = "windows", not(miri))
    )),
    allow(dead_code)
)]
pub(crate) unsafe extern "C" fn gatun_upcall_dispatch(ctx: *const c_void, frame: *mut UpcallFrame) {
    // SAFETY: the stub's code holds the address of its live boxed Context (module invariants).
    let ctx = unsafe { &*ctx.cast::<Context<'_>>() };
    // SAFETY: the entry passes its own exclusive frame on its stack.
    let frame = unsafe { &mut *frame };
    if ctx.owner != 0 {
        check_owner(ctx);
    }
    match &ctx.fast {
        // SAFETY: forwarded (the frame is a call of the stub's type).
        Some(fast) => guard(&ctx.descriptor, || unsafe {
            dispatch_scalar(ctx, fast, frame)
        }),
        None => match &ctx.regs {
            // SAFETY: forwarded.
            Some(regs) => unsafe { run_registers(ctx, regs, frame) },
            // SAFETY: forwarded.
            None => unsafe { run_general(ctx, frame) },
        },
    }
}

/// A function pointer whose real type is recorded elsewhere (transmuted back to it before a
/// call).
type ErasedFn = unsafe extern "C" fn();

/// The integer-register path's dispatcher for `n` arguments (at most [`INT_PATH_ARGS`]) and a
/// result of `Value` tag `ret_tag` (a scalar's, or `Value::Void`'s), its type erased: it is an
/// `unsafe extern "C" fn(u64, .. (n times), *const c_void) -> u64`.
fn int_dispatcher(n: usize, ret_tag: u8) -> ErasedFn {
    macro_rules! by_return {
        ($f:ident, $ty:ty) => {{
            let f: $ty = match ret_tag {
                1 => $f::<1>,
                2 => $f::<2>,
                3 => $f::<3>,
                4 => $f::<4>,
                5 => $f::<5>,
                6 => $f::<6>,
                7 => $f::<7>,
                8 => $f::<8>,
                9 => $f::<9>,
                10 => $f::<10>,
                11 => $f::<11>,
                12 => $f::<12>,
                _ => $f::<0>,
            };
            // SAFETY: a function pointer to a function pointer of another type; it is called
            // only as `$ty` (the stub's C type, `IntPath::of`; `call_int` in the tests).
            unsafe { std::mem::transmute::<$ty, ErasedFn>(f) }
        }};
    }
    type P = *const c_void;
    match n {
        0 => by_return!(gatun_upcall_dispatch_int0, unsafe extern "C" fn(P) -> u64),
        1 => by_return!(
            gatun_upcall_dispatch_int1,
            unsafe extern "C" fn(u64, P) -> u64
        ),
        2 => by_return!(
            gatun_upcall_dispatch_int2,
            unsafe extern "C" fn(u64, u64, P) -> u64
        ),
        3 => by_return!(
            gatun_upcall_dispatch_int3,
            unsafe extern "C" fn(u64, u64, u64, P) -> u64
        ),
        4 => by_return!(
            gatun_upcall_dispatch_int4,
            unsafe extern "C" fn(u64, u64, u64, u64, P) -> u64
        ),
        _ => by_return!(
            gatun_upcall_dispatch_int5,
            unsafe extern "C" fn(u64, u64, u64, u64, u64, P) -> u64
        ),
    }
}

/// The integer-register path's dispatchers, one per argument count: `gatun_upcall_dispatch_int<n>::<R>`
/// is an `extern "C" fn(a0: u64, .., a<n-1>: u64, context: *const c_void) -> u64` (the stub puts
/// the context in the integer argument register after the last argument) that runs
/// [`gatun_upcall_dispatch_int`] for a result of `Value` tag `R`.
macro_rules! int_dispatchers {
    ($($name:ident($($a:ident),*) = $n:literal;)*) => {$(
        /// See [`gatun_upcall_dispatch_int`].
        ///
        /// # Safety
        /// As [`gatun_upcall_dispatch_int`], for this many arguments.
        unsafe extern "C" fn $name<const R: u8>($($a: u64,)* ctx: *const c_void) -> u64 {
            // SAFETY: forwarded.
            unsafe { gatun_upcall_dispatch_int::<$n, R>(ctx, [$($a),*]) }
        }
    )*};
}

int_dispatchers! {
    gatun_upcall_dispatch_int0() = 0;
    gatun_upcall_dispatch_int1(a0) = 1;
    gatun_upcall_dispatch_int2(a0, a1) = 2;
    gatun_upcall_dispatch_int3(a0, a1, a2) = 3;
    gatun_upcall_dispatch_int4(a0, a1, a2, a3) = 4;
    gatun_upcall_dispatch_int5(a0, a1, a2, a3, a4) = 5;
}

/// The Rust side of an integer-register path ([`IntPath`]) of `N` arguments whose result has
/// the `Value` tag `R`: builds the `N` [`Value`]s from the argument registers `regs` (each
/// value's tag from the path, its payload the 64-bit register image), runs the closure under
/// [`guard`] and returns the result's 64-bit register image (0 for `void`; small integers
/// extended by signedness, `f32` in the low 32 bits), which the caller finds in rax.
///
/// # Safety
/// Called only from a stub of a context whose `int_path.entry` is this function's dispatcher,
/// with `ctx` that context's address and `regs` the caller's first `N` integer argument
/// registers, for a C call of the stub's descriptor type.
#[inline(always)]
unsafe fn gatun_upcall_dispatch_int<const N: usize, const R: u8>(
    ctx: *const c_void,
    regs: [u64; N],
) -> u64 {
    // SAFETY: the stub's code holds the address of its live boxed Context (module invariants).
    let ctx = unsafe { &*ctx.cast::<Context<'_>>() };
    let mut values = [const { MaybeUninit::<Value<'_>>::uninit() }; N];
    for i in 0..N {
        let p = values[i].as_mut_ptr().cast::<u64>();
        // SAFETY: a 24-byte, 8-aligned `Value` (`#[repr(C, u8)]`): the tag byte and padding in
        // its first word, the payload from offset 8.
        unsafe {
            p.write(ctx.int_path.tags[i] as u64);
            p.add(1).write(regs[i]);
        }
    }
    // SAFETY: the `N` values have their tags (the path's) and payloads (register images whose
    // low bytes are the declared width's value; no `bool`s).
    let values = unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<Value<'_>>(), N) };
    let args = UpcallArgs {
        values,
        ret: None,
        ctx: (ctx as *const Context<'_>).cast(),
    };
    let run = AssertUnwindSafe(|| {
        let result = (ctx.closure)(&args);
        // (Both branches return: merged, the two tag tests became a `sete`/`test` pair.)
        if let Ok(v) = &result {
            if crate::value::value_tag(v) == R {
                // SAFETY: the tag is `R`.
                return unsafe { int_payload_bits::<R>(v) };
            }
            // SAFETY: `args.ctx` is `ctx`; read back from memory (volatile), the context needs
            // no callee-saved register on the hot path.
            return int_result_slow(unsafe { args_context(&args) }, result);
        }
        // SAFETY: as above.
        int_result_slow(unsafe { args_context(&args) }, result)
    });
    match catch_unwind(run) {
        Ok(bits) => bits,
        // SAFETY: as above.
        Err(payload) => abort_panicked(unsafe { &args_context(&args).descriptor }, payload),
    }
}

/// The context of `args`, read back from memory (a volatile read: the compiler then keeps no
/// copy of the context pointer in a register across the closure call for the cold paths).
///
/// # Safety
/// `args` was made by a dispatcher for a live context.
#[inline(always)]
unsafe fn args_context<'c>(args: &UpcallArgs<'_>) -> &'c Context<'c> {
    // SAFETY: `args.ctx` is a live context (caller).
    unsafe { &*std::ptr::read_volatile(&args.ctx).cast::<Context<'c>>() }
}

/// The return image of an integer-path result of another tag than the declared kind's (a
/// segment for a pointer), or the abort for a mismatch or an error.
#[cold]
#[inline(never)]
fn int_result_slow(ctx: &Context<'_>, result: Result<Value<'_>>) -> u64 {
    match result
        .as_ref()
        .map(|v| scalar_result_bits(ctx.fast.as_ref(), v))
    {
        Ok(Ok(bits)) => bits,
        Ok(Err(e)) => abort_upcall(&ctx.descriptor, format_args!("{e}")),
        Err(e) => abort_upcall(&ctx.descriptor, format_args!("{e}")),
    }
}

/// The return image of a result of `Value` tag `R` (a scalar's, or `Value::Void`'s: 0): small
/// integers extended by signedness, `f32` in the low 32 bits.
///
/// # Safety
/// `result`'s tag is `R`.
#[inline(always)]
unsafe fn int_payload_bits<const R: u8>(result: &Value<'_>) -> u64 {
    let payload = (result as *const Value<'_>).cast::<u8>().wrapping_add(8);
    // SAFETY: the tag is `R` (caller), so the payload at offset 8 is an initialised value of
    // that kind's width (`Value` is `#[repr(C, u8)]`).
    unsafe {
        match R {
            1 | 3 => payload.read() as u64,
            2 => payload.cast::<i8>().read() as i64 as u64,
            4 => payload.cast::<i16>().read() as i64 as u64,
            5 => payload.cast::<u16>().read() as u64,
            6 => payload.cast::<i32>().read() as i64 as u64,
            7 | 10 => payload.cast::<u32>().read() as u64,
            8 | 9 | 11 | 12 => payload.cast::<u64>().read(),
            _ => 0,
        }
    }
}

/// The return image of an integer-path result whose declared kind has the `Value` tag `R`
/// (the unit tests' view of what the dispatcher does).
#[cfg(test)]
fn int_result_bits<const R: u8>(ctx: &Context<'_>, result: &Value<'_>) -> Result<u64> {
    if crate::value::value_tag(result) != R {
        return scalar_result_bits(ctx.fast.as_ref(), result);
    }
    // SAFETY: the tag is `R`.
    Ok(unsafe { int_payload_bits::<R>(result) })
}

/// The return image of a scalar-path result (0 for `void`), or the mismatch error.
#[cold]
#[inline(never)]
fn scalar_result_bits(fast: Option<&ScalarPath>, result: &Value<'_>) -> Result<u64> {
    match fast.and_then(|f| f.ret) {
        None => match result {
            Value::Void => Ok(0),
            v => Err(return_mismatch("void", v)),
        },
        Some((kind, _)) => match result.scalar_bits(kind) {
            Some(bits) => Ok(bits),
            None => Err(return_mismatch(kind, result)),
        },
    }
}

/// [`dispatch_registers`] under [`guard`], out of line (inlined, it made the scalar path's code
/// in the caller larger and slower on AArch64).
///
/// # Safety
/// As [`dispatch`]; `regs` is `ctx`'s.
#[inline(never)]
unsafe fn run_registers(ctx: &Context<'_>, regs: &RegisterPath, frame: &mut UpcallFrame) {
    // SAFETY: forwarded.
    guard(&ctx.descriptor, || unsafe {
        dispatch_registers(ctx, regs, frame)
    })
}

/// [`dispatch_general`] under [`guard`], out of line (its frame is much larger than the
/// scalar path's).
///
/// # Safety
/// As [`dispatch`].
#[inline(never)]
unsafe fn run_general(ctx: &Context<'_>, frame: &mut UpcallFrame) {
    // SAFETY: forwarded.
    guard(&ctx.descriptor, || unsafe { dispatch_general(ctx, frame) })
}

/// Runs `f` (one upcall's work) and aborts the process with a message naming `descriptor`
/// if it returns an error or panics: a panic is caught first, so it never unwinds into C.
/// An error aborts inside the caught closure, so only the panic payload (two words) comes out
/// of `catch_unwind`.
#[inline(always)]
pub(crate) fn guard(descriptor: &FunctionDescriptor, f: impl FnOnce() -> Result<()>) {
    // AssertUnwindSafe: on a panic the process aborts, so no broken state is ever observed.
    let run = AssertUnwindSafe(|| {
        if let Err(e) = f() {
            abort_upcall(descriptor, format_args!("{e}"));
        }
    });
    if let Err(payload) = catch_unwind(run) {
        abort_panicked(descriptor, payload);
    }
}

/// [`abort_upcall`] for a caught panic, with its message if it has one.
#[cold]
#[inline(never)]
fn abort_panicked(descriptor: &FunctionDescriptor, payload: Box<dyn std::any::Any + Send>) -> ! {
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string payload)");
    abort_upcall(descriptor, format_args!("the closure panicked: {message}"))
}

#[cfg(test)]
mod tests;
