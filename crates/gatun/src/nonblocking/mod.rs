//! Non-blocking downcalls: a slow C function (a DNS lookup, a large compression, a blocking
//! read) runs on one of a small pool of worker threads while the caller's event loop goes on;
//! the caller gets a [`Future`] of the result.
//!
//! [`WorkerPool::new`]`(n)` makes a pool of at most `n` worker threads, started lazily (the
//! first when the first call is submitted, another whenever every started worker is busy).
//! [`WorkerPool::call`] starts a [`CallBuilder`] for a [`DowncallHandle`]; its arguments are
//! *owned* by the call, so the future is `Send + 'static` and can be spawned on any runtime:
//!
//! - scalars and raw addresses (`i32(..)`, `address(..)`, [`CallBuilder::value`]);
//! - [`CallBuilder::segment`]: a copy of a segment's bytes made at once, living as long as
//!   the call. For a struct parameter it is the struct passed by value; for a pointer
//!   parameter the C function gets the copy's address (16-byte aligned), and
//!   [`Completion::argument_segment`] reads the copy back after the call (out-parameters);
//! - [`CallBuilder::shared`]: the address of memory owned by an `Arc` (a
//!   [`SharedArena`](crate::memory::SharedArena), say), with the `Arc` kept alive until the C
//!   function returns, even if the future is dropped first (the JDK's session acquire: the
//!   closure's higher-ranked lifetime proves the segment comes from the owner or is
//!   `'static`).
//!
//! The future resolves to a [`Completion`]: the scalar result, the struct result (in a buffer
//! the call owns: [`Completion::return_segment`]) and, for a handle linked with
//! [`LinkerOption::CaptureCallState`](crate::LinkerOption::CaptureCallState), the state the
//! worker captured right after the call ([`Completion::captured`]: `errno`, and on Windows
//! `GetLastError` and `WSAGetLastError`); the pool passes the capture segment itself, so the
//! arguments are the C function's own. Errors of the call (a wrong argument count or kind) are
//! the future's `Err`, exactly those [`DowncallHandle::invoke`] reports.
//!
//! - **Runtime-agnostic.** The future is a plain [`Future`], woken by the worker through the
//!   waker it was last polled with; no runtime is needed (a thread may also block on it with
//!   [`PendingCall::wait`]).
//! - **Cancellation.** Dropping a [`PendingCall`] before a worker started the call cancels it
//!   (the C function never runs); dropping it while the call runs lets the call finish. Either
//!   way every buffer and kept-alive owner the call holds is released only after the C function
//!   returned, never while it may still use them.
//! - **Allocation.** Each call uses a record of the pool (the arguments, the copies, the
//!   return and capture buffers, the result), recycled when its future or completion is dropped
//!   and the worker is done with it: once the pool has as many records as calls in flight and
//!   their buffers have grown to the calls' sizes (a record starts with room for 8 arguments,
//!   64 bytes of segment copies and a 32-byte struct return), submitting, running and
//!   completing a call allocates nothing (the future itself is a pointer to its record).
//! - **Threads.** [`WorkerPool`], [`PendingCall`] and [`Completion`] are `Send`; the pool is
//!   also `Sync` and `Clone` (clones share the workers). Dropping the last clone lets the
//!   workers finish the queued calls and exit. An idle worker keeps checking the queue for
//!   about 50 µs before it sleeps, so back-to-back calls do not pay for a thread wake-up.
//!
//! ```
//! # #[cfg(gatun_executes)] {
//! use std::num::NonZeroUsize;
//! use gatun::linker::SymbolLookup;
//! use gatun::nonblocking::WorkerPool;
//! use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
//! let abs = SymbolLookup::default_lookup().find("abs").unwrap();
//! let abs = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
//! let pool = WorkerPool::new(NonZeroUsize::new(2).unwrap());
//! let mut call = pool.call(&abs);
//! call.i32(-5);
//! // SAFETY: abs has no preconditions.
//! let pending = unsafe { call.submit() };
//! // In async code: `pending.await`; here, block this thread until the worker is done.
//! assert_eq!(pending.wait().unwrap().value(), Value::I32(5));
//! # }
//! ```

