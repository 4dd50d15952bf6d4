//! The one executor of the backends with a stub compiler and by-reference arguments (AAPCS64
//! composites over 16 bytes that are not HFAs, Win64 aggregates not of 1, 2, 4 or 8 bytes):
//! [`StubExecutor`], generic over the backend's [`StubEntries`] (its trampoline frame, its
//! stub's entry calls, its copies' layout and its `linker::Arguments` path). Its `link`, the
//! slots dispatch, the struct entry and every call path are written here once; a backend
//! implements [`StubEntries`] and names `StubExecutor<its entries>` as its executor.
//!
//! The interpreted call: [`interpret`] pushes the linker-stack frame of one call's copies,
//! places every argument (a by-reference one as its copy's address) into the backend's
//! [`Trampoline`] frame, runs it and reads the result; [`kinds_mismatch`] is the error of a plan
//! that does not match the linked copies.
//!
//! The compiled call: [`plan_copies`] lays out, once at link time, the trampoline's copies
//! ([`Copies`]) and the one frame of a stub call ([`Refs`]: the stub's pointer array, 8 bytes
//! per by-reference argument at offset 0, then each copy at its aligned offset);
//! [`Refs::with_copies`] fills the frame per call (one frame, no heap allocation).
//!
//! # Invariants
//! - Each copy is a fresh allocation of the call's frame of exactly the argument's size, filled
//!   from a source the caller vouches for; the frame outlives the call (the caller keeps it).
//! - A [`Refs`] is built by [`Refs::new`] only: its pointer array and every copy lie inside
//!   `area.bytes`, each copy at a multiple of its alignment, and `area.align` is at least 8.
//! - A [`Compiled`] is built by [`StubExecutor::link`] only, with the handle's own plan: its
//!   `refs` follow `plan.args` in order, and `capture`/`struct_ret` are the handle's; the fast
//!   path is one variant ([`StubExecutor::Int`]: no capture, no by-reference copies, no return
//!   destination), so `int_arity` and `slots_path` are derived from it; its entries are kept alive by the [`StubEntries`] value (the stub cache holds only a
//!   `Weak`).
//! - The values entry checks every argument's tag and segment length before anything else and
//!   reports a mismatch without calling ([`StubEntries::call_values`] gives `None`); on the
//!   value path each by-reference `Value` must also be a `Value::Segment` of at least the
//!   struct's size before its bytes are copied, otherwise nothing is called.

use std::ffi::c_void;

use crate::abi::{CallPlan, Location, Register};
use crate::backend::{
    Absent, ArgCheck, ArgKind, ArgSource, CopyArea, RetKind, Slots, SlotsPath, StackArgs,
    StructCall, UncapturedCall,
};
use crate::layout::ScalarKind;
use crate::memory::{linker_stack, Frame, SegmentAllocator};
use crate::value::Value;

/// The internal error of a plan whose arguments do not match the kinds (or by-reference copies)
/// an executor was linked with: the handle layer never produces one.
pub(crate) fn kinds_mismatch(planned: usize, linked: usize) -> crate::Error {
    crate::Error::InvalidDescriptor {
        descriptor: format!("with {planned} planned arguments"),
        reason: format!(
            "internal error: the executor was linked with {linked} argument kinds or \
             by-reference copies that do not match the plan"
        ),
    }
}

