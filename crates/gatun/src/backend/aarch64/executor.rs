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
//! The executor itself (its variants, fast paths and the by-reference copy frame) is the one
//! shared with the other by-reference ABI, [`by_reference::Executor`]; this module gives it the
//! AArch64 entry calls ([`Entries`]) and `link`, `image`, `struct_entry` and `uncaptured`.
//!
//! # By-reference arguments (AAPCS64 §6.8.2 rule B.3)
//! A composite over 16 bytes that is not an HFA is copied by the caller and passed as the
//! copy's address ([`crate::abi::ArgPlan::by_reference`]). The copies of one call live in ONE
//! frame of [`crate::memory::linker_stack`], pushed per call with the size and alignment
//! computed at link time ([`crate::backend::CopyArea`]; no frame when the plan has none) and closed when the
//! call returns. Frames nest LIFO, so an upcall running on top of the call (and any downcall
//! it makes) pushes and pops its own frames above it; the BufferStack falls back to the heap
//! by itself when its block is full. The callee may write through the pointer: it writes the
//! copy, never the caller's segment.
//!
//! A compiled stub takes the copies' addresses in `x4` as an array of pointers, one per
//! by-reference argument in argument order. That array is the first 8 n bytes of the same
//! frame (n by-reference arguments), the copies follow at offsets computed at link time
//! ([`by_reference::Refs`], laid out by [`by_reference::plan_copies`]), so a call makes one frame and no heap allocation. On the value path each
//! by-reference `Value` must be a `Value::Segment` of at least the struct's size before its
//! bytes are copied; otherwise nothing is called and the handle interprets (and reports it).
//!
//! # Invariants (the unsafe story of this module)
//! - An [`Executor`] was built by [`Executor::link`] from the handle's own plan, argument
//!   kinds, return kind and capture flag and never changes: its by-reference sizes follow
//!   `plan.args` in order; the fast path is one variant, so a handle cannot hold inconsistent
//!   fast paths; [`Executor::int_arity`] is derived from it.
//! - Every entry is kept alive by the `Arc<Stub>` in the same [`Entries`] (the stub cache
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
use crate::backend::by_reference::{self, EntryArgs, StubEntries};
use crate::backend::{ArgKind, RetKind, Slots, SlotsPath};
use crate::error::Result;
use crate::layout::ScalarKind;
use crate::value::Value;

/// The entries of an AArch64 stub, kept alive by the `Arc<Stub>` beside them (the stub cache
/// holds only a `Weak`).
#[derive(Clone)]
pub(crate) struct Entries {
    raw: RawFn,
    values: ValuesEntry,
    /// A capture handle with an integer or void result and no by-reference arguments: the
    /// values entry of the same signature's stub *without* capture, kept alive with it (the
    /// system-call adapter zeroes and reads errno itself, [`Executor::uncaptured`]).
    uncaptured: Option<(ValuesEntry, Arc<Stub>)>,
    _keep: Arc<Stub>,
}

impl StubEntries for Entries {
    type Frame = CallFrame;

    #[inline(always)]
    unsafe fn call_values(&self, values: *const Value<'_>, a: EntryArgs) -> Option<u64> {
        let (ret, capture, target) = (a.ret, a.capture, a.target);
        // SAFETY: the caller's contract.
        unsafe {
            self.values
                .call(values, ret, capture, target, a.copies, a.errno_location)
        }
    }

    #[inline(always)]
    unsafe fn call_raw(&self, args: *const *const u8, a: EntryArgs) -> u64 {
        let (ret, capture, target) = (a.ret, a.capture, a.target);
        // SAFETY: the caller's contract.
        unsafe { (self.raw)(args, ret, capture, target, a.copies, a.errno_location) }
    }
}

/// How a handle's calls run (the trampoline, the integer fast path or the stub; see
/// [`by_reference::Executor`]). Chosen once by [`Executor::link`].
pub(crate) type Executor = by_reference::Executor<Entries>;