mod pool;
mod record;
#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::ffi::c_void;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use pool::Shared;
use record::{Arg, Record, CANCELLED, QUEUED};

use crate::error::Result;
use crate::linker::{capturable_states, DowncallHandle};
use crate::memory::{MemorySegment, SharedSegment};
use crate::value::Value;

/// A pool of worker threads that run downcalls for [`PendingCall`] futures (see the
/// [module documentation](self)).
///
/// `Send + Sync + Clone`: clones share the workers and the recycled call records.
///
/// ```
/// use std::num::NonZeroUsize;
/// use gatun::nonblocking::WorkerPool;
/// let pool = WorkerPool::new(NonZeroUsize::new(4).unwrap());
/// assert_eq!((pool.max_workers(), pool.started_workers()), (4, 0)); // started lazily
/// ```
#[derive(Clone)]
pub struct WorkerPool {
    shared: Arc<Shared>,
    /// Shuts the workers down when the last clone is dropped.
    _owner: Arc<Owner>,
}

/// Shuts the pool down on drop (held by every `WorkerPool` clone, not by the workers).
struct Owner(Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.shut_down();
    }
}

impl fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "WorkerPool({} of {} workers started)",
            self.started_workers(),
            self.max_workers()
        )
    }
}

impl WorkerPool {
    /// A pool of at most `workers` threads, none started yet: the first starts with the first
    /// call, another whenever every started worker is busy, up to `workers`.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use gatun::nonblocking::WorkerPool;
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// assert_eq!(pool.max_workers(), 1);
    /// ```
    pub fn new(workers: NonZeroUsize) -> WorkerPool {
        let shared = Arc::new(Shared::new(workers.get()));
        WorkerPool {
            _owner: Arc::new(Owner(shared.clone())),
            shared,
        }
    }

    /// The most worker threads this pool starts.
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use gatun::nonblocking::WorkerPool;
    /// assert_eq!(WorkerPool::new(NonZeroUsize::new(3).unwrap()).max_workers(), 3);
    /// ```
    pub fn max_workers(&self) -> usize {
        self.shared.max_workers()
    }

    /// How many worker threads are running now (never more than [`WorkerPool::max_workers`]).
    ///
    /// ```
    /// use std::num::NonZeroUsize;
    /// use gatun::nonblocking::WorkerPool;
    /// assert_eq!(WorkerPool::new(NonZeroUsize::MIN).started_workers(), 0);
    /// ```
    pub fn started_workers(&self) -> usize {
        self.shared.workers()
    }

    /// Starts a call of `handle`: push its arguments on the builder, then
    /// [`CallBuilder::submit`]. The builder holds a recycled call record (no allocation once
    /// the pool is warm); dropping it without submitting returns the record.
    ///
    /// For a handle linked with
    /// [`LinkerOption::CaptureCallState`](crate::LinkerOption::CaptureCallState) do not push the
    /// capture segment: the pool passes its own and [`Completion::captured`] reads it. Error
    /// messages of such a call count arguments as [`DowncallHandle::invoke`] does, with the
    /// capture segment as argument 1 (the first pushed argument is argument 2).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{Arena, FunctionDescriptor, Linker, SegmentAllocator, Value, ValueLayout as V};
    /// // size_t strlen(const char *), given a copy of the string the call owns.
    /// let strlen = SymbolLookup::default_lookup().find("strlen").unwrap();
    /// let d = FunctionDescriptor::of(V::U64, [V::ADDRESS]);
    /// let strlen = Linker::native().downcall(&strlen, &d, &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let arena = Arena::confined();
    /// let mut call = pool.call(&strlen);
    /// call.segment(arena.allocate_c_string("hello").unwrap());
    /// // SAFETY: strlen reads the NUL-terminated copy.
    /// let done = unsafe { call.submit() }.wait().unwrap();
    /// assert_eq!(done.value(), Value::U64(5));
    /// # }
    /// ```
    pub fn call(&self, handle: &DowncallHandle) -> CallBuilder<'_> {
        let record = Record::take(&self.shared.records);
        // SAFETY: state BUILDING, fresh from `take`: the builder is the record's only party.
        let data = unsafe { record.data() };
        data.handle = Some(handle.clone());
        if let Some(ret) = handle.descriptor().return_layout().filter(|l| l.is_group()) {
            data.ret_len = Some(ret.byte_size());
            // Room to align a return layout aligned to more than 16 bytes inside the buffer.
            let room = ret.byte_size() + ret.byte_alignment().saturating_sub(16);
            data.ret
                .resize(room.div_ceil(16).max(1), record::Chunk16::default());
        }
        CallBuilder {
            pool: self,
            record: Some(record),
        }
    }
}

