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
//!   likes); capture segments are at least 4 bytes and 4-byte aligned. The raw path moves these
//!   checks to its caller (`# Safety`).
//! - No invocation path allocates: the call frame, the stack-argument area and the register
//!   image all live on the Rust stack of the invoking thread.
//! - A handle's compiled stub (issue 9, `call::stub`) was compiled from the handle's own plan
//!   and argument kinds and is kept alive by the handle (`StubEntry` holds an `Arc`; the stub
//!   cache only a `Weak`, so the code is freed with the last handle). On the `Value` paths the
//!   stub performs the kind and segment-size checks itself before anything else and reports a
//!   mismatch by returning with r12 all ones without calling (`call::entry`); the handle then
//!   takes the checked trampoline path, so the same values are accepted or rejected with or
//!   without a stub. The capture segment and the return segment's alignment are validated in
//!   Rust before the stub is called.

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use crate::abi::{CallPlan, ReturnPlan};
use crate::call::entry::CheckedEntry;
use crate::call::stub::{ArgCheck, Stub, StubFn};
use crate::call::{store_low_bytes, CallFrame, StackArgs};
use crate::error::{Error, Result};
use crate::layout::{MemoryLayout, ScalarKind};
use crate::linker::image::ImageEntry;
use crate::linker::option::check_capture_names;
use crate::linker::{FunctionDescriptor, LinkerOption, Symbol};
use crate::memory::{MemorySegment, SegmentAllocator};
use crate::value::Value;

/// The native linker (Java's `Linker.nativeLinker()`): links symbols into [`DowncallHandle`]s
/// for the platform's C calling convention. Executing is supported on x86-64 System V (Linux);
/// elsewhere [`Linker::downcall`] returns [`Error::Unsupported`].
///
/// ```
/// use gatun::linker::SymbolLookup;
/// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout};
/// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
/// let abs = Linker::native()
///     .downcall(&abs, &FunctionDescriptor::of(ValueLayout::I32, [ValueLayout::I32]), &[])
///     .unwrap();
/// // SAFETY: int abs(int) has no preconditions.
/// assert_eq!(unsafe { abs.invoke(&[Value::I32(-3)]) }.unwrap(), Value::I32(3));
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
    /// machine code — typically 100-400 bytes (`Linker::stub_code`'s length), a few KiB for
    /// signatures with many stack arguments — in gatun's code arena ([`crate::code`]): 64 KiB
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
    /// - [`Error::Unsupported`] on a platform without an executor (anything but x86-64 Linux).
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
        let ret = match descriptor.return_layout() {
            None => RetKind::Void,
            Some(MemoryLayout::Value(v)) => RetKind::Scalar(v.kind()),
            Some(g) => RetKind::Group {
                size: g.byte_size(),
                align: g.byte_alignment(),
            },
        };
        let stub = compiled_stub(&plan, &args, capture);
        let ret_tag = match ret {
            RetKind::Scalar(k) => (
                u64::from(crate::call::stub::scalar_tag(k)),
                k == ScalarKind::Bool,
            ),
            _ => (u64::from(crate::call::stub::value_tag(&Value::Void)), false),
        };
        let ret_in_xmm = matches!(
            plan.ret,
            ReturnPlan::Scalar(crate::abi::Register::Vector(_))
        );
        // Bool returns (normalised to 0/1 on the way out) take `invoke_slow`, so the fast path
        // builds the `Value` from the register bits as they are.
        let fast_values = match (&stub, capture, ret) {
            (Some(_), false, RetKind::Scalar(ScalarKind::Bool)) => None,
            // A function of no arguments, not variadic, returning nothing or an integer
            // register: its stub would only jump to it, so the target *is* the checked entry
            // (it reads none of the stub parameters, never rejects, and preserves r12 as every
            // SysV function does; rax is the return register either way).
            (Some(_), false, RetKind::Void | RetKind::Scalar(_))
                if args.is_empty()
                    && !plan.is_variadic()
                    && matches!(
                        plan.ret,
                        ReturnPlan::Void | ReturnPlan::Scalar(crate::abi::Register::Int(_))
                    ) =>
            {
                // SAFETY: the symbol's address is non-null (checked above) and is a function
                // linked as taking no arguments; see the comment above for the protocol.
                Some(unsafe {
                    CheckedEntry::new(std::ptr::NonNull::new_unchecked(
                        symbol.address().cast_mut().cast(),
                    ))
                })
            }
            (Some(s), false, RetKind::Void | RetKind::Scalar(_)) if !ret_in_xmm => Some(s.values),
            _ => None,
        };
        // The same for a float result (read from xmm0).
        let fast_float = match (&stub, capture) {
            (Some(s), false) if ret_in_xmm => Some(s.values),
            _ => None,
        };
        let fast_struct = match (&stub, capture, ret) {
            (Some(s), false, RetKind::Group { .. }) => Some(s.values),
            _ => None,
        };
        let fast_image = match (&stub, capture, ret) {
            (Some(s), false, RetKind::Group { size, align }) => {
                ImageEntry::new(s.image, &plan.ret, size, align)
            }
            _ => None,
        };
        let fast_capture = match (&stub, capture, ret) {
            (Some(s), true, RetKind::Void | RetKind::Scalar(_)) => Some(s.values),
            _ => None,
        };
        // The same signature's stub without capture (shared through the stub cache), for the
        // system-call adapter, which handles errno itself.
        // (Integer or void results only: its caller reads rax, and the system-call adapter
        // takes only `int` and `long` results.)
        let errno_stub = match (&stub, capture, ret) {
            (Some(_), true, RetKind::Void | RetKind::Scalar(_)) if !ret_in_xmm => {
                compiled_stub(&plan, &args, false)
            }
            _ => None,
        };
        Ok(DowncallHandle {
            inner: Arc::new(Inner {
                fast_arity: if fast_values.is_some() {
                    args.len()
                } else {
                    usize::MAX
                },
                fast_values,
                fast_float_arity: if fast_float.is_some() {
                    args.len()
                } else {
                    usize::MAX
                },
                fast_float,
                ret_in_xmm,
                fast_struct,
                fast_image,
                fast_capture,
                errno_stub,
                stub,
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
            }),
        })
    }
}

