//! An upcall typed from a header: `qsort`'s comparator descriptor comes from `stdlib.h`
//! (`Declarations::callback("qsort", 3)`, parameter index 3 counting from 0), so the Rust
//! closure gets exactly the C type `int (*)(const void *, const void *)`.
//!
//! `cargo run -p gatun --example upcall_from_header` prints:
//! ```text
//! comparator (ptr, ptr)i32, sorted: [-2, 1, 1, 3, 4, 5]
//! ```

use std::error::Error;

use gatun::cdecl::{Declarations, HeaderOptions};
use gatun::linker::SymbolLookup;
use gatun::memory::{Arena, SegmentAllocator};
use gatun::{Linker, Value};

/// Runs the example and returns what it prints.
pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::from_headers(["stdlib.h"], &HeaderOptions::default())?;
    let qsort = decls.link(&SymbolLookup::default_lookup(), "qsort")?;
    let compare = decls.callback("qsort", 3)?;
    let arena = Arena::confined();
    let cmp = Linker::native().upcall_stub(
        &compare,
        |args| {
            // SAFETY: qsort passes two pointers into the int array being sorted.
            let (a, b) = unsafe {
                (
                    *args.address(0)?.cast::<i32>(),
                    *args.address(1)?.cast::<i32>(),
                )
            };
            Ok(Value::I32(a.cmp(&b) as i32))
        },
        &arena,
    )?;
    let ints = arena.allocate_from_slice(&[3, 1, 4, 1, 5, -2])?;
    // SAFETY: qsort(base, 6 elements, 4 bytes each, an int comparator that outlives the call).
    unsafe { qsort.invoke(&[ints.into(), 6u64.into(), 4u64.into(), cmp.as_value()]) }?;
    let sorted: Vec<i32> = (0..6)
        .map(|i| ints.get::<i32>(4 * i))
        .collect::<gatun::Result<_>>()?;
    Ok(format!("comparator {compare}, sorted: {sorted:?}\n"))
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
