//! Typed upcalls: a Rust closure whose C signature is known at compile time, as a C function
//! pointer ([`Linker::upcall_typed`]).
//!
//! The signature is a Rust function-pointer type `S = unsafe extern "C" fn(A0, ..) -> R` whose
//! argument types are [`CType`]s and whose return is a [`CReturn`]; the closure must be a
//! `Fn(A0, ..) -> R` ([`UpcallFn`]), which the compiler checks, so a closure of another
//! signature does not compile.
//!
//! - **Direct path** (a backend with free-register stubs, x86-64 System V, when the C
//!   arguments leave an integer argument register free): the stub's code loads the address of its context (descriptor and closure) into
//!   that register and jumps to a monomorphised `extern "C" fn(A0, .., *const Context) -> R`
//!   trampoline. The C caller's arguments stay where it put them: Rust's own `extern "C"`
//!   lowering of the trampoline reads them (the same classification as the C caller, checked
//!   by [`CType`]'s contract), and its trailing pointer parameter lands in exactly the register
//!   the stub wrote, because SysV assigns argument registers left to right. No frame
//!   decoding, no `Value`s, no `Result` on the way in or out: the cost of a direct Rust
//!   callback plus the stub's three instructions and the panic guard.
//! - **Value path** (every other case: all six integer argument registers taken, AArch64): the
//!   closure is wrapped in an ordinary [`Linker::upcall_stub`] closure that reads its
//!   arguments from [`UpcallArgs`] and writes its result, so the rules of [`crate::upcall`]
//!   apply unchanged.
//!
//! Both paths abort the process on a panic, with `gatun: upcall <descriptor>: the closure
//! panicked: ...`, before it could unwind into C.
//!
//! [`Linker::upcall_typed_confined`] takes a closure that is not `Send + Sync` and makes a
//! [`ConfinedTypedUpcallStub`] (`!Send`): on the direct path its trampoline (the closure's
//! second monomorphisation of the trampoline) compares the calling thread with
//! the one that made the stub before the closure runs and aborts on another; on the value
//! path the closure is wrapped in a confined dynamic stub, whose dispatcher does the same.
//!
//! The signature `S` is inferred when the closure's parameter types are written
//! (`upcall_typed(|a: i32, b: i32| a + b, ..)`: of the blanket implementations of
//! [`UpcallFn`], one per arity, only one fits the closure). The closure's parameter types are
//! inferred from a written `S` only when its body does not need them early (see
//! [`Linker::upcall_typed`]).
//!
//! # Invariants (the unsafe story of this module)
//! - A direct stub's code holds the address of its boxed `TypedContext`, which lives as
//!   long as the [`TypedUpcallStub`] (the code is dropped first), and the trampoline it jumps
//!   to is the one monomorphised for the same closure type and signature, the confined one
//!   exactly for a confined stub.
//! - A confined stub's `TypedContext` (whose closure need not be `Send` or `Sync`) records
//!   the thread that made it, is boxed in a `ThreadBound` and is kept only by a
//!   [`ConfinedTypedUpcallStub`], which is `!Send`; its trampoline calls the closure only on
//!   that thread.
//! - The direct path is taken only when the native backend's `free_register` found the
//!   integer argument register of a pointer parameter appended to the signature (on x86-64
//!   System V: the SysV plan of the extended signature puts it in a register and adds no stack
//!   bytes).

use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use super::abort::{check_thread, guard, thread_mark};
use super::stub::ThreadBound;
use super::{UpcallArgs, UpcallStub};
use crate::backend::upcall::UpcallEntries;
use crate::backend::Native;
use crate::error::{Error, Result};
use crate::layout::{MemoryLayout, ScalarKind};
use crate::linker::{CReturn, CType, FunctionDescriptor, Linker};
use crate::memory::SegmentAllocator;
use crate::value::Value;

/// What a direct typed stub's trampoline reads through its trailing pointer argument.
struct TypedContext<F> {
    descriptor: FunctionDescriptor,
    f: F,
    /// For a confined stub, the thread that made it (its `thread_mark`), which the confined
    /// trampoline compares with the calling thread's first; 0 (read by no trampoline)
    /// otherwise.
    owner: usize,
}

