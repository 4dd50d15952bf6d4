//! One non-blocking call's record, shared by the submitting side and one worker thread, and
//! recycled through the pool's free list so that a warmed-up pool allocates nothing per call.
//!
//! A record holds the handle, the arguments, the copies of segment arguments, the owners kept
//! alive for the call, the return buffer, the captured call state and the result.
//!
//! # Invariants (every `unsafe` block of this module relies on them)
//! 1. **One party at a time touches `data`**, as `state` says:
//!    - `BUILDING`: the [`CallBuilder`](super::CallBuilder) that took the record from the free
//!      list; no other party has a reference yet.
//!    - `QUEUED`: nobody (the record is in the pool's queue). Leaving `QUEUED` is one
//!      compare-and-swap: to `RUNNING` by the worker that popped it, or to `CANCELLED` by the
//!      [`PendingCall`](super::PendingCall) being dropped first.
//!    - `RUNNING`: the worker, until it stores `DONE` with `Release`.
//!    - `DONE` (seen with `Acquire`) and `CANCELLED`: the submitting side only (its future or
//!      [`Completion`](super::Completion)); the worker never touches `data` again.
//! 2. **`holders` counts the parties** that still use the record: 1 while building, 2 once
//!    queued (the submitting side and the queue/worker). The party that brings it to 0 resets
//!    `data` (keeping the buffers' capacity) and returns the record to the free list; nobody
//!    else touches the record after its own decrement. The worker's decrement comes right
//!    after it stores `DONE` (it wakes the future after letting go), and a record released by
//!    its submitting side while its worker still holds it is counted as *finishing*, which
//!    [`Record::take`] waits for instead of making a new record.
//! 3. Everything the C function may use (copies of segment arguments, the return buffer, the
//!    capture buffer, the kept-alive owners) belongs to the record and is only released after
//!    the worker stored `DONE` or saw `CANCELLED`: dropping the future never frees memory a
//!    running C function is still using.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Waker;

use crate::error::Result;
use crate::linker::DowncallHandle;
use crate::value::Value;

pub(super) const BUILDING: u8 = 0;
pub(super) const QUEUED: u8 = 1;
pub(super) const RUNNING: u8 = 2;
pub(super) const DONE: u8 = 3;
pub(super) const CANCELLED: u8 = 4;

/// 16 bytes aligned to 16: the unit of the copy and return buffers, so that every copy starts
/// at a 16-byte boundary (a callee may use aligned vector loads on a struct).
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub(super) struct Chunk16(pub(super) [u8; 16]);

/// An argument as the record holds it.
#[derive(Clone, Copy)]
pub(super) enum Arg {
    /// A scalar or an address (`Value::Segment` is never stored here).
    Value(Value<'static>),
    /// A copy of a segment in `Data::copies`: its byte offset and length.
    Copy { offset: usize, len: usize },
}

/// What the record carries; see the module's invariants for who may touch it when.
#[derive(Default)]
pub(super) struct Data {
    pub(super) handle: Option<DowncallHandle>,
    pub(super) args: Vec<Arg>,
    pub(super) copies: Vec<Chunk16>,
    pub(super) keep: Vec<Arc<dyn Send + Sync>>,
    pub(super) ret: Vec<Chunk16>,
    /// Bytes of the struct return in `ret`, `None` for a scalar or void return.
    pub(super) ret_len: Option<usize>,
    /// Where in `ret` the struct return starts (0 unless its alignment is over 16 bytes).
    pub(super) ret_offset: usize,
    /// The captured states, in `capturable_states()` order.
    pub(super) capture: [i32; 3],
    pub(super) result: Option<Result<Value<'static>>>,
}

/// Argument slots a new record has room for before it grows.
const ARGS: usize = 8;
/// 16-byte chunks of segment copies a new record has room for (64 bytes).
const COPY_CHUNKS: usize = 4;
/// 16-byte chunks of struct return a new record has room for (32 bytes).
const RET_CHUNKS: usize = 2;

impl Data {
    /// An empty record with room for the common call (8 arguments, 64 bytes of segment copies,
    /// a 32-byte struct return), so that records need not grow when calls of these sizes move
    /// between them.
    fn with_capacity() -> Data {
        Data {
            args: Vec::with_capacity(ARGS),
            copies: Vec::with_capacity(COPY_CHUNKS),
            ret: Vec::with_capacity(RET_CHUNKS),
            ..Data::default()
        }
    }

