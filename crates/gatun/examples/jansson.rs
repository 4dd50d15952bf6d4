//! jansson through `jansson.h`: an object built by the variadic `json_pack`, dumped with
//! `JSON_SORT_KEYS | JSON_COMPACT`, parsed back by `json_loads` and read member by member, a
//! parse error read from `json_error_t`. `json_decref` is `static inline` in the header (no
//! library exports it), so `decref` below does what its body does: it reads the reference
//! count through `json_t`'s layout and calls the exported `json_delete` when it drops to 0.
//!
//! `cargo run -p gatun --example jansson` prints:
//! ```text
//! json_dumps: {"answer":42,"name":"gatun","pair":[1,2]}
//! json_loads: answer 42, name "gatun", pair [1, 2]
//! decref: refcount 1 -> json_delete, twice
//! json_loads("{\"answer\": }"): error "unexpected token" at line 1, column 11
//! ```
use gatun::cdecl::{Declarations, HeaderOptions};
use gatun::{linker::*, memory::*, MemoryLayout, Value};
use std::{error::Error, ffi::c_void};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub fn run() -> Result<String> {
    // SAFETY: the trust step. The `json_t *` jansson returns point to live values (until their
    // count drops to 0), `json_string_value` to a C string owned by its value.
    let mut decls = unsafe { Declarations::with_pointer_targets() };
    decls.add_headers(["jansson.h", "stdlib.h"], &HeaderOptions::default())?;
    // SAFETY: loading jansson runs no initialiser with preconditions.
    let lib = unsafe { SymbolLookup::library("libjansson.so.4") }?;
    let link = |name: &str| decls.link(&lib, name); // each function linked once, here
    let (dumps, loads, delete) = (link("json_dumps")?, link("json_loads")?, link("json_delete")?);
    let (get, integer) = (link("json_object_get")?, link("json_integer_value")?);
    let (string, array_get) = (link("json_string_value")?, link("json_array_get")?);
    let free = decls.link(&SymbolLookup::default_lookup(), "free")?;
    let (s, i) = (MemoryLayout::from(gatun::ValueLayout::ADDRESS), MemoryLayout::from(gatun::ValueLayout::I32));
    // json_pack("{s:i, s:s, s:[i,i]}", ...): linked for this call's variadic arguments.
    let pack = decls.link_variadic(&lib, "json_pack", &[s.clone(), i.clone(), s.clone(), s.clone(), s, i.clone(), i])?;
    // TODO(macros): JSON_SORT_KEYS | JSON_COMPACT
    let flags = Value::U64(0x80 | 0x20);

    let arena = Arena::confined();
    let text = |s: &str| arena.allocate_c_string(s).map(Value::from);
    let json_t = decls.try_layout("json_t")?;
    let refcount = json_t.accessor("refcount")?;
    let mut counts = Vec::new();
    let mut decref = |v: MemorySegment| -> Result<()> {
        let count = refcount.get(&v)?.as_u64().ok_or("size_t")?;
        if count != u64::MAX { // (size_t)-1: a value that is never freed
            refcount.set(&v, count - 1)?;
            counts.push(count);
            // SAFETY: the count reached 0: nothing else refers to the value.
            if count == 1 { unsafe { delete.invoke(&[v.into()]) }?; }
        }
        Ok(())
    };
    let error = arena.allocate_layout(decls.try_layout("json_error_t")?)?;
    let error_layout = decls.try_layout("json_error_t")?;

    // SAFETY: the calls match jansson.h; the format's conversions match pack's arguments;
    // `json_dumps`' result is freed once with `free`; the values read live until `decref`.
    let mut out = unsafe {
        let format = text("{s:i, s:s, s:[i,i]}")?;
        let args = [format, text("answer")?, 42.into(), text("name")?, text("gatun")?, text("pair")?, 1.into(), 2.into()];
        let packed = target(&pack, pack.invoke(&args)?)?;
        let dumped = dumps.invoke(&[packed.into(), flags])?;
        let dumped_text = target(&dumps, dumped)?.get_string(0)?;
        free.invoke(&[dumped])?;
        decref(packed)?;

        let parsed = target(&loads, loads.invoke(&[text(&dumped_text)?, Value::U64(0), error.into()])?)?;
        let member = |key: &str| -> Result<MemorySegment> { Ok(target(&get, get.invoke(&[parsed.into(), text(key)?])?)?) };
        let answer = integer.invoke(&[member("answer")?.into()])?;
        let name = string.invoke(&[member("name")?.into()])?;
        let name = target(&string, name)?.get_string(0)?;
        let pair = member("pair")?;
        let pair: Vec<Value> = (0..2u64)
            .map(|k| Ok(integer.invoke(&[target(&array_get, array_get.invoke(&[pair.into(), k.into()])?)?.into()])?))
            .collect::<Result<_>>()?;
        decref(parsed)?;
        format!("json_dumps: {dumped_text}\njson_loads: answer {answer}, name {name:?}, pair [{}, {}]\n", pair[0], pair[1])
    };
    out += &format!("decref: refcounts {counts:?}\n");

    let bad = "{\"answer\": }";
    // SAFETY: a C string and a `json_error_t` to fill; the result is NULL (checked).
    let failed = unsafe { loads.invoke(&[text(bad)?, Value::U64(0), error.into()]) }?;
    let at = |member: &str| error_layout.accessor(member).and_then(|a| a.get(&error));
    let message = error.get_string(error_layout.byte_offset_of("text")?)?;
    out += &format!(
        "json_loads({bad:?}): NULL {}, error {message:?} at line {}, column {}\n",
        failed.as_address() == Some(std::ptr::null_mut::<c_void>()),
        at("line")?,
        at("column")?
    );
    Ok(out)
}

/// What the pointer `v`, a result of `f`, points to, through `f`'s declared return type.
fn target<'b>(f: &DowncallHandle, v: Value) -> Result<MemorySegment<'b>> {
    let layout = f.descriptor().return_layout().and_then(MemoryLayout::as_value);
    Ok(layout.ok_or("a pointer")?.target_of(&v)?.ok_or("NULL")?)
}

fn main() -> Result<()> {
    print!("{}", run()?);
    Ok(())
}
