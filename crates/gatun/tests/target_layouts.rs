//! C data structures walked through pointer target layouts, with no raw pointer and no
//! `unsafe` beyond the trust step (`Declarations::with_pointer_targets`) and the calls:
//!
//! - `tests/native/target_layouts.h`, parsed with pointer targets: a linked list (a
//!   self-referential struct), a NULL-terminated string array, a struct of NULL-terminated
//!   arrays and a byte buffer, a tree whose parent pointers sit in an anonymous member. Every
//!   walk is checked against C's own walk of the same data (`tl_list_sum`, `tl_label_at`, ...).
//! - glibc's `getaddrinfo` with layouts from `netdb.h` (`Declarations::add_headers`): the
//!   `ai_next` list of `localhost` (resolved offline through `/etc/hosts`; a numeric host if
//!   that fails), checked against the standard library's resolver.
//! - Walking allocates nothing (a counting global allocator, per thread).
#![cfg(all(
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "s390x",
        target_arch = "powerpc64"
    ),
    target_os = "linux",
    not(miri)
))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::net::{Ipv4Addr, ToSocketAddrs};
use std::sync::OnceLock;

use gatun::cdecl::{Declarations, HeaderOptions};
use gatun::layout::{MemoryLayout, PointerTarget, ValueLayout};
use gatun::linker::{DowncallHandle, SymbolLookup};
use gatun::memory::{Arena, MemorySegment, SegmentAllocator};
use gatun::Value;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: every call is forwarded to `System` unchanged; counting touches only const-initialised
// thread-locals (`try_with`, so nothing happens during thread teardown).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn count() {
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

/// `f`'s result and the heap allocations it made on this thread.
fn allocations<R>(f: impl FnOnce() -> R) -> (R, u64) {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    let r = f();
    COUNTING.with(|on| on.set(false));
    (r, ALLOCATIONS.with(Cell::get))
}

/// `tests/native/target_layouts.h` with pointer targets.
fn declarations() -> Declarations {
    // SAFETY: the trust step. The functions of target_layouts.c store and return null or
    // valid pointers in every pointer they declare: nodes, trees and bags they allocate (used
    // below only until the matching `_free`), NUL-terminated labels and names, the
    // NULL-terminated arrays `tl_names`, `names` and `nodes` (the only pointers read as arrays
    // here), and 4 readable bytes behind `bytes` (a 1-byte target).
    let mut decls = unsafe { Declarations::with_pointer_targets() };
    decls
        .add(include_str!("native/target_layouts.h"))
        .unwrap_or_else(|e| panic!("target_layouts.h:\n{e}"));
    decls
}

/// The test library, loaded once and never unloaded: the static strings its functions return
/// must outlive the handles (the trust step promises it).
fn natives() -> &'static SymbolLookup {
    static LIB: OnceLock<SymbolLookup> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: our own test library has no unsound initialisers.
        unsafe { SymbolLookup::library(gatun_test_natives::PATH) }.expect("load test natives")
    })
}

