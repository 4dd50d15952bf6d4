//! The x86-64 System V executor of a downcall handle, chosen once at link time: a compiled stub
//! (`stub`) with the one fast path its signature allows, or the trampoline (`CallFrame`).
//!
//! The handle layer (`linker::handle`) is ABI-neutral: it checks counts, capture buffers and
//! return segments, builds `Value`s, and calls the methods below; everything that knows the
//! stub's entries, the r12 rejection protocol or the trampoline's frame lives here.
//!
//! # Invariants (the unsafe story of this module)
//! - An [`Executor`] was built by [`Executor::link`] from the handle's own plan, argument kinds,
//!   return kind and capture flag, and never changes: the fast path is one variant of the
//!   executor, so a handle cannot hold inconsistent fast paths.
//!   [`int_arity`](crate::backend::Executor::int_arity) and [`float_arity`](crate::backend::Executor::float_arity) are derived from it.
//! - Every entry is kept alive by the `Arc<Stub>` in the same `Compiled` (the stub cache holds
//!   only a `Weak`).
//! - The value entries check every argument's tag and segment length before anything else and
//!   report a mismatch without calling (`entry`); callers then take [`interpret`](crate::backend::Executor::interpret),
//!   which performs the same checks in Rust, so the same values are accepted either way.

use std::ffi::c_void;
use std::sync::Arc;

use super::entry::CheckedEntry;
use super::image::ImageEntry;
use super::slots::{DirectRegisters, SlotsEntry};
use super::stub::{ArgCheck, Stub, StubFn};
use super::CallFrame;
use crate::abi::{CallPlan, Location, Register, ReturnPlan};
use crate::backend::{ArgKind, ArgSource, RetKind, Slots, SlotsPath, StructCall, UncapturedCall};
use crate::error::Result;
use crate::layout::ScalarKind;
use crate::value::Value;

/// A compiled stub's entries, and the stub kept alive.
#[derive(Clone)]
pub(crate) struct StubEntry {
    raw: StubFn,
    values: CheckedEntry,
    image: Option<CheckedEntry>,
    /// The slots entry (`linker::Arguments`), or the target itself for a function of no
    /// arguments on the `Int` path.
    slots: Option<SlotsEntry>,
    _keep: Arc<Stub>,
}

/// How a handle's calls run. Chosen once by [`Executor::link`]. Every variant but
/// `Interpreted` is a compiled stub with the one fast path its signature allows (one enum, so
/// each fast path is one discriminant test).
#[derive(Clone)]
pub(crate) enum Executor {
    /// The trampoline carries the plan out (the OS refused executable memory, or forced by
    /// the `interpreted` test hook).
    Interpreted,
    /// No capture, a non-bool scalar or void result in rax: `invoke` calls this value entry
    /// with `call_plain` (for a function of no arguments, not variadic, it is the target itself:
    /// its stub would only jump to it, it reads none of the stub parameters, never rejects and
    /// preserves r12 as every SysV function does).
    Int(Compiled, CheckedEntry),
    /// No capture, a float result in xmm0: `call_plain_float` on this value entry.
    Float(Compiled, CheckedEntry),
    /// No capture, a struct returned in registers, with an image entry.
    Image(Compiled, ImageEntry),
    /// No capture, any other struct return: the value entry writes through `ret`
    /// ([`struct_entry`](crate::backend::Executor::struct_entry)). For a MEMORY-class return of a function of no arguments,
    /// not variadic, the entry is the target itself: its stub would only move `ret` into rdi
    /// and jump to it, and [`StructEntry::call`] passes `ret` in rdi already.
    Struct(Compiled, CheckedEntry),
    /// Capture, a scalar or void result (the system-call adapter's capture-buffer path).
    Capture(Compiled),
    /// As `Capture`, for an integer or void result, with the same signature's stub without
    /// capture (the system-call adapter zeroes and reads errno itself).
    CaptureUncaptured(Compiled, StubEntry),
    /// A bool result without capture (normalised on the way out), or capture with a struct
    /// return: the value entry through [`call_values`](crate::backend::Executor::call_values).
    Plain(Compiled),
}

