//! The downcall linker: descriptors, symbol lookup, linking and invoking native functions.

mod descriptor;
mod lookup;

pub use descriptor::FunctionDescriptor;
pub use lookup::{LoadFlags, Symbol, SymbolLookup};
