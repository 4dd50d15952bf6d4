//! [`Linker`] and [`DowncallHandle`]: linking a [`Symbol`] with a [`FunctionDescriptor`] into a
//! reusable, thread-safe handle, and invoking it.
//!
//! # Invariants (the unsafe story of this module)
//! - A handle's plan was validated at link time: its stack area fits
//!   [`MAX_STACK_BYTES`](crate::linker::MAX_STACK_BYTES), and it has one `ArgPlan` per descriptor argument.
//! - Every invocation path checks the argument count and, on the `Value` paths, each argument's
//!   kind and (for segments) size before building the call frame; a mismatch is an error
//!   returned before any foreign code runs. Struct arguments are read from segments of at least
//!   the layout's size (any alignment: stubs and trampoline read them with loads of at most 8
//!   bytes that tolerate any address, and a MEMORY-class argument reaches the callee as an
//!   aligned copy on the stack); struct returns are written into segments of at least the
//!   layout's size whose address is a multiple of the layout's alignment (a MEMORY-class return
//!   is written by the callee through the hidden pointer, with aligned vector stores if it
//!   likes); capture segments are at least `capture_state_layout()`'s size (4 bytes, 12 on
//!   Windows) and 4-byte aligned. The raw path moves these
//!   checks to its caller (`# Safety`).
//! - The slots path (`linker::arguments`) calls the executor only when the arguments' kind
//!   word equals the handle's `slots_int` or `slots_float`, which `arguments::slots_words`
//!   makes a real kind word only for a handle whose executor has that slots path: a match means
//!   the count and every argument's kind were checked.
//! - No invocation path allocates: the call frame, the stack-argument area and the register
//!   image all live on the Rust stack of the invoking thread.
//! - A handle's compiled stub (`backend::x86_64_sysv::stub`) was compiled from the handle's
//!   own plan and argument kinds and is kept alive by the handle (`StubEntry` holds an `Arc`;
//!   the stub cache only a `Weak`, so the code is freed with the last handle). On the `Value`
//!   paths the stub performs the kind and segment-size checks itself before anything else and
//!   reports a mismatch by returning with r12 all ones without calling
//!   (`backend::x86_64_sysv::entry`); the handle then takes the checked trampoline path, so
//!   the same values are accepted or rejected with or without a stub. The capture segment and
//!   the return segment's alignment are validated in Rust before the stub is called.

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use crate::abi::CallPlan;
use crate::backend::{ArgKind, Backend, Direction, Executor, Native, RetKind};
use crate::error::{Error, Result};
use crate::layout::ScalarKind;
use crate::linker::arguments;
use crate::linker::option::check_capture_names;
use crate::linker::{FunctionDescriptor, LinkerOption, Symbol};
use crate::value::{scalar_tag, value_tag, Value};

mod checks;
mod convert;
mod invoke;
mod raw;

/// The native backend's executor: how a handle's calls run.
type Exec = <Native as Backend>::Executor;
/// The native executor's struct entry ([`Executor::struct_entry`]).
type StructEntry = <Exec as Executor>::StructEntry;

/// The native linker (Java's `Linker.nativeLinker()`): links symbols into [`DowncallHandle`]s
/// for the platform's C calling convention. Executing is supported on x86-64 System V (Linux),
/// AAPCS64 (Linux), Apple arm64 and x86-64 Windows (the Microsoft x64 convention); elsewhere
/// [`Linker::downcall`] returns [`Error::Unsupported`].
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use gatun::linker::SymbolLookup;
/// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout};
/// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
/// let abs = Linker::native()
///     .downcall(&abs, &FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::I32]), &[])
///     .unwrap();
/// // SAFETY: int abs(int) has no preconditions.
/// assert_eq!(unsafe { abs.invoke(&[Value::I32(-3)]) }.unwrap(), Value::I32(3));
/// # }
/// ```
#[derive(Debug)]
pub struct Linker {
    _private: (),
}

static NATIVE: Linker = Linker { _private: () };

