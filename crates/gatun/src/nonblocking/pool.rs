//! The worker threads and their queue: started lazily up to the pool's size, they pop records,
//! run the calls and hand the results back. No `unsafe` beyond the record protocol of
//! `record.rs` and the segments the worker builds over a record's own buffers for the length
//! of one call.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::record::{self, Arg, Record, Records, CANCELLED, QUEUED, RUNNING};
use crate::error::Error;
use crate::memory::{linker_stack, MemorySegment, SlicingAllocator};
use crate::value::Value;

/// How long an idle worker keeps checking the queue before it sleeps: a call submitted right
/// after the previous one finds the worker awake, without a futex wake-up.
const SPIN: Duration = Duration::from_micros(50);

/// What the pool's handles and workers share.
pub(super) struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    /// Records in `queue.items`, readable without the lock by spinning workers.
    queued: AtomicUsize,
    pub(super) records: Records,
    max_workers: usize,
}

struct Queue {
    items: VecDeque<Arc<Record>>,
    /// Workers started and not yet exited.
    workers: usize,
    /// Workers looking for work (spinning or asleep).
    idle: usize,
    /// Workers asleep on `work`.
    sleeping: usize,
    shutdown: bool,
}

impl Shared {
    pub(super) fn new(max_workers: usize) -> Shared {
        Shared {
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                workers: 0,
                idle: 0,
                sleeping: 0,
                shutdown: false,
            }),
            work: Condvar::new(),
            queued: AtomicUsize::new(0),
            records: Records::new(),
            max_workers,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn max_workers(&self) -> usize {
        self.max_workers
    }

    pub(super) fn workers(&self) -> usize {
        self.lock().workers
    }

    /// Queues a built record (state `BUILDING`, one holder: the caller's, which becomes the
    /// future's), starting a worker if every started one is busy and the pool has room.
    pub(super) fn submit(self: &Arc<Shared>, record: &Arc<Record>) {
        record.share();
        record.state.store(QUEUED, Ordering::Release);
        let mut q = self.lock();
        // Room for every record there is: the queue never grows once the pool is warm.
        let made = self.records.made();
        if q.items.capacity() < made {
            let len = q.items.len();
            q.items.reserve(made - len);
        }
        q.items.push_back(record.clone());
        self.queued.fetch_add(1, Ordering::Relaxed);
        if q.idle < q.items.len() && q.workers < self.max_workers {
            let shared = self.clone();
            let started = std::thread::Builder::new()
                .name("gatun-worker".into())
                .spawn(move || shared.work_loop());
            match started {
                Ok(_) => {
                    q.workers += 1;
                    q.idle += 1;
                }
                Err(e) if q.workers == 0 => {
                    // No worker will ever run the call: complete it with the error here.
                    let queued = q.items.pop_back().expect("the record pushed above");
                    self.queued.fetch_sub(1, Ordering::Relaxed);
                    drop(q);
                    fail(
                        self,
                        queued,
                        Error::Unsupported {
                            type_name: "non-blocking call".into(),
                            reason: format!("could not start a worker thread: {e}"),
                        },
                    );
                    return;
                }
                // The started workers will run it.
                Err(_) => {}
            }
        }
        if q.sleeping > 0 {
            self.work.notify_one();
        }
    }

    /// Lets the workers exit once the queue is empty.
    pub(super) fn shut_down(&self) {
        self.lock().shutdown = true;
        self.work.notify_all();
    }

