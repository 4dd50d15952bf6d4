//! Real C headers as the signature source: `Declarations::from_headers` runs the system C
//! preprocessor, and what it declares is linked and called (`link`, `link_variadic`) and
//! called back (`callback`, `function_pointer` with `Linker::upcall_stub`).
#![cfg(all(gatun_executes, target_os = "linux"))]

use std::ffi::CStr;

use gatun::cdecl::{Declarations, Declared, HeaderError, HeaderOptions};
use gatun::layout::ValueLayout as V;
use gatun::linker::{FunctionDescriptor as FD, Linker, SymbolLookup};
use gatun::memory::{Arena, SegmentAllocator};
use gatun::{Error, Value};

/// The target's C compiler (the one the test natives are built with).
fn options() -> HeaderOptions {
    HeaderOptions {
        compiler: Some(gatun_test_natives::CC.into()),
        ..HeaderOptions::default()
    }
}

fn headers(names: &[&str]) -> Declarations {
    Declarations::from_headers(names, &options()).unwrap_or_else(|e| panic!("{names:?}: {e}"))
}

fn libc() -> SymbolLookup {
    // SAFETY: the system C library has sound initialisers.
    unsafe { SymbolLookup::library("libc.so.6") }.unwrap()
}

#[test]
fn zlib_from_its_header() {
    if !std::path::Path::new("/usr/include/zlib.h").exists() {
        eprintln!("zlib.h is not installed: skipped");
        return;
    }
    // SAFETY: zlib has sound initialisers.
    let Ok(z) = (unsafe { SymbolLookup::library("libz.so.1") }) else {
        // a cross build run under qemu finds the host's header but no target zlib
        eprintln!("libz.so.1 of this target is not installed: skipped");
        return;
    };
    let d = headers(&["zlib.h"]);
    let version = d.link(&z, "zlibVersion").unwrap();
    // SAFETY: const char *zlibVersion(void) returns a static string.
    let v = unsafe { version.invoke(&[]) }.unwrap();
    let Value::Address(p) = v else {
        panic!("zlibVersion returned {v:?}")
    };
    // SAFETY: a NUL-terminated static string.
    let text = unsafe { CStr::from_ptr(p.cast()) }.to_str().unwrap();
    assert!(text.starts_with("1."), "{text}");
    let crc32 = d.link(&z, "crc32").unwrap();
    let arena = Arena::confined();
    let data = arena.allocate_c_string("123456789").unwrap();
    // SAFETY: crc32(uLong crc, const Bytef *buf, uInt len) over 9 bytes.
    let crc = unsafe { crc32.invoke(&[Value::U64(0), Value::Segment(data), Value::U32(9)]) };
    assert_eq!(crc.unwrap(), Value::U64(0xCBF4_3926));
    // zlib's function-pointer typedefs give upcall descriptors.
    assert_eq!(
        d.function_pointer("alloc_func").unwrap(),
        FD::of(V::ADDRESS, [V::ADDRESS, V::U32, V::U32])
    );
}