/// The arguments of one non-blocking call, pushed in order (made by [`WorkerPool::call`]).
///
/// Pushing never fails: an argument of the wrong kind or count is reported by the future, as
/// [`DowncallHandle::invoke`] reports it, and the C function is not called.
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use std::num::NonZeroUsize;
/// use gatun::linker::SymbolLookup;
/// use gatun::nonblocking::WorkerPool;
/// use gatun::{Error, FunctionDescriptor, Linker, ValueLayout as V};
/// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
/// let abs = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
/// let pool = WorkerPool::new(NonZeroUsize::MIN);
/// let mut call = pool.call(&abs);
/// call.f64(1.5); // not an int
/// // SAFETY: nothing is called when an argument is rejected.
/// let err = unsafe { call.submit() }.wait().unwrap_err();
/// assert!(matches!(err, Error::ValueMismatch { .. }));
/// # }
/// ```
pub struct CallBuilder<'p> {
    pool: &'p WorkerPool,
    record: Option<Arc<Record>>,
}

impl fmt::Debug for CallBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallBuilder").finish_non_exhaustive()
    }
}

macro_rules! scalar_pushers {
    ($($name:ident: $t:ty => $variant:ident;)*) => {$(
        #[doc = concat!("Pushes a `", stringify!($t), "` argument (`Value::", stringify!($variant), "`).")]
        ///
        /// ```
        /// # #[cfg(gatun_executes)] {
        /// use std::num::NonZeroUsize;
        /// use gatun::linker::SymbolLookup;
        /// use gatun::nonblocking::WorkerPool;
        /// use gatun::{FunctionDescriptor, Linker};
        /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
        /// let abs = Linker::native().downcall(&abs, &FunctionDescriptor::of_void([]), &[]).unwrap();
        /// let pool = WorkerPool::new(NonZeroUsize::MIN);
        /// let mut call = pool.call(&abs);
        #[doc = concat!("call.", stringify!($name), "(Default::default());")]
        /// drop(call); // not submitted: nothing runs
        /// # }
        /// ```
        pub fn $name(&mut self, value: $t) -> &mut Self {
            self.push(Arg::Value(Value::$variant(value)))
        }
    )*};
}

