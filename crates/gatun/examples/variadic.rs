//! A variadic call: `snprintf(buf, n, "%d|%.2f|%s", 42, 1.5, "hi")`. The descriptor lists the
//! fixed parameters and the promoted types of this call's variadic arguments; where the
//! variadic part starts is the `FirstVariadicArg` option.
//!
//! `cargo run -p gatun --example variadic` prints:
//! ```text
//! 10 characters: "42|1.50|hi"
//! ```

use std::error::Error;

use gatun::cdecl::Declarations;
use gatun::linker::{Linker, LinkerOption, SymbolLookup};
use gatun::memory::{Arena, SegmentAllocator};
use gatun::ValueLayout;

/// Runs the example and returns what it prints.
pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::parse("int snprintf(char *buf, size_t n, const char *fmt, ...);")?;
    let snprintf = decls.function("snprintf").expect("declared above");
    let fixed = snprintf.variadic.expect("snprintf is variadic");
    // This call passes an int, a double and a string after the fixed parameters.
    let descriptor = snprintf.descriptor.append_argument_layouts([
        ValueLayout::I32,
        ValueLayout::F64,
        ValueLayout::ADDRESS,
    ]);
    let handle = Linker::native().downcall(
        &SymbolLookup::default_lookup().find("snprintf")?,
        &descriptor,
        &[LinkerOption::FirstVariadicArg(fixed)],
    )?;
    let arena = Arena::confined();
    let buf = arena.allocate(32, 1)?;
    let fmt = arena.allocate_c_string("%d|%.2f|%s")?;
    let hi = arena.allocate_c_string("hi")?;
    // SAFETY: the descriptor matches the format string; `buf` has the 32 bytes passed as `n`.
    let n = unsafe {
        handle.invoke(&[
            buf.into(),
            32_u64.into(),
            fmt.into(),
            42.into(),
            1.5.into(),
            hi.into(),
        ])
    }?;
    Ok(format!(
        "{} characters: {:?}\n",
        n.as_i32().unwrap_or(-1),
        buf.get_string(0)?
    ))
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