    /// Copies `bytes` to a fresh 16-byte-aligned place in `copies`; returns its offset.
    pub(super) fn push_copy(&mut self, bytes_len: usize, fill: impl FnOnce(&mut [u8])) -> usize {
        let offset = self.copies.len() * 16;
        let chunks = bytes_len.div_ceil(16).max(1);
        self.copies
            .resize(self.copies.len() + chunks, Chunk16::default());
        let all = chunks_as_bytes_mut(&mut self.copies);
        fill(&mut all[offset..offset + bytes_len]);
        offset
    }

    /// Empties the record for its next call, keeping the buffers' capacity.
    fn reset(&mut self) {
        self.handle = None;
        self.args.clear();
        self.copies.clear();
        self.keep.clear();
        self.ret.clear();
        self.ret_len = None;
        self.ret_offset = 0;
        self.capture = [0; 3];
        self.result = None;
    }
}

/// The bytes of a chunk buffer.
pub(super) fn chunks_as_bytes_mut(chunks: &mut [Chunk16]) -> &mut [u8] {
    // SAFETY: `Chunk16` is 16 plain bytes with no padding; the slice covers exactly the
    // chunks' memory and borrows it mutably for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(chunks.as_mut_ptr().cast::<u8>(), chunks.len() * 16) }
}

/// The bytes of a chunk buffer, read-only.
pub(super) fn chunks_as_bytes(chunks: &[Chunk16]) -> &[u8] {
    // SAFETY: as in `chunks_as_bytes_mut`, shared.
    unsafe { std::slice::from_raw_parts(chunks.as_ptr().cast::<u8>(), chunks.len() * 16) }
}

/// One call's record (see the module documentation).
pub(super) struct Record {
    pub(super) state: AtomicU8,
    holders: AtomicUsize,
    /// Whether the submitting side counted the record as finishing (see [`Records`]).
    counted: AtomicBool,
    waker: Mutex<Option<Waker>>,
    data: UnsafeCell<Data>,
}

// SAFETY: `data` (which holds raw pointers in `Value::Address` and `!Send` handles' values) is
// only ever accessed by one party at a time, handed over with the Release/Acquire pairs on
// `state` and the pool's queue mutex (invariant 1); the addresses it holds are numbers the C
// function receives, never dereferenced by this module. `waker` is behind a mutex.
unsafe impl Send for Record {}
// SAFETY: as above.
unsafe impl Sync for Record {}

/// The pool's records: the free list they return to, and how many are finishing (done, let go
/// of by the submitting side, still held for a few instructions by their worker).
pub(super) struct Records {
    free: Mutex<Vec<Arc<Record>>>,
    finishing: AtomicUsize,
    /// Records made so far.
    made: AtomicUsize,
}

impl Records {
    pub(super) fn new() -> Records {
        Records {
            free: Mutex::new(Vec::new()),
            finishing: AtomicUsize::new(0),
            made: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Record>>> {
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records made so far.
    pub(super) fn made(&self) -> usize {
        self.made.load(Ordering::Relaxed)
    }

    /// Records in the free list.
    #[cfg(test)]
    pub(super) fn free_len(&self) -> usize {
        self.lock().len()
    }
}

impl Record {
    /// A record from the free list, in state `BUILDING` with one holder. A new one is made
    /// only if no record is free or finishing: a finishing record is waited for (its worker
    /// lets go of it within a few instructions), so the number of records settles at the
    /// largest number of calls in flight and a warm pool allocates nothing.
    pub(super) fn take(records: &Records) -> Arc<Record> {
        let record = loop {
            let mut free = records.lock();
            if let Some(r) = free.pop() {
                break r;
            }
            if records.finishing.load(Ordering::Acquire) == 0 {
                // Room in the free list for every record there is, so that returning one
                // never grows it.
                let made = records.made.fetch_add(1, Ordering::Relaxed) + 1;
                free.reserve(made);
                break Arc::new(Record {
                    state: AtomicU8::new(BUILDING),
                    holders: AtomicUsize::new(0),
                    counted: AtomicBool::new(false),
                    waker: Mutex::new(None),
                    data: UnsafeCell::new(Data::with_capacity()),
                });
            }
            drop(free);
            std::thread::yield_now();
        };
        record.state.store(BUILDING, Ordering::Relaxed);
        record.holders.store(1, Ordering::Relaxed);
        record
    }

    /// The record's data, shared.
    ///
    /// # Safety
    /// The caller is the party invariant 1 allows to touch `data` now, and makes no `&mut`
    /// to it while this reference lives.
    pub(super) unsafe fn data_ref(&self) -> &Data {
        // SAFETY: the caller's promise.
        unsafe { &*self.data.get() }
    }

    /// The record's data.
    ///
    /// # Safety
    /// The caller is the party invariant 1 allows to touch `data` now, and holds no other
    /// reference to it.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn data(&self) -> &mut Data {
        // SAFETY: exclusive access is the caller's promise.
        unsafe { &mut *self.data.get() }
    }

    /// Adds the queue's holder before the record is queued.
    pub(super) fn share(&self) {
        self.holders.fetch_add(1, Ordering::Relaxed);
    }

    /// The submitting side lets go of the record (a builder, future or completion dropped).
    /// A done record still held by its worker is counted as finishing until the worker lets go.
    pub(super) fn release_submitted(self: Arc<Record>, records: &Records) {
        if self.state.load(Ordering::Acquire) == DONE {
            records.finishing.fetch_add(1, Ordering::AcqRel);
            // Read by whichever party lets go last (after the `AcqRel` decrement below).
            self.counted.store(true, Ordering::Relaxed);
        }
        self.release(records);
    }

    /// Drops one holder; the last one resets the record and returns it to the free list.
    pub(super) fn release(self: Arc<Record>, records: &Records) {
        if self.holders.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        // SAFETY: the last holder: no other party uses the record (invariant 2).
        unsafe { self.data() }.reset();
        *self.waker.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let counted = self.counted.swap(false, Ordering::Relaxed);
        records.lock().push(self);
        // After the push, so that `take` always sees the record or its count.
        if counted {
            records.finishing.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Whether the worker has finished (`DONE`, with `Acquire`: the data is then readable).
    pub(super) fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) == DONE
    }

    /// Registers `waker` to be woken when the call is done; `true` if it already is.
    pub(super) fn register(&self, waker: &Waker) -> bool {
        {
            let mut slot = self.waker.lock().unwrap_or_else(PoisonError::into_inner);
            match &*slot {
                Some(w) if w.will_wake(waker) => {}
                _ => *slot = Some(waker.clone()),
            }
        }
        // Checked after registering: a worker that finished in between either saw the waker
        // (and wakes it) or finished before, which this load sees.
        self.is_done()
    }

    /// Marks the call done (after the worker wrote the result), lets go of the worker's hold,
    /// then wakes the future: the worker touches nothing of the record after its release, so a
    /// finishing record is free again within a few instructions.
    pub(super) fn finish(self: Arc<Record>, records: &Records) {
        let waker = {
            let mut slot = self.waker.lock().unwrap_or_else(PoisonError::into_inner);
            // Stored under the waker's lock: a future registering its waker either did so
            // before (and it is taken here) or sees `DONE` after its own registration.
            self.state.store(DONE, Ordering::Release);
            slot.take()
        };
        self.release(records);
        if let Some(w) = waker {
            // A waker is user code: one that panics must not take the worker down with it.
            let _ = catch_unwind(AssertUnwindSafe(|| w.wake()));
        }
    }
}
