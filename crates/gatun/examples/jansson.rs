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
use gatun::cdecl::{Declarations, HeaderOptions, Library};
use gatun::{linker::*, memory::*, MemoryLayout, Value, ValueLayout as V};
use std::error::Error;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub fn run() -> Result<String> {
    // SAFETY: the trust step. The `json_t *` jansson returns point to live values (until their
    // count drops to 0), `json_string_value` to a C string owned by its value.
    let mut decls = unsafe { Declarations::with_pointer_targets() };
    decls.add_headers(["jansson.h", "stdlib.h"], &HeaderOptions::default())?;
    let constant = |name: &str| decls.constant_i64(name).ok_or(format!("no {name}"));
    // `size_t flags` from two `int` macros (an integer argument converts when it fits).
    let flags = Value::from(constant("JSON_SORT_KEYS")? | constant("JSON_COMPACT")?);
    let refcount = decls.try_layout("json_t")?.accessor("refcount")?;
    let error_t = decls.try_layout("json_error_t")?.clone();
    // SAFETY: loading jansson runs no initialiser with preconditions.
    let jansson = unsafe { SymbolLookup::library("libjansson.so.4") }?;
    // The process's global scope first, for `free`: there it is the one jansson's own
    // `malloc` calls pair with, also when the program replaces `malloc` (as AddressSanitizer
    // does), whereas jansson's handle would find the C library's. Then jansson, for the rest.
    let lib = Library::new(SymbolLookup::default_lookup().or(jansson), decls);
    // Each function linked on first use, then kept.
    let f = |name: &str| lib.function(name);
    // json_pack("{s:i, s:s, s:[i,i]}", ...), linked for this call's variadic arguments: a
    // `const char *` for each `s`, an `int` for each `i`.
    let varargs: Vec<MemoryLayout> = "sisssii"
        .chars()
        .map(|c| if c == 's' { V::ADDRESS } else { V::I32 }.into())
        .collect();
    let pack = lib
        .declarations()
        .link_variadic(lib.lookup(), "json_pack", &varargs)?;

    let arena = Arena::confined();
    let text = |s: &str| arena.allocate_c_string(s).map(Value::from);
    let error = arena.allocate_layout(&error_t)?;
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
                unsafe { f("json_delete")?.invoke(&[json.into()]) }?;
            }
        }
        Ok(())
    };

    // SAFETY: the calls match jansson.h; the format's conversions match pack's arguments;
    // `json_dumps`' result is freed once, with `free`; the values read live until `decref`.
    let mut out = unsafe {
        let (answer, name, pair) = (text("answer")?, text("name")?, text("pair")?);
        let (format, gatun) = (text("{s:i, s:s, s:[i,i]}")?, text("gatun")?);
        let args = [
            format,
            answer,
            42.into(),
            name,
            gatun,
            pair,
            1.into(),
            2.into(),
        ];
        let packed = target(&pack, pack.invoke(&args)?)?;
        let dumps = f("json_dumps")?;
        let dumped = dumps.invoke(&[packed.into(), flags])?;
        let dumped_text = target(&dumps, dumped)?.get_string(0)?;
        f("free")?.invoke(&[dumped])?;
        decref(packed)?;

        let loads = f("json_loads")?;
        let parsed = loads.invoke(&[text(&dumped_text)?, 0.into(), error.into()])?;
        let parsed = target(&loads, parsed)?;
        let (get, integer) = (f("json_object_get")?, f("json_integer_value")?);
        let member = |key| -> Result<_> { target(&get, get.invoke(&[parsed.into(), key])?) };
        let answer = integer.invoke(&[member(answer)?.into()])?;
        let string = f("json_string_value")?;
        let name = target(&string, string.invoke(&[member(name)?.into()])?)?;
        let name = name.get_string(0)?; // before `decref` frees it
        let (array_get, mut items) = (f("json_array_get")?, Vec::new());
        for k in 0..2 {
            let item = array_get.invoke(&[member(pair)?.into(), k.into()])?;
            let item = target(&array_get, item)?;
            items.push(integer.invoke(&[item.into()])?.to_string());
        }
        decref(parsed)?;
        let items = items.join(", ");
        format!("json_dumps: {dumped_text}\njson_loads: answer {answer}, name {name:?}, pair [{items}]\n")
    };
    out += &format!("json_decref: refcounts {counts:?}, each then json_delete\n");

    let bad = "{\"answer\": }";
    // SAFETY: a C string and a `json_error_t` to fill.
    let failed = unsafe { f("json_loads")?.invoke(&[text(bad)?, 0.into(), error.into()]) }?;
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
