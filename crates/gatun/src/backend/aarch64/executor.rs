//! The AArch64 (AAPCS64, Linux) executor of a downcall handle, chosen once at link time: a
//! compiled stub (`stub`) — with the integer fast path where its signature allows one — or
//! the trampoline (`CallFrame`) when the OS refuses executable memory (and for
//! [`Executor::interpreted`], the test hook).
//!
//! The handle layer (`linker::handle`) is ABI-neutral: it checks counts, capture buffers and
//! return segments, builds `Value`s, and calls the methods below. A stub method that returns
//! `None`/`false` called nothing; the handle then falls back to [`Executor::interpret`], which
//! performs the same checks in Rust and reports the exact error.
//!
//! # By-reference arguments (AAPCS64 §6.8.2 rule B.3)
//! A composite over 16 bytes that is not an HFA is copied by the caller and passed as the
//! copy's address ([`crate::abi::ArgPlan::by_reference`]). The copies of one call live in ONE
//! frame of [`crate::memory::linker_stack`], pushed per call with the size and alignment
//! computed at link time ([`CopyArea`]; no frame when the plan has none) and closed when the
//! call returns. Frames nest LIFO, so an upcall running on top of the call (and any downcall
//! it makes) pushes and pops its own frames above it; the BufferStack falls back to the heap
//! by itself when its block is full. The callee may write through the pointer: it writes the
//! copy, never the caller's segment.
//!
//! A compiled stub takes the copies' addresses in `x4` as an array of pointers, one per
//! by-reference argument in argument order. That array is the first 8 n bytes of the same
//! frame (n by-reference arguments), the copies follow at offsets computed at link time
//! ([`Refs`]), so a call makes one frame and no heap allocation. On the value path each
//! by-reference `Value` must be a `Value::Segment` of at least the struct's size before its
//! bytes are copied; otherwise nothing is called and the handle interprets (and reports it).
//!
//! # Invariants (the unsafe story of this module)
//! - An [`Executor`] was built by [`Executor::link`] from the handle's own plan, argument
//!   kinds, return kind and capture flag and never changes: its by-reference sizes follow
//!   `plan.args` in order; the fast path is one variant, so a handle cannot hold inconsistent
//!   fast paths; [`Executor::int_arity`] is derived from it.
//! - Every entry is kept alive by the `Arc<Stub>` in the same [`Compiled`] (the stub cache
//!   holds only a `Weak`).
//! - The values entry checks every argument's tag and segment length before anything else and
//!   reports a mismatch without calling (`ValuesEntry::call` gives `None`).
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy (and the
//!   stub's pointer array) is inside the frame pushed for the call, which outlives the call.

use std::ffi::c_void;
use std::sync::Arc;

use super::stub::{ArgCheck, RawFn, Stub, ValuesEntry};
use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::by_reference::{self, kinds_mismatch};
use crate::backend::{ArgKind, ArgSource, CopyArea, RetKind};
use crate::error::Result;
use crate::layout::ScalarKind;
use crate::memory::{linker_stack, SegmentAllocator};
use crate::value::Value;

/// What the interpreted path needs beyond the plan: the by-reference copies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Copies {
    /// The frame holding every copy of one call (`bytes == 0`: none, no frame pushed).
    area: CopyArea,
    /// `(size, align)` in bytes of each by-reference argument, in argument order.
    each: Box<[(usize, usize)]>,
}

/// One by-reference argument of a compiled call: where its copy goes in the call's frame.
#[derive(Clone, Copy, Debug)]
struct Ref {
    /// The argument's index among the descriptor's arguments.
    index: usize,
    /// The struct's size in bytes.
    size: usize,
    /// The copy's byte offset in the frame (after the pointer array; aligned for the struct).
    offset: usize,
}

/// The by-reference copies of a compiled call: one frame of `area` holding the stub's pointer
/// array (`8 * each.len()` bytes at offset 0) and then each copy at its offset.
#[derive(Clone, Debug)]
struct Refs {
    area: CopyArea,
    each: Box<[Ref]>,
}

impl Refs {
    /// The layout of the frame for `each` `(index, size, align)`; `None` when the total exceeds
    /// `isize::MAX` bytes.
    fn new(each: impl Iterator<Item = (usize, usize, usize)> + Clone) -> Option<Refs> {
        let n = each.clone().count();
        let mut area = CopyArea::default().with(n.checked_mul(8)?, 8)?;
        let mut refs = Vec::with_capacity(n);
        for (index, size, align) in each {
            let offset = area.bytes.checked_next_multiple_of(align)?;
            area = area.with(size, align)?;
            refs.push(Ref {
                index,
                size,
                offset,
            });
        }
        Some(Refs {
            area,
            each: refs.into(),
        })
    }
}