/// A backend's trampoline call frame, as [`interpret`] fills and runs it (with the outgoing
/// stack area `stack` beside it).
pub(crate) trait Trampoline {
    /// A frame calling `target` by `plan` (`stack`: the plan's area, zeroed).
    fn for_plan(target: *const c_void, plan: &CallPlan, stack: &mut StackArgs<'_>) -> Self;

    /// Stores an 8-byte address (a by-reference copy's, or the hidden return pointer) at `to`.
    fn store_address(&mut self, stack: &mut StackArgs<'_>, to: Location, address: u64);

    /// Carries out the moves of argument `i` of `plan` from the argument's bytes at `src`.
    ///
    /// # Safety
    /// `src` is readable for every move's `offset + size` bytes (the argument layout's size).
    unsafe fn store_arg(
        &mut self,
        stack: &mut StackArgs<'_>,
        plan: &CallPlan,
        i: usize,
        src: *const u8,
    );

    /// Captures into `buffer` (null: no capture): the backend's call state is restored from it
    /// right before the call and saved into it right after.
    fn capture_into(&mut self, buffer: *mut i32);

    /// Calls the target.
    ///
    /// # Safety
    /// The frame and `stack` describe a valid call of the target by the plan (the backend's
    /// frame invariants); the target's own contract holds.
    unsafe fn run(&mut self, stack: &mut StackArgs<'_>);

    /// The 64-bit value of the return register `r` after the call.
    fn result(&self, r: Register) -> u64;
}

/// One interpreted call of `target` by `plan` through the trampoline frame `T`. `arg(i)` gives
/// argument `i`'s source, for every planned argument, before anything is called (its first
/// error is returned). A by-reference argument (`ArgPlan::by_reference`) takes the next
/// `(size, align)` of `copies` (bytes, in argument order; `area` holds them all), is copied
/// into this call's linker-stack frame and passed as the copy's address; the hidden return
/// pointer, if the plan has one, is `ret`; `capture` is handed to the frame. After the call
/// the frame is popped, a register-returned struct is written to `ret`, and the scalar result
/// register's bits are returned.
///
/// # Errors
/// The first error of `arg`; [`crate::Error::OutOfMemory`] if the copies' frame or the stack
/// area of a call with more than 2048 bytes of stack arguments
/// ([`with_stack_args`](crate::backend::with_stack_args)) falls back to the heap and that
/// allocation fails; [`kinds_mismatch`] (an internal error) when the plan has
/// more by-reference arguments than `copies`, or has one and `area` is empty. Nothing is called
/// on an error.
///
/// # Safety
/// Each `ArgSource::Bytes` is readable for its layout's size; `ret` is writable (and aligned)
/// for the return layout's size, or null for scalar/void returns; `capture` is what `T` expects
/// (null or the capture buffer of a capture handle); the callee's contract is the caller's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn interpret<T: Trampoline>(
    plan: &CallPlan,
    target: *const c_void,
    capture: *mut i32,
    ret: *mut u8,
    area: CopyArea,
    mut copies: impl ExactSizeIterator<Item = (usize, usize)>,
    mut arg: impl FnMut(usize) -> crate::Result<ArgSource>,
) -> crate::Result<u64> {
    let copy_frame = push_copies(area)?;
    let linked = copies.len();
    // The outgoing stack area: on the Rust stack up to 2048 bytes, else in a linker-stack
    // frame pushed after (and popped before) the copies' frame.
    crate::backend::with_stack_args(plan.stack_bytes, |stack| {
        let mut frame = T::for_plan(target, plan, stack);
        for (i, ap) in plan.args.iter().enumerate() {
            let src = arg(i)?;
            if let Some(loc) = ap.by_reference {
                // One copy per by-reference argument of the linked plan, in one frame; a plan
                // other than the linked one is reported, never trusted.
                let (Some((size, align)), Some(f)) = (copies.next(), copy_frame.as_ref()) else {
                    return Err(kinds_mismatch(plan.args.len(), linked));
                };
                let copy = f.allocate_uninit(size, align)?;
                // SAFETY: the source is readable for the layout's size (caller) and `copy` is
                // a fresh region of that size in the call's frame: no overlap.
                src.with_scalar_bytes(ap, |p| unsafe {
                    std::ptr::copy_nonoverlapping(p, copy.as_ptr(), size)
                });
                frame.store_address(stack, loc, copy.as_ptr() as usize as u64);
            } else {
                // SAFETY: the source is a scalar's bytes in memory order (8 bytes covering
                // any scalar), or the argument's bytes (caller).
                src.with_scalar_bytes(ap, |p| unsafe { frame.store_arg(stack, plan, i, p) });
            }
        }
        if let Some(loc) = plan.hidden_return_pointer {
            frame.store_address(stack, loc, ret as usize as u64);
        }
        frame.capture_into(capture);
        // SAFETY: the frame follows the handle's validated plan; the copies live in
        // `copy_frame` until after the call; the caller vouches for `capture` and the callee's
        // contract.
        unsafe { frame.run(stack) };
        // SAFETY: `ret` has the return layout's size for a register-returned struct (caller).
        unsafe { crate::backend::store_return(plan, ret, |r| frame.result(r)) };
        Ok(frame.result(crate::backend::scalar_register(plan)))
    })
}

/// The linker-stack frame of one call's by-reference copies, pushed for `area` (`None` when
/// `area.bytes` is 0: no copies, no frame); the caller keeps it until the call has returned.
///
/// # Errors
/// As [`crate::memory::BufferStack::push_frame`] ([`crate::Error::OutOfMemory`] when the frame
/// falls back to the heap and that allocation fails).
fn push_copies(area: CopyArea) -> crate::Result<Option<Frame<'static>>> {
    if area.bytes == 0 {
        return Ok(None);
    }
    crate::memory::linker_stack()
        .push_frame(area.bytes, area.align)
        .map(Some)
}

/// What the interpreted path needs beyond the plan: the by-reference copies.
#[derive(Clone, Debug, Default)]
pub(crate) struct Copies {
    /// The frame holding every copy of one call (`bytes == 0`: none, no frame pushed).
    pub(crate) area: CopyArea,
    /// `(size, align)` in bytes of each by-reference argument, in argument order.
    pub(crate) each: Box<[(usize, usize)]>,
}

/// One by-reference argument of a compiled call: where its copy goes in the call's frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ref {
    /// The argument's index among the descriptor's arguments.
    pub(crate) index: usize,
    /// The struct's size in bytes.
    pub(crate) size: usize,
    /// The copy's byte offset in the frame (after the pointer array; aligned as the backend
    /// asked).
    pub(crate) offset: usize,
}

