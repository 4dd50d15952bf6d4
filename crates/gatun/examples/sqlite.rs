//! SQLite through `sqlite3.h`: open, exec + Rust callback, prepare/bind/step/column, errmsg.
use gatun::cdecl::{Declarations, HeaderOptions, Library};
use gatun::{linker::SymbolLookup, memory::*, Linker, MemorySegment, Value};
use std::{cell::RefCell, error::Error, ffi::c_void};
pub fn run() -> Result<String, Box<dyn Error>> {
    let decls = Declarations::from_headers(["sqlite3.h"], &HeaderOptions::default())?;
    // SAFETY: loading SQLite runs its initialisers, which have no preconditions.
    let lib = Library::new(unsafe { SymbolLookup::library("libsqlite3.so.0") }?, decls);
    let f = |name: &str| lib.function(name); // linked on first use, then kept
    let (arena, out) = (Arena::confined(), RefCell::new(String::new()));
    let text = |s: &str| arena.allocate_c_string(s);
    // The exec callback, `int (*)(void *, int ncols, char **values, char **names)`: one row.
    let row = Linker::native().upcall_stub_confined(
        &lib.declarations().callback("sqlite3_exec", 2)?,
        |args| {
            let n = args.get::<i32>(1)? as usize;
            // SAFETY: SQLite passes `n` NUL-terminated column texts, valid during the call.
            let cols: Vec<String> = unsafe {
                let values = MemorySegment::from_raw_parts(args.address(2)?.cast(), 8 * n);
                let col = |i| Value::from(values.get_address(8 * i)?).read_c_string();
                (0..n).map(col).collect::<gatun::Result<_>>()?
            };
            *out.borrow_mut() += &format!("exec: {}\n", cols.join(" | "));
            Ok(Value::I32(0))
        },
        &arena,
    )?;
    let slot = || arena.allocate_from(std::ptr::null_mut::<c_void>()); // a `T **` out-parameter
    let (db_slot, stmt_slot, null) = (slot()?, slot()?, Value::from(MemorySegment::NULL));
    let sqlite_row = lib.declarations().constant_i64("SQLITE_ROW"); // what step gives per row
                                                                    // SAFETY: the calls match sqlite3.h; pointers and strings are valid, results read in time.
    unsafe {
        f("sqlite3_open")?.invoke(&[text(":memory:")?.into(), db_slot.into()])?;
        let db = Value::from(db_slot.get_address(0)?); // sqlite3 *
        let prepare = |sql: &str| -> gatun::Result<Value> {
            let args = [db, text(sql)?.into(), (-1).into(), stmt_slot.into(), null];
            f("sqlite3_prepare_v2")?.invoke(&args)
        };
        let sql = "CREATE TABLE t(id INTEGER, name TEXT); \
                   INSERT INTO t VALUES (1, 'one'), (2, 'two'); SELECT * FROM t;";
        f("sqlite3_exec")?.invoke(&[db, text(sql)?.into(), row.as_value(), null, null])?;
        prepare("SELECT name FROM t WHERE id = ?")?;
        let stmt = Value::from(stmt_slot.get_address(0)?); // sqlite3_stmt *
        f("sqlite3_bind_int")?.invoke(&[stmt, 1.into(), 2.into()])?;
        while f("sqlite3_step")?.invoke(&[stmt])?.as_i64() == sqlite_row {
            let name = f("sqlite3_column_text")?.invoke(&[stmt, 0.into()])?;
            *out.borrow_mut() += &format!("id 2: {}\n", name.read_c_string()?);
        }
        f("sqlite3_finalize")?.invoke(&[stmt])?;
        let rc = prepare("SELECT * FROM missing")?;
        let msg = f("sqlite3_errmsg")?.invoke(&[db])?.read_c_string()?;
        *out.borrow_mut() += &format!("error {rc}: {msg}\n");
        f("sqlite3_close")?.invoke(&[db])?;
    }
    Ok(out.take())
}
fn main() -> Result<(), Box<dyn Error>> {
    print!("{}", run()?);
    Ok(())
}