/// A compiled executor's stub and what its calls need around it.
#[derive(Clone)]
pub(crate) struct Compiled {
    raw: RawFn,
    values: ValuesEntry,
    /// The by-reference copies (none: no frame).
    refs: Refs,
    /// Whether the handle captures errno.
    capture: bool,
    /// Whether the result is a struct (a destination is needed).
    struct_ret: bool,
    /// The trampoline's copies, for [`Executor::interpreted`].
    copies: Copies,
    /// A capture handle with an integer or void result and no by-reference arguments: the
    /// values entry of the same signature's stub *without* capture, kept alive with it (the
    /// system-call adapter zeroes and reads errno itself, [`Executor::uncaptured`]).
    uncaptured: Option<(ValuesEntry, Arc<Stub>)>,
    _keep: Arc<Stub>,
}

/// How a handle's calls run. Chosen once by [`Executor::link`].
#[derive(Clone)]
pub(crate) enum Executor {
    /// The trampoline carries the plan out (the OS refused executable memory, or forced by
    /// [`Executor::interpreted`]).
    Interpreted(Copies),
    /// No capture, no by-reference arguments, an integer (not bool), float or void result:
    /// `invoke` calls the values entry through [`Executor::call_int`] (the entry returns a
    /// float's bits in `x0` too, so one fast path serves both).
    Int(Compiled),
    /// Every other signature with a stub: [`Executor::call_values`] (a bool result is
    /// normalised by the handle), [`Executor::call_struct`], [`Executor::call_capture`].
    Stub(Compiled),
}

/// The stub's machine code for a signature (both entries), without the cache or a mapping.
///
/// # Errors
/// None (the `Result` is the backend interface).
#[cfg(feature = "internals")]
pub(crate) fn stub_code(plan: &CallPlan, args: &[ArgKind], capture: bool) -> Result<Vec<u8>> {
    let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
    Ok(super::stub::compile(plan, &checks, capture).bytes)
}

/// Compiles and places a signature's stub bypassing the cache, frees it, and returns its size
/// in bytes.
///
/// # Errors
/// [`crate::Error::Unsupported`] if the OS refuses executable memory.
#[cfg(feature = "internals")]
pub(crate) fn compile_uncached(plan: &CallPlan, args: &[ArgKind], capture: bool) -> Result<usize> {
    let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
    Ok(super::stub::build(plan, &checks, capture)?.bytes().len())
}

impl Executor {
    /// The executor of a handle with `plan` (argument kinds `args`, return `ret`, `capture`): a
    /// compiled stub with its fast path, or the trampoline when the OS gives no executable
    /// memory. The by-reference copy areas are computed here once.
    ///
    /// # Errors
    /// [`crate::Error::SizeOverflow`] when the by-reference copies together exceed `isize::MAX`
    /// bytes (no frame can hold them); [`crate::Error::InvalidDescriptor`] (an internal error)
    /// when `args` does not have one kind per planned argument.
    pub(crate) fn link(
        plan: &CallPlan,
        args: &[ArgKind],
        ret: RetKind,
        capture: bool,
        _target: *const c_void,
    ) -> Result<Executor> {
        // The handle layer derives `args` from the same descriptor as `plan`: one kind per
        // planned argument. Checked here too, so a mismatch is an error, not fewer copies.
        debug_assert_eq!(plan.args.len(), args.len(), "one argument kind per planned argument");
        if plan.args.len() != args.len() {
            return Err(kinds_mismatch(plan.args.len(), args.len()));
        }
        let by_ref = || {
            plan.args
                .iter()
                .zip(args)
                .enumerate()
                .filter(|(_, (ap, _))| ap.by_reference.is_some())
                .map(|(i, (_, kind))| match *kind {
                    ArgKind::Group { size, align } => (i, size, align),
                    // B.3 applies to composites only; a scalar never has a by-reference plan.
                    ArgKind::Scalar(k) => (i, k.byte_size(), k.byte_size()),
                })
        };
        let each: Box<[(usize, usize)]> = by_ref().map(|(_, size, align)| (size, align)).collect();
        let area = each
            .iter()
            .try_fold(CopyArea::default(), |a, &(size, align)| a.with(size, align))
            .ok_or_else(CopyArea::too_large)?;
        let copies = Copies { area, each };
        // No frame for the stub's pointer array either when it would not fit in one.
        let Some(refs) = Refs::new(by_ref()) else {
            return Ok(Executor::Interpreted(copies));
        };
        let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
        let Ok(stub) = super::stub::stub_for(plan, &checks, capture) else {
            return Ok(Executor::Interpreted(copies));
        };
        let struct_ret = matches!(ret, RetKind::Group { .. });
        let int = !capture
            && refs.each.is_empty()
            && matches!(ret, RetKind::Void | RetKind::Scalar(_))
            && ret != RetKind::Scalar(ScalarKind::Bool);
        // Integer or void results only: the system-call adapter takes `int` and `long` results.
        let uncaptured = if capture
            && refs.each.is_empty()
            && matches!(ret, RetKind::Void | RetKind::Scalar(_))
            && !matches!(
                ret,
                RetKind::Scalar(ScalarKind::Bool | ScalarKind::F32 | ScalarKind::F64)
            ) {
            super::stub::stub_for(plan, &checks, false)
                .ok()
                .map(|s| (s.values, s))
        } else {
            None
        };
        let c = Compiled {
            raw: stub.raw,
            values: stub.values,
            refs,
            capture,
            struct_ret,
            copies,
            uncaptured,
            _keep: stub,
        };
        Ok(if int {
            Executor::Int(c)
        } else {
            Executor::Stub(c)
        })
    }

