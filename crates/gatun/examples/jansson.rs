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
//! json_decref: refcounts [1, 1], each then json_delete
//! json_loads("{\"answer\": }"): NULL true, error "unexpected token near '}'" at line 1, column 12
//! ```
use gatun::cdecl::{Declarations, HeaderOptions};
use gatun::{linker::*, memory::*, MemoryLayout, Value, ValueLayout as V};
use std::error::Error;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub fn run() -> Result<String> {
    // SAFETY: the trust step. The `json_t *` jansson returns point to live values (until their
    // count drops to 0), `json_string_value` to a C string owned by its value.
    let mut decls = unsafe { Declarations::with_pointer_targets() };
    decls.add_headers(["jansson.h", "stdlib.h"], &HeaderOptions::default())?;
    // SAFETY: loading jansson runs no initialiser with preconditions.
    let lib = unsafe { SymbolLookup::library("libjansson.so.4") }?;
    let link = |name: &str| decls.link(&lib, name); // each function linked once, here
    let (dumps, loads, delete) = (
        link("json_dumps")?,
        link("json_loads")?,
        link("json_delete")?,
    );
    let (object_get, array_get) = (link("json_object_get")?, link("json_array_get")?);
    let (integer_value, string_value) = (link("json_integer_value")?, link("json_string_value")?);
    let free = decls.link(&SymbolLookup::default_lookup(), "free")?;
    // json_pack("{s:i, s:s, s:[i,i]}", ...), linked for the layouts of this call's arguments.
    let varargs = [
        V::ADDRESS,
        V::I32,
        V::ADDRESS,
        V::ADDRESS,
        V::ADDRESS,
        V::I32,
        V::I32,
    ];
    let pack = decls.link_variadic(&lib, "json_pack", &varargs.map(MemoryLayout::from))?;
    let constant = |name: &str| decls.constant_i64(name).ok_or(format!("no {name}"));
    // TODO(link_with): pass the `int` result for `size_t flags` once integer arguments convert.
    let flags = Value::U64((constant("JSON_SORT_KEYS")? | constant("JSON_COMPACT")?).try_into()?);

    let arena = Arena::confined();
    let text = |s: &str| arena.allocate_c_string(s).map(Value::from);
    let refcount = decls.try_layout("json_t")?.accessor("refcount")?;
    let mut counts = Vec::new();
    // json_decref: `(size_t)-1` marks a value that is never freed. (The header decrements
    // atomically; this program has one thread, so a plain read and write do.)
    let mut decref = |json: MemorySegment| -> Result<()> {
        let count = refcount.get(&json)?.as_u64().ok_or("size_t")?;
        if count != u64::MAX {
            refcount.set(&json, count - 1)?;
            counts.push(count);
            if count == 1 {
                // SAFETY: the count reached 0: nothing refers to the value any more.
                unsafe { delete.invoke(&[json.into()]) }?;
            }
        }
        Ok(())
    };
    let error_t = decls.try_layout("json_error_t")?;
    let error = arena.allocate_layout(error_t)?;

    // SAFETY: the calls match jansson.h; the format's conversions match pack's arguments;
    // `json_dumps`' result is freed once, with `free`; the values read live until `decref`.
    let mut out = unsafe {
        let (answer, name, pair) = (text("answer")?, text("name")?, text("pair")?);
        let format = text("{s:i, s:s, s:[i,i]}")?;
        let args = [
            format,
            answer,
            42.into(),
            name,
            text("gatun")?,
            pair,
            1.into(),
            2.into(),
        ];
        let packed = target(&pack, pack.invoke(&args)?)?;
        let dumped = dumps.invoke(&[packed.into(), flags])?;
        let dumped_text = target(&dumps, dumped)?.get_string(0)?;
        free.invoke(&[dumped])?;
        decref(packed)?;

        let parsed = loads.invoke(&[text(&dumped_text)?, Value::U64(0), error.into()])?;
        let parsed = target(&loads, parsed)?;
        let member =
            |key| -> Result<_> { target(&object_get, object_get.invoke(&[parsed.into(), key])?) };
        let answer = integer_value.invoke(&[member(answer)?.into()])?;
        let name = target(&string_value, string_value.invoke(&[member(name)?.into()])?)?;
        let name = name.get_string(0)?; // before `decref` frees it
        let mut items = Vec::new();
        for k in 0..2_u64 {
            let item = target(
                &array_get,
                array_get.invoke(&[member(pair)?.into(), k.into()])?,
            )?;
            items.push(integer_value.invoke(&[item.into()])?.to_string());
        }
        decref(parsed)?;
        format!(
            "json_dumps: {dumped_text}\njson_loads: answer {answer}, name {:?}, pair [{}]\n",
            name,
            items.join(", ")
        )
    };
    out += &format!("json_decref: refcounts {counts:?}, each then json_delete\n");

    let bad = "{\"answer\": }";
    // SAFETY: a C string and a `json_error_t` to fill.
    let failed = unsafe { loads.invoke(&[text(bad)?, Value::U64(0), error.into()]) }?;
    let at = |member: &str| error_t.accessor(member)?.get(&error);
    let message = error.get_string(error_t.byte_offset_of("text")?)?;
    out += &format!(
        "json_loads({bad:?}): NULL {}, error {message:?} at line {}, column {}\n",
        failed.as_address().is_some_and(|p| p.is_null()),
        at("line")?,
        at("column")?
    );
    Ok(out)
}

/// What the pointer `v`, a result of `f`, points to, through `f`'s declared return type.
fn target<'b>(f: &DowncallHandle, v: Value) -> Result<MemorySegment<'b>> {
    let layout = f
        .descriptor()
        .return_layout()
        .and_then(MemoryLayout::as_value);
    Ok(layout.ok_or("a pointer")?.target_of(&v)?.ok_or("NULL")?)
}

fn main() -> Result<()> {
    print!("{}", run()?);
    Ok(())
}
