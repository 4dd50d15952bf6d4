//! libexpat through `expat.h`: a parser whose start and end element handlers are Rust
//! closures. With pointer targets, the handlers read the element name (`const XML_Char *`, a
//! C string) and the attributes (`const XML_Char **atts`: name, value, ..., NULL) through the
//! header's own types: no raw pointer and no `unsafe` inside them.
//!
//! `cargo run -p gatun --example expat` prints:
//! ```text
//! <library> at depth 1
//!   <book id="1" lang="en"> at depth 2
//!   </book>
//!   <book id="2"> at depth 2
//!     <title> at depth 3
//!     </title>
//!   </book>
//! </library>
//! XML_Parse: XML_STATUS_OK
//! <a> at depth 1
//! "<a></b>": error "mismatched tag" at line 1
//! ```
use gatun::cdecl::{Declarations, HeaderOptions, Library};
use gatun::{linker::SymbolLookup, memory::*, Linker, MemoryLayout, Value, ValueLayout};
use std::{cell::Cell, cell::RefCell, error::Error};

pub fn run() -> Result<String, Box<dyn Error>> {
    // SAFETY: the trust step. Expat passes the handlers a C string for the name and a
    // NULL-terminated array of C strings for the attributes, valid during the handler call;
    // `XML_ErrorString` returns a static C string. Nothing else is read through a target.
    let mut decls = unsafe { Declarations::with_pointer_targets() };
    decls.add_headers(["expat.h"], &HeaderOptions::default())?;
    let constant = |name: &'static str| decls.constant(name).and_then(|c| c.to_value()).ok_or(name);
    // `XML_TRUE` is `((XML_Bool)1)`, an `unsigned char`: passed for `int isFinal` as it is.
    let (status_ok, is_final) = (constant("XML_STATUS_OK")?, constant("XML_TRUE")?);
    let (start_handler, end_handler) = (
        decls.function_pointer("XML_StartElementHandler")?,
        decls.function_pointer("XML_EndElementHandler")?,
    );
    // SAFETY: loading libexpat runs no initialiser with preconditions.
    let expat = Library::new(unsafe { SymbolLookup::library("libexpat.so.1") }?, decls);
    let f = |name: &str| expat.function(name); // linked on first use, then kept

    let (arena, out, depth) = (Arena::confined(), RefCell::new(String::new()), Cell::new(0));
    let start = Linker::native().upcall_stub_confined(
        &start_handler,
        |args| {
            let params = args.descriptor().argument_layouts(); // with the header's targets
            let name = string(params.get(1), &args[1])?;
            // `atts`: name, value, name, value, ..., NULL, each a segment over a C string.
            let atts = pointer(params.get(2)).null_terminated(&args[2])?;
            let atts: Vec<String> = atts.map(|s| s?.get_string(0)).collect::<Result<_, _>>()?;
            let atts: String = atts
                .chunks(2)
                .map(|a| format!(" {}=\"{}\"", a[0], a[1]))
                .collect();
            let indent = 2 * depth.get();
            depth.set(depth.get() + 1);
            *out.borrow_mut() +=
                &format!("{:indent$}<{name}{atts}> at depth {}\n", "", depth.get());
            Ok(Value::Void)
        },
        &arena,
    )?;
    let end = Linker::native().upcall_stub_confined(
        &end_handler,
        |args| {
            depth.set(depth.get() - 1);
            let name = string(args.descriptor().argument_layouts().get(1), &args[1])?;
            *out.borrow_mut() += &format!("{:1$}</{name}>\n", "", 2 * depth.get());
            Ok(Value::Void)
        },
        &arena,
    )?;

    let null = Value::from(MemorySegment::NULL);
    let document = r#"<library><book id="1" lang="en"/><book id="2"><title/></book></library>"#;
    for doc in [document, "<a></b>"] {
        let xml = arena.allocate_c_string(doc)?;
        // SAFETY: the calls match expat.h; the handlers have the types `XML_SetElementHandler`
        // takes and outlive the parser; `xml` holds `doc.len()` bytes.
        unsafe {
            let parser = f("XML_ParserCreate")?.invoke(&[null])?;
            let handlers = [parser, start.as_value(), end.as_value()];
            f("XML_SetElementHandler")?.invoke(&handlers)?;
            let parsed =
                f("XML_Parse")?.invoke(&[parser, xml.into(), doc.len().into(), is_final])?;
            if parsed.as_i64() == status_ok.as_i64() {
                *out.borrow_mut() += "XML_Parse: XML_STATUS_OK\n";
            } else {
                let code = f("XML_GetErrorCode")?.invoke(&[parser])?;
                let error_string = f("XML_ErrorString")?;
                let message = error_string.invoke(&[code])?;
                let message = string(error_string.descriptor().return_layout(), &message)?;
                let at = f("XML_GetCurrentLineNumber")?.invoke(&[parser])?;
                *out.borrow_mut() += &format!("{doc:?}: error {message:?} at line {at}\n");
            }
            f("XML_ParserFree")?.invoke(&[parser])?;
        }
    }
    Ok(out.take())
}

/// A pointer parameter's or result's declared layout, with the target the trust step gave it.
fn pointer(layout: Option<&MemoryLayout>) -> &ValueLayout {
    layout
        .and_then(MemoryLayout::as_value)
        .unwrap_or(&ValueLayout::ADDRESS)
}

/// The C string `p` designates through its declared `layout` (NULL is an error).
fn string(layout: Option<&MemoryLayout>, p: &Value) -> gatun::Result<String> {
    pointer(layout)
        .target_of(p)?
        .unwrap_or(MemorySegment::NULL)
        .get_string(0)
}

fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
