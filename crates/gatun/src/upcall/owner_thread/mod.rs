//! Owner-thread upcalls: a closure that is not `Send` (it holds an interpreter's objects, an
//! `Rc`, a `RefCell`) behind a C function pointer that any thread may call. A call on the
//! owner thread runs the closure directly; a call from another thread (a C library's worker, an
//! audio callback, a thread made with `pthread_create`/`CreateThread`) parks that thread,
//! queues the call to the owner's [`OwnerThread`] dispatcher, and resumes it with the result
//! once the owner's event loop has run the call.
//!
//! # Invariants (every `unsafe` block of this module relies on them)
//! 1. A [`Request`] lives on the stack of the foreign thread that made it, which does not
//!    return (or touch the request) until `done` is `true` (stored with `Release` by the
//!    owner, read with `Acquire`). The owner touches a request only between popping it from
//!    the queue (under the queue's lock) and storing `done`; it clones the thread handle to
//!    unpark *before* storing `done`.
//! 2. The request's `args` point at the foreign thread's [`UpcallArgs`], alive while it waits.
//!    The result is written by the owner only, before `done`; read by the foreign thread only,
//!    after.
//! 3. The closure (`StubState::closure`) is touched only on the owner thread (calls check
//!    [`thread_token`]; the stub that drops it is `!Send`). Calls clone the `Rc` first, so a
//!    closure that drops its own stub while running stays alive until it returns.
//! 4. A queued request's stub state is alive: dropping an [`OwnerThreadUpcallStub`] removes
//!    its requests from the queue (completing them with the default result) under the lock
//!    before anything of the stub is freed.
//! 5. The stub's code is freed on drop only if its function pointer was never handed out
//!    and no thread other than the owner ever entered it; otherwise it stays allocated (the
//!    stub and its context: [`retire`]), because C may call it at any time, and a foreign
//!    thread that has just been handed its result may still be executing the stub's return
//!    sequence. A foreign call records that it entered, and counts itself in flight, under the
//!    queue's lock, before it reads `closed`; the drop sets `closed` and reads whether a
//!    foreign call entered under the same lock, so the two never disagree.
//!    [`OwnerThreadUpcallStub::free`] frees the code at once, on its caller's promise that no
//!    thread runs or will call the stub.

