//! Owner-thread upcalls (`gatun::upcall::OwnerThread`): `!Send` closures called from C threads
//! (`upcall_run_threads` of `tests/native/upcall.c`, itself run as a non-blocking call so that
//! the owner thread stays free to run its queue), reentrant calls on the owner thread, teardown
//! while foreign threads wait, and an async owner loop.
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::cell::{Cell, RefCell};
use std::num::NonZeroUsize;
use std::rc::Rc;
use std::time::{Duration, Instant};

use common::*;
use gatun::linker::FunctionDescriptor as FD;
use gatun::memory::Arena;
use gatun::nonblocking::{PendingCall, WorkerPool};
use gatun::upcall::OwnerThread;
use gatun::{MemoryLayout, SegmentAllocator, Value};

/// `upcall_ticket`: `struct { int thread; int iteration; }`.
fn ticket() -> MemoryLayout {
    st([V::I32, V::I32])
}

/// `int64_t (*)(upcall_ticket)`.
fn ticket_cb() -> FD {
    FD::of(V::I64, [ticket()])
}

/// Runs `upcall_run_threads(cb, threads, iterations, sums)` on a worker of `pool`: C starts
/// `threads` threads that each call `cb({thread, i})` for i in 0..iterations, joins them and
/// sums each thread's results into `sums` (the call's copy, read back with
/// `argument_segment(3)`).
fn run_threads(
    pool: &WorkerPool,
    cb: Value<'static>,
    threads: i32,
    iterations: i32,
) -> PendingCall {
    let run = link(
        "upcall_run_threads",
        &FD::of(V::I32, [V::ADDRESS, V::I32, V::I32, V::ADDRESS]),
    );
    let arena = Arena::confined();
    let mut call = pool.call(&run);
    call.value(&cb)
        .i32(threads)
        .i32(iterations)
        .segment(arena.allocate(8 * threads as usize, 8).unwrap());
    // SAFETY: `cb` is an `int64_t (*)(upcall_ticket)` that outlives the call (each test
    // awaits it before dropping its stub, or drops the stub only once every C call is
    // waiting, which then returns the default); `sums` is the call's copy of 8 bytes per thread.
    unsafe { call.submit() }
}

fn sums(done: &gatun::nonblocking::Completion, threads: usize) -> Vec<i64> {
    let s = done.argument_segment(3).unwrap();
    (0..threads).map(|i| s.get::<i64>(i * 8).unwrap()).collect()
}

#[test]
fn eight_foreign_threads_times_ten_thousand_calls_run_on_the_owner() {
    const THREADS: i32 = 8;
    const ITERATIONS: i32 = 10_000;
    let owner = OwnerThread::new();
    let arena = Arena::confined();
    let me = std::thread::current().id();
    // Rc and RefCell: the closure is not Send, and every call checks it runs on this thread.
    let calls = Rc::new(Cell::new(0u64));
    let seen = Rc::new(RefCell::new(vec![0i64; THREADS as usize]));
    let stub = {
        let (calls, seen) = (calls.clone(), seen.clone());
        owner
            .upcall_stub(
                &ticket_cb(),
                move |a| {
                    assert_eq!(std::thread::current().id(), me);
                    let t = a.segment(0)?;
                    let (thread, i) = (t.get::<i32>(0)?, t.get::<i32>(4)?);
                    calls.set(calls.get() + 1);
                    seen.borrow_mut()[thread as usize] += 1;
                    Ok(Value::I64(i64::from(thread) * 1_000_000 + i64::from(i)))
                },
                &arena,
            )
            .unwrap()
    };
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let pending = run_threads(&pool, stub.as_value(), THREADS, ITERATIONS);
    let deadline = Instant::now() + Duration::from_secs(600);
    while !pending.is_done() {
        assert!(Instant::now() < deadline, "{} calls ran", calls.get());
        owner.wait_pending(Duration::from_millis(5));
    }
    let done = pending.wait().unwrap();
    assert_eq!(done.value(), Value::I32(0));
    let n = i64::from(ITERATIONS);
    let expected: Vec<i64> = (0..i64::from(THREADS))
        .map(|t| t * 1_000_000 * n + n * (n - 1) / 2)
        .collect();
    assert_eq!(sums(&done, THREADS as usize), expected);
    assert_eq!(calls.get(), (THREADS * ITERATIONS) as u64);
    assert_eq!(
        *seen.borrow(),
        vec![i64::from(ITERATIONS); THREADS as usize]
    );
    assert_eq!(stub.waiting_calls(), 0);
}