impl Linker {
    /// The linker for the platform gatun runs on.
    ///
    /// ```
    /// use gatun::Linker;
    /// // One linker per process: every call returns the same one.
    /// assert!(std::ptr::eq(Linker::native(), Linker::native()));
    /// ```
    pub fn native() -> &'static Linker {
        &NATIVE
    }

    /// Links `symbol` as a function of type `descriptor` (Java's `downcallHandle`).
    ///
    /// Classification happens here, once; invocations only carry out the resulting
    /// [`CallPlan`].
    ///
    /// # Memory
    /// Each distinct signature (plan, argument kinds, capture) gets one compiled stub of
    /// machine code — typically 100-400 bytes , a few KiB for
    /// signatures with many stack arguments — in gatun's code arena: 64 KiB
    /// chunks of 16-byte granules, so a stub takes its size rounded up to 16 bytes. Handles of
    /// the same signature share the stub, whatever their symbol; a capture handle with a scalar
    /// or void return also holds the stub of its signature without capture (for the
    /// system-call adapter). A stub is freed when the last handle using it drops, and a chunk
    /// whose stubs are all freed is unmapped (one empty chunk is kept), so memory follows the
    /// live signatures, not the number ever linked. Linking a signature that has a live stub
    /// only classifies it and looks the stub up; a new one generates code (about 0.5-2 µs) and,
    /// once per chunk, maps a chunk. The handle itself is one `Arc` of a few hundred bytes.
    ///
    /// # Errors
    /// - [`Error::InvalidDescriptor`]: a null symbol; a padding, sequence (array) or zero-sized
    ///   argument or return; a group whose size is not a multiple of its alignment; a variadic
    ///   index beyond the argument count; an option given twice; more than
    ///   [`MAX_STACK_BYTES`](crate::linker::MAX_STACK_BYTES) bytes of stack arguments. (`long double` and bitfields
    ///   cannot be expressed as layouts at all.)
    /// - [`Error::UnknownCaptureState`] (listing the valid names) and
    ///   [`Error::CaptureStateUnavailable`] ("GetLastError is only available on Windows").
    /// - [`Error::Unsupported`] on a platform without an executor (anything but x86-64 and AArch64
    ///   Linux, Apple arm64 and x86-64 Windows).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{Error, FunctionDescriptor, Linker, LinkerOption, Value, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let h = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// // SAFETY: int abs(int) has no preconditions.
    /// assert_eq!(unsafe { h.invoke(&[Value::I32(-4)]) }.unwrap(), Value::I32(4));
    /// // An option given twice is an error at link time.
    /// let twice = [LinkerOption::Critical, LinkerOption::Critical];
    /// let err = Linker::native().downcall(&abs, &d, &twice).unwrap_err();
    /// assert!(matches!(err, Error::InvalidDescriptor { .. }));
    /// # }
    /// ```
    // On the `unsupported` backend the link always fails, so the handle is never built.
    #[cfg_attr(gatun_backend = "unsupported", allow(unreachable_code))]
    pub fn downcall(
        &self,
        symbol: &Symbol,
        descriptor: &FunctionDescriptor,
        options: &[LinkerOption],
    ) -> Result<DowncallHandle> {
        if symbol.address().is_null() {
            return Err(Error::InvalidDescriptor {
                descriptor: descriptor.to_string(),
                reason: "the symbol's address is null".into(),
            });
        }
        let Linked {
            plan,
            capture,
            captured,
            critical,
        } = link_inputs(descriptor, options)?;
        let args: Box<[ArgKind]> = descriptor
            .argument_layouts()
            .iter()
            .map(ArgKind::of)
            .collect();
        let ret = RetKind::of(descriptor.return_layout());
        let exec = Native::link(&plan, &args, ret, capture, symbol.address())?;
        let ret_tag = match ret {
            RetKind::Scalar(k) => (u64::from(scalar_tag(k)), k == ScalarKind::Bool),
            _ => (u64::from(value_tag(&Value::Void)), false),
        };
        Ok(DowncallHandle {
            inner: Arc::new(Inner::new(
                exec,
                Common {
                    target: symbol.address() as usize,
                    _symbol: symbol.clone(),
                    descriptor: descriptor.clone(),
                    plan,
                    args,
                    ret,
                    ret_tag,
                    capture,
                    captured,
                    critical,
                },
            )),
        })
    }
}

/// Test and benchmark hooks (cargo feature `internals`; not part of the stable API).
#[cfg(feature = "internals")]
impl Linker {
    /// The machine code of the compiled stub `downcall` would use for this signature (both
    /// entries; x86-64 SysV), generated without the stub cache and without mapping it: for
    /// disassembly tools and compile-time measurements. The code does not depend on the target
    /// address (it is a stub parameter).
    ///
    /// # Errors
    /// As [`Linker::downcall`] for the descriptor and options (every option check included;
    /// there is no symbol to check); [`Error::Unsupported`] on a target without a stub
    /// compiler.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let code = Linker::native().stub_code(&d, &[]).unwrap();
    /// assert!(!code.is_empty());
    /// # }
    /// ```
    pub fn stub_code(
        &self,
        descriptor: &FunctionDescriptor,
        options: &[LinkerOption],
    ) -> Result<Vec<u8>> {
        let (plan, args, capture) = stub_inputs(descriptor, options)?;
        Native::stub_code(&plan, &args, capture)
    }