impl Linker {
    /// The machine code of the compiled stub `downcall` would use for this signature (both
    /// entries; x86-64 SysV), generated without the stub cache and without mapping it: for
    /// disassembly tools and compile-time measurements. The code does not depend on the target
    /// address (it is a stub parameter).
    ///
    /// # Errors
    /// As [`Linker::downcall`] for the descriptor and options (every option check included;
    /// there is no symbol to check).
    pub fn stub_code(
        &self,
        descriptor: &FunctionDescriptor,
        options: &[LinkerOption],
    ) -> Result<Vec<u8>> {
        let (plan, checks, capture) = stub_inputs(descriptor, options)?;
        Ok(crate::call::stub::compile(&plan, &checks, capture).bytes)
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
        let (plan, checks, capture) = stub_inputs(descriptor, options)?;
        let stub = crate::call::stub::build(&plan, &checks, capture)?;
        Ok(stub.bytes().len())
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
    if !cfg!(all(target_arch = "x86_64", target_os = "linux", not(miri))) {
        return Err(Error::Unsupported {
            type_name: "downcall".into(),
            reason: "gatun's downcall executor supports x86-64 System V (Linux) only".into(),
        });
    }
    let plan = crate::abi::sysv_x64::plan(descriptor, first_variadic)?;
    if plan.args.iter().any(|a| a.by_reference.is_some()) {
        return Err(Error::Unsupported {
            type_name: "by-reference struct argument".into(),
            reason: "the SysV trampoline passes structs by value only".into(),
        });
    }
    Ok(Linked {
        plan,
        capture,
        captured,
        critical,
    })
}

/// Plans a signature for the stub compiler (the link-time checks of `downcall`, without a
/// symbol).
fn stub_inputs(
    descriptor: &FunctionDescriptor,
    options: &[LinkerOption],
) -> Result<(CallPlan, Vec<ArgCheck>, bool)> {
    let Linked { plan, capture, .. } = link_inputs(descriptor, options)?;
    let checks = descriptor
        .argument_layouts()
        .iter()
        .map(|l| arg_check(ArgKind::of(l)))
        .collect();
    Ok((plan, checks, capture))
}

fn arg_check(a: ArgKind) -> ArgCheck {
    match a {
        ArgKind::Scalar(k) => ArgCheck::Scalar(k),
        ArgKind::Group(n) => ArgCheck::Group(u32::try_from(n).unwrap_or(u32::MAX)),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgKind {
    Scalar(ScalarKind),
    Group(usize),
}

impl ArgKind {
    fn of(l: &MemoryLayout) -> ArgKind {
        match l {
            MemoryLayout::Value(v) => ArgKind::Scalar(v.kind()),
            g => ArgKind::Group(g.byte_size()),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum RetKind {
    Void,
    Scalar(ScalarKind),
    Group { size: usize, align: usize },
}

/// A handle's compiled stub (issue 9): its entries, and the stub kept alive.
#[derive(Clone)]
struct StubEntry {
    raw: StubFn,
    values: CheckedEntry,
    image: Option<CheckedEntry>,
    _keep: Arc<Stub>,
}

/// Compiles (or finds in the cache) the stub of a plan; `None` → the trampoline is used.
#[cfg(all(target_arch = "x86_64", target_os = "linux", not(miri)))]
fn compiled_stub(plan: &CallPlan, args: &[ArgKind], capture: bool) -> Option<StubEntry> {
    let checks: Vec<ArgCheck> = args.iter().map(|a| arg_check(*a)).collect();
    let stub = crate::call::stub::stub_for(plan, &checks, capture)?;
    Some(StubEntry {
        raw: stub.raw,
        values: stub.values,
        image: stub.image,
        _keep: stub,
    })
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux", not(miri))))]
fn compiled_stub(_plan: &CallPlan, _args: &[ArgKind], _capture: bool) -> Option<StubEntry> {
    None
}

#[derive(Clone)]
struct Inner {
    stub: Option<StubEntry>,
    /// The stub's value entry when `invoke` may call it directly: a stub, no capture, a
    /// non-bool scalar or void return.
    fast_values: Option<CheckedEntry>,
    /// The argument count when `fast_values` is set, else `usize::MAX`. Invariant: anything
    /// but `usize::MAX` implies `fast_values.is_some()` (both are set together, and cleared
    /// together by `interpreted`).
    fast_arity: usize,
    /// As `fast_values`, for a float result (`F32`/`F64` in xmm0), called through
    /// `CheckedEntry::call_plain_float`.
    fast_float: Option<CheckedEntry>,
    /// As `fast_arity`, for `fast_float` (same invariant).
    fast_float_arity: usize,
    /// Whether the result is a float in xmm0 (then a value entry may leave rax undefined).
    ret_in_xmm: bool,
    /// The stub's value entry for struct-returning calls without capture.
    fast_struct: Option<CheckedEntry>,
    /// The stub's image entry for struct-returning calls without capture whose struct comes
    /// back in registers and whose arguments allow a tail jump (preferred to `fast_struct`).
    fast_image: Option<ImageEntry>,
    /// The stub's value entry when the system-call adapter may call it directly: a stub,
    /// capture, a scalar or void return.
    fast_capture: Option<CheckedEntry>,
    /// For a capture handle with a stub and a scalar or void return: the stub of the same
    /// signature without capture (the system-call adapter's path, which zeroes and reads the
    /// thread's errno itself).
    errno_stub: Option<StubEntry>,
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

/// A linked native function (Java's downcall `MethodHandle`).
///
/// `Send + Sync`, cheap to clone (an `Arc`), reusable from any number of threads at once; keeps
/// its [`Symbol`]'s library loaded. Invoking is `unsafe` (the callee is foreign code), but
/// argument count and kinds are checked: a mismatch is an error, never undefined behaviour.
/// No invocation path allocates on the heap.
///
/// With [`LinkerOption::CaptureCallState`] the first argument is the capture segment
/// (`Value::Segment` of at least [`crate::linker::capture_state_layout`]'s 4 bytes, 4-byte
/// aligned), as in Java.
///
/// ```
/// use gatun::linker::SymbolLookup;
/// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
/// // long labs(long): linked once, called from any thread, never allocating.
/// let labs = SymbolLookup::default_lookup().find("labs").unwrap();
/// let h = Linker::native().downcall(&labs, &FunctionDescriptor::of(V::I64, [V::I64]), &[]).unwrap();
/// assert_eq!((h.arity(), h.captures_call_state()), (1, false));
/// let h2 = h.clone();
/// // SAFETY: labs has no preconditions.
/// let t = std::thread::spawn(move || unsafe { h2.invoke(&[Value::I64(-7)]) }.unwrap().as_i64());
/// assert_eq!(t.join().unwrap(), Some(7));
/// // SAFETY: labs has no preconditions; a wrong kind is an error before any call.
/// assert!(unsafe { h.invoke(&[Value::I32(-7)]) }.is_err());
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
            if self.inner.stub.is_some() {
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

/// The value of a scalar return: truncated to the declared width, extended by signedness.
#[inline(always)]
pub(crate) fn scalar_value(kind: ScalarKind, bits: u64) -> Value<'static> {
    match kind {
        ScalarKind::Bool => Value::Bool(bits as u8 != 0),
        ScalarKind::I8 => Value::I8(bits as i8),
        ScalarKind::U8 => Value::U8(bits as u8),
        ScalarKind::I16 => Value::I16(bits as i16),
        ScalarKind::U16 => Value::U16(bits as u16),
        ScalarKind::I32 => Value::I32(bits as i32),
        ScalarKind::U32 => Value::U32(bits as u32),
        ScalarKind::I64 => Value::I64(bits as i64),
        ScalarKind::U64 => Value::U64(bits),
        ScalarKind::F32 => Value::F32(f32::from_bits(bits as u32)),
        ScalarKind::F64 => Value::F64(f64::from_bits(bits)),
        ScalarKind::Pointer => Value::Address(bits as usize as *mut c_void),
    }
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

    /// Whether invocations run a compiled stub (issue 9; decided at link time). `false` when
    /// the platform or the OS (no executable mappings) does not allow one; the handle then
    /// uses the `global_asm!` trampoline, with identical results.
    pub fn uses_compiled_stub(&self) -> bool {
        self.inner.stub.is_some()
    }

    /// A handle for the same function that always uses the trampoline executor (the portable
    /// path), never a compiled stub: for differential tests and benchmarks. Allocates one new
    /// handle (an `Arc`).
    pub fn interpreted(&self) -> DowncallHandle {
        let mut inner = (*self.inner).clone();
        inner.stub = None;
        inner.fast_values = None;
        inner.fast_arity = usize::MAX;
        inner.fast_float = None;
        inner.fast_float_arity = usize::MAX;
        inner.fast_struct = None;
        inner.fast_image = None;
        inner.fast_capture = None;
        inner.errno_stub = None;
        DowncallHandle {
            inner: Arc::new(inner),
        }
    }

    /// The compiled stub's raw entry, if any (for typed handles).
    pub(super) fn raw_stub(&self) -> Option<StubFn> {
        self.inner.stub.as_ref().map(|s| s.raw)
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
    fn count_error(&self, found: usize) -> Error {
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
    /// segment smaller than its struct layout or a capture segment smaller than 4 bytes, and
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
        // One compare decides the fast path: `fast_arity` is the argument count when
        // `fast_values` is set, else `usize::MAX` (no slice is that long).
        if args.len() == inner.fast_arity {
            // SAFETY: `fast_arity != usize::MAX` implies `fast_values` is set (see `Inner`).
            let values = unsafe { inner.fast_values.unwrap_unchecked() };
            // SAFETY: one `Value` per descriptor argument; the stub checks every tag and
            // segment length before anything else; no capture and no return destination (a
            // scalar or void return); the callee's contract is the caller's.
            let bits =
                unsafe { values.call_plain(args.as_ptr().cast(), inner.target as *const c_void) };
            if let Some(bits) = bits {
                // `fast_values` is never set for a bool return: no normalisation needed.
                return Ok(self.value_of_bits(bits));
            }
        } else if args.len() == inner.fast_float_arity {
            // SAFETY: as above, for `fast_float`.
            let values = unsafe { inner.fast_float.unwrap_unchecked() };
            // SAFETY: as above; the result is a float, in xmm0.
            let bits = unsafe {
                values.call_plain_float(args.as_ptr().cast(), inner.target as *const c_void)
            };
            if let Some(bits) = bits {
                return Ok(self.value_of_bits(bits));
            }
        }
        // SAFETY: forwarded.
        unsafe { self.invoke_slow(args) }
    }

    /// `invoke` past the fast path: errors, capture, the trampoline, and values the stub does
    /// not accept. Out of line and `#[cold]`, so that `invoke` inlines into its caller as the
    /// stub call only, laid out as the fall-through.
    #[cold]
    #[inline(never)]
    unsafe fn invoke_slow(&self, args: &[Value<'_>]) -> Result<Value<'static>> {
        if let RetKind::Group { .. } = self.inner.ret {
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
        // A register-returned struct with an image entry: tested first, so that this common
        // case does not also test the return kind.
        if let Some(image) = self.inner.fast_image {
            let (size, align) = image.size_align();
            let seg = allocator.allocate_uninit(size, align)?;
            check_return(&seg, size, align)?;
            // SAFETY: `seg` has at least the return layout's size; the rest is forwarded.
            unsafe { self.invoke_image(image, seg.as_ptr(), args)? };
            return Ok(Value::Segment(seg));
        }
        // Only a layout hint (the image path as the fall-through); scalar results through
        // `invoke_into` pay one taken branch.
        cold_path();
        match self.inner.ret {
            RetKind::Group { size, align } => {
                let seg = allocator.allocate_uninit(size, align)?;
                // `SegmentAllocator` is a safe trait: a segment shorter than asked for, or
                // misaligned (the callee may store through the hidden pointer with aligned
                // vector stores), is an error here, never a write past its end or a fault.
                check_return(&seg, size, align)?;
                // SAFETY: `seg` has at least the return layout's size and its alignment; the
                // rest is forwarded.
                unsafe { self.invoke_struct(seg.as_ptr(), args)? };
                Ok(Value::Segment(seg))
            }
            // SAFETY: forwarded.
            _ => unsafe { self.invoke(args) },
        }
    }

    /// A struct-returning call into `ret` (the return layout's size): the stub directly when
    /// the handle has one and does not capture, else the checked path.
    #[inline(always)]
    unsafe fn invoke_struct(&self, ret: *mut u8, args: &[Value<'_>]) -> Result<()> {
        let Some(image) = self.inner.fast_image else {
            cold_path();
            // SAFETY: forwarded.
            return unsafe { self.invoke_struct_values(ret, args) };
        };
        // SAFETY: forwarded.
        unsafe { self.invoke_image(image, ret, args) }
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

    /// `invoke_struct` without an image entry: the stub's value entry writes the struct
    /// through `ret` (in-memory returns, stack arguments), else the checked path.
    #[inline(always)]
    unsafe fn invoke_struct_values(&self, ret: *mut u8, args: &[Value<'_>]) -> Result<()> {
        let inner = &*self.inner;
        if let Some(values) = inner.fast_struct {
            if args.len() == inner.args.len() {
                // SAFETY: one `Value` per descriptor argument, checked by the stub first; `ret`
                // holds the return layout's size (caller); no capture; the callee's contract
                // is the caller's.
                let done = unsafe {
                    values.call(
                        args.as_ptr().cast(),
                        ret,
                        std::ptr::null_mut(),
                        inner.target as *const c_void,
                        std::ptr::null_mut(),
                    )
                };
                if done.is_some() {
                    return Ok(());
                }
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

    /// As [`DowncallHandle::invoke_into`], writing a struct/union return into the caller's
    /// segment `dest` (at least the return layout's size, at an address that is a multiple of
    /// its alignment — the C callee may store a MEMORY-class struct through the hidden pointer
    /// with aligned vector stores). For scalar and void returns `dest` is unused and the value
    /// is returned. The same call as `invoke_into(&PrefixAllocator::new(dest), args)` without
    /// the allocator's bookkeeping, and returning `Value::Void` instead of the segment.
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke`]; [`Error::OutOfBounds`] if `dest` is too small,
    /// [`Error::MisalignedAccess`] if it is misaligned for the return layout (before the
    /// call).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`].
    #[inline(always)]
    pub unsafe fn invoke_to_segment(
        &self,
        dest: MemorySegment<'_>,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        match self.inner.ret {
            RetKind::Group { size, align } => {
                check_return(&dest, size, align)?;
                // SAFETY: `dest` has enough bytes and the alignment; the rest is forwarded.
                unsafe { self.invoke_struct(dest.as_ptr(), args)? };
                Ok(Value::Void)
            }
            // SAFETY: forwarded.
            _ => unsafe { self.invoke(args) },
        }
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

    /// As [`DowncallHandle::invoke`] for a handle linked with
    /// [`LinkerOption::CaptureCallState`], with the capture segment passed on its own and `args`
    /// holding only the descriptor's arguments — so a caller that owns the capture buffer (the
    /// system-call adapter, [`crate::capture::SystemCall`]) need not build a new argument slice
    /// with the segment prepended. Same checks, same cost, no allocation.
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] if `args.len()` is not the descriptor's argument count (the
    /// message counts the capture segment, as [`DowncallHandle::invoke`] does);
    /// [`Error::ValueMismatch`] if the handle does not capture call state, if `capture` is
    /// smaller than [`crate::linker::capture_state_layout`] (4 bytes), and as
    /// [`DowncallHandle::invoke`] for the arguments and a struct return;
    /// [`Error::MisalignedAccess`] if `capture` is not 4-byte aligned; all before the call.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`].
    pub unsafe fn invoke_captured(
        &self,
        capture: MemorySegment<'_>,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        if let RetKind::Group { .. } = self.inner.ret {
            return Err(Error::ValueMismatch {
                position: "return".into(),
                expected: "a scalar or void return (use invoke_into for a struct return)".into(),
                found: "struct".into(),
            });
        }
        let capture = capture_ptr(&Value::Segment(capture))?;
        // SAFETY: forwarded; `capture` was validated and the return is not a struct.
        unsafe { self.invoke_capture_ptr(capture, args) }
    }

    /// [`DowncallHandle::invoke_captured`] for a capture buffer the caller vouches for (the
    /// system-call adapter's): only the capture option and the argument count are checked.
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke_captured`], less the capture-segment checks.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]; `capture` is valid for reads and writes of 4 bytes and
    /// 4-byte aligned; the return is not a struct.
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
        // `fast_capture` is set only for capture handles with a stub and a scalar or void
        // return; `args` are the descriptor's arguments (the capture segment is `capture`).
        let values = inner.fast_capture?;
        if args.len() != inner.args.len() {
            return None;
        }
        // SAFETY: one `Value` per descriptor argument; the stub checks every tag and segment
        // length before anything else; `capture` is a valid capture buffer and no return
        // destination is needed (the caller's contract); the callee's contract is the caller's.
        let regs = unsafe {
            values.call(
                args.as_ptr().cast(),
                std::ptr::null_mut(),
                capture,
                inner.target as *const c_void,
                crate::call::stub::thread_errno(),
            )
        };
        // A capture stub always has the leaf frame, which copies a float result to rax.
        regs.map(|[rax, _]| rax)
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
        let stub = inner.errno_stub.as_ref()?;
        if args.len() != inner.args.len() {
            return None;
        }
        let errno = crate::call::stub::thread_errno();
        if errno.is_null() {
            return None;
        }
        // SAFETY: `errno` is this thread's errno address (`__errno_location()`).
        unsafe { errno.write(0) };
        // SAFETY: one `Value` per descriptor argument; the stub checks every tag and segment
        // length before anything else; it captures nothing and needs no return destination
        // (scalar or void return); the callee's contract is the caller's.
        let bits = unsafe {
            stub.values
                .call_plain(args.as_ptr().cast(), inner.target as *const c_void)
        };
        bits.map(|bits| (bits, errno))
    }

    /// The raw counterpart of [`DowncallHandle::invoke_captured`]: as
    /// [`DowncallHandle::invoke_raw`] with the capture buffer passed on its own (`capture`: 4
    /// bytes, 4-byte aligned, its `errno` field read before and written after the call) and
    /// `args` holding only the descriptor's arguments.
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] as [`DowncallHandle::invoke_captured`];
    /// [`Error::ValueMismatch`] if the handle does not capture call state (before the call).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`]; `capture` must be valid for reads and writes of 4
    /// bytes and 4-byte aligned.
    pub unsafe fn invoke_raw_captured(
        &self,
        capture: *mut u8,
        args: &[*const u8],
        ret: *mut u8,
    ) -> Result<()> {
        self.check_captured(args.len())?;
        // SAFETY: forwarded to the caller.
        unsafe { self.invoke_raw_split(capture.cast(), args, ret) };
        Ok(())
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
    /// As [`DowncallHandle::invoke`]; `capture` is null or valid for 4 bytes, 4-aligned; `ret`
    /// as in `invoke_values`.
    #[inline(always)]
    unsafe fn invoke_split(
        &self,
        ret: *mut u8,
        capture: *mut i32,
        args: &[Value<'_>],
    ) -> Result<Value<'static>> {
        let inner = &*self.inner;
        if let Some(stub) = &inner.stub {
            // SAFETY: one `Value` per descriptor argument (count checked by the callers); the
            // stub checks every tag and struct segment length before anything else; `ret` and
            // `capture` as this function's contract says; the callee's contract is the caller's.
            let regs = unsafe {
                stub.values.call(
                    args.as_ptr().cast(),
                    ret,
                    capture,
                    inner.target as *const c_void,
                    errno_location_for(capture),
                )
            };
            if let Some([rax, xmm0]) = regs {
                // A float result is in xmm0 (the value entry may tail-jump to the target).
                let bits = if inner.ret_in_xmm { xmm0 } else { rax };
                return Ok(self.returned_value(bits));
            }
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
        let inner = &*self.inner;
        // SAFETY: `Value` is `#[repr(C, u8)]` (24 bytes, `stub::VALUE_STRIDE`): word 0 holds the
        // tag byte (the rest of the word is padding), word 1 the payload (a scalar variant's
        // field is its low bytes, the rest padding), word 2 is padding for every scalar variant
        // and `Void`. `ret_tag` is the tag of `Void` or of the return kind's variant, and the
        // payload is a valid value of it (bools normalised to 0/1 by the caller; every other scalar
        // accepts any bits). Building the value from two whole words lets callers copy it
        // without store-forwarding stalls.
        // (On x86-64 tag and payload are written by one 16-byte store: a caller copying the
        // value with 16-byte loads then gets it store-forwarded instead of stalling.)
        #[cfg(target_arch = "x86_64")]
        unsafe {
            use std::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
            let mut v = std::mem::MaybeUninit::<Value<'static>>::uninit();
            let p = v.as_mut_ptr().cast::<u64>();
            _mm_storeu_si128(
                p.cast(),
                _mm_set_epi64x(bits as i64, inner.ret_tag.0 as i64),
            );
            // Word 2 is padding for every scalar variant and `Void`: left uninitialised.
            v.assume_init()
        }
        #[cfg(not(target_arch = "x86_64"))]
        unsafe {
            std::mem::transmute::<[u64; 3], Value<'static>>([inner.ret_tag.0, bits, 0])
        }
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
        let mut stack = StackArgs::new();
        let mut frame = CallFrame::new(inner.target as *const c_void, &inner.plan, &mut stack);
        frame.errno = capture;
        let pos = inner.capture as usize;
        for (i, ((v, kind), ap)) in args
            .iter()
            .zip(inner.args.iter())
            .zip(inner.plan.args.iter())
            .enumerate()
        {
            let tmp: u64;
            let src: *const u8 = match (*kind, *v) {
                (ArgKind::Scalar(ScalarKind::Pointer), Value::Address(p)) => {
                    tmp = p as usize as u64;
                    &tmp as *const u64 as *const u8
                }
                (ArgKind::Scalar(ScalarKind::Pointer), Value::Segment(s)) => {
                    tmp = s.address() as u64;
                    &tmp as *const u64 as *const u8
                }
                (ArgKind::Scalar(k), v) if v.scalar_kind() == Some(k) => {
                    tmp = match v {
                        Value::F32(x) => x.to_bits() as u64,
                        Value::F64(x) => x.to_bits(),
                        other => other.as_i64().unwrap_or(0) as u64,
                    };
                    &tmp as *const u64 as *const u8
                }
                (ArgKind::Group(size), Value::Segment(s)) if s.byte_size() >= size => {
                    s.as_ptr() as *const u8
                }
                (ArgKind::Scalar(k), v) => return Err(mismatch(i + pos, k, &v)),
                (ArgKind::Group(size), v) => {
                    return Err(mismatch(
                        i + pos,
                        format_args!(
                            "a segment of at least {size} bytes for {}",
                            inner.descriptor.argument_layouts()[i]
                        ),
                        &v,
                    ))
                }
            };
            // SAFETY: `src` points to `tmp` (8 bytes, little-endian, covering any scalar) or to
            // a segment of at least the struct's size.
            unsafe { frame.load_arg(&mut stack, ap, src) };
        }
        // SAFETY: every argument was checked; `ret` is valid per this function's contract.
        unsafe { self.finish(&mut frame, &mut stack, ret) };
        Ok(match inner.ret {
            RetKind::Scalar(k) => scalar_value(k, frame.returned(scalar_register(&inner.plan))),
            _ => Value::Void,
        })
    }

    /// Sets the hidden return pointer, calls, and assembles a register-returned struct.
    #[inline(always)]
    unsafe fn finish(&self, frame: &mut CallFrame, stack: &mut StackArgs, ret: *mut u8) {
        let plan = &self.inner.plan;
        if let Some(loc) = plan.hidden_return_pointer {
            frame.store(stack, loc, ret as usize as u64);
        }
        // SAFETY: the frame follows the handle's validated plan; the caller vouches for the
        // callee's contract.
        unsafe { frame.call() };
        if let ReturnPlan::Registers(moves) = &plan.ret {
            for m in moves {
                // SAFETY: `ret` has the return layout's size and every move lies inside it.
                unsafe {
                    store_low_bytes(
                        ret.add(m.offset as usize),
                        frame.returned(m.from),
                        m.size as usize,
                    )
                };
            }
        }
    }

    /// The raw path, for interpreters that hold arguments in memory (like libffi's
    /// `ffi_call`): `args[i]` points to argument i's bytes in its layout's representation
    /// (a scalar's `size` bytes, a pointer's 8 bytes, a struct's bytes); with capture,
    /// `args[0]` points to the capture buffer itself (4 bytes, 4-byte aligned, the `errno`
    /// field read before and written after the call).
    ///
    /// Return contract: exactly the return layout's size in bytes is written at `ret` — a
    /// scalar's `size` bytes (small integers truncated to their width; a `bool` as 0 or 1), or
    /// the struct's bytes. Nothing is written for `void` (`ret` may then be null).
    ///
    /// # Errors
    /// [`Error::ArgumentCount`] (before the call).
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
        unsafe { self.invoke_raw_split(capture, args, ret) };
        Ok(())
    }

    /// The raw path after the count check (`args`: the descriptor's arguments only).
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke_raw`]; `capture` is null (no capture) or a capture buffer.
    #[inline(always)]
    unsafe fn invoke_raw_split(&self, capture: *mut i32, args: &[*const u8], ret: *mut u8) {
        let inner = &*self.inner;
        if let Some(stub) = &inner.stub {
            // SAFETY: one pointer per descriptor argument (count checked by the callers), each
            // readable for its layout's size; `ret` writable for the return layout's size;
            // `capture` null or a valid capture buffer: the caller's contract.
            let bits = unsafe {
                (stub.raw)(
                    args.as_ptr().cast(),
                    ret,
                    capture,
                    inner.target as *const c_void,
                    std::ptr::null_mut(),
                    errno_location_for(capture),
                )
            };
            if let RetKind::Scalar(k) = inner.ret {
                // SAFETY: as above.
                unsafe { write_scalar(k, bits, ret) };
            }
            return;
        }
        let mut stack = StackArgs::new();
        let mut frame = CallFrame::new(inner.target as *const c_void, &inner.plan, &mut stack);
        frame.errno = capture;
        for (src, ap) in args.iter().zip(inner.plan.args.iter()) {
            // SAFETY: the caller guarantees each argument's bytes are readable.
            unsafe { frame.load_arg(&mut stack, ap, *src) };
        }
        // SAFETY: the caller guarantees `ret` is writable for the return layout's size.
        unsafe { self.finish(&mut frame, &mut stack, ret) };
        if let RetKind::Scalar(k) = inner.ret {
            // SAFETY: as above.
            unsafe { write_scalar(k, frame.returned(scalar_register(&inner.plan)), ret) };
        }
    }
}

/// The capture buffer of a `Value` capture argument: a segment of at least 4 bytes, 4-aligned
/// (a misaligned one is [`Error::MisalignedAccess`], as for return segments).
#[inline(always)]
fn capture_ptr(v: &Value<'_>) -> Result<*mut i32> {
    match *v {
        Value::Segment(s) if s.byte_size() >= 4 && s.address() % 4 == 0 => {
            Ok(s.as_ptr().cast::<i32>())
        }
        Value::Segment(s) if s.byte_size() >= 4 => Err(Error::MisalignedAccess {
            address: s.address(),
            alignment: 4,
        }),
        ref v => Err(Error::ValueMismatch {
            position: "argument 1 (the capture segment)".into(),
            expected: "a capture segment (capture_state_layout(): 4 bytes, 4-byte aligned)".into(),
            found: v.kind_name().into(),
        }),
    }
}

/// The `errno_location` stub argument: this thread's errno address when a capture buffer is
/// given, else null (stubs without capture never read it).
#[inline(always)]
pub(super) fn errno_location_for(capture: *mut i32) -> *mut i32 {
    if capture.is_null() {
        std::ptr::null_mut()
    } else {
        crate::call::stub::thread_errno()
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

#[inline(always)]
fn scalar_register(plan: &CallPlan) -> crate::abi::Register {
    match plan.ret {
        ReturnPlan::Scalar(r) => r,
        _ => crate::abi::Register::Int(0),
    }
}

// A handle is shared between threads; keep that a compile-time fact.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<DowncallHandle>();
    send_sync::<Linker>();
};