impl CallBuilder<'_> {
    fn data(&mut self) -> &mut record::Data {
        let record = self
            .record
            .as_ref()
            .expect("a builder holds its record until submitted");
        // SAFETY: state BUILDING: the builder is the record's only party (`&mut self`).
        unsafe { record.data() }
    }

    fn push(&mut self, arg: Arg) -> &mut Self {
        self.data().args.push(arg);
        self
    }

    scalar_pushers! {
        bool: bool => Bool;
        i8: i8 => I8;
        u8: u8 => U8;
        i16: i16 => I16;
        u16: u16 => U16;
        i32: i32 => I32;
        u32: u32 => U32;
        i64: i64 => I64;
        u64: u64 => U64;
        f32: f32 => F32;
        f64: f64 => F64;
    }

    /// Pushes a raw address (`Value::Address`). The memory behind it is the caller's to keep
    /// valid until the call returns (a promise of [`CallBuilder::submit`]); prefer
    /// [`CallBuilder::segment`] or [`CallBuilder::shared`], which the call keeps alive itself.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
    /// // void free(void *): free(NULL) does nothing.
    /// let free = SymbolLookup::default_lookup().find("free").unwrap();
    /// let free = Linker::native().downcall(&free, &FunctionDescriptor::of_void([V::ADDRESS]), &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let mut call = pool.call(&free);
    /// call.address(std::ptr::null_mut());
    /// // SAFETY: free(NULL) is a no-op.
    /// assert_eq!(unsafe { call.submit() }.wait().unwrap().value(), Value::Void);
    /// # }
    /// ```
    pub fn address(&mut self, address: *mut c_void) -> &mut Self {
        self.push(Arg::Value(Value::Address(address)))
    }

    /// Pushes a [`Value`]: a scalar or an address as is, a `Value::Segment` as
    /// [`CallBuilder::segment`] (a copy), `Value::Void` as an argument the call rejects.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
    /// let labs = SymbolLookup::default_lookup().find("llabs").unwrap();
    /// let labs = Linker::native().downcall(&labs, &FunctionDescriptor::of(V::I64, [V::I64]), &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let mut call = pool.call(&labs);
    /// call.value(&Value::I64(-1 << 40));
    /// // SAFETY: llabs has no preconditions.
    /// assert_eq!(unsafe { call.submit() }.wait().unwrap().value(), Value::I64(1 << 40));
    /// # }
    /// ```
    pub fn value(&mut self, value: &Value<'_>) -> &mut Self {
        match *value {
            Value::Segment(seg) => self.segment(seg),
            Value::Void => self.push(Arg::Value(Value::Void)),
            Value::Bool(v) => self.bool(v),
            Value::I8(v) => self.i8(v),
            Value::U8(v) => self.u8(v),
            Value::I16(v) => self.i16(v),
            Value::U16(v) => self.u16(v),
            Value::I32(v) => self.i32(v),
            Value::U32(v) => self.u32(v),
            Value::I64(v) => self.i64(v),
            Value::U64(v) => self.u64(v),
            Value::F32(v) => self.f32(v),
            Value::F64(v) => self.f64(v),
            Value::Address(v) => self.address(v),
        }
    }

    /// Pushes a copy of `segment`'s bytes, made now and owned by the call (16-byte aligned):
    /// a struct or union parameter receives it by value, a pointer parameter its address.
    /// After the call [`Completion::argument_segment`] reads the copy (what the C function
    /// wrote through the pointer). The copy's buffer is recycled with the call record, so it
    /// allocates only while the pool's records grow to the largest copies.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{Arena, FunctionDescriptor, Linker, SegmentAllocator, ValueLayout as V};
    /// // void *memset(void *, int, size_t), filling the call's copy of 4 bytes.
    /// let memset = SymbolLookup::default_lookup().find("memset").unwrap();
    /// let d = FunctionDescriptor::of(V::ADDRESS, [V::ADDRESS, V::I32, V::U64]);
    /// let memset = Linker::native().downcall(&memset, &d, &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let arena = Arena::confined();
    /// let mut call = pool.call(&memset);
    /// call.segment(arena.allocate(4, 1).unwrap()).i32(7).u64(4);
    /// // SAFETY: memset writes the 4 bytes of the copy.
    /// let done = unsafe { call.submit() }.wait().unwrap();
    /// assert_eq!(done.argument_segment(0).unwrap().to_vec(), [7, 7, 7, 7]);
    /// # }
    /// ```
    pub fn segment(&mut self, segment: MemorySegment<'_>) -> &mut Self {
        let len = segment.byte_size();
        let data = self.data();
        let offset = data.push_copy(len, |dst| {
            segment
                .copy_to_slice(0, dst)
                .expect("the copy has the segment's length");
        });
        self.push(Arg::Copy { offset, len })
    }

    /// Pushes the address of memory owned by `owner`, keeping `owner` alive until the C
    /// function returns (even if the future is dropped before). `segment` picks the memory:
    /// it gets `&O` for any lifetime, so the segment it returns is `owner`'s or `'static`,
    /// never memory the caller could free during the call.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use std::sync::Arc;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::memory::SharedArena;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{Arena, FunctionDescriptor, Linker, Value, ValueLayout as V};
    /// // size_t strlen(const char *), reading a string in a shared arena kept by the call.
    /// let strlen = SymbolLookup::default_lookup().find("strlen").unwrap();
    /// let strlen = Linker::native()
    ///     .downcall(&strlen, &FunctionDescriptor::of(V::U64, [V::ADDRESS]), &[])
    ///     .unwrap();
    /// let arena = Arc::new(Arena::shared());
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let mut call = pool.call(&strlen);
    /// call.shared(&arena, |a: &SharedArena| {
    ///     let s = a.allocate_shared(6, 1).unwrap();
    ///     s.copy_from_slice(0, b"hello\0").unwrap();
    ///     s
    /// });
    /// // SAFETY: strlen reads the NUL-terminated string, which lives as long as the call.
    /// let pending = unsafe { call.submit() };
    /// drop(arena); // the call keeps the arena alive
    /// assert_eq!(pending.wait().unwrap().value(), Value::U64(5));
    /// # }
    /// ```
    pub fn shared<O, F>(&mut self, owner: &Arc<O>, segment: F) -> &mut Self
    where
        O: Send + Sync + 'static,
        F: for<'x> FnOnce(&'x O) -> SharedSegment<'x>,
    {
        let address = segment(owner).as_address();
        let keep: Arc<dyn Send + Sync> = owner.clone();
        self.data().keep.push(keep);
        self.push(Arg::Value(Value::Address(address)))
    }

    /// Queues the call on the pool and returns its future. Starts a worker if every started
    /// one is busy and the pool has room.
    ///
    /// # Safety
    /// As [`DowncallHandle::invoke`]: the handle's symbol must be a function of its
    /// descriptor's type, and the arguments must satisfy its contract, on the worker thread
    /// that runs it and for as long as it runs: memory behind an [`CallBuilder::address`]
    /// stays valid until the future resolves (copies and [`CallBuilder::shared`] owners are
    /// kept by the call itself), and the function must be safe to call from another thread.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let abs = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::new(2).unwrap());
    /// let pending: Vec<_> = (0..4)
    ///     .map(|i| {
    ///         let mut call = pool.call(&abs);
    ///         call.i32(-i);
    ///         // SAFETY: abs has no preconditions.
    ///         unsafe { call.submit() }
    ///     })
    ///     .collect();
    /// let results: Vec<_> = pending.into_iter().map(|p| p.wait().unwrap().value()).collect();
    /// assert_eq!(results, [0, 1, 2, 3].map(Value::I32));
    /// # }
    /// ```
    pub unsafe fn submit(mut self) -> PendingCall {
        let record = self
            .record
            .take()
            .expect("a builder holds its record until submitted");
        self.pool.shared.submit(&record);
        PendingCall {
            record: Some(record),
            shared: self.pool.shared.clone(),
        }
    }
}

