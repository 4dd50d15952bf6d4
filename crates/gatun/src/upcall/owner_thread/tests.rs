//! The owner-thread queue without generated code (so Miri runs it): foreign threads call a
//! stub's state directly, as the stub's closure does, with arguments built here.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use super::{OwnerThread, StubState};
use crate::layout::{FunctionDescriptor, ValueLayout};
use crate::upcall::UpcallArgs;
use crate::value::Value;

const THREADS: usize = if cfg!(miri) { 3 } else { 8 };
const CALLS: i64 = if cfg!(miri) { 10 } else { 500 };

/// `int64_t (*)(int64_t)`, the closure adding `add` and counting its calls in a `Cell`.
fn state<'s>(owner: &OwnerThread, add: i64, calls: Rc<Cell<i64>>) -> StubState<'s> {
    StubState::new(
        owner,
        &FunctionDescriptor::of(ValueLayout::I64, [ValueLayout::I64]),
        Rc::new(move |a: &UpcallArgs<'_>| {
            calls.set(calls.get() + 1);
            Ok(Value::I64(a.get::<i64>(0)? + add))
        }),
        Value::I64(-1),
        false,
    )
}

/// One call of `state` with argument `x`, as the stub's closure makes it.
fn call(state: &StubState<'_>, x: i64) -> i64 {
    let values = [Value::I64(x)];
    let args = UpcallArgs {
        values: &values,
        ret: None,
        ctx: std::ptr::null(),
    };
    match state.call(&args).unwrap() {
        Value::I64(v) => v,
        v => panic!("unexpected {v:?}"),
    }
}

/// Shares a stub state with scoped threads (the stub's closure does this with an `Arc`).
struct Shared<'a, 's>(&'a StubState<'s>);

// SAFETY: `StubState` is `Sync` (its closure is only touched on the owner thread).
unsafe impl Send for Shared<'_, '_> {}

#[test]
fn foreign_calls_run_on_the_owner_and_get_their_results() {
    let owner = OwnerThread::new();
    let calls = Rc::new(Cell::new(0));
    let st = state(&owner, 1000, calls.clone());
    let finished = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for t in 0..THREADS as i64 {
            let (shared, finished) = (Shared(&st), &finished);
            s.spawn(move || {
                let shared = shared;
                for i in 0..CALLS {
                    assert_eq!(call(shared.0, t * CALLS + i), t * CALLS + i + 1000);
                }
                finished.fetch_add(1, Ordering::Release);
            });
        }
        while finished.load(Ordering::Acquire) < THREADS {
            owner.wait_pending(Duration::from_millis(1));
        }
    });
    assert_eq!(calls.get(), THREADS as i64 * CALLS);
    // On the owner thread itself the closure runs directly, nothing is queued.
    assert_eq!(call(&st, 1), 1001);
    assert_eq!(owner.run_pending(), 0);
}

#[test]
fn closing_releases_waiting_calls_with_the_default() {
    let owner = OwnerThread::new();
    let calls = Rc::new(Cell::new(0));
    let st = state(&owner, 1, calls.clone());
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS as i64)
            .map(|t| {
                let shared = Shared(&st);
                s.spawn(move || {
                    let shared = shared;
                    call(shared.0, t)
                })
            })
            .collect();
        while st.in_flight.load(Ordering::Acquire) < THREADS {
            std::thread::yield_now();
        }
        st.close();
        for h in handles {
            assert_eq!(h.join().unwrap(), -1);
        }
    });
    assert_eq!(calls.get(), 0);
    // Later calls, from any thread, get the default too.
    assert_eq!(call(&st, 5), -1);
    std::thread::scope(|s| {
        let shared = Shared(&st);
        let h = s.spawn(move || {
            let shared = shared;
            call(shared.0, 5)
        });
        assert_eq!(h.join().unwrap(), -1);
    });
}

/// Counts its wake-ups.
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_queued_call_wakes_the_task_polling_the_dispatcher() {
    let owner = OwnerThread::new();
    let calls = Rc::new(Cell::new(0));
    let st = state(&owner, 7, calls.clone());
    let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    assert!(owner.poll_pending(&mut cx).is_pending());
    std::thread::scope(|s| {
        let shared = Shared(&st);
        let h = s.spawn(move || {
            let shared = shared;
            call(shared.0, 1)
        });
        while counter.0.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
        // Woken: the next poll runs the call.
        assert_eq!(owner.poll_pending(&mut cx), std::task::Poll::Ready(1));
        assert_eq!(h.join().unwrap(), 8);
    });
    assert_eq!(calls.get(), 1);
}
