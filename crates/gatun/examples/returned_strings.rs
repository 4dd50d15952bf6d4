//! `char *` results: read into a `String` (or borrowed as a `&CStr`) with one call.
//!
//! `cargo run -p gatun --example returned_strings` prints:
//! ```text
//! strerror(2) = "No such file or directory"
//! strstr = "world"
//! getenv = NULL
//! ```

use std::error::Error;

use gatun::cdecl::Declarations;
use gatun::linker::{Linker, SymbolLookup};
use gatun::memory::{Arena, SegmentAllocator};
use gatun::DowncallHandle;

/// Runs the example and returns what it prints.
pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::parse(
        "char *strerror(int errnum);
         char *strstr(const char *haystack, const char *needle);
         char *getenv(const char *name);",
    )?;
    let libc = SymbolLookup::default_lookup();
    let link = |name: &str| -> gatun::Result<DowncallHandle> {
        let f = decls.function(name).expect("declared above");
        Linker::native().downcall(&libc.find(name)?, &f.descriptor, &[])
    };
    let arena = Arena::confined();
    let hello = arena.allocate_c_string("hello world")?;
    let world = arena.allocate_c_string("world")?;
    let unset = arena.allocate_c_string("GATUN_EXAMPLE_SURELY_UNSET")?;
    let mut out = String::new();
    // SAFETY: the prototypes are the real ones; every argument is a live NUL-terminated
    // string; the results are NUL-terminated strings (or NULL), read before anything could
    // change them (strerror's buffer, `hello`).
    unsafe {
        let e = link("strerror")?.invoke(&[2.into()])?;
        out += &format!("strerror(2) = {:?}\n", e.read_c_string()?);
        let found = link("strstr")?.invoke(&[hello.into(), world.into()])?;
        out += &format!("strstr = {:?}\n", found.as_c_str()?.to_str()?);
        let none = link("getenv")?.invoke(&[unset.into()])?;
        match none.as_address() {
            Some(p) if p.is_null() => out += "getenv = NULL\n",
            _ => out += &format!("getenv = {:?}\n", none.read_c_string()?),
        }
    }
    Ok(out)
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