impl Drop for CallBuilder<'_> {
    fn drop(&mut self) {
        if let Some(record) = self.record.take() {
            record.release_submitted(&self.pool.shared.records);
        }
    }
}

/// The future of a non-blocking call (from [`CallBuilder::submit`]): resolves to the
/// [`Completion`], or to the error [`DowncallHandle::invoke`] would have returned.
///
/// `Send + 'static`; dropping it cancels a call no worker has started, and otherwise lets the
/// running call finish with every buffer it uses (see the [module documentation](self)).
///
/// # Panics
/// Polling it again after it returned `Ready` panics, as most futures do.
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use std::num::NonZeroUsize;
/// use gatun::linker::SymbolLookup;
/// use gatun::nonblocking::WorkerPool;
/// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
/// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
/// let abs = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
/// let pool = WorkerPool::new(NonZeroUsize::MIN);
/// let mut call = pool.call(&abs);
/// call.i32(-3);
/// // SAFETY: abs has no preconditions.
/// let pending = unsafe { call.submit() };
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// assert_eq!(rt.block_on(pending).unwrap().value(), Value::I32(3));
/// # }
/// ```
pub struct PendingCall {
    record: Option<Arc<Record>>,
    shared: Arc<Shared>,
}

impl fmt::Debug for PendingCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let done = self.record.as_ref().is_none_or(|r| r.is_done());
        write!(f, "PendingCall({})", if done { "done" } else { "pending" })
    }
}