#[test]
fn calls_on_the_owner_thread_run_directly_and_reentrantly() {
    let owner = OwnerThread::new();
    let arena = Arena::confined();
    // int64_t nb_call_back(int64_t (*cb)(int64_t), int64_t x): cb(x) on the calling thread.
    let call_back = link("nb_call_back", &FD::of(V::I64, [V::ADDRESS, V::I64]));
    let depth = Rc::new(Cell::new(0));
    let me: Rc<RefCell<Option<Value<'static>>>> = Rc::new(RefCell::new(None));
    let stub = {
        let (depth, me) = (depth.clone(), me.clone());
        let call_back = call_back.clone();
        owner
            .upcall_stub(
                &FD::of(V::I64, [V::I64]),
                move |a| {
                    let x = a.get::<i64>(0)?;
                    depth.set(depth.get().max(x));
                    if x == 0 {
                        return Ok(Value::I64(0));
                    }
                    let cb = me.borrow().expect("set before the first call");
                    // SAFETY: nb_call_back calls this same stub, which is alive.
                    let inner = unsafe { call_back.invoke(&[cb, Value::I64(x - 1)]) }?;
                    Ok(Value::I64(inner.as_i64().unwrap() + x))
                },
                &arena,
            )
            .unwrap()
    };
    *me.borrow_mut() = Some(stub.as_value());
    // SAFETY: as above.
    let r = unsafe { call_back.invoke(&[stub.as_value(), Value::I64(10)]) }.unwrap();
    assert_eq!(r, Value::I64(55));
    assert_eq!(depth.get(), 10);
    assert_eq!(owner.run_pending(), 0); // nothing was queued
}

