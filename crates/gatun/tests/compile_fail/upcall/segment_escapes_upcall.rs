// A struct argument's segment lives in a linker-stack frame popped when the upcall returns: it
// cannot be kept beyond the closure call.
use std::cell::Cell;

use gatun::{Arena, FunctionDescriptor, Linker, MemoryLayout, MemorySegment, Value, ValueLayout};

thread_local! {
    static KEPT: Cell<Option<MemorySegment<'static>>> = const { Cell::new(None) };
}

fn main() {
    let arena = Arena::confined();
    let s = MemoryLayout::c_struct([ValueLayout::I64, ValueLayout::I64]).unwrap();
    let _stub = Linker::native().upcall_stub(
        &FunctionDescriptor::of_void([s]),
        |args| {
            KEPT.with(|k| k.set(Some(args.segment(0).unwrap())));
            Ok(Value::Void)
        },
        &arena,
    );
}