/// A compiled executor's stub.
#[derive(Clone)]
pub(crate) struct Compiled {
    stub: StubEntry,
    /// Whether the result is a float in xmm0 (then a value entry may leave rax undefined).
    ret_in_xmm: bool,
}

/// Compiles (or finds in the cache) the stub of a signature; `None` → the trampoline is used.
fn compiled_stub(plan: &CallPlan, args: &[ArgKind], capture: bool) -> Option<StubEntry> {
    let checks: Vec<ArgCheck> = args.iter().map(|a| ArgCheck::of(*a)).collect();
    let stub = super::stub::stub_for(plan, &checks, capture)?;
    Some(StubEntry {
        raw: stub.raw,
        values: stub.values,
        image: stub.image,
        slots: stub.slots,
        _keep: stub,
    })
}

impl Executor {
    /// The executor of a handle calling `target` with `plan` (argument kinds `args`, return
    /// `ret`, `capture`): a compiled stub with its fast path, or the trampoline when the OS
    /// gives no executable memory.
    ///
    pub(crate) fn link(
        plan: &CallPlan,
        args: &[ArgKind],
        ret: RetKind,
        capture: bool,
        target: *const c_void,
    ) -> Executor {
        let Some(stub) = compiled_stub(plan, args, capture) else {
            return Executor::Interpreted;
        };
        let ret_in_xmm = matches!(plan.ret, ReturnPlan::Scalar(Register::Vector(_)));
        let mut c = Compiled { stub, ret_in_xmm };
        match (capture, ret) {
            (false, RetKind::Scalar(ScalarKind::Bool)) => Executor::Plain(c),
            (false, RetKind::Void | RetKind::Scalar(_))
                if args.is_empty()
                    && !plan.is_variadic()
                    && matches!(
                        plan.ret,
                        ReturnPlan::Void | ReturnPlan::Scalar(Register::Int(_))
                    )
                    && !target.is_null() =>
            {
                // SAFETY: `target` is non-null (checked just above; the linker rejects null
                // symbols) and is a function linked as taking no arguments; see
                // `Executor::Int`.
                let code = unsafe { std::ptr::NonNull::new_unchecked(target.cast_mut().cast()) };
                // SAFETY: as above: it reads no parameter, so it is its own slots entry too.
                c.stub.slots = Some(unsafe { SlotsEntry::new(code) });
                // SAFETY: as above.
                let entry = unsafe { CheckedEntry::new(code) };
                Executor::Int(c, entry)
            }
            (false, RetKind::Void | RetKind::Scalar(_)) if ret_in_xmm => {
                let entry = c.stub.values;
                Executor::Float(c, entry)
            }
            (false, RetKind::Void | RetKind::Scalar(_)) => {
                let entry = c.stub.values;
                Executor::Int(c, entry)
            }
            (false, RetKind::Group { size, align }) => {
                match ImageEntry::new(c.stub.image, &plan.ret, size, align) {
                    Some(image) => Executor::Image(c, image),
                    None if args.is_empty()
                        && !plan.is_variadic()
                        && matches!(plan.ret, ReturnPlan::InMemory)
                        && plan.hidden_return_pointer == Some(Location::Int(0))
                        && !target.is_null() =>
                    {
                        // SAFETY: `target` is non-null (checked just above) and is a function
                        // linked as taking no arguments and returning in memory through rdi;
                        // see `Executor::Struct`.
                        let entry = unsafe {
                            CheckedEntry::new(std::ptr::NonNull::new_unchecked(
                                target.cast_mut().cast(),
                            ))
                        };
                        Executor::Struct(c, entry)
                    }
                    None => {
                        let entry = c.stub.values;
                        Executor::Struct(c, entry)
                    }
                }
            }
            // Integer or void results only: its caller reads rax, and the system-call adapter
            // takes only `int` and `long` results.
            (true, RetKind::Void | RetKind::Scalar(_)) if !ret_in_xmm => {
                match compiled_stub(plan, args, false) {
                    Some(uncaptured) => Executor::CaptureUncaptured(c, uncaptured),
                    None => Executor::Capture(c),
                }
            }
            (true, RetKind::Void | RetKind::Scalar(_)) => Executor::Capture(c),
            (true, RetKind::Group { .. }) => Executor::Plain(c),
        }
    }

