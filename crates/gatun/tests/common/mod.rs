//! Shared helpers for the downcall integration tests: the test-native library and layouts.
#![allow(dead_code)]

use std::sync::OnceLock;

#[cfg(windows)]
pub mod windows_memory;

use gatun::layout::{MemoryLayout, ScalarKind, ValueLayout};
use gatun::linker::{
    DowncallHandle, FunctionDescriptor, Linker, LinkerOption, Symbol, SymbolLookup,
};
use gatun::Value;

/// The test library built by the `gatun-test-natives` crate, loaded once.
pub fn natives() -> &'static SymbolLookup {
    static LIB: OnceLock<SymbolLookup> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: our own test library has no unsound initialisers.
        unsafe { SymbolLookup::library(gatun_test_natives::PATH) }.expect("load test natives")
    })
}

/// A library's symbol (which keeps it loaded).
pub fn sym_in(lib: &SymbolLookup, name: &str) -> Symbol {
    lib.find(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A symbol of the test library.
pub fn sym(name: &str) -> Symbol {
    sym_in(natives(), name)
}

/// Links a test-library function.
pub fn link(name: &str, d: &FunctionDescriptor) -> DowncallHandle {
    link_with(name, d, &[])
}

/// Links a test-library function with options.
pub fn link_with(name: &str, d: &FunctionDescriptor, o: &[LinkerOption]) -> DowncallHandle {
    Linker::native()
        .downcall(&sym(name), d, o)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A C struct of `members`.
pub fn st<I>(members: I) -> MemoryLayout
where
    I: IntoIterator,
    I::Item: Into<MemoryLayout>,
{
    MemoryLayout::c_struct(members).unwrap()
}

/// `unsigned char b[n]` wrapped in a struct.
pub fn bytes_struct(n: usize) -> MemoryLayout {
    st([MemoryLayout::sequence_layout(n, ValueLayout::U8).unwrap()])
}

#[allow(unused_imports)] // not every test file uses the short name
pub use gatun::layout::ValueLayout as V;

/// The `Value` of `kind` whose payload is the low bytes of `raw` (little-endian register or
/// memory bits; a bool is `raw & 1`).
pub fn value_from_bits(kind: ScalarKind, raw: u64) -> Value<'static> {
    match kind {
        ScalarKind::Bool => Value::Bool(raw & 1 == 1),
        ScalarKind::I8 => Value::I8(raw as i8),
        ScalarKind::I16 => Value::I16(raw as i16),
        ScalarKind::I32 => Value::I32(raw as i32),
        ScalarKind::I64 => Value::I64(raw as i64),
        ScalarKind::U8 => Value::U8(raw as u8),
        ScalarKind::U16 => Value::U16(raw as u16),
        ScalarKind::U32 => Value::U32(raw as u32),
        ScalarKind::U64 => Value::U64(raw),
        ScalarKind::F32 => Value::F32(f32::from_bits(raw as u32)),
        ScalarKind::F64 => Value::F64(f64::from_bits(raw)),
        ScalarKind::Pointer => Value::Address(raw as usize as *mut std::ffi::c_void),
    }
}
