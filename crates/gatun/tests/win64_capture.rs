//! The Windows call states: `GetLastError`, `WSAGetLastError` and the C runtime's `errno`
//! captured through `LinkerOption::CaptureCallState` and `capture::adapt_system_call`, against
//! `tests/native/win64_capture.c`. The capture segment is `capture_state_layout()`:
//! `{ i32 GetLastError @0, i32 WSAGetLastError @4, i32 errno @8 }` (12 bytes, alignment 4).
//! A capturing call restores all three from the segment just before the call (the last error
//! last) and saves all three just after it, before anything else runs on the thread; so what a
//! test sees is what the C function left, whatever gatun and the test do afterwards (Rust's
//! thread-locals, allocations, other Win32 calls all may reset the thread's last error).
//!
//! On Windows the Winsock error is the thread's last-error value itself (`WSAGetLastError` and
//! `WSASetLastError` read and write the same slot as `GetLastError` and `SetLastError`); the
//! tests assert that where it shows.
//!
//! # Rules and the tests that cover them
//!
//! | rule | tests |
//! |---|---|
//! | the capture layout is 12 bytes: last error, Winsock error, errno | `the_windows_capture_layout` |
//! | the states are saved right after the call, before anything can clobber them | `a_failing_create_file_is_captured_before_anything_can_clobber_it`, `every_state_is_saved_just_after_the_call` |
//! | the states are restored right before the call (`SetLastError` last) | `every_state_is_restored_just_before_the_call` |
//! | Winsock errors are captured | `socket_without_wsastartup_is_wsanotinitialised` |
//! | a capturing call nested inside an upcall keeps each level's states | `a_captured_call_nested_through_an_upcall` |
//! | per-thread states | `eight_threads_each_see_their_own_last_error` |
//! | the system-call adapter over `GetLastError` | `call_last_error_gives_windows_error_codes` |
//! | capturing calls allocate nothing | `capturing_calls_allocate_nothing` |
//!
//! The executor-level capture tests (trampoline and stubs restoring and saving the three
//! states) are in the Win64 backend's unit tests.
#![cfg(all(target_arch = "x86_64", windows, not(miri)))]

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use gatun::capture::{adapt_system_call, LastError};
use gatun::linker::{
    capturable_states, capture_state_layout, DowncallHandle, FunctionDescriptor as FD, Linker,
    LinkerOption, SymbolLookup,
};
use gatun::memory::{Arena, MemorySegment, SegmentAllocator};
use gatun::Value;

// The bench harness's per-thread counting allocator (as in capture_alloc.rs): counts are per
// thread, so the other tests' threads do not disturb the count.
#[path = "../../gatun-bench/src/alloc_count.rs"]
mod alloc_count;

#[global_allocator]
static GLOBAL: alloc_count::CountingAllocator = alloc_count::CountingAllocator;

const LAST_ERROR: &[LinkerOption] = &[LinkerOption::CaptureCallState(&["GetLastError"])];
const ALL_STATES: &[LinkerOption] = &[LinkerOption::CaptureCallState(&[
    "GetLastError",
    "WSAGetLastError",
    "errno",
])];

const ERROR_FILE_NOT_FOUND: i32 = 2;
const ERROR_PATH_NOT_FOUND: i32 = 3;
const WSANOTINITIALISED: i32 = 10093;

#[link(name = "kernel32")]
extern "system" {
    fn SetLastError(code: u32);
}

/// The three states of a capture segment: (GetLastError, WSAGetLastError, errno).
fn states(seg: &MemorySegment<'_>) -> (i32, i32, i32) {
    let at = |name| capture_state_layout().byte_offset_of(name).unwrap();
    (
        seg.get::<i32>(at("GetLastError")).unwrap(),
        seg.get::<i32>(at("WSAGetLastError")).unwrap(),
        seg.get::<i32>(at("errno")).unwrap(),
    )
}

fn set_states(seg: &MemorySegment<'_>, (last, wsa, errno): (i32, i32, i32)) {
    seg.set::<i32>(0, last).unwrap();
    seg.set::<i32>(4, wsa).unwrap();
    seg.set::<i32>(8, errno).unwrap();
}