    /// The compiled stub, if any.
    #[inline(always)]
    fn compiled(&self) -> Option<&Compiled> {
        match self {
            Executor::Interpreted => None,
            Executor::Int(c, _)
            | Executor::Float(c, _)
            | Executor::Image(c, _)
            | Executor::Struct(c, _)
            | Executor::Capture(c)
            | Executor::CaptureUncaptured(c, _)
            | Executor::Plain(c) => Some(c),
        }
    }
}

impl crate::backend::Executor for Executor {
    type Image = ImageEntry;
    type StructEntry = StructEntry;
    type Uncaptured<'a> = Uncaptured<'a>;

    /// The trampoline executor (the test hook that forces the interpreted path).
    #[cfg(feature = "internals")]
    fn interpreted(&self) -> Executor {
        Executor::Interpreted
    }

    /// Whether calls run a compiled stub.
    fn is_compiled(&self) -> bool {
        self.compiled().is_some()
    }

    /// `nargs` (the descriptor's argument count) when [`call_int`](crate::backend::Executor::call_int) applies, else
    /// `usize::MAX` (no slice is that long), so that `invoke` decides with one compare.
    fn int_arity(&self, nargs: usize) -> usize {
        match self {
            Executor::Int(..) => nargs,
            _ => usize::MAX,
        }
    }

    /// As [`int_arity`](crate::backend::Executor::int_arity), for [`call_float`](crate::backend::Executor::call_float).
    fn float_arity(&self, nargs: usize) -> usize {
        match self {
            Executor::Float(..) => nargs,
            _ => usize::MAX,
        }
    }

    /// The integer fast path: the result register (rax), or `None` if the stub rejected an
    /// argument (nothing was called).
    ///
    /// # Safety
    /// [`int_arity`](crate::backend::Executor::int_arity) is not `usize::MAX`; `args` points to one `Value` per descriptor
    /// argument; the callee's contract is the caller's.
    #[inline(always)]
    unsafe fn call_int(&self, args: *const u8, target: *const c_void) -> Option<u64> {
        let Executor::Int(_, entry) = self else {
            // SAFETY: `int_arity` is not `usize::MAX` only for this variant (caller).
            unsafe { std::hint::unreachable_unchecked() }
        };
        // SAFETY: the value entry checks every tag and segment length before anything else; no
        // capture and no return destination (a scalar or void return); the rest is the
        // caller's contract.
        unsafe { entry.call_plain(args, target) }
    }

    /// As [`call_int`](crate::backend::Executor::call_int) for a float result (xmm0's low 64 bits).
    ///
    /// # Safety
    /// As [`call_int`](crate::backend::Executor::call_int), with [`float_arity`](crate::backend::Executor::float_arity).
    #[inline(always)]
    unsafe fn call_float(&self, args: *const u8, target: *const c_void) -> Option<u64> {
        let Executor::Float(_, entry) = self else {
            // SAFETY: `float_arity` is not `usize::MAX` only for this variant (caller).
            unsafe { std::hint::unreachable_unchecked() }
        };
        // SAFETY: as in `call_int`; the result is a float, in xmm0.
        unsafe { entry.call_plain_float(args, target) }
    }

    /// Which slots fast path (`linker::Arguments`) calls take: `Int` for the `Int` executor,
    /// `Float` for the `Float` one, when the stub has a slots entry (every argument a scalar);
    /// else `None`.
    fn slots_path(&self) -> SlotsPath {
        match self {
            Executor::Int(c, _) if c.stub.slots.is_some() => SlotsPath::Int,
            Executor::Float(c, _) if c.stub.slots.is_some() => SlotsPath::Float,
            _ => SlotsPath::None,
        }
    }

