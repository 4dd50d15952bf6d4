//! The system-call adapter (`gatun::capture`): the JDK's TestCaptureStateUtil cases against
//! `tests/native/capture.c`, real system calls through the default lookup, reentrancy through a
//! C callback, every invocation path, and 8 threads that must never see another thread's (or a
//! stale) errno. On Windows the same, against the C runtime's errno (msvcrt's `_close`,
//! `_open`, `_dup` are the real calls); the Windows-only states are tests/win64_capture.rs's.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};

use common::*;
use gatun::capture::{adapt_system_call, Errno, SystemCall, CAPTURE_NESTING};
use gatun::linker::{
    capturable_states, FunctionDescriptor as FD, Linker, LinkerOption, SymbolLookup,
};
use gatun::{Error, Value};

const ERRNO: &[LinkerOption] = &[LinkerOption::CaptureCallState(&["errno"])];

fn capturing(name: &str, d: &FD) -> gatun::DowncallHandle {
    link_with(name, d, ERRNO)
}

fn int_call() -> SystemCall {
    let h = capturing("capture_int", &FD::of(V::I32, [V::I32, V::I32]));
    adapt_system_call(&h, "errno").unwrap()
}

fn long_call() -> SystemCall {
    let h = capturing("capture_long", &FD::of(V::I64, [V::I64, V::I32]));
    adapt_system_call(&h, "errno").unwrap()
}

// ---- TestCaptureStateUtil (the JDK's test/jdk/java/foreign/TestCaptureStateUtil.java) ----

#[test]
fn successful_int() {
    let sc = int_call();
    // SAFETY: capture_int(int, int) -> int.
    assert_eq!(unsafe { sc.invoke(&[Value::I32(1), Value::I32(0)]) }, Ok(1));
}

#[test]
fn error_int() {
    let sc = int_call();
    assert_eq!(
        // SAFETY: as above.
        unsafe { sc.invoke(&[Value::I32(-1), Value::I32(13)]) },
        Ok(-13)
    );
}

#[test]
fn successful_long() {
    let sc = long_call();
    // SAFETY: capture_long(int64_t, int) -> int64_t.
    assert_eq!(unsafe { sc.invoke(&[Value::I64(1), Value::I32(0)]) }, Ok(1));
}

#[test]
fn error_long() {
    let sc = long_call();
    assert_eq!(
        // SAFETY: as above.
        unsafe { sc.invoke(&[Value::I64(-1), Value::I32(13)]) },
        Ok(-13)
    );
}

#[test]
fn successful_int_per_handle() {
    // A freshly adapted handle each time.
    for _ in 0..3 {
        assert_eq!(
            // SAFETY: as above.
            unsafe { int_call().invoke(&[Value::I32(1), Value::I32(0)]) },
            Ok(1)
        );
    }
}

#[test]
fn success_does_not_read_the_state() {
    // A success with a non-zero errno still returns r (the state is read only for r < 0),
    // and large non-negative longs pass through unchanged.
    let sc = long_call();
    // SAFETY: as above.
    let r = unsafe { sc.invoke(&[Value::I64(i64::MAX), Value::I32(5)]) };
    assert_eq!(r, Ok(i64::MAX));
    assert_eq!(
        // SAFETY: as above.
        unsafe { int_call().invoke(&[Value::I32(0), Value::I32(5)]) },
        Ok(0)
    );
}

#[test]
fn any_negative_result_becomes_minus_the_state() {
    let sc = int_call();
    for r in [-1, -2, i32::MIN] {
        assert_eq!(
            // SAFETY: as above.
            unsafe { sc.invoke(&[Value::I32(r), Value::I32(7)]) },
            Ok(-7)
        );
    }
    // The JDK's edge case: state i32::MIN negates to itself (sign-extended for a long).
    // SAFETY: as above.
    let r = unsafe { long_call().invoke(&[Value::I64(-5), Value::I32(i32::MIN)]) };
    assert_eq!(r, Ok(i32::MIN as i64));
}