#[test]
fn glibc_redirects_and_variadic_calls() {
    let d = headers(&["stdio.h"]);
    // glibc redirects fscanf & co. to their C99 versions with `__asm__` labels.
    assert_eq!(d.function("fscanf").unwrap().symbol(), "__isoc99_fscanf");
    assert_eq!(d.function("printf").unwrap().symbol(), "printf");
    let c = libc();
    let e = d.link(&c, "snprintf").unwrap_err();
    assert!(e.to_string().contains("link_variadic"), "{e}");
    let snprintf = d
        .link_variadic(&c, "snprintf", &[V::I32.into(), V::F64.into()])
        .unwrap();
    let arena = Arena::confined();
    let buf = arena.allocate(64, 1).unwrap();
    let fmt = arena.allocate_c_string("%d-%.2f").unwrap();
    // SAFETY: snprintf(buf, 64, "%d-%.2f", int, double) into a 64-byte buffer.
    let n = unsafe {
        snprintf.invoke(&[
            Value::Segment(buf),
            Value::U64(64),
            Value::Segment(fmt),
            Value::I32(42),
            Value::F64(2.5),
        ])
    }
    .unwrap();
    assert_eq!(n, Value::I32(7));
    assert_eq!(buf.get_c_string(0).unwrap().to_str().unwrap(), "42-2.50");
    // sscanf is redirected too, and the label is what is linked.
    let sscanf = d.function("sscanf").unwrap();
    assert_eq!(sscanf.symbol(), "__isoc99_sscanf");
    let sscanf = d.link_variadic(&c, "sscanf", &[V::ADDRESS.into()]).unwrap();
    let input = arena.allocate_c_string("  1234").unwrap();
    let pct = arena.allocate_c_string("%d").unwrap();
    let out = arena.allocate(4, 4).unwrap();
    // SAFETY: sscanf(input, "%d", int *) with a 4-byte, 4-aligned target.
    let r = unsafe {
        sscanf.invoke(&[
            Value::Segment(input),
            Value::Segment(pct),
            Value::Segment(out),
        ])
    };
    assert_eq!(r.unwrap(), Value::I32(1));
    assert_eq!(out.get::<i32>(0).unwrap(), 1234);
}

#[test]
fn types_gatun_cannot_pass_fail_only_at_link_time() {
    let d = Declarations::from_headers(
        ["math.h", "stdlib.h", "stddef.h", "sys/socket.h"],
        &HeaderOptions {
            defines: vec![("_GNU_SOURCE".into(), None)],
            ..options()
        },
    )
    .unwrap();
    let c = libc();
    // SAFETY: libm has sound initialisers.
    let m = unsafe { SymbolLookup::library("libm.so.6") }.unwrap();
    let sqrt = d.link(&m, "sqrt").unwrap();
    assert_eq!(
        // SAFETY: double sqrt(double).
        unsafe { sqrt.invoke(&[Value::F64(2.25)]) }.unwrap(),
        Value::F64(1.5)
    );
    for (name, ty) in [
        ("sqrtl", "long double"),
        ("strtold", "long double"),
        ("sqrtf128", "_Float128"),
    ] {
        match d.link(&m.clone().or(c.clone()), name) {
            Err(Error::Unsupported { type_name, reason }) => {
                assert_eq!(type_name, ty, "{name}");
                assert!(reason.contains(&format!("`{name}`")), "{reason}");
            }
            Err(other) => panic!("{name}: {other}"),
            Ok(_) => panic!("{name} linked"),
        }
    }
    match d.try_layout("max_align_t") {
        Err(Error::Unsupported { reason, .. }) => assert!(reason.contains("long double")),
        other => panic!("{other:?}"),
    }
    // With _GNU_SOURCE, glibc's socket functions take `transparent_union`s of pointers,
    // which gcc passes as their first member: a pointer.
    assert_eq!(
        d.function("accept").unwrap().descriptor,
        FD::of(V::I32, [V::I32, V::ADDRESS, V::ADDRESS])
    );
}

#[test]
fn qsort_with_the_headers_callback_descriptor() {
    let d = headers(&["stdlib.h"]);
    let cmp_fd = d.callback("qsort", 3).unwrap();
    assert_eq!(cmp_fd, FD::of(V::I32, [V::ADDRESS, V::ADDRESS]));
    assert_eq!(d.function_pointer("__compar_fn_t").unwrap(), cmp_fd);
    assert!(matches!(
        d.callback("qsort", 0),
        Err(Error::NotDeclared { .. })
    ));
    let qsort = d.link(&libc(), "qsort").unwrap();
    let arena = Arena::confined();
    let cmp = Linker::native()
        .upcall_stub(
            &cmp_fd,
            |args| {
                // SAFETY: qsort passes two pointers into the int array.
                let (a, b) = unsafe {
                    (
                        *args.address(0)?.cast::<i32>(),
                        *args.address(1)?.cast::<i32>(),
                    )
                };
                Ok(Value::I32(a.cmp(&b) as i32))
            },
            &arena,
        )
        .unwrap();
    let values = [5, -3, 9, 0, 7, -8, 2];
    let array = arena.allocate_array(&V::I32.into(), values.len()).unwrap();
    for (i, v) in values.iter().enumerate() {
        array.set(4 * i, *v).unwrap();
    }
    // SAFETY: qsort(base, nmemb, size, compar) over the array's ints.
    unsafe {
        qsort.invoke(&[
            Value::Segment(array),
            Value::U64(values.len() as u64),
            Value::U64(4),
            cmp.as_value(),
        ])
    }
    .unwrap();
    let sorted: Vec<i32> = (0..values.len())
        .map(|i| array.get::<i32>(4 * i).unwrap())
        .collect();
    assert_eq!(sorted, [-8, -3, 0, 2, 5, 7, 9]);
}