use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a waiting side (a foreign caller for its result, the owner in
/// [`OwnerThread::wait_pending`] for a call) spins before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

use super::abort::{abort_panicked, abort_upcall};
use super::stub::UpcallStub;
use super::UpcallArgs;
use crate::error::{Error, Result};
use crate::layout::{FunctionDescriptor, MemoryLayout};
use crate::linker::Linker;
use crate::memory::SegmentAllocator;
use crate::value::{zero_of, Value};

#[cfg(test)]
mod tests;

/// The closure of an owner-thread stub, shared by its calls on the owner thread.
type Closure<'s> = Rc<dyn for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>> + 's>;

/// The dispatcher of one owner thread: the queue of calls that foreign threads made to its
/// [`OwnerThreadUpcallStub`]s, run when the owner's loop asks ([`OwnerThread::run_pending`],
/// [`OwnerThread::wait_pending`], or the future [`OwnerThread::pending`]).
///
/// Made on the thread that owns the closures; `!Send` and `!Sync`, so it is used and dropped
/// there. Its stubs borrow it, so it outlives them.
///
/// Calls wait for the owner: if the owner blocks (in a downcall that waits for the foreign
/// thread, say) without running its queue, the foreign thread waits too. Run the queue from
/// the loop, or drop the stub to release the waiting threads with the default result.
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use std::cell::RefCell;
/// use gatun::upcall::OwnerThread;
/// use gatun::{Arena, FunctionDescriptor, Value, ValueLayout as V};
/// let owner = OwnerThread::new();
/// let arena = Arena::confined();
/// let seen = RefCell::new(Vec::new()); // not Send: the closure stays on this thread
/// let stub = owner
///     .upcall_stub(
///         &FunctionDescriptor::of(V::I32, [V::I32]),
///         |args| {
///             seen.borrow_mut().push(args.get::<i32>(0)?);
///             Ok(Value::I32(args.get::<i32>(0)? * 2))
///         },
///         &arena,
///     )
///     .unwrap();
/// // SAFETY: the stub is an `int (*)(int)` that outlives both calls.
/// let f: extern "C" fn(i32) -> i32 = unsafe { std::mem::transmute(stub.address()) };
/// let address = stub.address() as usize;
/// std::thread::scope(|s| {
///     let t = s.spawn(move || {
///         // SAFETY: as above; this thread waits until the owner runs the call.
///         let f: extern "C" fn(i32) -> i32 = unsafe { std::mem::transmute(address) };
///         f(21)
///     });
///     while !t.is_finished() {
///         owner.wait_pending(std::time::Duration::from_millis(10));
///     }
///     assert_eq!(t.join().unwrap(), 42);
/// });
/// assert_eq!(f(5), 10); // on the owner thread: called directly
/// assert_eq!(*seen.borrow(), [21, 5]);
/// # }
/// ```
pub struct OwnerThread {
    dispatch: Arc<Dispatch>,
    _not_send: PhantomData<*const ()>,
}

/// What the owner and the foreign threads share.
struct Dispatch {
    /// The owner thread's [`thread_token`].
    owner: u64,
    queue: Mutex<VecDeque<RequestPtr>>,
    /// The queue's length, kept under its lock, read without it by a spinning owner.
    queued: AtomicUsize,
    /// Signalled when a request is queued, for [`OwnerThread::wait_pending`].
    ready: Condvar,
    /// The wakers of the tasks polling [`OwnerThread::pending`] since the last queued call
    /// (each task once), all woken by the next one.
    wakers: Mutex<Vec<Waker>>,
}

/// A queued request (on its foreign thread's stack; invariant 1).
#[derive(Clone, Copy, PartialEq, Eq)]
struct RequestPtr(*const Request);

// SAFETY: the pointer is only dereferenced under the rules of invariant 1 (the request stays
// alive and unaliased by its thread until `done`).
unsafe impl Send for RequestPtr {}

/// One call from a foreign thread, waiting for the owner.
struct Request {
    /// The stub's state (alive while queued: invariant 4).
    stub: *const StubState<'static>,
    /// The foreign thread's arguments, lifetime erased (invariant 2).
    args: *const UpcallArgs<'static>,
    /// Written by the owner before `done` (invariant 2), lifetime erased like `args`.
    result: UnsafeCell<Option<Result<Value<'static>>>>,
    done: AtomicBool,
    thread: Thread,
}

/// The part of a stub its calls share.
struct StubState<'s> {
    /// `None` once the stub is dropped (invariant 3: owner thread only).
    closure: UnsafeCell<Option<Closure<'s>>>,
    default: Value<'static>,
    /// Whether the return is a struct or union (its default: zero bytes).
    group_return: bool,
    closed: AtomicBool,
    /// Whether a thread other than the owner ever entered the stub (invariant 5).
    entered_from_foreign: AtomicBool,
    /// Foreign calls between entering the closure and getting their result.
    in_flight: AtomicUsize,
    dispatch: Arc<Dispatch>,
    descriptor: FunctionDescriptor,
}

// SAFETY: `closure` is only touched on the owner thread (invariant 3); `default` is a scalar,
// an address or `Void` (a number, never dereferenced here); the rest is atomics and `Sync`
// values.
unsafe impl Send for StubState<'_> {}
// SAFETY: as above.
unsafe impl Sync for StubState<'_> {}

impl fmt::Debug for OwnerThread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OwnerThread({} queued)", self.lock().len())
    }
}

impl Default for OwnerThread {
    fn default() -> Self {
        OwnerThread::new()
    }
}

