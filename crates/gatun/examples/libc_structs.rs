//! glibc's structs from its own headers, with pointer targets: `getaddrinfo` with hints built
//! from the `AF_*`, `SOCK_*` and `AI_*` constants, its result list walked over `ai_next` with
//! no `unsafe` but the calls; `stat` and the file type from `S_IFMT`; `gmtime_r` and
//! `strftime` of a fixed time. No constant is written out and no raw pointer is read.
//!
//! `cargo run -p gatun --example libc_structs` prints:
//! ```text
//! getaddrinfo("localhost", AF_INET, SOCK_STREAM, 0): families {"AF_INET"}, 127.0.0.1 among them: true, canonical name None
//! getaddrinfo("::1", AF_UNSPEC, SOCK_STREAM, AI_NUMERICHOST | AI_CANONNAME): families {"AF_INET6"}, 127.0.0.1 among them: false, canonical name Some("::1")
//! stat: examples/libc_structs.rs is S_IFREG, examples is S_IFDIR
//! gmtime_r(1000000000): 2001-09-09 01:46:40 Sunday (26 characters), tm_yday 251
//! ```
use gatun::cdecl::{Declarations, HeaderOptions, Library};
use gatun::{linker::*, memory::*, MemoryLayout, Value};
use std::{collections::BTreeSet, error::Error, net::Ipv4Addr};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub fn run() -> Result<String> {
    // SAFETY: the trust step. What glibc stores or returns through the pointers these
    // declarations describe is what their types say: getaddrinfo's list (its nodes, `ai_addr`,
    // `ai_canonname`) until `freeaddrinfo`, and `gmtime_r`'s result, its own second argument.
    let mut decls = unsafe { Declarations::with_pointer_targets() };
    let headers = ["netdb.h", "sys/stat.h", "time.h"];
    decls.add_headers(headers, &HeaderOptions::default())?;
    let libc = Library::new(SymbolLookup::default_lookup(), decls); // links on first use
    let arena = Arena::confined();
    let mut out = addresses(&libc, &arena)?;
    out += &file_types(&libc, &arena)?;
    out += &time(&libc, &arena)?;
    Ok(out)
}

/// A constant of the headers (all of these are `#define`s), as a number.
fn constant(decls: &Declarations, name: &str) -> Result<i64> {
    Ok(decls.constant_i64(name).ok_or(format!("no {name}"))?)
}

/// `getaddrinfo(host, NULL, &hints, &res)`, its list walked over `ai_next`, `freeaddrinfo`.
fn addresses(libc: &Library, arena: &ConfinedArena) -> Result<String> {
    let decls = libc.declarations();
    let getaddrinfo = libc.function("getaddrinfo")?;
    let freeaddrinfo = libc.function("freeaddrinfo")?;
    let addrinfo = decls.try_layout("struct addrinfo")?;
    let get = |member: &str| addrinfo.accessor(member);
    let sockaddr_in = decls.try_layout("struct sockaddr_in")?;
    let (s_addr, next) = (sockaddr_in.accessor("sin_addr.s_addr")?, get("ai_next")?);
    let mut out = String::new();
    for (host, family, flags) in [
        ("localhost", "AF_INET", vec![]),
        ("::1", "AF_UNSPEC", vec!["AI_NUMERICHOST", "AI_CANONNAME"]),
    ] {
        let hints = arena.allocate_layout(addrinfo)?;
        get("ai_family")?.set(&hints, constant(decls, family)?)?;
        get("ai_socktype")?.set(&hints, constant(decls, "SOCK_STREAM")?)?;
        let bits = flags
            .iter()
            .map(|f| constant(decls, f))
            .sum::<Result<i64>>()?;
        get("ai_flags")?.set(&hints, bits)?;
        let name = arena.allocate_c_string(host)?;
        let res = arena.allocate_layout(&next.layout().into())?; // a `struct addrinfo *`
        let args = [
            name.into(),
            MemorySegment::NULL.into(),
            hints.into(),
            res.into(),
        ];
        // SAFETY: a host name, no service, initialised hints and a `struct addrinfo *` slot.
        let status = unsafe { getaddrinfo.invoke(&args) }?;
        if status.as_i64() != Some(0) {
            return Err(format!("getaddrinfo({host:?}) failed: {status}").into());
        }
        let (mut families, mut localhost, mut canonical) = (BTreeSet::new(), false, None);
        let mut node = res.get_target(next.layout(), 0)?;
        while let Some(n) = node {
            let family = get("ai_family")?.get(&n)?.as_i64();
            let names = ["AF_INET", "AF_INET6"].into_iter();
            families.extend(names.filter(|f| constant(decls, f).ok() == family));
            if family == Some(constant(decls, "AF_INET")?) {
                // `struct sockaddr *`, as large as the `struct sockaddr_in` it is here.
                let addr = get("ai_addr")?.get_target(&n)?.ok_or("no address")?;
                let ip = s_addr.get(&addr)?.as_u32().ok_or("in_addr_t")?;
                localhost |= Ipv4Addr::from(u32::from_be(ip)) == Ipv4Addr::LOCALHOST;
            }
            if let Some(name) = get("ai_canonname")?.get_target(&n)? {
                canonical.get_or_insert(name.get_string(0)?);
            }
            node = next.get_target(&n)?;
        }
        // SAFETY: the list getaddrinfo made, freed once, after the last segment read from it.
        unsafe { freeaddrinfo.invoke(&[res.get_address(0)?.into()]) }?;
        let flags = if flags.is_empty() {
            "0".into()
        } else {
            flags.join(" | ")
        };
        out += &format!(
            "getaddrinfo({host:?}, {family}, SOCK_STREAM, {flags}): families {families:?}, \
             127.0.0.1 among them: {localhost}, canonical name {canonical:?}\n"
        );
    }
    Ok(out)
}

