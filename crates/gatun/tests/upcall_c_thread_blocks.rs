//! Threads created in C get a linker-stack block on their first use of the linker stack inside
//! an upcall (a struct argument passed on the stack is copied there; this test's closure pushes
//! a frame itself, since its register-passed struct is copied onto the dispatcher's stack) and
//! free it when they exit (Rust's thread-local destructors run at pthread exit). One test only,
//! so no other test thread creates or frees blocks while we count.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::*;
use gatun::linker::FunctionDescriptor as FD;
use gatun::memory::{linker_stack, Arena};
use gatun::{Linker, Value};

#[test]
fn c_threads_create_and_free_their_linker_stack_blocks() {
    let run = link(
        "upcall_run_threads",
        &FD::of(V::I32, [V::ADDRESS, V::I32, V::I32, V::ADDRESS]),
    );
    let before = linker_stack().thread_blocks();
    let max_seen = Arc::new(AtomicUsize::new(0));
    let arena = Arena::confined();
    let stub = {
        let max_seen = max_seen.clone();
        Linker::native()
            .upcall_stub(
                &FD::of(V::I64, [st([V::I32, V::I32])]),
                move |a| {
                    let _frame = linker_stack().push_frame(8, 8)?;
                    max_seen.fetch_max(linker_stack().thread_blocks(), Ordering::Relaxed);
                    Ok(Value::I64(a.segment(0)?.get::<i32>(4)? as i64))
                },
                &arena,
            )
            .unwrap()
    };
    let sums = [0i64; 8];
    // SAFETY: `int upcall_run_threads(upcall_ticket_cb, int, int, int64_t *)`: `stub` has the
    // callback type and outlives the call (the C threads are joined before it returns); `sums` has
    // room for the 8 `int64_t`s.
    let r = unsafe {
        run.invoke(&[
            stub.as_value(),
            Value::I32(8),
            Value::I32(1000),
            Value::Address(sums.as_ptr().cast_mut().cast()),
        ])
    }
    .unwrap();
    assert_eq!(r, Value::I32(0));
    assert_eq!(sums, [999 * 1000 / 2; 8]);
    // The C threads' blocks existed while they ran, and every one was freed when its thread
    // exited (pthread_join returns after the thread-local destructors ran).
    assert!(
        max_seen.load(Ordering::Relaxed) > before,
        "no C thread block seen"
    );
    assert_eq!(linker_stack().thread_blocks(), before);
}
