//! Shared helpers for the downcall integration tests: the test-native library and layouts.
#![allow(dead_code)]

use std::sync::OnceLock;

use gatun::layout::{MemoryLayout, ValueLayout};
use gatun::linker::{
    DowncallHandle, FunctionDescriptor, Linker, LinkerOption, Symbol, SymbolLookup,
};

/// The test library built by build.rs, loaded once.
pub fn natives() -> &'static SymbolLookup {
    static LIB: OnceLock<SymbolLookup> = OnceLock::new();
    // SAFETY: our own test library has no unsound initialisers.
    LIB.get_or_init(|| {
        unsafe { SymbolLookup::library(env!("GATUN_TEST_NATIVES")) }.expect("load test natives")
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

pub use gatun::layout::ValueLayout as V;