#[test]
fn invariants() {
    let adapt = |name: &str, d: &FD, o: &[LinkerOption], state: &str| {
        adapt_system_call(&link_with(name, d, o), state).unwrap_err()
    };
    let int2 = FD::of(V::I32, [V::I32, V::I32]);
    // Not linked with capture at all (the JDK: no MemorySegment as the first parameter).
    let e = adapt("capture_int", &int2, &[], "errno");
    assert!(matches!(e, Error::Adapt { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "cannot adapt handle (i32, i32)i32: was not linked with capture_call_state(\"errno\")"
    );
    // Linked with capture, but not of this state.
    let e = adapt(
        "capture_int",
        &int2,
        &[LinkerOption::CaptureCallState(&[])],
        "errno",
    );
    assert!(matches!(e, Error::Adapt { .. }), "{e:?}");
    assert!(
        e.to_string()
            .ends_with("was not linked with capture_call_state(\"errno\")"),
        "{e}"
    );
    // A short return.
    let e = adapt(
        "capture_short",
        &FD::of(V::I16, [V::I64, V::I32]),
        ERRNO,
        "errno",
    );
    assert!(matches!(e, Error::Adapt { .. }), "{e:?}");
    assert!(
        e.to_string().ends_with("does not return an int or a long"),
        "{e}"
    );
    // Unsigned and void returns are not int or long either.
    let e = adapt(
        "capture_int",
        &FD::of(V::U32, [V::I32, V::I32]),
        ERRNO,
        "errno",
    );
    assert!(
        e.to_string().ends_with("does not return an int or a long"),
        "{e}"
    );
    let e = adapt(
        "capture_int",
        &FD::of_void([V::I32, V::I32]),
        ERRNO,
        "errno",
    );
    assert!(
        e.to_string().ends_with("does not return an int or a long"),
        "{e}"
    );
    // The return type is checked before the capture (JDK order): a short without capture.
    let e = adapt(
        "capture_short",
        &FD::of(V::I16, [V::I64, V::I32]),
        &[],
        "foo",
    );
    assert!(
        e.to_string().ends_with("does not return an int or a long"),
        "{e}"
    );
    // Unknown state.
    let e = adapt(
        "capture_long",
        &FD::of(V::I64, [V::I64, V::I32]),
        ERRNO,
        "foo",
    );
    // "errno" on Linux; "GetLastError, WSAGetLastError, errno" on Windows
    let valid = capturable_states().join(", ");
    assert_eq!(
        e,
        Error::UnknownCaptureState {
            name: "foo".into(),
            valid: valid.clone()
        }
    );
    assert_eq!(
        e.to_string(),
        format!("unknown capture state 'foo'; valid: {valid}")
    );
    // Windows-only states: unavailable elsewhere; on Windows, not captured by this handle.
    for name in ["GetLastError", "WSAGetLastError"] {
        let e = adapt("capture_int", &int2, ERRNO, name);
        if cfg!(windows) {
            assert_eq!(
                e.to_string(),
                format!(
                    "cannot adapt handle (i32, i32)i32: was not linked with capture_call_state(\"{name}\")"
                )
            );
            continue;
        }
        assert_eq!(
            e,
            Error::CaptureStateUnavailable {
                name: name.into(),
                platform: "Windows".into()
            }
        );
        assert_eq!(
            e.to_string(),
            format!("{name} is only available on Windows")
        );
    }
}

#[test]
fn wrong_arguments_are_errors_before_the_call() {
    let sc = int_call();
    // The capture segment is not passed by the caller: three values are one too many.
    // SAFETY: rejected before any call.
    let e = unsafe { sc.invoke(&[Value::I32(1), Value::I32(0), Value::I32(0)]) }.unwrap_err();
    assert!(
        matches!(
            e,
            Error::ArgumentCount {
                expected: 3,
                found: 4,
                ..
            }
        ),
        "{e:?}"
    );
    let h = capturing("capture_int", &FD::of(V::I32, [V::I32, V::I32]));
    let arena = gatun::Arena::confined();
    let state =
        gatun::SegmentAllocator::allocate_layout(&arena, &gatun::linker::capture_state_layout())
            .unwrap();
    // SAFETY: rejected before any call.
    let e = unsafe { h.invoke(&[Value::Segment(state), Value::I32(1)]) }.unwrap_err();
    assert_eq!(
        e.to_string(),
        "wrong argument count: `capture_int` (i32, i32)i32 takes 3 arguments, 2 given \
         (the first argument is the capture segment, then the descriptor's 2)"
    );
    // SAFETY: rejected before any call.
    let e = unsafe { h.invoke(&[Value::I32(1), Value::I32(1), Value::I32(0)]) }.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("value mismatch at argument 1 of `capture_int` (the capture segment)"),
        "{e}"
    );
    // SAFETY: rejected before any call.
    let e = unsafe { sc.invoke(&[Value::F64(1.0), Value::I32(0)]) }.unwrap_err();
    assert!(matches!(e, Error::ValueMismatch { .. }), "{e:?}");
    assert!(e.to_string().contains("argument 2 of `capture_int`"), "{e}");
    // An integer of another kind that fits is converted, through the adapter too; one that
    // does not is an error naming the function and the argument.
    // SAFETY: capture_int(3, 0) returns 3 and sets no errno.
    let r = unsafe { sc.invoke(&[Value::I64(3), Value::U8(0)]) };
    assert_eq!(r.unwrap(), 3);
    // SAFETY: rejected before any call.
    let e = unsafe { sc.invoke(&[Value::U64(1 << 31), Value::I32(0)]) }.unwrap_err();
    assert_eq!(
        e,
        Error::ArgumentOutOfRange {
            function: "`capture_int`".into(),
            argument: 2,
            value: "2147483648".into(),
            kind: "i32",
        }
    );
    // SAFETY: rejected before any call.
    let e = unsafe { sc.invoke_raw(&[]) }.unwrap_err();
    assert!(matches!(e, Error::ArgumentCount { .. }), "{e:?}");
}

#[test]
fn call_gives_errno() {
    let sc = int_call();
    // SAFETY: as above.
    unsafe {
        assert_eq!(sc.call(&[Value::I32(3), Value::I32(0)]), Ok(Ok(3)));
        let e = sc
            .call(&[Value::I32(-1), Value::I32(2)])
            .unwrap()
            .unwrap_err();
        assert_eq!(e, Errno(2));
        assert_eq!(e.raw_os_error(), 2);
        assert_eq!(e.to_string(), "errno 2: No such file or directory");
        let io: std::io::Error = e.into();
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    }
}

#[test]
fn a_failure_that_sets_no_errno_never_reports_an_older_one() {
    // errno is 0 at the start of every adapted call, so a stale errno (of an earlier call, or
    // left in the reused capture buffer) never shows up.
    let sc = int_call();
    let noset = adapt_system_call(
        &capturing("capture_noset", &FD::of(V::I32, [V::I32])),
        "errno",
    )
    .unwrap();
    let typed = noset
        .typed::<unsafe extern "C" fn(c_int) -> c_int>()
        .unwrap();
    // SAFETY: capture_int(int, int) -> int; capture_noset(int) -> int.
    unsafe {
        assert_eq!(sc.invoke(&[Value::I32(-1), Value::I32(42)]), Ok(-42));
        assert_eq!(noset.invoke(&[Value::I32(-1)]), Ok(0));
        assert_eq!(sc.invoke(&[Value::I32(-1), Value::I32(43)]), Ok(-43));
        assert_eq!(noset.call(&[Value::I32(-1)]), Ok(Err(Errno(0))));
        let r = 0i32;
        let args = [(&r as *const i32).cast::<u8>()];
        assert_eq!(sc.invoke(&[Value::I32(-1), Value::I32(44)]), Ok(-44));
        let m1 = -1i32;
        assert_eq!(noset.invoke_raw(&[(&m1 as *const i32).cast()]), Ok(0));
        assert_eq!(noset.invoke_raw(&args), Ok(0));
        assert_eq!(sc.invoke(&[Value::I32(-1), Value::I32(45)]), Ok(-45));
        assert_eq!(typed.invoke((-1,)), 0);
        assert_eq!(typed.call((-1,)), Err(Errno(0)));
    }
}

#[test]
fn raw_path() {
    let sc = int_call();
    let lc = long_call();
    let (ok, bad, zero, err) = (5i32, -1i32, 0i32, 13i32);
    let (lok, lbad) = (1i64 << 40, -1i64);
    let p = |x: &i32| (x as *const i32).cast::<u8>();
    let q = |x: &i64| (x as *const i64).cast::<u8>();
    // SAFETY: each pointer points to an argument of its layout's size.
    unsafe {
        assert_eq!(sc.invoke_raw(&[p(&ok), p(&zero)]), Ok(5));
        assert_eq!(sc.invoke_raw(&[p(&bad), p(&err)]), Ok(-13));
        assert_eq!(lc.invoke_raw(&[q(&lok), p(&zero)]), Ok(1 << 40));
        assert_eq!(lc.invoke_raw(&[q(&lbad), p(&err)]), Ok(-13));
    }
}

#[test]
fn typed_path() {
    let sc = int_call();
    let t = sc
        .typed::<unsafe extern "C" fn(c_int, c_int) -> c_int>()
        .unwrap();
    let l = long_call()
        .typed::<unsafe extern "C" fn(i64, c_int) -> i64>()
        .unwrap();
    // SAFETY: the types are the C signatures.
    unsafe {
        assert_eq!(t.invoke((1, 0)), 1);
        assert_eq!(t.invoke((-1, 13)), -13);
        assert_eq!(t.call((7, 3)), Ok(7));
        assert_eq!(t.call((-1, 3)), Err(Errno(3)));
        assert_eq!(l.invoke((1, 0)), 1);
        assert_eq!(l.invoke((-1, 13)), -13i64);
        assert_eq!(l.invoke((-1, i32::MIN)), i32::MIN as i64);
    }
    // Mismatched types are adapt-time errors.
    let e = sc
        .typed::<unsafe extern "C" fn(i64, c_int) -> c_int>()
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("argument 1 is i32 in the descriptor, i64 in the Rust type"),
        "{e}"
    );
    let e = sc
        .typed::<unsafe extern "C" fn(c_int) -> c_int>()
        .unwrap_err();
    assert!(
        e.to_string().contains("1 argument in the Rust type, 2"),
        "{e}"
    );
    let e = sc
        .typed::<unsafe extern "C" fn(c_int, c_int) -> i64>()
        .unwrap_err();
    assert!(matches!(e, Error::Adapt { .. }), "{e:?}");
    // Variadic handles cannot be typed.
    let v = Linker::native()
        .downcall(
            &sym("capture_int"),
            &FD::of(V::I32, [V::I32, V::I32]),
            &[
                LinkerOption::CaptureCallState(&["errno"]),
                LinkerOption::FirstVariadicArg(1),
            ],
        )
        .unwrap();
    let e = adapt_system_call(&v, "errno")
        .unwrap()
        .typed::<unsafe extern "C" fn(c_int, c_int) -> c_int>()
        .unwrap_err();
    assert!(e.to_string().contains("variadic"), "{e}");
}

