//! Non-blocking calls (`gatun::nonblocking`) against C natives that block on a condition
//! variable (`tests/native/nonblocking.c`): many calls in flight on few workers, an event loop
//! that keeps ticking while slow calls run, errno captured on the worker, struct arguments and
//! returns, futures dropped mid-call with the memory the call uses kept alive, and calls
//! cancelled before they started.
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use gatun::linker::FunctionDescriptor as FD;
use gatun::memory::{Arena, SharedArena};
use gatun::nonblocking::{PendingCall, WorkerPool};
use gatun::{LinkerOption, SegmentAllocator, Value};

/// A gate of the test natives (`nb_gate *`).
struct Gate(*mut std::ffi::c_void);

// SAFETY: the gate is only used through the natives' functions, which lock.
unsafe impl Send for Gate {}
// SAFETY: as above.
unsafe impl Sync for Gate {}

impl Gate {
    fn new() -> Gate {
        let new = link("nb_gate_new", &FD::of(V::ADDRESS, []));
        // SAFETY: `nb_gate *nb_gate_new(void)` allocates a closed gate.
        match unsafe { new.invoke(&[]) }.unwrap() {
            Value::Address(p) if !p.is_null() => Gate(p),
            v => panic!("nb_gate_new returned {v:?}"),
        }
    }

    fn int(&self, name: &str) -> i32 {
        let f = link(name, &FD::of(V::I32, [V::ADDRESS]));
        // SAFETY: `int f(nb_gate *)` on a live gate.
        unsafe { f.invoke(&[Value::Address(self.0)]) }
            .unwrap()
            .as_i32()
            .unwrap()
    }

    fn waiters(&self) -> i32 {
        self.int("nb_gate_waiters")
    }

    fn passed(&self) -> i32 {
        self.int("nb_gate_passed")
    }

    fn open(&self) {
        let f = link("nb_gate_open", &FD::of_void([V::ADDRESS]));
        // SAFETY: `void nb_gate_open(nb_gate *)` on a live gate.
        unsafe { f.invoke(&[Value::Address(self.0)]) }.unwrap();
    }