/// kernel32's `SetLastError`, linked without capture (a successful Win32 call that changes the
/// thread's last error behind the test's back).
fn set_last_error_handle() -> DowncallHandle {
    // SAFETY: kernel32 is loaded in every Windows process; loading it again runs nothing.
    let k32 = unsafe { SymbolLookup::library("kernel32.dll") }.unwrap();
    Linker::native()
        .downcall(
            &k32.find("SetLastError").unwrap(),
            &FD::of_void([V::U32]),
            &[],
        )
        .unwrap()
}

/// The capture layout and the state names are the Windows ones.
#[test]
fn the_windows_capture_layout() {
    let l = capture_state_layout();
    assert_eq!((l.byte_size(), l.byte_alignment()), (12, 4));
    for (name, offset) in [("GetLastError", 0), ("WSAGetLastError", 4), ("errno", 8)] {
        assert_eq!(l.byte_offset_of(name).unwrap(), offset, "{name}");
        assert!(capturable_states().contains(&name), "{name}");
    }
    // adapting needs the state among those the handle captures
    let h = link_with(
        "w64_open_missing",
        &FD::of(V::I32, [V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    let e = adapt_system_call(&h, "GetLastError").unwrap_err();
    assert!(
        e.to_string()
            .ends_with("was not linked with capture_call_state(\"GetLastError\")"),
        "{e}"
    );
}

/// Rule: save right after the call. `CreateFileW` of a missing file leaves
/// ERROR_FILE_NOT_FOUND (a missing directory ERROR_PATH_NOT_FOUND); the captured value is that,
/// on every path and on a fresh thread (where gatun's own per-thread state is set up around the
/// first calls), although the test then resets the thread's last error with a successful
/// `SetLastError(0)` downcall.
#[test]
fn a_failing_create_file_is_captured_before_anything_can_clobber_it() {
    std::thread::spawn(|| {
        let d = FD::of(V::I32, [V::I32]);
        let h = link_with("w64_open_missing", &d, LAST_ERROR);
        let sc = adapt_system_call(&h, "GetLastError").unwrap();
        let typed = sc.typed::<unsafe extern "C" fn(i32) -> i32>().unwrap();
        let clear = set_last_error_handle();
        let arena = Arena::confined();
        let state = arena.allocate_layout(&capture_state_layout()).unwrap();
        for round in 0..3 {
            for (which, want) in [(0, ERROR_FILE_NOT_FOUND), (1, ERROR_PATH_NOT_FOUND)] {
                state.fill(0);
                // SAFETY: int32_t w64_open_missing(int32_t) with a capture segment first.
                let r = unsafe { h.invoke(&[Value::Segment(state), Value::I32(which)]) };
                assert_eq!(r, Ok(Value::I32(-1)), "round {round}");
                // SAFETY: void SetLastError(DWORD).
                unsafe { clear.invoke(&[Value::U32(0)]) }.unwrap();
                assert_eq!(
                    states(&state).0,
                    want,
                    "invoke, round {round}, which {which}"
                );

                state.fill(0);
                let mut out = 0i32;
                // SAFETY: the capture pointer is the segment's address; `which` an int32_t.
                unsafe {
                    h.invoke_raw(
                        &[state.as_ptr().cast_const(), (&which as *const i32).cast()],
                        (&mut out as *mut i32).cast(),
                    )
                }
                .unwrap();
                // SAFETY: as above.
                unsafe { SetLastError(0) };
                assert_eq!(
                    (out, states(&state).0),
                    (-1, want),
                    "invoke_raw, which {which}"
                );

                assert_eq!(
                    // SAFETY: as above (the adapter passes its own capture buffer).
                    unsafe { sc.invoke(&[Value::I32(which)]) },
                    Ok(-(want as i64)),
                    "adapted, which {which}"
                );
                assert_eq!(
                    // SAFETY: as above.
                    unsafe { typed.invoke((which,)) },
                    -want,
                    "typed, which {which}"
                );
            }
        }
    })
    .join()
    .unwrap();
}

/// Rule: restore before the call, the last error last. The test leaves other values in the
/// thread (7 and errno 8) and has the segment say 1234, 999, 56: the C function sees 1234,
/// errno 56, and as its Winsock error 1234 too (the same slot, restored last). The segment
/// then holds what the function left: the same values.
#[test]
fn every_state_is_restored_just_before_the_call() {
    let read = link_with("w64_read_states", &FD::of(V::I32, [V::ADDRESS]), ALL_STATES);
    let spoil = link("w64_fail_with", &FD::of(V::I32, [V::U32, V::I32]));
    let arena = Arena::confined();
    let state = arena.allocate_layout(&capture_state_layout()).unwrap();
    let seen = arena.allocate(12, 4).unwrap();
    for (k, path) in (0..6).zip(["invoke", "raw"].iter().cycle()) {
        set_states(&state, (1234 + k, 999, 56 + k));
        assert_eq!(
            // SAFETY: int32_t w64_fail_with(uint32_t, int32_t), not capturing.
            unsafe { spoil.invoke(&[Value::U32(7), Value::I32(8)]) },
            Ok(Value::I32(-1))
        );
        seen.fill(0);
        let ptr = seen.as_ptr();
        // SAFETY: int32_t w64_read_states(int32_t *out) writes 12 bytes to `seen`.
        let r = unsafe {
            if *path == "invoke" {
                h_invoke(&read, state, seen)
            } else {
                let mut out = 0i32;
                read.invoke_raw(
                    &[state.as_ptr().cast_const(), (&ptr as *const *mut u8).cast()],
                    (&mut out as *mut i32).cast(),
                )
                .map(|()| out)
            }
        };
        assert_eq!(r, Ok(0), "{path}");
        assert_eq!(
            states(&seen),
            (1234 + k, 1234 + k, 56 + k),
            "{path}: seen by C"
        );
        assert_eq!(
            states(&state),
            (1234 + k, 1234 + k, 56 + k),
            "{path}: saved"
        );
    }
}

/// `w64_read_states(seen)` through `invoke` with capture segment `state`.
///
/// # Safety
/// `seen` has 12 writable bytes.
unsafe fn h_invoke(
    h: &DowncallHandle,
    state: MemorySegment<'_>,
    seen: MemorySegment<'_>,
) -> gatun::Result<i32> {
    // SAFETY: forwarded to the caller.
    match unsafe { h.invoke(&[Value::Segment(state), Value::Segment(seen)]) }? {
        Value::I32(r) => Ok(r),
        v => panic!("w64_read_states returned {v:?}"),
    }
}

/// Rule: all three saved after the call. C sets errno 33 and the last error 4444; the
/// segment gets 4444 for both error codes (one slot) and errno 33.
#[test]
fn every_state_is_saved_just_after_the_call() {
    let fail = link_with(
        "w64_fail_with",
        &FD::of(V::I32, [V::U32, V::I32]),
        ALL_STATES,
    );
    let arena = Arena::confined();
    let state = arena.allocate_layout(&capture_state_layout()).unwrap();
    set_states(&state, (1, 2, 3));
    // SAFETY: int32_t w64_fail_with(uint32_t, int32_t) with a capture segment first.
    let r = unsafe { fail.invoke(&[Value::Segment(state), Value::U32(4444), Value::I32(33)]) };
    assert_eq!(r, Ok(Value::I32(-1)));
    assert_eq!(states(&state), (4444, 4444, 33));
    for (name, want) in [
        ("GetLastError", -4444),
        ("WSAGetLastError", -4444),
        ("errno", -33),
    ] {
        let sc = adapt_system_call(&fail, name).unwrap();
        // SAFETY: as above.
        let r = unsafe { sc.invoke(&[Value::U32(4444), Value::I32(33)]) };
        assert_eq!(r, Ok(want), "{name}");
    }
}

/// `socket()` before any `WSAStartup` (nothing in this test binary starts Winsock) fails with
/// WSANOTINITIALISED.
#[test]
fn socket_without_wsastartup_is_wsanotinitialised() {
    let h = link_with(
        "w64_socket_without_startup",
        &FD::of(V::I32, []),
        ALL_STATES,
    );
    let sc = adapt_system_call(&h, "WSAGetLastError").unwrap();
    for _ in 0..3 {
        // SAFETY: int32_t w64_socket_without_startup(void).
        assert_eq!(unsafe { sc.invoke(&[]) }, Ok(-(WSANOTINITIALISED as i64)));
    }
    let arena = Arena::confined();
    let state = arena.allocate_layout(&capture_state_layout()).unwrap();
    assert_eq!(
        // SAFETY: as above, with a capture segment.
        unsafe { h.invoke(&[Value::Segment(state)]) },
        Ok(Value::I32(-1))
    );
    let (last, wsa, _) = states(&state);
    assert_eq!((last, wsa), (WSANOTINITIALISED, WSANOTINITIALISED));
}

/// Rule: a capture is per call. C (captured, GetLastError) calls a Rust upcall that makes a
/// captured downcall of its own (a failing CreateFileW), then sets 4321: the inner call saw
/// ERROR_FILE_NOT_FOUND, the outer one 4321, on every nesting depth.
#[test]
fn a_captured_call_nested_through_an_upcall() {
    struct Ctx {
        inner: gatun::capture::SystemCall,
        outer: gatun::capture::SystemCall,
        stub: AtomicUsize,
        depth: AtomicUsize,
        max: usize,
        seen: std::sync::Mutex<Vec<(usize, i64)>>,
    }
    let inner = adapt_system_call(
        &link_with("w64_open_missing", &FD::of(V::I32, [V::I32]), LAST_ERROR),
        "GetLastError",
    )
    .unwrap();
    let outer = adapt_system_call(
        &link_with(
            "w64_fail_around",
            &FD::of(V::I32, [V::ADDRESS, V::ADDRESS, V::U32]),
            LAST_ERROR,
        ),
        "GetLastError",
    )
    .unwrap();
    for max in [1, 3, 12] {
        let ctx = Box::new(Ctx {
            inner: inner.clone(),
            outer: outer.clone(),
            stub: AtomicUsize::new(0),
            depth: AtomicUsize::new(0),
            max,
            seen: Default::default(),
        });
        let ctx_addr = &*ctx as *const Ctx as usize;
        let arena = Arena::confined();
        let stub = Linker::native()
            .upcall_stub(
                &FD::of_void([V::ADDRESS]),
                move |a| {
                    let p = a.get::<*mut c_void>(0)? as usize;
                    assert_eq!(p, ctx_addr);
                    // SAFETY: the Ctx outlives the outer call, which this runs within.
                    let c = unsafe { &*(p as *const Ctx) };
                    let depth = c.depth.fetch_add(1, Ordering::Relaxed) + 1;
                    // SAFETY: both adapted functions get arguments of their C types; the
                    // stub address is this stub, alive for the whole outer call.
                    let r = unsafe {
                        if depth < c.max {
                            c.outer.invoke(&[
                                Value::Address(c.stub.load(Ordering::Relaxed) as *mut c_void),
                                Value::Address(p as *mut c_void),
                                Value::U32(4000 + depth as u32),
                            ])
                        } else {
                            c.inner.invoke(&[Value::I32(0)])
                        }
                    }?;
                    // gatun and Rust code run here, between the inner save and C's next call
                    // SAFETY: SetLastError is always safe to call.
                    unsafe { SetLastError(77) };
                    c.seen.lock().unwrap().push((depth, r));
                    Ok(Value::Void)
                },
                &arena,
            )
            .unwrap();
        ctx.stub.store(stub.address() as usize, Ordering::Relaxed);
        // SAFETY: w64_fail_around(void (*)(void *), void *, uint32_t) with our stub and ctx.
        let r = unsafe {
            outer.invoke(&[
                stub.as_value(),
                Value::Address(ctx_addr as *mut c_void),
                Value::U32(4000),
            ])
        };
        assert_eq!(r, Ok(-4000), "max {max}");
        let mut want = vec![(max, -(ERROR_FILE_NOT_FOUND as i64))];
        for d in (1..max).rev() {
            want.push((d, -(4000 + d as i64)));
        }
        assert_eq!(*ctx.seen.lock().unwrap(), want, "max {max}");
    }
}

/// Rule: the states are the calling thread's. 8 threads, each with its own code (1000 + t)
/// set inside C and an errno that changes every call, rotating through the paths; interleaved
/// reads check that each thread's restore uses its own segment.
#[test]
fn eight_threads_each_see_their_own_last_error() {
    const CALLS: i32 = 20_000;
    let fail = link_with(
        "w64_fail_with",
        &FD::of(V::I32, [V::U32, V::I32]),
        ALL_STATES,
    );
    let read = link_with("w64_read_states", &FD::of(V::I32, [V::ADDRESS]), ALL_STATES);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (fail, read) = (fail.clone(), read.clone());
            std::thread::spawn(move || {
                let last = adapt_system_call(&fail, "GetLastError").unwrap();
                let errno = adapt_system_call(&fail, "errno").unwrap();
                let code = 1000 + t as u32;
                let mut cap = [0i32; 3];
                let mut seen = [0i32; 3];
                for i in 0..CALLS {
                    let err = t * 1_000_000 + i;
                    let cap_p = cap.as_mut_ptr() as *const u8;
                    // SAFETY: w64_fail_with(uint32_t, int32_t) -> int32_t and
                    // w64_read_states(int32_t *) -> int32_t with a 12-byte capture buffer.
                    unsafe {
                        match i % 4 {
                            0 => assert_eq!(
                                last.invoke(&[Value::U32(code), Value::I32(err)]),
                                Ok(-(code as i64))
                            ),
                            1 => assert_eq!(
                                errno.invoke(&[Value::U32(code), Value::I32(err)]),
                                Ok(-(err as i64))
                            ),
                            2 => {
                                let mut r = 0i32;
                                fail.invoke_raw(
                                    &[
                                        cap_p,
                                        (&code as *const u32).cast(),
                                        (&err as *const i32).cast(),
                                    ],
                                    (&mut r as *mut i32).cast(),
                                )
                                .unwrap();
                                assert_eq!((r, cap), (-1, [code as i32, code as i32, err]));
                            }
                            _ => {
                                // restore: this thread's segment says (code + 1, _, -err)
                                cap = [code as i32 + 1, 0, -err];
                                let seen_p = seen.as_mut_ptr();
                                let mut r = -1i32;
                                read.invoke_raw(
                                    &[cap_p, (&seen_p as *const *mut i32).cast()],
                                    (&mut r as *mut i32).cast(),
                                )
                                .unwrap();
                                assert_eq!(r, 0);
                                assert_eq!(seen, [code as i32 + 1, code as i32 + 1, -err]);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// `call_last_error` gives the code as a `LastError`, which `std::io::Error` understands;
/// `call` is for errno adapters only, and the other way round.
#[test]
fn call_last_error_gives_windows_error_codes() {
    let h = link_with("w64_open_missing", &FD::of(V::I32, [V::I32]), ALL_STATES);
    let last = adapt_system_call(&h, "GetLastError").unwrap();
    for (which, code) in [(0, ERROR_FILE_NOT_FOUND), (1, ERROR_PATH_NOT_FOUND)] {
        // SAFETY: int32_t w64_open_missing(int32_t).
        let e = unsafe { last.call_last_error(&[Value::I32(which)]) }
            .unwrap()
            .unwrap_err();
        assert_eq!(e, LastError(code as u32));
        assert!(
            e.to_string()
                .starts_with(&format!("Windows error {code}: ")),
            "{e}"
        );
        let io = std::io::Error::from(e);
        assert_eq!(io.raw_os_error(), Some(code));
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        let typed = last.typed::<unsafe extern "C" fn(i32) -> i32>().unwrap();
        assert_eq!(
            // SAFETY: as above.
            unsafe { typed.call_last_error((which,)) },
            Err(LastError(code as u32))
        );
    }
    // SAFETY: rejected before the call.
    let e = unsafe { last.call(&[Value::I32(0)]) }.unwrap_err();
    assert!(
        e.to_string().contains("use SystemCall::call_last_error"),
        "{e}"
    );
    let errno = adapt_system_call(&h, "errno").unwrap();
    // SAFETY: rejected before the call.
    let e = unsafe { errno.call_last_error(&[Value::I32(0)]) }.unwrap_err();
    assert!(e.to_string().contains("use SystemCall::call"), "{e}");
    let sock = adapt_system_call(
        &link_with(
            "w64_socket_without_startup",
            &FD::of(V::I32, []),
            ALL_STATES,
        ),
        "WSAGetLastError",
    )
    .unwrap();
    assert_eq!(
        // SAFETY: int32_t w64_socket_without_startup(void).
        unsafe { sock.call_last_error(&[]) },
        Ok(Err(LastError(WSANOTINITIALISED as u32)))
    );
}

/// Rule: a capturing call allocates nothing: the Win64 capture on every path (a segment the
/// caller owns, the adapter's capture stack, raw, typed), failures and successes alike.
#[test]
fn capturing_calls_allocate_nothing() {
    let open = link_with("w64_open_missing", &FD::of(V::I32, [V::I32]), ALL_STATES);
    let read = link_with("w64_read_states", &FD::of(V::I32, [V::ADDRESS]), ALL_STATES);
    let last = adapt_system_call(&open, "GetLastError").unwrap();
    let wsa = adapt_system_call(&open, "WSAGetLastError").unwrap();
    let typed = last.typed::<unsafe extern "C" fn(i32) -> i32>().unwrap();
    let mut cap = [0i32; 3];
    let mut seen = [0i32; 3];
    let which = 0i32;
    let round = |cap: &mut [i32; 3], seen: &mut [i32; 3]| {
        let cap_seg = MemorySegment::of_slice(bytes_of(cap));
        let seen_p = seen.as_mut_ptr();
        // SAFETY: the C types; `cap` is a 12-byte, 4-aligned capture buffer, `seen` 12
        // writable bytes.
        unsafe {
            assert_eq!(
                open.invoke(&[Value::Segment(cap_seg), Value::I32(0)]),
                Ok(Value::I32(-1))
            );
            assert_eq!(
                last.invoke(&[Value::I32(0)]),
                Ok(-(ERROR_FILE_NOT_FOUND as i64))
            );
            assert_eq!(
                wsa.invoke(&[Value::I32(1)]),
                Ok(-(ERROR_PATH_NOT_FOUND as i64))
            );
            assert_eq!(
                last.invoke_raw(&[(&which as *const i32).cast()]),
                Ok(-(ERROR_FILE_NOT_FOUND as i64))
            );
            assert_eq!(typed.invoke((1,)), -ERROR_PATH_NOT_FOUND);
            assert_eq!(
                last.call_last_error(&[Value::I32(0)]).unwrap(),
                Err(LastError(ERROR_FILE_NOT_FOUND as u32))
            );
            let mut r = -1i32;
            read.invoke_raw(
                &[cap.as_ptr().cast(), (&seen_p as *const *mut i32).cast()],
                (&mut r as *mut i32).cast(),
            )
            .unwrap();
            assert_eq!(r, 0);
        }
    };
    // warm-up: this thread's capture stack and errno address are made on first use
    round(&mut cap, &mut seen);
    let before = alloc_count::CountingAllocator::thread_count();
    for _ in 0..1000 {
        round(&mut cap, &mut seen);
    }
    let after = alloc_count::CountingAllocator::thread_count();
    assert_eq!(after - before, 0, "heap allocations in 1000 rounds");
}

/// The bytes of a capture buffer.
fn bytes_of(x: &mut [i32; 3]) -> &mut [u8] {
    // SAFETY: i32 has no padding; any byte pattern is a valid i32; 12 bytes.
    unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast(), 12) }
}
