//! The record protocol and the worker queue without foreign code (so Miri runs them): records
//! without a handle complete with `Value::Void`.

use std::num::NonZeroUsize;
use std::sync::atomic::Ordering;

use super::record::{Record, DONE};
use super::{PendingCall, WorkerPool};
use crate::value::Value;

/// Submits a record without a handle, as `CallBuilder::submit` does.
fn submit_empty(pool: &WorkerPool) -> PendingCall {
    let record = Record::take(&pool.shared.records);
    pool.shared.submit(&record);
    PendingCall {
        record: Some(record),
        shared: pool.shared.clone(),
    }
}

fn free_records(pool: &WorkerPool) -> usize {
    pool.shared.records.free_len()
}

#[test]
fn calls_complete_and_their_records_are_recycled() {
    let pool = WorkerPool::new(NonZeroUsize::new(2).unwrap());
    let pending: Vec<_> = (0..20).map(|_| submit_empty(&pool)).collect();
    assert!(pool.started_workers() >= 1 && pool.started_workers() <= 2);
    for p in pending {
        let done = p.wait().unwrap();
        assert_eq!(done.value(), Value::Void);
        assert!(done.return_segment().is_none() && done.argument_segment(0).is_none());
        assert_eq!(done.captured("errno"), None);
    }
    // Every record is back once its completion and its worker let go of it; later calls
    // reuse them instead of making new ones.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while free_records(&pool) < 20 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert_eq!(free_records(&pool), 20);
    for _ in 0..5 {
        submit_empty(&pool).wait().unwrap();
    }
    assert!(free_records(&pool) <= 20);
}

#[test]
fn a_dropped_future_releases_its_record_once_the_worker_is_done() {
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    for _ in 0..50 {
        drop(submit_empty(&pool));
    }
    // Whether cancelled before the worker popped it or finished first, each record comes back
    // exactly once.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while free_records(&pool) == 0 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    let p = submit_empty(&pool);
    let record = p.record.clone().unwrap();
    p.wait().unwrap();
    assert_eq!(record.state.load(Ordering::Relaxed), DONE);
}

#[test]
fn the_pool_never_starts_more_workers_than_its_size() {
    let pool = WorkerPool::new(NonZeroUsize::new(3).unwrap());
    let pending: Vec<_> = (0..30).map(|_| submit_empty(&pool)).collect();
    assert!(pool.started_workers() <= 3);
    for p in pending {
        p.wait().unwrap();
    }
    assert_eq!(pool.max_workers(), 3);
}

#[test]
fn workers_finish_queued_calls_after_the_pool_is_dropped() {
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let pending: Vec<_> = (0..10).map(|_| submit_empty(&pool)).collect();
    drop(pool);
    for p in pending {
        assert_eq!(p.wait().unwrap().value(), Value::Void);
    }
}

/// Panics when woken.
struct PanickingWaker;

impl std::task::Wake for PanickingWaker {
    fn wake(self: std::sync::Arc<Self>) {
        panic!("a waker that panics");
    }
}

#[test]
fn a_panicking_waker_does_not_take_the_worker_down() {
    use std::future::Future;
    let pool = WorkerPool::new(NonZeroUsize::MIN);
    let waker = std::task::Waker::from(std::sync::Arc::new(PanickingWaker));
    let mut cx = std::task::Context::from_waker(&waker);
    for _ in 0..3 {
        let mut p = submit_empty(&pool);
        // Registered before the worker finishes (most of the time): its wake panics there.
        let _ = std::pin::Pin::new(&mut p).poll(&mut cx);
        drop(p);
    }
    // The one worker still runs calls.
    assert_eq!(submit_empty(&pool).wait().unwrap().value(), Value::Void);
    assert_eq!(pool.started_workers(), 1);
}