mod sealed {
    pub trait Sealed {}
    /// The supertrait that keeps [`super::UpcallFn`] gatun's own: implemented only by the
    /// blanket impls for closures below, and unnameable outside this module, so no other
    /// crate can implement `UpcallFn` (its `trampoline` is put into machine code).
    pub trait SealedFn<S> {}
}

/// A C function-pointer type usable as a typed upcall signature:
/// `unsafe extern "C" fn(A0, ..) -> R` with up to [`crate::linker::MAX_TYPED_ARGS`]
/// [`CType`] arguments and a [`CReturn`] (`()` for `void`). Sealed: implemented by gatun for
/// those types only. `Copy`, `Send + Sync` (a code address).
///
/// ```
/// use gatun::upcall::UpcallSignature;
/// fn layouts<S: UpcallSignature>() -> usize {
///     S::argument_layouts().len()
/// }
/// assert_eq!(layouts::<unsafe extern "C" fn(i32, f64) -> i64>(), 2);
/// ```
pub trait UpcallSignature: Copy + Send + Sync + sealed::Sealed + 'static {
    /// The argument layouts, in order.
    fn argument_layouts() -> Vec<MemoryLayout>;
    /// The return layout (`None` for `void`).
    fn return_layout() -> Option<MemoryLayout>;
    /// The signature's C function pointer at `address`.
    ///
    /// # Safety
    /// `address` must be a function of this C type (for as long as the pointer is called).
    #[doc(hidden)]
    unsafe fn from_address(address: *const c_void) -> Self;
}

/// A closure that can serve as a typed upcall of signature `S`: implemented for every
/// `F: Fn(A0, ..) -> R` when `S` is `unsafe extern "C" fn(A0, ..) -> R`, and sealed (no other
/// implementations can exist). The compiler checks
/// it at the [`Linker::upcall_typed`] call, so a closure of another signature is a compile
/// error.
///
/// ```
/// use gatun::upcall::{UpcallFn, UpcallSignature};
/// fn check<S: UpcallSignature, F: UpcallFn<S>>(_: F) {}
/// check::<unsafe extern "C" fn(i32) -> i32, _>(|x: i32| x + 1);
/// ```
pub trait UpcallFn<S: UpcallSignature>: sealed::SealedFn<S> {
    /// The address of the direct trampoline of `Self` (see the module documentation); with
    /// `confined`, of the one that checks the calling thread first.
    #[doc(hidden)]
    fn trampoline(confined: bool) -> usize;
    /// The value path: `self` called with the arguments read from `args`, its result written
    /// as the [`crate::upcall`] rules want (`ret`: the scalar return kind, if any).
    #[doc(hidden)]
    fn call_values<'a>(&self, args: &UpcallArgs<'a>, ret: Option<ScalarKind>) -> Result<Value<'a>>;
}

/// Argument `i` of a value-path call as a `A`: a scalar of exactly `A`'s kind, or a segment of
/// at least `A`'s size for a struct.
fn read_arg<A: CType>(args: &UpcallArgs<'_>, i: usize) -> Result<A> {
    let v = args.value(i)?;
    match A::SCALAR {
        Some(kind) => match v.scalar_bits(kind) {
            // SAFETY: a scalar `A` comes from the low bytes of its 64-bit image (`from_stub`'s
            // scalar branch, which reads no buffer).
            Some(bits) => Ok(unsafe { <A as CReturn>::from_stub(bits, std::ptr::null()) }),
            None => Err(args.mismatch(i, &kind, v)),
        },
        None => match v {
            Value::Segment(s) if s.byte_size() >= std::mem::size_of::<A>() => {
                // SAFETY: the segment holds at least `A`'s bytes, the C caller's copy of the
                // struct; every bit pattern from C is a valid `A` (`CType`'s contract).
                Ok(unsafe { s.as_ptr().cast::<A>().read_unaligned() })
            }
            _ => Err(args.mismatch(i, &"a struct or union", v)),
        },
    }
}