#[test]
fn include_dirs_defines_and_errors() {
    let dir = std::env::temp_dir().join(format!("gatun-headers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gatun_test_api.h"),
        "#ifdef GATUN_WIDE\ntypedef long gt_int;\n#else\ntypedef int gt_int;\n#endif\n\
         gt_int gt_twice(gt_int x);\n#define GT_SIZE 3\nstruct gt { gt_int v[GT_SIZE]; };\n",
    )
    .unwrap();
    let narrow = Declarations::from_headers(
        ["gatun_test_api.h"],
        &HeaderOptions {
            include_dirs: vec![dir.clone()],
            ..options()
        },
    )
    .unwrap();
    assert_eq!(narrow.layout("struct gt").unwrap().byte_size(), 12);
    let wide = Declarations::from_headers(
        ["gatun_test_api.h"],
        &HeaderOptions {
            include_dirs: vec![dir.clone()],
            defines: vec![("GATUN_WIDE".into(), None)],
            compiler: Some(gatun_test_natives::CC.into()),
            ..options()
        },
    )
    .unwrap();
    assert_eq!(wide.layout("struct gt").unwrap().byte_size(), 24);
    assert_eq!(
        wide.function("gt_twice").unwrap().descriptor,
        FD::of(V::I64, [V::I64])
    );
    // A path to a file works without include directories.
    let by_path = dir.join("gatun_test_api.h");
    let p = Declarations::from_headers([by_path.to_str().unwrap()], &options()).unwrap();
    assert!(p.function("gt_twice").is_some());
    // Headers add to an existing set; a conflicting redeclaration is a parse error.
    let mut both = Declarations::parse("int before(void);").unwrap();
    let declared = both
        .add_headers([by_path.to_str().unwrap()], &options())
        .unwrap();
    assert!(declared.contains(&Declared::Function("gt_twice".into())));
    assert!(both.function("before").is_some() && both.function("gt_twice").is_some());
    let mut conflicting = Declarations::parse("long gt_twice(long x);").unwrap();
    let e = conflicting
        .add_headers([by_path.to_str().unwrap()], &options())
        .unwrap_err();
    assert!(matches!(e, HeaderError::Parse { .. }), "{e}");
    assert!(conflicting.function("gt_twice").is_some()); // unchanged
                                                         // A missing header is the preprocessor's error, with its message.
    let e = Declarations::from_headers(["gatun_no_such_header.h"], &options()).unwrap_err();
    assert!(matches!(e, HeaderError::Preprocessor { .. }), "{e}");
    assert!(e.to_string().contains("gatun_no_such_header.h"), "{e}");
    // A header that does not parse names itself and the position.
    std::fs::write(dir.join("gatun_bad.h"), "int f(void) int g(void);\n").unwrap();
    let e = Declarations::from_headers(
        ["gatun_bad.h"],
        &HeaderOptions {
            include_dirs: vec![dir.clone()],
            ..options()
        },
    )
    .unwrap_err();
    match &e {
        HeaderError::Parse { headers, error } => {
            assert_eq!(headers, "gatun_bad.h");
            assert!(error.message().contains("expected `;`"), "{e}");
        }
        other => panic!("{other}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}
