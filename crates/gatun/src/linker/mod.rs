//! The downcall linker: descriptors, symbol lookup, linking and invoking native functions.

mod descriptor;

pub use descriptor::FunctionDescriptor;
