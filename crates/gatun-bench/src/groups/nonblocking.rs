//! `nonblocking/*`: the round trip of a non-blocking call of `void noop(void)` awaited from
//! async code, one call at a time (submit, run on another thread, wake the awaiting task).
//!
//! - `gatun_noop`: a [`WorkerPool`] call (`pool.call(&noop).submit().await`), one worker.
//! - `spawn_blocking_noop`: tokio's `spawn_blocking(|| noop()).await`, the direct call on
//!   tokio's blocking pool: what a tokio program does without gatun.
//!
//! Both loops run inside one `block_on` of a current-thread runtime (on a task row, of the
//! row's runtime through `block_in_place`), so a sample pays the await of each call, not the
//! runtime's start. Allocations are counted on the awaiting thread.

use std::future::Future;
use std::num::NonZeroUsize;

use gatun::nonblocking::WorkerPool;
use gatun::FunctionDescriptor as FD;
use tokio::runtime::{Builder, Handle, Runtime};

use crate::handles::link;
use crate::natives::{self, Native};
use crate::{Body, Row};

/// Runs `fut` to completion from a benchmark body: on the row's own runtime when the body
/// runs in a tokio task, else on `rt`.
fn block_on<F: Future>(rt: &Option<Runtime>, fut: F) -> F::Output {
    match (Handle::try_current(), rt) {
        (Ok(h), _) => tokio::task::block_in_place(|| h.block_on(fut)),
        (Err(_), Some(rt)) => rt.block_on(fut),
        (Err(_), None) => unreachable!("a body built outside a runtime has its own"),
    }
}

/// A current-thread runtime for a body built outside any runtime (a thread row); `None` in a
/// task row, which uses the row's runtime (a runtime may not be dropped inside another).
fn runtime() -> Option<Runtime> {
    Handle::try_current().is_err().then(|| {
        Builder::new_current_thread()
            .build()
            .expect("a current-thread tokio runtime")
    })
}

/// The rows of this group.
pub fn rows() -> Vec<Row> {
    vec![
        Row::new("nonblocking", "gatun_noop", || -> Body {
            let noop = link(Native::Noop, &FD::of_void([]), &[]);
            let pool = WorkerPool::new(NonZeroUsize::MIN);
            let rt = runtime();
            Box::new(move |iters| {
                block_on(&rt, async {
                    for _ in 0..iters {
                        // SAFETY: `void noop(void)` has no preconditions.
                        let done = unsafe { pool.call(&noop).submit() }.await;
                        std::hint::black_box(done.expect("noop").value());
                    }
                })
            })
        }),
        Row::new("nonblocking", "spawn_blocking_noop", || -> Body {
            let rt = runtime();
            Box::new(move |iters| {
                block_on(&rt, async {
                    for _ in 0..iters {
                        // SAFETY: `void noop(void)` has no preconditions.
                        let done = tokio::task::spawn_blocking(|| unsafe { natives::noop() }).await;
                        done.expect("noop");
                    }
                })
            })
        }),
    ]
}
