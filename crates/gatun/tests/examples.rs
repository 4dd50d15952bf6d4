//! The examples in `examples/`, run as tests and checked against the output their docs show.
//! Each example's `run()` returns what its `main` prints.
#![cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]

macro_rules! examples {
    ($($name:ident ($path:literal) => $expected:expr;)*) => {$(
        #[allow(dead_code)]
        #[path = $path]
        mod $name;

        #[test]
        fn $name() {
            assert_eq!($name::run().unwrap(), $expected);
        }
    )*};
}

examples! {
    out_parameters("../examples/out_parameters.rs") =>
        "frexp(48) = 0.75 * 2^6\nstrtol(\"42 apples\") = 42, rest \" apples\"\n";
    returned_strings("../examples/returned_strings.rs") =>
        "strerror(2) = \"No such file or directory\"\nstrstr = \"world\"\ngetenv = NULL\n";
    variadic("../examples/variadic.rs") => "10 characters: \"42|1.50|hi\"\n";
    invoke_into("../examples/invoke_into.rs") =>
        "div(17, 5) = 3 remainder 2\ndiv(-17, 5) = -3 remainder -2\n";
    errno_capture("../examples/errno_capture.rs") =>
        "open = -1, errno 2 (No such file or directory)\n";
    sqlite("../examples/sqlite.rs") =>
        "exec: 1 | one\nexec: 2 | two\nid 2: two\nerror 1: no such table: missing\n";
    zlib("../examples/zlib.rs") => "crc32(\"hello\") = 907060870\n\
        1000 bytes -> compressed smaller: true -> uncompressed equal: true\n";
    upcall_from_header("../examples/upcall_from_header.rs") =>
        "comparator (ptr, ptr)i32, sorted: [-2, 1, 1, 3, 4, 5]\n";
    expat("../examples/expat.rs") => "";
    libuv("../examples/libuv.rs") => "";
    jansson("../examples/jansson.rs") => "";
    libc_structs("../examples/libc_structs.rs") => "";
}

/// The SQLite example stays within what it was written to show: at most 60 lines and
/// 3 `unsafe` blocks.
#[test]
fn sqlite_example_is_short() {
    let src = include_str!("../examples/sqlite.rs");
    assert!(src.lines().count() <= 60, "{} lines", src.lines().count());
    assert!(src.matches("unsafe {").count() <= 3);
}