    /// Waits (at most a minute) until `n` calls wait at the gate.
    fn wait_for_waiters(&self, n: i32) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.waiters() < n {
            assert!(
                Instant::now() < deadline,
                "{} of {n} calls waiting",
                self.waiters()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let f = link("nb_gate_free", &FD::of_void([V::ADDRESS]));
        // SAFETY: no call waits at the gate any more (every test opens it and awaits its calls).
        unsafe { f.invoke(&[Value::Address(self.0)]) }.unwrap();
    }
}

/// `int64_t nb_gate_wait(nb_gate *, int64_t v)`: returns v * 2 + 1 once the gate is open.
fn gate_wait() -> gatun::DowncallHandle {
    link("nb_gate_wait", &FD::of(V::I64, [V::ADDRESS, V::I64]))
}

fn submit_gate_wait(pool: &WorkerPool, gate: &Gate, v: i64) -> PendingCall {
    static HANDLE: std::sync::OnceLock<gatun::DowncallHandle> = std::sync::OnceLock::new();
    let mut call = pool.call(HANDLE.get_or_init(gate_wait));
    call.address(gate.0).i64(v);
    // SAFETY: the gate outlives every call (each test awaits its calls before dropping it).
    unsafe { call.submit() }
}

#[test]
fn a_thousand_concurrent_calls_on_four_workers() {
    let pool = WorkerPool::new(NonZeroUsize::new(4).unwrap());
    let gate = Gate::new();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let handles: Vec<_> = (0..1000)
        .map(|i| rt.spawn(submit_gate_wait(&pool, &gate, i)))
        .collect();
    // Four calls block the four workers at the gate; the other 996 wait in the queue.
    gate.wait_for_waiters(4);
    assert_eq!(pool.started_workers(), 4);
    assert_eq!(gate.passed(), 0);
    gate.open();
    rt.block_on(async {
        for (i, h) in handles.into_iter().enumerate() {
            let done = h.await.unwrap().unwrap();
            assert_eq!(done.value(), Value::I64(i as i64 * 2 + 1));
        }
    });
    assert_eq!((gate.passed(), pool.started_workers()), (1000, 4));
}

#[test]
fn the_event_loop_keeps_ticking_while_ten_slow_calls_run() {
    let pool = WorkerPool::new(NonZeroUsize::new(10).unwrap());
    let gate = Arc::new(Gate::new());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let ticks = rt.block_on(async {
        let calls: Vec<_> = (0..10).map(|i| submit_gate_wait(&pool, &gate, i)).collect();
        // A timer on the same (single) thread as the awaiting task: it only fires if nothing
        // blocks the thread. The gate opens after 20 ticks, once all 10 calls are in flight.
        let opener = {
            let gate = gate.clone();
            async move {
                let mut interval = tokio::time::interval(Duration::from_millis(2));
                let mut ticks = 0;
                loop {
                    interval.tick().await;
                    ticks += 1;
                    if ticks >= 20 && gate.waiters() == 10 {
                        gate.open();
                        return ticks;
                    }
                }
            }
        };
        let results = async {
            let mut out = Vec::new();
            for c in calls {
                out.push(c.await.unwrap().value());
            }
            out
        };
        let (ticks, results) = tokio::join!(opener, results);
        assert_eq!(
            results,
            (0..10).map(|i| Value::I64(i * 2 + 1)).collect::<Vec<_>>()
        );
        ticks
    });
    assert!(ticks >= 20);
    assert_eq!(gate.passed(), 10);
}

#[test]
fn errno_is_captured_on_the_worker_and_delivered_with_the_result() {
    let pool = WorkerPool::new(NonZeroUsize::new(3).unwrap());
    // int capture_int(int ret, int err): sets errno to `err`, returns `ret`.
    let f = link_with(
        "capture_int",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    let pending: Vec<_> = (1..=200)
        .map(|e| {
            let mut call = pool.call(&f);
            call.i32(-1).i32(e);
            // SAFETY: capture_int has no preconditions.
            unsafe { call.submit() }
        })
        .collect();
    for (e, p) in (1..=200).zip(pending) {
        let done = p.wait().unwrap();
        assert_eq!(
            (done.value(), done.captured("errno")),
            (Value::I32(-1), Some(e))
        );
        assert_eq!(done.captured("no such state"), None);
    }
    // A handle without capture has no captured state.
    let plain = link("capture_int", &FD::of(V::I32, [V::I32, V::I32]));
    let mut call = pool.call(&plain);
    call.i32(3).i32(4);
    // SAFETY: as above.
    let done = unsafe { call.submit() }.wait().unwrap();
    assert_eq!(
        (done.value(), done.captured("errno")),
        (Value::I32(3), None)
    );
}

#[cfg(windows)]
#[test]
fn get_last_error_is_captured_on_the_worker() {
    let pool = WorkerPool::new(NonZeroUsize::new(2).unwrap());
    // int32_t w64_fail_with(uint32_t code, int32_t err): errno = err, SetLastError(code), -1.
    let f = link_with(
        "w64_fail_with",
        &FD::of(V::I32, [V::U32, V::I32]),
        &[LinkerOption::CaptureCallState(&["GetLastError", "errno"])],
    );
    let mut call = pool.call(&f);
    call.u32(1234).i32(7);
    // SAFETY: w64_fail_with has no preconditions.
    let done = unsafe { call.submit() }.wait().unwrap();
    assert_eq!(done.captured("GetLastError"), Some(1234));
    assert_eq!(done.captured("errno"), Some(7));
}

#[test]
fn struct_arguments_are_copied_and_struct_returns_land_in_the_call_buffer() {
    let pool = WorkerPool::new(NonZeroUsize::new(2).unwrap());
    let pair = st([V::I64, V::I64]);
    let pair_of = link("nb_pair_of", &FD::of(pair, [V::I64, V::I64]));
    let block_sum = link("nb_block_sum", &FD::of(V::I64, [bytes_struct(40)]));
    let arena = Arena::confined();
    let block = arena.allocate(40, 1).unwrap();
    for i in 0..40 {
        block.set::<u8>(i, i as u8 + 1).unwrap();
    }
    let mut call = pool.call(&block_sum);
    call.segment(block);
    // SAFETY: nb_block_sum reads its by-value copy.
    let pending = unsafe { call.submit() };
    // The call has its own copy: changing the segment now does not change what C sums.
    block.fill(0);
    assert_eq!(pending.wait().unwrap().value(), Value::I64(40 * 41 / 2));

    let mut call = pool.call(&pair_of);
    call.i64(6).i64(-7);
    // SAFETY: nb_pair_of has no preconditions.
    let done = unsafe { call.submit() }.wait().unwrap();
    let r = done.return_segment().unwrap();
    assert_eq!(done.value(), Value::Void);
    assert_eq!(
        (r.get::<i64>(0).unwrap(), r.get::<i64>(8).unwrap()),
        (-1, -42)
    );
}

#[test]
fn wrong_arguments_are_the_future_errors_and_nothing_runs() {
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let gate = Gate::new();
    let mut call = pool.call(&gate_wait());
    call.address(gate.0); // one argument of two
                          // SAFETY: nothing is called: the count is wrong.
    let err = unsafe { call.submit() }.wait().unwrap_err();
    assert!(err.to_string().contains("wrong argument count"), "{err}");
    let mut call = pool.call(&gate_wait());
    call.address(gate.0).f64(1.0);
    // SAFETY: as above: the kind is wrong.
    let err = unsafe { call.submit() }.wait().unwrap_err();
    assert!(err.to_string().contains("argument 2"), "{err}");
    assert_eq!(gate.passed(), 0);
}

#[test]
fn a_future_dropped_mid_call_keeps_the_arena_alive_until_the_call_returns() {
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let gate = Gate::new();
    // int64_t nb_gate_fill(nb_gate *, unsigned char *out, int64_t len, int byte)
    let fill = link(
        "nb_gate_fill",
        &FD::of(V::I64, [V::ADDRESS, V::ADDRESS, V::I64, V::I32]),
    );
    let arena = Arc::new(Arena::shared());
    let weak = Arc::downgrade(&arena);
    let mut call = pool.call(&fill);
    call.address(gate.0)
        .shared(&arena, |a: &SharedArena| {
            a.allocate_shared(4096, 16).unwrap()
        })
        .i64(4096)
        .i32(0x5a);
    // SAFETY: the gate outlives the call; the 4096 bytes are kept alive by the call.
    let pending = unsafe { call.submit() };
    gate.wait_for_waiters(1);
    drop(pending);
    drop(arena);
    // The C function has not written yet and still holds the arena through the call.
    assert!(weak.upgrade().is_some());
    gate.open();
    let deadline = Instant::now() + Duration::from_secs(60);
    while weak.upgrade().is_some() {
        assert!(
            Instant::now() < deadline,
            "the call never released the arena"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(gate.passed(), 1);
}

#[test]
fn a_future_dropped_before_its_call_started_cancels_it() {
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let gate = Gate::new();
    let first = submit_gate_wait(&pool, &gate, 1);
    gate.wait_for_waiters(1);
    // The only worker is busy: these wait in the queue, and are dropped there.
    for v in 0..5 {
        drop(submit_gate_wait(&pool, &gate, v));
    }
    gate.open();
    assert_eq!(first.wait().unwrap().value(), Value::I64(3));
    // A later call runs after the cancelled ones were skipped.
    assert_eq!(
        submit_gate_wait(&pool, &gate, 4).wait().unwrap().value(),
        Value::I64(9)
    );
    assert_eq!(gate.passed(), 2);
}

#[test]
fn out_parameters_are_read_back_from_the_call_copy() {
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let gate = Gate::new();
    gate.open();
    let fill = link(
        "nb_gate_fill",
        &FD::of(V::I64, [V::ADDRESS, V::ADDRESS, V::I64, V::I32]),
    );
    let arena = Arena::confined();
    let mut call = pool.call(&fill);
    call.address(gate.0)
        .segment(arena.allocate(24, 1).unwrap())
        .i64(24)
        .i32(0x33);
    // SAFETY: nb_gate_fill writes 24 bytes into the call's 24-byte copy.
    let done = unsafe { call.submit() }.wait().unwrap();
    assert_eq!(done.value(), Value::I64(24));
    assert_eq!(done.argument_segment(1).unwrap().to_vec(), [0x33; 24]);
    assert!(done.argument_segment(0).is_none());
}

#[test]
fn a_struct_return_aligned_to_32_bytes_lands_aligned() {
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let aligned =
        gatun::MemoryLayout::c_struct([V::I64.with_byte_alignment(32).unwrap(), V::I64]).unwrap();
    assert_eq!((aligned.byte_size(), aligned.byte_alignment()), (32, 32));
    let f = link("nb_aligned_of", &FD::of(aligned, [V::I64, V::I64]));
    for i in 0..20 {
        let mut call = pool.call(&f);
        call.i64(i).i64(-i);
        // SAFETY: nb_aligned_of has no preconditions.
        let done = unsafe { call.submit() }.wait().unwrap();
        let r = done.return_segment().unwrap();
        assert_eq!((r.byte_size(), r.address() % 32), (32, 0));
        assert_eq!(
            (r.get::<i64>(0).unwrap(), r.get::<i64>(8).unwrap()),
            (i, -i)
        );
    }
}