impl OwnerThread {
    /// A dispatcher owned by the calling thread.
    ///
    /// ```
    /// use gatun::upcall::OwnerThread;
    /// let owner = OwnerThread::new();
    /// assert_eq!(owner.run_pending(), 0); // nothing queued
    /// ```
    pub fn new() -> OwnerThread {
        OwnerThread {
            dispatch: Arc::new(Dispatch {
                owner: thread_token(),
                queue: Mutex::new(VecDeque::new()),
                queued: AtomicUsize::new(0),
                ready: Condvar::new(),
                wakers: Mutex::new(Vec::new()),
            }),
            _not_send: PhantomData,
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<RequestPtr>> {
        self.dispatch.lock()
    }

    /// Makes a C function pointer of type `descriptor` that calls `closure` on this thread,
    /// whichever thread C calls it from. The closure gets [`UpcallArgs`] and returns the
    /// result as for [`Linker::upcall_stub`] (the same value rules; an `Err` or a panic aborts
    /// the process, as there). A call made after the stub is dropped, or waiting when it is,
    /// returns the default result: zero of the return type (null for a pointer, zero bytes for
    /// a struct). [`OwnerThread::upcall_stub_or`] sets another.
    ///
    /// # Errors
    /// As [`Linker::upcall_stub`].
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use std::rc::Rc;
    /// use gatun::upcall::OwnerThread;
    /// use gatun::{Arena, FunctionDescriptor, Value, ValueLayout as V};
    /// let owner = OwnerThread::new();
    /// let arena = Arena::confined();
    /// let name = Rc::new(String::from("gatun")); // not Send
    /// let stub = owner
    ///     .upcall_stub(&FunctionDescriptor::of(V::U64, []), move |_| Ok(Value::U64(name.len() as u64)), &arena)
    ///     .unwrap();
    /// // SAFETY: a `uint64_t (*)(void)` called on the owner thread.
    /// let f: extern "C" fn() -> u64 = unsafe { std::mem::transmute(stub.address()) };
    /// assert_eq!(f(), 5);
    /// # }
    /// ```
    pub fn upcall_stub<'s, A, F>(
        &'s self,
        descriptor: &FunctionDescriptor,
        closure: F,
        arena: &'s A,
    ) -> Result<OwnerThreadUpcallStub<'s>>
    where
        A: SegmentAllocator + ?Sized,
        F: for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>> + 's,
    {
        let default = match descriptor.return_layout() {
            Some(MemoryLayout::Value(v)) => zero_of(v.kind()),
            _ => Value::Void,
        };
        self.upcall_stub_or(descriptor, closure, default, arena)
    }

    /// As [`OwnerThread::upcall_stub`], returning `default` to C for a call made after the
    /// stub is dropped or waiting when it is (an error code the C library understands, say).
    ///
    /// # Errors
    /// As [`Linker::upcall_stub`], and [`Error::ValueMismatch`] for a `default` of another
    /// kind than the return type (`Value::Void` for `void` and for a struct return, whose
    /// default is zero bytes).
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::upcall::OwnerThread;
    /// use gatun::{Arena, FunctionDescriptor, Value, ValueLayout as V};
    /// let owner = OwnerThread::new();
    /// let arena = Arena::confined();
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let stub = owner.upcall_stub_or(&d, |a| Ok(Value::I32(a.get::<i32>(0)?)), Value::I32(-1), &arena);
    /// assert!(stub.is_ok());
    /// // A default of another type than `int` is an error.
    /// assert!(owner.upcall_stub_or(&d, |_| Ok(Value::I32(0)), Value::F64(0.0), &arena).is_err());
    /// # }
    /// ```
    pub fn upcall_stub_or<'s, A, F>(
        &'s self,
        descriptor: &FunctionDescriptor,
        closure: F,
        default: Value<'static>,
        arena: &'s A,
    ) -> Result<OwnerThreadUpcallStub<'s>>
    where
        A: SegmentAllocator + ?Sized,
        F: for<'a> Fn(&UpcallArgs<'a>) -> Result<Value<'a>> + 's,
    {
        let group_return = descriptor.return_layout().is_some_and(|l| l.is_group());
        let expected = match descriptor.return_layout() {
            Some(MemoryLayout::Value(v)) => Some(v.kind()),
            _ => None,
        };
        if default.scalar_kind() != expected || matches!(default, Value::Segment(_)) {
            return Err(Error::ValueMismatch {
                position: format!("the default result of an owner-thread upcall {descriptor}"),
                expected: expected.map_or_else(
                    || "void (zero bytes for a struct return)".to_string(),
                    |k| k.to_string(),
                ),
                found: default.kind_name().into(),
            });
        }
        let state = Arc::new(StubState::new(
            self,
            descriptor,
            Rc::new(closure),
            default,
            group_return,
        ));
        let for_stub = state.clone();
        let stub = Linker::native().upcall_stub(
            descriptor,
            move |args: &UpcallArgs<'_>| for_stub.call(args),
            arena,
        )?;
        Ok(OwnerThreadUpcallStub {
            stub: Some(stub),
            state,
            handed_out: Cell::new(false),
            _owner: PhantomData,
        })
    }

    /// Runs every call queued now (the ones foreign threads made to this thread's stubs), in
    /// the order they arrived, and returns how many ran. Never waits. A closure may call it
    /// again (or call C that calls back): queued calls then run nested.
    ///
    /// ```
    /// use gatun::upcall::OwnerThread;
    /// let owner = OwnerThread::new();
    /// assert_eq!(owner.run_pending(), 0);
    /// ```
    pub fn run_pending(&self) -> usize {
        let mut ran = 0;
        loop {
            let next = {
                let mut q = self.lock();
                let next = q.pop_front();
                self.dispatch.queued.store(q.len(), Ordering::Relaxed);
                next
            };
            let Some(request) = next else {
                return ran;
            };
            // SAFETY: popped under the lock: the request is alive and ours until `done`
            // (invariant 1), and its stub state is alive (invariant 4).
            unsafe { run_request(request) };
            ran += 1;
        }
    }

    /// Waits up to `timeout` for a call to be queued, then runs every queued call (as
    /// [`OwnerThread::run_pending`]); returns how many ran (0 after a timeout). For a loop
    /// that has nothing else to do. It checks the queue in a busy loop for the first 50 µs
    /// (at most `timeout`) before it sleeps, so a caller on another core is answered without
    /// a thread wake-up; a waiting foreign caller likewise spins for 50 µs before it parks.
    ///
    /// ```
    /// use std::time::Duration;
    /// use gatun::upcall::OwnerThread;
    /// let owner = OwnerThread::new();
    /// assert_eq!(owner.wait_pending(Duration::from_millis(1)), 0);
    /// ```
    pub fn wait_pending(&self, timeout: Duration) -> usize {
        // First a short spin: a caller on another core is answered without two thread
        // wake-ups (its own and this thread's).
        let start = Instant::now();
        let spin_end = start + timeout.min(SPIN);
        while self.dispatch.queued.load(Ordering::Relaxed) == 0 && Instant::now() < spin_end {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
        {
            let q = self.lock();
            let left = timeout.saturating_sub(start.elapsed());
            if q.is_empty() && !left.is_zero() {
                let (_q, _) = self
                    .dispatch
                    .ready
                    .wait_timeout_while(q, left, |q| q.is_empty())
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        self.run_pending()
    }

    /// Runs the queued calls if there are any (`Ready(count)`); otherwise registers the
    /// task's waker (beside those of other tasks polling it), woken when a foreign thread
    /// queues a call, and returns `Pending`.
    ///
    /// ```
    /// use std::task::{Context, Poll, Waker};
    /// use gatun::upcall::OwnerThread;
    /// let owner = OwnerThread::new();
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert!(owner.poll_pending(&mut cx).is_pending());
    /// ```
    pub fn poll_pending(&self, cx: &mut TaskContext<'_>) -> Poll<usize> {
        let ran = self.run_pending();
        if ran > 0 {
            return Poll::Ready(ran);
        }
        {
            let mut wakers = self
                .dispatch
                .wakers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                wakers.push(cx.waker().clone());
            }
        }
        // A call queued before the waker was registered is run now, not missed.
        match self.run_pending() {
            0 => Poll::Pending,
            n => Poll::Ready(n),
        }
    }

    /// A future that runs the queued calls once there are any and resolves to how many ran
    /// ([`OwnerThread::poll_pending`] as a future). An event loop awaits it repeatedly, on the
    /// owner thread (a `tokio::task::LocalSet`, a current-thread runtime). Any number of tasks
    /// may await it at once: a queued call wakes all of them (the first to run empties the
    /// queue, the others wait again).
    ///
    /// ```
    /// use std::future::Future;
    /// use std::task::{Context, Waker};
    /// use gatun::upcall::OwnerThread;
    /// let owner = OwnerThread::new();
    /// let mut next = std::pin::pin!(owner.pending());
    /// assert!(next.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
    /// ```
    pub fn pending(&self) -> RunPending<'_> {
        RunPending { owner: self }
    }
}