    /// The compiled stub, if any.
    #[inline(always)]
    fn compiled(&self) -> Option<&Compiled> {
        match self {
            Executor::Interpreted(_) => None,
            Executor::Int(c) | Executor::Stub(c) => Some(c),
        }
    }

    /// The trampoline's copies.
    fn copies(&self) -> &Copies {
        match self {
            Executor::Interpreted(copies) => copies,
            Executor::Int(c) | Executor::Stub(c) => &c.copies,
        }
    }

    /// The trampoline executor (the test hook that forces the interpreted path).
    #[cfg(feature = "internals")]
    pub(crate) fn interpreted(&self) -> Executor {
        Executor::Interpreted(self.copies().clone())
    }

    /// Whether calls run a compiled stub.
    pub(crate) fn is_compiled(&self) -> bool {
        self.compiled().is_some()
    }

    /// `nargs` (the descriptor's argument count) when [`Executor::call_int`] applies, else
    /// `usize::MAX` (no slice is that long), so that `invoke` decides with one compare.
    pub(crate) fn int_arity(&self, nargs: usize) -> usize {
        match self {
            Executor::Int(_) => nargs,
            _ => usize::MAX,
        }
    }

    /// `usize::MAX`: float results take [`Executor::call_int`] (the values entry returns their
    /// bits in `x0`).
    pub(crate) fn float_arity(&self, _nargs: usize) -> usize {
        usize::MAX
    }

    /// The integer (and float) fast path: the result bits in `x0`, or `None` if the stub
    /// rejected an argument (nothing was called).
    ///
    /// # Safety
    /// [`Executor::int_arity`] is not `usize::MAX`; `args` points to one `Value` per descriptor
    /// argument; the callee's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call_int(&self, args: *const u8, target: *const c_void) -> Option<u64> {
        let Executor::Int(c) = self else {
            // SAFETY: `int_arity` is not `usize::MAX` only for this variant (caller).
            unsafe { std::hint::unreachable_unchecked() }
        };
        // SAFETY: the values entry checks every tag and segment length before anything else;
        // no capture, no by-reference copies and no return destination (a scalar or void
        // return; `Executor::Int`); the rest is the caller's contract.
        unsafe {
            c.values.call(
                args.cast(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                target,
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        }
    }

    /// Never called ([`Executor::float_arity`] is `usize::MAX`): `None`.
    ///
    /// # Safety
    /// None needed (nothing is called).
    #[inline(always)]
    pub(crate) unsafe fn call_float(&self, _: *const u8, _: *const c_void) -> Option<u64> {
        None
    }

    /// No image entries on this backend.
    #[inline(always)]
    pub(crate) fn image(&self) -> Option<super::ImageEntry> {
        None
    }

    /// A capture handle's entry into the same signature's stub *without* capture (the
    /// system-call adapter, which zeroes and reads errno itself), if it has one: capture, an
    /// integer or void result, no by-reference arguments, a stub.
    #[inline(always)]
    pub(crate) fn uncaptured(&self) -> Option<Uncaptured> {
        self.compiled()?.uncaptured.as_ref().map(|(v, _)| Uncaptured(*v))
    }

    /// A struct-returning call without capture through the value entry, writing the struct at
    /// `ret`: `true` if it ran, `false` if this path does not apply or an argument was rejected
    /// (then nothing was called).
    ///
    /// # Safety
    /// `args` points to one `Value` per descriptor argument; `ret` is writable for the return
    /// layout's size and aligned for it; the callee's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call_struct(
        &self,
        args: *const u8,
        ret: *mut u8,
        target: *const c_void,
    ) -> bool {
        match self.compiled() {
            // SAFETY: the caller's contract; no capture.
            Some(c) if c.struct_ret && !c.capture => unsafe {
                c.call_values(args, ret, std::ptr::null_mut(), target)
                    .is_some()
            },
            _ => false,
        }
    }