    /// The slots fast path of an integer or void return: rax. Arguments that fit the
    /// registers (at most six integer-class, at most eight floats) are passed straight from
    /// Rust ([`DirectRegisters`]: with a constant `kinds`, the registers are loaded from the
    /// caller's values and the target called, no stub); others (stack arguments) go through
    /// the stub's slots entry.
    ///
    /// # Safety
    /// [`slots_path`](crate::backend::Executor::slots_path) is `Int`; `kinds` is the descriptor's kind word
    /// (`linker::arguments`) and `slots` holds one 8-byte slot per descriptor argument with a
    /// value of its kind in its low bytes; the callee's contract is the caller's.
    #[inline(always)]
    unsafe fn call_slots_int(&self, kinds: u64, slots: &Slots, target: *const c_void) -> u64 {
        let Executor::Int(
            Compiled {
                stub: StubEntry {
                    slots: Some(entry), ..
                },
                ..
            },
            _,
        ) = self
        else {
            // SAFETY: `slots_path` is `Int` only for this shape (caller).
            unsafe { std::hint::unreachable_unchecked() }
        };
        // SAFETY: the slots of every argument `kinds` names are initialised (caller).
        match unsafe { DirectRegisters::of(kinds, slots) } {
            // SAFETY: the handle's plan is the kinds' (caller), not variadic (no slots entry
            // otherwise), and returns in rax.
            Some(regs) => unsafe { regs.call(target, false) },
            // SAFETY: the caller's contract; no capture, no return destination.
            None => unsafe { entry.call_int(slots.as_ptr().cast(), target) },
        }
    }

    /// As [`call_slots_int`](crate::backend::Executor::call_slots_int) for a float return: xmm0's low 64 bits.
    ///
    /// # Safety
    /// As [`call_slots_int`](crate::backend::Executor::call_slots_int), with [`slots_path`](crate::backend::Executor::slots_path) `Float`.
    #[inline(always)]
    unsafe fn call_slots_float(&self, kinds: u64, slots: &Slots, target: *const c_void) -> u64 {
        let Executor::Float(
            Compiled {
                stub: StubEntry {
                    slots: Some(entry), ..
                },
                ..
            },
            _,
        ) = self
        else {
            // SAFETY: `slots_path` is `Float` only for this shape (caller).
            unsafe { std::hint::unreachable_unchecked() }
        };
        // SAFETY: as in `call_slots_int`.
        match unsafe { DirectRegisters::of(kinds, slots) } {
            // SAFETY: as in `call_slots_int`; the result is in xmm0.
            Some(regs) => unsafe { regs.call(target, true) },
            // SAFETY: the caller's contract; the slots entry leaves a float result in xmm0.
            None => unsafe { entry.call_float(slots.as_ptr().cast(), target) },
        }
    }

    /// The image entry of a register-returned struct without capture, if the handle has one.
    #[inline(always)]
    fn image(&self) -> Option<ImageEntry> {
        match self {
            Executor::Image(_, image) => Some(*image),
            _ => None,
        }
    }

    /// The entry of a struct return without capture that the stub writes through `ret` (the
    /// value entry of [`Executor::Struct`]: a MEMORY-class return through the hidden pointer,
    /// or a register return without an image entry), if the handle has one. The handle keeps
    /// it beside this executor, which keeps the stub alive.
    #[inline(always)]
    fn struct_entry(&self) -> Option<StructEntry> {
        match self {
            Executor::Struct(_, entry) => Some(StructEntry(*entry)),
            _ => None,
        }
    }

