//! Typed upcalls (`Linker::upcall_typed`): the direct trampoline (x86-64 SysV, a free integer
//! argument register) and the value path (all six integer registers taken, stack arguments,
//! AArch64) compute the same results for scalars, floats, bools, pointers, register-returned
//! and MEMORY-class structs; `qsort` through the C library; a panic aborts the process.
#![cfg(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    target_os = "linux",
    not(miri)
))]

use std::ffi::c_void;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use gatun::linker::{CType, FunctionDescriptor as FD, SymbolLookup};
use gatun::memory::Arena;
use gatun::{Linker, MemoryLayout, Value, ValueLayout as V};

const DIRECT: bool = cfg!(target_arch = "x86_64");

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    x: f64,
    y: f64,
}

// SAFETY: `#[repr(C)] {f64, f64}` is this layout exactly.
unsafe impl CType for Point {
    fn layout() -> MemoryLayout {
        MemoryLayout::c_struct([V::F64, V::F64]).unwrap()
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Big {
    a: i64,
    b: i64,
    c: i64,
}

// SAFETY: `#[repr(C)] {i64, i64, i64}` is this layout exactly.
unsafe impl CType for Big {
    fn layout() -> MemoryLayout {
        MemoryLayout::c_struct([V::I64, V::I64, V::I64]).unwrap()
    }
}

#[test]
fn scalars_floats_bools_and_pointers() {
    let arena = Arena::confined();
    let s = Linker::native()
        .upcall_typed::<unsafe extern "C" fn(i8, f32, bool, u16, f64, *mut c_void) -> i64>(
            |a: i8, b: f32, c: bool, d: u16, e: f64, p: *mut c_void| {
                a as i64 + b as i64 + c as i64 + d as i64 + e as i64 + p as i64
            },
            &arena,
        )
        .unwrap();
    assert_eq!(s.is_direct(), DIRECT);
    let f = s.function();
    // SAFETY: the stub's own type; it lives for the call.
    let r = unsafe { f(-3, 2.5, true, 60000, 1e3, 7 as *mut c_void) };
    assert_eq!(r, 61007); // -3 + 2 + 1 + 60000 + 1000 + 7
    let b = Linker::native()
        .upcall_typed::<unsafe extern "C" fn(u8) -> bool>(|x: u8| x > 9, &arena)
        .unwrap();
    // SAFETY: as above.
    assert!(unsafe { (b.function())(10) } && !unsafe { (b.function())(9) });
    let v = Linker::native()
        .upcall_typed::<unsafe extern "C" fn()>(|| {}, &arena)
        .unwrap();
    // SAFETY: as above.
    unsafe { (v.function())() };
}

#[test]
fn struct_arguments_and_returns_in_registers_and_memory() {
    let arena = Arena::confined();
    let rot = Linker::native()
        .upcall_typed::<unsafe extern "C" fn(Point, i32) -> Point>(
            |p: Point, k: i32| Point {
                x: -p.y * k as f64,
                y: p.x * k as f64,
            },
            &arena,
        )
        .unwrap();
    assert_eq!(rot.is_direct(), DIRECT);
    // SAFETY: the stub's own type.
    let q = unsafe { (rot.function())(Point { x: 1.0, y: 2.0 }, 3) };
    assert_eq!(q, Point { x: -6.0, y: 3.0 });
    let big = Linker::native()
        .upcall_typed::<unsafe extern "C" fn(i64, Big) -> Big>(
            |k: i64, b: Big| Big {
                a: b.c * k,
                b: b.b * k,
                c: b.a * k,
            },
            &arena,
        )
        .unwrap();
    assert_eq!(big.is_direct(), DIRECT);
    // SAFETY: the stub's own type.
    let r = unsafe { (big.function())(2, Big { a: 1, b: 2, c: 3 }) };
    assert_eq!(r, Big { a: 6, b: 4, c: 2 });
}

#[test]
fn full_integer_registers_and_stack_arguments_take_the_value_path() {
    let arena = Arena::confined();
    type Six = unsafe extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64;
    let six = Linker::native()
        .upcall_typed::<Six>(
            |a: i64, b: i64, c: i64, d: i64, e: i64, f: i64| {
                a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f
            },
            &arena,
        )
        .unwrap();
    assert!(!six.is_direct());
    // SAFETY: the stub's own type.
    assert_eq!(unsafe { (six.function())(1, 1, 1, 1, 1, 2) }, 27);
    type Eight = unsafe extern "C" fn(i32, i32, i32, i32, i32, i32, i32, f64) -> f64;
    let eight = Linker::native()
        .upcall_typed::<Eight>(
            |a: i32, b: i32, c: i32, d: i32, e: i32, f: i32, g: i32, x: f64| {
                (a + b + c + d + e + f + g) as f64 * x
            },
            &arena,
        )
        .unwrap();
    assert!(!eight.is_direct());
    assert_eq!(
        // SAFETY: the stub's own type.
        unsafe { (eight.function())(1, 2, 3, 4, 5, 6, 7, 0.5) },
        14.0
    );
    // Five integers and floats: the context still fits (r9), the floats are in xmm.
    type Five = unsafe extern "C" fn(i32, f64, i32, f64, i32, i32, i32) -> i32;
    let five = Linker::native()
        .upcall_typed::<Five>(
            |a: i32, x: f64, b: i32, y: f64, c: i32, d: i32, e: i32| {
                a + b + c + d + e + (x * y) as i32
            },
            &arena,
        )
        .unwrap();
    assert_eq!(five.is_direct(), DIRECT);
    // SAFETY: the stub's own type.
    assert_eq!(unsafe { (five.function())(1, 2.0, 2, 3.0, 3, 4, 5) }, 21);
}

#[test]
fn a_typed_comparator_sorts_through_the_c_library() {
    let arena = Arena::confined();
    let calls = AtomicUsize::new(0);
    type Cmp = unsafe extern "C" fn(*const c_void, *const c_void) -> i32;
    let cmp = Linker::native()
        .upcall_typed::<Cmp>(
            |a: *const c_void, b: *const c_void| {
                calls.fetch_add(1, Ordering::Relaxed);
                // SAFETY: qsort passes pointers to two elements of the i64 array.
                unsafe { (*a.cast::<i64>()).cmp(&*b.cast::<i64>()) as i32 }
            },
            &arena,
        )
        .unwrap();
    let qsort = SymbolLookup::default_lookup().find("qsort").unwrap();
    let d = FD::of_void([V::ADDRESS, V::U64, V::U64, V::ADDRESS]);
    let qsort = Linker::native().downcall(&qsort, &d, &[]).unwrap();
    let mut xs: Vec<i64> = (0..1000).map(|i| (i * 7919) % 1009 - 500).collect();
    let mut want = xs.clone();
    want.sort();
    let args = [
        Value::Address(xs.as_mut_ptr().cast()),
        Value::U64(xs.len() as u64),
        Value::U64(8),
        cmp.as_value(),
    ];
    // SAFETY: `xs` holds 1000 i64s; `cmp` compares them and outlives the call.
    unsafe { qsort.invoke(&args) }.unwrap();
    assert_eq!(xs, want);
    assert!(calls.load(Ordering::Relaxed) >= 999);
}

#[test]
fn typed_upcall_panic_child() {
    let Ok(mode) = std::env::var("GATUN_TYPED_UPCALL_CHILD") else {
        return;
    };
    let arena = Arena::confined();
    let direct = Linker::native()
        .upcall_typed::<unsafe extern "C" fn(i32) -> i32>(
            |x: i32| if x == 1 { panic!("typed boom") } else { x },
            &arena,
        )
        .unwrap();
    type Six = unsafe extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64;
    let values = Linker::native()
        .upcall_typed::<Six>(
            |a: i64, _: i64, _: i64, _: i64, _: i64, _: i64| {
                if a == 1 {
                    panic!("typed boom")
                } else {
                    a
                }
            },
            &arena,
        )
        .unwrap();
    // SAFETY: the stubs' own types.
    unsafe {
        if mode == "direct" {
            (direct.function())(1);
        } else {
            (values.function())(1, 0, 0, 0, 0, 0);
        }
    }
    unreachable!("the upcall must have aborted the process");
}

#[test]
fn a_panic_in_a_typed_closure_aborts_without_unwinding() {
    use std::os::unix::process::ExitStatusExt;
    for mode in ["direct", "values"] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "typed_upcall_panic_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("GATUN_TYPED_UPCALL_CHILD", mode)
            .output()
            .unwrap();
        if out.status.code() == Some(127) {
            eprintln!("cannot run the test binary as a child process here; not run");
            return;
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), Some(6), "{mode}: {stderr}"); // SIGABRT
        assert!(
            stderr.contains("gatun: upcall (")
                && stderr.contains("the closure panicked: typed boom"),
            "{mode}: {stderr}"
        );
    }
}
