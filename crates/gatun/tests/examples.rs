//! The examples in `examples/`, run as tests and checked against the output their docs show.
//! Each example's `run()` returns what its `main` prints.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

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
}
