//! A struct returned by value: `div_t div(int, int)` through `invoke_into`, which writes the
//! result into a segment from the given allocator; its members read by name with accessors
//! resolved once.
//!
//! `cargo run -p gatun --example invoke_into` prints:
//! ```text
//! div(17, 5) = 3 remainder 2
//! div(-17, 5) = -3 remainder -2
//! ```

use std::error::Error;

use gatun::cdecl::Declarations;
use gatun::linker::{Linker, SymbolLookup};
use gatun::memory::Arena;

/// Runs the example and returns what it prints.
pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::parse(
        "typedef struct { int quot; int rem; } div_t;
         div_t div(int numer, int denom);",
    )?;
    let div_t = decls.layout("div_t").expect("declared above");
    let (quot, rem) = (div_t.accessor("quot")?, div_t.accessor("rem")?);
    let div = Linker::native().downcall(
        &SymbolLookup::default_lookup().find("div")?,
        &decls.function("div").expect("declared above").descriptor,
        &[],
    )?;
    let arena = Arena::confined();
    let mut out = String::new();
    for (n, d) in [(17, 5), (-17, 5)] {
        // SAFETY: `div` has this prototype and no preconditions for a non-zero divisor.
        let result = unsafe { div.invoke_into(&arena, &[n.into(), d.into()]) }?;
        let seg = result.as_segment().expect("a struct result is a segment");
        out += &format!(
            "div({n}, {d}) = {} remainder {}\n",
            quot.get(&seg)?,
            rem.get(&seg)?
        );
    }
    Ok(out)
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