/// The value-path result of a closure that returned `r`: `Value::Void` for `()`, the scalar
/// of kind `ret`, or `Value::Void` after writing a struct into the return segment.
fn write_return<'a, R: CReturn>(
    r: R,
    args: &UpcallArgs<'a>,
    ret: Option<ScalarKind>,
) -> Result<Value<'a>> {
    let size = std::mem::size_of::<R>();
    let p = (&r as *const R).cast::<u8>();
    match (size, ret) {
        (0, _) => Ok(Value::Void),
        (_, Some(kind)) => {
            let mut bytes = [0u8; 8];
            // The scalar's bytes become the image's low bytes: the first ones in memory on a
            // little-endian target, the last ones on a big-endian target.
            let low = if cfg!(target_endian = "big") {
                8 - size.min(8)
            } else {
                0
            };
            // SAFETY: a scalar is at most 8 bytes, all initialised; `low + size.min(8)` is at
            // most 8, the length of `bytes`.
            unsafe { std::ptr::copy_nonoverlapping(p, bytes.as_mut_ptr().add(low), size.min(8)) };
            Ok(Value::from_scalar_bits(kind, u64::from_ne_bytes(bytes)))
        }
        (_, None) => {
            let dst = args
                .return_segment()
                .filter(|s| s.byte_size() >= size)
                .ok_or_else(|| Error::ValueMismatch {
                    position: "upcall return".into(),
                    expected: format!("a return segment of at least {size} bytes"),
                    found: "none".into(),
                })?;
            // SAFETY: `dst` is writable for at least `size` bytes during the upcall; the
            // bytes of `r` are copied untyped (padding included).
            unsafe { std::ptr::copy_nonoverlapping(p, dst.as_ptr(), size) };
            Ok(Value::Void)
        }
    }
}

macro_rules! signature_impl {
    ($($A:ident $i:tt $a:ident),*) => {
        impl<R: CReturn, $($A: CType),*> sealed::Sealed for unsafe extern "C" fn($($A),*) -> R {}

        impl<R: CReturn, $($A: CType),*> UpcallSignature for unsafe extern "C" fn($($A),*) -> R {
            fn argument_layouts() -> Vec<MemoryLayout> {
                vec![$($A::layout()),*]
            }
            fn return_layout() -> Option<MemoryLayout> {
                R::return_layout()
            }
            unsafe fn from_address(address: *const c_void) -> Self {
                // SAFETY: the caller guarantees `address` is a function of this type.
                unsafe { std::mem::transmute::<*const c_void, Self>(address) }
            }
        }

        impl<F, R: CReturn, $($A: CType),*> sealed::SealedFn<unsafe extern "C" fn($($A),*) -> R>
            for F
        where
            F: Fn($($A),*) -> R,
        {
        }

        impl<F, R: CReturn, $($A: CType),*> UpcallFn<unsafe extern "C" fn($($A),*) -> R> for F
        where
            F: Fn($($A),*) -> R,
        {
            fn trampoline(confined: bool) -> usize {
                /// The direct trampoline: the C caller's arguments, then the stub's context;
                /// with `CONFINED`, the calling thread is compared with the stub's owner first
                /// (the test is a constant, so the unconfined trampoline has none).
                ///
                /// # Safety
                /// Called only by a direct typed stub, whose context is a live
                /// `TypedContext<F>` (module invariants), a confined one's if `CONFINED`.
                #[allow(clippy::too_many_arguments)] // one per C argument, by design
                unsafe extern "C" fn trampoline<F, R, const CONFINED: bool, $($A),*>(
                    $($a: $A,)*
                    ctx: *const TypedContext<F>,
                ) -> R
                where
                    F: Fn($($A),*) -> R,
                {
                    // SAFETY: the stub passes its own live context (module invariants).
                    let ctx = unsafe { &*ctx };
                    if CONFINED {
                        check_thread(ctx.owner, &ctx.descriptor);
                    }
                    let mut out = MaybeUninit::<R>::uninit();
                    guard(&ctx.descriptor, || {
                        out.write((ctx.f)($($a),*));
                        Ok(())
                    });
                    // SAFETY: `guard` returns only after the closure returned (it aborts on a
                    // panic), so `out` was written.
                    unsafe { out.assume_init() }
                }
                if confined {
                    trampoline::<F, R, true, $($A),*> as *const () as usize
                } else {
                    trampoline::<F, R, false, $($A),*> as *const () as usize
                }
            }

            #[allow(unused_variables)]
            fn call_values<'a>(
                &self,
                args: &UpcallArgs<'a>,
                ret: Option<ScalarKind>,
            ) -> Result<Value<'a>> {
                let r = self($(read_arg::<$A>(args, $i)?),*);
                write_return(r, args, ret)
            }
        }
    };
}