// ---- Real system calls ----

/// The C library's name for a POSIX function: msvcrt spells them with an underscore.
fn crt(name: &str) -> String {
    if cfg!(windows) {
        format!("_{name}")
    } else {
        name.to_string()
    }
}

fn libc_call(name: &str, d: &FD, extra: &[LinkerOption]) -> SystemCall {
    let name = &crt(name);
    let lookup = SymbolLookup::default_lookup();
    let mut options = ERRNO.to_vec();
    options.extend_from_slice(extra);
    let h = Linker::native()
        .downcall(&lookup.find(name).unwrap(), d, &options)
        .unwrap();
    adapt_system_call(&h, "errno").unwrap()
}

#[test]
fn close_of_a_bad_descriptor_is_ebadf() {
    let close = libc_call("close", &FD::of(V::I32, [V::I32]), &[]);
    assert_eq!(
        // SAFETY: close(int) -> int; -1 is never an open descriptor.
        unsafe { close.invoke(&[Value::I32(-1)]) },
        Ok(-(libc::EBADF as i64))
    );
    let t = close
        .typed::<unsafe extern "C" fn(c_int) -> c_int>()
        .unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { t.call((-1,)) }, Err(Errno(libc::EBADF)));
}

#[test]
fn open_of_a_missing_file_is_enoent() {
    // int open(const char *, int, ...): variadic after the flags.
    let open = libc_call(
        "open",
        &FD::of(V::I32, [V::ADDRESS, V::I32]),
        &[LinkerOption::FirstVariadicArg(2)],
    );
    let path = c"/nonexistent";
    // SAFETY: a NUL-terminated path and valid flags.
    let r = unsafe {
        open.call(&[
            Value::Address(path.as_ptr() as *mut c_void),
            Value::I32(libc::O_RDONLY),
        ])
    };
    let e = r.unwrap().unwrap_err();
    assert_eq!(e, Errno(libc::ENOENT));
    assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn dup_succeeds() {
    let dup = libc_call("dup", &FD::of(V::I32, [V::I32]), &[]);
    let close = libc_call("close", &FD::of(V::I32, [V::I32]), &[]);
    // SAFETY: dup(int) -> int on stderr, which the test harness keeps open.
    let fd = unsafe { dup.invoke(&[Value::I32(2)]) }.unwrap();
    assert!(fd >= 0, "dup(2) = {fd}");
    // SAFETY: `fd` is ours.
    assert_eq!(unsafe { close.invoke(&[Value::I32(fd as i32)]) }, Ok(0));
}

// pipe2 and O_NONBLOCK are POSIX
#[cfg(unix)]
#[test]
fn read_of_an_empty_nonblocking_pipe_is_eagain() {
    let mut fds = [0 as c_int; 2];
    assert_eq!(
        // SAFETY: `fds` has room for two descriptors.
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK) },
        0
    );
    // ssize_t read(int, void *, size_t): a long result.
    let read = libc_call("read", &FD::of(V::I64, [V::I32, V::ADDRESS, V::U64]), &[]);
    let mut buf = [0u8; 16];
    let args = [
        Value::I32(fds[0]),
        Value::Address(buf.as_mut_ptr().cast()),
        Value::U64(buf.len() as u64),
    ];
    // SAFETY: `buf` is writable for 16 bytes; fds[0] is the pipe's read end.
    unsafe {
        assert_eq!(read.invoke(&args), Ok(-(libc::EAGAIN as i64)));
        // And data, once there is some.
        assert_eq!(libc::write(fds[1], b"hi".as_ptr().cast(), 2), 2);
        assert_eq!(read.invoke(&args), Ok(2));
        assert_eq!(&buf[..2], b"hi");
        // ssize_t is isize in Rust (libc::ssize_t), a C long here.
        let t = read
            .typed::<unsafe extern "C" fn(c_int, *mut c_void, usize) -> libc::ssize_t>()
            .unwrap();
        assert_eq!(
            t.call((fds[0], buf.as_mut_ptr().cast(), buf.len())),
            Err(Errno(libc::EAGAIN))
        );
        assert_eq!(t.invoke((fds[0], buf.as_mut_ptr().cast(), buf.len())), -11);
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
}

