//! The per-stub context: what the dispatchers need about one stub, and the one [`Path`] its
//! calls take.
//!
//! A stub's code holds the address of its boxed [`Context`] (`#[repr(C)]`, starting with the
//! [`UpcallHeader`] its entry calls through). The path is chosen once, when the stub is made,
//! from the signature's [`UpcallArgKind`]s on the native plan and the native backend's
//! capabilities ([`UpcallEntries`]): the first that applies of
//! 1. [`Path::Int`]: the integer-register path (the backend's `int_register_args`, no `bool`
//!    argument, not confined);
//! 2. [`Path::Shape`]: the register-shape path (the backend's `register_shape`, not confined);
//! 3. [`Path::Scalar`]: scalars in registers, at most [`INLINE_ARGS`](super::dispatch::INLINE_ARGS);
//! 4. [`Path::Registers`]: scalars and structs in registers, at most [`INLINE_ARGS`](super::dispatch::INLINE_ARGS);
//! 5. [`Path::General`]: the plan interpreted argument by argument.
//!
//! One enum, so a context cannot hold two inconsistent fast paths.

use std::hint::unreachable_unchecked;

use super::dispatch::gatun_upcall_dispatch;
use super::dispatch::int::IntPath;
use super::dispatch::registers::RegisterPath;
use super::dispatch::scalar::ScalarPath;
use super::dispatch::shape::shape_dispatcher;
use super::UpcallArgs;
use crate::abi::CallPlan;
use crate::backend::upcall::{
    RegisterShape, UpcallArgKind, UpcallEntries, UpcallHeader, UpcallRetKind,
};
use crate::backend::{CopyArea, Direction, Native};
use crate::error::Result;
use crate::layout::FunctionDescriptor;
use crate::value::Value;

/// The closure type an [`UpcallStub`](super::UpcallStub) owns.
pub(crate) type Closure<'s> =
    dyn for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>> + Send + Sync + 's;

/// How the calls of one stub are decoded (see the module documentation for the order).
#[derive(Debug)]
pub(crate) enum Path {
    /// The integer-register path: the stub jumps to `int.entry`; `scalar` is the same
    /// signature's scalar path (the result kind of the slow path, and the general entry's
    /// decoding if the backend makes no free-register stub).
    Int { int: IntPath, scalar: ScalarPath },
    /// The register-shape path: the stub jumps to the backend's shape entry, which calls the
    /// header's `shape_dispatch`.
    Shape(RegisterShape),
    /// Scalars in registers, decoded by the general entry's dispatcher.
    Scalar(ScalarPath),
    /// Scalars and structs in registers, decoded by the general entry's dispatcher.
    Registers(RegisterPath),
    /// Any signature: the plan interpreted.
    General,
}

impl Path {
    /// The path of a signature (see the module documentation), with the capabilities of the
    /// backend `B`; a confined stub (`confined`) takes neither the integer nor the shape path,
    /// which do not check the calling thread.
    fn select<B: UpcallEntries>(
        args: &[UpcallArgKind],
        ret: UpcallRetKind,
        plan: &CallPlan,
        confined: bool,
    ) -> Path {
        let scalar = ScalarPath::of(args, ret);
        if !confined {
            if let Some(scalar) = scalar {
                return match IntPath::of::<B>(&scalar, args, ret) {
                    Some(int) => Path::Int { int, scalar },
                    None => match B::register_shape(args, ret, plan) {
                        Some(shape) => Path::Shape(shape),
                        None => Path::Scalar(scalar),
                    },
                };
            }
            if let Some(shape) = B::register_shape(args, ret, plan) {
                return Path::Shape(shape);
            }
        }
        match scalar {
            Some(scalar) => Path::Scalar(scalar),
            None => RegisterPath::of(args, ret, plan).map_or(Path::General, Path::Registers),
        }
    }

    /// The scalar path, if the path has one ([`Path::Scalar`], [`Path::Int`]).
    #[inline(always)]
    pub(crate) fn scalar(&self) -> Option<&ScalarPath> {
        match self {
            Path::Scalar(scalar) | Path::Int { scalar, .. } => Some(scalar),
            _ => None,
        }
    }