impl PendingCall {
    /// Whether the worker has finished the call (the next poll is `Ready`; also `true` once
    /// the future has returned `Ready`).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{FunctionDescriptor, Linker, ValueLayout as V};
    /// let getpid = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let f = Linker::native().downcall(&getpid, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let mut call = pool.call(&f);
    /// call.i32(1);
    /// // SAFETY: abs has no preconditions.
    /// let pending = unsafe { call.submit() };
    /// while !pending.is_done() {
    ///     std::thread::yield_now();
    /// }
    /// assert!(pending.wait().is_ok());
    /// # }
    /// ```
    pub fn is_done(&self) -> bool {
        // No record: the future has already returned its completion.
        self.record.as_ref().is_none_or(|r| r.is_done())
    }

    /// Blocks the current thread until the call is done (for code outside an async runtime).
    /// Allocates nothing once the thread has waited before.
    ///
    /// # Errors
    /// As [`DowncallHandle::invoke`] for the call's arguments.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let abs = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let mut call = pool.call(&abs);
    /// call.i32(i32::MIN + 1);
    /// // SAFETY: abs has no preconditions.
    /// let done = unsafe { call.submit() }.wait().unwrap();
    /// assert_eq!(done.value(), Value::I32(i32::MAX));
    /// # }
    /// ```
    pub fn wait(mut self) -> Result<Completion> {
        thread_local! {
            static WAKER: Waker = Waker::from(Arc::new(Unparker(std::thread::current())));
        }
        WAKER.with(|waker| {
            let mut cx = Context::from_waker(waker);
            loop {
                if let Poll::Ready(r) = Pin::new(&mut self).poll(&mut cx) {
                    return r;
                }
                std::thread::park();
            }
        })
    }
}