// ---- Reentrancy ----

struct Nest {
    reenter: SystemCall,
    inner: SystemCall,
    depth: Cell<usize>,
    max_depth: usize,
    results: RefCell<Vec<(usize, i64)>>,
}

extern "C" fn nest_cb(ctx: *mut c_void) {
    // SAFETY: `ctx` is the `Nest` the test passed, alive for the whole call; only shared
    // references are made (state behind Cell/RefCell, borrowed briefly).
    let n = unsafe { &*ctx.cast::<Nest>() };
    n.depth.set(n.depth.get() + 1);
    let depth = n.depth.get();
    let r = if depth < n.max_depth {
        // Another adapted call while `depth` of them are in progress on this thread.
        // SAFETY: capture_reenter(void (*)(void *), void *, int) -> int with our callback.
        unsafe {
            n.reenter.invoke(&[
                Value::Address(nest_cb as *mut c_void),
                Value::Address(ctx),
                Value::I32(100 + depth as i32),
            ])
        }
    } else {
        // SAFETY: capture_int(int, int) -> int.
        unsafe { n.inner.invoke(&[Value::I32(-1), Value::I32(7)]) }
    };
    n.results.borrow_mut().push((depth, r.unwrap_or(i64::MIN)));
}

fn nested(max_depth: usize) {
    let reenter = adapt_system_call(
        &capturing(
            "capture_reenter",
            &FD::of(V::I32, [V::ADDRESS, V::ADDRESS, V::I32]),
        ),
        "errno",
    )
    .unwrap();
    let n = Nest {
        reenter: reenter.clone(),
        inner: int_call(),
        depth: Cell::new(0),
        max_depth,
        results: RefCell::new(Vec::new()),
    };
    let ctx = (&n as *const Nest).cast_mut().cast::<c_void>();
    // SAFETY: as in `nest_cb`; `n` outlives the call.
    let outer = unsafe {
        reenter.invoke(&[
            Value::Address(nest_cb as *mut c_void),
            Value::Address(ctx),
            Value::I32(100),
        ])
    };
    assert_eq!(outer, Ok(-100));
    let mut expected = vec![(max_depth, -7)];
    for d in (1..max_depth).rev() {
        expected.push((d, -(100 + d as i64)));
    }
    assert_eq!(*n.results.borrow(), expected);
}