#[cfg(feature = "internals")]
stub_internals! {
    compile: |plan, checks, capture| super::stub::compile(plan, checks, capture).bytes,
    build_errors: "[`crate::Error::Unsupported`] if the OS refuses executable memory.",
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
        let (copies, refs) = by_reference::plan_copies(plan, args, |kind| match kind {
            ArgKind::Group { size, align } => (size, align),
            // B.3 applies to composites only; a scalar never has a by-reference plan.
            ArgKind::Scalar(k) => (k.byte_size(), k.byte_size()),
        })?;
        let Some(refs) = refs else {
            return Ok(Executor::Interpreted(copies));
        };
        let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
        let Ok(stub) = super::stub::stub_for(plan, &checks, capture) else {
            return Ok(Executor::Interpreted(copies));
        };
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
        let entries = Entries {
            raw: stub.raw,
            values: stub.values,
            uncaptured,
            _keep: stub,
        };
        let slots = super::slots::path_of(plan, args, ret, capture);
        Ok(Executor::of_stub(entries, refs, copies, ret, capture).with_slots(slots))
    }

    /// The `linker::Arguments` fast path ([`super::slots`]): `Int` or `Float` for a handle
    /// without capture, not variadic, of at most eight scalar arguments and a non-bool scalar
    /// or void return (with a stub: the trampoline test hook has none), else `None`.
    #[inline(always)]
    pub(crate) fn slots_path(&self) -> SlotsPath {
        self.slots_choice()
    }

    /// The slots fast path of an integer or void return: the registers loaded from `slots` in
    /// Rust and the target called ([`super::slots::DirectRegisters`]); returns x0.
    ///
    /// # Safety
    /// [`Executor::slots_path`] is `Int`; `kinds` is the descriptor's kind word
    /// (`linker::arguments`) and `slots` holds one 8-byte slot per descriptor argument with a
    /// value of its kind in its low bytes; the callee's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call_slots_int(
        &self,
        kinds: u64,
        slots: &Slots,
        target: *const c_void,
    ) -> u64 {
        // SAFETY: the slots of every argument `kinds` names are initialised; the handle's plan
        // is the kinds' (at most eight scalars, all in registers), not variadic, with an
        // integer or void return (caller, `slots_path`).
        unsafe { super::slots::DirectRegisters::of(kinds, slots).call(target, false) }
    }

    /// As [`Executor::call_slots_int`] for a float return: d0's bits.
    ///
    /// # Safety
    /// As [`Executor::call_slots_int`], with [`Executor::slots_path`] `Float`.
    #[inline(always)]
    pub(crate) unsafe fn call_slots_float(
        &self,
        kinds: u64,
        slots: &Slots,
        target: *const c_void,
    ) -> u64 {
        // SAFETY: as in `call_slots_int`; the result is in v0.
        unsafe { super::slots::DirectRegisters::of(kinds, slots).call(target, true) }
    }

    /// No image entries on this backend.
    #[inline(always)]
    pub(crate) fn image(&self) -> Option<super::ImageEntry> {
        None
    }

    /// The entry of a struct return without capture and without by-reference arguments (the
    /// values entry, which passes `ret` to the target in x8, AAPCS64 §6.9, or stores a
    /// register-returned struct there), if the handle has one. The handle keeps it beside this
    /// executor, which keeps the stub alive.
    #[inline(always)]
    pub(crate) fn struct_entry(&self) -> Option<StructEntry> {
        match self {
            Executor::Stub(c) if c.struct_ret && !c.capture && c.refs.each.is_empty() => {
                Some(StructEntry(c.entries.values))
            }
            _ => None,
        }
    }

    /// A capture handle's entry into the same signature's stub *without* capture (the
    /// system-call adapter, which zeroes and reads errno itself), if it has one: capture, an
    /// integer or void result, no by-reference arguments, a stub.
    #[inline(always)]
    pub(crate) fn uncaptured(&self) -> Option<Uncaptured> {
        self.compiled()?.entries.uncaptured.as_ref().map(|(v, _)| Uncaptured(*v))
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

/// The values entry of a struct return without capture and without by-reference arguments
/// ([`Executor::struct_entry`]). `Copy`; valid while the executor it came from is alive.
#[derive(Clone, Copy)]
pub(crate) struct StructEntry(ValuesEntry);

impl StructEntry {
    /// Calls it with `args` (a `&[Value]`), the struct written at `ret` (by the target through
    /// x8, or by the stub from the return registers): `true` if it ran, `false` if the stub
    /// rejected an argument (then nothing was called and nothing written).
    ///
    /// # Safety
    /// The executor it came from is alive; `args` holds one `Value` per descriptor
    /// argument; `ret` is writable for the return layout's size and aligned for it; the
    /// callee's contract is the caller's.
    #[inline(always)]
    pub(crate) unsafe fn call(
        self,
        args: &[Value<'_>],
        ret: *mut u8,
        target: *const c_void,
    ) -> bool {
        // SAFETY: the stub checks every argument first; no capture (no buffer, no errno
        // address) and no by-reference copies; `ret` and the rest are the caller's contract.
        unsafe {
            self.0
                .call(
                    args.as_ptr(),
                    ret,
                    std::ptr::null_mut(),
                    target,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                )
                .is_some()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::by_reference::Refs;
    use crate::backend::CopyArea;
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
        // a struct return without capture or by-reference arguments has the struct entry
        assert!(interpreted.struct_entry().is_none());
        let plain_struct = matches!(ret, RetKind::Group { .. })
            && !capture
            && plan.args.iter().all(|a| a.by_reference.is_none());
        assert_eq!(exec.struct_entry().is_some(), plain_struct, "{d}");
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