    /// Compiles the stub for this signature and places it in the code arena ([`crate::code`];
    /// a chunk is mapped only if none has room), bypassing the stub cache, then frees it: what
    /// a cache miss in [`Linker::downcall`] costs beyond classification. Returns the code size
    /// in bytes. For measurements.
    ///
    /// # Errors
    /// As [`Linker::downcall`]; [`Error::Unsupported`] if the OS refuses executable memory.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let size = Linker::native().compile_stub_uncached(&d, &[]).unwrap();
    /// assert_eq!(size, Linker::native().stub_code(&d, &[]).unwrap().len());
    /// # }
    /// ```
    pub fn compile_stub_uncached(
        &self,
        descriptor: &FunctionDescriptor,
        options: &[LinkerOption],
    ) -> Result<usize> {
        let (plan, args, capture) = stub_inputs(descriptor, options)?;
        Native::compile_uncached(&plan, &args, capture)
    }
}

/// What `downcall` derives from a descriptor and options, before there is a handle.
struct Linked {
    plan: CallPlan,
    capture: bool,
    captured: &'static [&'static str],
    critical: bool,
}

/// The link-time checks of a descriptor and options (everything but the symbol), and the plan.
/// Shared by [`Linker::downcall`] and the stub-code tools, so both accept the same inputs.
fn link_inputs(descriptor: &FunctionDescriptor, options: &[LinkerOption]) -> Result<Linked> {
    let bad = |reason: String| Error::InvalidDescriptor {
        descriptor: descriptor.to_string(),
        reason,
    };
    let mut first_variadic = None;
    let mut capture = false;
    let mut captured: &'static [&'static str] = &[];
    let mut critical = false;
    for o in options {
        let dup = match o {
            LinkerOption::FirstVariadicArg(i) => first_variadic.replace(*i).is_some(),
            LinkerOption::CaptureCallState(names) => {
                check_capture_names(names)?;
                captured = names;
                std::mem::replace(&mut capture, true)
            }
            LinkerOption::Critical => std::mem::replace(&mut critical, true),
        };
        if dup {
            return Err(bad(format!("linker option {o:?} given twice")));
        }
    }
    let plan = Native::plan(descriptor, first_variadic, Direction::Downcall)?;
    Ok(Linked {
        plan,
        capture,
        captured,
        critical,
    })
}

/// Plans a signature for the stub compiler (the link-time checks of `downcall`, without a
/// symbol).
#[cfg(feature = "internals")]
fn stub_inputs(
    descriptor: &FunctionDescriptor,
    options: &[LinkerOption],
) -> Result<(CallPlan, Vec<ArgKind>, bool)> {
    let Linked { plan, capture, .. } = link_inputs(descriptor, options)?;
    let args = descriptor
        .argument_layouts()
        .iter()
        .map(ArgKind::of)
        .collect();
    Ok((plan, args, capture))
}

/// A handle's link-time facts, whatever its executor.
#[derive(Clone)]
struct Common {
    target: usize,
    _symbol: Symbol,
    descriptor: FunctionDescriptor,
    plan: CallPlan,
    args: Box<[ArgKind]>,
    ret: RetKind,
    /// The `Value` tag of a scalar/void return, and whether it is a bool (stub value path).
    ret_tag: (u64, bool),
    capture: bool,
    captured: &'static [&'static str],
    critical: bool,
}

#[derive(Clone)]
struct Inner {
    /// [`Executor::int_arity`] of `exec`, cached for `invoke`'s one compare.
    int_arity: usize,
    /// [`Executor::float_arity`] of `exec`.
    float_arity: usize,
    /// The descriptor's argument count when `struct_entry` is `Some`, else `usize::MAX` (no
    /// slice is that long): `invoke_into`'s one compare for a struct written through the
    /// return destination.
    struct_arity: usize,
    /// [`Executor::struct_entry`] of `exec` (kept alive by `exec`).
    struct_entry: Option<StructEntry>,
    /// A struct return's size in bytes and its alignment minus one (`(0, 0)` for scalar and
    /// void returns): the return segment checks of `invoke_into`'s struct-entry path.
    ret_size: usize,
    ret_align_mask: usize,
    /// The kind word (`linker::arguments`) an `Arguments` must have to take the integer slots
    /// fast path ([`Executor::call_slots_int`]), or one no `Arguments` has.
    slots_int: u64,
    /// As `slots_int`, for the float slots fast path ([`Executor::call_slots_float`]).
    slots_float: u64,
    /// How calls run, chosen once at link time by the native backend.
    exec: Exec,
    common: Common,
}

