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
#[cfg(feature = "internals")]
use crate::backend::native;
use crate::backend::native::{Executor, ImageEntry, StructEntry};
use crate::backend::{store_low_bytes, ArgKind, ArgSource, Direction, RetKind};
use crate::error::{Error, Result};
use crate::layout::ScalarKind;
use crate::linker::arguments;
use crate::linker::option::{check_capture_names, CAPTURE_STATE_SIZE};
use crate::linker::{FunctionDescriptor, LinkerOption, Symbol};
use crate::memory::{MemorySegment, SegmentAllocator};
use crate::value::{scalar_tag, value_tag, Value};

/// The native linker (Java's `Linker.nativeLinker()`): links symbols into [`DowncallHandle`]s
/// for the platform's C calling convention. Executing is supported on x86-64 System V (Linux),
/// AAPCS64 (Linux), Apple arm64 and x86-64 Windows (the Microsoft x64 convention); elsewhere
/// [`Linker::downcall`] returns [`Error::Unsupported`].
///
/// ```
/// # #[cfg(any(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")), all(windows, target_arch = "x86_64")))] {
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
        let exec = Executor::link(&plan, &args, ret, capture, symbol.address())?;
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
    pub fn stub_code(
        &self,
        descriptor: &FunctionDescriptor,
        options: &[LinkerOption],
    ) -> Result<Vec<u8>> {
        let (plan, args, capture) = stub_inputs(descriptor, options)?;
        native::stub_code(&plan, &args, capture)
    }

    /// Compiles the stub for this signature and places it in the code arena ([`crate::code`];
    /// a chunk is mapped only if none has room), bypassing the stub cache, then frees it: what
    /// a cache miss in [`Linker::downcall`] costs beyond classification. Returns the code size
    /// in bytes. For measurements.
    ///
    /// # Errors
    /// As [`Linker::downcall`]; [`Error::Unsupported`] if the OS refuses executable memory.
    pub fn compile_stub_uncached(
        &self,
        descriptor: &FunctionDescriptor,
        options: &[LinkerOption],
    ) -> Result<usize> {
        let (plan, args, capture) = stub_inputs(descriptor, options)?;
        native::compile_uncached(&plan, &args, capture)
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
    let plan = crate::backend::native::plan(descriptor, first_variadic, Direction::Downcall)?;
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
    exec: Executor,
    common: Common,
}

