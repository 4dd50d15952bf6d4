//! ABI-neutral descriptions of a signature as the backends' executors and stub compilers use
//! them: what each argument and the return are ([`ArgKind`], [`RetKind`]), what a compiled
//! stub's values entry checks per argument ([`ArgCheck`]), which way a plan is used
//! ([`Direction`]), and the untagged argument slots of `linker::Arguments` ([`Slots`],
//! [`SlotsPath`]). Nothing here depends on a calling convention.

// The stub compilers' checks and the slots paths are read where a backend executes (and by the
// tests); the `unsupported` backend has neither.
#![cfg_attr(not(any(test, gatun_executes)), allow(dead_code))]

use crate::layout::{MemoryLayout, ScalarKind};

/// Which way a plan is used: the checks of a backend's `plan` name it in their messages;
/// downcalls and upcalls otherwise accept the same descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Rust calls C (`Linker::downcall`).
    Downcall,
    /// C calls Rust (`Linker::upcall_stub`).
    Upcall,
}

impl Direction {
    /// `"downcall"` or `"upcall"`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Direction::Downcall => "downcall",
            Direction::Upcall => "upcall",
        }
    }
}

impl std::fmt::Display for Direction {
    /// Writes [`Direction::name`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What an argument of a descriptor is, as the executors check it: a scalar of this kind, or
/// a struct/union of this size and alignment (passed as a segment of at least that size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgKind {
    /// A scalar (`ValueLayout`) of this kind.
    Scalar(ScalarKind),
    /// A struct or union.
    Group {
        /// Size in bytes.
        size: usize,
        /// Alignment in bytes (a power of two).
        align: usize,
    },
}

impl ArgKind {
    /// The kind of an argument layout.
    pub(crate) fn of(l: &MemoryLayout) -> ArgKind {
        match l {
            MemoryLayout::Value(v) => ArgKind::Scalar(v.kind()),
            g => ArgKind::Group {
                size: g.byte_size(),
                align: g.byte_alignment(),
            },
        }
    }
}

/// What a compiled stub's value entry checks for one argument before anything else (shared by
/// the x86-64 and AArch64 stub compilers), and part of a compiled stub's cache key.
// Read by the stub compilers only (on targets without an executor, by their tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ArgCheck {
    /// A scalar: the `Value` must have this kind's variant.
    Scalar(ScalarKind),
    /// A struct/union of this many bytes: a `Value::Segment` at least this long.
    Group(u32),
}

impl ArgCheck {
    /// The checks of argument kinds `args`, one per argument in order.
    #[cfg(feature = "internals")]
    pub(crate) fn all(args: &[ArgKind]) -> Vec<ArgCheck> {
        args.iter().map(|a| ArgCheck::of(*a)).collect()
    }

    /// The check of an argument of kind `a` (a group over `u32::MAX` bytes checks for
    /// `u32::MAX`: no segment of a valid layout is that short and longer at once).
    pub(crate) fn of(a: ArgKind) -> ArgCheck {
        match a {
            ArgKind::Scalar(k) => ArgCheck::Scalar(k),
            ArgKind::Group { size, .. } => ArgCheck::Group(u32::try_from(size).unwrap_or(u32::MAX)),
        }
    }
}

/// The tag byte of `Value::Segment` (what a value entry compares a struct argument's tag with).
pub(crate) fn segment_tag() -> u8 {
    crate::value::value_tag(&crate::value::Value::Segment(
        crate::memory::MemorySegment::NULL,
    ))
}

/// The argument slots of `linker::Arguments`' fast path: at most eight, 8 bytes each, a
/// scalar's bits in the low bytes (initialised for the arguments only).
pub(crate) type Slots = [std::mem::MaybeUninit<u64>; 8];

/// Which fast path an executor has for `linker::Arguments` (untagged 8-byte argument slots):
/// a slots entry returning in the integer register (or nothing), one returning a float, or
/// none (the handle then converts the arguments to `Value`s and takes the `Value` path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotsPath {
    /// No slots entry.
    None,
    /// An integer or void return.
    Int,
    /// A float return.
    Float,
}

/// What a descriptor returns: nothing, a scalar, or a struct/union of `size` bytes aligned to
/// `align` (a power of two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetKind {
    /// `void`.
    Void,
    /// A scalar of this kind.
    Scalar(ScalarKind),
    /// A struct or union.
    Group {
        /// Size in bytes.
        size: usize,
        /// Alignment in bytes.
        align: usize,
    },
}

impl RetKind {
    /// The kind of a return layout (`None`: void).
    pub(crate) fn of(l: Option<&MemoryLayout>) -> RetKind {
        match l {
            None => RetKind::Void,
            Some(MemoryLayout::Value(v)) => RetKind::Scalar(v.kind()),
            Some(g) => RetKind::Group {
                size: g.byte_size(),
                align: g.byte_alignment(),
            },
        }
    }
}
