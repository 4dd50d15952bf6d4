//! The Win64 executor against Rust `extern "C"` functions (on x86-64 Windows they follow the
//! Microsoft x64 convention as C does): shared slots, the shadow space and stack arguments,
//! register-sized aggregates in GPRs, by-reference copies, the hidden return pointer, variadic
//! doubles in both registers, nonvolatile registers, capture of the three Windows states, and
//! upcalls of the same classes (a downcall into the upcall stub, and Rust code calling the stub
//! as C, on this thread and on a `CreateThread` thread). Run under Wine on a Linux host.

use std::ffi::c_void;

use crate::layout::ValueLayout as V;
use crate::linker::{DowncallHandle, FunctionDescriptor as FD, Linker, LinkerOption, Symbol};
use crate::Value;

fn link_with(f: *const c_void, d: &FD, options: &[LinkerOption]) -> DowncallHandle {
    // SAFETY: `f` is a Rust function of the descriptor's C type, alive for the program.
    let sym = unsafe { Symbol::from_address(f) };
    let h = Linker::native().downcall(&sym, d, options).unwrap();
    assert!(!h.uses_compiled_stub(), "{h:?}");
    h
}

fn link(f: *const c_void, d: &FD) -> DowncallHandle {
    link_with(f, d, &[])
}

extern "C" fn twice(x: i32) -> i32 {
    2 * x
}

#[test]
fn int_of_int() {
    let h = link(twice as *const c_void, &FD::of(V::I32, [V::I32]));
    // SAFETY: `twice` is an `int (int)`.
    assert_eq!(unsafe { h.invoke(&[Value::I32(21)]) }.unwrap(), Value::I32(42));
}
