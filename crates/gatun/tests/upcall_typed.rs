//! Typed upcalls (`Linker::upcall_typed`): the direct trampoline (x86-64 SysV, a free integer
//! argument register) and the value path (all six integer registers taken, stack arguments,
//! AArch64) compute the same results for scalars, floats, bools, pointers, register-returned
//! and MEMORY-class structs; `qsort` through the C library; a panic aborts the process.
//! Confined typed stubs (`upcall_typed_confined`): non-`Send` closures on both paths, a call
//! from another thread aborts; `descriptor()` against the C declarations; the signature
//! inferred from the closure's parameter types (and, for simple bodies, the reverse).
#![cfg(all(gatun_executes, target_os = "linux"))]

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::process::Command;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gatun::cdecl::Declarations;
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

/// Runs the test `child` of this binary in a child process with `env` set to `mode`, and
/// returns its stderr after checking that it aborted (SIGABRT); `None` where the test binary
/// cannot run as a child process.
fn aborted_child(child: &str, env: &str, mode: &str) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", child, "--nocapture", "--test-threads=1"])
        .env(env, mode)
        .output()
        .unwrap();
    if out.status.code() == Some(127) {
        eprintln!("cannot run the test binary as a child process here; not run");
        return None;
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.signal(), Some(6), "{mode}: {stderr}"); // SIGABRT
    Some(stderr)
}

#[test]
fn a_panic_in_a_typed_closure_aborts_without_unwinding() {
    for mode in ["direct", "values"] {
        let Some(stderr) =
            aborted_child("typed_upcall_panic_child", "GATUN_TYPED_UPCALL_CHILD", mode)
        else {
            return;
        };
        assert!(
            stderr.contains("gatun: upcall (")
                && stderr.contains("the closure panicked: typed boom"),
            "{mode}: {stderr}"
        );
    }
}

#[test]
fn confined_typed_stubs_take_non_send_closures_on_both_paths() {
    let arena = Arena::confined();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&seen);
    let direct = Linker::native()
        .upcall_typed_confined(
            move |x: i32, y: f64| {
                log.borrow_mut().push(x);
                x as f64 * y
            },
            &arena,
        )
        .unwrap();
    assert_eq!(direct.is_direct(), DIRECT);
    // SAFETY: the stub's own type, called on the thread that made it.
    assert_eq!(unsafe { (direct.function())(3, 0.5) }, 1.5);
    // all six integer registers taken: the confined value path
    let sum = Cell::new(0i64);
    type Six = unsafe extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64;
    let values = Linker::native()
        .upcall_typed_confined::<Six>(
            |a, b, c, d, e, f| {
                sum.set(sum.get() + a + b + c + d + e + f);
                sum.get()
            },
            &arena,
        )
        .unwrap();
    assert!(!values.is_direct());
    // SAFETY: as above.
    unsafe {
        assert_eq!((values.function())(1, 2, 3, 4, 5, 6), 21);
        assert_eq!((values.function())(1, 1, 1, 1, 1, 1), 27);
    }
    drop(direct);
    assert_eq!(*seen.borrow(), [3]);
    assert_eq!(
        Rc::strong_count(&seen),
        1,
        "dropping the stub drops the closure"
    );
    assert!(format!("{values:?}").starts_with("ConfinedTypedUpcallStub("));
}

#[test]
fn a_confined_typed_comparator_sorts_through_the_c_library() {
    let arena = Arena::confined();
    let calls = Cell::new(0usize);
    let cmp = Linker::native()
        .upcall_typed_confined(
            |a: *const c_void, b: *const c_void| {
                calls.set(calls.get() + 1);
                // SAFETY: qsort passes pointers to two elements of the i64 array.
                unsafe { (*a.cast::<i64>()).cmp(&*b.cast::<i64>()) as i32 }
            },
            &arena,
        )
        .unwrap();
    let decls = Declarations::parse(
        "void qsort(void *base, size_t n, size_t size, int (*compar)(const void *, const void *));",
    )
    .unwrap();
    assert_eq!(cmp.descriptor(), &decls.callback("qsort", 3).unwrap());
    let qsort = decls
        .link(&SymbolLookup::default_lookup(), "qsort")
        .unwrap();
    let mut xs: Vec<i64> = (0..500).map(|i| (i * 7919) % 503 - 250).collect();
    let mut want = xs.clone();
    want.sort();
    // `500` and `8` as the `int`s they are written as: converted to `size_t`
    let args = [
        Value::Address(xs.as_mut_ptr().cast()),
        Value::I32(500),
        Value::I32(8),
        cmp.as_value(),
    ];
    // SAFETY: `xs` holds 500 i64s; `cmp` compares them, outlives the call and is called by
    // qsort on this thread.
    unsafe { qsort.invoke(&args) }.unwrap();
    assert_eq!(xs, want);
    assert!(calls.get() >= 499);
}

/// The declarations of `descriptors_match_the_declared_function_types`.
fn pt_decls() -> &'static Declarations {
    static DECLS: std::sync::OnceLock<Declarations> = std::sync::OnceLock::new();
    DECLS.get_or_init(|| {
        Declarations::parse(
            "typedef double (*unary)(double);
             typedef void (*visit)(const char *name, int depth, _Bool last);
             struct pt { double x, y; };
             typedef struct pt (*rot)(struct pt, int);",
        )
        .unwrap()
    })
}