impl Inner {
    /// The only constructor: the cached arities and the struct entry are derived from `exec`
    /// here.
    fn new(exec: Executor, common: Common) -> Inner {
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
    /// [`bad_return_segment`] for this handle's struct return. Reads the return's size and
    /// alignment itself, so that its caller can compare against them in memory.
    #[cold]
    #[inline(never)]
    fn bad_struct_segment(&self, address: usize, segment_size: usize) -> Error {
        bad_return_segment(
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
/// argument count and kinds are checked: a mismatch is an error, never undefined behaviour.
/// No invocation path allocates on the heap.
///
/// With [`LinkerOption::CaptureCallState`] the first argument is the capture segment
/// (`Value::Segment` of at least [`crate::linker::capture_state_layout`]'s size, 4 bytes or 12
/// on Windows, 4-byte aligned), as in Java.
///
/// ```
/// # #[cfg(any(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")), all(windows, target_arch = "x86_64")))] {
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
/// assert!(unsafe { h.invoke(&[Value::I64(-7)]) }.is_err());
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
            self.inner.plan,
            if self.inner.exec.is_compiled() {
                "compiled stub"
            } else {
                "trampoline"
            }
        )
    }
}

/// A wrong argument value; `i` is its 0-based position among all the values of the call
/// (capture segment included), numbered from 1 in the message (see `crate::error`).
fn mismatch(i: usize, expected: impl fmt::Display, found: &Value<'_>) -> Error {
    Error::ValueMismatch {
        position: format!("argument {}", i + 1),
        expected: expected.to_string(),
        found: match found {
            Value::Segment(s) => format!("a segment of {} bytes", s.byte_size()),
            other => other.kind_name().to_string(),
        },
    }
}

/// Whether `seg` can take a struct return of `size` bytes aligned to `align` (a power of
/// two): at least `size` bytes, at an address that is a multiple of `align`;
/// [`bad_return_segment`] says which check failed.
#[inline(always)]
fn fits_return(seg: &MemorySegment<'_>, size: usize, align: usize) -> bool {
    seg.byte_size() >= size && seg.address() & (align - 1) == 0
}

/// `Ok` if `seg` can take a struct return of `size` bytes aligned to `align` ([`fits_return`]),
/// else the error saying why ([`bad_return_segment`], out of line).
#[inline(always)]
fn check_return(seg: &MemorySegment<'_>, size: usize, align: usize) -> Result<()> {
    if fits_return(seg, size, align) {
        Ok(())
    } else {
        Err(bad_return_segment(
            seg.address(),
            seg.byte_size(),
            size,
            align,
        ))
    }
}

/// The error for a struct-return destination (at `address`, `segment_size` bytes) that
/// [`fits_return`] rejects: shorter than the return layout ([`Error::OutOfBounds`]), or
/// misaligned for it ([`Error::MisalignedAccess`]). Takes plain values, not the segment: a
/// reference would make the caller keep the segment in memory on its hot path.
#[cold]
#[inline(never)]
fn bad_return_segment(address: usize, segment_size: usize, size: usize, align: usize) -> Error {
    if segment_size < size {
        Error::OutOfBounds {
            offset: 0,
            access_size: size,
            segment_size,
        }
    } else {
        Error::MisalignedAccess {
            address,
            alignment: align,
        }
    }
}

/// A branch hint: the path calling this is unlikely (lays the other path out as the
/// fall-through). A stand-in for `std::hint::cold_path`, stable only since Rust 1.95.
#[cold]
#[inline(always)]
fn cold_path() {}

/// Writes a scalar return of `kind` (exactly its size in bytes) from the 64-bit register value.
#[inline(always)]
unsafe fn write_scalar(kind: ScalarKind, bits: u64, ret: *mut u8) {
    let bits = if kind == ScalarKind::Bool {
        (bits as u8 != 0) as u64
    } else {
        bits
    };
    // SAFETY: the caller guarantees `ret` is writable for kind.byte_size() bytes.
    unsafe { store_low_bytes(ret, bits, kind.byte_size()) }
}

impl DowncallHandle {
    /// The descriptor this handle was linked with (without the capture segment).
    pub fn descriptor(&self) -> &FunctionDescriptor {
        &self.inner.descriptor
    }

    /// The call plan (for inspection, tests and compiled stubs).
    pub fn plan(&self) -> &CallPlan {
        &self.inner.plan
    }

    /// The target function's address.
    pub fn address(&self) -> *const c_void {
        self.inner.target as *const c_void
    }

    /// Whether the handle takes a leading capture segment.
    pub fn captures_call_state(&self) -> bool {
        self.inner.capture
    }

    /// The state names given to [`LinkerOption::CaptureCallState`] (empty without capture),
    /// e.g. `["errno"]`; for the system-call adapter's "was not linked with
    /// capture_call_state(\"errno\")" check.
    pub fn captured_states(&self) -> &'static [&'static str] {
        self.inner.captured
    }

    /// Whether invocations run a compiled stub (decided at link time). Test and benchmark hook
    /// (cargo feature `internals`). `false` when
    /// the platform or the OS (no executable mappings) does not allow one; the handle then
    /// uses the `global_asm!` trampoline, with identical results.
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

