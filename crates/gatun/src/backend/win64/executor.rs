//! The Win64 (Microsoft x64) executor of a downcall handle, chosen once at link time: a
//! compiled stub (`super::stub`) — with the integer fast path where its signature allows one —
//! or the trampoline (`CallFrame`, [`Executor::Interpreted`]) when the OS refuses executable
//! memory (and for [`Executor::interpreted`], the test hook).
//!
//! The handle layer (`linker::handle`) is ABI-neutral: it checks counts, capture buffers and
//! return segments, builds `Value`s, and calls the methods below. A stub method that returns
//! `None`/`false` called nothing; the handle then falls back to [`Executor::interpret`], which
//! performs the same checks in Rust and reports the exact error.
//!
//! A compiled stub takes the by-reference copies' addresses as its fifth parameter, an array of
//! pointers, one per by-reference argument in argument order. That array is the first 8 n bytes
//! of the call's one [`crate::memory::linker_stack`] frame (n by-reference arguments); the
//! copies follow, each at a 16-byte aligned offset computed at link time ([`Refs`]), so a call
//! makes one frame and no heap allocation. On the value path each by-reference `Value` must be a
//! `Value::Segment` of at least the struct's size before its bytes are copied; otherwise nothing
//! is called and the handle interprets (and reports it).
//!
//! # The Win64 rules carried out here (the plan says where; this module does it)
//! - **By reference** ("x64 calling convention: parameter passing": "structs and unions of
//!   size 8, 16, 32, or 64 bits ... are passed as if they were integers of the same size ...
//!   Structs or unions of other sizes are passed as a pointer to memory allocated by the
//!   caller"; [`crate::abi::ArgPlan::by_reference`]): each such argument is copied, and the
//!   copy's address takes its slot (GPR or stack slot). The copies of one call live in ONE frame
//!   of [`crate::memory::linker_stack`], pushed per call with the size computed at link time
//!   ([`CopyArea`]; no frame when the plan has none) and closed when the call returns. Every
//!   copy starts at a multiple of 16 bytes ("allocated temporary memory must be 16-byte
//!   aligned"), whatever the struct's own alignment. The callee may write through the pointer:
//!   it writes the copy, never the caller's segment. Frames nest LIFO, so an upcall running on
//!   top of the call (and any downcall it makes) pushes and pops its own frames above it; the
//!   BufferStack falls back to the heap by itself when its block is full.
//! - **Hidden return pointer** ("x64 calling convention: return values": "the caller assumes
//!   the responsibility of allocating memory and passing a pointer for the return value as the
//!   first argument"; [`CallPlan::hidden_return_pointer`] = rcx, which shifts the arguments by
//!   one slot): rcx gets the handle's return destination `ret`, which the callee writes and
//!   returns in rax.
//! - **Shadow space and stack** ("the caller must always allocate sufficient space to store
//!   four register parameters"): the stack area of a call is the plan's `stack_bytes`, 32 bytes
//!   of shadow space at `rsp` (zeroed; the callee may write it) and then one 8-byte slot per
//!   argument past the fourth slot, written whole.
//! - **Capture** (the JDK's Windows capture state, 12 bytes: `GetLastError` at 0,
//!   `WSAGetLastError` at 4, `errno` at 8): the trampoline restores all three right before the
//!   call and saves them right after it (see `trampoline`).
//!
//! # Invariants (the unsafe story of this module)
//! - An [`Executor`] was built by [`Executor::link`] from the handle's own plan and argument
//!   kinds and never changes: its by-reference sizes follow `plan.args` in order, and the copy
//!   frame's size is their sum with each copy 16-byte aligned; the fast path is one variant, so
//!   [`Executor::int_arity`] is derived from it.
//! - Every stub entry is kept alive by the `Arc<Stub>` in the same [`Compiled`] (the stub cache
//!   holds only a `Weak`).
//! - The values entry checks every argument's tag and segment length before anything else and
//!   reports a mismatch without calling (its `rejected` flag).
//! - The trampoline frame follows the plan (see `frame`); every by-reference copy is inside the
//!   frame pushed for the call, which outlives the call; a plan with more by-reference
//!   arguments than the linked one is reported as an internal error, never trusted.

use std::ffi::c_void;
use std::sync::Arc;

use super::stub::{ArgCheck, RawFn, Stub, ValuesFn};
use super::CallFrame;
use crate::abi::CallPlan;
use crate::backend::by_reference::{self, kinds_mismatch};
use crate::backend::{ArgKind, ArgSource, CopyArea, RetKind};
use crate::error::Result;
use crate::layout::ScalarKind;
use crate::memory::{linker_stack, SegmentAllocator};
use crate::value::Value;

/// The alignment in bytes of every by-reference copy ("allocated temporary memory must be
/// 16-byte aligned").
pub(crate) const COPY_ALIGN: usize = 16;

/// What the interpreted path needs beyond the plan: the by-reference copies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Copies {
    /// The frame holding every copy of one call (`bytes == 0`: none, no frame pushed).
    area: CopyArea,
    /// The size in bytes of each by-reference argument, in argument order (each copy is
    /// [`COPY_ALIGN`]-aligned).
    each: Box<[usize]>,
}