    /// Any call through the value entry: the scalar result's bits (rax, or xmm0 for a float),
    /// or `None` if there is no stub or it rejected an argument (nothing was called).
    ///
    /// # Safety
    /// `args` points to one `Value` per descriptor argument; `ret` is null (scalar or void
    /// return) or writable and aligned for the return layout; `capture` is null (no capture)
    /// or a capture buffer (4 bytes, 4-aligned) of a capture handle; the callee's contract is
    /// the caller's.
    #[inline(always)]
    unsafe fn call_values(
        &self,
        args: *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        let c = self.compiled()?;
        let errno = if capture.is_null() {
            std::ptr::null_mut()
        } else {
            crate::os::thread_errno()
        };
        // SAFETY: the caller's contract; the stub checks every argument first.
        let [rax, xmm0] = unsafe { c.stub.values.call(args, ret, capture, target, errno) }?;
        // A float result is in xmm0 (the value entry may tail-jump to the target).
        Some(if c.ret_in_xmm { xmm0 } else { rax })
    }

    /// The system-call adapter's fast path: the capture stub with the adapter's buffer, the raw
    /// result register (rax). `None` when this path does not apply (not a capture handle with a
    /// scalar or void return, no stub) or the stub rejected an argument (nothing was called).
    ///
    /// # Safety
    /// As [`call_values`](crate::backend::Executor::call_values) with a non-null `capture`.
    #[inline(always)]
    unsafe fn call_capture(
        &self,
        args: *const u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        let (Executor::Capture(Compiled { stub, .. })
        | Executor::CaptureUncaptured(Compiled { stub, .. }, _)) = self
        else {
            return None;
        };
        // SAFETY: the caller's contract; the stub checks every argument first.
        let regs = unsafe {
            stub.values.call(
                args,
                std::ptr::null_mut(),
                capture,
                target,
                crate::os::thread_errno(),
            )
        };
        // A capture stub always has the leaf frame, which copies a float result to rax.
        regs.map(|[rax, _]| rax)
    }

    /// A capture handle's entry into the same signature's stub *without* capture (the
    /// system-call adapter, which zeroes and reads errno itself), if it has one: capture, an
    /// integer or void result, a stub.
    #[inline(always)]
    fn uncaptured(&self) -> Option<Uncaptured<'_>> {
        match self {
            Executor::CaptureUncaptured(_, stub) => Some(Uncaptured(stub)),
            _ => None,
        }
    }

    /// The raw path through the stub: writes a struct result at `ret` and returns the scalar
    /// result's register bits; `None` without a stub (nothing was called).
    ///
    /// # Safety
    /// `args` holds one pointer per descriptor argument, each readable for its layout's size;
    /// `ret` writable (and aligned) for the return layout's size; `capture` null or a capture
    /// buffer of a capture handle; the callee's contract is the caller's.
    #[inline(always)]
    unsafe fn call_raw(
        &self,
        args: *const *const u8,
        ret: *mut u8,
        capture: *mut i32,
        target: *const c_void,
    ) -> Option<u64> {
        let c = self.compiled()?;
        let errno = if capture.is_null() {
            std::ptr::null_mut()
        } else {
            crate::os::thread_errno()
        };
        // SAFETY: the caller's contract.
        Some(unsafe {
            (c.stub.raw)(
                args.cast(),
                ret,
                capture,
                target,
                std::ptr::null_mut(),
                errno,
            )
        })
    }

    /// The trampoline path, for every handle (values a stub rejected included): argument `i`'s
    /// source comes from `arg(i)` for `i` in `0..plan.args.len()` (its first error is
    /// returned before anything is called); sets the hidden return pointer to `ret`, calls,
    /// stores a register-returned struct at `ret`, and returns the scalar result's register
    /// bits. Out of line: the stub paths inline only their stub call.
    ///
    /// # Safety
    /// Each `ArgSource::Bytes` is readable for its layout's size; `ret` is writable (and
    /// aligned) for the return layout's size, or null for scalar/void returns; `capture` null
    /// or a capture buffer of a capture handle; the callee's contract is the caller's.
    #[inline(never)]
    unsafe fn interpret(
        &self,
        plan: &CallPlan,
        target: *const c_void,
        capture: *mut i32,
        ret: *mut u8,
        mut arg: impl FnMut(usize) -> Result<ArgSource>,
    ) -> Result<u64> {
        // The outgoing stack area: on the Rust stack up to 2048 bytes, else in a linker-stack
        // frame (`with_stack_args`).
        crate::backend::with_stack_args(plan.stack_bytes, |stack| {
            let mut frame = CallFrame::new(target, plan, stack);
            frame.errno = capture;
            for (i, ap) in plan.args.iter().enumerate() {
                // SAFETY: the source is 8 bytes covering any scalar, or the argument's bytes
                // (caller).
                arg(i)?.with_bytes(|src| unsafe {
                    crate::backend::load_arg(ap, src, |to, v| frame.store(stack, to, v))
                });
            }
            if let Some(loc) = plan.hidden_return_pointer {
                frame.store(stack, loc, ret as usize as u64);
            }
            // SAFETY: the frame follows the handle's validated plan; the caller vouches for
            // the callee's contract.
            unsafe { frame.call(stack) };
            // SAFETY: `ret` has the return layout's size for a register-returned struct
            // (caller).
            unsafe { crate::backend::store_return(plan, ret, |r| frame.returned(r)) };
            Ok(frame.returned(crate::backend::scalar_register(plan)))
        })
    }
}

