//! The public stubs: [`UpcallStub`], [`ConfinedUpcallStub`], and the [`Linker`] methods that
//! make them ([`Linker::upcall_stub`], [`Linker::upcall_stub_confined`]).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use super::abort::thread_mark;
use super::context::{Context, Path};
use super::UpcallArgs;
use crate::abi::CallPlan;
use crate::backend::upcall::{UpcallEntries, UpcallHeader};
use crate::backend::Native;
use crate::code::ExecutableCode;
use crate::error::Result;
use crate::linker::{FunctionDescriptor, Linker};
use crate::memory::{MemorySegment, SegmentAllocator};
use crate::value::Value;
#[cfg(doc)]
use crate::Error;

/// A C function pointer that calls a Rust closure (Java's upcall stub segment), made by
/// [`Linker::upcall_stub`].
///
/// Owns the generated code (at most 32 bytes of the shared code arena) and the closure;
/// dropping it frees both. It borrows the arena it was made for (`'s`), so it never
/// outlives it. `Send + Sync` (the closure is). See the [module documentation](crate::upcall) for the
/// argument, return, error, panic and thread rules.
///
/// ```
/// # #[cfg(gatun_executes)] {
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
    /// # #[cfg(gatun_executes)] {
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
    ///   do not fit in registers, by the native ABI's rules) take more than
    ///   [`MAX_STACK_BYTES`](crate::linker::MAX_STACK_BYTES) (1 MiB), the most gatun's
    ///   executor supports; the message gives the bytes needed.
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
            Box::new(Context::new(descriptor, Box::new(closure), 0)?),
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
/// # #[cfg(gatun_executes)] {
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

/// A closure (or a typed stub's context holding one) that is only ever called and dropped on
/// one thread.
pub(super) struct ThreadBound<F>(pub(super) F);

// SAFETY: a `ThreadBound` lives only inside the context of a `ConfinedUpcallStub` or of a
// `ConfinedTypedUpcallStub`, which are `!Send`/`!Sync` and so dropped on their owner thread;
// the dispatcher (`Context::owner`) and the confined typed trampolines (`TypedContext::owner`)
// call the closure only after checking that they run on that thread. `&UpcallStub` and
// `&TypedUpcallStub` (reachable by `Deref`) expose no access to the closure.
unsafe impl<F> Send for ThreadBound<F> {}
// SAFETY: as above.
unsafe impl<F> Sync for ThreadBound<F> {}

impl<F: for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>>> ThreadBound<F> {
    fn call<'a>(&self, args: &UpcallArgs<'a>) -> Result<Value<'a>> {
        (self.0)(args)
    }
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
        // `bound.call` captures the whole `ThreadBound`, not just its (non-Send) field. A
        // confined context takes neither the integer nor the shape path (they do not check the
        // owner).
        let ctx = Context::new(
            descriptor,
            Box::new(move |a: &UpcallArgs<'_>| bound.call(a)),
            thread_mark(),
        )?;
        Ok(ConfinedUpcallStub {
            stub: UpcallStub::from_context(Box::new(ctx), arena)?,
            _not_send: PhantomData,
        })
    }
}

impl<'s> ConfinedUpcallStub<'s> {
    /// The stub itself, for a confined typed stub that keeps it (and is `!Send` itself).
    pub(super) fn into_inner(self) -> UpcallStub<'s> {
        self.stub
    }
}

/// The stub's code for `ctx`, from the native backend: the integer-register path's
/// free-register stub or the register-shape stub when `ctx`'s path is one of those (and the
/// backend makes it), else the backend's general entry.
fn stub_code(ctx: &Context<'_>) -> Result<ExecutableCode> {
    let header: *const UpcallHeader = &ctx.header;
    match &ctx.path {
        Path::Int { int, .. } => {
            // SAFETY: the entry is `gatun_upcall_dispatch_int<n>` for this context, an
            // `extern "C" fn(a0: u64, .., a<n-1>: u64, context: *const c_void) -> u64`, and the
            // stub is called as a function of the descriptor, whose `n` arguments are the
            // integer argument registers `0..n` in order and whose result is `void` or in the
            // first integer return register (`int_register_args` of the native backend on the
            // native plan): the context goes in integer argument register `n`.
            let code = unsafe {
                <Native as UpcallEntries>::free_register_code(
                    int.n as usize,
                    header as usize,
                    int.entry as usize,
                )
            };
            if let Some(code) = code {
                return code;
            }
        }
        Path::Shape(shape) => {
            if let Some(code) =
                // SAFETY: the header's shape dispatcher is the shape dispatcher of `shape`, the
                // native backend's register shape of the descriptor on the native plan
                // (`Context::with_plan`).
                unsafe { <Native as UpcallEntries>::shape_upcall_code(shape, header) }
            {
                return code;
            }
        }
        Path::Scalar(_) | Path::Registers(_) | Path::General => {}
    }
    // The general dispatcher decodes every path (`dispatch::gatun_upcall_dispatch`).
    <Native as UpcallEntries>::upcall_code(header)
}