/// One by-reference argument of a compiled call: where its copy goes in the call's frame.
#[derive(Clone, Copy, Debug)]
struct Ref {
    /// The argument's index among the descriptor's arguments.
    index: usize,
    /// The struct's size in bytes.
    size: usize,
    /// The copy's byte offset in the frame (after the pointer array; a multiple of
    /// [`COPY_ALIGN`]).
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
    /// The layout of the frame for `each` `(index, size)`; `None` when the total exceeds
    /// `isize::MAX` bytes.
    fn new(each: impl Iterator<Item = (usize, usize)> + Clone) -> Option<Refs> {
        let n = each.clone().count();
        let mut area = CopyArea::default().with(n.checked_mul(8)?, 8)?;
        let mut refs = Vec::with_capacity(n);
        for (index, size) in each {
            let offset = area.bytes.checked_next_multiple_of(COPY_ALIGN)?;
            area = area.with(size, COPY_ALIGN)?;
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
    values: ValuesFn,
    /// The by-reference copies (none: no frame).
    refs: Refs,
    /// Whether the handle captures the call state.
    capture: bool,
    /// Whether the result is a struct (a destination is needed).
    struct_ret: bool,
    /// The trampoline's copies, for [`Executor::interpreted`].
    copies: Copies,
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
    /// float's bits in `rax` too, so one fast path serves both).
    Int(Compiled),
    /// Every other signature with a stub: [`Executor::call_values`] (a bool result is
    /// normalised by the handle), [`Executor::call_struct`], [`Executor::call_capture`].
    Stub(Compiled),
}

/// The stub's machine code for a signature (both entries, the literal pool and the unwind
/// data), without the cache or a mapping.
///
/// # Errors
/// None (the `Result` is the backend interface).
#[cfg(feature = "internals")]
pub(crate) fn stub_code(plan: &CallPlan, args: &[ArgKind], capture: bool) -> Result<Vec<u8>> {
    let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
    let fns = super::stub::CaptureFns::native();
    Ok(super::stub::compile(plan, &checks, capture, &fns).bytes)
}

/// Compiles and places a signature's stub bypassing the cache, frees it, and returns its size
/// in bytes.
///
/// # Errors
/// [`crate::Error::Unsupported`] if the OS refuses executable memory or the function table.
#[cfg(feature = "internals")]
pub(crate) fn compile_uncached(plan: &CallPlan, args: &[ArgKind], capture: bool) -> Result<usize> {
    let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
    Ok(super::stub::build(plan, &checks, capture)?.bytes().len())
}

impl Executor {
    /// The executor of a handle with `plan` (argument kinds `args`, return `ret`, `capture`): a
    /// compiled stub with its fast path, or the trampoline when the OS gives no executable
    /// memory (or refuses the stub's function table). The by-reference copy areas are computed
    /// here once.
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
                    ArgKind::Group { size, .. } => (i, size),
                    // Only aggregates are passed by reference; a scalar never has such a plan.
                    ArgKind::Scalar(k) => (i, k.byte_size()),
                })
        };
        let each: Box<[usize]> = by_ref().map(|(_, size)| size).collect();
        let area = each
            .iter()
            .try_fold(CopyArea::default(), |a, &size| a.with(size, COPY_ALIGN))
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
        let int = !capture
            && refs.each.is_empty()
            && matches!(ret, RetKind::Void | RetKind::Scalar(_))
            && ret != RetKind::Scalar(ScalarKind::Bool);
        let c = Compiled {
            raw: stub.raw,
            values: stub.values,
            refs,
            capture,
            struct_ret: matches!(ret, RetKind::Group { .. }),
            copies,
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
    /// bits in `rax`).
    pub(crate) fn float_arity(&self, _nargs: usize) -> usize {
        usize::MAX
    }

    /// The integer (and float) fast path: the result bits in `rax`, or `None` if the stub
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
            c.call_values_entry(
                args.cast(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                target,
                std::ptr::null(),
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

    /// No entry without capture for the system-call adapter: its fast path zeroes and reads
    /// `errno` alone, while a Windows capture also carries the last-error and Winsock states,
    /// so capture handles take the capture stub ([`Executor::call_capture`]).
    #[inline(always)]
    pub(crate) fn uncaptured(&self) -> Option<crate::backend::absent::Uncaptured<'_>> {
        None
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

    /// Any call through the value entry: the scalar result's bits (`rax`; a float's bits), or
    /// `None` if there is no stub or an argument was rejected (nothing was called).
    ///
    /// # Safety
    /// `args` points to one `Value` per descriptor argument; `ret` is null (scalar or void
    /// return) or writable and aligned for the return layout; `capture` is null (no capture)
    /// or a capture buffer (12 bytes, 4-aligned) of a capture handle; the callee's contract is
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
    /// result bits (`rax`). `None` when this path does not apply (not a capture handle with a
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

impl Compiled {
    /// Calls the values entry: `Some(rax)` when the arguments passed the checks and the
    /// target was called, `None` when they were rejected (nothing called or written).
    ///
    /// # Safety
    /// `values` points to the stub's `n` arguments; `ret`, `capture` and `copies` are what the
    /// stub's plan needs (see `super::stub`), and calling the target with the converted
    /// arguments is sound.
    #[inline(always)]
    unsafe fn call_values_entry(
        &self,
        values: *const Value<'_>,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
        copies: *const *mut u8,
    ) -> Option<u64> {
        let mut rejected = 0u8;
        let errno = errno_for(capture);
        // SAFETY: the caller's contract; `rejected` is writable for the call.
        let r = unsafe { (self.values)(values, ret, capture, target, copies, errno, &mut rejected) };
        (rejected == 0).then_some(r)
    }

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
        let values = args.cast::<Value<'_>>();
        if self.refs.each.is_empty() {
            // SAFETY: the caller's contract; the stub checks every argument first; no
            // by-reference arguments.
            return unsafe {
                self.call_values_entry(values, ret, capture, target, std::ptr::null())
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
                self.call_values_entry(values, ret, capture, target, copies)
            })
        }
    }

    /// Pushes the call's frame, copies each by-reference argument's `size` bytes from
    /// `source(ref)` into it (16-byte aligned) and fills the pointer array, runs `call` with
    /// the array, and pops the frame. `None` (nothing called) when a source is `None` or the
    /// frame fails.
    ///
    /// # Safety
    /// Every `Some` source is readable for its argument's size.
    #[inline(never)]
    unsafe fn with_copies(
        &self,
        source: impl Fn(&Ref) -> Option<*const u8>,
        call: impl FnOnce(*const *mut u8) -> Option<u64>,
    ) -> Option<u64> {
        let area = self.refs.area;
        let frame = linker_stack().push_frame(area.bytes, area.align).ok()?;
        let base = frame.allocate_uninit(area.bytes, area.align).ok()?.as_ptr();
        let ptrs = base.cast::<*mut u8>();
        for (j, r) in self.refs.each.iter().enumerate() {
            let from = source(r)?;
            // SAFETY: `Refs::new` put the pointer array at offset 0 (8 bytes per argument,
            // 8-aligned: `base` is aligned to the area's alignment, 16) and each copy at its
            // 16-byte aligned offset, all inside the `area.bytes` bytes of `base`; the source is
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
    /// One call through the trampoline. `arg(i)` gives argument `i`'s bytes, for every
    /// planned argument, before anything runs (an error stops there). Aggregates passed by
    /// reference get a 16-byte-aligned copy in this call's linker-stack frame, whose address
    /// takes their slot; an in-memory result's destination `ret` goes in rcx. With a capture
    /// buffer the three states are restored from it right before the call and saved into it
    /// right after. A struct returned in rax is written to `ret`; the value is the bits of
    /// rax or of xmm0's low half, whichever the plan returns a scalar in.
    ///
    /// # Errors
    /// Whatever `arg` reports first; [`crate::Error::OutOfMemory`] when the copy frame needs
    /// the heap and cannot get it; [`crate::Error::InvalidDescriptor`] (internal: `plan` has
    /// by-reference arguments this executor has no copies for). Nothing is called on an error.
    ///
    /// # Safety
    /// Sources given as `ArgSource::Bytes` are readable for their layout's size; `ret` is null
    /// (scalar or void result) or writable and aligned for the return layout; `capture` is
    /// null or the 12-byte, 4-aligned buffer of a capture handle; the callee's own contract
    /// holds.
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
        let each = copies.each.iter().map(|&size| (size, COPY_ALIGN));
        // SAFETY: forwarded to the caller; `capture` is the frame's 12-byte buffer or null.
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

    fn copies(d: &FD) -> Copies {
        let plan = super::super::classify::plan(d, None).unwrap();
        let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
        let exec = Executor::link(&plan, &args, RetKind::of(d.return_layout()), false, std::ptr::null())
            .unwrap();
        assert!(!exec.interpreted().is_compiled());
        assert_eq!(exec.interpreted().copies().area, exec.copies().area);
        exec.copies().clone()
    }

    #[test]
    fn every_by_reference_copy_is_16_byte_aligned_in_one_frame() {
        let s3 = MemoryLayout::c_struct([V::I8, V::I8, V::I8]).unwrap();
        let s12 = MemoryLayout::c_struct([V::I32, V::I32, V::I32]).unwrap();
        let s8 = MemoryLayout::c_struct([V::I32, V::I32]).unwrap();
        let c = copies(&FD::of_void([s3.clone(), s8, s12.clone(), V::I64.into(), s3]));
        assert_eq!(&*c.each, &[3, 12, 3]);
        // 3 at 0, 12 at 16, 3 at 32
        assert_eq!(c.area, CopyArea { bytes: 35, align: 16 });
        assert_eq!(copies(&FD::of(s12, [V::I32])).area.bytes, 0);
    }
}