signature_impl!();
signature_impl!(A 0 a);
signature_impl!(A 0 a, B 1 b);
signature_impl!(A 0 a, B 1 b, C 2 c);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d, E 4 e);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, G 5 g);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, G 5 g, H 6 h);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, G 5 g, H 6 h, I 7 i);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, G 5 g, H 6 h, I 7 i, J 8 j);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, G 5 g, H 6 h, I 7 i, J 8 j, K 9 k);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, G 5 g, H 6 h, I 7 i, J 8 j, K 9 k, L 10 l);
signature_impl!(A 0 a, B 1 b, C 2 c, D 3 d, E 4 e, G 5 g, H 6 h, I 7 i, J 8 j, K 9 k, L 10 l, M 11 m);

/// How a [`TypedUpcallStub`] runs (fields drop in order: the code before the context).
enum Path<'s> {
    /// The direct trampoline, with its boxed `TypedContext` (a confined stub's in a
    /// `ThreadBound`; a backend with free-register stubs: x86-64 System V).
    Direct {
        code: crate::code::ExecutableCode,
        _ctx: Box<dyn Send + Sync + 's>,
    },
    /// An ordinary upcall stub around the closure (for a confined typed stub, the stub of a
    /// confined dynamic one, which checks the thread).
    Values(UpcallStub<'s>),
}

/// A C function pointer of type `S` that calls a Rust closure, made by
/// [`Linker::upcall_typed`] (see the [module documentation](crate::upcall::typed)). Owns its
/// code (at most 32 bytes of the shared code arena) and the closure; dropping it frees both. It
/// borrows the arena it was made for (`'s`), so it never outlives it. `Send + Sync` (the
/// closure is).
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use gatun::{memory::Arena, Linker};
/// let arena = Arena::confined();
/// let twice = Linker::native()
///     .upcall_typed::<unsafe extern "C" fn(i32) -> i32>(|x: i32| 2 * x, &arena)
///     .unwrap();
/// let f = twice.function(); // pass it to C as an `int (*)(int)`
/// // SAFETY: `f` is the stub's C function, alive while `twice` is.
/// assert_eq!(unsafe { f(21) }, 42);
/// # }
/// ```
pub struct TypedUpcallStub<'s, S: UpcallSignature> {
    path: Path<'s>,
    descriptor: FunctionDescriptor,
    _signature: PhantomData<S>,
}

impl<S: UpcallSignature> std::fmt::Debug for TypedUpcallStub<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TypedUpcallStub({:p}, {}, {})",
            self.address(),
            self.descriptor,
            if self.is_direct() { "direct" } else { "values" }
        )
    }
}

impl<'s, S: UpcallSignature> TypedUpcallStub<'s, S> {
    /// The C function pointer as an address (pass it to C, or as a `Value::Address` argument
    /// of a downcall). Valid until the stub is dropped.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::{memory::Arena, Linker};
    /// let arena = Arena::confined();
    /// let s = Linker::native().upcall_typed(|| (), &arena).unwrap();
    /// assert_eq!(s.address(), s.function() as *const std::ffi::c_void);
    /// # }
    /// ```
    pub fn address(&self) -> *const c_void {
        match &self.path {
            Path::Direct { code, .. } => code.entry().cast(),
            Path::Values(stub) => stub.address(),
        }
    }