/// The by-reference copies of a compiled call: one frame of `area` holding the stub's pointer
/// array (`8 * each.len()` bytes at offset 0) and then each copy at its offset.
#[derive(Clone, Debug)]
pub(crate) struct Refs {
    pub(crate) area: CopyArea,
    pub(crate) each: Box<[Ref]>,
}

impl Refs {
    /// The layout of the frame for `each` `(index, size, align)`; `None` when the total exceeds
    /// `isize::MAX` bytes.
    pub(crate) fn new(each: impl Iterator<Item = (usize, usize, usize)> + Clone) -> Option<Refs> {
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

    /// Pushes the call's frame, copies each by-reference argument's `size` bytes from
    /// `source(ref)` into it (at the copy's aligned offset) and fills the pointer array, runs
    /// `call` with the array, and pops the frame. `None` (nothing called) when a source is
    /// `None` or the frame fails.
    ///
    /// # Safety
    /// Every `Some` source is readable for its argument's size.
    #[inline(never)]
    pub(crate) unsafe fn with_copies(
        &self,
        source: impl Fn(&Ref) -> Option<*const u8>,
        call: impl FnOnce(*const *const u8) -> Option<u64>,
    ) -> Option<u64> {
        let area = self.area;
        let frame = linker_stack().push_frame(area.bytes, area.align).ok()?;
        let base = frame.allocate_uninit(area.bytes, area.align).ok()?.as_ptr();
        let ptrs = base.cast::<*const u8>();
        for (j, r) in self.each.iter().enumerate() {
            let from = source(r)?;
            // SAFETY: `Refs::new` put the pointer array at offset 0 (8 bytes per argument,
            // 8-aligned: `base` is aligned to the area's alignment, at least 8) and each copy
            // at its aligned offset, all inside the `area.bytes` bytes of `base`; the source is
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

/// The copies of a handle with `plan` and argument kinds `args`, laid out once at link time:
/// the trampoline's [`Copies`] and, when its frame fits, the compiled call's [`Refs`] (`None`:
/// the pointer array does not fit beside the copies; the handle interprets). `copy(kind)` is
/// the `(size, align)` in bytes of a by-reference argument's copy.
///
/// # Errors
/// [`crate::Error::SizeOverflow`] when the copies together exceed `isize::MAX` bytes (no frame
/// can hold them); [`kinds_mismatch`] (an internal error) when `args` does not have one kind
/// per planned argument.
pub(crate) fn plan_copies(
    plan: &CallPlan,
    args: &[ArgKind],
    copy: impl Fn(ArgKind) -> (usize, usize),
) -> crate::Result<(Copies, Option<Refs>)> {
    // The handle layer derives `args` from the same descriptor as `plan`: one kind per
    // planned argument. Checked here too, so a mismatch is an error, not fewer copies.
    debug_assert_eq!(
        plan.args.len(),
        args.len(),
        "one argument kind per planned argument"
    );
    if plan.args.len() != args.len() {
        return Err(kinds_mismatch(plan.args.len(), args.len()));
    }
    let by_ref = || {
        plan.args
            .iter()
            .zip(args)
            .enumerate()
            .filter(|(_, (ap, _))| ap.by_reference.is_some())
            .map(|(i, (_, kind))| {
                let (size, align) = copy(*kind);
                (i, size, align)
            })
    };
    let each: Box<[(usize, usize)]> = by_ref().map(|(_, size, align)| (size, align)).collect();
    let area = each
        .iter()
        .try_fold(CopyArea::default(), |a, &(size, align)| a.with(size, align))
        .ok_or_else(CopyArea::too_large)?;
    // No frame for the stub's pointer array either when it would not fit in one.
    Ok((Copies { area, each }, Refs::new(by_ref())))
}

/// The errno address a call with capture buffer `capture` needs (null without capture).
#[inline(always)]
pub(crate) fn errno_for(capture: *mut i32) -> *mut i32 {
    if capture.is_null() {
        std::ptr::null_mut()
    } else {
        crate::os::thread_errno()
    }
}

/// The arguments of a stub entry besides its first (the `Value`s or the argument pointers),
/// the same for both entries (see each backend's `stub` module for their registers).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntryArgs {
    /// The struct result's destination (null: scalar or void result).
    pub(crate) ret: *mut u8,
    /// The capture buffer (null: no capture).
    pub(crate) capture: *mut i32,
    /// The function called.
    pub(crate) target: *const c_void,
    /// The by-reference copies' pointer array (null: none).
    pub(crate) copies: *const *const u8,
    /// The thread's errno address (null without capture).
    pub(crate) errno_location: *mut i32,
}

impl EntryArgs {
    /// The arguments of a call with `ret`, `capture` and `target` as a function of the copies'
    /// pointer array (the errno address is the thread's with a capture buffer, else null).
    #[inline(always)]
    fn with(
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> impl Fn(*const *const u8) -> EntryArgs {
        let errno_location = errno_for(capture);
        move |copies| EntryArgs {
            ret,
            capture,
            target,
            copies,
            errno_location,
        }
    }
}

/// What a backend with a stub compiler and by-reference copies gives [`StubExecutor`]: its
/// trampoline frame, its stub's entries (the value implementing this trait keeps the stub
/// alive; the stub cache holds only a `Weak`), the copies' layout and its `linker::Arguments`
/// fast path. Everything else — the variants, `link`, the copies' frame, the struct entry,
/// the slots dispatch — is written once in [`StubExecutor`].
pub(crate) trait StubEntries: Clone + Send + Sync + 'static {
    /// The backend's trampoline frame (the interpreted path).
    type Frame: Trampoline;
    /// The address of the stub's values entry (`Copy`, `Send + Sync`: immutable code).
    type Values: Copy + Send + Sync + 'static;

    /// The `(size, align)` in bytes of the copy of a by-reference argument of kind `kind`.
    fn copy_layout(kind: ArgKind) -> (usize, usize);

    /// The stub of the signature (compiled, or found in the stub cache) with its entries, or
    /// `None` when the OS refuses executable memory (the trampoline is used). `checks` are the
    /// argument kinds' checks, `ret` the return kind.
    fn compile(plan: &CallPlan, checks: &[ArgCheck], ret: RetKind, capture: bool) -> Option<Self>;

    /// The `linker::Arguments` fast path of a handle of this signature with a stub
    /// ([`SlotsPath::None`]: none).
    fn slots_path(plan: &CallPlan, args: &[ArgKind], ret: RetKind, capture: bool) -> SlotsPath;

    /// The slots call: the target called with `slots` in the argument registers; the integer
    /// (`float == false`) or float return register's bits.
    ///
    /// # Safety
    /// The handle's [`StubEntries::slots_path`] is `Int` (`float == false`) or `Float`;
    /// `kinds` and `slots` as [`crate::backend::Executor::call_slots_int`]; `target`'s
    /// contract is the caller's.
    unsafe fn call_slots(kinds: u64, slots: &Slots, target: *const c_void, float: bool) -> u64;

    /// The values entry.
    fn values(&self) -> Self::Values;

    /// The values entry of the same signature's stub without capture, kept alive by `self`,
    /// for a capture handle with an integer or void result and no by-reference arguments
    /// (`None`, the default: the backend has none).
    fn uncaptured(&self) -> Option<Self::Values> {
        None
    }

    /// Calls the values entry `entry`: `Some(result bits)` when the arguments passed the checks
    /// and the target was called, `None` when they were rejected (nothing called or written).
    ///
    /// # Safety
    /// `values` points to the stub's `n` arguments; `a` is what the stub's plan needs; the
    /// stub is alive; calling its target with the converted arguments is sound.
    unsafe fn call_values(
        entry: Self::Values,
        values: *const Value<'_>,
        a: EntryArgs,
    ) -> Option<u64>;

    /// Calls the raw entry: the result bits.
    ///
    /// # Safety
    /// `args` holds one pointer per argument, each readable for its layout's size; the rest as
    /// [`StubEntries::call_values`].
    unsafe fn call_raw(&self, args: *const *const u8, a: EntryArgs) -> u64;
}

/// A compiled executor's stub and what its calls need around it.
#[derive(Clone)]
pub(crate) struct Compiled<E> {
    /// The stub's entries (and what keeps them alive).
    pub(crate) entries: E,
    /// The by-reference copies (none: no frame).
    pub(crate) refs: Refs,
    /// Whether the handle captures the call state.
    pub(crate) capture: bool,
    /// Whether the result is a struct (a destination is needed).
    pub(crate) struct_ret: bool,
    /// The trampoline's copies, for the `interpreted` test hook.
    pub(crate) copies: Copies,
    /// The `linker::Arguments` fast path ([`StubEntries::slots_path`]; only on the `Int`
    /// variant).
    pub(crate) slots: SlotsPath,
}

/// How a handle's calls run on a backend with a stub compiler and by-reference copies (its
/// stub entries `E`). Chosen once by [`StubExecutor::link`].
#[derive(Clone)]
pub(crate) enum StubExecutor<E> {
    /// The trampoline carries the plan out (the OS refused executable memory, or forced by
    /// the `interpreted` test hook).
    Interpreted(Copies),
    /// No capture, no by-reference arguments, an integer (not bool), float or void result:
    /// `invoke` calls the values entry through `call_int` (the entry returns a float's bits in
    /// the integer return register too, so one fast path serves both).
    Int(Compiled<E>),
    /// Every other signature with a stub: `call_values` (a bool result is normalised by the
    /// handle), the struct entry, `call_capture`.
    Stub(Compiled<E>),
}

impl<E: StubEntries> StubExecutor<E> {
    /// The executor of a handle with `plan` (argument kinds `args`, return `ret`, `capture`):
    /// a compiled stub with its fast path, or the trampoline when the OS gives no executable
    /// memory. The by-reference copy areas are computed here once ([`plan_copies`]).
    ///
    /// # Errors
    /// As [`plan_copies`].
    pub(crate) fn link(
        plan: &CallPlan,
        args: &[ArgKind],
        ret: RetKind,
        capture: bool,
    ) -> crate::Result<Self> {
        let (copies, refs) = plan_copies(plan, args, E::copy_layout)?;
        let Some(refs) = refs else {
            return Ok(StubExecutor::Interpreted(copies));
        };
        let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
        let Some(entries) = E::compile(plan, &checks, ret, capture) else {
            return Ok(StubExecutor::Interpreted(copies));
        };
        let int = !capture
            && refs.each.is_empty()
            && matches!(ret, RetKind::Void | RetKind::Scalar(_))
            && ret != RetKind::Scalar(ScalarKind::Bool);
        let c = Compiled {
            entries,
            refs,
            capture,
            struct_ret: matches!(ret, RetKind::Group { .. }),
            copies,
            slots: SlotsPath::None,
        };
        Ok(if int {
            let slots = E::slots_path(plan, args, ret, capture);
            StubExecutor::Int(Compiled { slots, ..c })
        } else {
            StubExecutor::Stub(c)
        })
    }

    /// The compiled stub, if any.
    #[inline(always)]
    pub(crate) fn compiled(&self) -> Option<&Compiled<E>> {
        match self {
            StubExecutor::Interpreted(_) => None,
            StubExecutor::Int(c) | StubExecutor::Stub(c) => Some(c),
        }
    }

    /// The trampoline's copies.
    pub(crate) fn copies(&self) -> &Copies {
        match self {
            StubExecutor::Interpreted(copies) => copies,
            StubExecutor::Int(c) | StubExecutor::Stub(c) => &c.copies,
        }
    }
}

impl<E: StubEntries> crate::backend::Executor for StubExecutor<E> {
    type Image = Absent;
    type StructEntry = StructEntry<E>;
    type Uncaptured<'a> = Uncaptured<E>;

    /// One call through the backend's trampoline with the linked copies (see [`interpret`]):
    /// a by-reference argument's bytes are copied into this call's linker-stack frame and the
    /// copy's address passed.
    ///
    /// # Errors
    /// As [`interpret`]: the first error of `arg`; [`crate::Error::OutOfMemory`] for the
    /// copies' frame; [`kinds_mismatch`] when `plan` has more by-reference arguments than the
    /// linked one (nothing is called then).
    #[inline(never)]
    unsafe fn interpret(
        &self,
        plan: &CallPlan,
        target: *const c_void,
        capture: *mut i32,
        ret: *mut u8,
        arg: impl FnMut(usize) -> crate::Result<ArgSource>,
    ) -> crate::Result<u64> {
        let copies = self.copies();
        let each = copies.each.iter().copied();
        // SAFETY: forwarded to the caller.
        unsafe { interpret::<E::Frame>(plan, target, capture, ret, copies.area, each, arg) }
    }

    #[cfg(feature = "internals")]
    fn interpreted(&self) -> Self {
        StubExecutor::Interpreted(self.copies().clone())
    }

    #[inline(always)]
    fn is_compiled(&self) -> bool {
        self.compiled().is_some()
    }

    /// `nargs` for the `Int` variant.
    #[inline(always)]
    fn int_arity(&self, nargs: usize) -> usize {
        match self {
            StubExecutor::Int(_) => nargs,
            _ => usize::MAX,
        }
    }

    // `float_arity` keeps the default: float results take `call_int` (the values entry returns
    // their bits in the integer return register).

    #[inline(always)]
    unsafe fn call_int(&self, args: *const u8, target: *const c_void) -> Option<u64> {
        let StubExecutor::Int(c) = self else {
            // SAFETY: `int_arity` is not `usize::MAX` only for this variant (caller).
            unsafe { std::hint::unreachable_unchecked() }
        };
        let a = EntryArgs {
            ret: std::ptr::null_mut(),
            capture: std::ptr::null_mut(),
            target,
            copies: std::ptr::null(),
            errno_location: std::ptr::null_mut(),
        };
        // SAFETY: the values entry checks every tag and segment length before anything else;
        // no capture, no by-reference copies and no return destination (a scalar or void
        // return; `StubExecutor::Int`); the rest is the caller's contract.
        unsafe { E::call_values(c.entries.values(), args.cast(), a) }
    }

    /// The backend's slots path, on the `Int` variant only.
    #[inline(always)]
    fn slots_path(&self) -> SlotsPath {
        match self {
            StubExecutor::Int(c) => c.slots,
            _ => SlotsPath::None,
        }
    }

    #[inline(always)]
    unsafe fn call_slots_int(&self, kinds: u64, slots: &Slots, target: *const c_void) -> u64 {
        // SAFETY: `slots_path` is `Int` (caller).
        unsafe { E::call_slots(kinds, slots, target, false) }
    }

    #[inline(always)]
    unsafe fn call_slots_float(&self, kinds: u64, slots: &Slots, target: *const c_void) -> u64 {
        // SAFETY: `slots_path` is `Float` (caller).
        unsafe { E::call_slots(kinds, slots, target, true) }
    }

    /// The values entry of a struct return without capture and without by-reference
    /// arguments (it passes `ret` to the target as the ABI's result pointer, or stores a
    /// register-returned struct there).
    #[inline(always)]
    fn struct_entry(&self) -> Option<StructEntry<E>> {
        match self {
            StubExecutor::Stub(c) if c.struct_ret && !c.capture && c.refs.each.is_empty() => {
                Some(StructEntry(c.entries.values()))
            }
            _ => None,
        }
    }

    #[inline(always)]
    fn uncaptured(&self) -> Option<Uncaptured<E>> {
        self.compiled()?.entries.uncaptured().map(Uncaptured)
    }

    #[inline(always)]
    unsafe fn call_values(
        &self,
        args: *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        let c = self.compiled()?;
        let values = args.cast::<Value<'_>>();
        let a = EntryArgs::with(ret, capture, target);
        let entry = c.entries.values();
        if c.refs.each.is_empty() {
            // SAFETY: the caller's contract; the stub checks every argument first; no
            // by-reference arguments.
            return unsafe { E::call_values(entry, values, a(std::ptr::null())) };
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
            c.refs
                .with_copies(source, |copies| E::call_values(entry, values, a(copies)))
        }
    }

    /// The capture stub, for a capture handle with a scalar or void return.
    #[inline(always)]
    unsafe fn call_capture(
        &self,
        args: *const u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        match self.compiled() {
            // SAFETY: the caller's contract; a scalar or void return needs no destination.
            Some(c) if c.capture && !c.struct_ret => unsafe {
                self.call_values(args, std::ptr::null_mut(), capture, target)
            },
            _ => None,
        }
    }

    #[inline(always)]
    unsafe fn call_raw(
        &self,
        args: *const *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        let c = self.compiled()?;
        let a = EntryArgs::with(ret, capture, target);
        if c.refs.each.is_empty() {
            // SAFETY: the caller's contract; no by-reference arguments.
            return Some(unsafe { c.entries.call_raw(args, a(std::ptr::null())) });
        }
        // SAFETY: `args[i]` is readable for argument i's size (caller); `copies` holds one
        // pointer per by-reference argument, each to a copy of its bytes (`with_copies`).
        unsafe {
            c.refs.with_copies(
                |r| Some(args.add(r.index).read()),
                |copies| Some(c.entries.call_raw(args, a(copies))),
            )
        }
    }
}

/// The values entry of a struct return without capture and without by-reference arguments
/// ([`crate::backend::Executor::struct_entry`]). `Copy`; valid while the executor it came
/// from is alive.
pub(crate) struct StructEntry<E: StubEntries>(E::Values);

impl<E: StubEntries> Clone for StructEntry<E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E: StubEntries> Copy for StructEntry<E> {}

impl<E: StubEntries> StructCall for StructEntry<E> {
    #[inline(always)]
    unsafe fn call(self, args: &[Value<'_>], ret: *mut u8, target: *const c_void) -> bool {
        let a = EntryArgs {
            ret,
            capture: std::ptr::null_mut(),
            target,
            copies: std::ptr::null(),
            errno_location: std::ptr::null_mut(),
        };
        // SAFETY: the stub checks every argument first; no capture (no buffer, no errno
        // address) and no by-reference copies; `ret` and the rest are the caller's contract.
        unsafe { E::call_values(self.0, args.as_ptr(), a).is_some() }
    }
}

/// A capture handle's values entry of its signature's stub without capture
/// ([`crate::backend::Executor::uncaptured`]); kept alive by the executor it came from.
pub(crate) struct Uncaptured<E: StubEntries>(E::Values);

impl<E: StubEntries> Clone for Uncaptured<E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E: StubEntries> Copy for Uncaptured<E> {}

impl<E: StubEntries> UncapturedCall for Uncaptured<E> {
    #[inline(always)]
    unsafe fn call(self, args: *const u8, target: *const c_void) -> Option<u64> {
        let a = EntryArgs {
            ret: std::ptr::null_mut(),
            capture: std::ptr::null_mut(),
            target,
            copies: std::ptr::null(),
            errno_location: std::ptr::null_mut(),
        };
        // SAFETY: the stub checks every argument first; it captures nothing, needs no return
        // destination (integer or void result) and has no by-reference arguments; the rest is
        // the caller's contract.
        unsafe { E::call_values(self.0, args.cast(), a) }
    }
}
