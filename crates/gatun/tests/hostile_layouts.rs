//! Hostile layouts: inputs whose byte size, element count, nesting or sharing is huge while the
//! input itself is small. Each must give an exact result or a typed error promptly. Work is
//! bounded by a watchdog (a generous 10 s of wall time for what takes milliseconds), never by a
//! timing assertion; the unit tests of `layout` and `abi` count the visited nodes exactly.
// Linux (x86-64 SysV, AAPCS64) and Windows on x86-64 (Microsoft x64, run under Wine).
#![cfg(all(gatun_executes, any(target_os = "linux", windows)))]

use std::ffi::c_void;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::mpsc;
use std::time::Duration;

use gatun::abi::sysv::{classify, ArgClass, Classification};
use gatun::cdecl::Declarations;
use gatun::layout::{MemoryLayout, ValueLayout as V, MAX_NESTING};
use gatun::linker::{CType, FunctionDescriptor as FD, Linker};
use gatun::memory::Arena;
use gatun::{Error, Symbol, Value};

/// Seconds the watchdog waits: 10 natively; AArch64, RISC-V 64, s390x and PPC64LE builds are tested
/// under qemu-user, which runs this code about ten times slower.
const WATCHDOG_SECS: u64 = if cfg!(any(
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "s390x",
    target_arch = "powerpc64"
)) {
    100
} else {
    10
};

/// Runs `f` on another thread and fails the test if it has not finished after `WATCHDOG_SECS`.
fn watchdog<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(WATCHDOG_SECS)) {
        Ok(v) => v,
        Err(e) => panic!("{what}: did not finish within {WATCHDOG_SECS} s ({e})"),
    }
}

extern "C" fn never_called() {}

fn symbol() -> Symbol {
    // SAFETY: a valid function; the tests below only link, never call.
    unsafe { Symbol::from_address(never_called as *const c_void) }
}

fn hash(l: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    l.hash(&mut h);
    h.finish()
}

fn huge_struct(bytes: usize) -> MemoryLayout {
    MemoryLayout::c_struct([MemoryLayout::sequence_layout(bytes / 8, V::I64).unwrap()]).unwrap()
}

fn downcall_error(fd: &FD) -> Error {
    match Linker::native().downcall(&symbol(), fd, &[]) {
        Ok(_) => panic!("{fd} was linked"),
        Err(e) => e,
    }
}

#[cfg(any(
    all(target_arch = "x86_64", target_os = "linux"),
    target_arch = "powerpc64"
))]
fn upcall_error(fd: &FD) -> Error {
    let arena = Arena::confined();
    let r = Linker::native().upcall_stub(fd, |_| Ok(Value::Void), &arena);
    match r {
        Ok(_) => panic!("an upcall stub of {fd} was made"),
        Err(e) => e,
    }
}

// SysV copies structs into the stack area, ELFv2 into the parameter save area (which counts
// the doublewords of r3..r10 too), whose limit huge structs exceed.
#[cfg(any(
    all(target_arch = "x86_64", target_os = "linux"),
    target_arch = "powerpc64"
))]
#[test]
fn huge_by_value_structs_are_the_same_error_for_downcalls_and_upcalls() {
    for log2 in [27u32, 61, 62] {
        let r = watchdog("link a huge struct", move || {
            let fd = FD::of_void([V::I32.into(), huge_struct(1 << log2)]);
            (fd.to_string(), downcall_error(&fd), upcall_error(&fd))
        });
        let (fd, down, up) = r;
        assert_eq!(down, up, "2^{log2}");
        // ELFv2: the `int`'s doubleword and the struct's
        let (needed, what) = if cfg!(target_arch = "powerpc64") {
            ((1usize << log2) + 8, "parameter save area")
        } else {
            (1usize << log2, "stack arguments")
        };
        assert_eq!(
            down,
            Error::InvalidDescriptor {
                descriptor: fd,
                reason: format!(
                    "the call needs {needed} bytes of {what}; gatun's executor supports at most 1048576"
                ),
            }
        );
    }
    // The limit itself: 1 MiB links in both directions, 8 bytes more in neither.
    let fits = FD::of_void([huge_struct(1 << 20)]);
    assert!(Linker::native().downcall(&symbol(), &fits, &[]).is_ok());
    let arena = Arena::confined();
    assert!(Linker::native()
        .upcall_stub(&fits, |_| Ok(Value::Void), &arena)
        .is_ok());
    let mut args = vec![MemoryLayout::from(V::I64); 6];
    args.extend([huge_struct(1 << 20), V::I8.into()]);
    let over = FD::of_void(args);
    assert_eq!(downcall_error(&over), upcall_error(&over));
    // SysV: the six `long`s in registers; ELFv2: their doublewords too
    let needed = if cfg!(target_arch = "powerpc64") {
        1048632
    } else {
        1048584
    };
    assert!(downcall_error(&over)
        .to_string()
        .contains(&format!("needs {needed} bytes")));
}