    /// Any call through the value entry: the scalar result's bits (`x0`; a float's bits), or
    /// `None` if there is no stub or an argument was rejected (nothing was called).
    ///
    /// # Safety
    /// `args` points to one `Value` per descriptor argument; `ret` is null (scalar or void
    /// return) or writable and aligned for the return layout; `capture` is null (no capture)
    /// or a capture buffer (4 bytes, 4-aligned) of a capture handle; the callee's contract is
    /// the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call_values(
        &self,
        args: *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        // SAFETY: the caller's contract.
        unsafe { self.compiled()?.call_values(args, ret, capture, target) }
    }

    /// The system-call adapter's fast path: the capture stub with the adapter's buffer, the raw
    /// result bits (`x0`). `None` when this path does not apply (not a capture handle with a
    /// scalar or void return, no stub) or an argument was rejected (nothing was called).
    ///
    /// # Safety
    /// As [`Executor::call_values`] with a non-null `capture`.
    #[inline(always)]
    pub(crate) unsafe fn call_capture(
        &self,
        args: *const u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        match self.compiled() {
            // SAFETY: the caller's contract; a scalar or void return needs no destination.
            Some(c) if c.capture && !c.struct_ret => unsafe {
                c.call_values(args, std::ptr::null_mut(), capture, target)
            },
            _ => None,
        }
    }

    /// The raw path through the stub: writes a struct result at `ret` and returns the scalar
    /// result's bits; `None` without a stub, or when the copies' frame could not be had
    /// (nothing was called).
    ///
    /// # Safety
    /// `args` holds one pointer per descriptor argument, each readable for its layout's size;
    /// `ret` writable (and aligned) for the return layout's size; `capture` null or a capture
    /// buffer of a capture handle; the callee's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call_raw(
        &self,
        args: *const *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        let c = self.compiled()?;
        let errno = errno_for(capture);
        if c.refs.each.is_empty() {
            // SAFETY: the caller's contract; no by-reference arguments.
            return Some(unsafe { (c.raw)(args, ret, capture, target, std::ptr::null(), errno) });
        }
        // SAFETY: `args[i]` is readable for argument i's size (caller); `copies` holds one
        // pointer per by-reference argument, each to a copy of its bytes (`with_copies`).
        unsafe {
            c.with_copies(
                |r| Some(args.add(r.index).read()),
                |copies| Some((c.raw)(args, ret, capture, target, copies, errno)),
            )
        }
    }
}

/// The errno address a call with capture buffer `capture` needs (null without capture).
#[inline(always)]
fn errno_for(capture: *mut i32) -> *mut i32 {
    if capture.is_null() {
        std::ptr::null_mut()
    } else {
        crate::backend::thread_errno()
    }
}

/// A capture handle's values entry of its signature's stub without capture
/// ([`Executor::uncaptured`]); the stub is kept alive by the executor it was taken from.
#[derive(Clone, Copy)]
pub(crate) struct Uncaptured(ValuesEntry);

