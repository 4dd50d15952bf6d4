//! The outgoing stack-argument area of a call being planned, shared by every classifier: the
//! executors' limit ([`MAX_STACK_BYTES`]), the reservation of each stacked argument
//! ([`StackArea::reserve`]) and the one error for a call over the limit
//! ([`StackArea::size`]).

use crate::error::{Error, Result};
use crate::layout::FunctionDescriptor;

/// Largest outgoing stack-argument area, in bytes, that the executors support: 1 MiB
/// (1,048,576 bytes, 131,072 slots of 8 bytes; on Win64 the 32 bytes of shadow space count
/// towards it). A descriptor needing more is rejected at link time (downcalls and upcalls
/// alike) by the ABI's classification: [`Error::InvalidDescriptor`] whose reason, first, is
/// "the call needs N bytes of stack arguments; gatun's executor supports at most 1048576".
///
/// The area is made on the calling thread's stack, below the caller's frame: the compiled
/// stubs and the trampolines touch every 4 KiB page of an area larger than a page in order,
/// going down (a stack probe, as `__chkstk` on Windows and gcc's `-fstack-clash-protection`
/// do), so a thread whose stack is too small for the call stops at its guard page (Rust's
/// "has overflowed its stack" abort; `STATUS_STACK_OVERFLOW` on Windows; a plain `SIGSEGV`
/// on a thread that C created, where Rust installed no handler) and never writes past it.
///
/// ```
/// assert_eq!(gatun::linker::MAX_STACK_BYTES, 1 << 20);
/// ```
pub const MAX_STACK_BYTES: usize = 1 << 20;

/// The outgoing stack-argument area of a call being planned, in bytes from the stack pointer at
/// the call instruction: arguments are reserved left to right, each at the next multiple of its
/// alignment after the previous one.
///
/// The end of the area so far is kept in `usize` with checked arithmetic (`None` once it
/// overflowed). Once the area passes [`MAX_STACK_BYTES`], [`StackArea::reserve`] returns `None`
/// and the classifier builds no more moves (the plan is rejected by [`StackArea::size`]), so a
/// huge by-value struct or argument list costs O(1) per argument here once over the limit, and
/// a plan holds at most [`MAX_STACK_BYTES`] / 8 stack moves in all; every offset `reserve`
/// returns lies within the limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StackArea {
    end: Option<usize>,
}

impl StackArea {
    /// An empty area.
    pub(crate) const fn new() -> StackArea {
        StackArea { end: Some(0) }
    }

    /// Reserves `bytes` at the next multiple of `align` (a power of two, in bytes) and returns
    /// the offset of the reservation's start, when the whole reservation ends within
    /// [`MAX_STACK_BYTES`]; `None` otherwise (the area is then over the limit for good).
    pub(crate) fn reserve(&mut self, bytes: usize, align: usize) -> Option<u32> {
        let start = self.end.and_then(|s| s.checked_next_multiple_of(align));
        self.end = start.and_then(|s| s.checked_add(bytes));
        match self.end {
            Some(end) if end <= MAX_STACK_BYTES => start.and_then(|s| u32::try_from(s).ok()),
            _ => None,
        }
    }

    /// Reserves `count` consecutive 8-byte slots at the next multiple of 8, as
    /// [`StackArea::reserve`] (a count whose bytes overflow `usize` puts the area over the
    /// limit).
    pub(crate) fn reserve_slots(&mut self, count: usize) -> Option<u32> {
        match count.checked_mul(8) {
            Some(bytes) => self.reserve(bytes, 8),
            None => {
                self.end = None;
                None
            }
        }
    }

    /// The size of the area in bytes: its end rounded up to a multiple of 8 (what
    /// [`CallPlan::stack_bytes`](super::CallPlan::stack_bytes) holds).
    ///
    /// # Errors
    /// [`Error::InvalidDescriptor`] naming `descriptor` when the area exceeds
    /// [`MAX_STACK_BYTES`]: "the call needs N bytes of `what`; gatun's executor supports at
    /// most 1048576" (`what` says what the area holds, e.g. "stack arguments"; N is "more than
    /// usize::MAX" when the sum overflowed).
    pub(crate) fn size(&self, descriptor: &FunctionDescriptor, what: &str) -> Result<u32> {
        match self.end.and_then(|n| n.checked_next_multiple_of(8)) {
            Some(n) if n <= MAX_STACK_BYTES => Ok(n as u32),
            needed => {
                let needed =
                    needed.map_or_else(|| "more than usize::MAX".into(), |n| n.to_string());
                Err(Error::InvalidDescriptor {
                    descriptor: descriptor.to_string(),
                    reason: format!(
                        "the call needs {needed} bytes of {what}; gatun's executor supports at most {MAX_STACK_BYTES}"
                    ),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{StackArea, MAX_STACK_BYTES};
    use crate::layout::{FunctionDescriptor, ValueLayout as V};

    #[test]
    fn reservations_align_and_stop_at_the_limit() {
        let mut a = StackArea::new();
        assert_eq!(a.reserve(4, 4), Some(0));
        assert_eq!(a.reserve(8, 8), Some(8));
        assert_eq!(a.reserve(16, 16), Some(16));
        assert_eq!(a.reserve(1, 1), Some(32));
        let d = FunctionDescriptor::of_void([V::I32]);
        assert_eq!(a.size(&d, "stack arguments").unwrap(), 40);
        // Exactly up to the limit: accepted.
        assert_eq!(a.reserve(MAX_STACK_BYTES - 40, 8), Some(40));
        assert_eq!(
            a.size(&d, "stack arguments").unwrap(),
            MAX_STACK_BYTES as u32
        );
        // One slot more: no offset, and the size is the error.
        assert_eq!(a.reserve_slots(1), None);
        let e = a.size(&d, "stack arguments").unwrap_err().to_string();
        assert!(
            e.contains("the call needs 1048584 bytes of stack arguments; gatun's executor supports at most 1048576"),
            "{e}"
        );
    }

    #[test]
    fn overflow_is_over_the_limit_for_good() {
        let d = FunctionDescriptor::of_void([V::I32]);
        let mut a = StackArea::new();
        assert_eq!(a.reserve_slots(usize::MAX / 4), None);
        assert_eq!(a.reserve(8, 8), None);
        let e = a.size(&d, "stack area").unwrap_err().to_string();
        assert!(
            e.contains("needs more than usize::MAX bytes of stack area"),
            "{e}"
        );
        let mut b = StackArea::new();
        assert_eq!(b.reserve(usize::MAX, 8), None);
        assert_eq!(b.reserve(usize::MAX, 8), None);
        assert!(b.size(&d, "stack arguments").is_err());
    }
}