/// `union U0 { int a; int b; }; union U1 { union U0 a; union U0 b; }; …` up to `U{levels}`.
// AAPCS64 passes composites over 16 bytes by reference (§6.8.2 B.3), Microsoft x64 every one
// not of 1, 2, 4 or 8 bytes (and so does s390x), LP64D aggregates over 16 bytes: huge ones link
// both ways as one pointer, promptly; copies beyond `isize::MAX` bytes in all are an error at
// link time.
#[cfg(any(
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "s390x",
    windows
))]
#[test]
fn huge_structs_go_by_reference_and_oversized_copy_totals_are_an_error() {
    use gatun::abi::Location;
    for log2 in [27u32, 61, 62] {
        let (plan_down, plan_up) = watchdog("link a huge struct", move || {
            let fd = FD::of_void([V::I32.into(), huge_struct(1 << log2)]);
            let down = Linker::native().downcall(&symbol(), &fd, &[]).unwrap();
            let arena = Arena::confined();
            let up = Linker::native()
                .upcall_stub(&fd, |_| Ok(Value::Void), &arena)
                .unwrap();
            (down.plan().clone(), up.plan().clone())
        });
        assert_eq!(plan_down, plan_up, "2^{log2}");
        assert_eq!(plan_down.args()[1].by_reference, Some(Location::Int(1)));
    }
    // two copies of 2^62 bytes fit in isize::MAX; four do not
    let fd = FD::of_void(vec![huge_struct(1 << 62); 4]);
    match Linker::native().downcall(&symbol(), &fd, &[]) {
        Err(Error::SizeOverflow { what }) => assert!(what.contains("struct arguments"), "{what}"),
        other => panic!("{other:?}"),
    }
    assert!(Linker::native()
        .downcall(&symbol(), &FD::of_void(vec![huge_struct(1 << 62); 1]), &[])
        .is_ok());
}

fn shared_unions_source(levels: usize) -> String {
    let mut src = String::from("union U0 { int a; int b; };\n");
    for i in 1..=levels {
        src.push_str(&format!(
            "union U{i} {{ union U{} a; union U{} b; }};\n",
            i - 1,
            i - 1
        ));
    }
    src
}

#[test]
fn a_forty_level_shared_union_parses_prints_hashes_compares_and_classifies() {
    let src = shared_unions_source(40);
    assert!(src.len() < 2000);
    let (a, b, text, debug, class, fd_text) = watchdog("40-level shared union", move || {
        let mut d = Declarations::new();
        let a = d.type_layout(&format!("{src} union U40")).unwrap();
        let b = Declarations::new()
            .type_layout(&format!("{src} union U40"))
            .unwrap();
        let text = a.to_string();
        let debug = format!("{a:?}");
        let class = classify(&a);
        let fd = FD::of(a.clone(), [a.clone(), b.clone()]);
        let fd_text = fd.to_string();
        assert!(Linker::native().downcall(&symbol(), &fd, &[]).is_ok());
        (a, b, text, debug, class, fd_text)
    });
    assert_eq!(a.depth(), 42);
    assert_eq!(a.byte_size(), 4);
    assert_eq!(class, Classification::Eightbytes(vec![ArgClass::Integer]));
    assert_eq!(a, b);
    assert_eq!(hash(&a), hash(&b));
    assert!(text.len() <= 2051 && text.ends_with('…'), "{}", text.len());
    assert!(text.starts_with("<<<<"));
    assert!(debug.len() <= 2100, "{}", debug.len());
    assert!(fd_text.len() <= 2051, "{}", fd_text.len());
}

#[test]
fn a_forty_level_shared_union_in_an_error_message_is_bounded() {
    let src = shared_unions_source(40);
    let e = watchdog("error message", move || {
        let mut d = Declarations::new();
        let u = d.type_layout(&format!("{src} union U40")).unwrap();
        let fd = FD::of_void([MemoryLayout::sequence_layout(2, u).unwrap()]);
        downcall_error(&fd).to_string()
    });
    assert!(e.contains("sequence layout"), "{e}");
    assert!(e.len() < 8 * 1024, "{} bytes", e.len());
}