impl Drop for OwnerThread {
    fn drop(&mut self) {
        // The dispatch outlives this dispatcher when a stub's code is kept (invariant 5): let
        // go of the task the last `pending()` poll registered.
        let wakers = std::mem::take(
            &mut *self
                .dispatch
                .wakers
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        drop(wakers);
    }
}

impl Dispatch {
    /// Wakes every task that polled [`OwnerThread::pending`] since the last call was queued.
    /// The wakers are taken out and woken outside the lock (a waker is user code), and the
    /// emptied list is put back, so that a steady loop allocates nothing.
    fn wake_tasks(&self) {
        let lock = || self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        let mut taken = {
            let mut wakers = lock();
            if wakers.is_empty() {
                return;
            }
            std::mem::take(&mut *wakers)
        };
        for w in taken.drain(..) {
            w.wake();
        }
        let mut wakers = lock();
        if wakers.capacity() < taken.capacity() {
            // Keep the larger buffer, with whatever registered in between.
            taken.append(&mut wakers);
            *wakers = taken;
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<RequestPtr>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The future of [`OwnerThread::pending`]: resolves to the number of calls it ran (at least
/// one).
#[derive(Debug)]
pub struct RunPending<'d> {
    owner: &'d OwnerThread,
}

impl Future for RunPending<'_> {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<usize> {
        self.owner.poll_pending(cx)
    }
}

/// A number unique to the calling thread for the life of the process (never reused by a later
/// thread, unlike a thread-local's address): the owner's identity, checked on every call.
fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TOKEN: Cell<u64> = const { Cell::new(0) };
    }
    TOKEN.with(|t| match t.get() {
        0 => {
            let token = NEXT.fetch_add(1, Ordering::Relaxed);
            t.set(token);
            token
        }
        token => token,
    })
}