#[test]
fn nested_adapted_calls_within_the_stack() {
    nested(3);
    nested(CAPTURE_NESTING);
}

#[test]
fn nested_adapted_calls_beyond_the_stack_fall_back() {
    nested(CAPTURE_NESTING + 4);
}

// ---- Threads ----

#[test]
fn eight_threads_never_see_another_threads_errno() {
    const CALLS: i32 = 100_000;
    let sc = int_call();
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let sc = sc.clone();
            std::thread::spawn(move || {
                let typed = sc
                    .typed::<unsafe extern "C" fn(c_int, c_int) -> c_int>()
                    .unwrap();
                for i in 0..CALLS {
                    // Distinct per thread and per call: (t + 1) * 1_000_000 + i.
                    let err = (t + 1) * 1_000_000 + i;
                    let fail = i % 2 == 1;
                    let (ret, expected) = if fail {
                        (-1, -err as i64)
                    } else {
                        (i, i as i64)
                    };
                    let ret_p = (&ret as *const i32).cast::<u8>();
                    let err_p = (&err as *const i32).cast::<u8>();
                    // Rotate through the paths; a success still sets errno (the JDK dummy
                    // always does), so a stale read would show up on the next failure.
                    // SAFETY: capture_int(int, int) -> int.
                    let got = unsafe {
                        match (i / 2) % 4 {
                            0 => sc.invoke(&[Value::I32(ret), Value::I32(err)]).unwrap(),
                            1 => sc.invoke_raw(&[ret_p, err_p]).unwrap(),
                            2 => typed.invoke((ret, err)) as i64,
                            _ => match sc.call(&[Value::I32(ret), Value::I32(err)]).unwrap() {
                                Ok(r) => r,
                                Err(e) => -(e.raw_os_error() as i64),
                            },
                        }
                    };
                    assert_eq!(got, expected, "thread {t}, call {i}");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

// ---- DowncallHandle::{invoke, invoke_raw} of a capture handle ----

#[test]
fn handle_invoke_with_capture_segment() {
    use gatun::linker::capture_state_layout;
    use gatun::memory::{Arena, SegmentAllocator};
    let d = FD::of(V::I32, [V::I32, V::I32]);
    let h = capturing("capture_int", &d);
    let arena = Arena::confined();
    // 4 bytes with errno at 0 on Linux; 12 with errno at 8 on Windows
    let layout = capture_state_layout();
    let at = layout.byte_offset_of("errno").unwrap();
    let state = arena.allocate_layout(&layout).unwrap();
    // SAFETY: capture_int(int, int) -> int with a capture segment of the capture layout.
    unsafe {
        let r = h.invoke(&[Value::Segment(state), Value::I32(-1), Value::I32(21)]);
        assert_eq!(r, Ok(Value::I32(-1)));
        assert_eq!(state.get::<i32>(at), Ok(21));
        let (ret, err) = (3i32, 22i32);
        let mut out = 0i32;
        h.invoke_raw(
            &[
                state.as_ptr().cast_const(),
                (&ret as *const i32).cast(),
                (&err as *const i32).cast(),
            ],
            (&mut out as *mut i32).cast(),
        )
        .unwrap();
        assert_eq!((out, state.get::<i32>(at).unwrap()), (3, 22));
        // Errors, before the call: a short segment, a wrong count, no capture option.
        let short = arena.allocate(layout.byte_size() - 2, 4).unwrap();
        let e = h.invoke(&[Value::Segment(short), Value::I32(1), Value::I32(0)]);
        assert!(matches!(e, Err(Error::ValueMismatch { .. })), "{e:?}");
        let e = h.invoke(&[Value::Segment(state), Value::I32(1)]);
        assert!(
            matches!(
                e,
                Err(Error::ArgumentCount {
                    expected: 3,
                    found: 2,
                    ..
                })
            ),
            "{e:?}"
        );
        let plain = link("capture_int", &d);
        let e = plain.invoke(&[Value::Segment(state), Value::I32(1), Value::I32(0)]);
        assert!(
            matches!(
                e,
                Err(Error::ArgumentCount {
                    expected: 2,
                    found: 3,
                    ..
                })
            ),
            "{e:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_tasks_never_see_another_tasks_errno() {
    let sc = int_call();
    let tasks: Vec<_> = (0..64)
        .map(|t| {
            let sc = sc.clone();
            tokio::spawn(async move {
                for i in 0..1_000 {
                    let err = (t + 1) * 10_000 + i;
                    // SAFETY: capture_int(int, int) -> int.
                    let r = unsafe { sc.invoke(&[Value::I32(-1), Value::I32(err)]) };
                    assert_eq!(r, Ok(-(err as i64)), "task {t}, call {i}");
                    if i % 10 == 0 {
                        // Let the task move between workers.
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}