/// A declared function of the test library, linked.
fn link(decls: &Declarations, name: &str) -> DowncallHandle {
    decls
        .link(natives(), name)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The return layout of a declared function (a pointer, here).
fn returned(decls: &Declarations, name: &str) -> ValueLayout {
    let f = decls.function(name).unwrap();
    f.descriptor
        .return_layout()
        .and_then(MemoryLayout::as_value)
        .cloned()
        .unwrap_or_else(|| panic!("{name} returns no pointer"))
}

/// Calls `handle` with `args`.
fn call(handle: &DowncallHandle, args: &[Value<'_>]) -> Value<'static> {
    // SAFETY: the test natives' functions take these arguments (ints and pointers they
    // returned themselves) and have no other preconditions.
    unsafe { handle.invoke(args) }.unwrap()
}

/// The C string a `const char *` result designates (through its return layout's target).
fn c_string(decls: &Declarations, function: &str, result: &Value<'_>) -> Option<String> {
    let s = returned(decls, function).target_of(result).unwrap()?;
    Some(s.get_string(0).unwrap())
}

#[test]
fn the_parsed_layouts_carry_their_targets() {
    let decls = declarations();
    let node = decls.layout("struct tl_node").unwrap();
    let target =
        |l: &MemoryLayout, path: &str| l.accessor(path).unwrap().layout().pointer_target().cloned();
    assert_eq!(target(node, "label"), Some(PointerTarget::CString));
    // Resolved by the accessor: the member points to a whole node.
    assert_eq!(
        target(node, "next"),
        Some(PointerTarget::Layout(node.clone()))
    );
    // Unresolved in the layout itself (a tree, not a cycle).
    let (_, next) = node.select(["next"]).unwrap();
    assert_eq!(
        next.as_value().unwrap().pointer_target(),
        Some(&PointerTarget::Enclosing("tl_node".into()))
    );
    let bag = decls.layout("struct tl_bag").unwrap();
    assert_eq!(
        target(bag, "bytes"),
        Some(PointerTarget::Layout(ValueLayout::U8.into()))
    );
    assert_eq!(
        target(bag, "first"),
        Some(PointerTarget::Layout(node.clone()))
    );
    let tree = decls.layout("tl_tree").unwrap();
    assert_eq!(
        target(tree, "up.parent"),
        Some(PointerTarget::Layout(tree.clone()))
    );
    assert_eq!(
        node.to_string(),
        "[i32(value) x4 ptr:cstr(label) ptr:^tl_node(next)](tl_node)"
    );
}

#[test]
fn a_linked_list_is_walked_member_by_member() {
    let decls = declarations();
    let (new, free) = (link(&decls, "tl_list"), link(&decls, "tl_list_free"));
    let (length, sum) = (link(&decls, "tl_list_length"), link(&decls, "tl_list_sum"));
    let label_at = link(&decls, "tl_label_at");
    let node = decls.layout("struct tl_node").unwrap();
    let value = node.accessor("value").unwrap();
    let label = node.accessor("label").unwrap();
    let next = node.accessor("next").unwrap();
    for n in [0, 1, 7] {
        let list = call(&new, &[Value::I32(n)]);
        let mut values = Vec::new();
        let mut labels = Vec::new();
        let mut at = returned(&decls, "tl_list").target_of(&list).unwrap();
        while let Some(this) = at {
            assert_eq!(this.byte_size(), node.byte_size());
            values.push(value.get(&this).unwrap().as_i32().unwrap());
            let text = label.get_target(&this).unwrap().expect("a label");
            labels.push(text.get_string(0).unwrap());
            // The same node read through `get_value`: a segment of the node's size.
            if let Value::Segment(s) = next.get(&this).unwrap() {
                assert_eq!(
                    s.byte_size(),
                    if s.address() == 0 {
                        0
                    } else {
                        node.byte_size()
                    }
                );
            } else {
                panic!("a pointer with a target reads as a segment");
            }
            at = next.get_target(&this).unwrap();
        }
        assert_eq!(call(&length, &[list]), Value::I32(values.len() as i32));
        assert_eq!(call(&sum, &[list]), Value::I32(values.iter().sum::<i32>()));
        for (i, l) in labels.iter().enumerate() {
            let c = call(&label_at, &[list, Value::I32(i as i32)]);
            assert_eq!(c_string(&decls, "tl_label_at", &c).as_ref(), Some(l));
        }
        assert_eq!(values.len(), n as usize);
        call(&free, &[list]);
    }
}

#[test]
fn a_null_terminated_string_array_is_read_to_its_null() {
    let decls = declarations();
    let names = call(&link(&decls, "tl_names"), &[]);
    let count = call(&link(&decls, "tl_names_count"), &[]);
    let name_at = link(&decls, "tl_name_at");
    let read: Vec<String> = returned(&decls, "tl_names")
        .null_terminated(&names)
        .unwrap()
        .map(|s| s.unwrap().get_string(0).unwrap())
        .collect();
    assert_eq!(Value::I32(read.len() as i32), count);
    for (i, s) in read.iter().enumerate() {
        let c = call(&name_at, &[Value::I32(i as i32)]);
        assert_eq!(c_string(&decls, "tl_name_at", &c).as_ref(), Some(s));
    }
    // Each string segment ends at its NUL: the string's bytes and the NUL, nothing more.
    let sizes: Vec<usize> = returned(&decls, "tl_names")
        .null_terminated(&names)
        .unwrap()
        .map(|s| s.unwrap().byte_size())
        .collect();
    assert_eq!(sizes, read.iter().map(|s| s.len() + 1).collect::<Vec<_>>());
    // A null array is empty.
    let none = Value::Address(std::ptr::null_mut());
    let mut empty = returned(&decls, "tl_names").null_terminated(&none).unwrap();
    assert!(empty.next().is_none());
}

#[test]
fn arrays_bytes_and_lists_inside_a_struct() {
    let decls = declarations();
    let bag = call(&link(&decls, "tl_bag_new"), &[Value::I32(4)]);
    let layout = decls.layout("struct tl_bag").unwrap();
    let node = decls.layout("struct tl_node").unwrap();
    let b = returned(&decls, "tl_bag_new")
        .target_of(&bag)
        .unwrap()
        .unwrap();
    let names: Vec<String> = layout
        .accessor("names")
        .unwrap()
        .null_terminated(&b)
        .unwrap()
        .map(|s| s.unwrap().get_string(0).unwrap())
        .collect();
    let name_at = link(&decls, "tl_name_at");
    for (i, s) in names.iter().enumerate() {
        let c = call(&name_at, &[Value::I32(i as i32)]);
        assert_eq!(c_string(&decls, "tl_name_at", &c).as_ref(), Some(s));
    }
    // `struct tl_node **nodes`: each element a node, the same nodes as the list from `first`.
    let nodes: Vec<MemorySegment<'_>> = layout
        .accessor("nodes")
        .unwrap()
        .null_terminated(&b)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let count = layout.accessor("count").unwrap().get(&b).unwrap();
    assert_eq!(Value::I32(nodes.len() as i32), count);
    let (next, value) = (
        node.accessor("next").unwrap(),
        node.accessor("value").unwrap(),
    );
    let mut at = layout.accessor("first").unwrap().get_target(&b).unwrap();
    for n in &nodes {
        let this = at.expect("as many list nodes as array elements");
        assert_eq!(
            (n.address(), n.byte_size()),
            (this.address(), node.byte_size())
        );
        assert_eq!(value.get(n).unwrap(), value.get(&this).unwrap());
        at = next.get_target(&this).unwrap();
    }
    assert!(at.is_none());
    // `unsigned char *` is bytes, not a string: a 1-byte target.
    let bytes = layout
        .accessor("bytes")
        .unwrap()
        .get_target(&b)
        .unwrap()
        .unwrap();
    assert_eq!((bytes.byte_size(), bytes.get::<u8>(0).unwrap()), (1, 0));
    assert!(bytes.get::<u8>(1).is_err());
    call(&link(&decls, "tl_bag_free"), &[bag]);
}

/// The sum of the keys of the tree at `t`, checking every child's parent pointer.
fn key_sum(tree: &MemoryLayout, t: Option<MemorySegment<'_>>, parent: usize, depth: i32) -> i32 {
    let Some(t) = t else { return 0 };
    let get = |path: &str| tree.accessor(path).unwrap();
    let up = get("up.parent").get_target(&t).unwrap();
    assert_eq!(up.map_or(0, |p| p.address()), parent);
    assert_eq!(get("up.depth").get(&t).unwrap(), Value::I32(depth));
    let key = get("key").get(&t).unwrap().as_i32().unwrap();
    let left = get("left").get_target(&t).unwrap();
    let right = get("right").get_target(&t).unwrap();
    key + key_sum(tree, left, t.address(), depth + 1) + key_sum(tree, right, t.address(), depth + 1)
}

#[test]
fn a_tree_with_parent_pointers_in_an_anonymous_member() {
    let decls = declarations();
    let tree = decls.layout("tl_tree").unwrap();
    for height in [1, 4] {
        let t = call(&link(&decls, "tl_tree_new"), &[Value::I32(height)]);
        let root = returned(&decls, "tl_tree_new").target_of(&t).unwrap();
        let sum = key_sum(tree, root, 0, 0);
        assert_eq!(
            call(&link(&decls, "tl_tree_key_sum"), &[t]),
            Value::I32(sum)
        );
        call(&link(&decls, "tl_tree_free"), &[t]);
    }
}

#[test]
fn walking_allocates_nothing() {
    let decls = declarations();
    let list = call(&link(&decls, "tl_list"), &[Value::I32(50)]);
    let names = call(&link(&decls, "tl_names"), &[]);
    let node = decls.layout("struct tl_node").unwrap();
    let (value, label, next) = (
        node.accessor("value").unwrap(),
        node.accessor("label").unwrap(),
        node.accessor("next").unwrap(),
    );
    let (list_layout, names_layout) = (returned(&decls, "tl_list"), returned(&decls, "tl_names"));
    let ((sum, bytes, strings), allocated) = allocations(|| {
        let (mut sum, mut bytes, mut strings) = (0, 0, 0);
        let mut at = list_layout.target_of(&list).unwrap();
        while let Some(this) = at {
            sum += value.get(&this).unwrap().as_i32().unwrap();
            bytes += label.get_target(&this).unwrap().unwrap().byte_size();
            at = next.get_target(&this).unwrap();
        }
        for s in names_layout.null_terminated(&names).unwrap() {
            strings += s.unwrap().byte_size();
        }
        (sum, bytes, strings)
    });
    assert_eq!(allocated, 0);
    assert_eq!(Value::I32(sum), call(&link(&decls, "tl_list_sum"), &[list]));
    // "node 0" .. "node 49" with their NULs; the names with theirs.
    assert_eq!(
        bytes,
        (0..50)
            .map(|i| format!("node {i}").len() + 1)
            .sum::<usize>()
    );
    assert!(strings > 0);
    call(&link(&decls, "tl_list_free"), &[list]);
}

/// glibc's `getaddrinfo` hint and flag values (`AF_INET`, `AI_CANONNAME`, `AI_NUMERICHOST`).
const AF_INET: i32 = 2; // macro constant
const AI_CANONNAME: i32 = 0x0002; // macro constant
const AI_NUMERICHOST: i32 = 0x0004; // macro constant

#[test]
fn getaddrinfo_results_are_walked_over_ai_next() {
    // SAFETY: the trust step. getaddrinfo stores in `*res` a list whose nodes, `ai_addr`
    // (`ai_addrlen` bytes, at least a `struct sockaddr`) and `ai_canonname` (a C string) stay
    // valid until `freeaddrinfo`, which is called after the last segment read from them is used.
    let mut decls = unsafe { Declarations::with_pointer_targets() };
    let options = HeaderOptions {
        compiler: Some(gatun_test_natives::CC.into()),
        ..HeaderOptions::default()
    };
    decls
        .add_headers(["netdb.h", "netinet/in.h"], &options)
        .unwrap_or_else(|e| panic!("netdb.h: {e}"));
    // SAFETY: the system C library has sound initialisers.
    let libc = unsafe { SymbolLookup::library("libc.so.6") }.unwrap();
    let getaddrinfo = decls.link(&libc, "getaddrinfo").unwrap();
    let freeaddrinfo = decls.link(&libc, "freeaddrinfo").unwrap();
    let addrinfo = decls.layout("struct addrinfo").unwrap();
    let sockaddr_in = decls.layout("struct sockaddr_in").unwrap();
    let sockaddr = decls.layout("struct sockaddr").unwrap();
    let get = |path: &str| addrinfo.accessor(path).unwrap();

    let arena = Arena::confined();
    let resolve = |host: &str, flags: i32| {
        let hints = arena.allocate_layout(addrinfo).unwrap();
        get("ai_family").set(&hints, AF_INET).unwrap();
        get("ai_flags").set(&hints, flags).unwrap();
        let name = arena.allocate_c_string(host).unwrap();
        // `struct addrinfo **res`: a slot of the parameter's target, `struct addrinfo *`.
        let res_layout = decls
            .function("getaddrinfo")
            .unwrap()
            .descriptor
            .argument_layouts()[3]
            .as_value()
            .and_then(ValueLayout::target)
            .and_then(MemoryLayout::as_value)
            .cloned()
            .unwrap();
        let res = arena
            .allocate_layout(&MemoryLayout::from(res_layout.clone()))
            .unwrap();
        let args = [
            Value::Segment(name),
            Value::Address(std::ptr::null_mut()),
            Value::Segment(hints),
            Value::Segment(res),
        ];
        // SAFETY: a C string, no service, valid hints and a pointer-sized out slot.
        let status = unsafe { getaddrinfo.invoke(&args) }.unwrap();
        (status, res, res_layout)
    };
    let (mut status, mut res, mut res_layout) = resolve("localhost", AI_CANONNAME);
    let mut host = "localhost";
    if status != Value::I32(0) {
        eprintln!("localhost does not resolve here ({status:?}): 127.0.0.1, numerically");
        (status, res, res_layout) = resolve("127.0.0.1", AI_CANONNAME | AI_NUMERICHOST);
        host = "127.0.0.1";
    }
    assert_eq!(status, Value::I32(0));

    let mut addresses = BTreeSet::new();
    let mut nodes = 0;
    let mut at = res.get_target(&res_layout, 0).unwrap();
    let first = at.map(|s| s.address());
    while let Some(node) = at {
        nodes += 1;
        assert_eq!(node.byte_size(), addrinfo.byte_size());
        assert_eq!(get("ai_family").get(&node).unwrap(), Value::I32(AF_INET));
        let len = get("ai_addrlen").get(&node).unwrap().as_usize().unwrap();
        assert_eq!(len, sockaddr_in.byte_size());
        let addr = get("ai_addr")
            .get_target(&node)
            .unwrap()
            .expect("an address");
        assert_eq!(addr.byte_size(), sockaddr.byte_size());
        let family = sockaddr.accessor("sa_family").unwrap().get(&addr).unwrap();
        assert_eq!(family.as_i32(), Some(AF_INET));
        // `struct sockaddr_in` is as large as `struct sockaddr`: read it from the same bytes.
        let sin_addr = sockaddr_in.accessor("sin_addr.s_addr").unwrap();
        let ip = sin_addr.get(&addr).unwrap().as_u32().unwrap();
        addresses.insert(Ipv4Addr::from(u32::from_be(ip)));
        // AI_CANONNAME: the first node carries the canonical name, a C string.
        let canon = get("ai_canonname").get_target(&node).unwrap();
        if Some(node.address()) == first {
            let canon = canon.expect("a canonical name on the first node");
            assert_eq!(canon.get_string(0).unwrap(), host);
        }
        at = get("ai_next").get_target(&node).unwrap();
    }
    assert!(nodes >= 1);
    let std_view: BTreeSet<Ipv4Addr> = (host, 0)
        .to_socket_addrs()
        .unwrap()
        .filter_map(|a| match a.ip() {
            std::net::IpAddr::V4(v4) => Some(v4),
            std::net::IpAddr::V6(_) => None,
        })
        .collect();
    assert_eq!(addresses, std_view);
    // SAFETY: the list getaddrinfo returned, freed once; no segment read from it is used after.
    let freed = unsafe { freeaddrinfo.invoke(&[res.get_value(&res_layout, 0).unwrap()]) };
    assert_eq!(freed.unwrap(), Value::Void);
}
