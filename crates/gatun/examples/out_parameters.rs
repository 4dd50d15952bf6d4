//! Out-parameters: `int *` and `char **` filled in by C, read back without pointer arithmetic.
//!
//! `cargo run -p gatun --example out_parameters` prints:
//! ```text
//! frexp(48) = 0.75 * 2^6
//! strtol("42 apples") = 42, rest " apples"
//! ```

use std::error::Error;
use std::ffi::c_void;

use gatun::cdecl::Declarations;
use gatun::linker::{Linker, SymbolLookup};
use gatun::memory::{Arena, SegmentAllocator};
use gatun::{DowncallHandle, Value};

/// Runs the example and returns what it prints.
pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::parse(
        "double frexp(double x, int *exp);
         long strtol(const char *s, char **end, int base);",
    )?;
    // SAFETY: loading the C math library runs no initialisers with preconditions.
    let lookup = unsafe { SymbolLookup::library("libm.so.6") }?.or(SymbolLookup::default_lookup());
    let link = |name: &str| -> gatun::Result<DowncallHandle> {
        let f = decls.function(name).expect("declared above");
        Linker::native().downcall(&lookup.find(name)?, &f.descriptor, &[])
    };
    let (frexp, strtol) = (link("frexp")?, link("strtol")?);
    let arena = Arena::confined();

    // `int *exp`: a segment holding one int; C writes it, Rust reads it after the call.
    let exp = arena.allocate_from(0_i32)?;
    let text = arena.allocate_c_string("42 apples")?;
    // `char **end`: a segment holding one pointer, which strtol points into `text`.
    let end = arena.allocate_from(std::ptr::null_mut::<c_void>())?;
    // SAFETY: the prototypes above are the functions' real ones; `exp` and `end` have room for
    // an int and a pointer, `text` is a NUL-terminated string; all live in `arena`.
    let (mantissa, n, rest) = unsafe {
        let mantissa = frexp.invoke(&[48.0.into(), exp.into()])?;
        let n = strtol.invoke(&[text.into(), end.into(), 10.into()])?;
        // The pointer strtol stored points into `text`, which is still alive.
        (
            mantissa,
            n,
            Value::from(end.get_address(0)?).read_c_string()?,
        )
    };
    Ok(format!(
        "frexp(48) = {} * 2^{}\nstrtol(\"42 apples\") = {}, rest {rest:?}\n",
        mantissa.as_f64().unwrap_or(f64::NAN),
        exp.get::<i32>(0)?,
        n.as_i64().unwrap_or(0),
    ))
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