impl<'s> StubState<'s> {
    fn new(
        owner: &OwnerThread,
        descriptor: &FunctionDescriptor,
        closure: Closure<'s>,
        default: Value<'static>,
        group_return: bool,
    ) -> StubState<'s> {
        StubState {
            closure: UnsafeCell::new(Some(closure)),
            default,
            group_return,
            closed: AtomicBool::new(false),
            entered_from_foreign: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            dispatch: owner.dispatch.clone(),
            descriptor: descriptor.clone(),
        }
    }

    /// Closes the stub: the calls waiting for the owner get the default result, later ones
    /// too, and the closure is dropped. On the owner thread only (invariant 3). Returns whether
    /// a thread other than the owner ever entered the stub (read under the queue's lock, after
    /// closing: invariant 5).
    fn close(&self) -> bool {
        let (released, entered): (Vec<RequestPtr>, bool) = {
            let mut q = self.dispatch.lock();
            self.closed.store(true, Ordering::Relaxed);
            let entered = self.entered_from_foreign.load(Ordering::Relaxed);
            let me: *const StubState<'static> = (self as *const StubState<'_>).cast();
            let mut mine = Vec::new();
            let before = q.len();
            q.retain(|r| {
                // SAFETY: a queued request is alive (invariant 1).
                let is_mine = unsafe { (*r.0).stub } == me;
                if is_mine {
                    mine.push(*r);
                }
                !is_mine
            });
            if q.len() != before {
                self.dispatch.queued.store(q.len(), Ordering::Relaxed);
            }
            (mine, entered)
        };
        for r in released {
            // SAFETY: removed from the queue under its lock by the owner thread.
            let req = unsafe { &*r.0 };
            // SAFETY: invariant 2.
            let args: &UpcallArgs<'static> = unsafe { &*req.args };
            complete(r, self.default_result(args));
        }
        // SAFETY: on the owner thread (invariant 3); a running call holds its own `Rc`.
        drop(unsafe { (*self.closure.get()).take() });
        entered
    }

    /// The default result, for a call the closure will not run (the stub is dropped).
    fn default_result<'a>(&self, args: &UpcallArgs<'a>) -> Result<Value<'a>> {
        if self.group_return {
            if let Some(ret) = args.return_segment() {
                ret.fill(0);
            }
            return Ok(Value::Void);
        }
        Ok(self.default)
    }

    /// The stub's closure body, on whatever thread C called from.
    fn call<'a>(&self, args: &UpcallArgs<'a>) -> Result<Value<'a>> {
        if self.dispatch.owner == thread_token() {
            // SAFETY: on the owner thread (invariant 3).
            let closure = unsafe { (*self.closure.get()).clone() };
            return match closure {
                Some(f) => f(args),
                None => self.default_result(args),
            };
        }
        let result = self.call_from_foreign(args);
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
        result
    }

    /// Queues the call for the owner and waits for its result.
    fn call_from_foreign<'a>(&self, args: &UpcallArgs<'a>) -> Result<Value<'a>> {
        let request = Request {
            stub: (self as *const StubState<'s>).cast(),
            args: (args as *const UpcallArgs<'a>).cast(),
            result: UnsafeCell::new(None),
            done: AtomicBool::new(false),
            thread: std::thread::current(),
        };
        {
            let mut q = self.dispatch.lock();
            // Under the lock that `close` holds when it reads them (invariant 5): a stub
            // entered from this thread is never freed under it.
            self.entered_from_foreign.store(true, Ordering::Relaxed);
            self.in_flight.fetch_add(1, Ordering::Relaxed);
            if self.closed.load(Ordering::Relaxed) {
                drop(q);
                return self.default_result(args);
            }
            q.push_back(RequestPtr(&request));
            self.dispatch.queued.store(q.len(), Ordering::Relaxed);
        }
        self.dispatch.ready.notify_one();
        self.dispatch.wake_tasks();
        // A short spin first (an owner running its queue answers within microseconds), then
        // park until the owner unparks this thread.
        let spin_end = Instant::now() + SPIN;
        while !request.done.load(Ordering::Acquire) && Instant::now() < spin_end {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
        while !request.done.load(Ordering::Acquire) {
            std::thread::park();
        }
        // SAFETY: `done` is set (Acquire): the owner wrote the result and no longer touches
        // the request (invariants 1, 2).
        let result = unsafe { (*request.result.get()).take() };
        // SAFETY: the result was made from this call's `args` (lifetime `'a`), whose lifetime
        // `run_request` erased.
        let result: Option<Result<Value<'a>>> = unsafe { std::mem::transmute(result) };
        result.unwrap_or_else(|| self.default_result(args))
    }
}

/// Runs one popped request on the owner thread and releases its foreign thread.
///
/// # Safety
/// `request` was popped from the queue under its lock by the owner thread (invariants 1, 4).
unsafe fn run_request(request: RequestPtr) {
    // SAFETY: the caller's promise: alive until `done`, and its stub state is alive.
    let (req, stub) = unsafe { (&*request.0, &*(*request.0).stub) };
    // SAFETY: invariant 2: the foreign thread's arguments, alive while it waits.
    let args: &UpcallArgs<'static> = unsafe { &*req.args };
    // SAFETY: on the owner thread (invariant 3).
    let closure = unsafe { (*stub.closure.get()).clone() };
    let result = match closure {
        Some(f) => match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(args))) {
            // A struct result is copied into the caller's return segment here, on the owner
            // thread, while the memory it came from is certainly alive.
            Ok(Ok(Value::Segment(s))) if stub.group_return => match args.return_segment() {
                Some(ret) if s.byte_size() >= ret.byte_size() => {
                    // SAFETY: `s` has at least `ret`'s size (checked); the copy reads its
                    // first `ret.byte_size()` bytes.
                    let prefix = unsafe {
                        crate::memory::MemorySegment::from_raw_parts(s.as_ptr(), ret.byte_size())
                    };
                    match ret.copy_from(&prefix) {
                        Ok(()) => Ok(Value::Void),
                        Err(e) => abort_upcall(&stub.descriptor, format_args!("{e}")),
                    }
                }
                // Too short: the foreign thread's dispatcher reports it, as for any upcall.
                _ => Ok(Value::Segment(s)),
            },
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => abort_upcall(&stub.descriptor, format_args!("{e}")),
            Err(payload) => abort_panicked(&stub.descriptor, payload),
        },
        None => stub.default_result(args),
    };
    complete(request, result);
}