    /// The integer-register path.
    ///
    /// # Safety
    /// The path is [`Path::Int`].
    #[inline(always)]
    pub(crate) unsafe fn int_unchecked(&self) -> &IntPath {
        match self {
            Path::Int { int, .. } => int,
            // SAFETY: the caller's contract.
            _ => unsafe { unreachable_unchecked() },
        }
    }

    /// The register shape.
    ///
    /// # Safety
    /// The path is [`Path::Shape`].
    #[inline(always)]
    pub(crate) unsafe fn shape_unchecked(&self) -> &RegisterShape {
        match self {
            Path::Shape(shape) => shape,
            // SAFETY: the caller's contract.
            _ => unsafe { unreachable_unchecked() },
        }
    }
}

/// Everything the dispatchers need about one stub; its address is baked into the stub's code.
/// `#[repr(C)]` so that `header` is at offset 0: the entries call the header's dispatchers
/// with the context's address.
#[repr(C)]
pub(crate) struct Context<'s> {
    /// The dispatchers the entries call: `dispatch` (`gatun_upcall_dispatch`) and
    /// `shape_dispatch` (the register-shape dispatcher for [`Path::Shape`], else `dispatch`).
    pub(crate) header: UpcallHeader,
    /// How calls are decoded.
    pub(crate) path: Path,
    pub(crate) descriptor: FunctionDescriptor,
    pub(crate) plan: CallPlan,
    pub(crate) args: Box<[UpcallArgKind]>,
    pub(crate) ret: UpcallRetKind,
    /// The linker-stack frame holding the by-value struct argument copies of the general path
    /// (0 bytes: no frame).
    pub(crate) copies: CopyArea,
    pub(crate) closure: Box<Closure<'s>>,
    /// For a confined stub, [`thread_mark`](super::abort::thread_mark) of the thread that made
    /// it; 0 for any thread.
    pub(crate) owner: usize,
}

impl<'s> Context<'s> {
    /// Classifies `descriptor` (the native backend's ABI) and precomputes what a call needs,
    /// for the calling thread `owner` (0: any thread).
    ///
    /// # Errors
    /// As the native backend's plan; [`crate::Error::SizeOverflow`] if the struct argument
    /// copies take more than `isize::MAX` bytes.
    pub(crate) fn new(
        descriptor: &FunctionDescriptor,
        closure: Box<Closure<'s>>,
        owner: usize,
    ) -> Result<Context<'s>> {
        let plan = <crate::backend::Native as crate::backend::Backend>::plan(
            descriptor,
            None,
            Direction::Upcall,
        )?;
        Self::with_plan::<Native>(descriptor, plan, closure, owner)
    }

    /// As [`Context::new`], with the plan already made and the paths of backend `B` (the
    /// dispatchers' unit tests give it the SysV plan and rules on every host, so they run
    /// under Miri too).
    ///
    /// # Errors
    /// As [`Context::new`].
    pub(crate) fn with_plan<B: UpcallEntries>(
        descriptor: &FunctionDescriptor,
        plan: CallPlan,
        closure: Box<Closure<'s>>,
        owner: usize,
    ) -> Result<Context<'s>> {
        let mut copies = CopyArea::default();
        let args = descriptor
            .argument_layouts()
            .iter()
            .zip(&plan.args)
            .map(|(l, ap)| {
                let kind = UpcallArgKind::of(l, ap);
                if let UpcallArgKind::Group { size, align } = kind {
                    copies = copies.with(size, align).ok_or_else(CopyArea::too_large)?;
                }
                Ok(kind)
            })
            .collect::<Result<Box<[UpcallArgKind]>>>()?;
        let ret = UpcallRetKind::of(descriptor.return_layout(), &plan.ret);
        let path = Path::select::<B>(&args, ret, &plan, owner != 0);
        let header = UpcallHeader {
            dispatch: gatun_upcall_dispatch,
            shape_dispatch: match &path {
                Path::Shape(shape) => shape_dispatcher(shape.len as usize, shape.class),
                _ => gatun_upcall_dispatch,
            },
        };
        Ok(Context {
            header,
            path,
            owner,
            descriptor: descriptor.clone(),
            plan,
            args,
            ret,
            copies,
            closure,
        })
    }
}

// The entries call the header's dispatchers with the context's address.
const _: () = assert!(std::mem::offset_of!(Context<'static>, header) == 0);