    /// A worker: runs queued calls until the pool is shut down and the queue is empty.
    fn work_loop(self: Arc<Shared>) {
        // The argument list handed to `invoke`, reused from call to call (its segments point
        // into the current record's buffers and are cleared before the record is released).
        let mut values: Vec<Value<'static>> = Vec::new();
        // The thread's linker-stack block (where by-reference struct copies go), made now
        // rather than by whichever call first needs it: a warm pool allocates nothing per call.
        drop(linker_stack().push_frame(1, 1));
        let mut q = self.lock();
        loop {
            if let Some(record) = q.items.pop_front() {
                self.queued.fetch_sub(1, Ordering::Relaxed);
                q.idle -= 1;
                drop(q);
                self.run(record, &mut values);
                q = self.lock();
                q.idle += 1;
                continue;
            }
            if q.shutdown {
                q.workers -= 1;
                q.idle -= 1;
                return;
            }
            drop(q);
            let deadline = Instant::now() + SPIN;
            'spin: while self.queued.load(Ordering::Relaxed) == 0 {
                for _ in 0..64 {
                    std::hint::spin_loop();
                }
                if Instant::now() >= deadline {
                    break 'spin;
                }
            }
            q = self.lock();
            if q.items.is_empty() && !q.shutdown {
                q.sleeping += 1;
                q = self.work.wait(q).unwrap_or_else(PoisonError::into_inner);
                q.sleeping -= 1;
            }
        }
    }

    /// Runs one popped record's call (unless its future was dropped first) and hands the
    /// result back.
    fn run(&self, record: Arc<Record>, values: &mut Vec<Value<'static>>) {
        if record
            .state
            .compare_exchange(QUEUED, RUNNING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // CANCELLED: the future was dropped before the call started; nothing runs.
            debug_assert_eq!(record.state.load(Ordering::Relaxed), CANCELLED);
            record.release(&self.records);
            return;
        }
        // SAFETY: state RUNNING, set by this worker: the record's data is ours until `finish`.
        let data = unsafe { record.data() };
        let result = match data.handle.as_ref() {
            None => Ok(Value::Void),
            Some(handle) => {
                let copies = record::chunks_as_bytes_mut(&mut data.copies).as_mut_ptr();
                if handle.captures_call_state() {
                    // SAFETY: the record's capture buffer (12 bytes, 4-aligned), valid until the
                    // record is released, which happens after `values` is cleared below.
                    values.push(Value::Segment(unsafe {
                        MemorySegment::from_raw_parts(
                            data.capture.as_mut_ptr().cast(),
                            std::mem::size_of_val(&data.capture),
                        )
                    }));
                }
                for arg in &data.args {
                    values.push(match *arg {
                        Arg::Value(v) => v,
                        // SAFETY: `offset..offset + len` lies in `copies` (`Data::push_copy`),
                        // which is neither resized nor freed until `values` is cleared below.
                        Arg::Copy { offset, len } => Value::Segment(unsafe {
                            MemorySegment::from_raw_parts(copies.add(offset), len)
                        }),
                    });
                }
                let result = match data.ret_len {
                    Some(_) => {
                        let ret = record::chunks_as_bytes_mut(&mut data.ret);
                        // SAFETY: the record's return buffer, as the copies above.
                        let seg =
                            unsafe { MemorySegment::from_raw_parts(ret.as_mut_ptr(), ret.len()) };
                        let (base, allocator) = (seg.address(), SlicingAllocator::new(seg));
                        // SAFETY: the submitter of the call promised the C function's contract
                        // (`CallBuilder::submit`); the buffers it is given live until it returns.
                        let returned = unsafe { handle.invoke_into(&allocator, values) };
                        returned.map(|v| {
                            if let Value::Segment(r) = v {
                                data.ret_offset = r.address() - base;
                            }
                            Value::Void
                        })
                    }
                    // SAFETY: as above.
                    None => unsafe { handle.invoke(values) },
                };
                values.clear();
                result
            }
        };
        // The C function has returned: the owners kept alive for it may go. Their `Drop` is
        // user code: one that panics must not leave the call unfinished or the worker gone.
        let _ = catch_unwind(AssertUnwindSafe(|| data.keep.clear()));
        data.keep.clear();
        data.result = Some(result);
        record.finish(&self.records);
    }
}

/// Completes a queued record that no worker will run with `error`.
fn fail(shared: &Shared, record: Arc<Record>, error: Error) {
    if record
        .state
        .compare_exchange(QUEUED, RUNNING, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
    {
        // SAFETY: state RUNNING, set here: the data is ours until `finish`.
        let data = unsafe { record.data() };
        data.keep.clear();
        data.result = Some(Err(error));
        record.finish(&shared.records);
    } else {
        record.release(&shared.records);
    }
}
