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
//!   confined arena) goes through [`Linker::upcall_stub_confined`] (or, typed,
//!   [`Linker::upcall_typed_confined`]) instead: the [`ConfinedUpcallStub`]
//!   ([`ConfinedTypedUpcallStub`]) is `!Send`, and a call on any other thread aborts before
//!   the closure runs. A closure that is not `Send` but must serve calls from other threads (a
//!   C library's worker threads calling into an interpreter) goes through an [`OwnerThread`]
//!   dispatcher: such calls are queued to the thread that owns the closure and run when its
//!   loop asks ([`OwnerThread::run_pending`], [`OwnerThread::pending`]).
//! - **Reentrancy.** An upcall may run downcalls that run upcalls (the JDK's deep-stack test):
//!   each level has its own Rust stack frame, and linker-stack frames nest LIFO, falling back
//!   to the heap when the 256-byte stack is full.
//! - **Allocation.** Apart from what the closure itself does, an upcall allocates on the heap
//!   only on the general path (taken when an argument is on the caller's stack or passed by
//!   reference, the result goes through a hidden pointer, there are more than 16 arguments, or
//!   the register copies of struct arguments exceed 128 bytes), and there only:
//!   - with more than 16 arguments: one vector of the argument `Value`s per call, freed when
//!     the closure returns;
//!   - with struct arguments by value: one frame of the per-thread [`linker_stack`] per call;
//!     the first such frame on a thread allocates the thread's block (freed when the thread
//!     exits), and a frame that does not fit in the block's free bytes is a heap block of the
//!     frame's size, freed when the closure returns.
//!
//!   Every other upcall — scalars and structs in registers with at most 16 arguments, and
//!   the typed stubs' direct path — allocates nothing. Making a stub allocates (its context,
//!   the closure's box, the plan); an abort formats its message.
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
//! # Layout of this module
//! - here: the module rules and [`UpcallArgs`], what a closure sees;
//! - `stub`: [`UpcallStub`], [`ConfinedUpcallStub`] and [`Linker::upcall_stub`] /
//!   [`Linker::upcall_stub_confined`], which ask the native backend (`backend::Native`'s
//!   `UpcallEntries`, in `backend/upcall.rs`) for the stub's code;
//! - `context`: the per-stub `Context` and its one `Path` (which dispatcher decodes a call);
//! - `dispatch`: one file per dispatcher (general, scalar, registers, integer-register,
//!   register-shape);
//! - `abort`: the panic guard and the abort on errors;
//! - [`typed`], the typed stubs of [`Linker::upcall_typed`].
//!
//! # Invariants (the unsafe story of this module)
//! - A stub's code holds the address of its boxed `Context`, which lives exactly as long as
//!   the [`UpcallStub`] (fields drop code first, then the context). The context is
//!   `#[repr(C)]` and starts with its `UpcallHeader`, so the header's address is the
//!   context's.
//! - The header's `dispatch` is called only by the native backend's upcall entry with a frame
//!   holding the C caller's argument registers and the address of its stack arguments, for a
//!   call of the stub's descriptor type (the caller's contract): every `Location::Stack(off)`
//!   of the plan is then readable at `frame.stack + off`, and a MEMORY return's hidden pointer
//!   is writable for the return layout's size.
//! - Struct argument copies are zeroed where no move writes (padding), then written with
//!   exactly each move's `size` bytes at its `offset` (inside the copy of the layout's size):
//!   every byte of a struct argument's segment is initialised. A register-returned struct's
//!   image is zeroed, 32 bytes on the general and register paths (an AAPCS64 HFA of four
//!   doubles) and 16 bytes on the shape path (SysV returns at most two eightbytes).
//! - A context holds one `Path`. The header's `shape_dispatch` is a register-shape dispatcher
//!   only when the path is `Path::Shape`, whose `RegisterShape` the native backend made for
//!   the signature on the native plan; only then is the stub a shape stub (every argument in
//!   the registers the shape entry stores, the result in return registers). The stub jumps to
//!   an integer-register dispatcher only when the path is `Path::Int`, for a signature the
//!   backend accepted (`int_register_args`), with the context in the integer argument register
//!   after the last argument.
//! - A `RegisterPath`'s moves lie inside the 128-byte copy buffer and inside each struct,
//!   and name only register words of the frame (checked when it is made).

use std::ffi::c_void;
use std::fmt;
use std::ops::Deref;

#[cfg(doc)]
use crate::abi::{CallPlan, ReturnPlan};
use crate::error::{Error, Result};
use crate::layout::FunctionDescriptor;
use crate::layout::ScalarKind;
#[cfg(doc)]
use crate::linker::Linker;
#[cfg(doc)]
use crate::memory::linker_stack;
use crate::memory::MemorySegment;
use crate::value::{Scalar, Value};

mod abort;
mod context;
mod dispatch;
mod owner_thread;
mod stub;
pub mod typed;

use context::Context;
pub use owner_thread::{OwnerThread, OwnerThreadUpcallStub, RunPending};
pub use stub::{ConfinedUpcallStub, UpcallStub};
pub use typed::{ConfinedTypedUpcallStub, TypedUpcallStub, UpcallFn, UpcallSignature};

/// The arguments of one upcall, as the closure sees them: a slice of [`Value`]s (through
/// `Deref`, so `args[0]`, `args.len()` and `args.iter()` work) plus typed accessors and the
/// return segment.
///
/// Prefer the typed accessors ([`UpcallArgs::get`], [`UpcallArgs::address`],
/// [`UpcallArgs::segment`]) on hot paths: they read the value by reference, while copying a
/// whole scalar `Value` (`args[0]`) right after the dispatcher wrote it stalls on store
/// forwarding.
///
/// Everything borrows the upcall: struct argument segments point into a linker-stack frame, a
/// buffer on the dispatcher's stack or the entry's register frame, all gone when the closure
/// returns, so they cannot be kept (the `'a` lifetime ends with the call). `!Send` and
/// `!Sync`, like the segments it holds.
///
/// ```
/// # #[cfg(gatun_executes)] {
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

#[cfg(test)]
mod tests;