impl Inner {
    /// The only constructor: the cached arities and the struct entry are derived from `exec`
    /// here.
    fn new(exec: Exec, common: Common) -> Inner {
        let struct_entry = exec.struct_entry();
        let (ret_size, ret_align_mask) = match common.ret {
            RetKind::Group { size, align } => (size, align - 1),
            _ => (0, 0),
        };
        let (slots_int, slots_float) = arguments::slots_words(exec.slots_path(), &common.args);
        Inner {
            int_arity: exec.int_arity(common.args.len()),
            float_arity: exec.float_arity(common.args.len()),
            struct_arity: match struct_entry {
                Some(_) => common.args.len(),
                None => usize::MAX,
            },
            struct_entry,
            ret_size,
            ret_align_mask,
            slots_int,
            slots_float,
            exec,
            common,
        }
    }
}

impl Inner {
    /// [`bad_return_segment`](checks::bad_return_segment) for this handle's struct return. Reads the return's size and
    /// alignment itself, so that its caller can compare against them in memory.
    #[cold]
    #[inline(never)]
    fn bad_struct_segment(&self, address: usize, segment_size: usize) -> Error {
        checks::bad_return_segment(
            address,
            segment_size,
            self.ret_size,
            self.ret_align_mask + 1,
        )
    }
}

impl std::ops::Deref for Inner {
    type Target = Common;
    fn deref(&self) -> &Common {
        &self.common
    }
}

/// A linked native function (Java's downcall `MethodHandle`).
///
/// `Send + Sync`, cheap to clone (an `Arc`), reusable from any number of threads at once; keeps
/// its [`Symbol`]'s library loaded. Invoking is `unsafe` (the callee is foreign code), but
/// argument count and kinds are checked: a mismatch is an error, never undefined behaviour
/// (an integer of another integer kind is converted when its value fits: see
/// [`DowncallHandle::invoke`]), and every error names the function. No invocation path
/// allocates on the heap.
///
/// With [`LinkerOption::CaptureCallState`] the first argument is the capture segment
/// (`Value::Segment` of at least [`crate::linker::capture_state_layout`]'s size, 4 bytes or 12
/// on Windows, 4-byte aligned), as in Java.
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use gatun::linker::SymbolLookup;
/// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
/// // int abs(int): linked once, called from any thread, never allocating.
/// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
/// let h = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
/// assert_eq!((h.arity(), h.captures_call_state()), (1, false));
/// let h2 = h.clone();
/// // SAFETY: abs has no preconditions.
/// let t = std::thread::spawn(move || unsafe { h2.invoke(&[Value::I32(-7)]) }.unwrap().as_i32());
/// assert_eq!(t.join().unwrap(), Some(7));
/// // SAFETY: abs has no preconditions; a wrong kind is an error before any call.
/// assert!(unsafe { h.invoke(&[Value::F64(-7.0)]) }.is_err());
/// # }
/// ```
#[derive(Clone)]
pub struct DowncallHandle {
    inner: Arc<Inner>,
}

impl fmt::Debug for DowncallHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DowncallHandle({:#x}, {}, plan {}, {})",
            self.inner.target,
            self.inner.descriptor,
            // In the host ABI's register names (`Abi::describe`).
            crate::abi::Abi::host().map_or_else(
                || self.inner.plan.to_string(),
                |abi| abi.describe(&self.inner.plan)
            ),
            if self.inner.exec.is_compiled() {
                "compiled stub"
            } else {
                "trampoline"
            }
        )
    }
}

impl DowncallHandle {
    /// The descriptor this handle was linked with (without the capture segment).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let h = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// assert_eq!(h.descriptor().to_string(), d.to_string());
    /// # }
    /// ```
    pub fn descriptor(&self) -> &FunctionDescriptor {
        &self.inner.descriptor
    }

    /// The call plan (for inspection, tests and compiled stubs).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let h = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// // One planned argument, in a register on every supported ABI.
    /// assert_eq!(h.plan().args().len(), 1);
    /// # }
    /// ```
    pub fn plan(&self) -> &CallPlan {
        &self.inner.plan
    }