/// `stat` of a file and a directory, their type from `st_mode & S_IFMT`.
fn file_types(libc: &Library, arena: &ConfinedArena) -> Result<String> {
    let decls = libc.declarations();
    let stat = libc.function("stat")?;
    let st = arena.allocate_layout(decls.try_layout("struct stat")?)?;
    let st_mode = decls.try_layout("struct stat")?.accessor("st_mode")?;
    let mut types = Vec::new();
    for path in ["examples/libc_structs.rs", "examples"] {
        let full = arena.allocate_c_string(&format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))?;
        // SAFETY: a C string and a `struct stat` to fill.
        let status = unsafe { stat.invoke(&[full.into(), st.into()]) }?;
        if status.as_i64() != Some(0) {
            return Err(format!("stat({path:?}) failed").into());
        }
        let file_type = st_mode.get(&st)?.as_i64().ok_or("st_mode")? & constant(decls, "S_IFMT")?;
        let mut names = ["S_IFREG", "S_IFDIR", "S_IFLNK"].into_iter();
        let name = names.find(|n| constant(decls, n).ok() == Some(file_type));
        types.push(format!("{path} is {}", name.unwrap_or("another type")));
    }
    Ok(format!("stat: {}\n", types.join(", ")))
}

/// `gmtime_r` of a fixed time, formatted by `strftime`.
fn time(libc: &Library, arena: &ConfinedArena) -> Result<String> {
    let decls = libc.declarations();
    let (gmtime_r, strftime) = (libc.function("gmtime_r")?, libc.function("strftime")?);
    let time_t = decls.try_layout("time_t")?.as_value().ok_or("time_t")?;
    let t = arena.allocate_layout(&time_t.into())?;
    t.set_value(time_t, 0, &Value::from_int(time_t.kind(), 1_000_000_000)?)?;
    let tm = decls.try_layout("struct tm")?;
    let (tm_seg, buf) = (arena.allocate_layout(tm)?, arena.allocate(64, 1)?);
    let format = arena.allocate_c_string("%Y-%m-%d %H:%M:%S %A")?;
    let args = [buf.into(), 64.into(), format.into(), tm_seg.into()];
    // SAFETY: a `time_t` and a `struct tm` to fill; `buf` holds the 64 bytes passed with it.
    let (result, n) = unsafe {
        (
            gmtime_r.invoke(&[t.into(), tm_seg.into()])?,
            strftime.invoke(&args)?,
        )
    };
    // The result, a `struct tm *`, read through its declared type (it is `tm_seg`).
    let result_type = gmtime_r
        .descriptor()
        .return_layout()
        .and_then(MemoryLayout::as_value);
    let result = result_type
        .ok_or("a pointer")?
        .target_of(&result)?
        .ok_or("NULL")?;
    let yday = tm.accessor("tm_yday")?.get(&result)?;
    let text = buf.get_string(0)?; // NUL-terminated by strftime
    Ok(format!(
        "gmtime_r(1000000000): {text} ({n} characters), tm_yday {yday}\n"
    ))
}

fn main() -> Result<()> {
    print!("{}", run()?);
    Ok(())
}