/// A capture handle's value entry of its signature's stub without capture
/// (`uncaptured`), borrowed from its executor.
#[derive(Clone, Copy)]
pub(crate) struct Uncaptured<'a>(&'a StubEntry);

impl UncapturedCall for Uncaptured<'_> {
    /// Calls it: rax, or `None` if the stub rejected an argument (nothing was called).
    #[inline(always)]
    unsafe fn call(self, args: *const u8, target: *const c_void) -> Option<u64> {
        // SAFETY: the stub checks every argument first; it captures nothing and needs no
        // return destination (scalar or void return); the rest is the caller's contract.
        unsafe { self.0.values.call_plain(args, target) }
    }
}

/// The value entry of a struct return without capture written through `ret`
/// (`struct_entry`). `Copy`; valid while the executor it came from is alive.
#[derive(Clone, Copy)]
pub(crate) struct StructEntry(CheckedEntry);

impl StructCall for StructEntry {
    /// Calls it with `args` (a `&[Value]`), the struct written through `ret` (by the stub, or
    /// by the target through the hidden pointer in rdi). Without arguments rdi carries `ret`
    /// (no stub of such a signature reads an argument pointer), so that the target itself can
    /// be the entry.
    #[inline(always)]
    unsafe fn call(self, args: &[Value<'_>], ret: *mut u8, target: *const c_void) -> bool {
        let first = if args.is_empty() {
            ret.cast_const()
        } else {
            args.as_ptr().cast()
        };
        // SAFETY: the caller's contract; no capture, so the stub reads neither the capture
        // buffer nor the errno address; a stub without arguments reads no argument pointer,
        // and a target standing in for its stub takes `ret` in rdi.
        unsafe { self.0.call_struct(first, ret, target) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Executor as _;
    use crate::layout::FunctionDescriptor as FD;
    use crate::layout::{MemoryLayout, ValueLayout as V};

    extern "C" fn never_called() {}

    /// The executor `link` picks for a descriptor (its variant's name).
    fn variant(d: &FD, first_variadic: Option<usize>, capture: bool) -> &'static str {
        let plan = super::super::classify::plan(d, first_variadic).unwrap();
        let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
        let ret = RetKind::of(d.return_layout());
        let target = never_called as *const c_void;
        let exec = Executor::link(&plan, &args, ret, capture, target);
        // the test hook is one variant, whatever the fast path was
        let interpreted = exec.interpreted();
        assert!(matches!(interpreted, Executor::Interpreted));
        assert_eq!(
            (
                interpreted.int_arity(args.len()),
                interpreted.float_arity(args.len())
            ),
            (usize::MAX, usize::MAX)
        );
        assert!(interpreted.image().is_none() && interpreted.uncaptured().is_none());
        assert!(interpreted.struct_entry().is_none());
        // the struct entry is the `Struct` variant's
        assert_eq!(
            exec.struct_entry().is_some(),
            matches!(exec, Executor::Struct(..)),
            "{d}"
        );
        // the cached arities follow the variant
        let n = args.len();
        assert_eq!(
            exec.int_arity(n) == n,
            matches!(exec, Executor::Int(..)),
            "{d}"
        );
        assert_eq!(
            exec.float_arity(n) == n,
            matches!(exec, Executor::Float(..)),
            "{d}"
        );
        match exec {
            Executor::Interpreted => "Interpreted",
            Executor::Int(..) => "Int",
            Executor::Float(..) => "Float",
            Executor::Image(..) => "Image",
            Executor::Struct(..) => "Struct",
            Executor::Capture(..) => "Capture",
            Executor::CaptureUncaptured(..) => "CaptureUncaptured",
            Executor::Plain(..) => "Plain",
        }
    }

    #[test]
    fn one_fast_path_per_signature() {
        let st = |m: &[V]| {
            MemoryLayout::c_struct(m.iter().map(|v| MemoryLayout::from(v.clone()))).unwrap()
        };
        assert_eq!(variant(&FD::of_void([]), None, false), "Int");
        assert_eq!(variant(&FD::of(V::I32, [V::I32]), None, false), "Int");
        assert_eq!(variant(&FD::of(V::F64, [V::F64]), None, false), "Float");
        assert_eq!(variant(&FD::of(V::BOOL, [V::I32]), None, false), "Plain");
        assert_eq!(
            variant(&FD::of(st(&[V::I64, V::F64]), [V::I32]), None, false),
            "Image"
        );
        assert_eq!(
            variant(
                &FD::of(st(&[V::I64, V::I64, V::I64]), [V::I32]),
                None,
                false
            ),
            "Struct"
        );
        assert_eq!(
            variant(&FD::of(V::I32, [V::I32]), None, true),
            "CaptureUncaptured"
        );
        assert_eq!(variant(&FD::of(V::F64, [V::I32]), None, true), "Capture");
        assert_eq!(
            variant(&FD::of(st(&[V::I64, V::I64, V::I64]), [V::I32]), None, true),
            "Plain"
        );
        // a MEMORY-class return without arguments: the target is its own struct entry
        let d = FD::of(st(&[V::I64, V::I64, V::I64]), []);
        assert_eq!(variant(&d, None, false), "Struct");
        let plan = super::super::classify::plan(&d, None).unwrap();
        let target = never_called as *const c_void;
        let exec = Executor::link(&plan, &[], RetKind::of(d.return_layout()), false, target);
        let Some(StructEntry(entry)) = exec.struct_entry() else {
            panic!("no struct entry")
        };
        assert_eq!(entry.address(), target.cast());
        // with an argument, or variadic, the stub's value entry
        for (d, v) in [
            (FD::of(st(&[V::I64, V::I64, V::I64]), [V::I32]), None),
            (FD::of(st(&[V::I64, V::I64, V::I64]), []), Some(0)),
        ] {
            let plan = super::super::classify::plan(&d, v).unwrap();
            let args: Vec<ArgKind> = d.argument_layouts().iter().map(ArgKind::of).collect();
            let exec = Executor::link(&plan, &args, RetKind::of(d.return_layout()), false, target);
            let (Some(StructEntry(entry)), Some(c)) = (exec.struct_entry(), exec.compiled()) else {
                panic!("no struct entry for {d}")
            };
            assert_eq!(entry, c.stub.values, "{d}");
        }
        // variadic: never the target itself, still the integer fast path
        assert_eq!(variant(&FD::of(V::I32, [V::I32]), Some(0), false), "Int");
    }

    #[test]
    fn invoke_into_takes_the_struct_entry_for_hidden_pointer_returns() {
        crate::backend::test_values::check_struct_entry_path();
    }
}
