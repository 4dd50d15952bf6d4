//! The handle's argument and destination checks, and their errors (out of line, `#[cold]`):
//! argument values, struct-return segments, capture segments and the `*_captured` paths'
//! count; with the small helpers the call paths share (`write_scalar`, `cold_path`).

use std::fmt;

use super::DowncallHandle;
use crate::backend::store_low_bytes;
use crate::error::{Error, Result};
use crate::layout::ScalarKind;
use crate::linker::option::CAPTURE_STATE_SIZE;
use crate::memory::MemorySegment;
use crate::value::Value;

/// Whether `seg` can take a struct return of `size` bytes aligned to `align` (a power of
/// two): at least `size` bytes, at an address that is a multiple of `align`;
/// [`bad_return_segment`] says which check failed.
#[inline(always)]
pub(super) fn fits_return(seg: &MemorySegment<'_>, size: usize, align: usize) -> bool {
    seg.byte_size() >= size && seg.address() & (align - 1) == 0
}

/// `Ok` if `seg` can take a struct return of `size` bytes aligned to `align` ([`fits_return`]),
/// else the error saying why ([`bad_return_segment`], out of line).
#[inline(always)]
pub(super) fn check_return(seg: &MemorySegment<'_>, size: usize, align: usize) -> Result<()> {
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
pub(super) fn bad_return_segment(
    address: usize,
    segment_size: usize,
    size: usize,
    align: usize,
) -> Error {
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
pub(super) fn cold_path() {}

/// Writes a scalar return of `kind` (exactly its size in bytes) from the 64-bit register value.
#[inline(always)]
pub(super) unsafe fn write_scalar(kind: ScalarKind, bits: u64, ret: *mut u8) {
    let bits = if kind == ScalarKind::Bool {
        (bits as u8 != 0) as u64
    } else {
        bits
    };
    // SAFETY: the caller guarantees `ret` is writable for kind.byte_size() bytes.
    unsafe { store_low_bytes(ret, bits, kind.byte_size()) }
}

/// How a wrong argument value is named in messages: its kind, or a segment with its size.
fn found_name(found: &Value<'_>) -> String {
    match found {
        Value::Segment(s) => format!("a segment of {} bytes", s.byte_size()),
        other => other.kind_name().to_string(),
    }
}

impl DowncallHandle {
    /// A wrong argument value; `i` is its 0-based position among all the values of the call
    /// (capture segment included), numbered from 1 in the message (see `crate::error`), which
    /// names the function (`argument 2 of `memset``).
    #[cold]
    #[inline(never)]
    pub(super) fn mismatch(
        &self,
        i: usize,
        expected: impl fmt::Display,
        found: &Value<'_>,
    ) -> Error {
        Error::ValueMismatch {
            position: format!("argument {} of {}", i + 1, self.function_label()),
            expected: expected.to_string(),
            found: found_name(found),
        }
    }

    /// The capture buffer of a `Value` capture argument: a segment of at least
    /// [`CAPTURE_STATE_SIZE`] bytes (`capture_state_layout()`'s 4, or 12 on Windows), 4-aligned
    /// (a misaligned one is [`Error::MisalignedAccess`], as for return segments).
    #[inline(always)]
    pub(super) fn capture_ptr(&self, v: &Value<'_>) -> Result<*mut i32> {
        match *v {
            Value::Segment(s) if s.byte_size() >= CAPTURE_STATE_SIZE && s.address() % 4 == 0 => {
                Ok(s.as_ptr().cast::<i32>())
            }
            Value::Segment(s) if s.byte_size() >= CAPTURE_STATE_SIZE => {
                Err(Error::MisalignedAccess {
                    address: s.address(),
                    alignment: 4,
                })
            }
            ref v => Err(self.capture_mismatch(v)),
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn capture_mismatch(&self, found: &Value<'_>) -> Error {
        Error::ValueMismatch {
            position: format!(
                "argument 1 of {} (the capture segment)",
                self.function_label()
            ),
            expected: format!(
                "a capture segment (capture_state_layout(): {CAPTURE_STATE_SIZE} bytes, 4-byte aligned)"
            ),
            found: found_name(found),
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn struct_return_error(&self) -> Error {
        Error::ValueMismatch {
            position: format!("the return of {}", self.function_label()),
            expected: "a scalar or void return (use invoke_into for a struct return)".into(),
            found: "struct".into(),
        }
    }

    /// The checks of the `*_captured` paths: a capture handle, and exactly the descriptor's
    /// arguments.
    #[inline(always)]
    pub(super) fn check_captured(&self, found: usize) -> Result<()> {
        if self.inner.capture && found + 1 == self.arity() {
            Ok(())
        } else {
            Err(self.captured_mismatch(found))
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn captured_mismatch(&self, found: usize) -> Error {
        if !self.inner.capture {
            return Error::ValueMismatch {
                position: format!("the capture segment of {}", self.function_label()),
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
}