/// `struct pt` of `pt_decls`, its layout taken from the declaration (names included).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pt {
    x: f64,
    y: f64,
}

// SAFETY: `struct pt { double x, y; }` is `#[repr(C)] {f64, f64}`.
unsafe impl CType for Pt {
    fn layout() -> MemoryLayout {
        pt_decls().layout("struct pt").unwrap().clone()
    }
}

#[test]
fn descriptors_match_the_declared_function_types() {
    let decls = pt_decls();
    let arena = Arena::confined();
    let unary = Linker::native().upcall_typed(|x: f64| x, &arena).unwrap();
    assert_eq!(
        unary.descriptor(),
        &decls.function_pointer("unary").unwrap()
    );
    let visit = Linker::native()
        .upcall_typed(|_: *const c_void, _: i32, _: bool| {}, &arena)
        .unwrap();
    assert_eq!(
        visit.descriptor(),
        &decls.function_pointer("visit").unwrap()
    );
    let k = Cell::new(0);
    let rot = Linker::native()
        .upcall_typed_confined(
            |p: Pt, by: i32| {
                k.set(by);
                Pt { x: -p.y, y: p.x }
            },
            &arena,
        )
        .unwrap();
    assert_eq!(rot.descriptor(), &decls.function_pointer("rot").unwrap());
    // SAFETY: the stub's own type, on this thread.
    let r = unsafe { (rot.function())(Pt { x: 1.0, y: 2.0 }, 1) };
    assert_eq!((r, k.get()), (Pt { x: -2.0, y: 1.0 }, 1));
    // a signature that differs is told apart
    assert_ne!(
        unary.descriptor(),
        &decls.function_pointer("visit").unwrap()
    );
}

fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[test]
fn signatures_are_inferred_from_closures_and_closures_from_signatures() {
    let arena = Arena::confined();
    // from the closure's parameter types: an `int (*)(int, int)`
    let a = Linker::native()
        .upcall_typed(|a: i32, b: i32| a + b, &arena)
        .unwrap();
    let f: unsafe extern "C" fn(i32, i32) -> i32 = a.function();
    // SAFETY: the stub's own type.
    assert_eq!(unsafe { f(2, 3) }, 5);
    // from the signature: the closure's parameters need no types when its body does not
    // need them early (arithmetic and casts; a method call would)
    let b = Linker::native()
        .upcall_typed::<unsafe extern "C" fn(i64, u8) -> f64>(
            |x, y| x as f64 + f64::from(y),
            &arena,
        )
        .unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { (b.function())(-4, 200) }, 196.0);
    // a function item
    let c = Linker::native().upcall_typed(add, &arena).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { (c.function())(40, 2) }, 42);
    assert_eq!(c.descriptor(), &FD::of(V::I32, [V::I32, V::I32]));
    // the same for confined stubs
    let d = Linker::native()
        .upcall_typed_confined(|x: u16| u32::from(x) * 2, &arena)
        .unwrap();
    // SAFETY: as above, on this thread.
    assert_eq!(unsafe { (d.function())(21) }, 42);
}

#[test]
fn confined_typed_wrong_thread_child() {
    let Ok(mode) = std::env::var("GATUN_CONFINED_TYPED_CHILD") else {
        return;
    };
    let arena = Arena::global();
    let not_send = Rc::new(Cell::new(0));
    let n = Rc::clone(&not_send);
    let direct = Linker::native()
        .upcall_typed_confined(move |x: i32| n.replace(x), arena)
        .unwrap();
    let n = Rc::clone(&not_send);
    type Six = unsafe extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64;
    let values = Linker::native()
        .upcall_typed_confined::<Six>(
            move |a, _, _, _, _, _| i64::from(n.replace(a as i32)),
            arena,
        )
        .unwrap();
    let (direct, values) = (direct.address() as usize, values.address() as usize);
    std::thread::spawn(move || {
        // SAFETY: the stubs' own types; they live (leaked with the process) while the thread
        // calls them, and the call aborts before the closure runs.
        unsafe {
            if mode == "direct" {
                let f: unsafe extern "C" fn(i32) -> i32 = std::mem::transmute(direct);
                f(1);
            } else {
                let f: Six = std::mem::transmute(values);
                f(1, 0, 0, 0, 0, 0);
            }
        }
    })
    .join()
    .unwrap();
    unreachable!("the call on another thread must have aborted the process");
}

#[test]
fn a_confined_typed_stub_called_on_another_thread_aborts() {
    for mode in ["direct", "values"] {
        let Some(stderr) = aborted_child(
            "confined_typed_wrong_thread_child",
            "GATUN_CONFINED_TYPED_CHILD",
            mode,
        ) else {
            return;
        };
        assert!(
            stderr.contains("gatun: upcall (")
                && stderr
                    .contains("called on a thread other than the one that made this confined stub"),
            "{mode}: {stderr}"
        );
    }
}
