//! The examples in `examples/`, run as tests and checked against the output their docs show.
//! Each example's `run()` returns what its `main` prints.
// (Not on RISC-V 64: the libraries of several examples, sqlite3, expat, jansson, are not
// installed for it.)
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
    expat("../examples/expat.rs") => "<library> at depth 1\n\
        \x20 <book id=\"1\" lang=\"en\"> at depth 2\n\
        \x20 </book>\n\
        \x20 <book id=\"2\"> at depth 2\n\
        \x20   <title> at depth 3\n\
        \x20   </title>\n\
        \x20 </book>\n\
        </library>\n\
        XML_Parse: XML_STATUS_OK\n\
        <a> at depth 1\n\
        \"<a></b>\": error \"mismatched tag\" at line 1\n";
    libc_structs("../examples/libc_structs.rs") => "getaddrinfo(\"localhost\", AF_INET, SOCK_STREAM, 0): \
        families {\"AF_INET\"}, 127.0.0.1 among them: true, canonical name None\n\
        getaddrinfo(\"::1\", AF_UNSPEC, SOCK_STREAM, AI_NUMERICHOST | AI_CANONNAME): \
        families {\"AF_INET6\"}, 127.0.0.1 among them: false, canonical name Some(\"::1\")\n\
        stat: examples/libc_structs.rs is S_IFREG, examples is S_IFDIR\n\
        gmtime_r(1000000000): 2001-09-09 01:46:40 Sunday (26 characters), tm_yday 251\n";
    libuv("../examples/libuv.rs") => "timer: tick 1, tick 2, tick 3, stopped, closed\n\
        work: 1 + 2 + ... + 100 = 5050 on a pool thread: true, \
        after work on the loop thread: true, status 0\n\
        uv_run(UV_RUN_DEFAULT) = 0, uv_loop_close = 0\n";
    jansson("../examples/jansson.rs") => "json_dumps: {\"answer\":42,\"name\":\"gatun\",\"pair\":[1,2]}\n\
        json_loads: answer 42, name \"gatun\", pair [1, 2]\n\
        json_decref: refcounts [1, 1], each then json_delete\n\
        json_loads(\"{\\\"answer\\\": }\"): NULL true, \
        error \"unexpected token near '}'\" at line 1, column 12\n";
}

/// The SQLite example stays within what it was written to show: at most 60 lines and
/// 3 `unsafe` blocks.
#[test]
fn sqlite_example_is_short() {
    let src = include_str!("../examples/sqlite.rs");
    assert!(src.lines().count() <= 60, "{} lines", src.lines().count());
    assert!(src.matches("unsafe {").count() <= 3);
}

/// The sources of the examples that use real C libraries through their headers.
const HEADER_EXAMPLES: [(&str, &str); 4] = [
    ("expat.rs", include_str!("../examples/expat.rs")),
    (
        "libc_structs.rs",
        include_str!("../examples/libc_structs.rs"),
    ),
    ("libuv.rs", include_str!("../examples/libuv.rs")),
    ("jansson.rs", include_str!("../examples/jansson.rs")),
];

/// The code of `src` without comments (a `//` to the end of its line; the examples have no
/// `//` inside string literals).
fn code(src: &str) -> String {
    src.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of every `unsafe { .. }` block in `code`, braces matched (the braces inside the
/// examples' string literals are balanced too).
fn unsafe_blocks(code: &str) -> Vec<&str> {
    code.match_indices("unsafe {")
        .map(|(start, _)| {
            let mut depth = 0;
            for (i, c) in code[start..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => return &code[start..start + i + 1],
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            panic!("unbalanced unsafe block at byte {start}")
        })
        .collect()
}

/// The body of `fn name` in `code`: from its signature to the next item at column 0.
fn function<'c>(code: &'c str, name: &str) -> &'c str {
    let start = code.find(&format!("fn {name}(")).expect("the function");
    let end = code[start..].find("\n}\n").expect("its end");
    &code[start..start + end + 2]
}

/// The examples that use real C libraries read C data through layouts and pointer targets: no
/// raw pointer is made, offset, cast or dereferenced, and no flag is written in hexadecimal
/// (constants come from the headers); functions come from a `cdecl::Library`, which links each
/// once, never from a `Declarations::link*` inside a call; the getaddrinfo walk has no
/// `unsafe` besides the trust step and its two calls.
#[test]
fn header_examples_use_no_raw_pointers() {
    let forbidden = [
        "from_raw_parts",
        ".add(",
        ".offset(",
        ".cast",
        "*const",
        "*mut",
        "as_ptr",
        ".address(",
        "get_pointee",
        "reinterpret",
        "read_c_string",
        "as_c_str",
        "0x",
    ];
    for (name, src) in HEADER_EXAMPLES {
        let code = code(src);
        for f in forbidden {
            assert!(!code.contains(f), "{name} uses `{f}`");
        }
        // A unary `*` dereferences only a `RefCell` borrow or a `Mutex` guard.
        for (i, _) in code.match_indices('*') {
            let before = code[..i].trim_end();
            let unary = before.ends_with(['(', '=', ',', '{', ';', '&', '!', '['])
                || before.ends_with("=>");
            if unary && !code[..i].ends_with("::") {
                let operand = &code[i + 1..];
                let word = operand
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next();
                let rest = &operand[word.map_or(0, str::len)..];
                assert!(
                    [".borrow_mut()", ".lock()"]
                        .iter()
                        .any(|m| rest.starts_with(m)),
                    "{name}: a dereference at `{}`",
                    &code[i..(i + 40).min(code.len())]
                );
            }
        }
        assert!(
            code.contains("Library::new("),
            "{name} links through a Library"
        );
        for block in unsafe_blocks(&code) {
            let links = ["link(", "link_with(", "link_variadic(", ".function("];
            assert!(
                !links.iter().any(|l| block.contains(l)),
                "{name} links in a call: {block}"
            );
        }
    }
    let libc = code(HEADER_EXAMPLES[1].1);
    let walk = function(&libc, "addresses");
    assert_eq!(
        unsafe_blocks(walk).len(),
        2,
        "getaddrinfo and freeaddrinfo, nothing else"
    );
    let list = &walk[walk.find("while let").expect("the walk")..];
    let list = &list[..list.find("\n        }\n").expect("its end")];
    assert!(
        !list.contains("unsafe"),
        "the walk over ai_next has no unsafe: {list}"
    );
}