    /// The C function pointer with its Rust type `S`. Calling it is `unsafe`: it must not be
    /// called after the stub is dropped.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::{memory::Arena, Linker};
    /// let arena = Arena::confined();
    /// let neg = Linker::native().upcall_typed(|x: f64| -x, &arena).unwrap();
    /// // SAFETY: a `double (*)(double)` that lives while `neg` does.
    /// assert_eq!(unsafe { (neg.function())(1.5) }, -1.5);
    /// # }
    /// ```
    pub fn function(&self) -> S {
        // SAFETY: the stub's code is a function of C type `S` (the signature it was made for).
        unsafe { S::from_address(self.address()) }
    }

    /// [`TypedUpcallStub::address`] as a `Value::Address` argument.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::{memory::Arena, Linker, Value};
    /// let arena = Arena::confined();
    /// let s = Linker::native().upcall_typed(|| (), &arena).unwrap();
    /// assert_eq!(s.as_value(), Value::Address(s.address().cast_mut()));
    /// # }
    /// ```
    pub fn as_value(&self) -> Value<'static> {
        Value::Address(self.address().cast_mut())
    }

    /// Whether calls take the direct trampoline (else the value path of an ordinary upcall
    /// stub; see the module documentation).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::{memory::Arena, Linker};
    /// let arena = Arena::confined();
    /// let s = Linker::native().upcall_typed(|x: i32| x, &arena).unwrap();
    /// // x86-64 System V reaches the closure directly; the other ABIs through the value path.
    /// assert_eq!(s.is_direct(), cfg!(gatun_backend = "x86_64_sysv"));
    /// # }
    /// ```
    pub fn is_direct(&self) -> bool {
        matches!(self.path, Path::Direct { .. })
    }

    /// The C signature `S` as a descriptor: compare it with the one a header declares
    /// ([`Declarations::function_pointer`](crate::cdecl::Declarations::function_pointer),
    /// [`Declarations::callback`](crate::cdecl::Declarations::callback)) before handing the
    /// stub to C.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::ffi::c_void;
    /// use gatun::cdecl::Declarations;
    /// use gatun::{memory::Arena, Linker};
    /// let decls = Declarations::parse("typedef int (*cmp)(const void *, const void *);").unwrap();
    /// let arena = Arena::confined();
    /// let stub = Linker::native()
    ///     .upcall_typed(|_: *const c_void, _: *const c_void| 0i32, &arena)
    ///     .unwrap();
    /// assert_eq!(stub.descriptor(), &decls.function_pointer("cmp").unwrap());
    /// # }
    /// ```
    pub fn descriptor(&self) -> &FunctionDescriptor {
        &self.descriptor
    }
}

/// A [`TypedUpcallStub`] whose closure need not be `Send` or `Sync`, made by
/// [`Linker::upcall_typed_confined`]: it may capture `Rc`s, `RefCell`s and segments of a
/// confined arena. As a [`ConfinedUpcallStub`](crate::upcall::ConfinedUpcallStub), it must
/// only be called on the thread that made it: a call from any other thread aborts the process
/// (`gatun: upcall ...: called on a thread other than the one that made this confined stub`)
/// before the closure runs, on the direct path (the trampoline compares the calling thread
/// first) and on the value path (the dispatcher does). `!Send` and `!Sync`, so it is also
/// dropped on that thread. Derefs to [`TypedUpcallStub`] for `function`, `address`,
/// `descriptor` and the other accessors.
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use std::cell::RefCell;
/// use gatun::{memory::Arena, Linker};
/// let arena = Arena::confined();
/// let seen = RefCell::new(Vec::new()); // not Sync: needs a confined stub
/// let record = Linker::native()
///     .upcall_typed_confined(|x: i32| seen.borrow_mut().push(x), &arena)
///     .unwrap();
/// assert_eq!(record.descriptor().to_string(), "(i32)v");
/// let f = record.function(); // a `void (*)(int)`
/// // SAFETY: the stub's own type, called on the thread that made it.
/// unsafe { f(4); f(2) };
/// drop(record);
/// assert_eq!(seen.into_inner(), [4, 2]);
/// # }
/// ```
pub struct ConfinedTypedUpcallStub<'s, S: UpcallSignature> {
    stub: TypedUpcallStub<'s, S>,
    _not_send: PhantomData<*const ()>,
}