#[test]
fn dropping_the_stub_releases_waiting_foreign_threads_with_the_default() {
    const THREADS: i32 = 6;
    let owner = OwnerThread::new();
    let arena = Arena::confined();
    let ran = Rc::new(Cell::new(0));
    let stub = {
        let ran = ran.clone();
        owner
            .upcall_stub_or(
                &ticket_cb(),
                move |_| {
                    ran.set(ran.get() + 1);
                    Ok(Value::I64(1))
                },
                Value::I64(-7),
                &arena,
            )
            .unwrap()
    };
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    // One call per thread; the owner runs none of them.
    let pending = run_threads(&pool, stub.as_value(), THREADS, 1);
    let deadline = Instant::now() + Duration::from_secs(60);
    while stub.waiting_calls() < THREADS as usize {
        assert!(
            Instant::now() < deadline,
            "{} calls waiting",
            stub.waiting_calls()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(stub);
    let done = pending.wait().unwrap();
    assert_eq!(done.value(), Value::I32(0));
    assert_eq!(sums(&done, THREADS as usize), vec![-7; THREADS as usize]);
    assert_eq!(ran.get(), 0);
    // The queue holds nothing of the dropped stub.
    assert_eq!(owner.run_pending(), 0);
}

#[test]
fn teardown_after_some_calls_ran_returns_the_default_to_the_rest() {
    const THREADS: i32 = 4;
    let owner = OwnerThread::new();
    let arena = Arena::confined();
    let stub = owner
        .upcall_stub(&ticket_cb(), |_| Ok(Value::I64(100)), &arena)
        .unwrap();
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let pending = run_threads(&pool, stub.as_value(), THREADS, 1);
    // Run some calls (at least one), then drop the stub while the others wait or arrive.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut ran = 0;
    while ran == 0 {
        assert!(Instant::now() < deadline, "no call arrived");
        ran += owner.wait_pending(Duration::from_millis(5));
    }
    drop(stub);
    let done = pending.wait().unwrap();
    let sums = sums(&done, THREADS as usize);
    // Each thread got 100 from the closure or 0 (the zero default of an int64_t).
    assert!(sums.iter().all(|&s| s == 100 || s == 0), "{sums:?}");
    assert_eq!(sums.iter().filter(|&&s| s == 100).count(), ran);
}

#[test]
fn an_async_owner_loop_runs_the_calls_while_a_non_blocking_call_waits_for_them() {
    const THREADS: i32 = 4;
    const ITERATIONS: i32 = 500;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let total = local.block_on(&rt, async {
        let owner = Rc::new(OwnerThread::new());
        let arena = Arena::confined();
        let total = Rc::new(Cell::new(0i64));
        let stub = {
            let total = total.clone();
            owner
                .upcall_stub(
                    &ticket_cb(),
                    move |a| {
                        let i = a.segment(0)?.get::<i32>(4)?;
                        total.set(total.get() + i64::from(i));
                        Ok(Value::I64(i64::from(i)))
                    },
                    &arena,
                )
                .unwrap()
        };
        let pool = WorkerPool::new(NonZeroUsize::MIN);
        let pending = run_threads(&pool, stub.as_value(), THREADS, ITERATIONS);
        // The owner loop: a local task awaiting the dispatcher, beside the awaited call.
        let serve = {
            let owner = owner.clone();
            async move {
                loop {
                    owner.pending().await;
                }
            }
        };
        let done = tokio::select! {
            done = pending => done.unwrap(),
            _ = serve => unreachable!("the owner loop never ends"),
        };
        let n = i64::from(ITERATIONS);
        assert_eq!(
            sums(&done, THREADS as usize),
            vec![n * (n - 1) / 2; THREADS as usize]
        );
        drop(stub);
        total.get()
    });
    let n = i64::from(ITERATIONS);
    assert_eq!(total, i64::from(THREADS) * n * (n - 1) / 2);
}

#[test]
fn a_default_of_the_wrong_kind_is_an_error() {
    let owner = OwnerThread::new();
    let arena = Arena::confined();
    let err = owner
        .upcall_stub_or(&ticket_cb(), |_| Ok(Value::I64(0)), Value::I32(0), &arena)
        .unwrap_err();
    assert!(err.to_string().contains("expected i64"), "{err}");
    let err = owner
        .upcall_stub_or(
            &FD::of(ticket(), []),
            |_| Ok(Value::Void),
            Value::I64(0),
            &arena,
        )
        .unwrap_err();
    assert!(err.to_string().contains("void"), "{err}");
}

#[test]
fn dropping_a_stub_during_its_first_foreign_calls_never_crashes() {
    for _ in 0..20 {
        let owner = OwnerThread::new();
        let arena = Arena::confined();
        let stub = owner
            .upcall_stub_or(
                &FD::of(V::I64, [V::I64]),
                |a| Ok(Value::I64(a.get::<i64>(0)?)),
                Value::I64(-1),
                &arena,
            )
            .unwrap();
        let address = stub.address() as usize;
        std::thread::scope(|s| {
            let caller = s.spawn(move || {
                // SAFETY: an `int64_t (*)(int64_t)`; its code outlives the process once handed
                // out, and calls after the drop get the default.
                let f: extern "C" fn(i64) -> i64 = unsafe { std::mem::transmute(address) };
                (0..200_i64).map(|i| f(i)).collect::<Vec<_>>()
            });
            // The owner never runs its queue: every call waits, then gets the default.
            drop(stub);
            assert!(caller.join().unwrap().iter().all(|&r| r == -1));
        });
    }
}

#[test]
fn several_tasks_may_await_the_dispatcher() {
    const THREADS: i32 = 2;
    const ITERATIONS: i32 = 200;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let owner = Rc::new(OwnerThread::new());
        let arena = Arena::confined();
        let stub = owner
            .upcall_stub(&ticket_cb(), |_| Ok(Value::I64(1)), &arena)
            .unwrap();
        // The serving loop, and another task whose wait ends (by a timeout) before any call.
        let server = {
            let owner = owner.clone();
            tokio::task::spawn_local(async move {
                loop {
                    owner.pending().await;
                }
            })
        };
        tokio::task::yield_now().await;
        let brief = tokio::time::timeout(Duration::from_millis(1), owner.pending()).await;
        assert!(brief.is_err(), "no call was queued yet");
        let pool = WorkerPool::new(NonZeroUsize::MIN);
        let pending = run_threads(&pool, stub.as_value(), THREADS, ITERATIONS);
        let done = tokio::time::timeout(Duration::from_secs(120), pending)
            .await
            .expect("the serving loop was woken")
            .unwrap();
        assert_eq!(
            sums(&done, THREADS as usize),
            vec![i64::from(ITERATIONS); THREADS as usize]
        );
        server.abort();
        drop(stub);
    });
}