/// Hands `result` to a request's foreign thread and unparks it.
fn complete(request: RequestPtr, result: Result<Value<'static>>) {
    // SAFETY: invariant 1: the request is alive until `done` is stored below, and only the
    // owner (the caller) touches it now.
    let req = unsafe { &*request.0 };
    // SAFETY: as above; the foreign thread reads the result only after `done`.
    unsafe { *req.result.get() = Some(result) };
    let thread = req.thread.clone();
    req.done.store(true, Ordering::Release);
    thread.unpark();
}

/// An upcall stub whose closure runs on its [`OwnerThread`]'s thread, whichever thread calls
/// it (made by [`OwnerThread::upcall_stub`]). `!Send`; borrows its dispatcher and its arena.
///
/// Dropping it (on the owner thread) completes the calls waiting for the owner with the
/// default result and drops the closure; calls that C makes later, from any thread, get the
/// default result too. So that such calls never run freed code, a stub whose function pointer
/// was handed out ([`address`](OwnerThreadUpcallStub::address),
/// [`as_value`](OwnerThreadUpcallStub::as_value)) keeps its code and context (some hundred
/// bytes) allocated after the drop, for the life of the process;
/// [`free`](OwnerThreadUpcallStub::free) frees them at once when the caller knows that C
/// will not call the stub again.
///
/// ```
/// # #[cfg(gatun_executes)] {
/// use gatun::upcall::OwnerThread;
/// use gatun::{Arena, FunctionDescriptor, Value};
/// let owner = OwnerThread::new();
/// let arena = Arena::confined();
/// let stub = owner.upcall_stub(&FunctionDescriptor::of_void([]), |_| Ok(Value::Void), &arena).unwrap();
/// assert!(!stub.address().is_null());
/// assert_eq!(stub.descriptor().to_string(), "()v");
/// # }
/// ```
pub struct OwnerThreadUpcallStub<'s> {
    /// `None` only while dropping.
    stub: Option<UpcallStub<'s>>,
    state: Arc<StubState<'s>>,
    /// Whether the function pointer was ever handed out (`address`, `as_value`).
    handed_out: Cell<bool>,
    _owner: PhantomData<(&'s OwnerThread, *const ())>,
}