    /// The raw path through the compiled stub, if the handle has one (for typed handles):
    /// `args` the descriptor's arguments only, `capture` null or the capture buffer. `None`
    /// (nothing called) without a stub.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`] (with `args` holding one pointer per descriptor
    /// argument, count not checked); `capture` null for a handle without capture, else a
    /// capture buffer (`capture_state_layout()`'s size, 4-aligned).
    #[inline(always)]
    pub(super) unsafe fn call_stub_raw(
        &self,
        args: *const *const u8,
        ret: *mut u8,
        capture: *mut i32,
    ) -> Option<u64> {
        // SAFETY: forwarded to the caller.
        unsafe {
            self.inner
                .exec
                .call_raw(args, ret, capture, self.inner.target as *const c_void)
        }
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

    /// Calls the function with `args` (scalars as their `Value` variants; pointers as
    /// `Value::Address` or `Value::Segment` (its address); structs/unions as `Value::Segment`
    /// holding at least the layout's bytes). Returns `Value::Void` or the scalar result,
    /// truncated to its declared width and extended by its signedness (a `bool` is
    /// `byte != 0`).
    ///
    /// # Errors
    /// [`Error::ArgumentCount`]; [`Error::ValueMismatch`] for an argument of the wrong kind, a
    /// segment smaller than its struct layout or a capture segment smaller than
    /// [`capture_state_layout`](crate::linker::capture_state_layout) (4 bytes, 12 on Windows), and
    /// for a struct return (use [`DowncallHandle::invoke_into`]); [`Error::MisalignedAccess`]
    /// for a capture segment that is not 4-byte aligned; all before the call. (Struct argument
    /// segments may have any alignment: their bytes are copied, never handed to the callee.)
    ///
    /// # Safety
    /// The symbol must be a function of the linked type, and `args` must satisfy its contract
    /// (valid pointers, etc.).
    #[inline(always)]
    pub unsafe fn invoke(&self, args: &[Value<'_>]) -> Result<Value<'static>> {
        let inner = &*self.inner;
        // The common case in one test: a stub, no capture, a scalar or void return, and as
        // many values as descriptor arguments.
        // One compare decides the fast path: `int_arity` is the argument count when the
        // executor has the integer fast path, else `usize::MAX` (no slice is that long).
        if args.len() == inner.int_arity {
            // SAFETY: `int_arity` is the executor's (`Inner::new`) and not `usize::MAX`; one
            // `Value` per descriptor argument; the callee's contract is the caller's.
            let bits = unsafe {
                inner
                    .exec
                    .call_int(args.as_ptr().cast(), inner.target as *const c_void)
            };
            if let Some(bits) = bits {
                // The integer fast path never serves a bool return: no normalisation needed.
                return Ok(self.value_of_bits(bits));
            }
        } else if args.len() == inner.float_arity {
            // SAFETY: as above, for the float fast path.
            let bits = unsafe {
                inner
                    .exec
                    .call_float(args.as_ptr().cast(), inner.target as *const c_void)
            };
            if let Some(bits) = bits {
                return Ok(self.value_of_bits(bits));
            }
        }
        // SAFETY: forwarded.
        unsafe { self.invoke_slow(args) }
    }

    /// The slots fast path of [`DowncallHandle::invoke_arguments`]: the compiled stub's slots
    /// entry called with `slots` when `kinds` (the arguments' kind word, `linker::arguments`)
    /// is the one this handle's integer or float slots path expects, returning the result's
    /// register bits (for [`DowncallHandle::slots_value`]); `None` (nothing called) otherwise.
    ///
    /// # Safety
    /// `slots` holds the arguments' slots: when `kinds` matches, one 8-byte slot per
    /// descriptor argument holding a value of its kind in its low bytes. The callee's contract
    /// is the caller's.
    #[inline(always)]
    pub(super) unsafe fn invoke_slots(
        &self,
        kinds: u64,
        slots: &crate::backend::Slots,
    ) -> Option<u64> {
        let inner = &*self.inner;
        let target = inner.target as *const c_void;
        if kinds == inner.slots_int {
            // SAFETY: `slots_int` is not a word of any `Arguments` unless `slots_path` is
            // `Int` (`arguments::slots_words`), and then `kinds` says the slots hold exactly
            // the descriptor's argument kinds; the rest is the caller's contract.
            Some(unsafe { inner.exec.call_slots_int(kinds, slots, target) })
        } else if kinds == inner.slots_float {
            // SAFETY: as above, for the float path.
            Some(unsafe { inner.exec.call_slots_float(kinds, slots, target) })
        } else {
            None
        }
    }

    /// Whether `kinds` is one of this handle's slots words (the internals hook of
    /// `linker::arguments`).
    #[cfg(feature = "internals")]
    pub(super) fn slots_kinds_match(&self, kinds: u64) -> bool {
        kinds == self.inner.slots_int || kinds == self.inner.slots_float
    }

    /// The `Value` of the register bits [`DowncallHandle::invoke_slots`] returned (neither
    /// slots path serves a bool return: no normalisation needed).
    #[inline(always)]
    pub(super) fn slots_value(&self, bits: u64) -> Value<'static> {
        self.value_of_bits(bits)
    }

    /// `invoke` past the fast path: errors, capture, the trampoline, and values the stub does
    /// not accept. Out of line and `#[cold]`, so that `invoke` inlines into its caller as the
    /// stub call only, laid out as the fall-through.
    #[cold]
    #[inline(never)]
    unsafe fn invoke_slow(&self, args: &[Value<'_>]) -> Result<Value<'static>> {
        if let RetKind::Group { .. } = self.inner.ret {
            // A wrong argument count is the first mistake to report, as on every other path.
            self.check_count(args.len())?;
            return Err(struct_return_error());
        }
        // SAFETY: forwarded; no destination is needed for scalar and void returns.
        unsafe { self.invoke_values(std::ptr::null_mut(), args) }
    }

    /// As [`DowncallHandle::invoke`], but a struct/union return is written into a segment
    /// allocated from `allocator` (size and alignment of the return layout; contents not
    /// zeroed before the call) and returned as `Value::Segment` (Java's leading
    /// `SegmentAllocator`). Scalar returns do not touch the allocator.
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke`], plus the allocator's errors, [`Error::OutOfBounds`] if
    /// the allocator returns a segment shorter than the return layout, and
    /// [`Error::MisalignedAccess`] if the segment's address is not a multiple of the return
    /// layout's alignment (`SegmentAllocator` is a safe trait and may hand out either); all
    /// before the call.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`].
    #[inline(always)]
    pub unsafe fn invoke_into<'a, A: SegmentAllocator + ?Sized>(
        &self,
        allocator: &'a A,
        args: &[Value<'_>],
    ) -> Result<Value<'a>> {
        let inner = &*self.inner;
        // A register-returned struct with an image entry: tested first, so that this common
        // case does not also test the return kind.
        if let Some(image) = self.inner.exec.image() {
            let (size, align) = image.size_align();
            let seg = allocator.allocate_uninit(size, align)?;
            check_return(&seg, size, align)?;
            // SAFETY: `seg` has at least the return layout's size; the rest is forwarded.
            unsafe { self.invoke_image(image, seg.as_ptr(), args)? };
            return Ok(Value::Segment(seg));
        }
        // Then a struct the stub writes through the return destination (a MEMORY-class return
        // through the hidden pointer): one compare decides, as in `invoke`.
        if args.len() == inner.struct_arity {
            let Some(entry) = inner.struct_entry else {
                // SAFETY: `struct_arity` is not `usize::MAX` only with a struct entry
                // (`Inner::new`).
                unsafe { std::hint::unreachable_unchecked() }
            };
            let seg = allocator.allocate_uninit(inner.ret_size, inner.ret_align_mask + 1)?;
            // `SegmentAllocator` is a safe trait: a segment shorter than asked for, or
            // misaligned (the callee may store through the hidden pointer with aligned vector
            // stores), is an error here, never a write past its end or a fault.
            if seg.byte_size() < inner.ret_size || seg.address() & inner.ret_align_mask != 0 {
                return Err(inner.bad_struct_segment(seg.address(), seg.byte_size()));
            }
            // SAFETY: one `Value` per descriptor argument, checked by the stub first; `seg`
            // holds the return layout's size at its alignment (checked above); the callee's
            // contract is the caller's.
            let done = unsafe { entry.call(args, seg.as_ptr(), inner.target as *const c_void) };
            if !done {
                // SAFETY: as above; the checked path reports the argument the stub rejected.
                unsafe { self.invoke_values_outlined(seg.as_ptr(), args)? };
            }
            return Ok(Value::Segment(seg));
        }
        // Everything else (a struct return of a capture handle, the trampoline, a wrong
        // argument count, a scalar result): laid out after the two stub paths.
        cold_path();
        match inner.ret {
            RetKind::Group { size, align } => {
                let seg = allocator.allocate_uninit(size, align)?;
                check_return(&seg, size, align)?;
                // SAFETY: `seg` has at least the return layout's size and its alignment; the
                // rest is forwarded.
                unsafe { self.invoke_values_outlined(seg.as_ptr(), args)? };
                Ok(Value::Segment(seg))
            }
            // SAFETY: forwarded.
            _ => unsafe { self.invoke(args) },
        }
    }

    /// A struct-returning call through the handle's image entry, storing the struct into
    /// `ret` (the return layout's size), else the checked path.
    #[inline(always)]
    unsafe fn invoke_image(
        &self,
        image: ImageEntry,
        ret: *mut u8,
        args: &[Value<'_>],
    ) -> Result<()> {
        let inner = &*self.inner;
        if args.len() == inner.args.len() {
            // SAFETY: one `Value` per descriptor argument, checked by the stub first; the
            // callee's contract is the caller's.
            let regs = unsafe { image.call(args.as_ptr().cast(), inner.target as *const c_void) };
            if let Some(regs) = regs {
                // SAFETY: `ret` holds the return layout's size (caller).
                unsafe { image.store(ret, regs) };
                return Ok(());
            }
        }
        // SAFETY: forwarded.
        unsafe { self.invoke_values_outlined(ret, args).map(|_| ()) }
    }

    /// `invoke_values` out of line (the slow paths of the inlined entry points). `#[cold]`,
    /// so that the compiler lays the stub path of its callers out as the fall-through.
    #[cold]
    #[inline(never)]
    unsafe fn invoke_values_outlined(
        &self,
        ret: *mut u8,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        // SAFETY: forwarded.
        unsafe { self.invoke_values(ret, args) }
    }

    /// The `Value` path. `ret` is the struct-return destination (return layout's size), or null
    /// for scalar/void returns.
    #[inline(always)]
    unsafe fn invoke_values(&self, ret: *mut u8, args: &[Value<'_>]) -> Result<Value<'static>> {
        self.check_count(args.len())?;
        let (capture, args) = if self.inner.capture {
            (capture_ptr(&args[0])?, &args[1..])
        } else {
            (std::ptr::null_mut(), args)
        };
        // SAFETY: forwarded; the count was checked and `capture` validated.
        unsafe { self.invoke_split(ret, capture, args) }
    }

    /// [`DowncallHandle::invoke`] for a capture handle with the capture buffer passed on its
    /// own, one the caller vouches for (the system-call adapter's), and `args` holding only the
    /// descriptor's arguments: only the capture option and the argument count are checked.
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] (counting the capture segment, as [`DowncallHandle::invoke`]
    /// does); [`Error::ValueMismatch`] if the handle does not capture call state, and as
    /// [`DowncallHandle::invoke`] for the arguments; all before the call.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]; `capture` is valid for reads and writes of
    /// `capture_state_layout()`'s size and 4-byte aligned; the return is not a struct.
    #[inline(always)]
    pub(crate) unsafe fn invoke_capture_ptr(
        &self,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        self.check_captured(args.len())?;
        // SAFETY: forwarded; the count was checked; no destination is needed for scalar and
        // void returns.
        unsafe { self.invoke_split(std::ptr::null_mut(), capture, args) }
    }

    /// The system-call adapter's fast path: the compiled stub's value entry called with the
    /// adapter's capture buffer, returning the raw 64-bit return register (rax) — no `Value` is
    /// built for the return. `None` when the stub path does not apply (no stub, not a capture
    /// handle, a struct return, a wrong argument count, or an argument the stub rejects); the
    /// stub then called nothing and the caller takes the checked path
    /// ([`DowncallHandle::invoke_capture_ptr`]), which accepts the values or reports the exact
    /// error.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_capture_ptr`].
    #[inline(always)]
    pub(crate) unsafe fn invoke_capture_bits(
        &self,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Option<u64> {
        let inner = &*self.inner;
        // `args` are the descriptor's arguments (the capture segment is `capture`).
        if args.len() != inner.args.len() {
            return None;
        }
        // SAFETY: one `Value` per descriptor argument; `capture` is a valid capture buffer and
        // no return destination is needed (the caller's contract); the callee's contract is
        // the caller's.
        unsafe {
            inner
                .exec
                .call_capture(args.as_ptr().cast(), capture, inner.target as *const c_void)
        }
    }

    /// The system-call adapter's fastest path: errno set to 0, the non-capturing stub of this
    /// capture handle's signature called with `args` (the descriptor's arguments), and the raw
    /// return register returned with this thread's errno address. The caller reads errno there
    /// right after this returns, before anything that could change it — the same value the
    /// capture stub would have saved into a capture buffer "right after the call". `None` (with
    /// errno possibly already zeroed, nothing called) when this path does not apply: no stub,
    /// not a capture handle, a struct return, a wrong argument count, or an argument the stub
    /// rejects; the caller then takes the checked capture path.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`].
    #[inline(always)]
    pub(crate) unsafe fn invoke_errno_bits(&self, args: &[Value<'_>]) -> Option<(u64, *mut i32)> {
        let inner = &*self.inner;
        let stub = inner.exec.uncaptured()?;
        if args.len() != inner.args.len() {
            return None;
        }
        let errno = crate::backend::thread_errno();
        if errno.is_null() {
            return None;
        }
        // SAFETY: `errno` is this thread's errno address (`__errno_location()`).
        unsafe { errno.write(0) };
        // SAFETY: one `Value` per descriptor argument,
        // checked by the stub first; the callee's contract is the caller's.
        let bits = unsafe { stub.call(args.as_ptr().cast(), inner.target as *const c_void) };
        bits.map(|bits| (bits, errno))
    }

    /// The raw counterpart of [`DowncallHandle::invoke_capture_ptr`] (the system-call
    /// adapter's raw path): as [`DowncallHandle::invoke_raw`] with the capture buffer passed on
    /// its own (`capture`: `capture_state_layout()`'s size, 4-byte aligned, its fields written to
    /// the thread's states before and read back after the call) and
    /// `args` holding only the descriptor's arguments.
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] as [`DowncallHandle::invoke_capture_ptr`];
    /// [`Error::ValueMismatch`] if the handle does not capture call state (before the call).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`]; `capture` must be valid for reads and writes of
    /// `capture_state_layout()`'s size and 4-byte aligned.
    pub(crate) unsafe fn invoke_raw_captured(
        &self,
        capture: *mut u8,
        args: &[*const u8],
        ret: *mut u8,
    ) -> Result<()> {
        self.check_captured(args.len())?;
        // SAFETY: forwarded to the caller.
        unsafe { self.invoke_raw_split(capture.cast(), args, ret) }
    }

    /// The checks of the `*_captured` paths: a capture handle, and exactly the descriptor's
    /// arguments.
    #[inline(always)]
    fn check_captured(&self, found: usize) -> Result<()> {
        if self.inner.capture && found + 1 == self.arity() {
            Ok(())
        } else {
            Err(self.captured_mismatch(found))
        }
    }

    #[cold]
    #[inline(never)]
    fn captured_mismatch(&self, found: usize) -> Error {
        if !self.inner.capture {
            return Error::ValueMismatch {
                position: "the capture segment".into(),
                expected: "no capture segment (the handle was linked without CaptureCallState)"
                    .into(),
                found: "a capture segment".into(),
            };
        }
        Error::ArgumentCount {
            function: self.function_label(),
            descriptor: self.inner.descriptor.to_string(),
            capture: true,
            expected: self.arity(),
            found: found + 1,
        }
    }

    /// The `Value` path after the count check. `capture` is the checked capture buffer (or
    /// null without capture) and `args` the descriptor's arguments (exactly their count).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]; `capture` is null or valid for `capture_state_layout()`'s size, 4-aligned; `ret`
    /// as in `invoke_values`.
    #[inline(always)]
    unsafe fn invoke_split(
        &self,
        ret: *mut u8,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        let inner = &*self.inner;
        // SAFETY: one `Value` per descriptor argument (count checked by the callers); the
        // stub checks every tag and struct segment length before anything else; `ret` and
        // `capture` as this function's contract says; the callee's contract is the caller's.
        let bits = unsafe {
            inner.exec.call_values(
                args.as_ptr().cast(),
                ret,
                capture,
                inner.target as *const c_void,
            )
        };
        if let Some(bits) = bits {
            return Ok(self.returned_value(bits));
        }
        // SAFETY: forwarded.
        unsafe { self.invoke_split_trampoline(ret, capture, args) }
    }

    /// The `Value` of a scalar or void return from the stub's raw register bits.
    #[inline(always)]
    fn returned_value(&self, raw: u64) -> Value<'static> {
        let bits = if self.inner.ret_tag.1 {
            (raw as u8 != 0) as u64
        } else {
            raw
        };
        self.value_of_bits(bits)
    }

    /// The `Value` of a scalar or void return from register bits that are already a valid
    /// payload of the return kind's variant (a bool return normalised to 0/1 by the caller).
    #[inline(always)]
    fn value_of_bits(&self, bits: u64) -> Value<'static> {
        // SAFETY: `ret_tag.0` is the tag of `Void` or of the return kind's variant, and `bits`
        // a valid payload of it (the caller).
        unsafe { crate::backend::value_of_words(self.inner.ret_tag.0, bits) }
    }

    /// The trampoline (`CallFrame`) value path, with full per-argument checks: handles without
    /// a stub, and values the stub does not accept. Out of line: invocations through a stub
    /// inline only the stub call into their caller.
    #[inline(never)]
    unsafe fn invoke_split_trampoline(
        &self,
        ret: *mut u8,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        let inner = &*self.inner;
        let pos = inner.capture as usize;
        let arg = |i: usize| -> Result<ArgSource> {
            let (v, kind) = (args[i], inner.args[i]);
            Ok(match (kind, v) {
                (ArgKind::Scalar(k), v) => match v.scalar_bits(k) {
                    Some(bits) => ArgSource::Bits(bits),
                    None => return Err(mismatch(i + pos, k, &v)),
                },
                (ArgKind::Group { size, .. }, Value::Segment(s)) if s.byte_size() >= size => {
                    ArgSource::Bytes(s.as_ptr() as *const u8)
                }
                (ArgKind::Group { size, .. }, v) => {
                    return Err(mismatch(
                        i + pos,
                        format_args!(
                            "a segment of at least {size} bytes for {}",
                            inner.descriptor.argument_layouts()[i]
                        ),
                        &v,
                    ))
                }
            })
        };
        // SAFETY: every `Bytes` source is a segment of at least the struct's size; `ret` and
        // `capture` as this function's contract says; the callee's contract is the caller's.
        let bits = unsafe {
            inner.exec.interpret(
                &inner.plan,
                inner.target as *const c_void,
                capture,
                ret,
                arg,
            )
        }?;
        Ok(match inner.ret {
            RetKind::Scalar(k) => Value::from_scalar_bits(k, bits),
            _ => Value::Void,
        })
    }

    /// The raw path, for interpreters that hold arguments in memory (like libffi's
    /// `ffi_call`): `args[i]` points to argument i's bytes in its layout's representation
    /// (a scalar's `size` bytes, a pointer's 8 bytes, a struct's bytes); with capture,
    /// `args[0]` points to the capture buffer itself (`capture_state_layout()`: 4 bytes, 12 on
    /// Windows; 4-byte aligned; its fields written to the thread's states before the call and
    /// read back after it).
    ///
    /// Return contract: exactly the return layout's size in bytes is written at `ret` — a
    /// scalar's `size` bytes (small integers truncated to their width; a `bool` as 0 or 1), or
    /// the struct's bytes. Nothing is written for `void` (`ret` may then be null).
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] (before the call); [`Error::OutOfMemory`] when the caller copies
    /// of by-reference arguments (AArch64 composites over 16 bytes, AAPCS64 §6.8.2 B.3) fit
    /// neither this thread's linker stack nor the heap (nothing is called then).
    ///
    /// # Safety
    /// Each `args[i]` must be readable for its layout's size, `ret` writable for the return
    /// layout's size and aligned to the return layout's alignment (a callee returning a
    /// MEMORY-class struct may store through the hidden pointer with aligned vector stores,
    /// e.g. `movaps`), and the call must satisfy the callee's contract.
    pub unsafe fn invoke_raw(&self, args: &[*const u8], ret: *mut u8) -> Result<()> {
        self.check_count(args.len())?;
        let (capture, args) = if self.inner.capture {
            (args[0] as *mut i32, &args[1..])
        } else {
            (std::ptr::null_mut(), args)
        };
        // SAFETY: forwarded to the caller; the count was checked.
        unsafe { self.invoke_raw_split(capture, args, ret) }
    }

    /// The raw path after the count check (`args`: the descriptor's arguments only).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`]; `capture` is null (no capture) or a capture buffer.
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke_raw`] after its count check: the executor's own failure to
    /// make by-reference copies (then nothing was called and nothing written).
    #[inline(always)]
    unsafe fn invoke_raw_split(
        &self,
        capture: *mut i32,
        args: &[*const u8],
        ret: *mut u8,
    ) -> Result<()> {
        let inner = &*self.inner;
        let target = inner.target as *const c_void;
        // SAFETY: one pointer per descriptor argument (count checked by the callers), each
        // readable for its layout's size; `ret` writable for the return layout's size;
        // `capture` null or a valid capture buffer: the caller's contract.
        let bits = match unsafe { inner.exec.call_raw(args.as_ptr(), ret, capture, target) } {
            Some(bits) => bits,
            None => {
                // SAFETY: as above (the sources are the caller's argument bytes). The sources
                // are never checked; the only failure is making by-reference copies, reported
                // before anything is called.
                unsafe {
                    inner
                        .exec
                        .interpret(&inner.plan, target, capture, ret, |i| {
                            Ok(ArgSource::Bytes(args[i]))
                        })
                }?
            }
        };
        if let RetKind::Scalar(k) = inner.ret {
            // SAFETY: as above.
            unsafe { write_scalar(k, bits, ret) };
        }
        Ok(())
    }
}

/// The capture buffer of a `Value` capture argument: a segment of at least
/// [`CAPTURE_STATE_SIZE`] bytes (`capture_state_layout()`'s 4, or 12 on Windows), 4-aligned (a
/// misaligned one is [`Error::MisalignedAccess`], as for return segments).
#[inline(always)]
fn capture_ptr(v: &Value<'_>) -> Result<*mut i32> {
    match *v {
        Value::Segment(s) if s.byte_size() >= CAPTURE_STATE_SIZE && s.address() % 4 == 0 => {
            Ok(s.as_ptr().cast::<i32>())
        }
        Value::Segment(s) if s.byte_size() >= CAPTURE_STATE_SIZE => Err(Error::MisalignedAccess {
            address: s.address(),
            alignment: 4,
        }),
        Value::Segment(s) => Err(capture_mismatch(format!(
            "a segment of {} bytes",
            s.byte_size()
        ))),
        ref v => Err(capture_mismatch(v.kind_name().into())),
    }
}

#[cold]
#[inline(never)]
fn capture_mismatch(found: String) -> Error {
    Error::ValueMismatch {
        position: "argument 1 (the capture segment)".into(),
        expected: format!(
            "a capture segment (capture_state_layout(): {CAPTURE_STATE_SIZE} bytes, 4-byte aligned)"
        ),
        found,
    }
}

#[cold]
#[inline(never)]
fn struct_return_error() -> Error {
    Error::ValueMismatch {
        position: "return".into(),
        expected: "a scalar or void return (use invoke_into for a struct return)".into(),
        found: "struct".into(),
    }
}

// A handle is shared between threads; keep that a compile-time fact.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<DowncallHandle>();
    send_sync::<Linker>();
};
