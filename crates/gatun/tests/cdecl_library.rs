//! Linking declared functions with options and keeping the handles: `Declarations::link_with`
//! (errno captured through a declared prototype; options a prototype decides refused) and
//! `cdecl::Library` (one handle per function and options, also when threads race for it;
//! failures not kept). The C side is tests/native/sysv_abi.c's `sysv_set_errno` and, on
//! Linux, `close` from the C library declared by `unistd.h`.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use std::sync::Arc;

use common::natives;
use gatun::cdecl::{Declarations, Library};
use gatun::linker::{capture_state_layout, LinkerOption};
use gatun::memory::{Arena, SegmentAllocator};
use gatun::{Error, Value};

const ERRNO: [LinkerOption; 1] = [LinkerOption::CaptureCallState(&["errno"])];

/// `int sysv_set_errno(int value, int ret)` (sets errno to `value`, returns `ret`) and a
/// variadic prototype, as a header would declare them.
fn declarations() -> Declarations {
    Declarations::parse(
        "int sysv_set_errno(int value, int ret);
         int sysv_get_errno(void);
         double sysv_va_sum(const char *tags, ...);",
    )
    .unwrap()
}

/// The errno a capturing call of `sysv_set_errno` saved, and its result.
fn set_errno(h: &gatun::DowncallHandle, value: i32, ret: i32) -> (i32, Value<'static>) {
    let arena = Arena::confined();
    let state = arena.allocate_layout(&capture_state_layout()).unwrap();
    // SAFETY: `int sysv_set_errno(int, int)` has no preconditions; the capture segment first.
    let r = unsafe { h.invoke(&[state.into(), value.into(), ret.into()]) }.unwrap();
    let at = capture_state_layout().byte_offset_of("errno").unwrap();
    (state.get::<i32>(at).unwrap(), r)
}

#[test]
fn link_with_captures_errno_through_a_declared_function() {
    let d = declarations();
    let h = d.link_with(natives(), "sysv_set_errno", &ERRNO).unwrap();
    assert!(h.captures_call_state() && h.arity() == 3);
    assert_eq!(h.captured_states(), ["errno"]);
    assert_eq!(set_errno(&h, 34, -1), (34, Value::I32(-1)));
    assert_eq!(set_errno(&h, 0, 5), (0, Value::I32(5)));
    // without options it is `link`: no capture segment
    let plain = d.link_with(natives(), "sysv_set_errno", &[]).unwrap();
    assert!(!plain.captures_call_state() && plain.arity() == 2);
}

#[test]
fn link_with_refuses_what_the_prototype_decides() {
    let d = declarations();
    let e = d
        .link_with(
            natives(),
            "sysv_set_errno",
            &[LinkerOption::FirstVariadicArg(1)],
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidDescriptor { reason, .. }
            if reason.contains("declared without `...`")),
        "{e}"
    );
    let e = d.link_with(natives(), "sysv_va_sum", &ERRNO).unwrap_err();
    assert!(e.to_string().contains("link_variadic"), "{e}");
    let e = d
        .link_with(
            natives(),
            "sysv_set_errno",
            &[LinkerOption::CaptureCallState(&["nope"])],
        )
        .unwrap_err();
    assert!(matches!(e, Error::UnknownCaptureState { .. }), "{e:?}");
    assert!(matches!(
        d.link_with(natives(), "undeclared", &[]),
        Err(Error::NotDeclared { .. })
    ));
}

#[test]
fn a_library_links_each_function_once_per_options() {
    let lib = Library::new(natives().clone(), declarations());
    let a = lib.function("sysv_set_errno").unwrap();
    let b = lib.function("sysv_set_errno").unwrap();
    assert!(a.ptr_eq(&b));
    assert!(!a.captures_call_state());
    // other options: another handle, itself kept
    let c = lib.function_with("sysv_set_errno", &ERRNO).unwrap();
    assert!(!c.ptr_eq(&a) && c.captures_call_state());
    assert!(c.ptr_eq(&lib.function_with("sysv_set_errno", &ERRNO).unwrap()));
    assert_eq!(set_errno(&c, 7, 1), (7, Value::I32(1)));
    // another function
    let g = lib.function("sysv_get_errno").unwrap();
    assert!(!g.ptr_eq(&a));
    // a handle linked by hand is not the kept one
    let by_hand = lib
        .declarations()
        .link(lib.lookup(), "sysv_set_errno")
        .unwrap();
    assert!(!by_hand.ptr_eq(&a));
    assert!(format!("{lib:?}").contains("linked: 3"), "{lib:?}");
}

#[test]
fn failures_are_errors_and_are_not_kept() {
    let lib = Library::new(
        natives().clone(),
        Declarations::parse(
            "int gatun_no_such_symbol(void); double sysv_va_sum(const char *, ...);",
        )
        .unwrap(),
    );
    for _ in 0..2 {
        assert!(matches!(
            lib.function("gatun_no_such_symbol"),
            Err(Error::SymbolNotFound { .. })
        ));
        assert!(matches!(
            lib.function("undeclared"),
            Err(Error::NotDeclared { .. })
        ));
        assert!(lib.function("sysv_va_sum").is_err());
    }
    assert!(format!("{lib:?}").contains("linked: 0"), "{lib:?}");
}

#[test]
fn threads_racing_for_a_function_get_the_one_kept_handle() {
    let lib = Arc::new(Library::new(natives().clone(), declarations()));
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (lib, barrier) = (Arc::clone(&lib), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                lib.function_with("sysv_set_errno", &ERRNO).unwrap()
            })
        })
        .collect(); // all eight started before any is joined
    let handles: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let kept = lib.function_with("sysv_set_errno", &ERRNO).unwrap();
    assert!(handles.iter().all(|h| h.ptr_eq(&kept)));
}

/// `int close(int)` from `unistd.h` with errno captured: closing -1 fails with EBADF, which
/// the C library's own `strerror` names.
#[test]
#[cfg(target_os = "linux")]
fn close_declared_by_unistd_h_reports_ebadf() {
    let options = gatun::cdecl::HeaderOptions {
        compiler: Some(gatun_test_natives::CC.into()),
        ..Default::default()
    };
    let d = Declarations::from_headers(["unistd.h"], &options).unwrap();
    let libc = Library::new(gatun::linker::SymbolLookup::default_lookup(), d);
    let close = libc.function_with("close", &ERRNO).unwrap();
    let arena = Arena::confined();
    let state = arena.allocate_layout(&capture_state_layout()).unwrap();
    // SAFETY: close(-1) closes nothing; the capture segment comes first.
    let r = unsafe { close.invoke(&[state.into(), (-1).into()]) }.unwrap();
    assert_eq!(r, Value::I32(-1));
    let errno = state.get::<i32>(0).unwrap();
    let message = std::io::Error::from_raw_os_error(errno).to_string();
    assert!(
        message.starts_with("Bad file descriptor"),
        "{errno}: {message}"
    );
}