impl fmt::Debug for OwnerThreadUpcallStub<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OwnerThread{:?}", self.upcall_stub())
    }
}

impl<'s> OwnerThreadUpcallStub<'s> {
    fn upcall_stub(&self) -> &UpcallStub<'s> {
        self.stub.as_ref().expect("present until drop")
    }

    /// The C function pointer.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::upcall::OwnerThread;
    /// use gatun::{Arena, FunctionDescriptor, Value};
    /// let (owner, arena) = (OwnerThread::new(), Arena::confined());
    /// let stub = owner.upcall_stub(&FunctionDescriptor::of_void([]), |_| Ok(Value::Void), &arena).unwrap();
    /// assert_eq!(stub.as_value(), Value::Address(stub.address().cast_mut()));
    /// # }
    /// ```
    pub fn address(&self) -> *const std::ffi::c_void {
        self.handed_out.set(true);
        self.upcall_stub().address()
    }

    /// The C function pointer as a `Value::Address`, to pass to a downcall.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::upcall::OwnerThread;
    /// use gatun::{Arena, FunctionDescriptor, Value};
    /// let (owner, arena) = (OwnerThread::new(), Arena::confined());
    /// let stub = owner.upcall_stub(&FunctionDescriptor::of_void([]), |_| Ok(Value::Void), &arena).unwrap();
    /// assert!(matches!(stub.as_value(), Value::Address(p) if !p.is_null()));
    /// # }
    /// ```
    pub fn as_value(&self) -> Value<'static> {
        self.handed_out.set(true);
        self.upcall_stub().as_value()
    }

    /// The stub's C signature.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::upcall::OwnerThread;
    /// use gatun::{Arena, FunctionDescriptor, Value, ValueLayout as V};
    /// let (owner, arena) = (OwnerThread::new(), Arena::confined());
    /// let d = FunctionDescriptor::of(V::I32, [V::I32]);
    /// let stub = owner.upcall_stub(&d, |a| Ok(Value::I32(a.get::<i32>(0)?)), &arena).unwrap();
    /// assert_eq!(stub.descriptor(), &d);
    /// # }
    /// ```
    pub fn descriptor(&self) -> &FunctionDescriptor {
        &self.state.descriptor
    }

    /// How many calls from other threads are waiting for (or being run by) the owner now.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::upcall::OwnerThread;
    /// use gatun::{Arena, FunctionDescriptor, Value};
    /// let (owner, arena) = (OwnerThread::new(), Arena::confined());
    /// let stub = owner.upcall_stub(&FunctionDescriptor::of_void([]), |_| Ok(Value::Void), &arena).unwrap();
    /// assert_eq!(stub.waiting_calls(), 0);
    /// # }
    /// ```
    pub fn waiting_calls(&self) -> usize {
        self.state.in_flight.load(Ordering::Acquire)
    }
}