impl<'s, S: UpcallSignature> std::ops::Deref for ConfinedTypedUpcallStub<'s, S> {
    type Target = TypedUpcallStub<'s, S>;

    fn deref(&self) -> &TypedUpcallStub<'s, S> {
        &self.stub
    }
}

impl<S: UpcallSignature> std::fmt::Debug for ConfinedTypedUpcallStub<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Confined{:?}", self.stub)
    }
}

/// The descriptor of signature `S` and its native plan (the native ABI's checks, for both
/// paths, and the target's support).
fn signature<S: UpcallSignature>() -> Result<(FunctionDescriptor, crate::abi::CallPlan)> {
    let args = S::argument_layouts();
    let descriptor = match S::return_layout() {
        Some(r) => FunctionDescriptor::of(r, args),
        None => FunctionDescriptor::of_void(args),
    };
    let plan = <crate::backend::Native as crate::backend::Backend>::plan(
        &descriptor,
        None,
        crate::backend::Direction::Upcall,
    )?;
    Ok((descriptor, plan))
}

/// The scalar return kind of `descriptor`, if its return is a scalar (the value path's).
fn scalar_return(descriptor: &FunctionDescriptor) -> Option<ScalarKind> {
    match descriptor.return_layout() {
        Some(MemoryLayout::Value(v)) => Some(v.kind()),
        _ => None,
    }
}

/// The direct path: the native backend's free-register stub putting `context` in integer
/// argument register `register` and jumping to `trampoline`, with `ctx` (which holds the
/// context) kept alive by the path. `ctx` back if the backend makes no such stub.
///
/// # Safety
/// `trampoline` takes the C arguments of the stub's signature and then a pointer, which the
/// native ABI puts in integer argument register `register` (`free_register` of the native
/// backend for that signature); `context` is the address of the context that trampoline
/// reads, inside `*ctx`.
unsafe fn direct_path<'s, C: Send + Sync + 's>(
    register: usize,
    ctx: Box<C>,
    context: usize,
    trampoline: usize,
) -> std::result::Result<Result<Path<'s>>, Box<C>> {
    // SAFETY: the caller's contract; `ctx` lives as long as the path, whose code is dropped
    // first (module invariants).
    let code =
        unsafe { <Native as UpcallEntries>::free_register_code(register, context, trampoline) };
    match code {
        Some(code) => Ok(code.map(|code| Path::Direct { code, _ctx: ctx })),
        None => Err(ctx),
    }
}

/// The direct typed stub of `descriptor` (whose native plan is `plan`) for closure `f`, if
/// the native backend has a free-register stub for the signature (an integer argument
/// register the C arguments leave free for the context: x86-64 System V only); else `f` back.
fn direct<'s, S: UpcallSignature, F: UpcallFn<S> + Send + Sync + 's>(
    descriptor: &FunctionDescriptor,
    plan: &crate::abi::CallPlan,
    f: F,
) -> std::result::Result<Result<Path<'s>>, F> {
    let Some(register) = <Native as UpcallEntries>::free_register(descriptor, plan) else {
        return Err(f);
    };
    let ctx = Box::new(TypedContext {
        descriptor: descriptor.clone(),
        f,
        owner: 0,
    });
    let context = &*ctx as *const TypedContext<F> as usize;
    // SAFETY: the trampoline of `F` for `S` takes the C arguments of `S` and then a pointer to
    // a `TypedContext<F>`, `*ctx`; `register` is the native backend's free register for `S`.
    unsafe { direct_path(register, ctx, context, F::trampoline(false)) }.map_err(|ctx| ctx.f)
}