impl Uncaptured {
    /// Calls it: `x0`, or `None` if the stub rejected an argument (nothing was called).
    ///
    /// # Safety
    /// `args` points to one `Value` per descriptor argument (without the capture segment); the
    /// executor it came from is alive; the callee's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(self, args: *const u8, target: *const c_void) -> Option<u64> {
        // SAFETY: the stub checks every argument first; it captures nothing, needs no return
        // destination (integer or void result) and has no by-reference arguments; the rest is
        // the caller's contract.
        unsafe {
            self.0.call(
                args.cast(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                target,
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        }
    }
}

impl Compiled {
    /// The values entry with everything it needs (see [`Executor::call_values`]).
    ///
    /// # Safety
    /// As [`Executor::call_values`].
    #[inline(always)]
    unsafe fn call_values(
        &self,
        args: *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        let errno = errno_for(capture);
        let values = args.cast::<Value<'_>>();
        if self.refs.each.is_empty() {
            // SAFETY: the caller's contract; the stub checks every argument first; no
            // by-reference arguments.
            return unsafe {
                self.values
                    .call(values, ret, capture, target, std::ptr::null(), errno)
            };
        }
        let source = |r: &Ref| {
            // SAFETY: `values` holds one `Value` per descriptor argument (caller) and
            // `r.index` is one of them.
            match unsafe { *values.add(r.index) } {
                Value::Segment(s) if s.byte_size() >= r.size => Some(s.as_ptr() as *const u8),
                _ => None,
            }
        };
        // SAFETY: each source is a segment of at least the struct's size, checked above;
        // `copies` as the stub needs (`with_copies`); the rest is the caller's contract.
        unsafe {
            self.with_copies(source, |copies| {
                self.values.call(values, ret, capture, target, copies, errno)
            })
        }
    }

