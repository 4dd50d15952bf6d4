//! `owner_thread/*`: the round trip of a call from one thread to code that must run on
//! another (the owner), one call at a time.
//!
//! - `gatun_callback`: the benchmark thread calls an [`OwnerThread`] upcall stub's C function
//!   pointer (`int64_t (*)(int64_t)`); the call is queued to the owner thread, which runs the
//!   closure in its `wait_pending` loop and resumes the caller with the result.
//! - `mpsc_round_trip`: the same exchange with a pair of `std::sync::mpsc` channels between
//!   the same two threads: a request sent, the owner receives it, computes, sends the
//!   response, the caller receives it.
//!
//! The owner thread is started when the row's body is built and stopped when it is dropped.
//! Allocations are counted on the calling (benchmark) thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use gatun::memory::Arena;
use gatun::upcall::OwnerThread;
use gatun::{FunctionDescriptor as FD, Value, ValueLayout as V};

use crate::{Body, Row};

/// A running owner thread; stops (and is joined) on drop.
struct Owner {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().expect("owner thread");
        }
    }
}

/// Starts an owner thread serving an `int64_t (*)(int64_t)` stub (returning its argument plus
/// one) and returns it with the stub's address.
fn start_gatun_owner() -> (Owner, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let thread = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let owner = OwnerThread::new();
            let arena = Arena::confined();
            let stub = owner
                .upcall_stub(
                    &FD::of(V::I64, [V::I64]),
                    |a| Ok(Value::I64(a.get::<i64>(0)? + 1)),
                    &arena,
                )
                .expect("owner-thread stub");
            tx.send(stub.address() as usize).expect("send the address");
            while !stop.load(Ordering::Relaxed) {
                owner.wait_pending(Duration::from_millis(10));
            }
        })
    };
    let address = rx.recv().expect("the stub's address");
    (
        Owner {
            stop,
            thread: Some(thread),
        },
        address,
    )
}

/// The rows of this group.
pub fn rows() -> Vec<Row> {
    vec![
        Row::new("owner_thread", "gatun_callback", || -> Body {
            let (owner, address) = start_gatun_owner();
            // SAFETY: the stub is an `int64_t (*)(int64_t)`, alive until `owner` is dropped
            // with the body.
            let f: extern "C" fn(i64) -> i64 = unsafe { std::mem::transmute(address) };
            Box::new(move |iters| {
                let _keep = &owner;
                for i in 0..iters as i64 {
                    std::hint::black_box(f(std::hint::black_box(i)));
                }
            })
        }),
        Row::new("owner_thread", "mpsc_round_trip", || -> Body {
            let (req_tx, req_rx) = mpsc::channel::<i64>();
            let (resp_tx, resp_rx) = mpsc::channel::<i64>();
            // The server stops when the body (and with it `req_tx`) is dropped.
            std::thread::spawn(move || {
                while let Ok(x) = req_rx.recv() {
                    if resp_tx.send(x + 1).is_err() {
                        break;
                    }
                }
            });
            Box::new(move |iters| {
                for i in 0..iters as i64 {
                    req_tx.send(std::hint::black_box(i)).expect("request");
                    std::hint::black_box(resp_rx.recv().expect("response"));
                }
            })
        }),
    ]
}