/// Wakes a thread blocked in [`PendingCall::wait`].
struct Unparker(std::thread::Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

impl Future for PendingCall {
    type Output = Result<Completion>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Completion>> {
        let record = self
            .record
            .as_ref()
            .expect("PendingCall polled after it completed");
        if !record.is_done() && !record.register(cx.waker()) {
            return Poll::Pending;
        }
        let record = self.record.take().expect("checked above");
        // SAFETY: state DONE, seen with Acquire: the worker is done with the data, and this
        // future is the submitting side's only party.
        let result = unsafe { record.data() }
            .result
            .take()
            .expect("a worker stores the result before DONE");
        Poll::Ready(match result {
            Ok(value) => Ok(Completion {
                record: Some(record),
                shared: self.shared.clone(),
                value: ValueBits(value),
                _not_sync: PhantomData,
            }),
            Err(e) => {
                record.release_submitted(&self.shared.records);
                Err(e)
            }
        })
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        if let Some(record) = self.record.take() {
            // A call no worker has started is cancelled; a running one finishes, and the
            // record (with every buffer the C function uses) is freed by whichever of the
            // worker and this future lets go last.
            let _ = record.state.compare_exchange(
                QUEUED,
                CANCELLED,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
            record.release_submitted(&self.shared.records);
        }
    }
}

/// A scalar or address result, sent from the worker: numbers only, never dereferenced here.
#[derive(Clone, Copy)]
struct ValueBits(Value<'static>);

// SAFETY: a `ValueBits` holds a scalar, `Void` or an address (the worker stores no
// `Value::Segment`); an address is a number here, dereferenced only by the caller's unsafe code.
unsafe impl Send for ValueBits {}

/// A finished non-blocking call: its result, the state it captured, and the buffers the call
/// owned (the struct result and the copies of segment arguments), readable until it is
/// dropped, which recycles them.
///
/// `Send` but not `Sync`: the segment views it hands out are per-thread, like every
/// [`MemorySegment`].
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use std::num::NonZeroUsize;
/// use gatun::linker::SymbolLookup;
/// use gatun::nonblocking::WorkerPool;
/// use gatun::{FunctionDescriptor, Linker, MemoryLayout, Value, ValueLayout as V};
/// // div_t div(int, int), a struct returned by value into the call's buffer.
/// let div = SymbolLookup::default_lookup().find("div").unwrap();
/// let div_t = MemoryLayout::c_struct([V::I32.with_name("quot"), V::I32.with_name("rem")]).unwrap();
/// let div = Linker::native()
///     .downcall(&div, &FunctionDescriptor::of(div_t, [V::I32, V::I32]), &[])
///     .unwrap();
/// let pool = WorkerPool::new(NonZeroUsize::MIN);
/// let mut call = pool.call(&div);
/// call.i32(17).i32(5);
/// // SAFETY: div has no preconditions for a non-zero divisor.
/// let done = unsafe { call.submit() }.wait().unwrap();
/// let r = done.return_segment().unwrap();
/// assert_eq!((done.value(), r.get::<i32>(0).unwrap(), r.get::<i32>(4).unwrap()), (Value::Void, 3, 2));
/// # }
/// ```
pub struct Completion {
    record: Option<Arc<Record>>,
    shared: Arc<Shared>,
    value: ValueBits,
    _not_sync: PhantomData<Cell<()>>,
}

impl fmt::Debug for Completion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Completion({:?})", self.value.0)
    }
}

impl Completion {
    fn data(&self) -> &record::Data {
        let record = self.record.as_ref().expect("held until drop");
        // SAFETY: state DONE: the worker is done; the completion is the record's only party
        // and hands out shared views only (`!Sync`, so from this thread).
        unsafe { record.data_ref() }
    }

    /// The result: the scalar (truncated and extended as [`DowncallHandle::invoke`] returns
    /// it), `Value::Address` for a pointer, `Value::Void` for `void` and for a struct return
    /// (read with [`Completion::return_segment`]). A [`Value`] is not `Send`; to hand a result
    /// to another task, take the number out (`value().as_i64()`, ...) or send the `Completion`.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{FunctionDescriptor, Linker, Value, ValueLayout as V};
    /// let abs = SymbolLookup::default_lookup().find("abs").unwrap();
    /// let abs = Linker::native().downcall(&abs, &FunctionDescriptor::of(V::I32, [V::I32]), &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let mut call = pool.call(&abs);
    /// call.i32(-9);
    /// // SAFETY: abs has no preconditions.
    /// assert_eq!(unsafe { call.submit() }.wait().unwrap().value(), Value::I32(9));
    /// # }
    /// ```
    pub fn value(&self) -> Value<'static> {
        self.value.0
    }

    /// The struct or union the function returned by value (the return layout's size, in a
    /// 16-byte-aligned buffer the call owns), or `None` for a scalar or void return.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{FunctionDescriptor, Linker, MemoryLayout, ValueLayout as V};
    /// // ldiv_t ldiv(long, long), on an LP64 target.
    /// # #[cfg(not(windows))] {
    /// let ldiv = SymbolLookup::default_lookup().find("ldiv").unwrap();
    /// let t = MemoryLayout::c_struct([V::I64, V::I64]).unwrap();
    /// let ldiv = Linker::native().downcall(&ldiv, &FunctionDescriptor::of(t, [V::I64, V::I64]), &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let mut call = pool.call(&ldiv);
    /// call.i64(-100).i64(7);
    /// // SAFETY: ldiv has no preconditions for a non-zero divisor.
    /// let done = unsafe { call.submit() }.wait().unwrap();
    /// let q = done.return_segment().unwrap();
    /// assert_eq!((q.byte_size(), q.get::<i64>(0).unwrap(), q.get::<i64>(8).unwrap()), (16, -14, -2));
    /// # }
    /// # }
    /// ```
    pub fn return_segment(&self) -> Option<MemorySegment<'_>> {
        let data = self.data();
        let len = data.ret_len?;
        let ptr = record::chunks_as_bytes(&data.ret)[data.ret_offset..]
            .as_ptr()
            .cast_mut();
        // SAFETY: the record's return buffer (at least `len` bytes), which lives and is not
        // touched by anyone else until this completion is dropped, which the borrow outlives.
        Some(unsafe { MemorySegment::from_raw_parts(ptr, len) })
    }

    /// The call's copy of argument `index` (counted from 0, as pushed), pushed with
    /// [`CallBuilder::segment`] or as a `Value::Segment`: what the C function left in it.
    /// `None` for an index out of range or an argument that was not a copy.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{Arena, FunctionDescriptor, Linker, SegmentAllocator, ValueLayout as V};
    /// // char *strcpy(char *, const char *)
    /// let strcpy = SymbolLookup::default_lookup().find("strcpy").unwrap();
    /// let d = FunctionDescriptor::of(V::ADDRESS, [V::ADDRESS, V::ADDRESS]);
    /// let strcpy = Linker::native().downcall(&strcpy, &d, &[]).unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let arena = Arena::confined();
    /// let mut call = pool.call(&strcpy);
    /// call.segment(arena.allocate(3, 1).unwrap()).segment(arena.allocate_c_string("hi").unwrap());
    /// // SAFETY: the 3-byte destination holds "hi" and its NUL.
    /// let done = unsafe { call.submit() }.wait().unwrap();
    /// assert_eq!(done.argument_segment(0).unwrap().to_vec(), b"hi\0");
    /// assert!(done.argument_segment(2).is_none());
    /// # }
    /// ```
    pub fn argument_segment(&self, index: usize) -> Option<MemorySegment<'_>> {
        let data = self.data();
        let Arg::Copy { offset, len } = *data.args.get(index)? else {
            return None;
        };
        let ptr = record::chunks_as_bytes(&data.copies)[offset..]
            .as_ptr()
            .cast_mut();
        // SAFETY: `offset..offset + len` lies in the record's copies, alive and untouched by
        // anyone else until this completion is dropped, which the borrow outlives.
        Some(unsafe { MemorySegment::from_raw_parts(ptr, len) })
    }

    /// The call state the worker captured right after the call, by name (`"errno"`; on
    /// Windows also `"GetLastError"` and `"WSAGetLastError"`), for a handle linked with
    /// [`LinkerOption::CaptureCallState`](crate::LinkerOption::CaptureCallState); `None` for
    /// another handle or an unknown name.
    ///
    /// ```
    /// # #[cfg(all(gatun_executes, unix))] {
    /// use std::num::NonZeroUsize;
    /// use gatun::linker::SymbolLookup;
    /// use gatun::nonblocking::WorkerPool;
    /// use gatun::{FunctionDescriptor, Linker, LinkerOption, Value, ValueLayout as V};
    /// // int close(int), on a descriptor that is not open: -1 with errno EBADF.
    /// let close = SymbolLookup::default_lookup().find("close").unwrap();
    /// let close = Linker::native()
    ///     .downcall(&close, &FunctionDescriptor::of(V::I32, [V::I32]), &[LinkerOption::CaptureCallState(&["errno"])])
    ///     .unwrap();
    /// let pool = WorkerPool::new(NonZeroUsize::MIN);
    /// let mut call = pool.call(&close);
    /// call.i32(-1);
    /// // SAFETY: close of an invalid descriptor only fails.
    /// let done = unsafe { call.submit() }.wait().unwrap();
    /// assert_eq!((done.value(), done.captured("errno")), (Value::I32(-1), Some(libc::EBADF)));
    /// # }
    /// ```
    pub fn captured(&self, name: &str) -> Option<i32> {
        let data = self.data();
        if !data.handle.as_ref()?.captures_call_state() {
            return None;
        }
        let index = capturable_states().iter().position(|&n| n == name)?;
        Some(data.capture[index])
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        if let Some(record) = self.record.take() {
            record.release_submitted(&self.shared.records);
        }
    }
}