    /// Pushes the call's frame, copies each by-reference argument's `size` bytes from
    /// `source(ref)` into it and fills the pointer array, runs `call` with the array, and pops
    /// the frame. `None` (nothing called) when a source is `None` or the frame fails.
    ///
    /// # Safety
    /// Every `Some` source is readable for its argument's size.
    #[inline(never)]
    unsafe fn with_copies(
        &self,
        source: impl Fn(&Ref) -> Option<*const u8>,
        call: impl FnOnce(*const *const u8) -> Option<u64>,
    ) -> Option<u64> {
        let area = self.refs.area;
        let frame = linker_stack().push_frame(area.bytes, area.align).ok()?;
        let base = frame.allocate_uninit(area.bytes, area.align).ok()?.as_ptr();
        let ptrs = base.cast::<*const u8>();
        for (j, r) in self.refs.each.iter().enumerate() {
            let from = source(r)?;
            // SAFETY: `Refs::new` put the pointer array at offset 0 (8 bytes per argument,
            // 8-aligned: `base` is aligned to the area's alignment, at least 8) and each copy
            // at its offset, all inside the `area.bytes` bytes of `base`; the source is
            // readable for `r.size` bytes (caller) and outside the fresh frame.
            unsafe {
                let copy = base.add(r.offset);
                std::ptr::copy_nonoverlapping(from, copy, r.size);
                ptrs.add(j).write(copy);
            }
        }
        let out = call(ptrs.cast_const());
        drop(frame);
        out
    }
}

#[allow(clippy::missing_safety_doc)]
impl Executor {
    /// The trampoline path: argument `i`'s source comes from `arg(i)` for `i` in
    /// `0..plan.args.len()` (its first error is returned before anything is called); a
    /// by-reference argument's bytes are copied into this call's linker-stack frame and the
    /// copy's address passed; x8 is set to `ret` for an in-memory result; calls; stores a
    /// register-returned struct at `ret` (x0/x1, or v0..v3 for an HFA, by the plan's return
    /// moves), and returns the scalar result's register bits (x0, or the low 64 bits of v0).
    ///
    /// # Errors
    /// The first error of `arg`; [`crate::Error::OutOfMemory`] if the copies' frame falls back
    /// to the heap and that allocation fails (nothing is called then);
    /// [`crate::Error::InvalidDescriptor`] (an internal error, nothing called) when `plan` has
    /// more by-reference arguments than the plan the executor was linked with.
    ///
    /// # Safety
    /// Each `ArgSource::Bytes` is readable for its layout's size; `ret` is writable (and
    /// aligned) for the return layout's size, or null for scalar/void returns; `capture` null
    /// or a capture buffer of a capture handle; the callee's contract is the caller's.
    #[inline(never)]
    pub(crate) unsafe fn interpret(
        &self,
        plan: &CallPlan,
        target: *const c_void,
        capture: *mut i32,
        ret: *mut u8,
        arg: impl FnMut(usize) -> Result<ArgSource>,
    ) -> Result<u64> {
        let copies = self.copies();
        let each = copies.each.iter().copied();
        // SAFETY: forwarded to the caller.
        unsafe {
            by_reference::interpret::<CallFrame>(plan, target, capture, ret, copies.area, each, arg)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{MemoryLayout, ValueLayout as V};
    use crate::linker::FunctionDescriptor as FD;

    extern "C" fn never_called() {}

    /// The executor `link` picks for a descriptor (its variant's name), with its arities and
    /// by-reference count checked against the variant.
    fn variant(d: &FD, first_variadic: Option<usize>, capture: bool) -> &'static str {
        let plan = super::super::classify::plan(d, first_variadic, super::super::FLAVOUR)
            .unwrap();
        let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
        let ret = RetKind::of(d.return_layout());
        let target = never_called as *const c_void;
        let exec = Executor::link(&plan, &args, ret, capture, target).unwrap();
        // the test hook is the trampoline, with the same copies, whatever the fast path was
        let interpreted = exec.interpreted();
        assert!(matches!(interpreted, Executor::Interpreted(_)));
        assert!(!interpreted.is_compiled() && exec.is_compiled(), "{d}");
        assert_eq!(interpreted.copies().area, exec.copies().area);
        assert_eq!(interpreted.int_arity(args.len()), usize::MAX);
        let n = args.len();
        assert_eq!(exec.float_arity(n), usize::MAX);
        assert!(exec.image().is_none() && interpreted.uncaptured().is_none());
        // a capture handle of an integer or void result without by-reference arguments has
        // the same signature's stub without capture (the system-call adapter's fast path)
        let by_ref = plan.args.iter().any(|a| a.by_reference.is_some());
        let int_ret = matches!(ret, RetKind::Void)
            || matches!(ret, RetKind::Scalar(k) if !matches!(k, ScalarKind::Bool | ScalarKind::F32 | ScalarKind::F64));
        assert_eq!(exec.uncaptured().is_some(), capture && int_ret && !by_ref, "{d}");
        assert_eq!(exec.int_arity(n) == n, matches!(exec, Executor::Int(_)), "{d}");
        let c = exec.compiled().unwrap();
        let by_ref = plan.args.iter().filter(|a| a.by_reference.is_some()).count();
        assert_eq!(c.refs.each.len(), by_ref, "{d}");
        match exec {
            Executor::Interpreted(_) => "Interpreted",
            Executor::Int(_) => "Int",
            Executor::Stub(_) => "Stub",
        }
    }

    fn st(m: &[V]) -> MemoryLayout {
        MemoryLayout::c_struct(m.iter().map(|v| MemoryLayout::from(v.clone()))).unwrap()
    }

    #[test]
    fn one_fast_path_per_signature() {
        let big = st(&[V::I64, V::I64, V::I64]);
        assert_eq!(variant(&FD::of_void([]), None, false), "Int");
        assert_eq!(variant(&FD::of(V::I32, [V::I32]), None, false), "Int");
        // float results come back in x0 too: the same fast path
        assert_eq!(variant(&FD::of(V::F64, [V::F64]), None, false), "Int");
        assert_eq!(variant(&FD::of(V::I32, [V::I32]), Some(0), false), "Int");
        // a bool result is normalised by the handle's value path
        assert_eq!(variant(&FD::of(V::BOOL, [V::I32]), None, false), "Stub");
        // by-reference arguments need the copies' frame
        assert_eq!(variant(&FD::of(V::I64, [&big]), None, false), "Stub");
        assert_eq!(variant(&FD::of(&big, [V::I32]), None, false), "Stub");
        assert_eq!(variant(&FD::of(st(&[V::I64, V::F64]), [V::I32]), None, false), "Stub");
        assert_eq!(variant(&FD::of(V::I32, [V::I32]), None, true), "Stub");
        assert_eq!(variant(&FD::of(V::F64, [V::I32]), None, true), "Stub");
        assert_eq!(variant(&FD::of(V::I64, [&big]), None, true), "Stub");
        assert_eq!(variant(&FD::of(&big, [&big, &big]), None, true), "Stub");
    }

    #[test]
    fn the_pointer_array_comes_first_and_each_copy_is_aligned_in_one_frame() {
        let refs = Refs::new([(1, 24, 8), (3, 40, 16), (4, 17, 1)].into_iter()).unwrap();
        let at: Vec<(usize, usize, usize)> =
            refs.each.iter().map(|r| (r.index, r.size, r.offset)).collect();
        assert_eq!(at, [(1, 24, 24), (3, 40, 48), (4, 17, 88)]);
        assert_eq!(refs.area, CopyArea { bytes: 105, align: 16 });
        assert!(Refs::new([(0, isize::MAX as usize, 8)].into_iter()).is_none());
        assert_eq!(Refs::new(std::iter::empty()).unwrap().area.bytes, 0);
    }
}