    /// The target function's address.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let h = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// assert_eq!(h.address(), abs.address());
    /// # }
    /// ```
    pub fn address(&self) -> *const c_void {
        self.inner.target as *const c_void
    }

    /// Whether the handle takes a leading capture segment.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, LinkerOption, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let plain = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// let capture = [LinkerOption::CaptureCallState(&["errno"])];
    /// let captured = Linker::native().downcall(&abs, &d, &capture).unwrap();
    /// assert!(!plain.captures_call_state() && captured.captures_call_state());
    /// // The capture segment comes first.
    /// assert_eq!((plain.arity(), captured.arity()), (1, 2));
    /// # }
    /// ```
    pub fn captures_call_state(&self) -> bool {
        self.inner.capture
    }

    /// The state names given to [`LinkerOption::CaptureCallState`] (empty without capture),
    /// e.g. `["errno"]`; for the system-call adapter's "was not linked with
    /// capture_call_state(\"errno\")" check.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, LinkerOption, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let capture = [LinkerOption::CaptureCallState(&["errno"])];
    /// let h = Linker::native().downcall(&abs, &d, &capture).unwrap();
    /// assert_eq!(h.captured_states(), &["errno"]);
    /// # }
    /// ```
    pub fn captured_states(&self) -> &'static [&'static str] {
        self.inner.captured
    }

    /// Whether invocations run a compiled stub (decided at link time). Test and benchmark hook
    /// (cargo feature `internals`). `false` when
    /// the platform or the OS (no executable mappings) does not allow one; the handle then
    /// uses the `global_asm!` trampoline, with identical results.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let h = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// // The interpreted twin never runs a stub, whatever the OS allows.
    /// assert!(!h.interpreted().uses_compiled_stub());
    /// let _compiled_if_allowed = h.uses_compiled_stub();
    /// # }
    /// ```
    #[cfg(feature = "internals")]
    pub fn uses_compiled_stub(&self) -> bool {
        self.inner.exec.is_compiled()
    }

    /// Whether `invoke_into` has the struct-entry path (a struct return without capture that
    /// the stub writes through the return destination). For the backends' tests.
    #[cfg(test)]
    pub(crate) fn uses_struct_entry(&self) -> bool {
        self.inner.struct_entry.is_some()
    }

    /// A handle for the same function that always uses the trampoline executor (the portable
    /// path), never a compiled stub: for differential tests and benchmarks (cargo feature
    /// `internals`). Allocates one new handle (an `Arc`).
    #[cfg(feature = "internals")]
    pub fn interpreted(&self) -> DowncallHandle {
        DowncallHandle {
            inner: Arc::new(Inner::new(
                self.inner.exec.interpreted(),
                self.inner.common.clone(),
            )),
        }
    }

    /// Whether `self` and `other` are the same handle: clones of one [`Linker::downcall`]
    /// (as [`Arc::ptr_eq`]). Two links of the same symbol and descriptor are equal in
    /// behaviour but not the same handle.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::linker::SymbolLookup;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let h = Linker::native().downcall(&abs, &d, &[]).unwrap();
    /// assert!(h.ptr_eq(&h.clone()));
    /// assert!(!h.ptr_eq(&Linker::native().downcall(&abs, &d, &[]).unwrap()));
    /// # }
    /// ```
    pub fn ptr_eq(&self, other: &DowncallHandle) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Whether it was linked with [`LinkerOption::Critical`].
    pub fn is_critical(&self) -> bool {
        self.inner.critical
    }

    /// The number of arguments an invocation takes (descriptor arguments, plus 1 for the
    /// capture segment).
    pub fn arity(&self) -> usize {
        self.inner.args.len() + self.inner.capture as usize
    }

    #[inline]
    fn check_count(&self, found: usize) -> Result<()> {
        if found != self.arity() {
            return Err(self.count_error(found));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    pub(super) fn count_error(&self, found: usize) -> Error {
        Error::ArgumentCount {
            function: self.function_label(),
            descriptor: self.inner.descriptor.to_string(),
            capture: self.inner.capture,
            expected: self.arity(),
            found,
        }
    }

    /// The function for messages: `` `name` `` (the symbol's name) or `the function at 0x...`.
    pub(crate) fn function_label(&self) -> String {
        match self.inner._symbol.name() {
            Some(n) => format!("`{n}`"),
            None => format!("the function at {:#x}", self.inner.target),
        }
    }
}

// A handle is shared between threads; keep that a compile-time fact.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<DowncallHandle>();
    send_sync::<Linker>();
};
