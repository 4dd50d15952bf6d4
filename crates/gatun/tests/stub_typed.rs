//! Typed downcalls (`DowncallHandle::typed`): the direct path for scalar signatures
//! (the target itself, called as a typed `extern "C" fn`), the stub path for structs by value,
//! struct returns (registers and memory), variadic calls and errno capture, and the checks
//! against the descriptor.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

mod common;

use common::*;
use gatun::layout::MemoryLayout;
use gatun::linker::{
    capture_state_layout, CType, FunctionDescriptor as FD, LinkerOption, TypedHandle,
};
use gatun::Error;

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Id {
    i: i32,
    d: f64,
}

// SAFETY: `#[repr(C)] struct { int i; double d; }` is exactly this layout.
unsafe impl CType for Id {
    fn layout() -> MemoryLayout {
        MemoryLayout::c_struct([V::I32.with_name("i"), V::F64.with_name("d")]).unwrap()
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct L3 {
    a: i64,
    b: i64,
    c: i64,
}

// SAFETY: three longs, as `sysv_L3`.
unsafe impl CType for L3 {
    fn layout() -> MemoryLayout {
        MemoryLayout::c_struct([V::I64, V::I64, V::I64]).unwrap()
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ll {
    x: i64,
    y: i64,
}

// SAFETY: two longs, as `sysv_LL`.
unsafe impl CType for Ll {
    fn layout() -> MemoryLayout {
        MemoryLayout::c_struct([V::I64, V::I64]).unwrap()
    }
}

#[test]
fn scalar_signatures_call_the_target_directly() {
    let h = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    let f: TypedHandle<(i32, i32), i32> = h.typed().unwrap();
    assert!(f.is_direct());
    // SAFETY: int sysv_add_i32(int, int).
    assert_eq!(unsafe { f.call((40, 2)) }, 42);
    let h = link("sysv_add6", &FD::of(V::I64, [V::I64; 6]));
    let f = h.typed::<(i64, i64, i64, i64, i64, i64), i64>().unwrap();
    assert!(f.is_direct());
    // SAFETY: long sysv_add6(long × 6).
    assert_eq!(unsafe { f.call((1, 1, 1, 1, 1, 1)) }, 21);
    // the target itself as a typed function pointer
    let g: unsafe extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64 = f.as_extern_fn().unwrap();
    assert_eq!(g as *const (), h.address() as *const ());
    // SAFETY: as above.
    assert_eq!(unsafe { g(1, 2, 3, 4, 5, 6) }, 1 + 4 + 9 + 16 + 25 + 36);
    let h = link("sysv_noop", &FD::of_void([]));
    let f = h.typed::<(), ()>().unwrap();
    // SAFETY: void sysv_noop(void).
    unsafe { f.call(()) };
    let h = link("sysv_f32_mix", &FD::of(V::F32, [V::F32, V::I32, V::F32]));
    let f = h.typed::<(f32, i32, f32), f32>().unwrap();
    // SAFETY: float sysv_f32_mix(float, int, float).
    assert_eq!(unsafe { f.call((1.5, 3, 2.0)) }, 7.0);
    let h = link("sysv_ret_bool", &FD::of(V::BOOL, [V::I64]));
    let f = h.typed::<(i64,), bool>().unwrap();
    // SAFETY: bool sysv_ret_bool(long).
    assert!(unsafe { f.call((0x100 + 1,)) });
    // SAFETY: as above.
    assert!(!unsafe { f.call((0x100,)) });
}

#[test]
fn structs_are_called_directly_or_through_the_stub() {
    let id = FD::of(V::F64, [Id::layout()]);
    let f = link("sysv_id_sum", &id).typed::<(Id,), f64>().unwrap();
    assert!(f.is_direct());
    // SAFETY: double sysv_id_sum(sysv_ID).
    assert_eq!(unsafe { f.call((Id { i: 3, d: 0.5 },)) }, 30.5);
    let f = link("sysv_id_make", &FD::of(Id::layout(), [V::I32, V::F64]))
        .typed::<(i32, f64), Id>()
        .unwrap();
    // SAFETY: sysv_ID sysv_id_make(int, double).
    assert_eq!(unsafe { f.call((7, 2.25)) }, Id { i: 7, d: 2.25 });
    // a 24-byte struct returned through the hidden pointer, a 16-byte one passed in registers
    let f = link(
        "sysv_l3_from_ll",
        &FD::of(L3::layout(), [Ll::layout(), V::I64.into()]),
    )
    .typed::<(Ll, i64), L3>()
    .unwrap();
    // SAFETY: sysv_L3 sysv_l3_from_ll(sysv_LL, long).
    let r = unsafe { f.call((Ll { x: 5, y: 6 }, 7)) };
    assert_eq!(r, L3 { a: 5, b: 6, c: 7 });
    // the same through the trampoline (no stub)
    let h = link(
        "sysv_l3_from_ll",
        &FD::of(L3::layout(), [Ll::layout(), V::I64.into()]),
    )
    .interpreted();
    let f = h.typed::<(Ll, i64), L3>().unwrap();
    assert_eq!(
        // SAFETY: as above.
        unsafe { f.call((Ll { x: -1, y: 2 }, 3)) },
        L3 { a: -1, b: 2, c: 3 }
    );
}

#[test]
fn capture_and_variadic_use_the_stub() {
    let h = link_with(
        "sysv_set_errno",
        &FD::of(V::I32, [V::I32, V::I32]),
        &[LinkerOption::CaptureCallState(&["errno"])],
    );
    let f = h.typed::<(*mut i32, i32, i32), i32>().unwrap();
    assert!(!f.is_direct());
    assert!(f.as_extern_fn().is_none());
    // the capture struct: errno at 0 of 4 bytes on Linux, at 8 of 12 on Windows
    let at = capture_state_layout().byte_offset_of("errno").unwrap() / 4;
    let mut state = [0i32; 3];
    // SAFETY: int sysv_set_errno(int, int); `state` is a 4-byte aligned capture struct.
    assert_eq!(unsafe { f.call((state.as_mut_ptr(), 17, 5)) }, 5);
    assert_eq!(state[at], 17);
    let g = h
        .interpreted()
        .typed::<(*mut i32, i32, i32), i32>()
        .unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { g.call((state.as_mut_ptr(), 23, 6)) }, 6);
    assert_eq!(state[at], 23);

    // double sysv_va_sum(const char *tags, ...) with ("idf", int, double, float→double)
    let h = link_with(
        "sysv_va_sum",
        &FD::of(V::F64, [V::ADDRESS, V::I32, V::F64, V::F32]),
        &[LinkerOption::FirstVariadicArg(1)],
    );
    let f = h.typed::<(*const u8, i32, f64, f32), f64>().unwrap();
    assert!(!f.is_direct());
    let tags = b"idd\0";
    // SAFETY: a NUL-terminated tag string matching the variadic arguments.
    let r = unsafe { f.call((tags.as_ptr(), 2, 0.5, 0.25)) };
    // SAFETY: as above, through the Value path for reference.
    let want = unsafe {
        h.invoke(&[
            gatun::Value::Address(tags.as_ptr() as *mut _),
            gatun::Value::I32(2),
            gatun::Value::F64(0.5),
            gatun::Value::F32(0.25),
        ])
    }
    .unwrap();
    assert_eq!(gatun::Value::F64(r), want);

    // a struct by value as a variadic argument: through the stub's raw entry
    let h = link_with(
        "sysv_va_sum",
        &FD::of(V::F64, [V::ADDRESS.into(), Dd::layout()]),
        &[LinkerOption::FirstVariadicArg(1)],
    );
    let f = h.typed::<(*const u8, Dd), f64>().unwrap();
    assert!(!f.is_direct());
    // SAFETY: "s" announces one sysv_DD.
    let r = unsafe { f.call((c"s".as_ptr().cast::<u8>(), Dd { a: 1.5, b: 2.0 })) };
    assert_eq!(r, 1.5 + 20.0);
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Dd {
    a: f64,
    b: f64,
}

// SAFETY: two doubles, as `sysv_DD`.
unsafe impl CType for Dd {
    fn layout() -> MemoryLayout {
        MemoryLayout::c_struct([V::F64, V::F64]).unwrap()
    }
}

#[test]
fn types_are_checked_against_the_descriptor() {
    let h = link("sysv_add_i32", &FD::of(V::I32, [V::I32, V::I32]));
    assert!(matches!(
        h.typed::<(i32,), i32>(),
        Err(Error::ArgumentCount {
            expected: 2,
            found: 1,
            ..
        })
    ));
    let e = h.typed::<(i32, i64), i32>().unwrap_err();
    assert!(
        e.to_string().contains("value mismatch at argument 2"),
        "{e}"
    );
    let e = h.typed::<(i32, i32), u32>().unwrap_err();
    assert!(e.to_string().contains("return"), "{e}");
    assert!(h.typed::<(i32, i32), ()>().is_err());
    let s = link("sysv_id_sum", &FD::of(V::F64, [Id::layout()]));
    assert!(s.typed::<(Ll,), f64>().is_err());
    // names are ignored: an unnamed layout of the same shape is fine
    assert!(s.typed::<(Id,), f64>().is_ok());
}