#[test]
fn zero_size_elements_with_a_huge_count_classify_promptly() {
    let (layout, class, linked) = watchdog("zero-size elements", || {
        let mut d = Declarations::new();
        let l = d
            .type_layout(
                "struct e {}; struct s { int x; struct e z[4611686018427387904]; }; struct s",
            )
            .unwrap();
        let class = classify(&l);
        let fd = FD::of(l.clone(), [l.clone()]);
        let linked = Linker::native().downcall(&symbol(), &fd, &[]).is_ok();
        (l, class, linked)
    });
    assert_eq!(layout.byte_size(), 4);
    assert_eq!(class, Classification::Eightbytes(vec![ArgClass::Integer]));
    assert!(linked);
    // From the builder API, the largest count there is.
    let empty = MemoryLayout::c_struct(Vec::<MemoryLayout>::new()).unwrap();
    let s = MemoryLayout::c_struct([
        MemoryLayout::from(V::I32),
        MemoryLayout::sequence_layout(usize::MAX, empty).unwrap(),
    ])
    .unwrap();
    let class = watchdog("usize::MAX zero-size elements", move || classify(&s));
    assert_eq!(class, Classification::Eightbytes(vec![ArgClass::Integer]));
}

#[test]
fn builder_nesting_is_bounded_like_cdecl() {
    let e = watchdog("a million levels", || {
        let mut l: MemoryLayout = V::I32.into();
        for _ in 0..1_000_000 {
            match MemoryLayout::c_struct([l.clone()]) {
                Ok(next) => l = next,
                Err(e) => return (l.depth(), e),
            }
        }
        panic!("a million levels accepted");
    });
    assert_eq!(e.0, MAX_NESTING);
    assert!(
        matches!(
            e.1,
            Error::NestingTooDeep {
                depth: 65,
                max: 64,
                ..
            }
        ),
        "{}",
        e.1
    );
    // Pointer target chains count too.
    let mut p: MemoryLayout = V::I8.into();
    let mut reached = 1;
    for _ in 0..1_000_000 {
        // SAFETY: nothing is read through these layouts.
        match unsafe { V::pointer_to(p.clone()) } {
            Ok(next) => {
                p = next.into();
                reached += 1;
            }
            Err(e) => {
                assert!(matches!(e, Error::NestingTooDeep { .. }), "{e}");
                break;
            }
        }
    }
    assert_eq!(reached, MAX_NESTING);
    assert!(p.to_string().starts_with("ptr:ptr:ptr:"));
    // cdecl accepts exactly what the builder accepts: 63 nested arrays around an int.
    let mut d = Declarations::new();
    let ok = d.type_layout(&format!("int{}", "[1]".repeat(MAX_NESTING - 1)));
    assert_eq!(ok.unwrap().depth(), MAX_NESTING);
    assert!(d
        .type_layout(&format!("int{}", "[1]".repeat(MAX_NESTING)))
        .is_err());
}

/// Fields of the wide layouts below.
const WIDE: usize = 100_000;

/// A union of `WIDE` copies of one struct of `WIDE` i8 fields: 2 × 10⁵ member slots, 10¹⁰
/// fields when expanded.
fn wide_union() -> MemoryLayout {
    let s = MemoryLayout::c_struct((0..WIDE).map(|_| V::I8)).unwrap();
    MemoryLayout::union_layout((0..WIDE).map(|_| s.clone())).unwrap()
}

/// `WIDE` bytes, described by [`wide_union`].
#[repr(C)]
#[derive(Clone, Copy)]
struct Wide([i8; WIDE]);

// SAFETY: every byte of `Wide` is an i8, which each struct of the union places at its offset;
// every bit pattern is valid.
unsafe impl CType for Wide {
    fn layout() -> MemoryLayout {
        wide_union()
    }
}

#[test]
fn wide_shared_layouts_built_twice_compare_and_type_check_promptly() {
    let (eq, hashes_agree, typed) = watchdog("10⁵ copies of a 10⁵-field struct", || {
        let (a, b) = (wide_union(), wide_union());
        let eq = a == b;
        let hashes_agree = hash(&a) == hash(&b);
        // `typed` compares the shape of `Wide::layout()` (built anew) with the descriptor's.
        let h = Linker::native()
            .downcall(&symbol(), &FD::of(a, Vec::<MemoryLayout>::new()), &[])
            .unwrap();
        let typed = h.typed::<(), Wide>().is_ok();
        (eq, hashes_agree, typed)
    });
    assert!(eq && hashes_agree && typed);
}
