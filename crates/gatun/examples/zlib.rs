//! zlib through `zlib.h` (header mode): `crc32`, and a `compress2` / `uncompress` round trip
//! whose `uLongf *destLen` in/out-parameters are segments holding a number.
//!
//! `cargo run -p gatun --example zlib` prints:
//! ```text
//! crc32("hello") = 907060870
//! 1000 bytes -> compressed smaller: true -> uncompressed equal: true
//! ```

use std::error::Error;

use gatun::cdecl::{Declarations, HeaderOptions};
use gatun::linker::SymbolLookup;
use gatun::memory::{Arena, SegmentAllocator};

/// Runs the example and returns what it prints.
pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::from_headers(["zlib.h"], &HeaderOptions::default())?;
    // SAFETY: loading zlib runs no initialisers with preconditions.
    let libz = unsafe { SymbolLookup::library("libz.so.1") }?;
    let (crc32, bound) = (
        decls.link(&libz, "crc32")?,
        decls.link(&libz, "compressBound")?,
    );
    let (compress2, uncompress) = (
        decls.link(&libz, "compress2")?,
        decls.link(&libz, "uncompress")?,
    );
    // zlib.h's macros: Z_OK is 0, Z_BEST_COMPRESSION 9 (both `int`).
    let constant = |name: &'static str| decls.constant(name).and_then(|c| c.to_value()).ok_or(name);
    let (z_ok, best) = (constant("Z_OK")?, constant("Z_BEST_COMPRESSION")?);
    let arena = Arena::confined();
    let hello = arena.allocate_from_bytes(b"hello")?;
    let input: Vec<u8> = (0..1000u32).map(|i| (i % 7) as u8 + b'a').collect();
    let src = arena.allocate_from_bytes(&input)?;
    let n = input.len() as u64;
    // SAFETY: the prototypes come from zlib.h; every buffer is a live segment of at least the
    // length passed with it, and each `uLongf *` points to a `u64` (uLong on LP64).
    let (crc, smaller, back) = unsafe {
        let crc = crc32.invoke(&[0u64.into(), hello.into(), 5u32.into()])?;
        let cap = bound.invoke(&[n.into()])?.as_u64().unwrap_or(0);
        let packed = arena.allocate(cap as usize, 1)?;
        let packed_len = arena.allocate_from(cap)?; // in: capacity, out: compressed size
        compress2.invoke(&[packed.into(), packed_len.into(), src.into(), n.into(), best])?;
        let size = packed_len.get::<u64>(0)?;
        let out = arena.allocate(input.len(), 1)?;
        let out_len = arena.allocate_from(n)?;
        let rc = uncompress.invoke(&[out.into(), out_len.into(), packed.into(), size.into()])?;
        assert_eq!(rc, z_ok, "Z_OK");
        (
            crc,
            size < n,
            out.slice(0, out_len.get::<u64>(0)? as usize)?.to_vec(),
        )
    };
    Ok(format!(
        "crc32(\"hello\") = {crc}\n{n} bytes -> compressed smaller: {smaller} -> uncompressed equal: {}\n",
        back == input
    ))
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