/// As [`direct`] for a confined stub: the context records the calling thread, the closure
/// need not be `Send` or `Sync`, and the trampoline checks the thread first.
fn direct_confined<'s, S: UpcallSignature, F: UpcallFn<S> + 's>(
    descriptor: &FunctionDescriptor,
    plan: &crate::abi::CallPlan,
    f: F,
) -> std::result::Result<Result<Path<'s>>, F> {
    let Some(register) = <Native as UpcallEntries>::free_register(descriptor, plan) else {
        return Err(f);
    };
    let ctx = Box::new(ThreadBound(TypedContext {
        descriptor: descriptor.clone(),
        f,
        owner: thread_mark(),
    }));
    let context = &ctx.0 as *const TypedContext<F> as usize;
    // SAFETY: the confined trampoline of `F` for `S` takes the C arguments of `S` and then a
    // pointer to a `TypedContext<F>`, `ctx.0`, whose owner is this thread; `register` is the
    // native backend's free register for `S`. The `ThreadBound` is kept by a
    // `ConfinedTypedUpcallStub` only (`!Send`), and the trampoline checks the thread before
    // touching the closure.
    unsafe { direct_path(register, ctx, context, F::trampoline(true)) }.map_err(|ctx| ctx.0.f)
}

impl Linker {
    /// Makes a C function pointer of type `S` (`unsafe extern "C" fn(A0, ..) -> R`) that calls
    /// `closure`, a `Fn(A0, ..) -> R` checked at compile time (see
    /// [`crate::upcall::typed`]). On x86-64 System V the pointer reaches the closure through a
    /// direct trampoline (no argument decoding), unless all six integer argument registers
    /// carry arguments; elsewhere, and in that case, it is an ordinary upcall stub around the
    /// closure. A panic in the closure aborts the process (it never unwinds into C). The
    /// closure must be `Send + Sync`: C may call the pointer from any thread (else
    /// [`Linker::upcall_typed_confined`]).
    ///
    /// `S` need not be written when the closure's parameter types are: it is the one
    /// signature the closure's types give (`upcall_typed(|a: i32, b: i32| a + b, &arena)` is
    /// an `int (*)(int, int)`). The reverse, `upcall_typed::<S>(|a, b| ..)`, compiles only when
    /// the closure's body does not need its parameters' types before the call is checked
    /// (arithmetic and casts do not; a method call does): Rust deduces a closure's parameter
    /// types from `Fn` bounds, which `UpcallFn<S>` cannot name on stable Rust. Write the
    /// parameter types, and `S` when it documents the C type.
    ///
    /// A `qsort` comparator of doubles:
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use gatun::linker::{FunctionDescriptor, SymbolLookup};
    /// use gatun::{memory::Arena, Linker, Value, ValueLayout as V};
    /// # #[cfg(gatun_executes)] {
    /// let arena = Arena::confined();
    /// type Cmp = unsafe extern "C" fn(*const c_void, *const c_void) -> i32;
    /// let cmp = Linker::native().upcall_typed::<Cmp>(
    ///     // SAFETY: qsort passes pointers to two elements of the double array.
    ///     |a: *const c_void, b: *const c_void| unsafe {
    ///         (*a.cast::<f64>()).total_cmp(&*b.cast::<f64>()) as i32
    ///     },
    ///     &arena,
    /// )?;
    /// let qsort = SymbolLookup::default_lookup().find("qsort")?;
    /// let d = FunctionDescriptor::of_void([V::ADDRESS, V::U64, V::U64, V::ADDRESS]);
    /// let qsort = Linker::native().downcall(&qsort, &d, &[])?;
    /// let mut xs = [3.5f64, -1.0, 2.0];
    /// let args = [Value::Address(xs.as_mut_ptr().cast()), Value::U64(3), Value::U64(8), cmp.as_value()];
    /// // SAFETY: `xs` holds 3 doubles; `cmp` compares doubles and outlives the call.
    /// unsafe { qsort.invoke(&args) }?;
    /// assert_eq!(xs, [-1.0, 2.0, 3.5]);
    /// // The signature inferred from the closure's parameter types:
    /// let add = Linker::native().upcall_typed(|a: i32, b: i32| a + b, &arena)?;
    /// // SAFETY: an `int (*)(int, int)` that lives while `add` does.
    /// assert_eq!(unsafe { (add.function())(2, 3) }, 5);
    /// # }
    /// # Ok::<(), gatun::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Linker::upcall_stub`] for the signature's descriptor ([`Error::InvalidDescriptor`],
    /// [`Error::Unsupported`] on targets without upcalls or without executable memory).
    pub fn upcall_typed<'s, S: UpcallSignature>(
        &self,
        closure: impl UpcallFn<S> + Send + Sync + 's,
        arena: &'s (impl SegmentAllocator + ?Sized),
    ) -> Result<TypedUpcallStub<'s, S>> {
        let (descriptor, plan) = signature::<S>()?;
        let closure = match direct::<S, _>(&descriptor, &plan, closure) {
            Ok(path) => return path.map(|path| TypedUpcallStub::new(path, descriptor)),
            Err(closure) => closure,
        };
        let ret = scalar_return(&descriptor);
        let stub = self.upcall_stub(&descriptor, move |a| closure.call_values(a, ret), arena)?;
        Ok(TypedUpcallStub::new(Path::Values(stub), descriptor))
    }

    /// As [`Linker::upcall_typed`], for a closure that is not `Send + Sync` and is called from
    /// C only on the current thread (a comparator, a callback of a single-threaded library): a
    /// call on another thread aborts the process instead of running the closure (see
    /// [`ConfinedTypedUpcallStub`]). The same direct and value paths; the direct trampoline
    /// compares the calling thread with the stub's first (one thread-local read per call).
    ///
    /// ```
    /// use std::cell::Cell;
    /// use std::ffi::c_void;
    /// use gatun::linker::{FunctionDescriptor, SymbolLookup};
    /// use gatun::{memory::Arena, Linker, Value, ValueLayout as V};
    /// # #[cfg(gatun_executes)] {
    /// let arena = Arena::confined();
    /// let calls = Cell::new(0u32); // counted without atomics: the stub stays on this thread
    /// let cmp = Linker::native().upcall_typed_confined(
    ///     |a: *const c_void, b: *const c_void| {
    ///         calls.set(calls.get() + 1);
    ///         // SAFETY: qsort passes pointers to two elements of the int array.
    ///         unsafe { (*a.cast::<i32>()).cmp(&*b.cast::<i32>()) as i32 }
    ///     },
    ///     &arena,
    /// )?;
    /// let qsort = SymbolLookup::default_lookup().find("qsort")?;
    /// let d = FunctionDescriptor::of_void([V::ADDRESS, V::U64, V::U64, V::ADDRESS]);
    /// let qsort = Linker::native().downcall(&qsort, &d, &[])?;
    /// let mut xs = [3i32, 1, 2];
    /// let args = [Value::Address(xs.as_mut_ptr().cast()), Value::U64(3), Value::U64(4), cmp.as_value()];
    /// // SAFETY: `xs` holds 3 ints; `cmp` compares ints, outlives the call and is called by
    /// // qsort on this thread.
    /// unsafe { qsort.invoke(&args) }?;
    /// assert_eq!(xs, [1, 2, 3]);
    /// assert!(calls.get() >= 2);
    /// # }
    /// # Ok::<(), gatun::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Linker::upcall_typed`].
    pub fn upcall_typed_confined<'s, S: UpcallSignature>(
        &self,
        closure: impl UpcallFn<S> + 's,
        arena: &'s (impl SegmentAllocator + ?Sized),
    ) -> Result<ConfinedTypedUpcallStub<'s, S>> {
        let (descriptor, plan) = signature::<S>()?;
        let stub = match direct_confined::<S, _>(&descriptor, &plan, closure) {
            Ok(path) => TypedUpcallStub::new(path?, descriptor),
            Err(closure) => {
                let ret = scalar_return(&descriptor);
                let stub = self.upcall_stub_confined(
                    &descriptor,
                    move |a| closure.call_values(a, ret),
                    arena,
                )?;
                TypedUpcallStub::new(Path::Values(stub.into_inner()), descriptor)
            }
        };
        Ok(ConfinedTypedUpcallStub {
            stub,
            _not_send: PhantomData,
        })
    }
}

impl<'s, S: UpcallSignature> TypedUpcallStub<'s, S> {
    fn new(path: Path<'s>, descriptor: FunctionDescriptor) -> Self {
        TypedUpcallStub {
            path,
            descriptor,
            _signature: PhantomData,
        }
    }
}