impl<'s> OwnerThreadUpcallStub<'s> {
    /// Drops the stub and frees its code and context at once, even if its function pointer
    /// was handed out (which a plain drop keeps allocated). Calls waiting for the owner get
    /// the default result first.
    ///
    /// # Safety
    /// No thread is executing the stub (waiting calls included: `waiting_calls()` is 0 and no
    /// C thread is between entering the stub and being counted) and none will call its
    /// function pointer again.
    ///
    /// ```
    /// # #[cfg(gatun_executes)] {
    /// use gatun::upcall::OwnerThread;
    /// use gatun::{Arena, FunctionDescriptor, Value, ValueLayout as V};
    /// let (owner, arena) = (OwnerThread::new(), Arena::confined());
    /// let stub = owner.upcall_stub(&FunctionDescriptor::of(V::I32, []), |_| Ok(Value::I32(7)), &arena).unwrap();
    /// // SAFETY: an `int (*)(void)`, called here only.
    /// let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(stub.address()) };
    /// assert_eq!(f(), 7);
    /// // SAFETY: the call above has returned and nothing calls `f` again.
    /// unsafe { stub.free() };
    /// # }
    /// ```
    pub unsafe fn free(mut self) {
        self.state.close();
        drop(self.stub.take());
    }
}

impl Drop for OwnerThreadUpcallStub<'_> {
    fn drop(&mut self) {
        let Some(stub) = self.stub.take() else {
            return; // freed by `free`
        };
        // On the owner thread: the stub is `!Send`.
        let entered = self.state.close();
        if entered || self.handed_out.get() {
            retire(stub);
        } else {
            drop(stub);
        }
    }
}

/// Keeps a dropped stub's code and context allocated for the life of the process (invariant
/// 5), in a list a leak checker sees as reachable.
fn retire(stub: UpcallStub<'_>) {
    static RETIRED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    let kept = Box::into_raw(Box::new(stub)) as usize;
    RETIRED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(kept);
}
